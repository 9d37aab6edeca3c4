/* test_frontend_qms.c - ONNX Runtime's quantized contrib ops (domain
 * com.microsoft) at import (frontend/onnx_decomp_qms.c): each becomes
 * DequantizeLinear -> the float op -> QuantizeLinear; its result (shape
 * inference, then the reference evaluator) against integers worked by hand
 * in the comments (no rounding tie in any of them); the domain rules (the
 * names only from com.microsoft, which the model must import; an unknown op
 * of it refused naming the node, op and domain); and per op one malformed
 * parameter (a missing scale, a scale of 0, a zero point of the wrong
 * type), refused with one line naming the node and the field. And a
 * QOperator block compiled by atc and run by libomrt: the com.microsoft ops
 * reach the int8 tasks (QCONV2D, QLUT, QELTWISE), and the output equals the
 * reference evaluator's on the ONNX graph within one output step. */
#include "common/om_format.h"
#include "ir/eval.h"
#include "onnx_mb.h"
#include "passes/pass.h"

enum { F32 = 1, U8 = 2, I8 = 3, I32 = 6 };

static void ms_model(mb *m) {
  mb_init(m, 13);
  mb_domain(m, "com.microsoft", 1);
}

static Onnx__NodeProto *ms_node(mb *m, const char *op, const char *ins) {
  Onnx__NodeProto *n = mb_node(m, op, "q", ins, "y");
  n->domain = "com.microsoft";
  mb_output(m, "y");
  return n;
}

/* A rank-0 initializer of dtype dt holding v. */
static void scalar(mb *m, const char *name, int dt, double v) {
  float f = (float)v;
  int8_t i = (int8_t)v;
  uint8_t u = (uint8_t)v;
  mb_init_raw(m, name, dt, 0, NULL,
              dt == F32  ? (void *)&f
              : dt == I8 ? (void *)&i
                         : (void *)&u,
              dt == F32 ? 4 : 1);
}

/* Loads m, checks the output's dtype and that the graph is DequantizeLinear ->
 * .. -> QuantizeLinear (unless a float output), evaluates it on x and
 * compares the output's `bytes` bytes with want; frees m. */
static void expect_output(mb *m, const void *x, dtype dtype, const void *want, size_t bytes,
                          const char *what) {
  ir_graph *g = EXPECT_OK(m, NULL, NULL);
  if (g) {
    CHECK(g->outputs[0]->dtype == dtype);
    if (dtype != DT_FLOAT32)
      CHECK(mb_count_ops(g, IR_OP_DEQUANTIZE) >= 1 && mb_count_ops(g, IR_OP_QUANTIZE) >= 1);
    arena a;
    arena_init(&a, 0);
    const void *in[1] = {x};
    void *out[1];
    if (!mb_eval(g, in, out, &a)) {
      int same = memcmp(out[0], want, bytes) == 0;
      test_check(same, __FILE__, __LINE__, what);
      for (size_t i = 0; !same && i < bytes && dtype != DT_FLOAT32; i++)
        test_note("  %s byte %zu: got %d, want %d", what, i, ((const uint8_t *)out[0])[i],
                  ((const uint8_t *)want)[i]);
    } else {
      test_check(0, __FILE__, __LINE__, what);
    }
    arena_free(&a);
  }
  ir_graph_free(g);
  mb_free(m);
}

/* QLinearAdd, uint8: A = (a - 10) * 0.5 = {0, 5, 60, 122.5}, B = (b - 100) *
 * 0.25 = {-25, -10, 0, 25}; sum {-25, -5, 60, 147.5} / 0.5 + 20 = {-30, 10,
 * 140, 315}, saturated {0, 10, 140, 255}. QLinearMul, int8: A = a * 0.5 =
 * {-2, 5, 50, -64}, B = (b + 4) * 0.25 = {3, 0.5, 1.75, 32.75}; product {-6,
 * 2.5, 87.5, -2096} / 0.5 + 1 = {-11, 6, 176, -4191}, saturated {-11, 6,
 * 127, -128}. */
