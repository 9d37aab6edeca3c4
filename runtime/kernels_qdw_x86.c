/* kernels_qdw_x86.c - QCONV2D's depthwise tile on AVX-512 VNNI
 * (kernels_qdw.h): groups = Cin = Cout, each output channel the sum over
 * the window of its own input channel times its own weights.
 *
 * Four output pixels of one row at once. Their windows' columns, in one
 * input row, lie among a few chunks of 4 consecutive input pixels (3x3
 * stride 1: 2 chunks, stride 2 or 5x5: 2 or 3). A chunk is one 64-byte
 * load (16 channels of 4 pixels in NC1HWC0) turned into 16 dwords, dword c
 * the 4 pixels' bytes of channel c (vpermd + vpshufb: a 4 x 4 transpose
 * of dwords, then of bytes in each dword). vpdpbusd of a chunk against a
 * weight vector whose dword c holds channel c's taps at the bytes of the
 * pixels output pixel j reads from that chunk (zeros elsewhere) adds up to
 * 4 of j's products per channel: a 3x3 row of taps is 6 vpdpbusd for the
 * 4 pixels (4 for the first chunk, 2 for the second), with no shuffles
 * per tap. The sums come out as the other tiles keep them, 16 channels of
 * one pixel a register, so the requantization is kernels_qconv_vnni.c's
 * vnni_store's f32 steps, and the 4 pixels' bytes are packed and stored
 * as one 64-byte row.
 *
 * Input pixels left or right of x read the zero point's bytes (a masked
 * load over g->pad); rows above or below are the zero point's chunk. The
 * sums are the portable tile's (exact int32), so the bytes are identical
 * to every other path. A residual epilogue, a window of more than
 * DWR_MAX_KH rows, or 4 pixels' columns past DWR_MAX_CH chunks go to
 * rt_qconv_tile_vnni.
 *
 * Compiled for plain x86-64: reached only through rt_cpu() (cpu.c) when the
 * CPU has AVX-512 VNNI.
 */
#include "runtime/kernels_qdw.h"

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#define T_VNNI __attribute__((target("avx512f,avx512bw,avx512dq,avx512vnni,avx2,fma,f16c")))
#define T_VNNI_INLINE                                                                                        \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vnni,avx2,fma,f16c"), always_inline)) static inline

enum { DWR_MAX_KH = 7, DWR_MAX_CH = 4 };

/* One output block's constants: w[kh][j][c], dword c = channel c's taps of
 * window row kh at the bytes of the pixels of chunk c that output pixel j
 * reads (0 elsewhere); bias and mult of the 16 channels. */
typedef struct dwr_block {
  __m512i w[DWR_MAX_KH][4][DWR_MAX_CH];
  __m512i bias;
  __m512 mult;
  __mmask16 keep; /* lanes of real channels */
} dwr_block;

/* The first and last chunk output pixel j reads (window columns j*sw +
 * k*dw, k = 0..kw-1, from the group's first input column). */
static inline int dwr_clo(int j, int kw, int sw, int dw) {
  (void)kw, (void)dw;
  return j * sw / 4;
}
static inline int dwr_chi(int j, int kw, int sw, int dw) { return (j * sw + (kw - 1) * dw) / 4; }

T_VNNI_INLINE void dwr_block_init(const rt_qconv_geom *g, int64_t nb, int nch, dwr_block *b) {
  const int taps = g->kh * g->kw;
  const int8_t *wb = g->w + (size_t)(nb * taps) * C0;
  for (int r = 0; r < g->kh; r++)
    for (int j = 0; j < 4; j++)
      for (int c = 0; c < nch; c++) {
        __m512i v = _mm512_setzero_si512();
        for (int k = 0; k < g->kw; k++) {
          const int pos = j * g->sw + k * g->dw - 4 * c; /* byte of the tap's pixel in the chunk */
          if (pos < 0 || pos > 3) continue;
          const __m512i t =
              _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(wb + (r * g->kw + k) * C0)));
          v = _mm512_or_si512(v, _mm512_sll_epi32(t, _mm_cvtsi32_si128(8 * pos)));
        }
        b->w[r][j][c] = v;
      }
  const int64_t real = g->cout - nb * C0;
  b->keep = real >= C0 ? (__mmask16)0xffff : (__mmask16)((1u << real) - 1);
  b->bias = _mm512_loadu_si512(g->bias + nb * C0);
  b->mult = _mm512_loadu_ps(g->mult + nb * C0);
}

