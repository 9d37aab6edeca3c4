/* test_qmatmul_act.c - QMATMUL with a run-time w (format 2.14), the int8
 * product of two activations (a QDQ model's attention MatMuls), against
 * the reference evaluator's QMatMul (ir/eval_quant.c: exact int64 sums of
 * (x - x_zp) * (w - w_zp), then i32, the f32 product with the scale, or
 * q_requant). Random u8 and i8 operands with zero points across their
 * ranges, K odd and not a multiple of 4 (x's rows copied) or of 16, N not
 * a multiple of 16, batch dims broadcasting both ways and a 2-D w, operand
 * permutations (a transposed w, x's rows strided or not contiguous along
 * K), every y dtype, and tiles that cut M and N. Each case runs the task
 * as libomrt runs it (all its blocks; the ctest variants force
 * OMRT_PORTABLE=1 and OMRT_AVX512=0, so the portable, AVX2 and AVX-512
 * VNNI tiles each run it), and the output bytes must be the evaluator's,
 * bit for bit. Also the load-time check's refusals, each naming the field.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/matmul_geom.h"
#include "evalref.h"
#include "ir/eval.h"
#include "ir/shape.h"
#include "kcase.h"

static uint32_t rng = 77;
static uint32_t next(void) {
  rng = rng * 1664525u + 1013904223u;
  return rng >> 8;
}

typedef struct acase {
  int xr, wr;
  int64_t xd[4], wd[4];
  int pa[4], pb[4]; /* all 0: no permutation */
  int xdt, wdt, ydt;
  int32_t xz, wz, yz;
  int32_t tm, tn;
} acase;

enum {
  X = OM_QMATMUL_T_X,
  W = OM_QMATMUL_T_W,
  CS = OM_QMATMUL_T_COLSUM,
  ZP = OM_QMATMUL_T_X_ZP,
  S = OM_QMATMUL_T_SCALE,
  B = OM_QMATMUL_T_BIAS,
  Y = OM_QMATMUL_T_Y
};

static int has_perm(const int *p, int rank) {
  for (int d = 0; d < rank; d++)
    if (p[d] != 0) return 1;
  return 0;
}

static int64_t elements(int rank, const int64_t *d) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++)
    n *= d[i];
  return n;
}

/* The evaluator's output for the case; its dims into *yr, yd. */
static void *reference(const acase *q, const void *x, const void *w, const void *zp, const float *s, int *yr,
                       int64_t *yd, arena *a) {
  ir_graph *g = ir_graph_new("qmatmul_act", 0);
  const int64_t one = 1;
  ir_value *xv = ir_value_new(g, "x", (dtype)q->xdt), *wv = ir_value_new(g, "w", (dtype)q->wdt);
  ir_value *zv = ir_value_new(g, "zp", (dtype)q->xdt), *sv = ir_value_new(g, "s", DT_FLOAT32);
  ir_value_set_shape(xv, q->xr, q->xd);
  ir_value_set_shape(wv, q->wr, q->wd);
  ir_value_set_shape(zv, 1, &one);
  ir_value_set_shape(sv, 1, &one);
  ir_value *in[4] = {xv, wv, zv, sv};
  ir_value *yv = ir_value_new(g, "y", DT_FLOAT32);
  ir_node *nd = ir_node_new(g, IR_OP_QMATMUL, "qm", q->ydt == DT_INT32 ? 3 : 4, in, 1, &yv);
  int64_t p[4];
  for (int d = 0; d < q->xr && has_perm(q->pa, q->xr); d++)
    p[d] = q->pa[d];
  if (has_perm(q->pa, q->xr)) ir_attr_set_ints(g, nd, "permA", q->xr, p);
  for (int d = 0; d < q->wr && has_perm(q->pb, q->wr); d++)
    p[d] = q->pb[d];
  if (has_perm(q->pb, q->wr)) ir_attr_set_ints(g, nd, "permB", q->wr, p);
  ir_attr_set_int(g, nd, "w_zp", q->wz);
  if (q->ydt == DT_UINT8 || q->ydt == DT_INT8) {
    ir_attr_set_int(g, nd, "to", q->ydt);
    ir_attr_set_int(g, nd, "y_zp", q->yz);
  }
  const void *ins[4] = {x, w, zp, s};
  void *outs[1] = {0}, *out = NULL;
  if (!er_eval(g, nd, ins, outs, a)) {
    *yr = yv->rank;
    memcpy(yd, yv->dims, sizeof(int64_t) * (size_t)yv->rank);
    if (yv->dtype != (dtype)q->ydt) test_note("y dtype %d, expected %d", yv->dtype, q->ydt);
    out = outs[0];
  }
  ir_graph_free(g);
  return out;
}

