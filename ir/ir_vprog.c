/* ir_vprog.c - vector programs in the IR (see ir_vprog.h).
 *
 * Three parts. The builder appends om_vinstr records, numbering registers in
 * order and sharing identical pure instructions (so merging two programs that
 * both LOAD an input, or both need the constant 1.0, keeps one copy). The
 * codec maps records to the node attributes of ops.def and back; decoding
 * always ends in ir_vprog_check, so nothing downstream sees a malformed
 * program. The interpreter is the reference semantics of common/vprog.h,
 * written for clarity: every register holds a double (float registers hold
 * values already rounded to f32 or f16; f64 ones are computed in double) or
 * an int64 (already wrapped to the register's width: signed dtypes
 * sign-extended, unsigned ones zero-extended, u64 as its bits, compared and
 * divided as unsigned), and each instruction is applied per element of the
 * outputs' shape with numpy broadcasting of the inputs.
 */
#include "ir/ir_vprog.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/elem.h"
#include "common/fp16.h"

int ir_vprog_is_float(int dt) { return dt == DT_FLOAT32 || dt == DT_FLOAT16 || dt == DT_DOUBLE; }
int ir_vprog_is_int(int dt) { return ir_vprog_is_signed(dt) || ir_vprog_is_unsigned(dt); }
int ir_vprog_is_signed(int dt) { return dt == DT_INT64 || dt == DT_INT32 || dt == DT_INT16 || dt == DT_INT8; }
int ir_vprog_is_unsigned(int dt) {
  return dt == DT_UINT64 || dt == DT_UINT32 || dt == DT_UINT16 || dt == DT_UINT8;
}
int ir_vprog_dtype_ok(int dt) { return ir_vprog_is_float(dt) || ir_vprog_is_int(dt) || dt == DT_BOOL; }

/* ---- builder ---------------------------------------------------------- */

void ir_vprog_init(ir_vprog *p, arena *a) { *p = (ir_vprog){.a = a}; }

static int same_instr(const om_vinstr *x, const om_vinstr *y) {
  return x->op == y->op && x->dtype == y->dtype && x->a == y->a && x->b == y->b && x->c == y->c &&
         memcmp(&x->imm, &y->imm, sizeof x->imm) == 0;
}

static uint32_t instr_hash(const om_vinstr *x) {
  uint64_t h = (uint64_t)x->op | (uint64_t)x->dtype << 8 | (uint64_t)x->a << 16 | (uint64_t)x->b << 32 |
               (uint64_t)x->c << 48;
  uint64_t imm;
  memcpy(&imm, &x->imm, sizeof imm);
  h = (h ^ (imm + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2))) * 0xff51afd7ed558ccdu;
  return (uint32_t)(h ^ h >> 32);
}

/* The sharing-table slot of the instruction equal to x, or the empty slot
 * where it would go. */
static int *seen_slot(const ir_vprog *p, const om_vinstr *x) {
  uint32_t mask = (uint32_t)p->seencap - 1;
  for (uint32_t i = instr_hash(x) & mask;; i = (i + 1) & mask)
    if (p->seen[i] < 0 || same_instr(&p->ins[p->seen[i]], x)) return &p->seen[i];
}

/* Brings the sharing table up to date with ins[0..count). -1: no memory. */
static int seen_update(ir_vprog *p) {
  if (2 * (p->nseen_entries + p->count - p->nseen + 1) > p->seencap) { /* rebuild, larger */
    int cap = 64;
    while (cap < 2 * (p->count + 1))
      cap *= 2;
    int *seen = arena_array(p->a, (size_t)cap, sizeof *seen);
    if (!seen) return -1;
    for (int i = 0; i < cap; i++)
      seen[i] = -1;
    p->seen = seen;
    p->seencap = cap;
    p->nseen = p->nseen_entries = 0;
  }
  for (; p->nseen < p->count; p->nseen++) {
    if (p->ins[p->nseen].op == VOP_STORE) continue;
    int *slot = seen_slot(p, &p->ins[p->nseen]);
    if (*slot < 0) { /* the earliest of equal instructions stays */
      *slot = p->nseen;
      p->nseen_entries++;
    }
  }
  return 0;
}

