/* eval_quant.h - the reference evaluator's quantized ops (ir/eval_quant.c),
 * split out of eval.c; eval.c includes this, and shape.c for QConv's and
 * QEltwise's shape rules. */
#ifndef IR_EVAL_QUANT_H
#define IR_EVAL_QUANT_H

#include "common/arena.h"
#include "common/status.h"
#include "ir/ir.h"

/* 1 for the ops ir_eval_quant implements: QuantizeLinear,
 * DequantizeLinear, QConv, QEltwise and QLut. */
int ir_eval_is_quant(ir_op op);

/* Shape inference for QConv n (ops.def): checks the dtypes and shapes of
 * its operands and attributes, writes y's rank, dims and dtype. 0, or -1
 * with a message in err. */
int ir_qconv_infer(const ir_node *n, int *rank_out, int64_t *dims_out, dtype *dt_out, char *err, size_t cap);
/* The same for QEltwise n: a and b u8/i8 of one shape, the op, scales,
 * zero points and clamp in range; y has a's dims and dtype `to`. */
int ir_qeltwise_infer(const ir_node *n, int *rank_out, int64_t *dims_out, dtype *dt_out, char *err,
                      size_t cap);
/* The same for QLut n: x u8/i8, the table u8/i8 [256]; y has x's dims and
 * the table's dtype. */
/* QMatMul (ops.def): y has x's dims with the last w's N; i32 without a
 * scale, f32 with one. */
int ir_qmatmul_infer(const ir_node *n, int *rank_out, int64_t *dims_out, dtype *dt_out, char *err,
                     size_t cap);
int ir_qlut_infer(const ir_node *n, int *rank_out, int64_t *dims_out, dtype *dt_out, char *err, size_t cap);

/* Evaluates quantized node n (arguments as ir_eval_node; eval.c has checked
 * that every value is present, ND and of known shape). */
status ir_eval_quant(const ir_node *n, const void *const *inputs, void **outputs_out, arena *a, diag *d);

#endif
