/* test_eval.c - the reference evaluator (ir/eval.c) against hand-computed
 * values. Each case is a small graph in the IR text form, run by
 * ir_eval_graph on given inputs; also the parser round trip of a printed
 * graph, and the evaluator's refusals (bad index, integer division by zero). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fp16.h"
#include "ir/eval.h"
#include "ir/ir.h"
#include "support.h"

static arena A;

/* Parses `ir`, runs it on `inputs`; returns output `k`'s buffer (in A) or NULL. */
static void *run_out(const char *ir, const void *const *inputs, int k, diag *d) {
  ir_graph *g = NULL;
  diag_init(d);
  if (ir_parse(ir, "case", &g, d)) {
    test_note("parse: %s", d->msg);
    return NULL;
  }
  void *outs[8] = {0}, *copy = NULL;
  if (ir_eval_graph(g, inputs, outs, &A, d) == ST_OK) {
    int64_t bytes = ir_value_bytes(g->outputs[k]);
    copy = arena_alloc(&A, (size_t)bytes + 1);
    if (copy) memcpy(copy, outs[k], (size_t)bytes);
  }
  ir_graph_free(g);
  return copy;
}

static const float *run(const char *ir, const void *const *inputs) {
  diag d;
  const float *y = run_out(ir, inputs, 0, &d);
  if (!y) test_note("eval: %s", d.msg);
  return y;
}

static int near(const float *got, const float *want, int n) {
  if (!got) return 0;
  for (int i = 0; i < n; i++)
    if (!(fabsf(got[i] - want[i]) <= 1e-5f + 1e-5f * fabsf(want[i]))) {
      test_note("  element %d: got %.9g, want %.9g", i, got[i], want[i]);
      return 0;
    }
  return 1;
}

