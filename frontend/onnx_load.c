/* onnx_load.c - ONNX ModelProto -> IR graph (frontend/onnx_import.h).
 *
 * After onnx_proto.c has turned bytes into a ModelProto, the graph is built
 * in passes over it, so that nodes may come in any order:
 *   1. the model: ir_version, the default-domain opset (g->opset) and the
 *      com.microsoft one when imported (ONNX Runtime's contrib ops: its
 *      quantized QLinear* ops, onnx_decomp_qms.c, and its transformer
 *      ops, onnx_decomp_msft.c), no other domain;
 *   2. definitions: every initializer becomes a constant (each unpacked on
 *      its own, in file order: onnx_proto_initializer), every graph input
 *      that is not an initializer becomes an input with a fully known shape
 *      (symbolic or missing dims fixed by --input_shape), every Constant node
 *      becomes a constant, and every other node's outputs become values;
 *      each name is defined once (a hash map over the ONNX names);
 *   3. uses: every node input and graph output must name a definition, and
 *      each definition counts its readers (importers refuse extra outputs,
 *      like Dropout's mask, that anything reads);
 *   4. nodes that some graph output reads, through any chain (an export's
 *      unused branches, like Mask R-CNN's mask head and its paste Loop when
 *      only boxes and scores are outputs, are left out, unless
 *      import_unread), in dependency order (each after the nodes producing its
 *      inputs; a model in topological order keeps its order): each goes
 *      through its importer (onnx_ops.c), then the IR nodes it became are
 *      inferred, in dependency order among themselves, with ir's rules
 *      (ir_shape_try, ir/shape.h): outputs get their dtypes and dims when
 *      their inputs' are known, and fold into constants when their inputs
 *      are constants and the result is small. So type and shape inference
 *      run over the graph as the import goes, and importers read their
 *      results: an input's dtype and dims, and the constants shape
 *      arithmetic makes (Shape -> Gather -> Mul -> Slice ends) with the
 *      dims --input_shape fixed. This is best effort: where shapes cannot
 *      be inferred yet, outputs keep an unknown shape (rank -1) but still
 *      get their dtype (onnx_result_dtype), and the shape_infer pass
 *      reports the rest; dims are only ever set in full; shapes the model
 *      declares (value_info, graph outputs) are not read;
 *   5. graph outputs, topological order (ir_graph_toposort rejects cycles),
 *      output dtypes propagated in that order, and unreferenced values
 *      (unused initializers, unsupported extra outputs) dropped.
 * --input_shape replaces a graph input's dims wholesale (as ATC does), but its
 * rank must agree with the model's. Messages name the model (`label`) first.
 *
 * Subgraphs (If branches, Loop and Scan bodies) are imported by their node's
 * importer (onnx_control.c) through onnx_import_subgraph, once per use, with
 * the same steps 2 to 4 on a loader of their own: its formal inputs bound to
 * the values the importer gives, its names resolved in it first and then in
 * the enclosing graphs (`parent`). Step 3 of an enclosing graph counts the
 * reads its subgraphs make of its names. Ordering (step 4) follows explicit
 * inputs only, so a node reading an outer value through a subgraph keeps its
 * file order, which ONNX requires to be topological.
 */
#include "frontend/onnx_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dtype_cvt.h"
#include "ir/shape.h"

typedef onnx_scope loader;

#define DEFAULT_MAX_FILE_BYTES ((size_t)4 << 30)
/* The newest IR version and opset checked: those of the pinned ONNX node
 * tests (../shared/onnx-node-tests). Newer ones only add data types and
 * attributes, which are refused one by one, but are refused wholesale until
 * someone has looked. */
enum {
  IR_VERSION_MIN = 3, /* the first with opset_import */
  IR_VERSION_MAX = 13,
  OPSET_MAX = 28,
  MAX_NODE_IO = 1 << 20,            /* inputs or outputs of one node */
  IMPORT_FOLD_MAX_BYTES = 64 << 10, /* larger constant results are left to constfold */
  MAX_SUBGRAPH_DEPTH = 16,          /* If / Loop / Scan nesting */
};

status onnx_fail(onnx_ctx *c, status code, const char *fmt, ...) {
  char msg[960];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return diag_set(c->d, code, "%s: %s", c->label, msg);
}

/* --- --input_shape */

/* Parses the digits in s[0, n) as a non-negative int64, or "-1" (a dynamic
 * dim) as -1. */
static int parse_dim(const char *s, size_t n, int64_t *out) {
  uint64_t v = 0;
  if (n == 2 && s[0] == '-' && s[1] == '1') return *out = -1, 0;
  if (n == 0) return -1;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return -1;
    if (mul_u64(v, 10, &v) || add_u64(v, (uint64_t)(s[i] - '0'), &v) || v > INT64_MAX) return -1;
  }
  *out = (int64_t)v;
  return 0;
}

status onnx_parse_input_shape(const char *spec, arena *a, onnx_input_shape **shapes_out, int *count_out,
                              diag *d) {
  *shapes_out = NULL;
  *count_out = 0;
  if (!spec || !*spec) return diag_set(d, ST_ERR_PARSE, "--input_shape is empty");
  int n = 1;
  for (const char *p = spec; *p; p++)
    n += *p == ';';
  onnx_input_shape *shapes = arena_array(a, (size_t)n, sizeof *shapes);
  if (!shapes) return diag_set(d, ST_ERR_NOMEM, "--input_shape: out of memory");
  const char *piece = spec;
  for (int k = 0; k < n; k++) {
    size_t len = strcspn(piece, ";");
    int plen = len > 200 ? 200 : (int)len; /* for messages */
    const char *colon = NULL;
    for (size_t i = 0; i < len; i++)
      if (piece[i] == ':') colon = piece + i; /* the last one: names may contain ':' */
    if (len == 0) return diag_set(d, ST_ERR_PARSE, "--input_shape \"%s\": entry %d is empty", spec, k + 1);
    if (!colon)
      return diag_set(d, ST_ERR_PARSE, "--input_shape: '%.*s' has no ':' between the name and the dims", plen,
                      piece);
    if (colon == piece)
      return diag_set(d, ST_ERR_PARSE, "--input_shape: '%.*s' has no input name", plen, piece);
    onnx_input_shape *s = &shapes[k];
    s->name = arena_strndup(a, piece, (size_t)(colon - piece));
    if (!s->name) return diag_set(d, ST_ERR_NOMEM, "--input_shape: out of memory");
    for (int j = 0; j < k; j++)
      if (!strcmp(shapes[j].name, s->name))
        return diag_set(d, ST_ERR_PARSE, "--input_shape: input '%s' is given twice", s->name);
    const char *p = colon + 1, *end = piece + len;
    if (p == end) return diag_set(d, ST_ERR_PARSE, "--input_shape: '%.*s' has no dims", plen, piece);
    while (p <= end) {
      size_t dl = strcspn(p, ",;");
      if (p + dl > end) dl = (size_t)(end - p);
      if (s->rank == MAX_RANK)
        return diag_set(d, ST_ERR_PARSE, "--input_shape: '%.*s' has more than %d dims", plen, piece,
                        MAX_RANK);
      if (parse_dim(p, dl, &s->dims[s->rank]) != 0)
        return diag_set(d, ST_ERR_PARSE,
                        "--input_shape: '%.*s': dim %d '%.*s' is not a non-negative integer or -1", plen,
                        piece, s->rank, (int)(dl > 40 ? 40 : dl), p);
      s->rank++;
      p += dl + 1;
    }
    piece += len + 1;
  }
  *shapes_out = shapes;
  *count_out = n;
  return ST_OK;
}

