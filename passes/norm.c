/* norm.c - LayerNormalization and RMSNormalization, decomposed, become one
 * LayerNorm node (ops.def), a LAYERNORM task.
 *
 * The frontend decomposes ONNX's LayerNormalization and RMSNormalization
 * (frontend/onnx_decomp_norm.c), and PyTorch exports its norms as the same
 * chains when it does not emit the op; this pass recognizes both, so the
 * op-by-op build (ALL:off) keeps the decomposition and every other build
 * gets one vector task per norm instead of two REDUCE tasks and the vector
 * programs between them.
 *
 * Contract.
 *   Needs:   shape_infer, constfold, dce (dims and dtypes known, epsilon
 *            and exponents folded to constants).
 *   Changes: each chain below, over the trailing axes A = [a, rank) of x
 *            (Reduce mean with keepdims 1, axes exactly A; every
 *            intermediate read only inside the chain and not a graph
 *            output; x, scale and bias f16/f32), becomes one LayerNorm
 *            node with attrs axis = a, epsilon, rms:
 *              layer norm  m = mean(x); d = x - m; v = mean(d*d or d^2);
 *                          n = d * 1/sqrt(v + eps) or d / sqrt(v + eps)
 *              rms norm    v = mean(x*x or x^2);
 *                          n = x * 1/sqrt(v + eps) or x / sqrt(v + eps)
 *            (1/s as Reciprocal(s) or Div(1, s); eps a one-element
 *            constant >= 0 added in either order), then optionally
 *              Cast(n) back to X's dtype when x is Cast(X) to f32 (the
 *                          stash type of onnx_decomp_norm.c): the node
 *                          reads X and writes X's dtype;
 *              Mul(., scale), then Add(., bias), either operand order,
 *                          scale and bias holding one row (D elements
 *                          whose dims are x's last ones after leading 1s,
 *                          rank <= x's) and leaving the dims as they are;
 *            and, when x is Add(a, b) of two values with x's dims and
 *            dtype, the Add too: the node reads a and b (residual). When
 *            the Add's result has readers outside the chain, it becomes
 *            the node's second output, sum. The chain's last node becomes
 *            the LayerNorm (its name and output kept); the others go.
 *            A row whose staging would not fit the SoC's UB (3 x D f32,
 *            om_format.h LAYERNORM) is left as it is. Nothing changes when
 *            ctx->fusion_off has FUSION_LAYERNORM (LayerNormFusionPass:off).
 *   Leaves:  topological order; unreferenced values dropped; the graph
 *            computes the same values up to f32 rounding (the statistics
 *            in f32, not rounded to the activations' dtype step by step).
 */
#include <string.h>

#include "ir/eval.h"
#include "pass.h"

enum { MAX_CHAIN = 16 };

typedef struct chain {
  ir_node *nodes[MAX_CHAIN]; /* absorbed, in no particular order */
  int count;
  ir_value *x, *scale, *bias, *residual, *out, *sum;
  int axis, rms;
  double eps;
} chain;

static int add(chain *c, ir_node *n) {
  if (c->count == MAX_CHAIN) return 0;
  c->nodes[c->count++] = n;
  return 1;
}

static int in_chain(const chain *c, const ir_node *n) {
  for (int i = 0; i < c->count; i++)
    if (c->nodes[i] == n) return 1;
  return 0;
}

/* The live node of op `op` producing v, or NULL. */
static ir_node *made_by(const ir_value *v, ir_op op) {
  return v && v->producer && !v->producer->dead && v->producer->op == op ? v->producer : NULL;
}

static int is_f16_f32(int dt) { return dt == DT_FLOAT32 || dt == DT_FLOAT16; }

static int same_shape(const ir_value *a, const ir_value *b) {
  return a->rank == b->rank && a->dtype == b->dtype &&
         memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank) == 0;
}

/* n is Reduce mean with keepdims over exactly x's trailing axes from some
 * a >= 0; a in *axis. */
static int trailing_mean(const ir_node *n, int *axis) {
  const ir_value *x = n->in[0];
  int64_t axes[MAX_RANK];
  int count = ir_attr_ints(n, "axes", axes, MAX_RANK);
  if (strcmp(ir_attr_string(n, "mode", ""), "mean") || !ir_attr_int(n, "keepdims", 1) ||
      ir_attr_int(n, "noop", 0) || n->nin != 1 || count < 1 || count > x->rank)
    return 0;
  for (int i = 0; i < count; i++)
    if (axes[i] != x->rank - count + i) return 0;
  *axis = x->rank - count;
  return 1;
}

