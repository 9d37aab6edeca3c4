/* acl_batch_aipp.c - dynamic AIPP on a batch, each image with its own
 * parameters, in the flow of the public documentation's dynamic-AIPP
 * sample, written as an application would be, against the public headers
 * only.
 *
 * The model (atc --insert_op_conf with aipp_mode: dynamic, --input_shape
 * with batch BATCH) takes BATCH raw RGB888 frames one after another and a
 * parameters input. The application has a float32 NCHW picture (IN.bin,
 * what one image of the model without AIPP is) and sends it BATCH times as
 * 8-bit pixels in frames of one size: image k places the picture at its
 * own place in the frame and quantises each channel over its own range, so
 * each image has its own crop window (aclmdlSetAIPPCropParams with
 * batchIndex k) and its own min and reciprocal of the variance undoing the
 * quantisation (aclmdlSetAIPPDtcPixelMin / aclmdlSetAIPPPixelVarReci with
 * batchIndex k); format, frame size, CSC and swaps are set once for the
 * batch. Flow: aclInit, aclrtSetDevice, aclmdlLoadFromFile, aclmdlGetDesc,
 * aclmdlGetInputIndexByName(ACL_DYNAMIC_AIPP_NAME), datasets of the
 * described sizes, aclmdlCreateAIPP(BATCH) and the aclmdlSetAIPP* calls,
 * aclmdlSetInputAIPP, aclmdlExecute, the output of image k written to
 * OUT_PREFIX<k>.bin, and the teardown.
 *
 *   acl_batch_aipp MODEL.om IN.bin HEIGHT WIDTH OUT_PREFIX
 *
 * HEIGHT x WIDTH: the picture the model takes (IN.bin: 3 x HEIGHT x WIDTH
 * float32); BATCH is the model's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"

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

enum { C = 3, MAX_BATCH = 8 };

typedef struct app {
  int deviceSet, loaded;
  uint32_t modelId;
  aclmdlDesc *desc;
  aclmdlDataset *in, *out;
  aclmdlAIPP *aipp;
  uint8_t *frames; /* host: BATCH frames */
  float *picture, *output;
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

static void free_dataset(aclmdlDataset *d) {
  if (!d) return;
  for (size_t i = 0; i < aclmdlGetDatasetNumBuffers(d); i++) {
    aclDataBuffer *b = aclmdlGetDatasetBuffer(d, i);
    aclrtFree(aclGetDataBufferAddr(b));
    aclDestroyDataBuffer(b);
  }
  aclmdlDestroyDataset(d);
}

/* Image k: the picture at (x0, y0) of its frame (fw x fh, background 40 k),
 * channel c quantised over the picture's range widened by 0.1 k; the
 * batch's shared parameters are set by the caller. */