int ir_vprog_append(ir_vprog *p, om_vinstr in) {
  if (p->nomem) return -1;
  if (in.op != VOP_STORE) {
    if (seen_update(p)) {
      p->nomem = 1;
      return -1;
    }
    int at = *seen_slot(p, &in);
    if (at >= 0) return p->ins[at].dst;
    if (p->nregs >= 0xFFFF || arena_grow(p->a, (void **)&p->rdt, &p->regcap, p->nregs, sizeof *p->rdt)) {
      p->nomem = 1;
      return -1;
    }
    in.dst = (uint16_t)p->nregs;
    p->rdt[p->nregs++] = in.dtype;
  } else {
    in.dst = 0;
  }
  if (arena_grow(p->a, (void **)&p->ins, &p->cap, p->count, sizeof *p->ins)) {
    p->nomem = 1;
    return -1;
  }
  p->ins[p->count++] = in;
  return in.op == VOP_STORE ? 0 : in.dst;
}

int ir_vprog_op(ir_vprog *p, vop op, int dtype, int a, int b, int c) {
  if (a < 0 || b < 0 || c < 0) return -1; /* an operand failed to build */
  om_vinstr in = {
      .op = (uint8_t)op, .dtype = (uint8_t)dtype, .a = (uint16_t)a, .b = (uint16_t)b, .c = (uint16_t)c};
  return ir_vprog_append(p, in);
}

int ir_vprog_load(ir_vprog *p, int input, int dtype) { return ir_vprog_op(p, VOP_LOAD, dtype, input, 0, 0); }

int ir_vprog_const_f(ir_vprog *p, int dtype, double v) {
  om_vinstr in = {.op = VOP_CONST, .dtype = (uint8_t)dtype};
  in.imm.f = dtype == DT_DOUBLE ? v : (double)(float)v;
  return ir_vprog_append(p, in);
}

int ir_vprog_const_i(ir_vprog *p, int dtype, int64_t v) {
  om_vinstr in = {.op = VOP_CONST, .dtype = (uint8_t)dtype};
  in.imm.i = dtype == DT_BOOL ? v != 0 : v;
  return ir_vprog_append(p, in);
}

int ir_vprog_isinf(ir_vprog *p, int reg, int detect_mask) {
  if (reg < 0) return -1;
  om_vinstr in = {.op = VOP_ISINF, .dtype = DT_BOOL, .a = (uint16_t)reg};
  in.imm.i = detect_mask & 3;
  return ir_vprog_append(p, in);
}

int ir_vprog_cast(ir_vprog *p, int reg, int dtype) {
  if (reg < 0) return -1;
  return p->rdt[reg] == dtype ? reg : ir_vprog_op(p, VOP_CAST, dtype, reg, 0, 0);
}

int ir_vprog_store(ir_vprog *p, int output, int reg) {
  if (reg < 0) return -1;
  om_vinstr in = {.op = VOP_STORE, .dtype = p->rdt[reg], .a = (uint16_t)output, .b = (uint16_t)reg};
  return ir_vprog_append(p, in);
}

/* ---- checking ---------------------------------------------------------- */

typedef enum opclass { K_NONE, K_UNARY, K_BINARY, K_TERNARY } opclass;

static opclass op_class(int op) {
  if (op >= VOP_CAST && op <= VOP_SOFTPLUS) return K_UNARY;
  if (op >= VOP_ADD && op <= VOP_GE) return K_BINARY;
  if (op >= VOP_SELECT && op <= VOP_FMA) return K_TERNARY;
  return K_NONE;
}

/* The dtype rule of `op` for result dtype dt and operand dtypes ta, tb, tc
 * (unused ones ignored); NULL when it holds, else what is wrong. */
