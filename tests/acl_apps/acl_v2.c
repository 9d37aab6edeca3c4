/* acl_v2.c - the model inference flow of the public documentation, with
 * the calls that describe a model before loading it and run it with a
 * configuration, written as an application would be, against the public
 * headers only:
 *
 *   aclInit -> aclrtSetDevice -> aclrtCreateContext -> aclrtCreateStream
 *   -> aclmdlGetDescFromFile (the inputs and outputs, before any load)
 *   -> aclmdlQuerySize -> aclrtMalloc (work, weights)
 *   -> aclmdlLoadFromFileWithMem
 *   -> datasets from the description; the dynamic AIPP parameters input
 *      sized with aclmdlGetAippDataSize, filled with aclmdlCreateAIPP /
 *      aclmdlSetAIPP* / aclmdlSetInputAIPP
 *   -> aclmdlCreateExecConfigHandle / aclmdlSetExecConfigOpt
 *      (ACL_MDL_STREAM_SYNC_TIMEOUT, ACL_MDL_EVENT_SYNC_TIMEOUT)
 *   -> aclrtMemcpy (the frame, host -> device) -> aclmdlExecuteV2 on the
 *      stream -> aclrtMemcpy (the output, device -> host)
 *   -> the documented teardown.
 *
 * The model (atc --insert_op_conf with aipp_mode: dynamic) takes raw RGB888
 * pixels; the application has a float32 NCHW tensor (IN.bin, what the
 * model without AIPP takes), quantises each channel over its range into
 * 8-bit pixels placed at (4, 2) of a larger frame, and gives AIPP the crop
 * and the per-channel min and reciprocal of the variance that undo the
 * quantisation. It writes OUT_DIR/output_0.bin (the output, float32) and,
 * for a second runner to take, OUT_DIR/input_<i>.bin: each input buffer as
 * the model read it (the frame, the parameters record).
 *
 *   acl_v2 MODEL.om IN.bin HEIGHT WIDTH OUT_DIR
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

enum { C = 3, X0 = 4, Y0 = 2, MARGIN_W = 6, MARGIN_H = 4 };

typedef struct app {
  int deviceSet;
  aclrtContext context;
  aclrtStream stream;
  aclmdlDesc *desc;
  void *work, *weight;
  uint32_t modelId;
  int loaded;
  aclmdlDataset *in, *out;
  aclmdlAIPP *aipp;
  aclmdlExecConfigHandle *config;
  float *tensor;
  void *host; /* staging for the frame, then for each buffer written out */
  size_t hostBytes;
} app;

static int read_file(const char *path, void *dst, size_t size) {
  FILE *f = fopen(path, "rb");
  size_t got = f ? fread(dst, 1, size, f) : 0;
  int extra = f && fgetc(f) != EOF;
  if (f) fclose(f);
  if (got != size || extra) return fprintf(stderr, "[ERROR] %s: needs exactly %zu bytes\n", path, size), 1;
  return 0;
}

