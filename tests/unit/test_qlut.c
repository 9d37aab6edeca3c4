/* test_qlut.c - QLUT, an int8 -> int8 function as a 256-entry table.
 *
 * The kernel: random tables and bytes, NC1HWC0 (odd channel counts:
 * padding lanes) and ND (lengths around the 32- and 64-byte vectors, a
 * tail), each case run as libomrt runs the task (all its blocks, the run
 * rt_cpu() picks: the ctest variants force OMRT_PORTABLE=1 and
 * OMRT_AVX512=0) and by every run function this CPU can call (portable C,
 * AVX2, AVX-512 VBMI), against table[x] byte for byte, the task's padding
 * lanes 0. The load-time check's refusals, each naming its field.
 *
 * The compiler: a QDQ block as PyTorch exports MobileNetV3's (a QConv, the
 * hardswish of its dequantized output, HardSigmoid then Mul, quantized
 * again, read by a second QConv) and the same with a Sigmoid between u8
 * and i8, compiled by atc: the hardswish program is one QLUT task, and
 * the model's output equals the reference evaluator's on the ONNX graph
 * (within one output step: the evaluator computes the activation in
 * double, the table in the vector program's f32).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/om_format.h"
#include "ir/eval.h"
#include "kcase.h"
#include "omrt.h"
#include "onnx_mb.h"
#include "runtime/kernels_qlut.h"

static uint32_t rng = 977;
static uint32_t next(void) {
  rng = rng * 1664525u + 1013904223u;
  return rng >> 8;
}

enum { X = OM_QLUT_T_X, T = OM_QLUT_T_TABLE, Y = OM_QLUT_T_Y };

static int is_padding(const int64_t *d, size_t i) {
  const size_t hw = (size_t)(d[2] * d[3]), c1 = (size_t)((d[1] + 15) / 16);
  return (int64_t)(i / 16 / hw % c1) * 16 + (int64_t)(i % 16) >= d[1];
}

static void run_case(int rank, const int64_t *dims, int xdt, int ydt) {
  const int five = rank == 4, lay = five ? LAYOUT_NC1HWC0 : LAYOUT_ND;
  kcase c;
  kc_setup(&c, OM_TASK_QLUT, 3, OM_QLUT_NTENSORS);
  kc_set_layout(&c, X, xdt, lay, rank, dims);
  kc_set(&c, T, ydt, 1, (int64_t[]){256});
  kc_set_layout(&c, Y, ydt, lay, rank, dims);
  const size_t bytes = (size_t)c.t[Y].bytes;
  uint8_t *x = c.data[X], *table = c.data[T], *got = c.data[Y], *want = malloc(bytes);
  for (int b = 0; b < 256; b++)
    table[b] = (uint8_t)next();
  for (size_t i = 0; i < bytes; i++) {
    x[i] = (uint8_t)next();
    want[i] = five && is_padding(dims, i) ? 0 : table[x[i]];
  }
  const uint64_t runs = (bytes + 15) / 16;
  c.task.block_dim = runs < 3 ? (uint32_t)runs : 3;
  omrt_status s = kc_check(&c);
  CHECK_EQ_INT(s, OMRT_OK);
  if (s != OMRT_OK) test_note("  %s", omrt_last_error());
  struct {
    const char *name;
    rt_qlut_fn fn; /* NULL: the task through rt_kernels */
  } paths[4] = {{"task", NULL}, {"portable", rt_qlut_c}};
  int np = 2;
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx2")) paths[np].name = "avx2", paths[np++].fn = rt_qlut_avx2;
  if (__builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw"))
    paths[np].name = "vbmi", paths[np++].fn = rt_qlut_vbmi;
#endif
  for (int k = 0; k < np && s == OMRT_OK; k++) {
    memset(got, 0x7f, bytes);
    if (!paths[k].fn)
      kc_run_blocks(&c, kc_core());
    else
      paths[k].fn(table, x, got, bytes);
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < bytes; i++) {
      const int padding = five && is_padding(dims, i);
      if ((paths[k].fn && padding) || got[i] == want[i]) continue; /* a run leaves padding to the task */
      if (!bad++) first = i;
    }
    CHECK(bad == 0);
    if (bad)
      test_note("  %s: rank %d [%lld, %lld, ...] x %s y %s: %zu bytes differ, first at %zu: %u, want %u",
                paths[k].name, rank, (long long)dims[0], (long long)(rank > 1 ? dims[1] : 0), dtype_name(xdt),
                dtype_name(ydt), bad, first, got[first], want[first]);
  }
  free(want);
  kc_free(&c);
}

