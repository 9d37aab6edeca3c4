/* lower_gemm.c - Gemm/MatMul of one row by a constant matrix B become a 1x1
 * Conv.
 *
 * Why only one row (M = 1, the classifier head of a batch-1 model): a Conv
 * 1x1 over [M,K,1,1] is M images of one pixel, each a matrix-vector product
 * that reads all of W (CONV2D's fully connected tile streams FRACTAL_Z once
 * per image). For M = 1 that beats the MATMUL task, which stages B into L0B
 * per tile: [1,2048] x const [2048,1000] ran in 0.71 ms (fp16) as a Conv and
 * 2.03 ms as MATMUL; for M = 256 the Conv took 141.7 ms and MATMUL 39.6 ms
 * (f32: 208.1 vs 28.2 ms; omrun min of 200, 2 threads). Everything else is
 * left to the MATMUL task (layout, tiling, emit).
 *
 * Contract.
 *   Needs:   shape_infer, constfold (B must already be a constant).
 *   Changes: Gemm(A, B, [C]) with A 2-D [1,K], B a constant 2-D float matrix,
 *            transA = 0, and C absent or a constant broadcasting per column
 *            (shape [], [1], [N] or [1,N]), and MatMul(A, B) with the same A
 *            and B, become
 *              Reshape(A, [M,K,1,1]) -> Conv 1x1 (W [N,K,1,1], bias [N])
 *                                    -> Reshape(., [M,N])
 *            W[n][k] = alpha * B[k][n] (B[n][k] with transB), bias[n] =
 *            beta * C[n] (absent without C or with beta = 0), computed in f64
 *            and stored in B's dtype. The final Reshape produces the original
 *            output value (name kept). Shape constants are i64. Anything else
 *            (transA, a non-constant B, a C varying along M, a batched A,
 *            more than one row) is left unchanged for the MATMUL task.
 *            Nodes with the same B, transB and alpha share one W (an
 *            unrolled RNN multiplies by the same R at every step).
 *   Leaves:  topological order; every new value has a shape and dtype.
 */
#include <stdio.h>
#include <string.h>

#include "common/elem.h"
#include "pass.h"

static int is_float(int dt) { return dt == DT_FLOAT32 || dt == DT_FLOAT16 || dt == DT_DOUBLE; }

/* C broadcasts along M: one value or one per column. */
static int per_column(const ir_value *c, int64_t n) {
  int64_t e = ir_value_elements(c);
  if (c->rank == 2 && c->dims[0] != 1) return 0;
  return c->rank <= 2 && (e == 1 || (c->rank >= 1 && c->dims[c->rank - 1] == n && e == n));
}

static int lowerable(const ir_node *n) {
  const ir_value *A = n->in[0], *B = n->in[1], *C = n->nin > 2 ? n->in[2] : NULL;
  if (A->rank != 2 || A->dims[0] != 1 || B->rank != 2 || !B->data || B->layout != LAYOUT_ND ||
      !is_float(B->dtype))
    return 0;
  if (n->op == IR_OP_MATMUL) return 1;
  if (ir_attr_int(n, "transA", 0)) return 0;
  int64_t N = n->out[0]->dims[1];
  return !C || (C->data && C->layout == LAYOUT_ND && is_float(C->dtype) && per_column(C, N));
}

static status nomem(diag *d, const ir_node *n) {
  return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory lowering to Conv");
}

/* A name "<node>_<suffix>" for new values and nodes. */
static const char *derived(char *buf, size_t cap, const ir_node *n, const char *suffix) {
  snprintf(buf, cap, "%.200s_%s", n->name, suffix);
  return buf;
}

/* The Conv weights made from one B, for the nodes that share it. */
typedef struct made_w {
  const ir_value *B;
  int tb;
  double alpha;
  ir_value *W;
  struct made_w *next;
} made_w;

