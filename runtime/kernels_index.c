/* kernels_index.c - the indexing task kinds (contracts in om_format.h):
 * TOPK, SCATTER, CUMSUM, ONEHOT, and GATHER's GatherND mode (mode 2; the
 * GATHER kernel hands that mode over to rt_gathernd_run / _check).
 *
 * Elements are read and written through common/elem.h, which knows every
 * dtype the kinds take: elem_get_int (integers widened to int64; u64
 * reinterpreted), elem_get (floats to double), elem_put_int (stored
 * truncated, bool as 0/1) and elem_put. Lines
 * (TOPK, CUMSUM) are the 1-D runs along the axis: line l is (o, in) with
 * o = l / inner, in = l % inner, its element j at (o * D + j) * inner + in.
 *
 * TOPK orders a line with a strict total order (value, NaN highest, then
 * index), so the result does not depend on the algorithm: the k best
 * positions are kept in a heap that lives in the line's own slots of the
 * indices output (O(D log k), no scratch), heap-sorted at the end, and the
 * values copied after them. SCATTER blocks own ranges of y:
 * each copies its range of data and applies, in update order, the updates
 * that land in it, so the result is the sequential one for any block_dim.
 * Nothing here allocates; every dim relation the walks rely on is checked
 * at load, with overflow-safe products.
 */
#include <math.h>

#include "common/elem.h"
#include "runtime/kernels.h"

static int is_flt(uint32_t dt) { return dt == DT_FLOAT16 || dt == DT_FLOAT32 || dt == DT_DOUBLE; }

/* The float dtypes a task may convert between (ix_move). */
static int is_cvt(uint32_t dt) { return dt == DT_FLOAT16 || dt == DT_FLOAT32; }

static int is_int(uint32_t dt) {
  return dt == DT_INT8 || dt == DT_UINT8 || dt == DT_INT16 || dt == DT_UINT16 || dt == DT_INT32 ||
         dt == DT_UINT32 || dt == DT_INT64 || dt == DT_UINT64;
}

/* Copies element si of src to element di of dst: bytes, or f16 <-> f32. */
static void ix_move(void *dst, uint32_t dt, uint64_t di, const void *src, uint32_t st, uint64_t si) {
  if (dt == st) {
    size_t es = dtype_size((int)dt);
    memmove((uint8_t *)dst + di * es, (const uint8_t *)src + si * es, es);
  } else {
    rt_put(dst, (int)dt, (size_t)di, rt_get(src, (int)st, (size_t)si));
  }
}

/* An index k against extent D: k, k + D when negative, -1 when outside. */
static int64_t ix_wrap(int64_t k, int64_t D) {
  if (k < 0) k += D;
  return k < 0 || k >= D ? -1 : k;
}

/* ix_wrap for an index ONNX requires in range: one outside is core's fault. */
static int64_t ix_need(int64_t k, int64_t D, rt_core *core) {
  int64_t w = ix_wrap(k, D);
  if (w < 0) rt_index_fault(core, k, D);
  return w;
}

/* Product of dims [from, to); the checks bounded it. */
static uint64_t ix_prod(const om_tensor *t, uint32_t from, uint32_t to) {
  uint64_t n = 1;
  for (uint32_t d = from; d < to; d++)
    n *= (uint64_t)t->dims[d];
  return n;
}

/* Overflow-checked product of every dim but `skip` (lines of a tensor). */
static int ix_lines(const om_tensor *t, uint32_t skip, uint64_t *out) {
  uint64_t n = 1;
  for (uint32_t d = 0; d < t->rank; d++)
    if (d != skip && mul_u64(n, (uint64_t)t->dims[d], &n)) return -1;
  *out = n;
  return 0;
}

/* params[from..] are all 0. */
static omrt_status ix_unused(const rt_chk *c, int from) {
  for (int k = from; k < OM_TASK_MAX_PARAMS; k++)
    if (c->task->params[k] != 0)
      return rt_chk_fail(c, "params[%d] = %d, expected 0 (unused)", k, c->task->params[k]);
  return OMRT_OK;
}

static omrt_status ix_flag(const rt_chk *c, int k, const char *name) {
  int32_t v = c->task->params[k];
  if (v != 0 && v != 1) return rt_chk_fail(c, "params[%d] %s = %d, expected 0 or 1", k, name, v);
  return OMRT_OK;
}

/* y's dims are x's with dims[axis] replaced by n. */
static omrt_status ix_dims_but_axis(const rt_chk *c, const char *wx, const om_tensor *x, const char *wy,
                                    const om_tensor *y, uint32_t axis, int64_t n) {
  if (y->rank != x->rank) return rt_chk_fail(c, "%s rank %u != %s rank %u", wy, y->rank, wx, x->rank);
  for (uint32_t d = 0; d < x->rank; d++) {
    int64_t want = d == axis ? n : x->dims[d];
    if (y->dims[d] != want)
      return rt_chk_fail(c, "%s dims[%u] = %lld, expected %lld", wy, d, (long long)y->dims[d],
                         (long long)want);
  }
  return OMRT_OK;
}

