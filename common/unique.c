/* unique.c - ONNX Unique's selection (common/unique.h states it).
 *
 * Three steps over the item numbers 0..len-1. (1) A stable bottom-up merge
 * sort orders them by value, ties by number; it runs between indices and
 * counts. (2) One walk over the sorted order numbers the groups of equal
 * items g = 0..G-1 in ascending order, writes inverse and keeps each
 * group's first item number (the smallest: the sort is stable) in counts.
 * (3) For the unsorted order the groups are renumbered by first occurrence
 * in one pass over x's items: item i opens its group exactly when it is the
 * group's first item, and the new number replaces the first item in counts
 * (stored negative, so that no later item number matches it). Then counts
 * is rebuilt as a histogram of inverse and y is gathered from indices.
 */
#include "common/unique.h"

#include <math.h>
#include <string.h>

#include "common/elem.h"

typedef struct items {
  const void *x;
  int dt;
  int64_t outer, len, inner; /* elements */
} items;

/* Elements a and b of x: < 0, 0 or > 0 (common/unique.h's order). */
static int cmp_elem(const items *it, size_t a, size_t b) {
  if (elem_is_float(it->dt)) {
    double p = elem_get(it->x, it->dt, a), q = elem_get(it->x, it->dt, b);
    int pn = isnan(p) != 0, qn = isnan(q) != 0;
    if (pn || qn) return pn - qn;
    return (p > q) - (p < q);
  }
  if (it->dt == DT_UINT64) {
    uint64_t p = ((const uint64_t *)it->x)[a], q = ((const uint64_t *)it->x)[b];
    return (p > q) - (p < q);
  }
  int64_t p = elem_get_int(it->x, it->dt, a), q = elem_get_int(it->x, it->dt, b);
  return (p > q) - (p < q);
}

/* Items a and b, lexicographically over (o, j). */
static int cmp_items(const items *it, int64_t a, int64_t b) {
  for (int64_t o = 0; o < it->outer; o++) {
    size_t base = (size_t)(o * it->len * it->inner);
    for (int64_t j = 0; j < it->inner; j++) {
      int c = cmp_elem(it, base + (size_t)(a * it->inner + j), base + (size_t)(b * it->inner + j));
      if (c) return c;
    }
  }
  return 0;
}

/* Sorts a[0, n) stably with tmp[0, n) as scratch; returns the one of the
 * two that holds the result. */
static int64_t *merge_sort(const items *it, int64_t *a, int64_t *tmp, int64_t n) {
  int64_t *src = a, *dst = tmp;
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      int64_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi)
        dst[k++] = cmp_items(it, src[j], src[i]) < 0 ? src[j++] : src[i++];
      while (i < mid)
        dst[k++] = src[i++];
      while (j < hi)
        dst[k++] = src[j++];
    }
    int64_t *t = src;
    src = dst, dst = t;
  }
  return src;
}

int64_t unique_run(const void *x, int dt, int64_t outer, int64_t len, int64_t inner, int sorted, void *y,
                   int64_t *indices, int64_t *inverse, int64_t *counts) {
  const items it = {x, dt, outer, len, inner};
  const size_t es = dtype_size(dt), row = (size_t)inner * es;
  for (int64_t i = 0; i < len; i++)
    indices[i] = i;
  int64_t *order = merge_sort(&it, indices, counts, len);
  if (order != indices) memcpy(indices, order, (size_t)len * sizeof *indices);
  int64_t groups = 0; /* (2): counts[g] = the first item of group g */
  for (int64_t k = 0; k < len; k++) {
    if (k == 0 || cmp_items(&it, indices[k - 1], indices[k]) != 0) counts[groups++] = indices[k];
    inverse[indices[k]] = groups - 1;
  }
  if (sorted) {
    memcpy(indices, counts, (size_t)groups * sizeof *indices);
  } else { /* (3) */
    for (int64_t i = 0, r = 0; i < len; i++) {
      int64_t g = inverse[i];
      if (counts[g] == i) indices[r] = i, counts[g] = -1 - r++;
      inverse[i] = -1 - counts[g];
    }
  }
  memset(counts, 0, (size_t)len * sizeof *counts);
  for (int64_t i = 0; i < len; i++)
    counts[inverse[i]]++;
  for (int64_t g = groups; g < len; g++)
    indices[g] = 0;
  uint8_t *yd = y;
  const uint8_t *xd = x;
  for (int64_t o = 0; o < outer && len > 0; o++) {
    uint8_t *yo = yd + (size_t)(o * len) * row;
    const uint8_t *xo = xd + (size_t)(o * len) * row;
    for (int64_t g = 0; g < groups; g++)
      memcpy(yo + (size_t)g * row, xo + (size_t)indices[g] * row, row);
    memset(yo + (size_t)groups * row, 0, (size_t)(len - groups) * row);
  }
  return groups;
}
