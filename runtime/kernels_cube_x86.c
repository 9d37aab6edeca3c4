/* kernels_cube_x86.c - the CONV2D tile on AVX2 + FMA + F16C hosts.
 *
 * Same tiles as the portable path in kernels_cube.c (the tiling contract of
 * om_format.h is unchanged), but every step uses the host:
 *   load3d  img2col of a K chunk into L0A as f32 [pixel][k], fp16 converted
 *           16 lanes at a time with vcvtph2ps (1x1 stride-1 convolutions are
 *           a plain conversion copy of NC1HWC0 rows: no img2col);
 *   loadB   none: FRACTAL_Z stores each fractal k-major ([ci][co]), so the
 *           micro-kernel reads the weights in place, a B row (16 output
 *           channels) per k, converting f16 rows with vcvtph2ps as it goes;
 *           the K walk (kwalk) lists each fractal's A and B runs; on
 *           tiles of few pixels the first pixel group fetches the next
 *           n block's weights while it multiplies one (fetch_ahead);
 *   mmad    a 6-pixel x 16-channel micro-kernel: 12 YMM accumulators, per k
 *           step two B loads and six broadcasts of A feeding 12 FMAs; on
 *           AVX-512 hosts a 6-pixel x 2-n-block one instead: 12 ZMM
 *           accumulators (a ZMM register is a 16-lane channel block), two
 *           B loads and six broadcasts feeding 12 FMAs of twice the width;
 *           pixel groups outer, n blocks inner. On YMM hosts a grouped
 *           piece of 8-channel groups (rt_conv_geom.diag8: each fractal two
 *           8x8 diagonal blocks, the rest zero) multiplies B rows 0..7 into
 *           lanes 0..7 and rows 8..15 into lanes 8..15 only: half the FMAs,
 *           the same sums (the products left out were zeros). The first
 *           chunk starts from zero,
 *           middle chunks keep partial sums in L0C ([n block][tile_m][16]
 *           f32), and the last chunk runs the epilogue straight from the
 *           registers: + bias, + residual (f16 or f32), relu / clip, padding
 *           channels forced to 0, f16 store with vcvtps2ph (round to nearest
 *           even) or f32 store.
 * A fractal whose kernel tap reads only padding for every pixel of the tile
 * (rt_conv_tap_dead: the outer taps of a dilated window on a small map) is
 * left out of the K walk and of the staging, on every path below but the
 * matrix-vector one; its products were all zeros, so the sums are the same.
 * On the img2col and direct paths a convolution with padding also leaves
 * out, per micro-kernel group of pixels, the fractals that read only
 * padding for that group (kwalk_group, with groups kept within output rows
 * when a row's first or last pixels read padding through a whole column of
 * taps: the ASPP convs of DeepLab, whose tiles span whole rows).
 * K runs in the task's chunks of tile_k fractals (passes/tiling.c sizes them
 * for this kernel: a pass's weights, read in place, about the staged L0B's
 * bytes); a chunk's img2col rows go through L0A in groups of as many pixels
 * as fit (om_format.h guarantees 16). When the whole K is one chunk, pixel
 * groups are finished one after the other with no partial sums in L0C.
 * Three tile shapes skip img2col: kernels wider than 1x1 on whole
 * channel blocks read the input rows converted once into L1
 * (conv_tile_direct: the micro-kernel addresses each fractal of each pixel
 * there); inputs of at most 4 channels (RGB stems) are packed into L1 rows
 * so that a kernel row of taps is one contiguous run the micro-kernel reads
 * there (rt_stage_pack_rows, conv_packed; their weights, 3 of 16 lanes a fractal,
 * are staged compactly as f32 in L0B), from NC1HWC0 or straight from an ND
 * (NCHW) model input, four pixels at a time through a 4x4 transpose (an ND
 * stem tile the packed rows do not take, dilated or too wide for L1, goes
 * to the portable tile); an image of a single output pixel
 * (fully connected layers) is a matrix-vector product read straight from
 * FRACTAL_Z (conv_tile_gemv).
 * fp16 x fp16 products are exact in f32, so results differ from the portable
 * path only by summation order (FMA keeps one rounding per step).
 *
 * Compiled for plain x86-64: every function carries target("avx2,fma,f16c")
 * and is only reached through rt_cpu() (cpu.c) when the CPU has all three;
 * the ZMM micro-kernels carry the AVX512 target and are called only when
 * rt_cpu()->avx512 says the host has AVX-512F and DQ.
 * The MATMUL tile (kernels_matmul_x86.c) runs its chunks through
 * rt_cube_gemm_x86 here: the same kernels, and on AVX-512 hosts one of its
 * own for 7 to 12 rows (mkr: its rows are evenly spaced, so four pointers
 * reach them), which loads each B row once for up to twice the FMAs. A
 * tile's rows are split evenly into groups of at most 12 (197 rows: 10 x 12
 * + 7 x 11, not 16 x 12 + a 5-row tail), so that no group is a short tail
 * that loads and converts every B row for a few FMAs.
 */
#include "runtime/kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)

#include "runtime/kernels_stage_x86.h"
#include "runtime/x86_simd.h"

enum { MR = 6, MAX_NB = 16 }; /* pixel rows of the micro-kernel; n blocks per pass */

/* --- the K walk: which A and B runs the micro-kernel multiplies
 *
 * A chunk's K is a list of segments; segment s is len[s] k values whose A
 * values start aoff[s] floats past a pixel's A base and whose B rows (16
 * output lanes each, f16 when bh, else f32, brow bytes apart) start boff[s]
 * bytes past the n block's B base. B is read in place from the FRACTAL_Z
 * weights (one segment per fractal: rows ci < k_lanes, fractal stride c1out
 * fractals), for the packed stems from f32 rows staged in L0B, for the
 * Winograd GEMMs from the transformed weights in UB. */
typedef struct kwalk {
  size_t n;
  int bh;
  int diag;        /* every fractal is two 8x8 diagonal blocks (rt_conv_geom.diag8): mk's D */
  size_t brow;     /* B bytes from one row (k) to the next */
  size_t nbstride; /* B bytes from one n block to the next */
  size_t aoff[MAX_CHUNK], boff[MAX_CHUNK];
  int len[MAX_CHUNK];
  int32_t dy[MAX_CHUNK], dx[MAX_CHUNK]; /* a conv walk's tap offsets (rt_conv_off_dead), for kwalk_group */
} kwalk;

/* The walk over the kn fractals kf[0 .. kn-1] with B in place and A as
 * rt_stage_a lays out an img2col row (each fractal's real lanes after the
 * previous one's; conv_tile_direct replaces aoff with its own addresses):
 * returns the B base of n block nb0, which boff counts from. */
static const void *kwalk_weights(const rt_conv_geom *g, const int64_t *kf, int64_t kn, int64_t nb0,
                                 kwalk *kw) {
  const size_t brow = C0 * dtype_size((int)g->w->dtype), fb = C0 * brow; /* bytes of a B row, a fractal */
  kw->n = (size_t)kn, kw->bh = g->w->dtype == DT_FLOAT16, kw->diag = g->diag8, kw->brow = brow,
  kw->nbstride = fb;
  size_t col = 0;
  const int64_t taps = (int64_t)g->p.kh * g->p.kw;
  for (int64_t kk = 0; kk < kn; kk++) {
    const int64_t tap = kf[kk] % taps;
    kw->boff[kk] = (size_t)(kf[kk] * g->c1out) * fb;
    kw->len[kk] = rt_conv_k_lanes(g, kf[kk]);
    kw->aoff[kk] = col;
    kw->dy[kk] = (int32_t)((tap / g->p.kw) * g->p.dh - g->p.pt);
    kw->dx[kk] = (int32_t)((tap % g->p.kw) * g->p.dw - g->p.pl);
    col += (size_t)kw->len[kk];
  }
  return (const uint8_t *)g->wd + (size_t)nb0 * fb;
}

/* Skipping per pixel group. A tile's K walk keeps the taps that touch the
 * image for some of its pixels; a group of up to MR of them (one
 * micro-kernel call) may still read only padding through some of those: a
 * 3x3 window of dilation 12 on a 32x32 map reads padding through its left
 * column for the 12 first pixels of every row, through its top row for the
 * 12 first rows. kwalk_group gives the micro-kernel only the segments that
 * touch the image for the group (the others' products are 0 * w: the sums
 * are the same bits). It pays when a tap is dead for whole groups, so
 * tiles of convolutions with padding ask it (group_skip), and those whose
 * left or right columns read padding for at least MR pixels of each row
 * form their groups within output rows (group_rows), so that a group's
 * columns are a run of one row, not a row's end and the next one's start. */
