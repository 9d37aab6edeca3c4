/* kernels_pad.c - the PAD task kind (contract in om_format.h): constant,
 * reflect, edge and wrap padding, and cropping with negative pads, over ND
 * tensors of any rank and dtype.
 *
 * Each y element (the block unit) is decoded into coordinates; every
 * coordinate minus its dim's pad_begin is mapped into x by the mode
 * (om_pad_src), and the element is copied, or, in constant mode when a
 * coordinate falls outside x, the constant's bytes are written. The
 * constant arrives in params as the bytes of y's dtype (8 at most), so the
 * kernel never converts it. Equal dtypes copy bytes; f16 <-> f32 converts.
 * The load-time check rejects a reflect over fewer than 2 elements and an
 * edge or wrap over none wherever padding reaches them.
 */
#include "runtime/kernels.h"

/* Source index along a dim of extent D for y coordinate c - pad_begin = i;
 * -1 when it is outside x in constant mode. */
static int64_t pad_src(int mode, int64_t i, int64_t D) {
  if (i >= 0 && i < D) return i;
  switch (mode) {
  case 1: { /* reflect: period 2(D - 1), edges not repeated */
    int64_t p = 2 * (D - 1), r = i % p;
    r = r < 0 ? r + p : r;
    return r < D ? r : p - r;
  }
  case 2: return i < 0 ? 0 : D - 1;
  case 3: {
    int64_t r = i % D;
    return r < 0 ? r + D : r;
  }
  default: return -1;
  }
}

void rt_pad_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  (void)core;
  const om_tensor *x = args->desc[OM_PAD_T_X], *y = args->desc[OM_PAD_T_Y];
  const uint8_t *xd = args->data[OM_PAD_T_X];
  uint8_t *yd = args->data[OM_PAD_T_Y];
  const int32_t *begin = task->params + OM_PAD_P_BEGIN;
  const int xt = (int)x->dtype, yt = (int)y->dtype, mode = task->params[OM_PAD_P_MODE];
  const size_t xs = dtype_size(xt), ys = dtype_size(yt);
  uint8_t value[8];
  uint32_t lo32 = (uint32_t)task->params[OM_PAD_P_VALUE_LO], hi32 = (uint32_t)task->params[OM_PAD_P_VALUE_HI];
  uint64_t bits = (uint64_t)hi32 << 32 | lo32;
  for (size_t k = 0; k < 8; k++)
    value[k] = (uint8_t)(bits >> (8 * k)); /* little-endian bytes */
  uint64_t lo, hi;
  rt_block_range(rt_elements(y), task->block_dim, block, &lo, &hi);
  for (uint64_t i = lo; i < hi; i++) {
    uint64_t rest = i;
    int64_t at = 0, scale = 1;
    for (int d = (int)y->rank - 1; d >= 0 && at >= 0; d--) {
      int64_t c = (int64_t)(rest % (uint64_t)y->dims[d]);
      rest /= (uint64_t)y->dims[d];
      int64_t src = pad_src(mode, c - begin[d], x->dims[d]);
      at = src < 0 ? -1 : at + src * scale;
      scale *= x->dims[d];
    }
    if (at < 0)
      memcpy(yd + i * ys, value, ys);
    else if (xs == ys)
      memmove(yd + i * ys, xd + (uint64_t)at * xs, ys);
    else
      rt_put(yd, yt, (size_t)i, rt_get(xd, xt, (size_t)at));
  }
}

omrt_status rt_pad_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "PAD"};
  omrt_status s;
  const om_tensor *x, *y;
  if ((s = rt_chk_ntensors(&c, OM_PAD_NTENSORS)) || (s = rt_chk_nd_tensor(&c, OM_PAD_T_X, "x", &x)) ||
      (s = rt_chk_nd_tensor(&c, OM_PAD_T_Y, "y", &y)))
    return s;
  if ((s = rt_chk_copy_dtypes(&c, x, y))) return s;
  if (x->rank != y->rank) return rt_chk_fail(&c, "x rank %u != y rank %u", x->rank, y->rank);
  const int32_t *q = task->params;
  const int32_t mode = q[OM_PAD_P_MODE], lo32 = q[OM_PAD_P_VALUE_LO], hi32 = q[OM_PAD_P_VALUE_HI];
  if (mode < 0 || mode > 3)
    return rt_chk_fail(&c, "params[%d] mode = %d, expected 0..3", OM_PAD_P_MODE, mode);
  for (int k = OM_PAD_P_MODE + 1; k < OM_TASK_MAX_PARAMS; k++) {
    int used = (k >= OM_PAD_P_BEGIN && k < OM_PAD_P_BEGIN + (int)x->rank) ||
               (mode == 0 && (k == OM_PAD_P_VALUE_LO || k == OM_PAD_P_VALUE_HI));
    if (!used && q[k] != 0) return rt_chk_fail(&c, "params[%d] = %d, expected 0 (unused)", k, q[k]);
  }
  const size_t ys = dtype_size((int)y->dtype);
  if (mode == 0 && ys < 8 && hi32 != 0)
    return rt_chk_fail(&c, "params[%d] = %d: the constant has %zu bytes", OM_PAD_P_VALUE_HI, hi32, ys);
  if (mode == 0 && ys < 4 && ((uint32_t)lo32 >> (8 * ys)) != 0)
    return rt_chk_fail(&c, "params[%d] = %d: the constant has %zu bytes", OM_PAD_P_VALUE_LO, lo32, ys);
  if (rt_elements(y) > 0)
    for (uint32_t d = 0; d < x->rank; d++) {
      int64_t D = x->dims[d], b = q[OM_PAD_P_BEGIN + d], first = -b,
              last = y->dims[d] - 1 - b; /* x range y reads */
      int outside = first < 0 || last >= D;
      if (mode == 0 || !outside) continue;
      if ((mode == 1 && D < 2) || D < 1)
        return rt_chk_fail(&c, "dim %u: %s padding of an extent-%lld dim", d,
                           mode == 1   ? "reflect"
                           : mode == 2 ? "edge"
                                       : "wrap",
                           (long long)D);
    }
  return rt_chk_block_dim(&c, rt_elements(y), "y elements");
}
