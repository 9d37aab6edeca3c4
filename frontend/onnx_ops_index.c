/* onnx_ops_index.c - the importers of the indexing ops (rows in onnx_ops.c's
 * table), normalising each into the IR contract of ir/ops.def:
 *   TopK            k from the attribute (opset 1) or the constant input 1
 *                   (opset 10+); a run-time k stays input 1 and the count
 *                   output is appended (ir/count.h); axis, largest, sorted explicit; the
 *                   indices output is i64 (and exists even when unnamed).
 *   Scatter, ScatterElements  -> ScatterElements{axis, reduction}.
 *   ScatterND       reduction explicit.
 *   TensorScatter   axis (default -2) and mode explicit.
 *   CumSum, CumProd axis from the constant input 1; exclusive, reverse.
 *   GatherND        batch_dims explicit.
 *   OneHot          depth from the constant input 1 (any numeric dtype,
 *                   truncated as ONNX Runtime does); values becomes in[1].
 *   Compress        Gather of the positions of the condition's true entries
 *                   (after a Reshape to 1-D when there is no axis): a
 *                   constant, or for a run-time condition NonZero's
 *                   counted result reshaped to 1-D, which makes the output
 *                   counted along the axis (ir/count.h).
 *   NonZero         of a constant: Identity of the constant result; of a
 *                   run-time input: NonZero with its count output
 *                   appended (ir/count.h).
 *   NonMaxSuppression  the constant max_output_boxes_per_class as the attr
 *                   max_per_class (it bounds the counted output), the
 *                   thresholds as inputs 2 and 3, the count appended.
 *   TopK, Shape, Size, Concat of a counted value (ir/count.h)
 *                   TopK over the counted axis takes the count as input 2;
 *                   Shape and Size read the count at run time;
 *                   Concat along the counted axis packs the valid rows
 *                   (of one input: is that input);
 *                   Gather of such a Shape's static dims is a constant;
 *                   the shape arithmetic on the count (Slice ends,
 *                   Reshape, Expand, ConstantOfShape, Range) and NonZero
 *                   and ScatterElements of counted inputs are
 *                   onnx_counted.c's.
 *   Unique          sorted explicit, axis only when given; every one of the
 *                   four outputs gets a value (i64 but y), the count appended.
 *   TfIdfVectorizer the pool becomes the n-gram table (common/tfidf.h) of the
 *                   n-grams of min..max_gram_length items, a constant
 *                   input, and weights (when given) a constant f32 input;
 *                   mode, max_skip and outs (max(ngram_indexes) + 1) attrs.
 * The node and its IR node are as onnx_import_node made them: arity,
 * attribute kinds and names are already checked against the row.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "frontend/onnx_internal.h"
#include "common/elem.h"

static status nomem(onnx_node *nd) { return onnx_node_fail(nd, ST_ERR_NOMEM, "out of memory"); }

/* A one-element numeric constant input, truncated to an integer. */
static status int_scalar_in(onnx_node *nd, int i, const char *what, int64_t *out) {
  const ir_value *v = NULL;
  status s = onnx_const_input(nd, i, what, &v);
  if (s) return s;
  if (ir_value_elements(v) != 1 || v->dtype == DT_BOOL || !dtype_size(v->dtype))
    return onnx_node_fail(nd, ST_ERR_INVALID, "input %d '%s' (%s) must hold one number", i, v->name, what);
  double x = elem_get(v->data, v->dtype, 0);
  if (v->dtype == DT_INT64) {
    *out = *(const int64_t *)v->data;
  } else {
    if (!(x > -9.2e18 && x < 9.2e18))
      return onnx_node_fail(nd, ST_ERR_INVALID, "input %d '%s' (%s) = %g is out of range", i, v->name, what,
                            x);
    *out = (int64_t)x;
  }
  return ST_OK;
}

/* reduction (none, add, mul, max, min) made explicit. */
static status set_reduction(onnx_node *nd, ir_node *n) {
  static const char *const names[] = {"none", "add", "mul", "max", "min"};
  const Onnx__AttributeProto *a = onnx_attr(nd, "reduction");
  for (int i = 0; i < 5; i++)
    if (!a || (a->s.len == strlen(names[i]) && !memcmp(a->s.data, names[i], a->s.len)))
      return onnx_set_string(nd, n, "reduction", a ? names[i] : "none");
  return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'reduction' must be none, add, mul, max or min");
}

/* The count output of a counted op (ir/count.h), appended to n's outputs. */
static status add_count(onnx_node *nd, ir_node *n) {
  char name[300];
  snprintf(name, sizeof name, "%.280s_count", nd->out[0]->name);
  ir_value *c = ir_value_new(nd->c->g, name, DT_INT64);
  if (!c || ir_node_add_output(nd->c->g, n, c)) return nomem(nd);
  return ST_OK;
}

/* 1 when x is counted along TopK's axis (ir/count.h): x's count then
 * becomes input 2 (only the valid positions compete) and k input 1 (a
 * constant when it is one), so the outputs are counted by min(k, count). */
static int over_count(const onnx_node *nd) {
  const ir_value *x = nd->in[0];
  int64_t a = onnx_attr_int(nd, "axis", -1);
  return x->count_axis >= 0 && x->count && x->rank >= 1 && (a < 0 ? a + x->rank : a) == x->count_axis;
}

