/* acl_init_config.c - AscendCL's configuration files: aclInit's (acl.h)
 * and aclmdlSetDump's (acl_mdl.h; the same "dump" section): JSON with at
 * most 10 levels of '{' and 10 of '[' (AscendCL's limits), read whole and
 * checked before the call changes anything.
 *
 * What the file can set, and what it does here:
 *   "err_msg_mode": "0" (the default) or "1": aclGetRecentErrMsg gives the
 *       calling thread's messages, or the whole process's (acl_err.c);
 *   "defaultDevice": {"default_device": "0"}: a thread that never set a
 *       context works in device 0's default context, as after
 *       aclrtSetDevice(0) (acl_rt.c); another device is
 *       ACL_ERROR_RT_INVALID_DEVICEID;
 *   "dump": {"dump_path": DIR, "dump_mode": "output" (the default) |
 *       "input" | "all", "dump_list": [{"model_name": NAME, "layer": [OP,
 *       ...]}, ...], "dump_op_switch": "on" | "off", "dump_data": "tensor"}:
 *       the model dump (acl_dump.c): a non-empty dump_list dumps the models
 *       it names (every model for an entry without "model_name"), all
 *       their operators or the listed layers; DIR must be a writable
 *       directory (ACL_ERROR_INVALID_DUMP_CONFIG otherwise, as for a
 *       dump_mode that is none of the three); "dump_op_switch" "on" is
 *       accepted, and single-operator executions (aclopExecuteV2) are not
 *       dumped; the overflow and exception dumps ("dump_debug" "on", a
 *       "dump_scene" other than "...:disable") and "dump_data" "stats" are
 *       ACL_ERROR_FEATURE_UNSUPPORTED;
 *   "profiler": {"switch": "on" | "off", "output": DIR}: "on" profiles
 *       every model execution of the process until aclFinalize, which
 *       writes DIR's op summary (acl_prof.c; DIR "." when not given); other
 *       profiler keys (what the chip's counters collect) are ignored;
 *   other keys ("max_opqueue_num", ...) bound what is not bounded here
 *       and are ignored; aclmdlSetDump reads the "dump" section alone.
 * A file that is not such JSON is ACL_ERROR_PARSE_FILE naming the line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl/acl_internal.h"

enum { MAX_BYTES = 1 << 20, MAX_LEVELS = 10, PATH_BYTES = 128, VALUE_BYTES = 256 };

typedef struct parser {
  const char *p, *end;
  int objects, arrays; /* open '{' and '[' */
  const char *err;     /* the first syntax error, NULL while none */
  const char *err_at;  /* where it was found */
  acl_init_config *cfg;
  const char *call, *what; /* "aclInit", "configPath" */
  const char *file;
  int dump_only;    /* aclmdlSetDump: the "dump" section alone */
  aclError refused; /* the first setting refused (its message recorded) */
} parser;

static void syntax(parser *ps, const char *what) {
  if (!ps->err) ps->err = what, ps->err_at = ps->p;
}

static void skip_space(parser *ps) {
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
    ps->p++;
}

/* A string at ps->p (its opening quote); up to n - 1 of its bytes go to
 * out (escapes other than \uXXXX decoded). */
static void parse_string(parser *ps, char *out, size_t n) {
  size_t len = 0;
  if (n) out[0] = '\0';
  ps->p++;
  while (ps->p < ps->end && *ps->p != '"') {
    char c = *ps->p++;
    if ((unsigned char)c < 0x20) return syntax(ps, "a control character inside a string");
    if (c == '\\') {
      if (ps->p >= ps->end) break;
      c = *ps->p++;
      const char *esc = strchr("\"\\/bfnrtu", c);
      if (!esc || !c) return syntax(ps, "an unknown escape in a string");
      if (c == 'u') {
        for (int k = 0; k < 4; k++, ps->p++)
          if (ps->p >= ps->end || !strchr("0123456789abcdefABCDEF", *ps->p) || !*ps->p)
            return syntax(ps, "a \\u escape without 4 hex digits");
        c = '?';
      } else {
        c = "\"\\/\b\f\n\r\t"[esc - "\"\\/bfnrtu"];
      }
    }
    if (len + 1 < n) out[len++] = c, out[len] = '\0';
  }
  if (ps->p >= ps->end) return syntax(ps, "a string without its closing quote");
  ps->p++;
}

