/* acl_rt.h - AscendCL runtime resources: the device, contexts, streams and
 * memory (libascendcl; see acl.h).
 *
 * The device is the software Da Vinci NPU of libomrt, in this process: one
 * device, number 0. aclrtGetRunMode says ACL_HOST: the application runs on
 * the host and the device has memory of its own, so an application written
 * for a real card (copy inputs host -> device, run, copy outputs back) runs
 * unchanged; device memory is host RAM handed out by aclrtMalloc, and every
 * copy and model run checks that the memory it is given is of the kind the
 * call says, as the chip would.
 *
 * Contexts: aclrtSetDevice makes the device's default context current on
 * the calling thread (it cannot be destroyed; aclrtResetDevice, once for
 * every aclrtSetDevice, releases it). aclrtCreateContext makes a new
 * context, current on the calling thread. Each context has a default
 * stream, used where a call takes a NULL stream.
 *
 * Streams: a stream is an in-order queue of work (aclrtMemcpyAsync,
 * aclmdlExecuteAsync) run by a host thread of its own; the calls only
 * enqueue, and aclrtSynchronizeStream waits until everything enqueued has
 * run, returning the first failure among them (and clearing it). Memory
 * named in enqueued work must stay valid until then.
 *
 * Ownership: memory from aclrtMalloc / aclrtMallocHost belongs to the
 * caller until aclrtFree / aclrtFreeHost (aclFinalize frees what is left).
 * Handles are checked: a destroyed or foreign handle is an error, not a
 * crash.
 */
#ifndef INC_EXTERNAL_ACL_ACL_RT_H_
#define INC_EXTERNAL_ACL_ACL_RT_H_

#include <stddef.h>
#include <stdint.h>

#include "acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum aclrtRunMode {
  ACL_DEVICE, /* the application runs on the device's control CPU */
  ACL_HOST,   /* the application runs on the host (always, here) */
} aclrtRunMode;

typedef enum aclrtMemcpyKind {
  ACL_MEMCPY_HOST_TO_HOST,
  ACL_MEMCPY_HOST_TO_DEVICE,
  ACL_MEMCPY_DEVICE_TO_HOST,
  ACL_MEMCPY_DEVICE_TO_DEVICE,
  ACL_MEMCPY_DEFAULT, /* the direction follows from the addresses */
} aclrtMemcpyKind;

/* One page policy, or one of HUGE_FIRST, HUGE_ONLY and NORMAL_ONLY ored
 * with one memory type (ACL_MEM_MALLOC_HUGE_FIRST | ACL_MEM_TYPE_HIGH_BAND_WIDTH),
 * or a memory type alone (HUGE_FIRST then). Device memory is host RAM
 * here: every valid policy gets the same memory; other values are
 * ACL_ERROR_INVALID_PARAM. */
typedef enum aclrtMemMallocPolicy {
  ACL_MEM_MALLOC_HUGE_FIRST,
  ACL_MEM_MALLOC_HUGE_ONLY,
  ACL_MEM_MALLOC_NORMAL_ONLY,
  ACL_MEM_MALLOC_HUGE_FIRST_P2P,
  ACL_MEM_MALLOC_HUGE_ONLY_P2P,
  ACL_MEM_MALLOC_NORMAL_ONLY_P2P,
  ACL_MEM_MALLOC_HUGE1G_ONLY,
  ACL_MEM_MALLOC_HUGE1G_ONLY_P2P,
  ACL_MEM_TYPE_LOW_BAND_WIDTH = 0x0100,
  ACL_MEM_TYPE_HIGH_BAND_WIDTH = 0x1000,
} aclrtMemMallocPolicy;

