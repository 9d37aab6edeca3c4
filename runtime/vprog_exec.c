/* vprog_exec.c - the vector-program interpreter: runs a VPROG task's plan
 * (runtime/vprog_plan.h) on the simulated vector unit.
 *
 * A block owns a range of 256-element tiles of the outputs' physical
 * elements. For each pass of `lanes` elements (a tile, or a part of one when
 * the UB is small) it walks the plan's steps once: a LOAD gathers the pass's
 * elements of one input into a UB slot, converted from the storage dtype to
 * the register's compute type (vprog_plan.h: f16 -> float with a signaling
 * NaN made quiet, as F16C and the JIT convert; integers sign-
 * or zero-extended to 64 bits, bool normalised to 0/1), a lane step runs one
 * tight loop over the pass's lanes and then its post-pass (f16 rounding, or
 * wrapping to a narrow integer's width), a STORE converts a slot back to the
 * output's dtype and zeroes NC1HWC0 padding lanes. Dispatch (one indirect call per step) is thus
 * amortised over a whole tile, and every lane loop is a plain loop over
 * restrict-qualified arrays the compiler can vectorise.
 *
 * The lane functions are generated per (opcode, lane type) by the macros
 * below; their scalar semantics are the helpers vf_* / vd_* (float and
 * double) and vi_* (integers, computed in 64 bits and wrapped to the
 * register's width by the post-pass),
 * which spell out vprog.h's rules (see runtime/vprog_plan.c for the typing
 * rules and the full list). rt_vprog_lane_fn maps a verified instruction to
 * its function at load time.
 */
#include <math.h>
#include <string.h>

#include "common/vmath.h"
#include "runtime/elem.h"
#include "runtime/kernels.h"
#include "runtime/vprog_plan.h"

/* ---- scalar semantics ---- */

/* NaN-propagating max/min (a NaN operand gives NaN). */
static inline float vf_max(float a, float b) { return a > b || a != a ? a : b; }
static inline float vf_min(float a, float b) { return a < b || a != a ? a : b; }
static inline double vd_max(double a, double b) { return a > b || a != a ? a : b; }
static inline double vd_min(double a, double b) { return a < b || a != a ? a : b; }
/* ONNX Mod (fmod = 0): the sign of the divisor. */
static inline float vf_mod(float a, float b) {
  float r = fmodf(a, b);
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}
static inline double vd_mod(double a, double b) {
  double r = fmod(a, b);
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}
static inline float vf_sign(float a) { return a > 0 ? 1.0f : a < 0 ? -1.0f : a; }
static inline double vd_sign(double a) { return a > 0 ? 1.0 : a < 0 ? -1.0 : a; }
static inline double vd_sigmoid(double a) { return 1.0 / (1.0 + exp(-a)); }
static inline float vf_softplus(float a) { return a > 0 ? a + log1pf(om_vexp(-a)) : log1pf(om_vexp(a)); }
static inline double vd_softplus(double a) { return a > 0 ? a + log1p(exp(-a)) : log1p(exp(a)); }
static inline uint8_t vf_isinf(double a, int64_t mask) {
  return (uint8_t)((a == INFINITY && (mask & 1)) || (a == -INFINITY && (mask & 2)));
}
/* Truncation toward zero, saturating to [lo, hi] (hi as a double rounds up
 * to a power of two, so >= catches everything above); NaN gives 0. */
static inline int64_t vd_sat(double a, int64_t lo, int64_t hi) {
  return a != a ? 0 : a <= (double)lo ? lo : a >= (double)hi ? hi : (int64_t)a;
}
static inline uint64_t vd_satu(double a, uint64_t hi) {
  return a != a || a <= 0 ? 0 : a >= (double)hi ? hi : (uint64_t)a;
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
  return (int64_t)rt_vprog_upow((uint64_t)a, (uint64_t)e);
}

/* ---- lane loops ---- */

#define SLOT(T, off) ((T *)(void *)(ub + (off)))

#define LANES1(name, TA, TD, EXPR)                                                                           \
  static void name(const rt_vstep *s, uint8_t *ub, uint32_t n) {                                             \
    const TA *restrict A = SLOT(const TA, s->a);                                                             \
    TD *restrict D = SLOT(TD, s->d);                                                                         \
    (void)s;                                                                                                 \
    for (uint32_t i = 0; i < n; i++) {                                                                       \
      TA a = A[i];                                                                                           \
      D[i] = (TD)(EXPR);                                                                                     \
    }                                                                                                        \
  }
