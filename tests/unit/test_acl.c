/* test_acl.c - libascendcl (include/acl/, acl/) against AscendCL's
 * documented behaviour, on a small model compiled in process (two inputs,
 * two outputs, a convolution's weights and a workspace):
 *   - init and finalize, aclGetRecentErrMsg (newest first, then cleared);
 *   - the device, contexts and streams, and the codes of their misuse;
 *   - memory: every aclrtMemcpy kind checked against the addresses;
 *   - the model description (names, index by name, dims, sizes, types);
 *   - execution, synchronous and on streams, equal to libomrt's own run;
 *     datasets that do not match are refused, naming the buffer;
 *   - the *WithMem loads run in the caller's memory: libomrt allocates no
 *     workspace (heap bytes of the load, counted with --wrap, are exactly
 *     the workspace less than a plain load's), the work memory is written
 *     and the weights are read from the caller's weight memory;
 *   - two threads run one model at once (their runs take turns);
 *   - unloading waits for queued runs; aclFinalize releases what is left. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "common/om_format.h"
#include "driver/compile.h"
#include "omrt.h"
#include "onnx_mb.h"
#include "acl_check.h"
#include "support.h"

/* --- heap accounting (tests/CMakeLists.txt wraps the allocation calls) */
static atomic_int counting;
static atomic_long bytes;
void *__real_malloc(size_t n);
void *__real_calloc(size_t c, size_t n);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
int __real_posix_memalign(void **p, size_t a, size_t n);
static void count(size_t n) {
  if (atomic_load(&counting)) atomic_fetch_add(&bytes, (long)n);
}
void *__wrap_malloc(size_t n) { return count(n), __real_malloc(n); }
void *__wrap_calloc(size_t c, size_t n) { return count(c * n), __real_calloc(c, n); }
void *__wrap_realloc(void *p, size_t n) { return count(n), __real_realloc(p, n); }
void *__wrap_aligned_alloc(size_t a, size_t n) { return count(n), __real_aligned_alloc(a, n); }
int __wrap_posix_memalign(void **p, size_t a, size_t n) { return count(n), __real_posix_memalign(p, a, n); }

enum { NX = 3 * 16 * 16, NZ = 8 * 16 * 16, NSUM = NZ, NPOOL = 8 };

/* x [1,3,16,16] -> Conv 3x3 (8 channels) -> Relu -> + z [1,8,16,16] = "sum";
 * GlobalAveragePool(sum) = "pool". Returns the package (free()). */
static void *compile_model(size_t *size) {
  static float w[8 * 3 * 3 * 3], b[8];
  for (int i = 0; i < 216; i++)
    w[i] = (float)((i * 37) % 17) * 0.05f - 0.4f;
  for (int i = 0; i < 8; i++)
    b[i] = 0.1f * (float)i - 0.3f;
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", 1, 4, (int64_t[]){1, 3, 16, 16}, NULL);
  mb_input(&m, "z", 1, 4, (int64_t[]){1, 8, 16, 16}, NULL);
  mb_init_raw(&m, "w", 1, 4, (int64_t[]){8, 3, 3, 3}, w, sizeof w);
  mb_init_raw(&m, "b", 1, 1, (int64_t[]){8}, b, sizeof b);
  Onnx__NodeProto *conv = mb_node(&m, "Conv", "conv", "x,w,b", "c");
  attr_ints(&m, conv, "pads", 4, (int64_t[]){1, 1, 1, 1});
  attr_ints(&m, conv, "kernel_shape", 2, (int64_t[]){3, 3});
  mb_node(&m, "Relu", "relu", "c", "r");
  mb_node(&m, "Add", "add", "r,z", "sum");
  mb_node(&m, "GlobalAveragePool", "pool", "sum", "pool");
  mb_output(&m, "sum");
  mb_output(&m, "pool");
  atc_options opt = {.model_path = "acl_test.onnx",
                     .soc_version = "Ascend310",
                     .precision = OM_PRECISION_FORCE_FP16,
                     .high_performance = 1,
                     .cmdline = "test_acl"};
  return mb_compile(&m, &opt, size);
}

static float xin[NX], zin[NZ], sum_ref[NSUM], pool_ref[NPOOL];

