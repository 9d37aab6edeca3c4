/* test_task_checks.c - the kinds' load-time checks refuse malformed tasks:
 * a valid task (kcase.h) passes the check, and each mutation of one field
 * (dims, dtype, layout, tile sizes past the SoC's buffers, block_dim, pads,
 * strides, algorithm, missing slots) is rejected with OMRT_ERR_FORMAT and a
 * message naming the field. CONV2D (direct, Winograd, x_scale), POOL,
 * DWCONV, SOFTMAX, COPY_SLICE and TRANSDATA.
 */
#include <string.h>

#include "kcase.h"
#include "support.h"

/* The unmutated case (mutate 0) and a mutated one wanting "" pass the load
 * check, the other mutated ones are rejected as expect_reject says; frees c. */
static void expect_verdict(kcase *c, int mutate, const char *what, const char *want) {
  if (mutate == 0 || !*want) { /* valid */
    omrt_status s = kc_check(c);
    CHECK_EQ_INT(s, OMRT_OK);
    if (s) test_note("  %s", omrt_last_error());
  } else {
    expect_reject(c, what, want);
  }
  kc_free(c);
}

/* A valid 1x20x10x10 -> 24 conv, 3x3 pad 1; `mutate` breaks one thing. */
static void bad_conv(int mutate, const char *what, const char *want) {
  kcase c;
  kc_setup(&c, OM_TASK_CONV2D, 2, 0);
  int64_t xd[4] = {1, 20, 10, 10}, wd[4] = {24, 20, 3, 3}, bd[1] = {24}, yd[4] = {1, 24, 10, 10};
  if (mutate == 1) yd[2] = 9;
  if (mutate == 2) wd[1] = 19;
  if (mutate == 3) bd[0] = 23;
  kc_add(&c, DT_FLOAT16, LAYOUT_NC1HWC0, 4, xd);
  kc_add(&c, DT_FLOAT16, mutate == 4 ? LAYOUT_NC1HWC0 : LAYOUT_FRACTAL_Z, 4, wd);
  kc_add(&c, DT_FLOAT32, LAYOUT_ND, 1, bd);
  kc_none(&c);
  kc_add(&c, DT_FLOAT16, LAYOUT_NC1HWC0, 4, yd);
  const int32_t pv[OM_CONV_NPARAMS] = {
      CONV_WINDOW(3, 1, 1, 1), [OM_CONV_P_TILE_M] = 32, [OM_CONV_P_TILE_N] = 2, [OM_CONV_P_TILE_K] = 2};
  int32_t *q = c.task.params;
  memcpy(q, pv, sizeof pv);
  if (mutate == 5) /* L0C: 128 * 33 * 64 > 256K while L0A and L0B fit */
    q[OM_CONV_P_TILE_M] = 128, q[OM_CONV_P_TILE_N] = 33, q[OM_CONV_P_TILE_K] = 1;
  if (mutate == 6) q[OM_CONV_P_TILE_K] = 129; /* L0A: 16 rows * 129*16 * 4 bytes > 128K staged */
  if (mutate == 7) c.task.block_dim = 9;      /* tiles = 4 * 1 */
  if (mutate == 8) q[OM_CONV_P_PAD_TOP] = 3;  /* pad_top >= kh */
  if (mutate == 9) q[OM_CONV_P_TILE_M] = 24;  /* tile_m not a multiple of 16 */
  if (mutate == 10) q[OM_CONV_P_STRIDE_H] = 0;
  if (mutate == 11) c.t[OM_CONV_T_X].dtype = DT_FLOAT32, c.t[OM_CONV_T_X].bytes *= 2; /* x f32, w f16 */
  if (mutate == 12) c.task.ntensors = 4;
  if (mutate == 13) c.task.tensors[OM_CONV_T_X] = OM_NONE;
  if (mutate == 14) c.t[OM_CONV_T_Y].bytes -= 2;
  expect_verdict(&c, mutate, what, want);
}

