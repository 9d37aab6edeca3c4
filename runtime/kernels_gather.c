/* kernels_gather.c - the GATHER task kind (contract in om_format.h): Gather
 * and GatherElements with indices known only at run time (mode 2, GatherND,
 * is in kernels_index.c).
 *
 * Both modes walk y's elements (the block unit) in C order. Gather splits y
 * into [outer, nidx, inner] (outer = x's dims before the axis, inner = after
 * it) and copies each run of `inner` elements from x's row x[o, k, :], k the
 * wrapped index; GatherElements decodes y's position, replaces its axis
 * coordinate by the wrapped index and reads that one element of x (y's dims
 * are the indices', so the other coordinates address x directly). An index
 * outside [-D, D) yields zero bytes instead of a read, and the core records
 * it (rt_index_fault), so the execution fails naming the task. Equal
 * dtypes copy bytes; f16 <-> f32 converts through f32. The load-time check
 * validates every dim relation the walks rely on.
 */
#include "runtime/kernels.h"

static int64_t index_at(const void *p, uint32_t dt, uint64_t i) {
  return dt == DT_INT64 ? ((const int64_t *)p)[i] : ((const int32_t *)p)[i];
}

/* Copies n elements x[xi..] -> y[yi..], or zeroes y when xi < 0. */
static void move(uint8_t *yd, int yt, uint64_t yi, const uint8_t *xd, int xt, int64_t xi, uint64_t n) {
  size_t ys = dtype_size(yt), xs = dtype_size(xt);
  if (xi < 0) {
    memset(yd + yi * ys, 0, n * ys);
  } else if (xs == ys) { /* one dtype, or a bit cast: the bytes as they are */
    memmove(yd + yi * ys, xd + (uint64_t)xi * xs, n * ys);
  } else {
    for (uint64_t k = 0; k < n; k++)
      rt_put(yd, yt, (size_t)(yi + k), rt_get(xd, xt, (size_t)((uint64_t)xi + k)));
  }
}

/* Gather with inner 1 (a column of a matrix, a vector's elements) in one
 * dtype size: y[i] = x[o, k] element by element, the run-length copy of
 * move() per element costing a call each (SSDlite's per-class score
 * columns: 3234 one-element runs). */
static void gather_elements(uint8_t *yd, const uint8_t *xd, size_t es, const void *id, uint32_t it,
                            uint64_t nidx, int64_t D, uint64_t lo, uint64_t hi, rt_core *core) {
  uint64_t j = lo % nidx, o = lo / nidx;
  for (uint64_t i = lo; i < hi; i++) {
    int64_t raw = index_at(id, it, j), k = raw < 0 ? raw + D : raw;
    uint8_t *to = yd + i * es;
    if (k < 0 || k >= D) {
      rt_index_fault(core, raw, D);
      memset(to, 0, es);
    } else {
      const uint8_t *from = xd + (o * (uint64_t)D + (uint64_t)k) * es;
      switch (es) { /* constant sizes: one load and store each */
      case 1: *to = *from; break;
      case 2: memcpy(to, from, 2); break;
      case 4: memcpy(to, from, 4); break;
      case 8: memcpy(to, from, 8); break;
      default: memcpy(to, from, es);
      }
    }
    if (++j == nidx) j = 0, o++;
  }
}

uint64_t rt_gather_valid_indices(const om_task *task, const rt_args *args) {
  const om_tensor *ix = args->desc[OM_GATHER_T_INDICES];
  uint64_t all = rt_elements(ix);
  if (task->ntensors != OM_GATHER_NTENSORS_EXTENT) return all;
  int64_t n = *(const int64_t *)args->data[OM_GATHER_T_EXTENT],
          D = ix->dims[task->params[OM_GATHER_P_EXTENT_AXIS]];
  n = n < 0 ? 0 : n > D ? D : n;
  return D ? all / (uint64_t)D * (uint64_t)n : 0;
}

