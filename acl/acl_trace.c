/* acl_trace.c - one model execution seen task by task, for the dump
 * (acl_dump.c) and profiling (acl_prof.c): libomrt's task start hook and
 * task hook set on the model's context for that execution only, and taken
 * off after it, so that an execution nothing watches runs as it would
 * without them (acl_trace_begin costs two flag reads).
 *
 * A task's start time is read after the dump copied its inputs, its end
 * before the dump writes its outputs: the dump's own time is not counted
 * in the task's. Times are CLOCK_REALTIME ns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "acl/acl_internal.h"

struct acl_trace {
  acl_model *m;
  acl_dump_model *dump;
  acl_prof_run *prof;
  uint64_t start_ns; /* the running task's */
  int failed;
  char msg[512]; /* the dump's failure */
};

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int on_start(void *user, const omrt_task_info *info) {
  acl_trace *t = user;
  if (t->dump && acl_dump_task_start(t->dump, t->m->ctx, t->m->m, info, t->msg, sizeof t->msg))
    return t->failed = 1;
  t->start_ns = now_ns();
  return 0;
}

static int on_end(void *user, const omrt_task_info *info) {
  acl_trace *t = user;
  uint64_t end = now_ns();
  if (t->prof) acl_prof_task(t->prof, info, t->start_ns, end);
  if (t->dump && acl_dump_task_end(t->dump, info, t->msg, sizeof t->msg)) return t->failed = 1;
  return 0;
}

void acl_trace_begin(acl_model *m, acl_trace **out) {
  *out = NULL;
  acl_dump_model *d = m->dump ? acl_dump_run_begin(m) : NULL;
  acl_prof_run *p = acl_prof_run_begin(m);
  if (!d && !p) return;
  acl_trace *t = calloc(1, sizeof *t);
  if (!t) { /* (out of memory: the execution goes on unwatched) */
    if (p) acl_prof_run_end(p);
    return;
  }
  *t = (acl_trace){.m = m, .dump = d, .prof = p};
  omrt_context_set_task_start_hook(m->ctx, on_start, t);
  omrt_context_set_task_hook(m->ctx, on_end, t);
  *out = t;
}

aclError acl_trace_end(acl_trace *t, char *msg, size_t n) {
  omrt_context_set_task_start_hook(t->m->ctx, NULL, NULL);
  omrt_context_set_task_hook(t->m->ctx, NULL, NULL);
  if (t->dump) acl_dump_run_end(t->dump);
  if (t->prof) acl_prof_run_end(t->prof);
  aclError e = t->failed ? ACL_ERROR_WRITE_FILE : ACL_SUCCESS;
  if (t->failed) snprintf(msg, n, "model %u: %s", t->m->id, t->msg);
  free(t);
  return e;
}
