/* kernels_vector.c - the vector-unit task kinds: TRANSDATA, DWCONV, POOL,
 * COPY_SLICE (contracts in om_format.h, block units in kernels.h).
 * Elementwise work is VPROG (vprog_exec.c); SOFTMAX and LAYERNORM are
 * kernels_norm.c.
 *
 * DWCONV stages each channel block's weights in the UB as f32 (checked at load
 * to fit: KH*KW*16*4 bytes).
 *
 * Every kernel reads f16 or f32, computes in f32 and writes its output dtype
 * (f16 rounded to nearest even). NC1HWC0 kernels work on whole 16-lane
 * channel groups, the innermost loop over the lanes of C0, and keep padding
 * lanes (channels >= C) at zero. Contiguous runs are converted in chunks
 * through a small f32 buffer on the stack; nothing here allocates.
 *
 * This is the portable path: DWCONV, POOL, TRANSDATA and dtype
 * conversions first offer their work to rt_cpu()'s x86 paths
 * (kernels_vector_x86.c, dwconv_x86.inc), which decline (return 0) what
 * they do not handle.
 */
#include "common/dtype_cvt.h"
#include "runtime/epilogue.h"
#include "runtime/kernels.h"

#include <math.h>

enum { CHUNK = 256 }; /* elements converted per step on contiguous paths */

/* n elements from src[si..] (dtype sd) to dst[di..] (dtype dd). */
static void convert_run(void *dst, int dd, size_t di, const void *src, int sd, size_t si, size_t n) {
  if (dd == sd) {
    size_t es = dtype_size(dd);
    memmove((uint8_t *)dst + di * es, (const uint8_t *)src + si * es, n * es);
    return;
  }
  const rt_cpu_paths *cpu = rt_cpu();
  if (cpu->convert && cpu->convert(dst, dd, di, src, sd, si, n)) return;
  float buf[CHUNK];
  for (size_t i = 0; i < n; i += CHUNK) {
    size_t k = n - i < CHUNK ? n - i : CHUNK;
    rt_load_f32(buf, src, sd, si + i, k);
    rt_store_f32(dst, dd, di + i, buf, k);
  }
}

/* --- TRANSDATA */

/* channels_last: between NHWC (ND [N, H, W, C]) and NC1HWC0 [N, C, H, W],
 * dst rows [lo, hi): a pixel's C channels are contiguous on the NHWC side,
 * so each pixel is one run of min(16, C - c1*16) channels per channel
 * block, converted with convert_run (vectorized by the x86 path). */
static void transdata_channels_last(const om_tensor *s, const om_tensor *d, const void *sp, void *dp,
                                    uint64_t lo, uint64_t hi) {
  const int sd = (int)s->dtype, dd = (int)d->dtype;
  if (d->layout == LAYOUT_NC1HWC0) { /* rows (n, c1, h) of W*16 */
    const int64_t c = d->dims[1], h = d->dims[2], w = d->dims[3], c1 = rt_ceil_div(c, C0);
    for (uint64_t row = lo; row < hi; row++) {
      const int64_t ih = (int64_t)row % h, cb = (int64_t)row / h % c1, in = (int64_t)row / h / c1;
      const int64_t run = c - cb * C0 < C0 ? c - cb * C0 : C0;
      size_t out = (size_t)row * (size_t)w * C0, src = (size_t)(((in * h + ih) * w) * c + cb * C0);
      for (int64_t iw = 0; iw < w; iw++, out += C0, src += (size_t)c) {
        convert_run(dp, dd, out, sp, sd, src, (size_t)run);
        if (run < C0)
          memset((uint8_t *)dp + (out + (size_t)run) * dtype_size(dd), 0,
                 (size_t)(C0 - run) * dtype_size(dd));
      }
    }
  } else { /* NC1HWC0 -> NHWC: rows (n, h) of W*C */
    const int64_t c = s->dims[1], h = s->dims[2], w = s->dims[3], c1 = rt_ceil_div(c, C0);
    for (uint64_t row = lo; row < hi; row++) {
      const int64_t ih = (int64_t)row % h, in = (int64_t)row / h;
      for (int64_t cb = 0; cb < c1; cb++) {
        const int64_t run = c - cb * C0 < C0 ? c - cb * C0 : C0;
        size_t src = (size_t)(((in * c1 + cb) * h + ih) * w) * C0,
               out = (size_t)row * (size_t)(w * c) + (size_t)(cb * C0);
        for (int64_t iw = 0; iw < w; iw++, src += C0, out += (size_t)c)
          convert_run(dp, dd, out, sp, sd, src, (size_t)run);
      }
    }
  }
}

void rt_td_geom_init(const om_tensor *t, rt_td_geom *g) {
  const int r5 = t->rank == 5, o = r5;
  *g = (rt_td_geom){.n = t->dims[0],
                    .c = t->dims[1],
                    .c1 = rt_ceil_div(t->dims[1], C0),
                    .d = r5 ? t->dims[2] : 1,
                    .h = t->dims[2 + o],
                    .w = t->dims[3 + o]};
  g->cstride = (size_t)(g->d * g->h * g->w);
}

/* u8 / i8 ND -> 5HD, dst rows [lo, hi) (n, d, c1, h) of W*16: the bytes
 * move, padding lanes 0. Each pixel's 16 bytes are gathered into two
 * little-endian words and stored once (an RGB input: 3 loads, 2 stores a
 * pixel, instead of clearing the row and storing each byte). */
