/* acl_op.c - AscendCL's single-operator calls (acl/acl_op.h,
 * acl/acl_op_compiler.h): attributes work (an attribute object counts what
 * was set; nothing here reads it); compiling, loading and running
 * single-operator models return
 * ACL_ERROR_FEATURE_UNSUPPORTED (atc compiles whole models only), after
 * the aclInit check every call gets.
 */
#include <stdlib.h>

#include "acl/acl_internal.h"
#include "acl/acl_op.h"
#include "acl/acl_op_compiler.h"

struct aclopAttr {
  size_t set; /* attributes set */
};

static aclError unsupported(const char *call) {
  return acl_unsupported(call,
                         "single-operator models (atc --singleop) are not provided: build the operator as "
                         "a one-node ONNX model with atc and run it with aclmdlExecute");
}

/* unsupported(call), with *handle (when given) set to NULL. */
static aclError no_handle(const char *call, aclopHandle **handle) {
  if (handle) *handle = NULL;
  return unsupported(call);
}

aclError aclopSetModelDir(const char *modelDir) {
  (void)modelDir;
  return unsupported("aclopSetModelDir");
}

aclError aclopLoad(const void *model, size_t modelSize) {
  (void)model, (void)modelSize;
  return unsupported("aclopLoad");
}

aclopAttr *aclopCreateAttr(void) {
  aclopAttr *a = calloc(1, sizeof *a);
  if (!a) acl_fail(ACL_ERROR_BAD_ALLOC, "aclopCreateAttr: out of memory");
  return a;
}

void aclopDestroyAttr(const aclopAttr *attr) { free((void *)attr); }

/* The setters' checks; counts the attribute. */
static aclError set_attr(const char *call, aclopAttr *attr, const char *name, int num, const void *values) {
  if (!attr || !name)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", call, !attr ? "attr" : "attrName");
  if (num < 0) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: '%s': numValues %d < 0", call, name, num);
  if (num > 0 && !values) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: '%s': values is NULL", call, name);
  attr->set++;
  return ACL_SUCCESS;
}

aclError aclopSetAttrBool(aclopAttr *attr, const char *attrName, uint8_t attrValue) {
  (void)attrValue;
  return set_attr("aclopSetAttrBool", attr, attrName, 0, NULL);
}

aclError aclopSetAttrInt(aclopAttr *attr, const char *attrName, int64_t attrValue) {
  (void)attrValue;
  return set_attr("aclopSetAttrInt", attr, attrName, 0, NULL);
}

aclError aclopSetAttrFloat(aclopAttr *attr, const char *attrName, float attrValue) {
  (void)attrValue;
  return set_attr("aclopSetAttrFloat", attr, attrName, 0, NULL);
}

aclError aclopSetAttrString(aclopAttr *attr, const char *attrName, const char *attrValue) {
  return set_attr("aclopSetAttrString", attr, attrName, 1, attrValue);
}

aclError aclopSetAttrDataType(aclopAttr *attr, const char *attrName, aclDataType attrValue) {
  (void)attrValue;
  return set_attr("aclopSetAttrDataType", attr, attrName, 0, NULL);
}

aclError aclopSetAttrListDataType(aclopAttr *attr, const char *attrName, int numValues,
                                  const aclDataType values[]) {
  return set_attr("aclopSetAttrListDataType", attr, attrName, numValues, values);
}

aclError aclopSetAttrListBool(aclopAttr *attr, const char *attrName, int numValues, const uint8_t *values) {
  return set_attr("aclopSetAttrListBool", attr, attrName, numValues, values);
}

aclError aclopSetAttrListInt(aclopAttr *attr, const char *attrName, int numValues, const int64_t *values) {
  return set_attr("aclopSetAttrListInt", attr, attrName, numValues, values);
}

aclError aclopSetAttrListFloat(aclopAttr *attr, const char *attrName, int numValues, const float *values) {
  return set_attr("aclopSetAttrListFloat", attr, attrName, numValues, values);
}

aclError aclopSetAttrListString(aclopAttr *attr, const char *attrName, int numValues, const char **values) {
  return set_attr("aclopSetAttrListString", attr, attrName, numValues, values);
}

