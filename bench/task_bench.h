/* task_bench.h - what the one-task benches (matmul_task.c, attention_task.c,
 * conv_task.c, qmatmul_task.c) share: a clock, a sort order for the timings, 64-byte aligned buffers
 * that exit on failure, the SoC buffer sizes the tasks are planned for
 * (Ascend310's, as socs/ gives them), one rt_core with those buffers, the
 * one-task model's check and the timing loop.
 * Header-only; every buffer lives until the bench exits. */
#ifndef TASK_BENCH_H
#define TASK_BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "omrt.h"
#include "runtime/kernels.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int by_value(const void *x, const void *y) {
  const double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

/* bytes rounded up to 64; exits naming the bench (who) when out of memory. */
static void *alloc64(const char *who, size_t bytes) {
  void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!p) {
    fprintf(stderr, "%s: out of memory (%zu bytes)\n", who, bytes);
    exit(1);
  }
  return p;
}

/* A one-task model's buffer sizes; the caller sets workspace_bytes. */
static om_model_def bench_def(void) {
  return (om_model_def){.l0a_bytes = 64 << 10,
                        .l0b_bytes = 64 << 10,
                        .l0c_bytes = 256 << 10,
                        .ub_bytes = 256 << 10,
                        .l1_bytes = 1 << 20,
                        .ntasks = 1};
}

/* A core with def's on-chip buffers (L0A / L0B staged OM_L0_STAGING deep). */
static rt_core bench_core(const char *who, const om_model_def *def) {
  return (rt_core){.l1 = alloc64(who, def->l1_bytes),
                   .l0a = alloc64(who, OM_L0_STAGING * (size_t)def->l0a_bytes),
                   .l0b = alloc64(who, OM_L0_STAGING * (size_t)def->l0b_bytes),
                   .l0c = alloc64(who, def->l0c_bytes),
                   .ub = alloc64(who, def->ub_bytes),
                   .l1_bytes = def->l1_bytes,
                   .l0a_bytes = OM_L0_STAGING * (size_t)def->l0a_bytes,
                   .l0b_bytes = OM_L0_STAGING * (size_t)def->l0b_bytes,
                   .l0c_bytes = def->l0c_bytes,
                   .ub_bytes = def->ub_bytes};
}

/* Runs task's kind's own check over the one-task model of def, t and task
 * with the string table strings[0, bytes); exits naming the bench (who)
 * with the check's message when it refuses the task. */
static inline void bench_check(const char *who, const om_model_def *def, const om_tensor *t,
                               const om_task *task, const char *strings, size_t bytes) {
  omrt_model m;
  memset(&m, 0, sizeof m);
  m.def = def, m.tensors = t, m.tasks = task, m.strings = strings, m.strings_bytes = bytes;
  if (rt_kernels[task->kind].check(&m, 0, task) != OMRT_OK) {
    fprintf(stderr, "%s: %s\n", who, omrt_last_error());
    exit(1);
  }
}

/* Times reps runs of task (kind) over all its blocks on core, run r with
 * args' slot wslot pointing at ws[r % copies] (weights cycled through
 * copies buffers, so they come from memory as in a model run). Returns the
 * reps times in seconds, ascending (malloc'd: the caller frees). */
static inline double *bench_runs(int kind, const om_task *task, rt_args *args, int wslot, void *const *ws,
                                 int copies, rt_core *core, int reps) {
  double *secs = malloc(sizeof *secs * (size_t)reps);
  for (int r = 0; r < reps; r++) {
    args->data[wslot] = ws[r % copies];
    core->run = (uint64_t)r + 1;
    const double t0 = now_s();
    for (uint32_t blk = 0; blk < task->block_dim; blk++)
      rt_kernels[kind].run(task, args, blk, core);
    secs[r] = now_s() - t0;
  }
  qsort(secs, (size_t)reps, sizeof *secs, by_value);
  return secs;
}

#endif