/* --- the name map: one entry per defined ONNX name */

typedef enum def_kind { DEF_INITIALIZER, DEF_INPUT, DEF_CONSTANT, DEF_NODE } def_kind;

typedef struct name_entry {
  const char *name; /* NULL: empty slot */
  ir_value *v;
  def_kind kind;
  int node;        /* defining node index (DEF_CONSTANT, DEF_NODE) */
  int uses;        /* node inputs and graph outputs reading it */
  int unsupported; /* precheck: defined by a node that could not be imported */
  ir_value *wide;  /* v widened to its working dtype (storage dtypes: widen_inputs) */
} name_entry;

/* The state of one graph's import: the model's main graph, or a subgraph (an
 * If branch, a Loop or Scan body) imported into the same IR graph once per
 * use, whose names not defined in it are looked up in the enclosing graphs
 * (`parent`). */
struct onnx_scope {
  onnx_ctx *c;
  onnx_proto *proto;          /* the main graph's only (its initializers) */
  const Onnx__GraphProto *gp; /* the graph being imported */
  name_entry *slots;
  size_t mask;          /* slot count - 1 (a power of two minus one) */
  const loader *parent; /* the enclosing graph's loader; NULL for the main graph */
  int depth;            /* subgraph nesting: 0 for the main graph */
};

/* The slot of `name` in L's own table: its entry, or the empty slot a
 * definition would take. */
static name_entry *lookup(const loader *L, const char *name) {
  uint64_t h = 1469598103934665603u; /* FNV-1a */
  for (const unsigned char *p = (const unsigned char *)name; *p; p++)
    h = (h ^ *p) * 1099511628211u;
  for (size_t i = (size_t)h & L->mask;; i = (i + 1) & L->mask)
    if (!L->slots[i].name || !strcmp(L->slots[i].name, name)) return &L->slots[i];
}

/* The definition `name` refers to in L: L's own, else the nearest enclosing
 * graph's (outer-scope names of a subgraph); NULL when none defines it. */
static name_entry *resolve(const loader *L, const char *name) {
  for (; L; L = L->parent) {
    name_entry *e = lookup(L, name);
    if (e->name) return e;
  }
  return NULL;
}

/* Sizes L's name table for `defs` definitions besides its nodes' outputs. */
static status make_slots(loader *L, size_t defs) {
  size_t slots = 64;
  for (size_t i = 0; i < L->gp->n_node; i++)
    defs += L->gp->node[i]->n_output;
  while (slots < 2 * defs)
    slots *= 2;
  L->slots = arena_array(&L->c->scratch, slots, sizeof *L->slots);
  L->mask = slots - 1;
  return L->slots ? ST_OK : onnx_fail(L->c, ST_ERR_NOMEM, "out of memory for %zu names", defs);
}

/* "an initializer", "a graph input", "the output of node 'n' (Conv)". */
static const char *describe(loader *L, const name_entry *e, char *buf, size_t size) {
  char label[256];
  switch (e->kind) {
  case DEF_INITIALIZER: return "an initializer";
  case DEF_INPUT: return "a graph input";
  default:
    snprintf(buf, size, "the output of %s",
             onnx_node_label(L->gp->node[e->node], e->node, label, sizeof label));
    return buf;
  }
}

/* Claims `name` for a new definition; fails when it is taken. */
static status define(loader *L, const char *name, const char *what, name_entry **out) {
  name_entry *e = lookup(L, name);
  char buf[300];
  if (e->name)
    return onnx_fail(L->c, ST_ERR_INVALID, "%s '%s' is already defined as %s", what, name,
                     describe(L, e, buf, sizeof buf));
  e->name = name;
  *out = e;
  return ST_OK;
}

/* --- 1. the model */

static status check_model(loader *L, const Onnx__ModelProto *m) {
  onnx_ctx *c = L->c;
  if (!m->has_ir_version) return onnx_fail(c, ST_ERR_INVALID, "the model has no ir_version");
  if (m->ir_version < IR_VERSION_MIN || m->ir_version > IR_VERSION_MAX)
    return onnx_fail(c, ST_ERR_UNSUPPORTED, "ir_version %" PRId64 " is not supported (%d to %d)",
                     m->ir_version, IR_VERSION_MIN, IR_VERSION_MAX);
  c->opset = c->ms_opset = 0;
  for (size_t i = 0; i < m->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *o = m->opset_import[i];
    if (o->domain && !strcmp(o->domain, ONNX_MS_DOMAIN)) {
      if (c->ms_opset) return onnx_fail(c, ST_ERR_INVALID, "opset_import lists domain '%s' twice", o->domain);
      if (!o->has_version || o->version < 1 || o->version > INT32_MAX)
        return onnx_fail(c, ST_ERR_INVALID, "opset_import: domain '%s' has version %" PRId64, o->domain,
                         o->has_version ? o->version : 0);
      c->ms_opset = (int)o->version;
      continue;
    }
    if (o->domain && *o->domain && strcmp(o->domain, "ai.onnx")) continue;
    if (c->opset) return onnx_fail(c, ST_ERR_INVALID, "opset_import lists the default domain twice");
    if (!o->has_version || o->version < 1 || o->version > OPSET_MAX)
      return onnx_fail(c, ST_ERR_UNSUPPORTED, "opset %" PRId64 " is not supported (1 to %d)",
                       o->has_version ? o->version : 0, OPSET_MAX);
    c->opset = (int)o->version;
  }
  if (!c->opset) return onnx_fail(c, ST_ERR_INVALID, "opset_import has no entry for the default ONNX domain");
  if (!m->graph) return onnx_fail(c, ST_ERR_INVALID, "the model has no graph");
  if (m->graph->n_sparse_initializer)
    return onnx_fail(c, ST_ERR_UNSUPPORTED, "sparse initializers are not supported");
  c->g->opset = c->opset;
  return ST_OK;
}