#define LANES2(name, TA, TD, EXPR)                                                                           \
  static void name(const rt_vstep *s, uint8_t *ub, uint32_t n) {                                             \
    const TA *restrict A = SLOT(const TA, s->a), *restrict B = SLOT(const TA, s->b);                         \
    TD *restrict D = SLOT(TD, s->d);                                                                         \
    for (uint32_t i = 0; i < n; i++) {                                                                       \
      TA a = A[i], b = B[i];                                                                                 \
      D[i] = (TD)(EXPR);                                                                                     \
    }                                                                                                        \
  }
#define LANES3(name, TA, TD, EXPR)                                                                           \
  static void name(const rt_vstep *s, uint8_t *ub, uint32_t n) {                                             \
    const TA *restrict A = SLOT(const TA, s->a), *restrict B = SLOT(const TA, s->b);                         \
    const TA *restrict C = SLOT(const TA, s->c);                                                             \
    TD *restrict D = SLOT(TD, s->d);                                                                         \
    for (uint32_t i = 0; i < n; i++) {                                                                       \
      TA a = A[i], b = B[i], c = C[i];                                                                       \
      D[i] = (TD)(EXPR);                                                                                     \
    }                                                                                                        \
  }

/* The lane functions below are macro rows, several to a line. */
/* clang-format off */
/* Float lanes (f32 and f16 registers). */
#define F1(op, EXPR) LANES1(f_##op, float, float, EXPR)
#define F2(op, EXPR) LANES2(f_##op, float, float, EXPR)
F1(neg, -a) F1(abs, fabsf(a)) F1(sign, vf_sign(a)) F1(exp, om_vexp(a)) F1(log, logf(a)) F1(sqrt, sqrtf(a))
F1(rsqrt, 1.0f / sqrtf(a)) F1(recip, 1.0f / a) F1(tanh, tanhf(a)) F1(sigmoid, om_vsigmoid(a))
F1(erf, om_verf(a)) F1(floor, floorf(a)) F1(ceil, ceilf(a)) F1(round, nearbyintf(a)) F1(sin, sinf(a))
F1(cos, cosf(a)) F1(tan, tanf(a)) F1(asin, asinf(a)) F1(acos, acosf(a)) F1(atan, atanf(a))
F1(sinh, sinhf(a)) F1(cosh, coshf(a)) F1(asinh, asinhf(a)) F1(acosh, acoshf(a)) F1(atanh, atanhf(a))
F1(softplus, vf_softplus(a))
/* EXP, SIGMOID, ERF and FMA through the host's AVX2 builds (rt_cpu()): the same bits. */
static void f_exp_host(const rt_vstep *s, uint8_t *ub, uint32_t n) {
  rt_cpu()->exp(SLOT(const float, s->a), SLOT(float, s->d), n);
}
static void f_sigmoid_host(const rt_vstep *s, uint8_t *ub, uint32_t n) {
  rt_cpu()->sigmoid(SLOT(const float, s->a), SLOT(float, s->d), n);
}
static void f_erf_host(const rt_vstep *s, uint8_t *ub, uint32_t n) {
  rt_cpu()->erf(SLOT(const float, s->a), SLOT(float, s->d), n);
}
static void f_fma_host(const rt_vstep *s, uint8_t *ub, uint32_t n) {
  rt_cpu()->fma(SLOT(const float, s->a), SLOT(const float, s->b), SLOT(const float, s->c), SLOT(float, s->d), n);
}
LANES1(f_isnan, float, uint8_t, a != a)
LANES1(f_isinf, float, uint8_t, vf_isinf(a, s->imm.i64))
F2(add, a + b) F2(sub, a - b) F2(mul, a * b) F2(div, a / b) F2(mod, vf_mod(a, b)) F2(fmod, fmodf(a, b))
F2(pow, powf(a, b)) F2(max, vf_max(a, b)) F2(min, vf_min(a, b))
LANES2(f_eq, float, uint8_t, a == b) LANES2(f_ne, float, uint8_t, a != b)
LANES2(f_lt, float, uint8_t, a < b) LANES2(f_le, float, uint8_t, a <= b)
LANES2(f_gt, float, uint8_t, a > b) LANES2(f_ge, float, uint8_t, a >= b)
LANES3(f_clamp, float, float, vf_min(vf_max(a, b), c)) LANES3(f_fma, float, float, fmaf(a, b, c))

