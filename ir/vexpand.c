/* vexpand.c - the expansion of every elementwise op into vector
 * instructions (common/vprog.h), one case per op.
 *
 * An expansion sees its operands as registers in the dtypes of the op's
 * input values and must leave its result in the output value's dtype; the
 * vectorize pass adds the LOADs and the STORE around it. Ops that the vector
 * unit has an instruction for map to it (Exp -> EXP, Less -> LT, ...);
 * activations are short formulas of the ONNX definitions, written with the
 * attributes the frontend made explicit (ops.def), e.g.
 *   HardSwish(x)  = x * clamp(x * 1/6 + 1/2, 0, 1)      (FMA + CLAMP + MUL)
 *   Gelu(x)       = x/2 * (1 + erf(x / sqrt 2))
 *   Selu(x)       = x <= 0 ? gamma * (alpha * exp(x) - alpha) : gamma * x
 * Variadic Max/Min/Sum/Mean are left-to-right chains. Integer Pow goes
 * through f32 (POW is a float instruction). QuantizeLinear and
 * DequantizeLinear are common/quant.h's q_quantize and q_dequantize:
 *   Quantize(x, s, zp)    = CAST(CLAMP(CAST(CLAMP(ROUND(x / s), -2^24, 2^24),
 *                           i32) + zp, lo, hi), to), x / s in f32
 *   Dequantize(x, s, zp)  = CAST(CAST(x - zp in i32, f32) * s, to)
 * Immediates are CONST instructions in the operand dtype; the builder shares
 * equal ones.
 */
#include "ir/vexpand.h"

#include <math.h>

#include "common/quant.h"

typedef struct vx {
  ir_vprog *p;
  const ir_node *n;
  const int *in; /* registers of the inputs */
  int dt;        /* dtype of in[0] (Where: of in[1]) */
} vx;

/* Immediate v in dtype dt. */
static int imm(vx *x, int dt, double v) {
  if (ir_vprog_is_float(dt)) return ir_vprog_const_f(x->p, dt, v);
  return ir_vprog_const_i(x->p, dt, (int64_t)v);
}
static int K(vx *x, double v) { return imm(x, x->dt, v); }
static int U(vx *x, vop op, int a) { return ir_vprog_op(x->p, op, x->dt, a, 0, 0); }
static int B(vx *x, vop op, int a, int b) { return ir_vprog_op(x->p, op, x->dt, a, b, 0); }
static int T(vx *x, vop op, int a, int b, int c) { return ir_vprog_op(x->p, op, x->dt, a, b, c); }
static int CMP(vx *x, vop op, int a, int b) { return ir_vprog_op(x->p, op, DT_BOOL, a, b, 0); }

/* The single instruction of the ops that have one. */
static int unary_vop(ir_op op) {
  switch (op) {
  case IR_OP_NEG: return VOP_NEG;
  case IR_OP_ABS: return VOP_ABS;
  case IR_OP_SIGN: return VOP_SIGN;
  case IR_OP_EXP: return VOP_EXP;
  case IR_OP_LOG: return VOP_LOG;
  case IR_OP_SQRT: return VOP_SQRT;
  case IR_OP_RECIPROCAL: return VOP_RECIP;
  case IR_OP_FLOOR: return VOP_FLOOR;
  case IR_OP_CEIL: return VOP_CEIL;
  case IR_OP_ROUND: return VOP_ROUND;
  case IR_OP_SIN: return VOP_SIN;
  case IR_OP_COS: return VOP_COS;
  case IR_OP_TAN: return VOP_TAN;
  case IR_OP_ASIN: return VOP_ASIN;
  case IR_OP_ACOS: return VOP_ACOS;
  case IR_OP_ATAN: return VOP_ATAN;
  case IR_OP_SINH: return VOP_SINH;
  case IR_OP_COSH: return VOP_COSH;
  case IR_OP_ASINH: return VOP_ASINH;
  case IR_OP_ACOSH: return VOP_ACOSH;
  case IR_OP_ATANH: return VOP_ATANH;
  case IR_OP_ERF: return VOP_ERF;
  case IR_OP_TANH: return VOP_TANH;
  case IR_OP_SIGMOID: return VOP_SIGMOID;
  case IR_OP_SOFTPLUS: return VOP_SOFTPLUS;
  case IR_OP_NOT: return VOP_NOT;
  case IR_OP_BITWISENOT: return VOP_BITNOT;
  default: return 0;
  }
}

