/* test_frontend_import_infer.c - type and shape inference and folding at
 * import (frontend/onnx_load.c step 4, ir_shape_try in ir/shape.h): nodes
 * are imported in dependency order and the IR nodes each becomes are
 * inferred in dependency order, so importers further on see dtypes, ranks
 * and the constants that shape arithmetic establishes, whatever order the
 * file and the importers make nodes in; what cannot be inferred yet stays
 * unknown without failing the import, and the shape_infer pass then reports
 * it as it always did; the pass, run again over what import inferred, gives
 * the same shapes. Models are built with onnx_mb.h. */
#include "onnx_mb.h"
#include "passes/pass.h"

static status run_shape_infer(ir_graph *g, diag *d) {
  pass_ctx ctx = {0};
  diag_init(d);
  return pass_shape_infer(g, &ctx, d);
}

static int has_dims(const ir_value *v, int rank, const int64_t *dims) {
  if (v->rank != rank) return 0;
  for (int i = 0; i < rank; i++)
    if (v->dims[i] != dims[i]) return 0;
  return 1;
}

/* PyTorch's channel split: Slice ends = Shape(x)[1] * 3 / 6, with x's batch
 * dim symbolic and fixed by --input_shape. The chain folds at import and the
 * Slice importer gets a constant. */
static void test_slice_of_shape_chain(void) {
  mb m;
  mb_init(&m, 13);
  const char *sym_dims[4] = {"N", NULL, NULL, NULL};
  mb_input(&m, "x", DT_FLOAT32, 4, (int64_t[]){1, 8, 4, 4}, sym_dims);
  int64_t one = 1, three = 3, six = 6, zero = 0;
  mb_init_raw(&m, "i1", DT_INT64, 1, (int64_t[]){1}, &one, 8);
  mb_init_raw(&m, "k3", DT_INT64, 1, (int64_t[]){1}, &three, 8);
  mb_init_raw(&m, "k6", DT_INT64, 1, (int64_t[]){1}, &six, 8);
  mb_init_raw(&m, "starts", DT_INT64, 1, (int64_t[]){1}, &zero, 8);
  mb_init_raw(&m, "axes", DT_INT64, 1, (int64_t[]){1}, &one, 8);
  mb_node(&m, "Shape", "shp", "x", "s");
  mb_node(&m, "Gather", "ga", "s,i1", "c");
  mb_node(&m, "Mul", "mul", "c,k3", "c3");
  mb_node(&m, "Div", "div", "c3,k6", "ends");
  mb_node(&m, "Slice", "sl", "x,starts,ends,axes", "y");
  mb_output(&m, "y");
  onnx_input_shape fix = {"x", 4, {2, 8, 4, 4}};
  onnx_options opt = {.input_shapes = &fix, .ninput_shapes = 1};
  ir_graph *g = EXPECT_OK(&m, NULL, &opt);
  if (g) {
    CHECK_EQ_INT(g->nnodes, 1);
    const ir_node *sl = find_node(g, IR_OP_SLICE);
    CHECK(sl && sl->nin == 1 && attr_ints_are(sl, "ends", 1, (int64_t[]){4}) &&
          attr_ints_are(sl, "starts", 1, (int64_t[]){0}) && attr_ints_are(sl, "axes", 1, (int64_t[]){1}));
    CHECK(has_dims(g->outputs[0], 4, (int64_t[]){2, 4, 4, 4}));
    diag d;
    CHECK_EQ_INT(run_shape_infer(g, &d), ST_OK);
    CHECK(has_dims(g->outputs[0], 4, (int64_t[]){2, 4, 4, 4}));
  }
  ir_graph_free(g);
  /* Without --input_shape the batch dim stays symbolic: the load says so. */
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "input 'x' dim 0 ('N') is symbolic", "--input_shape");
  mb_free(&m);
}

/* Pad (opset 13: pads an input) needs its input's rank; a Conv's output has
 * it at import. */
