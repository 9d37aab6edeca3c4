/* onnx_decomp.c - the IR builder decompositions use (frontend/onnx_decomp.h).
 *
 * A thin layer over ir_node_new / ir_value_new / ir_const_new that names what
 * it makes after the ONNX node, sets each temporary's dtype, keeps the first
 * failure (so decompositions are straight-line code), and wires results to the
 * ONNX node's outputs. It knows no op's semantics beyond the attributes its
 * helpers set, which are those of the IR contract in ir/ops.def.
 */
#include "frontend/onnx_decomp.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/elem.h"

void dc_begin(dc *b, onnx_node *nd) {
  memset(b, 0, sizeof *b);
  b->nd = nd;
  b->g = nd->c->g;
  b->base = nd->np->name && *nd->np->name ? nd->np->name : NULL;
  for (int k = 0; !b->base && k < nd->nout;
       k++) /* else the first named output's (the importer checked one is) */
    if (nd->out[k]) b->base = nd->out[k]->name;
  b->first_node = b->inferred = b->g->nnodes;
}

void dc_infer(dc *b) {
  if (b->st || b->inferred >= b->g->nnodes) return;
  b->st = onnx_infer_nodes(b->nd->c, b->inferred);
  b->inferred = b->g->nnodes;
}

ir_value *dc_fail(dc *b, status code, const char *fmt, ...) {
  if (b->st) return NULL;
  char msg[640];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  b->st = onnx_node_fail(b->nd, code, "%s", msg);
  return NULL;
}

status dc_refuse(dc *b, status code, const char *fmt, ...) {
  char msg[640];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  dc_fail(b, code, "%s", msg);
  return b->st;
}

static ir_value *nomem(dc *b) { return dc_fail(b, ST_ERR_NOMEM, "out of memory building the decomposition"); }

static void wire(dc *b, int k, ir_value *v);

status dc_end(dc *b) {
  onnx_ctx *c = b->nd->c;
  for (int k = 0; !b->st && k < b->nd->nout && k < DC_MAX_OUTPUTS; k++) {
    const onnx_seq *q = b->result[k] ? onnx_seq_of(c, b->result[k]) : NULL;
    if (q) /* a sequence (onnx_seq.c): the output names the same list */
      b->st = onnx_seq_set(c, b->nd->out[k], q->n, q->items);
    else if (b->result[k])
      wire(b, k, b->result[k]);
  }
  for (int k = 0; !b->st && k < b->nd->nout; k++) {
    ir_value *v = b->nd->out[k];
    if (v && !v->producer && b->nd->uses[k] > 0 && !onnx_seq_of(c, v))
      dc_fail(b, ST_ERR_UNSUPPORTED, "output %d '%s' is used, but this decomposition does not produce it", k,
              v->name);
  }
  return b->st;
}

/* --- inputs and attributes */

ir_value *dc_in(dc *b, int i) { return i < b->nd->nin ? b->nd->in[i] : NULL; }

int dc_has_attr(dc *b, const char *name) { return onnx_attr(b->nd, name) != NULL; }

int64_t dc_attr_int(dc *b, const char *name, int64_t def) { return onnx_attr_int(b->nd, name, def); }

double dc_attr_float(dc *b, const char *name, double def) { return onnx_attr_float(b->nd, name, def); }

int dc_attr_string_is(dc *b, const char *name, const char *def, const char *s) {
  return onnx_attr_string_is(b->nd, name, def, s);
}

int dc_attr_ints(dc *b, const char *name, int64_t *out, int max) {
  int n = onnx_attr_ints_copy(b->nd, name, out, max);
  if (n > max) {
    dc_fail(b, ST_ERR_LIMIT, "attribute '%s' has %d values, more than the limit of %d", name, n, max);
    return -1;
  }
  return n;
}

dtype dc_dtype(dc *b, const ir_value *v) {
  if (!b->st && v && v->dtype == DT_UNDEFINED)
    dc_fail(b, ST_ERR_UNSUPPORTED, "the data type of '%s' could not be inferred at import", v->name);
  return v ? v->dtype : DT_UNDEFINED;
}

int dc_output_used(dc *b, int k) { return k < b->nd->nout && b->nd->out[k] && b->nd->uses[k] > 0; }

/* --- names */

static const char *next_name(dc *b, const char *tag, char *buf, size_t size) {
  snprintf(buf, size, "%.200s/%s%d", b->base, tag, b->count++);
  return buf;
}

