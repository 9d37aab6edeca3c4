/* test_frontend_control.c - If, Loop and Scan resolved at import
 * (frontend/onnx_control.c): a constant If imports only the taken branch, a
 * run-time If selects with Where, Loop and Scan unroll with their carried
 * values, iteration numbers, scan slices and stacked outputs, subgraphs read
 * outer-scope names (nested too); and the refusals, one line each: a trip
 * count of 2^40, a run-time trip count, branches that disagree in shape, a
 * condition whose shape is known only at run time. The numbers come from the
 * reference evaluator over the imported graph. Models are built with
 * onnx_mb.h; a subgraph is the graph of a second builder. */
#include "ir/eval.h"
#include "onnx_mb.h"
#include "passes/pass.h"

static int close_to(const float *got, const float *want, int n) {
  for (int i = 0; i < n; i++)
    if (fabsf(got[i] - want[i]) > 1e-5f * (1.0f + fabsf(want[i]))) {
      test_note("  [%d]: got %g, want %g", i, got[i], want[i]);
      return 0;
    }
  return 1;
}

static void if_model(mb *m, mb *then_b, mb *else_b, const char *cond) {
  static const float one = 1.0f, two = 2.0f;
  mb_init(m, 13);
  mb_input(m, "x", DT_FLOAT32, 1, (int64_t[]){3}, NULL);
  mb_init_raw(m, "one", DT_FLOAT32, 0, NULL, &one, sizeof one);
  mb_init_raw(m, "two", DT_FLOAT32, 0, NULL, &two, sizeof two);
  mb_one_node_graph(then_b, "Add", "x,one", "t_out"); /* one: an outer initializer */
  mb_one_node_graph(else_b, "Mul", "x,two", "e_out");
  mb_if(m, "if", cond, "y", then_b, else_b);
  mb_output(m, "y");
}

static void test_if_constant(void) {
  const float x[3] = {1, 2, 3};
  for (int c = 0; c < 2; c++) {
    mb m, tb, eb;
    if_model(&m, &tb, &eb, "c");
    mb_init_raw(&m, "c", DT_BOOL, 0, NULL, (uint8_t[]){(uint8_t)c}, 1);
    ir_graph *g = EXPECT_OK(&m, NULL, NULL);
    if (g) {
      /* only the taken branch was imported */
      CHECK(mb_count_ops(g, IR_OP_ADD) == c && mb_count_ops(g, IR_OP_MUL) == !c &&
            mb_count_ops(g, IR_OP_WHERE) == 0);
      arena a;
      arena_init(&a, 0);
      const void *in[1] = {x};
      void *out[1];
      if (!mb_eval(g, in, out, &a)) {
        const float want[2][3] = {{2, 4, 6}, {2, 3, 4}};
        CHECK(close_to(out[0], want[c], 3));
      }
      arena_free(&a);
      ir_graph_free(g);
    }
    mb_free(&tb);
    mb_free(&eb);
    mb_free(&m);
  }
}

