/* singleop.c - atc --singleop (singleop.h).
 *
 * Three steps per description: check it against the schema and the op's
 * row of the table below (inputs, attributes with their types and
 * defaults), filling in every attribute the description leaves out; build
 * the IR graph (the op's build function) and infer its shapes, checking
 * them against output_desc; compile it with atc_compile, the graph given
 * through atc_options.build_graph. Every description is checked and built
 * before the first om is written, so a bad file writes nothing.
 *
 * The record the om carries (atc_options.singleop) is text, one item a line:
 *   op TYPE
 *   input DTYPE FORMAT RANK DIMS...      (AscendCL enum numbers)
 *   output DTYPE FORMAT RANK DIMS...
 *   attr KIND TYPE NAME VALUES...        (KIND s: set by the file, d: the
 *                                         op's default; strings %XX-escaped)
 * acl/acl_op.c parses it back; docs/om-format.md specifies it.
 */
#include "singleop.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_in.h"
#include "ir/ir.h"
#include "ir/shape.h"

enum { MAX_FILE_BYTES = 1 << 20, MAX_IO = 8, MAX_ATTRS = 8, MAX_LIST = 64, RECORD_BYTES = 8192 };

/* --- dtypes and formats ----------------------------------------------------- */

static const struct {
  const char *name;
  int acl; /* aclDataType */
  dtype dt;
} dtypes[] = {
    {"float", 0, DT_FLOAT32}, {"float32", 0, DT_FLOAT32}, {"float16", 1, DT_FLOAT16},
    {"int8", 2, DT_INT8},     {"int32", 3, DT_INT32},     {"uint8", 4, DT_UINT8},
    {"int16", 6, DT_INT16},   {"uint16", 7, DT_UINT16},   {"uint32", 8, DT_UINT32},
    {"int64", 9, DT_INT64},   {"uint64", 10, DT_UINT64},  {"double", 11, DT_DOUBLE},
    {"bool", 12, DT_BOOL},
};
enum { NDTYPES = sizeof dtypes / sizeof *dtypes };

static int dtype_of_acl(int64_t acl) {
  for (int i = 0; i < NDTYPES; i++)
    if (dtypes[i].acl == acl) return i;
  return -1;
}

static const char *const formats[] = {"NCHW", "NHWC", "ND"}; /* by aclFormat number */
/* ATC formats the IR cannot take as an op's I/O: refused by name. */
static const char *const chip_formats[] = {"NC1HWC0", "FRACTAL_Z", "FRACTAL_NZ", "NC1HWC0_C04", "HWCN",
                                           "NDHWC",   "NCDHW",     "NDC1HWC0",   "FRACTAL_Z_3D"};

/* --- the op table ------------------------------------------------------------ */

typedef enum attr_type {
  AT_BOOL,
  AT_INT,
  AT_FLOAT,
  AT_STRING,
  AT_LIST_INT,
  AT_LIST_FLOAT,
  AT_DATA_TYPE
} attr_type;
static const char *const at_names[] = {"bool",     "int",        "float",    "string",
                                       "list_int", "list_float", "data_type"};

typedef struct attr_spec {
  const char *name;
  attr_type type;
  int required;
  int n;            /* default's count (lists) */
  double def[4];    /* default values (bool / int / float) */
  const char *sdef; /* AT_STRING's default */
} attr_spec;

typedef struct desc desc;
typedef status (*build_fn)(ir_graph *g, const desc *o, ir_value **in, ir_value **out, diag *d);

typedef struct op_spec {
  const char *type;
  int min_in, max_in;
  ir_op op; /* the IR op of build_simple */
  build_fn build;
  attr_spec attrs[6];
} op_spec;

typedef struct tensor {
  int dt;     /* index into dtypes */
  int format; /* aclFormat: 0 NCHW, 1 NHWC, 2 ND */
  int rank;
  int64_t dims[MAX_RANK];
  const char *name;
} tensor;

typedef struct attr_val {
  const attr_spec *spec;
  int set; /* given by the file */
  int n;   /* values (1 for scalars) */
  double v[MAX_LIST];
  const char *s; /* AT_STRING */
} attr_val;

struct desc {
  int index;
  const char *op_type;
  const op_spec *spec;
  const char *name; /* the om's base name */
  tensor in[MAX_IO], out[MAX_IO];
  int nin, nout;
  attr_val attrs[MAX_ATTRS];
  int nattrs;
  const char *where; /* "ops.json: op 2 (MatMul)" */
  char *record;
};

static const attr_val *attr(const desc *o, const char *name) {
  for (int i = 0; i < o->nattrs; i++)
    if (!strcmp(o->attrs[i].spec->name, name)) return &o->attrs[i];
  return NULL;
}

static ir_value *node1(ir_graph *g, ir_op op, int nin, ir_value *const *in) {
  ir_value *y = ir_value_new(g, NULL, DT_UNDEFINED);
  return y && ir_node_new(g, op, NULL, nin, in, 1, &y) ? y : NULL;
}

static status nomem(diag *d) { return diag_set(d, ST_ERR_NOMEM, "out of memory"); }

static status build_simple(ir_graph *g, const desc *o, ir_value **in, ir_value **out, diag *d);

/* x with its last two dims swapped (a Transpose the fuse pass folds into the
 * MatMul), or x when swap is 0. */
