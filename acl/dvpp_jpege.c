/* dvpp_jpege.c - the baseline JPEG encoder of dvpp_jpege.h.
 *
 * The headers, then one interleaved scan: per MCU (16x16 luma pixels for
 * 4:2:0 input, 16x8 for 4:2:2) the luma blocks in raster order, one Cb
 * and one Cr block; each block level-shifted, forward DCT (dvpp_dct.c),
 * divided by its quantizer and rounded to nearest (half away from zero),
 * then Huffman-coded in zigzag order (DC as the difference from the
 * component's previous block, AC as run / size pairs with ZRL and EOB).
 * AC values are clamped to +-1023 and DC to -1024..1023 (8-bit samples
 * never exceed them; the clamp keeps every value inside the tables'
 * categories). The bit writer stuffs a zero after each 0xFF and stops
 * writing at `cap`, so the encoder never writes past the caller's buffer.
 */
#include <string.h>

#include "acl/dvpp_dct.h"
#include "acl/dvpp_jpege.h"

/* T.81 Annex K.1: the example quantization tables (natural order). */
static const uint8_t base_q[2][64] = {
    {16, 11,  10,  16, 24, 40, 51, 61, 12,  12,  14,  19,  26, 58, 60, 55,  14,  13,  16,  24, 40, 57,
     69, 56,  14,  17, 22, 29, 51, 87, 80,  62,  18,  22,  37, 56, 68, 109, 103, 77,  24,  35, 55, 64,
     81, 104, 113, 92, 49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98,  112, 100, 103, 99},
    {17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99, 24, 26, 56, 99, 99, 99,
     99, 99, 47, 66, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
     99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99}};

/* T.81 Annex K.3: the example Huffman tables: code counts per length 1..16, then the symbols. */
typedef struct huff_spec {
  uint8_t bits[16];
  uint8_t vals[162];
  int nvals;
} huff_spec;

