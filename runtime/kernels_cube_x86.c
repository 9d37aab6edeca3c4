/* kernels_cube_x86.c - the CONV2D tile on AVX2 + FMA + F16C hosts.
 *
 * Same tiles and the same staging buffers as the portable path in
 * kernels_cube.c (the tiling contract of om_format.h is unchanged), but
 * every step uses the host:
 *   load3d  img2col of a K chunk into L0A as f32 [pixel][k], fp16 converted
 *           16 lanes at a time with vcvtph2ps (1x1 stride-1 convolutions are
 *           a plain conversion copy of NC1HWC0 rows: no img2col);
 *   loadB   each 16x16 weight fractal of FRACTAL_Z ([co][ci]) converted and
 *           transposed in registers (8x8 AVX transposes) into L0B as
 *           [n block][k][16 co], read in FRACTAL_Z order;
 *   mmad    a 6-pixel x 16-channel micro-kernel: 12 YMM accumulators, per k
 *           step two B loads and six broadcasts of A feeding 12 FMAs; pixel
 *           groups outer, n blocks inner. The first chunk starts from zero,
 *           middle chunks keep partial sums in L0C ([n block][tile_m][16]
 *           f32), and the last chunk runs the epilogue straight from the
 *           registers: + bias, + residual (f16 or f32), relu / clip, padding
 *           channels forced to 0, f16 store with vcvtps2ph (round to nearest
 *           even) or f32 store.
 * K chunks are tile_k fractals, or more when fractals carry padding lanes
 * (a 3-channel stem stages 3 of 16 lanes), up to what the f32 staging
 * buffers hold; when the tile's weights for the whole K fit L0B, pixel
 * groups are finished one after the other with no partial sums in L0C.
 * Three tile shapes skip img2col: kernels wider than 1x1 on whole channel
 * blocks read the input rows converted once into L1 (conv_tile_direct: the
 * micro-kernel addresses each fractal of each pixel there); inputs of at
 * most 4 channels (RGB stems) are packed into L1 rows so that a kernel row
 * of taps is one contiguous run the micro-kernel reads there (pack_rows,
 * conv_packed); a tile of a single output pixel
 * (fully connected layers) is a matrix-vector product read straight from
 * FRACTAL_Z (conv_tile_gemv).
 * fp16 x fp16 products are exact in f32, so results differ from the portable
 * path only by summation order (FMA keeps one rounding per step).
 *
 * Compiled for plain x86-64: every function carries target("avx2,fma,f16c")
 * and is only reached through rt_cpu() (cpu.c) when the CPU has all three.
 */
#include "runtime/kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)

#include "runtime/x86_avx2.h"

enum { MR = 6, MAX_NB = 16 }; /* pixel rows of the micro-kernel; n blocks per pass */

/* --- staging */

enum { MAX_CHUNK = 512, SLACK = C0 }; /* fractals per K chunk; floats past L0A's rows */

/* Inputs with at most 4 channels (RGB stems), dilation_w 1: the tile's input
 * rows are packed once into L1 as f32 [column][channel], padding columns
 * zeroed, so that each kernel row of a pixel's img2col row (the whole K) is
 * kw * cin consecutive floats there, which the micro-kernel reads in place
 * (conv_packed). */
typedef struct packed {
  const float *rows; /* [nrows][rowf] in core->l1 */
  int64_t oh0, rowf;
} packed;

/* 0 (nothing packed) when the case does not apply or L1 is too small. */
static AVX2 int pack_rows(const rt_conv_geom *g, int64_t img, int64_t m0, int64_t mrows, rt_core *core,
                          packed *pk) {
  const int64_t cin = g->cin, sh = g->p.sh;
  if (cin > 4 || g->p.dw != 1 || g->c1 != 1) return 0;
  const int64_t oh0 = m0 / g->wo, oh1 = (m0 + mrows - 1) / g->wo;
  const int64_t ih0 = oh0 * sh - g->p.pt, nrows = (oh1 - oh0) * sh + (g->p.kh - 1) * g->p.dh + 1;
  const int64_t pw = (g->wo - 1) * g->p.sw + g->p.kw, rowf = pw * cin;
  if ((uint64_t)(nrows * rowf + 4) * sizeof(float) > core->l1_bytes) return 0; /* + the last 4-lane store */
  float *out = (float *)core->l1;
  const int f16 = g->x->dtype == DT_FLOAT16;
  const size_t plane = (size_t)(img * g->h * g->w_);
  const int64_t h = g->h, w = g->w_, pl = g->p.pl, wend = pw - pl < w ? pw - pl : w; /* columns < wend */
  for (int64_t r = 0; r < nrows; r++) {
    float *dst = out + r * rowf;
    const int64_t ih = ih0 + r;
    memset(dst, 0, (size_t)rowf * sizeof(float));
    if (ih < 0 || ih >= h) continue;
    /* the interior: 4 lanes stored, cin kept (the next column overwrites the rest) */
    const size_t at = (plane + (size_t)(ih * w)) * C0;
    float *d = dst + pl * cin;
    if (f16) {
      const uint16_t *src = (const uint16_t *)g->xd + at;
      for (int64_t iw = 0; iw < wend; iw++, d += cin, src += C0)
        _mm_storeu_ps(d, _mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)src)));
    } else {
      const float *src = (const float *)g->xd + at;
      for (int64_t iw = 0; iw < wend; iw++, d += cin, src += C0)
        _mm_storeu_ps(d, _mm_loadu_ps(src));
    }
    if (pl + wend < pw) memset(dst + (pl + wend) * cin, 0, (size_t)((pw - pl - wend) * cin) * sizeof(float));
  }
  *pk = (packed){out, oh0, rowf};
  return 1;
}

