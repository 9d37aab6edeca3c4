/* test_frontend_reduce_views.c - the importers of the reduction, view and
 * folding ops (frontend/onnx_ops.c): ReduceX and ArgMax/ArgMin into Reduce
 * (axes from the attribute or a constant input per opset, noop), Slice's
 * opset-10 inputs (int32 too) into attributes, Split's num_outputs check,
 * Trilu into Where with a constant mask, ConstantOfShape's default value,
 * and computed list inputs kept as in[1] for shape inference. Models are
 * built with onnx_mb.h. */
#include "onnx_mb.h"

static void test_reduce(void) {
  mb m;
  ir_graph *g;
  /* ReduceSum opset 13: constant axes input; keepdims 0 */
  mb_init(&m, 13);
  mb_input(&m, "x", DT_FLOAT32, 3, (int64_t[]){2, 3, 4}, NULL);
  mb_init_raw(&m, "ax", DT_INT64, 1, (int64_t[]){1}, (int64_t[]){-1}, 8);
  Onnx__NodeProto *c = mb_node(&m, "ReduceSum", "rs", "x,ax", "y");
  attr_int(&m, c, "keepdims", 0);
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    ir_node *n = g->nodes[0];
    CHECK(n->op == IR_OP_REDUCE && n->nin == 1 && !strcmp(ir_attr_string(n, "mode", ""), "sum"));
    CHECK(attr_ints_are(n, "axes", 1, (int64_t[]){-1}) && ir_attr_int(n, "keepdims", 9) == 0 &&
          ir_attr_int(n, "noop", 9) == 0);
  }
  ir_graph_free(g);
  mb_free(&m);

  /* ReduceMean opset 18, empty axes with noop_with_empty_axes: reduces nothing */
  mb_init(&m, 18);
  mb_input(&m, "x", DT_FLOAT32, 2, (int64_t[]){2, 3}, NULL);
  mb_init_raw(&m, "ax", DT_INT64, 1, (int64_t[]){0}, NULL, 0);
  c = mb_node(&m, "ReduceMean", "rm", "x,ax", "y");
  attr_int(&m, c, "noop_with_empty_axes", 1);
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) CHECK(ir_attr_int(g->nodes[0], "noop", 0) == 1 && !ir_attr_find(g->nodes[0], "axes"));
  ir_graph_free(g);
  mb_free(&m);

  /* ReduceMax opset 13: axes is an attribute; an axes input is refused */
  mb_init(&m, 13);
  mb_input(&m, "x", DT_FLOAT32, 2, (int64_t[]){2, 3}, NULL);
  c = mb_node(&m, "ReduceMax", "rx", "x", "y");
  attr_ints(&m, c, "axes", 1, (int64_t[]){0});
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g)
    CHECK(!strcmp(ir_attr_string(g->nodes[0], "mode", ""), "max") &&
          attr_ints_are(g->nodes[0], "axes", 1, (int64_t[]){0}));
  ir_graph_free(g);
  mb_free(&m);

  /* ArgMin with select_last_index; the default axis 0 made explicit */
  mb_init(&m, 13);
  mb_input(&m, "x", DT_FLOAT32, 2, (int64_t[]){2, 3}, NULL);
  c = mb_node(&m, "ArgMin", "am", "x", "y");
  attr_int(&m, c, "select_last_index", 1);
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    ir_node *n = g->nodes[0];
    CHECK(!strcmp(ir_attr_string(n, "mode", ""), "argmin") && attr_ints_are(n, "axes", 1, (int64_t[]){0}));
    CHECK(ir_attr_int(n, "select_last_index", 0) == 1 && g->outputs[0]->dtype == DT_INT64);
  }
  ir_graph_free(g);
  attr_int(&m, c, "select_last_index", 2);
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'am' (ArgMin)", "select_last_index");
  mb_free(&m);
}