static void test_pad_after_conv(void) {
  static float w[4 * 3 * 3 * 3];
  for (int i = 0; i < 108; i++)
    w[i] = (float)(i % 7) * 0.1f - 0.3f;
  int64_t pads[8] = {0, 0, 1, 1, 0, 0, 1, 1};
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", DT_FLOAT32, 4, (int64_t[]){1, 3, 8, 8}, NULL);
  mb_init_raw(&m, "w", DT_FLOAT32, 4, (int64_t[]){4, 3, 3, 3}, w, sizeof w);
  mb_init_raw(&m, "pads", DT_INT64, 1, (int64_t[]){8}, pads, sizeof pads);
  Onnx__NodeProto *c = mb_node(&m, "Conv", "conv", "x,w", "c");
  attr_string(&m, c, "auto_pad", "SAME_UPPER");
  mb_node(&m, "Pad", "pad", "c,pads", "y");
  mb_output(&m, "y");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    const ir_node *conv = find_node(g, IR_OP_CONV), *pad = find_node(g, IR_OP_PAD);
    CHECK(conv && has_dims(conv->out[0], 4, (int64_t[]){1, 4, 8, 8}));
    /* the importer's attributes are left for the pass to normalise */
    CHECK(conv && !strcmp(ir_attr_string(conv, "auto_pad", ""), "SAME_UPPER"));
    CHECK(pad && pad->nin == 1 && attr_ints_are(pad, "pads", 8, pads));
    CHECK(has_dims(g->outputs[0], 4, (int64_t[]){1, 4, 10, 10}));
    diag d;
    CHECK_EQ_INT(run_shape_infer(g, &d), ST_OK);
    CHECK(conv && !ir_attr_find(conv, "auto_pad") && attr_ints_are(conv, "pads", 4, (int64_t[]){1, 1, 1, 1}));
    CHECK(has_dims(g->outputs[0], 4, (int64_t[]){1, 4, 10, 10}));
  }
  ir_graph_free(g);
  mb_free(&m);
}

/* Resize's inference turns sizes into float scales, which is not
 * idempotent: the node keeps the importer's sizes; only its output's dims
 * are set at import, and the pass gives the same ones. */
static void test_resize_keeps_sizes(void) {
  int64_t sizes[4] = {1, 1, 7, 5};
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", DT_FLOAT32, 4, (int64_t[]){1, 1, 3, 49}, NULL);
  mb_init_raw(&m, "sizes", DT_INT64, 1, (int64_t[]){4}, sizes, sizeof sizes);
  mb_node(&m, "Relu", "r", "x", "h");
  mb_node(&m, "Resize", "rs", "h,,,sizes", "y");
  mb_node(&m, "Relu", "r2", "y", "z");
  mb_output(&m, "z");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    const ir_node *rs = find_node(g, IR_OP_RESIZE);
    CHECK(rs && attr_ints_are(rs, "sizes", 4, sizes) && !ir_attr_find(rs, "scales"));
    CHECK(has_dims(g->outputs[0], 4, sizes));
    diag d;
    CHECK_EQ_INT(run_shape_infer(g, &d), ST_OK);
    CHECK(has_dims(g->outputs[0], 4, sizes));
  }
  ir_graph_free(g);
  mb_free(&m);
}

/* Best effort: what import cannot infer or evaluate stays unknown, the load
 * succeeds, and the pass reports it with its usual message. */
static void test_errors_left_to_the_pass(void) {
  mb m;
  diag d;
  /* shapes that do not broadcast */
  mb_init(&m, 13);
  mb_input(&m, "a", DT_FLOAT32, 2, (int64_t[]){1, 3}, NULL);
  mb_input(&m, "b", DT_FLOAT32, 2, (int64_t[]){1, 4}, NULL);
  mb_node(&m, "Add", "add", "a,b", "c");
  mb_node(&m, "Relu", "r", "c", "y");
  mb_output(&m, "y");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    CHECK(g->outputs[0]->rank == -1 && find_node(g, IR_OP_ADD)->out[0]->rank == -1);
    CHECK_EQ_INT(run_shape_infer(g, &d), ST_ERR_INVALID);
    CHECK(strstr(d.msg, "node 'add' (Add): inputs [1,3] and [1,4] do not broadcast"));
  }
  ir_graph_free(g);
  mb_free(&m);

  /* a shape known only at run time */
  mb_init(&m, 13);
  mb_input(&m, "x", DT_FLOAT32, 2, (int64_t[]){2, 6}, NULL);
  mb_input(&m, "s", DT_INT64, 1, (int64_t[]){2}, NULL);
  mb_node(&m, "Reshape", "rs", "x,s", "y");
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    CHECK(g->outputs[0]->rank == -1);
    CHECK_EQ_INT(run_shape_infer(g, &d), ST_ERR_UNSUPPORTED);
    CHECK(strstr(d.msg, "node 'rs' (Reshape): shape input 's' is not known at compile time"));
  }
  ir_graph_free(g);
  mb_free(&m);

  /* shape arithmetic that fails on the data: not folded at import */
  mb_init(&m, 13);
  mb_input(&m, "x", DT_FLOAT32, 2, (int64_t[]){2, 6}, NULL);
  int64_t five = 5;
  mb_init_raw(&m, "i5", DT_INT64, 1, (int64_t[]){1}, &five, 8);
  mb_node(&m, "Shape", "shp", "x", "s");
  mb_node(&m, "Gather", "ga", "s,i5", "y");
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    const ir_node *ga = find_node(g, IR_OP_GATHER);
    CHECK(ga && !g->outputs[0]->data); /* the constant index is out of range: no shape either */
    CHECK_EQ_INT(run_shape_infer(g, &d), ST_ERR_INVALID);
    CHECK(strstr(d.msg, "node 'ga' (Gather): index 5 at position 0 of constant indices 'i5'"));
  }
  ir_graph_free(g);
  mb_free(&m);
}