static void test_conv(void) {
  float x[] = {1, 2, 3, 4};
  const void *in[] = {x};
  CHECK(near(run("graph g opset 17\ninput %x : f32[1,1,2,2]\nconst %w : f32[1,1,1,1] = [2]\n"
                 "const %b : f32[1] = [1]\n%y : f32[1,1,2,2] = Conv(%x, %w, %b)\noutput %y\n",
                 in),
             (float[]){3, 5, 7, 9}, 4));
  float x9[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const void *in9[] = {x9};
  /* 3x3 ones, pad 1: each output sums its 3x3 neighbourhood */
  CHECK(near(run("graph g opset 17\ninput %x : f32[1,1,3,3]\nconst %w : f32[1,1,3,3] = fill(1)\n"
                 "%y : f32[1,1,3,3] = Conv(%x, %w) {pads=[1,1,1,1]}\noutput %y\n",
                 in9),
             (float[]){12, 21, 16, 27, 45, 33, 24, 39, 28}, 9));
  /* stride 2 and dilation 2 pick corners */
  CHECK(near(run("graph g opset 17\ninput %x : f32[1,1,3,3]\nconst %w : f32[1,1,2,2] = fill(1)\n"
                 "%y : f32[1,1,1,1] = Conv(%x, %w) {dilations=[2,2], strides=[2,2]}\noutput %y\n",
                 in9),
             (float[]){1 + 3 + 7 + 9}, 1));
  /* depthwise: group 2, one weight per channel */
  float x2[] = {1, 2};
  const void *in2[] = {x2};
  CHECK(near(run("graph g opset 17\ninput %x : f32[1,2,1,1]\nconst %w : f32[2,1,1,1] = [3, 4]\n"
                 "%y : f32[1,2,1,1] = Conv(%x, %w) {group=2}\noutput %y\n",
                 in2),
             (float[]){3, 8}, 2));
  /* residual then act */
  float xr[] = {1, -3}, res[] = {1, 1};
  const void *inr[] = {xr, res};
  CHECK(near(run("graph g opset 17\ninput %x : f32[1,1,1,2]\ninput %r : f32[1,1,1,2]\n"
                 "const %w : f32[1,1,1,1] = [1]\n%y : f32[1,1,1,2] = Conv(%x, %w, _, %r) "
                 "{act=\"relu\"}\noutput %y\n",
                 inr),
             (float[]){2, 0}, 2));
  float xc[] = {3, -3};
  const void *inc[] = {xc};
  CHECK(near(run("graph g opset 17\ninput %x : f32[1,1,1,2]\nconst %w : f32[1,1,1,1] = [1]\n"
                 "%y : f32[1,1,1,2] = Conv(%x, %w) {act=\"clip\", clip_max=1.5, clip_min=-1.0}\noutput %y\n",
                 inc),
             (float[]){1.5f, -1}, 2));
}

static void test_norm_pool_act(void) {
  float x[] = {1, 2};
  const void *in[] = {x};
  /* BN with eps 0: channel 1 = (2 - 1) / sqrt(4) * 2 + 1 */
  CHECK(near(run("graph g opset 17\ninput %x : f32[1,2,1,1]\nconst %s : f32[2] = [1, 2]\n"
                 "const %b : f32[2] = [0, 1]\nconst %m : f32[2] = [0, 1]\nconst %v : f32[2] = [1, 4]\n"
                 "%y : f32[1,2,1,1] = BatchNormalization(%x, %s, %b, %m, %v) {epsilon=0.0}\noutput %y\n",
                 in),
             (float[]){1, 2}, 2));
  float x9[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const void *in9[] = {x9};
  CHECK(near(
      run("graph g opset 17\ninput %x : f32[1,1,3,3]\n"
          "%y : f32[1,1,2,2] = MaxPool(%x) {ceil_mode=1, kernel_shape=[2,2], strides=[2,2]}\noutput %y\n",
          in9),
      (float[]){5, 6, 8, 9}, 4));
  float x4[] = {1, 2, 3, 4};
  const void *in4[] = {x4};
  CHECK(near(run("graph g opset 17\ninput %x : f32[1,1,2,2]\n"
                 "%y : f32[1,1,3,3] = AveragePool(%x) {count_include_pad=1, kernel_shape=[2,2], "
                 "pads=[1,1,1,1]}\noutput %y\n",
                 in4),
             (float[]){0.25f, 0.75f, 0.5f, 1, 2.5f, 1.5f, 0.75f, 1.75f, 1}, 9));
  CHECK(near(run("graph g opset 17\ninput %x : f32[1,1,2,2]\n"
                 "%y : f32[1,1,3,3] = AveragePool(%x) {kernel_shape=[2,2], pads=[1,1,1,1]}\noutput %y\n",
                 in4),
             (float[]){1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4}, 9));
  /* ceil_mode + count_include_pad: the window past the padded frame counts only up to it */
  float x3[] = {1, 2, 3};
  const void *in3[] = {x3};
  CHECK(near(run("graph g opset 17\ninput %x : f32[1,1,1,3]\n"
                 "%y : f32[1,1,1,2] = AveragePool(%x) {ceil_mode=1, count_include_pad=1, kernel_shape=[1,2], "
                 "strides=[1,2]}\noutput %y\n",
                 in3),
             (float[]){1.5f, 3}, 2));
  CHECK(near(
      run("graph g opset 17\ninput %x : f32[1,1,2,2]\n%y : f32[1,1,1,1] = GlobalAveragePool(%x)\noutput %y\n",
          in4),
      (float[]){2.5f}, 1));
  CHECK(near(
      run("graph g opset 17\ninput %x : f32[1,1,2,2]\n%y : f32[1,1,1,1] = GlobalMaxPool(%x)\noutput %y\n",
          in4),
      (float[]){4}, 1));
  float xs[] = {0, -1, 7};
  const void *ins[] = {xs};
  CHECK(near(run("graph g opset 17\ninput %x : f32[3]\n%y : f32[3] = Sigmoid(%x)\noutput %y\n", ins),
             (float[]){0.5f, (float)(1 / (1 + exp(1.0))), (float)(1 / (1 + exp(-7.0)))}, 3));
  CHECK(near(run("graph g opset 17\ninput %x : f32[3]\n%y : f32[3] = Relu(%x)\noutput %y\n", ins),
             (float[]){0, 0, 7}, 3));
  CHECK(near(
      run("graph g opset 17\ninput %x : f32[3]\n%y : f32[3] = Clip(%x) {max=6.0, min=0.0}\noutput %y\n", ins),
      (float[]){0, 0, 6}, 3));
}

static void test_softmax_gemm(void) {
  float x[] = {0, (float)log(3.0), 0, 0};
  const void *in[] = {x};
  CHECK(near(
      run("graph g opset 17\ninput %x : f32[2,2]\n%y : f32[2,2] = Softmax(%x) {axis=1}\noutput %y\n", in),
      (float[]){0.25f, 0.75f, 0.5f, 0.5f}, 4));
  CHECK(near(
      run("graph g opset 17\ninput %x : f32[2,2]\n%y : f32[2,2] = Softmax(%x) {axis=0}\noutput %y\n", in),
      (float[]){0.5f, 0.75f, 0.5f, 0.25f}, 4));
  CHECK(near(
      run("graph g opset 17\ninput %x : f32[2,2]\n%y : f32[2,2] = Softmax(%x) {axis=1, log=1}\noutput %y\n",
          in),
      (float[]){(float)log(0.25), (float)log(0.75), (float)log(0.5), (float)log(0.5)}, 4));
  /* coerce_2d over axis 0: one softmax over all four */
  CHECK(near(run("graph g opset 17\ninput %x : f32[2,2]\n%y : f32[2,2] = Softmax(%x) {axis=0, "
                 "coerce_2d=1}\noutput %y\n",
                 in),
             (float[]){1 / 6.0f, 3 / 6.0f, 1 / 6.0f, 1 / 6.0f}, 4));
  float a[] = {1, 2};
  const void *ina[] = {a};
  /* 2 * A * B^T + 1 * C: A B^T = [5, 11] */
  CHECK(near(run("graph g opset 17\ninput %a : f32[1,2]\nconst %b : f32[2,2] = [1, 2, 3, 4]\nconst %c : "
                 "f32[1] = [1]\n"
                 "%y : f32[1,2] = Gemm(%a, %b, %c) {alpha=2.0, transB=1}\noutput %y\n",
                 ina),
             (float[]){11, 23}, 2));
  float a3[] = {1, 2, 3, 4};
  const void *in3[] = {a3};
  /* batched A [2,1,2] times B [2,1] */
  CHECK(near(run("graph g opset 17\ninput %a : f32[2,1,2]\nconst %b : f32[2,1] = [10, 1]\n"
                 "%y : f32[2,1,1] = MatMul(%a, %b)\noutput %y\n",
                 in3),
             (float[]){12, 34}, 2));
  /* vector times matrix */
  CHECK(near(run("graph g opset 17\ninput %a : f32[2]\nconst %b : f32[2,2] = [1, 2, 3, 4]\n"
                 "%y : f32[2] = MatMul(%a, %b)\noutput %y\n",
                 in3),
             (float[]){7, 10}, 2));
}

static void test_broadcast_int(void) {
  float a[] = {1, 2}, b[] = {10, 20, 30};
  const void *in[] = {a, b};
  CHECK(near(run("graph g opset 17\ninput %a : f32[2,1]\ninput %b : f32[3]\n%y : f32[2,3] = Add(%a, "
                 "%b)\noutput %y\n",
                 in),
             (float[]){11, 21, 31, 12, 22, 32}, 6));
  CHECK(near(run("graph g opset 17\ninput %a : f32[2,1]\ninput %b : f32[3]\n%y : f32[2,3] = Div(%b, "
                 "%a)\noutput %y\n",
                 in),
             (float[]){10, 20, 30, 5, 10, 15}, 6));
  diag d;
  const int64_t *q = run_out("graph g opset 17\nconst %a : i64[2] = [7, -7]\nconst %b : i64[] = [2]\n"
                             "%y : i64[2] = Div(%a, %b)\noutput %y\n",
                             NULL, 0, &d);
  CHECK(q && q[0] == 3 && q[1] == -3);
  q = run_out("graph g opset 17\nconst %a : i64[2] = [7, -7]\nconst %b : i64[2] = [2, 0]\n"
              "%y : i64[2] = Div(%a, %b)  # div0\noutput %y\n",
              NULL, 0, &d);
  CHECK(!q && d.code == ST_ERR_INVALID && strstr(d.msg, "node 'div0' (Div)") &&
        strstr(d.msg, "division by zero"));
  /* f16 arithmetic rounds to f16 */
  uint16_t h[] = {float_to_half(1.0f), float_to_half(0.5f)};
  const void *inh[] = {h};
  const uint16_t *y = run_out("graph g opset 17\ninput %a : f16[2]\nconst %b : f16[2] = [0.0004, 2]\n"
                              "%y : f16[2] = Mul(%a, %b)\noutput %y\n",
                              inh, 0, &d);
  CHECK(y && half_to_float(y[0]) == half_to_float(float_to_half(0.0004f)) && half_to_float(y[1]) == 1.0f);
}

static void test_data_movement(void) {
  float x[] = {1, 2, 3, 4, 5, 6};
  const void *in[] = {x};
  diag d;
  const int64_t *s = run_out(
      "graph g opset 17\ninput %x : f32[1,2,3]\n%s : i64[2] = Shape(%x) {start=-2}\noutput %s\n", in, 0, &d);
  CHECK(s && s[0] == 2 && s[1] == 3);
  CHECK(near(run("graph g opset 17\ninput %x : f32[2,3]\nconst %i : i64[2] = [-1, 0]\n"
                 "%y : f32[2,2] = Gather(%x, %i) {axis=1}\noutput %y\n",
                 in),
             (float[]){3, 1, 6, 4}, 4));
  CHECK(!run_out("graph g opset 17\ninput %x : f32[2,3]\nconst %i : i64[1] = [3]\n"
                 "%y : f32[2,1] = Gather(%x, %i) {axis=1}  # gather\noutput %y\n",
                 in, 0, &d) &&
        strstr(d.msg, "index 3 out of range"));
  CHECK(near(
      run("graph g opset 17\ninput %x : f32[2,3]\n%y : f32[2,6] = Concat(%x, %x) {axis=1}\noutput %y\n", in),
      (float[]){1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}, 12));
  CHECK(near(run("graph g opset 17\ninput %x : f32[2,3]\nconst %s : i64[2] = [3, -1]\n"
                 "%y : f32[3,2] = Reshape(%x, %s)\n%z : f32[6] = Flatten(%y) {axis=0}\noutput %y\n",
                 in),
             x, 6));
  float c[] = {2.7f, -2.7f};
  const void *inc[] = {c};
  const int64_t *ci =
      run_out("graph g opset 17\ninput %x : f32[2]\n%y : i64[2] = Cast(%x) {to=7}\noutput %y\n", inc, 0, &d);
  CHECK(ci && ci[0] == 2 && ci[1] == -2);
  const uint16_t *ch =
      run_out("graph g opset 17\ninput %x : f32[2]\n%y : f16[2] = Cast(%x) {to=10}\noutput %y\n", inc, 0, &d);
  CHECK(ch && ch[0] == float_to_half(2.7f) && ch[1] == float_to_half(-2.7f));
}

/* ir_print output parses back to the same text, float attributes included. */
static void test_round_trip(void) {
  const char *text =
      "graph rt opset 17\n"
      "input %x : f32[1,2,4,4]\n"
      "const %w : f32[2,2,1,1] = [0.5, -1, 2, 1e-07]\n"
      "const %k : i64[2] = [1, -1]\n"
      "%y : f32[1,2,4,4] @workspace+64 = Conv(%x, %w, _) {act=\"clip\", clip_max=6.0, clip_min=-inf, "
      "pads=[0,0,0,0], scales=[1.0,0.5]}  # conv 1\n"
      "%z : f16[1,2,4,4] NC1HWC0 = TransData(%y)  # td\n"
      "output %z\n";
  const char *want =
      "graph rt opset 17\n"
      "input %x : f32[1,2,4,4]\n"
      "const %w : f32[2,2,1,1] = [0.5, -1, 2, 1.00000001e-07]\n"
      "const %k : i64[2] = [1, -1]\n"
      "%y : f32[1,2,4,4] @workspace+64 = Conv(%x, %w, _) {act=\"clip\", clip_max=6.0, clip_min=-inf, "
      "pads=[0,0,0,0], scales=[1.0,0.5]}  # conv 1\n"
      "%z : f16[1,2,4,4] NC1HWC0 = TransData(%y)  # td\n"
      "output %z\n";
  ir_graph *g = NULL;
  diag d;
  diag_init(&d);
  CHECK(ir_parse(text, "rt", &g, &d) == ST_OK);
  if (!g) {
    test_note("%s", d.msg);
    return;
  }
  char *got = ir_print_string(g);
  CHECK(got && strcmp(got, want) == 0);
  if (got && strcmp(got, want) != 0) test_note("got:\n%s", got);
  CHECK(ir_attr_find(g->nodes[0], "clip_max")->kind == IR_ATTR_FLOAT);
  CHECK(ir_attr_find(g->nodes[0], "scales")->kind == IR_ATTR_FLOATS);
  CHECK(g->values[3]->region == IR_REGION_WORKSPACE && g->values[3]->offset == 64);
  free(got);
  ir_graph_free(g);
  /* errors say where */
  diag_init(&d);
  CHECK(ir_parse("graph g opset 1\ninput %x : f32[2]\n%y : f32[2] = Relu(%nope)\n", "t.ir", &g, &d) ==
            ST_ERR_PARSE &&
        strcmp(d.msg, "t.ir:3: value %nope is used before it is defined") == 0);
  diag_init(&d);
  CHECK(ir_parse("graph g opset 1\nconst %w : f32[40] = <bytes 160 crc 00000000>\n", "t.ir", &g, &d) ==
            ST_ERR_PARSE &&
        strstr(d.msg, "t.ir:2: "));
  diag_init(&d);
  CHECK(ir_parse("graph g opset 1\nconst %w : f32[3] = [1, 2]\n", "t.ir", &g, &d) == ST_ERR_PARSE &&
        strstr(d.msg, "has 2 elements, its type says 3"));
}

int main(void) {
  arena_init(&A, 0);
  test_conv();
  test_norm_pool_act();
  test_softmax_gemm();
  test_broadcast_int();
  test_data_movement();
  test_round_trip();
  arena_free(&A);
  return test_summary("test_eval");
}
