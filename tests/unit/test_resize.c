/* test_resize.c - Resize end to end below the om: the compiler's shape
 * inference and tap tables (ir/resize.c) and the RESIZE kernel
 * (runtime/kernels_resize.c) against a naive transcription of ONNX's
 * reference implementation (onnx/reference/ops/op_resize.py), and the
 * kernel's load-time check.
 *
 * The naive reference interpolates one output element at a time the way
 * the ONNX reference does: recursively over the dims, each 1-D step taking
 * the n entries of the edge-padded row nearest to the source position
 * (found by sorting on distance, ties to the smaller index) and weighting
 * them by the mode's coefficients, all in double. Cases: every mode (nearest
 * with each rounding, linear, cubic with two cubic_coeff_a and
 * exclude_outside, antialiased linear and cubic) times every coordinate
 * transform, up- and downsampling by scales, sizes with each
 * keep_aspect_ratio_policy, tf_crop_and_resize with an extrapolated roi,
 * f32 and f16 outputs, 1 to 3 blocks; nearest also on int8. The kernel
 * must match the reference within 2e-6 (f32) or the f16 rounding, and the
 * compiler's own evaluator (constant folding) within 1e-9.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/elem.h"
#include "common/fp16.h"
#include "ir/eval.h"
#include "ir/ir.h"
#include "ir/resize.h"
#include "omrt.h"
#include "passes/pass.h"
#include "runtime/kernels.h"
#include "support.h"

/* --- the naive reference (ONNX's op_resize.py, in C) */

typedef struct ref_case {
  const char *mode, *ctm, *nearest;
  double a;
  int exclude, antialias;
  double roi[8];
  double extrap;
} ref_case;

static double cubic(double x, double A) {
  x = fabs(x);
  if (x <= 1) return ((A + 2) * x - (A + 3)) * x * x + 1;
  if (x < 2) return A * x * x * x - 5 * A * x * x + 8 * A * x - 4 * A;
  return 0;
}

/* get_coeffs(ratio, scale): the coefficient count into *n. */
static void ref_coeffs(const ref_case *rc, double ratio, double scale, double *c, int *n) {
  double s = scale < 1 ? scale : 1, sum = 0;
  if (!strcmp(rc->mode, "nearest")) {
    int second;
    if (ratio == floor(ratio))
      second = 1;
    else if (!strcmp(rc->nearest, "round_prefer_floor"))
      second = ratio > 0.5;
    else if (!strcmp(rc->nearest, "round_prefer_ceil"))
      second = ratio >= 0.5;
    else if (!strcmp(rc->nearest, "floor"))
      second = 0;
    else
      second = 1;
    c[0] = !second, c[1] = second, *n = 2;
  } else if (!strcmp(rc->mode, "linear") && !rc->antialias) {
    c[0] = 1 - ratio, c[1] = ratio, *n = 2;
  } else if (!strcmp(rc->mode, "linear")) {
    int start = (int)floor(-1 / s) + 1;
    *n = 2 - 2 * start;
    for (int i = 0; i < *n; i++)
      c[i] = fmax(0, fmin(1, 1 - fabs((start + i - ratio) * s))), sum += c[i];
    for (int i = 0; i < *n; i++)
      c[i] /= sum;
  } else if (!rc->antialias) {
    double A = rc->a;
    c[0] = ((A * (ratio + 1) - 5 * A) * (ratio + 1) + 8 * A) * (ratio + 1) - 4 * A;
    c[1] = ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1;
    c[2] = ((A + 2) * (1 - ratio) - (A + 3)) * (1 - ratio) * (1 - ratio) + 1;
    c[3] = ((A * ((1 - ratio) + 1) - 5 * A) * ((1 - ratio) + 1) + 8 * A) * ((1 - ratio) + 1) - 4 * A;
    *n = 4;
  } else {
    int start = (int)floor(-2 / s) + 1;
    *n = 2 - 2 * start;
    for (int i = 0; i < *n; i++)
      c[i] = cubic(s * (start + i - ratio), rc->a), sum += c[i];
    for (int i = 0; i < *n; i++)
      c[i] /= sum;
  }
}

