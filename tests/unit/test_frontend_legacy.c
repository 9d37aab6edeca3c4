/* test_frontend_legacy.c - what old exports carry: ONNX's experimental ops
 * (frontend/onnx_decomp_experimental.c: ImageScaler, Scale, Affine,
 * ScaledTanh, ParametricSoftplus and Crop, in an opset-8 model) and, before
 * opset 7, broadcasting with an axis and BatchNormalization with is_test
 * (frontend/onnx_ops.c). Each is evaluated by the reference evaluator over
 * the imported graph against the formula computed here; the refusals (a
 * required attribute missing, a bias of the wrong length, a crop window
 * outside the input, an axis that does not fit) name the node and the
 * attribute. Models are built with onnx_mb.h. */
#include "ir/eval.h"
#include "onnx_mb.h"

enum { N = 2, C = 3, H = 5, W = 6, SIZE = N * C * H * W };

static float x[SIZE];

static float frand(unsigned *seed) {
  *seed = *seed * 1103515245u + 12345u;
  return (float)((*seed >> 8) & 0xffff) / 8192.0f - 4.0f;
}

/* A model of the one node `op` (named "e") over x [N, C, H, W] writing y;
 * the caller sets its attributes through *node. */
static void one_node(mb *m, const char *op, Onnx__NodeProto **node) {
  mb_init(m, 8);
  mb_input(m, "x", 1, 4, (int64_t[]){N, C, H, W}, NULL);
  *node = mb_node(m, op, "e", "x", "y");
  mb_output(m, "y");
}

/* Imports m, evaluates it on x and compares y with want (count values) to a
 * relative 1e-6; the output's dims must be `dims`. */
static void check_eval(mb *m, const char *what, const int64_t *dims, const float *want, int count) {

  ir_graph *g = EXPECT_OK(m, NULL, NULL);
  if (g) {
    const ir_value *y = g->outputs[0];
    CHECK(y->rank == 4 && !memcmp(y->dims, dims, 4 * sizeof *dims));
    arena a;
    arena_init(&a, 0);
    const void *in[1] = {x};
    void *out[1];
    if (!mb_eval(g, in, out, &a)) {
      const float *got = out[0];
      double worst = 0;
      for (int i = 0; i < count; i++)
        worst = fmax(worst, fabs(got[i] - want[i]) / fmax(1.0, fabs(want[i])));
      CHECK(worst < 1e-6);
      if (worst >= 1e-6) test_note("  %s: max relative error %g", what, worst);
    } else {
      CHECK(!"evaluates");
      test_note("  %s does not evaluate", what);
    }
    arena_free(&a);
  }
  ir_graph_free(g);
  mb_free(m);
}

static void test_elementwise(void) {
  static const int64_t same[4] = {N, C, H, W};
  static float want[SIZE];
  const float bias[C] = {0.5f, -1.0f, 2.0f};
  mb m;
  Onnx__NodeProto *n;

  one_node(&m, "ImageScaler", &n);
  attr_float(&m, n, "scale", 0.25f);
  attr_floats(&m, n, "bias", C, bias);
  for (int i = 0; i < SIZE; i++)
    want[i] = x[i] * 0.25f + bias[i / (H * W) % C];
  check_eval(&m, "ImageScaler", same, want, SIZE);

  one_node(&m, "ImageScaler", &n); /* scale defaults to 1 */
  attr_floats(&m, n, "bias", C, bias);
  for (int i = 0; i < SIZE; i++)
    want[i] = x[i] + bias[i / (H * W) % C];
  check_eval(&m, "ImageScaler without scale", same, want, SIZE);

  one_node(&m, "Scale", &n);
  attr_float(&m, n, "scale", -3.0f);
  for (int i = 0; i < SIZE; i++)
    want[i] = x[i] * -3.0f;
  check_eval(&m, "Scale", same, want, SIZE);

  one_node(&m, "Scale", &n); /* scale 1: x itself, copied to y */
  check_eval(&m, "Scale with its default", same, x, SIZE);

  one_node(&m, "Affine", &n);
  attr_float(&m, n, "alpha", 2.0f);
  attr_float(&m, n, "beta", -0.5f);
  for (int i = 0; i < SIZE; i++)
    want[i] = 2.0f * x[i] - 0.5f;
  check_eval(&m, "Affine", same, want, SIZE);

  one_node(&m, "Affine", &n); /* alpha 1, beta 0 */
  check_eval(&m, "Affine with defaults", same, x, SIZE);

  one_node(&m, "ScaledTanh", &n);
  attr_float(&m, n, "alpha", 1.5f);
  attr_float(&m, n, "beta", 0.5f);
  for (int i = 0; i < SIZE; i++)
    want[i] = (float)(1.5 * tanh(0.5 * x[i]));
  check_eval(&m, "ScaledTanh", same, want, SIZE);

  one_node(&m, "ParametricSoftplus", &n);
  attr_float(&m, n, "alpha", 2.0f);
  attr_float(&m, n, "beta", 0.75f);
  for (int i = 0; i < SIZE; i++)
    want[i] = (float)(2.0 * log1p(exp(0.75 * x[i])));
  check_eval(&m, "ParametricSoftplus", same, want, SIZE);
}

