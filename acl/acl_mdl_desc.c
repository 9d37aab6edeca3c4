/* acl_mdl_desc.c - AscendCL's model descriptions (acl_mdl.h: aclmdlDesc):
 * filled from a loaded model (aclmdlGetDesc) or from an om not loaded
 * (aclmdlGetDescFromFile, aclmdlGetDescFromMem: libomrt reads and verifies
 * the package without a context, and the description is the same one
 * aclmdlGetDesc gives after a load of it). A description copies everything
 * it reports (names included) so it outlives the model; it is a plain
 * object the caller creates and destroys.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl_internal.h"

/* --- model descriptions */

typedef struct acl_io {
  /* owned: an input's tensor name; an output's name as AscendCL gives an
   * ONNX model's: "node:edge:tensor" (node the source node computing it,
   * edge which of its outputs), "node:edge" for one atc --out_nodes picked,
   * the tensor name when the package does not record its node */
  char *name;
  char *tensor; /* owned: an output's tensor name when it differs from name, else NULL */
  aclDataType dtype;
  size_t bytes;
  int rank;
  int64_t dims[OMRT_MAX_RANK];
  aclFormat format;
  int yuv420sp; /* an input with static YUV420SP_U8 AIPP: dims are [N, H*3/2, W, 1] */
} acl_io;

struct aclmdlDesc {
  size_t nin, nout;     /* nin counts ACL_DYNAMIC_TENSOR_NAME, the last input, for a model with gears */
  acl_io *io;           /* [nin + nout]: the inputs, then the outputs */
  int gear_kind;        /* omrt_gear_kind */
  size_t ngears;        /* 0 without gears */
  size_t ndims;         /* per gear: every input's dims one after another */
  int64_t *gear_values; /* [ngears][OMRT_MAX_GEAR_VALUES]: omrt_gear_desc.values */
  int64_t *gear_dims;   /* [ngears][ndims] */
  uint32_t model_id;    /* the model aclmdlGetDesc described (aclmdlGetCurOutputDims asks it); 0: none */
};

aclmdlDesc *aclmdlCreateDesc(void) {
  aclmdlDesc *d = calloc(1, sizeof *d);
  if (!d) acl_fail(ACL_ERROR_BAD_ALLOC, "aclmdlCreateDesc: out of memory");
  return d;
}

static void clear_desc(aclmdlDesc *d) {
  for (size_t i = 0; d->io && i < d->nin + d->nout; i++)
    free(d->io[i].name), free(d->io[i].tensor);
  free(d->io);
  free(d->gear_values);
  free(d->gear_dims);
  *d = (aclmdlDesc){0};
}

aclError aclmdlDestroyDesc(aclmdlDesc *modelDesc) {
  if (!modelDesc) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclmdlDestroyDesc: modelDesc is NULL");
  clear_desc(modelDesc);
  free(modelDesc);
  return ACL_SUCCESS;
}

/* d's gears from the model's (under the lock); nonzero when out of memory. */
static int describe_gears(aclmdlDesc *d, const acl_model *m) {
  if (!m->dyn) return 0;
  omrt_gear_desc g;
  omrt_model_gear(m->m, 0, &g);
  d->gear_kind = g.kind;
  d->ngears = (size_t)omrt_model_num_gears(m->m);
  for (int i = 0; i < m->nin; i++) {
    omrt_tensor_desc t;
    omrt_model_input(m->m, i, &t);
    d->ndims += (size_t)t.rank;
  }
  d->gear_values = calloc(d->ngears * OMRT_MAX_GEAR_VALUES, sizeof *d->gear_values);
  d->gear_dims = calloc(d->ngears * d->ndims + 1, sizeof *d->gear_dims);
  if (!d->gear_values || !d->gear_dims) return 1;
  for (size_t k = 0; k < d->ngears; k++) {
    omrt_model_gear(m->m, (int)k, &g);
    memcpy(d->gear_values + k * OMRT_MAX_GEAR_VALUES, g.values, sizeof g.values);
    int64_t *dims = d->gear_dims + k * d->ndims;
    for (int i = 0; i < m->nin; i++) {
      omrt_tensor_desc t;
      omrt_model_gear_input(m->m, (int)k, i, &t);
      memcpy(dims, t.dims, (size_t)t.rank * sizeof *dims);
      dims += t.rank;
    }
  }
  return 0;
}

