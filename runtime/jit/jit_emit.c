/* jit_emit.c - builds the LLVM IR of a vector program's native function
 * (rt_vnative_fn, runtime/vprog_plan.h) through LLVM's C API.
 *
 * The function walks `rows` rows of `cols` elements. Per row it runs a
 * vector loop of VPIR_WIDTH lanes, then a scalar loop for the rest; both
 * bodies come from one generator (emit_body), parametrised by the width:
 * each instruction becomes the same operation on <W x T> or on T. Inputs
 * contiguous along the row are loaded as vectors, broadcast ones are loaded
 * once per row position and splatted. STOREs come after every other
 * instruction, so an output may alias a same-shaped input; instructions no
 * STORE needs are not emitted.
 *
 * Lane types: f32 and f16 registers are float (an f16 result is rounded to
 * half and back after every instruction that computes one, exactly where
 * the interpreter rounds: not after CONST (pre-rounded), SELECT, or a CAST
 * from f16), f64 is double, integers are LLVM integers of their width
 * (i64/u64 as i64, i32/u32 as i32, i16/u16 as i16, i8/u8 as i8; the dtype
 * says which compares, divisions, shifts and extensions are unsigned), bool
 * as i1. Native-width integer arithmetic wraps exactly as the interpreter's
 * 64-bit arithmetic followed by its wrap to the width. f64 -> f16 casts
 * round once (fptrunc double -> half).
 * Every rule below is the interpreter's (runtime/vprog_exec.c, vf_* / vi_*
 * helpers; runtime/vprog_plan.c lists them): integer division and remainders by
 * 0 (and by -1) are handled by selects around a safe divisor, shift counts
 * >= the width give 0, float MAX / MIN propagate a NaN first operand,
 * float -> int casts saturate with NaN -> 0 (fto_int_sat), and math
 * functions call the libm functions the interpreter calls, lane by lane
 * (vpir_externs), so results agree bit for bit. EXP (also inside
 * SOFTPLUS), SIGMOID and ERF on float lanes are inline vector code: the vector
 * unit's own om_vexp, om_vsigmoid and om_verf (common/vmath.h), step for step, as
 * the interpreter computes them.
 */
#include "runtime/jit/jit_emit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/types.h"
#include "common/vmath.h"
#include "runtime/elem.h"
#include "runtime/kernels.h"
#include "runtime/vprog_plan.h"

/* Integer POW with the interpreter's rules (vi_pow in vprog_exec.c): wraps;
 * a negative exponent gives 1 for base 1, +-1 for base -1, else 0. */
static int64_t vpir_ipow(int64_t a, int64_t e) {
  if (e < 0) return a == 1 ? 1 : a == -1 ? ((e & 1) ? -1 : 1) : 0;
  uint64_t r = 1, x = (uint64_t)a;
  for (; e; e >>= 1) {
    if (e & 1) r *= x;
    x *= x;
  }
  return (int64_t)r;
}

/* f64 -> f16 (as float lanes) with the interpreter's single rounding. */
static float vpir_d2h(double d) { return rt_h2f(rt_d2h(d)); }

const vpir_extern vpir_externs[] = {
    {"expf", (void *)expf},
    {"logf", (void *)logf},
    {"log1pf", (void *)log1pf},
    {"tanhf", (void *)tanhf},
    {"sinf", (void *)sinf},
    {"cosf", (void *)cosf},
    {"tanf", (void *)tanf},
    {"asinf", (void *)asinf},
    {"acosf", (void *)acosf},
    {"atanf", (void *)atanf},
    {"sinhf", (void *)sinhf},
    {"coshf", (void *)coshf},
    {"asinhf", (void *)asinhf},
    {"acoshf", (void *)acoshf},
    {"atanhf", (void *)atanhf},
    {"powf", (void *)powf},
    {"fmodf", (void *)fmodf},
    {"vpir_ipow", (void *)vpir_ipow},
    {"vpir_upow", (void *)rt_vprog_upow},
    {"vpir_d2h", (void *)vpir_d2h},
    {"exp", (void *)exp},
    {"log", (void *)log},
    {"log1p", (void *)log1p},
    {"tanh", (void *)tanh},
    {"erf", (void *)erf},
    {"sin", (void *)sin},
    {"cos", (void *)cos},
    {"tan", (void *)tan},
    {"asin", (void *)asin},
    {"acos", (void *)acos},
    {"atan", (void *)atan},
    {"sinh", (void *)sinh},
    {"cosh", (void *)cosh},
    {"asinh", (void *)asinh},
    {"acosh", (void *)acosh},
    {"atanh", (void *)atanh},
    {"pow", (void *)pow},
    {"fmod", (void *)fmod},
    {NULL, NULL},
};

typedef struct gen {
  LLVMContextRef cx;
  LLVMModuleRef mod;
  LLVMBuilderRef b;
  const om_vprog *h;
  const om_vinstr *ins;
  uint32_t inner_mask;
  unsigned width;                     /* lanes of the body being emitted: VPIR_WIDTH or 1 */
  LLVMValueRef val[VPROG_MAX_INSTRS]; /* register -> value in the current body */
  LLVMValueRef h16[VPROG_MAX_INSTRS]; /* register -> its half lanes when round16 made it, else NULL */
  LLVMValueRef last_h16;              /* the half lanes of the last round16 */
  uint8_t needed[VPROG_MAX_INSTRS];   /* instruction k is emitted */
} gen;

static int is_f(int dt) { return dt == DT_FLOAT32 || dt == DT_FLOAT16 || dt == DT_DOUBLE; }
static int is_unsigned(int dt) {
  return dt == DT_UINT8 || dt == DT_UINT16 || dt == DT_UINT32 || dt == DT_UINT64 || dt == DT_BOOL;
}

