/* omrun - msame-style runner for om packages, on libomrt's public API only.
 *
 *   omrun --model X.om [--input a.bin[,b.bin] | --input dirA[,dirB]] --output DIR
 *         [--outfmt BIN|TXT|NPY] [--loop N] [--threads N] [--jit on|off] [--debug] [--profiler]
 *         [--dump DIR [--dump_nodes a,b]] [--check_overflow]
 *         [--dymBatch N | --dymHW H,W | --dymDims "name:d0,d1;name2:..."]
 *
 * A model with shape gears (atc --dynamic_batch_size, ...) runs the gear
 * the msame flag names (--dymBatch, --dymHW, --dymDims: every input's whole
 * shape); without one, or with a value that is not a gear, omrun lists the
 * gears and stops. Inputs and outputs are then the gear's.
 * Inputs are raw little-endian files in each model input's dtype and shape
 * (C order) and must be exactly the input's byte size; without --input every
 * input is zero-filled. As in msame, --input may name directories instead,
 * one per model input: each regular file is a sample, in name order, and the
 * model runs on every sample (tools/omrun_io.h). Each sample runs --loop
 * times on one context; the outputs of its last run go to
 * DIR/output_<i>.<ext> (one sample of files) or DIR/<sample>_output_<i>.<ext>
 * (directories; <sample> is the first input file's name without its
 * extension), as raw bytes (BIN, the default), text (TXT) or NumPy .npy
 * (NPY). DIR is created if needed.
 * Prints the model's I/O, the thread count and the latency (min and median
 * over all runs); --debug also describes the model (sizes, formats, every
 * sample's files); --profiler times every task and prints the time per task
 * kind and per task, and writes both to DIR/profile.json. Exit 0 on
 * success; on any error one line "omrun: <what>" on stderr and exit 1. Flags
 * take "--flag=value" or "--flag value"; --debug and --profiler also stand
 * alone or take true/false (msame's form).
 * --dump DIR writes, during the first run, every task's outputs as float32
 * .npy in ONNX layout named after the ONNX tensors they hold, and
 * DIR/dump.json (tools/layer_dump.h); --dump_nodes limits it to the listed
 * tasks, ONNX nodes or tensors. --check_overflow checks every task's float
 * outputs for inf and NaN (omrt_context_options.check_overflow) and fails
 * naming the first task, its ONNX nodes and the tensor; without it, a NaN
 * or inf in a model output is a warning on stderr (exit 0).
 * Built with libomrt_jit (OMRT_HAVE_JIT), vector programs are compiled at
 * load unless --jit=off or OMRT_JIT=0 (the flag wins), and the compile time
 * is printed (total ms, programs, unique bodies and how many of those came
 * from the OMRT_JIT_CACHE directory). The library (and LLVM) is loaded only
 * for a model that has vector programs (tools/lazy_jit.h); when it cannot
 * be loaded, omrun says so once and interprets them. With OMRT_PROFILE=1
 * the time per task kind over all runs is printed too.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "omrt.h"
#include "tools/layer_dump.h"
#include "tools/omrun_io.h"
#ifdef OMRT_HAVE_JIT
#include "tools/lazy_jit.h"
#endif

static const char usage[] =
    "usage: omrun --model X.om [--input a.bin[,b.bin...] | --input dirA[,dirB...]] --output DIR\n"
    "             [--outfmt BIN|TXT|NPY] [--loop N] [--threads N] [--jit on|off] [--debug] [--profiler]\n"
    "             [--dump DIR [--dump_nodes a,b,...]] [--check_overflow]\n"
    "  --model     the om package to run\n"
    "  --input     comma-separated raw input files, one per model input, in the input's dtype\n"
    "              and shape (C order, little-endian); or directories, one per input, whose\n"
    "              files (in name order) are the samples; omitted: zero-filled inputs\n"
    "  --output    directory for output_0.<ext>, output_1.<ext>, ... (<sample>_output_<i>.<ext>\n"
    "              for directories of samples); created if needed\n"
    "  --outfmt    BIN (raw bytes, default), TXT (one line per innermost row) or NPY (.npy)\n"
    "  --loop      runs per sample (default 1); latency is reported as min and median\n"
    "  --threads   worker threads (default: $OMRT_THREADS, else min(AI cores, host cores))\n"
    "  --jit       compile vector programs to native code at load (LLVM); default on when\n"
    "              omrun is built with libomrt_jit, unless $OMRT_JIT is 0\n"
    "  --debug     describe the model (sizes, formats) and every sample's files\n"
    "  --profiler  time every task: the time per task kind and per task, printed and\n"
    "              written to DIR/profile.json\n"
    "  --dump      directory for a layer dump of the first run: every task's outputs as\n"
    "              float32 .npy in ONNX layout (NCHW), named after the ONNX tensors, and\n"
    "              dump.json (task, ONNX nodes, tensors, stored dtype and layout, shape)\n"
    "  --dump_nodes  comma-separated task, ONNX node or tensor names: dump only those tasks\n"
    "  --check_overflow  fail at the first task that writes inf or NaN (fp16 overflow),\n"
    "              naming it and its ONNX nodes; without it a non-finite model output\n"
    "              is a warning on stderr\n"
    "  --dymBatch  N: the batch gear to run (a model built with atc --dynamic_batch_size)\n"
    "  --dymHW     H,W: the image size gear (atc --dynamic_image_size)\n"
    "  --dymDims   \"name:d0,d1,...;name2:...\": every input's shape in the dims gear to run\n"
    "              (atc --dynamic_dims)\n"
    "  --device    0, the software NPU (for msame's command lines)\n"
    "  --version   print omrun's and libomrt's versions\n"
    "  --help      this text\n"
    "environment: OMRT_JIT=0|1 (as --jit), OMRT_PROFILE=1 (print the time per task kind;\n"
    "             2: also the slowest tasks),\n"
    "             OMRT_JIT_CACHE=DIR (keep compiled vector programs in DIR and reuse them),\n"
    "             OMRT_JIT_LIBRARY=FILE (the libomrt_jit to load, default its soname),\n"
    "             OMRT_PORTABLE=1 (the portable C kernels, not the x86 ones),\n"
    "             OMRT_AVX512=0 (the 256-bit x86 kernels on an AVX-512 host)\n";

typedef struct options {
  const char *model, *input, *output;
  const char *dump, *dump_nodes; /* --dump DIR, --dump_nodes list */
  int check_overflow;
  const char *dym_batch, *dym_hw, *dym_dims; /* the gear flags, NULL when not given */
  long loop, threads;
  int jit; /* 1: compile vector programs at load */
  int debug, profiler;
  outfmt fmt;
} options;

