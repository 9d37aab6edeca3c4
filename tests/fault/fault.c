/* fault.c - the fault injector linked into atc_fi (tests/CMakeLists.txt).
 *
 * ATC_FAULT=KIND:N makes the Nth call (1-based) of KIND fail, once:
 *   alloc   arena_alloc_aligned and bigmem_alloc (common/fault.h hooks) and
 *           malloc, calloc, realloc called from the compiler's own code:
 *           returns NULL, ENOMEM
 *   write   write(2): returns -1, EIO
 *   fsync   fsync(2): returns -1, EIO
 *   rename  rename(3): returns -1, EIO
 *   link    linkat(2): returns -1, ENOENT (as without /proc): the write
 *           falls back to a named temporary file
 * The libc functions are wrapped with ld --wrap=NAME: calls from atc's object
 * files go to __wrap_NAME here, calls inside libc and other shared libraries
 * (libyaml, protobuf-c's own unpacker uses our allocator) are not counted.
 * When the fault fires, one line "atc_fi: injected KIND failure at call N" is
 * written to stderr, so tests/fault_injection.py can tell a run in which the
 * fault fired from one that finished before reaching call N (the end of its
 * loop); ATC_FAULT_TRACE=1 adds a backtrace of the failing call (link with
 * -rdynamic or read it with addr2line). Without ATC_FAULT nothing fails and atc_fi behaves as atc.
 */
#include <errno.h>
#include <execinfo.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fault.h"

static const char *const kind_names[FAULT_KINDS] = {"alloc", "write", "fsync", "rename", "link"};

static _Atomic long counts[FAULT_KINDS];
static int armed_kind = -1; /* parsed from ATC_FAULT once */
static long armed_at;
static atomic_int parsed;

ssize_t __real_write(int fd, const void *buf, size_t n);

static void parse_env(void) {
  const char *spec = getenv("ATC_FAULT");
  if (spec) {
    const char *colon = strchr(spec, ':');
    for (int k = 0; colon && k < FAULT_KINDS; k++)
      if ((size_t)(colon - spec) == strlen(kind_names[k]) &&
          !strncmp(spec, kind_names[k], (size_t)(colon - spec))) {
        armed_kind = k;
        armed_at = strtol(colon + 1, NULL, 10);
      }
  }
  atomic_store(&parsed, 1);
}

int fault_inject(fault_kind kind) {
  if (!atomic_load(&parsed)) parse_env();
  long n = ++counts[kind];
  if ((int)kind != armed_kind || n != armed_at) return 0;
  char line[96];
  int len = snprintf(line, sizeof line, "atc_fi: injected %s failure at call %ld\n", kind_names[kind], n);
  if (len > 0) __real_write(2, line, (size_t)len);
  if (getenv("ATC_FAULT_TRACE")) { /* where the failing call came from, for debugging */
    void *frames[32];
    backtrace_symbols_fd(frames, backtrace(frames, 32), 2);
  }
  return 1;
}

void *__real_malloc(size_t n);
void *__real_calloc(size_t count, size_t n);
void *__real_realloc(void *p, size_t n);
int __real_fsync(int fd);
int __real_rename(const char *from, const char *to);

void *__wrap_malloc(size_t n) {
  if (fault_inject(FAULT_ALLOC)) return errno = ENOMEM, NULL;
  return __real_malloc(n);
}

void *__wrap_calloc(size_t count, size_t n) {
  if (fault_inject(FAULT_ALLOC)) return errno = ENOMEM, NULL;
  return __real_calloc(count, n);
}

void *__wrap_realloc(void *p, size_t n) {
  if (fault_inject(FAULT_ALLOC)) return errno = ENOMEM, NULL;
  return __real_realloc(p, n);
}

ssize_t __wrap_write(int fd, const void *buf, size_t n) {
  if (fault_inject(FAULT_WRITE)) return errno = EIO, -1;
  return __real_write(fd, buf, n);
}

int __wrap_fsync(int fd) {
  if (fault_inject(FAULT_FSYNC)) return errno = EIO, -1;
  return __real_fsync(fd);
}

int __wrap_rename(const char *from, const char *to) {
  if (fault_inject(FAULT_RENAME)) return errno = EIO, -1;
  return __real_rename(from, to);
}

int __real_linkat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, int flags);
int __wrap_linkat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, int flags) {
  if (fault_inject(FAULT_LINK)) return errno = ENOENT, -1;
  return __real_linkat(olddirfd, oldpath, newdirfd, newpath, flags);
}
