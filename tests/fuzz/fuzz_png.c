/* fuzz_png.c - target `png`: raw bytes into the DVPP PNG decoder
 * (acl/dvpp_png.h: the chunk walk, the inflater, the filters), the parser
 * acldvppPngDecodeAsync runs on untrusted files (fuzz_targets.h).
 *
 * IHDR is read (dvpp_png_info_read); a picture of at most
 * FUZZ_PNG_MAX_PIXELS is then decoded whole into an RGB888 or RGBA8888
 * buffer (the input's size picks one) of exactly its size, so a write past
 * the rows is an ASan report. Larger pictures are legal (up to
 * DVPP_PNG_MAX_DIM per side) and would only measure malloc. Half of the
 * inputs (bit 1 of the size) have every chunk's CRC-32 repaired first, in a
 * copy, so mutations reach IHDR's checks, the inflater and the filters
 * instead of stopping at the first CRC. Seeds: tests/fuzz/png_seeds.py (PIL
 * and zlib at run time).
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_targets.h"

#include "acl/dvpp_png.h"

#define FUZZ_PNG_MAX_PIXELS (1u << 20)

static uint32_t crc32_of(const uint8_t *p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  while (n--) {
    c ^= *p++;
    for (int k = 0; k < 8; k++)
      c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
  }
  return c ^ 0xFFFFFFFFu;
}

/* Rewrites the CRC of every whole chunk after the signature. */
static void repair_crcs(uint8_t *p, size_t size) {
  for (size_t at = 8; size >= 12 && at <= size - 12;) {
    size_t n = (size_t)p[at] << 24 | (size_t)p[at + 1] << 16 | (size_t)p[at + 2] << 8 | p[at + 3];
    if (n > size - at - 12) return;
    uint32_t c = crc32_of(p + at + 4, 4 + n);
    uint8_t *q = p + at + 8 + n;
    q[0] = (uint8_t)(c >> 24), q[1] = (uint8_t)(c >> 16), q[2] = (uint8_t)(c >> 8), q[3] = (uint8_t)c;
    at += 12 + n;
  }
}

int fuzz_png(const uint8_t *data, size_t size) {
  fuzz_last.rejected = 0;
  fuzz_last.msg[0] = '\0';
  uint8_t *copy = NULL;
  if (size & 2 && (copy = malloc(size ? size : 1))) {
    memcpy(copy, data, size);
    repair_crcs(copy, size);
    data = copy;
  }
  dvpp_png_info info;
  int r = dvpp_png_info_read(data, size, &info, fuzz_last.msg, sizeof fuzz_last.msg);
  if (!r && (size_t)info.width * info.height <= FUZZ_PNG_MAX_PIXELS) {
    int channels = size & 1 ? 4 : 3;
    size_t row = (size_t)info.width * (size_t)channels;
    uint8_t *pix = malloc(row * info.height);
    if (pix) {
      dvpp_png_out out = {pix, row, channels};
      r = dvpp_png_decode(data, size, &out, fuzz_last.msg, sizeof fuzz_last.msg);
    }
    free(pix);
  }
  free(copy);
  if (r)
    fuzz_last.rejected = 1;
  else
    fuzz_last.msg[0] = '\0';
  return 0;
}
