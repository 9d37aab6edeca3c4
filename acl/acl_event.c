/* acl_event.c - AscendCL events and callbacks (acl_rt.h): points in a
 * stream's order the host can wait for or time, streams waiting for them,
 * and host functions run in a stream's order on an application thread.
 *
 * An event counts its records: aclrtRecordEvent numbers the record (gen =
 * ++recorded) and enqueues it; the stream's thread, reaching it, sets
 * reached (and the time, for the newest record). The event is complete when
 * its latest record is reached; aclrtResetEvent enqueues "forget the
 * records up to gen" (cleared), after which it reads as never recorded. A
 * stream waiting for an event (ACL_OP_WAIT) waits for the record that was
 * latest when aclrtStreamWaitEvent was called.
 *
 * Callbacks: subscriptions pair a stream with a thread id; the stream's
 * thread, reaching a CALLBACK op, queues a report for that thread and (for
 * ACL_CALLBACK_BLOCK) waits until aclrtProcessReport on that thread has run
 * it, unless the subscription ends (aclrtUnSubscribeReport) or the stream
 * is being destroyed before the thread took it: then the report is
 * withdrawn and the stream fails with ACL_ERROR_RT_STREAM_NO_CB_REG, so a
 * blocking callback no thread processes cannot hold aclrtDestroyStream or
 * aclFinalize (which hold the registry lock that aclrtProcessReport takes).
 *
 * Locking: one mutex (ev.mu) and one condition (ev.cv, broadcast on every
 * change) for all of it, taken by the API calls and by the streams'
 * threads; never held while taking the registry lock, which the calls take
 * first (and release) to resolve streams. Lifetimes: an event holds one
 * reference for its handle and one per queued op or waiting call naming it;
 * aclrtDestroyEvent drops the handle's (the handle is dead at once), the
 * last reference frees it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl_internal.h"

struct acl_event {
  struct acl_event *next;
  uint32_t flags;
  int timed;          /* notes the time when reached */
  int refs;           /* the handle (while live) + ops and waiters naming it */
  uint64_t recorded;  /* records enqueued */
  uint64_t reached;   /* the newest record reached */
  uint64_t cleared;   /* records up to this one were reset */
  struct timespec at; /* when `reached` was reached */
};

typedef struct subscription {
  struct subscription *next;
  uint64_t thread;
  acl_stream *stream;
} subscription;

typedef struct report {
  struct report *next;
  uint64_t thread;
  aclrtCallback fn;
  void *user;
  int block, taken, done; /* taken: aclrtProcessReport has unlinked it */
} report;

static struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  acl_event *events; /* live handles */
  subscription *subs;
  report *head, *tail;     /* callbacks handed to threads, oldest first */
  uint32_t wait_timeout_s; /* aclrtSetOpWaitTimeout; 0: forever */
} ev = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

enum { ALL_FLAGS = ACL_EVENT_SYNC | ACL_EVENT_CAPTURE_STREAM_PROGRESS | ACL_EVENT_TIME_LINE };

/* --- events (under ev.mu) */

static acl_event *find_event(const void *handle) {
  for (acl_event *e = ev.events; e; e = e->next)
    if (e == handle) return e;
  return NULL;
}

static void unref(acl_event *e) {
  if (--e->refs == 0) free(e);
}

static int complete(const acl_event *e) { return e->recorded > e->cleared && e->reached >= e->recorded; }

/* Waits until record `gen` of e is reached or reset; deadline NULL: forever.
 * 0, or ETIMEDOUT. */
static int wait_record(acl_event *e, uint64_t gen, const struct timespec *deadline) {
  while (e->reached < gen && e->cleared < gen) {
    if (!deadline)
      pthread_cond_wait(&ev.cv, &ev.mu);
    else if (pthread_cond_timedwait(&ev.cv, &ev.mu, deadline) != 0 && e->reached < gen && e->cleared < gen)
      return 1;
  }
  return 0;
}

static struct timespec deadline_after_ms(int64_t ms) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  t.tv_sec += (time_t)(ms / 1000);
  t.tv_nsec += (long)(ms % 1000) * 1000000L;
  if (t.tv_nsec >= 1000000000L) {
    t.tv_sec++;
    t.tv_nsec -= 1000000000L;
  }
  return t;
}

