/* acl_data.c - AscendCL's data descriptions (acl_base.h, acl_mdl.h): data
 * buffers, datasets, data types (model descriptions: acl_mdl_desc.c).
 *
 * None of these touch the registry: they are plain objects the caller
 * creates and destroys, usable before aclInit as in AscendCL.
 */
#include <stdlib.h>
#include <string.h>

#include "acl/acl_internal.h"
#include "common/fp16.h" /* the project's one reference binary16 conversion (header only) */

/* --- data buffers */

aclDataBuffer *aclCreateDataBuffer(void *data, size_t size) {
  aclDataBuffer *b = malloc(sizeof *b);
  if (!b) {
    acl_fail(ACL_ERROR_BAD_ALLOC, "aclCreateDataBuffer: out of memory");
    return NULL;
  }
  *b = (aclDataBuffer){data, size};
  return b;
}

aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer) {
  if (!dataBuffer) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclDestroyDataBuffer: dataBuffer is NULL");
  free((void *)dataBuffer);
  return ACL_SUCCESS;
}

aclError aclUpdateDataBuffer(aclDataBuffer *dataBuffer, void *data, size_t size) {
  if (!dataBuffer) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclUpdateDataBuffer: dataBuffer is NULL");
  *dataBuffer = (aclDataBuffer){data, size};
  return ACL_SUCCESS;
}

void *aclGetDataBufferAddr(const aclDataBuffer *dataBuffer) { return dataBuffer ? dataBuffer->data : NULL; }
size_t aclGetDataBufferSizeV2(const aclDataBuffer *dataBuffer) { return dataBuffer ? dataBuffer->size : 0; }
uint32_t aclGetDataBufferSize(const aclDataBuffer *dataBuffer) {
  size_t n = aclGetDataBufferSizeV2(dataBuffer);
  return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* --- data types */

size_t aclDataTypeSize(aclDataType dataType) {
  switch (dataType) {
  case ACL_BOOL:
  case ACL_INT8:
  case ACL_UINT8:
  case ACL_HIFLOAT8:
  case ACL_FLOAT8_E5M2:
  case ACL_FLOAT8_E4M3FN:
  case ACL_FLOAT8_E8M0:
  case ACL_FLOAT6_E3M2:
  case ACL_FLOAT6_E2M3: return 1;
  case ACL_COMPLEX32: return 4;
  case ACL_FLOAT16:
  case ACL_BF16:
  case ACL_INT16:
  case ACL_UINT16: return 2;
  case ACL_FLOAT:
  case ACL_INT32:
  case ACL_UINT32: return 4;
  case ACL_INT64:
  case ACL_UINT64:
  case ACL_DOUBLE:
  case ACL_COMPLEX64: return 8;
  case ACL_COMPLEX128: return 16;
  case ACL_DT_UNDEFINED:
  case ACL_STRING:
  case ACL_INT4: /* packed: less than a byte (a buffer's size is ceil(elements x bits / 8)) */
  case ACL_UINT1:
  case ACL_FLOAT4_E2M1:
  case ACL_FLOAT4_E1M2: return 0;
  }
  return 0;
}

aclDataType acl_data_type(int omrt_dtype) {
  switch (omrt_dtype) {
  case OMRT_FLOAT32: return ACL_FLOAT;
  case OMRT_FLOAT16: return ACL_FLOAT16;
  case OMRT_INT8: return ACL_INT8;
  case OMRT_UINT8: return ACL_UINT8;
  case OMRT_INT32: return ACL_INT32;
  case OMRT_INT64: return ACL_INT64;
  case OMRT_BOOL: return ACL_BOOL;
  case OMRT_BFLOAT16: return ACL_BF16;
  case OMRT_INT4: return ACL_INT4;
  case OMRT_FLOAT8E5M2: return ACL_FLOAT8_E5M2;
  case OMRT_FLOAT8E4M3FN: return ACL_FLOAT8_E4M3FN;
  case OMRT_FLOAT8E8M0: return ACL_FLOAT8_E8M0;
  case OMRT_FLOAT4E2M1: return ACL_FLOAT4_E2M1;
  }
  return ACL_DT_UNDEFINED;
}

aclFormat acl_format(int omrt_format) {
  static const aclFormat formats[] = {[OMRT_FORMAT_ND] = ACL_FORMAT_ND,
                                      [OMRT_FORMAT_NCHW] = ACL_FORMAT_NCHW,
                                      [OMRT_FORMAT_NHWC] = ACL_FORMAT_NHWC,
                                      [OMRT_FORMAT_NC1HWC0] = ACL_FORMAT_NC1HWC0};
  return omrt_format >= 0 && omrt_format <= OMRT_FORMAT_NC1HWC0 ? formats[omrt_format] : ACL_FORMAT_UNDEFINED;
}

float aclFloat16ToFloat(aclFloat16 value) { return half_to_float(value); }
aclFloat16 aclFloatToFloat16(float value) { return float_to_half(value); }

/* --- datasets */

aclmdlDataset *aclmdlCreateDataset(void) {
  aclmdlDataset *d = calloc(1, sizeof *d);
  if (!d) acl_fail(ACL_ERROR_BAD_ALLOC, "aclmdlCreateDataset: out of memory");
  return d;
}

aclError aclmdlDestroyDataset(const aclmdlDataset *dataset) {
  if (!dataset) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclmdlDestroyDataset: dataset is NULL");
  for (size_t i = 0; i < dataset->n; i++)
    aclDestroyTensorDesc(dataset->descs[i]);
  free(dataset->descs);
  free(dataset->bufs);
  free((void *)dataset);
  return ACL_SUCCESS;
}

aclError aclmdlAddDatasetBuffer(aclmdlDataset *dataset, aclDataBuffer *dataBuffer) {
  if (!dataset || !dataBuffer)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "aclmdlAddDatasetBuffer: %s is NULL",
                    !dataset ? "dataset" : "dataBuffer");
  if (dataset->n == dataset->cap) {
    size_t cap = dataset->cap ? 2 * dataset->cap : 4;
    aclDataBuffer **b = realloc(dataset->bufs, cap * sizeof *b);
    if (b) dataset->bufs = b;
    aclTensorDesc **t = b ? realloc(dataset->descs, cap * sizeof *t) : NULL;
    if (!t) return acl_fail(ACL_ERROR_BAD_ALLOC, "aclmdlAddDatasetBuffer: out of memory");
    dataset->descs = t;
    dataset->cap = cap;
  }
  dataset->descs[dataset->n] = NULL;
  dataset->bufs[dataset->n++] = dataBuffer;
  return ACL_SUCCESS;
}

size_t aclmdlGetDatasetNumBuffers(const aclmdlDataset *dataset) { return dataset ? dataset->n : 0; }

aclDataBuffer *aclmdlGetDatasetBuffer(const aclmdlDataset *dataset, size_t index) {
  if (!dataset || index >= dataset->n) {
    acl_fail(ACL_ERROR_INVALID_PARAM, "aclmdlGetDatasetBuffer: %s",
             !dataset ? "dataset is NULL" : "index out of range");
    return NULL;
  }
  return dataset->bufs[index];
}
