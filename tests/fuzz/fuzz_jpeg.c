/* fuzz_jpeg.c - target `jpeg`: raw bytes into the DVPP JPEG decoder
 * (acl/dvpp_jpeg.h), the parser acldvppJpegDecodeAsync runs on untrusted
 * files (fuzz_targets.h).
 *
 * The headers are read (dvpp_jpeg_info_read); a picture of at most
 * FUZZ_JPEG_MAX_PIXELS is then decoded whole into a YUV420SP buffer of
 * exactly its size, so a write past the planes is an ASan report. Larger
 * pictures are legal (up to DVPP_JPEG_MAX_DIM per side) and would only
 * measure calloc. Seeds: tests/fuzz/jpeg_seeds.py (PIL and jpegtran at
 * run time).
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_targets.h"

#include "acl/dvpp_jpeg.h"

#define FUZZ_JPEG_MAX_PIXELS (1u << 20)

int fuzz_jpeg(const uint8_t *data, size_t size) {
  fuzz_last.rejected = 0;
  fuzz_last.msg[0] = '\0';
  dvpp_jpeg_info info;
  int r = dvpp_jpeg_info_read(data, size, &info, fuzz_last.msg, sizeof fuzz_last.msg);
  if (!r && (size_t)info.width * info.height <= FUZZ_JPEG_MAX_PIXELS) {
    size_t w = info.width, h = info.height, cw = (w + 1) / 2, ch = (h + 1) / 2;
    uint8_t *y = malloc(w * h), *uv = malloc(2 * cw * ch);
    if (y && uv) {
      dvpp_jpeg_nv12 out = {y, uv, w, 2 * cw, (int)(size & 1)};
      r = dvpp_jpeg_decode(data, size, &out, fuzz_last.msg, sizeof fuzz_last.msg);
    }
    free(y);
    free(uv);
  }
  if (r)
    fuzz_last.rejected = 1;
  else
    fuzz_last.msg[0] = '\0';
  return 0;
}
