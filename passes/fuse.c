/* fuse.c - cube epilogues: bias Add, residual Add and Relu/Clip into the
 * Conv or MatMul that produces their input; a per-channel Mul before a 1x1
 * Conv into the Conv's input; Transposes and Reshapes before a MatMul
 * into the MatMul's operand addressing.
 *
 * Contract.
 *   Needs:   shape_infer, constfold, lower_gemm (MatMul in ops.def's form),
 *            bn_fold (so a BN no longer sits between a Conv and its
 *            Add/Relu).
 *   Changes: starting at each Conv and MatMul, repeatedly absorbs the single
 *            reader of the node's output (an intermediate read by one node
 *            and not a graph output), in the order the epilogue runs on the
 *            vector unit (bias, then residual, then activation):
 *              bias      Add(y, c), c a constant broadcasting per output
 *                        channel (a Conv's [1,C,1,1], [C,1,1], or 1 element,
 *                        [1,C,1,1,1] for a 3-D Conv;
 *                        a MatMul's [.., 1, N], [N] or 1 element, when its B
 *                        has an N dim), while the node has no residual and no
 *                        act: c is added into the node's bias (a new
 *                        constant "<node>_bias"; created when absent), in
 *                        f64, stored in the bias dtype;
 *              residual  Add(y, r), while the node has no residual and no
 *                        act: a Conv's r not constant, same shape and dtype
 *                        as y; a MatMul's any other r of y's dtype that
 *                        broadcasts to y (the MATMUL task's c). r becomes
 *                        in[3] (in[2] is "_" when there is no bias);
 *              act       Relu -> act="relu"; Clip -> act="clip" with clip_min,
 *                        clip_max (floats; -inf/inf when the Clip has none);
 *                        a MatMul's Gelu -> act="gelu" (approximate="tanh":
 *                        "gelu_tanh"), and the forms PyTorch exports
 *                        (act_pattern below): erf GELU, the product of y,
 *                        1/2 and 1 + Erf(y / sqrt 2) in any grouping; tanh
 *                        GELU, the same with 1 + Tanh(sqrt(2/pi) * (y +
 *                        0.044715 * y^3)), y^3 as Pow(y, 3), y * (y * y) or
 *                        (y * y) * y; SiLU, Mul(y, Sigmoid(y)) -> act=
 *                        "gelu" / "gelu_tanh" / "silu" when every node of
 *                        the form reads only y and scalar constants (equal
 *                        to those numbers within 1e-6, Div by c as Mul by
 *                        1/c), only the last one's output leaves the form
 *                        (no other reader of y or of an intermediate, none
 *                        a graph output) and it is y's shape; once per
 *                        node, after bias and residual.
 *            The node then produces the absorbed node's output value (its
 *            name kept) and the absorbed node is removed.
 *            A node that takes a residual moves to the Add's place in
 *            g->nodes (the residual may be produced after it).
 *            Nothing changes when ctx->fusion_off has FUSION_CONV_ADD_RELU
 *            (ConvAddReluFusionPass:off: Convs) or FUSION_MATMUL_ADD_ACT
 *            (MatMulAddActFusionPass:off: MatMuls).
 *            Input scale (squeeze-excitation): a Conv whose input is
 *            Mul(x, s) (either order), the Mul read by this Conv only and
 *            not a graph output, s not constant with dims [N, C, 1, 1] (one
 *            factor per image and input channel), x and the Mul's output
 *            alike and more than one pixel (on a 1x1 image the Mul is an
 *            ordinary elementwise op, which vectorize and epilogue fuse
 *            better), and the Conv 1x1 with strides 1, pads 0 and group 1,
 *            reads x instead, with s as in[4] (x_scale; in[2], in[3] "_"
 *            when absent): the cube multiplies each input value by its
 *            factor as it stages it (om_format.h, CONV2D x_scale), in
 *            f32, where the Mul would have rounded its product to the
 *            activation dtype. The Mul goes. Nothing changes when
 *            ctx->fusion_off has FUSION_CONV_INPUT_SCALE
 *            (ConvInputScaleFusionPass:off).
 *            Operand views: a MatMul input (or a QMatMul's with a run-time
 *            w: its x and w) produced by a chain of moves (Transpose,
 *            Reshape, Flatten, Squeeze, Unsqueeze) of a computed value
 *            (constants fold earlier), one Transpose or more, each output
 *            read by the next node only and not a graph output, is read
 *            through a view instead when the chain (then the permutation
 *            already there) is a permutation of the source's elements laid
 *            out in C order as some dims (chain_view: every Reshape splits
 *            or merges dims the strides keep contiguous): the MatMul reads
 *            Reshape(source, those dims) (an alias: memplan) through attr
 *            permA / permB (ops.def), and the chain's copies go. The
 *            longest such chain from the MatMul's side folds; a chain that
 *            is no view (a Reshape merging dims a Transpose separated, on
 *            a batch past one) stays as it is.
 *            Before that, moves between per-tensor elementwise nodes on
 *            the way to the operand (QuantizeLinear / DequantizeLinear with
 *            one scale and zero point, Mul or Div by a one-element
 *            constant, Cast; a QDQ attention's Transpose -> Div ->
 *            QuantizeLinear) go below them, when the moves then make a
 *            view: the elementwise nodes read the source in its shape
 *            (the same values, each element computed alike) and the moves
 *            read the last one's output. A per-channel scale stops it.
 *            Nothing changes when ctx->fusion_off has
 *            FUSION_MATMUL_TRANSPOSE (TransposeMatMulFusionPass:off).
 *   Leaves:  topological order (sorted again after a view's Reshape is
 *            added or moves sink); unreferenced values dropped.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/elem.h"
#include "pass.h"

static int same_shape(const ir_value *a, const ir_value *b) {
  return a->rank == b->rank && a->dtype == b->dtype && a->layout == b->layout &&
         memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank) == 0;
}

/* c, a constant, broadcasts to node n's output y varying at most along
 * its channels: a Conv's dim 1 of [N,C,H,W] or [N,C,D,H,W], a MatMul's
 * last (N; only when B has that dim). */
