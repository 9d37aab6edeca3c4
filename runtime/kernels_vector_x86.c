/* kernels_vector_x86.c - vector-unit kinds on AVX2 + FMA + F16C hosts:
 * POOL, TRANSDATA (NCHW -> NC1HWC0), the f16 <-> f32 conversion that
 * TRANSDATA and COPY_SLICE use for dtype changes, and lanes of the
 * vector-program interpreter: EXP and SIGMOID (om_vexp, om_vsigmoid,
 * vectorized, fmaf as one instruction), FMA, and the f16 <-> f32
 * conversions of its LOADs, STOREs and f16 rounding; the row instructions
 * of kernels_norm.c (max, sum, exp-and-sum, sum of squared deviations)
 * and, on AVX-512, LAYERNORM's rows with those sums' arithmetic.
 * (DWCONV: dwconv_x86.inc.)
 *
 * POOL works plane by plane (one image, one channel block of 16 lanes = 2
 * YMM per pixel). POOL over the whole plane (global pooling:
 * kernel H x W, no padding) sums (or maxes) the plane straight from the
 * input into 8 accumulators and scales once. Other POOL windows convert the
 * input rows a plane needs once into f32 rows in the UB, widened with the
 * padding value (0 for average pooling, -inf for max pooling, so windows
 * need no bounds tests in W), in a ring of as many rows as one output row's
 * window spans. Max pooling f16 -> f16 converts nothing: one 16-lane
 * integer max per tap on order-preserving keys of the halves, over the
 * depth window too (3-D pools, NDC1HWC0). Other 3-D windows (kd > 1) read
 * each tap straight from x, 8 lanes at a time, in the portable kernel's
 * order. Results equal the portable kernels' up to f32 summation order. A
 * 2-D case whose ring does not fit the UB returns 0 and runs portably.
 *
 * Compiled for plain x86-64: every function carries target("avx2,fma,f16c")
 * and is only reached through rt_cpu() (cpu.c) when the CPU has all three.
 */
#include "runtime/kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)

#include <math.h>
#include <string.h>

#include "common/vmath.h"
#include "runtime/x86_simd.h"

/* --- EXP, SIGMOID and ERF lanes: om_vexp, om_vsigmoid and om_verf, which the compiler
 * vectorizes here, fmaf being one instruction (the same rounding as libm's
 * fmaf) */

AVX2 void rt_exp_x86(const float *restrict x, float *restrict y, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    y[i] = om_vexp(x[i]);
}

AVX2 void rt_sigmoid_x86(const float *restrict x, float *restrict y, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    y[i] = om_vsigmoid(x[i]);
}

AVX2 void rt_erf_x86(const float *restrict x, float *restrict y, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    y[i] = om_verf(x[i]);
}

AVX2 void rt_fma_x86(const float *restrict a, const float *restrict b, const float *restrict c,
                     float *restrict d, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    d[i] = fmaf(a[i], b[i], c[i]);
}

/* --- the row instructions (kernels.h): four 8-lane accumulators, so the
 * adds of consecutive vectors do not wait on each other */

AVX2_INLINE float hsum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

/* max(v, m) keeps m where v is NaN, as the portable v > m ? v : m does. */
AVX2 float rt_vmax_x86(const float *x, size_t n) {
  __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0, m2 = m0, m3 = m0;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    m0 = _mm256_max_ps(_mm256_loadu_ps(x + i), m0), m1 = _mm256_max_ps(_mm256_loadu_ps(x + i + 8), m1);
    m2 = _mm256_max_ps(_mm256_loadu_ps(x + i + 16), m2), m3 = _mm256_max_ps(_mm256_loadu_ps(x + i + 24), m3);
  }
  for (; i + 8 <= n; i += 8)
    m0 = _mm256_max_ps(_mm256_loadu_ps(x + i), m0);
  m0 = _mm256_max_ps(_mm256_max_ps(m0, m1), _mm256_max_ps(m2, m3));
  float lanes[8], m = -INFINITY;
  _mm256_storeu_ps(lanes, m0);
  for (int j = 0; j < 8; j++)
    m = lanes[j] > m ? lanes[j] : m;
  for (; i < n; i++)
    m = x[i] > m ? x[i] : m;
  return m;
}

AVX2 float rt_vsum_x86(const float *x, size_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    s0 = _mm256_add_ps(s0, _mm256_loadu_ps(x + i)), s1 = _mm256_add_ps(s1, _mm256_loadu_ps(x + i + 8));
    s2 = _mm256_add_ps(s2, _mm256_loadu_ps(x + i + 16)), s3 = _mm256_add_ps(s3, _mm256_loadu_ps(x + i + 24));
  }
  for (; i + 8 <= n; i += 8)
    s0 = _mm256_add_ps(s0, _mm256_loadu_ps(x + i));
  float s = hsum8(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  for (; i < n; i++)
    s += x[i];
  return s;
}

AVX2 float rt_vexp_sum_x86(float *restrict x, float sub, size_t n) {
  for (size_t i = 0; i < n; i++)
    x[i] = om_vexp(x[i] - sub);
  return rt_vsum_x86(x, n);
}

/* om_vexp on 16 lanes, its steps as vector operations (no contraction, as
 * the scalar's): the clamps as max / min (MAXPS gives its second operand,
 * VEXP_LO, for a NaN, as the scalar's first clamp does), and y * 2^k as
 * one VSCALEFPS, which rounds y * 2^kf once as the scalar's two products do
 * (its first is exact): the same bits (tests/unit/test_vexp.c). */
AVX512_INLINE __m512 vexp16(__m512 x) {
  const __m512 c = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(VEXP_LO)), _mm512_set1_ps(VEXP_HI));
  const __m512 shift = _mm512_set1_ps(VEXP_SHIFT);
  const __m512 kf = _mm512_sub_ps(_mm512_add_ps(_mm512_mul_ps(c, _mm512_set1_ps(VEXP_LOG2E)), shift), shift);
  const __m512 r = _mm512_sub_ps(_mm512_sub_ps(c, _mm512_mul_ps(kf, _mm512_set1_ps(VEXP_LN2_HI))),
                                 _mm512_mul_ps(kf, _mm512_set1_ps(VEXP_LN2_LO)));
  __m512 p = _mm512_set1_ps(VEXP_P0);
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(VEXP_P1));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(VEXP_P2));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(VEXP_P3));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(VEXP_P4));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(VEXP_P5));
  const __m512 y =
      _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(p, _mm512_mul_ps(r, r)), r), _mm512_set1_ps(1.0f));
  const __m512 e = _mm512_scalef_ps(y, kf);
  return _mm512_mask_mov_ps(e, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}

