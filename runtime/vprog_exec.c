/* vprog_exec.c - the vector-program interpreter: runs a VPROG task's plan
 * (runtime/vprog_plan.h) on the simulated vector unit.
 *
 * A block owns a range of 256-element tiles of the outputs' physical
 * elements. For each pass of `lanes` elements (a tile, or a part of one when
 * the UB is small) it walks the plan's steps once: a LOAD gathers the pass's
 * elements of one input into a UB slot (converted to lane form: f16 -> f32,
 * bool normalised to 0/1), a lane step runs one tight loop over the pass's
 * lanes, a STORE converts a slot back to the output's dtype and zeroes
 * NC1HWC0 padding lanes. Dispatch (one indirect call per step) is thus
 * amortised over a whole tile, and every lane loop is a plain loop over
 * restrict-qualified arrays the compiler can vectorise.
 *
 * The lane functions are generated per (opcode, lane type) by the macros
 * below; their scalar semantics are the helpers vf_* (floats) and vi_*
 * (integers, computed in 64 bits and wrapped to the register's width),
 * which spell out vprog.h's rules (see runtime/vprog.c for the typing
 * rules and the full list). rt_vprog_lane_fn maps a verified instruction to
 * its function at load time.
 */
#include <math.h>
#include <string.h>

#include "runtime/kernels.h"
#include "runtime/vprog_plan.h"

/* ---- scalar semantics ---- */

/* NaN-propagating max/min (a NaN operand gives NaN). */
static inline float vf_max(float a, float b) { return a > b || a != a ? a : b; }
static inline float vf_min(float a, float b) { return a < b || a != a ? a : b; }
/* ONNX Mod (fmod = 0): the sign of the divisor. */
static inline float vf_mod(float a, float b) {
  float r = fmodf(a, b);
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}
static inline float vf_sign(float a) { return a > 0 ? 1.0f : a < 0 ? -1.0f : a; }
static inline float vf_sigmoid(float a) { return 1.0f / (1.0f + expf(-a)); }
static inline float vf_softplus(float a) { return a > 0 ? a + log1pf(expf(-a)) : log1pf(expf(a)); }
static inline uint8_t vf_isinf(float a, int64_t mask) {
  return (uint8_t)((a == INFINITY && (mask & 1)) || (a == -INFINITY && (mask & 2)));
}
/* Truncation toward zero, saturating to [lo, hi]; NaN gives 0. */
static inline int64_t vf_sat(float a, int64_t lo, int64_t hi) {
  return a != a ? 0 : a <= (float)lo ? lo : a >= (float)hi ? hi : (int64_t)a;
}

/* Integer division and remainders by zero give 0; INT_MIN / -1 wraps. */
static inline int64_t vi_div(int64_t a, int64_t b) {
  return b == 0 ? 0 : b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b;
}
static inline int64_t vi_fmod(int64_t a, int64_t b) { return b == 0 || b == -1 ? 0 : a % b; }
static inline int64_t vi_mod(int64_t a, int64_t b) {
  int64_t r = vi_fmod(a, b);
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}
/* a^e wrapping; a negative exponent truncates 1/a^-e toward zero (0 for a == 0). */
static inline int64_t vi_pow(int64_t a, int64_t e) {
  if (e < 0) return a == 1 ? 1 : a == -1 ? ((e & 1) ? -1 : 1) : 0;
  uint64_t r = 1, x = (uint64_t)a;
  for (; e; e >>= 1) {
    if (e & 1) r *= x;
    x *= x;
  }
  return (int64_t)r;
}

/* ---- lane loops ---- */

#define SLOT(T, off) ((T *)(void *)(ub + (off)))

#define LANES1(name, TA, TD, EXPR)                                                                 \
  static void name(const rt_vstep *s, uint8_t *ub, uint32_t n) {                                   \
    const TA *restrict A = SLOT(const TA, s->a);                                                   \
    TD *restrict D = SLOT(TD, s->d);                                                               \
    for (uint32_t i = 0; i < n; i++) {                                                             \
      TA a = A[i];                                                                                 \
      D[i] = (TD)(EXPR);                                                                           \
    }                                                                                              \
  }
