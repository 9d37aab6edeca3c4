/* fuzz_compile.c - target `compile`: structure-aware ONNX models compiled end
 * to end (fuzz_targets.h).
 *
 * Random bytes almost never make a ModelProto that gets past the frontend, so
 * this target does not parse its input as ONNX. The input is a recipe:
 *   byte 0      which built-in seed model (four small valid CNN/MLP graphs
 *               built below from a tiny description, fz_model);
 *   byte 1      compile options: precision mode, SoC, --input_shape and
 *               --out_nodes from small tables of good and bad values;
 *   bytes 2...  up to MAX_MUTATIONS mutation records, each an opcode byte and
 *               its argument bytes (missing bytes read as 0): set a dim or a
 *               rank or a dtype of an input or initializer, set, retype,
 *               rename, drop or add an attribute, rewire a node input or a
 *               graph output to another name (or a dangling one), change
 *               an op type, the opset or the IR version, drop, duplicate or
 *               swap nodes, change an initializer's values or its data length.
 * The mutated description is serialized with protobuf-c (so the bytes are
 * always well-formed ONNX: the raw-bytes target `onnx` covers the wire
 * format) and compiled with atc_compile from memory, output kept in memory.
 * A package that compiles is then loaded by libomrt: the compiler must never
 * emit a package its own runtime refuses (a refusal there aborts).
 * Each byte is read in one defined order (one take() per statement where the
 * order matters; C leaves the order of an assignment's sides and of call
 * arguments to the compiler, and gcc and clang differ), so a recipe means the
 * same model in the clang libFuzzer build and the gcc replay build.
 * Every number comes from a table of boundary values (0, 1, 2^31, 2^63-1,
 * negatives, symbolic dims) so overflow paths are reached in a few steps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_targets.h"

#include "common/om_format.h"
#include "common/status.h"
#include "common/types.h"
#include "driver/compile.h"
#include "omrt.h"
#include "onnx.pb-c.h"

enum {
  NAME = 24,
  MAX_TENSORS = 12,
  MAX_NODES = 14,
  MAX_ATTRS = 6,
  MAX_IO = 6,
  MAX_INTS = 8,
  MAX_MUTATIONS = 24,
  MAX_RAW_BYTES = 1 << 20, /* larger initializers get a short (wrong) raw_data */
};

/* ONNX AttributeProto.AttributeType numbers used here. */
enum { A_FLOAT = 1, A_INT = 2, A_STRING = 3, A_TENSOR = 4, A_FLOATS = 6, A_INTS = 7 };

typedef struct fz_attr {
  char name[NAME];
  int type;
  int64_t i;
  float f;
  char s[NAME];
  int nints;
  int64_t ints[MAX_INTS];
} fz_attr;

typedef struct fz_node {
  char op[24];
  char name[NAME];
  int nin, nout;
  char in[MAX_IO][NAME];
  char out[MAX_IO][NAME];
  int nattr;
  fz_attr attr[MAX_ATTRS];
} fz_node;

/* A graph input or an initializer. dims[k] < 0 in an input: -2 symbolic
 * ("N"), -3 unset, other negatives as they are. */
typedef struct fz_tensor {
  char name[NAME];
  int dtype;
  int rank; /* may be MAX_RANK + 1 to test the limit */
  int64_t dims[MAX_RANK + 1];
  int nvals; /* explicit int64 values (shapes, axes), repeated */
  int64_t vals[MAX_INTS];
  int raw_delta; /* bytes added to the data length */
} fz_tensor;

typedef struct fz_model {
  int64_t ir_version, opset;
  int ninputs, ninits, nnodes, noutputs;
  fz_tensor inputs[2], inits[MAX_TENSORS];
  fz_node nodes[MAX_NODES];
  char outputs[2][NAME];
} fz_model;

/* --- building the seeds */

static void set_name(char *dst, const char *src) { snprintf(dst, NAME, "%s", src); }

static int split(const char *list, char out[][NAME], int max) {
  int n = 0;
  while (list && *list && n < max) {
    size_t len = strcspn(list, ",");
    snprintf(out[n++], NAME, "%.*s", (int)len, list);
    list += len + (list[len] == ',');
  }
  return n;
}

