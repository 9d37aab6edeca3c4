/* kernels_matmul_x86.c - the MATMUL tile on AVX2 + FMA + F16C hosts.
 *
 * Same tiles, buffers and staging layouts as the portable tile in
 * kernels_matmul.c (kernels_matmul.h describes them); every step uses the
 * host:
 *   stage A  rows of op(A) into L0A as f32, fp16 converted 8 lanes at a time
 *            with vcvtph2ps when A's rows are contiguous (trans_a = 0); a
 *            transposed A is read along its contiguous M axis and scattered;
 *   stage B  op(B)'s rows into L0B as [n block][k][16]: whole 16-column
 *            blocks of a row-major B are two 8-lane conversions, the last
 *            partial block and transposed B element by element;
 *   mmad     kernels_cube_x86.c's micro-kernel (rt_gemm16_acc_x86): 6 rows
 *            x one n block on YMM registers, or x two n blocks on ZMM ones
 *            on AVX-512 hosts. n blocks outer (in pairs), row groups inner,
 *            so the B panels (klen x 16 each) stay in L1 while the tile's A
 *            rows stream past. The first K chunk starts from zero, later
 *            ones add to L0C.
 *   epilogue alpha, + beta * c (16 lanes at a time when c runs along N or is
 *            constant along it), relu / clip, f16 stores with vcvtps2ph
 *            (round to nearest even) or f32 stores.
 * fp16 x fp16 products are exact in f32, so results differ from the portable
 * path only by summation order (FMA keeps one rounding per step).
 *
 * Compiled for plain x86-64: every function carries target("avx2,fma,f16c")
 * and is only reached through rt_cpu() (cpu.c) when the CPU has all three.
 */
#include "runtime/kernels_matmul.h"

#if defined(__x86_64__) && defined(__GNUC__)

#include "runtime/x86_simd.h"

/* dst[0..n) = src[i0 .. i0+n) as f32. */
static AVX2 void load_run(float *dst, const void *src, int f16, size_t i0, int64_t n) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    _mm256_storeu_ps(dst + j, ld8h(src, f16, i0 + (size_t)j));
  for (; j < n; j++)
    dst[j] = f16 ? rt_h2f(((const uint16_t *)src)[i0 + (size_t)j]) : ((const float *)src)[i0 + (size_t)j];
}

/* L0A[m][k] = op(A)[m0 + m][kc + k] for m < rows, k < klen. */
static AVX2 void stage_a(const rt_mm_geom *g, int64_t oa, int64_t m0, int64_t rows, int64_t kc, int64_t klen,
                         float *l0a) {
  const int f16 = g->a->dtype == DT_FLOAT16;
  if (g->a_sk == 1) {
    for (int64_t m = 0; m < rows; m++)
      load_run(l0a + m * klen, g->ad, f16, (size_t)(oa + (m0 + m) * g->a_sm + kc), klen);
    return;
  }
  for (int64_t k = 0; k < klen; k++) { /* trans_a: M is the contiguous axis */
    const size_t base = (size_t)(oa + m0 * g->a_sm + (kc + k) * g->a_sk);
    float *dst = l0a + k;
    if (f16) {
      const uint16_t *s = (const uint16_t *)g->ad + base;
      for (int64_t m = 0; m < rows; m++, dst += klen)
        *dst = rt_h2f(s[m]);
    } else {
      const float *s = (const float *)g->ad + base;
      for (int64_t m = 0; m < rows; m++, dst += klen)
        *dst = s[m];
    }
  }
}

/* L0B[nb][k][j] = op(B)[kc + k][n0 + nb*16 + j], zero past the tile's cols. */
static AVX2 void stage_b(const rt_mm_geom *g, int64_t ob, int64_t n0, int64_t cols, int64_t kc, int64_t klen,
                         float *l0b) {
  const int f16 = g->b->dtype == DT_FLOAT16;
  const int64_t nblocks = rt_ceil_div(cols, C0);
  if (g->b_sn == 1) { /* row-major B: each k row is contiguous along N */
    for (int64_t k = 0; k < klen; k++) {
      const size_t row = (size_t)(ob + (kc + k) * g->b_sk + n0);
      for (int64_t nb = 0; nb < nblocks; nb++) {
        float *dst = l0b + (nb * klen + k) * C0;
        const int64_t lanes = cols - nb * C0 < C0 ? cols - nb * C0 : C0;
        if (lanes == C0) {
          _mm256_storeu_ps(dst, ld8h(g->bd, f16, row + (size_t)(nb * C0)));
          _mm256_storeu_ps(dst + 8, ld8h(g->bd, f16, row + (size_t)(nb * C0) + 8));
        } else {
          for (int64_t j = 0; j < C0; j++)
            dst[j] = j < lanes ? rt_get(g->bd, (int)g->b->dtype, row + (size_t)(nb * C0 + j)) : 0.0f;
        }
      }
    }
    return;
  }
  /* trans_b (or a rank-1 B): each column n is contiguous along K */
  for (int64_t nb = 0; nb < nblocks; nb++)
    for (int64_t j = 0; j < C0; j++) {
      const int64_t n = nb * C0 + j;
      float *dst = l0b + nb * klen * C0 + j;
      if (n >= cols) {
        for (int64_t k = 0; k < klen; k++)
          dst[k * C0] = 0.0f;
        continue;
      }
      const size_t base = (size_t)(ob + (n0 + n) * g->b_sn + kc * g->b_sk);
      if (f16) {
        const uint16_t *s = (const uint16_t *)g->bd + base;
        for (int64_t k = 0; k < klen; k++)
          dst[k * C0] = rt_h2f(s[k]);
      } else {
        const float *s = (const float *)g->bd + base;
        for (int64_t k = 0; k < klen; k++)
          dst[k * C0] = s[k];
      }
    }
}

