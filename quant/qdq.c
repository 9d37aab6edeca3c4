/* qdq.c - the QDQ rewrite of a float ONNX model (quant/qdq.h): the plan
 * (which tensors, weights and biases), then the new model written as
 * protobuf-c structs and packed.
 *
 * Design. The model is never modified: the written ModelProto is a shallow
 * copy whose graph has new node, initializer and input arrays (in the
 * caller's arena) pointing at the model's own messages where they are
 * unchanged and at new ones (in the arena) where they are: a node reading a
 * quantized tensor is copied with new input names; the Q/DQ nodes and the
 * quantized initializers are new. So freeing stays simple: the model is
 * freed by protobuf-c, everything new with the arena. Nodes are emitted in
 * the model's order, each tensor's QuantizeLinear/DequantizeLinear right
 * after its producer (graph inputs' and weights' first), which keeps the
 * graph topologically sorted. Names: t_quantized, t_dequantized, t_scale,
 * t_zero_point for tensor or initializer t (a weight's int8 initializer is
 * t_quantized); float initializers nothing reads any more are dropped.
 */
#include "quant/qdq.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/quant.h"

enum { T_FLOAT = 1, T_UINT8 = 2, T_INT8 = 3, T_INT32 = 6 }; /* ONNX TensorProto.DataType */

/* The quantized ops: input index of the weight and of the bias (-1: none);
 * `all`: quantized only with every_op (the ops ONNX Runtime's quantize_static
 * puts QuantizeLinear / DequantizeLinear pairs around by default). */
typedef struct qop {
  const char *op;
  int weight, bias, all;
} qop;

static const qop qops[] = {
    {"Conv", 1, 2, 0},        {"Gemm", 1, 2, 0},          {"MatMul", 1, -1, 0},
    {"Add", -1, -1, 0},       {"Mul", -1, -1, 1},         {"Concat", -1, -1, 1},
    {"MaxPool", -1, -1, 1},   {"AveragePool", -1, -1, 1}, {"GlobalAveragePool", -1, -1, 1},
    {"Resize", -1, -1, 1},    {"Sigmoid", -1, -1, 1},     {"HardSigmoid", -1, -1, 1},
    {"Softmax", -1, -1, 1},   {"Transpose", -1, -1, 1},   {"Reshape", -1, -1, 1},
    {"Flatten", -1, -1, 1},   {"Squeeze", -1, -1, 1},     {"Unsqueeze", -1, -1, 1},
    {"Split", -1, -1, 1},     {"Slice", -1, -1, 1},       {"Pad", -1, -1, 1},
    {"LeakyRelu", -1, -1, 1}, {"Where", -1, -1, 1},       {"Gather", -1, -1, 1}};

/* Ops whose inputs or attributes changed between opset `since` - 1 and 13:
 * a model older than `since` holding one cannot be raised to 13 as it is. */
static const struct {
  const char *op;
  int since;
} changed[] = {{"Slice", 10},     {"TopK", 10},   {"Upsample", 10}, {"Clip", 11},
               {"Pad", 11},       {"Resize", 11}, {"Dropout", 12},  {"Squeeze", 13},
               {"Unsqueeze", 13}, {"Split", 13},  {"ReduceSum", 13}};

static const qop *find_qop(const char *op_type, int every_op) {
  for (size_t i = 0; op_type && i < sizeof qops / sizeof *qops; i++)
    if (!strcmp(qops[i].op, op_type)) return !qops[i].all || every_op ? &qops[i] : NULL;
  return NULL;
}

static const Onnx__TensorProto *find_init(const Onnx__GraphProto *g, const char *name) {
  for (size_t i = 0; name && *name && i < g->n_initializer; i++)
    if (g->initializer[i]->name && !strcmp(g->initializer[i]->name, name)) return g->initializer[i];
  return NULL;
}

