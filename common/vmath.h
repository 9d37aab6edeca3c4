/* vmath.h - the vector unit's transcendental instructions on float lanes,
 * EXP (om_vexp), SIGMOID (om_vsigmoid) and ERF (om_verf): each one fixed sequence of float
 * operations, so every executor (the interpreter, runtime/vprog_exec.c and
 * its FMA build in kernels_vector_x86.c, and the JIT's generated code,
 * runtime/jit/jit_emit.c) computes the same bits.
 *
 * The NPU's vector exp and sigmoid are its own instructions with their own
 * accuracy, not a libm; ours are these functions. Every step is one IEEE
 * float operation rounded to nearest; a*b+c is never contracted (the
 * project builds with -ffp-contract=off, the JIT emits plain fmul / fadd)
 * and is one rounding only where written as fmaf (the JIT: llvm.fma).
 *
 * The fused activations of a MATMUL epilogue (om_act GELU, GELU_TANH,
 * SILU: om_vgelu, om_vgelu_tanh, om_vsilu) are fixed sequences over
 * om_verf and om_vsigmoid, written once below; runtime/mm_act_x86.inc
 * repeats them step for step on 8 and 16 lanes.
 *
 * om_vexp: within 1 ulp of the exact exp over the whole float range
 * (tests/unit/test_vexp.c: 0.96 ulp at worst), with IEEE results at the
 * edges: +inf above ~88.72, 0 below ~-103.97, subnormal results rounded
 * once, NaN in -> the same NaN out.
 * om_vexp's steps:
 *   1. c = x clamped to [VEXP_LO, VEXP_HI]; a NaN goes to VEXP_LO (its
 *      result is replaced in step 6), so no step sees a NaN.
 *   2. k = round-to-nearest(c * log2(e)): t = c * VEXP_LOG2E + VEXP_SHIFT
 *      (1.5 * 2^23 leaves the integer in t's low bits), kf = t - VEXP_SHIFT,
 *      k = (int32)kf, in [-150, 128].
 *   3. r = (c - kf * VEXP_LN2_HI) - kf * VEXP_LN2_LO (Cody-Waite: LN2_HI
 *      has 9 significant bits, so kf * LN2_HI is exact), |r| <~ ln2 / 2.
 *   4. p = degree-5 polynomial in r (Horner, VEXP_P0 first),
 *      y = (p * (r * r) + r) + 1 ~ e^r (Cephes' expf coefficients).
 *   5. e^x = y * 2^k, as (y * 2^k1) * 2^k2 with k2 = k >> 1 (arithmetic),
 *      k1 = k - k2: both factors are normal floats for every k in range,
 *      the first product is exact, and only the second rounds, so
 *      subnormal and overflowing results round once, correctly.
 *   6. x NaN -> x.
 */
#ifndef COMMON_VMATH_H
#define COMMON_VMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define VEXP_LO (-104.0f)
#define VEXP_HI 89.0f
#define VEXP_LOG2E 1.44269504088896341f
#define VEXP_SHIFT 12582912.0f /* 1.5 * 2^23 */
#define VEXP_LN2_HI 0.693359375f
#define VEXP_LN2_LO (-2.12194440e-4f)
#define VEXP_P0 1.9875691500e-4f
#define VEXP_P1 1.3981999507e-3f
#define VEXP_P2 8.3334519073e-3f
#define VEXP_P3 4.1665795894e-2f
#define VEXP_P4 1.6666665459e-1f
#define VEXP_P5 5.0000001201e-1f

