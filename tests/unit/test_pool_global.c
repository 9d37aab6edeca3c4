/* test_pool_global.c - POOL over the whole plane (GlobalAveragePool,
 * GlobalMaxPool: kernel H x W, no padding, one output pixel) against a
 * plain NCHW reference in f64: average and max, f16 and f32 in and out,
 * planes from 1x1 to 112x112 (pixel counts that are and are not multiples
 * of the x86 path's 4-pixel step), channels that leave padding lanes, more
 * than one image, several blocks. NaNs in a max pool are skipped as the
 * portable kernel does (it keeps the running max). Outputs start as
 * garbage and their padding lanes must come out zero.
 *
 * The kernel runs on the path rt_cpu() picks (printed first): the AVX2 one
 * (kernels_vector_x86.c) on hosts that have it, the portable one under
 * OMRT_PORTABLE=1; both must give the reference up to f32 summation order.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fp16.h"
#include "kcase.h"

static uint32_t rng_state = 777;
static float frand(void) { /* [-1, 1) */
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)(rng_state >> 8) / (float)(1u << 23) - 1.0f;
}

/* Global pool of x [n, c, h, w]: avg or max, x and y dtypes, block_dim bd;
 * nans > 0 puts that many NaNs into every max-pooled plane. */
static void run_case(int64_t n, int64_t c, int64_t h, int64_t w, int avg, int xdt, int ydt, uint32_t bd,
                     int nans) {
  kcase k;
  kc_setup(&k, OM_TASK_POOL, bd, 2);
  const int64_t xd[4] = {n, c, h, w}, yd[4] = {n, c, 1, 1};
  kc_set_layout(&k, OM_POOL_T_X, xdt, LAYOUT_NC1HWC0, 4, xd);
  kc_set_layout(&k, OM_POOL_T_Y, ydt, LAYOUT_NC1HWC0, 4, yd);
  int32_t *q = k.task.params;
  q[OM_POOL_P_KH] = (int32_t)h, q[OM_POOL_P_KW] = (int32_t)w,
  q[OM_POOL_P_STRIDE_H] = q[OM_POOL_P_STRIDE_W] = 1;
  q[OM_POOL_P_MODE] = avg;

  /* x: NC1HWC0 with zero padding lanes; a per-channel offset so that sums do not cancel */
  memset(k.data[OM_POOL_T_X], 0, (size_t)k.t[OM_POOL_T_X].bytes);
  float *x = malloc((size_t)(n * c * h * w) * sizeof *x);
  for (int64_t i = 0; i < n * c; i++)
    for (int64_t pix = 0; pix < h * w; pix++) {
      float v = 0.25f * (float)(i % 5) + frand();
      if (xdt == DT_FLOAT16) v = half_to_float(float_to_half(v));
      if (!avg && pix < nans) v = NAN;
      x[i * h * w + pix] = v;
      rt_put(k.data[OM_POOL_T_X], xdt, nc1hwc0_at(xd, i / c, i % c, pix / w, pix % w), v);
    }

  omrt_status s = kc_check(&k);
  CHECK_EQ_INT(s, OMRT_OK);
  kc_run_blocks(&k, kc_core());

  double worst = 0.0;
  size_t badpad = 0;
  for (int64_t i = 0; i < n * ((c + 15) / 16) * 16; i++) {
    const int64_t img = i / (((c + 15) / 16) * 16), ch = i % (((c + 15) / 16) * 16);
    const float got = rt_get(k.data[OM_POOL_T_Y], ydt, nc1hwc0_at(yd, img, ch, 0, 0));
    if (ch >= c) {
      badpad += got != 0.0f || signbit(got);
      continue;
    }
    const float *p = x + (img * c + ch) * h * w;
    double ref = avg ? 0.0 : -INFINITY;
    for (int64_t pix = 0; pix < h * w; pix++)
      if (avg)
        ref += p[pix];
      else if (p[pix] > ref)
        ref = p[pix];
    if (avg) ref /= (double)(h * w);
    if (ydt == DT_FLOAT16) ref = half_to_float(float_to_half((float)ref));
    /* f16 out: one half ulp of rounding either way; f32: the f32 sums' error */
    const double err = fabs(got - ref) / fmax(1.0, fabs(ref)), tol = ydt == DT_FLOAT16 ? 1e-3 : 1e-5;
    if (!(err <= worst)) worst = err;
    if (!(err <= tol)) {
      test_note("  global %s %lldx%lldx%lldx%lld %s->%s: channel %lld of image %lld: got %g, want %g",
                avg ? "avg" : "max", (long long)n, (long long)c, (long long)h, (long long)w,
                xdt == DT_FLOAT16 ? "f16" : "f32", ydt == DT_FLOAT16 ? "f16" : "f32", (long long)ch,
                (long long)img, got, ref);
      break;
    }
  }
  CHECK(worst <= (ydt == DT_FLOAT16 ? 1e-3 : 1e-5));
  CHECK_EQ_INT(badpad, 0);
  free(x);
  kc_free(&k);
}

int main(void) {
  const int F16 = DT_FLOAT16, F32 = DT_FLOAT32;
  printf("kernel paths: %s\n", rt_cpu()->name);
  /* EfficientNet-B0's squeeze-excite pools (32 channels at 112x112 ... 1152 at 7x7) and the head's */
  run_case(1, 32, 112, 112, 1, F16, F16, 2, 0);
  run_case(1, 1152, 7, 7, 1, F16, F16, 8, 0);
  run_case(1, 1280, 7, 7, 1, F16, F32, 3, 0);
  /* pixel counts around the 4-pixel step, padding lanes, two images */
  static const int64_t hw[][2] = {{1, 1}, {1, 3}, {2, 2}, {3, 5}, {1, 13}, {5, 1}, {9, 9}, {14, 14}};
  for (size_t i = 0; i < sizeof hw / sizeof *hw; i++)
    for (int avg = 0; avg < 2; avg++) {
      run_case(2, 40, hw[i][0], hw[i][1], avg, F16, F16, 3, 0);
      run_case(1, 20, hw[i][0], hw[i][1], avg, F32, F32, 2, 0);
      run_case(2, 17, hw[i][0], hw[i][1], avg, F32, F16, 1, 0);
      run_case(1, 33, hw[i][0], hw[i][1], avg, F16, F32, 3, 0);
    }
  /* NaNs in max pooling are skipped (the reference skips them too) */
  run_case(1, 24, 6, 6, 0, F32, F32, 2, 3);
  run_case(1, 24, 3, 3, 0, F16, F16, 1, 1);
  run_case(1, 24, 3, 3, 0, F16, F32, 1, 2);
  return test_summary("pool_global");
}
