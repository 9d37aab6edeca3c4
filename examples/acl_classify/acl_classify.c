/* acl_classify.c - image classification with AscendCL, laid out as Ascend's
 * samples are: initialise the runtime (device, context, stream), load the
 * model into memory the application manages (query its sizes, allocate
 * work and weight memory on the device), describe it, build the input and
 * output datasets from device buffers, copy the input in, execute, copy the
 * output back, print the top-5 classes, and release everything in reverse
 * order. It uses AscendCL only: built against the CANN headers it runs on
 * an Ascend card; built against these, on the software NPU.
 *
 *   cc acl_classify.c -I<prefix>/include -L<prefix>/lib -lascendcl -o acl_classify
 *   ./acl_classify resnet50.om input.bin [output.bin]
 *
 * input.bin is the model's input tensor as raw bytes (e.g. float32 NCHW);
 * output.bin, when given, receives the first output tensor.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"

#define INFO_LOG(fmt, ...) fprintf(stdout, "[INFO]  " fmt "\n", ##__VA_ARGS__)
#define ERROR_LOG(fmt, ...) fprintf(stderr, "[ERROR] " fmt "\n", ##__VA_ARGS__)

/* Logs a failed AscendCL call with its code and message; returns 1. */
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

typedef struct resources {
  int32_t deviceId;
  int deviceSet;
  aclrtContext context;
  aclrtStream stream;
  aclrtRunMode runMode;
  uint32_t modelId;
  int modelLoaded;
  void *workPtr, *weightPtr;
  size_t workSize, weightSize;
  aclmdlDesc *modelDesc;
  aclmdlDataset *input, *output;
} resources;

static int InitResource(resources *r) {
  CHECK_ACL(aclInit(NULL));
  CHECK_ACL(aclrtSetDevice(r->deviceId));
  r->deviceSet = 1;
  CHECK_ACL(aclrtCreateContext(&r->context, r->deviceId));
  CHECK_ACL(aclrtCreateStream(&r->stream));
  CHECK_ACL(aclrtGetRunMode(&r->runMode));
  INFO_LOG("device %d ready, run mode %s", r->deviceId, r->runMode == ACL_HOST ? "host" : "device");
  return 0;
}

