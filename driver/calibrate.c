/* calibrate.c - allow_mix_precision's fp32 nodes chosen from measured
 * error (calibrate.h).
 *
 * The model is compiled in memory with the caller's flags in
 * must_keep_origin_dtype (the reference) and as asked (the candidate), and
 * both run on a sample: the --precision_calibration_input files, or, when
 * none is given and every model input is a float tensor, a fixed
 * pseudo-random normal sample. A task hook (omrt.h) keeps every float ONNX
 * tensor the reference writes as float32 and compares each one a candidate
 * writes with it by cosine similarity, as omcompare does. The loss is 1 -
 * the lowest cosine among the graph outputs; the target is a loss of at
 * most 1 - CAL_TARGET. A candidate already there keeps what the lists
 * gave it. Otherwise two measured steps, each kept only when it pays:
 *   local causes  the source nodes whose drop (the lowest cosine among
 *                 their input tensors, 1 for none, minus the lowest among
 *                 their outputs) is at least CAL_SHARE of the loss are kept
 *                 in fp32, and stay so only when that removes at least a
 *                 quarter of the loss; a drop that only passes on error
 *                 made earlier (amplified) is no cause.
 *   a prefix      in a deep network fp16 rounding made early is amplified
 *                 by every layer after it (DeepLabV3-ResNet50: a 2e-4
 *                 rounding after the stem's max pool grows 400-fold by the
 *                 output), so no few nodes hold the loss. The shortest
 *                 prefix of the source nodes (graph order) kept in fp32
 *                 that reaches the target is found by bisection, each
 *                 probe compiled and measured (about log2(nodes) probes);
 *                 the late layers, where rounding has few layers left to
 *                 grow through, stay fp16.
 * The chosen nodes go to prec->keep as keep entries with the figures as
 * their reason, so the precision pass applies and reports them like
 * --keep_dtype's (atc --log=info). The reference's tensors are held in
 * memory for the whole measurement (a float per element of every ONNX
 * tensor: 130 MB for DeepLabV3-ResNet50 at 256x256).
 */
#include "calibrate.h"

#include <math.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fp16.h"
#include "common/strmap.h"
#include "frontend/onnx_import.h"
#include "omrt.h"

#define CAL_TARGET 0.9995
#define CAL_SHARE 0.05
#define CAL_MIN_DROP 1e-5

typedef struct cal_tensor {
  const char *name; /* the reference model's */
  float *ref;       /* malloc'd */
  size_t count;
  double cos; /* the candidate's, or NAN when it did not write the tensor */
} cal_tensor;

typedef struct cal {
  cal_tensor *t;
  int n, cap;
  strmap map; /* ONNX tensor name -> index in t */
  int reference;
  float *buf; /* the candidate tensor being compared */
  size_t buf_cap;
  int failed;            /* out of memory in the hook */
  arena *a;              /* the map's */
  omrt_model *ref_model; /* the reference, loaded while its tensor names are the keys */
  void *ref_om;          /* its package (the model reads it in place) */
  int random;            /* no sample files: a pseudo-random normal sample */
} cal;

static size_t elements(const omrt_task_tensor *o) {
  size_t n = 1;
  for (int r = 0; r < o->rank; r++)
    n *= (size_t)o->dims[r];
  return n;
}

static double cosine(const float *a, const float *b, size_t n) {
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < n; i++)
    dot += (double)a[i] * b[i], na += (double)a[i] * a[i], nb += (double)b[i] * b[i];
  return na == 0 && nb == 0 ? 1 : na == 0 || nb == 0 ? 0 : dot / (sqrt(na) * sqrt(nb));
}

static int hook(void *user, const omrt_task_info *info) {
  cal *c = user;
  for (int k = 0; k < info->noutputs && !c->failed; k++) {
    const omrt_task_tensor *o = &info->outputs[k];
    if (!o->onnx_name || (o->dtype != OMRT_FLOAT32 && o->dtype != OMRT_FLOAT16)) continue;
    size_t count = elements(o);
    int i = strmap_get(&c->map, o->onnx_name);
    if (c->reference) {
      if (i >= 0) continue;
      float *f = malloc(count * sizeof *f + 1);
      if (!f || omrt_task_tensor_to_f32(o, f, count) != OMRT_OK || c->n == c->cap ||
          strmap_put(&c->map, o->onnx_name, c->n)) {
        free(f);
        c->failed = 1;
        break;
      }
      c->t[c->n++] = (cal_tensor){o->onnx_name, f, count, NAN};
    } else if (i >= 0 && c->t[i].count == count) {
      if (count > c->buf_cap) {
        free(c->buf);
        if (!(c->buf = malloc(count * sizeof *c->buf + 1))) {
          c->buf_cap = 0, c->failed = 1;
          break;
        }
        c->buf_cap = count;
      }
      if (omrt_task_tensor_to_f32(o, c->buf, count) == OMRT_OK)
        c->t[i].cos = cosine(c->buf, c->t[i].ref, count);
    }
  }
  return c->failed;
}

