/* dvpp_inflate.c - the inflater of dvpp_inflate.h.
 *
 * Canonical Huffman codes are kept as counts per length and the symbols in
 * code order. Codes of up to FAST_BITS bits are looked up in a table indexed
 * by the next FAST_BITS input bits (filled from the same counts, so every
 * entry is a symbol of the code); longer ones, and bit patterns no short
 * code has, are decoded one bit at a time (the first code of each length
 * computed on the way), so no table can be indexed out of range and a code
 * that no symbol has is an error. Code length sets are checked when built:
 * an over-subscribed set is an error, an incomplete one is allowed (its
 * missing codes are errors when met). The bit reader feeds zero bits past
 * the end and counts them; consuming one of them is an overrun, which the
 * caller turns into "ends early" (looking ahead into them is not).
 * Every output write is bounded by out_size, every back-reference by the
 * bytes written so far.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "acl/dvpp_inflate.h"

enum { MAX_BITS = 15, MAX_LIT = 288, MAX_DIST = 30, FAST_BITS = 9 };

typedef struct huff {
  uint16_t count[MAX_BITS + 1];
  uint16_t sym[MAX_LIT];
  uint16_t fast[1 << FAST_BITS]; /* symbol << 4 | length of the code the next bits start with; 0: none that
                                    short */
} huff;

typedef struct state {
  const uint8_t *in;
  size_t n, pos;
  uint32_t bitbuf; /* the next bitcnt bits, least significant first; the last `pad` of them are zero fill */
  int bitcnt, pad, overrun;
  uint8_t *out;
  size_t cap, len;
  char *err;
  size_t errn;
} state;

static int fail(state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(state *s, const char *fmt, ...) {
  if (!s->err || !s->errn) return -1;
  int k = snprintf(s->err, s->errn, "png: ");
  if (k < 0 || (size_t)k >= s->errn) return -1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->err + k, s->errn - (size_t)k, fmt, ap);
  va_end(ap);
  return -1;
}

/* At least `need` (0..24) bits in bitbuf, zero fill past the end. */
static void fill(state *s, int need) {
  while (s->bitcnt < need) {
    unsigned b = 0;
    if (s->pos < s->n)
      b = s->in[s->pos++];
    else
      s->pad += 8;
    s->bitbuf |= (uint32_t)b << s->bitcnt;
    s->bitcnt += 8;
  }
}

static void consume(state *s, int n) {
  s->bitbuf >>= n;
  s->bitcnt -= n;
  if (s->bitcnt < s->pad) {
    s->overrun = 1;
    s->pad = s->bitcnt;
  }
}

/* `need` (0..16) bits, least significant first. */
static unsigned bits(state *s, int need) {
  fill(s, need);
  unsigned v = s->bitbuf & ((1u << need) - 1);
  consume(s, need);
  return v;
}

/* Back to a byte boundary: the partial byte's bits dropped, whole bytes
 * already read ahead given back (stored blocks and the Adler-32 are bytes). */
static void align(state *s) {
  while (s->bitcnt >= 8) {
    if (s->pad >= 8)
      s->pad -= 8;
    else
      s->pos--;
    s->bitcnt -= 8;
  }
  s->bitbuf = 0;
  s->bitcnt = s->pad = 0;
}

/* Builds h from n code lengths (0..15); -1 when over-subscribed. */
static int build(huff *h, const uint8_t *lengths, int n) {
  uint16_t offs[MAX_BITS + 1];
  memset(h->count, 0, sizeof h->count);
  for (int i = 0; i < n; i++)
    h->count[lengths[i]]++;
  h->count[0] = 0;
  int left = 1;
  for (int len = 1; len <= MAX_BITS; len++) {
    left = 2 * left - h->count[len];
    if (left < 0) return -1;
  }
  offs[1] = 0;
  for (int len = 1; len < MAX_BITS; len++)
    offs[len + 1] = (uint16_t)(offs[len] + h->count[len]);
  for (int i = 0; i < n; i++)
    if (lengths[i]) h->sym[offs[lengths[i]]++] = (uint16_t)i;
  /* the short codes into the table: code `first + k` of length len, bit-reversed (deflate sends codes from
   * their most significant bit), repeated under every value of the bits after it */
  memset(h->fast, 0, sizeof h->fast);
  int first = 0, index = 0;
  for (int len = 1; len <= FAST_BITS; len++) {
    for (int k = 0; k < h->count[len]; k++) {
      unsigned code = (unsigned)(first + k), rev = 0;
      for (int b = 0; b < len; b++)
        rev |= ((code >> b) & 1u) << (len - 1 - b);
      for (unsigned i = rev; i < (1u << FAST_BITS); i += 1u << len)
        h->fast[i] = (uint16_t)(h->sym[index + k] << 4 | len);
    }
    index += h->count[len];
    first = (first + h->count[len]) << 1;
  }
  return 0;
}