static void test_binary(void) {
  static const uint8_t a[4] = {10, 20, 130, 255}, b[4] = {0, 60, 100, 200}, want[4] = {0, 10, 140, 255};
  mb m;
  ms_model(&m);
  mb_input(&m, "a", U8, 2, (int64_t[]){2, 2}, NULL);
  scalar(&m, "as", F32, 0.5), scalar(&m, "az", U8, 10), scalar(&m, "bs", F32, 0.25),
      scalar(&m, "bz", U8, 100);
  scalar(&m, "cs", F32, 0.5), scalar(&m, "cz", U8, 20);
  mb_init_raw(&m, "b", U8, 2, (int64_t[]){2, 2}, b, sizeof b);
  ms_node(&m, "QLinearAdd", "a,as,az,b,bs,bz,cs,cz");
  expect_output(&m, a, DT_UINT8, want, sizeof want, "QLinearAdd");

  static const int8_t ma[4] = {-4, 10, 100, -128}, mbv[4] = {8, -2, 3, 127}, mwant[4] = {-11, 6, 127, -128};
  ms_model(&m);
  mb_input(&m, "a", I8, 1, (int64_t[]){4}, NULL);
  scalar(&m, "as", F32, 0.5), scalar(&m, "bs", F32, 0.25), scalar(&m, "bz", I8, -4);
  scalar(&m, "cs", F32, 0.5), scalar(&m, "cz", I8, 1);
  mb_init_raw(&m, "b", I8, 1, (int64_t[]){4}, mbv, sizeof mbv);
  ms_node(&m, "QLinearMul", "a,as,,b,bs,bz,cs,cz"); /* A's zero point omitted: 0 */
  expect_output(&m, ma, DT_INT8, mwant, sizeof mwant, "QLinearMul");
}

/* QLinearSigmoid, uint8: X = (x - 128) * 0.05 = {-6.4, -1, 0, 1, 6.35};
 * sigmoid {0.00166, 0.26894, 0.5, 0.73106, 0.99826} * 256 = {0.42, 68.85,
 * 128, 187.15, 255.55} -> {0, 69, 128, 187, 255 (256 saturated)}.
 * QLinearLeakyRelu, int8, alpha 0.1: X = x * 0.1 = {-10, -0.5, 0, 5} -> {-1,
 * -0.05, 0, 5} / 0.05 - 10 = {-30, -11, -10, 90}. */
static void test_unary(void) {
  static const uint8_t x[5] = {0, 108, 128, 148, 255}, want[5] = {0, 69, 128, 187, 255};
  mb m;
  ms_model(&m);
  mb_input(&m, "x", U8, 2, (int64_t[]){1, 5}, NULL);
  scalar(&m, "xs", F32, 0.05), scalar(&m, "xz", U8, 128), scalar(&m, "ys", F32, 1.0 / 256);
  ms_node(&m, "QLinearSigmoid", "x,xs,xz,ys");
  expect_output(&m, x, DT_UINT8, want, sizeof want, "QLinearSigmoid");

  static const int8_t lx[4] = {-100, -5, 0, 50}, lwant[4] = {-30, -11, -10, 90};
  ms_model(&m);
  mb_input(&m, "x", I8, 1, (int64_t[]){4}, NULL);
  scalar(&m, "xs", F32, 0.1), scalar(&m, "xz", I8, 0), scalar(&m, "ys", F32, 0.05), scalar(&m, "yz", I8, -10);
  attr_float(&m, ms_node(&m, "QLinearLeakyRelu", "x,xs,xz,ys,yz"), "alpha", 0.1f);
  expect_output(&m, lx, DT_INT8, lwant, sizeof lwant, "QLinearLeakyRelu");
}

/* QLinearGlobalAveragePool, uint8 [1, 2, 2, 2]: channel 0 (x - 10) * 0.5 =
 * {0, 5, 10, 16}, mean 7.75 / 0.25 + 3 = 34; channel 1 {-5, -5, -5, 122},
 * mean 26.75 -> 107 + 3 = 110. channels_last = 1: the same values as [N, H,
 * W, C], the output [1, 1, 1, 2]. */
