/* error.c - libomrt's error reporting: one message buffer per thread.
 *
 * Every failing runtime call records a one-line message with rt_error() and
 * returns its status; the application reads the message back with
 * omrt_last_error() on the same thread, like errno + strerror, but with the
 * detail (file, partition, tensor, task, field) in the text. The buffer is
 * thread-local so concurrent loads and executions never mix messages.
 */
#include <stdarg.h>
#include <stdio.h>

#include "runtime/rt.h"

static _Thread_local char last_error[1024];

omrt_status rt_error(omrt_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return s;
}

const char *omrt_last_error(void) { return last_error; }

const char *omrt_status_string(omrt_status status) {
  switch (status) {
  case OMRT_OK: return "ok";
  case OMRT_ERR_IO: return "I/O error";
  case OMRT_ERR_FORMAT: return "malformed om package";
  case OMRT_ERR_VERSION: return "unsupported om version";
  case OMRT_ERR_CHECKSUM: return "checksum mismatch";
  case OMRT_ERR_ARG: return "invalid argument";
  case OMRT_ERR_NOMEM: return "out of memory";
  case OMRT_ERR_UNSUPPORTED: return "unsupported by this runtime";
  case OMRT_ERR_THREAD: return "thread creation failed";
  case OMRT_ERR_OVERFLOW: return "a task wrote inf or NaN";
  case OMRT_ERR_STOPPED: return "stopped by a task hook";
  }
  return "unknown status";
}
