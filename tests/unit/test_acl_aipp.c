/* test_acl_aipp.c - AIPP through libascendcl (acl_mdl.h) and libomrt's AIPP
 * calls (omrt.h), on models compiled in process with atc's
 * --insert_op_conf:
 *   - dynamic AIPP: the parameters input ACL_DYNAMIC_AIPP_NAME is found by
 *     name, aclmdlGetAippType names both inputs, parameters built with the
 *     aclmdlSetAIPP* calls and written by aclmdlSetInputAIPP or
 *     aclmdlSetAIPPByInputIndex give outputs equal to a direct computation
 *     of the documented formula (crop, then (x - mean - min) * var_reci,
 *     then the model's Relu) and to libomrt's omrt_context_set_aipp run;
 *   - the refusals: scaling (ACL_ERROR_FEATURE_UNSUPPORTED), a crop outside
 *     the image, a batch that is not the model's, an index that names no
 *     dynamic AIPP input, a run whose parameters no call set (an all-zero
 *     record); libomrt's omrt_aipp_pack_images refuses sets that disagree
 *     on what the images share (the image size) and a count that is
 *     neither 1 nor the batch;
 *   - static AIPP: aclmdlGetAippType and aclmdlGetFirstAippInfo report the
 *     file's parameters;
 *   - with batch gears (--dynamic_batch_size): the input sizes and the
 *     AIPP batch are the largest gear's (ATC's rule), and each gear chosen
 *     with aclmdlSetDynamicBatchSize runs the AIPP on every image of its
 *     batch, dynamic and static; dynamic with each image's own crop and
 *     mean (the calls' batchIndex). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "driver/compile.h"
#include "omrt.h"
#include "onnx_mb.h"
#include "acl_check.h"
#include "support.h"

enum { N = 1, C = 3, H = 6, W = 8, SW = 10, SH = 8, CX = 2, CY = 1 };

/* x [1, 3, 6, 8] -> Relu = y, compiled with the AIPP file `conf`; with
 * batch gears `gears` (NULL: none) the batch is the symbolic "N". */
static void *compile_gears(const char *conf, const char *gears, size_t *size) {
  const char *path = "tmp_acl_aipp.cfg";
  CHECK(test_write_file(path, conf, strlen(conf)) == 0);
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", 1, 4, (int64_t[]){N, C, H, W},
           gears ? (const char *const[]){"N", NULL, NULL, NULL} : NULL);
  mb_node(&m, "Relu", "relu", "x", "y");
  mb_output(&m, "y");
  atc_options opt = {.model_path = "acl_aipp.onnx",
                     .input_shape = gears ? "x:-1,3,6,8" : NULL,
                     .dynamic_batch_size = gears,
                     .insert_op_conf = path,
                     .soc_version = "Ascend310",
                     .precision = OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE,
                     .high_performance = 1,
                     .cmdline = "test_acl_aipp"};
  void *om = mb_compile(&m, &opt, size);
  remove(path);
  return om;
}

static void *compile(const char *conf, size_t *size) { return compile_gears(conf, NULL, size); }

static uint8_t image[SW * SH * 3];
static float want[C * H * W], got[C * H * W];
static const int16_t mean[3] = {100, 50, 0};
static const float vmin[3] = {0.5f, 0.0f, 10.0f}, var[3] = {1.0f, 2.0f, 0.5f};

/* 1: image k of a batch has its own crop, at (k, 2 - k), and mean, + 10 k
 * (SW - W = SH - H = 2); 0: every image's crop is at (CX, CY). */
static int per_image;
static int crop_x(int k) { return per_image ? k : CX; }
static int crop_y(int k) { return per_image ? 2 - k : CY; }
static int16_t mean_of(int k, int c) { return (int16_t)(mean[c] + (per_image ? 10 * k : 0)); }

/* The documented AIPP of `image` (RGB888, image k's crop, W x H, and
 * mean), then Relu; the image's pixels vary with k. */
static void expected_seed(int k) {
  for (int i = 0; i < SW * SH * 3; i++)
    image[i] = (uint8_t)((i * 53 + 11 + k * 29) % 256);
  for (int c = 0; c < C; c++)
    for (int h = 0; h < H; h++)
      for (int w = 0; w < W; w++) {
        float v = ((float)(image[((crop_y(k) + h) * SW + crop_x(k) + w) * 3 + c] - mean_of(k, c)) - vmin[c]) *
                  var[c];
        want[(c * H + h) * W + w] = v > 0 ? v : 0;
      }
}