static ir_value *swap_last2(ir_graph *g, ir_value *x, int swap) {
  if (!swap || x->rank < 2) return x;
  int64_t perm[MAX_RANK];
  for (int i = 0; i < x->rank; i++)
    perm[i] = i;
  perm[x->rank - 2] = x->rank - 1, perm[x->rank - 1] = x->rank - 2;
  ir_value *y = node1(g, IR_OP_TRANSPOSE, 1, &x);
  return y && !ir_attr_set_ints(g, y->producer, "perm", x->rank, perm) ? y : NULL;
}

/* MatMul (x1, x2, [bias]; transpose_x1/2), BatchMatMul (adj_x1/2). */
static status build_matmul(ir_graph *g, const desc *o, ir_value **in, ir_value **out, diag *d) {
  int batch = !strcmp(o->op_type, "BatchMatMul");
  for (int k = 0; k < 2; k++)
    if (batch ? in[k]->rank < 2 : in[k]->rank != 2)
      return diag_set(d, ST_ERR_INVALID, "%s: input_desc[%d].shape: rank %d; %s", o->where, k, in[k]->rank,
                      batch ? "BatchMatMul takes rank >= 2" : "MatMul takes 2-D matrices");
  ir_value *ab[2] = {swap_last2(g, in[0], (int)attr(o, batch ? "adj_x1" : "transpose_x1")->v[0]),
                     swap_last2(g, in[1], (int)attr(o, batch ? "adj_x2" : "transpose_x2")->v[0])};
  ir_value *y = ab[0] && ab[1] ? node1(g, IR_OP_MATMUL, 2, ab) : NULL;
  if (y && o->nin == 3) {
    ir_value *yb[2] = {y, in[2]};
    y = node1(g, IR_OP_ADD, 2, yb);
  }
  return (*out = y) ? ST_OK : nomem(d);
}

/* GEMM (a, b, c, alpha, beta): y = alpha * op(a) op(b) + beta * c. */
static status build_gemm(ir_graph *g, const desc *o, ir_value **in, ir_value **out, diag *d) {
  for (int k = 0; k < 2; k++)
    if (in[k]->rank != 2)
      return diag_set(d, ST_ERR_INVALID, "%s: input_desc[%d].shape: rank %d; GEMM takes 2-D matrices",
                      o->where, k, in[k]->rank);
  for (int k = 3; k < 5; k++)
    if (ir_value_elements(in[k]) != 1)
      return diag_set(d, ST_ERR_INVALID, "%s: input_desc[%d].shape: %s: %s is a scalar (one element)",
                      o->where, k, ir_dims_str(in[k]->rank, in[k]->dims), k == 3 ? "alpha" : "beta");
  ir_value *ab[2] = {swap_last2(g, in[0], (int)attr(o, "transpose_a")->v[0]),
                     swap_last2(g, in[1], (int)attr(o, "transpose_b")->v[0])};
  ir_value *p = ab[0] && ab[1] ? node1(g, IR_OP_MATMUL, 2, ab) : NULL;
  ir_value *pa[2] = {p, in[3]}, *cb[2] = {in[2], in[4]};
  ir_value *s[2] = {p ? node1(g, IR_OP_MUL, 2, pa) : NULL, node1(g, IR_OP_MUL, 2, cb)};
  *out = s[0] && s[1] ? node1(g, IR_OP_ADD, 2, s) : NULL;
  return *out ? ST_OK : nomem(d);
}

static status build_rsqrt(ir_graph *g, const desc *o, ir_value **in, ir_value **out, diag *d) {
  (void)o;
  ir_value *s = node1(g, IR_OP_SQRT, 1, in);
  *out = s ? node1(g, IR_OP_RECIPROCAL, 1, &s) : NULL;
  return *out ? ST_OK : nomem(d);
}

/* The value of an int list attribute into ints. */
static int ints_of(const attr_val *a, int64_t *v) {
  for (int i = 0; i < a->n; i++)
    v[i] = (int64_t)a->v[i];
  return a->n;
}

static status build_attr_op(ir_graph *g, const desc *o, ir_value **in, ir_value **out, diag *d) {
  ir_value *y = node1(g, o->spec->op, 1, in);
  if (!y) return nomem(d);
  ir_node *n = y->producer;
  int64_t v[MAX_LIST];
  int bad = 0;
  if (o->spec->op == IR_OP_CAST) {
    int k = dtype_of_acl((int64_t)attr(o, "dst_type")->v[0]);
    if (k < 0)
      return diag_set(d, ST_ERR_UNSUPPORTED, "%s: attr dst_type: %lld is not a dtype this atc takes",
                      o->where, (long long)attr(o, "dst_type")->v[0]);
    bad = ir_attr_set_int(g, n, "to", dtypes[k].dt);
  } else if (o->spec->op == IR_OP_SOFTMAX) {
    const attr_val *a = attr(o, "axes");
    if (a->n != 1)
      return diag_set(d, ST_ERR_UNSUPPORTED, "%s: attr axes: %d axes; this atc's SoftmaxV2 takes one",
                      o->where, a->n);
    bad = ir_attr_set_int(g, n, "axis", (int64_t)a->v[0]);
  } else if (o->spec->op == IR_OP_REDUCE) {
    bad = ir_attr_set_string(g, n, "mode", !strcmp(o->op_type, "ReduceSumD") ? "sum" : "mean") ||
          ir_attr_set_int(g, n, "keepdims", (int64_t)attr(o, "keep_dims")->v[0]) ||
          ir_attr_set_ints(g, n, "axes", ints_of(attr(o, "axes"), v), v);
  } else if (o->spec->op == IR_OP_TRANSPOSE) {
    bad = ir_attr_set_ints(g, n, "perm", ints_of(attr(o, "perm"), v), v);
  }
  *out = y;
  return bad ? nomem(d) : ST_OK;
}

