/* epilogue_ir.h - a Conv's epilogue program in the IR (passes/epilogue.c
 * puts it there; passes/emit.c writes it into the CONV2D / DWCONV task).
 *
 * A Conv with an epilogue has attributes epi_prog (and epi_fimm, epi_iimm
 * when it has immediates: the prog / fimm / iimm of a VectorProgram, see
 * ops.def and ir_vprog.h) and inputs in[5..] (at most 3) beyond x, w,
 * bias, residual, x_scale (in[2..4] may be omitted, "_"; passes/fuse.c
 * says what they are). The program's input 0 is the Conv's result (after
 * bias, residual and act, in out[0]'s dtype), its inputs 1.. are in[5..],
 * and its one output is out[0]: the program runs in place on the Conv's
 * output.
 */
#ifndef IR_EPILOGUE_IR_H
#define IR_EPILOGUE_IR_H

#include "common/vprog.h"
#include "ir/ir.h"

enum { IR_EPI_FIRST_IN = 5, IR_EPI_MAX_EXTRA = 3 };

/* The epilogue inputs Conv n may take: the CONV2D task's 3 free tensor
 * slots, less the one its x_scale (in[4]) takes. */
int ir_epilogue_max_extra(const ir_node *n);

/* The program as a VectorProgram node that does not live in any graph:
 * in = [out[0], in[4..]], out = [out[0]], attrs prog / fimm / iimm, the
 * Conv's name, so ir_vprog.h's decode, check and eval take it as it is. */
typedef struct ir_epilogue {
  ir_node node;
  ir_value *in[VPROG_MAX_IO], *out[1];
  ir_attr attrs[3];
} ir_epilogue;

/* 1 when Conv n carries an epilogue program; then *e is its view (which
 * points into n: valid while n is unchanged). */
int ir_epilogue_view(const ir_node *n, ir_epilogue *e);

/* ir_verify's check of a Conv's epilogue: the input count and the program
 * against its view (ir_vprog_decode). ST_OK without an epilogue. */
status ir_epilogue_check(const ir_node *n, diag *d);

#endif