static int image(app *a, int k, int32_t fw, int32_t fh, int64_t h, int64_t w) {
  const int32_t x0 = 7 * k, y0 = 5 * k;
  uint8_t *px = a->frames + (size_t)k * (size_t)fw * (size_t)fh * C;
  memset(px, 40 * k, (size_t)fw * (size_t)fh * C);
  const size_t plane = (size_t)(h * w);
  float minv[C], var[C];
  for (int c = 0; c < C; c++) {
    float lo = a->picture[c * plane], hi = lo;
    for (size_t i = 0; i < plane; i++) {
      float v = a->picture[c * plane + i];
      lo = v < lo ? v : lo, hi = v > hi ? v : hi;
    }
    lo -= 0.1f * (float)k, hi += 0.1f * (float)k;
    const float scale = (hi - lo) / 255.0f; /* pixel p stands for lo + p * scale = (p - min) * var */
    minv[c] = -lo / scale, var[c] = scale;
    for (int64_t y = 0; y < h; y++)
      for (int64_t x = 0; x < w; x++) {
        float q = roundf((a->picture[c * plane + (size_t)(y * w + x)] - lo) / scale);
        px[((size_t)(y0 + y) * (size_t)fw + (size_t)(x0 + x)) * C + (size_t)c] = (uint8_t)(q < 0     ? 0
                                                                                           : q > 255 ? 255
                                                                                                     : q);
      }
  }
  const uint64_t b = (uint64_t)k;
  CHECK(aclmdlSetAIPPCropParams(a->aipp, 1, x0, y0, (int32_t)w, (int32_t)h, b));
  CHECK(aclmdlSetAIPPPaddingParams(a->aipp, 0, 0, 0, 0, 0, b));
  CHECK(aclmdlSetAIPPDtcPixelMean(a->aipp, 0, 0, 0, 0, b));
  CHECK(aclmdlSetAIPPDtcPixelMin(a->aipp, minv[0], minv[1], minv[2], 0, b));
  CHECK(aclmdlSetAIPPPixelVarReci(a->aipp, var[0], var[1], var[2], 1.0f, b));
  printf("image %d: crop at (%d, %d), min %.2f %.2f %.2f, var_reci %.5f %.5f %.5f\n", k, x0, y0,
         (double)minv[0], (double)minv[1], (double)minv[2], (double)var[0], (double)var[1], (double)var[2]);
  return 0;
}

