/* acl_threads.c - a detection model with image size gears (atc
 * --dynamic_image_size), loaded once into the application's own memory and
 * run by two worker threads, written from AscendCL's public documentation
 * (the multi-thread flow, the dynamic image size flow of the detection
 * samples, the model query calls) against the public headers only: every
 * return code checked, a failure's message printed, every resource released
 * in the documented order.
 *
 *   main:   aclInit(acl.json) -> aclrtSetDevice -> aclrtCreateContext ->
 *           aclrtGetRunMode -> aclmdlQuerySize -> aclrtMalloc (work,
 *           weights) -> aclmdlLoadFromFileWithMem -> aclmdlGetDesc -> the
 *           queries (inputs, outputs, names and indexes both ways, real
 *           names, dims with -1 where the gears vary, format, data type,
 *           the gears: aclmdlGetDynamicHW) -> two workers -> aclmdlUnload ->
 *           free work and weights -> aclmdlDestroyDesc ->
 *           aclrtDestroyContext -> aclrtResetDevice -> aclFinalize.
 *   worker: aclrtSetCurrentContext(the context the model was loaded in:
 *           load, run and unload share one, as aclmdlExecute requires) ->
 *           aclrtCreateStream -> datasets whose every buffer is sized by
 *           aclmdlGetInputSizeByIndex / aclmdlGetOutputSizeByIndex (the
 *           largest gear's) -> per run, under the application's lock (the
 *           documented rule for one modelId in several threads):
 *           aclrtMemcpy the image in (the run mode's copy kind) ->
 *           aclmdlSetDynamicHWSize -> aclmdlExecuteAsync on its stream ->
 *           aclrtSynchronizeStream -> aclmdlGetCurOutputDims (the gear's
 *           output dims) -> aclrtMemcpy that many bytes out -> destroy
 *           buffers (aclDestroyDataBuffer: aclmdlDestroyDataset does not),
 *           datasets, stream.
 *
 *   acl_threads MODEL.om ACL.json OUT_DIR RUNS IMAGE_A.bin H_A W_A IMAGE_B.bin H_B W_B
 *
 * Worker k runs its image RUNS times at its gear and writes output 0 to
 * OUT_DIR/output_<H>x<W>.bin with the bytes its current dims hold. Exit 0
 * when every call succeeded and each worker's runs agree byte for byte.
 */
#include <pthread.h>
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
#define EXPECT(cond, ...)                                                                                    \
  do {                                                                                                       \
    if (!(cond)) {                                                                                           \
      fprintf(stderr, "[ERROR] " __VA_ARGS__);                                                               \
      fputc('\n', stderr);                                                                                   \
      return 1;                                                                                              \
    }                                                                                                        \
  } while (0)

enum { MAX_IO = 8 };

/* What main shares with the workers (read-only while they run). */
typedef struct shared {
  aclrtContext context;
  aclrtRunMode runMode;
  uint32_t modelId;
  aclmdlDesc *desc;
  size_t numInputs, numOutputs, dynIndex;
  pthread_mutex_t lock; /* one modelId, several threads: copy in, run, copy out as one */
  const char *outDir;
  int runs;
} shared;

typedef struct worker {
  shared *sh;
  int index;
  const char *image;
  uint64_t height, width;
  int status; /* 0: every call succeeded and the runs agreed */
  /* the worker's resources, released by release() */
  aclrtStream stream;
  aclmdlDataset *in, *out;
  void *hostIn, *hostOut, *firstOut;
} worker;

static size_t dims_bytes(const aclmdlIODims *d, aclDataType type) {
  size_t n = aclDataTypeSize(type);
  for (size_t k = 0; k < d->dimCount; k++)
    n *= (size_t)d->dims[k];
  return n;
}

/* A dataset of one aclrtMalloc buffer per input (is_input) or output, each
 * of the size the description reports. */
static int make_dataset(const shared *sh, int is_input, aclmdlDataset **out) {
  size_t n = is_input ? sh->numInputs : sh->numOutputs;
  aclmdlDataset *d = aclmdlCreateDataset();
  EXPECT(d != NULL, "aclmdlCreateDataset failed");
  *out = d;
  for (size_t i = 0; i < n; i++) {
    size_t size = is_input ? aclmdlGetInputSizeByIndex(sh->desc, i) : aclmdlGetOutputSizeByIndex(sh->desc, i);
    EXPECT(size > 0, "%s %zu has size 0", is_input ? "input" : "output", i);
    void *dev = NULL;
    CHECK(aclrtMalloc(&dev, size, ACL_MEM_MALLOC_HUGE_FIRST));
    aclDataBuffer *b = aclCreateDataBuffer(dev, size);
    if (!b) {
      (void)aclrtFree(dev);
      return failed("aclCreateDataBuffer", ACL_ERROR_BAD_ALLOC);
    }
    aclError ret = aclmdlAddDatasetBuffer(d, b);
    if (ret != ACL_SUCCESS) {
      (void)aclDestroyDataBuffer(b);
      (void)aclrtFree(dev);
      return failed("aclmdlAddDatasetBuffer", ret);
    }
  }
  return 0;
}

