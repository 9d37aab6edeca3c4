/* test_recurrence.c - RECURRENCE (runtime/kernels_recurrence.c) against
 * the reference evaluator's Recurrence (ir/eval_fused.c, tests/unit/
 * evalref.h): LSTM, GRU (linear_before_reset 0 and 1) and RNN cells,
 * forward and reverse, with and without the recurrent bias and initial
 * states, f32 and f16, batch rows split over several blocks, and hidden
 * sizes that leave every tail of rt_gemv's column panels (H = 5, 33, 40,
 * 64, 100). y, y_h and y_c are compared; f16 within the rounding of h that
 * the kernel and the reference may resolve differently over the steps.
 * Then the load-time checks' rules. ctest runs this file on every kernel
 * path (AVX-512, AVX2 with OMRT_AVX512=0, portable with OMRT_PORTABLE=1).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fp16.h"
#include "evalref.h"
#include "kcase.h"
#include "runtime/kernels.h"
#include "support.h"

static uint32_t rng = 4242;
static float frand(void) { /* uniform [-1, 1) */
  rng = rng * 1664525u + 1013904223u;
  return (float)((rng >> 8) & 0xffffff) / 8388608.0f - 1.0f;
}

/* n values in [-scale, scale), representable in dtype dt. */
static float *gen(size_t n, int dt, float scale) {
  float *v = malloc(n * sizeof *v);
  for (size_t i = 0; i < n; i++) {
    v[i] = frand() * scale;
    if (dt == DT_FLOAT16) v[i] = half_to_float(float_to_half(v[i]));
  }
  return v;
}

static void *as_dtype(const float *v, size_t n, int dt) {
  void *b = malloc(n * dtype_size(dt));
  for (size_t i = 0; i < n; i++)
    rt_put(b, dt, i, v[i]);
  return b;
}

/* |got - ref| <= tol everywhere (the states are bounded by 1 in size,
 * the LSTM's c by T). */
static void compare(const char *what, const kcase *c, int s, const float *ref, size_t n, double tol) {
  size_t bad = 0, first = 0;
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double err = fabs((double)rt_get(c->data[s], (int)c->t[s].dtype, i) - ref[i]);
    if (!(err <= tol)) {
      if (!bad++) first = i;
      if (!(err <= worst)) worst = err;
    }
  }
  test_check(bad == 0, __FILE__, __LINE__, what);
  if (bad)
    test_note("  %s: %zu of %zu off (first at %zu: got %g, want %g; worst %g)", what, bad, n, first,
              (double)rt_get(c->data[s], (int)c->t[s].dtype, first), (double)ref[first], worst);
}

typedef struct rec_case {
  int cell, lbr, rev, T, B, H, dt, has_rb, has_h0, has_c0, bd;
} rec_case;