static void test_global_average_pool(void) {
  static const uint8_t x[8] = {10, 20, 30, 42, 0, 0, 0, 254}, xl[8] = {10, 0, 20, 0, 30, 0, 42, 254};
  static const uint8_t want[2] = {34, 110};
  for (int last = 0; last < 2; last++) {
    mb m;
    ms_model(&m);
    mb_input(&m, "x", U8, 4, (int64_t[]){1, 2, 2, 2}, NULL);
    scalar(&m, "xs", F32, 0.5), scalar(&m, "xz", U8, 10), scalar(&m, "ys", F32, 0.25),
        scalar(&m, "yz", U8, 3);
    Onnx__NodeProto *n = ms_node(&m, "QLinearGlobalAveragePool", "x,xs,xz,ys,yz");
    if (last) attr_int(&m, n, "channels_last", 1);
    ir_graph *g = NULL;
    diag d;
    if (last && !mb_load(&m, NULL, NULL, &g, &d)) { /* [N, H, W, C] in, [N, 1, 1, C] out */
      CHECK(g->outputs[0]->rank == 4 && g->outputs[0]->dims[1] == 1 && g->outputs[0]->dims[3] == 2);
      ir_graph_free(g);
    }
    expect_output(&m, last ? xl : x, DT_UINT8, want, sizeof want, last ? "channels_last" : "channels first");
  }
}

/* QLinearAveragePool, uint8 [1, 1, 3, 3], x * 0.1 = 0..8 row by row, kernel
 * 2x2, stride 2, pads 1 (not counted): windows {0}, {1, 2}, {3, 6}, {4, 5,
 * 7, 8}, means {0, 1.5, 4.5, 6} / 0.1 + 5 = {5, 20, 50, 65}. */
static void test_average_pool(void) {
  static const uint8_t x[9] = {0, 10, 20, 30, 40, 50, 60, 70, 80}, want[4] = {5, 20, 50, 65};
  mb m;
  ms_model(&m);
  mb_input(&m, "x", U8, 4, (int64_t[]){1, 1, 3, 3}, NULL);
  scalar(&m, "xs", F32, 0.1), scalar(&m, "ys", F32, 0.1), scalar(&m, "yz", U8, 5);
  Onnx__NodeProto *n = ms_node(&m, "QLinearAveragePool", "x,xs,,ys,yz");
  attr_ints(&m, n, "kernel_shape", 2, (int64_t[]){2, 2});
  attr_ints(&m, n, "strides", 2, (int64_t[]){2, 2});
  attr_ints(&m, n, "pads", 4, (int64_t[]){1, 1, 1, 1});
  expect_output(&m, x, DT_UINT8, want, sizeof want, "QLinearAveragePool");
}

/* QLinearConcat along axis 1: X1 = (x - 20) * 0.25 = {0, 5}, X2 = 100; / 0.5
 * + 10 = {10, 20, 210}. */
static void test_concat(void) {
  static const uint8_t x[2] = {20, 40}, x2 = 100, want[3] = {10, 20, 210};
  mb m;
  ms_model(&m);
  mb_input(&m, "x", U8, 2, (int64_t[]){1, 2}, NULL);
  scalar(&m, "ys", F32, 0.5), scalar(&m, "yz", U8, 10), scalar(&m, "s1", F32, 0.25), scalar(&m, "z1", U8, 20);
  scalar(&m, "s2", F32, 1), scalar(&m, "z2", U8, 0);
  mb_init_raw(&m, "x2", U8, 2, (int64_t[]){1, 1}, &x2, 1);
  attr_int(&m, ms_node(&m, "QLinearConcat", "ys,yz,x,s1,z1,x2,s2,z2"), "axis", 1);
  expect_output(&m, x, DT_UINT8, want, sizeof want, "QLinearConcat");
}

