/* test_frontend_qlinear.c - the quantized compute ops at import
 * (frontend/onnx_decomp_quant.c): QLinearConv and QLinearMatMul become
 * DequantizeLinear -> Conv / MatMul -> QuantizeLinear, ConvInteger and
 * MatMulInteger an integer-valued float computation; their results (shape
 * inference, then the reference evaluator) against ONNX's integer
 * definition computed here; and the refusals, each naming the node and the
 * field: a scale of 0 or NaN, a zero point of the wrong type, a per-channel
 * parameter of the wrong length, an int32 result that cannot be exact (a
 * grouped conv or one input channel past 2^24); the reductions past 2^24
 * split into exact chunks. */
#include "ir/eval.h"
#include "onnx_mb.h"
#include "passes/pass.h"

static unsigned next(unsigned *seed) { return *seed = *seed * 1103515245u + 12345u, (*seed >> 8) & 0xffff; }

/* ONNX's requantization of one int32 sum: saturate(round_half_even(acc * multiplier) + zp). */
static int requant(int64_t acc, double multiplier, int zp, int lo, int hi, int *tie) {
  double r = (double)acc * multiplier, f = r - floor(r);
  *tie = fabs(f - 0.5) < 1e-4; /* within float rounding of a tie: either side is right */
  double v = nearbyint(r) + zp;
  return v < lo ? lo : v > hi ? hi : (int)v;
}

/* QLinearConv: uint8 x [1, 2, 5, 5], int8 w [3, 2, 3, 3] per output
 * channel, int32 bias, pads 1, stride 2. */
static void test_qlinear_conv(void) {
  enum { C = 2, H = 5, M = 3, K = 3, OH = 3 };
  uint8_t x[C * H * H], xz = 120, yz = 100;
  int8_t w[M * C * K * K], wz[M] = {0, 0, 0};
  int32_t bias[M] = {300, -250, 0};
  float xs = 0.02f, ws[M] = {0.01f, 0.004f, 0.03f}, ys = 0.05f;
  unsigned seed = 5;
  for (int i = 0; i < C * H * H; i++)
    x[i] = (uint8_t)(next(&seed) & 0xff);
  for (int i = 0; i < M * C * K * K; i++)
    w[i] = (int8_t)((int)(next(&seed) % 255) - 127);
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", 2, 4, (int64_t[]){1, C, H, H}, NULL);
  mb_init_raw(&m, "xs", 1, 0, NULL, &xs, sizeof xs);
  mb_init_raw(&m, "xz", 2, 0, NULL, &xz, 1);
  mb_init_raw(&m, "w", 3, 4, (int64_t[]){M, C, K, K}, w, sizeof w);
  mb_init_raw(&m, "ws", 1, 1, (int64_t[]){M}, ws, sizeof ws);
  mb_init_raw(&m, "wz", 3, 1, (int64_t[]){M}, wz, sizeof wz);
  mb_init_raw(&m, "ys", 1, 0, NULL, &ys, sizeof ys);
  mb_init_raw(&m, "yz", 2, 0, NULL, &yz, 1);
  mb_init_raw(&m, "b", 6, 1, (int64_t[]){M}, bias, sizeof bias);
  Onnx__NodeProto *n = mb_node(&m, "QLinearConv", "qc", "x,xs,xz,w,ws,wz,ys,yz,b", "y");
  attr_ints(&m, n, "pads", 4, (int64_t[]){1, 1, 1, 1});
  attr_ints(&m, n, "strides", 2, (int64_t[]){2, 2});
  mb_output(&m, "y");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    const ir_node *conv = find_node(g, IR_OP_CONV);
    CHECK(conv && conv->in[0]->producer && conv->in[0]->producer->op == IR_OP_DEQUANTIZE &&
          conv->in[1]->producer && conv->in[1]->producer->op == IR_OP_DEQUANTIZE && conv->nin == 3);
    CHECK(g->outputs[0]->producer && g->outputs[0]->producer->op == IR_OP_QUANTIZE &&
          g->outputs[0]->producer->in[0] == conv->out[0] && g->outputs[0]->dtype == DT_UINT8);
    arena a;
    arena_init(&a, 0);
    const void *in[1] = {x};
    void *out[1];
    if (!mb_eval(g, in, out, &a)) {
      const uint8_t *y = out[0];
      int bad = 0;
      for (int mo = 0; mo < M; mo++)
        for (int oy = 0; oy < OH; oy++)
          for (int ox = 0; ox < OH; ox++) {
            int64_t acc = bias[mo];
            for (int c = 0; c < C; c++)
              for (int ky = 0; ky < K; ky++)
                for (int kx = 0; kx < K; kx++) {
                  int iy = oy * 2 - 1 + ky, ix = ox * 2 - 1 + kx;
                  if (iy < 0 || iy >= H || ix < 0 || ix >= H) continue;
                  acc += (int64_t)(x[(c * H + iy) * H + ix] - xz) *
                         (w[((mo * C + c) * K + ky) * K + kx] - wz[mo]);
                }
            int tie, want = requant(acc, (double)(xs * ws[mo]) / ys, yz, 0, 255, &tie);
            int got = y[(mo * OH + oy) * OH + ox];
            if (got != want && !(tie && abs(got - want) == 1) && bad++ < 4)
              test_note("  y[%d,%d,%d] = %d, want %d", mo, oy, ox, got, want);
          }
      CHECK(bad == 0);
    } else {
      CHECK(!"QLinearConv evaluates");
    }
    arena_free(&a);
  }
  ir_graph_free(g);
  mb_free(&m);
}

