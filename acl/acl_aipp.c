/* acl_aipp.c - AscendCL's AIPP calls (acl_mdl.h) over libomrt's
 * (omrt.h: omrt_model_input_aipp, omrt_aipp_pack).
 *
 * An aclmdlAIPP holds one omrt_aipp per image of the batch; the calls
 * without a batchIndex set every image's, the others one image's. Writing
 * it into a dataset (aclmdlSetInputAIPP, aclmdlSetAIPPByInputIndex) needs
 * the batch the model's; omrt_aipp_pack_images then checks the images'
 * parameters against the model and writes their records (one an image)
 * into the parameters input's device buffer. The setters check the ranges
 * AscendCL documents.
 */
#include <stdlib.h>
#include <string.h>

#include "acl/acl_internal.h"

struct aclmdlAIPP {
  uint64_t batch;
  omrt_aipp *img; /* [batch] */
};

/* One record an image. */
aclError aclmdlGetAippDataSize(uint64_t batchSize, size_t *size) {
  if (!size) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclmdlGetAippDataSize: size is NULL");
  if (batchSize == 0 || batchSize > 4096)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "aclmdlGetAippDataSize: batchSize %llu outside 1..4096",
                    (unsigned long long)batchSize);
  *size = (size_t)batchSize * OMRT_AIPP_PARAMS_BYTES;
  return ACL_SUCCESS;
}

aclmdlAIPP *aclmdlCreateAIPP(uint64_t batchSize) {
  if (batchSize == 0 || batchSize > 4096) {
    acl_fail(ACL_ERROR_INVALID_PARAM, "aclmdlCreateAIPP: batchSize %llu outside 1..4096",
             (unsigned long long)batchSize);
    return NULL;
  }
  aclmdlAIPP *a = calloc(1, sizeof *a);
  if (a) a->img = calloc((size_t)batchSize, sizeof *a->img);
  if (!a || !a->img) {
    free(a);
    acl_fail(ACL_ERROR_BAD_ALLOC, "aclmdlCreateAIPP: out of memory");
    return NULL;
  }
  a->batch = batchSize;
  for (uint64_t b = 0; b < batchSize; b++)
    for (int c = 0; c < 4; c++)
      a->img[b].var_reci[c] = 1.0f;
  return a;
}

aclError aclmdlDestroyAIPP(const aclmdlAIPP *a) {
  if (!a) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclmdlDestroyAIPP: aippParmsSet is NULL");
  free(a->img);
  free((void *)a);
  return ACL_SUCCESS;
}

/* The images [first, end) a call sets: all, or batchIndex's. */
static aclError images(const char *call, const aclmdlAIPP *a, int all, uint64_t batchIndex, uint64_t *first,
                       uint64_t *end) {
  if (!a) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: aippParmsSet is NULL", call);
  if (!all && batchIndex >= a->batch)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: batchIndex %llu outside [0, %llu)", call,
                    (unsigned long long)batchIndex, (unsigned long long)a->batch);
  *first = all ? 0 : batchIndex, *end = all ? a->batch : batchIndex + 1;
  return ACL_SUCCESS;
}

static aclError range(const char *call, const char *what, int64_t v, int64_t lo, int64_t hi) {
  if (v < lo || v > hi)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s = %lld outside [%lld, %lld]", call, what, (long long)v,
                    (long long)lo, (long long)hi);
  return ACL_SUCCESS;
}

aclError aclmdlSetAIPPInputFormat(aclmdlAIPP *a, aclAippInputFormat f) {
  const char *call = "aclmdlSetAIPPInputFormat";
  uint64_t b0 = 0, b1 = 0;
  aclError e = images(call, a, 1, 0, &b0, &b1);
  if (!e && (f < ACL_YUV420SP_U8 || f > ACL_YUV400_U8))
    e = acl_fail(ACL_ERROR_INVALID_PARAM,
                 "%s: inputFormat %d: only ACL_YUV420SP_U8, ACL_XRGB8888_U8, ACL_RGB888_U8 and ACL_YUV400_U8 "
                 "(AscendCL reserves the others; socs/*.yaml aipp.formats)",
                 call, (int)f);
  for (uint64_t b = b0; !e && b < b1; b++)
    a->img[b].input_format = (int)f; /* (the numbers are libomrt's) */
  return e;
}

