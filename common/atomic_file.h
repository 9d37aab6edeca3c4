/* atomic_file.h - replace a file all at once.
 *
 * atomic_write_file writes `n` bytes to a temporary file in the directory of
 * `path`, fsyncs it, renames it over `path` and fsyncs the directory. Readers
 * see either the old file or the complete new one. On any failure the old
 * file is untouched, the temporary file is removed, and `d` names the path
 * and the system error. The new file gets mode 0666 minus the umask, like a
 * file created with fopen.
 */
#ifndef COMMON_ATOMIC_FILE_H
#define COMMON_ATOMIC_FILE_H

#include <stddef.h>

#include "status.h"

status atomic_write_file(const char *path, const void *data, size_t n, diag *d);

/* The same in steps, for contents written piece by piece and checked before
 * they replace anything: atomic_file_begin opens the temporary, fd (open
 * for reading and writing, e.g. to map what was written) takes the data
 * through atomic_file_write, and atomic_file_commit or atomic_file_abort
 * ends it. Every call after a failure fails too; after commit or abort the
 * struct holds nothing (its strings are freed, fd closed). */
typedef struct atomic_file {
  const char *path, *base; /* the caller's path and its last component, borrowed until commit/abort */
  char *dir, *tmp;         /* owned */
  size_t tmp_len;          /* tmp's capacity */
  int fd;
  int named; /* tmp names the file (no O_TMPFILE here) */
  status st; /* the first failure, sticky */
} atomic_file;

status atomic_file_begin(atomic_file *f, const char *path, diag *d);
status atomic_file_write(atomic_file *f, const void *data, size_t n, diag *d);
status atomic_file_commit(atomic_file *f, diag *d);
void atomic_file_abort(atomic_file *f);

#endif
