/* acl_config.c - AscendCL's loading by configuration (aclmdlCreateConfigHandle,
 * aclmdlSetConfigOpt, aclmdlLoadWithConfig; acl_mdl.h), runs' configuration
 * (aclmdlCreateExecConfigHandle, aclmdlSetExecConfigOpt; the runs are
 * acl_mdl.c's), and the calls of features this runtime does not provide,
 * which say so: model queues and bundles (acl_mdl.h).
 *
 * A configuration handle is a plain object (no aclInit needed to build
 * it): a set of attribute values, each with a bit saying it was set.
 * aclmdlLoadWithConfig turns it into one of the four loads of acl_mdl.c
 * (acl_mdl_load), refusing a handle that lacks what the load type needs.
 */
#include <stdlib.h>
#include <string.h>

#include "acl/acl_internal.h"

enum { NATTRS = ACL_MDL_WORKSPACE_MEM_OPTIMIZE + 1 };

struct aclmdlConfigHandle {
  uint32_t set; /* bit a: attribute a was set */
  int32_t priority;
  size_t load_type;
  char *path; /* owned copy */
  const void *mem;
  size_t mem_size;
  void *weight, *work;
  size_t weight_size, work_size;
};

static const char *const attr_names[NATTRS] = {"ACL_MDL_PRIORITY_INT32",   "ACL_MDL_LOAD_TYPE_SIZET",
                                               "ACL_MDL_PATH_PTR",         "ACL_MDL_MEM_ADDR_PTR",
                                               "ACL_MDL_MEM_SIZET",        "ACL_MDL_WEIGHT_ADDR_PTR",
                                               "ACL_MDL_WEIGHT_SIZET",     "ACL_MDL_WORKSPACE_ADDR_PTR",
                                               "ACL_MDL_WORKSPACE_SIZET",  "ACL_MDL_INPUTQ_NUM_SIZET",
                                               "ACL_MDL_INPUTQ_ADDR_PTR",  "ACL_MDL_OUTPUTQ_NUM_SIZET",
                                               "ACL_MDL_OUTPUTQ_ADDR_PTR", "ACL_MDL_WORKSPACE_MEM_OPTIMIZE"};

aclmdlConfigHandle *aclmdlCreateConfigHandle(void) {
  aclmdlConfigHandle *h = calloc(1, sizeof *h);
  if (!h) acl_fail(ACL_ERROR_BAD_ALLOC, "aclmdlCreateConfigHandle: out of memory");
  return h;
}

aclError aclmdlDestroyConfigHandle(aclmdlConfigHandle *handle) {
  if (!handle) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclmdlDestroyConfigHandle: handle is NULL");
  free(handle->path);
  free(handle);
  return ACL_SUCCESS;
}

aclError aclmdlSetConfigOpt(aclmdlConfigHandle *handle, aclmdlConfigAttr attr, const void *attrValue,
                            size_t valueSize) {
  const char *call = "aclmdlSetConfigOpt";
  if (!handle || !attrValue)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", call, !handle ? "handle" : "attrValue");
  if ((int)attr < 0 || (int)attr >= NATTRS)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: attr %d is not an aclmdlConfigAttr", call, (int)attr);
  const char *name = attr_names[attr];
  if (attr >= ACL_MDL_INPUTQ_NUM_SIZET)
    return acl_fail(ACL_ERROR_FEATURE_UNSUPPORTED, "%s: %s: %s are not provided", call, name,
                    attr == ACL_MDL_WORKSPACE_MEM_OPTIMIZE ? "workspace optimizations" : "model queues");
  int is_ptr = attr == ACL_MDL_PATH_PTR || attr == ACL_MDL_MEM_ADDR_PTR || attr == ACL_MDL_WEIGHT_ADDR_PTR ||
               attr == ACL_MDL_WORKSPACE_ADDR_PTR;
  size_t want = attr == ACL_MDL_PRIORITY_INT32 ? sizeof(int32_t) : is_ptr ? sizeof(void *) : sizeof(size_t);
  if (valueSize != want)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s: valueSize %zu, its value has %zu bytes", call, name,
                    valueSize, want);
  size_t z = 0;
  void *p = NULL;
  int32_t i = 0;
  memcpy(attr == ACL_MDL_PRIORITY_INT32 ? (void *)&i : is_ptr ? (void *)&p : (void *)&z, attrValue, want);
  switch (attr) {
  case ACL_MDL_PRIORITY_INT32:
    if (i < 0 || i > 7)
      return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s %d is not in 0..7", call, name, (int)i);
    handle->priority = i;
    break;
  case ACL_MDL_LOAD_TYPE_SIZET:
    if (z < ACL_MDL_LOAD_FROM_FILE || z > ACL_MDL_LOAD_FROM_MEM_WITH_Q)
      return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s %zu is no ACL_MDL_LOAD_FROM_* (1..6)", call, name, z);
    if (z >= ACL_MDL_LOAD_FROM_FILE_WITH_Q)
      return acl_fail(ACL_ERROR_FEATURE_UNSUPPORTED, "%s: %s %zu: model queues are not provided", call, name,
                      z);
    handle->load_type = z;
    break;
  case ACL_MDL_PATH_PTR: {
    char *copy = p ? strdup(p) : NULL;
    if (!copy)
      return acl_fail(p ? ACL_ERROR_BAD_ALLOC : ACL_ERROR_INVALID_PARAM, "%s: %s: %s", call, name,
                      p ? "out of memory" : "the path is NULL");
    free(handle->path);
    handle->path = copy;
    break;
  }
  case ACL_MDL_MEM_ADDR_PTR: handle->mem = p; break;
  case ACL_MDL_MEM_SIZET: handle->mem_size = z; break;
  case ACL_MDL_WEIGHT_ADDR_PTR: handle->weight = p; break;
  case ACL_MDL_WEIGHT_SIZET: handle->weight_size = z; break;
  case ACL_MDL_WORKSPACE_ADDR_PTR: handle->work = p; break;
  case ACL_MDL_WORKSPACE_SIZET: handle->work_size = z; break;
  default: break;
  }
  handle->set |= 1u << attr;
  return ACL_SUCCESS;
}

