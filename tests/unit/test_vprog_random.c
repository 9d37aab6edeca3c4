/* test_vprog_random.c - the property test of vector programs:
 * VPROG_PROGRAMS (default 2000) random well-typed programs (random ops and
 * dtypes -- all twelve register dtypes, f32 f16 f64 and signed / unsigned
 * integers of 8 to 64 bits and bool --, ND and NC1HWC0 shapes with broadcasting including scalars and
 * per-channel [1,C,1,1], values including inf, NaN, denormals and extremes,
 * random block_dim and thread counts), each built into an om package, run by
 * libomrt's interpreter and compared with reference(): a per-element,
 * per-instruction scalar evaluator written here from vprog.h and
 * runtime/vprog_plan.c's rules (f64 in double, f64 -> f16 rounded once, unsigned
 * compares and divisions). Integers, bool and compares exact; floats within
 * 1 ulp of the stored dtype, NaN matching NaN. VPROG_SEED picks the seed.
 * Under OMRT_JIT=1 (ctest's unit/test_vprog_random_jit) the programs are
 * compiled by libomrt_jit instead and its results held to the same bars.
 */
#include "vprog_pkg.h"

#include "common/vmath.h"

/* ---- 2. the property test: random programs against a scalar reference ---- */

static const int all_dtypes[] = {DT_FLOAT32, DT_FLOAT16, DT_DOUBLE, DT_INT64,  DT_INT32, DT_INT16,
                                 DT_INT8,    DT_UINT64,  DT_UINT32, DT_UINT16, DT_UINT8, DT_BOOL};
enum { NDT = sizeof all_dtypes / sizeof *all_dtypes };
static int isf(int dt) { return dt == DT_FLOAT32 || dt == DT_FLOAT16 || dt == DT_DOUBLE; }
static int isu(int dt) { return dt == DT_UINT64 || dt == DT_UINT32 || dt == DT_UINT16 || dt == DT_UINT8; }
static int isi(int dt) {
  return isu(dt) || dt == DT_INT64 || dt == DT_INT32 || dt == DT_INT16 || dt == DT_INT8;
}

/* A register value: f for f32 and f16 (f16 values exactly representable;
 * a float; an f16 LOAD quiets a signaling NaN, as the runtime's does), d
 * for f64, i for the others (already wrapped to the dtype: sign-extended,
 * unsigned ones zero-extended, u64 as its bits). */
typedef struct rv {
  float f;
  double d;
  int64_t i;
} rv;

static int bits(int dt) { return 8 * (int)dtype_size(dt); }
static int64_t wrap(int dt, int64_t v) {
  if (dt == DT_BOOL) return v != 0;
  int w = bits(dt);
  if (w == 64) return v;
  uint64_t m = (1ull << w) - 1, u = (uint64_t)v & m;
  return isu(dt) || !(u >> (w - 1)) ? (int64_t)u : (int64_t)(u | ~m);
}
static float r16(int dt, float f) { return dt == DT_FLOAT16 ? half_to_float(float_to_half(f)) : f; }
/* v rounded once to the nearest f16 (ties to the even significand), by
 * picking among the halves next to float_to_half's guess. */
static double ref_d2h(double v) {
  if (isnan(v) || isinf(v)) return v;
  uint16_t h = float_to_half((float)v), best = h;
  double bd = -1;
  for (int k = -1; k <= 1; k++) {
    uint16_t c = (uint16_t)(h + k);
    if ((h & 0x7fff) == 0 && k < 0) c = h ^ 0x8000;      /* -0 / +0 */
    if ((c & 0x7c00) == 0x7c00 && (c & 0x3ff)) continue; /* NaN */
    double x = half_to_float(c), d = fabs(v - x);
    if (isinf(x) && !isinf(v)) { /* overflow: inf when v reaches 65520 (the rounding boundary) */
      if (fabs(v) < 65520) continue;
      d = 0;
    }
    if (bd < 0 || d < bd || (d == bd && !(c & 1))) best = c, bd = d;
  }
  return half_to_float(best);
}

static double ref_max(double a, double b) { return isnan(a) ? a : isnan(b) ? b : a > b ? a : b; }
static double ref_min(double a, double b) { return isnan(a) ? a : isnan(b) ? b : a < b ? a : b; }

static double ref_dunary(int op, double a) {
  switch (op) {
  case VOP_NEG: return -a;
  case VOP_ABS: return fabs(a);
  case VOP_SIGN: return a > 0 ? 1.0 : a < 0 ? -1.0 : a;
  case VOP_EXP: return exp(a);
  case VOP_LOG: return log(a);
  case VOP_SQRT: return sqrt(a);
  case VOP_RSQRT: return 1.0 / sqrt(a);
  case VOP_RECIP: return 1.0 / a;
  case VOP_TANH: return tanh(a);
  case VOP_SIGMOID: return 1.0 / (1.0 + exp(-a));
  case VOP_ERF: return erf(a);
  case VOP_FLOOR: return floor(a);
  case VOP_CEIL: return ceil(a);
  case VOP_ROUND: return rint(a);
  case VOP_SIN: return sin(a);
  case VOP_COS: return cos(a);
  case VOP_TAN: return tan(a);
  case VOP_ASIN: return asin(a);
  case VOP_ACOS: return acos(a);
  case VOP_ATAN: return atan(a);
  case VOP_SINH: return sinh(a);
  case VOP_COSH: return cosh(a);
  case VOP_ASINH: return asinh(a);
  case VOP_ACOSH: return acosh(a);
  case VOP_ATANH: return atanh(a);
  case VOP_SOFTPLUS: return a > 0 ? a + log1p(exp(-a)) : log1p(exp(a));
  }
  return NAN;
}

