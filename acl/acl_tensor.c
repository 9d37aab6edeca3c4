/* acl_tensor.c - AscendCL tensor descriptions (acl_base.h) and a dataset's
 * descriptions (aclmdlSetDatasetTensorDesc / aclmdlGetDatasetTensorDesc,
 * acl_mdl.h).
 *
 * A description is a plain object (no aclInit needed): data type, format,
 * dims (owned array) and name (owned). A dataset owns one optional copy per
 * buffer (aclmdlDataset.descs): the application's for an input, the run's
 * for an output (acl_mdl.c fills them).
 */
#include <stdlib.h>
#include <string.h>

#include "acl/acl_internal.h"

aclTensorDesc *acl_tensor_desc(aclDataType dtype, aclFormat format, size_t rank, const int64_t *dims) {
  aclTensorDesc *d = calloc(1, sizeof *d);
  int64_t *copy = calloc(rank ? rank : 1, sizeof *copy);
  char *name = calloc(1, 1);
  if (!d || !copy || !name) {
    free(d);
    free(copy);
    free(name);
    return NULL;
  }
  if (rank) memcpy(copy, dims, rank * sizeof *copy);
  *d = (aclTensorDesc){.dtype = dtype,
                       .format = format,
                       .rank = rank,
                       .dims = copy,
                       .name = name,
                       .origin_format = ACL_FORMAT_UNDEFINED};
  return d;
}

/* numDims and dims as aclCreateTensorDesc and aclSetTensorShape take them. */
static aclError check_shape(const char *call, int numDims, const int64_t *dims) {
  if (numDims < 0 || numDims > ACL_MAX_DIM_CNT)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: numDims %d is not in 0..%d", call, numDims,
                    ACL_MAX_DIM_CNT);
  if (numDims > 0 && !dims) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: dims is NULL", call);
  for (int k = 0; k < numDims; k++)
    if (dims[k] < -2 || (dims[k] == -2 && numDims != 1))
      return acl_fail(ACL_ERROR_INVALID_PARAM,
                      "%s: dims[%d] = %lld (a dim is >= 0, -1 unknown, or {-2} alone)", call, k,
                      (long long)dims[k]);
  return ACL_SUCCESS;
}

aclTensorDesc *aclCreateTensorDesc(aclDataType dataType, int numDims, const int64_t *dims, aclFormat format) {
  if (check_shape("aclCreateTensorDesc", numDims, dims)) return NULL;
  aclTensorDesc *d = acl_tensor_desc(dataType, format, (size_t)numDims, dims);
  if (!d) acl_fail(ACL_ERROR_BAD_ALLOC, "aclCreateTensorDesc: out of memory");
  return d;
}

void aclDestroyTensorDesc(const aclTensorDesc *desc) {
  if (!desc) return;
  free(desc->dims);
  free(desc->name);
  free(desc->origin_dims);
  free(desc->shape_range);
  free(desc->value_range);
  free(desc->const_data);
  free(desc->dynamic_input);
  free((void *)desc);
}

aclDataType aclGetTensorDescType(const aclTensorDesc *desc) { return desc ? desc->dtype : ACL_DT_UNDEFINED; }
aclFormat aclGetTensorDescFormat(const aclTensorDesc *desc) {
  return desc ? desc->format : ACL_FORMAT_UNDEFINED;
}

static int unknown_rank(const aclTensorDesc *d) { return d->rank == 1 && d->dims[0] == -2; }

size_t aclGetTensorDescNumDims(const aclTensorDesc *desc) {
  return !desc ? 0 : unknown_rank(desc) ? (size_t)ACL_UNKNOWN_RANK : desc->rank;
}

size_t aclGetTensorDescElementCount(const aclTensorDesc *desc) {
  if (!desc) return 0;
  size_t n = 1;
  for (size_t k = 0; k < desc->rank; k++) {
    if (desc->dims[k] < 0) return 0; /* unknown */
    n *= (size_t)desc->dims[k];
  }
  return n;
}

size_t aclGetTensorDescSize(const aclTensorDesc *desc) {
  size_t n = aclGetTensorDescElementCount(desc);
  if (!n) return 0;
  size_t bits = desc->dtype == ACL_INT4 || desc->dtype == ACL_FLOAT4_E2M1 || desc->dtype == ACL_FLOAT4_E1M2
                    ? 4
                : desc->dtype == ACL_UINT1 ? 1
                                           : 8 * aclDataTypeSize(desc->dtype);
  return (n * bits + 7) / 8;
}

