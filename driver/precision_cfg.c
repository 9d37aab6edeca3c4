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

/* --- keep_dtype ------------------------------------------------------------ */

static status read_keep(const char *path, arena *a, entries *out, diag *d) {
  char *text;
  status st = read_text(path, "--keep_dtype", a, &text, d);
  int line = 1;
  for (char *s = text; st == ST_OK && *s; line++) {
    char *end = strchr(s, '\n'), *next = end ? end + 1 : s + strlen(s);
    if (!end) end = next;
    while (s < end && (*s == ' ' || *s == '\t'))
      s++;
    while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
      end--;
    *end = '\0';
    if (*s && *s != '#') {
      prec_entry *e = push(out, a);
      int typed = !strncmp(s, "OpType::", 8);
      const char *name = typed ? s + 8 : s;
      if (!e || !(e->where = where(a, path, line, NULL)) || !(e->name = arena_strdup(a, name)))
        st = diag_set(d, ST_ERR_NOMEM, "out of memory");
      else if (typed && !op_type_known(name))
        st = diag_set(d, ST_ERR_INVALID, "%s:%d: unknown op type '%s' in '%s'", path, line, name, s);
      else if (!*name)
        st = diag_set(d, ST_ERR_INVALID, "%s:%d: 'OpType::' names no op type", path, line);
      if (e) e->op_type = typed;
    }
    s = next;
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

status atc_precision_cfg(const char *keep_dtype, const char *modify_mixlist, arena *a, prec_cfg *cfg,
                         diag *d) {
  memset(cfg, 0, sizeof *cfg);
  entries keep = {0}, mix = {0}, ordered = {0};
  status st = keep_dtype ? read_keep(keep_dtype, a, &keep, d) : ST_OK;
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
  cfg->mix = ordered.v, cfg->nmix = ordered.n;
  return ST_OK;
}