/* L0A[m][k] for pixels m0 .. m0+mrows-1 and fractals kc .. kc+kn-1, the real
 * lanes of each fractal packed one after the other (lda of them). Pixel by
 * pixel, fractals in order, each stored as 16 lanes: the padding lanes spill
 * into columns (or the next row) written later, and past the last row into
 * SLACK floats the chunk sizing leaves free. */
static AVX2 void stage_a(const rt_conv_geom *g, int64_t img, int64_t m0, int64_t mrows, int64_t kc,
                         int64_t kn, int64_t lda, float *l0a) {
  const int f16 = g->x->dtype == DT_FLOAT16;
  const int64_t taps = (int64_t)g->p.kh * g->p.kw, hw = g->h * g->w_;
  if (taps == 1 && g->p.sh == 1 && g->p.sw == 1 && g->p.pt == 0 && g->p.pl == 0 && g->ho == g->h &&
      g->wo == g->w_) { /* 1x1: the input rows are the GEMM rows, a conversion copy */
    int64_t col = 0;
    for (int64_t kk = 0; kk < kn; kk++) {
      const size_t at = ((size_t)((img * g->c1 + kc + kk) * hw) + (size_t)m0) * C0;
      float *dst = l0a + col;
      const int lanes = rt_conv_k_lanes(g, kc + kk);
      col += lanes;
      if (lanes < C0) { /* the last channel block: store only its real lanes */
        int32_t mk[2 * C0];
        for (int j = 0; j < 2 * C0; j++)
          mk[j] = j < C0 && j < lanes ? -1 : 0;
        const __m256i mlo = _mm256_loadu_si256((const __m256i *)mk);
        const __m256i mhi = _mm256_loadu_si256((const __m256i *)(mk + 8));
        for (int64_t m = 0; m < mrows; m++, dst += lda) {
          __m256 lo = ld8h(g->xd, f16, at + (size_t)m * C0), hi = ld8h(g->xd, f16, at + (size_t)m * C0 + 8);
          _mm256_maskstore_ps(dst, mlo, lo);
          _mm256_maskstore_ps(dst + 8, mhi, hi);
        }
      } else if (f16) {
        const uint16_t *s = (const uint16_t *)g->xd + at;
        for (int64_t m = 0; m < mrows; m++, dst += lda, s += C0) {
          _mm256_storeu_ps(dst, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)s)));
          _mm256_storeu_ps(dst + 8, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(s + 8))));
        }
      } else {
        const float *s = (const float *)g->xd + at;
        for (int64_t m = 0; m < mrows; m++, dst += lda, s += C0) {
          _mm256_storeu_ps(dst, _mm256_loadu_ps(s));
          _mm256_storeu_ps(dst + 8, _mm256_loadu_ps(s + 8));
        }
      }
    }
    return;
  }
  int32_t dy[MAX_CHUNK], dx[MAX_CHUNK], lanes[MAX_CHUNK];
  size_t plane[MAX_CHUNK];
  for (int64_t kk = 0; kk < kn; kk++) {
    int64_t kf = kc + kk, c1 = kf / taps, tap = kf % taps;
    dy[kk] = (int32_t)((tap / g->p.kw) * g->p.dh - g->p.pt);
    dx[kk] = (int32_t)((tap % g->p.kw) * g->p.dw - g->p.pl);
    lanes[kk] = rt_conv_k_lanes(g, kf);
    plane[kk] = (size_t)((img * g->c1 + c1) * hw);
  }
  const uint64_t h = (uint64_t)g->h, w = (uint64_t)g->w_;
  const int64_t wo = g->wo, sh = g->p.sh, sw = g->p.sw;
  const void *xd = g->xd;
  int64_t oh = m0 / wo, ow = m0 % wo;
  for (int64_t m = 0; m < mrows; m++) {
    float *dst = l0a + m * lda;
    const int64_t bh = oh * sh, bw = ow * sw;
    for (int64_t kk = 0; kk < kn; kk++) {
      int64_t ih = bh + dy[kk], iw = bw + dx[kk];
      const int inside = (uint64_t)ih < h && (uint64_t)iw < w;
      if (lanes[kk] <= 4) { /* an RGB stem: one 4-lane conversion */
        __m128 v = _mm_setzero_ps();
        if (inside) {
          size_t at = (plane[kk] + (size_t)(ih * (int64_t)w + iw)) * C0;
          v = f16 ? _mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)((const uint16_t *)xd + at)))
                  : _mm_loadu_ps((const float *)xd + at);
        }
        _mm_storeu_ps(dst, v);
        dst += lanes[kk];
        continue;
      }
      if (lanes[kk] <= 8) { /* a few real channels: half the lanes suffice */
        __m256 lo = _mm256_setzero_ps();
        if (inside) lo = ld8h(xd, f16, (plane[kk] + (size_t)(ih * (int64_t)w + iw)) * C0);
        _mm256_storeu_ps(dst, lo);
        dst += lanes[kk];
        continue;
      }
      __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
      if (inside) {
        size_t at = (plane[kk] + (size_t)(ih * (int64_t)w + iw)) * C0;
        if (f16) {
          const uint16_t *s = (const uint16_t *)xd + at;
          lo = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)s));
          hi = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(s + 8)));
        } else {
          lo = _mm256_loadu_ps((const float *)xd + at);
          hi = _mm256_loadu_ps((const float *)xd + at + 8);
        }
      }
      _mm256_storeu_ps(dst, lo);
      _mm256_storeu_ps(dst + 8, hi);
      dst += lanes[kk];
    }
    if (++ow == wo) ow = 0, oh++;
  }
}

