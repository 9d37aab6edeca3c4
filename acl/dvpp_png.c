/* dvpp_png.c - the PNG decoder of dvpp_png.h.
 *
 * Two walks over the chunks: the first checks the signature, every chunk's
 * length, type letters and CRC-32, IHDR (first, once, 13 bytes, valid
 * fields), the chunk order (PLTE only for colour types 2 and 6 and before
 * IDAT, the IDAT chunks consecutive, IEND present) and adds up the IDAT
 * bytes; the second copies the IDAT data into one buffer. The zlib stream is
 * inflated (dvpp_inflate.c) into exactly height x (1 + width x channels)
 * bytes, the rows are unfiltered in place (filter types 0..4, anything else
 * is an error naming the row) and written out as RGB888 or RGBA8888.
 * Ancillary chunks are skipped (gamma, colour profiles and tRNS are not
 * applied, as PIL's plain decode does not apply them either).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/dvpp_inflate.h"
#include "acl/dvpp_png.h"

typedef struct png {
  const uint8_t *p;
  size_t size;
  char *err;
  size_t errn;
  int unsupported;
  dvpp_png_info info;
} png;

static int fail(png *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(png *d, const char *fmt, ...) {
  if (!d->err || !d->errn) return -1;
  int k = snprintf(d->err, d->errn, "png: ");
  if (k < 0 || (size_t)k >= d->errn) return -1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->err + k, d->errn - (size_t)k, fmt, ap);
  va_end(ap);
  return -1;
}

#define unsup(d, ...) ((d)->unsupported = 1, fail((d), __VA_ARGS__))

static uint32_t be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void) {
  for (uint32_t n = 0; n < 256; n++) {
    uint32_t c = n;
    for (int k = 0; k < 8; k++)
      c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    crc_table[n] = c;
  }
}

static uint32_t crc32(const uint8_t *p, size_t n) {
  pthread_once(&crc_once, crc_init);
  uint32_t c = 0xFFFFFFFFu;
  while (n--)
    c = crc_table[(c ^ *p++) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};

/* The chunk at *pos: its type (5 bytes with the NUL), data and length;
 * *pos moves past it. Checks the bounds, the type's letters and the CRC. */
static int chunk(png *d, size_t *pos, char type[5], const uint8_t **data, size_t *len) {
  size_t at = *pos;
  if (d->size - at < 12) return fail(d, "the file ends at offset %zu before IEND", d->size);
  uint32_t n = be32(d->p + at);
  memcpy(type, d->p + at + 4, 4);
  type[4] = '\0';
  for (int i = 0; i < 4; i++)
    if (!((type[i] >= 'A' && type[i] <= 'Z') || (type[i] >= 'a' && type[i] <= 'z')))
      return fail(d, "chunk at offset %zu: type bytes %02X %02X %02X %02X are not letters", at, d->p[at + 4],
                  d->p[at + 5], d->p[at + 6], d->p[at + 7]);
  if (n > 0x7FFFFFFFu || n > d->size - at - 12)
    return fail(d, "chunk %s at offset %zu: length %u runs past the end (%zu bytes)", type, at, n, d->size);
  uint32_t want = be32(d->p + at + 8 + n), got = crc32(d->p + at + 4, 4 + (size_t)n);
  if (want != got)
    return fail(d, "chunk %s at offset %zu: CRC 0x%08X, the file says 0x%08X", type, at, got, want);
  *data = d->p + at + 8;
  *len = n;
  *pos = at + 12 + n;
  return 0;
}

static int read_ihdr(png *d, size_t *pos) {
  if (d->size < 8 || memcmp(d->p, signature, 8)) return fail(d, "not a PNG file (no PNG signature)");
  *pos = 8;
  char type[5];
  const uint8_t *s;
  size_t n;
  if (chunk(d, pos, type, &s, &n)) return -1;
  if (strcmp(type, "IHDR")) return fail(d, "the first chunk is %s, not IHDR", type);
  if (n != 13) return fail(d, "IHDR of %zu bytes (13)", n);
  dvpp_png_info *f = &d->info;
  uint32_t w = be32(s), h = be32(s + 4);
  f->bit_depth = s[8];
  f->color_type = s[9];
  if (w == 0 || h == 0 || w > 0x7FFFFFFFu || h > 0x7FFFFFFFu) return fail(d, "IHDR: %ux%u pixels", w, h);
  static const char *allowed[7] = {"1, 2, 4, 8, 16", NULL, "8, 16", "1, 2, 4, 8", "8, 16", NULL, "8, 16"};
  int ct = f->color_type, bd = f->bit_depth;
  if (ct > 6 || !allowed[ct]) return fail(d, "IHDR: colour type %d (0, 2, 3, 4 or 6)", ct);
  int bd_ok = bd == 8 || bd == 16 || ((ct == 0 || ct == 3) && (bd == 1 || bd == 2 || bd == 4));
  if (!bd_ok) return fail(d, "IHDR: bit depth %d for colour type %d (%s)", bd, ct, allowed[ct]);
  if (s[10] != 0) return fail(d, "IHDR: compression method %d (0)", s[10]);
  if (s[11] != 0) return fail(d, "IHDR: filter method %d (0)", s[11]);
  if (s[12] > 1) return fail(d, "IHDR: interlace method %d (0 or 1)", s[12]);
  if (ct == 3)
    return unsup(d, "colour type 3 (palette) is not supported (grey, RGB, grey + alpha, RGBA only)");
  if (bd != 8) return unsup(d, "bit depth %d is not supported (8 only)", bd);
  if (s[12] == 1) return unsup(d, "Adam7 interlaced PNG is not supported");
  if (w > DVPP_PNG_MAX_DIM || h > DVPP_PNG_MAX_DIM)
    return unsup(d, "%ux%u pixels: more than %d per side", w, h, DVPP_PNG_MAX_DIM);
  f->width = w;
  f->height = h;
  f->channels = ct == 0 ? 1 : ct == 2 ? 3 : ct == 4 ? 2 : 4;
  return 0;
}

