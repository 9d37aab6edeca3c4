/* dvpp_dct.c - the 8x8 DCT of dvpp_dct.h: separable, with the orthonormal
 * basis c[x][u] = C(u) / 2 * cos((2x + 1) u pi / 16), C(0) = 1 / sqrt(2),
 * else 1, used as it is by the inverse and transposed by the forward
 * transform (the basis is orthonormal, so one table serves both).
 */
#include <math.h>
#include <pthread.h>

#include "acl/dvpp_dct.h"

const uint8_t dvpp_dct_zigzag[64] = {0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,
                                     12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6,  7,  14, 21, 28,
                                     35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
                                     58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63};

static float basis[8][8]; /* basis[x][u] */
static pthread_once_t basis_once = PTHREAD_ONCE_INIT;

static void basis_init(void) {
  for (int x = 0; x < 8; x++)
    for (int u = 0; u < 8; u++)
      basis[x][u] = (float)((u ? 0.5 : 0.5 / sqrt(2.0)) * cos((2 * x + 1) * u * M_PI / 16));
}

void dvpp_dct_inverse(const float *coef, uint8_t *out, size_t stride) {
  pthread_once(&basis_once, basis_init);
  float tmp[64];
  for (int u = 0; u < 8; u++) /* columns: tmp[y][u] */
    for (int y = 0; y < 8; y++) {
      float s = 0;
      for (int v = 0; v < 8; v++)
        s += basis[y][v] * coef[v * 8 + u];
      tmp[y * 8 + u] = s;
    }
  for (int y = 0; y < 8; y++)
    for (int x = 0; x < 8; x++) {
      float s = 128.5f;
      for (int u = 0; u < 8; u++)
        s += basis[x][u] * tmp[y * 8 + u];
      out[y * stride + x] = s <= 0 ? 0 : s >= 255 ? 255 : (uint8_t)s;
    }
}

void dvpp_dct_forward(const float *samples, float *coef) {
  pthread_once(&basis_once, basis_init);
  float tmp[64] = {0};
  for (int y = 0; y < 8; y++) /* rows: tmp[y][u] = sum over x of samples[y][x] basis[x][u] */
    for (int x = 0; x < 8; x++) {
      float s = samples[y * 8 + x];
      for (int u = 0; u < 8; u++) /* the innermost loop runs along rows: the compiler vectorizes it */
        tmp[y * 8 + u] += s * basis[x][u];
    }
  for (int v = 0; v < 64; v++)
    coef[v] = 0;
  for (int v = 0; v < 8; v++) /* columns: coef[v][u] = sum over y of basis[y][v] tmp[y][u] */
    for (int y = 0; y < 8; y++) {
      float b = basis[y][v];
      for (int u = 0; u < 8; u++)
        coef[v * 8 + u] += b * tmp[y * 8 + u];
    }
}