static void transdata_bytes_to_5hd(const rt_td_geom *g, const uint8_t *sp, uint8_t *dp, uint64_t lo,
                                   uint64_t hi) {
  for (uint64_t row = lo; row < hi; row++) {
    int64_t ih = (int64_t)row % g->h, cb = (int64_t)row / g->h % g->c1, img = (int64_t)row / g->h / g->c1;
    uint8_t *out = dp + (size_t)row * (size_t)g->w * C0;
    const uint8_t *base = sp + rt_td_nd_base(g, img) + (size_t)(ih * g->w) + (size_t)(cb * C0) * g->cstride;
    const int64_t run = g->c - cb * C0 < C0 ? g->c - cb * C0 : C0;
    for (int64_t iw = 0; iw < g->w; iw++) {
      uint64_t word[2] = {0, 0};
      for (int64_t j = 0; j < run; j++)
        word[j >> 3] |= (uint64_t)base[(size_t)j * g->cstride + (size_t)iw] << (8 * (j & 7));
      memcpy(out + (size_t)iw * C0, word, C0);
    }
  }
}

/* 1 when a TRANSDATA is a Convert (om_tasks.h): both sides ND, and dtypes
 * other than the f32 / f16 pairs and one byte-sized dtype on both sides. */
static int rt_td_converts(const om_tensor *s, const om_tensor *d) {
  const int sd = (int)s->dtype, dd = (int)d->dtype;
  const int fl = (sd == DT_FLOAT32 || sd == DT_FLOAT16) && (dd == DT_FLOAT32 || dd == DT_FLOAT16);
  return s->layout == LAYOUT_ND && d->layout == LAYOUT_ND && !fl && !(sd == dd && dtype_size(sd) == 1);
}

void rt_transdata_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  const om_tensor *s = args->desc[OM_TRANSDATA_T_SRC], *d = args->desc[OM_TRANSDATA_T_DST];
  const void *sp = args->data[OM_TRANSDATA_T_SRC];
  void *dp = args->data[OM_TRANSDATA_T_DST];
  const int sd = (int)s->dtype, dd = (int)d->dtype;
  uint64_t lo, hi;
  if (task->params[OM_TRANSDATA_P_CHANNELS_LAST]) {
    uint64_t rows = d->layout == LAYOUT_NC1HWC0
                        ? (uint64_t)(d->dims[0] * rt_ceil_div(d->dims[1], C0) * d->dims[2])
                        : (uint64_t)(d->dims[0] * d->dims[1]);
    rt_block_range(rows, task->block_dim, block, &lo, &hi);
    transdata_channels_last(s, d, sp, dp, lo, hi);
    return;
  }
  if (rt_td_converts(s, d)) { /* a Convert: groups of 4 elements, whole bytes of a packed side */
    const uint64_t n = rt_elements(d);
    rt_block_range((n + 3) / 4, task->block_dim, block, &lo, &hi);
    lo *= 4, hi = hi * 4 < n ? hi * 4 : n;
    if (lo < hi)
      cvt_run(dp, dd, (size_t)lo, sp, sd, (size_t)lo, (size_t)(hi - lo),
              task->params[OM_TRANSDATA_P_SATURATE], task->params[OM_TRANSDATA_P_ROUND_MODE]);
    return;
  }
  if (s->layout == d->layout) { /* ND -> ND or NC1HWC0 -> NC1HWC0: element copy */
    rt_block_range(rt_physical_elements(d), task->block_dim, block, &lo, &hi);
    convert_run(dp, dd, lo, sp, sd, lo, hi - lo);
    return;
  }
  rt_td_geom g;
  rt_td_geom_init(d, &g);
  const int64_t c = g.c, h = g.h, w = g.w, c1 = g.c1, dep = g.d;
  const int bytes = dtype_size(sd) == 1; /* u8 / i8 (one dtype on both sides): the bytes move */
  if (d->layout != LAYOUT_ND) {          /* rows (n, d, c1, h) of W*16 */
    rt_block_range((uint64_t)(g.n * dep * c1 * h), task->block_dim, block, &lo, &hi);
    if (bytes) {
      transdata_bytes_to_5hd(&g, sp, dp, lo, hi);
      return;
    }
    const rt_cpu_paths *cpu = rt_cpu();
    if (cpu->transdata && cpu->transdata(task, args, lo, hi)) return;
    for (uint64_t row = lo; row < hi; row++) {
      int64_t ih = (int64_t)row % h, cb = (int64_t)row / h % c1, img = (int64_t)row / h / c1;
      size_t out = (size_t)row * (size_t)w * C0, base = rt_td_nd_base(&g, img) + (size_t)(ih * w);
      for (int64_t iw = 0; iw < w; iw++, out += C0) {
        float v[C0];
        for (int j = 0; j < C0; j++) {
          int64_t ch = cb * C0 + j;
          v[j] = ch < c ? rt_get(sp, sd, base + (size_t)ch * g.cstride + (size_t)iw) : 0.0f;
        }
        rt_store_f32(dp, dd, out, v, C0);
      }
    }
  } else { /* NC1HWC0 / NDC1HWC0 -> ND: rows (n, c, d, h) of W */
    rt_block_range((uint64_t)(g.n * c * dep * h), task->block_dim, block, &lo, &hi);
    const rt_cpu_paths *cpu = rt_cpu();
    if (!bytes && cpu->transdata && cpu->transdata(task, args, lo, hi)) return;
    for (uint64_t row = lo; row < hi; row++) {
      int64_t ih = (int64_t)row % h, id = (int64_t)row / h % dep, ch = (int64_t)row / h / dep % c,
              in = (int64_t)row / h / dep / c;
      size_t src = (size_t)(((((in * dep + id) * c1 + ch / C0) * h + ih) * w) * C0 + ch % C0);
      if (bytes)
        for (int64_t iw = 0; iw < w; iw++)
          ((uint8_t *)dp)[(size_t)row * (size_t)w + (size_t)iw] =
              ((const uint8_t *)sp)[src + (size_t)iw * C0];
      else
        for (int64_t iw = 0; iw < w; iw++)
          rt_put(dp, dd, (size_t)row * (size_t)w + (size_t)iw, rt_get(sp, sd, src + (size_t)iw * C0));
    }
  }
}