typedef enum aclrtMemAttr {
  ACL_DDR_MEM,
  ACL_HBM_MEM,
  ACL_DDR_MEM_HUGE,
  ACL_DDR_MEM_NORMAL,
  ACL_HBM_MEM_HUGE,
  ACL_HBM_MEM_NORMAL,
  ACL_DDR_MEM_P2P_HUGE,
  ACL_DDR_MEM_P2P_NORMAL,
  ACL_HBM_MEM_P2P_HUGE,
  ACL_HBM_MEM_P2P_NORMAL,
} aclrtMemAttr;

/* aclrtCreateEventWithFlag's flags (or'ed). */
#define ACL_EVENT_SYNC 0x00000001u                    /* streams may wait for it (every event may, here) */
#define ACL_EVENT_CAPTURE_STREAM_PROGRESS 0x00000002u /* accepted; no capture here */
#define ACL_EVENT_TIME_LINE 0x00000008u               /* records the time it completes */

typedef enum aclrtEventStatus {
  ACL_EVENT_STATUS_COMPLETE = 0,
  ACL_EVENT_STATUS_NOT_READY = 1,
  ACL_EVENT_STATUS_RESERVED = 2,
} aclrtEventStatus;

typedef enum aclrtEventRecordedStatus {
  ACL_EVENT_RECORDED_STATUS_NOT_READY = 0,
  ACL_EVENT_RECORDED_STATUS_COMPLETE = 1,
} aclrtEventRecordedStatus;

typedef enum aclrtCallbackBlockType {
  ACL_CALLBACK_NO_BLOCK, /* the stream goes on while the callback waits for its thread */
  ACL_CALLBACK_BLOCK,    /* the stream waits until the callback has run */
} aclrtCallbackBlockType;

typedef void *aclrtContext;
typedef void *aclrtStream;
typedef void *aclrtEvent;
typedef void (*aclrtCallback)(void *userData);

/* Virtual memory management (aclrtReserveMemAddress, aclrtMallocPhysical,
 * aclrtMapMem ...) and shareable handles are not provided: device memory
 * is aclrtMalloc's; these return ACL_ERROR_FEATURE_UNSUPPORTED.
 * aclrtDeviceGetBareTgid gives the process id. */
typedef enum aclrtMemLocationType {
  ACL_MEM_LOCATION_TYPE_HOST = 0,
  ACL_MEM_LOCATION_TYPE_DEVICE,
} aclrtMemLocationType;
typedef struct aclrtMemLocation {
  uint32_t id;
  aclrtMemLocationType type;
} aclrtMemLocation;
typedef enum aclrtMemAllocationType {
  ACL_MEM_ALLOCATION_TYPE_PINNED = 0,
} aclrtMemAllocationType;
typedef enum aclrtMemHandleType {
  ACL_MEM_HANDLE_TYPE_NONE = 0,
} aclrtMemHandleType;
typedef struct aclrtPhysicalMemProp {
  aclrtMemHandleType handleType;
  aclrtMemAllocationType allocationType;
  aclrtMemAttr memAttr;
  aclrtMemLocation location;
  uint64_t reserve;
} aclrtPhysicalMemProp;
typedef enum aclrtMemGranularityOptions {
  ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM,
  ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED,
  ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF = 0xFFFF,
} aclrtMemGranularityOptions;
typedef void *aclrtDrvMemHandle;

typedef enum aclrtTsId {
  ACL_TS_ID_AICORE = 0,
  ACL_TS_ID_AIVECTOR = 1,
  ACL_TS_ID_RESERVED = 2,
} aclrtTsId;

typedef enum aclrtDeviceStatus {
  ACL_RT_DEVICE_STATUS_NORMAL = 0,
  ACL_RT_DEVICE_STATUS_ABNORMAL,
  ACL_RT_DEVICE_STATUS_END = 0xFFFF,
} aclrtDeviceStatus;

typedef enum aclrtFloatOverflowMode {
  ACL_RT_OVERFLOW_MODE_SATURATION = 0,
  ACL_RT_OVERFLOW_MODE_INFNAN,
  ACL_RT_OVERFLOW_MODE_UNDEF,
} aclrtFloatOverflowMode;

