/* kernels_qpool.c - POOL's max pooling on u8/i8 NC1HWC0 (om_tasks.h POOL):
 * the int8 activations of a quantized model, pooled without leaving int8
 * (passes/qconv.c folds DequantizeLinear -> MaxPool -> QuantizeLinear with
 * one scale and zero point into the MaxPool; the maximum commutes with the
 * increasing dequantization).
 *
 * The window's maximum is separable: for each output row, a column pass takes
 * the bytewise maximum of the window's input rows (and depth planes) over a
 * piece of the row into a buffer, contiguous bytes that vectorize whole; a
 * row pass then takes each output pixel's maximum over its window's columns
 * of that buffer, 16 channels at once. A 3x3 stride-2 pool so does 4.5 16-byte
 * maxima per output pixel instead of 9. Rows wider than the buffer go in
 * pieces, each output pixel taking the maximum over the pieces its window
 * meets (y holds the running maximum).
 *
 * i8 bytes compare as u8 after flipping their sign bit (x ^ 0x80 maps
 * -128..127 onto 0..255 in order), so one unsigned path serves both dtypes;
 * the compiler turns the byte loops into vector maxima on every target, so
 * there is no separate x86 path.
 */
#include "runtime/kernels.h"

enum { QPOOL_COLS = 256 }; /* input pixels of one piece: 4 KiB of buffer on the stack */

/* The maximum of kernel rows [ih0, ih1) of depth planes [id0, id1) over
 * input columns [c0, c0 + n), in the flipped (unsigned) order. */
static void column_max(const uint8_t *xd, const rt_pool_geom *g, uint64_t unit, int64_t id0, int64_t id1,
                       int64_t ih0, int64_t ih1, int64_t c0, int64_t n, uint8_t flip, uint8_t *buf) {
  const size_t len = (size_t)n * C0;
  memset(buf, 0, len); /* the lowest value: every window has a tap (the loader's check) */
  for (int64_t id = id0; id < id1; id++) {
    const uint8_t *plane = xd + rt_pool_xplane(g, unit, id);
    for (int64_t ih = ih0; ih < ih1; ih++) {
      const uint8_t *v = plane + (size_t)(ih * g->w + c0) * C0;
      for (size_t l = 0; l < len; l++) {
        uint8_t b = v[l] ^ flip;
        buf[l] = b > buf[l] ? b : buf[l];
      }
    }
  }
}

void rt_pool_max8(const rt_args *args, const rt_pool_geom *g, uint64_t lo, uint64_t hi) {
  const om_tensor *x = args->desc[OM_POOL_T_X];
  const uint8_t *xd = args->data[OM_POOL_T_X];
  uint8_t *yd = args->data[OM_POOL_T_Y];
  const int64_t kh = g->kh, kw = g->kw, sh = g->sh, sw = g->sw, pt = g->pt, pl = g->pl;
  const uint8_t flip = x->dtype == DT_INT8 ? 0x80 : 0;
  const int64_t h = g->h, w = g->w, ho = g->ho, wo = g->wo;
  uint8_t buf[QPOOL_COLS * C0];
  for (uint64_t unit = lo; unit < hi; unit++) {
    int64_t d0, pd1, id0, id1;
    rt_pool_depth(g, unit, &d0, &pd1, &id0, &id1);
    for (int64_t oh = 0; oh < ho; oh++) {
      const int64_t h0 = oh * sh - pt, ih0 = h0 < 0 ? 0 : h0, ih1 = h0 + kh < h ? h0 + kh : h;
      uint8_t *yrow = yd + ((size_t)unit * (size_t)ho + (size_t)oh) * (size_t)wo * C0;
      memset(yrow, 0, (size_t)wo * C0);
      for (int64_t c0 = 0; c0 < w; c0 += QPOOL_COLS) {
        const int64_t c1 = c0 + QPOOL_COLS < w ? c0 + QPOOL_COLS : w;
        column_max(xd, g, unit, id0, id1, ih0, ih1, c0, c1 - c0, flip, buf);
        /* the output pixels whose window [ow*sw - pl, ow*sw - pl + kw) meets [c0, c1) */
        int64_t ow0 = c0 + pl - kw + 1 <= 0 ? 0 : rt_ceil_div(c0 + pl - kw + 1, sw),
                ow1 = (c1 - 1 + pl) / sw + 1;
        if (ow1 > wo) ow1 = wo;
        for (int64_t ow = ow0; ow < ow1; ow++) {
          const int64_t w0 = ow * sw - pl, iw0 = w0 < c0 ? c0 : w0, iw1 = w0 + kw < c1 ? w0 + kw : c1;
          uint8_t acc[C0];
          memcpy(acc, yrow + (size_t)ow * C0, C0);
          for (int64_t iw = iw0; iw < iw1; iw++) {
            const uint8_t *v = buf + (size_t)(iw - c0) * C0;
            for (int l = 0; l < C0; l++)
              acc[l] = v[l] > acc[l] ? v[l] : acc[l];
          }
          memcpy(yrow + (size_t)ow * C0, acc, C0);
        }
      }
      if (flip)
        for (size_t l = 0; l < (size_t)wo * C0; l++)
          yrow[l] ^= flip;
    }
  }
}
