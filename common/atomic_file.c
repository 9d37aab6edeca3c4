/* atomic_file.c - temp file + fsync + rename (see atomic_file.h).
 *
 * The temporary file is "<dir>/.<base>.<pid>.<n>.tmp", so it is on the same
 * file system as the target (rename is atomic only there) and hidden from
 * casual listings. It is created like mkstemp does (O_CREAT | O_EXCL, so an
 * existing file or symlink is never followed or reused; retried with the
 * next n on a collision) but with mode 0666, so the kernel applies the umask:
 * mkstemp's 0600 would need a chmod from a umask() read, and umask() changes
 * process state other threads see. Every step after creation that fails
 * leads to one cleanup path that closes and unlinks the temporary file; only
 * a failure of the final directory fsync is reported after the rename, when
 * the new contents are already in place.
 */
#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Splits path into a malloc'd directory ("." when there is no slash) and a
 * pointer to the base name inside path. */
static char *dir_of(const char *path, const char **base_out) {
  const char *slash = strrchr(path, '/');
  if (!slash) {
    *base_out = path;
    return strdup(".");
  }
  *base_out = slash + 1;
  size_t n = slash == path ? 1 : (size_t)(slash - path); /* "/x" -> "/" */
  char *dir = malloc(n + 1);
  if (dir) {
    memcpy(dir, path, n);
    dir[n] = '\0';
  }
  return dir;
}

static int write_all(int fd, const void *data, size_t n) {
  const char *p = data;
  while (n > 0) {
    ssize_t k = write(fd, p, n);
    if (k < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

/* Creates a fresh temporary file for `dir`/`base` into tmp (tmp_len bytes). */
static int create_temp(char *tmp, size_t tmp_len, const char *dir, const char *base) {
  static _Atomic unsigned long seq;
  for (int attempt = 0; attempt < 100; attempt++) {
    snprintf(tmp, tmp_len, "%s/.%s.%ld.%lu.tmp", dir, base, (long)getpid(), seq++);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

status atomic_write_file(const char *path, const void *data, size_t n, diag *d) {
  const char *base;
  char *dir = dir_of(path, &base);
  if (!dir) return diag_set(d, ST_ERR_NOMEM, "%s: out of memory", path);
  if (*base == '\0') {
    free(dir);
    return diag_set(d, ST_ERR_IO, "%s: not a file name", path);
  }
  size_t tmp_len = strlen(dir) + strlen(base) + 64;
  char *tmp = malloc(tmp_len);
  if (!tmp) {
    free(dir);
    return diag_set(d, ST_ERR_NOMEM, "%s: out of memory", path);
  }
  status st = ST_OK;
  int fd = create_temp(tmp, tmp_len, dir, base);
  if (fd < 0) {
    st = diag_set(d, ST_ERR_IO, "%s: cannot create a temporary file in %s: %s", path, dir, strerror(errno));
    goto out;
  }
  const char *step = NULL;
  if (write_all(fd, data, n) != 0)
    step = "write";
  else if (fsync(fd) != 0)
    step = "fsync";
  int err = errno;
  if (close(fd) != 0 && !step) step = "close", err = errno;
  if (!step && rename(tmp, path) != 0) step = "rename", err = errno;
  if (step) {
    unlink(tmp);
    st = diag_set(d, ST_ERR_IO, "%s: %s failed: %s", path, step, strerror(err));
    goto out;
  }
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0 || (fsync(dfd) != 0 && errno != EINVAL)) {
    st = diag_set(d, ST_ERR_IO, "%s: written, but syncing directory %s failed: %s", path, dir,
                  strerror(errno));
  }
  if (dfd >= 0) close(dfd);
out:
  free(tmp);
  free(dir);
  return st;
}
