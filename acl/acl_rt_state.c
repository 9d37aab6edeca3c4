/* acl_rt_state.c - the device's state and configuration (acl_rt.h) as a
 * one-device host answers them: utilisation, status, saturation mode,
 * float overflow, peers, system parameters, streams' configuration and
 * queries, exception callbacks, memory calls beyond aclrtMalloc's.
 *
 * Utilisation: the share of the wall time since the previous query (or
 * aclInit's first query) that model runs on this device took, counted by
 * acl_note_run (concurrent runs add up, capped at 100): the cube and vector
 * units are the same host cores; memory is the host's RAM in use.
 *
 * Overflow: the host computes IEEE floats, so the device's saturation mode
 * is ACL_RT_OVERFLOW_MODE_INFNAN (SATURATION cannot be set) and an overflow
 * is an inf or NaN a run writes. Once an application asks about overflow
 * (aclrtGetOverflowStatus, aclrtResetOverflowStatus, or a stream's overflow
 * switch on), every later run's float outputs are checked and a device-wide
 * flag notes one; aclrtGetOverflowStatus writes the flag into device memory
 * in the stream's order, aclrtResetOverflowStatus clears it in that order.
 * Runs before the first ask are not checked (the check reads every output).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl_internal.h"
#include "acl/acl_rt_allocator.h"

static struct {
  atomic_int watch;                        /* overflow is being asked about */
  atomic_int overflow;                     /* a watched run wrote inf or NaN */
  atomic_llong busy_ns;                    /* model runs' time since the last utilisation query */
  atomic_llong since_ns;                   /* that query's time (0: none yet) */
  int64_t sys_param[2];                    /* aclrtSetSysParamOpt's (under the registry lock) */
  uint32_t op_timeout_s;                   /* aclrtSetOpExecuteTimeOut's (kept) */
  aclrtExceptionInfoCallback exception_cb; /* kept; no task fails on a device here */
} st;

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* 1 when n bytes of dtype at p hold an inf or NaN. */
static int non_finite(int dtype, const void *p, size_t n) {
  if (dtype == OMRT_FLOAT32) {
    for (size_t i = 0; i + 4 <= n; i += 4) {
      uint32_t b;
      memcpy(&b, (const char *)p + i, 4);
      if ((b & 0x7f800000u) == 0x7f800000u) return 1;
    }
  } else if (dtype == OMRT_FLOAT16) {
    for (size_t i = 0; i + 2 <= n; i += 2) {
      uint16_t h;
      memcpy(&h, (const char *)p + i, 2);
      if ((h & 0x7c00u) == 0x7c00u) return 1;
    }
  }
  return 0;
}

void acl_note_run(acl_model *m, int gear, void *const *out, int64_t ns) {
  atomic_fetch_add(&st.busy_ns, ns);
  if (!atomic_load(&st.watch)) return;
  for (int i = 0; i < m->nout && !atomic_load(&st.overflow); i++) {
    omrt_tensor_desc t;
    omrt_model_gear_output(m->m, gear, i, &t);
    if (non_finite(t.dtype, out[i], t.bytes)) atomic_store(&st.overflow, 1);
  }
}

void acl_overflow_op(acl_op *op) {
  if (op->value) {
    atomic_store(&st.overflow, 0);
    return;
  }
  uint64_t flag = (uint64_t)atomic_load(&st.overflow);
  memset(op->dst, 0, op->count);
  memcpy(op->dst, &flag, sizeof flag);
}

/* --- the device */

aclError aclrtSetTsDevice(aclrtTsId tsId) {
  aclError e = acl_enter("aclrtSetTsDevice");
  if (e) return e;
  acl_leave();
  if (tsId != ACL_TS_ID_AICORE && tsId != ACL_TS_ID_AIVECTOR)
    return acl_fail(ACL_ERROR_INVALID_PARAM,
                    "aclrtSetTsDevice: tsId %d is no ACL_TS_ID_AICORE or ACL_TS_ID_AIVECTOR", (int)tsId);
  return ACL_SUCCESS; /* (both schedule onto the same host cores) */
}