/* x[i] = om_vexp(x[i] - sub) in one pass, the last partial vector masked,
 * summed into one 16-lane accumulator; stored rounded to f16 values when
 * R16 (rt_round16's conversions), the sum being the unrounded values'. */
AVX512_INLINE float vexp_sum16(float *x, float sub, size_t n, const int R16) {
  const __m512 m = _mm512_set1_ps(sub);
  __m512 s = _mm512_setzero_ps();
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 k = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
    const __m512 e = vexp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), m));
    s = _mm512_mask_add_ps(s, k, s, e);
    _mm512_mask_storeu_ps(x + i, k, R16 ? _mm512_cvtph_ps(_mm512_cvtps_ph(e, _MM_FROUND_TO_NEAREST_INT)) : e);
  }
  return _mm512_reduce_add_ps(s);
}

AVX512 float rt_vexp_sum_avx512(float *restrict x, float sub, size_t n) { return vexp_sum16(x, sub, n, 0); }

AVX512 float rt_vexp_sum_r16_avx512(float *restrict x, float sub, size_t n) {
  return vexp_sum16(x, sub, n, 1);
}

/* rt_vsum_x86's sum on 16 lanes, the same additions in the same order: its
 * four 8-lane accumulators are the halves of a and b. */
AVX512_INLINE float vsum16(const float *x, size_t n) {
  __m512 a = _mm512_setzero_ps(), b = a;
  size_t i = 0;
  for (; i + 32 <= n; i += 32)
    a = _mm512_add_ps(a, _mm512_loadu_ps(x + i)), b = _mm512_add_ps(b, _mm512_loadu_ps(x + i + 16));
  for (; i + 8 <= n; i += 8) /* into the first accumulator, a's low half */
    a = _mm512_mask_add_ps(a, 0x00ff, a, _mm512_castps256_ps512(_mm256_loadu_ps(x + i)));
  __m256 s01 = _mm256_add_ps(_mm512_castps512_ps256(a), _mm512_extractf32x8_ps(a, 1));
  __m256 s23 = _mm256_add_ps(_mm512_castps512_ps256(b), _mm512_extractf32x8_ps(b, 1));
  float s = hsum8(_mm256_add_ps(s01, s23));
  for (; i < n; i++)
    s += x[i];
  return s;
}

/* rt_vsum_sqdev_x86's sum on 16 lanes, likewise (its two accumulators are
 * a's halves). */
AVX512_INLINE float vsum_sqdev16(const float *x, float mean, size_t n) {
  const __m512 m = _mm512_set1_ps(mean);
  __m512 a = _mm512_setzero_ps();
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 d = _mm512_sub_ps(_mm512_loadu_ps(x + i), m);
    a = _mm512_fmadd_ps(d, d, a);
  }
  for (; i + 8 <= n; i += 8) {
    __m512 d = _mm512_castps256_ps512(_mm256_sub_ps(_mm256_loadu_ps(x + i), _mm512_castps512_ps256(m)));
    a = _mm512_mask3_fmadd_ps(d, d, a, 0x00ff);
  }
  float s = hsum8(_mm256_add_ps(_mm512_castps512_ps256(a), _mm512_extractf32x8_ps(a, 1)));
  for (; i < n; i++)
    s += (x[i] - mean) * (x[i] - mean);
  return s;
}

/* LAYERNORM's rows (kernels_norm.c) on 16 lanes with the AVX2 path's
 * arithmetic, bit for bit: the row comes in in one pass (x, the residual
 * added and rounded to x's dtype, the sum stored), the mean and the squared
 * deviations are vsum16 and vsum_sqdev16 over the UB copy, and the affine
 * map goes out in one pass (products and sums as separate roundings, as
 * the portable loop's). */
AVX512 int rt_layernorm_avx512(const rt_ln_rows *a, uint64_t lo, uint64_t hi, float *row) {
  const int fl[4] = {a->xt, a->res ? a->rt : DT_FLOAT32, a->sum ? a->st : DT_FLOAT32, a->yt};
  for (int k = 0; k < 4; k++)
    if (fl[k] != DT_FLOAT16 && fl[k] != DT_FLOAT32) return 0;
  const int xh = a->xt == DT_FLOAT16, rh = a->rt == DT_FLOAT16, sh = a->st == DT_FLOAT16;
  const int yh = a->yt == DT_FLOAT16;
  const size_t D = a->d;
  for (uint64_t r = lo; r < hi; r++) {
    const size_t base = (size_t)r * D;
    size_t i = 0;
    for (; i + 16 <= D; i += 16) {
      __m512 v = ld16h(a->x, xh, base + i);
      if (a->res) {
        v = _mm512_add_ps(v, ld16h(a->res, rh, base + i));
        if (xh) v = _mm512_cvtph_ps(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
        if (a->sum) st16h(a->sum, sh, base + i, v);
      }
      _mm512_storeu_ps(row + i, v);
    }
    for (; i < D; i++) {
      float v = rt_get(a->x, a->xt, base + i);
      if (a->res) {
        v += rt_get(a->res, a->rt, base + i);
        if (xh) v = rt_h2f(rt_f2h(v));
        if (a->sum) rt_put(a->sum, a->st, base + i, v);
      }
      row[i] = v;
    }
    const float mean = a->rms ? 0.0f : vsum16(row, D) / (float)D;
    const float inv = 1.0f / sqrtf(vsum_sqdev16(row, mean, D) / (float)D + a->eps);
    const __m512 m = _mm512_set1_ps(mean), iv = _mm512_set1_ps(inv);
    for (i = 0; i + 16 <= D; i += 16) {
      __m512 v = _mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(row + i), m), iv);
      if (a->scale) v = _mm512_mul_ps(v, _mm512_loadu_ps(a->scale + i));
      if (a->bias || !a->scale)
        v = _mm512_add_ps(v, a->bias ? _mm512_loadu_ps(a->bias + i) : _mm512_setzero_ps());
      st16h(a->y, yh, base + i, v);
    }
    for (; i < D; i++) {
      float v = (row[i] - mean) * inv;
      if (a->scale) v = v * a->scale[i];
      if (a->bias || !a->scale) v = v + (a->bias ? a->bias[i] : 0.0f);
      rt_put(a->y, a->yt, base + i, v);
    }
  }
  return 1;
}

