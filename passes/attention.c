/* attention.c - the attention chain becomes one FusedAttention node
 * (ops.def), an ATTENTION task that never writes the scores out.
 *
 * torch.nn.MultiheadAttention (and with it nn.TransformerEncoderLayer and
 * torchvision's ViT), PyTorch's scaled_dot_product_attention and the
 * frontend's ONNX Attention (frontend/onnx_decomp_attn.c) all export the
 * same chain: MatMul(q, k^T), a scale, additive masks and biases, Softmax
 * over the keys, MatMul with v. Run op by op it costs two batched MATMUL
 * tasks, the vector programs of the scale and the masks and a SOFTMAX,
 * with the [.., Sq, Skv] scores written and read back by each.
 *
 * Contract.
 *   Needs:   shape_infer, constfold, dce (dims and dtypes known; scales
 *            and constant masks folded).
 *   Changes: each chain
 *              s = MatMul(q', kt)              q', kt, v: rank >= 2
 *              s = s * c | s / c               c a one-element constant
 *              s = s + b  (at most two)        b broadcasting to s's dims
 *                                              without growing them
 *              p = Softmax(s)                  the last axis (opset >= 13
 *                                              semantics), not log
 *              p = Where(Equal(ReduceMax(s), -inf), 0, p)   (optional)
 *              y = MatMul(p, v)
 *            where the scale comes before the biases (a bias the scale
 *            would multiply stops the match), Softmax may sit between a
 *            Cast of s to f32 and a Cast back (softmax_precision), and
 *            every intermediate is read only inside the chain and is not a
 *            graph output, becomes one FusedAttention whose y is the last
 *            MatMul's (that node becomes it, name and output kept), with:
 *              q         q', or x when q' = x * c or x / c (c one element)
 *                        and the chain reads q' alone: c joins the scale;
 *              k         X with k_trans 0 when kt = Transpose(X) swapping
 *                        the last two dims and read by the chain alone,
 *                        else kt with k_trans 1;
 *              scale     the product of the constants;
 *              biases    the b's in order, except a constant b of 0 and
 *                        -inf only that is 0 exactly where key j <= query
 *                        i + o for some o, for every leading index: it
 *                        becomes causal = 1, causal_offset = o (one of
 *                        all zeros just goes);
 *              zero_masked  1 with the Where (ONNX Attention's rows whose
 *                        every key is masked), else 0.
 *            A chain whose tiles fit no ATTENTION tiling of the SoC
 *            (lower/attention.h, with f32 operands) is left as it is.
 *            Nothing changes when ctx->fusion_off has FUSION_ATTENTION
 *            (AttentionFusionPass:off).
 *            Then each FusedAttention made here reads its operands through
 *            views (ops.def's q_view .. y_view) instead of the copies of a
 *            transformer's head split and merge:
 *              q, k, v   the chain above the operand of Transpose, Slice
 *                        and Reshape-family nodes (Reshape, Flatten,
 *                        Squeeze, Unsqueeze, Identity), each value in it
 *                        read once, by the next node, and not a graph
 *                        output, up to a computed value b (not a constant
 *                        nor a graph input or output): the longest such
 *                        chain that is one strided view of b (ir/view.h's
 *                        ir_view_follow) of rank 2..4, strides >= 0 and
 *                        its last dim contiguous (k's last two dims
 *                        swapped with k_trans flipped when that makes it
 *                        so). The node reads b through the view; the
 *                        chain goes.
 *              y         the chain below y of Transposes and Reshape-family
 *                        nodes, each value read once, by the next, and not
 *                        a graph output, down to a value z that is not a
 *                        graph output: the node writes z through the view
 *                        of its result in z (ir_view_unfollow), under the
 *                        same conditions; the chain goes.
 *            Not when ctx->fusion_off has FUSION_ATTENTION_VIEW
 *            (AttentionViewFusionPass:off).
 *   Leaves:  topological order (the last MatMul's place: every operand is
 *            made before it); unreferenced values dropped; the same
 *            results up to f32 rounding (the scores are never rounded to
 *            the activations' dtype; the probabilities are, as the cube's
 *            operand).
 */
#include <math.h>
#include <string.h>

#include "ir/eval.h"
#include "ir/view.h"
#include "lower/attention.h"
#include "pass.h"

enum { MAX_CHAIN = 16 };

typedef struct chain {
  ir_node *last;             /* the final MatMul, which becomes the FusedAttention */
  ir_node *nodes[MAX_CHAIN]; /* the other nodes absorbed */
  int count;
  ir_value *q, *k, *v, *bias[4]; /* the chain's biases; at most 2 are left once causal masks go */
  int nbias, k_trans, causal, zero_masked;
  int64_t causal_offset;
  double scale;
} chain;