/* The task's tensors and params for the case (y of dims yd[yr]). */
static void setup(kcase *c, const acase *q, int yr, const int64_t *yd, uint32_t block_dim) {
  const int64_t one = 1;
  kc_setup(c, OM_TASK_QMATMUL, block_dim, OM_QMATMUL_NTENSORS);
  kc_set(c, X, q->xdt, q->xr, q->xd);
  kc_set(c, W, q->wdt, q->wr, q->wd);
  c->task.tensors[CS] = OM_NONE;
  kc_set(c, ZP, q->xdt, 1, &one);
  if (q->ydt != DT_INT32) kc_set(c, S, DT_FLOAT32, 1, &one);
  c->task.tensors[S] = q->ydt != DT_INT32 ? (uint32_t)S : OM_NONE;
  c->task.tensors[B] = OM_NONE;
  kc_set(c, Y, q->ydt, yr, yd);
  int32_t *p = c->task.params;
  p[OM_QMATMUL_P_TILE_M] = q->tm, p[OM_QMATMUL_P_TILE_N] = q->tn, p[OM_QMATMUL_P_W_ZP] = q->wz;
  if (q->ydt == DT_UINT8 || q->ydt == DT_INT8) {
    p[OM_QMATMUL_P_Y_ZP] = q->yz;
    p[OM_QMATMUL_P_LO] = q->ydt == DT_UINT8 ? 0 : -128, p[OM_QMATMUL_P_HI] = q->ydt == DT_UINT8 ? 255 : 127;
  }
  if (has_perm(q->pa, q->xr)) p[OM_QMATMUL_P_PERM_A] = mm_perm_encode(q->xr, q->pa);
  if (has_perm(q->pb, q->wr)) p[OM_QMATMUL_P_PERM_B] = mm_perm_encode(q->wr, q->pb);
}

/* The tiles of the case's task (om_tasks_cube.h). */
static uint32_t tiles(const acase *q, int yr, const int64_t *yd) {
  const int64_t m = yd[yr - 2], c1 = (yd[yr - 1] + 15) / 16, batch = elements(yr, yd) / (m * yd[yr - 1]);
  return (uint32_t)(batch * ((c1 + q->tn - 1) / q->tn) * ((m + q->tm - 1) / q->tm));
}

static void run_case(const acase *q) {
  arena a;
  arena_init(&a, 0);
  const int64_t nx = elements(q->xr, q->xd), nw = elements(q->wr, q->wd);
  uint8_t *x = malloc((size_t)nx), *w = malloc((size_t)nw), zb = (uint8_t)q->xz;
  for (int64_t i = 0; i < nx; i++)
    x[i] = (uint8_t)next();
  for (int64_t i = 0; i < nw; i++)
    w[i] = (uint8_t)next();
  const float s = q->ydt == DT_FLOAT32 ? 0.0123f * 0.0371f : 0.0123f * 0.0371f / 0.35f;
  int yr = 0;
  int64_t yd[MAX_RANK];
  const void *want = reference(q, x, w, &zb, &s, &yr, yd, &a);
  CHECK(want != NULL);
  kcase c;
  const uint32_t t = want ? tiles(q, yr, yd) : 1;
  if (want) setup(&c, q, yr, yd, t < 3 ? t : 3);
  omrt_status st = want ? kc_check(&c) : OMRT_ERR_FORMAT;
  CHECK_EQ_INT(st, OMRT_OK);
  if (want && st != OMRT_OK) test_note("  %s", omrt_last_error());
  if (want && st == OMRT_OK) {
    memcpy(c.data[X], x, (size_t)nx);
    memcpy(c.data[W], w, (size_t)nw);
    *(uint8_t *)c.data[ZP] = zb;
    if (q->ydt != DT_INT32) memcpy(c.data[S], &s, 4);
    kc_run_blocks(&c, kc_core());
    const size_t es = q->ydt == DT_UINT8 || q->ydt == DT_INT8 ? 1 : 4, n = (size_t)c.t[Y].bytes / es;
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
      if (memcmp((const uint8_t *)c.data[Y] + i * es, (const uint8_t *)want + i * es, es) && !bad++)
        first = i;
    CHECK(bad == 0);
    if (bad)
      test_note("  x %s %s w %s %s y dtype %d, zps %d %d %d: %zu of %zu differ, first at %zu (%s)",
                dtype_name((dtype)q->xdt), ir_dims_str(q->xr, q->xd), dtype_name((dtype)q->wdt),
                ir_dims_str(q->wr, q->wd), q->ydt, q->xz, q->wz, q->yz, bad, n, first, rt_cpu()->name);
  }
  if (want) kc_free(&c);
  free(x), free(w);
  arena_free(&a);
}