/* r[0..7] <- its transpose. */
AVX2_INLINE void transpose8(__m256 r[8]) {
  __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20), r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20), r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31), r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31), r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

/* 8 rows (co) x 8 columns (ci) of a fractal starting at row co0, column ci0,
 * as f32. */
AVX2_INLINE void load8(const void *frac, int f16, int co0, int ci0, __m256 r[8]) {
  for (int i = 0; i < 8; i++) {
    size_t at = (size_t)(co0 + i) * C0 + (size_t)ci0;
    r[i] = f16 ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)frac + at)))
               : _mm256_loadu_ps((const float *)frac + at);
  }
}

/* dst[ci][co] (row stride 16) = frac[co][ci] for ci < lanes. */
static AVX2 void transpose_fractal(const void *frac, int f16, int lanes, float *dst) {
  float tmp[C0 * C0];
  float *out = lanes == C0 ? dst : tmp;
  for (int cb = 0; cb < 2; cb++) {   /* ci half */
    for (int ob = 0; ob < 2; ob++) { /* co half */
      if (cb == 1 && lanes <= 8) break;
      __m256 r[8];
      load8(frac, f16, ob * 8, cb * 8, r);
      transpose8(r);
      for (int i = 0; i < 8; i++)
        _mm256_storeu_ps(out + (size_t)(cb * 8 + i) * C0 + ob * 8, r[i]);
    }
  }
  if (out != dst) memcpy(dst, tmp, (size_t)lanes * C0 * sizeof(float));
}

/* L0B[nb][k][co] for n blocks nb0 .. nb0+nblocks-1, fractals kc .. kc+kn-1,
 * read in FRACTAL_Z order (a chunk's fractals of consecutive n blocks are
 * contiguous). */
static AVX2 void stage_b(const rt_conv_geom *g, int64_t nb0, int64_t nblocks, int64_t kc, int64_t kn,
                         int64_t klen, float *l0b) {
  const int f16 = g->w->dtype == DT_FLOAT16;
  const size_t es = f16 ? 2 : 4;
  int64_t koff = 0;
  for (int64_t kk = 0; kk < kn; kk++) {
    const int lanes = rt_conv_k_lanes(g, kc + kk);
    const uint8_t *frac = (const uint8_t *)g->wd + (size_t)((kc + kk) * g->c1out + nb0) * C0 * C0 * es;
    for (int64_t nb = 0; nb < nblocks; nb++, frac += C0 * C0 * es)
      transpose_fractal(frac, f16, lanes, l0b + (nb * klen + koff) * C0);
    koff += lanes;
  }
}

/* --- micro-kernel */

/* The write-back of one n block: y rows (pixels) start at y/res, 16 apart. */
typedef struct epi {
  __m256 bias0, bias1, keep0, keep1, lo, hi; /* the first chunk starts from the bias */
  int act;
  uint8_t yf16, rf16, partial;               /* partial: some lanes are padding channels */
  uint8_t half;                              /* lanes 8..15 are all padding: only lanes 0..7 are computed */
  void *y;                                   /* NULL: keep the sums in L0C (not the last chunk) */
  const void *res;                           /* or NULL */
} epi;

AVX2_INLINE __m256 act8(__m256 v, const epi *e) {
  if (e->act == OM_ACT_RELU) return _mm256_max_ps(v, _mm256_setzero_ps());
  if (e->act == OM_ACT_CLIP) return _mm256_min_ps(_mm256_max_ps(v, e->lo), e->hi);
  return v;
}

/* c[r][0..16) (+)= sum_k A[r][k] * b[k][0..16) for r < R, R <= MR, where the
 * k axis is nseg segments of seglen values: segment s of row r starts at
 * seg[s] + roff[r] (img2col'd L0A: one segment, rows a row length apart;
 * the direct path: one segment per fractal, roff[r] = where pixel r is).
 * first: start from the bias instead of c; e->y: write y instead of c. H = 1
 * (an n block whose lanes 8..15 are padding channels, e->half) computes
 * lanes 0..7 only: half the FMAs and B loads; lanes 8..15 of y are written
 * 0, as the padding rule wants, and those of c are left alone (no later
 * chunk reads them). The accumulators are named variables (an array of
 * __m256 is kept in memory by gcc); rows >= R and the upper half with H = 1
 * are dead code once R and H are constants. */