/* The products of dims an empty tensor allows to be huge (its size is 0
 * whatever they are) are checked: Flatten over [0, 2^62, 4, 4] at axis 1
 * would make a dim of 2^66. (The compile fuzzer's flatten-dims-overflow
 * input is refused earlier now, at a node with a wrong input count.) */
static void test_flatten_dims_overflow(void) {
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", DT_FLOAT32, 4, (int64_t[]){0, (int64_t)1 << 62, 4, 4}, NULL);
  mb_node(&m, "Flatten", "fl", "x", "y");
  mb_output(&m, "y");
  diag d;
  ir_graph *g = NULL;
  status s = mb_load(&m, NULL, NULL, &g, &d);
  if (s == ST_OK) s = run_shape_infer(g, &d);
  CHECK_EQ_INT(s, ST_ERR_LIMIT);
  CHECK(strstr(d.msg, "node 'fl' (Flatten)"));
  if (!strstr(d.msg, "node 'fl' (Flatten)")) test_note("  %s", d.msg);
  ir_graph_free(g);
  mb_free(&m);
}

/* The front of a wav2vec2 / HuBERT feature extractor as torch.onnx exports
 * it (opset 13): waveform [1, T] -> Unsqueeze -> 1-D Conv (stride 5) ->
 * GroupNorm as Reshape [0, G, -1] -> InstanceNormalization -> Reshape back
 * to Shape(conv) -> Mul, Add per channel. The 1-D Conv's importer makes the
 * Conv before the Unsqueezes that feed it, so its output is typed only by
 * inference in dependency order; the InstanceNormalization decomposition
 * needs that dtype. G = 8 channels per group of 1 (HuBERT's 512 groups of
 * 512 channels, smaller), and G = 2 (4 channels per group). */
static void group_norm_model(mb *m, int groups) {
  static float w[8 * 10], ones[8], zeros[8], gamma[8], beta[8];
  for (int i = 0; i < 80; i++)
    w[i] = (float)((i * 7) % 11) * 0.05f - 0.25f;
  for (int i = 0; i < 8; i++)
    ones[i] = 1, zeros[i] = 0, gamma[i] = 0.5f + 0.1f * (float)i, beta[i] = 0.1f * (float)i - 0.3f;
  int64_t one = 1, rshape[3] = {0, groups, -1};
  mb_init(m, 13);
  const char *params[2] = {NULL, "T"};
  mb_input(m, "wave", DT_FLOAT32, 2, (int64_t[]){1, 16000}, params);
  mb_init_raw(m, "ax1", DT_INT64, 1, (int64_t[]){1}, &one, 8);
  mb_init_raw(m, "w", DT_FLOAT32, 3, (int64_t[]){8, 1, 10}, w, sizeof w);
  mb_init_raw(m, "rshape", DT_INT64, 1, (int64_t[]){3}, rshape, sizeof rshape);
  mb_init_raw(m, "ones", DT_FLOAT32, 1, (int64_t[]){groups}, ones, (size_t)groups * 4);
  mb_init_raw(m, "zeros", DT_FLOAT32, 1, (int64_t[]){groups}, zeros, (size_t)groups * 4);
  mb_init_raw(m, "gamma", DT_FLOAT32, 2, (int64_t[]){8, 1}, gamma, sizeof gamma);
  mb_init_raw(m, "beta", DT_FLOAT32, 2, (int64_t[]){8, 1}, beta, sizeof beta);
  mb_node(m, "Unsqueeze", "/Unsqueeze", "wave,ax1", "u");
  Onnx__NodeProto *c = mb_node(m, "Conv", "/conv/Conv", "u,w", "c");
  attr_ints(m, c, "strides", 1, (int64_t[]){5});
  mb_node(m, "Reshape", "/norm/Reshape", "c,rshape", "r");
  mb_node(m, "InstanceNormalization", "/norm/InstanceNormalization", "r,ones,zeros", "in");
  mb_node(m, "Shape", "/norm/Shape", "c", "cs");
  mb_node(m, "Reshape", "/norm/Reshape_1", "in,cs", "back");
  mb_node(m, "Mul", "/norm/Mul", "back,gamma", "scaled");
  mb_node(m, "Add", "/norm/Add", "scaled,beta", "y");
  mb_output(m, "y");
}

