/* test_qconv.c - QCONV2D, the int8 convolution, against the reference
 * evaluator's QConv (ir/eval_quant.c): random u8/i8 inputs and i8 weights
 * packed by lower/qconv_weights.c, over odd channel counts, strides, pads
 * (asymmetric), dilations, groups and depthwise, per-tensor and per-channel
 * multipliers (some of them exact halves, so that ties meet the
 * round-half-even step), zero points, and a folded Relu/Clip clamp. Each
 * case runs the task as libomrt runs it (all its blocks, the tile function
 * rt_cpu() picks: the ctest variants force OMRT_PORTABLE=1 and
 * OMRT_AVX512=0) and then every tile function this CPU can run directly
 * (portable C, AVX2, AVX-512 VNNI), and compares the output bytes with the
 * evaluator's: they must be identical, padding lanes 0. Cases with a
 * residual (format 2.7: an int8 Add or Mul epilogue with its own dtype,
 * zero point and scale, u8/i8 mixes, the final clamp a Relu) go through
 * the same paths. Cases marked nhwc (format 2.11) hold x, y and r as ND
 * [N, H, W, C], channels in multiples of 16: the same paths address them
 * through the geometry's strides and must give the same bytes in that
 * order. Cases with an f32 y (format 2.13: the sums times mult, no
 * requantization) compare the float bits, NC1HWC0 padding lanes 0.0.
 * Cases of extreme values (u 255, weights -128, 127, +-64, +-65: pairs of
 * products past int16) check that every path's sums stay exact. Also the
 * load-time check's refusals.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/quant.h"
#include "evalref.h"
#include "ir/eval.h"
#include "ir/shape.h"
#include "kcase.h"
#include "lower/qconv_weights.h"
#include "runtime/kernels_qconv.h"
#include "runtime/kernels_qdw.h"

static uint32_t rng = 12345;
static uint32_t next(void) {
  rng = rng * 1664525u + 1013904223u;
  return rng >> 8;
}

typedef struct qcase {
  int64_t n, c, h, w, m, group;
  int kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
  int xdt, ydt, clamp, per_channel, halves;
  int res, rdt; /* residual: 0 none, 1 add, 2 mul; r's dtype */
  int nhwc;     /* x, y and r ND [N, H, W, C] instead of NC1HWC0 */
} qcase;

/* A residual's operand and params (ops.def QConv). */
typedef struct qres {
  const uint8_t *r; /* NCHW of y's dims, NULL for none */
  int32_t rzp, ozp;
  float cs, rs, os;
} qres;

typedef struct path {
  const char *name;
  rt_qconv_tile_fn fn; /* NULL: the task through rt_kernels */
  int window;          /* the tile with the window-packed weights (rt_qconv_pack_window) */
  int split;           /* the tile called on pieces: pixel runs of 1-7 and 13, block runs of 1 and the rest */
  int widened;         /* the AVX2 tile with the weights widened beforehand (rt_qconv_widen_avx2) */
} path;

enum {
  X = OM_QCONV_T_X,
  W = OM_QCONV_T_W,
  B = OM_QCONV_T_BIAS,
  MU = OM_QCONV_T_MULT,
  Y = OM_QCONV_T_Y,
  R = OM_QCONV_T_R
};

/* ND [N, C, H, W] elements of es bytes -> NC1HWC0 (padding lanes' bytes `fill`). */
static void to_5hd(uint8_t *dst, const uint8_t *src, int64_t n, int64_t c, int64_t hw, uint8_t fill,
                   size_t es) {
  const int64_t c1 = (c + 15) / 16;
  memset(dst, fill, (size_t)(n * c1 * hw * 16) * es);
  for (int64_t i = 0; i < n; i++)
    for (int64_t ch = 0; ch < c; ch++)
      for (int64_t p = 0; p < hw; p++)
        memcpy(dst + (size_t)(((i * c1 + ch / 16) * hw + p) * 16 + ch % 16) * es,
               src + (size_t)((i * c + ch) * hw + p) * es, es);
}

/* ND [N, C, H, W] elements of es bytes -> ND [N, H, W, C]. */
static void to_nhwc(uint8_t *dst, const uint8_t *src, int64_t n, int64_t c, int64_t hw, size_t es) {
  for (int64_t i = 0; i < n; i++)
    for (int64_t ch = 0; ch < c; ch++)
      for (int64_t p = 0; p < hw; p++)
        memcpy(dst + (size_t)((i * hw + p) * c + ch) * es, src + (size_t)((i * c + ch) * hw + p) * es, es);
}

/* NCHW elements of es bytes into a tensor of layout lay (NC1HWC0 padding
 * lanes' bytes `fill`). */
static void to_layout(int lay, uint8_t *dst, const uint8_t *src, int64_t n, int64_t c, int64_t hw,
                      uint8_t fill, size_t es) {
  if (lay == LAYOUT_ND)
    to_nhwc(dst, src, n, c, hw, es);
  else
    to_5hd(dst, src, n, c, hw, fill, es);
}

