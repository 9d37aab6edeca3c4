/* dvpp_jpeg.c - the baseline JPEG decoder of dvpp_jpeg.h.
 *
 * One pass over the markers: DQT, DHT and DRI fill the tables, SOF0 / SOF1
 * sizes one plane per component (padded to whole MCUs), each SOS decodes its
 * entropy-coded segment into those planes (Huffman, dequantization, a float
 * 8x8 inverse DCT rounded to nearest), EOI (or the end of the data after a
 * complete picture) ends it; the planes are then written out as YUV420SP.
 *
 * The bit reader never reads at or past `size`: at a marker or at the end it
 * feeds zero bits and counts them, and a block that needs any of them is
 * "entropy-coded data ends early". Huffman tables are checked to be prefix
 * codes when defined (no length overflows), symbols beyond the table are an
 * error, coefficient runs past 63 are an error, DC categories are at most 11.
 * Dimensions are at most DVPP_JPEG_MAX_DIM, so every plane size fits in
 * size_t with room; DC predictions accumulate in 64 bits.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/dvpp_dct.h"
#include "acl/dvpp_jpeg.h"

typedef struct huff {
  int defined;
  uint8_t fast_len[512], fast_val[512]; /* codes of up to 9 bits, indexed by the next 9 bits */
  int32_t mincode[17], maxcode[17];     /* per length; maxcode -1: none of that length */
  int valptr[17];
  uint8_t vals[256];
} huff;

typedef struct comp {
  int id, h, v, tq;
  int td, ta;     /* this scan's tables */
  size_t bw, bh;  /* blocks per row and column of the plane */
  uint8_t *plane; /* bw * 8 x bh * 8 samples, owned */
  int64_t dc_pred;
  int scanned;
} comp;

typedef struct dec {
  const uint8_t *p;
  size_t size, pos;
  char *err;
  size_t errn;
  uint16_t qt[4][64]; /* natural order */
  int qt_defined[4];
  huff dc[4], ac[4];
  unsigned restart; /* MCUs per restart interval, 0: none */
  int frame;        /* a frame header was read */
  int adobe_transform;
  int unsupported; /* the failure is a feature this decoder does not have */
  dvpp_jpeg_info info;
  comp c[3];
  size_t mcux, mcuy;
  /* the bit reader: the next nbits bits are the top of acc; the last `pad` of them are zero fill */
  uint64_t acc;
  int nbits, pad, marker, overrun;
  size_t bpos;
} dec;

static int fail(dec *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(dec *d, const char *fmt, ...) {
  if (!d->err || !d->errn) return -1;
  int k = snprintf(d->err, d->errn, "jpeg: ");
  if (k < 0 || (size_t)k >= d->errn) return -1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->err + k, d->errn - (size_t)k, fmt, ap);
  va_end(ap);
  return -1;
}

/* A failure for a feature the decoder does not have (dvpp_jpeg_* return -2). */
#define unsup(d, ...) ((d)->unsupported = 1, fail((d), __VA_ARGS__))

static unsigned be16(const uint8_t *p) { return (unsigned)p[0] << 8 | p[1]; }

/* --- tables */

static int read_dqt(dec *d, const uint8_t *s, size_t n) {
  while (n > 0) {
    int pq = s[0] >> 4, tq = s[0] & 15;
    size_t need = 1 + (pq ? 128 : 64);
    if (pq > 1) return fail(d, "DQT: precision %d of table %d (0 or 1 allowed)", pq, tq);
    if (tq > 3) return fail(d, "DQT: table index %d (0..3 allowed)", tq);
    if (n < need) return fail(d, "DQT: table %d needs %zu bytes, the segment has %zu", tq, need, n);
    for (int k = 0; k < 64; k++)
      d->qt[tq][dvpp_dct_zigzag[k]] = (uint16_t)(pq ? be16(s + 1 + 2 * k) : s[1 + k]);
    d->qt_defined[tq] = 1;
    s += need;
    n -= need;
  }
  return 0;
}

