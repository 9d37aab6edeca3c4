/* shape_index.c - the shape rules of the indexing ops (ir/shape_index.h).
 *
 * The rules are ONNX's, stated once per op as the checks the runtime's
 * kernels repeat at load (runtime/kernels_index.c), so a model these rules
 * accept never meets a load-time refusal:
 *   TopK            values and indices (i64) have x's dims with dims[axis] =
 *                   k, 0 <= k <= dims[axis];
 *   ScatterElements indices (i32/i64) and updates share dims and data's rank,
 *                   every dim but the axis at most data's; y is data's shape;
 *   ScatterND       indices [J..., kd], 1 <= kd <= rank, updates dims
 *                   J + data dims[kd:]; y is data's shape;
 *   CumSum/CumProd  y is x's shape;
 *   GatherND        indices [B..., J..., kd] (B equal to data's first
 *                   batch_dims dims), y dims J-with-B + data dims[b+kd:];
 *   OneHot          y = indices dims with depth inserted at the axis, in the
 *                   dtype of values (2 elements);
 *   TfIdfVectorizer x i32/i64 [C] or [B, C], table i64 [ngrams, width >= 3],
 *                   weights f32 [outs]; y f32 [outs] or [B, outs].
 * Every axis attribute is normalised to >= 0; k and depth must fit int32
 * (the task params).
 */
#include "ir/shape_index.h"

#include <stdio.h>
#include <string.h>

#include "common/elem.h"
#include "ir/eval_index.h"

typedef struct sx {
  ir_graph *g;
  ir_node *n;
  diag *d;
} sx;

/* Errors name the node: ir_node_error over the context's diag and node. */
#define fail(s, code, ...) ir_node_error((s)->d, (code), (s)->n, __VA_ARGS__)

static const char *dims_str(const ir_value *v) { return ir_dims_str(v->rank, v->dims); }

static int is_index_dtype(int dt) { return dt == DT_INT64 || dt == DT_INT32; }

/* The axis attribute normalised against `rank` and written back. */
static status norm_axis(sx *s, int rank, const char *what, int *axis_out) {
  int64_t a = ir_attr_int(s->n, "axis", 0);
  if (a < -rank || a >= rank)
    return fail(s, ST_ERR_INVALID, "axis %lld out of range for %s of rank %d", (long long)a, what, rank);
  *axis_out = (int)(a < 0 ? a + rank : a);
  return ir_attr_set_int(s->g, s->n, "axis", *axis_out) ? fail(s, ST_ERR_NOMEM, "out of memory") : ST_OK;
}

static status set_out(sx *s, int k, dtype dt, int rank, const int64_t *dims) {
  ir_value *y = s->n->out[k];
  if (!y) return fail(s, ST_ERR_INVALID, "output %d is missing", k);
  if (rank > MAX_RANK) return fail(s, ST_ERR_LIMIT, "output rank %d exceeds %d", rank, MAX_RANK);
  y->dtype = dt;
  ir_value_set_shape(y, rank, dims);
  if (ir_value_bytes(y) < 0) return fail(s, ST_ERR_LIMIT, "output '%s' is too large", y->name);
  return ST_OK;
}

static status need_indices(sx *s, int i) {
  const ir_value *v = s->n->in[i];
  if (!is_index_dtype(v->dtype))
    return fail(s, ST_ERR_INVALID, "indices '%s' have dtype %s; expected i64 or i32", v->name,
                dtype_name(v->dtype) ? dtype_name(v->dtype) : "?");
  return ST_OK;
}

status ir_shape_check_indices(const ir_node *n, const ir_value *ix, int period, const int64_t *dims,
                              diag *d) {
  if (!ix->data || period < 1) return ST_OK;
  int64_t count = ir_value_elements(ix);
  for (int64_t i = 0; i < count; i++) {
    int64_t k = elem_get_int(ix->data, ix->dtype, (size_t)i), D = dims[i % period];
    if (k < -D || k >= D)
      return ir_node_error(d, ST_ERR_INVALID, n,
                           "index %lld at position %lld of constant indices '%s' %s is out of range "
                           "[%lld, %lld)",
                           (long long)k, (long long)i, ix->name, dims_str(ix), (long long)-D, (long long)D);
  }
  return ST_OK;
}

static status infer_topk(sx *s) {
  const ir_value *x = s->n->in[0];
  int axis;
  status st = norm_axis(s, x->rank, "input", &axis);
  if (st) return st;
  int64_t k = ir_attr_int(s->n, "k", -1), dims[MAX_RANK];
  if (k < 0 || k > x->dims[axis] || k > INT32_MAX)
    return fail(s, ST_ERR_INVALID, "k = %lld outside 0..%lld (axis %d of input %s)", (long long)k,
                (long long)x->dims[axis], axis, dims_str(x));
  if (s->n->nout != 2) return fail(s, ST_ERR_INVALID, "%d outputs, expected values and indices", s->n->nout);
  memcpy(dims, x->dims, sizeof dims);
  dims[axis] = k;
  st = set_out(s, 1, DT_INT64, x->rank, dims);
  return st ? st : set_out(s, 0, x->dtype, x->rank, dims);
}

