/* test_acl_gears.c - libascendcl's shape gear calls (acl_mdl.h) against
 * AscendCL's documented behaviour, on models compiled in process with
 * atc's --dynamic_batch_size, --dynamic_image_size and --dynamic_dims:
 *   - the description lists the gears and the inputs' formats (aclmdlGetDynamicBatch,
 *     aclmdlGetDynamicHW, aclmdlGetInputDynamicGearCount and
 *     aclmdlGetInputDynamicDims: every input's dims per gear) and has the
 *     extra input ACL_DYNAMIC_TENSOR_NAME, found by name;
 *   - each gear, chosen with aclmdlSet*, runs (synchronously and on a
 *     stream) equal to libomrt's run of that gear, and aclmdlGetCurOutputDims
 *     gives the outputs' dims at the gear the last Set call chose;
 *   - a value that is not a gear, a Set call of the wrong kind, a wrong
 *     index, a dataset without the dynamic input or with a buffer smaller
 *     than the gear's are refused, the message naming the gears or sizes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "driver/compile.h"
#include "omrt.h"
#include "onnx_mb.h"
#include "acl_check.h"
#include "support.h"

/* conv: x [N, 3, H, W] -> Conv 3x3 pad 1 (4 channels) -> Relu = y.
 * add: a [1, L], b [1, L] -> Add = y. Compiled with the gear flags. */
static void *compile(int conv, const char *shape, const char *batch, const char *hw, const char *dims,
                     size_t *size) {
  static float w[4 * 3 * 3 * 3];
  for (int i = 0; i < 108; i++)
    w[i] = (float)((i * 37) % 17) * 0.05f - 0.4f;
  mb m;
  mb_init(&m, 13);
  if (conv) {
    mb_input(&m, "x", 1, 4, (int64_t[]){1, 3, 8, 8}, (const char *const[]){"N", NULL, "H", "W"});
    mb_init_raw(&m, "w", 1, 4, (int64_t[]){4, 3, 3, 3}, w, sizeof w);
    Onnx__NodeProto *c = mb_node(&m, "Conv", "conv", "x,w", "c");
    attr_ints(&m, c, "pads", 4, (int64_t[]){1, 1, 1, 1});
    attr_ints(&m, c, "kernel_shape", 2, (int64_t[]){3, 3});
    mb_node(&m, "Relu", "relu", "c", "y");
  } else {
    mb_input(&m, "a", 1, 2, (int64_t[]){1, 4}, (const char *const[]){NULL, "L"});
    mb_input(&m, "b", 1, 2, (int64_t[]){1, 4}, (const char *const[]){NULL, "L"});
    mb_node(&m, "Add", "add", "a,b", "y");
  }
  mb_output(&m, "y");
  atc_options opt = {.model_path = "acl_gears.onnx",
                     .input_shape = shape,
                     .dynamic_batch_size = batch,
                     .dynamic_image_size = hw,
                     .dynamic_dims = dims,
                     .soc_version = "Ascend310",
                     .precision = OM_PRECISION_FORCE_FP16,
                     .high_performance = 1,
                     .cmdline = "test_acl_gears"};
  return mb_compile(&m, &opt, size);
}

enum { MAXB = 4096 };
static float host_in[2][MAXB], host_out[MAXB], ref_out[MAXB];

/* libomrt's run of gear `gear` on host_in into ref_out. */
static void reference(const void *om, size_t size, int gear) {
  omrt_model *m;
  omrt_context *c;
  CHECK_EQ_INT(omrt_model_load_memory(om, size, NULL, &m), OMRT_OK);
  CHECK_EQ_INT(omrt_context_new(m, &c), OMRT_OK);
  CHECK_EQ_INT(omrt_context_set_gear(c, gear), OMRT_OK);
  const void *in[2] = {host_in[0], host_in[1]};
  void *out[1] = {ref_out};
  CHECK_EQ_INT(omrt_execute(c, in, out), OMRT_OK);
  omrt_context_free(c);
  omrt_model_free(m);
}

/* A loaded model with device buffers of the description's sizes: inputs
 * (the last the dynamic one), one output. */
typedef struct loaded {
  uint32_t id;
  aclmdlDesc *desc;
  size_t nin, dyn_index;
  void *dev[4];
  size_t bytes[4];
  aclmdlDataset *in, *out;
} loaded;

