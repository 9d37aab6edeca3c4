/* precision_cfg.c - reads --keep_dtype and --modify_mixlist (precision_cfg.h).
 *
 * Both files are read whole (at most 1 MiB) into the arena. The keep_dtype
 * file is lines; the mixlist file is JSON (common/json_in.h) whose tree is
 * checked against the one shape CANN documents (an object of list objects
 * of string arrays), which keeps every message specific: the line, the
 * field path ("black-list.to-add") and the offending value. Entries are appended in the order the
 * precision pass applies them: every to-remove, then every to-add.
 */
#include "precision_cfg.h"

#include <stdio.h>
#include <string.h>

#include "common/json_in.h"
#include "frontend/onnx_import.h"
#include "passes/precision.h"

enum { MAX_FILE_BYTES = 1 << 20 };

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
  status st = json_read_file(path, "--keep_dtype", MAX_FILE_BYTES, a, &text, d);
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
  status st = json_read_file(path, "--customize_dtypes", MAX_FILE_BYTES, a, &text, d);
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

/* --- modify_mixlist: JSON (common/json_in.h) ------------------------------ */

static const char *const list_names[] = {"gray-list", "black-list", "white-list"}; /* by prec_list */

static status wrong_type(const char *path, const json_value *v, const char *field, const char *expected,
                         diag *d) {
  return diag_set(d, ST_ERR_INVALID, "%s:%d: %s%sexpected %s, got %s", path, v->line, field ? field : "",
                  field ? ": " : "", expected, json_type_name(v->type));
}

/* ["Op", ...] of list `l`, field to-add or to-remove. */
static status op_array(const char *path, const json_value *arr, prec_list l, int remove, arena *a,
                       entries *out, diag *d) {
  char field[64];
  snprintf(field, sizeof field, "%s.%s", list_names[l], remove ? "to-remove" : "to-add");
  if (arr->type != JSON_ARRAY) return wrong_type(path, arr, field, "an array of op types", d);
  for (int i = 0; i < arr->n; i++) {
    const json_value *v = arr->items[i];
    if (v->type != JSON_STRING) return wrong_type(path, v, field, "an op type (a string)", d);
    const char *name = v->string;
    if (!op_type_known(name))
      return diag_set(d, ST_ERR_INVALID, "%s:%d: %s: unknown op type '%s'", path, v->line, field, name);
    if (remove && l == PREC_LIST_GRAY)
      return diag_set(
          d, ST_ERR_INVALID,
          "%s:%d: %s: '%s': an op type leaves the gray list by a to-add of the black or white list", path,
          v->line, field, name);
    if (remove && precision_default_list(name) != l)
      return diag_set(d, ST_ERR_INVALID, "%s:%d: %s: '%s' is not on the %s (atc --help lists it)", path,
                      v->line, field, name, list_names[l]);
    prec_entry *e = push(out, a);
    if (!e || !(e->where = where(a, path, v->line, field))) return diag_set(d, ST_ERR_NOMEM, "out of memory");
    e->name = name, e->op_type = 1, e->remove = remove, e->from = l;
    e->list = remove ? PREC_LIST_GRAY : l;
  }
  return ST_OK;
}

static status read_mixlist(const char *path, arena *a, entries *out, diag *d) {
  char *text;
  json_value *root;
  status st = json_read_file(path, "--modify_mixlist", MAX_FILE_BYTES, a, &text, d);
  if (st == ST_OK) st = json_parse(text, path, a, &root, d);
  if (st) return st;
  if (root->type != JSON_OBJECT) return wrong_type(path, root, NULL, "an object of lists", d);
  for (int i = 0; i < root->n; i++) {
    const json_value *lo = root->items[i];
    int l = -1;
    for (int k = 0; k < 3; k++)
      if (!strcmp(root->keys[i], list_names[k])) l = k;
    if (l < 0)
      return diag_set(d, ST_ERR_INVALID,
                      "%s:%d: unknown list '%s' (expected black-list, white-list or gray-list)", path,
                      lo->line, root->keys[i]);
    if (lo->type != JSON_OBJECT)
      return wrong_type(path, lo, list_names[l], "an object (to-add, to-remove)", d);
    for (int f = 0; f < lo->n; f++) {
      int remove = !strcmp(lo->keys[f], "to-remove");
      if (!remove && strcmp(lo->keys[f], "to-add"))
        return diag_set(d, ST_ERR_INVALID, "%s:%d: %s: unknown field '%s' (expected to-add or to-remove)",
                        path, lo->items[f]->line, list_names[l], lo->keys[f]);
      if ((st = op_array(path, lo->items[f], (prec_list)l, remove, a, out, d))) return st;
    }
  }
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
