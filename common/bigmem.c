/* bigmem.c - large zeroed buffers mapped and populated in one go (bigmem.h).
 *
 * Below BIGMEM_MIN_BYTES a buffer comes from posix_memalign and is cleared.
 * From there on it is an anonymous mapping of whole pages that
 * madvise(MADV_POPULATE_WRITE) (Linux 5.14) faults in from inside the kernel;
 * one of 2 MiB or more is also moved to a 2 MiB boundary (mmap reserves
 * 2 MiB of slack, unmapped again) and advised MADV_HUGEPAGE, since a
 * transparent huge page can only back an aligned 2 MiB extent and THP is
 * usually in "madvise" mode. On a kernel without MADV_POPULATE_WRITE the madvise fails with EINVAL and the
 * pages are faulted on first touch as usual; ENOMEM means the memory is not there, which the caller reports.
 * The free needs the size because a mapping has no header. The fault-injection hook (fault.h) covers both
 * paths.
 *
 * Why huge pages: on the virtual machines this was measured on (shadow page
 * tables), the first user-space touch of each 4 KiB page costs a trip to the
 * hypervisor even when the kernel has populated it, ~0.5 ms per MB; a 2 MiB
 * page takes one trip.
 */
#include "bigmem.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fault.h"

#define HUGE_PAGE_BYTES ((size_t)2 << 20)

static size_t page_round(size_t bytes) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  return (bytes + page - 1) & ~(page - 1);
}

static void *map(size_t bytes, int populate) {
  if (FAULT_INJECT(FAULT_ALLOC)) return NULL;
  if (bytes < BIGMEM_MIN_BYTES) {
    void *p;
    if (posix_memalign(&p, 64, bytes ? bytes : 1) != 0) return NULL;
    return memset(p, 0, bytes);
  }
  if (bytes > SIZE_MAX / 2) return NULL;
  size_t len = page_round(bytes);
  size_t slack = len >= HUGE_PAGE_BYTES ? HUGE_PAGE_BYTES : 0;
  uint8_t *raw = mmap(NULL, len + slack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return NULL;
  uint8_t *p = raw;
  if (slack) {
    p = (uint8_t *)(((uintptr_t)raw + HUGE_PAGE_BYTES - 1) & ~(uintptr_t)(HUGE_PAGE_BYTES - 1));
    if (p > raw) munmap(raw, (size_t)(p - raw));
    munmap(p + len, (size_t)(raw + slack - p));
    madvise(p, len, MADV_HUGEPAGE);
  }
  if (populate && madvise(p, len, MADV_POPULATE_WRITE) != 0 && errno == ENOMEM) {
    munmap(p, len);
    return NULL;
  }
  return p;
}

void *bigmem_alloc(size_t bytes) { return map(bytes, 1); }

void *bigmem_reserve(size_t bytes) { return map(bytes, 0); }

void bigmem_populate(void *p, size_t bytes) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  uintptr_t start = (uintptr_t)p & ~(uintptr_t)(page - 1), end = (uintptr_t)p + bytes;
  if (bytes) madvise((void *)start, page_round(end - start), MADV_POPULATE_WRITE);
}

void bigmem_discard(void *p, size_t bytes) {
  uintptr_t start = ((uintptr_t)p + HUGE_PAGE_BYTES - 1) & ~(uintptr_t)(HUGE_PAGE_BYTES - 1);
  uintptr_t end = ((uintptr_t)p + bytes) & ~(uintptr_t)(HUGE_PAGE_BYTES - 1);
  if (end > start) madvise((void *)start, end - start, MADV_DONTNEED);
}

void bigmem_small_pages(void *p, size_t bytes) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  uintptr_t start = ((uintptr_t)p + page - 1) & ~(uintptr_t)(page - 1);
  uintptr_t end = ((uintptr_t)p + bytes) & ~(uintptr_t)(page - 1);
  if (bytes >= BIGMEM_MIN_BYTES && end > start) madvise((void *)start, end - start, MADV_NOHUGEPAGE);
}

void bigmem_free(void *p, size_t bytes) {
  if (bytes < BIGMEM_MIN_BYTES)
    free(p);
  else if (p)
    munmap(p, page_round(bytes));
}