static status infer_scatter(sx *s) {
  const ir_value *x = s->n->in[0], *ix = s->n->in[1], *u = s->n->in[2];
  status st = need_indices(s, 1);
  if (st) return st;
  if (ir_scatter_reduction(s->n) < 0)
    return fail(s, ST_ERR_INVALID, "reduction '%s' is not none, add, mul, max or min",
                ir_attr_string(s->n, "reduction", ""));
  if (u->dtype != x->dtype)
    return fail(s, ST_ERR_INVALID, "updates '%s' (%s) and data '%s' (%s) differ in dtype", u->name,
                dtype_name(u->dtype) ? dtype_name(u->dtype) : "?", x->name,
                dtype_name(x->dtype) ? dtype_name(x->dtype) : "?");
  if (x->rank < 1) return fail(s, ST_ERR_INVALID, "data '%s' is a scalar", x->name);
  if (s->n->op == IR_OP_SCATTERELEMENTS) {
    int axis;
    if ((st = norm_axis(s, x->rank, "data", &axis))) return st;
    int ok = ix->rank == x->rank && u->rank == ix->rank;
    for (int d = 0; ok && d < x->rank; d++)
      ok = u->dims[d] == ix->dims[d] && (d == axis || ix->dims[d] <= x->dims[d]);
    if (!ok)
      return fail(
          s, ST_ERR_INVALID,
          "indices %s and updates %s must share dims of data %s's rank, at most data's but on axis %d",
          dims_str(ix), dims_str(u), dims_str(x), axis);
    if ((st = ir_shape_check_indices(s->n, ix, 1, &x->dims[axis], s->d))) return st;
  } else {
    int64_t kd = ix->rank >= 1 ? ix->dims[ix->rank - 1] : 0;
    int ok = kd >= 1 && kd <= x->rank && u->rank == ix->rank - 1 + x->rank - kd;
    for (int d = 0; ok && d < u->rank; d++)
      ok = u->dims[d] == (d < ix->rank - 1 ? ix->dims[d] : x->dims[d - (ix->rank - 1) + kd]);
    if (!ok)
      return fail(s, ST_ERR_INVALID, "indices %s and updates %s do not fit data %s (ScatterND)", dims_str(ix),
                  dims_str(u), dims_str(x));
    if ((st = ir_shape_check_indices(s->n, ix, (int)kd, x->dims, s->d))) return st;
  }
  return set_out(s, 0, x->dtype, x->rank, x->dims);
}

/* TensorScatter: update is past_cache but shorter (or equal) on the axis
 * (>= 1: dim 0 is the batch); write_indices i64 [batch]. */
static status infer_tensorscatter(sx *s) {
  const ir_value *x = s->n->in[0], *u = s->n->in[1], *w = s->n->nin > 2 ? s->n->in[2] : NULL;
  const char *mode = ir_attr_string(s->n, "mode", "linear");
  if (strcmp(mode, "linear") && strcmp(mode, "circular"))
    return fail(s, ST_ERR_INVALID, "mode '%s' is not linear or circular", mode);
  int axis;
  status st = norm_axis(s, x->rank, "past_cache", &axis);
  if (st) return st;
  int ok = axis >= 1 && u->dtype == x->dtype && u->rank == x->rank;
  for (int d = 0; ok && d < x->rank; d++)
    ok = d == axis ? u->dims[d] <= x->dims[d] : u->dims[d] == x->dims[d];
  if (!ok)
    return fail(s, ST_ERR_INVALID,
                "update %s does not fit past_cache %s on axis %d (>= 1, the batch is dim 0)", dims_str(u),
                dims_str(x), axis);
  if (w && (w->dtype != DT_INT64 || w->rank != 1 || w->dims[0] != x->dims[0]))
    return fail(s, ST_ERR_INVALID, "write_indices '%s' %s must be i64 [%lld]", w->name, dims_str(w),
                (long long)x->dims[0]);
  return set_out(s, 0, x->dtype, x->rank, x->dims);
}

static status infer_cum(sx *s) {
  const ir_value *x = s->n->in[0];
  int axis;
  status st = norm_axis(s, x->rank, "input", &axis);
  return st ? st : set_out(s, 0, x->dtype, x->rank, x->dims);
}

