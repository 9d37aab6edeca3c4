/* shape_index.h - the shape rules of the indexing ops (ir/shape_index.c):
 * TopK, ScatterElements, ScatterND, TensorScatter, CumSum, CumProd, GatherND
 * and OneHot. Split out of ir/shape.c; only shape.c includes this. */
#ifndef IR_SHAPE_INDEX_H
#define IR_SHAPE_INDEX_H

#include "common/status.h"
#include "ir/ir.h"

/* Sets dtype and dims of every output of n from its inputs (known) and
 * attributes, and normalises its axis attribute to >= 0. Errors name the
 * node, the input or attribute and the shapes. */
status ir_shape_infer_index(ir_graph *g, ir_node *n, diag *d);

#endif
