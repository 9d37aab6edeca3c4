/* status.h - the compiler's one status type and its error context.
 *
 * Every compiler function that can fail returns a `status`; the detail text
 * (file, node name and op type, tensor, field) goes into a `diag` the caller
 * owns, and is read back from it, like sqlite3_errmsg. Libraries never print
 * or exit; the CLI mains do. The runtime has its own public twin, omrt_status
 * in include/omrt.h, because the runtime must not include compiler headers.
 */
#ifndef COMMON_STATUS_H
#define COMMON_STATUS_H

#include <stdarg.h>
#include <stddef.h>

typedef enum status {
  ST_OK = 0,
  ST_ERR_IO,          /* a file could not be opened, read, written or renamed */
  ST_ERR_PARSE,       /* bytes that are not a well-formed ONNX model / IR text / YAML */
  ST_ERR_INVALID,     /* well-formed but wrong: dangling name, cycle, bad attribute, size mismatch */
  ST_ERR_UNSUPPORTED, /* valid ONNX that this compiler does not handle (op, opset, dtype) */
  ST_ERR_LIMIT,       /* a size, rank, count or nesting limit was exceeded */
  ST_ERR_NOMEM,       /* an allocation failed */
  ST_ERR_SECURITY,    /* external data escaping the model directory, symlinks, ... */
} status;

/* Error context. `msg` holds one line, no trailing newline. The first error
 * set wins: later diag_set calls on an already-failed diag keep the first
 * message, because the first failure is the cause. */
typedef struct diag {
  status code;
  char msg[1024];
} diag;

void diag_init(diag *d);
/* Records the error (if none recorded yet) and returns `code`, so callers write
 *   return diag_set(d, ST_ERR_INVALID, "node '%s' (%s): ...", ...);           */
status diag_set(diag *d, status code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Prepends "prefix: " to an existing message (e.g. the file name). */
void diag_prefix(diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *status_name(status s);

#endif
