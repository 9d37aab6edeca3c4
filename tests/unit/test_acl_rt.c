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
 *   - dump, profiling and single operators return
 *     ACL_ERROR_FEATURE_UNSUPPORTED (DVPP's memory, descriptions, batches
 *     and channels, and operator attributes, work; a DVPP call checks its
 *     channel, its arguments and its input before queueing). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "acl/acl_prof.h"
#include "acl/ops/acl_dvpp.h"
#include "driver/compile.h"
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

static void test_unsupported(void) {
  EXPECT_ACL(aclmdlInitDump(), ACL_ERROR_FEATURE_UNSUPPORTED, "aclmdlInitDump: dump is not provided");
  EXPECT_ACL(aclmdlSetDump("dump.json"), ACL_ERROR_FEATURE_UNSUPPORTED, "aclmdlSetDump");
  EXPECT_ACL(aclmdlFinalizeDump(), ACL_ERROR_FEATURE_UNSUPPORTED, "aclmdlFinalizeDump");
  EXPECT_ACL(aclprofInit("prof", 4), ACL_ERROR_FEATURE_UNSUPPORTED, "aclprofInit: profiling");
  uint32_t dev = 0;
  EXPECT_ACL(aclprofCreateConfig(&dev, 1, ACL_AICORE_NONE, NULL, ACL_PROF_TASK_TIME) == NULL, 1,
             "aclprofCreateConfig");
  EXPECT_ACL(aclprofStart(NULL), ACL_ERROR_FEATURE_UNSUPPORTED, "aclprofStart");
  EXPECT_ACL(aclprofStop(NULL), ACL_ERROR_FEATURE_UNSUPPORTED, "aclprofStop");
  EXPECT_ACL(aclprofFinalize(), ACL_ERROR_FEATURE_UNSUPPORTED, "aclprofFinalize");
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
  /* single operators (acl/acl_op.h, included by acl.h): attributes work, the rest does not */
  EXPECT_ACL(aclopSetModelDir("op_models"), ACL_ERROR_FEATURE_UNSUPPORTED, "single-operator models");
  EXPECT_ACL(aclopLoad("om", 2), ACL_ERROR_FEATURE_UNSUPPORTED, "aclopLoad");
  aclopAttr *attr = aclopCreateAttr();
  CHECK(attr != NULL);
  OK(aclopSetAttrInt(attr, "axis", 1));
  OK(aclopSetAttrListInt(attr, "perm", 2, (int64_t[]){1, 0}));
  OK(aclopSetAttrString(attr, "mode", "nearest"));
  EXPECT_ACL(aclopSetAttrFloat(attr, NULL, 1.0f), ACL_ERROR_INVALID_PARAM, "attrName is NULL");
  EXPECT_ACL(aclopSetAttrListFloat(attr, "scales", 2, NULL), ACL_ERROR_INVALID_PARAM,
             "'scales': values is NULL");
  EXPECT_ACL(aclopSetAttrBool(NULL, "x", 1), ACL_ERROR_INVALID_PARAM, "attr is NULL");
  aclTensorDesc *td = aclCreateTensorDesc(ACL_FLOAT, 1, (int64_t[]){4}, ACL_FORMAT_ND);
  aclDataBuffer *db = aclCreateDataBuffer(NULL, 0);
  const aclTensorDesc *descs[1] = {td};
  aclDataBuffer *bufs[1] = {db};
  EXPECT_ACL(aclopExecute("Abs", 1, descs, (const aclDataBuffer *const *)bufs, 1, descs, bufs, attr, NULL),
             ACL_ERROR_FEATURE_UNSUPPORTED, "aclopExecute: single-operator models");
  aclopHandle *handle = (aclopHandle *)attr;
  EXPECT_ACL(aclopCreateHandle("Abs", 1, descs, 1, descs, attr, &handle), ACL_ERROR_FEATURE_UNSUPPORTED,
             "aclopCreateHandle");
  CHECK(handle == NULL);
  aclopDestroyHandle(handle);
  aclopDestroyAttr(attr);
  aclDestroyTensorDesc(td);
  OK(aclDestroyDataBuffer(db));
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