/* --- 2. definitions */

/* Each initializer is unpacked on its own (onnx_proto.c), its constant made
 * and its unpacked copy freed before the next, so the name is copied. */
static status add_initializers(loader *L) {
  for (size_t i = 0; i < L->proto->ninits; i++) {
    onnx_proto tp;
    status s = onnx_proto_initializer(L->proto, i, &tp, L->c->d);
    const Onnx__TensorProto *t = tp.tensor;
    name_entry *e = NULL;
    if (!s && (!t->name || !*t->name)) s = onnx_fail(L->c, ST_ERR_INVALID, "initializer %zu has no name", i);
    if (!s) {
      const char *name = arena_strdup(&L->c->scratch, t->name);
      char what[300];
      snprintf(what, sizeof what, "initializer '%.250s'", t->name);
      s = name ? define(L, name, "initializer", &e) : onnx_fail(L->c, ST_ERR_NOMEM, "out of memory");
      L->c->src = L->proto; /* its bytes go back as they are copied */
      if (!s) s = onnx_tensor_const(L->c, t, name, what, &e->v);
      L->c->src = NULL;
    }
    onnx_proto_free(&tp);
    if (s) return s;
    e->kind = DEF_INITIALIZER;
  }
  return ST_OK;
}

static int is_initializer(loader *L, const char *name) {
  const name_entry *e = lookup(L, name);
  return e->name && e->kind == DEF_INITIALIZER;
}

/* Whether `name` is a graph input that is not an initializer. */
static int is_real_input(loader *L, const char *name) {
  for (size_t i = 0; i < L->gp->n_input; i++)
    if (L->gp->input[i]->name && !strcmp(L->gp->input[i]->name, name)) return !is_initializer(L, name);
  return 0;
}

/* Every --input_shape entry must name a graph input; the message lists them. */
static status check_input_shapes(loader *L) {
  const onnx_options *opt = L->c->opt;
  for (int k = 0; k < opt->ninput_shapes; k++) {
    if (is_real_input(L, opt->input_shapes[k].name)) continue;
    char list[600] = "";
    size_t n = 0;
    for (size_t i = 0; i < L->gp->n_input && n < sizeof list; i++) {
      const char *name = L->gp->input[i]->name;
      if (name && is_real_input(L, name))
        n += (size_t)snprintf(list + n, sizeof list - n, "%s'%s'", n ? ", " : "", name);
    }
    return onnx_fail(L->c, ST_ERR_INVALID,
                     "--input_shape names '%s', which is not a graph input (the inputs are: %s)",
                     opt->input_shapes[k].name, n ? list : "none");
  }
  return ST_OK;
}

/* The shape of graph input `vi`, with --input_shape entry `fix` (or NULL). */
static status input_shape(loader *L, const Onnx__ValueInfoProto *vi, const onnx_input_shape *fix, int *dt_out,
                          int *rank_out, int64_t *dims) {
  onnx_ctx *c = L->c;
  const char *name = vi->name;
  const Onnx__TypeProto *tp = vi->type;
  if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
    return onnx_fail(c, ST_ERR_UNSUPPORTED, "input '%s' is not a tensor", name);
  const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
  int dt = tt->has_elem_type ? tt->elem_type : DT_UNDEFINED;
  if (!dtype_bits(dt))
    return onnx_fail(c, ST_ERR_UNSUPPORTED, "input '%s' has data type %d (%s), which is not supported", name,
                     dt, onnx_dtype_name(dt));
  const Onnx__TensorShapeProto *sh = tt->shape;
  if (!sh && !fix)
    return onnx_fail(c, ST_ERR_INVALID, "input '%s' has no shape; give it with --input_shape \"%s:...\"",
                     name, name);
  int rank = sh ? (int)(sh->n_dim > MAX_RANK ? MAX_RANK + 1 : sh->n_dim) : fix->rank;
  if (rank > MAX_RANK)
    return onnx_fail(c, ST_ERR_LIMIT, "input '%s' has rank %zu, more than the limit of %d", name, sh->n_dim,
                     MAX_RANK);
  if (fix && fix->rank != rank)
    return onnx_fail(c, ST_ERR_INVALID, "input '%s' has rank %d, but --input_shape gives %d dims", name, rank,
                     fix->rank);
  for (int k = 0; k < rank; k++) {
    const Onnx__TensorShapeProto__Dimension *dim = sh ? sh->dim[k] : NULL;
    if (fix) {
      if (fix->dims[k] < 0)
        return onnx_fail(c, ST_ERR_INVALID,
                         "input '%s' dim %d is -1 (dynamic) in --input_shape; give its values with "
                         "--dynamic_batch_size, --dynamic_image_size or --dynamic_dims",
                         name, k);
      dims[k] = fix->dims[k];
    } else if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
      if (dim->dim_value < 0)
        return onnx_fail(c, ST_ERR_INVALID, "input '%s' dim %d is negative (%" PRId64 ")", name, k,
                         dim->dim_value);
      dims[k] = dim->dim_value;
    } else {
      /* Suggest the model's dims with 1 for every unknown one. */
      char hint[300];
      size_t n = (size_t)snprintf(hint, sizeof hint, "%.200s:", name);
      for (int j = 0; j < rank && n < sizeof hint; j++) {
        const Onnx__TensorShapeProto__Dimension *dj = sh->dim[j];
        int64_t v =
            dj->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ? dj->dim_value : 1;
        n += (size_t)snprintf(hint + n, sizeof hint - n, "%s%" PRId64, j ? "," : "", v);
      }
      int named = dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dim->dim_param &&
                  *dim->dim_param;
      return onnx_fail(c, ST_ERR_INVALID, "input '%s' dim %d %s%s%s is %s; fix it with --input_shape \"%s\"",
                       name, k, named ? "('" : "", named ? dim->dim_param : "", named ? "')" : "",
                       named ? "symbolic" : "unknown", hint);
    }
  }
  uint64_t count = 1, bytes;
  for (int k = 0; k < rank; k++)
    if (mul_u64(count, (uint64_t)dims[k], &count) || dtype_bytes(dt, count, &bytes) || bytes > INT64_MAX)
      return onnx_fail(c, ST_ERR_LIMIT, "input '%s': its dims overflow the byte size", name);
  *dt_out = dt;
  *rank_out = rank;
  return ST_OK;
}