static void load(loaded *l, const void *om, size_t size) {
  memset(l, 0, sizeof *l);
  OK(aclmdlLoadFromMem(om, size, &l->id));
  l->desc = aclmdlCreateDesc();
  OK(aclmdlGetDesc(l->desc, l->id));
  l->nin = aclmdlGetNumInputs(l->desc);
  OK(aclmdlGetInputIndexByName(l->desc, ACL_DYNAMIC_TENSOR_NAME, &l->dyn_index));
  CHECK_EQ_INT((int)l->dyn_index, (int)l->nin - 1);
  CHECK_EQ_INT(aclmdlGetInputDataType(l->desc, l->dyn_index), ACL_INT64);
  l->in = aclmdlCreateDataset();
  l->out = aclmdlCreateDataset();
  for (size_t i = 0; i <= l->nin; i++) {
    l->bytes[i] = i < l->nin ? aclmdlGetInputSizeByIndex(l->desc, i) : aclmdlGetOutputSizeByIndex(l->desc, 0);
    OK(aclrtMalloc(&l->dev[i], l->bytes[i], ACL_MEM_MALLOC_HUGE_FIRST));
    OK(aclmdlAddDatasetBuffer(i < l->nin ? l->in : l->out, aclCreateDataBuffer(l->dev[i], l->bytes[i])));
  }
}

static void unload(loaded *l) {
  for (size_t i = 0; i < aclmdlGetDatasetNumBuffers(l->in); i++)
    OK(aclDestroyDataBuffer(aclmdlGetDatasetBuffer(l->in, i)));
  OK(aclDestroyDataBuffer(aclmdlGetDatasetBuffer(l->out, 0)));
  OK(aclmdlDestroyDataset(l->in));
  OK(aclmdlDestroyDataset(l->out));
  for (size_t i = 0; i <= l->nin; i++)
    OK(aclrtFree(l->dev[i]));
  OK(aclmdlDestroyDesc(l->desc));
  OK(aclmdlUnload(l->id));
}

/* Runs the gear the dataset holds (inputs of in_bytes each, output of
 * out_bytes) both ways and compares with libomrt's run of gear `gear`. */
