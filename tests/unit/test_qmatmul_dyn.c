/* test_qmatmul_dyn.c - QMATMUL, the int8 matrix product of a dynamically
 * quantized model (a run-time x zero point, the float epilogue), against
 * the reference evaluator's QMatMul (ir/eval_quant.c: exact int64 sums,
 * then the f32 steps): random u8 x (the whole range) and i8 weights, K not
 * a multiple of 32 and N not of 16, per-tensor and per-column scales, zero
 * points 0, 255 and between, a bias and none, and the i32 output (no
 * epilogue). Each case runs the task as libomrt runs it (all its blocks;
 * the ctest variants force OMRT_PORTABLE=1 and OMRT_AVX512=0) and then
 * every tile function this CPU can run (portable C, AVX2, AVX-512 VNNI),
 * and the output bytes must be the evaluator's, bit for bit. Also the
 * load-time check's refusals, each naming the field.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evalref.h"
#include "ir/eval.h"
#include "ir/shape.h"
#include "kcase.h"
#include "lower/qconv_weights.h"
#include "runtime/kernels_qconv.h"

static uint32_t rng = 2024;
static uint32_t next(void) {
  rng = rng * 1664525u + 1013904223u;
  return rng >> 8;
}

typedef struct dcase {
  int64_t m, k, n;
  int per_col, zp, bias, f32; /* f32 0: the i32 sums (no scale, no bias) */
} dcase;

enum {
  X = OM_QMATMUL_T_X,
  W = OM_QMATMUL_T_W,
  CS = OM_QMATMUL_T_COLSUM,
  ZP = OM_QMATMUL_T_X_ZP,
  S = OM_QMATMUL_T_SCALE,
  B = OM_QMATMUL_T_BIAS,
  Y = OM_QMATMUL_T_Y
};

/* The evaluator's QMatMul output for the case ([M, N]), or NULL. */
static void *reference(const dcase *q, const uint8_t *x, const int8_t *w, uint8_t zp, const float *s,
                       const float *b, arena *a) {
  ir_graph *g = ir_graph_new("qmatmul", 0);
  const int64_t xd[2] = {q->m, q->k}, wd[2] = {q->k, q->n}, sn = q->per_col ? q->n : 1;
  ir_value *xv = ir_value_new(g, "x", DT_UINT8), *zv = ir_value_new(g, "zp", DT_UINT8);
  ir_value *sv = ir_value_new(g, "s", DT_FLOAT32);
  ir_value_set_shape(xv, 2, xd);
  ir_value_set_shape(zv, 0, xd);
  ir_value_set_shape(sv, 1, &sn);
  ir_value *in[5] = {xv, ir_const_new(g, "w", DT_INT8, 2, wd, w, (size_t)(q->k * q->n)), zv, sv,
                     q->bias ? ir_const_new(g, "b", DT_FLOAT32, 1, &q->n, b, 4 * (size_t)q->n) : NULL};
  ir_value *yv = ir_value_new(g, "y", DT_FLOAT32);
  ir_node *nd = ir_node_new(g, IR_OP_QMATMUL, "qm", q->f32 ? (q->bias ? 5 : 4) : 3, in, 1, &yv);
  const void *ins[5] = {x, w, &zp, s, b};
  void *outs[1] = {0};
  if (er_eval(g, nd, ins, outs, a)) outs[0] = NULL;
  ir_graph_free(g);
  return outs[0];
}