/* A valid OM_CONV_WINO_F43_FZ 1x40x10x10 -> 24 conv, 3x3 pad 1 (9 4x4
 * tiles; tile_m 9, tile_n 1: 2 tiles; tile_k 2 of C1in 3); `mutate` breaks
 * one thing. */
static void bad_wino_fz(int mutate, const char *what, const char *want) {
  kcase c;
  kc_setup(&c, OM_TASK_CONV2D, 2, 0);
  int64_t xd[4] = {1, 40, 10, 10}, wd[4] = {24, 40, 3, 3}, bd[1] = {24}, yd[4] = {1, 24, 10, 10};
  kc_add(&c, DT_FLOAT16, LAYOUT_NC1HWC0, 4, xd);
  kc_add(&c, mutate == 1 ? DT_FLOAT32 : DT_FLOAT16, mutate == 2 ? LAYOUT_NC1HWC0 : LAYOUT_FRACTAL_Z, 4, wd);
  kc_add(&c, DT_FLOAT32, LAYOUT_ND, 1, bd);
  kc_none(&c);
  kc_add(&c, DT_FLOAT16, LAYOUT_NC1HWC0, 4, yd);
  const int32_t pv[OM_CONV_NPARAMS] = {
      CONV_WINDOW(3, 1, 1, 1), [OM_CONV_P_TILE_M] = 9, [OM_CONV_P_TILE_N] = 1, [OM_CONV_P_TILE_K] = 2,
      [OM_CONV_P_ALGORITHM] = OM_CONV_WINO_F43_FZ};
  int32_t *q = c.task.params;
  memcpy(q, pv, sizeof pv);
  if (mutate == 3) /* stride_w 2 */
    q[OM_CONV_P_STRIDE_W] = 2, c.t[OM_CONV_T_Y].dims[3] = 5, c.t[OM_CONV_T_Y].bytes /= 2;
  if (mutate == 4) q[OM_CONV_P_TILE_K] = 4; /* tile_k > C1in */
  if (mutate == 5) q[OM_CONV_P_TILE_K] = 0;
  if (mutate == 6) c.def.ub_bytes = 36 * (2 * 16 + 1) * 64 - 4; /* U for tile_k 2 does not fit */
  if (mutate == 7) q[OM_CONV_P_TILE_M] = 120;                   /* L0C: 36 * 120 * 64 > 256K */
  if (mutate == 8) c.task.block_dim = 3;
  if (mutate == 9) q[OM_CONV_P_ALGORITHM] = 1; /* the retired algorithm (om_format.h) */
  if (mutate == 10) q[OM_CONV_P_ALGORITHM] = 3;
  if (mutate == 11) /* dilation 11, pads 11: same output size, a phase of no pixel */
    for (int i = OM_CONV_P_PAD_TOP; i <= OM_CONV_P_DILATION_W; i++)
      q[i] = 11;
  if (mutate == 12) { /* dilation 2, pads 2: 2 phases of 5 rows, 2 tiles each: 16 tiles, 4 task tiles */
    for (int i = OM_CONV_P_PAD_TOP; i <= OM_CONV_P_DILATION_W; i++)
      q[i] = 2;
    c.task.block_dim = 4;
  }
  expect_verdict(&c, mutate, what, want);
}

/* A valid 1x1 conv 1x20x10x10 -> 24 with an x_scale [1, 20, 1, 1]
 * (x_scale = 1, its slot); `mutate` breaks one thing. */
