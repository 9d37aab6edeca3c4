/* precision_cfg.c - reads --keep_dtype and --modify_mixlist (precision_cfg.h).
 *
 * Both files are read whole (at most 1 MiB) into the arena. The keep_dtype
 * file is lines; the mixlist file is parsed by a recursive descent over the
 * one JSON shape CANN documents (an object of list objects of string
 * arrays), which keeps every message specific: the line, the field path
 * ("black-list.to-add") and the offending value. Strings take JSON's
 * escapes; \u escapes only for ASCII. Entries are appended in the order the
 * precision pass applies them: every to-remove, then every to-add.
 */
#include "precision_cfg.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "frontend/onnx_import.h"
#include "passes/precision.h"

enum { MAX_FILE_BYTES = 1 << 20 };

static status read_text(const char *path, const char *flag, arena *a, char **text_out, diag *d) {
  FILE *f = fopen(path, "rb");
  if (!f) return diag_set(d, ST_ERR_IO, "%s=%s: cannot open it: %s", flag, path, strerror(errno));
  char *buf = arena_alloc(a, MAX_FILE_BYTES + 1);
  size_t n = buf ? fread(buf, 1, MAX_FILE_BYTES + 1, f) : 0;
  int err = ferror(f);
  fclose(f);
  if (!buf) return diag_set(d, ST_ERR_NOMEM, "out of memory");
  if (err) return diag_set(d, ST_ERR_IO, "%s=%s: read error", flag, path);
  if (n > MAX_FILE_BYTES) return diag_set(d, ST_ERR_LIMIT, "%s=%s: larger than 1 MiB", flag, path);
  if (memchr(buf, '\0', n)) return diag_set(d, ST_ERR_PARSE, "%s: holds a NUL byte: not a text file", path);
  buf[n] = '\0';
  *text_out = buf;
  return ST_OK;
}

static int op_type_known(const char *t) { return onnx_op_known(t) || ir_op_from_name(t) >= 0; }

typedef struct entries {
  prec_entry *v;
  int n, cap;
} entries;

static prec_entry *push(entries *e, arena *a) {
  if (e->n == e->cap && arena_grow(a, (void **)&e->v, &e->cap, e->n, sizeof *e->v)) return NULL;
  prec_entry *p = &e->v[e->n++];
  memset(p, 0, sizeof *p);
  return p;
}

static char *where(arena *a, const char *path, int line, const char *field) {
  char buf[4400];
  if (field)
    snprintf(buf, sizeof buf, "%s:%d: %s", path, line, field);
  else
    snprintf(buf, sizeof buf, "%s:%d", path, line);
  return arena_strdup(a, buf);
}

/* --- line files: keep_dtype, customize_dtypes ------------------------------ */

/* The next line of *text worth reading (trimmed, NUL-terminated in place;
 * blank lines and '#' comments skipped), its number in *line; NULL at the
 * end. *text and *line start at the file's text and 0. */
static char *next_line(char **text, int *line) {
  for (char *s = *text; *s;) {
    char *end = strchr(s, '\n'), *next = end ? end + 1 : s + strlen(s);
    if (!end) end = next;
    ++*line;
    while (s < end && (*s == ' ' || *s == '\t'))
      s++;
    while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
      end--;
    *end = '\0';
    *text = next;
    if (*s && *s != '#') return s;
    s = next;
  }
  return NULL;
}

/* A new entry (*e_out) for line `line`'s s: a node name, or "OpType::Type"
 * with a known op type. */
static status line_entry(const char *path, int line, char *s, arena *a, entries *out, prec_entry **e_out,
                         diag *d) {
  prec_entry *e = push(out, a);
  int typed = !strncmp(s, "OpType::", 8);
  const char *name = typed ? s + 8 : s;
  if (!e || !(e->where = where(a, path, line, NULL)) || !(e->name = arena_strdup(a, name)))
    return diag_set(d, ST_ERR_NOMEM, "out of memory");
  e->op_type = typed;
  *e_out = e;
  if (typed && !*name) return diag_set(d, ST_ERR_INVALID, "%s:%d: 'OpType::' names no op type", path, line);
  if (typed && !op_type_known(name))
    return diag_set(d, ST_ERR_INVALID, "%s:%d: unknown op type '%s'", path, line, name);
  return ST_OK;
}

