/* elem.h - what the runtime adds to common/elem.h (one element of any
 * dtype through double or int64, shared with the compiler's evaluator):
 * dtype classes, and rt_d2h, which rounds a double to the nearest half (ties
 * to even) in one step with the branch-free rt_f2h the vector lanes use: the
 * double is first rounded to float with round-to-odd, which keeps the
 * information a second rounding needs (float has 13 more significand bits
 * than half), then rt_f2h rounds to nearest even. Casting double -> float ->
 * half with two ordinary roundings would round some ties twice.
 */
#ifndef RUNTIME_ELEM_H
#define RUNTIME_ELEM_H

#include <stdint.h>

#include "common/elem.h"
#include "runtime/kernels.h"

static inline int rt_dtype_is_unsigned(int dt) {
  return dt == DT_UINT8 || dt == DT_UINT16 || dt == DT_UINT32 || dt == DT_UINT64 || dt == DT_BOOL;
}
static inline int rt_dtype_is_int(int dt) {
  return dt == DT_INT8 || dt == DT_INT16 || dt == DT_INT32 || dt == DT_INT64 || dt == DT_UINT8 ||
         dt == DT_UINT16 || dt == DT_UINT32 || dt == DT_UINT64;
}

static inline uint16_t rt_d2h(double d) { return rt_f2h(double_to_float_odd(d)); }

#endif
