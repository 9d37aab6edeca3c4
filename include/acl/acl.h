/* acl.h - AscendCL, the Ascend runtime API, on the software Da Vinci NPU:
 * libascendcl (-lascendcl) implements this subset of AscendCL over libomrt
 * (include/omrt.h), so an inference application written for CANN builds
 * and runs unchanged without the chip:
 *
 *   aclInit(NULL);  aclrtSetDevice(0);  aclrtCreateContext(&ctx, 0);  aclrtCreateStream(&stream);
 *   aclmdlQuerySize("m.om", &work, &weight);  aclrtMalloc(&workPtr, work, ...);  ...
 *   aclmdlLoadFromFileWithMem("m.om", &id, workPtr, work, weightPtr, weight);
 *   aclmdlGetDesc(desc, id);  ...datasets of aclrtMalloc'd buffers...
 *   aclrtMemcpy(in, size, host, size, ACL_MEMCPY_HOST_TO_DEVICE);
 *   aclmdlExecute(id, input, output);   (or aclmdlExecuteAsync + aclrtSynchronizeStream)
 *   aclrtMemcpy(host, size, out, size, ACL_MEMCPY_DEVICE_TO_HOST);
 *   aclmdlUnload(id);  ...  aclrtResetDevice(0);  aclFinalize();
 *
 * acl_base.h: errors, data types, formats, data buffers, tensor
 * descriptions; acl_rt.h: device, contexts, streams, events, callbacks,
 * memory; acl_mdl.h: models and datasets; acl_op.h: single operators
 * (op models of atc --singleop); acl_prof.h and acl_dump.h (included on
 * their own, as in AscendCL): profiling and the dump's callback.
 *
 * Errors: every call returns an aclError (AscendCL's codes); the message,
 * naming the call and the argument, is read with aclGetRecentErrMsg on the
 * same thread. Every call but aclInit, aclGetRecentErrMsg, aclrtGetVersion,
 * the data-buffer, dataset, description and data-type helpers needs aclInit
 * first (ACL_ERROR_UNINITIALIZE).
 *
 * Threads: calls may come from any thread; the current context is per
 * thread. A model may be run from several threads; its runs take turns.
 */
#ifndef INC_EXTERNAL_ACL_ACL_H_
#define INC_EXTERNAL_ACL_ACL_H_

#include "acl_base.h"
#include "acl_mdl.h"
#include "acl_op.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Once per process until aclFinalize (ACL_ERROR_REPEAT_INITIALIZE). configPath
 * may be NULL; a file given must be readable (ACL_ERROR_INVALID_FILE) JSON
 * (ACL_ERROR_PARSE_FILE): "err_msg_mode" "1" makes aclGetRecentErrMsg
 * report the process's failures, "defaultDevice" {"default_device": "0"}
 * gives threads without a context device 0's default one; a "dump"
 * section with a dump_list dumps the models it selects (as aclmdlSetDump;
 * ACL_ERROR_INVALID_DUMP_CONFIG naming a bad key), a "profiler" section
 * with "switch" "on" profiles every execution until aclFinalize writes its
 * op summary into "output" (acl_prof.h); other keys are ignored. */
ACL_FUNC_VISIBILITY aclError aclInit(const char *configPath);
/* Releases every resource still held (streams are drained, models unloaded,
 * memory freed); ACL_ERROR_REPEAT_FINALIZE without aclInit. */
ACL_FUNC_VISIBILITY aclError aclFinalize(void);

/* The version of libascendcl: libomrt's (OMRT_VERSION_*). */
ACL_FUNC_VISIBILITY aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion,
                                             int32_t *patchVersion);

/* The messages of the calls that failed on this thread (with aclInit's
 * "err_msg_mode" "1": in the process) since the last call, newest first,
 * one a line; then forgets them. NULL when there are none. Valid until the
 * next aclGetRecentErrMsg on the thread. */
ACL_FUNC_VISIBILITY const char *aclGetRecentErrMsg(void);

#ifdef __cplusplus
}
#endif

#endif
