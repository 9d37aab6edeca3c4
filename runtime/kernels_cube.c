/* kernels_cube.c - CONV2D on the simulated cube unit.
 *
 * A faithful walk of the chip's dataflow (om_format.h, CONV2D): the output of
 * one image is M = Ho*Wo pixels x Cout channels; a tile is tile_m pixels x
 * tile_n channel blocks of 16. For each tile and each chunk of tile_k
 * reduction fractals (the K axis runs over (c1in, kh, kw) in FRACTAL_Z order):
 *   load3d  img2col of the input patch into L0A: one row of 16*kn values per
 *           pixel, taps outside the image zero (an ND stem input, Cin <= 4,
 *           read from its NCHW planes, rounded to fp16 under fp16 weights),
 *           for a group of the tile's pixels at a time (all when they fit);
 *   loadB   the weight fractals into L0B, a pass of n blocks at a time (all
 *           when they fit);
 *   mmad    C[16x16] += A[16x16] * B[16x16] into the f32 accumulators in L0C.
 * A fractal whose kernel tap reads only padding for all the tile's pixels
 * (rt_conv_tap_dead) is skipped: its products are zeros.
 * After the K loop the vector unit runs the epilogue (+ bias, + residual, act,
 * padding channels forced to 0, cast) and writes the valid pixels of y.
 *
 * Staging is f32 (om_format.h, OM_L0_STAGING: exec.c allocates L0A and L0B
 * for it). L0A is [pixel][k] (one row of the chunk's k values per
 * pixel); L0B holds the weight fractals as FRACTAL_Z stores them, k-major:
 * [n block][k][16 co], so the innermost loop of the mmad runs over the 16 output lanes of C0 in
 * 4-lane vectors; L0C is [n block][tile_m][16]. The k axis of a chunk keeps
 * only the real input channels of each fractal (k_lanes): the padding lanes
 * are zero in both operands, so skipping them sums the same products.
 *
 * This is the portable path. On x86-64 hosts with AVX2, FMA and F16C,
 * rt_cpu() (cpu.c) selects kernels_cube_x86.c's tile instead: the same
 * tiles and per-core buffers, a register-blocked FMA micro-kernel, img2col
 * skipped where the input can be read in place (staged once in L1), and the
 * epilogue fused into the last K chunk's write-back.
 * Tasks of algorithm OM_CONV_WINO_F43_FZ run kernels_wino.c's tile.
 */
#include "runtime/epilogue.h"
#include "runtime/kernels.h"

typedef rt_conv_geom conv_geom;

static void conv_geom_init(const om_task *task, const rt_args *a, conv_geom *g) {
  const om_tensor *x = a->desc[OM_CONV_T_X], *w = a->desc[OM_CONV_T_W], *y = a->desc[OM_CONV_T_Y];
  const int c3 = task->kind == OM_TASK_CONV3D, o = c3; /* CONV3D: H, W at dims[3], dims[4] */
  const int32_t *q = task->params;
  const int wino = !c3 && q[OM_CONV_P_ALGORITHM] == OM_CONV_WINO_F43_FZ;
  *g = (conv_geom){.x = x,
                   .w = w,
                   .bias = a->desc[OM_CONV_T_BIAS],
                   .res = a->desc[OM_CONV_T_RESIDUAL],
                   .y = y,
                   .xd = a->data[OM_CONV_T_X],
                   .wd = a->data[OM_CONV_T_W],
                   .bd = a->data[OM_CONV_T_BIAS],
                   .rd = a->data[OM_CONV_T_RESIDUAL],
                   .yd = a->data[OM_CONV_T_Y],
                   .n = x->dims[0] * (c3 ? y->dims[2] : 1),
                   .cin = x->dims[1],
                   .c1 = rt_ceil_div(x->dims[1], C0),
                   .h = x->dims[2 + o],
                   .w_ = x->dims[3 + o],
                   .ho = y->dims[2 + o],
                   .wo = y->dims[3 + o],
                   .cout = w->dims[0],
                   .c1out = rt_ceil_div(w->dims[0], C0),
                   .d = c3 ? x->dims[2] : 1,
                   .dout = c3 ? y->dims[2] : 1,
                   .kd = c3 ? q[OM_CONV3D_P_KD] : 1,
                   .sd = c3 ? q[OM_CONV3D_P_STRIDE_D] : 1,
                   .pf = c3 ? q[OM_CONV3D_P_PAD_FRONT] : 0,
                   .dd = c3 ? q[OM_CONV3D_P_DILATION_D] : 1,
                   .tm = q[OM_CONV_P_TILE_M],
                   .tn = q[OM_CONV_P_TILE_N],
                   .tk = q[OM_CONV_P_TILE_K],
                   .algo = c3 ? OM_CONV_DIRECT : q[OM_CONV_P_ALGORITHM],
                   .wth = wino ? wino_f43_tiles(y->dims[2], q[OM_CONV_P_DILATION_H]) : 0,
                   .wtw = wino ? wino_f43_tiles(y->dims[3], q[OM_CONV_P_DILATION_W]) : 0};
  rt_conv_params_read(task, &g->p);
  g->xsd = !c3 && q[OM_CONV_P_X_SCALE] == 1 ? a->data[OM_CONV_T_X_SCALE] : NULL;
  g->xnd = x->layout == LAYOUT_ND;
  g->xr16 = g->xnd && x->dtype == DT_FLOAT32 && w->dtype == DT_FLOAT16;
  g->c1v = g->kd * g->c1;
  g->flat = g->kd == 1 && g->sd == 1 && g->pf == 0 && g->d == g->dout;
  g->k = g->c1v * g->p.kh * g->p.kw;
  g->mtiles = rt_ceil_div(g->algo != OM_CONV_DIRECT ? g->wth * g->wtw : g->ho * g->wo, g->tm);
  g->ntiles = rt_ceil_div(g->c1out, g->tn);
}

