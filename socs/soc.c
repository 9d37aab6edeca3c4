/* soc.c - reads socs/<name>.yaml with libyaml's event parser (see soc.h).
 *
 * The file is a mapping of scalars plus nested mappings (cube, buffers, aipp, dvpp).
 * The reader walks events with a two-level key path ("buffers.l0a"), stores
 * each scalar into its field, and rejects unknown keys, missing keys, values
 * that are not integers in range, and anything deeper than two levels.
 */
#include "soc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>
#include <yaml.h>

typedef struct soc_field {
  const char *key; /* "ai_cores", "buffers.l0a", ... */
  long long min, max;
  int is_text, is_float, is_bool;
  size_t offset; /* into soc_info */
  int size;      /* 4 = int/uint32, 8 = double; text: the buffer's bytes */
} soc_field;

#define F(key, lo, hi, field)                                                                                \
  { key, lo, hi, 0, 0, 0, offsetof(soc_info, field), sizeof(((soc_info *)0)->field) }
#define TEXT(key, field)                                                                                     \
  { key, 0, 0, 1, 0, 0, offsetof(soc_info, field), sizeof(((soc_info *)0)->field) }
static const soc_field fields[] = {
    TEXT("name", name),
    F("ai_cores", 1, 1024, ai_cores),
    {"clock_mhz", 1, 100000, 0, 1, 0, offsetof(soc_info, clock_mhz), 8},
    F("cube.m", 16, 16, cube_m),
    F("cube.n", 16, 16, cube_n),
    F("cube.k", 16, 16, cube_k),
    F("buffers.l1", 4096, 64 << 20, l1_bytes),
    F("buffers.l0a", 4096, 64 << 20, l0a_bytes),
    F("buffers.l0b", 4096, 64 << 20, l0b_bytes),
    F("buffers.l0c", 4096, 64 << 20, l0c_bytes),
    F("buffers.ub", 4096, 64 << 20, ub_bytes),
    F("vector_bytes", 32, 4096, vector_bytes),
    TEXT("aipp.formats", aipp_formats),
    {"aipp.scaling", 0, 1, 0, 0, 1, offsetof(soc_info, aipp_scaling), sizeof(int)},
    {"dvpp.pngd", 0, 1, 0, 0, 1, offsetof(soc_info, dvpp_pngd), sizeof(int)},
};
#undef F
#undef TEXT
enum { NFIELDS = sizeof fields / sizeof *fields };

static status set_field(soc_info *out, const soc_field *f, const char *text, const char *path, int line,
                        diag *d) {
  if (f->is_text) {
    if (strlen(text) == 0 || strlen(text) >= (size_t)f->size)
      return diag_set(d, ST_ERR_INVALID, "%s:%d: %s must be 1..%d characters", path, line, f->key,
                      f->size - 1);
    strcpy((char *)out + f->offset, text);
    return ST_OK;
  }
  if (f->is_bool) {
    if (strcmp(text, "true") && strcmp(text, "false"))
      return diag_set(d, ST_ERR_INVALID, "%s:%d: %s must be true or false, got '%s'", path, line, f->key,
                      text);
    *(int *)((char *)out + f->offset) = strcmp(text, "true") == 0;
    return ST_OK;
  }
  char *end;
  errno = 0;
  if (f->is_float) {
    double v = strtod(text, &end);
    if (errno || *end || end == text || v < f->min || v > f->max)
      return diag_set(d, ST_ERR_INVALID, "%s:%d: %s must be a number in [%lld, %lld], got '%s'", path, line,
                      f->key, f->min, f->max, text);
    *(double *)((char *)out + f->offset) = v;
    return ST_OK;
  }
  long long v = strtoll(text, &end, 10);
  if (errno || *end || end == text || v < f->min || v > f->max)
    return diag_set(d, ST_ERR_INVALID, "%s:%d: %s must be an integer in [%lld, %lld], got '%s'", path, line,
                    f->key, f->min, f->max, text);
  if (f->size == sizeof(int)) *(int *)((char *)out + f->offset) = (int)v;
  return ST_OK;
}