static int per_channel(const ir_node *n, const ir_value *c, const ir_value *y) {
  const int axis = n->op == IR_OP_CONV ? 1 : y->rank - 1;
  if (!c->data || c->layout != LAYOUT_ND || c->rank > y->rank || c->dtype != y->dtype) return 0;
  if (n->op == IR_OP_CONV ? (y->rank != 4 && y->rank != 5) : n->in[1]->rank < 2) return 0;
  for (int i = 0; i < c->rank; i++) {
    int d = y->rank - c->rank + i;
    if (c->dims[i] != 1 && !(d == axis && c->dims[i] == y->dims[d])) return 0;
  }
  return 1;
}

/* r may be node n's residual: a Conv's a computed value shaped like y, a
 * MatMul's any value of y's dtype broadcasting to y. */
static int residual_ok(const ir_node *n, const ir_value *r, const ir_value *y) {
  if (n->op == IR_OP_CONV) return !r->data && same_shape(r, y);
  if (r->dtype != y->dtype || r->layout != LAYOUT_ND || r->rank > y->rank) return 0;
  for (int i = 0; i < r->rank; i++)
    if (r->dims[i] != 1 && r->dims[i] != y->dims[y->rank - r->rank + i]) return 0;
  return 1;
}

/* The Conv takes over u's output; u goes. */
static void absorb(ir_node *conv, ir_node *u) {
  ir_value *z = u->out[0];
  conv->out[0] = z;
  z->producer = conv;
  u->dead = 1;
}

static status nomem(diag *d, const ir_node *n) {
  return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory fusing");
}

static status fold_bias(ir_graph *g, ir_node *conv, const ir_value *c, diag *d) {
  const ir_value *b = conv->nin > 2 ? conv->in[2] : NULL, *y = conv->out[0];
  int64_t M = y->dims[conv->op == IR_OP_CONV ? 1 : y->rank - 1], ce = ir_value_elements(c);
  dtype dt = b ? b->dtype : c->dtype;
  void *nb = arena_array(&g->arena, (size_t)M, dtype_size(dt));
  if (!nb) return nomem(d, conv);
  for (int64_t m = 0; m < M; m++)
    elem_put(nb, dt, m,
             (b ? elem_get(b->data, b->dtype, m) : 0.0) + elem_get(c->data, c->dtype, ce == 1 ? 0 : m));
  char name[256];
  snprintf(name, sizeof name, "%.200s_bias", conv->name);
  ir_value *v = ir_const_new(g, name, dt, 1, &M, nb, (size_t)M * dtype_size(dt));
  if (!v || ir_node_set_input(g, conv, 2, v)) return nomem(d, conv);
  return ST_OK;
}

