/* acl_dvpp.c - the Ascend 310 classification sample's preprocessing on the
 * media engine (DVPP), written from the public AscendCL documentation
 * against the public headers only: a JPEG file decoded by JPEGD, scaled by
 * VPC to the model's 224x224, and fed as it is (YUV420SP) to a model
 * compiled with a static AIPP that converts it to RGB and normalises it.
 * Every call's return code is checked, a failure's message printed, and
 * every resource released in the documented order on every path.
 *
 *   aclInit -> aclrtSetDevice -> aclrtCreateContext -> aclrtCreateStream
 *   -> aclmdlLoadFromFile -> aclmdlCreateDesc / aclmdlGetDesc
 *   -> acldvppCreateChannelDesc -> acldvppCreateChannel
 *   -> the JPEG into acldvppMalloc memory -> acldvppJpegGetImageInfo
 *   -> acldvppJpegPredictDecSize -> acldvppMalloc (decoded picture)
 *   -> acldvppCreatePicDesc (data, size, format) -> acldvppJpegDecodeAsync
 *   -> aclrtSynchronizeStream -> the decoded description's width, height,
 *      strides -> acldvppCreatePicDesc (224x224, strides 16 x 2 aligned)
 *   -> acldvppCreateResizeConfig -> acldvppVpcResizeAsync
 *   -> aclrtSynchronizeStream -> the VPC output as the model's input
 *      buffer -> aclmdlExecute -> the output to the host, top-1
 *   -> teardown: resize config, picture descriptions, acldvppFree, datasets,
 *      acldvppDestroyChannel, acldvppDestroyChannelDesc, aclmdlUnload,
 *      aclmdlDestroyDesc, aclrtDestroyStream, aclrtDestroyContext,
 *      aclrtResetDevice, aclFinalize.
 *
 *   acl_dvpp MODEL.om IMAGE.jpg OUT.bin
 *
 * Writes output 0 (float32) to OUT.bin and prints the top-1 class.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "acl/ops/acl_dvpp.h"

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

enum { MODEL_W = 224, MODEL_H = 224 };

typedef struct app {
  int deviceSet;
  aclrtContext context;
  aclrtStream stream;
  uint32_t modelId;
  int loaded;
  aclmdlDesc *desc;
  aclmdlDataset *in, *out;
  acldvppChannelDesc *channelDesc;
  int channelCreated;
  void *jpegHost, *jpegDev, *decodeDev, *resizeDev, *outHost;
  acldvppPicDesc *decodeDesc, *resizeDesc;
  acldvppResizeConfig *resizeConfig;
} app;

static uint32_t align_up(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

/* The JPEG file into acldvppMalloc memory (through a host buffer). */
static int load_jpeg(app *a, const char *path, uint32_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return fprintf(stderr, "[ERROR] cannot open %s\n", path), 1;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  if (n <= 0 || n > (1L << 30)) {
    fclose(f);
    return fprintf(stderr, "[ERROR] %s: bad size %ld\n", path, n), 1;
  }
  *size = (uint32_t)n;
  aclError ret = aclrtMallocHost(&a->jpegHost, *size);
  size_t got = ret == ACL_SUCCESS ? fread(a->jpegHost, 1, *size, f) : 0;
  fclose(f);
  if (ret != ACL_SUCCESS) return failed("aclrtMallocHost", ret);
  if (got != *size) return fprintf(stderr, "[ERROR] %s: short read\n", path), 1;
  CHECK(acldvppMalloc(&a->jpegDev, *size));
  CHECK(aclrtMemcpy(a->jpegDev, *size, a->jpegHost, *size, ACL_MEMCPY_HOST_TO_DEVICE));
  return 0;
}

/* A picture description of an acldvppMalloc buffer. */
static int describe(acldvppPicDesc **d, void *data, uint32_t size, uint32_t w, uint32_t h, uint32_t ws,
                    uint32_t hs) {
  if (!(*d = acldvppCreatePicDesc())) return failed("acldvppCreatePicDesc", ACL_ERROR_BAD_ALLOC);
  CHECK(acldvppSetPicDescData(*d, data));
  CHECK(acldvppSetPicDescSize(*d, size));
  CHECK(acldvppSetPicDescFormat(*d, PIXEL_FORMAT_YUV_SEMIPLANAR_420));
  if (w) {
    CHECK(acldvppSetPicDescWidth(*d, w));
    CHECK(acldvppSetPicDescHeight(*d, h));
    CHECK(acldvppSetPicDescWidthStride(*d, ws));
    CHECK(acldvppSetPicDescHeightStride(*d, hs));
  }
  return 0;
}

