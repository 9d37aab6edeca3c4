/* test_lowering.c - the lowering passes end to end: IR text -> every pass of
 * passes/pipeline.c -> om package in memory -> libomrt -> outputs compared
 * with the reference evaluator (ir/eval.h) on the graph before the passes.
 *
 *   f32 (must_keep_origin_dtype): max |err| <= 1e-4 * max |ref| per output
 *   f16 (force_fp16, allow_mix_precision): cosine similarity >= 0.999
 *
 * Graphs: a small residual CNN shaped like a classifier (conv+relu ->
 * maxpool -> conv with residual -> GAP -> flatten -> a fully connected 1x1
 * conv -> reshape), a vector-heavy one (depthwise conv with Relu6,
 * concat along channels, broadcast constant, avg pool, softmax, two
 * outputs), and an AIPP (NV12 with crop, CSC, normalisation and padding)
 * feeding a conv, the AIPP's own output compared too. Then the memory plan's properties on a deep residual
 * chain: no two simultaneously live workspace values overlap unless aliased, all inside workspace_bytes,
 * 64-byte aligned, lower bound <= size; and the layout pass's rejections name the node and op type.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/eval.h"
#include "omrt.h"
#include "passes/pass.h"
#include "support.h"

static const char *const cnn_ir =
    "graph cnn opset 13\n"
    "input %x : f32[2,3,20,20]\n"
    "const %w1 : f32[24,3,3,3] = rand(1)\n"
    "const %b1 : f32[24] = rand(2)\n"
    "%c1 : f32[2,24,20,20] = Conv(%x, %w1, %b1) {act=\"relu\", dilations=[1,1], group=1, "
    "kernel_shape=[3,3], pads=[1,1,1,1], strides=[1,1]}  # conv1\n"
    "%p1 : f32[2,24,10,10] = MaxPool(%c1) {kernel_shape=[2,2], pads=[0,0,0,0], strides=[2,2]}"
    "  # pool1\n"
    "const %w2 : f32[24,24,3,3] = rand(3)\n"
    "const %b2 : f32[24] = rand(4)\n"
    "%c2 : f32[2,24,10,10] = Conv(%p1, %w2, %b2, %p1) {act=\"relu\", dilations=[1,1], "
    "group=1, kernel_shape=[3,3], pads=[1,1,1,1], strides=[1,1]}  # conv2\n"
    "%g : f32[2,24,1,1] = GlobalAveragePool(%c2)  # gap\n"
    "%f : f32[2,24] = Flatten(%g) {axis=1}  # flatten\n"
    "const %s1 : i64[4] = [2, 24, 1, 1]\n"
    "%r1 : f32[2,24,1,1] = Reshape(%f, %s1)  # fc_in\n"
    "const %w3 : f32[10,24,1,1] = rand(5)\n"
    "const %b3 : f32[10] = rand(6)\n"
    "%c3 : f32[2,10,1,1] = Conv(%r1, %w3, %b3) {dilations=[1,1], group=1, kernel_shape=[1,1], "
    "pads=[0,0,0,0], strides=[1,1]}  # fc\n"
    "const %s2 : i64[2] = [2, 10]\n"
    "%y : f32[2,10] = Reshape(%c3, %s2)  # fc_out\n"
    "output %y\n";

static const char *const vec_ir =
    "graph vec opset 13\n"
    "input %x : f32[2,8,6,6]\n"
    "const %wd : f32[8,1,3,3] = rand(11)\n"
    "const %bd : f32[8] = rand(12)\n"
    "%d : f32[2,8,6,6] = Conv(%x, %wd, %bd) {act=\"clip\", clip_max=6.0, clip_min=0.0, "
    "dilations=[1,1], group=8, kernel_shape=[3,3], pads=[1,1,1,1], strides=[1,1]}  # dw\n"
    "const %wp : f32[12,8,1,1] = rand(13)\n"
    "%q : f32[2,12,6,6] = Conv(%x, %wp) {dilations=[1,1], group=1, kernel_shape=[1,1], "
    "pads=[0,0,0,0], strides=[1,1]}  # pw\n"
    "%cat : f32[2,20,6,6] = Concat(%d, %q) {axis=1}  # cat\n"
    "%r : f32[2,20,6,6] = Relu(%cat)  # relu\n"
    "const %half : f32[1] = [0.5]\n"
    "%m : f32[2,20,6,6] = Mul(%r, %half)  # scale\n"
    "%s : f32[2,20,6,6] = Sub(%m, %cat)  # sub\n"
    "%a : f32[2,20,3,3] = AveragePool(%s) {count_include_pad=0, kernel_shape=[2,2], "
    "pads=[0,0,0,0], strides=[2,2]}  # avg\n"
    "%fl : f32[2,180] = Flatten(%a) {axis=1}  # flatten\n"
    "%sm : f32[2,180] = Softmax(%fl) {axis=1, coerce_2d=0, log=0}  # softmax\n"
    "output %sm, %a\n";

/* Unfused, as the frontend produces it: the graph passes fold the BN, fuse
 * the residual Add and Relus into the Convs and lower the Gemm first. */