omrt_status rt_transdata_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "TRANSDATA"};
  const om_tensor *s, *d;
  omrt_status st;
  const uint32_t copy = RT_DT(DT_FLOAT16) | RT_DT(DT_FLOAT32) | RT_DT(DT_UINT8) | RT_DT(DT_INT8);
  uint32_t dts = 0; /* a Convert's (between ND tensors): every dtype but string */
  for (int dt = 1; dt < 32; dt++)
    if (dtype_bits(dt)) dts |= RT_DT(dt);
  if ((st = rt_chk_ntensors(&c, OM_TRANSDATA_NTENSORS)) ||
      (st = rt_chk_tensor_of(&c, OM_TRANSDATA_T_SRC, "src", 0, RT_LAYOUTS_ACT, -1, dts, &s)) ||
      (st = rt_chk_tensor_of(&c, OM_TRANSDATA_T_DST, "dst", 0, RT_LAYOUTS_ACT, -1, dts, &d)))
    return st;
  if (!rt_td_converts(s, d) && (!(copy & RT_DT(s->dtype)) || !(copy & RT_DT(d->dtype))))
    return rt_chk_fail(&c, "src dtype %u, dst dtype %u: only a copy between ND tensors converts those",
                       s->dtype, d->dtype);
  if (!rt_td_converts(s, d) && (dtype_size((int)s->dtype) == 1 || dtype_size((int)d->dtype) == 1) &&
      s->dtype != d->dtype)
    return rt_chk_fail(&c, "src dtype %u, dst dtype %u: u8 and i8 move as they are, to the same dtype",
                       s->dtype, d->dtype);
  int32_t sat = task->params[OM_TRANSDATA_P_SATURATE], rm = task->params[OM_TRANSDATA_P_ROUND_MODE];
  if (sat != 0 && sat != 1)
    return rt_chk_fail(&c, "params[%d] saturate = %d, expected 0 or 1", OM_TRANSDATA_P_SATURATE, sat);
  if (rm < CVT_ROUND_UP || rm > CVT_ROUND_NEAREST)
    return rt_chk_fail(&c, "params[%d] round_mode = %d, expected 0..2", OM_TRANSDATA_P_ROUND_MODE, rm);
  if (rt_elements(s) != rt_elements(d))
    return rt_chk_fail(&c, "src has %llu elements, dst %llu", (unsigned long long)rt_elements(s),
                       (unsigned long long)rt_elements(d));
  int32_t cl = task->params[OM_TRANSDATA_P_CHANNELS_LAST];
  if (cl != 0 && cl != 1)
    return rt_chk_fail(&c, "params[%d] channels_last = %d, expected 0 or 1", OM_TRANSDATA_P_CHANNELS_LAST,
                       cl);
  if (cl) { /* one side NHWC (ND [N, H, W, C]), the other NC1HWC0 [N, C, H, W] */
    const om_tensor *nd = s->layout == LAYOUT_ND ? s : d, *fz = nd == s ? d : s;
    if (s->rank != 4 || d->rank != 4 || nd->layout != LAYOUT_ND || fz->layout != LAYOUT_NC1HWC0)
      return rt_chk_fail(&c, "channels_last needs an ND [N, H, W, C] and an NC1HWC0 side (src %s, dst %s)",
                         layout_name((int)s->layout), layout_name((int)d->layout));
    if (nd->dims[0] != fz->dims[0] || nd->dims[1] != fz->dims[2] || nd->dims[2] != fz->dims[3] ||
        nd->dims[3] != fz->dims[1])
      return rt_chk_fail(&c, "channels_last: the ND side's dims are not [N, H, W, C] of the NC1HWC0 side's");
    uint64_t rows = d == fz
                        ? (uint64_t)d->dims[0] * (uint64_t)rt_ceil_div(d->dims[1], C0) * (uint64_t)d->dims[2]
                        : (uint64_t)d->dims[0] * (uint64_t)d->dims[1];
    return rt_chk_block_dim(&c, rows, "dst rows");
  }
  if (rt_td_converts(s, d)) return rt_chk_block_dim(&c, (rt_elements(d) + 3) / 4, "groups of 4 elements");
  if (s->layout == LAYOUT_ND && d->layout == LAYOUT_ND)
    return rt_chk_block_dim(&c, rt_elements(d), "elements");
  if (s->rank != d->rank || (s->rank != 4 && s->rank != 5))
    return rt_chk_fail(&c, "a layout change needs rank 4 or 5 on both sides (src %u, dst %u)", s->rank,
                       d->rank);
  const int want = s->rank == 5 ? LAYOUT_NDC1HWC0 : LAYOUT_NC1HWC0;
  if ((s->layout != LAYOUT_ND && s->layout != (uint32_t)want) ||
      (d->layout != LAYOUT_ND && d->layout != (uint32_t)want))
    return rt_chk_fail(&c, "layouts %s -> %s at rank %u: expected ND or %s on each side",
                       layout_name((int)s->layout), layout_name((int)d->layout), s->rank, layout_name(want));
  if ((st = rt_chk_same_dims(&c, "src", s, "dst", d))) return st;
  if (s->layout == d->layout) return rt_chk_block_dim(&c, rt_physical_elements(d), "elements");
  uint64_t rows = 1;
  for (uint32_t k = 0; k + 1 < d->rank; k++)
    rows *= (uint64_t)(k == 1 && d->layout != LAYOUT_ND ? rt_ceil_div(d->dims[1], C0) : d->dims[k]);
  return rt_chk_block_dim(&c, rows, "dst rows");
}

/* --- DWCONV */

