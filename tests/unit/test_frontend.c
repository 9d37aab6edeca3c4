/* test_frontend.c - the ONNX importer (frontend/).
 *
 * Every model is built here by filling protobuf-c structs and packing them
 * (onnx__model_proto__pack), so no binary model is committed. A small builder
 * (`mb`) keeps the structs in an arena: nodes, attributes, initializers,
 * inputs and outputs are pushed onto the graph, then packed and loaded with
 * onnx_load_memory (or written next to external data files and loaded with
 * onnx_load_file). Every rejection test checks the status and that the
 * message names what it should (strstr). The builder is onnx_mb.h; the
 * per-op importers are tested in test_frontend_ops.c, external data in
 * test_frontend_external.c.
 */
#include "onnx_mb.h"

static void test_conv_relu(void) {
  mb m;
  conv_relu_model(&m);
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    CHECK_EQ_INT(g->opset, 13);
    CHECK_EQ_INT(g->ninputs, 1);
    CHECK(!strcmp(g->inputs[0]->name, "input"));
    CHECK_EQ_INT(g->inputs[0]->rank, 4);
    CHECK(!memcmp(g->inputs[0]->dims, in_dims, sizeof in_dims));
    CHECK_EQ_INT(g->inputs[0]->dtype, DT_FLOAT32);
    CHECK_EQ_INT(g->nnodes, 2);
    CHECK_EQ_INT(g->nodes[0]->op, IR_OP_CONV);
    CHECK_EQ_INT(g->nodes[1]->op, IR_OP_RELU);
    ir_node *conv = g->nodes[0];
    CHECK(!strcmp(conv->name, "conv1"));
    CHECK_EQ_INT(conv->nin, 3);
    CHECK(conv->in[1]->data && !memcmp(conv->in[1]->data, w_data, sizeof w_data));
    CHECK(!memcmp(conv->in[1]->dims, w_dims, sizeof w_dims));
    CHECK(conv->in[2]->data && !memcmp(conv->in[2]->data, b_data, sizeof b_data));
    CHECK(attr_ints_are(conv, "kernel_shape", 2, (int64_t[]){3, 3}));
    CHECK(attr_ints_are(conv, "pads", 4, (int64_t[]){1, 1, 1, 1}));
    CHECK(attr_ints_are(conv, "strides", 2, (int64_t[]){1, 1}));
    CHECK(attr_ints_are(conv, "dilations", 2, (int64_t[]){1, 1}));
    CHECK_EQ_INT(ir_attr_int(conv, "group", 0), 1);
    CHECK(ir_attr_find(conv, "auto_pad") == NULL);
    CHECK_EQ_INT(g->noutputs, 1);
    CHECK(g->outputs[0] == g->nodes[1]->out[0]);
    CHECK(!strcmp(g->outputs[0]->name, "y"));
    CHECK_EQ_INT(g->outputs[0]->dtype, DT_FLOAT32);
    CHECK_EQ_INT(g->nvalues, 5);
  }
  ir_graph_free(g);
  mb_free(&m);
}

/* --- initializer storage forms */

/* Loads a graph whose only output is initializer `t`; returns its bytes. */
static void *init_bytes(mb *m, Onnx__TensorProto *t, size_t *bytes) {
  PUSH(m, m->graph.initializer, m->graph.n_initializer, t);
  mb_output(m, t->name);
  ir_graph *g = EXPECT_OK(m, NULL, NULL);
  void *copy = NULL;
  *bytes = 0;
  if (g && g->noutputs == 1 && g->outputs[0]->data) {
    *bytes = (size_t)ir_value_bytes(g->outputs[0]);
    copy = malloc(*bytes + 1);
    memcpy(copy, g->outputs[0]->data, *bytes);
  }
  ir_graph_free(g);
  return copy;
}