aclError aclopSetAttrListListInt(aclopAttr *attr, const char *attrName, int numLists, const int *numValues,
                                 const int64_t *const values[]) {
  const char *call = "aclopSetAttrListListInt";
  aclError e = set_attr(call, attr, attrName, numLists, numValues);
  if (!e && numLists > 0 && !values)
    e = acl_fail(ACL_ERROR_INVALID_PARAM, "%s: '%s': values is NULL", call, attrName);
  return e;
}

aclError aclopExecute(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
                      const aclDataBuffer *const inputs[], int numOutputs,
                      const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[],
                      const aclopAttr *attr, aclrtStream stream) {
  (void)opType, (void)numInputs, (void)inputDesc, (void)inputs, (void)numOutputs, (void)outputDesc,
      (void)outputs;
  (void)attr, (void)stream;
  return unsupported("aclopExecute");
}

aclError aclopExecuteV2(const char *opType, int numInputs, aclTensorDesc *inputDesc[],
                        aclDataBuffer *inputs[], int numOutputs, aclTensorDesc *outputDesc[],
                        aclDataBuffer *outputs[], aclopAttr *attr, aclrtStream stream) {
  (void)opType, (void)numInputs, (void)inputDesc, (void)inputs, (void)numOutputs, (void)outputDesc,
      (void)outputs;
  (void)attr, (void)stream;
  return unsupported("aclopExecuteV2");
}

aclError aclopCreateHandle(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
                           int numOutputs, const aclTensorDesc *const outputDesc[], const aclopAttr *opAttr,
                           aclopHandle **handle) {
  (void)opType, (void)numInputs, (void)inputDesc, (void)numOutputs, (void)outputDesc, (void)opAttr;
  return no_handle("aclopCreateHandle", handle);
}

void aclopDestroyHandle(aclopHandle *handle) { (void)handle; }

aclError aclopExecWithHandle(aclopHandle *handle, int numInputs, const aclDataBuffer *const inputs[],
                             int numOutputs, aclDataBuffer *const outputs[], aclrtStream stream) {
  (void)handle, (void)numInputs, (void)inputs, (void)numOutputs, (void)outputs, (void)stream;
  return unsupported("aclopExecWithHandle");
}

aclError aclopCast(const aclTensorDesc *srcDesc, const aclDataBuffer *srcBuffer, const aclTensorDesc *dstDesc,
                   aclDataBuffer *dstBuffer, uint8_t truncate, aclrtStream stream) {
  (void)srcDesc, (void)srcBuffer, (void)dstDesc, (void)dstBuffer, (void)truncate, (void)stream;
  return unsupported("aclopCast");
}

aclError aclopCreateHandleForCast(aclTensorDesc *srcDesc, aclTensorDesc *dstDesc, uint8_t truncate,
                                  aclopHandle **handle) {
  (void)srcDesc, (void)dstDesc, (void)truncate;
  return no_handle("aclopCreateHandleForCast", handle);
}

aclError aclopCreateKernel(const char *opType, const char *kernelId, const char *kernelName, void *binData,
                           int binSize, aclopEngineType enginetype, aclDataDeallocator deallocator) {
  (void)opType, (void)kernelId, (void)kernelName, (void)binData, (void)binSize, (void)enginetype,
      (void)deallocator;
  return unsupported("aclopCreateKernel");
}

aclError aclopRegisterCompileFunc(const char *opType, aclopCompileFunc func) {
  (void)opType, (void)func;
  return unsupported("aclopRegisterCompileFunc");
}

aclError aclopUnregisterCompileFunc(const char *opType) {
  (void)opType;
  return unsupported("aclopUnregisterCompileFunc");
}

aclError aclopSetKernelArgs(aclopKernelDesc *kernelDesc, const char *kernelId, uint32_t blockDim,
                            const void *args, uint32_t argSize) {
  (void)kernelDesc, (void)kernelId, (void)blockDim, (void)args, (void)argSize;
  return unsupported("aclopSetKernelArgs");
}

aclError aclopSetKernelWorkspaceSizes(aclopKernelDesc *kernelDesc, int numWorkspaces,
                                      size_t *workspaceSizes) {
  (void)kernelDesc, (void)numWorkspaces, (void)workspaceSizes;
  return unsupported("aclopSetKernelWorkspaceSizes");
}

