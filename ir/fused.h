/* fused.h - the ops the fusion passes make of several ONNX ops, LayerNorm
 * (passes/norm.c) and FusedAttention (passes/attention.c): their shape rules (ir/shape_fused.c) and their
 * reference evaluation (ir/eval_fused.c). The IR contracts are in
 * ir/ops.def. Only ir/shape.c and ir/eval.c include this. */
#ifndef IR_FUSED_H
#define IR_FUSED_H

#include "common/arena.h"
#include "common/status.h"
#include "ir/ir.h"

/* 1 for the ops below. */
int ir_fused_op(ir_op op);

/* Sets dtype and dims of every output of n and normalises its axis to >= 0;
 * errors name the node, the input and the shapes. */
status ir_shape_infer_fused(ir_graph *g, ir_node *n, diag *d);

/* ir_eval_node for these ops (ir/eval.h). */
status ir_eval_fused(const ir_node *n, const void *const *inputs, void **outputs_out, arena *a, diag *d);

#endif
