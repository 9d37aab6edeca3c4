/* node_test.c - one ONNX node test, run in process (node_test.h).
 *
 * The steps of nt_run, each failing with a one-line reason:
 *   1. read model.onnx and unpack it (protobuf-c, the generated onnx.pb-c);
 *   2. read test_data_set_0/input_N.pb with the frontend's own TensorProto
 *      decoder (onnx_read_tensor_file), one per graph input that is not an
 *      initializer, in graph order;
 *   3. bind compile-time inputs: a graph input read by a node at an
 *      (op_type, input index) slot of nt_const_slots, or only through shape
 *      arithmetic that ends in such slots (is_compile_time; If branches
 *      included), is removed from
 *      graph.input and added to graph.initializer with the test's data, and
 *      the ModelProto is packed again; graph inputs whose declared dims are
 *      symbolic get them from the test data through --input_shape;
 *   4. compile with atc_compile from memory (the compiler's message is the
 *      reason when this fails; it is preferred over any input-reading error,
 *      which is only reported once the model has compiled);
 *   5. load the package with omrt_model_load_memory, bind the run-time inputs
 *      by name, execute;
 *   6. read output_N.pb, match the package's outputs to the graph outputs by
 *      name, and compare (a counted output's valid part, the actual dims
 *      omrt_context_output_dims gives): dtypes and dims exactly, integers and bool exactly,
 *      floats within nt_tolerance_for(mode). A float output may come back as
 *      another float dtype only under force_fp16.
 */
#include "node_test.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/crc32c.h"
#include "common/dtype_cvt.h"
#include "common/fp16.h"
#include "driver/compile.h"
#include "frontend/onnx_import.h"
#include "omrt.h"
#include "onnx.pb-c.h"

enum { MAX_IO = 64 }; /* graph inputs or outputs a node test may have */

/* --- the compile-time input slots
 *
 * An input is bound as a constant when it is an attribute in disguise: it
 * fixes the shape of the op's output, or it is a scalar parameter of the op's
 * algorithm. In every deployed model these are constants (or fold to
 * constants once --input_shape fixes the dims), and a static-shape NPU
 * compiler must know them; ONNX's node tests feed them as graph inputs only
 * to test the op. Data inputs (weights included) always stay run-time inputs.
 */
typedef struct nt_const_slot {
  const char *op; /* op_type; the default domain */
  int input;      /* input index */
  const char *what;
} nt_const_slot;

static const nt_const_slot nt_const_slots[] = {
    {"Reshape", 1, "shape"},
    {"Expand", 1, "shape"},
    {"Tile", 1, "repeats"},
    {"ConstantOfShape", 0, "shape"},
    {"Slice", 1, "starts"},
    {"Slice", 2, "ends"},
    {"Slice", 3, "axes"},
    {"Slice", 4, "steps"},
    {"Pad", 1, "pads"},
    {"Pad", 2, "constant_value"},
    {"Pad", 3, "axes"},
    {"Resize", 1, "roi (opset 10: scales)"},
    {"Resize", 2, "scales"},
    {"Resize", 3, "sizes"},
    {"Upsample", 1, "scales"},
    {"Range", 0, "start"},
    {"Range", 1, "limit"},
    {"Range", 2, "delta"},
    {"OneHot", 1, "depth"},
    {"Clip", 1, "min"},
    {"Clip", 2, "max"},
    {"Squeeze", 1, "axes"},
    {"Unsqueeze", 1, "axes"},
    {"ReduceSum", 1, "axes"},
    {"ReduceMean", 1, "axes"},
    {"ReduceMax", 1, "axes"},
    {"ReduceMin", 1, "axes"},
    {"ReduceProd", 1, "axes"},
    {"ReduceL1", 1, "axes"},
    {"ReduceL2", 1, "axes"},
    {"ReduceLogSum", 1, "axes"},
    {"ReduceLogSumExp", 1, "axes"},
    {"ReduceSumSquare", 1, "axes"},
    {"Split", 1, "split"},
    {"CumSum", 1, "axis"},
    {"CumProd", 1, "axis"},
    {"Trilu", 1, "k"},
    {"CenterCropPad", 1, "shape"},
    {"Col2Im", 1, "image_shape"},
    {"Col2Im", 2, "block_shape"},
    {"MaxUnpool", 2, "output_shape"},
    {"AffineGrid", 1, "size"},
    {"Loop", 0, "M (the trip count: Loop is unrolled at compile time)"},
    {"Loop", 1, "cond (the initial condition)"},
    {"Dropout", 1, "ratio"},
    {"Dropout", 2, "training_mode"},
    {"NonMaxSuppression", 2, "max_output_boxes_per_class"},
    {"DFT", 1, "dft_length"},
    {"DFT", 2, "axis"},
    {"STFT", 1, "frame_step"},
    {"STFT", 3, "frame_length"},
    {"BlackmanWindow", 0, "size"},
    {"HannWindow", 0, "size"},
    {"HammingWindow", 0, "size"},
    {"MelWeightMatrix", 0, "num_mel_bins"},
    {"MelWeightMatrix", 1, "dft_length"},
    {"MelWeightMatrix", 2, "sample_rate"},
    {"MelWeightMatrix", 3, "lower_edge_hertz"},
    {"MelWeightMatrix", 4, "upper_edge_hertz"},
};

