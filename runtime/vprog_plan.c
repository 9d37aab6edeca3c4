/* vprog_plan.c - load-time verification of VPROG tasks (om_format.h) and of
 * their vector programs (common/vprog.h), and the plan each task then runs
 * from (runtime/vprog_plan.h; the interpreter is runtime/vprog_exec.c).
 *
 * rt_vprog_check verifies a task and rt_vprog_prepare builds its plan; both
 * go through build(), so the plan is made only from what was verified.
 * The checks, in order (every failure is OMRT_ERR_FORMAT with "task %u
 * (VPROG) '<name>': program at offset N: [instr K (op.dtype): ]..."):
 *   - the program (its offset) is 8-aligned, the 16-byte header and the
 *     ninstrs x 24-byte instructions lie inside the VPROGS partition,
 *     ninstrs <= VPROG_MAX_INSTRS, nregs <= ninstrs, 1 <= noutputs,
 *     ninputs, noutputs <= VPROG_MAX_IO, ninputs + noutputs == ntensors;
 *   - tensors: every slot present; dtype one of f32 f16 f64 i64 i32 i16 i8
 *     u64 u32 u16 u8 bool;
 *     layout ND, NC1HWC0 or NDC1HWC0, one layout for all; outputs share dims
 *     and are not WEIGHTS; inputs broadcast to the outputs over the physical
 *     array (ND: numpy rules, right-aligned, size-1 dims repeat; NC1HWC0:
 *     same C, N / H / W equal or 1; NDC1HWC0 alike with D);
 *   - instructions, in order: known opcode; registers read are < nregs and
 *     written by an earlier instruction; the destination is written for the
 *     first time (SSA); the typing rules below; then every output stored
 *     exactly once and every register r0..nregs-1 written;
 *   - block_dim <= the 256-element tiles of the outputs' physical elements;
 *   - the registers live at once fit the UB (see vprog_plan.h: 256 lanes of
 *     8 bytes per live register, fewer lanes (>= 16) if the UB is small).
 *
 * Typing rules. F = {f32, f16, f64}, I = {i64, i32, i16, i8, u64, u32,
 * u16, u8}, N = F + I, B = {bool}, A = N + B; "dst" is the instruction's
 * dtype field.
 *   LOAD a         a = input index; dst == that input tensor's dtype
 *   STORE a, b     a = output index; b's dtype == dtype field == the output's
 *   CONST          dst in A; imm.f for F (rounded to f32, then to f16 for
 *                  f16; f64 as it is), imm.i for I (wrapped to the width)
 *                  and B (!= 0)
 *   CAST a         a in A, dst in A (any to any)
 *   NEG ABS SIGN   a, dst: one N dtype
 *   NOT            a, dst: B
 *   BITNOT         a, dst: one I dtype
 *   EXP LOG SQRT RSQRT RECIP TANH SIGMOID ERF FLOOR CEIL ROUND SIN COS TAN
 *   ASIN ACOS ATAN SINH COSH ASINH ACOSH ATANH SOFTPLUS   a, dst: one F dtype
 *   ISNAN ISINF    a in F, dst B; ISINF's imm.i in 0..3 (bit 0 +inf, bit 1 -inf)
 *   ADD SUB MUL DIV MOD FMOD POW MAX MIN   a, b, dst: one N dtype
 *   AND OR XOR     a, b, dst: B
 *   BITAND BITOR BITXOR SHL SHR            a, b, dst: one I dtype
 *   EQ NE LT LE GT GE                      a, b: one A dtype; dst B
 *   SELECT         a B; b, c, dst: one A dtype
 *   CLAMP FMA      a, b, c, dst: one N dtype
 *
 * Semantics vprog.h leaves open, as the interpreter implements them: float
 * MAX(a, b) is a when a > b or a is NaN, else b (MIN alike with <), so NaN
 * propagates and the pair (+0, -0) gives b; CLAMP(a, b, c) = MIN(MAX(a, b),
 * c); SIGN keeps +-0 and NaN; ROUND is nearbyint (half to even); SIGMOID is
 * 1 / (1 + exp(-x)); SOFTPLUS is x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
 * RSQRT is 1 / sqrt(x); float MOD is fmod(a, b) plus b when non-zero with a
 * sign other than b's; integer FMOD is C's %; INT_MIN / -1 wraps and
 * INT_MIN % -1 is 0; integer POW wraps, a negative exponent gives 1 for base
 * 1, +-1 for base -1, else 0; SHL / SHR read the count as unsigned and
 * counts >= the width give 0; CAST float -> int saturates to the
 * destination's range and maps NaN to 0, int -> int wraps, f64 -> f16 rounds
 * once; bool inputs are read as (byte != 0). Unsigned registers compare,
 * divide and shift (logically) as unsigned numbers; their MOD is FMOD and
 * NEG wraps. f64 registers compute in double with libm's double functions.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels.h"
#include "runtime/vprog_plan.h"

#define VPROG_DTYPES "f32 f16 f64 i64 i32 i16 i8 u64 u32 u16 u8 bool"

typedef enum vsig {
  SIG_NONE = 0, /* not an opcode */
  SIG_LOAD,
  SIG_STORE,
  SIG_CONST,
  SIG_CAST,
  SIG_UNARY,   /* a, dst one dtype of the set */
  SIG_TEST,    /* a in the set, dst bool */
  SIG_BINARY,  /* a, b, dst one dtype of the set */
  SIG_CMP,     /* a, b one dtype, dst bool */
  SIG_SELECT,  /* a bool, b, c, dst one dtype */
  SIG_TERNARY, /* a, b, c, dst one dtype of the set */
} vsig;

