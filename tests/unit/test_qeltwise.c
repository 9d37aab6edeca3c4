/* test_qeltwise.c - QELTWISE, the int8 elementwise op, against the
 * reference evaluator's QEltwise (ir/eval_quant.c): random u8/i8 a and b,
 * Add and Mul, NC1HWC0 (odd channel counts: padding lanes) and ND (a tail
 * past the last 16-byte run), zero points across the dtypes' ranges, a
 * folded Relu clamp, scales that make exact halves (ties for the
 * half-to-even rounding) and scales so large that the sum is infinite or
 * NaN (q_quantize's clamps). Each case runs the task as libomrt runs it
 * (all its blocks, the run rt_cpu() picks: the ctest variants force
 * OMRT_PORTABLE=1 and OMRT_AVX512=0) and then every run function this CPU
 * can call directly (portable C, AVX2, AVX-512F), and compares the bytes
 * with the evaluator's: identical, the task's padding lanes 0. Also the
 * load-time check's refusals, each naming its field.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/quant.h"
#include "evalref.h"
#include "ir/eval.h"
#include "ir/shape.h"
#include "kcase.h"
#include "runtime/kernels_qeltwise.h"

static uint32_t rng = 4242;
static uint32_t next(void) {
  rng = rng * 1664525u + 1013904223u;
  return rng >> 8;
}

enum { A = OM_QELTWISE_T_A, B = OM_QELTWISE_T_B, Y = OM_QELTWISE_T_Y };
enum { SC_RANDOM, SC_HALVES, SC_HUGE };

typedef struct ecase {
  int rank; /* 4: NC1HWC0; else ND */
  int64_t dims[4];
  int adt, bdt, ydt, mul, relu, scales;
} ecase;

static int64_t elements(const ecase *e) {
  int64_t n = 1;
  for (int i = 0; i < e->rank; i++)
    n *= e->dims[i];
  return n;
}

/* The evaluator's output for the case (C order bytes), or NULL. */
static uint8_t *reference(const ecase *e, const uint8_t *a, const uint8_t *b, const rt_qelt *q, int32_t azp,
                          int32_t bzp, arena *ar) {
  ir_graph *g = ir_graph_new("qeltwise", 0);
  ir_value *in[2] = {ir_value_new(g, "a", e->adt), ir_value_new(g, "b", e->bdt)};
  ir_value_set_shape(in[0], e->rank, e->dims);
  ir_value_set_shape(in[1], e->rank, e->dims);
  ir_value *yv = ir_value_new(g, "y", e->ydt);
  ir_node *nd = ir_node_new(g, IR_OP_QELTWISE, "qe", 2, in, 1, &yv);
  ir_attr_set_string(g, nd, "op", e->mul ? "mul" : "add");
  ir_attr_set_int(g, nd, "a_zp", azp);
  ir_attr_set_int(g, nd, "b_zp", bzp);
  ir_attr_set_int(g, nd, "y_zp", q->yzp);
  ir_attr_set_float(g, nd, "a_scale", q->as);
  ir_attr_set_float(g, nd, "b_scale", q->bs);
  ir_attr_set_float(g, nd, "y_scale", q->ys);
  ir_attr_set_int(g, nd, "lo", q->lo);
  ir_attr_set_int(g, nd, "hi", q->hi);
  ir_attr_set_int(g, nd, "to", e->ydt);
  const void *ins[2] = {a, b};
  void *outs[1] = {0};
  if (er_eval(g, nd, ins, outs, ar)) outs[0] = NULL;
  ir_graph_free(g);
  return outs[0];
}

/* C order bytes of [N, C, H, W] -> NC1HWC0 (padding lanes `fill`). */
static void to_5hd(uint8_t *dst, const uint8_t *src, const int64_t *d, uint8_t fill) {
  const int64_t c1 = (d[1] + 15) / 16, hw = d[2] * d[3];
  memset(dst, fill, (size_t)(d[0] * c1 * hw * 16));
  for (int64_t i = 0; i < d[0]; i++)
    for (int64_t ch = 0; ch < d[1]; ch++)
      for (int64_t p = 0; p < hw; p++)
        dst[((i * c1 + ch / 16) * hw + p) * 16 + ch % 16] = src[(i * d[1] + ch) * hw + p];
}

