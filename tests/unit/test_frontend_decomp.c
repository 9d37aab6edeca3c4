/* test_frontend_decomp.c - decompositions at import (frontend/onnx_decomp.h):
 * the structure an ONNX function op becomes (IR ops, names derived from the
 * ONNX node, outputs wired), its numerics against a direct computation
 * (shape inference, then the reference evaluator over the imported graph),
 * and the refusals (QuantizeLinear and DequantizeLinear: their malformed
 * parameters), Det, an f64 Einsum and Einsum diagonals, MelWeightMatrix. Models are built with onnx_mb.h. */
#include "ir/eval.h"
#include "onnx_mb.h"
#include "passes/pass.h"

static int names_start_with(const ir_graph *g, const char *prefix) {
  for (int i = 0; i < g->nnodes; i++)
    if (strncmp(g->nodes[i]->name, prefix, strlen(prefix))) return 0;
  return g->nnodes > 0;
}

static float frand(unsigned *seed) {
  *seed = *seed * 1103515245u + 12345u;
  return (float)((*seed >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static void test_layer_norm(void) {
  enum { N = 6, D = 4 };
  float scale[D] = {1.0f, 0.5f, -2.0f, 1.5f}, bias[D] = {0.1f, -0.2f, 0.0f, 0.3f}, x[N * D];
  unsigned seed = 7;
  for (int i = 0; i < N * D; i++)
    x[i] = 3.0f * frand(&seed) + (float)(i % 3);
  mb m;
  mb_init(&m, 17);
  mb_input(&m, "x", 1, 3, (int64_t[]){2, 3, D}, NULL);
  mb_init_raw(&m, "scale", 1, 1, (int64_t[]){D}, scale, sizeof scale);
  mb_init_raw(&m, "bias", 1, 1, (int64_t[]){D}, bias, sizeof bias);
  Onnx__NodeProto *n = mb_node(&m, "LayerNormalization", "ln", "x,scale,bias", "y,mean,");
  attr_float(&m, n, "epsilon", 1e-3f);
  mb_output(&m, "y");
  mb_output(&m, "mean");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    CHECK(mb_count_ops(g, IR_OP_REDUCE) == 2 && names_start_with(g, "ln/"));
    const ir_value *mean = g->outputs[1];
    CHECK(mean->producer && mean->producer->op == IR_OP_REDUCE &&
          !strcmp(ir_attr_string(mean->producer, "mode", ""), "mean") &&
          attr_ints_are(mean->producer, "axes", 1, (int64_t[]){-1}));
    CHECK(g->outputs[0]->producer && g->outputs[0]->producer->op == IR_OP_ADD);
    arena a;
    arena_init(&a, 0);
    const void *in[1] = {x};
    void *out[2];
    if (!mb_eval(g, in, out, &a)) {
      const float *y = out[0], *mu = out[1];
      double worst = 0;
      for (int r = 0; r < N; r++) {
        double s = 0, v = 0;
        for (int c = 0; c < D; c++)
          s += x[r * D + c];
        s /= D;
        for (int c = 0; c < D; c++)
          v += (x[r * D + c] - s) * (x[r * D + c] - s);
        v /= D;
        worst = fmax(worst, fabs(mu[r] - s));
        for (int c = 0; c < D; c++)
          worst =
              fmax(worst, fabs(y[r * D + c] - ((x[r * D + c] - s) / sqrt(v + 1e-3) * scale[c] + bias[c])));
      }
      CHECK(worst < 1e-5);
      if (worst >= 1e-5) test_note("  LayerNormalization: max error %g", worst);
    } else {
      CHECK(!"LayerNormalization evaluates");
    }
    arena_free(&a);
  }
  ir_graph_free(g);
  mb_free(&m);

  /* A non-negative axis needs the rank: an intermediate value has it at
   * import (import-time shape inference), unless it depends on a value known
   * only at run time (here a Reshape to a shape given as a graph input). */
  mb_init(&m, 17);
  mb_input(&m, "x", 1, 2, (int64_t[]){2, D}, NULL);
  mb_init_raw(&m, "scale", 1, 1, (int64_t[]){D}, scale, sizeof scale);
  mb_node(&m, "Relu", "r", "x", "h");
  n = mb_node(&m, "LayerNormalization", "ln", "h,scale", "y");
  attr_int(&m, n, "axis", 1);
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  ir_graph_free(g);
  mb_free(&m);
  mb_init(&m, 17);
  mb_input(&m, "x", 1, 2, (int64_t[]){2, D}, NULL);
  mb_input(&m, "s", DT_INT64, 1, (int64_t[]){2}, NULL);
  mb_init_raw(&m, "scale", 1, 1, (int64_t[]){D}, scale, sizeof scale);
  mb_node(&m, "Reshape", "r", "x,s", "h");
  n = mb_node(&m, "LayerNormalization", "ln", "h,scale", "y");
  attr_int(&m, n, "axis", 1);
  mb_output(&m, "y");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'ln' (LayerNormalization)", "'axis' = 1", "rank");
  mb_free(&m);

  /* stash_type float16 (for a float32 X) is refused, naming the attribute. */
  mb_init(&m, 17);
  mb_input(&m, "x", 1, 2, (int64_t[]){2, D}, NULL);
  mb_init_raw(&m, "scale", 1, 1, (int64_t[]){D}, scale, sizeof scale);
  n = mb_node(&m, "LayerNormalization", "ln", "x,scale", "y");
  attr_int(&m, n, "stash_type", 10);
  mb_output(&m, "y");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'ln' (LayerNormalization)", "stash_type");
  mb_free(&m);
}

/* -sum over kept elements of w[t] * x[t] / sum of their w (reduction mean). */
static void test_nll(void) {
  enum { N = 5, C = 4 };
  float x[N * C], w[C] = {1.0f, 2.0f, 0.5f, 3.0f};
  int64_t t[N] = {0, 2, 3, 2, 1};
  unsigned seed = 3;
  for (int i = 0; i < N * C; i++)
    x[i] = frand(&seed);
  for (int reduction = 0; reduction < 2; reduction++) {
    mb m;
    mb_init(&m, 22);
    mb_input(&m, "x", 1, 2, (int64_t[]){N, C}, NULL);
    mb_input(&m, "t", 7, 1, (int64_t[]){N}, NULL);
    mb_init_raw(&m, "w", 1, 1, (int64_t[]){C}, w, sizeof w);
    Onnx__NodeProto *n = mb_node(&m, "NegativeLogLikelihoodLoss", "nll", reduction ? "x,t,w" : "x,t", "loss");
    attr_string(&m, n, "reduction", reduction ? "mean" : "none");
    if (reduction) attr_int(&m, n, "ignore_index", 2);
    mb_output(&m, "loss");
    ir_graph *g = EXPECT_OK(&m, NULL, NULL);
    if (g) {
      CHECK(mb_count_ops(g, IR_OP_GATHERELEMENTS) == 1 && names_start_with(g, "nll/"));
      CHECK(mb_count_ops(g, IR_OP_WHERE) == (reduction ? 2 : 0) &&
            mb_count_ops(g, IR_OP_GATHER) == reduction);
      arena a;
      arena_init(&a, 0);
      const void *in[2] = {x, t};
      void *out[1];
      if (!mb_eval(g, in, out, &a)) {
        const float *loss = out[0];
        double num = 0, den = 0, worst = 0;
        for (int i = 0; i < N; i++) {
          double wi = reduction ? (t[i] == 2 ? 0.0 : w[t[i]]) : 1.0, li = -x[i * C + t[i]] * wi;
          num += li, den += wi;
          if (!reduction) worst = fmax(worst, fabs(loss[i] - li));
        }
        if (reduction) worst = fabs(loss[0] - num / den);
        CHECK(g->outputs[0]->rank == (reduction ? 0 : 1) && worst < 1e-6);
        if (worst >= 1e-6) test_note("  NegativeLogLikelihoodLoss: max error %g", worst);
      } else {
        CHECK(!"NegativeLogLikelihoodLoss evaluates");
      }
      arena_free(&a);
    }
    ir_graph_free(g);
    mb_free(&m);
  }

  mb m;
  mb_init(&m, 22);
  mb_input(&m, "x", 1, 2, (int64_t[]){N, C}, NULL);
  mb_input(&m, "t", 7, 1, (int64_t[]){N}, NULL);
  Onnx__NodeProto *n = mb_node(&m, "NegativeLogLikelihoodLoss", "nll", "x,t", "loss");
  attr_string(&m, n, "reduction", "max");
  mb_output(&m, "loss");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'nll' (NegativeLogLikelihoodLoss)", "reduction");
  mb_free(&m);
}

/* SCE on [N, C, K] scores with the log_prob output: LogSoftmax over C, then NLL summed. */
static void test_sce(void) {
  enum { N = 2, C = 3, K = 2 };
  float s[N * C * K];
  int64_t lab[N * K] = {0, 2, 1, 1};
  unsigned seed = 11;
  for (int i = 0; i < N * C * K; i++)
    s[i] = 2.0f * frand(&seed);
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "s", 1, 3, (int64_t[]){N, C, K}, NULL);
  mb_input(&m, "l", 7, 2, (int64_t[]){N, K}, NULL);
  Onnx__NodeProto *n = mb_node(&m, "SoftmaxCrossEntropyLoss", "sce", "s,l", "loss,logp");
  attr_string(&m, n, "reduction", "sum");
  mb_output(&m, "loss");
  mb_output(&m, "logp");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    const ir_node *sm = g->outputs[1]->producer;
    CHECK(sm && sm->op == IR_OP_SOFTMAX && ir_attr_int(sm, "log", 0) == 1 && ir_attr_int(sm, "axis", 0) == 1);
    CHECK(names_start_with(g, "sce/"));
    arena a;
    arena_init(&a, 0);
    const void *in[2] = {s, lab};
    void *out[2];
    if (!mb_eval(g, in, out, &a)) {
      const float *loss = out[0], *logp = out[1];
      double total = 0, worst = 0;
      for (int b = 0; b < N; b++)
        for (int k = 0; k < K; k++) {
          double sum = 0;
          for (int c = 0; c < C; c++)
            sum += exp(s[(b * C + c) * K + k]);
          for (int c = 0; c < C; c++) {
            double lp = s[(b * C + c) * K + k] - log(sum);
            worst = fmax(worst, fabs(logp[(b * C + c) * K + k] - lp));
            if (c == lab[b * K + k]) total -= lp;
          }
        }
      worst = fmax(worst, fabs(loss[0] - total));
      CHECK(worst < 1e-5);
      if (worst >= 1e-5) test_note("  SoftmaxCrossEntropyLoss: max error %g", worst);
    } else {
      CHECK(!"SoftmaxCrossEntropyLoss evaluates");
    }
    arena_free(&a);
  }
  ir_graph_free(g);
  mb_free(&m);
}

