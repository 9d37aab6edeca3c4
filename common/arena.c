/* arena.c - bump allocator (see arena.h).
 *
 * Blocks are chained newest first. A new block holds at least twice what
 * the arena has handed out so far, from 64 KiB up to 4 MiB, so a scratch
 * arena of a few small things stays small and a graph's arena takes few
 * blocks. A request of 2 MiB or more, or one that does not fit such a block,
 * gets a block of its own, linked behind the current one, which goes on
 * being filled (a block of its own never is, so arena_release can give it
 * back whole). Blocks come from bigmem (malloc'd when small, mapped and
 * populated in one call when large): a block starts zeroed and no byte of it
 * is handed out twice, so allocations are zero without a memset.
 */
#include "arena.h"

#include "bigmem.h"
#include "fault.h"

#include <stdint.h>
#include <string.h>

struct arena_block {
  arena_block *next;
  size_t size, used; /* bytes of data */
  int own;           /* holds one big allocation (arena_release may free it) */
  _Alignas(64) unsigned char data[];
};

enum { FIRST_BLOCK_BYTES = 64 << 10, MAX_BLOCK_BYTES = 4 << 20, OWN_BLOCK_BYTES = 2 << 20 };

void arena_init(arena *a, size_t budget_bytes) {
  a->head = NULL;
  a->used_bytes = 0;
  a->budget_bytes = budget_bytes;
}

void arena_free(arena *a) {
  arena_block *b = a->head;
  while (b) {
    arena_block *next = b->next;
    bigmem_free(b, sizeof *b + b->size);
    b = next;
  }
  a->head = NULL;
  a->used_bytes = 0;
}

/* A zeroed block of `total` bytes, header included; lazy: its pages are
 * not faulted in yet. */
static arena_block *block_new(size_t total, int lazy) {
  arena_block *b = lazy ? bigmem_reserve(total) : bigmem_alloc(total);
  if (b) b->size = total - sizeof *b;
  return b;
}

/* Offset in b->data of the first free byte aligned to `align` (a power of
 * two), which may lie past the end of the block. */
static size_t aligned_off(const arena_block *b, size_t align) {
  uintptr_t at = (uintptr_t)b->data + b->used;
  return (size_t)(((at + align - 1) & ~(uintptr_t)(align - 1)) - (uintptr_t)b->data);
}

static void *alloc(arena *a, size_t bytes, size_t align, int lazy) {
  if (FAULT_INJECT(FAULT_ALLOC)) return NULL;
  if (align < 16) align = 16;
  if (bytes > SIZE_MAX / 2) return NULL;
  if (a->budget_bytes && (bytes > a->budget_bytes || a->used_bytes > a->budget_bytes - bytes)) return NULL;
  arena_block *b = a->head;
  size_t off = b ? aligned_off(b, align) : 0;
  int fits = b && !b->own && bytes < OWN_BLOCK_BYTES && off <= b->size && bytes <= b->size - off;
  if (!fits) {
    size_t total = a->used_bytes < MAX_BLOCK_BYTES / 2 ? 2 * a->used_bytes : MAX_BLOCK_BYTES;
    if (total < FIRST_BLOCK_BYTES) total = FIRST_BLOCK_BYTES;
    int own = bytes >= OWN_BLOCK_BYTES || bytes + align > total - sizeof *b;
    arena_block *nb = block_new(own ? sizeof *b + bytes + align : total, own && lazy);
    if (!nb) return NULL;
    nb->own = own;
    if (b && own) { /* keep filling the current block afterwards */
      nb->next = b->next;
      b->next = nb;
    } else {
      nb->next = b;
      a->head = nb;
    }
    b = nb;
    off = aligned_off(b, align);
  }
  void *p = b->data + off;
  b->used = off + bytes;
  a->used_bytes += bytes;
  return p;
}

/* The link to the block of its own that holds p, or NULL. */
static arena_block **own_block(arena *a, const void *p) {
  const unsigned char *c = p;
  for (arena_block **link = &a->head; *link; link = &(*link)->next)
    if ((*link)->own && c >= (*link)->data && c < (*link)->data + (*link)->used) return link;
  return NULL;
}

int arena_releasable(arena *a, const void *p) { return own_block(a, p) != NULL; }

void arena_release(arena *a, const void *p) {
  arena_block **link = own_block(a, p), *b = link ? *link : NULL;
  if (!b) return;
  a->used_bytes -= b->used - (size_t)((const unsigned char *)p - b->data);
  *link = b->next;
  bigmem_free(b, sizeof *b + b->size);
}

void *arena_alloc_aligned(arena *a, size_t bytes, size_t align) { return alloc(a, bytes, align, 0); }

void *arena_alloc(arena *a, size_t bytes) { return alloc(a, bytes, 16, 0); }

void *arena_alloc_lazy(arena *a, size_t bytes) { return alloc(a, bytes, 64, 1); }

void *arena_array(arena *a, size_t count, size_t elem_bytes) {
  if (elem_bytes && count > SIZE_MAX / elem_bytes) return NULL;
  size_t bytes = count * elem_bytes;
  return arena_alloc(a, bytes ? bytes : 1);
}

char *arena_strndup(arena *a, const char *s, size_t n) {
  char *p = arena_alloc(a, n + 1);
  if (p) memcpy(p, s, n);
  return p;
}

char *arena_strdup(arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

void *arena_memdup(arena *a, const void *p, size_t bytes) {
  void *q = arena_alloc_aligned(a, bytes ? bytes : 1, 64);
  if (q && bytes) memcpy(q, p, bytes);
  return q;
}

int arena_grow(arena *a, void **items, int *cap, int count, size_t elem_bytes) {
  if (count < *cap) return 0;
  int ncap = *cap ? *cap * 2 : 8;
  if (ncap < 0 || ncap > (1 << 28)) return -1;
  void *n = arena_array(a, (size_t)ncap, elem_bytes);
  if (!n) return -1;
  if (*items) memcpy(n, *items, (size_t)count * elem_bytes);
  *items = n;
  *cap = ncap;
  return 0;
}
