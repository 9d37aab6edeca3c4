/* omquant - post-training quantization of a float ONNX model to QDQ ONNX,
 * in the spirit of AMCT (quant/ptq.h does the work).
 *
 *   omquant --model X.onnx --calib FILES_OR_DIR --output X_qdq.onnx
 *           [--method minmax|percentile|entropy] [--percentile 99.99]
 *           [--skip NAME,...] [--ops weighted|all] [--report FILE]
 *           [--input_shape "name:1,3,224,224"] [--threads N]
 *
 * --calib names raw little-endian files of the model's input size in its
 * dtype (float32 images, int64 token ids, ...),
 * one sample each, comma-separated, or a directory of them (its regular
 * *.bin files, in name order). The float model runs on each with the reference
 * evaluator, --threads samples at a time (default: the CPUs online; their
 * statistics are still taken in sample order, so the result does not depend
 * on it); activation ranges come from --method (default minmax;
 * percentile clips |x| at --percentile, default 99.99; entropy minimises the
 * KL divergence, quant/calib.h). The written model has per-channel symmetric
 * int8 weights for Conv, Gemm and MatMul, int32 biases and uint8 asymmetric
 * activations (quant/qdq.h) and runs on ONNX Runtime and atc; the activations
 * quantized are those of Conv, Gemm, MatMul and Add (--ops weighted, the
 * default) or, --ops all, also of the other ops ONNX Runtime's quantize_static
 * quantizes (Mul, Concat, pooling, Resize, Softmax, the moves...), as that
 * tool writes a model. --skip keeps the named nodes in float. --report writes one line per quantized tensor:
 * its range, scale, zero point and the cosine of its float values and its
 * fake-quantized ones on the first sample, then the output's cosine.
 * Progress and timing go to stdout; on any error one line "omquant: <what>"
 * on stderr and exit 1 (2 for a usage error).
 */
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <pthread.h>
#include <unistd.h>

#include "common/atomic_file.h"
#include "quant/ptq.h"

static const char usage[] =
    "usage: omquant --model X.onnx --calib FILES_OR_DIR --output X_qdq.onnx\n"
    "               [--method minmax|percentile|entropy] [--percentile 99.99] [--skip NAME,...]\n"
    "               [--ops weighted|all] [--report FILE] [--input_shape \"name:1,3,224,224\"] [--threads N]\n"
    "\n"
    "Post-training quantization: writes a QDQ ONNX model (per-channel symmetric int8 weights for\n"
    "Conv, Gemm and MatMul, int32 biases, uint8 asymmetric activations) that ONNX Runtime and atc run.\n"
    "  --model        the float ONNX model (one input: float32, or int64 token ids, ...)\n"
    "  --calib        calibration samples: raw little-endian files of the input's size and dtype,\n"
    "                 comma-separated, or a directory holding them (one NAME.bin per sample)\n"
    "  --output       the QDQ model to write (replaced atomically)\n"
    "  --method       activation ranges: minmax (default), percentile, entropy (KL divergence)\n"
    "  --percentile   the percentile of |x| kept by --method percentile (default 99.99)\n"
    "  --skip         node names to keep in float\n"
    "  --ops          weighted: quantize Conv, Gemm, MatMul and Add (default); all: also every other op\n"
    "                 ONNX Runtime's quantize_static quantizes (Mul, Concat, pooling, Resize, Softmax, ...)\n"
    "  --report       write per-tensor ranges, scales, zero points and float vs fake-quant cosines\n"
    "  --input_shape  fix the input's symbolic dims (default: 1), as atc's flag\n"
    "  --threads      samples run at once (default: the CPUs online; each holds one forward pass in\n"
    "                 memory); the result is the same for any count\n";

