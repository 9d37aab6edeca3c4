/* constfold.c - evaluates at compile time what does not depend on the inputs.
 *
 * Contract.
 *   Needs:   shape_infer (every value has a known shape and dtype).
 *   Changes: a node whose inputs are all constants, or a Shape node (its
 *            input's dims are static after shape_infer), is evaluated with the
 *            reference evaluator (ir/eval.h) and its output value becomes a
 *            constant in place: same value, same name, so graph outputs and
 *            other readers need no rewiring; the node is removed. Nodes run in
 *            graph order, so whole chains (Shape -> Gather -> Unsqueeze ->
 *            Concat -> Reshape's shape) collapse in one pass. Outputs of
 *            64 MiB or more are left to run on the device instead of bloating
 *            the weights, and so are evaluations of more than 2^26 inner
 *            steps (an empty value's loops counted over its other dims:
 *            ir/eval_fold.c); ops or dtypes the evaluator does not implement are
 *            left alone. Constants nothing reads any more are dropped
 *            (ir_graph_compact).
 *   Leaves:  topological order; no node whose inputs are all constant (below
 *            the size limit); no Shape node.
 *   Errors:  an evaluation that fails on the data (Gather index out of range,
 *            integer division by zero) fails the pass, naming node and op.
 *
 * The pass is a walk over ir_fold_node (ir/eval.h), which decides and folds
 * one node; the frontend already ran it at import, through ir_shape_try
 * (ir/shape.h), on every node whose result is small (64 KiB), so here it
 * folds what import could not: larger results, and nodes whose inputs only
 * shape_infer made known.
 */
#include "ir/eval.h"
#include "pass.h"

enum { FOLD_MAX_BYTES = 64 << 20 };

status pass_constfold(ir_graph *g, pass_ctx *ctx, diag *d) {
  arena scratch;
  arena_init(&scratch, 0);
  status st = ST_OK;
  for (int i = 0; i < g->nnodes && st == ST_OK; i++) {
    st = ir_fold_node(g, g->nodes[i], FOLD_MAX_BYTES, &scratch, d);
    arena_free(&scratch);
  }
  if (st == ST_OK) ir_graph_compact(g);
  return st;
}