/* Planes (image, channel block) [lo, hi) on the portable path. */
static void dwconv_planes(const om_task *task, const rt_args *args, uint64_t lo, uint64_t hi, rt_core *core) {
  const om_tensor *x = args->desc[OM_CONV_T_X], *w = args->desc[OM_CONV_T_W];
  const om_tensor *res = args->desc[OM_CONV_T_RESIDUAL], *y = args->desc[OM_CONV_T_Y];
  const void *xd = args->data[OM_CONV_T_X], *wd = args->data[OM_CONV_T_W],
             *rd = args->data[OM_CONV_T_RESIDUAL];
  const float *bd = args->data[OM_CONV_T_BIAS];
  void *yd = args->data[OM_CONV_T_Y];
  rt_conv_params p;
  rt_conv_params_read(task, &p);
  const int xt = (int)x->dtype, wt = (int)w->dtype, yt = (int)y->dtype;
  const int64_t c = x->dims[1], c1 = rt_ceil_div(c, C0), h = x->dims[2], wi = x->dims[3];
  const int64_t ho = y->dims[2], wo = y->dims[3], taps = (int64_t)p.kh * p.kw;
  for (uint64_t unit = lo; unit < hi; unit++) {
    int64_t cb = (int64_t)unit % c1;
    const size_t xplane = (size_t)unit * (size_t)(h * wi) * C0;
    float *wf = (float *)core->ub; /* the plane's weights in f32, [tap][16] */
    rt_load_f32(wf, wd, wt, (size_t)(cb * taps) * C0, (size_t)taps * C0);
    float bias[C0], keep[C0];
    for (int j = 0; j < C0; j++) {
      int64_t ch = cb * C0 + j;
      keep[j] = ch < c ? 1.0f : 0.0f;
      bias[j] = bd && ch < c ? bd[ch] : 0.0f;
    }
    size_t at = (size_t)unit * (size_t)(ho * wo) * C0;
    for (int64_t oh = 0; oh < ho; oh++) {
      for (int64_t ow = 0; ow < wo; ow++, at += C0) {
        float acc[C0], xv[C0];
        memcpy(acc, bias, sizeof acc);
        for (int64_t i = 0; i < p.kh; i++) {
          int64_t ih = oh * p.sh - p.pt + i * p.dh;
          if (ih < 0 || ih >= h) continue;
          for (int64_t j = 0; j < p.kw; j++) {
            int64_t iw = ow * p.sw - p.pl + j * p.dw;
            if (iw < 0 || iw >= wi) continue;
            rt_load_f32(xv, xd, xt, xplane + (size_t)(ih * wi + iw) * C0, C0);
            const float *wv = wf + (i * p.kw + j) * C0;
            for (int l = 0; l < C0; l++)
              acc[l] += xv[l] * wv[l];
          }
        }
        if (rd) {
          rt_load_f32(xv, rd, (int)res->dtype, at, C0);
          for (int l = 0; l < C0; l++)
            acc[l] += xv[l];
        }
        for (int l = 0; l < C0; l++)
          acc[l] = keep[l] != 0.0f ? rt_act(acc[l], p.act, p.clip_min, p.clip_max) : 0.0f;
        rt_store_f32(yd, yt, at, acc, C0);
      }
    }
  }
}

/* A block's planes; with an epilogue program (epilogue.c) plane by plane,
 * each followed by the program over it while it is hot. */
void rt_dwconv_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  const om_tensor *y = args->desc[OM_CONV_T_Y];
  const int64_t c1 = rt_ceil_div(y->dims[1], C0);
  const rt_vplan *epi = args->aux;
  uint64_t lo, hi;
  rt_block_range((uint64_t)(y->dims[0] * c1), task->block_dim, block, &lo, &hi);
  const rt_cpu_paths *cpu = rt_cpu();
  if (!epi) {
    if (!cpu->dwconv || !cpu->dwconv(task, args, lo, hi, core)) dwconv_planes(task, args, lo, hi, core);
    return;
  }
  for (uint64_t unit = lo; unit < hi; unit++) {
    if (!cpu->dwconv || !cpu->dwconv(task, args, unit, unit + 1, core))
      dwconv_planes(task, args, unit, unit + 1, core);
    rt_epi_pixels(epi, task, args, (int64_t)unit / c1, 0, y->dims[2] * y->dims[3], (int64_t)unit % c1,
                  (int64_t)unit % c1 + 1, core);
  }
}

omrt_status rt_dwconv_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "DWCONV"};
  const om_tensor *x, *w, *bias, *res, *y;
  omrt_status s;
  if ((s = rt_chk_ntensors(&c, rt_epi_ntensors(task))) ||
      (s = rt_chk_tensor(&c, OM_CONV_T_X, "x", 0, LAYOUT_NC1HWC0, 4, 0, &x)) ||
      (s = rt_chk_tensor(&c, OM_CONV_T_W, "w", 0, LAYOUT_NC1HWC0, 4, 0, &w)) ||
      (s = rt_chk_tensor(&c, OM_CONV_T_BIAS, "bias", 1, LAYOUT_ND, 1, 1, &bias)) ||
      (s = rt_chk_tensor(&c, OM_CONV_T_RESIDUAL, "residual", 1, LAYOUT_NC1HWC0, 4, 0, &res)) ||
      (s = rt_chk_tensor(&c, OM_CONV_T_Y, "y", 0, LAYOUT_NC1HWC0, 4, 0, &y)))
    return s;
  rt_conv_params p;
  rt_conv_params_read(task, &p);
  if (w->dims[0] != 1 || w->dims[1] != x->dims[1] || w->dims[2] != p.kh || w->dims[3] != p.kw)
    return rt_chk_fail(&c, "w dims [%lld, %lld, %lld, %lld], expected [1, %lld, %d, %d]",
                       (long long)w->dims[0], (long long)w->dims[1], (long long)w->dims[2],
                       (long long)w->dims[3], (long long)x->dims[1], p.kh, p.kw);
  if ((s = rt_chk_conv_params(&c, &p, x, x->dims[1], y))) return s;
  if (bias && bias->dims[0] != x->dims[1])
    return rt_chk_fail(&c, "bias dims[0] = %lld, expected C %lld", (long long)bias->dims[0],
                       (long long)x->dims[1]);
  if (res && (s = rt_chk_same_dims(&c, "residual", res, "y", y))) return s;
  uint64_t ub = (uint64_t)p.kh * (uint64_t)p.kw * C0 * sizeof(float);
  if (ub > m->def->ub_bytes)
    return rt_chk_fail(&c, "kernel %dx%d needs %llu bytes of UB for its f32 weights, capacity %u", p.kh, p.kw,
                       (unsigned long long)ub, m->def->ub_bytes);
  return rt_chk_block_dim(&c, (uint64_t)x->dims[0] * (uint64_t)rt_ceil_div(x->dims[1], C0), "N*C1 planes");
}

