/* kernels_wino_x86.c - the Winograd F(4x4,3x3) CONV2D tile on AVX2 + FMA +
 * F16C hosts.
 *
 * The same algorithm, buffers and order as the portable tile in
 * kernels_wino.c (read that first): input transform into L1, per output
 * channel block and K chunk the weight transform into UB and 36 GEMMs into
 * L0C, output transform fused with the epilogue. Here the 16 channel lanes
 * of a point are two YMM registers: the 6x6 input patch is loaded with
 * vcvtph2ps (or plain loads for f32), B^T d B, G' g G'^T and A^T D m D A
 * run as FMA/add sequences on those registers, the GEMMs go through
 * kernels_cube_x86.c's 6x16 micro-kernel (rt_gemm16_acc_x86), and the epilogue
 * stores with vcvtps2ph. Results differ from the portable path only by
 * rounding (FMA keeps one rounding where the portable code has two).
 *
 * Compiled for plain x86-64: every function carries target("avx2,fma,f16c")
 * and is only reached through rt_cpu() (cpu.c) when the CPU has all three.
 */
#include "runtime/kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)

#include "runtime/x86_simd.h"

enum { P = WINO_F43_POINTS };

/* o[i*os] = (B^T x)[i] for the 6 values x[k*is]. */
AVX2_INLINE void bt6(const __m256 *x, size_t is, __m256 *o, size_t os) {
  const __m256 d0 = x[0], d1 = x[is], d2 = x[2 * is], d3 = x[3 * is], d4 = x[4 * is], d5 = x[5 * is];
  const __m256 two = _mm256_set1_ps(2.0f), four = _mm256_set1_ps(4.0f), five = _mm256_set1_ps(5.0f);
  const __m256 a = _mm256_fnmadd_ps(four, d2, d4), b = _mm256_fnmadd_ps(four, d1, d3);
  const __m256 c = _mm256_sub_ps(d4, d2), e = _mm256_mul_ps(two, _mm256_sub_ps(d3, d1));
  o[0] = _mm256_add_ps(_mm256_fnmadd_ps(five, d2, _mm256_mul_ps(four, d0)), d4);
  o[os] = _mm256_add_ps(a, b);
  o[2 * os] = _mm256_sub_ps(a, b);
  o[3 * os] = _mm256_add_ps(c, e);
  o[4 * os] = _mm256_sub_ps(c, e);
  o[5 * os] = _mm256_add_ps(_mm256_fnmadd_ps(five, d3, _mm256_mul_ps(four, d1)), d5);
}

/* o[i*os] = (A^T D x)[i], i < 4, for the 6 values x[k*is]: D the diagonal
 * WINO_D that the integer weight transform leaves out (kernels_wino.c). */
AVX2_INLINE void at6(const __m256 *x, size_t is, __m256 *o, size_t os) {
  const __m256 m1 = x[is], m2 = x[2 * is], m3 = x[3 * is], m4 = x[4 * is];
  const __m256 d1 = _mm256_set1_ps(WINO_D1), d3 = _mm256_set1_ps(WINO_D3);
  const __m256 x0 = _mm256_mul_ps(x[0], _mm256_set1_ps(WINO_D0));
  const __m256 s12 = _mm256_mul_ps(_mm256_add_ps(m1, m2), d1), d12 = _mm256_mul_ps(_mm256_sub_ps(m1, m2), d1);
  const __m256 s34 = _mm256_mul_ps(_mm256_add_ps(m3, m4), d3), d34 = _mm256_mul_ps(_mm256_sub_ps(m3, m4), d3);
  o[0] = _mm256_add_ps(_mm256_add_ps(x0, s12), s34);
  o[os] = _mm256_fmadd_ps(_mm256_set1_ps(2.0f), d34, d12);
  o[2 * os] = _mm256_fmadd_ps(_mm256_set1_ps(4.0f), s34, s12);
  o[3 * os] = _mm256_add_ps(_mm256_fmadd_ps(_mm256_set1_ps(8.0f), d34, d12), x[5 * is]);
}

/* V[p][m][c1*16 ..] (at v, positions pstride floats apart) for the tile at
 * output tile row th, column tw: all input channel blocks. Point (i, j) of
 * the patch is d[(i*6 + j)*2 + half]. */
