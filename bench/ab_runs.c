/* ab_runs - two om packages (or one at two thread counts) timed in one
 * process, run by run in turn, for A/B figures on a machine whose speed
 * drifts: a stretch in which the cores run slower (other engineers' builds,
 * the hypervisor, a second core slower than the first this minute) falls
 * on both sides alike instead of on whichever ran then, as it does when two
 * omrun processes alternate round by round.
 *
 *   ab_runs [--runs N] [--per-task] A.om[@THREADS] B.om[@THREADS] INPUT[,INPUT...]
 *
 * Each side loads its package (THREADS as omrun --threads; without it
 * OMRT_THREADS, else min(AI cores, host cores)) and one context, vector
 * programs interpreted (no JIT: compare like with like); the inputs (raw files in the models'
 * input dtypes and shapes, as omrun reads them) go to both, so the two
 * packages take the same inputs. Two untimed runs each, then N timed runs
 * each (default 100) in the order A B B A A B ..., so neither side always
 * runs first after the other. Prints each side's fastest run, 10th
 * percentile and median (wall time around omrt_execute) and B / A of each.
 * With --per-task both contexts profile per task (as OMRT_PROFILE=2) and
 * the tool prints, for every task of A that B has under the same name, the
 * fastest of its N runs on each side and B / A: with the same package at 1
 * and 2 threads, the per-task scaling that the summed profile of one
 * omrun run blurs with outliers. On a loaded machine compare the minima
 * and the 10th percentiles; a median mostly measures the other work.
 *
 * Build (from the source tree, after the CMake build in build/):
 *   cc -O2 -Iinclude bench/ab_runs.c build/libomrt.a -lm -lpthread -ldl -o ab_runs
 * Run pinned and, for short runs, at real-time priority:
 *   chrt -f 50 taskset -c 0,1 ./ab_runs --per-task r50.om@1 r50.om@2 in.bin
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "omrt.h"

enum { MAX_IO = 16 };

typedef struct side {
  const char *path;
  int threads; /* 0: omrt_load_options' default */
  omrt_model *m;
  omrt_context *ctx;
  void *in[MAX_IO], *out[MAX_IO];
  int ntasks;
  double *ms;       /* [runs] */
  double *task_min; /* [ntasks] ms, over the timed runs */
  double *task_cum; /* [ntasks] the profile's running sums after the last run */
} side;

