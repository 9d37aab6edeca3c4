/* dvpp_dct.h - what the DVPP's JPEG decoder (dvpp_jpeg.c) and encoder
 * (dvpp_jpege.c) share: the zigzag order of T.81's Figure A.6 and the 8x8
 * DCT of T.81 A.3.3 in float, both directions. Pure functions, no state but
 * the cosine table, built once (pthread_once) by the first call.
 */
#ifndef ACL_DVPP_DCT_H
#define ACL_DVPP_DCT_H

#include <stddef.h>
#include <stdint.h>

/* dvpp_dct_zigzag[k]: the natural (row-major) index of the k-th coefficient in zigzag order. */
extern const uint8_t dvpp_dct_zigzag[64];

/* The inverse DCT of coef (natural order, dequantized) into 8x8 samples at
 * out (rows `stride` bytes apart): level shift +128, rounded to nearest,
 * clamped to 0..255. */
void dvpp_dct_inverse(const float *coef, uint8_t *out, size_t stride);

/* The forward DCT of 8x8 samples (natural order, already shifted by -128)
 * into coef (natural order). */
void dvpp_dct_forward(const float *samples, float *coef);

#endif
