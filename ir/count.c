/* count.c - counted values: the producers' shape rules and evaluation, and
 * how every other op treats a counted input (ir/count.h).
 *
 * Design. A data-dependent extent is a bound plus a run-time count, not a
 * dynamic shape: the value keeps static dims (the bound), so memory
 * planning, tiling and every kernel stay static, and only the count says
 * how much of the axis is valid. Producers write zeros past the count, so
 * that a consumer reading the padding reads valid indices (Gather with
 * counted indices reads row 0). An op carries the count to its output when
 * each valid output element depends on valid input elements only and the
 * counted axis maps to one output axis of the same extent: elementwise
 * ops, the Reshape family, Transpose, Expand, Slice, Split and Gather off
 * the axis, Gemm and MatMul over the rows of A (a detector's box head), Conv
 * over the images of a batch (its mask head), and a
 * Reduce (ArgMax, ArgMin included) or Softmax across other axes, which
 * works on each position of the counted axis alone, and a Concat along
 * another axis (its uncounted inputs are valid everywhere); GatherND with
 * counted indices (or data counted along an axis it copies whole). Some
 * consumers take the count itself and leave it behind (COUNT_DROPPED): a
 * Gather along data's counted axis with counted indices (the indices count
 * the output), Shape over static dims only, a Concat over the inputs'
 * bounds (with_padding) that the importer packs with a Gather after it,
 * and a Reduce over the axis whose padding the importer made the mode's
 * neutral element (with_padding). TopK and NonMaxSuppression over the
 * counted axis take the count as an input (infer_topk, infer_nms), and the
 * importer makes Shape, Size and ConstantOfShape of a counted value
 * run-time values and counted fills, and a Slice along the axis a Gather of
 * the valid rows (frontend/onnx_ops_index.c); it reads shape arithmetic on
 * a count at compile time (frontend/onnx_counted.c), and leaves two more
 * COUNT_DROPPED consumers: a Reshape merging the counted axis into a larger
 * one and a ScatterElements whose padding indices point at a spare slot
 * (with_padding: it gathers the valid part after them). Anything else (Softmax or a
 * mean over the axis, Tile, Pad, ...) would read the padding as data, so it
 * is refused at compile time with one line.
 *
 * Producers:
 *   NonZero  y i64 [max(rank, 1), elements(x)] counted along axis 1.
 *   NonMaxSuppression  selected [B x C x min(max_per_class, N), 3]
 *            counted along axis 0 (common/nms.h selects).
 *   TopK     with a run-time k (in[1]): values and indices of x's dims
 *            but along the axis k's bound (int_bound; at most the axis'
 *            length), counted along the axis;
 *            with x counted along the axis, its count in[2] limits k.
 *   Unique   y, indices and counts counted along the axis (y's; 0 for the
 *            others) bounded by its length L (x's elements without an
 *            axis), inverse_indices dense [L] (common/unique.h selects).
 * Every bound must fit int32 (the tasks' params and the om's dims
 * arithmetic), so a NonZero over 2^32 elements is refused by name.
 */
#include "ir/count.h"

#include <inttypes.h>
#include <string.h>

#include "common/elem.h"
#include "common/nms.h"
#include "common/unique.h"
#include "ir/eval.h"
#include "ir/eval_index.h"

/* The largest bound of a counted axis. */
#define COUNT_MAX_BOUND INT32_MAX

int ir_count_is_producer(const ir_node *n) {
  return n->op == IR_OP_NONZERO || n->op == IR_OP_NMS || n->op == IR_OP_UNIQUE ||
         (n->op == IR_OP_TOPK && n->nin > 1 && n->in[1]);
}

static int norm(int64_t a, int rank) { return (int)(a < 0 ? a + rank : a); }

