/* kernels_qpool.c - POOL's max pooling on u8/i8 NC1HWC0 (om_tasks.h POOL):
 * the int8 activations of a quantized model, pooled without leaving int8
 * (passes/qconv.c folds DequantizeLinear -> MaxPool -> QuantizeLinear with
 * one scale and zero point into the MaxPool; the maximum commutes with the
 * increasing dequantization).
 *
 * Each output pixel is the bytewise maximum of its window's pixels, 16
 * channels at once. i8 bytes compare as u8 after flipping their sign bit
 * (x ^ 0x80 maps -128..127 onto 0..255 in order), so one unsigned loop
 * serves both dtypes; the compiler turns the 16-byte loops into one vector
 * max each, on every target, so there is no separate x86 path.
 */
#include "runtime/kernels.h"

void rt_pool_max8(const om_task *task, const rt_args *args, const rt_pool_geom *g, uint64_t lo, uint64_t hi) {
  const om_tensor *x = args->desc[OM_POOL_T_X];
  const uint8_t *xd = args->data[OM_POOL_T_X];
  uint8_t *yd = args->data[OM_POOL_T_Y];
  const int32_t *q = task->params;
  const int64_t kh = q[OM_POOL_P_KH], kw = q[OM_POOL_P_KW], sh = q[OM_POOL_P_STRIDE_H],
                sw = q[OM_POOL_P_STRIDE_W], pt = q[OM_POOL_P_PAD_TOP], pl = q[OM_POOL_P_PAD_LEFT];
  const uint8_t flip = x->dtype == DT_INT8 ? 0x80 : 0;
  const int64_t h = g->h, w = g->w, ho = g->ho, wo = g->wo;
  for (uint64_t unit = lo; unit < hi; unit++) {
    const int64_t od = (int64_t)(unit / (uint64_t)g->c1) % g->dout, d0 = od * g->sd - g->pf;
    const int64_t id0 = d0 < 0 ? 0 : d0, id1 = d0 + g->kd < g->d ? d0 + g->kd : g->d;
    uint8_t *yp = yd + (size_t)unit * (size_t)(ho * wo) * C0;
    for (int64_t oh = 0; oh < ho; oh++) {
      const int64_t h0 = oh * sh - pt, ih0 = h0 < 0 ? 0 : h0, ih1 = h0 + kh < h ? h0 + kh : h;
      for (int64_t ow = 0; ow < wo; ow++, yp += C0) {
        const int64_t w0 = ow * sw - pl, iw0 = w0 < 0 ? 0 : w0, iw1 = w0 + kw < w ? w0 + kw : w;
        uint8_t acc[C0] = {0}; /* the lowest value: every window has a tap (the loader's check) */
        for (int64_t id = id0; id < id1; id++) {
          const uint8_t *plane = xd + rt_pool_xplane(g, unit, id);
          for (int64_t ih = ih0; ih < ih1; ih++)
            for (int64_t iw = iw0; iw < iw1; iw++) {
              const uint8_t *v = plane + (size_t)(ih * w + iw) * C0;
              for (int l = 0; l < C0; l++) {
                uint8_t b = v[l] ^ flip;
                acc[l] = b > acc[l] ? b : acc[l];
              }
            }
        }
        for (int l = 0; l < C0; l++)
          yp[l] = acc[l] ^ flip;
      }
    }
  }
}
