/* acl_data.c - AscendCL's data descriptions (acl_base.h, acl_mdl.h): data
 * buffers, datasets, model descriptions, data types.
 *
 * None of these touch the registry: they are plain objects the caller
 * creates and destroys, usable before aclInit as in AscendCL, except
 * aclmdlGetDesc, which reads a loaded model. A description copies
 * everything it reports (names included) so it outlives the model.
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
  case ACL_UINT8: return 1;
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
  case ACL_STRING: return 0;
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
  }
  return ACL_DT_UNDEFINED;
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
    if (!b) return acl_fail(ACL_ERROR_BAD_ALLOC, "aclmdlAddDatasetBuffer: out of memory");
    dataset->bufs = b;
    dataset->cap = cap;
  }
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

/* --- model descriptions */

typedef struct acl_io {
  char *name; /* owned */
  aclDataType dtype;
  size_t bytes;
  int rank;
  int64_t dims[OMRT_MAX_RANK];
} acl_io;

struct aclmdlDesc {
  size_t nin, nout;
  acl_io *io; /* [nin + nout]: the inputs, then the outputs */
};

aclmdlDesc *aclmdlCreateDesc(void) {
  aclmdlDesc *d = calloc(1, sizeof *d);
  if (!d) acl_fail(ACL_ERROR_BAD_ALLOC, "aclmdlCreateDesc: out of memory");
  return d;
}

static void clear_desc(aclmdlDesc *d) {
  for (size_t i = 0; d->io && i < d->nin + d->nout; i++)
    free(d->io[i].name);
  free(d->io);
  d->io = NULL;
  d->nin = d->nout = 0;
}

aclError aclmdlDestroyDesc(aclmdlDesc *modelDesc) {
  if (!modelDesc) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclmdlDestroyDesc: modelDesc is NULL");
  clear_desc(modelDesc);
  free(modelDesc);
  return ACL_SUCCESS;
}

aclError aclmdlGetDesc(aclmdlDesc *modelDesc, uint32_t modelId) {
  aclError e = acl_enter("aclmdlGetDesc");
  if (e) return e;
  if (!modelDesc)
    return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "aclmdlGetDesc: modelDesc is NULL"));
  acl_model *m = acl_find_model(modelId);
  if (!m)
    return acl_leave_with(
        acl_fail(ACL_ERROR_INVALID_MODEL_ID, "aclmdlGetDesc: modelId %u: no such model is loaded", modelId));
  clear_desc(modelDesc);
  size_t n = (size_t)(m->nin + m->nout);
  if (!(modelDesc->io = calloc(n ? n : 1, sizeof *modelDesc->io)))
    return acl_leave_with(acl_fail(ACL_ERROR_BAD_ALLOC, "aclmdlGetDesc: out of memory"));
  modelDesc->nin = (size_t)m->nin;
  modelDesc->nout = (size_t)m->nout;
  for (size_t i = 0; i < n; i++) {
    omrt_tensor_desc t;
    if (i < (size_t)m->nin)
      omrt_model_input(m->m, (int)i, &t);
    else
      omrt_model_output(m->m, (int)(i - (size_t)m->nin), &t);
    acl_io *io = &modelDesc->io[i];
    *io = (acl_io){strdup(t.name), acl_data_type(t.dtype), t.bytes, t.rank, {0}};
    memcpy(io->dims, t.dims, sizeof io->dims);
    if (!io->name) {
      clear_desc(modelDesc);
      return acl_leave_with(acl_fail(ACL_ERROR_BAD_ALLOC, "aclmdlGetDesc: out of memory"));
    }
  }
  return acl_leave_with(ACL_SUCCESS);
}

size_t aclmdlGetNumInputs(aclmdlDesc *modelDesc) { return modelDesc ? modelDesc->nin : 0; }
size_t aclmdlGetNumOutputs(aclmdlDesc *modelDesc) { return modelDesc ? modelDesc->nout : 0; }

/* Input (is_input) or output `index` of d; NULL, with a message naming
 * `call`, when d is NULL or index is out of range. */
static const acl_io *io_at(const char *call, const aclmdlDesc *d, size_t index, int is_input) {
  const char *what = is_input ? "input" : "output";
  if (!d) {
    acl_fail(ACL_ERROR_INVALID_PARAM, "%s: modelDesc is NULL", call);
    return NULL;
  }
  size_t n = is_input ? d->nin : d->nout;
  if (index >= n) {
    acl_fail(ACL_ERROR_INVALID_PARAM, "%s: index %zu, the model has %zu %ss", call, index, n, what);
    return NULL;
  }
  return &d->io[is_input ? index : d->nin + index];
}