static void run_case(const ecase *e) {
  arena ar;
  arena_init(&ar, 0);
  const int64_t n = elements(e);
  uint8_t *a = malloc((size_t)n), *b = malloc((size_t)n);
  for (int64_t i = 0; i < n; i++)
    a[i] = (uint8_t)next(), b[i] = (uint8_t)next();
  int32_t alo, ahi, blo, bhi, ylo, yhi;
  q_range(e->adt, &alo, &ahi), q_range(e->bdt, &blo, &bhi), q_range(e->ydt, &ylo, &yhi);
  const int32_t azp = alo + (int32_t)(next() % 256), bzp = blo + (int32_t)(next() % 256);
  rt_qelt q = {.yzp = ylo + (int32_t)(next() % 256), .mul = e->mul};
  q.lo = e->relu ? q.yzp : ylo, q.hi = yhi;
  if (e->scales == SC_HALVES)
    q.as = e->mul ? 0.5f : 0.25f, q.bs = e->mul ? 1.0f : 0.25f, q.ys = e->mul ? 1.0f : 0.5f;
  else if (e->scales == SC_HUGE)
    q.as = 3e38f, q.bs = 2e38f, q.ys = 0.75f;
  else
    q.as = 1.0f / (float)(20 + next() % 500), q.bs = 1.0f / (float)(20 + next() % 500),
    q.ys = 1.0f / (float)(10 + next() % 300);
  const uint8_t *want = reference(e, a, b, &q, azp, bzp, &ar);
  CHECK(want != NULL);

  const int five = e->rank == 4, lay = five ? LAYOUT_NC1HWC0 : LAYOUT_ND;
  kcase c;
  kc_setup(&c, OM_TASK_QELTWISE, 3, OM_QELTWISE_NTENSORS);
  kc_set_layout(&c, A, e->adt, lay, e->rank, e->dims);
  kc_set_layout(&c, B, e->bdt, lay, e->rank, e->dims);
  kc_set_layout(&c, Y, e->ydt, lay, e->rank, e->dims);
  const size_t bytes = (size_t)c.t[Y].bytes;
  uint8_t *want_y = malloc(bytes), *got = c.data[Y];
  if (five) {
    to_5hd(c.data[A], a, e->dims, 0x5a), to_5hd(c.data[B], b, e->dims, 0xa5); /* padding lanes: anything */
    to_5hd(want_y, want ? want : a, e->dims, 0);
  } else {
    memcpy(c.data[A], a, (size_t)n), memcpy(c.data[B], b, (size_t)n),
        memcpy(want_y, want ? want : a, (size_t)n);
  }
  int32_t *p = c.task.params;
  p[OM_QELTWISE_P_OP] = e->mul, p[OM_QELTWISE_P_A_ZP] = azp, p[OM_QELTWISE_P_B_ZP] = bzp;
  p[OM_QELTWISE_P_Y_ZP] = q.yzp, p[OM_QELTWISE_P_LO] = q.lo, p[OM_QELTWISE_P_HI] = q.hi;
  memcpy(&p[OM_QELTWISE_P_A_SCALE], &q.as, 4), memcpy(&p[OM_QELTWISE_P_B_SCALE], &q.bs, 4);
  memcpy(&p[OM_QELTWISE_P_Y_SCALE], &q.ys, 4);
  const uint64_t runs = (bytes + 15) / 16;
  c.task.block_dim = runs < 3 ? (uint32_t)runs : 3;
  omrt_status s = kc_check(&c);
  CHECK_EQ_INT(s, OMRT_OK);
  if (s != OMRT_OK) test_note("  %s", omrt_last_error());

  rt_args args;
  kc_args(&c, &args);
  struct {
    const char *name;
    rt_qelt_fn fn; /* NULL: the task through rt_kernels */
  } paths[4] = {{"task", NULL}, {"portable", rt_qelt_c}};
  int np = 2;
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx2")) paths[np].name = "avx2", paths[np++].fn = rt_qelt_avx2;
  if (__builtin_cpu_supports("avx512f")) paths[np].name = "avx512", paths[np++].fn = rt_qelt_avx512;
#endif
  for (int k = 0; k < np && s == OMRT_OK && want; k++) {
    memset(got, 0x7f, bytes);
    if (!paths[k].fn) {
      kc_run_blocks(&c, kc_core());
    } else {
      rt_qelt g;
      rt_qelt_init(&c.task, &args, &g);
      paths[k].fn(&g, 0, bytes);
    }
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < bytes; i++) {
      const int padding =
          five &&
          (int64_t)(i / 16 / (size_t)(e->dims[2] * e->dims[3]) % (size_t)((e->dims[1] + 15) / 16)) * 16 +
                  (int64_t)(i % 16) >=
              e->dims[1];
      if ((paths[k].fn && padding) || got[i] == want_y[i]) continue; /* a run leaves padding to the task */
      if (!bad++) first = i;
    }
    CHECK(bad == 0);
    if (bad)
      test_note(
          "  %s: %s rank %d [%lld, %lld, ...] a %s b %s y %s relu %d scales %d: %zu bytes differ, first at "
          "%zu: %u, want %u",
          paths[k].name, e->mul ? "mul" : "add", e->rank, (long long)e->dims[0], (long long)e->dims[1],
          dtype_name(e->adt), dtype_name(e->bdt), dtype_name(e->ydt), e->relu, e->scales, bad, first,
          got[first], want_y[first]);
  }
  free(want_y), free(a), free(b);
  kc_free(&c);
  arena_free(&ar);
}

