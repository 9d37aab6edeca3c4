/* kernels_qconv.h - QCONV2D (om_format.h), the int8 convolution: what its
 * portable path (kernels_qconv.c) and its x86 paths (kernels_qconv_vnni.c,
 * kernels_qconv_avx2.c, sharing kernels_qconv_x86.h) share, and what the tests call to run each path.
 *
 * x, y and r are NC1HWC0, or (format 2.11) all three NHWC, channels
 * contiguous per pixel, Cin and Cout multiples of 16 (a Linear layer's rows
 * as pixels, with no TRANSDATA around it): the tiles address them through
 * the geometry's strides only.
 *
 * A tile function computes output pixels [p0, p1) of image img for the
 * output channel blocks [nb0, nb1): exact int32 sums of u * w (u = x as
 * u8; padding taps read x_zp), then common/quant.h's q_requant. Every path
 * computes the same int32 sums and the same f32 steps, so their bytes are
 * identical. Lanes of x past its channels have zero weights: every path
 * leaves out the groups of 4 of them in x's last channel block (qtail).
 * With a residual (r) each path's store goes on from the requantized value
 * c with common/quant.h's q_eltwise against r's element at y's offset, in
 * its f32 steps, and writes only the result.
 */
#ifndef RUNTIME_KERNELS_QCONV_H
#define RUNTIME_KERNELS_QCONV_H

#include <stdint.h>

#include "common/conv_group.h"
#include "runtime/kernels.h"

typedef struct rt_qconv_geom {
  const uint8_t *x;    /* NC1HWC0 [N][C1in][H][W][16] or NHWC [N][H][W][Cin], u8 or i8 bytes */
  const int8_t *w;     /* [C1out][KG][16][4] */
  const int32_t *bias; /* [C1out*16], x's zero point folded in */
  const float *mult;   /* [C1out*16] */
  uint8_t *y;          /* NC1HWC0 [N][C1out][Ho][Wo][16] or NHWC [N][Ho][Wo][Cout] */
  int64_t c1in, h, w_, ho, wo, cout, c1out, kg;
  /* Bytes between images, pixels and 16-channel blocks of x and of y (and
   * r): NC1HWC0 C1*H*W*16, 16, H*W*16; NHWC H*W*C, C, 16. rt_qconv_xat and
   * rt_qconv_yat are the only address arithmetic the tiles do. */
  size_t xis, xps, xbs, yis, yps, ybs;
  int kh, kw, sh, sw, pt, pl, dh, dw;
  convg_geom cg; /* block ranges (groups) */
  int32_t xzp, yzp, lo, hi;
  int32_t clo, chi; /* c's clamp: lo, hi; with r, y's dtype range */
  /* The residual epilogue (om_tasks.h): r NULL without one. r is read as
   * u = r ^ rmask (i8 as u8 + 128), rzp moved by 128 with it. */
  const uint8_t *r; /* NC1HWC0 as y */
  uint8_t rmask;
  int rmul; /* 1 mul, 0 add */
  int32_t rzp, ozp;
  float cs, rs, os; /* c's, r's and the output's scales */
  int depthwise;    /* groups = Cin = Cout: w is [C1out][KH*KW][16] */
  int qtail;        /* groups of 4 channels x's last channel block holds (1..4): the
                       rest of its lanes are padding, whose weights are 0, so the sums
                       skip them (an RGB stem reads 1 group of 4, not 4) */
  uint8_t xmask;    /* 0x80 for i8 x (u = x ^ 0x80 = x + 128), else 0 */
  uint8_t pad[64];  /* what a padding tap reads: x_zp ^ xmask, 64 times */
  int cin;          /* x's channels */
  /* A window of few channels (an RGB stem: one block, cin < 4) can walk
   * K as (tap, channel) bytes, kq groups of 4 (rt_qconv_window_bytes):
   * then wwin, NULL otherwise, holds the weights so packed,
   * [C1out][kq][16][4] (rt_qconv_pack_window), and a tile that uses it
   * gathers each pixel's window into kq groups instead of reading one
   * group of 4 lanes, 3 of them real, per tap. Set by the caller of the
   * tile (rt_qconv_run: in the core's L1); tiles without it read w. */
  const int8_t *wwin;
  int kq;
  /* The AVX2 tile's weights widened at load (rt_qconv_prepare; NULL:
   * the tile widens them per chunk as it goes): rt_qconv_widen_avx2's
   * layout, block nb's at nb * kg * 64. Set by the caller of the tile
   * (rt_qconv_run, from the task's side data); other tiles read w. */
  const int16_t *w16;
  /* QMATMUL (kernels_qmatmul.c) stores its sums with a float epilogue
   * instead of requantizing (epi 0, QCONV2D): a = acc + nzp * bias[co]
   * (bias the column sums, nzp = -x_zp), then epi 1: y (i32) = a; epi 2:
   * y (f32) = fl(fl((float)a) * scale[co * sstep]) [+ fbias[co]]. y is then
   * an i32 or f32 array addressed by rt_qconv_yat in elements; only lanes
   * below cout are written (y's rows are N apart), or with ypad all 16
   * (lanes past cout 0: QCONV2D's f32 NC1HWC0 y). QCONV2D with an f32 y
   * (format 2.13) is epi 2 with nzp 1, its bias' as the sums' offset and
   * mult as the scale per channel. */
  int epi, sstep, ypad;
  int32_t nzp;
  const float *scale, *fbias;
  /* epi 2's clamp (QCONV2D's run-time zero point form, format 2.15: a
   * Relu or Clip folded in): bit 0, f = f < flo ? flo : f; bit 1, f = f >
   * fhi ? fhi : f; after the bias, the same steps on every path. */
  int fclamp;
  float flo, fhi;
  /* QMATMUL with a run-time w (kernels_qmatmul.c): rowc, when not NULL,
   * holds a term per output pixel p (x's row) that every path adds to the
   * pixel's sums before the epilogue (-w_zp x the row's sum of x), and
   * ycut makes the requantizing store (epi 0) leave y's lanes past cout
   * alone (an ND y whose rows are cout apart) instead of writing them 0. */
  const int32_t *rowc;
  int ycut;
} rt_qconv_geom;