static int fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("omquant: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return 1;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Splits s at commas into arena strings. */
static int split(const char *s, arena *a, char ***out) {
  int n = 1;
  for (const char *p = s; *p; p++)
    n += *p == ',';
  char **v = arena_array(a, (size_t)n, sizeof *v);
  if (!v) return -1;
  n = 0;
  for (const char *p = s;; p++) {
    size_t len = strcspn(p, ",");
    if (len) v[n++] = arena_strndup(a, p, len);
    p += len;
    if (!*p) break;
  }
  *out = v;
  return n;
}

/* The calibration files: --calib's list, or a directory's regular *.bin files in name order. */
static int calib_files(const char *spec, arena *a, char ***out) {
  struct stat st;
  if (strchr(spec, ',') || stat(spec, &st) || !S_ISDIR(st.st_mode)) return split(spec, a, out);
  DIR *dir = opendir(spec);
  if (!dir) return -1;
  int n = 0, cap = 0;
  char **v = NULL;
  struct dirent *e;
  while ((e = readdir(dir))) {
    size_t nl = strlen(e->d_name);
    if (e->d_name[0] == '.' || nl < 5 || strcmp(e->d_name + nl - 4, ".bin")) continue;
    size_t len = strlen(spec) + strlen(e->d_name) + 2;
    char *path = arena_alloc(a, len);
    if (!path) break;
    snprintf(path, len, "%s/%s", spec, e->d_name);
    if (stat(path, &st) || !S_ISREG(st.st_mode)) continue;
    if (n == cap) {
      char **nv = arena_array(a, (size_t)(cap = cap ? 2 * cap : 64), sizeof *nv);
      if (!nv) break;
      if (n) memcpy(nv, v, (size_t)n * sizeof *nv);
      v = nv;
    }
    v[n++] = path;
  }
  closedir(dir);
  if (v) qsort(v, (size_t)n, sizeof *v, by_name);
  *out = v;
  return n;
}

static int read_sample(const char *path, void *buf, size_t bytes) {
  FILE *f = fopen(path, "rb");
  if (!f) return fail("%s: cannot open", path);
  size_t got = fread(buf, 1, bytes, f);
  int extra = fgetc(f) != EOF;
  fclose(f);
  if (got != bytes || extra)
    return fail("%s: a calibration sample must be %zu bytes (the model input's size in its dtype)", path,
                bytes);
  return 0;
}

static int write_report(const char *path, const oq_session *s, qc_method m, double pct, const double *cos,
                        double out_cos) {
  FILE *f = fopen(path, "w");
  if (!f) return fail("%s: cannot write the report", path);
  fprintf(f, "# omquant report: %s, %d samples, method %s", s->path, s->samples, qc_method_name(m));
  if (m == QC_PERCENTILE) fprintf(f, " %g", pct);
  fprintf(f, "\n# tensor\tmin\tmax\trange_lo\trange_hi\tscale\tzero_point\tcosine\n");
  for (int i = 0; i < s->plan.ntensors; i++) {
    float scale;
    uint8_t zp;
    oq_act_params(s->lo[i], s->hi[i], &scale, &zp);
    fprintf(f, "%s\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%u\t%.6f\n", s->plan.tensors[i], s->stats[i].lo,
            s->stats[i].hi, s->lo[i], s->hi[i], scale, zp, cos[i]);
  }
  fprintf(f, "# output cosine (float vs fake-quant, first sample): %.6f\n", out_cos);
  int err = ferror(f);
  return fclose(f) || err ? fail("%s: error writing the report", path) : 0;
}

/* One sample's run on a thread of its own (oq_run only reads the session). */
typedef struct slot {
  const oq_session *s;
  void *input; /* the sample (malloc) */
  oq_sample r;
  diag d;
  status st;
  double secs;
  pthread_t thread;
  int started; /* thread runs it */
} slot;

static void *run_slot(void *arg) {
  slot *sl = arg;
  double t = now();
  sl->st = oq_run(sl->s, sl->input, &sl->r, &sl->d);
  sl->secs = now() - t;
  return NULL;
}

int main(int argc, char **argv) {
  const char *model = NULL, *calib = NULL, *output = NULL, *method = "minmax", *pct_s = "99.99", *skip = NULL;
  const char *report = NULL, *shape_spec = NULL, *ops = "weighted", *threads_s = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(usage, stdout);
      return 0;
    }
    if (strncmp(a, "--", 2)) return fail("unexpected argument '%s' (see --help)", a), 2;
    const char *name = a + 2, *eq = strchr(name, '='), *val;
    size_t n = eq ? (size_t)(eq - name) : strlen(name);
    if (eq)
      val = eq + 1;
    else if (i + 1 < argc)
      val = argv[++i];
    else
      return fail("--%s needs a value", name), 2;
#define IS(s) (n == sizeof s - 1 && !strncmp(name, s, n))
    const char **slot = IS("model")         ? &model
                        : IS("calib")       ? &calib
                        : IS("output")      ? &output
                        : IS("method")      ? &method
                        : IS("percentile")  ? &pct_s
                        : IS("skip")        ? &skip
                        : IS("ops")         ? &ops
                        : IS("report")      ? &report
                        : IS("input_shape") ? &shape_spec
                        : IS("threads")     ? &threads_s
                                            : NULL;
#undef IS
    if (!slot) return fail("unknown flag '--%.*s' (see --help)", (int)n, name), 2;
    *slot = val;
  }
  if (!model || !calib || !output) return fail("--model, --calib and --output are required (see --help)"), 2;
  int m = qc_method_parse(method);
  if (m < 0) return fail("--method: '%s' is not minmax, percentile or entropy", method), 2;
  if (strcmp(ops, "weighted") && strcmp(ops, "all"))
    return fail("--ops: '%s' is not weighted or all", ops), 2;
  char *end;
  double pct = strtod(pct_s, &end);
  if (*end || !(pct > 0 && pct <= 100)) return fail("--percentile: '%s' is not in (0, 100]", pct_s), 2;

  long nt = sysconf(_SC_NPROCESSORS_ONLN);
  if (threads_s) {
    nt = strtol(threads_s, &end, 10);
    if (*end || nt < 1 || nt > 64) return fail("--threads: '%s' is not a count from 1 to 64", threads_s), 2;
  }
  const int threads = nt < 1 ? 1 : nt > 64 ? 64 : (int)nt;

  arena a;
  arena_init(&a, 0);
  diag d;
  diag_init(&d);
  char **skips = NULL, **files = NULL;
  int nskip = skip ? split(skip, &a, &skips) : 0, nfiles = calib_files(calib, &a, &files);
  onnx_input_shape *shapes = NULL;
  int nshapes = 0;
  if (nskip < 0 || nfiles < 0) return fail("--calib '%s': cannot list the samples", calib);
  if (nfiles == 0) return fail("--calib '%s': no calibration sample", calib);
  if (shape_spec && onnx_parse_input_shape(shape_spec, &a, &shapes, &nshapes, &d))
    return fail("--input_shape: %s", d.msg);

  double t0 = now();
  oq_session *s = NULL;
  if (oq_open(model, shapes, nshapes, (const char *const *)skips, nskip, !strcmp(ops, "all"), &s, &d))
    return fail("%s", d.msg);
  printf("omquant: %s: %d tensors and %d weights to quantize; %d calibration samples\n", model,
         s->plan.ntensors, s->plan.nnodes, nfiles);
  slot *slots = calloc((size_t)threads, sizeof *slots);
  void *first = malloc(s->input_bytes ? s->input_bytes : 1);
  int rc = !slots || !first ? fail("out of memory") : 0;
  for (int t = 0; !rc && t < threads; t++)
    if (!(slots[t].input = malloc(s->input_bytes ? s->input_bytes : 1))) rc = fail("out of memory");
  for (int i0 = 0; !rc && i0 < nfiles; i0 += threads) { /* a batch of up to `threads` samples at once */
    const int nb = nfiles - i0 < threads ? nfiles - i0 : threads;
    for (int t = 0; !rc && t < nb; t++)
      rc = read_sample(files[i0 + t], slots[t].input, s->input_bytes);
    if (rc) break;
    if (i0 == 0) memcpy(first, slots[0].input, s->input_bytes);
    for (int t = 0; t < nb; t++) {
      slots[t].s = s;
      diag_init(&slots[t].d);
      slots[t].started = t < nb - 1 && !pthread_create(&slots[t].thread, NULL, run_slot, &slots[t]);
      if (!slots[t].started) run_slot(&slots[t]); /* the last one, or one no thread took, on this thread */
    }
    for (int t = 0; t < nb; t++) {
      if (slots[t].started) pthread_join(slots[t].thread, NULL);
      if (!rc && slots[t].st) rc = fail("%s: %s", files[i0 + t], slots[t].d.msg);
      if (!rc) {
        oq_take(s, &slots[t].r);
        printf("omquant: sample %d/%d (%s) in %.2f s\n", i0 + t + 1, nfiles, files[i0 + t], slots[t].secs);
      }
      oq_run_free(&slots[t].r);
    }
    fflush(stdout);
  }
  if (!rc && oq_finish(s, (qc_method)m, pct, &d)) rc = fail("%s", d.msg);
  if (!rc && atomic_write_file(output, s->written, s->written_bytes, &d)) rc = fail("%s", d.msg);
  if (!rc)
    printf("omquant: wrote %s (%.1f MiB, method %s) in %.1f s\n", output, s->written_bytes / 1048576.0,
           qc_method_name((qc_method)m), now() - t0);
  if (!rc && report) {
    double t = now(), out_cos = NAN;
    double *cos = arena_array(&a, (size_t)s->plan.ntensors + 1, sizeof *cos);
    if (!cos) rc = fail("out of memory");
    if (!rc && oq_compare(s, first, cos, &out_cos, &d)) rc = fail("comparing the quantized model: %s", d.msg);
    if (!rc) rc = write_report(report, s, (qc_method)m, pct, cos, out_cos);
    if (!rc)
      printf("omquant: wrote %s; output cosine float vs fake-quant %.6f (%.1f s)\n", report, out_cos,
             now() - t);
  }
  for (int t = 0; slots && t < threads; t++)
    free(slots[t].input);
  free(slots);
  free(first);
  oq_close(s);
  arena_free(&a);
  return rc;
}