/* The H and W entries of a 4-entry NCHW list attribute whose N and C
 * entries must be `nc` (1 for strides, dilations, ksize). */
static status hw_of(const desc *o, const char *name, int64_t nc, int64_t *hw, diag *d) {
  const attr_val *a = attr(o, name);
  if (a->n != 4 || a->v[0] != (double)nc || a->v[1] != (double)nc)
    return diag_set(d, ST_ERR_INVALID,
                    "%s: attr '%s': expected 4 values [N, C, H, W] (NCHW) with N and C %lld", o->where, name,
                    (long long)nc);
  hw[0] = (int64_t)a->v[2], hw[1] = (int64_t)a->v[3];
  return ST_OK;
}

/* x (and the filter) in NCHW: the format this atc's Conv2D and pools take. */
static status nchw_only(const desc *o, int nin, diag *d) {
  for (int i = 0; i < nin && i < 2; i++)
    if (o->in[i].format != 0 || o->in[i].rank != 4)
      return diag_set(d, ST_ERR_UNSUPPORTED,
                      "%s: input_desc[%d]: %s, rank %d: this atc's %s takes 4-D NCHW "
                      "tensors",
                      o->where, i, formats[o->in[i].format], o->in[i].rank, o->op_type);
  const attr_val *f = attr(o, "data_format");
  if (strcmp(f->s, "NCHW"))
    return diag_set(d, ST_ERR_UNSUPPORTED, "%s: attr 'data_format': '%s': this atc computes NCHW only",
                    o->where, f->s);
  return ST_OK;
}

/* Conv2D (x, filter [Cout, Cin / groups, kh, kw], [bias]): strides,
 * pads [top, bottom, left, right], dilations, groups. */
static status build_conv(ir_graph *g, const desc *o, ir_value **in, ir_value **out, diag *d) {
  int64_t s[2], dl[2], k[2] = {o->in[1].dims[2], o->in[1].dims[3]}, pads[4];
  status st = nchw_only(o, 2, d);
  if (st == ST_OK) st = hw_of(o, "strides", 1, s, d);
  if (st == ST_OK) st = hw_of(o, "dilations", 1, dl, d);
  if (st) return st;
  const attr_val *p = attr(o, "pads");
  if (p->n != 4)
    return diag_set(d, ST_ERR_INVALID, "%s: attr 'pads': expected 4 values [top, bottom, left, right]",
                    o->where);
  pads[0] = (int64_t)p->v[0], pads[1] = (int64_t)p->v[2], pads[2] = (int64_t)p->v[1],
  pads[3] = (int64_t)p->v[3];
  ir_value *y = node1(g, IR_OP_CONV, o->nin, in);
  ir_node *n = y ? y->producer : NULL;
  if (!n || ir_attr_set_ints(g, n, "kernel_shape", 2, k) || ir_attr_set_ints(g, n, "strides", 2, s) ||
      ir_attr_set_ints(g, n, "dilations", 2, dl) || ir_attr_set_ints(g, n, "pads", 4, pads) ||
      ir_attr_set_int(g, n, "group", (int64_t)attr(o, "groups")->v[0]))
    return nomem(d);
  *out = y;
  return ST_OK;
}

/* MaxPool / AvgPool (x): ksize, strides, padding SAME or VALID (AvgPool
 * averages over the window's elements inside x, as TensorFlow's). */
static status build_pool(ir_graph *g, const desc *o, ir_value **in, ir_value **out, diag *d) {
  int64_t k[2], s[2];
  status st = nchw_only(o, 1, d);
  if (st == ST_OK) st = hw_of(o, "ksize", 1, k, d);
  if (st == ST_OK) st = hw_of(o, "strides", 1, s, d);
  if (st) return st;
  const char *pad = attr(o, "padding")->s;
  if (strcmp(pad, "SAME") && strcmp(pad, "VALID"))
    return diag_set(d, ST_ERR_INVALID, "%s: attr 'padding': '%s' (expected SAME or VALID)", o->where, pad);
  ir_value *y = node1(g, o->spec->op, 1, in);
  ir_node *n = y ? y->producer : NULL;
  if (!n || ir_attr_set_ints(g, n, "kernel_shape", 2, k) || ir_attr_set_ints(g, n, "strides", 2, s) ||
      ir_attr_set_string(g, n, "auto_pad", !strcmp(pad, "SAME") ? "SAME_UPPER" : "VALID") ||
      (o->spec->op == IR_OP_AVGPOOL && ir_attr_set_int(g, n, "count_include_pad", 0)))
    return nomem(d);
  *out = y;
  return ST_OK;
}

