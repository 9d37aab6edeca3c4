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
 * AIPP (atc --insert_op_conf): see the AIPP section below.
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
#define ACL_DIM_ENDPOINTS 2

typedef struct aclmdlDataset aclmdlDataset;
typedef struct aclmdlDesc aclmdlDesc;

typedef struct aclmdlIODims {
  char name[ACL_MAX_TENSOR_NAME_LEN]; /* the tensor's name, truncated and NUL-terminated */
  size_t dimCount;                    /* 0 for a scalar */
  int64_t dims[ACL_MAX_DIM_CNT];
} aclmdlIODims;

typedef struct aclmdlIODimsRange {
  size_t rangeCount;                                 /* 0 for a model with shape gears */
  int64_t range[ACL_MAX_DIM_CNT][ACL_DIM_ENDPOINTS]; /* per dim: least, greatest */
} aclmdlIODimsRange;

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

/* Model queues (the inputs and outputs passed through shared queues of the
 * chip's AI CPU) do not exist here: ACL_ERROR_FEATURE_UNSUPPORTED. */
ACL_FUNC_VISIBILITY aclError aclmdlLoadFromFileWithQ(const char *modelPath, uint32_t *modelId,
                                                     const uint32_t *inputQ, size_t inputQNum,
                                                     const uint32_t *outputQ, size_t outputQNum);
ACL_FUNC_VISIBILITY aclError aclmdlLoadFromMemWithQ(const void *model, size_t modelSize, uint32_t *modelId,
                                                    const uint32_t *inputQ, size_t inputQNum,
                                                    const uint32_t *outputQ, size_t outputQNum);

/* Bundles (one om holding several models that share variables, built by
 * the graph-building API's bundle calls, for weight updates): atc writes
 * one model per om, so there are none to load: every aclmdlBundle* call
 * is ACL_ERROR_FEATURE_UNSUPPORTED (aclmdlLoadFromFile loads the om). */
ACL_FUNC_VISIBILITY aclError aclmdlBundleLoadFromFile(const char *modelPath, uint32_t *bundleId);
ACL_FUNC_VISIBILITY aclError aclmdlBundleLoadFromMem(const void *model, size_t modelSize, uint32_t *bundleId);
ACL_FUNC_VISIBILITY aclError aclmdlBundleGetModelNum(uint32_t bundleId, size_t *modelNum);
ACL_FUNC_VISIBILITY aclError aclmdlBundleGetModelId(uint32_t bundleId, size_t index, uint32_t *modelId);
ACL_FUNC_VISIBILITY aclError aclmdlBundleUnload(uint32_t bundleId);

/* Loading by configuration: a handle collects the attributes of one of the
 * loads above (ACL_MDL_LOAD_TYPE_SIZET says which, then the path or the
 * model's address and size, and for *_WITH_MEM the work and weight memory);
 * aclmdlLoadWithConfig runs that load, checking that the attributes it
 * needs were set. valueSize must be the attribute's type's size (int32_t,
 * size_t or a pointer, as its name ends). The queue loads (*_WITH_Q) and
 * their attributes, and ACL_MDL_WORKSPACE_MEM_OPTIMIZE, are
 * ACL_ERROR_FEATURE_UNSUPPORTED. ACL_MDL_PRIORITY_INT32 (0..7) is checked
 * and kept; every model's runs are its own here, so it orders nothing. */
#define ACL_MDL_LOAD_FROM_FILE 1
#define ACL_MDL_LOAD_FROM_FILE_WITH_MEM 2
#define ACL_MDL_LOAD_FROM_MEM 3
#define ACL_MDL_LOAD_FROM_MEM_WITH_MEM 4
#define ACL_MDL_LOAD_FROM_FILE_WITH_Q 5
#define ACL_MDL_LOAD_FROM_MEM_WITH_Q 6
typedef struct aclmdlConfigHandle aclmdlConfigHandle;
typedef enum {
  ACL_MDL_PRIORITY_INT32 = 0,
  ACL_MDL_LOAD_TYPE_SIZET,
  ACL_MDL_PATH_PTR,     /* value: the address of a const char * (the path is copied) */
  ACL_MDL_MEM_ADDR_PTR, /* value: the address of a const void * */
  ACL_MDL_MEM_SIZET,
  ACL_MDL_WEIGHT_ADDR_PTR,
  ACL_MDL_WEIGHT_SIZET,
  ACL_MDL_WORKSPACE_ADDR_PTR,
  ACL_MDL_WORKSPACE_SIZET,
  ACL_MDL_INPUTQ_NUM_SIZET,
  ACL_MDL_INPUTQ_ADDR_PTR,
  ACL_MDL_OUTPUTQ_NUM_SIZET,
  ACL_MDL_OUTPUTQ_ADDR_PTR,
  ACL_MDL_WORKSPACE_MEM_OPTIMIZE,
} aclmdlConfigAttr;
ACL_FUNC_VISIBILITY aclmdlConfigHandle *aclmdlCreateConfigHandle(void); /* NULL when out of memory */
ACL_FUNC_VISIBILITY aclError aclmdlDestroyConfigHandle(aclmdlConfigHandle *handle);
ACL_FUNC_VISIBILITY aclError aclmdlSetConfigOpt(aclmdlConfigHandle *handle, aclmdlConfigAttr attr,
                                                const void *attrValue, size_t valueSize);