static const char *const onnx_ir =
    "graph onnxish opset 13\n"
    "input %x : f32[1,4,10,10]\n"
    "const %w1 : f32[8,4,3,3] = rand(21)\n"
    "%c1 : f32[1,8,10,10] = Conv(%x, %w1) {dilations=[1,1], group=1, kernel_shape=[3,3], "
    "pads=[1,1,1,1], strides=[1,1]}  # conv1\n"
    "const %sc : f32[8] = rand(22)\n"
    "const %bb : f32[8] = rand(23)\n"
    "const %mn : f32[8] = rand(24)\n"
    "const %vr : f32[8] = fill(1.5)\n"
    "%bn : f32[1,8,10,10] = BatchNormalization(%c1, %sc, %bb, %mn, %vr) {epsilon=1e-05}  # bn1\n"
    "%r1 : f32[1,8,10,10] = Relu(%bn)  # relu1\n"
    "const %w2 : f32[8,8,3,3] = rand(25)\n"
    "%c2 : f32[1,8,10,10] = Conv(%r1, %w2) {dilations=[1,1], group=1, kernel_shape=[3,3], "
    "pads=[1,1,1,1], strides=[1,1]}  # conv2\n"
    "%a : f32[1,8,10,10] = Add(%c2, %r1)  # add\n"
    "%r2 : f32[1,8,10,10] = Relu(%a)  # relu2\n"
    "%gp : f32[1,8,1,1] = GlobalAveragePool(%r2)  # gap\n"
    "%fl : f32[1,8] = Flatten(%gp) {axis=1}  # flatten\n"
    "const %B : f32[8,5] = rand(26)\n"
    "const %C : f32[5] = rand(27)\n"
    "%gm : f32[1,5] = Gemm(%fl, %B, %C) {alpha=1.0, beta=1.0, transA=0, transB=0}  # gemm\n"
    "output %gm\n";

/* x: NV12 10x10 bytes -> Aipp (crop 8x6 at (2, 2), JPEG CSC, mean/min/
 * var_reci, padding l1 t1 b1) -> [1, 3, 8, 9] -> Conv 3x3. The record is
 * written out as the u8 constant's values. With per_image, a
 * batch of 2 and a record an image: image 1 its own crop (8x5 at (0, 4)),
 * padding (r1 t2 b1), mean, min, var_reci and padding value. */
static const char *aipp_ir(int per_image) {
  static char text[8192];
  om_aipp_params r[2] = {{.input_format = OM_AIPP_YUV420SP_U8,
                          .src_w = 10,
                          .src_h = 10,
                          .csc = 1,
                          .crop = 1,
                          .padding = 1,
                          .crop_x = 2,
                          .crop_y = 2,
                          .crop_w = 8,
                          .crop_h = 6,
                          .pad_left = 1,
                          .pad_top = 1,
                          .pad_bottom = 1,
                          .matrix = {{256, 0, 359}, {256, -88, -183}, {256, 454, 0}},
                          .input_bias = {0, 128, 128},
                          .mean = {124, 116, 104},
                          .min = {0.5f, 0.25f, 0},
                          .var_reci = {0.017f, 0.0175f, 0.0174f, 1},
                          .pad_value = -0.5f}};
  r[1] = r[0];
  r[1].crop_x = 0, r[1].crop_y = 4, r[1].crop_h = 5;
  r[1].pad_left = 0, r[1].pad_right = 1, r[1].pad_top = 2;
  r[1].mean[0] = 10, r[1].min[2] = 3.5f, r[1].var_reci[1] = -0.5f, r[1].pad_value = 2.0f;
  const int n = per_image ? 2 : 1;
  const uint8_t *b = (const uint8_t *)r;
  int len = snprintf(text, sizeof text,
                     "graph aipp opset 13\n"
                     "input %%x : u8[%d,15,10,1]\n"
                     "const %%p : u8[%d,192] = [",
                     n, n);
  for (int i = 0; i < n * OM_AIPP_PARAMS_BYTES; i++)
    len += snprintf(text + len, sizeof text - (size_t)len, "%s%u", i ? ", " : "", b[i]);
  snprintf(text + len, sizeof text - (size_t)len,
           "]\n"
           "%%a : f32[%d,3,8,9] = Aipp(%%x, %%p) {dims=[%d,3,8,9]}  # aipp\n"
           "const %%w : f32[4,3,3,3] = rand(31)\n"
           "%%y : f32[%d,4,8,9] = Conv(%%a, %%w) {dilations=[1,1], group=1, kernel_shape=[3,3], "
           "pads=[1,1,1,1], strides=[1,1]}  # conv\n"
           "output %%y, %%a\n",
           n, n, n);
  return text;
}