#define BOOL_ATTR(n)                                                                                         \
  { n, AT_BOOL, 0, 1, {0}, NULL }
#define NCHW_ATTR                                                                                            \
  { "data_format", AT_STRING, 0, 1, {0}, "NCHW" }
static const op_spec ops[] = {
    {"Add", 2, 2, IR_OP_ADD, build_simple, {{0}}},
    {"Sub", 2, 2, IR_OP_SUB, build_simple, {{0}}},
    {"Mul", 2, 2, IR_OP_MUL, build_simple, {{0}}},
    {"RealDiv", 2, 2, IR_OP_DIV, build_simple, {{0}}},
    {"Div", 2, 2, IR_OP_DIV, build_simple, {{0}}},
    {"Maximum", 2, 2, IR_OP_MAX, build_simple, {{0}}},
    {"Minimum", 2, 2, IR_OP_MIN, build_simple, {{0}}},
    {"Pow", 2, 2, IR_OP_POW, build_simple, {{0}}},
    {"Abs", 1, 1, IR_OP_ABS, build_simple, {{0}}},
    {"Neg", 1, 1, IR_OP_NEG, build_simple, {{0}}},
    {"Exp", 1, 1, IR_OP_EXP, build_simple, {{0}}},
    {"Log", 1, 1, IR_OP_LOG, build_simple, {{0}}},
    {"Sqrt", 1, 1, IR_OP_SQRT, build_simple, {{0}}},
    {"Rsqrt", 1, 1, IR_OP_SQRT, build_rsqrt, {{0}}},
    {"Reciprocal", 1, 1, IR_OP_RECIPROCAL, build_simple, {{0}}},
    {"Relu", 1, 1, IR_OP_RELU, build_simple, {{0}}},
    {"Sigmoid", 1, 1, IR_OP_SIGMOID, build_simple, {{0}}},
    {"Tanh", 1, 1, IR_OP_TANH, build_simple, {{0}}},
    {"Cast", 1, 1, IR_OP_CAST, build_attr_op, {{"dst_type", AT_INT, 1, 0, {0}, NULL}, BOOL_ATTR("truncate")}},
    {"MatMul", 2, 3, IR_OP_MATMUL, build_matmul, {BOOL_ATTR("transpose_x1"), BOOL_ATTR("transpose_x2")}},
    {"BatchMatMul", 2, 2, IR_OP_MATMUL, build_matmul, {BOOL_ATTR("adj_x1"), BOOL_ATTR("adj_x2")}},
    {"GEMM", 5, 5, IR_OP_MATMUL, build_gemm, {BOOL_ATTR("transpose_a"), BOOL_ATTR("transpose_b")}},
    {"SoftmaxV2", 1, 1, IR_OP_SOFTMAX, build_attr_op, {{"axes", AT_LIST_INT, 0, 1, {-1}, NULL}}},
    {"ReduceSumD",
     1,
     1,
     IR_OP_REDUCE,
     build_attr_op,
     {{"axes", AT_LIST_INT, 1, 0, {0}, NULL}, BOOL_ATTR("keep_dims")}},
    {"ReduceMeanD",
     1,
     1,
     IR_OP_REDUCE,
     build_attr_op,
     {{"axes", AT_LIST_INT, 1, 0, {0}, NULL}, BOOL_ATTR("keep_dims")}},
    {"TransposeD", 1, 1, IR_OP_TRANSPOSE, build_attr_op, {{"perm", AT_LIST_INT, 1, 0, {0}, NULL}}},
    {"Conv2D",
     2,
     3,
     IR_OP_CONV,
     build_conv,
     {{"strides", AT_LIST_INT, 1, 0, {0}, NULL},
      {"pads", AT_LIST_INT, 1, 0, {0}, NULL},
      {"dilations", AT_LIST_INT, 0, 4, {1, 1, 1, 1}, NULL},
      {"groups", AT_INT, 0, 1, {1}, NULL},
      NCHW_ATTR,
      {"offset_x", AT_INT, 0, 1, {0}, NULL}}},
    {"MaxPool",
     1,
     1,
     IR_OP_MAXPOOL,
     build_pool,
     {{"ksize", AT_LIST_INT, 1, 0, {0}, NULL},
      {"strides", AT_LIST_INT, 1, 0, {0}, NULL},
      {"padding", AT_STRING, 1, 0, {0}, NULL},
      NCHW_ATTR}},
    {"AvgPool",
     1,
     1,
     IR_OP_AVGPOOL,
     build_pool,
     {{"ksize", AT_LIST_INT, 1, 0, {0}, NULL},
      {"strides", AT_LIST_INT, 1, 0, {0}, NULL},
      {"padding", AT_STRING, 1, 0, {0}, NULL},
      NCHW_ATTR}},
};
#undef BOOL_ATTR
#undef NCHW_ATTR
enum { NOPS = sizeof ops / sizeof *ops };

static status build_simple(ir_graph *g, const desc *o, ir_value **in, ir_value **out, diag *d) {
  return (*out = node1(g, o->spec->op, o->nin, in)) ? ST_OK : nomem(d);
}

/* --- checking a description ---------------------------------------------- */

typedef struct reader {
  const char *path;
  arena *a;
  diag *d;
} reader;