static void test_group_norm_after_conv1d(void) {
  onnx_input_shape fix = {"wave", 2, {1, 400}};
  onnx_options opt = {.input_shapes = &fix, .ninput_shapes = 1};
  for (int groups = 8; groups >= 2; groups -= 6) {
    mb m;
    group_norm_model(&m, groups);
    ir_graph *g = EXPECT_OK(&m, NULL, &opt);
    if (g) {
      const int64_t want[3] = {1, 8, 79};
      const ir_value *r = ir_value_find(g, "r");
      CHECK(r && r->dtype == DT_FLOAT32 && has_dims(r, 3, (int64_t[]){1, groups, 8 / groups * 79}));
      CHECK(g->outputs[0]->dtype == DT_FLOAT32 && has_dims(g->outputs[0], 3, want));
      CHECK(!find_node(g, IR_OP_SHAPE)); /* Shape(c) folded at import */
      diag d;
      CHECK_EQ_INT(run_shape_infer(g, &d), ST_OK);
      CHECK(has_dims(g->outputs[0], 3, want));
    }
    ir_graph_free(g);
    mb_free(&m);
  }
}

/* Relative-position attention's bias table sliced to the 2L - 1 offsets a
 * sequence of L = Shape(x)[1] needs: Slice ends = Unsqueeze(Shape -> Gather
 * -> Mul -> Sub), where x comes out of a 1-D Conv front end (typed and
 * shaped only by inference in dependency order) and the waveform length is
 * fixed by --input_shape. The chain folds at import and the Slice importer
 * gets its constant ends. */