/* The lane element type of a register dtype, and of its stored form. */
static LLVMTypeRef lane_elem(const gen *g, int dt) {
  switch (dt) {
  case DT_FLOAT32:
  case DT_FLOAT16: return LLVMFloatTypeInContext(g->cx);
  case DT_DOUBLE: return LLVMDoubleTypeInContext(g->cx);
  case DT_INT64:
  case DT_UINT64: return LLVMInt64TypeInContext(g->cx);
  case DT_INT32:
  case DT_UINT32: return LLVMInt32TypeInContext(g->cx);
  case DT_INT16:
  case DT_UINT16: return LLVMInt16TypeInContext(g->cx);
  case DT_BOOL: return LLVMInt1TypeInContext(g->cx);
  default: return LLVMInt8TypeInContext(g->cx); /* i8, u8 */
  }
}
static LLVMTypeRef stored_elem(const gen *g, int dt) {
  if (dt == DT_FLOAT16) return LLVMHalfTypeInContext(g->cx);
  if (dt == DT_BOOL) return LLVMInt8TypeInContext(g->cx);
  return lane_elem(g, dt);
}
static LLVMTypeRef vec(const gen *g, LLVMTypeRef elem) {
  return g->width == 1 ? elem : LLVMVectorType(elem, g->width);
}
static LLVMTypeRef lane_type(const gen *g, int dt) { return vec(g, lane_elem(g, dt)); }

/* A constant of lane type t (scalar or vector) from a scalar constant. */
static LLVMValueRef splat_const(const gen *g, LLVMValueRef c) {
  if (g->width == 1) return c;
  LLVMValueRef elems[VPIR_WIDTH];
  for (unsigned i = 0; i < g->width; i++)
    elems[i] = c;
  return LLVMConstVector(elems, g->width);
}
static LLVMValueRef cint(const gen *g, int dt, int64_t v) {
  return splat_const(g, LLVMConstInt(lane_elem(g, dt), (unsigned long long)v, 1));
}
static LLVMValueRef cflt(const gen *g, double v) {
  return splat_const(g, LLVMConstReal(LLVMFloatTypeInContext(g->cx), v));
}
/* A constant of float dtype dt's lane type (float or double). */
static LLVMValueRef cfp(const gen *g, int dt, double v) {
  return splat_const(g, LLVMConstReal(lane_elem(g, dt), v));
}
/* A run-time scalar repeated in every lane. */
static LLVMValueRef splat(const gen *g, LLVMValueRef v) {
  if (g->width == 1) return v;
  LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(v), g->width);
  LLVMValueRef i0 = LLVMConstInt(LLVMInt32TypeInContext(g->cx), 0, 0);
  LLVMValueRef one = LLVMBuildInsertElement(g->b, LLVMGetPoison(vt), v, i0, "");
  return LLVMBuildShuffleVector(g->b, one, LLVMGetPoison(vt),
                                LLVMConstNull(LLVMVectorType(LLVMInt32TypeInContext(g->cx), g->width)), "");
}

/* A call of the overloaded intrinsic `name` on types tys. */
static LLVMValueRef intrinsic(const gen *g, const char *name, LLVMTypeRef *tys, unsigned ntys,
                              LLVMValueRef *args, unsigned nargs) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(g->mod, id, tys, ntys);
  LLVMTypeRef ft = LLVMIntrinsicGetType(g->cx, id, tys, ntys);
  return LLVMBuildCall2(g->b, ft, fn, args, nargs, "");
}
static LLVMValueRef fintr1(const gen *g, const char *name, LLVMValueRef a) {
  LLVMTypeRef t = LLVMTypeOf(a);
  return intrinsic(g, name, &t, 1, &a, 1);
}

/* A scalar extern (vpir_externs) applied lane by lane: f(a[, b]) of type ret
 * on args of type arg. */