static void bad_x_scale(int mutate, const char *what, const char *want) {
  kcase c;
  kc_setup(&c, OM_TASK_CONV2D, 2, 0);
  int64_t xd[4] = {1, 20, 10, 10}, wd[4] = {24, 20, 1, 1}, yd[4] = {1, 24, 10, 10}, sd[4] = {1, 20, 1, 1};
  if (mutate == 1) wd[2] = wd[3] = 3;
  if (mutate == 2) sd[2] = 2;
  kc_add(&c, DT_FLOAT16, LAYOUT_NC1HWC0, 4, xd);
  kc_add(&c, DT_FLOAT16, LAYOUT_FRACTAL_Z, 4, wd);
  kc_none(&c);
  kc_none(&c);
  kc_add(&c, DT_FLOAT16, LAYOUT_NC1HWC0, 4, yd);
  if (mutate != 5) kc_add(&c, mutate == 3 ? DT_FLOAT32 : DT_FLOAT16, LAYOUT_NC1HWC0, 4, sd);
  const int32_t pv[OM_CONV_NPARAMS] = {
      CONV_WINDOW(1, 1, 0, 1), [OM_CONV_P_TILE_M] = 32, [OM_CONV_P_TILE_N] = 2, [OM_CONV_P_TILE_K] = 2,
      [OM_CONV_P_X_SCALE] = 1};
  const int32_t p3x3[OM_CONV_NPARAMS] = {
      CONV_WINDOW(3, 1, 1, 1), [OM_CONV_P_TILE_M] = 32, [OM_CONV_P_TILE_N] = 2, [OM_CONV_P_TILE_K] = 2,
      [OM_CONV_P_X_SCALE] = 1};
  int32_t *q = c.task.params;
  memcpy(q, mutate == 1 ? p3x3 : pv, sizeof pv);
  if (mutate == 4) q[OM_CONV_P_X_SCALE] = 2;
  if (mutate == 6) q[OM_CONV_P_GROUPS] = 2;
  expect_verdict(&c, mutate, what, want);
}

