/* dtype_cvt.h - element conversion between every dtype, the storage dtypes
 * (common/types.h: bf16, the float8s, float4 e2m1, the 4- and 2-bit
 * integers) included, exactly as ONNX's Cast defines it. The one copy: the
 * frontend's tensor reader, the reference evaluator (constant folding) and
 * libomrt's Convert kernel (TRANSDATA between ND tensors) all call it, so it
 * is header-only (libomrt links nothing of the compiler).
 *
 *   cvt_get   element i of any dtype as a double (exact for every dtype but
 *             i64 / u64 above 2^53); NaN and infinities as they are;
 *   cvt_put   a double stored as element i of any dtype:
 *             - f32 / f16 / f64 / bf16 / the float8s: rounded once to
 *               nearest even; beyond the largest finite value (after
 *               rounding) a float8 gives +-max when `saturate` is set, else
 *               +-inf (e5m2) or NaN (the others); an infinite input the same
 *               (f32 / f16 / bf16 / f64 keep it); NaN stays NaN (e4m3fn and
 *               e5m2 keep its sign; the fnuz types have the one NaN 0x80 and
 *               no -0);
 *             - float4 e2m1: nearest even, always saturating (+-6); NaN gives
 *               0x8 (-0: the format has no NaN), as ONNX's reference does;
 *             - e8m0 (a power of two 2^(e-127), e = 0..254, 0xff NaN, no
 *               sign): the exponent of |v| (the power of two at or below
 *               it), raised by one when |v| is not a power of two
 *               (`round_mode` CVT_ROUND_UP, ONNX's default), never
 *               (CVT_ROUND_DOWN), or when its mantissa is 1.5 or more
 *               (CVT_ROUND_NEAREST: ties up); 0 and what lies below 2^-127
 *               give code 0; past 254, and for an infinity, 254 when
 *               `saturate` is set, else 0xff; NaN 0xff;
 *             - integers (sub-byte ones too): truncated toward zero,
 *               saturated to int64 (NaN 0), then wrapped to the width (two's
 *               complement), as ONNX's Cast does (QuantizeLinear saturates
 *               before it converts); bool v != 0;
 *   cvt_run   n elements converted (both offsets in elements; one storage
 *             dtype on both sides copies the codes as they are). A packed
 *             destination (4- or 2-bit) is written a byte at a time: dst_off
 *             must be a multiple of its elements per byte, the bytes the run
 *             covers are rewritten whole and unused high bits of the last
 *             one are zero. So blocks that split a tensor on such multiples
 *             never write one byte twice.
 * Packing is ONNX's: element 0 in a byte's lowest bits.
 */
#ifndef COMMON_DTYPE_CVT_H
#define COMMON_DTYPE_CVT_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/elem.h"
#include "common/types.h"

enum { CVT_ROUND_UP = 0, CVT_ROUND_DOWN = 1, CVT_ROUND_NEAREST = 2 };

/* A small float format: e exponent bits, m mantissa bits, its bias, and how
 * it spends the top codes. */
enum { CVT_IEEE, CVT_FN, CVT_FNUZ, CVT_FINITE };
typedef struct cvt_fmt {
  int e, m, bias, kind;
} cvt_fmt;

static inline cvt_fmt cvt_fmt_of(int dt) {
  switch (dt) {
  case DT_BFLOAT16: return (cvt_fmt){8, 7, 127, CVT_IEEE};
  case DT_FLOAT8E4M3FN: return (cvt_fmt){4, 3, 7, CVT_FN};
  case DT_FLOAT8E4M3FNUZ: return (cvt_fmt){4, 3, 8, CVT_FNUZ};
  case DT_FLOAT8E5M2: return (cvt_fmt){5, 2, 15, CVT_IEEE};
  case DT_FLOAT8E5M2FNUZ: return (cvt_fmt){5, 2, 16, CVT_FNUZ};
  default: return (cvt_fmt){2, 1, 1, CVT_FINITE}; /* DT_FLOAT4E2M1 */
  }
}

/* The largest finite value of f: every code but the top exponent's (IEEE),
 * but the all-ones code (FN), every code (FNUZ, FINITE). */