static void test_if_runtime(void) {
  mb m, tb, eb;
  if_model(&m, &tb, &eb, "c");
  mb_input(&m, "c", DT_BOOL, 0, NULL, NULL);
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    CHECK(mb_count_ops(g, IR_OP_ADD) == 1 && mb_count_ops(g, IR_OP_MUL) == 1 &&
          mb_count_ops(g, IR_OP_WHERE) == 1);
    const float x[3] = {1, 2, 3}, want[2][3] = {{2, 4, 6}, {2, 3, 4}};
    for (int c = 0; c < 2; c++) {
      arena a;
      arena_init(&a, 0);
      uint8_t cv = (uint8_t)c;
      const void *in[2] = {x, &cv};
      void *out[1];
      if (!mb_eval(g, in, out, &a)) CHECK(close_to(out[0], want[c], 3));
      arena_free(&a);
    }
    ir_graph_free(g);
  }
  mb_free(&tb);
  mb_free(&eb);
  mb_free(&m);

  /* branches that disagree in rank cannot be selected between (extents
   * differing along one axis make a counted result: test_count_consumers) */
  static const float four[4] = {1, 2, 3, 4};
  mb_init(&m, 13);
  mb_input(&m, "c", DT_BOOL, 0, NULL, NULL);
  mb_init(&tb, 13);
  mb_init_raw(&tb, "t3", DT_FLOAT32, 1, (int64_t[]){3}, four, 3 * sizeof(float));
  mb_node(&tb, "Identity", NULL, "t3", "t_out");
  mb_output(&tb, "t_out");
  mb_init(&eb, 13);
  mb_init_raw(&eb, "e4", DT_FLOAT32, 2, (int64_t[]){2, 2}, four, sizeof four);
  mb_node(&eb, "Identity", NULL, "e4", "e_out");
  mb_output(&eb, "e_out");
  mb_if(&m, "bad_if", "c", "y", &tb, &eb);
  mb_output(&m, "y");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'bad_if' (If)", "f32 [3]", "f32 [2,2]");
  mb_free(&tb);
  mb_free(&eb);
  mb_free(&m);
}

/* A condition whose shape is known only at run time (retinanet's "no boxes"
 * test: numel of a run-time-sized value == 0, Shape -> ReduceProd -> Equal):
 * refused in one line that names the If, says the shape is unknown rather
 * than asking for one value, and names the node the size comes from (here a
 * Range to a run-time limit). */
static void test_if_unknown_condition(void) {
  static const int64_t zero = 0, one = 1;
  mb m, tb, eb;
  mb_init(&m, 13);
  mb_input(&m, "x", DT_FLOAT32, 1, (int64_t[]){3}, NULL);
  mb_input(&m, "limit", DT_INT64, 0, NULL, NULL);
  mb_init_raw(&m, "zero", DT_INT64, 0, NULL, &zero, sizeof zero);
  mb_init_raw(&m, "one", DT_INT64, 0, NULL, &one, sizeof one);
  mb_node(&m, "Range", "ids", "zero,limit,one", "r");
  mb_node(&m, "Shape", NULL, "r", "shr");
  mb_node(&m, "ReduceProd", NULL, "shr", "numel");
  mb_node(&m, "Equal", NULL, "numel,zero", "none");
  mb_one_node_graph(&tb, "Identity", "x", "t_out");
  mb_one_node_graph(&eb, "Neg", "x", "e_out");
  mb_if(&m, "if_none", "none", "y", &tb, &eb);
  mb_output(&m, "y");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'if_none' (If)", "condition 'none'",
              "shape known only at run time", "node 'ids' (Range)");
  mb_free(&tb);
  mb_free(&eb);
  mb_free(&m);
}

/* An If nested in a constant If's branch reads a name two graphs out, and its
 * condition folds from an outer computation (Size -> Equal, as in AffineGrid's
 * function body). */
static void test_if_nested(void) {
  static const float one = 1.0f;
  static const int64_t three = 3;
  mb m, outer_t, outer_e, inner_t, inner_e;
  mb_init(&m, 13);
  mb_input(&m, "x", DT_FLOAT32, 1, (int64_t[]){3}, NULL);
  mb_init_raw(&m, "one", DT_FLOAT32, 0, NULL, &one, sizeof one);
  mb_init_raw(&m, "three", DT_INT64, 0, NULL, &three, sizeof three);
  mb_node(&m, "Size", NULL, "x", "n");
  mb_node(&m, "Equal", NULL, "n,three", "is3");
  mb_one_node_graph(&inner_t, "Sub", "x,one", "it_out");
  mb_one_node_graph(&inner_e, "Neg", "x", "ie_out");
  mb_init(&outer_t, 13);
  mb_if(&outer_t, "inner", "is3", "ot_out", &inner_t, &inner_e);
  mb_output(&outer_t, "ot_out");
  mb_one_node_graph(&outer_e, "Identity", "x", "oe_out");
  mb_if(&m, "outer", "is3", "y", &outer_t, &outer_e);
  mb_output(&m, "y");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    CHECK(mb_count_ops(g, IR_OP_SUB) == 1 && mb_count_ops(g, IR_OP_NEG) == 0 &&
          mb_count_ops(g, IR_OP_WHERE) == 0);
    const float x[3] = {5, 6, 7}, want[3] = {4, 5, 6};
    arena a;
    arena_init(&a, 0);
    const void *inputs[1] = {x};
    void *out[1];
    if (!mb_eval(g, inputs, out, &a)) CHECK(close_to(out[0], want, 3));
    arena_free(&a);
    ir_graph_free(g);
  }
  mb_free(&inner_t);
  mb_free(&inner_e);
  mb_free(&outer_t);
  mb_free(&outer_e);
  mb_free(&m);
}

