/* epilogue_ir.h - a cube node's epilogue program in the IR
 * (passes/epilogue.c puts it there; passes/emit.c writes it into the
 * CONV2D / DWCONV / MATMUL task).
 *
 * A Conv or MatMul with an epilogue has attributes epi_prog (and epi_fimm,
 * epi_iimm when it has immediates: the prog / fimm / iimm of a
 * VectorProgram, see ops.def and ir_vprog.h) and, from its first epilogue
 * input on (ir_epilogue_first_in: a Conv's in[5..], after x, w, bias,
 * residual, x_scale; a MatMul's in[4..], after A, B, bias, c; the inputs
 * before may be omitted, "_"), at most 3 extra inputs. The program's input
 * 0 is the node's result (after bias, residual / c and act, in out[0]'s
 * dtype), its inputs 1.. are the extras, and its one output is out[0]: the
 * program runs in place on the node's output.
 */
#ifndef IR_EPILOGUE_IR_H
#define IR_EPILOGUE_IR_H

#include "common/vprog.h"
#include "ir/ir.h"

enum { IR_EPI_MAX_EXTRA = 3 };

/* The input slot of n's first epilogue input: 5 for a Conv, 4 for a MatMul. */
int ir_epilogue_first_in(const ir_node *n);

/* The epilogue inputs n may take: the task's 3 free tensor slots, less the
 * one a Conv's x_scale (in[4]) takes. */
int ir_epilogue_max_extra(const ir_node *n);

/* The program as a VectorProgram node that does not live in any graph:
 * in = [out[0], extras], out = [out[0]], attrs prog / fimm / iimm, the
 * node's name, so ir_vprog.h's decode, check and eval take it as it is. */
typedef struct ir_epilogue {
  ir_node node;
  ir_value *in[VPROG_MAX_IO], *out[1];
  ir_attr attrs[3];
} ir_epilogue;

/* 1 when Conv or MatMul n carries an epilogue program; then *e is its view
 * (which points into n: valid while n is unchanged). */
int ir_epilogue_view(const ir_node *n, ir_epilogue *e);

/* ir_verify's check of a node's epilogue: the input count and the program
 * against its view (ir_vprog_decode). ST_OK without an epilogue. */
status ir_epilogue_check(const ir_node *n, diag *d);

#endif