/* Double lanes (f64 registers): the same operations in double with libm's double functions. */
#define D1(op, EXPR) LANES1(d_##op, double, double, EXPR)
#define D2(op, EXPR) LANES2(d_##op, double, double, EXPR)
D1(neg, -a) D1(abs, fabs(a)) D1(sign, vd_sign(a)) D1(exp, exp(a)) D1(log, log(a)) D1(sqrt, sqrt(a))
D1(rsqrt, 1.0 / sqrt(a)) D1(recip, 1.0 / a) D1(tanh, tanh(a)) D1(sigmoid, vd_sigmoid(a))
D1(erf, erf(a)) D1(floor, floor(a)) D1(ceil, ceil(a)) D1(round, nearbyint(a)) D1(sin, sin(a))
D1(cos, cos(a)) D1(tan, tan(a)) D1(asin, asin(a)) D1(acos, acos(a)) D1(atan, atan(a))
D1(sinh, sinh(a)) D1(cosh, cosh(a)) D1(asinh, asinh(a)) D1(acosh, acosh(a)) D1(atanh, atanh(a))
D1(softplus, vd_softplus(a))
LANES1(d_isnan, double, uint8_t, a != a)
LANES1(d_isinf, double, uint8_t, vf_isinf(a, s->imm.i64))
D2(add, a + b) D2(sub, a - b) D2(mul, a * b) D2(div, a / b) D2(mod, vd_mod(a, b)) D2(fmod, fmod(a, b))
D2(pow, pow(a, b)) D2(max, vd_max(a, b)) D2(min, vd_min(a, b))
LANES2(d_eq, double, uint8_t, a == b) LANES2(d_ne, double, uint8_t, a != b)
LANES2(d_lt, double, uint8_t, a < b) LANES2(d_le, double, uint8_t, a <= b)
LANES2(d_gt, double, uint8_t, a > b) LANES2(d_ge, double, uint8_t, a >= b)
LANES3(d_clamp, double, double, vd_min(vd_max(a, b), c)) LANES3(d_fma, double, double, fma(a, b, c))

/* Integer lanes: signed dtypes compute on int64_t (s_*), unsigned ones on
 * uint64_t (u_*), both exact in 64 bits; wrapping arithmetic is done in
 * uint64_t, and the step's post-pass wraps the result to the register's
 * width (fix_lanes). */
#define SU(X, op, EXPR) X(s_##op, int64_t, EXPR) X(u_##op, uint64_t, EXPR)
#define IUN(name, T, EXPR) LANES1(name, T, T, EXPR)
#define IBIN(name, T, EXPR) LANES2(name, T, T, EXPR)
#define ICMP(name, T, EXPR) LANES2(name, T, uint8_t, EXPR)
#define ITER(name, T, EXPR) LANES3(name, T, T, EXPR)

SU(IUN, neg, 0 - (uint64_t)a)
IUN(s_abs, int64_t, a < 0 ? 0 - (uint64_t)a : (uint64_t)a) IUN(u_abs, uint64_t, a)
IUN(s_sign, int64_t, a > 0 ? 1 : a == 0 ? 0 : -1) IUN(u_sign, uint64_t, a != 0)
SU(IUN, bitnot, ~(uint64_t)a)
SU(IBIN, add, (uint64_t)a + (uint64_t)b)
SU(IBIN, sub, (uint64_t)a - (uint64_t)b)
SU(IBIN, mul, (uint64_t)a * (uint64_t)b)
IBIN(s_div, int64_t, vi_div(a, b)) IBIN(u_div, uint64_t, b ? a / b : 0)
IBIN(s_mod, int64_t, vi_mod(a, b)) IBIN(u_mod, uint64_t, b ? a % b : 0)
IBIN(s_fmod, int64_t, vi_fmod(a, b))
IBIN(s_pow, int64_t, vi_pow(a, b)) IBIN(u_pow, uint64_t, rt_vprog_upow(a, b))
SU(IBIN, max, a > b ? a : b)
SU(IBIN, min, a < b ? a : b)
SU(IBIN, bitand, a & b)
SU(IBIN, bitor, a | b)
SU(IBIN, bitxor, a ^ b)
/* Shifts: imm.i64 is the register's width w; the count is b read as an
 * unsigned w-bit number, and counts >= w give 0. SHR is arithmetic on
 * signed lanes (sign-extended values), logical on unsigned ones. */