int64_t aclGetTensorDescDim(const aclTensorDesc *desc, size_t index) {
  int64_t v = -1;
  return aclGetTensorDescDimV2(desc, index, &v) ? -1 : v;
}

aclError aclGetTensorDescDimV2(const aclTensorDesc *desc, size_t index, int64_t *dimSize) {
  const char *call = "aclGetTensorDescDimV2";
  if (!desc || !dimSize)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", call, !desc ? "desc" : "dimSize");
  if (index >= desc->rank || unknown_rank(desc))
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: index %zu, the description has %s", call, index,
                    unknown_rank(desc) ? "an unknown rank"
                    : desc->rank == 1  ? "1 dim"
                                       : "fewer dims");
  *dimSize = desc->dims[index];
  return ACL_SUCCESS;
}

void aclSetTensorDescName(aclTensorDesc *desc, const char *name) {
  if (!desc) {
    acl_fail(ACL_ERROR_INVALID_PARAM, "aclSetTensorDescName: desc is NULL");
    return;
  }
  char *copy = strdup(name ? name : "");
  if (!copy) {
    acl_fail(ACL_ERROR_BAD_ALLOC, "aclSetTensorDescName: out of memory");
    return;
  }
  free(desc->name);
  desc->name = copy;
}

const char *aclGetTensorDescName(aclTensorDesc *desc) { return desc ? desc->name : ""; }

aclError aclSetTensorFormat(aclTensorDesc *desc, aclFormat format) {
  if (!desc) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclSetTensorFormat: desc is NULL");
  desc->format = format;
  return ACL_SUCCESS;
}

/* *to (rank *rank) becomes a copy of numDims dims. */
static aclError set_dims(const char *call, aclTensorDesc *desc, int numDims, const int64_t *dims,
                         int64_t **to, size_t *rank) {
  if (!desc) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: desc is NULL", call);
  aclError e = check_shape(call, numDims, dims);
  if (e) return e;
  int64_t *copy = calloc(numDims ? (size_t)numDims : 1, sizeof *copy);
  if (!copy) return acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call);
  if (numDims) memcpy(copy, dims, (size_t)numDims * sizeof *copy);
  free(*to);
  *to = copy;
  *rank = (size_t)numDims;
  return ACL_SUCCESS;
}

aclError aclSetTensorShape(aclTensorDesc *desc, int numDims, const int64_t *dims) {
  aclError e = set_dims("aclSetTensorShape", desc, numDims, dims, desc ? &desc->dims : NULL,
                        desc ? &desc->rank : NULL);
  if (!e) { /* (a range set for the old shape no longer fits) */
    free(desc->shape_range);
    desc->shape_range = NULL;
  }
  return e;
}

/* The older names of aclSetTensorShape and aclSetTensorFormat. */
aclError aclSetTensorStorageShape(aclTensorDesc *desc, int numDims, const int64_t *dims) {
  if (!desc) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclSetTensorStorageShape: desc is NULL");
  return aclSetTensorShape(desc, numDims, dims);
}

aclError aclSetTensorStorageFormat(aclTensorDesc *desc, aclFormat format) {
  if (!desc) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclSetTensorStorageFormat: desc is NULL");
  return aclSetTensorFormat(desc, format);
}

aclError aclSetTensorOriginShape(aclTensorDesc *desc, int numDims, const int64_t *dims) {
  return set_dims("aclSetTensorOriginShape", desc, numDims, dims, desc ? &desc->origin_dims : NULL,
                  desc ? &desc->origin_rank : NULL);
}

aclError aclSetTensorOriginFormat(aclTensorDesc *desc, aclFormat format) {
  if (!desc) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclSetTensorOriginFormat: desc is NULL");
  desc->origin_format = format;
  return ACL_SUCCESS;
}

/* n ranges {least, greatest} (greatest -1: unbounded) copied to *to. */
static aclError set_ranges(const char *call, aclTensorDesc *desc, size_t n, int64_t ranges[][2],
                           int64_t (**to)[2]) {
  if (!desc || (n && !ranges))
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", call, !desc ? "desc" : "the ranges");
  for (size_t k = 0; k < n; k++)
    if (ranges[k][1] != -1 && ranges[k][0] > ranges[k][1])
      return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: range %zu is {%lld, %lld}: least > greatest", call, k,
                      (long long)ranges[k][0], (long long)ranges[k][1]);
  int64_t(*copy)[2] = calloc(n ? n : 1, sizeof *copy);
  if (!copy) return acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call);
  if (n) memcpy(copy, ranges, n * sizeof *copy);
  free(*to);
  *to = copy;
  return ACL_SUCCESS;
}

