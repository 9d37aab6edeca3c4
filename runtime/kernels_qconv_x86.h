/* kernels_qconv_x86.h - what the x86 QCONV2D tiles share (private to
 * kernels_qconv_vnni.c and kernels_qconv_avx2.c; the contract is in
 * kernels_qconv.h, the portable tile in kernels_qconv.c): the target
 * attributes, the pixel and tap geometry, the output-block runs, the
 * depthwise tap-pair weights and the window gathering of window-packed
 * convolutions.
 *
 * Products and sums are exact (the compiler bounds K, om_format.h
 * OM_QCONV_MAX_K), so every path gets the portable tile's int32 sums, and
 * both requantize as common/quant.h's q_requant: the same f32 operations
 * in the same order; with a residual, the store goes on with q_eltwise's
 * f32 steps on the lanes. Every address of x, y and r comes from
 * rt_qconv_xat / rt_qconv_yat and the geometry's block strides, so NC1HWC0
 * and NHWC tensors take the same loops (the depthwise ones see NC1HWC0
 * only: NHWC needs groups = 1).
 *
 * Compiled for plain x86-64: every function carries its target attribute
 * and is only reached through rt_cpu() (cpu.c) when the CPU has it.
 */
#ifndef RUNTIME_KERNELS_QCONV_X86_H
#define RUNTIME_KERNELS_QCONV_X86_H

#include "runtime/kernels_qconv.h"

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>
#include <string.h>

#define T_AVX2 __attribute__((target("avx2,fma,f16c")))
#define T_AVX2_INLINE __attribute__((target("avx2,fma,f16c"), always_inline)) static inline
#define T_VNNI __attribute__((target("avx512f,avx512bw,avx512dq,avx512vnni,avx2,fma,f16c")))
#define T_VNNI_INLINE                                                                                        \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vnni,avx2,fma,f16c"), always_inline)) static inline

/* The output rows and columns of R pixels from p; pixels past np repeat
 * the last one. One division, then steps along the row. */
static inline void pixel_pos(const rt_qconv_geom *g, int64_t p, int np, int R, int64_t *oh, int64_t *ow) {
  int64_t h = p / g->wo, w = p % g->wo;
  for (int r = 0; r < R; r++) {
    oh[r] = h, ow[r] = w;
    if (r + 1 < np && ++w == g->wo) w = 0, h++;
  }
}

/* The pointers of R pixels for tap t: to the pixel's channels of input
 * block lo, stepping g->xbs per input block; padding taps read
 * g->pad with step 0. */
static inline void tap_rows(const rt_qconv_geom *g, int64_t img, const int64_t *oh, const int64_t *ow, int R,
                            int t, int64_t lo, const uint8_t **xp, size_t *st) {
  const int64_t dh = (t / g->kw) * g->dh - g->pt, dw = (t % g->kw) * g->dw - g->pl;
  for (int r = 0; r < R; r++) {
    const int64_t ih = oh[r] * g->sh + dh, iw = ow[r] * g->sw + dw;
    const int in = ih >= 0 && ih < g->h && iw >= 0 && iw < g->w_;
    xp[r] = in ? g->x + rt_qconv_xat(g, img, lo, ih, iw) : g->pad;
    st[r] = in ? g->xbs : 0;
  }
}

/* 1 when the windows of the R pixels all lie inside x: then x0[r] is
 * pixel r's first tap in input block lo, and tap t's row is x0[r] plus
 * tap_offset (no padding checks per tap); else 0. */
static inline int windows_inside(const rt_qconv_geom *g, int64_t img, const int64_t *oh, const int64_t *ow,
                                 int R, int64_t lo, const uint8_t **x0) {
  for (int r = 0; r < R; r++) {
    const int64_t ih = oh[r] * g->sh - g->pt, iw = ow[r] * g->sw - g->pl;
    if (ih < 0 || ih + (int64_t)(g->kh - 1) * g->dh >= g->h || iw < 0 ||
        iw + (int64_t)(g->kw - 1) * g->dw >= g->w_)
      return 0;
    x0[r] = g->x + rt_qconv_xat(g, img, lo, ih, iw);
  }
  return 1;
}

