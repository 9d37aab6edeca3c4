/* lower_gemm.c - Gemm becomes MatMul; a MatMul of one row by a constant
 * matrix becomes a 1x1 Conv.
 *
 * One node kind carries every matrix product from here on: MatMul in the
 * form of ops.def (transA, transB, alpha, beta, bias, c), which fuse.c
 * extends with the epilogue and the MATMUL task runs. A Gemm is that form
 * with its attributes; only its B and C are normalised, so that a constant
 * B is one plain [K, N] matrix the layout pass can store as FRACTAL_NZ and
 * a per-column C is a bias like a Conv's.
 *
 * Why a one-row product by a constant goes to a Conv (M = 1, the classifier
 * head of a batch-1 model): a Conv 1x1 over [1,K,1,1] is a matrix-vector
 * product that reads W once, in memory order, through CONV2D's fully
 * connected tile.
 *
 * Contract.
 *   Needs:   shape_infer, constfold (B must already be a constant).
 *   Changes: Gemm(A, B, [C]) with attrs alpha, beta, transA, transB becomes
 *            MatMul(A, B', [bias], [c]), its name and output kept:
 *              B constant: B' = alpha * op(B), a new [K, N] constant in B's
 *                dtype (computed in f64; nodes with the same B, transB and
 *                alpha share one; B itself when transB = 0 and alpha = 1),
 *                no transB and no alpha; otherwise B' = B and transB,
 *                alpha stay (attrs, 0 / 1 dropped);
 *              transA stays (when 1);
 *              C absent or beta = 0: no bias and no c. C a constant that
 *                broadcasts per column (shape [], [1], [N] or [1, N]): bias
 *                = beta * C, N elements in C's dtype. Otherwise c = C with
 *                attr beta (when not 1).
 *            Then MatMul(A, B) with A 2-D [1, K], B a constant 2-D float
 *            matrix, no transA / transB / alpha and no c becomes
 *              Reshape(A, [1,K,1,1]) -> Conv 1x1 (W [N,K,1,1], [bias]) -> Reshape(., [1,N])
 *            W[n][k] = B[k][n] in B's dtype. The final Reshape produces the
 *            original output value (name kept). Shape constants are i64.
 *            Nodes with the same B share one W (an unrolled RNN multiplies
 *            by the same R at every step).
 *   Leaves:  no Gemm; topological order; every new value has a shape and dtype.
 */
#include <stdio.h>
#include <string.h>

#include "ir/eval.h"
#include "pass.h"

static int is_float(int dt) { return dt == DT_FLOAT32 || dt == DT_FLOAT16 || dt == DT_DOUBLE; }

static status nomem(diag *d, const ir_node *n) {
  return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory lowering a matrix product");
}

/* A name "<node>_<suffix>" for new values and nodes. */
static const char *derived(char *buf, size_t cap, const ir_node *n, const char *suffix) {
  snprintf(buf, cap, "%.200s_%s", n->name, suffix);
  return buf;
}

/* Constants made from one B (a Gemm's B', a Conv's W), for the nodes that share it. */
typedef struct made {
  const ir_value *B;
  int tb, conv; /* conv: the [N,K,1,1] Conv weights; else alpha * op(B) */
  double alpha;
  ir_value *v;
  struct made *next;
} made;

/* alpha * op(B) as a new [K, N] constant (conv = 0), or its transpose as
 * Conv weights [N, K, 1, 1] (conv = 1); shared per (B, tb, alpha, conv). */
