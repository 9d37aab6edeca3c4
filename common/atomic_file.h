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

#endif
