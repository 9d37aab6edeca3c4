/* kernels_qconv_avx2.c - the AVX2 QCONV2D tile (kernels_qconv.h; what the
 * x86 tiles share is in kernels_qconv_x86.h).
 *
 * AVX2: x and the weights both widened to 16 bits before the loop (x's
 * rows per chunk of K and pass of pixels, the weights per chunk and output
 * block), and vpmaddwd on a pair of k: a pixel's pair broadcast from
 * memory against 8 output channels' pair, the two products summed into
 * int32 (exact: no saturation, unlike vpmaddubsw, whose u8 x i8 pairs
 * leave int16 for weights past +-64, i.e. in every per-channel symmetric
 * layer). A micro-tile of 6 pixels x 16 output channels keeps 12 sum
 * registers of 8 channels' sums in order: 24 vector ALU uops per 192
 * multiply-adds (avx2_blocks says more).
 */
#include "runtime/kernels_qconv_x86.h"

#if defined(__x86_64__) && defined(__GNUC__)

/* An output block's store constants (avx2_store, avx2_store_epi) for
 * one image, set once per (tile, block): y's bytes may alias g, so the
 * compiler would otherwise read g's fields, reload bias and mult and
 * rebuild every broadcast at each pixel's store (MobileNetV2's 16 -> 96
 * 1x1: about as much work as the pixel's vpmaddwd); from q a store only
 * loads ready vectors. Halves h = 0, 1 are channels co0..co0+7 and
 * co0+8..co0+15, in order. */
typedef struct avx2_rq {
  __m256i bias[2]; /* epi 0: bias; epi: nzp x bias (the column sums' term) */
  __m256 mult[2];  /* epi 0: mult; epi 2: scale (maskloaded: scale has N elements) */
  __m256 fbias[2]; /* epi 2 with g->fbias */
  __m256 flo, fhi; /* epi 0: clo - y_zp, chi - y_zp; epi 2: g->flo, g->fhi */
  __m256i yzp;
  __m256i in[2]; /* epi: lanes below cout */
  __m128i keep;  /* epi 0: the 16 lanes below cout */
  /* the residual's (avx2_residual) */
  __m256i rzp, ozp, olo, ohi;
  __m256 cs, rs, os, big, nbig;
  __m128i rmask;
  const uint8_t *r;
  uint8_t *y;          /* g->y */
  const int32_t *rowc; /* g->rowc */
  size_t at0, yps;     /* y's offset of (img, nb, pixel 0); per pixel */
  int64_t real;        /* channels of the block below cout (may exceed 16) */
  int epi, ypad, ycut, fbias_on, fclamp, rmul, s8y, second;
} avx2_rq;

/* Not inlined: q then stays in memory, read at each store, instead of
 * being split into values that the compiler keeps in registers across the
 * tile's K loop (there they pushed the sums to the stack: ResNet-18's stem
 * 1.34x slower). */
__attribute__((target("avx2,fma,f16c"), noinline)) static void
avx2_rq_init(const rt_qconv_geom *g, int64_t img, int64_t nb, avx2_rq *q) {
  const int64_t co0 = nb * C0;
  q->real = g->cout - co0;
  q->epi = g->epi, q->ypad = g->ypad, q->ycut = g->ycut, q->fclamp = g->fclamp,
  q->fbias_on = g->fbias != NULL;
  q->rmul = g->rmul, q->s8y = g->lo < 0, q->r = g->r, q->y = g->y, q->rowc = g->rowc;
  q->at0 = rt_qconv_yat(g, img, nb, 0), q->yps = g->yps;
  q->second = g->cout > co0 + 8 || g->ypad;
  for (int h = 0; h < 2; h++) {
    const int64_t real = q->real - 8 * h;
    q->in[h] = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(real < 8 ? real : 8)),
                                  _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256i b = _mm256_loadu_si256((const __m256i *)(g->bias + co0 + 8 * h)); /* padded to C1out*16 */
    if (g->epi) { /* scale and fbias only with epi 2 */
      q->bias[h] = _mm256_mullo_epi32(b, _mm256_set1_epi32(g->nzp));
      q->mult[h] = g->epi != 2 ? _mm256_setzero_ps()
                   : g->sstep  ? _mm256_maskload_ps(g->scale + co0 + 8 * h, q->in[h])
                               : _mm256_set1_ps(g->scale[0]);
      q->fbias[h] = g->epi == 2 && g->fbias ? _mm256_loadu_ps(g->fbias + co0 + 8 * h)
                                            : _mm256_setzero_ps(); /* padded */
    } else {
      q->bias[h] = b;
      q->mult[h] = _mm256_loadu_ps(g->mult + co0 + 8 * h);
      q->fbias[h] = _mm256_setzero_ps();
    }
  }
  if (g->epi) {
    q->flo = _mm256_set1_ps(g->flo), q->fhi = _mm256_set1_ps(g->fhi);
  } else {
    q->flo = _mm256_set1_ps((float)(g->clo - g->yzp)), q->fhi = _mm256_set1_ps((float)(g->chi - g->yzp));
  }
  q->yzp = _mm256_set1_epi32(g->yzp);
  const __m128i lane = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  q->keep = _mm_cmpgt_epi8(_mm_set1_epi8((char)(q->real < C0 ? q->real : C0)), lane);
  q->rzp = _mm256_set1_epi32(g->rzp), q->ozp = _mm256_set1_epi32(g->ozp);
  q->olo = _mm256_set1_epi32(g->lo), q->ohi = _mm256_set1_epi32(g->hi);
  q->cs = _mm256_set1_ps(g->cs), q->rs = _mm256_set1_ps(g->rs), q->os = _mm256_set1_ps(g->os);
  q->big = _mm256_set1_ps(16777216.0f), q->nbig = _mm256_set1_ps(-16777216.0f);
  q->rmask = _mm_set1_epi8((char)g->rmask);
}