/* QuantizeLinear and DequantizeLinear import as one IR op each; the
 * evaluator rounds half to even and saturates (ONNX's definition), per axis
 * parameters apply along the axis; malformed parameters are refused naming
 * the node and the field. */
static void test_qdq(void) {
  int8_t w[6] = {-128, -1, 0, 5, 127, 3}, wzp[3] = {0, 1, -2};
  float ws[3] = {0.5f, 2.0f, 0.25f}, ys = 2.0f;
  uint8_t yzp = 10;
  /* x / 2: 2.5 -> 2, 3.5 -> 4, -0.5 -> -0, -1.5 -> -2, 1000 -> 255, -1000 -> 0 */
  float x[6] = {5.0f, 7.0f, -1.0f, -3.0f, 2000.0f, -2000.0f};
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", 1, 2, (int64_t[]){3, 2}, NULL);
  mb_init_raw(&m, "w", 3, 2, (int64_t[]){3, 2}, w, sizeof w);
  mb_init_raw(&m, "ws", 1, 1, (int64_t[]){3}, ws, sizeof ws);
  mb_init_raw(&m, "wzp", 3, 1, (int64_t[]){3}, wzp, sizeof wzp);
  mb_init_raw(&m, "ys", 1, 0, NULL, &ys, sizeof ys);
  mb_init_raw(&m, "yzp", 2, 0, NULL, &yzp, sizeof yzp);
  Onnx__NodeProto *n = mb_node(&m, "DequantizeLinear", "dq", "w,ws,wzp", "wf");
  attr_int(&m, n, "axis", 0);
  mb_node(&m, "QuantizeLinear", "q", "x,ys,yzp", "y");
  mb_output(&m, "wf");
  mb_output(&m, "y");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    CHECK(mb_count_ops(g, IR_OP_QUANTIZE) == 1 && mb_count_ops(g, IR_OP_DEQUANTIZE) == 1);
    arena a;
    arena_init(&a, 0);
    const void *in[1] = {x};
    void *out[2];
    if (!mb_eval(g, in, out, &a)) {
      const float *wf = out[0];
      const uint8_t *y = out[1];
      const float want_w[6] = {-64.0f, -0.5f, -2.0f, 8.0f, 32.25f, 1.25f};
      const uint8_t want_y[6] = {12, 14, 10, 8, 255, 0};
      CHECK(!memcmp(wf, want_w, sizeof want_w));
      CHECK(!memcmp(y, want_y, sizeof want_y));
      for (int i = 0; i < 6; i++)
        if (wf[i] != want_w[i] || y[i] != want_y[i])
          test_note("  [%d]: dequantized %g (want %g), quantized %d (want %d)", i, wf[i], want_w[i], y[i],
                    want_y[i]);
    } else {
      CHECK(!"QuantizeLinear / DequantizeLinear evaluate");
    }
    arena_free(&a);
  }
  ir_graph_free(g);
  mb_free(&m);

  /* A scale of 0 or NaN, a zero point of another type, a per-axis
   * parameter whose length is not the axis's. */
  static const float bad_scales[2] = {0.0f, NAN};
  for (int k = 0; k < 2; k++) {
    float bs[3] = {0.5f, bad_scales[k], 1.0f};
    mb_init(&m, 13);
    mb_init_raw(&m, "w", 3, 2, (int64_t[]){3, 2}, w, sizeof w);
    mb_init_raw(&m, "ws", 1, 1, (int64_t[]){3}, bs, sizeof bs);
    n = mb_node(&m, "DequantizeLinear", "dq", "w,ws", "wf");
    attr_int(&m, n, "axis", 0);
    mb_output(&m, "wf");
    EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'dq' (DequantizeLinear)", "x_scale 'ws'[1]",
                "finite and nonzero");
    mb_free(&m);
  }
  mb_init(&m, 13);
  mb_init_raw(&m, "w", 3, 2, (int64_t[]){3, 2}, w, sizeof w);
  mb_init_raw(&m, "ws", 1, 1, (int64_t[]){3}, ws, sizeof ws);
  mb_init_raw(&m, "zp", 2, 1, (int64_t[]){3}, (uint8_t[]){0, 0, 0}, 3);
  n = mb_node(&m, "DequantizeLinear", "dq", "w,ws,zp", "wf");
  attr_int(&m, n, "axis", 0);
  mb_output(&m, "wf");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'dq' (DequantizeLinear)", "x_zero_point 'zp'", "uint8");
  mb_free(&m);
  mb_init(&m, 13);
  mb_init_raw(&m, "w", 3, 2, (int64_t[]){3, 2}, w, sizeof w);
  mb_init_raw(&m, "ws", 1, 1, (int64_t[]){3}, ws, sizeof ws);
  n = mb_node(&m, "DequantizeLinear", "dq", "w,ws", "wf");
  attr_int(&m, n, "axis", 1);
  mb_output(&m, "wf");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'dq' (DequantizeLinear)", "x_scale 'ws' has 3 elements",
              "axis 1");
  mb_free(&m);
}

