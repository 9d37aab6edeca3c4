/* test_frontend.c - the ONNX importer (frontend/).
 *
 * Every model is built here by filling protobuf-c structs and packing them
 * (onnx__model_proto__pack), so no binary model is committed. A small builder
 * (`mb`) keeps the structs in an arena: nodes, attributes, initializers,
 * inputs and outputs are pushed onto the graph, then packed and loaded with
 * onnx_load_memory (or written next to external data files and loaded with
 * onnx_load_file). Every rejection test checks the status and that the
 * message names what it should (strstr).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fp16.h"
#include "frontend/onnx_import.h"
#include "onnx.pb-c.h"
#include "support.h"

/* --- the model builder */

typedef struct mb {
  arena a;
  Onnx__ModelProto model;
  Onnx__GraphProto graph;
  Onnx__OperatorSetIdProto opset;
  Onnx__OperatorSetIdProto *opsets[1];
} mb;

/* Appends item to a pointer array kept in the arena. */
#define PUSH(m, arr, n, item)                                                                      \
  do {                                                                                             \
    void **na_ = arena_alloc(&(m)->a, ((n) + 1) * sizeof(void *));                                 \
    if (n) memcpy(na_, (arr), (n) * sizeof(void *));                                               \
    na_[n] = (item);                                                                               \
    (arr) = (void *)na_;                                                                           \
    (n)++;                                                                                         \
  } while (0)

static void mb_init(mb *m, int opset) {
  memset(m, 0, sizeof *m);
  arena_init(&m->a, 0);
  m->model = (Onnx__ModelProto)ONNX__MODEL_PROTO__INIT;
  m->model.has_ir_version = 1;
  m->model.ir_version = 8;
  m->opset = (Onnx__OperatorSetIdProto)ONNX__OPERATOR_SET_ID_PROTO__INIT;
  m->opset.domain = "";
  m->opset.has_version = 1;
  m->opset.version = opset;
  m->opsets[0] = &m->opset;
  m->model.n_opset_import = 1;
  m->model.opset_import = m->opsets;
  m->graph = (Onnx__GraphProto)ONNX__GRAPH_PROTO__INIT;
  m->graph.name = "g";
  m->model.graph = &m->graph;
}

static void mb_free(mb *m) { arena_free(&m->a); }

/* Splits "a,,b" into {"a", "", "b"}; "" is no names at all. */
static char **split_names(mb *m, const char *list, size_t *n) {
  *n = 0;
  if (!*list) return NULL;
  size_t count = 1;
  for (const char *p = list; *p; p++) count += *p == ',';
  char **names = arena_alloc(&m->a, count * sizeof *names);
  for (const char *p = list;; p++) {
    size_t len = strcspn(p, ",");
    names[(*n)++] = arena_strndup(&m->a, p, len);
    p += len;
    if (!*p) break;
  }
  return names;
}

static Onnx__NodeProto *mb_node(mb *m, const char *op, const char *name, const char *ins,
                                const char *outs) {
  Onnx__NodeProto *n = arena_alloc(&m->a, sizeof *n);
  *n = (Onnx__NodeProto)ONNX__NODE_PROTO__INIT;
  n->op_type = arena_strdup(&m->a, op);
  n->name = name ? arena_strdup(&m->a, name) : NULL;
  n->input = split_names(m, ins, &n->n_input);
  n->output = split_names(m, outs, &n->n_output);
  PUSH(m, m->graph.node, m->graph.n_node, n);
  return n;
}

static Onnx__AttributeProto *mb_attr(mb *m, Onnx__NodeProto *n, const char *name,
                                     Onnx__AttributeProto__AttributeType type) {
  Onnx__AttributeProto *a = arena_alloc(&m->a, sizeof *a);
  *a = (Onnx__AttributeProto)ONNX__ATTRIBUTE_PROTO__INIT;
  a->name = arena_strdup(&m->a, name);
  a->has_type = 1;
  a->type = type;
  PUSH(m, n->attribute, n->n_attribute, a);
  return a;
}

static void attr_int(mb *m, Onnx__NodeProto *n, const char *name, int64_t v) {
  Onnx__AttributeProto *a = mb_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  a->has_i = 1;
  a->i = v;
}

static void attr_float(mb *m, Onnx__NodeProto *n, const char *name, float v) {
  Onnx__AttributeProto *a = mb_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  a->has_f = 1;
  a->f = v;
}

