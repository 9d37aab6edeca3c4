/* shape.h - the shape and dtype rules of the IR ops (ir/shape.c,
 * ir/shape_index.c, ir/pool.c, ir/resize.c).
 *
 * The rules are ONNX's inference for each op, stated once over the IR
 * contract of ops.def. Two callers run them: the shape_infer pass over the
 * whole graph (passes/shape_infer.c), and the frontend on the nodes each
 * ONNX node becomes, so that importers further on see ranks, dtypes and the
 * constants shape arithmetic establishes (ir_shape_try).
 *
 * Ownership: the rules write the node's output values and attributes, in the
 * graph's arena; `known` and everything it points to are the caller's and
 * only read.
 */
#ifndef IR_SHAPE_H
#define IR_SHAPE_H

#include <stdint.h>

#include "common/status.h"
#include "ir/ir.h"

/* Infers n: needs every input of n with a known shape and dtype; sets dtype,
 * rank and dims of every output of n (overwriting what was there) and
 * normalises n's attributes and compile-time list inputs so that later
 * readers need no defaults (the top of ir/shape.c lists what changes).
 * known[v->id], when `known` is not NULL, is what is known of value v's data
 * at compile time (NULL: nothing); without `known`, only constants' data is.
 * Errors name the node, its op and the offending input or attribute with
 * shapes, e.g. "node 'Add_3' (Add): inputs [1,64,56,56] and [1,32,56,56] do
 * not broadcast"; after an error n may be partly normalised. */
status ir_shape_infer_node(ir_graph *g, ir_node *n, const void *const *known, diag *d);

/* Best effort and silent, for a graph still being built: when every input
 * of n has a known shape and dtype and ir_shape_infer_node accepts n (with
 * constants only), n's outputs get their dtypes and dims, then n folds
 * (ir_fold_node, ir/eval.h) when its result is below fold_max_bytes;
 * otherwise n's outputs stay as they were. Unless n folds, its attributes
 * and inputs stay as the caller made them, so that the shape_infer pass
 * later normalises them and reports every error as without this. Only
 * ST_ERR_NOMEM is returned. */
status ir_shape_try(ir_graph *g, ir_node *n, int64_t fold_max_bytes, diag *d);

#endif
