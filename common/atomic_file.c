/* atomic_file.c - an unnamed temporary (or a hidden named one) + fsync +
 * rename (see atomic_file.h), all at once or in steps (begin, write...,
 * commit or abort) for a writer that streams and checks its file.
 *
 * Where the file system has O_TMPFILE (ext4, xfs, btrfs, tmpfs), the data is
 * written into an unnamed file in the target's directory, which the kernel
 * removes if the process dies mid-write (a signal, SIGXFSZ past `ulimit -f`);
 * only once it is complete and synced does it get a name, through linkat of
 * /proc/self/fd/N to a hidden temporary name that rename then moves over the
 * target. Elsewhere (or without /proc) the temporary is named from the start:
 * "<dir>/.<base>.<pid>.<n>.tmp", with <base> cut short so that the name fits
 * NAME_MAX whenever the target's does. (With O_TMPFILE but no /proc, the
 * finished unnamed file is copied into such a named one.) Either way it is on the target's file
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
    int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
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

/* Copies unnamed file `from` into a fresh named temporary (tmp); the new fd,
 * or -1 with errno. For a file system with O_TMPFILE but no /proc to name
 * the file by. */
static int copy_to_named(int from, char *tmp, size_t tmp_len, const char *dir, const char *base) {
  int to = create_temp(tmp, tmp_len, dir, base);
  if (to < 0) return -1;
  char buf[1 << 16];
  ssize_t k = 0;
  for (off_t at = 0; (k = pread(from, buf, sizeof buf, at)) > 0 || (k < 0 && errno == EINTR);
       at += k > 0 ? k : 0)
    if (k > 0 && write_all(to, buf, (size_t)k) != 0) break;
  if (k != 0) {
    int err = errno;
    close(to);
    unlink(tmp);
    errno = err;
    return -1;
  }
  return to;
}

static void release(atomic_file *f) {
  if (f->fd >= 0) close(f->fd);
  if (f->named) unlink(f->tmp);
  free(f->tmp);
  free(f->dir);
  f->fd = -1, f->named = 0, f->tmp = f->dir = NULL;
}

static status fail_step(atomic_file *f, const char *step, int err, diag *d) {
  f->st = diag_set(d, ST_ERR_IO, "%s: %s failed: %s", f->path, step, strerror(err));
  return f->st;
}

status atomic_file_begin(atomic_file *f, const char *path, diag *d) {
  const char *base;
  *f = (atomic_file){.path = path, .fd = -1};
  f->dir = dir_of(path, &base);
  f->base = base;
  f->tmp_len = f->dir ? strlen(f->dir) + strlen(base) + 64 : 0;
  f->tmp = f->dir ? malloc(f->tmp_len) : NULL;
  if (!f->tmp) {
    release(f);
    return f->st = diag_set(d, ST_ERR_NOMEM, "%s: out of memory", path);
  }
  if (*base == '\0') {
    release(f);
    return f->st = diag_set(d, ST_ERR_IO, "%s: not a file name", path);
  }
  /* unnamed until complete and synced: a death mid-write leaves nothing */
  f->fd = open(f->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
  if (f->fd < 0) { /* no O_TMPFILE here: a named temporary from the start */
    f->fd = create_temp(f->tmp, f->tmp_len, f->dir, base);
    f->named = f->fd >= 0;
  }
  if (f->fd < 0) {
    f->st =
        diag_set(d, ST_ERR_IO, "%s: cannot create a temporary file in %s: %s", path, f->dir, strerror(errno));
    release(f);
  }
  return f->st;
}

status atomic_file_write(atomic_file *f, const void *data, size_t n, diag *d) {
  if (f->st) return f->st;
  return write_all(f->fd, data, n) != 0 ? fail_step(f, "write", errno, d) : ST_OK;
}

void atomic_file_abort(atomic_file *f) { release(f); }

status atomic_file_commit(atomic_file *f, diag *d) {
  if (f->st) {
    release(f);
    return f->st;
  }
  const char *base = f->base;
  size_t tmp_len = f->tmp_len;
  if (fsync(f->fd) != 0) fail_step(f, "fsync", errno, d);
  if (!f->st && !f->named && name_unnamed(f->fd, f->tmp, tmp_len, f->dir, base) == 0) f->named = 1;
  if (!f->st && !f->named) { /* no /proc to name it by: copy it into a named one */
    int to = copy_to_named(f->fd, f->tmp, tmp_len, f->dir, base);
    if (to < 0) {
      f->st = diag_set(d, ST_ERR_IO, "%s: cannot create a temporary file in %s: %s", f->path, f->dir,
                       strerror(errno));
    } else {
      close(f->fd);
      f->fd = to, f->named = 1;
      if (fsync(f->fd) != 0) fail_step(f, "fsync", errno, d);
    }
  }
  int fd = f->fd;
  f->fd = -1;
  if (close(fd) != 0 && !f->st) fail_step(f, "close", errno, d);
  if (!f->st && rename(f->tmp, f->path) != 0) fail_step(f, "rename", errno, d);
  if (!f->st) f->named = 0; /* the temporary's name is the target's now */
  status st = f->st;
  if (!st) {
    int dfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || (fsync(dfd) != 0 && errno != EINVAL))
      st = diag_set(d, ST_ERR_IO, "%s: written, but syncing directory %s failed: %s", f->path, f->dir,
                    strerror(errno));
    if (dfd >= 0) close(dfd);
  }
  release(f);
  return st;
}

status atomic_write_file(const char *path, const void *data, size_t n, diag *d) {
  atomic_file f;
  status st = atomic_file_begin(&f, path, d);
  if (!st) atomic_file_write(&f, data, n, d);
  return st ? st : atomic_file_commit(&f, d);
}
