/* onnx_attrs.c - checking an ONNX node's attributes against its importer's
 * spec, reading them and the node's compile-time inputs, and setting
 * attributes on the IR node; shared by every importer file.
 *
 * Reading attributes (onnx_attr*). The importers run after onnx_import_node
 * checked every attribute against the row's spec (frontend/onnx_ops.c): names
 * are unique, kinds match, INTS/FLOATS counts fit an int. So these look a
 * name up and read the field of its kind without checking it again; an absent
 * attribute gives the default the caller passes. A returned
 * Onnx__AttributeProto or int64_t array points into the unpacked model: owned
 * by the loader, valid until the load ends; never freed or changed here.
 * onnx_attr_string and onnx_attr_ints_copy copy into the caller's buffer.
 *
 * Compile-time inputs (onnx_*_input). Newer opsets pass as inputs what older
 * ones had as attributes; the compiler needs them constant (an initializer or
 * a Constant node). On success *out points at the input's ir_value (owned by
 * the graph, valid as long as it) or the values are copied into the caller's
 * buffer; a missing, run-time or ill-shaped input is an error naming the
 * input (`what` is its ONNX name in the op's signature).
 *
 * Setting attributes (onnx_set_*). Each sets one attribute on IR node n (the
 * IR copies names, strings and lists into the graph's arena) and returns
 * ST_OK, or ST_ERR_NOMEM with a message naming the attribute. onnx_set_flag
 * and onnx_set_ints_default also check the ONNX value and make its default
 * explicit.
 *
 * Every failure goes through onnx_node_fail, so messages start with the
 * model's label and the node.
 */
#include <assert.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx_internal.h"
#include "common/elem.h"
#include "ir/shape.h"

/* --- attribute kinds */

int onnx_attr_type(const Onnx__AttributeProto *a) {
  if (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED) return a->type;
  /* Very old models leave `type` unset: infer it from the field in use. */
  if (a->t) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
  if (a->g) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
  if (a->n_floats) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
  if (a->n_ints) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
  if (a->n_strings) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
  if (a->has_f) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
  if (a->has_i) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  if (a->has_s) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
  return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
}

const char *onnx_attr_type_name(int type) {
  switch (type) {
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: return "FLOAT";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: return "INT";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: return "STRING";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: return "TENSOR";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: return "GRAPH";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: return "FLOATS";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: return "INTS";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: return "STRINGS";
  default: return "another kind";
  }
}

/* --- reading attributes */

const Onnx__AttributeProto *onnx_attr(const onnx_node *nd, const char *name) {
  for (size_t i = 0; i < nd->np->n_attribute; i++)
    if (nd->np->attribute[i]->name && !strcmp(nd->np->attribute[i]->name, name)) return nd->np->attribute[i];
  return NULL;
}

int64_t onnx_attr_int(const onnx_node *nd, const char *name, int64_t def) {
  const Onnx__AttributeProto *a = onnx_attr(nd, name);
  return a ? a->i : def;
}

double onnx_attr_float(const onnx_node *nd, const char *name, double def) {
  const Onnx__AttributeProto *a = onnx_attr(nd, name);
  return a ? a->f : def;
}

int onnx_attr_string_is(const onnx_node *nd, const char *name, const char *def, const char *s) {
  const Onnx__AttributeProto *a = onnx_attr(nd, name);
  if (!a) return !strcmp(def, s);
  return a->s.len == strlen(s) && (a->s.len == 0 || !memcmp(a->s.data, s, a->s.len));
}

const char *onnx_attr_string(const onnx_node *nd, const char *name, const char *def, char *buf, size_t size) {
  const Onnx__AttributeProto *a = onnx_attr(nd, name);
  if (!a) {
    snprintf(buf, size, "%s", def);
    return buf;
  }
  size_t n = a->s.len < size - 1 ? a->s.len : size - 1;
  if (n) memcpy(buf, a->s.data, n);
  buf[n] = '\0';
  return buf;
}

const int64_t *onnx_attr_ints(const onnx_node *nd, const char *name, int *count) {
  const Onnx__AttributeProto *a = onnx_attr(nd, name);
  *count = a ? (int)a->n_ints : 0; /* the spec check bounded n_ints */
  return a ? a->ints : NULL;
}