#define MK_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
AVX2_INLINE void mk(const int R, const int H, const float *const *seg, size_t nseg, size_t seglen,
                    const size_t *roff, const float *b, float *c, int first, const epi *e, size_t yrow) {
#define MK_DECL(r) __m256 c##r##0 = e->bias0, c##r##1 = e->bias1;
  MK_ROWS(MK_DECL)
#define MK_LOAD(r)                                                                                           \
  if (R > r && !first) c##r##0 = _mm256_loadu_ps(c + r * C0), c##r##1 = H > 1 ? _mm256_loadu_ps(c + r * C0 + 8) : c##r##1;
  MK_ROWS(MK_LOAD)
  const size_t o1 = R > 1 ? roff[1] : 0, o2 = R > 2 ? roff[2] : 0, o3 = R > 3 ? roff[3] : 0;
  const size_t o4 = R > 4 ? roff[4] : 0, o5 = R > 5 ? roff[5] : 0;
  for (size_t sg = 0; sg < nseg; sg++) {
    const float *a0 = seg[sg], *a1 = a0 + o1, *a2 = a0 + o2, *a3 = a0 + o3, *a4 = a0 + o4, *a5 = a0 + o5;
    for (size_t k = 0; k < seglen; k++, b += C0) {
      __m256 b0 = _mm256_loadu_ps(b), b1 = H > 1 ? _mm256_loadu_ps(b + 8) : b0, av;
#define MK_FMA(r)                                                                                            \
  if (R > r) {                                                                                               \
    av = _mm256_broadcast_ss(a##r + k);                                                                      \
    c##r##0 = _mm256_fmadd_ps(av, b0, c##r##0);                                                              \
    if (H > 1) c##r##1 = _mm256_fmadd_ps(av, b1, c##r##1);                                                   \
  }
      MK_ROWS(MK_FMA)
    }
  }
  if (!e->y) {
#define MK_STORE(r)                                                                                          \
  if (R > r) {                                                                                               \
    _mm256_storeu_ps(c + r * C0, c##r##0);                                                                   \
    if (H > 1) _mm256_storeu_ps(c + r * C0 + 8, c##r##1);                                                    \
  }
    MK_ROWS(MK_STORE)
    return;
  }
#define MK_EPI(r)                                                                                            \
  if (R > r) {                                                                                               \
    size_t at = (yrow + r) * C0;                                                                             \
    __m256 v0 = c##r##0, v1 = c##r##1;                                                                       \
    if (e->res) {                                                                                            \
      v0 = _mm256_add_ps(v0, ld8h(e->res, e->rf16, at));                                                    \
      v1 = _mm256_add_ps(v1, ld8h(e->res, e->rf16, at + 8));                                                \
    }                                                                                                        \
    v0 = act8(v0, e), v1 = H > 1 ? act8(v1, e) : _mm256_setzero_ps();                                        \
    if (e->partial) v0 = _mm256_and_ps(v0, e->keep0), v1 = _mm256_and_ps(v1, e->keep1);                      \
    st8h(e->y, e->yf16, at, v0);                                                                            \
    st8h(e->y, e->yf16, at + 8, v1);                                                                        \
  }
  MK_ROWS(MK_EPI)
}

static AVX2 void mk6(const float *const *seg, size_t nseg, size_t seglen, const size_t *roff, const float *b,
                     float *c, int first, const epi *e, size_t yrow) {
  mk(6, 2, seg, nseg, seglen, roff, b, c, first, e, yrow);
}

static AVX2 void mk_tail(int rows, const float *const *seg, size_t nseg, size_t seglen, const size_t *roff,
                         const float *b, float *c, int first, const epi *e, size_t yrow) {
  switch (rows) {
  case 1: mk(1, 2, seg, nseg, seglen, roff, b, c, first, e, yrow); break;
  case 2: mk(2, 2, seg, nseg, seglen, roff, b, c, first, e, yrow); break;
  case 3: mk(3, 2, seg, nseg, seglen, roff, b, c, first, e, yrow); break;
  case 4: mk(4, 2, seg, nseg, seglen, roff, b, c, first, e, yrow); break;
  case 5: mk(5, 2, seg, nseg, seglen, roff, b, c, first, e, yrow); break;
  default: break;
  }
}

/* A half block (e->half): lanes 0..7 only. */
static AVX2 void mk_half(int rows, const float *const *seg, size_t nseg, size_t seglen, const size_t *roff,
                         const float *b, float *c, int first, const epi *e, size_t yrow) {
  switch (rows) {
  case 1: mk(1, 1, seg, nseg, seglen, roff, b, c, first, e, yrow); break;
  case 2: mk(2, 1, seg, nseg, seglen, roff, b, c, first, e, yrow); break;
  case 3: mk(3, 1, seg, nseg, seglen, roff, b, c, first, e, yrow); break;
  case 4: mk(4, 1, seg, nseg, seglen, roff, b, c, first, e, yrow); break;
  case 5: mk(5, 1, seg, nseg, seglen, roff, b, c, first, e, yrow); break;
  case 6: mk(6, 1, seg, nseg, seglen, roff, b, c, first, e, yrow); break;
  default: break;
  }
}

/* One group of rows <= MR pixels against the n blocks of a chunk. */
static AVX2 void mk_group(int rows, const float *const *seg, size_t nseg, size_t seglen, const size_t *roff,
                          const float *l0b, size_t klen, int64_t nbn, float *c, size_t cstride, int first,
                          const epi *e, size_t yrow) {
  for (int64_t nb = 0; nb < nbn; nb++) {
    const float *b = l0b + (size_t)nb * klen * C0;
    if (e[nb].half)
      mk_half(rows, seg, nseg, seglen, roff, b, c + (size_t)nb * cstride, first, &e[nb], yrow);
    else if (rows == MR)
      mk6(seg, nseg, seglen, roff, b, c + (size_t)nb * cstride, first, &e[nb], yrow);
    else
      mk_tail(rows, seg, nseg, seglen, roff, b, c + (size_t)nb * cstride, first, &e[nb], yrow);
  }
}

/* The Winograd tiles' GEMMs (kernels_wino_x86.c): c[m][16] (+)= a[m][0..klen)
 * x b[klen][16], MR rows at a time through the same micro-kernel, from zero
 * when first, stored to c (a zero bias, no write-back). */
AVX2 void rt_gemm16_acc_x86(const float *a, size_t lda, int64_t mrows, size_t klen, const float *b, float *c,
                            int first) {
  epi e;
  memset(&e, 0, sizeof e);
  e.bias0 = e.bias1 = _mm256_setzero_ps();
  const size_t roff[MR] = {0, lda, 2 * lda, 3 * lda, 4 * lda, 5 * lda};
  for (int64_t m = 0; m < mrows; m += MR) {
    const int rows = mrows - m < MR ? (int)(mrows - m) : MR;
    const float *seg = a + (size_t)m * lda;
    mk_group(rows, &seg, 1, klen, roff, b, klen, 1, c + m * C0, 0, first, &e, 0);
  }
}

AVX2 void rt_fractal_t_x86(const void *frac, int f16, float *dst) { transpose_fractal(frac, f16, C0, dst); }

/* --- the tile */

/* The bias of n block cb and, for the last chunk (last), the write-back. */
static AVX2 void epi_init(const rt_conv_geom *g, int64_t img, int64_t m0, int64_t cb, int last, epi *e) {
  float bias[C0];
  uint32_t keep[C0];
  for (int j = 0; j < C0; j++) {
    int64_t co = cb * C0 + j;
    keep[j] = co < g->cout ? 0xffffffffu : 0u;
    bias[j] = g->bd && co < g->cout ? g->bd[co] : 0.0f;
  }
  e->bias0 = _mm256_loadu_ps(bias), e->bias1 = _mm256_loadu_ps(bias + 8);
  e->keep0 = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)keep));
  e->keep1 = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)(keep + 8)));
  e->lo = _mm256_set1_ps(g->p.clip_min), e->hi = _mm256_set1_ps(g->p.clip_max);
  e->act = g->p.act;
  e->yf16 = g->y->dtype == DT_FLOAT16;
  e->rf16 = g->res && g->res->dtype == DT_FLOAT16;
  size_t at = (size_t)(((img * g->c1out + cb) * g->ho * g->wo + m0) * C0);
  e->partial = (cb + 1) * C0 > g->cout;
  e->half = cb * C0 + 8 >= g->cout;
  e->y = last ? (uint8_t *)g->yd + at * (e->yf16 ? 2 : 4) : NULL;
  e->res = g->rd ? (const uint8_t *)g->rd + at * (e->rf16 ? 2 : 4) : NULL;
}