status onnx_import_topk(onnx_node *nd, ir_node *n) {
  int64_t k = onnx_attr_int(nd, "k", -1);
  status s = ST_OK;
  int run_time = nd->c->opset >= 10 && nd->nin > 1 && nd->in[1] && !nd->in[1]->data;
  if (run_time) { /* k stays in[1]; the outputs are counted (ir/count.h) */
    const ir_value *kv = nd->in[1];
    if ((kv->dtype != DT_INT64 && kv->dtype != DT_INT32) || ir_value_elements(kv) != 1)
      return onnx_node_fail(nd, ST_ERR_INVALID, "input 1 '%s' (k) must hold one i64", kv->name);
    k = 0;
  } else if (nd->c->opset >= 10) { /* the row refuses the attribute from opset 10 on */
    if ((s = int_scalar_in(nd, 1, "k", &k))) return s;
    n->nin = 1;
  } else if (nd->nin != 1 || !onnx_attr(nd, "k")) {
    return onnx_node_fail(nd, ST_ERR_INVALID, "before opset 10 TopK takes 1 input and a 'k' attribute");
  }
  if (k < 0) return onnx_node_fail(nd, ST_ERR_INVALID, "k = %" PRId64 " must be >= 0", k);
  if (nd->nout != 2)
    return onnx_node_fail(nd, ST_ERR_INVALID, "TopK has 2 outputs (values, indices), it has %d", nd->nout);
  if (!n->out[1]) { /* an unnamed indices output still gets a value */
    ir_value *v = ir_value_new(nd->c->g, NULL, DT_INT64);
    if (!v) return nomem(nd);
    n->out[1] = v, v->producer = n;
  }
  n->out[1]->dtype = DT_INT64;
  int counted_x = over_count(nd);
  if (counted_x && !run_time) {
    char name[300];
    snprintf(name, sizeof name, "%.280s_k", nd->out[0]->name);
    ir_value *kv = ir_const_new(nd->c->g, name, DT_INT64, 1, (const int64_t[]){1}, &k, sizeof k);
    if (!kv || ir_node_set_input(nd->c->g, n, 1, kv)) return nomem(nd);
  }
  if (counted_x && ir_node_set_input(nd->c->g, n, 2, nd->in[0]->count)) return nomem(nd);
  if ((run_time || counted_x) && (s = add_count(nd, n))) return s;
  if ((!run_time && !counted_x && (s = onnx_set_int(nd, n, "k", k))) ||
      (s = onnx_set_int(nd, n, "axis", onnx_attr_int(nd, "axis", -1))) ||
      (s = onnx_set_flag(nd, n, "largest", 1)) || (s = onnx_set_flag(nd, n, "sorted", 1)))
    return s;
  return ST_OK;
}

status onnx_import_scatter(onnx_node *nd, ir_node *n) {
  status s = onnx_set_int(nd, n, "axis", onnx_attr_int(nd, "axis", 0));
  if (!s) s = set_reduction(nd, n);
  return s ? s : onnx_counted_scatter(nd, n);
}

status onnx_import_scatternd(onnx_node *nd, ir_node *n) { return set_reduction(nd, n); }

status onnx_import_tensorscatter(onnx_node *nd, ir_node *n) {
  const Onnx__AttributeProto *a = onnx_attr(nd, "mode");
  int circ = a && a->s.len == 8 && !memcmp(a->s.data, "circular", 8);
  if (a && !circ && !(a->s.len == 6 && !memcmp(a->s.data, "linear", 6)))
    return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'mode' must be linear or circular");
  status s = onnx_set_string(nd, n, "mode", circ ? "circular" : "linear");
  return s ? s : onnx_set_int(nd, n, "axis", onnx_attr_int(nd, "axis", -2));
}

status onnx_import_cumulative(onnx_node *nd, ir_node *n) {
  int64_t axis = 0;
  status s = int_scalar_in(nd, 1, "axis", &axis);
  if (!s) s = onnx_set_int(nd, n, "axis", axis);
  if (!s) s = onnx_set_flag(nd, n, "exclusive", 0);
  return s ? s : onnx_set_flag(nd, n, "reverse", 0);
}

status onnx_import_gathernd(onnx_node *nd, ir_node *n) {
  return onnx_set_int(nd, n, "batch_dims", onnx_attr_int(nd, "batch_dims", 0));
}

status onnx_import_onehot(onnx_node *nd, ir_node *n) {
  int64_t depth = 0;
  status s = int_scalar_in(nd, 1, "depth", &depth);
  if (s) return s;
  if (depth < 1) return onnx_node_fail(nd, ST_ERR_INVALID, "depth = %" PRId64 " must be >= 1", depth);
  const ir_value *v = nd->in[2];
  if (v->rank != 1 || v->dims[0] != 2)
    return onnx_node_fail(nd, ST_ERR_INVALID, "input 2 '%s' (values) must be [off, on], 2 elements", v->name);
  if (ir_node_set_input(nd->c->g, n, 1, nd->in[2])) return nomem(nd);
  s = onnx_set_int(nd, n, "depth", depth);
  return s ? s : onnx_set_int(nd, n, "axis", onnx_attr_int(nd, "axis", -1));
}

/* The positions of a run-time condition's true entries: NonZero, then a
 * Reshape of its [1, bound] result to [bound], counted along axis 0. */
static ir_value *run_time_positions(onnx_node *nd, ir_value *cond) {
  ir_graph *g = nd->c->g;
  char name[300];
  snprintf(name, sizeof name, "%.280s_nonzero", nd->out[0]->name);
  ir_value *nz = ir_value_new(g, name, DT_INT64);
  ir_node *z = nz ? ir_node_new(g, IR_OP_NONZERO, NULL, 1, &cond, 1, &nz) : NULL;
  if (!z || add_count(nd, z)) return NULL;
  int64_t minus1 = -1, one = 1;
  snprintf(name, sizeof name, "%.280s_positions_shape", nd->out[0]->name);
  ir_value *shape = ir_const_new(g, name, DT_INT64, 1, &one, &minus1, sizeof minus1);
  snprintf(name, sizeof name, "%.280s_positions", nd->out[0]->name);
  ir_value *pos = ir_value_new(g, name, DT_INT64), *rin[2] = {nz, shape};
  ir_node *r = shape && pos ? ir_node_new(g, IR_OP_RESHAPE, NULL, 2, rin, 1, &pos) : NULL;
  return r && !ir_attr_set_int(g, r, "allowzero", 0) ? pos : NULL;
}

