/* rt_error_codes.h - the runtime's (ACL_ERROR_RT_*) return codes that
 * libascendcl returns, with the values AscendCL documents. A subset: the
 * codes of the device, context, stream and memory checks this software NPU
 * makes. The rest of aclError (ACL_ERROR_*) is in acl_base.h. */
#ifndef ACL_ERROR_CODES_RT_ERROR_CODES_H
#define ACL_ERROR_CODES_RT_ERROR_CODES_H

#define ACL_RT_SUCCESS 0
#define ACL_ERROR_RT_PARAM_INVALID 107000       /* an argument the runtime cannot use (memory kind, range) */
#define ACL_ERROR_RT_INVALID_DEVICEID 107001    /* no such device */
#define ACL_ERROR_RT_CONTEXT_NULL 107002        /* the calling thread has no current context */
#define ACL_ERROR_RT_STREAM_CONTEXT 107003      /* the stream is not in the current context */
#define ACL_ERROR_RT_MODEL_CONTEXT 107004       /* the model is not in the current context */
#define ACL_ERROR_RT_FEATURE_NOT_SUPPORT 207000 /* not supported by this runtime */
#define ACL_ERROR_RT_MEMORY_ALLOCATION 207001   /* out of (device) memory */
#define ACL_ERROR_RT_MEMORY_FREE 207002         /* freeing memory that is not an allocation of this kind */

#endif