static double ref_dbinary(int op, double a, double b) {
  switch (op) {
  case VOP_ADD: return a + b;
  case VOP_SUB: return a - b;
  case VOP_MUL: return a * b;
  case VOP_DIV: return a / b;
  case VOP_MOD: {
    double r = fmod(a, b);
    if (r != 0 && signbit(r) != signbit(b)) r += b;
    return r;
  }
  case VOP_FMOD: return fmod(a, b);
  case VOP_POW: return pow(a, b);
  case VOP_MAX: return ref_max(a, b);
  case VOP_MIN: return ref_min(a, b);
  }
  return NAN;
}

static float ref_funary(int op, float a, int64_t imm) {
  switch (op) {
  case VOP_NEG: return -a;
  case VOP_ABS: return fabsf(a);
  case VOP_SIGN: return a > 0 ? 1.0f : a < 0 ? -1.0f : a;
  case VOP_EXP: return om_vexp(a); /* the vector unit's exp (common/vmath.h) */
  case VOP_LOG: return logf(a);
  case VOP_SQRT: return sqrtf(a);
  case VOP_RSQRT: return 1.0f / sqrtf(a);
  case VOP_RECIP: return 1.0f / a;
  case VOP_TANH: return tanhf(a);
  case VOP_SIGMOID: return om_vsigmoid(a);
  case VOP_ERF: return om_verf(a);
  case VOP_FLOOR: return floorf(a);
  case VOP_CEIL: return ceilf(a);
  case VOP_ROUND: return rintf(a);
  case VOP_SIN: return sinf(a);
  case VOP_COS: return cosf(a);
  case VOP_TAN: return tanf(a);
  case VOP_ASIN: return asinf(a);
  case VOP_ACOS: return acosf(a);
  case VOP_ATAN: return atanf(a);
  case VOP_SINH: return sinhf(a);
  case VOP_COSH: return coshf(a);
  case VOP_ASINH: return asinhf(a);
  case VOP_ACOSH: return acoshf(a);
  case VOP_ATANH: return atanhf(a);
  case VOP_SOFTPLUS: return a > 0 ? a + log1pf(om_vexp(-a)) : log1pf(om_vexp(a));
  }
  (void)imm;
  return NAN;
}

static float ref_fbinary(int op, float a, float b) {
  switch (op) {
  case VOP_ADD: return a + b;
  case VOP_SUB: return a - b;
  case VOP_MUL: return a * b;
  case VOP_DIV: return a / b;
  case VOP_MOD: {
    float r = fmodf(a, b);
    if (r != 0 && signbit(r) != signbit(b)) r += b;
    return r;
  }
  case VOP_FMOD: return fmodf(a, b);
  case VOP_POW: return powf(a, b);
  case VOP_MAX: return ref_max(a, b);
  case VOP_MIN: return ref_min(a, b);
  }
  return NAN;
}

/* Unsigned dtypes where they differ from signed ones (values zero-extended). */
static int64_t ref_ubinary(int op, int dt, uint64_t a, uint64_t b) {
  switch (op) {
  case VOP_DIV: return b == 0 ? 0 : (int64_t)(a / b);
  case VOP_MOD:
  case VOP_FMOD: return b == 0 ? 0 : (int64_t)(a % b);
  case VOP_MAX: return (int64_t)(a > b ? a : b);
  case VOP_MIN: return (int64_t)(a < b ? a : b);
  default: { /* SHR: logical */
    int w = bits(dt);
    uint64_t cnt = b & (w == 64 ? ~0ull : (1ull << w) - 1);
    return cnt >= (uint64_t)w ? 0 : (int64_t)(a >> cnt);
  }
  }
}

static int64_t ref_ibinary(int op, int dt, int64_t a, int64_t b) {
  __int128 x = a, y = b;
  if (isu(dt) &&
      (op == VOP_DIV || op == VOP_MOD || op == VOP_FMOD || op == VOP_MAX || op == VOP_MIN || op == VOP_SHR))
    return ref_ubinary(op, dt, (uint64_t)a, (uint64_t)b);
  switch (op) {
  case VOP_ADD: return wrap(dt, (int64_t)(uint64_t)(x + y));
  case VOP_SUB: return wrap(dt, (int64_t)(uint64_t)(x - y));
  case VOP_MUL: return wrap(dt, (int64_t)((uint64_t)a * (uint64_t)b));
  case VOP_DIV: return b == 0 ? 0 : wrap(dt, (int64_t)(uint64_t)(unsigned __int128)(x / y));
  case VOP_FMOD: return b == 0 ? 0 : wrap(dt, (int64_t)(x % y));
  case VOP_MOD: {
    if (b == 0) return 0;
    __int128 r = x % y;
    if (r != 0 && (r < 0) != (y < 0)) r += y;
    return wrap(dt, (int64_t)r);
  }
  case VOP_POW: {
    if (b < 0 && !isu(dt)) return a == 1 ? 1 : a == -1 ? (b % 2 ? -1 : 1) : 0;
    uint64_t r = 1;
    for (int k = 63; k >= 0; k--) { /* square and multiply, high bit first */
      r *= r;
      if ((uint64_t)b >> k & 1) r *= (uint64_t)a;
    }
    return wrap(dt, (int64_t)r);
  }
  case VOP_MAX: return a > b ? a : b;
  case VOP_MIN: return a < b ? a : b;
  case VOP_BITAND: return a & b;
  case VOP_BITOR: return a | b;
  case VOP_BITXOR: return a ^ b;
  case VOP_SHL:
  case VOP_SHR: {
    int w = bits(dt);
    uint64_t cnt = (uint64_t)b & (w == 64 ? ~0ull : (1ull << w) - 1);
    if (cnt >= (uint64_t)w) return 0;
    return op == VOP_SHL ? wrap(dt, (int64_t)((uint64_t)a << cnt))
                         : a >> cnt; /* a is sign- or zero-extended */
  }
  }
  return 0;
}

