/* status.c - diag: the compiler's error context (see status.h). */
#include "status.h"

#include <stdio.h>
#include <string.h>

void diag_init(diag *d) {
  d->code = ST_OK;
  d->msg[0] = '\0';
}

status diag_set(diag *d, status code, const char *fmt, ...) {
  if (d && d->code == ST_OK) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
    d->code = code;
  }
  return code;
}

void diag_prefix(diag *d, const char *fmt, ...) {
  char pre[512], old[sizeof d->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(pre, sizeof pre, fmt, ap);
  va_end(ap);
  memcpy(old, d->msg, sizeof old);
  /* Truncation is fine: a message is one line for a person to read. */
  size_t n = strlen(pre);
  if (n > sizeof d->msg - 3) n = sizeof d->msg - 3;
  memcpy(d->msg, pre, n);
  memcpy(d->msg + n, ": ", 2);
  size_t rest = sizeof d->msg - n - 3;
  size_t m = strlen(old);
  if (m > rest) m = rest;
  memcpy(d->msg + n + 2, old, m);
  d->msg[n + 2 + m] = '\0';
}

const char *status_name(status s) {
  switch (s) {
  case ST_OK: return "ok";
  case ST_ERR_IO: return "I/O error";
  case ST_ERR_PARSE: return "parse error";
  case ST_ERR_INVALID: return "invalid model";
  case ST_ERR_UNSUPPORTED: return "unsupported";
  case ST_ERR_LIMIT: return "limit exceeded";
  case ST_ERR_NOMEM: return "out of memory";
  case ST_ERR_SECURITY: return "security violation";
  }
  return "unknown status";
}
