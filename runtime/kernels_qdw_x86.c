/* kernels_qdw_x86.c - QCONV2D's depthwise tile on AVX-512 VNNI
 * (kernels_qdw.h): groups = Cin = Cout, each output channel the sum over
 * the window of its own input channel times its own weights.
 *
 * Four output pixels of one row at once, and four taps at once: a ZMM
 * holds one tap's 16 channels of the 4 pixels (one 128-bit lane a pixel;
 * one load where the pixels' windows lie inside x and the stride is 1 or
 * 2, else 4 rows gathered). Four such ZMMs (taps t..t+3) are interleaved
 * byte by byte, then 16-bit by 16-bit (vpunpck*), into 4 ZMMs whose dwords
 * are (tap t, t+1, t+2, t+3) of one pixel's channel c; vpdpbusd against
 * the same 4 taps' weights of channel c adds the 4 exact products into the
 * channel's int32 sum. So sum k (k = 0..3) holds, per pixel lane, channels
 * 4k..4k+3, and one vpdpbusd does 64 multiply-adds where the per-pixel
 * loop (kernels_qconv_x86.c) does 32 with a widening and a vpmaddwd.
 * Taps past the window have zero weights and read the zero point's row.
 *
 * The sums are the portable tile's (exact int32), the requantization is
 * kernels_qconv_x86.c's vnni_store's f32 steps lane by lane (bias and mult
 * broadcast in the sums' channel order), and a 4 x 4 dword transpose puts
 * the bytes back in NC1HWC0 order: bytes identical to every other path.
 * A residual epilogue or a window past DW4_MAX_TAPS taps goes to
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

enum { DW4_MAX_TAPS = 32, DW4_MAX_QUADS = DW4_MAX_TAPS / 4 };

/* One output block's constants: the weights as vpdpbusd reads them,
 * w4[quad][k] dword j of every lane = taps 4*quad..4*quad+3 of channel
 * 4k+j (0 past the window); bias and mult in the sums' order. */
typedef struct dw4_block {
  __m512i w4[DW4_MAX_QUADS][4];
  __m512i bias[4];
  __m512 mult[4];
  __mmask16 keep[4]; /* lanes of real channels */
} dw4_block;

T_VNNI_INLINE void dw4_block_init(const rt_qconv_geom *g, int64_t nb, int quads, dw4_block *b) {
  const int taps = g->kh * g->kw;
  const int8_t *wb = g->w + (size_t)(nb * taps) * C0;
  for (int qd = 0; qd < quads; qd++)
    for (int k = 0; k < 4; k++) {
      int8_t lane[16];
      for (int j = 0; j < 4; j++)
        for (int i = 0; i < 4; i++) {
          const int t = 4 * qd + i;
          lane[4 * j + i] = t < taps ? wb[t * C0 + 4 * k + j] : 0;
        }
      b->w4[qd][k] = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)lane));
    }
  const int64_t real = g->cout - nb * C0;
  for (int k = 0; k < 4; k++) {
    b->bias[k] = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(g->bias + nb * C0 + 4 * k)));
    b->mult[k] = _mm512_broadcast_f32x4(_mm_loadu_ps(g->mult + nb * C0 + 4 * k));
    const int64_t n = real - 4 * k; /* real channels among 4k..4k+3 */
    const unsigned m = n >= 4 ? 0xfu : n <= 0 ? 0u : (1u << n) - 1;
    b->keep[k] = (__mmask16)(m | m << 4 | m << 8 | m << 12);
  }
}

/* Sums of 4 taps' rows v[0..3] (x ^ mask done) added into acc. */
T_VNNI_INLINE void dw4_quad(__m512i *acc, const __m512i *v, const __m512i *w4) {
  const __m512i ablo = _mm512_unpacklo_epi8(v[0], v[1]), abhi = _mm512_unpackhi_epi8(v[0], v[1]);
  const __m512i cdlo = _mm512_unpacklo_epi8(v[2], v[3]), cdhi = _mm512_unpackhi_epi8(v[2], v[3]);
  acc[0] = _mm512_dpbusd_epi32(acc[0], _mm512_unpacklo_epi16(ablo, cdlo), w4[0]);
  acc[1] = _mm512_dpbusd_epi32(acc[1], _mm512_unpackhi_epi16(ablo, cdlo), w4[1]);
  acc[2] = _mm512_dpbusd_epi32(acc[2], _mm512_unpacklo_epi16(abhi, cdhi), w4[2]);
  acc[3] = _mm512_dpbusd_epi32(acc[3], _mm512_unpackhi_epi16(abhi, cdhi), w4[3]);
}

/* Requantizes the sums (vnni_store's f32 steps) and stores the first n of
 * the 4 pixels from y. */
T_VNNI_INLINE void dw4_store(const rt_qconv_geom *g, const dw4_block *b, const __m512i *acc, uint8_t *y,
                             int n) {
  const __m512 flo = _mm512_set1_ps((float)(g->clo - g->yzp)), fhi = _mm512_set1_ps((float)(g->chi - g->yzp));
  const __m512i yzp = _mm512_set1_epi32(g->yzp);
  __m128i by[4];
  for (int k = 0; k < 4; k++) {
    __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(acc[k], b->bias[k])), b->mult[k]);
    f = _mm512_min_ps(_mm512_max_ps(f, flo), fhi);
    const __m512i v =
        _mm512_add_epi32(_mm512_cvt_roundps_epi32(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), yzp);
    by[k] = _mm512_maskz_cvtepi32_epi8(b->keep[k], v); /* dword p: pixel p's channels 4k..4k+3 */
  }
  const __m128i t0 = _mm_unpacklo_epi32(by[0], by[1]), t1 = _mm_unpacklo_epi32(by[2], by[3]);
  const __m128i t2 = _mm_unpackhi_epi32(by[0], by[1]), t3 = _mm_unpackhi_epi32(by[2], by[3]);
  const __m128i px[4] = {_mm_unpacklo_epi64(t0, t1), _mm_unpackhi_epi64(t0, t1), _mm_unpacklo_epi64(t2, t3),
                         _mm_unpackhi_epi64(t2, t3)};
  if (n == 4) {
    const __m512i all = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set_m128i(px[1], px[0])),
                                           _mm256_set_m128i(px[3], px[2]), 1);
    _mm512_storeu_si512(y, all);
    return;
  }
  for (int i = 0; i < n; i++)
    _mm_storeu_si128((__m128i *)(y + (size_t)i * C0), px[i]);
}