/* Initializer `typed` (in typed_mb) must load to the same bytes as `raw`. */
static void check_forms(int dt, const void *raw, size_t raw_bytes, Onnx__TensorProto *typed, mb *typed_mb,
                        const char *what) {
  mb m;
  mb_init(&m, 13);
  int64_t dims[1] = {(int64_t)(raw_bytes / dtype_size(dt))};
  size_t n1, n2;
  Onnx__TensorProto *t = mb_tensor(&m, "t", dt, 1, dims);
  set_raw(&m, t, raw, raw_bytes);
  void *a = init_bytes(&m, t, &n1);
  void *b = init_bytes(typed_mb, typed, &n2);
  CHECK(a && b && n1 == raw_bytes && n2 == raw_bytes && !memcmp(a, raw, n1) && !memcmp(b, raw, n2));
  if (!(a && b && n1 == n2 && !memcmp(a, b, n1))) test_note("  storage forms differ for %s", what);
  free(a);
  free(b);
  mb_free(&m);
}

static void test_initializer_forms(void) {
  mb m;
  /* float32: raw vs float_data */
  float f[3] = {1.5f, -2.0f, 3.25f};
  mb_init(&m, 13);
  Onnx__TensorProto *t = mb_tensor(&m, "t", DT_FLOAT32, 1, (int64_t[]){3});
  t->n_float_data = 3;
  t->float_data = f;
  check_forms(DT_FLOAT32, f, sizeof f, t, &m, "float32");
  mb_free(&m);
  /* int64: raw vs int64_data */
  int64_t i64[4] = {1, -2, INT64_MAX, INT64_MIN};
  mb_init(&m, 13);
  t = mb_tensor(&m, "t", DT_INT64, 1, (int64_t[]){4});
  t->n_int64_data = 4;
  t->int64_data = i64;
  check_forms(DT_INT64, i64, sizeof i64, t, &m, "int64");
  mb_free(&m);
  /* int8 through int32_data */
  int8_t i8[4] = {-128, -1, 0, 127};
  int32_t i8w[4] = {-128, -1, 0, 127};
  mb_init(&m, 13);
  t = mb_tensor(&m, "t", DT_INT8, 1, (int64_t[]){4});
  t->n_int32_data = 4;
  t->int32_data = i8w;
  check_forms(DT_INT8, i8, sizeof i8, t, &m, "int8");
  mb_free(&m);
  /* uint8 through int32_data */
  uint8_t u8[3] = {0, 200, 255};
  int32_t u8w[3] = {0, 200, 255};
  mb_init(&m, 13);
  t = mb_tensor(&m, "t", DT_UINT8, 1, (int64_t[]){3});
  t->n_int32_data = 3;
  t->int32_data = u8w;
  check_forms(DT_UINT8, u8, sizeof u8, t, &m, "uint8");
  mb_free(&m);
  /* bool through int32_data */
  uint8_t bl[3] = {1, 0, 1};
  int32_t blw[3] = {1, 0, 1};
  mb_init(&m, 13);
  t = mb_tensor(&m, "t", DT_BOOL, 1, (int64_t[]){3});
  t->n_int32_data = 3;
  t->int32_data = blw;
  check_forms(DT_BOOL, bl, sizeof bl, t, &m, "bool");
  mb_free(&m);
  /* float16 bits through int32_data */
  uint16_t h[3] = {float_to_half(1.0f), float_to_half(-0.5f), float_to_half(65504.0f)};
  int32_t hw[3] = {h[0], h[1], h[2]};
  mb_init(&m, 13);
  t = mb_tensor(&m, "t", DT_FLOAT16, 1, (int64_t[]){3});
  t->n_int32_data = 3;
  t->int32_data = hw;
  check_forms(DT_FLOAT16, h, sizeof h, t, &m, "float16");
  mb_free(&m);
  /* double through double_data */
  double dd[2] = {0.1, -1e300};
  mb_init(&m, 13);
  t = mb_tensor(&m, "t", DT_DOUBLE, 1, (int64_t[]){2});
  t->n_double_data = 2;
  t->double_data = dd;
  check_forms(DT_DOUBLE, dd, sizeof dd, t, &m, "double");
  mb_free(&m);

  /* mismatches */
  mb_init(&m, 13);
  float small[1000] = {0};
  mb_init_raw(&m, "fc.weight", DT_FLOAT32, 2, (int64_t[]){1000, 2048}, small, 4000);
  mb_output(&m, "fc.weight");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "initializer 'fc.weight'", "raw_data has 4000 bytes",
              "[1000, 2048]", "float32", "8192000");
  mb_free(&m);

  mb_init(&m, 13);
  t = mb_tensor(&m, "few", DT_FLOAT32, 1, (int64_t[]){4});
  t->n_float_data = 3;
  t->float_data = f;
  PUSH(&m, m.graph.initializer, m.graph.n_initializer, t);
  mb_output(&m, "few");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "initializer 'few'", "float_data has 3 elements");
  mb_free(&m);

  mb_init(&m, 13);
  t = mb_tensor(&m, "wrongfield", DT_INT64, 1, (int64_t[]){3});
  t->n_float_data = 3;
  t->float_data = f;
  PUSH(&m, m.graph.initializer, m.graph.n_initializer, t);
  mb_output(&m, "wrongfield");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "initializer 'wrongfield'", "float_data", "int64_data");
  mb_free(&m);

  mb_init(&m, 13);
  int32_t big[1] = {300};
  t = mb_tensor(&m, "range", DT_INT8, 1, (int64_t[]){1});
  t->n_int32_data = 1;
  t->int32_data = big;
  PUSH(&m, m.graph.initializer, m.graph.n_initializer, t);
  mb_output(&m, "range");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "initializer 'range'", "300", "int8");
  mb_free(&m);

  mb_init(&m, 13);
  mb_init_raw(&m, "neg", DT_FLOAT32, 2, (int64_t[]){-1, 4}, f, 0);
  mb_output(&m, "neg");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "initializer 'neg'", "negative");
  mb_free(&m);

  mb_init(&m, 13);
  mb_init_raw(&m, "huge", DT_FLOAT32, 3, (int64_t[]){INT64_MAX, INT64_MAX, 0}, f, 0);
  mb_output(&m, "huge");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_LIMIT, "initializer 'huge'", "overflow");
  mb_free(&m);

  mb_init(&m, 13);
  mb_init_raw(&m, "deep", DT_FLOAT32, 9, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1}, f, 4);
  mb_output(&m, "deep");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_LIMIT, "initializer 'deep'", "rank 9");
  mb_free(&m);

  mb_init(&m, 13);
  mb_init_raw(&m, "str", DT_STRING, 1, (int64_t[]){1}, f, 4);
  mb_output(&m, "str");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "initializer 'str'", "string");
  mb_free(&m);

  mb_init(&m, 13);
  mb_init_raw(&m, "twice", DT_FLOAT32, 1, (int64_t[]){1}, f, 4);
  mb_init_raw(&m, "twice", DT_FLOAT32, 1, (int64_t[]){1}, f, 4);
  mb_output(&m, "twice");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "twice", "already defined");
  mb_free(&m);
}