static const ref_case *g_rc;

static double g_x; /* the position cmp_dist measures from */
static int cmp_dist(const void *a, const void *b) {
  double da = fabs(g_x - *(const int *)a), db = fabs(g_x - *(const int *)b);
  if (da != db) return da < db ? -1 : 1;
  return *(const int *)a - *(const int *)b;
}
static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* _interpolate_1d_with_x over data[0..len). */
static double ref_1d(const double *data, int len, double scale, int out_int, double x, double r0, double r1) {
  const ref_case *rc = g_rc;
  double w = scale * len, xo;
  const char *m = rc->ctm;
  if (!strcmp(m, "align_corners"))
    xo = w == 1 ? 0 : x * (len - 1) / (w - 1);
  else if (!strcmp(m, "asymmetric"))
    xo = x / scale;
  else if (!strcmp(m, "tf_crop_and_resize")) {
    xo = w == 1 ? (r1 - r0) * (len - 1) / 2 : x * (r1 - r0) * (len - 1) / (w - 1);
    xo += r0 * (len - 1);
    if (xo < 0 || xo > len - 1) return rc->extrap;
  } else if (!strcmp(m, "pytorch_half_pixel"))
    xo = w == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  else if (!strcmp(m, "half_pixel_symmetric")) {
    double adj = out_int / w, center = len / 2.0, off = center * (1 - adj);
    xo = off + (x + 0.5) / scale - 0.5;
  } else
    xo = (x + 0.5) / scale - 0.5;
  double ratio = xo == floor(xo) ? 1 : xo - floor(xo);
  double c[256];
  int n;
  ref_coeffs(rc, ratio, scale, c, &n);
  int pad = (n + 1) / 2, plen = len + 2 * pad, idx[512];
  for (int i = 0; i < plen; i++)
    idx[i] = i;
  g_x = xo + pad;
  qsort(idx, (size_t)plen, sizeof *idx, cmp_dist);
  qsort(idx, (size_t)n, sizeof *idx, cmp_int);
  double sum = 0, acc = 0;
  if (rc->exclude) {
    for (int i = 0; i < n; i++) {
      if (idx[i] - pad < 0 || idx[i] - pad >= len) c[i] = 0;
      sum += c[i];
    }
    for (int i = 0; i < n; i++)
      c[i] /= sum;
  }
  for (int i = 0; i < n; i++) {
    int k = idx[i] - pad;
    acc += c[i] * data[k < 0 ? 0 : k >= len ? len - 1 : k];
  }
  return acc;
}

/* _interpolate_nd_with_x: data has `rank` dims xd (C order). */
static double ref_nd(const double *data, int rank, const int64_t *xd, const double *scales, const int64_t *yd,
                     const int64_t *x, const double *roi, int full_rank) {
  int dim = full_rank - rank;
  if (rank == 1)
    return ref_1d(data, (int)xd[0], scales[0], (int)yd[0], (double)x[0], roi[dim], roi[full_rank + dim]);
  int64_t inner = 1;
  for (int k = 1; k < rank; k++)
    inner *= xd[k];
  double res[64];
  for (int64_t i = 0; i < xd[0]; i++)
    res[i] = ref_nd(data + i * inner, rank - 1, xd + 1, scales + 1, yd + 1, x + 1, roi, full_rank);
  return ref_1d(res, (int)xd[0], scales[0], (int)yd[0], (double)x[0], roi[dim], roi[full_rank + dim]);
}

/* --- one case through the compiler's tables and the kernel */