status onnx_import_compress(onnx_node *nd, ir_node *n) {
  const ir_value *x = nd->in[0], *cond = nd->in[1];
  if (cond->rank != 1 || !dtype_size(cond->dtype))
    return onnx_node_fail(nd, ST_ERR_INVALID, "input 1 '%s' (condition) must be 1-D", cond->name);
  char name[300];
  ir_value *ix = NULL;
  if (!cond->data) { /* a counted output (ir/count.h) */
    if (!(ix = run_time_positions(nd, nd->in[1]))) return nomem(nd);
  } else {
    int64_t len = cond->dims[0], count = 0;
    int64_t *pos = arena_array(&nd->c->scratch, (size_t)(len > 0 ? len : 1), sizeof *pos);
    if (!pos) return nomem(nd);
    for (int64_t i = 0; i < len; i++)
      if (elem_get(cond->data, cond->dtype, i) != 0) pos[count++] = i;
    snprintf(name, sizeof name, "%.280s_positions", nd->out[0]->name);
    ix = ir_const_new(nd->c->g, name, DT_INT64, 1, &count, pos, (size_t)count * sizeof *pos);
  }
  if (!ix || ir_node_set_input(nd->c->g, n, 1, ix)) return nomem(nd);
  if (onnx_attr(nd, "axis")) return onnx_set_int(nd, n, "axis", onnx_attr_int(nd, "axis", 0));
  /* no axis: the flattened input; the loader's toposort puts the Reshape first */
  int64_t minus1 = -1, one = 1;
  snprintf(name, sizeof name, "%.280s_flat_shape", nd->out[0]->name);
  ir_value *shape = ir_const_new(nd->c->g, name, DT_INT64, 1, &one, &minus1, sizeof minus1);
  snprintf(name, sizeof name, "%.280s_flat", nd->out[0]->name);
  ir_value *flat = ir_value_new(nd->c->g, name, x->dtype);
  ir_value *rin[2] = {nd->in[0], shape};
  ir_node *r = shape && flat ? ir_node_new(nd->c->g, IR_OP_RESHAPE, NULL, 2, rin, 1, &flat) : NULL;
  if (!r || ir_attr_set_int(nd->c->g, r, "allowzero", 0) || ir_node_set_input(nd->c->g, n, 0, flat))
    return nomem(nd);
  return onnx_set_int(nd, n, "axis", 0);
}

/* What a NonZero's input v holds: x when v is x with zeros past its count
 * (onnx_counted_masked: Where(Less(constant rows, x's count), x, 0)), else v. */
static const ir_value *unmasked(const ir_value *v) {
  const ir_node *p = v->producer, *less = p && p->op == IR_OP_WHERE ? p->in[0]->producer : NULL;
  const ir_value *x = p ? p->in[1] : NULL;
  if (!less || less->op != IR_OP_LESS || !less->in[0]->data || !x->count || less->in[1] != x->count ||
      !p->in[2]->data || ir_value_elements(p->in[2]) != 1 ||
      elem_get(p->in[2]->data, p->in[2]->dtype, 0) != 0)
    return v;
  return x;
}

/* An earlier NonZero of the same value x, or NULL. */
static const ir_node *same_nonzero(const ir_graph *g, const ir_node *n, const ir_value *x) {
  for (int i = 0; i < g->nnodes; i++)
    if (g->nodes[i] != n && g->nodes[i]->op == IR_OP_NONZERO && unmasked(g->nodes[i]->in[0]) == x)
      return g->nodes[i];
  return NULL;
}

status onnx_import_nonzero(onnx_node *nd, ir_node *n) {
  const ir_value *x = nd->in[0];
  /* A second NonZero of the same value (torchvision's RoI pooler takes the
   * boxes of a level and their slots each from its own NonZero of one mask)
   * is the first one's result, with its count: the consumers that need both
   * counted alike (ScatterElements, Where) see one count. */
  const ir_node *first = x->data ? NULL : same_nonzero(nd->c->g, n, x);
  if (first) {
    n->op = IR_OP_IDENTITY, n->in[0] = first->out[0];
    return ST_OK;
  }
  if (!x->data) {
    status s = onnx_counted_nonzero_input(nd, n);
    return s ? s : add_count(nd, n);
  }
  n->op = IR_OP_IDENTITY; /* of the constant result */
  int64_t total = ir_value_elements(x), count = 0;
  if (total < 0 || x->rank > MAX_RANK)
    return onnx_node_fail(nd, ST_ERR_INVALID, "input '%s' has no known shape", x->name);
  for (int64_t i = 0; i < total; i++)
    count += elem_get(x->data, x->dtype, i) != 0;
  int rank = x->rank > 0 ? x->rank : 1; /* a scalar reads as [1] (ONNX Runtime) */
  int64_t *out = arena_array(&nd->c->scratch, (size_t)(rank * count + 1), sizeof *out), at = 0;
  if (!out) return nomem(nd);
  for (int64_t i = 0; i < total; i++) {
    if (elem_get(x->data, x->dtype, i) == 0) continue;
    int64_t rest = i;
    for (int d = x->rank - 1; d >= 0; d--)
      out[(int64_t)d * count + at] = rest % x->dims[d], rest /= x->dims[d];
    if (x->rank == 0) out[at] = 0;
    at++;
  }
  int64_t dims[2] = {rank, count};
  char name[300];
  snprintf(name, sizeof name, "%.280s_value", nd->out[0]->name);
  ir_value *c = ir_const_new(nd->c->g, name, DT_INT64, 2, dims, out, (size_t)(rank * count) * sizeof *out);
  if (!c || ir_node_set_input(nd->c->g, n, 0, c)) return nomem(nd);
  return ST_OK;
}