/* ATTENTION's k [Skv, D] staged as k^T panels (kernels_attention.c,
 * stage_k): 16 key rows of 16 elements at a time into 16 registers (f16
 * converted, exactly), transposed in four steps (pairs of rows interleaved
 * by floats, then by float pairs: each 128-bit lane holds four rows of one
 * column; then the 128-bit lanes regrouped twice), each column a panel row
 * of 16 keys. A last chunk of d % 16 columns loads and stores under a
 * mask. The same values as the scalar scatter. */
AVX512 void rt_attn_stage_k_avx512(float *dst, const void *k, int kh, size_t at, size_t rs, size_t d) {
  for (size_t c0 = 0; c0 < d; c0 += 16) {
    const size_t w = d - c0 < 16 ? d - c0 : 16;
    const __mmask16 m = (__mmask16)((1u << w) - 1);
    __m512 r[16], t[16], u[16];
#pragma GCC unroll 16
    for (int j = 0; j < 16; j++) {
      const size_t e = at + (size_t)j * rs + c0;
      if (!kh) {
        r[j] = _mm512_maskz_loadu_ps(m, (const float *)k + e);
      } else if (w == 16) {
        r[j] = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)((const uint16_t *)k + e)));
      } else { /* a last chunk of halves through a zeroed row */
        uint16_t h[16] = {0};
        memcpy(h, (const uint16_t *)k + e, w * sizeof *h);
        r[j] = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)h));
      }
    }
#pragma GCC unroll 8
    for (int j = 0; j < 16; j += 2)
      t[j] = _mm512_unpacklo_ps(r[j], r[j + 1]), t[j + 1] = _mm512_unpackhi_ps(r[j], r[j + 1]);
#pragma GCC unroll 4
    for (int j = 0; j < 16; j += 4) { /* u[j + q]: rows j..j+3 of column 4L + q in 128-bit lane L */
      const __m512d a = _mm512_castps_pd(t[j]), b = _mm512_castps_pd(t[j + 1]);
      const __m512d c = _mm512_castps_pd(t[j + 2]), e = _mm512_castps_pd(t[j + 3]);
      u[j] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c)),
      u[j + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
      u[j + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, e)),
            u[j + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, e));
    }
#pragma GCC unroll 4
    for (int q = 0; q < 4; q++) { /* columns q, 4 + q, 8 + q, 12 + q */
      const __m512 v0 = _mm512_shuffle_f32x4(u[q], u[4 + q], 0x88),
                   v1 = _mm512_shuffle_f32x4(u[q], u[4 + q], 0xdd);
      const __m512 v2 = _mm512_shuffle_f32x4(u[8 + q], u[12 + q], 0x88);
      const __m512 v3 = _mm512_shuffle_f32x4(u[8 + q], u[12 + q], 0xdd);
      const __m512 col[4] = {_mm512_shuffle_f32x4(v0, v2, 0x88), _mm512_shuffle_f32x4(v1, v3, 0x88),
                             _mm512_shuffle_f32x4(v0, v2, 0xdd), _mm512_shuffle_f32x4(v1, v3, 0xdd)};
#pragma GCC unroll 4
      for (int l = 0; l < 4; l++)
        if ((size_t)(4 * l + q) < w) _mm512_storeu_ps(dst + (c0 + 4 * (size_t)l + (size_t)q) * 16, col[l]);
    }
  }
}

/* ATTENTION's scores of one query row (kernels_attention.c): p[j] = the
 * L0C accumulator of key j (16-key blocks sstride floats apart) times
 * scale, and their max, NaNs skipped as rt_vmax_x86 skips them: the same
 * products and the same max in one pass. */
AVX512 float rt_attn_scale_max_avx512(float *restrict p, const float *restrict s, size_t sstride, size_t n,
                                      float scale) {
  const __m512 sc = _mm512_set1_ps(scale);
  __m512 m = _mm512_set1_ps(-INFINITY);
  size_t j = 0;
  for (; j + 16 <= n; j += 16) {
    __m512 v = _mm512_mul_ps(_mm512_loadu_ps(s + j / 16 * sstride), sc);
    _mm512_storeu_ps(p + j, v);
    m = _mm512_max_ps(v, m);
  }
  if (j < n) {
    const __mmask16 k = (__mmask16)((1u << (n - j)) - 1);
    __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, s + j / 16 * sstride), sc);
    _mm512_mask_storeu_ps(p + j, k, v);
    m = _mm512_mask_max_ps(m, k, v, m);
  }
  float lanes[16], mx = -INFINITY;
  _mm512_storeu_ps(lanes, m);
  for (int i = 0; i < 16; i++)
    mx = lanes[i] > mx ? lanes[i] : mx;
  return mx;
}

/* rt_round16_x86 on 16 lanes (the same conversions). */
AVX512 void rt_round16_avx512(float *x, uint32_t n) {
  uint32_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(x + i,
                     _mm512_cvtph_ps(_mm512_cvtps_ph(_mm512_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT)));
  rt_round16_x86(x + i, n - i);
}

AVX2 float rt_vsum_sqdev_x86(const float *x, float mean, size_t n) {
  const __m256 m = _mm256_set1_ps(mean);
  __m256 s0 = _mm256_setzero_ps(), s1 = s0;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(x + i), m), d1 = _mm256_sub_ps(_mm256_loadu_ps(x + i + 8), m);
    s0 = _mm256_fmadd_ps(d0, d0, s0), s1 = _mm256_fmadd_ps(d1, d1, s1);
  }
  for (; i + 8 <= n; i += 8) {
    __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(x + i), m);
    s0 = _mm256_fmadd_ps(d0, d0, s0);
  }
  float s = hsum8(_mm256_add_ps(s0, s1));
  for (; i < n; i++)
    s += (x[i] - mean) * (x[i] - mean);
  return s;
}