/* The evaluator's QConv output for the case (NCHW bytes), or NULL. */
static uint8_t *reference(const qcase *q, const uint8_t *x, const int8_t *w, const int32_t *bias,
                          const float *mult, int32_t xzp, int32_t yzp, int32_t lo, int32_t hi, const qres *rq,
                          const int64_t *ydims, arena *a) {
  ir_graph *g = ir_graph_new("qconv", 0);
  const int64_t xd[4] = {q->n, q->c, q->h, q->w}, wd[4] = {q->m, q->c / q->group, q->kh, q->kw},
                md[1] = {q->m};
  ir_value *xv = ir_value_new(g, "x", q->xdt);
  ir_value_set_shape(xv, 4, xd);
  ir_value *in[4] = {xv, ir_const_new(g, "w", DT_INT8, 4, wd, w, (size_t)(wd[0] * wd[1] * wd[2] * wd[3])),
                     ir_const_new(g, "b", DT_INT32, 1, md, bias, 4 * (size_t)q->m),
                     ir_const_new(g, "m", DT_FLOAT32, 1, md, mult, 4 * (size_t)q->m)};
  ir_value *yv = ir_value_new(g, "y", q->ydt), *rv = ir_value_new(g, "r", q->rdt);
  ir_value_set_shape(rv, 4, ydims);
  ir_value *in5[5] = {in[0], in[1], in[2], in[3], rv};
  ir_node *nd = ir_node_new(g, IR_OP_QCONV, "qc", q->res ? 5 : 4, in5, 1, &yv);
  const int64_t ks[2] = {q->kh, q->kw}, st[2] = {q->sh, q->sw}, dl[2] = {q->dh, q->dw},
                pads[4] = {q->pt, q->pl, q->pb, q->pr};
  ir_attr_set_ints(g, nd, "kernel_shape", 2, ks);
  ir_attr_set_ints(g, nd, "strides", 2, st);
  ir_attr_set_ints(g, nd, "dilations", 2, dl);
  ir_attr_set_ints(g, nd, "pads", 4, pads);
  ir_attr_set_int(g, nd, "group", q->group);
  ir_attr_set_int(g, nd, "x_zp", xzp);
  ir_attr_set_int(g, nd, "y_zp", yzp);
  ir_attr_set_int(g, nd, "lo", lo);
  ir_attr_set_int(g, nd, "hi", hi);
  ir_attr_set_int(g, nd, "to", q->ydt);
  if (q->res) {
    ir_attr_set_string(g, nd, "r_op", q->res == 2 ? "mul" : "add");
    ir_attr_set_int(g, nd, "r_zp", rq->rzp);
    ir_attr_set_int(g, nd, "o_zp", rq->ozp);
    ir_attr_set_float(g, nd, "c_scale", rq->cs);
    ir_attr_set_float(g, nd, "r_scale", rq->rs);
    ir_attr_set_float(g, nd, "o_scale", rq->os);
  }
  const void *ins[5] = {x, w, bias, mult, rq->r};
  void *outs[1] = {0};
  uint8_t *out = NULL;
  if (!er_eval(g, nd, ins, outs, a)) {
    if (memcmp(ydims, yv->dims, 4 * sizeof *ydims))
      test_note("y dims differ from the test's");
    else
      out = outs[0];
  }
  ir_graph_free(g);
  return out;
}

/* extreme: u (x, + 128 for i8) mostly 255 and w from -128, 127, +-64 and
 * +-65, so that pairs of products leave int16 (what vpmaddubsw would
 * saturate); else random. */