typedef enum vset { SET_ANY = 1, SET_NUM, SET_FLOAT, SET_INT, SET_BOOL } vset;

typedef struct vrule {
  uint8_t sig, set;
} vrule;

#define UN(set)                                                                                              \
  { SIG_UNARY, set }
#define BIN(set)                                                                                             \
  { SIG_BINARY, set }
static const vrule rules[] = {
    [VOP_LOAD] = {SIG_LOAD, SET_ANY},
    [VOP_STORE] = {SIG_STORE, SET_ANY},
    [VOP_CONST] = {SIG_CONST, SET_ANY},
    [VOP_CAST] = {SIG_CAST, SET_ANY},
    [VOP_NEG] = UN(SET_NUM),
    [VOP_ABS] = UN(SET_NUM),
    [VOP_SIGN] = UN(SET_NUM),
    [VOP_NOT] = UN(SET_BOOL),
    [VOP_BITNOT] = UN(SET_INT),
    [VOP_EXP] = UN(SET_FLOAT),
    [VOP_LOG] = UN(SET_FLOAT),
    [VOP_SQRT] = UN(SET_FLOAT),
    [VOP_RSQRT] = UN(SET_FLOAT),
    [VOP_RECIP] = UN(SET_FLOAT),
    [VOP_TANH] = UN(SET_FLOAT),
    [VOP_SIGMOID] = UN(SET_FLOAT),
    [VOP_ERF] = UN(SET_FLOAT),
    [VOP_FLOOR] = UN(SET_FLOAT),
    [VOP_CEIL] = UN(SET_FLOAT),
    [VOP_ROUND] = UN(SET_FLOAT),
    [VOP_SIN] = UN(SET_FLOAT),
    [VOP_COS] = UN(SET_FLOAT),
    [VOP_TAN] = UN(SET_FLOAT),
    [VOP_ASIN] = UN(SET_FLOAT),
    [VOP_ACOS] = UN(SET_FLOAT),
    [VOP_ATAN] = UN(SET_FLOAT),
    [VOP_SINH] = UN(SET_FLOAT),
    [VOP_COSH] = UN(SET_FLOAT),
    [VOP_ASINH] = UN(SET_FLOAT),
    [VOP_ACOSH] = UN(SET_FLOAT),
    [VOP_ATANH] = UN(SET_FLOAT),
    [VOP_SOFTPLUS] = UN(SET_FLOAT),
    [VOP_ISNAN] = {SIG_TEST, SET_FLOAT},
    [VOP_ISINF] = {SIG_TEST, SET_FLOAT},
    [VOP_ADD] = BIN(SET_NUM),
    [VOP_SUB] = BIN(SET_NUM),
    [VOP_MUL] = BIN(SET_NUM),
    [VOP_DIV] = BIN(SET_NUM),
    [VOP_MOD] = BIN(SET_NUM),
    [VOP_FMOD] = BIN(SET_NUM),
    [VOP_POW] = BIN(SET_NUM),
    [VOP_MAX] = BIN(SET_NUM),
    [VOP_MIN] = BIN(SET_NUM),
    [VOP_AND] = BIN(SET_BOOL),
    [VOP_OR] = BIN(SET_BOOL),
    [VOP_XOR] = BIN(SET_BOOL),
    [VOP_BITAND] = BIN(SET_INT),
    [VOP_BITOR] = BIN(SET_INT),
    [VOP_BITXOR] = BIN(SET_INT),
    [VOP_SHL] = BIN(SET_INT),
    [VOP_SHR] = BIN(SET_INT),
    [VOP_EQ] = {SIG_CMP, SET_ANY},
    [VOP_NE] = {SIG_CMP, SET_ANY},
    [VOP_LT] = {SIG_CMP, SET_ANY},
    [VOP_LE] = {SIG_CMP, SET_ANY},
    [VOP_GT] = {SIG_CMP, SET_ANY},
    [VOP_GE] = {SIG_CMP, SET_ANY},
    [VOP_SELECT] = {SIG_SELECT, SET_ANY},
    [VOP_CLAMP] = {SIG_TERNARY, SET_NUM},
    [VOP_FMA] = {SIG_TERNARY, SET_NUM},
};