static int64_t attr_int(const Onnx__NodeProto *n, const char *name, int64_t def) {
  for (size_t i = 0; i < n->n_attribute; i++)
    if (n->attribute[i]->name && !strcmp(n->attribute[i]->name, name)) return n->attribute[i]->i;
  return def;
}

static const char *node_name(const Onnx__NodeProto *n) { return n->name ? n->name : ""; }

static int find_name(const char *const *names, int count, const char *name) {
  for (int i = 0; name && i < count; i++)
    if (!strcmp(names[i], name)) return i;
  return -1;
}

/* A float32 tensor computed by the graph (not a weight, not a constant). */
static int float_activation(const Onnx__GraphProto *gr, const ir_graph *g, const char *name) {
  if (!name || !*name || find_init(gr, name)) return 0;
  const ir_value *v = ir_value_find(g, name);
  return v && v->dtype == DT_FLOAT32 && !v->data;
}

static int float_init(const Onnx__TensorProto *t, int min_rank) {
  return t && t->data_type == T_FLOAT && (int)t->n_dims >= min_rank;
}

/* Whether a node reads tensor `name` (a graph output nothing else reads
 * needs no quantization: its reader is the user, in float). */
static int read_by_node(const Onnx__GraphProto *g, const char *name) {
  for (size_t i = 0; i < g->n_node; i++)
    for (size_t j = 0; j < g->node[i]->n_input; j++)
      if (!strcmp(g->node[i]->input[j], name)) return 1;
  return 0;
}

/* Whether tensor `name` is a graph output. A weighted node's output that is
 * one is quantized as ONNX Runtime's quantize_static does it: the producer
 * writes NAME_QuantizeInput and the DequantizeLinear writes NAME, so the
 * model's outputs keep their names and the classifier runs as int8. */
static int graph_output(const Onnx__GraphProto *g, const char *name) {
  for (size_t i = 0; i < g->n_output; i++)
    if (!strcmp(g->output[i]->name, name)) return 1;
  return 0;
}

/* The node that alone reads tensor `name`, else NULL (a graph output is read by the user too). */
static const Onnx__NodeProto *sole_reader(const Onnx__GraphProto *g, const char *name) {
  const Onnx__NodeProto *r = NULL;
  if (graph_output(g, name)) return NULL;
  for (size_t i = 0; i < g->n_node; i++)
    for (size_t j = 0; j < g->node[i]->n_input; j++)
      if (!strcmp(g->node[i]->input[j], name)) {
        if (r && r != g->node[i]) return NULL;
        r = g->node[i];
      }
  return r;
}

/* The output of the Relu or Clip that alone reads tensor `name` (a graph
 * output is read by the user too), else NULL: a Conv's or Gemm's output
 * is quantized after its activation, as ONNX Runtime's quantizer does, so
 * that atc folds the activation into the int8 convolution's clamp. */
static const char *sole_activation(const Onnx__GraphProto *g, const char *name) {
  const Onnx__NodeProto *r = sole_reader(g, name);
  return r && (!strcmp(r->op_type, "Relu") || !strcmp(r->op_type, "Clip")) && r->n_output == 1 &&
                 !strcmp(r->input[0], name)
             ? r->output[0]
             : NULL;
}

/* Whether Add node n adds a float bias constant [N] to the output of a MatMul
 * with a constant float weight [K, N] that only n reads (a Linear layer as
 * exporters write it for a rank-3 input; PyTorch puts the bias first): the
 * MatMul's output is quantized after n (after the Relu or Clip that alone
 * reads n's output, as after a Conv's), so that atc folds the bias and the
 * activation into the int8 MatMul, and n quantizes nothing itself. */
