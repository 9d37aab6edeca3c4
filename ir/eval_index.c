/* eval_index.c - the reference evaluator's indexing ops (eval_index.h).
 *
 * Each op is the ONNX definition over C-order buffers, written for clarity:
 * TopK sorts every line with an insertion sort under the order of
 * om_format.h's TOPK (value, NaN highest, then index); ScatterElements and
 * ScatterND copy data and apply the updates in C order (so duplicates with
 * reduction "none" leave the last one); CumSum / CumProd run along each
 * line; GatherND and OneHot walk the output; TfIdfVectorizer counts as
 * common/tfidf.h states. Integers are exact in int64
 * (wrapping arithmetic), floats computed in double and rounded once to the
 * output dtype. Indices outside [-D, D) are errors naming the node, as in
 * the other index ops of eval.c; the output shapes are checked against the
 * inputs before any element is touched.
 */
#include "ir/eval_index.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/elem.h"
#include "common/tfidf.h"
#include "ir/eval.h"
#include "ir/eval_internal.h"

static void *alloc_out(ev *e, int j) {
  int64_t bytes = ir_value_bytes(e->n->out[j]);
  e->out[j] = arena_alloc_aligned(e->a, bytes > 0 ? (size_t)bytes : 1, 64);
  return e->out[j];
}

static int64_t prod(const int64_t *dims, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; i++)
    p *= dims[i];
  return p;
}

static status bad_index(ev *e, int64_t k, int64_t D) {
  return fail(e, ST_ERR_INVALID, "index %lld out of range [%lld, %lld)", (long long)k, (long long)-D,
              (long long)D);
}

/* Output j must have `rank` dims equal to dims[] and dtype dt. */
static status want_out(ev *e, int j, int dt, int rank, const int64_t *dims) {
  const ir_value *y = e->n->out[j];
  int ok = (int)y->dtype == dt && y->rank == rank;
  for (int d = 0; ok && d < rank; d++)
    ok = y->dims[d] == dims[d];
  return ok ? ST_OK
            : fail(e, ST_ERR_INVALID, "output '%s' does not have the shape or dtype the inputs imply",
                   y->name);
}

static int axis_of(const ir_node *n, int rank) {
  int64_t a = ir_attr_int(n, "axis", 0);
  if (a < 0) a += rank;
  return a < 0 || a >= rank ? -1 : (int)a;
}

/* ---- TopK ---- */

/* Line values as doubles (NaN kept) or, for integers, exactly. */
typedef struct topk_line {
  const void *x;
  int dt, largest;
  int64_t base, inner;
} topk_line;

static int topk_before(const topk_line *L, int64_t a, int64_t b) {
  int64_t ia = L->base + a * L->inner, ib = L->base + b * L->inner;
  int cmp;
  if (is_float(L->dt)) {
    double va = elem_get(L->x, L->dt, ia), vb = elem_get(L->x, L->dt, ib);
    cmp = isnan(va) || isnan(vb) ? isnan(va) - isnan(vb) : (va > vb) - (va < vb);
  } else if (L->dt == DT_UINT64) {
    uint64_t va = (uint64_t)elem_get_int(L->x, L->dt, ia), vb = (uint64_t)elem_get_int(L->x, L->dt, ib);
    cmp = (va > vb) - (va < vb);
  } else {
    int64_t va = elem_get_int(L->x, L->dt, ia), vb = elem_get_int(L->x, L->dt, ib);
    cmp = (va > vb) - (va < vb);
  }
  if (!L->largest) cmp = -cmp;
  return cmp > 0 || (cmp == 0 && a < b);
}

/* A run-time k (in[1], ir/count.h): the outputs keep k's bound (attr
 * bound, else the axis' length), the k' = min(max(k, 0), bound) best come
 * first, zeros after them, and
 * out[2] gets k'. With x counted along the axis (in[2], its count n), only
 * the first min(n, length) positions compete and k' is at most that. */