static int parse_count(const char *flag, const char *s, long max, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || *s == '\0' || *end || v < 1 || v > max)
    return fail("--%s: '%s' is not an integer in 1..%ld", flag, s, max);
  *out = v;
  return 0;
}

static int parse_bool(const char *flag, const char *s, int *out) {
  if (!strcmp(s, "true") || !strcmp(s, "on") || !strcmp(s, "1")) return *out = 1, 0;
  if (!strcmp(s, "false") || !strcmp(s, "off") || !strcmp(s, "0")) return *out = 0, 0;
  return fail("--%s: '%s' is not true or false", flag, s);
}

/* Returns 0 to run, 1 on error, 2 for --help, 3 for --version. */
static int parse_args(int argc, char **argv, options *o) {
  const char *loop = NULL, *threads = NULL, *jit = getenv("OMRT_JIT"), *jit_flag = NULL, *fmt = NULL;
  const char *debug = NULL, *profiler = NULL, *device = NULL, *overflow = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return 2;
    if (strcmp(a, "--version") == 0) return 3;
    if (strncmp(a, "--", 2) != 0) return fail("unexpected argument '%s' (see --help)", a);
    const char *name = a + 2, *eq = strchr(name, '='), *val;
    size_t n = eq ? (size_t)(eq - name) : strlen(name);
#define IS(s) (n == sizeof s - 1 && !strncmp(name, s, n))
    int boolean = IS("debug") || IS("profiler") || IS("check_overflow");
    if (eq) {
      val = eq + 1;
    } else if (boolean && (i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0)) {
      val = "true"; /* standing alone */
    } else {
      if (i + 1 >= argc) return fail("--%s needs a value", name);
      val = argv[++i];
    }
    const char **slot = IS("model")            ? &o->model
                        : IS("input")          ? &o->input
                        : IS("output")         ? &o->output
                        : IS("outfmt")         ? &fmt
                        : IS("loop")           ? &loop
                        : IS("threads")        ? &threads
                        : IS("jit")            ? &jit_flag
                        : IS("debug")          ? &debug
                        : IS("profiler")       ? &profiler
                        : IS("device")         ? &device
                        : IS("dump")           ? &o->dump
                        : IS("dump_nodes")     ? &o->dump_nodes
                        : IS("check_overflow") ? &overflow
                        : IS("dymBatch")       ? &o->dym_batch
                        : IS("dymHW")          ? &o->dym_hw
                        : IS("dymDims")        ? &o->dym_dims
                                               : NULL;
#undef IS
    if (!slot) return fail("unknown flag '--%.*s' (see --help)", (int)n, name);
    *slot = val;
  }
  if (!o->model) return fail("--model is required (see --help)");
  if (!o->output) return fail("--output is required (see --help)");
  if (loop && parse_count("loop", loop, 1000000000L, &o->loop)) return 1;
  if (threads && parse_count("threads", threads, 1024, &o->threads)) return 1;
  if (fmt && outfmt_parse(fmt, &o->fmt)) return 1;
  if ((debug && parse_bool("debug", debug, &o->debug)) ||
      (profiler && parse_bool("profiler", profiler, &o->profiler)) ||
      (overflow && parse_bool("check_overflow", overflow, &o->check_overflow)))
    return 1;
  if (o->dump_nodes && !o->dump) return fail("--dump_nodes needs --dump DIR");
  if (device && strcmp(device, "0") != 0) return fail("--device: '%s': the software NPU is device 0", device);
  if (!!o->dym_batch + !!o->dym_hw + !!o->dym_dims > 1)
    return fail("--dymBatch, --dymHW and --dymDims: give one at most");
  if (jit_flag) {
    if (strcmp(jit_flag, "on") && strcmp(jit_flag, "off"))
      return fail("--jit: '%s' is not on or off", jit_flag);
    o->jit = strcmp(jit_flag, "on") == 0;
  } else if (jit && *jit) {
    if (strcmp(jit, "0") && strcmp(jit, "1")) return fail("OMRT_JIT='%s': expected 0 or 1", jit);
    o->jit = strcmp(jit, "1") == 0;
  }