static int node_index(const ir_graph *g, const ir_node *n) {
  for (int i = 0; i < g->nnodes; i++)
    if (g->nodes[i] == n) return i;
  return -1;
}

/* Moves conv to the slot of u, which comes later: u's inputs (the residual
 * among them) are all produced before it, and nothing between reads the
 * Conv's output but u, so the order stays topological. */
static void move_to(ir_graph *g, ir_node *conv, const ir_node *u) {
  int from = node_index(g, conv), to = node_index(g, u);
  if (from < 0 || to <= from) return;
  memmove(g->nodes + from, g->nodes + from + 1, (size_t)(to - from) * sizeof *g->nodes);
  g->nodes[to] = conv;
}

/* --- the activation forms (top of file: act) */

typedef struct act_form {
  ir_node *n[12]; /* the form's nodes */
  int count;
} act_form;

static int near_k(const ir_value *v, double k) {
  double f;
  return ir_value_float_scalar(v, &f) && fabs(f - k) <= 1e-6 * fabs(k);
}

/* n's input other than v, when n has two inputs and exactly one is v. */
static const ir_value *other_in(const ir_node *n, const ir_value *v) {
  if (n->nin != 2 || (n->in[0] == v) == (n->in[1] == v)) return NULL;
  return n->in[0] == v ? n->in[1] : n->in[0];
}

static ir_node *live_producer(const ir_value *v) {
  return v && v->producer && !v->producer->dead ? v->producer : NULL;
}

static int take(act_form *f, ir_node *n) {
  if (!n || f->count == (int)(sizeof f->n / sizeof *f->n)) return 0;
  f->n[f->count++] = n;
  return 1;
}

/* v = x * k: Mul(x, k) either way round or Div(x, 1/k); its node joins f. */
static int scaled(act_form *f, const ir_value *v, const ir_value *x, double k) {
  ir_node *p = live_producer(v);
  if (!p || (p->op != IR_OP_MUL && p->op != IR_OP_DIV)) return 0;
  const ir_value *c = other_in(p, x);
  if (!c || (p->op == IR_OP_DIV && p->in[0] != x)) return 0;
  return near_k(c, p->op == IR_OP_MUL ? k : 1 / k) && take(f, p);
}

/* v = x^3: Pow(x, 3), x * (x * x) or (x * x) * x. */
static int cube(act_form *f, const ir_value *v, const ir_value *x) {
  ir_node *p = live_producer(v);
  if (!p || p->nin != 2) return 0;
  if (p->op == IR_OP_POW) return p->in[0] == x && near_k(p->in[1], 3) && take(f, p);
  const ir_value *sq = p->op == IR_OP_MUL ? other_in(p, x) : NULL;
  ir_node *q = live_producer(sq);
  return q && q->op == IR_OP_MUL && q->in[0] == x && q->in[1] == x && take(f, p) && take(f, q);
}

/* t (an Erf or Tanh node) reads y's form: Erf(y / sqrt 2), or Tanh(sqrt(2/pi)
 * * (y + 0.044715 * y^3)). */
static int gelu_head(act_form *f, const ir_node *t, const ir_value *y) {
  if (t->op == IR_OP_ERF) return scaled(f, t->in[0], y, M_SQRT1_2);
  ir_node *p = live_producer(t->in[0]);
  if (!p || (p->op != IR_OP_MUL && p->op != IR_OP_DIV)) return 0;
  ir_value *w = p->in[0]->data ? p->in[1] : p->in[0]; /* the non-constant side */
  if (!scaled(f, t->in[0], w, sqrt(2 / M_PI))) return 0;
  ir_node *a = live_producer(w);
  const ir_value *c3 = a && a->op == IR_OP_ADD ? other_in(a, y) : NULL;
  ir_node *k = live_producer(c3);
  if (!c3 || !k || !take(f, a)) return 0;
  const ir_value *x3 = k->op == IR_OP_MUL && k->nin == 2 ? (k->in[0]->data ? k->in[1] : k->in[0]) : NULL;
  return x3 && scaled(f, c3, x3, 0.044715) && cube(f, x3, y);
}