aclError aclmdlSetAIPPCscParams(aclmdlAIPP *a, int8_t cscSwitch, int16_t r0c0, int16_t r0c1, int16_t r0c2,
                                int16_t r1c0, int16_t r1c1, int16_t r1c2, int16_t r2c0, int16_t r2c1,
                                int16_t r2c2, uint8_t ob0, uint8_t ob1, uint8_t ob2, uint8_t ib0, uint8_t ib1,
                                uint8_t ib2) {
  const char *call = "aclmdlSetAIPPCscParams";
  uint64_t b0 = 0, b1 = 0;
  aclError e = images(call, a, 1, 0, &b0, &b1);
  if (!e) e = range(call, "cscSwitch", cscSwitch, 0, 1);
  const int32_t m[3][3] = {{r0c0, r0c1, r0c2}, {r1c0, r1c1, r1c2}, {r2c0, r2c1, r2c2}};
  for (uint64_t b = b0; !e && b < b1; b++) {
    omrt_aipp *c = &a->img[b];
    c->csc_switch = cscSwitch;
    memcpy(c->matrix, m, sizeof m);
    c->output_bias[0] = ob0, c->output_bias[1] = ob1, c->output_bias[2] = ob2;
    c->input_bias[0] = ib0, c->input_bias[1] = ib1, c->input_bias[2] = ib2;
  }
  return e;
}

aclError aclmdlSetAIPPRbuvSwapSwitch(aclmdlAIPP *a, int8_t v) {
  const char *call = "aclmdlSetAIPPRbuvSwapSwitch";
  uint64_t b0 = 0, b1 = 0;
  aclError e = images(call, a, 1, 0, &b0, &b1);
  if (!e) e = range(call, "rbuvSwapSwitch", v, 0, 1);
  for (uint64_t b = b0; !e && b < b1; b++)
    a->img[b].rbuv_swap_switch = v;
  return e;
}

aclError aclmdlSetAIPPAxSwapSwitch(aclmdlAIPP *a, int8_t v) {
  const char *call = "aclmdlSetAIPPAxSwapSwitch";
  uint64_t b0 = 0, b1 = 0;
  aclError e = images(call, a, 1, 0, &b0, &b1);
  if (!e) e = range(call, "axSwapSwitch", v, 0, 1);
  for (uint64_t b = b0; !e && b < b1; b++)
    a->img[b].ax_swap_switch = v;
  return e;
}

aclError aclmdlSetAIPPSrcImageSize(aclmdlAIPP *a, int32_t w, int32_t h) {
  const char *call = "aclmdlSetAIPPSrcImageSize";
  uint64_t b0 = 0, b1 = 0;
  aclError e = images(call, a, 1, 0, &b0, &b1);
  if (!e) e = range(call, "srcImageSizeW", w, 1, 8192);
  if (!e) e = range(call, "srcImageSizeH", h, 1, 8192);
  for (uint64_t b = b0; !e && b < b1; b++)
    a->img[b].src_w = w, a->img[b].src_h = h;
  return e;
}

aclError aclmdlSetAIPPScfParams(aclmdlAIPP *a, int8_t scfSwitch, int32_t inW, int32_t inH, int32_t outW,
                                int32_t outH, uint64_t batchIndex) {
  const char *call = "aclmdlSetAIPPScfParams";
  uint64_t b0 = 0, b1 = 0;
  aclError e = images(call, a, 0, batchIndex, &b0, &b1);
  if (!e) e = range(call, "scfSwitch", scfSwitch, 0, 1);
  if (!e && scfSwitch)
    e = acl_fail(
        ACL_ERROR_FEATURE_UNSUPPORTED,
        "%s: scaling (%dx%d to %dx%d): the AIPP of Ascend 310, 310P and 910 does not scale (socs/*.yaml "
        "aipp.scaling); crop and pad to the model's size",
        call, inW, inH, outW, outH);
  return e;
}

