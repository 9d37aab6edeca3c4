/* kernels_qconv_vnni.c - the AVX-512 VNNI QCONV2D tile (kernels_qconv.h;
 * what the x86 tiles share is in kernels_qconv_x86.h).
 *
 * VNNI: vpdpbusd multiplies 4 u8 of x (broadcast: one pixel's 4 input
 * channels) by 4 i8 of each of 16 output channels (one ZMM of the packed
 * weights: [16 co][4 k]) and adds the 4 products into the 16 int32 sums.
 * A micro-tile keeps R pixels x NB output blocks of sums in registers (6 x
 * 4, 4 x 4 or 2 x 4 for a tile's last few pixels, or 12 x 1 when an
 * output block reads input blocks of its own: grouped convolutions) and
 * walks K once; depthwise convolutions have their own loop (below).
 * Products and sums are
 * exact (the compiler bounds K, om_format.h OM_QCONV_MAX_K), so every path
 * gets the portable tile's int32 sums. The groups of 4 lanes past x's
 * channels in its last block (zero weights) are left out: an RGB stem's
 * 7x7 window costs a quarter of a 16-channel one's. With window-packed
 * weights (g->wwin: one input block of fewer than 4 channels) both tiles
 * go further: they gather 48 pixels' windows into rows of (tap,
 * channel) bytes and walk them as one K of kq groups, every lane but the
 * last group's real (ResNet-50's stem: 37 groups instead of 49, without
 * the per-tap pointer work; the VNNI tile's CPU time -24%, the AVX2
 * tile's on ResNet-18's stem 17.3 -> 5.9 ms).
 */
#include "runtime/kernels_qconv_x86.h"

#if defined(__x86_64__) && defined(__GNUC__)

enum { MAX_R = 12, MAX_NB = 4 };

static inline int32_t dword(const uint8_t *p, uint32_t mask) {
  uint32_t d;
  memcpy(&d, p, 4);
  return (int32_t)(d ^ mask);
}

/* Pixel p's row of block nb at each tap of the window: xp[t] (the zero
 * point's row, g->pad, where the tap falls in the padding). */
static inline void dw_taps(const rt_qconv_geom *g, int64_t img, int64_t p, int64_t nb, const uint8_t **xp) {
  int64_t oh, ow;
  pixel_pos(g, p, 1, 1, &oh, &ow);
  for (int t = 0; t < g->kh * g->kw; t++) {
    size_t st;
    tap_rows(g, img, &oh, &ow, 1, t, nb, &xp[t], &st);
  }
}

/* Walks a depthwise tile's pixels in order: each pixel's taps are the last
 * pixel's moved sw columns right when both windows lie inside x (a row's
 * interior, where the taps were real rows, not g->pad), else dw_taps'. */
typedef struct dw_walk {
  int64_t oh, ow; /* the next pixel's position */
  int moves;      /* the last pixel's taps, inside x, precede it in its row */
} dw_walk;

static inline dw_walk dw_walk_at(const rt_qconv_geom *g, int64_t p0) {
  return (dw_walk){p0 / g->wo, p0 % g->wo, 0};
}

static inline void dw_next(const rt_qconv_geom *g, int64_t img, int64_t p, int64_t nb, dw_walk *w,
                           const uint8_t **xp) {
  const int64_t ih0 = w->oh * g->sh - g->pt, iw0 = w->ow * g->sw - g->pl;
  const int inside = ih0 >= 0 && ih0 + (int64_t)(g->kh - 1) * g->dh < g->h && iw0 >= 0 &&
                     iw0 + (int64_t)(g->kw - 1) * g->dw < g->w_;
  if (inside && w->moves)
    for (int t = 0; t < g->kh * g->kw; t++)
      xp[t] += (size_t)g->sw * g->xps;
  else
    dw_taps(g, img, p, nb, xp);
  w->moves = inside;
  if (++w->ow == g->wo) w->ow = 0, w->oh++, w->moves = 0;
}