static int ref_icmp(int op, int dt, int64_t a, int64_t b) {
  if (isu(dt)) { /* zero-extended, u64 as bits: order as unsigned */
    a = (int64_t)((uint64_t)a ^ (1ull << 63));
    b = (int64_t)((uint64_t)b ^ (1ull << 63));
  }
  switch (op) {
  case VOP_EQ: return a == b;
  case VOP_NE: return a != b;
  case VOP_LT: return a < b;
  case VOP_LE: return a <= b;
  case VOP_GT: return a > b;
  default: return a >= b;
  }
}

static int ref_cmp(int op, double a, double b) {
  switch (op) {
  case VOP_EQ: return a == b;
  case VOP_NE: return a != b;
  case VOP_LT: return a < b;
  case VOP_LE: return a <= b;
  case VOP_GT: return a > b;
  default: return a >= b;
  }
}

static rv ref_cast(int from, int to, rv a) {
  rv r = {0, 0, 0};
  if (isf(from)) {
    double x = from == DT_DOUBLE ? a.d : a.f;
    if (to == DT_DOUBLE)
      r.d = x;
    else if (from == DT_DOUBLE && to == DT_FLOAT16)
      r.f = (float)ref_d2h(x);
    else if (from == DT_DOUBLE && isf(to))
      r.f = (float)x; /* to f32 */
    else if (isf(to))
      r.f = r16(to, a.f);
    else if (to == DT_BOOL)
      r.i = x != 0;
    else if (isnan(x))
      r.i = 0;
    else { /* truncate, saturate to the destination's range */
      double t = trunc(x);
      int w = bits(to);
      if (isu(to))
        r.i = t <= 0 ? 0 : t >= ldexp(1, w) ? wrap(to, -1) : (int64_t)(uint64_t)t;
      else {
        int64_t lo = w == 64 ? INT64_MIN : -((int64_t)1 << (w - 1)),
                hi = w == 64 ? INT64_MAX : ((int64_t)1 << (w - 1)) - 1;
        r.i = t <= -ldexp(1, w - 1) ? lo : t >= ldexp(1, w - 1) ? hi : (int64_t)t;
      }
    }
  } else {
    if (to == DT_DOUBLE)
      r.d = isu(from) ? (double)(uint64_t)a.i : (double)a.i;
    else if (isf(to))
      r.f = r16(to, isu(from) ? (float)(uint64_t)a.i : (float)a.i);
    else
      r.i = wrap(to, a.i);
  }
  return r;
}

/* Reads stored element `at` of dtype dt as a register value. */
static rv ref_load(int dt, const void *p, uint64_t at) {
  rv r = {0, 0, 0};
  switch (dt) {
  case DT_FLOAT32: r.f = ((const float *)p)[at]; break;
  case DT_FLOAT16: {
    uint16_t h = ((const uint16_t *)p)[at];
    r.f = half_to_float((h & 0x7fff) > 0x7c00 ? h | 0x200 : h);
    break;
  }
  case DT_DOUBLE: r.d = ((const double *)p)[at]; break;
  case DT_INT64:
  case DT_UINT64: r.i = ((const int64_t *)p)[at]; break;
  case DT_INT32: r.i = ((const int32_t *)p)[at]; break;
  case DT_UINT32: r.i = ((const uint32_t *)p)[at]; break;
  case DT_INT16: r.i = ((const int16_t *)p)[at]; break;
  case DT_UINT16: r.i = ((const uint16_t *)p)[at]; break;
  case DT_INT8: r.i = ((const int8_t *)p)[at]; break;
  case DT_UINT8: r.i = ((const uint8_t *)p)[at]; break;
  default: r.i = ((const uint8_t *)p)[at] != 0; break;
  }
  return r;
}

static void ref_store(int dt, void *p, uint64_t at, rv v) {
  switch (dt) {
  case DT_FLOAT32: ((float *)p)[at] = v.f; break;
  case DT_FLOAT16: ((uint16_t *)p)[at] = float_to_half(v.f); break;
  case DT_DOUBLE: ((double *)p)[at] = v.d; break;
  case DT_INT64:
  case DT_UINT64: ((int64_t *)p)[at] = v.i; break;
  case DT_INT32:
  case DT_UINT32: ((uint32_t *)p)[at] = (uint32_t)v.i; break;
  case DT_INT16:
  case DT_UINT16: ((uint16_t *)p)[at] = (uint16_t)v.i; break;
  default: ((uint8_t *)p)[at] = (uint8_t)v.i; break;
  }
}

/* Physical dims of an operand. */
static int pdims(const operand *o, int64_t d[MAX_RANK + 1]) {
  if (o->layout == LAYOUT_NC1HWC0) {
    d[0] = o->dims[0], d[1] = (o->dims[1] + 15) / 16, d[2] = o->dims[2], d[3] = o->dims[3], d[4] = 16;
    return 5;
  }
  for (int k = 0; k < o->rank; k++)
    d[k] = o->dims[k];
  return o->rank;
}