aclError aclmdlLoadWithConfig(const aclmdlConfigHandle *handle, uint32_t *modelId) {
  const char *call = "aclmdlLoadWithConfig";
  if (!handle || !modelId)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", call, !handle ? "handle" : "modelId");
  if (!(handle->set & 1u << ACL_MDL_LOAD_TYPE_SIZET))
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: ACL_MDL_LOAD_TYPE_SIZET was not set", call);
  size_t t = handle->load_type;
  int file = t == ACL_MDL_LOAD_FROM_FILE || t == ACL_MDL_LOAD_FROM_FILE_WITH_MEM;
  int with_mem = t == ACL_MDL_LOAD_FROM_FILE_WITH_MEM || t == ACL_MDL_LOAD_FROM_MEM_WITH_MEM;
  static const aclmdlConfigAttr file_needs[] = {ACL_MDL_PATH_PTR},
                                mem_needs[] = {ACL_MDL_MEM_ADDR_PTR, ACL_MDL_MEM_SIZET};
  const aclmdlConfigAttr *needs = file ? file_needs : mem_needs;
  for (int k = 0; k < (file ? 1 : 2); k++)
    if (!(handle->set & 1u << needs[k]))
      return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: load type %zu needs %s, which was not set", call, t,
                      attr_names[needs[k]]);
  /* *_WITH_MEM: each of the work and weight memories is the caller's if
   * given (address and size), else the runtime's. */
  int work = with_mem && (handle->set & 1u << ACL_MDL_WORKSPACE_ADDR_PTR);
  int weight = with_mem && (handle->set & 1u << ACL_MDL_WEIGHT_ADDR_PTR);
  if ((work && !(handle->set & 1u << ACL_MDL_WORKSPACE_SIZET)) ||
      (weight && !(handle->set & 1u << ACL_MDL_WEIGHT_SIZET)))
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s was set without %s", call,
                    work && !(handle->set & 1u << ACL_MDL_WORKSPACE_SIZET) ? "ACL_MDL_WORKSPACE_ADDR_PTR"
                                                                           : "ACL_MDL_WEIGHT_ADDR_PTR",
                    work && !(handle->set & 1u << ACL_MDL_WORKSPACE_SIZET) ? "ACL_MDL_WORKSPACE_SIZET"
                                                                           : "ACL_MDL_WEIGHT_SIZET");
  return acl_mdl_load(call, file ? handle->path : NULL, file ? NULL : handle->mem,
                      file ? 0 : handle->mem_size, modelId, work ? handle->work : NULL,
                      work ? handle->work_size : 0, weight ? handle->weight : NULL,
                      weight ? handle->weight_size : 0);
}

/* --- runs' configuration */

aclmdlExecConfigHandle *aclmdlCreateExecConfigHandle(void) {
  aclmdlExecConfigHandle *h = malloc(sizeof *h);
  if (!h) {
    acl_fail(ACL_ERROR_BAD_ALLOC, "aclmdlCreateExecConfigHandle: out of memory");
    return NULL;
  }
  *h = (aclmdlExecConfigHandle){.stream_sync_timeout = -1, .event_sync_timeout = -1};
  return h;
}

aclError aclmdlDestroyExecConfigHandle(const aclmdlExecConfigHandle *handle) {
  if (!handle) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclmdlDestroyExecConfigHandle: handle is NULL");
  free((void *)handle);
  return ACL_SUCCESS;
}