static int die(const char *msg, const char *what) {
  fprintf(stderr, "ab_runs: %s%s%s\n", msg, what ? ": " : "", what ? what : "");
  return 1;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Loads s->path ("X.om" or "X.om@T") and makes its context and buffers. */
static int side_open(side *s, char *spec, int per_task, int runs) {
  char *at = strrchr(spec, '@');
  if (at) *at = '\0', s->threads = atoi(at + 1);
  s->path = spec;
  omrt_load_options lo;
  memset(&lo, 0, sizeof lo);
  lo.threads = (uint32_t)(s->threads > 0 ? s->threads : 0);
  if (omrt_model_load_file(spec, &lo, &s->m) != OMRT_OK) return die(omrt_last_error(), NULL);
  omrt_context_options co;
  memset(&co, 0, sizeof co);
  co.profile = per_task ? 2 : 0;
  if (omrt_context_new_with(s->m, &co, &s->ctx) != OMRT_OK) return die(omrt_last_error(), NULL);
  if (omrt_model_num_inputs(s->m) > MAX_IO || omrt_model_num_outputs(s->m) > MAX_IO)
    return die("more than 16 inputs or outputs", spec);
  for (int i = 0; i < omrt_model_num_outputs(s->m); i++) {
    omrt_tensor_desc d;
    omrt_model_output(s->m, i, &d);
    if (!(s->out[i] = malloc(d.bytes ? d.bytes : 1))) return die("out of memory", NULL);
  }
  s->ms = calloc((size_t)runs, sizeof *s->ms);
  if (!s->ms) return die("out of memory", NULL);
  if (per_task) {
    const char *name, *kind;
    double ms;
    while (omrt_context_task_profile(s->ctx, s->ntasks, &name, &kind, &ms) == OMRT_OK)
      s->ntasks++;
    s->task_min = malloc((size_t)(s->ntasks + 1) * sizeof(double));
    s->task_cum = calloc((size_t)(s->ntasks + 1), sizeof(double));
    if (!s->task_min || !s->task_cum) return die("out of memory", NULL);
  }
  return 0;
}

/* Reads the comma-separated input files into both sides' buffers. */
static int read_inputs(side *s, char *list) {
  int n = omrt_model_num_inputs(s[0].m);
  if (omrt_model_num_inputs(s[1].m) != n) return die("A and B have different numbers of inputs", NULL);
  char *save = NULL, *file = strtok_r(list, ",", &save);
  for (int i = 0; i < n; i++, file = strtok_r(NULL, ",", &save)) {
    omrt_tensor_desc a, b;
    omrt_model_input(s[0].m, i, &a);
    omrt_model_input(s[1].m, i, &b);
    if (!file) return die("fewer input files than the models' inputs", NULL);
    if (a.bytes != b.bytes) return die("A's and B's inputs differ in size", a.name);
    FILE *f = fopen(file, "rb");
    if (!f) return die("cannot open", file);
    void *buf = malloc(a.bytes ? a.bytes : 1);
    size_t got = buf ? fread(buf, 1, a.bytes, f) : 0;
    fclose(f);
    if (got != a.bytes) return free(buf), die("input file shorter than the model's input", file);
    s[0].in[i] = buf, s[1].in[i] = buf;
  }
  return 0;
}

/* One run of side s; with per-task profiling, each task's time in this run
 * (the growth of its running sum) updates its minimum. */
static int side_run(side *s, int timed, int run) {
  double t0 = now_ms();
  if (omrt_execute(s->ctx, (const void *const *)s->in, s->out) != OMRT_OK)
    return die(omrt_last_error(), s->path);
  double t = now_ms() - t0;
  if (timed) s->ms[run] = t;
  for (int k = 0; k < s->ntasks; k++) {
    const char *name, *kind;
    double cum, d;
    omrt_context_task_profile(s->ctx, k, &name, &kind, &cum);
    d = cum - s->task_cum[k];
    s->task_cum[k] = cum;
    if (timed && (run == 0 || d < s->task_min[k])) s->task_min[k] = d;
  }
  return 0;
}

static void summary(side *s, int runs, double q[3]) {
  double *v = malloc((size_t)runs * sizeof *v);
  memcpy(v, s->ms, (size_t)runs * sizeof *v);
  qsort(v, (size_t)runs, sizeof *v, cmp_double);
  q[0] = v[0], q[1] = v[runs / 10], q[2] = v[runs / 2];
  free(v);
}

/* B's task named name, or -1. */
static int find_task(const side *b, const char *name) {
  for (int k = 0; k < b->ntasks; k++) {
    const char *n, *kind;
    double ms;
    omrt_context_task_profile(b->ctx, k, &n, &kind, &ms);
    if (strcmp(n, name) == 0) return k;
  }
  return -1;
}

int main(int argc, char **argv) {
  int runs = 100, per_task = 0, a = 1;
  for (; a < argc && strncmp(argv[a], "--", 2) == 0; a++) {
    if (strcmp(argv[a], "--per-task") == 0)
      per_task = 1;
    else if (strcmp(argv[a], "--runs") == 0 && a + 1 < argc)
      runs = atoi(argv[++a]);
    else
      return die("unknown option", argv[a]);
  }
  if (argc - a != 3 || runs < 1) {
    fprintf(stderr,
            "usage: ab_runs [--runs N] [--per-task] A.om[@THREADS] B.om[@THREADS] INPUT[,INPUT...]\n");
    return 2;
  }
  side s[2];
  memset(s, 0, sizeof s);
  if (side_open(&s[0], argv[a], per_task, runs) || side_open(&s[1], argv[a + 1], per_task, runs) ||
      read_inputs(s, argv[a + 2]))
    return 1;
  for (int w = 0; w < 2; w++)
    for (int i = 0; i < 2; i++)
      if (side_run(&s[i], 0, 0)) return 1;
  for (int r = 0; r < runs; r++)
    for (int i = 0; i < 2; i++) /* A B, B A, A B, ... */
      if (side_run(&s[r % 2 ? 1 - i : i], 1, r)) return 1;

  double q[2][3];
  printf("ab_runs: %d runs each, alternating (A B B A ...)\n", runs);
  for (int i = 0; i < 2; i++) {
    summary(&s[i], runs, q[i]);
    printf("%c: %s, %d threads: min %.3f ms, p10 %.3f ms, median %.3f ms\n", 'A' + i, s[i].path,
           omrt_context_threads(s[i].ctx), q[i][0], q[i][1], q[i][2]);
  }
  printf("B / A: min %.3f, p10 %.3f, median %.3f\n", q[1][0] / q[0][0], q[1][1] / q[0][1], q[1][2] / q[0][2]);
  if (per_task) {
    double sum[2] = {0, 0};
    printf("per task, the fastest of the runs (ms):\n  task %-12s %9s %9s %6s  name\n", "kind", "A", "B",
           "B/A");
    for (int k = 0; k < s[0].ntasks; k++) {
      const char *name, *kind;
      double ms;
      omrt_context_task_profile(s[0].ctx, k, &name, &kind, &ms);
      int kb = find_task(&s[1], name);
      if (kb < 0) {
        printf("  %4d %-12s %9.3f %9s %6s  %s\n", k, kind, s[0].task_min[k], "-", "-", name);
        continue;
      }
      double ta = s[0].task_min[k], tb = s[1].task_min[kb];
      sum[0] += ta, sum[1] += tb;
      printf("  %4d %-12s %9.3f %9.3f %6.3f  %s\n", k, kind, ta, tb, ta > 0 ? tb / ta : 0.0, name);
    }
    printf("sum over the tasks both have: A %.3f ms, B %.3f ms, B / A %.3f\n", sum[0], sum[1],
           sum[0] > 0 ? sum[1] / sum[0] : 0.0);
  }
  for (int i = 0; i < 2; i++) {
    omrt_context_free(s[i].ctx);
    omrt_model_free(s[i].m);
  }
  return 0;
}