static void attr_string(mb *m, Onnx__NodeProto *n, const char *name, const char *v) {
  Onnx__AttributeProto *a = mb_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
  a->has_s = 1;
  a->s.data = (uint8_t *)arena_strdup(&m->a, v);
  a->s.len = strlen(v);
}

static void attr_ints(mb *m, Onnx__NodeProto *n, const char *name, int count, const int64_t *v) {
  Onnx__AttributeProto *a = mb_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  a->n_ints = (size_t)count;
  a->ints = arena_memdup(&m->a, v, (size_t)count * sizeof *v);
}

static Onnx__TensorProto *mb_tensor(mb *m, const char *name, int dt, int rank, const int64_t *dims) {
  Onnx__TensorProto *t = arena_alloc(&m->a, sizeof *t);
  *t = (Onnx__TensorProto)ONNX__TENSOR_PROTO__INIT;
  t->name = name ? arena_strdup(&m->a, name) : NULL;
  t->has_data_type = 1;
  t->data_type = dt;
  t->n_dims = (size_t)rank;
  t->dims = arena_memdup(&m->a, dims, (size_t)rank * sizeof *dims);
  return t;
}

static void set_raw(mb *m, Onnx__TensorProto *t, const void *data, size_t bytes) {
  t->has_raw_data = 1;
  t->raw_data.data = arena_memdup(&m->a, data, bytes);
  t->raw_data.len = bytes;
}

static Onnx__TensorProto *mb_init_raw(mb *m, const char *name, int dt, int rank,
                                      const int64_t *dims, const void *data, size_t bytes) {
  Onnx__TensorProto *t = mb_tensor(m, name, dt, rank, dims);
  set_raw(m, t, data, bytes);
  PUSH(m, m->graph.initializer, m->graph.n_initializer, t);
  return t;
}

static Onnx__ValueInfoProto *value_info(mb *m, const char *name, int dt) {
  Onnx__ValueInfoProto *vi = arena_alloc(&m->a, sizeof *vi);
  *vi = (Onnx__ValueInfoProto)ONNX__VALUE_INFO_PROTO__INIT;
  vi->name = arena_strdup(&m->a, name);
  Onnx__TypeProto *tp = arena_alloc(&m->a, sizeof *tp);
  *tp = (Onnx__TypeProto)ONNX__TYPE_PROTO__INIT;
  Onnx__TypeProto__Tensor *tt = arena_alloc(&m->a, sizeof *tt);
  *tt = (Onnx__TypeProto__Tensor)ONNX__TYPE_PROTO__TENSOR__INIT;
  tt->has_elem_type = 1;
  tt->elem_type = dt;
  tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  tp->tensor_type = tt;
  vi->type = tp;
  return vi;
}

/* A graph input; params[i] non-NULL makes dim i symbolic; rank -1: no shape. */
static void mb_input(mb *m, const char *name, int dt, int rank, const int64_t *dims,
                     const char *const *params) {
  Onnx__ValueInfoProto *vi = value_info(m, name, dt);
  if (rank >= 0) {
    Onnx__TensorShapeProto *sh = arena_alloc(&m->a, sizeof *sh);
    *sh = (Onnx__TensorShapeProto)ONNX__TENSOR_SHAPE_PROTO__INIT;
    for (int i = 0; i < rank; i++) {
      Onnx__TensorShapeProto__Dimension *d = arena_alloc(&m->a, sizeof *d);
      *d = (Onnx__TensorShapeProto__Dimension)ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
      if (params && params[i]) {
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
        d->dim_param = arena_strdup(&m->a, params[i]);
      } else {
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d->dim_value = dims[i];
      }
      PUSH(m, sh->dim, sh->n_dim, d);
    }
    vi->type->tensor_type->shape = sh;
  }
  PUSH(m, m->graph.input, m->graph.n_input, vi);
}

static void mb_output(mb *m, const char *name) {
  Onnx__ValueInfoProto *vi = value_info(m, name, 1);
  PUSH(m, m->graph.output, m->graph.n_output, vi);
}

static uint8_t *mb_pack(mb *m, size_t *len) {
  *len = onnx__model_proto__get_packed_size(&m->model);
  uint8_t *buf = malloc(*len ? *len : 1);
  onnx__model_proto__pack(&m->model, buf);
  return buf;
}

static status mb_load(mb *m, const char *dir, const onnx_options *opt, ir_graph **g, diag *d) {
  size_t len;
  uint8_t *buf = mb_pack(m, &len);
  diag_init(d);
  status s = onnx_load_memory(buf, len, dir, "model.onnx", opt, g, d);
  free(buf);
  return s;
}