#define CNT(b) ((uint64_t)(b) & (~0ull >> (64 - s->imm.i64)))
SU(IBIN, shl, CNT(b) < (uint64_t)s->imm.i64 ? (uint64_t)a << CNT(b) : 0)
SU(IBIN, shr, CNT(b) < (uint64_t)s->imm.i64 ? a >> CNT(b) : 0)
SU(ICMP, eq, a == b) SU(ICMP, ne, a != b) SU(ICMP, lt, a < b)
SU(ICMP, le, a <= b) SU(ICMP, gt, a > b) SU(ICMP, ge, a >= b)
SU(ITER, clamp, (a > b ? a : b) < c ? (a > b ? a : b) : c)
SU(ITER, fma, (uint64_t)a * (uint64_t)b + (uint64_t)c)

/* Bool lanes (uint8_t 0/1). */
LANES1(b_not, uint8_t, uint8_t, a ^ 1) LANES2(b_and, uint8_t, uint8_t, a & b)
LANES2(b_or, uint8_t, uint8_t, a | b) LANES2(b_xor, uint8_t, uint8_t, a ^ b)
LANES2(b_eq, uint8_t, uint8_t, a == b) LANES2(b_ne, uint8_t, uint8_t, a != b)
LANES2(b_lt, uint8_t, uint8_t, a < b) LANES2(b_le, uint8_t, uint8_t, a <= b)
LANES2(b_gt, uint8_t, uint8_t, a > b) LANES2(b_ge, uint8_t, uint8_t, a >= b)

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
CONST_FN(const_f, float, f) CONST_FN(const_d, double, d) CONST_FN(const_i64, int64_t, i64)
CONST_FN(const_u8, uint8_t, u8)

/* CAST. Sources: f (float), d (double), s (int64), u (uint64), b (bool).
 * Destinations by lane form, plus float -> integer by dtype, which
 * saturates to that dtype's range. The post-pass wraps int -> narrower int. */
