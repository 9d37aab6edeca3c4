/* test_acl_rt.c - libascendcl's events, callbacks, memory extras, tensor
 * descriptions, loading by configuration and the unsupported features'
 * codes (acl_rt.h, acl_base.h, acl_mdl.h, acl_prof.h) against AscendCL's
 * documented behaviour, on a small model compiled in process (y = x + z,
 * x with a name longer than aclmdlIODims.name holds):
 *   - events: never recorded reads NOT_READY, a record completes when its
 *     stream reaches it, reset forgets it, elapsed time is real milliseconds
 *     (at least the time a blocking callback slept between two records),
 *     a reversed pair and an event without timestamps are refused, a stream
 *     waiting for an event runs its later work only after the event, a
 *     wait past aclrtSetOpWaitTimeout fails the stream, an event destroyed
 *     with queued work is freed after it;
 *   - callbacks run on the subscribed thread inside aclrtProcessReport, in
 *     the stream's order; misuse has AscendCL's codes; a blocking callback
 *     no thread processes is withdrawn when the subscription ends
 *     (unsubscribe, destroy, finalize) instead of holding the stream;
 *   - aclrtMallocCached, aclrtMemFlush, aclrtMemInvalidate, aclrtGetMemInfo,
 *     aclrtMemsetAsync, aclrtMemcpy2d(Async): results and refusals;
 *   - tensor descriptions, a run's output descriptions, an input
 *     description that does not match; aclmdlGetTensorRealName;
 *   - aclmdlLoadWithConfig's load types and missing attributes;
 *   - aclmdlGetInputDimsRange: {d, d} per dim of a static input;
 *   - dump and profiling calls out of order have AscendCL's codes; a dump
 *     that cannot write fails the execution, naming the directory;
 *   - DVPP's memory, descriptions, batches and channels work; a DVPP call
 *     checks its channel, its arguments and its input before queueing;
 *   - single operators: op models of atc --singleop (compiled in process)
 *     loaded by aclopLoad from memory (freed after) and aclopSetModelDir,
 *     matched by type, descriptions and attributes (set, left at the
 *     default, of another type or value, unknown), each refusal the
 *     documented code naming what differs; a MatMul through a handle and a
 *     ReduceSumD through aclopExecuteV2 against values computed here. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "acl/acl_prof.h"
#include "acl/ops/acl_dvpp.h"
#include "driver/compile.h"
#include "driver/singleop.h"
#include "onnx_mb.h"
#include "acl_check.h"
#include "support.h"

enum { N = 4 * 8 * 8 };
static char long_name[160];

static void *compile_model(size_t *size) {
  memset(long_name, 'x', 150);
  long_name[150] = '\0';
  mb m;
  mb_init(&m, 13);
  mb_input(&m, long_name, 1, 4, (int64_t[]){1, 4, 8, 8}, NULL);
  mb_input(&m, "z", 1, 4, (int64_t[]){1, 4, 8, 8}, NULL);
  char ins[200];
  snprintf(ins, sizeof ins, "%s,z", long_name);
  mb_node(&m, "Add", "add", ins, "y");
  mb_output(&m, "y");
  atc_options opt = {.model_path = "acl_rt.onnx",
                     .soc_version = "Ascend310",
                     .precision = OM_PRECISION_FORCE_FP16,
                     .high_performance = 1,
                     .cmdline = "test_acl_rt"};
  return mb_compile(&m, &opt, size);
}

/* --- a thread that processes callbacks until told to stop */

static atomic_int stop_worker;
static pthread_t worker;
static void *worker_main(void *arg) {
  (void)arg;
  while (!atomic_load(&stop_worker)) {
    aclError e = aclrtProcessReport(20);
    if (e == ACL_ERROR_RT_THREAD_SUBSCRIBE) /* (not yet subscribed) */
      usleep(1000);
    else if (e != ACL_ERROR_RT_REPORT_TIMEOUT)
      CHECK_EQ_INT(e, ACL_SUCCESS);
  }
  return NULL;
}

static atomic_int flag, seen, calls;
static void sleep_then_flag(void *ms) {
  usleep((useconds_t)(*(int *)ms) * 1000);
  atomic_store(&flag, 1);
}
static void read_flag(void *arg) {
  (void)arg;
  atomic_store(&seen, atomic_load(&flag));
}
static void count_call(void *arg) {
  atomic_fetch_add(&calls, 1);
  *(pthread_t *)arg = pthread_self();
}

static void test_callbacks(void) {
  aclrtStream s;
  OK(aclrtCreateStream(&s));
  uint64_t self = (uint64_t)pthread_self();
  pthread_t ran_on;
  EXPECT_ACL(aclrtProcessReport(100), ACL_ERROR_RT_THREAD_SUBSCRIBE, "subscribed to no stream");
  EXPECT_ACL(aclrtProcessReport(0), ACL_ERROR_INVALID_PARAM, "timeout 0");
  EXPECT_ACL(aclrtLaunchCallback(count_call, &ran_on, ACL_CALLBACK_NO_BLOCK, s),
             ACL_ERROR_RT_STREAM_NO_CB_REG, "no thread is subscribed");
  OK(aclrtSubscribeReport(self, s));
  EXPECT_ACL(aclrtSubscribeReport(self + 1, s), ACL_ERROR_RT_STREAM_SUBSCRIBE, "subscribed already");
  EXPECT_ACL(aclrtLaunchCallback(NULL, NULL, ACL_CALLBACK_BLOCK, s), ACL_ERROR_INVALID_PARAM, "fn is NULL");
  EXPECT_ACL(aclrtLaunchCallback(count_call, NULL, (aclrtCallbackBlockType)5, s), ACL_ERROR_INVALID_PARAM,
             "blockType 5");
  /* Run here, on this thread, by aclrtProcessReport: not before. */
  atomic_store(&calls, 0);
  OK(aclrtLaunchCallback(count_call, &ran_on, ACL_CALLBACK_NO_BLOCK, s));
  OK(aclrtSynchronizeStream(s)); /* (a NO_BLOCK callback does not hold the stream) */
  CHECK_EQ_INT(atomic_load(&calls), 0);
  OK(aclrtProcessReport(5000));
  CHECK_EQ_INT(atomic_load(&calls), 1);
  CHECK(pthread_equal(ran_on, pthread_self()));
  EXPECT_ACL(aclrtProcessReport(10), ACL_ERROR_RT_REPORT_TIMEOUT, "no callback came within 10 ms");
  EXPECT_ACL(aclrtUnSubscribeReport(self + 1, s), ACL_ERROR_RT_STREAM_NO_CB_REG, "is not subscribed");
  OK(aclrtUnSubscribeReport(self, s));
  EXPECT_ACL(aclrtLaunchCallback(count_call, &ran_on, ACL_CALLBACK_NO_BLOCK, s),
             ACL_ERROR_RT_STREAM_NO_CB_REG, "no thread is subscribed");
  OK(aclrtDestroyStream(s));
}

/* A blocking callback no thread takes holds its stream until the
 * subscription ends: aclrtUnSubscribeReport or aclrtDestroyStream withdraw
 * it (never run) and say so, and aclFinalize does not wait for it. */