static void fmt_floats(char *out, size_t cap, const double *v, int n) {
  size_t at = (size_t)snprintf(out, cap, "[");
  for (int i = 0; i < n; i++) {
    char b[64];
    snprintf(b, sizeof b, "%.17g", v[i]);
    if (!strpbrk(b, ".en")) strcat(b, ".0");
    at += (size_t)snprintf(out + at, cap - at, "%s%s", i ? "," : "", b);
  }
  snprintf(out + at, cap - at, "]");
}

/* scales (rank 4) or sizes (when sizes != NULL, with policy). */
static void one_case(const ref_case *rc, const double *scales, const int64_t *sizes, const char *policy,
                     int ydt, int xdt, uint32_t bd) {
  char text[2048], sc[256], roi[256], what[512];
  fmt_floats(roi, sizeof roi, rc->roi, 8);
  if (sizes)
    snprintf(sc, sizeof sc, "sizes=[%lld,%lld,%lld,%lld], keep_aspect_ratio_policy=\"%s\"",
             (long long)sizes[0], (long long)sizes[1], (long long)sizes[2], (long long)sizes[3], policy);
  else
    fmt_floats(sc + 7, sizeof sc - 7, scales, 4), memcpy(sc, "scales=", 7);
  const char *dn = xdt == DT_INT8 ? "i8" : "f32";
  snprintf(
      text, sizeof text,
      "graph g opset 19\ninput %%x : %s[1,2,4,5]\n%%y : ?[?] = Resize(%%x) {antialias=%d, "
      "cubic_coeff_a=%.17g, "
      "coordinate_transformation_mode=\"%s\", exclude_outside=%d, extrapolation_value=%.1f, mode=\"%s\", "
      "nearest_mode=\"%s\", roi=%s, %s}\noutput %%y\n",
      dn, rc->antialias, rc->a, rc->ctm, rc->exclude, rc->extrap, rc->mode, rc->nearest, roi, sc);
  snprintf(what, sizeof what, "%s %s %s a=%g excl=%d aa=%d %s ydt=%d xdt=%d bd=%u", rc->mode, rc->ctm,
           rc->nearest, rc->a, rc->exclude, rc->antialias, sc, ydt, xdt, bd);
  diag d;
  diag_init(&d);
  ir_graph *g = NULL;
  if (ir_parse(text, "resize", &g, &d) != ST_OK) {
    CHECK(!"parse");
    test_note("  %s: %s", what, d.msg);
    return;
  }
  pass_ctx ctx = {.precision = OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE};
  int ok = pass_shape_infer(g, &ctx, &d) == ST_OK;
  CHECK(ok);
  if (!ok) {
    test_note("  %s: %s", what, d.msg);
    ir_graph_free(g);
    return;
  }
  ir_node *n = g->nodes[0];
  const ir_value *x = n->in[0], *yv = n->out[0];
  int64_t count = ir_value_elements(yv), xcount = ir_value_elements(x);
  if (bd > count / yv->dims[3]) bd = (uint32_t)(count / yv->dims[3]); /* at most one block per row */
  /* the input: distinct values, small integers for i8 */
  double xs[40];
  for (int64_t i = 0; i < xcount; i++)
    xs[i] = xdt == DT_INT8 ? (double)((i * 7) % 23 - 11) : sin(1.3 * (double)i) * 3;
  arena ar;
  arena_init(&ar, 0);
  ir_resize_tables t;
  ok = ir_resize_tables_build(n, x, yv, &ar, &t, &d) == ST_OK;
  CHECK(ok);
  if (!ok) test_note("  %s: tables: %s", what, d.msg);
  /* the reference, with the scales shape inference settled on */
  double sc_eff[4], *ref = calloc((size_t)count, sizeof *ref);
  CHECK(ir_attr_find(n, "scales") != NULL);
  const ir_attr *sa = ir_attr_find(n, "scales");
  for (int k = 0; k < 4; k++)
    sc_eff[k] = sa ? sa->floats[k] : 1;
  g_rc = rc;
  for (int64_t i = 0; i < count; i++) {
    int64_t c[4], rest = i;
    for (int k = 3; k >= 0; k--)
      c[k] = rest % yv->dims[k], rest /= yv->dims[k];
    ref[i] = ref_nd(xs, 4, x->dims, sc_eff, yv->dims, c, rc->roi, 4);
  }
  /* the kernel on a one-task model whose tables are WEIGHTS */
  om_model_def def = {.ub_bytes = 256 << 10, .ntasks = 1};
  om_tensor tt[OM_RESIZE_NTENSORS];
  om_task task = {.kind = OM_TASK_RESIZE, .name = 1, .block_dim = bd, .ntensors = OM_RESIZE_NTENSORS};
  static const char strings[] = "\0test_task\0t";
  void *data[OM_RESIZE_NTENSORS] = {NULL};
  int dts[OM_RESIZE_NTENSORS] = {[OM_RESIZE_T_X] = xdt,
                                 [OM_RESIZE_T_IDX] = DT_INT32,
                                 [OM_RESIZE_T_W] = DT_FLOAT32,
                                 [OM_RESIZE_T_Y] = ydt == DT_INT8 ? xdt : ydt};
  uint64_t wbytes = (uint64_t)t.count * 4;
  uint8_t *weights = aligned_alloc(64, (size_t)(2 * ((wbytes + 63) / 64 * 64) + 64));
  for (int s = 0; s < OM_RESIZE_NTENSORS && ok; s++) {
    if (s == OM_RESIZE_T_W && t.select) continue;
    int rank = s == OM_RESIZE_T_X || s == OM_RESIZE_T_Y ? 4 : 1;
    const int64_t *dims = s == OM_RESIZE_T_X ? x->dims : s == OM_RESIZE_T_Y ? yv->dims : &t.count;
    tt[s] = (om_tensor){
        .name = 11, .region = OM_REGION_WORKSPACE, .dtype = (uint32_t)dts[s], .rank = (uint32_t)rank};
    memcpy(tt[s].dims, dims, (size_t)rank * sizeof *dims);
    uint64_t e = s == OM_RESIZE_T_X   ? (uint64_t)xcount
                 : s == OM_RESIZE_T_Y ? (uint64_t)count
                                      : (uint64_t)t.count;
    tt[s].bytes = e * dtype_size(dts[s]);
    task.tensors[s] = (uint32_t)s;
    if (s == OM_RESIZE_T_IDX || s == OM_RESIZE_T_W) {
      tt[s].region = OM_REGION_WEIGHTS, tt[s].offset = s == OM_RESIZE_T_IDX ? 0 : (wbytes + 63) / 64 * 64;
      data[s] = weights + tt[s].offset;
      memcpy(data[s], s == OM_RESIZE_T_IDX ? (const void *)t.idx : (const void *)t.w, (size_t)tt[s].bytes);
    } else {
      data[s] = malloc((size_t)tt[s].bytes + 8);
      memset(data[s], 0x7f, (size_t)tt[s].bytes);
    }
  }
  if (ok && t.select) task.tensors[OM_RESIZE_T_W] = OM_NONE, data[OM_RESIZE_T_W] = NULL;
  if (ok) {
    for (int64_t i = 0; i < xcount; i++) {
      if (xdt == DT_INT8)
        ((int8_t *)data[OM_RESIZE_T_X])[i] = (int8_t)xs[i];
      else
        ((float *)data[OM_RESIZE_T_X])[i] = (float)xs[i];
    }
    task.params[OM_RESIZE_P_MODE] = t.select;
    for (int k = 0; k < 4; k++)
      task.params[OM_RESIZE_P_TAPS + k] = t.taps[k];
    if (ydt == DT_FLOAT32)
      memcpy(&task.params[OM_RESIZE_P_VALUE_LO], &(float){(float)rc->extrap}, 4);
    else if (ydt == DT_FLOAT16)
      task.params[OM_RESIZE_P_VALUE_LO] = float_to_half((float)rc->extrap);
    else
      task.params[OM_RESIZE_P_VALUE_LO] = (uint8_t)(int8_t)rc->extrap;
    omrt_model m = {.def = &def,
                    .tensors = tt,
                    .tasks = &task,
                    .strings = strings,
                    .strings_bytes = sizeof strings,
                    .weights = weights,
                    .weights_bytes = 2 * ((wbytes + 63) / 64 * 64)};
    omrt_status st = rt_kernels[OM_TASK_RESIZE].check(&m, 0, &task);
    CHECK_EQ_INT(st, OMRT_OK);
    if (st != OMRT_OK) test_note("  %s: %s", what, omrt_last_error()), ok = 0;
  }
  if (ok) {
    rt_args a;
    memset(&a, 0, sizeof a);
    for (int s = 0; s < 4; s++)
      a.data[s] = data[s], a.desc[s] = data[s] ? &tt[s] : NULL;
    for (uint32_t b = bd; b-- > 0;)
      rt_kernels[OM_TASK_RESIZE].run(&task, &a, b, NULL);
    int bad = 0;
    for (int64_t i = 0; i < count && !bad; i++) {
      double got = ydt == DT_FLOAT16 ? half_to_float(((uint16_t *)data[OM_RESIZE_T_Y])[i])
                   : ydt == DT_INT8  ? ((int8_t *)data[OM_RESIZE_T_Y])[i]
                                     : ((float *)data[OM_RESIZE_T_Y])[i];
      double want = ydt == DT_FLOAT16 ? half_to_float(float_to_half((float)ref[i])) : ref[i];
      double tol = ydt == DT_FLOAT16 ? 1e-3 * (1 + fabs(want)) : ydt == DT_INT8 ? 0 : 2e-6 * (1 + fabs(want));
      if (fabs(got - want) > tol) {
        bad = 1;
        test_note("  %s: y[%lld] = %.9g, want %.9g", what, (long long)i, got, want);
      }
    }
    CHECK(!bad);
    /* the compiler's evaluator (constant folding) on the same node */
    const void *ins[1] = {data[OM_RESIZE_T_X]};
    void *outs[1];
    int eok = ir_eval_graph(g, ins, outs, &ar, &d) == ST_OK;
    CHECK(eok);
    for (int64_t i = 0; eok && i < count; i++)
      if (fabs(elem_get(outs[0], yv->dtype, i) - (xdt == DT_INT8 ? ref[i] : ref[i])) >
          1e-6 * (1 + fabs(ref[i]))) {
        CHECK(!"evaluator matches the reference");
        test_note("  %s: eval y[%lld] = %.9g, want %.9g", what, (long long)i, elem_get(outs[0], yv->dtype, i),
                  ref[i]);
        break;
      }
  }
  free(data[OM_RESIZE_T_X]), free(data[OM_RESIZE_T_Y]), free(weights), free(ref);
  arena_free(&ar);
  ir_graph_free(g);
}