static status set_out(ir_node *n, int k, dtype dt, int rank, const int64_t *dims, diag *d) {
  ir_value *y = n->out[k];
  if (!y) return ir_node_error(d, ST_ERR_INVALID, n, "output %d is missing", k);
  y->dtype = dt;
  ir_value_set_shape(y, rank, dims);
  y->count_axis = -1, y->count = NULL;
  if (ir_value_bytes(y) < 0) return ir_node_error(d, ST_ERR_LIMIT, n, "output '%s' is too large", y->name);
  return ST_OK;
}

/* Outputs 0 .. nout-2 are counted along axis by the producer's last one. */
static status set_counted(ir_node *n, int axis, diag *d) {
  ir_value *c = n->out[n->nout - 1];
  int64_t one = 1;
  status st = set_out(n, n->nout - 1, DT_INT64, 1, &one, d);
  if (st) return st;
  for (int k = 0; k + 1 < n->nout; k++)
    n->out[k]->count_axis = axis, n->out[k]->count = c;
  return ST_OK;
}

static status check_bound(ir_node *n, int64_t bound, const char *what, diag *d) {
  if (bound < 0 || bound > COUNT_MAX_BOUND)
    return ir_node_error(d, ST_ERR_LIMIT, n,
                         "the output's bound (%s) is %" PRId64 " entries; at most %d are supported", what,
                         bound, COUNT_MAX_BOUND);
  return ST_OK;
}

static status infer_nonzero(ir_node *n, diag *d) {
  const ir_value *x = n->in[0];
  int64_t total = ir_value_elements(x);
  status st = check_bound(n, total, "the input's element count", d);
  if (st) return st;
  if (!dtype_size(x->dtype))
    return ir_node_error(d, ST_ERR_UNSUPPORTED, n, "input '%s' has dtype %s", x->name,
                         dtype_name(x->dtype) ? dtype_name(x->dtype) : "?");
  int64_t dims[2] = {x->rank > 0 ? x->rank : 1, total};
  if ((st = set_out(n, 0, DT_INT64, 2, dims, d))) return st;
  return set_counted(n, 1, d);
}

/* TopK over x counted along its axis takes x's count as in[2] (the
 * importer adds it: onnx_import_topk): only the valid positions compete.
 * x counted along another axis would need two counts on the outputs. */
static status topk_input_count(const ir_node *n, int axis, diag *d) {
  const ir_value *x = n->in[0], *c = n->nin > 2 ? n->in[2] : NULL;
  if (c && (c->dtype != DT_INT64 || ir_value_elements(c) != 1))
    return ir_node_error(d, ST_ERR_INVALID, n, "input 2 '%s' (x's count) must be i64 [1]", c->name);
  if (x->count_axis < 0 || !x->count) return ST_OK;
  if (x->count_axis == axis && x->count == c) return ST_OK;
  return ir_node_error(d, ST_ERR_UNSUPPORTED, n,
                       "input 0 '%s' has a run-time extent along axis %d (bound %" PRId64
                       ", counted by '%s'): TopK takes a count along its axis %d only",
                       x->name, x->count_axis, x->dims[x->count_axis], x->count->name, axis);
}

static int is_int(int dt) { return dt == DT_INT64 || dt == DT_INT32; }

/* An upper bound on the elements of integer value v (smallest: on its
 * smallest element), read off its producers: a constant's elements, a
 * count (at most its values' bound), the Reshape family, an integer Cast,
 * Gather, Concat (the smallest element of a Concat is at most each part's
 * smallest), Min and a Reduce min over one whole value; INT64_MAX when none
 * is known. torchvision's detectors take k = min(topk_candidates, count)
 * this way (_topk_min: ReduceMin of a Concat of the constant and the
 * count), and the bound keeps what follows the TopK at k's size. */
