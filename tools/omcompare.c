/* omcompare - per-node accuracy: an om against the ONNX model it was built
 * from (or against golden tensors another framework dumped).
 *
 *   omcompare --model X.onnx --om X.om [--input a.bin[,b.bin]] [--golden DIR]
 *             [--output DIR] [--threshold 0.9999] [--threads N]
 *
 * The om runs once on the inputs (raw files as omrun reads them; omitted:
 * zeros) with a layer dump into DIR/dump (tools/layer_dump.h: every task's
 * outputs as float32 in ONNX layout, named after the ONNX tensors). The
 * reference is the ONNX model run in fp32 by the compiler's reference
 * evaluator (ir/eval.h, after shape inference with the om's input shapes),
 * node by node, each tensor compared as soon as it is computed and freed
 * after its last reader; or, with --golden DIR, DIR/<tensor>.npy files
 * named by ONNX tensor name (characters outside [A-Za-z0-9._-] as '_').
 * Tensors are matched by ONNX name. One row per ONNX node output both sides
 * have, in the ONNX graph's order: node, op type, tensor, cosine
 * similarity, max absolute error, max relative error (|d| / max(|ref|,
 * 1e-6)), relative Euclidean distance (||om - ref|| / ||ref||). The first
 * row below the cosine threshold is marked "<< first below", the row whose
 * cosine fell most below its node's inputs' (its "drop") "<< largest drop".
 * The table is printed and written to DIR/compare.csv. Exit 0 when every
 * row meets the threshold, 2 when one does not, 1 on error.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "frontend/onnx_import.h"
#include "ir/eval.h"
#include "omrt.h"
#include "passes/pass.h"
#include "tools/layer_dump.h"
#include "tools/npy.h"
#include "tools/omrun_io.h"

static const char usage[] =
    "usage: omcompare --model X.onnx --om X.om [--input a.bin[,b.bin...]] [--golden DIR]\n"
    "                 [--output DIR] [--threshold 0.9999] [--threads N]\n"
    "  --model      the ONNX model the om was built from\n"
    "  --om         the om package\n"
    "  --input      comma-separated raw input files (the om's input dtypes and shapes, C order);\n"
    "               omitted: zeros\n"
    "  --golden     directory of reference tensors, <ONNX tensor name>.npy ('/' and other\n"
    "               characters outside [A-Za-z0-9._-] as '_'), instead of the reference evaluator\n"
    "  --output     where the om's layer dump (DIR/dump) and DIR/compare.csv go (default omcompare)\n"
    "  --threshold  cosine similarity a tensor must reach (default 0.9999)\n"
    "  --threads    libomrt's worker threads\n";

typedef struct options {
  const char *model, *om, *input, *golden, *output;
  double threshold;
  long threads;
} options;

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("omcompare: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return 1;
}

/* One compared tensor. */
typedef struct row {
  const char *tensor; /* the graph's name */
  int src;            /* index in g->src */
  double cosine, max_abs, max_rel, rel_euclid, drop;
  size_t count;
} row;

typedef struct compare {
  const options *o;
  ir_graph *g;
  layer_dump *dump;
  row *rows;
  int nrows, rows_cap;
  int *src_of; /* per value id: the source node producing it, or -1 */
} compare;

static void metrics(const float *om, const float *ref, size_t n, row *r) {
  double dot = 0, na = 0, nb = 0, nd = 0;
  r->max_abs = r->max_rel = 0;
  for (size_t i = 0; i < n; i++) {
    double a = om[i], b = ref[i], e = fabs(a - b);
    dot += a * b, na += a * a, nb += b * b, nd += e * e;
    if (!(e <= r->max_abs)) r->max_abs = e; /* NaN wins */
    double rel = e / fmax(fabs(b), 1e-6);
    if (!(rel <= r->max_rel)) r->max_rel = rel;
  }
  r->cosine = na == 0 && nb == 0 ? 1 : na == 0 || nb == 0 ? 0 : dot / (sqrt(na) * sqrt(nb));
  r->rel_euclid = nb == 0 ? sqrt(nd) : sqrt(nd) / sqrt(nb);
  r->count = n;
}