static int add(chain *c, ir_node *n) {
  if (c->count == MAX_CHAIN) return 0;
  c->nodes[c->count++] = n;
  return 1;
}

static int in_chain(const chain *c, const ir_node *n) {
  if (n == c->last) return 1;
  for (int i = 0; i < c->count; i++)
    if (c->nodes[i] == n) return 1;
  return 0;
}

/* The live node of op `op` producing v, or NULL. */
static ir_node *made_by(const ir_value *v, ir_op op) {
  return v && v->producer && !v->producer->dead && v->producer->op == op ? v->producer : NULL;
}

static int is_output(const ir_graph *g, const ir_value *v) {
  for (int i = 0; i < g->noutputs; i++)
    if (g->outputs[i] == v) return 1;
  return 0;
}

static int is_f16_f32(int dt) { return dt == DT_FLOAT32 || dt == DT_FLOAT16; }

static int same_dims(const ir_value *a, const ir_value *b) {
  return a->rank == b->rank && memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank) == 0;
}

/* b broadcasts numpy-style to s's dims. */
static int broadcasts(const ir_value *b, const ir_value *s) {
  if (b->rank > s->rank || !is_f16_f32(b->dtype)) return 0;
  for (int j = 1; j <= b->rank; j++)
    if (b->dims[b->rank - j] != 1 && b->dims[b->rank - j] != s->dims[s->rank - j]) return 0;
  return 1;
}

/* v is made by an op the chain's scores come through. */
static int scores_like(const ir_value *v) {
  const ir_node *n = v->producer;
  return n && !n->dead &&
         (n->op == IR_OP_MATMUL || n->op == IR_OP_MUL || n->op == IR_OP_DIV || n->op == IR_OP_ADD);
}

/* n = Mul(x, c), Mul(c, x) or Div(x, c) with c a non-zero one-element
 * constant: x, and the factor in *f. */
static ir_value *scaled(const ir_node *n, double *f) {
  double c;
  if (!n || (n->op != IR_OP_MUL && n->op != IR_OP_DIV)) return NULL;
  if (ir_value_float_scalar(n->in[1], &c) && c != 0 && isfinite(c)) {
    *f = n->op == IR_OP_MUL ? c : 1 / c;
    return n->in[0];
  }
  if (n->op == IR_OP_MUL && ir_value_float_scalar(n->in[0], &c) && isfinite(c)) {
    *f = c;
    return n->in[1];
  }
  return NULL;
}

/* From the Softmax's input back to the first MatMul: the scale and the
 * biases (biases applied before a scale stop it); the MatMul, or NULL. */
static ir_node *scores_of(const ir_graph *g, chain *c, ir_value *s) {
  int scaled_seen = 0;
  for (;;) {
    ir_node *n = s->producer;
    double f;
    ir_value *x;
    if (!n || n->dead) return NULL;
    if (n->op == IR_OP_MATMUL) return n;
    if ((x = scaled(n, &f))) {
      if (!same_dims(x, s) || !add(c, n)) return NULL;
      c->scale *= f, s = x, scaled_seen = 1;
      continue;
    }
    if (n->op != IR_OP_ADD || scaled_seen || c->nbias == 4) return NULL;
    int can[2]; /* in[u] may be the scores, in[1-u] the bias */
    for (int u = 0; u < 2; u++)
      can[u] = same_dims(n->in[u], s) && broadcasts(n->in[1 - u], s) && !n->in[u]->data;
    int u = can[0] && can[1] ? !scores_like(n->in[0]) && scores_like(n->in[1]) : can[1];
    if (!can[u] || n->in[0] == n->in[1] || !add(c, n)) return NULL;
    c->bias[c->nbias++] = n->in[1 - u];
    s = n->in[u];
  }
}

/* A constant bias of 0 / -inf that is 0 exactly where j <= i + o (every
 * leading slice alike; all -inf is o = -Sq): 1 with *o set; 2 when it is
 * all zeros. */