static void run_case(const qcase *q, int extreme) {
  arena a;
  arena_init(&a, 0);
  const int64_t cg = q->c / q->group, nx = q->n * q->c * q->h * q->w, nw = q->m * cg * q->kh * q->kw;
  uint8_t *x = malloc((size_t)nx);
  int8_t *w = malloc((size_t)nw);
  int32_t *bias = malloc(4 * (size_t)q->m);
  float *mult = malloc(4 * (size_t)q->m);
  static const int8_t wext[8] = {-128, 127, 64, -64, 65, -65, -128, -128};
  const uint8_t flip = q->xdt == DT_INT8 ? 0x80 : 0;
  for (int64_t i = 0; i < nx; i++)
    x[i] = extreme ? (uint8_t)((i % 7 == 3 ? 0 : 255) ^ flip) : (uint8_t)next();
  for (int64_t i = 0; i < nw; i++)
    w[i] = extreme ? wext[(i + i / 5) % 8] : (int8_t)next();
  const float m0 = q->halves ? 0.5f : 1.0f / (float)(64 + next() % 4000);
  for (int64_t i = 0; i < q->m; i++) {
    bias[i] = (int32_t)(next() % 20001) - 10000;
    mult[i] = q->per_channel && !q->halves ? 1.0f / (float)(64 + next() % 4000) : m0;
    if (q->halves && q->per_channel) mult[i] = i % 2 ? 0.5f : 0.25f;
  }
  int32_t xlo, xhi, ylo, yhi;
  q_range(q->xdt, &xlo, &xhi);
  const int fy = q->ydt == DT_FLOAT32; /* f32 y (format 2.13): the sums' float value, y_zp lo hi 0 */
  q_range(q->ydt, &ylo, &yhi);
  if (fy) ylo = yhi = 0;
  const int32_t xzp = xlo + (int32_t)(next() % 256), yzp = fy ? 0 : ylo + (int32_t)(next() % 256);
  int64_t yd[4] = {q->n, q->m, (q->h + q->pt + q->pb - q->dh * (q->kh - 1) - 1) / q->sh + 1,
                   (q->w + q->pl + q->pr - q->dw * (q->kw - 1) - 1) / q->sw + 1};
  /* the residual: scales near the products' and sums' sizes (with halves,
   * powers of 2: exact ties), zero points anywhere in their ranges */
  qres rq = {0};
  uint8_t *r = NULL;
  const int64_t ny = yd[0] * yd[1] * yd[2] * yd[3];
  int32_t rlo, rhi;
  q_range(q->rdt, &rlo, &rhi);
  if (q->res) {
    r = malloc((size_t)ny);
    for (int64_t i = 0; i < ny; i++)
      r[i] = (uint8_t)next();
    rq = (qres){r, rlo + (int32_t)(next() % 256), ylo + (int32_t)(next() % 256), 0, 0, 0};
    rq.cs = q->halves ? 0.5f : 0.01f + (float)(next() % 1000) * 1e-5f;
    rq.rs = q->halves ? 0.25f : 0.01f + (float)(next() % 1000) * 1e-5f;
    rq.os = q->halves ? (q->res == 2 ? 16.0f : 1.0f)
                      : (q->res == 2 ? rq.cs * rq.rs * 64.0f : (rq.cs + rq.rs) * 0.75f);
  }
  const int32_t ozp = q->res ? rq.ozp : yzp; /* the clamp's: the value written */
  const int32_t lo = q->clamp ? ozp : ylo, hi = q->clamp ? (ozp + 100 < yhi ? ozp + 100 : yhi) : yhi;
  const uint8_t *want = reference(q, x, w, bias, mult, xzp, yzp, lo, hi, &rq, yd, &a);
  CHECK(want != NULL);

  qconvw_geom gm;
  CHECK_EQ_INT(qconvw_init(q->m, q->c, q->group, q->kh, q->kw, &gm), 0);
  const int64_t c16 = gm.c1out * 16;
  int64_t pd[4];
  qconvw_dims(&gm, pd);
  const int64_t mt = 5, nt = 2, m = yd[2] * yd[3];
  const uint32_t tiles = (uint32_t)(q->n * ((m + mt - 1) / mt) * ((gm.c1out + nt - 1) / nt));
  kcase c;
  kc_setup(&c, OM_TASK_QCONV2D, tiles < 3 ? tiles : 3, q->res ? OM_QCONV_NTENSORS_R : OM_QCONV_NTENSORS);
  const int lay = q->nhwc ? LAYOUT_ND : LAYOUT_NC1HWC0;
  const int64_t xd[4] = {q->n, q->c, q->h, q->w}, xh[4] = {q->n, q->h, q->w, q->c},
                yh[4] = {yd[0], yd[2], yd[3], yd[1]};
  kc_set_layout(&c, X, q->xdt, lay, 4, q->nhwc ? xh : xd);
  kc_set(&c, W, DT_INT8, 4, pd);
  kc_set(&c, B, DT_INT32, 1, &c16);
  kc_set(&c, MU, DT_FLOAT32, 1, &c16);
  kc_set_layout(&c, Y, q->ydt, lay, 4, q->nhwc ? yh : yd);
  if (q->res) {
    kc_set_layout(&c, R, q->rdt, lay, 4, q->nhwc ? yh : yd);
    to_layout(lay, c.data[R], r, q->n, q->m, yd[2] * yd[3], 0xa5, 1); /* padding lanes: anything */
  }
  to_layout(lay, c.data[X], x, q->n, q->c, q->h * q->w, 0x5a, 1);
  memset(c.data[W], 0, (size_t)qconvw_bytes(&gm));
  qconvw_pack(&gm, w, c.data[W]);
  const int32_t zp_u = xzp + (q->xdt == DT_INT8 ? 128 : 0);
  qconvw_bias(&gm, w, bias, mult, zp_u, c.data[B], c.data[MU]);
  int32_t *p = c.task.params;
  p[OM_CONV_P_KH] = q->kh, p[OM_CONV_P_KW] = q->kw, p[OM_CONV_P_STRIDE_H] = q->sh,
  p[OM_CONV_P_STRIDE_W] = q->sw;
  p[OM_CONV_P_PAD_TOP] = q->pt, p[OM_CONV_P_PAD_LEFT] = q->pl, p[OM_CONV_P_PAD_BOTTOM] = q->pb;
  p[OM_CONV_P_PAD_RIGHT] = q->pr, p[OM_CONV_P_DILATION_H] = q->dh, p[OM_CONV_P_DILATION_W] = q->dw;
  p[OM_QCONV_P_TILE_M] = (int32_t)mt, p[OM_QCONV_P_TILE_N] = (int32_t)nt,
  p[OM_QCONV_P_GROUPS] = (int32_t)q->group;
  p[OM_QCONV_P_X_ZP] = zp_u, p[OM_QCONV_P_Y_ZP] = yzp, p[OM_QCONV_P_LO] = lo, p[OM_QCONV_P_HI] = hi;
  p[OM_QCONV_P_X_SIGNED] = q->xdt == DT_INT8;
  if (q->res) {
    p[OM_QCONV_P_R_OP] = q->res == 2, p[OM_QCONV_P_R_ZP] = rq.rzp, p[OM_QCONV_P_O_ZP] = rq.ozp;
    p[OM_QCONV_P_C_SCALE] = (int32_t)rt_f32_bits(rq.cs), p[OM_QCONV_P_R_SCALE] = (int32_t)rt_f32_bits(rq.rs);
    p[OM_QCONV_P_O_SCALE] = (int32_t)rt_f32_bits(rq.os);
  }
  omrt_status s = kc_check(&c);
  CHECK_EQ_INT(s, OMRT_OK);
  if (s != OMRT_OK) test_note("  %s", omrt_last_error());

  const size_t ybytes = (size_t)c.t[Y].bytes;
  uint8_t *want5 = malloc(ybytes), *got = c.data[Y];
  to_layout(lay, want5, want ? want : (const uint8_t *)"", want ? q->n : 0, q->m, yd[2] * yd[3], 0,
            fy ? 4 : 1);
  rt_args args;
  kc_args(&c, &args);
  /* the task as libomrt runs it, then each tile function (AVX2 and VNNI also with window-packed weights) */
  path paths[11] = {{"task", NULL, 0, 0, 0}, {"portable", rt_qconv_tile_c, 0, 0, 0}};
  int np = 2;
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx2"))
    paths[np++] = (path){"avx2", rt_qconv_tile_avx2, 0, 0, 0},
    paths[np++] = (path){"avx2, window", rt_qconv_tile_avx2, 1, 0, 0},
    paths[np++] = (path){"avx2, pieces", rt_qconv_tile_avx2, 0, 1, 0},
    paths[np++] = (path){"avx2, window pieces", rt_qconv_tile_avx2, 1, 1, 0},
    paths[np++] = (path){"avx2, widened", rt_qconv_tile_avx2, 0, 0, 1},
    paths[np++] = (path){"avx2, widened pieces", rt_qconv_tile_avx2, 0, 1, 1};
  if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw"))
    paths[np++] = (path){"avx512vnni", rt_qconv_tile_vnni, 0, 0, 0},
    paths[np++] = (path){"avx512vnni, window", rt_qconv_tile_vnni, 1, 0, 0},
    paths[np++] = (path){"avx512vnni, depthwise chunks", rt_qconv_dw_tile_vnni, 0, 0, 0};
#endif
  for (int k = 0; k < np && s == OMRT_OK && want; k++) {
    if (fy && paths[k].fn == rt_qconv_dw_tile_vnni) continue; /* rt_qconv_run does not pick it for f32 y */
    memset(got, 0x7f, ybytes);
    if (!paths[k].fn) {
      kc_run_blocks(&c, kc_core());
    } else {
      rt_qconv_geom g;
      rt_qconv_geom_init(&c.task, &args, &g);
      const int64_t wbytes = rt_qconv_window_bytes(&g);
      int8_t *wwin = paths[k].window && wbytes ? malloc((size_t)wbytes) : NULL;
      if (paths[k].window && !wwin) continue; /* the packing does not apply */
      if (wwin) rt_qconv_pack_window(&g, wwin);
      g.wwin = wwin;
      int16_t *w16 = NULL;
#if defined(__x86_64__) && defined(__GNUC__)
      const int64_t w16bytes = paths[k].widened ? rt_qconv_widened_bytes(&g) : 0;
      if (paths[k].widened && !w16bytes) continue; /* depthwise: the tile reads w */
      if (w16bytes) {
        w16 = aligned_alloc(64, (size_t)(w16bytes + 63) & ~(size_t)63);
        rt_qconv_widen_avx2(&g, w16);
      }
#endif
      g.w16 = w16;
      static const int64_t runs[8] = {1, 2, 3, 4, 5, 6, 7, 13}; /* a piece's pixels */
      for (int64_t img = 0; img < q->n; img++)
        if (!paths[k].split)
          paths[k].fn(&g, img, 0, m, 0, gm.c1out);
        else
          for (int64_t nb = 0; nb < gm.c1out; nb = nb ? gm.c1out : 1)
            for (int64_t p0 = 0, i = 0; p0 < m; p0 += runs[i++ % 8]) {
              const int64_t p1 = p0 + runs[i % 8] < m ? p0 + runs[i % 8] : m;
              paths[k].fn(&g, img, p0, p1, nb, nb ? gm.c1out : 1);
            }
      free(wwin), free(w16);
    }
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < ybytes; i++)
      if (got[i] != want5[i] && !bad++) first = i;
    CHECK(bad == 0);
    if (bad)
      test_note(
          "  %s: %lldx%lldx%lldx%lld -> %lld, k %dx%d s %d,%d d %d,%d pads %d,%d,%d,%d group %lld, x %s "
          "y %s residual %d nhwc %d: %zu bytes differ, first at %zu: %u, want %u",
          paths[k].name, (long long)q->n, (long long)q->c, (long long)q->h, (long long)q->w, (long long)q->m,
          q->kh, q->kw, q->sh, q->sw, q->dh, q->dw, q->pt, q->pl, q->pb, q->pr, (long long)q->group,
          dtype_name(q->xdt), dtype_name(q->ydt), q->res, q->nhwc, bad, first, got[first], want5[first]);
  }
  free(want5), free(x), free(w), free(bias), free(mult), free(r);
  kc_free(&c);
  arena_free(&a);
}