/* --- POOL */

void rt_pool_geom_init(const om_task *task, const rt_args *args, rt_pool_geom *g) {
  const om_tensor *x = args->desc[OM_POOL_T_X], *y = args->desc[OM_POOL_T_Y];
  const int32_t *q = task->params;
  const int r3 = x->layout == LAYOUT_NDC1HWC0, o = r3; /* spatial dims from dims[2 + o] */
  *g = (rt_pool_geom){.c1 = rt_ceil_div(x->dims[1], C0),
                      .d = r3 ? x->dims[2] : 1,
                      .dout = r3 ? y->dims[2] : 1,
                      .h = x->dims[2 + o],
                      .w = x->dims[3 + o],
                      .ho = y->dims[2 + o],
                      .wo = y->dims[3 + o],
                      .kd = r3 ? q[OM_POOL_P_KD] : 1,
                      .sd = r3 ? q[OM_POOL_P_STRIDE_D] : 1,
                      .pf = r3 ? q[OM_POOL_P_PAD_FRONT] : 0,
                      .pbk = r3 ? q[OM_POOL_P_PAD_BACK] : 0,
                      .kh = q[OM_POOL_P_KH],
                      .kw = q[OM_POOL_P_KW],
                      .sh = q[OM_POOL_P_STRIDE_H],
                      .sw = q[OM_POOL_P_STRIDE_W],
                      .pt = q[OM_POOL_P_PAD_TOP],
                      .pl = q[OM_POOL_P_PAD_LEFT],
                      .pb = q[OM_POOL_P_PAD_BOTTOM],
                      .pr = q[OM_POOL_P_PAD_RIGHT],
                      .is_max = q[OM_POOL_P_MODE] == 0,
                      .include_pad = q[OM_POOL_P_COUNT_INCLUDE_PAD] != 0};
}

void rt_pool_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  const om_tensor *x = args->desc[OM_POOL_T_X], *y = args->desc[OM_POOL_T_Y];
  const void *xd = args->data[OM_POOL_T_X];
  void *yd = args->data[OM_POOL_T_Y];
  const int xt = (int)x->dtype, yt = (int)y->dtype;
  rt_pool_geom g;
  rt_pool_geom_init(task, args, &g);
  const int64_t h = g.h, w = g.w, ho = g.ho, wo = g.wo;
  uint64_t lo, hi;
  rt_block_range((uint64_t)(x->dims[0] * g.dout * g.c1), task->block_dim, block, &lo, &hi);
  if (xt == DT_UINT8 || xt == DT_INT8) {
    rt_pool_max8(args, &g, lo, hi);
    return;
  }
  const rt_cpu_paths *cpu = rt_cpu();
  if (cpu->pool && cpu->pool(task, args, lo, hi, core)) return;
  for (uint64_t unit = lo; unit < hi; unit++) {
    int64_t d0, pd1, id0, id1;
    rt_pool_depth(&g, unit, &d0, &pd1, &id0, &id1);
    size_t at = (size_t)unit * (size_t)(ho * wo) * C0;
    for (int64_t oh = 0; oh < ho; oh++) {
      int64_t h0 = oh * g.sh - g.pt, h1 = h0 + g.kh;
      int64_t ph1 = h1 < h + g.pb ? h1 : h + g.pb; /* padded extent for count_include_pad */
      int64_t ih0 = h0 < 0 ? 0 : h0, ih1 = h1 < h ? h1 : h;
      for (int64_t ow = 0; ow < wo; ow++, at += C0) {
        int64_t w0 = ow * g.sw - g.pl, w1 = w0 + g.kw;
        int64_t pw1 = w1 < w + g.pr ? w1 : w + g.pr;
        int64_t iw0 = w0 < 0 ? 0 : w0, iw1 = w1 < w ? w1 : w;
        float acc[C0], v[C0];
        for (int l = 0; l < C0; l++)
          acc[l] = g.is_max ? -INFINITY : 0.0f;
        for (int64_t id = id0; id < id1; id++) {
          const size_t xplane = rt_pool_xplane(&g, unit, id);
          for (int64_t ih = ih0; ih < ih1; ih++) {
            for (int64_t iw = iw0; iw < iw1; iw++) {
              rt_load_f32(v, xd, xt, xplane + (size_t)(ih * w + iw) * C0, C0);
              if (g.is_max)
                for (int l = 0; l < C0; l++)
                  acc[l] = v[l] > acc[l] ? v[l] : acc[l];
              else
                for (int l = 0; l < C0; l++)
                  acc[l] += v[l];
            }
          }
        }
        if (!g.is_max) {
          int64_t count =
              g.include_pad ? (pd1 - d0) * (ph1 - h0) * (pw1 - w0) : (id1 - id0) * (ih1 - ih0) * (iw1 - iw0);
          float inv = 1.0f / (float)count;
          for (int l = 0; l < C0; l++)
            acc[l] *= inv;
        }
        rt_store_f32(yd, yt, at, acc, C0);
      }
    }
  }
}