static const char *dtype_rule(int op, int dt, int ta, int tb, int tc) {
  int fl = ir_vprog_is_float(dt), in = ir_vprog_is_int(dt), num = fl || in;
  switch (op) {
  case VOP_CAST: return NULL;
  case VOP_NEG:
  case VOP_ABS:
  case VOP_SIGN: return ta == dt && num ? NULL : "a numeric operand of the result's dtype";
  case VOP_NOT: return ta == dt && dt == DT_BOOL ? NULL : "bool";
  case VOP_BITNOT: return ta == dt && in ? NULL : "an integer operand of the result's dtype";
  case VOP_ISNAN:
  case VOP_ISINF: return dt == DT_BOOL && ir_vprog_is_float(ta) ? NULL : "a float operand and a bool result";
  case VOP_ADD:
  case VOP_SUB:
  case VOP_MUL:
  case VOP_DIV:
  case VOP_MOD:
  case VOP_FMOD:
  case VOP_MAX:
  case VOP_MIN: return ta == dt && tb == dt && num ? NULL : "numeric operands of the result's dtype";
  case VOP_POW: return ta == dt && tb == dt && fl ? NULL : "float operands of the result's dtype";
  case VOP_AND:
  case VOP_OR:
  case VOP_XOR: return ta == dt && tb == dt && dt == DT_BOOL ? NULL : "bool operands";
  case VOP_BITAND:
  case VOP_BITOR:
  case VOP_BITXOR:
  case VOP_SHL:
  case VOP_SHR: return ta == dt && tb == dt && in ? NULL : "integer operands of the result's dtype";
  case VOP_EQ:
  case VOP_NE: return dt == DT_BOOL && ta == tb ? NULL : "operands of one dtype and a bool result";
  case VOP_LT:
  case VOP_LE:
  case VOP_GT:
  case VOP_GE:
    return dt == DT_BOOL && ta == tb && ta != DT_BOOL ? NULL
                                                      : "numeric operands of one dtype and a bool result";
  case VOP_SELECT:
    return ta == DT_BOOL && tb == dt && tc == dt ? NULL : "a bool condition and values of the result's dtype";
  case VOP_CLAMP:
    return ta == dt && tb == dt && tc == dt && num ? NULL : "numeric operands of the result's dtype";
  case VOP_FMA: return ta == dt && tb == dt && tc == dt && fl ? NULL : "float operands of the result's dtype";
  default: /* the float math functions */
    return ta == dt && fl ? NULL : "a float operand of the result's dtype";
  }
}

status ir_vprog_check(const ir_node *n, const om_vinstr *ins, int count, diag *d) {
  if (n->nin + n->nout > VPROG_MAX_IO)
    return ir_node_error(d, ST_ERR_LIMIT, n,
                         "%d inputs and %d outputs exceed the %d tensors of a vector program", n->nin,
                         n->nout, VPROG_MAX_IO);
  if (count > VPROG_MAX_INSTRS)
    return ir_node_error(d, ST_ERR_LIMIT, n, "%d instructions exceed %d", count, VPROG_MAX_INSTRS);
  uint8_t rdt[VPROG_MAX_INSTRS];
  int nregs = 0;
  unsigned stored = 0;
  for (int k = 0; k < count; k++) {
    const om_vinstr *in = &ins[k];
    int op = in->op, dt = in->dtype;
    if (!ir_vprog_dtype_ok(dt))
      return ir_node_error(d, ST_ERR_INVALID, n, "instruction %d: dtype %d is not a vector dtype", k, dt);
    if (op == VOP_STORE) {
      if (in->a >= n->nout || in->b >= nregs)
        return ir_node_error(d, ST_ERR_INVALID, n,
                             "instruction %d: STORE of r%d to output %d is out of range", k, in->b, in->a);
      if (stored & (1u << in->a))
        return ir_node_error(d, ST_ERR_INVALID, n, "instruction %d: output %d is stored twice", k, in->a);
      if (rdt[in->b] != dt || !n->out[in->a] || (int)n->out[in->a]->dtype != dt)
        return ir_node_error(d, ST_ERR_INVALID, n,
                             "instruction %d: STORE dtype %s differs from the register's or output '%s''s", k,
                             dtype_name(dt), n->out[in->a] ? n->out[in->a]->name : "?");
      stored |= 1u << in->a;
      continue;
    }
    if (in->dst != nregs)
      return ir_node_error(d, ST_ERR_INVALID, n, "instruction %d defines r%d, expected r%d", k, in->dst,
                           nregs);
    opclass kc = op_class(op);
    if (op == VOP_LOAD) {
      if (in->a >= n->nin || !n->in[in->a] || (int)n->in[in->a]->dtype != dt)
        return ir_node_error(d, ST_ERR_INVALID, n,
                             "instruction %d: LOAD of input %d as %s does not match the input", k, in->a,
                             dtype_name(dt));
    } else if (op != VOP_CONST) {
      if (kc == K_NONE) return ir_node_error(d, ST_ERR_INVALID, n, "instruction %d: unknown op %d", k, op);
      int nops = kc == K_UNARY ? 1 : kc == K_BINARY ? 2 : 3;
      const uint16_t opnd[3] = {in->a, in->b, in->c};
      for (int j = 0; j < nops; j++)
        if (opnd[j] >= nregs)
          return ir_node_error(d, ST_ERR_INVALID, n, "instruction %d: operand r%d is not defined before it",
                               k, opnd[j]);
      const char *why = dtype_rule(op, dt, rdt[in->a], nops > 1 ? rdt[in->b] : 0, nops > 2 ? rdt[in->c] : 0);
      if (why)
        return ir_node_error(d, ST_ERR_INVALID, n, "instruction %d (op %d, %s): needs %s", k, op,
                             dtype_name(dt), why);
    }
    rdt[nregs++] = (uint8_t)dt;
  }
  for (int j = 0; j < n->nout; j++)
    if (!(stored & (1u << j))) return ir_node_error(d, ST_ERR_INVALID, n, "output %d is never stored", j);
  return ST_OK;
}