/* --- broken bytes */

static void test_truncated(void) {
  mb m;
  conv_relu_model(&m);
  size_t len;
  uint8_t *buf = mb_pack(&m, &len);
  int failures = 0, bad_message = 0;
  for (size_t n = 0; n < len; n++) {
    ir_graph *g = NULL;
    diag d;
    diag_init(&d);
    uint8_t *copy = malloc(n ? n : 1); /* exact size so ASan sees any overread */
    memcpy(copy, buf, n);
    status s = onnx_load_memory(copy, n, NULL, "model.onnx", NULL, &g, &d);
    free(copy);
    failures += s != ST_OK && g == NULL;
    bad_message += strncmp(d.msg, "model.onnx: ", 12) != 0;
    ir_graph_free(g);
  }
  CHECK_EQ_INT(failures, (long long)len);
  CHECK_EQ_INT(bad_message, 0);

  /* A truncation inside the graph names the byte and the field path. */
  ir_graph *g = NULL;
  diag d;
  diag_init(&d);
  CHECK(onnx_load_memory(buf, len / 2, NULL, "model.onnx", NULL, &g, &d) == ST_ERR_PARSE);
  CHECK(strstr(d.msg, "model.onnx: not a valid ONNX ModelProto (protobuf parse failed at byte"));

  /* Corrupted bytes: whatever happens, no crash and no leak. */
  uint32_t seed = 12345;
  for (int k = 0; k < 2000; k++) {
    uint8_t *copy = malloc(len);
    memcpy(copy, buf, len);
    for (int j = 0; j < 3; j++) {
      seed = seed * 1103515245u + 12345u;
      copy[(seed >> 8) % len] ^= (uint8_t)(1u << ((seed >> 4) & 7));
    }
    diag_init(&d);
    g = NULL;
    status s = onnx_load_memory(copy, len, NULL, "model.onnx", NULL, &g, &d);
    if (s) CHECK(g == NULL && strncmp(d.msg, "model.onnx: ", 12) == 0);
    ir_graph_free(g);
    free(copy);
  }
  free(buf);
  mb_free(&m);
}