/* The requantization's constants in registers, set once per micro-tile:
 * y's bytes may alias g, so the compiler would read g's fields again after
 * every store. The clamps are folded into the f32 domain: for integers a
 * <= b within +-2^24, clamp(round(f), -2^24, 2^24) + zp clamped to [lo,
 * hi] is round(clamp(f, lo - zp, hi - zp)) + zp (rounding is monotonic and
 * fixes integers), and maxps(NaN, lo - zp) is lo - zp, as q_requant's
 * NaN -> -2^24 ends at lo; so one max, one min and one rounding convert
 * replace the round, two f32 and two int32 clamps. */
typedef struct vnni_rq {
  __m512 flo, fhi;   /* clo - y_zp, chi - y_zp */
  __m512i yzp;       /* y_zp */
  __m512 cs, rs, os; /* the residual's: c_scale, r_scale, o_scale */
  __m512 olo, ohi;   /* lo - o_zp, hi - o_zp */
  __m512i rzp, ozp;  /* r_zp, o_zp */
  __m128i rmask;     /* r's sign flip */
  const uint8_t *r;  /* g->r: the residual, or NULL */
  uint8_t *y;        /* g->y */
  int rmul;          /* g->rmul */
  int ycut;          /* g->ycut */
} vnni_rq;

T_VNNI_INLINE vnni_rq vnni_rq_init(const rt_qconv_geom *g) {
  vnni_rq q;
  q.flo = _mm512_set1_ps((float)(g->clo - g->yzp)), q.fhi = _mm512_set1_ps((float)(g->chi - g->yzp));
  q.yzp = _mm512_set1_epi32(g->yzp);
  q.cs = _mm512_set1_ps(g->cs), q.rs = _mm512_set1_ps(g->rs), q.os = _mm512_set1_ps(g->os);
  q.olo = _mm512_set1_ps((float)(g->lo - g->ozp)), q.ohi = _mm512_set1_ps((float)(g->hi - g->ozp));
  q.rzp = _mm512_set1_epi32(g->rzp), q.ozp = _mm512_set1_epi32(g->ozp);
  q.rmask = _mm_set1_epi8((char)g->rmask);
  q.r = g->r, q.y = g->y, q.rmul = g->rmul, q.ycut = g->ycut;
  return q;
}

/* The residual epilogue of 16 lanes: common/quant.h's q_eltwise of the
 * requantized value (held as c - y_zp, fc) and r's 16 bytes at rp, in its
 * f32 steps (the QELTWISE kernel's); q_quantize's NaN -> 0 kept before
 * the clamps folded as vnni_rq says. */
T_VNNI_INLINE __m512i vnni_residual(const vnni_rq *q, int rmul, __m512 fc, const uint8_t *rp) {
  const __m128i rb = _mm_xor_si128(_mm_loadu_si128((const __m128i *)rp), q->rmask);
  const __m512i u = _mm512_cvtepu8_epi32(rb);
  const __m512 va = _mm512_mul_ps(fc, q->cs);
  const __m512 vb = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(u, q->rzp)), q->rs);
  __m512 t = _mm512_div_ps(rmul ? _mm512_mul_ps(va, vb) : _mm512_add_ps(va, vb), q->os);
  t = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(t, t, _CMP_ORD_Q), t); /* NaN -> 0, as q_quantize */
  t = _mm512_min_ps(_mm512_max_ps(t, q->olo), q->ohi);
  return _mm512_add_epi32(_mm512_cvt_roundps_epi32(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), q->ozp);
}

/* The 16 sums acc of pixel block at (y + at) requantized with the block's
 * bias and mult (with r: the residual epilogue), lanes past cout 0. */