/* Loop: y_out = y_in + x * float(i), scan output y_out; M constant. */
static void loop_model(mb *m, mb *body, int64_t trips, int runtime_m) {
  mb_init(m, 13);
  mb_input(m, "x", DT_FLOAT32, 1, (int64_t[]){2}, NULL);
  mb_input(m, "y0", DT_FLOAT32, 1, (int64_t[]){2}, NULL);
  if (runtime_m)
    mb_input(m, "M", DT_INT64, 0, NULL, NULL);
  else
    mb_init_raw(m, "M", DT_INT64, 0, NULL, &trips, sizeof trips);
  mb_init_raw(m, "cond", DT_BOOL, 0, NULL, (uint8_t[]){1}, 1);
  mb_init(body, 13);
  mb_input(body, "i", DT_INT64, 0, NULL, NULL);
  mb_input(body, "c_in", DT_BOOL, 0, NULL, NULL);
  mb_input(body, "y_in", DT_FLOAT32, -1, NULL, NULL);
  mb_node(body, "Identity", NULL, "c_in", "c_out");
  Onnx__NodeProto *cast = mb_node(body, "Cast", NULL, "i", "fi");
  attr_int(body, cast, "to", DT_FLOAT32);
  mb_node(body, "Mul", NULL, "x,fi", "xi");
  mb_node(body, "Add", NULL, "y_in,xi", "y_out");
  mb_node(body, "Identity", NULL, "y_out", "scan");
  mb_output(body, "c_out");
  mb_output(body, "y_out");
  mb_output(body, "scan");
  Onnx__NodeProto *n = mb_node(m, "Loop", "loop", "M,cond,y0", "y,ys");
  attr_graph(m, n, "body", body);
  mb_output(m, "y");
  mb_output(m, "ys");
}

static void test_loop(void) {
  mb m, body;
  loop_model(&m, &body, 3, 0);
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    CHECK(g->outputs[1]->rank == 2 && g->outputs[1]->dims[0] == 3 && g->outputs[1]->dims[1] == 2);
    const float x[2] = {1, 10}, y0[2] = {0.5f, -1};
    /* i = 0, 1, 2: y = y0, y0 + x, y0 + 3x */
    const float want_y[2] = {3.5f, 29}, want_ys[6] = {0.5f, -1, 1.5f, 9, 3.5f, 29};
    arena a;
    arena_init(&a, 0);
    const void *in[2] = {x, y0};
    void *out[2];
    if (!mb_eval(g, in, out, &a)) CHECK(close_to(out[0], want_y, 2) && close_to(out[1], want_ys, 6));
    arena_free(&a);
    ir_graph_free(g);
  }
  mb_free(&body);
  mb_free(&m);

  loop_model(&m, &body, (int64_t)1 << 40, 0);
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_LIMIT, "node 'loop' (Loop)", "trip count 1099511627776");
  mb_free(&body);
  mb_free(&m);

  loop_model(&m, &body, 0, 1);
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'loop' (Loop)", "trip count M 'M'", "run time");
  mb_free(&body);
  mb_free(&m);
}