/* Prepends a field tag and the length of buf[pos, cap) before pos. */
static size_t wrap(uint8_t *buf, size_t pos, size_t cap, int field) {
  uint8_t v[11];
  size_t n = 0;
  v[n++] = (uint8_t)(field << 3 | 2);
  for (uint64_t x = cap - pos;; x >>= 7) {
    v[n++] = (uint8_t)((x & 0x7f) | (x >= 0x80 ? 0x80 : 0));
    if (x < 0x80) break;
  }
  memcpy(buf + pos - n, v, n);
  return pos - n;
}

/* Nested subgraphs deep enough to overflow a recursive unpacker's stack:
 * ModelProto.graph -> (GraphProto.node -> NodeProto.attribute ->
 * AttributeProto.g)^LEVELS, built inside out from the end of the buffer. */
static void test_deep_nesting(void) {
  enum { LEVELS = 100000 };
  size_t cap = (size_t)LEVELS * 18 + 16, pos = cap;
  uint8_t *buf = malloc(cap);
  for (int i = 0; i < LEVELS; i++) {
    pos = wrap(buf, pos, cap, 6); /* AttributeProto.g */
    pos = wrap(buf, pos, cap, 5); /* NodeProto.attribute */
    pos = wrap(buf, pos, cap, 1); /* GraphProto.node */
  }
  pos = wrap(buf, pos, cap, 7); /* ModelProto.graph */
  ir_graph *g = NULL;
  diag d;
  diag_init(&d);
  status s = onnx_load_memory(buf + pos, cap - pos, NULL, "model.onnx", NULL, &g, &d);
  CHECK(s == ST_ERR_PARSE && g == NULL);
  CHECK(strstr(d.msg, "model.onnx") && strstr(d.msg, "nested too deeply"));
  CHECK(strstr(d.msg, "ModelProto.graph.node.attribute.g.node"));
  if (!strstr(d.msg, "nested too deeply")) test_note("  %s", d.msg);
  free(buf);
}

/* --- model, node and name errors */