static void expected(void) { expected_seed(0); }

static aclmdlAIPP *params(uint64_t batch) {
  aclmdlAIPP *a = aclmdlCreateAIPP(batch);
  CHECK(a != NULL);
  OK(aclmdlSetAIPPInputFormat(a, ACL_RGB888_U8));
  OK(aclmdlSetAIPPSrcImageSize(a, SW, SH));
  for (uint64_t b = 0; b < batch; b++) {
    const int k = (int)b;
    OK(aclmdlSetAIPPCropParams(a, 1, crop_x(k), crop_y(k), W, H, b));
    OK(aclmdlSetAIPPDtcPixelMean(a, mean_of(k, 0), mean_of(k, 1), mean_of(k, 2), 0, b));
    OK(aclmdlSetAIPPDtcPixelMin(a, vmin[0], vmin[1], vmin[2], 0, b));
    OK(aclmdlSetAIPPPixelVarReci(a, var[0], var[1], var[2], 1, b));
  }
  return a;
}

static void test_dynamic(void) {
  size_t size;
  void *om =
      compile("aipp_op {\n aipp_mode: dynamic\n related_input_rank: 0\n max_src_image_size: 300\n}\n", &size);
  CHECK(om != NULL);
  if (!om) return;
  expected();

  /* libomrt: the parameters kept on the context */
  omrt_model *om_m;
  omrt_context *ctx;
  CHECK_EQ_INT(omrt_model_load_memory(om, size, NULL, &om_m), OMRT_OK);
  CHECK_EQ_INT(omrt_context_new(om_m, &ctx), OMRT_OK);
  omrt_aipp_info info;
  CHECK_EQ_INT(omrt_model_input_aipp(om_m, 0, &info), OMRT_OK);
  CHECK(info.mode == OMRT_AIPP_DYNAMIC && info.params_input == 1 && info.src_bytes == 300);
  omrt_aipp cfg = {.input_format = OMRT_AIPP_RGB888_U8,
                   .src_w = SW,
                   .src_h = SH,
                   .crop = 1,
                   .crop_x = CX,
                   .crop_y = CY,
                   .crop_w = W,
                   .crop_h = H};
  for (int c = 0; c < 3; c++)
    cfg.mean[c] = mean[c], cfg.min[c] = vmin[c], cfg.var_reci[c] = var[c];
  CHECK_EQ_INT(omrt_context_set_aipp(ctx, 0, &cfg), OMRT_OK);
  static uint8_t padded[300];
  memcpy(padded, image, sizeof image);
  const void *in[2] = {padded, NULL};
  void *out[1] = {got};
  CHECK_EQ_INT(omrt_execute(ctx, in, out), OMRT_OK);
  CHECK(memcmp(got, want, sizeof want) == 0);
  memset(got, 0, sizeof got); /* the sized run needs no size for the parameters the context keeps */
  CHECK_EQ_INT(omrt_execute_sized(ctx, in, (const size_t[]){300, 0}, out, (const size_t[]){sizeof got}),
               OMRT_OK);
  CHECK(memcmp(got, want, sizeof want) == 0);
  omrt_aipp bad = cfg;
  bad.crop_x = 4; /* 4 + 8 > 10 */
  CHECK_EQ_INT(omrt_context_set_aipp(ctx, 0, &bad), OMRT_ERR_ARG);
  CHECK(strstr(omrt_last_error(), "not inside the 10x8 image") != NULL);
  omrt_context_free(ctx);
  omrt_model_free(om_m);

  /* AscendCL */
  uint32_t id;
  OK(aclmdlLoadFromMem(om, size, &id));
  aclmdlDesc *desc = aclmdlCreateDesc();
  OK(aclmdlGetDesc(desc, id));
  size_t pidx = 9, attached = 9;
  OK(aclmdlGetInputIndexByName(desc, ACL_DYNAMIC_AIPP_NAME, &pidx));
  CHECK_EQ_INT((int)pidx, 1);
  CHECK_EQ_INT(aclmdlGetInputDataType(desc, 0), ACL_UINT8);
  aclmdlInputAippType type;
  OK(aclmdlGetAippType(id, 0, &type, &attached));
  CHECK(type == ACL_DATA_WITH_DYNAMIC_AIPP && attached == 1);
  OK(aclmdlGetAippType(id, 1, &type, &attached));
  CHECK(type == ACL_DYNAMIC_AIPP_NODE && attached == 0);
  void *dev[3];
  size_t bytes[3] = {aclmdlGetInputSizeByIndex(desc, 0), aclmdlGetInputSizeByIndex(desc, 1),
                     aclmdlGetOutputSizeByIndex(desc, 0)};
  CHECK(bytes[0] == 300 && bytes[1] == OMRT_AIPP_PARAMS_BYTES && bytes[2] == sizeof got);
  aclmdlDataset *ds_in = aclmdlCreateDataset(), *ds_out = aclmdlCreateDataset();
  for (int i = 0; i < 3; i++) {
    OK(aclrtMalloc(&dev[i], bytes[i], ACL_MEM_MALLOC_HUGE_FIRST));
    OK(aclrtMemset(dev[i], bytes[i], 0, bytes[i]));
    OK(aclmdlAddDatasetBuffer(i < 2 ? ds_in : ds_out, aclCreateDataBuffer(dev[i], bytes[i])));
  }
  OK(aclrtMemcpy(dev[0], bytes[0], image, sizeof image, ACL_MEMCPY_HOST_TO_DEVICE));
  /* no parameters yet: the all-zero record has no input format */
  EXPECT_ACL(aclmdlExecute(id, ds_in, ds_out), ACL_ERROR_INVALID_PARAM, "input_format 0");

  aclmdlAIPP *a = params(1);
  EXPECT_ACL(aclmdlSetAIPPScfParams(a, 1, SW, SH, W, H, 0), ACL_ERROR_FEATURE_UNSUPPORTED, "scaling");
  OK(aclmdlSetAIPPScfParams(a, 0, 0, 0, 0, 0, 0));
  EXPECT_ACL(aclmdlSetAIPPCropParams(a, 1, 0, 0, W, H, 1), ACL_ERROR_INVALID_PARAM, "batchIndex 1");
  EXPECT_ACL(aclmdlSetAIPPPaddingParams(a, 1, 33, 0, 0, 0, 0), ACL_ERROR_INVALID_PARAM, "paddingSizeTop");
  EXPECT_ACL(aclmdlSetInputAIPP(id, ds_in, 0, a), ACL_ERROR_INVALID_PARAM, "not a dynamic AIPP input");
  OK(aclmdlSetInputAIPP(id, ds_in, pidx, a));
  OK(aclmdlExecute(id, ds_in, ds_out));
  OK(aclrtMemcpy(got, sizeof got, dev[2], sizeof got, ACL_MEMCPY_DEVICE_TO_HOST));
  CHECK(memcmp(got, want, sizeof want) == 0);
  /* by the image input's index; a crop that leaves the image; the model's batch */
  OK(aclmdlSetAIPPByInputIndex(id, ds_in, 0, a));
  OK(aclmdlSetAIPPCropParams(a, 1, 3, CY, W, H, 0));
  EXPECT_ACL(aclmdlSetAIPPByInputIndex(id, ds_in, 0, a), ACL_ERROR_INVALID_PARAM,
             "not inside the 10x8 image");
  aclmdlAIPP *a2 = params(2);
  EXPECT_ACL(aclmdlSetInputAIPP(id, ds_in, pidx, a2), ACL_ERROR_INVALID_PARAM, "takes 1");
  OK(aclmdlDestroyAIPP(a2));
  OK(aclmdlDestroyAIPP(a));
  static aclAippInfo info_none; /* (about 270 KB: ACL_MAX_SHAPE_COUNT output dims) */
  EXPECT_ACL(aclmdlGetFirstAippInfo(id, 0, &info_none), ACL_ERROR_INVALID_PARAM, "no static AIPP");

  for (int i = 0; i < 2; i++)
    OK(aclDestroyDataBuffer(aclmdlGetDatasetBuffer(ds_in, (size_t)i)));
  OK(aclDestroyDataBuffer(aclmdlGetDatasetBuffer(ds_out, 0)));
  OK(aclmdlDestroyDataset(ds_in));
  OK(aclmdlDestroyDataset(ds_out));
  for (int i = 0; i < 3; i++)
    OK(aclrtFree(dev[i]));
  OK(aclmdlDestroyDesc(desc));
  OK(aclmdlUnload(id));
  free(om);
}

