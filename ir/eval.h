/* eval.h - the reference evaluator: runs IR ops on ND tensors on the host.
 *
 * This is the compiler's definition of what an op computes, written for
 * clarity, not speed: constant folding uses it, shape inference uses it to
 * propagate small integer tensors (shape arithmetic), and tests compare a
 * graph's outputs before and after a pass with it.
 *
 * Tensors are C-order buffers in their value's dtype, layout ND only. Float
 * ops (Conv, pools, Softmax, Gemm, ...) accept f32, f16 and f64 and compute in
 * f32 with f64 accumulation; the elementwise ops (ir/eval_elem.c) compute
 * floats in double, rounded once to the output dtype, and integers and bools
 * exactly (wrapping); a VectorProgram runs with the semantics of
 * common/vprog.h (ir/ir_vprog.c); the data-movement ops (Reshape, Gather,
 * Concat, ...) run on any dtype. Every
 * value a node touches must have a known shape and dtype (shape inference
 * first); output shapes are taken from the output values, not recomputed.
 */
#ifndef IR_EVAL_H
#define IR_EVAL_H

#include "common/arena.h"
#include "common/elem.h"
#include "common/status.h"
#include "ir/ir.h"

/* 1 when ir_eval_node implements `op` (all ops of ops.def except TransData). */
int ir_eval_supported(ir_op op);

/* Evaluates one node. inputs[i] is the payload of n->in[i] (NULL for an
 * omitted optional input; Shape reads only its input's dims, so its inputs[0]
 * may be NULL). outputs_out[j] receives a new zeroed buffer from `a` holding
 * n->out[j]. Errors (unsupported op or dtype, unknown shape, index out of
 * range, integer division by zero) name the node and op. */
status ir_eval_node(const ir_node *n, const void *const *inputs, void **outputs_out, arena *a, diag *d);

/* Evaluates the whole graph in node order. inputs[i] is the payload of
 * g->inputs[i]; outputs_out[i] receives the payload of g->outputs[i] (in `a`,
 * or the constant's / input's own buffer when an output is one: read only). */
status ir_eval_graph(const ir_graph *g, const void *const *inputs, void **outputs_out, arena *a, diag *d);

/* ir_eval_graph keeping every value: vals[v->id] receives the payload of
 * each value v of g (g->nvalues entries; constants' and inputs' own
 * buffers, the rest in `a`; NULL for a value no live node produced). */
status ir_eval_graph_values(const ir_graph *g, const void *const *inputs, const void **vals, arena *a,
                            diag *d);

/* Folds n into a constant (ir/eval_fold.c): when the evaluator implements
 * n's op and dtypes, n's inputs are all constants (or n is a Shape/Size of a
 * value with known dims), its one output has fewer than max_bytes and the
 * evaluation is cheap (at most 2^26 inner steps; the ops that only fold,
 * ops.def's lay NONE, are bounded by max_bytes alone), n's output value gets the
 * result as its data (same value, same name) and n is marked dead. It leaves
 * n alone otherwise; evaluation errors (index out of range, integer division
 * by zero, ...) are returned, naming the node. The evaluation's temporaries
 * go in `scratch` (the caller frees it); the result in the graph's arena. */
status ir_fold_node(ir_graph *g, ir_node *n, int64_t max_bytes, arena *scratch, diag *d);
/* ir_fold_node leaves QuantizeLinear and DequantizeLinear to the qfold pass
 * (passes/qfold.c), which folds the ones it does not absorb with this: the
 * same rules, for those two ops only (others are left alone). */
status ir_fold_quant_node(ir_graph *g, ir_node *n, int64_t max_bytes, arena *scratch, diag *d);

/* Reduce nodes (ops.def): the mode as an om_reduce_op (common/om_format.h),
 * -1 when the mode attribute is missing or unknown; and the reduced axes of
 * an input of rank `rank` as a bit mask (bit d = dim d), from the axes
 * attribute (negative axes count from the end; absent = every axis) and
 * noop (= none). Returns -1 for an axis out of range or given twice. */
int ir_reduce_mode(const ir_node *n);
int ir_reduce_mask(const ir_node *n, int rank, uint32_t *mask_out);

/* Element access in any dtype is common/elem.h's (elem_get, elem_put, ...). */

#endif