/* Output `index` at the gear where it is largest (AscendCL describes a
 * model with gears by its largest gear: sizes and dims, no -1). */
static void largest_output(const acl_model *m, int index, omrt_tensor_desc *t) {
  omrt_model_gear_output(m->m, 0, index, t);
  for (int g = 1; g < omrt_model_num_gears(m->m); g++) {
    omrt_tensor_desc u;
    omrt_model_gear_output(m->m, g, index, &u);
    if (u.bytes > t->bytes) *t = u;
  }
}

/* io's names for input (out -1) or output `out` of m whose tensor is
 * `tensor`; 0 when out of memory. */
static int io_names(const acl_model *m, int out, const char *tensor, acl_io *io) {
  omrt_output_node o = {0};
  if (out >= 0) omrt_model_output_node(m->m, out, &o);
  if (!o.node) return (io->name = strdup(tensor)) != NULL;
  size_t n = strlen(o.node) + strlen(tensor) + 16;
  if (!(io->name = malloc(n)) || !(io->tensor = strdup(tensor))) return 0;
  if (o.picked)
    snprintf(io->name, n, "%s:%d", o.node, o.edge);
  else
    snprintf(io->name, n, "%s:%d:%s", o.node, o.edge, tensor);
  return 1;
}

/* Fills d from model m (m->id 0 for one not loaded); `call` names the
 * caller in the message when out of memory. */
static aclError describe(const char *call, aclmdlDesc *d, const acl_model *m) {
  clear_desc(d);
  size_t nin = (size_t)(m->nin + m->dyn), n = nin + (size_t)m->nout;
  if (!(d->io = calloc(n ? n : 1, sizeof *d->io)) || describe_gears(d, m)) {
    clear_desc(d);
    return acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call);
  }
  d->nin = nin;
  d->nout = (size_t)m->nout;
  d->model_id = m->id;
  for (size_t i = 0; i < n; i++) {
    omrt_tensor_desc t;
    if (i < (size_t)m->nin)
      omrt_model_input(m->m, (int)i, &t);
    else if (i < nin) /* the gear's values */
      t = (omrt_tensor_desc){.name = ACL_DYNAMIC_TENSOR_NAME,
                             .dtype = OMRT_INT64,
                             .rank = 1,
                             .dims = {m->nvalues},
                             .bytes = (size_t)m->nvalues * sizeof(int64_t)};
    else
      largest_output(m, (int)(i - nin), &t);
    acl_io *io = &d->io[i];
    *io = (acl_io){
        .dtype = acl_data_type(t.dtype), .bytes = t.bytes, .rank = t.rank, .format = acl_format(t.format)};
    int ok = io_names(m, i < nin ? -1 : (int)(i - nin), t.name, io);
    memcpy(io->dims, t.dims, sizeof io->dims);
    omrt_aipp_info aipp = {0};
    if (i < (size_t)m->nin) omrt_model_input_aipp(m->m, (int)i, &aipp);
    io->yuv420sp =
        aipp.mode == OMRT_AIPP_STATIC && aipp.config.input_format == OMRT_AIPP_YUV420SP_U8 && t.rank == 4;
    if (!ok) {
      clear_desc(d);
      return acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call);
    }
  }
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
  return acl_leave_with(describe("aclmdlGetDesc", modelDesc, m));
}

/* The om `path` (or `size` bytes at `model`) read and verified, not
 * loaded: no context, no work or weight memory. Its aclmdlGetCurOutputDims
 * are the description's (no model runs). */