aclError aclmdlSetAIPPCropParams(aclmdlAIPP *a, int8_t cropSwitch, int32_t x, int32_t y, int32_t w, int32_t h,
                                 uint64_t batchIndex) {
  const char *call = "aclmdlSetAIPPCropParams";
  uint64_t b0 = 0, b1 = 0;
  aclError e = images(call, a, 0, batchIndex, &b0, &b1);
  if (!e) e = range(call, "cropSwitch", cropSwitch, 0, 1);
  if (!e && cropSwitch) {
    if (!e) e = range(call, "cropStartPosW", x, 0, 8191);
    if (!e) e = range(call, "cropStartPosH", y, 0, 8191);
    if (!e) e = range(call, "cropSizeW", w, 1, 8192);
    if (!e) e = range(call, "cropSizeH", h, 1, 8192);
  }
  for (uint64_t b = b0; !e && b < b1; b++) {
    omrt_aipp *c = &a->img[b];
    c->crop = cropSwitch, c->crop_x = x, c->crop_y = y, c->crop_w = w, c->crop_h = h;
  }
  return e;
}

aclError aclmdlSetAIPPPaddingParams(aclmdlAIPP *a, int8_t paddingSwitch, int32_t top, int32_t bottom,
                                    int32_t left, int32_t right, uint64_t batchIndex) {
  const char *call = "aclmdlSetAIPPPaddingParams";
  uint64_t b0 = 0, b1 = 0;
  aclError e = images(call, a, 0, batchIndex, &b0, &b1);
  if (!e) e = range(call, "paddingSwitch", paddingSwitch, 0, 1);
  if (!e && paddingSwitch) {
    if (!e) e = range(call, "paddingSizeTop", top, 0, 32);
    if (!e) e = range(call, "paddingSizeBottom", bottom, 0, 32);
    if (!e) e = range(call, "paddingSizeLeft", left, 0, 32);
    if (!e) e = range(call, "paddingSizeRight", right, 0, 32);
  }
  for (uint64_t b = b0; !e && b < b1; b++) {
    omrt_aipp *c = &a->img[b];
    c->padding = paddingSwitch, c->pad_top = top, c->pad_bottom = bottom, c->pad_left = left,
    c->pad_right = right;
  }
  return e;
}

aclError aclmdlSetAIPPDtcPixelMean(aclmdlAIPP *a, int16_t m0, int16_t m1, int16_t m2, int16_t m3,
                                   uint64_t batchIndex) {
  uint64_t b0 = 0, b1 = 0;
  aclError e = images("aclmdlSetAIPPDtcPixelMean", a, 0, batchIndex, &b0, &b1);
  for (uint64_t b = b0; !e && b < b1; b++)
    a->img[b].mean[0] = m0, a->img[b].mean[1] = m1, a->img[b].mean[2] = m2, a->img[b].mean[3] = m3;
  return e;
}

aclError aclmdlSetAIPPDtcPixelMin(aclmdlAIPP *a, float m0, float m1, float m2, float m3,
                                  uint64_t batchIndex) {
  uint64_t b0 = 0, b1 = 0;
  aclError e = images("aclmdlSetAIPPDtcPixelMin", a, 0, batchIndex, &b0, &b1);
  for (uint64_t b = b0; !e && b < b1; b++)
    a->img[b].min[0] = m0, a->img[b].min[1] = m1, a->img[b].min[2] = m2, a->img[b].min[3] = m3;
  return e;
}

aclError aclmdlSetAIPPPixelVarReci(aclmdlAIPP *a, float v0, float v1, float v2, float v3,
                                   uint64_t batchIndex) {
  uint64_t b0 = 0, b1 = 0;
  aclError e = images("aclmdlSetAIPPPixelVarReci", a, 0, batchIndex, &b0, &b1);
  for (uint64_t b = b0; !e && b < b1; b++)
    a->img[b].var_reci[0] = v0, a->img[b].var_reci[1] = v1, a->img[b].var_reci[2] = v2,
    a->img[b].var_reci[3] = v3;
  return e;
}

/* Writes a's parameters for image input `image` into the dataset's buffer
 * of its parameters input (under the lock). */