static ir_value *matrix_of(ir_graph *g, const ir_node *n, ir_value *B, int tb, double alpha, int conv,
                           arena *scratch, made **list) {
  if (!conv && !tb && alpha == 1.0) return B;
  for (made *m = *list; m; m = m->next)
    if (m->B == B && m->tb == tb && m->alpha == alpha && m->conv == conv) return m->v;
  const int64_t K = B->dims[tb], N = B->dims[!tb];
  const size_t es = dtype_size(B->dtype);
  void *w = arena_array(scratch, (size_t)(K * N), es);
  made *m = arena_alloc(scratch, sizeof *m);
  if (!w || !m) return NULL;
  for (int64_t k = 0; k < K; k++)
    for (int64_t j = 0; j < N; j++)
      ir_elem_set(w, B->dtype, conv ? j * K + k : k * N + j,
                  alpha * ir_elem_get(B->data, B->dtype, tb ? j * K + k : k * N + j));
  char name[256];
  int64_t dims[4] = {K, N, 1, 1}, wdims[4] = {N, K, 1, 1};
  ir_value *v = ir_const_new(g, derived(name, sizeof name, n, conv ? "W" : "B"), B->dtype, conv ? 4 : 2,
                             conv ? wdims : dims, w, (size_t)(K * N) * es);
  if (!v) return NULL;
  *m = (made){B, tb, conv, alpha, v, *list};
  *list = m;
  return v;
}

/* C broadcasts along M: one value or one per column. */
static int per_column(const ir_value *c, int64_t n) {
  int64_t e = ir_value_elements(c);
  if (c->rank == 2 && c->dims[0] != 1) return 0;
  return c->rank <= 2 && (e == 1 || (c->rank >= 1 && c->dims[c->rank - 1] == n && e == n));
}

/* Gemm n becomes a MatMul in place (the contract above). */
static status gemm_to_matmul(ir_graph *g, ir_node *n, arena *scratch, made **list, diag *d) {
  ir_value *B = n->in[1], *C = n->nin > 2 ? n->in[2] : NULL;
  const int tb = ir_attr_int(n, "transB", 0) != 0, ta = ir_attr_int(n, "transA", 0) != 0;
  const double alpha = ir_attr_float(n, "alpha", 1.0), beta = ir_attr_float(n, "beta", 1.0);
  const int64_t N = n->out[0]->dims[1];
  const int bconst = B->data && is_float(B->dtype);
  ir_value *b2 = bconst ? matrix_of(g, n, B, tb, alpha, 0, scratch, list) : B, *bias = NULL, *c = NULL;
  if (!b2) return nomem(d, n);
  if (C && beta != 0.0) {
    if (C->data && is_float(C->dtype) && per_column(C, N)) {
      const size_t es = dtype_size(C->dtype);
      void *v = arena_array(&g->arena, (size_t)N, es);
      char name[256];
      if (!v) return nomem(d, n);
      for (int64_t j = 0; j < N; j++)
        ir_elem_set(v, C->dtype, j, beta * ir_elem_get(C->data, C->dtype, ir_value_elements(C) == 1 ? 0 : j));
      if (!(bias =
                ir_const_new(g, derived(name, sizeof name, n, "bias"), C->dtype, 1, &N, v, (size_t)N * es)))
        return nomem(d, n);
    } else {
      c = C;
    }
  }
  n->op = IR_OP_MATMUL;
  n->nattrs = 0;
  ir_value *ins[4] = {n->in[0], b2, bias, c};
  int nin = c ? 4 : bias ? 3 : 2;
  for (int j = 0; j < nin; j++)
    if (ir_node_set_input(g, n, j, ins[j])) return nomem(d, n);
  n->nin = nin;
  if ((ta && ir_attr_set_int(g, n, "transA", 1)) || (!bconst && tb && ir_attr_set_int(g, n, "transB", 1)) ||
      (!bconst && alpha != 1.0 && ir_attr_set_float(g, n, "alpha", alpha)) ||
      (c && beta != 1.0 && ir_attr_set_float(g, n, "beta", beta)))
    return nomem(d, n);
  return ST_OK;
}

/* A MatMul of one row by a constant matrix, plain but for a bias. */
static int one_row(const ir_node *n) {
  const ir_value *A = n->in[0], *B = n->in[1];
  return A->rank == 2 && A->dims[0] == 1 && B->rank == 2 && B->data && B->layout == LAYOUT_ND &&
         is_float(B->dtype) && n->nin <= 3 && n->nattrs == 0;
}