static void run_gear(loaded *l, const void *om, size_t size, int gear, size_t in_bytes, size_t out_bytes) {
  for (size_t i = 0; i + 1 < l->nin; i++) {
    for (size_t k = 0; k < in_bytes / 4; k++)
      host_in[i][k] = (float)((k * 7 + i * 3) % 23) * 0.1f - 1.0f;
    OK(aclrtMemcpy(l->dev[i], l->bytes[i], host_in[i], in_bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  }
  reference(om, size, gear);
  memset(host_out, 0, sizeof host_out);
  OK(aclmdlExecute(l->id, l->in, l->out));
  OK(aclrtMemcpy(host_out, sizeof host_out, l->dev[l->nin], out_bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  CHECK(memcmp(host_out, ref_out, out_bytes) == 0);
  aclrtStream s;
  OK(aclrtCreateStream(&s));
  memset(host_out, 0, sizeof host_out);
  OK(aclrtMemcpy(l->dev[l->nin], l->bytes[l->nin], host_out, l->bytes[l->nin], ACL_MEMCPY_HOST_TO_DEVICE));
  OK(aclmdlExecuteAsync(l->id, l->in, l->out, s));
  OK(aclrtSynchronizeStream(s));
  OK(aclrtDestroyStream(s));
  OK(aclrtMemcpy(host_out, sizeof host_out, l->dev[l->nin], out_bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  CHECK(memcmp(host_out, ref_out, out_bytes) == 0);
}

static void test_batch(void) {
  size_t size;
  void *om = compile(1, "x:-1,3,8,8", "1,2,4", NULL, NULL, &size);
  CHECK(om != NULL);
  if (!om) return;
  loaded l;
  load(&l, om, size);
  CHECK_EQ_INT((int)l.nin, 2);
  CHECK_EQ_INT((int)aclmdlGetInputSizeByIndex(l.desc, 0), 4 * 3 * 64 * 4); /* the largest gear's */
  aclmdlBatch b;
  OK(aclmdlGetDynamicBatch(l.desc, &b));
  CHECK(b.batchCount == 3 && b.batch[0] == 1 && b.batch[1] == 2 && b.batch[2] == 4);
  aclmdlHW hw;
  OK(aclmdlGetDynamicHW(l.desc, (size_t)-1, &hw));
  CHECK_EQ_INT((int)hw.hwCount, 0);
  size_t n = 9;
  OK(aclmdlGetInputDynamicGearCount(l.desc, (size_t)-1, &n));
  CHECK_EQ_INT((int)n, 0);

  /* before any Set call the current output dims are the largest gear's */
  aclmdlIODims cur;
  OK(aclmdlGetCurOutputDims(l.desc, 0, &cur));
  CHECK(cur.dimCount == 4 && cur.dims[0] == 4 && cur.dims[1] == 4 && cur.dims[2] == 8 && cur.dims[3] == 8);
  /* the run refuses a dynamic input no Set call filled (zeros: no gear) */
  EXPECT_ACL(aclmdlExecute(l.id, l.in, l.out), ACL_ERROR_INVALID_PARAM, "1, 2, 4");
  EXPECT_ACL(aclmdlSetDynamicBatchSize(l.id, l.in, l.dyn_index, 3), ACL_ERROR_INVALID_PARAM, "1, 2, 4");
  EXPECT_ACL(aclmdlSetDynamicBatchSize(l.id, l.in, 0, 2), ACL_ERROR_INVALID_PARAM, "is index 1");
  EXPECT_ACL(aclmdlSetDynamicHWSize(l.id, l.in, l.dyn_index, 8, 8), ACL_ERROR_INVALID_PARAM,
             "has batch gears (--dynamic_batch_size), not image size gears");
  static const int gears[3] = {1, 2, 4};
  for (int g = 0; g < 3; g++) {
    OK(aclmdlSetDynamicBatchSize(l.id, l.in, l.dyn_index, (uint64_t)gears[g]));
    run_gear(&l, om, size, g, (size_t)gears[g] * 3 * 64 * 4, (size_t)gears[g] * 4 * 64 * 4);
  }
  /* The input's dims say which dim the gears vary (-1), V2 alike; a run
   * describes its outputs at its gear; an input description must match it. */
  aclmdlIODims d;
  OK(aclmdlGetInputDims(l.desc, 0, &d));
  CHECK(d.dimCount == 4 && d.dims[0] == -1 && d.dims[1] == 3 && d.dims[2] == 8 && d.dims[3] == 8);
  OK(aclmdlGetInputDimsV2(l.desc, 0, &d));
  CHECK(d.dimCount == 4 && d.dims[0] == -1 && d.dims[1] == 3);
  OK(aclmdlGetInputDims(l.desc, l.dyn_index, &d));
  CHECK(d.dimCount == 1 && d.dims[0] == 1);
  aclmdlIODimsRange range; /* gears are not ranges: none */
  memset(&range, 0xff, sizeof range);
  OK(aclmdlGetInputDimsRange(l.desc, 0, &range));
  CHECK(range.rangeCount == 0);
  OK(aclmdlSetDynamicBatchSize(l.id, l.in, l.dyn_index, 2));
  OK(aclmdlGetCurOutputDims(l.desc, 0, &cur)); /* the gear the Set call chose, before and after its run */
  CHECK(cur.dimCount == 4 && cur.dims[0] == 2 && cur.dims[1] == 4 && cur.dims[2] == 8 && cur.dims[3] == 8);
  OK(aclmdlExecute(l.id, l.in, l.out));
  OK(aclmdlGetCurOutputDims(l.desc, 0, &cur));
  CHECK(cur.dims[0] == 2);
  OK(aclmdlGetOutputDims(l.desc, 0, &cur)); /* (the description's stay the largest gear's) */
  CHECK(cur.dims[0] == 4);
  aclTensorDesc *od = aclmdlGetDatasetTensorDesc(l.out, 0);
  CHECK(od && aclGetTensorDescNumDims(od) == 4 && aclGetTensorDescDim(od, 0) == 2 &&
        aclGetTensorDescDim(od, 1) == 4 && aclGetTensorDescType(od) == aclmdlGetOutputDataType(l.desc, 0));
  aclTensorDesc *want4 = aclCreateTensorDesc(ACL_FLOAT, 4, (int64_t[]){4, 3, 8, 8}, ACL_FORMAT_NCHW);
  OK(aclmdlSetDatasetTensorDesc(l.in, want4, 0));
  EXPECT_ACL(aclmdlExecute(l.id, l.in, l.out), ACL_ERROR_INVALID_PARAM,
             "other dims than the input at the gear");
  OK(aclmdlSetDynamicBatchSize(l.id, l.in, l.dyn_index, 4));
  OK(aclmdlExecuteAsync(l.id, l.in, l.out, NULL));
  CHECK(aclGetTensorDescDim(aclmdlGetDatasetTensorDesc(l.out, 0), 0) == 4);
  OK(aclrtSynchronizeStream(NULL));
  aclDestroyTensorDesc(want4);
  /* an input buffer smaller than the chosen gear's */
  aclmdlDataset *small = aclmdlCreateDataset();
  aclDataBuffer *b0 = aclCreateDataBuffer(l.dev[0], 2 * 3 * 64 * 4), *b1 = aclCreateDataBuffer(l.dev[1], 8);
  OK(aclmdlAddDatasetBuffer(small, b0));
  EXPECT_ACL(aclmdlExecute(l.id, small, l.out), ACL_ERROR_MODEL_INPUT_NOT_MATCH,
             "has 2 inputs (the last: " ACL_DYNAMIC_TENSOR_NAME ")");
  OK(aclmdlAddDatasetBuffer(small, b1));
  OK(aclmdlSetDynamicBatchSize(l.id, small, 1, 4));
  EXPECT_ACL(aclmdlExecute(l.id, small, l.out), ACL_ERROR_MODEL_INPUT_NOT_MATCH,
             "buffer of 1536 bytes, the tensor has 3072 at the gear");
  OK(aclmdlSetDynamicBatchSize(l.id, small, 1, 2));
  OK(aclmdlExecute(l.id, small, l.out));
  OK(aclDestroyDataBuffer(b0));
  OK(aclDestroyDataBuffer(b1));
  OK(aclmdlDestroyDataset(small));
  unload(&l);
  free(om);
}

static void test_image_size(void) {
  size_t size;
  void *om = compile(1, "x:1,3,-1,-1", NULL, "8,8;12,16", NULL, &size);
  CHECK(om != NULL);
  if (!om) return;
  loaded l;
  load(&l, om, size);
  aclmdlHW hw;
  OK(aclmdlGetDynamicHW(l.desc, (size_t)-1, &hw));
  CHECK(hw.hwCount == 2 && hw.hw[0][0] == 8 && hw.hw[0][1] == 8 && hw.hw[1][0] == 12 && hw.hw[1][1] == 16);
  aclmdlBatch b;
  OK(aclmdlGetDynamicBatch(l.desc, &b));
  CHECK_EQ_INT((int)b.batchCount, 0);
  EXPECT_ACL(aclmdlSetDynamicHWSize(l.id, l.in, l.dyn_index, 16, 12), ACL_ERROR_INVALID_PARAM,
             "(its gears: 8x8, 12x16)");
  EXPECT_ACL(aclmdlSetDynamicBatchSize(l.id, l.in, l.dyn_index, 1), ACL_ERROR_INVALID_PARAM,
             "not batch gears");
  OK(aclmdlSetDynamicHWSize(l.id, l.in, l.dyn_index, 12, 16));
  run_gear(&l, om, size, 1, 3 * 12 * 16 * 4, 4 * 12 * 16 * 4);
  OK(aclmdlSetDynamicHWSize(l.id, l.in, l.dyn_index, 8, 8));
  run_gear(&l, om, size, 0, 3 * 8 * 8 * 4, 4 * 8 * 8 * 4);
  aclmdlIODims cur; /* the gear the last Set call chose; a failed Set changes nothing */
  OK(aclmdlGetCurOutputDims(l.desc, 0, &cur));
  CHECK(cur.dimCount == 4 && cur.dims[0] == 1 && cur.dims[1] == 4 && cur.dims[2] == 8 && cur.dims[3] == 8);
  CHECK_EQ_INT(aclmdlSetDynamicHWSize(l.id, l.in, l.dyn_index, 16, 12), ACL_ERROR_INVALID_PARAM);
  OK(aclmdlGetCurOutputDims(l.desc, 0, &cur));
  CHECK(cur.dims[2] == 8 && cur.dims[3] == 8);
  OK(aclmdlSetDynamicHWSize(l.id, l.in, l.dyn_index, 12, 16));
  OK(aclmdlGetCurOutputDims(l.desc, 0, &cur));
  CHECK(cur.dims[2] == 12 && cur.dims[3] == 16);
  unload(&l);
  free(om);
}

static void test_dims(void) {
  size_t size;
  void *om = compile(0, "a:1,-1;b:1,-1", NULL, NULL, "4,4;64,64;100,100", &size);
  CHECK(om != NULL);
  if (!om) return;
  loaded l;
  load(&l, om, size);
  CHECK_EQ_INT((int)l.nin, 3);
  CHECK_EQ_INT(aclmdlGetInputFormat(l.desc, 0), ACL_FORMAT_ND);
  CHECK_EQ_INT(aclmdlGetInputFormat(l.desc, 2), ACL_FORMAT_ND);
  size_t n = 0;
  OK(aclmdlGetInputDynamicGearCount(l.desc, (size_t)-1, &n));
  CHECK_EQ_INT((int)n, 3);
  aclmdlIODims dims[3];
  EXPECT_ACL(aclmdlGetInputDynamicDims(l.desc, (size_t)-1, dims, 2), ACL_ERROR_INVALID_PARAM,
             "has 3 dims gears");
  OK(aclmdlGetInputDynamicDims(l.desc, (size_t)-1, dims, 3));
  CHECK(dims[1].dimCount == 4 && dims[1].dims[0] == 1 && dims[1].dims[1] == 64 && dims[1].dims[2] == 1 &&
        dims[1].dims[3] == 64);
  aclmdlIODims want = {.dimCount = 4, .dims = {1, 64, 1, 32}};
  EXPECT_ACL(aclmdlSetInputDynamicDims(l.id, l.in, l.dyn_index, &want), ACL_ERROR_INVALID_PARAM,
             "no gear has these input dims (the gears: 1,4,1,4; 1,64,1,64; 1,100,1,100)");
  static const int len[3] = {4, 64, 100};
  for (int g = 2; g >= 0; g--) {
    OK(aclmdlSetInputDynamicDims(l.id, l.in, l.dyn_index, &dims[g]));
    run_gear(&l, om, size, g, (size_t)len[g] * 4, (size_t)len[g] * 4);
  }
  EXPECT_ACL(aclmdlSetDynamicBatchSize(l.id, l.in, l.dyn_index, 1), ACL_ERROR_INVALID_PARAM,
             "has dims gears (--dynamic_dims)");
  unload(&l);
  free(om);
}

/* A model without gears: no extra input, Set calls refused. */
static void test_static(void) {
  size_t size;
  void *om = compile(1, "x:1,3,8,8", NULL, NULL, NULL, &size);
  CHECK(om != NULL);
  if (!om) return;
  uint32_t id;
  OK(aclmdlLoadFromMem(om, size, &id));
  aclmdlDesc *d = aclmdlCreateDesc();
  OK(aclmdlGetDesc(d, id));
  CHECK_EQ_INT((int)aclmdlGetNumInputs(d), 1);
  CHECK_EQ_INT(aclmdlGetInputFormat(d, 0), ACL_FORMAT_NCHW); /* (atc's default --input_format) */
  size_t index;
  EXPECT_ACL(aclmdlGetInputIndexByName(d, ACL_DYNAMIC_TENSOR_NAME, &index), ACL_ERROR_INVALID_PARAM,
             "no input named '" ACL_DYNAMIC_TENSOR_NAME "'");
  aclmdlBatch b;
  OK(aclmdlGetDynamicBatch(d, &b));
  CHECK_EQ_INT((int)b.batchCount, 0);
  aclmdlDataset *ds = aclmdlCreateDataset();
  EXPECT_ACL(aclmdlSetDynamicBatchSize(id, ds, 1, 1), ACL_ERROR_INVALID_PARAM,
             "has no gears, not batch gears");
  OK(aclmdlDestroyDataset(ds));
  OK(aclmdlDestroyDesc(d));
  OK(aclmdlUnload(id));
  free(om);
}

int main(void) {
  OK(aclInit(NULL));
  OK(aclrtSetDevice(0));
  test_batch();
  test_image_size();
  test_dims();
  test_static();
  OK(aclrtResetDevice(0));
  OK(aclFinalize());
  return test_summary("acl_gears");
}