#ifndef OMRT_HAVE_JIT
  if (o->jit && jit_flag)
    return fail("--jit=on: this omrun was built without libomrt_jit (LLVM 16 not found)");
  o->jit = 0;
#endif
  return 0;
}

static void print_desc(const char *what, int i, const omrt_tensor_desc *d, int debug) {
  printf("  %s %d: %s %s [", what, i, d->name, io_dtype_name(d->dtype));
  for (int k = 0; k < d->rank; k++)
    printf("%s%lld", k ? ", " : "", (long long)d->dims[k]);
  printf("] (%zu bytes)%s\n", d->bytes, debug ? ", format ND (C order), little-endian" : "");
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Everything after argument parsing; resources are released by main. */
typedef struct run_state {
  void *jit; /* lazy_jit when compiling vector programs */
  omrt_model *model;
  omrt_context *ctx;
  int nin, nout;
  void **in, **out;
  double *times; /* [runs] */
  samples samples;
  layer_dump *dump; /* --dump, until the first run ends */
  int warned;       /* a non-finite output was reported */
  int gear;         /* the gear run (0 for a model without gears) */
} run_state;

/* Without --check_overflow: a warning when a float model output of sample k
 * holds inf or NaN. Returns 1 when it warned. */
static int warn_nonfinite(const run_state *r, int k) {
  for (int i = 0; i < r->nout; i++) {
    omrt_tensor_desc d;
    omrt_model_gear_output(r->model, r->gear, i, &d);
    size_t n = d.dtype == OMRT_FLOAT32 ? d.bytes / 4 : d.dtype == OMRT_FLOAT16 ? d.bytes / 2 : 0, bad = 0;
    for (size_t e = 0; e < n; e++) {
      if (d.dtype == OMRT_FLOAT32) {
        float v = ((const float *)r->out[i])[e];
        bad += !isfinite(v);
      } else {
        bad += (((const uint16_t *)r->out[i])[e] & 0x7C00u) == 0x7C00u;
      }
    }
    if (bad) {
      fprintf(stderr,
              "omrun: warning: sample %d output %d '%s' holds %zu inf/NaN values of %zu; "
              "--check_overflow names the first task that wrote one\n",
              k, i, d.name, bad, n);
      return 1;
    }
  }
  return 0;
}

/* With OMRT_PROFILE=2: the TOP_TASKS slowest tasks, per run. */
enum { TOP_TASKS = 15 };
static void print_task_profile(const omrt_context *ctx, long runs, double total) {
  int top[TOP_TASKS], ntop = 0;
  double top_ms[TOP_TASKS];
  const char *name, *kind;
  double ms;
  for (int t = 0; omrt_context_task_profile(ctx, t, &name, &kind, &ms) == OMRT_OK; t++) {
    int at = ntop < TOP_TASKS ? ntop++ : TOP_TASKS - 1; /* insertion into the sorted top list */
    if (at == TOP_TASKS - 1 && ntop == TOP_TASKS && ms <= top_ms[at]) continue;
    for (; at > 0 && top_ms[at - 1] < ms; at--)
      top[at] = top[at - 1], top_ms[at] = top_ms[at - 1];
    top[at] = t, top_ms[at] = ms;
  }
  if (ntop == 0) return;
  printf("slowest tasks (per run):\n");
  for (int i = 0; i < ntop; i++) {
    omrt_context_task_profile(ctx, top[i], &name, &kind, &ms);
    printf("  %4d %-12s %10.3f ms %5.1f%%  %s\n", top[i], kind, ms / (double)runs, 100 * ms / total, name);
  }
}

/* The time per task kind when the context profiles (OMRT_PROFILE=1, or
 * --profiler), and the slowest tasks with OMRT_PROFILE=2; --profiler prints
 * every task instead. Returns the total ms. */
static double print_profile(const omrt_context *ctx, long runs, int every_task) {
  const char *name, *kind;
  uint64_t tasks;
  double ms, total = 0;
  for (int k = 0; omrt_context_profile(ctx, k, &name, &tasks, &ms) == OMRT_OK; k++)
    total += ms;
  if (total == 0) return 0;
  printf("profile (per run, over %ld runs):\n", runs);
  for (int k = 0; omrt_context_profile(ctx, k, &name, &tasks, &ms) == OMRT_OK; k++)
    if (tasks)
      printf("  %-12s %5llu tasks %10.3f ms %5.1f%%\n", name, (unsigned long long)(tasks / (uint64_t)runs),
             ms / (double)runs, 100 * ms / total);
  if (!every_task) {
    print_task_profile(ctx, runs, total);
    return total;
  }
  printf("tasks (per run, in execution order):\n");
  for (int t = 0; omrt_context_task_profile(ctx, t, &name, &kind, &ms) == OMRT_OK; t++)
    printf("  %4d %-12s %10.3f ms %5.1f%%  %s\n", t, kind, ms / (double)runs, 100 * ms / total, name);
  return total;
}

/* --profiler's DIR/profile.json: per kind and per task, ms per run. */
static int write_profile_json(const options *o, const run_state *r, long runs, double total) {
  char path[4096];
  snprintf(path, sizeof path, "%s/profile.json", o->output);
  FILE *f = fopen(path, "w");
  if (!f) return fail("cannot create '%s': %s", path, strerror(errno));
  const char *name, *kind;
  uint64_t tasks;
  double ms;
  fprintf(f, "{\n  \"model\": ");
  json_str(f, omrt_model_name(r->model));
  fprintf(f, ",\n  \"soc\": ");
  json_str(f, omrt_model_soc(r->model));
  fprintf(f, ",\n  \"threads\": %d,\n  \"runs\": %ld,\n  \"ms_per_run\": %.6f,\n  \"kinds\": [",
          omrt_context_threads(r->ctx), runs, total / (double)runs);
  int first = 1;
  for (int k = 0; omrt_context_profile(r->ctx, k, &name, &tasks, &ms) == OMRT_OK; k++) {
    if (!tasks) continue;
    fprintf(f, "%s\n    {\"kind\": ", first ? "" : ",");
    json_str(f, name);
    fprintf(f, ", \"tasks\": %llu, \"ms_per_run\": %.6f}", (unsigned long long)(tasks / (uint64_t)runs),
            ms / (double)runs);
    first = 0;
  }
  fprintf(f, "\n  ],\n  \"tasks\": [");
  for (int t = 0; omrt_context_task_profile(r->ctx, t, &name, &kind, &ms) == OMRT_OK; t++) {
    fprintf(f, "%s\n    {\"index\": %d, \"name\": ", t ? "," : "", t);
    json_str(f, name);
    fprintf(f, ", \"kind\": ");
    json_str(f, kind);
    fprintf(f, ", \"ms_per_run\": %.6f}", ms / (double)runs);
  }
  fprintf(f, "\n  ]\n}\n");
  int ok = !ferror(f);
  if (fclose(f) != 0 || !ok) return fail("cannot write '%s'", path);
  printf("wrote %s\n", path);
  return 0;
}

static const char *const gear_flags[] = {"", "--dymBatch", "--dymHW", "--dymDims"};

/* Parses "a,b,c" (n values at most, each an integer >= 0) into v; -1 on a bad list. */
static int parse_ints(const char *s, int64_t *v, int max) {
  int n = 0;
  while (*s) {
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || end == s || x < 0 || n == max || (*end && *end != ',')) return -1;
    v[n++] = x;
    s = *end ? end + 1 : end;
  }
  return n;
}