typedef struct aclrtUtilizationExtendInfo aclrtUtilizationExtendInfo;
typedef struct aclrtUtilizationInfo {
  int32_t cubeUtilization;                       /* percent */
  int32_t vectorUtilization;                     /* percent */
  int32_t aicpuUtilization;                      /* percent */
  int32_t memoryUtilization;                     /* percent */
  aclrtUtilizationExtendInfo *utilizationExtend; /* reserved: NULL */
} aclrtUtilizationInfo;

/* aclrtCreateStreamWithConfig's flags (or'ed) and aclrtSetStreamFailureMode's modes. */
#define ACL_STREAM_FAST_LAUNCH 0x00000001u
#define ACL_STREAM_FAST_SYNC 0x00000002u
#define ACL_CONTINUE_ON_FAILURE 0x00000000u
#define ACL_STOP_ON_FAILURE 0x00000001u

typedef enum aclrtStreamStatus {
  ACL_STREAM_STATUS_COMPLETE = 0,
  ACL_STREAM_STATUS_NOT_READY = 1,
  ACL_STREAM_STATUS_RESERVED = 0xFFFF,
} aclrtStreamStatus;

typedef enum aclrtEventWaitStatus {
  ACL_EVENT_WAIT_STATUS_COMPLETE = 0,
  ACL_EVENT_WAIT_STATUS_NOT_READY = 1,
  ACL_EVENT_WAIT_STATUS_RESERVED = 0xFFFF,
} aclrtEventWaitStatus;

typedef enum {
  ACL_RT_STREAM_WORK_ADDR_PTR = 0,
  ACL_RT_STREAM_WORK_SIZE,
  ACL_RT_STREAM_FLAG,     /* size_t: ACL_STREAM_* flags */
  ACL_RT_STREAM_PRIORITY, /* uint32_t: 0..7 */
} aclrtStreamConfigAttr;
typedef struct aclrtStreamConfigHandle {
  void *workptr;
  size_t workSize;
  size_t flag;
  uint32_t priority;
} aclrtStreamConfigHandle;

typedef enum aclrtLastErrLevel {
  ACL_RT_THREAD_LEVEL = 0,
} aclrtLastErrLevel;

typedef struct rtExceptionInfo aclrtExceptionInfo;
typedef void (*aclrtExceptionInfoCallback)(aclrtExceptionInfo *exceptionInfo);

ACL_FUNC_VISIBILITY aclError aclrtGetRunMode(aclrtRunMode *runMode);