static aclError create(const char *call, aclrtEvent *event, uint32_t flag, int timed) {
  aclError e = acl_enter(call);
  if (e) return e;
  acl_leave();
  if (!event) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: event is NULL", call);
  if (flag & ~(uint32_t)ALL_FLAGS)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: flag 0x%x has bits that are no ACL_EVENT_* flag", call,
                    (unsigned)flag);
  acl_event *x = calloc(1, sizeof *x);
  if (!x) return acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call);
  *x = (acl_event){.flags = flag, .timed = timed, .refs = 1};
  pthread_mutex_lock(&ev.mu);
  x->next = ev.events;
  ev.events = x;
  pthread_mutex_unlock(&ev.mu);
  *event = x;
  return ACL_SUCCESS;
}

aclError aclrtCreateEvent(aclrtEvent *event) { return create("aclrtCreateEvent", event, 0, 1); }

aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag) {
  return create("aclrtCreateEventWithFlag", event, flag, (flag & ACL_EVENT_TIME_LINE) != 0);
}

/* Every event here may be recorded again and waited for at its latest
 * record, so the Ex flavour is the same event. */
aclError aclrtCreateEventExWithFlag(aclrtEvent *event, uint32_t flag) {
  return create("aclrtCreateEventExWithFlag", event, flag, (flag & ACL_EVENT_TIME_LINE) != 0);
}

/* The live event `handle` (under ev.mu), or NULL with a message. */
static acl_event *live(const char *call, const char *what, const void *handle) {
  acl_event *e = find_event(handle);
  if (!e) acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s %p is not a live event", call, what, handle);
  return e;
}

aclError aclrtDestroyEvent(aclrtEvent event) {
  aclError err = acl_enter("aclrtDestroyEvent");
  if (err) return err;
  acl_leave();
  pthread_mutex_lock(&ev.mu);
  acl_event *e = live("aclrtDestroyEvent", "event", event);
  if (e) {
    for (acl_event **p = &ev.events; *p; p = &(*p)->next)
      if (*p == e) {
        *p = e->next;
        break;
      }
    unref(e);
  }
  pthread_mutex_unlock(&ev.mu);
  return e ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;
}

/* Enqueues a RECORD, RESET or WAIT op for `event` on `stream`. */
static aclError enqueue(const char *call, acl_op_kind kind, aclrtEvent event, aclrtStream stream) {
  aclError err = acl_enter(call);
  if (err) return err;
  acl_stream *s = NULL;
  acl_op *op = NULL;
  if (!(err = acl_resolve_stream(call, stream, &s)) && !(op = calloc(1, sizeof *op)))
    err = acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call);
  if (!err) {
    pthread_mutex_lock(&ev.mu);
    acl_event *e = live(call, "event", event);
    if (e) {
      e->refs++;
      *op = (acl_op){.kind = kind, .event = e, .gen = kind == ACL_OP_RECORD ? ++e->recorded : e->recorded};
    }
    pthread_mutex_unlock(&ev.mu);
    if (e)
      acl_stream_push(s, op); /* (under the registry lock: the stream stays) */
    else
      err = ACL_ERROR_INVALID_PARAM;
  }
  if (err) free(op);
  return acl_leave_with(err);
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
  return enqueue("aclrtRecordEvent", ACL_OP_RECORD, event, stream);
}

aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream) {
  return enqueue("aclrtResetEvent", ACL_OP_RESET, event, stream);
}

aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) {
  return enqueue("aclrtStreamWaitEvent", ACL_OP_WAIT, event, stream);
}

static aclError query(const char *call, aclrtEvent event, int *done) {
  aclError err = acl_enter(call);
  if (err) return err;
  acl_leave();
  if (!done) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: status is NULL", call);
  pthread_mutex_lock(&ev.mu);
  acl_event *e = live(call, "event", event);
  if (e) *done = complete(e);
  pthread_mutex_unlock(&ev.mu);
  return e ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;
}

aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus *status) {
  int done = 0;
  aclError err = query("aclrtQueryEvent", event, status ? &done : NULL);
  if (!err) *status = done ? ACL_EVENT_STATUS_COMPLETE : ACL_EVENT_STATUS_NOT_READY;
  return err;
}

aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status) {
  int done = 0;
  aclError err = query("aclrtQueryEventStatus", event, status ? &done : NULL);
  if (!err) *status = done ? ACL_EVENT_RECORDED_STATUS_COMPLETE : ACL_EVENT_RECORDED_STATUS_NOT_READY;
  return err;
}

/* A stream waiting for the event (aclrtStreamWaitEvent) waits for its
 * latest record: COMPLETE once that record is reached. */