/* vnni_residual on 8 lanes. */
T_AVX2_INLINE __m256i avx2_residual(const avx2_rq *q, __m256i c, const uint8_t *rp) {
  const __m128i rb = _mm_xor_si128(_mm_loadl_epi64((const __m128i *)rp), q->rmask);
  const __m256i u = _mm256_cvtepu8_epi32(rb);
  const __m256 va = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(c, q->yzp)), q->cs);
  const __m256 vb = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(u, q->rzp)), q->rs);
  __m256 t = _mm256_div_ps(q->rmul ? _mm256_mul_ps(va, vb) : _mm256_add_ps(va, vb), q->os);
  t = _mm256_round_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  t = _mm256_and_ps(t, _mm256_cmp_ps(t, t, _CMP_ORD_Q)); /* NaN -> 0, as q_quantize */
  t = _mm256_min_ps(_mm256_max_ps(t, q->nbig), q->big);
  const __m256i v = _mm256_add_epi32(_mm256_cvtps_epi32(t), q->ozp);
  return _mm256_min_epi32(_mm256_max_epi32(v, q->olo), q->ohi);
}

/* QMATMUL's epilogue (rt_qconv_geom's epi; the portable store_epi's steps
 * in vectors) of 8 sums s, half h of the block (channels co0 + 8h..) at
 * y's element offset at: a = s + nzp * colsum, then i32 a or
 * fl(fl((float)a) * scale) [+ fbias]. Lanes past cout are neither read
 * (scale has N elements) nor written, or with ypad written 0. */
T_AVX2_INLINE void avx2_store_epi(const avx2_rq *q, size_t at, int h, __m256i s) {
  const int64_t real = q->real - 8 * h;
  const __m256i a = _mm256_add_epi32(s, q->bias[h]);
  void *y = (int32_t *)(void *)q->y + at;
  if (q->epi == 1) {
    if (real >= 8)
      _mm256_storeu_si256((__m256i *)y, a);
    else if (q->ypad)
      _mm256_storeu_si256((__m256i *)y, _mm256_and_si256(a, q->in[h]));
    else
      _mm256_maskstore_epi32((int *)y, q->in[h], a);
    return;
  }
  __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(a), q->mult[h]);
  if (q->fbias_on) f = _mm256_add_ps(f, q->fbias[h]);
  if (q->fclamp & 1) f = _mm256_max_ps(q->flo, f); /* flo > f ? flo : f, as the portable */
  if (q->fclamp & 2) f = _mm256_min_ps(q->fhi, f);
  if (real >= 8)
    _mm256_storeu_ps((float *)y, f);
  else if (q->ypad)
    _mm256_storeu_ps((float *)y, _mm256_and_ps(f, _mm256_castsi256_ps(q->in[h])));
  else
    _mm256_maskstore_ps((float *)y, q->in[h], f);
}

/* The sums of 16 output channels (channels 0..7, 8..15) of pixel p
 * requantized (with the residual epilogue) and stored: q_requant with its
 * clamps folded into the f32 domain as vnni_rq says (one max, one min,
 * then the rounding), the 16 values packed to bytes in registers (they lie
 * in y's dtype range, so the saturating packs keep them) and lanes past
 * cout zeroed. */
