/* acl_sync.c - the synchronous AscendCL flow as the public documentation
 * lays it out, written as an application would be, against the public
 * headers only: every call's return code checked, the message of a failure
 * printed, and every resource released in the documented order on every
 * path.
 *
 *   aclInit -> aclrtSetDevice -> aclrtCreateContext -> aclrtCreateStream
 *   -> aclmdlQuerySize -> aclrtMalloc (work, weights)
 *   -> aclmdlLoadFromFileWithMem -> aclmdlCreateDesc / aclmdlGetDesc
 *   -> per input / output: its size, dims, dims range, data type, format,
 *      index by name; a device buffer in a dataset
 *   -> aclrtMemcpy host -> device -> aclmdlExecute (twice: the datasets
 *      are reused) -> aclmdlGetCurOutputDims -> aclrtMemcpy device -> host
 *   -> teardown: datasets and buffers, aclmdlUnload, work and weight
 *      memory, aclmdlDestroyDesc, aclrtDestroyStream, aclrtDestroyContext,
 *      aclrtResetDevice, aclFinalize.
 *
 *   acl_sync MODEL.om OUT_PREFIX IN0.bin [IN1.bin ...]
 *
 * Each INi.bin holds input i's bytes exactly; output i is written to
 * OUT_PREFIX<i>.bin, as many bytes as its current dims say. Exit 0 when
 * every call succeeded and the two runs agree byte for byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"

#define LOG(...) (printf(__VA_ARGS__), putchar('\n'))

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

enum { MAX_IO = 16 };

typedef struct app {
  int deviceSet;
  aclrtContext context;
  aclrtStream stream;
  uint32_t modelId;
  int loaded;
  void *work, *weight;
  size_t workSize, weightSize;
  aclmdlDesc *desc;
  aclmdlDataset *in, *out;
  void *host[MAX_IO];
} app;

/* Reads exactly `size` bytes of `path` into host memory from aclrtMallocHost. */
static int read_input(const char *path, size_t size, void **host) {
  CHECK(aclrtMallocHost(host, size));
  FILE *f = fopen(path, "rb");
  size_t got = f ? fread(*host, 1, size, f) : 0;
  int extra = f && fgetc(f) != EOF;
  if (f) fclose(f);
  if (got != size || extra) {
    fprintf(stderr, "[ERROR] %s: the input needs exactly %zu bytes\n", path, size);
    return 1;
  }
  return 0;
}