static int starts(parser *ps, const char *word) {
  size_t n = strlen(word);
  return (size_t)(ps->end - ps->p) >= n && memcmp(ps->p, word, n) == 0;
}

/* A setting is refused: code and message (naming the file and the key). */
static void refuse(parser *ps, aclError code, const char *key, const char *why) {
  if (!ps->refused)
    ps->refused = acl_fail(code, "%s: %s '%s': \"%s\": %s", ps->call, ps->what, ps->file, key, why);
}

static char *keep(parser *ps, const char *str) {
  char *copy = strdup(str);
  if (!copy) refuse(ps, ACL_ERROR_BAD_ALLOC, "dump", "out of memory");
  return copy;
}

/* A new "dump_list" entry (its members follow). */
static void dump_entry(parser *ps) {
  acl_dump_config *d = &ps->cfg->dump;
  acl_dump_entry *p = realloc(d->list, (size_t)(d->nlist + 1) * sizeof *p);
  if (!p) return refuse(ps, ACL_ERROR_BAD_ALLOC, "dump.dump_list", "out of memory");
  d->list = p;
  d->list[d->nlist++] = (acl_dump_entry){0};
}

static void dump_layer(parser *ps, const char *name) {
  acl_dump_config *d = &ps->cfg->dump;
  if (!d->nlist) return;
  acl_dump_entry *e = &d->list[d->nlist - 1];
  char **p = realloc(e->layers, (size_t)(e->nlayers + 1) * sizeof *p);
  if (!p) return refuse(ps, ACL_ERROR_BAD_ALLOC, "dump.dump_list[].layer", "out of memory");
  e->layers = p;
  if ((e->layers[e->nlayers] = keep(ps, name))) e->nlayers++;
}

/* What a value at `path` (keys joined by '.', "[]" for an array's
 * elements) means: a string (str), or an array of `count` elements (str
 * NULL). */
static void note(parser *ps, const char *path, const char *str, int count) {
  acl_init_config *cfg = ps->cfg;
  acl_dump_config *d = &cfg->dump;
  if (ps->dump_only && strncmp(path, "dump.", 5) != 0) return;
  if (!str) {
    if (strcmp(path, "dump.dump_list") == 0) d->on = count > 0;
    return;
  }
  if (strcmp(path, "dump.dump_path") == 0) {
    free(d->path);
    d->path = keep(ps, str);
  }
  if (strcmp(path, "dump.dump_mode") == 0) {
    d->mode = !strcmp(str, "output")  ? ACL_DUMP_OUTPUT
              : !strcmp(str, "input") ? ACL_DUMP_INPUT
              : !strcmp(str, "all")   ? ACL_DUMP_ALL
                                      : 0;
    if (!d->mode) refuse(ps, ACL_ERROR_INVALID_DUMP_CONFIG, path, "must be \"output\", \"input\" or \"all\"");
  }
  if (strcmp(path, "dump.dump_list[].model_name") == 0 && d->nlist) {
    free(d->list[d->nlist - 1].model);
    d->list[d->nlist - 1].model = keep(ps, str);
  }
  if (strcmp(path, "dump.dump_list[].layer[]") == 0) dump_layer(ps, str);
  if (strcmp(path, "dump.dump_debug") == 0 && strcmp(str, "on") == 0)
    refuse(ps, ACL_ERROR_FEATURE_UNSUPPORTED, path,
           "the overflow dump is not provided (omrt_context_options.check_overflow names the first "
           "task that overflows)");
  if (strcmp(path, "dump.dump_scene") == 0 && *str) {
    size_t n = strlen(str), tail = strlen(":disable");
    if (n < tail || strcmp(str + n - tail, ":disable") != 0)
      refuse(ps, ACL_ERROR_FEATURE_UNSUPPORTED, path, "the exception dumps are not provided");
  }
  if (strcmp(path, "dump.dump_data") == 0 && strcmp(str, "tensor") != 0)
    refuse(ps, ACL_ERROR_FEATURE_UNSUPPORTED, path, "only \"tensor\" (the tensors themselves) is provided");
  if (strcmp(path, "profiler.switch") == 0) {
    if (strcmp(str, "on") != 0 && strcmp(str, "off") != 0)
      refuse(ps, ACL_ERROR_INVALID_PROFILING_CONFIG, path, "must be \"on\" or \"off\"");
    cfg->prof_on = strcmp(str, "on") == 0;
  }
  if (strcmp(path, "profiler.output") == 0) {
    free(cfg->prof_output);
    cfg->prof_output = keep(ps, str);
  }
  if (strcmp(path, "err_msg_mode") == 0) {
    if (strcmp(str, "0") != 0 && strcmp(str, "1") != 0)
      refuse(ps, ACL_ERROR_INVALID_PARAM, path, "must be \"0\" (per thread) or \"1\" (per process)");
    cfg->err_msg_process = strcmp(str, "1") == 0;
  }
  if (strcmp(path, "defaultDevice.default_device") == 0) {
    if (strcmp(str, "0") != 0)
      refuse(ps, ACL_ERROR_RT_INVALID_DEVICEID, path, "the software NPU is device 0 (1 device)");
    cfg->default_device = 1;
  }
}