#define k_lanes rt_conv_k_lanes

/* L0A[m][k] for pixels m0 .. m0+mrows-1 and fractals kc .. kc+kn-1, the
 * real lanes of each fractal packed one after the other (lda of them),
 * times the image's x_scale when there is one. */
static void load3d(const conv_geom *g, int64_t img, int64_t m0, int64_t mrows, int64_t kc, int64_t kn,
                   int64_t lda, float *l0a) {
  const int f16 = g->x->dtype == DT_FLOAT16;
  const int64_t taps = (int64_t)g->p.kh * g->p.kw;
  int64_t col = 0;
  for (int64_t kk = 0; kk < kn; kk++) {
    int64_t kf = kc + kk, vb = kf / taps, tap = kf % taps;
    int64_t dy = (tap / g->p.kw) * g->p.dh - g->p.pt, dx = (tap % g->p.kw) * g->p.dw - g->p.pl;
    const int lanes = k_lanes(g, kf);
    const int64_t pl = rt_conv_plane(g, img, vb); /* -1: a depth tap in the padding */
    size_t plane = (size_t)(pl < 0 ? 0 : pl);
    int64_t oh = m0 / g->wo, ow = m0 % g->wo;
    float *dst = l0a + col, scale[C0];
    if (g->xsd) rt_load_f32(scale, g->xsd, (int)g->x->dtype, (size_t)(img * g->c1 + vb) * C0, C0);
    for (int64_t m = 0; m < mrows; m++, dst += lda) {
      int64_t ih = oh * g->p.sh + dy, iw = ow * g->p.sw + dx;
      if (pl < 0 || ih < 0 || ih >= g->h || iw < 0 || iw >= g->w_) {
        memset(dst, 0, (size_t)lanes * sizeof(float));
      } else if (g->xnd) { /* NCHW: a plane per channel */
        for (int j = 0; j < lanes; j++)
          dst[j] = rt_conv_x_nd(g, img, j, ih, iw);
      } else {
        size_t at = (plane + (size_t)(ih * g->w_ + iw)) * C0;
        float v[C0];
        rt_load_f32(v, g->xd, f16 ? DT_FLOAT16 : DT_FLOAT32, at, C0); /* all 16 lanes, then the real ones */
        if (g->xsd)
          for (int j = 0; j < C0; j++)
            v[j] *= scale[j];
        memcpy(dst, v, (size_t)lanes * sizeof(float));
      }
      if (++ow == g->wo) ow = 0, oh++;
    }
    col += lanes;
  }
}

/* L0B[nb][k][co] = rows ci < k_lanes of w fractal (kf, nb0+nb), which
 * FRACTAL_Z stores k-major ([ci][co]), so k runs over the same packed lanes
 * as load3d's columns. */
void rt_conv_load_b(const conv_geom *g, int64_t nb0, int64_t nblocks, int64_t kc, int64_t kn, int64_t klen,
                    float *l0b) {
  const int wt = (int)g->w->dtype;
  for (int64_t nb = 0; nb < nblocks; nb++) {
    float *dst = l0b + nb * klen * C0;
    for (int64_t kk = 0; kk < kn; kk++) {
      const int lanes = k_lanes(g, kc + kk);
      rt_load_f32(dst, g->wd, wt, (size_t)((kc + kk) * g->c1out + nb0 + nb) * C0 * C0, (size_t)lanes * C0);
      dst += (size_t)lanes * C0;
    }
  }
}

/* The multiply-accumulate works on 4-lane GNU C vectors (SSE, NEON, or
 * scalar code where neither exists), written out so that the accumulators
 * stay in registers at any optimisation level: two pixel rows x 16 lanes
 * are 8 accumulators, which with the 4 B vectors fits 16 SIMD registers. */
typedef float f32x4 __attribute__((vector_size(16)));