int dvpp_png_info_read(const uint8_t *data, size_t size, dvpp_png_info *info, char *err, size_t n) {
  png d = {.p = data, .size = data ? size : 0, .err = err, .errn = n};
  size_t pos;
  if (read_ihdr(&d, &pos)) return d.unsupported ? -2 : -1;
  *info = d.info;
  return 0;
}

/* Walks the chunks after IHDR: with `idat` NULL checks them and sets *total
 * (the IDAT bytes), else copies the IDAT data there. */
static int walk(png *d, size_t pos, uint8_t *idat, size_t *total) {
  int seen_idat = 0, idat_done = 0, plte = 0;
  size_t copied = 0;
  for (;;) {
    char type[5];
    const uint8_t *s;
    size_t n, at = pos;
    if (chunk(d, &pos, type, &s, &n)) return -1;
    int is_idat = !strcmp(type, "IDAT");
    if (seen_idat && !is_idat) idat_done = 1;
    if (is_idat) {
      if (idat_done)
        return fail(d, "IDAT at offset %zu after another chunk: IDAT chunks must be consecutive", at);
      seen_idat = 1;
      if (idat) memcpy(idat + copied, s, n);
      copied += n;
    } else if (!strcmp(type, "IEND")) {
      if (!seen_idat) return fail(d, "IEND at offset %zu before any IDAT", at);
      *total = copied;
      return 0;
    } else if (!strcmp(type, "IHDR")) {
      return fail(d, "a second IHDR at offset %zu", at);
    } else if (!strcmp(type, "PLTE")) {
      if (d->info.color_type == 0 || d->info.color_type == 4)
        return fail(d, "PLTE at offset %zu in a grey image (colour type %d)", at, d->info.color_type);
      if (plte++ || seen_idat) return fail(d, "PLTE at offset %zu: a second one, or after IDAT", at);
      if (n == 0 || n % 3 || n > 768) return fail(d, "PLTE of %zu bytes (3 to 768, a multiple of 3)", n);
    } else if (type[0] >= 'A' && type[0] <= 'Z') {
      return unsup(d, "critical chunk %s at offset %zu is not known", type, at);
    } /* ancillary chunks: skipped */
  }
}

static uint8_t paeth(int a, int b, int c) {
  int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
  return (uint8_t)(pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
}

int dvpp_png_decode(const uint8_t *data, size_t size, const dvpp_png_out *out, char *err, size_t n) {
  png d = {.p = data, .size = data ? size : 0, .err = err, .errn = n};
  size_t pos, total = 0;
  if (read_ihdr(&d, &pos) || walk(&d, pos, NULL, &total)) return d.unsupported ? -2 : -1;
  const dvpp_png_info *f = &d.info;
  size_t bpp = (size_t)f->channels, rowbytes = (size_t)f->width * bpp,
         raw_size = (size_t)f->height * (1 + rowbytes);
  uint8_t *idat = malloc(total ? total : 1), *raw = malloc(raw_size);
  int r = -1;
  if (!idat || !raw) {
    fail(&d, "out of memory for a %ux%u picture", f->width, f->height);
    goto done;
  }
  walk(&d, pos, idat, &total);
  if (dvpp_inflate_zlib(idat, total, raw, raw_size, err, n)) goto done;
  const uint8_t *prev = NULL;
  for (size_t y = 0; y < f->height; y++) {
    uint8_t *row = raw + y * (1 + rowbytes), *px = row + 1;
    int ft = row[0];
    if (ft > 4) {
      fail(&d, "row %zu: filter type %d (0 to 4)", y, ft);
      goto done;
    }
    for (size_t i = 0; i < rowbytes; i++) {
      int a = i >= bpp ? px[i - bpp] : 0, b = prev ? prev[i] : 0, c = prev && i >= bpp ? prev[i - bpp] : 0;
      int pred = ft == 0 ? 0 : ft == 1 ? a : ft == 2 ? b : ft == 3 ? (a + b) / 2 : paeth(a, b, c);
      px[i] = (uint8_t)(px[i] + pred);
    }
    prev = px;
    uint8_t *o = out->pix + y * out->stride;
    for (size_t x = 0; x < f->width; x++, o += out->channels) {
      const uint8_t *s = px + x * bpp;
      int grey = f->channels <= 2;
      o[0] = s[0];
      o[1] = grey ? s[0] : s[1];
      o[2] = grey ? s[0] : s[2];
      if (out->channels == 4) o[3] = f->channels == 2 ? s[1] : f->channels == 4 ? s[3] : 255;
    }
  }
  r = 0;
done:
  free(idat);
  free(raw);
  return r ? (d.unsupported ? -2 : -1) : 0;
}