/* Det by the Leibniz formula against cofactor expansion, on a batch of 3x3
 * matrices; and the refusal of matrices too large for it. */
static void test_det(void) {
  enum { B = 2 };
  float x[B * 9];
  unsigned seed = 11;
  for (int i = 0; i < B * 9; i++)
    x[i] = 2.0f * frand(&seed);
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", 1, 3, (int64_t[]){B, 3, 3}, NULL);
  mb_node(&m, "Det", "det", "x", "y");
  mb_output(&m, "y");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    CHECK(mb_count_ops(g, IR_OP_GATHER) == 1 && mb_count_ops(g, IR_OP_REDUCE) == 2);
    arena a;
    arena_init(&a, 0);
    const void *in[1] = {x};
    void *out[1];
    if (!mb_eval(g, in, out, &a)) {
      const float *y = out[0];
      CHECK(g->outputs[0]->rank == 1 && g->outputs[0]->dims[0] == B);
      for (int k = 0; k < B; k++) {
        const float *a3 = x + 9 * k;
        double want = a3[0] * ((double)a3[4] * a3[8] - (double)a3[5] * a3[7]) -
                      a3[1] * ((double)a3[3] * a3[8] - (double)a3[5] * a3[6]) +
                      a3[2] * ((double)a3[3] * a3[7] - (double)a3[4] * a3[6]);
        CHECK(fabs(y[k] - want) <= 1e-5 * (1 + fabs(want)));
        if (fabs(y[k] - want) > 1e-5 * (1 + fabs(want)))
          test_note("  det %d: got %g, want %g", k, y[k], want);
      }
    } else {
      CHECK(!"Det evaluates");
    }
    arena_free(&a);
  }
  ir_graph_free(g);
  mb_free(&m);

  mb_init(&m, 13);
  mb_input(&m, "x", 1, 2, (int64_t[]){6, 6}, NULL);
  mb_node(&m, "Det", "det6", "x", "y");
  mb_output(&m, "y");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'det6' (Det)", "6 x 6");
  mb_free(&m);
}