static inline f32x4 ld4(const float *p) {
  f32x4 v;
  memcpy(&v, p, sizeof v);
  return v;
}

static inline void st4(float *p, f32x4 v) { memcpy(p, &v, sizeof v); }

/* c[r][0..16) += sum_k a[r*lda + k] * b[k][0..16) for rows r = 0, 1. */
void rt_mmad16_2(const float *a, int64_t lda, int64_t klen, const float *b, float *c) {
  f32x4 c0 = ld4(c), c1 = ld4(c + 4), c2 = ld4(c + 8), c3 = ld4(c + 12);
  f32x4 d0 = ld4(c + 16), d1 = ld4(c + 20), d2 = ld4(c + 24), d3 = ld4(c + 28);
  for (int64_t k = 0; k < klen; k++, b += C0) {
    f32x4 b0 = ld4(b), b1 = ld4(b + 4), b2 = ld4(b + 8), b3 = ld4(b + 12);
    float s = a[k], t = a[lda + k];
    c0 += s * b0, c1 += s * b1, c2 += s * b2, c3 += s * b3;
    d0 += t * b0, d1 += t * b1, d2 += t * b2, d3 += t * b3;
  }
  st4(c, c0), st4(c + 4, c1), st4(c + 8, c2), st4(c + 12, c3);
  st4(c + 16, d0), st4(c + 20, d1), st4(c + 24, d2), st4(c + 28, d3);
}

void rt_mmad16_1(const float *a, int64_t klen, const float *b, float *c) {
  f32x4 c0 = ld4(c), c1 = ld4(c + 4), c2 = ld4(c + 8), c3 = ld4(c + 12);
  for (int64_t k = 0; k < klen; k++, b += C0) {
    float s = a[k];
    c0 += s * ld4(b), c1 += s * ld4(b + 4), c2 += s * ld4(b + 8), c3 += s * ld4(b + 12);
  }
  st4(c, c0), st4(c + 4, c1), st4(c + 8, c2), st4(c + 12, c3);
}

/* One n block of the tile: all mrows pixel rows against klen k values. */
static void mmad(const float *a, int64_t klen, int64_t mrows, const float *b, float *c) {
  int64_t m = 0;
  for (; m + 2 <= mrows; m += 2)
    rt_mmad16_2(a + m * klen, klen, klen, b, c + m * C0);
  if (m < mrows) rt_mmad16_1(a + m * klen, klen, b, c + m * C0);
}

/* The vector-unit epilogue for one tile: y = act(L0C + bias + residual). */
static void epilogue(const conv_geom *g, int64_t img, int64_t m0, int64_t mrows, int64_t nb0, int64_t nblocks,
                     const float *l0c) {
  const int yf16 = g->y->dtype == DT_FLOAT16, act = g->p.act;
  const float lo = g->p.clip_min, hi = g->p.clip_max;
  const int64_t hw = g->ho * g->wo;
  for (int64_t nb = 0; nb < nblocks; nb++) {
    int64_t cb = nb0 + nb;
    float bias[C0], keep[C0], v[C0], r[C0];
    for (int j = 0; j < C0; j++) {
      int64_t co = cb * C0 + j;
      keep[j] = co < g->cout ? 1.0f : 0.0f;
      bias[j] = g->bd && co < g->cout ? g->bd[co] : 0.0f;
    }
    size_t at = (size_t)(((img * g->c1out + cb) * hw + m0) * C0);
    const float *acc = l0c + nb * g->tm * C0;
    for (int64_t m = 0; m < mrows; m++, acc += C0, at += C0) {
      for (int j = 0; j < C0; j++)
        v[j] = acc[j] + bias[j];
      if (g->rd) {
        rt_load_f32(r, g->rd, (int)g->res->dtype, at, C0);
        for (int j = 0; j < C0; j++)
          v[j] += r[j];
      }
      for (int j = 0; j < C0; j++)
        v[j] = keep[j] != 0.0f ? rt_act(v[j], act, lo, hi) : 0.0f;
      if (yf16) {
        uint16_t *d = (uint16_t *)g->yd + at;
        for (int j = 0; j < C0; j++)
          d[j] = rt_f2h(v[j]);
      } else {
        memcpy((float *)g->yd + at, v, sizeof v);
      }
    }
  }
}

/* L0C += the products of fractals kc .. kc+kn-1 for the tile's pixels
 * m0 .. m0+mrows-1 and n blocks nb0 .. nb0+nblocks-1: img2col into L0A a
 * group of pixels at a time, the weights into L0B a pass of n blocks at a
 * time (at least 16 pixels and 1 block: om_format.h). */