/* Pooled extent with floor and ceil rounding. */
static void pool_out(int64_t in, int64_t pa, int64_t pb, int64_t k, int64_t s, int64_t *fl, int64_t *ce) {
  int64_t span = in + pa + pb - k;
  *fl = span < 0 ? 0 : span / s + 1;
  *ce = span < 0 ? 0 : rt_ceil_div(span, s) + 1;
}

omrt_status rt_pool_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "POOL"};
  const om_tensor *x, *y;
  omrt_status s;
  const uint32_t fl = RT_DT(DT_FLOAT16) | RT_DT(DT_FLOAT32), i8 = RT_DT(DT_UINT8) | RT_DT(DT_INT8);
  if ((s = rt_chk_ntensors(&c, OM_POOL_NTENSORS)) ||
      (s = rt_chk_tensor_of(&c, OM_POOL_T_X, "x", 0, RT_LAYOUTS_5HD, -1, fl | i8, &x)))
    return s;
  const int r3 = x->layout == LAYOUT_NDC1HWC0, rank = r3 ? 5 : 4;
  if ((s = rt_chk_tensor_of(&c, OM_POOL_T_X, "x", 0, r3 ? LAYOUT_NDC1HWC0 : LAYOUT_NC1HWC0, rank, fl | i8,
                            &x)) ||
      (s = rt_chk_tensor_of(&c, OM_POOL_T_Y, "y", 0, (int)x->layout, rank, fl | i8, &y)))
    return s;
  const int x8 = (RT_DT(x->dtype) & i8) != 0;
  if ((x8 || (RT_DT(y->dtype) & i8)) && (y->dtype != x->dtype || task->params[OM_POOL_P_MODE] != 0))
    return rt_chk_fail(&c, "u8/i8 pooling is max with y of x's dtype (x dtype %u, y dtype %u, mode %d)",
                       x->dtype, y->dtype, task->params[OM_POOL_P_MODE]);
  static const char *const names[OM_POOL_NPARAMS] = {[OM_POOL_P_KH] = "kh",
                                                     [OM_POOL_P_KW] = "kw",
                                                     [OM_POOL_P_STRIDE_H] = "stride_h",
                                                     [OM_POOL_P_STRIDE_W] = "stride_w",
                                                     [OM_POOL_P_PAD_TOP] = "pad_top",
                                                     [OM_POOL_P_PAD_LEFT] = "pad_left",
                                                     [OM_POOL_P_PAD_BOTTOM] = "pad_bottom",
                                                     [OM_POOL_P_PAD_RIGHT] = "pad_right",
                                                     [OM_POOL_P_MODE] = "mode",
                                                     [OM_POOL_P_COUNT_INCLUDE_PAD] = "count_include_pad",
                                                     [OM_POOL_P_KD] = "kd",
                                                     [OM_POOL_P_STRIDE_D] = "stride_d",
                                                     [OM_POOL_P_PAD_FRONT] = "pad_front",
                                                     [OM_POOL_P_PAD_BACK] = "pad_back"};
  const int32_t *q = task->params;
  for (int k = 0; k < OM_POOL_NPARAMS; k++) { /* kernel and strides >= 1, pads >= 0, the flags 0|1 */
    int32_t lo = k < OM_POOL_P_PAD_TOP || k == OM_POOL_P_KD || k == OM_POOL_P_STRIDE_D ? 1 : 0,
            hi = k == OM_POOL_P_MODE || k == OM_POOL_P_COUNT_INCLUDE_PAD ? 1 : 65535;
    if (!r3 && k >= OM_POOL_P_KD) lo = hi = 0; /* 2-D: the depth window is 0 */
    if (q[k] < lo || q[k] > hi)
      return rt_chk_fail(&c, "params[%d] %s = %d, expected %d..%d", k, names[k], q[k], lo, hi);
  }
  const int32_t kh = q[OM_POOL_P_KH], kw = q[OM_POOL_P_KW], kd = r3 ? q[OM_POOL_P_KD] : 1;
  if (q[OM_POOL_P_PAD_TOP] >= kh || q[OM_POOL_P_PAD_BOTTOM] >= kh || q[OM_POOL_P_PAD_LEFT] >= kw ||
      q[OM_POOL_P_PAD_RIGHT] >= kw || q[OM_POOL_P_PAD_FRONT] >= kd || q[OM_POOL_P_PAD_BACK] >= kd)
    return rt_chk_fail(&c,
                       "pads (top %d, left %d, bottom %d, right %d, front %d, back %d) must be below the "
                       "kernel %dx%dx%d",
                       q[OM_POOL_P_PAD_TOP], q[OM_POOL_P_PAD_LEFT], q[OM_POOL_P_PAD_BOTTOM],
                       q[OM_POOL_P_PAD_RIGHT], q[OM_POOL_P_PAD_FRONT], q[OM_POOL_P_PAD_BACK], kd, kh, kw);
  for (int d = 0; d < rank; d++)
    if (x->dims[d] < 1) return rt_chk_fail(&c, "x dims[%d] = %lld, expected >= 1", d, (long long)x->dims[d]);
  if (y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1])
    return rt_chk_fail(&c, "y [%lld, %lld, ...] != x [%lld, %lld, ...] in N, C", (long long)y->dims[0],
                       (long long)y->dims[1], (long long)x->dims[0], (long long)x->dims[1]);
  for (int d = 2; d < rank; d++) { /* (D,) H, W: kernel, stride and the two pads of each */
    static const int kp[3] = {OM_POOL_P_KD, OM_POOL_P_KH, OM_POOL_P_KW},
                     sp[3] = {OM_POOL_P_STRIDE_D, OM_POOL_P_STRIDE_H, OM_POOL_P_STRIDE_W},
                     ap[3] = {OM_POOL_P_PAD_FRONT, OM_POOL_P_PAD_TOP, OM_POOL_P_PAD_LEFT},
                     bp[3] = {OM_POOL_P_PAD_BACK, OM_POOL_P_PAD_BOTTOM, OM_POOL_P_PAD_RIGHT};
    const int j = d - 2 + (r3 ? 0 : 1);
    int64_t in = x->dims[d], k = q[kp[j]], st = q[sp[j]], pa = q[ap[j]], pb = q[bp[j]], fl, ce;
    pool_out(in, pa, pb, k, st, &fl, &ce);
    int64_t out = y->dims[d];
    if (out < 1 || (out != fl && out != ce))
      return rt_chk_fail(&c,
                         "y dims[%d] = %lld, expected %lld (floor) or %lld (ceil) from input "
                         "%lld, kernel %lld, stride %lld, pads %lld,%lld",
                         d, (long long)out, (long long)fl, (long long)ce, (long long)in, (long long)k,
                         (long long)st, (long long)pa, (long long)pb);
    if ((out - 1) * st - pa >= in)
      return rt_chk_fail(&c, "y dims[%d] = %lld: the last window starts past the input (%lld)", d,
                         (long long)out, (long long)in);
  }
  uint64_t planes =
      (uint64_t)y->dims[0] * (uint64_t)rt_ceil_div(y->dims[1], C0) * (uint64_t)(r3 ? y->dims[2] : 1);
  return rt_chk_block_dim(&c, planes, r3 ? "N*Do*C1 planes" : "N*C1 planes");
}