aclError aclrtGetDeviceUtilizationRate(int32_t deviceId, aclrtUtilizationInfo *utilizationInfo) {
  const char *call = "aclrtGetDeviceUtilizationRate";
  aclError e = acl_enter(call);
  if (e) return e;
  acl_leave();
  if ((e = acl_check_device(call, deviceId))) return e;
  if (!utilizationInfo) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: utilizationInfo is NULL", call);
  int64_t now = now_ns(), since = atomic_exchange(&st.since_ns, now), busy = atomic_exchange(&st.busy_ns, 0);
  int32_t pct = 0;
  if (since > 0 && now > since) pct = busy >= now - since ? 100 : (int32_t)(busy * 100 / (now - since));
  struct sysinfo si;
  int32_t mem = 0;
  if (sysinfo(&si) == 0 && si.totalram > 0)
    mem = (int32_t)((double)(si.totalram - si.freeram - si.bufferram) / (double)si.totalram * 100.0);
  *utilizationInfo = (aclrtUtilizationInfo){
      .cubeUtilization = pct, .vectorUtilization = pct, .aicpuUtilization = 0, .memoryUtilization = mem};
  return ACL_SUCCESS;
}

aclError aclrtQueryDeviceStatus(int32_t deviceId, aclrtDeviceStatus *deviceStatus) {
  const char *call = "aclrtQueryDeviceStatus";
  aclError e = acl_enter(call);
  if (e) return e;
  acl_leave();
  if ((e = acl_check_device(call, deviceId))) return e;
  if (!deviceStatus) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: deviceStatus is NULL", call);
  *deviceStatus = ACL_RT_DEVICE_STATUS_NORMAL;
  return ACL_SUCCESS;
}

aclError aclrtSetDeviceSatMode(aclrtFloatOverflowMode mode) {
  const char *call = "aclrtSetDeviceSatMode";
  aclError e = acl_enter(call);
  if (e) return e;
  acl_leave();
  if (mode == ACL_RT_OVERFLOW_MODE_INFNAN) return ACL_SUCCESS;
  if (mode == ACL_RT_OVERFLOW_MODE_SATURATION)
    return acl_fail(
        ACL_ERROR_FEATURE_UNSUPPORTED,
        "%s: ACL_RT_OVERFLOW_MODE_SATURATION is not provided: the host's IEEE floats give inf and NaN", call);
  return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: mode %d is no aclrtFloatOverflowMode", call, (int)mode);
}

aclError aclrtGetDeviceSatMode(aclrtFloatOverflowMode *mode) {
  aclError e = acl_enter("aclrtGetDeviceSatMode");
  if (e) return e;
  acl_leave();
  if (!mode) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceSatMode: mode is NULL");
  *mode = ACL_RT_OVERFLOW_MODE_INFNAN;
  return ACL_SUCCESS;
}

/* There is one device: its peer is never another device. */
static aclError check_peer(const char *call, int32_t deviceId, int32_t peerDeviceId) {
  aclError e = acl_enter(call);
  if (e) return e;
  acl_leave();
  if ((e = acl_check_device(call, deviceId))) return e;
  if (peerDeviceId == deviceId)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: peerDeviceId %d is the device itself", call,
                    (int)peerDeviceId);
  return acl_fail(ACL_ERROR_RT_INVALID_DEVICEID,
                  "%s: peerDeviceId %d: the software NPU is device 0 (1 device)", call, (int)peerDeviceId);
}

aclError aclrtDeviceCanAccessPeer(int32_t *canAccessPeer, int32_t deviceId, int32_t peerDeviceId) {
  if (!canAccessPeer)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtDeviceCanAccessPeer: canAccessPeer is NULL");
  *canAccessPeer = 0;
  return check_peer("aclrtDeviceCanAccessPeer", deviceId, peerDeviceId);
}

aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags) {
  if (flags != 0)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtDeviceEnablePeerAccess: flags %u: reserved, must be 0",
                    (unsigned)flags);
  return check_peer("aclrtDeviceEnablePeerAccess", 0, peerDeviceId);
}

aclError aclrtDeviceDisablePeerAccess(int32_t peerDeviceId) {
  return check_peer("aclrtDeviceDisablePeerAccess", 0, peerDeviceId);
}