static void test_static(void) {
  size_t size;
  void *om = compile("aipp_op {\n input_format: YUV420SP_U8\n src_image_size_w: 12\n src_image_size_h: 10\n"
                     " crop: true\n load_start_pos_w: 2\n load_start_pos_h: 4\n csc_switch: true\n"
                     " matrix_r0c0: 256\n matrix_r0c2: 359\n input_bias_1: 128\n mean_chn_0: 7\n"
                     " var_reci_chn_2: 0.25\n}\n",
                     &size);
  CHECK(om != NULL);
  if (!om) return;
  uint32_t id;
  OK(aclmdlLoadFromMem(om, size, &id));
  aclmdlInputAippType type;
  size_t attached;
  OK(aclmdlGetAippType(id, 0, &type, &attached));
  CHECK(type == ACL_DATA_WITH_STATIC_AIPP && attached == (size_t)-1);
  static aclAippInfo info;
  OK(aclmdlGetFirstAippInfo(id, 0, &info));
  CHECK(info.inputFormat == ACL_YUV420SP_U8 && info.srcImageSizeW == 12 && info.srcImageSizeH == 10);
  CHECK(info.cropSwitch == 1 && info.loadStartPosW == 2 && info.loadStartPosH == 4 && info.cropSizeW == W &&
        info.cropSizeH == H);
  CHECK(info.cscSwitch == 1 && info.matrixR0C0 == 256 && info.matrixR0C2 == 359 && info.inputBias1 == 128);
  CHECK(info.meanChn0 == 7 && info.varReciChn2 == 0.25f && info.varReciChn0 == 1.0f);
  CHECK(info.shapeCount == 1 && info.outDims[0].aippOutdims.dimCount == 4 &&
        info.outDims[0].aippOutdims.dims[3] == W);
  aclmdlDesc *desc = aclmdlCreateDesc();
  OK(aclmdlGetDesc(desc, id));
  CHECK_EQ_INT((int)aclmdlGetInputSizeByIndex(desc, 0), 12 * 10 * 3 / 2); /* the NV12 frame */
  /* V1 describes the image, V2 the buffer (its dims' product is the size) */
  aclmdlIODims d1, d2;
  OK(aclmdlGetInputDims(desc, 0, &d1));
  OK(aclmdlGetInputDimsV2(desc, 0, &d2));
  CHECK(d1.dimCount == 4 && d1.dims[0] == 1 && d1.dims[1] == 10 && d1.dims[2] == 12 && d1.dims[3] == 3);
  CHECK(d2.dimCount == 4 && d2.dims[0] == 1 && d2.dims[1] == 15 && d2.dims[2] == 12 && d2.dims[3] == 1);
  CHECK_EQ_INT(aclmdlGetInputFormat(desc, 0), ACL_FORMAT_NHWC);
  OK(aclmdlDestroyDesc(desc));
  OK(aclmdlUnload(id));
  free(om);
}