/* --- COPY_SLICE */

/* The copy as an ND problem over the physical shape: `outer` runs of `run`
 * elements, the source runs contiguous, the destination runs `dstride`
 * apart starting at `dbase`. NC1HWC0 along axis 1 is only expressible this
 * way when whole channel blocks move (see copy_slice_channels). */
typedef struct slice_plan {
  uint64_t outer, run, dstride, dbase;
} slice_plan;

static int slice_plan_make(const om_tensor *x, const om_tensor *y, int64_t axis, int64_t off, slice_plan *p) {
  int64_t xd[MAX_RANK + 1], yd[MAX_RANK + 1];
  int rank = (int)x->rank;
  for (int d = 0; d < rank; d++)
    xd[d] = x->dims[d], yd[d] = y->dims[d];
  if (x->layout == LAYOUT_NC1HWC0) {
    if (axis == 1) {
      int64_t xc = x->dims[1], yc = y->dims[1];
      if (off % C0 != 0 || (xc % C0 != 0 && off + xc != yc)) return 0;
      off /= C0;
    }
    xd[1] = rt_ceil_div(x->dims[1], C0), yd[1] = rt_ceil_div(y->dims[1], C0);
    xd[4] = yd[4] = C0;
    rank = 5;
  }
  uint64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; d++)
    outer *= (uint64_t)xd[d];
  for (int d = (int)axis + 1; d < rank; d++)
    inner *= (uint64_t)xd[d];
  *p = (slice_plan){.outer = outer,
                    .run = (uint64_t)xd[axis] * inner,
                    .dstride = (uint64_t)yd[axis] * inner,
                    .dbase = (uint64_t)off * inner};
  return 1;
}

/* `lanes` lanes of every one of hw pixels from s to d (NC1HWC0 planes, es
 * bytes per element, both starting at their first lane). */
static void copy_lanes(uint8_t *d, const uint8_t *s, int64_t lanes, int64_t hw, size_t es) {
  const rt_cpu_paths *cpu = rt_cpu();
  if (es == 2 && cpu->copy_lanes16) {
    cpu->copy_lanes16((uint16_t *)d, (const uint16_t *)s, lanes, hw);
  } else if (es == 2) {
    uint16_t *dd = (uint16_t *)d;
    const uint16_t *ss = (const uint16_t *)s;
    for (int64_t p = 0; p < hw; p++, dd += C0, ss += C0)
      for (int64_t l = 0; l < lanes; l++)
        dd[l] = ss[l];
  } else {
    for (int64_t p = 0; p < hw; p++)
      memcpy(d + (size_t)(p * C0) * es, s + (size_t)(p * C0) * es, (size_t)lanes * es);
  }
}

/* NC1HWC0 along C with channel offsets inside a block, one dtype on both
 * sides: each destination channel block takes its lanes as at most two
 * runs (one per source block they come from), pixel by pixel; lanes past
 * y's channels (the last slice) are zeroed. */
static void copy_slice_runs(const rt_args *args, int64_t off, uint64_t lo, uint64_t hi) {
  const om_tensor *x = args->desc[OM_COPY_SLICE_T_X], *y = args->desc[OM_COPY_SLICE_T_Y];
  const uint8_t *xd = args->data[OM_COPY_SLICE_T_X];
  uint8_t *yd = args->data[OM_COPY_SLICE_T_Y];
  const size_t es = dtype_size((int)x->dtype);
  const int64_t xc = x->dims[1], yc = y->dims[1], hw = x->dims[2] * x->dims[3];
  const int64_t xc1 = rt_ceil_div(xc, C0), yc1 = rt_ceil_div(yc, C0);
  const int64_t end = off + xc == yc ? yc1 * C0 : off + xc;
  for (uint64_t n = lo; n < hi; n++)
    for (int64_t yb = off / C0; yb * C0 < end; yb++) {
      uint8_t *yplane = yd + (size_t)((((int64_t)n * yc1 + yb) * hw) * C0) * es;
      const int64_t bhi = end < yb * C0 + C0 ? end : yb * C0 + C0, chi = bhi < yc ? bhi : yc;
      for (int64_t ch = off > yb * C0 ? off : yb * C0; ch < chi;) {
        const int64_t xch = ch - off, xl = xch % C0, lanes = chi - ch < C0 - xl ? chi - ch : C0 - xl;
        const uint8_t *xplane = xd + (size_t)((((int64_t)n * xc1 + xch / C0) * hw) * C0) * es;
        copy_lanes(yplane + (size_t)(ch % C0) * es, xplane + (size_t)xl * es, lanes, hw, es);
        ch += lanes;
      }
      if (chi < bhi) /* y's padding lanes */
        for (int64_t p = 0; p < hw; p++)
          memset(yplane + (size_t)(p * C0 + chi % C0) * es, 0, (size_t)(bhi - chi) * es);
    }
}