static void test_rejects(void) {
  const int64_t d[4] = {1, 20, 3, 3};
  kcase c;
  kc_setup(&c, OM_TASK_QLUT, 1, OM_QLUT_NTENSORS);
  kc_set_layout(&c, X, DT_UINT8, LAYOUT_NC1HWC0, 4, d);
  kc_set(&c, T, DT_INT8, 1, (int64_t[]){256});
  kc_set_layout(&c, Y, DT_INT8, LAYOUT_NC1HWC0, 4, d);
  CHECK_EQ_INT(kc_check(&c), OMRT_OK);
  kc_set(&c, T, DT_INT8, 1, (int64_t[]){255});
  expect_reject(&c, "a short table", "table has 255");
  kc_set(&c, T, DT_UINT8, 1, (int64_t[]){256});
  expect_reject(&c, "a table of another dtype than y", "table");
  kc_set(&c, T, DT_FLOAT32, 1, (int64_t[]){256});
  expect_reject(&c, "a float table", "dtype");
  kc_set(&c, T, DT_INT8, 1, (int64_t[]){256});
  c.task.block_dim = 100;
  expect_reject(&c, "block_dim past the runs", "block_dim");
  c.task.block_dim = 1;
  kc_set_layout(&c, X, DT_UINT8, LAYOUT_ND, 4, d);
  expect_reject(&c, "x in another layout", "one layout");
  kc_set_layout(&c, X, DT_FLOAT32, LAYOUT_NC1HWC0, 4, d);
  expect_reject(&c, "a float x", "dtype");
  kc_set_layout(&c, X, DT_UINT8, LAYOUT_NC1HWC0, 4, (int64_t[]){1, 20, 3, 4});
  expect_reject(&c, "x of other dims", "dims");
  kc_free(&c);
}

/* --- the compiler --- */

enum { C = 24, H = 5, W = 5 };
static int8_t w1[C * C], w2[C * C];
static const float xs = 0.02f, s1 = 0.05f, s2 = 0.03f, ys = 0.04f, ws = 0.01f;
static const uint8_t xz = 128, z1 = 120, z2 = 3, yz = 100;

/* x -> Q -> DQ -> Conv -> Q (u8) -> DQ -> act -> Q (u8 / i8) -> DQ -> Conv ->
 * Q -> DQ -> y; act "hardswish" (HardSigmoid(alpha 1/6) then Mul, as
 * PyTorch writes it at opset 13) or "sigmoid" (into i8, zero point 0). */