/* Devices: only device 0 exists (ACL_ERROR_RT_INVALID_DEVICEID otherwise). */
ACL_FUNC_VISIBILITY aclError aclrtSetDevice(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtResetDevice(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtGetDevice(int32_t *deviceId); /* of the current context */
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceCount(uint32_t *count);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDevice(void); /* every stream of the device */
/* The same, giving up after timeout ms (-1: never) with ACL_ERROR_RT_STREAM_SYNC_TIMEOUT. */
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDeviceWithTimeout(int32_t timeout);
/* aclrtResetDevice whatever the count of aclrtSetDevice calls. */
ACL_FUNC_VISIBILITY aclError aclrtResetDeviceForce(int32_t deviceId);
/* ACL_TS_ID_AICORE or ACL_TS_ID_AIVECTOR: both run on the same host cores. */
ACL_FUNC_VISIBILITY aclError aclrtSetTsDevice(aclrtTsId tsId);
/* Cube and vector: the percent of the wall time since the previous query
 * that model runs took (0 at the first query; concurrent runs add up,
 * capped at 100); AI CPU 0; memory: the host's RAM in use. */
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceUtilizationRate(int32_t deviceId,
                                                           aclrtUtilizationInfo *utilizationInfo);
ACL_FUNC_VISIBILITY aclError aclrtQueryDeviceStatus(int32_t deviceId,
                                                    aclrtDeviceStatus *deviceStatus); /* NORMAL */
/* The host computes IEEE floats: the mode is ACL_RT_OVERFLOW_MODE_INFNAN;
 * SATURATION is ACL_ERROR_FEATURE_UNSUPPORTED. */
ACL_FUNC_VISIBILITY aclError aclrtSetDeviceSatMode(aclrtFloatOverflowMode mode);
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceSatMode(aclrtFloatOverflowMode *mode);
/* One device: no peer (ACL_ERROR_RT_INVALID_DEVICEID; the device itself:
 * ACL_ERROR_INVALID_PARAM). */
ACL_FUNC_VISIBILITY aclError aclrtDeviceCanAccessPeer(int32_t *canAccessPeer, int32_t deviceId,
                                                      int32_t peerDeviceId);
ACL_FUNC_VISIBILITY aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags);
ACL_FUNC_VISIBILITY aclError aclrtDeviceDisablePeerAccess(int32_t peerDeviceId);
/* Float overflow: an inf or NaN a run writes into a float output. From the
 * first of these calls (or a stream's overflow switch on), every run's
 * outputs are checked and a device-wide flag notes one; Get writes the
 * flag (uint64_t 0 or 1, the rest of outputSize >= 8 bytes zeroed) into
 * device memory at outputAddr, Reset clears it, both in `stream`'s order. */
ACL_FUNC_VISIBILITY aclError aclrtGetOverflowStatus(void *outputAddr, size_t outputSize, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtResetOverflowStatus(aclrtStream stream);

ACL_FUNC_VISIBILITY aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtDestroyContext(aclrtContext context); /* waits for its streams */
ACL_FUNC_VISIBILITY aclError aclrtSetCurrentContext(aclrtContext context);
ACL_FUNC_VISIBILITY aclError aclrtGetCurrentContext(aclrtContext *context);
/* System parameters (aclSysParamOpt, values 0 or 1) of the current context
 * or (aclrtSetSysParamOpt) the process: kept; runs here are deterministic
 * and have no debug kernels, so they change nothing. */
ACL_FUNC_VISIBILITY aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt, int64_t value);
ACL_FUNC_VISIBILITY aclError aclrtCtxGetSysParamOpt(aclSysParamOpt opt, int64_t *value);
ACL_FUNC_VISIBILITY aclError aclrtSetSysParamOpt(aclSysParamOpt opt, int64_t value);
ACL_FUNC_VISIBILITY aclError aclrtGetSysParamOpt(aclSysParamOpt opt, int64_t *value);

/* In the current context. */
ACL_FUNC_VISIBILITY aclError aclrtCreateStream(aclrtStream *stream);
/* Waits for the stream's work and destroys it (ending its subscription);
 * ACL_ERROR_RT_STREAM_NO_CB_REG (the stream destroyed all the same) when a
 * callback of it could not run: a blocking one no thread had taken. */
ACL_FUNC_VISIBILITY aclError aclrtDestroyStream(aclrtStream stream);
/* The same: a stream here holds no task that cannot finish, so what is
 * queued runs first. */
ACL_FUNC_VISIBILITY aclError aclrtDestroyStreamForce(aclrtStream stream);
/* Streams with a configuration: priority 0..7 (kept: one stream's work
 * never waits for another's here), flag ACL_STREAM_FAST_LAUNCH /
 * ACL_STREAM_FAST_SYNC (accepted). A configuration handle's work memory
 * (ACL_RT_STREAM_WORK_ADDR_PTR / _SIZE) is ACL_ERROR_INVALID_PARAM: a model
 * runs in the work memory of its load. */
ACL_FUNC_VISIBILITY aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority,
                                                         uint32_t flag);
ACL_FUNC_VISIBILITY aclrtStreamConfigHandle *
aclrtCreateStreamConfigHandle(void); /* NULL when out of memory */
ACL_FUNC_VISIBILITY aclError aclrtDestroyStreamConfigHandle(aclrtStreamConfigHandle *handle);
ACL_FUNC_VISIBILITY aclError aclrtSetStreamConfigOpt(aclrtStreamConfigHandle *handle,
                                                     aclrtStreamConfigAttr attr, const void *attrValue,
                                                     size_t valueSize);