/* 4 pixels' 16 channels (64 bytes, NC1HWC0) as 16 dwords of the 4 pixels'
 * bytes of one channel. */
T_VNNI_INLINE __m512i dwr_transpose(__m512i v) {
  const __m512i dperm = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
  const __m512i bshuf =
      _mm512_broadcast_i32x4(_mm_set_epi8(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0));
  return _mm512_shuffle_epi8(_mm512_permutexvar_epi32(dperm, v), bshuf);
}

/* Requantizes the 4 pixels' sums, the bias in them (vnni_store's f32
 * steps), and stores the first n of them at y. */
T_VNNI_INLINE void dwr_store(const dwr_block *b, const __m512i *acc, uint8_t *y, int n, __m512 flo,
                             __m512 fhi, __m512i yzp, int s8) {
  __m512i v[4];
  for (int j = 0; j < 4; j++) {
    __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(acc[j]), b->mult);
    f = _mm512_min_ps(_mm512_max_ps(f, flo), fhi);
    v[j] = _mm512_add_epi32(_mm512_cvt_roundps_epi32(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), yzp);
  }
  if (n == 4 && b->keep == 0xffff) { /* values within y's range: the packs do not saturate */
    const __m512i a = _mm512_packs_epi32(v[0], v[1]), c = _mm512_packs_epi32(v[2], v[3]);
    const __m512i by = s8 ? _mm512_packs_epi16(a, c) : _mm512_packus_epi16(a, c);
    /* lane L, dword p: pixel p's channels 4L..4L+3 -> pixel p's 16 channels in lane p */
    const __m512i dperm = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
    _mm512_storeu_si512(y, _mm512_permutexvar_epi32(dperm, by));
    return;
  }
  for (int j = 0; j < n; j++)
    _mm_storeu_si128((__m128i *)(y + (size_t)j * C0), _mm512_maskz_cvtepi32_epi8(b->keep, v[j]));
}

/* Block nb, pixels [p0, p1) in groups of up to 4 of one row. KW, SW, DW:
 * the window's width, stride and dilation (constants where the caller
 * names a shape, so that the terms below unroll to exactly the chunks
 * each pixel reads), NCH the chunks a group reads. */
