/* tfidf.c - ONNX TfIdfVectorizer (common/tfidf.h states it).
 *
 * A direct count per table row, start and skip distance: O(rows x ngrams x
 * skips x C x n) comparisons, which is what the vectorizer's small pools
 * and short token rows need, and needs no trie and no memory.
 */
#include "common/tfidf.h"

#include "common/types.h"

static int64_t item(const void *x, int xdt, int64_t i) {
  return xdt == DT_INT32 ? ((const int32_t *)x)[i] : ((const int64_t *)x)[i];
}

/* How often the n-gram items[0, n) occurs in row r of x at any start and
 * skip distance 1 .. skips. */
static int64_t occurrences(const void *x, int xdt, int64_t r, int64_t C, const int64_t *items, int64_t n,
                           int64_t skips) {
  int64_t count = 0;
  for (int64_t d = 1; d <= skips && (n - 1) * d < C; d++) /* wider skips fit no n-gram */
    for (int64_t s = 0; s + (n - 1) * d < C; s++) {
      int64_t k = 0;
      while (k < n && item(x, xdt, r * C + s + k * d) == items[k])
        k++;
      count += k == n;
    }
  return count;
}

void tfidf_run(const void *x, int xdt, int64_t rows, int64_t C, const int64_t *table, int64_t ngrams,
               int64_t width, int64_t max_skip, int mode, const float *weights, int64_t outs, float *y) {
  for (int64_t r = 0; r < rows; r++) {
    float *f = y + r * outs;
    for (int64_t i = 0; i < outs; i++)
      f[i] = 0;
    for (int64_t g = 0; g < ngrams; g++) {
      const int64_t *row = table + g * width, n = row[0], o = row[1];
      if (n >= 1 && n <= width - 2 && o >= 0 && o < outs)
        f[o] += (float)occurrences(x, xdt, r, C, row + 2, n, n == 1 ? 1 : max_skip + 1);
    }
    for (int64_t i = 0; i < outs; i++) {
      float w = weights ? weights[i] : 1.0f;
      f[i] = mode == TFIDF_IDF ? (f[i] > 0 ? w : 0.0f) : mode == TFIDF_TFIDF ? w * f[i] : f[i];
    }
  }
}