ACL_FUNC_VISIBILITY aclError aclmdlLoadWithConfig(const aclmdlConfigHandle *handle, uint32_t *modelId);

/* Dump: the operators' inputs and outputs written out as a model runs.
 * aclmdlInitDump -> aclmdlSetDump(a JSON file with a "dump" section, as
 * aclInit's) -> models loaded and run -> aclmdlFinalizeDump; models loaded
 * under the configuration that its dump_list selects dump every execution
 * until aclmdlFinalizeDump, into dump_path/{time}/0/{model_name}/
 * {model_id}/{iteration}/ (one DumpData file per operator; README,
 * "AscendCL dump and profiling"). SetDump or FinalizeDump without InitDump:
 * ACL_ERROR_DUMP_NOT_RUN; InitDump twice: ACL_ERROR_DUMP_ALREADY_RUN; a
 * malformed file: ACL_ERROR_PARSE_FILE or ACL_ERROR_INVALID_DUMP_CONFIG
 * naming the key. aclmdlGetOpAttr (an operator's attribute, for dump's
 * ACL_ATTR_NAME_DATA_DUMP_ORIGIN_OP_NAMES) returns NULL: the om keeps no
 * operator attributes. */
#define ACL_ATTR_NAME_DATA_DUMP_ORIGIN_OP_NAMES "_datadump_original_op_names"
ACL_FUNC_VISIBILITY aclError aclmdlInitDump(void);
ACL_FUNC_VISIBILITY aclError aclmdlSetDump(const char *dumpCfgPath);
ACL_FUNC_VISIBILITY aclError aclmdlFinalizeDump(void);
ACL_FUNC_VISIBILITY const char *aclmdlGetOpAttr(aclmdlDesc *modelDesc, const char *opName, const char *attr);
/* The description of the operator a failed task ran (for an exception
 * callback, with the ids aclrtGetTaskIdFromExceptionInfo ... give): the
 * chip's task ids do not exist here, so ACL_ERROR_FEATURE_UNSUPPORTED. */
ACL_FUNC_VISIBILITY aclError aclmdlCreateAndGetOpDesc(uint32_t deviceId, uint32_t streamId, uint32_t taskId,
                                                      char *opName, size_t opNameLen,
                                                      aclTensorDesc **inputDesc, size_t *numInputs,
                                                      aclTensorDesc **outputDesc, size_t *numOutputs);

/* Runs the model once on the calling thread. An output buffer created
 * empty (aclCreateDataBuffer(NULL, 0)) gets device memory of the output's
 * bytes at the run's gear (aclUpdateDataBuffer's effect): the application
 * frees it with aclrtFree (and may reset the buffer to NULL, 0). The
 * asynchronous runs refuse empty buffers. */
ACL_FUNC_VISIBILITY aclError aclmdlExecute(uint32_t modelId, const aclmdlDataset *input,
                                           aclmdlDataset *output);
/* Enqueues one run on `stream` (NULL: the current context's default
 * stream); the buffers' addresses are taken now, their contents when the
 * run comes; aclrtSynchronizeStream waits for it. */
ACL_FUNC_VISIBILITY aclError aclmdlExecuteAsync(uint32_t modelId, const aclmdlDataset *input,
                                                aclmdlDataset *output, aclrtStream stream);