static int matmul_bias_add(const Onnx__GraphProto *g, const Onnx__NodeProto *n, const char *const *skip,
                           int nskip) {
  if (strcmp(n->op_type, "Add") || n->n_input != 2 || n->n_output != 1) return 0;
  for (int k = 0; k < 2; k++) {
    const Onnx__TensorProto *b = find_init(g, n->input[k]);
    if (!float_init(b, 1) || b->n_dims != 1) continue;
    for (size_t i = 0; i < g->n_node; i++) {
      const Onnx__NodeProto *mm = g->node[i];
      if (strcmp(mm->op_type, "MatMul") || mm->n_input != 2 || mm->n_output != 1 ||
          strcmp(mm->output[0], n->input[1 - k]) || find_name(skip, nskip, node_name(mm)) >= 0)
        continue;
      const Onnx__TensorProto *w = find_init(g, mm->input[1]);
      return float_init(w, 2) && w->n_dims == 2 && w->dims[1] == b->dims[0] &&
             sole_reader(g, mm->output[0]) == n;
    }
  }
  return 0;
}

static int add_tensor(oq_plan *p, const char *name) {
  int i = find_name(p->tensors, p->ntensors, name);
  if (i >= 0) return i;
  p->tensors[p->ntensors] = name;
  return p->ntensors++;
}

status oq_plan_make(const Onnx__ModelProto *m, const ir_graph *g, const char *const *skip, int nskip,
                    int every_op, arena *a, oq_plan *out, diag *d) {
  memset(out, 0, sizeof *out);
  const Onnx__GraphProto *gr = m->graph;
  if (!gr) return diag_set(d, ST_ERR_INVALID, "the model has no graph");
  size_t names = 1;
  for (size_t i = 0; i < gr->n_node; i++)
    names += gr->node[i]->n_input + gr->node[i]->n_output;
  out->tensors = arena_array(a, names, sizeof *out->tensors);
  out->nodes = arena_array(a, gr->n_node + 1, sizeof *out->nodes);
  if (!out->tensors || !out->nodes)
    return diag_set(d, ST_ERR_NOMEM, "out of memory planning the quantization");
  for (size_t i = 0; i < gr->n_node; i++) {
    const Onnx__NodeProto *n = gr->node[i];
    const qop *q = find_qop(n->op_type, every_op);
    if (!q || find_name(skip, nskip, node_name(n)) >= 0 || matmul_bias_add(gr, n, skip, nskip)) continue;
    oq_node on = {(int)i, -1, -1, -1, -1};
    const Onnx__TensorProto *w =
        q->weight >= 0 && (int)n->n_input > q->weight ? find_init(gr, n->input[q->weight]) : NULL;
    if (float_init(w, 2)) {
      on.w_input = q->weight;
      on.w_axis = !strcmp(n->op_type, "Conv")   ? 0
                  : !strcmp(n->op_type, "Gemm") ? (attr_int(n, "transB", 0) ? 0 : 1)
                                                : (int)w->n_dims - 1;
    }
    for (size_t j = 0; j < n->n_input; j++)
      if ((int)j != on.w_input && float_activation(gr, g, n->input[j])) {
        int t = add_tensor(out, n->input[j]);
        if (j == 0) on.x_tensor = t;
      }
    const Onnx__TensorProto *b = on.w_input >= 0 && q->bias >= 0 && (int)n->n_input > q->bias
                                     ? find_init(gr, n->input[q->bias])
                                     : NULL;
    if (float_init(b, 1) && b->n_dims == 1 && b->dims[0] == w->dims[on.w_axis] && on.x_tensor >= 0)
      on.b_input = q->bias;
    const char *y = n->n_output > 0 ? n->output[0] : NULL,
               *act = y && q->weight >= 0 ? sole_activation(gr, y) : NULL;
    const Onnx__NodeProto *bias_add = y && on.w_input >= 0 ? sole_reader(gr, y) : NULL;
    if (bias_add && matmul_bias_add(gr, bias_add, skip, nskip)) {
      const char *after = sole_activation(gr, bias_add->output[0]); /* a Linear's ReLU */
      act = after ? after : bias_add->output[0];
    }
    if (act && float_activation(gr, g, act)) y = act;
    if (y && float_activation(gr, g, y) && (read_by_node(gr, y) || (on.w_input >= 0 && graph_output(gr, y))))
      add_tensor(out, y);
    for (size_t j = 1; q->weight < 0 && j < n->n_output; j++) /* a Split's other outputs */
      if (float_activation(gr, g, n->output[j]) && read_by_node(gr, n->output[j]))
        add_tensor(out, n->output[j]);
    if (on.w_input >= 0) out->nodes[out->nnodes++] = on;
  }
  return ST_OK;
}

