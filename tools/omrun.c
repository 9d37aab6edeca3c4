/* omrun - msame-style runner for om packages, on libomrt's public API only.
 *
 *   omrun --model X.om [--input a.bin[,b.bin]] --output DIR [--loop N] [--threads N] [--jit on|off]
 *
 * Inputs are raw little-endian files in each model input's dtype and shape (C
 * order) and must be exactly the input's byte size; without --input every
 * input is zero-filled. The model runs --loop times on one context; outputs
 * of the last run go to DIR/output_<i>.bin (DIR is created if needed).
 * Prints the model's I/O, the thread count and the latency (min and median
 * over the runs). Exit 0 on success; on any error one line "omrun: <what>"
 * on stderr and exit 1. Flags take "--flag=value" or "--flag value".
 * Built with libomrt_jit (OMRT_HAVE_JIT), vector programs are compiled at
 * load unless --jit=off or OMRT_JIT=0 (the flag wins), and the compile time
 * is printed (total ms, programs, unique bodies and how many of those came
 * from the OMRT_JIT_CACHE directory). The library (and LLVM) is loaded only
 * for a model that has vector programs (tools/lazy_jit.h); when it cannot
 * be loaded, omrun says so once and interprets them. With OMRT_PROFILE=1
 * the time per task kind over all runs is printed too.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "omrt.h"
#ifdef OMRT_HAVE_JIT
#include "tools/lazy_jit.h"
#endif

static const char usage[] =
    "usage: omrun --model X.om [--input a.bin[,b.bin...]] --output DIR [--loop N] [--threads N]\n"
    "             [--jit on|off]\n"
    "  --model    the om package to run\n"
    "  --input    comma-separated raw input files, one per model input, in the input's dtype\n"
    "             and shape (C order, little-endian); omitted: zero-filled inputs\n"
    "  --output   directory for output_0.bin, output_1.bin, ... (created if needed)\n"
    "  --loop     number of runs (default 1); latency is reported as min and median\n"
    "  --threads  worker threads (default: $OMRT_THREADS, else min(AI cores, host cores))\n"
    "  --jit      compile vector programs to native code at load (LLVM); default on when\n"
    "             omrun is built with libomrt_jit, unless $OMRT_JIT is 0\n"
    "  --help     this text\n"
    "environment: OMRT_JIT=0|1 (as --jit), OMRT_PROFILE=1 (print the time per task kind;\n"
    "             2: also the slowest tasks),\n"
    "             OMRT_JIT_CACHE=DIR (keep compiled vector programs in DIR and reuse them),\n"
    "             OMRT_JIT_LIBRARY=FILE (the libomrt_jit to load, default its soname),\n"
    "             OMRT_PORTABLE=1 (the portable C kernels, not the x86 ones),\n"
    "             OMRT_AVX512=0 (the 256-bit x86 kernels on an AVX-512 host)\n";

typedef struct options {
  const char *model, *input, *output;
  long loop, threads;
  int jit; /* 1: compile vector programs at load */
} options;

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("omrun: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return 1;
}

static int parse_count(const char *flag, const char *s, long max, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || *s == '\0' || *end || v < 1 || v > max)
    return fail("--%s: '%s' is not an integer in 1..%ld", flag, s, max);
  *out = v;
  return 0;
}