void rt_gather_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  const int mode = task->params[OM_GATHER_P_MODE];
  if (mode == 2) { /* GatherND: kernels_index.c */
    rt_gathernd_run(task, args, block, core);
    return;
  }
  const uint64_t valid = rt_gather_valid_indices(task, args); /* the indices read: a prefix */
  const om_tensor *x = args->desc[OM_GATHER_T_X], *ix = args->desc[OM_GATHER_T_INDICES],
                  *y = args->desc[OM_GATHER_T_Y];
  const uint8_t *xd = args->data[OM_GATHER_T_X];
  const void *id = args->data[OM_GATHER_T_INDICES];
  uint8_t *yd = args->data[OM_GATHER_T_Y];
  const int xt = (int)x->dtype, yt = (int)y->dtype, axis = task->params[OM_GATHER_P_AXIS];
  const int64_t D = x->dims[axis];
  uint64_t lo, hi;
  rt_block_range(rt_elements(y), task->block_dim, block, &lo, &hi);
  if (mode == 0) { /* Gather */
    uint64_t inner = 1, nidx = rt_elements(ix);
    for (uint32_t d = (uint32_t)axis + 1; d < x->rank; d++)
      inner *= (uint64_t)x->dims[d];
    if (inner == 1 && dtype_size(xt) == dtype_size(yt) && valid == nidx) {
      gather_elements(yd, xd, dtype_size(xt), id, ix->dtype, nidx, D, lo, hi, core);
      return;
    }
    uint64_t i = lo;
    while (i < hi) {
      uint64_t in = i % inner, j = i / inner % nidx, o = i / inner / nidx;
      uint64_t n = inner - in < hi - i ? inner - in : hi - i;
      if (j >= valid) { /* past the count: zeros to the end of this o */
        n = (nidx - j) * inner - in < hi - i ? (nidx - j) * inner - in : hi - i;
        memset(yd + i * dtype_size(yt), 0, n * dtype_size(yt));
        i += n;
        continue;
      }
      int64_t raw = index_at(id, ix->dtype, j), k = raw < 0 ? raw + D : raw;
      int64_t from = k < 0 || k >= D ? -1 : (int64_t)((o * (uint64_t)D + (uint64_t)k) * inner + in);
      if (from < 0) rt_index_fault(core, raw, D);
      move(yd, yt, i, xd, xt, from, n);
      i += n;
    }
    return;
  }
  if (valid < hi) { /* GatherElements past the count: zeros */
    uint64_t from = valid > lo ? valid : lo;
    memset(yd + from * dtype_size(yt), 0, (hi - from) * dtype_size(yt));
    hi = from;
  }
  for (uint64_t i = lo; i < hi; i++) { /* GatherElements */
    int64_t raw = index_at(id, ix->dtype, i), k = raw < 0 ? raw + D : raw;
    if (k < 0 || k >= D) rt_index_fault(core, raw, D);
    int64_t at = 0;
    uint64_t rest = i, scale = 1;
    for (int d = (int)y->rank - 1; d >= 0; d--) {
      uint64_t c = rest % (uint64_t)y->dims[d];
      rest /= (uint64_t)y->dims[d];
      at += (int64_t)((d == axis ? (uint64_t)k : c) * scale);
      scale *= (uint64_t)x->dims[d];
    }
    move(yd, yt, i, xd, xt, k < 0 || k >= D ? -1 : at, 1);
  }
}