/* QLinearMatMul: int8 a [2, 3, 4] per tensor, b [4, 5] per column. */
static void test_qlinear_matmul(void) {
  enum { B = 2, R = 3, K = 4, N = 5 };
  int8_t a[B * R * K], bm[K * N], az = -3, bz[N] = {1, -2, 0, 4, -5}, yz = 7;
  float as = 0.05f, bs[N] = {0.02f, 0.01f, 0.03f, 0.015f, 0.025f}, ys = 0.04f;
  unsigned seed = 11;
  for (int i = 0; i < B * R * K; i++)
    a[i] = (int8_t)((int)(next(&seed) & 0xff) - 128);
  for (int i = 0; i < K * N; i++)
    bm[i] = (int8_t)((int)(next(&seed) & 0xff) - 128);
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "a", 3, 3, (int64_t[]){B, R, K}, NULL);
  mb_init_raw(&m, "as", 1, 1, (int64_t[]){1}, &as, sizeof as);
  mb_init_raw(&m, "az", 3, 1, (int64_t[]){1}, &az, 1);
  mb_init_raw(&m, "b", 3, 2, (int64_t[]){K, N}, bm, sizeof bm);
  mb_init_raw(&m, "bs", 1, 1, (int64_t[]){N}, bs, sizeof bs);
  mb_init_raw(&m, "bz", 3, 1, (int64_t[]){N}, bz, sizeof bz);
  mb_init_raw(&m, "ys", 1, 0, NULL, &ys, sizeof ys);
  mb_init_raw(&m, "yz", 3, 0, NULL, &yz, 1);
  mb_node(&m, "QLinearMatMul", "qm", "a,as,az,b,bs,bz,ys,yz", "y");
  mb_output(&m, "y");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    CHECK(mb_count_ops(g, IR_OP_MATMUL) == 1 && mb_count_ops(g, IR_OP_DEQUANTIZE) == 2 &&
          mb_count_ops(g, IR_OP_QUANTIZE) == 1);
    arena ar;
    arena_init(&ar, 0);
    const void *in[1] = {a};
    void *out[1];
    if (!mb_eval(g, in, out, &ar)) {
      const int8_t *y = out[0];
      int bad = 0;
      for (int i = 0; i < B * R; i++)
        for (int j = 0; j < N; j++) {
          int64_t acc = 0;
          for (int k = 0; k < K; k++)
            acc += (int64_t)(a[i * K + k] - az) * (bm[k * N + j] - bz[j]);
          int tie, want = requant(acc, (double)(as * bs[j]) / ys, yz, -128, 127, &tie), got = y[i * N + j];
          if (got != want && !(tie && abs(got - want) == 1) && bad++ < 4)
            test_note("  y[%d,%d] = %d, want %d", i, j, got, want);
        }
      CHECK(bad == 0);
    } else {
      CHECK(!"QLinearMatMul evaluates");
    }
    arena_free(&ar);
  }
  ir_graph_free(g);
  mb_free(&m);
}

/* Evaluates g on in and checks its int32 output against want[rows x cols]
 * (the exact integer sums), noting the first few mismatches. */