/* Compares tensor `name` (reference data ref, NULL: read the golden file)
 * against the om's dump, adding a row when both exist. */
static int compare_tensor(compare *c, const char *name, int src, const float *ref, int rank,
                          const int64_t *dims) {
  const char *path = layer_dump_file(c->dump, name);
  if (!path) return 0;
  char err[512];
  int orank, grank;
  int64_t odims[NPY_MAX_RANK], gdims[NPY_MAX_RANK];
  float *om = NULL, *gold = NULL;
  if (npy_read_f32(path, &orank, odims, &om, err, sizeof err)) return fail("%s", err);
  if (!ref) {
    char file[512], gpath[4096];
    npy_file_name(name, file, sizeof file);
    snprintf(gpath, sizeof gpath, "%s/%s.npy", c->o->golden, file);
    if (npy_read_f32(gpath, &grank, gdims, &gold, err, sizeof err)) {
      free(om);
      return 0; /* no golden tensor for it */
    }
    ref = gold, rank = grank, dims = gdims;
  }
  size_t n = 1, m = 1;
  for (int k = 0; k < rank; k++)
    n *= (size_t)dims[k];
  for (int k = 0; k < orank; k++)
    m *= (size_t)odims[k];
  int rc = 0;
  if (n != m) {
    rc = fail("tensor '%s': the om's has %zu elements, the reference %zu", name, m, n);
  } else if (c->nrows == c->rows_cap &&
             arena_grow(&c->g->arena, (void **)&c->rows, &c->rows_cap, c->nrows, sizeof *c->rows)) {
    rc = fail("out of memory");
  } else {
    row *r = &c->rows[c->nrows++];
    memset(r, 0, sizeof *r);
    r->tensor = name, r->src = src;
    metrics(om, ref, n, r);
  }
  free(om);
  free(gold);
  return rc;
}

/* The reference evaluator over the whole graph, comparing as it goes;
 * values are freed after their last reader. */
static int run_reference(compare *c, void *const *inputs) {
  ir_graph *g = c->g;
  diag d;
  diag_init(&d);
  void **val = calloc((size_t)g->nvalues + 1, sizeof *val);
  int *uses = calloc((size_t)g->nvalues + 1, sizeof *uses);
  if (!val || !uses) return free(val), free(uses), fail("out of memory");
  for (int i = 0; i < g->nnodes; i++)
    for (int k = 0; k < g->nodes[i]->nin; k++)
      if (g->nodes[i]->in[k]) uses[g->nodes[i]->in[k]->id]++;
  for (int i = 0; i < g->ninputs; i++)
    val[g->inputs[i]->id] = inputs[i];
  int rc = 0;
  float *f32 = NULL;
  size_t f32_cap = 0;
  for (int i = 0; i < g->nnodes && !rc; i++) {
    ir_node *n = g->nodes[i];
    const void *in[64] = {0};
    void *out[64] = {0};
    if (n->nin > 64 || n->nout > 64) {
      rc = fail("node '%s': too many inputs or outputs", n->name);
      break;
    }
    for (int k = 0; k < n->nin; k++)
      in[k] = !n->in[k] ? NULL : n->in[k]->data ? n->in[k]->data : val[n->in[k]->id];
    arena a;
    arena_init(&a, 0);
    if (ir_eval_node(n, in, out, &a, &d) != ST_OK) {
      rc = fail("reference evaluator: %s", d.msg);
      arena_free(&a);
      break;
    }
    for (int k = 0; k < n->nout && !rc; k++) {
      ir_value *v = n->out[k];
      int64_t bytes = v ? ir_value_bytes(v) : -1, count = v ? ir_value_elements(v) : -1;
      if (!v || bytes < 0) continue;
      if (!(val[v->id] = malloc((size_t)bytes + 1))) {
        rc = fail("out of memory");
        break;
      }
      memcpy(val[v->id], out[k], (size_t)bytes);
      if (c->src_of[v->id] < 0) continue;
      if ((size_t)count > f32_cap) {
        free(f32);
        if (!(f32 = malloc((size_t)count * sizeof *f32 + 1))) {
          rc = fail("out of memory");
          break;
        }
        f32_cap = (size_t)count;
      }
      for (int64_t e = 0; e < count; e++)
        f32[e] = (float)elem_get(val[v->id], v->dtype, (size_t)e);
      rc = compare_tensor(c, v->name, c->src_of[v->id], f32, v->rank, v->dims);
    }
    arena_free(&a);
    for (int k = 0; k < n->nin; k++) {
      ir_value *v = n->in[k];
      if (v && !v->data && v->input_index < 0 && --uses[v->id] == 0) free(val[v->id]), val[v->id] = NULL;
    }
  }
  for (int i = 0; i < g->nvalues; i++)
    if (g->values[i]->input_index < 0) free(val[i]);
  free(f32);
  free(val);
  free(uses);
  return rc;
}