/* The gear values --dymDims names: the dims of every input where the
 * model's dims are -1 (the dynamic ones), inputs in order. */
static int dims_values(const omrt_model *m, const char *spec, int64_t *values, int *nvalues) {
  int nin = omrt_model_num_inputs(m), n = 0;
  for (int i = 0; i < nin; i++) {
    omrt_tensor_desc d;
    omrt_model_input(m, i, &d);
    size_t len = strlen(d.name);
    const char *p = spec, *found = NULL;
    while (p && *p && !found) { /* "name:dims;name:dims" */
      if (strncmp(p, d.name, len) == 0 && p[len] == ':') found = p + len + 1;
      p = strchr(p, ';');
      if (p) p++;
    }
    if (!found)
      return fail("--dymDims \"%s\": input '%s' is missing (give every input: \"name:d0,d1;...\")", spec,
                  d.name);
    char dims[512];
    size_t dl = strcspn(found, ";");
    snprintf(dims, sizeof dims, "%.*s", (int)(dl < sizeof dims ? dl : sizeof dims - 1), found);
    int64_t v[OMRT_MAX_RANK];
    if (parse_ints(dims, v, OMRT_MAX_RANK) != d.rank)
      return fail("--dymDims \"%s\": input '%s' has %d dims, not '%s'", spec, d.name, d.rank, dims);
    for (int k = 0; k < d.rank; k++) {
      if (d.dims[k] == -1 && n < OMRT_MAX_GEAR_VALUES)
        values[n++] = v[k];
      else if (d.dims[k] != v[k])
        return fail("--dymDims \"%s\": input '%s' dim %d is %lld in every gear, not %lld", spec, d.name, k,
                    (long long)d.dims[k], (long long)v[k]);
    }
  }
  *nvalues = n;
  return 0;
}

