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
  *d = (aclTensorDesc){dtype, format, rank, copy, name};
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

aclError aclSetTensorShape(aclTensorDesc *desc, int numDims, const int64_t *dims) {
  const char *call = "aclSetTensorShape";
  if (!desc) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: desc is NULL", call);
  aclError e = check_shape(call, numDims, dims);
  if (e) return e;
  int64_t *copy = calloc(numDims ? (size_t)numDims : 1, sizeof *copy);
  if (!copy) return acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call);
  if (numDims) memcpy(copy, dims, (size_t)numDims * sizeof *copy);
  free(desc->dims);
  desc->dims = copy;
  desc->rank = (size_t)numDims;
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