static int binary_vop(const ir_node *n) {
  switch (n->op) {
  case IR_OP_ADD: return VOP_ADD;
  case IR_OP_SUB: return VOP_SUB;
  case IR_OP_MUL: return VOP_MUL;
  case IR_OP_DIV: return VOP_DIV;
  case IR_OP_MOD: return ir_attr_int(n, "fmod", 0) ? VOP_FMOD : VOP_MOD;
  case IR_OP_BITWISEAND: return VOP_BITAND;
  case IR_OP_BITWISEOR: return VOP_BITOR;
  case IR_OP_BITWISEXOR: return VOP_BITXOR;
  case IR_OP_AND: return VOP_AND;
  case IR_OP_OR: return VOP_OR;
  case IR_OP_XOR: return VOP_XOR;
  case IR_OP_BITSHIFT: return ir_attr_string(n, "direction", "LEFT")[0] == 'L' ? VOP_SHL : VOP_SHR;
  default: return 0;
  }
}

static int compare_vop(ir_op op) {
  switch (op) {
  case IR_OP_EQUAL: return VOP_EQ;
  case IR_OP_LESS: return VOP_LT;
  case IR_OP_LESSOREQUAL: return VOP_LE;
  case IR_OP_GREATER: return VOP_GT;
  case IR_OP_GREATEROREQUAL: return VOP_GE;
  default: return 0;
  }
}

int ir_vexpand_supported(ir_op op) {
  ir_fusion f = ir_ops[op].fusion;
  return ((f == IR_FUSE_ELEMWISE || f == IR_FUSE_BROADCAST) && op != IR_OP_BATCHNORM &&
          op != IR_OP_VECPROG) ||
         op == IR_OP_IDENTITY;
}

/* Clip to [lo, hi]; an infinite bound (or, for integers, one beyond int64)
 * is no bound. */
static int clip(vx *x, double lo, double hi) {
  int fl = ir_vprog_is_float(x->dt), r = x->in[0];
  int has_lo = fl ? lo > -INFINITY : lo > -9.2e18, has_hi = fl ? hi < INFINITY : hi < 9.2e18;
  if (!fl) lo = ceil(lo), hi = floor(hi); /* the integers inside [lo, hi] */
  if (has_lo && has_hi) return T(x, VOP_CLAMP, r, K(x, lo), K(x, hi));
  if (has_lo) r = B(x, VOP_MAX, r, K(x, lo));
  if (has_hi) r = B(x, VOP_MIN, r, K(x, hi));
  return r;
}

static int gelu(vx *x, int v) {
  int half_x = B(x, VOP_MUL, v, K(x, 0.5));
  if (ir_attr_string(x->n, "approximate", "none")[0] == 't') {
    int cubic = B(x, VOP_MUL, v, T(x, VOP_FMA, B(x, VOP_MUL, v, v), K(x, 0.044715), K(x, 1)));
    int t = U(x, VOP_TANH, B(x, VOP_MUL, cubic, K(x, sqrt(2 / M_PI))));
    return B(x, VOP_MUL, half_x, B(x, VOP_ADD, t, K(x, 1)));
  }
  int e = U(x, VOP_ERF, B(x, VOP_MUL, v, K(x, M_SQRT1_2)));
  return B(x, VOP_MUL, half_x, B(x, VOP_ADD, e, K(x, 1)));
}

/* QuantizeLinear and DequantizeLinear (the header's formulas). */
static int quant(vx *x) {
  const ir_node *n = x->n;
  ir_vprog *p = x->p;
  const int to = n->out[0]->dtype, zp = n->nin > 2 ? ir_vprog_cast(p, x->in[2], DT_INT32) : -1;
  const int s = ir_vprog_cast(p, x->in[1], DT_FLOAT32);
  if (n->op == IR_OP_DEQUANTIZE) {
    int d = ir_vprog_cast(p, x->in[0], DT_INT32);
    if (zp >= 0) d = ir_vprog_op(p, VOP_SUB, DT_INT32, d, zp, 0);
    int v = ir_vprog_op(p, VOP_MUL, DT_FLOAT32, ir_vprog_cast(p, d, DT_FLOAT32), s, 0);
    return ir_vprog_cast(p, v, to);
  }
  int32_t lo, hi;
  q_range(to, &lo, &hi);
  int t = ir_vprog_op(p, VOP_DIV, DT_FLOAT32, ir_vprog_cast(p, x->in[0], DT_FLOAT32), s, 0);
  t = ir_vprog_op(p, VOP_ROUND, DT_FLOAT32, t, 0, 0);
  t = ir_vprog_op(p, VOP_CLAMP, DT_FLOAT32, t, ir_vprog_const_f(p, DT_FLOAT32, -16777216.0),
                  ir_vprog_const_f(p, DT_FLOAT32, 16777216.0));
  int q = ir_vprog_cast(p, t, DT_INT32);
  if (zp >= 0) q = ir_vprog_op(p, VOP_ADD, DT_INT32, q, zp, 0);
  q = ir_vprog_op(p, VOP_CLAMP, DT_INT32, q, ir_vprog_const_i(p, DT_INT32, lo),
                  ir_vprog_const_i(p, DT_INT32, hi));
  return ir_vprog_cast(p, q, to);
}