static void test_slice_ends_after_conv1d(void) {
  static float w[8 * 10], table[255 * 8];
  for (int i = 0; i < 80; i++)
    w[i] = (float)(i % 5) * 0.1f;
  for (int i = 0; i < 255 * 8; i++)
    table[i] = (float)i;
  int64_t zero = 0, one = 1, two = 2;
  mb m;
  mb_init(&m, 13);
  const char *params[2] = {NULL, "T"};
  mb_input(&m, "wave", DT_FLOAT32, 2, (int64_t[]){1, 16000}, params);
  mb_init_raw(&m, "ax1", DT_INT64, 1, (int64_t[]){1}, &one, 8);
  mb_init_raw(&m, "ax0", DT_INT64, 1, (int64_t[]){1}, &zero, 8);
  mb_init_raw(&m, "w", DT_FLOAT32, 3, (int64_t[]){8, 1, 10}, w, sizeof w);
  mb_init_raw(&m, "table", DT_FLOAT32, 2, (int64_t[]){255, 8}, table, sizeof table);
  mb_init_raw(&m, "i1", DT_INT64, 0, NULL, &one, 8);
  mb_init_raw(&m, "k2", DT_INT64, 0, NULL, &two, 8);
  mb_init_raw(&m, "k1", DT_INT64, 0, NULL, &one, 8);
  mb_init_raw(&m, "starts", DT_INT64, 1, (int64_t[]){1}, &zero, 8);
  mb_node(&m, "Unsqueeze", "/Unsqueeze", "wave,ax1", "u");
  Onnx__NodeProto *c = mb_node(&m, "Conv", "/front/Conv", "u,w", "c");
  attr_ints(&m, c, "strides", 1, (int64_t[]){5});
  c = mb_node(&m, "Transpose", "/Transpose", "c", "x");
  attr_ints(&m, c, "perm", 3, (int64_t[]){0, 2, 1});
  mb_node(&m, "Shape", "/Shape", "x", "xs");
  mb_node(&m, "Gather", "/Gather", "xs,i1", "L");
  mb_node(&m, "Mul", "/Mul", "L,k2", "L2");
  mb_node(&m, "Sub", "/Sub", "L2,k1", "n");
  mb_node(&m, "Unsqueeze", "/Unsqueeze_1", "n,ax0", "ends");
  mb_node(&m, "Slice", "/Slice", "table,starts,ends,ax0", "rel");
  mb_node(&m, "MatMul", "/MatMul", "x,rel_t", "y");
  c = mb_node(&m, "Transpose", "/Transpose_1", "rel", "rel_t");
  attr_ints(&m, c, "perm", 2, (int64_t[]){1, 0});
  mb_output(&m, "y");
  onnx_input_shape fix = {"wave", 2, {1, 400}};
  onnx_options opt = {.input_shapes = &fix, .ninput_shapes = 1};
  ir_graph *g = EXPECT_OK(&m, NULL, &opt);
  if (g) {
    /* The Slice of a constant and its Transpose folded at import. */
    const ir_value *rel_t = ir_value_find(g, "rel_t");
    CHECK(rel_t && rel_t->data && has_dims(rel_t, 2, (int64_t[]){8, 157}) && !find_node(g, IR_OP_SLICE));
    CHECK(has_dims(g->outputs[0], 3, (int64_t[]){1, 79, 157}));
    diag d;
    CHECK_EQ_INT(run_shape_infer(g, &d), ST_OK);
    CHECK(has_dims(g->outputs[0], 3, (int64_t[]){1, 79, 157}));
  }
  ir_graph_free(g);
  mb_free(&m);
}

/* Shape arithmetic across the ops torch exports for it folds at import
 * wherever an importer needs a constant: Slice's ends here come from
 * Shape, Gather, Cast, Div, Equal, Where, Range, ConstantOfShape, Slice,
 * Mul, Add, Sub, Unsqueeze, Squeeze and Concat over x's dims. */