/* The program's outputs for every physical output element, per element and per instruction. */
static void reference(const om_vprog *h, const om_vinstr *ins, const operand *ops, const void *const *in,
                      void *const *out) {
  const operand *o0 = &ops[h->ninputs];
  int64_t od[MAX_RANK + 1], id[MAXOPS][MAX_RANK + 1];
  int ro = pdims(o0, od), ri[MAXOPS];
  for (int j = 0; j < h->ninputs; j++)
    ri[j] = pdims(&ops[j], id[j]);
  uint64_t total = phys_elems(o0);
  rv regs[MAXI];
  for (uint64_t e = 0; e < total; e++) {
    int64_t idx[MAX_RANK + 1];
    uint64_t r = e;
    for (int k = ro - 1; k >= 0; k--)
      idx[k] = (int64_t)(r % (uint64_t)od[k]), r /= (uint64_t)od[k];
    for (int k = 0; k < h->ninstrs; k++) {
      const om_vinstr *x = &ins[k];
      rv a = regs[x->a], b = regs[x->b], c = regs[x->c], v = {0, 0, 0};
      int dt = x->dtype, adt = 0;
      switch (x->op) {
      case VOP_LOAD: {
        uint64_t at = 0;
        for (int q = 0; q < ri[x->a]; q++) {
          int64_t dim = id[x->a][q];
          at = at * (uint64_t)dim + (uint64_t)(dim == 1 ? 0 : idx[ro - ri[x->a] + q]);
        }
        v = ref_load(dt, in[x->a], at);
        break;
      }
      case VOP_STORE: {
        int zero = o0->layout == LAYOUT_NC1HWC0 && idx[1] * 16 + idx[4] >= o0->dims[1];
        ref_store(dt, out[x->a], e, zero ? (rv){0, 0, 0} : b);
        continue;
      }
      case VOP_CONST:
        if (dt == DT_DOUBLE)
          v.d = x->imm.f;
        else if (isf(dt))
          v.f = r16(dt, (float)x->imm.f);
        else
          v.i = wrap(dt, x->imm.i);
        break;
      case VOP_CAST:
        for (int q = 0; q < k; q++)
          if (ins[q].op != VOP_STORE && ins[q].dst == x->a) adt = ins[q].dtype;
        v = ref_cast(adt, dt, a);
        break;
      case VOP_ISNAN:
      case VOP_ISINF: {
        for (int q = 0; q < k; q++)
          if (ins[q].op != VOP_STORE && ins[q].dst == x->a) adt = ins[q].dtype;
        double f = adt == DT_DOUBLE ? a.d : a.f;
        v.i = x->op == VOP_ISNAN ? isnan(f) != 0
                                 : (f == INFINITY && (x->imm.i & 1)) || (f == -INFINITY && (x->imm.i & 2));
        break;
      }
      case VOP_NOT: v.i = !a.i; break;
      case VOP_AND: v.i = a.i && b.i; break;
      case VOP_OR: v.i = a.i || b.i; break;
      case VOP_XOR: v.i = !a.i != !b.i; break;
      case VOP_BITNOT: v.i = wrap(dt, ~a.i); break;
      case VOP_EQ:
      case VOP_NE:
      case VOP_LT:
      case VOP_LE:
      case VOP_GT:
      case VOP_GE:
        for (int q = 0; q < k; q++)
          if (ins[q].op != VOP_STORE && ins[q].dst == x->a) adt = ins[q].dtype;
        v.i = adt == DT_DOUBLE ? ref_cmp(x->op, a.d, b.d)
              : isf(adt)       ? ref_cmp(x->op, a.f, b.f)
                               : ref_icmp(x->op, adt, a.i, b.i);
        break;
      case VOP_SELECT: v = a.i ? b : c; break;
      case VOP_CLAMP:
        if (dt == DT_DOUBLE)
          v.d = ref_min(ref_max(a.d, b.d), c.d);
        else if (isf(dt))
          v.f = (float)ref_min(ref_max(a.f, b.f), c.f);
        else
          v.i = ref_ibinary(VOP_MIN, dt, ref_ibinary(VOP_MAX, dt, a.i, b.i), c.i);
        break;
      case VOP_FMA:
        if (dt == DT_DOUBLE)
          v.d = fma(a.d, b.d, c.d);
        else if (isf(dt))
          v.f = r16(dt, fmaf(a.f, b.f, c.f));
        else
          v.i = wrap(dt, (int64_t)((uint64_t)a.i * (uint64_t)b.i + (uint64_t)c.i));
        break;
      case VOP_NEG:
      case VOP_ABS:
      case VOP_SIGN:
        if (dt == DT_DOUBLE)
          v.d = ref_dunary(x->op, a.d);
        else if (isf(dt))
          v.f = r16(dt, ref_funary(x->op, a.f, 0));
        else if (x->op == VOP_NEG)
          v.i = wrap(dt, (int64_t)(0 - (uint64_t)a.i));
        else if (isu(dt))
          v.i = x->op == VOP_ABS ? a.i : a.i != 0;
        else if (x->op == VOP_ABS)
          v.i = wrap(dt, a.i < 0 ? (int64_t)(0 - (uint64_t)a.i) : a.i);
        else
          v.i = wrap(dt, (a.i > 0) - (a.i < 0));
        break;
      default:
        if (x->op >= VOP_ADD) {
          if (dt == DT_DOUBLE)
            v.d = ref_dbinary(x->op, a.d, b.d);
          else if (isf(dt))
            v.f = r16(dt, ref_fbinary(x->op, a.f, b.f));
          else
            v.i = ref_ibinary(x->op, dt, a.i, b.i);
        } else if (dt == DT_DOUBLE) {
          v.d = ref_dunary(x->op, a.d);
        } else {
          v.f = r16(dt, ref_funary(x->op, a.f, x->imm.i));
        }
      }
      regs[x->dst] = v;
    }
  }
}