static vrule rule_of(int op) {
  return op < (int)(sizeof rules / sizeof *rules) ? rules[op] : (vrule){SIG_NONE, 0};
}

static int is_float(int dt) { return dt == DT_FLOAT32 || dt == DT_FLOAT16 || dt == DT_DOUBLE; }
static int is_int(int dt) {
  return dt == DT_INT64 || dt == DT_INT32 || dt == DT_INT16 || dt == DT_INT8 || dt == DT_UINT64 ||
         dt == DT_UINT32 || dt == DT_UINT16 || dt == DT_UINT8;
}
static int is_any(int dt) { return is_float(dt) || is_int(dt) || dt == DT_BOOL; }

static int in_set(int dt, int set) {
  switch (set) {
  case SET_NUM: return is_float(dt) || is_int(dt);
  case SET_FLOAT: return is_float(dt);
  case SET_INT: return is_int(dt);
  case SET_BOOL: return dt == DT_BOOL;
  default: return is_any(dt);
  }
}

static const char *set_name(int set) {
  switch (set) {
  case SET_NUM: return "numeric (f32 f16 f64 i64 i32 i16 i8 u64 u32 u16 u8)";
  case SET_FLOAT: return "float (f32 f16 f64)";
  case SET_INT: return "integer (i64 i32 i16 i8 u64 u32 u16 u8)";
  case SET_BOOL: return "bool";
  default: return VPROG_DTYPES;
  }
}

static const char *dt_str(int dt) {
  const char *s = dtype_name(dt);
  return s && is_any(dt) ? s : "unsupported";
}

/* The registers an instruction reads (0..3 of them) into regs; returns how many. */
static int reads(const om_vinstr *in, uint16_t regs[3]) {
  switch (rule_of(in->op).sig) {
  case SIG_STORE: regs[0] = in->b; return 1;
  case SIG_CAST:
  case SIG_UNARY:
  case SIG_TEST: regs[0] = in->a; return 1;
  case SIG_BINARY:
  case SIG_CMP: regs[0] = in->a, regs[1] = in->b; return 2;
  case SIG_SELECT:
  case SIG_TERNARY: regs[0] = in->a, regs[1] = in->b, regs[2] = in->c; return 3;
  default: return 0;
  }
}

static int writes(const om_vinstr *in) { return in->op != VOP_STORE; }

/* Per-build scratch, indexed by register or instruction. */
typedef struct vscratch {
  uint8_t rdt[VPROG_MAX_INSTRS];    /* register dtype; 0 = not written yet */
  uint8_t needed[VPROG_MAX_INSTRS]; /* register read by a kept instruction */
  int32_t last[VPROG_MAX_INSTRS];   /* step of the register's last reader */
  uint16_t slot[VPROG_MAX_INSTRS];  /* register -> UB slot */
  uint16_t free_slots[VPROG_MAX_INSTRS];
  uint16_t order[VPROG_MAX_INSTRS]; /* step -> instruction */
} vscratch;

typedef struct vctx {
  rt_chk c;
  uint32_t off; /* program offset in VPROGS */
  const om_vprog *h;
  const om_vinstr *ins;
  const om_tensor *t[OM_TASK_MAX_TENSORS]; /* the task's tensors, inputs then outputs */
  vscratch *s;
} vctx;