/* A dataset of device buffers, one per input (is_input) or output. */
static int make_dataset(app *a, int is_input, aclmdlDataset **out) {
  if (!(*out = aclmdlCreateDataset())) return failed("aclmdlCreateDataset", ACL_ERROR_BAD_ALLOC);
  size_t n = is_input ? aclmdlGetNumInputs(a->desc) : aclmdlGetNumOutputs(a->desc);
  if (n > MAX_IO) return fprintf(stderr, "[ERROR] more than %d inputs or outputs\n", MAX_IO), 1;
  for (size_t i = 0; i < n; i++) {
    size_t size = is_input ? aclmdlGetInputSizeByIndex(a->desc, i) : aclmdlGetOutputSizeByIndex(a->desc, i);
    if (size == 0) return failed("aclmdlGet*SizeByIndex", ACL_ERROR_INVALID_PARAM);
    void *dev = NULL;
    CHECK(aclrtMalloc(&dev, size, ACL_MEM_MALLOC_HUGE_FIRST));
    aclDataBuffer *buf = aclCreateDataBuffer(dev, size);
    if (!buf) {
      aclrtFree(dev);
      return failed("aclCreateDataBuffer", ACL_ERROR_BAD_ALLOC);
    }
    aclError ret = aclmdlAddDatasetBuffer(*out, buf);
    if (ret != ACL_SUCCESS) {
      aclDestroyDataBuffer(buf);
      aclrtFree(dev);
      return failed("aclmdlAddDatasetBuffer", ret);
    }
    aclmdlIODims dims;
    CHECK(is_input ? aclmdlGetInputDims(a->desc, i, &dims) : aclmdlGetOutputDims(a->desc, i, &dims));
    const char *name =
        is_input ? aclmdlGetInputNameByIndex(a->desc, i) : aclmdlGetOutputNameByIndex(a->desc, i);
    size_t at = n;
    CHECK(is_input ? aclmdlGetInputIndexByName(a->desc, name, &at)
                   : aclmdlGetOutputIndexByName(a->desc, name, &at));
    aclDataType dt = is_input ? aclmdlGetInputDataType(a->desc, i) : aclmdlGetOutputDataType(a->desc, i);
    aclFormat fmt = is_input ? aclmdlGetInputFormat(a->desc, i) : aclmdlGetOutputFormat(a->desc, i);
    size_t elems = 1;
    for (size_t k = 0; k < dims.dimCount; k++)
      elems *= (size_t)dims.dims[k];
    if (at != i || elems * aclDataTypeSize(dt) != size || fmt == ACL_FORMAT_UNDEFINED) {
      fprintf(stderr,
              "[ERROR] %s %zu '%s': index by name %zu, %zu elements of %zu bytes for %zu bytes, format %d\n",
              is_input ? "input" : "output", i, name, at, elems, aclDataTypeSize(dt), size, (int)fmt);
      return 1;
    }
    if (is_input) { /* a static model: each dim's range is the dim itself */
      aclmdlIODimsRange range;
      CHECK(aclmdlGetInputDimsRange(a->desc, i, &range));
      for (size_t k = 0; k < range.rangeCount; k++)
        if (range.rangeCount != dims.dimCount || range.range[k][0] != dims.dims[k] ||
            range.range[k][1] != dims.dims[k])
          return fprintf(stderr, "[ERROR] input %zu: dim %zu's range does not match its dims\n", i, k), 1;
    }
    LOG("%s %zu '%s': %zu dims, data type %d, format %d, %zu bytes", is_input ? "input" : "output", i, name,
        dims.dimCount, (int)dt, (int)fmt, size);
  }
  return 0;
}

/* Copies output i back as its current dims say and writes it to prefix<i>.bin. */
static int fetch_output(app *a, size_t i, const char *prefix, void **host, size_t *bytes) {
  aclmdlIODims dims;
  CHECK(aclmdlGetCurOutputDims(a->desc, i, &dims));
  size_t n = aclDataTypeSize(aclmdlGetOutputDataType(a->desc, i));
  for (size_t k = 0; k < dims.dimCount; k++)
    n *= (size_t)dims.dims[k];
  aclDataBuffer *buf = aclmdlGetDatasetBuffer(a->out, i);
  if (!buf || n > aclGetDataBufferSizeV2(buf)) return fprintf(stderr, "[ERROR] output %zu: bad size\n", i), 1;
  *bytes = n;
  CHECK(aclrtMallocHost(host, n ? n : 1));
  if (n) CHECK(aclrtMemcpy(*host, n, aclGetDataBufferAddr(buf), n, ACL_MEMCPY_DEVICE_TO_HOST));
  char path[4096];
  snprintf(path, sizeof path, "%s%zu.bin", prefix, i);
  FILE *f = fopen(path, "wb");
  int ok = f && fwrite(*host, 1, n, f) == n;
  if (f && fclose(f)) ok = 0;
  if (!ok) return fprintf(stderr, "[ERROR] cannot write %s\n", path), 1;
  LOG("output %zu: %zu bytes -> %s", i, n, path);
  return 0;
}

