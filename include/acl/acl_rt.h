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

typedef enum aclrtMemMallocPolicy {
  ACL_MEM_MALLOC_HUGE_FIRST,
  ACL_MEM_MALLOC_HUGE_ONLY,
  ACL_MEM_MALLOC_NORMAL_ONLY,
  ACL_MEM_MALLOC_HUGE_FIRST_P2P,
  ACL_MEM_MALLOC_HUGE_ONLY_P2P,
  ACL_MEM_MALLOC_NORMAL_ONLY_P2P,
} aclrtMemMallocPolicy;

typedef void *aclrtContext;
typedef void *aclrtStream;

ACL_FUNC_VISIBILITY aclError aclrtGetRunMode(aclrtRunMode *runMode);

/* Devices: only device 0 exists (ACL_ERROR_RT_INVALID_DEVICEID otherwise). */
ACL_FUNC_VISIBILITY aclError aclrtSetDevice(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtResetDevice(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtGetDevice(int32_t *deviceId); /* of the current context */
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceCount(uint32_t *count);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDevice(void); /* every stream of the device */

ACL_FUNC_VISIBILITY aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtDestroyContext(aclrtContext context); /* waits for its streams */
ACL_FUNC_VISIBILITY aclError aclrtSetCurrentContext(aclrtContext context);
ACL_FUNC_VISIBILITY aclError aclrtGetCurrentContext(aclrtContext *context);

/* In the current context. */
ACL_FUNC_VISIBILITY aclError aclrtCreateStream(aclrtStream *stream);
ACL_FUNC_VISIBILITY aclError aclrtDestroyStream(aclrtStream stream); /* waits for its work */
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStream(aclrtStream stream);

/* Device memory: 64-byte aligned, size > 0. */
ACL_FUNC_VISIBILITY aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
ACL_FUNC_VISIBILITY aclError aclrtFree(void *devPtr);
/* Host memory for staging copies: 64-byte aligned, size > 0. */
ACL_FUNC_VISIBILITY aclError aclrtMallocHost(void **hostPtr, size_t size);
ACL_FUNC_VISIBILITY aclError aclrtFreeHost(void *hostPtr);
/* Sets count bytes of device memory (at most maxCount) to (uint8_t)value. */
ACL_FUNC_VISIBILITY aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count);
/* Copies count bytes (at most destMax) in the direction `kind` says; the
 * addresses must be of the kinds it names (device memory: within one
 * aclrtMalloc allocation), else ACL_ERROR_RT_PARAM_INVALID. */
ACL_FUNC_VISIBILITY aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                                         aclrtMemcpyKind kind);
/* The same, enqueued on `stream`; src and dst 64-byte aligned; host to host
 * is not an asynchronous copy (ACL_ERROR_RT_PARAM_INVALID). */
ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
                                              aclrtMemcpyKind kind, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
