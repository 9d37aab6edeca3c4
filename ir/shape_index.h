/* shape_index.h - the shape rules of the indexing ops (ir/shape_index.c):
 * TopK, ScatterElements, ScatterND, TensorScatter, CumSum, CumProd, GatherND
 * and OneHot, and the check of constant indices (Gather, GatherElements
 * too). Split out of ir/shape.c; only shape.c includes this. */
#ifndef IR_SHAPE_INDEX_H
#define IR_SHAPE_INDEX_H

#include "common/status.h"
#include "ir/ir.h"

/* Sets dtype and dims of every output of n from its inputs (known) and
 * attributes, and normalises its axis attribute to >= 0. Errors name the
 * node, the input or attribute and the shapes. */
status ir_shape_infer_index(ir_graph *g, ir_node *n, diag *d);

/* When indices `ix` (i32/i64) of node n are a constant: every element must
 * lie in [-dims[k], dims[k]) with k = (its C-order position) mod `period`
 * (Gather, GatherElements, ScatterElements: period 1, the axis' dim;
 * GatherND, ScatterND: period = the index tuple's length, the dims it
 * addresses), as ONNX requires. ST_ERR_INVALID naming n, the position and
 * the index otherwise; ST_OK for indices known only at run time. */
status ir_shape_check_indices(const ir_node *n, const ir_value *ix, int period, const int64_t *dims, diag *d);

#endif