/* Reads the sample: one raw file per model input, each exactly its bytes. */
static status read_sample(const char *list, const omrt_model *m, void **bufs, diag *d) {
  int nin = omrt_model_num_inputs(m), i = 0;
  const char *p = list;
  for (; i < nin && *p; i++) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    char path[4096];
    snprintf(path, sizeof path, "%.*s", (int)(len < sizeof path ? len : sizeof path - 1), p);
    p += len + (e != NULL);
    omrt_tensor_desc desc;
    omrt_model_input(m, i, &desc);
    FILE *f = fopen(path, "rb");
    if (!f) return diag_set(d, ST_ERR_IO, "--precision_calibration_input: cannot open '%s'", path);
    size_t got = fread(bufs[i], 1, desc.bytes, f);
    int extra = fgetc(f) != EOF;
    fclose(f);
    if (got != desc.bytes || extra)
      return diag_set(
          d, ST_ERR_INVALID,
          "--precision_calibration_input: '%s' does not hold exactly the %zu bytes of input %d '%s'", path,
          desc.bytes, i, desc.name);
  }
  if (i != nin || *p)
    return diag_set(d, ST_ERR_INVALID, "--precision_calibration_input: give one file per model input (%d)",
                    nin);
  return ST_OK;
}

/* A fixed pseudo-random normal sample (xorshift64, Box-Muller) in every
 * input, all of which must be float tensors. */
static status random_sample(const omrt_model *m, void **bufs, diag *d) {
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < omrt_model_num_inputs(m); i++) {
    omrt_tensor_desc desc;
    omrt_model_input(m, i, &desc);
    if (desc.dtype != OMRT_FLOAT32 && desc.dtype != OMRT_FLOAT16)
      return diag_set(d, ST_ERR_UNSUPPORTED, "input %d '%s' is not a float tensor: no random sample for it",
                      i, desc.name);
    size_t n = desc.bytes / (desc.dtype == OMRT_FLOAT32 ? 4 : 2);
    for (size_t k = 0; k < n; k++) {
      double u[2];
      for (int j = 0; j < 2; j++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        u[j] = ((double)(x >> 11) + 0.5) / 9007199254740992.0;
      }
      float v = (float)(sqrt(-2 * log(u[0])) * cos(6.283185307179586 * u[1]));
      if (desc.dtype == OMRT_FLOAT32)
        ((float *)bufs[i])[k] = v;
      else
        ((uint16_t *)bufs[i])[k] = float_to_half(v);
    }
  }
  return ST_OK;
}

/* Compiles opt with precision p and keep list prec in memory and runs it on
 * the sample with c's hook. */
static status run_once(const atc_options *opt, om_precision p, const prec_cfg *prec, cal *c, diag *d) {
  atc_options o = *opt;
  o.output_path = NULL, o.precision = p, o.dump_graph_dir = NULL;
  o.on_phase = NULL, o.on_note = NULL, o.calibration_input = NULL;
  atc_result r;
  status st = atc_compile_cfg(&o, prec, &r, d);
  if (st) return st;
  omrt_load_options lo = {0};
  omrt_model *m = NULL;
  omrt_context *ctx = NULL;
  void *bufs[512] = {0};
  int nin = 0, nout = 0;
  if (omrt_model_load_memory(r.om_data, r.om_bytes, &lo, &m) != OMRT_OK) {
    st = diag_set(d, ST_ERR_INVALID, "calibration: %s", omrt_last_error());
    goto out;
  }
  nin = omrt_model_num_inputs(m), nout = omrt_model_num_outputs(m);
  if (nin + nout > 512) {
    st = diag_set(d, ST_ERR_LIMIT, "calibration: more than 512 model inputs and outputs");
    goto out;
  }
  for (int i = 0; i < nin + nout && st == ST_OK; i++) {
    omrt_tensor_desc desc;
    if (i < nin)
      omrt_model_input(m, i, &desc);
    else
      omrt_model_output(m, i - nin, &desc);
    if (!(bufs[i] = calloc(1, desc.bytes + 64))) st = diag_set(d, ST_ERR_NOMEM, "calibration: out of memory");
  }
  if (st == ST_OK)
    st = c->random ? random_sample(m, bufs, d) : read_sample(opt->calibration_input, m, bufs, d);
  if (st == ST_OK && c->reference) {
    c->cap = omrt_model_num_tasks(m) * OMRT_TASK_MAX_OUTPUTS;
    if (!(c->t = calloc((size_t)c->cap + 1, sizeof *c->t)) || strmap_init(&c->map, (size_t)c->cap, c->a))
      st = diag_set(d, ST_ERR_NOMEM, "calibration: out of memory");
  }
  for (int i = 0; i < c->n; i++)
    c->t[i].cos = NAN;
  if (st == ST_OK &&
      (omrt_context_new(m, &ctx) != OMRT_OK || omrt_context_set_task_hook(ctx, hook, c) != OMRT_OK ||
       omrt_execute(ctx, (const void *const *)bufs, bufs + nin) != OMRT_OK))
    st = diag_set(d, ST_ERR_INVALID, "calibration: %s", c->failed ? "out of memory" : omrt_last_error());
out:
  omrt_context_free(ctx);
  for (int i = 0; i < nin + nout; i++)
    free(bufs[i]);
  if (c->reference) { /* its tensor names are the map's keys */
    c->ref_model = m, c->ref_om = r.om_data;
  } else {
    omrt_model_free(m);
    free(r.om_data);
  }
  return st;
}