/* ---- attributes <-> records -------------------------------------------- */

status ir_vprog_read(const ir_node *n, arena *a, ir_vprog *p, diag *d) {
  ir_vprog_init(p, a);
  const ir_attr *prog = ir_attr_find(n, "prog"), *fimm = ir_attr_find(n, "fimm"),
                *iimm = ir_attr_find(n, "iimm");
  if (!prog || prog->kind != IR_ATTR_INTS || prog->n % 6 || prog->n == 0)
    return ir_node_error(d, ST_ERR_INVALID, n,
                         "attribute prog must be a non-empty INTS list of 6 per instruction");
  if ((fimm && fimm->kind != IR_ATTR_FLOATS) || (iimm && iimm->kind != IR_ATTR_INTS))
    return ir_node_error(d, ST_ERR_INVALID, n, "attributes fimm / iimm must be FLOATS / INTS");
  int count = prog->n / 6;
  if (count > VPROG_MAX_INSTRS)
    return ir_node_error(d, ST_ERR_LIMIT, n, "%d instructions exceed %d", count, VPROG_MAX_INSTRS);
  p->ins = arena_array(a, (size_t)count, sizeof *p->ins);
  p->rdt = arena_array(a, (size_t)count, sizeof *p->rdt);
  if (!p->ins || !p->rdt) return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory decoding the program");
  p->cap = p->regcap = count;
  for (int k = 0; k < count; k++) {
    const int64_t *f = prog->ints + 6 * k;
    for (int j = 0; j < 6; j++)
      if (f[j] < 0 || f[j] > 0xFFFF || (j < 2 && f[j] > 0xFF))
        return ir_node_error(d, ST_ERR_INVALID, n, "instruction %d: field %d = %lld is out of range", k, j,
                             (long long)f[j]);
    om_vinstr in = {.op = (uint8_t)f[0],
                    .dtype = (uint8_t)f[1],
                    .dst = (uint16_t)f[2],
                    .a = (uint16_t)f[3],
                    .b = (uint16_t)f[4],
                    .c = (uint16_t)f[5]};
    if (in.op == VOP_CONST) {
      int fl = ir_vprog_is_float(in.dtype);
      const ir_attr *src = fl ? fimm : iimm;
      if (!src || in.a >= src->n)
        return ir_node_error(d, ST_ERR_INVALID, n, "instruction %d: CONST reads %s[%d], which is missing", k,
                             fl ? "fimm" : "iimm", in.a);
      if (fl)
        in.imm.f = in.dtype == DT_DOUBLE ? src->floats[in.a] : (double)(float)src->floats[in.a];
      else
        in.imm.i = src->ints[in.a];
      in.a = 0;
    } else if (in.op == VOP_ISINF) {
      in.imm.i = in.b & 3;
      in.b = 0;
    }
    p->ins[k] = in;
    if (in.op != VOP_STORE) p->rdt[p->nregs++] = in.dtype;
  }
  p->count = count;
  return ST_OK;
}

