/* test_acl_api.c - the AscendCL calls that complete libascendcl's coverage
 * of the public API (acl_mdl.h, acl_rt.h) against their documented
 * behaviour, on two models compiled in process: y = x + z (fp16 compute),
 * and y = Relu(x) with dynamic AIPP and batch gears 1, 2:
 *   - aclmdlGetDescFromFile / FromMem: every answer the same as
 *     aclmdlGetDesc's after loading the om (names, sizes, dims, data types,
 *     formats, gears), the om not loaded; refusals name the argument;
 *   - aclmdlGetAippDataSize: the parameters input's size, for any batch;
 *   - aclmdlExecuteV2 / AsyncV2 with a configuration handle: results,
 *     the stream's wait bounded by ACL_MDL_STREAM_SYNC_TIMEOUT, attributes
 *     refused by name;
 *   - model queues, bundles, operator descriptions, single-operator
 *     compilation (use atc --singleop): FEATURE_UNSUPPORTED;
 *   - the device: forced reset, synchronize with a timeout, utilisation,
 *     status, saturation mode, peers, float overflow (an inf a run writes
 *     is reported in the stream's order, reset clears it);
 *   - system parameters, streams with a configuration, stream query,
 *     overflow switch, ACL_STOP_ON_FAILURE skipping work after a failed run,
 *     event wait status, exception info, aclrtMallocAlign32, virtual memory
 *     and allocators (not provided), the thread's
 *     last error, the runtime's attributes;
 *   - tensor descriptions' ranges, origin, constant, placement, format
 *     conversion;
 *   - aclInit's configuration file: JSON (AscendCL's nesting limits), dump
 *     and profiling sections checked (the key named; the overflow and
 *     exception dumps refused as not provided), the samples' files
 *     accepted, err_msg_mode and defaultDevice honoured.
 * A stream is held busy (deterministically) by a blocking callback that
 * waits on a gate the test opens. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl/acl.h"
#include "acl/acl_dump.h"
#include "acl/acl_prof.h"
#include "acl/acl_op_compiler.h"
#include "acl/acl_rt_allocator.h"
#include "driver/compile.h"
#include "onnx_mb.h"
#include "acl_check.h"
#include "support.h"

enum { N = 4 * 8 * 8, C = 3, H = 6, W = 8 };

static void *compile_add(size_t *size) {
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", 1, 4, (int64_t[]){1, 4, 8, 8}, NULL);
  mb_input(&m, "z", 1, 4, (int64_t[]){1, 4, 8, 8}, NULL);
  mb_node(&m, "Add", "add", "x,z", "y");
  mb_output(&m, "y");
  atc_options opt = {.model_path = "acl_api.onnx",
                     .soc_version = "Ascend310",
                     .precision = OM_PRECISION_FORCE_FP16,
                     .high_performance = 1,
                     .cmdline = "test_acl_api"};
  return mb_compile(&m, &opt, size);
}

static void *compile_aipp_gears(size_t *size) {
  const char *conf = "aipp_op {\n aipp_mode: dynamic\n related_input_rank: 0\n max_src_image_size: 600\n}\n";
  const char *path = "tmp_acl_api.cfg";
  CHECK(test_write_file(path, conf, strlen(conf)) == 0);
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", 1, 4, (int64_t[]){1, C, H, W}, (const char *const[]){"N", NULL, NULL, NULL});
  mb_node(&m, "Relu", "relu", "x", "y");
  mb_output(&m, "y");
  atc_options opt = {.model_path = "acl_api_aipp.onnx",
                     .input_shape = "x:-1,3,6,8",
                     .dynamic_batch_size = "1,2",
                     .insert_op_conf = path,
                     .soc_version = "Ascend310",
                     .precision = OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE,
                     .high_performance = 1,
                     .cmdline = "test_acl_api"};
  void *om = mb_compile(&m, &opt, size);
  remove(path);
  return om;
}

/* --- a thread processing callbacks, and a gate holding a stream busy */

static atomic_int stop_worker, gate_open;
static void *worker_main(void *arg) {
  (void)arg;
  while (!atomic_load(&stop_worker)) {
    aclError e = aclrtProcessReport(20);
    if (e == ACL_ERROR_RT_THREAD_SUBSCRIBE)
      usleep(1000);
    else if (e != ACL_ERROR_RT_REPORT_TIMEOUT)
      CHECK_EQ_INT(e, ACL_SUCCESS);
  }
  return NULL;
}
static void wait_gate(void *arg) {
  (void)arg;
  while (!atomic_load(&gate_open))
    usleep(1000);
}

/* Queues the gate on s (its thread, worker, subscribed): s is busy until open_gate. */
static void close_gate(pthread_t worker, aclrtStream s) {
  atomic_store(&gate_open, 0);
  OK(aclrtSubscribeReport((uint64_t)worker, s));
  OK(aclrtLaunchCallback(wait_gate, NULL, ACL_CALLBACK_BLOCK, s));
}
static void open_gate(pthread_t worker, aclrtStream s) {
  atomic_store(&gate_open, 1);
  OK(aclrtSynchronizeStream(s));
  OK(aclrtUnSubscribeReport((uint64_t)worker, s));
}

/* --- the add model's datasets */

typedef struct io {
  void *dev[3];
  aclmdlDataset *in, *out;
} io;

static void io_new(io *b, float xv, float zv) {
  static float x[N], z[N];
  b->in = aclmdlCreateDataset(), b->out = aclmdlCreateDataset();
  for (int i = 0; i < N; i++)
    x[i] = xv + (float)(i % 7), z[i] = zv;
  for (int i = 0; i < 3; i++) {
    OK(aclrtMalloc(&b->dev[i], sizeof x, ACL_MEM_MALLOC_HUGE_FIRST));
    OK(aclmdlAddDatasetBuffer(i < 2 ? b->in : b->out, aclCreateDataBuffer(b->dev[i], sizeof x)));
  }
  OK(aclrtMemcpy(b->dev[0], sizeof x, x, sizeof x, ACL_MEMCPY_HOST_TO_DEVICE));
  OK(aclrtMemcpy(b->dev[1], sizeof z, z, sizeof z, ACL_MEMCPY_HOST_TO_DEVICE));
  OK(aclrtMemset(b->dev[2], sizeof x, 0, sizeof x));
}

/* 1 when the output is x + z of io_new's values. */
static int io_right(io *b, float xv, float zv) {
  static float y[N];
  OK(aclrtMemcpy(y, sizeof y, b->dev[2], sizeof y, ACL_MEMCPY_DEVICE_TO_HOST));
  int ok = 1;
  for (int i = 0; i < N; i++)
    ok &= y[i] == xv + (float)(i % 7) + zv;
  return ok;
}