/* QLinearSoftmax, uint8, X = (x - 100) * 0.1 = {0, 1, 2} per row: softmax
 * {0.09003, 0.24473, 0.66524} * 256 = {23.05, 62.65, 170.30} -> {23, 63,
 * 170}. With opset 12 and axis 1 a [1, 2, 3] input is coerced to [1, 6]: the
 * six values share one softmax, halved: {11.52, 31.33, 85.15} -> {12, 31,
 * 85} twice (opset 13's axis 1 would give 128 each). */
static void test_softmax(void) {
  static const uint8_t x[6] = {100, 110, 120, 100, 110, 120}, want13[6] = {23, 63, 170, 23, 63, 170},
                       want12[6] = {12, 31, 85, 12, 31, 85};
  for (int old = 0; old < 2; old++) {
    mb m;
    ms_model(&m);
    mb_input(&m, "x", U8, 3, (int64_t[]){1, 2, 3}, NULL);
    scalar(&m, "xs", F32, 0.1), scalar(&m, "xz", U8, 100), scalar(&m, "ys", F32, 1.0 / 256);
    scalar(&m, "yz", U8, 0);
    Onnx__NodeProto *n = ms_node(&m, "QLinearSoftmax", "x,xs,xz,ys,yz");
    attr_int(&m, n, "opset", old ? 12 : 13);
    if (old) attr_int(&m, n, "axis", 1);
    expect_output(&m, x, DT_UINT8, old ? want12 : want13, sizeof want13,
                  old ? "softmax opset 12" : "softmax");
  }
}

/* QLinearReduceMean over axis 1 of [2, 3], keepdims 0: x * 0.5 = {0, 5, 10 |
 * 15, 20, 26}, means {5, 20.33} / 0.25 + 1 = {21, 82.33} -> {21, 82}. */
static void test_reduce_mean(void) {
  static const uint8_t x[6] = {0, 10, 20, 30, 40, 52}, want[2] = {21, 82};
  mb m;
  ms_model(&m);
  mb_input(&m, "x", U8, 2, (int64_t[]){2, 3}, NULL);
  scalar(&m, "xs", F32, 0.5), scalar(&m, "ys", F32, 0.25), scalar(&m, "yz", U8, 1);
  Onnx__NodeProto *n = ms_node(&m, "QLinearReduceMean", "x,xs,,ys,yz");
  attr_ints(&m, n, "axes", 1, (int64_t[]){1});
  attr_int(&m, n, "keepdims", 0);
  expect_output(&m, x, DT_UINT8, want, sizeof want, "QLinearReduceMean");
}

/* QGemm, A [2, 3] uint8 (a - 128) * 0.5 = {0.5, 0, -2 | -14, 6, 0}, B [2, 3]
 * int8 with transB (N = 2 rows of K = 3), per column scales {0.5, 0.25}: {0.5,
 * 1, 1.5 | -0.25, 0, 0.5}; C int32 {4, -8} at scale a_scale * b_scale =
 * {0.25, 0.125}: {1, -1}. A B' + C = {-2.75 + 1, -1.125 - 1 | -1 + 1, 3.5 -
 * 1} = {-1.75, -2.125, 0, 2.5}; / 0.125 + 20 = {6, 3, 20, 40}. Without
 * y_scale, alpha 2 and A given transposed (transA): the float output 2 A B'
 * + C at scale 2 a_scale b_scale = {-5.5 + 2, -2.25 - 2, -2 + 2, 7 - 2} =
 * {-3.5, -4.25, 0, 5}. */