#define LANES2(name, TA, TD, EXPR)                                                                 \
  static void name(const rt_vstep *s, uint8_t *ub, uint32_t n) {                                   \
    const TA *restrict A = SLOT(const TA, s->a), *restrict B = SLOT(const TA, s->b);               \
    TD *restrict D = SLOT(TD, s->d);                                                               \
    for (uint32_t i = 0; i < n; i++) {                                                             \
      TA a = A[i], b = B[i];                                                                       \
      D[i] = (TD)(EXPR);                                                                           \
    }                                                                                              \
  }
#define LANES3(name, TA, TD, EXPR)                                                                 \
  static void name(const rt_vstep *s, uint8_t *ub, uint32_t n) {                                   \
    const TA *restrict A = SLOT(const TA, s->a), *restrict B = SLOT(const TA, s->b);               \
    const TA *restrict C = SLOT(const TA, s->c);                                                   \
    TD *restrict D = SLOT(TD, s->d);                                                               \
    for (uint32_t i = 0; i < n; i++) {                                                             \
      TA a = A[i], b = B[i], c = C[i];                                                             \
      D[i] = (TD)(EXPR);                                                                           \
    }                                                                                              \
  }

/* Float lanes (f32 and f16 registers). */
#define F1(op, EXPR) LANES1(f_##op, float, float, EXPR)
#define F2(op, EXPR) LANES2(f_##op, float, float, EXPR)
F1(neg, -a) F1(abs, fabsf(a)) F1(sign, vf_sign(a)) F1(exp, expf(a)) F1(log, logf(a)) F1(sqrt, sqrtf(a))
F1(rsqrt, 1.0f / sqrtf(a)) F1(recip, 1.0f / a) F1(tanh, tanhf(a)) F1(sigmoid, vf_sigmoid(a))
F1(erf, erff(a)) F1(floor, floorf(a)) F1(ceil, ceilf(a)) F1(round, nearbyintf(a)) F1(sin, sinf(a))
F1(cos, cosf(a)) F1(tan, tanf(a)) F1(asin, asinf(a)) F1(acos, acosf(a)) F1(atan, atanf(a))
F1(sinh, sinhf(a)) F1(cosh, coshf(a)) F1(asinh, asinhf(a)) F1(acosh, acoshf(a)) F1(atanh, atanhf(a))
F1(softplus, vf_softplus(a))
LANES1(f_isnan, float, uint8_t, a != a)
LANES1(f_isinf, float, uint8_t, vf_isinf(a, s->imm.i64))
F2(add, a + b) F2(sub, a - b) F2(mul, a * b) F2(div, a / b) F2(mod, vf_mod(a, b)) F2(fmod, fmodf(a, b))
F2(pow, powf(a, b)) F2(max, vf_max(a, b)) F2(min, vf_min(a, b))
LANES2(f_eq, float, uint8_t, a == b) LANES2(f_ne, float, uint8_t, a != b)
LANES2(f_lt, float, uint8_t, a < b) LANES2(f_le, float, uint8_t, a <= b)
LANES2(f_gt, float, uint8_t, a > b) LANES2(f_ge, float, uint8_t, a >= b)
LANES3(f_clamp, float, float, vf_min(vf_max(a, b), c)) LANES3(f_fma, float, float, fmaf(a, b, c))

/* Integer lanes: one function per op and lane type. Wrapping arithmetic is
 * done in uint64_t and truncated to the lane type by the store. */