static void test_rejects(void) {
  const int64_t d[4] = {1, 20, 3, 3};
  kcase c;
  kc_setup(&c, OM_TASK_QELTWISE, 1, OM_QELTWISE_NTENSORS);
  kc_set_layout(&c, A, DT_UINT8, LAYOUT_NC1HWC0, 4, d);
  kc_set_layout(&c, B, DT_INT8, LAYOUT_NC1HWC0, 4, d);
  kc_set_layout(&c, Y, DT_UINT8, LAYOUT_NC1HWC0, 4, d);
  int32_t *p = c.task.params;
  const float one = 1.0f, zero = 0.0f, nan = __builtin_nanf("");
  memcpy(&p[OM_QELTWISE_P_A_SCALE], &one, 4), memcpy(&p[OM_QELTWISE_P_B_SCALE], &one, 4);
  memcpy(&p[OM_QELTWISE_P_Y_SCALE], &one, 4);
  p[OM_QELTWISE_P_B_ZP] = -128, p[OM_QELTWISE_P_HI] = 255;
  CHECK_EQ_INT(kc_check(&c), OMRT_OK);
  memcpy(&p[OM_QELTWISE_P_A_SCALE], &zero, 4);
  expect_reject(&c, "a scale of 0", "a_scale");
  memcpy(&p[OM_QELTWISE_P_A_SCALE], &one, 4), memcpy(&p[OM_QELTWISE_P_Y_SCALE], &nan, 4);
  expect_reject(&c, "a NaN scale", "y_scale");
  memcpy(&p[OM_QELTWISE_P_Y_SCALE], &one, 4), p[OM_QELTWISE_P_B_ZP] = 128;
  expect_reject(&c, "an i8 zero point past 127", "b_zp 128");
  p[OM_QELTWISE_P_B_ZP] = 0, p[OM_QELTWISE_P_LO] = 9, p[OM_QELTWISE_P_HI] = 8;
  expect_reject(&c, "lo above hi", "lo 9");
  p[OM_QELTWISE_P_LO] = 0, p[OM_QELTWISE_P_HI] = 255, p[OM_QELTWISE_P_OP] = 2;
  expect_reject(&c, "an unknown op", "op = 2");
  p[OM_QELTWISE_P_OP] = 0;
  c.task.block_dim = 100;
  expect_reject(&c, "block_dim past the runs", "block_dim");
  c.task.block_dim = 1;
  kc_set_layout(&c, B, DT_INT8, LAYOUT_ND, 4, d);
  expect_reject(&c, "b in another layout", "one layout");
  kc_set_layout(&c, B, DT_FLOAT32, LAYOUT_NC1HWC0, 4, d);
  expect_reject(&c, "a float b", "dtype");
  kc_free(&c);
}

int main(void) {
  const int U8 = DT_UINT8, I8 = DT_INT8;
  test_note("paths: %s", rt_cpu()->name);
  const ecase cases[] = {
      /* rank dims            a   b   y  mul relu scales */
      {4, {1, 64, 7, 9}, U8, U8, U8, 0, 1, SC_RANDOM}, /* a residual Add + Relu */
      {4, {2, 24, 5, 3}, U8, U8, U8, 0, 0, SC_RANDOM}, /* odd C: padding lanes */
      {4, {1, 40, 4, 4}, I8, U8, I8, 0, 0, SC_HALVES}, /* ties, i8 */
      {4, {1, 17, 3, 5}, I8, I8, U8, 1, 1, SC_RANDOM}, /* Mul */
      {4, {1, 16, 2, 3}, U8, I8, U8, 1, 0, SC_HALVES}, /* Mul ties */
      {2, {3, 37}, U8, U8, I8, 0, 0, SC_RANDOM},       /* ND with a tail */
      {1, {1000}, U8, I8, U8, 0, 0, SC_HUGE},          /* infinite sums and NaN */
      {3, {2, 5, 11}, I8, U8, U8, 1, 0, SC_HUGE},      /* infinite products */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    run_case(&cases[i]);
  test_rejects();
  return test_summary("test_qeltwise");
}