/* --- constants */

ir_value *dc_const(dc *b, dtype dt, int rank, const int64_t *dims, const void *data) {
  if (b->st) return NULL;
  int64_t n = 1;
  for (int i = 0; i < rank; i++)
    n *= dims[i];
  char name[256];
  ir_value *v = ir_const_new(b->g, next_name(b, "c", name, sizeof name), dt, rank, dims, data,
                             (size_t)n * dtype_size(dt));
  return v ? v : nomem(b);
}

ir_value *dc_scalar(dc *b, dtype dt, double v) {
  uint8_t buf[8] = {0};
  if (!dtype_size(dt)) return dc_fail(b, ST_ERR_UNSUPPORTED, "a constant of data type %d", (int)dt);
  elem_put(buf, dt, 0, v);
  return dc_const(b, dt, 0, NULL, buf);
}

ir_value *dc_ints(dc *b, int n, const int64_t *v) {
  int64_t dim = n;
  return dc_const(b, DT_INT64, 1, &dim, v);
}

/* --- nodes */

/* A node named node_name (the temporary's name when NULL) with nout fresh outputs. */
static ir_node *make_node(dc *b, ir_op op, const char *node_name, int nin, ir_value *const *in, int nout) {
  if (b->st) return NULL;
  for (int i = 0; i < nin; i++)
    assert((in[i] || i >= ir_ops[op].min_in) && "a required input is missing");
  assert(nout >= 1 && nout <= ir_ops[op].max_out);
  char name[256], oname[300];
  next_name(b, ir_ops[op].name, name, sizeof name);
  ir_value **out = arena_array(&b->nd->c->scratch, (size_t)nout, sizeof *out);
  if (!out) {
    nomem(b);
    return NULL;
  }
  for (int k = 0; k < nout; k++) {
    if (k) snprintf(oname, sizeof oname, "%s_out%d", name, k);
    if (!(out[k] = ir_value_new(b->g, k ? oname : name, DT_UNDEFINED))) {
      nomem(b);
      return NULL;
    }
  }
  ir_node *n = ir_node_new(b->g, op, node_name ? node_name : name, nin, in, nout, out);
  if (!n)
    nomem(b);
  else
    n->origin = b->g->nodes[b->first_node]->origin; /* one ONNX op, however many nodes */
  return n;
}

ir_node *dc_node(dc *b, ir_op op, int nin, ir_value *const *in) { return make_node(b, op, NULL, nin, in, 1); }

ir_node *dc_node_outs(dc *b, ir_op op, int nin, ir_value *const *in, int nout) {
  ir_node *n = make_node(b, op, NULL, nin, in, nout);
  for (int k = 0; n && k < nout; k++)
    n->out[k]->dtype = onnx_result_dtype(n);
  return n;
}

ir_node *dc_node_whole(dc *b, ir_op op, int nin, ir_value *const *in) {
  const char *own = b->nd->np->name && *b->nd->np->name ? b->nd->np->name : NULL;
  return make_node(b, op, own, nin, in, 1);
}

ir_value *dc_val(dc *b, ir_node *n) {
  if (b->st || !n) return NULL;
  n->out[0]->dtype = onnx_result_dtype(n);
  return n->out[0];
}

void dc_keep_dtype(dc *b) {
  for (int i = b->first_node; !b->st && i < b->g->nnodes; i++)
    dc_set_string(b, b->g->nodes[i], "precision", "fp32");
}

void dc_set_int(dc *b, ir_node *n, const char *name, int64_t v) {
  if (!b->st && ir_attr_set_int(b->g, n, name, v)) nomem(b);
}

void dc_set_float(dc *b, ir_node *n, const char *name, double v) {
  if (!b->st && ir_attr_set_float(b->g, n, name, v)) nomem(b);
}

void dc_set_string(dc *b, ir_node *n, const char *name, const char *v) {
  if (!b->st && ir_attr_set_string(b->g, n, name, v)) nomem(b);
}

void dc_set_ints(dc *b, ir_node *n, const char *name, int count, const int64_t *v) {
  if (!b->st && ir_attr_set_ints(b->g, n, name, count, v)) nomem(b);
}

ir_value *dc_op1(dc *b, ir_op op, ir_value *x) { return dc_val(b, dc_node(b, op, 1, &x)); }

ir_value *dc_op2(dc *b, ir_op op, ir_value *x, ir_value *y) {
  ir_value *in[2] = {x, y};
  return dc_val(b, dc_node(b, op, 2, in));
}