/* 2^k for k in [-126, 127]. */
static inline float vexp_pow2(int32_t k) {
  uint32_t bits = (uint32_t)(k + 127) << 23;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static inline float om_vexp(float x) {
  float c = !(x >= VEXP_LO) ? VEXP_LO : x;
  c = c > VEXP_HI ? VEXP_HI : c;
  float t = c * VEXP_LOG2E + VEXP_SHIFT;
  float kf = t - VEXP_SHIFT;
  int32_t k = (int32_t)kf;
  float r = (c - kf * VEXP_LN2_HI) - kf * VEXP_LN2_LO;
  float p = VEXP_P0;
  p = p * r + VEXP_P1;
  p = p * r + VEXP_P2;
  p = p * r + VEXP_P3;
  p = p * r + VEXP_P4;
  p = p * r + VEXP_P5;
  float y = (p * (r * r) + r) + 1.0f;
  int32_t k2 = k >> 1, k1 = k - k2;
  float e = (y * vexp_pow2(k1)) * vexp_pow2(k2);
  return x != x ? x : e;
}

/* om_vsigmoid: 1 / (1 + e^-x) as 0.5 + c * P(c^2) / Q(c^2) with c = x
 * clamped to [-VSIG_B, VSIG_B] (beyond it the float result is 0 or 1 to
 * within the error below) and P, Q degree-4 polynomials in c^2, fitted to
 * tanh(c / 2) / 2 (rational least squares, Lawson-weighted toward minimax:
 * 6.5e-9 in exact arithmetic), evaluated with FMA (Horner), the result
 * clamped to [0, 1]. Absolute error <= 2e-7 (tests/unit/test_vexp.c): it
 * is large relative to results below ~1e-4, which come out as multiples of
 * 2^-25 or 2^-24 (0 below x ~ -16.6), and the rounding noise is not
 * monotone at that scale, as with ONNX Runtime's logistic. NaN in, NaN out:
 * the clamps keep a NaN (their compares are false), the arithmetic carries
 * it. About 16 vector operations, against ~35 through om_vexp and a divide. */
#define VSIG_B 17.33f
#define VSIG_P0 2.499999851e-01f
#define VSIG_P1 8.372225799e-03f
#define VSIG_P2 5.489263640e-05f
#define VSIG_P3 8.167784671e-08f
#define VSIG_P4 1.347246880e-11f
#define VSIG_Q1 1.168221682e-01f
#define VSIG_Q2 1.621437026e-03f
#define VSIG_Q3 5.179401796e-06f
#define VSIG_Q4 3.106127799e-09f

static inline float om_vsigmoid(float x) {
  float c = -VSIG_B > x ? -VSIG_B : x;
  c = VSIG_B < c ? VSIG_B : c;
  float z = c * c;
  float p = fmaf(VSIG_P4, z, VSIG_P3);
  p = fmaf(p, z, VSIG_P2);
  p = fmaf(p, z, VSIG_P1);
  p = fmaf(p, z, VSIG_P0);
  float q = fmaf(VSIG_Q4, z, VSIG_Q3);
  q = fmaf(q, z, VSIG_Q2);
  q = fmaf(q, z, VSIG_Q1);
  q = fmaf(q, z, 1.0f);
  float s = (c * p) / q + 0.5f;
  s = 0.0f > s ? 0.0f : s; /* the rounding noise stays inside [0, 1] */
  return 1.0f < s ? 1.0f : s;
}

/* om_verf: erf(x) as c * P(c^2) / Q(c^2) with c = x clamped to
 * [-VERF_B, VERF_B] (erf(3.92) rounds to 1 in float) and P, Q degree-5
 * polynomials in c^2 fitted to erf(c) / c (rational least squares on
 * [0, VERF_B], Lawson-weighted toward minimax on the relative error:
 * 2.5e-8 in exact arithmetic), evaluated with FMA (Horner), the result
 * clamped to [-1, 1]. Within 6 ulp of the exact erf, absolute error <=
 * 3.4e-7 (tests/unit/test_vexp.c; libm's erff is within 1 ulp but is a
 * branchy scalar call, ~10x slower than these ~15 vector operations,
 * which made a GELU epilogue cost more than its MatMul). erf(-0) = -0;
 * NaN in, NaN out (the clamps' compares are false for a NaN). */
#define VERF_B 3.92f
#define VERF_P0 1.128379151e+00f
#define VERF_P1 1.890940408e-01f
#define VERF_P2 5.258923625e-02f
#define VERF_P3 3.713665105e-03f
#define VERF_P4 2.844668310e-04f
#define VERF_P5 2.069734562e-06f
#define VERF_Q1 5.009130871e-01f
#define VERF_Q2 1.135795671e-01f
#define VERF_Q3 1.486394929e-02f
#define VERF_Q4 1.151379305e-03f
#define VERF_Q5 3.827421652e-05f

static inline float om_verf(float x) {
  float c = -VERF_B > x ? -VERF_B : x;
  c = VERF_B < c ? VERF_B : c;
  float z = c * c;
  float p = fmaf(VERF_P5, z, VERF_P4);
  p = fmaf(p, z, VERF_P3);
  p = fmaf(p, z, VERF_P2);
  p = fmaf(p, z, VERF_P1);
  p = fmaf(p, z, VERF_P0);
  float q = fmaf(VERF_Q5, z, VERF_Q4);
  q = fmaf(q, z, VERF_Q3);
  q = fmaf(q, z, VERF_Q2);
  q = fmaf(q, z, VERF_Q1);
  q = fmaf(q, z, 1.0f);
  float s = (c * p) / q;
  s = -1.0f > s ? -1.0f : s;
  return 1.0f < s ? 1.0f : s;
}

/* om_vgelu: Gelu(x) = x/2 * (1 + erf(x / sqrt 2)) as h + h * e, h = x * 0.5
 * (exact), e = om_verf(x * VGELU_RSQRT2), one fmaf. Absolute error within
 * 1.75 * 2^-23 * max(1, |x|) on [-10, 10] (tests/unit/test_vexp.c: 1.46),
 * as for om_vgelu_tanh (1.54) and om_vsilu (1.49); like every erf form it
 * loses the relative accuracy of the tiny results below x ~ -3 (1 + e
 * cancels). */
#define VGELU_RSQRT2 0.707106781186547524f

static inline float om_vgelu(float x) {
  float h = x * 0.5f;
  return fmaf(h, om_verf(x * VGELU_RSQRT2), h);
}

/* om_vgelu_tanh: Gelu's tanh form x/2 * (1 + tanh(u)), u = sqrt(2/pi) * (x +
 * 0.044715 x^3), computed as x * sigmoid(2u) (the same function: 1 + tanh(u)
 * = 2 sigmoid(2u)), 2u = x * (VGELU_T1 + VGELU_T3 * x^2) with one fmaf; no
 * cancellation, so tiny results keep om_vsigmoid's accuracy. */
#define VGELU_T1 1.59576912160573071f   /* 2 sqrt(2/pi) */
#define VGELU_T3 0.0713548162726008338f /* 2 sqrt(2/pi) * 0.044715 */

static inline float om_vgelu_tanh(float x) {
  float u2 = x * fmaf(VGELU_T3, x * x, VGELU_T1);
  return x * om_vsigmoid(u2);
}

/* om_vsilu: SiLU (Swish) x * sigmoid(x). */
static inline float om_vsilu(float x) { return x * om_vsigmoid(x); }

#endif