enum { GMAX = 3, IMG = 300 }; /* batch gears 1, 3; max_src_image_size */

/* One gear's run through AscendCL: n images one after another in input 0
 * (image k from seed k), the gear set with aclmdlSetDynamicBatchSize on
 * dynamic-gear input `dyn`; every image's output against the formula. */
static void run_batch(uint32_t id, aclmdlDataset *in, aclmdlDataset *out, size_t dyn, int n) {
  static uint8_t host[GMAX * IMG];
  static float all_want[GMAX][C * H * W], all_got[GMAX][C * H * W];
  memset(host, 0, sizeof host);
  for (int k = 0; k < n; k++) {
    expected_seed(k);
    memcpy(host + (size_t)k * sizeof image, image, sizeof image);
    memcpy(all_want[k], want, sizeof want);
  }
  aclDataBuffer *b0 = aclmdlGetDatasetBuffer(in, 0), *b_out = aclmdlGetDatasetBuffer(out, 0);
  OK(aclrtMemcpy(aclGetDataBufferAddr(b0), aclGetDataBufferSizeV2(b0), host, (size_t)n * sizeof image,
                 ACL_MEMCPY_HOST_TO_DEVICE));
  OK(aclmdlSetDynamicBatchSize(id, in, dyn, (uint64_t)n));
  memset(all_got, 0, sizeof all_got);
  OK(aclmdlExecute(id, in, out));
  OK(aclrtMemcpy(all_got, sizeof all_got, aclGetDataBufferAddr(b_out), (size_t)n * sizeof want,
                 ACL_MEMCPY_DEVICE_TO_HOST));
  CHECK(memcmp(all_got, all_want, (size_t)n * sizeof want) == 0);
}