static status add_inputs(loader *L) {
  onnx_ctx *c = L->c;
  status s = check_input_shapes(L);
  for (size_t i = 0; !s && i < L->gp->n_input; i++) {
    const Onnx__ValueInfoProto *vi = L->gp->input[i];
    if (!vi->name || !*vi->name) return onnx_fail(c, ST_ERR_INVALID, "graph input %zu has no name", i);
    if (is_initializer(L, vi->name))
      continue; /* an initializer listed as an input (IR < 4 style): a constant */
    const onnx_input_shape *fix = NULL;
    for (int k = 0; k < c->opt->ninput_shapes; k++)
      if (!strcmp(c->opt->input_shapes[k].name, vi->name)) fix = &c->opt->input_shapes[k];
    int dt = DT_UNDEFINED, rank = 0;
    int64_t dims[MAX_RANK];
    name_entry *e;
    s = define(L, vi->name, "graph input", &e);
    if (!s) s = input_shape(L, vi, fix, &dt, &rank, dims);
    if (s) return s;
    e->kind = DEF_INPUT;
    e->v = ir_value_new(c->g, vi->name, (dtype)dt);
    if (!e->v) return onnx_fail(c, ST_ERR_NOMEM, "out of memory");
    ir_value_set_shape(e->v, rank, dims);
    if (ir_graph_add_input(c->g, e->v)) return onnx_fail(c, ST_ERR_NOMEM, "out of memory");
  }
  return s;
}

/* A Constant node: its one attribute becomes a constant value. */
static status add_constant(loader *L, onnx_node *nd) {
  const Onnx__NodeProto *np = nd->np;
  ir_graph *g = L->c->g;
  if (np->n_input != 0 || np->n_output != 1 || !*np->output[0])
    return onnx_node_fail(nd, ST_ERR_INVALID, "a Constant takes no inputs and has one named output");
  static const char *const forms[] = {"value", "value_float", "value_floats", "value_int", "value_ints"};
  static const int kinds[] = {
      ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT,
      ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT,
      ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS};
  if (np->n_attribute != 1)
    return onnx_node_fail(nd, ST_ERR_INVALID, "a Constant needs exactly one attribute, it has %zu",
                          np->n_attribute);
  const Onnx__AttributeProto *a = np->attribute[0];
  int form = -1;
  for (int i = 0; i < 5; i++)
    if (a->name && !strcmp(a->name, forms[i])) form = i;
  if (form < 0)
    return onnx_node_fail(nd, ST_ERR_UNSUPPORTED, "attribute '%s' is not supported", a->name ? a->name : "");
  if (onnx_attr_type(a) != kinds[form])
    return onnx_node_fail(nd, ST_ERR_INVALID, "attribute '%s' is %s, expected %s", a->name,
                          onnx_attr_type_name(onnx_attr_type(a)), onnx_attr_type_name(kinds[form]));
  name_entry *e;
  const char *out = np->output[0];
  status s = define(L, out, "Constant output", &e);
  if (s) return s;
  e->kind = DEF_CONSTANT;
  e->node = nd->index;
  int64_t n;
  switch (form) {
  case 0: {
    if (!a->t) return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'value' holds no tensor");
    char what[400], label[256];
    snprintf(what, sizeof what, "%s attribute 'value'", onnx_node_label(np, nd->index, label, sizeof label));
    return onnx_tensor_const(L->c, a->t, out, what, &e->v);
  }
  case 1: {
    float f = a->f;
    e->v = ir_const_new(g, out, DT_FLOAT32, 0, NULL, &f, sizeof f);
    break;
  }
  case 2: {
    n = (int64_t)a->n_floats;
    e->v = ir_const_new(g, out, DT_FLOAT32, 1, &n, a->floats, a->n_floats * sizeof *a->floats);
    break;
  }
  case 3: e->v = ir_const_new(g, out, DT_INT64, 0, NULL, &a->i, sizeof a->i); break;
  default:
    n = (int64_t)a->n_ints;
    e->v = ir_const_new(g, out, DT_INT64, 1, &n, a->ints, a->n_ints * sizeof *a->ints);
  }
  return e->v ? ST_OK : onnx_node_fail(nd, ST_ERR_NOMEM, "out of memory");
}

static int is_default_domain(const char *domain) { return !domain || !*domain || !strcmp(domain, "ai.onnx"); }

static int is_constant(const Onnx__NodeProto *np) { return !strcmp(np->op_type, "Constant"); }

/* Constant nodes become constants; every other output becomes a value. */
static status define_node_outputs(loader *L) {
  for (size_t i = 0; i < L->gp->n_node; i++) {
    const Onnx__NodeProto *np = L->gp->node[i];
    onnx_node nd = {.c = L->c, .np = np, .index = (int)i};
    if (!np->op_type || !*np->op_type) return onnx_fail(L->c, ST_ERR_INVALID, "node #%zu has no op_type", i);
    if (np->domain && !strcmp(np->domain, ONNX_MS_DOMAIN) && !L->c->ms_opset)
      return onnx_node_fail(&nd, ST_ERR_INVALID, "domain '%s' is not in the model's opset_import",
                            np->domain);
    if (!is_default_domain(np->domain) && strcmp(np->domain, ONNX_MS_DOMAIN))
      return onnx_node_fail(
          &nd, ST_ERR_UNSUPPORTED,
          "domain '%s' is not supported (the default ONNX domain and " ONNX_MS_DOMAIN " are)", np->domain);
    if (np->n_input > MAX_NODE_IO || np->n_output > MAX_NODE_IO)
      return onnx_node_fail(&nd, ST_ERR_LIMIT, "too many inputs or outputs");
    if (is_constant(np)) {
      status s = add_constant(L, &nd);
      if (s) return s;
      continue;
    }
    for (size_t k = 0; k < np->n_output; k++) {
      if (!*np->output[k]) continue; /* an omitted optional output */
      name_entry *e;
      char what[300], label[256];
      snprintf(what, sizeof what, "%s: output %zu", onnx_node_label(np, (int)i, label, sizeof label), k);
      status s = define(L, np->output[k], what, &e);
      if (s) return s;
      e->kind = DEF_NODE;
      e->node = (int)i;
      e->v = ir_value_new(L->c->g, np->output[k], DT_UNDEFINED);
      if (!e->v) return onnx_fail(L->c, ST_ERR_NOMEM, "out of memory");
    }
  }
  return ST_OK;
}

