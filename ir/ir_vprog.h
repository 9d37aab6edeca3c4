/* ir_vprog.h - vector programs inside the compiler: the VectorProgram node's
 * attributes (the text form documented in ops.def) <-> om_vinstr records
 * (common/vprog.h), a builder with common-subexpression sharing, the checker
 * ir_verify runs on every VectorProgram node, and the scalar interpreter the
 * reference evaluator uses.
 *
 * In memory a program is an array of om_vinstr exactly as the om stores it
 * (CONST and ISINF carry their immediate in imm), so the emit pass copies it
 * out unchanged. Registers are numbered in order of definition; p->rdt[r] is
 * register r's dtype. Everything lives in the arena given to ir_vprog_init.
 */
#ifndef IR_IR_VPROG_H
#define IR_IR_VPROG_H

#include <stdint.h>

#include "common/arena.h"
#include "common/status.h"
#include "common/vprog.h"
#include "ir/ir.h"

typedef struct ir_vprog {
  om_vinstr *ins; /* count instructions (cap slots) */
  int count, cap;
  uint8_t *rdt; /* dtype of each register r0..nregs-1 (regcap slots) */
  int nregs, regcap;
  arena *a;  /* owns ins, rdt and seen */
  int nomem; /* an allocation failed; every later builder call returns -1 */
  /* The builder's sharing table: open addressing over the pure instructions
   * ins[0..nseen), each slot an index into ins or -1; power-of-two seencap,
   * at most half full. Filled lazily, so a decoded program gets it on its
   * first append. */
  int *seen;
  int seencap, nseen, nseen_entries;
} ir_vprog;

/* 1 for the dtypes vector programs support (f32 f16 f64 i64 i32 i16 i8 u64
 * u32 u16 u8 bool). */
int ir_vprog_dtype_ok(int dt);
int ir_vprog_is_float(int dt);    /* f32, f16, f64 */
int ir_vprog_is_int(int dt);      /* signed or unsigned (not bool) */
int ir_vprog_is_signed(int dt);   /* i64, i32, i16, i8 */
int ir_vprog_is_unsigned(int dt); /* u64, u32, u16, u8 */

void ir_vprog_init(ir_vprog *p, arena *a);

/* Builders: each appends one instruction and returns the register it
 * defines, or -1 when out of memory. A pure instruction identical to an
 * earlier one (same op, dtype, operands, immediate) is not appended; the
 * earlier register is returned. Appending takes O(1) (hashing), so building
 * a program of n instructions takes O(n). */
int ir_vprog_op(ir_vprog *p, vop op, int dtype, int a, int b, int c);
/* Appends a copy of `in` (its dst is ignored; its operands must already be
 * registers of p): how programs are merged and rewritten. STORE gives 0. */
int ir_vprog_append(ir_vprog *p, om_vinstr in);
int ir_vprog_load(ir_vprog *p, int input, int dtype);
int ir_vprog_const_f(ir_vprog *p, int dtype, double v);    /* f32/f16: v rounded to f32; f64: v */
int ir_vprog_const_i(ir_vprog *p, int dtype, int64_t v);   /* integer or bool dtypes */
int ir_vprog_isinf(ir_vprog *p, int reg, int detect_mask); /* bit 0 +inf, bit 1 -inf */
/* dst = reg converted to dtype (reg itself when it already has dtype). */
int ir_vprog_cast(ir_vprog *p, int reg, int dtype);
/* STORE outputs[output] = reg. 0 ok, -1 out of memory. */
int ir_vprog_store(ir_vprog *p, int output, int reg);

/* Decodes VectorProgram node n's attributes into p (initialised here with
 * arena a) and checks the result with ir_vprog_check. */
status ir_vprog_decode(const ir_node *n, arena *a, ir_vprog *p, diag *d);
/* The same without ir_vprog_check (fields are still range-checked): for a
 * pass that has just retyped n's values and is about to rewrite n's program
 * to match them. */
status ir_vprog_read(const ir_node *n, arena *a, ir_vprog *p, diag *d);
/* The program's rules (ops.def, vprog.h) against node n's values: SSA order,
 * operands defined before use, operand and result dtypes per op, LOAD/STORE
 * slots in range with the values' dtypes, every output stored once, limits
 * (VPROG_MAX_INSTRS, inputs + outputs <= VPROG_MAX_IO). Errors name n. */
status ir_vprog_check(const ir_node *n, const om_vinstr *ins, int count, diag *d);
/* Writes p as n's attributes prog / fimm / iimm (ops.def). 0 ok, -1 nomem. */
int ir_vprog_encode(ir_graph *g, ir_node *n, const ir_vprog *p);

/* Runs VectorProgram node n on C-order ND buffers (inputs[i] holds n->in[i];
 * outputs_out[j] receives a zeroed buffer from `a` for n->out[j]), element by
 * element with vprog.h's semantics: f16 registers rounded after every
 * instruction, integers wrapping, DIV/MOD by zero giving 0. */
status ir_vprog_eval(const ir_node *n, const void *const *inputs, void **outputs_out, arena *a, diag *d);

#endif