T_VNNI_INLINE void vnni_store(const vnni_rq *q, size_t at, __mmask16 keep, __m512i bias, __m512 mult,
                              __m512i acc) {
  __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(acc, bias)), mult);
  f = _mm512_min_ps(_mm512_max_ps(f, q->flo), q->fhi);
  __m512i v;
  if (q->r)
    v = vnni_residual(q, q->rmul, _mm512_roundscale_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                      q->r + at);
  else
    v = _mm512_add_epi32(_mm512_cvt_roundps_epi32(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), q->yzp);
  const __m128i b = _mm512_maskz_cvtepi32_epi8(keep, v);
  if (q->ycut && keep != 0xffff) { /* an ND y's last block: its real lanes only */
    uint8_t t[C0];
    _mm_storeu_si128((__m128i *)t, b);
    memcpy(q->y + at, t, (size_t)__builtin_popcount(keep));
    return;
  }
  _mm_storeu_si128((__m128i *)(q->y + at), b);
}

/* Output block nb's lanes that are real channels. */
static inline __mmask16 vnni_keep(const rt_qconv_geom *g, int64_t nb) {
  const int64_t real = g->cout - nb * C0;
  return real >= C0 ? (__mmask16)0xffff : (__mmask16)((1u << real) - 1);
}

/* QMATMUL's epilogue (rt_qconv_geom's epi) of 16 sums at y's element
 * offset at: a = acc + nzp * colsum, then i32 a or the f32 steps; lanes
 * past cout neither read nor written. */
T_VNNI_INLINE void vnni_store_epi(const rt_qconv_geom *g, size_t at, __mmask16 keep, __mmask16 real,
                                  __m512i colsum, __m512 scale, __m512 fbias, __m512i acc) {
  const __m512i a = _mm512_add_epi32(acc, _mm512_mullo_epi32(colsum, _mm512_set1_epi32(g->nzp)));
  if (g->epi == 1) {
    _mm512_mask_storeu_epi32((int32_t *)(void *)g->y + at, keep, a);
    return;
  }
  __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(a), scale);
  if (g->fbias) f = _mm512_add_ps(f, fbias);
  if (g->fclamp & 1) f = _mm512_max_ps(_mm512_set1_ps(g->flo), f); /* flo > f ? flo : f, as the portable */
  if (g->fclamp & 2) f = _mm512_min_ps(_mm512_set1_ps(g->fhi), f);
  if (g->fclamp) f = _mm512_maskz_mov_ps(real, f); /* lanes past cout stay 0 */
  _mm512_mask_storeu_ps((float *)(void *)g->y + at, keep, f);
}

/* The real np x nnb of an R x NB tile of sums, each vnni_store'd (or
 * vnni_store_epi'd). */
T_VNNI_INLINE void vnni_store_tile(const rt_qconv_geom *g, int64_t img, int64_t p, int np, int64_t nb,
                                   int nnb, __m512i (*acc)[MAX_NB], const int R, const int NB) {
  if (g->rowc) {
#pragma GCC unroll 12
    for (int r = 0; r < R; r++) { /* rows past np repeat the last one's term (never stored) */
      const __m512i rc = _mm512_set1_epi32(g->rowc[p + (r < np ? r : np - 1)]);
#pragma GCC unroll 4
      for (int j = 0; j < NB; j++)
        acc[r][j] = _mm512_add_epi32(acc[r][j], rc);
    }
  }
  if (g->epi) {
    const size_t at0 = rt_qconv_yat(g, img, nb, p);
    for (int j = 0; j < nnb; j++) {
      const int64_t co = (nb + j) * C0;
      const __mmask16 keep = vnni_keep(g, nb + j);
      const __m512i colsum = _mm512_loadu_si512(g->bias + co);
      const __m512 scale = g->epi == 1 ? _mm512_setzero_ps()
                           : g->sstep  ? _mm512_maskz_loadu_ps(keep, g->scale + co)
                                       : _mm512_set1_ps(g->scale[0]);
      const __m512 fbias = g->fbias ? _mm512_loadu_ps(g->fbias + co) : _mm512_setzero_ps();
      for (int r = 0; r < np; r++)
        vnni_store_epi(g, at0 + (size_t)j * g->ybs + (size_t)r * g->yps, g->ypad ? 0xffff : keep, keep,
                       colsum, scale, fbias, acc[r][j]);
    }
    return;
  }
  const vnni_rq q = vnni_rq_init(g);
  const size_t plane = g->ybs, at0 = rt_qconv_yat(g, img, nb, p);
#pragma GCC unroll 4
  for (int j = 0; j < NB; j++) {
    if (j >= nnb) break;
    const __m512i bias = _mm512_loadu_si512(g->bias + (nb + j) * C0);
    const __m512 mult = _mm512_loadu_ps(g->mult + (nb + j) * C0);
    const __mmask16 keep = vnni_keep(g, nb + j);
#pragma GCC unroll 12
    for (int r = 0; r < R; r++)
      if (r < np) vnni_store(&q, at0 + (size_t)j * plane + (size_t)r * g->yps, keep, bias, mult, acc[r][j]);
  }
}