/* ---- Shape, Size and ConstantOfShape of a counted value ----
 * A counted value's extent along its axis is its count, a run-time value
 * (ir/count.h). Shape over a range covering the axis becomes that count
 * between the static dims around it (Concat of constants and the count,
 * or the count itself), Size the count times the other dims; the shape
 * arithmetic after them runs as tasks, or is read at compile time where it
 * gives a shape (onnx_counted.c). */

/* The range [start, end) of Shape's attributes over rank r, as ONNX clamps it. */
static void shape_range(onnx_node *nd, int r, int64_t *s, int64_t *e) {
  *s = onnx_attr_int(nd, "start", 0), *e = onnx_attr_int(nd, "end", r);
  *s = *s < 0 ? *s + r : *s, *e = *e < 0 ? *e + r : *e;
  *s = *s < 0 ? 0 : *s > r ? r : *s, *e = *e < 0 ? 0 : *e > r ? r : *e;
}

/* x's dims [from, to) as a 1-D i64 constant named after the node's output. */
static ir_value *dims_const(onnx_node *nd, const ir_value *x, int64_t from, int64_t to, const char *tag) {
  char name[300];
  snprintf(name, sizeof name, "%.280s_%s", nd->out[0]->name, tag);
  int64_t len = to - from;
  return ir_const_new(nd->c->g, name, DT_INT64, 1, &len, x->dims + from, (size_t)len * sizeof(int64_t));
}

status onnx_import_shape(onnx_node *nd, ir_node *n) {
  const ir_value *x = nd->in[0];
  int64_t s, e, a = x->count_axis;
  if (a < 0 || !x->count || x->rank < 1) return ST_OK;
  shape_range(nd, x->rank, &s, &e);
  if (a < s || a >= e) return ST_OK; /* static dims only: it folds */
  ir_value *parts[3];
  int np = 0;
  if (a > s && !(parts[np++] = dims_const(nd, x, s, a, "dims_before"))) return nomem(nd);
  parts[np++] = x->count;
  if (e > a + 1 && !(parts[np++] = dims_const(nd, x, a + 1, e, "dims_after"))) return nomem(nd);
  n->op = np == 1 ? IR_OP_IDENTITY : IR_OP_CONCAT;
  n->nattrs = 0; /* start, end */
  for (int j = 0; j < np; j++)
    if (ir_node_set_input(nd->c->g, n, j, parts[j])) return nomem(nd);
  return np > 1 && ir_attr_set_int(nd->c->g, n, "axis", 0) ? nomem(nd) : ST_OK;
}

status onnx_import_size(onnx_node *nd, ir_node *n) {
  const ir_value *x = nd->in[0];
  if (x->count_axis < 0 || !x->count) return ST_OK;
  int64_t rest = 1, none = 0;
  for (int d = 0; d < x->rank; d++)
    if (d != x->count_axis) rest *= x->dims[d]; /* x's bytes fit: no overflow */
  char name[300];
  ir_value *v = x->count;
  if (rest != 1) { /* count x rest, i64 [1] */
    snprintf(name, sizeof name, "%.280s_rest", nd->out[0]->name);
    ir_value *r = ir_const_new(nd->c->g, name, DT_INT64, 1, (const int64_t[]){1}, &rest, sizeof rest);
    snprintf(name, sizeof name, "%.280s_elements", nd->out[0]->name);
    ir_value *y = r ? ir_value_new(nd->c->g, name, DT_INT64) : NULL, *in[2] = {x->count, r};
    if (!y || !ir_node_new(nd->c->g, IR_OP_MUL, NULL, 2, in, 1, &y)) return nomem(nd);
    v = y;
  }
  snprintf(name, sizeof name, "%.280s_scalar", nd->out[0]->name); /* Reshape to a scalar */
  ir_value *shape = ir_const_new(nd->c->g, name, DT_INT64, 1, &none, NULL, 0);
  n->op = IR_OP_RESHAPE;
  if (!shape || ir_node_set_input(nd->c->g, n, 0, v) || ir_node_set_input(nd->c->g, n, 1, shape) ||
      ir_attr_set_int(nd->c->g, n, "allowzero", 0))
    return nomem(nd);
  return ST_OK;
}

/* Gather of that run-time shape picking static dims only: an export's test
 * "is dim 1 of this counted value 1" (a squeeze of a dim the exporter did not
 * know, If(Equal(Gather(Shape(x), 1), 1))) reads no count, so it becomes the
 * Identity of those dims, a constant, and the If folds to one branch. */