aclError aclopUpdateParams(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
                           int numOutputs, const aclTensorDesc *const outputDesc[], const aclopAttr *attr) {
  (void)opType, (void)numInputs, (void)inputDesc, (void)numOutputs, (void)outputDesc, (void)attr;
  return unsupported("aclopUpdateParams");
}

aclError aclopSetMaxOpQueueNum(uint64_t maxOpNum) {
  (void)maxOpNum;
  return unsupported("aclopSetMaxOpQueueNum");
}

aclError aclopInferShape(const char *opType, int numInputs, aclTensorDesc *inputDesc[],
                         aclDataBuffer *inputs[], int numOutputs, aclTensorDesc *outputDesc[],
                         aclopAttr *attr) {
  (void)opType, (void)numInputs, (void)inputDesc, (void)inputs, (void)numOutputs, (void)outputDesc,
      (void)attr;
  return unsupported("aclopInferShape");
}

/* --- compilation (acl_op_compiler.h) */

aclError aclopCompile(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
                      int numOutputs, const aclTensorDesc *const outputDesc[], const aclopAttr *attr,
                      aclopEngineType engineType, aclopCompileType compileFlag, const char *opPath) {
  (void)opType, (void)numInputs, (void)inputDesc, (void)numOutputs, (void)outputDesc, (void)attr;
  (void)engineType, (void)compileFlag, (void)opPath;
  return unsupported("aclopCompile");
}

aclError aclopCompileAndExecute(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
                                const aclDataBuffer *const inputs[], int numOutputs,
                                const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[],
                                const aclopAttr *attr, aclopEngineType engineType,
                                aclopCompileType compileFlag, const char *opPath, aclrtStream stream) {
  (void)opType, (void)numInputs, (void)inputDesc, (void)inputs, (void)numOutputs, (void)outputDesc;
  (void)outputs, (void)attr, (void)engineType, (void)compileFlag, (void)opPath, (void)stream;
  return unsupported("aclopCompileAndExecute");
}

aclError aclopCompileAndExecuteV2(const char *opType, int numInputs, aclTensorDesc *inputDesc[],
                                  aclDataBuffer *inputs[], int numOutputs, aclTensorDesc *outputDesc[],
                                  aclDataBuffer *outputs[], aclopAttr *attr, aclopEngineType engineType,
                                  aclopCompileType compileFlag, const char *opPath, aclrtStream stream) {
  (void)opType, (void)numInputs, (void)inputDesc, (void)inputs, (void)numOutputs, (void)outputDesc;
  (void)outputs, (void)attr, (void)engineType, (void)compileFlag, (void)opPath, (void)stream;
  return unsupported("aclopCompileAndExecuteV2");
}

aclError aclSetCompileopt(aclCompileOpt opt, const char *value) {
  (void)opt, (void)value;
  return unsupported("aclSetCompileopt");
}

size_t aclGetCompileoptSize(aclCompileOpt opt) {
  (void)opt;
  unsupported("aclGetCompileoptSize");
  return 0;
}

aclError aclGetCompileopt(aclCompileOpt opt, char *value, size_t length) {
  (void)opt, (void)value, (void)length;
  return unsupported("aclGetCompileopt");
}

aclError aclopSetCompileFlag(aclOpCompileFlag flag) {
  (void)flag;
  return unsupported("aclopSetCompileFlag");
}

aclError aclGenGraphAndDumpForOp(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
                                 const aclDataBuffer *const inputs[], int numOutputs,
                                 const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[],
                                 const aclopAttr *attr, aclopEngineType engineType, const char *graphDumpPath,
                                 const aclGraphDumpOption *graphDumpOpt) {
  (void)opType, (void)numInputs, (void)inputDesc, (void)inputs, (void)numOutputs, (void)outputDesc;
  (void)outputs, (void)attr, (void)engineType, (void)graphDumpPath, (void)graphDumpOpt;
  return unsupported("aclGenGraphAndDumpForOp");
}

aclGraphDumpOption *aclCreateGraphDumpOpt(void) {
  unsupported("aclCreateGraphDumpOpt");
  return NULL;
}

aclError aclDestroyGraphDumpOpt(const aclGraphDumpOption *graphDumpOpt) {
  (void)graphDumpOpt;
  return unsupported("aclDestroyGraphDumpOpt");
}