static void expect_int32(ir_graph *g, const void **in, const int64_t *want, int rows, int cols,
                         const char *what) {
  arena a;
  arena_init(&a, 0);
  void *out[1];
  if (!mb_eval(g, in, out, &a)) {
    const int32_t *y = out[0];
    int bad = 0;
    for (int i = 0; i < rows * cols; i++)
      if (y[i] != want[i] && bad++ < 4)
        test_note("  %s y[%d,%d] = %d, want %lld", what, i / cols, i % cols, y[i], (long long)want[i]);
    CHECK(bad == 0);
  } else {
    test_note("  %s does not evaluate", what);
    CHECK(!"evaluates");
  }
  arena_free(&a);
}

/* ConvInteger and MatMulInteger: int32 results equal to the integer sums. */
static void test_integer_ops(void) {
  enum { C = 3, H = 4, M = 2, K = 2, OH = 3, R = 3, KK = 5, N = 4 };
  uint8_t x[C * H * H], xz = 128, w[M * C * K * K], wz[M] = {3, 250};
  unsigned seed = 3;
  for (int i = 0; i < C * H * H; i++)
    x[i] = (uint8_t)next(&seed);
  for (int i = 0; i < M * C * K * K; i++)
    w[i] = (uint8_t)next(&seed);
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", 2, 4, (int64_t[]){1, C, H, H}, NULL);
  mb_init_raw(&m, "w", 2, 4, (int64_t[]){M, C, K, K}, w, sizeof w);
  mb_init_raw(&m, "xz", 2, 0, NULL, &xz, 1);
  mb_init_raw(&m, "wz", 2, 1, (int64_t[]){M}, wz, sizeof wz);
  mb_node(&m, "ConvInteger", "ci", "x,w,xz,wz", "y");
  mb_output(&m, "y");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    CHECK(mb_count_ops(g, IR_OP_CONV) == 1 && g->outputs[0]->dtype == DT_INT32);
    int64_t want[M * OH * OH];
    for (int mo = 0; mo < M; mo++)
      for (int p = 0; p < OH * OH; p++) {
        int64_t acc = 0;
        for (int c = 0; c < C; c++)
          for (int k = 0; k < K * K; k++)
            acc += (int64_t)(x[(c * H + p / OH + k / K) * H + p % OH + k % K] - xz) *
                   (w[(mo * C + c) * K * K + k] - wz[mo]);
        want[mo * OH * OH + p] = acc;
      }
    expect_int32(g, (const void *[]){x}, want, M, OH * OH, "ConvInteger");
  }
  ir_graph_free(g);
  mb_free(&m);

  int8_t A[R * KK], Bm[KK * N], az[R] = {-1, 0, 5}, bz = -7;
  for (int i = 0; i < R * KK; i++)
    A[i] = (int8_t)next(&seed);
  for (int i = 0; i < KK * N; i++)
    Bm[i] = (int8_t)next(&seed);
  mb_init(&m, 13);
  mb_input(&m, "A", 3, 2, (int64_t[]){R, KK}, NULL);
  mb_init_raw(&m, "B", 3, 2, (int64_t[]){KK, N}, Bm, sizeof Bm);
  mb_init_raw(&m, "az", 3, 1, (int64_t[]){R}, az, sizeof az);
  mb_init_raw(&m, "bz", 3, 0, NULL, &bz, 1);
  mb_node(&m, "MatMulInteger", "mi", "A,B,az,bz", "y");
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    int64_t want[R * N];
    for (int i = 0; i < R; i++)
      for (int j = 0; j < N; j++) {
        int64_t acc = 0;
        for (int k = 0; k < KK; k++)
          acc += (int64_t)(A[i * KK + k] - az[i]) * (Bm[k * N + j] - bz);
        want[i * N + j] = acc;
      }
    expect_int32(g, (const void *[]){A}, want, R, N, "MatMulInteger");
  }
  ir_graph_free(g);
  mb_free(&m);
}

/* One MatMulInteger A u8 [3, K] (a graph input) x B [K, 20] with a_zero_point
 * az (a run-time scalar input, or per row: 3 constants) and b_zero_point bz
 * (absent when bz_type is 0); B constant unless b_input. It imports as one
 * QMatMul exactly when `fits` (onnx_decomp_quant.c qmatmul_fits), else as
 * the float chunks; either way the int32 result is the exact sums. */