static int read_dht(dec *d, const uint8_t *s, size_t n) {
  while (n > 0) {
    int tc = s[0] >> 4, th = s[0] & 15;
    if (tc > 1 || th > 3)
      return fail(d, "DHT: table class %d index %d (class 0..1, index 0..3 allowed)", tc, th);
    if (n < 17) return fail(d, "DHT: table %d/%d is cut short (%zu bytes)", tc, th, n);
    size_t total = 0;
    for (int l = 0; l < 16; l++)
      total += s[1 + l];
    if (total > 256) return fail(d, "DHT: table %d/%d has %zu codes (at most 256)", tc, th, total);
    if (n < 17 + total)
      return fail(d, "DHT: table %d/%d needs %zu bytes, the segment has %zu", tc, th, 17 + total, n);
    huff *h = tc ? &d->ac[th] : &d->dc[th];
    memset(h, 0, sizeof *h);
    memcpy(h->vals, s + 17, total);
    int32_t code = 0;
    int k = 0;
    for (int len = 1; len <= 16; len++) {
      int cnt = s[len];
      h->valptr[len] = k;
      h->mincode[len] = code;
      h->maxcode[len] = cnt ? code + cnt - 1 : -1;
      for (int i = 0; i < cnt; i++, k++, code++) {
        if (code >= (1 << len)) return fail(d, "DHT: table %d/%d: the %d-bit codes overflow", tc, th, len);
        if (len <= 9)
          for (int f = code << (9 - len), e = (code + 1) << (9 - len); f < e; f++) {
            h->fast_len[f] = (uint8_t)len;
            h->fast_val[f] = h->vals[k];
          }
      }
      code <<= 1;
    }
    h->defined = 1;
    s += 17 + total;
    n -= 17 + total;
  }
  return 0;
}

static int read_sof(dec *d, const uint8_t *s, size_t n, int marker) {
  if (d->frame) return fail(d, "a second frame header (SOF%d)", marker - 0xC0);
  if (n < 6) return fail(d, "SOF%d: segment of %zu bytes (at least 6)", marker - 0xC0, n);
  dvpp_jpeg_info *f = &d->info;
  if (s[0] != 8) return unsup(d, "%d-bit samples are not supported (8-bit only)", s[0]);
  f->height = be16(s + 1);
  f->width = be16(s + 3);
  f->ncomp = s[5];
  if (f->height == 0)
    return unsup(d, "height 0 in the frame header (a height given by DNL) is not supported");
  if (f->width == 0) return fail(d, "width 0 in the frame header");
  if (f->width > DVPP_JPEG_MAX_DIM || f->height > DVPP_JPEG_MAX_DIM)
    return fail(d, "%ux%u pixels: more than %d per side", f->width, f->height, DVPP_JPEG_MAX_DIM);
  if (f->ncomp == 4) return unsup(d, "4 components (CMYK / YCCK) are not supported");
  if (f->ncomp != 1 && f->ncomp != 3) return unsup(d, "%d components (1 or 3 supported)", f->ncomp);
  if (n < 6 + 3 * (size_t)f->ncomp)
    return fail(d, "SOF%d: segment of %zu bytes for %d components", marker - 0xC0, n, f->ncomp);
  f->hmax = f->vmax = 1;
  for (int i = 0; i < f->ncomp; i++) {
    const uint8_t *cs = s + 6 + 3 * i;
    comp *c = &d->c[i];
    c->id = cs[0];
    c->h = cs[1] >> 4;
    c->v = cs[1] & 15;
    c->tq = cs[2];
    if (c->h < 1 || c->h > 4 || c->v < 1 || c->v > 4)
      return fail(d, "component %d: sampling factors %dx%d (1..4 allowed)", c->id, c->h, c->v);
    if (c->tq > 3) return fail(d, "component %d: quantization table %d (0..3 allowed)", c->id, c->tq);
    for (int j = 0; j < i; j++)
      if (d->c[j].id == c->id) return fail(d, "component id %d appears twice in the frame header", c->id);
    f->h[i] = c->h;
    f->v[i] = c->v;
    if (c->h > f->hmax) f->hmax = c->h;
    if (c->v > f->vmax) f->vmax = c->v;
  }
  if (f->ncomp == 3 && d->c[0].id == 'R' && d->c[1].id == 'G' && d->c[2].id == 'B')
    return unsup(d, "components named R, G, B (an RGB JPEG) are not supported");
  if (f->ncomp == 1) { /* one component: its MCU is one block whatever its factors */
    f->h[0] = f->v[0] = f->hmax = f->vmax = d->c[0].h = d->c[0].v = 1;
  }
  for (int i = 0; i < f->ncomp; i++)
    if (f->hmax % f->h[i] || f->vmax % f->v[i])
      return fail(d, "component %d: sampling %dx%d is not an integer fraction of %dx%d", d->c[i].id, f->h[i],
                  f->v[i], f->hmax, f->vmax);
  d->mcux = (f->width + 8 * (size_t)f->hmax - 1) / (8 * (size_t)f->hmax);
  d->mcuy = (f->height + 8 * (size_t)f->vmax - 1) / (8 * (size_t)f->vmax);
  for (int i = 0; i < f->ncomp; i++) {
    d->c[i].bw = d->mcux * (size_t)d->c[i].h;
    d->c[i].bh = d->mcuy * (size_t)d->c[i].v;
  }
  d->frame = 1;
  return 0;
}