static int is_default_domain(const char *d) { return !d || !*d || !strcmp(d, "ai.onnx"); }

static int is_graph_output(const Onnx__GraphProto *g, const char *name) {
  for (size_t i = 0; i < g->n_output; i++)
    if (g->output[i]->name && !strcmp(g->output[i]->name, name)) return 1;
  return 0;
}

/* Whether `name` only parameterises the graph: some node reads it at a
 * compile-time slot, or it is no graph output, something reads it, and every
 * reader is a default-domain node whose every output is such a value (the
 * shape arithmetic of an expanded function: CenterCropPad's `shape` flows
 * through Max, Sub and Div into Pad's pads and Slice's starts). Shape and
 * Size read only the (static) dims and do not count as readers. Readers
 * inside subgraphs count (an If branch splitting AffineGrid's `size`), and
 * an If branch's output k stands for the If's output k; a value leaving a
 * Loop or Scan body is not followed. depth bounds the walk on a malformed
 * (cyclic) graph. */
typedef struct ct_walk {
  int slot, readers, derived;
} ct_walk;

static int is_compile_time(const Onnx__GraphProto *main, const char *name, int depth);

static void ct_walk_graph(const Onnx__GraphProto *main, const Onnx__GraphProto *g,
                          const Onnx__NodeProto *owner, const char *name, int depth, ct_walk *w) {
  for (size_t i = 0; i < g->n_node && !w->slot; i++) {
    const Onnx__NodeProto *n = g->node[i];
    int reads = 0;
    for (size_t k = 0; k < n->n_input; k++) {
      if (strcmp(n->input[k], name)) continue;
      reads = 1;
      if (!is_default_domain(n->domain)) continue;
      for (size_t s = 0; s < sizeof nt_const_slots / sizeof *nt_const_slots; s++)
        if (nt_const_slots[s].input == (int)k && !strcmp(nt_const_slots[s].op, n->op_type)) w->slot = 1;
    }
    if (reads && is_default_domain(n->domain) &&
        (!strcmp(n->op_type, "Shape") || !strcmp(n->op_type, "Size")))
      reads = 0; /* reads only the dims, which are static either way */
    if (reads) {
      w->readers++;
      if (!is_default_domain(n->domain) || n->n_output == 0) w->derived = 0;
      for (size_t k = 0; w->derived && k < n->n_output; k++)
        if (n->output[k] && *n->output[k] && !is_compile_time(main, n->output[k], depth + 1)) w->derived = 0;
    }
    for (size_t a = 0; a < n->n_attribute; a++)
      if (n->attribute[a]->g) ct_walk_graph(main, n->attribute[a]->g, n, name, depth, w);
  }
  for (size_t k = 0; owner && k < g->n_output; k++) {
    if (!g->output[k]->name || strcmp(g->output[k]->name, name)) continue;
    w->readers++;
    if (strcmp(owner->op_type, "If") || k >= owner->n_output || !*owner->output[k] ||
        !is_compile_time(main, owner->output[k], depth + 1))
      w->derived = 0;
  }
}

static int is_compile_time(const Onnx__GraphProto *main, const char *name, int depth) {
  if (depth > 32 || is_graph_output(main, name)) return 0;
  ct_walk w = {.derived = 1};
  ct_walk_graph(main, main, NULL, name, depth, &w);
  return w.slot || (w.readers > 0 && w.derived);
}

nt_tolerance nt_tolerance_for(om_precision mode) {
  /* must_keep_origin_dtype: ONNX's own backend-test tolerances.
   * force_fp16: fp16 keeps 11 significant bits, a unit roundoff of 2^-11
   * (4.9e-4). Inputs, weights and every stored activation are rounded once
   * each, so a short chain of ops collects a few roundoffs, amplified by the
   * op's conditioning; rtol 1e-2 allows about 20 of them. atol 1e-3 covers
   * results that cancel to near zero from O(1) operands (an error of a few
   * roundoffs of the operands, not of the result) and values below fp16's
   * smallest normal (6.1e-5) that are flushed or lose bits. */
  if (mode == OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE) return (nt_tolerance){1e-3, 1e-7};
  return (nt_tolerance){1e-2, 1e-3};
}