omrt_status rt_gather_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "GATHER"};
  const om_tensor *x = NULL, *ix = NULL, *y = NULL;
  omrt_status s;
  const int counted = task->ntensors == OM_GATHER_NTENSORS_EXTENT;
  if ((s = rt_chk_ntensors(&c, counted ? OM_GATHER_NTENSORS_EXTENT : OM_GATHER_NTENSORS)) ||
      (s = rt_chk_nd_tensor(&c, OM_GATHER_T_X, "x", &x)) ||
      (s = rt_chk_nd_tensor(&c, OM_GATHER_T_INDICES, "indices", &ix)) ||
      (s = rt_chk_nd_tensor(&c, OM_GATHER_T_Y, "y", &y)))
    return s;
  const int32_t *q = task->params;
  for (int k = counted ? OM_GATHER_NPARAMS : OM_GATHER_P_EXTENT_AXIS; k < OM_TASK_MAX_PARAMS; k++)
    if (q[k] != 0) return rt_chk_fail(&c, "params[%d] = %d, expected 0 (unused)", k, q[k]);
  if (counted) { /* the indices' count: an i64 [1], along an axis whose valid part is a prefix */
    const om_tensor *e = NULL;
    int32_t ea = q[OM_GATHER_P_EXTENT_AXIS];
    if ((s = rt_chk_nd_tensor(&c, OM_GATHER_T_EXTENT, "extent", &e))) return s;
    if (e->dtype != DT_INT64 || rt_elements(e) != 1) return rt_chk_fail(&c, "extent must be i64 [1]");
    if (ea < 0 || (uint32_t)ea >= ix->rank)
      return rt_chk_fail(&c, "params[%d] extent_axis = %d out of range for indices rank %u",
                         OM_GATHER_P_EXTENT_AXIS, ea, ix->rank);
    for (int32_t d = 0; d < ea; d++)
      if (ix->dims[d] != 1)
        return rt_chk_fail(&c, "indices dims[%d] = %lld before extent_axis %d, expected 1", d,
                           (long long)ix->dims[d], ea);
  }
  const int32_t mode = q[OM_GATHER_P_MODE], a = q[OM_GATHER_P_AXIS];
  if (mode < 0 || mode > 2)
    return rt_chk_fail(&c, "params[%d] mode = %d, expected 0, 1 or 2", OM_GATHER_P_MODE, mode);
  if (a < 0 || (uint32_t)a >= x->rank)
    return rt_chk_fail(&c, "params[%d] %s = %d out of range for x rank %u", OM_GATHER_P_AXIS,
                       mode == 2 ? "batch_dims" : "axis", a, x->rank);
  if (ix->dtype != DT_INT32 && ix->dtype != DT_INT64)
    return rt_chk_fail(&c, "indices dtype %u, expected i32 or i64", ix->dtype);
  if ((s = rt_chk_copy_dtypes(&c, x, y))) return s;
  if (mode == 2) return rt_gathernd_check(&c, x, ix, y); /* kernels_index.c */
  uint32_t axis = (uint32_t)a;
  int64_t want[MAX_RANK];
  uint32_t wr = 0;
  if (mode == 0) {
    if (x->rank - 1 + ix->rank > MAX_RANK) return rt_chk_fail(&c, "y rank would exceed %d", MAX_RANK);
    for (uint32_t d = 0; d < axis; d++)
      want[wr++] = x->dims[d];
    for (uint32_t d = 0; d < ix->rank; d++)
      want[wr++] = ix->dims[d];
    for (uint32_t d = axis + 1; d < x->rank; d++)
      want[wr++] = x->dims[d];
  } else {
    if (ix->rank != x->rank) return rt_chk_fail(&c, "indices rank %u != x rank %u", ix->rank, x->rank);
    for (uint32_t d = 0; d < x->rank; d++) {
      if (d != axis && ix->dims[d] > x->dims[d])
        return rt_chk_fail(&c, "indices dims[%u] = %lld exceeds x's %lld", d, (long long)ix->dims[d],
                           (long long)x->dims[d]);
      want[wr++] = ix->dims[d];
    }
  }
  if (y->rank != wr) return rt_chk_fail(&c, "y rank %u, expected %u", y->rank, wr);
  for (uint32_t d = 0; d < wr; d++)
    if (y->dims[d] != want[d])
      return rt_chk_fail(&c, "y dims[%u] = %lld, expected %lld", d, (long long)y->dims[d],
                         (long long)want[d]);
  return rt_chk_block_dim(&c, rt_elements(y), "y elements");
}