/* Runs with a configuration: a handle holds the attributes below (valueSize
 * must be sizeof(int32_t), sizeof(void *) or sizeof(size_t), as the name
 * ends). aclmdlExecuteV2 queues the run on `stream` and waits for it (and
 * for what was queued before it) at most ACL_MDL_STREAM_SYNC_TIMEOUT ms
 * (-1, the default: no limit; ACL_ERROR_RT_STREAM_SYNC_TIMEOUT after it, the
 * run staying queued); with stream NULL it is aclmdlExecute and the handle's
 * attributes do nothing. aclmdlExecuteAsyncV2 is aclmdlExecuteAsync (the
 * handle checked). ACL_MDL_EVENT_SYNC_TIMEOUT (-1 or > 0 ms) is checked and
 * kept: an om here waits for no event inside a run, so it bounds nothing.
 * ACL_MDL_WORK_ADDR_PTR / ACL_MDL_WORK_SIZET (a model runs in the work
 * memory of its load: aclmdlLoadFromFileWithMem) and the reserved
 * attributes are ACL_ERROR_INVALID_PARAM naming the attribute. */
typedef struct aclmdlExecConfigHandle aclmdlExecConfigHandle;
typedef enum {
  ACL_MDL_STREAM_SYNC_TIMEOUT = 0, /* int32_t ms */
  ACL_MDL_EVENT_SYNC_TIMEOUT,      /* int32_t ms */
  ACL_MDL_WORK_ADDR_PTR,
  ACL_MDL_WORK_SIZET,
  ACL_MDL_MPAIMID_SIZET,     /* reserved */
  ACL_MDL_AICQOS_SIZET,      /* reserved */
  ACL_MDL_AICOST_SIZET,      /* reserved */
  ACL_MDL_MEC_TIMETHR_SIZET, /* reserved */
} aclmdlExecConfigAttr;
ACL_FUNC_VISIBILITY aclmdlExecConfigHandle *aclmdlCreateExecConfigHandle(void); /* NULL when out of memory */
ACL_FUNC_VISIBILITY aclError aclmdlDestroyExecConfigHandle(const aclmdlExecConfigHandle *handle);
ACL_FUNC_VISIBILITY aclError aclmdlSetExecConfigOpt(aclmdlExecConfigHandle *handle, aclmdlExecConfigAttr attr,
                                                    const void *attrValue, size_t valueSize);
ACL_FUNC_VISIBILITY aclError aclmdlExecuteV2(uint32_t modelId, const aclmdlDataset *input,
                                             aclmdlDataset *output, aclrtStream stream,
                                             const aclmdlExecConfigHandle *handle);
ACL_FUNC_VISIBILITY aclError aclmdlExecuteAsyncV2(uint32_t modelId, const aclmdlDataset *input,
                                                  aclmdlDataset *output, aclrtStream stream,
                                                  const aclmdlExecConfigHandle *handle);

ACL_FUNC_VISIBILITY aclmdlDesc *aclmdlCreateDesc(void); /* NULL when out of memory */
ACL_FUNC_VISIBILITY aclError aclmdlDestroyDesc(aclmdlDesc *modelDesc);
ACL_FUNC_VISIBILITY aclError aclmdlGetDesc(aclmdlDesc *modelDesc, uint32_t modelId);
/* The description of an om without loading it (read and verified; no
 * memory kept): what aclmdlGetDesc gives after loading it. */