status onnx_counted_shape_gather(onnx_node *nd, ir_node *n) {
  const ir_value *sh = nd->in[0], *ix = nd->in[1];
  const ir_node *p = sh->producer;
  int64_t axis = onnx_attr_int(nd, "axis", 0), m = ix && ix->data ? ir_value_elements(ix) : -1, at[MAX_RANK];
  if (sh->data || sh->rank != 1 || sh->dtype != DT_INT64 || (axis != 0 && axis != -1) || m < 0 ||
      m > MAX_RANK || (ix->dtype != DT_INT64 && ix->dtype != DT_INT32) || !p || p->op != IR_OP_CONCAT ||
      ir_attr_int(p, "axis", 0))
    return ST_OK;
  for (int64_t i = 0; i < m; i++) {
    int64_t k = elem_get_int(ix->data, ix->dtype, (size_t)i), off = 0;
    k = k < 0 ? k + sh->dims[0] : k;
    int found = 0;
    for (int j = 0; j < p->nin && !found; j++) {
      const ir_value *q = p->in[j];
      if (!q || q->rank != 1 || q->dtype != DT_INT64) return ST_OK;
      if (k >= off && k < off + q->dims[0]) {
        if (!q->data) return ST_OK; /* the count: a run-time value */
        at[i] = ((const int64_t *)q->data)[k - off], found = 1;
      }
      off += q->dims[0];
    }
    if (!found) return ST_OK; /* out of range: Gather's own checks say so */
  }
  char name[300];
  snprintf(name, sizeof name, "%.280s_static_dims", nd->out[0]->name);
  ir_value *c = ir_const_new(nd->c->g, name, DT_INT64, ix->rank, ix->dims, at, (size_t)m * sizeof *at);
  if (!c || ir_node_set_input(nd->c->g, n, 0, c)) return nomem(nd);
  n->op = IR_OP_IDENTITY, n->nin = 1, n->nattrs = 0;
  return ST_OK;
}

/* ---- Concat along a counted axis ----
 * The valid rows of each input go back to back, so the output's count is
 * the sum of the inputs' counts (a dense input's extent counts whole). The
 * Concat n stays, over the inputs' bounds (attr with_padding: their
 * padding is copied too and the result is dense); a mask with 1 on the
 * valid rows of each input (iota < count, or all ones for a dense input)
 * gives through NonZero the positions of the valid rows in order, and a
 * Gather of them along the axis is the output, counted by NonZero. Concats
 * of inputs counted alike share those positions, and so their count. */

static ir_value *valid_rows(onnx_node *nd, const ir_value *x, int axis, int j) {
  ir_graph *g = nd->c->g;
  int64_t b = x->dims[axis];
  char name[300];
  snprintf(name, sizeof name, "%.260s_valid%d", nd->out[0]->name, j);
  if (x->count_axis != axis) { /* dense: every row */
    unsigned char *ones = arena_alloc(&nd->c->scratch, (size_t)b + 1);
    if (!ones) return NULL;
    memset(ones, 1, (size_t)b + 1);
    return ir_const_new(g, name, DT_BOOL, 1, &b, ones, (size_t)b);
  }
  int64_t *iota = arena_array(&nd->c->scratch, (size_t)b + 1, sizeof *iota);
  for (int64_t i = 0; iota && i < b; i++)
    iota[i] = i;
  char iname[300];
  snprintf(iname, sizeof iname, "%.260s_rows%d", nd->out[0]->name, j);
  ir_value *rows = iota ? ir_const_new(g, iname, DT_INT64, 1, &b, iota, (size_t)b * sizeof *iota) : NULL;
  ir_value *m = rows ? ir_value_new(g, name, DT_BOOL) : NULL, *in[2] = {rows, x->count};
  return m && ir_node_new(g, IR_OP_LESS, NULL, 2, in, 1, &m) ? m : NULL;
}

/* Mask part v (of a packing Concat) marks the valid rows of x along axis:
 * iota < x's count, or all ones for a dense x, b rows either way. */
static int marks(const ir_value *v, const ir_value *x, int axis) {
  int64_t b = x->dims[axis];
  if (v->rank != 1 || v->dims[0] != b) return 0;
  if (x->count_axis != axis) {
    for (int64_t i = 0; v->data && v->dtype == DT_BOOL && i < b; i++)
      if (!((const unsigned char *)v->data)[i]) return 0;
    return v->data && v->dtype == DT_BOOL;
  }
  const ir_node *p = v->producer;
  return p && p->op == IR_OP_LESS && p->in[1] == x->count && p->in[0]->data;
}

/* The positions an earlier packing Concat made for inputs counted alike
 * (the boxes, scores and labels of one detector are), so that their
 * results share one count; NULL when there is none. */
static ir_value *packed_positions(const onnx_node *nd, int axis) {
  const ir_graph *g = nd->c->g;
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *r = g->nodes[i], *nz = r->op == IR_OP_RESHAPE ? r->in[0]->producer : NULL;
    const ir_node *mc = nz && nz->op == IR_OP_NONZERO ? nz->in[0]->producer : NULL;
    int same = mc && mc->op == IR_OP_CONCAT && mc->nin == nd->nin;
    for (int j = 0; same && j < nd->nin; j++)
      same = marks(mc->in[j], nd->in[j], axis);
    if (same) return r->out[0];
  }
  return NULL;
}