static void rec_run(const rec_case *k, const char *what) {
  const int G = k->cell == OM_RECURRENCE_LSTM ? 4 : k->cell == OM_RECURRENCE_GRU ? 3 : 1, dt = k->dt;
  const int64_t T = k->T, B = k->B, H = k->H, GH = G * H;
  const int64_t xd[3] = {T, B, GH}, rd[2] = {H, GH}, bd[1] = {GH}, sd[2] = {B, H}, yd[3] = {T, B, H};
  const size_t nx = (size_t)(T * B * GH), nr = (size_t)(H * GH), ns = (size_t)(B * H);
  float *xw = gen(nx, dt, 2.0f), *rt = gen(nr, dt, 1.5f / sqrtf((float)H) * 2),
        *rb = gen((size_t)GH, dt, 0.5f), *h0 = gen(ns, dt, 0.9f), *c0 = gen(ns, dt, 1.5f);
  kcase c;
  kc_setup(&c, OM_TASK_RECURRENCE, (uint32_t)k->bd, OM_RECURRENCE_NTENSORS);
  kc_set(&c, OM_RECURRENCE_T_XW, dt, 3, xd);
  kc_set(&c, OM_RECURRENCE_T_RT, dt, 2, rd);
  const int lstm = k->cell == OM_RECURRENCE_LSTM;
  if (k->has_rb) kc_set(&c, OM_RECURRENCE_T_RB, dt, 1, bd);
  if (k->has_h0) kc_set(&c, OM_RECURRENCE_T_H0, dt, 2, sd);
  if (k->has_c0 && lstm) kc_set(&c, OM_RECURRENCE_T_C0, dt, 2, sd);
  kc_set(&c, OM_RECURRENCE_T_Y, dt, 3, yd);
  kc_set(&c, OM_RECURRENCE_T_Y_H, dt, 2, sd);
  if (lstm) kc_set(&c, OM_RECURRENCE_T_Y_C, dt, 2, sd);
  for (int s = 0; s < OM_RECURRENCE_NTENSORS; s++)
    if (!c.data[s]) c.task.tensors[s] = OM_NONE;
  c.task.params[OM_RECURRENCE_P_CELL] = k->cell, c.task.params[OM_RECURRENCE_P_REVERSE] = k->rev;
  c.task.params[OM_RECURRENCE_P_LINEAR_BEFORE_RESET] = k->lbr;
  const float *src[5] = {xw, rt, rb, h0, c0};
  const size_t counts[5] = {nx, nr, (size_t)GH, ns, ns};
  for (int s = 0; s < 5; s++)
    for (size_t i = 0; c.data[s] && i < counts[s]; i++)
      rt_put(c.data[s], dt, i, src[s][i]);
  omrt_status st = kc_check(&c);
  CHECK_EQ_INT(st, OMRT_OK);
  if (st != OMRT_OK) {
    test_note("  %s: %s", what, omrt_last_error());
  } else {
    kc_run_blocks(&c, kc_core());
  }
  er e;
  er_new(&e, IR_OP_RECURRENCE, lstm ? 3 : 2);
  void *bufs[5];
  const int64_t *dims[5] = {xd, rd, bd, sd, sd};
  const int ranks[5] = {3, 2, 1, 2, 2}, present[5] = {1, 1, k->has_rb, k->has_h0, k->has_c0 && lstm};
  for (int s = 0; s < (lstm ? 5 : 4); s++) {
    bufs[s] = present[s] ? as_dtype(src[s], counts[s], dt) : NULL;
    er_in(&e, dt, ranks[s], dims[s], bufs[s]);
    free(bufs[s]);
  }
  ir_attr_set_int(e.g, e.n, "cell", k->cell);
  ir_attr_set_int(e.g, e.n, "reverse", k->rev);
  ir_attr_set_int(e.g, e.n, "linear_before_reset", k->lbr);
  const double tol = dt == DT_FLOAT16 ? 1e-2 : 2e-5 * (lstm ? T : 1);
  char w[120];
  for (int o = 0; o < (lstm ? 3 : 2); o++) {
    float *ref = er_run(&e, o);
    CHECK(ref != NULL);
    snprintf(w, sizeof w, "%s %s", what, o == 0 ? "y" : o == 1 ? "y_h" : "y_c");
    if (ref) compare(w, &c, OM_RECURRENCE_T_Y + o, ref, o == 0 ? (size_t)(T * B * H) : ns, tol);
    free(ref);
  }
  er_free(&e);
  kc_free(&c);
  free(xw), free(rt), free(rb), free(h0), free(c0);
}