static void qmatmul_case(const char *what, int k, int b_type, int b_input, int per_row, int bz_type, int bz,
                         int fits) {
  enum { R = 3, N = 20 };
  uint8_t A[R * 40], B[40 * N], az[R] = {255, 0, 17};
  unsigned seed = 11;
  for (int i = 0; i < R * k; i++)
    A[i] = (uint8_t)next(&seed);
  for (int i = 0; i < k * N; i++)
    B[i] = (uint8_t)next(&seed);
  uint8_t bzv = (uint8_t)bz;
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "A", 2, 2, (int64_t[]){R, k}, NULL);
  if (b_input)
    mb_input(&m, "B", b_type, 2, (int64_t[]){k, N}, NULL);
  else
    mb_init_raw(&m, "B", b_type, 2, (int64_t[]){k, N}, B, (size_t)(k * N));
  if (per_row)
    mb_init_raw(&m, "az", 2, 1, (int64_t[]){R}, az, sizeof az);
  else
    mb_input(&m, "az", 2, 0, NULL, NULL);
  if (bz_type) mb_init_raw(&m, "bz", bz_type, 0, NULL, &bzv, 1);
  mb_node(&m, "MatMulInteger", "mi", bz_type ? "A,B,az,bz" : "A,B,az", "y");
  mb_output(&m, "y");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    const int q = mb_count_ops(g, IR_OP_QMATMUL);
    CHECK_EQ_INT(q, fits);
    CHECK(fits || mb_count_ops(g, IR_OP_MATMUL) >= 1);
    if (q != fits) test_note("  %s: %d QMatMul", what, q);
    int64_t want[R * N];
    for (int i = 0; i < R; i++)
      for (int j = 0; j < N; j++) {
        int64_t acc = 0;
        for (int kk = 0; kk < k; kk++) {
          const int64_t b = b_type == 3 ? (int8_t)B[kk * N + j] : B[kk * N + j];
          const int64_t bzs = b_type == 3 ? (int8_t)bzv : bzv;
          acc += (int64_t)(A[i * k + kk] - az[per_row ? i : 0]) * (b - (bz_type ? bzs : 0));
        }
        want[i * N + j] = acc;
      }
    const void *in_rt[3] = {A, b_input ? (const void *)B : (const void *)az, az};
    expect_int32(g, in_rt, want, R, N, what);
  }
  ir_graph_free(g);
  mb_free(&m);
}

/* MatMulInteger as one QMatMul: u8 A with a per-tensor zero point, constant
 * i8 B with a zero point absent or 0, K a multiple of 4; every other form
 * keeps the float chunks. */
static void test_qmatmul_import(void) {
  qmatmul_case("i8 B, no b_zero_point", 40, 3, 0, 0, 0, 0, 1);
  qmatmul_case("i8 B, b_zero_point 0", 8, 3, 0, 0, 3, 0, 1);
  qmatmul_case("b_zero_point 3", 8, 3, 0, 0, 3, 3, 0);
  qmatmul_case("u8 B", 8, 2, 0, 0, 0, 0, 0);
  qmatmul_case("B a graph input", 8, 3, 1, 0, 0, 0, 0);
  qmatmul_case("K = 6", 6, 3, 0, 0, 0, 0, 0);
  qmatmul_case("a_zero_point per row", 8, 3, 0, 1, 0, 0, 0);
}

/* A QLinearConv x [1, 1, 3, 3] uint8 with w [2, 1, 1, 1]; the parameters
 * given (dtype, count, data) replace the defaults by name. */
static void qconv_model(mb *m, float xs, int zp_dtype, int ws_count, float ys) {
  static const uint8_t w[2] = {1, 2}, zp = 0;
  float ws[3] = {0.5f, 0.5f, 0.5f};
  mb_init(m, 13);
  mb_input(m, "x", 2, 4, (int64_t[]){1, 1, 3, 3}, NULL);
  mb_init_raw(m, "xs", 1, 0, NULL, &xs, sizeof xs);
  if (zp_dtype == 6)
    mb_init_raw(m, "xz", 6, 0, NULL, (int32_t[]){0}, 4);
  else
    mb_init_raw(m, "xz", zp_dtype, 0, NULL, &zp, 1);
  mb_init_raw(m, "w", 2, 4, (int64_t[]){2, 1, 1, 1}, w, sizeof w);
  mb_init_raw(m, "ws", 1, 1, (int64_t[]){ws_count}, ws, (size_t)ws_count * sizeof *ws);
  mb_init_raw(m, "wz", 2, 0, NULL, &zp, 1);
  mb_init_raw(m, "ys", 1, 0, NULL, &ys, sizeof ys);
  mb_init_raw(m, "yz", 2, 0, NULL, &zp, 1);
  mb_node(m, "QLinearConv", "qc", "x,xs,xz,w,ws,wz,ys,yz", "y");
  mb_output(m, "y");
}