static inline double cvt_fmt_max(cvt_fmt f) {
  int top = (1 << f.e) - 1 - f.bias; /* the top exponent's power */
  if (f.kind == CVT_IEEE) return ldexp(2.0 - ldexp(1.0, -f.m), top - 1);
  if (f.kind == CVT_FN) return ldexp(2.0 - ldexp(1.0, 1 - f.m), top);
  return ldexp(2.0 - ldexp(1.0, -f.m), top);
}

static inline uint32_t cvt_fmt_nan(cvt_fmt f, uint32_t sign) {
  uint32_t ones = (1u << (f.e + f.m)) - 1;
  switch (f.kind) {
  case CVT_IEEE: return sign | (ones >> f.m << f.m) | (1u << (f.m - 1)); /* quiet */
  case CVT_FN: return sign | ones;
  case CVT_FNUZ: return 1u << (f.e + f.m);
  default: return 1u << (f.e + f.m); /* float4: -0, as ONNX's reference gives */
  }
}

/* v rounded to nearest even in f, as its bits. */
static inline uint32_t cvt_float_encode(double v, cvt_fmt f, int saturate) {
  const uint32_t sign = signbit(v) ? 1u << (f.e + f.m) : 0;
  const double max = cvt_fmt_max(f);
  if (isnan(v)) return cvt_fmt_nan(f, sign);
  double a = fabs(v);
  if (f.kind == CVT_FINITE) saturate = 1;
  const int emin = 1 - f.bias;
  if (!isinf(a)) {
    int e = a > 0 ? ilogb(a) : emin;
    if (e < emin) e = emin;
    a = nearbyint(ldexp(a, f.m - e)); /* an integer count of quanta 2^(e-m): exact scaling */
    a = ldexp(a, e - f.m);
  }
  if (a > max) {
    if (saturate)
      a = max;
    else if (f.kind == CVT_IEEE)
      return sign | (((1u << f.e) - 1) << f.m);
    else
      return cvt_fmt_nan(f, sign);
  }
  if (a == 0) return f.kind == CVT_FNUZ ? 0 : sign;
  uint32_t bits;
  if (a < ldexp(1.0, emin)) { /* subnormal: exponent field 0 */
    bits = (uint32_t)ldexp(a, f.m - emin);
  } else {
    int e = ilogb(a);
    bits = (uint32_t)(e + f.bias) << f.m | (uint32_t)(ldexp(a, f.m - e) - ldexp(1.0, f.m));
  }
  return sign | bits;
}

static inline double cvt_float_decode(uint32_t bits, cvt_fmt f) {
  const uint32_t sign = bits >> (f.e + f.m) & 1, ex = bits >> f.m & ((1u << f.e) - 1),
                 man = bits & ((1u << f.m) - 1);
  if (f.kind == CVT_FNUZ && bits == 1u << (f.e + f.m)) return NAN;
  if (f.kind == CVT_FN && ex == (1u << f.e) - 1 && man == (1u << f.m) - 1) return sign ? -NAN : NAN;
  if (f.kind == CVT_IEEE && ex == (1u << f.e) - 1)
    return man ? (sign ? -NAN : NAN) : sign ? -INFINITY : INFINITY;
  double a =
      ex ? ldexp(1.0 + ldexp((double)man, -f.m), (int)ex - f.bias) : ldexp((double)man, 1 - f.bias - f.m);
  return sign ? -a : a;
}

static inline uint8_t cvt_e8m0_encode(double v, int saturate, int round_mode) {
  if (isnan(v)) return 0xff;
  if (isinf(v)) return saturate ? 0xfe : 0xff;
  if (v == 0) return 0;
  int x;
  double frac = 2 * frexp(fabs(v), &x) - 1; /* |v| = (1 + frac) * 2^(x-1), 0 <= frac < 1 */
  int e = x - 1 + 127;
  if ((round_mode == CVT_ROUND_UP && frac > 0) || (round_mode == CVT_ROUND_NEAREST && frac >= 0.5)) e++;
  if (e < 0) return 0;
  if (e > 0xfe) return saturate ? 0xfe : 0xff;
  return (uint8_t)e;
}

static inline double cvt_e8m0_decode(uint8_t b) { return b == 0xff ? NAN : ldexp(1.0, (int)b - 127); }

/* The sub-byte integers: bits per element and signedness (0 bits: not one). */
static inline int cvt_packed_bits(int dt) {
  return dt == DT_INT4 || dt == DT_UINT4 ? 4 : dt == DT_INT2 || dt == DT_UINT2 ? 2 : 0;
}