static status to_conv(ir_graph *g, ir_node *n, arena *scratch, made **list, diag *d) {
  ir_value *A = n->in[0], *B = n->in[1], *bias = n->nin > 2 ? n->in[2] : NULL, *Y = n->out[0];
  int64_t K = A->dims[1], N = Y->dims[1];
  char name[256];
  int64_t xdims[4] = {1, K, 1, 1}, ydims[4] = {1, N, 1, 1}, odims[2] = {1, N};
  ir_value *W = matrix_of(g, n, B, 0, 1.0, 1, scratch, list);
  ir_value *s4 = ir_const_new(g, derived(name, sizeof name, n, "shape4"), DT_INT64, 1, (int64_t[]){4}, xdims,
                              sizeof xdims);
  ir_value *s2 = ir_const_new(g, derived(name, sizeof name, n, "shape2"), DT_INT64, 1, (int64_t[]){2}, odims,
                              sizeof odims);
  ir_value *x4 = ir_value_new(g, derived(name, sizeof name, n, "x4"), A->dtype);
  ir_value *y4 = ir_value_new(g, derived(name, sizeof name, n, "y4"), Y->dtype);
  if (!W || !s4 || !s2 || !x4 || !y4) return nomem(d, n);
  ir_value_set_shape(x4, 4, xdims);
  ir_value_set_shape(y4, 4, ydims);
  n->dead = 1;
  ir_node *r1 = ir_node_new(g, IR_OP_RESHAPE, derived(name, sizeof name, n, "reshape_in"), 2,
                            (ir_value *[]){A, s4}, 1, &x4);
  ir_node *cv = ir_node_new(g, IR_OP_CONV, derived(name, sizeof name, n, "conv"), bias ? 3 : 2,
                            (ir_value *[]){x4, W, bias}, 1, &y4);
  ir_node *r2 = ir_node_new(g, IR_OP_RESHAPE, derived(name, sizeof name, n, "reshape_out"), 2,
                            (ir_value *[]){y4, s2}, 1, &Y);
  if (!r1 || !cv || !r2 || ir_attr_set_ints(g, cv, "kernel_shape", 2, (int64_t[]){1, 1}) ||
      ir_attr_set_ints(g, cv, "strides", 2, (int64_t[]){1, 1}) ||
      ir_attr_set_ints(g, cv, "dilations", 2, (int64_t[]){1, 1}) ||
      ir_attr_set_ints(g, cv, "pads", 4, (int64_t[]){0, 0, 0, 0}) || ir_attr_set_int(g, cv, "group", 1))
    return nomem(d, n);
  return ST_OK;
}

/* Moves the last k nodes (just appended) to right after position `at`, where
 * the node they replace was, keeping g->nodes topologically sorted. */
static void move_tail_after(ir_graph *g, int at, int k) {
  ir_node *tail[3];
  memcpy(tail, g->nodes + g->nnodes - k, (size_t)k * sizeof *tail);
  memmove(g->nodes + at + 1 + k, g->nodes + at + 1, (size_t)(g->nnodes - k - at - 1) * sizeof *g->nodes);
  memcpy(g->nodes + at + 1, tail, (size_t)k * sizeof *tail);
}

status pass_lower_gemm(ir_graph *g, pass_ctx *ctx, diag *d) {
  (void)ctx;
  arena scratch;
  arena_init(&scratch, 0);
  status st = ST_OK;
  made *list = NULL;
  for (int i = 0; i < g->nnodes && st == ST_OK; i++) {
    ir_node *n = g->nodes[i];
    if (n->dead) continue;
    if (n->op == IR_OP_GEMM) st = gemm_to_matmul(g, n, &scratch, &list, d);
    if (st != ST_OK || n->op != IR_OP_MATMUL || !one_row(n)) continue;
    st = to_conv(g, n, &scratch, &list, d);
    if (st == ST_OK) {
      move_tail_after(g, i, 3);
      i += 3;
    }
  }
  arena_free(&scratch);
  if (st == ST_OK) ir_graph_compact(g);
  return st;
}
