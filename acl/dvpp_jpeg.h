/* dvpp_jpeg.h - a baseline JPEG decoder (pure functions over a byte buffer,
 * no AscendCL state): what acldvppJpegDecodeAsync runs on a stream's thread.
 *
 * Accepts sequential Huffman JPEG (SOF0 baseline, SOF1 extended) with 8-bit
 * samples, 1 (grey) or 3 (YCbCr) components, sampling factors 1..4 whose
 * ratios to the largest are integers (4:4:4, 4:2:2, 4:2:0, 4:4:0, 4:1:1,
 * ...), interleaved or one-component scans, restart intervals. APPn and COM
 * segments are skipped: EXIF orientation is ignored (the picture comes out
 * as stored). Refused, with a one-line message naming what: progressive,
 * lossless, hierarchical and arithmetic-coded frames, 12/16-bit samples, 2 or
 * 4 components (CMYK / YCCK), Adobe RGB (APP14 transform 0), a height given
 * by DNL, and any malformed or truncated stream.
 *
 * The input is untrusted: every length, index, count and dimension is
 * bounded before use, nothing is read at or past `size`, and a corrupt
 * stream is an error, never a crash. Messages start with "jpeg: ".
 */
#ifndef ACL_DVPP_JPEG_H
#define ACL_DVPP_JPEG_H

#include <stddef.h>
#include <stdint.h>

enum { DVPP_JPEG_MAX_DIM = 16384 }; /* pixels per side this decoder takes */

typedef struct dvpp_jpeg_info {
  uint32_t width, height; /* pixels, from the frame header */
  int ncomp;              /* 1 or 3 */
  int h[3], v[3];         /* sampling factors per component */
  int hmax, vmax;
} dvpp_jpeg_info;

/* Reads the headers up to the first scan: the frame's size, components and
 * sampling. 0, or -1 (a malformed stream) or -2 (a feature this decoder
 * does not have: progressive, CMYK, ...) with the reason in err (n bytes). */
int dvpp_jpeg_info_read(const uint8_t *data, size_t size, dvpp_jpeg_info *info, char *err, size_t n);

/* The decoded picture written as YUV420 semi-planar: luma width x height
 * bytes at y (rows y_stride bytes apart), then the chroma plane of
 * ceil(width/2) x ceil(height/2) interleaved pairs at uv (rows uv_stride bytes
 * apart), U first (NV12) or V first (vu_order, NV21). Each chroma pair is the
 * mean (rounded half up) of the source chroma under its 2x2 luma pixels, so a
 * 4:2:0 source's chroma is copied exactly; grey sources give 128. */
typedef struct dvpp_jpeg_nv12 {
  uint8_t *y, *uv; /* borrowed: the caller's planes */
  size_t y_stride, uv_stride;
  int vu_order;
} dvpp_jpeg_nv12;

/* Decodes the whole stream into out. Heap use: the component planes, freed
 * before returning. 0, or -1 / -2 as dvpp_jpeg_info_read with the reason in
 * err (out may be partly written). */
int dvpp_jpeg_decode(const uint8_t *data, size_t size, const dvpp_jpeg_nv12 *out, char *err, size_t n);

#endif