static LLVMValueRef call_lanes(const gen *g, const char *name, LLVMTypeRef ret, LLVMTypeRef arg,
                               LLVMValueRef a, LLVMValueRef b) {
  LLVMTypeRef argtys[2] = {arg, arg};
  unsigned n = b ? 2 : 1;
  LLVMTypeRef ft = LLVMFunctionType(ret, argtys, n, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(g->mod, name);
  if (!fn) fn = LLVMAddFunction(g->mod, name, ft);
  if (g->width == 1) {
    LLVMValueRef args[2] = {a, b};
    return LLVMBuildCall2(g->b, ft, fn, args, n, "");
  }
  LLVMValueRef out = LLVMGetPoison(LLVMVectorType(ret, g->width));
  for (unsigned i = 0; i < g->width; i++) {
    LLVMValueRef idx = LLVMConstInt(LLVMInt32TypeInContext(g->cx), i, 0);
    LLVMValueRef args[2] = {LLVMBuildExtractElement(g->b, a, idx, ""),
                            b ? LLVMBuildExtractElement(g->b, b, idx, "") : NULL};
    out = LLVMBuildInsertElement(g->b, out, LLVMBuildCall2(g->b, ft, fn, args, n, ""), idx, "");
  }
  return out;
}
/* libm's `name` ("exp") lane by lane: its float version ("expf") for f32 /
 * f16 registers, its double version for f64 ones. */
static LLVMValueRef libm(const gen *g, int dt, const char *name, LLVMValueRef a, LLVMValueRef b) {
  char fname[16];
  snprintf(fname, sizeof fname, "%s%s", name, dt == DT_DOUBLE ? "" : "f");
  LLVMTypeRef t = lane_elem(g, dt);
  return call_lanes(g, fname, t, t, a, b);
}

static LLVMValueRef fcmp(const gen *g, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFCmp(g->b, p, a, b, "");
}
static LLVMValueRef icmp(const gen *g, LLVMIntPredicate p, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildICmp(g->b, p, a, b, "");
}
static LLVMValueRef sel(const gen *g, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(g->b, c, a, b, "");
}

/* vf_max / vf_min: a when a > b (a < b) or a is NaN, else b. */
static LLVMValueRef fmaxmin(const gen *g, int max, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef pick_a =
      LLVMBuildOr(g->b, fcmp(g, max ? LLVMRealOGT : LLVMRealOLT, a, b), fcmp(g, LLVMRealUNO, a, a), "");
  return sel(g, pick_a, a, b);
}
static LLVMValueRef imaxmin(const gen *g, int dt, int max, LLVMValueRef a, LLVMValueRef b) {
  LLVMIntPredicate p = is_unsigned(dt) ? (max ? LLVMIntUGT : LLVMIntULT) : (max ? LLVMIntSGT : LLVMIntSLT);
  return sel(g, icmp(g, p, a, b), a, b);
}

/* v behind llvm.arithmetic.fence: no code, but InstCombine cannot look
 * through it. Every fpext from half and every fptrunc to half has one on its
 * float side, so no compare or arithmetic op is narrowed to half vectors,
 * which the x86 backend (no half arithmetic before AVX512-FP16) splits
 * into one convert-compute-convert per lane. */
static LLVMValueRef fence(const gen *g, LLVMValueRef v) { return fintr1(g, "llvm.arithmetic.fence", v); }

/* Rounds float lanes to f16 and back. */
static LLVMValueRef round16(gen *g, LLVMValueRef v) {
  LLVMValueRef h = LLVMBuildFPTrunc(g->b, fence(g, v), vec(g, LLVMHalfTypeInContext(g->cx)), "");
  g->last_h16 = h;
  return fence(g, LLVMBuildFPExt(g->b, h, lane_type(g, DT_FLOAT32), ""));
}

/* Float lanes a (dtype adt) -> integer dtype dt, saturating, NaN -> 0: the
 * semantics of llvm.fpto[su]i.sat, which the x86 backend expands lane by
 * lane with compares and branches (a quantized model's QuantizeLinear spent
 * most of its time there). Here: NaN -> 0, then a clamp to [lo, the largest
 * source value below hi + 1] and a plain conversion, which truncates as the
 * saturating one does; where that value truncates below hi (an integer
 * wider than the source's mantissa), lanes >= hi + 1 select hi. */
static LLVMValueRef fto_int_sat(const gen *g, int dt, int adt, LLVMValueRef a) {
  const unsigned w = LLVMGetIntTypeWidth(lane_elem(g, dt));
  const int uns = is_unsigned(dt), dbl = adt == DT_DOUBLE;
  const double top = ldexp(1.0, uns ? (int)w : (int)w - 1), lo = uns ? 0.0 : -top; /* top = hi + 1 */
  const double below = dbl ? nextafter(top, 0.0) : (double)nextafterf((float)top, 0.0f);
  const uint64_t hi = uns ? (w == 64 ? UINT64_MAX : (UINT64_C(1) << w) - 1) : (UINT64_C(1) << (w - 1)) - 1;
  LLVMValueRef x = sel(g, fcmp(g, LLVMRealUNO, a, a), cfp(g, adt, 0), a);
  x = sel(g, fcmp(g, LLVMRealOLT, x, cfp(g, adt, lo)), cfp(g, adt, lo), x);
  x = sel(g, fcmp(g, LLVMRealOGT, x, cfp(g, adt, below)), cfp(g, adt, below), x);
  LLVMTypeRef t = lane_type(g, dt);
  LLVMValueRef r = uns ? LLVMBuildFPToUI(g->b, x, t, "") : LLVMBuildFPToSI(g->b, x, t, "");
  if ((uint64_t)below < hi)
    r = sel(g, fcmp(g, LLVMRealOGE, a, cfp(g, adt, top)), cint(g, dt, (int64_t)hi), r);
  return r;
}

static LLVMValueRef emit_cast(const gen *g, int dt, int adt, LLVMValueRef a) {
  LLVMTypeRef t = lane_type(g, dt);
  if (is_f(adt)) {
    if (adt == DT_DOUBLE && dt == DT_FLOAT16) /* one rounding, as the interpreter's rt_d2h */
      return call_lanes(g, "vpir_d2h", LLVMFloatTypeInContext(g->cx), LLVMDoubleTypeInContext(g->cx), a,
                        NULL);
    if (is_f(dt))
      return (adt == DT_DOUBLE) == (dt == DT_DOUBLE) ? a
             : dt == DT_DOUBLE                       ? LLVMBuildFPExt(g->b, a, t, "")
                                                     : LLVMBuildFPTrunc(g->b, a, t, "");
    if (dt == DT_BOOL) return fcmp(g, LLVMRealUNE, a, cfp(g, adt, 0));
    return fto_int_sat(g, dt, adt, a);
  }
  if (is_f(dt)) return is_unsigned(adt) ? LLVMBuildUIToFP(g->b, a, t, "") : LLVMBuildSIToFP(g->b, a, t, "");
  if (dt == DT_BOOL) return adt == DT_BOOL ? a : icmp(g, LLVMIntNE, a, cint(g, adt, 0));
  unsigned wa = LLVMGetIntTypeWidth(lane_elem(g, adt)), wd = LLVMGetIntTypeWidth(lane_elem(g, dt));
  if (wa == wd) return a;
  if (wa > wd) return LLVMBuildTrunc(g->b, a, t, "");
  return is_unsigned(adt) ? LLVMBuildZExt(g->b, a, t, "") : LLVMBuildSExt(g->b, a, t, "");
}

/* om_vexp (common/vmath.h) on float lanes, step for step. */
static LLVMValueRef emit_exp(const gen *g, LLVMValueRef x) {
  LLVMTypeRef vi32 = lane_type(g, DT_INT32);
  LLVMValueRef c = sel(g, fcmp(g, LLVMRealULT, x, cflt(g, VEXP_LO)), cflt(g, VEXP_LO), x);
  c = sel(g, fcmp(g, LLVMRealOGT, c, cflt(g, VEXP_HI)), cflt(g, VEXP_HI), c);
  LLVMValueRef t =
      LLVMBuildFAdd(g->b, LLVMBuildFMul(g->b, c, cflt(g, VEXP_LOG2E), ""), cflt(g, VEXP_SHIFT), "");
  LLVMValueRef kf = LLVMBuildFSub(g->b, t, cflt(g, VEXP_SHIFT), "");
  LLVMValueRef k = LLVMBuildFPToSI(g->b, kf, vi32, "");
  LLVMValueRef r = LLVMBuildFSub(g->b, c, LLVMBuildFMul(g->b, kf, cflt(g, VEXP_LN2_HI), ""), "");
  r = LLVMBuildFSub(g->b, r, LLVMBuildFMul(g->b, kf, cflt(g, VEXP_LN2_LO), ""), "");
  static const float coef[5] = {VEXP_P1, VEXP_P2, VEXP_P3, VEXP_P4, VEXP_P5};
  LLVMValueRef p = cflt(g, VEXP_P0);
  for (int i = 0; i < 5; i++)
    p = LLVMBuildFAdd(g->b, LLVMBuildFMul(g->b, p, r, ""), cflt(g, coef[i]), "");
  LLVMValueRef y = LLVMBuildFAdd(g->b, LLVMBuildFMul(g->b, p, LLVMBuildFMul(g->b, r, r, ""), ""), r, "");
  y = LLVMBuildFAdd(g->b, y, cflt(g, 1.0f), "");
  LLVMValueRef k2 = LLVMBuildAShr(g->b, k, cint(g, DT_INT32, 1), ""), k1 = LLVMBuildSub(g->b, k, k2, "");
  LLVMValueRef s1 =
      LLVMBuildShl(g->b, LLVMBuildAdd(g->b, k1, cint(g, DT_INT32, 127), ""), cint(g, DT_INT32, 23), "");
  LLVMValueRef s2 =
      LLVMBuildShl(g->b, LLVMBuildAdd(g->b, k2, cint(g, DT_INT32, 127), ""), cint(g, DT_INT32, 23), "");
  LLVMTypeRef vf = lane_type(g, DT_FLOAT32);
  LLVMValueRef e = LLVMBuildFMul(g->b, LLVMBuildFMul(g->b, y, LLVMBuildBitCast(g->b, s1, vf, ""), ""),
                                 LLVMBuildBitCast(g->b, s2, vf, ""), "");
  return sel(g, fcmp(g, LLVMRealUNO, x, x), x, e);
}

static LLVMValueRef fma3(const gen *g, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
  LLVMValueRef args[3] = {a, b, c};
  LLVMTypeRef t = LLVMTypeOf(a);
  return intrinsic(g, "llvm.fma", &t, 1, args, 3);
}

/* om_vsigmoid (common/vmath.h) on float lanes, step for step; the clamps
 * in the forms x86's max / min instructions compute (a NaN passes). */
static LLVMValueRef emit_sigmoid(const gen *g, LLVMValueRef x) {
  LLVMValueRef lo = cflt(g, -VSIG_B), hi = cflt(g, VSIG_B);
  LLVMValueRef c = sel(g, fcmp(g, LLVMRealOGT, lo, x), lo, x);
  c = sel(g, fcmp(g, LLVMRealOLT, hi, c), hi, c);
  LLVMValueRef z = LLVMBuildFMul(g->b, c, c, "");
  LLVMValueRef p = fma3(g, cflt(g, VSIG_P4), z, cflt(g, VSIG_P3));
  p = fma3(g, p, z, cflt(g, VSIG_P2));
  p = fma3(g, p, z, cflt(g, VSIG_P1));
  p = fma3(g, p, z, cflt(g, VSIG_P0));
  LLVMValueRef q = fma3(g, cflt(g, VSIG_Q4), z, cflt(g, VSIG_Q3));
  q = fma3(g, q, z, cflt(g, VSIG_Q2));
  q = fma3(g, q, z, cflt(g, VSIG_Q1));
  q = fma3(g, q, z, cflt(g, 1.0f));
  LLVMValueRef s =
      LLVMBuildFAdd(g->b, LLVMBuildFDiv(g->b, LLVMBuildFMul(g->b, c, p, ""), q, ""), cflt(g, 0.5f), "");
  s = sel(g, fcmp(g, LLVMRealOGT, cflt(g, 0.0f), s), cflt(g, 0.0f), s);
  return sel(g, fcmp(g, LLVMRealOLT, cflt(g, 1.0f), s), cflt(g, 1.0f), s);
}

/* om_verf (common/vmath.h) on float lanes, step for step, the clamps as
 * emit_sigmoid's. */
static LLVMValueRef emit_erf(const gen *g, LLVMValueRef x) {
  LLVMValueRef lo = cflt(g, -VERF_B), hi = cflt(g, VERF_B);
  LLVMValueRef c = sel(g, fcmp(g, LLVMRealOGT, lo, x), lo, x);
  c = sel(g, fcmp(g, LLVMRealOLT, hi, c), hi, c);
  LLVMValueRef z = LLVMBuildFMul(g->b, c, c, "");
  static const float pc[4] = {VERF_P3, VERF_P2, VERF_P1, VERF_P0}, qc[4] = {VERF_Q3, VERF_Q2, VERF_Q1, 1.0f};
  LLVMValueRef p = fma3(g, cflt(g, VERF_P5), z, cflt(g, VERF_P4));
  LLVMValueRef q = fma3(g, cflt(g, VERF_Q5), z, cflt(g, VERF_Q4));
  for (int i = 0; i < 4; i++) {
    p = fma3(g, p, z, cflt(g, pc[i]));
    q = fma3(g, q, z, cflt(g, qc[i]));
  }
  LLVMValueRef s = LLVMBuildFDiv(g->b, LLVMBuildFMul(g->b, c, p, ""), q, "");
  s = sel(g, fcmp(g, LLVMRealOGT, cflt(g, -1.0f), s), cflt(g, -1.0f), s);
  return sel(g, fcmp(g, LLVMRealOLT, cflt(g, 1.0f), s), cflt(g, 1.0f), s);
}

/* exp for float dtype dt: emit_exp on float lanes, libm's exp on double ones. */
static LLVMValueRef fexp(const gen *g, int dt, LLVMValueRef x) {
  return dt == DT_DOUBLE ? libm(g, dt, "exp", x, NULL) : emit_exp(g, x);
}

/* A unary instruction on float registers of dtype dt (f32 / f16 as float, f64 as double). */
static LLVMValueRef emit_float_unary(const gen *g, const om_vinstr *in, int dt, LLVMValueRef a) {
  LLVMValueRef zero = cfp(g, dt, 0), one = cfp(g, dt, 1);
  switch (in->op) {
  case VOP_NEG: return LLVMBuildFNeg(g->b, a, "");
  case VOP_ABS: return fintr1(g, "llvm.fabs", a);
  case VOP_SIGN:
    return sel(g, fcmp(g, LLVMRealOGT, a, zero), one,
               sel(g, fcmp(g, LLVMRealOLT, a, zero), cfp(g, dt, -1), a));
  case VOP_EXP: return fexp(g, dt, a);
  case VOP_LOG: return libm(g, dt, "log", a, NULL);
  case VOP_SQRT: return fintr1(g, "llvm.sqrt", a);
  case VOP_RSQRT: return LLVMBuildFDiv(g->b, one, fintr1(g, "llvm.sqrt", a), "");
  case VOP_RECIP: return LLVMBuildFDiv(g->b, one, a, "");
  case VOP_TANH: return libm(g, dt, "tanh", a, NULL);
  case VOP_SIGMOID:
    if (dt != DT_DOUBLE) return emit_sigmoid(g, a);
    return LLVMBuildFDiv(g->b, one, LLVMBuildFAdd(g->b, one, fexp(g, dt, LLVMBuildFNeg(g->b, a, "")), ""),
                         "");
  case VOP_ERF: return dt == DT_DOUBLE ? libm(g, dt, "erf", a, NULL) : emit_erf(g, a);
  case VOP_FLOOR: return fintr1(g, "llvm.floor", a);
  case VOP_CEIL: return fintr1(g, "llvm.ceil", a);
  case VOP_ROUND: return fintr1(g, "llvm.nearbyint", a);
  case VOP_SIN: return libm(g, dt, "sin", a, NULL);
  case VOP_COS: return libm(g, dt, "cos", a, NULL);
  case VOP_TAN: return libm(g, dt, "tan", a, NULL);
  case VOP_ASIN: return libm(g, dt, "asin", a, NULL);
  case VOP_ACOS: return libm(g, dt, "acos", a, NULL);
  case VOP_ATAN: return libm(g, dt, "atan", a, NULL);
  case VOP_SINH: return libm(g, dt, "sinh", a, NULL);
  case VOP_COSH: return libm(g, dt, "cosh", a, NULL);
  case VOP_ASINH: return libm(g, dt, "asinh", a, NULL);
  case VOP_ACOSH: return libm(g, dt, "acosh", a, NULL);
  case VOP_ATANH: return libm(g, dt, "atanh", a, NULL);
  case VOP_SOFTPLUS: { /* a > 0 ? a + log1p(exp(-a)) : log1p(exp(a)), i.e. of exp(-|a|) */
    LLVMValueRef l =
        libm(g, dt, "log1p", fexp(g, dt, LLVMBuildFNeg(g->b, fintr1(g, "llvm.fabs", a), "")), NULL);
    return sel(g, fcmp(g, LLVMRealOGT, a, zero), LLVMBuildFAdd(g->b, a, l, ""), l);
  }
  case VOP_ISNAN: return fcmp(g, LLVMRealUNO, a, a);
  case VOP_ISINF: {
    LLVMValueRef pos = fcmp(g, LLVMRealOEQ, a, cfp(g, dt, INFINITY)),
                 neg = fcmp(g, LLVMRealOEQ, a, cfp(g, dt, -INFINITY));
    LLVMValueRef f = splat_const(g, LLVMConstInt(LLVMInt1TypeInContext(g->cx), 0, 0));
    if (in->imm.i & 1) f = LLVMBuildOr(g->b, f, pos, "");
    if (in->imm.i & 2) f = LLVMBuildOr(g->b, f, neg, "");
    return f;
  }
  }
  return NULL;
}

static LLVMValueRef emit_int_unary(const gen *g, const om_vinstr *in, int dt, LLVMValueRef a) {
  switch (in->op) {
  case VOP_NEG: return LLVMBuildSub(g->b, cint(g, dt, 0), a, "");
  case VOP_ABS:
    return is_unsigned(dt)
               ? a
               : sel(g, icmp(g, LLVMIntSLT, a, cint(g, dt, 0)), LLVMBuildSub(g->b, cint(g, dt, 0), a, ""), a);
  case VOP_SIGN:
    if (is_unsigned(dt))
      return LLVMBuildZExt(g->b, icmp(g, LLVMIntNE, a, cint(g, dt, 0)), lane_type(g, dt), "");
    return sel(g, icmp(g, LLVMIntSGT, a, cint(g, dt, 0)), cint(g, dt, 1),
               sel(g, icmp(g, LLVMIntEQ, a, cint(g, dt, 0)), cint(g, dt, 0), cint(g, dt, -1)));
  case VOP_BITNOT:
  case VOP_NOT: return LLVMBuildXor(g->b, a, cint(g, dt, -1), "");
  }
  return NULL;
}

static LLVMValueRef emit_float_binary(const gen *g, int op, int dt, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef zero = cfp(g, dt, 0);
  switch (op) {
  case VOP_ADD: return LLVMBuildFAdd(g->b, a, b, "");
  case VOP_SUB: return LLVMBuildFSub(g->b, a, b, "");
  case VOP_MUL: return LLVMBuildFMul(g->b, a, b, "");
  case VOP_DIV: return LLVMBuildFDiv(g->b, a, b, "");
  case VOP_FMOD: return libm(g, dt, "fmod", a, b);
  case VOP_MOD: { /* fmod, plus b when non-zero with a sign other than b's */
    LLVMValueRef r = libm(g, dt, "fmod", a, b);
    LLVMValueRef fix = LLVMBuildAnd(
        g->b, fcmp(g, LLVMRealUNE, r, zero),
        LLVMBuildXor(g->b, fcmp(g, LLVMRealOLT, r, zero), fcmp(g, LLVMRealOLT, b, zero), ""), "");
    return sel(g, fix, LLVMBuildFAdd(g->b, r, b, ""), r);
  }
  case VOP_POW: return libm(g, dt, "pow", a, b);
  case VOP_MAX: return fmaxmin(g, 1, a, b);
  case VOP_MIN: return fmaxmin(g, 0, a, b);
  case VOP_EQ: return fcmp(g, LLVMRealOEQ, a, b);
  case VOP_NE: return fcmp(g, LLVMRealUNE, a, b);
  case VOP_LT: return fcmp(g, LLVMRealOLT, a, b);
  case VOP_LE: return fcmp(g, LLVMRealOLE, a, b);
  case VOP_GT: return fcmp(g, LLVMRealOGT, a, b);
  case VOP_GE: return fcmp(g, LLVMRealOGE, a, b);
  }
  return NULL;
}

/* A shift with the interpreter's rule: counts (read as unsigned) >= the width give 0. */
static LLVMValueRef emit_shift(const gen *g, int op, int dt, LLVMValueRef a, LLVMValueRef b) {
  unsigned w = LLVMGetIntTypeWidth(lane_elem(g, dt));
  LLVMValueRef ok = icmp(g, LLVMIntULT, b, cint(g, dt, w)), cnt = sel(g, ok, b, cint(g, dt, 0));
  LLVMValueRef r = op == VOP_SHL     ? LLVMBuildShl(g->b, a, cnt, "")
                   : is_unsigned(dt) ? LLVMBuildLShr(g->b, a, cnt, "")
                                     : LLVMBuildAShr(g->b, a, cnt, "");
  return sel(g, ok, r, cint(g, dt, 0));
}

/* DIV, FMOD, MOD on integers: by 0 give 0, by -1 (signed) wrap / give 0. */
static LLVMValueRef emit_int_div(const gen *g, int op, int dt, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef zero = cint(g, dt, 0), bz = icmp(g, LLVMIntEQ, b, zero);
  if (is_unsigned(dt)) {
    LLVMValueRef sb = sel(g, bz, cint(g, dt, 1), b);
    LLVMValueRef r = op == VOP_DIV ? LLVMBuildUDiv(g->b, a, sb, "") : LLVMBuildURem(g->b, a, sb, "");
    return sel(g, bz, zero, r);
  }
  LLVMValueRef bm1 = icmp(g, LLVMIntEQ, b, cint(g, dt, -1)), bad = LLVMBuildOr(g->b, bz, bm1, "");
  LLVMValueRef sb = sel(g, bad, cint(g, dt, 1), b);
  if (op == VOP_DIV) {
    LLVMValueRef q = LLVMBuildSDiv(g->b, a, sb, "");
    return sel(g, bz, zero, sel(g, bm1, LLVMBuildSub(g->b, zero, a, ""), q));
  }
  LLVMValueRef r = sel(g, bad, zero, LLVMBuildSRem(g->b, a, sb, ""));
  if (op == VOP_FMOD) return r;
  LLVMValueRef fix =
      LLVMBuildAnd(g->b, icmp(g, LLVMIntNE, r, zero),
                   LLVMBuildXor(g->b, icmp(g, LLVMIntSLT, r, zero), icmp(g, LLVMIntSLT, b, zero), ""), "");
  return sel(g, fix, LLVMBuildAdd(g->b, r, b, ""), r);
}

static LLVMValueRef emit_int_binary(const gen *g, int op, int dt, LLVMValueRef a, LLVMValueRef b) {
  int u = is_unsigned(dt);
  switch (op) {
  case VOP_ADD: return LLVMBuildAdd(g->b, a, b, "");
  case VOP_SUB: return LLVMBuildSub(g->b, a, b, "");
  case VOP_MUL: return LLVMBuildMul(g->b, a, b, "");
  case VOP_DIV:
  case VOP_MOD:
  case VOP_FMOD: return emit_int_div(g, op, dt, a, b);
  case VOP_POW: {
    LLVMTypeRef i64 = LLVMInt64TypeInContext(g->cx), t = lane_type(g, dt);
    LLVMValueRef a64 = emit_cast(g, DT_INT64, dt, a), b64 = emit_cast(g, DT_INT64, dt, b);
    LLVMValueRef r = call_lanes(g, is_unsigned(dt) ? "vpir_upow" : "vpir_ipow", i64, i64, a64, b64);
    return dt == DT_INT64 ? r : LLVMBuildTrunc(g->b, r, t, "");
  }
  case VOP_MAX: return imaxmin(g, dt, 1, a, b);
  case VOP_MIN: return imaxmin(g, dt, 0, a, b);
  case VOP_AND:
  case VOP_BITAND: return LLVMBuildAnd(g->b, a, b, "");
  case VOP_OR:
  case VOP_BITOR: return LLVMBuildOr(g->b, a, b, "");
  case VOP_XOR:
  case VOP_BITXOR: return LLVMBuildXor(g->b, a, b, "");
  case VOP_SHL:
  case VOP_SHR: return emit_shift(g, op, dt, a, b);
  case VOP_EQ: return icmp(g, LLVMIntEQ, a, b);
  case VOP_NE: return icmp(g, LLVMIntNE, a, b);
  case VOP_LT: return icmp(g, u ? LLVMIntULT : LLVMIntSLT, a, b);
  case VOP_LE: return icmp(g, u ? LLVMIntULE : LLVMIntSLE, a, b);
  case VOP_GT: return icmp(g, u ? LLVMIntUGT : LLVMIntSGT, a, b);
  case VOP_GE: return icmp(g, u ? LLVMIntUGE : LLVMIntSGE, a, b);
  }
  return NULL;
}

static LLVMValueRef emit_const(const gen *g, const om_vinstr *in) {
  switch (in->dtype) {
  case DT_FLOAT32: return cflt(g, (float)in->imm.f);
  case DT_FLOAT16: return cflt(g, rt_h2f(rt_f2h((float)in->imm.f)));
  case DT_DOUBLE: return cfp(g, DT_DOUBLE, in->imm.f);
  case DT_BOOL: return cint(g, DT_BOOL, in->imm.i != 0);
  default: return cint(g, in->dtype, in->imm.i); /* truncated to the width */
  }
}

/* How many registers a computing instruction reads (its other operand fields are not verified). */
static int arity(int op) { return op == VOP_CONST ? 0 : op >= VOP_SELECT ? 3 : op >= VOP_ADD ? 2 : 1; }

/* The value of one computing instruction (not LOAD / STORE). */
static LLVMValueRef emit_instr(gen *g, const om_vinstr *in, const uint8_t *rdt) {
  int n = arity(in->op), dt = in->dtype, adt = n ? rdt[in->a] : dt;
  LLVMValueRef a = n > 0 ? g->val[in->a] : NULL, b = n > 1 ? g->val[in->b] : NULL,
               c = n > 2 ? g->val[in->c] : NULL, v;
  switch (in->op) {
  case VOP_CONST: return emit_const(g, in);
  case VOP_CAST: v = emit_cast(g, dt, adt, a); break;
  case VOP_SELECT: return sel(g, a, b, c);
  case VOP_CLAMP:
    if (is_f(dt))
      v = fmaxmin(g, 0, fmaxmin(g, 1, a, b), c);
    else
      v = imaxmin(g, dt, 0, imaxmin(g, dt, 1, a, b), c);
    break;
  case VOP_FMA:
    if (is_f(dt)) {
      LLVMValueRef args[3] = {a, b, c};
      LLVMTypeRef t = LLVMTypeOf(a);
      v = intrinsic(g, "llvm.fma", &t, 1, args, 3);
    } else {
      v = LLVMBuildAdd(g->b, LLVMBuildMul(g->b, a, b, ""), c, "");
    }
    break;
  default:
    if (in->op >= VOP_ADD)
      v = is_f(adt) ? emit_float_binary(g, in->op, adt, a, b) : emit_int_binary(g, in->op, adt, a, b);
    else
      v = is_f(adt) ? emit_float_unary(g, in, adt, a) : emit_int_unary(g, in, adt, a);
  }
  int rounds = dt == DT_FLOAT16 && !(in->op == VOP_CAST && adt == DT_FLOAT16);
  return rounds ? round16(g, v) : v;
}

/* f16 bits (i16 lanes) to float lanes: fpext, which quiets a signaling
 * NaN, as the interpreter's LOAD does (vprog_exec.c load_run). */
static LLVMValueRef h2f(gen *g, LLVMValueRef bits, unsigned width) {
  unsigned saved = g->width;
  g->width = width;
  LLVMValueRef h = LLVMBuildBitCast(g->b, bits, vec(g, LLVMHalfTypeInContext(g->cx)), "");
  LLVMValueRef v = fence(g, LLVMBuildFPExt(g->b, h, lane_type(g, DT_FLOAT32), ""));
  g->width = saved;
  return v;
}

/* The element at index j (lanes j..j+W-1) of a tensor at `base` of stored dtype dt. */
static LLVMValueRef elem_ptr(const gen *g, int dt, LLVMValueRef base, LLVMValueRef j) {
  return LLVMBuildGEP2(g->b, stored_elem(g, dt), base, &j, 1, "");
}

/* One body: W lanes at element j of each row (bases: the row's tensor addresses). */
static void emit_body(gen *g, const LLVMValueRef *bases, LLVMValueRef j) {
  const om_vinstr *ins = g->ins;
  uint8_t rdt[VPROG_MAX_INSTRS];
  for (uint32_t k = 0; k < g->h->ninstrs; k++)
    if (ins[k].op != VOP_STORE) rdt[ins[k].dst] = ins[k].dtype;
  for (uint32_t k = 0; k < g->h->ninstrs; k++) {
    const om_vinstr *in = &ins[k];
    if (!g->needed[k] || in->op == VOP_STORE) continue;
    if (in->op != VOP_LOAD) {
      g->last_h16 = NULL;
      g->val[in->dst] = emit_instr(g, in, rdt);
      g->h16[in->dst] = g->last_h16; /* a STORE to f16 writes these as they are */
      continue;
    }
    g->h16[in->dst] = NULL;
    int dt = in->dtype, contiguous = (g->inner_mask >> in->a) & 1;
    LLVMValueRef zero = LLVMConstInt(LLVMInt64TypeInContext(g->cx), 0, 0);
    LLVMValueRef p = elem_ptr(g, dt, bases[in->a], contiguous ? j : zero);
    LLVMTypeRef elem = dt == DT_FLOAT16 ? LLVMInt16TypeInContext(g->cx) : stored_elem(g, dt);
    LLVMValueRef v = LLVMBuildLoad2(g->b, contiguous ? vec(g, elem) : elem, p, "");
    LLVMSetAlignment(v, (unsigned)dtype_size(dt));
    if (dt == DT_FLOAT16) v = h2f(g, v, contiguous ? g->width : 1);
    if (dt == DT_BOOL) v = LLVMBuildICmp(g->b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
    g->val[in->dst] = contiguous ? v : splat(g, v);
  }
  for (uint32_t k = 0; k < g->h->ninstrs; k++) {
    const om_vinstr *in = &ins[k];
    if (in->op != VOP_STORE) continue;
    int dt = in->dtype;
    LLVMValueRef v = g->val[in->b];
    if (dt == DT_FLOAT16)
      v = g->h16[in->b] ? g->h16[in->b]
                        : LLVMBuildFPTrunc(g->b, fence(g, v), vec(g, LLVMHalfTypeInContext(g->cx)), "");
    if (dt == DT_BOOL) v = LLVMBuildZExt(g->b, v, vec(g, LLVMInt8TypeInContext(g->cx)), "");
    LLVMValueRef st = LLVMBuildStore(g->b, v, elem_ptr(g, dt, bases[g->h->ninputs + in->a], j));
    LLVMSetAlignment(st, (unsigned)dtype_size(dt));
  }
}

/* Marks the instructions some STORE needs. */
static void mark_needed(gen *g) {
  uint8_t live[VPROG_MAX_INSTRS] = {0};
  for (uint32_t k = g->h->ninstrs; k-- > 0;) {
    const om_vinstr *in = &g->ins[k];
    if (in->op != VOP_STORE && !live[in->dst]) continue;
    g->needed[k] = 1;
    if (in->op == VOP_STORE)
      live[in->b] = 1;
    else if (in->op != VOP_LOAD) {
      int n = arity(in->op);
      if (n > 0) live[in->a] = 1;
      if (n > 1) live[in->b] = 1;
      if (n > 2) live[in->c] = 1;
    }
  }
}

/* for (j = from; j + step <= to; j += step) body(width = step), in blocks
 * appended to fn; returns the final j (a phi in the exit block). */
static LLVMValueRef emit_loop(gen *g, LLVMValueRef fn, const LLVMValueRef *bases, LLVMValueRef from,
                              LLVMValueRef to, unsigned step) {
  LLVMTypeRef i64 = LLVMInt64TypeInContext(g->cx);
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(g->b), head = LLVMAppendBasicBlockInContext(g->cx, fn, "head"),
                    body = LLVMAppendBasicBlockInContext(g->cx, fn, "body"),
                    done = LLVMAppendBasicBlockInContext(g->cx, fn, "done");
  LLVMBuildBr(g->b, head);
  LLVMPositionBuilderAtEnd(g->b, head);
  LLVMValueRef j = LLVMBuildPhi(g->b, i64, "j");
  LLVMValueRef next = LLVMBuildAdd(g->b, j, LLVMConstInt(i64, step, 0), "");
  LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntULE, next, to, ""), body, done);
  LLVMPositionBuilderAtEnd(g->b, body);
  g->width = step;
  emit_body(g, bases, j);
  LLVMBasicBlockRef body_end = LLVMGetInsertBlock(g->b);
  LLVMBuildBr(g->b, head);
  LLVMValueRef in_vals[2] = {from, next};
  LLVMBasicBlockRef in_blocks[2] = {pre, body_end};
  LLVMAddIncoming(j, in_vals, in_blocks, 2);
  LLVMPositionBuilderAtEnd(g->b, done);
  return j;
}