/* The one live node reading v (NULL: none, several, or a graph output). */
static ir_node *reader(const ir_graph *g, const ir_value *v) { return ir_value_sole_reader(g, v); }

/* The product of y, 1/2 and a (= 1 + t) in any grouping, starting at a's
 * reader; returns its last node. */
static ir_node *gelu_tail(const ir_graph *g, act_form *f, const ir_value *a, const ir_value *y) {
  ir_node *p = reader(g, a);
  const ir_value *o = p && p->op == IR_OP_MUL ? other_in(p, a) : NULL;
  if (!o || !take(f, p)) return NULL;
  if (scaled(f, o, y, 0.5)) return p; /* (y * 1/2) * a */
  ir_node *q = reader(g, p->out[0]);
  if (!q) return NULL;
  if (o == y) return scaled(f, q->out[0], p->out[0], 0.5) ? q : NULL; /* (y * a) * 1/2 */
  if (near_k(o, 0.5) && q->op == IR_OP_MUL && other_in(q, p->out[0]) == y && take(f, q))
    return q; /* (a / 2) y */
  return NULL;
}

/* Every value the form's nodes read is y, a scalar constant or one of their
 * outputs, and every output but last's is read by the form alone (y
 * likewise): no reader outside, no graph output. */
static int form_closed(const ir_graph *g, const act_form *f, const ir_value *y, const ir_node *last) {
  for (int i = 0; i < f->count; i++)
    for (int j = 0; j < f->n[i]->nin; j++) {
      const ir_value *v = f->n[i]->in[j];
      int inside = v == y || (v->data && ir_value_elements(v) == 1);
      for (int k = 0; k < f->count && !inside; k++)
        inside = v->producer == f->n[k] && f->n[k] != last;
      if (!inside) return 0;
    }
  const ir_value *vals[13];
  int nv = 0;
  vals[nv++] = y;
  for (int i = 0; i < f->count; i++)
    if (f->n[i] != last) vals[nv++] = f->n[i]->out[0];
  for (int v = 0; v < nv; v++) {
    int reads = 0;
    for (int i = 0; i < f->count; i++)
      for (int j = 0; j < f->n[i]->nin; j++)
        reads += f->n[i]->in[j] == vals[v];
    if (ir_value_use_count(g, vals[v]) != reads) return 0;
  }
  return 1;
}

/* Finds an activation form on node n's output y: its act name, the form's
 * nodes in *f and its last node (NULL: none). */
static ir_node *act_pattern(const ir_graph *g, const ir_node *n, act_form *f, const char **act_out) {
  const ir_value *y = n->out[0];
  for (int i = 0; i < g->nnodes; i++) {
    ir_node *t = g->nodes[i], *last = NULL;
    f->count = 0;
    if (t->dead || t->nin < 1 || t->nout != 1) continue;
    if (t->op == IR_OP_GELU && t->in[0] == y && take(f, t)) {
      last = t;
      *act_out = ir_attr_string(t, "approximate", "none")[0] == 't' ? "gelu_tanh" : "gelu";
    } else if (t->op == IR_OP_SIGMOID && t->in[0] == y && take(f, t)) {
      last = reader(g, t->out[0]);
      *act_out = "silu";
      if (!last || last->op != IR_OP_MUL || other_in(last, t->out[0]) != y || !take(f, last)) last = NULL;
    } else if ((t->op == IR_OP_ERF || t->op == IR_OP_TANH) && take(f, t) && gelu_head(f, t, y)) {
      ir_node *a = reader(g, t->out[0]);
      *act_out = t->op == IR_OP_ERF ? "gelu" : "gelu_tanh";
      if (a && a->op == IR_OP_ADD && near_k(other_in(a, t->out[0]), 1) && take(f, a))
        last = gelu_tail(g, f, a->out[0], y);
    }
    if (last && same_shape(last->out[0], y) && form_closed(g, f, y, last)) return last;
  }
  return NULL;
}