int onnx_attr_ints_copy(const onnx_node *nd, const char *name, int64_t *out, int max) {
  const Onnx__AttributeProto *a = onnx_attr(nd, name);
  if (!a) return -1;
  int n = (int)a->n_ints < max ? (int)a->n_ints : max;
  for (int i = 0; i < n; i++)
    out[i] = a->ints[i];
  return (int)a->n_ints;
}

/* --- compile-time inputs */

/* The node nearest v among its producers whose output extent depends on the
 * input's values: a counted value's count producer (NonZero,
 * NonMaxSuppression, TopK with a run-time k ...; *counted = 1), else the
 * first node whose output shape is unknown while its inputs' are known (a
 * graph input of unknown shape is not one: it is what --input_shape fixes).
 * For a v of unknown size that first node comes first even past a count:
 * its shape rule's refusal (a count rule's, say) is why the size is unknown.
 * Breadth-first, each node once. NULL when neither (v is computed from a
 * graph input alone). */
static ir_node *data_origin(onnx_ctx *c, const ir_value *v, int *counted) {
  int n = c->g->next_node_id;
  ir_node **queue = arena_array(&c->scratch, (size_t)n + 1, sizeof *queue);
  unsigned char *seen = arena_array(&c->scratch, (size_t)n + 1, 1);
  *counted = 0;
  if (!queue || !seen || !v->producer) return NULL;
  ir_node *unknown = NULL, *count_origin = NULL;
  int head = 0, tail = 0, sized = ir_value_elements(v) >= 0;
  queue[tail++] = v->producer;
  seen[v->producer->id] = 1;
  while (head < tail) {
    ir_node *p = queue[head++];
    int known = 1;
    for (int k = 0; k < p->nout; k++) {
      const ir_value *o = p->out[k];
      if (o && o->count && !count_origin) {
        count_origin = o->count->producer ? o->count->producer : p;
        if (sized) break;
      }
    }
    if (count_origin && sized) {
      *counted = 1;
      return count_origin;
    }
    for (int i = 0; i < p->nin; i++) {
      const ir_value *u = p->in[i];
      if (!u) continue;
      known &= ir_value_elements(u) >= 0;
      if (u->producer && !seen[u->producer->id]) {
        seen[u->producer->id] = 1;
        queue[tail++] = u->producer;
      }
    }
    if (known && !unknown)
      for (int k = 0; k < p->nout; k++)
        if (p->out[k] && ir_value_elements(p->out[k]) < 0) unknown = p;
  }
  *counted = !unknown && count_origin;
  return unknown ? unknown : count_origin;
}

/* Where v's size comes from. A node whose shape rule refuses its inputs
 * (with compile-time data only) says why in the rule's words: an extent
 * read from a run-time value, or a model the exporter got wrong (split
 * sizes that do not add up to the axis). The rule is run here, on a graph
 * whose import is failing, so that its partial normalisation is harmless. */
const char *onnx_data_origin(onnx_ctx *c, const ir_value *v, char *buf, size_t size) {
  int counted;
  ir_node *o = data_origin(c, v, &counted);
  diag d;
  diag_init(&d);
  if (!o) {
    snprintf(buf, size, "%s", "");
  } else if (!counted && ir_shape_infer_node(c->g, o, NULL, &d) && d.code != ST_ERR_NOMEM) {
    snprintf(buf, size, "; its size is unknown from node '%s' (%s) on, whose shape rule says: %s", o->name,
             ir_ops[o->op].name, d.msg);
  } else {
    snprintf(buf, size,
             "; it depends on the input's values through node '%s' (%s), whose output size is known only "
             "at run time: compile the model up to before that node (atc --out_nodes)",
             o->name, ir_ops[o->op].name);
  }
  return buf;
}

status onnx_const_input(onnx_node *nd, int i, const char *what, const ir_value **out) {
  const ir_value *v = i < nd->nin ? nd->in[i] : NULL;
  if (!v) return onnx_node_fail(nd, ST_ERR_INVALID, "input %d (%s) is required", i, what);
  char why[384];
  if (!v->data)
    return onnx_node_fail(
        nd, ST_ERR_UNSUPPORTED,
        "input %d '%s'%s%s%s must be known at compile time (a constant, or shape arithmetic that folds)%s", i,
        v->name, strcmp(v->name, what) ? " (" : "", strcmp(v->name, what) ? what : "",
        strcmp(v->name, what) ? ")" : "", onnx_data_origin(nd->c, v, why, sizeof why));
  *out = v;
  return ST_OK;
}