/* Buffers of the description's sizes for every input and the output. */
static void datasets(aclmdlDesc *desc, void **dev, aclmdlDataset **in, aclmdlDataset **out) {
  const size_t nin = aclmdlGetNumInputs(desc);
  *in = aclmdlCreateDataset(), *out = aclmdlCreateDataset();
  for (size_t i = 0; i <= nin; i++) {
    size_t bytes = i < nin ? aclmdlGetInputSizeByIndex(desc, i) : aclmdlGetOutputSizeByIndex(desc, 0);
    OK(aclrtMalloc(&dev[i], bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    OK(aclrtMemset(dev[i], bytes, 0, bytes));
    OK(aclmdlAddDatasetBuffer(i < nin ? *in : *out, aclCreateDataBuffer(dev[i], bytes)));
  }
}

static void free_datasets(size_t nin, void **dev, aclmdlDataset *in, aclmdlDataset *out) {
  for (size_t i = 0; i < nin; i++)
    OK(aclDestroyDataBuffer(aclmdlGetDatasetBuffer(in, i)));
  OK(aclDestroyDataBuffer(aclmdlGetDatasetBuffer(out, 0)));
  OK(aclmdlDestroyDataset(in));
  OK(aclmdlDestroyDataset(out));
  for (size_t i = 0; i <= nin; i++)
    OK(aclrtFree(dev[i]));
}

static void test_batch_gears_dynamic(void) {
  size_t size;
  void *om = compile_gears("aipp_op {\n aipp_mode: dynamic\n max_src_image_size: 300\n}\n", "1,3", &size);
  CHECK(om != NULL);
  if (!om) return;
  uint32_t id;
  OK(aclmdlLoadFromMem(om, size, &id));
  aclmdlDesc *desc = aclmdlCreateDesc();
  OK(aclmdlGetDesc(desc, id));
  size_t pidx = 9, dyn = 9;
  OK(aclmdlGetInputIndexByName(desc, ACL_DYNAMIC_AIPP_NAME, &pidx));
  OK(aclmdlGetInputIndexByName(desc, ACL_DYNAMIC_TENSOR_NAME, &dyn));
  CHECK(aclmdlGetNumInputs(desc) == 3 && pidx == 1 && dyn == 2);
  /* ATC's rule: the image input holds the largest gear's images */
  CHECK_EQ_INT((int)aclmdlGetInputSizeByIndex(desc, 0), GMAX * IMG);
  CHECK_EQ_INT((int)aclmdlGetInputSizeByIndex(desc, 1),
               GMAX * OMRT_AIPP_PARAMS_BYTES); /* a record an image */
  size_t data_size = 0;
  OK(aclmdlGetAippDataSize(GMAX, &data_size));
  CHECK_EQ_INT((int)data_size, GMAX * OMRT_AIPP_PARAMS_BYTES);
  void *dev[4];
  aclmdlDataset *in, *out;
  datasets(desc, dev, &in, &out);
  /* aclmdlCreateAIPP takes the largest gear's batch */
  aclmdlAIPP *a1 = params(1);
  EXPECT_ACL(aclmdlSetInputAIPP(id, in, pidx, a1), ACL_ERROR_INVALID_PARAM,
             "takes 3 (its largest gear's batch)");
  OK(aclmdlDestroyAIPP(a1));
  aclmdlAIPP *a = params(GMAX);
  OK(aclmdlSetInputAIPP(id, in, pidx, a));
  run_batch(id, in, out, dyn, 1);
  run_batch(id, in, out, dyn, 3);
  OK(aclmdlDestroyAIPP(a));
  /* each image its own crop and mean (batchIndex); gear 1 reads image 0's */
  per_image = 1;
  a = params(GMAX);
  OK(aclmdlSetInputAIPP(id, in, pidx, a));
  run_batch(id, in, out, dyn, 3);
  run_batch(id, in, out, dyn, 1);
  OK(aclmdlSetAIPPCropParams(a, 1, 3, 0, W, H, 2)); /* image 2's crop leaves the image */
  EXPECT_ACL(aclmdlSetInputAIPP(id, in, pidx, a), ACL_ERROR_INVALID_PARAM, "image 2: crop 8x6 at (3, 0)");
  OK(aclmdlDestroyAIPP(a));
  per_image = 0;

  /* libomrt: the sets must agree on the image size; 1 or the batch of them */
  omrt_model *om_m;
  CHECK_EQ_INT(omrt_model_load_memory(om, size, NULL, &om_m), OMRT_OK);
  omrt_aipp cfgs[GMAX];
  for (int k = 0; k < GMAX; k++) {
    cfgs[k] = (omrt_aipp){.input_format = OMRT_AIPP_RGB888_U8, .src_w = W, .src_h = H};
    cfgs[k].var_reci[0] = cfgs[k].var_reci[1] = cfgs[k].var_reci[2] = 1.0f;
  }
  static uint8_t recs[GMAX * OMRT_AIPP_PARAMS_BYTES];
  CHECK_EQ_INT(omrt_aipp_pack_images(om_m, 0, cfgs, GMAX, recs, sizeof recs), OMRT_OK);
  CHECK_EQ_INT(omrt_aipp_pack_images(om_m, 0, cfgs, 2, recs, sizeof recs), OMRT_ERR_ARG);
  CHECK(strstr(omrt_last_error(), "takes 1 (every image) or 3") != NULL);
  CHECK_EQ_INT(omrt_aipp_pack(om_m, 0, cfgs, recs, sizeof recs - 1), OMRT_ERR_ARG);
  cfgs[1].src_w = W + 2, cfgs[1].crop = 1, cfgs[1].crop_w = W, cfgs[1].crop_h = H;
  CHECK_EQ_INT(omrt_aipp_pack_images(om_m, 0, cfgs, GMAX, recs, sizeof recs), OMRT_ERR_ARG);
  CHECK(strstr(omrt_last_error(), "image 1's format, image size, swaps or csc differ") != NULL);
  omrt_model_free(om_m);
  free_datasets(3, dev, in, out);
  OK(aclmdlDestroyDesc(desc));
  OK(aclmdlUnload(id));
  free(om);
}

static void test_batch_gears_static(void) {
  size_t size;
  void *om =
      compile_gears("aipp_op {\n input_format: RGB888_U8\n src_image_size_w: 10\n src_image_size_h: 8\n"
                    " crop: true\n load_start_pos_w: 2\n load_start_pos_h: 1\n mean_chn_0: 100\n"
                    " mean_chn_1: 50\n min_chn_0: 0.5\n min_chn_2: 10\n var_reci_chn_1: 2\n"
                    " var_reci_chn_2: 0.5\n}\n",
                    "1,3", &size);
  CHECK(om != NULL);
  if (!om) return;
  uint32_t id;
  OK(aclmdlLoadFromMem(om, size, &id));
  aclmdlDesc *desc = aclmdlCreateDesc();
  OK(aclmdlGetDesc(desc, id));
  size_t dyn = 9;
  OK(aclmdlGetInputIndexByName(desc, ACL_DYNAMIC_TENSOR_NAME, &dyn));
  CHECK_EQ_INT((int)aclmdlGetInputSizeByIndex(desc, 0), GMAX * SW * SH * 3); /* N: the largest gear */
  aclmdlInputAippType type;
  size_t attached;
  OK(aclmdlGetAippType(id, 0, &type, &attached));
  CHECK(type == ACL_DATA_WITH_STATIC_AIPP);
  static aclAippInfo info;
  OK(aclmdlGetFirstAippInfo(id, 0, &info));
  CHECK(info.srcImageSizeW == SW && info.cropSizeW == W && info.outDims[0].srcDims.dims[0] == GMAX);
  void *dev[3];
  aclmdlDataset *in, *out;
  datasets(desc, dev, &in, &out);
  run_batch(id, in, out, dyn, 3);
  run_batch(id, in, out, dyn, 1);
  free_datasets(2, dev, in, out);
  OK(aclmdlDestroyDesc(desc));
  OK(aclmdlUnload(id));
  free(om);
}

int main(void) {
  OK(aclInit(NULL));
  OK(aclrtSetDevice(0));
  test_dynamic();
  test_static();
  test_batch_gears_dynamic();
  test_batch_gears_static();
  OK(aclrtResetDevice(0));
  OK(aclFinalize());
  return test_summary("acl_aipp");
}
