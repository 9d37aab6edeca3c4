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
#include "runtime/kernels.h"
#include "support.h"

static uint32_t rng_state = 777;
static float frand(void) { /* [-1, 1) */
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)(rng_state >> 8) / (float)(1u << 23) - 1.0f;
}

static const char strings[] = "\0test_task\0t";

/* One POOL task, x in slot 0 and y in slot 1, inside a fake model. */
typedef struct pcase {
  om_model_def def;
  om_tensor t[2];
  void *data[2];
  om_task task;
  omrt_model m;
} pcase;

static void add_tensor(pcase *c, int s, int dt, const int64_t *dims) {
  om_tensor *t = &c->t[s];
  *t = (om_tensor){.name = 11, .region = OM_REGION_WORKSPACE, .dtype = (uint32_t)dt, .layout = LAYOUT_NC1HWC0,
                   .rank = 4};
  memcpy(t->dims, dims, 4 * sizeof *dims);
  uint64_t n = 0;
  layout_elements(LAYOUT_NC1HWC0, 4, dims, &n);
  t->bytes = n * dtype_size(dt);
  c->data[s] = malloc((size_t)t->bytes);
  memset(c->data[s], 0x7f, (size_t)t->bytes); /* garbage the kernel must overwrite */
  c->task.tensors[s] = (uint32_t)s;
}

static size_t at5(const int64_t *d, int64_t n, int64_t ch, int64_t pix) {
  return (size_t)(((n * ((d[1] + 15) / 16) + ch / 16) * d[2] * d[3] + pix) * 16 + ch % 16);
}

static rt_core *test_core(void) {
  static rt_core core;
  if (!core.ub) core.ub_bytes = 256 << 10, core.ub = aligned_alloc(64, core.ub_bytes);
  return &core;
}

/* Global pool of x [n, c, h, w]: avg or max, x and y dtypes, block_dim bd;
 * nans > 0 puts that many NaNs into every max-pooled plane. */
static void run_case(int64_t n, int64_t c, int64_t h, int64_t w, int avg, int xdt, int ydt, uint32_t bd, int nans) {
  pcase k;
  memset(&k, 0, sizeof k);
  k.def = (om_model_def){.ub_bytes = 256 << 10, .ntasks = 1};
  k.task = (om_task){.kind = OM_TASK_POOL, .name = 1, .block_dim = bd, .ntensors = 2};
  k.m.def = &k.def, k.m.tensors = k.t, k.m.tasks = &k.task;
  k.m.strings = strings, k.m.strings_bytes = sizeof strings;
  const int64_t xd[4] = {n, c, h, w}, yd[4] = {n, c, 1, 1};
  add_tensor(&k, 0, xdt, xd);
  add_tensor(&k, 1, ydt, yd);
  const int32_t q[10] = {(int32_t)h, (int32_t)w, 1, 1, 0, 0, 0, 0, avg, 0};
  memcpy(k.task.params, q, sizeof q);

  /* x: NC1HWC0 with zero padding lanes; a per-channel offset so that sums do not cancel */
  memset(k.data[0], 0, (size_t)k.t[0].bytes);
  float *x = malloc((size_t)(n * c * h * w) * sizeof *x);
  for (int64_t i = 0; i < n * c; i++)
    for (int64_t pix = 0; pix < h * w; pix++) {
      float v = 0.25f * (float)(i % 5) + frand();
      if (xdt == DT_FLOAT16) v = half_to_float(float_to_half(v));
      if (!avg && pix < nans) v = NAN;
      x[i * h * w + pix] = v;
      rt_put(k.data[0], xdt, at5(xd, i / c, i % c, pix), v);
    }

  omrt_status s = rt_kernels[OM_TASK_POOL].check(&k.m, 0, &k.task);
  CHECK_EQ_INT(s, OMRT_OK);
  rt_args a;
  memset(&a, 0, sizeof a);
  for (int i = 0; i < 2; i++) a.data[i] = k.data[i], a.desc[i] = &k.t[i];
  for (uint32_t b = bd; b-- > 0;) rt_kernels[OM_TASK_POOL].run(&k.task, &a, b, test_core());

  double worst = 0.0;
  size_t badpad = 0;
  for (int64_t i = 0; i < n * ((c + 15) / 16) * 16; i++) {
    const int64_t img = i / (((c + 15) / 16) * 16), ch = i % (((c + 15) / 16) * 16);
    const float got = rt_get(k.data[1], ydt, at5(yd, img, ch, 0));
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
                xdt == DT_FLOAT16 ? "f16" : "f32", ydt == DT_FLOAT16 ? "f16" : "f32", (long long)ch, (long long)img,
                got, ref);
      break;
    }
  }
  CHECK(worst <= (ydt == DT_FLOAT16 ? 1e-3 : 1e-5));
  CHECK_EQ_INT(badpad, 0);
  free(x);
  free(k.data[0]), free(k.data[1]);
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