/* The result register of n, or -1 when the builder ran out of memory. */
static int expand(vx *x) {
  const ir_node *n = x->n;
  const int *in = x->in;
  int v = in[0], zero, one;
  double alpha = ir_attr_float(n, "alpha", 1.0);
  int op = unary_vop(n->op);
  if (op) return ir_vprog_op(x->p, (vop)op, n->out[0]->dtype, v, 0, 0);
  if ((op = binary_vop(n))) return B(x, (vop)op, v, in[1]);
  if ((op = compare_vop(n->op))) return CMP(x, (vop)op, v, in[1]);
  switch (n->op) {
  case IR_OP_IDENTITY: return v;
  case IR_OP_CAST: return ir_vprog_cast(x->p, v, (int)ir_attr_int(n, "to", x->dt));
  case IR_OP_RELU: return B(x, VOP_MAX, v, K(x, 0));
  case IR_OP_CLIP:
    if (n->nin == 3) return T(x, VOP_CLAMP, v, in[1], in[2]);
    return clip(x, ir_attr_float(n, "min", -INFINITY), ir_attr_float(n, "max", INFINITY));
  case IR_OP_ISNAN: return ir_vprog_op(x->p, VOP_ISNAN, DT_BOOL, v, 0, 0);
  case IR_OP_ISINF:
    return ir_vprog_isinf(x->p, v,
                          (ir_attr_int(n, "detect_positive", 1) ? 1 : 0) |
                              (ir_attr_int(n, "detect_negative", 1) ? 2 : 0));
  case IR_OP_SOFTSIGN: return B(x, VOP_DIV, v, B(x, VOP_ADD, U(x, VOP_ABS, v), K(x, 1)));
  case IR_OP_HARDSIGMOID:
    return T(x, VOP_CLAMP,
             T(x, VOP_FMA, v, K(x, ir_attr_float(n, "alpha", 0.2)), K(x, ir_attr_float(n, "beta", 0.5))),
             K(x, 0), K(x, 1));
  case IR_OP_HARDSWISH:
    return B(x, VOP_MUL, v, T(x, VOP_CLAMP, T(x, VOP_FMA, v, K(x, 1.0 / 6), K(x, 0.5)), K(x, 0), K(x, 1)));
  case IR_OP_LEAKYRELU:
    zero = K(x, 0);
    return T(x, VOP_SELECT, CMP(x, VOP_LT, v, zero), B(x, VOP_MUL, v, K(x, ir_attr_float(n, "alpha", 0.01))),
             v);
  case IR_OP_PRELU:
    zero = K(x, 0);
    return T(x, VOP_SELECT, CMP(x, VOP_LT, v, zero), B(x, VOP_MUL, v, in[1]), v);
  case IR_OP_ELU:
    zero = K(x, 0);
    return T(x, VOP_SELECT, CMP(x, VOP_LT, v, zero),
             B(x, VOP_MUL, B(x, VOP_SUB, U(x, VOP_EXP, v), K(x, 1)), K(x, alpha)), v);
  case IR_OP_SELU: {
    double a = ir_attr_float(n, "alpha", 1.67326319217681884765625);
    int gamma = K(x, ir_attr_float(n, "gamma", 1.05070102214813232421875)), ka = K(x, a);
    zero = K(x, 0);
    int neg = B(x, VOP_MUL, B(x, VOP_SUB, B(x, VOP_MUL, U(x, VOP_EXP, v), ka), ka), gamma);
    return T(x, VOP_SELECT, CMP(x, VOP_LE, v, zero), neg, B(x, VOP_MUL, v, gamma));
  }
  case IR_OP_CELU: {
    zero = K(x, 0), one = K(x, 1);
    int ka = K(x, alpha);
    int neg = B(x, VOP_MUL, ka, B(x, VOP_SUB, U(x, VOP_EXP, B(x, VOP_DIV, v, ka)), one));
    return B(x, VOP_ADD, B(x, VOP_MAX, v, zero), B(x, VOP_MIN, neg, zero));
  }
  case IR_OP_THRESHOLDEDRELU: return T(x, VOP_SELECT, CMP(x, VOP_GT, v, K(x, alpha)), v, K(x, 0));
  case IR_OP_MISH: return B(x, VOP_MUL, v, U(x, VOP_TANH, U(x, VOP_SOFTPLUS, v)));
  case IR_OP_GELU: return gelu(x, v);
  case IR_OP_POW: {
    if (ir_vprog_is_float(x->dt)) return B(x, VOP_POW, v, ir_vprog_cast(x->p, in[1], x->dt));
    int fb = ir_vprog_cast(x->p, v, DT_FLOAT32), fe = ir_vprog_cast(x->p, in[1], DT_FLOAT32);
    return ir_vprog_cast(x->p, ir_vprog_op(x->p, VOP_POW, DT_FLOAT32, fb, fe, 0), x->dt);
  }
  case IR_OP_MAX:
  case IR_OP_MIN:
  case IR_OP_SUM:
  case IR_OP_MEAN: {
    vop step = n->op == IR_OP_MAX ? VOP_MAX : n->op == IR_OP_MIN ? VOP_MIN : VOP_ADD;
    int r = v;
    for (int i = 1; i < n->nin; i++)
      r = B(x, step, r, in[i]);
    return n->op == IR_OP_MEAN && n->nin > 1 ? B(x, VOP_DIV, r, K(x, n->nin)) : r;
  }
  case IR_OP_WHERE: return T(x, VOP_SELECT, v, in[1], in[2]);
  case IR_OP_QUANTIZE:
  case IR_OP_DEQUANTIZE: return quant(x);
  default: return -2;
  }
}