/* Lane i of the result = the sum of the 8 lanes of r_i. */
AVX2_INLINE __m256 hsum8(__m256 r0, __m256 r1, __m256 r2, __m256 r3, __m256 r4, __m256 r5, __m256 r6,
                         __m256 r7) {
  __m256 s01 = _mm256_hadd_ps(r0, r1), s23 = _mm256_hadd_ps(r2, r3);
  __m256 s45 = _mm256_hadd_ps(r4, r5), s67 = _mm256_hadd_ps(r6, r7);
  __m256 s0123 = _mm256_hadd_ps(s01, s23), s4567 = _mm256_hadd_ps(s45, s67);
  return _mm256_add_ps(_mm256_permute2f128_ps(s0123, s4567, 0x20),
                       _mm256_permute2f128_ps(s0123, s4567, 0x31));
}

/* A tile of one output pixel (a fully connected layer is a 1x1 conv on a
 * 1x1 image): a matrix-vector product, bound by reading the weights, so the
 * FRACTAL_Z fractals are used as stored ([co][ci] rows against the pixel's
 * 16 input lanes, horizontal sums at the end) instead of being transposed
 * into L0B. The input pixel's taps are staged in L0A as 16 f32 lanes per
 * fractal (padding lanes are zero in NC1HWC0). */