static void test_checks(void) {
  bad_x_scale(0, "x_scale valid", "");
  bad_x_scale(1, "x_scale on a 3x3 conv", "1x1 kernel");
  bad_x_scale(2, "x_scale dims", "x_scale [1, 20, 2, 1]");
  bad_x_scale(3, "x_scale dtype", "in x's dtype");
  bad_x_scale(4, "x_scale flag 2", "x_scale = 2");
  bad_x_scale(5, "x_scale slot missing", "ntensors");
  bad_x_scale(6, "x_scale with groups", "groups 2");
  bad_wino_fz(0, "winograd fz valid", "");
  bad_wino_fz(1, "winograd fz w f32", "dtype");
  bad_wino_fz(2, "winograd fz w NC1HWC0", "layout");
  bad_wino_fz(3, "winograd fz stride 2", "strides 1");
  bad_wino_fz(4, "winograd fz tile_k > C1in", "tile_k");
  bad_wino_fz(5, "winograd fz tile_k 0", "tile_k");
  bad_wino_fz(6, "winograd fz UB", "UB");
  bad_wino_fz(7, "winograd fz L0C", "L0C");
  bad_wino_fz(8, "winograd fz block_dim", "tiles");
  bad_wino_fz(9, "conv algorithm 1 (retired)", "algorithm 1");
  bad_wino_fz(10, "conv algorithm 3", "algorithm 3");
  bad_wino_fz(11, "winograd fz dilation 11 on 10 pixels", "must not exceed");
  bad_wino_fz(12, "winograd fz dilation 2, block_dim of its phases' tiles", "");
  /* clang-format off */
  static const char *const conv_bad[][2] = {
      {"valid conv", ""},           {"conv y dims", "y dims[2]"},   {"conv w Cin", "w ["},
      {"conv bias size", "bias"},   {"conv w layout", "layout"},    {"conv L0C", "L0C"},
      {"conv L0A", "L0A"},          {"conv block_dim", "block_dim"}, {"conv pad >= kernel", "pads"},
      {"conv tile_m % 16", "tile"}, {"conv stride 0", "stride_h"},  {"conv x/w dtype", "dtype"},
      {"conv ntensors", "ntensors"}, {"conv x missing", "OM_NONE"}, {"conv y bytes", "bytes"}};
  /* clang-format on */
  for (int i = 0; i < (int)(sizeof conv_bad / sizeof *conv_bad); i++)
    bad_conv(i, conv_bad[i][0], conv_bad[i][1]);

  kcase c;
  int64_t xd[4] = {1, 20, 10, 10}, yd[4] = {1, 20, 4, 4};
  kc_setup(&c, OM_TASK_POOL, 1, 0); /* 3x3 s2 no pad: 4 (floor) or 5 (ceil) is fine, 4 it is */
  kc_add(&c, DT_FLOAT16, LAYOUT_NC1HWC0, 4, xd);
  yd[2] = 6;
  kc_add(&c, DT_FLOAT16, LAYOUT_NC1HWC0, 4, yd);
  const int32_t pv[OM_POOL_NPARAMS] = {POOL_WINDOW(3, 2, 0), [OM_POOL_P_MODE] = 0};
  memcpy(c.task.params, pv, sizeof pv);
  expect_reject(&c, "pool y dims", "floor");
  kc_free(&c);

  kc_setup(&c, OM_TASK_DWCONV, 1, 0); /* 7x7 f32 weights need 3136 bytes of UB */
  int64_t dx[4] = {1, 16, 9, 9}, dwd[4] = {1, 16, 7, 7}, dy[4] = {1, 16, 3, 3};
  kc_add(&c, DT_FLOAT16, LAYOUT_NC1HWC0, 4, dx);
  kc_add(&c, DT_FLOAT16, LAYOUT_NC1HWC0, 4, dwd);
  kc_none(&c);
  kc_none(&c);
  kc_add(&c, DT_FLOAT16, LAYOUT_NC1HWC0, 4, dy);
  const int32_t dp[OM_CONV_NPARAMS] = {CONV_WINDOW(7, 1, 0, 1)};
  memcpy(c.task.params, dp, sizeof dp);
  c.def.ub_bytes = 4096;
  CHECK_EQ_INT(kc_check(&c), OMRT_OK);
  c.def.ub_bytes = 3000;
  expect_reject(&c, "dwconv UB", "UB");
  kc_free(&c);

  int64_t e1[2] = {3, 4};
  kc_setup(&c, OM_TASK_SOFTMAX, 1, 0);
  kc_add(&c, DT_FLOAT32, LAYOUT_ND, 2, e1);
  kc_add(&c, DT_FLOAT32, LAYOUT_ND, 2, e1);
  c.task.params[OM_SOFTMAX_P_AXIS] = 2;
  expect_reject(&c, "softmax axis", "axis");
  kc_free(&c);

  kc_setup(&c, OM_TASK_COPY_SLICE, 1, 0);
  int64_t s1[2] = {3, 4}, s2[2] = {3, 6};
  kc_add(&c, DT_FLOAT32, LAYOUT_ND, 2, s1);
  kc_add(&c, DT_FLOAT32, LAYOUT_ND, 2, s2);
  c.task.params[OM_COPY_SLICE_P_AXIS] = 1, c.task.params[OM_COPY_SLICE_P_OFFSET] = 3;
  expect_reject(&c, "copy_slice offset", "offset");
  kc_free(&c);

  kc_setup(&c, OM_TASK_TRANSDATA, 1, 0);
  int64_t t1[4] = {1, 3, 4, 5}, t2[4] = {1, 3, 5, 4};
  kc_add(&c, DT_FLOAT32, LAYOUT_ND, 4, t1);
  kc_add(&c, DT_FLOAT16, LAYOUT_NC1HWC0, 4, t2);
  expect_reject(&c, "transdata dims", "dims[2]");
  kc_free(&c);

  kc_setup(&c, OM_TASK_TRANSDATA, 1, 0);
  kc_add(&c, DT_INT32, LAYOUT_ND, 4, t1);
  kc_add(&c, DT_FLOAT16, LAYOUT_NC1HWC0, 4, t1);
  expect_reject(&c, "transdata dtype", "dtype");
  kc_free(&c);
}

int main(void) {
  test_checks();
  return test_summary("task checks");
}