/* A directory the process can create files in: 1, else 0 with why. */
static int writable_dir(const char *dir, char *why, size_t n) {
  struct stat st;
  if (stat(dir, &st) != 0) return snprintf(why, n, "%s", strerror(errno)), 0;
  if (!S_ISDIR(st.st_mode)) return snprintf(why, n, "not a directory"), 0;
  if (access(dir, W_OK | X_OK) != 0) return snprintf(why, n, "cannot be written: %s", strerror(errno)), 0;
  return 1;
}

/* After a file parsed: what the settings need together. */
static void check_sections(parser *ps) {
  acl_init_config *cfg = ps->cfg;
  acl_dump_config *d = &cfg->dump;
  char why[256], msg[512];
  if (!d->mode) d->mode = ACL_DUMP_OUTPUT;
  if (d->on && (!d->path || !*d->path))
    refuse(ps, ACL_ERROR_INVALID_DUMP_CONFIG, "dump.dump_path",
           "a dump_list needs the directory the dump goes to (which must exist)");
  else if (d->on && !writable_dir(d->path, why, sizeof why))
    snprintf(msg, sizeof msg, "'%s': %s", d->path, why),
        refuse(ps, ACL_ERROR_INVALID_DUMP_CONFIG, "dump.dump_path", msg);
  if (cfg->prof_on && !cfg->prof_output && !(cfg->prof_output = keep(ps, "."))) return;
  if (cfg->prof_on && !writable_dir(cfg->prof_output, why, sizeof why))
    snprintf(msg, sizeof msg, "'%s': %s", cfg->prof_output, why),
        refuse(ps, ACL_ERROR_INVALID_PROFILING_CONFIG, "profiler.output", msg);
}

static void parse_value(parser *ps, const char *path);

static void parse_members(parser *ps, const char *path) {
  if (++ps->objects > MAX_LEVELS) return syntax(ps, "'{' nested deeper than 10 levels");
  ps->p++;
  skip_space(ps);
  if (ps->p < ps->end && *ps->p == '}') {
    ps->p++;
    ps->objects--;
    return;
  }
  while (!ps->err) {
    skip_space(ps);
    if (ps->p >= ps->end || *ps->p != '"') return syntax(ps, "a member without a quoted name");
    char key[VALUE_BYTES], child[PATH_BYTES];
    parse_string(ps, key, sizeof key);
    int len = snprintf(child, sizeof child, "%s%s%s", path, *path ? "." : "", key);
    if (len < 0 || (size_t)len >= sizeof child) child[sizeof child - 1] = '\0'; /* (a long path: truncated) */
    skip_space(ps);
    if (ps->err || ps->p >= ps->end || *ps->p != ':') return syntax(ps, "a member name without ':'");
    ps->p++;
    parse_value(ps, child);
    skip_space(ps);
    if (ps->err) return;
    if (ps->p < ps->end && *ps->p == ',') {
      ps->p++;
      continue;
    }
    if (ps->p < ps->end && *ps->p == '}') {
      ps->p++;
      ps->objects--;
      return;
    }
    return syntax(ps, "an object member not followed by ',' or '}'");
  }
}