/* Returns 0 to run, 1 on error, 2 for --help. */
static int parse_args(int argc, char **argv, options *o) {
  const char *loop = NULL, *threads = NULL, *jit = getenv("OMRT_JIT"), *jit_flag = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return 2;
    if (strncmp(a, "--", 2) != 0) return fail("unexpected argument '%s' (see --help)", a);
    const char *name = a + 2, *eq = strchr(name, '='), *val;
    size_t n = eq ? (size_t)(eq - name) : strlen(name);
    if (eq) {
      val = eq + 1;
    } else {
      if (i + 1 >= argc) return fail("--%s needs a value", name);
      val = argv[++i];
    }
    const char **slot = n == 5 && !strncmp(name, "model", 5)     ? &o->model
                        : n == 5 && !strncmp(name, "input", 5)   ? &o->input
                        : n == 6 && !strncmp(name, "output", 6)  ? &o->output
                        : n == 4 && !strncmp(name, "loop", 4)    ? &loop
                        : n == 7 && !strncmp(name, "threads", 7) ? &threads
                        : n == 3 && !strncmp(name, "jit", 3)     ? &jit_flag
                                                                 : NULL;
    if (!slot) return fail("unknown flag '--%.*s' (see --help)", (int)n, name);
    *slot = val;
  }
  if (!o->model) return fail("--model is required (see --help)");
  if (!o->output) return fail("--output is required (see --help)");
  if (loop && parse_count("loop", loop, 1000000000L, &o->loop)) return 1;
  if (threads && parse_count("threads", threads, 1024, &o->threads)) return 1;
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

static const char *dtype_str(int dt) {
  switch (dt) {
  case OMRT_FLOAT32: return "float32";
  case OMRT_FLOAT16: return "float16";
  case OMRT_UINT8: return "uint8";
  case OMRT_INT8: return "int8";
  case OMRT_INT32: return "int32";
  case OMRT_INT64: return "int64";
  case OMRT_BOOL: return "bool";
  }
  return "?";
}

static void print_desc(const char *what, int i, const omrt_tensor_desc *d) {
  printf("  %s %d: %s %s [", what, i, d->name, dtype_str(d->dtype));
  for (int k = 0; k < d->rank; k++)
    printf("%s%lld", k ? ", " : "", (long long)d->dims[k]);
  printf("] (%zu bytes)\n", d->bytes);
}

/* Reads `path` into buf, which must be exactly `bytes` long. */
static int read_input(const char *path, void *buf, size_t bytes, int index) {
  FILE *f = fopen(path, "rb");
  if (!f) return fail("cannot open input %d '%s': %s", index, path, strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    fclose(f);
    return fail("input %d '%s' is not a regular file", index, path);
  }
  if ((unsigned long long)st.st_size != bytes) {
    fclose(f);
    return fail("input %d '%s' has %lld bytes, the model expects %zu", index, path, (long long)st.st_size,
                bytes);
  }
  size_t got = bytes ? fread(buf, 1, bytes, f) : 0;
  int err = ferror(f);
  fclose(f);
  if (got != bytes || err) return fail("cannot read input %d '%s'", index, path);
  return 0;
}

/* mkdir -p. */
static int make_dirs(const char *dir) {
  char *p = strdup(dir);
  if (!p) return fail("out of memory");
  for (char *s = p + 1;; s++) {
    char c = *s;
    if (c != '/' && c != '\0') continue;
    *s = '\0';
    if (mkdir(p, 0777) != 0 && errno != EEXIST) {
      int err = errno;
      free(p);
      return fail("cannot create output directory '%s': %s", dir, strerror(err));
    }
    *s = c;
    if (c == '\0') break;
  }
  free(p);
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return fail("output '%s' is not a directory", dir);
  return 0;
}

static int write_output(const char *dir, int index, const void *data, size_t bytes) {
  char path[4096];
  snprintf(path, sizeof path, "%s/output_%d.bin", dir, index);
  FILE *f = fopen(path, "wb");
  if (!f) return fail("cannot create '%s': %s", path, strerror(errno));
  int ok = (bytes == 0 || fwrite(data, 1, bytes, f) == bytes);
  if (fclose(f) != 0 || !ok) return fail("cannot write '%s'", path);
  printf("wrote %s (%zu bytes)\n", path, bytes);
  return 0;
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
  double *times;
} run_state;

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

/* Prints the time per task kind when OMRT_PROFILE=1 made the context profile
 * (and the slowest tasks with OMRT_PROFILE=2). */