static status read_keep(const char *path, arena *a, entries *out, diag *d) {
  char *text, *s;
  status st = read_text(path, "--keep_dtype", a, &text, d);
  int line = 0;
  prec_entry *e;
  while (st == ST_OK && (s = next_line(&text, &line)))
    st = line_entry(path, line, s, a, out, &e, d);
  return st;
}

/* One dtype of a --customize_dtypes line: 1 float16, 0 float32, or -1 after
 * the error. */
static int custom_dtype(const char *path, int line, const char *t, diag *d) {
  static const char *const others[] = {"int8",  "uint8",  "int16", "uint16", "int32",    "uint32",
                                       "int64", "uint64", "bool",  "double", "bfloat16", "float64"};
  if (!strcmp(t, "float16")) return 1;
  if (!strcmp(t, "float32")) return 0;
  for (size_t i = 0; i < sizeof others / sizeof *others; i++)
    if (!strcmp(t, others[i])) {
      diag_set(d, ST_ERR_UNSUPPORTED,
               "%s:%d: dtype '%s': this atc computes a node's floating-point work in float16 or float32 "
               "only (quantized models are compiled from their QuantizeLinear / DequantizeLinear pairs)",
               path, line, t);
      return -1;
    }
  diag_set(d, ST_ERR_INVALID, "%s:%d: unknown dtype '%s' (float16 or float32)", path, line, t);
  return -1;
}

/* --customize_dtypes: "Name::InputDtype:d1,d2,...,OutputDtype:d1,..." or
 * "OpType::Type:InputDtype:...,OutputDtype:..." a line, every d float16 or
 * every d float32 (the one precision a node computes in here). */
static status read_custom(const char *path, arena *a, entries *out, diag *d) {
  char *text, *s;
  status st = read_text(path, "--customize_dtypes", a, &text, d);
  int line = 0;
  while (st == ST_OK && (s = next_line(&text, &line))) {
    int typed = !strncmp(s, "OpType::", 8);
    char *sep = strstr(typed ? s + 8 : s, typed ? ":" : "::");
    if (!sep)
      return diag_set(d, ST_ERR_PARSE, "%s:%d: expected %s:InputDtype:...,OutputDtype:..., got '%s'", path,
                      line, typed ? "OpType::Type" : "Name:", s);
    char *list = sep + (typed ? 1 : 2);
    *sep = '\0';
    prec_entry *e;
    if ((st = line_entry(path, line, s, a, out, &e, d))) return st;
    if (!typed && !*s) return diag_set(d, ST_ERR_PARSE, "%s:%d: the line names no node", path, line);
    int *count = NULL, fp16 = -1;
    for (char *t = list, *comma; t; t = comma ? comma + 1 : NULL) {
      if ((comma = strchr(t, ','))) *comma = '\0';
      while (*t == ' ')
        t++;
      if (!strncmp(t, "InputDtype:", 11) && !e->nin && !e->nout)
        count = &e->nin, t += 11;
      else if (!strncmp(t, "OutputDtype:", 12) && count == &e->nin)
        count = &e->nout, t += 12;
      if (!count)
        return diag_set(d, ST_ERR_PARSE, "%s:%d: '%s': the dtypes start with InputDtype:", path, line, t);
      int f = custom_dtype(path, line, t, d);
      if (f < 0) return d->code;
      if (fp16 >= 0 && f != fp16)
        return diag_set(d, ST_ERR_UNSUPPORTED,
                        "%s:%d: float16 and float32 mixed: a node computes in one precision here (every "
                        "dtype float16, or every one float32)",
                        path, line);
      fp16 = f, (*count)++;
    }
    if (count != &e->nout)
      return diag_set(d, ST_ERR_PARSE, "%s:%d: expected InputDtype:...,OutputDtype:... (both lists)", path,
                      line);
    e->fp16 = fp16;
  }
  return st;
}

/* --- modify_mixlist: JSON -------------------------------------------------- */

typedef struct json {
  const char *path, *p;
  int line;
  arena *a;
  diag *d;
} json;

