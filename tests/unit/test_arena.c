/* test_arena.c - the compiler's allocators: bigmem buffers are zeroed and
 * aligned on both sides of BIGMEM_MIN_BYTES; arena allocations are zeroed
 * (no memset: fresh blocks are) and aligned whether they land in the first
 * small block, a grown one or a block of their own; the budget refuses what
 * would pass it; arena_release gives a big allocation back (and its bytes to
 * the budget) and ignores every other pointer; ir_value_replace_data and
 * ir_graph_compact give a big payload back unless another value shares it. */
#include <stdint.h>
#include <string.h>

#include "common/arena.h"
#include "common/bigmem.h"
#include "ir/ir.h"
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

static void test_budget_release(void) {
  arena a;
  arena_init(&a, 8u << 20);
  void *small = arena_alloc(&a, 1000);
  void *big = arena_alloc(&a, 5u << 20);
  CHECK(small && big);
  CHECK(arena_alloc(&a, 4u << 20) == NULL); /* over the budget */
  size_t used = a.used_bytes;
  arena_release(&a, small); /* not a block of its own: kept */
  CHECK_EQ_INT(a.used_bytes, used);
  arena_release(&a, big);
  CHECK_EQ_INT(a.used_bytes, used - (5u << 20));
  arena_release(&a, big); /* already gone: nothing happens */
  CHECK_EQ_INT(a.used_bytes, used - (5u << 20));
  void *again = arena_alloc(&a, 4u << 20); /* the budget has room again */
  CHECK(again != NULL && all_zero(again, 4u << 20));
  CHECK(all_zero(small, 1000));
  arena_free(&a);
}

static void test_replace_data(void) {
  ir_graph *g = ir_graph_new("t", 0);
  int64_t n = (3 << 20) / 4;
  float *f = arena_array(&g->arena, (size_t)n, sizeof *f);
  CHECK(f != NULL);
  f[0] = 1.0f;
  ir_value *x = ir_const_new(g, "x", DT_FLOAT32, 1, &n, f, (size_t)n * sizeof *f);
  ir_value *y = ir_value_new(g, "y", DT_FLOAT32);
  CHECK(x && y);
  ir_value_set_shape(y, 1, &n);
  y->data = x->data; /* as dce does for an Identity of a constant */
  size_t used = g->arena.used_bytes;
  void *z = arena_array(&g->arena, (size_t)n, sizeof(float));
  ir_value_replace_data(g, x, z); /* y still reads the old payload */
  CHECK_EQ_INT(g->arena.used_bytes, used + (size_t)n * sizeof(float));
  CHECK(((const float *)y->data)[0] == 1.0f);
  used = g->arena.used_bytes;
  void *w = arena_array(&g->arena, (size_t)n, sizeof(float));
  ir_value_replace_data(g, y, w); /* now nothing does */
  CHECK_EQ_INT(g->arena.used_bytes, used);
  ir_graph_compact(g); /* x and y are read by nothing: their payloads go */
  CHECK(x->data == NULL && y->data == NULL);
  CHECK_EQ_INT(g->arena.used_bytes, used - 2 * (size_t)n * sizeof(float));
  ir_graph_free(g);
}

int main(void) {
  test_bigmem();
  test_alloc();
  test_budget_release();
  test_replace_data();
  return test_summary("test_arena");
}