status ir_vexpand_node(ir_vprog *p, const ir_node *n, const int *in_regs, int *out_reg, diag *d) {
  vx x = {p, n, in_regs, n->in[n->op == IR_OP_WHERE ? 1 : 0]->dtype};
  int want = n->out[0]->dtype;
  if (!ir_vexpand_supported(n->op))
    return ir_node_error(d, ST_ERR_UNSUPPORTED, n, "no vector expansion for this op");
  if (ir_vprog_is_int(x.dt) || x.dt == DT_BOOL) {
    switch (n->op) { /* float-only formulas */
    case IR_OP_IDENTITY:
    case IR_OP_CAST:
    case IR_OP_RELU:
    case IR_OP_CLIP:
    case IR_OP_NEG:
    case IR_OP_ABS:
    case IR_OP_SIGN:
    case IR_OP_NOT:
    case IR_OP_BITWISENOT:
    case IR_OP_ADD:
    case IR_OP_SUB:
    case IR_OP_MUL:
    case IR_OP_DIV:
    case IR_OP_MOD:
    case IR_OP_BITSHIFT:
    case IR_OP_BITWISEAND:
    case IR_OP_BITWISEOR:
    case IR_OP_BITWISEXOR:
    case IR_OP_AND:
    case IR_OP_OR:
    case IR_OP_XOR:
    case IR_OP_EQUAL:
    case IR_OP_LESS:
    case IR_OP_LESSOREQUAL:
    case IR_OP_GREATER:
    case IR_OP_GREATEROREQUAL:
    case IR_OP_POW:
    case IR_OP_MAX:
    case IR_OP_MIN:
    case IR_OP_SUM:
    case IR_OP_PRELU:
    case IR_OP_WHERE:
    case IR_OP_DEQUANTIZE: break;
    default:
      return ir_node_error(d, ST_ERR_UNSUPPORTED, n, "dtype %s is not supported (a float op)",
                           dtype_name(x.dt));
    }
  }
  int r = expand(&x);
  if (r == -2) return ir_node_error(d, ST_ERR_UNSUPPORTED, n, "no vector expansion for this op");
  if (r < 0 || p->nomem)
    return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory building the vector program");
  if (p->rdt[r] != want)
    return ir_node_error(d, ST_ERR_INVALID, n, "the expansion yields %s, the output is %s",
                         dtype_name(p->rdt[r]), dtype_name(want));
  *out_reg = r;
  return ST_OK;
}