/* --- the interpreter's f16 lanes: vcvtph2ps quiets a signaling NaN as
 * rt_h_quiet does, and vcvtps2ph rounds as rt_f2h (both checked for every
 * input), so these equal the portable loops bit for bit. */

AVX2 void rt_h2f_x86(float *restrict d, const uint16_t *restrict s, uint32_t n) {
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(d + i, ld8h(s, 1, i));
  for (; i < n; i++)
    d[i] = rt_h2f(rt_h_quiet(s[i]));
}

AVX2 void rt_f2h_x86(uint16_t *restrict d, const float *restrict s, uint32_t n) {
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8)
    st8h(d, 1, i, _mm256_loadu_ps(s + i));
  for (; i < n; i++)
    d[i] = rt_f2h(s[i]);
}

AVX2 void rt_round16_x86(float *x, uint32_t n) {
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(x + i,
                     _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT)));
  for (; i < n; i++)
    x[i] = rt_h2f(rt_f2h(x[i]));
}

/* --- the row ring */

/* Input rows of one plane as f32, widened to `wp` pixels: pixel p of a ring
 * row is input column p - pl, `pad` outside [0, W). Slot s holds row tag[s]. */
typedef struct ring {
  float *buf; /* [nslots][wp][16] */
  int64_t nslots, wp, pl, w;
  int64_t tag[64];
  const void *x; /* the plane */
  int xf16;
  __m256 pad;
} ring;

/* Ring geometry for windows of `span` rows: 0 when it does not fit `bytes`. */
static int ring_init(ring *r, void *buf, size_t bytes, int64_t span, int64_t wp, int64_t pl, int64_t w) {
  if (span > 64 || wp < 1 || (uint64_t)span * (uint64_t)wp * C0 * sizeof(float) > bytes) return 0;
  r->buf = buf, r->nslots = span, r->wp = wp, r->pl = pl, r->w = w;
  return 1;
}

static AVX2 void ring_reset(ring *r, const void *x, int xf16, float pad) {
  r->x = x, r->xf16 = xf16, r->pad = _mm256_set1_ps(pad);
  for (int64_t s = 0; s < r->nslots; s++)
    r->tag[s] = -1;
}

/* Row ih (0 <= ih < H) of the plane, converted on first use. */
static AVX2 const float *ring_row(ring *r, int64_t ih) {
  int64_t s = ih % r->nslots;
  float *row = r->buf + (size_t)(s * r->wp) * C0;
  if (r->tag[s] == ih) return row;
  r->tag[s] = ih;
  const size_t base = (size_t)(ih * r->w) * C0;
  for (int64_t p = 0; p < r->wp; p++) {
    int64_t iw = p - r->pl;
    __m256 lo = r->pad, hi = r->pad;
    if (iw >= 0 && iw < r->w) {
      lo = ld8h(r->x, r->xf16, base + (size_t)iw * C0);
      hi = ld8h(r->x, r->xf16, base + (size_t)iw * C0 + 8);
    }
    _mm256_storeu_ps(row + p * C0, lo);
    _mm256_storeu_ps(row + p * C0 + 8, hi);
  }
  return row;
}

/* --- POOL */
/* The x element offset of the one input plane of output plane unit, for
 * depth windows of one tap (2-D pools among them: kd 1, so no depth pads). */
static inline size_t plane_of(const rt_pool_geom *g, uint64_t unit) {
  return rt_pool_xplane(g, unit, (int64_t)(unit / (uint64_t)g->c1) % g->dout * g->sd);
}

/* f16 bits -> int16 whose signed order is the float order (negative halves
 * have their magnitude bits flipped); its own inverse. */
AVX2_INLINE __m256i h_order(__m256i h) {
  return _mm256_xor_si256(h, _mm256_and_si256(_mm256_srai_epi16(h, 15), _mm256_set1_epi16(0x7fff)));
}

/* Max pooling f16 -> f16 straight on the halves: one 16-lane integer max per
 * tap on order-preserving keys (exact: max picks one of its inputs). Taps
 * outside the input are skipped as in the portable kernel. NaNs are not
 * propagated the portable way (it keeps the running max); -0 and +0 may
 * come out the other way round. */
static AVX2 void maxpool_f16(const rt_args *args, const rt_pool_geom *g, uint64_t lo, uint64_t hi) {
  const uint16_t *xd = args->data[OM_POOL_T_X];
  uint16_t *yd = args->data[OM_POOL_T_Y];
  const int64_t kh = g->kh, kw = g->kw, sh = g->sh, sw = g->sw, pt = g->pt, pl = g->pl;
  const int64_t h = g->h, w = g->w, ho = g->ho, wo = g->wo;
  const size_t dstep = (size_t)(g->c1 * h * w) * C0; /* from one depth plane of x to the next */
  for (uint64_t unit = lo; unit < hi; unit++) {
    int64_t d0, pd1, id0, id1;
    rt_pool_depth(g, unit, &d0, &pd1, &id0, &id1);
    const uint16_t *xp = xd + rt_pool_xplane(g, unit, id0);
    const int64_t nd = id1 - id0;
    uint16_t *yp = yd + (size_t)unit * (size_t)(ho * wo) * C0;
    for (int64_t oh = 0; oh < ho; oh++) {
      int64_t h0 = oh * sh - pt, ih0 = h0 < 0 ? 0 : h0, ih1 = h0 + kh < h ? h0 + kh : h;
      for (int64_t ow = 0; ow < wo; ow++, yp += C0) {
        int64_t w0 = ow * sw - pl, iw0 = w0 < 0 ? 0 : w0, iw1 = w0 + kw < w ? w0 + kw : w;
        __m256i m = _mm256_set1_epi16(INT16_MIN);
        for (int64_t id = 0; id < nd; id++)
          for (int64_t ih = ih0; ih < ih1; ih++)
            for (int64_t iw = iw0; iw < iw1; iw++)
              m = _mm256_max_epi16(
                  m, h_order(_mm256_loadu_si256(
                         (const __m256i *)(xp + (size_t)id * dstep + (size_t)(ih * w + iw) * C0))));
        _mm256_storeu_si256((__m256i *)yp, h_order(m));
      }
    }
  }
}

