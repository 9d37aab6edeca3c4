/* unique.h - ONNX Unique's selection (common/unique.c), one implementation
 * for the reference evaluator (ir/count.c) and libomrt's UNIQUE kernel
 * (runtime/kernels_count.c).
 *
 * x is viewed as [outer, len, inner]: len items along the unique axis, item
 * i the outer x inner elements x[o, i, j] (without an axis: x flattened,
 * outer = inner = 1, an item is one element). Items compare
 * lexicographically over (o, j) in C order, as numpy.unique(axis=) orders
 * them; elements compare by value (integers exactly, u64 unsigned, bool as
 * 0/1; floats numerically, -0.0 equal to 0.0, every NaN equal to every
 * other and above every number, numpy's order with equal_nan). The G
 * distinct items (unique_run's result) are:
 *   sorted:   in ascending order;
 *   unsorted: in the order of their first occurrence.
 * Outputs, each [len] i64 but y ([outer, len, inner] in x's dtype):
 *   y[o, g, j] = x[o, indices[g], j]   the distinct items, g < G;
 *   indices[g]    the first occurrence of item g in x;
 *   inverse[i]    the g of x's item i (every i < len);
 *   counts[g]     how many of x's items equal item g;
 * and y, indices, counts are zero from g = G on (the padding of a counted
 * output). The sort is a stable merge sort of item numbers, O(len log len)
 * comparisons of one item each, using indices and counts as its scratch:
 * no other memory, so the kernel allocates nothing while executing.
 */
#ifndef COMMON_UNIQUE_H
#define COMMON_UNIQUE_H

#include <stdint.h>

/* The distinct items of x (dtype dt: a numeric dtype of 1, 2, 4 or 8
 * bytes, as common/types.h numbers them), written as above. len >= 0,
 * outer, inner >= 1 or len = 0. x and y: outer * len * inner elements;
 * indices, inverse, counts: len each; no two overlap. Returns G. */
int64_t unique_run(const void *x, int dt, int64_t outer, int64_t len, int64_t inner, int sorted, void *y,
                   int64_t *indices, int64_t *inverse, int64_t *counts);

#endif