static void run_k(const conv_geom *g, int64_t img, int64_t m0, int64_t mrows, int64_t nb0, int64_t nblocks,
                  int64_t kc, int64_t kn, rt_core *core) {
  float *l0a = (float *)core->l0a, *l0b = (float *)core->l0b, *l0c = (float *)core->l0c;
  int64_t klen = 0;
  for (int64_t kk = 0; kk < kn; kk++)
    klen += k_lanes(g, kc + kk);
  const int64_t arows = (int64_t)(core->l0a_bytes / sizeof(float)) / klen;
  const int64_t bpass = (int64_t)(core->l0b_bytes / sizeof(float)) / (klen * C0);
  if (nblocks <= bpass) rt_conv_load_b(g, nb0, nblocks, kc, kn, klen, l0b);
  for (int64_t ms = 0; ms < mrows; ms += arows) {
    const int64_t rows = mrows - ms < arows ? mrows - ms : arows;
    load3d(g, img, m0 + ms, rows, kc, kn, klen, l0a);
    for (int64_t nb1 = 0; nb1 < nblocks; nb1 += bpass) {
      const int64_t nbn = nblocks - nb1 < bpass ? nblocks - nb1 : bpass;
      if (nblocks > bpass) rt_conv_load_b(g, nb0 + nb1, nbn, kc, kn, klen, l0b);
      for (int64_t nb = 0; nb < nbn; nb++)
        mmad(l0a, klen, rows, l0b + nb * klen * C0, l0c + (nb1 + nb) * g->tm * C0 + ms * C0);
    }
  }
}

void rt_conv_tile_portable(const conv_geom *g, int64_t img, int64_t mt, int64_t nt, rt_core *core) {
  int64_t m0 = mt * g->tm, mrows = g->ho * g->wo - m0;
  if (mrows > g->tm) mrows = g->tm;
  int64_t nb0 = nt * g->tn, nblocks = g->c1out - nb0;
  if (nblocks > g->tn) nblocks = g->tn;
  memset(core->l0c, 0, (size_t)(nblocks * g->tm * C0) * sizeof(float));
  /* K in the task's chunks; of each chunk, the runs of fractals whose taps
   * touch the image for these pixels (rt_conv_tap_dead: the others add only
   * zeros) */
  for (int64_t k0 = 0; k0 < g->k; k0 += g->tk) {
    const int64_t kend = g->k - k0 < g->tk ? g->k : k0 + g->tk;
    for (int64_t kc = k0, kn; kc < kend; kc += kn) {
      for (kn = 0; kc + kn < kend && !rt_conv_tap_dead(g, m0, mrows, kc + kn);)
        kn++;
      if (kn)
        run_k(g, img, m0, mrows, nb0, nblocks, kc, kn, core);
      else
        kn = 1; /* a dead fractal */
    }
  }
  epilogue(g, img, m0, mrows, nb0, nblocks, (const float *)core->l0c);
}

static rt_conv_tile_fn conv_tile_of(const conv_geom *g) {
  if (g->algo == OM_CONV_WINO_F43_FZ)
    return rt_cpu()->wino_fz_tile ? rt_cpu()->wino_fz_tile : rt_wino_fz_tile;
  return rt_cpu()->conv_tile ? rt_cpu()->conv_tile : rt_conv_tile_portable;
}

/* Tile t (image-major, then M-major) of the task, its epilogue program after it. */
static void conv_run_tile(const om_task *task, const rt_args *args, const conv_geom *g, rt_conv_tile_fn tile,
                          int64_t img, int64_t mt, int64_t nt, rt_core *core) {
  tile(g, img, mt, nt, core);
  const rt_vplan *epi = args->aux; /* the epilogue program (epilogue.c), or NULL */
  if (epi) rt_epi_conv_tile(epi, task, args, g, img, mt, nt, core);
}

void rt_conv2d_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  conv_geom g;
  conv_geom_init(task, args, &g);
  uint64_t lo, hi, per_image = (uint64_t)(g.mtiles * g.ntiles);
  rt_block_range((uint64_t)g.n * per_image, task->block_dim, block, &lo, &hi);
  rt_conv_tile_fn tile = conv_tile_of(&g);
  if (task->kind == OM_TASK_CONV2D &&
      task->params[OM_CONV_P_GROUPS] > 1) { /* grouped: kernels_cube_group.c runs the tiles run by run */
    rt_conv_group_run(task, args, &g, tile, block, core);
    return;
  }
  for (uint64_t t = lo; t < hi; t++)
    conv_run_tile(task, args, &g, tile, (int64_t)(t / per_image), (int64_t)(t % per_image) / g.ntiles,
                  (int64_t)(t % per_image) % g.ntiles, core);
}