/* Windows with a depth extent (kd > 1) other than max f16 -> f16: each
 * output pixel's taps inside x read straight from it (8 f32 lanes from
 * each half of a pixel's channel block), in the portable kernel's order
 * (depth, then H, then W) and with its count, so the results are the
 * portable kernel's exactly (per-lane f32 adds in the same order; max as
 * v > acc ? v : acc). */
static AVX2 void pool_taps(const om_task *task, const rt_args *args, const rt_pool_geom *g, uint64_t lo,
                           uint64_t hi) {
  const om_tensor *x = args->desc[OM_POOL_T_X], *y = args->desc[OM_POOL_T_Y];
  const void *xd = args->data[OM_POOL_T_X];
  void *yd = args->data[OM_POOL_T_Y];
  const int xf16 = x->dtype == DT_FLOAT16, yf16 = y->dtype == DT_FLOAT16;
  const int64_t h = g->h, w = g->w, ho = g->ho, wo = g->wo;
  const size_t dstep = (size_t)(g->c1 * h * w) * C0; /* from one depth plane of x to the next */
  const __m256 init = _mm256_set1_ps(g->is_max ? -INFINITY : 0.0f);
  for (uint64_t unit = lo; unit < hi; unit++) {
    int64_t d0, pd1, id0, id1;
    rt_pool_depth(g, unit, &d0, &pd1, &id0, &id1);
    const size_t xplane = rt_pool_xplane(g, unit, id0);
    size_t at = (size_t)unit * (size_t)(ho * wo) * C0;
    for (int64_t oh = 0; oh < ho; oh++) {
      int64_t h0 = oh * g->sh - g->pt, h1 = h0 + g->kh;
      int64_t ph1 = h1 < h + g->pb ? h1 : h + g->pb;
      int64_t ih0 = h0 < 0 ? 0 : h0, ih1 = h1 < h ? h1 : h;
      for (int64_t ow = 0; ow < wo; ow++, at += C0) {
        int64_t w0 = ow * g->sw - g->pl, w1 = w0 + g->kw;
        int64_t iw0 = w0 < 0 ? 0 : w0, iw1 = w1 < w ? w1 : w;
        __m256 a0 = init, a1 = init;
        for (int64_t id = 0; id < id1 - id0; id++)
          for (int64_t ih = ih0; ih < ih1; ih++)
            for (int64_t iw = iw0; iw < iw1; iw++) {
              const size_t e = xplane + (size_t)id * dstep + (size_t)(ih * w + iw) * C0;
              const __m256 v0 = ld8h(xd, xf16, e), v1 = ld8h(xd, xf16, e + 8);
              if (g->is_max)
                a0 = _mm256_max_ps(v0, a0), a1 = _mm256_max_ps(v1, a1);
              else
                a0 = _mm256_add_ps(a0, v0), a1 = _mm256_add_ps(a1, v1);
            }
        if (!g->is_max) {
          int64_t pw1 = w1 < w + g->pr ? w1 : w + g->pr;
          int64_t count =
              g->include_pad ? (pd1 - d0) * (ph1 - h0) * (pw1 - w0) : (id1 - id0) * (ih1 - ih0) * (iw1 - iw0);
          const __m256 inv = _mm256_set1_ps(1.0f / (float)count);
          a0 = _mm256_mul_ps(a0, inv), a1 = _mm256_mul_ps(a1, inv);
        }
        st8h(yd, yf16, at, a0);
        st8h(yd, yf16, at + 8, a1);
      }
    }
  }
}

/* The sum (or max) of the n pixels of a plane from element `base`, both
 * halves, 4 pixels at a time into 8 accumulators (independent chains to
 * cover the add latency). Max keeps the running value on a NaN
 * (vmaxps(v, a) is v > a ? v : a), as the portable kernel does. */
AVX2_INLINE void plane_reduce(const int XF16, const int MAX, const void *x, size_t base, int64_t n,
                              __m256 out[2]) {
  __m256 a[4][2];
#pragma GCC unroll 4
  for (int k = 0; k < 4; k++)
    a[k][0] = a[k][1] = _mm256_set1_ps(MAX ? -INFINITY : 0.0f);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++)
#pragma GCC unroll 2
      for (int half = 0; half < 2; half++) {
        const __m256 v = ld8h(x, XF16, base + (size_t)(i + k) * C0 + (size_t)half * 8);
        a[k][half] = MAX ? _mm256_max_ps(v, a[k][half]) : _mm256_add_ps(a[k][half], v);
      }
  for (; i < n; i++)
#pragma GCC unroll 2
    for (int half = 0; half < 2; half++) {
      const __m256 v = ld8h(x, XF16, base + (size_t)i * C0 + (size_t)half * 8);
      a[0][half] = MAX ? _mm256_max_ps(v, a[0][half]) : _mm256_add_ps(a[0][half], v);
    }
#pragma GCC unroll 2
  for (int half = 0; half < 2; half++)
    out[half] =
        MAX ? _mm256_max_ps(_mm256_max_ps(a[0][half], a[1][half]), _mm256_max_ps(a[2][half], a[3][half]))
            : _mm256_add_ps(_mm256_add_ps(a[0][half], a[1][half]), _mm256_add_ps(a[2][half], a[3][half]));
}

/* Windows covering the whole input (kernel D x H x W, no padding, one
 * output pixel: global pooling): each of the unit's D planes reduced
 * straight from the input, in depth order, the average scaled by 1 /
 * (D*H*W) as the portable kernel does. */
static AVX2 void pool_global(const rt_pool_geom *g, const void *xd, int xf16, void *yd, int yf16, int is_max,
                             uint64_t lo, uint64_t hi) {
  const int64_t n = g->h * g->w;
  const __m256 inv = _mm256_set1_ps(1.0f / (float)(n * g->d));
  for (uint64_t unit = lo; unit < hi; unit++) {
    __m256 acc[2] = {_mm256_set1_ps(is_max ? -INFINITY : 0.0f), _mm256_set1_ps(is_max ? -INFINITY : 0.0f)};
    for (int64_t id = 0; id < g->d; id++) {
      const size_t base = rt_pool_xplane(g, unit, id);
      __m256 s[2];
      if (is_max)
        xf16 ? plane_reduce(1, 1, xd, base, n, s) : plane_reduce(0, 1, xd, base, n, s);
      else
        xf16 ? plane_reduce(1, 0, xd, base, n, s) : plane_reduce(0, 0, xd, base, n, s);
      for (int half = 0; half < 2; half++)
        acc[half] = g->d == 1 ? s[half]
                    : is_max  ? _mm256_max_ps(s[half], acc[half])
                              : _mm256_add_ps(acc[half], s[half]);
    }
    for (int half = 0; half < 2; half++)
      st8h(yd, yf16, (size_t)unit * C0 + (size_t)half * 8,
           is_max ? acc[half] : _mm256_mul_ps(acc[half], inv));
  }
}