static void test_qgemm(void) {
  static const uint8_t a[6] = {129, 128, 124, 100, 140, 128}, at[6] = {129, 100, 128, 140, 124, 128};
  static const int8_t b[6] = {1, 2, 3, -1, 0, 2}, bz[2] = {0, 0};
  static const int32_t c[2] = {4, -8};
  static const float bs[2] = {0.5f, 0.25f}, fwant[4] = {-3.5f, -4.25f, 0, 5};
  static const uint8_t want[4] = {6, 3, 20, 40};
  for (int fl = 0; fl < 2; fl++) {
    mb m;
    ms_model(&m);
    mb_input(&m, "a", U8, 2, fl ? (int64_t[]){3, 2} : (int64_t[]){2, 3}, NULL);
    scalar(&m, "as", F32, 0.5), scalar(&m, "az", U8, 128), scalar(&m, "ys", F32, 0.125),
        scalar(&m, "yz", U8, 20);
    mb_init_raw(&m, "b", I8, 2, (int64_t[]){2, 3}, b, sizeof b);
    mb_init_raw(&m, "bs", F32, 1, (int64_t[]){2}, bs, sizeof bs);
    mb_init_raw(&m, "bz", I8, 1, (int64_t[]){2}, bz, sizeof bz);
    mb_init_raw(&m, "c", I32, 1, (int64_t[]){2}, c, sizeof c);
    Onnx__NodeProto *n = ms_node(&m, "QGemm", fl ? "a,as,az,b,bs,bz,c" : "a,as,az,b,bs,bz,c,ys,yz");
    attr_int(&m, n, "transB", 1);
    if (fl) attr_int(&m, n, "transA", 1), attr_float(&m, n, "alpha", 2.0f);
    if (fl)
      expect_output(&m, at, DT_FLOAT32, fwant, sizeof fwant, "QGemm float output");
    else
      expect_output(&m, a, DT_UINT8, want, sizeof want, "QGemm");
  }
}

/* The domain: the names only from com.microsoft, imported by the model. */
static void test_domain(void) {
  mb m;
  ms_model(&m);
  mb_input(&m, "x", U8, 1, (int64_t[]){4}, NULL);
  scalar(&m, "xs", F32, 0.5), scalar(&m, "ys", F32, 0.5);
  ms_node(&m, "FusedGemm", "x,xs,,ys");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'q' (FusedGemm)", "op FusedGemm",
              "domain 'com.microsoft' is not supported", "QLinearAdd");
  mb_free(&m);

  ms_model(&m);
  mb_input(&m, "x", U8, 1, (int64_t[]){4}, NULL);
  scalar(&m, "xs", F32, 0.5), scalar(&m, "ys", F32, 0.5);
  ms_node(&m, "QLinearSigmoid", "x,xs,,ys")->domain = ""; /* the default domain has no QLinearSigmoid */
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'q' (QLinearSigmoid)", "no importer");
  mb_free(&m);

  mb_init(&m, 13); /* com.microsoft not imported */
  mb_input(&m, "x", U8, 1, (int64_t[]){4}, NULL);
  scalar(&m, "xs", F32, 0.5), scalar(&m, "ys", F32, 0.5);
  ms_node(&m, "QLinearSigmoid", "x,xs,,ys");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'q' (QLinearSigmoid)", "domain 'com.microsoft'",
              "opset_import");
  mb_free(&m);

  ms_model(&m); /* a default-domain name from com.microsoft */
  mb_input(&m, "x", F32, 1, (int64_t[]){4}, NULL);
  ms_node(&m, "Relu", "x");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'q' (Relu)", "op Relu of domain 'com.microsoft'");
  mb_free(&m);
}

/* A one-node model of `op` over input x (uint8 [1, 2, 2, 2]) whose parameters
 * are the initializers s (scale, value sv) and z (uint8 or int8 zero point,
 * dtype zt), named for every role; `ins` lists the node's inputs. */
static void bad_model(mb *m, const char *op, const char *ins, double sv, int zt) {
  static const int32_t c[1] = {0};
  ms_model(m);
  mb_input(m, "x", U8, 4, (int64_t[]){1, 2, 2, 2}, NULL);
  scalar(m, "s", F32, sv), scalar(m, "one", F32, 1), scalar(m, "z", zt, 0), scalar(m, "uz", U8, 0);
  mb_init_raw(m, "w", I8, 2, (int64_t[]){2, 2}, (int8_t[]){1, 2, 3, 4}, 4);
  mb_init_raw(m, "c", I32, 1, (int64_t[]){1}, c, sizeof c);
  mb_input(m, "f", U8, 2, (int64_t[]){2, 2}, NULL);
  Onnx__NodeProto *n = ms_node(m, op, ins);
  if (!strcmp(op, "QLinearConcat")) attr_int(m, n, "axis", 1);
  if (!strcmp(op, "QLinearSoftmax")) attr_int(m, n, "opset", 13);
  if (!strcmp(op, "QLinearReduceMean")) attr_ints(m, n, "axes", 1, (int64_t[]){1});
  if (!strcmp(op, "QLinearAveragePool")) attr_ints(m, n, "kernel_shape", 2, (int64_t[]){2, 2});
}