/* Pixel pi's row at tap t: x's, or the zero point's where the tap falls
 * in the padding or the pixel is past n. */
static inline const uint8_t *dw4_row(const rt_qconv_geom *g, const uint8_t *xb, int64_t ih, int64_t ow,
                                     int pi, int n, int t) {
  const int64_t iw = (ow + pi) * g->sw - g->pl + (t % g->kw) * g->dw;
  return pi < n && ih >= 0 && ih < g->h && iw >= 0 && iw < g->w_ ? xb + (size_t)(ih * g->w_ + iw) * C0
                                                                 : g->pad;
}

/* The 4 pixels' rows of taps 4*qd..4*qd+3, x ^ mask, into v. fast: the
 * window of every pixel lies inside x's columns, so a tap's 4 rows are one
 * load (stride 1) or two halves (stride 2); else each row on its own. */
T_VNNI_INLINE void dw4_load(const rt_qconv_geom *g, const uint8_t *xb, int64_t oh, int64_t ow, int n, int qd,
                            int fast, __m512i mask, __m512i pad, __m512i *v) {
  const int taps = g->kh * g->kw;
  for (int i = 0; i < 4; i++) {
    const int t = 4 * qd + i;
    const int64_t ih = oh * g->sh - g->pt + (t / g->kw) * g->dh;
    __m512i r;
    if (t >= taps || ih < 0 || ih >= g->h) {
      r = pad;
    } else if (fast) {
      const uint8_t *src = xb + (size_t)(ih * g->w_ + ow * g->sw - g->pl + (t % g->kw) * g->dw) * C0;
      r = g->sw == 1
              ? _mm512_loadu_si512(src)
              : _mm512_shuffle_i64x2(_mm512_loadu_si512(src), _mm512_maskz_loadu_epi32(0x0fff, src + 64),
                                     _MM_SHUFFLE(2, 0, 2, 0));
    } else {
      const __m256i lo = _mm256_set_m128i(_mm_loadu_si128((const __m128i *)dw4_row(g, xb, ih, ow, 1, n, t)),
                                          _mm_loadu_si128((const __m128i *)dw4_row(g, xb, ih, ow, 0, n, t)));
      const __m256i hi = _mm256_set_m128i(_mm_loadu_si128((const __m128i *)dw4_row(g, xb, ih, ow, 3, n, t)),
                                          _mm_loadu_si128((const __m128i *)dw4_row(g, xb, ih, ow, 2, n, t)));
      r = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
    }
    v[i] = _mm512_xor_si512(r, mask);
  }
}

/* Block nb, pixels [p0, p1): groups of up to 4 pixels of one row. */
T_VNNI_INLINE void dw4_run(const rt_qconv_geom *g, int64_t img, int64_t p0, int64_t p1, int64_t nb) {
  dw4_block b;
  const int quads = (g->kh * g->kw + 3) / 4;
  dw4_block_init(g, nb, quads, &b);
  const __m512i mask = _mm512_set1_epi8((char)g->xmask);
  const __m512i pad = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)g->pad));
  const uint8_t *xb = g->x + (size_t)((img * g->c1in + nb) * g->h * g->w_) * C0;
  uint8_t *yb = g->y + (size_t)((img * g->c1out + nb) * g->ho * g->wo) * C0;
  const int64_t span = (int64_t)(g->kw - 1) * g->dw; /* a window's columns past its first */
  for (int64_t p = p0; p < p1;) {
    const int64_t oh = p / g->wo, ow = p % g->wo;
    int64_t left = p1 - p < g->wo - ow ? p1 - p : g->wo - ow; /* pixels left in the tile and row */
    const int n = left < 4 ? (int)left : 4;
    const int64_t iw0 = ow * g->sw - g->pl;
    const int fast = n == 4 && g->sw <= 2 && iw0 >= 0 && iw0 + 3 * g->sw + span < g->w_;
    __m512i acc[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                      _mm512_setzero_si512()};
    for (int qd = 0; qd < quads; qd++) {
      __m512i v[4];
      dw4_load(g, xb, oh, ow, n, qd, fast, mask, pad, v);
      dw4_quad(acc, v, b.w4[qd]);
    }
    dw4_store(g, &b, acc, yb + (size_t)p * C0, n);
    p += n;
  }
}

T_VNNI void rt_qconv_dw_tile_vnni(const rt_qconv_geom *g, int64_t img, int64_t p0, int64_t p1, int64_t nb0,
                                  int64_t nb1) {
  if (!g->depthwise || g->r || g->kh * g->kw > DW4_MAX_TAPS) {
    rt_qconv_tile_vnni(g, img, p0, p1, nb0, nb1);
    return;
  }
  for (int64_t nb = nb0; nb < nb1; nb++)
    dw4_run(g, img, p0, p1, nb);
}

#endif