static status eval_topk(ev *e) {
  const ir_value *X = e->n->in[0];
  int axis = axis_of(e->n, X->rank), counted = e->n->nin > 1 && e->n->in[1];
  int64_t k = counted ? elem_get_int(e->in[1], e->n->in[1]->dtype, 0) : ir_attr_int(e->n, "k", -1);
  if (axis < 0) return fail(e, ST_ERR_INVALID, "axis out of range for '%s'", X->name);
  int64_t D = X->dims[axis], inner = prod(X->dims, axis + 1, X->rank), outer = prod(X->dims, 0, axis);
  int64_t valid = e->n->nin > 2 && e->n->in[2] ? elem_get_int(e->in[2], e->n->in[2]->dtype, 0) : D;
  valid = valid < 0 ? 0 : valid > D ? D : valid;
  int64_t dims[MAX_RANK], kb = counted ? ir_attr_int(e->n, "bound", D) : k; /* the outputs' extent */
  if (counted) k = k < 0 ? 0 : k > valid ? valid : k > kb ? kb : k;
  if (k < 0 || k > D || kb < 0 || kb > D) return fail(e, ST_ERR_INVALID, "k out of range for '%s'", X->name);
  memcpy(dims, X->dims, sizeof dims);
  dims[axis] = kb;
  status st = want_out(e, 0, X->dtype, X->rank, dims);
  if (!st) st = want_out(e, 1, DT_INT64, X->rank, dims);
  if (st) return st;
  size_t es = dtype_size(X->dtype);
  unsigned char *y = alloc_out(e, 0);
  int64_t *yi = alloc_out(e, 1), *order = arena_array(e->a, (size_t)(D > 0 ? D : 1), sizeof *order);
  if (!y || !yi || !order || (counted && !alloc_out(e, 2))) return nomem(e);
  memset(y, 0, (size_t)ir_value_bytes(e->n->out[0]));
  memset(yi, 0, (size_t)ir_value_bytes(e->n->out[1]));
  if (counted) *(int64_t *)e->out[2] = k;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      topk_line L = {e->in[0], X->dtype, ir_attr_int(e->n, "largest", 1) != 0, o * D * inner + in, inner};
      for (int64_t j = 0; j < valid; j++) { /* insertion sort into rank order */
        int64_t at = j;
        while (at > 0 && topk_before(&L, j, order[at - 1]))
          order[at] = order[at - 1], at--;
        order[at] = j;
      }
      for (int64_t r = 0; r < k; r++) {
        int64_t to = (o * kb + r) * inner + in;
        memcpy(y + (size_t)to * es,
               (const unsigned char *)e->in[0] + (size_t)(L.base + order[r] * inner) * es, es);
        yi[to] = order[r];
      }
    }
  return ST_OK;
}

/* ---- ScatterElements, ScatterND ---- */

int ir_scatter_reduction(const ir_node *n) {
  static const char *const names[] = {"none", "add", "mul", "max", "min"};
  const char *r = ir_attr_string(n, "reduction", "none");
  for (int i = 0; i < 5; i++)
    if (!strcmp(r, names[i])) return i;
  return -1;
}

/* y[yi] = combine(y[yi], u[ui]). */
static void combine(void *y, int dt, int64_t yi, const void *u, int64_t ui, int red) {
  if (is_float(dt)) {
    double a = elem_get(y, dt, yi), b = elem_get(u, dt, ui);
    double r = red == 0   ? b
               : red == 1 ? a + b
               : red == 2 ? a * b
               : red == 3 ? (b > a ? b : a)
                          : (b < a ? b : a);
    elem_put(y, dt, yi, r);
    return;
  }
  int64_t a = elem_get_int(y, dt, yi), b = elem_get_int(u, dt, ui), r;
  int gt = dt == DT_UINT64 ? (uint64_t)b > (uint64_t)a : b > a;
  if (red == 0)
    r = b;
  else if (red == 1)
    r = (int64_t)((uint64_t)a + (uint64_t)b);
  else if (red == 2)
    r = (int64_t)((uint64_t)a * (uint64_t)b);
  else
    r = (red == 3) == gt ? b : a;
  elem_put_int(y, dt, yi, r);
}

/* Output 0 shaped as input 0 (X) and holding a copy of its data: where the
 * scatters start from. */
static status out_copy_of_in0(ev *e, const ir_value *X, unsigned char **y_out) {
  status st = want_out(e, 0, X->dtype, X->rank, X->dims);
  if (st) return st;
  unsigned char *y = alloc_out(e, 0);
  if (!y) return nomem(e);
  memcpy(y, e->in[0], (size_t)ir_value_elements(X) * dtype_size(X->dtype));
  *y_out = y;
  return ST_OK;
}

