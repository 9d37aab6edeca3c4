/* onnx_mb.h - a small ONNX model builder for tests: protobuf-c structs
 * filled in an arena (`mb`), then packed with onnx__model_proto__pack and
 * loaded with onnx_load_memory (or written beside external data files), so
 * no binary model is committed; plus EXPECT_OK / EXPECT_FAIL, which check a
 * load's status and that its message names what it should (strstr), and the
 * conv+relu model several tests start from; mb_eval runs an imported graph
 * in the reference evaluator; mb_run compiles, loads and opens a model in
 * process. Header-only, test code only. */
#ifndef TESTS_UNIT_ONNX_MB_H
#define TESTS_UNIT_ONNX_MB_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fp16.h"
#include "driver/compile.h"
#include "frontend/onnx_import.h"
#include "ir/eval.h"
#include "passes/pass.h"
#include "runtime/rt.h"
#include "omrt.h"
#include "onnx.pb-c.h"
#include "support.h"

/* --- the model builder */

typedef struct mb {
  arena a;
  Onnx__ModelProto model;
  Onnx__GraphProto graph;
  Onnx__OperatorSetIdProto opset, domain_opset;
  Onnx__OperatorSetIdProto *opsets[2];
} mb;

/* Appends item to a pointer array kept in the arena. */
#define PUSH(m, arr, n, item)                                                                                \
  do {                                                                                                       \
    void **na_ = arena_alloc(&(m)->a, ((n) + 1) * sizeof(void *));                                           \
    if (n) memcpy(na_, (arr), (n) * sizeof(void *));                                                         \
    na_[n] = (item);                                                                                         \
    (arr) = (void *)na_;                                                                                     \
    (n)++;                                                                                                   \
  } while (0)