/* --- 3. uses */

/* Counts the reads of L's own names by the subgraphs in np's attributes, at
 * any depth (their outer-scope references), so that importers see them used.
 * A subgraph's own names are not in L's table (ONNX forbids a subgraph to
 * reuse an enclosing graph's name), so every hit is a real outer read. */
static void count_subgraph_uses(loader *L, const Onnx__NodeProto *np) {
  for (size_t a = 0; a < np->n_attribute; a++) {
    const Onnx__AttributeProto *at = np->attribute[a];
    const Onnx__GraphProto *gs[1] = {at->g};
    const Onnx__GraphProto *const *list = at->n_graphs ? (const Onnx__GraphProto *const *)at->graphs : gs;
    size_t count = at->n_graphs ? at->n_graphs : at->g != NULL;
    for (size_t j = 0; j < count; j++) {
      const Onnx__GraphProto *sg = list[j];
      for (size_t i = 0; i < sg->n_node; i++) {
        const Onnx__NodeProto *sn = sg->node[i];
        for (size_t k = 0; k < sn->n_input; k++) {
          name_entry *e = *sn->input[k] ? lookup(L, sn->input[k]) : NULL;
          if (e && e->name) e->uses++;
        }
        count_subgraph_uses(L, sn);
      }
      for (size_t i = 0; i < sg->n_output; i++) {
        name_entry *e = sg->output[i]->name && *sg->output[i]->name ? lookup(L, sg->output[i]->name) : NULL;
        if (e && e->name) e->uses++;
      }
    }
  }
}

/* Every name read must be defined: in L, or, in a subgraph, in an enclosing
 * graph (reads of those are counted where they are defined, by
 * count_subgraph_uses). */
static status count_uses(loader *L) {
  for (size_t i = 0; i < L->gp->n_node; i++) {
    const Onnx__NodeProto *np = L->gp->node[i];
    onnx_node nd = {.c = L->c, .np = np, .index = (int)i};
    for (size_t k = 0; k < np->n_input; k++) {
      if (!*np->input[k]) continue; /* an omitted optional input */
      name_entry *e = lookup(L, np->input[k]);
      if (e->name)
        e->uses++;
      else if (!resolve(L->parent, np->input[k]))
        return onnx_node_fail(&nd, ST_ERR_INVALID,
                              "input %zu '%s' is produced by no node and is neither a graph input "
                              "nor an initializer",
                              k, np->input[k]);
    }
    count_subgraph_uses(L, np);
  }
  for (size_t i = 0; i < L->gp->n_output; i++) {
    const char *name = L->gp->output[i]->name;
    if (!name || !*name)
      return onnx_fail(L->c, ST_ERR_INVALID, "%sgraph output %zu has no name", L->parent ? "sub" : "", i);
    name_entry *e = lookup(L, name);
    if (e->name)
      e->uses++;
    else if (!resolve(L->parent, name))
      return onnx_fail(L->c, ST_ERR_INVALID,
                       "%sgraph output '%s' is produced by no node and is neither a graph input nor "
                       "an initializer",
                       L->parent ? "sub" : "", name);
  }
  return ST_OK;
}

/* --- 4. nodes */

/* The order nodes are imported in: each after the nodes producing its
 * inputs, otherwise in file order, so that every importer sees its inputs
 * imported and inferred, and a model already in topological order keeps its
 * order. A depth-first walk over producers with an explicit stack; a
 * producer already on the stack is a cycle (*cyclic_out = 1), skipped here
 * and reported by ir_graph_toposort at the end. */
static status import_order(loader *L, int **order_out, int *cyclic_out) {
  size_t n = L->gp->n_node, count = 0;
  int *order = arena_array(&L->c->scratch, n + 1, sizeof *order);
  int *stack = arena_array(&L->c->scratch, n + 1, sizeof *stack);
  size_t *next = arena_array(&L->c->scratch, n + 1, sizeof *next); /* the next input to look at */
  unsigned char *state = arena_array(&L->c->scratch, n + 1, 1);    /* 0 new, 1 on the stack, 2 ordered */
  if (!order || !stack || !next || !state) return onnx_fail(L->c, ST_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    if (state[i]) continue;
    size_t depth = 0;
    stack[depth++] = (int)i, state[i] = 1;
    while (depth > 0) {
      int t = stack[depth - 1];
      const Onnx__NodeProto *np = L->gp->node[t];
      int pushed = 0;
      while (!pushed && next[t] < np->n_input) {
        const char *name = np->input[next[t]++];
        const name_entry *e = *name ? lookup(L, name) : NULL;
        if (e && e->name && e->kind == DEF_NODE && state[e->node] == 1) *cyclic_out = 1;
        if (e && e->name && e->kind == DEF_NODE && state[e->node] == 0)
          stack[depth++] = e->node, state[e->node] = 1, pushed = 1;
      }
      if (!pushed) depth--, state[t] = 2, order[count++] = t;
    }
  }
  *order_out = order;
  return ST_OK;
}

/* Pushes onto stack the producers in L of the names np's subgraphs read
 * (at any depth) that are not yet marked in live, and marks them. */
static void push_subgraph_reads(loader *L, const Onnx__NodeProto *np, unsigned char *live, int *stack,
                                size_t *depth) {
  for (size_t a = 0; a < np->n_attribute; a++) {
    const Onnx__AttributeProto *at = np->attribute[a];
    const Onnx__GraphProto *gs[1] = {at->g};
    const Onnx__GraphProto *const *list = at->n_graphs ? (const Onnx__GraphProto *const *)at->graphs : gs;
    size_t count = at->n_graphs ? at->n_graphs : at->g != NULL;
    for (size_t j = 0; j < count; j++)
      for (size_t i = 0; i < list[j]->n_node; i++) {
        const Onnx__NodeProto *sn = list[j]->node[i];
        for (size_t k = 0; k < sn->n_input; k++) {
          const name_entry *e = *sn->input[k] ? lookup(L, sn->input[k]) : NULL;
          if (e && e->name && e->kind == DEF_NODE && !live[e->node])
            live[e->node] = 1, stack[(*depth)++] = e->node;
        }
        push_subgraph_reads(L, sn, live, stack, depth);
      }
  }
}

