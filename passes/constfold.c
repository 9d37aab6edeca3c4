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
 *            the weights, but for the ops that have no task and only fold
 *            (ops.def's lay NONE: ConstantOfShape, Range, ...), which fold up
 *            to 4 GiB (the zoo's "light" VGG-19 makes a 400 MB weight with
 *            ConstantOfShape); evaluations of more than 2^26 inner
 *            steps (an empty value's loops counted over its other dims:
 *            ir/eval_fold.c); ops or dtypes the evaluator does not implement are
 *            left alone. Constants nothing reads any more are dropped
 *            (ir_graph_compact).
 *   Leaves:  topological order; no node whose inputs are all constant (below
 *            the size limit); no Shape node.
 *   Errors:  a fold-only node with constant inputs whose result reaches
 *            4 GiB (named with its size and the limit); an evaluation that
 *            fails on the data (Gather index out of range,
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

#define FOLD_MAX_BYTES ((int64_t)64 << 20)
#define FOLD_ONLY_MAX_BYTES ((int64_t)1 << 32) /* the ops with no task: lay NONE */

/* A fold-only node that stayed although its inputs are constants: its
 * result is past the limit. */
static status too_big(const ir_node *n, diag *d) {
  if (n->dead || ir_ops[n->op].lay != IR_LAY_NONE || n->nout != 1 || !n->out[0] ||
      ir_value_bytes(n->out[0]) < FOLD_ONLY_MAX_BYTES)
    return ST_OK;
  for (int j = 0; j < n->nin; j++)
    if (n->in[j] && !n->in[j]->data) return ST_OK;
  return ir_node_error(
      d, ST_ERR_LIMIT, n, "its constant result '%s' %s of %s has %lld bytes; atc folds at most %lld (4 GiB)",
      n->out[0]->name, ir_dims_str(n->out[0]->rank, n->out[0]->dims), dtype_name(n->out[0]->dtype),
      (long long)ir_value_bytes(n->out[0]), (long long)FOLD_ONLY_MAX_BYTES);
}

status pass_constfold(ir_graph *g, pass_ctx *ctx, diag *d) {
  arena scratch;
  arena_init(&scratch, 0);
  status st = ST_OK;
  for (int i = 0; i < g->nnodes && st == ST_OK; i++) {
    ir_node *n = g->nodes[i];
    st = ir_fold_node(g, n, ir_ops[n->op].lay == IR_LAY_NONE ? FOLD_ONLY_MAX_BYTES : FOLD_MAX_BYTES, &scratch,
                      d);
    if (st == ST_OK) st = too_big(n, d);
    arena_free(&scratch);
  }
  if (st == ST_OK) ir_graph_compact(g);
  return st;
}
