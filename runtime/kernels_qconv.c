/* kernels_qconv.c - QCONV2D, the int8 convolution (contract in
 * om_format.h): the block split into tiles, the load-time check, and the
 * portable tile.
 *
 * x, y and r are NC1HWC0, or all NHWC (format 2.11); rt_qconv_geom_init
 * reads the dims through an NCHW view and sets the strides that tell them
 * apart, so the tiles below do not. A block runs its tiles through rt_cpu()'s qconv_tile (AVX-512 VNNI or
 * AVX2: kernels_qconv_vnni.c, kernels_qconv_avx2.c) or the portable tile below. All of them read x
 * and the packed weights in place: for each output pixel and tap, a pointer
 * to the pixel's 16 channels of the first input block the output block
 * reads (or to a row of x_zp bytes when the tap lies in the padding, with
 * stride 0), stepping H*W*16 bytes per input block. The sums are int32 and
 * exact (the compiler bounds K), so the order of the additions does not
 * matter; the requantization is common/quant.h's q_requant, followed with
 * a residual (format 2.7) by q_eltwise against r's element. A conv whose
 * window has few channels (rt_qconv_window_bytes) gets its weights packed
 * again, K as (tap, channel), once per core and task run into the core's
 * L1 (rt_qconv_run), for the tiles that walk the gathered windows. On the
 * AVX2 path, constant weights are also widened to 16 bits once at load
 * (rt_qconv_prepare) where its tile would widen them again per pass.
 */
#include "runtime/kernels_qconv.h"

#include <stdlib.h>
#include <string.h>

#include "common/quant.h"

/* t's dims as NCHW: an NHWC (ND) tensor's [N, H, W, C] permuted. */
static om_tensor nchw_view(const om_tensor *t) {
  om_tensor v = *t;
  if (t->layout == LAYOUT_ND) v.dims[1] = t->dims[3], v.dims[2] = t->dims[1], v.dims[3] = t->dims[2];
  return v;
}

/* The strides of an NC1HWC0 or NHWC tensor of NCHW dims d (rt_qconv_geom). */
static void strides(const om_tensor *t, const int64_t *d, size_t *is, size_t *ps, size_t *bs) {
  const size_t hw = (size_t)(d[2] * d[3]);
  if (t->layout == LAYOUT_ND)
    *is = hw * (size_t)d[1], *ps = (size_t)d[1], *bs = C0;
  else
    *is = (size_t)rt_ceil_div(d[1], C0) * hw * C0, *ps = C0, *bs = hw * C0;
}

