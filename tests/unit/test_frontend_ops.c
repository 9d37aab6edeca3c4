/* test_frontend_ops.c - the per-op importers (frontend/onnx_ops.c): each op's
 * attributes and opset differences normalised into the IR contract of
 * ir/ops.def, and the rejections (unknown attributes, wrong kinds, extra
 * outputs that something reads). Models are built with onnx_mb.h. */
#include "onnx_mb.h"

static void test_ops(void) {
  mb m;
  ir_graph *g;
  float lo = 0.0f, hi = 6.0f;

  /* Clip (opset 13) with Constant min and an initializer max, Constant given last. */
  mb_init(&m, 13);
  mb_input(&m, "x", 1, 2, (int64_t[]){2, 3}, NULL);
  mb_init_raw(&m, "hi", 1, 0, NULL, &hi, 4);
  mb_node(&m, "Clip", "clip", "x,lo,hi", "y");
  Onnx__NodeProto *c = mb_node(&m, "Constant", "clo", "", "lo");
  Onnx__AttributeProto *a = mb_attr(&m, c, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
  a->t = mb_tensor(&m, NULL, 1, 0, NULL);
  set_raw(&m, a->t, &lo, 4);
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    CHECK(g->nnodes == 1 && g->nodes[0]->op == IR_OP_CLIP && g->nodes[0]->nin == 1);
    CHECK(ir_attr_float(g->nodes[0], "min", -1) == 0.0 && ir_attr_float(g->nodes[0], "max", -1) == 6.0);
  }
  ir_graph_free(g);
  mb_free(&m);

  /* Clip with only max: min is -inf */
  mb_init(&m, 12);
  mb_input(&m, "x", 1, 1, (int64_t[]){3}, NULL);
  mb_init_raw(&m, "hi", 1, 0, NULL, &hi, 4);
  mb_node(&m, "Clip", "clip", "x,,hi", "y");
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) CHECK(isinf(ir_attr_float(g->nodes[0], "min", 0)) && ir_attr_float(g->nodes[0], "min", 0) < 0);
  ir_graph_free(g);
  mb_free(&m);

  /* Clip with a computed bound: x, min, max as inputs, the omitted max a +inf constant */
  mb_init(&m, 13);
  mb_input(&m, "x", 1, 1, (int64_t[]){3}, NULL);
  mb_input(&m, "m", 1, 0, NULL, NULL);
  mb_node(&m, "Clip", "clip", "x,m", "y");
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    const ir_node *n = g->nodes[0];
    CHECK(n->op == IR_OP_CLIP && n->nin == 3 && !n->in[1]->data && n->in[2]->data);
    CHECK(n->nin == 3 && n->in[2]->data && isinf(*(const float *)n->in[2]->data));
  }
  ir_graph_free(g);
  mb_free(&m);

  /* Clip opset 6: attributes */
  mb_init(&m, 6);
  mb_input(&m, "x", 1, 1, (int64_t[]){3}, NULL);
  c = mb_node(&m, "Clip", "clip", "x", "y");
  attr_float(&m, c, "min", -1.0f);
  attr_float(&m, c, "max", 1.0f);
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) CHECK(ir_attr_float(g->nodes[0], "min", 0) == -1.0 && ir_attr_float(g->nodes[0], "max", 0) == 1.0);
  ir_graph_free(g);
  m.opset.version = 11; /* the attributes are gone from opset 11 on */
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'clip' (Clip)", "attribute 'min'", "opset 11");
  mb_free(&m);

  /* Reshape opset 4: the shape attribute becomes an int64 constant input */
  mb_init(&m, 4);
  mb_input(&m, "x", 1, 2, (int64_t[]){2, 3}, NULL);
  c = mb_node(&m, "Reshape", "rs", "x", "y");
  attr_ints(&m, c, "shape", 2, (int64_t[]){3, 2});
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    ir_node *n = g->nodes[0];
    CHECK(n->op == IR_OP_RESHAPE && n->nin == 2 && n->in[1]->data && n->in[1]->dtype == DT_INT64);
    CHECK(n->in[1]->rank == 1 && n->in[1]->dims[0] == 2 && ((const int64_t *)n->in[1]->data)[0] == 3);
    CHECK_EQ_INT(ir_attr_int(n, "allowzero", -1), 0);
  }
  ir_graph_free(g);
  mb_free(&m);

  /* Squeeze / Unsqueeze opset 13: constant axes input -> attribute */
  mb_init(&m, 13);
  mb_input(&m, "x", 1, 3, (int64_t[]){1, 3, 1}, NULL);
  int64_t axes[2] = {0, 2};
  mb_init_raw(&m, "axes", DT_INT64, 1, (int64_t[]){2}, axes, sizeof axes);
  mb_node(&m, "Squeeze", "sq", "x,axes", "s");
  c = mb_node(&m, "Constant", NULL, "", "uax");
  a = mb_attr(&m, c, "value_ints", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  a->n_ints = 1;
  a->ints = (int64_t[]){1};
  mb_node(&m, "Unsqueeze", "usq", "s,uax", "y");
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    ir_node *sq = find_node(g, IR_OP_SQUEEZE), *usq = find_node(g, IR_OP_UNSQUEEZE);
    CHECK(sq && sq->nin == 1 && attr_ints_are(sq, "axes", 2, axes));
    CHECK(usq && usq->nin == 1 && attr_ints_are(usq, "axes", 1, (int64_t[]){1}));
  }
  ir_graph_free(g);
  mb_free(&m);

  /* Dropout -> Identity; its mask, when read, is true everywhere (Expand of true to Shape(x),
   * which folds at import since x's shape is known) */
  mb_init(&m, 13);
  mb_input(&m, "x", 1, 1, (int64_t[]){3}, NULL);
  mb_node(&m, "Dropout", "drop", "x", "y,mask");
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) CHECK(g->nnodes == 1 && g->nodes[0]->op == IR_OP_IDENTITY && g->nodes[0]->nout == 1);
  ir_graph_free(g);
  mb_output(&m, "mask");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    const ir_value *mask = g->outputs[1];
    const uint8_t *mv = mask->data;
    CHECK(g->nnodes == 1 && !mask->producer && mv && mask->rank == 1 && mask->dims[0] == 3);
    CHECK(mv && mv[0] == 1 && mv[1] == 1 && mv[2] == 1);
    CHECK(mask->dtype == DT_BOOL);
  }
  ir_graph_free(g);
  mb_free(&m);

  /* Dropout in training mode (a true training_mode constant, ratio not 0) is refused */
  uint8_t yes = 1;
  float half = 0.5f;
  mb_init(&m, 13);
  mb_input(&m, "x", 1, 1, (int64_t[]){3}, NULL);
  mb_init_raw(&m, "ratio", 1, 0, NULL, &half, sizeof half);
  mb_init_raw(&m, "train", 9, 0, NULL, &yes, 1);
  mb_node(&m, "Dropout", "drop", "x,ratio,train", "y");
  mb_output(&m, "y");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'drop' (Dropout)", "training_mode");
  mb_free(&m);

  /* MaxPool: defaults made explicit, the node keeps its name; a used Indices output is computed by an ArgMax
   * over the gathered windows; storage_order must be 0 or 1 */
  mb_init(&m, 13);
  mb_input(&m, "x", 1, 4, (int64_t[]){1, 1, 4, 4}, NULL);
  c = mb_node(&m, "MaxPool", "pool", "x", "y,idx");
  attr_ints(&m, c, "kernel_shape", 2, (int64_t[]){2, 2});
  attr_ints(&m, c, "strides", 2, (int64_t[]){2, 2});
  attr_string(&m, c, "auto_pad", "SAME_UPPER");
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    ir_node *n = g->nodes[0];
    CHECK(n->op == IR_OP_MAXPOOL && !strcmp(n->name, "pool"));
    CHECK(!strcmp(ir_attr_string(n, "auto_pad", ""), "SAME_UPPER"));
    CHECK(attr_ints_are(n, "pads", 4, (int64_t[]){0, 0, 0, 0}));
    CHECK_EQ_INT(ir_attr_int(n, "ceil_mode", -1), 0);
  }
  ir_graph_free(g);
  mb_node(&m, "Cast", "c", "idx", "fidx");
  attr_int(&m, m.graph.node[1], "to", 1);
  mb_output(&m, "fidx");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    ir_node *am = find_node(g, IR_OP_REDUCE);
    CHECK(am && !strcmp(ir_attr_string(am, "mode", ""), "argmax") && find_node(g, IR_OP_GATHER));
  }
  ir_graph_free(g);
  attr_int(&m, c, "storage_order", 2);
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'pool' (MaxPool)", "storage_order");
  mb_free(&m);

  /* BatchNormalization: epsilon default, the node keeps its name; training_mode = 1 normalizes with the
   * batch's statistics (Reduce nodes, no BatchNormalization node); statistics outputs are refused outside
   * training mode */
  mb_init(&m, 15);
  mb_input(&m, "x", 1, 4, (int64_t[]){1, 2, 2, 2}, NULL);
  float p2[2] = {1, 1};
  for (int i = 0; i < 4; i++) {
    static const char *const names[] = {"s", "b", "mean", "var"};
    mb_init_raw(&m, names[i], 1, 1, (int64_t[]){2}, p2, sizeof p2);
  }
  c = mb_node(&m, "BatchNormalization", "bn", "x,s,b,mean,var", "y");
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    CHECK(g->nnodes == 1 && g->nodes[0]->op == IR_OP_BATCHNORM && !strcmp(g->nodes[0]->name, "bn"));
    CHECK(fabs(ir_attr_float(g->nodes[0], "epsilon", 0) - 1e-5) < 1e-12);
  }
  ir_graph_free(g);
  attr_int(&m, c, "training_mode", 1);
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) CHECK(!find_node(g, IR_OP_BATCHNORM) && find_node(g, IR_OP_REDUCE));
  ir_graph_free(g);
  mb_free(&m);
  mb_init(&m, 15);
  mb_input(&m, "x", 1, 4, (int64_t[]){1, 2, 2, 2}, NULL);
  for (int i = 0; i < 4; i++) {
    static const char *const names[] = {"s", "b", "mean", "var"};
    mb_init_raw(&m, names[i], 1, 1, (int64_t[]){2}, p2, sizeof p2);
  }
  mb_node(&m, "BatchNormalization", "bn", "x,s,b,mean,var", "y,rmean");
  mb_output(&m, "y");
  mb_output(&m, "rmean");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'bn' (BatchNormalization)", "output 1 'rmean'");
  mb_free(&m);

  /* Softmax defaults by opset; LogSoftmax; Gemm; Flatten; Cast dtype */
  for (int opset = 11; opset <= 13; opset += 2) {
    mb_init(&m, opset);
    mb_input(&m, "x", 1, 2, (int64_t[]){2, 4}, NULL);
    mb_init_raw(&m, "w", 1, 2, (int64_t[]){4, 4}, w_data, 64);
    mb_node(&m, "Gemm", "fc", "x,w", "h");
    mb_node(&m, "Softmax", "sm", "h", "p");
    mb_node(&m, "LogSoftmax", "lsm", "p", "lp");
    mb_node(&m, "Flatten", "fl", "lp", "f");
    c = mb_node(&m, "Cast", "cast", "f", "y");
    attr_int(&m, c, "to", DT_FLOAT16);
    mb_output(&m, "y");
    g = EXPECT_OK(&m, NULL, NULL);
    if (g) {
      ir_node *sm = g->nodes[1], *lsm = g->nodes[2], *fc = g->nodes[0];
      CHECK(sm->op == IR_OP_SOFTMAX && lsm->op == IR_OP_SOFTMAX);
      CHECK_EQ_INT(ir_attr_int(sm, "axis", 99), opset < 13 ? 1 : -1);
      CHECK_EQ_INT(ir_attr_int(sm, "coerce_2d", 99), opset < 13);
      CHECK_EQ_INT(ir_attr_int(sm, "log", 99), 0);
      CHECK_EQ_INT(ir_attr_int(lsm, "log", 99), 1);
      CHECK(ir_attr_float(fc, "alpha", 0) == 1.0 && ir_attr_float(fc, "beta", 0) == 1.0);
      CHECK(ir_attr_int(fc, "transA", 9) == 0 && ir_attr_int(fc, "transB", 9) == 0);
      CHECK_EQ_INT(ir_attr_int(g->nodes[3], "axis", 99), 1);
      CHECK_EQ_INT(g->outputs[0]->dtype, DT_FLOAT16);
    }
    ir_graph_free(g);
    mb_free(&m);
  }

  /* Shape -> Gather -> Concat keep their attributes; int64 dtypes propagate
   * (x's shape is a run-time input, so nothing is known at import and
   * nothing folds) */
  mb_init(&m, 15);
  mb_input(&m, "x0", 1, 2, (int64_t[]){2, 4}, NULL);
  mb_input(&m, "xs", DT_INT64, 1, (int64_t[]){2}, NULL);
  mb_node(&m, "Reshape", "r", "x0,xs", "x");
  c = mb_node(&m, "Shape", "shp", "x", "s");
  attr_int(&m, c, "start", 1);
  int64_t idx = 0;
  mb_init_raw(&m, "i0", DT_INT64, 0, NULL, &idx, 8);
  mb_node(&m, "Gather", "ga", "s,i0", "d0");
  c = mb_node(&m, "Concat", "cat", "d0,d0", "y");
  attr_int(&m, c, "axis", 0);
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    const ir_node *shp = find_node(g, IR_OP_SHAPE), *ga = find_node(g, IR_OP_GATHER);
    CHECK(g->nnodes == 4 && shp && ga);
    if (shp && ga) {
      CHECK_EQ_INT(ir_attr_int(shp, "start", -1), 1);
      CHECK_EQ_INT(ir_attr_int(ga, "axis", -1), 0);
    }
    CHECK_EQ_INT(g->outputs[0]->dtype, DT_INT64);
  }
  ir_graph_free(g);
  mb_free(&m);

  /* Constant forms */
  mb_init(&m, 13);
  c = mb_node(&m, "Constant", "k", "", "k");
  attr_float(&m, c, "value_float", 2.5f);
  mb_output(&m, "k");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g)
    CHECK(g->outputs[0]->data && g->outputs[0]->rank == 0 && *(const float *)g->outputs[0]->data == 2.5f);
  ir_graph_free(g);
  attr_int(&m, c, "value_int", 2);
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'k' (Constant)", "one attribute");
  mb_free(&m);

  /* Conv: auto_pad VALID means zero pads; 1-D convolution is refused */
  mb_init(&m, 13);
  mb_input(&m, "x", 1, 4, (int64_t[]){1, 3, 8, 8}, NULL);
  mb_init_raw(&m, "w", 1, 4, w_dims, w_data, sizeof w_data);
  c = mb_node(&m, "Conv", "cv", "x,w", "y");
  attr_string(&m, c, "auto_pad", "VALID");
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    CHECK(ir_attr_find(g->nodes[0], "auto_pad") == NULL && g->nodes[0]->nin == 2);
    CHECK(attr_ints_are(g->nodes[0], "kernel_shape", 2, (int64_t[]){3, 3}));
  }
  ir_graph_free(g);
  attr_ints(&m, c, "kernel_shape", 1, (int64_t[]){3}); /* 1-D kernel, 2-D weights */
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'cv' (Conv)", "needs rank 3");
  mb_free(&m);
}

/* --- external data */

int main(void) {
  test_ops();
  return test_summary("test_frontend_ops");
}