aclError aclSetTensorShapeRange(aclTensorDesc *desc, size_t dimsCount,
                                int64_t dimsRange[][ACL_TENSOR_SHAPE_RANGE_NUM]) {
  const char *call = "aclSetTensorShapeRange";
  if (desc && dimsCount != desc->rank)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: dimsCount %zu, the description has %zu dims", call,
                    dimsCount, desc->rank);
  return set_ranges(call, desc, dimsCount, dimsRange, desc ? &desc->shape_range : NULL);
}

aclError aclSetTensorValueRange(aclTensorDesc *desc, size_t valueCount,
                                int64_t valueRange[][ACL_TENSOR_VALUE_RANGE_NUM]) {
  aclError e =
      set_ranges("aclSetTensorValueRange", desc, valueCount, valueRange, desc ? &desc->value_range : NULL);
  if (!e) desc->nvalue_ranges = valueCount;
  return e;
}

/* Dim index's range: the one aclSetTensorShapeRange set, else {d, d} for a known dim. */
aclError aclGetTensorDescDimRange(const aclTensorDesc *desc, size_t index, size_t dimRangeNum,
                                  int64_t *dimRange) {
  const char *call = "aclGetTensorDescDimRange";
  if (!desc || !dimRange)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", call, !desc ? "desc" : "dimRange");
  if (dimRangeNum != ACL_TENSOR_SHAPE_RANGE_NUM)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: dimRangeNum %zu, a range has %d values", call, dimRangeNum,
                    ACL_TENSOR_SHAPE_RANGE_NUM);
  if (index >= desc->rank || unknown_rank(desc))
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: index %zu, the description has %zu dims", call, index,
                    unknown_rank(desc) ? (size_t)0 : desc->rank);
  if (desc->shape_range) {
    dimRange[0] = desc->shape_range[index][0], dimRange[1] = desc->shape_range[index][1];
  } else if (desc->dims[index] >= 0) {
    dimRange[0] = dimRange[1] = desc->dims[index];
  } else {
    return acl_fail(ACL_ERROR_INVALID_PARAM,
                    "%s: dim %zu is unknown (-1) and has no range (aclSetTensorShapeRange)", call, index);
  }
  return ACL_SUCCESS;
}

aclError aclSetTensorDynamicInput(aclTensorDesc *desc, const char *dynamicInputName) {
  const char *call = "aclSetTensorDynamicInput";
  if (!desc || !dynamicInputName)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", call, !desc ? "desc" : "dynamicInputName");
  char *copy = strdup(dynamicInputName);
  if (!copy) return acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call);
  free(desc->dynamic_input);
  desc->dynamic_input = copy;
  return ACL_SUCCESS;
}

aclError aclSetTensorConst(aclTensorDesc *desc, void *dataBuffer, size_t length) {
  const char *call = "aclSetTensorConst";
  if (!desc || !dataBuffer || !length)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", call,
                    !desc         ? "desc is NULL"
                    : !dataBuffer ? "dataBuffer is NULL"
                                  : "length is 0");
  void *copy = malloc(length);
  if (!copy) return acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call);
  memcpy(copy, dataBuffer, length);
  free(desc->const_data);
  desc->const_data = copy, desc->const_bytes = length;
  return ACL_SUCCESS;
}

aclError aclSetTensorPlaceMent(aclTensorDesc *desc, aclMemType memType) {
  const char *call = "aclSetTensorPlaceMent";
  if (!desc) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: desc is NULL", call);
  if (memType < ACL_MEMTYPE_DEVICE || memType > ACL_MEMTYPE_HOST_COMPILE_INDEPENDENT)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: memType %d is no aclMemType", call, (int)memType);
  desc->placement = memType;
  return ACL_SUCCESS;
}

/* A description here is one object, never part of an array, and holds no
 * tensor's address: those come from aclmdlCreateAndGetOpDesc, which is not
 * provided. */
aclTensorDesc *aclGetTensorDescByIndex(aclTensorDesc *desc, size_t index) {
  if (!desc || index != 0) {
    acl_fail(ACL_ERROR_INVALID_PARAM, "aclGetTensorDescByIndex: %s",
             !desc ? "desc is NULL"
                   : "index > 0: the description is "
                     "not an array's");
    return NULL;
  }
  return desc;
}

void *aclGetTensorDescAddress(const aclTensorDesc *desc) {
  acl_fail(ACL_ERROR_INVALID_PARAM, "aclGetTensorDescAddress: %s",
           !desc ? "desc is NULL" : "the description holds no address (aclmdlCreateAndGetOpDesc's would)");
  return NULL;
}