nt_tolerance nt_tolerance_storage(int dtype, nt_tolerance mode_tol) {
  /* float8, float4 and e8m0 results are codes: exact, once decoded (NaN
   * matches NaN, whatever its code). bf16 keeps 8 significant bits: a result
   * computed in f32 and rounded once may be one unit in the last place (2^-7
   * relative) from one that the reference rounded at every step. */
  if (dtype == DT_BFLOAT16)
    return (nt_tolerance){mode_tol.rtol > 0x1p-7 ? mode_tol.rtol : 0x1p-7, mode_tol.atol};
  return (nt_tolerance){0, 0};
}

/* --- small helpers */

static void *read_whole(const char *path, size_t *size_out) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  unsigned char *buf = NULL;
  size_t len = 0, cap = 0, n;
  do {
    if (cap - len < 65536) {
      unsigned char *nb = realloc(buf, cap = cap * 2 + 65536);
      if (!nb) {
        free(buf);
        fclose(f);
        return NULL;
      }
      buf = nb;
    }
    n = fread(buf + len, 1, cap - len, f);
    len += n;
  } while (n > 0);
  int err = ferror(f);
  fclose(f);
  if (err) {
    free(buf);
    return NULL;
  }
  *size_out = len;
  return buf;
}

static int file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static const char *dtype_str(int dt) {
  switch (dt) {
  case OMRT_FLOAT32: return "float32";
  case OMRT_FLOAT16: return "float16";
  case 11: return "float64";
  case OMRT_INT8: return "int8";
  case OMRT_UINT8: return "uint8";
  case 4: return "uint16";
  case 5: return "int16";
  case OMRT_INT32: return "int32";
  case 12: return "uint32";
  case OMRT_INT64: return "int64";
  case 13: return "uint64";
  case OMRT_BOOL: return "bool";
  case 8: return "string";
  case 14: return "complex64";
  case 15: return "complex128";
  case 16: return "bfloat16";
  case 17: return "float8e4m3fn";
  case 18: return "float8e4m3fnuz";
  case 19: return "float8e5m2";
  case 20: return "float8e5m2fnuz";
  case 21: return "uint4";
  case 22: return "int4";
  case 23: return "float4e2m1";
  case 24: return "float8e8m0";
  case 25: return "uint2";
  case 26: return "int2";
  default: {
    static char buf[32]; /* a type newer than this table: its number */
    snprintf(buf, sizeof buf, "dtype%d", dt);
    return buf;
  }
  }
}

/* The float dtypes, the storage ones (bf16, float8, float4: common/types.h)
 * included; their elements are read through common/dtype_cvt.h. */
static int is_float(int dt) {
  return elem_is_float(dt) || (dtype_is_storage(dt) && dtype_working(dt) == DT_FLOAT32);
}

static double get_float(const void *data, int dt, size_t i) { return cvt_get(data, dt, i); }

static void put_float(void *data, int dt, size_t i, double v) {
  if (dt == OMRT_FLOAT16)
    ((uint16_t *)data)[i] = float_to_half((float)v);
  else if (dt == 11)
    ((double *)data)[i] = v;
  else
    ((float *)data)[i] = (float)v;
}

/* An integer or bool element widened for printing and comparison. */
static void get_int(const void *data, int dt, size_t i, int64_t *s, uint64_t *u, int *is_unsigned) {
  const unsigned char *p = data;
  *is_unsigned = 0;
  switch (dt) {
  case OMRT_INT8: *s = ((const int8_t *)p)[i]; break;
  case OMRT_UINT8:
  case OMRT_BOOL: *s = p[i]; break;
  case 5: *s = ((const int16_t *)p)[i]; break;
  case 4: *s = ((const uint16_t *)p)[i]; break;
  case OMRT_INT32: *s = ((const int32_t *)p)[i]; break;
  case 12: *s = ((const uint32_t *)p)[i]; break;
  case 13:
    *u = ((const uint64_t *)p)[i];
    *is_unsigned = 1;
    return;
  case DT_INT4:
  case DT_UINT4:
  case DT_INT2:
  case DT_UINT2: *s = (int64_t)cvt_get(p, dt, i); break;
  default: *s = ((const int64_t *)p)[i]; break;
  }
  *u = (uint64_t)*s;
}

static const char *dims_str(int rank, const int64_t *dims, char *buf, size_t size) {
  size_t n = (size_t)snprintf(buf, size, "[");
  for (int i = 0; i < rank && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, "%s%" PRId64, i ? "," : "", dims[i]);
  if (n < size) snprintf(buf + n, size - n, "]");
  return buf;
}

