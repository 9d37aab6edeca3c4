/* kernels_strided.c - the STRIDED_COPY task kind (contract in om_format.h):
 * y, in C order, is an affine view of x: Transpose, Slice (negative steps
 * too), Expand and Tile (stride 0), DepthToSpace and SpaceToDepth.
 *
 * The kernel first canonicalises the view: extent-1 dims are dropped and a
 * dim merges into its inner neighbour when stepping it equals running
 * through the neighbour (stride[d] == stride[d+1] * dims[d+1]), so a slice
 * of whole rows becomes one long run and a plain copy becomes one dim. A
 * block's y elements [lo, hi) are then walked row by row along the
 * innermost view dim: the row start is decoded from the index once, and the
 * row is copied with memmove when the inner stride is 1 and the dtypes
 * have one size, else element by element (bytes for dtypes of one size:
 * one dtype, or a BitCast's reinterpretation; through f32 for f16 <-> f32). memmove, as in every copying
 * kernel: a damaged package may place y over x, which then gives garbage, never undefined behaviour. The
 * load-time check bounds the lowest and highest x element the view can reach, so the run-time loop needs no
 * checks.
 */
#include "runtime/kernels.h"

typedef struct sview {
  int rank;
  int64_t offset, dims[MAX_RANK], strides[MAX_RANK];
} sview;

static void sview_read(const om_task *task, sview *v) {
  const int32_t *q = task->params;
  v->rank = 0;
  v->offset = q[OM_STRIDED_COPY_P_OFFSET];
  for (int d = 0; d < q[OM_STRIDED_COPY_P_RANK]; d++) {
    int64_t e = q[OM_STRIDED_COPY_P_DIMS + d], s = q[OM_STRIDED_COPY_P_STRIDES + d];
    if (e == 1) continue;
    if (v->rank > 0 && v->strides[v->rank - 1] == s * e && e != 0) {
      /* previous (outer) dim steps exactly over this one: merge */
      v->dims[v->rank - 1] *= e;
      v->strides[v->rank - 1] = s;
      continue;
    }
    v->dims[v->rank] = e, v->strides[v->rank++] = s;
  }
  if (v->rank == 0) v->dims[0] = 1, v->strides[0] = 1, v->rank = 1;
}

void rt_strided_copy_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  (void)core;
  const om_tensor *x = args->desc[OM_STRIDED_COPY_T_X], *y = args->desc[OM_STRIDED_COPY_T_Y];
  const uint8_t *xd = args->data[OM_STRIDED_COPY_T_X];
  uint8_t *yd = args->data[OM_STRIDED_COPY_T_Y];
  const int xt = (int)x->dtype, yt = (int)y->dtype, same = dtype_size(xt) == dtype_size(yt);
  const size_t es = dtype_size(xt);
  sview v;
  sview_read(task, &v);
  const int r = v.rank;
  const int64_t row = v.dims[r - 1], step = v.strides[r - 1];
  uint64_t lo, hi;
  rt_block_range(rt_elements(y), task->block_dim, block, &lo, &hi);
  uint64_t i = lo;
  while (i < hi) {
    /* decode i into its position, the row start and how much of the row is left */
    uint64_t rest = i;
    int64_t in_row = (int64_t)(rest % (uint64_t)row), at = v.offset + in_row * step;
    rest /= (uint64_t)row;
    for (int d = r - 2; d >= 0; d--) {
      at += (int64_t)(rest % (uint64_t)v.dims[d]) * v.strides[d];
      rest /= (uint64_t)v.dims[d];
    }
    uint64_t n = (uint64_t)(row - in_row);
    if (n > hi - i) n = hi - i;
    if (same && step == 1) {
      memmove(yd + i * es, xd + (size_t)at * es, n * es);
    } else if (same && es == 2) { /* typed: a memmove call per element costs ~10x the move */
      for (uint64_t k = 0; k < n; k++, at += step)
        ((uint16_t *)yd)[i + k] = ((const uint16_t *)xd)[at];
    } else if (same && es == 4) {
      for (uint64_t k = 0; k < n; k++, at += step)
        ((uint32_t *)yd)[i + k] = ((const uint32_t *)xd)[at];
    } else if (same) {
      for (uint64_t k = 0; k < n; k++, at += step)
        memmove(yd + (i + k) * es, xd + (size_t)at * es, es);
    } else {
      for (uint64_t k = 0; k < n; k++, at += step)
        rt_put(yd, yt, (size_t)(i + k), rt_get(xd, xt, (size_t)at));
    }
    i += n;
  }
}

omrt_status rt_strided_copy_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "STRIDED_COPY"};
  omrt_status s;
  const om_tensor *x, *y;
  if ((s = rt_chk_ntensors(&c, OM_STRIDED_COPY_NTENSORS)) ||
      (s = rt_chk_nd_tensor(&c, OM_STRIDED_COPY_T_X, "x", &x)) ||
      (s = rt_chk_nd_tensor(&c, OM_STRIDED_COPY_T_Y, "y", &y)))
    return s;
  if ((s = rt_chk_copy_dtypes(&c, x, y))) return s;
  const int32_t *q = task->params, *dims = q + OM_STRIDED_COPY_P_DIMS,
                *strides = q + OM_STRIDED_COPY_P_STRIDES;
  const int32_t r = q[OM_STRIDED_COPY_P_RANK], offset = q[OM_STRIDED_COPY_P_OFFSET];
  if (r < 0 || r > MAX_RANK)
    return rt_chk_fail(&c, "params[%d] rank = %d, expected 0..%d", OM_STRIDED_COPY_P_RANK, r, MAX_RANK);
  if (offset < 0)
    return rt_chk_fail(&c, "params[%d] offset = %d is negative", OM_STRIDED_COPY_P_OFFSET, offset);
  for (int k = OM_STRIDED_COPY_P_DIMS; k < OM_TASK_MAX_PARAMS; k++) {
    int used = (k >= OM_STRIDED_COPY_P_DIMS && k < OM_STRIDED_COPY_P_DIMS + r) ||
               (k >= OM_STRIDED_COPY_P_STRIDES && k < OM_STRIDED_COPY_P_STRIDES + r);
    if (!used && q[k] != 0) return rt_chk_fail(&c, "params[%d] = %d, expected 0 (unused)", k, q[k]);
  }
  /* element count and the reachable x range */
  uint64_t count = 1;
  __int128 lo = offset, hi = offset; /* 8 terms of 2^31 * 2^31 cannot overflow */
  for (int d = 0; d < r; d++) {
    int64_t e = dims[d], st = strides[d];
    if (e < 0)
      return rt_chk_fail(&c, "params[%d] view dims[%d] = %lld is negative", OM_STRIDED_COPY_P_DIMS + d, d,
                         (long long)e);
    if (mul_u64(count, (uint64_t)e, &count)) return rt_chk_fail(&c, "the view's element count overflows");
    if (e > 0) {
      if (st < 0)
        lo += (__int128)(e - 1) * st;
      else
        hi += (__int128)(e - 1) * st;
    }
  }
  if (count != rt_elements(y))
    return rt_chk_fail(&c, "the view has %llu elements, y has %llu", (unsigned long long)count,
                       (unsigned long long)rt_elements(y));
  if (count > 0 && (lo < 0 || hi >= (__int128)rt_elements(x)))
    return rt_chk_fail(&c, "the view reads x elements %lld..%lld, x has %llu", (long long)lo, (long long)hi,
                       (unsigned long long)rt_elements(x));
  return rt_chk_block_dim(&c, rt_elements(y), "y elements");
}