static void print_profile(const omrt_context *ctx, long runs) {
  const char *name;
  uint64_t tasks;
  double ms, total = 0;
  for (int k = 0; omrt_context_profile(ctx, k, &name, &tasks, &ms) == OMRT_OK; k++)
    total += ms;
  if (total == 0) return;
  printf("profile (per run, over %ld runs):\n", runs);
  for (int k = 0; omrt_context_profile(ctx, k, &name, &tasks, &ms) == OMRT_OK; k++)
    if (tasks)
      printf("  %-12s %5llu tasks %10.3f ms %5.1f%%\n", name, (unsigned long long)(tasks / (uint64_t)runs),
             ms / (double)runs, 100 * ms / total);
  print_task_profile(ctx, runs, total);
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

  r->in = calloc((size_t)r->nin + 1, sizeof *r->in);
  r->out = calloc((size_t)r->nout + 1, sizeof *r->out);
  r->times = calloc((size_t)o->loop, sizeof *r->times);
  if (!r->in || !r->out || !r->times) return fail("out of memory");

  const char *files = o->input;
  if (!files) printf("no --input: using zero-filled inputs\n");
  for (int i = 0; i < r->nin; i++) {
    omrt_tensor_desc d;
    omrt_model_input(r->model, i, &d);
    print_desc("input", i, &d);
    if (!(r->in[i] = calloc(1, d.bytes ? d.bytes : 1))) return fail("out of memory for input %d", i);
    if (!files) continue;
    if (!*files) return fail("--input names fewer files than the model's %d input(s)", r->nin);
    const char *comma = strchr(files, ',');
    size_t n = comma ? (size_t)(comma - files) : strlen(files);
    char path[4096];
    snprintf(path, sizeof path, "%.*s", (int)n, files);
    if (read_input(path, r->in[i], d.bytes, i)) return 1;
    files = comma ? comma + 1 : files + n;
  }
  if (files && *files) return fail("--input names more files than the model's %d input(s)", r->nin);
  for (int i = 0; i < r->nout; i++) {
    omrt_tensor_desc d;
    omrt_model_output(r->model, i, &d);
    print_desc("output", i, &d);
    if (!(r->out[i] = calloc(1, d.bytes ? d.bytes : 1))) return fail("out of memory for output %d", i);
  }

  if (omrt_context_new(r->model, &r->ctx) != OMRT_OK) return fail("%s", omrt_last_error());
  printf("threads: %d\n", omrt_context_threads(r->ctx));
  for (long k = 0; k < o->loop; k++) {
    double t0 = now_ms();
    if (omrt_execute(r->ctx, (const void *const *)r->in, r->out) != OMRT_OK)
      return fail("run %ld: %s", k + 1, omrt_last_error());
    r->times[k] = now_ms() - t0;
  }

  if (make_dirs(o->output)) return 1;
  for (int i = 0; i < r->nout; i++) {
    omrt_tensor_desc d;
    omrt_model_output(r->model, i, &d);
    if (write_output(o->output, i, r->out[i], d.bytes)) return 1;
  }
  qsort(r->times, (size_t)o->loop, sizeof *r->times, cmp_double);
  double median =
      o->loop % 2 ? r->times[o->loop / 2] : (r->times[o->loop / 2 - 1] + r->times[o->loop / 2]) / 2;
  printf("latency: min %.3f ms, median %.3f ms over %ld runs\n", r->times[0], median, o->loop);
  print_profile(r->ctx, o->loop);
  return 0;
}

int main(int argc, char **argv) {
  options o = {.loop = 1, .jit = 1};
  int rc = parse_args(argc, argv, &o);
  if (rc == 2) {
    fputs(usage, stdout);
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
  omrt_model_free(r.model);
#ifdef OMRT_HAVE_JIT
  lazy_jit_free(r.jit);
#endif
  return rc ? 1 : 0;
}
