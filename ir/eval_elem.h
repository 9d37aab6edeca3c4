/* eval_elem.h - the reference evaluator's elementwise ops (ir/eval_elem.c),
 * split out of eval.c; only eval.c includes this. */
#ifndef IR_EVAL_ELEM_H
#define IR_EVAL_ELEM_H

#include "common/arena.h"
#include "common/status.h"
#include "ir/ir.h"

/* 1 for the ops ir_eval_elementwise implements: every op of ops.def with
 * fusion class ELEMWISE or BROADCAST except BatchNormalization, Cast,
 * VectorProgram, QuantizeLinear and DequantizeLinear (ir/eval_quant.c). */
int ir_eval_is_elementwise(ir_op op);

/* Evaluates elementwise node n (arguments as ir_eval_node; eval.c has
 * checked that every value is present, ND and of known shape). */
status ir_eval_elementwise(const ir_node *n, const void *const *inputs, void **outputs_out, arena *a,
                           diag *d);

#endif