static int causal_mask(const ir_value *b, int64_t sq, int64_t skv, int64_t *o) {
  if (!b->data || b->rank < 2 || b->dims[b->rank - 2] != sq || b->dims[b->rank - 1] != skv) return 0;
  int64_t n = ir_value_elements(b), slice = sq * skv, found = 0;
  int all_zero = 1;
  for (int64_t i = 0; i < sq && !found; i++) { /* o from the first row that sees some keys */
    int64_t seen = 0;
    while (seen < skv && elem_get(b->data, b->dtype, i * skv + seen) == 0)
      seen++;
    if (seen > 0) *o = seen - 1 - i, found = 1;
  }
  if (!found) *o = -sq; /* every key hidden from every query (if it is all -inf) */
  for (int64_t e = 0; e < n; e++) {
    int64_t i = e % slice / skv, j = e % skv;
    double v = elem_get(b->data, b->dtype, e);
    if (j <= i + *o ? v != 0 : v != -INFINITY) return 0;
    all_zero &= v == 0;
  }
  return all_zero ? 2 : 1;
}

/* Every value the chain's nodes make, but y, is read inside it only and is
 * not a graph output. */
static int closed(const ir_graph *g, const chain *c) {
  for (int i = 0; i < c->count; i++) {
    const ir_value *v = c->nodes[i]->out[0];
    if (is_output(g, v)) return 0;
    for (int k = 0; k < g->nnodes; k++) {
      const ir_node *m = g->nodes[k];
      for (int j = 0; j < m->nin && !m->dead; j++)
        if (m->in[j] == v && !in_chain(c, m)) return 0;
    }
  }
  return 1;
}

/* The ONNX Attention guard p = Where(Equal(ReduceMax(s), -inf), 0, p) on
 * p's one reader w (s the biased scores or their f32 cast): added, 1. */
static int zero_guard(chain *c, ir_node *w, const ir_value *p, const ir_value *s, const ir_value *s32) {
  double z, ninf;
  ir_node *eq = w && w->op == IR_OP_WHERE && w->in[2] == p ? made_by(w->in[0], IR_OP_EQUAL) : NULL;
  if (!eq || !ir_value_float_scalar(w->in[1], &z) || z != 0) return 0;
  int r = !made_by(eq->in[0], IR_OP_REDUCE);
  ir_node *mx = made_by(eq->in[r], IR_OP_REDUCE);
  int64_t axes[MAX_RANK];
  if (!mx || !ir_value_float_scalar(eq->in[1 - r], &ninf) || ninf != -INFINITY ||
      strcmp(ir_attr_string(mx, "mode", ""), "max") || !ir_attr_int(mx, "keepdims", 1) ||
      ir_attr_ints(mx, "axes", axes, MAX_RANK) != 1 || axes[0] != s->rank - 1 ||
      (mx->in[0] != s && mx->in[0] != s32))
    return 0;
  c->zero_masked = 1;
  return add(c, w) && add(c, eq) && add(c, mx);
}

/* A constant causal mask becomes causal = 1 (an all-zero bias just goes);
 * the other biases keep their order. */
static void find_causal(chain *c, int64_t sq, int64_t skv) {
  int kept = 0;
  for (int b = 0; b < c->nbias; b++) {
    int64_t o = 0;
    int kind = causal_mask(c->bias[b], sq, skv, &o);
    if (kind == 1 && !c->causal)
      c->causal = 1, c->causal_offset = o;
    else if (kind != 2)
      c->bias[kept++] = c->bias[b];
  }
  for (int b = kept; b < c->nbias; b++)
    c->bias[b] = NULL;
  c->nbias = kept;
}

/* The chain ending at Softmax sm; 1 when it matched (c filled). */
static int match(const ir_graph *g, ir_node *sm, chain *c) {
  memset(c, 0, sizeof *c);
  c->scale = 1.0;
  ir_value *s = sm->in[0], *p = sm->out[0], *s32 = s;
  if (sm->nin != 1 || s->rank < 2 || ir_attr_int(sm, "axis", -1) != s->rank - 1 ||
      ir_attr_int(sm, "coerce_2d", 0) || ir_attr_int(sm, "log", 0) || !add(c, sm))
    return 0;
  ir_node *cin = made_by(s, IR_OP_CAST), *cout = ir_value_sole_reader(g, p);
  if (cin && cout && cout->op == IR_OP_CAST && cout->out[0]->dtype == cin->in[0]->dtype) { /* f32 softmax */
    if (!add(c, cin) || !add(c, cout)) return 0;
    s = cin->in[0], p = cout->out[0];
  }
  ir_node *w = ir_value_sole_reader(g, p);
  if (zero_guard(c, w, p, s, s32)) p = w->out[0];
  ir_node *mm2 = ir_value_sole_reader(g, p);
  if (!mm2 || mm2->op != IR_OP_MATMUL || mm2->in[0] != p || mm2->in[1] == p) return 0;
  c->last = mm2;
  ir_node *mm = scores_of(g, c, s);
  if (!mm || !add(c, mm) || mm->in[0] == mm->in[1]) return 0;
  c->v = mm2->in[1];
  c->q = mm->in[0];
  ir_value *kt = mm->in[1];
  if (c->q->rank < 2 || kt->rank < 2 || c->v->rank < 2 || !is_f16_f32(c->q->dtype) ||
      kt->dtype != c->q->dtype || c->v->dtype != c->q->dtype)
    return 0;
  double f;
  ir_value *x;
  ir_node *qm = c->q->producer;
  if (qm && !qm->dead && (x = scaled(qm, &f)) && ir_value_sole_reader(g, c->q) == mm && same_dims(x, c->q) &&
      x->dtype == c->q->dtype && add(c, qm))
    c->scale *= f, c->q = x;
  ir_node *tr = made_by(kt, IR_OP_TRANSPOSE);
  int64_t perm[MAX_RANK];
  int swap = tr && ir_value_sole_reader(g, kt) == mm && ir_attr_ints(tr, "perm", perm, MAX_RANK) == kt->rank;
  for (int i = 0; swap && i < kt->rank; i++)
    swap = perm[i] == (i < kt->rank - 2 ? i : i == kt->rank - 2 ? kt->rank - 1 : kt->rank - 2);
  if (swap && add(c, tr)) {
    c->k = tr->in[0];
  } else {
    c->k = kt, c->k_trans = 1;
  }
  find_causal(c, c->q->dims[c->q->rank - 2], c->v->dims[c->v->rank - 2]);
  return c->nbias <= 2;
}