static void test_refusals(void) {
  mb m;
  qconv_model(&m, 0.0f, 2, 2, 1.0f);
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'qc' (QLinearConv)", "x_scale 'xs'",
              "finite and nonzero");
  mb_free(&m);
  qconv_model(&m, 1.0f, 2, 2, NAN);
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'qc' (QLinearConv)", "y_scale 'ys'",
              "finite and nonzero");
  mb_free(&m);
  qconv_model(&m, INFINITY, 2, 2, 1.0f);
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'qc' (QLinearConv)", "x_scale 'xs'");
  mb_free(&m);
  qconv_model(&m, 1.0f, 3, 2, 1.0f); /* int8 zero point for uint8 x */
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'qc' (QLinearConv)", "x_zero_point 'xz'", "uint8");
  mb_free(&m);
  qconv_model(&m, 1.0f, 6, 2, 1.0f); /* int32 zero point */
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'qc' (QLinearConv)", "x_zero_point 'xz'", "int32");
  mb_free(&m);
  qconv_model(&m, 1.0f, 2, 3, 1.0f); /* 3 scales for 2 output channels */
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'qc' (QLinearConv)", "w_scale 'ws' has 3 elements",
              "axis 0");
  mb_free(&m);

  /* a grouped ConvInteger whose sums can pass 2^24 (its channels cannot split) */
  enum { GC = 40 };
  static uint8_t gw[2 * GC * 9];
  memset(gw, 255, sizeof gw);
  mb_init(&m, 13);
  mb_input(&m, "x", 2, 4, (int64_t[]){1, 2 * GC, 3, 3}, NULL);
  mb_init_raw(&m, "w", 2, 4, (int64_t[]){2, GC, 3, 3}, gw, sizeof gw);
  attr_int(&m, mb_node(&m, "ConvInteger", "ci", "x,w", "y"), "group", 2);
  mb_output(&m, "y");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'ci' (ConvInteger)", "grouped convolution",
              "360 products");
  mb_free(&m);
  /* one input channel's 17 x 17 taps of 255 x 255 alone can pass it */
  static uint8_t bw[17 * 17];
  memset(bw, 255, sizeof bw);
  mb_init(&m, 13);
  mb_input(&m, "x", 2, 4, (int64_t[]){1, 1, 17, 17}, NULL);
  mb_init_raw(&m, "w", 2, 4, (int64_t[]){1, 1, 17, 17}, bw, sizeof bw);
  mb_node(&m, "ConvInteger", "ci", "x,w", "y");
  mb_output(&m, "y");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'ci' (ConvInteger)",
              "one input channel's 289 products");
  mb_free(&m);
}

/* Sums past float32's exact integers (2^24): the reduction split into
 * chunks, each exact, added in int32. MatMulInteger u8 x u8 of K = 700
 * (the old import refused K above 258), rows of all 255 (sum 700 * 255^2 =
 * 45.5e6) and random ones, a run-time zero point (the widest bound); and a
 * ConvInteger 3x3 over 40 channels of 255s (9 * 40 * 255^2 = 23.4e6). */