/* A Loop whose body computes its condition: it stops when it folds to false. */
static void test_loop_condition(void) {
  static const int64_t big = INT64_MAX, limit = 4;
  mb m, body;
  mb_init(&m, 13);
  mb_input(&m, "y0", DT_FLOAT32, 1, (int64_t[]){1}, NULL);
  mb_init_raw(&m, "M", DT_INT64, 0, NULL, &big, sizeof big);
  mb_init_raw(&m, "limit", DT_INT64, 0, NULL, &limit, sizeof limit);
  mb_init(&body, 13);
  mb_input(&body, "i", DT_INT64, 0, NULL, NULL);
  mb_input(&body, "c_in", DT_BOOL, 0, NULL, NULL);
  mb_input(&body, "y_in", DT_FLOAT32, -1, NULL, NULL);
  mb_node(&body, "Less", NULL, "i,limit", "c_out"); /* runs i = 0 .. 4 */
  mb_node(&body, "Add", NULL, "y_in,y_in", "y_out");
  mb_output(&body, "c_out");
  mb_output(&body, "y_out");
  Onnx__NodeProto *n = mb_node(&m, "Loop", "while", "M,,y0", "y");
  attr_graph(&m, n, "body", &body);
  mb_output(&m, "y");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    CHECK(mb_count_ops(g, IR_OP_ADD) == 5);
    const float y0 = 1.5f, want = 48;
    arena a;
    arena_init(&a, 0);
    const void *in[1] = {&y0};
    void *out[1];
    if (!mb_eval(g, in, out, &a)) CHECK(close_to(out[0], &want, 1));
    arena_free(&a);
    ir_graph_free(g);
  }
  mb_free(&body);
  mb_free(&m);
}

/* Scan (opset 9): sum and product states over x's rows, the running sum as
 * a scan output; `reverse` scans x back to front and stacks the output along
 * axis 1 instead of 0. */
static void test_scan(int reverse) {
  mb m, body;
  mb_init(&m, 11);
  mb_input(&m, "s0", DT_FLOAT32, 1, (int64_t[]){2}, NULL);
  mb_input(&m, "x", DT_FLOAT32, 2, (int64_t[]){3, 2}, NULL);
  mb_init(&body, 11);
  mb_input(&body, "s_in", DT_FLOAT32, -1, NULL, NULL);
  mb_input(&body, "row", DT_FLOAT32, -1, NULL, NULL);
  mb_node(&body, "Add", NULL, "s_in,row", "s_out");
  mb_node(&body, "Identity", NULL, "s_out", "z_t");
  mb_output(&body, "s_out");
  mb_output(&body, "z_t");
  Onnx__NodeProto *n = mb_node(&m, "Scan", "scan", "s0,x", "s,z");
  attr_int(&m, n, "num_scan_inputs", 1);
  if (reverse) {
    attr_ints(&m, n, "scan_input_directions", 1, (int64_t[]){1});
    attr_ints(&m, n, "scan_output_axes", 1, (int64_t[]){1});
  }
  attr_graph(&m, n, "body", &body);
  mb_output(&m, "s");
  mb_output(&m, "z");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    const float s0[2] = {1, 2}, x[6] = {1, 2, 3, 4, 5, 6}, want_s[2] = {10, 14};
    /* forward: rows 1,2 / 3,4 / 5,6; reverse: 5,6 / 3,4 / 1,2, stacked as columns */
    const float fwd[6] = {2, 4, 5, 8, 10, 14}, rev[6] = {6, 9, 10, 8, 12, 14};
    arena a;
    arena_init(&a, 0);
    const void *in[2] = {s0, x};
    void *out[2];
    if (!mb_eval(g, in, out, &a))
      CHECK(close_to(out[0], want_s, 2) && close_to(out[1], reverse ? rev : fwd, 6));
    CHECK(g->outputs[1]->rank == 2 && g->outputs[1]->dims[0] == (reverse ? 2 : 3));
    arena_free(&a);
    ir_graph_free(g);
  }
  mb_free(&body);
  mb_free(&m);
}