ir_value *dc_where(dc *b, ir_value *cond, ir_value *x, ir_value *y) {
  ir_value *in[3] = {cond, x, y};
  return dc_val(b, dc_node(b, IR_OP_WHERE, 3, in));
}

ir_value *dc_cast(dc *b, ir_value *x, dtype to) {
  if (b->st) return NULL;
  if (x->dtype == to) return x;
  ir_node *n = dc_node(b, IR_OP_CAST, 1, &x);
  dc_set_int(b, n, "to", to);
  return dc_val(b, n);
}

ir_value *dc_clip(dc *b, ir_value *x, double lo, double hi) {
  ir_node *n = dc_node(b, IR_OP_CLIP, 1, &x);
  dc_set_float(b, n, "min", lo);
  dc_set_float(b, n, "max", hi);
  return dc_val(b, n);
}

ir_value *dc_reduce(dc *b, const char *mode, ir_value *x, int count, const int64_t *axes, int keepdims) {
  ir_node *n = dc_node(b, IR_OP_REDUCE, 1, &x);
  dc_set_string(b, n, "mode", mode);
  dc_set_int(b, n, "keepdims", keepdims);
  dc_set_int(b, n, "noop", 0);
  if (count > 0) dc_set_ints(b, n, "axes", count, axes);
  return dc_val(b, n);
}

ir_value *dc_argmax(dc *b, ir_value *x, int64_t axis, int keepdims) {
  ir_node *n = dc_node(b, IR_OP_REDUCE, 1, &x);
  dc_set_string(b, n, "mode", "argmax");
  dc_set_ints(b, n, "axes", 1, &axis);
  dc_set_int(b, n, "keepdims", keepdims);
  dc_set_int(b, n, "noop", 0);
  dc_set_int(b, n, "select_last_index", 0);
  return dc_val(b, n);
}

ir_value *dc_reshape(dc *b, ir_value *x, ir_value *shape) {
  ir_value *in[2] = {x, shape};
  ir_node *n = dc_node(b, IR_OP_RESHAPE, 2, in);
  dc_set_int(b, n, "allowzero", 0);
  return dc_val(b, n);
}

ir_value *dc_matmul(dc *b, ir_value *x, ir_value *y) {
  dtype dt = dc_dtype(b, x);
  if (b->st) return NULL;
  if (dt == DT_FLOAT32 || dt == DT_FLOAT16) return dc_op2(b, IR_OP_MATMUL, x, y);
  const int64_t after_k = -1, before_k = -3, k = -2;
  ir_value *prod = dc_op2(b, IR_OP_MUL, dc_unsqueeze(b, x, 1, &after_k), dc_unsqueeze(b, y, 1, &before_k));
  return dc_reduce(b, "sum", prod, 1, &k, 0);
}

ir_value *dc_reshape_to(dc *b, ir_value *x, int rank, const int64_t *dims) {
  return dc_reshape(b, x, dc_ints(b, rank, dims));
}

static ir_value *axes_op(dc *b, ir_op op, ir_value *x, const char *attr, int count, const int64_t *v) {
  ir_node *n = dc_node(b, op, 1, &x);
  dc_set_ints(b, n, attr, count, v);
  return dc_val(b, n);
}

ir_value *dc_unsqueeze(dc *b, ir_value *x, int count, const int64_t *axes) {
  return axes_op(b, IR_OP_UNSQUEEZE, x, "axes", count, axes);
}

ir_value *dc_squeeze(dc *b, ir_value *x, int count, const int64_t *axes) {
  return axes_op(b, IR_OP_SQUEEZE, x, "axes", count, axes);
}

ir_value *dc_transpose(dc *b, ir_value *x, int count, const int64_t *perm) {
  return axes_op(b, IR_OP_TRANSPOSE, x, "perm", count, perm);
}

ir_value *dc_softmax(dc *b, ir_value *x, int64_t axis, int log) {
  ir_node *n = dc_node(b, IR_OP_SOFTMAX, 1, &x);
  dc_set_int(b, n, "axis", axis);
  dc_set_int(b, n, "coerce_2d", 0);
  dc_set_int(b, n, "log", log);
  return dc_val(b, n);
}

ir_value *dc_concat(dc *b, int64_t axis, int count, ir_value *const *in) {
  ir_node *n = dc_node(b, IR_OP_CONCAT, count, in);
  dc_set_int(b, n, "axis", axis);
  return dc_val(b, n);
}