/* ---- TOPK ---- */

typedef struct topk_line {
  const void *x;
  uint32_t dt;
  uint64_t base, inner; /* element j of the line is x[base + j * inner] */
  int largest;
} topk_line;

/* The order of two integer elements (> 0: a's value is larger). Out of
 * line, so that topk_before stays small enough to inline into the line's
 * loop for the common float case. */
__attribute__((noinline)) static int topk_cmp_int(const topk_line *L, uint64_t ia, uint64_t ib) {
  int64_t va = elem_get_int(L->x, (int)L->dt, ia), vb = elem_get_int(L->x, (int)L->dt, ib);
  if (L->dt == DT_UINT64) return ((uint64_t)va > (uint64_t)vb) - ((uint64_t)va < (uint64_t)vb);
  return (va > vb) - (va < vb);
}

/* 1 when position a ranks before position b. */
static inline int topk_before(const topk_line *L, uint64_t a, uint64_t b) {
  uint64_t ia = L->base + a * L->inner, ib = L->base + b * L->inner;
  int cmp; /* > 0: a's value ranks first */
  if (is_flt(L->dt)) {
    double fa = elem_get(L->x, (int)L->dt, ia), fb = elem_get(L->x, (int)L->dt, ib);
    int na = isnan(fa), nb = isnan(fb);
    if (na || nb)
      cmp = na - nb; /* NaN is the highest value */
    else
      cmp = (fa > fb) - (fa < fb);
  } else {
    cmp = topk_cmp_int(L, ia, ib);
  }
  if (!L->largest) cmp = -cmp;
  return cmp > 0 || (cmp == 0 && a < b);
}

/* The kept positions of a line live in its indices output, k slots `inner`
 * apart: a heap whose root is the latest-ranked position kept. */
typedef struct topk_heap {
  int64_t *p;
  uint64_t stride;
} topk_heap;

static int64_t *hp(const topk_heap *h, uint64_t i) { return h->p + i * h->stride; }

static void heap_swap(const topk_heap *h, uint64_t a, uint64_t b) {
  int64_t t = *hp(h, a);
  *hp(h, a) = *hp(h, b), *hp(h, b) = t;
}

static void sift_down(const topk_line *L, const topk_heap *h, uint64_t at, uint64_t n) {
  for (;;) {
    uint64_t c = 2 * at + 1;
    if (c >= n) return;
    if (c + 1 < n && topk_before(L, (uint64_t)*hp(h, c), (uint64_t)*hp(h, c + 1))) c++; /* the later child */
    if (!topk_before(L, (uint64_t)*hp(h, at), (uint64_t)*hp(h, c))) return;
    heap_swap(h, at, c);
    at = c;
  }
}

static void sift_up(const topk_line *L, const topk_heap *h, uint64_t at) {
  while (at > 0 && topk_before(L, (uint64_t)*hp(h, (at - 1) / 2), (uint64_t)*hp(h, at))) {
    heap_swap(h, at, (at - 1) / 2);
    at = (at - 1) / 2;
  }
}

