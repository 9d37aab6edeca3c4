/* test_dwconv_small.c - DWCONV on small planes, where most output pixels'
 * windows reach into the padding (EfficientNet's 5x5 depthwise convs at 7x7
 * and 14x14), against a plain NCHW reference in f64: every window the x86
 * path instantiates (3x3 and 5x5, stride 1 and 2, 3x3 dilation 2, 7x7
 * stride 1) and one it does not (7x7 stride 2), rows narrower than its 8-pixel blocks and than the
 * kernel itself, asymmetric padding, f16 and f32, with bias, residual and
 * activation, several blocks. Weights and inputs are rounded to the input
 * dtype first, so what is left is the output rounding and summation order.
 * Outputs start as garbage and their padding lanes must come out zero.
 *
 * The kernel runs on the path rt_cpu() picks (printed first): the x86 one
 * (dwconv_x86.inc: ZMM on AVX-512 hosts, YMM under OMRT_AVX512=0 or
 * without AVX-512) on hosts that have AVX2, the portable one under
 * OMRT_PORTABLE=1.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fp16.h"
#include "kcase.h"

static uint32_t rng_state = 4242;
static float frand(void) { /* [-1, 1) */
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)(rng_state >> 8) / (float)(1u << 23) - 1.0f;
}

static float round_dt(float v, int dt) { return dt == DT_FLOAT16 ? half_to_float(float_to_half(v)) : v; }

enum {
  X = OM_CONV_T_X,
  W = OM_CONV_T_W,
  BIAS = OM_CONV_T_BIAS,
  RES = OM_CONV_T_RESIDUAL,
  Y = OM_CONV_T_Y,
  NSLOTS = OM_CONV_NTENSORS
};

typedef struct shape {
  int64_t n, c, h, w;
  int k, s, d, pt, pl, pb, pr;
} shape;

/* act 0 plain, 1 Relu with residual, 2 Clip [-0.3, 0.4] with bias only;
 * up to bd blocks. */
static void run_case(const shape *sh, int xdt, int ydt, int act, uint32_t bd) {
  const uint32_t planes = (uint32_t)(sh->n * ((sh->c + 15) / 16));
  if (bd > planes) bd = planes;
  kcase c;
  kc_setup(&c, OM_TASK_DWCONV, bd, NSLOTS);
  const int64_t ho = (sh->h + sh->pt + sh->pb - sh->d * (sh->k - 1) - 1) / sh->s + 1;
  const int64_t wo = (sh->w + sh->pl + sh->pr - sh->d * (sh->k - 1) - 1) / sh->s + 1;
  const int64_t xd[4] = {sh->n, sh->c, sh->h, sh->w}, wd[4] = {1, sh->c, sh->k, sh->k}, bd1[1] = {sh->c};
  const int64_t yd[4] = {sh->n, sh->c, ho, wo};
  kc_set_layout(&c, X, xdt, LAYOUT_NC1HWC0, 4, xd);
  kc_set_layout(&c, W, xdt, LAYOUT_NC1HWC0, 4, wd);
  kc_set(&c, BIAS, DT_FLOAT32, 1, bd1);
  if (act == 1)
    kc_set_layout(&c, RES, ydt, LAYOUT_NC1HWC0, 4, yd);
  else
    c.task.tensors[RES] = OM_NONE;
  kc_set_layout(&c, Y, ydt, LAYOUT_NC1HWC0, 4, yd);
  const float lo = -0.3f, hi = 0.4f;
  int32_t *q = c.task.params;
  q[OM_CONV_P_KH] = q[OM_CONV_P_KW] = sh->k, q[OM_CONV_P_STRIDE_H] = q[OM_CONV_P_STRIDE_W] = sh->s;
  q[OM_CONV_P_PAD_TOP] = sh->pt, q[OM_CONV_P_PAD_LEFT] = sh->pl, q[OM_CONV_P_PAD_BOTTOM] = sh->pb;
  q[OM_CONV_P_PAD_RIGHT] = sh->pr, q[OM_CONV_P_DILATION_H] = q[OM_CONV_P_DILATION_W] = sh->d;
  q[OM_CONV_P_ACT] = act == 1 ? OM_ACT_RELU : act == 2 ? OM_ACT_CLIP : OM_ACT_NONE;
  memcpy(&q[OM_CONV_P_CLIP_MIN], &lo, 4), memcpy(&q[OM_CONV_P_CLIP_MAX], &hi, 4);

  const size_t nx = (size_t)(sh->n * sh->c * sh->h * sh->w), nw = (size_t)(sh->c * sh->k * sh->k);
  const size_t ny = (size_t)(sh->n * sh->c * ho * wo);
  float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w), *b = malloc((size_t)sh->c * sizeof *b);
  float *r = malloc(ny * sizeof *r);
  for (size_t i = 0; i < nx; i++)
    x[i] = round_dt(frand(), xdt);
  for (size_t i = 0; i < nw; i++)
    w[i] = round_dt(0.5f * frand(), xdt);
  for (int64_t i = 0; i < sh->c; i++)
    b[i] = 0.5f * frand();
  for (size_t i = 0; i < ny; i++)
    r[i] = round_dt(frand(), ydt);
  kc_put_nc1hwc0(&c, X, x);
  kc_put_nc1hwc0(&c, W, w);
  memcpy(c.data[BIAS], b, (size_t)sh->c * sizeof *b);
  if (act == 1) kc_put_nc1hwc0(&c, RES, r);

  omrt_status s = kc_check(&c);
  CHECK_EQ_INT(s, OMRT_OK);
  if (s != OMRT_OK) test_note("  %s", omrt_last_error());
  if (s == OMRT_OK) kc_run_blocks(&c, kc_core());

  double worst = 0.0;
  size_t badpad = 0;
  const double tol = ydt == DT_FLOAT16 ? 2e-3 : 1e-5;
  for (int64_t n = 0; n < sh->n; n++)
    for (int64_t ch = 0; ch < (sh->c + 15) / 16 * 16; ch++)
      for (int64_t oh = 0; oh < ho; oh++)
        for (int64_t ow = 0; ow < wo; ow++) {
          const float got = rt_get(c.data[Y], ydt, nc1hwc0_at(yd, n, ch, oh, ow));
          if (ch >= sh->c) {
            badpad += got != 0.0f || signbit(got);
            continue;
          }
          const size_t yi = (size_t)(((n * sh->c + ch) * ho + oh) * wo + ow);
          double acc = b[ch];
          for (int i = 0; i < sh->k; i++)
            for (int j = 0; j < sh->k; j++) {
              const int64_t ih = oh * sh->s - sh->pt + i * sh->d, iw = ow * sh->s - sh->pl + j * sh->d;
              if (ih >= 0 && ih < sh->h && iw >= 0 && iw < sh->w)
                acc +=
                    (double)x[((n * sh->c + ch) * sh->h + ih) * sh->w + iw] * w[(ch * sh->k + i) * sh->k + j];
            }
          if (act == 1) acc = fmax(acc + r[yi], 0.0);
          if (act == 2) acc = fmin(fmax(acc, lo), hi);
          const double err = fabs(got - acc) / fmax(1.0, fabs(acc));
          if (!(err <= worst)) worst = err;
        }
  int ok = worst <= tol && badpad == 0;
  test_check(ok, __FILE__, __LINE__, "dwconv small plane");
  if (!ok)
    test_note(
        "  %lldx%lldx%lldx%lld k%d s%d d%d pads %d,%d,%d,%d %s->%s act %d: error %g (tolerance %g), %zu "
        "nonzero padding lanes",
        (long long)sh->n, (long long)sh->c, (long long)sh->h, (long long)sh->w, sh->k, sh->s, sh->d, sh->pt,
        sh->pl, sh->pb, sh->pr, xdt == DT_FLOAT16 ? "f16" : "f32", ydt == DT_FLOAT16 ? "f16" : "f32", act,
        worst, tol, badpad);
  free(x), free(w), free(b), free(r);
  kc_free(&c);
}

