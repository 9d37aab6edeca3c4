/* quant.h - the arithmetic of the quantized ops, one definition for the
 * reference evaluator (ir/eval_quant.c) and the constant folding of the
 * qfold pass (passes/qfold.c, through the evaluator); the vector expansion
 * (ir/vexpand.c) builds the same steps as vector instructions, so that all
 * of them compute the same bits (ir/ops.def states the ops); q_requant is
 * also libomrt's QCONV2D kernels' (runtime/kernels_qconv*.c), q_eltwise
 * its QELTWISE kernels' (runtime/kernels_qeltwise.c).
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

/* DynamicQuantizeLinear's parameters from the range of x: lo and hi are
 * the smallest and largest element with 0 included (a NaN in x makes both
 * NaN), +0 for a zero extremum (lo + 0.0f: the sign of a zero does not
 * reach the results). scale = (hi - lo) / 255 in f32, zp = q_quantize(-lo,
 * scale, 0, 0, 255): saturate(round(-lo / scale)), 0 when the quotient is
 * NaN (an all-zero x: scale 0). These are the f32 steps of ONNX's
 * definition (Min / Max with 0, Sub, Div, Neg, Div, Round, Clip, Cast), and
 * y = q_quantize(x, scale, zp, 0, 255) per element. */
static inline void q_dynamic_params(float lo, float hi, float *scale_out, int32_t *zp_out) {
  lo = lo + 0.0f, hi = hi + 0.0f;
  const float s = (hi - lo) / 255.0f;
  *scale_out = s;
  *zp_out = q_quantize(-lo, s, 0, 0, 255);
}

/* The smallest (max = 0) or largest (max = 1) of acc and v[0..n), NaN when
 * any of them is NaN. */
static inline float q_extreme(const float *v, int64_t n, float acc, int max) {
  for (int64_t i = 0; i < n; i++)
    acc = acc != acc || v[i] != v[i] ? NAN : max ? (v[i] > acc ? v[i] : acc) : (v[i] < acc ? v[i] : acc);
  return acc;
}

/* The requantization of an int8 convolution (the QConv op, ops.def; the
 * QCONV2D task, om_format.h): the int32 sum acc times the f32 multiplier
 * mult (= s_x * s_w / s_y, each product rounded to f32), rounded half to
 * even, clamped to [-2^24, 2^24] (a NaN product counts -2^24), plus the
 * output zero point zp, clamped to [lo, hi]. The kernels' SIMD paths do
 * these same f32 operations in this order (convert, multiply, round, max
 * with -2^24 (which returns -2^24 for NaN, as x86's maxps does), min with
 * 2^24, convert, add, clamp). */
static inline int32_t q_requant(int32_t acc, float mult, int32_t zp, int32_t lo, int32_t hi) {
  float t = nearbyintf((float)acc * mult);
  t = t > -16777216.0f ? t : -16777216.0f;
  t = t < 16777216.0f ? t : 16777216.0f;
  return q_clamp((int64_t)(int32_t)t + zp, lo, hi);
}

/* DequantizeLinear of one element: (x - zp) * s in f32. */
static inline float q_dequantize(int32_t x, int32_t zp, float s) { return (float)((int64_t)x - zp) * s; }

/* The int8 elementwise op (the QEltwise op, ops.def; the QELTWISE task,
 * om_tasks.h): DequantizeLinear of a and of b, their f32 sum (mul = 0) or
 * product (mul = 1), QuantizeLinear with y's scale and zero point into [lo,
 * hi] (a Relu or Clip after the op folded into lo and hi: the
 * quantization is monotonic). The same f32 operations as the float graph
 * DequantizeLinear -> Add | Mul -> QuantizeLinear (and its vector
 * program), so the bits are the same; the kernels' SIMD paths do them in
 * this order too. */
static inline int32_t q_eltwise(int32_t a, int32_t azp, float as, int32_t b, int32_t bzp, float bs, int mul,
                                float ys, int32_t yzp, int32_t lo, int32_t hi) {
  const float va = q_dequantize(a, azp, as), vb = q_dequantize(b, bzp, bs);
  return q_quantize(mul ? va * vb : va + vb, ys, yzp, lo, hi);
}

#endif
