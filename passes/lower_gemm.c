/* lower_gemm.c - Gemm becomes MatMul.
 *
 * One node kind carries every matrix product from here on: MatMul in the
 * form of ops.def (transA, transB, alpha, beta, bias, c), which fuse.c
 * extends with the epilogue and the MATMUL task runs. A Gemm is that form
 * with its attributes; only its B and C are normalised, so that a constant
 * B is one plain [K, N] matrix the layout pass can store as FRACTAL_NZ and
 * a per-column C is a bias like a Conv's.
 *
 * One-row products by a constant (a classifier head, an RNN step) used to
 * become 1x1 Convs here, for CONV2D's matrix-vector tile; the MATMUL task
 * reading FRACTAL_NZ in place is within 10% of it (omrun min of 600 runs,
 * one core, the model's input and output conversions included: [1,768] x
 * [768,1000] 0.034 ms as MATMUL, 0.031 as Conv; [1,2048] x [2048,1000]
 * 0.085 and 0.078; [1,256] x [256,1024] 0.012 and 0.013; bound by reading
 * the weights either way), so they stay MatMuls: one mechanism.
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
 *   Leaves:  no Gemm; the node order; every new value has a shape and dtype.
 */
#include <stdio.h>
#include <string.h>

#include "common/elem.h"
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

/* The B' made from one B, for the Gemms that share it. */
typedef struct made {
  const ir_value *B;
  int tb;
  double alpha;
  ir_value *v;
  struct made *next;
} made;

/* alpha * op(B) as a [K, N] constant, shared per (B, tb, alpha). */
static ir_value *matrix_of(ir_graph *g, const ir_node *n, ir_value *B, int tb, double alpha, arena *scratch,
                           made **list) {
  if (!tb && alpha == 1.0) return B;
  for (made *m = *list; m; m = m->next)
    if (m->B == B && m->tb == tb && m->alpha == alpha) return m->v;
  const int64_t K = B->dims[tb], N = B->dims[!tb];
  const size_t es = dtype_size(B->dtype);
  void *w = arena_array(scratch, (size_t)(K * N), es);
  made *m = arena_alloc(scratch, sizeof *m);
  if (!w || !m) return NULL;
  for (int64_t k = 0; k < K; k++)
    for (int64_t j = 0; j < N; j++)
      elem_put(w, B->dtype, k * N + j, alpha * elem_get(B->data, B->dtype, tb ? j * K + k : k * N + j));
  char name[256];
  int64_t dims[2] = {K, N};
  ir_value *v =
      ir_const_new(g, derived(name, sizeof name, n, "B"), B->dtype, 2, dims, w, (size_t)(K * N) * es);
  if (!v) return NULL;
  *m = (made){B, tb, alpha, v, *list};
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
  ir_value *b2 = bconst ? matrix_of(g, n, B, tb, alpha, scratch, list) : B, *bias = NULL, *c = NULL;
  if (!b2) return nomem(d, n);
  if (C && beta != 0.0) {
    if (C->data && is_float(C->dtype) && per_column(C, N)) {
      const size_t es = dtype_size(C->dtype);
      void *v = arena_array(&g->arena, (size_t)N, es);
      char name[256];
      if (!v) return nomem(d, n);
      for (int64_t j = 0; j < N; j++)
        elem_put(v, C->dtype, j, beta * elem_get(C->data, C->dtype, ir_value_elements(C) == 1 ? 0 : j));
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
  }
  arena_free(&scratch);
  if (st == ST_OK) ir_graph_compact(g);
  return st;
}