static int preprocess(app *a, const char *image) {
  uint32_t jpegSize = 0, width = 0, height = 0, decodeSize = 0;
  int32_t components = 0;
  if (load_jpeg(a, image, &jpegSize)) return 1;
  CHECK(acldvppJpegGetImageInfo(a->jpegDev, jpegSize, &width, &height, &components));
  CHECK(acldvppJpegPredictDecSize(a->jpegDev, jpegSize, PIXEL_FORMAT_YUV_SEMIPLANAR_420, &decodeSize));
  printf("%s: %ux%u, %d components, decodes to %u bytes\n", image, width, height, components, decodeSize);
  CHECK(acldvppMalloc(&a->decodeDev, decodeSize));
  if (describe(&a->decodeDesc, a->decodeDev, decodeSize, 0, 0, 0, 0)) return 1;
  CHECK(acldvppJpegDecodeAsync(a->channelDesc, a->jpegDev, jpegSize, a->decodeDesc, a->stream));
  CHECK(aclrtSynchronizeStream(a->stream));
  if (acldvppGetPicDescRetCode(a->decodeDesc) != 0)
    return fprintf(stderr, "[ERROR] JPEGD ret code %u\n", acldvppGetPicDescRetCode(a->decodeDesc)), 1;
  uint32_t dw = acldvppGetPicDescWidth(a->decodeDesc), dh = acldvppGetPicDescHeight(a->decodeDesc);
  printf("decoded: %ux%u, strides %ux%u\n", dw, dh, acldvppGetPicDescWidthStride(a->decodeDesc),
         acldvppGetPicDescHeightStride(a->decodeDesc));
  /* VPC's output: width stride a multiple of 16, height stride of 2, size stride x stride x 3 / 2 */
  uint32_t ws = align_up(MODEL_W, 16), hs = align_up(MODEL_H, 2), resizeSize = ws * hs * 3 / 2;
  CHECK(acldvppMalloc(&a->resizeDev, resizeSize));
  if (describe(&a->resizeDesc, a->resizeDev, resizeSize, MODEL_W, MODEL_H, ws, hs)) return 1;
  if (!(a->resizeConfig = acldvppCreateResizeConfig()))
    return failed("acldvppCreateResizeConfig", ACL_ERROR_BAD_ALLOC);
  CHECK(acldvppVpcResizeAsync(a->channelDesc, a->decodeDesc, a->resizeDesc, a->resizeConfig, a->stream));
  CHECK(aclrtSynchronizeStream(a->stream));
  if (acldvppGetPicDescRetCode(a->resizeDesc) != 0)
    return fprintf(stderr, "[ERROR] VPC ret code %u\n", acldvppGetPicDescRetCode(a->resizeDesc)), 1;
  return 0;
}