/* Absorbs one reader of conv's output; *done when nothing more fits. */
static status fuse_step(ir_graph *g, ir_node *conv, int *done, diag *d) {
  ir_value *y = conv->out[0];
  ir_node *u = ir_value_single_user(g, y);
  int has_res = conv->nin > 3 && conv->in[3], has_act = ir_attr_find(conv, "act") != NULL;
  *done = 1;
  act_form f;
  const char *act = NULL;
  ir_node *last = conv->op == IR_OP_MATMUL && !has_act ? act_pattern(g, conv, &f, &act) : NULL;
  if (last) {
    if (ir_attr_set_string(g, conv, "act", act)) return nomem(d, conv);
    for (int i = 0; i < f.count; i++)
      f.n[i]->dead = 1;
    absorb(conv, last);
    *done = 0;
    return ST_OK;
  }
  if (!u || has_act || u->out[0]->dtype != y->dtype) return ST_OK;
  if (u->op == IR_OP_ADD && !has_res) {
    ir_value *other = u->in[0] == y ? u->in[1] : u->in[0];
    if (per_channel(conv, other, y) && same_shape(u->out[0], y)) {
      status st = fold_bias(g, conv, other, d);
      if (st) return st;
    } else if (residual_ok(conv, other, y) && same_shape(u->out[0], y)) {
      if ((conv->nin == 2 && ir_node_set_input(g, conv, 2, NULL)) || ir_node_set_input(g, conv, 3, other))
        return nomem(d, conv);
      move_to(g, conv, u);
    } else {
      return ST_OK;
    }
  } else if (u->op == IR_OP_RELU) {
    if (ir_attr_set_string(g, conv, "act", "relu")) return nomem(d, conv);
  } else if (u->op == IR_OP_CLIP && u->nin == 1) { /* constant bounds only */
    if (ir_attr_set_string(g, conv, "act", "clip") ||
        ir_attr_set_float(g, conv, "clip_min", ir_attr_float(u, "min", -INFINITY)) ||
        ir_attr_set_float(g, conv, "clip_max", ir_attr_float(u, "max", INFINITY)))
      return nomem(d, conv);
  } else {
    return ST_OK;
  }
  absorb(conv, u);
  *done = 0;
  return ST_OK;
}

/* A 1x1 Conv with strides 1, pads 0 and group 1: every input value is read
 * once, by the output pixel at its place. */
static int pointwise(const ir_node *conv) {
  const ir_value *w = conv->in[1];
  int64_t s[2] = {1, 1}, p[4] = {0, 0, 0, 0};
  int ns = ir_attr_ints(conv, "strides", s, 2), np = ir_attr_ints(conv, "pads", p, 4);
  return w->rank == 4 && w->dims[2] == 1 && w->dims[3] == 1 && ir_attr_int(conv, "group", 1) == 1 &&
         ns <= 2 && np <= 4 && s[0] == 1 && s[1] == 1 && !p[0] && !p[1] && !p[2] && !p[3];
}

/* The input scale rule (top of file): conv reads Mul(x, s)'s x, s as in[4]. */
static status fuse_input_scale(ir_graph *g, ir_node *conv, diag *d) {
  ir_value *in = conv->in[0];
  ir_node *u = in->producer;
  if ((conv->nin > 4 && conv->in[4]) || !u || u->dead || u->op != IR_OP_MUL || u->nin != 2 || in->rank != 4 ||
      in->dims[2] * in->dims[3] < 2 || ir_value_single_user(g, in) != conv || !pointwise(conv))
    return ST_OK;
  for (int k = 0; k < 2; k++) {
    ir_value *x = u->in[k], *s = u->in[1 - k];
    if (s->data || !same_shape(x, in) || s->rank != 4 || s->dtype != in->dtype || s->dims[0] != in->dims[0] ||
        s->dims[1] != in->dims[1] || s->dims[2] != 1 || s->dims[3] != 1)
      continue;
    while (conv->nin < 4)
      if (ir_node_set_input(g, conv, conv->nin, NULL)) return nomem(d, conv);
    if (ir_node_set_input(g, conv, 0, x) || ir_node_set_input(g, conv, 4, s)) return nomem(d, conv);
    u->dead = 1;
    return ST_OK;
  }
  return ST_OK;
}

