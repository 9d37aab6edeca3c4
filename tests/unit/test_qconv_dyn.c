/* test_qconv_dyn.c - QCONV2D with a run-time x zero point (format 2.15:
 * ONNX's ConvInteger -> Cast -> Mul -> Add -> Relu | Clip of a dynamically
 * quantized CNN) against the reference evaluator's QConv in the same form
 * (ir/eval_quant.c): random u8 x, a zero point anywhere in 0..255 (read from
 * its tensor), i8 weights packed by lower/qconv_weights.c with their column
 * sums, over odd channel counts, strides, asymmetric pads, dilations,
 * groups and depthwise; a scale per tensor or per output channel, with or
 * without the f32 bias and the clamp (lower bound only, both bounds), and
 * the i32 y of an unfolded ConvInteger. Each case runs the task as libomrt
 * runs it (rt_cpu()'s tile: the ctest variants force OMRT_PORTABLE=1 and
 * OMRT_AVX512=0) and then every tile function this CPU can run directly
 * (portable C, AVX2, AVX-512 VNNI), and compares the output bytes with the
 * evaluator's: identical, NC1HWC0 padding lanes 0. Also the load-time
 * check's refusals of the form.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evalref.h"
#include "ir/eval.h"
#include "ir/shape.h"
#include "kcase.h"
#include "lower/qconv_weights.h"
#include "runtime/kernels_qconv.h"

static uint32_t rng = 4242;
static uint32_t next(void) {
  rng = rng * 1664525u + 1013904223u;
  return rng >> 8;
}

typedef struct dcase {
  int64_t n, c, h, w, m, group;
  int kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
  int scale;  /* 0: i32 y (no scale), 1: per tensor, 2: per output channel */
  int fbias;  /* the f32 bias */
  int fclamp; /* bit 0: f_lo, bit 1: f_hi */
} dcase;

enum {
  X = OM_QCONV_T_X,
  W = OM_QCONV_T_W,
  B = OM_QCONV_T_BIAS,
  S = OM_QCONV_T_MULT,
  Y = OM_QCONV_T_Y,
  R = OM_QCONV_T_R,
  Z = OM_QCONV_T_X_ZP,
  FB = OM_QCONV_T_FBIAS
};

static const float F_LO = 0.0f, F_HI = 6.0f;

/* The evaluator's QConv output (NCHW elements of 4 bytes), or NULL. */
static void *reference(const dcase *q, const uint8_t *x, const int8_t *w, uint8_t zp, const float *scale,
                       const float *fbias, const int64_t *ydims, arena *a) {
  ir_graph *g = ir_graph_new("qconv_dyn", 0);
  const int64_t xd[4] = {q->n, q->c, q->h, q->w}, wd[4] = {q->m, q->c / q->group, q->kh, q->kw},
                sd[1] = {q->scale == 2 ? q->m : 1}, md[1] = {q->m};
  ir_value *xv = ir_value_new(g, "x", DT_UINT8), *zv = ir_value_new(g, "z", DT_UINT8),
           *sv = ir_value_new(g, "s", DT_FLOAT32);
  ir_value_set_shape(xv, 4, xd);
  ir_value_set_shape(zv, 0, NULL);
  ir_value_set_shape(sv, 1, sd);
  ir_value *in[5] = {xv, ir_const_new(g, "w", DT_INT8, 4, wd, w, (size_t)(wd[0] * wd[1] * wd[2] * wd[3])), zv,
                     sv, q->fbias ? ir_const_new(g, "fb", DT_FLOAT32, 1, md, fbias, 4 * (size_t)q->m) : NULL};
  ir_value *yv = ir_value_new(g, "y", q->scale ? DT_FLOAT32 : DT_INT32);
  ir_node *nd = ir_node_new(g, IR_OP_QCONV, "qc", q->scale ? (q->fbias ? 5 : 4) : 3, in, 1, &yv);
  const int64_t ks[2] = {q->kh, q->kw}, st[2] = {q->sh, q->sw}, dl[2] = {q->dh, q->dw},
                pads[4] = {q->pt, q->pl, q->pb, q->pr};
  ir_attr_set_ints(g, nd, "kernel_shape", 2, ks);
  ir_attr_set_ints(g, nd, "strides", 2, st);
  ir_attr_set_ints(g, nd, "dilations", 2, dl);
  ir_attr_set_ints(g, nd, "pads", 4, pads);
  ir_attr_set_int(g, nd, "group", q->group);
  ir_attr_set_int(g, nd, "rt_x_zp", 1);
  ir_attr_set_int(g, nd, "to", q->scale ? DT_FLOAT32 : DT_INT32);
  if (q->fclamp & 1) ir_attr_set_float(g, nd, "f_lo", F_LO);
  if (q->fclamp & 2) ir_attr_set_float(g, nd, "f_hi", F_HI);
  const void *ins[5] = {x, w, &zp, scale, fbias};
  void *outs[1] = {0}, *out = NULL;
  if (!er_eval(g, nd, ins, outs, a)) {
    if (memcmp(ydims, yv->dims, 4 * sizeof *ydims))
      test_note("y dims differ from the test's");
    else
      out = outs[0];
  }
  ir_graph_free(g);
  return out;
}