ACL_FUNC_VISIBILITY aclError aclrtCreateStreamV2(aclrtStream *stream, const aclrtStreamConfigHandle *handle);
/* flag 0 or 1, kept (and 1 starts the overflow check, aclrtGetOverflowStatus). */
ACL_FUNC_VISIBILITY aclError aclrtSetStreamOverflowSwitch(aclrtStream stream, uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtGetStreamOverflowSwitch(aclrtStream stream, uint32_t *flag);
/* ACL_STOP_ON_FAILURE: after a failure the stream skips its copies, memsets
 * and runs until the next synchronization reports it (event records, waits
 * and callbacks still run). Not for the default stream (NULL). */
ACL_FUNC_VISIBILITY aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t mode);
/* COMPLETE when nothing is queued or running on the stream. */
ACL_FUNC_VISIBILITY aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStream(aclrtStream stream);
/* The same, giving up after timeout ms (-1: never) with
 * ACL_ERROR_RT_STREAM_SYNC_TIMEOUT; the stream's failures, if any, are then
 * kept for the next synchronization. */
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout);

/* Events mark a point in a stream's order. aclrtRecordEvent enqueues the
 * mark: the event completes when the stream's thread reaches it, all the
 * work queued before it done, and (unless created with flags lacking
 * ACL_EVENT_TIME_LINE) notes the time then. Recording again moves the mark:
 * the event is pending until the new one is reached. aclrtStreamWaitEvent
 * makes a stream wait, in its order, until the event's latest record (as
 * of the call) has completed; an event never recorded is no wait. An event
 * may be destroyed with work still naming it: it goes when that work is
 * done. The events are the process's (any context may use them). */
ACL_FUNC_VISIBILITY aclError aclrtCreateEvent(aclrtEvent *event); /* with timestamps */
/* flag: ACL_EVENT_* or'ed; other bits are ACL_ERROR_INVALID_PARAM. */
ACL_FUNC_VISIBILITY aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag);
/* The same event (every event here may be recorded again). */
ACL_FUNC_VISIBILITY aclError aclrtCreateEventExWithFlag(aclrtEvent *event, uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtDestroyEvent(aclrtEvent event);
ACL_FUNC_VISIBILITY aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
/* Enqueues the event's return to "not recorded" on `stream`. */
ACL_FUNC_VISIBILITY aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream);
/* COMPLETE when the latest record has been reached; NOT_READY while it is
 * pending, and for an event never recorded (or reset). */
ACL_FUNC_VISIBILITY aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus *status);
ACL_FUNC_VISIBILITY aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status);
/* COMPLETE once what a stream waiting for it waits for (its latest record) is reached. */
ACL_FUNC_VISIBILITY aclError aclrtQueryEventWaitStatus(aclrtEvent event, aclrtEventWaitStatus *status);
/* Blocks until the latest record has completed (at once if never recorded). */
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeEvent(aclrtEvent event);
/* The same, giving up after timeout ms (-1: never) with ACL_ERROR_RT_EVENT_SYNC_TIMEOUT. */
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout);
/* Milliseconds from start's completion to end's, both completed
 * (ACL_ERROR_RT_EVENT_NOT_COMPLETE) and with timestamps
 * (ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID); end before start is
 * ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL. */
ACL_FUNC_VISIBILITY aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent);
/* stream NULL: the current context's default stream. */
ACL_FUNC_VISIBILITY aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);
/* How long (seconds, 0: forever, the default) a stream waits in
 * aclrtStreamWaitEvent before it gives up: that wait then fails the stream
 * with ACL_ERROR_RT_WAIT_TIMEOUT (reported by aclrtSynchronizeStream). */