static inline void mb_init(mb *m, int opset) {
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

static inline void mb_free(mb *m) { arena_free(&m->a); }

/* Adds `domain` (e.g. "com.microsoft") at `version` to the model's opset_import. */
static inline void mb_domain(mb *m, const char *domain, int version) {
  m->domain_opset = (Onnx__OperatorSetIdProto)ONNX__OPERATOR_SET_ID_PROTO__INIT;
  m->domain_opset.domain = arena_strdup(&m->a, domain);
  m->domain_opset.has_version = 1;
  m->domain_opset.version = version;
  m->opsets[1] = &m->domain_opset;
  m->model.n_opset_import = 2;
}

/* Splits "a,,b" into {"a", "", "b"}; "" is no names at all. */
static inline char **split_names(mb *m, const char *list, size_t *n) {
  *n = 0;
  if (!*list) return NULL;
  size_t count = 1;
  for (const char *p = list; *p; p++)
    count += *p == ',';
  char **names = arena_alloc(&m->a, count * sizeof *names);
  for (const char *p = list;; p++) {
    size_t len = strcspn(p, ",");
    names[(*n)++] = arena_strndup(&m->a, p, len);
    p += len;
    if (!*p) break;
  }
  return names;
}

static inline Onnx__NodeProto *mb_node(mb *m, const char *op, const char *name, const char *ins,
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

static inline Onnx__AttributeProto *mb_attr(mb *m, Onnx__NodeProto *n, const char *name,
                                            Onnx__AttributeProto__AttributeType type) {
  Onnx__AttributeProto *a = arena_alloc(&m->a, sizeof *a);
  *a = (Onnx__AttributeProto)ONNX__ATTRIBUTE_PROTO__INIT;
  a->name = arena_strdup(&m->a, name);
  a->has_type = 1;
  a->type = type;
  PUSH(m, n->attribute, n->n_attribute, a);
  return a;
}

/* GRAPH attribute `name` of n: sub's graph (sub outlives m's use of it). */
static inline void attr_graph(mb *m, Onnx__NodeProto *n, const char *name, mb *sub) {
  Onnx__AttributeProto *a = mb_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
  a->g = &sub->graph;
}

static inline void attr_int(mb *m, Onnx__NodeProto *n, const char *name, int64_t v) {
  Onnx__AttributeProto *a = mb_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  a->has_i = 1;
  a->i = v;
}

static inline void attr_float(mb *m, Onnx__NodeProto *n, const char *name, float v) {
  Onnx__AttributeProto *a = mb_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  a->has_f = 1;
  a->f = v;
}

static inline void attr_string(mb *m, Onnx__NodeProto *n, const char *name, const char *v) {
  Onnx__AttributeProto *a = mb_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
  a->has_s = 1;
  a->s.data = (uint8_t *)arena_strdup(&m->a, v);
  a->s.len = strlen(v);
}

static inline void attr_ints(mb *m, Onnx__NodeProto *n, const char *name, int count, const int64_t *v) {
  Onnx__AttributeProto *a = mb_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  a->n_ints = (size_t)count;
  a->ints = arena_memdup(&m->a, v, (size_t)count * sizeof *v);
}

static inline void attr_floats(mb *m, Onnx__NodeProto *n, const char *name, int count, const float *v) {
  Onnx__AttributeProto *a = mb_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
  a->n_floats = (size_t)count;
  a->floats = arena_memdup(&m->a, v, (size_t)count * sizeof *v);
}

static inline Onnx__TensorProto *mb_tensor(mb *m, const char *name, int dt, int rank, const int64_t *dims) {
  Onnx__TensorProto *t = arena_alloc(&m->a, sizeof *t);
  *t = (Onnx__TensorProto)ONNX__TENSOR_PROTO__INIT;
  t->name = name ? arena_strdup(&m->a, name) : NULL;
  t->has_data_type = 1;
  t->data_type = dt;
  t->n_dims = (size_t)rank;
  t->dims = arena_memdup(&m->a, dims, (size_t)rank * sizeof *dims);
  return t;
}

static inline void set_raw(mb *m, Onnx__TensorProto *t, const void *data, size_t bytes) {
  t->has_raw_data = 1;
  t->raw_data.data = arena_memdup(&m->a, data, bytes);
  t->raw_data.len = bytes;
}

static inline Onnx__TensorProto *mb_init_raw(mb *m, const char *name, int dt, int rank, const int64_t *dims,
                                             const void *data, size_t bytes) {
  Onnx__TensorProto *t = mb_tensor(m, name, dt, rank, dims);
  set_raw(m, t, data, bytes);
  PUSH(m, m->graph.initializer, m->graph.n_initializer, t);
  return t;
}

static inline Onnx__ValueInfoProto *value_info(mb *m, const char *name, int dt) {
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
static inline void mb_input(mb *m, const char *name, int dt, int rank, const int64_t *dims,
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

static inline void mb_output(mb *m, const char *name) {
  Onnx__ValueInfoProto *vi = value_info(m, name, 1);
  PUSH(m, m->graph.output, m->graph.n_output, vi);
}

/* g, initialised here, is a graph of one node: op reading `ins` (comma-separated)
 * and writing `out`, the graph's output (an If's branch, a Loop's body). */
static inline void mb_one_node_graph(mb *g, const char *op, const char *ins, const char *out) {
  mb_init(g, 13);
  mb_node(g, op, NULL, ins, out);
  mb_output(g, out);
}

/* If node `name` in m on `cond`, writing `out`, with the two branches
 * (which outlive m's use of them). */
static inline Onnx__NodeProto *mb_if(mb *m, const char *name, const char *cond, const char *out, mb *then_b,
                                     mb *else_b) {
  Onnx__NodeProto *n = mb_node(m, "If", name, cond, out);
  attr_graph(m, n, "then_branch", then_b);
  attr_graph(m, n, "else_branch", else_b);
  return n;
}

static inline uint8_t *mb_pack(mb *m, size_t *len) {
  *len = onnx__model_proto__get_packed_size(&m->model);
  uint8_t *buf = malloc(*len ? *len : 1);
  onnx__model_proto__pack(&m->model, buf);
  return buf;
}

/* atc refuses m (compiled in process) with one line holding both
 * substrings; frees m. */
static inline void mb_expect_refused(mb *m, const char *a, const char *b) {
  size_t len;
  uint8_t *onnx = mb_pack(m, &len);
  atc_options opt = {.model_path = "model.onnx", .soc_version = "Ascend310", .cmdline = "t"};
  opt.model_data = onnx, opt.model_size = len;
  atc_result res;
  diag d;
  diag_init(&d);
  status st = atc_compile(&opt, &res, &d);
  CHECK(st != ST_OK);
  if (st == ST_OK) free(res.om_data);
  CHECKF(strstr(d.msg, a) && strstr(d.msg, b) && !strchr(d.msg, '\n'), "  message: %s", d.msg);
  free(onnx);
  mb_free(m);
}

static inline status mb_load(mb *m, const char *dir, const onnx_options *opt, ir_graph **g, diag *d) {
  size_t len;
  uint8_t *buf = mb_pack(m, &len);
  diag_init(d);
  status s = onnx_load_memory(buf, len, dir, "model.onnx", opt, g, d);
  free(buf);
  return s;
}

/* Loads m expecting status `want` and every NULL-terminated substring. */
static inline void expect_fail_(const char *file, int line, mb *m, const char *dir, const onnx_options *opt,
                                status want, ...) {
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
#define EXPECT_FAIL(m, dir, opt, want, ...)                                                                  \
  expect_fail_(__FILE__, __LINE__, m, dir, opt, want, __VA_ARGS__, (const char *)NULL)

static inline ir_graph *expect_ok_(const char *file, int line, mb *m, const char *dir,
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

static inline ir_node *find_node(ir_graph *g, ir_op op) {
  for (int i = 0; i < g->nnodes; i++)
    if (g->nodes[i]->op == op) return g->nodes[i];
  return NULL;
}

static inline int attr_ints_are(const ir_node *n, const char *name, int count, const int64_t *want) {
  int64_t got[16];
  int k = ir_attr_ints(n, name, got, 16);
  return k == count && memcmp(got, want, (size_t)count * sizeof *want) == 0;
}

/* --- the tiny Conv + Relu model */

static __attribute__((unused)) const int64_t in_dims[4] = {1, 3, 8, 8}, w_dims[4] = {4, 3, 3, 3},
                                             b_dims[1] = {4};
static __attribute__((unused)) float w_data[108], b_data[4] = {0.5f, -1.0f, 2.0f, 0.25f};

static inline void conv_relu_model(mb *m) {
  for (int i = 0; i < 108; i++)
    w_data[i] = (float)i * 0.01f - 0.5f;
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

/* --- running an imported graph */

/* Infers shapes and evaluates g on inputs; outputs in `a`. 0 on success
 * (the message is noted otherwise). */
static inline int mb_eval(ir_graph *g, const void *const *inputs, void **outputs, arena *a) {
  pass_ctx ctx = {0};
  diag d;
  diag_init(&d);
  status s = pass_shape_infer(g, &ctx, &d);
  if (!s) s = ir_eval_graph(g, inputs, outputs, a, &d);
  if (s) test_note("  %s", d.msg);
  return s != ST_OK;
}

/* How many nodes of g are `op`. */
static inline int mb_count_ops(const ir_graph *g, ir_op op) {
  int n = 0;
  for (int i = 0; i < g->nnodes; i++)
    n += g->nodes[i]->op == op;
  return n;
}

/* Compiles m in memory with atc_compile and frees m: opt's fields are the
 * caller's but model_data and model_size, set here. Returns the package
 * (the caller's, to free()) and its size, or NULL after noting atc's
 * message. */
static inline void *mb_compile(mb *m, atc_options *opt, size_t *size) {
  size_t len;
  uint8_t *onnx = mb_pack(m, &len);
  opt->model_data = onnx, opt->model_size = len;
  atc_result res;
  diag d;
  diag_init(&d);
  status st = atc_compile(opt, &res, &d);
  if (st) test_note("atc_compile: %s", d.msg);
  free(onnx);
  mb_free(m);
  *size = st ? 0 : res.om_bytes;
  return st ? NULL : res.om_data;
}

/* mb_compile for the Ascend310 in precision p, the model named `name` in
 * atc's messages. */
static inline void *mb_compile_in(mb *m, const char *name, om_precision p, size_t *size) {
  atc_options opt = {.model_path = name, .soc_version = "Ascend310", .precision = p, .cmdline = "t"};
  return mb_compile(m, &opt, size);
}

/* A model compiled in process, loaded by libomrt and given a context. All
 * three are the mb_run's until mb_run_close. */
typedef struct mb_run {
  void *om; /* the package (malloc'd by atc_compile) */
  size_t size;
  omrt_model *model;
  omrt_context *ctx; /* NULL when any step failed (already a CHECK failure) */
} mb_run;

/* Compiles m (named `name` in messages; frees m) in precision p, loads the
 * package from memory and opens a context. Returns r->ctx != NULL. */
static inline int mb_run_open(mb *m, const char *name, om_precision p, mb_run *r) {
  memset(r, 0, sizeof *r);
  r->om = mb_compile_in(m, name, p, &r->size);
  CHECKF(r->om != NULL, "  %s does not compile", name);
  if (r->om) CHECK_EQ_INT(omrt_model_load_memory(r->om, r->size, NULL, &r->model), OMRT_OK);
  if (r->model) CHECK_EQ_INT(omrt_context_new(r->model, &r->ctx), OMRT_OK);
  return r->ctx != NULL;
}

/* How many tasks of `kind` (om_task_kind) the loaded package m holds. */
static inline int mb_count_tasks(const omrt_model *m, int kind) {
  int n = 0;
  for (uint32_t t = 0; t < m->def->ntasks; t++)
    n += m->tasks[t].kind == (uint32_t)kind;
  return n;
}

static inline void mb_run_close(mb_run *r) {
  omrt_context_free(r->ctx);
  omrt_model_free(r->model);
  free(r->om);
  memset(r, 0, sizeof *r);
}

#endif