static void test_integer_chunks(void) {
  enum { R = 3, KK = 700, N = 5 };
  static uint8_t A[R * KK], Bm[KK * N];
  uint8_t az = 0;
  unsigned seed = 11;
  for (int i = 0; i < R * KK; i++)
    A[i] = i < KK ? 255 : (uint8_t)next(&seed);
  for (int i = 0; i < KK * N; i++)
    Bm[i] = i % N == 0 ? 255 : (uint8_t)next(&seed);
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "A", 2, 2, (int64_t[]){R, KK}, NULL);
  mb_init_raw(&m, "B", 2, 2, (int64_t[]){KK, N}, Bm, sizeof Bm);
  mb_input(&m, "az", 2, 0, NULL, NULL);
  mb_node(&m, "MatMulInteger", "mi", "A,B,az", "y");
  mb_output(&m, "y");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    CHECK(mb_count_ops(g, IR_OP_MATMUL) > 1);
    static int64_t want[R * N];
    for (int i = 0; i < R; i++)
      for (int j = 0; j < N; j++) {
        int64_t acc = 0;
        for (int k = 0; k < KK; k++)
          acc += (int64_t)A[i * KK + k] * Bm[k * N + j];
        want[i * N + j] = acc;
      }
    CHECK(want[0] == 700 * 255 * 255);
    expect_int32(g, (const void *[]){A, &az}, want, R, N, "MatMulInteger");
  }
  ir_graph_free(g);
  mb_free(&m);

  enum { C = 40, H = 4, OH = 2 };
  static uint8_t x[C * H * H], w[2 * C * 9];
  for (int i = 0; i < C * H * H; i++)
    x[i] = i % 3 ? 255 : (uint8_t)next(&seed);
  for (int i = 0; i < 2 * C * 9; i++)
    w[i] = i < C * 9 ? 255 : (uint8_t)next(&seed);
  mb_init(&m, 13);
  mb_input(&m, "x", 2, 4, (int64_t[]){1, C, H, H}, NULL);
  mb_init_raw(&m, "w", 2, 4, (int64_t[]){2, C, 3, 3}, w, sizeof w);
  mb_node(&m, "ConvInteger", "ci", "x,w", "y");
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    CHECK(mb_count_ops(g, IR_OP_CONV) > 1);
    int64_t want[2 * OH * OH];
    for (int mo = 0; mo < 2; mo++)
      for (int p = 0; p < OH * OH; p++) {
        int64_t acc = 0;
        for (int c = 0; c < C; c++)
          for (int k = 0; k < 9; k++)
            acc += (int64_t)x[(c * H + p / OH + k / 3) * H + p % OH + k % 3] * w[(mo * C + c) * 9 + k];
        want[mo * OH * OH + p] = acc;
      }
    expect_int32(g, (const void *[]){x}, want, 2, OH * OH, "ConvInteger");
  }
  ir_graph_free(g);
  mb_free(&m);
}

/* A QuantizeLinear whose scale and zero point are computed (ONNX's
 * DynamicQuantizeLinear function body, as test_dynamicquantizelinear_expanded
 * spells it out) has that computation marked precision = "fp32", from the
 * parameters back to the reductions reading x: fp16 there moves results
 * across int8 rounding boundaries. A node reading x for another reason (a
 * Relu, as large as x) is left to the precision mode. */
static void test_runtime_params_f32(void) {
  const float zero = 0, qmax = 255;
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", 1, 2, (int64_t[]){2, 3}, NULL);
  mb_init_raw(&m, "zero", 1, 0, NULL, &zero, sizeof zero);
  mb_init_raw(&m, "qmax", 1, 0, NULL, &qmax, sizeof qmax);
  attr_int(&m, mb_node(&m, "ReduceMin", "rmin", "x", "mn"), "keepdims", 0);
  attr_int(&m, mb_node(&m, "ReduceMax", "rmax", "x", "mx"), "keepdims", 0);
  mb_node(&m, "Min", "amin", "mn,zero", "mn0");
  mb_node(&m, "Max", "amax", "mx,zero", "mx0");
  mb_node(&m, "Sub", "range", "mx0,mn0", "r");
  mb_node(&m, "Div", "scale", "r,qmax", "s");
  mb_node(&m, "Div", "mins", "mn0,s", "ms");
  mb_node(&m, "Sub", "zpf", "zero,ms", "z0");
  mb_node(&m, "Clip", "clip", "z0,zero,qmax", "z1");
  mb_node(&m, "Round", "round", "z1", "z2");
  attr_int(&m, mb_node(&m, "Cast", "cast", "z2", "zp"), "to", 2);
  mb_node(&m, "QuantizeLinear", "q", "x,s,zp", "y");
  mb_node(&m, "Relu", "relu", "x", "big");
  mb_output(&m, "y");
  mb_output(&m, "big");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  int small = 0, marked = 0, relu_f32 = 1;
  for (int i = 0; g && i < g->nnodes; i++) {
    const ir_node *n = g->nodes[i];
    int f32 = !strcmp(ir_attr_string(n, "precision", ""), "fp32");
    if (n->op == IR_OP_RELU) relu_f32 = f32;
    if (ir_value_elements(n->out[0]) != 1) continue;
    small++;
    marked += f32;
  }
  CHECK(small >= 10);     /* the scale's and zero point's nodes (reductions, min/max, arithmetic, Cast) */
  CHECK(marked == small); /* every one in f32 */
  CHECK(!relu_f32);       /* x's other reader follows the precision mode */
  if (marked != small) test_note("  %d of %d parameter nodes marked fp32", marked, small);
  ir_graph_free(g);
  mb_free(&m);
}

int main(void) {
  test_qlinear_conv();
  test_qlinear_matmul();
  test_integer_ops();
  test_qmatmul_import();
  test_refusals();
  test_runtime_params_f32();
  test_integer_chunks();
  return test_summary("test_frontend_qlinear");
}