/* Pieces: a tile divides into `parts` tiles of a finer tiling (a smaller
 * tile fits every buffer the tile does), parts one of 1, 2, 4, 8 that
 * divides the tile. A direct convolution divides tile_m, leaving a piece at
 * least PIECE_PIXELS pixels, or 4 output rows when the kernel is wider than
 * 1x1 (each piece converts its own input rows, the kernel's halo among
 * them), and only until the team's workers have PIECES_PER_WORKER pieces
 * each: every piece stages its n blocks' weights again, so a task of 4
 * tiles on 2 workers (ResNet-50's 1x1 convolutions of 196 pixels) runs
 * whole tiles, one weight read per tile. Measured on ResNet-50 b1, 2
 * workers, the old rule (the largest parts) and this one alternating run by
 * run in one process, CPU time of the direct convolutions' pieces 37.2 and
 * 35.8 ms per run under load (layer 1 and 2's 1x1 convolutions 8-18% less
 * each); 2 pieces per worker took 2-3% less CPU than 4. A Winograd tile
 * divides tile_n into pairs of n blocks or more (the largest parts): its
 * pieces share the tile's input transform, which a core computes once for
 * the pieces it runs (rt_l1_holds); split on M, each would redo the weight
 * transform. Grouped convolutions do not divide.
 * A direct piece is one of the image's pixels cut evenly into mtiles * parts
 * tiles (no larger than tile_m / parts, so it fits every buffer) when the
 * last of those keeps the least pixels above, not a part of its own tile:
 * a tiling whose last tile is short (ResNet-50's 784 pixels in tiles of
 * 208: 208, 208, 208, 160) gives equal pieces instead (196 each), so the
 * worker with the short tile does not wait at the barrier while the other
 * finishes a piece too large to share. */
enum { PIECE_PIXELS = 32, PIECES_PER_WORKER = 2 };

/* The fewest pixels a direct piece takes (the rule above). */
static int64_t piece_least(const conv_geom *g) { return g->p.kh * g->p.kw == 1 ? PIECE_PIXELS : 4 * g->wo; }

/* A direct piece's tile_m: the image cut evenly into mtiles * parts tiles
 * when the last of them keeps piece_least pixels, else tile_m / parts. */
static int64_t conv_piece_pixels(const conv_geom *g, uint32_t parts) {
  const int64_t hw = g->ho * g->wo, fine = g->mtiles * parts, even = (hw + fine - 1) / fine;
  return hw - (fine - 1) * even >= piece_least(g) ? even : g->tm / parts;
}

static uint32_t conv_parts(const conv_geom *g, int nworkers) {
  const int wino = g->algo == OM_CONV_WINO_F43_FZ;
  const int64_t size = wino ? g->tn : g->tm, least = wino ? 2 : piece_least(g);
  const uint64_t units = (uint64_t)(g->n * g->mtiles * g->ntiles);
  uint32_t parts = 1;
  for (uint32_t f = 2; f <= 8 && size % f == 0 && size / f >= least; f *= 2) {
    if (!wino && units * parts >= (uint64_t)PIECES_PER_WORKER * (uint64_t)nworkers) break;
    parts = f;
  }
  return parts;
}

/* The grain: a direct piece divides further into up to TAIL_SPLIT finer
 * pieces (each still the least a piece takes), which a core takes as one
 * tile while its share lasts and in halves at its end (team.c): with whole
 * pieces, 2 per worker, the core that finished first found the other busy
 * with its last piece and waited, on ResNet-50 b1 (2 workers, loaded
 * machine) a median 100-200 us per task between the two cores' last
 * pieces. Measured in one process, the two ways alternating run by run
 * (80-100 runs each, six times, both cores at real-time priority beside
 * other work): the 10th percentile of the run times 1.2-5.1% lower (3.7%
 * the median of the six), the median run within -0.2..+2.0%; on
 * MobileNetV2 and EfficientNet-B0 the 10th percentile 0.2-1.6% lower.
 * Dividing N instead of M where a tile has more channels than pixels
 * (ResNet-50's layer 4) did not help (the sum of the tasks' fastest runs
 * 1.5-4% higher). */
enum { TAIL_SPLIT = 4 };

uint64_t rt_conv2d_pieces(const om_task *task, const rt_args *args, const rt_core *core, uint32_t *parts,
                          uint32_t *grain) {
  conv_geom g;
  conv_geom_init(task, args, &g);
  *parts = 1, *grain = 1;
  if (task->kind == OM_TASK_CONV2D && task->params[OM_CONV_P_GROUPS] > 1) return 0;
  *parts = conv_parts(&g, core->nworkers);
  if (g.algo != OM_CONV_WINO_F43_FZ)
    while (*grain < TAIL_SPLIT && g.tm % (*parts * *grain * 2) == 0 &&
           g.tm / (*parts * *grain * 2) >= piece_least(&g))
      *grain *= 2;
  *parts *= *grain;
  return (uint64_t)(g.n * g.mtiles * g.ntiles);
}