static int group_skip(const rt_conv_geom *g) { return g->p.pt || g->p.pl || g->p.pb || g->p.pr; }

/* Whether groups keep within output rows: the first or the last column tap
 * reads padding for at least MR output columns of each row. */
static int group_in_rows(const rt_conv_geom *g) {
  const int64_t sw = g->p.sw, pl = g->p.pl, wo = g->wo;
  const int64_t left = (pl + sw - 1) / sw;                                         /* ow * sw - pl < 0 */
  const int64_t right = wo - (g->w_ + pl - (g->p.kw - 1) * g->p.dw + sw - 1) / sw; /* the last tap >= W */
  return left >= MR || right >= MR;
}

/* Rows of the next group at pixel m (of the image) with `left` pixels left
 * to group: mk_group_rows, within m's output row when in_rows. */
static int group_rows(const rt_conv_geom *g, int in_rows, int64_t m, int64_t left) {
  const int64_t row_left = g->wo - m % g->wo;
  return mk_group_rows(in_rows && row_left < left ? row_left : left);
}

/* The segments of kw whose taps touch the image for pixels m .. m+rows-1
 * into sub (its header copied); returns their count. */
static size_t kwalk_group(const rt_conv_geom *g, const kwalk *kw, int64_t m, int64_t rows, kwalk *sub) {
  const rt_conv_span sp = rt_conv_span_of(g, m, rows);
  size_t n = 0;
  sub->bh = kw->bh, sub->diag = kw->diag, sub->brow = kw->brow, sub->nbstride = kw->nbstride;
  for (size_t sg = 0; sg < kw->n; sg++)
    if (!rt_conv_off_dead(g, &sp, kw->dy[sg], kw->dx[sg]))
      sub->aoff[n] = kw->aoff[sg], sub->boff[n] = kw->boff[sg], sub->len[n] = kw->len[sg], n++;
  return sub->n = n;
}

/* The fractals of chunk kc .. kc+kn-1 that pixels m0 .. m0+mrows-1 read
 * through a tap touching the image, in order, into kf; returns how many
 * (rt_conv_tap_dead: the others add only zeros). */
static int64_t live_fractals(const rt_conv_geom *g, int64_t m0, int64_t mrows, int64_t kc, int64_t kn,
                             int64_t *kf) {
  int64_t n = 0;
  for (int64_t kk = 0; kk < kn; kk++)
    if (!rt_conv_tap_dead(g, m0, mrows, kc + kk)) kf[n++] = kc + kk;
  return n;
}

/* --- micro-kernel */

/* The write-back of one n block: y rows (pixels) start at y/res, ystride
 * and rstride elements apart (16 in NC1HWC0; a MATMUL's ND row length). */
typedef struct epi {
  float bias[C0];    /* the first chunk starts from the bias */
  uint32_t keep[C0]; /* all ones for the real channels, 0 for padding ones */
  float lo, hi;      /* OM_ACT_CLIP bounds */
  int act;
  uint8_t yf16, rf16, partial; /* partial: some lanes are padding channels */
  uint8_t half;                /* lanes 8..15 are all padding: only lanes 0..7 are computed (YMM kernels) */
  void *y;                     /* NULL: keep the sums in L0C (not the last chunk) */
  const void *res;             /* or NULL */
  size_t ystride, rstride;     /* elements */
} epi;

AVX2_INLINE __m256 act8(__m256 v, const epi *e) {
  if (e->act == OM_ACT_RELU) return _mm256_max_ps(v, _mm256_setzero_ps());
  if (e->act == OM_ACT_CLIP)
    return _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(e->lo)), _mm256_set1_ps(e->hi));
  return v;
}

AVX2_INLINE __m256 keep8(const epi *e, int h) {
  return _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)(e->keep + h * 8)));
}

/* c[r][0..16) (+)= sum over the segments s of kw, k < len[s], of
 * A[r][k] * B[k][0..16) for r < R, R <= MR: pixel r's A values of segment s
 * start at a + roff[r] + aoff[s], the B rows at b + boff[s] bytes (f16 when BH).
 * first: start from the bias instead of c; e->y: write y instead of c. H = 1
 * (an n block whose lanes 8..15 are padding channels, e->half) computes
 * lanes 0..7 only: half the FMAs and B loads; lanes 8..15 of y are written
 * 0, as the padding rule wants, and those of c are left alone (no later
 * chunk reads them). The accumulators are named variables (an array of
 * __m256 is kept in memory by gcc); rows >= R and the upper half with H = 1
 * are dead code once R and H are constants. Converting f16 B rows in the
 * loop costs no throughput: the FMAs bound it either way. */
