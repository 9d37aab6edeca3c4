/* test_pool3d.c - POOL with a depth window (NDC1HWC0, kd > 1: MaxPool3d and
 * AvgPool3d as S3D and the video networks have them) against the reference
 * evaluator (ir/pool.c) on the same pool in IR text.
 *
 * Cases: S3D's 3x3x3 stride-1 max pool with pads 1 and its 3x3x3 stride-2
 * one, a 2x2x2 ceil-mode pool, asymmetric pads and strides, average with
 * and without count_include_pad; f16 -> f16 (the x86 path's integer max),
 * f32 -> f32, f32 -> f16 and f16 -> f32; channels that leave padding lanes
 * (which must come out zero), two images, 1 to 3 blocks. The kernel runs on
 * the path rt_cpu() picks (printed first); ctest runs it once more under
 * OMRT_PORTABLE=1. Both must give the evaluator's result up to the output
 * dtype's rounding (the sums are f32 in both, in one order).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fp16.h"
#include "ir/pool.h"
#include "kcase.h"

typedef struct p3 {
  int avg, incl, ceil;
  int64_t n, c, x[3], k[3], s[3], pb[3], pe[3]; /* x, k, s, pads: D, H, W */
} p3;

/* Element offset of (n, ch, d, h, w) in NDC1HWC0 of dims [N, C, D, H, W]. */
static size_t ndc1hwc0_at(const int64_t *dm, int64_t n, int64_t ch, int64_t d, int64_t h, int64_t w) {
  const int64_t c1 = (dm[1] + 15) / 16;
  return (size_t)((((n * dm[2] + d) * c1 + ch / 16) * dm[3] + h) * dm[4] + w) * 16 + (size_t)(ch % 16);
}