void rt_conv2d_piece(const om_task *task, const rt_args *args, uint64_t first, uint32_t count, uint32_t parts,
                     rt_core *core) {
  conv_geom g;
  conv_geom_init(task, args, &g);
  const uint64_t per_image = (uint64_t)(g.mtiles * g.ntiles), t = first / parts;
  const int64_t img = (int64_t)(t / per_image), in_img = (int64_t)(t % per_image),
                part = (int64_t)(first % parts);
  int64_t mt = in_img / g.ntiles, nt = in_img % g.ntiles;
  /* the pieces are a tile of the finer tiling: count of the tile's parts
   * (rt_conv2d_pieces: parts divides the tile; count divides parts and first) */
  if (g.algo == OM_CONV_WINO_F43_FZ) {
    g.tn = g.tn / parts * count, g.ntiles = g.ntiles * parts / count, nt = (nt * parts + part) / count;
    if (nt * g.tn >= g.c1out) return; /* past the last n block */
  } else {
    g.tm = conv_piece_pixels(&g, parts) * count, g.mtiles = g.mtiles * parts / count,
    mt = (mt * parts + part) / count;
    if (mt * g.tm >= g.ho * g.wo) return; /* past the last pixel */
  }
  conv_run_tile(task, args, &g, conv_tile_of(&g), img, mt, nt, core);
}

/* The tiles rt_conv_tile_check allows, block_dim against the tiles of
 * `images` output images of `pixels` each (CONV3D: the (n, od) slices). */
static omrt_status chk_tiles(const rt_chk *c, const om_tensor *w, uint64_t images, uint64_t pixels) {
  omrt_status s = rt_conv_tile_check(c);
  if (s) return s;
  const int32_t *q = c->task->params;
  uint64_t tiles = images * (uint64_t)rt_ceil_div((int64_t)pixels, q[OM_CONV_P_TILE_M]) *
                   (uint64_t)rt_ceil_div(rt_ceil_div(w->dims[0], C0), q[OM_CONV_P_TILE_N]);
  return rt_chk_block_dim(c, tiles, "tiles");
}

omrt_status rt_conv2d_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "CONV2D"};
  const om_tensor *x, *w, *bias, *res, *y;
  omrt_status s;
  const int32_t *q = task->params;
  const int32_t x_scale = q[OM_CONV_P_X_SCALE], groups = q[OM_CONV_P_GROUPS], algo = q[OM_CONV_P_ALGORITHM];
  if (x_scale != 0 && x_scale != 1)
    return rt_chk_fail(&c, "params[%d] x_scale = %d, expected 0 or 1", OM_CONV_P_X_SCALE, (int)x_scale);
  if (x_scale == 1 && groups > 1)
    return rt_chk_fail(&c, "x_scale (params[%d] = 1) with groups %d: only a dense convolution takes one",
                       OM_CONV_P_X_SCALE, (int)groups);
  if (groups > 1) return rt_conv_group_check(&c); /* grouped: kernels_cube_group.c */
  if (algo != OM_CONV_DIRECT && algo != OM_CONV_WINO_F43_FZ)
    return rt_chk_fail(
        &c, "params[%d] algorithm %d is not 0 (direct) or 2 (Winograd F(4x4,3x3) on FRACTAL_Z weights)",
        OM_CONV_P_ALGORITHM, (int)algo);
  if ((s = rt_chk_ntensors(&c, rt_epi_ntensors(task))) ||
      (s = rt_chk_tensor(&c, OM_CONV_T_X, "x", 0, RT_LAYOUTS_ND_NC1HWC0, 4, 0, &x)) ||
      (s = rt_chk_tensor(&c, OM_CONV_T_W, "w", 0, LAYOUT_FRACTAL_Z, 4, 0, &w)) ||
      (s = rt_chk_tensor(&c, OM_CONV_T_BIAS, "bias", 1, LAYOUT_ND, 1, 1, &bias)) ||
      (s = rt_chk_tensor(&c, OM_CONV_T_RESIDUAL, "residual", 1, LAYOUT_NC1HWC0, 4, 0, &res)) ||
      (s = rt_chk_tensor(&c, OM_CONV_T_Y, "y", 0, LAYOUT_NC1HWC0, 4, 0, &y)))
    return s;
  if (x->layout == LAYOUT_ND && (x->dims[1] > 4 || x_scale != 0 || algo != OM_CONV_DIRECT))
    return rt_chk_fail(&c,
                       "x is ND: only a direct convolution of at most 4 input channels without x_scale "
                       "reads it (x has %lld channels, algorithm %d, x_scale %d)",
                       (long long)x->dims[1], (int)algo, (int)x_scale);
  if (x->layout != LAYOUT_ND && w->dtype != x->dtype)
    return rt_chk_fail(&c, "w dtype %u: expected x's dtype", w->dtype);
  if (w->dims[0] < 1 || w->dims[1] != x->dims[1])
    return rt_chk_fail(&c, "w [%lld, %lld, ...] does not match x channels %lld", (long long)w->dims[0],
                       (long long)w->dims[1], (long long)x->dims[1]);
  rt_conv_params p;
  rt_conv_params_read(task, &p);
  if (w->dims[2] != p.kh || w->dims[3] != p.kw)
    return rt_chk_fail(&c, "w kernel %lldx%lld != params kh %d, kw %d", (long long)w->dims[2],
                       (long long)w->dims[3], p.kh, p.kw);
  if ((s = rt_chk_conv_params(&c, &p, x, w->dims[0], y))) return s;
  if (bias && bias->dims[0] != w->dims[0])
    return rt_chk_fail(&c, "bias dims[0] = %lld, expected Cout %lld", (long long)bias->dims[0],
                       (long long)w->dims[0]);
  if (res && (s = rt_chk_same_dims(&c, "residual", res, "y", y))) return s;
  if (x_scale == 1) { /* [N, Cin, 1, 1] in x's dtype, 1x1 direct convolutions */
    const om_tensor *xs;
    if (algo != OM_CONV_DIRECT || p.kh != 1 || p.kw != 1 || p.sh != 1 || p.sw != 1 || p.pt || p.pl || p.pb ||
        p.pr)
      return rt_chk_fail(&c,
                         "x_scale (params[%d] = 1) needs a 1x1 kernel, strides 1, pads 0 and algorithm 0 "
                         "(kernel %dx%d, strides %d,%d, algorithm %d)",
                         OM_CONV_P_X_SCALE, p.kh, p.kw, p.sh, p.sw, (int)algo);
    if ((s = rt_chk_tensor(&c, OM_CONV_T_X_SCALE, "x_scale", 0, LAYOUT_NC1HWC0, 4, 0, &xs))) return s;
    if (xs->dtype != x->dtype || xs->dims[0] != x->dims[0] || xs->dims[1] != x->dims[1] || xs->dims[2] != 1 ||
        xs->dims[3] != 1)
      return rt_chk_fail(&c,
                         "x_scale [%lld, %lld, %lld, %lld] %s: expected [%lld, %lld, 1, 1] in x's dtype (%s)",
                         (long long)xs->dims[0], (long long)xs->dims[1], (long long)xs->dims[2],
                         (long long)xs->dims[3], dtype_name((int)xs->dtype), (long long)x->dims[0],
                         (long long)x->dims[1], dtype_name((int)x->dtype));
  }

  if (algo == OM_CONV_WINO_F43_FZ) return rt_wino_fz_check(&c, &p, x, w, y);
  return chk_tiles(&c, w, (uint64_t)x->dims[0], (uint64_t)(y->dims[2] * y->dims[3]));
}