void rt_qconv_geom_init(const om_task *task, const rt_args *args, rt_qconv_geom *g) {
  const om_tensor xv = nchw_view(args->desc[OM_QCONV_T_X]), yv = nchw_view(args->desc[OM_QCONV_T_Y]);
  const om_tensor *x = &xv, *y = &yv, *w = args->desc[OM_QCONV_T_W];
  const int32_t *q = task->params;
  memset(g, 0, sizeof *g);
  g->x = args->data[OM_QCONV_T_X];
  g->w = args->data[OM_QCONV_T_W];
  g->bias = args->data[OM_QCONV_T_BIAS];
  g->mult = args->data[OM_QCONV_T_MULT];
  g->y = args->data[OM_QCONV_T_Y];
  g->c1in = rt_ceil_div(x->dims[1], C0), g->h = x->dims[2], g->w_ = x->dims[3];
  g->cout = y->dims[1], g->c1out = rt_ceil_div(y->dims[1], C0), g->ho = y->dims[2], g->wo = y->dims[3];
  g->kg = w->dims[1];
  strides(args->desc[OM_QCONV_T_X], x->dims, &g->xis, &g->xps, &g->xbs);
  strides(args->desc[OM_QCONV_T_Y], y->dims, &g->yis, &g->yps, &g->ybs);
  g->kh = q[OM_CONV_P_KH], g->kw = q[OM_CONV_P_KW], g->sh = q[OM_CONV_P_STRIDE_H],
  g->sw = q[OM_CONV_P_STRIDE_W];
  g->pt = q[OM_CONV_P_PAD_TOP], g->pl = q[OM_CONV_P_PAD_LEFT];
  g->dh = q[OM_CONV_P_DILATION_H], g->dw = q[OM_CONV_P_DILATION_W];
  const int64_t groups = q[OM_QCONV_P_GROUPS];
  const int64_t gd[5] = {groups, y->dims[1] / groups, x->dims[1] / groups, g->kh, g->kw};
  convg_init(gd, &g->cg);
  g->depthwise = groups == x->dims[1] && groups == y->dims[1];
  g->xzp = q[OM_QCONV_P_X_ZP], g->yzp = q[OM_QCONV_P_Y_ZP], g->lo = q[OM_QCONV_P_LO],
  g->hi = q[OM_QCONV_P_HI];
  g->clo = g->lo, g->chi = g->hi;
  if (task->ntensors == OM_QCONV_NTENSORS_R) {
    const int rs = args->desc[OM_QCONV_T_R]->dtype == DT_INT8;
    q_range((int)y->dtype, &g->clo, &g->chi);
    g->r = args->data[OM_QCONV_T_R];
    g->rmask = rs ? 0x80 : 0;
    g->rmul = q[OM_QCONV_P_R_OP] == 1;
    g->rzp = q[OM_QCONV_P_R_ZP] + (rs ? 128 : 0), g->ozp = q[OM_QCONV_P_O_ZP];
    g->cs = rt_param_f32(q[OM_QCONV_P_C_SCALE]), g->rs = rt_param_f32(q[OM_QCONV_P_R_SCALE]);
    g->os = rt_param_f32(q[OM_QCONV_P_O_SCALE]);
  }
  if (task->ntensors == OM_QCONV_NTENSORS_DYN) {     /* a run-time x zero point (format 2.15) */
    const uint8_t *zp = args->data[OM_QCONV_T_X_ZP]; /* NULL at load (rt_qconv_prepare): shapes only */
    g->xzp = zp ? *zp : 0;
    g->epi = y->dtype == DT_INT32 ? 1 : 2, g->nzp = -g->xzp, g->ypad = 1;
    g->scale = g->mult, g->sstep = rt_elements(args->desc[OM_QCONV_T_MULT]) > 1;
    g->fbias = args->data[OM_QCONV_T_FBIAS];
    g->fclamp = q[OM_QCONV_P_F_CLAMP];
    g->flo = rt_param_f32(q[OM_QCONV_P_F_LO]), g->fhi = rt_param_f32(q[OM_QCONV_P_F_HI]);
  } else if (y->dtype == DT_FLOAT32) { /* the sums' float value (format 2.13) */
    g->epi = 2, g->nzp = 1, g->sstep = 1, g->scale = g->mult;
    g->ypad = args->desc[OM_QCONV_T_Y]->layout != LAYOUT_ND;
  }
  g->xmask = q[OM_QCONV_P_X_SIGNED] ? 0x80 : 0;
  g->qtail = (int)((x->dims[1] - (g->c1in - 1) * C0 + 3) / 4);
  memset(g->pad, (uint8_t)g->xzp ^ g->xmask, sizeof g->pad);
  g->cin = (int)x->dims[1];
}

int64_t rt_qconv_window_bytes(rt_qconv_geom *g) {
  const int64_t taps = (int64_t)g->kh * g->kw, k = taps * g->cin;
  g->kq = 0;
  if (g->c1in != 1 || g->cg.g != 1 || g->cin >= 4 || taps == 1 || k > QCONV_WINDOW_MAX) return 0;
  g->kq = (int)((k + 3) / 4);
  return g->c1out * g->kq * C0 * 4;
}