/* NCHW <-> NHWC, and either to NC1HWC0 (C0 = 32 bytes of the data type:
 * 16 fp16 values, 32 int8); otherwise ACL_ERROR_FEATURE_UNSUPPORTED. */
aclError aclTransTensorDescFormat(const aclTensorDesc *srcDesc, aclFormat dstFormat,
                                  aclTensorDesc **dstDesc) {
  const char *call = "aclTransTensorDescFormat";
  if (!srcDesc || !dstDesc)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", call, !srcDesc ? "srcDesc" : "dstDesc");
  *dstDesc = NULL;
  aclFormat f = srcDesc->format;
  int four = srcDesc->rank == 4 && !unknown_rank(srcDesc);
  int64_t d[5] = {0};
  size_t rank = srcDesc->rank;
  if (f == dstFormat) {
    rank = srcDesc->rank;
  } else if (four && (f == ACL_FORMAT_NCHW || f == ACL_FORMAT_NHWC) &&
             (dstFormat == ACL_FORMAT_NCHW || dstFormat == ACL_FORMAT_NHWC ||
              dstFormat == ACL_FORMAT_NC1HWC0)) {
    const int64_t *s = srcDesc->dims;
    int64_t n = s[0], c = f == ACL_FORMAT_NCHW ? s[1] : s[3], h = f == ACL_FORMAT_NCHW ? s[2] : s[1],
            w = f == ACL_FORMAT_NCHW ? s[3] : s[2];
    size_t bytes = aclDataTypeSize(srcDesc->dtype);
    int64_t c0 = bytes ? (int64_t)(32 / bytes) : 16;
    if (dstFormat == ACL_FORMAT_NCHW) d[0] = n, d[1] = c, d[2] = h, d[3] = w, rank = 4;
    if (dstFormat == ACL_FORMAT_NHWC) d[0] = n, d[1] = h, d[2] = w, d[3] = c, rank = 4;
    if (dstFormat == ACL_FORMAT_NC1HWC0)
      d[0] = n, d[1] = c < 0 ? -1 : (c + c0 - 1) / c0, d[2] = h, d[3] = w, d[4] = c0, rank = 5;
  } else {
    return acl_fail(ACL_ERROR_FEATURE_UNSUPPORTED,
                    "%s: format %d to %d: only NCHW <-> NHWC and those to NC1HWC0, of 4-dim descriptions",
                    call, (int)f, (int)dstFormat);
  }
  aclTensorDesc *t = acl_tensor_desc(srcDesc->dtype, dstFormat, rank, f == dstFormat ? srcDesc->dims : d);
  if (t) aclSetTensorDescName(t, srcDesc->name);
  if (!t || strcmp(t->name, srcDesc->name) != 0) {
    aclDestroyTensorDesc(t);
    return acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call);
  }
  *dstDesc = t;
  return ACL_SUCCESS;
}

/* --- a dataset's descriptions */

void acl_dataset_put_desc(aclmdlDataset *dataset, size_t index, aclTensorDesc *d) {
  aclDestroyTensorDesc(dataset->descs[index]);
  dataset->descs[index] = d;
}

aclError aclmdlSetDatasetTensorDesc(aclmdlDataset *dataset, aclTensorDesc *tensorDesc, size_t index) {
  const char *call = "aclmdlSetDatasetTensorDesc";
  if (!dataset || !tensorDesc)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", call, !dataset ? "dataset" : "tensorDesc");
  if (index >= dataset->n)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: index %zu, the dataset has %zu buffers", call, index,
                    dataset->n);
  aclTensorDesc *copy =
      acl_tensor_desc(tensorDesc->dtype, tensorDesc->format, tensorDesc->rank, tensorDesc->dims);
  if (copy) aclSetTensorDescName(copy, tensorDesc->name);
  if (!copy || strcmp(copy->name, tensorDesc->name) != 0) {
    aclDestroyTensorDesc(copy);
    return acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call);
  }
  acl_dataset_put_desc(dataset, index, copy);
  return ACL_SUCCESS;
}

aclTensorDesc *aclmdlGetDatasetTensorDesc(const aclmdlDataset *dataset, size_t index) {
  if (!dataset || index >= dataset->n) {
    acl_fail(ACL_ERROR_INVALID_PARAM, "aclmdlGetDatasetTensorDesc: %s",
             !dataset ? "dataset is NULL" : "index out of range");
    return NULL;
  }
  return dataset->descs[index];
}