/* The dataset's buffers (their memory, then the buffers), then the dataset. */
static int destroy_dataset(aclmdlDataset *d) {
  if (!d) return 0;
  for (size_t i = 0; i < aclmdlGetDatasetNumBuffers(d); i++) {
    aclDataBuffer *b = aclmdlGetDatasetBuffer(d, i);
    CHECK(aclrtFree(aclGetDataBufferAddr(b)));
    CHECK(aclDestroyDataBuffer(b));
  }
  CHECK(aclmdlDestroyDataset(d));
  return 0;
}

static int release(worker *w) {
  int bad = destroy_dataset(w->in) | destroy_dataset(w->out);
  if (w->hostIn) CHECK(aclrtFreeHost(w->hostIn));
  if (w->hostOut) CHECK(aclrtFreeHost(w->hostOut));
  free(w->firstOut);
  if (w->stream) CHECK(aclrtDestroyStream(w->stream));
  return bad;
}

/* One run at the worker's gear; *bytes: output 0's, by its current dims. */
static int run_once(worker *w, size_t imageBytes, size_t *bytes) {
  shared *sh = w->sh;
  aclrtMemcpyKind in = sh->runMode == ACL_HOST ? ACL_MEMCPY_HOST_TO_DEVICE : ACL_MEMCPY_DEVICE_TO_DEVICE;
  aclrtMemcpyKind out = sh->runMode == ACL_HOST ? ACL_MEMCPY_DEVICE_TO_HOST : ACL_MEMCPY_DEVICE_TO_DEVICE;
  aclDataBuffer *image = aclmdlGetDatasetBuffer(w->in, 0), *result = aclmdlGetDatasetBuffer(w->out, 0);
  CHECK(aclrtMemcpy(aclGetDataBufferAddr(image), aclGetDataBufferSizeV2(image), w->hostIn, imageBytes, in));
  CHECK(aclmdlSetDynamicHWSize(sh->modelId, w->in, sh->dynIndex, w->height, w->width));
  CHECK(aclmdlExecuteAsync(sh->modelId, w->in, w->out, w->stream));
  CHECK(aclrtSynchronizeStream(w->stream));
  aclmdlIODims dims;
  CHECK(aclmdlGetCurOutputDims(sh->desc, 0, &dims));
  *bytes = dims_bytes(&dims, aclmdlGetOutputDataType(sh->desc, 0));
  EXPECT(*bytes > 0 && *bytes <= aclGetDataBufferSizeV2(result),
         "worker %d: output 0's current dims hold %zu bytes, its buffer %zu", w->index, *bytes,
         aclGetDataBufferSizeV2(result));
  if (!w->hostOut) CHECK(aclrtMallocHost(&w->hostOut, aclGetDataBufferSizeV2(result)));
  CHECK(aclrtMemcpy(w->hostOut, aclGetDataBufferSizeV2(result), aclGetDataBufferAddr(result), *bytes, out));
  LOG("worker %d: gear %llux%llu: output '%s' dims [%lld, %lld, %lld, %lld] (%zu bytes)", w->index,
      (unsigned long long)w->height, (unsigned long long)w->width, dims.name, (long long)dims.dims[0],
      (long long)dims.dims[1], (long long)dims.dims[2], (long long)dims.dims[3], *bytes);
  return 0;
}

