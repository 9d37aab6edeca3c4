/* nc1hwc0.h - NC1HWC0 tensors in the kernel tests (types.h's layout): the
 * element index of a logical (n, c, h, w), and NCHW values packed into one
 * with zero padding lanes. Header-only, test code only; kcase.h and
 * test_kernels.c build on it. */
#ifndef TESTS_UNIT_NC1HWC0_H
#define TESTS_UNIT_NC1HWC0_H

#include <stdint.h>
#include <string.h>

#include "runtime/kernels.h"

/* Element index of (n, ch, h, w) in an NC1HWC0 tensor of logical dims d. */
static inline size_t nc1hwc0_at(const int64_t *d, int64_t n, int64_t ch, int64_t h, int64_t w) {
  return (size_t)((((n * ((d[1] + 15) / 16) + ch / 16) * d[2] + h) * d[3] + w) * 16 + ch % 16);
}

/* NCHW values v -> the NC1HWC0 data (dtype dt, `bytes` long, logical dims
 * d), padding lanes 0. */
static inline void nc1hwc0_put(void *data, int dt, size_t bytes, const int64_t *d, const float *v) {
  memset(data, 0, bytes);
  size_t i = 0;
  for (int64_t n = 0; n < d[0]; n++)
    for (int64_t ch = 0; ch < d[1]; ch++)
      for (int64_t h = 0; h < d[2]; h++)
        for (int64_t w = 0; w < d[3]; w++)
          rt_put(data, dt, nc1hwc0_at(d, n, ch, h, w), v[i++]);
}

#endif