static int64_t int_bound(const ir_value *v, int smallest, int depth) {
  const ir_node *p = v->producer;
  int64_t b = INT64_MAX;
  if (!is_int(v->dtype) || depth > 16) return b;
  if (v->data) {
    int64_t n = ir_value_elements(v), at = 0;
    for (int64_t i = 0; i < n; i++) {
      int64_t e = elem_get_int(v->data, v->dtype, (size_t)i);
      if (!i || (smallest ? e < at : e > at)) at = e;
    }
    return n > 0 ? at : b;
  }
  if (!p) return b;
  if (ir_count_is_producer(p) && p->nout > 1 && v == p->out[p->nout - 1]) {
    const ir_value *y = p->out[0];
    return y->count_axis >= 0 && y->count == v ? y->dims[y->count_axis] : b;
  }
  switch (p->op) {
  case IR_OP_RESHAPE:
  case IR_OP_FLATTEN:
  case IR_OP_SQUEEZE:
  case IR_OP_UNSQUEEZE:
  case IR_OP_IDENTITY: return int_bound(p->in[0], smallest, depth + 1);
  case IR_OP_CAST: /* i32 -> i64 or the same: no wrap */
    return v->dtype == DT_INT64 || p->in[0]->dtype == DT_INT32 ? int_bound(p->in[0], smallest, depth + 1) : b;
  case IR_OP_GATHER: return int_bound(p->in[0], 0, depth + 1);
  case IR_OP_CONCAT:
  case IR_OP_MIN: {
    int min = p->op == IR_OP_MIN || smallest;
    for (int j = 0; j < p->nin; j++) {
      int64_t e = p->in[j] ? int_bound(p->in[j], smallest, depth + 1) : INT64_MAX;
      if (j == 0 || (min ? e < b : e > b)) b = e;
    }
    return b;
  }
  case IR_OP_REDUCE:
    if (strcmp(ir_attr_string(p, "mode", ""), "min")) return b;
    return int_bound(p->in[0], ir_value_elements(v) == 1, depth + 1);
  default: return b;
  }
}

static status infer_topk(ir_graph *g, ir_node *n, diag *d) {
  const ir_value *x = n->in[0], *k = n->in[1];
  int64_t a = ir_attr_int(n, "axis", -1);
  if (x->rank < 1 || a < -x->rank || a >= x->rank)
    return ir_node_error(d, ST_ERR_INVALID, n, "axis %" PRId64 " out of range for input '%s' of rank %d", a,
                         x->name, x->rank);
  int axis = norm(a, x->rank);
  if ((k->dtype != DT_INT64 && k->dtype != DT_INT32) || ir_value_elements(k) != 1)
    return ir_node_error(d, ST_ERR_INVALID, n, "input 1 '%s' (k) must hold one i64", k->name);
  status st = check_bound(n, x->dims[axis], "the axis' length", d);
  if (st) return st;
  if ((st = topk_input_count(n, axis, d))) return st;
  /* The outputs' extent: k's bound when it is below the axis' (kept as
   * attr bound, for later passes may fuse k's producers out of sight). */
  int64_t dims[MAX_RANK], kb = int_bound(k, 0, 0), was = ir_attr_int(n, "bound", x->dims[axis]);
  memcpy(dims, x->dims, sizeof dims);
  kb = kb < 1 ? 1 : kb;
  dims[axis] = kb < was ? kb : was < x->dims[axis] ? was : x->dims[axis];
  if (ir_attr_set_int(g, n, "axis", axis) ||
      (dims[axis] < x->dims[axis] && ir_attr_set_int(g, n, "bound", dims[axis])))
    return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory");
  if ((st = set_out(n, 0, x->dtype, x->rank, dims, d)) || (st = set_out(n, 1, DT_INT64, x->rank, dims, d)))
    return st;
  return set_counted(n, axis, d);
}

static int is_real(int dt) { return dt == DT_FLOAT32 || dt == DT_FLOAT16; }

/* NonMaxSuppression over boxes counted along N (axis 1) and scores along
 * theirs (axis 2) by one count takes it as in[4] (the importer adds it:
 * onnx_import_nms): only the valid boxes take part. */