/* live[i] = 1 for the nodes of L some graph output reads through any chain
 * (a node holding a subgraph reads what the subgraph reads). */
static status mark_live(loader *L, unsigned char **live_out) {
  size_t n = L->gp->n_node, depth = 0;
  unsigned char *live = arena_array(&L->c->scratch, n + 1, 1);
  int *stack = arena_array(&L->c->scratch, n + 1, sizeof *stack); /* each node pushed once */
  if (!live || !stack) return onnx_fail(L->c, ST_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < L->gp->n_output; i++) {
    const name_entry *e = lookup(L, L->gp->output[i]->name); /* count_uses checked the name */
    if (e->name && e->kind == DEF_NODE && !live[e->node]) live[e->node] = 1, stack[depth++] = e->node;
  }
  while (depth > 0) {
    const Onnx__NodeProto *np = L->gp->node[stack[--depth]];
    for (size_t k = 0; k < np->n_input; k++) {
      const name_entry *e = *np->input[k] ? lookup(L, np->input[k]) : NULL;
      if (e && e->name && e->kind == DEF_NODE && !live[e->node]) live[e->node] = 1, stack[depth++] = e->node;
    }
    push_subgraph_reads(L, np, live, stack, &depth);
  }
  *live_out = live;
  return ST_OK;
}

/* Node k (>= first) of the graph, by its id: -1 when p is not one of the
 * nodes since `first`. */
static int new_index(const ir_graph *g, int first, const ir_node *p) {
  int64_t k = (int64_t)first + (p->id - g->nodes[first]->id);
  return k >= first && k < g->nnodes && g->nodes[k] == p ? (int)k : -1;
}

/* Infers the IR nodes made since g->nodes[first] (by one importer), in
 * dependency order: a node is taken when its inputs' producers among them
 * have been (importers may make a node before its inputs, as the 1-D Conv
 * does). Each gets its outputs' dtypes and dims and folds when its result
 * is small (ir_shape_try); when its shape cannot be inferred yet, its
 * outputs still get the dtype ONNX's type rules give (onnx_result_dtype).
 * Best effort: only ST_ERR_NOMEM fails. */
status onnx_infer_nodes(onnx_ctx *c, int first) {
  ir_graph *g = c->g;
  int n = g->nnodes - first, left = n;
  unsigned char *done = n > 0 ? arena_array(&c->scratch, (size_t)n, 1) : NULL;
  if (n > 0 && !done) return onnx_fail(c, ST_ERR_NOMEM, "out of memory");
  while (left > 0) {
    int progress = 0;
    for (int j = 0; j < n; j++) {
      ir_node *node = g->nodes[first + j];
      int ready = !done[j];
      for (int i = 0; ready && i < node->nin; i++) {
        const ir_node *p = node->in[i] ? node->in[i]->producer : NULL;
        int k = p ? new_index(g, first, p) : -1;
        ready = k < 0 || done[k - first];
      }
      if (!ready) continue;
      status s = ir_shape_try(g, node, IMPORT_FOLD_MAX_BYTES, c->d);
      if (s) return s;
      for (int k = 0; !node->dead && k < node->nout; k++)
        if (node->out[k] && node->out[k]->dtype == DT_UNDEFINED)
          node->out[k]->dtype = onnx_result_dtype(node);
      done[j] = 1, left--, progress = 1;
    }
    if (!progress) break; /* a cycle among them: ir_graph_toposort reports it */
  }
  return ST_OK;
}

/* Storage dtypes (common/types.h) are computed on by Convert only. The ops
 * that read them themselves: Cast and CastLike (a Convert), QuantizeLinear
 * (a zero point's dtype is its output's) and DequantizeLinear. */
static int reads_storage(const Onnx__NodeProto *np) {
  static const char *const ops[] = {"Cast", "CastLike", "QuantizeLinear", "DequantizeLinear"};
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
    if (is_default_domain(np->domain) && !strcmp(np->op_type, ops[i])) return 1;
  return 0;
}

/* Every other op reads a storage-dtype input widened to its working dtype:
 * a Cast (shape inference makes it a Convert), one per value for all its
 * readers. */
static status widen_inputs(loader *L, const Onnx__NodeProto *np, ir_value **in) {
  if (reads_storage(np)) return ST_OK;
  for (size_t k = 0; k < np->n_input; k++) {
    if (!in[k] || !dtype_is_storage(in[k]->dtype)) continue;
    name_entry *e = resolve(L, np->input[k]);
    if (!e->wide) {
      ir_graph *g = L->c->g;
      char name[300];
      snprintf(name, sizeof name, "%.250s/widened", in[k]->name);
      int first = g->nnodes, to = dtype_working(in[k]->dtype);
      ir_value *w = ir_value_new(g, name, (dtype)to);
      ir_node *n = w ? ir_node_new(g, IR_OP_CAST, name, 1, &in[k], 1, &w) : NULL;
      if (!n || ir_attr_set_int(g, n, "to", to)) return onnx_fail(L->c, ST_ERR_NOMEM, "out of memory");
      status s = onnx_infer_nodes(L->c, first);
      if (s) return s;
      e->wide = w;
    }
    in[k] = e->wide;
  }
  return ST_OK;
}

const Onnx__NodeProto *onnx_sole_reader(const onnx_node *nd, int k) {
  if (k >= nd->nout || !nd->out[k] || nd->uses[k] != 1) return NULL;
  const char *name = nd->np->output[k];
  const Onnx__GraphProto *gp = nd->scope->gp;
  for (size_t i = 0; i < gp->n_node; i++)
    for (size_t j = 0; j < gp->node[i]->n_input; j++)
      if (!strcmp(gp->node[i]->input[j], name)) return gp->node[i];
  return NULL; /* its one use is a graph output, or a subgraph's */
}

