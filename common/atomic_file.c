/* atomic_file.c - an unnamed temporary (or a hidden named one) + fsync +
 * rename (see atomic_file.h).
 *
 * Where the file system has O_TMPFILE (ext4, xfs, btrfs, tmpfs), the data is
 * written into an unnamed file in the target's directory, which the kernel
 * removes if the process dies mid-write (a signal, SIGXFSZ past `ulimit -f`);
 * only once it is complete and synced does it get a name, through linkat of
 * /proc/self/fd/N to a hidden temporary name that rename then moves over the
 * target. Elsewhere (or without /proc) the temporary is named from the start:
 * "<dir>/.<base>.<pid>.<n>.tmp", with <base> cut short so that the name fits
 * NAME_MAX whenever the target's does. Either way it is on the target's file
 * system (rename is atomic only there) and created like mkstemp does
 * (O_CREAT | O_EXCL, so an existing file or symlink is never followed or
 * reused; retried with the next n on a collision) but with mode 0666, so the
 * kernel applies the umask: mkstemp's 0600 would need a chmod from a umask()
 * read, and umask() changes process state other threads see. Every step
 * after creation that fails leads to one cleanup path that closes and
 * unlinks what has a name; only a failure of the final directory fsync is
 * reported after the rename, when the new contents are already in place.
 */
#define _GNU_SOURCE /* O_TMPFILE, linkat */
#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

/* The next temporary name for `dir`/`base` into tmp (tmp_len bytes):
 * "<dir>/.<base>.<pid>.<n>.tmp", base cut to keep the name within NAME_MAX. */
static void temp_name(char *tmp, size_t tmp_len, const char *dir, const char *base) {
  static _Atomic unsigned long seq;
  char tail[64];
  int tl = snprintf(tail, sizeof tail, ".%ld.%lu.tmp", (long)getpid(), seq++);
  size_t room = NAME_MAX - 1 - (size_t)tl, bl = strlen(base);
  snprintf(tmp, tmp_len, "%s/.%.*s%s", dir, (int)(bl < room ? bl : room), base, tail);
}

/* Creates a fresh named temporary file for `dir`/`base` into tmp (tmp_len bytes). */
static int create_temp(char *tmp, size_t tmp_len, const char *dir, const char *base) {
  for (int attempt = 0; attempt < 100; attempt++) {
    temp_name(tmp, tmp_len, dir, base);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

/* Gives unnamed file fd (O_TMPFILE, still open) a temporary name into tmp.
 * 0 on success; -1 with errno, e.g. when /proc is not mounted. */
static int name_unnamed(int fd, char *tmp, size_t tmp_len, const char *dir, const char *base) {
  char self[64];
  snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
  for (int attempt = 0; attempt < 100; attempt++) {
    temp_name(tmp, tmp_len, dir, base);
    if (linkat(AT_FDCWD, self, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0) return 0;
    if (errno != EEXIST) return -1;
  }
  return -1;
}

/* Writes and syncs fd; NULL, or the failed step's name with *err set. */
static const char *write_sync(int fd, const void *data, size_t n, int *err) {
  const char *step = write_all(fd, data, n) != 0 ? "write" : fsync(fd) != 0 ? "fsync" : NULL;
  *err = errno;
  return step;
}

/* Closes fd; keeps an earlier failure, else reports close's. */
static const char *close_step(int fd, const char *step, int *err) {
  if (close(fd) != 0 && !step) step = "close", *err = errno;
  return step;
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
  const char *step = NULL;
  int err = 0, named = 0;
  int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  if (fd >= 0) { /* unnamed until complete and synced: a death mid-write leaves nothing */
    step = write_sync(fd, data, n, &err);
    if (!step) named = name_unnamed(fd, tmp, tmp_len, dir, base) == 0;
    step = close_step(fd, step, &err);
    if (step && named) unlink(tmp), named = 0;
  }
  if (!step && !named) { /* no O_TMPFILE here (or no /proc): a named temporary from the start */
    fd = create_temp(tmp, tmp_len, dir, base);
    if (fd < 0) {
      st = diag_set(d, ST_ERR_IO, "%s: cannot create a temporary file in %s: %s", path, dir, strerror(errno));
      goto out;
    }
    named = 1;
    step = close_step(fd, write_sync(fd, data, n, &err), &err);
  }
  if (!step && rename(tmp, path) != 0) step = "rename", err = errno;
  if (step) {
    if (named) unlink(tmp);
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