void oq_act_params(double lo, double hi, float *scale_out, uint8_t *zero_point_out) {
  lo = lo < 0 ? lo : 0, hi = hi > 0 ? hi : 0;
  float s = (float)((hi - lo) / 255);
  if (!(s > 0) || !isfinite(s) || !isnormal(s)) s = 1;
  double z = nearbyint(-lo / s);
  *scale_out = s;
  *zero_point_out = (uint8_t)(z < 0 ? 0 : z > 255 ? 255 : z);
}

/* --- the writer */

typedef struct wr {
  arena *a;
  diag *d;
  status st;
  Onnx__NodeProto **nodes;
  size_t nnodes, node_cap;
  Onnx__TensorProto **inits; /* the new initializers */
  size_t ninits, init_cap;
} wr;

static void *fail_nomem(wr *w) {
  if (!w->st) w->st = diag_set(w->d, ST_ERR_NOMEM, "out of memory writing the quantized model");
  return NULL;
}

static char *cat(wr *w, const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  char *r = arena_alloc(w->a, n + k + 1);
  if (!r) return fail_nomem(w);
  memcpy(r, s, n);
  memcpy(r + n, suffix, k + 1);
  return r;
}

static Onnx__TensorProto *tensor(wr *w, const char *name, int dt, int rank, const int64_t *dims,
                                 const void *data, size_t bytes) {
  if (w->st || !name) return NULL;
  Onnx__TensorProto *t = arena_alloc(w->a, sizeof *t);
  int64_t *dd = arena_array(w->a, (size_t)rank + 1, sizeof *dd);
  uint8_t *raw = arena_alloc(w->a, bytes + 1);
  if (!t || !dd || !raw || w->ninits == w->init_cap) return fail_nomem(w);
  *t = (Onnx__TensorProto)ONNX__TENSOR_PROTO__INIT;
  t->name = (char *)name;
  t->has_data_type = 1;
  t->data_type = dt;
  memcpy(dd, dims, (size_t)rank * sizeof *dd);
  t->n_dims = (size_t)rank;
  t->dims = dd;
  memcpy(raw, data, bytes);
  t->has_raw_data = 1;
  t->raw_data.data = raw;
  t->raw_data.len = bytes;
  w->inits[w->ninits++] = t;
  return t;
}

/* A QuantizeLinear or DequantizeLinear node x, scale, zp -> y; axis >= 0 sets the attribute. */
static void qdq_node(wr *w, const char *op, const char *name, const char *x, const char *scale,
                     const char *zp, const char *y, int axis) {
  if (w->st || !name || !x || !scale || !zp || !y) return;
  Onnx__NodeProto *n = arena_alloc(w->a, sizeof *n);
  char **in = arena_array(w->a, 3, sizeof *in), **out = arena_array(w->a, 1, sizeof *out);
  if (!n || !in || !out || w->nnodes == w->node_cap) {
    fail_nomem(w);
    return;
  }
  *n = (Onnx__NodeProto)ONNX__NODE_PROTO__INIT;
  n->op_type = (char *)op;
  n->name = (char *)name;
  in[0] = (char *)x, in[1] = (char *)scale, in[2] = (char *)zp, out[0] = (char *)y;
  n->input = in, n->n_input = 3, n->output = out, n->n_output = 1;
  if (axis >= 0) {
    Onnx__AttributeProto *at = arena_alloc(w->a, sizeof *at);
    Onnx__AttributeProto **ats = arena_array(w->a, 1, sizeof *ats);
    if (!at || !ats) {
      fail_nomem(w);
      return;
    }
    *at = (Onnx__AttributeProto)ONNX__ATTRIBUTE_PROTO__INIT;
    at->name = "axis";
    at->has_type = 1;
    at->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    at->has_i = 1;
    at->i = axis;
    ats[0] = at;
    n->attribute = ats, n->n_attribute = 1;
  }
  w->nodes[w->nnodes++] = n;
}