/* The offset of pixel (ih, iw) of x's channel block cb in image img. */
static inline size_t rt_qconv_xat(const rt_qconv_geom *g, int64_t img, int64_t cb, int64_t ih, int64_t iw) {
  return (size_t)img * g->xis + (size_t)cb * g->xbs + (size_t)(ih * g->w_ + iw) * g->xps;
}
/* The offset of output pixel p of y's (and r's) channel block nb in image img. */
static inline size_t rt_qconv_yat(const rt_qconv_geom *g, int64_t img, int64_t nb, int64_t p) {
  return (size_t)img * g->yis + (size_t)nb * g->ybs + (size_t)p * g->yps;
}

enum { QCONV_WINDOW_MAX = 512 }; /* bytes of a packed window (kh*kw*cin, rounded up to 4) */

typedef void (*rt_qconv_tile_fn)(const rt_qconv_geom *g, int64_t img, int64_t p0, int64_t p1, int64_t nb0,
                                 int64_t nb1);

/* Fills *g from a task checked at load (rt_qconv_check) and its data. */
void rt_qconv_geom_init(const om_task *task, const rt_args *args, rt_qconv_geom *g);
/* The bytes of the window-packed weights, 0 when the packing does not
 * apply (more than one input block or group, cin >= 4, a 1x1 kernel, a
 * window past QCONV_WINDOW_MAX bytes); sets g->kq. */
int64_t rt_qconv_window_bytes(rt_qconv_geom *g);
/* Packs g->w into dst (rt_qconv_window_bytes of them) as [C1out][kq][16][4]:
 * K index k = tap * cin + channel, zeros past the window. */
void rt_qconv_pack_window(const rt_qconv_geom *g, int8_t *dst);
/* Fills *g from a QMATMUL task checked at load (rt_qmatmul_check) and
 * its data: the 1x1 convolution over x's rows (kernels_qmatmul.c). */
void rt_qmatmul_geom_init(const om_task *task, const rt_args *args, rt_qconv_geom *g);
/* The portable tile. */
void rt_qconv_tile_c(const rt_qconv_geom *g, int64_t img, int64_t p0, int64_t p1, int64_t nb0, int64_t nb1);
#if defined(__x86_64__) && defined(__GNUC__)
/* AVX2 (vpmaddwd on 16-bit values) and AVX-512 VNNI (vpdpbusd) tiles;
 * callable only where rt_cpu() says the CPU has them. */
void rt_qconv_tile_avx2(const rt_qconv_geom *g, int64_t img, int64_t p0, int64_t p1, int64_t nb0,
                        int64_t nb1);
void rt_qconv_tile_vnni(const rt_qconv_geom *g, int64_t img, int64_t p0, int64_t p1, int64_t nb0,
                        int64_t nb1);
/* The bytes of the AVX2 tile's widened weights (g->w16), 0 when it is
 * better off without them: depthwise (it reads w), or a map of one pass
 * (kernels_qconv_avx2.c says why). */
int64_t rt_qconv_widened_bytes(const rt_qconv_geom *g);
/* g->w as 16-bit pairs of k into dst (rt_qconv_widened_bytes of them,
 * 32-byte aligned): per output block nb, at nb * kg * 64, its taps' input
 * blocks' real groups of 4 (qtail's in the last), each as two pairs of k
 * [pair][16 co][2 k]: the order in which the tile walks K. */
void rt_qconv_widen_avx2(const rt_qconv_geom *g, int16_t *dst);
#endif

#endif