/* The task's tensors for the case (x, zp, scale and bias filled by the caller). */
static void setup(kcase *c, const dcase *q, uint32_t block_dim, int32_t tm, int32_t tn) {
  qconvw_geom gm;
  qconvw_init(q->n, q->k, 1, 1, 1, &gm);
  int64_t pd[4];
  qconvw_dims(&gm, pd);
  const int64_t xd[2] = {q->m, q->k}, yd[2] = {q->m, q->n}, c16 = gm.c1out * 16, one = 1,
                sn = q->per_col ? q->n : 1;
  kc_setup(c, OM_TASK_QMATMUL, block_dim, OM_QMATMUL_NTENSORS);
  kc_set(c, X, DT_UINT8, 2, xd);
  kc_set(c, W, DT_INT8, 4, pd);
  kc_set(c, CS, DT_INT32, 1, &c16);
  kc_set(c, ZP, DT_UINT8, 1, &one);
  if (q->f32) kc_set(c, S, DT_FLOAT32, 1, &sn);
  if (q->bias) kc_set(c, B, DT_FLOAT32, 1, &c16);
  c->task.tensors[S] = q->f32 ? (uint32_t)S : OM_NONE;
  c->task.tensors[B] = q->bias ? (uint32_t)B : OM_NONE;
  kc_set(c, Y, q->f32 ? DT_FLOAT32 : DT_INT32, 2, yd);
  c->task.params[OM_QMATMUL_P_TILE_M] = tm, c->task.params[OM_QMATMUL_P_TILE_N] = tn;
}

typedef struct path {
  const char *name;
  rt_qconv_tile_fn fn; /* NULL: the task through rt_kernels */
} path;

static void run_case(const dcase *q) {
  arena a;
  arena_init(&a, 0);
  const int64_t nx = q->m * q->k, nw = q->k * q->n;
  uint8_t *x = malloc((size_t)nx);
  int8_t *w = malloc((size_t)nw), *wt = malloc((size_t)nw);
  float *s = malloc(4 * (size_t)q->n), *b = malloc(4 * (size_t)q->n);
  for (int64_t i = 0; i < nx; i++)
    x[i] = (uint8_t)next();
  for (int64_t i = 0; i < nw; i++)
    w[i] = (int8_t)next();
  const float xs = 1.0f / (float)(3 + next() % 200); /* x_scale * w_scale: not exact products */
  for (int64_t i = 0; i < q->n; i++) {
    s[i] = xs * (1.0f / (float)(50 + next() % 3000));
    b[i] = (float)((int32_t)(next() % 2001) - 1000) * 0.00137f;
  }
  const uint8_t zp = (uint8_t)q->zp;
  const void *want = reference(q, x, w, zp, s, b, &a);
  CHECK(want != NULL);

  qconvw_geom gm;
  qconvw_init(q->n, q->k, 1, 1, 1, &gm);
  const int32_t tm = 5, tn = 2;
  const uint32_t tiles = (uint32_t)(((q->m + tm - 1) / tm) * ((gm.c1out + tn - 1) / tn));
  kcase c;
  setup(&c, q, tiles < 3 ? tiles : 3, tm, tn);
  memcpy(c.data[X], x, (size_t)nx);
  for (int64_t i = 0; i < nw; i++) /* [K, N] -> [N, K], as layout_qmatmul */
    wt[i] = w[(i % q->k) * q->n + i / q->k];
  memset(c.data[W], 0, (size_t)qconvw_bytes(&gm));
  qconvw_pack(&gm, wt, c.data[W]);
  int32_t *cs = c.data[CS];
  memset(cs, 0, (size_t)c.t[CS].bytes);
  for (int64_t j = 0; j < q->n; j++)
    for (int64_t i = 0; i < q->k; i++)
      cs[j] += wt[j * q->k + i];
  *(uint8_t *)c.data[ZP] = zp;
  if (q->f32) memcpy(c.data[S], s, (size_t)c.t[S].bytes);
  if (q->bias) {
    memset(c.data[B], 0, (size_t)c.t[B].bytes);
    memcpy(c.data[B], b, 4 * (size_t)q->n);
  }
  omrt_status st = kc_check(&c);
  CHECK_EQ_INT(st, OMRT_OK);
  if (st != OMRT_OK) test_note("  %s", omrt_last_error());
  const size_t ybytes = (size_t)c.t[Y].bytes;
  uint8_t *got = c.data[Y];
  rt_args args;
  kc_args(&c, &args);
  path paths[4] = {{"task", NULL}, {"portable", rt_qconv_tile_c}};
  int np = 2;
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx2")) paths[np++] = (path){"avx2", rt_qconv_tile_avx2};
  if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw"))
    paths[np++] = (path){"avx512vnni", rt_qconv_tile_vnni};
#endif
  for (int k = 0; k < np && st == OMRT_OK && want; k++) {
    memset(got, 0x7f, ybytes);
    if (!paths[k].fn) {
      kc_run_blocks(&c, kc_core());
    } else {
      rt_qconv_geom g;
      rt_qmatmul_geom_init(&c.task, &args, &g);
      paths[k].fn(&g, 0, 0, q->m, 0, gm.c1out);
    }
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < ybytes / 4; i++)
      if (memcmp(got + 4 * i, (const uint8_t *)want + 4 * i, 4) && !bad++) first = i;
    CHECK(bad == 0);
    if (bad)
      test_note("  %s: M %lld K %lld N %lld per_col %d zp %d bias %d f32 %d: %zu of %zu differ, first at %zu",
                paths[k].name, (long long)q->m, (long long)q->k, (long long)q->n, q->per_col, q->zp, q->bias,
                q->f32, bad, ybytes / 4, first);
  }
  free(x), free(w), free(wt), free(s), free(b);
  kc_free(&c);
  arena_free(&a);
}