aclError aclrtQueryEventWaitStatus(aclrtEvent event, aclrtEventWaitStatus *status) {
  int done = 0;
  aclError err = query("aclrtQueryEventWaitStatus", event, status ? &done : NULL);
  if (!err) *status = done ? ACL_EVENT_WAIT_STATUS_COMPLETE : ACL_EVENT_WAIT_STATUS_NOT_READY;
  return err;
}

static aclError synchronize(const char *call, aclrtEvent event, int32_t timeout) {
  aclError err = acl_enter(call);
  if (err) return err;
  acl_leave();
  if (timeout < -1 || timeout == 0)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: timeout %d: -1 waits forever, > 0 that many ms", call,
                    (int)timeout);
  struct timespec deadline = deadline_after_ms(timeout > 0 ? timeout : 0);
  pthread_mutex_lock(&ev.mu);
  acl_event *e = live(call, "event", event);
  if (e) {
    e->refs++; /* (destroyed meanwhile: freed by us) */
    if (wait_record(e, e->recorded, timeout > 0 ? &deadline : NULL))
      err = acl_fail(ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, "%s: the event was not reached within %d ms", call,
                     (int)timeout);
    unref(e);
  }
  pthread_mutex_unlock(&ev.mu);
  return e ? err : ACL_ERROR_INVALID_PARAM;
}

aclError aclrtSynchronizeEvent(aclrtEvent event) { return synchronize("aclrtSynchronizeEvent", event, -1); }

aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout) {
  return synchronize("aclrtSynchronizeEventWithTimeout", event, timeout);
}

aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent) {
  const char *call = "aclrtEventElapsedTime";
  aclError err = acl_enter(call);
  if (err) return err;
  acl_leave();
  if (!ms) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: ms is NULL", call);
  pthread_mutex_lock(&ev.mu);
  acl_event *a = live(call, "startEvent", startEvent), *b = a ? live(call, "endEvent", endEvent) : NULL;
  if (!b)
    err = ACL_ERROR_INVALID_PARAM;
  else if (!complete(a) || !complete(b))
    err = acl_fail(ACL_ERROR_RT_EVENT_NOT_COMPLETE, "%s: %s has not completed (%s)", call,
                   !complete(a) ? "startEvent" : "endEvent",
                   (!complete(a) ? a : b)->recorded > (!complete(a) ? a : b)->cleared
                       ? "its record is still queued: aclrtSynchronizeEvent first"
                       : "it was never recorded (aclrtRecordEvent)");
  else if (!a->timed || !b->timed)
    err = acl_fail(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
                   "%s: %s was created without ACL_EVENT_TIME_LINE: it has no timestamp", call,
                   !a->timed ? "startEvent" : "endEvent");
  else {
    double d = (double)(b->at.tv_sec - a->at.tv_sec) * 1e3 + (double)(b->at.tv_nsec - a->at.tv_nsec) * 1e-6;
    if (d < 0)
      err = acl_fail(ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL,
                     "%s: endEvent completed %.3f ms before startEvent", call, -d);
    else
      *ms = (float)d;
  }
  pthread_mutex_unlock(&ev.mu);
  return err;
}

aclError aclrtSetOpWaitTimeout(uint32_t timeout) {
  aclError err = acl_enter("aclrtSetOpWaitTimeout");
  if (err) return err;
  acl_leave();
  pthread_mutex_lock(&ev.mu);
  ev.wait_timeout_s = timeout;
  pthread_mutex_unlock(&ev.mu);
  return ACL_SUCCESS;
}

/* --- callbacks */

/* Unlinks *p from the reports (under ev.mu). */
static void unlink_report(report **p) {
  report *r = *p;
  *p = r->next;
  if (ev.tail == r) {
    ev.tail = NULL;
    for (report *q = ev.head; q; q = q->next)
      ev.tail = q;
  }
}

static subscription *subscription_of(const acl_stream *s) {
  for (subscription *x = ev.subs; x; x = x->next)
    if (x->stream == s) return x;
  return NULL;
}

aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream) {
  const char *call = "aclrtSubscribeReport";
  aclError err = acl_enter(call);
  if (err) return err;
  acl_stream *s = NULL;
  if ((err = acl_resolve_stream(call, stream, &s))) return acl_leave_with(err);
  subscription *x = malloc(sizeof *x);
  if (!x) return acl_leave_with(acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call));
  pthread_mutex_lock(&ev.mu);
  const subscription *old = subscription_of(s);
  if (old)
    err = acl_fail(ACL_ERROR_RT_STREAM_SUBSCRIBE, "%s: stream %p is subscribed already (by thread %llu)",
                   call, stream, (unsigned long long)old->thread);
  else {
    *x = (subscription){ev.subs, threadId, s};
    ev.subs = x;
  }
  pthread_mutex_unlock(&ev.mu);
  if (err) free(x);
  return acl_leave_with(err);
}

aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream) {
  const char *call = "aclrtUnSubscribeReport";
  aclError err = acl_enter(call);
  if (err) return err;
  acl_stream *s = NULL;
  if ((err = acl_resolve_stream(call, stream, &s))) return acl_leave_with(err);
  pthread_mutex_lock(&ev.mu);
  subscription **p = &ev.subs;
  while (*p && ((*p)->stream != s || (*p)->thread != threadId))
    p = &(*p)->next;
  subscription *x = *p;
  if (x) *p = x->next;
  pthread_cond_broadcast(&ev.cv); /* a blocking callback waiting for that thread gives up */
  pthread_mutex_unlock(&ev.mu);
  free(x);
  if (!x)
    err = acl_fail(ACL_ERROR_RT_STREAM_NO_CB_REG, "%s: thread %llu is not subscribed to stream %p", call,
                   (unsigned long long)threadId, stream);
  return acl_leave_with(err);
}

aclError aclrtLaunchCallback(aclrtCallback fn, void *userData, aclrtCallbackBlockType blockType,
                             aclrtStream stream) {
  const char *call = "aclrtLaunchCallback";
  aclError err = acl_enter(call);
  if (err) return err;
  acl_stream *s = NULL;
  acl_op *op = NULL;
  if (!fn)
    err = acl_fail(ACL_ERROR_INVALID_PARAM, "%s: fn is NULL", call);
  else if (blockType != ACL_CALLBACK_NO_BLOCK && blockType != ACL_CALLBACK_BLOCK)
    err = acl_fail(ACL_ERROR_INVALID_PARAM, "%s: blockType %d is not an aclrtCallbackBlockType", call,
                   (int)blockType);
  else if (!(err = acl_resolve_stream(call, stream, &s))) {
    pthread_mutex_lock(&ev.mu);
    int subscribed = subscription_of(s) != NULL;
    pthread_mutex_unlock(&ev.mu);
    if (!subscribed)
      err = acl_fail(ACL_ERROR_RT_STREAM_NO_CB_REG,
                     "%s: no thread is subscribed to stream %p (aclrtSubscribeReport)", call, stream);
    else if (!(op = calloc(1, sizeof *op)))
      err = acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call);
  }
  if (!err) {
    *op = (acl_op){
        .kind = ACL_OP_CALLBACK, .fn = fn, .user = userData, .block = blockType == ACL_CALLBACK_BLOCK};
    acl_stream_push(s, op);
  }
  return acl_leave_with(err);
}

aclError aclrtProcessReport(int32_t timeout) {
  const char *call = "aclrtProcessReport";
  aclError err = acl_enter(call);
  if (err) return err;
  acl_leave();
  if (timeout == 0 || timeout < -1)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: timeout %d: -1 waits forever, > 0 waits that many ms", call,
                    (int)timeout);
  uint64_t self = (uint64_t)pthread_self();
  struct timespec deadline = deadline_after_ms(timeout > 0 ? timeout : 0);
  pthread_mutex_lock(&ev.mu);
  int subscribed = 0;
  for (const subscription *x = ev.subs; x && !subscribed; x = x->next)
    subscribed = x->thread == self;
  report *r = NULL, **p = NULL;
  for (int timed_out = 0; subscribed;) { /* the oldest report for this thread */
    for (p = &ev.head; *p && (*p)->thread != self; p = &(*p)->next) {
    }
    if ((r = *p) || timed_out) break;
    if (timeout < 0)
      pthread_cond_wait(&ev.cv, &ev.mu);
    else
      timed_out = pthread_cond_timedwait(&ev.cv, &ev.mu, &deadline) != 0;
  }
  if (r) {
    unlink_report(p);
    r->taken = 1;
  }
  pthread_mutex_unlock(&ev.mu);
  if (!subscribed)
    return acl_fail(ACL_ERROR_RT_THREAD_SUBSCRIBE, "%s: this thread (%llu) is subscribed to no stream", call,
                    (unsigned long long)self);
  if (!r)
    return acl_fail(ACL_ERROR_RT_REPORT_TIMEOUT, "%s: no callback came within %d ms", call, (int)timeout);
  r->fn(r->user);
  pthread_mutex_lock(&ev.mu);
  if (r->block) { /* the stream's thread waits for it and frees it */
    r->done = 1;
    pthread_cond_broadcast(&ev.cv);
  } else {
    free(r);
  }
  pthread_mutex_unlock(&ev.mu);
  return ACL_SUCCESS;
}