/* q = t*t (Mul) or t^2 (Pow with the constant 2): t, else NULL. */
static ir_value *squared(const ir_value *q, ir_node **n) {
  ir_node *m = made_by(q, IR_OP_MUL);
  double e;
  if (m && m->in[0] == m->in[1]) return *n = m, m->in[0];
  m = made_by(q, IR_OP_POW);
  if (m && ir_value_float_scalar(m->in[1], &e) && e == 2.0) return *n = m, m->in[0];
  return NULL;
}

/* From v = mean(...) on: n = num * 1/sqrt(v + eps) or num / sqrt(v + eps).
 * Adds the nodes, sets eps; the normalized value, or NULL. */
static ir_value *normalize(const ir_graph *g, chain *c, ir_value *v, const ir_value *num) {
  ir_node *a = ir_value_sole_reader(g, v), *s, *r, *m;
  if (!a || a->op != IR_OP_ADD || !add(c, a)) return NULL;
  if (!ir_value_float_scalar(a->in[a->in[0] == v], &c->eps) || !(c->eps >= 0) || !same_shape(a->out[0], v))
    return NULL;
  if (!(s = ir_value_sole_reader(g, a->out[0])) || s->op != IR_OP_SQRT || !add(c, s)) return NULL;
  if (!(r = ir_value_sole_reader(g, s->out[0])) || !add(c, r)) return NULL;
  if (r->op == IR_OP_DIV && r->in[0] == num && r->in[1] == s->out[0]) return r->out[0];
  double one;
  if (!(r->op == IR_OP_RECIPROCAL ||
        (r->op == IR_OP_DIV && r->in[1] == s->out[0] && ir_value_float_scalar(r->in[0], &one) && one == 1.0)))
    return NULL;
  if (!(m = ir_value_sole_reader(g, r->out[0])) || m->op != IR_OP_MUL || !add(c, m)) return NULL;
  if (!((m->in[0] == num && m->in[1] == r->out[0]) || (m->in[1] == num && m->in[0] == r->out[0])))
    return NULL;
  return m->out[0];
}

/* v holds one row of x from `axis` on (dims x's last after leading 1s). */
static int holds_row(const ir_value *v, const ir_value *x, int axis) {
  int lead = v->rank - (x->rank - axis);
  if (lead < 0 || v->rank > x->rank || !is_f16_f32(v->dtype)) return 0;
  for (int i = 0; i < v->rank; i++)
    if (i < lead ? v->dims[i] != 1 : v->dims[i] != x->dims[axis + i - lead]) return 0;
  return 1;
}

/* y = op(cur, p) or op(p, cur) with p one row: p, else NULL (n the node). */
static ir_value *row_operand(const ir_graph *g, const chain *c, const ir_value *cur, ir_op op, ir_node **n) {
  ir_node *m = ir_value_sole_reader(g, cur);
  if (!m || m->op != op || m->in[0] == m->in[1]) return NULL;
  ir_value *p = m->in[0] == cur ? m->in[1] : m->in[0];
  if (!holds_row(p, c->x, c->axis) || !same_shape(m->out[0], cur)) return NULL;
  *n = m;
  return p;
}

/* The chain from the first Reduce r; 1 when it matched (c filled). */
static int match(const ir_graph *g, ir_node *r, chain *c) {
  memset(c, 0, sizeof *c);
  if (!trailing_mean(r, &c->axis) || !add(c, r)) return 0;
  ir_value *x = r->in[0], *num, *n;
  ir_node *sub = ir_value_sole_reader(g, r->out[0]), *sq = NULL;
  if (sub && sub->op == IR_OP_SUB && sub->in[0] == x && sub->in[1] == r->out[0]) { /* layer norm */
    ir_node *r2;
    num = sub->out[0];
    if (!add(c, sub)) return 0;
    for (int i = 0; i < g->nnodes && !sq; i++) { /* d*d or d^2 among d's readers */
      ir_node *m = g->nodes[i], *q = NULL;
      if (!m->dead && m->nin == 2 && m->in[0] == num && squared(m->out[0], &q) == num) sq = q;
    }
    int axis2;
    if (!sq || !add(c, sq) || !(r2 = ir_value_sole_reader(g, sq->out[0])) || r2->op != IR_OP_REDUCE ||
        !trailing_mean(r2, &axis2) || axis2 != c->axis || !add(c, r2))
      return 0;
    n = normalize(g, c, r2->out[0], num);
  } else { /* rms norm: r reduces x*x */
    num = squared(x, &sq);
    if (!num || !add(c, sq)) return 0;
    c->rms = 1;
    n = normalize(g, c, r->out[0], num);
    x = num;
  }
  if (!n || !is_f16_f32(x->dtype)) return 0;
  c->x = x;
  /* the stash type: x = Cast(X to f32) ... Cast(n to X's dtype) */
  ir_node *cin = made_by(x, IR_OP_CAST), *cout = ir_value_sole_reader(g, n), *m;
  if (cin && cout && cout->op == IR_OP_CAST && is_f16_f32(cin->in[0]->dtype) &&
      cout->out[0]->dtype == cin->in[0]->dtype && add(c, cin) && add(c, cout)) {
    c->x = cin->in[0];
    n = cout->out[0];
  }
  c->out = n;
  if ((c->scale = row_operand(g, c, c->out, IR_OP_MUL, &m))) {
    if (!add(c, m)) return 0;
    c->out = m->out[0];
  }
  if ((c->bias = row_operand(g, c, c->out, IR_OP_ADD, &m))) {
    if (!add(c, m)) return 0;
    c->out = m->out[0];
  }
  if (!same_shape(c->out, c->x)) return 0;
  return 1;
}