/* Tensor t's QuantizeLinear -> DequantizeLinear pair (uint8, per tensor):
 * t -> t_dequantized, or for a graph output t_QuantizeInput -> t. */
static void act_pair(wr *w, const char *t, float scale, uint8_t zp, int is_output) {
  const char *s = cat(w, t, "_scale"), *z = cat(w, t, "_zero_point"), *q = cat(w, t, "_quantized");
  tensor(w, s, T_FLOAT, 0, NULL, &scale, sizeof scale);
  tensor(w, z, T_UINT8, 0, NULL, &zp, 1);
  qdq_node(w, "QuantizeLinear", cat(w, t, "_QuantizeLinear"), is_output ? cat(w, t, "_QuantizeInput") : t, s,
           z, q, -1);
  qdq_node(w, "DequantizeLinear", cat(w, t, "_DequantizeLinear"), q, s, z,
           is_output ? t : cat(w, t, "_dequantized"), -1);
}

/* The float32 elements of initializer t (raw_data or float_data), copied
 * into the arena; NULL (with the failure set) when it holds none. */
static float *init_floats(wr *w, const Onnx__TensorProto *t, int64_t *count_out) {
  int64_t n = 1;
  for (size_t i = 0; i < t->n_dims; i++)
    n *= t->dims[i];
  float *f = w->st ? NULL : arena_array(w->a, (size_t)(n > 0 ? n : 1), sizeof *f);
  if (!f) return w->st ? NULL : fail_nomem(w);
  if (t->has_raw_data && t->raw_data.len == (size_t)n * 4)
    memcpy(f, t->raw_data.data, (size_t)n * 4);
  else if (t->n_float_data == (size_t)n)
    memcpy(f, t->float_data, (size_t)n * 4);
  else {
    w->st =
        diag_set(w->d, ST_ERR_UNSUPPORTED,
                 "initializer '%s' holds no float32 data of its %lld elements in the model (external data "
                 "is not supported)",
                 t->name, (long long)n);
    return NULL;
  }
  *count_out = n;
  return f;
}

/* The per-channel int8 weight t (channels along axis): its int8 initializer,
 * scales, zero points and DequantizeLinear; the scales (in the arena) out. */
static const float *weight(wr *w, const Onnx__TensorProto *t, int axis, int64_t *channels_out) {
  int64_t n = 0, m = t->dims[axis], stride = 1;
  for (size_t i = (size_t)axis + 1; i < t->n_dims; i++)
    stride *= t->dims[i];
  const float *f = init_floats(w, t, &n);
  float *s = w->st ? NULL : arena_array(w->a, (size_t)m, sizeof *s);
  int8_t *q = w->st ? NULL : arena_alloc(w->a, (size_t)n + 1),
         *zp = w->st ? NULL : arena_alloc(w->a, (size_t)m);
  if (!f || !s || !q || !zp) return w->st ? NULL : fail_nomem(w);
  for (int64_t i = 0; i < n; i++) {
    int64_t c = i / stride % m;
    float v = fabsf(f[i]);
    s[c] = v > s[c] ? v : s[c];
  }
  for (int64_t c = 0; c < m; c++)
    s[c] = s[c] > 0 && isnormal(s[c] / 127) ? s[c] / 127 : 1;
  for (int64_t i = 0; i < n; i++)
    q[i] = (int8_t)q_quantize(f[i], s[i / stride % m], 0, -127, 127);
  const char *qn = cat(w, t->name, "_quantized"), *sn = cat(w, t->name, "_scale");
  const char *zn = cat(w, t->name, "_zero_point");
  tensor(w, qn, T_INT8, (int)t->n_dims, t->dims, q, (size_t)n);
  tensor(w, sn, T_FLOAT, 1, &m, s, (size_t)m * sizeof *s);
  tensor(w, zn, T_INT8, 1, &m, zp, (size_t)m);
  qdq_node(w, "DequantizeLinear", cat(w, t->name, "_DequantizeLinear"), qn, sn, zn,
           cat(w, t->name, "_dequantized"), axis);
  *channels_out = m;
  return s;
}