/* --- the streams' side */

/* A blocking report of s is waited for until it has run, unless its thread
 * stopped serving s before taking it. */
static int still_awaited(acl_stream *s, const report *r) {
  const subscription *x = subscription_of(s);
  return !r->done && (r->taken || (x && x->thread == r->thread && !acl_stream_stopping(s)));
}

aclError acl_event_op(acl_stream *s, acl_op *op, char *msg, size_t n) {
  aclError err = ACL_SUCCESS;
  pthread_mutex_lock(&ev.mu);
  acl_event *e = op->event;
  switch (op->kind) {
  case ACL_OP_RECORD:
    if (op->gen > e->reached) {
      e->reached = op->gen;
      if (e->timed) clock_gettime(CLOCK_MONOTONIC, &e->at);
    }
    break;
  case ACL_OP_RESET:
    if (op->gen > e->cleared) e->cleared = op->gen;
    break;
  case ACL_OP_WAIT: {
    struct timespec deadline = deadline_after_ms((int64_t)ev.wait_timeout_s * 1000);
    if (wait_record(e, op->gen, ev.wait_timeout_s ? &deadline : NULL)) {
      err = ACL_ERROR_RT_WAIT_TIMEOUT;
      snprintf(msg, n, "aclrtStreamWaitEvent: the event was not reached within %u s (aclrtSetOpWaitTimeout)",
               (unsigned)ev.wait_timeout_s);
    }
    break;
  }
  case ACL_OP_CALLBACK: {
    const subscription *x = subscription_of(s);
    report *r = x ? calloc(1, sizeof *r) : NULL;
    if (!r) {
      err = x ? ACL_ERROR_BAD_ALLOC : ACL_ERROR_RT_STREAM_NO_CB_REG;
      snprintf(msg, n, "aclrtLaunchCallback: %s",
               x ? "out of memory" : "the stream was unsubscribed before the callback ran");
      break;
    }
    *r = (report){.thread = x->thread, .fn = op->fn, .user = op->user, .block = op->block};
    if (ev.tail)
      ev.tail->next = r;
    else
      ev.head = r;
    ev.tail = r;
    pthread_cond_broadcast(&ev.cv);
    if (!r->block) break; /* aclrtProcessReport frees it */
    while (still_awaited(s, r))
      pthread_cond_wait(&ev.cv, &ev.mu);
    if (!r->done) { /* unsubscribed or destroyed before its thread took it: withdraw it */
      report **p = &ev.head;
      while (*p != r)
        p = &(*p)->next;
      unlink_report(p);
      err = ACL_ERROR_RT_STREAM_NO_CB_REG;
      snprintf(
          msg, n,
          "aclrtLaunchCallback: a blocking callback was not run: the stream was unsubscribed (or destroyed) "
          "before thread %llu took it in aclrtProcessReport",
          (unsigned long long)r->thread);
    }
    free(r);
    break;
  }
  default: break;
  }
  if (e) unref(e);
  pthread_cond_broadcast(&ev.cv);
  pthread_mutex_unlock(&ev.mu);
  return err;
}

void acl_event_forget_stream(acl_stream *s) {
  pthread_mutex_lock(&ev.mu);
  for (subscription **p = &ev.subs; *p;)
    if ((*p)->stream == s) {
      subscription *x = *p;
      *p = x->next;
      free(x);
    } else {
      p = &(*p)->next;
    }
  pthread_mutex_unlock(&ev.mu);
}

void acl_event_wake(void) {
  pthread_mutex_lock(&ev.mu);
  pthread_cond_broadcast(&ev.cv);
  pthread_mutex_unlock(&ev.mu);
}

void acl_event_finalize(void) {
  pthread_mutex_lock(&ev.mu);
  while (ev.events) {
    acl_event *e = ev.events;
    ev.events = e->next;
    unref(e);
  }
  while (ev.subs) {
    subscription *x = ev.subs;
    ev.subs = x->next;
    free(x);
  }
  while (ev.head) { /* reports no thread processed */
    report *r = ev.head;
    ev.head = r->next;
    free(r);
  }
  ev.tail = NULL;
  ev.wait_timeout_s = 0;
  pthread_mutex_unlock(&ev.mu);
}