static aclError write_params(const char *call, acl_model *m, aclmdlDataset *d, int image,
                             const aclmdlAIPP *a) {
  omrt_aipp_info info;
  omrt_model_input_aipp(m->m, image, &info);
  if (info.mode != OMRT_AIPP_DYNAMIC)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: model %u input %d has no dynamic AIPP", call, m->id, image);
  if ((int64_t)a->batch != info.out_dims[0]) /* with batch gears: the largest (ATC's rule) */
    return acl_fail(ACL_ERROR_INVALID_PARAM,
                    "%s: aippParmsSet is for %llu images; model %u input %d takes %lld%s", call,
                    (unsigned long long)a->batch, m->id, image, (long long)info.out_dims[0],
                    omrt_model_num_gears(m->m) > 1 ? " (its largest gear's batch)" : "");
  const int p = info.params_input;
  const size_t need = (size_t)a->batch * OMRT_AIPP_PARAMS_BYTES;
  aclDataBuffer *buf = d && (size_t)p < d->n ? d->bufs[p] : NULL;
  const void *base;
  size_t bytes;
  if (!buf || !buf->data || buf->size < need || acl_device_range(buf->data, need, &base, &bytes) != 1)
    return acl_fail(ACL_ERROR_INVALID_PARAM,
                    "%s: the dataset's buffer %d ('%s...') is not device memory of %zu bytes "
                    "(aclmdlGetInputSizeByIndex)",
                    call, p, ACL_DYNAMIC_AIPP_NAME, need);
  if (omrt_aipp_pack_images(m->m, image, a->img, (int)a->batch, buf->data, buf->size))
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: model %u: %s", call, m->id, omrt_last_error());
  return ACL_SUCCESS;
}

/* byImage: index is the image input's, else the parameters input's. */
static aclError set_input(const char *call, uint32_t modelId, aclmdlDataset *d, size_t index,
                          const aclmdlAIPP *a, int byImage) {
  if (!a) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: aippParmsSet is NULL", call);
  if (!d) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: dataset is NULL", call);
  aclError e = acl_enter(call);
  if (e) return e;
  acl_model *m = NULL;
  if ((e = acl_mdl_find(call, modelId, &m))) return acl_leave_with(e);
  int image = -1;
  for (int i = 0; i < m->nin && image < 0; i++) {
    omrt_aipp_info info;
    omrt_model_input_aipp(m->m, i, &info);
    if (info.mode == OMRT_AIPP_DYNAMIC && (byImage ? (size_t)i == index : (size_t)info.params_input == index))
      image = i;
  }
  if (image < 0)
    return acl_leave_with(
        acl_fail(ACL_ERROR_INVALID_PARAM,
                 byImage ? "%s: model %u input %zu has no dynamic AIPP"
                         : "%s: model %u input %zu is not a dynamic AIPP input ('" ACL_DYNAMIC_AIPP_NAME
                           "', aclmdlGetInputIndexByName)",
                 call, modelId, index));
  return acl_leave_with(write_params(call, m, d, image, a));
}

aclError aclmdlSetInputAIPP(uint32_t modelId, aclmdlDataset *d, size_t index, const aclmdlAIPP *a) {
  return set_input("aclmdlSetInputAIPP", modelId, d, index, a, 0);
}

aclError aclmdlSetAIPPByInputIndex(uint32_t modelId, aclmdlDataset *d, size_t index, const aclmdlAIPP *a) {
  return set_input("aclmdlSetAIPPByInputIndex", modelId, d, index, a, 1);
}

aclError aclmdlGetAippType(uint32_t modelId, size_t index, aclmdlInputAippType *type, size_t *attached) {
  const char *call = "aclmdlGetAippType";
  if (!type || !attached)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", call,
                    !type ? "type" : "dynamicAttachedDataIndex");
  aclError e = acl_enter(call);
  if (e) return e;
  acl_model *m = NULL;
  if ((e = acl_mdl_find(call, modelId, &m))) return acl_leave_with(e);
  if (index >= (size_t)m->nin)
    return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "%s: index %zu: model %u has %d inputs", call,
                                   index, modelId, m->nin));
  *type = ACL_DATA_WITHOUT_AIPP, *attached = (size_t)-1;
  for (int i = 0; i < m->nin; i++) {
    omrt_aipp_info info;
    omrt_model_input_aipp(m->m, i, &info);
    if ((size_t)i == index && info.mode == OMRT_AIPP_STATIC) *type = ACL_DATA_WITH_STATIC_AIPP;
    if ((size_t)i == index && info.mode == OMRT_AIPP_DYNAMIC)
      *type = ACL_DATA_WITH_DYNAMIC_AIPP, *attached = (size_t)info.params_input;
    if (info.mode == OMRT_AIPP_DYNAMIC && (size_t)info.params_input == index)
      *type = ACL_DYNAMIC_AIPP_NODE, *attached = (size_t)i;
  }
  return acl_leave_with(ACL_SUCCESS);
}