status ir_vprog_decode(const ir_node *n, arena *a, ir_vprog *p, diag *d) {
  status st = ir_vprog_read(n, a, p, d);
  return st ? st : ir_vprog_check(n, p->ins, p->count, d);
}

int ir_vprog_encode(ir_graph *g, ir_node *n, const ir_vprog *p) {
  arena tmp;
  arena_init(&tmp, 0);
  int64_t *prog = arena_array(&tmp, (size_t)p->count * 6 + 1, sizeof *prog);
  int64_t *ii = arena_array(&tmp, (size_t)p->count + 1, sizeof *ii);
  double *ff = arena_array(&tmp, (size_t)p->count + 1, sizeof *ff);
  int nf = 0, ni = 0, rc = -1;
  if (prog && ii && ff) {
    for (int k = 0; k < p->count; k++) {
      om_vinstr in = p->ins[k];
      if (in.op == VOP_CONST && ir_vprog_is_float(in.dtype)) {
        ff[nf] = in.imm.f;
        in.a = (uint16_t)nf++;
      } else if (in.op == VOP_CONST) {
        ii[ni] = in.imm.i;
        in.a = (uint16_t)ni++;
      } else if (in.op == VOP_ISINF) {
        in.b = (uint16_t)in.imm.i;
      }
      int64_t *f = prog + 6 * k;
      f[0] = in.op, f[1] = in.dtype, f[2] = in.dst, f[3] = in.a, f[4] = in.b, f[5] = in.c;
    }
    /* Drop old attributes first so a program without immediates has none. */
    for (int i = 0; i < n->nattrs; i++)
      if (!strcmp(n->attrs[i].name, "fimm") || !strcmp(n->attrs[i].name, "iimm")) {
        memmove(&n->attrs[i], &n->attrs[i + 1], (size_t)(n->nattrs - i - 1) * sizeof *n->attrs);
        n->nattrs--, i--;
      }
    rc = ir_attr_set_ints(g, n, "prog", p->count * 6, prog);
    if (!rc && nf) rc = ir_attr_set_floats(g, n, "fimm", nf, ff);
    if (!rc && ni) rc = ir_attr_set_ints(g, n, "iimm", ni, ii);
  }
  arena_free(&tmp);
  return rc;
}

/* ---- interpreter -------------------------------------------------------- */

typedef union reg {
  double f;
  int64_t i;
} reg;

/* v rounded to float dtype dt (f32 and f16 results are computed in f32, so
 * f16 rounds from the float; f64 stays). */
static double round_to(int dt, double v) {
  if (dt == DT_DOUBLE) return v;
  float f = (float)v;
  return dt == DT_FLOAT16 ? (double)half_to_float(float_to_half(f)) : (double)f;
}

/* v rounded to f16 once (CAST f64 -> f16): through float with round-to-odd,
 * which a second rounding to nearest cannot turn into a double rounding. */
static double double_to_half(double v) { return half_to_float(float_to_half(double_to_float_odd(v))); }

static int bits_of(int dt) { return 8 * (int)dtype_size(dt); }

/* Float -> integer dtype: truncation, saturating to the dtype's range, NaN -> 0. */
static int64_t float_to_int(int dt, double v) {
  if (isnan(v)) return 0;
  v = trunc(v);
  int w = bits_of(dt);
  if (ir_vprog_is_unsigned(dt)) {
    double hi = ldexp(1.0, w); /* 2^w: everything from it up saturates */
    if (v <= 0) return 0;
    if (v >= hi) return (int64_t)(w == 64 ? UINT64_MAX : (1ull << w) - 1);
    return (int64_t)(uint64_t)v;
  }
  double lim = ldexp(1.0, w - 1); /* 2^(w-1) */
  if (v <= -lim) return w == 64 ? INT64_MIN : -(int64_t)lim;
  if (v >= lim) return w == 64 ? INT64_MAX : (int64_t)lim - 1;
  return (int64_t)v;
}

/* Integer register value x.i of dtype dt as a double. */
static double int_value(int dt, int64_t i) {
  return ir_vprog_is_unsigned(dt) ? (double)(uint64_t)i : (double)i;
}