void vpir_build(LLVMModuleRef mod, const char *name, const om_vprog *h, const om_vinstr *ins,
                uint32_t inner_mask) {
  gen g = {.cx = LLVMGetModuleContext(mod), .mod = mod, .h = h, .ins = ins, .inner_mask = inner_mask};
  LLVMTypeRef i64 = LLVMInt64TypeInContext(g.cx), ptr = LLVMPointerTypeInContext(g.cx, 0);
  LLVMTypeRef argtys[4] = {ptr, ptr, i64, i64};
  LLVMValueRef fn = LLVMAddFunction(mod, name, LLVMFunctionType(LLVMVoidTypeInContext(g.cx), argtys, 4, 0));
  LLVMValueRef ptrs = LLVMGetParam(fn, 0), outer = LLVMGetParam(fn, 1), rows = LLVMGetParam(fn, 2),
               cols = LLVMGetParam(fn, 3);
  uint32_t nt = (uint32_t)h->ninputs + h->noutputs;
  int dts[2 * VPROG_MAX_IO] = {0};
  for (uint32_t k = 0; k < h->ninstrs; k++) {
    if (ins[k].op == VOP_LOAD) dts[ins[k].a] = ins[k].dtype;
    if (ins[k].op == VOP_STORE) dts[h->ninputs + ins[k].a] = ins[k].dtype;
  }
  mark_needed(&g);
  g.b = LLVMCreateBuilderInContext(g.cx);
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(g.cx, fn, "entry");
  LLVMPositionBuilderAtEnd(g.b, entry);
  LLVMValueRef base[2 * VPROG_MAX_IO], step[2 * VPROG_MAX_IO];
  for (uint32_t t = 0; t < nt; t++) {
    LLVMValueRef it = LLVMConstInt(i64, t, 0);
    base[t] = LLVMBuildLoad2(g.b, ptr, LLVMBuildGEP2(g.b, ptr, ptrs, &it, 1, ""), "");
    step[t] = LLVMBuildLoad2(g.b, i64, LLVMBuildGEP2(g.b, i64, outer, &it, 1, ""), "");
  }
  /* for (r = 0; r < rows; r++): row r's tensors start r * outer[t] elements in */
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(g.cx, fn, "row"),
                    body = LLVMAppendBasicBlockInContext(g.cx, fn, "row_body"),
                    exit = LLVMAppendBasicBlockInContext(g.cx, fn, "exit");
  LLVMBuildBr(g.b, head);
  LLVMPositionBuilderAtEnd(g.b, head);
  LLVMValueRef r = LLVMBuildPhi(g.b, i64, "r");
  LLVMBuildCondBr(g.b, LLVMBuildICmp(g.b, LLVMIntULT, r, rows, ""), body, exit);
  LLVMPositionBuilderAtEnd(g.b, body);
  LLVMValueRef row[2 * VPROG_MAX_IO];
  for (uint32_t t = 0; t < nt; t++) {
    LLVMValueRef off = LLVMBuildMul(g.b, r, step[t], "");
    row[t] = dts[t] ? elem_ptr(&g, dts[t], base[t], off) : base[t];
  }
  LLVMValueRef j = emit_loop(&g, fn, row, LLVMConstInt(i64, 0, 0), cols, VPIR_WIDTH);
  j = emit_loop(&g, fn, row, j, cols, VPIR_TAIL_WIDTH);
  emit_loop(&g, fn, row, j, cols, 1);
  LLVMValueRef r_next = LLVMBuildAdd(g.b, r, LLVMConstInt(i64, 1, 0), "");
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(g.b);
  LLVMBuildBr(g.b, head);
  LLVMValueRef r_in[2] = {LLVMConstInt(i64, 0, 0), r_next};
  LLVMBasicBlockRef r_from[2] = {entry, latch};
  LLVMAddIncoming(r, r_in, r_from, 2);
  LLVMPositionBuilderAtEnd(g.b, exit);
  LLVMBuildRetVoid(g.b);
  LLVMDisposeBuilder(g.b);
}