void rt_qconv_pack_window(const rt_qconv_geom *g, int8_t *dst) {
  const int64_t k = (int64_t)g->kh * g->kw * g->cin;
  for (int64_t nb = 0; nb < g->c1out; nb++) {
    const int8_t *wb = g->w + (size_t)(nb * g->kg) * C0 * 4; /* [tap][group 0][16][4] */
    int8_t *db = dst + (size_t)(nb * g->kq) * C0 * 4;
    for (int64_t i = 0; i < (int64_t)g->kq * 4; i++) {
      const int64_t t = i / g->cin, c = i % g->cin;
      for (int j = 0; j < C0; j++)
        db[((i / 4) * C0 + j) * 4 + i % 4] = i < k ? wb[((t * 4 + c / 4) * C0 + j) * 4 + c % 4] : 0;
    }
  }
}

/* QMATMUL's epilogue (epi 1 or 2) of output channels co0.. co0+15 of the
 * sums acc at y's element offset at (the AVX2 path's avx2_store_epi does
 * these steps in vectors). */
static void store_epi(const rt_qconv_geom *g, size_t at, int64_t co0, const int32_t *acc) {
  for (int j = 0; j < C0; j++) {
    const int64_t co = co0 + j;
    if (co >= g->cout) {
      if (!g->ypad) break;
      ((float *)(void *)g->y)[at + j] = 0.0f;
      continue;
    }
    const int32_t a = (int32_t)((uint32_t)acc[j] + (uint32_t)g->nzp * (uint32_t)g->bias[co]);
    if (g->epi == 1) {
      ((int32_t *)(void *)g->y)[at + j] = a;
      continue;
    }
    float f = (float)a;
    f = f * g->scale[co * g->sstep];
    if (g->fbias) f = f + g->fbias[co];
    if (g->fclamp & 1) f = f < g->flo ? g->flo : f;
    if (g->fclamp & 2) f = f > g->fhi ? g->fhi : f;
    ((float *)(void *)g->y)[at + j] = f;
  }
}

/* Pixel p's sums of output block nb (plus its row term, rowc) requantized
 * (and with r, q_eltwise'd with r's element) into y, padding lanes 0 (with
 * ycut not written). */
static void store_block(const rt_qconv_geom *g, int64_t img, int64_t p, int64_t nb, const int32_t *sums) {
  const size_t at = rt_qconv_yat(g, img, nb, p);
  int32_t acc[C0];
  for (int j = 0; j < C0; j++) /* wraps, as SIMD adds */
    acc[j] = (int32_t)((uint32_t)sums[j] + (uint32_t)(g->rowc ? g->rowc[p] : 0));
  if (g->epi) {
    store_epi(g, at, nb * C0, acc);
    return;
  }
  uint8_t *yp = g->y + at;
  for (int j = 0; j < C0; j++) {
    const int64_t co = nb * C0 + j;
    if (co >= g->cout && g->ycut) break;
    const int32_t a = (int32_t)((uint32_t)acc[j] + (uint32_t)g->bias[co]);
    int32_t v = q_requant(a, g->mult[co], g->yzp, g->clo, g->chi);
    if (g->r)
      v = q_eltwise(v, g->yzp, g->cs, g->r[at + j] ^ g->rmask, g->rzp, g->rs, g->rmul, g->os, g->ozp, g->lo,
                    g->hi);
    yp[j] = co < g->cout ? (uint8_t)v : 0;
  }
}