/* Every value made inside the chain but its result is read only inside
 * it and is not a graph output (x itself, when a Cast made it, included). */
static int closed(const ir_graph *g, const chain *c) {
  for (int i = 0; i < c->count; i++) {
    const ir_value *v = c->nodes[i]->out[0];
    if (v == c->out) continue;
    for (int k = 0; k < g->noutputs; k++)
      if (g->outputs[k] == v) return 0;
    for (int k = 0; k < g->nnodes; k++) {
      const ir_node *m = g->nodes[k];
      for (int j = 0; j < m->nin && !m->dead; j++)
        if (m->in[j] == v && !in_chain(c, m)) return 0;
    }
  }
  return 1;
}

/* x = Add(a, b), both x's dims and dtype: absorbed, its result the sum
 * output when something outside the chain reads it. */
static int take_residual(const ir_graph *g, chain *c) {
  ir_node *a = made_by(c->x, IR_OP_ADD);
  if (!a || !same_shape(a->in[0], c->x) || !same_shape(a->in[1], c->x) || !add(c, a)) return 0;
  int outside = 0;
  for (int k = 0; k < g->noutputs; k++)
    outside |= g->outputs[k] == c->x;
  for (int k = 0; k < g->nnodes && !outside; k++) {
    const ir_node *m = g->nodes[k];
    for (int j = 0; j < m->nin && !m->dead; j++)
      outside |= m->in[j] == c->x && !in_chain(c, m);
  }
  c->sum = outside ? c->x : NULL;
  c->residual = a->in[1]->data ? a->in[1] : a->in[0]->data ? a->in[0] : a->in[1];
  c->x = c->residual == a->in[1] ? a->in[0] : a->in[1];
  return 1;
}

static status nomem(diag *d, const ir_node *n) {
  return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory fusing a norm");
}

/* The chain's last node becomes the LayerNorm; the others go. */
static status rewrite(ir_graph *g, chain *c, diag *d) {
  ir_node *last = c->out->producer;
  ir_value *ins[4] = {c->x, c->scale, c->bias, c->residual};
  int nin = c->residual ? 4 : c->bias ? 3 : c->scale ? 2 : 1, nout = c->sum ? 2 : 1;
  ir_value **in = arena_array(&g->arena, 4, sizeof *in), **out = arena_array(&g->arena, 2, sizeof *out);
  if (!in || !out) return nomem(d, last);
  memcpy(in, ins, sizeof ins);
  out[0] = c->out, out[1] = c->sum;
  for (int i = 0; i < c->count; i++)
    if (c->nodes[i] != last) c->nodes[i]->dead = 1;
  last->op = IR_OP_LAYERNORM;
  last->in = in, last->nin = nin;
  last->out = out, last->nout = nout;
  if (c->sum) c->sum->producer = last;
  last->nattrs = 0;
  if (ir_attr_set_int(g, last, "axis", c->axis) || ir_attr_set_float(g, last, "epsilon", c->eps) ||
      ir_attr_set_int(g, last, "rms", c->rms))
    return nomem(d, last);
  return ST_OK;
}

status pass_norm(ir_graph *g, pass_ctx *ctx, diag *d) {
  if (ctx->fusion_off & FUSION_LAYERNORM) return ST_OK;
  int changed = 0;
  for (int i = 0; i < g->nnodes; i++) {
    ir_node *r = g->nodes[i];
    chain c;
    if (r->dead || r->op != IR_OP_REDUCE || !match(g, r, &c) || !closed(g, &c)) continue;
    int64_t row = 1;
    for (int k = c.axis; k < c.x->rank; k++)
      row *= c.x->dims[k];
    if (ctx->soc && (uint64_t)row * 12 > ctx->soc->ub_bytes) continue;
    chain with = c;
    if (take_residual(g, &with)) c = with;
    status st = rewrite(g, &c, d);
    if (st != ST_OK) return st;
    changed = 1;
  }
  if (!changed) return ST_OK;
  ir_graph_compact(g);
  return ir_graph_toposort(g, d);
}