static const soc_info test_soc = {.name = "Ascend310",
                                  .ai_cores = 2,
                                  .cube_m = 16,
                                  .cube_n = 16,
                                  .cube_k = 16,
                                  .l1_bytes = 1 << 20,
                                  .l0a_bytes = 65536,
                                  .l0b_bytes = 65536,
                                  .l0c_bytes = 262144,
                                  .ub_bytes = 262144,
                                  .vector_bytes = 256,
                                  .clock_mhz = 1000};

static ir_graph *parse(const char *text) {
  diag d;
  diag_init(&d);
  ir_graph *g = NULL;
  if (ir_parse(text, "test", &g, &d) != ST_OK) test_note("parse: %s", d.msg);
  return g;
}

static status run_passes(ir_graph *g, pass_ctx *ctx, int upto, diag *d) {
  for (int i = 0; i < upto; i++) {
    status st = pass_pipeline[i].run(g, ctx, d);
    if (st == ST_OK) st = ir_verify(g, d);
    if (st != ST_OK) {
      diag_prefix(d, "%s", pass_pipeline[i].name);
      return st;
    }
  }
  return ST_OK;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static float rnd(void) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((rng_state >> 40) & 0xffffff) / 16777216.0f * 2.0f - 1.0f;
}

/* Compiles `text` in precision p, runs it on random inputs and compares
 * every output with the reference. */
