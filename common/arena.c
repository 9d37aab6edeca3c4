/* arena.c - bump allocator (see arena.h). Blocks are malloc'd, at least 1 MiB,
 * chained newest first; a request larger than a block gets a block of its own. */
#include "arena.h"

#include "fault.h"

#include <stdlib.h>
#include <string.h>

struct arena_block {
  arena_block *next;
  size_t size, used;
  _Alignas(64) unsigned char data[];
};

enum { ARENA_BLOCK_BYTES = 1 << 20 };

void arena_init(arena *a, size_t budget_bytes) {
  a->head = NULL;
  a->used_bytes = 0;
  a->budget_bytes = budget_bytes;
}

void arena_free(arena *a) {
  arena_block *b = a->head;
  while (b) {
    arena_block *next = b->next;
    free(b);
    b = next;
  }
  a->head = NULL;
  a->used_bytes = 0;
}

void *arena_alloc_aligned(arena *a, size_t bytes, size_t align) {
  if (FAULT_INJECT(FAULT_ALLOC)) return NULL;
  if (align < 16) align = 16;
  if (bytes > SIZE_MAX / 2) return NULL;
  if (a->budget_bytes && (bytes > a->budget_bytes || a->used_bytes > a->budget_bytes - bytes))
    return NULL;
  arena_block *b = a->head;
  size_t off = b ? (b->used + align - 1) & ~(align - 1) : 0;
  if (!b || off > b->size || bytes > b->size - off) {
    size_t size = bytes + align > ARENA_BLOCK_BYTES ? bytes + align : ARENA_BLOCK_BYTES;
    arena_block *nb = malloc(sizeof *nb + size);
    if (!nb) return NULL;
    nb->size = size;
    nb->used = 0;
    if (b && bytes + align > ARENA_BLOCK_BYTES) {
      /* big request: keep filling the current block afterwards */
      nb->next = b->next;
      b->next = nb;
    } else {
      nb->next = b;
      a->head = nb;
    }
    b = nb;
    off = 0;
  }
  void *p = b->data + off;
  b->used = off + bytes;
  a->used_bytes += bytes;
  memset(p, 0, bytes);
  return p;
}

void *arena_alloc(arena *a, size_t bytes) { return arena_alloc_aligned(a, bytes, 16); }

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