static status eval_scatter(ev *e) {
  const ir_value *X = e->n->in[0], *I = e->n->in[1], *U = e->n->in[2];
  int red = ir_scatter_reduction(e->n), nd = e->n->op == IR_OP_SCATTERND;
  if (red < 0)
    return fail(e, ST_ERR_INVALID, "unknown reduction '%s'", ir_attr_string(e->n, "reduction", ""));
  if ((I->dtype != DT_INT64 && I->dtype != DT_INT32) || U->dtype != X->dtype || X->rank < 1)
    return fail(e, ST_ERR_INVALID, "indices must be i32/i64 and updates of data's dtype");
  unsigned char *y;
  status st = out_copy_of_in0(e, X, &y);
  if (st) return st;
  if (!nd) {
    int axis = axis_of(e->n, X->rank);
    int ok = axis >= 0 && I->rank == X->rank && U->rank == I->rank;
    for (int d = 0; ok && d < I->rank; d++)
      ok = U->dims[d] == I->dims[d] && (d == axis || I->dims[d] <= X->dims[d]);
    if (!ok) return fail(e, ST_ERR_INVALID, "axis, indices or updates do not fit data '%s'", X->name);
    for (int64_t p = 0; p < ir_value_elements(U); p++) {
      int64_t k = elem_get_int(e->in[1], I->dtype, p), D = X->dims[axis], rest = p, at = 0, scale = 1;
      if (k < -D || k >= D) return bad_index(e, k, D);
      if (k < 0) k += D;
      for (int d = U->rank - 1; d >= 0; d--) {
        int64_t c = rest % U->dims[d];
        rest /= U->dims[d];
        at += (d == axis ? k : c) * scale;
        scale *= X->dims[d];
      }
      combine(y, X->dtype, at, e->in[2], p, red);
    }
    return ST_OK;
  }
  int64_t kd = I->rank >= 1 ? I->dims[I->rank - 1] : 0;
  int ok = kd >= 1 && kd <= X->rank && U->rank == I->rank - 1 + X->rank - kd;
  for (int d = 0; ok && d < U->rank; d++)
    ok = U->dims[d] == (d < I->rank - 1 ? I->dims[d] : X->dims[d - (I->rank - 1) + kd]);
  if (!ok) return fail(e, ST_ERR_INVALID, "indices or updates do not fit data '%s'", X->name);
  int64_t inner = prod(X->dims, (int)kd, X->rank), nslices = prod(I->dims, 0, I->rank - 1);
  for (int64_t j = 0; j < nslices; j++) {
    int64_t base = 0;
    for (int t = 0; t < kd; t++) {
      int64_t k = elem_get_int(e->in[1], I->dtype, j * kd + t), D = X->dims[t];
      if (k < -D || k >= D) return bad_index(e, k, D);
      base = base * D + (k < 0 ? k + D : k);
    }
    for (int64_t i = 0; i < inner; i++)
      combine(y, X->dtype, base * inner + i, e->in[2], j * inner + i, red);
  }
  return ST_OK;
}

/* TensorScatter: update[b, .., s, ..] goes to y[b, .., w[b] + s, ..] (mod the
 * axis's extent when circular; past it is an error, as ONNX says). */
static status eval_tensorscatter(ev *e) {
  const ir_value *X = e->n->in[0], *U = e->n->in[1], *W = e->n->nin > 2 ? e->n->in[2] : NULL;
  int axis = axis_of(e->n, X->rank), circ = !strcmp(ir_attr_string(e->n, "mode", "linear"), "circular");
  int ok = axis >= 1 && U->dtype == X->dtype && U->rank == X->rank &&
           (!W || (W->dtype == DT_INT64 && W->rank == 1 && W->dims[0] == X->dims[0]));
  for (int d = 0; ok && d < X->rank; d++)
    ok = d == axis ? U->dims[d] <= X->dims[d] : U->dims[d] == X->dims[d];
  if (!ok) return fail(e, ST_ERR_INVALID, "update or write_indices do not fit past_cache '%s'", X->name);
  unsigned char *y;
  status st = out_copy_of_in0(e, X, &y);
  if (st) return st;
  size_t es = dtype_size(X->dtype);
  int64_t D = X->dims[axis], inner = prod(X->dims, axis + 1, X->rank), outer = prod(X->dims, 0, axis);
  int64_t per_batch = prod(X->dims, 1, axis); /* prefixes per batch entry */
  for (int64_t o = 0; o < outer; o++)
    for (int64_t s = 0; s < U->dims[axis]; s++) {
      int64_t w = W ? ((const int64_t *)e->in[2])[o / per_batch] : 0, t = w + s;
      if (circ)
        t = ((t % D) + D) % D;
      else if (w < 0 || t >= D)
        return bad_index(e, t, D);
      memcpy(y + (size_t)((o * D + t) * inner) * es,
             (const unsigned char *)e->in[1] + (size_t)((o * U->dims[axis] + s) * inner) * es,
             (size_t)inner * es);
    }
  return ST_OK;
}