status onnx_scalar_input(onnx_node *nd, int i, const char *what, double *out) {
  const ir_value *v = NULL;
  status s = onnx_const_input(nd, i, what, &v);
  if (s) return s;
  if (ir_value_elements(v) != 1)
    return onnx_node_fail(nd, ST_ERR_INVALID, "input %d '%s' (%s) must hold one value, it holds %" PRId64, i,
                          v->name, what, ir_value_elements(v));
  *out = elem_get(v->data, v->dtype, 0);
  return ST_OK;
}

status onnx_ints_input(onnx_node *nd, int i, const char *what, int64_t *out, int max, int *count) {
  const ir_value *v = NULL;
  status s = onnx_const_input(nd, i, what, &v);
  if (s) return s;
  int64_t n = ir_value_elements(v);
  if (v->dtype != DT_INT64 || v->rank > 1 || n > max)
    return onnx_node_fail(nd, ST_ERR_INVALID, "input %d '%s' (%s) must be an int64 list of at most %d values",
                          i, v->name, what, max);
  memcpy(out, v->data, (size_t)n * sizeof *out);
  *count = (int)n;
  return ST_OK;
}

/* --- setting attributes on the IR node */

static status nomem(onnx_node *nd, const char *name) {
  return onnx_node_fail(nd, ST_ERR_NOMEM, "out of memory setting '%s'", name);
}

status onnx_set_int(onnx_node *nd, ir_node *n, const char *name, int64_t v) {
  return ir_attr_set_int(nd->c->g, n, name, v) ? nomem(nd, name) : ST_OK;
}

status onnx_set_float(onnx_node *nd, ir_node *n, const char *name, double v) {
  return ir_attr_set_float(nd->c->g, n, name, v) ? nomem(nd, name) : ST_OK;
}

status onnx_set_string(onnx_node *nd, ir_node *n, const char *name, const char *v) {
  return ir_attr_set_string(nd->c->g, n, name, v) ? nomem(nd, name) : ST_OK;
}

status onnx_set_ints(onnx_node *nd, ir_node *n, const char *name, int count, const int64_t *v) {
  return ir_attr_set_ints(nd->c->g, n, name, count, v) ? nomem(nd, name) : ST_OK;
}

status onnx_set_flag(onnx_node *nd, ir_node *n, const char *name, int64_t def) {
  int64_t v = onnx_attr_int(nd, name, def);
  if (v != 0 && v != 1)
    return onnx_node_fail(nd, ST_ERR_INVALID, "attribute '%s' = %" PRId64 " must be 0 or 1", name, v);
  return onnx_set_int(nd, n, name, v);
}

status onnx_set_ints_default(onnx_node *nd, ir_node *n, const char *name, int count, int64_t def,
                             int64_t min) {
  int have;
  const int64_t *v = onnx_attr_ints(nd, name, &have);
  int64_t buf[2 * MAX_RANK];
  if (!v) {
    for (int i = 0; i < count; i++)
      buf[i] = def;
    return onnx_set_ints(nd, n, name, count, buf);
  }
  if (have != count)
    return onnx_node_fail(nd, ST_ERR_INVALID, "attribute '%s' has %d values, expected %d", name, have, count);
  for (int i = 0; i < count; i++)
    if (v[i] < min)
      return onnx_node_fail(nd, ST_ERR_INVALID, "attribute '%s'[%d] = %" PRId64 " must be >= %" PRId64, name,
                            i, v[i], min);
  return onnx_set_ints(nd, n, name, count, v);
}

/* --- checking a node's attributes against its importer's spec */

typedef struct spec_item {
  char name[48];
  int type;   /* ONNX AttributeType */
  int copy;   /* copied onto the IR node as is */
  int before; /* exists only before this opset; 0 = always */
} spec_item;

