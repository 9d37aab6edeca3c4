/* strmap.h - string -> int map in an arena: open addressing over a
 * power-of-two table sized once for a known number of keys (at most half
 * full). Keys are borrowed: they must outlive the map. For the passes and
 * the driver's name lookups (tensor and node names).
 */
#ifndef COMMON_STRMAP_H
#define COMMON_STRMAP_H

#include <stddef.h>

#include "common/arena.h"

typedef struct strmap {
  const char **keys;
  int *vals;
  size_t mask, count, max_count;
} strmap;

/* A map for up to max_keys keys, allocated from a. 0 ok, -1 out of memory. */
int strmap_init(strmap *m, size_t max_keys, arena *a);
/* Sets k's value, replacing an earlier one. -1 when max_keys are already
 * in the map and k is new. */
int strmap_put(strmap *m, const char *k, int v);
/* k's value, or -1 when absent. */
int strmap_get(const strmap *m, const char *k);

#endif