/* Loads m expecting status `want` and every NULL-terminated substring. */
static void expect_fail_(const char *file, int line, mb *m, const char *dir,
                         const onnx_options *opt, status want, ...) {
  ir_graph *g = NULL;
  diag d;
  status s = mb_load(m, dir, opt, &g, &d);
  test_check(s == want && g == NULL, file, line, "status == want");
  if (s != want) test_note("  got %s, want %s: %s", status_name(s), status_name(want), d.msg);
  test_check(strncmp(d.msg, "model.onnx: ", 12) == 0, file, line, "message names the model");
  va_list ap;
  va_start(ap, want);
  for (const char *sub; (sub = va_arg(ap, const char *));) {
    test_check(strstr(d.msg, sub) != NULL, file, line, "message names the culprit");
    if (!strstr(d.msg, sub)) test_note("  '%s' not in: %s", sub, d.msg);
  }
  va_end(ap);
  ir_graph_free(g);
}
#define EXPECT_FAIL(m, dir, opt, want, ...) \
  expect_fail_(__FILE__, __LINE__, m, dir, opt, want, __VA_ARGS__, (const char *)NULL)

static ir_graph *expect_ok_(const char *file, int line, mb *m, const char *dir,
                            const onnx_options *opt) {
  ir_graph *g = NULL;
  diag d;
  status s = mb_load(m, dir, opt, &g, &d);
  test_check(s == ST_OK && g, file, line, "load succeeds");
  if (s) test_note("  %s", d.msg);
  if (g) {
    diag_init(&d);
    test_check(ir_verify(g, &d) == ST_OK, file, line, "ir_verify");
    if (d.code) test_note("  %s", d.msg);
  }
  return g;
}
#define EXPECT_OK(m, dir, opt) expect_ok_(__FILE__, __LINE__, m, dir, opt)

static ir_node *find_node(ir_graph *g, ir_op op) {
  for (int i = 0; i < g->nnodes; i++)
    if (g->nodes[i]->op == op) return g->nodes[i];
  return NULL;
}

static int attr_ints_are(const ir_node *n, const char *name, int count, const int64_t *want) {
  int64_t got[16];
  int k = ir_attr_ints(n, name, got, 16);
  return k == count && memcmp(got, want, (size_t)count * sizeof *want) == 0;
}

/* --- the tiny Conv + Relu model */

static const int64_t in_dims[4] = {1, 3, 8, 8}, w_dims[4] = {4, 3, 3, 3}, b_dims[1] = {4};
static float w_data[108], b_data[4] = {0.5f, -1.0f, 2.0f, 0.25f};

static void conv_relu_model(mb *m) {
  for (int i = 0; i < 108; i++) w_data[i] = (float)i * 0.01f - 0.5f;
  mb_init(m, 13);
  mb_input(m, "input", 1, 4, in_dims, NULL);
  mb_init_raw(m, "w", 1, 4, w_dims, w_data, sizeof w_data);
  Onnx__TensorProto *b = mb_tensor(m, "b", 1, 1, b_dims);
  b->n_float_data = 4;
  b->float_data = b_data;
  PUSH(m, m->graph.initializer, m->graph.n_initializer, b);
  /* Relu first: the importer must sort. */
  mb_node(m, "Relu", "relu1", "c", "y");
  Onnx__NodeProto *conv = mb_node(m, "Conv", "conv1", "input,w,b", "c");
  attr_ints(m, conv, "pads", 4, (int64_t[]){1, 1, 1, 1});
  attr_ints(m, conv, "kernel_shape", 2, (int64_t[]){3, 3});
  mb_output(m, "y");
}

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