static void check_numerics(const char *label, const char *text, om_precision p) {
  ir_graph *g = parse(text);
  CHECK(g != NULL);
  if (!g) return;
  arena a;
  arena_init(&a, 0);
  const void *inputs[8];
  void *ref[8];
  for (int i = 0; i < g->ninputs; i++) {
    int64_t n = ir_value_elements(g->inputs[i]);
    float *buf = arena_array(&a, (size_t)n, sizeof *buf);
    for (int64_t j = 0; j < n; j++)
      buf[j] = rnd();
    inputs[i] = buf;
  }
  diag d;
  diag_init(&d);
  CHECK_EQ_INT(ir_eval_graph(g, inputs, ref, &a, &d), ST_OK);
  if (d.code) test_note("%s: eval: %s", label, d.msg);

  pass_ctx ctx = {.soc = &test_soc, .precision = p, .model_name = label, .cmdline = "test"};
  status st = run_passes(g, &ctx, pass_pipeline_count, &d);
  CHECK_EQ_INT(st, ST_OK);
  if (st != ST_OK) test_note("%s: %s", label, d.msg);
  void *om = NULL;
  size_t om_size = 0;
  omrt_model *m = NULL;
  omrt_context *c = NULL;
  if (st == ST_OK) {
    CHECK(ctx.ntasks > 0 && ctx.weights_bytes > 0 && ctx.workspace_bytes >= ctx.workspace_lower_bound);
    st = om_writer_to_memory(ctx.writer, &om, &om_size, &d);
    CHECK_EQ_INT(st, ST_OK);
  }
  if (st == ST_OK) {
    omrt_status rs = omrt_model_load_memory(om, om_size, NULL, &m);
    CHECK_EQ_INT(rs, OMRT_OK);
    if (rs != OMRT_OK) test_note("%s: load: %s", label, omrt_last_error());
    if (rs == OMRT_OK) rs = omrt_context_new(m, &c);
    if (rs == OMRT_OK) {
      int nout = omrt_model_num_outputs(m);
      CHECK_EQ_INT(nout, g->noutputs);
      void *outs[8];
      for (int i = 0; i < nout; i++) {
        omrt_tensor_desc od;
        omrt_model_output(m, i, &od);
        CHECK_EQ_INT(od.dtype, OMRT_FLOAT32);
        outs[i] = arena_alloc(&a, od.bytes);
      }
      rs = omrt_execute(c, inputs, outs);
      CHECK_EQ_INT(rs, OMRT_OK);
      if (rs != OMRT_OK) test_note("%s: execute: %s", label, omrt_last_error());
      for (int i = 0; i < nout && rs == OMRT_OK; i++) {
        int64_t n = ir_value_elements(g->outputs[i]);
        const float *got = outs[i], *want = ref[i];
        double max_ref = 0, max_err = 0, dot = 0, n1 = 0, n2 = 0;
        for (int64_t j = 0; j < n; j++) {
          max_ref = fmax(max_ref, fabs(want[j]));
          max_err = fmax(max_err, fabs((double)got[j] - want[j]));
          dot += (double)got[j] * want[j], n1 += (double)got[j] * got[j], n2 += (double)want[j] * want[j];
        }
        double cosine = dot / (sqrt(n1) * sqrt(n2) + 1e-30);
        if (p == OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE) {
          CHECK(max_err <= 1e-4 * max_ref);
        } else {
          CHECK(cosine >= 0.999);
        }
        test_note("%s precision %d output %d: max|ref| %.4g max err %.3g cosine %.6f", label, (int)p, i,
                  max_ref, max_err, cosine);
      }
    }
  }
  omrt_context_free(c);
  omrt_model_free(m);
  free(om);
  om_writer_free(ctx.writer);
  arena_free(&a);
  ir_graph_free(g);
}

/* A chain of residual blocks with downsampling, as text. */
static char *residual_chain(int blocks) {
  size_t cap = 4096 + (size_t)blocks * 1024, len = 0;
  char *t = malloc(cap);
  int c = 16, h = 32, seed = 1;
  len += (size_t)snprintf(t + len, cap - len, "graph res opset 13\ninput %%x : f32[1,16,32,32]\n");
  char prev[32] = "x";
  for (int b = 0; b < blocks; b++) {
    int stride = b % 3 == 2 ? 2 : 1, co = stride == 2 ? c * 2 : c, ho = h / stride;
    int seed_a = seed++, seed_b = seed++, seed_d = seed++;
    const char *conv = "{act=\"relu\", dilations=[1,1], group=1, kernel_shape=[3,3], pads=[1,1,1,1]";
    len +=
        (size_t)snprintf(t + len, cap - len,
                         "const %%wa%d : f32[%d,%d,3,3] = rand(%d)\n"
                         "%%a%d : f32[1,%d,%d,%d] = Conv(%%%s, %%wa%d) %s, strides=[%d,%d]}\n"
                         "const %%wb%d : f32[%d,%d,3,3] = rand(%d)\n",
                         b, co, c, seed_a, b, co, ho, ho, prev, b, conv, stride, stride, b, co, co, seed_b);
    char res[32];
    snprintf(res, sizeof res, "%s", prev);
    if (stride == 2) {
      len += (size_t)snprintf(t + len, cap - len,
                              "const %%wd%d : f32[%d,%d,1,1] = rand(%d)\n"
                              "%%d%d : f32[1,%d,%d,%d] = Conv(%%%s, %%wd%d) {dilations=[1,1], group=1, "
                              "kernel_shape=[1,1], pads=[0,0,0,0], strides=[2,2]}\n",
                              b, co, c, seed_d, b, co, ho, ho, prev, b);
      snprintf(res, sizeof res, "d%d", b);
    }
    len += (size_t)snprintf(t + len, cap - len,
                            "%%o%d : f32[1,%d,%d,%d] = Conv(%%a%d, %%wb%d, _, %%%s) %s, strides=[1,1]}\n", b,
                            co, ho, ho, b, b, res, conv);
    snprintf(prev, sizeof prev, "o%d", b);
    c = co, h = ho;
  }
  len += (size_t)snprintf(
      t + len, cap - len,
      "%%gp : f32[1,%d,1,1] = GlobalAveragePool(%%%s)\n%%fl : f32[1,%d] = Flatten(%%gp) {axis=1}\n"
      "output %%fl\n",
      c, prev, c);
  return t;
}