static void parse_elements(parser *ps, const char *path) {
  if (++ps->arrays > MAX_LEVELS) return syntax(ps, "'[' nested deeper than 10 levels");
  ps->p++;
  skip_space(ps);
  int count = 0, entries = strcmp(path, "dump.dump_list") == 0; /* each element a dump_entry */
  if (ps->p < ps->end && *ps->p == ']') {
    ps->p++;
  } else {
    while (!ps->err) {
      char child[PATH_BYTES];
      snprintf(child, sizeof child, "%s[]", path);
      if (entries) {
        skip_space(ps);
        if (ps->p < ps->end && *ps->p != '{')
          refuse(ps, ACL_ERROR_INVALID_DUMP_CONFIG, child, "each entry is an object ({\"model_name\": ...})");
        dump_entry(ps);
      }
      parse_value(ps, child);
      count++;
      skip_space(ps);
      if (ps->err) return;
      if (ps->p < ps->end && *ps->p == ',') {
        ps->p++;
        continue;
      }
      if (ps->p < ps->end && *ps->p == ']') {
        ps->p++;
        break;
      }
      return syntax(ps, "an array element not followed by ',' or ']'");
    }
  }
  ps->arrays--;
  if (!ps->err) note(ps, path, NULL, count);
}

static void parse_value(parser *ps, const char *path) {
  skip_space(ps);
  if (ps->p >= ps->end) return syntax(ps, "a value is missing");
  char c = *ps->p;
  if (c == '{') return parse_members(ps, path);
  if (c == '[') return parse_elements(ps, path);
  if (c == '"') {
    char value[VALUE_BYTES];
    parse_string(ps, value, sizeof value);
    if (!ps->err) note(ps, path, value, 0);
    return;
  }
  if (starts(ps, "true") || starts(ps, "null")) {
    ps->p += 4;
    return;
  }
  if (starts(ps, "false")) {
    ps->p += 5;
    return;
  }
  if (c == '-' || (c >= '0' && c <= '9')) { /* a number: its digits and the characters of exponents */
    char digits[32];
    size_t n = 0;
    while (ps->p < ps->end && strchr("+-.0123456789eE", *ps->p) && *ps->p && n + 1 < sizeof digits)
      digits[n++] = *ps->p++;
    digits[n] = '\0';
    char *stop;
    strtod(digits, &stop);
    if (*stop || n == 0) return syntax(ps, "a malformed number");
    note(ps, path, digits, 0); /* ("default_device": 0 reads as "0") */
    return;
  }
  syntax(ps, "an unexpected character");
}

void acl_config_free(acl_init_config *cfg) {
  acl_dump_config *d = &cfg->dump;
  for (int i = 0; i < d->nlist; i++) {
    for (int k = 0; k < d->list[i].nlayers; k++)
      free(d->list[i].layers[k]);
    free(d->list[i].layers);
    free(d->list[i].model);
  }
  free(d->list);
  free(d->path);
  free(cfg->prof_output);
  *cfg = (acl_init_config){0};
}

aclError acl_read_config(const char *call, const char *path, int dump_only, acl_init_config *cfg) {
  *cfg = (acl_init_config){0};
  const char *what = dump_only ? "dumpCfgPath" : "configPath";
  FILE *f = fopen(path, "rb");
  if (!f) return acl_fail(ACL_ERROR_INVALID_FILE, "%s: %s '%s': %s", call, what, path, strerror(errno));
  char *text = malloc(MAX_BYTES + 1);
  size_t n = text ? fread(text, 1, MAX_BYTES + 1, f) : 0;
  int bad = ferror(f);
  fclose(f);
  if (!text) return acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call);
  if (bad || n > MAX_BYTES) {
    free(text);
    return acl_fail(bad ? ACL_ERROR_INVALID_FILE : ACL_ERROR_PARSE_FILE, "%s: %s '%s': %s", call, what, path,
                    bad ? "cannot be read" : "larger than 1 MiB");
  }
  parser ps = {.p = text,
               .end = text + n,
               .cfg = cfg,
               .call = call,
               .what = what,
               .file = path,
               .dump_only = dump_only};
  skip_space(&ps);
  if (ps.p >= ps.end || *ps.p != '{')
    syntax(&ps, "the file is not a JSON object ('{}' configures nothing)");
  else
    parse_members(&ps, "");
  skip_space(&ps);
  if (!ps.err && ps.p < ps.end) syntax(&ps, "text after the closing '}'");
  if (!ps.err && !ps.refused) check_sections(&ps);
  aclError e = ps.refused;
  if (ps.err) {
    int line = 1;
    for (const char *q = text; q < ps.err_at; q++)
      line += *q == '\n';
    e = acl_fail(ACL_ERROR_PARSE_FILE, "%s: %s '%s': line %d: %s (AscendCL reads it as JSON)", call, what,
                 path, line, ps.err);
  }
  free(text);
  if (e) acl_config_free(cfg);
  return e;
}
