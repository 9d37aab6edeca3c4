/* kernels_recurrence_x86.c - rt_gemv (kernels.h) on AVX2 + FMA + F16C and
 * AVX-512 hosts: y[0..n) += x[0..k) W, W's rows f16 or f32, ldw apart.
 *
 * The columns go in panels of 8 vectors (64 lanes in YMM, 128 in ZMM):
 * the panel's sums stay in 8 registers while the k weight rows stream past,
 * each row's lanes converted from f16 in registers (vcvtph2ps) and taken
 * by one FMA with x[i] broadcast; 8 independent accumulators hide the FMA
 * latency. A RECURRENCE step's R^T (H rows of G*H) is read exactly once
 * this way. Narrower tails run one vector at a time, the last lanes
 * scalar. Results equal the portable loop's up to f32 rounding: both sum
 * over i in order, but FMA rounds once per product.
 *
 * Compiled for plain x86-64: every function carries its target attribute
 * and is only reached through rt_cpu() (cpu.c) when the CPU has it.
 */
#include "runtime/kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)

#include "runtime/x86_simd.h"

static inline float wget(const void *w, int wf16, size_t at) {
  return wf16 ? rt_h2f(((const uint16_t *)w)[at]) : ((const float *)w)[at];
}

/* The bodies take wf16 as a constant from their callers below, so each
 * dtype gets its own loops without a test per row. */
AVX2_INLINE void gemv8(const float *x, size_t k, const void *w, const int wf16, size_t ldw, size_t n,
                       float *y) {
  size_t j = 0;
  for (; j + 64 <= n; j += 64) {
    __m256 a[8];
    for (int v = 0; v < 8; v++)
      a[v] = _mm256_loadu_ps(y + j + 8 * v);
    for (size_t i = 0; i < k; i++) {
      const __m256 xi = _mm256_set1_ps(x[i]);
      const size_t at = i * ldw + j;
      for (int v = 0; v < 8; v++)
        a[v] = _mm256_fmadd_ps(xi, ld8h(w, wf16, at + 8 * (size_t)v), a[v]);
    }
    for (int v = 0; v < 8; v++)
      _mm256_storeu_ps(y + j + 8 * v, a[v]);
  }
  for (; j + 8 <= n; j += 8) {
    __m256 a = _mm256_loadu_ps(y + j);
    for (size_t i = 0; i < k; i++)
      a = _mm256_fmadd_ps(_mm256_set1_ps(x[i]), ld8h(w, wf16, i * ldw + j), a);
    _mm256_storeu_ps(y + j, a);
  }
  for (; j < n; j++) {
    float s = y[j];
    for (size_t i = 0; i < k; i++)
      s += x[i] * wget(w, wf16, i * ldw + j);
    y[j] = s;
  }
}

AVX512_INLINE void gemv16(const float *x, size_t k, const void *w, const int wf16, size_t ldw, size_t n,
                          float *y) {
  size_t j = 0;
  for (; j + 128 <= n; j += 128) {
    __m512 a[8];
    for (int v = 0; v < 8; v++)
      a[v] = _mm512_loadu_ps(y + j + 16 * v);
    for (size_t i = 0; i < k; i++) {
      const __m512 xi = _mm512_set1_ps(x[i]);
      const size_t at = i * ldw + j;
      for (int v = 0; v < 8; v++)
        a[v] = _mm512_fmadd_ps(xi, ld16h(w, wf16, at + 16 * (size_t)v), a[v]);
    }
    for (int v = 0; v < 8; v++)
      _mm512_storeu_ps(y + j + 16 * v, a[v]);
  }
  for (; j + 16 <= n; j += 16) {
    __m512 a = _mm512_loadu_ps(y + j);
    for (size_t i = 0; i < k; i++)
      a = _mm512_fmadd_ps(_mm512_set1_ps(x[i]), ld16h(w, wf16, i * ldw + j), a);
    _mm512_storeu_ps(y + j, a);
  }
  if (j < n) rt_gemv_x86(x, k, (const uint8_t *)w + j * (wf16 ? 2 : 4), wf16, ldw, n - j, y + j);
}

AVX2 void rt_gemv_x86(const float *x, size_t k, const void *w, int wf16, size_t ldw, size_t n, float *y) {
  if (wf16)
    gemv8(x, k, w, 1, ldw, n, y);
  else
    gemv8(x, k, w, 0, ldw, n, y);
}

AVX512 void rt_gemv_avx512(const float *x, size_t k, const void *w, int wf16, size_t ldw, size_t n,
                           float *y) {
  if (wf16)
    gemv16(x, k, w, 1, ldw, n, y);
  else
    gemv16(x, k, w, 0, ldw, n, y);
}

#endif
