/* kernels_wino.c - CONV2D algorithm OM_CONV_WINO_F43_FZ: Winograd
 * F(4x4,3x3) on FRACTAL_Z weights.
 *
 * Y = A^T [ (G g G^T) . (B^T d B) ] A for every 4x4 output tile, d the 6x6
 * input patch at (4*th - pad_top, 4*tw - pad_left) (zero outside the input),
 * g the 3x3 kernel. A dilated kernel (dilation d) is the same on each phase
 * of the output (the pixels of one o % d, rows and columns): a phase reads
 * every d-th input, so its tile's 4x4 pixels and its patch's 6x6 inputs lie
 * d apart (rt_wino_origin, wino_f43_tiles). A task tile (tile_m Winograd
 * tiles x tile_n channel blocks, om_format.h) is:
 *   1. input transform: V[p][m][ci] = (B^T d B)[p] for its tiles m and all
 *      input channels, f32, in L1 (16 channel lanes at a time); left there
 *      for the next piece of the same tile on this core (exec.c's pieces
 *      divide a Winograd tile's n blocks: rt_l1_holds);
 *   2. per output channel block, per chunk of tile_k input channel blocks:
 *      the weight transform U' of the chunk's channels into UB (below), then
 *      for each of the 36 positions p, L0C[p][m][16] (+)= V[p] (tile_m x
 *      the chunk's k) x U'[p] (k x 16), V read in L1 and U' in UB where the
 *      chip would load L0A and L0B;
 *   3. output transform A^T D M D A of each tile's 36 products (gathered in
 *      UB) fused with the epilogue: + bias, + residual, relu / clip, padding
 *      channels forced to 0, f16 or f32 store of the pixels inside Ho x Wo.
 * Everything runs in f32 (lower/winograd.c says why): under fp16 the only
 * roundings to fp16 are those of the stored activations and weights, as on
 * the direct path.
 * The weight transform: G' = diag(WINO_D)^-1 G has rows of small integers,
 * so U' = G' g G'^T costs adds and a few multiplies by 2 and 4 (and is exact
 * in f32 for fp16 weights); U = D U' D, and the output transform applies
 * the two D once per tile instead of once per weight. U' is [i][k][j][16]
 * for position p = (i, j): a row i's 6 positions lie together, so the
 * transform of one input channel writes 6 short sequential runs, and a
 * position's GEMM reads its rows 6 x 64 bytes apart (36 x 64 would put them
 * in a quarter of the L1 sets and push them out between the tile's row
 * groups). UB holds the chunk's U' and, after it, the output transform's
 * gathered products.
 * This is the portable path (plain C over 16 lanes, which the compiler
 * vectorizes); on x86 hosts rt_cpu() selects wino_x86.inc's tile (built
 * as kernels_wino_x86.c for AVX2 and kernels_wino_avx512.c for AVX-512),
 * the same steps in intrinsics with the GEMMs on the cube's FMA
 * micro-kernel.
 * Capacities: the guarantees of om_format.h (CONV2D, algorithm 2) bound
 * every buffer used here; rt_wino_fz_check verifies them at load.
 */
#include "runtime/kernels.h"

enum { P = WINO_F43_POINTS };

/* out[i*os] = (B^T x)[i] for 6 rows x[k*is] of 16 lanes each. */
static void bt6(const float *x, size_t is, float *out, size_t os) {
  const float *d0 = x, *d1 = x + is, *d2 = x + 2 * is, *d3 = x + 3 * is, *d4 = x + 4 * is, *d5 = x + 5 * is;
  float *o0 = out, *o1 = out + os, *o2 = out + 2 * os, *o3 = out + 3 * os, *o4 = out + 4 * os,
        *o5 = out + 5 * os;
  for (int l = 0; l < C0; l++) {
    float a = d4[l] - 4.0f * d2[l], b = d3[l] - 4.0f * d1[l];
    float c = d4[l] - d2[l], e = 2.0f * (d3[l] - d1[l]);
    o0[l] = 4.0f * d0[l] - 5.0f * d2[l] + d4[l];
    o1[l] = a + b;
    o2[l] = a - b;
    o3[l] = c + e;
    o4[l] = c - e;
    o5[l] = 4.0f * d1[l] - 5.0f * d3[l] + d5[l];
  }
}

/* out[i*os] = (A^T D x)[i] for 6 rows x[k*is] of 16 lanes each, 4 outputs,
 * D = diag(WINO_D) (kernels.h), which the weight transform leaves out. */