static aclError desc_from(const char *call, aclmdlDesc *d, const char *path, const void *model, size_t size) {
  aclError e = acl_enter(call);
  if (e) return e;
  acl_leave();
  if (!d) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: modelDesc is NULL", call);
  if (path ? !*path : !model || size == 0)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", call,
                    path     ? "modelPath is empty"
                    : !model ? "model is NULL"
                             : "modelSize is 0");
  acl_model am = {0};
  void *copy;
  if ((e = acl_mdl_read(call, path, model, size, &am.m, &copy))) return e;
  acl_model_io(&am);
  e = describe(call, d, &am);
  omrt_model_free(am.m);
  free(copy);
  return e;
}

aclError aclmdlGetDescFromFile(aclmdlDesc *modelDesc, const char *modelPath) {
  if (!modelPath) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclmdlGetDescFromFile: modelPath is NULL");
  return desc_from("aclmdlGetDescFromFile", modelDesc, modelPath, NULL, 0);
}

aclError aclmdlGetDescFromMem(aclmdlDesc *modelDesc, const void *model, size_t modelSize) {
  return desc_from("aclmdlGetDescFromMem", modelDesc, NULL, model, modelSize);
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

/* Input or output `index`'s dims; for an input, -1 where its gears differ.
 * v1 (aclmdlGetInputDims): an input with static YUV420SP AIPP is described
 * as the image, [N, H, W, 3]; otherwise (V2, and every other input) the
 * buffer's dims, whose product is aclmdlGetInputSizeByIndex: NV12's
 * [N, H*3/2, W, 1], as the documentation's two tables say. */
static aclError get_dims(const char *call, const aclmdlDesc *d, size_t index, int is_input, int v1,
                         aclmdlIODims *dims) {
  const acl_io *io = io_at(call, d, index, is_input);
  if (!io) return ACL_ERROR_INVALID_PARAM;
  if (!dims) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: dims is NULL", call);
  memset(dims, 0, sizeof *dims);
  strncpy(dims->name, io->name, sizeof dims->name - 1);
  dims->dimCount = (size_t)io->rank;
  for (int k = 0; k < io->rank; k++)
    dims->dims[k] = io->dims[k];
  if (is_input && d->ngears >= 2 && index + 1 < d->nin) {
    /* A model input of a model with gears: -1 where the gears differ. */
    size_t at = 0;
    for (size_t i = 0; i < index; i++)
      at += (size_t)d->io[i].rank;
    for (int k = 0; k < io->rank; k++)
      for (size_t g = 1; g < d->ngears; g++)
        if (d->gear_dims[g * d->ndims + at + (size_t)k] != d->gear_dims[at + (size_t)k]) dims->dims[k] = -1;
  }
  if (v1 && is_input && io->yuv420sp) {
    if (dims->dims[1] > 0) dims->dims[1] = dims->dims[1] * 2 / 3;
    dims->dims[3] = 3;
  }
  return ACL_SUCCESS;
}

aclError aclmdlGetInputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims) {
  return get_dims("aclmdlGetInputDims", modelDesc, index, 1, 1, dims);
}

aclError aclmdlGetInputDimsV2(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims) {
  return get_dims("aclmdlGetInputDimsV2", modelDesc, index, 1, 0, dims);
}

aclError aclmdlGetInputDimsRange(const aclmdlDesc *modelDesc, size_t index, aclmdlIODimsRange *dimsRange) {
  const char *call = "aclmdlGetInputDimsRange";
  aclmdlIODims dims;
  aclError e = get_dims(call, modelDesc, index, 1, 0, &dims);
  if (e) return e;
  if (!dimsRange) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: dimsRange is NULL", call);
  memset(dimsRange, 0, sizeof *dimsRange);
  if (modelDesc->ngears > 1) return ACL_SUCCESS; /* gears, not ranges: rangeCount 0 */
  dimsRange->rangeCount = dims.dimCount;
  for (size_t k = 0; k < dims.dimCount; k++)
    dimsRange->range[k][0] = dimsRange->range[k][1] = dims.dims[k];
  return ACL_SUCCESS;
}