/* CONV3D: CONV2D's rules over the depth window too (om_format.h). */
omrt_status rt_conv3d_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "CONV3D"};
  const om_tensor *x, *w, *bias, *res, *y;
  omrt_status s;
  const int32_t *q = task->params;
  if ((s = rt_chk_ntensors(&c, rt_epi_ntensors(task))) ||
      (s = rt_chk_tensor(&c, OM_CONV_T_X, "x", 0, LAYOUT_NDC1HWC0, 5, 0, &x)) ||
      (s = rt_chk_tensor(&c, OM_CONV_T_W, "w", 0, LAYOUT_FRACTAL_Z_3D, 5, 0, &w)) ||
      (s = rt_chk_tensor(&c, OM_CONV_T_BIAS, "bias", 1, LAYOUT_ND, 1, 1, &bias)) ||
      (s = rt_chk_tensor(&c, OM_CONV_T_RESIDUAL, "residual", 1, LAYOUT_NDC1HWC0, 5, 0, &res)) ||
      (s = rt_chk_tensor(&c, OM_CONV_T_Y, "y", 0, LAYOUT_NDC1HWC0, 5, 0, &y)))
    return s;
  if (w->dtype != x->dtype) return rt_chk_fail(&c, "w dtype %u: expected x's dtype", w->dtype);
  if (w->dims[0] < 1 || w->dims[1] != x->dims[1])
    return rt_chk_fail(&c, "w [%lld, %lld, ...] does not match x channels %lld", (long long)w->dims[0],
                       (long long)w->dims[1], (long long)x->dims[1]);
  /* the window per spatial dim (D, H, W): kernel, stride, pads, dilation */
  static const int kp[3] = {OM_CONV3D_P_KD, OM_CONV_P_KH, OM_CONV_P_KW},
                   sp[3] = {OM_CONV3D_P_STRIDE_D, OM_CONV_P_STRIDE_H, OM_CONV_P_STRIDE_W},
                   ap[3] = {OM_CONV3D_P_PAD_FRONT, OM_CONV_P_PAD_TOP, OM_CONV_P_PAD_LEFT},
                   bp[3] = {OM_CONV3D_P_PAD_BACK, OM_CONV_P_PAD_BOTTOM, OM_CONV_P_PAD_RIGHT},
                   dp[3] = {OM_CONV3D_P_DILATION_D, OM_CONV_P_DILATION_H, OM_CONV_P_DILATION_W};
  static const char *const dn[3] = {"D", "H", "W"};
  for (int j = 0; j < 3; j++) {
    int64_t k = q[kp[j]], st = q[sp[j]], pa = q[ap[j]], pb = q[bp[j]], dl = q[dp[j]], in = x->dims[2 + j];
    if (k < 1 || k > 65535 || st < 1 || st > 65535 || dl < 1 || dl > 65535 || pa < 0 || pb < 0)
      return rt_chk_fail(&c, "%s window: kernel %lld, stride %lld, dilation %lld (1..65535), pads %lld, %lld",
                         dn[j], (long long)k, (long long)st, (long long)dl, (long long)pa, (long long)pb);
    int64_t ext = dl * (k - 1) + 1, span = in + pa + pb - ext;
    if (pa >= ext || pb >= ext)
      return rt_chk_fail(&c, "%s pads %lld, %lld must be below the kernel extent %lld", dn[j], (long long)pa,
                         (long long)pb, (long long)ext);
    if (w->dims[2 + j] != k)
      return rt_chk_fail(&c, "w dims[%d] = %lld != the %s kernel %lld", 2 + j, (long long)w->dims[2 + j],
                         dn[j], (long long)k);
    if (in < 1 || span < 0 || y->dims[2 + j] != span / st + 1)
      return rt_chk_fail(&c,
                         "y dims[%d] = %lld, expected %lld (x %s %lld, kernel %lld, stride %lld, pads "
                         "%lld,%lld, dilation %lld)",
                         2 + j, (long long)y->dims[2 + j], (long long)(span < 0 ? 0 : span / st + 1), dn[j],
                         (long long)in, (long long)k, (long long)st, (long long)pa, (long long)pb,
                         (long long)dl);
  }
  if (x->dims[0] < 1 || y->dims[0] != x->dims[0] || y->dims[1] != w->dims[0])
    return rt_chk_fail(&c, "y [%lld, %lld, ...]: expected x's N %lld and Cout %lld", (long long)y->dims[0],
                       (long long)y->dims[1], (long long)x->dims[0], (long long)w->dims[0]);
  rt_conv_params p;
  rt_conv_params_read(task, &p);
  if (p.act != OM_ACT_NONE && p.act != OM_ACT_RELU && p.act != OM_ACT_CLIP)
    return rt_chk_fail(&c, "params[%d] act = %d unknown", OM_CONV_P_ACT, p.act);
  if (p.act == OM_ACT_CLIP && !(p.clip_min <= p.clip_max))
    return rt_chk_fail(&c, "clip_min %g > clip_max %g (or NaN)", p.clip_min, p.clip_max);
  if (bias && bias->dims[0] != w->dims[0])
    return rt_chk_fail(&c, "bias dims[0] = %lld, expected Cout %lld", (long long)bias->dims[0],
                       (long long)w->dims[0]);
  if (res && (s = rt_chk_same_dims(&c, "residual", res, "y", y))) return s;
  return chk_tiles(&c, w, (uint64_t)(y->dims[0] * y->dims[2]), (uint64_t)(y->dims[3] * y->dims[4]));
}