/* The device buffer of size bytes behind buf, copied to OUT_DIR/name. */
static int write_buffer(app *a, const char *dir, const char *name, const aclDataBuffer *buf) {
  size_t bytes = aclGetDataBufferSizeV2(buf);
  if (bytes > a->hostBytes) return fprintf(stderr, "[ERROR] %s: larger than the staging buffer\n", name), 1;
  CHECK(aclrtMemcpy(a->host, a->hostBytes, aclGetDataBufferAddr(buf), bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  int bad = !f || fwrite(a->host, 1, bytes, f) != bytes;
  if (f && fclose(f)) bad = 1;
  if (bad) return fprintf(stderr, "[ERROR] cannot write %s\n", path), 1;
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

static int run(app *a, const char *model, const char *input, int64_t h, int64_t w, const char *dir) {
  CHECK(aclInit(NULL));
  CHECK(aclrtSetDevice(0));
  a->deviceSet = 1;
  CHECK(aclrtCreateContext(&a->context, 0));
  CHECK(aclrtCreateStream(&a->stream));

  /* the model's inputs and outputs, before loading it */
  if (!(a->desc = aclmdlCreateDesc())) return failed("aclmdlCreateDesc", ACL_ERROR_BAD_ALLOC);
  CHECK(aclmdlGetDescFromFile(a->desc, model));
  size_t params = 0, image = 0;
  CHECK(aclmdlGetInputIndexByName(a->desc, ACL_DYNAMIC_AIPP_NAME, &params));
  image = params == 0 ? 1 : 0;
  if (aclmdlGetNumInputs(a->desc) != 2 || aclmdlGetNumOutputs(a->desc) != 1 ||
      aclmdlGetOutputDataType(a->desc, 0) != ACL_FLOAT)
    return fprintf(stderr,
                   "[ERROR] this application takes an image, its AIPP parameters, one float output\n"),
           1;
  LOG("described from the file: image input %zu '%s' (%zu bytes), parameters input %zu, output '%s' (%zu "
      "bytes)",
      image, aclmdlGetInputNameByIndex(a->desc, image), aclmdlGetInputSizeByIndex(a->desc, image), params,
      aclmdlGetOutputNameByIndex(a->desc, 0), aclmdlGetOutputSizeByIndex(a->desc, 0));

  /* loaded in the application's work and weight memory */
  size_t workSize = 0, weightSize = 0;
  CHECK(aclmdlQuerySize(model, &workSize, &weightSize));
  CHECK(aclrtMalloc(&a->work, workSize ? workSize : 1, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMalloc(&a->weight, weightSize ? weightSize : 1, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclmdlLoadFromFileWithMem(model, &a->modelId, a->work, workSize ? workSize : 1, a->weight,
                                  weightSize ? weightSize : 1));
  a->loaded = 1;
  LOG("loaded: model %u, work %zu bytes, weights %zu bytes", a->modelId, workSize, weightSize);

  /* the frame: the tensor quantised per channel, at (X0, Y0) of a larger frame */
  int32_t fw = (int32_t)w + MARGIN_W, fh = (int32_t)h + MARGIN_H;
  size_t frameBytes = (size_t)fw * (size_t)fh * C, plane = (size_t)(h * w);
  size_t imageBytes = aclmdlGetInputSizeByIndex(a->desc, image);
  if (frameBytes > imageBytes)
    return fprintf(stderr, "[ERROR] the frame is larger than the image input\n"), 1;
  if (!(a->tensor = malloc(plane * C * sizeof(float)))) return fprintf(stderr, "[ERROR] out of memory\n"), 1;
  if (read_file(input, a->tensor, plane * C * sizeof(float))) return 1;
  a->hostBytes = imageBytes > aclmdlGetOutputSizeByIndex(a->desc, 0) ? imageBytes
                                                                     : aclmdlGetOutputSizeByIndex(a->desc, 0);
  CHECK(aclrtMallocHost(&a->host, a->hostBytes));
  memset(a->host, 0, a->hostBytes);
  uint8_t *px = a->host;
  float minv[C], var[C];
  for (int c = 0; c < C; c++) {
    float lo = a->tensor[c * plane], hi = lo;
    for (size_t i = 0; i < plane; i++) {
      float v = a->tensor[c * plane + i];
      lo = v < lo ? v : lo, hi = v > hi ? v : hi;
    }
    float scale = (hi - lo) / 255.0f; /* pixel p stands for lo + p * scale = (p - min) * var */
    minv[c] = -lo / scale, var[c] = scale;
    for (int64_t y = 0; y < h; y++)
      for (int64_t x = 0; x < w; x++) {
        float q = roundf((a->tensor[c * plane + (size_t)(y * w + x)] - lo) / scale);
        px[((size_t)(Y0 + y) * (size_t)fw + (size_t)(X0 + x)) * C + (size_t)c] = (uint8_t)(q < 0     ? 0
                                                                                           : q > 255 ? 255
                                                                                                     : q);
      }
  }

  /* the datasets: the image buffer from the description, the parameters
   * buffer of aclmdlGetAippDataSize bytes for a batch of 1 */
  size_t aippBytes = 0;
  CHECK(aclmdlGetAippDataSize(1, &aippBytes));
  if (!(a->in = aclmdlCreateDataset()) || !(a->out = aclmdlCreateDataset()))
    return failed("aclmdlCreateDataset", ACL_ERROR_BAD_ALLOC);
  for (size_t i = 0; i < 2; i++)
    if (add_buffer(a->in, i == params ? aippBytes : imageBytes)) return 1;
  if (add_buffer(a->out, aclmdlGetOutputSizeByIndex(a->desc, 0))) return 1;
  aclDataBuffer *frame = aclmdlGetDatasetBuffer(a->in, image);
  CHECK(aclrtMemcpy(aclGetDataBufferAddr(frame), aclGetDataBufferSizeV2(frame), a->host, imageBytes,
                    ACL_MEMCPY_HOST_TO_DEVICE));
  if (!(a->aipp = aclmdlCreateAIPP(1))) return failed("aclmdlCreateAIPP", ACL_ERROR_BAD_ALLOC);
  CHECK(aclmdlSetAIPPInputFormat(a->aipp, ACL_RGB888_U8));
  CHECK(aclmdlSetAIPPCscParams(a->aipp, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
  CHECK(aclmdlSetAIPPSrcImageSize(a->aipp, fw, fh));
  CHECK(aclmdlSetAIPPCropParams(a->aipp, 1, X0, Y0, (int32_t)w, (int32_t)h, 0));
  CHECK(aclmdlSetAIPPDtcPixelMean(a->aipp, 0, 0, 0, 0, 0));
  CHECK(aclmdlSetAIPPDtcPixelMin(a->aipp, minv[0], minv[1], minv[2], 0, 0));
  CHECK(aclmdlSetAIPPPixelVarReci(a->aipp, var[0], var[1], var[2], 1.0f, 0));
  CHECK(aclmdlSetInputAIPP(a->modelId, a->in, params, a->aipp));
  LOG("%dx%d frame, crop at (%d, %d); AIPP parameters: %zu bytes", fw, fh, X0, Y0, aippBytes);

  /* the run, on the stream, waited for at most a minute */
  if (!(a->config = aclmdlCreateExecConfigHandle()))
    return failed("aclmdlCreateExecConfigHandle", ACL_ERROR_BAD_ALLOC);
  int32_t streamTimeout = 60000, eventTimeout = -1;
  CHECK(aclmdlSetExecConfigOpt(a->config, ACL_MDL_STREAM_SYNC_TIMEOUT, &streamTimeout, sizeof streamTimeout));
  CHECK(aclmdlSetExecConfigOpt(a->config, ACL_MDL_EVENT_SYNC_TIMEOUT, &eventTimeout, sizeof eventTimeout));
  CHECK(aclmdlExecuteV2(a->modelId, a->in, a->out, a->stream, a->config));

  if (write_buffer(a, dir, "output_0.bin", aclmdlGetDatasetBuffer(a->out, 0))) return 1;
  const float *y = a->host;
  size_t top = 0, n = aclmdlGetOutputSizeByIndex(a->desc, 0) / sizeof *y;
  for (size_t i = 1; i < n; i++)
    if (y[i] > y[top]) top = i;
  LOG("class %zu", top);
  for (size_t i = 0; i < 2; i++) {
    char name[64];
    snprintf(name, sizeof name, "input_%zu.bin", i);
    if (write_buffer(a, dir, name, aclmdlGetDatasetBuffer(a->in, i))) return 1;
  }
  return 0;
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
  if (a->config) STEP(aclmdlDestroyExecConfigHandle(a->config));
  if (a->aipp) STEP(aclmdlDestroyAIPP(a->aipp));
  destroy_dataset(a->in);
  destroy_dataset(a->out);
  if (a->loaded) STEP(aclmdlUnload(a->modelId));
  if (a->work) STEP(aclrtFree(a->work));
  if (a->weight) STEP(aclrtFree(a->weight));
  if (a->desc) STEP(aclmdlDestroyDesc(a->desc));
  if (a->host) STEP(aclrtFreeHost(a->host));
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
    fprintf(stderr, "usage: %s MODEL.om IN.bin HEIGHT WIDTH OUT_DIR\n", argv[0]);
    return 2;
  }
  int64_t h = atoll(argv[3]), w = atoll(argv[4]);
  if (h < 1 || w < 1 || h > 4096 || w > 4096)
    return fprintf(stderr, "[ERROR] a %lldx%lld picture\n", (long long)h, (long long)w), 2;
  static app a;
  int bad = run(&a, argv[1], argv[2], h, w, argv[5]);
  bad |= teardown(&a);
  LOG("%s", bad ? "FAILED" : "done");
  return bad;
}