static omrt_status vfail(const vctx *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static omrt_status vfail(const vctx *v, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return rt_chk_fail(&v->c, "program at offset %u: %s", v->off, msg);
}

/* A failure of instruction k: "instr K (op.dtype): ...". */
static omrt_status ifail(const vctx *v, uint32_t k, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static omrt_status ifail(const vctx *v, uint32_t k, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const om_vinstr *in = &v->ins[k];
  const char *op = vop_name(in->op);
  if (!op) return vfail(v, "instr %u: %s", k, msg);
  return vfail(v, "instr %u (%s.%s): %s", k, op, dt_str(in->dtype), msg);
}

/* ---- the program header and the task's tensors ---- */

static omrt_status check_header(vctx *v, const omrt_model *m, const om_task *task) {
  uint64_t size = m->vprogs_bytes, end;
  if (!m->vprogs) return vfail(v, "the package has no VPROGS partition");
  if (v->off % 8) return vfail(v, "offset is not a multiple of 8");
  if ((uint64_t)v->off + sizeof(om_vprog) > size)
    return vfail(v, "the 16-byte header lies outside the VPROGS partition (%llu bytes)",
                 (unsigned long long)size);
  const om_vprog *h = (const om_vprog *)(const void *)(m->vprogs + v->off);
  v->h = h;
  v->ins = (const om_vinstr *)(h + 1);
  if (h->ninstrs > VPROG_MAX_INSTRS) return vfail(v, "ninstrs %u exceeds %d", h->ninstrs, VPROG_MAX_INSTRS);
  end = (uint64_t)v->off + sizeof(om_vprog) + (uint64_t)h->ninstrs * sizeof(om_vinstr);
  if (end > size)
    return vfail(v, "truncated: %u instructions end at byte %llu of the %llu-byte VPROGS partition",
                 h->ninstrs, (unsigned long long)end, (unsigned long long)size);
  if (h->nregs > h->ninstrs)
    return vfail(v, "nregs %u exceeds ninstrs %u (each register is written by one instruction)", h->nregs,
                 h->ninstrs);
  if (h->noutputs < 1 || h->noutputs > VPROG_MAX_IO || h->ninputs > VPROG_MAX_IO)
    return vfail(v, "%u inputs and %u outputs: expected 0..%d inputs and 1..%d outputs", h->ninputs,
                 h->noutputs, VPROG_MAX_IO, VPROG_MAX_IO);
  if ((uint32_t)h->ninputs + h->noutputs != task->ntensors)
    return vfail(v, "%u inputs + %u outputs, but the task has %u tensors", h->ninputs, h->noutputs,
                 task->ntensors);
  return OMRT_OK;
}

/* "input 1" / "output 0" for tensor slot s. */
static const char *slot_str(const vctx *v, uint32_t s, char *buf, size_t n) {
  if (s < v->h->ninputs)
    snprintf(buf, n, "input %u '%s'", s, rt_string(v->c.m, v->t[s]->name));
  else
    snprintf(buf, n, "output %u '%s'", s - v->h->ninputs, rt_string(v->c.m, v->t[s]->name));
  return buf;
}

/* Physical dims of a ND, NC1HWC0 or NDC1HWC0 tensor; returns the count. */
static int physical_dims(const om_tensor *t, int64_t d[RT_VMAX_DIMS]) {
  if (t->layout == LAYOUT_NC1HWC0) {
    d[0] = t->dims[0], d[1] = (t->dims[1] + C0 - 1) / C0, d[2] = t->dims[2], d[3] = t->dims[3], d[4] = C0;
    return 5;
  }
  if (t->layout == LAYOUT_NDC1HWC0) {
    d[0] = t->dims[0], d[1] = t->dims[2], d[2] = (t->dims[1] + C0 - 1) / C0, d[3] = t->dims[3],
    d[4] = t->dims[4], d[5] = C0;
    return 6;
  }
  for (uint32_t k = 0; k < t->rank; k++)
    d[k] = t->dims[k];
  return (int)t->rank;
}

static omrt_status check_tensors(vctx *v) {
  const omrt_model *m = v->c.m;
  const om_task *task = v->c.task;
  uint32_t nin = v->h->ninputs;
  char a[160], b[160];
  for (uint32_t s = 0; s < task->ntensors; s++) {
    if (task->tensors[s] == OM_NONE)
      return rt_chk_fail(&v->c, "tensor slot %u (%s %u) is OM_NONE", s, s < nin ? "input" : "output",
                         s < nin ? s : s - nin);
    v->t[s] = &m->tensors[task->tensors[s]];
  }
  const om_tensor *out0 = v->t[nin];
  for (uint32_t s = 0; s < task->ntensors; s++) {
    const om_tensor *t = v->t[s];
    if (!is_any((int)t->dtype))
      return rt_chk_fail(&v->c, "%s: dtype %u is not a vector-program dtype (" VPROG_DTYPES ")",
                         slot_str(v, s, a, sizeof a), t->dtype);
    if (t->layout != LAYOUT_ND && t->layout != LAYOUT_NC1HWC0 && t->layout != LAYOUT_NDC1HWC0)
      return rt_chk_fail(&v->c, "%s: layout %s, expected ND, NC1HWC0 or NDC1HWC0",
                         slot_str(v, s, a, sizeof a), layout_name((int)t->layout));
    if (t->layout != out0->layout)
      return rt_chk_fail(&v->c, "%s: layout %s differs from %s's %s (one layout per task)",
                         slot_str(v, s, a, sizeof a), layout_name((int)t->layout),
                         slot_str(v, nin, b, sizeof b), layout_name((int)out0->layout));
    if (s >= nin) {
      if (t->region == OM_REGION_WEIGHTS)
        return rt_chk_fail(&v->c, "%s: an output cannot be in the read-only WEIGHTS region",
                           slot_str(v, s, a, sizeof a));
      omrt_status st =
          rt_chk_same_dims(&v->c, slot_str(v, s, a, sizeof a), t, slot_str(v, nin, b, sizeof b), out0);
      if (st) return st;
      continue;
    }
    /* Broadcasting: physical dims right-aligned, each equal or 1; NC1HWC0 and NDC1HWC0 keep C. */
    int64_t od[RT_VMAX_DIMS], id[RT_VMAX_DIMS];
    int ro = physical_dims(out0, od), ri = physical_dims(t, id);
    int bad = ri > ro || (t->layout != LAYOUT_ND && t->dims[1] != out0->dims[1]);
    for (int k = 0; !bad && k < ri; k++)
      bad = id[k] != 1 && id[k] != od[ro - ri + k];
    if (bad) {
      char dims[160];
      size_t len = 0;
      for (uint32_t k = 0; k < out0->rank && len < sizeof dims; k++)
        len += (size_t)snprintf(dims + len, sizeof dims - len, "%s%lld", k ? ", " : "",
                                (long long)out0->dims[k]);
      if (!out0->rank) snprintf(dims, sizeof dims, "scalar");
      len = 0;
      b[0] = '\0';
      for (uint32_t k = 0; k < t->rank && len < sizeof b; k++)
        len += (size_t)snprintf(b + len, sizeof b - len, "%s%lld", k ? ", " : "", (long long)t->dims[k]);
      return rt_chk_fail(&v->c, "%s: dims [%s] (%s) do not broadcast to the outputs' [%s]%s",
                         slot_str(v, s, a, sizeof a), b, layout_name((int)t->layout), dims,
                         t->layout == LAYOUT_NC1HWC0    ? " (NC1HWC0 broadcasts over N, H and W only)"
                         : t->layout == LAYOUT_NDC1HWC0 ? " (NDC1HWC0 broadcasts over N, D, H and W only)"
                                                        : "");
    }
  }
  return OMRT_OK;
}

/* ---- the instructions ---- */

/* Operand `which` of instruction k reads register r; its dtype into *dt. */
static omrt_status operand(const vctx *v, uint32_t k, const char *which, uint16_t r, int *dt) {
  if (r >= v->h->nregs) return ifail(v, k, "operand %s: r%u outside r0..r%d", which, r, (int)v->h->nregs - 1);
  if (!v->s->rdt[r]) return ifail(v, k, "operand %s: r%u is read before it is written (not SSA)", which, r);
  *dt = v->s->rdt[r];
  return OMRT_OK;
}

/* Operands a[, b[, c]] and dst share one dtype from `set`. */
static omrt_status same_dtype(const vctx *v, uint32_t k, int nops, int set) {
  const om_vinstr *in = &v->ins[k];
  static const char *const names[3] = {"a", "b", "c"};
  uint16_t regs[3] = {in->a, in->b, in->c};
  if (!in_set(in->dtype, set)) return ifail(v, k, "dtype must be %s", set_name(set));
  for (int j = 0; j < nops; j++) {
    int dt = 0;
    omrt_status s = operand(v, k, names[j], regs[j], &dt);
    if (s) return s;
    if (dt != in->dtype)
      return ifail(v, k, "operand %s r%u is %s, expected %s (operands and result share one dtype)", names[j],
                   regs[j], dt_str(dt), dt_str(in->dtype));
  }
  return OMRT_OK;
}

static omrt_status check_instr(vctx *v, uint32_t k, uint8_t *stored) {
  const om_vinstr *in = &v->ins[k];
  vrule r = rule_of(in->op);
  if (r.sig == SIG_NONE) return ifail(v, k, "unknown opcode %u", in->op);
  if (r.sig != SIG_STORE && !is_any(in->dtype))
    return ifail(v, k, "dtype %u is not a vector-program dtype (" VPROG_DTYPES ")", in->dtype);
  int dta = 0, dtb = 0;
  omrt_status s = OMRT_OK;
  switch (r.sig) {
  case SIG_LOAD:
    if (in->a >= v->h->ninputs)
      return ifail(v, k, "input index %u, the program has %u inputs", in->a, v->h->ninputs);
    if (in->dtype != v->t[in->a]->dtype)
      return ifail(v, k, "input %u '%s' is %s", in->a, rt_string(v->c.m, v->t[in->a]->name),
                   dt_str((int)v->t[in->a]->dtype));
    break;
  case SIG_STORE: {
    if (in->a >= v->h->noutputs)
      return ifail(v, k, "output index %u, the program has %u outputs", in->a, v->h->noutputs);
    const om_tensor *t = v->t[v->h->ninputs + in->a];
    if ((s = operand(v, k, "b", in->b, &dtb))) return s;
    if (dtb != in->dtype || in->dtype != t->dtype)
      return ifail(v, k, "r%u is %s, output %u '%s' is %s (they and the dtype field must agree)", in->b,
                   dt_str(dtb), in->a, rt_string(v->c.m, t->name), dt_str((int)t->dtype));
    if (stored[in->a]) return ifail(v, k, "output %u is stored twice", in->a);
    stored[in->a] = 1;
    return OMRT_OK;
  }
  case SIG_CONST: break;
  case SIG_CAST: s = operand(v, k, "a", in->a, &dta); break;
  case SIG_UNARY: s = same_dtype(v, k, 1, r.set); break;
  case SIG_BINARY: s = same_dtype(v, k, 2, r.set); break;
  case SIG_TERNARY: s = same_dtype(v, k, 3, r.set); break;
  case SIG_TEST:
    if ((s = operand(v, k, "a", in->a, &dta))) return s;
    if (!is_float(dta) || in->dtype != DT_BOOL)
      return ifail(v, k, "operand a r%u is %s: expected a float operand and a bool result", in->a,
                   dt_str(dta));
    if (in->op == VOP_ISINF && (in->imm.i < 0 || in->imm.i > 3))
      return ifail(v, k, "imm %lld: expected 0..3 (bit 0 detects +inf, bit 1 -inf)", (long long)in->imm.i);
    break;
  case SIG_CMP:
    if ((s = operand(v, k, "a", in->a, &dta)) || (s = operand(v, k, "b", in->b, &dtb))) return s;
    if (dta != dtb || in->dtype != DT_BOOL)
      return ifail(v, k, "operands r%u (%s) and r%u (%s) must share a dtype and the result be bool", in->a,
                   dt_str(dta), in->b, dt_str(dtb));
    break;
  case SIG_SELECT:
    if ((s = operand(v, k, "a", in->a, &dta))) return s;
    if (dta != DT_BOOL) return ifail(v, k, "condition r%u is %s, expected bool", in->a, dt_str(dta));
    if ((s = operand(v, k, "b", in->b, &dtb)) || (s = operand(v, k, "c", in->c, &dta))) return s;
    if (dtb != in->dtype || dta != in->dtype)
      return ifail(v, k, "r%u (%s) and r%u (%s) must both be %s", in->b, dt_str(dtb), in->c, dt_str(dta),
                   dt_str(in->dtype));
    break;
  }
  if (s) return s;
  if (in->dst >= v->h->nregs)
    return ifail(v, k, "destination r%u outside r0..r%d", in->dst, (int)v->h->nregs - 1);
  if (v->s->rdt[in->dst]) return ifail(v, k, "destination r%u is written twice (not SSA)", in->dst);
  v->s->rdt[in->dst] = in->dtype;
  return OMRT_OK;
}

static omrt_status check_program(vctx *v) {
  uint8_t stored[VPROG_MAX_IO] = {0};
  for (uint32_t k = 0; k < v->h->ninstrs; k++) {
    omrt_status s = check_instr(v, k, stored);
    if (s) return s;
  }
  for (uint32_t o = 0; o < v->h->noutputs; o++)
    if (!stored[o]) return vfail(v, "output %u is never stored", o);
  for (uint32_t r = 0; r < v->h->nregs; r++)
    if (!v->s->rdt[r]) return vfail(v, "register r%u is never written", r);
  return OMRT_OK;
}

/* ---- the plan ---- */

/* The outputs' physical iteration space with size-1 dims dropped and adjacent
 * dims merged where every input's strides allow it. */
static void iteration_space(const vctx *v, rt_vplan *p) {
  const om_tensor *out0 = v->t[p->ninputs];
  int64_t od[RT_VMAX_DIMS], st[VPROG_MAX_IO][RT_VMAX_DIMS];
  int ro = physical_dims(out0, od);
  for (uint32_t j = 0; j < p->ninputs; j++) {
    int64_t id[RT_VMAX_DIMS], stride = 1;
    int ri = physical_dims(v->t[j], id);
    for (int k = ro - 1; k >= 0; k--) {
      int64_t dim = k >= ro - ri ? id[k - (ro - ri)] : 1;
      st[j][k] = dim == 1 ? 0 : stride;
      stride *= dim;
    }
  }
  uint32_t nd = 0;
  for (int k = 0; k < ro; k++) {
    if (od[k] == 1) continue;
    int merge = nd > 0;
    for (uint32_t j = 0; merge && j < p->ninputs; j++)
      merge = p->in[j].strides[nd - 1] == st[j][k] * od[k];
    if (merge) {
      p->dims[nd - 1] *= od[k];
      for (uint32_t j = 0; j < p->ninputs; j++)
        p->in[j].strides[nd - 1] = st[j][k];
    } else {
      p->dims[nd] = od[k];
      for (uint32_t j = 0; j < p->ninputs; j++)
        p->in[j].strides[nd] = st[j][k];
      nd++;
    }
  }
  if (nd == 0) { /* a single element */
    p->dims[0] = 1;
    for (uint32_t j = 0; j < p->ninputs; j++)
      p->in[j].strides[0] = 0;
    nd = 1;
  }
  p->ndims = nd;
  for (uint32_t j = 0; j < p->ninputs; j++) {
    p->in[j].dtype = v->t[j]->dtype;
    p->in[j].contiguous = nd == 1 && p->in[j].strides[0] == 1;
  }
  if (out0->layout != LAYOUT_ND && out0->dims[1] % C0) { /* [N(*D)][C1][H][W][16] */
    const int r5 = out0->layout == LAYOUT_NDC1HWC0;
    p->pad_from = (uint32_t)(out0->dims[1] % C0);
    p->pad_hw16 = (uint64_t)out0->dims[2 + r5] * (uint64_t)out0->dims[3 + r5] * C0;
    p->pad_c1s = (uint64_t)(out0->dims[1] + C0 - 1) / C0;
  }
}

/* Orders the kept instructions into steps (STOREs last), drops instructions
 * no STORE needs, assigns UB slots by liveness; returns the step count and
 * the slot count in *nslots. */
static uint32_t schedule(const vctx *v, uint32_t *nslots) {
  vscratch *s = v->s;
  const om_vinstr *ins = v->ins;
  uint32_t n = v->h->ninstrs, nsteps = 0, nfree = 0;
  uint16_t regs[3];
  memset(s->needed, 0, sizeof s->needed);
  for (uint32_t k = n; k-- > 0;) {
    if (writes(&ins[k]) && !s->needed[ins[k].dst]) continue;
    for (int j = reads(&ins[k], regs); j-- > 0;)
      s->needed[regs[j]] = 1;
  }
  for (int pass = 0; pass < 2; pass++) /* non-STOREs, then STOREs */
    for (uint32_t k = 0; k < n; k++)
      if (writes(&ins[k]) ? pass == 0 && s->needed[ins[k].dst] : pass == 1) s->order[nsteps++] = (uint16_t)k;
  for (uint32_t j = 0; j < nsteps; j++)
    for (int q = reads(&ins[s->order[j]], regs); q-- > 0;)
      s->last[regs[q]] = (int32_t)j;
  *nslots = 0;
  for (uint32_t j = 0; j < nsteps; j++) {
    const om_vinstr *in = &ins[s->order[j]];
    if (writes(in)) s->slot[in->dst] = nfree ? s->free_slots[--nfree] : (uint16_t)(*nslots)++;
    int nr = reads(in, regs);
    for (int q = 0; q < nr; q++) {
      int dup = 0;
      for (int e = 0; e < q; e++)
        dup |= regs[e] == regs[q];
      if (!dup && s->last[regs[q]] == (int32_t)j) s->free_slots[nfree++] = s->slot[regs[q]];
    }
  }
  return nsteps;
}

/* The lane-form constant of a CONST instruction. */
static rt_vimm const_imm(const om_vinstr *in) {
  rt_vimm v = {0};
  switch (in->dtype) {
  case DT_FLOAT32: v.f = (float)in->imm.f; break;
  case DT_FLOAT16: v.f = rt_h2f(rt_f2h((float)in->imm.f)); break;
  case DT_DOUBLE: v.d = in->imm.f; break;
  case DT_BOOL: v.u8 = in->imm.i != 0; break;
  default: v.i64 = dtype_wrap_int(in->dtype, in->imm.i); break; /* integers, extended to 64 bits */
  }
  return v;
}

static omrt_status fill_steps(const vctx *v, rt_vplan *p) {
  vscratch *s = v->s;
  uint32_t slot_bytes = p->lanes * 8;
  for (uint32_t j = 0; j < p->nsteps; j++) {
    const om_vinstr *in = &v->ins[s->order[j]];
    rt_vstep *st = &p->steps[j];
    vrule r = rule_of(in->op);
    memset(st, 0, sizeof *st);
    if (r.sig == SIG_LOAD || r.sig == SIG_STORE) {
      st->kind = r.sig == SIG_LOAD ? RT_VSTEP_LOAD : RT_VSTEP_STORE;
      st->io = in->a;
      if (r.sig == SIG_LOAD)
        st->d = s->slot[in->dst] * slot_bytes;
      else
        st->a = s->slot[in->b] * slot_bytes;
      continue;
    }
    uint16_t regs[3] = {0, 0, 0};
    int nr = reads(in, regs);
    int adt = nr ? s->rdt[regs[0]] : in->dtype;
    st->kind = RT_VSTEP_LANES;
    st->fn = rt_vprog_lane_fn(in->op, in->dtype, adt);
    if (!st->fn) return ifail(v, s->order[j], "no lane function for this opcode and dtype");
    st->d = s->slot[in->dst] * slot_bytes;
    st->a = nr > 0 ? s->slot[regs[0]] * slot_bytes : 0;
    st->b = nr > 1 ? s->slot[regs[1]] * slot_bytes : 0;
    st->c = nr > 2 ? s->slot[regs[2]] * slot_bytes : 0;
    st->post = (uint8_t)rt_vprog_post(in->op, in->dtype, adt);
    if (in->op == VOP_CONST) st->imm = const_imm(in);
    if (in->op == VOP_ISINF) st->imm.i64 = in->imm.i;
    if (in->op == VOP_SHL || in->op == VOP_SHR) st->imm.i64 = 8 * (int64_t)dtype_size(in->dtype);
  }
  return OMRT_OK;
}

/* Verifies the task and, when everything holds, builds its plan (*plan_out, malloc'd). */
static omrt_status build(const omrt_model *m, uint32_t i, const om_task *task, const char *kind,
                         rt_vplan **plan_out) {
  *plan_out = NULL;
  vctx v = {.c = {m, i, task, kind}, .off = (uint32_t)task->params[OM_VPROG_P_PROGRAM]};
  omrt_status s;
  if ((s = check_header(&v, m, task)) || (s = check_tensors(&v))) return s;
  if (!(v.s = calloc(1, sizeof *v.s)))
    return rt_error(OMRT_ERR_NOMEM, "om load: out of memory verifying a program");
  rt_vplan *p = NULL;
  uint64_t total = rt_physical_elements(v.t[v.h->ninputs]), tiles = (total + RT_VTILE - 1) / RT_VTILE;
  uint32_t nslots = 0, nsteps = 0, lanes = RT_VTILE;
  if ((s = check_program(&v)) || (s = rt_chk_block_dim(&v.c, tiles, "256-element tiles of the outputs")))
    goto out;
  nsteps = schedule(&v, &nslots);
  while (lanes > RT_VMIN_LANES && (uint64_t)nslots * lanes * 8 > m->def->ub_bytes)
    lanes /= 2;
  if ((uint64_t)nslots * lanes * 8 > m->def->ub_bytes) {
    s = vfail(&v, "%u registers live at once need %u x %d lanes x 8 bytes of UB; ub_bytes is %u", nslots,
              nslots, RT_VMIN_LANES, m->def->ub_bytes);
    goto out;
  }
  if (!(p = calloc(1, sizeof *p + nsteps * sizeof(rt_vstep)))) {
    s = rt_error(OMRT_ERR_NOMEM, "om load: out of memory for a vector-program plan");
    goto out;
  }
  p->prog = v.off;
  p->total = total;
  p->tiles = tiles;
  p->lanes = lanes;
  p->ninputs = v.h->ninputs;
  p->noutputs = v.h->noutputs;
  p->nsteps = nsteps;
  for (uint32_t o = 0; o < p->noutputs; o++)
    p->out_dtype[o] = v.t[p->ninputs + o]->dtype;
  iteration_space(&v, p);
  if ((s = fill_steps(&v, p))) goto out;
  *plan_out = p;
  p = NULL;
out:
  free(p);
  free(v.s);
  return s;
}

omrt_status rt_vprog_build(const omrt_model *m, uint32_t i, const om_task *vtask, const char *kind,
                           rt_vplan **plan_out) {
  return build(m, i, vtask, kind, plan_out);
}

omrt_status rt_vprog_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_vplan *p;
  omrt_status s = build(m, i, task, "VPROG", &p);
  free(p);
  return s;
}

omrt_status rt_vprog_prepare(const omrt_model *m, uint32_t i, const om_task *task, void **aux_out) {
  rt_vplan *p;
  omrt_status s = build(m, i, task, "VPROG", &p);
  *aux_out = p;
  return s;
}