/* ACL_OP_OVERFLOW on `stream`: write the flag to outputAddr (reset 0) or clear it. */
static aclError overflow_op(const char *call, void *outputAddr, size_t outputSize, aclrtStream stream,
                            int reset) {
  aclError e = acl_enter(call);
  if (e) return e;
  const void *base;
  size_t bytes;
  if (!reset && (!outputAddr || outputSize < sizeof(uint64_t)))
    return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", call,
                                   !outputAddr ? "outputAddr is NULL" : "outputSize is less than 8 bytes"));
  if (!reset && acl_device_range(outputAddr, outputSize, &base, &bytes) != 1)
    return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM,
                                   "%s: outputAddr %p (%zu bytes) is not device memory from one aclrtMalloc",
                                   call, outputAddr, outputSize));
  acl_stream *s;
  if ((e = acl_resolve_stream(call, stream, &s))) return acl_leave_with(e);
  acl_op *op = calloc(1, sizeof *op);
  if (!op) return acl_leave_with(acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call));
  *op = (acl_op){.kind = ACL_OP_OVERFLOW, .dst = outputAddr, .count = outputSize, .value = reset};
  atomic_store(&st.watch, 1);
  acl_stream_push(s, op);
  return acl_leave_with(ACL_SUCCESS);
}

aclError aclrtGetOverflowStatus(void *outputAddr, size_t outputSize, aclrtStream stream) {
  return overflow_op("aclrtGetOverflowStatus", outputAddr, outputSize, stream, 0);
}

aclError aclrtResetOverflowStatus(aclrtStream stream) {
  return overflow_op("aclrtResetOverflowStatus", NULL, 0, stream, 1);
}

/* --- system parameters: runs here are deterministic (one summation order)
 * and have no debug kernels, so both are kept and change nothing. */

static aclError sys_param(const char *call, int ctx, aclSysParamOpt opt, int64_t *get, int64_t set) {
  aclError e = acl_enter(call);
  if (e) return e;
  if (opt != ACL_OPT_DETERMINISTIC && opt != ACL_OPT_ENABLE_DEBUG_KERNEL)
    return acl_leave_with(
        acl_fail(ACL_ERROR_INVALID_PARAM, "%s: opt %d is no aclSysParamOpt", call, (int)opt));
  if (!get && set != 0 && set != 1)
    return acl_leave_with(
        acl_fail(ACL_ERROR_INVALID_PARAM, "%s: value %lld: 0 (off) or 1 (on)", call, (long long)set));
  acl_context *c = ctx ? acl_current() : NULL;
  if (ctx && !c) return acl_leave_with(acl_fail(ACL_ERROR_RT_CONTEXT_NULL, "%s: no current context", call));
  int64_t *slot = ctx ? &c->sys_param[opt] : &st.sys_param[opt];
  if (get)
    *get = *slot;
  else
    *slot = set;
  return acl_leave_with(ACL_SUCCESS);
}

aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt, int64_t value) {
  return sys_param("aclrtCtxSetSysParamOpt", 1, opt, NULL, value);
}

aclError aclrtCtxGetSysParamOpt(aclSysParamOpt opt, int64_t *value) {
  if (!value) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtCtxGetSysParamOpt: value is NULL");
  return sys_param("aclrtCtxGetSysParamOpt", 1, opt, value, 0);
}

aclError aclrtSetSysParamOpt(aclSysParamOpt opt, int64_t value) {
  return sys_param("aclrtSetSysParamOpt", 0, opt, NULL, value);
}

aclError aclrtGetSysParamOpt(aclSysParamOpt opt, int64_t *value) {
  if (!value) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetSysParamOpt: value is NULL");
  return sys_param("aclrtGetSysParamOpt", 0, opt, value, 0);
}

/* --- streams' configuration and queries */

enum { STREAM_FLAGS = ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC, MAX_PRIORITY = 7 };

static aclError check_stream_config(const char *call, uint32_t priority, size_t flag) {
  if (priority > MAX_PRIORITY)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: priority %u is not in 0..%d", call, (unsigned)priority,
                    MAX_PRIORITY);
  if (flag & ~(size_t)STREAM_FLAGS)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: flag 0x%zx has bits that are no ACL_STREAM_* flag", call,
                    flag);
  return ACL_SUCCESS;
}

aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority, uint32_t flag) {
  const char *call = "aclrtCreateStreamWithConfig";
  aclError e = check_stream_config(call, priority, flag);
  return e ? e : acl_create_stream(call, stream, priority);
}