static void test_modes(void) {
  static const char *const ctms[] = {"half_pixel",    "half_pixel_symmetric", "pytorch_half_pixel",
                                     "align_corners", "asymmetric",           "tf_crop_and_resize"};
  static const char *const nearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  static const double scales[][4] = {{1, 1, 2, 1.5}, {1, 1, 0.6, 0.8}, {1, 2, 1.7, 0.5}, {1, 1, 1, 3}};
  ref_case rc = {.roi = {0, 0, 0.1, -0.2, 1, 1, 0.8, 1.3}, .extrap = 10};
  for (size_t ci = 0; ci < sizeof ctms / sizeof *ctms; ci++)
    for (size_t si = 0; si < sizeof scales / sizeof *scales; si++) {
      rc.ctm = ctms[ci], rc.a = -0.75, rc.exclude = 0, rc.antialias = 0;
      for (size_t k = 0; k < 4; k++) {
        rc.mode = "nearest", rc.nearest = nearest[k];
        one_case(&rc, scales[si], NULL, NULL, DT_FLOAT32, DT_FLOAT32, (uint32_t)(1 + k % 3));
      }
      rc.nearest = "round_prefer_floor";
      one_case(&rc, scales[si], NULL, NULL, DT_INT8, DT_INT8, 2);
      rc.mode = "linear";
      one_case(&rc, scales[si], NULL, NULL, DT_FLOAT32, DT_FLOAT32, 1);
      one_case(&rc, scales[si], NULL, NULL, DT_FLOAT16, DT_FLOAT32, 3);
      rc.mode = "cubic";
      one_case(&rc, scales[si], NULL, NULL, DT_FLOAT32, DT_FLOAT32, 2);
      rc.a = -0.5, rc.exclude = 1;
      one_case(&rc, scales[si], NULL, NULL, DT_FLOAT32, DT_FLOAT32, 1);
      one_case(&rc, scales[si], NULL, NULL, DT_FLOAT16, DT_FLOAT32, 2);
      if (strcmp(rc.ctm, "tf_crop_and_resize")) { /* antialias: ONNX pairs it with the others */
        rc.a = -0.75, rc.exclude = 0, rc.antialias = 1;
        one_case(&rc, scales[si], NULL, NULL, DT_FLOAT32, DT_FLOAT32, 3);
        rc.mode = "linear";
        one_case(&rc, scales[si], NULL, NULL, DT_FLOAT32, DT_FLOAT32, 1);
        one_case(&rc, scales[si], NULL, NULL, DT_FLOAT16, DT_FLOAT32, 2);
      }
    }
}

