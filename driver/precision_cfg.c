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

/* --- keep_dtype ------------------------------------------------------------ */

static status read_keep(const char *path, arena *a, entries *out, diag *d) {
  char *text;
  status st = json_read_file(path, "--keep_dtype", MAX_FILE_BYTES, a, &text, d);
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
