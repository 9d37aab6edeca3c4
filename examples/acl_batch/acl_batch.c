/* acl_batch.c - image classification with AscendCL on a model with a
 * dynamic batch, run asynchronously, as Ascend's samples combine them:
 * the model (atc --input_shape="input:-1,3,224,224"
 * --dynamic_batch_size="1,2,4") is loaded by configuration; for each batch
 * size it supports, the image is replicated into the batch, copied in and
 * run on a stream (aclrtMemcpyAsync, aclmdlSetDynamicBatchSize,
 * aclmdlExecuteAsync) between two timing events; a callback on the stream,
 * run by a thread of the application subscribed to it, copies the output
 * back and takes each image's top class; the host waits for the end event
 * and prints the run's time (aclrtEventElapsedTime). Every image of every
 * batch must get the first run's class. It uses AscendCL only.
 *
 *   cc acl_batch.c -I<prefix>/include -L<prefix>/lib -lascendcl -lpthread -o acl_batch
 *   ./acl_batch resnet50_batch.om input.bin [output.bin]
 *
 * input.bin is one image as the model takes it (float32 NCHW); output.bin,
 * when given, receives the first image's output of the largest batch.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"

#define INFO_LOG(fmt, ...) fprintf(stdout, "[INFO]  " fmt "\n", ##__VA_ARGS__)
#define ERROR_LOG(fmt, ...) fprintf(stderr, "[ERROR] " fmt "\n", ##__VA_ARGS__)

static int acl_failed(const char *what, aclError ret) {
  const char *msg = aclGetRecentErrMsg();
  ERROR_LOG("%s failed, error code %d: %s", what, ret, msg ? msg : "(no message)");
  return 1;
}
#define CHECK_ACL(call)                                                                                      \
  do {                                                                                                       \
    aclError ret_ = (call);                                                                                  \
    if (ret_ != ACL_SUCCESS) return acl_failed(#call, ret_);                                                 \
  } while (0)

typedef struct app {
  aclrtContext context;
  aclrtStream stream;
  pthread_t cbThread;
  int cbThreadStarted, subscribed;
  volatile int exitFlag;
  uint32_t modelId;
  int modelLoaded;
  aclmdlDesc *desc;
  aclmdlDataset *input, *output;
  void *inDev, *dynDev, *outDev, *hostImages, *hostOut;
  size_t imageBytes, inBytes, dynBytes, outBytes, dynIndex;
  aclrtEvent start, end;
  /* what the callback found for the current run */
  size_t batch, classes;
  int top[ACL_MAX_BATCH_NUM];
  aclError cbError;
} app;

/* The callback thread: processes the stream's callbacks until told to stop. */
static void *CallbackThread(void *arg) {
  app *a = arg;
  aclrtSetCurrentContext(a->context);
  while (!a->exitFlag) {
    aclError ret = aclrtProcessReport(100);
    if (ret != ACL_SUCCESS && ret != ACL_ERROR_RT_REPORT_TIMEOUT && ret != ACL_ERROR_RT_THREAD_SUBSCRIBE)
      acl_failed("aclrtProcessReport", ret);
  }
  return NULL;
}