static fz_node *add_node(fz_model *m, const char *op, const char *ins, const char *outs) {
  fz_node *n = &m->nodes[m->nnodes];
  snprintf(n->op, sizeof n->op, "%s", op);
  snprintf(n->name, NAME, "n%d", m->nnodes++);
  n->nin = split(ins, n->in, MAX_IO);
  n->nout = split(outs, n->out, MAX_IO);
  return n;
}

static fz_attr *add_attr(fz_node *n, const char *name, int type) {
  fz_attr *a = &n->attr[n->nattr++];
  set_name(a->name, name);
  a->type = type;
  return a;
}

static void attr_int(fz_node *n, const char *name, int64_t v) { add_attr(n, name, A_INT)->i = v; }
static void attr_float(fz_node *n, const char *name, float v) { add_attr(n, name, A_FLOAT)->f = v; }

static void attr_ints(fz_node *n, const char *name, int k, const int64_t *v) {
  fz_attr *a = add_attr(n, name, A_INTS);
  a->nints = k;
  memcpy(a->ints, v, (size_t)k * sizeof *v);
}

static fz_tensor *tensor(fz_tensor *t, const char *name, int dtype, int rank, const int64_t *dims) {
  memset(t, 0, sizeof *t);
  set_name(t->name, name);
  t->dtype = dtype;
  t->rank = rank;
  memcpy(t->dims, dims, (size_t)rank * sizeof *dims);
  return t;
}