/* Group q (channels 4q..4q+3) of one input block: R pixels' 4 bytes each
 * against NB output blocks' weights. */
T_VNNI_INLINE void vnni_group(__m512i (*acc)[MAX_NB], const uint8_t *const *xp, const int8_t *const *wt,
                              int q, const int R, const int NB, const uint32_t mask) {
  __m512i wv[MAX_NB];
#pragma GCC unroll 4
  for (int j = 0; j < NB; j++)
    wv[j] = _mm512_loadu_si512(wt[j] + q * 64);
#pragma GCC unroll 12
  for (int r = 0; r < R; r++) {
    const __m512i bx = _mm512_set1_epi32(dword(xp[r] + q * 4, mask));
#pragma GCC unroll 4
    for (int j = 0; j < NB; j++)
      acc[r][j] = _mm512_dpbusd_epi32(acc[r][j], bx, wv[j]);
  }
}

/* R pixels from p (np of them real) x NB output blocks from nb (nnb real),
 * all reading input blocks [lo, lo + kb). */
T_VNNI_INLINE void vnni_micro(const rt_qconv_geom *g, int64_t img, int64_t p, int np, int64_t nb, int nnb,
                              int64_t lo, int64_t kb, const int R, const int NB, const uint32_t mask) {
  __m512i acc[MAX_R][MAX_NB];
  const int8_t *wb[MAX_NB];
  int64_t oh[MAX_R], ow[MAX_R];
  pixel_pos(g, p, np, R, oh, ow);
#pragma GCC unroll 12
  for (int r = 0; r < R; r++)
#pragma GCC unroll 4
    for (int j = 0; j < NB; j++)
      acc[r][j] = _mm512_setzero_si512();
#pragma GCC unroll 4
  for (int j = 0; j < NB; j++)
    wb[j] = g->w + (size_t)((nb + (j < nnb ? j : nnb - 1)) * g->kg) * C0 * 4;
  const uint8_t *x0[MAX_R];
  const int inside = windows_inside(g, img, oh, ow, R, lo, x0);
  const size_t plane = g->xbs;
  for (int t = 0; t < g->kh * g->kw; t++) {
    const uint8_t *xp[MAX_R];
    size_t st[MAX_R];
    if (inside) {
      const size_t off = tap_offset(g, t);
#pragma GCC unroll 12
      for (int r = 0; r < R; r++)
        xp[r] = x0[r] + off, st[r] = plane;
    } else {
      tap_rows(g, img, oh, ow, R, t, lo, xp, st);
    }
    const int8_t *wt[MAX_NB];
#pragma GCC unroll 4
    for (int j = 0; j < NB; j++)
      wt[j] = wb[j] + (size_t)(t * kb) * 4 * 64;
    for (int64_t cb = 0; cb < kb; cb++) {
      if (lo + cb == g->c1in - 1 && g->qtail < 4) { /* x's last block: its real groups of 4 only */
        for (int q = 0; q < g->qtail; q++)
          vnni_group(acc, xp, wt, q, R, NB, mask);
      } else {
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++)
          vnni_group(acc, xp, wt, q, R, NB, mask);
      }
#pragma GCC unroll 12
      for (int r = 0; r < R; r++)
        xp[r] += st[r];
#pragma GCC unroll 4
      for (int j = 0; j < NB; j++)
        wt[j] += 4 * 64;
    }
  }
  vnni_store_tile(g, img, p, np, nb, nnb, acc, R, NB);
}