ACL_FUNC_VISIBILITY aclError aclrtSetOpWaitTimeout(uint32_t timeout);
/* Seconds a task may run: kept (a task here always finishes). */
ACL_FUNC_VISIBILITY aclError aclrtSetOpExecuteTimeOut(uint32_t timeout);
/* Task exceptions: a failed run or copy returns its error from the call or
 * the stream's synchronization, so the callback is kept and never called;
 * the getters have no info to read (0xFFFFFFFF, ACL_ERROR_INVALID_PARAM's
 * message). */
ACL_FUNC_VISIBILITY aclError aclrtSetExceptionInfoCallback(aclrtExceptionInfoCallback callback);
/* The code of the latest call that failed on this thread (ACL_SUCCESS if
 * none); Get also clears it. */
ACL_FUNC_VISIBILITY aclError aclrtPeekAtLastError(aclrtLastErrLevel level);
ACL_FUNC_VISIBILITY aclError aclrtGetLastError(aclrtLastErrLevel level);
ACL_FUNC_VISIBILITY uint32_t aclrtGetTaskIdFromExceptionInfo(const aclrtExceptionInfo *info);
ACL_FUNC_VISIBILITY uint32_t aclrtGetStreamIdFromExceptionInfo(const aclrtExceptionInfo *info);
ACL_FUNC_VISIBILITY uint32_t aclrtGetThreadIdFromExceptionInfo(const aclrtExceptionInfo *info);
ACL_FUNC_VISIBILITY uint32_t aclrtGetDeviceIdFromExceptionInfo(const aclrtExceptionInfo *info);
ACL_FUNC_VISIBILITY uint32_t aclrtGetErrorCodeFromExceptionInfo(const aclrtExceptionInfo *info);

/* Callbacks: a host function run in a stream's order, on an application
 * thread. aclrtSubscribeReport(threadId, stream) names the thread
 * (threadId: its pthread_t as uint64_t) that runs the stream's callbacks; a
 * stream has at most one (ACL_ERROR_RT_STREAM_SUBSCRIBE), a thread may
 * serve several streams. aclrtLaunchCallback enqueues fn(userData) on a
 * subscribed stream (ACL_ERROR_RT_STREAM_NO_CB_REG otherwise); when the
 * stream reaches it, it is handed to the thread, which runs it inside its
 * aclrtProcessReport(timeout) call: timeout in ms, -1 waits forever
 * (0 and < -1: ACL_ERROR_INVALID_PARAM); one callback per call;
 * ACL_ERROR_RT_REPORT_TIMEOUT when none came; ACL_ERROR_RT_THREAD_SUBSCRIBE
 * from a thread subscribed to no stream. A callback reached after its
 * stream was unsubscribed fails the stream (ACL_ERROR_RT_STREAM_NO_CB_REG,
 * at aclrtSynchronizeStream) without running; so does an
 * ACL_CALLBACK_BLOCK callback its thread had not taken when the
 * subscription ended (aclrtUnSubscribeReport) or its stream is destroyed
 * (aclrtDestroyStream, aclFinalize), which no longer holds the stream. */
ACL_FUNC_VISIBILITY aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtLaunchCallback(aclrtCallback fn, void *userData,
                                                 aclrtCallbackBlockType blockType, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtProcessReport(int32_t timeout);
ACL_FUNC_VISIBILITY aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream);

/* Device memory: 64-byte aligned, size > 0. */
ACL_FUNC_VISIBILITY aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
ACL_FUNC_VISIBILITY aclError aclrtFree(void *devPtr);
/* Device memory the host side caches (aclrtFree frees it); here as
 * aclrtMalloc's. aclrtMemFlush / aclrtMemInvalidate write back / drop the
 * cache lines of a range of device memory: the memory is coherent here, so
 * they only check that [devPtr, devPtr + size) is device memory. */