/* Einsum's two-input product in f64, which the cube does not take: a
 * broadcast Mul and ReduceSum instead of a MatMul. */
static void test_einsum_f64(void) {
  const double x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {0.5, -1, 2, 0.25, 3, -2};
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", DT_DOUBLE, 2, (int64_t[]){2, 3}, NULL);
  mb_input(&m, "y", DT_DOUBLE, 2, (int64_t[]){3, 2}, NULL);
  Onnx__NodeProto *n = mb_node(&m, "Einsum", "e", "x,y", "z");
  attr_string(&m, n, "equation", "ij,jk->ik");
  mb_output(&m, "z");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    CHECK(mb_count_ops(g, IR_OP_MATMUL) == 0 && mb_count_ops(g, IR_OP_REDUCE) == 1);
    arena a;
    arena_init(&a, 0);
    const void *in[2] = {x, y};
    void *out[1];
    if (!mb_eval(g, in, out, &a)) {
      const double *z = out[0], want[4] = {13.5, -6.5, 30, -14.75};
      CHECK(!memcmp(z, want, sizeof want));
    } else {
      CHECK(!"Einsum f64 evaluates");
    }
    arena_free(&a);
  }
  ir_graph_free(g);
  mb_free(&m);
}

/* LSTM, GRU and RNN import as one Recurrence per direction after the
 * hoisted input MatMul when their cells are RECURRENCE's (the default
 * activations; a constant sequence_lens of seq_length for every entry, as a
 * packed sequence of full length exports, is no sequence_lens), and unrolled
 * otherwise: clip, peepholes, a shorter sequence_lens or another
 * activation (then one MatMul per step with a state, per gate group: T - 1
 * steps, the first having no h0). lens 1: {T, T - 1}, 2: {T, T}. */