static AVX2 void conv_tile_gemv(const rt_conv_geom *g, int64_t img, int64_t m0, int64_t nb0, int64_t nblocks,
                                rt_core *core) {
  const int xf16 = g->x->dtype == DT_FLOAT16, wf16 = g->w->dtype == DT_FLOAT16;
  const int64_t taps = (int64_t)g->p.kh * g->p.kw, hw = g->h * g->w_;
  const int64_t oh = m0 / g->wo, ow = m0 % g->wo;
  float *a = (float *)core->l0a;
  const int64_t kmax = (int64_t)(core->l0a_bytes / (C0 * sizeof(float)));
  for (int64_t nb = 0; nb < nblocks; nb++) {
    const int64_t cb = nb0 + nb;
    __m256 sum[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int64_t kc = 0; kc < g->k; kc += kmax) {
      const int64_t kn = g->k - kc < kmax ? g->k - kc : kmax;
      if (nb == 0 || kc > 0 || kn < g->k) /* the pixel's taps, once when they fit */
        for (int64_t kk = 0; kk < kn; kk++) {
          int64_t kf = kc + kk, c1 = kf / taps, tap = kf % taps;
          int64_t ih = oh * g->p.sh + (tap / g->p.kw) * g->p.dh - g->p.pt;
          int64_t iw = ow * g->p.sw + (tap % g->p.kw) * g->p.dw - g->p.pl;
          __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
          if ((uint64_t)ih < (uint64_t)g->h && (uint64_t)iw < (uint64_t)g->w_) {
            size_t at = ((size_t)((img * g->c1 + c1) * hw) + (size_t)(ih * g->w_ + iw)) * C0;
            lo = ld8h(g->xd, xf16, at), hi = ld8h(g->xd, xf16, at + 8);
          }
          _mm256_storeu_ps(a + kk * C0, lo);
          _mm256_storeu_ps(a + kk * C0 + 8, hi);
        }
      for (int half = 0; half < 2; half++) {
        __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
        for (int64_t kk = 0; kk < kn; kk++) {
          const __m256 a0 = _mm256_loadu_ps(a + kk * C0), a1 = _mm256_loadu_ps(a + kk * C0 + 8);
          const size_t frac = ((size_t)((kc + kk) * g->c1out + cb) * C0 + (size_t)half * 8) * C0;
#define GEMV_ROW(i)                                                                                          \
  c##i = _mm256_fmadd_ps(ld8h(g->wd, wf16, frac + i * C0), a0, c##i);                                       \
  c##i = _mm256_fmadd_ps(ld8h(g->wd, wf16, frac + i * C0 + 8), a1, c##i);
          GEMV_ROW(0) GEMV_ROW(1) GEMV_ROW(2) GEMV_ROW(3) GEMV_ROW(4) GEMV_ROW(5) GEMV_ROW(6) GEMV_ROW(7)
#undef GEMV_ROW
        }
        sum[half] = _mm256_add_ps(sum[half], hsum8(c0, c1, c2, c3, c4, c5, c6, c7));
      }
    }
    epi e;
    epi_init(g, img, m0, cb, 1, &e);
    __m256 v0 = _mm256_add_ps(sum[0], e.bias0), v1 = _mm256_add_ps(sum[1], e.bias1);
    if (e.res)
      v0 = _mm256_add_ps(v0, ld8h(e.res, e.rf16, 0)), v1 = _mm256_add_ps(v1, ld8h(e.res, e.rf16, 8));
    st8h(e.y, e.yf16, 0, _mm256_and_ps(act8(v0, &e), e.keep0));
    st8h(e.y, e.yf16, 8, _mm256_and_ps(act8(v1, &e), e.keep1));
  }
}

/* One staged chunk: L0A rows (pixels m0 .., klen each) against L0B's n
 * blocks. Pixel groups outer, n blocks inner: a group's rows of A (MR x
 * klen) stay in L1 while the chunk's B (klen x 16 per n block) streams past. */
static AVX2 void conv_chunk(const rt_conv_geom *g, int64_t img, int64_t m0, int64_t mrows, int64_t nb0,
                            int64_t nblocks, int64_t klen, int first, int last, const float *l0a,
                            const float *l0b, float *l0c) {
  epi e[MAX_NB];
  for (int64_t nb0c = 0; nb0c < nblocks; nb0c += MAX_NB) {
    const int64_t nbn = nblocks - nb0c < MAX_NB ? nblocks - nb0c : MAX_NB;
    for (int64_t nb = 0; nb < nbn; nb++)
      epi_init(g, img, m0, nb0 + nb0c + nb, last, &e[nb]);
    for (int64_t m = 0; m < mrows; m += MR) {
      const int rows = mrows - m < MR ? (int)(mrows - m) : MR;
      const float *seg = l0a + m * klen;
      const size_t roff[MR] = {
          0, (size_t)klen, 2 * (size_t)klen, 3 * (size_t)klen, 4 * (size_t)klen, 5 * (size_t)klen};
      mk_group(rows, &seg, 1, (size_t)klen, roff, l0b + nb0c * klen * C0, (size_t)klen, nbn,
               l0c + nb0c * g->tm * C0 + m * C0, (size_t)(g->tm * C0), first, e, (size_t)m);
    }
  }
}

/* The tile's pixels against L0B's n blocks (whole K), A read straight from
 * the packed rows (pack_rows): a pixel's K is kh runs of kw * cin floats,
 * one per kernel row, so the micro-kernel takes one segment per kernel row
 * and each pixel of a group at its own offset (a group may continue on the
 * next output row). No img2col copy. */
