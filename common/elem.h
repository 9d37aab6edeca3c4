/* elem.h - one element of a tensor in any numeric storage dtype, read and
 * written through the two compute types the reference evaluator (ir/eval*.c)
 * and the runtime's dtype-generic kernels (reductions, indexing) share:
 * double for every value, int64 for the integer dtypes and bool.
 *
 *   elem_get      any numeric dtype as a double (u64 above 2^53 rounds);
 *   elem_put      a double stored in any dtype: floats rounded once to
 *                 nearest even (f16 too: common/fp16.h's round-to-odd step),
 *                 bool v != 0, integers truncated toward zero, saturated to
 *                 int64 (NaN -> 0), then wrapped to the dtype's width;
 *   elem_get_int  integers sign- or zero-extended to int64 (u64: its bits),
 *                 bool 0 or 1 (floats read 0: elem_get is their reader);
 *   elem_put_int  an int64 stored in any dtype: integers wrapped to the
 *                 dtype's width (two's complement), bool v != 0, floats
 *                 converted from the int64.
 * An unknown dtype reads 0 and writes nothing. These are the only copies of
 * the per-dtype switch, header-only so that libomrt, which links nothing of
 * the compiler, uses them too. Kernels call them in inner loops with a
 * dtype fixed per task: elem_get inlines only its f32 case (the rest is
 * elem_get_slow), so that such a loop stays small enough for the compiler
 * to inline and unswitch on the dtype; the integer switches are small.
 */
#ifndef COMMON_ELEM_H
#define COMMON_ELEM_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "common/fp16.h"
#include "common/types.h"

static inline int elem_is_float(int dt) { return dt == DT_FLOAT16 || dt == DT_FLOAT32 || dt == DT_DOUBLE; }

/* Float to integer as C truncation, saturating instead of undefined (NaN -> 0). */
static inline int64_t elem_trunc_i64(double v) {
  if (isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return INT64_MAX;
  if (v <= -9.2233720368547758e18) return INT64_MIN;
  return (int64_t)v;
}

/* elem_get's dtypes other than f32, out of line (see the top). */
__attribute__((noinline, unused)) static double elem_get_slow(const void *p, int dt, size_t i) {
  switch (dt) {
  case DT_FLOAT16: return half_to_float(((const uint16_t *)p)[i]);
  case DT_DOUBLE: return ((const double *)p)[i];
  case DT_INT64: return (double)((const int64_t *)p)[i];
  case DT_INT32: return ((const int32_t *)p)[i];
  case DT_INT16: return ((const int16_t *)p)[i];
  case DT_INT8: return ((const int8_t *)p)[i];
  case DT_UINT8: return ((const uint8_t *)p)[i];
  case DT_BOOL: return ((const uint8_t *)p)[i] != 0;
  case DT_UINT16: return ((const uint16_t *)p)[i];
  case DT_UINT32: return ((const uint32_t *)p)[i];
  case DT_UINT64: return (double)((const uint64_t *)p)[i];
  default: return 0;
  }
}

static inline double elem_get(const void *p, int dt, size_t i) {
  return dt == DT_FLOAT32 ? ((const float *)p)[i] : elem_get_slow(p, dt, i);
}

static inline int64_t elem_get_int(const void *p, int dt, size_t i) {
  switch (dt) {
  case DT_INT64:
  case DT_UINT64: return ((const int64_t *)p)[i];
  case DT_INT32: return ((const int32_t *)p)[i];
  case DT_UINT32: return ((const uint32_t *)p)[i];
  case DT_INT16: return ((const int16_t *)p)[i];
  case DT_UINT16: return ((const uint16_t *)p)[i];
  case DT_INT8: return ((const int8_t *)p)[i];
  case DT_UINT8: return ((const uint8_t *)p)[i];
  case DT_BOOL: return ((const uint8_t *)p)[i] != 0;
  default: return 0; /* floats: read them with elem_get */
  }
}

static inline void elem_put_int(void *p, int dt, size_t i, int64_t v) {
  switch (dt) {
  case DT_INT64:
  case DT_UINT64: ((int64_t *)p)[i] = v; break;
  case DT_INT32:
  case DT_UINT32: ((uint32_t *)p)[i] = (uint32_t)(uint64_t)v; break;
  case DT_INT16:
  case DT_UINT16: ((uint16_t *)p)[i] = (uint16_t)(uint64_t)v; break;
  case DT_INT8:
  case DT_UINT8: ((uint8_t *)p)[i] = (uint8_t)(uint64_t)v; break;
  case DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
  case DT_FLOAT32: ((float *)p)[i] = (float)v; break;
  case DT_FLOAT16: ((uint16_t *)p)[i] = float_to_half((float)v); break;
  case DT_DOUBLE: ((double *)p)[i] = (double)v; break;
  default: break;
  }
}

static inline void elem_put(void *p, int dt, size_t i, double v) {
  switch (dt) {
  case DT_FLOAT32: ((float *)p)[i] = (float)v; break;
  case DT_FLOAT16: ((uint16_t *)p)[i] = float_to_half(double_to_float_odd(v)); break;
  case DT_DOUBLE: ((double *)p)[i] = v; break;
  case DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
  default: elem_put_int(p, dt, i, elem_trunc_i64(v)); break;
  }
}

#endif
