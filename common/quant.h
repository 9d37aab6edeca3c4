/* quant.h - the arithmetic of the quantized ops, one definition for the
 * reference evaluator (ir/eval_quant.c) and the constant folding of the
 * qfold pass (passes/qfold.c, through the evaluator); the vector expansion
 * (ir/vexpand.c) builds the same steps as vector instructions, so that all
 * of them compute the same bits (ir/ops.def states the ops).
 *
 * Rounding is ONNX's: half to even (nearbyint under the default rounding
 * mode; no -ffast-math). Floats are IEEE single precision, every operation
 * rounded once (the build compiles with -ffp-contract=off: no fused
 * multiply-adds), so a SIMD kernel doing the same operations in the same
 * order gets the same results.
 */
#ifndef COMMON_QUANT_H
#define COMMON_QUANT_H

#include <math.h>
#include <stdint.h>

#include "types.h"

/* The range of the quantized dtype dt (i8, u8, i16, u16; i32 for the rest). */
static inline void q_range(int dt, int32_t *lo, int32_t *hi) {
  switch (dt) {
  case DT_INT8: *lo = -128, *hi = 127; break;
  case DT_UINT8: *lo = 0, *hi = 255; break;
  case DT_INT16: *lo = -32768, *hi = 32767; break;
  case DT_UINT16: *lo = 0, *hi = 65535; break;
  default: *lo = INT32_MIN, *hi = INT32_MAX; break;
  }
}

static inline int32_t q_clamp(int64_t v, int32_t lo, int32_t hi) {
  return v < lo ? lo : v > hi ? (int32_t)hi : (int32_t)v;
}

/* QuantizeLinear of one element: clamp(round(x / s) + zp, lo, hi), x / s in
 * f32; a NaN quotient counts 0 and one beyond 2^24 is 2^24 (already past
 * every quantized range), as the vector expansion (ir/vexpand.c) computes. */
static inline int32_t q_quantize(float x, float s, int32_t zp, int32_t lo, int32_t hi) {
  float t = nearbyintf(x / s);
  int32_t q = t != t ? 0 : t < -16777216.0f ? -16777216 : t > 16777216.0f ? 16777216 : (int32_t)t;
  return q_clamp((int64_t)q + zp, lo, hi);
}

/* DequantizeLinear of one element: (x - zp) * s in f32. */
static inline float q_dequantize(int32_t x, int32_t zp, float s) { return (float)((int64_t)x - zp) * s; }

#endif
