/* test_conv_transpose.c - ConvTranspose's two lowerings (frontend/onnx_conv.c)
 * against a direct transposed convolution written here.
 *
 * Strided 1-D and 2-D ConvTransposes with dilations 1 whose crop covers the
 * output take the phase split: one stride-1 Conv with ceil(k/s) taps per
 * axis and M*s_h*s_w output channels, its phases interleaved by
 * Reshape-Transpose-Reshape; the rest (dilations, an output_padding that
 * reaches past the phases' output, stride 1) keep the zero-inserted input.
 * Cases: conv_tasnet's decoder shape (k = 2s), k not a multiple of s, k <
 * s, groups, asymmetric pads, output_padding either way, dilation 2, with
 * and without bias. Each case checks which lowering the import chose (the
 * Conv's kernel_shape) and runs in both precision modes through libomrt on
 * constant random weights and a random x: max |error| within 1e-5
 * (must_keep_origin_dtype) or 1e-2 (force_fp16) of the largest |y|,
 * against y[n][g*og+o][t] = bias + sum x[n][g*ig+c][i] w[g*ig+c][o][j] over
 * t = i*s - pad_begin + j*d, in double.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/eval.h"
#include "omrt.h"
#include "onnx_mb.h"
#include "support.h"

typedef struct tcase {
  int r;                               /* spatial rank, 1 or 2 */
  int64_t n, c, m, group, in[2], k[2]; /* x [n, c, in...], w [c, m/group, k...] */
  int64_t s[2], d[2], pads[4], opad[2];
  int bias, phases; /* phases: the phase split is expected */
} tcase;

static int64_t out_dim(const tcase *t, int i) {
  return t->s[i] * (t->in[i] - 1) + t->opad[i] + t->d[i] * (t->k[i] - 1) + 1 - t->pads[i] - t->pads[t->r + i];
}

static double rnd(unsigned *seed) {
  *seed = *seed * 1103515245u + 12345u;
  return (double)((*seed >> 9) % 2001) / 1000.0 - 1.0;
}

/* The direct transposed convolution, in double (2-D; 1-D as H = 1). */
static void reference(const tcase *t, const float *x, const float *w, const float *b, double *y) {
  int64_t ih = t->r == 2 ? t->in[0] : 1, iw = t->in[t->r - 1], kh = t->r == 2 ? t->k[0] : 1,
          kw = t->k[t->r - 1];
  int64_t sh = t->r == 2 ? t->s[0] : 1, sw = t->s[t->r - 1], dh = t->r == 2 ? t->d[0] : 1,
          dw = t->d[t->r - 1];
  int64_t ph = t->r == 2 ? t->pads[0] : 0, pw = t->pads[t->r - 1];
  int64_t oh = t->r == 2 ? out_dim(t, 0) : 1, ow = out_dim(t, t->r - 1);
  int64_t ig = t->c / t->group, og = t->m / t->group;
  for (int64_t i = 0; i < t->n * t->m * oh * ow; i++)
    y[i] = b ? b[(i / (oh * ow)) % t->m] : 0;
  for (int64_t n = 0; n < t->n; n++)
    for (int64_t c = 0; c < t->c; c++)
      for (int64_t o = 0; o < og; o++)
        for (int64_t a = 0; a < ih; a++)
          for (int64_t e = 0; e < iw; e++)
            for (int64_t p = 0; p < kh; p++)
              for (int64_t q = 0; q < kw; q++) {
                int64_t yh = a * sh - ph + p * dh, yw = e * sw - pw + q * dw, m = (c / ig) * og + o;
                if (yh < 0 || yh >= oh || yw < 0 || yw >= ow) continue;
                y[((n * t->m + m) * oh + yh) * ow + yw] +=
                    (double)x[((n * t->c + c) * ih + a) * iw + e] * w[((c * og + o) * kh + p) * kw + q];
              }
}