/* NC1HWC0 along C with channel offsets inside a block and a dtype change:
 * channel by channel; the last slice also zeroes y's padding lanes. */
static void copy_slice_channels(const rt_args *args, int64_t off, uint64_t lo, uint64_t hi) {
  const om_tensor *x = args->desc[OM_COPY_SLICE_T_X], *y = args->desc[OM_COPY_SLICE_T_Y];
  const void *xd = args->data[OM_COPY_SLICE_T_X];
  void *yd = args->data[OM_COPY_SLICE_T_Y];
  const int xt = (int)x->dtype, yt = (int)y->dtype;
  const int64_t xc = x->dims[1], yc = y->dims[1], hw = x->dims[2] * x->dims[3];
  const int64_t xc1 = rt_ceil_div(xc, C0), yc1 = rt_ceil_div(yc, C0);
  const int64_t end = off + xc == yc ? yc1 * C0 : off + xc;
  if (xt == yt) {
    copy_slice_runs(args, off, lo, hi);
    return;
  }
  for (uint64_t n = lo; n < hi; n++) {
    for (int64_t ch = off; ch < end; ch++) {
      size_t dst = (size_t)(((int64_t)n * yc1 + ch / C0) * hw) * C0 + (size_t)(ch % C0);
      int64_t xch = ch - off;
      size_t src = (size_t)(((int64_t)n * xc1 + xch / C0) * hw) * C0 + (size_t)(xch % C0);
      for (int64_t p = 0; p < hw; p++)
        rt_put(yd, yt, dst + (size_t)p * C0, ch < yc ? rt_get(xd, xt, src + (size_t)p * C0) : 0.0f);
    }
  }
}

void rt_copy_slice_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  const om_tensor *x = args->desc[OM_COPY_SLICE_T_X], *y = args->desc[OM_COPY_SLICE_T_Y];
  const void *xd = args->data[OM_COPY_SLICE_T_X];
  void *yd = args->data[OM_COPY_SLICE_T_Y];
  const int64_t axis = task->params[OM_COPY_SLICE_P_AXIS], off = task->params[OM_COPY_SLICE_P_OFFSET];
  const int xt = (int)x->dtype, yt = (int)y->dtype;
  slice_plan p;
  uint64_t lo, hi;
  if (!slice_plan_make(x, y, axis, off, &p)) {
    rt_block_range((uint64_t)x->dims[0], task->block_dim, block, &lo, &hi);
    copy_slice_channels(args, off, lo, hi);
  } else if (axis == 0) { /* one contiguous run */
    rt_block_range(p.run, task->block_dim, block, &lo, &hi);
    convert_run(yd, yt, p.dbase + lo, xd, xt, lo, hi - lo);
  } else {
    rt_block_range(p.outer, task->block_dim, block, &lo, &hi);
    for (uint64_t o = lo; o < hi; o++)
      convert_run(yd, yt, o * p.dstride + p.dbase, xd, xt, o * p.run, p.run);
  }
}

omrt_status rt_copy_slice_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "COPY_SLICE"};
  const om_tensor *x, *y;
  omrt_status s;
  if ((s = rt_chk_ntensors(&c, OM_COPY_SLICE_NTENSORS)) ||
      (s = rt_chk_tensor_of(&c, OM_COPY_SLICE_T_X, "x", 0, RT_LAYOUTS_ND_NC1HWC0, -1, ~0u, &x)) ||
      (s = rt_chk_tensor_of(&c, OM_COPY_SLICE_T_Y, "y", 0, RT_LAYOUTS_ND_NC1HWC0, -1, ~0u, &y)))
    return s;
  int fx = x->dtype == DT_FLOAT16 || x->dtype == DT_FLOAT32,
      fy = y->dtype == DT_FLOAT16 || y->dtype == DT_FLOAT32;
  if (!dtype_size((int)x->dtype) || (x->dtype != y->dtype && !(fx && fy)))
    return rt_chk_fail(&c, "x dtype %u and y dtype %u: one dtype of 1 to 8 bytes, or f16 <-> f32", x->dtype,
                       y->dtype);
  if (x->layout != y->layout || x->rank != y->rank)
    return rt_chk_fail(&c, "x (layout %u, rank %u) and y (layout %u, rank %u) differ", x->layout, x->rank,
                       y->layout, y->rank);
  int32_t axis = task->params[OM_COPY_SLICE_P_AXIS], off = task->params[OM_COPY_SLICE_P_OFFSET];
  if (axis < 0 || (uint32_t)axis >= x->rank)
    return rt_chk_fail(&c, "params[%d] axis = %d, rank %u", OM_COPY_SLICE_P_AXIS, axis, x->rank);
  for (uint32_t d = 0; d < x->rank; d++)
    if (d != (uint32_t)axis && x->dims[d] != y->dims[d])
      return rt_chk_fail(&c, "x dims[%u] = %lld != y dims[%u] = %lld off the axis %d", d,
                         (long long)x->dims[d], d, (long long)y->dims[d], axis);
  if (off < 0 || off + x->dims[axis] > y->dims[axis])
    return rt_chk_fail(&c, "params[%d] offset = %d + x dims[%d] = %lld exceeds y dims[%d] = %lld",
                       OM_COPY_SLICE_P_OFFSET, off, axis, (long long)x->dims[axis], axis,
                       (long long)y->dims[axis]);
  slice_plan p;
  if (!slice_plan_make(x, y, axis, off, &p)) return rt_chk_block_dim(&c, (uint64_t)x->dims[0], "N");
  return rt_chk_block_dim(&c, axis == 0 ? p.run : p.outer,
                          axis == 0 ? "elements" : "physical dims before the axis");
}