/* Moves only: they change where elements sit, not their values. */
static int is_move(const ir_node *n) {
  return n->nout == 1 && (n->op == IR_OP_TRANSPOSE || n->op == IR_OP_RESHAPE || n->op == IR_OP_FLATTEN ||
                          n->op == IR_OP_SQUEEZE || n->op == IR_OP_UNSQUEEZE);
}

/* A view of rank r over a buffer: element i at sum_d i_d * st[d]. */
typedef struct view {
  int r;
  int64_t d[MAX_RANK], st[MAX_RANK];
} view;

/* v becomes the view of its elements as dims nd[nr] in C order (a Reshape
 * of the view), when strides say it can be (numpy's no-copy reshape rule:
 * each run of old dims merged or split into new ones is contiguous within
 * itself); 0 when it cannot. No dim is 0. */
static int view_reshape(view *v, int nr, const int64_t *nd) {
  int64_t od[MAX_RANK], os[MAX_RANK], ns[MAX_RANK];
  int orr = 0;
  for (int i = 0; i < v->r; i++) /* dims of 1 take no part */
    if (v->d[i] != 1) od[orr] = v->d[i], os[orr++] = v->st[i];
  for (int i = 0; i < nr; i++)
    ns[i] = 1;
  int oi = 0, ni = 0;
  while (oi < orr && ni < nr) {
    int oj = oi + 1, nj = ni + 1;
    int64_t op = od[oi], np = nd[ni];
    while (np != op) {
      if (np < op) {
        if (nj >= nr) return 0;
        np *= nd[nj++];
      } else {
        if (oj >= orr) return 0;
        op *= od[oj++];
      }
    }
    for (int k = oi; k < oj - 1; k++)
      if (os[k] != od[k + 1] * os[k + 1]) return 0;
    ns[nj - 1] = os[oj - 1];
    for (int k = nj - 1; k > ni; k--)
      ns[k - 1] = ns[k] * nd[k];
    oi = oj, ni = nj;
  }
  if (oi < orr) return 0;
  v->r = nr;
  for (int i = 0; i < nr; i++)
    v->d[i] = nd[i], v->st[i] = ns[i];
  return 1;
}

/* v read through perm (perm[i]: which of v's dims becomes dim i). */
static void view_permute(view *v, const int64_t *perm) {
  view t = *v;
  for (int i = 0; i < v->r; i++)
    v->d[i] = t.d[perm[i]], v->st[i] = t.st[perm[i]];
}

/* Transpose t's perm (default: the dims reversed) into p[rank]. */
static void transpose_perm(const ir_node *t, int rank, int64_t *p) {
  if (ir_attr_ints(t, "perm", p, MAX_RANK + 1) != rank)
    for (int i = 0; i < rank; i++)
      p[i] = rank - 1 - i;
}

/* The view as a permutation of a C-ordered buffer: the buffer's dims
 * (stored_out, the dims of 1 first, then the others by falling stride) and
 * perm_out (view dim d is stored dim perm_out[d]); 0 when the strides are
 * no such buffer's. */
static int view_as_perm(const view *v, int64_t *stored_out, int64_t *perm_out) {
  int order[MAX_RANK], n = 0;
  for (int i = 0; i < v->r; i++)
    if (v->d[i] == 1) order[n++] = i;
  const int ones = n;
  for (int i = 0; i < v->r; i++) { /* insertion by falling stride */
    if (v->d[i] == 1) continue;
    int k = n++;
    for (; k > ones && v->st[order[k - 1]] < v->st[i]; k--)
      order[k] = order[k - 1];
    order[k] = i;
  }
  for (int k = ones; k < v->r; k++) {
    const int64_t next = k + 1 < v->r ? v->st[order[k + 1]] * v->d[order[k + 1]] : 1;
    if (v->st[order[k]] != next) return 0;
  }
  for (int k = 0; k < v->r; k++)
    stored_out[k] = v->d[order[k]], perm_out[order[k]] = k;
  return 1;
}

/* The view of src read through moves chain[n - 1] .. chain[0] (chain[n - 1]
 * reads src, chain[0] is read by mm) and then mm's permutation `name` of
 * input j; as stored dims and a permutation (view_as_perm); 0 when no view. */