static AVX2 void conv_packed(const rt_conv_geom *g, const packed *pk, int64_t img, int64_t m0, int64_t mrows,
                             int64_t nb0, int64_t nblocks, const float *l0b, float *l0c) {
  const int64_t cin = g->cin, kh = g->p.kh, sh = g->p.sh, sw = g->p.sw, dh = g->p.dh, wo = g->wo;
  const size_t run = (size_t)(g->p.kw * cin), klen = (size_t)kh * run;
  const float *seg[64];
  epi e[MAX_NB];
  for (int64_t nb0c = 0; nb0c < nblocks; nb0c += MAX_NB) {
    const int64_t nbn = nblocks - nb0c < MAX_NB ? nblocks - nb0c : MAX_NB;
    for (int64_t nb = 0; nb < nbn; nb++)
      epi_init(g, img, m0, nb0 + nb0c + nb, 1, &e[nb]);
    int64_t oh = m0 / wo, ow = m0 % wo; /* of pixel m */
    for (int64_t m = 0; m < mrows; m += MR) {
      const int rows = mrows - m < MR ? (int)(mrows - m) : MR;
      const float *p0 = pk->rows + ((oh - pk->oh0) * sh) * pk->rowf + ow * sw * cin;
      size_t roff[MR] = {0};
      for (int r = 0; r < rows; r++) {
        roff[r] = (size_t)(pk->rows + ((oh - pk->oh0) * sh) * pk->rowf + ow * sw * cin - p0);
        if (++ow == wo) ow = 0, oh++;
      }
      for (int64_t i = 0; i < kh; i++)
        seg[i] = p0 + i * dh * pk->rowf;
      mk_group(rows, seg, (size_t)kh, run, roff, l0b + nb0c * klen * C0, klen, nbn,
               l0c + nb0c * g->tm * C0 + m * C0, (size_t)(g->tm * C0), 1, e, (size_t)m);
    }
  }
}

/* The direct path, for inputs whose channels fill their blocks (Cin % 16
 * == 0) and kernels wider than 1x1: no img2col. The tile's input
 * rows are converted once into L1 as f32 [c1][row][column][16], padding
 * rows and columns zeroed; then every fractal of a pixel's K is 16
 * consecutive floats there, and the micro-kernel reads its rows straight
 * from it (one segment per fractal, each pixel at its own offset), MR
 * pixels at a time. Returns 0 (nothing done) when the
 * tile's rows do not fit L1. */
static AVX2 int conv_tile_direct(const rt_conv_geom *g, int64_t img, int64_t m0, int64_t mrows, int64_t nb0,
                                 int64_t nblocks, rt_core *core) {
  const int64_t wo = g->wo, sh = g->p.sh, sw = g->p.sw, kw = g->p.kw, taps = (int64_t)g->p.kh * kw;
  const int64_t oh0 = m0 / wo, oh1 = (m0 + mrows - 1) / wo, ih0 = oh0 * sh - g->p.pt;
  const int64_t nrows = (oh1 - oh0) * sh + (int64_t)(g->p.kh - 1) * g->p.dh + 1;
  const int64_t pw = (wo - 1) * sw + (kw - 1) * g->p.dw + 1;
  if ((uint64_t)(g->c1 * nrows * pw) * C0 * sizeof(float) > core->l1_bytes) return 0;
  float *xs = (float *)core->l1, *l0b = (float *)core->l0b, *l0c = (float *)core->l0c;
  const int f16 = g->x->dtype == DT_FLOAT16;
  for (int64_t c1 = 0; c1 < g->c1; c1++) {
    const size_t plane = (size_t)((img * g->c1 + c1) * g->h * g->w_);
    for (int64_t r = 0; r < nrows; r++) {
      float *dst = xs + ((c1 * nrows + r) * pw) * C0;
      const int64_t ih = ih0 + r;
      for (int64_t col = 0; col < pw; col++, dst += C0) {
        const int64_t iw = col - g->p.pl;
        __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
        if (ih >= 0 && ih < g->h && iw >= 0 && iw < g->w_) {
          size_t at = (plane + (size_t)(ih * g->w_ + iw)) * C0;
          lo = ld8h(g->xd, f16, at), hi = ld8h(g->xd, f16, at + 8);
        }
        _mm256_storeu_ps(dst, lo);
        _mm256_storeu_ps(dst + 8, hi);
      }
    }
  }
  /* K chunks: as many fractals as L0B holds for the tile's n blocks. */
  int64_t cap = (int64_t)(core->l0b_bytes / (sizeof(float) * C0 * C0 * (size_t)nblocks));
  if (cap < g->tk) cap = g->tk;
  if (cap > MAX_CHUNK) cap = MAX_CHUNK;
  size_t off[MAX_CHUNK];
  const float *seg[MAX_CHUNK];
  for (int64_t kc = 0, kn; kc < g->k; kc += kn) {
    kn = g->k - kc < cap ? g->k - kc : cap;
    const int first = kc == 0, last = kc + kn >= g->k;
    const int64_t klen = kn * C0;
    stage_b(g, nb0, nblocks, kc, kn, klen, l0b);
    for (int64_t kk = 0; kk < kn; kk++) {
      int64_t kf = kc + kk, c1 = kf / taps, tap = kf % taps;
      off[kk] = (size_t)(((c1 * nrows + (tap / kw) * g->p.dh) * pw + (tap % kw) * g->p.dw) * C0);
    }
    epi e[MAX_NB];
    for (int64_t nbc = 0; nbc < nblocks; nbc += MAX_NB) {
      const int64_t nbn = nblocks - nbc < MAX_NB ? nblocks - nbc : MAX_NB;
      for (int64_t nb = 0; nb < nbn; nb++)
        epi_init(g, img, m0, nb0 + nbc + nb, last, &e[nb]);
      int64_t oh = oh0, ow = m0 % wo; /* of pixel m */
      for (int64_t m = 0; m < mrows; m += MR) {
        const int rows = mrows - m < MR ? (int)(mrows - m) : MR;
        size_t roff[MR] = {0};
        const size_t at0 = (size_t)(((oh - oh0) * sh * pw + ow * sw) * C0);
        for (int r = 0; r < rows; r++) { /* a group may continue on the next output row */
          roff[r] = (size_t)(((oh - oh0) * sh * pw + ow * sw) * C0) - at0;
          if (++ow == wo) ow = 0, oh++;
        }
        for (int64_t kk = 0; kk < kn; kk++)
          seg[kk] = xs + at0 + off[kk];
        mk_group(rows, seg, (size_t)kn, C0, roff, l0b + nbc * klen * C0, (size_t)klen, nbn,
                 l0c + nbc * g->tm * C0 + m * C0, (size_t)(g->tm * C0), first, e, (size_t)m);
      }
    }
  }
  return 1;
}

