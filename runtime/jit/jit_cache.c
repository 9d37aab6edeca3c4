/* jit_cache.c - the on-disk cache of compiled vector programs (contract and
 * file layout in jit_cache.h).
 *
 * Entries are named <16 hex digits of FNV-1a-64 of the key>.o in the cache
 * directory. Reading opens with O_NOFOLLOW and checks the open file (fstat),
 * so what is validated is what is read; the whole file is read into memory
 * and checked before any of it is used. Writing goes through a mkstemp file
 * in the same directory (mode 0600), fsync, then rename.
 */
#include "runtime/jit/jit_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/crc32c.h"

enum { HEADER = 32, VERSION = 1 };
static const char magic[8] = {'O', 'M', 'R', 'T', 'J', 'I', 'T', 'C'};

static uint64_t fnv1a(const void *p, size_t n) {
  const uint8_t *s = p;
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++)
    h = (h ^ s[i]) * 0x100000001b3ull;
  return h;
}

static void put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++)
    v |= (uint32_t)p[i] << (8 * i);
  return v;
}
static uint64_t get64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* dir/<hash>.o into path[0..n); -1 when it does not fit. */
static int entry_path(char *path, size_t n, const char *dir, const void *key, size_t key_n) {
  int len = snprintf(path, n, "%s/%016llx.o", dir, (unsigned long long)fnv1a(key, key_n));
  return len < 0 || (size_t)len >= n ? -1 : 0;
}

/* Owned by us and writable by nobody else. */
static int private_to_us(const struct stat *st) { return st->st_uid == geteuid() && !(st->st_mode & 022); }

int jitc_dir_ok(const char *dir, char *why, size_t why_n) {
  struct stat st;
  if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
    snprintf(why, why_n, "cannot create '%s': %s", dir, strerror(errno));
    return -1;
  }
  if (stat(dir, &st) != 0) {
    snprintf(why, why_n, "cannot stat '%s': %s", dir, strerror(errno));
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) {
    snprintf(why, why_n, "'%s' is not a directory", dir);
    return -1;
  }
  if (!private_to_us(&st)) {
    snprintf(why, why_n, "'%s' must be owned by the current user and not writable by group or others", dir);
    return -1;
  }
  return 0;
}

void *jitc_load(const char *dir, const void *key, size_t key_n, size_t *size_out) {
  char path[4096];
  struct stat st;
  if (entry_path(path, sizeof path, dir, key, key_n) || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) ||
      !private_to_us(&st))
    return NULL;
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return NULL;
  uint8_t *buf = NULL;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !private_to_us(&st) || st.st_size < HEADER ||
      st.st_size > JITC_MAX_FILE || !(buf = malloc((size_t)st.st_size))) {
    close(fd);
    return NULL;
  }
  size_t size = (size_t)st.st_size, got = 0;
  while (got < size) {
    ssize_t r = read(fd, buf + got, size - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fd);
  if (got != size) {
    free(buf);
    return NULL;
  }
  /* The header, its checksum, the lengths (which must add up to the file),
   * the key and the body's checksum, in that order. */
  uint32_t klen = get32(buf + 12);
  uint64_t olen = get64(buf + 16);
  if (memcmp(buf, magic, sizeof magic) != 0 || get32(buf + 8) != VERSION ||
      get32(buf + 28) != crc32c(0, buf, 28) || klen != key_n || olen == 0 || olen > size ||
      (uint64_t)HEADER + klen + olen != size || memcmp(buf + HEADER, key, key_n) != 0 ||
      get32(buf + 24) != crc32c(0, buf + HEADER, size - HEADER)) {
    free(buf);
    return NULL;
  }
  memmove(buf, buf + HEADER + key_n, (size_t)olen);
  *size_out = (size_t)olen;
  return buf;
}

static int write_all(int fd, const void *p, size_t n) {
  const uint8_t *s = p;
  while (n) {
    ssize_t w = write(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    s += w, n -= (size_t)w;
  }
  return 0;
}

int jitc_store(const char *dir, const void *key, size_t key_n, const void *obj, size_t obj_n) {
  char path[4096], tmp[4096];
  if ((uint64_t)HEADER + key_n + obj_n > JITC_MAX_FILE || key_n > UINT32_MAX ||
      entry_path(path, sizeof path, dir, key, key_n))
    return -1;
  int len = snprintf(tmp, sizeof tmp, "%s/.tmp-XXXXXX", dir);
  if (len < 0 || (size_t)len >= sizeof tmp) return -1;
  int fd = mkstemp(tmp); /* mode 0600 */
  if (fd < 0) return -1;
  uint8_t h[HEADER];
  memcpy(h, magic, sizeof magic);
  put32(h + 8, VERSION);
  put32(h + 12, (uint32_t)key_n);
  put64(h + 16, obj_n);
  put32(h + 24, crc32c(crc32c(0, key, key_n), obj, obj_n));
  put32(h + 28, crc32c(0, h, 28));
  int ok = write_all(fd, h, sizeof h) == 0 && write_all(fd, key, key_n) == 0 &&
           write_all(fd, obj, obj_n) == 0 && fsync(fd) == 0;
  ok = close(fd) == 0 && ok;
  if (!ok || rename(tmp, path) != 0) {
    unlink(tmp);
    return -1;
  }
  return 0;
}