static void test_views(void) {
  mb m;
  ir_graph *g;
  /* Slice opset 13: int32 constant inputs become attributes */
  mb_init(&m, 13);
  mb_input(&m, "x", DT_FLOAT32, 2, (int64_t[]){4, 6}, NULL);
  mb_init_raw(&m, "st", DT_INT32, 1, (int64_t[]){1}, (int32_t[]){5}, 4);
  mb_init_raw(&m, "en", DT_INT32, 1, (int64_t[]){1}, (int32_t[]){0}, 4);
  mb_init_raw(&m, "ax", DT_INT32, 1, (int64_t[]){1}, (int32_t[]){1}, 4);
  mb_init_raw(&m, "sp", DT_INT32, 1, (int64_t[]){1}, (int32_t[]){-2}, 4);
  mb_node(&m, "Slice", "sl", "x,st,en,ax,sp", "y");
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    ir_node *n = g->nodes[0];
    CHECK(n->op == IR_OP_SLICE && n->nin == 1 && attr_ints_are(n, "starts", 1, (int64_t[]){5}));
    CHECK(attr_ints_are(n, "ends", 1, (int64_t[]){0}) && attr_ints_are(n, "steps", 1, (int64_t[]){-2}));
  }
  ir_graph_free(g);
  mb_free(&m);

  /* Split opset 18: num_outputs must match the outputs */
  mb_init(&m, 18);
  mb_input(&m, "x", DT_FLOAT32, 1, (int64_t[]){6}, NULL);
  Onnx__NodeProto *c = mb_node(&m, "Split", "sp", "x", "a,b");
  attr_int(&m, c, "num_outputs", 2);
  mb_output(&m, "a");
  mb_output(&m, "b");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g)
    CHECK(g->nodes[0]->op == IR_OP_SPLIT && g->nodes[0]->nout == 2 &&
          ir_attr_int(g->nodes[0], "axis", 9) == 0);
  ir_graph_free(g);
  attr_int(&m, c, "num_outputs", 3);
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'sp' (Split)", "num_outputs");
  mb_free(&m);

  /* Expand with a shape not known at import (a graph input) keeps it as
   * in[1] */
  mb_init(&m, 13);
  mb_input(&m, "x", DT_FLOAT32, 2, (int64_t[]){3, 1}, NULL);
  mb_input(&m, "s", DT_INT64, 1, (int64_t[]){2}, NULL);
  mb_node(&m, "Expand", "ex", "x,s", "y");
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    ir_node *e = find_node(g, IR_OP_EXPAND);
    CHECK(e && e->nin == 2 && !ir_attr_find(e, "shape"));
  }
  ir_graph_free(g);
  mb_free(&m);
  /* In node order Shape(z) folds at import: the shape becomes the attribute */
  mb_init(&m, 13);
  mb_input(&m, "x", DT_FLOAT32, 2, (int64_t[]){3, 1}, NULL);
  mb_input(&m, "z", DT_FLOAT32, 2, (int64_t[]){3, 4}, NULL);
  mb_node(&m, "Shape", "sh", "z", "s");
  mb_node(&m, "Expand", "ex", "x,s", "y");
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    CHECK(g->nnodes == 1 && g->nodes[0]->op == IR_OP_EXPAND && g->nodes[0]->nin == 1 &&
          attr_ints_are(g->nodes[0], "shape", 2, (int64_t[]){3, 4}));
    CHECK(g->outputs[0]->rank == 2 && g->outputs[0]->dims[0] == 3 && g->outputs[0]->dims[1] == 4);
  }
  ir_graph_free(g);
  mb_free(&m);
}

static void test_trilu_cos(void) {
  mb m;
  ir_graph *g;
  /* Trilu lower, k = 1 over [2,3]: mask j - i <= 1 */
  mb_init(&m, 14);
  mb_input(&m, "x", DT_INT64, 2, (int64_t[]){2, 3}, NULL);
  mb_init_raw(&m, "k", DT_INT64, 0, NULL, (int64_t[]){1}, 8);
  Onnx__NodeProto *c = mb_node(&m, "Trilu", "tr", "x,k", "y");
  attr_int(&m, c, "upper", 0);
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    ir_node *n = g->nodes[0];
    const uint8_t want[6] = {1, 1, 0, 1, 1, 1};
    CHECK(n->op == IR_OP_WHERE && n->nin == 3 && n->in[0]->dtype == DT_BOOL && n->in[0]->data &&
          !memcmp(n->in[0]->data, want, 6));
    CHECK(n->in[1] == g->inputs[0] && n->in[2]->dtype == DT_INT64 && g->outputs[0]->dtype == DT_INT64);
  }
  ir_graph_free(g);
  mb_free(&m);

  /* ConstantOfShape without value: f32 zero */
  mb_init(&m, 13);
  mb_init_raw(&m, "s", DT_INT64, 1, (int64_t[]){2}, (int64_t[]){2, 3}, 16);
  mb_node(&m, "ConstantOfShape", "cs", "s", "y");
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    ir_node *n = g->nodes[0];
    CHECK(n->op == IR_OP_CONSTANTOFSHAPE && n->nin == 2 && n->in[1]->dtype == DT_FLOAT32 &&
          *(const float *)n->in[1]->data == 0.0f && g->outputs[0]->dtype == DT_FLOAT32);
  }
  ir_graph_free(g);
  mb_free(&m);
}

int main(void) {
  test_reduce();
  test_views();
  test_trilu_cos();
  return test_summary("test_frontend_reduce_views");
}