ACL_FUNC_VISIBILITY aclError aclrtMallocCached(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
ACL_FUNC_VISIBILITY aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t alignment,
                                                    void *expectPtr, uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtReleaseMemAddress(void *virPtr);
ACL_FUNC_VISIBILITY aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size,
                                                 const aclrtPhysicalMemProp *prop, uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtFreePhysical(aclrtDrvMemHandle handle);
ACL_FUNC_VISIBILITY aclError aclrtMapMem(void *virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle,
                                         uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtUnmapMem(void *virPtr);
ACL_FUNC_VISIBILITY aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop,
                                                              aclrtMemGranularityOptions option,
                                                              size_t *granularity);
ACL_FUNC_VISIBILITY aclError aclrtMemExportToShareableHandle(aclrtDrvMemHandle handle,
                                                             aclrtMemHandleType handleType, uint64_t flags,
                                                             uint64_t *shareableHandle);
ACL_FUNC_VISIBILITY aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle, int32_t deviceId,
                                                               aclrtDrvMemHandle *handle);
ACL_FUNC_VISIBILITY aclError aclrtMemSetPidToShareableHandle(uint64_t shareableHandle, int32_t *pid,
                                                             size_t pidNum);
ACL_FUNC_VISIBILITY aclError aclrtDeviceGetBareTgid(int32_t *pid);
/* aclrtMalloc (its 64-byte alignment is a 32-byte one). */
ACL_FUNC_VISIBILITY aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
ACL_FUNC_VISIBILITY aclError aclrtMemFlush(void *devPtr, size_t size);
ACL_FUNC_VISIBILITY aclError aclrtMemInvalidate(void *devPtr, size_t size);
/* Device memory is host RAM: every attr reports the host's total and
 * available physical memory (bytes). */
ACL_FUNC_VISIBILITY aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total);
/* Host memory for staging copies: 64-byte aligned, size > 0. */
ACL_FUNC_VISIBILITY aclError aclrtMallocHost(void **hostPtr, size_t size);
ACL_FUNC_VISIBILITY aclError aclrtFreeHost(void *hostPtr);
/* Sets count bytes (at most maxCount) to (uint8_t)value: device memory or
 * aclrtMallocHost's (told apart by the address); other memory is
 * ACL_ERROR_RT_PARAM_INVALID. */
ACL_FUNC_VISIBILITY aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count);
/* The same, enqueued on `stream`. */
ACL_FUNC_VISIBILITY aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count,
                                              aclrtStream stream);
/* Copies count bytes (at most destMax) in the direction `kind` says; the
 * addresses must be of the kinds it names (device memory: within one
 * aclrtMalloc allocation), else ACL_ERROR_RT_PARAM_INVALID. */
ACL_FUNC_VISIBILITY aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                                         aclrtMemcpyKind kind);
/* The same, enqueued on `stream`; src and dst 64-byte aligned; host to host
 * is not an asynchronous copy (ACL_ERROR_RT_PARAM_INVALID). */
ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
                                              aclrtMemcpyKind kind, aclrtStream stream);
/* A matrix copy: height rows of width bytes, rows dpitch bytes apart at
 * dst and spitch bytes apart at src (pitches >= width); checked as
 * aclrtMemcpy checks, over the (height - 1) * pitch + width bytes each side
 * spans. */
ACL_FUNC_VISIBILITY aclError aclrtMemcpy2d(void *dst, size_t dpitch, const void *src, size_t spitch,
                                           size_t width, size_t height, aclrtMemcpyKind kind);
ACL_FUNC_VISIBILITY aclError aclrtMemcpy2dAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                                                size_t width, size_t height, aclrtMemcpyKind kind,
                                                aclrtStream stream);

/* The device's SoC: that of the last model loaded (libomrt runs a model as
 * the SoC it was compiled for), "Ascend310" before any. NULL before aclInit. */
ACL_FUNC_VISIBILITY const char *aclrtGetSocName(void);

#ifdef __cplusplus
}
#endif

#endif