/* The int32 bias t with scales x_scale * w_scale[c]; 0 when a scale is not
 * a normal float (then the bias stays float). */
static int bias(wr *w, const Onnx__TensorProto *t, float x_scale, const float *w_scale, int64_t m) {
  int64_t n = 0;
  const float *f = init_floats(w, t, &n);
  float *s = w->st ? NULL : arena_array(w->a, (size_t)m, sizeof *s);
  int32_t *q = w->st ? NULL : arena_array(w->a, (size_t)m, sizeof *q),
          *zp = w->st ? NULL : arena_array(w->a, (size_t)m, sizeof *zp);
  if (!f || !s || !q || !zp || n != m) return 0;
  for (int64_t c = 0; c < m; c++) {
    s[c] = x_scale * w_scale[c];
    if (!isnormal(s[c])) return 0;
    double v = nearbyint((double)f[c] / s[c]);
    q[c] = v < -2147483647.0 ? -2147483647 : v > 2147483647.0 ? 2147483647 : (int32_t)v;
  }
  const char *qn = cat(w, t->name, "_quantized"), *sn = cat(w, t->name, "_scale");
  const char *zn = cat(w, t->name, "_zero_point");
  tensor(w, qn, T_INT32, 1, &m, q, (size_t)m * sizeof *q);
  tensor(w, sn, T_FLOAT, 1, &m, s, (size_t)m * sizeof *s);
  tensor(w, zn, T_INT32, 1, &m, zp, (size_t)m * sizeof *zp);
  qdq_node(w, "DequantizeLinear", cat(w, t->name, "_DequantizeLinear"), qn, sn, zn,
           cat(w, t->name, "_dequantized"), 0);
  return 1;
}

static int produced(const Onnx__GraphProto *g, const char *name) {
  for (size_t i = 0; i < g->n_node; i++)
    for (size_t j = 0; j < g->node[i]->n_output; j++)
      if (!strcmp(g->node[i]->output[j], name)) return 1;
  return 0;
}

/* The default domain's opset: raised to 13 (in a copied opset list) when
 * below, unless a node's op changed meaning by then. */
static status raise_opset(wr *w, Onnx__ModelProto *m2, const Onnx__ModelProto *m) {
  for (size_t i = 0; i < m->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *o = m->opset_import[i];
    if ((o->domain && *o->domain) || o->version >= 13) continue;
    for (size_t k = 0; k < m->graph->n_node; k++)
      for (size_t c = 0; c < sizeof changed / sizeof *changed; c++)
        if (!strcmp(m->graph->node[k]->op_type, changed[c].op) && o->version < changed[c].since)
          return diag_set(
              w->d, ST_ERR_UNSUPPORTED,
              "per-channel weights need opset 13, and node '%s' (%s) changed by opset %d from the "
              "model's %lld: export the model at opset 13",
              node_name(m->graph->node[k]), changed[c].op, changed[c].since, (long long)o->version);
    Onnx__OperatorSetIdProto **list = arena_array(w->a, m->n_opset_import, sizeof *list);
    Onnx__OperatorSetIdProto *raised = arena_alloc(w->a, sizeof *raised);
    if (!list || !raised) return diag_set(w->d, ST_ERR_NOMEM, "out of memory writing the quantized model");
    memcpy(list, m->opset_import, m->n_opset_import * sizeof *list);
    *raised = *o;
    raised->version = 13;
    list[i] = raised;
    m2->opset_import = list;
    if (m2->ir_version < 7) m2->ir_version = 7, m2->has_ir_version = 1;
  }
  return ST_OK;
}

