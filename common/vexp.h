/* vexp.h - the vector unit's exp for float lanes: one algorithm, so every
 * executor (the interpreter, runtime/vprog_exec.c, and the JIT's generated
 * code, runtime/jit/vprog_ir.c) computes the same bits.
 *
 * The NPU's vector exp is its own instruction with its own accuracy, not a
 * libm; ours is this function. Within 1 ulp of the exact exp over the
 * whole float range (tests/unit/test_vexp.c: 0.96 ulp at worst), with IEEE
 * results at the edges: +inf above ~88.72, 0 below ~-103.97, subnormal
 * results rounded once, NaN in -> the same NaN out.
 *
 * Steps, each one float operation rounded to nearest (no contraction into
 * FMA: the project builds with -ffp-contract=off, and the JIT emits plain
 * fmul / fadd), so the scalar C below and the JIT's vector IR agree:
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
#ifndef COMMON_VEXP_H
#define COMMON_VEXP_H

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

#endif