static status nms_input_count(const ir_node *n, diag *d) {
  const ir_value *c = n->nin > 4 ? n->in[4] : NULL;
  if (c && (c->dtype != DT_INT64 || ir_value_elements(c) != 1))
    return ir_node_error(d, ST_ERR_INVALID, n, "input 4 '%s' (the boxes' count) must be i64 [1]", c->name);
  for (int j = 0; j < 4 && j < n->nin; j++) {
    const ir_value *x = n->in[j];
    if (!x || x->count_axis < 0 || !x->count || (j < 2 && x->count_axis == j + 1 && x->count == c)) continue;
    return ir_node_error(d, ST_ERR_UNSUPPORTED, n,
                         "input %d '%s' has a run-time extent along axis %d (bound %" PRId64
                         ", counted by '%s'): NonMaxSuppression takes one count along the boxes' axis only",
                         j, x->name, x->count_axis, x->dims[x->count_axis], x->count->name);
  }
  return ST_OK;
}

static status infer_nms(ir_node *n, diag *d) {
  const ir_value *b = n->in[0], *s = n->in[1];
  if (b->rank != 3 || b->dims[2] != 4 || s->rank != 3 || s->dims[0] != b->dims[0] || s->dims[2] != b->dims[1])
    return ir_node_error(d, ST_ERR_INVALID, n, "boxes %s and scores %s must be [B, N, 4] and [B, C, N]",
                         ir_dims_str(b->rank, b->dims), ir_dims_str(s->rank, s->dims));
  status st = nms_input_count(n, d);
  if (st) return st;
  for (int j = 0; j < n->nin && j < 4; j++)
    if (n->in[j] && (!is_real(n->in[j]->dtype) || (j >= 2 && ir_value_elements(n->in[j]) != 1)))
      return ir_node_error(d, ST_ERR_INVALID, n, "input %d '%s' must be f32%s", j, n->in[j]->name,
                           j >= 2 ? " with one element" : "");
  int64_t max = ir_attr_int(n, "max_per_class", 0), per = max < b->dims[1] ? max : b->dims[1], bound;
  if (per < 0 || __builtin_mul_overflow(b->dims[0] * s->dims[1], per, &bound)) bound = -1;
  st = check_bound(n, bound, "batches x classes x min(max_output_boxes_per_class, boxes)", d);
  if (st) return st;
  int64_t dims[2] = {bound, 3};
  if ((st = set_out(n, 0, DT_INT64, 2, dims, d))) return st;
  return set_counted(n, 0, d);
}

/* Unique's outputs 0, 1 and 3 are counted by out[4], y along `axis`, the
 * [L] ones along 0; inverse_indices (out[2]) stays dense. */
static status infer_unique(ir_graph *g, ir_node *n, diag *d) {
  const ir_value *x = n->in[0];
  int has_axis = ir_attr_find(n, "axis") != NULL;
  int64_t a = ir_attr_int(n, "axis", 0), total = ir_value_elements(x);
  if (has_axis && (a < -x->rank || a >= x->rank))
    return ir_node_error(d, ST_ERR_INVALID, n, "axis %" PRId64 " out of range for input '%s' of rank %d", a,
                         x->name, x->rank);
  if (!dtype_size(x->dtype))
    return ir_node_error(d, ST_ERR_UNSUPPORTED, n, "input '%s' has dtype %s", x->name,
                         dtype_name(x->dtype) ? dtype_name(x->dtype) : "?");
  int axis = has_axis ? norm(a, x->rank) : 0;
  int64_t len = has_axis ? x->dims[axis] : total;
  status st = check_bound(n, len, has_axis ? "the axis' length" : "the input's element count", d);
  if (st) return st;
  if (has_axis && ir_attr_set_int(g, n, "axis", axis))
    return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory");
  if ((st = has_axis ? set_out(n, 0, x->dtype, x->rank, x->dims, d) : set_out(n, 0, x->dtype, 1, &len, d)))
    return st;
  for (int k = 1; k < 4; k++)
    if ((st = set_out(n, k, DT_INT64, 1, &len, d))) return st;
  if ((st = set_counted(n, 0, d))) return st;
  n->out[0]->count_axis = axis;
  n->out[2]->count_axis = -1, n->out[2]->count = NULL;
  return ST_OK;
}

