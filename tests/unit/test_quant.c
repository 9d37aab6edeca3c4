/* test_quant.c - post-training quantization (quant/): the calibration
 * methods on known data and histograms (quant/calib.h), and the QDQ writer
 * (quant/qdq.h, quant/ptq.h) on a small Conv -> Relu -> Conv -> Add -> Gemm
 * model: the written model parses with the project's loader, holds the
 * expected Q/DQ nodes, initializers and opset, and its fake-quantized output
 * stays close to the float one; a token-id model whose Linear biases are
 * quantized after their Add; the opset refusal; the every_op plan (ONNX
 * Runtime's quantize_static form). */
#include "ir/eval.h"
#include "onnx_mb.h"
#include "passes/pass.h"
#include "quant/calib.h"
#include "quant/ptq.h"

static void test_minmax_percentile(void) {
  qc_stats s;
  qc_init(&s);
  float x[1000];
  for (int i = 0; i < 1000; i++)
    x[i] = (float)i / 10 - 20; /* -20 .. 79.9 */
  qc_add(&s, x, 500);
  qc_add(&s, x + 500, 500); /* the width doubles when the second half arrives */
  double lo, hi;
  qc_range(&s, QC_MINMAX, 0, &lo, &hi);
  CHECK(lo == -20.0f && fabs(hi - 79.9) < 1e-4);
  CHECK(s.n == 1000);
  uint64_t total = 0;
  for (int i = 0; i < QC_BINS; i++)
    total += s.count[i];
  CHECK(total == 1000);
  /* |x|: 200 values in [0, 20], the rest spread to 79.9: the 90th
   * percentile of |x| is about 69.9 */
  qc_range(&s, QC_PERCENTILE, 90, &lo, &hi);
  CHECK(fabs(hi - 69.9) < 0.2 && lo == -20.0f);
  qc_range(&s, QC_PERCENTILE, 100, &lo, &hi);
  CHECK(fabs(hi - 79.9) < 0.1);
  /* an all-positive tensor keeps lo = 0; an all-zero one gives [0, 0] */
  qc_init(&s);
  float pos[3] = {1, 2, 3}, zero[4] = {0};
  qc_add(&s, pos, 3);
  qc_range(&s, QC_MINMAX, 0, &lo, &hi);
  CHECK(lo == 0 && hi == 3);
  qc_init(&s);
  qc_add(&s, zero, 4);
  qc_range(&s, QC_ENTROPY, 0, &lo, &hi);
  CHECK(lo == 0 && hi == 0);

  /* known histograms */
  uint64_t h[10] = {10, 10, 10, 10, 10, 10, 10, 10, 10, 10};
  CHECK(qc_percentile_threshold(h, 10, 1.0, 50) == 5.0);
  CHECK(qc_percentile_threshold(h, 10, 1.0, 95) == 10.0);
  CHECK(qc_percentile_threshold(h, 10, 0.5, 10) == 0.5);
  float scale;
  uint8_t zp;
  oq_act_params(-1.0, 3.0, &scale, &zp);
  CHECK(scale == (float)(4.0 / 255) && zp == 64);
  oq_act_params(0.5, 2.0, &scale, &zp); /* the range always holds 0 */
  CHECK(scale == (float)(2.0 / 255) && zp == 0);
  oq_act_params(0, 0, &scale, &zp);
  CHECK(scale == 1 && zp == 0);
}

/* Entropy: a bulk of mass near 0 with one far outlier clips well below the
 * outlier; a flat histogram keeps (nearly) all of it. */
static void test_entropy(void) {
  static uint64_t h[QC_BINS];
  memset(h, 0, sizeof h);
  for (int i = 0; i < 400; i++)
    h[i] = (uint64_t)(100000.0 * exp(-(double)i / 60));
  h[QC_BINS - 1] = 1;
  double t = qc_entropy_threshold(h, QC_BINS, 1.0, QC_LEVELS);
  CHECK(t >= QC_LEVELS && t < 1000);
  if (!(t < 1000)) test_note("  entropy threshold %g with one outlier at 2048", t);
  for (int i = 0; i < QC_BINS; i++)
    h[i] = 1000;
  t = qc_entropy_threshold(h, QC_BINS, 1.0, QC_LEVELS);
  CHECK(t >= 0.9 * QC_BINS);
  if (!(t >= 0.9 * QC_BINS)) test_note("  entropy threshold %g on a flat histogram", t);
  /* at most `levels` bins: the whole range */
  CHECK(qc_entropy_threshold(h, 100, 0.25, QC_LEVELS) == 25.0);
}

