/* tfidf.h - ONNX TfIdfVectorizer's counting and weighting (common/tfidf.c),
 * one implementation for the reference evaluator (ir/eval_index.c) and
 * libomrt's TFIDF kernel (runtime/kernels_index.c).
 *
 * The n-grams to count are a table the compiler builds from the node's
 * attributes (frontend/onnx_ops_index.c): row g of `width` i64 entries is
 *   [n, o, item_0 .. item_{n-1}, 0 ...]   (2 + n <= width)
 * an n-gram of n items counted into output position o. A row of x (C
 * integers, i32 or i64) holds the n-gram at start s with skip distance d
 * when x[s + k d] = item_k for every k < n (s + (n - 1) d < C); unigrams
 * are counted at d = 1 only, longer n-grams at every d = 1 .. max_skip + 1,
 * as ONNX's reference walks its n-gram trie. f[o] sums the counts of the
 * n-grams of position o. Then each output position i of a row is
 *   mode 0 (TF):    f[i]
 *   mode 1 (IDF):   f[i] > 0 ? w[i] : 0
 *   mode 2 (TFIDF): w[i] * f[i]
 * with w[i] = 1 when there are no weights.
 */
#ifndef COMMON_TFIDF_H
#define COMMON_TFIDF_H

#include <stdint.h>

enum { TFIDF_TF = 0, TFIDF_IDF = 1, TFIDF_TFIDF = 2 };

/* y[rows, outs] (f32) from x[rows, C] (dtype xdt: i32 or i64), the table
 * [ngrams, width] and weights (outs f32, or NULL); every entry of y is
 * written. A table row that breaks 1 <= n, 2 + n <= width, 0 <= o < outs
 * counts nothing (the compiler writes one such row, n = 0, as the whole
 * table of a node that counts no n-gram; a damaged package reads no memory
 * outside its tensors). */
void tfidf_run(const void *x, int xdt, int64_t rows, int64_t C, const int64_t *table, int64_t ngrams,
               int64_t width, int64_t max_skip, int mode, const float *weights, int64_t outs, float *y);

#endif