#define MK_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
AVX2_INLINE void mk(const int R, const int H, const int BH, const int D, const kwalk *kw, const float *a,
                    const void *b, const size_t *roff, float *c, size_t cstride, int first, const epi *e,
                    size_t yrow) {
  (void)cstride; /* one block a call */
  const __m256 bias0 = _mm256_loadu_ps(e->bias), bias1 = _mm256_loadu_ps(e->bias + 8);
#define MK_DECL(r) __m256 c##r##0 = bias0, c##r##1 = bias1;
  MK_ROWS(MK_DECL)
#define MK_LOAD(r)                                                                                           \
  if (R > r && !first)                                                                                       \
    c##r##0 = _mm256_loadu_ps(c + r * C0), c##r##1 = H > 1 ? _mm256_loadu_ps(c + r * C0 + 8) : c##r##1;
  MK_ROWS(MK_LOAD)
  const size_t o1 = R > 1 ? roff[1] : 0, o2 = R > 2 ? roff[2] : 0, o3 = R > 3 ? roff[3] : 0;
  const size_t o4 = R > 4 ? roff[4] : 0, o5 = R > 5 ? roff[5] : 0;
  const size_t brow = kw->brow;
  for (size_t sg = 0; sg < kw->n; sg++) {
    const float *a0 = a + kw->aoff[sg], *a1 = a0 + o1, *a2 = a0 + o2, *a3 = a0 + o3, *a4 = a0 + o4,
                *a5 = a0 + o5;
    const uint8_t *bs = (const uint8_t *)b + kw->boff[sg];
    const int n = kw->len[sg];
    if (D) { /* rows k < 8 reach lanes 0..7 only, rows 8 + k lanes 8..15 only: both at once */
      const int nhi = H > 1 && n > 8 ? n - 8 : 0, nlo = n < 8 ? n : 8;
      const uint8_t *bh = bs + 8 * brow;
      int k = 0;
      for (; k < nhi; k++, bs += brow, bh += brow) {
        const __m256 b0 = ld8h(bs, BH, 0), b1 = ld8h(bh, BH, 8);
        __m256 av;
#define MK_FMA_D(r)                                                                                          \
  if (R > r) {                                                                                               \
    av = _mm256_broadcast_ss(a##r + k);                                                                      \
    c##r##0 = _mm256_fmadd_ps(av, b0, c##r##0);                                                              \
    av = _mm256_broadcast_ss(a##r + k + 8);                                                                  \
    c##r##1 = _mm256_fmadd_ps(av, b1, c##r##1);                                                              \
  }
        MK_ROWS(MK_FMA_D)
      }
      for (; k < nlo; k++, bs += brow) {
        const __m256 b0 = ld8h(bs, BH, 0);
        __m256 av;
#define MK_FMA_LO(r)                                                                                         \
  if (R > r) {                                                                                               \
    av = _mm256_broadcast_ss(a##r + k);                                                                      \
    c##r##0 = _mm256_fmadd_ps(av, b0, c##r##0);                                                              \
  }
        MK_ROWS(MK_FMA_LO)
      }
      continue;
    }
    for (int k = 0; k < n; k++, bs += brow) {
      __m256 b0 = ld8h(bs, BH, 0), b1 = H > 1 ? ld8h(bs, BH, 8) : b0, av;
#define MK_FMA(r)                                                                                            \
  if (R > r) {                                                                                               \
    av = _mm256_broadcast_ss(a##r + k);                                                                      \
    c##r##0 = _mm256_fmadd_ps(av, b0, c##r##0);                                                              \
    if (H > 1) c##r##1 = _mm256_fmadd_ps(av, b1, c##r##1);                                                   \
  }
      MK_ROWS(MK_FMA)
    }
  }
  if (!e->y) {
#define MK_STORE(r)                                                                                          \
  if (R > r) {                                                                                               \
    _mm256_storeu_ps(c + r * C0, c##r##0);                                                                   \
    if (H > 1) _mm256_storeu_ps(c + r * C0 + 8, c##r##1);                                                    \
  }
    MK_ROWS(MK_STORE)
    return;
  }
#define MK_EPI(r)                                                                                            \
  if (R > r) {                                                                                               \
    size_t at = (yrow + r) * e->ystride, rat = (yrow + r) * e->rstride;                                      \
    __m256 v0 = c##r##0, v1 = c##r##1;                                                                       \
    if (e->res) {                                                                                            \
      v0 = _mm256_add_ps(v0, ld8h(e->res, e->rf16, rat));                                                    \
      v1 = _mm256_add_ps(v1, ld8h(e->res, e->rf16, rat + 8));                                                \
    }                                                                                                        \
    v0 = act8(v0, e), v1 = H > 1 ? act8(v1, e) : _mm256_setzero_ps();                                        \
    if (e->partial) v0 = _mm256_and_ps(v0, keep8(e, 0)), v1 = _mm256_and_ps(v1, keep8(e, 1));                \
    st8h(e->y, e->yf16, at, v0);                                                                             \
    st8h(e->y, e->yf16, at + 8, v1);                                                                         \
  }
  MK_ROWS(MK_EPI)
}

/* The instances of both kernels (the YMM one ignores cstride): row groups
 * of 1..6 rows, for B in f16 (_h) and f32 (_f); YMM full blocks and half
 * blocks (e->half: lanes 0..7 only), ZMM pairs of blocks and single ones. */
typedef void mk_fn(int rows, const kwalk *kw, const float *a, const void *b, const size_t *roff, float *c,
                   size_t cstride, int first, const epi *e, size_t yrow);
#define MK_INSTANCE(NAME, TARGET, KERNEL, W, BH)                                                             \
  static TARGET void NAME(int rows, const kwalk *kw, const float *a, const void *b, const size_t *roff,      \
                          float *c, size_t cstride, int first, const epi *e, size_t yrow) {                  \
    switch (rows) {                                                                                          \
    case 1: KERNEL(1, W, BH, kw, a, b, roff, c, cstride, first, e, yrow); break;                             \
    case 2: KERNEL(2, W, BH, kw, a, b, roff, c, cstride, first, e, yrow); break;                             \
    case 3: KERNEL(3, W, BH, kw, a, b, roff, c, cstride, first, e, yrow); break;                             \
    case 4: KERNEL(4, W, BH, kw, a, b, roff, c, cstride, first, e, yrow); break;                             \
    case 5: KERNEL(5, W, BH, kw, a, b, roff, c, cstride, first, e, yrow); break;                             \
    case 6: KERNEL(6, W, BH, kw, a, b, roff, c, cstride, first, e, yrow); break;                             \
    default: break;                                                                                          \
    }                                                                                                        \
  }
#define mk_dense(R, H, BH, ...) mk(R, H, BH, 0, __VA_ARGS__)
#define mk_diag(R, H, BH, ...) mk(R, H, BH, 1, __VA_ARGS__)
MK_INSTANCE(mk_full_h, AVX2, mk_dense, 2, 1)
MK_INSTANCE(mk_half_h, AVX2, mk_dense, 1, 1)
MK_INSTANCE(mk_full_f, AVX2, mk_dense, 2, 0)
MK_INSTANCE(mk_half_f, AVX2, mk_dense, 1, 0)
MK_INSTANCE(mk_full_h_d, AVX2, mk_diag, 2, 1)
MK_INSTANCE(mk_half_h_d, AVX2, mk_diag, 1, 1)
MK_INSTANCE(mk_full_f_d, AVX2, mk_diag, 2, 0)
MK_INSTANCE(mk_half_f_d, AVX2, mk_diag, 1, 0)

/* An epi's write-back fields in locals: the stores through y may alias
 * *e as far as the compiler knows, so reading e at every row would reload
 * and re-test each field there. */
typedef struct epi_w {
  uint8_t *y;
  const uint8_t *res;
  __m512 lo, hi;
  __mmask16 keep;
  int act, yf16, rf16;
  size_t ystride, rstride;
} epi_w;

AVX512_INLINE epi_w epi_w_of(const epi *e) {
  const __mmask16 keep = e->partial ? _mm512_movepi32_mask(_mm512_loadu_si512(e->keep)) : (__mmask16)0xffff;
  return (epi_w){(uint8_t *)e->y,
                 (const uint8_t *)e->res,
                 _mm512_set1_ps(e->lo),
                 _mm512_set1_ps(e->hi),
                 keep,
                 e->act,
                 e->yf16,
                 e->rf16,
                 e->ystride,
                 e->rstride};
}

/* Row `row` of the block: + residual, activation, padding lanes 0, store. */
AVX512_INLINE void epi16(__m512 v, const epi_w *w, size_t row) {
  const size_t at = row * w->ystride;
  if (w->res) v = _mm512_add_ps(v, ld16h(w->res, w->rf16, row * w->rstride));
  if (w->act == OM_ACT_RELU) v = _mm512_max_ps(v, _mm512_setzero_ps());
  if (w->act == OM_ACT_CLIP) v = _mm512_min_ps(_mm512_max_ps(v, w->lo), w->hi);
  st16h(w->y, w->yf16, at, _mm512_maskz_mov_ps(w->keep, v));
}

/* The same product on AVX-512 hosts (rt_cpu()->avx512) for NB <= 2 n
 * blocks at once: a 16-lane ZMM register is a whole row of an n block, so R
 * rows x NB blocks keep R * NB accumulators; per k step NB B loads (f16
 * rows converted with the 512-bit vcvtph2ps) and R broadcasts of A feed
 * R * NB FMAs. Block j's B rows start kw->nbstride * j bytes past b's, its
 * sums c + cstride * j, its write-back e[j]. Padding lanes are computed
 * (their B lanes are zero) and masked at the store, so there is no half
 * case here. Two blocks give 12 chains for 6 rows: enough to hide the FMA
 * latency; one block (an odd last block, the Winograd GEMMs) has 6. */
AVX512_INLINE void mkw(const int R, const int NB, const int BH, const kwalk *kw, const float *a,
                       const void *b, const size_t *roff, float *c, size_t cstride, int first, const epi *e,
                       size_t yrow) {
  const __m512 bias0 = _mm512_loadu_ps(e[0].bias), bias1 = NB > 1 ? _mm512_loadu_ps(e[NB - 1].bias) : bias0;
  float *c1 = c + (NB > 1 ? cstride : 0);
#define MW_DECL(r) __m512 c##r##0 = bias0, c##r##1 = bias1;
  MK_ROWS(MW_DECL)
#define MW_LOAD(r)                                                                                           \
  if (R > r && !first)                                                                                       \
    c##r##0 = _mm512_loadu_ps(c + r * C0), c##r##1 = NB > 1 ? _mm512_loadu_ps(c1 + r * C0) : c##r##1;
  MK_ROWS(MW_LOAD)
  const size_t o1 = R > 1 ? roff[1] : 0, o2 = R > 2 ? roff[2] : 0, o3 = R > 3 ? roff[3] : 0;
  const size_t o4 = R > 4 ? roff[4] : 0, o5 = R > 5 ? roff[5] : 0;
  const size_t brow = kw->brow, bstep = NB > 1 ? kw->nbstride : 0;
  for (size_t sg = 0; sg < kw->n; sg++) {
    const float *a0 = a + kw->aoff[sg], *a1 = a0 + o1, *a2 = a0 + o2, *a3 = a0 + o3, *a4 = a0 + o4,
                *a5 = a0 + o5;
    const uint8_t *bs = (const uint8_t *)b + kw->boff[sg];
    const int n = kw->len[sg];
    for (int k = 0; k < n; k++, bs += brow) {
      __m512 b0 = ld16h(bs, BH, 0), b1 = NB > 1 ? ld16h(bs + bstep, BH, 0) : b0, av;
#define MW_FMA(r)                                                                                            \
  if (R > r) {                                                                                               \
    av = _mm512_set1_ps(a##r[k]);                                                                            \
    c##r##0 = _mm512_fmadd_ps(av, b0, c##r##0);                                                              \
    if (NB > 1) c##r##1 = _mm512_fmadd_ps(av, b1, c##r##1);                                                  \
  }
      MK_ROWS(MW_FMA)
    }
  }
  if (!e[0].y) {
#define MW_STORE(r)                                                                                          \
  if (R > r) {                                                                                               \
    _mm512_storeu_ps(c + r * C0, c##r##0);                                                                   \
    if (NB > 1) _mm512_storeu_ps(c1 + r * C0, c##r##1);                                                      \
  }
    MK_ROWS(MW_STORE)
    return;
  }
  const epi_w w0 = epi_w_of(&e[0]), w1 = NB > 1 ? epi_w_of(&e[1]) : w0;
#define MW_EPI(r)                                                                                            \
  if (R > r) {                                                                                               \
    epi16(c##r##0, &w0, yrow + r);                                                                           \
    if (NB > 1) epi16(c##r##1, &w1, yrow + r);                                                               \
  }
  MK_ROWS(MW_EPI)
}

MK_INSTANCE(mkw_pair_h, AVX512, mkw, 2, 1)
MK_INSTANCE(mkw_one_h, AVX512, mkw, 1, 1)
MK_INSTANCE(mkw_pair_f, AVX512, mkw, 2, 0)
MK_INSTANCE(mkw_one_f, AVX512, mkw, 1, 0)

/* The MATMUL tile's ZMM kernel (rt_cube_gemm_x86): R <= MR_MM rows of A,
 * evenly spaced lda floats apart, x NB <= 2 n blocks: 2 * R accumulators;
 * per k step NB B loads and R broadcasts feed R * NB FMAs, so a B row
 * loaded (and converted) serves twice as many FMAs as in mkw's 6 rows. Row
 * r is read through one of four pointers three rows apart, at (r % 3) *
 * lda floats from it: lda and 2 * lda sit in index registers, so the
 * twelve rows cost four pointers. Sums, write-back and e[] as in mkw.
 * Each k step also fetches both B streams MR_PF rows ahead into L1: the
 * weights come from memory (or L3) the first time a row group reads them,
 * and the hardware's stream prefetch alone left that group waiting on them
 * (bench/matmul_task, BERT's and ViT's shapes streaming their weights:
 * 3-17% faster; 32 to 128 rows ahead measured alike but for ViT's 48-row
 * tiles, which 128 slowed). Past the panel's end it names lines the task
 * may not read: a prefetch does not fault. */
enum { MR_MM = 12, MR_PF = 64 };
#define MR_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
AVX512_INLINE void mkr(const int R, const int NB, const int BH, const float *a, size_t lda, size_t klen,
                       const void *b, size_t brow, size_t bstep, float *c, size_t cstride, int first,
                       const epi *e, size_t yrow) {
  const __m512 bias0 = _mm512_loadu_ps(e[0].bias), bias1 = NB > 1 ? _mm512_loadu_ps(e[NB - 1].bias) : bias0;
  float *c1 = c + (NB > 1 ? cstride : 0);
#define MR_DECL(r) __m512 x##r##a = bias0, x##r##b = bias1;
  MR_ROWS(MR_DECL)
#define MR_LOAD(r)                                                                                           \
  if (R > r && !first)                                                                                       \
    x##r##a = _mm512_loadu_ps(c + r * C0), x##r##b = NB > 1 ? _mm512_loadu_ps(c1 + r * C0) : x##r##b;
  MR_ROWS(MR_LOAD)
  const float *p0 = a, *p1 = a + 3 * lda, *p2 = a + 6 * lda, *p3 = a + 9 * lda;
  const uint8_t *bs = (const uint8_t *)b;
  for (size_t k = 0; k < klen; k++, bs += brow, p0++, p1++, p2++, p3++) {
    const __m512 b0 = ld16h(bs, BH, 0), b1 = NB > 1 ? ld16h(bs + bstep, BH, 0) : b0;
    __m512 av;
    _mm_prefetch((const char *)bs + MR_PF * brow, _MM_HINT_T0);
    if (NB > 1) _mm_prefetch((const char *)bs + bstep + MR_PF * brow, _MM_HINT_T0);
#define MR_A(r) ((r) < 3 ? p0 : (r) < 6 ? p1 : (r) < 9 ? p2 : p3)[((r) % 3) * lda]
#define MR_FMA(r)                                                                                            \
  if (R > r) {                                                                                               \
    av = _mm512_set1_ps(MR_A(r));                                                                            \
    x##r##a = _mm512_fmadd_ps(av, b0, x##r##a);                                                              \
    if (NB > 1) x##r##b = _mm512_fmadd_ps(av, b1, x##r##b);                                                  \
  }
    MR_ROWS(MR_FMA)
  }
  if (!e[0].y) {
#define MR_STORE(r)                                                                                          \
  if (R > r) {                                                                                               \
    _mm512_storeu_ps(c + r * C0, x##r##a);                                                                   \
    if (NB > 1) _mm512_storeu_ps(c1 + r * C0, x##r##b);                                                      \
  }
    MR_ROWS(MR_STORE)
    return;
  }
  const epi_w w0 = epi_w_of(&e[0]), w1 = NB > 1 ? epi_w_of(&e[1]) : w0;
#define MR_EPI(r)                                                                                            \
  if (R > r) {                                                                                               \
    epi16(x##r##a, &w0, yrow + r);                                                                           \
    if (NB > 1) epi16(x##r##b, &w1, yrow + r);                                                               \
  }
  MR_ROWS(MR_EPI)
}

/* The instances: R = MR_MM_MIN .. MR_MM rows (a tile's rows split evenly
 * into groups of at most MR_MM, rt_cube_gemm_x86), B in f16 (_h) or f32
 * (_f), pairs of blocks and single ones. */
enum { MR_MM_MIN = MR + 1 };
typedef void mkr_fn(const float *a, size_t lda, size_t klen, const void *b, size_t brow, size_t bstep,
                    float *c, size_t cstride, int first, const epi *e, size_t yrow);
#define MKR_INSTANCE(R, NB, BH, SUF)                                                                         \
  static AVX512 void mkr##R##SUF(const float *a, size_t lda, size_t klen, const void *b, size_t brow,        \
                                 size_t bstep, float *c, size_t cstride, int first, const epi *e,            \
                                 size_t yrow) {                                                              \
    mkr(R, NB, BH, a, lda, klen, b, brow, bstep, c, cstride, first, e, yrow);                                \
  }
#define MKR_ROWS(R)                                                                                          \
  MKR_INSTANCE(R, 2, 1, _pair_h)                                                                             \
  MKR_INSTANCE(R, 1, 1, _one_h) MKR_INSTANCE(R, 2, 0, _pair_f) MKR_INSTANCE(R, 1, 0, _one_f)
MKR_ROWS(7)
MKR_ROWS(8)
MKR_ROWS(9)
MKR_ROWS(10)
MKR_ROWS(11)
MKR_ROWS(12)
/* [R - MR_MM_MIN][pair][f16] */
#define MKR_ENTRY(R)                                                                                         \
  {                                                                                                          \
    {mkr##R##_one_f, mkr##R##_one_h}, { mkr##R##_pair_f, mkr##R##_pair_h }                                   \
  }
static mkr_fn *const mkr_fns[MR_MM - MR_MM_MIN + 1][2][2] = {MKR_ENTRY(7),  MKR_ENTRY(8),  MKR_ENTRY(9),
                                                             MKR_ENTRY(10), MKR_ENTRY(11), MKR_ENTRY(12)};

/* Fetches into L1 the B lines n block nb of the walk kw reads (B base b):
 * each segment's rows. */
static AVX2 void fetch_block(const kwalk *kw, const void *b, int64_t nb) {
  const char *base = (const char *)b + (size_t)nb * kw->nbstride;
  for (size_t sg = 0; sg < kw->n; sg++) {
    const size_t bytes = (size_t)kw->len[sg] * kw->brow;
    for (size_t o = 0; o < bytes; o += 64)
      _mm_prefetch(base + kw->boff[sg] + o, _MM_HINT_T0);
  }
}

/* One group of rows <= MR pixels (A base a) against nbn n blocks whose B
 * bases are b + nb * kw->nbstride bytes: pairs of blocks through the ZMM
 * kernel on AVX-512 hosts, else one block at a time through the YMM one.
 * pf (or NULL): the walk whose B lines to fetch one call ahead (fetch_ahead). */
static AVX2 void mk_group(int rows, const kwalk *kw, const float *a, const void *b, const size_t *roff,
                          int64_t nbn, float *c, size_t cstride, int first, const epi *e, size_t yrow,
                          const kwalk *pf) {
  if (rt_cpu()->avx512) {
    for (int64_t nb = 0; nb < nbn; nb += 2) {
      for (int64_t j = nb ? nb + 2 : 0; pf && j < nb + 4 && j < nbn;
           j++) /* this pair (the first), the next */
        fetch_block(pf, b, j);
      const void *bn = (const uint8_t *)b + (size_t)nb * kw->nbstride;
      mk_fn *f = nbn - nb > 1 ? (kw->bh ? mkw_pair_h : mkw_pair_f) : (kw->bh ? mkw_one_h : mkw_one_f);
      f(rows, kw, a, bn, roff, c + (size_t)nb * cstride, cstride, first, &e[nb], yrow);
    }
    return;
  }
  for (int64_t nb = 0; nb < nbn; nb++) {
    for (int64_t j = nb ? nb + 1 : 0; pf && j < nb + 2 && j < nbn; j++) /* this block (the first), the next */
      fetch_block(pf, b, j);
    const void *bn = (const uint8_t *)b + (size_t)nb * kw->nbstride;
    static mk_fn *const fns[2][2][2] = {{{mk_full_f, mk_full_h}, {mk_half_f, mk_half_h}},
                                        {{mk_full_f_d, mk_full_h_d}, {mk_half_f_d, mk_half_h_d}}};
    mk_fn *f = fns[kw->diag != 0][e[nb].half != 0][kw->bh != 0];
    f(rows, kw, a, bn, roff, c + (size_t)nb * cstride, cstride, first, &e[nb], yrow);
  }
}

/* The Winograd and MATMUL tiles' GEMMs (wino_x86.inc,
 * kernels_matmul_x86.c): for the nb < nblocks (<= 2) n blocks,
 * c[nb*cstride + m*16 ..+16] (+)= a[m][0..klen) x b[nb*bstride + k*ldb
 * ..+16], MR rows at a time through the same micro-kernel (both blocks in
 * one pass on AVX-512 hosts), from zero when first, stored to c (a zero
 * bias, no write-back). Strides in floats. */
AVX2 void rt_gemm16_acc_x86(const float *a, size_t lda, int64_t mrows, size_t klen, const float *b,
                            size_t ldb, int nblocks, size_t bstride, float *c, size_t cstride, int first) {
  static const epi e[2]; /* zero bias, no write-back */
  kwalk kw;
  kw.n = 1, kw.bh = 0, kw.diag = 0, kw.brow = ldb * sizeof(float), kw.nbstride = bstride * sizeof(float),
  kw.aoff[0] = 0, kw.boff[0] = 0, kw.len[0] = (int)klen;
  const size_t roff[MR] = {0, lda, 2 * lda, 3 * lda, 4 * lda, 5 * lda};
  for (int64_t m = 0, rows; m < mrows; m += rows) {
    rows = mk_group_rows(mrows - m);
    mk_group(rows, &kw, a + (size_t)m * lda, b, roff, nblocks, c + m * C0, cstride, first, e, 0, NULL);
  }
}

/* Lines [lo, hi) of the runs pf names (each run's lines in order, then the
 * next run's), fetched into the cache. */
static AVX2 void prefetch_lines(const rt_mk_pf *pf, size_t lo, size_t hi) {
  const size_t per = (pf->bytes + 63) / 64; /* lines a run */
  if (lo >= hi) return;
  const char *run = (const char *)pf->b + (lo / per) * pf->nbstride;
  for (size_t i = lo, line = lo % per; i < hi; i++) {
    _mm_prefetch(run + line * 64, _MM_HINT_T1);
    if (++line == per) line = 0, run += pf->nbstride;
  }
}

/* The MATMUL tile's GEMM (kernels_matmul_x86.c, kernels.h): row groups
 * of A against n blocks of B read in place, with the write-back of out[].
 * Before each row group, its share of pf's lines (a B panel read from
 * memory would otherwise stall the first row group that touches it). */
AVX2 void rt_cube_gemm_x86(const float *a, size_t lda, int64_t mrows, size_t klen, const void *b, int bh,
                           size_t brow, size_t nbstride, int64_t nblocks, float *c, size_t cstride, int first,
                           const rt_mk_out *out, const rt_mk_pf *pf) {
  const int wide = rt_cpu()->avx512;
  const size_t groups = (size_t)(rt_ceil_div(mrows, wide ? MR_MM : MR) * rt_ceil_div(nblocks, MAX_NB));
  const size_t lines = pf ? (size_t)pf->nblocks * ((pf->bytes + 63) / 64) : 0;
  size_t group = 0;
  kwalk kw;
  kw.n = 1, kw.bh = bh, kw.diag = 0, kw.brow = brow, kw.nbstride = nbstride, kw.aoff[0] = 0, kw.boff[0] = 0,
  kw.len[0] = (int)klen;
  const size_t roff[MR] = {0, lda, 2 * lda, 3 * lda, 4 * lda, 5 * lda};
  epi e[MAX_NB];
  for (int64_t nbc = 0; nbc < nblocks; nbc += MAX_NB) {
    const int64_t nbn = nblocks - nbc < MAX_NB ? nblocks - nbc : MAX_NB;
    for (int64_t nb = 0; nb < nbn; nb++) {
      const rt_mk_out *o = &out[nbc + nb];
      epi *x = &e[nb];
      for (int j = 0; j < C0; j++)
        x->bias[j] = o->bias ? o->bias[j] : 0.0f, x->keep[j] = 0xffffffffu;
      x->lo = o->lo, x->hi = o->hi, x->act = o->act;
      x->yf16 = (uint8_t)o->yf16, x->rf16 = (uint8_t)o->rf16, x->partial = 0, x->half = 0;
      x->y = o->y, x->res = o->res, x->ystride = o->ystride, x->rstride = o->rstride;
    }
    const void *bc = (const uint8_t *)b + (size_t)nbc * nbstride;
    for (int64_t m = 0, rows; m < mrows; m += rows, group++) {
      /* this row group's share of pf's lines, in slices between its calls */
      const size_t lo = group < groups ? lines * group / groups : 0;
      const size_t span = group < groups ? lines * (group + 1) / groups - lo : 0;
      float *cm = c + nbc * (int64_t)cstride + m * C0;
      if (wide && mrows - m >= MR_MM_MIN) { /* an even share of the rows left, against pairs of blocks */
        const int64_t left = mrows - m, share = rt_ceil_div(left, MR_MM);
        const size_t pairs = (size_t)(nbn + 1) / 2;
        rows = rt_ceil_div(left, share);
        for (int64_t nb = 0; nb < nbn; nb += 2) {
          const size_t p = (size_t)nb / 2;
          if (span) prefetch_lines(pf, lo + span * p / pairs, lo + span * (p + 1) / pairs);
          mkr_fn *f = mkr_fns[rows - MR_MM_MIN][nbn - nb > 1][bh != 0];
          f(a + (size_t)m * lda, lda, klen, (const uint8_t *)bc + (size_t)nb * nbstride, brow, nbstride,
            cm + nb * (int64_t)cstride, cstride, first, &e[nb], (size_t)m);
        }
        continue;
      }
      rows = mk_group_rows(mrows - m);
      if (span) prefetch_lines(pf, lo, lo + span);
      mk_group((int)rows, &kw, a + (size_t)m * lda, bc, roff, nbn, cm, cstride, first, e, (size_t)m, NULL);
    }
  }
}

/* --- the tile */

/* The bias of n block cb and, for the last chunk (last), the write-back. */
static AVX2 void epi_init(const rt_conv_geom *g, int64_t img, int64_t m0, int64_t cb, int last, epi *e) {
  for (int j = 0; j < C0; j++) {
    int64_t co = cb * C0 + j;
    e->keep[j] = co < g->cout ? 0xffffffffu : 0u;
    e->bias[j] = g->bd && co < g->cout ? g->bd[co] : 0.0f;
  }
  e->lo = g->p.clip_min, e->hi = g->p.clip_max;
  e->act = g->p.act;
  e->yf16 = g->y->dtype == DT_FLOAT16;
  e->rf16 = g->res && g->res->dtype == DT_FLOAT16;
  size_t at = (size_t)(((img * g->c1out + cb) * g->ho * g->wo + m0) * C0);
  e->partial = (cb + 1) * C0 > g->cout;
  e->half = cb * C0 + 8 >= g->cout;
  e->y = last ? (uint8_t *)g->yd + at * (e->yf16 ? 2 : 4) : NULL;
  e->res = g->rd ? (const uint8_t *)g->rd + at * (e->rf16 ? 2 : 4) : NULL;
  e->ystride = e->rstride = C0;
}

enum { GEMV_PREFETCH = 24576 }; /* bytes ahead: the weights stream from memory once per run */

/* acc[f][0..16) += sum_ci a[ci] * fractal f's row ci, for the nf <= 4
 * consecutive fractals at w (f16 when BH): 2 * nf independent FMA chains.
 * A group of four also fetches the lines GEMV_PREFETCH bytes ahead, as many
 * as it reads. */
AVX2_INLINE void gemv_fractals(const int BH, const int nf, const float *a, const void *w, float *acc) {
  const int lines = BH ? 2 : 4; /* per ci: 4 fractals' rows of 16 lanes */
#define GV_DECL(f)                                                                                           \
  __m256 s##f = nf > f ? _mm256_loadu_ps(acc + f * C0) : _mm256_setzero_ps(),                                \
         t##f = nf > f ? _mm256_loadu_ps(acc + f * C0 + 8) : _mm256_setzero_ps();
  GV_DECL(0) GV_DECL(1) GV_DECL(2) GV_DECL(3) for (int ci = 0; ci < C0; ci++) {
    const __m256 av = _mm256_broadcast_ss(a + ci);
    for (int l = 0; nf == 4 && l < lines; l++)
      _mm_prefetch((const char *)w + GEMV_PREFETCH + (ci * lines + l) * 64, _MM_HINT_T0);
#define GV_FMA(f)                                                                                            \
  if (nf > f) {                                                                                              \
    s##f = _mm256_fmadd_ps(av, ld8h(w, BH, (size_t)(f * C0 + ci) * C0), s##f);                               \
    t##f = _mm256_fmadd_ps(av, ld8h(w, BH, (size_t)(f * C0 + ci) * C0 + 8), t##f);                           \
  }
    GV_FMA(0) GV_FMA(1) GV_FMA(2) GV_FMA(3)
  }
#define GV_STORE(f)                                                                                          \
  if (nf > f) _mm256_storeu_ps(acc + f * C0, s##f), _mm256_storeu_ps(acc + f * C0 + 8, t##f);
  GV_STORE(0) GV_STORE(1) GV_STORE(2) GV_STORE(3)
#undef GV_DECL
#undef GV_FMA
#undef GV_STORE
}

/* One row of fractals: the tile's nblocks n blocks at w (f16 when wf16). */
static AVX2 void gemv_row(const float *a, const uint8_t *w, int wf16, int64_t nblocks, float *acc) {
  const size_t fb = C0 * C0 * (wf16 ? 2 : 4);
  int64_t nb = 0;
  for (; nb + 4 <= nblocks; nb += 4) {
    if (wf16)
      gemv_fractals(1, 4, a, w + nb * fb, acc + nb * C0);
    else
      gemv_fractals(0, 4, a, w + nb * fb, acc + nb * C0);
  }
  for (; nb < nblocks; nb++) {
    if (wf16)
      gemv_fractals(1, 1, a, w + nb * fb, acc + nb * C0);
    else
      gemv_fractals(0, 1, a, w + nb * fb, acc + nb * C0);
  }
}

/* An image of one output pixel (a fully connected layer is a 1x1 conv on a
 * 1x1 image): a matrix-vector product, bound by reading the weights. The
 * pixel's taps are staged in L0A as 16 f32 lanes per fractal (padding lanes
 * are zero in NC1HWC0, as are FRACTAL_Z's padding rows); then, fractal row
 * kf by fractal row, the tile's n blocks (contiguous in FRACTAL_Z) are read
 * once, in memory order (prefetched GEMV_PREFETCH bytes ahead), four
 * fractals at a time into sums kept in L0C ([n block][16] f32). */
static AVX2 void conv_tile_gemv(const rt_conv_geom *g, int64_t img, int64_t m0, int64_t nb0, int64_t nblocks,
                                rt_core *core) {
  const int xf16 = g->x->dtype == DT_FLOAT16, wf16 = g->w->dtype == DT_FLOAT16;
  const int64_t taps = (int64_t)g->p.kh * g->p.kw;
  const int64_t oh = m0 / g->wo, ow = m0 % g->wo;
  float *a = (float *)core->l0a, *acc = (float *)core->l0c;
  memset(acc, 0, (size_t)nblocks * C0 * sizeof(float));
  for (int64_t kc = 0; kc < g->k; kc += g->tk) { /* a chunk's 16 lanes a fractal: 1 of L0A's 16 rows */
    const int64_t kn = g->k - kc < g->tk ? g->k - kc : g->tk;
    for (int64_t kk = 0; kk < kn; kk++) { /* the pixel's taps */
      int64_t kf = kc + kk, vb = kf / taps, tap = kf % taps, pl = rt_conv_plane(g, img, vb);
      int64_t ih = oh * g->p.sh + (tap / g->p.kw) * g->p.dh - g->p.pt;
      int64_t iw = ow * g->p.sw + (tap % g->p.kw) * g->p.dw - g->p.pl;
      __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
      if (pl >= 0 && (uint64_t)ih < (uint64_t)g->h && (uint64_t)iw < (uint64_t)g->w_) {
        size_t at = ((size_t)pl + (size_t)(ih * g->w_ + iw)) * C0;
        lo = ld8h(g->xd, xf16, at), hi = ld8h(g->xd, xf16, at + 8);
      }
      if (g->xsd) { /* x_scale (1x1 2-D convolutions only) */
        const size_t sat = (size_t)(img * g->c1 + vb) * C0;
        lo = _mm256_mul_ps(lo, ld8h(g->xsd, xf16, sat)), hi = _mm256_mul_ps(hi, ld8h(g->xsd, xf16, sat + 8));
      }
      _mm256_storeu_ps(a + kk * C0, lo);
      _mm256_storeu_ps(a + kk * C0 + 8, hi);
    }
    const size_t fb = C0 * C0 * dtype_size((int)g->w->dtype);
    for (int64_t kk = 0; kk < kn; kk++)
      gemv_row(a + kk * C0, (const uint8_t *)g->wd + (size_t)((kc + kk) * g->c1out + nb0) * fb, wf16, nblocks,
               acc);
  }
  for (int64_t nb = 0; nb < nblocks; nb++) {
    epi e;
    epi_init(g, img, m0, nb0 + nb, 1, &e);
    __m256 v0 = _mm256_add_ps(_mm256_loadu_ps(acc + nb * C0), _mm256_loadu_ps(e.bias));
    __m256 v1 = _mm256_add_ps(_mm256_loadu_ps(acc + nb * C0 + 8), _mm256_loadu_ps(e.bias + 8));
    if (e.res) v0 = _mm256_add_ps(v0, ld8h(e.res, e.rf16, 0)), v1 = _mm256_add_ps(v1, ld8h(e.res, e.rf16, 8));
    st8h(e.y, e.yf16, 0, _mm256_and_ps(act8(v0, &e), keep8(&e, 0)));
    st8h(e.y, e.yf16, 8, _mm256_and_ps(act8(v1, &e), keep8(&e, 1)));
  }
}

/* Weights read from memory. A pass's first pixel group is the first to read
 * each of its n blocks' weights, which a model's run takes from memory (or
 * L3) once: FRACTAL_Z keeps a block's fractals c1out * 512 bytes apart, a
 * run of 8 lines each, which the hardware's stream prefetch does not see
 * coming, so the group waits on them fractal by fractal. On a tile of at
 * most FETCH_ROWS pixels (the 7x7 and 8x8 maps of the last stages, or a
 * piece of a larger one) there are few groups to share that wait: there
 * the first group fetches the lines of the next block (pair) while it
 * multiplies the current one (mk_group's pf). bench/conv_task, weights
 * from memory (COPIES 30-200), fetching on and off alternating run by run
 * in one process: RegNetX-400MF's 7x7 400 -> 400 1x1 conv 6-10% less time
 * (fastest, 10th percentile and median), ResNet-50's 7x7 512 -> 2048 and
 * 2048 -> 512 5-7%, the 7x7 grouped 3x3 (group width 16) 2-5%; tiles of
 * 208 pixels (14x14 maps) gained 0-3% from memory and lost about 1% with
 * the weights in cache, so they do not fetch. */
enum { FETCH_ROWS = 16 * MR };
static int fetch_ahead(int64_t mrows) { return mrows <= FETCH_ROWS; }

/* Pixel groups of the tile's rows m0 .. m0+mrows-1 against nblocks n blocks
 * (B base b) over the K walk kw; row m's A starts at a + m * lda. Pixel
 * groups outer, n blocks inner: a group's A stays in L1 while the chunk's B
 * streams past. With skip, each group multiplies only the segments that
 * touch the image for its pixels (kwalk_group), and a group with none in a
 * middle chunk is left as it is. With fetch, the first group fetches each
 * pass's weights a block ahead (fetch_ahead). */
static AVX2 void conv_groups(const rt_conv_geom *g, int64_t img, int64_t m0, int64_t mrows, int64_t nb0,
                             int64_t nblocks, const kwalk *kw, const float *a, size_t lda, const void *b,
                             int first, int last, int skip, int fetch, float *l0c) {
  epi e[MAX_NB];
  kwalk sub;
  const size_t roff[MR] = {0, lda, 2 * lda, 3 * lda, 4 * lda, 5 * lda};
  const int in_rows = skip && group_in_rows(g);
  for (int64_t nbc = 0; nbc < nblocks; nbc += MAX_NB) {
    const int64_t nbn = nblocks - nbc < MAX_NB ? nblocks - nbc : MAX_NB;
    for (int64_t nb = 0; nb < nbn; nb++)
      epi_init(g, img, m0, nb0 + nbc + nb, last, &e[nb]);
    const void *bc = (const uint8_t *)b + (size_t)nbc * kw->nbstride;
    for (int64_t m = 0, rows; m < mrows; m += rows) {
      rows = group_rows(g, in_rows, m0 + m, mrows - m);
      if (skip && !kwalk_group(g, kw, m0 + m, rows, &sub) && !first && !last) continue;
      mk_group(rows, skip ? &sub : kw, a + (size_t)m * lda, bc, roff, nbn, l0c + nbc * g->tm * C0 + m * C0,
               (size_t)(g->tm * C0), first, e, (size_t)m, fetch && m == 0 ? kw : NULL);
    }
  }
}

/* rt_conv_load_b with F16C: the fractals kc .. kc+kn-1 of n blocks nb0 ..
 * as f32 in l0b, each fractal's k_lanes rows of 16 after the previous one's
 * (a stem's 3 of 16), block after block. The conversion is exact, so the
 * staged values equal the portable loader's. */
static AVX2 void load_b_f16c(const rt_conv_geom *g, int64_t nb0, int64_t nblocks, int64_t kc, int64_t kn,
                             float *l0b) {
  if (g->w->dtype != DT_FLOAT16) {
    int64_t klen = 0;
    for (int64_t kk = 0; kk < kn; kk++)
      klen += rt_conv_k_lanes(g, kc + kk);
    rt_conv_load_b(g, nb0, nblocks, kc, kn, klen, l0b);
    return;
  }
  const uint16_t *w = (const uint16_t *)g->wd;
  float *dst = l0b;
  for (int64_t nb = 0; nb < nblocks; nb++)
    for (int64_t kk = 0; kk < kn; kk++) {
      const uint16_t *src = w + (size_t)((kc + kk) * g->c1out + nb0 + nb) * C0 * C0;
      for (int r = rt_conv_k_lanes(g, kc + kk); r > 0; r--, src += C0, dst += C0) {
        _mm256_storeu_ps(dst, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)src)));
        _mm256_storeu_ps(dst + 8, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + 8))));
      }
    }
}

/* The tile's pixels against the n blocks over kernel rows r0 .. r0+nr-1,
 * A read straight from the packed rows (rt_stage_pack_rows): a pixel's K is kh runs
 * of kw * cin floats, one per kernel row, so the K walk has one segment per
 * kernel row and each pixel of a group its own offset (a group may
 * continue on the next output row); B, those kernel rows' fractals, is
 * staged in L0B (rt_conv_load_b: 3 of 16 lanes a fractal). The first rows
 * start the sums, the last ones finish them (the epilogue); between, the
 * partial sums stay in L0C. No img2col copy. */
static AVX2 void conv_packed(const rt_conv_geom *g, const packed *pk, int64_t img, int64_t m0, int64_t mrows,
                             int64_t nb0, int64_t nblocks, int64_t r0, int64_t nr, const float *l0b,
                             float *l0c) {
  const int64_t cin = g->cin, sh = g->p.sh, sw = g->p.sw, dh = g->p.dh, wo = g->wo;
  const int first = r0 == 0, last = r0 + nr >= g->p.kh;
  const size_t run = (size_t)(g->p.kw * cin), klen = (size_t)nr * run;
  kwalk kw;
  kw.n = (size_t)nr, kw.bh = 0, kw.diag = 0, kw.brow = C0 * sizeof(float),
  kw.nbstride = klen * C0 * sizeof(float);
  for (int64_t i = 0; i < nr; i++)
    kw.aoff[i] = (size_t)((r0 + i) * dh * pk->rowf), kw.boff[i] = (size_t)i * run * C0 * sizeof(float),
    kw.len[i] = (int)run;
  epi e[MAX_NB];
  for (int64_t nbc = 0; nbc < nblocks; nbc += MAX_NB) {
    const int64_t nbn = nblocks - nbc < MAX_NB ? nblocks - nbc : MAX_NB;
    for (int64_t nb = 0; nb < nbn; nb++)
      epi_init(g, img, m0, nb0 + nbc + nb, last, &e[nb]);
    int64_t oh = m0 / wo, ow = m0 % wo; /* of pixel m */
    for (int64_t m = 0, rows; m < mrows; m += rows) {
      rows = mk_group_rows(mrows - m);
      const float *p0 = pk->rows + ((oh - pk->oh0) * sh) * pk->rowf + ow * sw * cin;
      size_t roff[MR] = {0};
      for (int r = 0; r < rows; r++) {
        roff[r] = (size_t)(pk->rows + ((oh - pk->oh0) * sh) * pk->rowf + ow * sw * cin - p0);
        if (++ow == wo) ow = 0, oh++;
      }
      mk_group(rows, &kw, p0, l0b + (size_t)nbc * klen * C0, roff, nbn, l0c + nbc * g->tm * C0 + m * C0,
               (size_t)(g->tm * C0), first, e, (size_t)m, NULL);
    }
  }
}

/* The direct path, for inputs whose channels fill their blocks (Cin % 16
 * == 0) and kernels wider than 1x1: no img2col. The tile's input
 * rows are converted once into L1 as f32 [c1][row][column][16], padding
 * rows and columns zeroed; then every fractal of a pixel's K is 16
 * consecutive floats there, and the micro-kernel reads its rows straight
 * from it (one segment per fractal, each pixel at its own offset), MR
 * pixels at a time. Returns 0 (nothing done) when the
 * tile's rows do not fit L1. */
static AVX2 int conv_tile_direct(const rt_conv_geom *g, int64_t img, int64_t m0, int64_t mrows, int64_t nb0,
                                 int64_t nblocks, rt_core *core) {
  const int64_t wo = g->wo, sh = g->p.sh, sw = g->p.sw, kw_ = g->p.kw, taps = (int64_t)g->p.kh * kw_;
  const int64_t oh0 = m0 / wo, oh1 = (m0 + mrows - 1) / wo, ih0 = oh0 * sh - g->p.pt;
  const int64_t nrows = (oh1 - oh0) * sh + (int64_t)(g->p.kh - 1) * g->p.dh + 1;
  const int64_t pw = (wo - 1) * sw + (kw_ - 1) * g->p.dw + 1;
  if ((uint64_t)(g->c1v * nrows * pw) * C0 * sizeof(float) > core->l1_bytes) return 0;
  float *xs = (float *)core->l1, *l0c = (float *)core->l0c;
  const int f16 = g->x->dtype == DT_FLOAT16;
  for (int64_t c1 = 0; c1 < g->c1v; c1++) { /* virtual blocks: (depth tap, channel block) in 3-D */
    const int64_t pl = rt_conv_plane(g, img, c1);
    const size_t plane = (size_t)(pl < 0 ? 0 : pl);
    for (int64_t r = 0; r < nrows; r++) {
      float *dst = xs + ((c1 * nrows + r) * pw) * C0;
      const int64_t ih = ih0 + r;
      for (int64_t col = 0; col < pw; col++, dst += C0) {
        const int64_t iw = col - g->p.pl;
        __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
        if (pl >= 0 && ih >= 0 && ih < g->h && iw >= 0 && iw < g->w_) {
          size_t at = (plane + (size_t)(ih * g->w_ + iw)) * C0;
          lo = ld8h(g->xd, f16, at), hi = ld8h(g->xd, f16, at + 8);
        }
        _mm256_storeu_ps(dst, lo);
        _mm256_storeu_ps(dst + 8, hi);
      }
    }
  }
  kwalk kw;
  int64_t kf[MAX_CHUNK];
  const int skip = group_skip(g), in_rows = skip && group_in_rows(g);
  for (int64_t kc = 0, kn; kc < g->k; kc += kn) {
    kn = g->k - kc < g->tk ? g->k - kc : g->tk;
    const int first = kc == 0, last = kc + kn >= g->k;
    const int64_t live = live_fractals(g, m0, mrows, kc, kn, kf);
    if (!live && !first && !last) continue;
    const void *b = kwalk_weights(g, kf, live, nb0, &kw);
    for (int64_t kk = 0; kk < live; kk++) {
      int64_t c1 = kf[kk] / taps, tap = kf[kk] % taps;
      kw.aoff[kk] = (size_t)(((c1 * nrows + (tap / kw_) * g->p.dh) * pw + (tap % kw_) * g->p.dw) * C0);
    }
    epi e[MAX_NB];
    kwalk sub;
    for (int64_t nbc = 0; nbc < nblocks; nbc += MAX_NB) {
      const int64_t nbn = nblocks - nbc < MAX_NB ? nblocks - nbc : MAX_NB;
      for (int64_t nb = 0; nb < nbn; nb++)
        epi_init(g, img, m0, nb0 + nbc + nb, last, &e[nb]);
      const void *bc = (const uint8_t *)b + (size_t)nbc * kw.nbstride;
      int64_t oh = oh0, ow = m0 % wo; /* of pixel m */
      for (int64_t m = 0, rows; m < mrows; m += rows) {
        rows = group_rows(g, in_rows, m0 + m, mrows - m);
        size_t roff[MR] = {0};
        const size_t at0 = (size_t)(((oh - oh0) * sh * pw + ow * sw) * C0);
        for (int r = 0; r < rows; r++) { /* a group may continue on the next output row */
          roff[r] = (size_t)(((oh - oh0) * sh * pw + ow * sw) * C0) - at0;
          if (++ow == wo) ow = 0, oh++;
        }
        if (skip && !kwalk_group(g, &kw, m0 + m, rows, &sub) && !first && !last) continue;
        mk_group(rows, skip ? &sub : &kw, xs + at0, bc, roff, nbn, l0c + nbc * g->tm * C0 + m * C0,
                 (size_t)(g->tm * C0), first, e, (size_t)m, fetch_ahead(mrows) && m == 0 ? &kw : NULL);
      }
    }
  }
  return 1;
}

AVX2 void rt_conv_tile_x86(const rt_conv_geom *g, int64_t img, int64_t mt, int64_t nt, rt_core *core) {
  float *l0a = (float *)core->l0a, *l0b = (float *)core->l0b, *l0c = (float *)core->l0c;
  int64_t m0 = mt * g->tm, mrows = g->ho * g->wo - m0;
  if (mrows > g->tm) mrows = g->tm;
  int64_t nb0 = nt * g->tn, nblocks = g->c1out - nb0;
  if (nblocks > g->tn) nblocks = g->tn;
  /* Only a one-pixel image: a one-pixel tile cut from a larger image (the
   * last of a tiling, or a piece) takes the general path, whose sums are in
   * the same order as its neighbours', so the result does not depend on how
   * the image was cut (tile_m, the team's pieces). */
  if (g->ho * g->wo == 1 && !g->xnd) {
    conv_tile_gemv(g, img, m0, nb0, nblocks, core);
    return;
  }
  /* 1x1 kernels stage no more than their pixels in L0A: only wider ones go direct. */
  if (g->cin % C0 == 0 && g->p.kh * g->p.kw > 1 && conv_tile_direct(g, img, m0, mrows, nb0, nblocks, core))
    return;
  const int64_t l0a_floats = (int64_t)(core->l0a_bytes / sizeof(float));
  /* Stems (<= 4 input channels): A read from packed input rows (which
   * apply no x_scale: rt_stage_a does), B staged in L0B as f32, a group of n
   * blocks at a time, or when one block's weights do not fit (a ViT-B/32
   * patch embedding's 32x32x3 kernel is 192 KiB of them) in even chunks of
   * kernel rows, the partial sums kept in L0C. */
  packed pk;
  const int64_t kh = g->p.kh, row_floats = g->p.kw * g->cin * C0, /* one kernel row of one block */
      rows_fit = (int64_t)(core->l0b_bytes / sizeof(float)) / row_floats;
  if (!g->xsd && kh <= 64 && rows_fit >= 1 && rt_stage_pack_rows(g, img, m0, mrows, core, &pk)) {
    /* chunks of kernel rows small enough for two blocks at a time (the
     * micro-kernel's pair), when the whole kernel does not fit */
    const int64_t per = rows_fit >= kh ? kh
                        : rows_fit > 1 ? rows_fit / 2
                                       : 1,
                  chunks = (kh + per - 1) / per, kr = (kh + chunks - 1) / chunks, fit = rows_fit / kr;
    for (int64_t j = 0, n; j < nblocks; j += n) {
      n = nblocks - j < fit ? nblocks - j : fit;
      for (int64_t r0 = 0, nr; r0 < kh; r0 += nr) {
        nr = kh - r0 < kr ? kh - r0 : kr;
        load_b_f16c(g, nb0 + j, n, r0 * g->p.kw, nr * g->p.kw, l0b);
        conv_packed(g, &pk, img, m0, mrows, nb0 + j, n, r0, nr, l0b, l0c + j * g->tm * C0);
      }
    }
    return;
  }
  if (g->xnd) { /* an ND stem the packed rows do not take (dilated, or too wide for L1) */
    rt_conv_tile_portable(g, img, mt, nt, core);
    return;
  }
  /* img2col: K in the task's chunks, B read in place, each chunk's rows
   * staged in L0A in groups of pixels that fit (SLACK floats spare; 16 rows
   * of a chunk always fit, om_format.h). When the whole K is one chunk, the
   * groups are finished in registers (no partial sums in L0C), at most
   * 16 * MR pixels each so that A's group stays in L2 with room to spare;
   * otherwise a group is as many of the tile's pixels as fit, and its
   * partial sums go to its rows of L0C. */
  kwalk kw;
  int64_t kf[MAX_CHUNK];
  const int skip = group_skip(g);
  for (int64_t kc = 0, kn; kc < g->k; kc += kn) {
    kn = g->k - kc < g->tk ? g->k - kc : g->tk;
    const int first = kc == 0, last = kc + kn >= g->k;
    const int64_t live = live_fractals(g, m0, mrows, kc, kn, kf); /* the taps that touch the image */
    if (!live && !first && !last) continue;
    int64_t klen = 0;
    for (int64_t kk = 0; kk < live; kk++)
      klen += rt_conv_k_lanes(g, kf[kk]);
    int64_t mstep = klen ? (l0a_floats - SLACK) / klen : mrows; /* no live tap: A is not read */
    if (mstep < mrows) mstep = mstep / MR * MR;
    if (first && last && mstep > 16 * MR) mstep = 16 * MR;
    const void *b = kwalk_weights(g, kf, live, nb0, &kw);
    for (int64_t ms = 0; ms < mrows; ms += mstep) {
      const int64_t rows = mrows - ms < mstep ? mrows - ms : mstep;
      rt_stage_a(g, img, m0 + ms, rows, kf, live, klen, l0a);
      conv_groups(g, img, m0 + ms, rows, nb0, nblocks, &kw, l0a, (size_t)klen, b, first, last, skip,
                  fetch_ahead(mrows) && ms == 0, l0c + ms * C0);
    }
  }
}

#endif
