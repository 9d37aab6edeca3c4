/* kernels_wpack.c - WPACK: convolution weights computed at run time packed
 * into FRACTAL_Z, FRACTAL_Z_G, FRACTAL_Z_3D or the depthwise NC1HWC0
 * (om_format.h).
 *
 * A block writes whole output channel rows of the destination (padding rows
 * of the last block included): FRACTAL_Z and FRACTAL_Z_G through
 * common/conv_group.c's convg_pack_rows (FRACTAL_Z is FRACTAL_Z_G with one
 * group), depthwise rows directly ([C1][KH][KW][16]: channel c's lane),
 * FRACTAL_Z_3D element by element (common/types.h: a FRACTAL_Z per kernel
 * depth, kd outermost).
 */
#include "common/conv_group.h"
#include "runtime/kernels.h"

/* dst's groups geometry, as conv_group.h dims. */
static void pack_dims(const om_tensor *w, const om_tensor *dst, int64_t *dims) {
  if (dst->layout == LAYOUT_FRACTAL_Z_G) {
    for (int i = 0; i < 5; i++)
      dims[i] = dst->dims[i];
  } else { /* FRACTAL_Z: one group */
    dims[0] = 1, dims[1] = w->dims[0], dims[2] = w->dims[1], dims[3] = w->dims[2], dims[4] = w->dims[3];
  }
}

void rt_wpack_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  (void)core;
  const om_tensor *w = args->desc[OM_WPACK_T_W], *dst = args->desc[OM_WPACK_T_DST];
  const void *wd = args->data[OM_WPACK_T_W];
  void *dd = args->data[OM_WPACK_T_DST];
  uint64_t lo, hi, rows = (uint64_t)rt_ceil_div(w->dims[0], C0) * C0;
  rt_block_range(rows, task->block_dim, block, &lo, &hi);
  if (dst->layout == LAYOUT_FRACTAL_Z_3D) { /* w [Cout, Cin, KD, KH, KW] */
    const int64_t cout = w->dims[0], cin = w->dims[1], kd = w->dims[2], taps = w->dims[3] * w->dims[4];
    const int64_t c1in = (cin + C0 - 1) / C0, n1 = (int64_t)rows / C0;
    for (int64_t co = (int64_t)lo; co < (int64_t)hi; co++)
      for (int64_t d = 0; d < kd; d++)
        for (int64_t ci = 0; ci < c1in * C0; ci++)
          for (int64_t t = 0; t < taps; t++) {
            float v = co < cout && ci < cin
                          ? rt_get(wd, (int)w->dtype, (size_t)(((co * cin + ci) * kd + d) * taps + t))
                          : 0.0f;
            int64_t frac = (d * c1in + ci / C0) * taps + t;
            rt_put(dd, (int)dst->dtype, (size_t)(((frac * n1 + co / C0) * C0 + ci % C0) * C0 + co % C0), v);
          }
    return;
  }
  if (dst->layout != LAYOUT_NC1HWC0) {
    int64_t dims[5];
    convg_geom geo;
    pack_dims(w, dst, dims);
    if (convg_init(dims, &geo) == 0)
      convg_pack_rows(&geo, wd, (int)w->dtype, dd, (int)dst->dtype, (int64_t)lo, (int64_t)hi);
    return;
  }
  const int64_t c = w->dims[0], taps = w->dims[2] * w->dims[3];
  for (int64_t ch = (int64_t)lo; ch < (int64_t)hi; ch++)
    for (int64_t t = 0; t < taps; t++) {
      float v = ch < c ? rt_get(wd, (int)w->dtype, (size_t)(ch * taps + t)) : 0.0f;
      rt_put(dd, (int)dst->dtype, (size_t)(((ch / C0) * taps + t) * C0 + ch % C0), v);
    }
}

omrt_status rt_wpack_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "WPACK"};
  const om_tensor *w, *dst;
  omrt_status s;
  if ((s = rt_chk_ntensors(&c, OM_WPACK_NTENSORS))) return s;
  int lay = -1;
  const uint32_t dst_index = task->tensors[OM_WPACK_T_DST];
  if (dst_index < m->def->ntensors) lay = (int)m->tensors[dst_index].layout;
  if (lay != LAYOUT_FRACTAL_Z && lay != LAYOUT_FRACTAL_Z_G && lay != LAYOUT_NC1HWC0 &&
      lay != LAYOUT_FRACTAL_Z_3D)
    return rt_chk_fail(&c, "dst layout %d: expected FRACTAL_Z, FRACTAL_Z_G, FRACTAL_Z_3D or NC1HWC0", lay);
  const int wrank = lay == LAYOUT_FRACTAL_Z_3D ? 5 : 4;
  if ((s = rt_chk_tensor(&c, OM_WPACK_T_W, "w", 0, LAYOUT_ND, wrank, 0, &w)) ||
      (s = rt_chk_tensor(&c, OM_WPACK_T_DST, "dst", 0, lay, lay == LAYOUT_FRACTAL_Z_G ? 5 : wrank, 0, &dst)))
    return s;
  for (int d = 0; d < wrank; d++)
    if (w->dims[d] < 1) return rt_chk_fail(&c, "w dims[%d] = %lld, expected >= 1", d, (long long)w->dims[d]);
  int64_t want[5];
  int rank = 4;
  if (lay == LAYOUT_FRACTAL_Z || lay == LAYOUT_FRACTAL_Z_3D) { /* w's own dims */
    rank = wrank;
    for (int d = 0; d < rank; d++)
      want[d] = w->dims[d];
  } else if (lay == LAYOUT_NC1HWC0) {
    want[0] = 1, want[1] = w->dims[0], want[2] = w->dims[2], want[3] = w->dims[3];
    if (w->dims[1] != 1)
      return rt_chk_fail(&c, "depthwise w dims[1] = %lld, expected 1", (long long)w->dims[1]);
  } else {
    rank = 5;
    int64_t g = dst->dims[0];
    want[0] = g, want[1] = g > 0 ? w->dims[0] / g : 0, want[2] = w->dims[1], want[3] = w->dims[2];
    want[4] = w->dims[3];
    if (g < 1 || w->dims[0] % g)
      return rt_chk_fail(&c, "dst groups %lld do not divide Cout %lld", (long long)g, (long long)w->dims[0]);
  }
  for (int d = 0; d < rank; d++)
    if (dst->dims[d] != want[d])
      return rt_chk_fail(&c, "dst dims[%d] = %lld, expected %lld for w [%lld, %lld, %lld, %lld]", d,
                         (long long)dst->dims[d], (long long)want[d], (long long)w->dims[0],
                         (long long)w->dims[1], (long long)w->dims[2], (long long)w->dims[3]);
  return rt_chk_block_dim(&c, (uint64_t)rt_ceil_div(w->dims[0], C0) * C0, "padded output channel rows");
}