AVX2 void rt_conv_tile_x86(const rt_conv_geom *g, int64_t img, int64_t mt, int64_t nt, rt_core *core) {
  float *l0a = (float *)core->l0a, *l0b = (float *)core->l0b, *l0c = (float *)core->l0c;
  int64_t m0 = mt * g->tm, mrows = g->ho * g->wo - m0;
  if (mrows > g->tm) mrows = g->tm;
  int64_t nb0 = nt * g->tn, nblocks = g->c1out - nb0;
  if (nblocks > g->tn) nblocks = g->tn;
  if (mrows == 1) {
    conv_tile_gemv(g, img, m0, nb0, nblocks, core);
    return;
  }
  /* 1x1 kernels stage no more than their pixels in L0A: only wider ones go direct. */
  if (g->cin % C0 == 0 && g->p.kh * g->p.kw > 1 && conv_tile_direct(g, img, m0, mrows, nb0, nblocks, core))
    return;
  /* When the tile's weights for the whole K fit L0B, stage them once and
   * walk the tile's pixels in groups whose img2col rows for the whole K fit
   * L0A: every group is finished in registers (no partial sums in L0C). */
  const int64_t klen_all = g->cin * g->p.kh * g->p.kw,
                l0a_floats = (int64_t)(core->l0a_bytes / sizeof(float));
  if (g->k <= MAX_CHUNK && (uint64_t)(klen_all * nblocks) * C0 * sizeof(float) <= core->l0b_bytes &&
      MR * klen_all + SLACK <= l0a_floats) {
    int64_t mstep = (l0a_floats - SLACK) / klen_all / MR * MR;
    if (mstep > 16 * MR) mstep = 16 * MR; /* A's group stays in L2 with room to spare */
    stage_b(g, nb0, nblocks, 0, g->k, klen_all, l0b);
    packed pk;
    if (g->p.kh <= 64 && pack_rows(g, img, m0, mrows, core, &pk)) {
      conv_packed(g, &pk, img, m0, mrows, nb0, nblocks, l0b, l0c);
      return;
    }
    for (int64_t ms = 0; ms < mrows; ms += mstep) {
      const int64_t rows_all = mrows - ms < mstep ? mrows - ms : mstep;
      stage_a(g, img, m0 + ms, rows_all, 0, g->k, klen_all, l0a);
      conv_chunk(g, img, m0 + ms, rows_all, nb0, nblocks, klen_all, 1, 1, l0a, l0b, l0c);
    }
    return;
  }
  /* K chunks: tile_k fractals, or more when the fractals have padding lanes
   * (a 3-channel stem packs 3 of 16), as many as the f32 staging buffers
   * hold: the tiling's L0 bound counts whole fractals. */
  int64_t cap = (int64_t)((core->l0a_bytes / sizeof(float) - SLACK) / (size_t)g->tm);
  int64_t cap_b = (int64_t)(core->l0b_bytes / (sizeof(float) * C0 * (size_t)g->tn));
  if (cap_b < cap) cap = cap_b;
  for (int64_t kc = 0, kn; kc < g->k; kc += kn) {
    int64_t klen = 0;
    for (kn = 0; kc + kn < g->k; kn++) {
      int lanes = rt_conv_k_lanes(g, kc + kn);
      if (kn == MAX_CHUNK || (kn >= g->tk && klen + lanes > cap)) break;
      klen += lanes;
    }
    const int first = kc == 0, last = kc + kn >= g->k;
    stage_a(g, img, m0, mrows, kc, kn, klen, l0a);
    stage_b(g, nb0, nblocks, kc, kn, klen, l0b);
    conv_chunk(g, img, m0, mrows, nb0, nblocks, klen, first, last, l0a, l0b, l0c);
  }
}

#endif