/* The reference outputs: libomrt run directly. */
static void reference(const void *om, size_t size) {
  omrt_model *m;
  omrt_context *c;
  CHECK_EQ_INT(omrt_model_load_memory(om, size, NULL, &m), OMRT_OK);
  CHECK_EQ_INT(omrt_context_new(m, &c), OMRT_OK);
  const void *in[2] = {xin, zin};
  void *out[2] = {sum_ref, pool_ref};
  CHECK_EQ_INT(omrt_execute(c, in, out), OMRT_OK);
  omrt_context_free(c);
  omrt_model_free(m);
}

typedef struct io {
  void *dev[4]; /* x, z, sum, pool in device memory */
  aclmdlDataset *in, *out;
} io;

static void make_io(io *b) {
  size_t sizes[4] = {sizeof xin, sizeof zin, sizeof sum_ref, sizeof pool_ref};
  b->in = aclmdlCreateDataset();
  b->out = aclmdlCreateDataset();
  for (int i = 0; i < 4; i++) {
    OK(aclrtMalloc(&b->dev[i], sizes[i], ACL_MEM_MALLOC_HUGE_FIRST));
    OK(aclmdlAddDatasetBuffer(i < 2 ? b->in : b->out, aclCreateDataBuffer(b->dev[i], sizes[i])));
  }
  OK(aclrtMemcpy(b->dev[0], sizes[0], xin, sizes[0], ACL_MEMCPY_HOST_TO_DEVICE));
  OK(aclrtMemcpy(b->dev[1], sizes[1], zin, sizes[1], ACL_MEMCPY_HOST_TO_DEVICE));
}

static void free_io(io *b) {
  for (int k = 0; k < 2; k++) {
    aclmdlDataset *d = k ? b->out : b->in;
    for (size_t i = 0; i < aclmdlGetDatasetNumBuffers(d); i++)
      OK(aclDestroyDataBuffer(aclmdlGetDatasetBuffer(d, i)));
    OK(aclmdlDestroyDataset(d));
  }
  for (int i = 0; i < 4; i++)
    OK(aclrtFree(b->dev[i]));
}

/* The outputs in b's device memory equal the reference, bit for bit. */
static int outputs_match(io *b) {
  float sum[NSUM], pool[NPOOL]; /* (on the stack: threads call this) */
  OK(aclrtMemcpy(sum, sizeof sum, b->dev[2], sizeof sum, ACL_MEMCPY_DEVICE_TO_HOST));
  OK(aclrtMemcpy(pool, sizeof pool, b->dev[3], sizeof pool, ACL_MEMCPY_DEVICE_TO_HOST));
  int ok = memcmp(sum, sum_ref, sizeof sum) == 0 && memcmp(pool, pool_ref, sizeof pool) == 0;
  memset(pool, 0, sizeof pool);
  OK(aclrtMemcpy(b->dev[3], sizeof pool, pool, sizeof pool,
                 ACL_MEMCPY_HOST_TO_DEVICE)); /* for the next run */
  return ok;
}