static int run(app *a, const char *model, const char *input, int64_t h, int64_t w, const char *prefix) {
  CHECK(aclInit(NULL));
  CHECK(aclrtSetDevice(0));
  a->deviceSet = 1;
  CHECK(aclmdlLoadFromFile(model, &a->modelId));
  a->loaded = 1;
  if (!(a->desc = aclmdlCreateDesc())) return failed("aclmdlCreateDesc", ACL_ERROR_BAD_ALLOC);
  CHECK(aclmdlGetDesc(a->desc, a->modelId));
  size_t params = 0, attached = 0;
  CHECK(aclmdlGetInputIndexByName(a->desc, ACL_DYNAMIC_AIPP_NAME, &params));
  aclmdlInputAippType type;
  CHECK(aclmdlGetAippType(a->modelId, 0, &type, &attached));
  if (type != ACL_DATA_WITH_DYNAMIC_AIPP || attached != params)
    return fprintf(stderr, "[ERROR] input 0 does not take dynamic AIPP\n"), 1;
  aclmdlIODims dims;
  CHECK(aclmdlGetInputDims(a->desc, params, &dims));
  const int batch = (int)dims.dims[0]; /* the parameters input: a record an image */
  if (dims.dimCount != 2 || batch < 2 || batch > MAX_BATCH)
    return fprintf(stderr, "[ERROR] the parameters input is not [BATCH, record] with BATCH 2..%d\n",
                   MAX_BATCH),
           1;
  size_t recs = 0;
  CHECK(aclmdlGetAippDataSize((uint64_t)batch, &recs));
  if (recs != aclmdlGetInputSizeByIndex(a->desc, params))
    return fprintf(stderr, "[ERROR] aclmdlGetAippDataSize(%d) %zu is not the input's size\n", batch, recs), 1;

  const size_t pic = (size_t)(C * h * w) * sizeof(float);
  if (!(a->picture = malloc(pic))) return fprintf(stderr, "[ERROR] out of memory\n"), 1;
  if (read_file(input, a->picture, pic)) return 1;
  /* One frame size for the batch (AIPP's image size is the batch's): room for every image's place. */
  const int32_t fw = (int32_t)w + 7 * (batch - 1), fh = (int32_t)h + 5 * (batch - 1);
  const size_t frame = (size_t)fw * (size_t)fh * C;
  if ((size_t)batch * frame > aclmdlGetInputSizeByIndex(a->desc, 0))
    return fprintf(stderr, "[ERROR] %d frames of %dx%d exceed the model's max_src_image_size\n", batch, fw,
                   fh),
           1;
  if (!(a->frames = calloc((size_t)batch, frame))) return fprintf(stderr, "[ERROR] out of memory\n"), 1;

  if (!(a->aipp = aclmdlCreateAIPP((uint64_t)batch))) return failed("aclmdlCreateAIPP", ACL_ERROR_BAD_ALLOC);
  CHECK(aclmdlSetAIPPInputFormat(a->aipp, ACL_RGB888_U8));
  CHECK(aclmdlSetAIPPCscParams(a->aipp, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
  CHECK(aclmdlSetAIPPRbuvSwapSwitch(a->aipp, 0));
  CHECK(aclmdlSetAIPPAxSwapSwitch(a->aipp, 0));
  CHECK(aclmdlSetAIPPSrcImageSize(a->aipp, fw, fh));
  for (int k = 0; k < batch; k++) {
    CHECK(aclmdlSetAIPPScfParams(a->aipp, 0, 0, 0, 0, 0, (uint64_t)k));
    if (image(a, k, fw, fh, h, w)) return 1;
  }

  if (!(a->in = aclmdlCreateDataset()) || !(a->out = aclmdlCreateDataset()))
    return failed("aclmdlCreateDataset", ACL_ERROR_BAD_ALLOC);
  for (size_t i = 0; i < aclmdlGetNumInputs(a->desc); i++)
    if (add_buffer(a->in, aclmdlGetInputSizeByIndex(a->desc, i))) return 1;
  const size_t out_bytes = aclmdlGetOutputSizeByIndex(a->desc, 0);
  if (add_buffer(a->out, out_bytes)) return 1;
  aclDataBuffer *img = aclmdlGetDatasetBuffer(a->in, 0);
  CHECK(aclrtMemcpy(aclGetDataBufferAddr(img), aclGetDataBufferSizeV2(img), a->frames, (size_t)batch * frame,
                    ACL_MEMCPY_HOST_TO_DEVICE));
  CHECK(aclmdlSetInputAIPP(a->modelId, a->in, params, a->aipp));
  CHECK(aclmdlExecute(a->modelId, a->in, a->out));

  if (!(a->output = malloc(out_bytes))) return fprintf(stderr, "[ERROR] out of memory\n"), 1;
  CHECK(aclrtMemcpy(a->output, out_bytes, aclGetDataBufferAddr(aclmdlGetDatasetBuffer(a->out, 0)), out_bytes,
                    ACL_MEMCPY_DEVICE_TO_HOST));
  const size_t per = out_bytes / (size_t)batch; /* image k's output */
  for (int k = 0; k < batch; k++) {
    char path[4096];
    snprintf(path, sizeof path, "%s%d.bin", prefix, k);
    FILE *f = fopen(path, "wb");
    int bad = !f || fwrite((const char *)a->output + (size_t)k * per, 1, per, f) != per;
    if ((f && fclose(f)) || bad) return fprintf(stderr, "[ERROR] cannot write %s\n", path), 1;
    const float *y = (const float *)((const char *)a->output + (size_t)k * per);
    size_t top = 0;
    for (size_t i = 1; i < per / sizeof *y; i++)
      if (y[i] > y[top]) top = i;
    printf("image %d: class %zu\n", k, top);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s MODEL.om IN.bin HEIGHT WIDTH OUT_PREFIX\n", argv[0]);
    return 2;
  }
  app a = {0};
  int rc = run(&a, argv[1], argv[2], atoll(argv[3]), atoll(argv[4]), argv[5]);
  if (a.aipp) aclmdlDestroyAIPP(a.aipp);
  free_dataset(a.in);
  free_dataset(a.out);
  if (a.desc) aclmdlDestroyDesc(a.desc);
  if (a.loaded) aclmdlUnload(a.modelId);
  if (a.deviceSet) aclrtResetDevice(0);
  aclFinalize();
  free(a.frames);
  free(a.picture);
  free(a.output);
  return rc;
}