/* The small float model: x [1, 3, 8, 8] -> Conv(4) -> Relu -> Conv(4) ->
 * Add(relu) -> Flatten -> Gemm(transB, 5). */
static void small_model(mb *m, int opset) {
  static float w1[4 * 3 * 3 * 3], b1[4], w2[4 * 4 * 3 * 3], b2[4], wf[5 * 256], bf[5];
  unsigned seed = 9;
  float *all[] = {w1, b1, w2, b2, wf, bf};
  int sizes[] = {108, 4, 144, 4, 1280, 5};
  for (int k = 0; k < 6; k++)
    for (int i = 0; i < sizes[k]; i++) {
      seed = seed * 1103515245u + 12345u;
      all[k][i] = ((float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f) * (k == 4 ? 0.05f : 0.3f);
    }
  mb_init(m, opset);
  mb_input(m, "x", 1, 4, (int64_t[]){1, 3, 8, 8}, (const char *[]){"batch", NULL, NULL, NULL});
  mb_init_raw(m, "w1", 1, 4, (int64_t[]){4, 3, 3, 3}, w1, sizeof w1);
  mb_init_raw(m, "b1", 1, 1, (int64_t[]){4}, b1, sizeof b1);
  mb_init_raw(m, "w2", 1, 4, (int64_t[]){4, 4, 3, 3}, w2, sizeof w2);
  mb_init_raw(m, "b2", 1, 1, (int64_t[]){4}, b2, sizeof b2);
  mb_init_raw(m, "wf", 1, 2, (int64_t[]){5, 256}, wf, sizeof wf);
  mb_init_raw(m, "bf", 1, 1, (int64_t[]){5}, bf, sizeof bf);
  Onnx__NodeProto *n = mb_node(m, "Conv", "conv1", "x,w1,b1", "c1");
  attr_ints(m, n, "pads", 4, (int64_t[]){1, 1, 1, 1});
  mb_node(m, "Relu", "relu1", "c1", "r1");
  n = mb_node(m, "Conv", "conv2", "r1,w2,b2", "c2");
  attr_ints(m, n, "pads", 4, (int64_t[]){1, 1, 1, 1});
  mb_node(m, "Add", "add", "c2,r1", "s");
  mb_node(m, "Flatten", "flat", "s", "f");
  n = mb_node(m, "Gemm", "fc", "f,wf,bf", "y");
  attr_int(m, n, "transB", 1);
  mb_output(m, "y");
}

static int count_type(const Onnx__GraphProto *g, const char *op) {
  int n = 0;
  for (size_t i = 0; i < g->n_node; i++)
    n += !strcmp(g->node[i]->op_type, op);
  return n;
}

static const Onnx__TensorProto *init_named(const Onnx__GraphProto *g, const char *name) {
  for (size_t i = 0; i < g->n_initializer; i++)
    if (!strcmp(g->initializer[i]->name, name)) return g->initializer[i];
  return NULL;
}

/* Packs m into the ONNX file at path and frees m. */
static void write_model(mb *m, const char *path) {
  size_t len;
  uint8_t *buf = mb_pack(m, &len);
  CHECK(test_write_file(path, buf, len) == 0);
  free(buf);
  mb_free(m);
}

static void test_writer(void) {
  const char *dir = test_tmpdir("quant");
  char path[512], spath[512];
  snprintf(path, sizeof path, "%s/small.onnx", dir);
  mb m;
  small_model(&m, 11);
  write_model(&m, path);

  diag d;
  diag_init(&d);
  oq_session *s = NULL;
  const char *skip[1] = {"conv2"};
  for (int with_skip = 0; with_skip < 2; with_skip++) {
    if (oq_open(path, NULL, 0, skip, with_skip, 0, &s, &d)) {
      test_note("  %s", d.msg);
      CHECK(!"oq_open");
      return;
    }
    /* x, r1, c2, s, f and y (the Gemm's graph output, as ONNX Runtime
     * quantizes it; conv1's output is quantized after relu1, its sole
     * reader); with conv2 skipped, c2 is still Add's input */
    CHECK_EQ_INT(s->plan.ntensors, 6);
    CHECK_EQ_INT(s->plan.nnodes, with_skip ? 2 : 3);
    CHECK(s->input_bytes == 3 * 8 * 8 * 4);
    float x[3 * 8 * 8];
    unsigned seed = 1;
    status st = ST_OK;
    for (int k = 0; k < 4 && !st; k++) {
      for (int i = 0; i < 3 * 8 * 8; i++) {
        seed = seed * 1103515245u + 12345u;
        x[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
      }
      st = oq_calibrate(s, x, &d);
    }
    if (!st) st = oq_finish(s, QC_MINMAX, 0, &d);
    double cos[8], out_cos = 0;
    if (!st) st = oq_compare(s, x, cos, &out_cos, &d);
    if (st) test_note("  %s", d.msg);
    CHECK(st == ST_OK);
    if (!st) {
      CHECK(out_cos > 0.99);
      for (int i = 0; i < s->plan.ntensors; i++) {
        CHECK(cos[i] > 0.99);
        if (!(cos[i] > 0.99)) test_note("  tensor %s: cosine %g", s->plan.tensors[i], cos[i]);
      }
      if (out_cos <= 0.99) test_note("  output cosine %g", out_cos);
      /* the written model: opset raised to 13, Q/DQ pairs, int8 weights, int32 biases */
      Onnx__ModelProto *q = onnx__model_proto__unpack(NULL, s->written_bytes, s->written);
      CHECK(q && q->graph);
      if (q && q->graph) {
        const Onnx__GraphProto *g = q->graph;
        CHECK(q->n_opset_import == 1 && q->opset_import[0]->version == 13);
        int weights = with_skip ? 2 : 3;
        CHECK_EQ_INT(count_type(g, "QuantizeLinear"), 6);
        CHECK_EQ_INT(count_type(g, "DequantizeLinear"), 6 + 2 * weights);
        CHECK_EQ_INT(count_type(g, "Conv") + count_type(g, "Relu") + count_type(g, "Add") +
                         count_type(g, "Flatten") + count_type(g, "Gemm"),
                     6);
        CHECK_EQ_INT((int)g->n_node, 6 + 12 + 2 * weights);
        const Onnx__TensorProto *w1 = init_named(g, "w1_quantized"), *b1 = init_named(g, "b1_quantized");
        CHECK(w1 && w1->data_type == 3 && w1->raw_data.len == 108);
        CHECK(b1 && b1->data_type == 6 && b1->raw_data.len == 16);
        CHECK(!init_named(g, "w1")); /* the float weight nothing reads any more */
        CHECK(with_skip ? init_named(g, "w2") != NULL : !init_named(g, "w2"));
        /* the Gemm's per-channel axis is 0 (transB) */
        for (size_t i = 0; i < g->n_node; i++)
          if (!strcmp(g->node[i]->name, "wf_DequantizeLinear"))
            CHECK(g->node[i]->n_attribute == 1 && g->node[i]->attribute[0]->i == 0);
        /* Relu reads the conv output itself, conv2 the dequantized Relu
         * output (atc folds the Relu into the int8 conv); the graph output
         * stays y: the Gemm writes y_QuantizeInput, the last
         * DequantizeLinear y */
        for (size_t i = 0; i < g->n_node; i++) {
          if (!strcmp(g->node[i]->op_type, "Relu")) CHECK(!strcmp(g->node[i]->input[0], "c1"));
          if (!strcmp(g->node[i]->name, "conv2")) CHECK(!strcmp(g->node[i]->input[0], "r1_dequantized"));
          if (!strcmp(g->node[i]->op_type, "Gemm")) CHECK(!strcmp(g->node[i]->output[0], "y_QuantizeInput"));
        }
        CHECK(!strcmp(g->node[g->n_node - 1]->op_type, "DequantizeLinear") &&
              !strcmp(g->node[g->n_node - 1]->output[0], "y"));
        CHECK(!strcmp(g->output[0]->name, "y"));
      }
      if (q) onnx__model_proto__free_unpacked(q, NULL);
      /* and it loads with the project's loader */
      snprintf(spath, sizeof spath, "%s/small_qdq.onnx", dir);
      CHECK(test_write_file(spath, s->written, s->written_bytes) == 0);
      ir_graph *g = NULL;
      onnx_input_shape shape = {"x", 4, {1, 3, 8, 8}};
      onnx_options opt = {&shape, 1, 0, NULL, NULL, 1};
      diag_init(&d);
      CHECK(onnx_load_file(spath, &opt, &g, &d) == ST_OK);
      if (g) {
        int nq = 0, ndq = 0, nconv = 0;
        for (int i = 0; i < g->nnodes; i++)
          nq += g->nodes[i]->op == IR_OP_QUANTIZE, ndq += g->nodes[i]->op == IR_OP_DEQUANTIZE,
              nconv += g->nodes[i]->op == IR_OP_CONV;
        CHECK(nq == 6 && ndq == 6 + 2 * (with_skip ? 2 : 3) && nconv == 2);
      } else {
        test_note("  %s", d.msg);
      }
      ir_graph_free(g);
    }
    oq_close(s);
    s = NULL;
  }
}

/* int64 token ids -> Gather -> Linear (MatMul, then Add with the bias first,
 * as PyTorch writes it) -> Relu -> Softmax -> Linear (bias second) -> y:
 * omquant calibrates on int64 samples, and each MatMul's output is quantized
 * after its bias Add (which reads the MatMul itself), not before it, and
 * after the Relu that alone reads the Add (ONNX Runtime's quantizer drops
 * the Relu and quantizes with its range, the same values). */
static void test_token_ids_linear_bias(void) {
  const char *dir = test_tmpdir("quant_ids");
  char path[512];
  snprintf(path, sizeof path, "%s/ids.onnx", dir);
  static float emb[10 * 8], w1[8 * 6], b1[6], w2[6 * 5], b2[5];
  unsigned seed = 3;
  float *all[] = {emb, w1, b1, w2, b2};
  int sizes[] = {80, 48, 6, 30, 5};
  for (int k = 0; k < 5; k++)
    for (int i = 0; i < sizes[k]; i++) {
      seed = seed * 1103515245u + 12345u;
      all[k][i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "ids", 7, 2, (int64_t[]){1, 4}, NULL);
  mb_init_raw(&m, "emb", 1, 2, (int64_t[]){10, 8}, emb, sizeof emb);
  mb_init_raw(&m, "w1", 1, 2, (int64_t[]){8, 6}, w1, sizeof w1);
  mb_init_raw(&m, "b1", 1, 1, (int64_t[]){6}, b1, sizeof b1);
  mb_init_raw(&m, "w2", 1, 2, (int64_t[]){6, 5}, w2, sizeof w2);
  mb_init_raw(&m, "b2", 1, 1, (int64_t[]){5}, b2, sizeof b2);
  mb_node(&m, "Gather", "gather", "emb,ids", "e");
  mb_node(&m, "MatMul", "mm1", "e,w1", "m1");
  mb_node(&m, "Add", "add1", "b1,m1", "a1");
  mb_node(&m, "Relu", "relu1", "a1", "r1");
  mb_node(&m, "Softmax", "softmax", "r1", "p");
  mb_node(&m, "MatMul", "mm2", "p,w2", "m2");
  mb_node(&m, "Add", "add2", "m2,b2", "y");
  mb_output(&m, "y");
  write_model(&m, path);

  diag d;
  diag_init(&d);
  oq_session *s = NULL;
  if (oq_open(path, NULL, 0, NULL, 0, 0, &s, &d)) {
    test_note("  %s", d.msg);
    CHECK(!"oq_open");
    return;
  }
  /* e, r1 (mm1's output after its bias and Relu), p, y (mm2's output after
   * its bias: a graph output, quantized as ONNX Runtime does) */
  CHECK_EQ_INT(s->plan.ntensors, 4);
  CHECK_EQ_INT(s->plan.nnodes, 2);
  CHECK(s->input_bytes == 4 * 8);
  if (s->plan.ntensors == 4) CHECK(!strcmp(s->plan.tensors[1], "r1") && !strcmp(s->plan.tensors[3], "y"));
  status st = ST_OK;
  int64_t ids[4];
  for (int k = 0; k < 4 && !st; k++) {
    for (int i = 0; i < 4; i++)
      ids[i] = (k * 4 + i * 3) % 10;
    st = oq_calibrate(s, ids, &d);
  }
  if (!st) st = oq_finish(s, QC_MINMAX, 0, &d);
  double cos[4], out_cos = 0;
  if (!st) st = oq_compare(s, ids, cos, &out_cos, &d);
  if (st) test_note("  %s", d.msg);
  CHECK(st == ST_OK);
  if (!st) {
    CHECK(out_cos > 0.99);
    Onnx__ModelProto *q = onnx__model_proto__unpack(NULL, s->written_bytes, s->written);
    CHECK(q && q->graph);
    if (q && q->graph) {
      const Onnx__GraphProto *g = q->graph;
      CHECK_EQ_INT(count_type(g, "QuantizeLinear"), 4);
      for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        if (!strcmp(n->name, "add1")) CHECK(!strcmp(n->input[0], "b1") && !strcmp(n->input[1], "m1"));
        if (!strcmp(n->name, "add2"))
          CHECK(!strcmp(n->input[0], "m2") && !strcmp(n->input[1], "b2") &&
                !strcmp(n->output[0], "y_QuantizeInput"));
        if (!strcmp(n->name, "relu1")) CHECK(!strcmp(n->input[0], "a1"));
        if (!strcmp(n->name, "softmax")) CHECK(!strcmp(n->input[0], "r1_dequantized"));
        if (!strcmp(n->name, "mm2")) CHECK(!strcmp(n->input[0], "p_dequantized"));
      }
    }
    if (q) onnx__model_proto__free_unpacked(q, NULL);
  }
  oq_close(s);
}

/* A model below opset 13 holding an op that changed by then is refused, naming the node. */
static void test_opset_refusal(void) {
  const char *dir = test_tmpdir("quant_opset");
  char path[512];
  snprintf(path, sizeof path, "%s/squeeze.onnx", dir);
  mb m;
  small_model(&m, 11);
  Onnx__NodeProto *n = mb_node(&m, "Squeeze", "sq", "y", "z");
  attr_ints(&m, n, "axes", 1, (int64_t[]){0});
  m.graph.output[0]->name = "z";
  write_model(&m, path);
  diag d;
  diag_init(&d);
  oq_session *s = NULL;
  status st = oq_open(path, NULL, 0, NULL, 0, 0, &s, &d);
  float x[3 * 8 * 8] = {0.5f};
  if (!st) st = oq_calibrate(s, x, &d);
  if (!st) st = oq_finish(s, QC_ENTROPY, 0, &d);
  CHECK(st == ST_ERR_UNSUPPORTED && strstr(d.msg, "node 'sq' (Squeeze)") && strstr(d.msg, "opset 13"));
  if (st != ST_ERR_UNSUPPORTED) test_note("  %s: %s", status_name(st), d.msg);
  oq_close(s);
}

/* every_op (omquant --ops all): x -> Conv -> Relu -> MaxPool -> Split(2)
 * -> Sigmoid(first half), Concat(its output, the second half) -> y. Only
 * the Conv's input and output are quantized by default; with every_op also
 * MaxPool's output, both Split outputs and Sigmoid's output (ONNX Runtime's
 * quantize_static form), and the fake-quantized model stays close. */
static void test_every_op(void) {
  const char *dir = test_tmpdir("quant_every_op");
  char path[512];
  snprintf(path, sizeof path, "%s/pool_split.onnx", dir);
  static float w1[4 * 3 * 3 * 3], b1[4];
  unsigned seed = 5;
  for (int i = 0; i < 112; i++) {
    seed = seed * 1103515245u + 12345u;
    float v = ((float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f) * 0.3f;
    if (i < 108)
      w1[i] = v;
    else
      b1[i - 108] = v;
  }
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", 1, 4, (int64_t[]){1, 3, 8, 8}, NULL);
  mb_init_raw(&m, "w1", 1, 4, (int64_t[]){4, 3, 3, 3}, w1, sizeof w1);
  mb_init_raw(&m, "b1", 1, 1, (int64_t[]){4}, b1, sizeof b1);
  Onnx__NodeProto *n = mb_node(&m, "Conv", "conv1", "x,w1,b1", "c1");
  attr_ints(&m, n, "pads", 4, (int64_t[]){1, 1, 1, 1});
  mb_node(&m, "Relu", "relu1", "c1", "r1");
  n = mb_node(&m, "MaxPool", "pool", "r1", "p");
  attr_ints(&m, n, "kernel_shape", 2, (int64_t[]){2, 2});
  attr_ints(&m, n, "strides", 2, (int64_t[]){2, 2});
  n = mb_node(&m, "Split", "split", "p", "a,b");
  attr_int(&m, n, "axis", 1);
  mb_node(&m, "Sigmoid", "sig", "a", "sa");
  n = mb_node(&m, "Concat", "cat", "sa,b", "y");
  attr_int(&m, n, "axis", 1);
  mb_output(&m, "y");
  write_model(&m, path);
  for (int every = 0; every < 2; every++) {
    diag d;
    diag_init(&d);
    oq_session *s = NULL;
    status st = oq_open(path, NULL, 0, NULL, 0, every, &s, &d);
    if (!st) {
      /* x and r1; with every_op p, a, b and sa too (y, the graph output, has no reader) */
      CHECK_EQ_INT(s->plan.ntensors, every ? 6 : 2);
      CHECK_EQ_INT(s->plan.nnodes, 1);
      float x[3 * 8 * 8];
      for (int k = 0; k < 3 && !st; k++) {
        for (int i = 0; i < 3 * 8 * 8; i++) {
          seed = seed * 1103515245u + 12345u;
          x[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
        }
        st = oq_calibrate(s, x, &d);
      }
      if (!st) st = oq_finish(s, QC_MINMAX, 0, &d);
      double cos[8], out_cos = 0;
      if (!st) st = oq_compare(s, x, cos, &out_cos, &d);
      if (!st) CHECK(out_cos > 0.99);
    }
    if (!st) {
      Onnx__ModelProto *q = onnx__model_proto__unpack(NULL, s->written_bytes, s->written);
      CHECK(q && q->graph);
      if (q && q->graph) {
        CHECK_EQ_INT(count_type(q->graph, "QuantizeLinear"), every ? 6 : 2);
        CHECK_EQ_INT(count_type(q->graph, "DequantizeLinear"), (every ? 6 : 2) + 2);
        /* Sigmoid reads a's DequantizeLinear, Concat sa's and b's */
        for (size_t i = 0; every && i < q->graph->n_node; i++) {
          const Onnx__NodeProto *nd = q->graph->node[i];
          if (!strcmp(nd->name, "sig")) CHECK(!strcmp(nd->input[0], "a_dequantized"));
          if (!strcmp(nd->name, "cat"))
            CHECK(!strcmp(nd->input[0], "sa_dequantized") && !strcmp(nd->input[1], "b_dequantized"));
        }
      }
      if (q) onnx__model_proto__free_unpacked(q, NULL);
    }
    if (st) test_note("  every_op %d: %s", every, d.msg);
    CHECK(st == ST_OK);
    oq_close(s);
  }
}

int main(void) {
  test_minmax_percentile();
  test_entropy();
  test_writer();
  test_token_ids_linear_bias();
  test_opset_refusal();
  test_every_op();
  return test_summary("test_quant");
}
