/* shape_index.h - shape inference of the indexing ops (passes/shape_index.c),
 * called by passes/shape_infer.c for TopK, ScatterElements, ScatterND,
 * CumSum, CumProd, GatherND and OneHot. */
#ifndef PASSES_SHAPE_INDEX_H
#define PASSES_SHAPE_INDEX_H

#include "common/status.h"
#include "ir/ir.h"

/* Sets dtype and dims of every output of n from its inputs (known) and
 * attributes, and normalises its axis attribute to >= 0. Errors name the
 * node, the input or attribute and the shapes. */
status shape_index_infer(ir_graph *g, ir_node *n, diag *d);

#endif