static status import_nodes(loader *L) {
  size_t max_io = 1;
  for (size_t i = 0; i < L->gp->n_node; i++) {
    const Onnx__NodeProto *np = L->gp->node[i];
    if (np->n_input > max_io) max_io = np->n_input;
    if (np->n_output > max_io) max_io = np->n_output;
  }
  ir_value **in = arena_array(&L->c->scratch, max_io, sizeof *in);
  ir_value **out = arena_array(&L->c->scratch, max_io, sizeof *out);
  int *uses = arena_array(&L->c->scratch, max_io, sizeof *uses);
  if (!in || !out || !uses) return onnx_fail(L->c, ST_ERR_NOMEM, "out of memory");
  int *order = NULL;
  unsigned char *live = NULL;
  int cyclic = 0; /* a cycle, read or not, is imported for ir_graph_toposort to report */
  status os = import_order(L, &order, &cyclic);
  if (!os && !cyclic && !L->c->opt->import_unread) os = mark_live(L, &live);
  if (os) return os;
  const onnx_options *opt = L->c->opt;
  size_t failed = 0, imported = 0;
  for (size_t oi = 0; oi < L->gp->n_node; oi++) {
    const size_t i = (size_t)order[oi];
    const Onnx__NodeProto *np = L->gp->node[i];
    if (is_constant(np) || (live && !live[i])) continue;
    int after_failure = 0;
    for (size_t k = 0; k < np->n_input; k++) {
      name_entry *e = *np->input[k] ? resolve(L, np->input[k]) : NULL;
      in[k] = e ? e->v : NULL;
      if (e && e->unsupported) after_failure = 1;
    }
    for (size_t k = 0; k < np->n_output; k++) {
      name_entry *e = *np->output[k] ? lookup(L, np->output[k]) : NULL;
      out[k] = e ? e->v : NULL;
      uses[k] = e ? e->uses : 0;
    }
    onnx_node nd = {.c = L->c,
                    .np = np,
                    .index = (int)i,
                    .nin = (int)np->n_input,
                    .nout = (int)np->n_output,
                    .in = in,
                    .out = out,
                    .uses = uses,
                    .scope = L};
    imported++;
    status s = widen_inputs(L, np, in);
    int first = L->c->g->nnodes;
    if (s == ST_OK) s = onnx_import_node(&nd);
    /* Types, shapes and small constants right away, so later importers read
     * them (shape arithmetic feeding Slice ends, Pad's input rank, ...). */
    if (s == ST_OK) s = onnx_infer_nodes(L->c, first);
    /* The model's own nodes are its sources (a subgraph's, imported once per
     * use, are part of their If, Loop or Scan). */
    const char *src_name = np->name && *np->name ? np->name : np->n_output ? np->output[0] : "";
    if (s == ST_OK && !L->parent &&
        ir_graph_add_source(L->c->g, src_name, np->op_type, (int)np->n_input, (const char *const *)np->input,
                            (int)np->n_output, (const char *const *)np->output))
      s = onnx_fail(L->c, ST_ERR_NOMEM, "out of memory");
    if (s == ST_OK) continue;
    if (s != ST_ERR_UNSUPPORTED || !opt->on_unsupported || L->parent) return s;
    /* Precheck: report it (unless an unsupported producer explains it), mark
     * its outputs, go on with the next node. */
    if (!after_failure) {
      opt->on_unsupported(opt->user, L->c->d->msg);
      failed++;
    }
    diag_init(L->c->d);
    for (size_t k = 0; k < np->n_output; k++)
      if (*np->output[k]) lookup(L, np->output[k])->unsupported = 1;
  }
  if (failed)
    return onnx_fail(L->c, ST_ERR_UNSUPPORTED, "%zu of %zu nodes are not supported", failed, imported);
  return ST_OK;
}

/* --- subgraphs (frontend/onnx_internal.h) */

status onnx_import_subgraph(onnx_node *nd, const Onnx__GraphProto *gp, ir_value *const *in, ir_value **out) {
  const loader *P = nd->scope;
  onnx_ctx *c = P->c;
  if (P->depth >= MAX_SUBGRAPH_DEPTH)
    return onnx_node_fail(nd, ST_ERR_LIMIT, "subgraphs nest deeper than %d", MAX_SUBGRAPH_DEPTH);
  c->unrolled_nodes += (int64_t)gp->n_node + 1; /* an empty body still costs an import */
  if (c->unrolled_nodes > ONNX_UNROLL_MAX_NODES)
    return onnx_node_fail(nd, ST_ERR_LIMIT,
                          "its subgraphs, imported once per use (each Loop or Scan iteration), come "
                          "to more than %d nodes",
                          ONNX_UNROLL_MAX_NODES);
  loader L = {.c = c, .gp = gp, .parent = P, .depth = P->depth + 1};
  status s = make_slots(&L, gp->n_initializer + gp->n_input);
  for (size_t i = 0; !s && i < gp->n_input; i++) {
    name_entry *e;
    const char *name = gp->input[i]->name;
    if (!name || !*name) return onnx_node_fail(nd, ST_ERR_INVALID, "subgraph input %zu has no name", i);
    s = define(&L, name, "subgraph input", &e);
    if (!s) e->kind = DEF_INPUT, e->v = in[i];
  }
  for (size_t i = 0; !s && i < gp->n_initializer; i++) {
    const Onnx__TensorProto *t = gp->initializer[i];
    name_entry *e;
    if (!t->name || !*t->name)
      return onnx_node_fail(nd, ST_ERR_INVALID, "subgraph initializer %zu has no name", i);
    char what[300];
    snprintf(what, sizeof what, "subgraph initializer '%.250s'", t->name);
    s = define(&L, t->name, "initializer", &e);
    if (!s) s = onnx_tensor_const(c, t, t->name, what, &e->v);
    if (!s) e->kind = DEF_INITIALIZER;
  }
  if (!s) s = define_node_outputs(&L);
  if (!s) s = count_uses(&L);
  if (!s) s = import_nodes(&L);
  for (size_t k = 0; !s && k < gp->n_output; k++)
    out[k] = resolve(&L, gp->output[k]->name)->v; /* count_uses checked it resolves */
  return s;
}

/* --- 5. outputs, order, dtypes */

/* A graph output the model declares of a storage dtype but computed in its
 * working dtype (widen_inputs) is narrowed back: its producer writes a new
 * value, which a Cast (a Convert) converts into the output; a folded one
 * that nothing else reads is converted in place. */