/* The same file through onnx_load_file. */
static void test_load_file(const char *dir) {
  mb m;
  conv_relu_model(&m);
  size_t len;
  uint8_t *buf = mb_pack(&m, &len);
  char path[4200];
  snprintf(path, sizeof path, "%s/convrelu.onnx", dir);
  CHECK(test_write_file(path, buf, len) == 0);
  ir_graph *g = NULL;
  diag d;
  diag_init(&d);
  CHECK(onnx_load_file(path, NULL, &g, &d) == ST_OK);
  if (g) CHECK_EQ_INT(g->nnodes, 2);
  ir_graph_free(g);
  g = NULL;
  onnx_options small = {.max_file_bytes = 16};
  diag_init(&d);
  CHECK(onnx_load_file(path, &small, &g, &d) == ST_ERR_LIMIT && strstr(d.msg, "convrelu.onnx"));
  snprintf(path, sizeof path, "%s/missing.onnx", dir);
  diag_init(&d);
  CHECK(onnx_load_file(path, NULL, &g, &d) == ST_ERR_IO && strstr(d.msg, "missing.onnx"));
  snprintf(path, sizeof path, "%s/empty.onnx", dir);
  CHECK(test_write_file(path, "", 0) == 0);
  diag_init(&d);
  CHECK(onnx_load_file(path, NULL, &g, &d) == ST_ERR_PARSE && strstr(d.msg, "empty.onnx") &&
        strstr(d.msg, "not a valid ONNX ModelProto"));
  free(buf);
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
static void check_forms(int dt, const void *raw, size_t raw_bytes, Onnx__TensorProto *typed,
                        mb *typed_mb, const char *what) {
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
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'n7' (FooOp)", "no importer for op FooOp",
              "opset 13");
  mb_free(&m);

  /* another domain */
  conv_relu_model(&m);
  mb_node(&m, "FusedGemm", "f1", "y", "z")->domain = "com.microsoft";
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'f1' (FusedGemm)", "com.microsoft");
  mb_free(&m);

  /* dangling input */
  conv_relu_model(&m);
  mb_node(&m, "Add", "add1", "y,nope", "z");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'add1' (Add)", "input 1 'nope'",
              "produced by no node");
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
  static const char *const params[4] = {"batch_size", NULL, NULL, NULL};
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "input", 1, 4, (int64_t[]){0, 3, 224, 224}, params);
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
  CHECK(onnx_parse_input_shape("in:0:1,0", &a, &s, &n, &d) == ST_OK && n == 1 &&
        !strcmp(s[0].name, "in:0") && s[0].rank == 2 && s[0].dims[1] == 0);

  static const struct { const char *spec, *names; } bad[] = {
      {"", "empty"},
      {"input", "'input'"},
      {":1,2", "no input name"},
      {"x:", "'x:'"},
      {"x:1,,2", "dim 1"},
      {"x:1,a", "'a'"},
      {"x:-1", "'-1'"},
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

/* --- per-op normalisation */

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

  /* Clip with a computed bound */
  mb_init(&m, 13);
  mb_input(&m, "x", 1, 1, (int64_t[]){3}, NULL);
  mb_input(&m, "m", 1, 0, NULL, NULL);
  mb_node(&m, "Clip", "clip", "x,m", "y");
  mb_output(&m, "y");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'clip' (Clip)", "input 1 'm'", "constant");
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

  /* Dropout -> Identity; its mask must be unused */
  mb_init(&m, 13);
  mb_input(&m, "x", 1, 1, (int64_t[]){3}, NULL);
  mb_node(&m, "Dropout", "drop", "x", "y,mask");
  mb_output(&m, "y");
  g = EXPECT_OK(&m, NULL, NULL);
  if (g) CHECK(g->nnodes == 1 && g->nodes[0]->op == IR_OP_IDENTITY && g->nodes[0]->nout == 1);
  ir_graph_free(g);
  mb_output(&m, "mask");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'drop' (Dropout)", "output 1 'mask'");
  mb_free(&m);

  /* MaxPool: a used Indices output is refused; defaults made explicit */
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
    CHECK(!strcmp(ir_attr_string(n, "auto_pad", ""), "SAME_UPPER"));
    CHECK(attr_ints_are(n, "pads", 4, (int64_t[]){0, 0, 0, 0}));
    CHECK_EQ_INT(ir_attr_int(n, "ceil_mode", -1), 0);
  }
  ir_graph_free(g);
  mb_node(&m, "Cast", "c", "idx", "fidx");
  attr_int(&m, m.graph.node[1], "to", 1);
  mb_output(&m, "fidx");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'pool' (MaxPool)", "output 1 'idx'");
  mb_free(&m);

  /* BatchNormalization: epsilon default; training_mode refused */
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
  if (g) CHECK(fabs(ir_attr_float(g->nodes[0], "epsilon", 0) - 1e-5) < 1e-12);
  ir_graph_free(g);
  attr_int(&m, c, "training_mode", 1);
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'bn' (BatchNormalization)", "training_mode");
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

  /* Shape -> Gather -> Concat keep their attributes; int64 dtypes propagate */
  mb_init(&m, 15);
  mb_input(&m, "x", 1, 2, (int64_t[]){2, 4}, NULL);
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
    CHECK_EQ_INT(ir_attr_int(g->nodes[0], "start", -1), 1);
    CHECK_EQ_INT(ir_attr_int(g->nodes[1], "axis", -1), 0);
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
  if (g) CHECK(g->outputs[0]->data && g->outputs[0]->rank == 0 && *(const float *)g->outputs[0]->data == 2.5f);
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
  attr_ints(&m, c, "kernel_shape", 1, (int64_t[]){3});
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'cv' (Conv)", "2-D");
  mb_free(&m);
}

