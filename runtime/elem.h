/* elem.h - one element of any numeric storage dtype, read and written
 * through the two compute types every vector-unit kernel uses: double for
 * floats (f16, f32, f64) and 64-bit integers for the integer dtypes and bool
 * (i8 i16 i32 i64 sign-extended, u8 u16 u32 u64 and bool zero-extended, both
 * held in an int64_t's bits).
 *
 * rt_d2h rounds a double to the nearest half (ties to even) in one step:
 * the double is first rounded to float with round-to-odd, which keeps the
 * information a second rounding needs (float has 13 more significand bits
 * than half), then rt_f2h rounds to nearest even. Casting double -> float ->
 * half with two ordinary roundings would round some ties twice.
 */
#ifndef RUNTIME_ELEM_H
#define RUNTIME_ELEM_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "runtime/kernels.h"

static inline int rt_dtype_is_float(int dt) {
  return dt == DT_FLOAT16 || dt == DT_FLOAT32 || dt == DT_DOUBLE;
}
static inline int rt_dtype_is_unsigned(int dt) {
  return dt == DT_UINT8 || dt == DT_UINT16 || dt == DT_UINT32 || dt == DT_UINT64 || dt == DT_BOOL;
}
static inline int rt_dtype_is_int(int dt) {
  return dt == DT_INT8 || dt == DT_INT16 || dt == DT_INT32 || dt == DT_INT64 || dt == DT_UINT8 ||
         dt == DT_UINT16 || dt == DT_UINT32 || dt == DT_UINT64;
}

static inline uint16_t rt_d2h(double d) { return rt_f2h(double_to_float_odd(d)); }

/* Element i of an integer or bool tensor. */
static inline int64_t rt_get_int(const void *p, int dt, size_t i) {
  switch (dt) {
  case DT_INT64:
  case DT_UINT64: return ((const int64_t *)p)[i];
  case DT_INT32: return ((const int32_t *)p)[i];
  case DT_UINT32: return ((const uint32_t *)p)[i];
  case DT_INT16: return ((const int16_t *)p)[i];
  case DT_UINT16: return ((const uint16_t *)p)[i];
  case DT_INT8: return ((const int8_t *)p)[i];
  case DT_BOOL: return ((const uint8_t *)p)[i] != 0;
  default: return ((const uint8_t *)p)[i]; /* u8 */
  }
}

static inline void rt_put_int(void *p, int dt, size_t i, int64_t v) {
  switch (dtype_size(dt)) {
  case 8: ((int64_t *)p)[i] = v; break;
  case 4: ((uint32_t *)p)[i] = (uint32_t)(uint64_t)v; break;
  case 2: ((uint16_t *)p)[i] = (uint16_t)(uint64_t)v; break;
  default: ((uint8_t *)p)[i] = dt == DT_BOOL ? v != 0 : (uint8_t)(uint64_t)v; break;
  }
}

/* Element i of any numeric tensor as a double (u64 above 2^53 rounds). */
static inline double rt_get_f64(const void *p, int dt, size_t i) {
  switch (dt) {
  case DT_FLOAT16: return rt_h2f(((const uint16_t *)p)[i]);
  case DT_FLOAT32: return ((const float *)p)[i];
  case DT_DOUBLE: return ((const double *)p)[i];
  case DT_UINT64: return (double)(uint64_t)rt_get_int(p, dt, i);
  default: return (double)rt_get_int(p, dt, i);
  }
}

/* Stores v into float tensor p (f16 rounded once, from the double). */
static inline void rt_put_f64(void *p, int dt, size_t i, double v) {
  switch (dt) {
  case DT_FLOAT16: ((uint16_t *)p)[i] = rt_d2h(v); break;
  case DT_FLOAT32: ((float *)p)[i] = (float)v; break;
  default: ((double *)p)[i] = v; break;
  }
}

#endif