static void test_shape_arithmetic_ops(void) {
  int64_t zero = 0, one = 1, two = 2, four = 4, three = 3;
  float two_f = 2;
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", DT_FLOAT32, 3, (int64_t[]){2, 6, 8}, NULL);
  mb_input(&m, "big", DT_FLOAT32, 2, (int64_t[]){20, 3}, NULL);
  mb_init_raw(&m, "i0", DT_INT64, 0, NULL, &zero, 8);
  mb_init_raw(&m, "i1", DT_INT64, 0, NULL, &one, 8);
  mb_init_raw(&m, "i2", DT_INT64, 0, NULL, &two, 8);
  mb_init_raw(&m, "i4", DT_INT64, 0, NULL, &four, 8);
  mb_init_raw(&m, "f2", DT_FLOAT32, 0, NULL, &two_f, 4);
  mb_init_raw(&m, "ax0", DT_INT64, 1, (int64_t[]){1}, &zero, 8);
  mb_init_raw(&m, "s1", DT_INT64, 1, (int64_t[]){1}, &one, 8);
  mb_init_raw(&m, "s3", DT_INT64, 1, (int64_t[]){1}, &three, 8);
  mb_init_raw(&m, "starts", DT_INT64, 1, (int64_t[]){2}, (int64_t[]){0, 0}, 16);
  mb_init_raw(&m, "axes01", DT_INT64, 1, (int64_t[]){2}, (int64_t[]){0, 1}, 16);
  mb_node(&m, "Shape", "shape", "x", "s");      /* [2, 6, 8] */
  mb_node(&m, "Gather", "gather", "s,i2", "d"); /* 8 */
  Onnx__NodeProto *c = mb_node(&m, "Cast", "to_float", "d", "f");
  attr_int(&m, c, "to", DT_FLOAT32);
  mb_node(&m, "Div", "div", "f,f2", "h"); /* 4.0 */
  c = mb_node(&m, "Cast", "to_int", "h", "hi");
  attr_int(&m, c, "to", DT_INT64);
  mb_node(&m, "Equal", "equal", "hi,i4", "e");        /* true */
  mb_node(&m, "Where", "where", "e,hi,i1", "w");      /* 4 */
  mb_node(&m, "Range", "range", "i0,w,i1", "r");      /* [0, 1, 2, 3] */
  mb_node(&m, "Shape", "shape_r", "r", "rs");         /* [4] */
  mb_node(&m, "ConstantOfShape", "zeros", "rs", "z"); /* f32 [0, 0, 0, 0] */
  c = mb_node(&m, "Cast", "z_int", "z", "zi");
  attr_int(&m, c, "to", DT_INT64);
  mb_node(&m, "Add", "ones", "zi,i1", "o");            /* [1, 1, 1, 1] */
  mb_node(&m, "Slice", "dims12", "s,s1,s3", "t");      /* [6, 8] */
  mb_node(&m, "Gather", "t0", "t,i0", "t0v");          /* 6 */
  mb_node(&m, "Mul", "mul", "t0v,w", "mv");            /* 24 */
  mb_node(&m, "Add", "add", "mv,i1", "av");            /* 25 */
  mb_node(&m, "Sub", "sub", "av,d", "bv");             /* 17 */
  mb_node(&m, "Unsqueeze", "unsq", "bv,ax0", "bu");    /* [17] */
  mb_node(&m, "Squeeze", "sq", "bu,ax0", "bs");        /* 17 */
  mb_node(&m, "Unsqueeze", "unsq2", "bs,ax0", "b1");   /* [17] */
  mb_node(&m, "Slice", "first_one", "o,ax0,s1", "o1"); /* [1] */
  c = mb_node(&m, "Concat", "cat", "b1,o1", "ends");   /* [17, 1] */
  attr_int(&m, c, "axis", 0);
  mb_node(&m, "Slice", "sl", "big,starts,ends,axes01", "y");
  mb_output(&m, "y");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    CHECK_EQ_INT(g->nnodes, 1);
    const ir_node *sl = find_node(g, IR_OP_SLICE);
    CHECK(sl && sl->nin == 1 && attr_ints_are(sl, "ends", 2, (int64_t[]){17, 1}));
    CHECK(has_dims(g->outputs[0], 2, (int64_t[]){17, 1}));
  }
  ir_graph_free(g);
  mb_free(&m);
}

/* The rest of the ops torch exports for shape arithmetic fold at import
 * too: Size, ReduceProd, Floor, Ceil, Min, Max, Neg, Mod, Identity,
 * Expand and Tile over x's dims give Slice's ends. */
static void test_shape_arithmetic_more_ops(void) {
  int64_t zero = 0, three = 3, ten = 10, two = 2;
  float seven_f = 7;
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", DT_FLOAT32, 3, (int64_t[]){2, 6, 8}, NULL);
  mb_input(&m, "big", DT_FLOAT32, 2, (int64_t[]){20, 3}, NULL);
  mb_init_raw(&m, "i3", DT_INT64, 0, NULL, &three, 8);
  mb_init_raw(&m, "i10", DT_INT64, 0, NULL, &ten, 8);
  mb_init_raw(&m, "f7", DT_FLOAT32, 0, NULL, &seven_f, 4);
  mb_init_raw(&m, "ax0", DT_INT64, 1, (int64_t[]){1}, &zero, 8);
  mb_init_raw(&m, "two", DT_INT64, 1, (int64_t[]){1}, &two, 8);
  mb_node(&m, "Shape", "shape", "x", "s"); /* [2, 6, 8] */
  mb_node(&m, "Size", "size", "x", "n");   /* 96 */
  Onnx__NodeProto *c = mb_node(&m, "ReduceProd", "prod", "s", "p");
  attr_int(&m, c, "keepdims", 0); /* 96 */
  c = mb_node(&m, "Cast", "to_float", "n", "nf");
  attr_int(&m, c, "to", DT_FLOAT32);
  mb_node(&m, "Div", "div", "nf,f7", "q");     /* 13.71 */
  mb_node(&m, "Floor", "floor", "q", "fl");    /* 13 */
  mb_node(&m, "Ceil", "ceil", "q", "ce");      /* 14 */
  mb_node(&m, "Min", "min", "fl,ce", "lo");    /* 13 */
  mb_node(&m, "Max", "max", "fl,ce", "hi");    /* 14 */
  mb_node(&m, "Neg", "neg", "lo", "nlo");      /* -13 */
  mb_node(&m, "Add", "diff", "hi,nlo", "one"); /* 1 */
  c = mb_node(&m, "Cast", "to_int", "one", "onei");
  attr_int(&m, c, "to", DT_INT64);
  mb_node(&m, "Mod", "mod", "p,i10", "r");          /* 6 */
  mb_node(&m, "Identity", "id", "r", "ri");         /* 6 */
  mb_node(&m, "Unsqueeze", "unsq", "ri,ax0", "r1"); /* [6] */
  mb_node(&m, "Expand", "expand", "r1,two", "r2");  /* [6, 6] */
  mb_node(&m, "Tile", "tile", "r2,two", "r4");      /* [6, 6, 6, 6] */
  mb_node(&m, "Gather", "pick", "r4,i3", "g");      /* 6 */
  mb_node(&m, "Add", "add", "g,onei", "e");         /* 7 */
  mb_node(&m, "Unsqueeze", "unsq2", "e,ax0", "ends");
  mb_node(&m, "Slice", "sl", "big,ax0,ends,ax0", "y");
  mb_output(&m, "y");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    CHECK_EQ_INT(g->nnodes, 1);
    const ir_node *sl = find_node(g, IR_OP_SLICE);
    CHECK(sl && sl->nin == 1 && attr_ints_are(sl, "ends", 1, (int64_t[]){7}));
    CHECK(has_dims(g->outputs[0], 2, (int64_t[]){7, 3}));
  }
  ir_graph_free(g);
  mb_free(&m);
}

