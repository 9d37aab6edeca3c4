/* acl_stream.c - AscendCL streams: an in-order queue of work run by a host
 * thread of its own, as a stream of the chip is run by the device while the
 * host goes on.
 *
 * aclrtMemcpyAsync, aclrtMemcpy2dAsync, aclrtMemsetAsync, aclmdlExecuteAsync,
 * the DVPP calls and the event and callback calls push an acl_op; the thread pops and runs
 * them one at a time, keeping the first failure (code and message) for the
 * next acl_stream_wait, which returns when the queue is empty and nothing
 * runs. A RUN op holds a user of its model (acl_model.users) until it has
 * run, so unloading waits for it; event ops hold a reference to their event
 * (acl_event.c runs them). The thread never takes the registry lock: it
 * may be waited for by a caller that holds it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl_internal.h"

struct acl_stream {
  acl_context *ctx;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t wake; /* work queued, or stop */
  pthread_cond_t idle; /* queue empty and nothing running */
  acl_op *head, *tail;
  int running; /* an op popped and not finished */
  int stop;
  aclError error; /* the first failure since the last wait */
  char msg[1024];
  uint32_t priority, overflow_switch;
  int stop_on_failure;
};

aclError acl_run_model(acl_model *m, int gear, const void *const *in, void *const *out, char *msg, size_t n) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pthread_mutex_lock(&m->run);
  acl_trace *trace; /* the dump's and profiling's view of the run, NULL when neither watches it */
  acl_trace_begin(m, &trace);
  omrt_status s = omrt_context_set_gear(m->ctx, gear);
  if (s == OMRT_OK) s = omrt_execute(m->ctx, in, out);
  if (s != OMRT_OK) snprintf(msg, n, "model %u: %s", m->id, omrt_last_error());
  aclError e = trace ? acl_trace_end(trace, msg, n) : ACL_SUCCESS; /* (a dump failure's message replaces) */
  pthread_mutex_unlock(&m->run);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (s == OMRT_OK)
    acl_note_run(m, gear, out, (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec));
  return e ? e : acl_from_omrt(s);
}

static aclError run_op(acl_stream *s, acl_op *op, char *msg, size_t n) {
  switch (op->kind) {
  case ACL_OP_COPY: memmove(op->dst, op->src, op->count); return ACL_SUCCESS;
  case ACL_OP_COPY2D:
    for (size_t r = 0; r < op->height; r++)
      memmove((char *)op->dst + r * op->dpitch, (const char *)op->src + r * op->spitch, op->count);
    return ACL_SUCCESS;
  case ACL_OP_MEMSET: memset(op->dst, op->value, op->count); return ACL_SUCCESS;
  case ACL_OP_RUN: {
    aclError e = acl_run_model(op->model, op->gear, op->in, op->out, msg, n);
    acl_model_release(op->model);
    return e;
  }
  case ACL_OP_RECORD:
  case ACL_OP_RESET:
  case ACL_OP_WAIT:
  case ACL_OP_CALLBACK: return acl_event_op(s, op, msg, n);
  case ACL_OP_OVERFLOW: acl_overflow_op(op); return ACL_SUCCESS;
  case ACL_OP_DVPP: return op->work(op->job, msg, n);
  }
  return ACL_ERROR_INTERNAL_ERROR;
}

static void *stream_main(void *arg) {
  acl_stream *s = arg;
  char msg[1024];
  pthread_mutex_lock(&s->mu);
  for (;;) {
    while (!s->head && !s->stop)
      pthread_cond_wait(&s->wake, &s->mu);
    if (!s->head) break; /* stop, and nothing left */
    acl_op *op = s->head;
    s->head = op->next;
    if (!s->head) s->tail = NULL;
    s->running = 1;
    int skip = s->stop_on_failure && s->error &&
               (op->kind == ACL_OP_COPY || op->kind == ACL_OP_COPY2D || op->kind == ACL_OP_MEMSET ||
                op->kind == ACL_OP_RUN || op->kind == ACL_OP_DVPP);
    pthread_mutex_unlock(&s->mu);
    aclError e = ACL_SUCCESS;
    if (!skip)
      e = run_op(s, op, msg, sizeof msg);
    else if (op->kind == ACL_OP_RUN)
      acl_model_release(op->model);
    free(op->in);
    free(op->job);
    free(op);
    pthread_mutex_lock(&s->mu);
    if (e && !s->error) {
      s->error = e;
      snprintf(s->msg, sizeof s->msg, "%s", msg);
    }
    s->running = 0;
    if (!s->head) pthread_cond_broadcast(&s->idle);
  }
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

acl_stream *acl_stream_new(acl_context *ctx) {
  acl_stream *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->ctx = ctx;
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->wake, NULL);
  pthread_cond_init(&s->idle, NULL);
  if (pthread_create(&s->thread, NULL, stream_main, s) != 0) {
    pthread_cond_destroy(&s->idle);
    pthread_cond_destroy(&s->wake);
    pthread_mutex_destroy(&s->mu);
    free(s);
    return NULL;
  }
  return s;
}