static const huff_spec dc_spec[2] = {
    {{0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 12},
    {{0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 12}};

static const huff_spec ac_spec[2] = {
    {{0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7d},
     {0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07, 0x22,
      0x71, 0x14, 0x32, 0x81, 0x91, 0xa1, 0x08, 0x23, 0x42, 0xb1, 0xc1, 0x15, 0x52, 0xd1, 0xf0, 0x24, 0x33,
      0x62, 0x72, 0x82, 0x09, 0x0a, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x34,
      0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54, 0x55,
      0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75, 0x76,
      0x77, 0x78, 0x79, 0x7a, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96,
      0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5,
      0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4,
      0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf1,
      0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa},
     162},
    {{0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77},
     {0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31, 0x06, 0x12, 0x41, 0x51, 0x07, 0x61, 0x71, 0x13,
      0x22, 0x32, 0x81, 0x08, 0x14, 0x42, 0x91, 0xa1, 0xb1, 0xc1, 0x09, 0x23, 0x33, 0x52, 0xf0, 0x15, 0x62,
      0x72, 0xd1, 0x0a, 0x16, 0x24, 0x34, 0xe1, 0x25, 0xf1, 0x17, 0x18, 0x19, 0x1a, 0x26, 0x27, 0x28, 0x29,
      0x2a, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54,
      0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75,
      0x76, 0x77, 0x78, 0x79, 0x7a, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x92, 0x93, 0x94,
      0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3,
      0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2,
      0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea,
      0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa},
     162}};

/* The longest code of a table of each kind (for dvpp_jpege_bound): Annex K's DC tables reach 9 (luma)
 * and 11 (chroma) bits, its AC tables 16. */
enum { DC_MAX_CODE = 11, AC_MAX_CODE = 16, HEADER_BYTES = 1024 };

typedef struct code_table {
  uint16_t code[256];
  uint8_t size[256]; /* 0: no code for that symbol */
} code_table;

static void build_codes(const huff_spec *s, code_table *t) {
  memset(t, 0, sizeof *t);
  unsigned code = 0;
  int k = 0;
  for (int len = 1; len <= 16; len++) {
    for (int i = 0; i < s->bits[len - 1]; i++, k++) {
      t->code[s->vals[k]] = (uint16_t)code++;
      t->size[s->vals[k]] = (uint8_t)len;
    }
    code <<= 1;
  }
}

/* The output: bytes appended up to cap; past it nothing is written and `full` is set. */
typedef struct writer {
  uint8_t *out;
  size_t cap, len;
  int full;
  uint64_t acc; /* the low `n` bits are pending, most significant first */
  int n;
} writer;

static void put_byte(writer *w, unsigned b) {
  if (w->len < w->cap)
    w->out[w->len++] = (uint8_t)b;
  else
    w->full = 1;
}

static void put16(writer *w, unsigned v) {
  put_byte(w, v >> 8);
  put_byte(w, v & 0xFF);
}

/* `size` (0..16) bits of `code` into the entropy-coded segment, 0xFF bytes stuffed. */
static void put_bits(writer *w, unsigned code, int size) {
  w->acc = (w->acc << size) | (code & ((1u << size) - 1));
  w->n += size;
  while (w->n >= 8) {
    unsigned b = (unsigned)(w->acc >> (w->n - 8)) & 0xFF;
    put_byte(w, b);
    if (b == 0xFF) put_byte(w, 0);
    w->n -= 8;
  }
}

/* Pads the last byte with one bits (T.81 F.1.2.3). */
static void flush_bits(writer *w) {
  if (w->n) put_bits(w, 0x7F, 8 - w->n);
}

static int category(int v) {
  unsigned a = (unsigned)(v < 0 ? -v : v);
  return a ? 32 - __builtin_clz(a) : 0;
}

/* v in its category's `n` bits (T.81 F.1.2.1: negative values as v - 1). */
static void put_value(writer *w, int v, int n) {
  if (n) put_bits(w, (unsigned)(v < 0 ? v - 1 : v), n);
}

/* c / q (as c times 1 / q) rounded to nearest, half away from zero, clamped to lo..hi. */
static int quantize(float c, float inv_q, int lo, int hi) {
  float r = c * inv_q;
  int v = r >= 0 ? (int)(r + 0.5f) : -(int)(-r + 0.5f);
  return v < lo ? lo : v > hi ? hi : v;
}

typedef struct enc {
  writer w;
  uint16_t q[2][64];  /* natural order */
  float inv_q[2][64]; /* 1 / q */
  code_table dc[2], ac[2];
  int pred[3];
} enc;

static void encode_block(enc *e, const float *samples, int comp) {
  int t = comp ? 1 : 0;
  float coef[64];
  dvpp_dct_forward(samples, coef);
  int zz[64];
  for (int k = 0; k < 64; k++) {
    int nat = dvpp_dct_zigzag[k];
    zz[k] = quantize(coef[nat], e->inv_q[t][nat], k ? -1023 : -1024, 1023);
  }
  int diff = zz[0] - e->pred[comp], n = category(diff);
  e->pred[comp] = zz[0];
  put_bits(&e->w, e->dc[t].code[n], e->dc[t].size[n]);
  put_value(&e->w, diff, n);
  int run = 0;
  for (int k = 1; k < 64; k++) {
    if (!zz[k]) {
      run++;
      continue;
    }
    for (; run > 15; run -= 16)
      put_bits(&e->w, e->ac[t].code[0xF0], e->ac[t].size[0xF0]);
    n = category(zz[k]);
    int rs = run << 4 | n;
    put_bits(&e->w, e->ac[t].code[rs], e->ac[t].size[rs]);
    put_value(&e->w, zz[k], n);
    run = 0;
  }
  if (run) put_bits(&e->w, e->ac[t].code[0], e->ac[t].size[0]);
}

/* Where a layout keeps its samples: luma at y[row * stride + x * ystep + yoff], chroma pair cx of a
 * chroma row at base[row * stride + cx * cstep + uoff / voff]. */
typedef struct layout_map {
  int ystep, yoff, cstep, uoff, voff, packed;
} layout_map;

static const layout_map maps[] = {
    [DVPP_JPEGE_NV12] = {1, 0, 2, 0, 1, 0}, [DVPP_JPEGE_NV21] = {1, 0, 2, 1, 0, 0},
    [DVPP_JPEGE_YUYV] = {2, 0, 4, 1, 3, 1}, [DVPP_JPEGE_UYVY] = {2, 1, 4, 0, 2, 1},
    [DVPP_JPEGE_YVYU] = {2, 0, 4, 3, 1, 1}, [DVPP_JPEGE_VYUY] = {2, 1, 4, 2, 0, 1}};

static void write_headers(enc *e, const dvpp_jpege_in *in, int vsamp) {
  writer *w = &e->w;
  static const uint8_t jfif[] = {0xFF, 0xD8, 0xFF, 0xE0, 0, 16, 'J', 'F', 'I', 'F',
                                 0,    1,    1,    0,    0, 1,  0,   1,   0,   0};
  for (size_t i = 0; i < sizeof jfif; i++)
    put_byte(w, jfif[i]);
  put16(w, 0xFFDB);
  put16(w, 2 + 2 * 65);
  for (int t = 0; t < 2; t++) {
    put_byte(w, (unsigned)t);
    for (int k = 0; k < 64; k++)
      put_byte(w, e->q[t][dvpp_dct_zigzag[k]]);
  }
  put16(w, 0xFFC0);
  put16(w, 8 + 3 * 3);
  put_byte(w, 8);
  put16(w, in->height);
  put16(w, in->width);
  put_byte(w, 3);
  for (int c = 0; c < 3; c++) {
    put_byte(w, (unsigned)c + 1);
    put_byte(w, c ? 0x11 : (unsigned)(0x20 | vsamp));
    put_byte(w, c ? 1 : 0);
  }
  put16(w, 0xFFC4);
  put16(w, 2 + 2 * (17 + 12) + 2 * (17 + 162));
  for (int cls = 0; cls < 2; cls++)
    for (int t = 0; t < 2; t++) {
      const huff_spec *s = cls ? &ac_spec[t] : &dc_spec[t];
      put_byte(w, (unsigned)(cls << 4 | t));
      for (int l = 0; l < 16; l++)
        put_byte(w, s->bits[l]);
      for (int k = 0; k < s->nvals; k++)
        put_byte(w, s->vals[k]);
    }
  put16(w, 0xFFDA);
  put16(w, 6 + 2 * 3);
  put_byte(w, 3);
  for (int c = 0; c < 3; c++) {
    put_byte(w, (unsigned)c + 1);
    put_byte(w, c ? 0x11 : 0x00);
  }
  put_byte(w, 0);
  put_byte(w, 63);
  put_byte(w, 0);
}

uint64_t dvpp_jpege_bound(uint32_t width, uint32_t height, dvpp_jpege_layout layout) {
  int vsamp = maps[layout].packed ? 1 : 2;
  uint64_t mcus = (uint64_t)((width + 15) / 16) * ((height + 8u * vsamp - 1) / (8u * vsamp));
  uint64_t blocks = mcus * (uint64_t)(2 * vsamp + 2);
  /* a block: the DC code and 11 bits, 63 AC codes of 16 bits with 10 bits each (no EOB then) */
  uint64_t bits = DC_MAX_CODE + 11 + 63 * (AC_MAX_CODE + 10);
  return HEADER_BYTES + blocks * 2 * ((bits + 7) / 8);
}

int dvpp_jpege_encode(const dvpp_jpege_in *in, int quality, uint8_t *out, size_t cap, size_t *len_out) {
  enc e;
  memset(&e, 0, sizeof e);
  e.w = (writer){out, cap, 0, 0, 0, 0};
  if (quality < 1) quality = 1;
  if (quality > 100) quality = 100;
  int scale = quality < 50 ? 5000 / quality : 200 - 2 * quality;
  for (int t = 0; t < 2; t++) {
    for (int k = 0; k < 64; k++) {
      int v = (base_q[t][k] * scale + 50) / 100;
      e.q[t][k] = (uint16_t)(v < 1 ? 1 : v > 255 ? 255 : v);
      e.inv_q[t][k] = 1.0f / (float)e.q[t][k];
    }
    build_codes(&dc_spec[t], &e.dc[t]);
    build_codes(&ac_spec[t], &e.ac[t]);
  }
  const layout_map *m = &maps[in->layout];
  int vsamp = m->packed ? 1 : 2;
  write_headers(&e, in, vsamp);
  const uint8_t *cbase = m->packed ? in->y : in->uv;
  size_t w = in->width, h = in->height, cw = w / 2, ch = m->packed ? h : h / 2;
  size_t mw = 16, mh = 8 * (size_t)vsamp;
  float blk[64];
  for (size_t my = 0; my < (h + mh - 1) / mh; my++)
    for (size_t mx = 0; mx < (w + mw - 1) / mw; mx++) {
      for (int by = 0; by < vsamp; by++)
        for (int bx = 0; bx < 2; bx++) {
          for (int j = 0; j < 8; j++) {
            size_t y = my * mh + (size_t)by * 8 + (size_t)j;
            const uint8_t *row = in->y + (y < h ? y : h - 1) * in->stride;
            for (int i = 0; i < 8; i++) {
              size_t x = mx * mw + (size_t)bx * 8 + (size_t)i;
              blk[j * 8 + i] = (float)row[(x < w ? x : w - 1) * (size_t)m->ystep + (size_t)m->yoff] - 128.0f;
            }
          }
          encode_block(&e, blk, 0);
        }
      for (int c = 1; c < 3; c++) {
        size_t off = (size_t)(c == 1 ? m->uoff : m->voff);
        for (int j = 0; j < 8; j++) {
          size_t y = my * 8 + (size_t)j;
          const uint8_t *row = cbase + (y < ch ? y : ch - 1) * in->stride;
          for (int i = 0; i < 8; i++) {
            size_t x = mx * 8 + (size_t)i;
            blk[j * 8 + i] = (float)row[(x < cw ? x : cw - 1) * (size_t)m->cstep + off] - 128.0f;
          }
        }
        encode_block(&e, blk, c);
      }
      if (e.w.full) return -1;
    }
  flush_bits(&e.w);
  put16(&e.w, 0xFFD9);
  if (e.w.full) return -1;
  *len_out = e.w.len;
  return 0;
}
