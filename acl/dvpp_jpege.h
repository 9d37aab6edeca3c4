/* dvpp_jpege.h - a baseline JPEG encoder (pure functions over the caller's
 * planes and output buffer, no AscendCL state): what acldvppJpegEncodeAsync
 * runs on a stream's thread.
 *
 * Input: 8-bit YUV 4:2:0 semi-planar (NV12 / NV21) or 4:2:2 packed (YUYV,
 * UYVY, YVYU, VYUY), even width. Output: a JFIF file (SOI, APP0 JFIF 1.01,
 * DQT, SOF0, DHT, SOS, EOI), three components sampled 2x2,1x1,1x1 (4:2:0
 * input) or 2x1,1x1,1x1 (4:2:2 input), the example luminance and
 * chrominance quantization tables of T.81 Annex K scaled by the IJG quality
 * formula, the Annex K Huffman tables, no restart intervals. Edge MCUs
 * repeat the last column / row.
 */
#ifndef ACL_DVPP_JPEGE_H
#define ACL_DVPP_JPEGE_H

#include <stddef.h>
#include <stdint.h>

typedef enum dvpp_jpege_layout {
  DVPP_JPEGE_NV12, /* luma plane, then U V pairs at half width and height */
  DVPP_JPEGE_NV21, /* as NV12 with V U pairs */
  DVPP_JPEGE_YUYV, /* packed 4:2:2: Y0 U Y1 V per two pixels */
  DVPP_JPEGE_UYVY, /* U Y0 V Y1 */
  DVPP_JPEGE_YVYU, /* Y0 V Y1 U */
  DVPP_JPEGE_VYUY  /* V Y0 U Y1 */
} dvpp_jpege_layout;

typedef struct dvpp_jpege_in {
  const uint8_t *y;       /* borrowed: the luma plane (NV12 / NV21) or the packed rows */
  const uint8_t *uv;      /* borrowed: the chroma pairs plane (NV12 / NV21); unused for packed */
  size_t stride;          /* bytes per row of each plane */
  uint32_t width, height; /* pixels; width even, 1..65535 each */
  dvpp_jpege_layout layout;
} dvpp_jpege_in;

/* The largest file dvpp_jpege_encode writes for a width x height picture
 * of that layout, at any quality (every coefficient of every block coded at
 * its longest, every byte stuffed). */
uint64_t dvpp_jpege_bound(uint32_t width, uint32_t height, dvpp_jpege_layout layout);

/* Encodes `in` at IJG quality 1..100 into out (cap bytes); *len_out is the
 * file's size. 0, or -1 when the file does not fit in cap bytes (out then
 * holds a prefix). */
int dvpp_jpege_encode(const dvpp_jpege_in *in, int quality, uint8_t *out, size_t cap, size_t *len_out);

#endif