void rt_topk_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  (void)core;
  const om_tensor *x = args->desc[OM_TOPK_T_X], *v = args->desc[OM_TOPK_T_VALUES];
  const uint32_t axis = (uint32_t)task->params[OM_TOPK_P_AXIS];
  const uint64_t D = (uint64_t)x->dims[axis], kb = (uint64_t)task->params[OM_TOPK_P_K],
                 inner = ix_prod(x, axis + 1, x->rank);
  uint64_t k = kb, n = D; /* kb: the outputs' extent along the axis; k: the best taken of n */
  if (task->ntensors == OM_TOPK_NTENSORS_EXTENT) { /* x counted along the axis */
    int64_t c = *(const int64_t *)args->data[OM_TOPK_T_EXTENT];
    n = c < 0 ? 0 : (uint64_t)c > D ? D : (uint64_t)c;
  }
  if (task->ntensors >= OM_TOPK_NTENSORS_COUNTED) { /* a run-time k, clamped to 0..min(kb, n) */
    const om_tensor *kt = args->desc[OM_TOPK_T_K];
    int64_t want = kt->dtype == DT_INT32 ? *(const int32_t *)args->data[OM_TOPK_T_K]
                                         : *(const int64_t *)args->data[OM_TOPK_T_K];
    uint64_t most = kb < n ? kb : n;
    k = want < 0 ? 0 : (uint64_t)want > most ? most : (uint64_t)want;
    if (block == 0) *(int64_t *)args->data[OM_TOPK_T_COUNT] = (int64_t)k;
  }
  uint64_t lines = 0, lo, hi;
  ix_lines(x, axis, &lines); /* checked at load */
  rt_block_range(lines, task->block_dim, block, &lo, &hi);
  for (uint64_t l = lo; l < hi && kb > 0; l++) {
    uint64_t o = l / inner, in = l % inner, out = o * kb * inner + in;
    topk_line L = {args->data[OM_TOPK_T_X], x->dtype, o * D * inner + in, inner,
                   task->params[OM_TOPK_P_LARGEST]};
    topk_heap h = {(int64_t *)args->data[OM_TOPK_T_INDICES] + out, inner};
    for (uint64_t j = 0; j < n && k > 0; j++) { /* keep the k best: O(n log k) */
      if (j < k) {
        *hp(&h, j) = (int64_t)j;
        sift_up(&L, &h, j);
      } else if (topk_before(&L, j, (uint64_t)*hp(&h, 0))) {
        *hp(&h, 0) = (int64_t)j;
        sift_down(&L, &h, 0, k);
      }
    }
    for (uint64_t end = k; end > 1; end--) { /* heap sort: best first */
      heap_swap(&h, 0, end - 1);
      sift_down(&L, &h, 0, end - 1);
    }
    for (uint64_t r = 0; r < k; r++)
      ix_move(args->data[OM_TOPK_T_VALUES], v->dtype, out + r * inner, L.x, x->dtype,
              L.base + (uint64_t)*hp(&h, r) * inner);
    for (uint64_t r = k; r < kb; r++) { /* past a run-time k: zeros */
      memset((uint8_t *)args->data[OM_TOPK_T_VALUES] + (out + r * inner) * dtype_size((int)v->dtype), 0,
             dtype_size((int)v->dtype));
      *hp(&h, r) = 0;
    }
  }
}

omrt_status rt_topk_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "TOPK"};
  const om_tensor *x = NULL, *v = NULL, *ix = NULL;
  omrt_status s;
  const om_tensor *kt = NULL, *n = NULL, *ext = NULL;
  if (task->ntensors >= OM_TOPK_NTENSORS_COUNTED &&
      ((s = rt_chk_nd_tensor(&c, OM_TOPK_T_K, "k", &kt)) ||
       (s = rt_chk_nd_tensor(&c, OM_TOPK_T_COUNT, "count", &n))))
    return s;
  if (kt && ((kt->dtype != DT_INT64 && kt->dtype != DT_INT32) || rt_elements(kt) != 1 ||
             n->dtype != DT_INT64 || rt_elements(n) != 1))
    return rt_chk_fail(&c, "k must be one i32/i64 and count i64 [1]");
  if (task->ntensors == OM_TOPK_NTENSORS_EXTENT &&
      ((s = rt_chk_nd_tensor(&c, OM_TOPK_T_EXTENT, "extent", &ext)) ||
       ((ext->dtype != DT_INT64 || rt_elements(ext) != 1) &&
        (s = rt_chk_fail(&c, "extent must be i64 [1]")))))
    return s;
  if ((s = rt_chk_ntensors(&c, ext  ? OM_TOPK_NTENSORS_EXTENT
                               : kt ? OM_TOPK_NTENSORS_COUNTED
                                    : OM_TOPK_NTENSORS)) ||
      (s = rt_chk_nd_tensor(&c, OM_TOPK_T_X, "x", &x)) ||
      (s = rt_chk_nd_tensor(&c, OM_TOPK_T_VALUES, "values", &v)) ||
      (s = rt_chk_nd_tensor(&c, OM_TOPK_T_INDICES, "indices", &ix)) || (s = ix_unused(&c, OM_TOPK_NPARAMS)) ||
      (s = ix_flag(&c, OM_TOPK_P_LARGEST, "largest")) || (s = ix_flag(&c, OM_TOPK_P_SORTED, "sorted")))
    return s;
  const int32_t a = task->params[OM_TOPK_P_AXIS], k = task->params[OM_TOPK_P_K];
  if (a < 0 || (uint32_t)a >= x->rank)
    return rt_chk_fail(&c, "params[%d] axis = %d out of range for x rank %u", OM_TOPK_P_AXIS, a, x->rank);
  uint32_t axis = (uint32_t)a;
  if (k < 0 || k > x->dims[axis])
    return rt_chk_fail(&c, "params[%d] k = %d outside 0..%lld", OM_TOPK_P_K, k, (long long)x->dims[axis]);
  if (!is_flt(x->dtype) && !is_int(x->dtype)) return rt_chk_fail(&c, "x dtype %u not supported", x->dtype);
  if (v->dtype != x->dtype && !(is_cvt(x->dtype) && is_cvt(v->dtype)))
    return rt_chk_fail(&c, "values dtype %u for x dtype %u: only equal dtypes or f16 <-> f32", v->dtype,
                       x->dtype);
  if (ix->dtype != DT_INT64) return rt_chk_fail(&c, "indices dtype %u, expected i64", ix->dtype);
  if ((s = ix_dims_but_axis(&c, "x", x, "values", v, axis, k)) ||
      (s = ix_dims_but_axis(&c, "x", x, "indices", ix, axis, k)))
    return s;
  uint64_t lines = 0;
  if (ix_lines(x, axis, &lines)) return rt_chk_fail(&c, "x has too many lines");
  return rt_chk_block_dim(&c, lines, "lines");
}

