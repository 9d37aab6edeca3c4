/* acl_async_aipp.c - asynchronous AscendCL with a callback thread and
 * dynamic AIPP, as the public documentation describes them, written as an
 * application would be, against the public headers only.
 *
 * The model (atc --insert_op_conf with aipp_mode: dynamic) takes raw RGB888
 * pixels and a parameters input. The application has a float32 NCHW
 * tensor (IN.bin, what the model without AIPP takes) and sends it, RUNS
 * times, as 8-bit pixels: run k quantises each channel over its own range
 * (a different margin per run) and places the picture at a different
 * place in a larger frame, so each run has its own AIPP parameters (crop
 * window, per-channel min and reciprocal of the variance undoing the
 * quantisation) built with aclmdlCreateAIPP / aclmdlSetAIPP* and written
 * with aclmdlSetInputAIPP. All runs are queued on one stream:
 *
 *   aclrtMemcpyAsync (frame, host -> device) -> aclmdlExecuteAsync
 *   -> aclrtMemcpyAsync (output, device -> host) -> aclrtLaunchCallback
 *
 * the callbacks (ACL_CALLBACK_BLOCK and ACL_CALLBACK_NO_BLOCK in turn) run
 * on a thread of the application subscribed with aclrtSubscribeReport and
 * looping on aclrtProcessReport with a timeout; each writes its run's
 * output to OUT_PREFIX<k>.bin. Then aclrtSynchronizeStream, the thread
 * told to stop and joined, aclrtUnSubscribeReport, and the teardown.
 *
 *   acl_async_aipp MODEL.om IN.bin HEIGHT WIDTH OUT_PREFIX
 *
 * HEIGHT x WIDTH: the picture the model takes (IN.bin: 3 x HEIGHT x WIDTH
 * float32).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl.h"

#define LOG(...) (printf(__VA_ARGS__), putchar('\n'), fflush(stdout))

static int failed(const char *what, aclError ret) {
  const char *msg = aclGetRecentErrMsg();
  fprintf(stderr, "[ERROR] %s: error %d: %s\n", what, ret, msg ? msg : "(no message)");
  return 1;
}
#define CHECK(call)                                                                                          \
  do {                                                                                                       \
    aclError ret_ = (call);                                                                                  \
    if (ret_ != ACL_SUCCESS) return failed(#call, ret_);                                                     \
  } while (0)

enum { RUNS = 4, C = 3 };

typedef struct job {
  int k;
  const char *prefix;
  void *hostFrame, *hostOut; /* aclrtMallocHost */
  size_t frameBytes, outBytes;
  aclmdlDataset *in, *out;
  aclmdlAIPP *aipp;
  atomic_int done;
  int bad;
} job;

static atomic_int subscribed, stop_thread, callback_errors;
static atomic_int callbacks;

/* The callback thread: processes reports until told to stop. */
static void *callback_main(void *arg) {
  (void)arg;
  while (!atomic_load(&subscribed) &&
         !atomic_load(&stop_thread)) { /* aclrtSubscribeReport names this thread */
    struct timespec pause = {0, 1000000};
    nanosleep(&pause, NULL);
  }
  while (!atomic_load(&stop_thread)) {
    aclError ret = aclrtProcessReport(100);
    if (ret != ACL_SUCCESS && ret != ACL_ERROR_RT_REPORT_TIMEOUT) {
      failed("aclrtProcessReport", ret);
      atomic_fetch_add(&callback_errors, 1);
    }
  }
  return NULL;
}

/* Runs on the callback thread once run k's output is in host memory. */
static void on_output(void *arg) {
  job *j = arg;
  char path[4096];
  snprintf(path, sizeof path, "%s%d.bin", j->prefix, j->k);
  FILE *f = fopen(path, "wb");
  j->bad = !f || fwrite(j->hostOut, 1, j->outBytes, f) != j->outBytes;
  if (f && fclose(f)) j->bad = 1;
  const float *y = j->hostOut;
  size_t top = 0;
  for (size_t i = 1; i < j->outBytes / sizeof *y; i++)
    if (y[i] > y[top]) top = i;
  LOG("run %d: class %zu (callback on the subscribed thread)", j->k, top);
  atomic_store(&j->done, 1);
  atomic_fetch_add(&callbacks, 1);
}