const char *aclmdlGetTensorRealName(const aclmdlDesc *modelDesc, const char *name) {
  const char *call = "aclmdlGetTensorRealName";
  if (!modelDesc || !name) {
    acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", call, !modelDesc ? "modelDesc" : "name");
    return NULL;
  }
  const char *found = NULL;
  size_t n = strlen(name);
  for (size_t i = 0; i < modelDesc->nin + modelDesc->nout; i++) {
    const char *full = modelDesc->io[i].name;
    if (strcmp(full, name) == 0) return full;
    if (n == ACL_MAX_TENSOR_NAME_LEN - 1 && strncmp(full, name, n) == 0 && !found) found = full;
  }
  if (!found) acl_fail(ACL_ERROR_INVALID_PARAM, "%s: the model has no tensor named '%s'", call, name);
  return found;
}

aclError aclmdlGetOutputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims) {
  return get_dims("aclmdlGetOutputDims", modelDesc, index, 0, 0, dims);
}

/* The output's dims at the gear the last aclmdlSet* call on the model
 * chose (the description's, the largest gear's, before one or for a
 * description not from a loaded model), with a counted output's extent
 * as the model's last run left it (libomrt's omrt_context_output_dims). */
aclError aclmdlGetCurOutputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims) {
  const char *call = "aclmdlGetCurOutputDims";
  aclError e = get_dims(call, modelDesc, index, 0, 0, dims);
  if (e || (e = acl_enter(call))) return e;
  acl_model *m = acl_find_model(modelDesc->model_id);
  omrt_tensor_desc t;
  if (m && m->cur_gear >= 0) {
    omrt_model_gear_output(m->m, m->cur_gear, (int)index, &t);
    dims->dimCount = (size_t)t.rank;
    for (int k = 0; k < t.rank; k++)
      dims->dims[k] = t.dims[k];
  }
  if (m) {
    pthread_mutex_lock(&m->run); /* not during a run */
    if (omrt_context_output_dims(m->ctx, (int)index, &t) == OMRT_OK && t.count_axis >= 0)
      dims->dims[t.count_axis] = t.dims[t.count_axis];
    pthread_mutex_unlock(&m->run);
  }
  return acl_leave_with(ACL_SUCCESS);
}

const char *aclmdlGetInputNameByIndex(const aclmdlDesc *modelDesc, size_t index) {
  const acl_io *io = io_at("aclmdlGetInputNameByIndex", modelDesc, index, 1);
  return io ? io->name : "";
}

const char *aclmdlGetOutputNameByIndex(const aclmdlDesc *modelDesc, size_t index) {
  const acl_io *io = io_at("aclmdlGetOutputNameByIndex", modelDesc, index, 0);
  return io ? io->name : "";
}