static void test_rejects(void) {
  const qcase q = {1, 16, 4, 4, 16, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, DT_UINT8, DT_UINT8, 0, 0, 0, 0, 0, 0};
  qconvw_geom gm;
  qconvw_init(q.m, q.c, 1, 3, 3, &gm);
  const int64_t xd[4] = {1, 16, 4, 4}, c16 = 16;
  int64_t pd[4];
  qconvw_dims(&gm, pd);
  kcase c;
  kc_setup(&c, OM_TASK_QCONV2D, 1, OM_QCONV_NTENSORS);
  kc_set_layout(&c, X, DT_UINT8, LAYOUT_NC1HWC0, 4, xd);
  kc_set(&c, W, DT_INT8, 4, pd);
  kc_set(&c, B, DT_INT32, 1, &c16);
  kc_set(&c, MU, DT_FLOAT32, 1, &c16);
  kc_set_layout(&c, Y, DT_UINT8, LAYOUT_NC1HWC0, 4, xd);
  int32_t *p = c.task.params;
  p[OM_CONV_P_KH] = p[OM_CONV_P_KW] = 3, p[OM_CONV_P_STRIDE_H] = p[OM_CONV_P_STRIDE_W] = 1;
  p[OM_CONV_P_PAD_TOP] = p[OM_CONV_P_PAD_LEFT] = p[OM_CONV_P_PAD_BOTTOM] = p[OM_CONV_P_PAD_RIGHT] = 1;
  p[OM_CONV_P_DILATION_H] = p[OM_CONV_P_DILATION_W] = 1;
  p[OM_QCONV_P_TILE_M] = 16, p[OM_QCONV_P_TILE_N] = 1, p[OM_QCONV_P_GROUPS] = 1, p[OM_QCONV_P_HI] = 255;
  CHECK_EQ_INT(kc_check(&c), OMRT_OK);
  p[OM_QCONV_P_X_ZP] = 256;
  expect_reject(&c, "x_zp past 255", "x_zp 256");
  p[OM_QCONV_P_X_ZP] = 0, p[OM_QCONV_P_LO] = 200, p[OM_QCONV_P_HI] = 100;
  expect_reject(&c, "lo above hi", "lo 200");
  p[OM_QCONV_P_LO] = 0, p[OM_QCONV_P_HI] = 255, p[OM_QCONV_P_X_SIGNED] = 1;
  expect_reject(&c, "x_signed on u8 x", "x_signed");
  p[OM_QCONV_P_X_SIGNED] = 0, p[OM_QCONV_P_GROUPS] = 3;
  expect_reject(&c, "groups not dividing C", "groups");
  p[OM_QCONV_P_GROUPS] = 1;
  c.task.block_dim = 2;
  expect_reject(&c, "block_dim past the tiles", "block_dim");
  c.task.block_dim = 1;
  kc_set(&c, W, DT_INT8, 4, (const int64_t[4]){1, 4, 16, 4});
  expect_reject(&c, "w of the wrong packed size", "w dims");
  kc_set(&c, W, DT_UINT8, 4, pd);
  expect_reject(&c, "u8 weights", "expected i8");
  kc_set(&c, W, DT_INT8, 4, pd);
  CHECK_EQ_INT(kc_check(&c), OMRT_OK);
  p[OM_QCONV_P_R_OP] = 1;
  expect_reject(&c, "a residual's param without r", "r_op");
  p[OM_QCONV_P_R_OP] = 0, p[OM_QCONV_P_O_ZP] = 3;
  expect_reject(&c, "a residual's param without r", "o_zp");
  p[OM_QCONV_P_O_ZP] = 0;
  /* f32 y (format 2.13): y_zp, lo and hi 0 */
  kc_set_layout(&c, Y, DT_FLOAT32, LAYOUT_NC1HWC0, 4, xd);
  expect_reject(&c, "f32 y with hi 255", "f32 y");
  p[OM_QCONV_P_HI] = 0;
  CHECK_EQ_INT(kc_check(&c), OMRT_OK);
  kc_set_layout(&c, Y, DT_FLOAT16, LAYOUT_NC1HWC0, 4, xd);
  expect_reject(&c, "f16 y", "y");
  kc_set_layout(&c, Y, DT_UINT8, LAYOUT_NC1HWC0, 4, xd);
  p[OM_QCONV_P_HI] = 255;
  /* NHWC (format 2.11): x and y both ND [N, H, W, C], C a multiple of 16, groups 1 */
  const int64_t xh[4] = {1, 4, 4, 16};
  kc_set_layout(&c, X, DT_UINT8, LAYOUT_ND, 4, xh);
  expect_reject(&c, "ND x, NC1HWC0 y", "all ND");
  kc_set_layout(&c, Y, DT_UINT8, LAYOUT_ND, 4, xh);
  CHECK_EQ_INT(kc_check(&c), OMRT_OK);
  p[OM_QCONV_P_GROUPS] = 2;
  expect_reject(&c, "NHWC with groups", "groups 1");
  p[OM_QCONV_P_GROUPS] = 1;
  kc_set_layout(&c, X, DT_UINT8, LAYOUT_ND, 4, (const int64_t[4]){1, 4, 4, 12});
  expect_reject(&c, "NHWC x of 12 channels", "multiples of 16");
  kc_set_layout(&c, X, DT_UINT8, LAYOUT_ND, 4, xh);
  kc_set_layout(&c, Y, DT_UINT8, LAYOUT_ND, 4, (const int64_t[4]){1, 4, 3, 16});
  expect_reject(&c, "NHWC y of the wrong W", "y dims");
  kc_free(&c);

  /* with a residual */
  kc_setup(&c, OM_TASK_QCONV2D, 1, OM_QCONV_NTENSORS_R);
  kc_set_layout(&c, X, DT_UINT8, LAYOUT_NC1HWC0, 4, xd);
  kc_set(&c, W, DT_INT8, 4, pd);
  kc_set(&c, B, DT_INT32, 1, &c16);
  kc_set(&c, MU, DT_FLOAT32, 1, &c16);
  kc_set_layout(&c, Y, DT_UINT8, LAYOUT_NC1HWC0, 4, xd);
  kc_set_layout(&c, R, DT_INT8, LAYOUT_NC1HWC0, 4, xd);
  p = c.task.params;
  p[OM_CONV_P_KH] = p[OM_CONV_P_KW] = 3, p[OM_CONV_P_STRIDE_H] = p[OM_CONV_P_STRIDE_W] = 1;
  p[OM_CONV_P_PAD_TOP] = p[OM_CONV_P_PAD_LEFT] = p[OM_CONV_P_PAD_BOTTOM] = p[OM_CONV_P_PAD_RIGHT] = 1;
  p[OM_CONV_P_DILATION_H] = p[OM_CONV_P_DILATION_W] = 1;
  p[OM_QCONV_P_TILE_M] = 16, p[OM_QCONV_P_TILE_N] = 1, p[OM_QCONV_P_GROUPS] = 1, p[OM_QCONV_P_HI] = 255;
  p[OM_QCONV_P_R_OP] = 1, p[OM_QCONV_P_R_ZP] = -5, p[OM_QCONV_P_O_ZP] = 7;
  p[OM_QCONV_P_C_SCALE] = p[OM_QCONV_P_R_SCALE] = p[OM_QCONV_P_O_SCALE] = (int32_t)rt_f32_bits(0.02f);
  CHECK_EQ_INT(kc_check(&c), OMRT_OK);
  p[OM_QCONV_P_R_OP] = 2;
  expect_reject(&c, "r_op neither add nor mul", "r_op");
  p[OM_QCONV_P_R_OP] = 0, p[OM_QCONV_P_C_SCALE] = 0;
  expect_reject(&c, "c_scale 0", "c_scale");
  p[OM_QCONV_P_C_SCALE] = (int32_t)rt_f32_bits(0.02f), p[OM_QCONV_P_O_SCALE] = 0x7fc00000; /* NaN */
  expect_reject(&c, "o_scale NaN", "o_scale");
  p[OM_QCONV_P_O_SCALE] = (int32_t)rt_f32_bits(0.02f), p[OM_QCONV_P_R_SCALE] = 0x7f800000; /* inf */
  expect_reject(&c, "r_scale inf", "r_scale");
  p[OM_QCONV_P_R_SCALE] = (int32_t)rt_f32_bits(0.02f), p[OM_QCONV_P_R_ZP] = 200;
  expect_reject(&c, "r_zp past i8", "r_zp");
  p[OM_QCONV_P_R_ZP] = 0, p[OM_QCONV_P_O_ZP] = -1;
  expect_reject(&c, "o_zp below u8", "o_zp");
  p[OM_QCONV_P_O_ZP] = 0;
  CHECK_EQ_INT(kc_check(&c), OMRT_OK);
  kc_set_layout(&c, R, DT_INT8, LAYOUT_NC1HWC0, 4, (const int64_t[4]){1, 16, 4, 3});
  expect_reject(&c, "r of other dims", "r");
  kc_set_layout(&c, R, DT_FLOAT16, LAYOUT_NC1HWC0, 4, xd);
  expect_reject(&c, "f16 r", "r");
  kc_set_layout(&c, R, DT_UINT8, LAYOUT_ND, 4, xd);
  expect_reject(&c, "ND r beside NC1HWC0 y", "all ND");
  kc_set_layout(&c, R, DT_UINT8, LAYOUT_NC1HWC0, 4, xd);
  kc_set_layout(&c, Y, DT_FLOAT32, LAYOUT_NC1HWC0, 4, xd);
  p[OM_QCONV_P_LO] = p[OM_QCONV_P_HI] = 0;
  expect_reject(&c, "f32 y with a residual", "no residual");
  kc_free(&c);
}