static AVX2 void input_transform(const rt_conv_geom *g, int64_t img, int64_t th, int64_t tw, float *v,
                                 size_t pstride) {
  const int f16 = g->x->dtype == DT_FLOAT16;
  const int64_t ih0 = th * 4 - g->p.pt, iw0 = tw * 4 - g->p.pl;
  __m256 d[P * 2], t[P * 2], r[6 * 2];
  for (int64_t c1 = 0; c1 < g->c1; c1++) {
    const size_t plane = (size_t)((img * g->c1 + c1) * g->h * g->w_);
    for (int i = 0; i < 6; i++) {
      const int64_t ih = ih0 + i;
      for (int j = 0; j < 6; j++) {
        const int64_t iw = iw0 + j;
        __m256 lo = _mm256_setzero_ps(), hi = lo;
        if ((uint64_t)ih < (uint64_t)g->h && (uint64_t)iw < (uint64_t)g->w_) {
          const size_t at = (plane + (size_t)(ih * g->w_ + iw)) * C0;
          lo = ld8h(g->xd, f16, at), hi = ld8h(g->xd, f16, at + 8);
        }
        d[(i * 6 + j) * 2] = lo, d[(i * 6 + j) * 2 + 1] = hi;
      }
    }
    for (int j = 0; j < 12; j++) /* columns (both halves): t[i][j] = sum_k B^T[i][k] d[k][j] */
      bt6(d + j, 12, t + j, 12);
    for (int i = 0; i < 6; i++) { /* rows: V[i][j] = sum_k t[i][k] B^T[j][k] */
      bt6(t + i * 12, 2, r, 2);
      bt6(t + i * 12 + 1, 2, r + 1, 2);
      for (int j = 0; j < 6; j++) {
        float *dst = v + (size_t)(i * 6 + j) * pstride + (size_t)c1 * C0;
        _mm256_storeu_ps(dst, r[j * 2]);
        _mm256_storeu_ps(dst + 8, r[j * 2 + 1]);
      }
    }
  }
}

/* The write-back constants of one output channel block. */
typedef struct wepi {
  __m256 bias[2], keep[2], lo, hi;
  int act, yf16, rf16, partial;
} wepi;

/* y = act(A^T D M D A + bias + residual) for the pixels of tile (th, tw)
 * inside Ho x Wo, channel block cb; m[p*mstride ..] are the tile's 36
 * products (of U', without D). */
static AVX2 void output_transform(const rt_conv_geom *g, int64_t img, int64_t th, int64_t tw, int64_t cb,
                                  const float *m, size_t mstride, const wepi *e) {
  __m256 x[P * 2], t[4 * 6 * 2], o[16 * 2];
  for (int p = 0; p < P; p++)
    x[p * 2] = _mm256_loadu_ps(m + (size_t)p * mstride), x[p * 2 + 1] = _mm256_loadu_ps(m + (size_t)p * mstride + 8);
  for (int j = 0; j < 12; j++) /* columns: t[i][j] = sum_k A^T[i][k] M[k][j] */
    at6(x + j, 12, t + j, 12);
  for (int i = 0; i < 4; i++) { /* rows: o[i][j] = sum_k t[i][k] A^T[j][k] */
    at6(t + i * 12, 2, o + i * 8, 2);
    at6(t + i * 12 + 1, 2, o + i * 8 + 1, 2);
  }
  for (int i = 0; i < 4 && th * 4 + i < g->ho; i++) {
    const int64_t oh = th * 4 + i;
    for (int j = 0; j < 4 && tw * 4 + j < g->wo; j++) {
      const size_t at = (size_t)((((img * g->c1out + cb) * g->ho + oh) * g->wo + tw * 4 + j) * C0);
      for (int h = 0; h < 2; h++) {
        __m256 val = _mm256_add_ps(o[(i * 4 + j) * 2 + h], e->bias[h]);
        if (g->rd) val = _mm256_add_ps(val, ld8h(g->rd, e->rf16, at + (size_t)h * 8));
        if (e->act == OM_ACT_RELU) val = _mm256_max_ps(val, _mm256_setzero_ps());
        if (e->act == OM_ACT_CLIP) val = _mm256_min_ps(_mm256_max_ps(val, e->lo), e->hi);
        if (e->partial) val = _mm256_and_ps(val, e->keep[h]);
        if (e->yf16)
          _mm_storeu_si128((__m128i *)((uint16_t *)g->yd + at + h * 8), _mm256_cvtps_ph(val, _MM_FROUND_TO_NEAREST_INT));
        else
          _mm256_storeu_ps((float *)g->yd + at + h * 8, val);
      }
    }
  }
}