T_AVX2_INLINE void avx2_store(const avx2_rq *q, int64_t p, __m256i s0, __m256i s1) {
  const size_t at = q->at0 + (size_t)p * q->yps;
  if (q->rowc) {
    const __m256i rc = _mm256_set1_epi32(q->rowc[p]);
    s0 = _mm256_add_epi32(s0, rc), s1 = _mm256_add_epi32(s1, rc);
  }
  if (q->epi) {
    avx2_store_epi(q, at, 0, s0);
    if (q->second) avx2_store_epi(q, at + 8, 1, s1);
    return;
  }
  __m256i v[2];
  for (int h = 0; h < 2; h++) {
    __m256i a = _mm256_add_epi32(h ? s1 : s0, q->bias[h]);
    __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(a), q->mult[h]);
    f = _mm256_min_ps(_mm256_max_ps(f, q->flo),
                      q->fhi); /* NaN -> clo - y_zp, as q_requant's -2^24 ends at clo */
    f = _mm256_round_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    v[h] = _mm256_add_epi32(_mm256_cvtps_epi32(f), q->yzp);
    if (q->r) v[h] = avx2_residual(q, v[h], q->r + at + h * 8);
  }
  /* 16-bit lanes: [v0 0..3, v1 0..3 | v0 4..7, v1 4..7] -> [v0 0..7 | v1 0..7] */
  const __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(v[0], v[1]), 0xD8);
  const __m128i lo = _mm256_castsi256_si128(w), hi = _mm256_extracti128_si256(w, 1);
  __m128i b = q->s8y ? _mm_packs_epi16(lo, hi) : _mm_packus_epi16(lo, hi);
  if (q->real < C0) { /* the last block's lanes past cout: 0 */
    b = _mm_and_si128(b, q->keep);
    if (q->ycut) { /* an ND y's last block: its real lanes only */
      uint8_t t[C0];
      _mm_storeu_si128((__m128i *)t, b);
      memcpy(q->y + at, t, (size_t)q->real);
      return;
    }
  }
  _mm_storeu_si128((__m128i *)(q->y + at), b);
}

/* The AVX2 tile multiplies 16-bit values: x and the weights are both
 * widened before the loop, so that vpmaddwd takes a pair of k of one
 * pixel (a dword of x's widened row, broadcast from memory by
 * vpbroadcastd: a load, no ALU uop) against that pair of k of 8 output
 * channels (one register of the widened weights, [8 co][2 k]) and adds
 * the two products into each channel's int32 sum: exact (u8 x i8 products
 * in 16-bit lanes, no saturation, unlike vpmaddubsw's, whose u8 x i8 pairs
 * leave int16 for weights past +-64). A micro-tile of 6 pixels x 16
 * output channels keeps 12 sum registers, each 8 channels' complete sums
 * in order (the store takes them as they are), and spends 12 vpmaddwd + 12
 * vpaddd per pair of k: 24 vector ALU uops per 192 multiply-adds (x's
 * bytes widened in the loop took 27, and a vphaddd pass at the end).
 *
 * K is walked in chunks of at most X16_K k: a run of whole taps when one
 * tap's channels fit, else one tap's run of input blocks; a block's groups
 * of 4 past x's channels (qtail) are left out of both operands. A pass of
 * up to X16_PIXELS pixels widens its rows of a chunk once (x16:
 * [pixel][k], u = x ^ xmask zero-extended) for up to X16_NB output blocks
 * that read the same input blocks; each of them widens its weights of the
 * chunk (w16) and walks the pass's micro-tiles, whose sums wait in part
 * between chunks. The buffers (avx2_bufs, ~110 KiB) live on the tile's
 * stack. */
enum { X16_K = 512, X16_S = X16_K + 16, X16_PIXELS = 60, X16_NB = 8 };

typedef struct avx2_bufs {
  _Alignas(32) int16_t x16[X16_PIXELS][X16_S]; /* rows of k; 16 spare: the last block's 16-lane store */
  _Alignas(32) int16_t w16[X16_K * C0];        /* [k / 2][16 co][2 k] */
  __m256i part[X16_NB][X16_PIXELS][2];         /* [block][pixel][channels 0..7, 8..15] */
} avx2_bufs;

typedef struct avx2_chunk {
  int t0, t1;     /* taps */
  int64_t c0, c1; /* input blocks of the output block's range (offsets from lo) */
} avx2_chunk;

/* n pixels (rows oh, ow) over chunk c of the input blocks from lo, as u16
 * into x16's rows: for each tap, each block's real groups (a block's 16
 * lanes are stored, the next block's overwrite those past its groups).
 * Returns the chunk's k (a multiple of 4). */
T_AVX2_INLINE int avx2_widen_x(const rt_qconv_geom *g, int64_t img, const int64_t *oh, const int64_t *ow,
                               int n, int64_t lo, const avx2_chunk *c, int16_t (*x16)[X16_S], const int S8) {
  int16_t *d = x16[0];
  for (int r = 0; r < n; r++) {
    d = x16[r];
    for (int t = c->t0; t < c->t1; t++) {
      const uint8_t *xp;
      size_t st;
      tap_rows(g, img, oh + r, ow + r, 1, t, lo, &xp, &st);
      for (int64_t cb = c->c0; cb < c->c1; cb++) {
        __m256i v = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(xp + (size_t)cb * st)));
        if (S8) v = _mm256_xor_si256(v, _mm256_set1_epi16(0x80));
        _mm256_storeu_si256((__m256i *)d, v);
        d += lo + cb == g->c1in - 1 ? 4 * g->qtail : C0;
      }
    }
  }
  return (int)(d - x16[n - 1]);
}

/* A group of packed weights wq ([16 co][4 k] i8) as two pairs of k into
 * d: [pair][16 co][2 k] i16, i.e. per pair the registers of channels 0..7
 * and 8..15. */