/* The lowest cosine among the compared tensors of names[0..n), or NAN. */
static double lowest(const cal *c, const char *const *names, int n) {
  double lo = NAN;
  for (int k = 0; k < n; k++) {
    int i = *names[k] ? strmap_get(&c->map, names[k]) : -1;
    if (i >= 0 && !isnan(c->t[i].cos) && !(c->t[i].cos >= lo)) lo = c->t[i].cos;
  }
  return lo;
}

static void say(const atc_options *opt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const atc_options *opt, const char *fmt, ...) {
  if (!opt->on_note) return;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  opt->on_note(opt->user, msg);
}

/* prec->keep with one more entry (name copied into a), or NULL. */
static prec_entry *keep_add(prec_cfg *prec, const char *name, const char *reason, arena *a) {
  prec_entry *keep = arena_array(a, (size_t)prec->nkeep + 1, sizeof *keep);
  if (!keep) return NULL;
  memcpy(keep, prec->keep, (size_t)prec->nkeep * sizeof *keep);
  prec_entry *e = &keep[prec->nkeep];
  e->where = "--precision_calibration_input", e->reason = reason;
  if (!(e->name = arena_strdup(a, name))) return NULL;
  prec->keep = keep, prec->nkeep++;
  return e;
}

static int kept(const prec_cfg *prec, const char *name) {
  for (int k = 0; k < prec->nkeep; k++)
    if (!prec->keep[k].op_type && !strcmp(prec->keep[k].name, name)) return 1;
  return 0;
}

/* Local causes: appends the source nodes whose drop is at least CAL_SHARE
 * of the loss; *added gets how many. */
static status pick_drops(const cal *c, const ir_graph *g, double loss, prec_cfg *prec, arena *a, int *added,
                         diag *d) {
  *added = 0;
  for (int s = 0; s < g->nsrc; s++) {
    const ir_source *src = &g->src[s];
    double out = lowest(c, src->out, src->nout), in = lowest(c, src->in, src->nin);
    if (isnan(out)) continue;
    double drop = (isnan(in) ? 1.0 : in) - out;
    if (!(drop >= CAL_MIN_DROP && drop >= CAL_SHARE * loss) || kept(prec, src->name)) continue;
    char why[200];
    snprintf(why, sizeof why,
             "calibration: cosine %.6f, %.6f below its inputs' (%.0f%% of the outputs' loss)", out, drop,
             100 * drop / loss);
    const char *r = arena_strdup(a, why);
    if (!r || !keep_add(prec, src->name, r, a))
      return diag_set(d, ST_ERR_NOMEM, "calibration: out of memory");
    (*added)++;
  }
  return ST_OK;
}

/* prec->keep cut back to base entries, plus source nodes 0..len-1 of g
 * (reason: why, NULL while probing). */
static status set_prefix(prec_cfg *prec, int base, const ir_graph *g, int len, const char *why, arena *a,
                         diag *d) {
  prec->nkeep = base;
  for (int s = 0; s < len; s++)
    if (!kept(prec, g->src[s].name) && !keep_add(prec, g->src[s].name, why, a))
      return diag_set(d, ST_ERR_NOMEM, "calibration: out of memory");
  return ST_OK;
}

/* The loss to recover: 1 - the lowest cosine among g's outputs. */
static double output_loss(const cal *c, const ir_graph *g) {
  double lo = 1;
  for (int i = 0; i < g->noutputs; i++) {
    const char *name = g->outputs[i]->name;
    double v = lowest(c, &name, 1);
    if (!isnan(v) && v < lo) lo = v;
  }
  return 1 - lo;
}

/* Compiles and runs the candidate with prec; *loss its outputs' loss. */
static status measure(const atc_options *opt, const prec_cfg *prec, cal *c, const ir_graph *g, double *loss,
                      diag *d) {
  status st = run_once(opt, opt->precision, prec, c, d);
  *loss = st ? 1 : output_loss(c, g);
  return st;
}