status oq_write(const Onnx__ModelProto *m, const oq_plan *p, const double *lo, const double *hi, arena *a,
                uint8_t **bytes_out, size_t *size_out, diag *d) {
  const Onnx__GraphProto *gr = m->graph;
  wr w = {a, d, ST_OK, NULL, 0, 0, NULL, 0, 0};
  w.node_cap = gr->n_node + 2 * (size_t)p->ntensors + 2 * (size_t)p->nnodes;
  w.init_cap = 2 * (size_t)p->ntensors + 6 * (size_t)p->nnodes;
  w.nodes = arena_array(a, w.node_cap + 1, sizeof *w.nodes);
  w.inits = arena_array(a, w.init_cap + 1, sizeof *w.inits);
  float *scale = arena_array(a, (size_t)p->ntensors + 1, sizeof *scale);
  uint8_t *zp = arena_alloc(a, (size_t)p->ntensors + 1);
  /* per node: its new input names (NULL: unchanged) */
  const char ***rename = arena_array(a, gr->n_node + 1, sizeof *rename);
  const char **done = arena_array(a, 2 * (size_t)p->nnodes + 1, sizeof *done); /* initializers quantized */
  int ndone = 0;
  if (!w.nodes || !w.inits || !scale || !zp || !rename || !done) return fail_nomem(&w), w.st;
  for (int i = 0; i < p->ntensors; i++)
    oq_act_params(lo[i], hi[i], &scale[i], &zp[i]);

  /* graph inputs' pairs, then weights and biases */
  for (int i = 0; i < p->ntensors; i++)
    if (!produced(gr, p->tensors[i])) act_pair(&w, p->tensors[i], scale[i], zp[i], 0);
  for (int k = 0; k < p->nnodes && !w.st; k++) {
    const oq_node *on = &p->nodes[k];
    const Onnx__NodeProto *n = gr->node[on->index];
    const char **names = arena_array(a, n->n_input, sizeof *names);
    if (!names) return fail_nomem(&w), w.st;
    rename[on->index] = names;
    const Onnx__TensorProto *wt = find_init(gr, n->input[on->w_input]);
    int64_t mch = 0;
    const float *ws = NULL;
    if (find_name(done, ndone, wt->name) < 0) {
      ws = weight(&w, wt, on->w_axis, &mch);
      done[ndone++] = wt->name;
    }
    names[on->w_input] = cat(&w, wt->name, "_dequantized");
    if (on->b_input < 0 || !ws) continue;
    const Onnx__TensorProto *bt = find_init(gr, n->input[on->b_input]);
    if (find_name(done, ndone, bt->name) < 0 && bias(&w, bt, scale[on->x_tensor], ws, mch)) {
      done[ndone++] = bt->name;
      names[on->b_input] = cat(&w, bt->name, "_dequantized");
    }
  }
  /* the nodes, readers of quantized tensors reading the DequantizeLinear */
  for (size_t i = 0; i < gr->n_node && !w.st; i++) {
    const Onnx__NodeProto *n = gr->node[i];
    Onnx__NodeProto *copy = NULL;
    for (size_t j = 0; j < n->n_input; j++) {
      const char *nm = rename[i] && rename[i][j] ? rename[i][j] : NULL;
      if (!nm && find_name(p->tensors, p->ntensors, n->input[j]) >= 0 && !graph_output(gr, n->input[j]))
        nm = cat(&w, n->input[j], "_dequantized");
      if (!nm) continue;
      if (!copy) {
        copy = arena_alloc(a, sizeof *copy);
        char **in = arena_array(a, n->n_input, sizeof *in);
        if (!copy || !in) return fail_nomem(&w), w.st;
        *copy = *n;
        memcpy(in, n->input, n->n_input * sizeof *in);
        copy->input = in;
      }
      copy->input[j] = (char *)nm;
    }
    for (size_t j = 0; j < n->n_output;
         j++) /* a quantized graph output: the producer writes t_QuantizeInput */
      if (find_name(p->tensors, p->ntensors, n->output[j]) >= 0 && graph_output(gr, n->output[j])) {
        if (!copy) {
          copy = arena_alloc(a, sizeof *copy);
          if (!copy) return fail_nomem(&w), w.st;
          *copy = *n;
        }
        if (copy->output == n->output) {
          char **out = arena_array(a, n->n_output, sizeof *out);
          if (!out) return fail_nomem(&w), w.st;
          memcpy(out, n->output, n->n_output * sizeof *out);
          copy->output = out;
        }
        copy->output[j] = cat(&w, n->output[j], "_QuantizeInput");
      }
    if (w.nnodes == w.node_cap) return fail_nomem(&w), w.st;
    w.nodes[w.nnodes++] = copy ? copy : (Onnx__NodeProto *)n;
    for (size_t j = 0; j < n->n_output; j++) {
      int t = find_name(p->tensors, p->ntensors, n->output[j]);
      if (t >= 0) act_pair(&w, p->tensors[t], scale[t], zp[t], graph_output(gr, n->output[j]));
    }
  }
  if (w.st) return w.st;

  /* initializers: the model's that something still reads, then the new ones */
  Onnx__TensorProto **inits = arena_array(a, gr->n_initializer + w.ninits + 1, sizeof *inits);
  Onnx__ValueInfoProto **inputs = arena_array(a, gr->n_input + 1, sizeof *inputs);
  if (!inits || !inputs) return fail_nomem(&w), w.st;
  size_t ninit = 0, ninput = 0;
  for (size_t i = 0; i < gr->n_initializer; i++) {
    const char *name = gr->initializer[i]->name;
    int read = 0;
    for (size_t k = 0; k < w.nnodes && !read; k++)
      for (size_t j = 0; j < w.nodes[k]->n_input && !read; j++)
        read = !strcmp(w.nodes[k]->input[j], name);
    for (size_t k = 0; k < gr->n_output && !read; k++)
      read = !strcmp(gr->output[k]->name, name);
    if (read) inits[ninit++] = gr->initializer[i];
  }
  /* graph inputs that name a dropped initializer (models before IR 4 list them) go too */
  for (size_t k = 0; k < gr->n_input; k++) {
    const Onnx__TensorProto *t = find_init(gr, gr->input[k]->name);
    int kept = !t;
    for (size_t i = 0; t && i < ninit && !kept; i++)
      kept = inits[i] == t;
    if (kept) inputs[ninput++] = gr->input[k];
  }
  memcpy(inits + ninit, w.inits, w.ninits * sizeof *inits);
  ninit += w.ninits;

  Onnx__GraphProto *g2 = arena_alloc(a, sizeof *g2);
  Onnx__ModelProto *m2 = arena_alloc(a, sizeof *m2);
  if (!g2 || !m2) return fail_nomem(&w), w.st;
  *g2 = *gr;
  g2->node = w.nodes, g2->n_node = w.nnodes;
  g2->initializer = inits, g2->n_initializer = ninit;
  g2->input = inputs, g2->n_input = ninput;
  *m2 = *m;
  m2->graph = g2;
  status st = p->nnodes ? raise_opset(&w, m2, m) : ST_OK;
  if (st) return st;
  size_t size = onnx__model_proto__get_packed_size(m2);
  uint8_t *bytes = arena_alloc(a, size + 1);
  if (!bytes) return fail_nomem(&w), w.st;
  if (onnx__model_proto__pack(m2, bytes) != size)
    return diag_set(d, ST_ERR_INVALID, "packing the quantized model gave an unexpected size");
  *bytes_out = bytes, *size_out = size;
  return ST_OK;
}