aclrtStreamConfigHandle *aclrtCreateStreamConfigHandle(void) {
  aclrtStreamConfigHandle *h = calloc(1, sizeof *h);
  if (!h) acl_fail(ACL_ERROR_BAD_ALLOC, "aclrtCreateStreamConfigHandle: out of memory");
  return h;
}

aclError aclrtDestroyStreamConfigHandle(aclrtStreamConfigHandle *handle) {
  if (!handle) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyStreamConfigHandle: handle is NULL");
  free(handle);
  return ACL_SUCCESS;
}

aclError aclrtSetStreamConfigOpt(aclrtStreamConfigHandle *handle, aclrtStreamConfigAttr attr,
                                 const void *attrValue, size_t valueSize) {
  const char *call = "aclrtSetStreamConfigOpt";
  if (!handle || !attrValue)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", call, !handle ? "handle" : "attrValue");
  switch (attr) {
  case ACL_RT_STREAM_WORK_ADDR_PTR:
  case ACL_RT_STREAM_WORK_SIZE:
    return acl_fail(ACL_ERROR_INVALID_PARAM,
                    "%s: %s is not supported: a model runs in the work memory of its load "
                    "(aclmdlLoadFromFileWithMem)",
                    call,
                    attr == ACL_RT_STREAM_WORK_ADDR_PTR ? "ACL_RT_STREAM_WORK_ADDR_PTR"
                                                        : "ACL_RT_STREAM_WORK_SIZE");
  case ACL_RT_STREAM_FLAG: {
    size_t flag = 0;
    if (valueSize != sizeof flag)
      return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: ACL_RT_STREAM_FLAG: valueSize %zu, its value is a size_t",
                      call, valueSize);
    memcpy(&flag, attrValue, sizeof flag);
    aclError e = check_stream_config(call, 0, flag);
    if (!e) handle->flag = flag;
    return e;
  }
  case ACL_RT_STREAM_PRIORITY: {
    uint32_t priority = 0;
    if (valueSize != sizeof priority)
      return acl_fail(ACL_ERROR_INVALID_PARAM,
                      "%s: ACL_RT_STREAM_PRIORITY: valueSize %zu, its value is a uint32_t", call, valueSize);
    memcpy(&priority, attrValue, sizeof priority);
    aclError e = check_stream_config(call, priority, 0);
    if (!e) handle->priority = priority;
    return e;
  }
  }
  return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: attr %d is no aclrtStreamConfigAttr", call, (int)attr);
}

aclError aclrtCreateStreamV2(aclrtStream *stream, const aclrtStreamConfigHandle *handle) {
  const char *call = "aclrtCreateStreamV2";
  if (!handle) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: handle is NULL", call);
  aclError e = check_stream_config(call, handle->priority, handle->flag);
  if (!e && (handle->workptr || handle->workSize))
    e = acl_fail(ACL_ERROR_INVALID_PARAM, "%s: the handle's work memory is not supported", call);
  return e ? e : acl_create_stream(call, stream, handle->priority);
}

/* The live stream `stream` of the current context (NULL: the default one,
 * unless no_default), under the lock: acl_leave() after use. */
static aclError stream_of(const char *call, aclrtStream stream, int no_default, acl_stream **s) {
  aclError e = acl_enter(call);
  if (e) return e;
  if (no_default && !stream)
    return acl_leave_with(
        acl_fail(ACL_ERROR_INVALID_PARAM, "%s: stream is NULL (not for the default stream)", call));
  if ((e = acl_resolve_stream(call, stream, s))) return acl_leave_with(e);
  return ACL_SUCCESS;
}

aclError aclrtSetStreamOverflowSwitch(aclrtStream stream, uint32_t flag) {
  const char *call = "aclrtSetStreamOverflowSwitch";
  if (flag > 1)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: flag %u: 0 (off) or 1 (on)", call, (unsigned)flag);
  acl_stream *s;
  aclError e = stream_of(call, stream, 0, &s);
  if (e) return e;
  acl_stream_set_overflow_switch(s, flag);
  if (flag) atomic_store(&st.watch, 1);
  return acl_leave_with(ACL_SUCCESS);
}