static inline uint32_t cvt_packed_code(const void *p, int bits, size_t i) {
  const size_t per = 8 / (size_t)bits;
  return ((const uint8_t *)p)[i / per] >> (i % per * (size_t)bits) & ((1u << bits) - 1);
}

static inline double cvt_get(const void *p, int dt, size_t i) {
  switch (dt) {
  case DT_BFLOAT16: return cvt_float_decode(((const uint16_t *)p)[i], cvt_fmt_of(dt));
  case DT_FLOAT8E4M3FN:
  case DT_FLOAT8E4M3FNUZ:
  case DT_FLOAT8E5M2:
  case DT_FLOAT8E5M2FNUZ: return cvt_float_decode(((const uint8_t *)p)[i], cvt_fmt_of(dt));
  case DT_FLOAT8E8M0: return cvt_e8m0_decode(((const uint8_t *)p)[i]);
  case DT_FLOAT4E2M1: return cvt_float_decode(cvt_packed_code(p, 4, i), cvt_fmt_of(dt));
  case DT_UINT4:
  case DT_UINT2: return cvt_packed_code(p, cvt_packed_bits(dt), i);
  case DT_INT4:
  case DT_INT2: {
    int bits = cvt_packed_bits(dt);
    int32_t c = (int32_t)cvt_packed_code(p, bits, i);
    return c >= 1 << (bits - 1) ? c - (1 << bits) : c;
  }
  default: return elem_get(p, dt, i);
  }
}

/* The code of v in a packed dtype (4 or 2 bits, not yet shifted). */
static inline uint32_t cvt_packed_encode(int dt, double v, int saturate) {
  if (dt == DT_FLOAT4E2M1) return cvt_float_encode(v, cvt_fmt_of(dt), saturate);
  return (uint32_t)(uint64_t)elem_trunc_i64(v) & ((1u << cvt_packed_bits(dt)) - 1);
}

/* Element i of a byte-sized or wider dtype (not a packed one). */
static inline void cvt_put(void *p, int dt, size_t i, double v, int saturate, int round_mode) {
  switch (dt) {
  case DT_BFLOAT16: ((uint16_t *)p)[i] = (uint16_t)cvt_float_encode(v, cvt_fmt_of(dt), 0); break;
  case DT_FLOAT8E4M3FN:
  case DT_FLOAT8E4M3FNUZ:
  case DT_FLOAT8E5M2:
  case DT_FLOAT8E5M2FNUZ: ((uint8_t *)p)[i] = (uint8_t)cvt_float_encode(v, cvt_fmt_of(dt), saturate); break;
  case DT_FLOAT8E8M0: ((uint8_t *)p)[i] = cvt_e8m0_encode(v, saturate, round_mode); break;
  default: elem_put(p, dt, i, v); break;
  }
}

static inline int cvt_is_packed(int dt) { return dtype_bits(dt) > 0 && dtype_bits(dt) < 8; }

static inline void cvt_run(void *dst, int ddt, size_t dst_off, const void *src, int sdt, size_t src_off,
                           size_t n, int saturate, int round_mode) {
  const int same = sdt == ddt && dtype_is_storage(sdt); /* a copy: the codes as they are */
  if (same && !cvt_is_packed(ddt)) {
    const size_t es = (size_t)dtype_bits(ddt) / 8;
    memmove((uint8_t *)dst + dst_off * es, (const uint8_t *)src + src_off * es, n * es);
    return;
  }
  if (!cvt_is_packed(ddt)) {
    for (size_t k = 0; k < n; k++)
      cvt_put(dst, ddt, dst_off + k, cvt_get(src, sdt, src_off + k), saturate, round_mode);
    return;
  }
  const int bits = dtype_bits(ddt);
  const size_t per = 8 / (size_t)bits;
  uint8_t *out = (uint8_t *)dst + dst_off / per;
  memset(out, 0, (n + per - 1) / per);
  for (size_t k = 0; k < n; k++) {
    uint32_t code = same ? cvt_packed_code(src, bits, src_off + k)
                         : cvt_packed_encode(ddt, cvt_get(src, sdt, src_off + k), saturate);
    out[k / per] |= (uint8_t)(code << (k % per * bits));
  }
}

#endif