static void at6(const float *x, size_t is, float *out, size_t os) {
  const float *m0 = x, *m1 = x + is, *m2 = x + 2 * is, *m3 = x + 3 * is, *m4 = x + 4 * is, *m5 = x + 5 * is;
  for (int l = 0; l < C0; l++) {
    float s12 = (m1[l] + m2[l]) * WINO_D1, d12 = (m1[l] - m2[l]) * WINO_D1, s34 = (m3[l] + m4[l]) * WINO_D3,
          d34 = (m3[l] - m4[l]) * WINO_D3;
    out[l] = m0[l] * WINO_D0 + s12 + s34;
    out[os + l] = d12 + 2.0f * d34;
    out[2 * os + l] = s12 + 4.0f * s34;
    out[3 * os + l] = d12 + 8.0f * d34 + m5[l];
  }
}

/* V[p][m][c1*16 ..] for tile m (output tile row th, column tw), all c1. */
static void input_transform(const rt_conv_geom *g, int64_t img, int64_t th, int64_t tw, float *v,
                            size_t pstride) {
  const int f16 = g->x->dtype == DT_FLOAT16;
  const int64_t dh = g->p.dh, dw = g->p.dw;
  const int64_t ih0 = rt_wino_origin(th, g->wth, dh) - g->p.pt,
                iw0 = rt_wino_origin(tw, g->wtw, dw) - g->p.pl;
  float d[P * C0], t[P * C0];
  for (int64_t c1 = 0; c1 < g->c1; c1++) {
    const size_t plane = (size_t)((img * g->c1 + c1) * g->h * g->w_);
    for (int i = 0; i < 6; i++)
      for (int j = 0; j < 6; j++) {
        const int64_t ih = ih0 + i * dh, iw = iw0 + j * dw;
        float *dst = d + (i * 6 + j) * C0;
        if (ih >= 0 && ih < g->h && iw >= 0 && iw < g->w_)
          rt_load_f32(dst, g->xd, f16 ? DT_FLOAT16 : DT_FLOAT32, (plane + (size_t)(ih * g->w_ + iw)) * C0,
                      C0);
        else
          memset(dst, 0, C0 * sizeof(float));
      }
    for (int j = 0; j < 6; j++) /* columns: t[i][j] = sum_k B^T[i][k] d[k][j] */
      bt6(d + j * C0, 6 * C0, t + j * C0, 6 * C0);
    for (int i = 0; i < 6; i++) { /* rows: V[i][j] = sum_k t[i][k] B^T[j][k] */
      float r[6 * C0];
      bt6(t + i * 6 * C0, C0, r, C0);
      for (int j = 0; j < 6; j++)
        memcpy(v + (size_t)(i * 6 + j) * pstride + (size_t)c1 * C0, r + j * C0, C0 * sizeof(float));
    }
  }
}

/* Output channel block cb of tile (th, tw): m[p*mstride .. +16] are its 36
 * products (of U', without D); y = act(A^T D M D A + bias + residual) for
 * the pixels inside. */
static void output_transform(const rt_conv_geom *g, int64_t img, int64_t th, int64_t tw, int64_t cb,
                             const float *m, size_t mstride, float *ub) {
  float *gm = ub, t[4 * 6 * C0], o[16 * C0], bias[C0], keep[C0];
  for (int p = 0; p < P; p++)
    memcpy(gm + p * C0, m + (size_t)p * mstride, C0 * sizeof(float));
  for (int j = 0; j < 6; j++) /* columns: t[i][j] = sum_k A^T[i][k] M[k][j] */
    at6(gm + j * C0, 6 * C0, t + j * C0, 6 * C0);
  for (int i = 0; i < 4; i++) /* rows: o[i][j] = sum_k t[i][k] A^T[j][k] */
    at6(t + i * 6 * C0, C0, o + i * 4 * C0, C0);
  for (int l = 0; l < C0; l++) {
    const int64_t co = cb * C0 + l;
    keep[l] = co < g->cout ? 1.0f : 0.0f;
    bias[l] = g->bd && co < g->cout ? g->bd[co] : 0.0f;
  }
  const int yt = (int)g->y->dtype, rt = g->res ? (int)g->res->dtype : DT_FLOAT32;
  const float lo = g->p.clip_min, hi = g->p.clip_max;
  const int64_t oh0 = rt_wino_origin(th, g->wth, g->p.dh), ow0 = rt_wino_origin(tw, g->wtw, g->p.dw);
  for (int i = 0; i < 4; i++) {
    const int64_t oh = oh0 + i * g->p.dh;
    if (oh >= g->ho) break;
    for (int j = 0; j < 4; j++) {
      const int64_t ow = ow0 + j * g->p.dw;
      if (ow >= g->wo) break;
      const size_t at = (size_t)((((img * g->c1out + cb) * g->ho + oh) * g->wo + ow) * C0);
      float v[C0], r[C0];
      for (int l = 0; l < C0; l++)
        v[l] = o[(i * 4 + j) * C0 + l] + bias[l];
      if (g->rd) {
        rt_load_f32(r, g->rd, rt, at, C0);
        for (int l = 0; l < C0; l++)
          v[l] += r[l];
      }
      for (int l = 0; l < C0; l++)
        v[l] = keep[l] != 0.0f ? rt_act(v[l], g->p.act, lo, hi) : 0.0f;
      rt_store_f32(g->yd, yt, at, v, C0);
    }
  }
}