/* --- the bit reader */

static void bits_reset(dec *d, size_t at) {
  d->acc = 0;
  d->nbits = d->pad = d->marker = d->overrun = 0;
  d->bpos = at;
}

static void bits_fill(dec *d) {
  while (d->nbits <= 56) {
    unsigned b = 0;
    int real = 0;
    if (!d->marker && d->bpos < d->size) {
      b = d->p[d->bpos];
      if (b != 0xFF) {
        d->bpos++;
        real = 1;
      } else if (d->bpos + 1 < d->size && d->p[d->bpos + 1] == 0) {
        d->bpos += 2; /* a stuffed 0xFF */
        real = 1;
      } else {
        d->marker = 1; /* stays on the marker's 0xFF */
        b = 0;
      }
    }
    if (!real) d->pad += 8;
    d->acc |= (uint64_t)b << (56 - d->nbits);
    d->nbits += 8;
  }
}

static unsigned bits_peek(dec *d, int n) { return (unsigned)(d->acc >> (64 - n)); }

static void bits_skip(dec *d, int n) {
  d->acc <<= n;
  d->nbits -= n;
  if (d->nbits < d->pad) {
    d->overrun = 1;
    d->pad = d->nbits;
  }
}

static int huff_decode(dec *d, const huff *h) {
  bits_fill(d);
  unsigned f = bits_peek(d, 9);
  if (h->fast_len[f]) {
    int v = h->fast_val[f];
    bits_skip(d, h->fast_len[f]);
    return v;
  }
  unsigned code = bits_peek(d, 16);
  for (int len = 10; len <= 16; len++) {
    int32_t c = (int32_t)(code >> (16 - len));
    if (h->maxcode[len] >= 0 && c <= h->maxcode[len] && c >= h->mincode[len]) {
      bits_skip(d, len);
      return h->vals[h->valptr[len] + (c - h->mincode[len])];
    }
  }
  return -1;
}

/* s (0..16) more bits as a signed value (T.81 F.2.2.1 EXTEND). */
static int receive_extend(dec *d, int s) {
  if (s == 0) return 0;
  bits_fill(d);
  int v = (int)bits_peek(d, s);
  bits_skip(d, s);
  return v < (1 << (s - 1)) ? v - (1 << s) + 1 : v;
}

/* --- blocks */