int AVX2 rt_pool_x86(const om_task *task, const rt_args *args, uint64_t lo, uint64_t hi, rt_core *core) {
  const om_tensor *x = args->desc[OM_POOL_T_X], *y = args->desc[OM_POOL_T_Y];
  const void *xd = args->data[OM_POOL_T_X];
  void *yd = args->data[OM_POOL_T_Y];
  const int xf16 = x->dtype == DT_FLOAT16, yf16 = y->dtype == DT_FLOAT16;
  rt_pool_geom g;
  rt_pool_geom_init(task, args, &g);
  const int64_t h = g.h, w = g.w, ho = g.ho, wo = g.wo;
  if (g.kh == h && g.kw == w && (g.pt | g.pl | g.pb | g.pr) == 0 && g.kd == g.d && g.pf + g.pbk == 0 &&
      g.dout == 1) {
    pool_global(&g, xd, xf16, yd, yf16, g.is_max, lo, hi);
    return 1;
  }
  if (g.is_max && xf16 && yf16) {
    maxpool_f16(args, &g, lo, hi);
    return 1;
  }
  if (g.kd > 1) {
    pool_taps(task, args, &g, lo, hi);
    return 1;
  }
  /* Windows may end past W + pr with ceil rounding: widen to the last one. */
  int64_t wp = (wo - 1) * g.sw + g.kw;
  if (wp < g.pl + w) wp = g.pl + w;
  ring r;
  if (!ring_init(&r, core->ub, core->ub_bytes, g.kh, wp, g.pl, w)) return 0;
  for (uint64_t unit = lo; unit < hi; unit++) {
    ring_reset(&r, (const uint8_t *)xd + plane_of(&g, unit) * (xf16 ? 2 : 4), xf16,
               g.is_max ? -INFINITY : 0.0f);
    size_t at = (size_t)unit * (size_t)(ho * wo) * C0;
    for (int64_t oh = 0; oh < ho; oh++) {
      int64_t h0 = oh * g.sh - g.pt, h1 = h0 + g.kh;
      int64_t ph1 = h1 < h + g.pb ? h1 : h + g.pb;
      int64_t ih0 = h0 < 0 ? 0 : h0, ih1 = h1 < h ? h1 : h;
      const float *rows[64];
      int nr = 0;
      for (int64_t ih = ih0; ih < ih1; ih++)
        rows[nr++] = ring_row(&r, ih);
      for (int64_t ow = 0; ow < wo; ow++, at += C0) {
        int64_t w0 = ow * g.sw - g.pl, w1 = w0 + g.kw;
        const __m256 init = _mm256_set1_ps(g.is_max ? -INFINITY : 0.0f);
        __m256 a0 = init, a1 = init;
        const size_t off = (size_t)(ow * g.sw) * C0;
        for (int i = 0; i < nr; i++) {
          const float *xr = rows[i] + off;
          if (g.is_max) {
            for (int64_t j = 0; j < g.kw; j++)
              a0 = _mm256_max_ps(a0, _mm256_loadu_ps(xr + j * C0)),
              a1 = _mm256_max_ps(a1, _mm256_loadu_ps(xr + j * C0 + 8));
          } else {
            for (int64_t j = 0; j < g.kw; j++)
              a0 = _mm256_add_ps(a0, _mm256_loadu_ps(xr + j * C0)),
              a1 = _mm256_add_ps(a1, _mm256_loadu_ps(xr + j * C0 + 8));
          }
        }
        if (!g.is_max) {
          int64_t pw1 = w1 < w + g.pr ? w1 : w + g.pr;
          int64_t iw0 = w0 < 0 ? 0 : w0, iw1 = w1 < w ? w1 : w;
          int64_t count = g.include_pad ? (ph1 - h0) * (pw1 - w0) : (ih1 - ih0) * (iw1 - iw0);
          const __m256 inv = _mm256_set1_ps(1.0f / (float)count);
          a0 = _mm256_mul_ps(a0, inv), a1 = _mm256_mul_ps(a1, inv);
        }
        st8h(yd, yf16, at, a0);
        st8h(yd, yf16, at + 8, a1);
      }
    }
  }
  return 1;
}

/* --- TRANSDATA between ND (NCHW) and NC1HWC0: 8 channels x 8 pixels
 * transposed in registers, both ways; f16 -> f16 as 16-bit lanes (the bits
 * move), the other dtype pairs through f32. */

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

/* The first n (<= 8) elements at `at` as 8 f32 lanes, the rest 0. */
AVX2_INLINE __m256 ld_part(const void *p, int f16, size_t at, int64_t n) {
  if (n == 8) return ld8h(p, f16, at);
  if (f16) {
    uint16_t t[8] = {0};
    memcpy(t, (const uint16_t *)p + at, (size_t)n * sizeof *t);
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)t));
  }
  float t[8] = {0};
  memcpy(t, (const float *)p + at, (size_t)n * sizeof *t);
  return _mm256_loadu_ps(t);
}

