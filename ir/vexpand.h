/* vexpand.h - each elementwise IR op as vector instructions
 * (ir/vexpand.c), used by the vectorize pass. */
#ifndef IR_VEXPAND_H
#define IR_VEXPAND_H

#include "common/status.h"
#include "ir/ir.h"
#include "ir/ir_vprog.h"

/* 1 when ir_vexpand_node has an expansion for op: every ELEMWISE / BROADCAST op
 * of ops.def except BatchNormalization and VectorProgram, plus Cast and
 * Identity. */
int ir_vexpand_supported(ir_op op);

/* Appends node n's computation to p. in_regs[i] is the register holding
 * n->in[i] in that value's dtype. On success *out_reg is a register holding
 * n->out[0] in its dtype. ST_ERR_UNSUPPORTED names n when a dtype has no
 * expansion; ST_ERR_NOMEM when p ran out of memory. */
status ir_vexpand_node(ir_vprog *p, const ir_node *n, const int *in_regs, int *out_reg, diag *d);

#endif