/* Depthwise: channel j of block nb reads input channel j of block nb. */
static void tile_dw(const rt_qconv_geom *g, int64_t img, int64_t p0, int64_t p1, int64_t nb0, int64_t nb1) {
  const int taps = g->kh * g->kw;
  for (int64_t nb = nb0; nb < nb1; nb++)
    for (int64_t p = p0; p < p1; p++) {
      const int64_t oh = p / g->wo, ow = p % g->wo;
      int32_t acc[C0] = {0};
      for (int t = 0; t < taps; t++) {
        const int64_t ih = oh * g->sh - g->pt + (t / g->kw) * g->dh,
                      iw = ow * g->sw - g->pl + (t % g->kw) * g->dw;
        const int in = ih >= 0 && ih < g->h && iw >= 0 && iw < g->w_;
        const uint8_t *xp = in ? g->x + rt_qconv_xat(g, img, nb, ih, iw) : g->pad;
        const int8_t *wt = g->w + (size_t)(nb * taps + t) * C0;
        for (int j = 0; j < C0; j++)
          acc[j] += (xp[j] ^ g->xmask) * wt[j];
      }
      store_block(g, img, p, nb, acc);
    }
}

void rt_qconv_tile_c(const rt_qconv_geom *g, int64_t img, int64_t p0, int64_t p1, int64_t nb0, int64_t nb1) {
  if (g->depthwise) {
    tile_dw(g, img, p0, p1, nb0, nb1);
    return;
  }
  for (int64_t nb = nb0; nb < nb1; nb++) {
    int64_t lo, hi;
    convg_block_range(&g->cg, nb, &lo, &hi);
    const int64_t kb = hi - lo;
    const int8_t *wb = g->w + (size_t)(nb * g->kg) * C0 * 4;
    for (int64_t p = p0; p < p1; p++) {
      const int64_t oh = p / g->wo, ow = p % g->wo;
      int32_t acc[C0] = {0};
      for (int t = 0; t < g->kh * g->kw; t++) {
        const int64_t ih = oh * g->sh - g->pt + (t / g->kw) * g->dh,
                      iw = ow * g->sw - g->pl + (t % g->kw) * g->dw;
        const int in = ih >= 0 && ih < g->h && iw >= 0 && iw < g->w_;
        const uint8_t *xp = in ? g->x + rt_qconv_xat(g, img, lo, ih, iw) : g->pad;
        const size_t step = in ? g->xbs : 0;
        for (int64_t cb = 0; cb < kb; cb++, xp += step)
          for (int c0 = 0; c0 < (lo + cb == g->c1in - 1 ? 4 * g->qtail : C0); c0++) {
            const int32_t u = xp[c0] ^ g->xmask;
            const int8_t *wk = wb + ((size_t)((t * kb + cb) * 4 + c0 / 4) * C0) * 4 + c0 % 4;
            for (int j = 0; j < C0; j++)
              acc[j] += u * wk[j * 4];
          }
      }
      store_block(g, img, p, nb, acc);
    }
  }
}

omrt_status rt_qconv_prepare(const omrt_model *m, uint32_t i, const om_task *task, void **aux_out) {
  *aux_out = NULL;
#if defined(__x86_64__) && defined(__GNUC__)
  if (rt_cpu()->qconv_tile != rt_qconv_tile_avx2) return OMRT_OK;
  rt_args args; /* the descriptors, and the data of the weights region only */
  memset(&args, 0, sizeof args);
  for (uint32_t s = 0; s < task->ntensors; s++) {
    if (task->tensors[s] == OM_NONE) continue;
    const om_tensor *t = &m->tensors[task->tensors[s]];
    args.desc[s] = t;
    if (t->region == OM_REGION_WEIGHTS) args.data[s] = (void *)(m->weights + t->offset);
  }
  if (!args.data[OM_QCONV_T_W]) return OMRT_OK; /* w computed at run time */
  rt_qconv_geom g;
  rt_qconv_geom_init(task, &args, &g);
  const int64_t bytes = rt_qconv_widened_bytes(&g);
  if (!bytes) return OMRT_OK;
  int16_t *w16 = aligned_alloc(64, (size_t)(bytes + 63) & ~(size_t)63);
  if (!w16)
    return rt_error(OMRT_ERR_NOMEM,
                    "om load: task %u (QCONV2D) '%s': out of memory for %lld bytes of widened weights", i,
                    rt_string(m, task->name), (long long)bytes);
  rt_qconv_widen_avx2(&g, w16);
  *aux_out = w16;
#else
  (void)m, (void)i, (void)task;
#endif
  return OMRT_OK;
}