static int work(worker *w) {
  shared *sh = w->sh;
  CHECK(aclrtSetCurrentContext(sh->context));
  CHECK(aclrtCreateStream(&w->stream));
  if (make_dataset(sh, 1, &w->in) || make_dataset(sh, 0, &w->out)) return 1;
  /* The image at this gear: input 0's dims with the gear's height and width. */
  aclmdlIODims dims;
  CHECK(aclmdlGetInputDims(sh->desc, 0, &dims));
  dims.dims[2] = (int64_t)w->height, dims.dims[3] = (int64_t)w->width;
  size_t imageBytes = dims_bytes(&dims, aclmdlGetInputDataType(sh->desc, 0));
  CHECK(aclrtMallocHost(&w->hostIn, imageBytes));
  FILE *f = fopen(w->image, "rb");
  EXPECT(f, "cannot open %s", w->image);
  size_t got = fread(w->hostIn, 1, imageBytes, f);
  int extra = fgetc(f) != EOF;
  fclose(f);
  EXPECT(got == imageBytes && !extra, "%s must hold %zu bytes (the image at %llux%llu)", w->image, imageBytes,
         (unsigned long long)w->height, (unsigned long long)w->width);
  size_t bytes = 0, firstBytes = 0;
  for (int r = 0; r < sh->runs; r++) {
    pthread_mutex_lock(&sh->lock);
    int bad = run_once(w, imageBytes, &bytes);
    pthread_mutex_unlock(&sh->lock);
    if (bad) return 1;
    if (r == 0) {
      firstBytes = bytes;
      w->firstOut = malloc(bytes);
      EXPECT(w->firstOut, "out of memory");
      memcpy(w->firstOut, w->hostOut, bytes);
    } else {
      EXPECT(bytes == firstBytes && memcmp(w->firstOut, w->hostOut, bytes) == 0,
             "worker %d: run %d differs from run 0", w->index, r);
    }
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/output_%llux%llu.bin", sh->outDir, (unsigned long long)w->height,
           (unsigned long long)w->width);
  f = fopen(path, "wb");
  EXPECT(f && fwrite(w->firstOut, 1, firstBytes, f) == firstBytes, "cannot write %s", path);
  fclose(f);
  LOG("worker %d: %d runs agree, output written to %s", w->index, sh->runs, path);
  return 0;
}

static void *worker_main(void *arg) {
  worker *w = arg;
  w->status = work(w);
  w->status |= release(w);
  return NULL;
}

/* The model queries an application sizes and checks everything by. */
static int describe(shared *sh, const worker *w, int nworkers) {
  sh->numInputs = aclmdlGetNumInputs(sh->desc);
  sh->numOutputs = aclmdlGetNumOutputs(sh->desc);
  EXPECT(sh->numInputs == 2 && sh->numOutputs >= 1,
         "want an image input and the dynamic input, and an output (%zu inputs, %zu outputs)", sh->numInputs,
         sh->numOutputs);
  CHECK(aclmdlGetInputIndexByName(sh->desc, ACL_DYNAMIC_TENSOR_NAME, &sh->dynIndex));
  EXPECT(sh->dynIndex == 1, "the dynamic input is index %zu, not the last", sh->dynIndex);
  aclmdlHW hw;
  CHECK(aclmdlGetDynamicHW(sh->desc, (size_t)-1, &hw));
  char gears[256] = "";
  for (size_t g = 0, len = 0; g < hw.hwCount && len < sizeof gears; g++)
    len += (size_t)snprintf(gears + len, sizeof gears - len, "%s%llux%llu", g ? ", " : "",
                            (unsigned long long)hw.hw[g][0], (unsigned long long)hw.hw[g][1]);
  LOG("model %u: %zu inputs, %zu outputs, image size gears: %s", sh->modelId, sh->numInputs, sh->numOutputs,
      gears);
  for (int k = 0; k < nworkers; k++) {
    int found = 0;
    for (size_t g = 0; g < hw.hwCount; g++)
      found |= hw.hw[g][0] == w[k].height && hw.hw[g][1] == w[k].width;
    EXPECT(found, "%llux%llu is not one of the model's gears (%s)", (unsigned long long)w[k].height,
           (unsigned long long)w[k].width, gears);
  }
  aclmdlIODims dims;
  CHECK(aclmdlGetInputDims(sh->desc, 0, &dims));
  EXPECT(dims.dimCount == 4 && dims.dims[2] == -1 && dims.dims[3] == -1,
         "input 0's dims must say -1 for the height and width the gears vary");
  aclFormat format = aclmdlGetInputFormat(sh->desc, 0);
  EXPECT(format == ACL_FORMAT_NCHW, "input 0's format is %d, not NCHW", (int)format);
  EXPECT(aclmdlGetInputDataType(sh->desc, 0) == ACL_FLOAT, "input 0 is not float");
  const char *inName = aclmdlGetInputNameByIndex(sh->desc, 0);
  size_t index = 9;
  CHECK(aclmdlGetInputIndexByName(sh->desc, inName, &index));
  EXPECT(index == 0, "input '%s' is index %zu by name", inName, index);
  EXPECT(strcmp(dims.name, inName) == 0, "input 0's dims name '%s', its name '%s'", dims.name, inName);
  for (size_t i = 0; i < sh->numOutputs; i++) {
    const char *name = aclmdlGetOutputNameByIndex(sh->desc, i);
    CHECK(aclmdlGetOutputIndexByName(sh->desc, name, &index));
    EXPECT(index == i, "output '%s' is index %zu by name, %zu by index", name, index, i);
    const char *real = aclmdlGetTensorRealName(sh->desc, name);
    EXPECT(real && strcmp(real, name) == 0, "output '%s' has the real name '%s'", name,
           real ? real : "(none)");
    CHECK(aclmdlGetOutputDims(sh->desc, i, &dims));
    LOG("output %zu '%s': dims [%lld, %lld, %lld, %lld] at the largest gear, %zu bytes", i, name,
        (long long)dims.dims[0], (long long)dims.dims[1], (long long)dims.dims[2], (long long)dims.dims[3],
        aclmdlGetOutputSizeByIndex(sh->desc, i));
  }
  return 0;
}

