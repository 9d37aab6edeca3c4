/* rt_error_codes.h - the runtime's (ACL_ERROR_RT_*) return codes that
 * libascendcl returns, with the values AscendCL documents. A subset: the
 * codes of the device, context, stream and memory checks this software NPU
 * makes. The rest of aclError (ACL_ERROR_*) is in acl_base.h. */
#ifndef ACL_ERROR_CODES_RT_ERROR_CODES_H
#define ACL_ERROR_CODES_RT_ERROR_CODES_H

#define ACL_RT_SUCCESS 0
#define ACL_ERROR_RT_PARAM_INVALID 107000    /* an argument the runtime cannot use (memory kind, range) */
#define ACL_ERROR_RT_INVALID_DEVICEID 107001 /* no such device */
#define ACL_ERROR_RT_CONTEXT_NULL 107002     /* the calling thread has no current context */
#define ACL_ERROR_RT_STREAM_CONTEXT 107003   /* the stream is not in the current context */
#define ACL_ERROR_RT_MODEL_CONTEXT 107004    /* the model is not in the current context */
#define ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID                                                                 \
  107006                                             /* an event without a timestamp (aclrtEventElapsedTime) \
                                                      */
#define ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL 107007 /* the end event completed before the start event */
#define ACL_ERROR_RT_STREAM_SUBSCRIBE 107011 /* the stream is subscribed already (aclrtSubscribeReport) */
#define ACL_ERROR_RT_THREAD_SUBSCRIBE 107012 /* the thread has no subscribed stream (aclrtProcessReport) */
#define ACL_ERROR_RT_STREAM_NO_CB_REG                                                                        \
  107015 /* no thread is subscribed to the stream (aclrtLaunchCallback)                                      \
          */
#define ACL_ERROR_RT_WAIT_TIMEOUT                                                                            \
  107019 /* a stream waited for an event longer than aclrtSetOpWaitTimeout                                   \
          */
#define ACL_ERROR_RT_FEATURE_NOT_SUPPORT 207000 /* not supported by this runtime */
#define ACL_ERROR_RT_MEMORY_ALLOCATION 207001   /* out of (device) memory */
#define ACL_ERROR_RT_MEMORY_FREE 207002         /* freeing memory that is not an allocation of this kind */
#define ACL_ERROR_RT_EVENT_NOT_COMPLETE 507006  /* the event has not completed (aclrtEventElapsedTime) */
#define ACL_ERROR_RT_REPORT_TIMEOUT 507012      /* no callback came within aclrtProcessReport's timeout */
#define ACL_ERROR_RT_STREAM_SYNC_TIMEOUT 507046 /* aclrtSynchronizeStreamWithTimeout gave up */
#define ACL_ERROR_RT_EVENT_SYNC_TIMEOUT 507047  /* aclrtSynchronizeEventWithTimeout gave up */

#endif