static int chain_view(const ir_node *mm, const char *name, const ir_value *src, ir_node *const *chain, int n,
                      int *rank_out, int64_t *stored_out, int64_t *perm_out) {
  view v = {.r = src->rank};
  if (src->rank < 1 || src->rank > MAX_RANK) return 0;
  for (int i = src->rank - 1; i >= 0; i--) {
    if (src->dims[i] < 1) return 0;
    v.d[i] = src->dims[i];
    v.st[i] = i + 1 < src->rank ? v.st[i + 1] * v.d[i + 1] : 1;
  }
  int64_t p[MAX_RANK + 1];
  for (int i = n - 1; i >= 0; i--) {
    const ir_value *y = chain[i]->out[0];
    if (chain[i]->op == IR_OP_TRANSPOSE) {
      transpose_perm(chain[i], v.r, p);
      view_permute(&v, p);
    } else if (y->rank < 1 || y->rank > MAX_RANK || !view_reshape(&v, y->rank, y->dims)) {
      return 0;
    }
  }
  if (ir_attr_ints(mm, name, p, MAX_RANK + 1) == v.r) view_permute(&v, p);
  *rank_out = v.r;
  return view_as_perm(&v, stored_out, perm_out);
}

/* The operand-view rule (top of file) for input j of MatMul mm: the
 * longest chain of moves before it, one Transpose or more, whose view is a
 * permutation of a reshaped source, folds into it. *folded: 1 when one did. */
static status fuse_view(ir_graph *g, ir_node *mm, int j, int *folded, diag *d) {
  const char *name = j ? "permB" : "permA";
  ir_node *chain[16];
  int n = 0;
  *folded = 0;
  for (ir_value *v = mm->in[j]; n < 16; v = chain[n - 1]->in[0]) {
    ir_node *t = v->producer;
    if (!t || t->dead || !is_move(t) || v->count || ir_value_single_user(g, v) != (n ? chain[n - 1] : mm))
      break;
    chain[n++] = t;
  }
  for (; n > 0; n--) { /* the longest chain that is a view */
    ir_value *src = chain[n - 1]->in[0];
    int transposes = 0, rank;
    for (int i = 0; i < n; i++)
      transposes += chain[i]->op == IR_OP_TRANSPOSE;
    int64_t stored[MAX_RANK], perm[MAX_RANK];
    if (!transposes || src->data || src->count || !chain_view(mm, name, src, chain, n, &rank, stored, perm))
      continue;
    ir_value *in = src;
    if (src->rank != rank || memcmp(src->dims, stored, sizeof(int64_t) * (size_t)rank)) {
      char vn[300];
      snprintf(vn, sizeof vn, "%.250s_view%d", mm->name, j);
      in = ir_value_new(g, vn, src->dtype);
      const int64_t r64 = rank;
      snprintf(vn, sizeof vn, "%.250s_view%d_shape", mm->name, j);
      ir_value *shape =
          in ? ir_const_new(g, vn, DT_INT64, 1, &r64, stored, sizeof(int64_t) * (size_t)rank) : NULL;
      if (!shape) return nomem(d, mm);
      ir_value_set_shape(in, rank, stored);
      ir_value *rin[2] = {src, shape};
      snprintf(vn, sizeof vn, "%.250s_view%d", mm->name, j);
      ir_node *r = ir_node_new(g, IR_OP_RESHAPE, vn, 2, rin, 1, &in);
      if (!r) return nomem(d, mm);
      r->origin = chain[0]->origin;
    }
    if (ir_node_set_input(g, mm, j, in) || ir_attr_set_ints(g, mm, name, rank, perm)) return nomem(d, mm);
    for (int i = 0; i < n; i++)
      chain[i]->dead = 1;
    *folded = 1;
    return ST_OK;
  }
  return ST_OK;
}

/* p is elementwise on one run-time input with the same value for every
 * element's position: QuantizeLinear or DequantizeLinear with one constant
 * scale and zero point, Mul or Div by a constant of one element, Cast. The
 * run-time input's index into *k; p's output is shaped like it. */
