/* test_big_const.c - constants large enough (>= 32 MiB) that converting
 * them gives the old payload's pages back as it is read (ir.h's
 * ir_payload_reader): the fp32 -> fp16 cast of the precision pass, the
 * FRACTAL_NZ panels of a MatMul's B (K and N not multiples of 16), the
 * FRACTAL_Z form of a Conv's weight, and a constant two nodes read (a cached
 * copy, the original kept). Each model is compiled in both precision modes
 * and run; its outputs must match a double-precision reference computed
 * here from the same weights.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/compile.h"
#include "omrt.h"
#include "onnx_mb.h"
#include "support.h"

enum { K = 4099, N = 4100, CI = 1024, CO = 1024 }; /* B: 67 MB, three blocks of rows; W: 38 MB */

static float lcg_float(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static void fill(float *p, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; i++)
    p[i] = lcg_float(&seed);
}

/* Runs `om` on the inputs; 0 on success. */
static int run(const void *om, size_t size, const void *const *in, void **out) {
  omrt_model *m = NULL;
  omrt_context *c = NULL;
  int rc = omrt_model_load_memory(om, size, NULL, &m) != OMRT_OK || omrt_context_new(m, &c) != OMRT_OK ||
           omrt_execute(c, in, out) != OMRT_OK;
  if (rc) test_note("omrt: %s", omrt_last_error());
  omrt_context_free(c);
  omrt_model_free(m);
  return rc;
}

/* max |got - want| <= tol x max |want| */
static void check_close(const char *what, const float *got, const double *want, size_t n, double tol) {
  double worst = 0, scale = 0;
  for (size_t i = 0; i < n; i++) {
    scale = fmax(scale, fabs(want[i]));
    worst = fmax(worst, fabs((double)got[i] - want[i]));
  }
  if (!(worst <= tol * scale)) test_note("%s: max error %g, max |ref| %g", what, worst, scale);
  CHECK(worst <= tol * scale);
}

static void *compile(mb *m, om_precision prec, size_t *size) {
  atc_options opt = {.model_path = "big_const.onnx",
                     .soc_version = "Ascend310",
                     .precision = prec,
                     .cmdline = "test_big_const"};
  return mb_compile(m, &opt, size);
}

/* y = x W (one reader of W) and, with `twice`, z = x W as well. */
static void test_matmul(const float *x, const float *w, om_precision prec, double tol, int twice) {
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", 1, 2, (int64_t[]){1, K}, NULL);
  mb_init_raw(&m, "W", 1, 2, (int64_t[]){K, N}, w, sizeof(float) * K * N);
  mb_node(&m, "MatMul", "mm", "x,W", "y");
  mb_output(&m, "y");
  if (twice) {
    mb_node(&m, "MatMul", "mm2", "x,W", "z");
    mb_output(&m, "z");
  }
  size_t size;
  void *om = compile(&m, prec, &size);
  CHECK(om != NULL);
  if (!om) return;
  static float y[N], z[N];
  static double ref[N];
  for (int n = 0; n < N; n++) {
    double s = 0;
    for (int k = 0; k < K; k++)
      s += (double)x[k] * w[(size_t)k * N + n];
    ref[n] = s;
  }
  const void *in[1] = {x};
  void *out[2] = {y, z};
  CHECK_EQ_INT(run(om, size, in, out), 0);
  check_close(twice ? "MatMul (W read twice), y" : "MatMul", y, ref, N, tol);
  if (twice) check_close("MatMul (W read twice), z", z, ref, N, tol);
  free(om);
}

/* A 3x3 Conv of a [1, CI, 3, 3] input: one output pixel per channel. */
static void test_conv(const float *x, const float *w, om_precision prec, double tol) {
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", 1, 4, (int64_t[]){1, CI, 3, 3}, NULL);
  mb_init_raw(&m, "W", 1, 4, (int64_t[]){CO, CI, 3, 3}, w, sizeof(float) * CO * CI * 9);
  mb_node(&m, "Conv", "conv", "x,W", "y");
  mb_output(&m, "y");
  size_t size;
  void *om = compile(&m, prec, &size);
  CHECK(om != NULL);
  if (!om) return;
  static float y[CO];
  static double ref[CO];
  for (int o = 0; o < CO; o++) {
    double s = 0;
    for (int i = 0; i < CI * 9; i++)
      s += (double)x[i] * w[(size_t)o * CI * 9 + i];
    ref[o] = s;
  }
  const void *in[1] = {x};
  void *out[1] = {y};
  CHECK_EQ_INT(run(om, size, in, out), 0);
  check_close("Conv", y, ref, CO, tol);
  free(om);
}

int main(void) {
  const size_t nw = (size_t)K * N > (size_t)CO * CI * 9 ? (size_t)K * N : (size_t)CO * CI * 9;
  float *x = malloc(sizeof(float) * (CI * 9 > K ? CI * 9 : K)), *w = malloc(sizeof(float) * nw);
  if (!x || !w) return test_summary("big_const");
  fill(x, (size_t)(CI * 9 > K ? CI * 9 : K), 1);
  fill(w, nw, 2);
  CHECK(sizeof(float) * K * N >= (32u << 20)); /* large enough to be given back as read */
  const struct {
    om_precision prec;
    double tol;
  } modes[] = {{OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE, 1e-4}, {OM_PRECISION_FORCE_FP16, 2e-2}};
  for (size_t i = 0; i < sizeof modes / sizeof *modes; i++) {
    test_matmul(x, w, modes[i].prec, modes[i].tol, 0);
    test_matmul(x, w, modes[i].prec, modes[i].tol, 1);
    test_conv(x, w, modes[i].prec, modes[i].tol);
  }
  free(x);
  free(w);
  return test_summary("big_const");
}