#define DIMS(...)                                                                                            \
  (sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (const int64_t[]) { __VA_ARGS__ }
#define INPUT(m, name, ...) tensor(&(m)->inputs[(m)->ninputs++], name, DT_FLOAT32, DIMS(__VA_ARGS__))
#define INIT(m, name, dt, ...) tensor(&(m)->inits[(m)->ninits++], name, dt, DIMS(__VA_ARGS__))
#define SCALAR(m, name, dt) tensor(&(m)->inits[(m)->ninits++], name, dt, 0, (const int64_t[]){0})
#define INTS(n, name, ...) attr_ints(n, name, DIMS(__VA_ARGS__))

static void i64_vals(fz_tensor *t, int k, const int64_t *v) {
  t->nvals = k;
  memcpy(t->vals, v, (size_t)k * sizeof *v);
}
#define VALS(t, ...) i64_vals(t, DIMS(__VA_ARGS__))

enum { NSEEDS = 4 };

static void seed_model(fz_model *m, int which) {
  memset(m, 0, sizeof *m);
  m->ir_version = 8;
  m->opset = 13;
  m->noutputs = 1;
  fz_node *n;
  switch (which) {
  case 0: /* Conv -> Relu -> MaxPool */
    INPUT(m, "x", 1, 3, 8, 8);
    INIT(m, "w", DT_FLOAT32, 4, 3, 3, 3);
    INIT(m, "b", DT_FLOAT32, 4);
    n = add_node(m, "Conv", "x,w,b", "c");
    INTS(n, "kernel_shape", 3, 3);
    INTS(n, "pads", 1, 1, 1, 1);
    INTS(n, "strides", 1, 1);
    add_node(m, "Relu", "c", "r");
    n = add_node(m, "MaxPool", "r", "p");
    INTS(n, "kernel_shape", 2, 2);
    INTS(n, "strides", 2, 2);
    set_name(m->outputs[0], "p");
    break;
  case 1: /* Conv, BatchNorm, Clip, residual Add, GAP, Flatten, Gemm, Softmax */
    INPUT(m, "x", 1, 4, 8, 8);
    INIT(m, "w", DT_FLOAT32, 4, 4, 1, 1);
    INIT(m, "s", DT_FLOAT32, 4);
    INIT(m, "bb", DT_FLOAT32, 4);
    INIT(m, "mean", DT_FLOAT32, 4);
    INIT(m, "var", DT_FLOAT32, 4);
    SCALAR(m, "lo", DT_FLOAT32);
    SCALAR(m, "hi", DT_FLOAT32);
    INIT(m, "W", DT_FLOAT32, 10, 4);
    INIT(m, "B", DT_FLOAT32, 10);
    add_node(m, "Conv", "x,w", "c");
    attr_float(add_node(m, "BatchNormalization", "c,s,bb,mean,var", "bn"), "epsilon", 1e-5f);
    add_node(m, "Clip", "bn,lo,hi", "cl");
    add_node(m, "Add", "cl,x", "a");
    add_node(m, "GlobalAveragePool", "a", "g");
    attr_int(add_node(m, "Flatten", "g", "f"), "axis", 1);
    n = add_node(m, "Gemm", "f,W,B", "y");
    attr_int(n, "transB", 1);
    attr_float(n, "alpha", 1.0f);
    attr_int(add_node(m, "Softmax", "y", "out"), "axis", 1);
    set_name(m->outputs[0], "out");
    break;
  case 2: { /* MatMul, Add, Sigmoid, Mul, Concat, Reshape, Div, LogSoftmax */
    INPUT(m, "x", 2, 8);
    INIT(m, "W", DT_FLOAT32, 8, 8);
    INIT(m, "b", DT_FLOAT32, 8);
    fz_tensor *shape = INIT(m, "shape", DT_INT64, 2);
    VALS(shape, 4, 8);
    INIT(m, "two", DT_FLOAT32, 1);
    add_node(m, "MatMul", "x,W", "mm");
    add_node(m, "Add", "mm,b", "a");
    add_node(m, "Relu", "a", "sg");
    add_node(m, "Mul", "sg,x", "mu");
    attr_int(add_node(m, "Concat", "mu,x", "cat"), "axis", 1);
    add_node(m, "Reshape", "cat,shape", "rs");
    add_node(m, "Div", "rs,two", "dv");
    add_node(m, "Sub", "dv,two", "sb");
    attr_int(add_node(m, "LogSoftmax", "sb", "out"), "axis", -1);
    set_name(m->outputs[0], "out");
    break;
  }
  default: { /* depthwise Conv, AveragePool, GlobalMaxPool, Squeeze, Unsqueeze, Shape/Gather */
    INPUT(m, "x", 1, 8, 6, 6);
    INIT(m, "w", DT_FLOAT32, 8, 1, 3, 3);
    fz_tensor *axes = INIT(m, "axes", DT_INT64, 2);
    VALS(axes, 2, 3);
    fz_tensor *ax0 = INIT(m, "ax0", DT_INT64, 1);
    VALS(ax0, 0);
    fz_tensor *idx = SCALAR(m, "idx", DT_INT64);
    VALS(idx, 1);
    n = add_node(m, "Conv", "x,w", "c");
    attr_int(n, "group", 8);
    INTS(n, "kernel_shape", 3, 3);
    INTS(n, "pads", 1, 1, 1, 1);
    n = add_node(m, "AveragePool", "c", "ap");
    INTS(n, "kernel_shape", 3, 3);
    INTS(n, "pads", 1, 1, 1, 1);
    attr_int(n, "count_include_pad", 0);
    add_node(m, "GlobalMaxPool", "ap", "gm");
    add_node(m, "Squeeze", "gm,axes", "sq");
    add_node(m, "Unsqueeze", "sq,ax0", "us");
    add_node(m, "Identity", "us", "id");
    add_node(m, "Shape", "x", "sh");
    add_node(m, "Gather", "sh,idx", "g1");
    attr_int(add_node(m, "Cast", "id", "out"), "to", DT_FLOAT32);
    set_name(m->outputs[0], "out");
    set_name(m->outputs[1], "g1"); /* a folded constant: reached by mutation 14 */
    break;
  }
  }
}

/* --- mutations */

typedef struct cursor {
  const uint8_t *p, *end;
} cursor;

static unsigned take(cursor *c) { return c->p < c->end ? *c->p++ : 0; }

static const int64_t dim_values[] = {0,
                                     1,
                                     2,
                                     3,
                                     4,
                                     5,
                                     7,
                                     8,
                                     15,
                                     16,
                                     17,
                                     31,
                                     32,
                                     64,
                                     255,
                                     256,
                                     1024,
                                     65535,
                                     65536,
                                     (int64_t)1 << 31,
                                     ((int64_t)1 << 31) - 1,
                                     (int64_t)1 << 32,
                                     (int64_t)1 << 40,
                                     (int64_t)1 << 62,
                                     INT64_MAX,
                                     -1,
                                     -2,
                                     -3,
                                     INT64_MIN,
                                     6,
                                     9,
                                     10};

static int64_t pick_value(cursor *c) {
  unsigned b = take(c);
  if (b >= 0xf0) return (int64_t)(b - 0xf8); /* -8 .. 7 */
  return dim_values[b % (sizeof dim_values / sizeof *dim_values)];
}

static const char *const op_names[] = {"Conv",
                                       "BatchNormalization",
                                       "Relu",
                                       "Sigmoid",
                                       "Clip",
                                       "MaxPool",
                                       "AveragePool",
                                       "GlobalAveragePool",
                                       "GlobalMaxPool",
                                       "Add",
                                       "Sub",
                                       "Mul",
                                       "Div",
                                       "Flatten",
                                       "Reshape",
                                       "Squeeze",
                                       "Unsqueeze",
                                       "Identity",
                                       "Dropout",
                                       "Shape",
                                       "Gather",
                                       "Concat",
                                       "Cast",
                                       "Softmax",
                                       "LogSoftmax",
                                       "Gemm",
                                       "MatMul",
                                       "Constant",
                                       "Transpose",
                                       "Loop",
                                       ""};

static const char *const attr_names[] = {
    "kernel_shape",      "pads",       "strides",   "dilations",     "group",  "axis",     "axes",
    "epsilon",           "alpha",      "beta",      "transA",        "transB", "auto_pad", "ceil_mode",
    "count_include_pad", "to",         "momentum",  "storage_order", "min",    "max",      "value",
    "value_int",         "value_ints", "allowzero", "training_mode"};

static const char *const auto_pads[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "BOGUS", ""};

static const int64_t opsets[] = {13, 1, 5, 6, 7, 9, 10, 11, 12, 14, 17, 18, 21, 28, 29, 0, -1, 1000};

#define COUNT(a) ((int)(sizeof(a) / sizeof *(a)))

/* A tensor (graph input or initializer) chosen by one byte. */
static fz_tensor *pick_tensor(fz_model *m, cursor *c) {
  int total = m->ninputs + m->ninits;
  if (total == 0) return NULL;
  int k = (int)(take(c) % (unsigned)total);
  return k < m->ninputs ? &m->inputs[k] : &m->inits[k - m->ninputs];
}

static fz_node *pick_node(fz_model *m, cursor *c) {
  return m->nnodes ? &m->nodes[take(c) % (unsigned)m->nnodes] : NULL;
}

/* Any name the graph defines, or a dangling or empty one. */
static void pick_name(fz_model *m, cursor *c, char *dst) {
  unsigned b = take(c);
  int total = m->ninputs + m->ninits + m->nnodes;
  if (b >= 250 || total == 0) {
    set_name(dst, b & 1 ? "" : "dangling");
    return;
  }
  int k = (int)(b % (unsigned)total);
  if (k < m->ninputs)
    set_name(dst, m->inputs[k].name);
  else if (k < m->ninputs + m->ninits)
    set_name(dst, m->inits[k - m->ninputs].name);
  else {
    const fz_node *n = &m->nodes[k - m->ninputs - m->ninits];
    set_name(dst, n->nout ? n->out[take(c) % (unsigned)n->nout] : "");
  }
}

static void mutate(fz_model *m, cursor *c) {
  unsigned op = take(c) % 20;
  fz_tensor *t;
  fz_node *n;
  fz_attr *a;
  switch (op) {
  case 0: /* a dim */
  case 1:
    if ((t = pick_tensor(m, c)) && t->rank) {
      int64_t v = pick_value(c);
      t->dims[take(c) % (unsigned)t->rank] = v;
    }
    break;
  case 2: /* a rank (new dims are 1) */
    if ((t = pick_tensor(m, c))) {
      int r = (int)(take(c) % (MAX_RANK + 2));
      for (int k = t->rank; k < r; k++)
        t->dims[k] = 1;
      t->rank = r;
    }
    break;
  case 3: /* a dtype */
    if ((t = pick_tensor(m, c))) t->dtype = (int)(take(c) % 18);
    break;
  case 4: /* an int attribute or one element of an ints attribute */
  case 5:
    if ((n = pick_node(m, c)) && n->nattr) {
      a = &n->attr[take(c) % (unsigned)n->nattr];
      if (a->type == A_INTS && a->nints) {
        int64_t v = pick_value(c);
        a->ints[take(c) % (unsigned)a->nints] = v;
      } else
        a->i = pick_value(c);
    }
    break;
  case 6: /* the length of an ints attribute */
    if ((n = pick_node(m, c)) && n->nattr) {
      a = &n->attr[take(c) % (unsigned)n->nattr];
      int k = (int)(take(c) % (MAX_INTS + 1));
      for (int j = a->nints; j < k; j++)
        a->ints[j] = 1;
      a->nints = k;
    }
    break;
  case 7: /* an attribute's type */
    if ((n = pick_node(m, c)) && n->nattr) {
      static const int types[] = {A_FLOAT, A_INT, A_STRING, A_FLOATS, A_INTS, A_TENSOR, 0, 5, 99};
      int type = types[take(c) % COUNT(types)];
      n->attr[take(c) % (unsigned)n->nattr].type = type;
    }
    break;
  case 8: /* an attribute's name */
    if ((n = pick_node(m, c)) && n->nattr) {
      a = &n->attr[take(c) % (unsigned)n->nattr];
      set_name(a->name, attr_names[take(c) % COUNT(attr_names)]);
    }
    break;
  case 9: /* add an attribute, or drop the last one */
    if ((n = pick_node(m, c))) {
      unsigned b = take(c);
      if (b & 1 && n->nattr) {
        n->nattr--;
      } else if (n->nattr < MAX_ATTRS) {
        static const int types[] = {A_INT, A_INTS, A_FLOAT, A_STRING};
        a = add_attr(n, attr_names[(b >> 1) % COUNT(attr_names)], types[take(c) % 4]);
        a->i = pick_value(c);
        a->f = (float)a->i;
        a->nints = (int)(take(c) % (MAX_INTS + 1));
        for (int j = 0; j < a->nints; j++)
          a->ints[j] = pick_value(c);
        set_name(a->s, auto_pads[take(c) % COUNT(auto_pads)]);
      }
    }
    break;
  case 10: /* a float or string attribute value */
    if ((n = pick_node(m, c)) && n->nattr) {
      static const float fv[] = {0.0f,
                                 -1.0f,
                                 1e30f,
                                 -1e30f,
                                 1e-30f,
                                 0.5f,
                                 6.0f,
                                 __builtin_inff(),
                                 -__builtin_inff(),
                                 __builtin_nanf("")};
      a = &n->attr[take(c) % (unsigned)n->nattr];
      a->f = fv[take(c) % COUNT(fv)];
      set_name(a->s, auto_pads[take(c) % COUNT(auto_pads)]);
    }
    break;
  case 11: /* rewire a node input */
    if ((n = pick_node(m, c)) && n->nin) pick_name(m, c, n->in[take(c) % (unsigned)n->nin]);
    break;
  case 12: /* add or drop a node input or output */
    if ((n = pick_node(m, c))) {
      unsigned b = take(c);
      int *cnt = b & 2 ? &n->nout : &n->nin;
      char(*names)[NAME] = b & 2 ? n->out : n->in;
      if (b & 1 && *cnt)
        (*cnt)--;
      else if (*cnt < MAX_IO)
        pick_name(m, c, names[(*cnt)++]);
    }
    break;
  case 13: /* rename a node output (a duplicate definition, or a cycle through a later rewire) */
    if ((n = pick_node(m, c)) && n->nout) pick_name(m, c, n->out[take(c) % (unsigned)n->nout]);
    break;
  case 14: /* a graph output */
    pick_name(m, c, m->outputs[take(c) % (unsigned)m->noutputs]);
    if (take(c) == 7) m->noutputs = m->noutputs == 1 ? 2 : 1;
    break;
  case 15: /* an op type */
    if ((n = pick_node(m, c))) snprintf(n->op, sizeof n->op, "%s", op_names[take(c) % COUNT(op_names)]);
    break;
  case 16: /* opset or IR version */
    if (take(c) & 1)
      m->opset = opsets[take(c) % COUNT(opsets)];
    else
      m->ir_version = (int64_t)(take(c) % 16) - 1;
    break;
  case 17: /* drop, duplicate or swap nodes */
    if (m->nnodes) {
      unsigned b = take(c);
      int i = (int)(take(c) % (unsigned)m->nnodes), j = (int)(take(c) % (unsigned)m->nnodes);
      if (b % 3 == 0 && m->nnodes > 1) {
        memmove(&m->nodes[i], &m->nodes[i + 1], (size_t)(m->nnodes - i - 1) * sizeof *m->nodes);
        m->nnodes--;
      } else if (b % 3 == 1 && m->nnodes < MAX_NODES) {
        m->nodes[m->nnodes++] = m->nodes[i];
      } else {
        fz_node tmp = m->nodes[i];
        m->nodes[i] = m->nodes[j];
        m->nodes[j] = tmp;
      }
    }
    break;
  case 18: /* an initializer's int64 values */
    if (m->ninits) {
      t = &m->inits[take(c) % (unsigned)m->ninits];
      int k = (int)(take(c) % (MAX_INTS + 1));
      for (int j = t->nvals; j < k; j++)
        t->vals[j] = 1;
      t->nvals = k;
      if (k) {
        int64_t v = pick_value(c);
        t->vals[take(c) % (unsigned)k] = v;
      }
    }
    break;
  default: /* an initializer's data length */
    if (m->ninits) {
      int delta = (int)(take(c) % 17) - 8;
      m->inits[take(c) % (unsigned)m->ninits].raw_delta = delta;
    }
    break;
  }
}

/* --- serialization with protobuf-c */

typedef struct pb_store {
  Onnx__ModelProto model;
  Onnx__GraphProto graph;
  Onnx__OperatorSetIdProto opset, *opsets[1];
  Onnx__NodeProto nodes[MAX_NODES], *node_ptrs[MAX_NODES];
  char *in_ptrs[MAX_NODES][MAX_IO], *out_ptrs[MAX_NODES][MAX_IO];
  Onnx__AttributeProto attrs[MAX_NODES][MAX_ATTRS], *attr_ptrs[MAX_NODES][MAX_ATTRS];
  float floats[MAX_NODES][MAX_ATTRS][MAX_INTS];
  Onnx__TensorProto inits[MAX_TENSORS], *init_ptrs[MAX_TENSORS];
  void *raw[MAX_TENSORS];
  Onnx__ValueInfoProto vis[4], *in_vis[2], *out_vis[2];
  Onnx__TypeProto types[2];
  Onnx__TypeProto__Tensor tts[2];
  Onnx__TensorShapeProto shapes[2];
  Onnx__TensorShapeProto__Dimension dims[2][MAX_RANK + 1], *dim_ptrs[2][MAX_RANK + 1];
} pb_store;

/* Deterministic initializer contents: small values, or the explicit ones. */
static void *make_raw(const fz_tensor *t, size_t *len_out) {
  size_t es = dtype_size(t->dtype);
  uint64_t count = 1, bytes;
  for (int k = 0; k < t->rank; k++)
    if (t->dims[k] < 0 || mul_u64(count, (uint64_t)t->dims[k], &count)) count = UINT64_MAX;
  if (count == UINT64_MAX || mul_u64(count, es ? es : 1, &bytes) || bytes > MAX_RAW_BYTES) bytes = 16;
  int64_t len = (int64_t)bytes + t->raw_delta;
  if (len < 0) len = 0;
  uint8_t *p = calloc(1, (size_t)len + 8);
  if (!p) return NULL;
  for (int64_t i = 0; es && i + (int64_t)es <= len; i += (int64_t)es) {
    int64_t k = i / (int64_t)es;
    if (t->dtype == DT_FLOAT32) {
      float f = (float)((k * 7) % 13 - 6) * 0.125f;
      if (!strcmp(t->name, "var")) f = 1.0f; /* a BatchNorm variance that stays positive */
      if (!strcmp(t->name, "hi")) f = 6.0f;
      memcpy(p + i, &f, 4);
    } else if (t->dtype == DT_INT64) {
      int64_t v = t->nvals ? t->vals[k % t->nvals] : k;
      memcpy(p + i, &v, 8);
    } else {
      memset(p + i, (int)(k * 37 + 1), es);
    }
  }
  *len_out = (size_t)len;
  return p;
}

static void build_value_info(pb_store *s, int k, const fz_tensor *t) {
  Onnx__ValueInfoProto *vi = &s->vis[k];
  onnx__value_info_proto__init(vi);
  vi->name = (char *)t->name;
  onnx__type_proto__init(&s->types[k]);
  onnx__type_proto__tensor__init(&s->tts[k]);
  onnx__tensor_shape_proto__init(&s->shapes[k]);
  s->types[k].value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  s->types[k].tensor_type = &s->tts[k];
  s->tts[k].has_elem_type = 1;
  s->tts[k].elem_type = t->dtype;
  s->tts[k].shape = &s->shapes[k];
  s->shapes[k].n_dim = (size_t)t->rank;
  s->shapes[k].dim = s->dim_ptrs[k];
  for (int j = 0; j < t->rank; j++) {
    Onnx__TensorShapeProto__Dimension *d = &s->dims[k][j];
    onnx__tensor_shape_proto__dimension__init(d);
    s->dim_ptrs[k][j] = d;
    if (t->dims[j] == -2) {
      d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
      d->dim_param = "N";
    } else if (t->dims[j] != -3) {
      d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
      d->dim_value = t->dims[j];
    }
  }
  vi->type = &s->types[k];
  s->in_vis[k] = vi;
}

static int serialize(fz_model *m, uint8_t **out, size_t *out_size) {
  pb_store *s = calloc(1, sizeof *s);
  if (!s) return -1;
  int rc = -1;
  onnx__model_proto__init(&s->model);
  onnx__graph_proto__init(&s->graph);
  onnx__operator_set_id_proto__init(&s->opset);
  s->model.has_ir_version = 1;
  s->model.ir_version = m->ir_version;
  s->opset.has_version = 1;
  s->opset.version = m->opset;
  s->opset.domain = "";
  s->opsets[0] = &s->opset;
  s->model.n_opset_import = 1;
  s->model.opset_import = s->opsets;
  s->model.graph = &s->graph;
  s->graph.name = "fuzz";

  for (int i = 0; i < m->nnodes; i++) {
    fz_node *n = &m->nodes[i];
    Onnx__NodeProto *np = &s->nodes[i];
    onnx__node_proto__init(np);
    np->name = n->name;
    np->op_type = n->op;
    np->n_input = (size_t)n->nin;
    np->input = s->in_ptrs[i];
    np->n_output = (size_t)n->nout;
    np->output = s->out_ptrs[i];
    for (int k = 0; k < n->nin; k++)
      s->in_ptrs[i][k] = n->in[k];
    for (int k = 0; k < n->nout; k++)
      s->out_ptrs[i][k] = n->out[k];
    np->n_attribute = (size_t)n->nattr;
    np->attribute = s->attr_ptrs[i];
    for (int k = 0; k < n->nattr; k++) {
      fz_attr *a = &n->attr[k];
      Onnx__AttributeProto *ap = &s->attrs[i][k];
      onnx__attribute_proto__init(ap);
      s->attr_ptrs[i][k] = ap;
      ap->name = a->name;
      ap->has_type = 1;
      ap->type = (Onnx__AttributeProto__AttributeType)a->type;
      switch (a->type) {
      case A_FLOAT:
        ap->has_f = 1;
        ap->f = a->f;
        break;
      case A_INT:
        ap->has_i = 1;
        ap->i = a->i;
        break;
      case A_STRING:
        ap->has_s = 1;
        ap->s.data = (uint8_t *)a->s;
        ap->s.len = strlen(a->s);
        break;
      case A_FLOATS:
        for (int j = 0; j < a->nints; j++)
          s->floats[i][k][j] = (float)a->ints[j];
        ap->n_floats = (size_t)a->nints;
        ap->floats = s->floats[i][k];
        break;
      case A_INTS:
        ap->n_ints = (size_t)a->nints;
        ap->ints = a->ints;
        break;
      default: break; /* a type with no value (TENSOR without t, or unknown) */
      }
    }
    s->node_ptrs[i] = np;
  }
  s->graph.n_node = (size_t)m->nnodes;
  s->graph.node = s->node_ptrs;

  for (int i = 0; i < m->ninits; i++) {
    fz_tensor *t = &m->inits[i];
    Onnx__TensorProto *tp = &s->inits[i];
    onnx__tensor_proto__init(tp);
    tp->name = t->name;
    tp->has_data_type = 1;
    tp->data_type = t->dtype;
    tp->n_dims = (size_t)t->rank;
    tp->dims = t->dims;
    size_t len = 0;
    if (!(s->raw[i] = make_raw(t, &len))) goto done;
    tp->has_raw_data = 1;
    tp->raw_data.data = s->raw[i];
    tp->raw_data.len = len;
    s->init_ptrs[i] = tp;
  }
  s->graph.n_initializer = (size_t)m->ninits;
  s->graph.initializer = s->init_ptrs;

  for (int i = 0; i < m->ninputs; i++)
    build_value_info(s, i, &m->inputs[i]);
  s->graph.n_input = (size_t)m->ninputs;
  s->graph.input = s->in_vis;
  for (int i = 0; i < m->noutputs; i++) {
    onnx__value_info_proto__init(&s->vis[2 + i]);
    s->vis[2 + i].name = m->outputs[i];
    s->out_vis[i] = &s->vis[2 + i];
  }
  s->graph.n_output = (size_t)m->noutputs;
  s->graph.output = s->out_vis;

  size_t size = onnx__model_proto__get_packed_size(&s->model);
  uint8_t *buf = malloc(size ? size : 1);
  if (buf) {
    *out_size = onnx__model_proto__pack(&s->model, buf);
    *out = buf;
    rc = 0;
  }
done:
  for (int i = 0; i < MAX_TENSORS; i++)
    free(s->raw[i]);
  free(s);
  return rc;
}

/* --- the target */

static const char *const input_shapes[] = {NULL,
                                           NULL,
                                           NULL,
                                           NULL,
                                           "x:1,3,8,8",
                                           "x:2,3,16,16",
                                           "x:0,3,8,8",
                                           "x:1,3,4294967296,65536",
                                           "x:1",
                                           "y:1,2",
                                           "x:1,3,8,8;x:1,3,8,8",
                                           "x:99999999999999999999",
                                           "x:2,8",
                                           "x:1,8,6,6"};
static const char *const out_nodes[] = {NULL, NULL, NULL, NULL, "n0:0", "n1:0", "n2:1", "nosuch:0"};
static const char *const socs[] = {"Ascend310", "Ascend910", "Ascend310P3"};

int fuzz_compile_model_bytes(const uint8_t *data, size_t size, uint8_t **out, size_t *out_size) {
  cursor c = {data, data + size};
  fz_model *m = malloc(sizeof *m);
  if (!m) return -1;
  seed_model(m, (int)(take(&c) % NSEEDS));
  take(&c); /* the options byte */
  for (int i = 0; i < MAX_MUTATIONS && c.p < c.end; i++)
    mutate(m, &c);
  int rc = serialize(m, out, out_size);
  free(m);
  return rc;
}

int fuzz_compile(const uint8_t *data, size_t size) {
  fuzz_last.rejected = 0;
  fuzz_last.msg[0] = '\0';
  uint8_t *model = NULL;
  size_t model_size = 0;
  if (fuzz_compile_model_bytes(data, size, &model, &model_size) != 0) return 0;
  unsigned optb = size > 1 ? data[1] : 0;
  atc_options opt = {
      .model_path = FUZZ_ONNX_LABEL,
      .model_data = model,
      .model_size = model_size,
      .soc_version = socs[optb % 3],
      .precision = (om_precision)((optb >> 2) % 4),
      .input_shape = input_shapes[(optb >> 4) % COUNT(input_shapes)],
      .out_nodes = out_nodes[(optb >> 5) % COUNT(out_nodes)],
      .cmdline = "fuzz_compile",
  };
  atc_result res;
  diag d;
  diag_init(&d);
  status s = atc_compile(&opt, &res, &d);
  if (s != ST_OK) {
    fuzz_last.rejected = 1;
    snprintf(fuzz_last.msg, sizeof fuzz_last.msg, "%s", d.msg);
  } else {
    /* What atc emits, libomrt must load. */
    omrt_model *om = NULL;
    omrt_load_options lo = {.threads = 1};
    if (omrt_model_load_memory(res.om_data, (size_t)res.om_bytes, &lo, &om) != OMRT_OK) {
      fprintf(stderr, "fuzz_compile: atc emitted a package libomrt refuses: %s\n", omrt_last_error());
      abort();
    }
    omrt_model_free(om);
  }
  free(res.om_data);
  free(model);
  return 0;
}