static int run_golden(compare *c) {
  for (int i = 0; i < c->g->nsrc; i++)
    for (int k = 0; k < c->g->src[i].nout; k++)
      if (*c->g->src[i].out[k] && compare_tensor(c, c->g->src[i].out[k], i, NULL, 0, NULL)) return 1;
  return 0;
}

static int row_cmp(const void *a, const void *b) {
  const row *x = a, *y = b;
  return (x->src > y->src) - (x->src < y->src);
}

/* drop: the lowest cosine among the row's node's input tensors (1 when
 * none has a row) minus its own. */
static void drops(compare *c) {
  for (int i = 0; i < c->nrows; i++) {
    const ir_source *s = &c->g->src[c->rows[i].src];
    double before = 1;
    for (int k = 0; k < s->nin; k++)
      for (int j = 0; j < c->nrows; j++)
        if (!strcmp(c->rows[j].tensor, s->in[k]) && c->rows[j].cosine < before) before = c->rows[j].cosine;
    c->rows[i].drop = before - c->rows[i].cosine;
  }
}

static int report(compare *c) {
  qsort(c->rows, (size_t)c->nrows, sizeof *c->rows, row_cmp);
  drops(c);
  int first = -1, worst = -1;
  for (int i = 0; i < c->nrows; i++) {
    if (first < 0 && !(c->rows[i].cosine >= c->o->threshold)) first = i;
    if (worst < 0 || c->rows[i].drop > c->rows[worst].drop) worst = i;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/compare.csv", c->o->output);
  FILE *f = fopen(path, "w");
  if (!f) return fail("cannot create '%s': %s", path, strerror(errno));
  fprintf(f, "index,node,op_type,tensor,elements,cosine,max_abs_err,max_rel_err,rel_euclidean,mark\n");
  printf("%5s  %-44s %-18s %10s %11s %11s %11s\n", "#", "node", "op type", "cosine", "max abs", "max rel",
         "rel euclid");
  for (int i = 0; i < c->nrows; i++) {
    const row *r = &c->rows[i];
    const ir_source *s = &c->g->src[r->src];
    const char *mark = i == first && i == worst ? "first below threshold; largest drop"
                       : i == first             ? "first below threshold"
                       : i == worst             ? "largest drop"
                                                : "";
    printf("%5d  %-44s %-18s %10.6f %11.4g %11.4g %11.4g%s%s\n", i, s->name, s->op_type, r->cosine,
           r->max_abs, r->max_rel, r->rel_euclid, *mark ? "  << " : "", mark);
    fprintf(f, "%d,\"%s\",%s,\"%s\",%zu,%.9f,%.9g,%.9g,%.9g,%s\n", i, s->name, s->op_type, r->tensor,
            r->count, r->cosine, r->max_abs, r->max_rel, r->rel_euclid, mark);
  }
  int bad = ferror(f);
  if (fclose(f) != 0 || bad) return fail("cannot write '%s'", path);
  printf("%d tensors compared; ", c->nrows);
  if (first >= 0)
    printf("first below %.6g: '%s' (%s), cosine %.6f\n", c->o->threshold, c->g->src[c->rows[first].src].name,
           c->g->src[c->rows[first].src].op_type, c->rows[first].cosine);
  else
    printf("all at or above %.6g\n", c->o->threshold);
  if (worst >= 0)
    printf("largest drop: '%s' (%s), cosine %.6f, %.6f below its inputs'\n",
           c->g->src[c->rows[worst].src].name, c->g->src[c->rows[worst].src].op_type, c->rows[worst].cosine,
           c->rows[worst].drop);
  printf("wrote %s\n", path);
  return first >= 0 ? 2 : 0;
}

static int parse_args(int argc, char **argv, options *o) {
  const char *threshold = NULL, *threads = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) return 2;
    if (strncmp(a, "--", 2) != 0) return fail("unexpected argument '%s' (see --help)", a);
    const char *name = a + 2, *eq = strchr(name, '='), *val;
    size_t n = eq ? (size_t)(eq - name) : strlen(name);
    if (eq) {
      val = eq + 1;
    } else {
      if (i + 1 >= argc) return fail("--%s needs a value", name);
      val = argv[++i];
    }
#define IS(s) (n == sizeof s - 1 && !strncmp(name, s, n))
    const char **slot = IS("model")       ? &o->model
                        : IS("om")        ? &o->om
                        : IS("input")     ? &o->input
                        : IS("golden")    ? &o->golden
                        : IS("output")    ? &o->output
                        : IS("threshold") ? &threshold
                        : IS("threads")   ? &threads
                                          : NULL;
#undef IS
    if (!slot) return fail("unknown flag '--%.*s' (see --help)", (int)n, name);
    *slot = val;
  }
  if (!o->model || !o->om) return fail("--model and --om are required (see --help)");
  char *end;
  if (threshold &&
      ((o->threshold = strtod(threshold, &end)), *end || !(o->threshold > 0 && o->threshold <= 1)))
    return fail("--threshold: '%s' is not a number in (0, 1]", threshold);
  if (threads && ((o->threads = strtol(threads, &end, 10)), *end || o->threads < 1 || o->threads > 1024))
    return fail("--threads: '%s' is not an integer in 1..1024", threads);
  return 0;
}