static status nomem(diag *d, const ir_node *n) {
  return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory fusing attention");
}

/* The last MatMul becomes the FusedAttention; the others go. */
static status rewrite(ir_graph *g, const chain *c, diag *d) {
  ir_node *last = c->last;
  int nin = 3 + c->nbias;
  ir_value **in = arena_array(&g->arena, 5, sizeof *in);
  if (!in) return nomem(d, last);
  in[0] = c->q, in[1] = c->k, in[2] = c->v, in[3] = c->bias[0], in[4] = c->bias[1];
  for (int i = 0; i < c->count; i++)
    c->nodes[i]->dead = 1;
  last->op = IR_OP_ATTENTION;
  last->in = in, last->nin = nin;
  last->nattrs = 0;
  if (ir_attr_set_float(g, last, "scale", c->scale) || ir_attr_set_int(g, last, "k_trans", c->k_trans) ||
      ir_attr_set_int(g, last, "causal", c->causal) ||
      ir_attr_set_int(g, last, "causal_offset", c->causal_offset) ||
      ir_attr_set_int(g, last, "zero_masked", c->zero_masked))
    return nomem(d, last);
  return ST_OK;
}

/* --- operand views */

enum { MAX_VIEW_CHAIN = 8 };

/* A view the ATTENTION task takes (om_format.h): rank 2..4, strides >= 0,
 * the last dim contiguous. */
static int task_view(const ir_view *v) {
  if (v->rank < 2 || v->rank > 4 || v->strides[v->rank - 1] != 1) return 0;
  for (int d = 0; d < v->rank; d++)
    if (v->strides[d] < 0) return 0;
  return 1;
}

/* v with its last two dims swapped. */
static void swap_last(ir_view *v) {
  const int r = v->rank;
  int64_t t = v->dims[r - 1];
  v->dims[r - 1] = v->dims[r - 2], v->dims[r - 2] = t;
  t = v->strides[r - 1], v->strides[r - 1] = v->strides[r - 2], v->strides[r - 2] = t;
}

static int regroups(ir_op op) {
  return op == IR_OP_RESHAPE || op == IR_OP_FLATTEN || op == IR_OP_SQUEEZE || op == IR_OP_UNSQUEEZE ||
         op == IR_OP_IDENTITY;
}

static status set_view(ir_graph *g, ir_node *n, int t, const ir_view *v, diag *d) {
  int64_t a[2 * MAX_RANK + 1];
  a[0] = v->offset;
  for (int i = 0; i < v->rank; i++)
    a[1 + i] = v->dims[i], a[1 + v->rank + i] = v->strides[i];
  return ir_attr_set_ints(g, n, ir_attn_view_attr[t], 1 + 2 * v->rank, a) ? nomem(d, n) : ST_OK;
}