static reg cast(int to, int from, reg x) {
  reg r;
  if (to == DT_BOOL)
    r.i = ir_vprog_is_float(from) ? x.f != 0 : x.i != 0;
  else if (to == DT_FLOAT16 && from == DT_DOUBLE)
    r.f = double_to_half(x.f);
  else if (to == DT_DOUBLE)
    r.f = ir_vprog_is_float(from) ? x.f : int_value(from, x.i);
  else if (ir_vprog_is_float(to))
    r.f = round_to(to, ir_vprog_is_float(from)      ? x.f
                       : ir_vprog_is_unsigned(from) ? (double)(float)(uint64_t)x.i
                                                    : (double)(float)x.i); /* one rounding to f32 */
  else
    r.i = ir_vprog_is_float(from) ? float_to_int(to, x.f) : dtype_wrap_int(to, x.i);
  return r;
}

static double fmaxn(double a, double b) { return isnan(a) || isnan(b) ? NAN : a > b ? a : b; }
static double fminn(double a, double b) { return isnan(a) || isnan(b) ? NAN : a < b ? a : b; }

static double unary_f(int op, double x) {
  switch (op) {
  case VOP_NEG: return -x;
  case VOP_ABS: return fabs(x);
  case VOP_SIGN: return x > 0 ? 1 : x < 0 ? -1 : x; /* 0 and NaN stay */
  case VOP_EXP: return exp(x);
  case VOP_LOG: return log(x);
  case VOP_SQRT: return sqrt(x);
  case VOP_RSQRT: return 1.0 / sqrt(x);
  case VOP_RECIP: return 1.0 / x;
  case VOP_TANH: return tanh(x);
  case VOP_SIGMOID: return 1.0 / (1.0 + exp(-x));
  case VOP_ERF: return erf(x);
  case VOP_FLOOR: return floor(x);
  case VOP_CEIL: return ceil(x);
  case VOP_ROUND: return nearbyint(x);
  case VOP_SIN: return sin(x);
  case VOP_COS: return cos(x);
  case VOP_TAN: return tan(x);
  case VOP_ASIN: return asin(x);
  case VOP_ACOS: return acos(x);
  case VOP_ATAN: return atan(x);
  case VOP_SINH: return sinh(x);
  case VOP_COSH: return cosh(x);
  case VOP_ASINH: return asinh(x);
  case VOP_ACOSH: return acosh(x);
  case VOP_ATANH: return atanh(x);
  default: /* VOP_SOFTPLUS */ return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
  }
}

static double binary_f(int op, double a, double b) {
  switch (op) {
  case VOP_ADD: return a + b;
  case VOP_SUB: return a - b;
  case VOP_MUL: return a * b;
  case VOP_DIV: return a / b;
  case VOP_MOD: {
    double r = fmod(a, b);
    return r != 0 && (r < 0) != (b < 0) ? r + b : r;
  }
  case VOP_FMOD: return fmod(a, b);
  case VOP_POW: return pow(a, b);
  case VOP_MAX: return fmaxn(a, b);
  default: /* VOP_MIN */ return fminn(a, b);
  }
}

static int64_t binary_u(int op, int dt, uint64_t a, uint64_t b) {
  switch (op) {
  case VOP_DIV: return b == 0 ? 0 : (int64_t)(a / b);
  case VOP_MOD:
  case VOP_FMOD: return b == 0 ? 0 : (int64_t)(a % b);
  case VOP_MAX: return (int64_t)(a > b ? a : b);
  case VOP_MIN: return (int64_t)(a < b ? a : b);
  default: /* VOP_SHR, logical */ return b >= (uint64_t)bits_of(dt) ? 0 : (int64_t)(a >> b);
  }
}