static void one_case(const p3 *pc, int xdt, int ydt, uint32_t bd) {
  int64_t xd[5] = {pc->n, pc->c}, yd[5] = {pc->n, pc->c};
  for (int j = 0; j < 3; j++)
    xd[2 + j] = pc->x[j],
           yd[2 + j] = ir_pool_out(pc->x[j], pc->k[j], pc->s[j], 1, pc->pb[j], pc->pe[j], pc->ceil);
  kcase k;
  kc_setup(&k, OM_TASK_POOL, bd, 2);
  kc_set_layout(&k, OM_POOL_T_X, xdt, LAYOUT_NDC1HWC0, 5, xd);
  kc_set_layout(&k, OM_POOL_T_Y, ydt, LAYOUT_NDC1HWC0, 5, yd);
  int32_t *q = k.task.params;
  q[OM_POOL_P_KD] = (int32_t)pc->k[0], q[OM_POOL_P_KH] = (int32_t)pc->k[1],
  q[OM_POOL_P_KW] = (int32_t)pc->k[2];
  q[OM_POOL_P_STRIDE_D] = (int32_t)pc->s[0], q[OM_POOL_P_STRIDE_H] = (int32_t)pc->s[1],
  q[OM_POOL_P_STRIDE_W] = (int32_t)pc->s[2];
  q[OM_POOL_P_PAD_FRONT] = (int32_t)pc->pb[0], q[OM_POOL_P_PAD_TOP] = (int32_t)pc->pb[1],
  q[OM_POOL_P_PAD_LEFT] = (int32_t)pc->pb[2];
  q[OM_POOL_P_PAD_BACK] = (int32_t)pc->pe[0], q[OM_POOL_P_PAD_BOTTOM] = (int32_t)pc->pe[1],
  q[OM_POOL_P_PAD_RIGHT] = (int32_t)pc->pe[2];
  q[OM_POOL_P_MODE] = pc->avg, q[OM_POOL_P_COUNT_INCLUDE_PAD] = pc->incl;

  /* x: the same values in NCDHW f32 for the evaluator (rounded to f16 when x is f16), padding lanes 0 */
  const int64_t xn = pc->n * pc->c * pc->x[0] * pc->x[1] * pc->x[2], sp = pc->x[0] * pc->x[1] * pc->x[2];
  float *x = malloc((size_t)xn * sizeof *x);
  memset(k.data[OM_POOL_T_X], 0, (size_t)k.t[OM_POOL_T_X].bytes);
  for (int64_t i = 0; i < xn; i++) {
    float v = (float)(sin(0.37 * (double)i) * 3.0 + 0.1 * (double)(i / sp % 7));
    if (xdt == DT_FLOAT16) v = half_to_float(float_to_half(v));
    x[i] = v;
    const int64_t nc = i / sp, r = i % sp, d = r / (pc->x[1] * pc->x[2]), h = r / pc->x[2] % pc->x[1],
                  w = r % pc->x[2];
    rt_put(k.data[OM_POOL_T_X], xdt, ndc1hwc0_at(xd, nc / pc->c, nc % pc->c, d, h, w), v);
  }
  char what[160];
  snprintf(what, sizeof what, "%s%s k %lldx%lldx%lld s %lldx%lldx%lld ceil %d, x %s y %s, %u blocks",
           pc->avg ? "avg" : "max", pc->avg ? (pc->incl ? " incl" : " excl") : "", (long long)pc->k[0],
           (long long)pc->k[1], (long long)pc->k[2], (long long)pc->s[0], (long long)pc->s[1],
           (long long)pc->s[2], pc->ceil, xdt == DT_FLOAT16 ? "f16" : "f32",
           ydt == DT_FLOAT16 ? "f16" : "f32", bd);
  omrt_status st = kc_check(&k);
  CHECK_EQ_INT(st, OMRT_OK);
  if (st != OMRT_OK) {
    test_note("  %s: %s", what, omrt_last_error());
    free(x);
    kc_free(&k);
    return;
  }
  kc_run_blocks(&k, kc_core());

  /* the evaluator on the same pool */
  char text[600];
  snprintf(
      text, sizeof text,
      "graph g opset 18\ninput %%x : f32[%lld,%lld,%lld,%lld,%lld]\n%%y : f32[%lld,%lld,%lld,%lld,%lld] = "
      "%s(%%x) {ceil_mode=%d, count_include_pad=%d, kernel_shape=[%lld,%lld,%lld], "
      "pads=[%lld,%lld,%lld,%lld,%lld,%lld], strides=[%lld,%lld,%lld]}\noutput %%y\n",
      (long long)xd[0], (long long)xd[1], (long long)xd[2], (long long)xd[3], (long long)xd[4],
      (long long)yd[0], (long long)yd[1], (long long)yd[2], (long long)yd[3], (long long)yd[4],
      pc->avg ? "AveragePool" : "MaxPool", pc->ceil, pc->incl, (long long)pc->k[0], (long long)pc->k[1],
      (long long)pc->k[2], (long long)pc->pb[0], (long long)pc->pb[1], (long long)pc->pb[2],
      (long long)pc->pe[0], (long long)pc->pe[1], (long long)pc->pe[2], (long long)pc->s[0],
      (long long)pc->s[1], (long long)pc->s[2]);
  arena ar;
  arena_init(&ar, 0);
  const void *ins[1] = {x};
  void *outs[1] = {NULL};
  int eok = kc_eval_text(text, what, ins, outs, &ar);
  CHECK(eok);
  if (eok) {
    const float *ref = outs[0];
    const int64_t c16 = (pc->c + 15) / 16 * 16, osp = yd[2] * yd[3] * yd[4];
    int bad = 0;
    for (int64_t i = 0; i < pc->n * c16 * osp && !bad; i++) {
      const int64_t n = i / (c16 * osp), ch = i / osp % c16, r = i % osp, d = r / (yd[3] * yd[4]),
                    h = r / yd[4] % yd[3], w = r % yd[4];
      const float got = rt_get(k.data[OM_POOL_T_Y], ydt, ndc1hwc0_at(yd, n, ch, d, h, w));
      double want = 0.0;
      if (ch < pc->c) {
        want = ref[(n * pc->c + ch) * osp + r];
        if (ydt == DT_FLOAT16) want = half_to_float(float_to_half((float)want));
      }
      const double tol = ch >= pc->c ? 0.0 : (ydt == DT_FLOAT16 ? 1e-3 : 1e-6) * (1.0 + fabs(want));
      if (!(fabs(got - want) <= tol) || (ch >= pc->c && signbit(got))) {
        bad = 1;
        test_note("  %s: y[%lld, %lld, %lld, %lld, %lld] = %.9g, evaluator %.9g", what, (long long)n,
                  (long long)ch, (long long)d, (long long)h, (long long)w, got, want);
      }
    }
    CHECK(!bad);
  }
  arena_free(&ar);
  free(x);
  kc_free(&k);
}

int main(void) {
  const int F16 = DT_FLOAT16, F32 = DT_FLOAT32;
  printf("kernel paths: %s\n", rt_cpu()->name);
  const p3 cases[] = {
      /* S3D's inception-branch pool (3x3x3, stride 1, pads 1) and its stride-2 reduction */
      {.n = 1, .c = 40, .x = {4, 7, 7}, .k = {3, 3, 3}, .s = {1, 1, 1}, .pb = {1, 1, 1}, .pe = {1, 1, 1}},
      {.n = 1, .c = 24, .x = {5, 9, 9}, .k = {3, 3, 3}, .s = {2, 2, 2}, .pb = {1, 1, 1}, .pe = {1, 1, 1}},
      /* 2x2x2 stride 2 in ceil mode on odd extents: the last windows hang over the end */
      {.ceil = 1, .n = 2, .c = 17, .x = {3, 5, 7}, .k = {2, 2, 2}, .s = {2, 2, 2}},
      /* asymmetric window, strides and pads */
      {.n = 2, .c = 33, .x = {6, 5, 8}, .k = {3, 2, 4}, .s = {2, 1, 3}, .pb = {2, 0, 1}, .pe = {0, 1, 2}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    for (int mode = 0; mode < 3; mode++) { /* max, average excluding and including the pads */
      p3 pc = cases[i];
      pc.avg = mode > 0, pc.incl = mode == 2;
      one_case(&pc, F16, F16, 3);
      one_case(&pc, F32, F32, 2);
      one_case(&pc, F32, F16, 1);
      one_case(&pc, F16, F32, 2);
    }
  return test_summary("pool3d");
}