/* vnni_micro for a window-packed conv (g->wwin), R pixels from rows. */
T_VNNI_INLINE void vnni_window(const rt_qconv_geom *g, int64_t img, int64_t p, int np, int64_t nb, int nnb,
                               uint8_t (*rows)[QCONV_WINDOW_MAX + 4], const int R, const int NB,
                               const uint32_t mask) {
  __m512i acc[MAX_R][MAX_NB];
  const uint8_t *xp[MAX_R];
  const int8_t *wt[MAX_NB];
#pragma GCC unroll 12
  for (int r = 0; r < R; r++) {
    xp[r] = rows[r < np ? r : np - 1];
#pragma GCC unroll 4
    for (int j = 0; j < NB; j++)
      acc[r][j] = _mm512_setzero_si512();
  }
#pragma GCC unroll 4
  for (int j = 0; j < NB; j++)
    wt[j] = g->wwin + (size_t)((nb + (j < nnb ? j : nnb - 1)) * g->kq) * C0 * 4;
  for (int q = 0; q < g->kq; q++)
    vnni_group(acc, xp, wt, q, R, NB, mask);
  vnni_store_tile(g, img, p, np, nb, nnb, acc, R, NB);
}

/* A window-packed tile: WIN_PIXELS pixels gathered, then their
 * micro-tiles over every output block. */
T_VNNI_INLINE void vnni_window_tile(const rt_qconv_geom *g, int64_t img, int64_t p0, int64_t p1, int64_t nb0,
                                    int64_t nb1) {
  uint8_t rows[WIN_PIXELS][QCONV_WINDOW_MAX + 4];
  size_t off[QCONV_WINDOW_MAX];
  for (int t = 0; t < g->kh * g->kw; t++)
    off[t] = tap_offset(g, t);
  const int s8 = g->xmask != 0;
  for (int64_t pc = p0; pc < p1; pc += WIN_PIXELS) {
    const int n = (int)(p1 - pc < WIN_PIXELS ? p1 - pc : WIN_PIXELS);
    gather_windows(g, img, pc, n, off, rows);
    for (int64_t nb = nb0; nb < nb1;) {
      const int nnb = nb1 - nb < 4 ? (int)(nb1 - nb) : 4, R = nnb == 1 ? 12 : 6;
      for (int i = 0; i < n; i += R) {
        const int np = n - i < R ? n - i : R;
        if (nnb == 1 && !s8) vnni_window(g, img, pc + i, np, nb, 1, rows + i, 12, 1, 0);
        if (nnb == 1 && s8) vnni_window(g, img, pc + i, np, nb, 1, rows + i, 12, 1, 0x80808080u);
        if (nnb > 1 && !s8) vnni_window(g, img, pc + i, np, nb, nnb, rows + i, 6, 4, 0);
        if (nnb > 1 && s8) vnni_window(g, img, pc + i, np, nb, nnb, rows + i, 6, 4, 0x80808080u);
      }
      nb += nnb;
    }
  }
}