status ir_count_infer(ir_graph *g, ir_node *n, diag *d) {
  if (n->nout != ir_ops[n->op].max_out)
    return ir_node_error(d, ST_ERR_INVALID, n, "%d outputs, expected %d (the last is the count)", n->nout,
                         ir_ops[n->op].max_out);
  switch (n->op) {
  case IR_OP_NONZERO: return infer_nonzero(n, d);
  case IR_OP_TOPK: return infer_topk(g, n, d);
  case IR_OP_NMS: return infer_nms(n, d);
  case IR_OP_UNIQUE: return infer_unique(g, n, d);
  default: return ir_node_error(d, ST_ERR_INVALID, n, "does not produce a counted output");
  }
}

/* ---- propagation ---- */

static int64_t prod(const int64_t *dims, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; i++)
    p *= dims[i];
  return p;
}

/* The Reshape family: the output axis with the same extent and the same
 * product of dims before it, or -1. */
static int reshaped_axis(const ir_value *x, int a, const ir_value *y) {
  int64_t before = prod(x->dims, 0, a);
  for (int b = 0; b < y->rank; b++)
    if (y->dims[b] == x->dims[a] && prod(y->dims, 0, b) == before) return b;
  return -1;
}

/* carried_axis's answer for an input whose count does not reach the output
 * and is not needed there. */
#define COUNT_DROPPED (-2)

/* GatherND (batch_dims b, indices [..., m]): counted indices carry their
 * axis (any but the last: their padding rows are zeros, valid positions);
 * counted data carries a batch axis or one it copies whole (from b + m on),
 * and is refused along the axes the indices address. */
static int gathernd_axis(const ir_node *n, int j, int a) {
  const ir_value *ix = n->in[1];
  int b = (int)ir_attr_int(n, "batch_dims", 0), q = ix->rank, m = q > 0 ? (int)ix->dims[q - 1] : 0;
  if (j == 1) return a < q - 1 ? a : -1;
  if (a < b) return a;
  return a >= b + m ? q - 1 + a - (b + m) : -1;
}

/* Shape of a counted value with [start, end) covering the counted axis
 * reads the count; the importer makes it a run-time value
 * (frontend/onnx_ops_index.c's onnx_import_shape) and what is left here
 * reads only static dims. */
static int shape_reads_count(const ir_node *n, int a) {
  int r = n->in[0]->rank;
  int64_t s = ir_attr_int(n, "start", 0), e = ir_attr_int(n, "end", r);
  s = s < 0 ? s + r : s, e = e < 0 ? e + r : e;
  return a >= s && a < e;
}

/* Where input j's counted axis a lands in n's output 0, -1 when n cannot
 * carry it, COUNT_DROPPED when n does not need it. */