T_AVX2_INLINE void avx2_widen_group(const int8_t *wq, int16_t *d) {
  const __m256i pairs = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7); /* [co][pair] -> [pair][co] */
  for (int h = 0; h < 2; h++) { /* channels 8h.. 8h+3 (a), 8h+4.. 8h+7 (b) */
    const __m256i a = _mm256_permutevar8x32_epi32(
        _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(wq + 32 * h))), pairs);
    const __m256i b = _mm256_permutevar8x32_epi32(
        _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(wq + 32 * h + 16))), pairs);
    _mm256_store_si256((__m256i *)(d + 16 * h), _mm256_permute2x128_si256(a, b, 0x20));
    _mm256_store_si256((__m256i *)(d + 32 + 16 * h), _mm256_permute2x128_si256(a, b, 0x31));
  }
}

/* Output block weights wb (kb input blocks per tap) of chunk c into w16,
 * in avx2_widen_x's k order. */
T_AVX2_INLINE void avx2_widen_w(const rt_qconv_geom *g, const int8_t *wb, int64_t lo, int64_t kb,
                                const avx2_chunk *c, int16_t *w16) {
  for (int t = c->t0; t < c->t1; t++)
    for (int64_t cb = c->c0; cb < c->c1; cb++) {
      const int nq = lo + cb == g->c1in - 1 ? g->qtail : 4;
      for (int q = 0; q < nq; q++, w16 += 64)
        avx2_widen_group(wb + (size_t)((t * kb + cb) * 4 + q) * 64, w16);
    }
}

/* Pair k of R pixels' rows x against its widened weights w (two
 * registers: channels 0..7, 8..15), each pixel's dword broadcast from
 * memory. The weights stay memory operands of vpmaddwd: held in registers
 * they leave GCC one too few for the 12 sums, which it then spills. */
T_AVX2_INLINE void avx2_pair(__m256i (*acc)[2], const int16_t *const *x, const int16_t *w, int k,
                             const int R) {
  for (int r = 0; r < R; r++) {
    int32_t d;
    memcpy(&d, x[r] + 2 * k, 4);
    const __m256i b = _mm256_set1_epi32(d);
    const int16_t *wr = w;
    __asm__("" : "+r"(wr)); /* a pointer per pixel: its loads stay operands of vpmaddwd */
    for (int h = 0; h < 2; h++)
      acc[r][h] = _mm256_add_epi32(acc[r][h],
                                   _mm256_madd_epi16(b, _mm256_load_si256((const __m256i *)(wr + 16 * h))));
  }
}

/* R pixels from x16's row 0 (np real; the rest repeat the last) x one
 * output block's widened chunk w16 of pairs k pairs. The sums start at 0
 * (first) or from part, and end in part or (last) stored with q from
 * pixel p. */
T_AVX2_INLINE void avx2_micro(const int16_t (*x16)[X16_S], int np, const int16_t *w16, int pairs,
                              __m256i (*part)[2], int first, int last, const avx2_rq *q, int64_t p,
                              const int R) {
  __m256i acc[6][2];
  const int16_t *x[6];
  for (int r = 0; r < R; r++) {
    x[r] = x16[r < np ? r : np - 1];
    for (int h = 0; h < 2; h++)
      acc[r][h] = _mm256_setzero_si256();
  }
  if (!first) /* not `first ? 0 : part` above: with that merge GCC spilled one of the 12 sums */
    for (int r = 0; r < R; r++)
      for (int h = 0; h < 2; h++)
        acc[r][h] = _mm256_load_si256(&part[r][h]);
#pragma GCC unroll 1
  for (int k = 0; k < pairs; k++)
    avx2_pair(acc, x, w16 + 32 * k, k, R);
  if (!last) {
    for (int r = 0; r < R; r++)
      for (int h = 0; h < 2; h++)
        _mm256_store_si256(&part[r][h], acc[r][h]);
    return;
  }
#pragma GCC unroll 6
  for (int r = 0; r < R; r++) /* constant indices: a variable one would keep acc in memory */
    if (r < np) avx2_store(q, p + r, acc[r][0], acc[r][1]);
}

/* The n pixels of a pass from p (rows x16) x one output block: micro-tiles
 * of 6, the last 2 or 4 when 1-4 pixels remain. */
T_AVX2_INLINE void avx2_pass(const int16_t (*x16)[X16_S], int n, const int16_t *w16, int pairs,
                             __m256i (*part)[2], int first, int last, const avx2_rq *q, int64_t p) {
  for (int i = 0; i < n; i += 6) {
    const int np = n - i < 6 ? n - i : 6;
    if (np > 4)
      avx2_micro(x16 + i, np, w16, pairs, part + i, first, last, q, p + i, 6);
    else if (np > 2)
      avx2_micro(x16 + i, np, w16, pairs, part + i, first, last, q, p + i, 4);
    else
      avx2_micro(x16 + i, np, w16, pairs, part + i, first, last, q, p + i, 2);
  }
}