static int LoadModel(resources *r, const char *path) {
  CHECK_ACL(aclmdlQuerySize(path, &r->workSize, &r->weightSize));
  CHECK_ACL(aclrtMalloc(&r->workPtr, r->workSize, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMalloc(&r->weightPtr, r->weightSize, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(
      aclmdlLoadFromFileWithMem(path, &r->modelId, r->workPtr, r->workSize, r->weightPtr, r->weightSize));
  r->modelLoaded = 1;
  r->modelDesc = aclmdlCreateDesc();
  if (!r->modelDesc) return acl_failed("aclmdlCreateDesc", ACL_ERROR_BAD_ALLOC);
  CHECK_ACL(aclmdlGetDesc(r->modelDesc, r->modelId));
  INFO_LOG("loaded %s: model %u, work %zu bytes, weights %zu bytes", path, r->modelId, r->workSize,
           r->weightSize);
  return 0;
}

/* A dataset of one device buffer per model input (is_input) or output. */
static int CreateDataset(resources *r, int is_input, aclmdlDataset **out) {
  aclmdlDataset *d = aclmdlCreateDataset();
  if (!d) return acl_failed("aclmdlCreateDataset", ACL_ERROR_BAD_ALLOC);
  *out = d;
  size_t n = is_input ? aclmdlGetNumInputs(r->modelDesc) : aclmdlGetNumOutputs(r->modelDesc);
  for (size_t i = 0; i < n; i++) {
    size_t size =
        is_input ? aclmdlGetInputSizeByIndex(r->modelDesc, i) : aclmdlGetOutputSizeByIndex(r->modelDesc, i);
    void *dev = NULL;
    CHECK_ACL(aclrtMalloc(&dev, size, ACL_MEM_MALLOC_NORMAL_ONLY));
    aclDataBuffer *buf = aclCreateDataBuffer(dev, size);
    if (!buf) {
      aclrtFree(dev);
      return acl_failed("aclCreateDataBuffer", ACL_ERROR_BAD_ALLOC);
    }
    if (aclmdlAddDatasetBuffer(d, buf) != ACL_SUCCESS) {
      aclrtFree(dev);
      aclDestroyDataBuffer(buf);
      return acl_failed("aclmdlAddDatasetBuffer", ACL_ERROR_INVALID_PARAM);
    }
    aclmdlIODims dims;
    CHECK_ACL(is_input ? aclmdlGetInputDims(r->modelDesc, i, &dims)
                       : aclmdlGetOutputDims(r->modelDesc, i, &dims));
    aclDataType dt =
        is_input ? aclmdlGetInputDataType(r->modelDesc, i) : aclmdlGetOutputDataType(r->modelDesc, i);
    char shape[256] = "";
    for (size_t k = 0, len = 0; k < dims.dimCount && len < sizeof shape; k++)
      len +=
          (size_t)snprintf(shape + len, sizeof shape - len, "%s%lld", k ? "," : "", (long long)dims.dims[k]);
    INFO_LOG("%s %zu: %s [%s] data type %d, %zu bytes", is_input ? "input" : "output", i, dims.name, shape,
             (int)dt, size);
  }
  return 0;
}

/* Reads the input file into host memory and copies it to the input buffer. */
static int ProcessInput(resources *r, const char *path) {
  if (aclmdlGetNumInputs(r->modelDesc) != 1) {
    ERROR_LOG("this sample feeds one input; the model has %zu", aclmdlGetNumInputs(r->modelDesc));
    return 1;
  }
  aclDataBuffer *buf = aclmdlGetDatasetBuffer(r->input, 0);
  size_t size = aclGetDataBufferSizeV2(buf);
  void *host = NULL;
  CHECK_ACL(aclrtMallocHost(&host, size));
  FILE *f = fopen(path, "rb");
  size_t got = f ? fread(host, 1, size, f) : 0;
  int extra = f ? fgetc(f) != EOF : 0;
  if (f) fclose(f);
  if (got != size || extra) {
    ERROR_LOG("%s: expected exactly %zu bytes (the model's input '%s')", path, size,
              aclmdlGetInputNameByIndex(r->modelDesc, 0));
    aclrtFreeHost(host);
    return 1;
  }
  aclrtMemcpyKind kind = r->runMode == ACL_HOST ? ACL_MEMCPY_HOST_TO_DEVICE : ACL_MEMCPY_DEVICE_TO_DEVICE;
  aclError ret = aclrtMemcpy(aclGetDataBufferAddr(buf), size, host, size, kind);
  aclrtFreeHost(host);
  return ret == ACL_SUCCESS ? 0 : acl_failed("aclrtMemcpy (input)", ret);
}

/* Copies the first output back, prints the top-5 classes, writes it to
 * out_path when given. */
static int ProcessOutput(resources *r, const char *out_path) {
  aclDataBuffer *buf = aclmdlGetDatasetBuffer(r->output, 0);
  size_t size = aclGetDataBufferSizeV2(buf);
  if (aclmdlGetOutputDataType(r->modelDesc, 0) != ACL_FLOAT) {
    ERROR_LOG("output 0 is not float32");
    return 1;
  }
  float *host = NULL;
  CHECK_ACL(aclrtMallocHost((void **)&host, size));
  aclrtMemcpyKind kind = r->runMode == ACL_HOST ? ACL_MEMCPY_DEVICE_TO_HOST : ACL_MEMCPY_DEVICE_TO_DEVICE;
  aclError ret = aclrtMemcpy(host, size, aclGetDataBufferAddr(buf), size, kind);
  if (ret != ACL_SUCCESS) {
    aclrtFreeHost(host);
    return acl_failed("aclrtMemcpy (output)", ret);
  }
  int rc = 0;
  if (out_path) {
    FILE *f = fopen(out_path, "wb");
    if (!f || fwrite(host, 1, size, f) != size) rc = 1;
    if (f && fclose(f) != 0) rc = 1;
    if (rc) ERROR_LOG("cannot write %s", out_path);
  }
  size_t n = size / sizeof(float);
  int top[5] = {-1, -1, -1, -1, -1};
  for (size_t i = 0; i < n; i++) /* insertion into the top 5 */
    for (int k = 0; k < 5; k++)
      if (top[k] < 0 || host[i] > host[top[k]]) {
        memmove(top + k + 1, top + k, (size_t)(4 - k) * sizeof *top);
        top[k] = (int)i;
        break;
      }
  for (int k = 0; k < 5 && top[k] >= 0; k++)
    INFO_LOG("top %d: class %d, score %.5f", k + 1, top[k], host[top[k]]);
  aclrtFreeHost(host);
  return rc;
}

static void DestroyDataset(aclmdlDataset *d) {
  if (!d) return;
  for (size_t i = 0; i < aclmdlGetDatasetNumBuffers(d); i++) {
    aclDataBuffer *buf = aclmdlGetDatasetBuffer(d, i);
    aclrtFree(aclGetDataBufferAddr(buf));
    aclDestroyDataBuffer(buf);
  }
  aclmdlDestroyDataset(d);
}

static void DestroyResource(resources *r) {
  DestroyDataset(r->input);
  DestroyDataset(r->output);
  if (r->modelDesc) aclmdlDestroyDesc(r->modelDesc);
  if (r->modelLoaded) aclmdlUnload(r->modelId);
  if (r->workPtr) aclrtFree(r->workPtr);
  if (r->weightPtr) aclrtFree(r->weightPtr);
  if (r->stream) aclrtDestroyStream(r->stream);
  if (r->context) aclrtDestroyContext(r->context);
  if (r->deviceSet) aclrtResetDevice(r->deviceId);
  aclFinalize();
}

int main(int argc, char **argv) {
  if (argc != 3 && argc != 4) {
    fprintf(stderr, "usage: acl_classify MODEL.om INPUT.bin [OUTPUT.bin]\n");
    return 2;
  }
  resources r = {0};
  int rc = InitResource(&r) || LoadModel(&r, argv[1]) || CreateDataset(&r, 1, &r.input) ||
           CreateDataset(&r, 0, &r.output) || ProcessInput(&r, argv[2]);
  if (!rc) {
    aclError ret = aclmdlExecute(r.modelId, r.input, r.output);
    rc =
        ret == ACL_SUCCESS ? ProcessOutput(&r, argc == 4 ? argv[3] : NULL) : acl_failed("aclmdlExecute", ret);
  }
  DestroyResource(&r);
  INFO_LOG("%s", rc ? "failed" : "done");
  return rc;
}