static void test_rejects(void) {
  const acase q = {3, 3, {2, 5, 12}, {2, 12, 20}, {0}, {0}, DT_UINT8, DT_UINT8, DT_UINT8, 3, 130, 7, 4, 1};
  const int64_t yd[3] = {2, 5, 20}, one = 1, three = 3, k13[3] = {2, 13, 20};
  kcase c;
  setup(&c, &q, 3, yd, 4);
  CHECK_EQ_INT(kc_check(&c), OMRT_OK);
  c.task.block_dim = 9; /* 2 batches x 2 column tiles x 2 row tiles */
  expect_reject(&c, "more blocks than tiles", "block_dim");
  setup(&c, &q, 3, yd, 4);
  c.task.params[OM_QMATMUL_P_W_ZP] = 256;
  expect_reject(&c, "w_zp past u8", "w_zp");
  setup(&c, &q, 3, yd, 4);
  c.task.params[OM_QMATMUL_P_LO] = 10, c.task.params[OM_QMATMUL_P_HI] = 9;
  expect_reject(&c, "lo > hi", "lo 10");
  setup(&c, &q, 3, yd, 4);
  c.task.params[OM_QMATMUL_P_PERM_B] = 0x11;
  expect_reject(&c, "no permutation", "perm_b");
  setup(&c, &q, 3, yd, 4);
  kc_set(&c, W, DT_UINT8, 3, k13);
  expect_reject(&c, "K differs", "K 12");
  setup(&c, &q, 3, yd, 4);
  kc_set(&c, B, DT_FLOAT32, 1, &one);
  expect_reject(&c, "a bias", "bias");
  setup(&c, &q, 3, yd, 4);
  kc_set(&c, S, DT_FLOAT32, 1, &three);
  expect_reject(&c, "scale of 3", "scale");
  setup(&c, &q, 3, yd, 4);
  kc_set(&c, ZP, DT_INT8, 1, &one);
  expect_reject(&c, "x_zp of another dtype", "x_zp");
  setup(&c, &q, 3, yd, 4);
  c.task.params[OM_QMATMUL_P_TILE_N] = 5000; /* 5000 x 16 columns x 16 bytes: past L1 */
  c.task.block_dim = 1;
  expect_reject(&c, "w's packing past L1", "L1");
  kc_free(&c);
}

int main(void) {
  const acase cases[] = {
      /* attention's Q x K^T: K read through a permutation (a transposed w), f32 y */
      {4,
       4,
       {1, 4, 10, 8},
       {1, 10, 4, 8},
       {0},
       {0, 2, 3, 1},
       DT_UINT8,
       DT_UINT8,
       DT_FLOAT32,
       128,
       131,
       0,
       4,
       1},
      /* P x V: K = 13 (rows copied), N = 21, a requantized u8 y */
      {4, 4, {2, 3, 9, 13}, {2, 3, 13, 21}, {0}, {0}, DT_UINT8, DT_UINT8, DT_UINT8, 0, 255, 37, 4, 1},
      /* a 2-D w broadcast over x's batch, i8 operands, the i32 sums */
      {3, 2, {3, 5, 12}, {12, 17}, {0}, {0}, DT_INT8, DT_INT8, DT_INT32, -5, 3, 0, 2, 1},
      /* batch dims broadcasting both ways, an i8 y */
      {4, 4, {2, 1, 6, 20}, {1, 4, 20, 33}, {0}, {0}, DT_UINT8, DT_INT8, DT_INT8, 200, -128, -3, 4, 2},
      /* x's rows strided (heads of [1, S, H, D]): read in place, u8 y */
      {4, 4, {1, 7, 3, 16}, {1, 3, 16, 40}, {0, 2, 1, 3}, {0}, DT_UINT8, DT_INT8, DT_UINT8, 17, 0, 128, 3, 2},
      /* x not contiguous along K (copied), w transposed */
      {2, 2, {16, 7}, {18, 16}, {1, 0}, {1, 0}, DT_INT8, DT_UINT8, DT_FLOAT32, 127, 1, 0, 4, 1},
      /* w's rows contiguous along K (a transposed w) with K = 13: packed 4 bytes of K at a time, then
         a tail; i8 w at its extremes' zero point */
      {4,
       4,
       {1, 2, 5, 13},
       {1, 2, 19, 13},
       {0},
       {0, 1, 3, 2},
       DT_UINT8,
       DT_INT8,
       DT_INT32,
       255,
       -128,
       0,
       2,
       1},
      /* long odd K, several column and row tiles */
      {2, 2, {37, 301}, {301, 50}, {0}, {0}, DT_UINT8, DT_UINT8, DT_UINT8, 250, 5, 255, 5, 2},
      /* BERT's head shapes: [1, 12, 32, 64] x K^T */
      {4,
       4,
       {1, 12, 32, 64},
       {1, 32, 12, 64},
       {0},
       {0, 2, 3, 1},
       DT_UINT8,
       DT_UINT8,
       DT_UINT8,
       60,
       140,
       9,
       96,
       8},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    run_case(&cases[i]);
  test_rejects();
  test_note("paths: %s", rt_cpu()->name);
  return test_summary("test_qmatmul_act");
}
