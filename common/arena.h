/* arena.h - bump allocator for the compiler.
 *
 * A graph owns one arena; every value, node, attribute, name and constant
 * payload of the graph lives in it and is freed at once by arena_free. Passes
 * that need temporary memory make their own scratch arena and free it before
 * returning. Allocations are zeroed and 16-byte aligned (64-byte with
 * arena_alloc_aligned). Allocation failure returns NULL; callers report
 * ST_ERR_NOMEM. An arena has a byte budget (0 = unlimited) so hostile models
 * cannot make the compiler allocate without bound.
 */
#ifndef COMMON_ARENA_H
#define COMMON_ARENA_H

#include <stddef.h>
#include <stdint.h>

typedef struct arena_block arena_block;
typedef struct arena {
  arena_block *head;
  size_t used_bytes;   /* total bytes handed out, for budget and reporting */
  size_t budget_bytes; /* 0 = unlimited */
} arena;

void arena_init(arena *a, size_t budget_bytes);
void arena_free(arena *a);
void *arena_alloc(arena *a, size_t bytes); /* zeroed, 16-aligned */
void *arena_alloc_aligned(arena *a, size_t bytes, size_t align);
/* As arena_alloc (64-aligned), but one of 2 MiB or more gets a block whose
 * pages are not faulted in until written (bigmem_reserve): for a payload
 * filled piece by piece (bigmem_populate each piece first, for speed). */
void *arena_alloc_lazy(arena *a, size_t bytes);
void *arena_array(arena *a, size_t count, size_t elem_bytes); /* overflow-checked */
char *arena_strdup(arena *a, const char *s);
char *arena_strndup(arena *a, const char *s, size_t n);
void *arena_memdup(arena *a, const void *p, size_t bytes);
/* Gives back early the memory of `p`, the start of an allocation from `a`
 * that nothing will use again. Only allocations of 2 MiB or more are given
 * back, as each has a block of its own; for any other pointer this does
 * nothing and the memory goes with the arena. */
void arena_release(arena *a, const void *p);
/* 1 when arena_release(a, p) would give memory back (a cheap test before
 * making sure nothing uses p). */
int arena_releasable(arena *a, const void *p);
/* Grows a vector held in the arena: *items has *cap slots; doubles when full.
 * Returns 0 on success, -1 on allocation failure. */
int arena_grow(arena *a, void **items, int *cap, int count, size_t elem_bytes);

#endif