/* The first n (<= 8) lanes of v to `at` (f16 rounded as st8h, or f32). */
AVX2_INLINE void st_part(void *p, int f16, size_t at, __m256 v, int64_t n) {
  if (n == 8) {
    st8h(p, f16, at, v);
  } else if (f16) {
    uint16_t t[8];
    _mm_storeu_si128((__m128i *)t, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    memcpy((uint16_t *)p + at, t, (size_t)n * sizeof *t);
  } else {
    float t[8];
    _mm256_storeu_ps(t, v);
    memcpy((float *)p + at, t, (size_t)n * sizeof *t);
  }
}

/* Eight rows of 8 halves in each 128-bit lane transposed within the lane:
 * r[k] = element k of every row, lane by lane. */
AVX2_INLINE void transpose8x16(__m256i r[8]) {
  __m256i t[8], u[8];
  for (int i = 0; i < 4; i++)
    t[2 * i] = _mm256_unpacklo_epi16(r[2 * i], r[2 * i + 1]),
          t[2 * i + 1] = _mm256_unpackhi_epi16(r[2 * i], r[2 * i + 1]);
  for (int i = 0; i < 2; i++) /* u[4i..4i+3]: elements 0-1, 2-3, 4-5, 6-7 of rows 4i..4i+3 */
    u[4 * i] = _mm256_unpacklo_epi32(t[4 * i], t[4 * i + 2]),
          u[4 * i + 1] = _mm256_unpackhi_epi32(t[4 * i], t[4 * i + 2]),
          u[4 * i + 2] = _mm256_unpacklo_epi32(t[4 * i + 1], t[4 * i + 3]),
          u[4 * i + 3] = _mm256_unpackhi_epi32(t[4 * i + 1], t[4 * i + 3]);
  for (int i = 0; i < 4; i++)
    r[2 * i] = _mm256_unpacklo_epi64(u[i], u[i + 4]), r[2 * i + 1] = _mm256_unpackhi_epi64(u[i], u[i + 4]);
}

/* NC1HWC0 / NDC1HWC0 -> ND, dst rows (n, ch, d, ih) in [lo, hi): the rows
 * of 8 channels 8g .. 8g+7 (one half of a channel block, read whole: a
 * block has 16 lanes) at one (n, d, ih) go 8 columns at a time through a
 * transpose (a row's last columns: its last 8 when W >= 8, some stored
 * twice with the same bits, else a partial transpose), and only the rows
 * of real channels inside [lo, hi) are stored. */
/* transdata_to_nd with 16-bit elements on both sides (f16 -> f16): the
 * bits move. 8 columns of a whole channel block (16 lanes, 32 bytes each)
 * transposed within the 128-bit lanes give channel j's 8 values (low lane)
 * and channel j + 8's (high lane). */
static AVX2 void transdata_to_nd_u16(const rt_td_geom *g, const uint16_t *sp, uint16_t *dp, uint64_t lo,
                                     uint64_t hi) {
  const int64_t c = g->c, h = g->h, w = g->w, c1 = g->c1, dep = g->d, chrows = dep * h;
  const int64_t n0 = (int64_t)(lo / (uint64_t)(c * chrows)),
                n1 = (int64_t)((hi - 1) / (uint64_t)(c * chrows));
  for (int64_t in = n0; in <= n1; in++)
    for (int64_t id = 0; id < dep; id++)
      for (int64_t cb = 0; cb < c1; cb++) {
        const int64_t nch = c - cb * C0 < C0 ? c - cb * C0 : C0;
        for (int64_t ih = 0; ih < h; ih++) {
          const uint64_t row0 = (uint64_t)(((in * c + cb * C0) * dep + id) * h + ih),
                         last = row0 + (uint64_t)((nch - 1) * chrows);
          if (last < lo || row0 >= hi) continue;
          const uint16_t *src = sp + (size_t)(((((in * dep + id) * c1 + cb) * h + ih) * w) * C0);
          for (int64_t i = 0; i < w; i += 8) {
            const int64_t iw = w - i < 8 && w >= 8 ? w - 8 : i, cols = w - iw < 8 ? w - iw : 8;
            __m256i r[8];
            for (int k = 0; k < 8; k++)
              r[k] = k < cols ? _mm256_loadu_si256((const __m256i *)(src + (size_t)(iw + k) * C0))
                              : _mm256_setzero_si256();
            transpose8x16(r);
            for (int j = 0; j < nch; j++) {
              const uint64_t row = row0 + (uint64_t)(j * chrows);
              if (row < lo || row >= hi) continue;
              const __m128i v = j < 8 ? _mm256_castsi256_si128(r[j]) : _mm256_extracti128_si256(r[j - 8], 1);
              uint16_t *dst = dp + (size_t)row * (size_t)w + (size_t)iw;
              if (cols == 8) {
                _mm_storeu_si128((__m128i *)dst, v);
              } else {
                uint16_t t[8];
                _mm_storeu_si128((__m128i *)t, v);
                memcpy(dst, t, (size_t)cols * sizeof *t);
              }
            }
          }
        }
      }
}

static AVX2 void transdata_to_nd(const om_tensor *s, const om_tensor *d, const void *sp, void *dp,
                                 uint64_t lo, uint64_t hi) {
  const int sf16 = s->dtype == DT_FLOAT16, df16 = d->dtype == DT_FLOAT16;
  rt_td_geom g;
  rt_td_geom_init(d, &g);
  const int64_t c = g.c, h = g.h, w = g.w, c1 = g.c1, dep = g.d, chrows = dep * h; /* rows per channel */
  if (lo >= hi || c * chrows == 0) return;
  if (sf16 && df16) {
    transdata_to_nd_u16(&g, (const uint16_t *)sp, (uint16_t *)dp, lo, hi);
    return;
  }
  const int64_t n0 = (int64_t)(lo / (uint64_t)(c * chrows)),
                n1 = (int64_t)((hi - 1) / (uint64_t)(c * chrows));
  for (int64_t in = n0; in <= n1; in++)
    for (int64_t id = 0; id < dep; id++)
      for (int64_t g8 = 0; g8 * 8 < c; g8++) {
        const int64_t nch = c - g8 * 8 < 8 ? c - g8 * 8 : 8;
        for (int64_t ih = 0; ih < h; ih++) {
          const uint64_t row0 = (uint64_t)(((in * c + g8 * 8) * dep + id) * h + ih),
                         last = row0 + (uint64_t)((nch - 1) * chrows);
          if (last < lo || row0 >= hi) continue;
          const size_t src = (size_t)(((((in * dep + id) * c1 + g8 / 2) * h + ih) * w) * C0 + (g8 % 2) * 8);
          for (int64_t i = 0; i < w; i += 8) {
            const int64_t iw = w - i < 8 && w >= 8 ? w - 8 : i, cols = w - iw < 8 ? w - iw : 8;
            __m256 r[8];
            for (int k = 0; k < 8; k++)
              r[k] = k < cols ? ld8h(sp, sf16, src + (size_t)(iw + k) * C0) : _mm256_setzero_ps();
            transpose8(r);
            for (int j = 0; j < nch; j++) {
              const uint64_t row = row0 + (uint64_t)(j * chrows);
              if (row >= lo && row < hi) st_part(dp, df16, (size_t)row * (size_t)w + (size_t)iw, r[j], cols);
            }
          }
        }
      }
}

/* ND -> NC1HWC0 with 16-bit elements on both sides (f16 -> f16): the bits
 * move, no conversion. Per dst row (n, c1, h) and 8 columns: the row of
 * channel j (low lane) and j + 8 (high lane) of each of the block's 8
 * channel pairs, transposed within the lanes, is one column's 16 lanes.
 * Channels past C (the padding lanes) read as 0. A row's last columns are
 * its last 8 (when W >= 8; else through a zeroed copy). */
static AVX2 void transdata_to_5hd_u16(const rt_td_geom *g, const uint16_t *sp, uint16_t *dp, uint64_t lo,
                                      uint64_t hi) {
  const int64_t c = g->c, h = g->h, w = g->w, c1 = g->c1;
  for (uint64_t row = lo; row < hi; row++) {
    const int64_t ih = (int64_t)row % h, cb = (int64_t)row / h % c1, img = (int64_t)row / h / c1;
    uint16_t *out = dp + (size_t)row * (size_t)w * C0;
    const uint16_t *base = sp + rt_td_nd_base(g, img) + (size_t)(ih * w);
    for (int64_t i = 0; i < w; i += 8) {
      /* a last part of a row of >= 8 columns: its last 8 (some stored twice, the same bits) */
      const int64_t iw = w - i < 8 && w >= 8 ? w - 8 : i, cols = w - iw < 8 ? w - iw : 8;
      __m128i half[C0];
      for (int j = 0; j < C0; j++) {
        const int64_t ch = cb * C0 + j;
        const uint16_t *src = base + (size_t)ch * g->cstride + (size_t)iw;
        if (ch >= c) {
          half[j] = _mm_setzero_si128();
        } else if (cols == 8) {
          half[j] = _mm_loadu_si128((const __m128i *)src);
        } else {
          uint16_t t[8] = {0};
          memcpy(t, src, (size_t)cols * sizeof *t);
          half[j] = _mm_loadu_si128((const __m128i *)t);
        }
      }
      __m256i r[8];
      for (int j = 0; j < 8; j++)
        r[j] = _mm256_set_m128i(half[j + 8], half[j]);
      transpose8x16(r);
      for (int k = 0; k < cols; k++)
        _mm256_storeu_si256((__m256i *)(out + (size_t)(iw + k) * C0), r[k]);
    }
  }
}

int AVX2 rt_transdata_x86(const om_task *task, const rt_args *args, uint64_t lo, uint64_t hi) {
  const om_tensor *s = args->desc[OM_TRANSDATA_T_SRC], *d = args->desc[OM_TRANSDATA_T_DST];
  const void *sp = args->data[OM_TRANSDATA_T_SRC];
  void *dp = args->data[OM_TRANSDATA_T_DST];
  if (s->layout != LAYOUT_ND && d->layout == LAYOUT_ND) {
    transdata_to_nd(s, d, sp, dp, lo, hi);
    return 1;
  }
  if (s->layout != LAYOUT_ND || d->layout == LAYOUT_ND) return 0;
  const int sf16 = s->dtype == DT_FLOAT16, df16 = d->dtype == DT_FLOAT16;
  rt_td_geom g;
  rt_td_geom_init(d, &g);
  if (sf16 && df16) {
    transdata_to_5hd_u16(&g, (const uint16_t *)sp, (uint16_t *)dp, lo, hi);
    return 1;
  }
  const int64_t c = g.c, h = g.h, w = g.w, c1 = g.c1;
  for (uint64_t row = lo; row < hi; row++) {
    const int64_t ih = (int64_t)row % h, cb = (int64_t)row / h % c1, img = (int64_t)row / h / c1;
    const size_t out = (size_t)row * (size_t)w * C0, base = rt_td_nd_base(&g, img) + (size_t)(ih * w);
    for (int64_t iw = 0; iw < w; iw += 8) { /* the last columns as a partial transpose */
      const int64_t cols = w - iw < 8 ? w - iw : 8;
      for (int half = 0; half < 2; half++) {
        __m256 r[8];
        for (int j = 0; j < 8; j++) {
          int64_t ch = cb * C0 + half * 8 + j;
          r[j] = ch < c ? ld_part(sp, sf16, base + (size_t)ch * g.cstride + (size_t)iw, cols)
                        : _mm256_setzero_ps();
        }
        if (cb * C0 + half * 8 < c) transpose8(r); /* else padding channels only: zeros */
        for (int j = 0; j < cols; j++)
          st8h(dp, df16, out + (size_t)(iw + j) * C0 + (size_t)half * 8, r[j]);
      }
    }
  }
  return 1;
}

/* --- COPY_SLICE's 16-bit lanes: one masked load and store per pixel (the
 * mask keeps the other lanes of both pixels untouched, and no byte past
 * either tensor is read or written) */

__attribute__((target("avx512f,avx512bw,avx512vl"))) void
rt_copy_lanes16_avx512bw(uint16_t *d, const uint16_t *s, int64_t lanes, int64_t hw) {
  const __mmask16 k = (__mmask16)((1u << lanes) - 1);
  for (int64_t p = 0; p < hw; p++)
    _mm256_mask_storeu_epi16(d + p * C0, k, _mm256_maskz_loadu_epi16(k, s + p * C0));
}

/* --- f16 <-> f32 runs */

int AVX2 rt_convert_x86(void *dst, int dd, size_t di, const void *src, int sd, size_t si, size_t n) {
  if (dd == sd || (dd != DT_FLOAT16 && dd != DT_FLOAT32) || (sd != DT_FLOAT16 && sd != DT_FLOAT32)) return 0;
  const int sf16 = sd == DT_FLOAT16, df16 = dd == DT_FLOAT16;
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    st8h(dst, df16, di + i, ld8h(src, sf16, si + i));
  for (; i < n; i++)
    rt_put(dst, dd, di + i, rt_get(src, sd, si + i));
  return 1;
}

#endif