typedef struct rec_import {
  const char *op, *direction, *acts; /* acts: comma-separated, or NULL */
  int gates, clip, peep, lens, lbr, want_rec, want_matmul;
} rec_import;

static void test_recurrence_import(void) {
  enum { T = 5, B = 2, I = 3, H = 4 };
  /* clang-format off */
  const rec_import cases[] = {
      /* op     direction        acts                        G  clip peep lens lbr rec mm */
      {"LSTM", "forward",       NULL,                       4, 0,   0,   0,   0,  1,  1},
      {"LSTM", "bidirectional", NULL,                       4, 0,   0,   0,   0,  2,  2},
      {"GRU",  "reverse",       NULL,                       3, 0,   0,   0,   1,  1,  1},
      {"RNN",  "forward",       NULL,                       1, 0,   0,   0,   0,  1,  1},
      {"LSTM", "forward",       NULL,                       4, 1,   0,   0,   0,  0,  T},
      {"LSTM", "forward",       NULL,                       4, 0,   1,   0,   0,  0,  T},
      {"GRU",  "forward",       NULL,                       3, 0,   0,   1,   0,  0,  1 + 2 * (T - 1)},
      {"LSTM", "bidirectional", NULL,                       4, 0,   0,   2,   0,  2,  2},
      {"RNN",  "forward",       "Relu",                     1, 0,   0,   0,   0,  0,  T},
  };
  /* clang-format on */
  float w[2 * 4 * H * I], r[2 * 4 * H * H];
  unsigned seed = 11;
  for (size_t i = 0; i < sizeof w / sizeof *w; i++)
    w[i] = frand(&seed);
  for (size_t i = 0; i < sizeof r / sizeof *r; i++)
    r[i] = frand(&seed);
  int32_t lens[2][B] = {{T, T - 1}, {T, T}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    const rec_import *c = &cases[k];
    const int64_t D = strcmp(c->direction, "bidirectional") ? 1 : 2, GH = c->gates * H;
    mb m;
    mb_init(&m, 14);
    mb_input(&m, "x", 1, 3, (int64_t[]){T, B, I}, NULL);
    mb_init_raw(&m, "w", 1, 3, (int64_t[]){D, GH, I}, w, sizeof(float) * (size_t)(D * GH * I));
    mb_init_raw(&m, "r", 1, 3, (int64_t[]){D, GH, H}, r, sizeof(float) * (size_t)(D * GH * H));
    if (c->lens) mb_init_raw(&m, "lens", 6, 1, (int64_t[]){B}, lens[c->lens - 1], sizeof lens[0]);
    if (c->peep) mb_init_raw(&m, "p", 1, 2, (int64_t[]){D, 3 * H}, w, sizeof(float) * (size_t)(D * 3 * H));
    const char *ins = c->peep ? "x,w,r,,,,,p" : c->lens ? "x,w,r,,lens" : "x,w,r";
    Onnx__NodeProto *n = mb_node(&m, c->op, "rec", ins, "y");
    attr_int(&m, n, "hidden_size", H);
    attr_string(&m, n, "direction", c->direction);
    if (c->clip) attr_float(&m, n, "clip", 3.0f);
    if (c->lbr) attr_int(&m, n, "linear_before_reset", 1);
    if (c->acts) {
      Onnx__AttributeProto *a = mb_attr(&m, n, "activations", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);
      a->n_strings = 1;
      a->strings = arena_alloc(&m.a, sizeof *a->strings);
      a->strings[0] = (ProtobufCBinaryData){strlen(c->acts), (uint8_t *)(uintptr_t)c->acts};
    }
    mb_output(&m, "y");
    ir_graph *g = EXPECT_OK(&m, NULL, NULL);
    if (g) {
      int rec = mb_count_ops(g, IR_OP_RECURRENCE), mm = mb_count_ops(g, IR_OP_MATMUL);
      CHECK(rec == c->want_rec && mm == c->want_matmul);
      if (rec != c->want_rec || mm != c->want_matmul)
        test_note("  case %zu (%s %s): %d Recurrence, %d MatMul; want %d, %d", k, c->op, c->direction, rec,
                  mm, c->want_rec, c->want_matmul);
      const ir_node *rn = find_node(g, IR_OP_RECURRENCE);
      if (rn && c->lbr)
        CHECK(ir_attr_int(rn, "linear_before_reset", 0) == 1 && ir_attr_int(rn, "cell", -1) == 1);
      if (rn && !strcmp(c->direction, "reverse")) CHECK(ir_attr_int(rn, "reverse", 0) == 1);
      ir_graph_free(g);
    }
    mb_free(&m);
  }
}