static int decode_block(dec *d, comp *c, size_t bx, size_t by) {
  float coef[64] = {0};
  const uint16_t *q = d->qt[c->tq];
  int t = huff_decode(d, &d->dc[c->td]);
  if (t < 0 || t > 11) return fail(d, "bad DC code in component %d, block (%zu, %zu)", c->id, bx, by);
  c->dc_pred += receive_extend(d, t);
  coef[0] = (float)c->dc_pred * q[0];
  for (int k = 1; k < 64;) {
    int rs = huff_decode(d, &d->ac[c->ta]);
    if (rs < 0) return fail(d, "bad AC code in component %d, block (%zu, %zu)", c->id, bx, by);
    int r = rs >> 4, s = rs & 15;
    if (s == 0) {
      if (r != 15) break; /* end of block */
      k += 16;
      continue;
    }
    k += r;
    if (k > 63)
      return fail(d, "AC coefficients run past 63 in component %d, block (%zu, %zu)", c->id, bx, by);
    coef[dvpp_dct_zigzag[k]] = (float)receive_extend(d, s) * q[dvpp_dct_zigzag[k]];
    k++;
  }
  size_t stride = c->bw * 8;
  dvpp_dct_inverse(coef, c->plane + by * 8 * stride + bx * 8, stride);
  return 0;
}

/* After `done` of `total` MCUs of a restart interval: skips to past the RSTn marker. */
static int next_restart(dec *d, size_t done, size_t total) {
  size_t i = d->bpos;
  while (i + 1 < d->size && !(d->p[i] == 0xFF && d->p[i + 1] != 0 && d->p[i + 1] != 0xFF))
    i++;
  if (i + 1 >= d->size)
    return fail(d, "entropy-coded data ends early: no restart marker after MCU %zu of %zu", done, total);
  if (d->p[i + 1] < 0xD0 || d->p[i + 1] > 0xD7)
    return fail(d, "restart marker expected after MCU %zu of %zu, found 0xFF%02X", done, total, d->p[i + 1]);
  bits_reset(d, i + 2);
  for (int k = 0; k < d->info.ncomp; k++)
    d->c[k].dc_pred = 0;
  return 0;
}

static int read_sos(dec *d, const uint8_t *s, size_t n, size_t data_at) {
  if (!d->frame) return fail(d, "a scan (SOS) before the frame header (SOF)");
  int ns = n ? s[0] : 0;
  if (ns < 1 || ns > d->info.ncomp)
    return fail(d, "SOS: %d components in the scan (1..%d)", ns, d->info.ncomp);
  if (n < 1 + 2 * (size_t)ns + 3) return fail(d, "SOS: segment of %zu bytes for %d components", n, ns);
  comp *sc[3];
  int blocks = 0;
  for (int i = 0; i < ns; i++) {
    int id = s[1 + 2 * i], td = s[2 + 2 * i] >> 4, ta = s[2 + 2 * i] & 15;
    comp *c = NULL;
    for (int k = 0; k < d->info.ncomp; k++)
      if (d->c[k].id == id) c = &d->c[k];
    if (!c) return fail(d, "SOS: component id %d is not in the frame", id);
    for (int k = 0; k < i; k++)
      if (sc[k] == c) return fail(d, "SOS: component id %d appears twice", id);
    if (td > 3 || ta > 3 || !d->dc[td].defined || !d->ac[ta].defined)
      return fail(d, "SOS: component %d uses Huffman tables DC %d / AC %d, not defined", id, td, ta);
    if (!d->qt_defined[c->tq])
      return fail(d, "component %d: quantization table %d is not defined", id, c->tq);
    c->td = td;
    c->ta = ta;
    c->dc_pred = 0;
    c->scanned = 1;
    blocks += c->h * c->v;
    sc[i] = c;
  }
  if (ns > 1 && blocks > 10) return fail(d, "SOS: %d blocks per MCU (at most 10)", blocks);
  for (int i = 0; i < ns; i++)
    if (!sc[i]->plane && !(sc[i]->plane = calloc(sc[i]->bw * sc[i]->bh, 64)))
      return fail(d, "out of memory for a %zux%zu plane", sc[i]->bw * 8, sc[i]->bh * 8);
  bits_reset(d, data_at);
  /* One component: its blocks in raster order, as many as cover its samples; else whole MCUs. */
  size_t cols = d->mcux, rows = d->mcuy;
  if (ns == 1) {
    const dvpp_jpeg_info *f = &d->info;
    size_t cw = ((size_t)f->width * (size_t)sc[0]->h + (size_t)f->hmax - 1) / (size_t)f->hmax;
    size_t ch = ((size_t)f->height * (size_t)sc[0]->v + (size_t)f->vmax - 1) / (size_t)f->vmax;
    cols = (cw + 7) / 8;
    rows = (ch + 7) / 8;
  }
  size_t total = cols * rows;
  for (size_t m = 0; m < total; m++) {
    if (d->restart && m > 0 && m % d->restart == 0 && next_restart(d, m, total)) return -1;
    size_t mx = m % cols, my = m / cols;
    if (ns == 1) {
      if (decode_block(d, sc[0], mx, my)) return -1;
    } else {
      for (int i = 0; i < ns; i++)
        for (int by = 0; by < sc[i]->v; by++)
          for (int bx = 0; bx < sc[i]->h; bx++)
            if (decode_block(d, sc[i], mx * (size_t)sc[i]->h + (size_t)bx,
                             my * (size_t)sc[i]->v + (size_t)by))
              return -1;
    }
    if (d->overrun) return fail(d, "entropy-coded data ends early: in MCU %zu of %zu", m + 1, total);
  }
  /* On to the next marker that is not a restart marker. */
  size_t i = d->bpos;
  while (i + 1 < d->size && !(d->p[i] == 0xFF && d->p[i + 1] != 0 && d->p[i + 1] != 0xFF &&
                              (d->p[i + 1] < 0xD0 || d->p[i + 1] > 0xD7)))
    i++;
  d->pos = i + 1 < d->size ? i : d->size;
  return 0;
}