static int infer(app *a, const char *model, const char *image, const char *out_path) {
  CHECK(aclInit(NULL));
  CHECK(aclrtSetDevice(0));
  a->deviceSet = 1;
  CHECK(aclrtCreateContext(&a->context, 0));
  CHECK(aclrtCreateStream(&a->stream));
  CHECK(aclmdlLoadFromFile(model, &a->modelId));
  a->loaded = 1;
  if (!(a->desc = aclmdlCreateDesc())) return failed("aclmdlCreateDesc", ACL_ERROR_BAD_ALLOC);
  CHECK(aclmdlGetDesc(a->desc, a->modelId));
  if (!(a->channelDesc = acldvppCreateChannelDesc()))
    return failed("acldvppCreateChannelDesc", ACL_ERROR_BAD_ALLOC);
  CHECK(acldvppCreateChannel(a->channelDesc));
  a->channelCreated = 1;
  if (preprocess(a, image)) return 1;
  /* The model's AIPP input takes the VPC output as it is. */
  size_t inSize = aclmdlGetInputSizeByIndex(a->desc, 0), outSize = aclmdlGetOutputSizeByIndex(a->desc, 0);
  if (aclmdlGetNumInputs(a->desc) != 1 || inSize != acldvppGetPicDescSize(a->resizeDesc))
    return fprintf(stderr, "[ERROR] the model's input takes %zu bytes, VPC wrote %u\n", inSize,
                   acldvppGetPicDescSize(a->resizeDesc)),
           1;
  if (!(a->in = aclmdlCreateDataset()) || !(a->out = aclmdlCreateDataset()))
    return failed("aclmdlCreateDataset", ACL_ERROR_BAD_ALLOC);
  aclDataBuffer *inBuf = aclCreateDataBuffer(a->resizeDev, inSize);
  if (!inBuf) return failed("aclCreateDataBuffer", ACL_ERROR_BAD_ALLOC);
  aclError ret = aclmdlAddDatasetBuffer(a->in, inBuf);
  if (ret != ACL_SUCCESS) {
    aclDestroyDataBuffer(inBuf);
    return failed("aclmdlAddDatasetBuffer", ret);
  }
  void *outDev = NULL;
  CHECK(aclrtMalloc(&outDev, outSize, ACL_MEM_MALLOC_HUGE_FIRST));
  aclDataBuffer *outBuf = aclCreateDataBuffer(outDev, outSize);
  if (!outBuf) {
    aclrtFree(outDev);
    return failed("aclCreateDataBuffer", ACL_ERROR_BAD_ALLOC);
  }
  if ((ret = aclmdlAddDatasetBuffer(a->out, outBuf)) != ACL_SUCCESS) {
    aclDestroyDataBuffer(outBuf);
    aclrtFree(outDev);
    return failed("aclmdlAddDatasetBuffer", ret);
  }
  CHECK(aclmdlExecute(a->modelId, a->in, a->out));
  CHECK(aclrtMallocHost(&a->outHost, outSize));
  CHECK(aclrtMemcpy(a->outHost, outSize, outDev, outSize, ACL_MEMCPY_DEVICE_TO_HOST));
  if (aclmdlGetOutputDataType(a->desc, 0) != ACL_FLOAT)
    return fprintf(stderr, "[ERROR] output 0 is not float32\n"), 1;
  const float *scores = a->outHost;
  size_t best = 0, n = outSize / sizeof(float);
  for (size_t i = 1; i < n; i++)
    if (scores[i] > scores[best]) best = i;
  printf("top-1: class %zu, score %.4f\n", best, scores[best]);
  FILE *f = fopen(out_path, "wb");
  int ok = f && fwrite(a->outHost, 1, outSize, f) == outSize;
  if (f && fclose(f)) ok = 0;
  if (!ok) return fprintf(stderr, "[ERROR] cannot write %s\n", out_path), 1;
  return 0;
}

static void destroy_dataset(aclmdlDataset *d, int free_data) {
  if (!d) return;
  for (size_t i = 0; i < aclmdlGetDatasetNumBuffers(d); i++) {
    aclDataBuffer *b = aclmdlGetDatasetBuffer(d, i);
    if (free_data) aclrtFree(aclGetDataBufferAddr(b));
    aclDestroyDataBuffer(b);
  }
  aclmdlDestroyDataset(d);
}

/* Releases everything in the documented order; returns 1 if a release failed. */
static int teardown(app *a) {
  int bad = 0;
#define RELEASE(call)                                                                                        \
  do {                                                                                                       \
    aclError r_ = (call);                                                                                    \
    if (r_ != ACL_SUCCESS) bad |= failed(#call, r_);                                                         \
  } while (0)
  if (a->resizeConfig) RELEASE(acldvppDestroyResizeConfig(a->resizeConfig));
  if (a->resizeDesc) RELEASE(acldvppDestroyPicDesc(a->resizeDesc));
  if (a->decodeDesc) RELEASE(acldvppDestroyPicDesc(a->decodeDesc));
  destroy_dataset(a->in, 0); /* its buffer is the VPC output, freed below */
  destroy_dataset(a->out, 1);
  if (a->resizeDev) RELEASE(acldvppFree(a->resizeDev));
  if (a->decodeDev) RELEASE(acldvppFree(a->decodeDev));
  if (a->jpegDev) RELEASE(acldvppFree(a->jpegDev));
  if (a->jpegHost) RELEASE(aclrtFreeHost(a->jpegHost));
  if (a->outHost) RELEASE(aclrtFreeHost(a->outHost));
  if (a->channelCreated) RELEASE(acldvppDestroyChannel(a->channelDesc));
  if (a->channelDesc) RELEASE(acldvppDestroyChannelDesc(a->channelDesc));
  if (a->loaded) RELEASE(aclmdlUnload(a->modelId));
  if (a->desc) RELEASE(aclmdlDestroyDesc(a->desc));
  if (a->stream) RELEASE(aclrtDestroyStream(a->stream));
  if (a->context) RELEASE(aclrtDestroyContext(a->context));
  if (a->deviceSet) RELEASE(aclrtResetDevice(0));
  RELEASE(aclFinalize());
#undef RELEASE
  return bad;
}

int main(int argc, char **argv) {
  if (argc != 4) return fprintf(stderr, "usage: acl_dvpp MODEL.om IMAGE.jpg OUT.bin\n"), 2;
  app a = {0};
  int bad = infer(&a, argv[1], argv[2], argv[3]);
  bad |= teardown(&a);
  return bad;
}