static int carried_axis(const ir_node *n, int j, int a) {
  const ir_value *x = n->in[j], *y = n->out[0];
  ir_fusion f = ir_ops[n->op].fusion;
  if (f == IR_FUSE_ELEMWISE || f == IR_FUSE_BROADCAST) {
    int b = a + y->rank - x->rank;
    return b >= 0 && y->dims[b] == x->dims[a] ? b : -1;
  }
  switch (n->op) {
  case IR_OP_RESHAPE:
  case IR_OP_FLATTEN:
  case IR_OP_SQUEEZE:
  case IR_OP_UNSQUEEZE:
  case IR_OP_IDENTITY: /* with_padding: the importer gathers the valid prefix after it */
    if (j == 0 && n->op == IR_OP_RESHAPE && ir_attr_int(n, "with_padding", 0)) return COUNT_DROPPED;
    return j == 0 ? reshaped_axis(x, a, y) : -1;
  case IR_OP_TRANSPOSE: {
    int64_t perm[MAX_RANK];
    int np = ir_attr_ints(n, "perm", perm, MAX_RANK);
    for (int b = 0; b < y->rank; b++)
      if ((np == y->rank ? perm[b] : y->rank - 1 - b) == a) return b;
    return -1;
  }
  case IR_OP_SLICE: {
    int64_t axes[MAX_RANK];
    int na = ir_attr_ints(n, "axes", axes, MAX_RANK);
    if (na < 0) na = ir_attr_ints(n, "starts", axes, MAX_RANK), na = na < 0 ? 0 : na;
    for (int i = 0; i < na; i++)
      if (norm(ir_attr_find(n, "axes") ? axes[i] : i, x->rank) == a) return -1;
    return a;
  }
  case IR_OP_SOFTMAX: { /* axis normalised; coerce_2d (opset < 13) spans axis.. */
    int s = (int)ir_attr_int(n, "axis", -1);
    return (ir_attr_int(n, "coerce_2d", 0) ? a < s : a != s) ? a : -1;
  }
  case IR_OP_REDUCE: { /* across the axis: it stays, shifted by the dropped axes before it */
    uint32_t mask;
    if (j != 0 || ir_reduce_mask(n, x->rank, &mask)) return -1;
    if ((mask >> a) & 1u) /* over it: only when the importer neutralised the padding */
      return ir_attr_int(n, "with_padding", 0) ? COUNT_DROPPED : -1;
    return ir_attr_int(n, "keepdims", 1) ? a : a - __builtin_popcount(mask & ((1u << a) - 1u));
  }
  case IR_OP_SPLIT: return norm(ir_attr_int(n, "axis", 0), x->rank) != a ? a : -1; /* every output */
  case IR_OP_CONCAT: /* along the axis: only over the bounds (the importer packs after it) */
    if (norm(ir_attr_int(n, "axis", 0), x->rank) != a) return a;
    return ir_attr_int(n, "with_padding", 0) ? COUNT_DROPPED : -1;
  case IR_OP_GATHER: {
    const ir_value *ix = n->in[1];
    int axis = norm(ir_attr_int(n, "axis", 0), n->in[0]->rank);
    if (j == 1) return axis + a; /* counted indices: their padding is 0, a valid index */
    /* Along data's counted axis with counted indices (positions a NonZero,
     * TopK or NonMaxSuppression made, below the data's count): the indices'
     * count alone counts the output and no valid index reaches the padding.
     * (A negative index would address the bound, not the count; those
     * producers make none.) */
    if (a == axis) return ix->count_axis >= 0 ? COUNT_DROPPED : -1;
    return a < axis ? a : a - 1 + ix->rank;
  }
  case IR_OP_GATHERND: return gathernd_axis(n, j, a);
  case IR_OP_EXPAND: { /* an axis it does not broadcast stays */
    int b = a + y->rank - x->rank;
    return j == 0 && b >= 0 && y->dims[b] == x->dims[a] ? b : -1;
  }
  case IR_OP_SCATTERELEMENTS: /* the importer's: padding indices point at a spare slot */
    return j > 0 && ir_attr_int(n, "with_padding", 0) ? COUNT_DROPPED : -1;
  case IR_OP_CONV: /* images of a batch (a detector's mask head over its RoIs) */
    return j == 0 && a == 0 ? 0 : -1;
  case IR_OP_GEMM: /* rows of A (not transposed): each output row reads its own */
    return j == 0 && a == 0 && !ir_attr_int(n, "transA", 0) ? 0 : -1;
  case IR_OP_MATMUL: /* rows of A or a batch axis of A: not the contracted one */
    return j == 0 && a < x->rank - 1 ? a + y->rank - x->rank : -1;
  case IR_OP_SHAPE: return shape_reads_count(n, a) ? -1 : COUNT_DROPPED;
  default: return -1;
  }
}

