/* acl_err.c - AscendCL's error reporting: the messages of failed calls,
 * per thread, read (and forgotten) with aclGetRecentErrMsg.
 *
 * Every failing call records one line naming the call and the argument
 * ("aclrtMemcpy: dst 0x... is not device memory ...") and returns its
 * aclError. Lines pile up, newest first, until aclGetRecentErrMsg hands
 * them over in a second buffer (valid until its next call on the thread,
 * as AscendCL documents) and clears the pile; when the pile is full the
 * oldest lines are dropped.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "acl/acl_internal.h"

enum { MSG_BYTES = 4096 };
static _Thread_local char pending[MSG_BYTES]; /* newest first, '\n' between lines */
static _Thread_local char handed[MSG_BYTES];

aclError acl_fail(aclError code, const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  size_t n = strlen(line), old = strlen(pending), keep = old; /* n < 1024 */
  if (keep > MSG_BYTES - 2 - n) {                             /* the older lines that still fit, whole */
    keep = MSG_BYTES - 2 - n;
    while (keep && pending[keep] != '\n')
      keep--;
  }
  if (keep) {
    memmove(pending + n + 1, pending, keep);
    pending[n] = '\n';
  }
  memcpy(pending, line, n);
  pending[keep ? n + 1 + keep : n] = '\0';
  return code;
}

aclError acl_unsupported(const char *call, const char *reason_fmt, ...) {
  aclError e = acl_enter(call);
  if (e) return e;
  acl_leave();
  char reason[768];
  va_list ap;
  va_start(ap, reason_fmt);
  vsnprintf(reason, sizeof reason, reason_fmt, ap);
  va_end(ap);
  return acl_fail(ACL_ERROR_FEATURE_UNSUPPORTED, "%s: %s", call, reason);
}

const char *aclGetRecentErrMsg(void) {
  if (!pending[0]) return NULL;
  memcpy(handed, pending, sizeof handed);
  pending[0] = '\0';
  return handed;
}

aclError acl_from_omrt(omrt_status s) {
  switch (s) {
  case OMRT_OK: return ACL_SUCCESS;
  case OMRT_ERR_IO: return ACL_ERROR_READ_MODEL_FAILURE;
  case OMRT_ERR_FORMAT:
  case OMRT_ERR_CHECKSUM: return ACL_ERROR_PARSE_MODEL;
  case OMRT_ERR_VERSION: return ACL_ERROR_DESERIALIZE_MODEL;
  case OMRT_ERR_ARG: return ACL_ERROR_INVALID_PARAM;
  case OMRT_ERR_NOMEM: return ACL_ERROR_BAD_ALLOC;
  case OMRT_ERR_UNSUPPORTED: return ACL_ERROR_FEATURE_UNSUPPORTED;
  case OMRT_ERR_THREAD:
  case OMRT_ERR_OVERFLOW:
  case OMRT_ERR_STOPPED: return ACL_ERROR_RT_FAILURE;
  }
  return ACL_ERROR_INTERNAL_ERROR;
}
