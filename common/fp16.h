/* fp16.h - IEEE binary16 <-> binary32 conversion, portable C.
 * float_to_half rounds to nearest even, overflows to inf, keeps NaN a NaN, and
 * produces subnormals; half_to_float is exact. Hot loops in the runtime may use
 * F16C instead; these are the reference both must agree with bit for bit.
 * floats_to_halves converts an array with the same results, written without
 * branches so compilers vectorize it (float_to_half's rounding branch is a
 * coin toss on real weights and mispredicts half the time). */
#ifndef COMMON_FP16_H
#define COMMON_FP16_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline float fp16_bits_to_float_(uint32_t bits) {
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static inline float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);
  } else if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else { /* subnormal: value = man * 2^-24 */
      float f = (float)man * 5.9604644775390625e-8f;
      memcpy(&bits, &f, 4);
      bits |= sign;
    }
  } else {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  }
  return fp16_bits_to_float_(bits);
}

static inline uint16_t float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) /* inf or nan */
    return (uint16_t)(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u | ((absx >> 13) & 0x3ffu) : 0));
  if (absx >= 0x477ff000u) /* rounds to >= 65520: inf */
    return (uint16_t)(sign | 0x7c00u);
  if (absx < 0x38800000u) { /* below the smallest normal half (2^-14): subnormal or zero */
    if (absx < 0x33000000u) return (uint16_t)sign; /* < 2^-25: rounds to zero */
    uint32_t e = absx >> 23, m = (absx & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - e; /* 14..24 */
    uint32_t h = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) h++;
    return (uint16_t)(sign | h);
  }
  uint32_t h = ((absx >> 13) - (112u << 10));
  uint32_t rem = absx & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++;
  return (uint16_t)(sign | h);
}

/* dst[i] = float_to_half(src[i]) for i < n; the arrays must not overlap.
 * Each case is computed for every element and the right one picked by masks:
 * normal halves drop 13 bits with round to nearest even (adding 0xfff plus
 * the lowest kept bit carries into the kept bits exactly when the dropped
 * ones are above half, or at half with the kept value odd); for subnormal
 * halves, adding 0.5f (whose ulp is 2^-24, the subnormal half's step) leaves
 * the value rounded to nearest even in the low mantissa bits; results past
 * 65504 that round up become inf; a NaN keeps its top payload bits and gets
 * the quiet bit. tests/unit/test_fp16.c checks it against float_to_half. */
static inline void floats_to_halves(uint16_t *restrict dst, const float *restrict src, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint32_t x, sub;
    float s;
    memcpy(&x, &src[i], 4);
    uint32_t sign = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
    uint32_t normal = (a + 0xfffu + ((a >> 13) & 1u) - (112u << 23)) >> 13;
    memcpy(&s, &a, 4);
    s += 0.5f;
    memcpy(&sub, &s, 4);
    sub -= 0x3f000000u;
    uint32_t nan = 0x7e00u | ((a >> 13) & 0x3ffu);
    uint32_t is_sub = 0u - ((int32_t)a < 0x38800000), is_inf = 0u - ((int32_t)a >= 0x477ff000),
             is_nan = 0u - ((int32_t)a > 0x7f800000);
    uint32_t h = (sub & is_sub) | (normal & ~is_sub);
    h = (0x7c00u & is_inf) | (h & ~is_inf);
    h = (nan & is_nan) | (h & ~is_nan);
    dst[i] = (uint16_t)(sign | h);
  }
}

/* h = the fp16 of finite or infinite f, clipped as ATC's --is_weight_clip=1
 * stores weights: a finite f that rounded to an infinity (|f| >= 65520)
 * becomes the largest finite half of its sign, +-65504; infinities and NaN
 * stay. */
static inline uint16_t half_clipped(uint16_t h, float f) {
  return (h & 0x7fffu) == 0x7c00u && f - f == 0.0f ? (uint16_t)((h & 0x8000u) | 0x7bffu) : h;
}

/* floats_to_halves, each result then clipped (half_clipped). */
static inline void floats_to_halves_clipped(uint16_t *restrict dst, const float *restrict src, size_t n) {
  floats_to_halves(dst, src, n);
  for (size_t i = 0; i < n; i++)
    dst[i] = half_clipped(dst[i], src[i]);
}

/* d rounded to float with round-to-odd (inexact results get an odd last
 * bit), so that a second rounding to half (float_to_half) rounds d to the
 * nearest half in one step: float keeps 13 more significand bits than half,
 * and the odd bit records that d was inexact. */
static inline float double_to_float_odd(double d) {
  float f = (float)d;
  if ((double)f == d || d != d || isinf(f)) return f;
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if (fabs((double)f) > fabs(d)) u--; /* toward zero: one step down in magnitude */
  u |= 1;
  memcpy(&f, &u, sizeof f);
  return f;
}

#endif