static int same_group(const int *group, int a, int b) { return group[a] == group[b]; }

static void check_memplan(void) {
  char *text = residual_chain(9);
  ir_graph *g = parse(text);
  free(text);
  CHECK(g != NULL);
  if (!g) return;
  pass_ctx ctx = {.soc = &test_soc, .precision = OM_PRECISION_FORCE_FP16};
  diag d;
  diag_init(&d);
  int upto = 0;
  while (upto < pass_pipeline_count && strcmp(pass_pipeline[upto].name, "memplan") != 0)
    upto++;
  status st = run_passes(g, &ctx, upto + 1, &d);
  CHECK_EQ_INT(st, ST_OK);
  if (st != ST_OK) {
    test_note("memplan: %s", d.msg);
    ir_graph_free(g);
    return;
  }
  int nv = g->nvalues;
  int *def = calloc((size_t)nv, sizeof *def), *last = calloc((size_t)nv, sizeof *last);
  int *group = calloc((size_t)nv, sizeof *group);
  for (int i = 0; i < nv; i++)
    def[i] = last[i] = -1, group[i] = i;
  for (int t = 0; t < g->nnodes; t++) {
    const ir_node *n = g->nodes[t];
    for (int j = 0; j < n->nin; j++)
      if (n->in[j]) last[n->in[j]->id] = t;
    def[n->out[0]->id] = t;
    if (ir_attr_int(n, "alias", 0)) group[n->out[0]->id] = group[n->in[0]->id];
    int64_t over = ir_attr_int(n, "over_input", -1); /* the output in that input's buffer */
    if (over >= 0 && over < n->nin && n->in[over]) group[n->out[0]->id] = group[n->in[over]->id];
  }
  /* an alias group lives as long as any member */
  int *gs = calloc((size_t)nv, sizeof *gs), *ge = calloc((size_t)nv, sizeof *ge);
  for (int i = 0; i < nv; i++)
    gs[i] = nv + g->nnodes, ge[i] = -1;
  for (int i = 0; i < nv; i++) {
    int end = last[i] > def[i] ? last[i] : def[i], r = group[i];
    if (def[i] < gs[r]) gs[r] = def[i];
    if (end > ge[r]) ge[r] = end;
  }
  int overlaps = 0, outside = 0, misaligned = 0, nws = 0;
  uint64_t sum = 0;
  for (int i = 0; i < nv; i++) {
    const ir_value *v = g->values[i];
    if (v->region != IR_REGION_WORKSPACE) continue;
    nws++;
    sum += v->bytes;
    if (v->offset % 64) misaligned++;
    if (v->offset + v->bytes > ctx.workspace_bytes) outside++;
    for (int j = i + 1; j < nv; j++) {
      const ir_value *u = g->values[j];
      if (u->region != IR_REGION_WORKSPACE || same_group(group, i, j)) continue;
      int ri = group[i], rj = group[j];
      int live_together = gs[ri] <= ge[rj] && gs[rj] <= ge[ri];
      int mem_overlap = v->offset < u->offset + u->bytes && u->offset < v->offset + v->bytes;
      if (live_together && mem_overlap) {
        overlaps++;
        test_note("overlap: %s and %s", v->name, u->name);
      }
    }
  }
  CHECK(nws > 20);
  CHECK_EQ_INT(overlaps, 0);
  CHECK_EQ_INT(outside, 0);
  CHECK_EQ_INT(misaligned, 0);
  CHECK(ctx.workspace_lower_bound > 0 && ctx.workspace_lower_bound <= ctx.workspace_bytes);
  CHECK(ctx.workspace_bytes < sum);
  CHECK(ctx.workspace_bytes * 4 <= ctx.workspace_lower_bound * 5); /* within 1.25x */
  test_note("memplan: %d workspace values, %llu bytes unplanned, arena %llu, lower bound %llu", nws,
            (unsigned long long)sum, (unsigned long long)ctx.workspace_bytes,
            (unsigned long long)ctx.workspace_lower_bound);
  free(def), free(last), free(group), free(gs), free(ge);
  ir_graph_free(g);
}