static void test_rejects(void) {
  const dcase q = {4, 32, 20, 1, 3, 1, 1};
  kcase c;
  setup(&c, &q, 1, 4, 2);
  CHECK_EQ_INT(kc_check(&c), OMRT_OK);
  c.task.params[OM_QMATMUL_P_TILE_M] = 0;
  expect_reject(&c, "tile_m 0", "tile_m");
  c.task.params[OM_QMATMUL_P_TILE_M] = 4;
  c.task.block_dim = 3; /* 1 x 2 tiles */
  expect_reject(&c, "more blocks than tiles", "block_dim");
  c.task.block_dim = 1;
  const int64_t k30[2] = {4, 30}, sn = 7, wd[4] = {2, 8, 16, 3}, c16 = 16;
  kc_set(&c, X, DT_UINT8, 2, k30);
  expect_reject(&c, "K not a multiple of 4", "K = 30");
  setup(&c, &q, 1, 4, 2);
  kc_set(&c, S, DT_FLOAT32, 1, &sn);
  expect_reject(&c, "scale of 7 elements", "scale has 7");
  setup(&c, &q, 1, 4, 2);
  kc_set(&c, W, DT_INT8, 4, wd);
  expect_reject(&c, "w's packing", "w dims");
  setup(&c, &q, 1, 4, 2);
  kc_set(&c, CS, DT_INT32, 1, &c16);
  expect_reject(&c, "colsum of one block", "colsum");
  setup(&c, &q, 1, 4, 2);
  c.task.tensors[S] = OM_NONE;
  expect_reject(&c, "f32 y without a scale", "y");
  kc_free(&c);
}

int main(void) {
  const dcase cases[] = {
      /*  M     K    N  per_col zp bias f32 */
      {7, 40, 20, 1, 255, 1, 1},   /* K not a multiple of 32, N not of 16 */
      {13, 256, 64, 0, 0, 0, 1},   /* per tensor, zp 0, no bias */
      {5, 100, 33, 1, 0, 1, 1},    /* N = 2 blocks + 1 */
      {30, 512, 48, 0, 128, 1, 1}, /* per tensor with a bias */
      {3, 20, 5, 0, 255, 0, 0},    /* the i32 sums */
      {17, 68, 40, 0, 77, 0, 0},   /* the i32 sums, tails */
      {64, 1024, 16, 1, 17, 1, 1}, /* long K */
      {1, 4, 1, 1, 200, 1, 1},     /* one row, one column */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    run_case(&cases[i]);
  test_rejects();
  test_note("paths: %s", rt_cpu()->name);
  return test_summary("test_qmatmul_dyn");
}