/* --- external data */

static Onnx__TensorProto *ext_init(mb *m, const char *name, int rank, const int64_t *dims,
                                   const char *const *kv) {
  Onnx__TensorProto *t = mb_tensor(m, name, DT_FLOAT32, rank, dims);
  t->has_data_location = 1;
  t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  for (int i = 0; kv[i]; i += 2) {
    Onnx__StringStringEntryProto *e = arena_alloc(&m->a, sizeof *e);
    *e = (Onnx__StringStringEntryProto)ONNX__STRING_STRING_ENTRY_PROTO__INIT;
    e->key = arena_strdup(&m->a, kv[i]);
    e->value = arena_strdup(&m->a, kv[i + 1]);
    PUSH(m, t->external_data, t->n_external_data, e);
  }
  PUSH(m, m->graph.initializer, m->graph.n_initializer, t);
  mb_output(m, name);
  return t;
}

/* A model whose one initializer `w` [2, 3] reads external data per kv. */
static void ext_model(mb *m, const char *const *kv) {
  mb_init(m, 13);
  ext_init(m, "w", 2, (int64_t[]){2, 3}, kv);
}

static void path_join(char *out, size_t size, const char *dir, const char *name) {
  snprintf(out, size, "%s/%s", dir, name);
}

static void test_external(void) {
  const char *tmp = test_tmpdir("frontend");
  char dir[4096], outside[4096], p[4200], q[4200];
  snprintf(dir, sizeof dir, "%s/model", tmp);
  snprintf(outside, sizeof outside, "%s/outside", tmp);
  mkdir(dir, 0755);
  mkdir(outside, 0755);
  test_load_file(dir);

  /* w.bin: 16 bytes of header, then six floats */
  unsigned char file[16 + 24];
  float vals[6] = {1, 2, 3, 4, 5, 6};
  memset(file, 0xee, 16);
  memcpy(file + 16, vals, 24);
  path_join(p, sizeof p, dir, "w.bin");
  CHECK(test_write_file(p, file, sizeof file) == 0);
  path_join(p, sizeof p, outside, "secret.bin");
  CHECK(test_write_file(p, file, sizeof file) == 0);
  path_join(p, sizeof p, dir, "sub");
  mkdir(p, 0755);
  path_join(p, sizeof p, dir, "sub/w2.bin");
  CHECK(test_write_file(p, vals, sizeof vals) == 0);

  mb m;
  ext_model(&m, (const char *const[]){"location", "w.bin", "offset", "16", "length", "24",
                                      "checksum", "ignored", NULL});
  ir_graph *g = EXPECT_OK(&m, dir, NULL);
  if (g) CHECK(g->outputs[0]->data && !memcmp(g->outputs[0]->data, vals, 24));
  ir_graph_free(g);
  mb_free(&m);

  /* through onnx_load_file: relative to the model's directory */
  ext_model(&m, (const char *const[]){"location", "./sub/w2.bin", NULL});
  size_t len;
  uint8_t *buf = mb_pack(&m, &len);
  path_join(p, sizeof p, dir, "ext.onnx");
  CHECK(test_write_file(p, buf, len) == 0);
  free(buf);
  diag d;
  diag_init(&d);
  g = NULL;
  CHECK(onnx_load_file(p, NULL, &g, &d) == ST_OK);
  if (g) CHECK(g->outputs[0]->data && !memcmp(g->outputs[0]->data, vals, 24));
  else test_note("  %s", d.msg);
  ir_graph_free(g);
  mb_free(&m);

  ext_model(&m, (const char *const[]){"location", "w.bin", "offset", "16", NULL});
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "initializer 'w'", "'w.bin'", "directory");
  mb_free(&m);

  /* rejections, each naming the initializer and the location */
  snprintf(q, sizeof q, "%s/secret.bin", outside);
  ext_model(&m, (const char *const[]){"location", q, NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_SECURITY, "initializer 'w'", q, "absolute");
  mb_free(&m);

  ext_model(&m, (const char *const[]){"location", "../outside/secret.bin", "offset", "16", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_SECURITY, "initializer 'w'", "'../outside/secret.bin'", "'..'");
  mb_free(&m);

  ext_model(&m, (const char *const[]){"location", "sub/../w.bin", "offset", "16", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_SECURITY, "initializer 'w'", "'sub/../w.bin'", "'..'");
  mb_free(&m);

  ext_model(&m, (const char *const[]){"location", "", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_INVALID, "initializer 'w'", "location");
  mb_free(&m);

  /* a symlink inside the directory pointing out of it */
  path_join(p, sizeof p, dir, "link.bin");
  CHECK(symlink("../outside/secret.bin", p) == 0);
  ext_model(&m, (const char *const[]){"location", "link.bin", "offset", "16", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_SECURITY, "initializer 'w'", "'link.bin'", "symbolic link");
  mb_free(&m);

  /* a symlinked directory component */
  path_join(p, sizeof p, dir, "ldir");
  CHECK(symlink("../outside", p) == 0);
  ext_model(&m, (const char *const[]){"location", "ldir/secret.bin", "offset", "16", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_SECURITY, "initializer 'w'", "'ldir/secret.bin'",
              "symbolic link");
  mb_free(&m);

  /* a hard link to a file outside */
  path_join(p, sizeof p, outside, "secret.bin");
  path_join(q, sizeof q, dir, "hard.bin");
  CHECK(link(p, q) == 0);
  ext_model(&m, (const char *const[]){"location", "hard.bin", "offset", "16", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_SECURITY, "initializer 'w'", "'hard.bin'", "hard link");
  mb_free(&m);

  /* not a regular file */
  ext_model(&m, (const char *const[]){"location", "sub", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_SECURITY, "initializer 'w'", "'sub'", "regular file");
  mb_free(&m);

  /* missing */
  ext_model(&m, (const char *const[]){"location", "nothere.bin", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_IO, "initializer 'w'", "'nothere.bin'");
  mb_free(&m);

  /* offset + length past the end */
  ext_model(&m, (const char *const[]){"location", "w.bin", "offset", "20", "length", "24", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_INVALID, "initializer 'w'", "'w.bin'", "offset 20 + length 24",
              "past the end");
  mb_free(&m);

  ext_model(&m, (const char *const[]){"location", "w.bin", "offset", "18446744073709551615",
                                      "length", "24", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_INVALID, "initializer 'w'", "'w.bin'", "past the end");
  mb_free(&m);

  /* length != dims x dtype size */
  ext_model(&m, (const char *const[]){"location", "w.bin", "offset", "16", "length", "20", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_INVALID, "initializer 'w'", "'w.bin'", "length 20",
              "[2, 3] x float32 need 24");
  mb_free(&m);

  /* no length: the rest of the file, which must fit exactly */
  ext_model(&m, (const char *const[]){"location", "w.bin", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_INVALID, "initializer 'w'", "length 40");
  mb_free(&m);

  /* keys */
  ext_model(&m, (const char *const[]){"location", "w.bin", "offset", "16", "colour", "red", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_INVALID, "initializer 'w'", "unknown external_data key 'colour'");
  mb_free(&m);

  ext_model(&m, (const char *const[]){"location", "w.bin", "offset", "16", "offset", "16", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_INVALID, "initializer 'w'", "'offset' is given twice");
  mb_free(&m);

  ext_model(&m, (const char *const[]){"location", "w.bin", "offset", "-16", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_INVALID, "initializer 'w'", "'-16'");
  mb_free(&m);

  /* two tensors reading the same bytes */
  ext_model(&m, (const char *const[]){"location", "sub/w2.bin", NULL});
  ext_init(&m, "w_again", 2, (int64_t[]){2, 3}, (const char *const[]){"location", "sub/w2.bin", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_LIMIT, "initializer 'w_again'", "'sub/w2.bin'", "overlapping");
  mb_free(&m);
}

int main(void) {
  test_conv_relu();
  test_initializer_forms();
  test_truncated();
  test_deep_nesting();
  test_model_errors();
  test_input_shapes();
  test_parse_input_shape();
  test_ops();
  test_external();
  return test_summary("test_frontend");
}