aclError acl_stream_free(acl_stream *s, char *msg, size_t n) {
  if (!s) return ACL_SUCCESS;
  pthread_mutex_lock(&s->mu);
  s->stop = 1;
  pthread_cond_signal(&s->wake);
  pthread_mutex_unlock(&s->mu);
  acl_event_wake(); /* a blocking callback no thread took stops holding the stream */
  pthread_join(s->thread, NULL);
  acl_event_forget_stream(s);
  aclError e = s->error == ACL_ERROR_RT_STREAM_NO_CB_REG ? s->error : ACL_SUCCESS;
  if (e) snprintf(msg, n, "%s", s->msg);
  pthread_cond_destroy(&s->idle);
  pthread_cond_destroy(&s->wake);
  pthread_mutex_destroy(&s->mu);
  free(s);
  return e;
}

acl_context *acl_stream_context(const acl_stream *s) { return s->ctx; }

#define STREAM_FIELD(set, get, field, type)                                                                  \
  void set(acl_stream *s, type v) {                                                                          \
    pthread_mutex_lock(&s->mu);                                                                              \
    s->field = v;                                                                                            \
    pthread_mutex_unlock(&s->mu);                                                                            \
  }                                                                                                          \
  type get(acl_stream *s) {                                                                                  \
    pthread_mutex_lock(&s->mu);                                                                              \
    type v = s->field;                                                                                       \
    pthread_mutex_unlock(&s->mu);                                                                            \
    return v;                                                                                                \
  }
STREAM_FIELD(acl_stream_set_priority, acl_stream_priority, priority, uint32_t)
STREAM_FIELD(acl_stream_set_overflow_switch, acl_stream_overflow_switch, overflow_switch, uint32_t)

void acl_stream_set_stop_on_failure(acl_stream *s, int stop) {
  pthread_mutex_lock(&s->mu);
  s->stop_on_failure = stop;
  pthread_mutex_unlock(&s->mu);
}

int acl_stream_busy(acl_stream *s) {
  pthread_mutex_lock(&s->mu);
  int busy = s->head || s->running;
  pthread_mutex_unlock(&s->mu);
  return busy;
}

int acl_stream_stopping(acl_stream *s) {
  pthread_mutex_lock(&s->mu);
  int stop = s->stop;
  pthread_mutex_unlock(&s->mu);
  return stop;
}

void acl_stream_push(acl_stream *s, acl_op *op) {
  op->next = NULL;
  pthread_mutex_lock(&s->mu);
  if (s->tail)
    s->tail->next = op;
  else
    s->head = op;
  s->tail = op;
  pthread_cond_signal(&s->wake);
  pthread_mutex_unlock(&s->mu);
}

aclError acl_stream_wait(acl_stream *s, char *msg, size_t n, int32_t timeout_ms) {
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  int64_t ns = (int64_t)deadline.tv_nsec + (int64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000;
  deadline.tv_sec += (time_t)(ns / 1000000000);
  deadline.tv_nsec = (long)(ns % 1000000000);
  pthread_mutex_lock(&s->mu);
  while (s->head || s->running)
    if (timeout_ms < 0)
      pthread_cond_wait(&s->idle, &s->mu);
    else if (pthread_cond_timedwait(&s->idle, &s->mu, &deadline) != 0 && (s->head || s->running)) {
      pthread_mutex_unlock(&s->mu);
      snprintf(msg, n, "its work did not finish within %d ms", (int)timeout_ms);
      return ACL_ERROR_RT_STREAM_SYNC_TIMEOUT;
    }
  aclError e = s->error;
  if (e) snprintf(msg, n, "%s", s->msg);
  s->error = ACL_SUCCESS;
  pthread_mutex_unlock(&s->mu);
  return e;
}