static void test_sizes(void) {
  static const int64_t sizes[][4] = {{1, 2, 7, 3}, {1, 2, 2, 9}, {1, 2, 4, 5}};
  static const char *const policies[] = {"stretch", "not_larger", "not_smaller"};
  ref_case rc = {.mode = "linear",
                 .ctm = "half_pixel",
                 .nearest = "round_prefer_floor",
                 .a = -0.75,
                 .roi = {0, 0, 0, 0, 1, 1, 1, 1}};
  for (size_t si = 0; si < 3; si++)
    for (size_t p = 0; p < 3; p++) {
      rc.mode = "linear";
      one_case(&rc, NULL, sizes[si], policies[p], DT_FLOAT32, DT_FLOAT32, 2);
      rc.mode = "nearest";
      one_case(&rc, NULL, sizes[si], policies[p], DT_FLOAT32, DT_FLOAT32, 1);
      rc.mode = "cubic";
      one_case(&rc, NULL, sizes[si], policies[p], DT_FLOAT16, DT_FLOAT32, 3);
    }
}

/* --- the load-time check: a valid 1-D linear resize [4] -> [6] that
 * `mutate` breaks once */
static void bad(int mutate, const char *what, const char *want) {
  static const char strings[] = "\0test_task\0t";
  om_model_def def = {.ub_bytes = 256 << 10, .ntasks = 1};
  om_tensor tt[4];
  uint8_t *weights = aligned_alloc(64, 256);
  int32_t *idx = (int32_t *)weights;
  float *w = (float *)(weights + 128);
  for (int o = 0; o < 6; o++)
    idx[2 * o] = o * 3 / 6, idx[2 * o + 1] = o * 3 / 6 + 1, w[2 * o] = 0.5f, w[2 * o + 1] = 0.5f;
  int64_t xd = 4, yd = 6, td = 12;
  tt[OM_RESIZE_T_X] =
      (om_tensor){.name = 11, .region = OM_REGION_WORKSPACE, .dtype = DT_FLOAT32, .rank = 1, .bytes = 16};
  tt[OM_RESIZE_T_X].dims[0] = xd;
  tt[OM_RESIZE_T_IDX] =
      (om_tensor){.name = 11, .region = OM_REGION_WEIGHTS, .dtype = DT_INT32, .rank = 1, .bytes = 48};
  tt[OM_RESIZE_T_IDX].dims[0] = td;
  tt[OM_RESIZE_T_W] = (om_tensor){
      .name = 11, .region = OM_REGION_WEIGHTS, .dtype = DT_FLOAT32, .rank = 1, .offset = 128, .bytes = 48};
  tt[OM_RESIZE_T_W].dims[0] = td;
  tt[OM_RESIZE_T_Y] =
      (om_tensor){.name = 11, .region = OM_REGION_WORKSPACE, .dtype = DT_FLOAT32, .rank = 1, .bytes = 24};
  tt[OM_RESIZE_T_Y].dims[0] = yd;
  om_task task = {.kind = OM_TASK_RESIZE, .name = 1, .block_dim = 1, .ntensors = 4, .tensors = {0, 1, 2, 3}};
  task.params[OM_RESIZE_P_TAPS] = 2;
  switch (mutate) {
  case 0: task.params[OM_RESIZE_P_MODE] = 2; break;
  case 1: task.params[OM_RESIZE_P_TAPS] = 3; break;                /* taps that do not match the table */
  case 2: task.params[OM_RESIZE_P_TAPS + 1] = 1; break;            /* taps past the rank */
  case 3: idx[5] = 4; break;                                       /* outside x */
  case 4: idx[5] = -1; break;                                      /* -1 in a tap other than 0 */
  case 5: tt[OM_RESIZE_T_IDX].region = OM_REGION_WORKSPACE; break; /* tables must be WEIGHTS */
  case 6: task.params[OM_RESIZE_P_MODE] = 1; break;                /* select with weights / 2 taps */
  case 7:
    tt[OM_RESIZE_T_X].dtype = DT_INT32, tt[OM_RESIZE_T_X].bytes = 16;
    break;                                                /* interpolating integers */
  case 8: task.params[OM_RESIZE_P_VALUE_HI] = 1; break;   /* 8 bytes of extrapolation value for f32 */
  case 9: task.block_dim = 2; break;                      /* one row */
  case 10: task.params[OM_RESIZE_P_TAPS] = 0; break;      /* no taps, yet x != y */
  case 11: task.params[OM_RESIZE_NPARAMS + 4] = 3; break; /* an unused param */
  default: break;
  }
  omrt_model m = {.def = &def,
                  .tensors = tt,
                  .tasks = &task,
                  .strings = strings,
                  .strings_bytes = sizeof strings,
                  .weights = weights,
                  .weights_bytes = 256};
  omrt_status s = rt_kernels[OM_TASK_RESIZE].check(&m, 0, &task);
  if (mutate < 0) {
    CHECK_EQ_INT(s, OMRT_OK);
    if (s) test_note("  %s", omrt_last_error());
  } else {
    const char *msg = omrt_last_error();
    int ok = s == OMRT_ERR_FORMAT && msg && strstr(msg, "test_task") && strstr(msg, want);
    test_check(ok, __FILE__, __LINE__, what);
    if (!ok) test_note("  %s: status %d, message '%s'", what, s, msg ? msg : "(null)");
  }
  free(weights);
}

static void test_checks(void) {
  bad(-1, "valid", NULL);
  bad(0, "mode 2", "mode");
  bad(1, "taps 3", "idx");
  bad(2, "taps past the rank", "past the rank");
  bad(3, "index outside x", "outside x");
  bad(4, "-1 in tap 1", "outside x");
  bad(5, "tables in WORKSPACE", "WEIGHTS");
  bad(6, "select with weights", "select");
  bad(7, "interpolating i32", "interpolation");
  bad(8, "extrapolation bytes", "extrapolation");
  bad(9, "block_dim 2", "block_dim");
  bad(10, "no taps but resized", "no taps");
  bad(11, "unused param", "unused");
}

int main(void) {
  test_modes();
  test_sizes();
  test_checks();
  return test_summary("resize");
}