static int64_t binary_i(int op, int dt, int64_t a, int64_t b) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  int w = bits_of(dt);
  if (ir_vprog_is_unsigned(dt) &&
      (op == VOP_DIV || op == VOP_MOD || op == VOP_FMOD || op == VOP_MAX || op == VOP_MIN || op == VOP_SHR))
    return binary_u(op, dt, ua, ub);
  switch (op) {
  case VOP_ADD: return dtype_wrap_int(dt, (int64_t)(ua + ub));
  case VOP_SUB: return dtype_wrap_int(dt, (int64_t)(ua - ub));
  case VOP_MUL: return dtype_wrap_int(dt, (int64_t)(ua * ub));
  case VOP_DIV: return b == 0 ? 0 : b == -1 ? dtype_wrap_int(dt, (int64_t)(0 - ua)) : a / b;
  case VOP_MOD: {
    if (b == 0 || b == -1) return 0;
    int64_t r = a % b;
    return r != 0 && (r < 0) != (b < 0) ? r + b : r;
  }
  case VOP_FMOD: return b == 0 || b == -1 ? 0 : a % b;
  case VOP_MAX: return a > b ? a : b;
  case VOP_MIN: return a < b ? a : b;
  case VOP_BITAND: return dtype_wrap_int(dt, a & b);
  case VOP_BITOR: return dtype_wrap_int(dt, a | b);
  case VOP_BITXOR: return dtype_wrap_int(dt, a ^ b);
  case VOP_SHL: return ub >= (uint64_t)w ? 0 : dtype_wrap_int(dt, (int64_t)(ua << ub));
  default: /* VOP_SHR on signed dtypes: arithmetic */ return ub >= (uint64_t)w ? 0 : a >> ub;
  }
}

static int compare(int op, int dt, reg x, reg y) {
  if (ir_vprog_is_unsigned(dt)) { /* zero-extended: compare as unsigned */
    x.i = (int64_t)((uint64_t)x.i ^ (1ull << 63));
    y.i = (int64_t)((uint64_t)y.i ^ (1ull << 63));
  }
  if (ir_vprog_is_float(dt)) {
    double a = x.f, b = y.f;
    switch (op) {
    case VOP_EQ: return a == b;
    case VOP_NE: return a != b;
    case VOP_LT: return a < b;
    case VOP_LE: return a <= b;
    case VOP_GT: return a > b;
    default: return a >= b;
    }
  }
  int64_t a = x.i, b = y.i;
  switch (op) {
  case VOP_EQ: return a == b;
  case VOP_NE: return a != b;
  case VOP_LT: return a < b;
  case VOP_LE: return a <= b;
  case VOP_GT: return a > b;
  default: return a >= b;
  }
}

/* Executes instruction `in` on registers r (operands already computed). */
static reg step(const om_vinstr *in, const uint8_t *rdt, const reg *r) {
  int dt = in->dtype, fl = ir_vprog_is_float(dt);
  reg a = r[in->a], b = r[in->b], c = r[in->c], y = {0};
  int ta = rdt[in->a];
  switch (in->op) {
  case VOP_CONST:
    if (fl)
      y.f = round_to(dt, in->imm.f);
    else
      y.i = dtype_wrap_int(dt, in->imm.i);
    return y;
  case VOP_CAST: return cast(dt, ta, a);
  case VOP_NOT: y.i = !a.i; return y;
  case VOP_BITNOT: y.i = dtype_wrap_int(dt, ~a.i); return y;
  case VOP_ISNAN: y.i = isnan(a.f) != 0; return y;
  case VOP_ISINF:
    y.i = isinf(a.f) && ((a.f > 0 && (in->imm.i & 1)) || (a.f < 0 && (in->imm.i & 2)));
    return y;
  case VOP_AND: y.i = a.i && b.i; return y;
  case VOP_OR: y.i = a.i || b.i; return y;
  case VOP_XOR: y.i = (a.i != 0) != (b.i != 0); return y;
  case VOP_EQ:
  case VOP_NE:
  case VOP_LT:
  case VOP_LE:
  case VOP_GT:
  case VOP_GE: y.i = compare(in->op, ta, a, b); return y;
  case VOP_SELECT: return a.i ? b : c;
  case VOP_CLAMP:
    if (fl)
      y.f = fminn(fmaxn(a.f, b.f), c.f);
    else
      y.i = compare(VOP_LT, dt, a, b) ? b.i : a.i, y.i = compare(VOP_GT, dt, y, c) ? c.i : y.i;
    return y;
  case VOP_FMA:
    if (dt == DT_DOUBLE)
      y.f = fma(a.f, b.f, c.f);
    else
      y.f = round_to(dt, fmaf((float)a.f, (float)b.f, (float)c.f));
    return y;
  default: break;
  }
  if (op_class(in->op) == K_UNARY) {
    if (fl) {
      y.f = round_to(dt, unary_f(in->op, a.f));
    } else if (in->op == VOP_NEG) {
      y.i = dtype_wrap_int(dt, (int64_t)(0 - (uint64_t)a.i));
    } else if (in->op == VOP_ABS) {
      y.i = ir_vprog_is_unsigned(dt) ? a.i : dtype_wrap_int(dt, a.i < 0 ? (int64_t)(0 - (uint64_t)a.i) : a.i);
    } else { /* SIGN */
      y.i = ir_vprog_is_unsigned(dt) ? a.i != 0 : a.i > 0 ? 1 : a.i < 0 ? -1 : 0;
    }
    return y;
  }
  if (fl)
    y.f = round_to(dt, binary_f(in->op, a.f, b.f));
  else
    y.i = binary_i(in->op, dt, a.i, b.i);
  return y;
}