/* The multi-index of flat element `flat`, as "[i0,i1,...]". */
static const char *index_str(int rank, const int64_t *dims, size_t flat, char *buf, size_t size) {
  int64_t idx[MAX_RANK];
  for (int k = rank - 1; k >= 0; k--) {
    idx[k] = dims[k] ? (int64_t)(flat % (size_t)dims[k]) : 0;
    flat = dims[k] ? flat / (size_t)dims[k] : 0;
  }
  return dims_str(rank, idx, buf, size);
}

static size_t elem_count(int rank, const int64_t *dims) {
  size_t n = 1;
  for (int k = 0; k < rank; k++)
    n *= (size_t)dims[k];
  return n;
}

/* --- the model's facts */

static const char *elem_type_of(const Onnx__ValueInfoProto *vi) {
  const Onnx__TypeProto *tp = vi->type;
  if (!tp) return "untyped";
  switch (tp->value_case) {
  case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
    return tp->tensor_type && tp->tensor_type->has_elem_type ? dtype_str(tp->tensor_type->elem_type)
                                                             : "untyped";
  case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: return "sequence";
  case ONNX__TYPE_PROTO__VALUE_MAP_TYPE: return "map";
  case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: return "optional";
  case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE: return "sparse_tensor";
  default: return "untyped";
  }
}

static void add_dtype(char *list, size_t size, const char *dt) {
  size_t len = strlen(dt), n = strlen(list);
  for (const char *p = list; (p = strstr(p, dt)); p += len)
    if ((p == list || p[-1] == ',') && (p[len] == ',' || p[len] == '\0')) return;
  snprintf(list + n, size - n, "%s%s", n ? "," : "", dt);
}

/* Lowercase letters and digits of s, no underscores. */
static void squash(const char *s, char *out, size_t size) {
  size_t n = 0;
  for (; *s && n + 1 < size; s++)
    if (*s != '_') out[n++] = (char)(*s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s);
  out[n] = '\0';
}

/* The op a test counts toward: the model's one op type (Constant nodes
 * aside); among several, the one whose name starts the test's name (the
 * longest such); else the first. */
static void pick_op(const Onnx__GraphProto *g, const char *test, nt_meta *out) {
  char want[256], cand[128];
  squash(strncmp(test, "test_", 5) ? test : test + 5, want, sizeof want);
  const Onnx__NodeProto *best = NULL, *first = NULL;
  size_t best_len = 0;
  for (size_t i = 0; i < g->n_node; i++) {
    const Onnx__NodeProto *n = g->node[i];
    if (!strcmp(n->op_type, "Constant") && g->n_node > 1) continue;
    if (!first) first = n;
    squash(n->op_type, cand, sizeof cand);
    size_t len = strlen(cand);
    if (len > best_len && !strncmp(want, cand, len)) best = n, best_len = len;
  }
  if (!best) best = first;
  if (!best) return;
  snprintf(out->op, sizeof out->op, "%s", best->op_type);
  snprintf(out->domain, sizeof out->domain, "%s", is_default_domain(best->domain) ? "ai.onnx" : best->domain);
}

static Onnx__ModelProto *unpack_model(const char *path) {
  size_t size = 0;
  void *bytes = read_whole(path, &size);
  if (!bytes) return NULL;
  Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, size, bytes);
  free(bytes);
  if (m && !m->graph) {
    onnx__model_proto__free_unpacked(m, NULL);
    m = NULL;
  }
  return m;
}

void nt_describe(const char *root, const char *test, nt_meta *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->op, sizeof out->op, "?");
  char path[4096], base[256];
  snprintf(base, sizeof base, "%s", test);
  char *cut = strstr(base, "_expanded");
  out->expanded = cut != NULL;
  if (cut) *cut = '\0';

  snprintf(path, sizeof path, "%s/%s/model.onnx", root, test);
  Onnx__ModelProto *m = unpack_model(path);
  if (!m) return;
  const Onnx__GraphProto *g = m->graph;
  for (size_t i = 0; i < g->n_input; i++)
    add_dtype(out->dtypes, sizeof out->dtypes, elem_type_of(g->input[i]));
  for (size_t i = 0; i < g->n_output; i++)
    add_dtype(out->dtypes, sizeof out->dtypes, elem_type_of(g->output[i]));

  /* An expanded test counts toward its un-expanded twin's op. */
  Onnx__ModelProto *twin = NULL;
  if (cut) {
    snprintf(path, sizeof path, "%s/%s/model.onnx", root, base);
    twin = unpack_model(path);
  }
  pick_op(twin ? twin->graph : g, base, out);
  if (twin) onnx__model_proto__free_unpacked(twin, NULL);
  /* The opset of the op's domain, as this model imports it. */
  for (size_t i = 0; i < m->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *o = m->opset_import[i];
    int same = is_default_domain(o->domain) ? !strcmp(out->domain, "ai.onnx") || !out->domain[0]
                                            : !strcmp(o->domain, out->domain);
    if (same) out->opset = (int)o->version;
  }
  onnx__model_proto__free_unpacked(m, NULL);
}