/* --- markers */

/* Reads markers from SOI; with `decode` 0 stops at the first scan, else
 * decodes every scan up to EOI (or the end of the data). */
static int parse(dec *d, int decode) {
  const uint8_t *p = d->p;
  if (d->size < 4 || p[0] != 0xFF || p[1] != 0xD8)
    return fail(d, "not a JPEG stream (no SOI marker at the start)");
  d->pos = 2;
  d->adobe_transform = -1;
  for (;;) {
    if (d->pos >= d->size) {
      if (decode && d->frame) return 0; /* EOI missing: the scans so far are the picture */
      return fail(d, "the stream ends at offset %zu before %s", d->size,
                  d->frame ? "a scan" : "a frame header");
    }
    if (p[d->pos] != 0xFF)
      return fail(d, "byte 0x%02X at offset %zu where a marker belongs", p[d->pos], d->pos);
    while (d->pos < d->size && p[d->pos] == 0xFF)
      d->pos++;
    if (d->pos >= d->size) continue;
    int m = p[d->pos++];
    if (m == 0xD9) {
      if (!d->frame) return fail(d, "EOI before a frame header");
      return 0;
    }
    if ((m >= 0xD0 && m <= 0xD7) || m == 0x01) continue; /* no segment */
    if (d->pos + 2 > d->size)
      return fail(d, "marker 0xFF%02X at offset %zu: its length is cut off", m, d->pos - 2);
    size_t len = be16(p + d->pos);
    if (len < 2)
      return fail(d, "marker 0xFF%02X at offset %zu: segment length %zu (at least 2)", m, d->pos - 2, len);
    if (len > d->size - d->pos)
      return fail(d, "marker 0xFF%02X at offset %zu: segment length %zu runs past the end (%zu bytes)", m,
                  d->pos - 2, len, d->size);
    const uint8_t *s = p + d->pos + 2;
    size_t n = len - 2, next = d->pos + len;
    int r = 0;
    switch (m) {
    case 0xC0:
    case 0xC1:
      r = read_sof(d, s, n, m);
      if (!r && d->info.ncomp == 3 && d->adobe_transform == 0)
        r = unsup(d, "Adobe APP14 transform 0 (RGB components) is not supported");
      break;
    case 0xC2:
      return unsup(d, "progressive JPEG (SOF2) is not supported (baseline and extended sequential only)");
    case 0xC3: return unsup(d, "lossless JPEG (SOF3) is not supported");
    case 0xC5:
    case 0xC6:
    case 0xC7: return unsup(d, "hierarchical JPEG (SOF%d) is not supported", m - 0xC0);
    case 0xC9:
    case 0xCA:
    case 0xCB:
    case 0xCD:
    case 0xCE:
    case 0xCF: return unsup(d, "arithmetic-coded JPEG (SOF%d) is not supported", m - 0xC0);
    case 0xCC: return unsup(d, "arithmetic coding (DAC) is not supported");
    case 0xC4: r = read_dht(d, s, n); break;
    case 0xDB: r = read_dqt(d, s, n); break;
    case 0xDD:
      if (n < 2) return fail(d, "DRI: segment of %zu bytes", n);
      d->restart = be16(s);
      break;
    case 0xDC: return unsup(d, "DNL (a height given after the first scan) is not supported");
    case 0xEE:
      if (n >= 12 && !memcmp(s, "Adobe", 5)) d->adobe_transform = s[11];
      break;
    case 0xDA:
      if (!decode) {
        if (!d->frame) return fail(d, "a scan (SOS) before the frame header (SOF)");
        return 0;
      }
      if (read_sos(d, s, n, next)) return -1;
      continue;     /* read_sos set pos */
    default: break; /* APPn, COM and the rest: skipped */
    }
    if (r) return -1;
    d->pos = next;
  }
}

