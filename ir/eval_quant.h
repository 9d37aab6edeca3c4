/* eval_quant.h - the reference evaluator's quantized ops (ir/eval_quant.c),
 * split out of eval.c; only eval.c includes this. */
#ifndef IR_EVAL_QUANT_H
#define IR_EVAL_QUANT_H

#include "common/arena.h"
#include "common/status.h"
#include "ir/ir.h"

/* 1 for the ops ir_eval_quant implements: QuantizeLinear and
 * DequantizeLinear. */
int ir_eval_is_quant(ir_op op);

/* Evaluates quantized node n (arguments as ir_eval_node; eval.c has checked
 * that every value is present, ND and of known shape). */
status ir_eval_quant(const ir_node *n, const void *const *inputs, void **outputs_out, arena *a, diag *d);

#endif