status soc_load_file(const char *path, soc_info *out, diag *d) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return diag_set(d, ST_ERR_IO, "%s: cannot open SoC file: %s", path, strerror(errno));
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) {
    fclose(fp);
    return diag_set(d, ST_ERR_NOMEM, "%s: cannot initialise the YAML parser", path);
  }
  yaml_parser_set_input_file(&parser, fp);
  memset(out, 0, sizeof *out);
  snprintf(out->path, sizeof out->path, "%s", path);
  int seen[NFIELDS] = {0};
  char section[64] = "", key[64] = "";
  int depth = 0, have_key = 0, done = 0;
  status st = ST_OK;
  while (st == ST_OK && !done) {
    yaml_event_t ev;
    if (!yaml_parser_parse(&parser, &ev)) {
      st = diag_set(d, ST_ERR_PARSE, "%s:%zu: %s", path, parser.problem_mark.line + 1,
                    parser.problem ? parser.problem : "YAML syntax error");
      break;
    }
    int line = (int)ev.start_mark.line + 1;
    switch (ev.type) {
    case YAML_STREAM_END_EVENT: done = 1; break;
    case YAML_MAPPING_START_EVENT:
      if (depth == 1 && !have_key) {
        st = diag_set(d, ST_ERR_PARSE, "%s:%d: a mapping cannot be a key", path, line);
      } else if (depth >= 2) {
        st = diag_set(d, ST_ERR_PARSE, "%s:%d: nesting deeper than 'section: {key: value}'", path, line);
      } else if (depth == 1) {
        snprintf(section, sizeof section, "%s", key);
        have_key = 0;
      }
      depth++;
      break;
    case YAML_MAPPING_END_EVENT:
      depth--;
      section[0] = '\0';
      break;
    case YAML_SEQUENCE_START_EVENT:
      st = diag_set(d, ST_ERR_PARSE, "%s:%d: lists are not used in SoC files", path, line);
      break;
    case YAML_ALIAS_EVENT:
      st = diag_set(d, ST_ERR_PARSE, "%s:%d: YAML aliases are not used in SoC files", path, line);
      break;
    case YAML_SCALAR_EVENT: {
      const char *text = (const char *)ev.data.scalar.value;
      if (depth == 0) {
        st = diag_set(d, ST_ERR_PARSE, "%s:%d: expected a mapping at the top level", path, line);
      } else if (!have_key) {
        snprintf(key, sizeof key, "%s", text);
        have_key = 1;
      } else {
        char full[160];
        snprintf(full, sizeof full, "%s%s%s", section, *section ? "." : "", key);
        int i = 0;
        while (i < NFIELDS && strcmp(fields[i].key, full) != 0)
          i++;
        if (i == NFIELDS)
          st = diag_set(d, ST_ERR_INVALID, "%s:%d: unknown key '%s'", path, line, full);
        else if (seen[i])
          st = diag_set(d, ST_ERR_INVALID, "%s:%d: key '%s' given twice", path, line, full);
        else {
          seen[i] = 1;
          st = set_field(out, &fields[i], text, path, line, d);
        }
        have_key = 0;
      }
      break;
    }
    default: break;
    }
    yaml_event_delete(&ev);
  }
  yaml_parser_delete(&parser);
  fclose(fp);
  for (int i = 0; st == ST_OK && i < NFIELDS; i++)
    if (!seen[i]) st = diag_set(d, ST_ERR_INVALID, "%s: missing key '%s'", path, fields[i].key);
  return st;
}

/* <directory of the running program>/ATC_SOC_DIR_FROM_BIN into buf: an
 * installed atc's own share/atc/socs, wherever its prefix now is; NULL when
 * the program's path is unknown. */
static const char *installed_dir(char *buf, size_t n) {
#ifdef ATC_SOC_DIR_FROM_BIN
  char exe[4096];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  char *slash = len > 0 ? (exe[len] = '\0', strrchr(exe, '/')) : NULL;
  if (!slash) return NULL;
  *slash = '\0';
  int len2 = snprintf(buf, n, "%s/%s", exe, ATC_SOC_DIR_FROM_BIN);
  return len2 > 0 && (size_t)len2 < n ? buf : NULL;
#else
  (void)buf, (void)n;
  return NULL;
#endif
}

/* The directories searched, in order; entries may be NULL. */
static void soc_dirs(const char *dirs[3], char *buf, size_t n) {
  dirs[0] = getenv("ATC_SOC_DIR");
  dirs[1] = installed_dir(buf, n);
#ifdef ATC_SOC_DIR_SOURCE
  dirs[2] = ATC_SOC_DIR_SOURCE;
#else
  dirs[2] = NULL;
#endif
}

status soc_load(const char *name, soc_info *out, diag *d) {
  if (!name || !*name || strchr(name, '/') || strchr(name, '.'))
    return diag_set(d, ST_ERR_INVALID, "--soc_version '%s' is not a SoC name", name ? name : "");
  const char *dirs[3];
  char installed[4096], path[4096];
  soc_dirs(dirs, installed, sizeof installed);
  for (int i = 0; i < 3; i++) {
    if (!dirs[i]) continue;
    snprintf(path, sizeof path, "%s/%s.yaml", dirs[i], name);
    if (access(path, R_OK) == 0) {
      status st = soc_load_file(path, out, d);
      if (st == ST_OK && strcmp(out->name, name) != 0)
        st = diag_set(d, ST_ERR_INVALID, "%s: name '%s' does not match the file name", path, out->name);
      return st;
    }
  }
  /* Name the SoC files that do exist. */
  char avail[1024] = "";
  size_t len = 0;
  for (int i = 0; i < 3; i++) {
    DIR *dir = dirs[i] ? opendir(dirs[i]) : NULL;
    struct dirent *e;
    while (dir && (e = readdir(dir)) != NULL) {
      size_t n = strlen(e->d_name);
      if (n > 5 && strcmp(e->d_name + n - 5, ".yaml") == 0 && len + n < sizeof avail - 8)
        len += (size_t)snprintf(avail + len, sizeof avail - len, "%s%.*s", len ? ", " : "", (int)(n - 5),
                                e->d_name);
    }
    if (dir) closedir(dir);
    if (len) break; /* the first directory that has SoC files is the one used */
  }
  return diag_set(d, ST_ERR_INVALID, "--soc_version '%s': no SoC file %s.yaml (available: %s)", name, name,
                  len ? avail : "none found; set ATC_SOC_DIR");
}
