/* eval_index.h - the reference evaluator's indexing ops (ir/eval_index.c):
 * TopK, ScatterElements, ScatterND, CumSum, CumProd, GatherND, OneHot.
 * Split out of eval.c; only eval.c includes this. */
#ifndef IR_EVAL_INDEX_H
#define IR_EVAL_INDEX_H

#include "common/arena.h"
#include "common/status.h"
#include "ir/ir.h"

/* 1 for the ops ir_eval_index implements. */
int ir_eval_is_index(ir_op op);

/* Evaluates indexing node n (arguments as ir_eval_node; eval.c has checked
 * that every value is present, ND and of known shape). */
status ir_eval_index(const ir_node *n, const void *const *inputs, void **outputs_out, arena *a, diag *d);

/* The reduction attribute of ScatterElements / ScatterND as 0 none, 1 add,
 * 2 mul, 3 max, 4 min (OM_TASK_SCATTER's params[2]); -1 when unknown. */
int ir_scatter_reduction(const ir_node *n);

#endif