/* ---- SCATTER ---- */

enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN, RED_COUNT };

/* y[yi] = y[yi] (reduction) u[ui]. */
static void scatter_one(void *y, uint32_t dt, uint64_t yi, const void *u, uint64_t ui, int red) {
  if (red == RED_NONE) {
    ix_move(y, dt, yi, u, dt, ui);
  } else if (is_flt(dt)) { /* f16/f32: exact in double, then rounded once, as f32 arithmetic */
    double a = elem_get(y, dt, yi), b = elem_get(u, dt, ui);
    double r = red == RED_ADD   ? a + b
               : red == RED_MUL ? a * b
               : red == RED_MAX ? (b > a ? b : a)
                                : (b < a ? b : a);
    elem_put(y, dt, yi, dt == DT_DOUBLE ? r : (float)r);
  } else {
    int64_t a = elem_get_int(y, dt, yi), b = elem_get_int(u, dt, ui), r;
    int gt = dt == DT_UINT64 ? (uint64_t)b > (uint64_t)a : b > a;
    if (red == RED_ADD)
      r = (int64_t)((uint64_t)a + (uint64_t)b);
    else if (red == RED_MUL)
      r = (int64_t)((uint64_t)a * (uint64_t)b);
    else
      r = (red == RED_MAX) == gt ? b : a;
    elem_put_int(y, dt, yi, r);
  }
}

void rt_scatter_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  const om_tensor *ix = args->desc[OM_SCATTER_T_INDICES], *u = args->desc[OM_SCATTER_T_UPDATES],
                  *y = args->desc[OM_SCATTER_T_Y];
  const int mode = task->params[OM_SCATTER_P_MODE], red = task->params[OM_SCATTER_P_REDUCTION];
  const int circular = task->params[OM_SCATTER_P_CIRCULAR];
  const uint32_t axis = (uint32_t)task->params[OM_SCATTER_P_AXIS], dt = y->dtype;
  const size_t es = dtype_size((int)dt);
  const void *id = args->data[OM_SCATTER_T_INDICES], *ud = args->data[OM_SCATTER_T_UPDATES];
  void *yd = args->data[OM_SCATTER_T_Y];
  uint64_t lo, hi;
  rt_block_range(rt_elements(y), task->block_dim, block, &lo, &hi);
  memmove((uint8_t *)yd + lo * es, (const uint8_t *)args->data[OM_SCATTER_T_DATA] + lo * es, (hi - lo) * es);
  if (mode != 1) { /* update p goes to p with its axis coordinate replaced by k */
    const int64_t D = y->dims[axis];
    uint64_t n = rt_elements(u);
    for (uint64_t p = 0; p < n; p++) {
      uint64_t rest = p, at = 0, scale = 1, step = 0, c0 = 0, ca = 0;
      for (int d = (int)u->rank - 1; d >= 0; d--) {
        uint64_t cd = rest % (uint64_t)u->dims[d];
        rest /= (uint64_t)u->dims[d];
        if ((uint32_t)d == axis)
          ca = cd, step = scale;
        else
          at += cd * scale;
        c0 = cd;
        scale *= (uint64_t)y->dims[d];
      }
      int64_t k;
      if (mode == 0) { /* ScatterElements: k = indices[p] */
        k = ix_need(elem_get_int(id, ix->dtype, p), D, core);
      } else { /* TensorScatter: k = write_indices[batch] + the update's position */
        int64_t w = id ? elem_get_int(id, ix->dtype, c0) : 0;
        if (circular)
          k = ((w % D + D) % D + (int64_t)ca) % D;
        else
          k = w < 0 || w >= D || (int64_t)ca >= D - w ? -1 : w + (int64_t)ca;
      }
      if (k < 0) continue;
      at += (uint64_t)k * step;
      if (at >= lo && at < hi) scatter_one(yd, dt, at, ud, p, red);
    }
    return;
  }
  /* ScatterND: slice j of `inner` elements goes to y[indices[j, 0..kd), :] */
  const uint32_t kd = (uint32_t)ix->dims[ix->rank - 1];
  const uint64_t inner = ix_prod(y, kd, y->rank), nslices = ix_prod(ix, 0, ix->rank - 1);
  for (uint64_t j = 0; j < nslices; j++) {
    uint64_t base = 0;
    int ok = 1;
    for (uint32_t t = 0; t < kd && ok; t++) {
      int64_t k = ix_need(elem_get_int(id, ix->dtype, j * kd + t), y->dims[t], core);
      ok = k >= 0;
      base = base * (uint64_t)y->dims[t] + (uint64_t)(ok ? k : 0);
    }
    base *= inner;
    if (!ok || base + inner <= lo || base >= hi) continue;
    uint64_t from = base < lo ? lo : base, to = base + inner > hi ? hi : base + inner;
    for (uint64_t e = from; e < to; e++)
      scatter_one(yd, dt, e, ud, j * inner + (e - base), red);
  }
}