/* The rows and columns of n pixels from p into oh, ow: one division. */
static inline void avx2_positions(const rt_qconv_geom *g, int64_t p, int64_t n, int64_t *oh, int64_t *ow) {
  int64_t h = p / g->wo, w = p % g->wo;
  for (int64_t i = 0; i < n; i++) {
    oh[i] = h, ow[i] = w;
    if (++w == g->wo) w = 0, h++;
  }
}

/* Output blocks [nb, nb + nnb) (nnb <= X16_NB, all reading input blocks
 * [lo, lo + kb)), pixels [p0, p1): in passes of at most X16_PIXELS, as even
 * as multiples of 6 allow (a 7x7 map's 49 pixels one pass, not 48 and 1,
 * which would widen every chunk again for one pixel), each over every
 * chunk of K. A block's chunk of weights is read where g->w16 holds it
 * widened (a slice of the block's K, in the same order), else widened into
 * b->w16 (once while it stays the only one). */
T_AVX2_INLINE void avx2_blocks(const rt_qconv_geom *g, int64_t img, int64_t p0, int64_t p1, int64_t nb,
                               int nnb, int64_t lo, int64_t kb, avx2_bufs *b, const int S8) {
  if (p1 <= p0) return;
  enum { GROUPS = X16_K / 4 };
  const int64_t gt = kb * 4; /* groups per tap */
  const int taps = g->kh * g->kw;
  const int tpc = gt <= GROUPS ? (int)(GROUPS / gt) : 1;
  const int64_t cpc = gt <= GROUPS ? kb : GROUPS / 4;
  const int64_t ncb = rt_ceil_div(kb, cpc), nchunks = rt_ceil_div(taps, tpc) * ncb;
  const int64_t gtr = gt - (lo + kb == g->c1in ? 4 - g->qtail : 0); /* real groups per tap */
  int64_t held = -1;                                                /* the (block, chunk) b->w16 holds */
  int64_t oh[X16_PIXELS], ow[X16_PIXELS];
  const int64_t passes = rt_ceil_div(p1 - p0, X16_PIXELS);
  const int64_t per = rt_ceil_div(rt_ceil_div(p1 - p0, passes), 6) * 6; /* <= X16_PIXELS */
  avx2_rq q[X16_NB];
  for (int j = 0; j < nnb; j++)
    avx2_rq_init(g, img, nb + j, &q[j]);
  for (int64_t pc = p0; pc < p1; pc += per) {
    const int pn = (int)(p1 - pc < per ? p1 - pc : per);
    avx2_positions(g, pc, pn, oh, ow);
    for (int64_t ci = 0; ci < nchunks; ci++) {
      avx2_chunk c;
      c.t0 = (int)(ci / ncb) * tpc, c.t1 = c.t0 + tpc < taps ? c.t0 + tpc : taps;
      c.c0 = ci % ncb * cpc, c.c1 = c.c0 + cpc < kb ? c.c0 + cpc : kb;
      const int k = avx2_widen_x(g, img, oh, ow, pn, lo, &c, b->x16, S8);
      for (int j = 0; j < nnb; j++) {
        const int16_t *w16 = b->w16;
        if (g->w16) /* the groups before the chunk: its taps', then its blocks' in its first tap */
          w16 = g->w16 + (size_t)((nb + j) * g->kg + c.t0 * gtr + c.c0 * 4) * 64;
        else if (held != (nb + j) * nchunks + ci) {
          avx2_widen_w(g, g->w + (size_t)((nb + j) * g->kg) * C0 * 4, lo, kb, &c, b->w16);
          held = (nb + j) * nchunks + ci;
        }
        avx2_pass(b->x16, pn, w16, k / 2, b->part[j], ci == 0, ci == nchunks - 1, &q[j], pc);
      }
    }
  }
}

/* Widened at load only where a tile's passes would widen them again:
 * weights that one pass reads (a map of at most X16_PIXELS pixels, e.g.
 * ResNet-18's 7x7 layer4 and its classifier) are read faster as int8 and
 * widened in L1 than as twice the bytes from memory (per task, fastest of
 * 15 runs: layer4's 3x3 1.05-1.07x slower with them, the classifier
 * 1.6x). */
int64_t rt_qconv_widened_bytes(const rt_qconv_geom *g) {
  if (g->depthwise || g->ho * g->wo <= X16_PIXELS) return 0;
  return g->c1out * g->kg * 64 * (int64_t)sizeof(int16_t);
}

T_AVX2 void rt_qconv_widen_avx2(const rt_qconv_geom *g, int16_t *dst) {
  for (int64_t nb = 0; nb < g->c1out; nb++) {
    int64_t lo, hi;
    convg_block_range(&g->cg, nb, &lo, &hi);
    const avx2_chunk all = {0, g->kh * g->kw, 0, hi - lo};
    avx2_widen_w(g, g->w + (size_t)(nb * g->kg) * C0 * 4, lo, hi - lo, &all, dst + (size_t)(nb * g->kg) * 64);
  }
}