int main(void) {
  const int U8 = DT_UINT8, I8 = DT_INT8, F32 = DT_FLOAT32;
  test_note("paths: %s", rt_cpu()->name);
  const qcase cases[] = {
      /* n  c   h   w   m  grp kh kw sh sw dh dw pt pl pb pr  x   y clamp pc halves */
      {1, 16, 8, 8, 16, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, U8, U8, 0, 1, 0, 0, 0, 0},  /* 3x3 same */
      {2, 3, 11, 13, 37, 1, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, U8, U8, 1, 1, 0, 0, 0, 0}, /* RGB stem, odd Cout */
      {1, 3, 61, 9, 64, 1,  3, 3, 2, 2, 1, 1,
       0, 0, 0,  0, I8, U8, 1, 1, 0, 0, 0, 0}, /* 3x3 stem, i8, no pads */
      {1, 1, 9, 10, 20, 1, 3, 5, 1, 2, 2, 1, 2, 1, 0, 3, I8, I8, 0, 1, 1, 0, 0, 0}, /* 1 channel, dilated */
      {1, 2, 5, 5, 16, 1, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0, U8, U8, 0, 0, 0, 0, 0, 0},  /* 2 channels, 2x2 */
      {1, 33, 9, 7, 20, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, I8, I8, 0, 0, 0, 0, 0, 0}, /* 1x1, odd C, i8 */
      {1, 40, 10, 9, 70, 1,  3, 3, 2, 1, 2, 2,
       2, 1,  0,  3, U8, I8, 1, 1, 1, 0, 0, 0}, /* dilated, asym pads, halves */
      {1, 32, 7, 7, 32, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, U8, U8, 1, 1, 0, 0, 0, 0}, /* depthwise */
      {1, 24, 6, 5, 24, 24, 3, 3, 2, 2, 1, 1,
       1, 1,  1, 1, I8, U8, 0, 1, 1, 0, 0, 0}, /* depthwise, stride 2, odd C */
      {1, 48, 5, 6, 36, 6,  3, 1, 1, 2, 1, 1,
       1, 0,  1, 0, U8, U8, 0, 1, 0, 0, 0, 0}, /* groups of 8 in, 6 out */
      {2, 64, 4, 4, 80, 2, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, I8, U8, 1, 0, 0, 0, 0, 0}, /* two groups, no pads */
      {1, 256, 3, 3, 130, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, U8, U8, 1, 1, 0, 0, 0, 0}, /* deep K */
      {1, 48, 4, 8, 70, 1,  1, 1, 2, 2, 1, 1,
       0, 0,  0, 0, U8, U8, 1, 1, 0, 0, 0, 0}, /* 1x1 s2: 8 pixels, a tail of 2 */
      {1, 200, 1, 1, 70, 1,  1, 1, 1, 1, 1, 1,
       0, 0,   0, 0, I8, U8, 0, 1, 0, 0, 0, 0}, /* fully connected: 1 pixel */
      /* with a residual (res 1 add, 2 mul) of dtype rdt                                    res rdt */
      {1, 64, 7, 7, 64, 1,  1, 1, 1, 1, 1,  1,
       0, 0,  0, 0, U8, U8, 1, 1, 0, 1, U8, 0}, /* ResNet's 1x1, Add, Relu */
      {2, 16, 8, 8, 40, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, I8, U8, 0, 1, 0, 1, I8, 0}, /* 3x3, odd Cout, i8 r */
      {1, 33, 5, 6, 20, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, U8, I8, 1, 0, 0, 2, U8, 0}, /* Mul, i8 y, u8 r */
      {1, 24, 6, 5, 24, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, U8, I8, 0, 1, 1, 1, I8, 0}, /* depthwise, ties */
      {1, 3, 11, 13, 37, 1,  7, 7, 2, 2, 1,  1,
       3, 3, 3,  3,  U8, U8, 0, 1, 1, 2, I8, 0}, /* RGB stem window, Mul */
      {1, 48, 5, 6, 36, 6,  3, 1, 1, 2, 1,  1,
       1, 0,  1, 0, I8, I8, 1, 1, 0, 1, U8, 0}, /* groups: 12 x 1 tiles */
      {1, 16, 4, 4, 16, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, U8, U8, 0, 0, 1, 1, U8, 0}, /* ties, one block */
      /* depthwise over rows of several 4-pixel groups (kernels_qdw_x86.c): inside and edge groups */
      {1, 40, 13, 19, 40, 40, 3, 3, 1, 1, 1, 1,
       1, 1,  1,  1,  U8, U8, 1, 1, 0, 0, 0, 0}, /* odd C, last block 8 */
      {1, 32, 15, 17, 32, 32, 3, 3, 2, 2, 1, 1,
       0, 0,  1,  1,  I8, U8, 0, 1, 1, 0, 0, 0}, /* stride 2, pads after */
      {1, 16, 12, 21, 16, 16, 5, 5, 1, 1, 1, 1,
       2, 2,  2,  2,  U8, I8, 1, 1, 0, 0, 0, 0}, /* 5x5: 7 quads of taps */
      {1, 16, 9, 23, 16, 16, 3, 3, 1, 2, 2, 2,
       2, 2,  2, 2,  I8, I8, 0, 1, 0, 0, 0, 0}, /* dilated, stride 1,2 */
      {2, 16, 10, 25, 16, 16, 3, 3, 3, 3, 1, 1,
       1, 1,  1,  1,  U8, U8, 0, 0, 0, 0, 0, 0},                                      /* stride 3: gathered */
      {1, 16, 9, 12, 16, 16, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3, U8, U8, 1, 1, 0, 0, 0, 0}, /* 7x7: 3 chunks */
      /* depthwise as chunks of 4 input pixels (kernels_qdw_x86.c): each shape class, both packings */
      {1, 64, 9, 30, 64, 64, 5, 5, 2, 2, 1, 1,
       2, 2,  2, 2,  I8, I8, 1, 1, 0, 0, 0, 0}, /* 5x5 s2, i8 in and out, clamp */
      {1, 48, 11, 11, 48, 48, 3, 3, 1, 1, 1, 1,
       1, 1,  1,  1,  U8, I8, 0, 0, 0, 0, 0, 0}, /* per-tensor, i8 y below 0 */
      {1, 17, 6, 26, 17, 17, 3, 3, 1, 1, 1, 1,
       0, 1,  2, 0,  I8, U8, 1, 1, 0, 0, 0, 0}, /* 17 channels: a block of 1, pads asymmetric */
      {1, 32, 10, 23, 32, 32, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, U8, U8, 0, 1, 1, 0, 0, 0}, /* 5x5 s1, ties */
      {1, 16, 15, 18, 16, 16, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, U8, U8, 0, 1, 0, 0, 0, 0}, /* 7x7 s2: 4 chunks */
      {1, 32, 8, 13, 32, 32, 5, 1, 1, 1, 1, 1, 2, 0, 2, 0, I8, I8, 0, 1, 0, 0, 0, 0},  /* 5x1 */
      {1, 32, 7, 14, 32, 32, 1, 5, 1, 1, 1, 1, 0, 2, 0, 2, U8, U8, 1, 1, 0, 0, 0, 0},  /* 1x5 */
      {1, 16, 20, 21, 16, 16, 3, 3, 2, 2, 5, 5,
       5, 5,  5,  5,  U8, U8, 0, 1, 0, 0, 0, 0}, /* dilation 5, s2: 5 chunks, handed on */
      {1, 16, 12, 12, 16, 16, 9, 9, 1, 1, 1, 1, 4, 4, 4, 4, I8, U8, 0, 1, 0, 0, 0, 0}, /* 9 rows: handed on */
      {2, 24, 3, 4, 24, 24, 3, 3, 1, 1, 1, 1,
       1, 1,  1, 1, U8, U8, 1, 1, 0, 0, 0, 0}, /* rows of 4: no interior chunk */
      /* depthwise rows walked as an interior at fixed tap offsets and edges (AVX2: 3x3 and 5x5 loops) */
      {1, 48, 17, 19, 48, 48, 3, 3, 1, 1, 1, 1,
       1, 1,  1,  1,  I8, U8, 1, 1, 0, 0, 0, 0}, /* 3x3 s1, i8 x, clamp */
      {1, 32, 18, 21, 32, 32, 3, 3, 2, 2, 1, 1,
       1, 1,  1,  1,  U8, U8, 0, 0, 0, 0, 0, 0}, /* 3x3 s2, per-tensor */
      {1, 32, 16, 15, 32, 32, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, U8, I8, 1, 1, 0, 0, 0, 0}, /* 5x5 s2 */
      {1, 16, 3, 2, 16, 16, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, U8, U8, 0, 1, 0, 0, 0, 0}, /* window wider than x */
      {1, 16, 9, 11, 16, 16, 3, 3, 1, 1, 1,  1,
       0, 0,  2, 2,  I8, I8, 0, 1, 0, 1, U8, 0}, /* pads after only, residual Add */
      /* depthwise through a padded copy of the band of x a tile reads (AVX2), or past its size by position */
      {1, 32, 14, 14, 32, 32, 5, 5, 1, 1, 1, 1,
       2, 2,  2,  2,  I8, U8, 1, 1, 0, 0, 0, 0}, /* EfficientNet's 5x5 */
      {1, 16, 44, 40, 16, 16, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, U8, U8, 0, 1, 0, 0, 0, 0}, /* band past 16 KiB */
      {1, 16, 7, 9, 16, 16, 3, 3, 2, 1, 1,  2,
       0, 2,  1, 0, I8, I8, 0, 1, 0, 1, U8, 0}, /* pads left only, Add */
      /* windows inside x (offsets per tap) beside edge pixels: small K, 64 channels, residual, clamp */
      {1, 16, 14, 13, 96, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, U8, U8, 1, 1, 0, 0, 0, 0},  /* 1x1, K 16 */
      {1, 24, 9, 10, 40, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, I8, U8, 0, 0, 0, 1, U8, 0},  /* 1x1, K 24, Add */
      {1, 64, 12, 11, 64, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, U8, U8, 1, 0, 0, 0, 0, 0},  /* 3x3, 64 */
      {1, 64, 13, 12, 48, 1, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, I8, I8, 0, 1, 0, 1, I8, 0}, /* 3x3 s2, Add */
      {1, 32, 10, 9, 32, 1, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, U8, U8, 1, 1, 0, 2, U8, 0},  /* 5x5, Mul */
      /* the AVX2 store's epilogues on small-K 1x1s, odd Cout */
      {1, 16, 14, 14, 40, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, U8, I8, 1, 0, 1, 2, U8, 0}, /* K 16, Mul, ties */
      {1, 24, 7, 9, 20, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, I8, I8, 0, 1, 0, 1, I8, 0},  /* K 24, Add, Cout 20 */
      {1, 64, 7, 7, 100, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, U8, U8, 1, 1, 1, 1, U8, 0}, /* K 64, Add, ties */
      {1, 16, 5, 7, 36, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, I8, U8, 0, 0, 0, 0, 0, 0},   /* K 16, per-tensor */
      {1, 24, 6, 6, 24, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, U8, F32, 0, 1, 0, 0, 0, 0},  /* K 24, f32 y */
      /* NHWC x, y and r (format 2.11): a Linear layer's rows as pixels, and windows    res rdt nhwc */
      {1, 64, 1, 45, 48, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, U8, U8, 0, 1, 0, 0, 0, 1},  /* 45 rows: tails */
      {2, 32, 3, 7, 80, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, I8, I8, 1, 0, 1, 0, 0, 1},   /* two images, ties */
      {1, 48, 1, 20, 32, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, U8, U8, 1, 1, 0, 1, I8, 1}, /* residual Add */
      {1, 16, 6, 5, 16, 1, 3, 3, 2, 1, 1, 2, 1, 2, 1, 0, I8, U8, 0, 1, 0, 2, U8, 1},  /* 3x3 window, Mul */
      /* f32 y (format 2.13): acc * mult[m] as float, no requantization; NC1HWC0 padding lanes 0 */
      {1, 16, 8, 8, 16, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, U8, F32, 0, 1, 0, 0, 0, 0}, /* 3x3 same */
      {2, 3, 11, 13, 37, 1,   7, 7, 2, 2, 1, 1,
       3, 3, 3,  3,  I8, F32, 0, 1, 0, 0, 0, 0}, /* RGB stem window, odd Cout */
      {1, 40, 10, 9, 70, 1, 3, 3, 2, 1, 2, 2, 2, 1, 0, 3, U8, F32, 0, 0, 0, 0, 0, 0}, /* dilated, tails */
      {1, 48, 5, 6, 36, 6, 3, 1, 1, 2, 1, 1, 1, 0, 1, 0, I8, F32, 0, 1, 0, 0, 0, 0},  /* groups */
      {1, 24, 6, 5, 24, 24, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, U8, F32, 0, 1, 0, 0, 0, 0}, /* depthwise */
      {1, 200, 1, 1, 70, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, I8, F32, 0, 1, 0, 0, 0, 0}, /* a classifier row */
      {1, 64, 1, 45, 48, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, U8, F32, 0, 1, 0, 0, 0, 1}, /* NHWC rows */
      /* K past the AVX2 tile's widened chunk (512 k); more than its 60 pixels a pass */
      {1, 16, 12, 12, 16, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, U8, U8, 0, 1, 0, 0, 0, 0}, /* 3 passes of 48 */
      {1, 300, 9, 7, 40, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, U8, U8, 1, 1, 0, 0, 0, 0},  /* 3 taps a chunk */
      {1, 1100, 2, 3, 20, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, I8, I8, 0, 1, 0, 0, 0, 0}, /* 1 tap, 2 chunks */
      {1, 1040, 5, 11, 24, 1,   3, 3, 1, 1, 1, 1,
       1, 1,    1, 1,  U8, F32, 0, 1, 0, 0, 0, 0}, /* 2 chunks a tap, 55 pixels */
      /* the AVX2 tile's x and weights widened to pairs of k: chunks of 512 k, passes of 60 pixels read by
       * up to 8 output blocks, groups of 4 past x's channels left out (K 4, 6, 34: a pair never
       * straddles a group) */
      {1, 96, 9, 8, 160, 1,  3, 3, 1, 1, 1, 1,
       1, 1,  1, 1, I8,  U8, 1, 1, 0, 0, 0, 0},                                     /* 2 chunks x 10 blocks */
      {1, 6, 5, 7, 20, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, I8, U8, 0, 1, 0, 1, I8, 0}, /* K 6, Add */
      {1, 34, 11, 13, 40, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, U8, I8, 1, 0, 1, 0, 0, 0}, /* K 34: 2 passes */
      {1, 4, 7, 6, 24, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, I8, I8, 1, 1, 0, 2, U8, 0},   /* K 4 a tap, Mul */
      {1, 150, 4, 5, 300, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, U8, U8, 0, 1, 0, 0, 0, 0}, /* groups of 50 in */
      {1, 128, 4, 4, 256, 2,  3, 3, 1, 1, 1,  1,
       1, 1,   1, 1, I8,  U8, 1, 1, 0, 1, U8, 0}, /* 2 groups x 8 blocks */
      {1, 3, 12, 11, 70, 1,  5, 5, 2, 2, 1, 1,
       2, 2, 2,  2,  I8, U8, 1, 0, 1, 0, 0, 0}, /* i8 window, per-tensor */
      /* the AVX2 tile with its weights widened at load (maps past one pass of 60 pixels; smaller ones, and
       * the task path without a load, take the tile's own widening): K in slices of taps and of blocks */
      {1, 1040, 9, 8, 24, 1,  3, 3, 1, 1, 1,  1,
       1, 1,    1, 1, I8, U8, 1, 1, 0, 1, U8, 0}, /* 2 chunks a tap, Add */
      {1, 150, 17, 17, 300, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, U8, U8, 0, 0, 0, 0, 0, 0}, /* groups of 50, s2 */
      {1, 72, 12, 13, 40, 1,  3, 3, 2, 1, 2,  1,
       0, 2,  1,  1,  I8, I8, 1, 0, 0, 2, I8, 0}, /* dilated, K odd, Mul */
      {1, 36, 31, 3, 20, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, U8, F32, 0, 1, 0, 0, 0, 0},    /* 3 wide, f32 y */
      {1, 64, 16, 16, 64, 1, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0, U8, U8, 1, 1, 1, 0, 0, 0},    /* s2, ties */
      {1, 256, 10, 10, 128, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, I8, U8, 0, 1, 0, 1, U8, 1}, /* NHWC, Add */
  };
  /* extreme values: exact int32 sums (f32 y shows them) where pairs of u8 x i8 products leave int16 */
  const qcase extremes[] = {
      {1, 64, 6, 6, 32, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, U8, F32, 0, 1, 0, 0, 0, 0},
      {1, 35, 5, 4, 20, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, I8, F32, 0, 1, 0, 0, 0, 0},
      {1, 32, 6, 6, 32, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, U8, U8, 0, 0, 1, 0, 0, 0},
      {1, 32, 6, 6, 32, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, U8, F32, 0, 1, 0, 0, 0, 0}, /* depthwise */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    run_case(&cases[i], 0);
  for (size_t i = 0; i < sizeof extremes / sizeof *extremes; i++)
    run_case(&extremes[i], 1);
  test_rejects();
  return test_summary("test_qconv");
}