static void io_free(io *b) {
  for (int i = 0; i < 2; i++)
    OK(aclDestroyDataBuffer(aclmdlGetDatasetBuffer(b->in, (size_t)i)));
  OK(aclDestroyDataBuffer(aclmdlGetDatasetBuffer(b->out, 0)));
  OK(aclmdlDestroyDataset(b->in));
  OK(aclmdlDestroyDataset(b->out));
  for (int i = 0; i < 3; i++)
    OK(aclrtFree(b->dev[i]));
}

/* --- descriptions without loading */

static void check_same_desc(aclmdlDesc *a, aclmdlDesc *b) {
  CHECK(aclmdlGetNumInputs(a) == aclmdlGetNumInputs(b) && aclmdlGetNumOutputs(a) == aclmdlGetNumOutputs(b));
  for (int out = 0; out < 2; out++)
    for (size_t i = 0; i < (out ? aclmdlGetNumOutputs(a) : aclmdlGetNumInputs(a)); i++) {
      aclmdlIODims da, db;
      OK(out ? aclmdlGetOutputDims(a, i, &da) : aclmdlGetInputDims(a, i, &da));
      OK(out ? aclmdlGetOutputDims(b, i, &db) : aclmdlGetInputDims(b, i, &db));
      CHECK(memcmp(&da, &db, sizeof da) == 0);
      if (out) {
        OK(aclmdlGetCurOutputDims(b, i, &db));
        CHECK(memcmp(&da, &db, sizeof da) == 0);
      }
      CHECK(strcmp(out ? aclmdlGetOutputNameByIndex(a, i) : aclmdlGetInputNameByIndex(a, i),
                   out ? aclmdlGetOutputNameByIndex(b, i) : aclmdlGetInputNameByIndex(b, i)) == 0);
      CHECK((out ? aclmdlGetOutputSizeByIndex(a, i) : aclmdlGetInputSizeByIndex(a, i)) ==
            (out ? aclmdlGetOutputSizeByIndex(b, i) : aclmdlGetInputSizeByIndex(b, i)));
      CHECK((out ? aclmdlGetOutputDataType(a, i) : aclmdlGetInputDataType(a, i)) ==
            (out ? aclmdlGetOutputDataType(b, i) : aclmdlGetInputDataType(b, i)));
      CHECK((out ? aclmdlGetOutputFormat(a, i) : aclmdlGetInputFormat(a, i)) ==
            (out ? aclmdlGetOutputFormat(b, i) : aclmdlGetInputFormat(b, i)));
    }
  aclmdlBatch ba, bb;
  OK(aclmdlGetDynamicBatch(a, &ba));
  OK(aclmdlGetDynamicBatch(b, &bb));
  CHECK(memcmp(&ba, &bb, sizeof ba) == 0);
}

/* x [1,6] -> TopK k=2 "top" (values v, indices i) -> graph outputs i then
 * v, or (out_nodes) the node outputs atc --out_nodes picks. */
static void *compile_topk(const char *out_nodes, size_t *size) {
  static const int64_t k = 2;
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", 1, 2, (int64_t[]){1, 6}, NULL);
  mb_init_raw(&m, "k", DT_INT64, 1, (int64_t[]){1}, &k, sizeof k);
  mb_node(&m, "TopK", "top", "x,k", "v,i");
  mb_node(&m, "Neg", "neg", "v", "nv");
  mb_output(&m, "i");
  mb_output(&m, "nv");
  atc_options opt = {.model_path = "acl_api_topk.onnx",
                     .soc_version = "Ascend310",
                     .precision = OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE,
                     .out_nodes = out_nodes,
                     .cmdline = "test_acl_api"};
  return mb_compile(&m, &opt, size);
}

/* An ONNX model's output names as AscendCL documents them for atc's
 * packages: "node:edge:tensor", or "node:edge" for outputs --out_nodes
 * picked; aclmdlGetOutputIndexByName takes that name or the tensor's, and
 * aclmdlGetOutputDims' name is the same; inputs keep their tensor names. */