static status wrong(const desc *o, const char *field, const json_value *v, const char *expected, diag *d) {
  return diag_set(d, ST_ERR_INVALID, "%s: %s (line %d): expected %s, got %s", o->where, field, v->line,
                  expected, json_type_name(v->type));
}

static status read_tensor(const desc *o, const char *list, int k, const json_value *v, tensor *t, diag *d) {
  char field[96];
  snprintf(field, sizeof field, "%s[%d]", list, k);
  if (v->type != JSON_OBJECT) return wrong(o, field, v, "an object (format, shape, type)", d);
  memset(t, 0, sizeof *t);
  for (int i = 0; i < v->n; i++) {
    static const char *const known[] = {"format",      "shape",         "type",        "name",
                                        "shape_range", "origin_format", "origin_shape"};
    int ok = 0;
    for (size_t j = 0; j < sizeof known / sizeof *known; j++)
      ok |= !strcmp(v->keys[i], known[j]);
    if (!ok)
      return diag_set(d, ST_ERR_UNSUPPORTED,
                      "%s: %s.%s: a field this atc does not take (format, shape, type, "
                      "name, shape_range, origin_format, origin_shape)",
                      o->where, field, v->keys[i]);
  }
  const json_value *f = json_get(v, "format"), *s = json_get(v, "shape"), *ty = json_get(v, "type");
  const json_value *nm = json_get(v, "name"), *sr = json_get(v, "shape_range");
  if (!f || !s || !ty)
    return diag_set(d, ST_ERR_INVALID, "%s: %s.%s: missing (format, shape and type are required)", o->where,
                    field,
                    !f   ? "format"
                    : !s ? "shape"
                         : "type");
  if (ty->type != JSON_STRING) return wrong(o, "type", ty, "a dtype name", d);
  t->dt = -1;
  for (int i = 0; i < NDTYPES; i++)
    if (!strcmp(ty->string, dtypes[i].name)) t->dt = i;
  if (t->dt < 0)
    return diag_set(d, ST_ERR_UNSUPPORTED,
                    "%s: %s.type: '%s' (expected float16, float, int8, uint8, int16, "
                    "uint16, int32, uint32, int64, uint64, double or bool)",
                    o->where, field, ty->string);
  if (f->type != JSON_STRING) return wrong(o, "format", f, "a format name", d);
  t->format = -1;
  for (int i = 0; i < 3; i++)
    if (!strcmp(f->string, formats[i])) t->format = i;
  for (size_t i = 0; t->format < 0 && i < sizeof chip_formats / sizeof *chip_formats; i++)
    if (!strcmp(f->string, chip_formats[i]))
      return diag_set(d, ST_ERR_UNSUPPORTED,
                      "%s: %s.format: %s is not supported by this atc (ND, NCHW or NHWC)", o->where, field,
                      f->string);
  if (t->format < 0)
    return diag_set(d, ST_ERR_INVALID, "%s: %s.format: unknown format '%s' (expected ND, NCHW or NHWC)",
                    o->where, field, f->string);
  if (s->type != JSON_ARRAY) return wrong(o, "shape", s, "an array of dims", d);
  if (s->n > MAX_RANK)
    return diag_set(d, ST_ERR_LIMIT, "%s: %s.shape: rank %d above %d", o->where, field, s->n, MAX_RANK);
  t->rank = s->n;
  for (int i = 0; i < s->n; i++) {
    const json_value *e = s->items[i];
    if (e->type != JSON_NUMBER || !e->is_int)
      return diag_set(d, ST_ERR_INVALID, "%s: %s.shape[%d]: expected an integer dim, got %s", o->where, field,
                      i, json_type_name(e->type));
    if (e->integer < 0)
      return diag_set(d, ST_ERR_UNSUPPORTED,
                      "%s: %s.shape[%d]: %lld: dynamic shapes (-1, -2, shape_range) are "
                      "not supported by this atc; give every dim",
                      o->where, field, i, (long long)e->integer);
    if (e->integer > (1ll << 31))
      return diag_set(d, ST_ERR_LIMIT, "%s: %s.shape[%d]: %lld is too large", o->where, field, i,
                      (long long)e->integer);
    t->dims[i] = e->integer;
  }
  if (sr && (sr->type != JSON_ARRAY || sr->n))
    return diag_set(d, ST_ERR_UNSUPPORTED, "%s: %s.shape_range: dynamic shapes are not supported by this atc",
                    o->where, field);
  if (nm && nm->type != JSON_STRING) return wrong(o, "name", nm, "a string", d);
  t->name = nm ? nm->string : NULL;
  return ST_OK;
}