static status narrow_output(loader *L, const Onnx__ValueInfoProto *vi, ir_value *v) {
  const Onnx__TypeProto *tp = vi->type;
  int dt = tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && tp->tensor_type &&
                   tp->tensor_type->has_elem_type
               ? tp->tensor_type->elem_type
               : DT_UNDEFINED;
  if (!dtype_is_storage(dt) || (int)v->dtype == dt || (int)v->dtype != dtype_working(dt)) return ST_OK;
  ir_graph *g = L->c->g;
  if (!v->producer) {
    int64_t n = ir_value_elements(v);
    uint64_t bytes;
    if (!v->data || n < 0 || ir_value_use_count(g, v) || dtype_bytes(dt, (uint64_t)n, &bytes)) return ST_OK;
    void *d = arena_alloc(&g->arena, bytes ? (size_t)bytes : 1);
    if (!d) return onnx_fail(L->c, ST_ERR_NOMEM, "out of memory");
    cvt_run(d, dt, 0, v->data, v->dtype, 0, (size_t)n, 1, CVT_ROUND_UP);
    v->data = d;
    v->dtype = (dtype)dt;
    return ST_OK;
  }
  char name[300];
  snprintf(name, sizeof name, "%.250s/wide", v->name);
  ir_value *t = ir_value_new(g, name, v->dtype);
  if (!t) return onnx_fail(L->c, ST_ERR_NOMEM, "out of memory");
  ir_value_set_shape(t, v->rank, v->dims);
  ir_node *p = v->producer;
  for (int k = 0; k < p->nout; k++)
    if (p->out[k] == v) p->out[k] = t;
  t->producer = p;
  for (int i = 0; i < g->nnodes; i++)
    for (int j = 0; j < g->nodes[i]->nin; j++)
      if (g->nodes[i]->in[j] == v) g->nodes[i]->in[j] = t;
  v->dtype = (dtype)dt;
  ir_node *n = ir_node_new(g, IR_OP_CAST, name, 1, &t, 1, &v);
  if (!n || ir_attr_set_int(g, n, "to", dt)) return onnx_fail(L->c, ST_ERR_NOMEM, "out of memory");
  return onnx_infer_nodes(L->c, g->nnodes - 1);
}

static status finish(loader *L) {
  onnx_ctx *c = L->c;
  ir_graph *g = c->g;
  for (size_t i = 0; i < L->gp->n_output; i++) {
    ir_value *v = lookup(L, L->gp->output[i]->name)->v;
    if (onnx_seq_of(c, v))
      return onnx_fail(c, ST_ERR_UNSUPPORTED,
                       "graph output '%s' is a sequence; sequences are resolved into tensors at import and "
                       "cannot be a model's outputs",
                       v->name);
    status ns = narrow_output(L, L->gp->output[i], v);
    if (ns) return ns;
    if (v->output_index >= 0)
      return onnx_fail(c, ST_ERR_INVALID, "graph output '%s' is listed twice", v->name);
    if (ir_graph_add_output(g, v)) return onnx_fail(c, ST_ERR_NOMEM, "out of memory");
  }
  status s = ir_graph_toposort(g, c->d);
  if (s) {
    diag_prefix(c->d, "%s", c->label);
    return s;
  }
  for (int i = 0; i < g->nnodes; i++) {
    ir_node *n = g->nodes[i];
    for (int k = 0; k < n->nout; k++)
      if (n->out[k] && n->out[k]->dtype == DT_UNDEFINED) n->out[k]->dtype = onnx_result_dtype(n);
  }
  ir_graph_compact(g);
  return ST_OK;
}

static status build_graph(onnx_proto *p, const char *dir, const char *label, const onnx_options *opt,
                          ir_graph **graph_out, diag *d) {
  const Onnx__ModelProto *m = p->model;
  onnx_ctx c = {.label = label, .dir = dir, .dirfd = -1, .opt = opt, .d = d};
  loader L = {.c = &c, .proto = p};
  arena_init(&c.scratch, 0);
  const char *name = m->graph && m->graph->name && *m->graph->name ? m->graph->name : label;
  c.g = ir_graph_new(name, 0);
  if (!c.g) return onnx_fail(&c, ST_ERR_NOMEM, "out of memory");

  status s = check_model(&L, m);
  if (!s) {
    L.gp = m->graph;
    s = make_slots(&L, p->ninits + L.gp->n_input);
  }
  if (!s) s = add_initializers(&L);
  if (!s) s = add_inputs(&L);
  if (!s) s = define_node_outputs(&L);
  if (!s) s = count_uses(&L);
  if (!s) s = import_nodes(&L);
  if (!s) s = finish(&L);
  onnx_tensor_done(&c);
  arena_free(&c.scratch);
  if (s) {
    ir_graph_free(c.g);
    return s;
  }
  *graph_out = c.g;
  return ST_OK;
}

static const onnx_options no_options;

status onnx_load_memory(const void *data, size_t size, const char *dir, const char *label,
                        const onnx_options *opt, ir_graph **graph_out, diag *d) {
  *graph_out = NULL;
  if (!label) label = "model";
  if (!opt) opt = &no_options;
  size_t limit = opt->max_file_bytes ? opt->max_file_bytes : DEFAULT_MAX_FILE_BYTES;
  if (size > limit)
    return diag_set(d, ST_ERR_LIMIT, "%s: the model has %zu bytes, more than the limit of %zu", label, size,
                    limit);
  onnx_proto p;
  status s = onnx_proto_unpack(data, size, 0, label, &p, d);
  if (!s) s = build_graph(&p, dir, label, opt, graph_out, d);
  onnx_proto_free(&p);
  return s;
}

status onnx_load_file(const char *path, const onnx_options *opt, ir_graph **graph_out, diag *d) {
  *graph_out = NULL;
  if (!opt) opt = &no_options;
  void *data;
  size_t size;
  status s = onnx_read_file(path, opt->max_file_bytes ? opt->max_file_bytes : DEFAULT_MAX_FILE_BYTES, &data,
                            &size, d);
  if (s) return s;
  onnx_proto p;
  s = onnx_proto_unpack(data, size, 1, path, &p, d); /* p owns data now */
  char *dir = NULL;
  if (!s) {
    const char *slash = strrchr(path, '/');
    dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (!dir) s = diag_set(d, ST_ERR_NOMEM, "%s: out of memory", path);
  }
  if (!s) s = build_graph(&p, dir, path, opt, graph_out, d);
  free(dir);
  onnx_proto_free(&p);
  return s;
}
