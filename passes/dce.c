/* dce.c - dead-code elimination and Identity removal.
 *
 * Contract.
 *   Needs:   a well-formed graph in topological order (shapes, where
 *            known, find the no-ops below).
 *   Changes: the ops that leave their input as it is become what they
 *            are: a Pad by zeros, a one-input Concat and a Resize to the
 *            same size (scales all 1 or sizes the input's, a coordinate
 *            mode that maps each pixel onto itself: every one but
 *            tf_half_pixel_for_nn and tf_crop_and_resize; linear and cubic
 *            then weigh the pixel 1 and its neighbours 0) an Identity, a
 *            Gather of constant index 0 (or -1) along an axis of extent 1
 *            a Squeeze of that axis (a view; torchvision's transform takes
 *            images[0] of a batch of one, pads it by nothing and stacks it
 *            alone, three copies of the input image). Then every Identity goes, except one that copies a
 * graph input straight to a graph output (the one case where two distinct names must share data), one whose
 * input is itself a graph output (two outputs must stay two values), or one that copies a count (ir/count.h)
 * to a graph output (the count stays in the workspace, where the runtime reads it after the last task):
 *              - its output is not a graph output: readers use its input;
 *              - its output is a graph output fed by a node: that node now
 *                produces the output value directly (the output keeps its
 *                name), other readers of the intermediate follow;
 *              - its input is a constant: the output value becomes that
 *                constant (same payload) under the output's name.
 *            Then every node none of whose outputs is read (by a live node,
 *            as a graph output, or as the count of a live node's input or
 *            output) is removed, walking backwards so whole dead
 *            chains go in one pass (readers counted once, ir_uses), and
 *            unreferenced values (constants included) are dropped with
 *            ir_graph_compact.
 *   Leaves:  topological order; graph inputs and outputs, their names and
 *            order untouched.
 */
#include <string.h>

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

/* A Gather's constant scalar index 0 or -1 along an axis of extent 1. */
static int takes_the_only_row(const ir_node *n, int *axis) {
  const ir_value *x = n->in[0], *ix = n->nin > 1 ? n->in[1] : NULL;
  int64_t a = ir_attr_int(n, "axis", 0);
  a = a < 0 ? a + x->rank : a;
  if (!ix || !ix->data || ix->rank != 0 || a < 0 || a >= x->rank || x->dims[a] != 1) return 0;
  int64_t k = ix->dtype == DT_INT64   ? *(const int64_t *)ix->data
              : ix->dtype == DT_INT32 ? *(const int32_t *)ix->data
                                      : 1;
  *axis = (int)a;
  return k == 0 || k == -1;
}

/* A Resize to the input's own size whose sample points are the pixels. */
static int resizes_to_itself(const ir_node *n) {
  const ir_attr *sc = ir_attr_find(n, "scales"), *sz = ir_attr_find(n, "sizes");
  const ir_value *x = n->in[0], *y = n->out[0];
  const char *ctm = ir_attr_string(n, "coordinate_transformation_mode", "half_pixel");
  int same = n->nin == 1 && y && x->rank == y->rank && x->rank > 0 && !strstr(ctm, "tf_");
  for (int d = 0; same && d < x->rank; d++)
    same = x->dims[d] == y->dims[d] && x->dims[d] > 0;
  if (sc && sc->kind == IR_ATTR_FLOATS && sc->n == x->rank)
    for (int d = 0; same && d < sc->n; d++)
      same = sc->floats[d] == 1.0;
  else if (sz && sz->kind == IR_ATTR_INTS && sz->n == x->rank)
    for (int d = 0; same && d < sz->n; d++)
      same = sz->ints[d] == x->dims[d];
  else
    same = 0;
  return same;
}

/* Makes n what it is when it leaves its input as it is (see the contract). */
static status simplify_noop(ir_graph *g, ir_node *n, diag *d) {
  int64_t pads[2 * MAX_RANK];
  int np = n->op == IR_OP_PAD ? ir_attr_ints(n, "pads", pads, 2 * MAX_RANK) : -1, zero = np >= 0, axis;
  for (int i = 0; i < np; i++)
    zero &= pads[i] == 0;
  if ((n->op == IR_OP_PAD && zero && n->nin == 1) || (n->op == IR_OP_CONCAT && n->nin == 1) ||
      (n->op == IR_OP_RESIZE && resizes_to_itself(n))) {
    n->op = IR_OP_IDENTITY, n->nattrs = 0;
  } else if (n->op == IR_OP_GATHER && takes_the_only_row(n, &axis)) {
    int64_t a = axis;
    n->op = IR_OP_SQUEEZE, n->nattrs = 0, n->nin = 1;
    if (ir_attr_set_ints(g, n, "axes", 1, &a)) return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory");
  }
  return ST_OK;
}

/* The counts of values v[0, n) gain a reader: a count that is nobody's
 * input (the importer's count x extent of a merged Reshape, a counted
 * constant's) lives as long as what it counts. */
static void keep_counts(ir_uses *u, ir_value *const *v, int n) {
  for (int j = 0; j < n; j++)
    if (v[j] && v[j]->count && v[j]->count_axis >= 0 && v[j]->count->id < u->nvalues)
      u->count[v[j]->count->id]++;
}

static int unused(const ir_uses *u, const ir_node *n) {
  for (int j = 0; j < n->nout; j++)
    if (n->out[j] && u->count[n->out[j]->id] > 0) return 0;
  return 1;
}

status pass_dce(ir_graph *g, pass_ctx *ctx, diag *d) {
  for (int i = 0; i < g->nnodes; i++) {
    ir_node *n = g->nodes[i];
    status st = n->dead ? ST_OK : simplify_noop(g, n, d);
    if (st) return st;
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
    } else if (!n->dead) {     /* the tasks read the counts of what they read and write */
      keep_counts(&u, n->in, n->nin);
      keep_counts(&u, n->out, n->nout);
    }
  }
  arena_free(&scratch);
  if (st == ST_OK) ir_graph_compact(g);
  return st;
}