static void test_blocking_unprocessed(void) {
  uint64_t self = (uint64_t)pthread_self();
  pthread_t ran_on;
  aclrtStream s;
  OK(aclrtCreateStream(&s));
  OK(aclrtSubscribeReport(self, s));
  atomic_store(&calls, 0);
  OK(aclrtLaunchCallback(count_call, &ran_on, ACL_CALLBACK_BLOCK, s));
  EXPECT_ACL(aclrtSynchronizeStreamWithTimeout(s, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, "within 20 ms");
  OK(aclrtUnSubscribeReport(self, s));
  /* (withdrawn, or not handed over at all when the stream reached it only after the unsubscription) */
  EXPECT_ACL(aclrtSynchronizeStream(s), ACL_ERROR_RT_STREAM_NO_CB_REG, "aclrtLaunchCallback: ");
  EXPECT_ACL(aclrtProcessReport(10), ACL_ERROR_RT_THREAD_SUBSCRIBE, "subscribed to no stream");
  OK(aclrtSubscribeReport(self, s));
  OK(aclrtLaunchCallback(count_call, &ran_on, ACL_CALLBACK_BLOCK, s));
  EXPECT_ACL(aclrtDestroyStream(s), ACL_ERROR_RT_STREAM_NO_CB_REG, "(destroyed): aclrtLaunchCallback");
  EXPECT_ACL(aclrtProcessReport(10), ACL_ERROR_RT_THREAD_SUBSCRIBE, "subscribed to no stream");
  CHECK_EQ_INT(atomic_load(&calls), 0);
  EXPECT_ACL(aclrtSynchronizeStream(s), ACL_ERROR_INVALID_PARAM, "not a live stream");
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static void test_events(void) {
  aclrtStream a, b;
  aclrtEvent e, e2, sync_only;
  aclrtEventStatus st = ACL_EVENT_STATUS_RESERVED;
  aclrtEventRecordedStatus rst = ACL_EVENT_RECORDED_STATUS_COMPLETE;
  float ms = -1;
  OK(aclrtCreateStream(&a));
  OK(aclrtCreateStream(&b));
  EXPECT_ACL(aclrtCreateEvent(NULL), ACL_ERROR_INVALID_PARAM, "event is NULL");
  EXPECT_ACL(aclrtCreateEventWithFlag(&e, 0x100), ACL_ERROR_INVALID_PARAM, "flag 0x100");
  OK(aclrtCreateEvent(&e));
  OK(aclrtCreateEventWithFlag(&e2, ACL_EVENT_TIME_LINE | ACL_EVENT_SYNC));
  OK(aclrtCreateEventWithFlag(&sync_only, ACL_EVENT_SYNC));
  /* never recorded */
  OK(aclrtQueryEvent(e, &st));
  OK(aclrtQueryEventStatus(e, &rst));
  CHECK(st == ACL_EVENT_STATUS_NOT_READY && rst == ACL_EVENT_RECORDED_STATUS_NOT_READY);
  OK(aclrtSynchronizeEvent(e));
  EXPECT_ACL(aclrtEventElapsedTime(&ms, e, e2), ACL_ERROR_RT_EVENT_NOT_COMPLETE, "never recorded");
  EXPECT_ACL(aclrtQueryEvent(e, NULL), ACL_ERROR_INVALID_PARAM, "status is NULL");

  /* Real milliseconds: a blocking callback sleeping 30 ms between two records. */
  atomic_store(&stop_worker, 0);
  CHECK_EQ_INT(pthread_create(&worker, NULL, worker_main, NULL), 0);
  OK(aclrtSubscribeReport((uint64_t)worker, a));
  OK(aclrtSubscribeReport((uint64_t)worker, b));
  static int sleep_ms = 30;
  atomic_store(&flag, 0);
  double t0 = now_ms();
  OK(aclrtRecordEvent(e, a));
  OK(aclrtLaunchCallback(sleep_then_flag, &sleep_ms, ACL_CALLBACK_BLOCK, a));
  OK(aclrtRecordEvent(e2, a));
  /* b waits for e2, then reads the flag: it must see the callback's write. */
  atomic_store(&seen, 0);
  OK(aclrtStreamWaitEvent(b, e2));
  OK(aclrtLaunchCallback(read_flag, NULL, ACL_CALLBACK_BLOCK, b));
  OK(aclrtSynchronizeEvent(e2));
  double host = now_ms() - t0;
  OK(aclrtQueryEvent(e2, &st));
  OK(aclrtQueryEventStatus(e2, &rst));
  CHECK(st == ACL_EVENT_STATUS_COMPLETE && rst == ACL_EVENT_RECORDED_STATUS_COMPLETE);
  CHECK_EQ_INT(atomic_load(&flag), 1);
  OK(aclrtEventElapsedTime(&ms, e, e2));
  CHECKF(ms >= 29.0f && ms <= host + 1.0, "elapsed %.3f ms, host saw %.3f ms", ms, host);
  OK(aclrtSynchronizeStream(b));
  CHECK_EQ_INT(atomic_load(&seen), 1);
  EXPECT_ACL(aclrtEventElapsedTime(&ms, e2, e), ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL, "before startEvent");
  OK(aclrtRecordEvent(sync_only, a));
  OK(aclrtSynchronizeStream(a));
  EXPECT_ACL(aclrtEventElapsedTime(&ms, e, sync_only), ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
             "without ACL_EVENT_TIME_LINE");
  /* reset: not recorded again */
  OK(aclrtResetEvent(e, a));
  OK(aclrtSynchronizeStream(a));
  OK(aclrtQueryEvent(e, &st));
  CHECK(st == ACL_EVENT_STATUS_NOT_READY);
  /* A record is pending until its stream reaches it. */
  atomic_store(&flag, 0);
  sleep_ms = 50;
  OK(aclrtLaunchCallback(sleep_then_flag, &sleep_ms, ACL_CALLBACK_BLOCK, a));
  OK(aclrtRecordEvent(e, a));
  OK(aclrtQueryEventStatus(e, &rst));
  CHECK(rst == ACL_EVENT_RECORDED_STATUS_NOT_READY || atomic_load(&flag) == 1);
  EXPECT_ACL(aclrtEventElapsedTime(&ms, e, e2), ACL_ERROR_RT_EVENT_NOT_COMPLETE, "still queued");
  /* destroyed with its record queued: the handle dies now, the event after the record */
  OK(aclrtDestroyEvent(e));
  EXPECT_ACL(aclrtQueryEvent(e, &st), ACL_ERROR_INVALID_PARAM, "not a live event");
  EXPECT_ACL(aclrtRecordEvent(e, a), ACL_ERROR_INVALID_PARAM, "not a live event");
  OK(aclrtSynchronizeStream(a));
  CHECK_EQ_INT(atomic_load(&flag), 1);

  /* A wait longer than aclrtSetOpWaitTimeout fails the waiting stream: e3's
   * record sits behind a blocking callback no thread runs until after. */
  aclrtStream c;
  aclrtEvent e3;
  OK(aclrtCreateStream(&c));
  OK(aclrtCreateEvent(&e3));
  OK(aclrtUnSubscribeReport((uint64_t)worker, a));
  OK(aclrtSubscribeReport((uint64_t)pthread_self(), a));
  OK(aclrtLaunchCallback(read_flag, NULL, ACL_CALLBACK_BLOCK, a));
  OK(aclrtRecordEvent(e3, a));
  OK(aclrtSetOpWaitTimeout(1));
  OK(aclrtStreamWaitEvent(c, e3));
  EXPECT_ACL(aclrtSynchronizeStream(c), ACL_ERROR_RT_WAIT_TIMEOUT, "not reached within 1 s");
  OK(aclrtSetOpWaitTimeout(0));
  EXPECT_ACL(aclrtSynchronizeEventWithTimeout(e3, 50), ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, "within 50 ms");
  EXPECT_ACL(aclrtSynchronizeStreamWithTimeout(a, 50), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, "within 50 ms");
  EXPECT_ACL(aclrtSynchronizeStreamWithTimeout(a, 0), ACL_ERROR_INVALID_PARAM, "timeout 0");
  OK(aclrtProcessReport(5000)); /* a goes on */
  OK(aclrtSynchronizeStreamWithTimeout(a, 60000));
  OK(aclrtSynchronizeEventWithTimeout(e3, -1));
  OK(aclrtStreamWaitEvent(c, e3)); /* reached: no wait */
  OK(aclrtSynchronizeStream(c));
  OK(aclrtUnSubscribeReport((uint64_t)pthread_self(), a));

  atomic_store(&stop_worker, 1);
  pthread_join(worker, NULL);
  OK(aclrtDestroyEvent(e2));
  OK(aclrtDestroyEvent(e3));
  OK(aclrtDestroyEvent(sync_only));
  EXPECT_ACL(aclrtDestroyEvent(e2), ACL_ERROR_INVALID_PARAM, "not a live event");
  OK(aclrtDestroyStream(a));
  OK(aclrtDestroyStream(b));
  OK(aclrtDestroyStream(c));
}

static void test_memory(void) {
  void *d, *d2;
  unsigned char host[64], back[64];
  size_t free_b = 0, total = 0;
  OK(aclrtMallocCached(&d, 256, ACL_MEM_MALLOC_HUGE_FIRST));
  OK(aclrtMalloc(&d2, 256, ACL_MEM_MALLOC_HUGE_FIRST));
  OK(aclrtMemFlush(d, 256));
  OK(aclrtMemInvalidate((char *)d + 64, 64));
  EXPECT_ACL(aclrtMemFlush(d, 257), ACL_ERROR_RT_PARAM_INVALID, "run past the end");
  EXPECT_ACL(aclrtMemInvalidate(host, 8), ACL_ERROR_RT_PARAM_INVALID, "not device memory");
  EXPECT_ACL(aclrtMemFlush(NULL, 8), ACL_ERROR_INVALID_PARAM, "devPtr is NULL");
  OK(aclrtGetMemInfo(ACL_HBM_MEM, &free_b, &total));
  CHECK(total > 0 && free_b <= total);
  EXPECT_ACL(aclrtGetMemInfo((aclrtMemAttr)42, &free_b, &total), ACL_ERROR_INVALID_PARAM, "attr 42");
  EXPECT_ACL(aclrtGetMemInfo(ACL_DDR_MEM, NULL, &total), ACL_ERROR_INVALID_PARAM, "free is NULL");

  /* memset on a stream */
  aclrtStream s;
  OK(aclrtCreateStream(&s));
  OK(aclrtMemsetAsync(d, 256, 0x15a, 64, s)); /* (the value's low byte) */
  OK(aclrtSynchronizeStream(s));
  OK(aclrtMemcpy(back, 64, d, 64, ACL_MEMCPY_DEVICE_TO_HOST));
  int all = 1;
  for (int i = 0; i < 64; i++)
    all &= back[i] == 0x5a;
  CHECK(all);
  EXPECT_ACL(aclrtMemsetAsync(host, 64, 0, 64, s), ACL_ERROR_RT_PARAM_INVALID, "not device memory");
  EXPECT_ACL(aclrtMemsetAsync(d, 8, 0, 64, s), ACL_ERROR_INVALID_PARAM, "exceeds maxCount");

  /* 2D: 3 rows of 5 bytes, host pitch 8 -> device pitch 16 -> host pitch 5 */
  for (int i = 0; i < 64; i++)
    host[i] = (unsigned char)i;
  OK(aclrtMemset(d2, 256, 0, 256));
  OK(aclrtMemcpy2d(d2, 16, host, 8, 5, 3, ACL_MEMCPY_HOST_TO_DEVICE));
  OK(aclrtMemcpy2dAsync(d, 16, d2, 16, 16, 3, ACL_MEMCPY_DEVICE_TO_DEVICE, s));
  OK(aclrtSynchronizeStream(s));
  memset(back, 0xff, sizeof back);
  OK(aclrtMemcpy2d(back, 5, d, 16, 5, 3, ACL_MEMCPY_DEVICE_TO_HOST));
  int same = 1;
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 5; k++)
      same &= back[r * 5 + k] == host[r * 8 + k];
  CHECK(same && back[15] == 0xff);
  OK(aclrtMemcpy(back, 64, d2, 64, ACL_MEMCPY_DEVICE_TO_HOST));
  CHECK(back[5] == 0 && back[16] == 8); /* the gaps between rows are untouched */
  EXPECT_ACL(aclrtMemcpy2d(d2, 4, host, 8, 5, 3, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM,
             "width 5 exceeds dpitch 4");
  EXPECT_ACL(aclrtMemcpy2d(d2, 16, host, 8, 5, 0, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM,
             "height 0");
  EXPECT_ACL(aclrtMemcpy2d(d2, 128, host, 8, 5, 3, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID,
             "261 bytes");
  EXPECT_ACL(aclrtMemcpy2d(d2, 16, host, 8, 5, 3, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_RT_PARAM_INVALID,
             "kind ACL_MEMCPY_DEVICE_TO_HOST");
  OK(aclrtDestroyStream(s));
  OK(aclrtFree(d));
  OK(aclrtFree(d2));
}

static void test_tensor_desc(void) {
  EXPECT_ACL(aclCreateTensorDesc(ACL_FLOAT, -1, NULL, ACL_FORMAT_ND) == NULL, 1, "numDims -1");
  EXPECT_ACL(aclCreateTensorDesc(ACL_FLOAT, 2, NULL, ACL_FORMAT_ND) == NULL, 1, "dims is NULL");
  EXPECT_ACL(aclCreateTensorDesc(ACL_FLOAT, 2, (int64_t[]){3, -3}, ACL_FORMAT_ND) == NULL, 1, "dims[1] = -3");
  aclTensorDesc *t = aclCreateTensorDesc(ACL_FLOAT16, 3, (int64_t[]){2, 3, 5}, ACL_FORMAT_NCHW);
  CHECK(t != NULL);
  CHECK_EQ_INT(aclGetTensorDescType(t), ACL_FLOAT16);
  CHECK_EQ_INT(aclGetTensorDescFormat(t), ACL_FORMAT_NCHW);
  CHECK_EQ_INT(aclGetTensorDescNumDims(t), 3);
  CHECK_EQ_INT(aclGetTensorDescElementCount(t), 30);
  CHECK_EQ_INT(aclGetTensorDescSize(t), 60);
  CHECK_EQ_INT(aclGetTensorDescDim(t, 2), 5);
  CHECK_EQ_INT(aclGetTensorDescDim(t, 3), -1);
  aclGetRecentErrMsg();
  int64_t v = 0;
  OK(aclGetTensorDescDimV2(t, 1, &v));
  CHECK_EQ_INT(v, 3);
  EXPECT_ACL(aclGetTensorDescDimV2(t, 3, &v), ACL_ERROR_INVALID_PARAM, "index 3");
  CHECK(strcmp(aclGetTensorDescName(t), "") == 0);
  aclSetTensorDescName(t, "input0");
  CHECK(strcmp(aclGetTensorDescName(t), "input0") == 0);
  OK(aclSetTensorShape(t, 2, (int64_t[]){4, -1}));
  CHECK(aclGetTensorDescNumDims(t) == 2 && aclGetTensorDescSize(t) == 0);
  OK(aclSetTensorShape(t, 1, (int64_t[]){-2}));
  CHECK(aclGetTensorDescNumDims(t) == (size_t)ACL_UNKNOWN_RANK);
  OK(aclSetTensorFormat(t, ACL_FORMAT_NHWC));
  CHECK_EQ_INT(aclGetTensorDescFormat(t), ACL_FORMAT_NHWC);
  aclDestroyTensorDesc(t);
  aclTensorDesc *i4 = aclCreateTensorDesc(ACL_INT4, 1, (int64_t[]){5}, ACL_FORMAT_ND);
  CHECK_EQ_INT(aclGetTensorDescSize(i4), 3); /* packed */
  aclDestroyTensorDesc(i4);
  aclTensorDesc *scalar = aclCreateTensorDesc(ACL_INT64, 0, NULL, ACL_FORMAT_ND);
  CHECK(aclGetTensorDescElementCount(scalar) == 1 && aclGetTensorDescSize(scalar) == 8);
  aclDestroyTensorDesc(scalar);
  CHECK(aclGetTensorDescNumDims(NULL) == 0 && aclGetTensorDescType(NULL) == ACL_DT_UNDEFINED);
  aclDestroyTensorDesc(NULL);
}

/* Runs model `id` on x = i, z = 1: y must be i + 1 (fp16 exact), and the
 * output dataset's description says [1,4,8,8] float. */
static void run_model(uint32_t id) {
  static float x[N], z[N], y[N];
  for (int i = 0; i < N; i++)
    x[i] = (float)(i % 100), z[i] = 1.0f;
  void *dev[3];
  aclmdlDataset *in = aclmdlCreateDataset(), *out = aclmdlCreateDataset();
  for (int i = 0; i < 3; i++) {
    OK(aclrtMalloc(&dev[i], sizeof x, ACL_MEM_MALLOC_HUGE_FIRST));
    OK(aclmdlAddDatasetBuffer(i < 2 ? in : out, aclCreateDataBuffer(dev[i], sizeof x)));
  }
  OK(aclrtMemcpy(dev[0], sizeof x, x, sizeof x, ACL_MEMCPY_HOST_TO_DEVICE));
  OK(aclrtMemcpy(dev[1], sizeof z, z, sizeof z, ACL_MEMCPY_HOST_TO_DEVICE));
  CHECK(aclmdlGetDatasetTensorDesc(out, 0) == NULL);
  /* an input description that differs from the input is refused */
  aclTensorDesc *wrong = aclCreateTensorDesc(ACL_FLOAT, 4, (int64_t[]){1, 4, 8, 9}, ACL_FORMAT_NCHW);
  OK(aclmdlSetDatasetTensorDesc(in, wrong, 1));
  EXPECT_ACL(aclmdlExecute(id, in, out), ACL_ERROR_INVALID_PARAM, "input 1 ('z'): its tensor description");
  OK(aclSetTensorShape(wrong, 4, (int64_t[]){1, 4, -1, 8}));
  OK(aclmdlSetDatasetTensorDesc(in, wrong, 1));
  aclDestroyTensorDesc(wrong); /* (the dataset holds a copy) */
  EXPECT_ACL(aclmdlSetDatasetTensorDesc(in, NULL, 0), ACL_ERROR_INVALID_PARAM, "tensorDesc is NULL");
  OK(aclmdlExecute(id, in, out));
  OK(aclrtMemcpy(y, sizeof y, dev[2], sizeof y, ACL_MEMCPY_DEVICE_TO_HOST));
  int ok = 1;
  for (int i = 0; i < N; i++)
    ok &= y[i] == x[i] + 1.0f;
  CHECK(ok);
  aclTensorDesc *od = aclmdlGetDatasetTensorDesc(out, 0);
  CHECK(od && aclGetTensorDescNumDims(od) == 4 && aclGetTensorDescDim(od, 1) == 4 &&
        aclGetTensorDescSize(od) == sizeof y && aclGetTensorDescType(od) == ACL_FLOAT &&
        strcmp(aclGetTensorDescName(od), "y") == 0);
  EXPECT_ACL(aclmdlGetDatasetTensorDesc(out, 1) == NULL, 1, "index out of range");
  for (int k = 0; k < 2; k++) {
    aclmdlDataset *d = k ? out : in;
    for (size_t i = 0; i < aclmdlGetDatasetNumBuffers(d); i++)
      OK(aclDestroyDataBuffer(aclmdlGetDatasetBuffer(d, i)));
    OK(aclmdlDestroyDataset(d));
  }
  for (int i = 0; i < 3; i++)
    OK(aclrtFree(dev[i]));
}

static void test_model(const char *path, const void *om, size_t size) {
  /* loading by configuration */
  aclmdlConfigHandle *h = aclmdlCreateConfigHandle();
  uint32_t id = 0;
  EXPECT_ACL(aclmdlLoadWithConfig(h, &id), ACL_ERROR_INVALID_PARAM, "ACL_MDL_LOAD_TYPE_SIZET was not set");
  size_t type = ACL_MDL_LOAD_FROM_FILE_WITH_Q;
  EXPECT_ACL(aclmdlSetConfigOpt(h, ACL_MDL_LOAD_TYPE_SIZET, &type, sizeof type),
             ACL_ERROR_FEATURE_UNSUPPORTED, "model queues");
  type = 9;
  EXPECT_ACL(aclmdlSetConfigOpt(h, ACL_MDL_LOAD_TYPE_SIZET, &type, sizeof type), ACL_ERROR_INVALID_PARAM,
             "is no ACL_MDL_LOAD_FROM_*");
  type = ACL_MDL_LOAD_FROM_FILE;
  EXPECT_ACL(aclmdlSetConfigOpt(h, ACL_MDL_LOAD_TYPE_SIZET, &type, 4), ACL_ERROR_INVALID_PARAM,
             "valueSize 4");
  OK(aclmdlSetConfigOpt(h, ACL_MDL_LOAD_TYPE_SIZET, &type, sizeof type));
  EXPECT_ACL(aclmdlLoadWithConfig(h, &id), ACL_ERROR_INVALID_PARAM, "needs ACL_MDL_PATH_PTR");
  int32_t prio = 9;
  EXPECT_ACL(aclmdlSetConfigOpt(h, ACL_MDL_PRIORITY_INT32, &prio, sizeof prio), ACL_ERROR_INVALID_PARAM,
             "not in 0..7");
  EXPECT_ACL(aclmdlSetConfigOpt(h, ACL_MDL_INPUTQ_NUM_SIZET, &type, sizeof type),
             ACL_ERROR_FEATURE_UNSUPPORTED, "model queues");
  OK(aclmdlSetConfigOpt(h, ACL_MDL_PATH_PTR, &path, sizeof path));
  OK(aclmdlLoadWithConfig(h, &id));
  run_model(id);
  CHECK(aclrtGetSocName() && strcmp(aclrtGetSocName(), "Ascend310") == 0);
  /* names longer than aclmdlIODims.name: the real name from the truncated one */
  aclmdlDesc *desc = aclmdlCreateDesc();
  OK(aclmdlGetDesc(desc, id));
  aclmdlIODims dims;
  OK(aclmdlGetInputDimsV2(desc, 0, &dims));
  CHECK(strlen(dims.name) == ACL_MAX_TENSOR_NAME_LEN - 1 && dims.dimCount == 4 && dims.dims[3] == 8);
  aclmdlIODimsRange range; /* static shapes: each dim's range is {d, d} */
  OK(aclmdlGetInputDimsRange(desc, 1, &range));
  CHECK(range.rangeCount == 4 && range.range[0][0] == 1 && range.range[0][1] == 1 && range.range[1][0] == 4 &&
        range.range[1][1] == 4 && range.range[3][0] == 8 && range.range[3][1] == 8);
  EXPECT_ACL(aclmdlGetInputDimsRange(desc, 2, &range), ACL_ERROR_INVALID_PARAM, "aclmdlGetInputDimsRange");
  EXPECT_ACL(aclmdlGetInputDimsRange(desc, 0, NULL), ACL_ERROR_INVALID_PARAM, "dimsRange is NULL");
  const char *real = aclmdlGetTensorRealName(desc, dims.name);
  CHECK(real && strcmp(real, long_name) == 0);
  CHECK(aclmdlGetTensorRealName(desc, "z") && strcmp(aclmdlGetTensorRealName(desc, "z"), "z") == 0);
  EXPECT_ACL(aclmdlGetTensorRealName(desc, "w") == NULL, 1, "no tensor named 'w'");
  EXPECT_ACL(aclmdlGetOpAttr(desc, "add", ACL_ATTR_NAME_DATA_DUMP_ORIGIN_OP_NAMES) == NULL, 1,
             "not provided");
  OK(aclmdlDestroyDesc(desc));
  OK(aclmdlUnload(id));

  /* from memory, in the caller's work and weight memory */
  size_t work = 0, weight = 0;
  OK(aclmdlQuerySizeFromMem(om, size, &work, &weight));
  void *wp = NULL, *mp = NULL;
  OK(aclrtMalloc(&wp, work ? work : 64, ACL_MEM_MALLOC_HUGE_FIRST));
  type = ACL_MDL_LOAD_FROM_MEM_WITH_MEM;
  OK(aclmdlSetConfigOpt(h, ACL_MDL_LOAD_TYPE_SIZET, &type, sizeof type));
  EXPECT_ACL(aclmdlLoadWithConfig(h, &id), ACL_ERROR_INVALID_PARAM, "needs ACL_MDL_MEM_ADDR_PTR");
  OK(aclmdlSetConfigOpt(h, ACL_MDL_MEM_ADDR_PTR, &om, sizeof om));
  OK(aclmdlSetConfigOpt(h, ACL_MDL_MEM_SIZET, &size, sizeof size));
  OK(aclmdlSetConfigOpt(h, ACL_MDL_WORKSPACE_ADDR_PTR, &wp, sizeof wp));
  EXPECT_ACL(aclmdlLoadWithConfig(h, &id), ACL_ERROR_INVALID_PARAM, "without ACL_MDL_WORKSPACE_SIZET");
  size_t small = 1;
  OK(aclmdlSetConfigOpt(h, ACL_MDL_WORKSPACE_SIZET, &small, sizeof small));
  if (work > 1)
    EXPECT_ACL(aclmdlLoadWithConfig(h, &id), ACL_ERROR_INVALID_PARAM, "aclmdlLoadWithConfig: workSize 1");
  OK(aclmdlSetConfigOpt(h, ACL_MDL_WORKSPACE_SIZET, &work, sizeof work));
  OK(aclmdlLoadWithConfig(h, &id));
  run_model(id);
  OK(aclmdlUnload(id));
  OK(aclmdlDestroyConfigHandle(h));
  EXPECT_ACL(aclmdlDestroyConfigHandle(NULL), ACL_ERROR_INVALID_PARAM, "handle is NULL");
  OK(aclrtFree(wp));
  (void)mp;
}

/* A dump whose directory can no longer be made fails the execution with
 * ACL_ERROR_WRITE_FILE naming it (dump_path was a directory at
 * aclmdlSetDump, a file by the run); a subscription's pipe with no reader
 * neither fails the execution nor kills the process. */
static void test_dump_failure(const char *model_path) {
  const char *dir = test_tmpdir("acl_rt_dump");
  char out_dir[1100], cfg[1100], json[1400];
  snprintf(out_dir, sizeof out_dir, "%s/out", dir);
  snprintf(cfg, sizeof cfg, "%s/dump.json", dir);
  CHECK_EQ_INT(mkdir(out_dir, 0755), 0);
  snprintf(json, sizeof json,
           "{\"dump\": {\"dump_path\": \"%s\", \"dump_list\": [{\"model_name\": \"model\"}]}}", out_dir);
  CHECK_EQ_INT(test_write_file(cfg, json, strlen(json)), 0);
  OK(aclmdlInitDump());
  OK(aclmdlSetDump(cfg));
  uint32_t id;
  OK(aclmdlLoadFromFile(model_path, &id));
  CHECK_EQ_INT(rmdir(out_dir), 0);
  CHECK_EQ_INT(test_write_file(out_dir, "x", 1), 0);
  void *dev[3];
  aclmdlDataset *in = aclmdlCreateDataset(), *out = aclmdlCreateDataset();
  for (int i = 0; i < 3; i++) {
    OK(aclrtMalloc(&dev[i], N * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    OK(aclrtMemset(dev[i], N * sizeof(float), 0, N * sizeof(float)));
    OK(aclmdlAddDatasetBuffer(i < 2 ? in : out, aclCreateDataBuffer(dev[i], N * sizeof(float))));
  }
  EXPECT_ACL(aclmdlExecute(id, in, out), ACL_ERROR_WRITE_FILE, "dump: cannot create");
  OK(aclmdlFinalizeDump());
  /* a subscription whose pipe nobody reads: the records are dropped, the
   * execution succeeds and the process gets no SIGPIPE */
  int fds[2];
  CHECK_EQ_INT(pipe(fds), 0);
  close(fds[0]);
  aclprofSubscribeConfig *sc = aclprofCreateSubscribeConfig(1, ACL_AICORE_NONE, &fds[1]);
  CHECK(sc != NULL);
  OK(aclprofModelSubscribe(id, sc));
  EXPECT_ACL(aclprofModelSubscribe(id, sc), ACL_ERROR_PROF_REPEAT_SUBSCRIBE, "subscribed already");
  OK(aclmdlExecute(id, in, out)); /* (the dump is over) */
  OK(aclprofModelUnSubscribe(id));
  OK(aclprofDestroySubscribeConfig(sc));
  for (int i = 0; i < 3; i++) {
    OK(aclDestroyDataBuffer(aclmdlGetDatasetBuffer(i < 2 ? in : out, (size_t)(i < 2 ? i : 0))));
    OK(aclrtFree(dev[i]));
  }
  OK(aclmdlDestroyDataset(in));
  OK(aclmdlDestroyDataset(out));
  OK(aclmdlUnload(id));
}

static void test_unsupported(void) {
  /* dump and profiling calls out of their documented order (acl/app_dump_prof runs them) */
  EXPECT_ACL(aclmdlSetDump("dump.json"), ACL_ERROR_DUMP_NOT_RUN,
             "aclmdlSetDump: aclmdlInitDump has not been called");
  EXPECT_ACL(aclmdlFinalizeDump(), ACL_ERROR_DUMP_NOT_RUN, "aclmdlFinalizeDump: aclmdlInitDump");
  OK(aclmdlInitDump());
  EXPECT_ACL(aclmdlInitDump(), ACL_ERROR_DUMP_ALREADY_RUN, "aclmdlInitDump: the dump is initialized already");
  EXPECT_ACL(aclmdlSetDump("no/such/dump.json"), ACL_ERROR_INVALID_FILE,
             "aclmdlSetDump: dumpCfgPath 'no/such");
  char bad[1100];
  snprintf(bad, sizeof bad, "%s/bad_dump.json", test_tmpdir("acl_rt_bad_dump"));
  const char *bad_json = "{\"dump\": {\"dump_path\": \".\", \"dump_mode\": \"weights\"}}";
  CHECK_EQ_INT(test_write_file(bad, bad_json, strlen(bad_json)), 0);
  EXPECT_ACL(aclmdlSetDump(bad), ACL_ERROR_INVALID_DUMP_CONFIG, "aclmdlSetDump: dumpCfgPath");
  EXPECT_ACL(aclmdlSetDump(bad), ACL_ERROR_INVALID_DUMP_CONFIG, "\"dump.dump_mode\": must be");
  OK(aclmdlFinalizeDump());
  EXPECT_ACL(aclprofFinalize(), ACL_ERROR_PROF_NOT_RUN, "aclprofFinalize: aclprofInit has not been called");
  uint32_t dev = 0, dev1 = 1;
  aclprofConfig *pc = aclprofCreateConfig(&dev, 1, ACL_AICORE_NONE, NULL, ACL_PROF_TASK_TIME);
  CHECK(pc != NULL);
  EXPECT_ACL(aclprofCreateConfig(&dev1, 1, ACL_AICORE_NONE, NULL, ACL_PROF_TASK_TIME) == NULL, 1,
             "aclprofCreateConfig: deviceIdList[0] 1");
  EXPECT_ACL(aclprofStart(pc), ACL_ERROR_PROF_NOT_RUN, "aclprofStart: aclprofInit has not been called");
  EXPECT_ACL(aclprofStop(pc), ACL_ERROR_PROF_NOT_RUN, "aclprofStop: aclprofInit");
  EXPECT_ACL(aclprofStart(NULL), ACL_ERROR_INVALID_PARAM, "aclprofStart: profilerConfig is NULL");
  EXPECT_ACL(aclprofInit("prof", 3), ACL_ERROR_INVALID_PARAM, "aclprofInit: length 3");
  EXPECT_ACL(aclprofInit("no/such/dir", 11), ACL_ERROR_INVALID_FILE, "profilerResultPath 'no/such/dir'");
  OK(aclprofDestroyConfig(pc));
  /* the subscription's readers refuse what is not a whole number of records */
  size_t rec = 0;
  uint32_t nrec = 7;
  OK(aclprofGetOpDescSize(&rec));
  CHECK(rec > 0);
  char *recs = calloc(2, rec);
  OK(aclprofGetOpNum(recs, 2 * rec, &nrec));
  CHECK_EQ_INT(nrec, 2);
  EXPECT_ACL(aclprofGetOpNum(recs, 2 * rec - 1, &nrec), ACL_ERROR_INVALID_PARAM, "not a multiple");
  size_t len = 0;
  EXPECT_ACL(aclprofGetOpNameLen(recs, 2 * rec, 2, &len), ACL_ERROR_INVALID_PARAM, "index is past the last");
  OK(aclprofGetOpTypeLen(recs, 2 * rec, 1, &len));
  CHECK_EQ_INT(len, 1); /* (an empty type and its NUL) */
  char one;
  EXPECT_ACL(aclprofGetOpName(recs, 2 * rec, 0, &one, 0), ACL_ERROR_INVALID_PARAM, "shorter than its");
  CHECK(aclprofGetOpDuration(NULL, rec, 0) == 0);
  free(recs);
  EXPECT_ACL(aclprofCreateSubscribeConfig(2, ACL_AICORE_NONE, &nrec) == NULL, 1,
             "timeInfoSwitch must be 0 or 1");
  EXPECT_ACL(aclprofModelUnSubscribe(12345), ACL_ERROR_INVALID_MODEL_ID, "model 12345 is not subscribed");
  /* DVPP: memory, descriptions and channels work; a processing call checks its channel and input
   * (tests/dvpp/dvpp_test.py decodes and scales pictures) */
  void *pic = NULL;
  OK(acldvppMalloc(&pic, 1024));
  acldvppChannelDesc *ch = acldvppCreateChannelDesc();
  CHECK(ch != NULL);
  EXPECT_ACL(acldvppJpegDecodeAsync(ch, pic, 1024, NULL, NULL), ACL_ERROR_INVALID_PARAM,
             "the channel was not created");
  EXPECT_ACL(acldvppDestroyChannel(ch), ACL_ERROR_INVALID_PARAM, "the channel was not created");
  OK(acldvppCreateChannel(ch));
  EXPECT_ACL(acldvppCreateChannel(ch), ACL_ERROR_INVALID_PARAM, "created already");
  acldvppPicDesc *pd = acldvppCreatePicDesc();
  OK(acldvppSetPicDescData(pd, pic));
  OK(acldvppSetPicDescFormat(pd, PIXEL_FORMAT_YUV_SEMIPLANAR_420));
  OK(acldvppSetPicDescWidth(pd, 16));
  CHECK(acldvppGetPicDescData(pd) == pic && acldvppGetPicDescWidth(pd) == 16 &&
        acldvppGetPicDescFormat(pd) == PIXEL_FORMAT_YUV_SEMIPLANAR_420);
  EXPECT_ACL(acldvppSetPicDescSize(NULL, 4), ACL_ERROR_INVALID_PARAM, "picDesc is NULL");
  EXPECT_ACL(acldvppJpegDecodeAsync(ch, pic, 1024, pd, NULL), ACL_ERROR_INVALID_PARAM, "no SOI marker");
  static const unsigned char soi[] = {0xFF, 0xD8, 0xFF, 0xC2, 0x00, 0x0B, 8, 0, 64, 0, 64, 1, 1, 0x11, 0};
  uint32_t w = 0, h = 0;
  int32_t comps = 0;
  EXPECT_ACL(acldvppJpegGetImageInfo(soi, sizeof soi, &w, &h, &comps), ACL_ERROR_FEATURE_UNSUPPORTED,
             "progressive JPEG (SOF2)");
  EXPECT_ACL(acldvppJpegDecodeAsync(ch, soi, sizeof soi, pd, NULL), ACL_ERROR_INVALID_PARAM,
             "data 0x"); /* host memory */
  /* JPEG encode: the configuration's level, the input checked before anything is queued */
  acldvppJpegeConfig *jc = acldvppCreateJpegeConfig();
  CHECK(jc != NULL && acldvppGetJpegeConfigLevel(jc) == 0);
  OK(acldvppSetJpegeConfigLevel(jc, 37));
  CHECK(acldvppGetJpegeConfigLevel(jc) == 37);
  EXPECT_ACL(acldvppSetJpegeConfigLevel(jc, 101), ACL_ERROR_INVALID_PARAM, "level 101: 0 to 100");
  EXPECT_ACL(acldvppSetJpegeConfigLevel(NULL, 1), ACL_ERROR_INVALID_PARAM, "jpegeConfig is NULL");
  EXPECT_ACL(acldvppJpegEncodeAsync(ch, pd, pic, &w, jc, NULL), ACL_ERROR_INVALID_PARAM,
             "inputDesc width x height 16x0");
  EXPECT_ACL(acldvppJpegPredictEncSize(pd, NULL, &w), ACL_ERROR_INVALID_PARAM, "config is NULL");
  OK(acldvppSetPicDescWidth(pd, 32));
  OK(acldvppSetPicDescHeight(pd, 16));
  OK(acldvppSetPicDescWidthStride(pd, 32));
  OK(acldvppSetPicDescHeightStride(pd, 16));
  EXPECT_ACL(acldvppJpegPredictEncSize(pd, jc, &w), ACL_ERROR_INVALID_PARAM, "32x16: 32x32 to 8192x8192");
  OK(acldvppSetPicDescHeight(pd, 32));
  OK(acldvppSetPicDescHeightStride(pd, 32));
  OK(acldvppSetPicDescSize(pd, 1024));
  EXPECT_ACL(acldvppJpegPredictEncSize(pd, jc, &w), ACL_ERROR_INVALID_PARAM, "size 1024");
  OK(acldvppSetPicDescSize(pd, 32 * 32 * 3 / 2));
  OK(acldvppJpegPredictEncSize(pd, jc, &w));
  CHECK(w >= 1024 + 6 * 416); /* one MCU: six blocks at their longest, every byte stuffed, and the headers */
  EXPECT_ACL(acldvppJpegEncodeAsync(ch, pd, pic, &w, jc, NULL), ACL_ERROR_INVALID_PARAM,
             "inputDesc data"); /* 1536 bytes of a 1024-byte buffer */
  OK(acldvppDestroyJpegeConfig(jc));
  OK(acldvppSetPicDescWidth(pd, 16));
  OK(acldvppSetPicDescHeight(pd, 0));
  /* PNG decode is the Ascend 310P's (socs/<name>.yaml dvpp.pngd); this process's SoC is the Ascend310 */
  static const unsigned char png_sig[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  EXPECT_ACL(acldvppPngGetImageInfo(png_sig, sizeof png_sig, &w, &h, &comps), ACL_ERROR_FEATURE_UNSUPPORTED,
             "the Ascend310 has no PNG decoder");
  EXPECT_ACL(acldvppPngPredictDecSize(png_sig, sizeof png_sig, PIXEL_FORMAT_RGB_888, &w),
             ACL_ERROR_FEATURE_UNSUPPORTED, "acldvppPngPredictDecSize");
  EXPECT_ACL(acldvppPngDecodeAsync(ch, png_sig, sizeof png_sig, pd, NULL), ACL_ERROR_FEATURE_UNSUPPORTED,
             "PNGD is an Ascend 310P feature");
  /* batches of descriptions and the batch VPC calls' counts */
  EXPECT_ACL(acldvppCreateBatchPicDesc(0) ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM, ACL_ERROR_INVALID_PARAM,
             "batchSize 0: 1 to 256");
  EXPECT_ACL(acldvppCreateBatchPicDesc(257) ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM, ACL_ERROR_INVALID_PARAM,
             "batchSize 257");
  acldvppBatchPicDesc *bsrc = acldvppCreateBatchPicDesc(2), *bdst = acldvppCreateBatchPicDesc(3);
  CHECK(bsrc && bdst && acldvppGetPicDesc(bsrc, 1) != NULL &&
        acldvppGetPicDesc(bsrc, 0) != acldvppGetPicDesc(bsrc, 1));
  EXPECT_ACL(acldvppGetPicDesc(bsrc, 2) ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM, ACL_ERROR_INVALID_PARAM,
             "index 2: the batch has 2 pictures");
  acldvppRoiConfig *rois[3] = {NULL, NULL, NULL};
  uint32_t nums[2] = {1, 2};
  EXPECT_ACL(acldvppVpcBatchCropAsync(ch, bsrc, NULL, 2, bdst, rois, NULL), ACL_ERROR_INVALID_PARAM,
             "roiNums is NULL");
  EXPECT_ACL(acldvppVpcBatchCropAndPasteAsync(ch, bsrc, nums, 2, bdst, rois, NULL, NULL),
             ACL_ERROR_INVALID_PARAM, "pasteAreas is NULL");
  EXPECT_ACL(acldvppVpcBatchCropAsync(ch, bsrc, nums, 3, bdst, rois, NULL), ACL_ERROR_INVALID_PARAM,
             "size 3: 1 to 256, at most srcBatchPicDescs' 2 pictures");
  EXPECT_ACL(acldvppVpcBatchCropAsync(ch, bsrc, nums, 1, bdst, rois, NULL), ACL_ERROR_INVALID_PARAM,
             "roiNums[0] + ... + roiNums[0] is 1: 1 to 256, and dstBatchPicDescs' batch size 3");
  EXPECT_ACL(acldvppVpcBatchCropAsync(ch, bsrc, nums, 2, bdst, rois, NULL), ACL_ERROR_FEATURE_UNSUPPORTED,
             "srcBatchPicDescs[0] format 0");
  OK(acldvppDestroyBatchPicDesc(bsrc));
  OK(acldvppDestroyBatchPicDesc(bdst));
  acldvppResizeConfig *rc = acldvppCreateResizeConfig();
  EXPECT_ACL(acldvppVpcResizeAsync(ch, NULL, pd, rc, NULL), ACL_ERROR_INVALID_PARAM, "inputDesc is NULL");
  EXPECT_ACL(acldvppVpcResizeAsync(ch, pd, pd, NULL, NULL), ACL_ERROR_INVALID_PARAM, "resizeConfig is NULL");
  EXPECT_ACL(acldvppVpcCropAsync(ch, pd, pd, NULL, NULL), ACL_ERROR_INVALID_PARAM,
             "inputDesc width x height 16x0");
  OK(acldvppDestroyResizeConfig(rc));
  OK(acldvppDestroyChannel(ch));
  EXPECT_ACL(acldvppVpcCropAsync(ch, pd, pd, NULL, NULL), ACL_ERROR_INVALID_PARAM,
             "the channel was not created");
  OK(acldvppDestroyPicDesc(pd));
  OK(acldvppDestroyChannelDesc(ch));
  OK(acldvppFree(pic));
  EXPECT_ACL(acldvppFree(pic), ACL_ERROR_RT_MEMORY_FREE, "acldvppFree");
}

/* --- single operators: op models of atc --singleop (driver/singleop.h),
 * loaded from a directory and from memory, matched by descriptions and
 * attributes, run through a handle against values computed here. */

static aclTensorDesc *nd(aclDataType dt, int rank, const int64_t *dims) {
  return aclCreateTensorDesc(dt, rank, dims, ACL_FORMAT_ND);
}

static void test_single_op(void) {
  EXPECT_ACL(aclopSetModelDir("no_such_dir"), ACL_ERROR_INVALID_FILE, "no_such_dir");
  CHECK(aclopLoad("om", 2) != ACL_SUCCESS);
  CHECK(strstr(aclGetRecentErrMsg(), "aclopLoad") != NULL);
  /* (a directory of this process's: the sanitized twin of this test may run beside it) */
  char tmp[64], base[1024], dir[1100], json[1100], om_path[1200], rm[1100];
  snprintf(tmp, sizeof tmp, "acl_rt_singleop_%d", (int)getpid());
  snprintf(base, sizeof base, "%s", test_tmpdir(tmp));
  snprintf(dir, sizeof dir, "%s/ops", base);
  snprintf(json, sizeof json, "%s/ops.json", base);
  const char *text = "[{\"op\": \"MatMul\", \"name\": \"mm\",\n"
                     "  \"input_desc\": [{\"format\": \"ND\", \"shape\": [2, 3], \"type\": \"float\"},\n"
                     "                 {\"format\": \"ND\", \"shape\": [3, 4], \"type\": \"float\"}],\n"
                     "  \"output_desc\": [{\"format\": \"ND\", \"shape\": [2, 4], \"type\": \"float\"}],\n"
                     "  \"attr\": [{\"name\": \"transpose_x2\", \"type\": \"bool\", \"value\": false}]},\n"
                     " {\"op\": \"ReduceSumD\", \"name\": \"rsum\",\n"
                     "  \"input_desc\": [{\"format\": \"ND\", \"shape\": [2, 3], \"type\": \"float\"}],\n"
                     "  \"output_desc\": [{\"format\": \"ND\", \"shape\": [2], \"type\": \"float\"}],\n"
                     "  \"attr\": [{\"name\": \"axes\", \"type\": \"list_int\", \"value\": [1]}]}]\n";
  CHECK_EQ_INT(test_write_file(json, text, strlen(text)), 0);
  mkdir(dir, 0777);
  atc_options opt = {.soc_version = "Ascend310", .precision = OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE};
  diag d;
  diag_init(&d);
  CHECK_EQ_INT(atc_singleop(json, dir, &opt, NULL, NULL, &d), ST_OK);
  if (d.code) test_note("atc_singleop: %s", d.msg);
  /* MatMul from memory (the data is copied: freed right after), then the
   * directory (MatMul again, skipped as loaded, and ReduceSumD). */
  snprintf(om_path, sizeof om_path, "%s/mm.om", dir);
  size_t size = 0;
  void *om = test_read_file(om_path, &size);
  CHECK(om != NULL);
  if (!om) return;
  OK(aclopLoad(om, size));
  memset(om, 0xff, size);
  free(om);
  aclTensorDesc *a = nd(ACL_FLOAT, 2, (int64_t[]){2, 3}), *b = nd(ACL_FLOAT, 2, (int64_t[]){3, 4});
  aclTensorDesc *y = nd(ACL_FLOAT, 2, (int64_t[]){2, 4}), *r = nd(ACL_FLOAT, 1, (int64_t[]){2});
  aclTensorDesc *b16 = nd(ACL_FLOAT16, 2, (int64_t[]){3, 4});
  const aclTensorDesc *in[2] = {a, b}, *out[1] = {y}, *in16[2] = {a, b16}, *rin[1] = {a}, *rout[1] = {r};
  aclopHandle *h = NULL;
  aclopAttr *attr = aclopCreateAttr();
  EXPECT_ACL(aclopCreateHandle("ReduceSumD", 1, rin, 1, rout, attr, &h), ACL_ERROR_OP_NOT_FOUND,
             "ReduceSumD");
  OK(aclopSetModelDir(dir));
  /* attributes: transpose_x2 was set by the description, so a call must
   * set it; transpose_x1 is at its default, so a call may leave it out */
  EXPECT_ACL(aclopCreateHandle("MatMul", 2, in, 1, out, NULL, &h), ACL_ERROR_OP_ATTR_NOT_MATCH,
             "attr 'transpose_x2' is not set");
  OK(aclopSetAttrInt(attr, "transpose_x2", 0));
  EXPECT_ACL(aclopCreateHandle("MatMul", 2, in, 1, out, attr, &h), ACL_ERROR_OP_ATTR_NOT_MATCH,
             "attr 'transpose_x2' is int 0, the closest model (");
  OK(aclopSetAttrBool(attr, "transpose_x2", 0));
  OK(aclopSetAttrBool(attr, "transpose_x1", 1));
  EXPECT_ACL(aclopCreateHandle("MatMul", 2, in, 1, out, attr, &h), ACL_ERROR_OP_ATTR_NOT_MATCH,
             "attr 'transpose_x1' is bool 1");
  OK(aclopSetAttrBool(attr, "transpose_x1", 0));
  OK(aclopSetAttrFloat(attr, "alpha", 2.0f));
  EXPECT_ACL(aclopCreateHandle("MatMul", 2, in, 1, out, attr, &h), ACL_ERROR_OP_ATTR_NOT_MATCH, "'alpha'");
  aclopDestroyAttr(attr);
  attr = aclopCreateAttr();
  OK(aclopSetAttrBool(attr, "transpose_x2", 0));
  EXPECT_ACL(aclopCreateHandle("MatMul", 2, in16, 1, out, attr, &h), ACL_ERROR_OP_INPUT_NOT_MATCH,
             "inputDesc[1] is float16 ND [3,4], the closest model");
  EXPECT_ACL(aclopCreateHandle("MatMul", 2, in, 1, rout, attr, &h), ACL_ERROR_OP_OUTPUT_NOT_MATCH,
             "outputDesc[0] is float ND [2]");
  OK(aclopCreateHandle("MatMul", 2, in, 1, out, attr, &h));
  float av[6] = {1, -2, 3, 0.5f, 4, -1}, bv[12], yv[8] = {0};
  for (int i = 0; i < 12; i++)
    bv[i] = 0.25f * (float)(i - 5);
  aclDataBuffer *ab = aclCreateDataBuffer(av, sizeof av), *bb = aclCreateDataBuffer(bv, sizeof bv);
  aclDataBuffer *yb = aclCreateDataBuffer(yv, sizeof yv), *small = aclCreateDataBuffer(yv, 4);
  const aclDataBuffer *ib[2] = {ab, bb};
  aclDataBuffer *ob[1] = {yb}, *sb[1] = {small};
  EXPECT_ACL(aclopExecWithHandle(h, 2, ib, 1, sb, NULL), ACL_ERROR_INVALID_PARAM, "outputs[0]");
  OK(aclopExecWithHandle(h, 2, ib, 1, ob, NULL));
  int ok = 1;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 4; j++) {
      float s = 0;
      for (int k = 0; k < 3; k++)
        s += av[i * 3 + k] * bv[k * 4 + j];
      ok &= yv[i * 4 + j] == s;
    }
  CHECK(ok);
  aclopDestroyHandle(h);
  aclopDestroyAttr(attr);
  /* ReduceSumD: a list attribute, set or left out (it was set: required) */
  attr = aclopCreateAttr();
  OK(aclopSetAttrListInt(attr, "axes", 1, (int64_t[]){0}));
  EXPECT_ACL(aclopCreateHandle("ReduceSumD", 1, rin, 1, rout, attr, &h), ACL_ERROR_OP_ATTR_NOT_MATCH,
             "attr 'axes' is list_int 0, the closest model");
  OK(aclopSetAttrListInt(attr, "axes", 1, (int64_t[]){1}));
  OK(aclopSetAttrBool(attr, "keep_dims", 0));
  float rv[2] = {0};
  aclDataBuffer *rb = aclCreateDataBuffer(rv, sizeof rv);
  aclTensorDesc *rinv[1] = {a}, *routv[1] = {r};
  aclDataBuffer *rib[1] = {ab}, *rob[1] = {rb};
  OK(aclopExecuteV2("ReduceSumD", 1, rinv, rib, 1, routv, rob, attr, NULL));
  CHECK(rv[0] == av[0] + av[1] + av[2] && rv[1] == av[3] + av[4] + av[5]);
  aclopDestroyAttr(attr);
  OK(aclDestroyDataBuffer(ab));
  OK(aclDestroyDataBuffer(bb));
  OK(aclDestroyDataBuffer(yb));
  OK(aclDestroyDataBuffer(small));
  OK(aclDestroyDataBuffer(rb));
  aclDestroyTensorDesc(a);
  aclDestroyTensorDesc(b);
  aclDestroyTensorDesc(b16);
  aclDestroyTensorDesc(y);
  aclDestroyTensorDesc(r);
  snprintf(rm, sizeof rm, "rm -rf '%s'", base);
  CHECK(system(rm) == 0);
}

int main(void) {
  size_t size = 0;
  void *om = compile_model(&size);
  CHECK(om != NULL);
  if (!om) return test_summary("acl_rt");
  char path[1024];
  snprintf(path, sizeof path, "%s/model.om", test_tmpdir("acl_rt"));
  CHECK_EQ_INT(test_write_file(path, om, size), 0);
  aclrtEvent e;
  EXPECT_ACL(aclrtCreateEvent(&e), ACL_ERROR_UNINITIALIZE, "aclrtCreateEvent: aclInit has not been called");
  EXPECT_ACL(aclrtProcessReport(10), ACL_ERROR_UNINITIALIZE, "aclrtProcessReport");
  EXPECT_ACL(aclmdlInitDump(), ACL_ERROR_UNINITIALIZE, "aclmdlInitDump");
  CHECK(aclrtGetSocName() == NULL);
  aclGetRecentErrMsg();
  OK(aclInit(NULL));
  OK(aclrtSetDevice(0));
  CHECK(aclrtGetSocName() && strcmp(aclrtGetSocName(), "Ascend310") == 0);
  test_callbacks();
  test_blocking_unprocessed();
  test_events();
  test_memory();
  test_tensor_desc();
  test_model(path, om, size);
  test_unsupported();
  test_dump_failure(path);
  test_single_op();
  /* aclFinalize frees events and subscriptions left behind */
  aclrtStream s;
  OK(aclrtCreateStream(&s));
  OK(aclrtCreateEvent(&e));
  OK(aclrtRecordEvent(e, s));
  OK(aclrtSubscribeReport((uint64_t)pthread_self(), s));
  static pthread_t never;
  OK(aclrtLaunchCallback(count_call, &never, ACL_CALLBACK_BLOCK, s)); /* never processed */
  OK(aclrtResetDevice(0));
  OK(aclFinalize());
  free(om);
  return test_summary("acl_rt");
}