/* The portable GEMM: c[m][16] (+)= a[m][0..klen) x b[klen][16] (rows ldb
 * floats apart); = when first. */
static void gemm16_acc(const float *a, size_t lda, int64_t mrows, size_t klen, const float *b, size_t ldb,
                       float *c, int first) {
  for (int64_t m = 0; m < mrows; m++) {
    float acc[C0];
    const float *am = a + (size_t)m * lda;
    if (first)
      memset(acc, 0, sizeof acc);
    else
      memcpy(acc, c + m * C0, sizeof acc);
    for (size_t k = 0; k < klen; k++)
      for (int l = 0; l < C0; l++)
        acc[l] += am[k] * b[k * ldb + l];
    memcpy(c + m * C0, acc, sizeof acc);
  }
}

/* o[0..5] = G' (a, b, c)^T: rows (1,0,0) (1,1,1) (1,-1,1) (1,2,4) (1,-2,4) (0,0,1). */
static inline void g3i(float a, float b, float c, float o[6]) {
  const float s = a + c, e = a + 4.0f * c;
  o[0] = a;
  o[1] = s + b;
  o[2] = s - b;
  o[3] = e + 2.0f * b;
  o[4] = e - 2.0f * b;
  o[5] = c;
}

/* U'[i][kk][j][co] for output channel block cb and input channel blocks
 * cc0 .. cc0+tkn-1 (kk < tkn*16). */
static void weight_transform(const rt_conv_geom *g, int64_t cb, int64_t cc0, int64_t tkn, float *u) {
  const size_t irow = (size_t)tkn * C0 * 6 * C0; /* floats from one row i to the next */
  float frac[9][C0 * C0];                        /* the 9 taps' fractals, [ci][co] (FRACTAL_Z) */
  for (int64_t cc = 0; cc < tkn; cc++) {
    for (int tap = 0; tap < 9; tap++)
      rt_load_f32(frac[tap], g->wd, (int)g->w->dtype,
                  (size_t)(((cc0 + cc) * 9 + tap) * g->c1out + cb) * C0 * C0, C0 * C0);
    for (int ci = 0; ci < C0; ci++)
      for (int co = 0; co < C0; co++) {
        float t[3][6], r[6];
        float *dst = u + (size_t)(cc * C0 + ci) * 6 * C0 + co;
        for (int j = 0; j < 3; j++) /* columns: t[j][i] = sum_kh G'[i][kh] g[kh][j] */
          g3i(frac[j][ci * C0 + co], frac[3 + j][ci * C0 + co], frac[6 + j][ci * C0 + co], t[j]);
        for (int i = 0; i < 6; i++) { /* rows: U'[i][j] = sum_kw t[i][kw] G'[j][kw] */
          g3i(t[0][i], t[1][i], t[2][i], r);
          for (int j = 0; j < 6; j++)
            dst[(size_t)i * irow + (size_t)j * C0] = r[j];
        }
      }
  }
}