/* ---- CumSum, CumProd ---- */

static status eval_cum(ev *e) {
  const ir_value *X = e->n->in[0];
  int axis = axis_of(e->n, X->rank), mul = e->n->op == IR_OP_CUMPROD;
  int excl = ir_attr_int(e->n, "exclusive", 0) != 0, rev = ir_attr_int(e->n, "reverse", 0) != 0;
  if (axis < 0) return fail(e, ST_ERR_INVALID, "axis out of range for '%s'", X->name);
  status st = want_out(e, 0, X->dtype, X->rank, X->dims);
  if (st) return st;
  void *y = alloc_out(e, 0);
  if (!y) return nomem(e);
  int64_t D = X->dims[axis], inner = prod(X->dims, axis + 1, X->rank), outer = prod(X->dims, 0, axis);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      double f = mul;
      uint64_t i = (uint64_t)mul;
      for (int64_t s = 0; s < D; s++) {
        int64_t at = (o * D + (rev ? D - 1 - s : s)) * inner + in;
        if (is_float(X->dtype)) {
          double v = elem_get(e->in[0], X->dtype, at), next = mul ? f * v : f + v;
          elem_put(y, X->dtype, at, excl ? f : next);
          f = next;
        } else {
          uint64_t v = (uint64_t)elem_get_int(e->in[0], X->dtype, at), next = mul ? i * v : i + v;
          elem_put_int(y, X->dtype, at, (int64_t)(excl ? i : next));
          i = next;
        }
      }
    }
  return ST_OK;
}

/* ---- GatherND ---- */

static status eval_gathernd(ev *e) {
  const ir_value *X = e->n->in[0], *I = e->n->in[1];
  int64_t b = ir_attr_int(e->n, "batch_dims", 0), kd = I->rank >= 1 ? I->dims[I->rank - 1] : 0;
  int ok = (I->dtype == DT_INT64 || I->dtype == DT_INT32) && b >= 0 && b < I->rank && b < X->rank &&
           kd >= 1 && kd <= X->rank - b;
  for (int d = 0; ok && d < b; d++)
    ok = I->dims[d] == X->dims[d];
  if (!ok) return fail(e, ST_ERR_INVALID, "batch_dims or indices %s do not fit data '%s'", I->name, X->name);
  int64_t dims[2 * MAX_RANK];
  int rank = 0;
  for (int d = 0; d < I->rank - 1; d++)
    dims[rank++] = I->dims[d];
  for (int d = (int)(b + kd); d < X->rank; d++)
    dims[rank++] = X->dims[d];
  status st = rank > MAX_RANK ? fail(e, ST_ERR_LIMIT, "output rank exceeds %d", MAX_RANK)
                              : want_out(e, 0, X->dtype, rank, dims);
  if (st) return st;
  size_t es = dtype_size(X->dtype);
  unsigned char *y = alloc_out(e, 0);
  if (!y) return nomem(e);
  int64_t inner = prod(X->dims, (int)(b + kd), X->rank), rows = prod(I->dims, 0, I->rank - 1);
  int64_t per_batch = prod(I->dims, (int)b, I->rank - 1), slab = prod(X->dims, (int)b, X->rank);
  for (int64_t r = 0; r < rows; r++) {
    int64_t at = 0;
    for (int t = 0; t < kd; t++) {
      int64_t k = elem_get_int(e->in[1], I->dtype, r * kd + t), D = X->dims[b + t];
      if (k < -D || k >= D) return bad_index(e, k, D);
      at = at * D + (k < 0 ? k + D : k);
    }
    memcpy(y + (size_t)(r * inner) * es,
           (const unsigned char *)e->in[0] + (size_t)(r / per_batch * slab + at * inner) * es,
           (size_t)inner * es);
  }
  return ST_OK;
}