#define INT_TYPES(X, op, EXPR)                                                                     \
  X(op##_i64, int64_t, EXPR) X(op##_i32, int32_t, EXPR) X(op##_i8, int8_t, EXPR)                   \
  X(op##_u8, uint8_t, EXPR)
#define IUN(name, T, EXPR) LANES1(name, T, T, EXPR)
#define IBIN(name, T, EXPR) LANES2(name, T, T, EXPR)
#define ICMP(name, T, EXPR) LANES2(name, T, uint8_t, EXPR)
#define ITER(name, T, EXPR) LANES3(name, T, T, EXPR)
/* Width of a's type in bits; b read as an unsigned number of that width. */
#define W(a) (8 * sizeof(a))
#define UCOUNT(a, b) ((uint64_t)(b) & (~0ull >> (64 - W(a))))

INT_TYPES(IUN, i_neg, 0 - (uint64_t)a)
INT_TYPES(IUN, i_abs, a > 0 ? (uint64_t)a : 0 - (uint64_t)a)
INT_TYPES(IUN, i_sign, a > 0 ? 1 : a == 0 ? 0 : -1)
INT_TYPES(IUN, i_bitnot, ~(uint64_t)a)
INT_TYPES(IBIN, i_add, (uint64_t)a + (uint64_t)b)
INT_TYPES(IBIN, i_sub, (uint64_t)a - (uint64_t)b)
INT_TYPES(IBIN, i_mul, (uint64_t)a * (uint64_t)b)
INT_TYPES(IBIN, i_div, vi_div(a, b))
INT_TYPES(IBIN, i_mod, vi_mod(a, b))
INT_TYPES(IBIN, i_fmod, vi_fmod(a, b))
INT_TYPES(IBIN, i_pow, vi_pow(a, b))
INT_TYPES(IBIN, i_max, a > b ? a : b)
INT_TYPES(IBIN, i_min, a < b ? a : b)
INT_TYPES(IBIN, i_bitand, a & b)
INT_TYPES(IBIN, i_bitor, a | b)
INT_TYPES(IBIN, i_bitxor, a ^ b)
/* Shift counts are read as unsigned; counts >= the width give 0. */
INT_TYPES(IBIN, i_shl, UCOUNT(a, b) < W(a) ? (uint64_t)a << UCOUNT(a, b) : 0)
INT_TYPES(IBIN, i_shr, UCOUNT(a, b) < W(a) ? a >> UCOUNT(a, b) : 0)
INT_TYPES(ICMP, i_eq, a == b) INT_TYPES(ICMP, i_ne, a != b) INT_TYPES(ICMP, i_lt, a < b)
INT_TYPES(ICMP, i_le, a <= b) INT_TYPES(ICMP, i_gt, a > b) INT_TYPES(ICMP, i_ge, a >= b)
INT_TYPES(ITER, i_clamp, (a > b ? a : b) < c ? (a > b ? a : b) : c)
INT_TYPES(ITER, i_fma, (uint64_t)a * (uint64_t)b + (uint64_t)c)

/* Bool lanes (uint8_t 0/1). */
LANES1(b_not, uint8_t, uint8_t, a ^ 1) LANES2(b_and, uint8_t, uint8_t, a & b)
LANES2(b_or, uint8_t, uint8_t, a | b) LANES2(b_xor, uint8_t, uint8_t, a ^ b)

/* SELECT and CONST by lane size. */
#define SELECT_FN(name, T)                                                                         \
  static void name(const rt_vstep *s, uint8_t *ub, uint32_t n) {                                   \
    const uint8_t *restrict A = SLOT(const uint8_t, s->a);                                         \
    const T *restrict B = SLOT(const T, s->b), *restrict C = SLOT(const T, s->c);                  \
    T *restrict D = SLOT(T, s->d);                                                                 \
    for (uint32_t i = 0; i < n; i++) D[i] = A[i] ? B[i] : C[i];                                    \
  }
SELECT_FN(select1, uint8_t) SELECT_FN(select4, uint32_t) SELECT_FN(select8, uint64_t)
#define CONST_FN(name, T, field)                                                                   \
  static void name(const rt_vstep *s, uint8_t *ub, uint32_t n) {                                   \
    T *restrict D = SLOT(T, s->d), v = s->imm.field;                                               \
    for (uint32_t i = 0; i < n; i++) D[i] = v;                                                     \
  }
CONST_FN(const_f, float, f) CONST_FN(const_i64, int64_t, i64) CONST_FN(const_i32, int32_t, i32)
CONST_FN(const_i8, int8_t, i8) CONST_FN(const_u8, uint8_t, u8)

/* CAST: source lanes f, i64, i32, i8, u8 (also bool) to f, i64, i32, i8, u8, bool. */
#define CAST_FROM(src, TA)                                                                         \
  LANES1(cast_##src##_f, TA, float, a) LANES1(cast_##src##_b, TA, uint8_t, a != 0)                 \
  LANES1(cast_##src##_i64, TA, int64_t, a) LANES1(cast_##src##_i32, TA, int32_t, a)                \
  LANES1(cast_##src##_i8, TA, int8_t, a) LANES1(cast_##src##_u8, TA, uint8_t, a)
CAST_FROM(i64, int64_t) CAST_FROM(i32, int32_t) CAST_FROM(i8, int8_t) CAST_FROM(u8, uint8_t)
LANES1(cast_f_f, float, float, a) LANES1(cast_f_b, float, uint8_t, a != 0)
LANES1(cast_f_i64, float, int64_t, vf_sat(a, INT64_MIN, INT64_MAX))
LANES1(cast_f_i32, float, int32_t, vf_sat(a, INT32_MIN, INT32_MAX))
LANES1(cast_f_i8, float, int8_t, vf_sat(a, INT8_MIN, INT8_MAX))
LANES1(cast_f_u8, float, uint8_t, vf_sat(a, 0, UINT8_MAX))

/* ---- choosing a lane function ---- */

typedef enum lane_kind { LK_F, LK_I64, LK_I32, LK_I8, LK_U8, LK_B, LK_BAD } lane_kind;

static lane_kind lane_of(int dt) {
  switch (dt) {
  case DT_FLOAT32: case DT_FLOAT16: return LK_F;
  case DT_INT64: return LK_I64;
  case DT_INT32: return LK_I32;
  case DT_INT8: return LK_I8;
  case DT_UINT8: return LK_U8;
  case DT_BOOL: return LK_B;
  default: return LK_BAD;
  }
}

/* fns[] indexed by lane kind f, i64, i32, i8, u8, b (NULL = not defined). */
#define BY_LANE(f, i64, i32, i8, u8, b) ((const rt_vlane_fn[]){f, i64, i32, i8, u8, b})
#define NUM(op) BY_LANE(f_##op, i_##op##_i64, i_##op##_i32, i_##op##_i8, i_##op##_u8, NULL)
#define INT(op) BY_LANE(NULL, i_##op##_i64, i_##op##_i32, i_##op##_i8, i_##op##_u8, NULL)
#define FLT(op) BY_LANE(f_##op, NULL, NULL, NULL, NULL, NULL)
#define CMP(op) BY_LANE(f_##op, i_##op##_i64, i_##op##_i32, i_##op##_i8, i_##op##_u8, i_##op##_u8)
#define CASTS(src) BY_LANE(cast_##src##_f, cast_##src##_i64, cast_##src##_i32, cast_##src##_i8, \
                           cast_##src##_u8, cast_##src##_b)

rt_vlane_fn rt_vprog_lane_fn(int op, int dt, int adt) {
  lane_kind k = lane_of(dt), ka = lane_of(adt);
  if (k == LK_BAD || ka == LK_BAD) return NULL;
  switch (op) {
  case VOP_CONST: return BY_LANE(const_f, const_i64, const_i32, const_i8, const_u8, const_u8)[k];
  case VOP_CAST:
    switch (ka) {
    case LK_F: return CASTS(f)[k];
    case LK_I64: return CASTS(i64)[k];
    case LK_I32: return CASTS(i32)[k];
    case LK_I8: return CASTS(i8)[k];
    default: return CASTS(u8)[k]; /* u8 and bool lanes */
    }
  case VOP_NEG: return NUM(neg)[k];
  case VOP_ABS: return NUM(abs)[k];
  case VOP_SIGN: return NUM(sign)[k];
  case VOP_NOT: return k == LK_B ? b_not : NULL;
  case VOP_BITNOT: return INT(bitnot)[k];
  case VOP_EXP: return FLT(exp)[k];
  case VOP_LOG: return FLT(log)[k];
  case VOP_SQRT: return FLT(sqrt)[k];
  case VOP_RSQRT: return FLT(rsqrt)[k];
  case VOP_RECIP: return FLT(recip)[k];
  case VOP_TANH: return FLT(tanh)[k];
  case VOP_SIGMOID: return FLT(sigmoid)[k];
  case VOP_ERF: return FLT(erf)[k];
  case VOP_FLOOR: return FLT(floor)[k];
  case VOP_CEIL: return FLT(ceil)[k];
  case VOP_ROUND: return FLT(round)[k];
  case VOP_SIN: return FLT(sin)[k];
  case VOP_COS: return FLT(cos)[k];
  case VOP_TAN: return FLT(tan)[k];
  case VOP_ASIN: return FLT(asin)[k];
  case VOP_ACOS: return FLT(acos)[k];
  case VOP_ATAN: return FLT(atan)[k];
  case VOP_SINH: return FLT(sinh)[k];
  case VOP_COSH: return FLT(cosh)[k];
  case VOP_ASINH: return FLT(asinh)[k];
  case VOP_ACOSH: return FLT(acosh)[k];
  case VOP_ATANH: return FLT(atanh)[k];
  case VOP_SOFTPLUS: return FLT(softplus)[k];
  case VOP_ISNAN: return k == LK_B ? FLT(isnan)[ka] : NULL;
  case VOP_ISINF: return k == LK_B ? FLT(isinf)[ka] : NULL;
  case VOP_ADD: return NUM(add)[k];
  case VOP_SUB: return NUM(sub)[k];
  case VOP_MUL: return NUM(mul)[k];
  case VOP_DIV: return NUM(div)[k];
  case VOP_MOD: return NUM(mod)[k];
  case VOP_FMOD: return NUM(fmod)[k];
  case VOP_POW: return NUM(pow)[k];
  case VOP_MAX: return NUM(max)[k];
  case VOP_MIN: return NUM(min)[k];
  case VOP_AND: return k == LK_B ? b_and : NULL;
  case VOP_OR: return k == LK_B ? b_or : NULL;
  case VOP_XOR: return k == LK_B ? b_xor : NULL;
  case VOP_BITAND: return INT(bitand)[k];
  case VOP_BITOR: return INT(bitor)[k];
  case VOP_BITXOR: return INT(bitxor)[k];
  case VOP_SHL: return INT(shl)[k];
  case VOP_SHR: return INT(shr)[k];
  case VOP_EQ: return k == LK_B ? CMP(eq)[ka] : NULL;
  case VOP_NE: return k == LK_B ? CMP(ne)[ka] : NULL;
  case VOP_LT: return k == LK_B ? CMP(lt)[ka] : NULL;
  case VOP_LE: return k == LK_B ? CMP(le)[ka] : NULL;
  case VOP_GT: return k == LK_B ? CMP(gt)[ka] : NULL;
  case VOP_GE: return k == LK_B ? CMP(ge)[ka] : NULL;
  case VOP_SELECT:
    if (ka != LK_B) return NULL;
    return k == LK_I64 ? select8 : k == LK_F || k == LK_I32 ? select4 : select1;
  case VOP_CLAMP: return NUM(clamp)[k];
  case VOP_FMA: return NUM(fma)[k];
  default: return NULL;
  }
}

/* ---- memory steps ---- */

/* Lane bytes of a register dtype. */
static size_t lane_bytes(uint32_t dt) { return dt == DT_FLOAT16 ? 4 : dtype_size((int)dt); }

/* n stored elements from src[at..] into lanes. */
static void load_run(uint32_t dt, const void *src, uint64_t at, void *dst, uint32_t n) {
  switch (dt) {
  case DT_FLOAT16: {
    const uint16_t *restrict s = (const uint16_t *)src + at;
    float *restrict d = dst;
    for (uint32_t i = 0; i < n; i++) d[i] = rt_h2f(s[i]);
    return;
  }
  case DT_BOOL: {
    const uint8_t *restrict s = (const uint8_t *)src + at;
    uint8_t *restrict d = dst;
    for (uint32_t i = 0; i < n; i++) d[i] = s[i] != 0;
    return;
  }
  default: {
    size_t es = dtype_size((int)dt);
    memcpy(dst, (const uint8_t *)src + at * es, n * es);
  }
  }
}

/* n lanes that all hold stored element src[at]. */
static void fill_run(uint32_t dt, const void *src, uint64_t at, void *dst, uint32_t n) {
  load_run(dt, src, at, dst, 1);
  switch (lane_bytes(dt)) {
  case 8: {
    int64_t *d = dst;
    for (uint32_t i = 1; i < n; i++) d[i] = d[0];
    return;
  }
  case 4: {
    uint32_t *d = dst;
    for (uint32_t i = 1; i < n; i++) d[i] = d[0];
    return;
  }
  default: memset((uint8_t *)dst + 1, *(uint8_t *)dst, n - 1);
  }
}

/* Elements [e, e + n) of the iteration space from input `in` into lanes. */
static void gather(const rt_vplan *p, const rt_vinput *in, const void *src, uint64_t e, uint32_t n,
                   uint8_t *dst) {
  if (in->contiguous) {
    load_run(in->dtype, src, e, dst, n);
    return;
  }
  size_t lb = lane_bytes(in->dtype);
  int last = (int)p->ndims - 1;
  int64_t idx[RT_VMAX_DIMS], off = 0;
  uint64_t r = e;
  for (int k = last; k >= 0; k--) {
    idx[k] = (int64_t)(r % (uint64_t)p->dims[k]);
    r /= (uint64_t)p->dims[k];
    off += idx[k] * in->strides[k];
  }
  for (uint32_t done = 0; done < n;) {
    uint64_t left = (uint64_t)(p->dims[last] - idx[last]);
    uint32_t run = n - done < left ? n - done : (uint32_t)left;
    if (in->strides[last]) load_run(in->dtype, src, (uint64_t)off, dst + done * lb, run);
    else fill_run(in->dtype, src, (uint64_t)off, dst + done * lb, run);
    done += run;
    idx[last] += run;
    off += (int64_t)run * in->strides[last];
    for (int k = last; k > 0 && idx[k] == p->dims[k]; k--) {
      off += in->strides[k - 1] - idx[k] * in->strides[k];
      idx[k] = 0;
      idx[k - 1]++;
    }
  }
}

/* Zeroes the NC1HWC0 padding lanes among output elements [e, e + n) (e and n multiples of C0 wherever
 * padding exists: tiles and rows are). */
static void zero_padding(const rt_vplan *p, size_t es, void *out, uint64_t e, uint64_t n) {
  for (uint64_t g = e; g < e + n; g += C0)
    if ((g / p->pad_hw16) % p->pad_c1s == p->pad_c1s - 1)
      memset((uint8_t *)out + (g + p->pad_from) * es, 0, (C0 - p->pad_from) * es);
}

/* Lanes into output elements [e, e + n), then NC1HWC0 padding lanes to 0. */
static void store(const rt_vplan *p, uint32_t dt, void *out, uint64_t e, uint32_t n, const uint8_t *lanes) {
  size_t es = dtype_size((int)dt);
  if (dt == DT_FLOAT16) {
    const float *restrict s = (const float *)(const void *)lanes;
    uint16_t *restrict d = (uint16_t *)out + e;
    for (uint32_t i = 0; i < n; i++) d[i] = rt_f2h(s[i]);
  } else {
    memcpy((uint8_t *)out + e * es, lanes, n * es);
  }
  if (p->pad_from) zero_padding(p, es, out, e, n);
}

static void round16(float *d, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) d[i] = rt_h2f(rt_f2h(d[i]));
}

/* Elements [e, end) through the plan's native function. */
static void run_native(const rt_vplan *p, const rt_args *args, uint64_t e, uint64_t end) {
  uint32_t nin = p->ninputs, nt = p->ninputs + p->noutputs, last = p->ndims - 1;
  uint64_t idx[RT_VMAX_DIMS], rest = e, start = e;
  int64_t outer[2 * VPROG_MAX_IO];
  size_t es[2 * VPROG_MAX_IO];
  void *ptr[2 * VPROG_MAX_IO];
  for (uint32_t k = last + 1; k-- > 0;) {
    idx[k] = rest % (uint64_t)p->dims[k];
    rest /= (uint64_t)p->dims[k];
  }
  for (uint32_t t = 0; t < nt; t++) {
    es[t] = dtype_size((int)(t < nin ? p->in[t].dtype : p->out_dtype[t - nin]));
    outer[t] = t >= nin ? p->dims[last] : last ? p->in[t].strides[last - 1] : 0;
  }
  while (e < end) {
    uint64_t left = end - e, cols = (uint64_t)p->dims[last], rows = 1;
    if (idx[last] == 0 && last > 0 && left >= cols) {
      uint64_t fit = (uint64_t)p->dims[last - 1] - idx[last - 1];
      rows = left / cols < fit ? left / cols : fit;
    } else {
      cols = cols - idx[last] < left ? cols - idx[last] : left;
    }
    for (uint32_t t = 0; t < nt; t++) {
      int64_t off = (int64_t)e;
      if (t < nin) {
        off = 0;
        for (uint32_t k = 0; k <= last; k++) off += (int64_t)idx[k] * p->in[t].strides[k];
      }
      ptr[t] = (uint8_t *)args->data[t] + (size_t)off * es[t];
    }
    p->native(ptr, outer, rows, cols);
    e += rows * cols;
    if (rows > 1) idx[last - 1] += rows;
    else idx[last] += cols;
    if (last > 0 && idx[last] == (uint64_t)p->dims[last]) idx[last] = 0, idx[last - 1]++;
    for (uint32_t k = last; k-- > 1 && idx[k] == (uint64_t)p->dims[k];) idx[k] = 0, idx[k - 1]++;
  }
  if (p->pad_from)
    for (uint32_t o = 0; o < p->noutputs; o++) zero_padding(p, es[nin + o], args->data[nin + o], start, end - start);
}

void rt_vprog_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  const rt_vplan *p = args->aux;
  uint64_t lo, hi;
  rt_block_range(p->tiles, task->block_dim, block, &lo, &hi);
  uint64_t end = hi * RT_VTILE < p->total ? hi * RT_VTILE : p->total;
  if (p->native) {
    if (lo * RT_VTILE < end) run_native(p, args, lo * RT_VTILE, end);
    return;
  }
  uint8_t *ub = core->ub;
  for (uint64_t e = lo * RT_VTILE; e < end; e += p->lanes) {
    uint32_t n = end - e < p->lanes ? (uint32_t)(end - e) : p->lanes;
    for (uint32_t k = 0; k < p->nsteps; k++) {
      const rt_vstep *s = &p->steps[k];
      switch (s->kind) {
      case RT_VSTEP_LOAD: gather(p, &p->in[s->io], args->data[s->io], e, n, ub + s->d); break;
      case RT_VSTEP_STORE:
        store(p, p->out_dtype[s->io], args->data[p->ninputs + s->io], e, n, ub + s->a);
        break;
      default:
        s->fn(s, ub, n);
        if (s->round16) round16((float *)(void *)(ub + s->d), n);
      }
    }
  }
}