static status refuse(ir_node *n, int j, const char *why, diag *d) {
  const ir_value *x = n->in[j];
  return ir_node_error(d, ST_ERR_UNSUPPORTED, n,
                       "input %d '%s' has a run-time extent along axis %d (bound %" PRId64
                       ", counted by '%s'): %s",
                       j, x->name, x->count_axis, x->dims[x->count_axis], x->count->name, why);
}

status ir_count_propagate(ir_node *n, diag *d) {
  if (ir_count_is_producer(n)) return ST_OK;
  for (int k = 0; k < n->nout; k++)
    if (n->out[k]) n->out[k]->count_axis = -1, n->out[k]->count = NULL;
  int axis = -1;
  ir_value *count = NULL;
  for (int j = 0; j < n->nin; j++) {
    const ir_value *x = n->in[j];
    if (!x || x->count_axis < 0 || !x->count) continue;
    int b = carried_axis(n, j, x->count_axis);
    if (b == COUNT_DROPPED) continue;
    if (b < 0) return refuse(n, j, "this op would read the padding past the count as data", d);
    if (count && (count != x->count || axis != b))
      return refuse(n, j, "another input is counted differently", d);
    axis = b, count = x->count;
  }
  if (!count) return ST_OK;
  for (int k = 0; k < n->nout; k++) {
    ir_value *y = n->out[k];
    if (!y) continue;
    if (y->rank != n->out[0]->rank || y->dims[axis] != n->out[0]->dims[axis])
      return ir_node_error(d, ST_ERR_UNSUPPORTED, n, "output %d '%s' cannot carry the count of axis %d", k,
                           y->name, axis);
    y->count_axis = axis, y->count = count;
  }
  return ST_OK;
}

/* ---- evaluation ---- */

static void *alloc_out(const ir_node *n, int k, void **out, arena *a) {
  int64_t bytes = ir_value_bytes(n->out[k]);
  out[k] = arena_alloc_aligned(a, bytes > 0 ? (size_t)bytes : 1, 64);
  if (out[k]) memset(out[k], 0, bytes > 0 ? (size_t)bytes : 1);
  return out[k];
}

static status eval_nonzero(const ir_node *n, const void *const *in, void **out, arena *a, diag *d) {
  const ir_value *x = n->in[0];
  int64_t total = ir_value_elements(x), bound = n->out[0]->dims[1], at = 0;
  int64_t *y = alloc_out(n, 0, out, a), *count = alloc_out(n, 1, out, a);
  if (!y || !count) return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory evaluating");
  if (bound != total)
    return ir_node_error(d, ST_ERR_INVALID, n, "output bound %" PRId64 " != %" PRId64, bound, total);
  for (int64_t i = 0; i < total; i++) {
    if (elem_get(in[0], x->dtype, (size_t)i) == 0) continue; /* NaN != 0: counted */
    int64_t rest = i;
    for (int r = x->rank - 1; r >= 0; r--)
      y[(int64_t)r * bound + at] = rest % x->dims[r], rest /= x->dims[r];
    at++;
  }
  *count = at;
  return ST_OK;
}

static float get_real(const void *p, uint64_t i) {
  return elem_get(p, DT_FLOAT32, (size_t)i); /* the evaluator's inputs: converted to f32 below */
}

/* An f32 copy of input j (f16 widened), in a. */
static const float *as_f32(const ir_node *n, int j, const void *data, arena *a) {
  int64_t count = ir_value_elements(n->in[j]);
  float *f = arena_array(a, (size_t)(count > 0 ? count : 1), sizeof *f);
  for (int64_t i = 0; f && i < count; i++)
    f[i] = (float)elem_get(data, n->in[j]->dtype, (size_t)i);
  return f;
}