typedef struct app {
  int deviceSet, subscribed, threadStarted;
  aclrtContext context;
  aclrtStream stream;
  pthread_t thread;
  uint32_t modelId;
  int loaded;
  aclmdlDesc *desc;
  float *tensor; /* IN.bin: [C][h][w] */
  int64_t h, w;
  size_t image, params; /* the image input and its parameters input */
  job jobs[RUNS];
} app;

static int read_file(const char *path, void *dst, size_t size) {
  FILE *f = fopen(path, "rb");
  size_t got = f ? fread(dst, 1, size, f) : 0;
  int extra = f && fgetc(f) != EOF;
  if (f) fclose(f);
  if (got != size || extra) return fprintf(stderr, "[ERROR] %s: needs exactly %zu bytes\n", path, size), 1;
  return 0;
}

static int add_buffer(aclmdlDataset *d, size_t size) {
  void *dev = NULL;
  CHECK(aclrtMalloc(&dev, size, ACL_MEM_MALLOC_HUGE_FIRST));
  aclDataBuffer *buf = aclCreateDataBuffer(dev, size);
  if (!buf) {
    aclrtFree(dev);
    return failed("aclCreateDataBuffer", ACL_ERROR_BAD_ALLOC);
  }
  aclError ret = aclmdlAddDatasetBuffer(d, buf);
  if (ret != ACL_SUCCESS) {
    aclDestroyDataBuffer(buf);
    aclrtFree(dev);
    return failed("aclmdlAddDatasetBuffer", ret);
  }
  return 0;
}

/* Run k's frame (RGB888, the picture at (x0, y0) of a fw x fh frame,
 * channel c quantised over [lo_c, hi_c]) and its AIPP parameters. */