status onnx_counted_concat(onnx_node *nd, ir_node *n) {
  ir_graph *g = nd->c->g;
  int64_t a = onnx_attr_int(nd, "axis", 1), r = nd->in[0]->rank;
  a = a < 0 ? a + r : a;
  int counted = 0;
  for (int j = 0; j < nd->nin; j++)
    counted |= nd->in[j]->rank == r && nd->in[j]->count_axis == a && a >= 0 && nd->in[j]->count;
  if (!counted) return ST_OK;
  if (nd->nin == 1) { /* torch.cat of one tensor: that tensor, its count kept */
    n->op = IR_OP_IDENTITY, n->nattrs = 0;
    return ST_OK;
  }
  char name[300];
  ir_value *pos = packed_positions(nd, (int)a);
  if (!pos) {
    ir_value **parts = arena_array(&nd->c->scratch, (size_t)nd->nin, sizeof *parts);
    for (int j = 0; parts && j < nd->nin; j++)
      if (!(parts[j] = valid_rows(nd, nd->in[j], (int)a, j))) return nomem(nd);
    snprintf(name, sizeof name, "%.280s_valid", nd->out[0]->name);
    ir_value *mask = parts ? ir_value_new(g, name, DT_BOOL) : NULL;
    ir_node *mc = mask ? ir_node_new(g, IR_OP_CONCAT, NULL, nd->nin, parts, 1, &mask) : NULL;
    pos = mc && !ir_attr_set_int(g, mc, "axis", 0) ? run_time_positions(nd, mask) : NULL;
  }
  snprintf(name, sizeof name, "%.280s_padded", nd->out[0]->name);
  ir_value *all = pos ? ir_value_new(g, name, nd->in[0]->dtype) : NULL, *gin[2] = {all, pos};
  if (!all || ir_attr_set_int(g, n, "with_padding", 1)) return nomem(nd);
  n->out[0] = all, all->producer = n;
  ir_node *gather = ir_node_new(g, IR_OP_GATHER, NULL, 2, gin, 1, &nd->out[0]);
  return gather && !ir_attr_set_int(g, gather, "axis", a) ? ST_OK : nomem(nd);
}

/* ---- Slice along a counted axis ----
 * Rows [s, min(e, count)) of x counted along axis a (start s and end e >= 0,
 * step 1, as ONNX clamps them to the count): the positions s + i below the
 * count (iota + s < count, NonZero) gathered along a, counted by their
 * number (all of the axis: x itself, its count kept); the Slice keeps its
 * other axes, after the Gather. Negative starts
 * or ends (relative to the count) and other steps are left to the count
 * rules, which refuse them by name. */
/* Slice n without its entry `at` of na (the counted axis, done): the
 * other axes', or an Identity when none is left. */
static status drop_axis(ir_graph *g, ir_node *n, int at, int na, int64_t *st, int64_t *en, int64_t *ax,
                        int64_t *sp) {
  for (int i = at; i + 1 < na; i++)
    st[i] = st[i + 1], en[i] = en[i + 1], ax[i] = ax[i + 1], sp[i] = sp[i + 1];
  if (--na == 0) {
    n->op = IR_OP_IDENTITY, n->nattrs = 0, n->nin = 1;
    return ST_OK;
  }
  if (ir_attr_set_ints(g, n, "starts", na, st) || ir_attr_set_ints(g, n, "ends", na, en) ||
      ir_attr_set_ints(g, n, "axes", na, ax) || ir_attr_set_ints(g, n, "steps", na, sp))
    return ST_ERR_NOMEM;
  return ST_OK;
}

status onnx_counted_slice(onnx_node *nd, ir_node *n) {
  ir_graph *g = nd->c->g;
  ir_value *x = nd->in[0];
  int64_t st[MAX_RANK], en[MAX_RANK], ax[MAX_RANK], sp[MAX_RANK];
  int na = ir_attr_ints(n, "starts", st, MAX_RANK), a = x->count_axis, at = -1;
  if (a < 0 || !x->count || na < 0 || ir_attr_ints(n, "ends", en, MAX_RANK) != na) return ST_OK;
  int has_axes = ir_attr_ints(n, "axes", ax, MAX_RANK) == na,
      has_steps = ir_attr_ints(n, "steps", sp, MAX_RANK) == na;
  for (int i = 0; i < na; i++) {
    if (!has_axes) ax[i] = i;
    if (!has_steps) sp[i] = 1;
    if ((ax[i] < 0 ? ax[i] + x->rank : ax[i]) == a) at = i;
  }
  if (at < 0 || st[at] < 0 || en[at] < 0 || sp[at] != 1) return ST_OK;
  int64_t b = x->dims[a], s0 = st[at] < b ? st[at] : b, len = (en[at] < b ? en[at] : b) - s0;
  len = len < 0 ? 0 : len;
  if (s0 == 0 && len == b) /* all of it: x's rows and count */
    return drop_axis(g, n, at, na, st, en, ax, sp) ? nomem(nd) : ST_OK;
  int64_t *rows = arena_array(&nd->c->scratch, (size_t)len + 1, sizeof *rows);
  for (int64_t i = 0; rows && i < len; i++)
    rows[i] = s0 + i;
  char name[300];
  snprintf(name, sizeof name, "%.280s_rows", nd->out[0]->name);
  ir_value *rv = rows ? ir_const_new(g, name, DT_INT64, 1, &len, rows, (size_t)len * sizeof *rows) : NULL;
  snprintf(name, sizeof name, "%.280s_valid", nd->out[0]->name);
  ir_value *mask = rv ? ir_value_new(g, name, DT_BOOL) : NULL, *lin[2] = {rv, x->count};
  ir_value *pos =
      mask && ir_node_new(g, IR_OP_LESS, NULL, 2, lin, 1, &mask) ? run_time_positions(nd, mask) : NULL;
  snprintf(name, sizeof name, "%.280s_start", nd->out[0]->name);
  ir_value *sv = pos ? ir_const_new(g, name, DT_INT64, 1, (const int64_t[]){1}, &s0, sizeof s0) : NULL;
  snprintf(name, sizeof name, "%.280s_indices", nd->out[0]->name);
  ir_value *ix = sv ? ir_value_new(g, name, DT_INT64) : NULL, *ain[2] = {pos, sv};
  snprintf(name, sizeof name, "%.280s_rows_kept", nd->out[0]->name);
  ir_value *y = ix ? ir_value_new(g, name, x->dtype) : NULL, *gin[2] = {x, ix};
  ir_node *gn = y && ir_node_new(g, IR_OP_ADD, NULL, 2, ain, 1, &ix)
                    ? ir_node_new(g, IR_OP_GATHER, NULL, 2, gin, 1, &y)
                    : NULL;
  if (!gn || ir_attr_set_int(g, gn, "axis", a)) return nomem(nd);
  n->in[0] = y;
  return drop_axis(g, n, at, na, st, en, ax, sp) ? nomem(nd) : ST_OK;
}