/* LOAD and STORE: one element through common/elem.h (a float register
 * holds a double, an integer or bool register an int64). */
static reg load_elem(const void *p, int dt, int64_t i) {
  reg r;
  if (elem_is_float(dt))
    r.f = elem_get(p, dt, (size_t)i);
  else
    r.i = elem_get_int(p, dt, (size_t)i);
  return r;
}

static void store_elem(void *p, int dt, int64_t i, reg r) {
  if (elem_is_float(dt))
    elem_put(p, dt, (size_t)i, r.f);
  else
    elem_put_int(p, dt, (size_t)i, r.i);
}

status ir_vprog_eval(const ir_node *n, const void *const *inputs, void **outputs_out, arena *a, diag *d) {
  ir_vprog p;
  status st = ir_vprog_decode(n, a, &p, d);
  if (st) return st;
  const ir_value *y = n->out[0];
  int rank = y->rank;
  for (int j = 0; j < n->nout; j++) {
    const ir_value *o = n->out[j];
    if (o->rank != rank || memcmp(o->dims, y->dims, sizeof(int64_t) * (size_t)rank))
      return ir_node_error(d, ST_ERR_INVALID, n, "outputs '%s' and '%s' differ in shape", y->name, o->name);
    int64_t bytes = ir_value_bytes(o);
    outputs_out[j] = arena_alloc_aligned(a, bytes > 0 ? (size_t)bytes : 1, 64);
    if (!outputs_out[j]) return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory evaluating");
  }
  /* strides of each input over the output dims (0 where it broadcasts) */
  int64_t st_in[VPROG_MAX_IO][MAX_RANK], off[VPROG_MAX_IO] = {0}, idx[MAX_RANK] = {0};
  for (int i = 0; i < n->nin; i++) {
    const ir_value *v = n->in[i];
    int shift = rank - v->rank;
    int64_t s = 1;
    if (shift < 0)
      return ir_node_error(d, ST_ERR_INVALID, n, "input '%s' has a higher rank than the outputs", v->name);
    for (int k = rank - 1; k >= 0; k--) {
      int64_t dim = k >= shift ? v->dims[k - shift] : 1;
      if (dim != 1 && dim != y->dims[k])
        return ir_node_error(d, ST_ERR_INVALID, n, "input '%s' does not broadcast to the outputs", v->name);
      st_in[i][k] = dim == 1 ? 0 : s;
      s *= dim;
    }
  }
  reg *r = arena_array(a, (size_t)p.nregs + 1, sizeof *r);
  if (!r) return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory evaluating");
  int64_t count = ir_value_elements(y);
  for (int64_t e = 0; e < count; e++) {
    for (int k = 0; k < p.count; k++) {
      const om_vinstr *in = &p.ins[k];
      if (in->op == VOP_LOAD)
        r[in->dst] = load_elem(inputs[in->a], in->dtype, off[in->a]);
      else if (in->op == VOP_STORE)
        store_elem(outputs_out[in->a], in->dtype, e, r[in->b]);
      else
        r[in->dst] = step(in, p.rdt, r);
    }
    for (int k = rank - 1; k >= 0; k--) { /* next index; offsets follow */
      idx[k]++;
      for (int i = 0; i < n->nin; i++)
        off[i] += st_in[i][k];
      if (idx[k] < y->dims[k]) break;
      for (int i = 0; i < n->nin; i++)
        off[i] -= st_in[i][k] * y->dims[k];
      idx[k] = 0;
    }
  }
  return ST_OK;
}