omrt_status rt_scatter_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "SCATTER"};
  const om_tensor *x = NULL, *ix = NULL, *u = NULL, *y = NULL;
  omrt_status s;
  const int32_t mode = task->params[OM_SCATTER_P_MODE], axis = task->params[OM_SCATTER_P_AXIS];
  const int32_t red = task->params[OM_SCATTER_P_REDUCTION], circular = task->params[OM_SCATTER_P_CIRCULAR];
  int ts = mode == 2,
      no_ix = ts && task->ntensors == OM_SCATTER_NTENSORS && task->tensors[OM_SCATTER_T_INDICES] == OM_NONE;
  if ((s = rt_chk_ntensors(&c, OM_SCATTER_NTENSORS)) ||
      (s = rt_chk_nd_tensor(&c, OM_SCATTER_T_DATA, "data", &x)) ||
      (!no_ix && (s = rt_chk_nd_tensor(&c, OM_SCATTER_T_INDICES, "indices", &ix))) ||
      (s = rt_chk_nd_tensor(&c, OM_SCATTER_T_UPDATES, "updates", &u)) ||
      (s = rt_chk_nd_tensor(&c, OM_SCATTER_T_Y, "y", &y)) ||
      (s = ix_unused(&c, ts ? OM_SCATTER_NPARAMS : OM_SCATTER_P_CIRCULAR)) || /* circular: TensorScatter's */
      (s = rt_chk_same_dims(&c, "y", y, "data", x)))
    return s;
  if (mode < 0 || mode > 2)
    return rt_chk_fail(&c, "params[%d] mode = %d, expected 0, 1 or 2", OM_SCATTER_P_MODE, mode);
  if (red < 0 || red >= RED_COUNT)
    return rt_chk_fail(&c, "params[%d] reduction = %d, expected 0..4", OM_SCATTER_P_REDUCTION, red);
  if (!is_flt(x->dtype) && !is_int(x->dtype) && x->dtype != DT_BOOL)
    return rt_chk_fail(&c, "data dtype %u not supported", x->dtype);
  if (u->dtype != x->dtype || y->dtype != x->dtype)
    return rt_chk_fail(&c, "data, updates and y dtypes %u, %u, %u differ", x->dtype, u->dtype, y->dtype);
  if (ix && ix->dtype != DT_INT32 && ix->dtype != DT_INT64)
    return rt_chk_fail(&c, "indices dtype %u, expected i32 or i64", ix->dtype);
  if (x->rank < 1) return rt_chk_fail(&c, "data has rank 0");
  if (ts) { /* TensorScatter: updates are data but shorter (or equal) on the axis */
    if (axis < 1 || (uint32_t)axis >= x->rank)
      return rt_chk_fail(&c, "params[%d] axis = %d, expected 1..%u", OM_SCATTER_P_AXIS, axis, x->rank - 1);
    if (red != 0 || (circular != 0 && circular != 1))
      return rt_chk_fail(&c, "params[%d] reduction = %d, params[%d] circular = %d: expected 0, and 0 or 1",
                         OM_SCATTER_P_REDUCTION, red, OM_SCATTER_P_CIRCULAR, circular);
    if ((s = ix_dims_but_axis(&c, "data", x, "updates", u, (uint32_t)axis,
                              u->rank == x->rank ? u->dims[axis] : 0)))
      return s;
    if (u->dims[axis] > x->dims[axis])
      return rt_chk_fail(&c, "updates dims[%d] = %lld exceeds data's %lld", axis, (long long)u->dims[axis],
                         (long long)x->dims[axis]);
    if (ix && (ix->rank != 1 || ix->dims[0] != x->dims[0]))
      return rt_chk_fail(&c, "write indices must be [%lld], one per batch entry", (long long)x->dims[0]);
    return rt_chk_block_dim(&c, rt_elements(y), "y elements");
  }
  if (mode == 0) {
    if (axis < 0 || (uint32_t)axis >= x->rank)
      return rt_chk_fail(&c, "params[%d] axis = %d out of range for data rank %u", OM_SCATTER_P_AXIS, axis,
                         x->rank);
    if ((s = rt_chk_same_dims(&c, "updates", u, "indices", ix))) return s;
    if (ix->rank != x->rank) return rt_chk_fail(&c, "indices rank %u != data rank %u", ix->rank, x->rank);
    for (uint32_t d = 0; d < x->rank; d++)
      if (d != (uint32_t)axis && ix->dims[d] > x->dims[d])
        return rt_chk_fail(&c, "indices dims[%u] = %lld exceeds data's %lld", d, (long long)ix->dims[d],
                           (long long)x->dims[d]);
  } else {
    if (axis != 0)
      return rt_chk_fail(&c, "params[%d] axis = %d, expected 0 for ScatterND", OM_SCATTER_P_AXIS, axis);
    if (ix->rank < 1) return rt_chk_fail(&c, "indices have rank 0");
    int64_t kd = ix->dims[ix->rank - 1];
    if (kd < 1 || kd > (int64_t)x->rank)
      return rt_chk_fail(&c, "indices dims[%u] = %lld, expected 1..%u", ix->rank - 1, (long long)kd, x->rank);
    uint32_t want = ix->rank - 1 + x->rank - (uint32_t)kd;
    if (u->rank != want) return rt_chk_fail(&c, "updates rank %u, expected %u", u->rank, want);
    for (uint32_t d = 0; d < want; d++) {
      int64_t w = d < ix->rank - 1 ? ix->dims[d] : x->dims[d - (ix->rank - 1) + (uint32_t)kd];
      if (u->dims[d] != w)
        return rt_chk_fail(&c, "updates dims[%u] = %lld, expected %lld", d, (long long)u->dims[d],
                           (long long)w);
    }
  }
  return rt_chk_block_dim(&c, rt_elements(y), "y elements");
}