/* On the stream, after the run: the outputs back to the host, each image's top class. */
static void ProcessResult(void *arg) {
  app *a = arg;
  size_t bytes = a->batch * a->classes * sizeof(float);
  a->cbError = aclrtMemcpy(a->hostOut, a->outBytes, a->outDev, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
  const float *scores = a->hostOut;
  for (size_t b = 0; b < a->batch && !a->cbError; b++) {
    const float *s = scores + b * a->classes;
    int best = 0;
    for (size_t k = 1; k < a->classes; k++)
      if (s[k] > s[best]) best = (int)k;
    a->top[b] = best;
  }
}

static int Init(app *a) {
  CHECK_ACL(aclInit(NULL));
  CHECK_ACL(aclrtSetDevice(0));
  CHECK_ACL(aclrtCreateContext(&a->context, 0));
  CHECK_ACL(aclrtCreateStream(&a->stream));
  if (pthread_create(&a->cbThread, NULL, CallbackThread, a) != 0) {
    ERROR_LOG("cannot start the callback thread");
    return 1;
  }
  a->cbThreadStarted = 1;
  CHECK_ACL(aclrtSubscribeReport((uint64_t)a->cbThread, a->stream));
  a->subscribed = 1;
  CHECK_ACL(aclrtCreateEventWithFlag(&a->start, ACL_EVENT_TIME_LINE));
  CHECK_ACL(aclrtCreateEventWithFlag(&a->end, ACL_EVENT_TIME_LINE));
  INFO_LOG("device 0 (%s) ready; callbacks on their own thread", aclrtGetSocName());
  return 0;
}

static int Load(app *a, const char *path) {
  aclmdlConfigHandle *h = aclmdlCreateConfigHandle();
  if (!h) return acl_failed("aclmdlCreateConfigHandle", ACL_ERROR_BAD_ALLOC);
  size_t type = ACL_MDL_LOAD_FROM_FILE;
  aclError ret = aclmdlSetConfigOpt(h, ACL_MDL_LOAD_TYPE_SIZET, &type, sizeof type);
  if (ret == ACL_SUCCESS) ret = aclmdlSetConfigOpt(h, ACL_MDL_PATH_PTR, &path, sizeof path);
  if (ret == ACL_SUCCESS) ret = aclmdlLoadWithConfig(h, &a->modelId);
  aclmdlDestroyConfigHandle(h);
  if (ret != ACL_SUCCESS) return acl_failed("aclmdlLoadWithConfig", ret);
  a->modelLoaded = 1;
  if (!(a->desc = aclmdlCreateDesc())) return acl_failed("aclmdlCreateDesc", ACL_ERROR_BAD_ALLOC);
  CHECK_ACL(aclmdlGetDesc(a->desc, a->modelId));
  CHECK_ACL(aclmdlGetInputIndexByName(a->desc, ACL_DYNAMIC_TENSOR_NAME, &a->dynIndex));
  aclmdlIODims dims;
  CHECK_ACL(aclmdlGetInputDims(a->desc, 0, &dims));
  if (a->dynIndex != 1 || aclmdlGetNumOutputs(a->desc) != 1 || dims.dimCount < 1 || dims.dims[0] != -1 ||
      aclmdlGetOutputDataType(a->desc, 0) != ACL_FLOAT) {
    ERROR_LOG("this sample takes a model of one float input with a dynamic batch and one float output");
    return 1;
  }
  return 0;
}

/* Device buffers of the largest batch's sizes, and host staging memory. */
static int Buffers(app *a, size_t maxBatch) {
  a->inBytes = aclmdlGetInputSizeByIndex(a->desc, 0);
  a->dynBytes = aclmdlGetInputSizeByIndex(a->desc, a->dynIndex);
  a->outBytes = aclmdlGetOutputSizeByIndex(a->desc, 0);
  a->imageBytes = a->inBytes / maxBatch;
  a->classes = a->outBytes / maxBatch / sizeof(float);
  CHECK_ACL(aclrtMalloc(&a->inDev, a->inBytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMalloc(&a->dynDev, a->dynBytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMalloc(&a->outDev, a->outBytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMallocHost(&a->hostImages, a->inBytes));
  CHECK_ACL(aclrtMallocHost(&a->hostOut, a->outBytes));
  a->input = aclmdlCreateDataset();
  a->output = aclmdlCreateDataset();
  if (!a->input || !a->output) return acl_failed("aclmdlCreateDataset", ACL_ERROR_BAD_ALLOC);
  CHECK_ACL(aclmdlAddDatasetBuffer(a->input, aclCreateDataBuffer(a->inDev, a->inBytes)));
  CHECK_ACL(aclmdlAddDatasetBuffer(a->input, aclCreateDataBuffer(a->dynDev, a->dynBytes)));
  CHECK_ACL(aclmdlAddDatasetBuffer(a->output, aclCreateDataBuffer(a->outDev, a->outBytes)));
  return 0;
}

static int ReadImage(app *a, const char *path) {
  FILE *f = fopen(path, "rb");
  size_t got = f ? fread(a->hostImages, 1, a->imageBytes, f) : 0;
  int extra = f ? fgetc(f) != EOF : 0;
  if (f) fclose(f);
  if (got != a->imageBytes || extra) {
    ERROR_LOG("%s: expected exactly %zu bytes (one image)", path, a->imageBytes);
    return 1;
  }
  return 0;
}

/* One asynchronous run of `batch` copies of the image; returns its time. */
static int RunBatch(app *a, size_t batch, float *ms) {
  for (size_t b = 1; b < batch; b++)
    memcpy((char *)a->hostImages + b * a->imageBytes, a->hostImages, a->imageBytes);
  a->batch = batch;
  a->cbError = ACL_SUCCESS;
  CHECK_ACL(aclmdlSetDynamicBatchSize(a->modelId, a->input, a->dynIndex, batch));
  CHECK_ACL(aclrtRecordEvent(a->start, a->stream));
  CHECK_ACL(aclrtMemcpyAsync(a->inDev, a->inBytes, a->hostImages, batch * a->imageBytes,
                             ACL_MEMCPY_HOST_TO_DEVICE, a->stream));
  CHECK_ACL(aclmdlExecuteAsync(a->modelId, a->input, a->output, a->stream));
  CHECK_ACL(aclrtRecordEvent(a->end, a->stream));
  CHECK_ACL(aclrtLaunchCallback(ProcessResult, a, ACL_CALLBACK_BLOCK, a->stream));
  CHECK_ACL(aclrtSynchronizeEvent(a->end));
  CHECK_ACL(aclrtEventElapsedTime(ms, a->start, a->end));
  CHECK_ACL(aclrtSynchronizeStream(a->stream)); /* the callback has run */
  if (a->cbError != ACL_SUCCESS) return acl_failed("aclrtMemcpy (in the callback)", a->cbError);
  aclTensorDesc *out = aclmdlGetDatasetTensorDesc(a->output, 0);
  if (!out || aclGetTensorDescDim(out, 0) != (int64_t)batch) {
    ERROR_LOG("the output's description does not have batch %zu", batch);
    return 1;
  }
  return 0;
}

static void Destroy(app *a) {
  if (a->subscribed) aclrtUnSubscribeReport((uint64_t)a->cbThread, a->stream);
  if (a->cbThreadStarted) {
    a->exitFlag = 1;
    pthread_join(a->cbThread, NULL);
  }
  for (int k = 0; k < 2; k++) {
    aclmdlDataset *d = k ? a->output : a->input;
    for (size_t i = 0; d && i < aclmdlGetDatasetNumBuffers(d); i++)
      aclDestroyDataBuffer(aclmdlGetDatasetBuffer(d, i));
    if (d) aclmdlDestroyDataset(d);
  }
  void *dev[3] = {a->inDev, a->dynDev, a->outDev};
  for (int i = 0; i < 3; i++)
    if (dev[i]) aclrtFree(dev[i]);
  if (a->hostImages) aclrtFreeHost(a->hostImages);
  if (a->hostOut) aclrtFreeHost(a->hostOut);
  if (a->desc) aclmdlDestroyDesc(a->desc);
  if (a->modelLoaded) aclmdlUnload(a->modelId);
  if (a->start) aclrtDestroyEvent(a->start);
  if (a->end) aclrtDestroyEvent(a->end);
  if (a->stream) aclrtDestroyStream(a->stream);
  if (a->context) aclrtDestroyContext(a->context);
  aclrtResetDevice(0);
  aclFinalize();
}

int main(int argc, char **argv) {
  if (argc != 3 && argc != 4) {
    fprintf(stderr, "usage: acl_batch MODEL.om IMAGE.bin [OUTPUT.bin]\n");
    return 2;
  }
  static app a;
  aclmdlBatch batches = {0};
  int rc = Init(&a) || Load(&a, argv[1]);
  if (!rc && aclmdlGetDynamicBatch(a.desc, &batches) != ACL_SUCCESS)
    rc = acl_failed("aclmdlGetDynamicBatch", 1);
  if (!rc && batches.batchCount == 0) {
    ERROR_LOG("the model has no dynamic batch (atc --dynamic_batch_size)");
    rc = 1;
  }
  if (!rc) rc = Buffers(&a, (size_t)batches.batch[batches.batchCount - 1]) || ReadImage(&a, argv[2]);
  int first = -1;
  for (size_t g = 0; !rc && g < batches.batchCount; g++) {
    size_t batch = (size_t)batches.batch[g];
    float ms = 0;
    rc = RunBatch(&a, batch, &ms);
    for (size_t b = 0; !rc && b < batch; b++) {
      if (first < 0) first = a.top[0];
      if (a.top[b] != first) {
        ERROR_LOG("batch %zu, image %zu: class %d, the first run's is %d", batch, b, a.top[b], first);
        rc = 1;
      }
    }
    if (!rc) INFO_LOG("batch %zu: class %d for every image, %.3f ms on the device", batch, first, ms);
  }
  if (!rc && argc == 4) {
    FILE *f = fopen(argv[3], "wb");
    size_t n = a.classes * sizeof(float);
    if (!f || fwrite(a.hostOut, 1, n, f) != n) rc = 1;
    if (f && fclose(f) != 0) rc = 1;
    if (rc) ERROR_LOG("cannot write %s", argv[3]);
  }
  Destroy(&a);
  INFO_LOG("%s", rc ? "failed" : "done");
  return rc;
}