/* ---- OneHot ---- */

static status eval_onehot(ev *e) {
  const ir_value *I = e->n->in[0], *V = e->n->in[1], *Y = e->n->out[0];
  int64_t depth = ir_attr_int(e->n, "depth", -1);
  int axis = axis_of(e->n, I->rank + 1);
  if (depth < 0 || axis < 0 || ir_value_elements(V) != 2 || I->rank + 1 > MAX_RANK)
    return fail(e, ST_ERR_INVALID, "depth, axis or values '%s' invalid", V->name);
  int64_t dims[MAX_RANK];
  for (int d = 0, s = 0; d <= I->rank; d++)
    dims[d] = d == axis ? depth : I->dims[s++];
  status st = want_out(e, 0, V->dtype, I->rank + 1, dims);
  if (st) return st;
  size_t es = dtype_size(Y->dtype);
  unsigned char *y = alloc_out(e, 0);
  if (!y) return nomem(e);
  int64_t inner = prod(dims, axis + 1, I->rank + 1), outer = prod(dims, 0, axis);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < depth; j++)
      for (int64_t in = 0; in < inner; in++) {
        int64_t src = o * inner + in, k;
        if (is_float(I->dtype)) {
          double f = trunc(elem_get(e->in[0], I->dtype, src));
          k = isnan(f) || f < -(double)depth || f >= (double)depth ? depth : (int64_t)f; /* depth: no match */
        } else {
          k = elem_get_int(e->in[0], I->dtype, src);
          if (I->dtype == DT_UINT64 && k < 0) k = depth; /* beyond int64: out of range */
        }
        if (k < 0 && k >= -depth) k += depth;
        memcpy(y + (size_t)((o * depth + j) * inner + in) * es,
               (const unsigned char *)e->in[1] + (k == j ? es : 0), es);
      }
  return ST_OK;
}

/* ---- TfIdfVectorizer ---- */

static status eval_tfidf(ev *e) {
  const ir_node *n = e->n;
  const ir_value *X = n->in[0], *T = n->in[1], *W = n->nin > 2 ? n->in[2] : NULL, *Y = n->out[0];
  int64_t outs = ir_attr_int(n, "outs", 0), rows = X->rank == 2 ? X->dims[0] : 1, dims[2] = {rows, outs};
  status st = want_out(e, 0, DT_FLOAT32, X->rank, X->rank == 2 ? dims : &outs);
  if (st) return st;
  if (T->rank != 2 || T->dtype != DT_INT64 || Y->rank < 1) return fail(e, ST_ERR_INVALID, "bad n-gram table");
  float *y = alloc_out(e, 0);
  if (!y) return nomem(e);
  tfidf_run(e->in[0], X->dtype, rows, X->dims[X->rank - 1], e->in[1], T->dims[0], T->dims[1],
            ir_attr_int(n, "max_skip", 0), (int)ir_attr_int(n, "mode", 0), W ? e->in[2] : NULL, outs, y);
  return ST_OK;
}

int ir_eval_is_index(ir_op op) {
  switch (op) {
  case IR_OP_TOPK:
  case IR_OP_SCATTERELEMENTS:
  case IR_OP_SCATTERND:
  case IR_OP_TENSORSCATTER:
  case IR_OP_CUMSUM:
  case IR_OP_CUMPROD:
  case IR_OP_GATHERND:
  case IR_OP_ONEHOT:
  case IR_OP_TFIDF: return 1;
  default: return 0;
  }
}

status ir_eval_index(const ir_node *n, const void *const *inputs, void **outputs_out, arena *a, diag *d) {
  ev e = {n, inputs, outputs_out, a, d};
  switch (n->op) {
  case IR_OP_TOPK: return eval_topk(&e);
  case IR_OP_SCATTERELEMENTS:
  case IR_OP_SCATTERND: return eval_scatter(&e);
  case IR_OP_TENSORSCATTER: return eval_tensorscatter(&e);
  case IR_OP_CUMSUM:
  case IR_OP_CUMPROD: return eval_cum(&e);
  case IR_OP_GATHERND: return eval_gathernd(&e);
  case IR_OP_ONEHOT: return eval_onehot(&e);
  case IR_OP_TFIDF: return eval_tfidf(&e);
  default: return fail(&e, ST_ERR_UNSUPPORTED, "not an indexing op");
  }
}