int dvpp_jpeg_info_read(const uint8_t *data, size_t size, dvpp_jpeg_info *info, char *err, size_t n) {
  dec d = {.p = data, .size = data ? size : 0, .err = err, .errn = n};
  if (parse(&d, 0)) return d.unsupported ? -2 : -1;
  *info = d.info;
  return 0;
}

/* The sample of component c under luma pixel (x, y). */
static uint8_t sample(const dec *d, const comp *c, size_t x, size_t y) {
  size_t sx = x / (size_t)(d->info.hmax / c->h), sy = y / (size_t)(d->info.vmax / c->v);
  return c->plane[sy * c->bw * 8 + sx];
}

int dvpp_jpeg_decode(const uint8_t *data, size_t size, const dvpp_jpeg_nv12 *out, char *err, size_t n) {
  dec d = {.p = data, .size = data ? size : 0, .err = err, .errn = n};
  int r = parse(&d, 1);
  for (int i = 0; !r && i < d.info.ncomp; i++)
    if (!d.c[i].scanned) r = fail(&d, "component %d has no scan before the end of the stream", d.c[i].id);
  if (!r) {
    size_t w = d.info.width, h = d.info.height;
    for (size_t y = 0; y < h; y++)
      for (size_t x = 0; x < w; x++)
        out->y[y * out->y_stride + x] = sample(&d, &d.c[0], x, y);
    for (size_t cy = 0; cy < (h + 1) / 2; cy++) {
      uint8_t *row = out->uv + cy * out->uv_stride;
      for (size_t cx = 0; cx < (w + 1) / 2; cx++) {
        unsigned u = 128, v = 128;
        if (d.info.ncomp == 3) {
          size_t x0 = 2 * cx, x1 = x0 + 1 < w ? x0 + 1 : x0, y0 = 2 * cy, y1 = y0 + 1 < h ? y0 + 1 : y0;
          u = (sample(&d, &d.c[1], x0, y0) + sample(&d, &d.c[1], x1, y0) + sample(&d, &d.c[1], x0, y1) +
               sample(&d, &d.c[1], x1, y1) + 2) /
              4;
          v = (sample(&d, &d.c[2], x0, y0) + sample(&d, &d.c[2], x1, y0) + sample(&d, &d.c[2], x0, y1) +
               sample(&d, &d.c[2], x1, y1) + 2) /
              4;
        }
        row[2 * cx] = (uint8_t)(out->vu_order ? v : u);
        row[2 * cx + 1] = (uint8_t)(out->vu_order ? u : v);
      }
    }
  }
  for (int i = 0; i < 3; i++)
    free(d.c[i].plane);
  return r ? (d.unsupported ? -2 : -1) : 0;
}