/* Distance in units in the last place between two floats of dtype dt (NaN == NaN). */
static int ulp_ok(int dt, const void *a, const void *b, uint64_t i) {
  int64_t x, y;
  if (dt == DT_DOUBLE) {
    double da = ((const double *)a)[i], db = ((const double *)b)[i];
    if (isnan(da) || isnan(db)) return isnan(da) && isnan(db);
    uint64_t ua, ub;
    memcpy(&ua, &da, 8);
    memcpy(&ub, &db, 8);
    x = ua >> 63 ? -(int64_t)(ua & ~(1ull << 63)) : (int64_t)ua;
    y = ub >> 63 ? -(int64_t)(ub & ~(1ull << 63)) : (int64_t)ub;
  } else if (dt == DT_FLOAT32) {
    float fa = ((const float *)a)[i], fb = ((const float *)b)[i];
    if (isnan(fa) || isnan(fb)) return isnan(fa) && isnan(fb);
    uint32_t ua, ub;
    memcpy(&ua, &fa, 4);
    memcpy(&ub, &fb, 4);
    x = ua >> 31 ? -(int64_t)(ua & 0x7fffffff) : ua;
    y = ub >> 31 ? -(int64_t)(ub & 0x7fffffff) : ub;
  } else {
    uint16_t ha = ((const uint16_t *)a)[i], hb = ((const uint16_t *)b)[i];
    int na = (ha & 0x7fff) > 0x7c00, nb = (hb & 0x7fff) > 0x7c00;
    if (na || nb) return na && nb;
    x = ha >> 15 ? -(int64_t)(ha & 0x7fff) : ha;
    y = hb >> 15 ? -(int64_t)(hb & 0x7fff) : hb;
  }
  return llabs(x - y) <= 1;
}

/* Random program generation. */
typedef struct gen {
  om_vinstr ins[MAXI];
  int n, nregs;
  uint8_t rdt[MAXI];
} gen;

static int emit(gen *g, int op, int dt, int a, int b, int c) {
  om_vinstr *x = &g->ins[g->n++];
  *x = (om_vinstr){.op = (uint8_t)op,
                   .dtype = (uint8_t)dt,
                   .dst = (uint16_t)g->nregs,
                   .a = (uint16_t)a,
                   .b = (uint16_t)b,
                   .c = (uint16_t)c};
  g->rdt[g->nregs] = (uint8_t)dt;
  return g->nregs++;
}

static double rnd_double(void) {
  switch (rndn(10)) {
  case 0: return INFINITY * (rndn(2) ? 1 : -1);
  case 1: return NAN;
  case 2: return ldexp((double)rndn(1000) - 500, -140);       /* f32 denormals */
  case 3: return ldexp((double)rndn(2000) - 1000, rndn(120)); /* large */
  case 4: return rndn(2) ? 0.0 : -0.0;
  case 5: return (double)(rndn(9) - 4) * 0.5;
  case 6: return ldexp((double)rndn(2000) - 1000, -rndn(30) - 10); /* small, f16 denormals */
  default: return ((double)rndn(20001) - 10000) / 1000.0;
  }
}

static int64_t rnd_int(void) {
  switch (rndn(8)) {
  case 0: return (int64_t)rnd();
  case 1: {
    static const int64_t ex[] = {INT64_MIN, INT64_MAX, INT32_MIN, INT32_MAX, -1, 0,  1,
                                 127,       -128,      255,       8,         31, 63, 64};
    return ex[rndn(sizeof ex / sizeof *ex)];
  }
  case 2: return rndn(2001) - 1000;
  default: return rndn(21) - 10;
  }
}

/* A register of dtype dt: an existing one most of the time, else a CAST or CONST. */
static int get_reg(gen *g, int dt) {
  int cand[MAXI], nc = 0;
  for (int r = 0; r < g->nregs; r++)
    if (g->rdt[r] == dt) cand[nc++] = r;
  if (nc && rndn(5)) return cand[nc - 1 - rndn(nc < 4 ? nc : 4)]; /* prefer recent */
  if (rndn(4) == 0 || g->nregs == 0) {
    int r = emit(g, VOP_CONST, dt, 0, 0, 0);
    if (isf(dt))
      g->ins[g->n - 1].imm.f = rnd_double();
    else
      g->ins[g->n - 1].imm.i = rnd_int();
    return r;
  }
  return emit(g, VOP_CAST, dt, rndn(g->nregs), 0, 0);
}

static int pick_dtype(const gen *g, int set) { /* set: 0 any, 1 num, 2 float, 3 int, 4 bool */
  for (int tries = 0; tries < 8; tries++) {
    int dt = rndn(3) && g->nregs ? g->rdt[g->nregs - 1 - rndn(g->nregs < 3 ? g->nregs : 3)]
                                 : all_dtypes[rndn(NDT)];
    if (set == 0 || (set == 1 && (isf(dt) || isi(dt))) || (set == 2 && isf(dt)) || (set == 3 && isi(dt)) ||
        (set == 4 && dt == DT_BOOL))
      return dt;
  }
  return set == 2   ? (rndn(2) ? DT_FLOAT32 : DT_FLOAT16)
         : set == 3 ? DT_INT32
         : set == 4 ? DT_BOOL
                    : DT_FLOAT32;
}