void rt_qconv_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  rt_qconv_geom g;
  rt_qconv_geom_init(task, args, &g);
  g.w16 = args->aux; /* rt_qconv_prepare's, for the AVX2 tile; NULL otherwise */
  const int64_t wbytes = rt_qconv_window_bytes(&g);
  if (wbytes && (size_t)wbytes <= core->l1_bytes) { /* packed once per core and task run */
    if (!rt_l1_holds(core, g.w, OM_TASK_QCONV2D, wbytes, 0)) rt_qconv_pack_window(&g, (int8_t *)core->l1);
    g.wwin = (const int8_t *)core->l1;
  }
  const int64_t n = args->desc[OM_QCONV_T_Y]->dims[0], m = g.ho * g.wo;
  const int64_t tm = task->params[OM_QCONV_P_TILE_M], tn = task->params[OM_QCONV_P_TILE_N];
  const int64_t mt = rt_ceil_div(m, tm), nt = rt_ceil_div(g.c1out, tn);
  const rt_cpu_paths *cpu = rt_cpu();
  const rt_qconv_tile_fn tile = g.depthwise && cpu->qconv_dw_tile && !g.epi ? cpu->qconv_dw_tile
                                : cpu->qconv_tile                           ? cpu->qconv_tile
                                                                            : rt_qconv_tile_c;
  uint64_t lo, hi;
  rt_block_range((uint64_t)(n * mt * nt), task->block_dim, block, &lo, &hi);
  for (uint64_t t = lo; t < hi; t++) {
    const int64_t img = (int64_t)t / (mt * nt), mi = (int64_t)t / nt % mt, ni = (int64_t)t % nt;
    const int64_t p0 = mi * tm, nb0 = ni * tn;
    tile(&g, img, p0, p0 + tm < m ? p0 + tm : m, nb0, nb0 + tn < g.c1out ? nb0 + tn : g.c1out);
  }
}

/* The residual's params (om_tasks.h), all 0 without r. */
static omrt_status check_residual(const rt_chk *c, const om_tensor *r, const om_tensor *y) {
  static const int slot[6] = {OM_QCONV_P_R_OP,    OM_QCONV_P_R_ZP,    OM_QCONV_P_O_ZP,
                              OM_QCONV_P_C_SCALE, OM_QCONV_P_R_SCALE, OM_QCONV_P_O_SCALE};
  static const char *const name[6] = {"r_op", "r_zp", "o_zp", "c_scale", "r_scale", "o_scale"};
  const int32_t *q = c->task->params;
  for (int k = 0; k < 6 && !r; k++)
    if (q[slot[k]])
      return rt_chk_fail(c, "params[%d] %s = %d without a residual, expected 0", slot[k], name[k],
                         q[slot[k]]);
  if (!r) return OMRT_OK;
  if (q[OM_QCONV_P_R_OP] != 0 && q[OM_QCONV_P_R_OP] != 1)
    return rt_chk_fail(c, "params[%d] r_op = %d (0 add, 1 mul)", OM_QCONV_P_R_OP, q[OM_QCONV_P_R_OP]);
  for (int k = 3; k < 6; k++) { /* the scales */
    const float s = rt_param_f32(q[slot[k]]);
    if (!(s > 0.0f) || s > 3.4028235e38f)
      return rt_chk_fail(c, "params[%d] %s = %g is not a finite scale > 0", slot[k], name[k], (double)s);
  }
  int32_t rlo, rhi, ylo, yhi;
  q_range((int)r->dtype, &rlo, &rhi), q_range((int)y->dtype, &ylo, &yhi);
  const int32_t rzp = q[OM_QCONV_P_R_ZP], ozp = q[OM_QCONV_P_O_ZP];
  if (rzp < rlo || rzp > rhi || ozp < ylo || ozp > yhi)
    return rt_chk_fail(c, "params r_zp %d (within %d..%d) or o_zp %d (within %d..%d) out of range", rzp, rlo,
                       rhi, ozp, ylo, yhi);
  return OMRT_OK;
}