/* Loads the ONNX model with the om's input shapes and infers every shape. */
static int load_onnx(const options *o, const omrt_model *m, ir_graph **g_out) {
  int nin = omrt_model_num_inputs(m);
  onnx_input_shape *shapes = calloc((size_t)nin + 1, sizeof *shapes);
  if (!shapes) return fail("out of memory");
  for (int i = 0; i < nin; i++) {
    omrt_tensor_desc d;
    omrt_model_input(m, i, &d);
    shapes[i].name = d.name, shapes[i].rank = d.rank;
    memcpy(shapes[i].dims, d.dims, sizeof shapes[i].dims);
  }
  onnx_options oo = {.input_shapes = shapes, .ninput_shapes = nin};
  diag d;
  diag_init(&d);
  pass_ctx pc = {0};
  status st = onnx_load_file(o->model, &oo, g_out, &d);
  if (st == ST_OK) st = pass_shape_infer(*g_out, &pc, &d);
  free(shapes);
  if (st != ST_OK) return fail("%s", d.msg);
  return 0;
}

static int run(const options *o, omrt_model **m, omrt_context **ctx, ir_graph **g, void ***bufs, int *nbufs) {
  omrt_load_options lo = {.threads = (uint32_t)o->threads};
  if (omrt_model_load_file(o->om, &lo, m) != OMRT_OK) return fail("%s", omrt_last_error());
  if (omrt_model_num_gears(*m) > 1)
    return fail("%s: a model with %d shape gears (compare a model built without --dynamic_*)", o->om,
                omrt_model_num_gears(*m));
  if (!omrt_model_task_node(*m, 0, 0) && omrt_model_num_tasks(*m) > 0) {
    omrt_task_info ti;
    int any = 0;
    for (int t = 0; t < omrt_model_num_tasks(*m) && !any; t++)
      any = omrt_model_task(*m, t, &ti) == OMRT_OK && ti.nnodes > 0;
    if (!any)
      return fail("%s records no ONNX nodes (an om older than format 2.2): rebuild it with atc", o->om);
  }
  int nin = omrt_model_num_inputs(*m), nout = omrt_model_num_outputs(*m);
  *nbufs = nin + nout;
  if (!(*bufs = calloc((size_t)*nbufs + 1, sizeof **bufs))) return fail("out of memory");
  samples sm = {0};
  if (o->input && samples_list(o->input, nin, &sm)) return 1;
  if (o->input && (sm.from_dirs || sm.count != 1)) {
    samples_free(&sm);
    return fail("--input: one file per model input");
  }
  for (int i = 0; i < *nbufs; i++) {
    omrt_tensor_desc d;
    if (i < nin)
      omrt_model_input(*m, i, &d);
    else
      omrt_model_output(*m, i - nin, &d);
    if (!((*bufs)[i] = calloc(1, d.bytes + 64))) return samples_free(&sm), fail("out of memory");
    if (i < nin && o->input && read_input(sm.paths[i], (*bufs)[i], d.bytes, i, "the model"))
      return samples_free(&sm), 1;
  }
  samples_free(&sm);
  if (load_onnx(o, *m, g)) return 1;

  compare c = {.o = o, .g = *g};
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/dump", o->output);
  if (!(c.src_of = calloc((size_t)(*g)->nvalues + 1, sizeof *c.src_of))) return fail("out of memory");
  for (int i = 0; i < (*g)->nvalues; i++) {
    c.src_of[i] = -1;
    for (int s = 0; s < (*g)->nsrc; s++)
      for (int k = 0; k < (*g)->src[s].nout; k++)
        if (!strcmp((*g)->src[s].out[k], (*g)->values[i]->name)) c.src_of[i] = s;
  }
  omrt_context_options co = {0};
  int rc = 1;
  if (omrt_context_new_with(*m, &co, ctx) != OMRT_OK)
    fail("%s", omrt_last_error());
  else if (!layer_dump_open(*m, dir, NULL, &c.dump)) {
    omrt_context_set_task_hook(*ctx, layer_dump_hook, c.dump);
    if (omrt_execute(*ctx, (const void *const *)*bufs, *bufs + nin) != OMRT_OK)
      fail("%s", omrt_last_error());
    else if (!(o->golden ? run_golden(&c) : run_reference(&c, *bufs)))
      rc = report(&c);
  }
  layer_dump_close(c.dump, NULL);
  free(c.src_of);
  return rc;
}

int main(int argc, char **argv) {
  options o = {.threshold = 0.9999, .output = "omcompare"};
  int rc = parse_args(argc, argv, &o);
  if (rc == 2) {
    fputs(usage, stdout);
    return 0;
  }
  if (rc) return 1;
  if (make_dirs(o.output)) return 1;
  omrt_model *m = NULL;
  omrt_context *ctx = NULL;
  ir_graph *g = NULL;
  void **bufs = NULL;
  int nbufs = 0;
  rc = run(&o, &m, &ctx, &g, &bufs, &nbufs);
  for (int i = 0; bufs && i < nbufs; i++)
    free(bufs[i]);
  free(bufs);
  ir_graph_free(g);
  omrt_context_free(ctx);
  omrt_model_free(m);
  return rc;
}