static void test_model_errors(void) {
  mb m;
  conv_relu_model(&m);
  m.model.n_opset_import = 0;
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "opset_import");
  mb_free(&m);

  conv_relu_model(&m);
  m.model.has_ir_version = 0;
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "ir_version");
  mb_free(&m);

  conv_relu_model(&m);
  m.opset.version = 99;
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "opset 99");
  mb_free(&m);

  conv_relu_model(&m);
  m.model.graph = NULL;
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "no graph");
  mb_free(&m);

  /* unknown op */
  conv_relu_model(&m);
  mb_node(&m, "FooOp", "n7", "y", "z");
  mb_output(&m, "z"); /* read: an unread node is not imported (test_frontend_control) */
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'n7' (FooOp)", "no importer for op FooOp",
              "opset 13");
  mb_free(&m);

  /* another domain; com.microsoft, which the model does not import */
  conv_relu_model(&m);
  mb_node(&m, "Foo", "f1", "y", "z")->domain = "org.example";
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'f1' (Foo)", "domain 'org.example' is not supported");
  mb_free(&m);
  conv_relu_model(&m);
  mb_node(&m, "FusedGemm", "f1", "y", "z")->domain = "com.microsoft";
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'f1' (FusedGemm)", "com.microsoft", "opset_import");
  mb_free(&m);

  /* dangling input */
  conv_relu_model(&m);
  mb_node(&m, "Add", "add1", "y,nope", "z");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'add1' (Add)", "input 1 'nope'", "produced by no node");
  mb_free(&m);

  /* an unnamed node is named by its position */
  conv_relu_model(&m);
  mb_node(&m, "Add", NULL, "nope,y", "z");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node #2 (Add)", "input 0 'nope'");
  mb_free(&m);

  /* two producers */
  conv_relu_model(&m);
  mb_node(&m, "Sigmoid", "sig", "input", "c");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "'c'", "already defined", "conv1");
  mb_free(&m);

  /* a node output named like a graph input */
  conv_relu_model(&m);
  mb_node(&m, "Sigmoid", "sig", "y", "input");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "'input'", "already defined as a graph input");
  mb_free(&m);

  /* output produced by nothing */
  conv_relu_model(&m);
  mb_output(&m, "ghost");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "graph output 'ghost'");
  mb_free(&m);

  /* cycle: a -> b -> a */
  mb_init(&m, 13);
  mb_input(&m, "x", 1, 1, (int64_t[]){4}, NULL);
  mb_node(&m, "Add", "cyc_a", "x,b_out", "a_out");
  mb_node(&m, "Relu", "cyc_b", "a_out", "b_out");
  mb_output(&m, "a_out");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "cycle", "cyc_");
  mb_free(&m);

  /* a node reading its own output */
  mb_init(&m, 13);
  mb_input(&m, "x", 1, 1, (int64_t[]){4}, NULL);
  mb_node(&m, "Add", "self", "x,s", "s");
  mb_output(&m, "s");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "cycle", "self");
  mb_free(&m);

  /* unknown attribute */
  conv_relu_model(&m);
  attr_int(&m, m.graph.node[1], "foo", 1);
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'conv1' (Conv)", "attribute 'foo'");
  mb_free(&m);

  /* attribute of the wrong kind */
  conv_relu_model(&m);
  attr_float(&m, m.graph.node[1], "group", 1);
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'conv1' (Conv)", "'group' is FLOAT, expected INT");
  mb_free(&m);

  /* bad strides length */
  conv_relu_model(&m);
  attr_ints(&m, m.graph.node[1], "strides", 3, (int64_t[]){1, 1, 1});
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'conv1' (Conv)", "'strides' has 3 values");
  mb_free(&m);
}

/* --- graph inputs and --input_shape */