/* Picks the gear the flags name on ctx, and *who describes it for
 * messages. A model with gears needs its flag; one without takes none. */
static int choose_gear(const options *o, run_state *r, char *who, size_t n) {
  omrt_gear_desc g;
  omrt_model_gear(r->model, 0, &g);
  const char *given = o->dym_batch ? o->dym_batch : o->dym_hw ? o->dym_hw : o->dym_dims;
  int kind = o->dym_batch  ? OMRT_GEAR_BATCH
             : o->dym_hw   ? OMRT_GEAR_IMAGE_SIZE
             : o->dym_dims ? OMRT_GEAR_DIMS
                           : 0;
  snprintf(who, n, "the model");
  if (!kind && g.kind == OMRT_GEAR_NONE) return 0;
  if (kind != g.kind) {
    static const char *const what[] = {"no gears", "batch gears", "image size gears", "dims gears"};
    char list[1024] = "";
    size_t len = 0;
    for (int i = 0; i < omrt_model_num_gears(r->model) && len < sizeof list; i++) {
      omrt_model_gear(r->model, i, &g);
      len += (size_t)snprintf(list + len, sizeof list - len, "%s", i ? "; " : " (");
      for (int v = 0; v < g.nvalues && len < sizeof list; v++)
        len +=
            (size_t)snprintf(list + len, sizeof list - len, "%s%lld", v ? "," : "", (long long)g.values[v]);
    }
    if (len && len < sizeof list) snprintf(list + len, sizeof list - len, ")");
    if (!kind)
      return fail("model '%s' has %s%s: choose one with %s", o->model, what[g.kind], list,
                  gear_flags[g.kind]);
    return fail("%s %s: model '%s' has %s%s%s%s", gear_flags[kind], given, o->model, what[g.kind], list,
                g.kind ? "; use " : "", gear_flags[g.kind]);
  }
  int64_t values[OMRT_MAX_GEAR_VALUES];
  int nvalues = 0, gear;
  if (kind == OMRT_GEAR_DIMS) {
    if (dims_values(r->model, given, values, &nvalues)) return 1;
  } else if ((nvalues = parse_ints(given, values, kind == OMRT_GEAR_BATCH ? 1 : 2)) !=
             (kind == OMRT_GEAR_BATCH ? 1 : 2)) {
    return fail("%s '%s': expected %s", gear_flags[kind], given,
                kind == OMRT_GEAR_BATCH ? "a batch size" : "H,W");
  }
  if (omrt_model_find_gear(r->model, values, nvalues, &gear) != OMRT_OK)
    return fail("%s %s: %s", gear_flags[kind], given, omrt_last_error());
  snprintf(who, n, "gear %s %s", gear_flags[kind], given);
  r->gear = gear;
  return 0;
}