int main(void) {
  const int F16 = DT_FLOAT16, F32 = DT_FLOAT32;
  printf("kernel paths: %s\n", rt_cpu()->name);
  /* clang-format off */
  static const shape shapes[] = {
      /* n c h w | k s d pt pl pb pr */
      {1, 40, 7, 7, 5, 1, 1, 2, 2, 2, 2},     /* EfficientNet-B0's 5x5 at 7x7 */
      {1, 40, 14, 14, 5, 1, 1, 2, 2, 2, 2},   /* ... at 14x14 */
      {1, 24, 14, 14, 5, 2, 1, 2, 2, 2, 2},   /* 14x14 -> 7x7 */
      {2, 20, 7, 7, 3, 1, 1, 1, 1, 1, 1},
      {1, 33, 14, 14, 3, 2, 1, 0, 0, 1, 1},   /* TF-style asymmetric padding */
      {1, 16, 9, 9, 3, 1, 2, 2, 2, 2, 2},     /* dilation 2 */
      {1, 17, 3, 2, 5, 1, 1, 2, 2, 2, 2},     /* rows narrower than the kernel */
      {1, 16, 1, 1, 3, 1, 1, 1, 1, 1, 1},
      {1, 16, 5, 4, 5, 1, 1, 1, 3, 3, 1},     /* asymmetric */
      {1, 48, 6, 17, 5, 2, 1, 2, 2, 2, 2},    /* one full 8-pixel block and a short one */
      {1, 16, 11, 21, 3, 1, 1, 1, 1, 1, 1},   /* interior blocks between the edges */
      {1, 16, 6, 6, 7, 1, 1, 3, 3, 3, 3},     /* ConvNeXt's 7x7 on a plane smaller than the kernel's reach */
      {1, 96, 7, 7, 7, 1, 1, 3, 3, 3, 3},     /* ... at ConvNeXt-Tiny's last stage, 7x7 */
      {1, 16, 14, 14, 7, 1, 1, 2, 3, 4, 3},   /* ... asymmetric */
      {1, 16, 9, 9, 7, 2, 1, 3, 3, 3, 3},     /* a window the x86 path does not instantiate */
  };
  /* clang-format on */
  for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
    run_case(&shapes[i], F16, F16, 1, 3);
    run_case(&shapes[i], F32, F32, 0, 2);
    run_case(&shapes[i], F16, F32, 2, 1);
    run_case(&shapes[i], F32, F16, 1, 2);
  }
  return test_summary("dwconv_small");
}