/* A window-packed tile (g->wwin): WIN_PIXELS pixels' windows gathered
 * (gather_windows) and widened, then each output block's kq groups
 * widened and walked as one chunk of K. */
T_AVX2_INLINE void avx2_window_tile(const rt_qconv_geom *g, int64_t img, int64_t p0, int64_t p1, int64_t nb0,
                                    int64_t nb1, avx2_bufs *b, const int S8) {
  uint8_t rows[WIN_PIXELS + 1][QCONV_WINDOW_MAX + 4]; /* + 1: the widening reads 16 bytes past a row */
  size_t off[QCONV_WINDOW_MAX];
  for (int t = 0; t < g->kh * g->kw; t++)
    off[t] = tap_offset(g, t);
  const int k = g->kq * 4;
  int64_t held = -1; /* the block w16 holds */
  for (int64_t pc = p0; pc < p1; pc += WIN_PIXELS) {
    const int n = (int)(p1 - pc < WIN_PIXELS ? p1 - pc : WIN_PIXELS);
    gather_windows(g, img, pc, n, off, rows);
    for (int r = 0; r < n; r++)
      for (int i = 0; i < k; i += 16) {
        __m256i v = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(rows[r] + i)));
        if (S8) v = _mm256_xor_si256(v, _mm256_set1_epi16(0x80));
        _mm256_storeu_si256((__m256i *)(b->x16[r] + i), v);
      }
    for (int64_t nb = nb0; nb < nb1; nb++) {
      if (held != nb) {
        for (int q = 0; q < g->kq; q++)
          avx2_widen_group(g->wwin + (size_t)(nb * g->kq + q) * 64, b->w16 + q * 64);
        held = nb;
      }
      avx2_rq q;
      avx2_rq_init(g, img, nb, &q);
      avx2_pass(b->x16, n, b->w16, k / 2, b->part[0], 1, 1, &q, pc);
    }
  }
}

/* Depthwise: the weights of block nb's tap pairs (dw_weights) permuted so
 * that vpunpck[lh]wd's 128-bit lanes meet them: the sums come out as
 * channels 0-3, 8-11 and 4-7, 12-15, put back before the store. */
T_AVX2_INLINE void avx2_dw_weights(const rt_qconv_geom *g, int64_t nb, int16_t (*w2)[2 * C0]) {
  dw_weights(g, nb, w2);
  for (int pr = 0; pr < (g->kh * g->kw + 1) / 2; pr++) {
    const __m256i w0 = _mm256_loadu_si256((const __m256i *)w2[pr]),
                  w1 = _mm256_loadu_si256((const __m256i *)(w2[pr] + C0));
    _mm256_storeu_si256((__m256i *)w2[pr], _mm256_permute2x128_si256(w0, w1, 0x20));
    _mm256_storeu_si256((__m256i *)(w2[pr] + C0), _mm256_permute2x128_si256(w0, w1, 0x31));
  }
}

/* One pixel's 16 sums of a depthwise block, stored with q at pixel p: tap
 * t's 16 bytes at x0 + off[t] (INSIDE: a window inside x, x0 its first
 * tap) or at xp[t]. Each tap's bytes are zero-extended to 16 bits by
 * one load-extend, the two taps of a pair interleaved, and vpmaddwd gives
 * u_t*w_t + u_t'*w_t' per channel (exact); S8 as avx2_micro's. TAPS, when
 * not 0, is taps as a constant: the pair loop unrolled, no count in a
 * register. */
T_AVX2_INLINE void avx2_dw_pixel(const avx2_rq *q, int64_t p, const uint8_t *x0, const size_t *off,
                                 const uint8_t *const *xp, int taps, const int16_t (*w2)[2 * C0],
                                 const int INSIDE, const int S8, const int TAPS) {
  if (TAPS) taps = TAPS;
  const __m256i flip = _mm256_set1_epi16(0x80);
  __m256i s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();
#pragma GCC unroll 16
  for (int t = 0; t < taps; t += 2) {
    __m256i a = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(INSIDE ? x0 + off[t] : xp[t])));
    __m256i b =
        t + 1 < taps
            ? _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(INSIDE ? x0 + off[t + 1] : xp[t + 1])))
            : a; /* past the last tap: its weights are 0 */
    if (S8) a = _mm256_xor_si256(a, flip), b = _mm256_xor_si256(b, flip);
    s0 = _mm256_add_epi32(
        s0, _mm256_madd_epi16(_mm256_unpacklo_epi16(a, b), _mm256_loadu_si256((const __m256i *)w2[t / 2])));
    s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(_mm256_unpackhi_epi16(a, b),
                                                _mm256_loadu_si256((const __m256i *)(w2[t / 2] + C0))));
  }
  avx2_store(q, p, _mm256_permute2x128_si256(s0, s1, 0x20), _mm256_permute2x128_si256(s0, s1, 0x31));
}