size_t aclmdlGetInputSizeByIndex(aclmdlDesc *modelDesc, size_t index) {
  const acl_io *io = io_at("aclmdlGetInputSizeByIndex", modelDesc, index, 1);
  return io ? io->bytes : 0;
}

size_t aclmdlGetOutputSizeByIndex(aclmdlDesc *modelDesc, size_t index) {
  const acl_io *io = io_at("aclmdlGetOutputSizeByIndex", modelDesc, index, 0);
  return io ? io->bytes : 0;
}

static aclError get_dims(const char *call, const aclmdlDesc *d, size_t index, int is_input,
                         aclmdlIODims *dims) {
  const acl_io *io = io_at(call, d, index, is_input);
  if (!io) return ACL_ERROR_INVALID_PARAM;
  if (!dims) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: dims is NULL", call);
  memset(dims, 0, sizeof *dims);
  strncpy(dims->name, io->name, sizeof dims->name - 1);
  dims->dimCount = (size_t)io->rank;
  for (int k = 0; k < io->rank; k++)
    dims->dims[k] = io->dims[k];
  return ACL_SUCCESS;
}

aclError aclmdlGetInputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims) {
  return get_dims("aclmdlGetInputDims", modelDesc, index, 1, dims);
}

aclError aclmdlGetOutputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims) {
  return get_dims("aclmdlGetOutputDims", modelDesc, index, 0, dims);
}

const char *aclmdlGetInputNameByIndex(const aclmdlDesc *modelDesc, size_t index) {
  const acl_io *io = io_at("aclmdlGetInputNameByIndex", modelDesc, index, 1);
  return io ? io->name : "";
}

const char *aclmdlGetOutputNameByIndex(const aclmdlDesc *modelDesc, size_t index) {
  const acl_io *io = io_at("aclmdlGetOutputNameByIndex", modelDesc, index, 0);
  return io ? io->name : "";
}

static aclError index_by_name(const char *call, const aclmdlDesc *d, const char *name, int is_input,
                              size_t *index) {
  if (!d || !name || !index)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", call,
                    !d      ? "modelDesc"
                    : !name ? "name"
                            : "index");
  size_t n = is_input ? d->nin : d->nout;
  for (size_t i = 0; i < n; i++)
    if (strcmp(d->io[is_input ? i : d->nin + i].name, name) == 0) {
      *index = i;
      return ACL_SUCCESS;
    }
  return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: the model has no %s named '%s'", call,
                  is_input ? "input" : "output", name);
}

aclError aclmdlGetInputIndexByName(const aclmdlDesc *modelDesc, const char *name, size_t *index) {
  return index_by_name("aclmdlGetInputIndexByName", modelDesc, name, 1, index);
}

aclError aclmdlGetOutputIndexByName(const aclmdlDesc *modelDesc, const char *name, size_t *index) {
  return index_by_name("aclmdlGetOutputIndexByName", modelDesc, name, 0, index);
}

/* Model inputs and outputs are plain C-order tensors: ND. */
aclFormat aclmdlGetInputFormat(const aclmdlDesc *modelDesc, size_t index) {
  return io_at("aclmdlGetInputFormat", modelDesc, index, 1) ? ACL_FORMAT_ND : ACL_FORMAT_UNDEFINED;
}

aclFormat aclmdlGetOutputFormat(const aclmdlDesc *modelDesc, size_t index) {
  return io_at("aclmdlGetOutputFormat", modelDesc, index, 0) ? ACL_FORMAT_ND : ACL_FORMAT_UNDEFINED;
}

aclDataType aclmdlGetInputDataType(const aclmdlDesc *modelDesc, size_t index) {
  const acl_io *io = io_at("aclmdlGetInputDataType", modelDesc, index, 1);
  return io ? io->dtype : ACL_DT_UNDEFINED;
}

aclDataType aclmdlGetOutputDataType(const aclmdlDesc *modelDesc, size_t index) {
  const acl_io *io = io_at("aclmdlGetOutputDataType", modelDesc, index, 0);
  return io ? io->dtype : ACL_DT_UNDEFINED;
}