/* ---- Reduce over a counted axis ----
 * The padding becomes the mode's neutral element, so reducing the bound
 * reduces the valid rows: Where(iota < count, x, neutral), iota along the
 * axis broadcasting over the dims after it. Max and min on floats only
 * (-inf, +inf); mean and the other modes are left to the count rules. */
status onnx_counted_reduce(onnx_node *nd, ir_node *n) {
  ir_graph *g = nd->c->g;
  ir_value *x = nd->in[0];
  int a = x->count_axis;
  int64_t axes[MAX_RANK];
  int na = ir_attr_ints(n, "axes", axes, MAX_RANK), reduced = na < 0 && !ir_attr_int(n, "noop", 0);
  for (int i = 0; i < na; i++)
    reduced |= (axes[i] < 0 ? axes[i] + x->rank : axes[i]) == a;
  const char *mode = ir_attr_string(n, "mode", "");
  int lowest = !strcmp(mode, "max") || !strcmp(mode, "logsumexp"), highest = !strcmp(mode, "min");
  int zero = !strcmp(mode, "sum") || !strcmp(mode, "l1") || !strcmp(mode, "sumsquare"),
      one = !strcmp(mode, "prod");
  if (a < 0 || !x->count || !reduced || !(lowest || highest || zero || one) || !dtype_size(x->dtype) ||
      ((lowest || highest) && !elem_is_float(x->dtype)))
    return ST_OK;
  double neutral = zero ? 0.0 : one ? 1.0 : lowest ? -INFINITY : INFINITY;
  ir_value *y = onnx_counted_masked(nd, x, neutral, "reduce");
  if (!y || ir_attr_set_int(g, n, "with_padding", 1)) return nomem(nd);
  n->in[0] = y;
  return ST_OK;
}

status onnx_import_nms(onnx_node *nd, ir_node *n) {
  int64_t max = 0, cpb = onnx_attr_int(nd, "center_point_box", 0);
  status s = ST_OK;
  if (nd->nin > 2 && nd->in[2]) {
    if (!nd->in[2]->data)
      return onnx_node_fail(nd, ST_ERR_UNSUPPORTED,
                            "input 2 '%s' (max_output_boxes_per_class) must be a constant: it bounds the "
                            "output's size",
                            nd->in[2]->name);
    if ((s = int_scalar_in(nd, 2, "max_output_boxes_per_class", &max))) return s;
  }
  if (cpb != 0 && cpb != 1)
    return onnx_node_fail(nd, ST_ERR_INVALID, "center_point_box = %" PRId64 " must be 0 or 1", cpb);
  ir_value *iou = nd->nin > 3 ? nd->in[3] : NULL, *score = nd->nin > 4 ? nd->in[4] : NULL;
  n->nin = 2;
  if (ir_node_set_input(nd->c->g, n, 2, iou) || ir_node_set_input(nd->c->g, n, 3, score)) return nomem(nd);
  while (n->nin > 2 && !n->in[n->nin - 1])
    n->nin--;
  if ((s = onnx_set_int(nd, n, "center_point_box", cpb)) ||
      (s = onnx_set_int(nd, n, "max_per_class", max < 0 ? 0 : max)))
    return s;
  const ir_value *b = nd->in[0], *sc = nd->in[1];
  if (b->count_axis == 1 && b->count && sc->count_axis == 2 && sc->count == b->count) { /* counted boxes */
    while (n->nin < 4)
      if (ir_node_set_input(nd->c->g, n, n->nin, NULL)) return nomem(nd);
    if (ir_node_set_input(nd->c->g, n, 4, b->count)) return nomem(nd);
  }
  return add_count(nd, n);
}

status onnx_import_unique(onnx_node *nd, ir_node *n) {
  int64_t sorted = onnx_attr_int(nd, "sorted", 1);
  if (sorted != 0 && sorted != 1)
    return onnx_node_fail(nd, ST_ERR_INVALID, "sorted = %" PRId64 " must be 0 or 1", sorted);
  for (int k = 0; k < 4; k++) { /* unnamed or absent outputs still get a value */
    if (k < n->nout && n->out[k]) continue;
    ir_value *v = ir_value_new(nd->c->g, NULL, DT_INT64);
    if (!v) return nomem(nd);
    if (k < n->nout)
      n->out[k] = v, v->producer = n;
    else if (ir_node_add_output(nd->c->g, n, v))
      return nomem(nd);
  }
  for (int k = 1; k < 4; k++)
    n->out[k]->dtype = DT_INT64;
  status s = onnx_set_int(nd, n, "sorted", sorted);
  if (!s && onnx_attr(nd, "axis")) s = onnx_set_int(nd, n, "axis", onnx_attr_int(nd, "axis", 0));
  return s ? s : add_count(nd, n);
}

/* The INTS attribute `name` (NULL, 0 when absent). */
static const int64_t *ints_attr(onnx_node *nd, const char *name, int64_t *count) {
  const Onnx__AttributeProto *a = onnx_attr(nd, name);
  *count = a ? (int64_t)a->n_ints : 0;
  return a ? a->ints : NULL;
}

/* Appends n-gram `items[0, size)` counted into position o to the table
 * rows[0, *count) of width `width`; an equal n-gram already there is
 * dropped (ONNX's reference counts a repeated n-gram at its last index). */