static int run(app *a, const char *model, const char *prefix, int nfiles, char **files) {
  CHECK(aclInit(NULL));
  CHECK(aclrtSetDevice(0));
  a->deviceSet = 1;
  CHECK(aclrtCreateContext(&a->context, 0));
  CHECK(aclrtCreateStream(&a->stream));
  aclrtRunMode mode;
  CHECK(aclrtGetRunMode(&mode));
  CHECK(aclmdlQuerySize(model, &a->workSize, &a->weightSize));
  if (a->workSize) CHECK(aclrtMalloc(&a->work, a->workSize, ACL_MEM_MALLOC_HUGE_FIRST));
  if (a->weightSize) CHECK(aclrtMalloc(&a->weight, a->weightSize, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclmdlLoadFromFileWithMem(model, &a->modelId, a->work, a->workSize, a->weight, a->weightSize));
  a->loaded = 1;
  if (!(a->desc = aclmdlCreateDesc())) return failed("aclmdlCreateDesc", ACL_ERROR_BAD_ALLOC);
  CHECK(aclmdlGetDesc(a->desc, a->modelId));
  if ((size_t)nfiles != aclmdlGetNumInputs(a->desc))
    return fprintf(stderr, "[ERROR] %d input files for %zu inputs\n", nfiles, aclmdlGetNumInputs(a->desc)), 1;
  if (make_dataset(a, 1, &a->in) || make_dataset(a, 0, &a->out)) return 1;
  aclrtMemcpyKind h2d = mode == ACL_HOST ? ACL_MEMCPY_HOST_TO_DEVICE : ACL_MEMCPY_DEVICE_TO_DEVICE;
  for (int i = 0; i < nfiles; i++) {
    aclDataBuffer *buf = aclmdlGetDatasetBuffer(a->in, (size_t)i);
    size_t size = aclGetDataBufferSizeV2(buf);
    if (read_input(files[i], size, &a->host[i])) return 1;
    CHECK(aclrtMemcpy(aclGetDataBufferAddr(buf), size, a->host[i], size, h2d));
  }
  size_t nout = aclmdlGetNumOutputs(a->desc);
  void *first[MAX_IO] = {0};
  size_t first_bytes[MAX_IO] = {0};
  int bad = 0;
  for (int pass = 0; pass < 2 && !bad; pass++) {
    CHECK(aclmdlExecute(a->modelId, a->in, a->out));
    for (size_t i = 0; i < nout && !bad; i++) {
      void *host = NULL;
      size_t bytes = 0;
      bad = fetch_output(a, i, prefix, &host, &bytes);
      if (!bad && pass == 1 && (bytes != first_bytes[i] || memcmp(host, first[i], bytes) != 0)) {
        fprintf(stderr, "[ERROR] output %zu differs between two runs on the same input\n", i);
        bad = 1;
      }
      if (pass == 0) {
        first[i] = host, first_bytes[i] = bytes;
      } else if (host) {
        aclrtFreeHost(host);
      }
    }
  }
  for (size_t i = 0; i < nout; i++)
    if (first[i]) aclrtFreeHost(first[i]);
  if (!bad) LOG("ran model %u twice: outputs identical", a->modelId);
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

/* The documented teardown, each step checked; returns 1 when one failed. */
static int teardown(app *a) {
  int bad = 0;
#define STEP(call)                                                                                           \
  do {                                                                                                       \
    aclError ret_ = (call);                                                                                  \
    if (ret_ != ACL_SUCCESS) bad |= failed(#call, ret_);                                                     \
  } while (0)
  for (int i = 0; i < MAX_IO; i++)
    if (a->host[i]) STEP(aclrtFreeHost(a->host[i]));
  destroy_dataset(a->in);
  destroy_dataset(a->out);
  if (a->loaded) STEP(aclmdlUnload(a->modelId));
  if (a->work) STEP(aclrtFree(a->work));
  if (a->weight) STEP(aclrtFree(a->weight));
  if (a->desc) STEP(aclmdlDestroyDesc(a->desc));
  if (a->stream) STEP(aclrtDestroyStream(a->stream));
  if (a->context) STEP(aclrtDestroyContext(a->context));
  if (a->deviceSet) STEP(aclrtResetDevice(0));
  STEP(aclFinalize());
#undef STEP
  return bad;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s MODEL.om OUT_PREFIX IN0.bin [IN1.bin ...]\n", argv[0]);
    return 2;
  }
  app a = {0};
  int bad = run(&a, argv[1], argv[2], argc - 3, argv + 3);
  bad |= teardown(&a);
  LOG("%s", bad ? "FAILED" : "done");
  return bad;
}