static int run(const options *o, run_state *r) {
  omrt_load_options lo = {.threads = (uint32_t)o->threads};
#ifdef OMRT_HAVE_JIT
  lazy_jit *jit = NULL;
  if (o->jit) {
    if (!(jit = lazy_jit_new())) return fail("out of memory");
    r->jit = jit;
    lo.vprog_compiler = lazy_jit_compiler(jit);
  }
#endif
  if (omrt_model_load_file(o->model, &lo, &r->model) != OMRT_OK) return fail("%s", omrt_last_error());
#ifdef OMRT_HAVE_JIT
  omrt_jit_stats js;
  const char *cache;
  int how = jit ? lazy_jit_last(jit, &js, &cache) : -1;
  if (how == LAZY_JIT_NO_PROGRAMS) printf("jit: no vector programs (libomrt_jit not loaded)\n");
  if (how == LAZY_JIT_COMPILED) {
    printf("jit: %u programs (%u unique bodies: %u compiled, %u from cache, %u shared) in %.1f ms (%.1f ms "
           "CPU), "
           "cache %s\n",
           js.programs, js.unique, js.compiled, js.cached, js.shared, js.ms, js.cpu_ms,
           cache ? cache : "off");
  }
#endif
  r->nin = omrt_model_num_inputs(r->model);
  r->nout = omrt_model_num_outputs(r->model);
  printf("model %s (soc %s): %d input(s), %d output(s)\n", omrt_model_name(r->model),
         omrt_model_soc(r->model), r->nin, r->nout);
  char who[128];
  if (choose_gear(o, r, who, sizeof who)) return 1;
  if (omrt_model_num_gears(r->model) > 1)
    printf("gear %d of %d (%s)\n", r->gear, omrt_model_num_gears(r->model), who + 5);
  if (o->debug)
    printf("  workspace %zu bytes, weights %zu bytes, libomrt %s\n", omrt_model_workspace_bytes(r->model),
           omrt_model_weights_bytes(r->model), omrt_version());

  r->in = calloc((size_t)r->nin + 1, sizeof *r->in);
  r->out = calloc((size_t)r->nout + 1, sizeof *r->out);
  if (!r->in || !r->out) return fail("out of memory");
  if (o->input ? samples_list(o->input, r->nin, &r->samples) : 0) return 1;
  if (!o->input) {
    r->samples.count = 1;
    printf("no --input: using zero-filled inputs\n");
  }
  long runs = o->loop * r->samples.count;
  if (!(r->times = calloc((size_t)runs, sizeof *r->times))) return fail("out of memory");
  for (int i = 0; i < r->nin; i++) {
    omrt_tensor_desc d;
    omrt_model_gear_input(r->model, r->gear, i, &d);
    print_desc("input", i, &d, o->debug);
    if (!(r->in[i] = calloc(1, d.bytes ? d.bytes : 1))) return fail("out of memory for input %d", i);
  }
  for (int i = 0; i < r->nout; i++) {
    omrt_tensor_desc d;
    omrt_model_gear_output(r->model, r->gear, i, &d);
    print_desc("output", i, &d, o->debug);
    if (!(r->out[i] = calloc(1, d.bytes ? d.bytes : 1))) return fail("out of memory for output %d", i);
  }
  if (r->samples.from_dirs) printf("%d samples\n", r->samples.count);
  if (make_dirs(o->output)) return 1;

  omrt_context_options co = {.profile = o->profiler ? 2 : 0, .check_overflow = o->check_overflow};
  if (omrt_context_new_with(r->model, &co, &r->ctx) != OMRT_OK ||
      omrt_context_set_gear(r->ctx, r->gear) != OMRT_OK)
    return fail("%s", omrt_last_error());
  printf("threads: %d\n", omrt_context_threads(r->ctx));
  if (o->dump && (layer_dump_open(r->model, o->dump, o->dump_nodes, &r->dump) ||
                  omrt_context_set_task_hook(r->ctx, layer_dump_hook, r->dump) != OMRT_OK))
    return 1;
  long done = 0;
  for (int k = 0; k < r->samples.count; k++) {
    char name[1024];
    sample_name(&r->samples, k, name, sizeof name);
    for (int i = 0; o->input && i < r->nin; i++) {
      omrt_tensor_desc d;
      omrt_model_gear_input(r->model, r->gear, i, &d);
      const char *path = r->samples.paths[(size_t)k * (size_t)r->nin + (size_t)i];
      if (o->debug) printf("sample %d input %d: %s\n", k, i, path);
      if (read_input(path, r->in[i], d.bytes, i, who)) return 1;
    }
    for (long l = 0; l < o->loop; l++, done++) {
      double t0 = now_ms();
      if (omrt_execute(r->ctx, (const void *const *)r->in, r->out) != OMRT_OK)
        return fail("run %ld: %s", done + 1, omrt_last_error());
      r->times[done] = now_ms() - t0;
      if (r->dump) { /* the first run only */
        omrt_context_set_task_hook(r->ctx, NULL, NULL);
        int files;
        int bad = layer_dump_close(r->dump, &files);
        r->dump = NULL;
        if (bad) return 1;
        printf("dump: %d tensors and dump.json in %s\n", files, o->dump);
      }
    }
    if (!o->check_overflow && !r->warned) r->warned = warn_nonfinite(r, k);
    for (int i = 0; i < r->nout; i++) { /* a counted output: its valid part, as the run left it */
      omrt_tensor_desc d;
      omrt_context_output_dims(r->ctx, i, &d);
      if (d.count_axis >= 0) {
        printf("output %d '%s': shape [", i, d.name);
        for (int k = 0; k < d.rank; k++)
          printf("%s%lld", k ? ", " : "", (long long)d.dims[k]);
        printf("] (dim %d counted at run time)\n", d.count_axis);
      }
      if (write_output(o->output, name, i, &d, r->out[i], o->fmt)) return 1;
    }
  }
  qsort(r->times, (size_t)runs, sizeof *r->times, cmp_double);
  double median = runs % 2 ? r->times[runs / 2] : (r->times[runs / 2 - 1] + r->times[runs / 2]) / 2;
  printf("latency: min %.3f ms, median %.3f ms over %ld runs\n", r->times[0], median, runs);
  double total = print_profile(r->ctx, runs, o->profiler);
  return o->profiler ? write_profile_json(o, r, runs, total) : 0;
}

int main(int argc, char **argv) {
  signal(SIGXFSZ, SIG_IGN); /* past `ulimit -f` an output write fails (EFBIG) and leaves nothing */
  options o = {.loop = 1, .jit = 1};
  int rc = parse_args(argc, argv, &o);
  if (rc == 2 || rc == 3) {
    if (rc == 2)
      fputs(usage, stdout);
    else
      printf("omrun %d.%d.%d (libomrt %s)\n", OMRT_VERSION_MAJOR, OMRT_VERSION_MINOR, OMRT_VERSION_PATCH,
             omrt_version());
    return 0;
  }
  if (rc) return 1;
  run_state r = {0};
  rc = run(&o, &r);
  omrt_context_free(r.ctx);
  for (int i = 0; r.in && i < r.nin; i++)
    free(r.in[i]);
  for (int i = 0; r.out && i < r.nout; i++)
    free(r.out[i]);
  free(r.in);
  free(r.out);
  free(r.times);
  samples_free(&r.samples);
  layer_dump_close(r.dump, NULL);
  omrt_model_free(r.model);
#ifdef OMRT_HAVE_JIT
  lazy_jit_free(r.jit);
#endif
  return rc ? 1 : 0;
}