/* Scan (opset 8): axis 0 is a batch, each entry scanned on its own. */
static void test_scan_batched(void) {
  mb m, body;
  mb_init(&m, 8);
  mb_input(&m, "s0", DT_FLOAT32, 2, (int64_t[]){2, 1}, NULL);
  mb_input(&m, "x", DT_FLOAT32, 3, (int64_t[]){2, 3, 1}, NULL);
  mb_init(&body, 8);
  mb_input(&body, "s_in", DT_FLOAT32, -1, NULL, NULL);
  mb_input(&body, "row", DT_FLOAT32, -1, NULL, NULL);
  mb_node(&body, "Mul", NULL, "s_in,row", "s_out");
  mb_output(&body, "s_out");
  Onnx__NodeProto *n = mb_node(&m, "Scan", "scan8", ",s0,x", "s");
  attr_int(&m, n, "num_scan_inputs", 1);
  attr_graph(&m, n, "body", &body);
  mb_output(&m, "s");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    const float s0[2] = {1, 2}, x[6] = {1, 2, 3, 4, 5, 6}, want[2] = {6, 240};
    arena a;
    arena_init(&a, 0);
    const void *in[2] = {s0, x};
    void *out[1];
    if (!mb_eval(g, in, out, &a)) CHECK(close_to(out[0], want, 2));
    arena_free(&a);
    ir_graph_free(g);
  }
  mb_free(&body);
  mb_free(&m);
}

/* Nodes no graph output reads are not imported (an export's unused branch,
 * here an unknown op and a Relu after it), while a node only an If's branch
 * reads is; with import_unread (atc --out_nodes) the unknown op is refused. */
static void test_unread_nodes(void) {
  mb m, tb, eb;
  mb_init(&m, 13);
  mb_input(&m, "x", DT_FLOAT32, 1, (int64_t[]){3}, NULL);
  mb_input(&m, "c", DT_BOOL, 0, NULL, NULL);
  mb_node(&m, "Neg", "neg_for_branch", "x", "nx");
  mb_node(&m, "Frobnicate", "unread_unknown", "x", "dz");
  mb_node(&m, "Relu", "unread_relu", "dz", "dd");
  mb_one_node_graph(&tb, "Identity", "nx", "t_out");
  mb_one_node_graph(&eb, "Abs", "x", "e_out");
  mb_if(&m, "pick", "c", "y", &tb, &eb);
  mb_output(&m, "y");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    CHECK(mb_count_ops(g, IR_OP_NEG) == 1 && mb_count_ops(g, IR_OP_RELU) == 0);
    const float x[3] = {1, -2, 3}, want[2][3] = {{1, 2, 3}, {-1, 2, -3}};
    for (int c = 0; c < 2; c++) {
      arena a;
      arena_init(&a, 0);
      uint8_t cv = (uint8_t)c;
      const void *in[2] = {x, &cv};
      void *out[1];
      if (!mb_eval(g, in, out, &a)) CHECK(close_to(out[0], want[c], 3));
      arena_free(&a);
    }
    ir_graph_free(g);
  }
  onnx_options all = {.import_unread = 1};
  EXPECT_FAIL(&m, NULL, &all, ST_ERR_UNSUPPORTED, "'unread_unknown'", "Frobnicate");
  mb_free(&tb);
  mb_free(&eb);
  mb_free(&m);
}

int main(void) {
  test_if_constant();
  test_if_runtime();
  test_if_nested();
  test_if_unknown_condition();
  test_loop();
  test_loop_condition();
  test_scan(0);
  test_scan(1);
  test_scan_batched();
  test_unread_nodes();
  return test_summary("test_frontend_control");
}