/* Depthwise block nb, pixels [p0, p1). */
T_VNNI_INLINE void vnni_dw(const rt_qconv_geom *g, int64_t img, int64_t p0, int64_t p1, int64_t nb) {
  int16_t w2[DW_MAX_PAIRS][2 * C0];
  dw_weights(g, nb, w2);
  const int taps = g->kh * g->kw, pairs = (taps + 1) / 2;
  const __m128i mask = _mm_set1_epi8((char)g->xmask), pad = _mm_loadu_si128((const __m128i *)g->pad);
  const uint8_t *xp[2 * DW_MAX_PAIRS];
  const vnni_rq q = vnni_rq_init(g);
  const __m512i bias = _mm512_loadu_si512(g->bias + nb * C0);
  const __m512 mult = _mm512_loadu_ps(g->mult + nb * C0);
  const __mmask16 keep = vnni_keep(g, nb);
  dw_walk walk = dw_walk_at(g, p0);
  for (int64_t p = p0; p < p1; p++) {
    dw_next(g, img, p, nb, &walk, xp);
    __m512i acc = _mm512_setzero_si512();
    for (int pr = 0; pr < pairs; pr++) {
      const __m128i a = _mm_xor_si128(_mm_loadu_si128((const __m128i *)xp[2 * pr]), mask);
      const __m128i b = 2 * pr + 1 < taps
                            ? _mm_xor_si128(_mm_loadu_si128((const __m128i *)xp[2 * pr + 1]), mask)
                            : _mm_xor_si128(pad, mask);
      const __m256i ab = _mm256_set_m128i(_mm_unpackhi_epi8(a, b), _mm_unpacklo_epi8(a, b));
      acc = _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_cvtepu8_epi16(ab), _mm512_loadu_si512(w2[pr])));
    }
    vnni_store(&q, rt_qconv_yat(g, img, nb, p), keep, bias, mult, acc);
  }
}

/* vnni_micro for np pixels: R x NB with x's mask as constants, so that
 * each variant compiles to its own loop. A short tail takes a short tile:
 * 1-2 pixels R = 2, 3-4 R = 4, not 6 rows of which most repeat the last
 * (a 7x7 map's tile of 49 pixels ends in 1, a fully connected layer is 1). */
T_VNNI_INLINE void vnni_rows(const rt_qconv_geom *g, int64_t img, int64_t p, int np, int64_t nb, int nnb,
                             int64_t lo, int64_t kb, const int s8) {
  const uint32_t mask = s8 ? 0x80808080u : 0;
  if (nnb == 1)
    vnni_micro(g, img, p, np, nb, 1, lo, kb, 12, 1, mask);
  else if (np <= 2)
    vnni_micro(g, img, p, np, nb, nnb, lo, kb, 2, 4, mask);
  else if (np <= 4)
    vnni_micro(g, img, p, np, nb, nnb, lo, kb, 4, 4, mask);
  else
    vnni_micro(g, img, p, np, nb, nnb, lo, kb, 6, 4, mask);
}

T_VNNI void rt_qconv_tile_vnni(const rt_qconv_geom *g, int64_t img, int64_t p0, int64_t p1, int64_t nb0,
                               int64_t nb1) {
  if (g->depthwise) {
    if (g->kh * g->kw > 2 * DW_MAX_PAIRS || g->epi) { /* vnni_dw requantizes only */
      rt_qconv_tile_c(g, img, p0, p1, nb0, nb1);
      return;
    }
    for (int64_t nb = nb0; nb < nb1; nb++)
      vnni_dw(g, img, p0, p1, nb);
    return;
  }
  if (g->wwin) {
    vnni_window_tile(g, img, p0, p1, nb0, nb1);
    return;
  }
  for (int64_t nb = nb0; nb < nb1;) {
    int64_t lo, hi;
    const int nnb = same_range(g, nb, nb1, 4, &lo, &hi), R = nnb == 1 ? 12 : 6;
    for (int64_t p = p0; p < p1; p += R) {
      const int np = (int)(p1 - p < R ? p1 - p : R);
      if (g->xmask)
        vnni_rows(g, img, p, np, nb, nnb, lo, hi - lo, 1);
      else
        vnni_rows(g, img, p, np, nb, nnb, lo, hi - lo, 0);
    }
    nb += nnb;
  }
}

#endif