/* ---- CUMSUM ---- */

void rt_cumsum_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  (void)core;
  const om_tensor *x = args->desc[OM_CUMSUM_T_X], *y = args->desc[OM_CUMSUM_T_Y];
  const uint32_t axis = (uint32_t)task->params[OM_CUMSUM_P_AXIS];
  const int excl = task->params[OM_CUMSUM_P_EXCLUSIVE], rev = task->params[OM_CUMSUM_P_REVERSE],
            prod = task->params[OM_CUMSUM_P_OP];
  const uint64_t D = (uint64_t)x->dims[axis], inner = ix_prod(x, axis + 1, x->rank);
  const void *xd = args->data[OM_CUMSUM_T_X];
  void *yd = args->data[OM_CUMSUM_T_Y];
  uint64_t lines = 0, lo, hi;
  ix_lines(x, axis, &lines);
  rt_block_range(lines, task->block_dim, block, &lo, &hi);
  for (uint64_t l = lo; l < hi; l++) {
    uint64_t base = l / inner * D * inner + l % inner;
    float facc = prod ? 1.0f : 0.0f;
    double dacc = prod ? 1.0 : 0.0;
    uint64_t iacc = prod ? 1 : 0;
    for (uint64_t s = 0; s < D; s++) {
      uint64_t at = base + (rev ? D - 1 - s : s) * inner;
      if (x->dtype == DT_DOUBLE) {
        double v = ((const double *)xd)[at], next = prod ? dacc * v : dacc + v;
        ((double *)yd)[at] = excl ? dacc : next;
        dacc = next;
      } else if (is_flt(x->dtype)) {
        float v = (float)elem_get(xd, x->dtype, at), next = prod ? facc * v : facc + v;
        rt_put(yd, (int)y->dtype, (size_t)at, excl ? facc : next);
        facc = next;
      } else {
        uint64_t v = (uint64_t)elem_get_int(xd, x->dtype, at), next = prod ? iacc * v : iacc + v;
        elem_put_int(yd, y->dtype, at, (int64_t)(excl ? iacc : next));
        iacc = next;
      }
    }
  }
}