static status eval_nms(const ir_node *n, const void *const *in, void **out, arena *a, diag *d) {
  const ir_value *b = n->in[0], *s = n->in[1];
  int64_t B = b->dims[0], N = b->dims[1], C = s->dims[1], bound = n->out[0]->dims[0];
  int64_t max = ir_attr_int(n, "max_per_class", 0), *y = alloc_out(n, 0, out, a),
          *count = alloc_out(n, 1, out, a);
  const float *boxes = as_f32(n, 0, in[0], a), *scores = as_f32(n, 1, in[1], a);
  const float *iou = n->nin > 2 && n->in[2] ? as_f32(n, 2, in[2], a) : NULL;
  const float *st = n->nin > 3 && n->in[3] ? as_f32(n, 3, in[3], a) : NULL;
  int64_t valid = n->nin > 4 && n->in[4] ? *(const int64_t *)in[4] : N; /* counted boxes: their count */
  valid = valid < 0 ? 0 : valid > N ? N : valid;
  if (!y || !count || !boxes || !scores || (n->nin > 2 && n->in[2] && !iou) ||
      (n->nin > 3 && n->in[3] && !st))
    return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory evaluating");
  int64_t rows = 0, per = max < N ? max : N;
  for (int64_t bi = 0; bi < B; bi++)
    for (int64_t c = 0; c < C; c++) {
      if (rows + per > bound)
        return ir_node_error(d, ST_ERR_INVALID, n, "output bound %" PRId64 " too small", bound);
      int64_t k = nms_class(boxes, (uint64_t)(bi * N * 4), scores, (uint64_t)((bi * C + c) * N),
                            (uint64_t)valid, get_real, (int)ir_attr_int(n, "center_point_box", 0),
                            iou ? iou[0] : 0.0f, st != NULL, st ? st[0] : 0.0f, per, y + rows * 3 + 2, 3);
      for (int64_t j = 0; j < k; j++)
        y[(rows + j) * 3] = bi, y[(rows + j) * 3 + 1] = c;
      rows += k;
    }
  *count = rows;
  return ST_OK;
}

static status eval_unique(const ir_node *n, const void *const *in, void **out, arena *a, diag *d) {
  const ir_value *x = n->in[0];
  int64_t outer = 1, inner = 1, len = n->out[1]->dims[0];
  if (ir_attr_find(n, "axis")) {
    int axis = (int)ir_attr_int(n, "axis", 0);
    for (int i = 0; i < x->rank; i++)
      if (i < axis)
        outer *= x->dims[i];
      else if (i > axis)
        inner *= x->dims[i];
  }
  for (int k = 0; k < 5; k++)
    if (!alloc_out(n, k, out, a)) return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory evaluating");
  if (outer * len * inner != ir_value_elements(x))
    return ir_node_error(d, ST_ERR_INVALID, n, "output bound %" PRId64 " does not match input '%s'", len,
                         x->name);
  *(int64_t *)out[4] = len ? unique_run(in[0], x->dtype, outer, len, inner, (int)ir_attr_int(n, "sorted", 1),
                                        out[0], out[1], out[2], out[3])
                           : 0;
  return ST_OK;
}

status ir_count_eval(const ir_node *n, const void *const *inputs, void **outputs_out, arena *a, diag *d) {
  switch (n->op) {
  case IR_OP_NONZERO: return eval_nonzero(n, inputs, outputs_out, a, d);
  case IR_OP_TOPK: return ir_eval_index(n, inputs, outputs_out, a, d); /* its k from in[1] */
  case IR_OP_NMS: return eval_nms(n, inputs, outputs_out, a, d);
  case IR_OP_UNIQUE: return eval_unique(n, inputs, outputs_out, a, d);
  default: return ir_node_error(d, ST_ERR_UNSUPPORTED, n, "not a counted op");
  }
}