typedef struct app {
  shared sh;
  int deviceSet, loaded;
  void *work, *weight;
} app;

static int run(app *a, const char *model, worker *w, int nworkers) {
  shared *sh = &a->sh;
  CHECK(aclrtSetDevice(0));
  a->deviceSet = 1;
  CHECK(aclrtCreateContext(&sh->context, 0));
  CHECK(aclrtGetRunMode(&sh->runMode));
  LOG("run mode: %s", sh->runMode == ACL_HOST ? "ACL_HOST" : "ACL_DEVICE");
  size_t workSize = 0, weightSize = 0;
  CHECK(aclmdlQuerySize(model, &workSize, &weightSize));
  if (workSize) CHECK(aclrtMalloc(&a->work, workSize, ACL_MEM_MALLOC_HUGE_FIRST));
  if (weightSize) CHECK(aclrtMalloc(&a->weight, weightSize, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclmdlLoadFromFileWithMem(model, &sh->modelId, a->work, workSize, a->weight, weightSize));
  a->loaded = 1;
  LOG("loaded %s: %zu work bytes, %zu weight bytes, in the application's memory", model, workSize,
      weightSize);
  sh->desc = aclmdlCreateDesc();
  EXPECT(sh->desc, "aclmdlCreateDesc failed");
  CHECK(aclmdlGetDesc(sh->desc, sh->modelId));
  if (describe(sh, w, nworkers)) return 1;
  pthread_t t[2];
  int started = 0, bad = 0;
  for (; started < nworkers; started++)
    if (pthread_create(&t[started], NULL, worker_main, &w[started]) != 0) break;
  for (int k = 0; k < started; k++) {
    pthread_join(t[k], NULL);
    bad |= w[k].status;
  }
  EXPECT(started == nworkers, "cannot start the workers");
  return bad;
}

/* The documented teardown, of whatever run() got to. */
static int teardown(app *a) {
  shared *sh = &a->sh;
  if (a->loaded) CHECK(aclmdlUnload(sh->modelId));
  if (a->work) CHECK(aclrtFree(a->work));
  if (a->weight) CHECK(aclrtFree(a->weight));
  if (sh->desc) CHECK(aclmdlDestroyDesc(sh->desc));
  if (sh->context) CHECK(aclrtDestroyContext(sh->context));
  if (a->deviceSet) CHECK(aclrtResetDevice(0));
  CHECK(aclFinalize());
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 11) {
    fprintf(stderr, "usage: %s MODEL.om ACL.json OUT_DIR RUNS IMAGE_A.bin H_A W_A IMAGE_B.bin H_B W_B\n",
            argv[0]);
    return 2;
  }
  app a = {.sh = {.outDir = argv[3], .runs = atoi(argv[4]), .lock = PTHREAD_MUTEX_INITIALIZER}};
  worker w[2];
  for (int k = 0; k < 2; k++)
    w[k] = (worker){.sh = &a.sh,
                    .index = k,
                    .image = argv[5 + 3 * k],
                    .height = strtoull(argv[6 + 3 * k], NULL, 10),
                    .width = strtoull(argv[7 + 3 * k], NULL, 10)};
  if (a.sh.runs < 1) return fprintf(stderr, "RUNS must be >= 1\n"), 2;
  CHECK(aclInit(argv[2]));
  int bad = run(&a, argv[1], w, 2);
  bad |= teardown(&a);
  if (!bad) LOG("ok");
  return bad;
}