/* y rows of the tile = act(alpha * L0C + beta * c). */
static AVX2 void epilogue(const rt_mm_geom *g, int64_t bt, int64_t oc, int64_t m0, int64_t rows, int64_t n0,
                          int64_t cols, const float *l0c) {
  const int yf16 = g->y->dtype == DT_FLOAT16, cf16 = g->c && g->c->dtype == DT_FLOAT16, act = g->act;
  const __m256 alpha = _mm256_set1_ps(g->alpha), beta = _mm256_set1_ps(g->beta), zero = _mm256_setzero_ps();
  const __m256 lo = _mm256_set1_ps(g->clip_min), hi = _mm256_set1_ps(g->clip_max);
  const int64_t nblocks = rt_ceil_div(cols, C0);
  float tmp[C0];
  for (int64_t m = 0; m < rows; m++) {
    const size_t yrow = (size_t)((bt * g->m + m0 + m) * g->n + n0);
    const int64_t crow = oc + (m0 + m) * g->c_sm + n0 * g->c_sn;
    for (int64_t nb = 0; nb < nblocks; nb++) {
      const int64_t lanes = cols - nb * C0 < C0 ? cols - nb * C0 : C0;
      const float *acc = l0c + (nb * g->tm + m) * C0;
      __m256 v0 = _mm256_mul_ps(_mm256_loadu_ps(acc), alpha),
             v1 = _mm256_mul_ps(_mm256_loadu_ps(acc + 8), alpha);
      if (g->cd) {
        __m256 c0, c1;
        if (g->c_sn == 1 && lanes == C0) {
          c0 = ld8h(g->cd, cf16, (size_t)(crow + nb * C0)),
          c1 = ld8h(g->cd, cf16, (size_t)(crow + nb * C0 + 8));
        } else if (g->c_sn == 0) {
          c0 = c1 = _mm256_set1_ps(rt_get(g->cd, (int)g->c->dtype, (size_t)crow));
        } else {
          for (int64_t j = 0; j < C0; j++)
            tmp[j] =
                j < lanes ? rt_get(g->cd, (int)g->c->dtype, (size_t)(crow + (nb * C0 + j) * g->c_sn)) : 0.0f;
          c0 = _mm256_loadu_ps(tmp), c1 = _mm256_loadu_ps(tmp + 8);
        }
        v0 = _mm256_fmadd_ps(c0, beta, v0), v1 = _mm256_fmadd_ps(c1, beta, v1);
      }
      if (act == OM_ACT_RELU) {
        v0 = _mm256_max_ps(v0, zero), v1 = _mm256_max_ps(v1, zero);
      } else if (act == OM_ACT_CLIP) {
        v0 = _mm256_min_ps(_mm256_max_ps(v0, lo), hi), v1 = _mm256_min_ps(_mm256_max_ps(v1, lo), hi);
      }
      const size_t at = yrow + (size_t)(nb * C0);
      if (lanes == C0) {
        st8h(g->yd, yf16, at, v0);
        st8h(g->yd, yf16, at + 8, v1);
      } else {
        _mm256_storeu_ps(tmp, v0), _mm256_storeu_ps(tmp + 8, v1);
        for (int64_t j = 0; j < lanes; j++)
          rt_put(g->yd, (int)g->y->dtype, at + (size_t)j, tmp[j]);
      }
    }
  }
}

AVX2 void rt_matmul_tile_x86(const rt_mm_geom *g, int64_t bt, int64_t mt, int64_t nt, rt_core *core) {
  float *l0a = (float *)core->l0a, *l0b = (float *)core->l0b, *l0c = (float *)core->l0c;
  const int64_t m0 = mt * g->tm, rows = g->m - m0 < g->tm ? g->m - m0 : g->tm;
  const int64_t n0 = nt * g->tn, cols = g->n - n0 < g->tn ? g->n - n0 : g->tn;
  const int64_t nblocks = rt_ceil_div(cols, C0);
  int64_t oa, ob, oc;
  rt_mm_batch_offsets(g, bt, &oa, &ob, &oc);
  for (int64_t kc = 0; kc < g->k; kc += g->tk) {
    const int64_t klen = g->k - kc < g->tk ? g->k - kc : g->tk;
    stage_a(g, oa, m0, rows, kc, klen, l0a);
    stage_b(g, ob, n0, cols, kc, klen, l0b);
    for (int64_t nb = 0; nb < nblocks; nb += 2) /* a pair of n blocks (one ZMM pass on AVX-512 hosts) */
      rt_gemm16_acc_x86(l0a, (size_t)klen, rows, (size_t)klen, l0b + nb * klen * C0, C0,
                        nblocks - nb > 1 ? 2 : 1, (size_t)(klen * C0), l0c + nb * g->tm * C0,
                        (size_t)(g->tm * C0), kc == 0);
  }
  epilogue(g, bt, oc, m0, rows, n0, cols, l0c);
}

#endif