static void model(mb *m, const char *act) {
  const int sig = !strcmp(act, "sigmoid");
  static const int8_t z0 = 0;
  mb_init(m, 13);
  mb_input(m, "x", DT_FLOAT32, 4, (int64_t[]){1, C, H, W}, NULL);
  mb_init_raw(m, "xs", DT_FLOAT32, 0, NULL, &xs, 4);
  mb_init_raw(m, "xz", DT_UINT8, 0, NULL, &xz, 1);
  mb_init_raw(m, "s1", DT_FLOAT32, 0, NULL, &s1, 4);
  mb_init_raw(m, "z1", DT_UINT8, 0, NULL, &z1, 1);
  mb_init_raw(m, "s2", DT_FLOAT32, 0, NULL, &s2, 4);
  if (sig)
    mb_init_raw(m, "z2", DT_INT8, 0, NULL, &z0, 1);
  else
    mb_init_raw(m, "z2", DT_UINT8, 0, NULL, &z2, 1);
  mb_init_raw(m, "ys", DT_FLOAT32, 0, NULL, &ys, 4);
  mb_init_raw(m, "yz", DT_UINT8, 0, NULL, &yz, 1);
  mb_init_raw(m, "ws", DT_FLOAT32, 0, NULL, &ws, 4);
  mb_init_raw(m, "w1", DT_INT8, 4, (int64_t[]){C, C, 1, 1}, w1, sizeof w1);
  mb_init_raw(m, "w2", DT_INT8, 4, (int64_t[]){C, C, 1, 1}, w2, sizeof w2);
  mb_node(m, "QuantizeLinear", "q_x", "x,xs,xz", "xq");
  mb_node(m, "DequantizeLinear", "dq_x", "xq,xs,xz", "xf");
  mb_node(m, "DequantizeLinear", "dq_w1", "w1,ws", "w1f");
  mb_node(m, "DequantizeLinear", "dq_w2", "w2,ws", "w2f");
  mb_node(m, "Conv", "conv1", "xf,w1f", "c1");
  mb_node(m, "QuantizeLinear", "q_c1", "c1,s1,z1", "c1q");
  mb_node(m, "DequantizeLinear", "dq_c1", "c1q,s1,z1", "c1f");
  if (sig) {
    mb_node(m, "Sigmoid", "act", "c1f", "a");
  } else {
    Onnx__NodeProto *n = mb_node(m, "HardSigmoid", "hsig", "c1f", "hs");
    attr_float(m, n, "alpha", 1.0f / 6);
    mb_node(m, "Mul", "act", "c1f,hs", "a");
  }
  mb_node(m, "QuantizeLinear", "q_a", "a,s2,z2", "aq");
  mb_node(m, "DequantizeLinear", "dq_a", "aq,s2,z2", "af");
  mb_node(m, "Conv", "conv2", "af,w2f", "c2");
  mb_node(m, "QuantizeLinear", "q_y", "c2,ys,yz", "yq");
  mb_node(m, "DequantizeLinear", "dq_y", "yq,ys,yz", "y");
  mb_output(m, "y");
}

static void run_model(const char *act) {
  float x[C * H * W], got[C * H * W];
  unsigned seed = 5;
  for (int i = 0; i < C * H * W; i++)
    x[i] = ((float)((seed = seed * 1103515245u + 12345u) >> 8 & 2047) - 1024.0f) * 0.0025f;
  mb m;
  model(&m, act);
  ir_graph *g = EXPECT_OK(&m, ".", NULL);
  mb_run r;
  const void *in[1] = {x};
  void *out[1] = {got};
  int ran = 0;
  if (mb_run_open(&m, "qlut.onnx", OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE, &r)) {
    ran = omrt_execute(r.ctx, in, out) == OMRT_OK;
    CHECK(ran);
    CHECK_EQ_INT(mb_count_tasks(r.model, OM_TASK_QLUT), 1);
    CHECK_EQ_INT(mb_count_tasks(r.model, OM_TASK_QCONV2D), 2);
  }
  arena a;
  arena_init(&a, 0);
  void *ref[1];
  if (ran && g && mb_eval(g, in, ref, &a) == 0) {
    int bad = 0, same = 0;
    for (int i = 0; i < C * H * W; i++) {
      const float e = ((const float *)ref[0])[i];
      bad += fabsf(e - got[i]) > ys * 1.01f;
      same += e == got[i];
    }
    CHECKF(bad == 0, "  %s: %d outputs more than one step from the evaluator's", act, bad);
    CHECKF(same * 10 >= C * H * W * 9, "  %s: only %d of %d outputs equal the evaluator's", act, same,
           C * H * W);
  } else {
    CHECK(!"runs and evaluates");
  }
  arena_free(&a);
  mb_run_close(&r);
  ir_graph_free(g);
}

int main(void) {
  const int U8 = DT_UINT8, I8 = DT_INT8;
  test_note("paths: %s", rt_cpu()->name);
  run_case(4, (int64_t[]){1, 64, 7, 9}, U8, U8);
  run_case(4, (int64_t[]){2, 24, 5, 3}, U8, I8); /* odd C: padding lanes */
  run_case(4, (int64_t[]){1, 17, 3, 5}, I8, U8);
  const int64_t lengths[] = {1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 1000};
  for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++)
    run_case(1, &lengths[i], i % 2 ? I8 : U8, i % 3 ? U8 : I8);
  test_rejects();
  for (int i = 0; i < C * C; i++)
    w1[i] = (int8_t)((int)(next() % 255) - 127), w2[i] = (int8_t)((int)(next() % 255) - 127);
  run_model("hardswish");
  run_model("sigmoid");
  return test_summary("test_qlut");
}