/* --- running a test */

typedef struct nt_input {
  const char *name; /* the graph input's name (borrowed from the model) */
  int bound;        /* bound as a constant (a compile-time slot) */
  int read_ok;
  char read_err[1100]; /* why input_N.pb could not be read */
  onnx_tensor t;
} nt_input;

typedef struct nt_state {
  const char *dir;
  om_precision mode;
  unsigned threads; /* runtime worker threads; 0: its default */
  char *reason;
  size_t reason_size;
  uint32_t *digest_out; /* the outputs' CRC-32C, or NULL */
  arena a;              /* tensors */
  Onnx__ModelProto *model;
  nt_input in[MAX_IO];
  int nin;
  void *model_bytes; /* the (rewritten) ModelProto to compile */
  size_t model_size;
  void *om; /* the package (malloc'd by atc_compile) */
  size_t om_size;
  omrt_model *rt;
  omrt_context *ctx;
  void *bufs[2 * MAX_IO]; /* run-time buffers to free */
  int nbufs;
} nt_state;

static int fail(nt_state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(nt_state *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->reason, s->reason_size, fmt, ap);
  va_end(ap);
  s->reason[strcspn(s->reason, "\r\n")] = '\0';
  return 1;
}

static int is_initializer(const Onnx__GraphProto *g, const char *name) {
  for (size_t i = 0; i < g->n_initializer; i++)
    if (g->initializer[i]->name && !strcmp(g->initializer[i]->name, name)) return 1;
  return 0;
}

/* "DIR/test_data_set_0/input_3.pb"; without "DIR/" when dir is "." (the
 * runner's children run in the test's directory, so messages stay short). */
static void data_path(const nt_state *s, char *path, size_t size, const char *kind, int n) {
  int here = !strcmp(s->dir, ".");
  snprintf(path, size, "%s%stest_data_set_0/%s_%d.pb", here ? "" : s->dir, here ? "" : "/", kind, n);
}

/* Step 2: the graph inputs that are not initializers, and their data. */
static int read_inputs(nt_state *s) {
  const Onnx__GraphProto *g = s->model->graph;
  char path[4096];
  for (size_t i = 0; i < g->n_input; i++) {
    const Onnx__ValueInfoProto *vi = g->input[i];
    if (!vi->name || !*vi->name || is_initializer(g, vi->name)) continue;
    if (s->nin == MAX_IO) return fail(s, "the model has more than %d graph inputs", MAX_IO);
    nt_input *in = &s->in[s->nin];
    in->name = vi->name;
    data_path(s, path, sizeof path, "input", s->nin);
    s->nin++;
    if (!file_exists(path))
      return fail(s, "test_data_set_0/input_%d.pb is missing (input '%s')", s->nin - 1, vi->name);
    /* A sequence or optional input is no TensorProto: the compiler reports it. */
    if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
      snprintf(in->read_err, sizeof in->read_err, "input '%s' is a %s, not a tensor", vi->name,
               elem_type_of(vi));
      continue;
    }
    diag d;
    diag_init(&d);
    if (onnx_read_tensor_file(path, &s->a, &in->t, &d) == ST_OK)
      in->read_ok = 1;
    else
      snprintf(in->read_err, sizeof in->read_err, "%s", d.msg);
    in->bound = is_compile_time(g, vi->name, 0);
    if (in->bound && !in->read_ok) return fail(s, "compile-time input '%s': %s", vi->name, in->read_err);
  }
  data_path(s, path, sizeof path, "input", s->nin);
  if (file_exists(path))
    return fail(s, "test_data_set_0 has more input files than the model's %d graph inputs", s->nin);
  return 0;
}