/* The input band that depthwise block nb's pixels [p0, p1) read, copied
 * into buf with its padding written out (g->pad's bytes, as a padding tap
 * reads), when it fits in DW_BAND_BYTES: rows ih0.. of x, columns -pl..
 * (bw of them, 16 bytes each). Then every pixel's window lies inside buf
 * and takes the interior loop: on a small map (14x14 and 7x7 under a 5x5
 * window, 51% and 18% of the pixels inside x) the edges would otherwise
 * be most of the pixels, each tap's pointer found by position. Returns 0,
 * buf untouched, when the band does not fit or its copy would cost more
 * than the edge pixels' taps (a wide map, or no padding). */
enum { DW_BAND_BYTES = 16384 };
static int dw_band(const rt_qconv_geom *g, int64_t img, int64_t p0, int64_t p1, int64_t nb, uint8_t *buf,
                   int64_t *ih0_out, int64_t *bw_out) {
  const int64_t ih0 = p0 / g->wo * g->sh - g->pt,
                ih1 = (p1 - 1) / g->wo * g->sh - g->pt + (g->kh - 1) * g->dh;
  const int64_t bw = (g->wo - 1) * g->sw + (g->kw - 1) * g->dw + 1, bh = ih1 - ih0 + 1;
  if (bh * bw * C0 > DW_BAND_BYTES) return 0;
  /* the pixels whose windows cross x's edge (as avx2_dw finds them), each worth its taps' pointers
   * against one copied pixel of the band: a wide map's few edge pixels are not worth the copy */
  const int64_t right = g->w_ - 1 - (int64_t)(g->kw - 1) * g->dw + g->pl;
  const int64_t owa = rt_ceil_div(g->pl, g->sw), owb = right < 0 ? 0 : right / g->sw + 1;
  int64_t edge = 0;
  for (int64_t p = p0, oh = p0 / g->wo, ow = p0 % g->wo; p < p1; oh++, ow = 0) {
    const int64_t end = ow + (p1 - p < g->wo - ow ? p1 - p : g->wo - ow), ih = oh * g->sh - g->pt;
    int64_t in = 0;
    if (ih >= 0 && ih + (int64_t)(g->kh - 1) * g->dh < g->h) {
      const int64_t a = owa > ow ? owa : ow, b = owb < end ? owb : end;
      in = b > a ? b - a : 0;
    }
    edge += end - ow - in, p += end - ow;
  }
  if (edge * g->kh * g->kw < bh * bw) return 0;
  const uint8_t *xb = g->x + rt_qconv_xat(g, img, nb, 0, 0);
  const int64_t c0 = g->pl < bw ? g->pl : bw; /* columns [c0, c1) of the band lie inside x */
  const int64_t c1 = g->w_ + g->pl < bw ? g->w_ + g->pl : bw;
  for (int64_t r = 0; r < bh; r++) {
    uint8_t *row = buf + (size_t)(r * bw) * C0;
    const int64_t ih = ih0 + r;
    if (ih < 0 || ih >= g->h || c1 <= c0) {
      memset(row, g->pad[0], (size_t)bw * C0);
      continue;
    }
    memset(row, g->pad[0], (size_t)c0 * C0);
    memcpy(row + c0 * C0, xb + (size_t)(ih * g->w_ + c0 - g->pl) * g->xps, (size_t)(c1 - c0) * C0);
    memset(row + c1 * C0, g->pad[0], (size_t)(bw - c1) * C0);
  }
  *ih0_out = ih0, *bw_out = bw;
  return 1;
}

/* Depthwise block nb, pixels [p0, p1), row by row: the pixels whose
 * windows lie inside x (a row's interior, in rows whose window rows all
 * lie inside) read their taps at fixed offsets from a pointer that steps
 * sw pixels; the others (the edges) take each tap's row or g->pad from
 * the tap's position, without a division. When the band of x the pixels
 * read fits (dw_band), it is copied with its padding and every pixel reads
 * it as an interior one. */