/* One malformed parameter per op, each refused naming the node and the field. */
static void test_refusals(void) {
  static const struct {
    const char *op, *ins;
    double scale;
    int zt;
    status want;
    const char *field, *why;
  } cases[] = {
      {"QLinearAdd", "x,,uz,x,one,uz,one,uz", 1, U8, ST_ERR_INVALID, "input 1 (A_scale)", "has no name"},
      {"QLinearAdd", "x,one,uz,x,s,uz,one,uz", 0, U8, ST_ERR_INVALID, "B_scale 's'", "finite and nonzero"},
      {"QLinearAdd", "x,one,uz,x,one,uz,one,z", 1, I8, ST_ERR_INVALID, "C_zero_point 'z'", "int8"},
      {"QLinearMul", "x,one,z,x,one,uz,one,uz", 1, I8, ST_ERR_INVALID, "A_zero_point 'z'", "uint8"},
      {"QLinearSigmoid", "x,one,uz,s,uz", 0, U8, ST_ERR_INVALID, "Y_scale 's'", "finite and nonzero"},
      {"QLinearLeakyRelu", "x,,uz,one,uz", 1, U8, ST_ERR_INVALID, "input 1 (X_scale)", "has no name"},
      {"QLinearGlobalAveragePool", "x,s,uz,one,uz", 0, U8, ST_ERR_INVALID, "x_scale 's'",
       "finite and nonzero"},
      {"QLinearAveragePool", "x,one,uz,one,z", 1, I8, ST_ERR_INVALID, "y_zero_point 'z'", "int8"},
      {"QLinearConcat", "one,uz,x,,uz", 1, U8, ST_ERR_INVALID, "input 3 (X1_scale)", "has no name"},
      {"QLinearSoftmax", "x,one,z,one,uz", 1, I8, ST_ERR_INVALID, "X_zero_point 'z'", "uint8"},
      {"QLinearReduceMean", "x,one,uz,s,uz", 0, U8, ST_ERR_INVALID, "reduced_scale 's'",
       "finite and nonzero"},
      {"QGemm", "f,one,uz,w,one,uz,c,,uz", 1, U8, ST_ERR_INVALID, "y_zero_point 'uz'", "without y_scale"},
      {"QGemm", "f,one,uz,w,s,z", 0, I8, ST_ERR_INVALID, "b_scale 's'", "finite and nonzero"},
      {"QGemm", "f,one,z,w,one,z", 1, I8, ST_ERR_INVALID, "a_zero_point 'z'", "uint8"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    mb m;
    bad_model(&m, cases[i].op, cases[i].ins, cases[i].scale, cases[i].zt);
    char node[64];
    snprintf(node, sizeof node, "node 'q' (%s)", cases[i].op);
    EXPECT_FAIL(&m, NULL, NULL, cases[i].want, node, cases[i].field, cases[i].why);
    mb_free(&m);
  }
}

/* x -> QuantizeLinear (u8) -> QLinearConv 1x1 (c); QLinearAdd(QLinearSigmoid(c),
 * QLinearLeakyRelu(c)) -> QLinearGlobalAveragePool -> DequantizeLinear -> y
 * [1, C, 1, 1], as ONNX Runtime's quantizer writes such a block in the
 * QOperator format. */
static void test_compiled_block(void) {
  enum { C = 32, H = 6, W = 6 };
  static int8_t w[C * C];
  static float x[C * H * W];
  float got[C];
  unsigned seed = 9;
  for (int i = 0; i < C * C; i++)
    w[i] = (int8_t)((int)((seed = seed * 1103515245u + 12345u) >> 8 & 255) - 128);
  for (int i = 0; i < C * H * W; i++)
    x[i] = ((float)((seed = seed * 1103515245u + 12345u) >> 8 & 2047) - 1024.0f) * 0.002f;
  mb m;
  ms_model(&m);
  mb_input(&m, "x", F32, 4, (int64_t[]){1, C, H, W}, NULL);
  scalar(&m, "xs", F32, 0.01), scalar(&m, "xz", U8, 128), scalar(&m, "ws", F32, 0.004),
      scalar(&m, "wz", I8, 0);
  scalar(&m, "cs", F32, 0.05), scalar(&m, "cz", U8, 120), scalar(&m, "ss", F32, 1.0 / 256),
      scalar(&m, "sz", U8, 0);
  scalar(&m, "as", F32, 0.06), scalar(&m, "az", U8, 100), scalar(&m, "ls", F32, 0.05),
      scalar(&m, "lz", U8, 20);
  scalar(&m, "gs", F32, 0.02), scalar(&m, "gz", U8, 10);
  mb_init_raw(&m, "w", I8, 4, (int64_t[]){C, C, 1, 1}, w, sizeof w);
  mb_node(&m, "QuantizeLinear", "q_x", "x,xs,xz", "xq");
  mb_node(&m, "QLinearConv", "conv", "xq,xs,xz,w,ws,wz,cs,cz", "c");
  mb_node(&m, "QLinearSigmoid", "sig", "c,cs,cz,ss,sz", "s")->domain = "com.microsoft";
  Onnx__NodeProto *lr = mb_node(&m, "QLinearLeakyRelu", "leaky", "c,cs,cz,ls,lz", "l");
  lr->domain = "com.microsoft";
  attr_float(&m, lr, "alpha", 0.2f);
  mb_node(&m, "QLinearAdd", "add", "s,ss,sz,l,ls,lz,as,az", "a")->domain = "com.microsoft";
  mb_node(&m, "QLinearGlobalAveragePool", "gap", "a,as,az,gs,gz", "g")->domain = "com.microsoft";
  mb_node(&m, "DequantizeLinear", "dq_y", "g,gs,gz", "y");
  mb_output(&m, "y");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  mb_run r;
  const void *in[1] = {x};
  void *out[1] = {got};
  int ran = 0;
  if (mb_run_open(&m, "qop_block.onnx", OM_PRECISION_FORCE_FP16, &r)) {
    ran = omrt_execute(r.ctx, in, out) == OMRT_OK;
    CHECK(ran);
    CHECK_EQ_INT(mb_count_tasks(r.model, OM_TASK_QCONV2D), 1);
    CHECK_EQ_INT(mb_count_tasks(r.model, OM_TASK_QLUT), 2);
    CHECK_EQ_INT(mb_count_tasks(r.model, OM_TASK_QELTWISE), 1);
    CHECK_EQ_INT(mb_count_tasks(r.model, OM_TASK_CONV2D), 0);
  }
  arena a;
  arena_init(&a, 0);
  void *ref[1];
  if (ran && g && mb_eval(g, in, ref, &a) == 0) {
    int bad = 0;
    for (int i = 0; i < C; i++)
      if (fabsf(((const float *)ref[0])[i] - got[i]) > 0.02f * 1.01f && bad++ < 4)
        test_note("  y[%d] = %g, the evaluator's %g", i, got[i], ((const float *)ref[0])[i]);
    CHECK(bad == 0);
  } else {
    CHECK(!"the block runs and evaluates");
  }
  arena_free(&a);
  mb_run_close(&r);
  ir_graph_free(g);
}

int main(void) {
  test_binary();
  test_unary();
  test_global_average_pool();
  test_average_pool();
  test_concat();
  test_softmax();
  test_reduce_mean();
  test_qgemm();
  test_domain();
  test_refusals();
  test_compiled_block();
  return test_summary("test_frontend_qms");
}