static void test_cells(void) {
  const int F32 = DT_FLOAT32, F16 = DT_FLOAT16, L = OM_RECURRENCE_LSTM, G = OM_RECURRENCE_GRU,
            R = OM_RECURRENCE_RNN;
  /* clang-format off */
  const rec_case cases[] = {
      /* cell lbr rev  T   B  H    dt   rb h0 c0 bd */
      {L,    0,  0,   7,  1, 64,  F32, 1, 1, 1, 1},
      {L,    0,  1,   9,  3, 33,  F32, 0, 0, 0, 2},
      {L,    0,  0,  20,  2, 100, F16, 1, 1, 1, 2},
      {L,    0,  1,   4,  1, 5,   F16, 1, 0, 1, 1},
      {G,    0,  0,   8,  2, 40,  F32, 1, 1, 0, 2},
      {G,    1,  1,   8,  2, 40,  F32, 1, 1, 0, 1},
      {G,    1,  0,  12,  3, 64,  F16, 1, 0, 0, 3},
      {G,    0,  1,   5,  1, 33,  F16, 0, 1, 0, 1},
      {R,    0,  0,  10,  2, 64,  F32, 1, 1, 0, 2},
      {R,    0,  1,   6,  1, 5,   F16, 0, 0, 0, 1},
  };
  /* clang-format on */
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char what[64];
    snprintf(what, sizeof what, "recurrence case %zu", i);
    rec_run(&cases[i], what);
  }
}

static void test_check_rules(void) {
  const int64_t xd[3] = {4, 3, 32}, rd[2] = {8, 32}, bd[1] = {32}, sd[2] = {3, 8}, yd[3] = {4, 3, 8},
                bad[2] = {3, 7};
  kcase c;
  kc_setup(&c, OM_TASK_RECURRENCE, 3, OM_RECURRENCE_NTENSORS);
  kc_set(&c, OM_RECURRENCE_T_XW, DT_FLOAT16, 3, xd);
  kc_set(&c, OM_RECURRENCE_T_RT, DT_FLOAT16, 2, rd);
  kc_set(&c, OM_RECURRENCE_T_RB, DT_FLOAT16, 1, bd);
  kc_set(&c, OM_RECURRENCE_T_H0, DT_FLOAT16, 2, sd);
  kc_set(&c, OM_RECURRENCE_T_C0, DT_FLOAT16, 2, sd);
  kc_set(&c, OM_RECURRENCE_T_Y, DT_FLOAT16, 3, yd);
  kc_set(&c, OM_RECURRENCE_T_Y_H, DT_FLOAT16, 2, sd);
  kc_set(&c, OM_RECURRENCE_T_Y_C, DT_FLOAT16, 2, sd);
  CHECK_EQ_INT(kc_check(&c), OMRT_OK);
  c.task.block_dim = 4;
  expect_reject(&c, "recurrence block_dim above the batch rows", "block_dim");
  c.task.block_dim = 3, c.task.params[OM_RECURRENCE_P_CELL] = 3;
  expect_reject(&c, "recurrence cell out of range", "cell");
  c.task.params[OM_RECURRENCE_P_CELL] = OM_RECURRENCE_GRU;
  expect_reject(&c, "recurrence GRU with an LSTM's 4 gate blocks", "xw");
  c.task.params[OM_RECURRENCE_P_CELL] = OM_RECURRENCE_LSTM,
  c.task.params[OM_RECURRENCE_P_LINEAR_BEFORE_RESET] = 1;
  expect_reject(&c, "recurrence linear_before_reset on an LSTM", "linear_before_reset");
  c.task.params[OM_RECURRENCE_P_LINEAR_BEFORE_RESET] = 0, c.task.params[OM_RECURRENCE_P_REVERSE] = 2;
  expect_reject(&c, "recurrence reverse not 0/1", "reverse");
  c.task.params[OM_RECURRENCE_P_REVERSE] = 0;
  kc_set(&c, OM_RECURRENCE_T_H0, DT_FLOAT16, 2, bad);
  expect_reject(&c, "recurrence h0 of the wrong width", "h0");
  kc_set(&c, OM_RECURRENCE_T_H0, DT_FLOAT32, 2, sd);
  expect_reject(&c, "recurrence h0 of another dtype", "dtype");
  kc_set(&c, OM_RECURRENCE_T_H0, DT_FLOAT16, 2, sd);
  c.task.tensors[OM_RECURRENCE_T_Y_C] = OM_NONE;
  expect_reject(&c, "recurrence LSTM without y_c", "y_c");
  kc_free(&c);
}

int main(void) {
  test_note("kernel paths: %s", rt_cpu()->name);
  test_cells();
  test_check_rules();
  return test_summary("recurrence");
}