/* Input t (q, k or v) of FusedAttention n read through the chain above it. */
static status view_input(ir_graph *g, ir_node *n, int t, diag *d) {
  ir_node *chain[MAX_VIEW_CHAIN]; /* chain[0] makes the operand, chain[i + 1] chain[i]'s input */
  int len = 0;
  ir_value *x = n->in[t];
  if (ir_value_single_user(g, x) != n) return ST_OK;
  for (ir_value *cur = x; len < MAX_VIEW_CHAIN;) {
    ir_node *p = cur->producer;
    if (!p || p->dead || (p->op != IR_OP_TRANSPOSE && p->op != IR_OP_SLICE && !regroups(p->op)) ||
        p->nout != 1 || is_output(g, cur))
      break;
    if (cur != x && ir_value_single_user(g, cur) != chain[len - 1]) break;
    chain[len++] = p;
    cur = p->in[0];
  }
  for (; len > 0; len--) { /* the longest chain that is one task view */
    ir_value *b = chain[len - 1]->in[0];
    if (b->data || !b->producer || is_output(g, b) || b->dtype != x->dtype) continue;
    ir_view v = {.rank = b->rank}, w;
    int64_t s = 1;
    for (int i = b->rank - 1; i >= 0; i--)
      v.dims[i] = b->dims[i], v.strides[i] = s, s *= b->dims[i];
    int ok = 1;
    for (int i = len - 1; i >= 0 && ok; i--) {
      ok = !ir_view_follow(chain[i], 0, &v, &w);
      v = w;
    }
    int flip = 0;
    if (ok && t == 1 && !task_view(&v)) {
      swap_last(&v);
      flip = 1;
    }
    if (!ok || !task_view(&v)) continue;
    if (flip && ir_attr_set_int(g, n, "k_trans", !ir_attr_int(n, "k_trans", 0))) return nomem(d, n);
    for (int i = 0; i < len; i++)
      chain[i]->dead = 1;
    n->in[t] = b;
    return set_view(g, n, t, &v, d);
  }
  return ST_OK;
}

/* FusedAttention n's result written through the chain below it. */
static status view_output(ir_graph *g, ir_node *n, diag *d) {
  ir_node *chain[MAX_VIEW_CHAIN];
  int len = 0;
  ir_value *y = n->out[0];
  for (ir_value *cur = y; len < MAX_VIEW_CHAIN;) {
    ir_node *r = ir_value_single_user(g, cur);
    if (!r || (r->op != IR_OP_TRANSPOSE && !regroups(r->op)) || r->in[0] != cur || r->nout != 1) break;
    chain[len++] = r;
    cur = r->out[0];
  }
  for (; len > 0; len--) {
    ir_value *z = chain[len - 1]->out[0];
    if (is_output(g, z)) continue;
    ir_view v = {.rank = z->rank}, w;
    int64_t s = 1;
    for (int i = z->rank - 1; i >= 0; i--)
      v.dims[i] = z->dims[i], v.strides[i] = s, s *= z->dims[i];
    int ok = 1;
    for (int i = len - 1; i >= 0 && ok; i--) {
      ok = !ir_view_unfollow(chain[i], &v, &w);
      v = w;
    }
    if (!ok || !task_view(&v)) continue;
    for (int i = 0; i < len; i++)
      chain[i]->dead = 1;
    n->out[0] = z;
    z->producer = n;
    y->producer = NULL;
    if (ir_attr_set_string(g, n, "y_name", y->name)) return nomem(d, n);
    return set_view(g, n, 3, &v, d);
  }
  return ST_OK;
}

status pass_attention(ir_graph *g, pass_ctx *ctx, diag *d) {
  if (ctx->fusion_off & FUSION_ATTENTION) return ST_OK;
  int changed = 0;
  for (int i = 0; i < g->nnodes; i++) {
    ir_node *sm = g->nodes[i];
    chain c;
    if (sm->dead || sm->op != IR_OP_SOFTMAX || !match(g, sm, &c) || !closed(g, &c)) continue;
    const ir_value *y = c.last->out[0], *q = c.q, *v = c.v;
    const int64_t sq = q->dims[q->rank - 2], skv = v->dims[v->rank - 2];
    uint64_t batch = 1;
    for (int k = 0; k < y->rank - 2; k++)
      batch *= (uint64_t)y->dims[k];
    attn_tiles t;
    if (ctx->soc && attn_tile(ctx->soc, batch, sq, skv, q->dims[q->rank - 1], v->dims[v->rank - 1], 4, &t))
      continue;
    status st = rewrite(g, &c, d);
    for (int t = 0; t < 3 && st == ST_OK && !(ctx->fusion_off & FUSION_ATTENTION_VIEW); t++)
      st = view_input(g, c.last, t, d);
    if (st == ST_OK && !(ctx->fusion_off & FUSION_ATTENTION_VIEW)) st = view_output(g, c.last, d);
    if (st != ST_OK) return st;
    changed = 1;
  }
  if (changed) ir_graph_compact(g);
  return ST_OK;
}