void rt_wino_fz_tile(const rt_conv_geom *g, int64_t img, int64_t mt, int64_t nt, rt_core *core) {
  const int64_t t0 = mt * g->tm, wt = g->wth * g->wtw;
  const int64_t mrows = wt - t0 < g->tm ? wt - t0 : g->tm;
  const int64_t nb0 = nt * g->tn, nblocks = g->c1out - nb0 < g->tn ? g->c1out - nb0 : g->tn;
  const size_t k = (size_t)g->c1 * C0, pstride = (size_t)mrows * k;
  float *v = (float *)core->l1, *l0c = (float *)core->l0c, *u = (float *)core->ub;
  float *gather = u + (size_t)P * (size_t)g->tk * C0 * C0;
  if (!rt_l1_holds(core, g->xd, img, t0, mrows)) /* another piece of the tile did it on this core */
    for (int64_t m = 0; m < mrows; m++)
      input_transform(g, img, (t0 + m) / g->wtw, (t0 + m) % g->wtw, v + (size_t)m * k, pstride);
  for (int64_t nb = 0; nb < nblocks; nb++) {
    const int64_t cb = nb0 + nb;
    for (int64_t cc0 = 0; cc0 < g->c1; cc0 += g->tk) {
      const int64_t tkn = g->c1 - cc0 < g->tk ? g->c1 - cc0 : g->tk;
      const size_t klen = (size_t)tkn * C0;
      weight_transform(g, cb, cc0, tkn, u);
      for (int p = 0; p < P; p++)
        gemm16_acc(v + (size_t)p * pstride + (size_t)cc0 * C0, k, mrows, klen,
                   u + ((size_t)(p / 6) * klen * 6 + (size_t)(p % 6)) * C0, 6 * C0,
                   l0c + (size_t)p * (size_t)mrows * C0, cc0 == 0);
    }
    for (int64_t m = 0; m < mrows; m++)
      output_transform(g, img, (t0 + m) / g->wtw, (t0 + m) % g->wtw, cb, l0c + (size_t)m * C0,
                       (size_t)mrows * C0, gather);
  }
}

omrt_status rt_wino_fz_check(const rt_chk *c, const rt_conv_params *p, const om_tensor *x, const om_tensor *w,
                             const om_tensor *y) {
  if (p->kh != 3 || p->kw != 3 || p->sh != 1 || p->sw != 1)
    return rt_chk_fail(c,
                       "Winograd F(4x4,3x3) needs a 3x3 kernel and strides 1 (kernel %dx%d, strides %d,%d)",
                       p->kh, p->kw, p->sh, p->sw);
  if (p->dh > y->dims[2] || p->dw > y->dims[3]) /* every phase has a pixel: fewer than 4 x Ho x Wo tiles */
    return rt_chk_fail(c, "Winograd dilations %d,%d must not exceed the output %lldx%lld", p->dh, p->dw,
                       (long long)y->dims[2], (long long)y->dims[3]);
  const om_task *task = c->task;
  int64_t tm = task->params[OM_CONV_P_TILE_M], tn = task->params[OM_CONV_P_TILE_N],
          tk = task->params[OM_CONV_P_TILE_K], c1 = rt_ceil_div(x->dims[1], C0);
  if (tm < 1 || tn < 1 || tm > 65536 || tn > 65536 || tk < 1 || tk > c1)
    return rt_chk_fail(c, "Winograd tiles tile_m %lld, tile_n %lld, tile_k %lld (1..C1in %lld) out of range",
                       (long long)tm, (long long)tn, (long long)tk, (long long)c1);
  const uint64_t k = (uint64_t)c1 * C0, pts = P;
  const om_model_def *d = c->m->def;
  const struct {
    const char *what;
    uint64_t need, have;
  } caps[] = {{"L1", pts * (uint64_t)tm * k * 4, d->l1_bytes},
              {"L0C", pts * (uint64_t)tm * C0 * 4, d->l0c_bytes},
              {"UB", pts * ((uint64_t)tk * C0 + 1) * C0 * 4, d->ub_bytes}};
  for (size_t i = 0; i < sizeof caps / sizeof *caps; i++)
    if (caps[i].need > caps[i].have)
      return rt_chk_fail(
          c, "Winograd tile_m %lld, tile_k %lld with C1in %lld needs %llu bytes of %s, capacity %llu",
          (long long)tm, (long long)tk, (long long)c1, (unsigned long long)caps[i].need, caps[i].what,
          (unsigned long long)caps[i].have);
  uint64_t tiles =
      (uint64_t)x->dims[0] *
      (uint64_t)rt_ceil_div(wino_f43_tiles(y->dims[2], p->dh) * wino_f43_tiles(y->dims[3], p->dw), tm) *
      (uint64_t)rt_ceil_div(rt_ceil_div(w->dims[0], C0), tn);
  return rt_chk_block_dim(c, tiles, "tiles");
}