static AVX2 void wepi_init(const rt_conv_geom *g, int64_t cb, wepi *e) {
  float bias[C0];
  uint32_t keep[C0];
  for (int l = 0; l < C0; l++) {
    const int64_t co = cb * C0 + l;
    keep[l] = co < g->cout ? 0xffffffffu : 0u;
    bias[l] = g->bd && co < g->cout ? g->bd[co] : 0.0f;
  }
  for (int h = 0; h < 2; h++) {
    e->bias[h] = _mm256_loadu_ps(bias + h * 8);
    e->keep[h] = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)(keep + h * 8)));
  }
  e->lo = _mm256_set1_ps(g->p.clip_min), e->hi = _mm256_set1_ps(g->p.clip_max);
  e->act = g->p.act;
  e->yf16 = g->y->dtype == DT_FLOAT16;
  e->rf16 = g->res && g->res->dtype == DT_FLOAT16;
  e->partial = (cb + 1) * C0 > g->cout;
}

/* o[0..5] = G' (a, b, c)^T, G' the integer rows of G (kernels_wino.c):
 * (1,0,0) (1,1,1) (1,-1,1) (1,2,4) (1,-2,4) (0,0,1); three adds, three FMAs. */
AVX2_INLINE void g3i(__m256 a, __m256 b, __m256 c, __m256 *o) {
  const __m256 two = _mm256_set1_ps(2.0f), s = _mm256_add_ps(a, c), e = _mm256_fmadd_ps(_mm256_set1_ps(4.0f), c, a);
  o[0] = a;
  o[1] = _mm256_add_ps(s, b);
  o[2] = _mm256_sub_ps(s, b);
  o[3] = _mm256_fmadd_ps(two, b, e);
  o[4] = _mm256_fnmadd_ps(two, b, e);
  o[5] = c;
}

/* U'[i][kk][j][co] (kernels_wino.c) for output channel block cb and input
 * channel blocks cc0 .. cc0+tkn-1: per input channel and half, the 9 taps
 * are loaded once and the 36 positions computed in registers, one row i of
 * 6 positions (contiguous in U') at a time. */
static AVX2 void weight_transform(const rt_conv_geom *g, int64_t cb, int64_t cc0, int64_t tkn, float *u) {
  const int f16 = g->w->dtype == DT_FLOAT16;
  const size_t tap = (size_t)g->c1out * C0 * C0;   /* elements from one tap's fractal to the next */
  const size_t irow = (size_t)tkn * C0 * 6 * C0; /* floats from one row i of U' to the next */
  for (int64_t cc = 0; cc < tkn; cc++) {
    const size_t f0 = (size_t)((cc0 + cc) * 9 * g->c1out + cb) * C0 * C0; /* tap 0's fractal, [ci][co] */
    for (int ci = 0; ci < C0; ci++)
      for (int h = 0; h < 2; h++) {
        const size_t at = f0 + (size_t)(ci * C0 + h * 8);
        float *dst = u + (size_t)(cc * C0 + ci) * 6 * C0 + h * 8;
        __m256 t[6][3]; /* the column pass: t[i][kw] = sum_kh G'[i][kh] g[kh][kw] */
#pragma GCC unroll 3
        for (int j = 0; j < 3; j++) {
          __m256 o[6];
          g3i(ld8h(g->wd, f16, at + j * tap), ld8h(g->wd, f16, at + (3 + j) * tap),
              ld8h(g->wd, f16, at + (6 + j) * tap), o);
          for (int i = 0; i < 6; i++) t[i][j] = o[i];
        }
#pragma GCC unroll 6
        for (int i = 0; i < 6; i++) { /* rows: U'[i][j] = sum_kw t[i][kw] G'[j][kw] */
          __m256 r[6];
          g3i(t[i][0], t[i][1], t[i][2], r);
          for (int j = 0; j < 6; j++) _mm256_storeu_ps(dst + (size_t)i * irow + (size_t)j * C0, r[j]);
        }
      }
  }
}