/* Einsum `eq` over one f32 input x of the given dims, evaluated against want. */
static void einsum1(const char *eq, int rank, const int64_t *dims, const float *x, int nwant,
                    const float *want) {
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", DT_FLOAT32, rank, dims, NULL);
  Onnx__NodeProto *n = mb_node(&m, "Einsum", "e", "x", "y");
  attr_string(&m, n, "equation", eq);
  mb_output(&m, "y");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    arena a;
    arena_init(&a, 0);
    const void *in[1] = {x};
    void *out[1];
    if (!mb_eval(g, in, out, &a)) {
      const float *y = out[0];
      int same = 1;
      for (int i = 0; i < nwant; i++)
        same &= y[i] == want[i];
      if (!same) fprintf(stderr, "einsum '%s': wrong values\n", eq);
      CHECK(same);
    } else {
      CHECK(!"Einsum with a diagonal evaluates");
    }
    arena_free(&a);
  }
  ir_graph_free(g);
  mb_free(&m);
}

/* A label repeated within one input's term takes the diagonal of those axes
 * (wherever they are, two or three of them); a repeat in the implicit form
 * is a trace; mismatched sizes and a repeat in the output are refused. */
static void test_einsum_diagonal(void) {
  float x[3 * 3 * 3];
  for (int i = 0; i < 27; i++)
    x[i] = (float)(i * i % 17) - 4.0f;
  const int64_t d33[2] = {3, 3}, d333[3] = {3, 3, 3}, d23[2] = {2, 3};
  float want[9];
  for (int i = 0; i < 3; i++)
    want[i] = x[i * 4]; /* x[i][i] */
  einsum1("ii->i", 2, d33, x, 3, want);
  einsum1("ii", 2, d33, x, 1, (float[]){want[0] + want[1] + want[2]});
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      want[j * 3 + i] = x[i * 9 + j * 3 + i]; /* x[i][j][i] -> y[j][i] */
  einsum1("iji->ji", 3, d333, x, 9, want);
  for (int b = 0; b < 3; b++)
    for (int i = 0; i < 3; i++)
      want[b * 3 + i] = x[b * 9 + i * 4]; /* x[b][i][i] */
  einsum1("...ii->...i", 3, d333, x, 9, want);
  for (int i = 0; i < 3; i++)
    want[i] = x[i * 13]; /* x[i][i][i] */
  einsum1("iii->i", 3, d333, x, 3, want);

  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", DT_FLOAT32, 2, d23, NULL);
  attr_string(&m, mb_node(&m, "Einsum", "e", "x", "y"), "equation", "ii->i");
  mb_output(&m, "y");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'e' (Einsum)", "sizes 2 and 3");
  mb_free(&m);
  mb_init(&m, 13);
  mb_input(&m, "x", DT_FLOAT32, 2, d33, NULL);
  attr_string(&m, mb_node(&m, "Einsum", "e", "x", "y"), "equation", "ij->ii");
  mb_output(&m, "y");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'e' (Einsum)", "repeated in the output");
  mb_free(&m);
}