static void io_dims(aclmdlIODims *d, const char *name, int rank, const int64_t *dims) {
  memset(d, 0, sizeof *d);
  strncpy(d->name, name, ACL_MAX_TENSOR_NAME_LEN - 1);
  d->dimCount = (size_t)rank;
  memcpy(d->dims, dims, (size_t)rank * sizeof *dims);
}

aclError aclmdlGetFirstAippInfo(uint32_t modelId, size_t index, aclAippInfo *out) {
  const char *call = "aclmdlGetFirstAippInfo";
  if (!out) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: aippInfo is NULL", call);
  aclError e = acl_enter(call);
  if (e) return e;
  acl_model *m = NULL;
  if ((e = acl_mdl_find(call, modelId, &m))) return acl_leave_with(e);
  omrt_aipp_info info = {0};
  if (index < (size_t)m->nin) omrt_model_input_aipp(m->m, (int)index, &info);
  if (info.mode != OMRT_AIPP_STATIC)
    return acl_leave_with(
        acl_fail(ACL_ERROR_INVALID_PARAM, "%s: model %u input %zu has no static AIPP", call, modelId, index));
  const omrt_aipp *c = &info.config;
  memset(out, 0, sizeof *out);
  out->inputFormat = (aclAippInputFormat)c->input_format;
  out->srcImageSizeW = c->src_w, out->srcImageSizeH = c->src_h;
  out->cropSwitch = (int8_t)c->crop, out->loadStartPosW = c->crop_x, out->loadStartPosH = c->crop_y;
  out->cropSizeW = c->crop_w, out->cropSizeH = c->crop_h;
  out->paddingSwitch = (int8_t)c->padding, out->leftPaddingSize = c->pad_left,
  out->rightPaddingSize = c->pad_right;
  out->topPaddingSize = c->pad_top, out->bottomPaddingSize = c->pad_bottom;
  out->cscSwitch = (int8_t)c->csc_switch, out->rbuvSwapSwitch = (int8_t)c->rbuv_swap_switch;
  out->axSwapSwitch = (int8_t)c->ax_swap_switch;
  int32_t *mat[9] = {&out->matrixR0C0, &out->matrixR0C1, &out->matrixR0C2, &out->matrixR1C0, &out->matrixR1C1,
                     &out->matrixR1C2, &out->matrixR2C0, &out->matrixR2C1, &out->matrixR2C2};
  for (int i = 0; i < 9; i++)
    *mat[i] = c->matrix[i / 3][i % 3];
  out->outputBias0 = c->output_bias[0], out->outputBias1 = c->output_bias[1],
  out->outputBias2 = c->output_bias[2];
  out->inputBias0 = c->input_bias[0], out->inputBias1 = c->input_bias[1], out->inputBias2 = c->input_bias[2];
  out->meanChn0 = c->mean[0], out->meanChn1 = c->mean[1], out->meanChn2 = c->mean[2],
  out->meanChn3 = c->mean[3];
  out->minChn0 = c->min[0], out->minChn1 = c->min[1], out->minChn2 = c->min[2], out->minChn3 = c->min[3];
  out->varReciChn0 = c->var_reci[0], out->varReciChn1 = c->var_reci[1], out->varReciChn2 = c->var_reci[2];
  out->varReciChn3 = c->var_reci[3];
  out->srcFormat = ACL_FORMAT_NCHW, out->srcDatatype = ACL_FLOAT, out->srcDimNum = 4;
  out->shapeCount = 1;
  /* The model's input before atc put AIPP in front (float NCHW), and what
   * AIPP gives its first layer: the same dims. */
  omrt_tensor_desc t;
  omrt_model_input(m->m, (int)index, &t);
  const size_t bytes =
      (size_t)(info.out_dims[0] * info.out_dims[1] * info.out_dims[2] * info.out_dims[3]) * 4;
  io_dims(&out->outDims[0].srcDims, t.name, 4, info.out_dims);
  out->outDims[0].srcSize = bytes;
  io_dims(&out->outDims[0].aippOutdims, t.name, 4, info.out_dims);
  out->outDims[0].aippOutSize = bytes;
  return acl_leave_with(ACL_SUCCESS);
}