static status read_attr(desc *o, int k, const json_value *v, diag *d) {
  char field[64];
  snprintf(field, sizeof field, "attr[%d]", k);
  if (v->type != JSON_OBJECT) return wrong(o, field, v, "an object (name, type, value)", d);
  const json_value *nm = json_get(v, "name"), *ty = json_get(v, "type"), *val = json_get(v, "value");
  if (!nm || !ty || !val)
    return diag_set(d, ST_ERR_INVALID, "%s: %s.%s: missing (name, type and value are required)", o->where,
                    field,
                    !nm   ? "name"
                    : !ty ? "type"
                          : "value");
  if (nm->type != JSON_STRING || ty->type != JSON_STRING)
    return wrong(o, field, nm->type != JSON_STRING ? nm : ty, "a string", d);
  attr_val *a = NULL;
  for (int i = 0; i < o->nattrs; i++)
    if (!strcmp(o->attrs[i].spec->name, nm->string)) a = &o->attrs[i];
  if (!a) {
    char names[256] = "";
    for (int i = 0, len = 0; i < o->nattrs; i++)
      len += snprintf(names + len, sizeof names - (size_t)len, "%s%s", i ? ", " : "", o->attrs[i].spec->name);
    return diag_set(d, ST_ERR_INVALID, "%s: attr '%s': %s has no such attribute (it takes: %s)", o->where,
                    nm->string, o->op_type, o->nattrs ? names : "none");
  }
  if (a->set) return diag_set(d, ST_ERR_INVALID, "%s: attr '%s' given twice", o->where, nm->string);
  const attr_spec *sp = a->spec;
  /* Cast's dst_type: ATC's files write it "int"; "data_type" too. */
  int type_ok =
      !strcmp(ty->string, at_names[sp->type]) || (sp->type == AT_INT && !strcmp(ty->string, "data_type"));
  if (!type_ok)
    return diag_set(d, ST_ERR_INVALID, "%s: attr '%s'.type: '%s', expected %s", o->where, nm->string,
                    ty->string, at_names[sp->type]);
  int list = sp->type == AT_LIST_INT || sp->type == AT_LIST_FLOAT;
  if (list ? val->type != JSON_ARRAY : val->type == JSON_ARRAY)
    return diag_set(d, ST_ERR_INVALID, "%s: attr '%s'.value: expected %s, got %s", o->where, nm->string,
                    list ? "a list" : "one value", json_type_name(val->type));
  if (list && val->n > MAX_LIST)
    return diag_set(d, ST_ERR_LIMIT, "%s: attr '%s'.value: more than %d values", o->where, nm->string,
                    MAX_LIST);
  a->n = list ? val->n : 1;
  for (int i = 0; i < a->n; i++) {
    const json_value *e = list ? val->items[i] : val;
    int ok = sp->type == AT_BOOL                                 ? e->type == JSON_BOOL
             : sp->type == AT_STRING                             ? e->type == JSON_STRING
             : sp->type == AT_FLOAT || sp->type == AT_LIST_FLOAT ? e->type == JSON_NUMBER
                                                                 : e->type == JSON_NUMBER && e->is_int;
    if (!ok)
      return diag_set(d, ST_ERR_INVALID, "%s: attr '%s'.value%s: expected %s, got %s", o->where, nm->string,
                      list ? "[i]" : "",
                      sp->type == AT_BOOL                                 ? "true or false"
                      : sp->type == AT_STRING                             ? "a string"
                      : sp->type == AT_FLOAT || sp->type == AT_LIST_FLOAT ? "a number"
                                                                          : "an integer",
                      json_type_name(e->type));
    a->v[i] = e->type == JSON_BOOL     ? e->boolean
              : e->type == JSON_NUMBER ? (e->is_int ? (double)e->integer : e->number)
                                       : 0;
    if (e->type == JSON_STRING) a->s = e->string;
  }
  a->set = 1;
  return ST_OK;
}

/* ATC's default file name: INDEX_OP, then DTYPE_FORMAT_DIMS of each input
 * and output. */
static const char *default_name(const desc *o, arena *a) {
  char buf[1024];
  int len = snprintf(buf, sizeof buf, "%d_%s", o->index, o->op_type);
  for (int i = 0; i < o->nin + o->nout && len < (int)sizeof buf; i++) {
    const tensor *t = i < o->nin ? &o->in[i] : &o->out[i - o->nin];
    len += snprintf(buf + len, sizeof buf - (size_t)len, "_%d_%d", dtypes[t->dt].acl, t->format);
    for (int k = 0; k < t->rank && len < (int)sizeof buf; k++)
      len += snprintf(buf + len, sizeof buf - (size_t)len, "_%lld", (long long)t->dims[k]);
  }
  return len < (int)sizeof buf ? arena_strdup(a, buf) : NULL;
}