status atc_calibrate(const atc_options *opt, prec_cfg *prec, arena *a, diag *d) {
  const int given = opt->calibration_input != NULL;
  if (opt->precision != OM_PRECISION_ALLOW_MIX_PRECISION)
    return given ? diag_set(d, ST_ERR_INVALID, "--precision_calibration_input needs allow_mix_precision")
                 : ST_OK;
  if (opt->dynamic_batch_size || opt->dynamic_image_size || opt->dynamic_dims || opt->model_data ||
      opt->build_graph) /* (atc --singleop: one operator, its list decides) */
    return given ? diag_set(d, ST_ERR_INVALID,
                            "--precision_calibration_input works on a model file without shape gears")
                 : ST_OK;
  const double target = 1 - CAL_TARGET;
  const char *sample = given ? "calibration input" : "random sample";
  /* the source graph: node names and the tensors they read and write */
  onnx_input_shape *shapes = NULL;
  int nshapes = 0;
  ir_graph *g = NULL;
  status st = opt->input_shape && *opt->input_shape
                  ? onnx_parse_input_shape(opt->input_shape, a, &shapes, &nshapes, d)
                  : ST_OK;
  onnx_options oo = {.input_shapes = shapes, .ninput_shapes = nshapes};
  if (st == ST_OK) st = onnx_load_file(opt->model_path, &oo, &g, d);
  cal c = {.reference = 1, .a = a, .random = !given};
  for (int i = 0; st == ST_OK && !given && i < g->ninputs; i++)
    if (g->inputs[i]->dtype != DT_FLOAT32 && g->inputs[i]->dtype != DT_FLOAT16) {
      say(opt,
          "precision: not measured: input '%s' is %s, no random sample for it (--precision_calibration_input "
          "gives one)",
          g->inputs[i]->name, dtype_name(g->inputs[i]->dtype));
      goto done;
    }
  if (st == ST_OK) st = run_once(opt, OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE, prec, &c, d);
  c.reference = 0;
  double loss = 1, l2 = 1;
  if (st == ST_OK) st = measure(opt, prec, &c, g, &loss, d);
  if (st) goto done;
  say(opt, "precision: calibration: outputs at cosine %.6f against fp32 on the %s (target %.4f)", 1 - loss,
      sample, CAL_TARGET);
  if (loss <= target) goto done;
  /* local causes */
  int base = prec->nkeep, added = 0;
  if ((st = pick_drops(&c, g, loss, prec, a, &added, d))) goto done;
  if (added && (st = measure(opt, prec, &c, g, &l2, d))) goto done;
  if (added && l2 <= 0.75 * loss) {
    say(opt, "precision: calibration: %d nodes that lose the most kept in fp32: cosine %.6f", added, 1 - l2);
    loss = l2;
  } else if (added) {
    say(opt,
        "precision: calibration: keeping the %d nodes that lose the most gives cosine %.6f: their loss "
        "is error made earlier, amplified; not kept",
        added, 1 - l2);
    prec->nkeep = base;
  }
  if (loss <= target) goto done;
  /* the shortest fp32 prefix reaching the target */
  base = prec->nkeep;
  int lo = 0, hi = g->nsrc;
  double hi_loss = 0;
  while (st == ST_OK && hi - lo > 1) {
    int mid = lo + (hi - lo) / 2;
    if ((st = set_prefix(prec, base, g, mid, NULL, a, d)) || (st = measure(opt, prec, &c, g, &l2, d))) break;
    if (l2 <= target)
      hi = mid, hi_loss = l2;
    else
      lo = mid;
  }
  if (st) goto done;
  char why[300];
  snprintf(
      why, sizeof why,
      "calibration: in the first %d of %d ONNX nodes, whose fp16 rounding the later layers amplify (outputs "
      "at cosine %.6f on the %s with them in fp32, %.6f without)",
      hi, g->nsrc, 1 - hi_loss, sample, 1 - loss);
  const char *reason = arena_strdup(a, why);
  if (!reason) st = diag_set(d, ST_ERR_NOMEM, "calibration: out of memory");
  if (st == ST_OK) st = set_prefix(prec, base, g, hi, reason, a, d);
  if (st == ST_OK)
    say(opt, "precision: calibration: the first %d of %d ONNX nodes (to '%s') kept in fp32: cosine %.6f", hi,
        g->nsrc, hi > 0 ? g->src[hi - 1].name : "", 1 - hi_loss);
done:
  for (int i = 0; i < c.n; i++)
    free(c.t[i].ref);
  free(c.t);
  free(c.buf);
  omrt_model_free(c.ref_model);
  free(c.ref_om);
  ir_graph_free(g);
  return st;
}