omrt_status rt_cumsum_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "CUMSUM"};
  const om_tensor *x = NULL, *y = NULL;
  omrt_status s;
  if ((s = rt_chk_ntensors(&c, OM_CUMSUM_NTENSORS)) || (s = rt_chk_nd_tensor(&c, OM_CUMSUM_T_X, "x", &x)) ||
      (s = rt_chk_nd_tensor(&c, OM_CUMSUM_T_Y, "y", &y)) || (s = ix_unused(&c, OM_CUMSUM_NPARAMS)) ||
      (s = ix_flag(&c, OM_CUMSUM_P_EXCLUSIVE, "exclusive")) ||
      (s = ix_flag(&c, OM_CUMSUM_P_REVERSE, "reverse")) || (s = ix_flag(&c, OM_CUMSUM_P_OP, "op")) ||
      (s = rt_chk_same_dims(&c, "y", y, "x", x)))
    return s;
  int32_t axis = task->params[OM_CUMSUM_P_AXIS];
  if (axis < 0 || (uint32_t)axis >= x->rank)
    return rt_chk_fail(&c, "params[%d] axis = %d out of range for x rank %u", OM_CUMSUM_P_AXIS, axis,
                       x->rank);
  int ok = x->dtype == DT_INT32 || x->dtype == DT_INT64 || x->dtype == DT_UINT32 || x->dtype == DT_UINT64;
  if (!is_flt(x->dtype) && !ok) return rt_chk_fail(&c, "x dtype %u not supported", x->dtype);
  if (y->dtype != x->dtype && !(is_cvt(x->dtype) && is_cvt(y->dtype)))
    return rt_chk_fail(&c, "x dtype %u and y dtype %u: only equal dtypes or f16 <-> f32", x->dtype, y->dtype);
  uint64_t lines = 0;
  if (ix_lines(x, (uint32_t)axis, &lines)) return rt_chk_fail(&c, "x has too many lines");
  return rt_chk_block_dim(&c, lines, "lines");
}

/* ---- ONEHOT ---- */

void rt_onehot_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  (void)core;
  const om_tensor *ix = args->desc[OM_ONEHOT_T_INDICES], *y = args->desc[OM_ONEHOT_T_Y];
  const uint32_t axis = (uint32_t)task->params[OM_ONEHOT_P_AXIS];
  const int64_t depth = task->params[OM_ONEHOT_P_DEPTH];
  const uint64_t inner = ix_prod(y, axis + 1, y->rank);
  const size_t es = dtype_size((int)y->dtype);
  const void *id = args->data[OM_ONEHOT_T_INDICES];
  const uint8_t *vals = args->data[OM_ONEHOT_T_VALUES];
  uint8_t *yd = args->data[OM_ONEHOT_T_Y];
  uint64_t lo, hi;
  rt_block_range(rt_elements(y), task->block_dim, block, &lo, &hi);
  for (uint64_t i = lo; i < hi; i++) {
    uint64_t j = i / inner % (uint64_t)depth, at = i / inner / (uint64_t)depth * inner + i % inner;
    int64_t k;
    if (is_flt(ix->dtype)) {
      double f = elem_get(id, ix->dtype, at);
      k = f > -9.2e18 && f < 9.2e18 ? ix_wrap((int64_t)f, depth) : -1; /* NaN, huge: out of range */
    } else {
      int64_t raw = elem_get_int(id, ix->dtype, at);
      k = ix->dtype == DT_UINT64 && raw < 0 ? -1 : ix_wrap(raw, depth);
    }
    memcpy(yd + i * es, vals + (k == (int64_t)j ? es : 0), es);
  }
}

omrt_status rt_onehot_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "ONEHOT"};
  const om_tensor *ix = NULL, *v = NULL, *y = NULL;
  omrt_status s;
  if ((s = rt_chk_ntensors(&c, OM_ONEHOT_NTENSORS)) ||
      (s = rt_chk_nd_tensor(&c, OM_ONEHOT_T_INDICES, "indices", &ix)) ||
      (s = rt_chk_nd_tensor(&c, OM_ONEHOT_T_VALUES, "values", &v)) ||
      (s = rt_chk_nd_tensor(&c, OM_ONEHOT_T_Y, "y", &y)) || (s = ix_unused(&c, OM_ONEHOT_NPARAMS)))
    return s;
  const int32_t axis = task->params[OM_ONEHOT_P_AXIS], depth = task->params[OM_ONEHOT_P_DEPTH];
  if (!is_flt(ix->dtype) && !is_int(ix->dtype))
    return rt_chk_fail(&c, "indices dtype %u not supported", ix->dtype);
  if (v->dtype != y->dtype || rt_elements(v) != 2)
    return rt_chk_fail(&c, "values: dtype %u with %llu elements, expected 2 of y's dtype %u", v->dtype,
                       (unsigned long long)rt_elements(v), y->dtype);
  if (y->rank != ix->rank + 1)
    return rt_chk_fail(&c, "y rank %u, expected indices rank %u + 1", y->rank, ix->rank);
  if (axis < 0 || (uint32_t)axis >= y->rank)
    return rt_chk_fail(&c, "params[%d] axis = %d out of range for y rank %u", OM_ONEHOT_P_AXIS, axis,
                       y->rank);
  if (depth < 0) return rt_chk_fail(&c, "params[%d] depth = %d, expected >= 0", OM_ONEHOT_P_DEPTH, depth);
  for (uint32_t d = 0; d < y->rank; d++) {
    uint32_t a = (uint32_t)axis;
    int64_t want = d == a ? depth : ix->dims[d < a ? d : d - 1];
    if (y->dims[d] != want)
      return rt_chk_fail(&c, "y dims[%u] = %lld, expected %lld", d, (long long)y->dims[d], (long long)want);
  }
  return rt_chk_block_dim(&c, rt_elements(y), "y elements");
}