/* torch.cat skips an empty 1-D tensor among tensors of another rank, and
 * its exports keep such a Concat: torchaudio's Emformer concatenates an
 * empty memory bank (a float [0] constant) with [T, B, D] activations and
 * computes a Slice's ends from Shape(MatMul of that Concat) -> Gather -> Add
 * -> Div -> Mul. Shape inference drops the empty input, so the chain folds
 * at import; the result is the Concat of the rest, and a non-empty rank-1
 * input among rank-3 ones is still refused. */
static void test_concat_legacy_empty(void) {
  static float w[8 * 6], x[5 * 8];
  for (int i = 0; i < 48; i++)
    w[i] = (float)(i % 7) * 0.25f - 0.5f;
  for (int i = 0; i < 40; i++)
    x[i] = (float)i * 0.125f - 2.0f;
  int64_t zero = 0, two = 2, one = 1;
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", DT_FLOAT32, 3, (int64_t[]){5, 1, 8}, NULL);
  mb_init_raw(&m, "empty", DT_FLOAT32, 1, (int64_t[]){0}, w, 0);
  mb_init_raw(&m, "w", DT_FLOAT32, 2, (int64_t[]){8, 6}, w, sizeof w);
  mb_init_raw(&m, "i0", DT_INT64, 0, NULL, &zero, 8);
  mb_init_raw(&m, "k2", DT_INT64, 1, (int64_t[]){1}, &two, 8);
  mb_init_raw(&m, "k1", DT_INT64, 1, (int64_t[]){1}, &one, 8);
  mb_init_raw(&m, "ax0", DT_INT64, 1, (int64_t[]){1}, &zero, 8);
  Onnx__NodeProto *c = mb_node(&m, "Concat", "/attention/Concat", "empty,x,empty,x", "cat");
  attr_int(&m, c, "axis", 0);
  mb_node(&m, "MatMul", "/attention/MatMul", "cat,w", "kv");
  mb_node(&m, "Shape", "/attention/Shape", "kv", "s");
  mb_node(&m, "Gather", "/attention/Gather", "s,i0", "t");
  mb_node(&m, "Add", "/attention/Add", "t,k2", "t2");
  mb_node(&m, "Div", "/attention/Div", "t2,k2", "h");
  mb_node(&m, "Mul", "/attention/Mul", "h,k1", "ends");
  mb_node(&m, "Slice", "/attention/Slice", "kv,ax0,ends,ax0", "y");
  mb_output(&m, "y");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    const ir_node *sl = find_node(g, IR_OP_SLICE);
    CHECK(sl && attr_ints_are(sl, "ends", 1, (int64_t[]){6}));
    CHECK(has_dims(g->outputs[0], 3, (int64_t[]){6, 1, 6}));
    const void *in[1] = {x};
    void *outs[1] = {NULL};
    arena a;
    arena_init(&a, 0);
    CHECK(mb_eval(g, in, outs, &a) == 0);
    const float *out = outs[0];
    const ir_node *cat = find_node(g, IR_OP_CONCAT);
    CHECK(cat && cat->nin == 2 && cat->in[0] == g->inputs[0] && cat->in[1] == g->inputs[0]);
    double worst = 0;
    for (int t = 0; out && t < 6; t++) /* rows 0..4 of x, then row 0 again */
      for (int j = 0; j < 6; j++) {
        double ref = 0;
        for (int k = 0; k < 8; k++)
          ref += (double)x[(t % 5) * 8 + k] * w[k * 6 + j];
        worst = fmax(worst, fabs(out[t * 6 + j] - ref));
      }
    CHECK(out && worst < 1e-5);
    arena_free(&a);
  }
  ir_graph_free(g);
  mb_free(&m);

  float two_f[2] = {1, 2};
  mb_init(&m, 13);
  mb_input(&m, "x", DT_FLOAT32, 3, (int64_t[]){5, 1, 8}, NULL);
  mb_init_raw(&m, "pair", DT_FLOAT32, 1, (int64_t[]){2}, two_f, sizeof two_f);
  c = mb_node(&m, "Concat", "cat", "x,pair", "y");
  attr_int(&m, c, "axis", 0);
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    diag d;
    CHECK_EQ_INT(run_shape_infer(g, &d), ST_ERR_INVALID);
    CHECK(strstr(d.msg, "node 'cat' (Concat): inputs [5,1,8] and [2] differ outside axis 0"));
    if (!strstr(d.msg, "differ outside")) test_note("  %s", d.msg);
  }
  ir_graph_free(g);
  mb_free(&m);
}