/* ND [N, C, HW] elements of 4 bytes -> NC1HWC0, padding lanes 0. */
static void to_5hd(uint8_t *dst, const uint8_t *src, int64_t n, int64_t c, int64_t hw) {
  const int64_t c1 = (c + 15) / 16;
  memset(dst, 0, (size_t)(n * c1 * hw * 16) * 4);
  for (int64_t i = 0; i < n; i++)
    for (int64_t ch = 0; ch < c; ch++)
      for (int64_t p = 0; p < hw; p++)
        memcpy(dst + (size_t)(((i * c1 + ch / 16) * hw + p) * 16 + ch % 16) * 4,
               src + (size_t)((i * c + ch) * hw + p) * 4, 4);
}

/* The task of case q over x (NCHW u8) and the packed w, set up in *c;
 * returns the packed geometry's C1out. */
static int64_t setup(kcase *c, const dcase *q, const uint8_t *x, const int8_t *w, uint8_t zp,
                     const float *scale, const float *fbias, const int64_t *yd) {
  qconvw_geom gm;
  qconvw_init(q->m, q->c, q->group, q->kh, q->kw, &gm);
  const int64_t c16 = gm.c1out * 16, one = 1, ns = q->scale == 2 ? q->m : 1;
  int64_t pd[4];
  qconvw_dims(&gm, pd);
  const int64_t m = yd[2] * yd[3], mt = 5, nt = 2;
  const uint32_t tiles = (uint32_t)(q->n * ((m + mt - 1) / mt) * ((gm.c1out + nt - 1) / nt));
  kc_setup(c, OM_TASK_QCONV2D, tiles < 3 ? tiles : 3, OM_QCONV_NTENSORS_DYN);
  const int64_t xd[4] = {q->n, q->c, q->h, q->w};
  kc_set_layout(c, X, DT_UINT8, LAYOUT_NC1HWC0, 4, xd);
  kc_set(c, W, DT_INT8, 4, pd);
  kc_set(c, B, DT_INT32, 1, &c16);
  kc_set(c, S, DT_FLOAT32, 1, &ns);
  kc_set_layout(c, Y, q->scale ? DT_FLOAT32 : DT_INT32, LAYOUT_NC1HWC0, 4, yd);
  c->task.tensors[R] = OM_NONE;
  kc_set(c, Z, DT_UINT8, 1, &one);
  if (q->fbias)
    kc_set(c, FB, DT_FLOAT32, 1, &c16);
  else
    c->task.tensors[FB] = OM_NONE;
  /* x: NC1HWC0, padding lanes anything (their weights are 0) */
  const int64_t hw = q->h * q->w, c1 = (q->c + 15) / 16;
  uint8_t *xd5 = c->data[X];
  memset(xd5, 0x5a, (size_t)c->t[X].bytes);
  for (int64_t i = 0; i < q->n; i++)
    for (int64_t ch = 0; ch < q->c; ch++)
      for (int64_t p = 0; p < hw; p++)
        xd5[((i * c1 + ch / 16) * hw + p) * 16 + ch % 16] = x[(i * q->c + ch) * hw + p];
  memset(c->data[W], 0, (size_t)qconvw_bytes(&gm));
  qconvw_pack(&gm, w, c->data[W]);
  int32_t *zero = calloc((size_t)c16, sizeof(int32_t));
  float *fz = calloc((size_t)c16, sizeof(float));
  qconvw_bias(&gm, w, zero, fz, -1, c->data[B], fz); /* the column sums */
  memcpy(c->data[S], scale, sizeof(float) * (size_t)ns);
  *(uint8_t *)c->data[Z] = zp;
  if (q->fbias) {
    memset(c->data[FB], 0, sizeof(float) * (size_t)c16);
    memcpy(c->data[FB], fbias, sizeof(float) * (size_t)q->m);
  }
  free(zero), free(fz);
  int32_t *p = c->task.params;
  p[OM_CONV_P_KH] = q->kh, p[OM_CONV_P_KW] = q->kw, p[OM_CONV_P_STRIDE_H] = q->sh,
  p[OM_CONV_P_STRIDE_W] = q->sw;
  p[OM_CONV_P_PAD_TOP] = q->pt, p[OM_CONV_P_PAD_LEFT] = q->pl, p[OM_CONV_P_PAD_BOTTOM] = q->pb;
  p[OM_CONV_P_PAD_RIGHT] = q->pr, p[OM_CONV_P_DILATION_H] = q->dh, p[OM_CONV_P_DILATION_W] = q->dw;
  p[OM_QCONV_P_TILE_M] = (int32_t)mt, p[OM_QCONV_P_TILE_N] = (int32_t)nt,
  p[OM_QCONV_P_GROUPS] = (int32_t)q->group;
  p[OM_QCONV_P_F_CLAMP] = q->fclamp;
  p[OM_QCONV_P_F_LO] = q->fclamp & 1 ? (int32_t)rt_f32_bits(F_LO) : 0;
  p[OM_QCONV_P_F_HI] = q->fclamp & 2 ? (int32_t)rt_f32_bits(F_HI) : 0;
  return gm.c1out;
}