/* The run-time x zero point form (format 2.15, om_tasks_cube.h): u8 x and
 * y f32 or i32, both NC1HWC0; scale of 1 or Cout elements; x_zp [1]; fbias
 * [C1out*16] or none; r none; the clamp's params. */
static omrt_status check_dyn(const rt_chk *c, const om_tensor *x, const om_tensor *mu, const om_tensor *y) {
  const int32_t *q = c->task->params;
  const om_tensor *z, *fb, *r;
  omrt_status st;
  if ((st = rt_chk_tensor_of(c, OM_QCONV_T_R, "r", 1, LAYOUT_ND, -1, RT_DT(DT_UINT8), &r)) ||
      (st = rt_chk_tensor_of(c, OM_QCONV_T_X_ZP, "x_zp", 0, LAYOUT_ND, -1, RT_DT(DT_UINT8), &z)) ||
      (st = rt_chk_tensor_of(c, OM_QCONV_T_FBIAS, "fbias", 1, LAYOUT_ND, 1, RT_DT(DT_FLOAT32), &fb)))
    return st;
  const int64_t cout = y->layout == LAYOUT_ND ? y->dims[3] : y->dims[1], c16 = rt_ceil_div(cout, C0) * C0;
  if (r || x->dtype != DT_UINT8 || x->layout != LAYOUT_NC1HWC0 || y->layout != LAYOUT_NC1HWC0 ||
      rt_elements(z) != 1 || (fb && fb->dims[0] != c16) || (y->dtype == DT_INT32 && fb))
    return rt_chk_fail(c,
                       "a run-time x zero point takes u8 x and f32 / i32 y NC1HWC0, x_zp of one element, "
                       "fbias [%lld] or none (none with i32 y), no r",
                       (long long)c16);
  if (rt_elements(mu) != 1 && rt_elements(mu) != (uint64_t)cout)
    return rt_chk_fail(c, "scale has %llu elements, expected 1 or %lld", (unsigned long long)rt_elements(mu),
                       (long long)cout);
  static const int zero[8] = {OM_QCONV_P_X_ZP,     OM_QCONV_P_Y_ZP, OM_QCONV_P_LO,      OM_QCONV_P_HI,
                              OM_QCONV_P_X_SIGNED, OM_QCONV_P_R_ZP, OM_QCONV_P_O_SCALE, OM_QCONV_P_O_ZP};
  for (int k = 0; k < 8; k++)
    if (q[zero[k]])
      return rt_chk_fail(c, "params[%d] = %d, expected 0 with a run-time x zero point", zero[k], q[zero[k]]);
  const int fc = q[OM_QCONV_P_F_CLAMP];
  const float lo = rt_param_f32(q[OM_QCONV_P_F_LO]), hi = rt_param_f32(q[OM_QCONV_P_F_HI]);
  if (fc < 0 || fc > 3 || (y->dtype == DT_INT32 && fc) || lo != lo || hi != hi || (fc == 3 && lo > hi) ||
      (!(fc & 1) && q[OM_QCONV_P_F_LO]) || (!(fc & 2) && q[OM_QCONV_P_F_HI]))
    return rt_chk_fail(
        c, "params[%d] f_clamp %d (0..3, 0 for i32 y), f_lo %g, f_hi %g (not NaN, lo <= hi, 0 unused)",
        OM_QCONV_P_F_CLAMP, fc, (double)lo, (double)hi);
  return OMRT_OK;
}