static void test_input_shapes(void) {
  static const char *const sym_dims[4] = {"batch_size", NULL, NULL, NULL};
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "input", 1, 4, (int64_t[]){0, 3, 224, 224}, sym_dims);
  mb_node(&m, "Relu", "r", "input", "y");
  mb_output(&m, "y");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "input 'input' dim 0 ('batch_size') is symbolic",
              "--input_shape \"input:1,3,224,224\"");

  onnx_input_shape fix = {.name = "input", .rank = 4, .dims = {2, 3, 224, 224}};
  onnx_options opt = {.input_shapes = &fix, .ninput_shapes = 1};
  ir_graph *g = EXPECT_OK(&m, NULL, &opt);
  if (g) {
    CHECK_EQ_INT(g->inputs[0]->dims[0], 2);
    CHECK_EQ_INT(g->inputs[0]->dims[3], 224);
  }
  ir_graph_free(g);

  onnx_input_shape wrong_rank = {.name = "input", .rank = 2, .dims = {1, 3}};
  opt.input_shapes = &wrong_rank;
  EXPECT_FAIL(&m, NULL, &opt, ST_ERR_INVALID, "input 'input' has rank 4", "2 dims");

  onnx_input_shape stranger = {.name = "data", .rank = 1, .dims = {1}};
  opt.input_shapes = &stranger;
  EXPECT_FAIL(&m, NULL, &opt, ST_ERR_INVALID, "'data'", "not a graph input", "'input'");
  mb_free(&m);

  /* no shape at all: --input_shape gives the rank too */
  mb_init(&m, 13);
  mb_input(&m, "x", 1, -1, NULL, NULL);
  mb_node(&m, "Relu", "r", "x", "y");
  mb_output(&m, "y");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "input 'x' has no shape");
  onnx_input_shape fx = {.name = "x", .rank = 2, .dims = {5, 6}};
  opt = (onnx_options){.input_shapes = &fx, .ninput_shapes = 1};
  g = EXPECT_OK(&m, NULL, &opt);
  if (g) CHECK(g->inputs[0]->rank == 2 && g->inputs[0]->dims[1] == 6);
  ir_graph_free(g);
  mb_free(&m);

  /* an initializer listed as an input is a constant, not an input */
  mb_init(&m, 13);
  float f[2] = {1, 2};
  mb_input(&m, "x", 1, 1, (int64_t[]){2}, NULL);
  mb_input(&m, "k", 1, 1, (int64_t[]){2}, NULL);
  mb_init_raw(&m, "k", 1, 1, (int64_t[]){2}, f, sizeof f);
  mb_node(&m, "Add", "a", "x,k", "y");
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) CHECK(g->ninputs == 1 && g->nodes[0]->in[1]->data);
  ir_graph_free(g);
  onnx_input_shape fk = {.name = "k", .rank = 1, .dims = {2}};
  opt = (onnx_options){.input_shapes = &fk, .ninput_shapes = 1};
  EXPECT_FAIL(&m, NULL, &opt, ST_ERR_INVALID, "'k'", "not a graph input", "'x'");
  mb_free(&m);
}

