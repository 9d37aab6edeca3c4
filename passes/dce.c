/* dce.c - dead-code elimination and Identity removal.
 *
 * Contract.
 *   Needs:   a well-formed graph in topological order (no shapes needed).
 *   Changes: every Identity goes, except one that copies a graph input
 *            straight to a graph output (the one case where two distinct
 *            names must share data), one whose input is itself a graph
 *            output (two outputs must stay two values), or one that copies
 *            a count (ir/count.h) to a graph output (the count stays in the
 *            workspace, where the runtime reads it after the last task):
 *              - its output is not a graph output: readers use its input;
 *              - its output is a graph output fed by a node: that node now
 *                produces the output value directly (the output keeps its
 *                name), other readers of the intermediate follow;
 *              - its input is a constant: the output value becomes that
 *                constant (same payload) under the output's name.
 *            Then every node none of whose outputs is read (by a live node or
 *            as a graph output) is removed, walking backwards so whole dead
 *            chains go in one pass (readers counted once, ir_uses), and
 *            unreferenced values (constants included) are dropped with
 *            ir_graph_compact.
 *   Leaves:  topological order; graph inputs and outputs, their names and
 *            order untouched.
 */
#include "pass.h"

/* 1 when x is the count of a counted value (ir/count.h). */
static int counts_values(const ir_graph *g, const ir_value *x) {
  for (int i = 0; i < g->nvalues; i++)
    if (g->values[i] && g->values[i]->count == x) return 1;
  return 0;
}

/* Rewires one Identity away unless it must stay (see the contract). */
static void remove_identity(ir_graph *g, ir_node *n) {
  ir_value *x = n->in[0], *y = n->out[0];
  if (!x || !y) return;
  if (y->output_index < 0) {
    n->dead = 1;
    ir_replace_uses(g, y, x);
  } else if (x->output_index >= 0 || x->input_index >= 0 || counts_values(g, x)) {
    return;
  } else if (x->data) {
    n->dead = 1;
    y->data = x->data;
    y->producer = NULL;
  } else if (x->producer) {
    ir_node *p = x->producer;
    n->dead = 1;
    for (int j = 0; j < p->nout; j++)
      if (p->out[j] == x) p->out[j] = y;
    y->producer = p;
    ir_replace_uses(g, x, y);
  }
}

static int unused(const ir_uses *u, const ir_node *n) {
  for (int j = 0; j < n->nout; j++)
    if (n->out[j] && u->count[n->out[j]->id] > 0) return 0;
  return 1;
}

status pass_dce(ir_graph *g, pass_ctx *ctx, diag *d) {
  for (int i = 0; i < g->nnodes; i++) {
    ir_node *n = g->nodes[i];
    if (!n->dead && n->op == IR_OP_IDENTITY) remove_identity(g, n);
  }
  arena scratch;
  arena_init(&scratch, 0);
  ir_uses u;
  status st = ir_uses_build(g, &scratch, &u, d);
  for (int i = g->nnodes - 1; i >= 0 && st == ST_OK; i--) {
    ir_node *n = g->nodes[i];
    if (!n->dead && unused(&u, n)) {
      n->dead = 1;
      ir_uses_node(&u, n, -1); /* its inputs lose a reader */
    }
  }
  arena_free(&scratch);
  if (st == ST_OK) ir_graph_compact(g);
  return st;
}