static inline size_t tap_offset(const rt_qconv_geom *g, int t) {
  return ((size_t)(t / g->kw) * (size_t)g->dh * (size_t)g->w_ + (size_t)(t % g->kw) * (size_t)g->dw) * g->xps;
}

/* Output blocks [nb, nb + n) after nb that read nb's input blocks, at most max. */
static inline int same_range(const rt_qconv_geom *g, int64_t nb, int64_t nb1, int max, int64_t *lo,
                             int64_t *hi) {
  convg_block_range(&g->cg, nb, lo, hi);
  int n = 1;
  for (; n < max && nb + n < nb1; n++) {
    int64_t l2, h2;
    convg_block_range(&g->cg, nb + n, &l2, &h2);
    if (l2 != *lo || h2 != *hi) break;
  }
  return n;
}

/* --- depthwise (groups = Cin = Cout): each output channel reads its own
 * input channel, so a tap is 16 products, channel by channel, instead of a
 * 16 x 16 block (the weights are packed so: [C1out][KH*KW][16]). The taps go in pairs, x of two taps
 * interleaved channel by channel and widened to 16 bits against the pair's weights, also 16-bit: vpmaddwd
 * gives u_t*w_t + u_t'*w_t' per channel, exact. Windows past 2*DW_MAX_PAIRS taps take the portable tile. */

enum { DW_MAX_PAIRS = 64 }; /* windows up to 11 x 11 (KH*KW <= 128) */

/* Block nb's tap-pair weights: w2[pair][2c + i] = w of tap 2*pair + i,
 * channel c (0 past the last tap). */
static inline void dw_weights(const rt_qconv_geom *g, int64_t nb, int16_t (*w2)[2 * C0]) {
  const int taps = g->kh * g->kw;
  const int8_t *wb = g->w + (size_t)(nb * taps) * C0;
  for (int pr = 0; pr < (taps + 1) / 2; pr++)
    for (int c = 0; c < C0; c++)
      for (int i = 0; i < 2; i++) {
        const int t = 2 * pr + i;
        w2[pr][2 * c + i] = t < taps ? wb[t * C0 + c] : 0;
      }
}

/* The windows of n pixels from p gathered as g->wwin packs K (tap,
 * channel), into rows of kq groups of 4 bytes (stride QCONV_WINDOW_MAX +
 * 4): a tap's cin bytes copied as one 4-byte word, the next tap's
 * overwriting the spare ones (x's padding lanes, whose weights are 0, as
 * are the last group's past the window). off: each tap's offset from the
 * window's first byte in x. */
static inline void gather_windows(const rt_qconv_geom *g, int64_t img, int64_t p, int n, const size_t *off,
                                  uint8_t (*rows)[QCONV_WINDOW_MAX + 4]) {
  const int taps = g->kh * g->kw, cin = g->cin;
  for (int r = 0; r < n; r++) {
    int64_t oh, ow;
    const uint8_t *x0;
    uint8_t *row = rows[r];
    memset(row + (g->kq - 1) * 4, 0, 4);
    pixel_pos(g, p + r, 1, 1, &oh, &ow);
    if (windows_inside(g, img, &oh, &ow, 1, 0, &x0)) {
      for (int t = 0; t < taps; t++)
        memcpy(row + t * cin, x0 + off[t], 4);
    } else {
      for (int t = 0; t < taps; t++) {
        const uint8_t *src;
        size_t st;
        tap_rows(g, img, &oh, &ow, 1, t, 0, &src, &st);
        memcpy(row + t * cin, src, 4);
      }
    }
  }
}

enum { WIN_PIXELS = 48 }; /* pixels gathered at a time: a multiple of 6 and 12 */

#endif

#endif