ir_value *dc_slice(dc *b, ir_value *x, int count, const int64_t *starts, const int64_t *ends,
                   const int64_t *axes) {
  return dc_slice_steps(b, x, count, starts, ends, axes, NULL);
}

ir_value *dc_slice_steps(dc *b, ir_value *x, int count, const int64_t *starts, const int64_t *ends,
                         const int64_t *axes, const int64_t *steps) {
  ir_node *n = dc_node(b, IR_OP_SLICE, 1, &x);
  dc_set_ints(b, n, "starts", count, starts);
  dc_set_ints(b, n, "ends", count, ends);
  dc_set_ints(b, n, "axes", count, axes);
  if (steps) dc_set_ints(b, n, "steps", count, steps);
  return dc_val(b, n);
}

ir_value *dc_gather(dc *b, ir_value *x, ir_value *indices, int64_t axis) {
  ir_value *in[2] = {x, indices};
  ir_node *n = dc_node(b, IR_OP_GATHER, 2, in);
  dc_set_int(b, n, "axis", axis);
  return dc_val(b, n);
}

ir_value *dc_gather_elements(dc *b, ir_value *x, ir_value *indices, int64_t axis) {
  ir_value *in[2] = {x, indices};
  ir_node *n = dc_node(b, IR_OP_GATHERELEMENTS, 2, in);
  dc_set_int(b, n, "axis", axis);
  return dc_val(b, n);
}

ir_value *dc_expand(dc *b, ir_value *x, ir_value *shape) { return dc_op2(b, IR_OP_EXPAND, x, shape); }

ir_value *dc_pad(dc *b, ir_value *x, int rank, const int64_t *pads, double value) {
  ir_node *n = dc_node(b, IR_OP_PAD, 1, &x);
  dc_set_string(b, n, "mode", "constant");
  dc_set_ints(b, n, "pads", 2 * rank, pads);
  dc_set_float(b, n, "value", value);
  return dc_val(b, n);
}

ir_value *dc_iota(dc *b, dtype dt, ir_value *n) {
  if (b->st) return NULL;
  ir_value *in[3] = {dc_scalar(b, dt, 0), n, dc_scalar(b, dt, 1)};
  return dc_val(b, dc_node(b, IR_OP_RANGE, 3, in));
}

ir_value *dc_shape(dc *b, ir_value *x) { return dc_op1(b, IR_OP_SHAPE, x); }

/* --- outputs */

/* Whether this builder made node n. */
static int own_node(dc *b, const ir_node *n) {
  for (int i = b->first_node; n && i < b->g->nnodes; i++)
    if (b->g->nodes[i] == n) return 1;
  return 0;
}

static int is_onnx_output(dc *b, const ir_value *v) {
  for (int k = 0; k < b->nd->nout; k++)
    if (b->nd->out[k] == v) return 1;
  return 0;
}

void dc_output(dc *b, int k, ir_value *v) {
  if (b->st || k >= b->nd->nout || !b->nd->out[k]) return;
  assert(v && "dc_output of no value");
  if (k >= DC_MAX_OUTPUTS) {
    dc_fail(b, ST_ERR_LIMIT, "output %d is past the %d a decomposition produces", k, DC_MAX_OUTPUTS);
    return;
  }
  b->result[k] = v;
}

/* Output k becomes v (see dc_output). */
static void wire(dc *b, int k, ir_value *v) {
  ir_value *out = b->nd->out[k];
  ir_node *p = v->producer;
  if (!own_node(b, p) || is_onnx_output(b, v) || v->input_index >= 0 || v->data) {
    ir_node *n = dc_node(b, IR_OP_IDENTITY, 1, &v);
    if (!n) return;
    p = n;
    v = n->out[0];
    v->dtype = onnx_result_dtype(n);
  }
  /* p produces out instead of v; this builder's nodes read out instead of v. */
  for (int i = 0; i < p->nout; i++)
    if (p->out[i] == v) p->out[i] = out;
  out->producer = p;
  out->dtype = v->dtype;
  v->producer = NULL;
  for (int i = b->first_node; i < b->g->nnodes; i++) {
    ir_node *n = b->g->nodes[i];
    for (int j = 0; j < n->nin; j++)
      if (n->in[j] == v) n->in[j] = out;
  }
  for (int j = k + 1; j < b->nd->nout && j < DC_MAX_OUTPUTS; j++)
    if (b->result[j] == v) b->result[j] = out;
}