static void run_case(const dcase *q) {
  arena a;
  arena_init(&a, 0);
  const int64_t cg = q->c / q->group, nx = q->n * q->c * q->h * q->w, nw = q->m * cg * q->kh * q->kw;
  uint8_t *x = malloc((size_t)nx);
  int8_t *w = malloc((size_t)nw);
  float *scale = malloc(4 * (size_t)q->m), *fbias = malloc(4 * (size_t)q->m);
  for (int64_t i = 0; i < nx; i++)
    x[i] = (uint8_t)next();
  for (int64_t i = 0; i < nw; i++)
    w[i] = (int8_t)next();
  const uint8_t zp = (uint8_t)next();
  for (int64_t i = 0; i < q->m; i++) { /* outputs of a few units, both signs, so the clamps bite */
    scale[i] = 1.0f / (float)(2000 + next() % 20000);
    fbias[i] = (float)((int)(next() % 2001) - 1000) * 1e-3f;
  }
  const int64_t yd[4] = {q->n, q->m, (q->h + q->pt + q->pb - q->dh * (q->kh - 1) - 1) / q->sh + 1,
                         (q->w + q->pl + q->pr - q->dw * (q->kw - 1) - 1) / q->sw + 1};
  const void *want = reference(q, x, w, zp, scale, fbias, yd, &a);
  CHECK(want != NULL);
  kcase c;
  const int64_t c1out = setup(&c, q, x, w, zp, scale, fbias, yd);
  omrt_status s = kc_check(&c);
  CHECK_EQ_INT(s, OMRT_OK);
  if (s != OMRT_OK) test_note("  %s", omrt_last_error());
  const size_t ybytes = (size_t)c.t[Y].bytes;
  uint8_t *want5 = malloc(ybytes), *got = c.data[Y];
  if (want) to_5hd(want5, want, q->n, q->m, yd[2] * yd[3]);
  rt_args args;
  kc_args(&c, &args);
  struct {
    const char *name;
    rt_qconv_tile_fn fn;
  } paths[4] = {{"task", NULL}, {"portable", rt_qconv_tile_c}};
  int np = 2;
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx2")) paths[np].name = "avx2", paths[np++].fn = rt_qconv_tile_avx2;
  if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw"))
    paths[np].name = "avx512vnni", paths[np++].fn = rt_qconv_tile_vnni;
#endif
  for (int k = 0; k < np && s == OMRT_OK && want; k++) {
    memset(got, 0x7f, ybytes);
    if (!paths[k].fn) {
      kc_run_blocks(&c, kc_core());
    } else {
      rt_qconv_geom g;
      rt_qconv_geom_init(&c.task, &args, &g);
      for (int64_t img = 0; img < q->n; img++)
        paths[k].fn(&g, img, 0, yd[2] * yd[3], 0, c1out);
    }
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < ybytes; i++)
      if (got[i] != want5[i] && !bad++) first = i;
    CHECK(bad == 0);
    if (bad)
      test_note("  %s: %lldx%lldx%lldx%lld -> %lld, k %dx%d s %d,%d d %d,%d group %lld scale %d fbias %d "
                "clamp %d: %zu bytes differ, first at %zu",
                paths[k].name, (long long)q->n, (long long)q->c, (long long)q->h, (long long)q->w,
                (long long)q->m, q->kh, q->kw, q->sh, q->sw, q->dh, q->dw, (long long)q->group, q->scale,
                q->fbias, q->fclamp, bad, first);
  }
  free(want5), free(x), free(w), free(scale), free(fbias);
  kc_free(&c);
  arena_free(&a);
}