/* The input or output of that name (an output also by its tensor name). */
static aclError index_by_name(const char *call, const aclmdlDesc *d, const char *name, int is_input,
                              size_t *index) {
  if (!d || !name || !index)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", call,
                    !d      ? "modelDesc"
                    : !name ? "name"
                            : "index");
  size_t n = is_input ? d->nin : d->nout;
  for (size_t i = 0; i < n; i++) {
    const acl_io *io = &d->io[is_input ? i : d->nin + i];
    if (strcmp(io->name, name) == 0 || (io->tensor && strcmp(io->tensor, name) == 0)) {
      *index = i;
      return ACL_SUCCESS;
    }
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

/* As the om's IO partition records them (omrt_tensor_desc.format). */
aclFormat aclmdlGetInputFormat(const aclmdlDesc *modelDesc, size_t index) {
  const acl_io *io = io_at("aclmdlGetInputFormat", modelDesc, index, 1);
  return io ? io->format : ACL_FORMAT_UNDEFINED;
}

aclFormat aclmdlGetOutputFormat(const aclmdlDesc *modelDesc, size_t index) {
  const acl_io *io = io_at("aclmdlGetOutputFormat", modelDesc, index, 0);
  return io ? io->format : ACL_FORMAT_UNDEFINED;
}

aclDataType aclmdlGetInputDataType(const aclmdlDesc *modelDesc, size_t index) {
  const acl_io *io = io_at("aclmdlGetInputDataType", modelDesc, index, 1);
  return io ? io->dtype : ACL_DT_UNDEFINED;
}

aclDataType aclmdlGetOutputDataType(const aclmdlDesc *modelDesc, size_t index) {
  const acl_io *io = io_at("aclmdlGetOutputDataType", modelDesc, index, 0);
  return io ? io->dtype : ACL_DT_UNDEFINED;
}

/* --- gears (acl_mdl.h): index is reserved (-1) */

aclError aclmdlGetDynamicBatch(const aclmdlDesc *modelDesc, aclmdlBatch *batch) {
  if (!modelDesc || !batch)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "aclmdlGetDynamicBatch: %s is NULL",
                    !batch ? "batch" : "modelDesc");
  memset(batch, 0, sizeof *batch);
  for (size_t k = 0;
       modelDesc->gear_kind == OMRT_GEAR_BATCH && k < modelDesc->ngears && k < ACL_MAX_BATCH_NUM; k++)
    batch->batch[batch->batchCount++] = (uint64_t)modelDesc->gear_values[k * OMRT_MAX_GEAR_VALUES];
  return ACL_SUCCESS;
}

aclError aclmdlGetDynamicHW(const aclmdlDesc *modelDesc, size_t index, aclmdlHW *hw) {
  (void)index;
  if (!modelDesc || !hw)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "aclmdlGetDynamicHW: %s is NULL", !hw ? "hw" : "modelDesc");
  memset(hw, 0, sizeof *hw);
  for (size_t k = 0;
       modelDesc->gear_kind == OMRT_GEAR_IMAGE_SIZE && k < modelDesc->ngears && k < ACL_MAX_HW_NUM;
       k++, hw->hwCount++) {
    hw->hw[k][0] = (uint64_t)modelDesc->gear_values[k * OMRT_MAX_GEAR_VALUES];
    hw->hw[k][1] = (uint64_t)modelDesc->gear_values[k * OMRT_MAX_GEAR_VALUES + 1];
  }
  return ACL_SUCCESS;
}

aclError aclmdlGetInputDynamicGearCount(const aclmdlDesc *modelDesc, size_t index, size_t *gearCount) {
  (void)index;
  if (!modelDesc || !gearCount)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "aclmdlGetInputDynamicGearCount: %s is NULL",
                    !gearCount ? "gearCount" : "modelDesc");
  *gearCount = modelDesc->gear_kind == OMRT_GEAR_DIMS ? modelDesc->ngears : 0;
  return ACL_SUCCESS;
}

aclError aclmdlGetInputDynamicDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims,
                                   size_t gearCount) {
  (void)index;
  const char *call = "aclmdlGetInputDynamicDims";
  if (!modelDesc || !dims)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", call, !dims ? "dims" : "modelDesc");
  size_t n = modelDesc->gear_kind == OMRT_GEAR_DIMS ? modelDesc->ngears : 0;
  if (gearCount != n)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: gearCount %zu, the model has %zu dims gears", call,
                    gearCount, n);
  if (modelDesc->ndims > ACL_MAX_DIM_CNT)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: the inputs have %zu dims, more than ACL_MAX_DIM_CNT", call,
                    modelDesc->ndims);
  for (size_t k = 0; k < n; k++) {
    memset(&dims[k], 0, sizeof dims[k]);
    dims[k].dimCount = modelDesc->ndims;
    memcpy(dims[k].dims, modelDesc->gear_dims + k * modelDesc->ndims,
           modelDesc->ndims * sizeof *dims[k].dims);
  }
  return ACL_SUCCESS;
}