aclError aclmdlSetExecConfigOpt(aclmdlExecConfigHandle *handle, aclmdlExecConfigAttr attr,
                                const void *attrValue, size_t valueSize) {
  const char *call = "aclmdlSetExecConfigOpt";
  static const char *const names[] = {"ACL_MDL_STREAM_SYNC_TIMEOUT", "ACL_MDL_EVENT_SYNC_TIMEOUT",
                                      "ACL_MDL_WORK_ADDR_PTR",       "ACL_MDL_WORK_SIZET",
                                      "ACL_MDL_MPAIMID_SIZET",       "ACL_MDL_AICQOS_SIZET",
                                      "ACL_MDL_AICOST_SIZET",        "ACL_MDL_MEC_TIMETHR_SIZET"};
  if (!handle || !attrValue)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", call, !handle ? "handle" : "attrValue");
  if ((int)attr < 0 || (size_t)attr >= sizeof names / sizeof *names)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: attr %d is not an aclmdlExecConfigAttr", call, (int)attr);
  const char *name = names[attr];
  if (attr == ACL_MDL_WORK_ADDR_PTR || attr == ACL_MDL_WORK_SIZET)
    return acl_fail(ACL_ERROR_INVALID_PARAM,
                    "%s: %s is not supported: a model runs in the work memory of its load "
                    "(aclmdlLoadFromFileWithMem)",
                    call, name);
  if (attr > ACL_MDL_WORK_SIZET) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is reserved", call, name);
  if (valueSize != sizeof(int32_t))
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s: valueSize %zu, its value is an int32_t (4 bytes)", call,
                    name, valueSize);
  int32_t ms;
  memcpy(&ms, attrValue, sizeof ms);
  if (ms < -1 || ms == 0)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s %d: -1 waits forever, > 0 that many ms", call, name,
                    (int)ms);
  if (attr == ACL_MDL_STREAM_SYNC_TIMEOUT)
    handle->stream_sync_timeout = ms;
  else
    handle->event_sync_timeout = ms;
  return ACL_SUCCESS;
}

/* --- model queues and bundles: not provided */

static aclError unsupported(const char *call, const char *what) {
  return acl_unsupported(call, "%s is not provided by the software NPU", what);
}

aclError aclmdlLoadFromFileWithQ(const char *modelPath, uint32_t *modelId, const uint32_t *inputQ,
                                 size_t inputQNum, const uint32_t *outputQ, size_t outputQNum) {
  (void)modelPath, (void)modelId, (void)inputQ, (void)inputQNum, (void)outputQ, (void)outputQNum;
  return unsupported("aclmdlLoadFromFileWithQ", "model queues (the AI CPU's shared queues)");
}

aclError aclmdlLoadFromMemWithQ(const void *model, size_t modelSize, uint32_t *modelId,
                                const uint32_t *inputQ, size_t inputQNum, const uint32_t *outputQ,
                                size_t outputQNum) {
  (void)model, (void)modelSize, (void)modelId, (void)inputQ, (void)inputQNum, (void)outputQ, (void)outputQNum;
  return unsupported("aclmdlLoadFromMemWithQ", "model queues (the AI CPU's shared queues)");
}

static aclError no_bundle(const char *call) {
  return acl_unsupported(call, "bundles are not provided: atc writes one model per om (load it with "
                               "aclmdlLoadFromFile)");
}

aclError aclmdlBundleLoadFromFile(const char *modelPath, uint32_t *bundleId) {
  (void)modelPath, (void)bundleId;
  return no_bundle("aclmdlBundleLoadFromFile");
}
aclError aclmdlBundleLoadFromMem(const void *model, size_t modelSize, uint32_t *bundleId) {
  (void)model, (void)modelSize, (void)bundleId;
  return no_bundle("aclmdlBundleLoadFromMem");
}
aclError aclmdlBundleGetModelNum(uint32_t bundleId, size_t *modelNum) {
  (void)bundleId, (void)modelNum;
  return no_bundle("aclmdlBundleGetModelNum");
}
aclError aclmdlBundleGetModelId(uint32_t bundleId, size_t index, uint32_t *modelId) {
  (void)bundleId, (void)index, (void)modelId;
  return no_bundle("aclmdlBundleGetModelId");
}
aclError aclmdlBundleUnload(uint32_t bundleId) {
  (void)bundleId;
  return no_bundle("aclmdlBundleUnload");
}

aclError aclmdlCreateAndGetOpDesc(uint32_t deviceId, uint32_t streamId, uint32_t taskId, char *opName,
                                  size_t opNameLen, aclTensorDesc **inputDesc, size_t *numInputs,
                                  aclTensorDesc **outputDesc, size_t *numOutputs) {
  (void)deviceId, (void)streamId, (void)taskId, (void)opName, (void)opNameLen;
  (void)inputDesc, (void)numInputs, (void)outputDesc, (void)numOutputs;
  return unsupported("aclmdlCreateAndGetOpDesc",
                     "an operator's description by the chip's task ids (there "
                     "are no task ids; omrun --dump writes every task's tensors)");
}

const char *aclmdlGetOpAttr(aclmdlDesc *modelDesc, const char *opName, const char *attr) {
  (void)modelDesc;
  (void)opName;
  (void)attr;
  unsupported("aclmdlGetOpAttr", "an operator's attributes (the om keeps none)");
  return NULL;
}
