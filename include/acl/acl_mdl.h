/* acl_mdl.h - AscendCL models: load an om built by atc, describe its inputs
 * and outputs, run it on datasets (libascendcl; see acl.h).
 *
 * Loading: aclmdlLoadFromFile / aclmdlLoadFromMem let the runtime manage
 * the model's memory; the *WithMem variants run it in the caller's memory:
 * workPtr (workSize bytes, the activations) and weightPtr (weightSize bytes,
 * the weights, copied there at load), both device memory from aclrtMalloc
 * sized with aclmdlQuerySize, owned by the caller and kept until
 * aclmdlUnload (a NULL pointer lets the runtime manage that part). With
 * both given, the runtime allocates neither. Load, execute and unload a
 * model in the same context (ACL_ERROR_RT_MODEL_CONTEXT otherwise). The
 * model data given to aclmdlLoadFromMem* is copied: the caller may free it
 * after the call.
 *
 * Descriptions: an aclmdlDesc filled by aclmdlGetDesc holds its own copy of
 * the model's I/O (names, dims, sizes, data types, formats) and outlives
 * the model. Inputs and outputs are plain C-order tensors: their format is
 * ACL_FORMAT_ND (the om records no framework format).
 *
 * Datasets: an aclmdlDataset is a list of aclDataBuffer, one per model
 * input (or output) in order; it does not own the buffers (destroy them
 * yourself). aclmdlExecute checks the count, and that each buffer is device
 * memory of at least the tensor's size.
 *
 * Not provided: dynamic batch / image size / dims and AIPP (the om format
 * has no gears yet).
 */
#ifndef INC_EXTERNAL_ACL_ACL_MDL_H_
#define INC_EXTERNAL_ACL_ACL_MDL_H_

#include <stddef.h>
#include <stdint.h>

#include "acl_base.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ACL_MAX_DIM_CNT 128
#define ACL_MAX_TENSOR_NAME_LEN 128

typedef struct aclmdlDataset aclmdlDataset;
typedef struct aclmdlDesc aclmdlDesc;

typedef struct aclmdlIODims {
  char name[ACL_MAX_TENSOR_NAME_LEN]; /* the tensor's name, truncated and NUL-terminated */
  size_t dimCount;                    /* 0 for a scalar */
  int64_t dims[ACL_MAX_DIM_CNT];
} aclmdlIODims;

/* The memory a model needs: its work (activations) and weight bytes. */
ACL_FUNC_VISIBILITY aclError aclmdlQuerySize(const char *fileName, size_t *workSize, size_t *weightSize);
ACL_FUNC_VISIBILITY aclError aclmdlQuerySizeFromMem(const void *model, size_t modelSize, size_t *workSize,
                                                    size_t *weightSize);

ACL_FUNC_VISIBILITY aclError aclmdlLoadFromFile(const char *modelPath, uint32_t *modelId);
ACL_FUNC_VISIBILITY aclError aclmdlLoadFromMem(const void *model, size_t modelSize, uint32_t *modelId);
ACL_FUNC_VISIBILITY aclError aclmdlLoadFromFileWithMem(const char *modelPath, uint32_t *modelId,
                                                       void *workPtr, size_t workSize, void *weightPtr,
                                                       size_t weightSize);
ACL_FUNC_VISIBILITY aclError aclmdlLoadFromMemWithMem(const void *model, size_t modelSize, uint32_t *modelId,
                                                      void *workPtr, size_t workSize, void *weightPtr,
                                                      size_t weightSize);
ACL_FUNC_VISIBILITY aclError aclmdlUnload(uint32_t modelId); /* waits for its queued runs */

/* Runs the model once on the calling thread. */
ACL_FUNC_VISIBILITY aclError aclmdlExecute(uint32_t modelId, const aclmdlDataset *input,
                                           aclmdlDataset *output);
/* Enqueues one run on `stream` (NULL: the current context's default
 * stream); the buffers' addresses are taken now, their contents when the
 * run comes; aclrtSynchronizeStream waits for it. */
ACL_FUNC_VISIBILITY aclError aclmdlExecuteAsync(uint32_t modelId, const aclmdlDataset *input,
                                                aclmdlDataset *output, aclrtStream stream);