static void test_rejects(void) {
  const dcase q = {1, 16, 4, 4, 20, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 3};
  uint8_t x[256] = {0};
  int8_t w[20 * 16 * 9] = {0};
  float scale[20] = {0}, fbias[20] = {0};
  const int64_t yd[4] = {1, 20, 4, 4}, two = 2;
  kcase c;
  setup(&c, &q, x, w, 3, scale, fbias, yd);
  CHECK_EQ_INT(kc_check(&c), OMRT_OK);
  c.task.params[OM_QCONV_P_X_ZP] = 3;
  expect_reject(&c, "x_zp param", "expected 0 with a run-time x zero point");
  c.task.params[OM_QCONV_P_X_ZP] = 0;
  c.task.params[OM_QCONV_P_F_LO] = (int32_t)rt_f32_bits(7.0f);
  expect_reject(&c, "f_lo > f_hi", "f_clamp");
  c.task.params[OM_QCONV_P_F_LO] = (int32_t)rt_f32_bits(NAN);
  expect_reject(&c, "f_lo NaN", "f_clamp");
  c.task.params[OM_QCONV_P_F_LO] = 0;
  c.task.params[OM_QCONV_P_F_CLAMP] = 4;
  expect_reject(&c, "f_clamp 4", "f_clamp");
  c.task.params[OM_QCONV_P_F_CLAMP] = 3;
  kc_set(&c, S, DT_FLOAT32, 1, &two);
  expect_reject(&c, "scale of 2 elements", "scale has 2 elements, expected 1 or 20");
  kc_free(&c);
  setup(&c, &q, x, w, 3, scale, fbias, yd);
  kc_set(&c, Z, DT_UINT8, 1, &two);
  expect_reject(&c, "x_zp of 2 elements", "x_zp of one element");
  kc_free(&c);
  setup(&c, &q, x, w, 3, scale, fbias, yd);
  const int64_t yd5[4] = {1, 20, 4, 4};
  kc_set_layout(&c, Y, DT_INT32, LAYOUT_NC1HWC0, 4, yd5);
  expect_reject(&c, "i32 y with a bias and a clamp", "none with i32 y");
  kc_free(&c);
}

int main(void) {
  static const dcase cases[] = {
      /* n c h w m group, kh kw sh sw dh dw pt pl pb pr, scale fbias fclamp */
      {1, 16, 7, 7, 20, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1},  /* ResNet's: per-channel, bias, Relu */
      {2, 3, 9, 8, 16, 1, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 3},   /* an RGB stem, Clip(0, 6) */
      {1, 24, 6, 5, 24, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 3}, /* depthwise, ReLU6 */
      {1, 32, 9, 9, 32, 32, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1, 1, 0, 0}, /* depthwise, stride 2, asymmetric pads */
      {1, 40, 5, 6, 33, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 1, 0},  /* 1x1, Cout 33 */
      {1, 12, 8, 8, 18, 3, 3, 3, 1, 1, 2, 2, 2, 1, 2, 0, 1, 0, 1},  /* groups 3, dilation 2 */
      {1, 20, 5, 5, 21, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0},  /* i32 y (no scale) */
      {1, 64, 4, 4, 64, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0},  /* i32 y, full blocks */
      {1, 160, 4, 3, 70, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 2}, /* K past 1024, f_hi only */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    run_case(&cases[i]);
  test_rejects();
  return test_summary("test_qconv_dyn");
}