/* The next symbol of h, or -1 (a code no symbol has). */
static int decode(state *s, const huff *h) {
  fill(s, FAST_BITS);
  unsigned e = h->fast[s->bitbuf & ((1u << FAST_BITS) - 1)];
  if (e) {
    consume(s, (int)(e & 15));
    return (int)(e >> 4);
  }
  int code = 0, first = 0, index = 0;
  for (int len = 1; len <= MAX_BITS; len++) {
    code |= (int)bits(s, 1);
    int count = h->count[len];
    if (code - first < count) return h->sym[index + (code - first)];
    index += count;
    first = (first + count) << 1;
    code <<= 1;
  }
  return -1;
}

static const uint16_t len_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                      31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t dist_base[30] = {1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                       33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                       1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                       6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

/* One Huffman-coded block's symbols up to its end-of-block code. */
static int codes(state *s, const huff *lit, const huff *dist) {
  for (;;) {
    int sym = decode(s, lit);
    if (s->overrun) return fail(s, "the compressed data ends early (at %zu inflated bytes)", s->len);
    if (sym < 0) return fail(s, "an invalid literal / length code after %zu inflated bytes", s->len);
    if (sym < 256) {
      if (s->len >= s->cap)
        return fail(s, "the inflated data is longer than the picture's %zu bytes", s->cap);
      s->out[s->len++] = (uint8_t)sym;
      continue;
    }
    if (sym == 256) return 0;
    sym -= 257;
    if (sym >= 29) return fail(s, "length code %d (at most 285) after %zu inflated bytes", sym + 257, s->len);
    size_t length = len_base[sym] + bits(s, len_extra[sym]);
    int d = decode(s, dist);
    if (s->overrun) return fail(s, "the compressed data ends early (at %zu inflated bytes)", s->len);
    if (d < 0 || d >= MAX_DIST) return fail(s, "an invalid distance code after %zu inflated bytes", s->len);
    size_t distance = dist_base[d] + bits(s, dist_extra[d]);
    if (s->overrun) return fail(s, "the compressed data ends early (at %zu inflated bytes)", s->len);
    if (distance > s->len)
      return fail(s, "distance %zu reaches before the start (%zu bytes inflated)", distance, s->len);
    if (length > s->cap - s->len)
      return fail(s, "the inflated data is longer than the picture's %zu bytes", s->cap);
    for (size_t i = 0; i < length; i++, s->len++)
      s->out[s->len] = s->out[s->len - distance];
  }
}

static int stored(state *s) {
  align(s);
  if (s->n - s->pos < 4) return fail(s, "a stored block's header is cut off");
  unsigned len = s->in[s->pos] | (unsigned)s->in[s->pos + 1] << 8;
  unsigned nlen = s->in[s->pos + 2] | (unsigned)s->in[s->pos + 3] << 8;
  s->pos += 4;
  if (len != (~nlen & 0xFFFFu))
    return fail(s, "a stored block's length %u does not match its complement", len);
  if (len > s->n - s->pos) return fail(s, "a stored block of %u bytes runs past the data", len);
  if (len > s->cap - s->len)
    return fail(s, "the inflated data is longer than the picture's %zu bytes", s->cap);
  memcpy(s->out + s->len, s->in + s->pos, len);
  s->pos += len;
  s->len += len;
  return 0;
}

static huff fixed_lit, fixed_dist;
static pthread_once_t fixed_once = PTHREAD_ONCE_INIT;

static void fixed_init(void) {
  uint8_t l[MAX_LIT];
  int i = 0;
  for (; i < 144; i++)
    l[i] = 8;
  for (; i < 256; i++)
    l[i] = 9;
  for (; i < 280; i++)
    l[i] = 7;
  for (; i < MAX_LIT; i++)
    l[i] = 8;
  build(&fixed_lit, l, MAX_LIT);
  for (i = 0; i < MAX_DIST; i++)
    l[i] = 5;
  build(&fixed_dist, l, MAX_DIST);
}

static int fixed(state *s) {
  pthread_once(&fixed_once, fixed_init);
  return codes(s, &fixed_lit, &fixed_dist);
}

static int dynamic(state *s) {
  static const uint8_t order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
  uint8_t lengths[MAX_LIT + MAX_DIST];
  huff lencode, lit, dist;
  int nlit = (int)bits(s, 5) + 257, ndist = (int)bits(s, 5) + 1, ncode = (int)bits(s, 4) + 4;
  if (s->overrun) return fail(s, "a dynamic block's header is cut off");
  if (nlit > 286 || ndist > MAX_DIST)
    return fail(s, "a dynamic block with %d literal / length and %d distance codes (at most 286 and 30)",
                nlit, ndist);
  memset(lengths, 0, 19);
  for (int i = 0; i < ncode; i++)
    lengths[order[i]] = (uint8_t)bits(s, 3);
  if (build(&lencode, lengths, 19)) return fail(s, "a dynamic block's code length code is over-subscribed");
  for (int i = 0; i < nlit + ndist;) {
    int sym = decode(s, &lencode);
    if (s->overrun) return fail(s, "a dynamic block's code lengths are cut off");
    if (sym < 0) return fail(s, "an invalid code length code in a dynamic block");
    if (sym < 16) {
      lengths[i++] = (uint8_t)sym;
      continue;
    }
    int rep, val = 0;
    if (sym == 16) {
      if (i == 0) return fail(s, "a dynamic block repeats a code length before the first");
      val = lengths[i - 1];
      rep = 3 + (int)bits(s, 2);
    } else if (sym == 17) {
      rep = 3 + (int)bits(s, 3);
    } else {
      rep = 11 + (int)bits(s, 7);
    }
    if (i + rep > nlit + ndist)
      return fail(s, "a dynamic block's code lengths repeat past its %d codes", nlit + ndist);
    while (rep--)
      lengths[i++] = (uint8_t)val;
  }
  if (lengths[256] == 0) return fail(s, "a dynamic block without an end-of-block code");
  if (build(&lit, lengths, nlit))
    return fail(s, "a dynamic block's literal / length code is over-subscribed");
  if (build(&dist, lengths + nlit, ndist))
    return fail(s, "a dynamic block's distance code is over-subscribed");
  return codes(s, &lit, &dist);
}

static uint32_t adler32(const uint8_t *p, size_t n) {
  uint32_t a = 1, b = 0;
  while (n) {
    size_t k = n < 5552 ? n : 5552; /* the most bytes before b can overflow 32 bits */
    n -= k;
    while (k--) {
      a += *p++;
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return b << 16 | a;
}

int dvpp_inflate_zlib(const uint8_t *in, size_t n, uint8_t *out, size_t out_size, char *err, size_t errn) {
  state s = {.in = in, .n = in ? n : 0, .out = out, .cap = out_size, .err = err, .errn = errn};
  if (s.n < 2) return fail(&s, "the zlib stream is cut off (%zu bytes)", s.n);
  unsigned cmf = in[0], flg = in[1];
  if ((cmf & 15) != 8 || (cmf >> 4) > 7)
    return fail(&s, "zlib header 0x%02X%02X: not deflate with a window of at most 32 KiB", cmf, flg);
  if ((cmf * 256 + flg) % 31) return fail(&s, "zlib header 0x%02X%02X: its check bits are wrong", cmf, flg);
  if (flg & 0x20) return fail(&s, "zlib header 0x%02X%02X: a preset dictionary is not allowed", cmf, flg);
  s.pos = 2;
  int last;
  do {
    last = (int)bits(&s, 1);
    int type = (int)bits(&s, 2);
    if (s.overrun) return fail(&s, "the compressed data ends early (at %zu inflated bytes)", s.len);
    int r = type == 0   ? stored(&s)
            : type == 1 ? fixed(&s)
            : type == 2 ? dynamic(&s)
                        : fail(&s, "deflate block type 3");
    if (r) return -1;
  } while (!last);
  if (s.len != s.cap)
    return fail(&s, "the inflated data is %zu bytes, the picture's rows need %zu", s.len, s.cap);
  align(&s);
  if (s.n - s.pos < 4) return fail(&s, "the Adler-32 check after the compressed data is cut off");
  uint32_t want = (uint32_t)in[s.pos] << 24 | (uint32_t)in[s.pos + 1] << 16 | (uint32_t)in[s.pos + 2] << 8 |
                  in[s.pos + 3];
  uint32_t got = adler32(out, s.len);
  if (want != got) return fail(&s, "Adler-32 0x%08X of the inflated data, the stream says 0x%08X", got, want);
  return 0;
}
