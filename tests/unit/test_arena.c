/* test_arena.c - the compiler's allocators: bigmem buffers are zeroed and
 * aligned on both sides of BIGMEM_MIN_BYTES; arena allocations are zeroed
 * (no memset: fresh blocks are) and aligned whether they land in the first
 * small block, a grown one or a block of their own; the budget refuses what
 * would pass it. */
#include <stdint.h>
#include <string.h>

#include "common/arena.h"
#include "common/bigmem.h"
#include "support.h"

static int all_zero(const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++)
    if (c[i]) return 0;
  return 1;
}

static void test_bigmem(void) {
  const size_t sizes[] = {0, 1, 100, BIGMEM_MIN_BYTES - 1, BIGMEM_MIN_BYTES, 3u << 20, (5u << 20) + 7};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    unsigned char *p = bigmem_alloc(sizes[i]);
    CHECK(p != NULL);
    if (!p) continue;
    CHECK((uintptr_t)p % 64 == 0);
    CHECK(all_zero(p, sizes[i]));
    if (sizes[i]) p[0] = p[sizes[i] - 1] = 1;
    bigmem_free(p, sizes[i]);
  }
  bigmem_free(NULL, 0);
  bigmem_free(NULL, 1u << 20);
}

static void test_alloc(void) {
  arena a;
  arena_init(&a, 0);
  /* small ones fill the first blocks, then grown ones; some big ones between */
  int ok = 1;
  for (int i = 0; i < 3000; i++) {
    size_t n = (size_t)(i * 37 % 1000) + 1;
    if (i % 500 == 499) n = (size_t)(3 << 20) + (size_t)i;
    unsigned char *p = i % 3 ? arena_alloc(&a, n) : arena_alloc_aligned(&a, n, 64);
    ok &= p != NULL && (uintptr_t)p % (i % 3 ? 16 : 64) == 0 && all_zero(p, n);
    if (p) memset(p, 0xff, n);
  }
  CHECK(ok);
  CHECK(arena_array(&a, SIZE_MAX / 2, 4) == NULL);
  int *v = NULL, cap = 0;
  for (int i = 0; i < 100; i++) {
    CHECK_EQ_INT(arena_grow(&a, (void **)&v, &cap, i, sizeof *v), 0);
    v[i] = i;
  }
  CHECK(v[0] == 0 && v[99] == 99);
  arena_free(&a);
  CHECK_EQ_INT(a.used_bytes, 0);
}

static void test_budget(void) {
  arena a;
  arena_init(&a, 8u << 20);
  void *small = arena_alloc(&a, 1000);
  void *big = arena_alloc(&a, 5u << 20);
  CHECK(small && big);
  CHECK(arena_alloc(&a, 4u << 20) == NULL); /* over the budget */
  CHECK(arena_alloc(&a, 2u << 20) != NULL);
  arena_free(&a);
}

int main(void) {
  test_bigmem();
  test_alloc();
  test_budget();
  return test_summary("test_arena");
}