static void gen_op(gen *g) {
  static const int unary_f[] = {VOP_EXP,     VOP_LOG,   VOP_SQRT,  VOP_RSQRT, VOP_RECIP,   VOP_TANH,
                                VOP_SIGMOID, VOP_ERF,   VOP_FLOOR, VOP_CEIL,  VOP_ROUND,   VOP_SIN,
                                VOP_COS,     VOP_TAN,   VOP_ASIN,  VOP_ACOS,  VOP_ATAN,    VOP_SINH,
                                VOP_COSH,    VOP_ASINH, VOP_ACOSH, VOP_ATANH, VOP_SOFTPLUS};
  if (g->nregs == 0) get_reg(g, all_dtypes[rndn(NDT)]);
  int kind = rndn(100), dt;
  if (kind < 10) { /* NEG ABS SIGN */
    dt = pick_dtype(g, 1);
    emit(g, VOP_NEG + rndn(3), dt, get_reg(g, dt), 0, 0);
  } else if (kind < 25) {
    dt = pick_dtype(g, 2);
    emit(g, unary_f[rndn(sizeof unary_f / sizeof *unary_f)], dt, get_reg(g, dt), 0, 0);
  } else if (kind < 28) {
    dt = pick_dtype(g, 2);
    int r = emit(g, VOP_ISNAN + rndn(2), DT_BOOL, get_reg(g, dt), 0, 0);
    g->ins[g->n - 1].imm.i = g->ins[g->n - 1].op == VOP_ISINF ? rndn(4) : 0;
    (void)r;
  } else if (kind < 50) { /* ADD .. MIN */
    dt = pick_dtype(g, 1);
    int a = get_reg(g, dt), b = get_reg(g, dt);
    emit(g, VOP_ADD + rndn(9), dt, a, b, 0);
  } else if (kind < 55) {
    int a = get_reg(g, DT_BOOL), b = get_reg(g, DT_BOOL);
    if (rndn(4))
      emit(g, VOP_AND + rndn(3), DT_BOOL, a, b, 0);
    else
      emit(g, VOP_NOT, DT_BOOL, a, 0, 0);
  } else if (kind < 63) {
    dt = pick_dtype(g, 3);
    int a = get_reg(g, dt), b = get_reg(g, dt), op = VOP_BITAND + rndn(5);
    if (op >= VOP_SHL && rndn(2)) { /* a shift count in range, mostly */
      b = emit(g, VOP_CONST, dt, 0, 0, 0);
      g->ins[g->n - 1].imm.i = rndn(bits(dt) + 2);
    }
    if (rndn(6))
      emit(g, op, dt, a, b, 0);
    else
      emit(g, VOP_BITNOT, dt, a, 0, 0);
  } else if (kind < 73) {
    dt = pick_dtype(g, 0);
    int a = get_reg(g, dt), b = get_reg(g, dt);
    emit(g, VOP_EQ + rndn(6), DT_BOOL, a, b, 0);
  } else if (kind < 79) {
    dt = pick_dtype(g, 0);
    int c = get_reg(g, DT_BOOL), a = get_reg(g, dt), b = get_reg(g, dt);
    emit(g, VOP_SELECT, dt, c, a, b);
  } else if (kind < 85) {
    dt = pick_dtype(g, 1);
    int a = get_reg(g, dt), b = get_reg(g, dt), c = get_reg(g, dt);
    emit(g, VOP_CLAMP + rndn(2), dt, a, b, c);
  } else if (kind < 95) {
    emit(g, VOP_CAST, all_dtypes[rndn(NDT)], rndn(g->nregs), 0, 0);
  } else {
    get_reg(g, all_dtypes[rndn(NDT)]);
  }
}

/* Fills n stored elements of dtype dt with random values (NC1HWC0 padding zeroed by the caller). */
static void fill_random(int dt, void *p, uint64_t n) {
  for (uint64_t i = 0; i < n; i++) {
    switch (dt) {
    case DT_FLOAT32: ((float *)p)[i] = (float)rnd_double(); break;
    case DT_FLOAT16:
      ((uint16_t *)p)[i] = rndn(8) ? float_to_half((float)rnd_double()) : (uint16_t)rnd();
      break;
    case DT_DOUBLE: ((double *)p)[i] = rndn(8) ? rnd_double() : ldexp((double)rnd(), -rndn(80)); break;
    case DT_INT64:
    case DT_UINT64: ((int64_t *)p)[i] = rnd_int(); break;
    case DT_INT32:
    case DT_UINT32: ((int32_t *)p)[i] = (int32_t)rnd_int(); break;
    case DT_INT16:
    case DT_UINT16: ((int16_t *)p)[i] = (int16_t)rnd_int(); break;
    case DT_INT8:
    case DT_UINT8: ((uint8_t *)p)[i] = (uint8_t)rnd_int(); break;
    default: ((uint8_t *)p)[i] = (uint8_t)(rndn(10) ? rndn(2) : 2); break;
    }
  }
}

static void zero_padding(const operand *o, void *p) {
  if (o->layout != LAYOUT_NC1HWC0) return;
  size_t es = dtype_size(o->dtype);
  uint64_t n = phys_elems(o);
  int64_t c1s = (o->dims[1] + 15) / 16, hw = o->dims[2] * o->dims[3];
  for (uint64_t e = 0; e < n; e++) {
    int64_t c = (int64_t)((e / 16 / (uint64_t)hw) % (uint64_t)c1s) * 16 + (int64_t)(e % 16);
    if (c >= o->dims[1]) memset((uint8_t *)p + e * es, 0, es);
  }
}