static void test_init(void) {
  EXPECT_ACL(aclrtSetDevice(0), ACL_ERROR_UNINITIALIZE, "aclrtSetDevice: aclInit has not been called");
  EXPECT_ACL(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE, "aclFinalize");
  EXPECT_ACL(aclInit("/nonexistent/acl.json"), ACL_ERROR_INVALID_FILE, "/nonexistent/acl.json");
  OK(aclInit(NULL));
  EXPECT_ACL(aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE, "aclInit");
  /* Messages pile up newest first, and are handed over once. */
  CHECK(aclGetRecentErrMsg() == NULL);
  CHECK_EQ_INT(aclrtSetDevice(7), ACL_ERROR_RT_INVALID_DEVICEID);
  CHECK_EQ_INT(aclrtMalloc(NULL, 4, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  const char *msg = aclGetRecentErrMsg();
  CHECK(msg && strstr(msg, "aclrtMalloc: devPtr is NULL") == msg &&
        strstr(msg, "\naclrtSetDevice: deviceId 7"));
  CHECK(aclGetRecentErrMsg() == NULL);
  int32_t ma, mi, pa;
  OK(aclrtGetVersion(&ma, &mi, &pa));
  CHECK(ma == OMRT_VERSION_MAJOR && mi == OMRT_VERSION_MINOR && pa == OMRT_VERSION_PATCH);
}

static void test_device_contexts_streams(void) {
  aclrtStream s;
  void *p;
  EXPECT_ACL(aclrtCreateStream(&s), ACL_ERROR_RT_CONTEXT_NULL, "aclrtCreateStream: no current context");
  EXPECT_ACL(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_CONTEXT_NULL, "aclrtMalloc");
  EXPECT_ACL(aclrtResetDevice(0), ACL_ERROR_RT_INVALID_DEVICEID, "was not set");
  OK(aclrtSetDevice(0));
  aclrtContext dflt, c1, cur;
  OK(aclrtGetCurrentContext(&dflt));
  int32_t dev = -1;
  uint32_t n = 0;
  aclrtRunMode mode = ACL_DEVICE;
  OK(aclrtGetDevice(&dev));
  OK(aclrtGetDeviceCount(&n));
  OK(aclrtGetRunMode(&mode));
  CHECK(dev == 0 && n == 1 && mode == ACL_HOST);
  EXPECT_ACL(aclrtDestroyContext(dflt), ACL_ERROR_INVALID_PARAM, "default context");
  OK(aclrtCreateContext(&c1, 0));
  OK(aclrtGetCurrentContext(&cur));
  CHECK(cur == c1);
  OK(aclrtCreateStream(&s));
  OK(aclrtSetCurrentContext(dflt));
  EXPECT_ACL(aclrtSynchronizeStream(s), ACL_ERROR_RT_STREAM_CONTEXT, "another context");
  OK(aclrtSynchronizeStream(NULL)); /* the default context's default stream */
  OK(aclrtDestroyContext(c1));      /* with its stream */
  EXPECT_ACL(aclrtSetCurrentContext(c1), ACL_ERROR_INVALID_PARAM, "not a live context");
  EXPECT_ACL(aclrtDestroyStream(s), ACL_ERROR_INVALID_PARAM, "not a live stream");
  OK(aclrtCreateStream(&s));
  OK(aclrtDestroyStream(s));
  EXPECT_ACL(aclrtSynchronizeStream(s), ACL_ERROR_INVALID_PARAM, "not a live stream");
}

static void test_memory(void) {
  void *d, *d2, *h;
  char local[256];
  EXPECT_ACL(aclrtMalloc(&d, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM, "size is 0");
  EXPECT_ACL(aclrtMalloc(&d, 8, (aclrtMemMallocPolicy)99), ACL_ERROR_INVALID_PARAM, "policy 0x63");
  /* AscendCL's policies: a page policy, a memory type alone, or one of the
   * three page policies ored with one memory type */
  static const unsigned good[] = {ACL_MEM_MALLOC_HUGE1G_ONLY_P2P, ACL_MEM_TYPE_LOW_BAND_WIDTH,
                                  ACL_MEM_MALLOC_HUGE_FIRST | ACL_MEM_TYPE_HIGH_BAND_WIDTH,
                                  ACL_MEM_MALLOC_NORMAL_ONLY | ACL_MEM_TYPE_LOW_BAND_WIDTH};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    OK(aclrtMalloc(&d, 64, (aclrtMemMallocPolicy)good[i]));
    OK(aclrtFree(d));
  }
  OK(aclrtMallocCached(&d, 64,
                       (aclrtMemMallocPolicy)(ACL_MEM_MALLOC_HUGE_ONLY | ACL_MEM_TYPE_HIGH_BAND_WIDTH)));
  OK(aclrtFree(d));
  EXPECT_ACL(aclrtMalloc(
                 &d, 8, (aclrtMemMallocPolicy)(ACL_MEM_MALLOC_HUGE_FIRST_P2P | ACL_MEM_TYPE_HIGH_BAND_WIDTH)),
             ACL_ERROR_INVALID_PARAM, "policy 0x1003 is not");
  EXPECT_ACL(
      aclrtMalloc(&d, 8, (aclrtMemMallocPolicy)(ACL_MEM_TYPE_LOW_BAND_WIDTH | ACL_MEM_TYPE_HIGH_BAND_WIDTH)),
      ACL_ERROR_INVALID_PARAM, "policy 0x1100 is not");
  OK(aclrtMalloc(&d, 256, ACL_MEM_MALLOC_NORMAL_ONLY));
  OK(aclrtMalloc(&d2, 256, ACL_MEM_MALLOC_NORMAL_ONLY));
  OK(aclrtMallocHost(&h, 256));
  CHECK((uintptr_t)d % 64 == 0 && (uintptr_t)h % 64 == 0);
  for (int i = 0; i < 256; i++)
    local[i] = (char)i;
  OK(aclrtMemcpy(d, 256, local, 256, ACL_MEMCPY_HOST_TO_DEVICE));
  OK(aclrtMemcpy(d2, 256, d, 256, ACL_MEMCPY_DEVICE_TO_DEVICE));
  OK(aclrtMemcpy(h, 256, d2, 256, ACL_MEMCPY_DEVICE_TO_HOST));
  CHECK(memcmp(h, local, 256) == 0);
  OK(aclrtMemcpy(local, 256, h, 256, ACL_MEMCPY_HOST_TO_HOST));
  OK(aclrtMemcpy(d, 256, h, 256, ACL_MEMCPY_DEFAULT));
  /* Each kind names the side whose memory is of the wrong kind. */
  EXPECT_ACL(aclrtMemcpy(local, 256, h, 256, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID,
             "kind ACL_MEMCPY_HOST_TO_DEVICE, but dst");
  EXPECT_ACL(aclrtMemcpy(d, 256, d2, 256, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID, "but src");
  EXPECT_ACL(aclrtMemcpy(h, 256, local, 256, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_RT_PARAM_INVALID,
             "but src");
  EXPECT_ACL(aclrtMemcpy(d, 256, local, 256, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID,
             "but src");
  EXPECT_ACL(aclrtMemcpy(d, 256, local, 256, ACL_MEMCPY_HOST_TO_HOST), ACL_ERROR_RT_PARAM_INVALID, "but dst");
  EXPECT_ACL(aclrtMemcpy(d, 128, local, 256, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM,
             "count 256 exceeds destMax 128");
  EXPECT_ACL(aclrtMemcpy((char *)d + 128, 256, local, 256, ACL_MEMCPY_HOST_TO_DEVICE),
             ACL_ERROR_RT_PARAM_INVALID, "run past the end");
  EXPECT_ACL(aclrtMemcpy(d, 256, local, 256, (aclrtMemcpyKind)9), ACL_ERROR_INVALID_PARAM, "kind 9");
  EXPECT_ACL(aclrtMemset((char *)d + 200, 100, 0, 100), ACL_ERROR_RT_PARAM_INVALID, "aclrtMemset: devPtr");
  OK(aclrtMemset(d, 256, 0x5a, 256));
  OK(aclrtMemcpy(local, 256, d, 256, ACL_MEMCPY_DEVICE_TO_HOST));
  CHECK(local[0] == 0x5a && local[255] == 0x5a);
  /* host memory from aclrtMallocHost too (AscendCL tells them apart by the address); not other memory */
  OK(aclrtMemset(h, 256, 0xa5, 256));
  CHECK(((unsigned char *)h)[0] == 0xa5 && ((unsigned char *)h)[255] == 0xa5);
  EXPECT_ACL(aclrtMemset((char *)h + 8, 256, 0, 256), ACL_ERROR_RT_PARAM_INVALID,
             "run past the end of its aclrtMallocHost allocation");
  EXPECT_ACL(aclrtMemset(local, 256, 0, 256), ACL_ERROR_RT_PARAM_INVALID,
             "neither device memory (aclrtMalloc) nor host memory from aclrtMallocHost");
  /* Asynchronous copies run in order on the stream. */
  aclrtStream s;
  OK(aclrtCreateStream(&s));
  memset(h, 7, 256);
  OK(aclrtMemcpyAsync(d2, 256, h, 256, ACL_MEMCPY_HOST_TO_DEVICE, s));
  OK(aclrtMemcpyAsync(d, 256, d2, 256, ACL_MEMCPY_DEVICE_TO_DEVICE, s));
  OK(aclrtMemcpyAsync(local, 256, d, 256, ACL_MEMCPY_DEVICE_TO_HOST, s));
  OK(aclrtSynchronizeStream(s));
  CHECK(local[0] == 7 && local[255] == 7);
  EXPECT_ACL(aclrtMemcpyAsync(local, 256, h, 256, ACL_MEMCPY_HOST_TO_HOST, s), ACL_ERROR_RT_PARAM_INVALID,
             "synchronous only");
  OK(aclrtDestroyStream(s));
  EXPECT_ACL(aclrtFree(h), ACL_ERROR_RT_MEMORY_FREE, "it is host memory: aclrtFreeHost");
  EXPECT_ACL(aclrtFreeHost(d), ACL_ERROR_RT_MEMORY_FREE, "it is device memory: aclrtFree");
  EXPECT_ACL(aclrtFree((char *)d + 64), ACL_ERROR_RT_MEMORY_FREE, "inside");
  EXPECT_ACL(aclrtFree(local), ACL_ERROR_RT_MEMORY_FREE, "not the start of an aclrtMalloc allocation");
  OK(aclrtFree(d));
  OK(aclrtFree(d2));
  OK(aclrtFreeHost(h));
  EXPECT_ACL(aclrtFree(d), ACL_ERROR_RT_MEMORY_FREE, "aclrtFree");
}

static void test_desc_and_data(uint32_t id) {
  aclmdlDesc *desc = aclmdlCreateDesc();
  OK(aclmdlGetDesc(desc, id));
  CHECK_EQ_INT(aclmdlGetNumInputs(desc), 2);
  CHECK_EQ_INT(aclmdlGetNumOutputs(desc), 2);
  CHECK(strcmp(aclmdlGetInputNameByIndex(desc, 1), "z") == 0 &&
        strcmp(aclmdlGetOutputNameByIndex(desc, 1), "pool:0:pool") == 0);
  size_t idx = 9;
  OK(aclmdlGetOutputIndexByName(desc, "pool", &idx));
  CHECK_EQ_INT(idx, 1);
  OK(aclmdlGetOutputIndexByName(desc, "add:0:sum", &idx));
  CHECK_EQ_INT(idx, 0);
  OK(aclmdlGetInputIndexByName(desc, "x", &idx));
  CHECK_EQ_INT(idx, 0);
  EXPECT_ACL(aclmdlGetInputIndexByName(desc, "nosuch", &idx), ACL_ERROR_INVALID_PARAM,
             "no input named 'nosuch'");
  CHECK_EQ_INT(aclmdlGetInputSizeByIndex(desc, 1), sizeof zin);
  CHECK_EQ_INT(aclmdlGetOutputSizeByIndex(desc, 1), sizeof pool_ref);
  aclmdlIODims dims;
  OK(aclmdlGetOutputDims(desc, 1, &dims));
  CHECK(strcmp(dims.name, "pool:0:pool") == 0 && dims.dimCount == 4 && dims.dims[0] == 1 &&
        dims.dims[1] == 8 && dims.dims[2] == 1 && dims.dims[3] == 1);
  CHECK(aclmdlGetInputDataType(desc, 0) == ACL_FLOAT && aclmdlGetOutputFormat(desc, 0) == ACL_FORMAT_ND);
  CHECK_EQ_INT(aclmdlGetInputSizeByIndex(desc, 2), 0);
  const char *msg = aclGetRecentErrMsg();
  CHECK(msg && strstr(msg, "aclmdlGetInputSizeByIndex: index 2, the model has 2 inputs"));
  CHECK(aclmdlGetInputDataType(desc, 5) == ACL_DT_UNDEFINED &&
        aclmdlGetOutputFormat(NULL, 0) == ACL_FORMAT_UNDEFINED);
  EXPECT_ACL(aclmdlGetInputDims(desc, 3, &dims), ACL_ERROR_INVALID_PARAM, "aclmdlGetInputDims: index 3");
  EXPECT_ACL(aclmdlGetDesc(desc, 999), ACL_ERROR_INVALID_MODEL_ID, "modelId 999");
  OK(aclmdlDestroyDesc(desc));
  /* Data buffers and data types. */
  aclDataBuffer *b = aclCreateDataBuffer(xin, sizeof xin);
  CHECK(aclGetDataBufferAddr(b) == xin && aclGetDataBufferSizeV2(b) == sizeof xin &&
        aclGetDataBufferSize(b) == sizeof xin);
  OK(aclUpdateDataBuffer(b, zin, 4));
  CHECK(aclGetDataBufferAddr(b) == zin && aclGetDataBufferSizeV2(b) == 4);
  OK(aclDestroyDataBuffer(b));
  CHECK(aclDataTypeSize(ACL_FLOAT16) == 2 && aclDataTypeSize(ACL_INT64) == 8 &&
        aclDataTypeSize(ACL_STRING) == 0);
  CHECK(aclFloat16ToFloat(aclFloatToFloat16(1.5f)) == 1.5f && aclFloatToFloat16(1.0f) == 0x3c00);
}

typedef struct runner {
  aclrtContext ctx;
  uint32_t id;
  int ok;
} runner;

/* Runs the model 5 times on buffers of its own, in the given context. */
static void *run_thread(void *arg) {
  runner *r = arg;
  r->ok = aclrtSetCurrentContext(r->ctx) == ACL_SUCCESS;
  io b;
  make_io(&b);
  for (int i = 0; i < 5 && r->ok; i++)
    r->ok = aclmdlExecute(r->id, b.in, b.out) == ACL_SUCCESS && outputs_match(&b);
  free_io(&b);
  return NULL;
}

static void test_threads(uint32_t id) {
  runner r[2];
  pthread_t t[2];
  for (int i = 0; i < 2; i++) {
    r[i] = (runner){.id = id};
    OK(aclrtGetCurrentContext(&r[i].ctx));
    CHECK_EQ_INT(pthread_create(&t[i], NULL, run_thread, &r[i]), 0);
  }
  for (int i = 0; i < 2; i++) {
    pthread_join(t[i], NULL);
    CHECK(r[i].ok);
  }
}

static void test_execute(uint32_t id) {
  io b;
  make_io(&b);
  OK(aclmdlExecute(id, b.in, b.out));
  CHECK(outputs_match(&b));
  /* Streams: an explicit one and the context's default. */
  aclrtStream s;
  OK(aclrtCreateStream(&s));
  OK(aclmdlExecuteAsync(id, b.in, b.out, s));
  OK(aclrtSynchronizeStream(s));
  CHECK(outputs_match(&b));
  OK(aclmdlExecuteAsync(id, b.in, b.out, NULL));
  OK(aclrtSynchronizeStream(NULL));
  CHECK(outputs_match(&b));
  /* Datasets that do not fit are refused before anything runs. */
  aclmdlDataset *one = aclmdlCreateDataset();
  OK(aclmdlAddDatasetBuffer(one, aclmdlGetDatasetBuffer(b.in, 0)));
  EXPECT_ACL(aclmdlExecute(id, one, b.out), ACL_ERROR_MODEL_INPUT_NOT_MATCH,
             "the input dataset has 1 buffers");
  aclmdlDataset *host = aclmdlCreateDataset();
  aclDataBuffer *hx = aclCreateDataBuffer(xin, sizeof xin), *small = aclCreateDataBuffer(b.dev[3], 4);
  OK(aclmdlAddDatasetBuffer(host, hx));
  OK(aclmdlAddDatasetBuffer(host, aclmdlGetDatasetBuffer(b.in, 1)));
  EXPECT_ACL(aclmdlExecute(id, host, b.out), ACL_ERROR_INVALID_PARAM, "input 0 ('x'): ");
  EXPECT_ACL(aclmdlExecuteAsync(id, host, b.out, s), ACL_ERROR_INVALID_PARAM, "not device memory");
  aclmdlDataset *bad_out = aclmdlCreateDataset();
  OK(aclmdlAddDatasetBuffer(bad_out, aclmdlGetDatasetBuffer(b.out, 0)));
  OK(aclmdlAddDatasetBuffer(bad_out, small));
  EXPECT_ACL(aclmdlExecute(id, b.in, bad_out), ACL_ERROR_MODEL_OUTPUT_NOT_MATCH,
             "output 1 ('pool'): buffer of 4 bytes, the tensor has 32");
  EXPECT_ACL(aclmdlExecute(id + 100, b.in, b.out), ACL_ERROR_INVALID_MODEL_ID, "aclmdlExecute: modelId");
  /* An output buffer created empty: aclmdlExecute gives it device memory of
   * the output's size, the application's to free; the asynchronous runs refuse it. */
  aclmdlDataset *empty_out = aclmdlCreateDataset();
  aclDataBuffer *empty = aclCreateDataBuffer(NULL, 0);
  OK(aclmdlAddDatasetBuffer(empty_out, aclmdlGetDatasetBuffer(b.out, 0)));
  OK(aclmdlAddDatasetBuffer(empty_out, empty));
  EXPECT_ACL(aclmdlExecuteAsync(id, b.in, empty_out, s), ACL_ERROR_INVALID_PARAM,
             "output 1 ('pool'): the data buffer has no memory (only aclmdlExecute allocates it)");
  CHECK(aclGetDataBufferAddr(empty) == NULL);
  OK(aclmdlExecute(id, b.in, empty_out));
  void *given = aclGetDataBufferAddr(empty);
  CHECK(given != NULL && aclGetDataBufferSizeV2(empty) == sizeof pool_ref);
  float pool_got[NPOOL];
  OK(aclrtMemcpy(pool_got, sizeof pool_got, given, sizeof pool_got, ACL_MEMCPY_DEVICE_TO_HOST));
  CHECK(memcmp(pool_got, pool_ref, sizeof pool_ref) == 0);
  OK(aclmdlExecute(id, b.in, empty_out)); /* (now a buffer like any other: the same memory) */
  CHECK(aclGetDataBufferAddr(empty) == given);
  OK(aclrtFree(given));
  OK(aclUpdateDataBuffer(empty, NULL, 0));
  OK(aclDestroyDataBuffer(empty));
  OK(aclmdlDestroyDataset(empty_out));
  OK(aclDestroyDataBuffer(hx));
  OK(aclDestroyDataBuffer(small));
  OK(aclmdlDestroyDataset(one));
  OK(aclmdlDestroyDataset(host));
  OK(aclmdlDestroyDataset(bad_out));
  /* Another context cannot run or unload the model. */
  aclrtContext mine, other;
  OK(aclrtGetCurrentContext(&mine));
  OK(aclrtCreateContext(&other, 0));
  EXPECT_ACL(aclmdlExecute(id, b.in, b.out), ACL_ERROR_RT_MODEL_CONTEXT, "another context");
  EXPECT_ACL(aclmdlUnload(id), ACL_ERROR_RT_MODEL_CONTEXT, "aclmdlUnload");
  OK(aclrtSetCurrentContext(mine));
  OK(aclrtDestroyContext(other));
  /* Unloading waits for the runs still queued. */
  for (int i = 0; i < 4; i++)
    OK(aclmdlExecuteAsync(id, b.in, b.out, s));
  OK(aclmdlUnload(id));
  OK(aclrtSynchronizeStream(s));
  CHECK(outputs_match(&b));
  EXPECT_ACL(aclmdlExecuteAsync(id, b.in, b.out, s), ACL_ERROR_INVALID_MODEL_ID, "no such model");
  OK(aclrtDestroyStream(s));
  free_io(&b);
}

/* The *WithMem loads: the caller's memory, and no workspace from libomrt. */
static void test_with_mem(const char *path, const void *om, size_t size) {
  size_t work = 0, weight = 0, work2 = 0, weight2 = 0;
  OK(aclmdlQuerySize(path, &work, &weight));
  OK(aclmdlQuerySizeFromMem(om, size, &work2, &weight2));
  CHECK(work > 0 && weight > 0 && work == work2 && weight == weight2);
  EXPECT_ACL(aclmdlQuerySize("/nonexistent.om", &work2, &weight2), ACL_ERROR_READ_MODEL_FAILURE,
             "/nonexistent.om");
  void *wp, *gp;
  OK(aclrtMalloc(&wp, work, ACL_MEM_MALLOC_HUGE_FIRST));
  OK(aclrtMalloc(&gp, weight, ACL_MEM_MALLOC_HUGE_FIRST));
  uint32_t id, id2;
  char host_weights[64];
  EXPECT_ACL(aclmdlLoadFromFileWithMem(path, &id, wp, work, host_weights, sizeof host_weights),
             ACL_ERROR_INVALID_PARAM, "weightPtr");
  EXPECT_ACL(aclmdlLoadFromFileWithMem(path, &id, wp, work - 1, gp, weight), ACL_ERROR_INVALID_PARAM,
             "workSize");
  EXPECT_ACL(aclmdlLoadFromFileWithMem(path, &id, wp, work, gp, weight - 1), ACL_ERROR_INVALID_PARAM,
             "weightSize");

  /* Heap bytes of a plain load and of one in the caller's memory. */
  atomic_store(&bytes, 0);
  atomic_store(&counting, 1);
  OK(aclmdlLoadFromFile(path, &id2));
  atomic_store(&counting, 0);
  long plain = atomic_load(&bytes);
  memset(wp, 0xA5, work);
  atomic_store(&bytes, 0);
  atomic_store(&counting, 1);
  OK(aclmdlLoadFromFileWithMem(path, &id, wp, work, gp, weight));
  atomic_store(&counting, 0);
  long with_mem = atomic_load(&bytes);
  printf("aclmdlLoadFromFile: %ld heap bytes; WithMem: %ld (work %zu, weights %zu)\n", plain, with_mem, work,
         weight);
  /* A plain load allocates the workspace, and the decoded weights when the
   * package elides their zero chunks (ZMAP); WithMem uses the caller's. */
  long zmap_weights = 0;
  const om_header *oh = om;
  for (uint32_t i = 0; i < oh->npartitions; i++)
    if (((const om_partition *)(oh + 1))[i].type == OM_PART_ZMAP)
      zmap_weights = (long)((weight + 63) / 64 * 64);
  CHECK_EQ_INT(plain - with_mem, (long)((work + 63) / 64 * 64) + zmap_weights);
  OK(aclmdlUnload(id2));

  io b;
  make_io(&b);
  OK(aclmdlExecute(id, b.in, b.out));
  CHECK(outputs_match(&b));
  size_t poisoned = 0;
  for (size_t i = 0; i < work; i++)
    poisoned += ((unsigned char *)wp)[i] == 0xA5;
  CHECK(poisoned < work); /* the run used the caller's work memory */
  OK(aclrtMemset(gp, weight, 0, weight));
  OK(aclmdlExecute(id, b.in, b.out));
  CHECK(!outputs_match(&b)); /* and read the weights from the caller's weight memory */
  OK(aclmdlUnload(id));

  /* From memory: unaligned data, freed right after the load. */
  char *copy = malloc(size + 1);
  memcpy(copy + 1, om, size);
  OK(aclmdlLoadFromMemWithMem(copy + 1, size, &id, wp, work, gp, weight));
  free(copy);
  OK(aclmdlExecute(id, b.in, b.out));
  CHECK(outputs_match(&b));
  OK(aclmdlUnload(id));
  OK(aclmdlLoadFromMem(om, size, &id));
  OK(aclmdlExecute(id, b.in, b.out));
  CHECK(outputs_match(&b));
  EXPECT_ACL(aclmdlLoadFromMem(om, size / 2, &id2), ACL_ERROR_PARSE_MODEL, "aclmdlLoadFromMem: model data");
  /* Left for aclFinalize: the model, the buffers, the work and weight memory, a stream. */
  aclrtStream s;
  OK(aclrtCreateStream(&s));
  OK(aclmdlExecuteAsync(id, b.in, b.out, s));
  /* (the run took the addresses: the descriptors, the application's, may go) */
  for (int k = 0; k < 2; k++) {
    aclmdlDataset *d = k ? b.out : b.in;
    for (size_t i = 0; i < aclmdlGetDatasetNumBuffers(d); i++)
      OK(aclDestroyDataBuffer(aclmdlGetDatasetBuffer(d, i)));
    OK(aclmdlDestroyDataset(d));
  }
}

int main(void) {
  size_t size = 0;
  void *om = compile_model(&size);
  CHECK(om != NULL);
  if (!om) return test_summary("acl");
  for (int i = 0; i < NX; i++)
    xin[i] = (float)((i * 7) % 23) * 0.1f - 1.0f;
  for (int i = 0; i < NZ; i++)
    zin[i] = (float)((i * 5) % 11) * 0.05f;
  reference(om, size);
  char path[1024];
  snprintf(path, sizeof path, "%s/model.om", test_tmpdir("acl"));
  CHECK_EQ_INT(test_write_file(path, om, size), 0);

  test_init();
  test_device_contexts_streams();
  test_memory();
  uint32_t id;
  OK(aclmdlLoadFromFile(path, &id));
  test_desc_and_data(id);
  test_threads(id);
  test_execute(id);
  test_with_mem(path, om, size);
  OK(aclFinalize());
  EXPECT_ACL(aclrtMalloc(&om, 4, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_UNINITIALIZE, "aclrtMalloc");
  /* Again, after aclFinalize. */
  OK(aclInit(NULL));
  OK(aclrtSetDevice(0));
  OK(aclmdlLoadFromFile(path, &id));
  OK(aclrtResetDevice(0));
  OK(aclFinalize());
  free(om);
  return test_summary("acl");
}