ACL_FUNC_VISIBILITY aclmdlDesc *aclmdlCreateDesc(void); /* NULL when out of memory */
ACL_FUNC_VISIBILITY aclError aclmdlDestroyDesc(aclmdlDesc *modelDesc);
ACL_FUNC_VISIBILITY aclError aclmdlGetDesc(aclmdlDesc *modelDesc, uint32_t modelId);
ACL_FUNC_VISIBILITY size_t aclmdlGetNumInputs(aclmdlDesc *modelDesc);
ACL_FUNC_VISIBILITY size_t aclmdlGetNumOutputs(aclmdlDesc *modelDesc);
/* Bytes; 0 for a bad description or index (the message says which). */
ACL_FUNC_VISIBILITY size_t aclmdlGetInputSizeByIndex(aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY size_t aclmdlGetOutputSizeByIndex(aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY aclError aclmdlGetInputDims(const aclmdlDesc *modelDesc, size_t index,
                                                aclmdlIODims *dims);
ACL_FUNC_VISIBILITY aclError aclmdlGetOutputDims(const aclmdlDesc *modelDesc, size_t index,
                                                 aclmdlIODims *dims);
/* Owned by the description; "" for a bad one or index. */
ACL_FUNC_VISIBILITY const char *aclmdlGetInputNameByIndex(const aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY const char *aclmdlGetOutputNameByIndex(const aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY aclError aclmdlGetInputIndexByName(const aclmdlDesc *modelDesc, const char *name,
                                                       size_t *index);
ACL_FUNC_VISIBILITY aclError aclmdlGetOutputIndexByName(const aclmdlDesc *modelDesc, const char *name,
                                                        size_t *index);
/* ACL_FORMAT_UNDEFINED / ACL_DT_UNDEFINED for a bad description or index. */
ACL_FUNC_VISIBILITY aclFormat aclmdlGetInputFormat(const aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY aclFormat aclmdlGetOutputFormat(const aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY aclDataType aclmdlGetInputDataType(const aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY aclDataType aclmdlGetOutputDataType(const aclmdlDesc *modelDesc, size_t index);

/* Shape gears (atc --dynamic_batch_size, --dynamic_image_size,
 * --dynamic_dims). Such a model has one more input, the last, named
 * ACL_DYNAMIC_TENSOR_NAME: the gear to run, which the application gives
 * like any input (a device buffer of aclmdlGetInputSizeByIndex bytes in the
 * input dataset) and fills with aclmdlSetDynamicBatchSize,
 * aclmdlSetDynamicHWSize or aclmdlSetInputDynamicDims (index: that input's).
 * The run reads it when it starts; every other buffer is then checked
 * against that gear's sizes (the sizes the description reports are the
 * largest gear's). Its bytes: the gear's values as int64 (the batch;
 * height, width; or each dynamic dim). The Get calls' index is reserved
 * (-1); a model without gears of that kind reports 0 of them. */
#define ACL_DYNAMIC_TENSOR_NAME "ascend_mbatch_shape_data"
#define ACL_MAX_BATCH_NUM 128
#define ACL_MAX_HW_NUM 128
typedef struct aclmdlBatch {
  size_t batchCount;
  uint64_t batch[ACL_MAX_BATCH_NUM];
} aclmdlBatch;
typedef struct aclmdlHW {
  size_t hwCount;
  uint64_t hw[ACL_MAX_HW_NUM][2]; /* height, width */
} aclmdlHW;
ACL_FUNC_VISIBILITY aclError aclmdlGetDynamicBatch(const aclmdlDesc *modelDesc, aclmdlBatch *batch);
ACL_FUNC_VISIBILITY aclError aclmdlGetDynamicHW(const aclmdlDesc *modelDesc, size_t index, aclmdlHW *hw);
ACL_FUNC_VISIBILITY aclError aclmdlGetInputDynamicGearCount(const aclmdlDesc *modelDesc, size_t index,
                                                            size_t *gearCount);
/* dims[gearCount]: per gear, every input's dims one after another (name unused). */
ACL_FUNC_VISIBILITY aclError aclmdlGetInputDynamicDims(const aclmdlDesc *modelDesc, size_t index,
                                                       aclmdlIODims *dims, size_t gearCount);
ACL_FUNC_VISIBILITY aclError aclmdlSetDynamicBatchSize(uint32_t modelId, aclmdlDataset *dataset, size_t index,
                                                       uint64_t batchSize);
ACL_FUNC_VISIBILITY aclError aclmdlSetDynamicHWSize(uint32_t modelId, aclmdlDataset *dataset, size_t index,
                                                    uint64_t height, uint64_t width);
/* dims: every input's dims one after another, as aclmdlGetInputDynamicDims gives them. */
ACL_FUNC_VISIBILITY aclError aclmdlSetInputDynamicDims(uint32_t modelId, aclmdlDataset *dataset, size_t index,
                                                       const aclmdlIODims *dims);

ACL_FUNC_VISIBILITY aclmdlDataset *aclmdlCreateDataset(void);                    /* NULL when out of memory */
ACL_FUNC_VISIBILITY aclError aclmdlDestroyDataset(const aclmdlDataset *dataset); /* not its buffers */
ACL_FUNC_VISIBILITY aclError aclmdlAddDatasetBuffer(aclmdlDataset *dataset, aclDataBuffer *dataBuffer);
ACL_FUNC_VISIBILITY size_t aclmdlGetDatasetNumBuffers(const aclmdlDataset *dataset);
ACL_FUNC_VISIBILITY aclDataBuffer *aclmdlGetDatasetBuffer(const aclmdlDataset *dataset, size_t index);

#ifdef __cplusplus
}
#endif

#endif