omrt_status rt_qconv_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "QCONV2D"};
  const om_tensor *x, *w, *b, *mu, *y, *r = NULL;
  const uint32_t i8 = RT_DT(DT_UINT8) | RT_DT(DT_INT8);
  const int dyn = task->ntensors == OM_QCONV_NTENSORS_DYN;
  omrt_status st;
  if (task->ntensors != OM_QCONV_NTENSORS && task->ntensors != OM_QCONV_NTENSORS_R && !dyn)
    return rt_chk_fail(&c, "ntensors = %u, expected %d, %d (with a residual) or %d (a run-time x zero point)",
                       task->ntensors, OM_QCONV_NTENSORS, OM_QCONV_NTENSORS_R, OM_QCONV_NTENSORS_DYN);
  if ((st = rt_chk_tensor_of(&c, OM_QCONV_T_X, "x", 0, RT_LAYOUTS_ND_NC1HWC0, 4, i8, &x)) ||
      (st = rt_chk_tensor_of(&c, OM_QCONV_T_W, "w", 0, LAYOUT_ND, 4, RT_DT(DT_INT8), &w)) ||
      (st = rt_chk_tensor_of(&c, OM_QCONV_T_BIAS, "bias", 0, LAYOUT_ND, 1, RT_DT(DT_INT32), &b)) ||
      (st = rt_chk_tensor_of(&c, OM_QCONV_T_MULT, "mult", 0, LAYOUT_ND, dyn ? -1 : 1, RT_DT(DT_FLOAT32),
                             &mu)) ||
      (st = rt_chk_tensor_of(&c, OM_QCONV_T_Y, "y", 0, RT_LAYOUTS_ND_NC1HWC0, 4,
                             i8 | RT_DT(DT_FLOAT32) | (dyn ? RT_DT(DT_INT32) : 0), &y)))
    return st;
  const int32_t *q = task->params;
  if (dyn && (st = check_dyn(&c, x, mu, y))) return st;
  if (y->dtype == DT_FLOAT32 && !dyn &&
      (task->ntensors == OM_QCONV_NTENSORS_R || q[OM_QCONV_P_Y_ZP] || q[OM_QCONV_P_LO] || q[OM_QCONV_P_HI]))
    return rt_chk_fail(&c, "an f32 y takes no residual and y_zp, lo, hi 0 (%d, %d, %d)", q[OM_QCONV_P_Y_ZP],
                       q[OM_QCONV_P_LO], q[OM_QCONV_P_HI]);
  if (task->ntensors == OM_QCONV_NTENSORS_R &&
      ((st = rt_chk_tensor_of(&c, OM_QCONV_T_R, "r", 0, RT_LAYOUTS_ND_NC1HWC0, 4, i8, &r)) ||
       (st = rt_chk_same_dims(&c, "r", r, "y", y))))
    return st;
  const int nhwc = x->layout == LAYOUT_ND; /* format 2.11: x, y and r NHWC [N, H, W, C] */
  if ((y->layout == LAYOUT_ND) != nhwc || (r && r->layout != y->layout))
    return rt_chk_fail(&c, "x, y and r must all be NC1HWC0 or all ND (NHWC): x %s, y %s, r %s",
                       layout_name((int)x->layout), layout_name((int)y->layout),
                       r ? layout_name((int)r->layout) : "none");
  if (nhwc && (x->dims[3] % C0 || y->dims[3] % C0 || q[OM_QCONV_P_GROUPS] != 1))
    return rt_chk_fail(
        &c, "NHWC x [.., %lld] and y [.., %lld] need channels in multiples of 16 and groups 1 (%d)",
        (long long)x->dims[3], (long long)y->dims[3], q[OM_QCONV_P_GROUPS]);
  const om_tensor xv = nchw_view(x), yv = nchw_view(y);
  x = &xv, y = &yv;
  if (!dyn && (st = check_residual(&c, r, y))) return st;
  rt_conv_params p;
  rt_conv_params_read(task, &p);
  p.act = OM_ACT_NONE; /* slots 10..12 are the residual's */
  if ((st = rt_chk_conv_params(&c, &p, x, y->dims[1], y))) return st;
  const int32_t groups = q[OM_QCONV_P_GROUPS], xs = q[OM_QCONV_P_X_SIGNED];
  if (groups < 1 || x->dims[1] % groups || y->dims[1] % groups)
    return rt_chk_fail(&c, "params[%d] groups = %d does not divide Cin %lld and Cout %lld", OM_QCONV_P_GROUPS,
                       groups, (long long)x->dims[1], (long long)y->dims[1]);
  if (xs != (x->dtype == DT_INT8))
    return rt_chk_fail(&c, "params[%d] x_signed = %d, x dtype %u", OM_QCONV_P_X_SIGNED, xs, x->dtype);
  int32_t ylo, yhi, xzp = q[OM_QCONV_P_X_ZP], yzp = q[OM_QCONV_P_Y_ZP], lo = q[OM_QCONV_P_LO],
                    hi = q[OM_QCONV_P_HI];
  q_range((int)y->dtype, &ylo, &yhi);
  if (xzp < 0 || xzp > 255 || yzp < ylo || yzp > yhi || lo < ylo || hi > yhi || lo > hi)
    return rt_chk_fail(&c, "x_zp %d (0..255), y_zp %d, lo %d, hi %d (lo <= hi, within %d..%d)", xzp, yzp, lo,
                       hi, ylo, yhi);
  const int64_t gd[5] = {groups, y->dims[1] / groups, x->dims[1] / groups, p.kh, p.kw};
  convg_geom cg;
  if (convg_init(gd, &cg)) return rt_chk_fail(&c, "groups %d: channel counts out of range", groups);
  int64_t kbmax = 0, c1out = rt_ceil_div(y->dims[1], C0);
  for (int64_t nb = 0; nb < c1out; nb++) {
    int64_t blo, bhi;
    convg_block_range(&cg, nb, &blo, &bhi);
    if (bhi - blo > kbmax) kbmax = bhi - blo;
  }
  const int dw = groups == x->dims[1] && groups == y->dims[1]; /* depthwise: the diagonal packing */
  const int64_t kg = (int64_t)p.kh * p.kw * kbmax * 4, k1 = dw ? (int64_t)p.kh * p.kw : kg, k3 = dw ? 1 : 4;
  if (w->dims[0] != c1out || w->dims[1] != k1 || w->dims[2] != C0 || w->dims[3] != k3)
    return rt_chk_fail(&c, "w dims [%lld, %lld, %lld, %lld], expected [%lld, %lld, 16, %lld]",
                       (long long)w->dims[0], (long long)w->dims[1], (long long)w->dims[2],
                       (long long)w->dims[3], (long long)c1out, (long long)k1, (long long)k3);
  if (kg * 4 > OM_QCONV_MAX_K)
    return rt_chk_fail(&c, "K = %lld is past %d, QCONV2D's int32 range", (long long)(kg * 4), OM_QCONV_MAX_K);
  if (b->dims[0] != c1out * C0 || (!dyn && mu->dims[0] != c1out * C0))
    return rt_chk_fail(&c, "bias and mult have %lld and %llu elements, expected %lld", (long long)b->dims[0],
                       (unsigned long long)rt_elements(mu), (long long)(c1out * C0));
  const int32_t tm = q[OM_QCONV_P_TILE_M], tn = q[OM_QCONV_P_TILE_N];
  if (tm < 1 || tn < 1) return rt_chk_fail(&c, "tile_m %d and tile_n %d must be >= 1", tm, tn);
  const uint64_t tiles = (uint64_t)y->dims[0] * (uint64_t)rt_ceil_div(y->dims[2] * y->dims[3], tm) *
                         (uint64_t)rt_ceil_div(c1out, tn);
  return rt_chk_block_dim(&c, tiles, "tiles");
}
