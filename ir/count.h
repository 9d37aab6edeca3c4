/* count.h - counted values (ir/count.c): outputs whose extent along one axis
 * is known only at run time, bounded at compile time.
 *
 * A counted value (ir.h's count_axis, count) is stored at its bound; the
 * producing task writes the valid extent into `count`, an i64 [1] value.
 * The producers (NonZero; ops.def's "Counted outputs") have their shape
 * rules here; every other op either carries a counted input's count to its
 * output (the padding past the count cannot change a valid element:
 * elementwise ops, Transpose, the Reshape family keeping the axis, Slice on
 * other axes, Gather and GatherND on another axis or with counted indices),
 * takes the count itself (TopK over the axis, the importer's packing
 * Concat) or is refused naming the node, the input and the axis. Only
 * ir/shape.c and ir/eval.c include this.
 */
#ifndef IR_COUNT_H
#define IR_COUNT_H

#include "common/arena.h"
#include "common/status.h"
#include "ir/ir.h"

/* 1 for the ops whose rules live here (they produce counted outputs). */
int ir_count_is_producer(const ir_node *n);

/* The shape rule of producer n: dtype, dims (the bound) and count of every
 * output. ST_ERR_LIMIT naming n when the bound does not fit. */
status ir_count_infer(ir_graph *g, ir_node *n, diag *d);

/* After n's outputs got their shapes: sets their count_axis and count from
 * n's counted inputs (none: dense), or refuses n (ST_ERR_UNSUPPORTED naming
 * n, the input, its axis and bound). Producers are left alone. */
status ir_count_propagate(ir_node *n, diag *d);

/* Evaluates producer n into buffers of its outputs' (bound) sizes from a
 * (arguments as ir_eval_node); entries past the count are 0. */
status ir_count_eval(const ir_node *n, const void *const *inputs, void **outputs_out, arena *a, diag *d);

#endif
