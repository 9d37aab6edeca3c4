/* kernels_stage_x86.c - the x86 CONV2D tile's input staging: img2col rows
 * of a K chunk converted to f32 in L0A (a plain conversion copy for 1x1
 * stride-1 convolutions), and an RGB stem's input rows packed into L1 from
 * NC1HWC0 or straight from an NCHW model input. Contract in
 * kernels_stage_x86.h; the tile that reads them in kernels_cube_x86.c.
 */
#include "runtime/kernels_stage_x86.h"

#if defined(__x86_64__) && defined(__GNUC__)

/* Input row ih of an ND (NCHW) x, columns 0 .. wend-1, as [column][cin]
 * f32 at d: four columns at a time, the channels' four values transposed
 * into four pixels (each a 4-lane store whose lanes past cin the next
 * column overwrites), rounded to fp16 when g->xr16. */
static AVX2 void pack_row_nd(const rt_conv_geom *g, int64_t img, int64_t ih, int64_t wend, float *d) {
  const int64_t cin = g->cin, hw = g->h * g->w_;
  const int f16 = g->x->dtype == DT_FLOAT16;
  const size_t at = (size_t)((img * cin) * hw + ih * g->w_);
  int64_t iw = 0;
  for (; iw + 4 <= wend; iw += 4) {
    __m128 v[4];
    for (int c = 0; c < 4; c++) {
      const size_t o = at + (size_t)(c * hw + iw);
      v[c] = c >= cin ? _mm_setzero_ps()
             : f16    ? _mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)((const uint16_t *)g->xd + o)))
                      : _mm_loadu_ps((const float *)g->xd + o);
      if (g->xr16) v[c] = _mm_cvtph_ps(_mm_cvtps_ph(v[c], _MM_FROUND_TO_NEAREST_INT));
    }
    _MM_TRANSPOSE4_PS(v[0], v[1], v[2], v[3]);
    for (int j = 0; j < 4; j++)
      _mm_storeu_ps(d + (iw + j) * cin, v[j]);
  }
  for (; iw < wend; iw++) /* the last columns one value at a time */
    for (int64_t c = 0; c < cin; c++)
      d[iw * cin + c] = rt_conv_x_nd(g, img, c, ih, iw);
}

AVX2 int rt_stage_pack_rows(const rt_conv_geom *g, int64_t img, int64_t m0, int64_t mrows, rt_core *core,
                            packed *pk) {
  const int64_t cin = g->cin, sh = g->p.sh;
  if (cin > 4 || g->p.dw != 1 || g->c1v != 1) return 0;
  const int64_t pl0 = rt_conv_plane(g, img, 0); /* -1: the one depth tap is padding, all rows zero */
  const int64_t oh0 = m0 / g->wo, oh1 = (m0 + mrows - 1) / g->wo;
  const int64_t ih0 = oh0 * sh - g->p.pt, nrows = (oh1 - oh0) * sh + (g->p.kh - 1) * g->p.dh + 1;
  const int64_t pw = (g->wo - 1) * g->p.sw + g->p.kw, rowf = pw * cin;
  if ((uint64_t)(nrows * rowf + 4) * sizeof(float) > core->l1_bytes) return 0; /* + the last 4-lane store */
  float *out = (float *)core->l1;
  const int f16 = g->x->dtype == DT_FLOAT16;
  const size_t plane = (size_t)(pl0 < 0 ? 0 : pl0);
  const int64_t h = g->h, w = g->w_, pl = g->p.pl, wend = pw - pl < w ? pw - pl : w; /* columns < wend */
  for (int64_t r = 0; r < nrows; r++) {
    float *dst = out + r * rowf;
    const int64_t ih = ih0 + r;
    memset(dst, 0, (size_t)rowf * sizeof(float));
    if (ih < 0 || ih >= h || pl0 < 0) continue;
    if (g->xnd) {
      pack_row_nd(g, img, ih, wend, dst + pl * cin);
      if (pl + wend < pw)
        memset(dst + (pl + wend) * cin, 0, (size_t)((pw - pl - wend) * cin) * sizeof(float));
      continue;
    }
    /* the interior: 4 lanes stored, cin kept (the next column overwrites the rest) */
    const size_t at = (plane + (size_t)(ih * w)) * C0;
    float *d = dst + pl * cin;
    if (f16) {
      const uint16_t *src = (const uint16_t *)g->xd + at;
      for (int64_t iw = 0; iw < wend; iw++, d += cin, src += C0)
        _mm_storeu_ps(d, _mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)src)));
    } else {
      const float *src = (const float *)g->xd + at;
      for (int64_t iw = 0; iw < wend; iw++, d += cin, src += C0)
        _mm_storeu_ps(d, _mm_loadu_ps(src));
    }
    if (pl + wend < pw) memset(dst + (pl + wend) * cin, 0, (size_t)((pw - pl - wend) * cin) * sizeof(float));
  }
  *pk = (packed){out, oh0, rowf};
  return 1;
}