static void print_program(const om_vprog *h, const om_vinstr *ins, const operand *ops) {
  for (int k = 0; k < h->ninputs + h->noutputs; k++) {
    fprintf(stderr, "  %s%d %s %s [", k < h->ninputs ? "in" : "out", k < h->ninputs ? k : k - h->ninputs,
            dtype_name(ops[k].dtype), layout_name(ops[k].layout));
    for (int d = 0; d < ops[k].rank; d++)
      fprintf(stderr, "%s%lld", d ? "," : "", (long long)ops[k].dims[d]);
    fprintf(stderr, "]\n");
  }
  for (int k = 0; k < h->ninstrs; k++) {
    const om_vinstr *x = &ins[k];
    fprintf(stderr, "  %2d: r%u = %s.%s a=%u b=%u c=%u imm=%lld/%g\n", k, x->dst, vop_name(x->op),
            dtype_name(x->dtype), x->a, x->b, x->c, (long long)x->imm.i, x->imm.f);
  }
}

/* Random output shape and input shapes that broadcast to it. */
static void gen_shapes(operand *ops, int nin, int nout, gen *g) {
  operand o = {.layout = LAYOUT_ND};
  if (rndn(5) == 0) {
    o.layout = LAYOUT_NC1HWC0;
    o.rank = 4;
    o.dims[0] = 1 + rndn(2), o.dims[1] = 1 + rndn(40), o.dims[2] = 1 + rndn(6), o.dims[3] = 1 + rndn(7);
  } else {
    static const int64_t sizes[] = {1, 2, 3, 4, 5, 7, 8, 16, 17, 31, 64, 100, 300};
    o.rank = rndn(5);
    uint64_t total = 1;
    for (int d = 0; d < o.rank; d++) {
      o.dims[d] = sizes[rndn(sizeof sizes / sizeof *sizes)];
      if (total * (uint64_t)o.dims[d] > 40000) o.dims[d] = 1 + rndn(3);
      total *= (uint64_t)o.dims[d];
    }
  }
  for (int k = 0; k < nout; k++)
    ops[nin + k] = o, ops[nin + k].dtype = 0;
  for (int j = 0; j < nin; j++) {
    operand in = o;
    in.dtype = all_dtypes[rndn(NDT)];
    int style = rndn(6);
    if (o.layout == LAYOUT_NC1HWC0) {
      if (style == 0)
        in.dims[0] = 1, in.dims[2] = 1, in.dims[3] = 1; /* SE-block [N,C,1,1] style */
      else if (style == 1)
        in.dims[2] = rndn(2) ? 1 : in.dims[2], in.dims[3] = 1;
      else if (style == 2)
        in.dims[0] = 1;
    } else if (style == 0) {
      in.rank = 0; /* scalar */
    } else if (style == 1 && o.rank == 4) {
      in.dims[0] = in.dims[2] = in.dims[3] = 1; /* per-channel [1,C,1,1] */
    } else if (style <= 3) {                    /* a suffix, some dims broadcast */
      in.rank = rndn(o.rank + 1);
      for (int d = 0; d < in.rank; d++)
        in.dims[d] = rndn(3) ? o.dims[o.rank - in.rank + d] : 1;
    }
    ops[j] = in;
    emit(g, VOP_LOAD, in.dtype, 0, 0, 0);
    g->ins[g->n - 1].a = (uint16_t)j;
  }
}

static int64_t elapsed_ns(const struct timespec *t0) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (int64_t)(t1.tv_sec - t0->tv_sec) * 1000000000 + (t1.tv_nsec - t0->tv_nsec);
}