static void test_parse_input_shape(void) {
  arena a;
  arena_init(&a, 0);
  onnx_input_shape *s;
  int n;
  diag d;
  diag_init(&d);
  CHECK(onnx_parse_input_shape("input:1,3,224,224;name2:1,10", &a, &s, &n, &d) == ST_OK);
  CHECK_EQ_INT(n, 2);
  if (n == 2) {
    CHECK(!strcmp(s[0].name, "input") && s[0].rank == 4 && s[0].dims[1] == 3 && s[0].dims[3] == 224);
    CHECK(!strcmp(s[1].name, "name2") && s[1].rank == 2 && s[1].dims[1] == 10);
  }
  diag_init(&d);
  CHECK(onnx_parse_input_shape("in:0:1,0", &a, &s, &n, &d) == ST_OK && n == 1 && !strcmp(s[0].name, "in:0") &&
        s[0].rank == 2 && s[0].dims[1] == 0);
  diag_init(&d); /* -1: a dynamic dim, for the gears */
  CHECK(onnx_parse_input_shape("x:-1,3", &a, &s, &n, &d) == ST_OK && n == 1 && s[0].dims[0] == -1);

  static const struct {
    const char *spec, *names;
  } bad[] = {
      {"", "empty"},
      {"input", "'input'"},
      {":1,2", "no input name"},
      {"x:", "'x:'"},
      {"x:1,,2", "dim 1"},
      {"x:1,a", "'a'"},
      {"x:-2", "'-2'"},
      {"x:-", "'-'"},
      {"x:1;;y:2", "entry 2"},
      {"x:1;x:2", "'x' is given twice"},
      {"x:1,2,3,4,5,6,7,8,9", "more than 8"},
      {"x:99999999999999999999", "99999999999999999999"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    diag_init(&d);
    status st = onnx_parse_input_shape(bad[i].spec, &a, &s, &n, &d);
    CHECK(st == ST_ERR_PARSE && strstr(d.msg, bad[i].names));
    if (st != ST_ERR_PARSE || !strstr(d.msg, bad[i].names))
      test_note("  spec \"%s\": %s", bad[i].spec, d.msg);
  }
  arena_free(&a);
}

/* --- initializers unpacked one at a time (onnx_proto.c) */

/* A graph split over two ModelProto.graph fields, initializers in both
 * (protobuf merges the second into the first), loads as one; a model of
 * big initializers read from a file, whose pages the loader gives back as
 * it goes, keeps every byte of each. */
static void test_initializers_apart(void) {
  mb m;
  conv_relu_model(&m);
  Onnx__TensorProto *b = m.graph.initializer[1];
  m.graph.n_initializer = 1; /* w in the first graph field, b in the second */
  size_t len1, len2;
  uint8_t *one = mb_pack(&m, &len1);
  Onnx__GraphProto g2 = ONNX__GRAPH_PROTO__INIT;
  g2.n_initializer = 1;
  g2.initializer = &b;
  Onnx__ModelProto second = ONNX__MODEL_PROTO__INIT;
  second.graph = &g2;
  len2 = onnx__model_proto__get_packed_size(&second);
  uint8_t *buf = malloc(len1 + len2);
  memcpy(buf, one, len1);
  onnx__model_proto__pack(&second, buf + len1);
  ir_graph *g = NULL;
  diag d;
  diag_init(&d);
  CHECK_EQ_INT(onnx_load_memory(buf, len1 + len2, NULL, "model.onnx", NULL, &g, &d), ST_OK);
  ir_node *conv = g ? find_node(g, IR_OP_CONV) : NULL;
  CHECK(conv && conv->in[1]->data && !memcmp(conv->in[1]->data, w_data, sizeof w_data));
  CHECK(conv && conv->in[2]->data && !memcmp(conv->in[2]->data, b_data, sizeof b_data));
  ir_graph_free(g);
  free(buf);
  free(one);
  mb_free(&m);

  enum { N = 3 << 18 }; /* 3 MiB of floats each */
  float *p = malloc(N * sizeof *p), *q = malloc(N * sizeof *q);
  for (int i = 0; i < N; i++)
    p[i] = (float)i, q[i] = (float)-i;
  int64_t dims[1] = {N};
  mb_init(&m, 13);
  mb_init_raw(&m, "p", 1, 1, dims, p, N * sizeof *p);
  mb_init_raw(&m, "q", 1, 1, dims, q, N * sizeof *q);
  mb_output(&m, "p");
  mb_output(&m, "q");
  buf = mb_pack(&m, &len1);
  char path[4096];
  snprintf(path, sizeof path, "%s/big.onnx", test_tmpdir("frontend_apart"));
  CHECK_EQ_INT(test_write_file(path, buf, len1), 0);
  g = NULL;
  diag_init(&d);
  CHECK_EQ_INT(onnx_load_file(path, NULL, &g, &d), ST_OK);
  CHECK(g && g->noutputs == 2 && g->outputs[0]->data && g->outputs[1]->data);
  if (g && g->noutputs == 2) {
    CHECK(!memcmp(g->outputs[0]->data, p, N * sizeof *p));
    CHECK(!memcmp(g->outputs[1]->data, q, N * sizeof *q));
  }
  ir_graph_free(g);
  free(buf);
  free(p);
  free(q);
  mb_free(&m);
}

/* --- per-op normalisation */

int main(void) {
  test_conv_relu();
  test_initializer_forms();
  test_truncated();
  test_initializers_apart();
  test_deep_nesting();
  test_model_errors();
  test_input_shapes();
  test_parse_input_shape();
  return test_summary("test_frontend");
}