static int prepare(app *a, job *j) {
  int k = j->k;
  int32_t fw = (int32_t)a->w + 6 * k, fh = (int32_t)a->h + 4 * k, x0 = 5 * k, y0 = 3 * k;
  if (x0 + a->w > fw) x0 = 0;
  if (y0 + a->h > fh) y0 = 0;
  j->frameBytes = (size_t)fw * (size_t)fh * C;
  CHECK(aclrtMallocHost(&j->hostFrame, j->frameBytes));
  memset(j->hostFrame, 17 * k, j->frameBytes); /* what lies outside the crop */
  uint8_t *px = j->hostFrame;
  size_t plane = (size_t)(a->h * a->w);
  float minv[C], var[C];
  for (int c = 0; c < C; c++) {
    float lo = a->tensor[c * plane], hi = lo;
    for (size_t i = 0; i < plane; i++) {
      float v = a->tensor[c * plane + i];
      lo = v < lo ? v : lo, hi = v > hi ? v : hi;
    }
    float margin = 0.25f * (float)k;
    lo -= margin, hi += margin;
    float scale = (hi - lo) / 255.0f; /* pixel p stands for lo + p * scale = (p - min) * var */
    minv[c] = -lo / scale, var[c] = scale;
    for (int64_t y = 0; y < a->h; y++)
      for (int64_t x = 0; x < a->w; x++) {
        float q = roundf((a->tensor[c * plane + (size_t)(y * a->w + x)] - lo) / scale);
        px[((size_t)(y0 + y) * (size_t)fw + (size_t)(x0 + x)) * C + (size_t)c] = (uint8_t)(q < 0     ? 0
                                                                                           : q > 255 ? 255
                                                                                                     : q);
      }
  }
  if (!(j->aipp = aclmdlCreateAIPP(1))) return failed("aclmdlCreateAIPP", ACL_ERROR_BAD_ALLOC);
  CHECK(aclmdlSetAIPPInputFormat(j->aipp, ACL_RGB888_U8));
  CHECK(aclmdlSetAIPPCscParams(j->aipp, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
  CHECK(aclmdlSetAIPPRbuvSwapSwitch(j->aipp, 0));
  CHECK(aclmdlSetAIPPAxSwapSwitch(j->aipp, 0));
  CHECK(aclmdlSetAIPPSrcImageSize(j->aipp, fw, fh));
  CHECK(aclmdlSetAIPPScfParams(j->aipp, 0, 0, 0, 0, 0, 0));
  CHECK(aclmdlSetAIPPCropParams(j->aipp, 1, x0, y0, (int32_t)a->w, (int32_t)a->h, 0));
  CHECK(aclmdlSetAIPPPaddingParams(j->aipp, 0, 0, 0, 0, 0, 0));
  CHECK(aclmdlSetAIPPDtcPixelMean(j->aipp, 0, 0, 0, 0, 0));
  CHECK(aclmdlSetAIPPDtcPixelMin(j->aipp, minv[0], minv[1], minv[2], 0, 0));
  CHECK(aclmdlSetAIPPPixelVarReci(j->aipp, var[0], var[1], var[2], 1.0f, 0));

  if (!(j->in = aclmdlCreateDataset()) || !(j->out = aclmdlCreateDataset()))
    return failed("aclmdlCreateDataset", ACL_ERROR_BAD_ALLOC);
  for (size_t i = 0; i < aclmdlGetNumInputs(a->desc); i++)
    if (add_buffer(j->in, aclmdlGetInputSizeByIndex(a->desc, i))) return 1;
  if (j->frameBytes > aclmdlGetInputSizeByIndex(a->desc, a->image))
    return fprintf(stderr, "[ERROR] a %dx%d frame is larger than the model's max_src_image_size\n", fw, fh),
           1;
  CHECK(aclmdlSetInputAIPP(a->modelId, j->in, a->params, j->aipp));
  j->outBytes = aclmdlGetOutputSizeByIndex(a->desc, 0);
  if (add_buffer(j->out, j->outBytes)) return 1;
  CHECK(aclrtMallocHost(&j->hostOut, j->outBytes));
  LOG("run %d: %dx%d frame, crop at (%d, %d), min %.2f %.2f %.2f, var_reci %.5f %.5f %.5f", k, fw, fh, x0, y0,
      (double)minv[0], (double)minv[1], (double)minv[2], (double)var[0], (double)var[1], (double)var[2]);
  return 0;
}

static int run(app *a, const char *model, const char *input, const char *prefix) {
  if (a->h < 1 || a->w < 1 || a->h > 4096 || a->w > 4096)
    return fprintf(stderr, "[ERROR] a %lldx%lld picture\n", (long long)a->h, (long long)a->w), 1;
  CHECK(aclInit(NULL));
  CHECK(aclrtSetDevice(0));
  a->deviceSet = 1;
  CHECK(aclrtCreateContext(&a->context, 0));
  CHECK(aclrtCreateStream(&a->stream));
  CHECK(aclmdlLoadFromFile(model, &a->modelId));
  a->loaded = 1;
  if (!(a->desc = aclmdlCreateDesc())) return failed("aclmdlCreateDesc", ACL_ERROR_BAD_ALLOC);
  CHECK(aclmdlGetDesc(a->desc, a->modelId));

  /* which input takes the image, which its parameters */
  CHECK(aclmdlGetInputIndexByName(a->desc, ACL_DYNAMIC_AIPP_NAME, &a->params));
  aclmdlInputAippType type;
  size_t attached = 0;
  CHECK(aclmdlGetAippType(a->modelId, a->params, &type, &attached));
  if (type != ACL_DYNAMIC_AIPP_NODE)
    return fprintf(stderr, "[ERROR] input %zu is not AIPP's parameters\n", a->params), 1;
  a->image = attached;
  CHECK(aclmdlGetAippType(a->modelId, a->image, &type, &attached));
  if (type != ACL_DATA_WITH_DYNAMIC_AIPP || attached != a->params)
    return fprintf(stderr, "[ERROR] input %zu does not take dynamic AIPP\n", a->image), 1;
  LOG("image input %zu '%s', parameters input %zu", a->image, aclmdlGetInputNameByIndex(a->desc, a->image),
      a->params);

  /* the tensor the frames are made of: [1][C][h][w] float32 */
  size_t outputs = aclmdlGetNumOutputs(a->desc);
  if (outputs != 1 || aclmdlGetOutputDataType(a->desc, 0) != ACL_FLOAT)
    return fprintf(stderr, "[ERROR] this application takes one float32 output\n"), 1;
  size_t bytes = (size_t)(C * a->h * a->w) * sizeof(float);
  if (!(a->tensor = malloc(bytes))) return fprintf(stderr, "[ERROR] out of memory\n"), 1;
  if (read_file(input, a->tensor, bytes)) return 1;

  /* the callback thread */
  if (pthread_create(&a->thread, NULL, callback_main, NULL) != 0)
    return fprintf(stderr, "[ERROR] thread\n"), 1;
  a->threadStarted = 1;
  CHECK(aclrtSubscribeReport((uint64_t)a->thread, a->stream));
  a->subscribed = 1;
  atomic_store(&subscribed, 1);

  for (int k = 0; k < RUNS; k++) {
    job *j = &a->jobs[k];
    j->k = k, j->prefix = prefix;
    if (prepare(a, j)) return 1;
  }
  for (int k = 0; k < RUNS; k++) {
    job *j = &a->jobs[k];
    aclDataBuffer *frame = aclmdlGetDatasetBuffer(j->in, a->image);
    aclDataBuffer *result = aclmdlGetDatasetBuffer(j->out, 0);
    CHECK(aclrtMemcpyAsync(aclGetDataBufferAddr(frame), aclGetDataBufferSizeV2(frame), j->hostFrame,
                           j->frameBytes, ACL_MEMCPY_HOST_TO_DEVICE, a->stream));
    CHECK(aclmdlExecuteAsync(a->modelId, j->in, j->out, a->stream));
    CHECK(aclrtMemcpyAsync(j->hostOut, j->outBytes, aclGetDataBufferAddr(result), j->outBytes,
                           ACL_MEMCPY_DEVICE_TO_HOST, a->stream));
    CHECK(aclrtLaunchCallback(on_output, j, k % 2 ? ACL_CALLBACK_BLOCK : ACL_CALLBACK_NO_BLOCK, a->stream));
  }
  LOG("%d runs queued", RUNS);
  CHECK(aclrtSynchronizeStream(a->stream));
  /* NO_BLOCK callbacks may still be on their way to the thread */
  while (atomic_load(&callbacks) < RUNS && !atomic_load(&callback_errors)) {
    struct timespec pause = {0, 5000000};
    nanosleep(&pause, NULL);
  }
  int bad = atomic_load(&callback_errors) != 0;
  for (int k = 0; k < RUNS; k++)
    bad |= a->jobs[k].bad || !atomic_load(&a->jobs[k].done);
  return bad;
}

static void destroy_dataset(aclmdlDataset *d) {
  if (!d) return;
  for (size_t i = 0; i < aclmdlGetDatasetNumBuffers(d); i++) {
    aclDataBuffer *buf = aclmdlGetDatasetBuffer(d, i);
    aclrtFree(aclGetDataBufferAddr(buf));
    aclDestroyDataBuffer(buf);
  }
  aclmdlDestroyDataset(d);
}

static int teardown(app *a) {
  int bad = 0;
#define STEP(call)                                                                                           \
  do {                                                                                                       \
    aclError ret_ = (call);                                                                                  \
    if (ret_ != ACL_SUCCESS) bad |= failed(#call, ret_);                                                     \
  } while (0)
  if (a->threadStarted) {
    atomic_store(&stop_thread, 1);
    pthread_join(a->thread, NULL);
  }
  if (a->subscribed) STEP(aclrtUnSubscribeReport((uint64_t)a->thread, a->stream));
  for (int k = 0; k < RUNS; k++) {
    job *j = &a->jobs[k];
    destroy_dataset(j->in);
    destroy_dataset(j->out);
    if (j->aipp) STEP(aclmdlDestroyAIPP(j->aipp));
    if (j->hostFrame) STEP(aclrtFreeHost(j->hostFrame));
    if (j->hostOut) STEP(aclrtFreeHost(j->hostOut));
  }
  if (a->loaded) STEP(aclmdlUnload(a->modelId));
  if (a->desc) STEP(aclmdlDestroyDesc(a->desc));
  if (a->stream) STEP(aclrtDestroyStream(a->stream));
  if (a->context) STEP(aclrtDestroyContext(a->context));
  if (a->deviceSet) STEP(aclrtResetDevice(0));
  STEP(aclFinalize());
#undef STEP
  free(a->tensor);
  return bad;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s MODEL.om IN.bin HEIGHT WIDTH OUT_PREFIX\n", argv[0]);
    return 2;
  }
  static app a;
  a.h = atoll(argv[3]), a.w = atoll(argv[4]);
  int bad = run(&a, argv[1], argv[2], argv[5]);
  bad |= teardown(&a);
  LOG("%s", bad ? "FAILED" : "done");
  return bad;
}