/* The layout pass refuses what the backend cannot run, naming the node. */
static void check_rejections(void) {
  static const struct {
    const char *ir, *want;
  } cases[] = {
      {"graph t opset 13\ninput %x : f32[1,8,4,4]\nconst %w : f32[6,4,3,3] = rand(1)\n"
       "%y : f32[1,6,4,4] = Conv(%x, %w) {group=3, kernel_shape=[3,3], pads=[1,1,1,1]}  # gconv\n"
       "output %y\n",
       "node 'gconv' (Conv): group=3 does not divide input channels 8"},
      {"graph t opset 13\ninput %x : f32[1,4,2,2]\ninput %s : f32[4]\ninput %b : f32[4]\n"
       "input %m : f32[4]\ninput %v : f32[4]\n"
       "%y : f32[1,4,2,2] = BatchNormalization(%x, %s, %b, %m, %v) {epsilon=1e-05}  # bn\noutput %y\n",
       "node 'bn' (BatchNormalization): only supported folded into a preceding Conv"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    ir_graph *g = parse(cases[i].ir);
    CHECK(g != NULL);
    if (!g) continue;
    pass_ctx ctx = {.soc = &test_soc, .precision = OM_PRECISION_FORCE_FP16};
    diag d;
    diag_init(&d);
    CHECK_EQ_INT(pass_precision(g, &ctx, &d), ST_OK);
    CHECK_EQ_INT(pass_layout(g, &ctx, &d), ST_ERR_UNSUPPORTED);
    CHECK(strstr(d.msg, cases[i].want) != NULL);
    if (!strstr(d.msg, cases[i].want)) test_note("got: %s", d.msg);
    ir_graph_free(g);
  }
}

/* The op table is complete: every op's row names rules the lowering passes
 * have (ops.def: lay for layout, task for tiling and emit), and its columns
 * agree with each other. A row added without its rules fails here. */
static void check_op_table(void) {
  for (int op = 0; op < IR_OP_COUNT; op++) {
    const ir_op_info *r = &ir_ops[op];
    int ok =
        pass_layout_has_rule(r->lay) && r->min_in <= r->max_in && r->min_out <= r->max_out && r->min_out >= 1;
    if (r->task != OM_TASK_NONE) ok &= pass_tiling_has_rule(r->task) && pass_emit_has_rule(r->task);
    /* unit NONE (folds away) <=> lay NONE <=> no task, except what fuses
     * into another op's task (FOLDED) */
    ok &= (r->unit == IR_UNIT_NONE) == (r->lay == IR_LAY_NONE);
    ok &= (r->task == OM_TASK_NONE) == (r->lay == IR_LAY_NONE || r->lay == IR_LAY_FOLDED);
    ok &= (r->unit == IR_UNIT_CUBE) == (r->task == OM_TASK_CONV2D || r->task == OM_TASK_MATMUL ||
                                        r->task == OM_TASK_ATTENTION || r->task == OM_TASK_QCONV2D ||
                                        r->task == OM_TASK_RECURRENCE || r->task == OM_TASK_QMATMUL);
    ok &= (r->lay == IR_LAY_VECTORIZED) <= (r->task == OM_TASK_VPROG);
    CHECK(ok);
    if (!ok)
      test_note("ops.def row %s (%d) names rules the passes lack or columns that disagree", r->name, op);
  }
  /* no rule for a value no row can name */
  CHECK(!pass_tiling_has_rule(OM_TASK_NONE) && !pass_emit_has_rule(OM_TASK_KIND_COUNT));
}

int main(void) {
  check_op_table();
  check_numerics("cnn", cnn_ir, OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE);
  check_numerics("cnn", cnn_ir, OM_PRECISION_FORCE_FP16);
  check_numerics("vec", vec_ir, OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE);
  check_numerics("vec", vec_ir, OM_PRECISION_FORCE_FP16);
  check_numerics("vec", vec_ir, OM_PRECISION_ALLOW_MIX_PRECISION);
  check_numerics("onnxish", onnx_ir, OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE);
  check_numerics("onnxish", onnx_ir, OM_PRECISION_FORCE_FP16);
  for (int per_image = 0; per_image < 2; per_image++) {
    check_numerics("aipp", aipp_ir(per_image), OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE);
    check_numerics("aipp", aipp_ir(per_image), OM_PRECISION_FORCE_FP16);
  }
  check_memplan();
  check_rejections();
  return test_summary("test_lowering");
}