/* ---- GATHER mode 2: GatherND ---- */

void rt_gathernd_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  const om_tensor *x = args->desc[OM_GATHER_T_X], *ix = args->desc[OM_GATHER_T_INDICES],
                  *y = args->desc[OM_GATHER_T_Y];
  const void *xd = args->data[OM_GATHER_T_X], *id = args->data[OM_GATHER_T_INDICES];
  void *yd = args->data[OM_GATHER_T_Y];
  const uint32_t b = (uint32_t)task->params[OM_GATHER_P_AXIS], kd = (uint32_t)ix->dims[ix->rank - 1];
  const uint64_t inner = ix_prod(x, b + kd, x->rank), per_batch = ix_prod(ix, b, ix->rank - 1);
  const uint64_t slab = ix_prod(x, b, b + kd) * inner; /* x elements per batch entry */
  const size_t ys = dtype_size((int)y->dtype);
  const uint64_t rows = rt_gather_valid_indices(task, args) / kd; /* the rows read: a prefix */
  uint64_t lo, hi;
  rt_block_range(rt_elements(y), task->block_dim, block, &lo, &hi);
  if (rows * inner < hi) { /* past the count: zeros */
    uint64_t from = rows * inner > lo ? rows * inner : lo;
    memset((uint8_t *)yd + from * ys, 0, (hi - from) * ys);
    hi = from;
  }
  uint64_t i = lo;
  while (i < hi) {
    uint64_t row = i / inner, e = i % inner, n = inner - e < hi - i ? inner - e : hi - i;
    uint64_t at = 0;
    int ok = 1;
    for (uint32_t t = 0; t < kd && ok; t++) {
      int64_t k = ix_need(elem_get_int(id, ix->dtype, row * kd + t), x->dims[b + t], core);
      ok = k >= 0;
      at = at * (uint64_t)x->dims[b + t] + (uint64_t)(ok ? k : 0);
    }
    if (!ok) {
      memset((uint8_t *)yd + i * ys, 0, n * ys);
    } else {
      uint64_t from = row / per_batch * slab + at * inner + e;
      if (y->dtype == x->dtype) /* the run at once */
        memcpy((uint8_t *)yd + i * ys, (const uint8_t *)xd + from * ys, n * ys);
      for (uint64_t t = 0; t < n && y->dtype != x->dtype; t++)
        ix_move(yd, y->dtype, i + t, xd, x->dtype, from + t);
    }
    i += n;
  }
}

omrt_status rt_gathernd_check(const rt_chk *c, const om_tensor *x, const om_tensor *ix, const om_tensor *y) {
  int32_t b = c->task->params[OM_GATHER_P_AXIS]; /* batch_dims */
  if (ix->rank < 1 || b < 0 || (uint32_t)b >= x->rank || (uint32_t)b >= ix->rank)
    return rt_chk_fail(c, "params[%d] batch_dims = %d out of range for x rank %u and indices rank %u",
                       OM_GATHER_P_AXIS, b, x->rank, ix->rank);
  int64_t kd = ix->dims[ix->rank - 1];
  if (kd < 1 || kd > (int64_t)x->rank - b)
    return rt_chk_fail(c, "indices dims[%u] = %lld, expected 1..%d", ix->rank - 1, (long long)kd,
                       (int)x->rank - b);
  for (int32_t d = 0; d < b; d++)
    if (ix->dims[d] != x->dims[d])
      return rt_chk_fail(c, "indices dims[%d] = %lld != x dims[%d] = %lld (batch)", d, (long long)ix->dims[d],
                         d, (long long)x->dims[d]);
  uint32_t want = ix->rank - 1 + x->rank - (uint32_t)b - (uint32_t)kd;
  if (want > MAX_RANK || y->rank != want) return rt_chk_fail(c, "y rank %u, expected %u", y->rank, want);
  for (uint32_t d = 0; d < want; d++) {
    int64_t w = d < ix->rank - 1 ? ix->dims[d] : x->dims[d - (ix->rank - 1) + (uint32_t)b + (uint32_t)kd];
    if (y->dims[d] != w)
      return rt_chk_fail(c, "y dims[%u] = %lld, expected %lld", d, (long long)y->dims[d], (long long)w);
  }
  return rt_chk_block_dim(c, rt_elements(y), "y elements");
}