static status infer_gathernd(sx *s) {
  const ir_value *x = s->n->in[0], *ix = s->n->in[1];
  status st = need_indices(s, 1);
  if (st) return st;
  int64_t b = ir_attr_int(s->n, "batch_dims", 0), kd = ix->rank >= 1 ? ix->dims[ix->rank - 1] : 0;
  if (b < 0 || b >= ix->rank || b >= x->rank)
    return fail(s, ST_ERR_INVALID, "batch_dims %lld out of range for data %s and indices %s", (long long)b,
                dims_str(x), dims_str(ix));
  int ok = kd >= 1 && kd <= x->rank - b;
  for (int d = 0; ok && d < b; d++)
    ok = ix->dims[d] == x->dims[d];
  if (!ok)
    return fail(s, ST_ERR_INVALID, "indices %s do not fit data %s with batch_dims %lld", dims_str(ix),
                dims_str(x), (long long)b);
  if ((st = ir_shape_check_indices(s->n, ix, (int)kd, &x->dims[b], s->d))) return st;
  int64_t dims[2 * MAX_RANK];
  int rank = 0;
  for (int d = 0; d < ix->rank - 1; d++)
    dims[rank++] = ix->dims[d];
  for (int d = (int)(b + kd); d < x->rank; d++)
    dims[rank++] = x->dims[d];
  return set_out(s, 0, x->dtype, rank, dims);
}

static status infer_onehot(sx *s) {
  const ir_value *ix = s->n->in[0], *v = s->n->in[1];
  int64_t depth = ir_attr_int(s->n, "depth", -1), dims[MAX_RANK + 1];
  if (depth < 0 || depth > INT32_MAX)
    return fail(s, ST_ERR_INVALID, "depth %lld out of range", (long long)depth);
  if (ir_value_elements(v) != 2)
    return fail(s, ST_ERR_INVALID, "values '%s' %s must hold 2 elements (off, on)", v->name, dims_str(v));
  if (ix->rank + 1 > MAX_RANK) return fail(s, ST_ERR_LIMIT, "output rank exceeds %d", MAX_RANK);
  if (!dtype_size(ix->dtype) || ix->dtype == DT_BOOL)
    return fail(s, ST_ERR_INVALID, "indices '%s' must be numeric", ix->name);
  int axis;
  status st = norm_axis(s, ix->rank + 1, "the output", &axis);
  if (st) return st;
  for (int d = 0, k = 0; d <= ix->rank; d++)
    dims[d] = d == axis ? depth : ix->dims[k++];
  return set_out(s, 0, v->dtype, ix->rank + 1, dims);
}

static status infer_tfidf(sx *s) {
  const ir_value *x = s->n->in[0], *t = s->n->in[1], *w = s->n->nin > 2 ? s->n->in[2] : NULL;
  int64_t outs = ir_attr_int(s->n, "outs", 0), mode = ir_attr_int(s->n, "mode", 0),
          skip = ir_attr_int(s->n, "max_skip", 0);
  if (!is_index_dtype(x->dtype) || x->rank < 1 || x->rank > 2)
    return fail(s, ST_ERR_INVALID, "input '%s' %s must be i32 or i64 of rank 1 or 2", x->name, dims_str(x));
  if (t->dtype != DT_INT64 || t->rank != 2 || t->dims[1] < 3)
    return fail(s, ST_ERR_INVALID, "n-gram table '%s' %s must be i64 [ngrams, >= 3]", t->name, dims_str(t));
  if (outs < 1 || outs > INT32_MAX || mode < 0 || mode > 2 || skip < 0 || skip > INT32_MAX)
    return fail(s, ST_ERR_INVALID, "outs %lld, mode %lld or max_skip %lld out of range", (long long)outs,
                (long long)mode, (long long)skip);
  if (w && (w->dtype != DT_FLOAT32 || ir_value_elements(w) != outs))
    return fail(s, ST_ERR_INVALID, "weights '%s' must be f32 [%lld]", w->name, (long long)outs);
  int64_t dims[2] = {x->dims[0], outs};
  return x->rank == 2 ? set_out(s, 0, DT_FLOAT32, 2, dims) : set_out(s, 0, DT_FLOAT32, 1, &outs);
}

status ir_shape_infer_index(ir_graph *g, ir_node *n, diag *d) {
  sx s = {g, n, d};
  switch (n->op) {
  case IR_OP_TOPK: return infer_topk(&s);
  case IR_OP_SCATTERELEMENTS:
  case IR_OP_SCATTERND: return infer_scatter(&s);
  case IR_OP_TENSORSCATTER: return infer_tensorscatter(&s);
  case IR_OP_CUMSUM:
  case IR_OP_CUMPROD: return infer_cum(&s);
  case IR_OP_GATHERND: return infer_gathernd(&s);
  case IR_OP_ONEHOT: return infer_onehot(&s);
  case IR_OP_TFIDF: return infer_tfidf(&s);
  default: return fail(&s, ST_ERR_INVALID, "not an indexing op");
  }
}