static status read_desc(reader *r, int index, const json_value *v, desc *o) {
  diag *d = r->d;
  memset(o, 0, sizeof *o);
  o->index = index;
  char where[512];
  const json_value *op = json_get(v, "op");
  snprintf(where, sizeof where, "%s: op %d (%s)", r->path, index,
           op && op->type == JSON_STRING ? op->string : "?");
  if (!(o->where = arena_strdup(r->a, where))) return nomem(d);
  if (v->type != JSON_OBJECT)
    return wrong(o, "the description", v, "an object (op, input_desc, output_desc, attr)", d);
  for (int i = 0; i < v->n; i++) {
    static const char *const known[] = {"op", "name", "input_desc", "output_desc", "attr", "compile_flag"};
    int ok = 0;
    for (size_t j = 0; j < sizeof known / sizeof *known; j++)
      ok |= !strcmp(v->keys[i], known[j]);
    if (!ok)
      return diag_set(d, ST_ERR_INVALID,
                      "%s: %s: unknown field (expected op, name, input_desc, output_desc, attr "
                      "or compile_flag)",
                      o->where, v->keys[i]);
  }
  if (!op) return diag_set(d, ST_ERR_INVALID, "%s: op: missing (the operator type is required)", o->where);
  if (op->type != JSON_STRING) return wrong(o, "op", op, "an operator type", d);
  o->op_type = op->string;
  for (int i = 0; i < NOPS && !o->spec; i++)
    if (!strcmp(ops[i].type, o->op_type)) o->spec = &ops[i];
  if (!o->spec) {
    char names[1024] = "";
    for (int i = 0, len = 0; i < NOPS; i++)
      len += snprintf(names + len, sizeof names - (size_t)len, "%s%s", i ? ", " : "", ops[i].type);
    return diag_set(d, ST_ERR_UNSUPPORTED, "%s: op: '%s' is not an operator this atc compiles (%s)", o->where,
                    o->op_type, names);
  }
  const json_value *cf = json_get(v, "compile_flag");
  if (cf && !(cf->type == JSON_NUMBER && cf->is_int && cf->integer == 0))
    return diag_set(d, ST_ERR_UNSUPPORTED, "%s: compile_flag: only 0 (precise build) is supported", o->where);
  const json_value *lists[2] = {json_get(v, "input_desc"), json_get(v, "output_desc")};
  for (int l = 0; l < 2; l++) {
    const char *lname = l ? "output_desc" : "input_desc";
    const json_value *lv = lists[l];
    if (!lv) return diag_set(d, ST_ERR_INVALID, "%s: %s: missing (it is required)", o->where, lname);
    if (lv->type != JSON_ARRAY) return wrong(o, lname, lv, "an array of tensor descriptions", d);
    int lo = l ? 1 : o->spec->min_in, hi = l ? 1 : o->spec->max_in;
    if (lv->n < lo || lv->n > hi)
      return diag_set(d, ST_ERR_INVALID, "%s: %s: %d tensors; %s takes %d%s%d", o->where, lname, lv->n,
                      o->op_type, lo, lo == hi ? "" : " to ", lo == hi ? -1 : hi);
    for (int k = 0; k < lv->n; k++) {
      status st = read_tensor(o, lname, k, lv->items[k], l ? &o->out[k] : &o->in[k], d);
      if (st) return st;
    }
    *(l ? &o->nout : &o->nin) = lv->n;
  }
  for (int i = 0; i < 6 && o->spec->attrs[i].name; i++)
    o->attrs[o->nattrs++].spec = &o->spec->attrs[i];
  const json_value *at = json_get(v, "attr");
  if (at && at->type != JSON_ARRAY) return wrong(o, "attr", at, "an array of attributes", d);
  for (int k = 0; at && k < at->n; k++) {
    status st = read_attr(o, k, at->items[k], d);
    if (st) return st;
  }
  for (int i = 0; i < o->nattrs; i++) {
    attr_val *a = &o->attrs[i];
    if (a->set) continue;
    if (a->spec->required)
      return diag_set(d, ST_ERR_INVALID, "%s: attr '%s': missing (%s requires it)", o->where, a->spec->name,
                      o->op_type);
    a->n = a->spec->n;
    a->s = a->spec->sdef;
    for (int k = 0; k < a->n; k++)
      a->v[k] = a->spec->def[k];
  }
  const json_value *nm = json_get(v, "name");
  if (nm && (nm->type != JSON_STRING || !*nm->string || strchr(nm->string, '/') || !strcmp(nm->string, ".") ||
             !strcmp(nm->string, "..")))
    return diag_set(d, ST_ERR_INVALID, "%s: name: expected a file name (no '/'), got %s", o->where,
                    nm->type == JSON_STRING ? nm->string : json_type_name(nm->type));
  o->name = nm ? nm->string : default_name(o, r->a);
  return o->name ? ST_OK
                 : diag_set(d, ST_ERR_LIMIT, "%s: the default om name is too long: give a name", o->where);
}

/* --- the record -------------------------------------------------------------- */

static int put(char *buf, int len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int put(char *buf, int len, const char *fmt, ...) {
  if (len < 0 || len >= RECORD_BYTES) return RECORD_BYTES;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf + len, RECORD_BYTES - (size_t)len, fmt, ap);
  va_end(ap);
  return n < 0 ? RECORD_BYTES : len + n;
}

static status make_record(desc *o, arena *a, diag *d) {
  char *buf = arena_alloc(a, RECORD_BYTES);
  if (!buf) return nomem(d);
  int len = put(buf, 0, "op %s\n", o->op_type);
  for (int i = 0; i < o->nin + o->nout; i++) {
    const tensor *t = i < o->nin ? &o->in[i] : &o->out[i - o->nin];
    len =
        put(buf, len, "%s %d %d %d", i < o->nin ? "input" : "output", dtypes[t->dt].acl, t->format, t->rank);
    for (int k = 0; k < t->rank; k++)
      len = put(buf, len, " %lld", (long long)t->dims[k]);
    len = put(buf, len, "\n");
  }
  for (int i = 0; i < o->nattrs; i++) {
    const attr_val *v = &o->attrs[i];
    attr_type t = v->spec->type;
    len = put(buf, len, "attr %c %s %s", v->set ? 's' : 'd', at_names[t], v->spec->name);
    for (int k = 0; k < v->n; k++)
      if (t == AT_FLOAT || t == AT_LIST_FLOAT)
        len = put(buf, len, " %.9g", (float)v->v[k]);
      else if (t == AT_STRING && (len = put(buf, len, " ")) < RECORD_BYTES)
        for (const char *s = v->s; *s; s++)
          len = put(buf, len, (unsigned char)*s <= ' ' || *s == '%' || *s == 127 ? "%%%02X" : "%c",
                    (unsigned char)*s);
      else
        len = put(buf, len, " %lld", (long long)v->v[k]);
    len = put(buf, len, "\n");
  }
  if (len >= RECORD_BYTES) return diag_set(d, ST_ERR_LIMIT, "%s: the description is too large", o->where);
  o->record = buf;
  return ST_OK;
}