/* Pairs of output channel blocks (AVX-512 hosts, where the micro-kernel
 * runs two blocks in one pass): each K chunk transforms both blocks' U'
 * (half as many input channel blocks as UB holds for one, tk2), and L0C
 * holds both blocks' sums for `rows2` of the tile's Winograd tiles, so a
 * tile with more rows runs in slabs of rows2 (each transforming the weights
 * again). One block at a time otherwise, as the portable tile does. */
AVX2 void rt_wino_fz_tile_x86(const rt_conv_geom *g, int64_t img, int64_t mt, int64_t nt, rt_core *core) {
  const int64_t t0 = mt * g->tm, wt = g->wth * g->wtw;
  const int64_t mrows = wt - t0 < g->tm ? wt - t0 : g->tm;
  const int64_t nb0 = nt * g->tn, nblocks = g->c1out - nb0 < g->tn ? g->c1out - nb0 : g->tn;
  const size_t k = (size_t)g->c1 * C0, pstride = (size_t)mrows * k;
  float *v = (float *)core->l1, *l0c = (float *)core->l0c, *u = (float *)core->ub;
  for (int64_t m = 0; m < mrows; m++)
    input_transform(g, img, (t0 + m) / g->wtw, (t0 + m) % g->wtw, v + (size_t)m * k, pstride);
  const uint64_t ufrac = (uint64_t)P * C0 * C0 * sizeof(float); /* U' bytes per input x output block */
  const int64_t tk2 = core->ub_bytes / (2 * ufrac) < (uint64_t)g->c1 ? (int64_t)(core->ub_bytes / (2 * ufrac)) : g->c1;
  const int64_t rows2 = (int64_t)(core->l0c_bytes / (2 * P * C0 * sizeof(float)));
  const int pairs = rt_cpu()->avx512 && tk2 >= 1 && rows2 >= 1;
  for (int64_t nb = 0, nbs; nb < nblocks; nb += nbs) {
    nbs = pairs && nblocks - nb >= 2 ? 2 : 1;
    const int64_t cb = nb0 + nb, tk = nbs == 2 ? tk2 : g->tk, slab = nbs == 2 && rows2 < mrows ? rows2 : mrows;
    for (int64_t m0 = 0; m0 < mrows; m0 += slab) {
      const int64_t rows = mrows - m0 < slab ? mrows - m0 : slab;
      const size_t cstride = (size_t)P * (size_t)rows * C0; /* floats from one block's sums to the next */
      for (int64_t cc0 = 0; cc0 < g->c1; cc0 += tk) {
        const int64_t tkn = g->c1 - cc0 < tk ? g->c1 - cc0 : tk;
        const size_t klen = (size_t)tkn * C0, ustride = (size_t)P * klen * C0;
        for (int64_t j = 0; j < nbs; j++)
          weight_transform(g, cb + j, cc0, tkn, u + (size_t)j * ustride);
        for (int p = 0; p < P; p++)
          rt_gemm16_acc_x86(v + (size_t)p * pstride + (size_t)m0 * k + (size_t)cc0 * C0, k, rows, klen,
                            u + ((size_t)(p / 6) * klen * 6 + (size_t)(p % 6)) * C0, 6 * C0, (int)nbs, ustride,
                            l0c + (size_t)p * (size_t)rows * C0, cstride, cc0 == 0);
      }
      for (int64_t j = 0; j < nbs; j++) {
        wepi e;
        wepi_init(g, cb + j, &e);
        for (int64_t m = m0; m < m0 + rows; m++)
          output_transform(g, img, (t0 + m) / g->wtw, (t0 + m) % g->wtw, cb + j,
                           l0c + (size_t)j * cstride + (size_t)(m - m0) * C0, (size_t)rows * C0, &e);
      }
    }
  }
}

#endif
