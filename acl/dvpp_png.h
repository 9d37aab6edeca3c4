/* dvpp_png.h - a PNG decoder (pure functions over a byte buffer, no
 * AscendCL state): what acldvppPngDecodeAsync runs on a stream's thread.
 *
 * Accepts non-interlaced PNG of 8-bit samples in the colour types the
 * PNGD documentation names: grey (0), RGB (2), grey with alpha (4) and RGBA
 * (6). Refused, with a one-line message naming what: palette images
 * (colour type 3), bit depths other than 8, Adam7 interlacing, unknown
 * critical chunks, and any malformed or truncated file.
 *
 * The input is untrusted: every chunk's length is bounded by the data and
 * its CRC-32 checked, IHDR's fields are validated, the zlib header and the
 * Adler-32 of the inflated data are checked, and the inflater (stored,
 * fixed and dynamic Huffman blocks) bounds every code length, repeat count,
 * length and distance; it must produce exactly the picture's filtered rows,
 * no more. Nothing is read at or past `size`. Heap use: the IDAT data and
 * the filtered rows (at most DVPP_PNG_MAX_DIM x (1 + 4 x DVPP_PNG_MAX_DIM)
 * bytes), freed before returning. Messages start with "png: ".
 */
#ifndef ACL_DVPP_PNG_H
#define ACL_DVPP_PNG_H

#include <stddef.h>
#include <stdint.h>

enum { DVPP_PNG_MAX_DIM = 4096 }; /* pixels per side this decoder takes (PNGD's documented maximum) */

typedef struct dvpp_png_info {
  uint32_t width, height; /* pixels, from IHDR */
  int bit_depth, color_type;
  int channels; /* 1 grey, 2 grey + alpha, 3 RGB, 4 RGBA */
} dvpp_png_info;

/* Reads the signature and IHDR. 0, or -1 (a malformed file) or -2 (a
 * feature this decoder does not have) with the reason in err (n bytes). */
int dvpp_png_info_read(const uint8_t *data, size_t size, dvpp_png_info *info, char *err, size_t n);

/* The decoded picture: `channels` (3: R G B, grey repeated, alpha dropped;
 * 4: R G B A, grey repeated) bytes per pixel, rows `stride` bytes apart. */
typedef struct dvpp_png_out {
  uint8_t *pix; /* borrowed: the caller's buffer */
  size_t stride;
  int channels;
} dvpp_png_out;

/* Decodes the whole file into out. 0, or -1 / -2 as dvpp_png_info_read
 * with the reason in err (out may be partly written). */
int dvpp_png_decode(const uint8_t *data, size_t size, const dvpp_png_out *out, char *err, size_t n);

#endif