/* Parses the next item of a spec string; 0 at the end. */
static int spec_next(const char **p, spec_item *it) {
  const char *s = *p;
  while (*s == ' ')
    s++;
  if (!*s) return 0;
  it->copy = *s != '-';
  if (*s == '-') s++;
  size_t n = strcspn(s, ":");
  assert(n < sizeof it->name && s[n] == ':');
  memcpy(it->name, s, n);
  it->name[n] = '\0';
  s += n + 1;
  switch (*s++) {
  case 'i': it->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT; break;
  case 'f': it->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT; break;
  case 's': it->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING; break;
  case 'I': it->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS; break;
  case 'F': it->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS; break;
  case 't': it->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR; break;  /* never copied */
  case 'S': it->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS; break; /* never copied */
  case 'g': it->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH; break;   /* never copied */
  default: assert(!"bad attribute spec kind");
  }
  it->before = 0;
  if (*s == '<') {
    char *end;
    it->before = (int)strtol(s + 1, &end, 10);
    s = end;
  }
  *p = s;
  return 1;
}

static int spec_find(const char *spec, const char *name, spec_item *it) {
  while (spec_next(&spec, it))
    if (!strcmp(it->name, name)) return 1;
  return 0;
}

static status copy_attr(onnx_node *nd, ir_node *n, const Onnx__AttributeProto *a, int type) {
  ir_graph *g = nd->c->g;
  int rc = 0;
  switch (type) {
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: rc = ir_attr_set_int(g, n, a->name, a->i); break;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: rc = ir_attr_set_float(g, n, a->name, a->f); break;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: {
    char *s = a->s.len ? arena_strndup(&nd->c->scratch, (const char *)a->s.data, a->s.len)
                       : arena_strdup(&nd->c->scratch, "");
    rc = s ? ir_attr_set_string(g, n, a->name, s) : -1;
    break;
  }
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
    rc = ir_attr_set_ints(g, n, a->name, (int)a->n_ints, a->ints);
    break;
  default: { /* FLOATS */
    double *f = arena_array(&nd->c->scratch, a->n_floats, sizeof *f);
    for (size_t i = 0; f && i < a->n_floats; i++)
      f[i] = a->floats[i];
    rc = f ? ir_attr_set_floats(g, n, a->name, (int)a->n_floats, f) : -1;
  }
  }
  return rc ? onnx_node_fail(nd, ST_ERR_NOMEM, "out of memory copying attribute '%s'", a->name) : ST_OK;
}

status onnx_check_attrs(onnx_node *nd, const char *spec, ir_node *n) {
  const Onnx__NodeProto *np = nd->np;
  int opset = nd->c->opset;
  for (size_t i = 0; i < np->n_attribute; i++) {
    const Onnx__AttributeProto *a = np->attribute[i];
    if (!a->name || !*a->name) return onnx_node_fail(nd, ST_ERR_INVALID, "attribute %zu has no name", i);
    for (size_t j = 0; j < i; j++)
      if (np->attribute[j]->name && !strcmp(np->attribute[j]->name, a->name))
        return onnx_node_fail(nd, ST_ERR_INVALID, "attribute '%s' is given twice", a->name);
    spec_item it;
    if (!spec_find(spec, a->name, &it))
      return onnx_node_fail(nd, ST_ERR_UNSUPPORTED, "attribute '%s' is not supported", a->name);
    if (it.before && opset >= it.before)
      return onnx_node_fail(nd, ST_ERR_INVALID,
                            "attribute '%s' does not exist from opset %d on (the model uses opset %d)",
                            a->name, it.before, opset);
    int type = onnx_attr_type(a);
    if (type != it.type)
      return onnx_node_fail(nd, ST_ERR_INVALID, "attribute '%s' is %s, expected %s", a->name,
                            onnx_attr_type_name(type), onnx_attr_type_name(it.type));
    if (a->n_ints > INT_MAX / 2 || a->n_floats > INT_MAX / 2)
      return onnx_node_fail(nd, ST_ERR_LIMIT, "attribute '%s' has too many values", a->name);
    if (it.copy && n) { /* decomposition rows (no n) read every attribute themselves */
      status s = copy_attr(nd, n, a, type);
      if (s) return s;
    }
  }
  return ST_OK;
}