T_VNNI_INLINE void dwr_run(const rt_qconv_geom *g, int64_t img, int64_t p0, int64_t p1, int64_t nb,
                           const int KW, const int SW, const int DW, const int NCH) {
  dwr_block b;
  dwr_block_init(g, nb, NCH, &b);
  const __m512i mask = _mm512_set1_epi8((char)g->xmask);
  const __m512i padraw = _mm512_set1_epi8((char)g->pad[0]);
  const __m512i upad = _mm512_xor_si512(padraw, mask);
  const __m512 flo = _mm512_set1_ps((float)(g->clo - g->yzp)), fhi = _mm512_set1_ps((float)(g->chi - g->yzp));
  const __m512i yzp = _mm512_set1_epi32(g->yzp);
  const int s8 = g->clo < 0; /* else every value is 0..255 (u8 y, or i8 y clamped at 0 or above) */
  const uint8_t *xb = g->x + rt_qconv_xat(g, img, nb, 0, 0);
  uint8_t *yb = g->y + rt_qconv_yat(g, img, nb, 0);
  const int64_t W = g->w_;
  for (int64_t p = p0; p < p1;) {
    const int64_t oh = p / g->wo, ow = p % g->wo;
    const int64_t left = p1 - p < g->wo - ow ? p1 - p : g->wo - ow; /* pixels left in the tile and row */
    const int n = left < 4 ? (int)left : 4;
    const int64_t base = ow * SW - g->pl; /* the group's first input column */
    __mmask16 m[DWR_MAX_CH];
    for (int c = 0; c < NCH; c++) {
      const int64_t c0 = base + 4 * c;
      if (c0 >= 0 && c0 + 3 < W) {
        m[c] = 0xffff;
      } else {
        unsigned mm = 0;
        for (int i = 0; i < 4; i++)
          if (c0 + i >= 0 && c0 + i < W) mm |= 0xfu << (4 * i);
        m[c] = (__mmask16)mm;
      }
    }
    /* two sums a pixel, even and odd chunks, so that no chain of vpdpbusd
     * waits on the last; int32 sums wrap: the bias first, as last */
    __m512i acc[2][4] = {
        {b.bias, b.bias, b.bias, b.bias},
        {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()}};
    for (int r = 0; r < g->kh; r++) {
      const int64_t ih = oh * g->sh - g->pt + (int64_t)r * g->dh;
      __m512i x[DWR_MAX_CH];
      if (ih < 0 || ih >= g->h) {
        for (int c = 0; c < NCH; c++)
          x[c] = upad;
      } else {
        const uint8_t *row = xb + (size_t)(ih * W) * C0;
        for (int c = 0; c < NCH; c++) {
          const uint8_t *src = row + (base + 4 * c) * (int64_t)C0; /* masked lanes are never read */
          const __m512i v =
              m[c] == 0xffff ? _mm512_loadu_si512(src) : _mm512_mask_loadu_epi32(padraw, m[c], src);
          x[c] = _mm512_xor_si512(dwr_transpose(v), mask);
        }
      }
      for (int j = 0; j < 4; j++)
        for (int c = 0; c < NCH; c++)
          if (c >= dwr_clo(j, KW, SW, DW) && c <= dwr_chi(j, KW, SW, DW))
            acc[c & 1][j] = _mm512_dpbusd_epi32(acc[c & 1][j], x[c], b.w[r][j][c]);
    }
    for (int j = 0; j < 4; j++)
      acc[0][j] = _mm512_add_epi32(acc[0][j], acc[1][j]);
    dwr_store(&b, acc[0], yb + (size_t)p * C0, n, flo, fhi, yzp, s8);
    p += n;
  }
}

/* The chunks of 4 input pixels a group of 4 output pixels reads. */
static inline int dwr_chunks(const rt_qconv_geom *g) { return (3 * g->sw + (g->kw - 1) * g->dw) / 4 + 1; }

T_VNNI void rt_qconv_dw_tile_vnni(const rt_qconv_geom *g, int64_t img, int64_t p0, int64_t p1, int64_t nb0,
                                  int64_t nb1) {
  const int nch = g->depthwise ? dwr_chunks(g) : 0;
  if (!g->depthwise || g->r || g->kh > DWR_MAX_KH || nch > DWR_MAX_CH || g->xps != C0) {
    rt_qconv_tile_vnni(g, img, p0, p1, nb0, nb1);
    return;
  }
  const int kw = g->kw, sw = g->sw, dw = g->dw;
  for (int64_t nb = nb0; nb < nb1; nb++) {
    if (kw == 3 && sw == 1 && dw == 1)
      dwr_run(g, img, p0, p1, nb, 3, 1, 1, 2);
    else if (kw == 3 && sw == 2 && dw == 1)
      dwr_run(g, img, p0, p1, nb, 3, 2, 1, 3);
    else if (kw == 5 && sw == 1 && dw == 1)
      dwr_run(g, img, p0, p1, nb, 5, 1, 1, 2);
    else if (kw == 5 && sw == 2 && dw == 1)
      dwr_run(g, img, p0, p1, nb, 5, 2, 1, 3);
    else if (nch <= 2)
      dwr_run(g, img, p0, p1, nb, kw, sw, dw, 2);
    else if (nch == 3)
      dwr_run(g, img, p0, p1, nb, kw, sw, dw, 3);
    else
      dwr_run(g, img, p0, p1, nb, kw, sw, dw, 4);
  }
}

#endif