aclError aclrtGetStreamOverflowSwitch(aclrtStream stream, uint32_t *flag) {
  const char *call = "aclrtGetStreamOverflowSwitch";
  if (!flag) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: flag is NULL", call);
  acl_stream *s;
  aclError e = stream_of(call, stream, 0, &s);
  if (e) return e;
  *flag = acl_stream_overflow_switch(s);
  return acl_leave_with(ACL_SUCCESS);
}

aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t mode) {
  const char *call = "aclrtSetStreamFailureMode";
  if (mode != ACL_CONTINUE_ON_FAILURE && mode != ACL_STOP_ON_FAILURE)
    return acl_fail(ACL_ERROR_INVALID_PARAM,
                    "%s: mode %llu is no ACL_CONTINUE_ON_FAILURE or ACL_STOP_ON_FAILURE", call,
                    (unsigned long long)mode);
  acl_stream *s;
  aclError e = stream_of(call, stream, 1, &s);
  if (e) return e;
  acl_stream_set_stop_on_failure(s, mode == ACL_STOP_ON_FAILURE);
  return acl_leave_with(ACL_SUCCESS);
}

aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status) {
  const char *call = "aclrtStreamQuery";
  if (!status) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: status is NULL", call);
  acl_stream *s;
  aclError e = stream_of(call, stream, 0, &s);
  if (e) return e;
  *status = acl_stream_busy(s) ? ACL_STREAM_STATUS_NOT_READY : ACL_STREAM_STATUS_COMPLETE;
  return acl_leave_with(ACL_SUCCESS);
}

/* --- execution control */

aclError aclrtSetOpExecuteTimeOut(uint32_t timeout) {
  aclError e = acl_enter("aclrtSetOpExecuteTimeOut");
  if (e) return e;
  st.op_timeout_s = timeout; /* kept: a task here always finishes */
  return acl_leave_with(ACL_SUCCESS);
}

/* A failed run or copy returns its error from the call or the stream's
 * synchronization (with aclGetRecentErrMsg's message), never through
 * these: the callback is kept and never called, and no exception info
 * exists to read. */
aclError aclrtSetExceptionInfoCallback(aclrtExceptionInfoCallback callback) {
  aclError e = acl_enter("aclrtSetExceptionInfoCallback");
  if (e) return e;
  st.exception_cb = callback;
  return acl_leave_with(ACL_SUCCESS);
}

#define NO_INFO(name)                                                                                        \
  uint32_t name(const aclrtExceptionInfo *info) {                                                            \
    (void)info;                                                                                              \
    acl_fail(ACL_ERROR_INVALID_PARAM, #name ": no exception info exists here");                              \
    return 0xFFFFFFFFu;                                                                                      \
  }
NO_INFO(aclrtGetTaskIdFromExceptionInfo)
NO_INFO(aclrtGetStreamIdFromExceptionInfo)
NO_INFO(aclrtGetThreadIdFromExceptionInfo)
NO_INFO(aclrtGetDeviceIdFromExceptionInfo)
NO_INFO(aclrtGetErrorCodeFromExceptionInfo)

/* --- memory */

/* aclrtMalloc's memory is 64-byte aligned, so 32-byte aligned too. */
aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
  return acl_malloc_device("aclrtMallocAlign32", devPtr, size, policy);
}

/* Virtual memory management and shareable handles: device memory here is
 * aclrtMalloc's, one host allocation each. */
static aclError no_vmm(const char *call) {
  return acl_unsupported(call, "virtual memory management (reserve, physical memory, map) and shareable "
                               "handles are not provided: device memory is aclrtMalloc's");
}

aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t alignment, void *expectPtr,
                                uint64_t flags) {
  (void)virPtr, (void)size, (void)alignment, (void)expectPtr, (void)flags;
  return no_vmm("aclrtReserveMemAddress");
}
aclError aclrtReleaseMemAddress(void *virPtr) {
  (void)virPtr;
  return no_vmm("aclrtReleaseMemAddress");
}
aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size, const aclrtPhysicalMemProp *prop,
                             uint64_t flags) {
  (void)handle, (void)size, (void)prop, (void)flags;
  return no_vmm("aclrtMallocPhysical");
}
aclError aclrtFreePhysical(aclrtDrvMemHandle handle) {
  (void)handle;
  return no_vmm("aclrtFreePhysical");
}
aclError aclrtMapMem(void *virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle, uint64_t flags) {
  (void)virPtr, (void)size, (void)offset, (void)handle, (void)flags;
  return no_vmm("aclrtMapMem");
}
aclError aclrtUnmapMem(void *virPtr) {
  (void)virPtr;
  return no_vmm("aclrtUnmapMem");
}
aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop, aclrtMemGranularityOptions option,
                                          size_t *granularity) {
  (void)prop, (void)option, (void)granularity;
  return no_vmm("aclrtMemGetAllocationGranularity");
}
aclError aclrtMemExportToShareableHandle(aclrtDrvMemHandle handle, aclrtMemHandleType handleType,
                                         uint64_t flags, uint64_t *shareableHandle) {
  (void)handle, (void)handleType, (void)flags, (void)shareableHandle;
  return no_vmm("aclrtMemExportToShareableHandle");
}
aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle, int32_t deviceId,
                                           aclrtDrvMemHandle *handle) {
  (void)shareableHandle, (void)deviceId, (void)handle;
  return no_vmm("aclrtMemImportFromShareableHandle");
}
aclError aclrtMemSetPidToShareableHandle(uint64_t shareableHandle, int32_t *pid, size_t pidNum) {
  (void)shareableHandle, (void)pid, (void)pidNum;
  return no_vmm("aclrtMemSetPidToShareableHandle");
}

/* The process that owns the device's memory: this one. */
aclError aclrtDeviceGetBareTgid(int32_t *pid) {
  aclError e = acl_enter("aclrtDeviceGetBareTgid");
  if (e) return e;
  acl_leave();
  if (!pid) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtDeviceGetBareTgid: pid is NULL");
  *pid = (int32_t)getpid();
  return ACL_SUCCESS;
}

/* --- external allocators (acl_rt_allocator.h): the description is plain
 * data; registering one is not provided (a run allocates nothing). */

typedef struct allocator_desc {
  aclrtAllocator obj;
  aclrtAllocatorAllocFunc alloc;
  aclrtAllocatorFreeFunc free;
  aclrtAllocatorAllocAdviseFunc advise;
  aclrtAllocatorGetAddrFromBlockFunc addr;
} allocator_desc;

aclrtAllocatorDesc aclrtAllocatorCreateDesc(void) {
  allocator_desc *d = calloc(1, sizeof *d);
  if (!d) acl_fail(ACL_ERROR_BAD_ALLOC, "aclrtAllocatorCreateDesc: out of memory");
  return d;
}

aclError aclrtAllocatorDestroyDesc(aclrtAllocatorDesc allocatorDesc) {
  if (!allocatorDesc)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtAllocatorDestroyDesc: allocatorDesc is NULL");
  free(allocatorDesc);
  return ACL_SUCCESS;
}

#define ALLOCATOR_SET(name, type, field)                                                                     \
  aclError name(aclrtAllocatorDesc allocatorDesc, type v) {                                                  \
    if (!allocatorDesc) return acl_fail(ACL_ERROR_INVALID_PARAM, #name ": allocatorDesc is NULL");           \
    ((allocator_desc *)allocatorDesc)->field = v;                                                            \
    return ACL_SUCCESS;                                                                                      \
  }
ALLOCATOR_SET(aclrtAllocatorSetObjToDesc, aclrtAllocator, obj)
ALLOCATOR_SET(aclrtAllocatorSetAllocFuncToDesc, aclrtAllocatorAllocFunc, alloc)
ALLOCATOR_SET(aclrtAllocatorSetFreeFuncToDesc, aclrtAllocatorFreeFunc, free)
ALLOCATOR_SET(aclrtAllocatorSetAllocAdviseFuncToDesc, aclrtAllocatorAllocAdviseFunc, advise)
ALLOCATOR_SET(aclrtAllocatorSetGetAddrFromBlockFuncToDesc, aclrtAllocatorGetAddrFromBlockFunc, addr)

aclError aclrtAllocatorRegister(aclrtStream stream, aclrtAllocatorDesc allocatorDesc) {
  (void)stream, (void)allocatorDesc;
  return acl_unsupported("aclrtAllocatorRegister", "external allocators are not provided: a run allocates "
                                                   "nothing (it uses its model's work memory)");
}

aclError aclrtAllocatorUnregister(aclrtStream stream) {
  (void)stream;
  return acl_unsupported("aclrtAllocatorUnregister", "external allocators are not provided");
}