/* x's window rows [r0, r0 + h), columns [c0, c0 + w) into want. */
static int window(float *want, int r0, int h, int c0, int w) {
  int k = 0;
  for (int nc = 0; nc < N * C; nc++)
    for (int r = r0; r < r0 + h; r++)
      for (int c = c0; c < c0 + w; c++)
        want[k++] = x[(nc * H + r) * W + c];
  return k;
}

static void test_crop(void) {
  static float want[SIZE];
  mb m;
  Onnx__NodeProto *n;

  /* border [left 1, top 2, right 2, bottom 1]: rows 2..3, columns 1..3 */
  one_node(&m, "Crop", &n);
  attr_ints(&m, n, "border", 4, (int64_t[]){1, 2, 2, 1});
  int k = window(want, 2, H - 3, 1, W - 3);
  check_eval(&m, "Crop", (int64_t[]){N, C, H - 3, W - 3}, want, k);

  /* with scale [2, 4]: rows top .. top + 2, columns left .. left + 4 */
  one_node(&m, "Crop", &n);
  attr_ints(&m, n, "border", 4, (int64_t[]){2, 1, 0, 0});
  attr_ints(&m, n, "scale", 2, (int64_t[]){2, 4});
  k = window(want, 1, 2, 2, 4);
  check_eval(&m, "Crop with scale", (int64_t[]){N, C, 2, 4}, want, k);
}

static void test_refusals(void) {
  mb m;
  Onnx__NodeProto *n;

  one_node(&m, "ImageScaler", &n);
  attr_float(&m, n, "scale", 2.0f);
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'e' (ImageScaler)", "'bias' is required");
  mb_free(&m);

  one_node(&m, "ImageScaler", &n);
  attr_floats(&m, n, "bias", 2, (float[]){1.0f, 2.0f});
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'e' (ImageScaler)", "'bias' has 2 values", "3 channels");
  mb_free(&m);

  one_node(&m, "ScaledTanh", &n);
  attr_float(&m, n, "alpha", 2.0f);
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'e' (ScaledTanh)", "'beta' is required");
  mb_free(&m);

  one_node(&m, "ParametricSoftplus", &n);
  attr_float(&m, n, "beta", 2.0f);
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'e' (ParametricSoftplus)", "'alpha' is required");
  mb_free(&m);

  one_node(&m, "Crop", &n);
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'e' (Crop)", "'border'", "required");
  mb_free(&m);

  one_node(&m, "Crop", &n);
  attr_ints(&m, n, "border", 4, (int64_t[]){0, 4, 0, 0});
  attr_ints(&m, n, "scale", 2, (int64_t[]){2, 2});
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'e' (Crop)", "rows [4, 6)", "outside");
  mb_free(&m);

  one_node(&m, "Crop", &n);
  attr_ints(&m, n, "border", 4, (int64_t[]){0, -1, 0, 0});
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'e' (Crop)", "'border' value 1 (-1) is negative");
  mb_free(&m);
}

/* Before opset 7: Add with broadcast = 1 and axis = 1 (a per-channel bias),
 * BatchNormalization-6 with is_test, Mul with axis = 3 (along W). */