AVX2 void rt_stage_a(const rt_conv_geom *g, int64_t img, int64_t m0, int64_t mrows, const int64_t *kf,
                     int64_t kn, int64_t lda, float *l0a) {
  const int f16 = g->x->dtype == DT_FLOAT16;
  const int64_t taps = (int64_t)g->p.kh * g->p.kw, hw = g->h * g->w_;
  if (taps == 1 && g->p.sh == 1 && g->p.sw == 1 && g->p.pt == 0 && g->p.pl == 0 && g->ho == g->h &&
      g->wo == g->w_) { /* 1x1: the input rows are the GEMM rows, a conversion copy */
    if (!g->xsd) { /* L0A row by row: each row written in order, reading 16 lanes from each channel plane */
      int64_t at0[MAX_CHUNK]; /* per fractal: its plane's first element of row m0, or -1 (depth padding) */
      int lanes[MAX_CHUNK];   /* partial: a last channel block (in 3-D, one per depth tap) */
      for (int64_t kk = 0; kk < kn; kk++) {
        const int64_t pl = rt_conv_plane(g, img, kf[kk]);
        at0[kk] = pl < 0 ? -1 : (pl + m0) * C0;
        lanes[kk] = rt_conv_k_lanes(g, kf[kk]);
      }
      for (int64_t m = 0; m < mrows; m++) {
        float *dst = l0a + m * lda; /* a partial block's padding lanes (zeros) spill into the next one's */
        for (int64_t kk = 0; kk < kn; dst += lanes[kk], kk++) {
          const size_t at = (size_t)(at0[kk] + m * C0);
          _mm256_storeu_ps(dst, at0[kk] < 0 ? _mm256_setzero_ps() : ld8h(g->xd, f16, at));
          _mm256_storeu_ps(dst + 8, at0[kk] < 0 ? _mm256_setzero_ps() : ld8h(g->xd, f16, at + 8));
        }
      }
      return;
    }
    int64_t col = 0; /* x_scale: block by block, each scaled by its image's factors */
    for (int64_t kk = 0; kk < kn; kk++) {
      const size_t at = ((size_t)((img * g->c1 + kf[kk]) * hw) + (size_t)m0) * C0;
      float *dst = l0a + col;
      const int lanes = rt_conv_k_lanes(g, kf[kk]);
      col += lanes;
      int32_t mk[2 * C0]; /* the last channel block stores only its real lanes */
      for (int j = 0; j < 2 * C0; j++)
        mk[j] = j < C0 && j < lanes ? -1 : 0;
      const __m256i mlo = _mm256_loadu_si256((const __m256i *)mk);
      const __m256i mhi = _mm256_loadu_si256((const __m256i *)(mk + 8));
      const size_t sat = (size_t)(img * g->c1 + kf[kk]) * C0;
      const __m256 s0 = ld8h(g->xsd, f16, sat), s1 = ld8h(g->xsd, f16, sat + 8);
      for (int64_t m = 0; m < mrows; m++, dst += lda) {
        __m256 lo = _mm256_mul_ps(ld8h(g->xd, f16, at + (size_t)m * C0), s0);
        __m256 hi = _mm256_mul_ps(ld8h(g->xd, f16, at + (size_t)m * C0 + 8), s1);
        if (lanes == C0) { /* (masked stores are slow on some hosts) */
          _mm256_storeu_ps(dst, lo);
          _mm256_storeu_ps(dst + 8, hi);
        } else {
          _mm256_maskstore_ps(dst, mlo, lo);
          _mm256_maskstore_ps(dst + 8, mhi, hi);
        }
      }
    }
    return;
  }
  int32_t dy[MAX_CHUNK], dx[MAX_CHUNK], lanes[MAX_CHUNK];
  uint64_t hlim[MAX_CHUNK]; /* H, or 0 for a depth tap in the padding (nothing inside) */
  size_t plane[MAX_CHUNK];
  for (int64_t kk = 0; kk < kn; kk++) {
    int64_t tap = kf[kk] % taps, pl = rt_conv_plane(g, img, kf[kk] / taps);
    dy[kk] = (int32_t)((tap / g->p.kw) * g->p.dh - g->p.pt);
    dx[kk] = (int32_t)((tap % g->p.kw) * g->p.dw - g->p.pl);
    hlim[kk] = pl < 0 ? 0 : (uint64_t)g->h;
    lanes[kk] = rt_conv_k_lanes(g, kf[kk]);
    plane[kk] = (size_t)(pl < 0 ? 0 : pl);
  }
  const uint64_t w = (uint64_t)g->w_;
  const int64_t wo = g->wo, sh = g->p.sh, sw = g->p.sw;
  const void *xd = g->xd;
  int64_t oh = m0 / wo, ow = m0 % wo;
  for (int64_t m = 0; m < mrows; m++) {
    float *dst = l0a + m * lda;
    const int64_t bh = oh * sh, bw = ow * sw;
    for (int64_t kk = 0; kk < kn; kk++) {
      int64_t ih = bh + dy[kk], iw = bw + dx[kk];
      const int inside = (uint64_t)ih < hlim[kk] && (uint64_t)iw < w;
      if (lanes[kk] <= 4) { /* an RGB stem: one 4-lane conversion */
        __m128 v = _mm_setzero_ps();
        if (inside) {
          size_t at = (plane[kk] + (size_t)(ih * (int64_t)w + iw)) * C0;
          v = f16 ? _mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)((const uint16_t *)xd + at)))
                  : _mm_loadu_ps((const float *)xd + at);
        }
        _mm_storeu_ps(dst, v);
        dst += lanes[kk];
        continue;
      }
      if (lanes[kk] <= 8) { /* a few real channels: half the lanes suffice */
        __m256 lo = _mm256_setzero_ps();
        if (inside) lo = ld8h(xd, f16, (plane[kk] + (size_t)(ih * (int64_t)w + iw)) * C0);
        _mm256_storeu_ps(dst, lo);
        dst += lanes[kk];
        continue;
      }
      __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
      if (inside) {
        size_t at = (plane[kk] + (size_t)(ih * (int64_t)w + iw)) * C0;
        if (f16) {
          const uint16_t *s = (const uint16_t *)xd + at;
          lo = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)s));
          hi = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(s + 8)));
        } else {
          lo = _mm256_loadu_ps((const float *)xd + at);
          hi = _mm256_loadu_ps((const float *)xd + at + 8);
        }
      }
      _mm256_storeu_ps(dst, lo);
      _mm256_storeu_ps(dst + 8, hi);
      dst += lanes[kk];
    }
    if (++ow == wo) ow = 0, oh++;
  }
}

#endif