static void skip_ws(json *j) {
  for (;; j->p++) {
    if (*j->p == '\n')
      j->line++;
    else if (*j->p != ' ' && *j->p != '\t' && *j->p != '\r')
      return;
  }
}

static status bad(json *j, const char *expected) {
  skip_ws(j);
  char got[40];
  if (!*j->p)
    snprintf(got, sizeof got, "the end of the file");
  else
    snprintf(got, sizeof got, "'%.20s'", j->p);
  char *nl = strchr(got, '\n');
  if (nl) nl[0] = '\'', nl[1] = '\0';
  return diag_set(j->d, ST_ERR_PARSE, "%s:%d: malformed JSON: expected %s, got %s", j->path, j->line,
                  expected, got);
}

/* 1 and past c when the next token is c. */
static int eat(json *j, char c) {
  skip_ws(j);
  if (*j->p != c) return 0;
  j->p++;
  return 1;
}

static int hexval(char c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

static status string(json *j, char **out) {
  skip_ws(j);
  if (*j->p != '"') return bad(j, "a string");
  const char *s = ++j->p;
  size_t n = 0;
  while (s[n] && s[n] != '"' && s[n] != '\n')
    n += s[n] == '\\' && s[n + 1] ? 2 : 1;
  if (s[n] != '"')
    return diag_set(j->d, ST_ERR_PARSE, "%s:%d: malformed JSON: unterminated string", j->path, j->line);
  char *r = arena_alloc(j->a, n + 1), *w = r;
  if (!r) return diag_set(j->d, ST_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    if (s[i] != '\\') {
      *w++ = s[i];
      continue;
    }
    char c = s[++i];
    int h[4] = {-1, -1, -1, -1};
    if (c == 'u' && i + 4 < n + 1)
      for (int k = 0; k < 4; k++)
        h[k] = hexval(s[i + 1 + k]);
    const char *esc = strchr("\"\\/bfnrt", c);
    if (c && esc) {
      *w++ = "\"\\/\b\f\n\r\t"[esc - "\"\\/bfnrt"];
    } else if (c == 'u' && h[0] == 0 && h[1] == 0 && h[2] >= 0 && h[3] >= 0 && (h[2] || h[3])) {
      *w++ = (char)(h[2] * 16 + h[3]);
      i += 4;
    } else {
      return diag_set(j->d, ST_ERR_PARSE, "%s:%d: malformed JSON: bad escape '\\%c' in a string", j->path,
                      j->line, c ? c : ' ');
    }
  }
  *w = '\0';
  j->p = s + n + 1;
  *out = r;
  return ST_OK;
}

static const char *const list_names[] = {"gray-list", "black-list", "white-list"}; /* by prec_list */

/* ["Op", ...] of list `l`, field to-add or to-remove. */
static status op_array(json *j, prec_list l, int remove, entries *out) {
  const char *field = remove ? "to-remove" : "to-add";
  if (!eat(j, '[')) return bad(j, "'[' (an array of op types)");
  if (eat(j, ']')) return ST_OK;
  do {
    char *name, path[64];
    int line = (skip_ws(j), j->line);
    status st = string(j, &name);
    if (st) return st;
    snprintf(path, sizeof path, "%s.%s", list_names[l], field);
    if (!op_type_known(name))
      return diag_set(j->d, ST_ERR_INVALID, "%s:%d: %s: unknown op type '%s'", j->path, line, path, name);
    if (remove && l == PREC_LIST_GRAY)
      return diag_set(
          j->d, ST_ERR_INVALID,
          "%s:%d: %s: '%s': an op type leaves the gray list by a to-add of the black or white list", j->path,
          line, path, name);
    if (remove && precision_default_list(name) != l)
      return diag_set(j->d, ST_ERR_INVALID, "%s:%d: %s: '%s' is not on the %s (atc --help lists it)", j->path,
                      line, path, name, list_names[l]);
    prec_entry *e = push(out, j->a);
    if (!e || !(e->where = where(j->a, j->path, line, path)))
      return diag_set(j->d, ST_ERR_NOMEM, "out of memory");
    e->name = name, e->op_type = 1, e->remove = remove, e->from = l;
    e->list = remove ? PREC_LIST_GRAY : l;
  } while (eat(j, ','));
  return eat(j, ']') ? ST_OK : bad(j, "',' or ']'");
}

/* {"to-add": [...], "to-remove": [...]} of list l. */
static status list_object(json *j, prec_list l, entries *out) {
  if (!eat(j, '{')) return bad(j, "'{' (the list's to-add and to-remove)");
  if (eat(j, '}')) return ST_OK;
  do {
    char *key;
    int line = (skip_ws(j), j->line);
    status st = string(j, &key);
    if (st) return st;
    int remove = !strcmp(key, "to-remove");
    if (!remove && strcmp(key, "to-add"))
      return diag_set(j->d, ST_ERR_INVALID, "%s:%d: %s: unknown field '%s' (expected to-add or to-remove)",
                      j->path, line, list_names[l], key);
    if (!eat(j, ':')) return bad(j, "':'");
    if ((st = op_array(j, l, remove, out))) return st;
  } while (eat(j, ','));
  return eat(j, '}') ? ST_OK : bad(j, "',' or '}'");
}

static status read_mixlist(const char *path, arena *a, entries *out, diag *d) {
  json j = {.path = path, .line = 1, .a = a, .d = d};
  char *text;
  status st = read_text(path, "--modify_mixlist", a, &text, d);
  if (st) return st;
  j.p = text;
  if (!eat(&j, '{')) return bad(&j, "'{'");
  if (!eat(&j, '}')) {
    do {
      char *key;
      int line = (skip_ws(&j), j.line), l = -1;
      if ((st = string(&j, &key))) return st;
      for (int k = 0; k < 3; k++)
        if (!strcmp(key, list_names[k])) l = k;
      if (l < 0)
        return diag_set(d, ST_ERR_INVALID,
                        "%s:%d: unknown list '%s' (expected black-list, white-list or gray-list)", path, line,
                        key);
      if (!eat(&j, ':')) return bad(&j, "':'");
      if ((st = list_object(&j, (prec_list)l, out))) return st;
    } while (eat(&j, ','));
    if (!eat(&j, '}')) return bad(&j, "',' or '}'");
  }
  skip_ws(&j);
  if (*j.p) return bad(&j, "the end of the file after the object");
  /* the same op type added to two lists: say which two */
  for (int x = 0; x < out->n; x++)
    for (int y = x + 1; y < out->n; y++)
      if (!out->v[x].remove && !out->v[y].remove && out->v[x].list != out->v[y].list &&
          !strcmp(out->v[x].name, out->v[y].name))
        return diag_set(d, ST_ERR_INVALID, "%s: '%s' is added to two lists: %s and %s", out->v[y].where,
                        out->v[y].name, list_names[out->v[x].list], list_names[out->v[y].list]);
  return ST_OK;
}

status atc_precision_cfg(const char *keep_dtype, const char *customize_dtypes, const char *modify_mixlist,
                         arena *a, prec_cfg *cfg, diag *d) {
  memset(cfg, 0, sizeof *cfg);
  entries keep = {0}, custom = {0}, mix = {0}, ordered = {0};
  status st = keep_dtype ? read_keep(keep_dtype, a, &keep, d) : ST_OK;
  if (st == ST_OK && customize_dtypes) st = read_custom(customize_dtypes, a, &custom, d);
  if (st == ST_OK && modify_mixlist) st = read_mixlist(modify_mixlist, a, &mix, d);
  for (int pass = 0; st == ST_OK && pass < 2; pass++) /* to-removes, then to-adds */
    for (int i = 0; i < mix.n && st == ST_OK; i++) {
      if (mix.v[i].remove != !pass) continue;
      prec_entry *e = push(&ordered, a);
      if (!e)
        st = diag_set(d, ST_ERR_NOMEM, "out of memory");
      else
        *e = mix.v[i];
    }
  if (st) return st;
  cfg->keep = keep.v, cfg->nkeep = keep.n;
  cfg->custom = custom.v, cfg->ncustom = custom.n;
  cfg->mix = ordered.v, cfg->nmix = ordered.n;
  return ST_OK;
}