/* --- the graph --------------------------------------------------------------- */

static status build_graph(const desc *o, ir_graph **g_out, diag *d) {
  ir_graph *g = ir_graph_new(o->name, 64u << 20);
  *g_out = g;
  if (!g) return nomem(d);
  ir_value *in[MAX_IO], *out = NULL;
  for (int i = 0; i < o->nin; i++) {
    char name[32];
    snprintf(name, sizeof name, "x%d", i);
    in[i] = ir_value_new(g, name, dtypes[o->in[i].dt].dt);
    if (!in[i] || ir_graph_add_input(g, in[i])) return nomem(d);
    ir_value_set_shape(in[i], o->in[i].rank, o->in[i].dims);
  }
  status st = o->spec->build(g, o, in, &out, d);
  for (int i = 0; st == ST_OK && i < g->nnodes; i++)
    st = ir_shape_infer_node(g, g->nodes[i], NULL, d);
  if (st) {
    if (!strstr(d->msg, o->where)) diag_prefix(d, "%s", o->where);
    return st;
  }
  if (!(out->name = arena_strdup(&g->arena, "y")) || ir_graph_add_output(g, out)) return nomem(d);
  const tensor *t = &o->out[0];
  int same = out->rank == t->rank;
  for (int k = 0; same && k < t->rank; k++)
    same = out->dims[k] == t->dims[k];
  if (!same) {
    char want[256];
    snprintf(want, sizeof want, "%s", ir_dims_str(t->rank, t->dims));
    return diag_set(d, ST_ERR_INVALID, "%s: output_desc[0].shape: %s, but %s of these inputs gives %s",
                    o->where, want, o->op_type, ir_dims_str(out->rank, out->dims));
  }
  if (out->dtype != dtypes[t->dt].dt)
    return diag_set(d, ST_ERR_INVALID, "%s: output_desc[0].type: %s, but %s of these inputs gives %s",
                    o->where, dtypes[t->dt].name, o->op_type, dtype_name(out->dtype));
  return ST_OK;
}

static status graph_of(void *user, ir_graph **g_out, diag *d) { return build_graph(user, g_out, d); }

/* --- the file ---------------------------------------------------------------- */

status atc_singleop(const char *json_path, const char *out_dir, const atc_options *base,
                    atc_singleop_written on_written, void *user, diag *d) {
  arena a;
  arena_init(&a, 64u << 20);
  char *text;
  json_value *root;
  reader r = {json_path, &a, d};
  status st = json_read_file(json_path, "--singleop", MAX_FILE_BYTES, &a, &text, d);
  if (st == ST_OK) st = json_parse(text, json_path, &a, &root, d);
  if (st == ST_OK && root->type != JSON_ARRAY)
    st = diag_set(d, ST_ERR_INVALID, "%s:%d: expected an array of operator descriptions, got %s", json_path,
                  root->line, json_type_name(root->type));
  if (st == ST_OK && root->n == 0)
    st = diag_set(d, ST_ERR_INVALID, "%s: no operator descriptions", json_path);
  desc *descs = st == ST_OK ? arena_array(&a, (size_t)root->n, sizeof *descs) : NULL;
  if (st == ST_OK && !descs) st = nomem(d);
  /* Check and build every description first: a bad file writes nothing. */
  for (int i = 0; st == ST_OK && i < root->n; i++) {
    ir_graph *g = NULL;
    st = read_desc(&r, i, root->items[i], &descs[i]);
    if (st == ST_OK) st = make_record(&descs[i], &a, d);
    if (st == ST_OK) st = build_graph(&descs[i], &g, d);
    ir_graph_free(g);
    for (int k = 0; st == ST_OK && k < i; k++)
      if (!strcmp(descs[k].name, descs[i].name))
        st = diag_set(d, ST_ERR_INVALID, "%s: name: '%s' is also op %d's om name", descs[i].where,
                      descs[i].name, k);
  }
  for (int i = 0; st == ST_OK && i < root->n; i++) {
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/%s.om", out_dir, descs[i].name);
    if (n < 0 || n >= (int)sizeof path) {
      st = diag_set(d, ST_ERR_LIMIT, "%s: the om path is too long", descs[i].where);
      break;
    }
    atc_options opt = *base;
    opt.model_path = descs[i].where;
    opt.model_data = NULL;
    opt.output_path = path;
    opt.build_graph = graph_of;
    opt.build_user = &descs[i];
    opt.singleop = descs[i].record;
    atc_result res;
    st = atc_compile(&opt, &res, d);
    if (st == ST_OK && on_written) on_written(user, path, &res);
  }
  arena_free(&a);
  return st;
}