static int scalar_pointwise(const ir_node *p, int *k) {
  *k = p->op == IR_OP_MUL && p->nin == 2 && p->in[0]->data; /* Mul(c, x) */
  if (p->nout != 1 || p->nin < 1) return 0;
  const ir_value *x = p->in[*k], *y = p->out[0];
  if (x->data || y->rank != x->rank || memcmp(x->dims, y->dims, sizeof(int64_t) * (size_t)x->rank)) return 0;
  const ir_value *c = p->nin > 1 ? p->in[1 - *k] : NULL, *z = p->nin > 2 ? p->in[2] : NULL;
  switch (p->op) {
  case IR_OP_CAST: return p->nin == 1;
  case IR_OP_QUANTIZE:
  case IR_OP_DEQUANTIZE:
    return c->data && ir_value_elements(c) == 1 && (!z || (z->data && ir_value_elements(z) == 1));
  case IR_OP_MUL:
  case IR_OP_DIV: return p->nin == 2 && c->data && ir_value_elements(c) == 1;
  default: return 0;
  }
}

/* The sinking rule (top of file) for input j of MatMul mm: moves between
 * per-tensor elementwise nodes before the operand go below them, so that
 * they meet the operand and fuse_view folds them. */
static int sink_moves(ir_graph *g, ir_node *mm, int j) {
  ir_node *run[16], *moves[16], *pw[16];
  int n = 0, nm = 0, np = 0, k, sinks = 0;
  ir_value *v = mm->in[j];
  for (; n < 16; n++) { /* the run of moves and pointwise nodes, mm's side first */
    ir_node *t = v->producer;
    if (!t || t->dead || v->count || ir_value_single_user(g, v) != (n ? run[n - 1] : mm)) break;
    if (is_move(t)) {
      moves[nm++] = t;
      sinks += np > 0;
      v = t->in[0];
    } else if (scalar_pointwise(t, &k)) {
      pw[np++] = t;
      v = t->in[k];
    } else {
      break;
    }
    run[n] = t;
  }
  int rank;
  int64_t stored[MAX_RANK], perm[MAX_RANK];
  if (!sinks || v->data || v->count ||
      !chain_view(mm, j ? "permB" : "permA", v, moves, nm, &rank, stored, perm))
    return 0;
  for (int i = np - 1; i >= 0; i--) { /* the pointwise nodes on the source's shape, in their order */
    scalar_pointwise(pw[i], &k);
    pw[i]->in[k] = v;
    ir_value_set_shape(pw[i]->out[0], v->rank, v->dims);
    v = pw[i]->out[0];
  }
  for (int i = nm - 1; i >= 0; i--) { /* then the moves, on the last one's dtype */
    moves[i]->in[0] = v;
    moves[i]->out[0]->dtype = v->dtype;
    v = moves[i]->out[0];
  }
  mm->in[j] = v;
  return 1;
}

status pass_fuse(ir_graph *g, pass_ctx *ctx, diag *d) {
  status st = ST_OK;
  int reorder = 0; /* a view's Reshape was appended, or moves sank */
  for (int i = 0; i < g->nnodes && st == ST_OK; i++) {
    ir_node *n = g->nodes[i];
    const int qmm = n->op == IR_OP_QMATMUL && !n->dead && !n->in[1]->data; /* two activations */
    if (n->dead || (n->op != IR_OP_CONV && n->op != IR_OP_MATMUL && !qmm)) continue;
    if (n->op == IR_OP_CONV && !(ctx->fusion_off & FUSION_CONV_INPUT_SCALE)) st = fuse_input_scale(g, n, d);
    for (int j = 0; j < 2 && n->op != IR_OP_CONV && !(ctx->fusion_off & FUSION_MATMUL_TRANSPOSE) && !st;
         j++) {
      int folded;
      reorder |= sink_moves(g, n, j);
      st = fuse_view(g, n, j, &folded, d);
      reorder |= folded;
    }
    if (qmm || ctx->fusion_off & (n->op == IR_OP_CONV ? FUSION_CONV_ADD_RELU : FUSION_MATMUL_ADD_ACT))
      continue;
    for (int done = 0; !done && st == ST_OK;)
      st = fuse_step(g, n, &done, d);
    if (g->nodes[i] != n) i--; /* n moved to its residual Add: visit what took its slot */
  }
  if (st == ST_OK) ir_graph_compact(g);
  return st == ST_OK && reorder ? ir_graph_toposort(g, d) : st;
}