/* Step 3: the bound inputs become initializers; the model is packed again. */
static int bind_constants(nt_state *s) {
  Onnx__GraphProto *g = s->model->graph;
  int nbound = 0;
  for (int i = 0; i < s->nin; i++)
    nbound += s->in[i].bound;
  if (nbound == 0) return 0; /* the original bytes are compiled */

  Onnx__TensorProto *tp = calloc((size_t)nbound, sizeof *tp);
  Onnx__TensorProto **init = malloc((g->n_initializer + (size_t)nbound) * sizeof *init);
  Onnx__ValueInfoProto **inputs = malloc((g->n_input ? g->n_input : 1) * sizeof *inputs);
  if (!tp || !init || !inputs) {
    free(tp), free(init), free(inputs);
    return fail(s, "out of memory");
  }
  size_t ninit = g->n_initializer, ninputs = 0;
  memcpy(init, g->initializer, ninit * sizeof *init);
  for (size_t i = 0; i < g->n_input; i++) {
    const nt_input *in = NULL;
    for (int k = 0; k < s->nin && !in; k++)
      if (s->in[k].bound && s->in[k].name == g->input[i]->name) in = &s->in[k];
    if (!in) {
      inputs[ninputs++] = g->input[i];
      continue;
    }
    Onnx__TensorProto *t = &tp[ninit - g->n_initializer];
    onnx__tensor_proto__init(t);
    t->name = (char *)in->name;
    t->n_dims = (size_t)in->t.rank;
    t->dims = (int64_t *)in->t.dims;
    t->has_data_type = 1;
    t->data_type = in->t.dtype;
    t->has_raw_data = 1;
    t->raw_data.len = in->t.bytes;
    t->raw_data.data = in->t.data;
    init[ninit++] = t;
  }
  /* Pack with the rewritten lists, then put the model's own lists back. */
  Onnx__TensorProto **init0 = g->initializer;
  Onnx__ValueInfoProto **inputs0 = g->input;
  size_t ninit0 = g->n_initializer, ninputs0 = g->n_input;
  g->initializer = init, g->n_initializer = ninit;
  g->input = inputs, g->n_input = ninputs;
  size_t size = onnx__model_proto__get_packed_size(s->model);
  void *bytes = malloc(size ? size : 1);
  if (bytes) onnx__model_proto__pack(s->model, bytes);
  g->initializer = init0, g->n_initializer = ninit0;
  g->input = inputs0, g->n_input = ninputs0;
  free(tp), free(init), free(inputs);
  if (!bytes) return fail(s, "out of memory packing the model");
  free(s->model_bytes);
  s->model_bytes = bytes;
  s->model_size = size;
  return 0;
}

/* --input_shape for run-time inputs whose declared dims are not all known. */
static void input_shape_spec(const nt_state *s, char *spec, size_t size) {
  const Onnx__GraphProto *g = s->model->graph;
  size_t n = 0;
  spec[0] = '\0';
  for (int i = 0; i < s->nin; i++) {
    const nt_input *in = &s->in[i];
    if (in->bound || !in->read_ok || in->t.rank == 0) continue;
    const Onnx__TypeProto__Tensor *tt = NULL;
    for (size_t k = 0; k < g->n_input; k++)
      if (g->input[k]->name == in->name && g->input[k]->type) tt = g->input[k]->type->tensor_type;
    if (tt && tt->shape && (int)tt->shape->n_dim != in->t.rank) continue; /* reported at run time */
    int fixed = tt && tt->shape;
    for (size_t k = 0; fixed && k < tt->shape->n_dim; k++)
      fixed = tt->shape->dim[k]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    if (fixed) continue;
    n += (size_t)snprintf(spec + n, n < size ? size - n : 0, "%s%s:", n ? ";" : "", in->name);
    for (int k = 0; k < in->t.rank; k++)
      n += (size_t)snprintf(spec + n, n < size ? size - n : 0, "%s%" PRId64, k ? "," : "", in->t.dims[k]);
  }
  if (n >= size) spec[0] = '\0'; /* too long: let the compiler say which dim is unknown */
}

/* Step 4. */
static int compile(nt_state *s) {
  char spec[4096];
  input_shape_spec(s, spec, sizeof spec);
  atc_options o = {.model_path = "model.onnx",
                   .model_data = s->model_bytes,
                   .model_size = s->model_size,
                   .soc_version = "Ascend310",
                   .precision = s->mode,
                   .input_shape = spec[0] ? spec : NULL,
                   .cmdline = "conformance"};
  atc_result r;
  diag d;
  diag_init(&d);
  if (atc_compile(&o, &r, &d) != ST_OK) return fail(s, "atc: %s", d.msg);
  s->om = r.om_data;
  s->om_size = (size_t)r.om_bytes;
  return 0;
}

static void *new_buf(nt_state *s, size_t bytes) {
  void *p = aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
  if (p) s->bufs[s->nbufs++] = p;
  return p;
}