/* Nodes listed in any order import as in topological order: the
 * shape-of-shape chain of test_slice_of_shape_chain, reversed, still folds
 * into the Slice's constant ends; a cycle is still refused. */
static void test_out_of_order(void) {
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", DT_FLOAT32, 4, (int64_t[]){2, 8, 4, 4}, NULL);
  int64_t one = 1, three = 3, six = 6, zero = 0;
  mb_init_raw(&m, "i1", DT_INT64, 1, (int64_t[]){1}, &one, 8);
  mb_init_raw(&m, "k3", DT_INT64, 1, (int64_t[]){1}, &three, 8);
  mb_init_raw(&m, "k6", DT_INT64, 1, (int64_t[]){1}, &six, 8);
  mb_init_raw(&m, "starts", DT_INT64, 1, (int64_t[]){1}, &zero, 8);
  mb_init_raw(&m, "axes", DT_INT64, 1, (int64_t[]){1}, &one, 8);
  mb_node(&m, "Slice", "sl", "x,starts,ends,axes", "y");
  mb_node(&m, "Div", "div", "c3,k6", "ends");
  mb_node(&m, "Mul", "mul", "c,k3", "c3");
  mb_node(&m, "Gather", "ga", "s,i1", "c");
  mb_node(&m, "Shape", "shp", "x", "s");
  mb_output(&m, "y");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    CHECK_EQ_INT(g->nnodes, 1);
    const ir_node *sl = find_node(g, IR_OP_SLICE);
    CHECK(sl && sl->nin == 1 && attr_ints_are(sl, "ends", 1, (int64_t[]){4}));
    CHECK(has_dims(g->outputs[0], 4, (int64_t[]){2, 4, 4, 4}));
  }
  ir_graph_free(g);
  mb_free(&m);

  mb_init(&m, 13);
  mb_input(&m, "x", DT_FLOAT32, 1, (int64_t[]){4}, NULL);
  mb_node(&m, "Add", "add_b", "x,a", "b");
  mb_node(&m, "Relu", "relu_a", "b", "a");
  mb_output(&m, "b");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "cycle");
  mb_free(&m);
}

int main(void) {
  test_slice_of_shape_chain();
  test_flatten_dims_overflow();
  test_pad_after_conv();
  test_resize_keeps_sizes();
  test_errors_left_to_the_pass();
  test_group_norm_after_conv1d();
  test_slice_ends_after_conv1d();
  test_shape_arithmetic_ops();
  test_shape_arithmetic_more_ops();
  test_concat_legacy_empty();
  test_out_of_order();
  return test_summary("test_frontend_import_infer");
}