static void run_case(const tcase *t, om_precision prec) {
  int r = t->r;
  int64_t xd[4] = {t->n, t->c}, wd[4] = {t->c, t->m / t->group}, nx = t->n * t->c,
          nw = t->c * (t->m / t->group);
  for (int i = 0; i < r; i++)
    xd[2 + i] = t->in[i], wd[2 + i] = t->k[i], nx *= t->in[i], nw *= t->k[i];
  float *x = malloc((size_t)nx * sizeof *x), *w = malloc((size_t)nw * sizeof *w), bias[64];
  unsigned seed = 11;
  for (int64_t i = 0; i < nx; i++)
    x[i] = (float)rnd(&seed);
  for (int64_t i = 0; i < nw; i++)
    w[i] = (float)(rnd(&seed) / 2);
  for (int64_t i = 0; i < t->m; i++)
    bias[i] = (float)rnd(&seed);

  mb m;
  mb_init(&m, 17);
  mb_input(&m, "x", 1, 2 + r, xd, NULL);
  mb_init_raw(&m, "w", 1, 2 + r, wd, w, (size_t)nw * sizeof *w);
  if (t->bias) mb_init_raw(&m, "b", 1, 1, &t->m, bias, (size_t)t->m * sizeof *bias);
  Onnx__NodeProto *nd = mb_node(&m, "ConvTranspose", "ct", t->bias ? "x,w,b" : "x,w", "y");
  attr_ints(&m, nd, "kernel_shape", r, t->k);
  attr_ints(&m, nd, "strides", r, t->s);
  attr_ints(&m, nd, "dilations", r, t->d);
  attr_ints(&m, nd, "pads", 2 * r, t->pads);
  attr_ints(&m, nd, "output_padding", r, t->opad);
  attr_int(&m, nd, "group", t->group);
  mb_output(&m, "y");
  ir_graph *g = EXPECT_OK(&m, ".", NULL);
  if (g) { /* the phase split's Conv has ceil(k/s) taps (H = 1 for 1-D) */
    ir_node *cv = find_node(g, IR_OP_CONV);
    int64_t taps[2] = {1, 1};
    for (int i = 0; i < r; i++)
      taps[2 - r + i] = t->phases ? (t->k[i] + t->s[i] - 1) / t->s[i] : t->k[i];
    CHECKF(cv && attr_ints_are(cv, "kernel_shape", 2, taps), "  case k %lld s %lld: %s lowering expected",
           (long long)t->k[r - 1], (long long)t->s[r - 1], t->phases ? "phase-split" : "zero-insertion");
  }
  mb_run run;
  if (mb_run_open(&m, "ConvTranspose", prec, &run)) {
    omrt_tensor_desc d;
    CHECK_EQ_INT(omrt_model_output(run.model, 0, &d), OMRT_OK);
    int64_t ny = t->n * t->m;
    for (int i = 0; i < r; i++) {
      ny *= out_dim(t, i);
      CHECK_EQ_INT(d.dims[2 + i], out_dim(t, i));
    }
    float *y = malloc((size_t)ny * sizeof *y);
    double *ref = malloc((size_t)ny * sizeof *ref);
    const void *in[1] = {x};
    void *out[1] = {y};
    CHECK_EQ_INT(omrt_execute(run.ctx, in, out), OMRT_OK);
    reference(t, x, w, t->bias ? bias : NULL, ref);
    double mx = 0, err = 0;
    for (int64_t i = 0; i < ny; i++) {
      mx = fabs(ref[i]) > mx ? fabs(ref[i]) : mx;
      err = fabs(y[i] - ref[i]) > err ? fabs(y[i] - ref[i]) : err;
    }
    double tol = (prec == OM_PRECISION_FORCE_FP16 ? 1e-2 : 1e-5) * mx;
    CHECKF(err <= tol, "  case k %lld s %lld group %lld, precision %d: max error %g (largest |y| %g)",
           (long long)t->k[r - 1], (long long)t->s[r - 1], (long long)t->group, (int)prec, err, mx);
    free(y);
    free(ref);
  }
  mb_run_close(&run);
  ir_graph_free(g);
  free(x);
  free(w);
}

int main(void) {
  static const tcase cases[] = {
      /* conv_tasnet's decoder: k = 2s, one output channel */
      {1, 2, 24, 1, 1, {40}, {16}, {8}, {1}, {0, 0}, {0}, 0, 1},
      {1, 1, 5, 3, 1, {9}, {5}, {3}, {1}, {1, 2}, {0}, 1, 1},                      /* k not a multiple of s */
      {1, 1, 4, 2, 1, {7}, {2}, {3}, {1}, {0, 0}, {0}, 1, 1},                      /* k < s */
      {2, 1, 4, 3, 1, {5, 6}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, 1}, /* U-Net's 3x3 s2 */
      {2, 2, 4, 4, 2, {4, 5}, {4, 3}, {2, 3}, {1, 1}, {1, 0, 2, 1}, {0, 0}, 1, 1}, /* groups */
      {2, 1, 3, 2, 1, {3, 4}, {2, 2}, {3, 2}, {1, 1}, {0, 0, 0, 0}, {2, 1}, 1, 0}, /* padding past the phases
                                                                                    */
      {2, 1, 3, 2, 1, {4, 4}, {3, 3}, {2, 2}, {2, 2}, {1, 1, 1, 1}, {0, 0}, 1, 0}, /* dilation 2 */
      {2, 1, 3, 5, 1, {4, 4}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, {0, 0}, 0, 0}, /* stride 1 */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    run_case(&cases[i], OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE);
    run_case(&cases[i], OM_PRECISION_FORCE_FP16);
  }
  return test_summary("conv_transpose");
}