/* Compares output `k` (package output `desc`, data `got`) with `want`. */
static int compare(nt_state *s, int k, const omrt_tensor_desc *desc, const void *got,
                   const onnx_tensor *want) {
  char b1[160], b2[160];
  int wdt = want->dtype, gdt = desc->dtype;
  int float_ok = elem_is_float(wdt) && elem_is_float(gdt) && s->mode == OM_PRECISION_FORCE_FP16;
  if (wdt != gdt && !float_ok)
    return fail(s, "output %d '%s': dtype %s, expected %s", k, desc->name, dtype_str(gdt), dtype_str(wdt));
  int same_dims = desc->rank == want->rank;
  for (int i = 0; same_dims && i < want->rank; i++)
    same_dims = desc->dims[i] == want->dims[i];
  if (!same_dims)
    return fail(s, "output %d '%s': shape %s, expected %s", k, desc->name,
                dims_str(desc->rank, desc->dims, b1, sizeof b1),
                dims_str(want->rank, want->dims, b2, sizeof b2));
  size_t n = elem_count(want->rank, want->dims), bad = 0, worst_at = 0;
  if (!is_float(wdt)) {
    for (size_t i = 0; i < n; i++) {
      int64_t gs, ws;
      uint64_t gu, wu;
      int uns;
      get_int(got, gdt, i, &gs, &gu, &uns);
      get_int(want->data, wdt, i, &ws, &wu, &uns);
      if (gu != wu && !bad++) worst_at = i;
    }
    if (!bad) return 0;
    int64_t gs, ws;
    uint64_t gu, wu;
    int uns;
    get_int(got, gdt, worst_at, &gs, &gu, &uns);
    get_int(want->data, wdt, worst_at, &ws, &wu, &uns);
    index_str(want->rank, want->dims, worst_at, b1, sizeof b1);
    if (uns)
      return fail(s,
                  "output %d '%s': %zu of %zu elements differ, first at %s (got %" PRIu64
                  ", expected %" PRIu64 ")",
                  k, desc->name, bad, n, b1, gu, wu);
    return fail(
        s, "output %d '%s': %zu of %zu elements differ, first at %s (got %" PRId64 ", expected %" PRId64 ")",
        k, desc->name, bad, n, b1, gs, ws);
  }
  nt_tolerance tol = nt_tolerance_for(s->mode);
  if (dtype_is_storage(wdt)) tol = nt_tolerance_storage(wdt, tol);
  double worst = 0, worst_err = 0;
  for (size_t i = 0; i < n; i++) {
    double g = get_float(got, gdt, i), w = get_float(want->data, wdt, i), over;
    if (isnan(w) || isinf(w)) {
      int ok = isnan(w) ? isnan(g) : g == w;
      over = ok ? 0 : INFINITY;
    } else {
      double err = fabs(g - w), allowed = tol.atol + tol.rtol * fabs(w);
      over = isnan(g) ? INFINITY : err > allowed ? err / allowed : 0;
    }
    if (over > 0) {
      bad++;
      if (over > worst || (isinf(over) && !isinf(worst))) {
        worst = over, worst_at = i;
        worst_err = fabs(g - w);
      }
    }
  }
  if (!bad) return 0;
  double g = get_float(got, gdt, worst_at), w = get_float(want->data, wdt, worst_at);
  index_str(want->rank, want->dims, worst_at, b1, sizeof b1);
  return fail(s,
              "output %d '%s': max err %.3g at %s (got %.7g, expected %.7g), %zu of %zu over "
              "atol %g + rtol %g",
              k, desc->name, worst_err, b1, g, w, bad, n, tol.atol, tol.rtol);
}