static void test_random_programs(void) {
  const char *env = getenv("VPROG_PROGRAMS"), *seed_env = getenv("VPROG_SEED");
  int nprog = env && atoi(env) > 0 ? atoi(env) : 2000;
  rng_state = seed_env && strtoull(seed_env, NULL, 0) ? strtoull(seed_env, NULL, 0) : 0x9e3779b97f4a7c15ull;
  int failed = 0, loaded = 0;
  uint64_t elements = 0;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int p = 0; p < nprog; p++) {
    uint64_t seed = rng_state;
    gen g = {.n = 0};
    operand ops[MAXOPS];
    int nin = rndn(4) + (rndn(8) == 0 ? 0 : 1), nout = 1 + (rndn(3) == 0);
    gen_shapes(ops, nin, nout, &g);
    int nops = 2 + rndn(12);
    for (int k = 0; k < nops && g.n < MAXI - 12; k++)
      gen_op(&g);
    if (g.nregs == 0) get_reg(&g, all_dtypes[rndn(NDT)]);
    for (int o = 0; o < nout; o++) {
      int r = g.nregs - 1 - rndn(g.nregs < 3 ? g.nregs : 3);
      ops[nin + o].dtype = g.rdt[r];
      g.ins[g.n++] = (om_vinstr){.op = VOP_STORE, .dtype = g.rdt[r], .a = (uint16_t)o, .b = (uint16_t)r};
    }
    om_vprog h = {.ninputs = (uint16_t)nin,
                  .noutputs = (uint16_t)nout,
                  .nregs = (uint16_t)g.nregs,
                  .ninstrs = (uint16_t)g.n};
    uint64_t total = phys_elems(&ops[nin]), tiles = (total + 255) / 256;
    pkg_opts po = {.block_dim = tiles > 1 ? 1 + (uint32_t)rndn((int)(tiles < 16 ? tiles : 16)) : 1};
    if (rndn(10) == 0) po.ub_bytes = 2048 + (uint32_t)rndn(8192); /* fewer lanes per pass */
    void *bufs[MAXOPS], *want[MAXOPS];
    for (int k = 0; k < nin + nout; k++) {
      size_t bytes = phys_elems(&ops[k]) * dtype_size(ops[k].dtype);
      bufs[k] = calloc(1, bytes + 8);
      want[k] = calloc(1, bytes + 8);
      if (k < nin) {
        fill_random(ops[k].dtype, bufs[k], phys_elems(&ops[k]));
        zero_padding(&ops[k], bufs[k]);
      } else {
        memset(bufs[k], 0xA5, bytes); /* every byte must be written */
      }
    }
    size_t size;
    void *data = make_pkg(&h, g.ins, ops, &po, &size);
    omrt_status s = run_pkg(data, size, 1 + (uint32_t)rndn(4), (const void *const *)bufs, bufs + nin);
    if (s == OMRT_ERR_FORMAT && po.ub_bytes && strstr(omrt_last_error(), "of UB")) {
      s = OMRT_OK; /* a legitimately too-small UB: not a failure */
    } else if (s != OMRT_OK) {
      if (failed++ < 5) {
        test_note("program %d (seed 0x%llx): load failed: %s", p, (unsigned long long)seed,
                  omrt_last_error());
        print_program(&h, g.ins, ops);
      }
    } else {
      loaded++;
      elements += total;
      reference(&h, g.ins, ops, (const void *const *)bufs, want + nin);
      for (int o = 0; o < nout; o++) {
        const operand *op = &ops[nin + o];
        size_t es = dtype_size(op->dtype);
        for (uint64_t e = 0; e < total; e++) {
          const uint8_t *x = (const uint8_t *)bufs[nin + o] + e * es,
                        *y = (const uint8_t *)want[nin + o] + e * es;
          int ok =
              isf(op->dtype) ? ulp_ok(op->dtype, bufs[nin + o], want[nin + o], e) : memcmp(x, y, es) == 0;
          if (!ok) {
            if (failed++ < 5) {
              test_note("program %d (seed 0x%llx): output %d element %llu differs (got %02x%02x.., want "
                        "%02x%02x..)",
                        p, (unsigned long long)seed, o, (unsigned long long)e, x[0], x[es - 1], y[0],
                        y[es - 1]);
              print_program(&h, g.ins, ops);
            }
            break;
          }
        }
      }
    }
    free(data);
    for (int k = 0; k < nin + nout; k++)
      free(bufs[k]), free(want[k]);
  }
  CHECK_EQ_INT(failed, 0);
  CHECK(loaded > nprog * 9 / 10);
  printf("random programs: %d generated, %d run and compared, %d failed, %llu elements, %.2f s\n", nprog,
         loaded, failed, (unsigned long long)elements, (double)elapsed_ns(&t0) / 1e9);
}

/* EXP, SIGMOID and ERF on 2^20 float bit patterns spread over every binade
 * (both signs, infinities, NaNs, the overflow and underflow edges): the
 * executor under test (interpreter, or the JIT under OMRT_JIT=1) gives
 * om_vexp's, om_vsigmoid's and om_verf's bits. */
static void sweep(int op, float (*want_fn)(float), const char *name) {
  enum { N = 1 << 20 };
  static const float edges[] = {0.0f,   -0.0f,   INFINITY, -INFINITY, 88.72f, 88.73f,  89.0f, 89.5f,
                                -87.3f, -103.9f, -104.0f,  -104.5f,   1e-30f, -1e-30f, 0.5f,  -0.5f};
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  for (uint32_t i = 0; i < N; i++) {
    uint32_t b = i * 4096u + (i * 2654435761u) % 4096u;
    memcpy(&x[i], &b, sizeof b);
  }
  memcpy(x, edges, sizeof edges);
  om_vinstr ins[3] = {I(VOP_LOAD, DT_FLOAT32, 0, 0, 0, 0), I(op, DT_FLOAT32, 1, 0, 0, 0),
                      I(VOP_STORE, DT_FLOAT32, 0, 0, 1, 0)};
  om_vprog h = {.ninputs = 1, .noutputs = 1, .nregs = 2, .ninstrs = 3};
  int dts[2] = {DT_FLOAT32, DT_FLOAT32};
  CHECK(run_vec(&h, ins, dts, NULL, N, (const void *const *)&x, (void *const *)&y) == OMRT_OK);
  int bad = 0;
  for (uint32_t i = 0; i < N; i++) {
    float want = want_fn(x[i]);
    if (memcmp(&want, &y[i], sizeof want) && !(isnan(want) && isnan(y[i])) && bad++ < 5)
      test_note("%s(%a) = %a, common/vmath.h gives %a", name, x[i], y[i], want);
  }
  CHECK_EQ_INT(bad, 0);
  free(x), free(y);
}

static float vexp_fn(float x) { return om_vexp(x); }
static float vsigmoid_fn(float x) { return om_vsigmoid(x); }
static float verf_fn(float x) { return om_verf(x); }

int main(void) {
  sweep(VOP_EXP, vexp_fn, "exp");
  sweep(VOP_SIGMOID, vsigmoid_fn, "sigmoid");
  sweep(VOP_ERF, verf_fn, "erf");
  test_random_programs();
  return test_summary("vprog_random");
}