static void add_ngram(int64_t *rows, int64_t *count, int64_t width, int64_t size, int64_t o,
                      const int64_t *items) {
  for (int64_t g = 0; g < *count; g++) {
    int64_t *r = rows + g * width;
    if (r[0] == size && !memcmp(r + 2, items, (size_t)size * sizeof *items)) {
      memmove(r, r + width, (size_t)((*count - g - 1) * width) * sizeof *r);
      (*count)--;
      break;
    }
  }
  int64_t *r = rows + *count * width;
  memset(r, 0, (size_t)width * sizeof *r);
  r[0] = size, r[1] = o;
  memcpy(r + 2, items, (size_t)size * sizeof *items);
  (*count)++;
}

status onnx_import_tfidf(onnx_node *nd, ir_node *n) {
  static const char *const modes[3] = {"TF", "IDF", "TFIDF"};
  const Onnx__AttributeProto *ma = onnx_attr(nd, "mode"), *wa = onnx_attr(nd, "weights");
  int mode = -1;
  for (int i = 0; ma && i < 3; i++)
    if (ma->s.len == strlen(modes[i]) && !memcmp(ma->s.data, modes[i], ma->s.len)) mode = i;
  if (mode < 0) return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'mode' must be TF, IDF or TFIDF");
  if (onnx_attr(nd, "pool_strings"))
    return onnx_node_fail(nd, ST_ERR_UNSUPPORTED, "string pools (pool_strings) are not supported");
  int64_t lo = onnx_attr_int(nd, "min_gram_length", -1), hi = onnx_attr_int(nd, "max_gram_length", -1),
          skip = onnx_attr_int(nd, "max_skip_count", -1), ncounts, nindexes, npool;
  const int64_t *counts = ints_attr(nd, "ngram_counts", &ncounts),
                *indexes = ints_attr(nd, "ngram_indexes", &nindexes),
                *pool = ints_attr(nd, "pool_int64s", &npool);
  if (lo < 1 || hi < lo || hi > 64 || skip < 0 || skip > INT32_MAX)
    return onnx_node_fail(nd, ST_ERR_INVALID,
                          "min_gram_length %" PRId64 ", max_gram_length %" PRId64 ", max_skip_count %" PRId64
                          ": expected 1 <= min <= max <= 64 and 0 <= skips < 2^31",
                          lo, hi, skip);
  if (!pool || ncounts < 1 || nindexes < 1)
    return onnx_node_fail(nd, ST_ERR_INVALID, "pool_int64s, ngram_counts and ngram_indexes must be given");
  int64_t outs = 0;
  for (int64_t i = 0; i < nindexes; i++) {
    if (indexes[i] < 0 || indexes[i] >= INT32_MAX)
      return onnx_node_fail(nd, ST_ERR_INVALID, "ngram_indexes[%" PRId64 "] = %" PRId64 " is out of range", i,
                            indexes[i]);
    outs = indexes[i] + 1 > outs ? indexes[i] + 1 : outs;
  }
  const int64_t width = 2 + hi;
  int64_t *rows = arena_array(&nd->c->scratch, (size_t)npool + 1, (size_t)width * sizeof *rows), g = 0,
          id = 0;
  if (!rows) return nomem(nd);
  for (int64_t i = 0; i < ncounts; i++) /* each size's first pool position, ascending */
    if (counts[i] < (i ? counts[i - 1] : 0) || counts[i] > npool)
      return onnx_node_fail(nd, ST_ERR_INVALID,
                            "ngram_counts[%" PRId64 "] = %" PRId64
                            " is out of order or past the pool of %" PRId64,
                            i, counts[i], npool);
  for (int64_t i = 0; i < ncounts && i < hi; i++) {
    int64_t size = i + 1, start = counts[i], end = i + 1 < ncounts ? counts[i + 1] : npool;
    for (int64_t k = 0; k < (end - start) / size; k++, id++) {
      if (size < lo || size > hi) continue;
      if (id >= nindexes)
        return onnx_node_fail(nd, ST_ERR_INVALID,
                              "ngram_indexes has %" PRId64 " entries, n-gram %" PRId64 " has none", nindexes,
                              id);
      add_ngram(rows, &g, width, size, indexes[id], pool + start + k * size);
    }
  }
  if (g == 0) memset(rows, 0, (size_t)width * sizeof *rows), g = 1; /* n = 0: counts nothing */
  char name[300];
  int64_t dims[2] = {g, width};
  snprintf(name, sizeof name, "%.280s_ngrams", nd->out[0]->name);
  ir_value *table = ir_const_new(nd->c->g, name, DT_INT64, 2, dims, rows, (size_t)(g * width) * sizeof *rows);
  if (!table || ir_node_set_input(nd->c->g, n, 1, table)) return nomem(nd);
  if (wa && wa->n_floats > 0) {
    if ((int64_t)wa->n_floats < outs)
      return onnx_node_fail(nd, ST_ERR_INVALID, "weights has %zu entries for %" PRId64 " outputs",
                            wa->n_floats, outs);
    snprintf(name, sizeof name, "%.280s_weights", nd->out[0]->name);
    ir_value *w =
        ir_const_new(nd->c->g, name, DT_FLOAT32, 1, &outs, wa->floats, (size_t)outs * sizeof(float));
    if (!w || ir_node_set_input(nd->c->g, n, 2, w)) return nomem(nd);
  }
  status s = onnx_set_int(nd, n, "mode", mode);
  if (!s) s = onnx_set_int(nd, n, "max_skip", skip);
  return s ? s : onnx_set_int(nd, n, "outs", outs);
}