/* Step 5 and 6. */
static int execute(nt_state *s) {
  omrt_load_options lo = {.threads = s->threads};
  if (omrt_model_load_memory(s->om, s->om_size, &lo, &s->rt) != OMRT_OK)
    return fail(s, "omrt: cannot load the package: %s", omrt_last_error());
  int nin = omrt_model_num_inputs(s->rt), nout = omrt_model_num_outputs(s->rt);
  const Onnx__GraphProto *g = s->model->graph;
  if (nin > MAX_IO || nout > MAX_IO || nout < 0 || nin < 0)
    return fail(s, "the package has %d inputs and %d outputs", nin, nout);
  if ((size_t)nout != g->n_output)
    return fail(s, "the package has %d outputs, the model %zu", nout, g->n_output);

  const void *inputs[MAX_IO];
  for (int j = 0; j < nin; j++) {
    omrt_tensor_desc desc;
    if (omrt_model_input(s->rt, j, &desc) != OMRT_OK) return fail(s, "omrt: %s", omrt_last_error());
    const nt_input *in = NULL;
    for (int i = 0; i < s->nin && !in; i++)
      if (!s->in[i].bound && !strcmp(s->in[i].name, desc.name)) in = &s->in[i];
    if (!in) return fail(s, "the package has input '%s', which no test input feeds", desc.name);
    if (!in->read_ok) return fail(s, "%s", in->read_err);
    char b1[160], b2[160];
    int same = desc.rank == in->t.rank;
    for (int k = 0; same && k < desc.rank; k++)
      same = desc.dims[k] == in->t.dims[k];
    if (!same)
      return fail(s, "input '%s': the package wants shape %s, the test gives %s", desc.name,
                  dims_str(desc.rank, desc.dims, b1, sizeof b1),
                  dims_str(in->t.rank, in->t.dims, b2, sizeof b2));
    if (desc.dtype == in->t.dtype) {
      inputs[j] = in->t.data;
      continue;
    }
    if (!(elem_is_float(desc.dtype) && elem_is_float(in->t.dtype) && s->mode == OM_PRECISION_FORCE_FP16))
      return fail(s, "input '%s': the package wants %s, the test gives %s", desc.name, dtype_str(desc.dtype),
                  dtype_str(in->t.dtype));
    void *conv = new_buf(s, desc.bytes);
    if (!conv) return fail(s, "out of memory");
    size_t n = elem_count(in->t.rank, in->t.dims);
    for (size_t i = 0; i < n; i++)
      put_float(conv, desc.dtype, i, get_float(in->t.data, in->t.dtype, i));
    inputs[j] = conv;
  }

  void *outputs[MAX_IO];
  omrt_tensor_desc odesc[MAX_IO];
  for (int j = 0; j < nout; j++) {
    if (omrt_model_output(s->rt, j, &odesc[j]) != OMRT_OK) return fail(s, "omrt: %s", omrt_last_error());
    if (!(outputs[j] = new_buf(s, odesc[j].bytes))) return fail(s, "out of memory");
    memset(outputs[j], 0xA5, odesc[j].bytes); /* never pass on stale zeros */
  }
  if (omrt_context_new(s->rt, &s->ctx) != OMRT_OK)
    return fail(s, "omrt: cannot create a context: %s", omrt_last_error());
  if (omrt_execute(s->ctx, inputs, outputs) != OMRT_OK)
    return fail(s, "omrt: execute: %s", omrt_last_error());
  for (int j = 0; j < nout; j++) /* a counted output's actual dims: its valid part is compared */
    if (odesc[j].count_axis >= 0 && omrt_context_output_dims(s->ctx, j, &odesc[j]) != OMRT_OK)
      return fail(s, "omrt: %s", omrt_last_error());

  uint32_t digest = 0;
  for (int j = 0; j < nout; j++)
    digest = crc32c(digest, outputs[j], odesc[j].bytes);
  if (s->digest_out) *s->digest_out = digest;
  for (int j = 0; j < nout; j++) {
    int k = j; /* the graph output this package output is */
    for (size_t i = 0; i < g->n_output; i++)
      if (g->output[i]->name && !strcmp(g->output[i]->name, odesc[j].name)) k = (int)i;
    char path[4096];
    data_path(s, path, sizeof path, "output", k);
    if (!file_exists(path)) return fail(s, "test_data_set_0/output_%d.pb is missing", k);
    onnx_tensor want;
    diag d;
    diag_init(&d);
    if (onnx_read_tensor_file(path, &s->a, &want, &d) != ST_OK)
      return fail(s, "expected output %d: %s", k, d.msg);
    if (compare(s, k, &odesc[j], outputs[j], &want)) return 1;
  }
  return 0;
}

int nt_run(const char *dir, om_precision mode, unsigned threads, char *reason, size_t reason_size,
           uint32_t *digest_out) {
  nt_state s = {.dir = dir,
                .mode = mode,
                .threads = threads,
                .reason = reason,
                .reason_size = reason_size,
                .digest_out = digest_out};
  if (digest_out) *digest_out = 0;
  reason[0] = '\0';
  arena_init(&s.a, 0);
  char path[4096];
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  int rc = 0;
  s.model_bytes = read_whole(path, &s.model_size);
  if (!s.model_bytes) rc = fail(&s, "cannot read %s", path);
  if (!rc && !(s.model = onnx__model_proto__unpack(NULL, s.model_size, s.model_bytes)))
    rc = fail(&s, "model.onnx: not a ModelProto protobuf-c can unpack");
  if (!rc && !s.model->graph) rc = fail(&s, "model.onnx has no graph");
  if (!rc) rc = read_inputs(&s);
  if (!rc) rc = bind_constants(&s);
  if (!rc) rc = compile(&s);
  if (!rc) rc = execute(&s);

  omrt_context_free(s.ctx);
  omrt_model_free(s.rt);
  for (int i = 0; i < s.nbufs; i++)
    free(s.bufs[i]);
  free(s.om);
  free(s.model_bytes);
  if (s.model) onnx__model_proto__free_unpacked(s.model, NULL);
  arena_free(&s.a);
  return rc;
}