static void test_opset6(void) {
  static const int64_t same[4] = {N, C, H, W};
  static float want[SIZE];
  const float bias[C] = {0.5f, -1.0f, 2.0f}, scale[C] = {1.5f, 0.5f, -1.0f}, shift[C] = {0.1f, 0.2f, -0.3f},
              mean[C] = {0.25f, -0.5f, 1.0f}, var[C] = {2.0f, 0.5f, 1.0f}, row[W] = {1, 2, 3, -1, -2, 0.5f};
  mb m;
  mb_init(&m, 6);
  mb_input(&m, "x", 1, 4, (int64_t[]){N, C, H, W}, NULL);
  mb_init_raw(&m, "bias", 1, 1, (int64_t[]){C}, bias, sizeof bias);
  mb_init_raw(&m, "scale", 1, 1, (int64_t[]){C}, scale, sizeof scale);
  mb_init_raw(&m, "shift", 1, 1, (int64_t[]){C}, shift, sizeof shift);
  mb_init_raw(&m, "mean", 1, 1, (int64_t[]){C}, mean, sizeof mean);
  mb_init_raw(&m, "var", 1, 1, (int64_t[]){C}, var, sizeof var);
  mb_init_raw(&m, "row", 1, 1, (int64_t[]){W}, row, sizeof row);
  Onnx__NodeProto *n = mb_node(&m, "Add", "add", "x,bias", "a");
  attr_int(&m, n, "broadcast", 1);
  attr_int(&m, n, "axis", 1);
  n = mb_node(&m, "BatchNormalization", "bn", "a,scale,shift,mean,var", "b");
  attr_int(&m, n, "is_test", 1);
  attr_int(&m, n, "spatial", 1);
  attr_float(&m, n, "epsilon", 1e-3f);
  n = mb_node(&m, "Mul", "mul", "b,row", "y");
  attr_int(&m, n, "broadcast", 1);
  attr_int(&m, n, "axis", 3);
  mb_output(&m, "y");
  for (int i = 0; i < SIZE; i++) {
    int c = i / (H * W) % C;
    double a = x[i] + bias[c];
    want[i] = (float)(((a - mean[c]) / sqrt(var[c] + 1e-3) * scale[c] + shift[c]) * row[i % W]);
  }
  check_eval(&m, "opset-6 Add / BatchNormalization / Mul", same, want, SIZE);

  /* axis = 2 would put B's 3 dims at dims 2..4 of a rank-4 A */
  mb_init(&m, 6);
  mb_input(&m, "x", 1, 4, (int64_t[]){N, C, H, W}, NULL);
  mb_init_raw(&m, "b", 1, 3, (int64_t[]){C, H, W}, x, C * H * W * sizeof *x);
  n = mb_node(&m, "Add", "add", "x,b", "y");
  attr_int(&m, n, "broadcast", 1);
  attr_int(&m, n, "axis", 2);
  mb_output(&m, "y");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'add' (Add)", "axis = 2", "3 dims of 'b'",
              "4 dims of 'x'");
  mb_free(&m);

  /* consumed_inputs went in opset 6: refused there, as any removed attribute */
  mb_init(&m, 6);
  mb_input(&m, "x", 1, 4, (int64_t[]){N, C, H, W}, NULL);
  mb_init_raw(&m, "scale", 1, 1, (int64_t[]){C}, scale, sizeof scale);
  mb_init_raw(&m, "shift", 1, 1, (int64_t[]){C}, shift, sizeof shift);
  mb_init_raw(&m, "mean", 1, 1, (int64_t[]){C}, mean, sizeof mean);
  mb_init_raw(&m, "var", 1, 1, (int64_t[]){C}, var, sizeof var);
  n = mb_node(&m, "BatchNormalization", "bn", "x,scale,shift,mean,var", "y");
  attr_ints(&m, n, "consumed_inputs", 5, (int64_t[]){0, 0, 0, 1, 1});
  mb_output(&m, "y");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'bn' (BatchNormalization)", "'consumed_inputs'");
  mb_free(&m);
}

int main(void) {
  unsigned seed = 11;
  for (int i = 0; i < SIZE; i++)
    x[i] = frand(&seed);
  test_elementwise();
  test_crop();
  test_refusals();
  test_opset6();
  return test_summary("test_frontend_legacy");
}