ACL_FUNC_VISIBILITY aclError aclmdlGetDescFromFile(aclmdlDesc *modelDesc, const char *modelPath);
ACL_FUNC_VISIBILITY aclError aclmdlGetDescFromMem(aclmdlDesc *modelDesc, const void *model, size_t modelSize);
ACL_FUNC_VISIBILITY size_t aclmdlGetNumInputs(aclmdlDesc *modelDesc);
ACL_FUNC_VISIBILITY size_t aclmdlGetNumOutputs(aclmdlDesc *modelDesc);
/* Bytes; 0 for a bad description or index (the message says which). */
ACL_FUNC_VISIBILITY size_t aclmdlGetInputSizeByIndex(aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY size_t aclmdlGetOutputSizeByIndex(aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY aclError aclmdlGetInputDims(const aclmdlDesc *modelDesc, size_t index,
                                                aclmdlIODims *dims);
/* An output of a model with gears: its dims at the largest gear (no -1). */
ACL_FUNC_VISIBILITY aclError aclmdlGetOutputDims(const aclmdlDesc *modelDesc, size_t index,
                                                 aclmdlIODims *dims);
/* The same as aclmdlGetInputDims here: an input's dims multiply to its
 * size (aclmdlGetInputSizeByIndex's, for the largest gear) with AIPP or
 * without. */
ACL_FUNC_VISIBILITY aclError aclmdlGetInputDimsV2(const aclmdlDesc *modelDesc, size_t index,
                                                  aclmdlIODims *dims);
/* Each dim's range: every model here has static shapes or shape gears (no
 * ranges), so a dim's range is {d, d}; with gears rangeCount is 0 (use
 * aclmdlGetInputDynamicDims). */
ACL_FUNC_VISIBILITY aclError aclmdlGetInputDimsRange(const aclmdlDesc *modelDesc, size_t index,
                                                     aclmdlIODimsRange *dimsRange);
/* The full name of a tensor given by its name as aclmdlIODims.name has it
 * (truncated to ACL_MAX_TENSOR_NAME_LEN - 1 characters) or in full; owned
 * by the description. NULL when no input or output has that name. */
ACL_FUNC_VISIBILITY const char *aclmdlGetTensorRealName(const aclmdlDesc *modelDesc, const char *name);
/* Output `index` at the gear the last aclmdlSetDynamicBatchSize /
 * aclmdlSetDynamicHWSize / aclmdlSetInputDynamicDims on the described
 * model chose (before one, aclmdlGetOutputDims's: the largest gear's), as
 * the model's last run left it: an output whose extent depends on the data
 * (NonZero, NonMaxSuppression, ...) has its actual dims, the output buffer
 * holds exactly them in C order from its start. */
ACL_FUNC_VISIBILITY aclError aclmdlGetCurOutputDims(const aclmdlDesc *modelDesc, size_t index,
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
 * largest gear's; aclmdlGetInputDims has -1 for the dims that vary). Its bytes: the gear's values as int64
 * (the batch; height, width; or each dynamic dim). The Get calls' index is reserved
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

/* AIPP (atc --insert_op_conf). An input with static AIPP takes the raw
 * uint8 image (its dims and size say how many bytes); one with dynamic AIPP
 * takes up to max_src_image_size bytes per image, and the model has one
 * more input, named ACL_DYNAMIC_AIPP_NAME (the second "..._1", ...), that
 * holds the parameters: the application builds them in an aclmdlAIPP and
 * writes them into that input's device buffer with aclmdlSetInputAIPP
 * (index: the parameters input's) or aclmdlSetAIPPByInputIndex (index: the
 * image input's). The parameters are checked against the model there (an
 * image that does not fit, a crop outside it, an output size the model
 * does not take: ACL_ERROR_INVALID_PARAM naming the rule) and again when
 * the model runs. With batch gears the aclmdlAIPP's batch
 * (aclmdlCreateAIPP) is the largest gear's, as are the input sizes. The
 * calls with a batchIndex (crop, padding, mean, min, var_reci) set one
 * image's parameters, the others every image's. Not provided: scaling
 * (scfSwitch 1 is ACL_ERROR_FEATURE_UNSUPPORTED). */
#define ACL_DYNAMIC_AIPP_NAME "ascend_dynamic_aipp_data"
#define ACL_MAX_SHAPE_COUNT 128
typedef struct aclmdlAIPP aclmdlAIPP;
typedef struct aclAippExtendInfo aclAippExtendInfo;
typedef enum {
  ACL_YUV420SP_U8 = 1,
  ACL_XRGB8888_U8,
  ACL_RGB888_U8,
  ACL_YUV400_U8,
  ACL_NC1HWC0DI_FP16,
  ACL_NC1HWC0DI_S8,
  ACL_ARGB8888_U8,
  ACL_YUYV_U8,
  ACL_YUV422SP_U8,
  ACL_AYUV444_U8,
  ACL_RAW10,
  ACL_RAW12,
  ACL_RAW16,
  ACL_RAW24,
  ACL_AIPP_RESERVED = 0xffff,
} aclAippInputFormat;
typedef enum {
  ACL_DATA_WITHOUT_AIPP = 0,
  ACL_DATA_WITH_STATIC_AIPP,
  ACL_DATA_WITH_DYNAMIC_AIPP,
  ACL_DYNAMIC_AIPP_NODE
} aclmdlInputAippType;
typedef struct aclAippDims {
  aclmdlIODims srcDims;     /* the model input's dims before AIPP */
  size_t srcSize;           /* bytes */
  aclmdlIODims aippOutdims; /* what AIPP gives the model */
  size_t aippOutSize;       /* bytes */
} aclAippDims;
typedef struct aclAippInfo {
  aclAippInputFormat inputFormat;
  int32_t srcImageSizeW, srcImageSizeH;
  int8_t cropSwitch;
  int32_t loadStartPosW, loadStartPosH, cropSizeW, cropSizeH;
  int8_t resizeSwitch;
  int32_t resizeOutputW, resizeOutputH;
  int8_t paddingSwitch;
  int32_t leftPaddingSize, rightPaddingSize, topPaddingSize, bottomPaddingSize;
  int8_t cscSwitch, rbuvSwapSwitch, axSwapSwitch, singleLineMode;
  int32_t matrixR0C0, matrixR0C1, matrixR0C2, matrixR1C0, matrixR1C1, matrixR1C2, matrixR2C0, matrixR2C1,
      matrixR2C2;
  int32_t outputBias0, outputBias1, outputBias2, inputBias0, inputBias1, inputBias2;
  int32_t meanChn0, meanChn1, meanChn2, meanChn3;
  float minChn0, minChn1, minChn2, minChn3;
  float varReciChn0, varReciChn1, varReciChn2, varReciChn3;
  aclFormat srcFormat;
  aclDataType srcDatatype;
  size_t srcDimNum;
  size_t shapeCount;
  aclAippDims outDims[ACL_MAX_SHAPE_COUNT];
  aclAippExtendInfo *aippExtend; /* NULL */
} aclAippInfo;

/* The bytes of the parameters input (ACL_DYNAMIC_AIPP_NAME) for a batch of
 * batchSize images (1..4096, as aclmdlCreateAIPP takes): the records
 * aclmdlSetInputAIPP writes, one an image (the parameters input's
 * aclmdlGetInputSizeByIndex for a model of that batch). */
ACL_FUNC_VISIBILITY aclError aclmdlGetAippDataSize(uint64_t batchSize, size_t *size);
/* Parameters for batchSize images (NULL when out of memory or batchSize is 0). */
ACL_FUNC_VISIBILITY aclmdlAIPP *aclmdlCreateAIPP(uint64_t batchSize);
ACL_FUNC_VISIBILITY aclError aclmdlDestroyAIPP(const aclmdlAIPP *aippParmsSet);
ACL_FUNC_VISIBILITY aclError aclmdlSetAIPPInputFormat(aclmdlAIPP *aippParmsSet,
                                                      aclAippInputFormat inputFormat);
ACL_FUNC_VISIBILITY aclError aclmdlSetAIPPCscParams(
    aclmdlAIPP *aippParmsSet, int8_t cscSwitch, int16_t cscMatrixR0C0, int16_t cscMatrixR0C1,
    int16_t cscMatrixR0C2, int16_t cscMatrixR1C0, int16_t cscMatrixR1C1, int16_t cscMatrixR1C2,
    int16_t cscMatrixR2C0, int16_t cscMatrixR2C1, int16_t cscMatrixR2C2, uint8_t cscOutputBiasR0,
    uint8_t cscOutputBiasR1, uint8_t cscOutputBiasR2, uint8_t cscInputBiasR0, uint8_t cscInputBiasR1,
    uint8_t cscInputBiasR2);
ACL_FUNC_VISIBILITY aclError aclmdlSetAIPPRbuvSwapSwitch(aclmdlAIPP *aippParmsSet, int8_t rbuvSwapSwitch);
ACL_FUNC_VISIBILITY aclError aclmdlSetAIPPAxSwapSwitch(aclmdlAIPP *aippParmsSet, int8_t axSwapSwitch);
ACL_FUNC_VISIBILITY aclError aclmdlSetAIPPSrcImageSize(aclmdlAIPP *aippParmsSet, int32_t srcImageSizeW,
                                                       int32_t srcImageSizeH);
ACL_FUNC_VISIBILITY aclError aclmdlSetAIPPScfParams(aclmdlAIPP *aippParmsSet, int8_t scfSwitch,
                                                    int32_t scfInputSizeW, int32_t scfInputSizeH,
                                                    int32_t scfOutputSizeW, int32_t scfOutputSizeH,
                                                    uint64_t batchIndex);
ACL_FUNC_VISIBILITY aclError aclmdlSetAIPPCropParams(aclmdlAIPP *aippParmsSet, int8_t cropSwitch,
                                                     int32_t cropStartPosW, int32_t cropStartPosH,
                                                     int32_t cropSizeW, int32_t cropSizeH,
                                                     uint64_t batchIndex);
ACL_FUNC_VISIBILITY aclError aclmdlSetAIPPPaddingParams(aclmdlAIPP *aippParmsSet, int8_t paddingSwitch,
                                                        int32_t paddingSizeTop, int32_t paddingSizeBottom,
                                                        int32_t paddingSizeLeft, int32_t paddingSizeRight,
                                                        uint64_t batchIndex);
ACL_FUNC_VISIBILITY aclError aclmdlSetAIPPDtcPixelMean(aclmdlAIPP *aippParmsSet, int16_t dtcPixelMeanChn0,
                                                       int16_t dtcPixelMeanChn1, int16_t dtcPixelMeanChn2,
                                                       int16_t dtcPixelMeanChn3, uint64_t batchIndex);
ACL_FUNC_VISIBILITY aclError aclmdlSetAIPPDtcPixelMin(aclmdlAIPP *aippParmsSet, float dtcPixelMinChn0,
                                                      float dtcPixelMinChn1, float dtcPixelMinChn2,
                                                      float dtcPixelMinChn3, uint64_t batchIndex);
ACL_FUNC_VISIBILITY aclError aclmdlSetAIPPPixelVarReci(aclmdlAIPP *aippParmsSet, float dtcPixelVarReciChn0,
                                                       float dtcPixelVarReciChn1, float dtcPixelVarReciChn2,
                                                       float dtcPixelVarReciChn3, uint64_t batchIndex);
ACL_FUNC_VISIBILITY aclError aclmdlSetInputAIPP(uint32_t modelId, aclmdlDataset *dataset, size_t index,
                                                const aclmdlAIPP *aippParmsSet);
ACL_FUNC_VISIBILITY aclError aclmdlSetAIPPByInputIndex(uint32_t modelId, aclmdlDataset *dataset, size_t index,
                                                       const aclmdlAIPP *aippParmsSet);
/* dynamicAttachedDataIndex: for an image input with dynamic AIPP, its
 * parameters input; for a parameters input, its image input; else
 * (size_t)-1. */
ACL_FUNC_VISIBILITY aclError aclmdlGetAippType(uint32_t modelId, size_t index, aclmdlInputAippType *type,
                                               size_t *dynamicAttachedDataIndex);
/* Static AIPP's parameters (ACL_ERROR_INVALID_PARAM for another input). */
ACL_FUNC_VISIBILITY aclError aclmdlGetFirstAippInfo(uint32_t modelId, size_t index, aclAippInfo *aippInfo);

ACL_FUNC_VISIBILITY aclmdlDataset *aclmdlCreateDataset(void);                    /* NULL when out of memory */
ACL_FUNC_VISIBILITY aclError aclmdlDestroyDataset(const aclmdlDataset *dataset); /* not its buffers */
ACL_FUNC_VISIBILITY aclError aclmdlAddDatasetBuffer(aclmdlDataset *dataset, aclDataBuffer *dataBuffer);
ACL_FUNC_VISIBILITY size_t aclmdlGetDatasetNumBuffers(const aclmdlDataset *dataset);
ACL_FUNC_VISIBILITY aclDataBuffer *aclmdlGetDatasetBuffer(const aclmdlDataset *dataset, size_t index);
/* A tensor description for buffer `index` of the dataset (a copy, owned
 * by the dataset; index < aclmdlGetDatasetNumBuffers). On an input dataset
 * it states the input's dims, which a run checks against the dims of the
 * gear it runs (ACL_ERROR_INVALID_PARAM when they differ). A run fills the
 * output dataset's: each output's data type, format and dims as that run
 * gives them (aclmdlExecute: after the run, a data-dependent extent
 * included; aclmdlExecuteAsync: when enqueued, the gear's dims).
 * aclmdlGetDatasetTensorDesc returns the dataset's (NULL if none). */
ACL_FUNC_VISIBILITY aclError aclmdlSetDatasetTensorDesc(aclmdlDataset *dataset, aclTensorDesc *tensorDesc,
                                                        size_t index);
ACL_FUNC_VISIBILITY aclTensorDesc *aclmdlGetDatasetTensorDesc(const aclmdlDataset *dataset, size_t index);

#ifdef __cplusplus
}
#endif

#endif