T_AVX2_INLINE void avx2_dw(const rt_qconv_geom *g, int64_t img, int64_t p0, int64_t p1, int64_t nb,
                           const int S8, const int TAPS) {
  int16_t w2[DW_MAX_PAIRS][2 * C0];
  avx2_dw_weights(g, nb, w2);
  const int taps = g->kh * g->kw;
  _Alignas(32) uint8_t band[DW_BAND_BYTES];
  int64_t bih0, bw;
  if (g->xps == C0 && dw_band(g, img, p0, p1, nb, band, &bih0, &bw)) {
    size_t boff[2 * DW_MAX_PAIRS];
    for (int t = 0; t < taps; t++)
      boff[t] = (size_t)((t / g->kw) * g->dh * bw + (t % g->kw) * g->dw) * C0;
    avx2_rq q;
    avx2_rq_init(g, img, nb, &q);
    int64_t oh = p0 / g->wo, ow = p0 % g->wo;
    for (int64_t p = p0; p < p1; oh++, ow = 0) {
      const uint8_t *x0 = band + (size_t)((oh * g->sh - g->pt - bih0) * bw + ow * g->sw) * C0;
      for (; ow < g->wo && p < p1; ow++, p++, x0 += (size_t)g->sw * C0)
        avx2_dw_pixel(&q, p, x0, boff, NULL, taps, w2, 1, S8, TAPS);
    }
    return;
  }
  size_t off[2 * DW_MAX_PAIRS];
  int64_t ty[2 * DW_MAX_PAIRS], tx[2 * DW_MAX_PAIRS];
  for (int t = 0; t < taps; t++)
    ty[t] = (int64_t)(t / g->kw) * g->dh, tx[t] = (int64_t)(t % g->kw) * g->dw, off[t] = tap_offset(g, t);
  /* the columns whose windows lie inside x: [owa, owb) */
  const int64_t wspan = (int64_t)(g->kw - 1) * g->dw, right = g->w_ - 1 - wspan + g->pl;
  const int64_t owa = rt_ceil_div(g->pl, g->sw), owb = right < 0 ? 0 : right / g->sw + 1;
  const uint8_t *xb = g->x + rt_qconv_xat(g, img, nb, 0, 0);
  const size_t step = (size_t)g->sw * g->xps;
  avx2_rq q;
  avx2_rq_init(g, img, nb, &q);
  const uint8_t *xp[2 * DW_MAX_PAIRS];
  int64_t oh = p0 / g->wo, ow = p0 % g->wo;
  for (int64_t p = p0; p < p1; oh++, ow = 0) {
    const int64_t end = ow + (p1 - p < g->wo - ow ? p1 - p : g->wo - ow); /* this row's last column + 1 */
    const int64_t ih0 = oh * g->sh - g->pt;
    const int rows_in = ih0 >= 0 && ih0 + (int64_t)(g->kh - 1) * g->dh < g->h;
    int64_t a = end, b = end;
    if (rows_in) {
      a = owa < ow ? ow : owa < end ? owa : end;
      b = owb < a ? a : owb < end ? owb : end;
    }
    for (int64_t c = ow; c < end; c++, p++) {
      if (c == a && b > a) { /* the interior */
        const uint8_t *x0 = xb + (size_t)(ih0 * g->w_ + a * g->sw - g->pl) * g->xps;
        for (; c < b; c++, p++, x0 += step)
          avx2_dw_pixel(&q, p, x0, off, xp, taps, w2, 1, S8, TAPS);
        if (c == end) break;
      }
      const int64_t iw0 = c * g->sw - g->pl;
      for (int t = 0; t < taps; t++) {
        const int64_t ih = ih0 + ty[t], iw = iw0 + tx[t];
        xp[t] =
            ih >= 0 && ih < g->h && iw >= 0 && iw < g->w_ ? xb + (size_t)(ih * g->w_ + iw) * g->xps : g->pad;
      }
      avx2_dw_pixel(&q, p, xb, off, xp, taps, w2, 0, S8, TAPS);
    }
  }
}

T_AVX2 void rt_qconv_tile_avx2(const rt_qconv_geom *g, int64_t img, int64_t p0, int64_t p1, int64_t nb0,
                               int64_t nb1) {
  if (g->depthwise) {
    if (g->kh * g->kw > 2 * DW_MAX_PAIRS) {
      rt_qconv_tile_c(g, img, p0, p1, nb0, nb1);
      return;
    }
    const int taps = g->kh * g->kw; /* 3x3 and 5x5 windows with their own loops */
    for (int64_t nb = nb0; nb < nb1; nb++)
      if (taps == 9)
        g->xmask ? avx2_dw(g, img, p0, p1, nb, 1, 9) : avx2_dw(g, img, p0, p1, nb, 0, 9);
      else if (taps == 25)
        g->xmask ? avx2_dw(g, img, p0, p1, nb, 1, 25) : avx2_dw(g, img, p0, p1, nb, 0, 25);
      else
        g->xmask ? avx2_dw(g, img, p0, p1, nb, 1, 0) : avx2_dw(g, img, p0, p1, nb, 0, 0);
    return;
  }
  avx2_bufs b;
  if (g->wwin) { /* kq <= QCONV_WINDOW_MAX / 4 groups: one chunk */
    if (g->xmask)
      avx2_window_tile(g, img, p0, p1, nb0, nb1, &b, 1);
    else
      avx2_window_tile(g, img, p0, p1, nb0, nb1, &b, 0);
    return;
  }
  for (int64_t nb = nb0; nb < nb1;) {
    int64_t lo, hi;
    const int n = same_range(g, nb, nb1, X16_NB, &lo, &hi);
    if (g->xmask)
      avx2_blocks(g, img, p0, p1, nb, n, lo, hi - lo, &b, 1);
    else
      avx2_blocks(g, img, p0, p1, nb, n, lo, hi - lo, &b, 0);
    nb += n;
  }
}

#endif
