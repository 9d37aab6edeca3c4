/* acl_err.c - AscendCL's error reporting: the messages of failed calls,
 * per thread (or per process: aclInit's err_msg_mode "1"), read (and
 * forgotten) with aclGetRecentErrMsg.
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
#include <stdlib.h>
#include <string.h>

#include "acl/acl_internal.h"

enum { MSG_BYTES = 4096 };
static _Thread_local char pending[MSG_BYTES]; /* newest first, '\n' between lines */
static _Thread_local char handed[MSG_BYTES];
static _Thread_local aclError last_code; /* aclrtPeekAtLastError / aclrtGetLastError */
/* err_msg_mode "1" (aclInit's configuration): one pile for the process. */
static _Atomic int process_mode;
static pthread_mutex_t shared_mu = PTHREAD_MUTEX_INITIALIZER;
static char shared[MSG_BYTES];

void acl_set_err_msg_process(int on) { process_mode = on; }

/* Puts line on top of pile (MSG_BYTES), dropping the oldest whole lines that no longer fit. */
static void push(char *pile, const char *line) {
  size_t n = strlen(line), old = strlen(pile), keep = old; /* n < 1024 */
  if (keep > MSG_BYTES - 2 - n) {                          /* the older lines that still fit, whole */
    keep = MSG_BYTES - 2 - n;
    while (keep && pile[keep] != '\n')
      keep--;
  }
  if (keep) {
    memmove(pile + n + 1, pile, keep);
    pile[n] = '\n';
  }
  memcpy(pile, line, n);
  pile[keep ? n + 1 + keep : n] = '\0';
}

aclError acl_fail(aclError code, const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (process_mode) {
    pthread_mutex_lock(&shared_mu);
    push(shared, line);
    pthread_mutex_unlock(&shared_mu);
  } else {
    push(pending, line);
  }
  last_code = code;
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
  int shared_pile = process_mode;
  char *pile = shared_pile ? shared : pending;
  if (shared_pile) pthread_mutex_lock(&shared_mu);
  int some = pile[0] != '\0';
  if (some) memcpy(handed, pile, sizeof handed);
  pile[0] = '\0';
  if (shared_pile) pthread_mutex_unlock(&shared_mu);
  return some ? handed : NULL;
}

aclError aclrtPeekAtLastError(aclrtLastErrLevel level) {
  (void)level;
  return last_code;
}

aclError aclrtGetLastError(aclrtLastErrLevel level) {
  (void)level;
  aclError e = last_code;
  last_code = ACL_SUCCESS;
  return e;
}

/* ASCEND_GLOBAL_LOG_LEVEL (0 debug .. 3 error, the default; 4 none) picks
 * what reaches stderr, one line a message. */
void aclAppLog(aclLogLevel logLevel, const char *func, const char *file, uint32_t line, const char *fmt,
               ...) {
  static const char *const names[] = {"DEBUG", "INFO", "WARNING", "ERROR"};
  const char *env = getenv("ASCEND_GLOBAL_LOG_LEVEL");
  int threshold = env && *env >= '0' && *env <= '4' && !env[1] ? *env - '0' : ACL_ERROR;
  if ((int)logLevel < threshold || (int)logLevel < ACL_DEBUG || (int)logLevel > ACL_ERROR || !fmt) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "[%s] %s(%s:%u): %s\n", names[logLevel], func ? func : "?", file ? file : "?",
          (unsigned)line, msg);
}

/* The host's floats are IEEE (inf and NaN); bf16 models and
 * single-operator compilation are not provided. */
aclError aclGetCannAttributeList(const aclCannAttr **cannAttrList, size_t *num) {
  static const aclCannAttr available[] = {ACL_CANN_ATTR_INF_NAN};
  if (!cannAttrList || !num)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "aclGetCannAttributeList: %s is NULL",
                    !num ? "num" : "cannAttrList");
  *cannAttrList = available, *num = sizeof available / sizeof *available;
  return ACL_SUCCESS;
}

aclError aclGetCannAttribute(aclCannAttr cannAttr, int32_t *value) {
  if (!value) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclGetCannAttribute: value is NULL");
  if (cannAttr < ACL_CANN_ATTR_INF_NAN || cannAttr > ACL_CANN_ATTR_JIT_COMPILE)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "aclGetCannAttribute: cannAttr %d is no aclCannAttr",
                    (int)cannAttr);
  *value = cannAttr == ACL_CANN_ATTR_INF_NAN;
  return ACL_SUCCESS;
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