static void test_output_names(void) {
  static const struct {
    const char *out_nodes, *names[2], *tensors[2];
  } cases[] = {
      {NULL, {"top:1:i", "neg:0:nv"}, {"i", "nv"}},
      {"top:1;top:0", {"top:1", "top:0"}, {"i", "v"}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    size_t size = 0;
    void *om = compile_topk(cases[c].out_nodes, &size);
    CHECK(om != NULL);
    if (!om) continue;
    aclmdlDesc *d = aclmdlCreateDesc();
    OK(aclmdlGetDescFromMem(d, om, size));
    CHECK(strcmp(aclmdlGetInputNameByIndex(d, 0), "x") == 0);
    for (size_t o = 0; o < 2; o++) {
      const char *name = aclmdlGetOutputNameByIndex(d, o);
      CHECKF(strcmp(name, cases[c].names[o]) == 0, "  case %zu output %zu: '%s', want '%s'", c, o, name,
             cases[c].names[o]);
      size_t idx = 9, tidx = 9;
      OK(aclmdlGetOutputIndexByName(d, cases[c].names[o], &idx));
      OK(aclmdlGetOutputIndexByName(d, cases[c].tensors[o], &tidx));
      CHECK(idx == o && tidx == o);
      aclmdlIODims dims;
      OK(aclmdlGetOutputDims(d, o, &dims));
      CHECK(strcmp(dims.name, cases[c].names[o]) == 0 && dims.dimCount == 2 && dims.dims[1] == 2);
    }
    size_t idx;
    EXPECT_ACL(aclmdlGetOutputIndexByName(d, "top:0:v", &idx), ACL_ERROR_INVALID_PARAM,
               "no output named 'top:0:v'");
    OK(aclmdlDestroyDesc(d));
    free(om);
  }
}

static void test_desc_from(const char *path, const void *om, size_t size, int gears) {
  uint32_t id;
  OK(aclmdlLoadFromMem(om, size, &id));
  aclmdlDesc *loaded = aclmdlCreateDesc(), *file = aclmdlCreateDesc(), *mem = aclmdlCreateDesc();
  OK(aclmdlGetDesc(loaded, id));
  OK(aclmdlGetDescFromFile(file, path));
  OK(aclmdlGetDescFromMem(mem, om, size));
  check_same_desc(loaded, file);
  check_same_desc(loaded, mem);
  if (gears) {
    aclmdlBatch b;
    OK(aclmdlGetDynamicBatch(file, &b));
    CHECK(b.batchCount == 2 && b.batch[0] == 1 && b.batch[1] == 2);
  }
  OK(aclmdlUnload(id));
  aclmdlIODims d;
  OK(aclmdlGetInputDims(file, 0, &d)); /* the description outlives any load */
  EXPECT_ACL(aclmdlGetDescFromFile(NULL, path), ACL_ERROR_INVALID_PARAM,
             "aclmdlGetDescFromFile: modelDesc is NULL");
  EXPECT_ACL(aclmdlGetDescFromFile(file, NULL), ACL_ERROR_INVALID_PARAM, "modelPath is NULL");
  EXPECT_ACL(aclmdlGetDescFromFile(file, ""), ACL_ERROR_INVALID_PARAM, "modelPath is empty");
  CHECK(aclmdlGetDescFromFile(file, "no_such_model.om") != ACL_SUCCESS);
  CHECK(strstr(aclGetRecentErrMsg(), "aclmdlGetDescFromFile") != NULL);
  EXPECT_ACL(aclmdlGetDescFromMem(mem, NULL, size), ACL_ERROR_INVALID_PARAM, "model is NULL");
  EXPECT_ACL(aclmdlGetDescFromMem(mem, om, 0), ACL_ERROR_INVALID_PARAM, "modelSize is 0");
  static const char junk[256] = "not an om";
  CHECK(aclmdlGetDescFromMem(mem, junk, sizeof junk) != ACL_SUCCESS);
  CHECK(strstr(aclGetRecentErrMsg(), "aclmdlGetDescFromMem: model data") != NULL);
  OK(aclmdlDestroyDesc(loaded));
  OK(aclmdlDestroyDesc(file));
  OK(aclmdlDestroyDesc(mem));
}

static void test_aipp_data_size(const void *om, size_t size) {
  aclmdlDesc *d = aclmdlCreateDesc();
  OK(aclmdlGetDescFromMem(d, om, size));
  size_t p = 0, bytes = 0;
  OK(aclmdlGetInputIndexByName(d, ACL_DYNAMIC_AIPP_NAME, &p));
  aclmdlIODims dims;
  OK(aclmdlGetInputDims(d, p, &dims)); /* [-1, record]: a record an image of batch gears 1, 2 */
  CHECK(dims.dimCount == 2 && dims.dims[0] == -1);
  for (uint64_t batch = 1; batch <= 2; batch++) {
    OK(aclmdlGetAippDataSize(batch, &bytes));
    CHECK(bytes == batch * (size_t)dims.dims[1]);
  }
  CHECK(bytes == aclmdlGetInputSizeByIndex(d, p)); /* the largest gear's */
  EXPECT_ACL(aclmdlGetAippDataSize(0, &bytes), ACL_ERROR_INVALID_PARAM, "batchSize 0");
  EXPECT_ACL(aclmdlGetAippDataSize(1, NULL), ACL_ERROR_INVALID_PARAM, "size is NULL");
  OK(aclmdlDestroyDesc(d));
}

/* --- runs with a configuration */

static void test_execute_v2(uint32_t id, pthread_t worker) {
  aclmdlExecConfigHandle *h = aclmdlCreateExecConfigHandle();
  CHECK(h != NULL);
  int32_t ms = 20;
  EXPECT_ACL(aclmdlSetExecConfigOpt(NULL, ACL_MDL_STREAM_SYNC_TIMEOUT, &ms, sizeof ms),
             ACL_ERROR_INVALID_PARAM, "handle is NULL");
  EXPECT_ACL(aclmdlSetExecConfigOpt(h, ACL_MDL_STREAM_SYNC_TIMEOUT, NULL, 4), ACL_ERROR_INVALID_PARAM,
             "attrValue is NULL");
  EXPECT_ACL(aclmdlSetExecConfigOpt(h, (aclmdlExecConfigAttr)99, &ms, sizeof ms), ACL_ERROR_INVALID_PARAM,
             "attr 99");
  EXPECT_ACL(aclmdlSetExecConfigOpt(h, ACL_MDL_WORK_ADDR_PTR, &h, sizeof h), ACL_ERROR_INVALID_PARAM,
             "ACL_MDL_WORK_ADDR_PTR is not supported");
  size_t z = 64;
  EXPECT_ACL(aclmdlSetExecConfigOpt(h, ACL_MDL_AICQOS_SIZET, &z, sizeof z), ACL_ERROR_INVALID_PARAM,
             "ACL_MDL_AICQOS_SIZET is reserved");
  EXPECT_ACL(aclmdlSetExecConfigOpt(h, ACL_MDL_STREAM_SYNC_TIMEOUT, &z, sizeof z), ACL_ERROR_INVALID_PARAM,
             "valueSize 8");
  int32_t zero = 0;
  EXPECT_ACL(aclmdlSetExecConfigOpt(h, ACL_MDL_EVENT_SYNC_TIMEOUT, &zero, sizeof zero),
             ACL_ERROR_INVALID_PARAM, "ACL_MDL_EVENT_SYNC_TIMEOUT 0");
  OK(aclmdlSetExecConfigOpt(h, ACL_MDL_EVENT_SYNC_TIMEOUT, &ms, sizeof ms));

  io b;
  io_new(&b, 1.0f, 2.0f);
  EXPECT_ACL(aclmdlExecuteV2(id, b.in, b.out, NULL, NULL), ACL_ERROR_INVALID_PARAM,
             "aclmdlExecuteV2: handle is NULL");
  EXPECT_ACL(aclmdlExecuteV2(id + 100, b.in, b.out, NULL, h), ACL_ERROR_INVALID_MODEL_ID,
             "aclmdlExecuteV2: modelId");
  OK(aclmdlExecuteV2(id, b.in, b.out, NULL, h)); /* no stream: aclmdlExecute */
  CHECK(io_right(&b, 1.0f, 2.0f));
  aclrtStream s;
  OK(aclrtCreateStream(&s));
  OK(aclrtMemset(b.dev[2], N * 4, 0, N * 4));
  OK(aclmdlExecuteV2(id, b.in, b.out, s, h)); /* on the stream, waited for */
  CHECK(io_right(&b, 1.0f, 2.0f));
  /* the stream is held: the wait gives up after ACL_MDL_STREAM_SYNC_TIMEOUT, the run stays queued */
  OK(aclmdlSetExecConfigOpt(h, ACL_MDL_STREAM_SYNC_TIMEOUT, &ms, sizeof ms));
  OK(aclrtMemset(b.dev[2], N * 4, 0, N * 4));
  close_gate(worker, s);
  EXPECT_ACL(aclmdlExecuteV2(id, b.in, b.out, s, h), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, "within 20 ms");
  open_gate(worker, s);
  CHECK(io_right(&b, 1.0f, 2.0f));
  OK(aclrtMemset(b.dev[2], N * 4, 0, N * 4));
  EXPECT_ACL(aclmdlExecuteAsyncV2(id, b.in, b.out, s, NULL), ACL_ERROR_INVALID_PARAM, "handle is NULL");
  OK(aclmdlExecuteAsyncV2(id, b.in, b.out, s, h));
  OK(aclrtSynchronizeStream(s));
  CHECK(io_right(&b, 1.0f, 2.0f));
  OK(aclrtDestroyStream(s));
  io_free(&b);
  OK(aclmdlDestroyExecConfigHandle(h));
  EXPECT_ACL(aclmdlDestroyExecConfigHandle(NULL), ACL_ERROR_INVALID_PARAM, "handle is NULL");
}

static void test_unsupported_models(const char *path) {
  uint32_t id = 0, q = 0;
  EXPECT_ACL(aclmdlLoadFromFileWithQ(path, &id, &q, 1, &q, 1), ACL_ERROR_FEATURE_UNSUPPORTED,
             "aclmdlLoadFromFileWithQ: model queues");
  EXPECT_ACL(aclmdlLoadFromMemWithQ(path, 4, &id, &q, 1, &q, 1), ACL_ERROR_FEATURE_UNSUPPORTED,
             "aclmdlLoadFromMemWithQ");
  EXPECT_ACL(aclmdlBundleLoadFromFile(path, &id), ACL_ERROR_FEATURE_UNSUPPORTED, "one model per om");
  EXPECT_ACL(aclmdlBundleLoadFromMem(path, 4, &id), ACL_ERROR_FEATURE_UNSUPPORTED, "aclmdlBundleLoadFromMem");
  size_t n;
  EXPECT_ACL(aclmdlBundleGetModelNum(1, &n), ACL_ERROR_FEATURE_UNSUPPORTED, "aclmdlBundleGetModelNum");
  EXPECT_ACL(aclmdlBundleGetModelId(1, 0, &id), ACL_ERROR_FEATURE_UNSUPPORTED, "aclmdlBundleGetModelId");
  EXPECT_ACL(aclmdlBundleUnload(1), ACL_ERROR_FEATURE_UNSUPPORTED, "aclmdlBundleUnload");
  char name[64];
  aclTensorDesc *td = NULL;
  EXPECT_ACL(aclmdlCreateAndGetOpDesc(0, 0, 0, name, sizeof name, &td, &n, &td, &n),
             ACL_ERROR_FEATURE_UNSUPPORTED, "aclmdlCreateAndGetOpDesc");
  EXPECT_ACL(acldumpRegCallback(NULL, 0), ACL_ERROR_INVALID_PARAM,
             "acldumpRegCallback: messageCallback is NULL");
  acldumpUnregCallback();
  EXPECT_ACL(aclSetCompileopt(ACL_PRECISION_MODE, "force_fp16"), ACL_ERROR_FEATURE_UNSUPPORTED,
             "aclSetCompileopt");
  EXPECT_ACL(aclGetCompileoptSize(ACL_PRECISION_MODE) == 0, 1, "aclGetCompileoptSize");
  EXPECT_ACL(aclopCompile("Abs", 0, NULL, 0, NULL, NULL, ACL_ENGINE_SYS, ACL_COMPILE_SYS, NULL),
             ACL_ERROR_FEATURE_UNSUPPORTED, "atc --singleop");
  EXPECT_ACL(aclCreateGraphDumpOpt() == NULL, 1, "aclCreateGraphDumpOpt");
}

/* --- the device */

static void test_device(uint32_t id, pthread_t worker) {
  OK(aclrtSetTsDevice(ACL_TS_ID_AICORE));
  EXPECT_ACL(aclrtSetTsDevice(ACL_TS_ID_RESERVED), ACL_ERROR_INVALID_PARAM, "tsId 2");
  aclrtDeviceStatus status = ACL_RT_DEVICE_STATUS_END;
  OK(aclrtQueryDeviceStatus(0, &status));
  CHECK(status == ACL_RT_DEVICE_STATUS_NORMAL);
  EXPECT_ACL(aclrtQueryDeviceStatus(3, &status), ACL_ERROR_RT_INVALID_DEVICEID, "deviceId 3");

  aclrtUtilizationInfo u;
  OK(aclrtGetDeviceUtilizationRate(0, &u)); /* starts the window */
  io b;
  io_new(&b, 1.0f, 2.0f);
  for (int k = 0; k < 3; k++)
    OK(aclmdlExecute(id, b.in, b.out));
  OK(aclrtGetDeviceUtilizationRate(0, &u));
  CHECK(u.cubeUtilization >= 0 && u.cubeUtilization <= 100 && u.vectorUtilization == u.cubeUtilization);
  CHECK(u.memoryUtilization > 0 && u.memoryUtilization <= 100 && u.utilizationExtend == NULL);
  EXPECT_ACL(aclrtGetDeviceUtilizationRate(0, NULL), ACL_ERROR_INVALID_PARAM, "utilizationInfo is NULL");
  EXPECT_ACL(aclrtGetDeviceUtilizationRate(1, &u), ACL_ERROR_RT_INVALID_DEVICEID, "deviceId 1");

  aclrtFloatOverflowMode mode = ACL_RT_OVERFLOW_MODE_UNDEF;
  OK(aclrtGetDeviceSatMode(&mode));
  CHECK(mode == ACL_RT_OVERFLOW_MODE_INFNAN);
  OK(aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_INFNAN));
  EXPECT_ACL(aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_SATURATION), ACL_ERROR_FEATURE_UNSUPPORTED,
             "inf and NaN");
  EXPECT_ACL(aclrtSetDeviceSatMode((aclrtFloatOverflowMode)7), ACL_ERROR_INVALID_PARAM, "mode 7");

  int32_t can = 1;
  EXPECT_ACL(aclrtDeviceCanAccessPeer(&can, 0, 1), ACL_ERROR_RT_INVALID_DEVICEID, "peerDeviceId 1");
  CHECK(can == 0);
  EXPECT_ACL(aclrtDeviceCanAccessPeer(&can, 0, 0), ACL_ERROR_INVALID_PARAM, "the device itself");
  EXPECT_ACL(aclrtDeviceEnablePeerAccess(1, 0), ACL_ERROR_RT_INVALID_DEVICEID, "aclrtDeviceEnablePeerAccess");
  EXPECT_ACL(aclrtDeviceEnablePeerAccess(1, 1), ACL_ERROR_INVALID_PARAM, "flags 1");
  EXPECT_ACL(aclrtDeviceDisablePeerAccess(2), ACL_ERROR_RT_INVALID_DEVICEID, "aclrtDeviceDisablePeerAccess");

  /* float overflow: 60000 + 60000 is inf in fp16 */
  aclrtStream s;
  OK(aclrtCreateStream(&s));
  void *flag_dev;
  uint64_t flag[8];
  OK(aclrtMalloc(&flag_dev, sizeof flag, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_ACL(aclrtGetOverflowStatus(flag_dev, 4, s), ACL_ERROR_INVALID_PARAM, "less than 8 bytes");
  EXPECT_ACL(aclrtGetOverflowStatus(flag, sizeof flag, s), ACL_ERROR_INVALID_PARAM, "not device memory");
  OK(aclrtResetOverflowStatus(s));
  OK(aclmdlExecuteAsync(id, b.in, b.out, s));
  OK(aclrtGetOverflowStatus(flag_dev, sizeof flag, s));
  OK(aclrtSynchronizeStream(s));
  OK(aclrtMemcpy(flag, sizeof flag, flag_dev, sizeof flag, ACL_MEMCPY_DEVICE_TO_HOST));
  CHECK(flag[0] == 0);
  io big;
  io_new(&big, 60000.0f, 60000.0f);
  OK(aclmdlExecuteAsync(id, big.in, big.out, s));
  OK(aclrtGetOverflowStatus(flag_dev, sizeof flag, s));
  OK(aclrtResetOverflowStatus(s));
  OK(aclrtSynchronizeStream(s));
  OK(aclrtMemcpy(flag, sizeof flag, flag_dev, sizeof flag, ACL_MEMCPY_DEVICE_TO_HOST));
  CHECK(flag[0] == 1 && flag[1] == 0);
  OK(aclrtGetOverflowStatus(flag_dev, sizeof flag, s)); /* after the reset */
  OK(aclrtSynchronizeStream(s));
  OK(aclrtMemcpy(flag, sizeof flag, flag_dev, sizeof flag, ACL_MEMCPY_DEVICE_TO_HOST));
  CHECK(flag[0] == 0);
  io_free(&big);

  /* synchronize the device within a timeout */
  EXPECT_ACL(aclrtSynchronizeDeviceWithTimeout(0), ACL_ERROR_INVALID_PARAM, "timeout 0");
  close_gate(worker, s);
  EXPECT_ACL(aclrtSynchronizeDeviceWithTimeout(20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, "within 20 ms");
  open_gate(worker, s);
  OK(aclrtSynchronizeDeviceWithTimeout(-1));
  OK(aclrtDestroyStream(s));
  OK(aclrtFree(flag_dev));
  io_free(&b);
}

/* --- contexts, streams, events, the rest */

static void test_streams(uint32_t aipp_id, pthread_t worker) {
  int64_t v = 9;
  OK(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &v));
  CHECK(v == 0);
  OK(aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, 1));
  OK(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &v));
  CHECK(v == 1);
  EXPECT_ACL(aclrtCtxSetSysParamOpt(ACL_OPT_ENABLE_DEBUG_KERNEL, 2), ACL_ERROR_INVALID_PARAM, "value 2");
  EXPECT_ACL(aclrtCtxGetSysParamOpt((aclSysParamOpt)5, &v), ACL_ERROR_INVALID_PARAM, "opt 5");
  EXPECT_ACL(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, NULL), ACL_ERROR_INVALID_PARAM, "value is NULL");
  OK(aclrtSetSysParamOpt(ACL_OPT_ENABLE_DEBUG_KERNEL, 1));
  OK(aclrtGetSysParamOpt(ACL_OPT_ENABLE_DEBUG_KERNEL, &v));
  CHECK(v == 1);

  aclrtStream s, s2, s3;
  OK(aclrtCreateStreamWithConfig(&s, 3, ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC));
  EXPECT_ACL(aclrtCreateStreamWithConfig(&s2, 8, 0), ACL_ERROR_INVALID_PARAM, "priority 8");
  EXPECT_ACL(aclrtCreateStreamWithConfig(&s2, 0, 0x10), ACL_ERROR_INVALID_PARAM, "flag 0x10");
  aclrtStreamConfigHandle *h = aclrtCreateStreamConfigHandle();
  uint32_t prio = 2;
  size_t flags = ACL_STREAM_FAST_SYNC;
  OK(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_PRIORITY, &prio, sizeof prio));
  OK(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_FLAG, &flags, sizeof flags));
  EXPECT_ACL(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_WORK_ADDR_PTR, &h, sizeof h), ACL_ERROR_INVALID_PARAM,
             "ACL_RT_STREAM_WORK_ADDR_PTR is not supported");
  EXPECT_ACL(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_PRIORITY, &flags, sizeof flags),
             ACL_ERROR_INVALID_PARAM, "valueSize 8");
  OK(aclrtCreateStreamV2(&s2, h));
  OK(aclrtDestroyStreamConfigHandle(h));
  EXPECT_ACL(aclrtCreateStreamV2(&s3, NULL), ACL_ERROR_INVALID_PARAM, "handle is NULL");

  uint32_t sw = 7;
  OK(aclrtGetStreamOverflowSwitch(s, &sw));
  CHECK(sw == 0);
  OK(aclrtSetStreamOverflowSwitch(s, 1));
  OK(aclrtGetStreamOverflowSwitch(s, &sw));
  CHECK(sw == 1);
  EXPECT_ACL(aclrtSetStreamOverflowSwitch(s, 2), ACL_ERROR_INVALID_PARAM, "flag 2");

  /* query: busy while the gate holds it, complete after */
  aclrtStreamStatus st = ACL_STREAM_STATUS_RESERVED;
  OK(aclrtStreamQuery(s, &st));
  CHECK(st == ACL_STREAM_STATUS_COMPLETE);
  aclrtEvent e;
  OK(aclrtCreateEventExWithFlag(&e, ACL_EVENT_SYNC));
  EXPECT_ACL(aclrtCreateEventExWithFlag(&e, 0x100), ACL_ERROR_INVALID_PARAM, "aclrtCreateEventExWithFlag");
  close_gate(worker, s);
  OK(aclrtRecordEvent(e, s));
  OK(aclrtStreamQuery(s, &st));
  CHECK(st == ACL_STREAM_STATUS_NOT_READY);
  aclrtEventWaitStatus ws = ACL_EVENT_WAIT_STATUS_RESERVED;
  OK(aclrtQueryEventWaitStatus(e, &ws));
  CHECK(ws == ACL_EVENT_WAIT_STATUS_NOT_READY);
  open_gate(worker, s);
  OK(aclrtStreamQuery(s, &st));
  CHECK(st == ACL_STREAM_STATUS_COMPLETE);
  OK(aclrtQueryEventWaitStatus(e, &ws));
  CHECK(ws == ACL_EVENT_WAIT_STATUS_COMPLETE);
  EXPECT_ACL(aclrtQueryEventWaitStatus(e, NULL), ACL_ERROR_INVALID_PARAM, "status is NULL");
  OK(aclrtDestroyEvent(e));

  /* failure modes: a run that fails (dynamic AIPP without parameters) stops
   * a stream in ACL_STOP_ON_FAILURE until the failure is reported */
  EXPECT_ACL(aclrtSetStreamFailureMode(NULL, ACL_STOP_ON_FAILURE), ACL_ERROR_INVALID_PARAM, "default stream");
  EXPECT_ACL(aclrtSetStreamFailureMode(s, 2), ACL_ERROR_INVALID_PARAM, "mode 2");
  OK(aclrtSetStreamFailureMode(s, ACL_STOP_ON_FAILURE));
  aclmdlDesc *d = aclmdlCreateDesc();
  OK(aclmdlGetDesc(d, aipp_id));
  aclmdlDataset *in = aclmdlCreateDataset(), *out = aclmdlCreateDataset();
  void *dev[4];
  for (int i = 0; i < 4; i++) {
    size_t bytes = i < 3 ? aclmdlGetInputSizeByIndex(d, (size_t)i) : aclmdlGetOutputSizeByIndex(d, 0);
    OK(aclrtMalloc(&dev[i], bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    OK(aclrtMemset(dev[i], bytes, 0, bytes));
    OK(aclmdlAddDatasetBuffer(i < 3 ? in : out, aclCreateDataBuffer(dev[i], bytes)));
  }
  size_t gear_index;
  OK(aclmdlGetInputIndexByName(d, ACL_DYNAMIC_TENSOR_NAME, &gear_index));
  OK(aclmdlSetDynamicBatchSize(aipp_id, in, gear_index, 1));
  for (int stop = 1; stop >= 0; stop--) {
    aclrtStream t = stop ? s : s2;
    unsigned char byte = 0;
    OK(aclrtMemset(dev[3], 1, 0, 1));
    OK(aclmdlExecuteAsync(aipp_id, in, out, t));
    OK(aclrtMemsetAsync(dev[3], 1, 0xab, 1, t)); /* skipped after the failure when stop */
    EXPECT_ACL(aclrtSynchronizeStream(t), ACL_ERROR_INVALID_PARAM, "input_format 0");
    OK(aclrtMemcpy(&byte, 1, dev[3], 1, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK_EQ_INT(byte, stop ? 0 : 0xab);
    OK(aclrtMemsetAsync(dev[3], 1, 0xcd, 1, t)); /* the failure was reported: runs again */
    OK(aclrtSynchronizeStream(t));
    OK(aclrtMemcpy(&byte, 1, dev[3], 1, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK_EQ_INT(byte, 0xcd);
  }
  for (int i = 0; i < 4; i++) {
    OK(aclDestroyDataBuffer(aclmdlGetDatasetBuffer(i < 3 ? in : out, i < 3 ? (size_t)i : 0)));
    OK(aclrtFree(dev[i]));
  }
  OK(aclmdlDestroyDataset(in));
  OK(aclmdlDestroyDataset(out));
  OK(aclmdlDestroyDesc(d));
  OK(aclrtDestroyStreamForce(s2));
  OK(aclrtDestroyStream(s));
  EXPECT_ACL(aclrtDestroyStreamForce(s), ACL_ERROR_INVALID_PARAM, "is not a live stream");

  /* exceptions, execution timeout, 32-byte aligned memory */
  OK(aclrtSetExceptionInfoCallback(NULL));
  EXPECT_ACL(aclrtGetTaskIdFromExceptionInfo(NULL) == 0xFFFFFFFFu, 1, "no exception info");
  EXPECT_ACL(aclrtGetErrorCodeFromExceptionInfo(NULL) == 0xFFFFFFFFu, 1,
             "aclrtGetErrorCodeFromExceptionInfo");
  OK(aclrtSetOpExecuteTimeOut(5));
  void *p = NULL;
  OK(aclrtMallocAlign32(&p, 100, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(p && (uintptr_t)p % 32 == 0);
  OK(aclrtFree(p));
  EXPECT_ACL(aclrtMallocAlign32(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM,
             "aclrtMallocAlign32");

  /* virtual memory and shareable handles are not provided; allocator descriptions are plain data */
  aclrtDrvMemHandle mh = NULL;
  aclrtPhysicalMemProp prop = {.location = {0, ACL_MEM_LOCATION_TYPE_DEVICE}};
  EXPECT_ACL(aclrtMallocPhysical(&mh, 1 << 20, &prop, 0), ACL_ERROR_FEATURE_UNSUPPORTED,
             "aclrtMallocPhysical: virtual memory management");
  EXPECT_ACL(aclrtReserveMemAddress(&p, 1 << 20, 0, NULL, 0), ACL_ERROR_FEATURE_UNSUPPORTED,
             "aclrtReserveMemAddress");
  size_t gran = 0;
  EXPECT_ACL(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &gran),
             ACL_ERROR_FEATURE_UNSUPPORTED, "aclrtMemGetAllocationGranularity");
  int32_t pid = 0;
  OK(aclrtDeviceGetBareTgid(&pid));
  CHECK(pid == (int32_t)getpid());
  aclrtAllocatorDesc ad = aclrtAllocatorCreateDesc();
  CHECK(ad != NULL);
  OK(aclrtAllocatorSetObjToDesc(ad, &pid));
  EXPECT_ACL(aclrtAllocatorSetFreeFuncToDesc(NULL, NULL), ACL_ERROR_INVALID_PARAM, "allocatorDesc is NULL");
  EXPECT_ACL(aclrtAllocatorRegister(NULL, ad), ACL_ERROR_FEATURE_UNSUPPORTED, "external allocators");
  OK(aclrtAllocatorDestroyDesc(ad));

  /* the last error of this thread; the runtime's attributes */
  CHECK_EQ_INT(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_FEATURE_UNSUPPORTED);
  CHECK_EQ_INT(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_FEATURE_UNSUPPORTED);
  CHECK_EQ_INT(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_SUCCESS);
  const aclCannAttr *attrs = NULL;
  size_t nattrs = 0;
  int32_t on = -1;
  OK(aclGetCannAttributeList(&attrs, &nattrs));
  CHECK(nattrs == 1 && attrs[0] == ACL_CANN_ATTR_INF_NAN);
  OK(aclGetCannAttribute(ACL_CANN_ATTR_INF_NAN, &on));
  CHECK(on == 1);
  OK(aclGetCannAttribute(ACL_CANN_ATTR_BF16, &on));
  CHECK(on == 0);
  EXPECT_ACL(aclGetCannAttribute((aclCannAttr)9, &on), ACL_ERROR_INVALID_PARAM, "cannAttr 9");
  ACL_APP_LOG(ACL_DEBUG, "not shown at the default level %d", 3);
}

/* --- tensor descriptions: what single operators would read */

static void test_tensor_desc(void) {
  aclTensorDesc *d = aclCreateTensorDesc(ACL_FLOAT16, 4, (int64_t[]){1, 20, -1, 8}, ACL_FORMAT_NCHW);
  int64_t r[2] = {0, 0};
  OK(aclGetTensorDescDimRange(d, 1, 2, r));
  CHECK(r[0] == 20 && r[1] == 20);
  EXPECT_ACL(aclGetTensorDescDimRange(d, 2, 2, r), ACL_ERROR_INVALID_PARAM, "dim 2 is unknown");
  EXPECT_ACL(aclGetTensorDescDimRange(d, 1, 3, r), ACL_ERROR_INVALID_PARAM, "dimRangeNum 3");
  EXPECT_ACL(aclGetTensorDescDimRange(d, 4, 2, r), ACL_ERROR_INVALID_PARAM, "index 4");
  int64_t ranges[4][2] = {{1, 1}, {20, 20}, {1, -1}, {8, 8}}, bad[1][2] = {{5, 2}};
  EXPECT_ACL(aclSetTensorShapeRange(d, 3, ranges), ACL_ERROR_INVALID_PARAM, "dimsCount 3");
  EXPECT_ACL(aclSetTensorValueRange(d, 1, bad), ACL_ERROR_INVALID_PARAM, "least > greatest");
  OK(aclSetTensorShapeRange(d, 4, ranges));
  OK(aclGetTensorDescDimRange(d, 2, 2, r));
  CHECK(r[0] == 1 && r[1] == -1);
  OK(aclSetTensorValueRange(d, 1, ranges));
  OK(aclSetTensorOriginShape(d, 3, (int64_t[]){20, 4, 8}));
  OK(aclSetTensorOriginFormat(d, ACL_FORMAT_ND));
  OK(aclSetTensorStorageFormat(d, ACL_FORMAT_NCHW));
  static const float k[2] = {1.0f, 2.0f};
  OK(aclSetTensorConst(d, (void *)k, sizeof k));
  EXPECT_ACL(aclSetTensorConst(d, (void *)k, 0), ACL_ERROR_INVALID_PARAM, "length is 0");
  OK(aclSetTensorPlaceMent(d, ACL_MEMTYPE_HOST));
  EXPECT_ACL(aclSetTensorPlaceMent(d, (aclMemType)7), ACL_ERROR_INVALID_PARAM, "memType 7");
  OK(aclSetTensorDynamicInput(d, "x"));
  CHECK(aclGetTensorDescByIndex(d, 0) == d);
  EXPECT_ACL(aclGetTensorDescByIndex(d, 1) == NULL, 1, "not an array's");
  EXPECT_ACL(aclGetTensorDescAddress(d) == NULL, 1, "holds no address");
  aclTensorDesc *t = NULL;
  OK(aclSetTensorStorageShape(d, 4, (int64_t[]){1, 20, 6, 8})); /* (drops the old shape's ranges) */
  OK(aclTransTensorDescFormat(d, ACL_FORMAT_NC1HWC0, &t));
  CHECK(t && aclGetTensorDescNumDims(t) == 5 && aclGetTensorDescDim(t, 1) == 2 &&
        aclGetTensorDescDim(t, 4) == 16 && aclGetTensorDescFormat(t) == ACL_FORMAT_NC1HWC0 &&
        aclGetTensorDescType(t) == ACL_FLOAT16);
  aclDestroyTensorDesc(t);
  OK(aclTransTensorDescFormat(d, ACL_FORMAT_NHWC, &t));
  CHECK(t && aclGetTensorDescDim(t, 1) == 6 && aclGetTensorDescDim(t, 3) == 20);
  aclDestroyTensorDesc(t);
  EXPECT_ACL(aclTransTensorDescFormat(d, ACL_FORMAT_FRACTAL_Z, &t), ACL_ERROR_FEATURE_UNSUPPORTED,
             "only NCHW <-> NHWC");
  CHECK(t == NULL);
  aclDestroyTensorDesc(d);
}

/* aclInit's configuration file (the process is not initialized on entry
 * and on return): JSON, its dump and profiling sections refused when they
 * ask for data, err_msg_mode and defaultDevice honoured. */
static aclError init_with(const char *dir, const char *json) {
  char path[1024];
  snprintf(path, sizeof path, "%s/acl.json", dir);
  CHECK_EQ_INT(test_write_file(path, json, strlen(json)), 0);
  return aclInit(path);
}

static void *fail_on_thread(void *arg) {
  (void)arg;
  void *p;
  CHECK_EQ_INT(aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  return NULL;
}

static void test_init_config(const char *add_path) {
  const char *dir = test_tmpdir("acl_api_init");
  /* not JSON, or nested deeper than AscendCL reads */
  EXPECT_ACL(init_with(dir, "{\n  \"dump\": {\n"), ACL_ERROR_PARSE_FILE,
             "line 3: a member without a quoted name");
  EXPECT_ACL(init_with(dir, "[]"), ACL_ERROR_PARSE_FILE, "not a JSON object");
  EXPECT_ACL(init_with(dir, "{} {}"), ACL_ERROR_PARSE_FILE, "text after the closing");
  EXPECT_ACL(init_with(dir, "{\"a\": [[[[[[[[[[[1]]]]]]]]]]]}"), ACL_ERROR_PARSE_FILE,
             "'[' nested deeper than 10 levels");
  EXPECT_ACL(init_with(dir, "{\"a\": \"\\x\"}"), ACL_ERROR_PARSE_FILE, "an unknown escape");
  /* dump and profiling sections: checked, the key named; what is not provided said so */
  EXPECT_ACL(init_with(dir, "{\"dump\": {\"dump_list\": [{\"model_name\": \"m\"}]}}"),
             ACL_ERROR_INVALID_DUMP_CONFIG, "\"dump.dump_path\": a dump_list needs the directory");
  EXPECT_ACL(init_with(dir, "{\"dump\": {\"dump_path\": \"/nonexistent/d\", \"dump_list\": [{}]}}"),
             ACL_ERROR_INVALID_DUMP_CONFIG, "\"dump.dump_path\": '/nonexistent/d'");
  EXPECT_ACL(init_with(dir, "{\"dump\": {\"dump_mode\": \"outputs\"}}"), ACL_ERROR_INVALID_DUMP_CONFIG,
             "\"dump.dump_mode\": must be");
  EXPECT_ACL(init_with(dir, "{\"dump\": {\"dump_path\": \".\", \"dump_list\": [\"m\"]}}"),
             ACL_ERROR_INVALID_DUMP_CONFIG, "\"dump.dump_list[]\": each entry is an object");
  EXPECT_ACL(init_with(dir, "{\"dump\": {\"dump_scene\": \"lite_exception\"}}"),
             ACL_ERROR_FEATURE_UNSUPPORTED, "\"dump.dump_scene\"");
  EXPECT_ACL(init_with(dir, "{\"dump\": {\"dump_debug\": \"on\", \"dump_path\": \"d\"}}"),
             ACL_ERROR_FEATURE_UNSUPPORTED, "\"dump.dump_debug\": the overflow dump is not provided");
  EXPECT_ACL(init_with(dir, "{\"dump\": {\"dump_data\": \"stats\"}}"), ACL_ERROR_FEATURE_UNSUPPORTED,
             "\"dump.dump_data\"");
  EXPECT_ACL(init_with(dir, "{\"profiler\": {\"switch\": \"yes\"}}"), ACL_ERROR_INVALID_PROFILING_CONFIG,
             "\"profiler.switch\": must be");
  EXPECT_ACL(init_with(dir, "{\"profiler\": {\"switch\": \"on\", \"output\": \"/nonexistent/p\"}}"),
             ACL_ERROR_INVALID_PROFILING_CONFIG, "\"profiler.output\": '/nonexistent/p'");
  EXPECT_ACL(init_with(dir, "{\"err_msg_mode\": \"2\"}"), ACL_ERROR_INVALID_PARAM,
             "\"err_msg_mode\": must be");
  EXPECT_ACL(init_with(dir, "{\"defaultDevice\": {\"default_device\": \"1\"}}"),
             ACL_ERROR_RT_INVALID_DEVICEID, "\"defaultDevice.default_device\"");
  EXPECT_ACL(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE, "not initialized"); /* (none of them initialized) */
  /* the samples' files: empty, or the sections switched off */
  OK(init_with(dir, "{}"));
  OK(aclFinalize());
  OK(init_with(dir, "{\n \"dump\": {\"dump_path\": \"\", \"dump_mode\": \"output\", \"dump_list\": []},\n"
                    " \"profiler\": {\"switch\": \"off\"}, \"max_opqueue_num\": \"20000\",\n"
                    " \"dump_scene_x\": [true, false, null, -1.5e3, {\"k\": \"\\u00e9\\n\"}]}\n"));
  OK(aclFinalize());
  OK(init_with(dir, "{\"dump\": {\"dump_scene\": \"lite_exception:disable\", \"dump_op_switch\": \"off\"}}"));
  OK(aclFinalize());
  /* sections that dump and profile: accepted; profiling until aclFinalize, which writes the (empty) summary
   */
  char json[1400];
  snprintf(json, sizeof json,
           "{\"dump\": {\"dump_path\": \"%s\", \"dump_mode\": \"all\", \"dump_op_switch\": \"on\",\n"
           " \"dump_list\": [{\"model_name\": \"m\", \"layer\": [\"a\", \"b\"]}, {\"layer\": []}]},\n"
           " \"profiler\": {\"switch\": \"on\", \"output\": \"%s\", \"aicpu\": \"on\"}}",
           dir, dir);
  OK(init_with(dir, json));
  EXPECT_ACL(aclprofInit(dir, strlen(dir)), ACL_ERROR_PROF_API_CONFLICT,
             "aclprofInit: aclInit's configuration");
  EXPECT_ACL(aclmdlInitDump(), ACL_ERROR_DUMP_ALREADY_RUN, "aclmdlInitDump");
  OK(aclFinalize());
  char csv[1100];
  snprintf(csv, sizeof csv, "%s/op_summary_%ld_1.csv", dir, (long)getpid());
  CHECKF(access(csv, R_OK) == 0, "  aclFinalize wrote no %s", csv);
  /* err_msg_mode "1": another thread's failure is the process's message */
  pthread_t t;
  OK(init_with(dir, "{\"err_msg_mode\": \"1\"}"));
  OK(aclrtSetDevice(0));
  CHECK_EQ_INT(pthread_create(&t, NULL, fail_on_thread, NULL), 0);
  pthread_join(t, NULL);
  const char *msg = aclGetRecentErrMsg();
  CHECK(msg && strstr(msg, "aclrtMalloc: size is 0"));
  OK(aclrtResetDevice(0));
  OK(aclFinalize());
  OK(init_with(dir, "{\"err_msg_mode\": \"0\"}")); /* per thread again */
  OK(aclrtSetDevice(0));
  CHECK_EQ_INT(pthread_create(&t, NULL, fail_on_thread, NULL), 0);
  pthread_join(t, NULL);
  CHECK(aclGetRecentErrMsg() == NULL);
  OK(aclrtResetDevice(0));
  OK(aclFinalize());
  /* defaultDevice: without aclrtSetDevice the thread works in device 0's default context */
  OK(init_with(dir, "{\"defaultDevice\": {\"default_device\": \"0\"}}"));
  aclrtContext c = NULL;
  OK(aclrtGetCurrentContext(&c));
  CHECK(c != NULL);
  void *p;
  OK(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  uint32_t id;
  OK(aclmdlLoadFromFile(add_path, &id));
  OK(aclmdlUnload(id));
  OK(aclrtFree(p));
  EXPECT_ACL(aclrtDestroyContext(c), ACL_ERROR_INVALID_PARAM, "default context");
  OK(aclrtResetDevice(0));
  OK(aclFinalize());
  OK(aclInit(NULL)); /* (and without it, no context) */
  EXPECT_ACL(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_CONTEXT_NULL, "no current context");
  OK(aclFinalize());
}

int main(void) {
  size_t add_size = 0, aipp_size = 0;
  void *add = compile_add(&add_size), *aipp = compile_aipp_gears(&aipp_size);
  CHECK(add && aipp);
  if (!add || !aipp) return test_summary("acl_api");
  char add_path[1024], aipp_path[1024];
  snprintf(add_path, sizeof add_path, "%s/add.om", test_tmpdir("acl_api"));
  snprintf(aipp_path, sizeof aipp_path, "%s/aipp.om", test_tmpdir("acl_api_aipp"));
  CHECK_EQ_INT(test_write_file(add_path, add, add_size), 0);
  CHECK_EQ_INT(test_write_file(aipp_path, aipp, aipp_size), 0);
  aclmdlDesc *d = aclmdlCreateDesc();
  EXPECT_ACL(aclmdlGetDescFromFile(d, add_path), ACL_ERROR_UNINITIALIZE, "aclmdlGetDescFromFile");
  EXPECT_ACL(aclrtQueryDeviceStatus(0, NULL), ACL_ERROR_UNINITIALIZE, "aclrtQueryDeviceStatus");
  OK(aclmdlDestroyDesc(d));
  OK(aclInit(NULL));
  OK(aclrtSetDevice(0));
  pthread_t worker;
  CHECK_EQ_INT(pthread_create(&worker, NULL, worker_main, NULL), 0);

  test_tensor_desc();
  test_output_names();
  test_desc_from(add_path, add, add_size, 0);
  test_desc_from(aipp_path, aipp, aipp_size, 1);
  test_aipp_data_size(aipp, aipp_size);
  test_unsupported_models(add_path);
  uint32_t id, aipp_id;
  OK(aclmdlLoadFromFile(add_path, &id));
  OK(aclmdlLoadFromFile(aipp_path, &aipp_id));
  test_execute_v2(id, worker);
  test_device(id, worker);
  test_streams(aipp_id, worker);
  OK(aclmdlUnload(id));
  OK(aclmdlUnload(aipp_id));

  atomic_store(&stop_worker, 1);
  pthread_join(worker, NULL);
  /* a forced reset drops every aclrtSetDevice (here two) */
  OK(aclrtSetDevice(0));
  EXPECT_ACL(aclrtResetDeviceForce(1), ACL_ERROR_RT_INVALID_DEVICEID, "aclrtResetDeviceForce: deviceId 1");
  OK(aclrtResetDeviceForce(0));
  EXPECT_ACL(aclrtResetDevice(0), ACL_ERROR_RT_INVALID_DEVICEID, "was not set");
  OK(aclFinalize());
  test_init_config(add_path);
  free(add);
  free(aipp);
  return test_summary("acl_api");
}