#define CAST_FROM(src, TA)                                                                         \
  LANES1(cast_##src##_f, TA, float, a) LANES1(cast_##src##_d, TA, double, a)                       \
  LANES1(cast_##src##_s, TA, int64_t, a) LANES1(cast_##src##_u, TA, uint64_t, a)                   \
  LANES1(cast_##src##_b, TA, uint8_t, a != 0)
CAST_FROM(s, int64_t) CAST_FROM(u, uint64_t) CAST_FROM(b, uint8_t)
LANES1(cast_f_f, float, float, a) LANES1(cast_f_d, float, double, a) LANES1(cast_f_b, float, uint8_t, a != 0)
LANES1(cast_d_f, double, float, a) LANES1(cast_d_d, double, double, a)
LANES1(cast_d_b, double, uint8_t, a != 0)
LANES1(cast_d_h, double, float, rt_h2f(rt_d2h(a))) /* f64 -> f16 in one rounding */
#define CAST_TO_INT(src, TA)                                                                       \
  LANES1(cast_##src##_i64, TA, int64_t, vd_sat(a, INT64_MIN, INT64_MAX))                           \
  LANES1(cast_##src##_i32, TA, int64_t, vd_sat(a, INT32_MIN, INT32_MAX))                           \
  LANES1(cast_##src##_i16, TA, int64_t, vd_sat(a, INT16_MIN, INT16_MAX))                           \
  LANES1(cast_##src##_i8, TA, int64_t, vd_sat(a, INT8_MIN, INT8_MAX))                              \
  LANES1(cast_##src##_u64, TA, uint64_t, vd_satu(a, UINT64_MAX))                                   \
  LANES1(cast_##src##_u32, TA, uint64_t, vd_satu(a, UINT32_MAX))                                   \
  LANES1(cast_##src##_u16, TA, uint64_t, vd_satu(a, UINT16_MAX))                                   \
  LANES1(cast_##src##_u8, TA, uint64_t, vd_satu(a, UINT8_MAX))
CAST_TO_INT(f, float) CAST_TO_INT(d, double)
    /* clang-format on */

    /* ---- choosing a lane function ---- */

    typedef enum lane_kind {
      LK_F,
      LK_D,
      LK_S,
      LK_U,
      LK_B,
      LK_BAD
    } lane_kind;

static lane_kind lane_of(int dt) {
  switch (dt) {
  case DT_FLOAT32:
  case DT_FLOAT16: return LK_F;
  case DT_DOUBLE: return LK_D;
  case DT_INT64:
  case DT_INT32:
  case DT_INT16:
  case DT_INT8: return LK_S;
  case DT_UINT64:
  case DT_UINT32:
  case DT_UINT16:
  case DT_UINT8: return LK_U;
  case DT_BOOL: return LK_B;
  default: return LK_BAD;
  }
}

/* fns[] indexed by lane kind f, d, s, u, b (NULL = not defined). */
#define BY_LANE(f, d, s, u, b) ((const rt_vlane_fn[]){f, d, s, u, b})
#define NUM(op) BY_LANE(f_##op, d_##op, s_##op, u_##op, NULL)
#define INT(op) BY_LANE(NULL, NULL, s_##op, u_##op, NULL)
#define FLT(op) BY_LANE(f_##op, d_##op, NULL, NULL, NULL)
#define CMP(op) BY_LANE(f_##op, d_##op, s_##op, u_##op, b_##op)
#define CASTS(src) BY_LANE(cast_##src##_f, cast_##src##_d, cast_##src##_s, cast_##src##_u, cast_##src##_b)

/* CAST from float lanes (f: float, else double) to integer dtype dt. */
static rt_vlane_fn cast_float_to_int(int f, int dt) {
  switch (dt) {
  case DT_INT64: return f ? cast_f_i64 : cast_d_i64;
  case DT_INT32: return f ? cast_f_i32 : cast_d_i32;
  case DT_INT16: return f ? cast_f_i16 : cast_d_i16;
  case DT_INT8: return f ? cast_f_i8 : cast_d_i8;
  case DT_UINT64: return f ? cast_f_u64 : cast_d_u64;
  case DT_UINT32: return f ? cast_f_u32 : cast_d_u32;
  case DT_UINT16: return f ? cast_f_u16 : cast_d_u16;
  default: return f ? cast_f_u8 : cast_d_u8;
  }
}

static rt_vlane_fn cast_fn(int dt, lane_kind k, lane_kind ka) {
  switch (ka) {
  case LK_F:
    if (k == LK_S || k == LK_U) return cast_float_to_int(1, dt);
    return BY_LANE(cast_f_f, cast_f_d, NULL, NULL, cast_f_b)[k];
  case LK_D:
    if (dt == DT_FLOAT16) return cast_d_h;
    if (k == LK_S || k == LK_U) return cast_float_to_int(0, dt);
    return BY_LANE(cast_d_f, cast_d_d, NULL, NULL, cast_d_b)[k];
  case LK_S: return CASTS(s)[k];
  case LK_U: return CASTS(u)[k];
  default: return CASTS(b)[k];
  }
}

rt_vlane_fn rt_vprog_lane_fn(int op, int dt, int adt) {
  lane_kind k = lane_of(dt), ka = lane_of(adt);
  if (k == LK_BAD || ka == LK_BAD) return NULL;
  switch (op) {
  case VOP_CONST: return BY_LANE(const_f, const_d, const_i64, const_i64, const_u8)[k];
  case VOP_CAST: return cast_fn(dt, k, ka);
  case VOP_NEG: return NUM(neg)[k];
  case VOP_ABS: return NUM(abs)[k];
  case VOP_SIGN: return NUM(sign)[k];
  case VOP_NOT: return k == LK_B ? b_not : NULL;
  case VOP_BITNOT: return INT(bitnot)[k];
  case VOP_EXP: return k == LK_F && rt_cpu()->exp ? f_exp_host : FLT(exp)[k];
  case VOP_LOG: return FLT(log)[k];
  case VOP_SQRT: return FLT(sqrt)[k];
  case VOP_RSQRT: return FLT(rsqrt)[k];
  case VOP_RECIP: return FLT(recip)[k];
  case VOP_TANH: return FLT(tanh)[k];
  case VOP_SIGMOID: return k == LK_F && rt_cpu()->sigmoid ? f_sigmoid_host : FLT(sigmoid)[k];
  case VOP_ERF: return k == LK_F && rt_cpu()->erf ? f_erf_host : FLT(erf)[k];
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
  case VOP_FMOD: return k == LK_U ? u_mod : BY_LANE(f_fmod, d_fmod, s_fmod, NULL, NULL)[k];
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
    return k == LK_F ? select4 : k == LK_B ? select1 : select8;
  case VOP_CLAMP: return NUM(clamp)[k];
  case VOP_FMA: return k == LK_F && rt_cpu()->fma ? f_fma_host : NUM(fma)[k];
  default: return NULL;
  }
}

uint64_t rt_vprog_upow(uint64_t a, uint64_t e) {
  uint64_t r = 1;
  for (; e; e >>= 1) {
    if (e & 1) r *= a;
    a *= a;
  }
  return r;
}

int rt_vprog_post(int op, int dt, int adt) {
  if (op == VOP_CONST || op == VOP_SELECT) return RT_VPOST_NONE; /* already in range */
  switch (dt) {
  case DT_FLOAT16: return op == VOP_CAST && adt == DT_FLOAT16 ? RT_VPOST_NONE : RT_VPOST_F16;
  case DT_INT32: return RT_VPOST_S32;
  case DT_INT16: return RT_VPOST_S16;
  case DT_INT8: return RT_VPOST_S8;
  case DT_UINT32: return RT_VPOST_U32;
  case DT_UINT16: return RT_VPOST_U16;
  case DT_UINT8: return RT_VPOST_U8;
  default: return RT_VPOST_NONE;
  }
}

/* ---- memory steps ---- */

/* Lane bytes of a register dtype: 4 for f32/f16, 1 for bool, else 8. */
static size_t lane_bytes(uint32_t dt) {
  return dt == DT_FLOAT16 || dt == DT_FLOAT32 ? 4 : dt == DT_BOOL ? 1 : 8;
}

#define WIDEN(TS, TD)                                                                                        \
  {                                                                                                          \
    const TS *restrict s = (const TS *)src + at;                                                             \
    TD *restrict d = dst;                                                                                    \
    for (uint32_t i = 0; i < n; i++)                                                                         \
      d[i] = s[i];                                                                                           \
  }                                                                                                          \
  return;

/* n stored elements from src[at..] into lanes (integers sign- or zero-extended to 64 bits). */
static void load_run(uint32_t dt, const void *src, uint64_t at, void *dst, uint32_t n) {
  switch (dt) {
  case DT_FLOAT16: {
    const uint16_t *restrict s = (const uint16_t *)src + at;
    float *restrict d = dst;
    if (rt_cpu()->h2f)
      rt_cpu()->h2f(d, s, n);
    else
      for (uint32_t i = 0; i < n; i++)
        d[i] = rt_h2f(rt_h_quiet(s[i]));
    return;
  }
  case DT_BOOL: {
    const uint8_t *restrict s = (const uint8_t *)src + at;
    uint8_t *restrict d = dst;
    for (uint32_t i = 0; i < n; i++)
      d[i] = s[i] != 0;
    return;
  }
  case DT_INT32: WIDEN(int32_t, int64_t)
  case DT_INT16: WIDEN(int16_t, int64_t)
  case DT_INT8: WIDEN(int8_t, int64_t)
  case DT_UINT32: WIDEN(uint32_t, uint64_t)
  case DT_UINT16: WIDEN(uint16_t, uint64_t)
  case DT_UINT8: WIDEN(uint8_t, uint64_t)
  default: { /* f32, f64, i64, u64: lanes are the stored form */
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
    for (uint32_t i = 1; i < n; i++)
      d[i] = d[0];
    return;
  }
  case 4: {
    uint32_t *d = dst;
    for (uint32_t i = 1; i < n; i++)
      d[i] = d[0];
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
    if (in->strides[last])
      load_run(in->dtype, src, (uint64_t)off, dst + done * lb, run);
    else
      fill_run(in->dtype, src, (uint64_t)off, dst + done * lb, run);
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

#define NARROW(TD)                                                                                           \
  {                                                                                                          \
    const uint64_t *restrict s = (const uint64_t *)(const void *)lanes;                                      \
    TD *restrict d = (TD *)out + e;                                                                          \
    for (uint32_t i = 0; i < n; i++)                                                                         \
      d[i] = (TD)s[i];                                                                                       \
  }                                                                                                          \
  break;

/* Lanes into output elements [e, e + n), then NC1HWC0 padding lanes to 0. */
static void store(const rt_vplan *p, uint32_t dt, void *out, uint64_t e, uint32_t n, const uint8_t *lanes) {
  size_t es = dtype_size((int)dt);
  switch (dt) {
  case DT_FLOAT16: {
    const float *restrict s = (const float *)(const void *)lanes;
    uint16_t *restrict d = (uint16_t *)out + e;
    if (rt_cpu()->f2h)
      rt_cpu()->f2h(d, s, n);
    else
      for (uint32_t i = 0; i < n; i++)
        d[i] = rt_f2h(s[i]);
    break;
  }
  case DT_INT32:
  case DT_UINT32: NARROW(uint32_t)
  case DT_INT16:
  case DT_UINT16: NARROW(uint16_t)
  case DT_INT8:
  case DT_UINT8: NARROW(uint8_t)
  default: memcpy((uint8_t *)out + e * es, lanes, n * es); /* f32, f64, i64, u64, bool */
  }
  if (p->pad_from) zero_padding(p, es, out, e, n);
}

/* A step's post-pass (rt_vprog_post): f16 rounding or wrapping to a narrow integer. */
#define WRAP(T, LT)                                                                                          \
  {                                                                                                          \
    LT *restrict x = (LT *)(void *)d;                                                                        \
    for (uint32_t i = 0; i < n; i++)                                                                         \
      x[i] = (T)x[i];                                                                                        \
  }                                                                                                          \
  return;
static void fix_lanes(int post, uint8_t *d, uint32_t n) {
  switch (post) {
  case RT_VPOST_F16: {
    float *restrict x = (float *)(void *)d;
    if (rt_cpu()->round16)
      rt_cpu()->round16(x, n);
    else
      for (uint32_t i = 0; i < n; i++)
        x[i] = rt_h2f(rt_f2h(x[i]));
    return;
  }
  case RT_VPOST_S32: WRAP(int32_t, int64_t)
  case RT_VPOST_S16: WRAP(int16_t, int64_t)
  case RT_VPOST_S8: WRAP(int8_t, int64_t)
  case RT_VPOST_U32: WRAP(uint32_t, uint64_t)
  case RT_VPOST_U16: WRAP(uint16_t, uint64_t)
  case RT_VPOST_U8: WRAP(uint8_t, uint64_t)
  default: return;
  }
}

/* The native function's row steps (outer) and element sizes (es) per
 * tensor: an input's stride along the second-last dim, an output's row. */
static void native_steps(const rt_vplan *p, int64_t *outer, size_t *es) {
  const uint32_t nin = p->ninputs, nt = p->ninputs + p->noutputs, last = p->ndims - 1;
  for (uint32_t t = 0; t < nt; t++) {
    es[t] = dtype_size((int)(t < nin ? p->in[t].dtype : p->out_dtype[t - nin]));
    outer[t] = t >= nin ? p->dims[last] : last ? p->in[t].strides[last - 1] : 0;
  }
}

/* Each tensor's address of element e (at index idx of the plan's dims). */
static void native_ptrs(const rt_vplan *p, void *const *data, uint64_t e, const uint64_t *idx,
                        const size_t *es, void **ptr) {
  const uint32_t nin = p->ninputs, nt = p->ninputs + p->noutputs, last = p->ndims - 1;
  for (uint32_t t = 0; t < nt; t++) {
    int64_t off = (int64_t)e;
    if (t < nin) {
      off = 0;
      for (uint32_t k = 0; k <= last; k++)
        off += (int64_t)idx[k] * p->in[t].strides[k];
    }
    ptr[t] = (uint8_t *)data[t] + (size_t)off * es[t];
  }
}

/* idx = element e's index in the plan's dims. */
static void native_index(const rt_vplan *p, uint64_t e, uint64_t *idx) {
  for (uint32_t k = p->ndims; k-- > 0;) {
    idx[k] = e % (uint64_t)p->dims[k];
    e /= (uint64_t)p->dims[k];
  }
}

/* Elements [e, end) through the plan's native function. */
static void run_native(const rt_vplan *p, void *const *data, uint64_t e, uint64_t end) {
  uint32_t nin = p->ninputs, last = p->ndims - 1;
  uint64_t idx[RT_VMAX_DIMS], start = e;
  int64_t outer[2 * VPROG_MAX_IO];
  size_t es[2 * VPROG_MAX_IO];
  void *ptr[2 * VPROG_MAX_IO];
  native_index(p, e, idx);
  native_steps(p, outer, es);
  while (e < end) {
    uint64_t left = end - e, cols = (uint64_t)p->dims[last], rows = 1;
    if (idx[last] == 0 && last > 0 && left >= cols) {
      uint64_t fit = (uint64_t)p->dims[last - 1] - idx[last - 1];
      rows = left / cols < fit ? left / cols : fit;
    } else {
      cols = cols - idx[last] < left ? cols - idx[last] : left;
    }
    native_ptrs(p, data, e, idx, es, ptr);
    p->native(ptr, outer, rows, cols);
    e += rows * cols;
    if (rows > 1)
      idx[last - 1] += rows;
    else
      idx[last] += cols;
    if (last > 0 && idx[last] == (uint64_t)p->dims[last]) idx[last] = 0, idx[last - 1]++;
    for (uint32_t k = last; k-- > 1 && idx[k] == (uint64_t)p->dims[k];)
      idx[k] = 0, idx[k - 1]++;
  }
  if (p->pad_from)
    for (uint32_t o = 0; o < p->noutputs; o++)
      zero_padding(p, es[nin + o], data[nin + o], start, end - start);
}

void rt_vplan_exec_rows(const rt_vplan *p, void *const *data, uint64_t e0, uint64_t rows, uint64_t cols,
                        uint64_t ld, uint8_t *ub) {
  const uint32_t last = p->ndims - 1;
  if (!p->native || p->ndims < 2 || (uint64_t)p->dims[last] != ld || p->pad_from || e0 % ld + cols > ld) {
    for (uint64_t r = 0; r < rows; r++)
      rt_vplan_exec(p, data, e0 + r * ld, e0 + r * ld + cols, ub);
    return;
  }
  uint64_t idx[RT_VMAX_DIMS];
  int64_t outer[2 * VPROG_MAX_IO];
  size_t es[2 * VPROG_MAX_IO];
  void *ptr[2 * VPROG_MAX_IO];
  native_index(p, e0, idx);
  native_steps(p, outer, es);
  while (rows > 0) { /* runs of rows within the second-last dim, one call each */
    const uint64_t fit = (uint64_t)p->dims[last - 1] - idx[last - 1], n = rows < fit ? rows : fit;
    native_ptrs(p, data, e0, idx, es, ptr);
    p->native(ptr, outer, n, cols);
    rows -= n, e0 += n * ld, idx[last - 1] += n;
    for (uint32_t k = last; k-- > 1 && idx[k] == (uint64_t)p->dims[k];)
      idx[k] = 0, idx[k - 1]++;
  }
}

void rt_vprog_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  const rt_vplan *p = args->aux;
  uint64_t lo, hi;
  rt_block_range(p->tiles, task->block_dim, block, &lo, &hi);
  uint64_t end = hi * RT_VTILE < p->total ? hi * RT_VTILE : p->total;
  rt_vplan_exec(p, args->data, lo * RT_VTILE, end, core->ub);
}

void rt_vplan_exec(const rt_vplan *p, void *const *data, uint64_t start, uint64_t end, uint8_t *ub) {
  if (p->native) {
    if (start < end) run_native(p, data, start, end);
    return;
  }
  for (uint64_t e = start; e < end; e += p->lanes) {
    uint32_t n = end - e < p->lanes ? (uint32_t)(end - e) : p->lanes;
    for (uint32_t k = 0; k < p->nsteps; k++) {
      const rt_vstep *s = &p->steps[k];
      switch (s->kind) {
      case RT_VSTEP_LOAD: gather(p, &p->in[s->io], data[s->io], e, n, ub + s->d); break;
      case RT_VSTEP_STORE: store(p, p->out_dtype[s->io], data[p->ninputs + s->io], e, n, ub + s->a); break;
      default:
        s->fn(s, ub, n);
        if (s->post) fix_lanes(s->post, ub + s->d, n);
      }
    }
  }
}