omrt_status rt_conv_tile_check(const rt_chk *c) {
  const int32_t *q = c->task->params;
  const int64_t tm = q[OM_CONV_P_TILE_M], tn = q[OM_CONV_P_TILE_N], tk = q[OM_CONV_P_TILE_K];
  if (tm < 16 || tm % 16 || tn < 1 || tk < 1 || tm > 65536 || tn > 65536 || tk > OM_CONV_MAX_TILE_K)
    return rt_chk_fail(
        c, "tiles tile_m %lld (a multiple of 16), tile_n %lld, tile_k %lld (at most %d) out of range",
        (long long)tm, (long long)tn, (long long)tk, OM_CONV_MAX_TILE_K);
  const om_model_def *d = c->m->def;
  const struct {
    const char *what;
    uint64_t need, have; /* bytes; L0A and L0B as staged (f32, om_format.h) */
  } caps[] = {{"L0A (a chunk's rows of 16 pixels, f32)", 16 * (uint64_t)tk * 16 * 4,
               (uint64_t)OM_L0_STAGING * d->l0a_bytes},
              {"L0B (a chunk's fractals of one n block, f32)", (uint64_t)tk * 16 * 16 * 4,
               (uint64_t)OM_L0_STAGING * d->l0b_bytes},
              {"L0C (the tile's f32 sums)", (uint64_t)tm * (uint64_t)tn * 16 * 4, d->l0c_bytes}};
  for (size_t i = 0; i < sizeof caps / sizeof *caps; i++)
    if (caps[i].need > caps[i].have)
      return rt_chk_fail(c, "tile_m %lld, tile_n %lld, tile_k %lld need %llu bytes of %s, capacity %llu",
                         (long long)tm, (long long)tn, (long long)tk, (unsigned long long)caps[i].need,
                         caps[i].what, (unsigned long long)caps[i].have);
  return OMRT_OK;
}