static status lower(ir_graph *g, ir_node *n, arena *scratch, made_w **made, diag *d) {
  ir_value *A = n->in[0], *B = n->in[1], *C = n->nin > 2 ? n->in[2] : NULL, *Y = n->out[0];
  int gemm = n->op == IR_OP_GEMM, tb = gemm && ir_attr_int(n, "transB", 0);
  double alpha = gemm ? ir_attr_float(n, "alpha", 1.0) : 1.0,
         beta = gemm ? ir_attr_float(n, "beta", 1.0) : 1.0;
  int64_t M = A->dims[0], K = A->dims[1], N = Y->dims[1];
  size_t es = dtype_size(B->dtype);
  char name[256];
  int64_t wdims[4] = {N, K, 1, 1}, xdims[4] = {M, K, 1, 1}, ydims[4] = {M, N, 1, 1}, odims[2] = {M, N};
  ir_value *W = NULL;
  for (made_w *m = *made; m && !W; m = m->next)
    if (m->B == B && m->tb == tb && m->alpha == alpha) W = m->W;
  void *b = arena_array(scratch, (size_t)N, es);
  if (!b) return nomem(d, n);
  if (!W) {
    void *w = arena_array(scratch, (size_t)(N * K), es);
    made_w *m = arena_alloc(scratch, sizeof *m);
    if (!w || !m) return nomem(d, n);
    for (int64_t i = 0; i < N; i++)
      for (int64_t k = 0; k < K; k++)
        elem_put(w, B->dtype, i * K + k, alpha * elem_get(B->data, B->dtype, tb ? i * K + k : k * N + i));
    W = ir_const_new(g, derived(name, sizeof name, n, "W"), B->dtype, 4, wdims, w, (size_t)(N * K) * es);
    if (!W) return nomem(d, n);
    *m = (made_w){B, tb, alpha, W, *made};
    *made = m;
  }
  int has_bias = C && beta != 0;
  if (has_bias) {
    int64_t ce = ir_value_elements(C);
    for (int64_t i = 0; i < N; i++)
      elem_put(b, B->dtype, i, beta * elem_get(C->data, C->dtype, ce == 1 ? 0 : i));
  }
  ir_value *bias =
      has_bias ? ir_const_new(g, derived(name, sizeof name, n, "bias"), B->dtype, 1, &N, b, (size_t)N * es)
               : NULL;
  ir_value *s4 = ir_const_new(g, derived(name, sizeof name, n, "shape4"), DT_INT64, 1, (int64_t[]){4}, xdims,
                              sizeof xdims);
  ir_value *s2 = ir_const_new(g, derived(name, sizeof name, n, "shape2"), DT_INT64, 1, (int64_t[]){2}, odims,
                              sizeof odims);
  ir_value *x4 = ir_value_new(g, derived(name, sizeof name, n, "x4"), A->dtype);
  ir_value *y4 = ir_value_new(g, derived(name, sizeof name, n, "y4"), Y->dtype);
  if ((has_bias && !bias) || !s4 || !s2 || !x4 || !y4) return nomem(d, n);
  ir_value_set_shape(x4, 4, xdims);
  ir_value_set_shape(y4, 4, ydims);
  n->dead = 1;
  ir_node *r1 = ir_node_new(g, IR_OP_RESHAPE, derived(name, sizeof name, n, "reshape_in"), 2,
                            (ir_value *[]){A, s4}, 1, &x4);
  ir_node *cv = ir_node_new(g, IR_OP_CONV, derived(name, sizeof name, n, "conv"), has_bias ? 3 : 2,
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
  arena scratch;
  arena_init(&scratch, 0);
  status st = ST_OK;
  made_w *made = NULL;
  for (int i = 0; i < g->nnodes && st == ST_OK; i++) {
    ir_node *n = g->nodes[i];
    if (n->dead || (n->op != IR_OP_GEMM && n->op != IR_OP_MATMUL) || !lowerable(n)) continue;
    st = lower(g, n, &scratch, &made, d);
    if (st == ST_OK) {
      move_tail_after(g, i, 3);
      i += 3;
    }
  }
  arena_free(&scratch);
  if (st == ST_OK) ir_graph_compact(g);
  return st;
}
