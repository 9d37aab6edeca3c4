/* epilogue.c - elementwise programs after a Conv or MatMul become its
 * epilogue.
 *
 * Contract.
 *   Needs:   vectorize (chains merged into one VectorProgram), precision and
 *            layout (dtypes and layouts final: the decision compares them).
 *   Changes: for each Conv or MatMul without an epilogue whose output y is
 *            read by exactly one node u and is not a graph output, u is
 *            absorbed when:
 *              - u is a VectorProgram with one output z of y's dtype,
 *                layout (a Conv's NC1HWC0, a MatMul's ND) and dims, so the
 *                program can run in place on y's buffer, tile by tile;
 *              - u has at most 3 inputs besides y (the task's free tensor
 *                slots: CONV2D / DWCONV 5..7, 2 when the Conv has an
 *                x_scale, which takes slot 5; MATMUL 5..7), each present
 *                and in y's layout (a VPROG task's rule: one layout).
 *            The node then carries u's program as attrs epi_prog / epi_fimm
 *            / epi_iimm (ir/epilogue_ir.h) with its LOADs renumbered: input
 *            0 is y (the node's result after bias, residual and act, in
 *            y's dtype, exactly what u read), inputs 1.. are u's other
 *            inputs, in u's order, appended from the node's first epilogue
 *            input on (a Conv's in[5..], in[2..4] "_" when absent; a
 *            MatMul's in[4..], in[2..3] "_"). The node produces z (its name
 *            kept) and u goes. When an extra input is produced after the
 *            node (so not available when it runs), the node moves to u's
 *            place: nothing between reads y, so the order stays
 *            topological. Nothing changes for Convs when ctx->fusion_off
 *            has FUSION_CONV_EPILOGUE (ConvEpilogueFusionPass:off), for
 *            MatMuls when it has FUSION_MATMUL_EPILOGUE
 *            (MatMulEpilogueFusionPass:off).
 *   Leaves:  topological order; every epilogue valid (ir_verify checks it
 *            with the vector-program checker); the graph computes exactly
 *            what it did, rounding included (y's stores and loads are the
 *            same conversions as before).
 */
#include <string.h>

#include "ir/epilogue_ir.h"
#include "ir/ir_vprog.h"
#include "pass.h"

static status nomem(diag *d, const ir_node *n) {
  return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory fusing an epilogue");
}

static int same_tensor_shape(const ir_value *a, const ir_value *b) {
  return a->rank == b->rank && a->dtype == b->dtype && a->layout == b->layout &&
         memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank) == 0;
}

/* u, the one reader of conv's output (a Conv or MatMul), can become its
 * epilogue. */
static int absorbable(const ir_node *conv, const ir_node *u) {
  const ir_value *y = conv->out[0];
  const int lay = conv->op == IR_OP_CONV ? LAYOUT_NC1HWC0 : LAYOUT_ND;
  if (!u || u->op != IR_OP_VECPROG || u->nout != 1 || u->nin > 1 + ir_epilogue_max_extra(conv)) return 0;
  if ((int)y->layout != lay || !same_tensor_shape(u->out[0], y)) return 0;
  for (int j = 0; j < u->nin; j++)
    if (!u->in[j] || (int)u->in[j]->layout != lay) return 0;
  return 1;
}

static int node_index(const ir_graph *g, const ir_node *n) {
  for (int i = 0; i < g->nnodes; i++)
    if (g->nodes[i] == n) return i;
  return -1;
}

/* 1 when some extra input of u is written by a node after conv. */
static int extra_after(const ir_graph *g, const ir_node *conv, const ir_node *u) {
  int at = node_index(g, conv);
  for (int j = 0; j < u->nin; j++) {
    const ir_node *p = u->in[j]->producer;
    if (p && p != conv && node_index(g, p) > at) return 1;
  }
  return 0;
}

/* Moves conv to u's slot (u comes later). */
static void move_to(ir_graph *g, ir_node *conv, const ir_node *u) {
  int from = node_index(g, conv), to = node_index(g, u);
  if (from < 0 || to <= from) return;
  memmove(g->nodes + from, g->nodes + from + 1, (size_t)(to - from) * sizeof *g->nodes);
  g->nodes[to] = conv;
}

/* Copies u's attribute `from` to conv as `to` (absent: nothing). */
static int copy_attr(ir_graph *g, ir_node *conv, const ir_node *u, const char *from, const char *to) {
  const ir_attr *a = ir_attr_find(u, from);
  if (!a) return 0;
  return a->kind == IR_ATTR_INTS ? ir_attr_set_ints(g, conv, to, a->n, a->ints)
                                 : ir_attr_set_floats(g, conv, to, a->n, a->floats);
}

static status absorb(ir_graph *g, ir_node *conv, ir_node *u, int *moved, diag *d) {
  ir_value *y = conv->out[0], *z = u->out[0];
  arena tmp;
  arena_init(&tmp, 0);
  ir_vprog p;
  status st = ir_vprog_decode(u, &tmp, &p, d);
  if (st) {
    arena_free(&tmp);
    return st;
  }
  int slot[VPROG_MAX_IO], nextra = 0;
  *moved = extra_after(g, conv, u);
  for (int j = 0; j < u->nin && st == ST_OK; j++) {
    if (u->in[j] == y) {
      slot[j] = 0;
      continue;
    }
    slot[j] = 1 + nextra;
    while (conv->nin < ir_epilogue_first_in(conv) && st == ST_OK)
      if (ir_node_set_input(g, conv, conv->nin, NULL)) st = nomem(d, conv);
    if (st == ST_OK && ir_node_set_input(g, conv, ir_epilogue_first_in(conv) + nextra++, u->in[j]))
      st = nomem(d, conv);
  }
  for (int k = 0; k < p.count; k++)
    if (p.ins[k].op == VOP_LOAD) p.ins[k].a = (uint16_t)slot[p.ins[k].a];
  /* Encoded on u (going away) as prog / fimm / iimm, then copied over. */
  if (st == ST_OK && (ir_vprog_encode(g, u, &p) || copy_attr(g, conv, u, "prog", "epi_prog") ||
                      copy_attr(g, conv, u, "fimm", "epi_fimm") || copy_attr(g, conv, u, "iimm", "epi_iimm")))
    st = nomem(d, conv);
  arena_free(&tmp);
  if (st) return st;
  if (*moved) move_to(g, conv, u);
  conv->out[0] = z;
  z->producer = conv;
  u->dead = 1;
  return ir_epilogue_check(conv, d);
}

status pass_epilogue(ir_graph *g, pass_ctx *ctx, diag *d) {
  status st = ST_OK;
  for (int i = 0; i < g->nnodes && st == ST_OK; i++) {
    ir_node *n = g->nodes[i];
    if (n->dead || (n->op != IR_OP_CONV && n->op != IR_OP_MATMUL) || ir_attr_find(n, "epi_prog")) continue;
    if (ctx->fusion_off & (n->op == IR_OP_CONV ? FUSION_CONV_EPILOGUE : FUSION_MATMUL_EPILOGUE)) continue;
    ir_node *u = ir_value_single_user(g, n->out[0]);
    if (!absorbable(n, u)) continue;
    int moved = 0;
    st = absorb(g, n, u, &moved, d);
    if (moved) i--; /* n moved to u's slot: visit what took its place */
  }
  if (st == ST_OK) ir_graph_compact(g);
  return st;
}