/* A MelWeightMatrix model: num_mel_bins, dft_length, sample_rate as i64
 * constants, the edges as f64 ones. */
static void mel_model(mb *m, const char *name, int64_t mels, int64_t dft, int64_t rate, double lo,
                      double hi) {
  mb_init(m, 17);
  mb_init_raw(m, "mels", 7, 0, NULL, &mels, sizeof mels);
  mb_init_raw(m, "dft", 7, 0, NULL, &dft, sizeof dft);
  mb_init_raw(m, "rate", 7, 0, NULL, &rate, sizeof rate);
  mb_init_raw(m, "lo", 11, 0, NULL, &lo, sizeof lo);
  mb_init_raw(m, "hi", 11, 0, NULL, &hi, sizeof hi);
  mb_node(m, "MelWeightMatrix", name, "mels,dft,rate,lo,hi", "w");
  mb_output(m, "w");
}

/* MelWeightMatrix folds to a constant: 4 triangular bands over a 64-point
 * DFT, each rising from its left edge bin (0) to its centre (1) and
 * falling to its right edge, the edges equally spaced in mel (computed
 * here in f64); and its refusals: an upper edge past the Nyquist bin, a
 * sample rate of 0. */
static void test_mel_weight_matrix(void) {
  enum { MELS = 4, DFT = 64, ROWS = DFT / 2 + 1 };
  const double rate = 8000, lo = 100, hi = 3900;
  mb m;
  mel_model(&m, "mel", MELS, DFT, (int64_t)rate, lo, hi);
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  const ir_value *w = g ? g->outputs[0] : NULL;
  CHECK(w && w->data && w->dtype == DT_FLOAT32 && w->rank == 2 && w->dims[0] == ROWS && w->dims[1] == MELS);
  if (w && w->data && w->rank == 2 && w->dims[0] == ROWS && w->dims[1] == MELS) {
    const float *y = w->data;
    double mlo = 2595 * log10(1 + lo / 700), mhi = 2595 * log10(1 + hi / 700);
    int64_t e[MELS + 2];
    for (int k = 0; k < MELS + 2; k++)
      e[k] =
          (int64_t)floor((DFT + 1) * 700 * (pow(10, (mlo + k * (mhi - mlo) / (MELS + 2)) / 2595) - 1) / rate);
    int bad = 0;
    for (int i = 0; i < MELS; i++)
      for (int64_t j = 0; j < ROWS; j++) {
        double want = j >= e[i] && j <= e[i + 1]     ? (double)(j - e[i]) / (double)(e[i + 1] - e[i])
                      : j > e[i + 1] && j < e[i + 2] ? (double)(e[i + 2] - j) / (double)(e[i + 2] - e[i + 1])
                                                     : 0;
        bad += fabs(y[j * MELS + i] - want) > 1e-7;
      }
    CHECKF(bad == 0, "  %d entries differ", bad);
  }
  ir_graph_free(g);
  mb_free(&m);

  mel_model(&m, "mel_past_nyquist", MELS, DFT, (int64_t)rate, lo, 7000);
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'mel_past_nyquist' (MelWeightMatrix)",
              "outside the 33 bins");
  mb_free(&m);
  mel_model(&m, "mel_rate0", MELS, DFT, 0, lo, hi);
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'mel_rate0' (MelWeightMatrix)", "sample_rate");
  mb_free(&m);
}

int main(void) {
  test_recurrence_import();
  test_layer_norm();
  test_nll();
  test_sce();
  test_qdq();
  test_det();
  test_einsum_f64();
  test_einsum_diagonal();
  test_mel_weight_matrix();
  return test_summary("test_frontend_decomp");
}
