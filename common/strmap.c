/* strmap.c - string -> int map (strmap.h): FNV-1a hashing, linear probing. */
#include "strmap.h"

#include <string.h>

static size_t hash_name(const char *s) {
  size_t h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

int strmap_init(strmap *m, size_t max_keys, arena *a) {
  size_t cap = 64;
  while (cap < 2 * max_keys + 2)
    cap *= 2;
  m->keys = arena_array(a, cap, sizeof *m->keys);
  m->vals = arena_array(a, cap, sizeof *m->vals);
  m->mask = cap - 1, m->count = 0, m->max_count = max_keys;
  return m->keys && m->vals ? 0 : -1;
}

int strmap_put(strmap *m, const char *k, int v) {
  size_t i = hash_name(k) & m->mask;
  while (m->keys[i] && strcmp(m->keys[i], k) != 0)
    i = (i + 1) & m->mask;
  if (!m->keys[i]) {
    if (m->count == m->max_count) return -1;
    m->keys[i] = k, m->count++;
  }
  m->vals[i] = v;
  return 0;
}

int strmap_get(const strmap *m, const char *k) {
  size_t i = hash_name(k) & m->mask;
  while (m->keys[i]) {
    if (strcmp(m->keys[i], k) == 0) return m->vals[i];
    i = (i + 1) & m->mask;
  }
  return -1;
}
