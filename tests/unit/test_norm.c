/* test_norm.c - the vector unit's row normalizations (runtime/kernels_norm.c)
 * against the reference evaluator (tests/unit/evalref.h): SOFTMAX and
 * LAYERNORM.
 *
 * SOFTMAX and log-softmax on the last axis (rows resident in the UB, and
 * rows longer than half the UB, streamed in chunks), on an inner axis
 * (interleaved vectors staged as [len][lanes] blocks: runs of more than
 * 256 vectors, vectors so long that only a few lanes fit, and one so long
 * that not even one does), coerce_2d, f16 and f32 in either direction,
 * several block_dims (block boundaries cutting the lane runs), and rows of
 * -inf, +inf and NaN (NaN rows give NaN, as the reference does).
 * LAYERNORM and RMS norm over the last dims (one, or several: the axis
 * before the last), with and without scale, bias and a residual (the sum
 * output bit for bit), rows of 33 to 2000 elements, a mean far from zero
 * (the variance must not cancel), f16 and f32 tensors and parameters.
 * The fused LAYERNORM rows of AVX-512 hosts bit for bit against the row
 * instructions' path. The host's exp-and-sum rows (rt_cpu()->vexp_sum,
 * vexp_sum_r16) bit for bit against om_vexp and rt_f2h on every 61st float
 * of the exp's range, NaNs and infinities, rows of 1 to 40 elements (the
 * masked tails), the sums within f32 reordering of the exact one. Then the
 * load-time checks' rules. ctest runs this
 * file on every kernel path (AVX-512, the AVX2 row instructions with
 * OMRT_AVX512=0, the portable loops with OMRT_PORTABLE=1).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fp16.h"
#include "common/vmath.h"
#include "evalref.h"
#include "kcase.h"
#include "runtime/kernels.h"
#include "support.h"

static uint32_t rng = 12345;
static float frand(void) { /* uniform [-1, 1) */
  rng = rng * 1664525u + 1013904223u;
  return (float)((rng >> 8) & 0xffffff) / 8388608.0f - 1.0f;
}

static size_t count(int rank, const int64_t *dims) {
  size_t n = 1;
  for (int i = 0; i < rank; i++)
    n *= (size_t)dims[i];
  return n;
}

/* n values in [-scale, scale), representable in dtype dt. */
static float *gen(size_t n, int dt, float scale) {
  float *v = malloc(n * sizeof *v);
  for (size_t i = 0; i < n; i++) {
    v[i] = frand() * scale;
    if (dt == DT_FLOAT16) v[i] = half_to_float(float_to_half(v[i]));
  }
  return v;
}

static void put(kcase *c, int s, const float *v) {
  for (size_t i = 0; i < count((int)c->t[s].rank, c->t[s].dims); i++)
    rt_put(c->data[s], (int)c->t[s].dtype, i, v[i]);
}

static float *get(const kcase *c, int s) {
  size_t n = count((int)c->t[s].rank, c->t[s].dims);
  float *v = malloc(n * sizeof *v);
  for (size_t i = 0; i < n; i++)
    v[i] = rt_get(c->data[s], (int)c->t[s].dtype, i);
  return v;
}

static void run(kcase *c) {
  omrt_status s = kc_check(c);
  CHECK_EQ_INT(s, OMRT_OK);
  if (s != OMRT_OK) {
    test_note("  %s", omrt_last_error());
    return;
  }
  kc_run_blocks(c, kc_core());
}

/* |got - ref| <= tol * (1 + |ref|) everywhere, NaN only where ref is NaN. */
static void compare(const char *what, const float *got, const float *ref, size_t n, double tol) {
  size_t bad = 0, first = 0;
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double err = isnan(ref[i])   ? (isnan(got[i]) ? 0 : INFINITY)
                 : isinf(ref[i]) ? (got[i] == ref[i] ? 0 : INFINITY)
                                 : fabs((double)got[i] - ref[i]) / (1 + fabs(ref[i]));
    if (!(err <= tol)) {
      if (!bad++) first = i;
      if (!(err <= worst)) worst = err;
    }
  }
  test_check(bad == 0, __FILE__, __LINE__, what);
  if (bad)
    test_note("  %s: %zu of %zu off (first at %zu: got %g, want %g; worst %g)", what, bad, n, first,
              (double)got[first], (double)ref[first], worst);
}

/* --- SOFTMAX */

typedef struct sm_case {
  int rank;
  int64_t dims[4];
  int axis, coerce, log, xdt, ydt, bd;
} sm_case;

static void softmax_case(const sm_case *k, const float *x, const char *what) {
  size_t n = count(k->rank, k->dims);
  kcase c;
  kc_setup(&c, OM_TASK_SOFTMAX, (uint32_t)k->bd, 0);
  int xs = kc_add(&c, k->xdt, LAYOUT_ND, k->rank, k->dims),
      ys = kc_add(&c, k->ydt, LAYOUT_ND, k->rank, k->dims);
  c.task.params[OM_SOFTMAX_P_AXIS] = k->axis, c.task.params[OM_SOFTMAX_P_COERCE_2D] = k->coerce;
  c.task.params[OM_SOFTMAX_P_LOG] = k->log;
  put(&c, xs, x);
  run(&c);
  float *got = get(&c, ys);
  er e;
  er_new(&e, IR_OP_SOFTMAX, 1);
  er_in(&e, DT_FLOAT32, k->rank, k->dims, x);
  ir_attr_set_int(e.g, e.n, "axis", k->axis);
  ir_attr_set_int(e.g, e.n, "coerce_2d", k->coerce);
  ir_attr_set_int(e.g, e.n, "log", k->log);
  float *ref = er_run(&e, 0);
  CHECK(ref != NULL);
  if (ref) compare(what, got, ref, n, k->ydt == DT_FLOAT16 || k->xdt == DT_FLOAT16 ? 2e-3 : 2e-6);
  free(got), free(ref);
  er_free(&e);
  kc_free(&c);
}

static void test_softmax(void) {
  const int F32 = DT_FLOAT32, F16 = DT_FLOAT16;
  /* clang-format off */
  const sm_case cases[] = {
      {3, {2, 5, 7}, 1, 0, 0, F32, F32, 3},       {3, {2, 5, 7}, 1, 1, 0, F16, F32, 2},
      {3, {2, 5, 7}, 2, 0, 1, F32, F16, 5},       {3, {2, 5, 7}, 0, 0, 0, F16, F16, 7},
      {3, {2, 5, 7}, 0, 1, 1, F32, F32, 1},       {2, {3, 1000}, 1, 0, 0, F16, F16, 2},
      {2, {3, 1000}, 1, 0, 1, F32, F32, 3},       {2, {2, 40000}, 1, 0, 0, F32, F32, 2},
      {2, {2, 40000}, 1, 0, 1, F16, F32, 1},      {3, {2, 7, 300}, 1, 0, 0, F32, F16, 5},
      {3, {2, 7, 300}, 1, 0, 1, F16, F16, 7},     {3, {1, 5000, 20}, 1, 0, 0, F32, F32, 3},
      {3, {1, 5000, 20}, 1, 0, 1, F32, F32, 1},   {3, {1, 40000, 3}, 1, 0, 0, F32, F32, 2},
      {3, {1, 40000, 3}, 1, 0, 1, F32, F32, 1},   {4, {2, 8, 64, 64}, 3, 0, 0, F16, F16, 2},
      {4, {2, 3, 4, 50}, 1, 1, 0, F32, F32, 2},
  };
  /* clang-format on */
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    size_t n = count(cases[i].rank, cases[i].dims);
    float *x = gen(n, cases[i].xdt, 6.0f);
    char what[64];
    snprintf(what, sizeof what, "softmax case %zu", i);
    softmax_case(&cases[i], x, what);
    free(x);
  }
  /* rows of -inf (NaN out), one +inf, one NaN, one -inf among finite values */
  const sm_case sp[] = {{2, {4, 37}, 1, 0, 0, F32, F32, 2},
                        {2, {4, 37}, 1, 0, 1, F32, F32, 1},
                        {2, {37, 4}, 0, 0, 0, F32, F32, 2}};
  for (size_t i = 0; i < sizeof sp / sizeof *sp; i++) {
    float *x = gen(148, F32, 3.0f);
    for (int k = 0; k < 148; k++) {
      int row = sp[i].axis == 1 ? k / 37 : k % 4;
      if (row == 0) x[k] = -INFINITY;
      if (row == 3 && k % 5 == 0) x[k] = -INFINITY;
    }
    x[sp[i].axis == 1 ? 37 + 5 : 4 * 5 + 1] = INFINITY;
    x[sp[i].axis == 1 ? 74 + 9 : 4 * 9 + 2] = NAN;
    char what[64];
    snprintf(what, sizeof what, "softmax special values %zu", i);
    softmax_case(&sp[i], x, what);
    free(x);
  }
}

static void test_softmax_check(void) {
  int64_t d[2] = {3, 4}, d2[2] = {3, 5};
  kcase c;
  kc_setup(&c, OM_TASK_SOFTMAX, 1, 0);
  kc_add(&c, DT_FLOAT32, LAYOUT_ND, 2, d);
  kc_add(&c, DT_FLOAT16, LAYOUT_ND, 2, d);
  c.task.params[OM_SOFTMAX_P_AXIS] = 1;
  CHECK_EQ_INT(kc_check(&c), OMRT_OK);
  c.task.params[OM_SOFTMAX_P_AXIS] = 2;
  expect_reject(&c, "softmax axis past the rank", "axis");
  c.task.params[OM_SOFTMAX_P_AXIS] = 1, c.task.params[OM_SOFTMAX_P_LOG] = 2;
  expect_reject(&c, "softmax log not 0/1", "log");
  c.task.params[OM_SOFTMAX_P_LOG] = 0, c.task.block_dim = 4;
  expect_reject(&c, "softmax block_dim above the vectors", "block_dim");
  c.task.block_dim = 1;
  kc_set(&c, 1, DT_FLOAT32, 2, d2);
  expect_reject(&c, "softmax y dims differ", "dims");
  kc_free(&c);
}

/* --- LAYERNORM */

typedef struct ln_case {
  int rank;
  int64_t dims[4];
  int axis, rms, has_scale, has_bias, has_res, has_sum, xdt, ydt, pdt, bd;
  float eps;
} ln_case;

static void layernorm_case(const ln_case *k, const char *what) {
  size_t n = count(k->rank, k->dims), d = 1;
  for (int i = k->axis; i < k->rank; i++)
    d *= (size_t)k->dims[i];
  int64_t pd[4], prank = k->rank - k->axis + 1; /* one row, with a leading 1 */
  pd[0] = 1;
  for (int i = k->axis; i < k->rank; i++)
    pd[1 + i - k->axis] = k->dims[i];
  float *x = gen(n, k->xdt, 3.0f), *r = gen(n, k->xdt, 2.0f), *sc = gen(d, k->pdt, 1.5f),
        *bi = gen(d, k->pdt, 1.0f);
  for (size_t i = 0; i < n; i++) /* a mean far from 0: the variance must not cancel */
    x[i] = k->xdt == DT_FLOAT16 ? half_to_float(float_to_half(x[i] + 20.0f)) : x[i] + 20.0f;
  kcase c;
  kc_setup(&c, OM_TASK_LAYERNORM, (uint32_t)k->bd, 0);
  int xs = kc_add(&c, k->xdt, LAYOUT_ND, k->rank, k->dims), ss = -1, bs = -1, rs = -1, sums = -1;
  if (k->has_scale)
    ss = kc_add(&c, k->pdt, LAYOUT_ND, (int)prank, pd);
  else
    kc_none(&c);
  if (k->has_bias)
    bs = kc_add(&c, k->pdt, LAYOUT_ND, (int)prank - 1, pd + 1);
  else
    kc_none(&c);
  if (k->has_res)
    rs = kc_add(&c, k->xdt, LAYOUT_ND, k->rank, k->dims);
  else
    kc_none(&c);
  int ys = kc_add(&c, k->ydt, LAYOUT_ND, k->rank, k->dims);
  if (k->has_sum)
    sums = kc_add(&c, k->xdt, LAYOUT_ND, k->rank, k->dims);
  else
    kc_none(&c);
  c.task.params[OM_LAYERNORM_P_AXIS] = k->axis, c.task.params[OM_LAYERNORM_P_RMS] = k->rms;
  memcpy(&c.task.params[OM_LAYERNORM_P_EPSILON], &k->eps, 4);
  put(&c, xs, x);
  if (ss >= 0) put(&c, ss, sc);
  if (bs >= 0) put(&c, bs, bi);
  if (rs >= 0) put(&c, rs, r);
  run(&c);
  er e;
  er_new(&e, IR_OP_LAYERNORM, k->has_sum ? 2 : 1);
  /* x and the residual in their dtype: the reference rounds their sum to it */
  void *xb = malloc(n * dtype_size(k->xdt)), *rb = malloc(n * dtype_size(k->xdt));
  for (size_t i = 0; i < n; i++)
    rt_put(xb, k->xdt, i, x[i]), rt_put(rb, k->xdt, i, r[i]);
  er_in(&e, k->xdt, k->rank, k->dims, xb);
  er_in(&e, DT_FLOAT32, (int)prank, pd, k->has_scale ? sc : NULL);
  er_in(&e, DT_FLOAT32, (int)prank - 1, pd + 1, k->has_bias ? bi : NULL);
  if (k->has_res) er_in(&e, k->xdt, k->rank, k->dims, rb);
  free(xb), free(rb);
  ir_attr_set_int(e.g, e.n, "axis", k->axis);
  ir_attr_set_int(e.g, e.n, "rms", k->rms);
  ir_attr_set_float(e.g, e.n, "epsilon", k->eps);
  float *ref = er_run(&e, 0), *ref_sum = k->has_sum ? er_run(&e, 1) : NULL;
  CHECK(ref != NULL);
  float *got = get(&c, ys);
  double tol = k->ydt == DT_FLOAT16 || k->xdt == DT_FLOAT16 ? 3e-3 : 1e-5;
  if (ref) compare(what, got, ref, n, tol);
  if (ref_sum) {
    float *gs = get(&c, sums);
    char w2[80];
    snprintf(w2, sizeof w2, "%s (sum)", what);
    compare(w2, gs, ref_sum, n, 0);
    free(gs);
  }
  free(got), free(ref), free(ref_sum), free(x), free(r), free(sc), free(bi);
  er_free(&e);
  kc_free(&c);
}

static void test_layernorm(void) {
  const int F32 = DT_FLOAT32, F16 = DT_FLOAT16;
  /* clang-format off */
  const ln_case cases[] = {
      /* rank dims            axis rms sc bi res sum x    y    p    bd eps */
      {3, {2, 5, 64},         2,   0,  1, 1, 0,  0,  F32, F32, F32, 3, 1e-5f},
      {3, {2, 5, 64},         2,   0,  1, 1, 1,  1,  F16, F16, F16, 4, 1e-5f},
      {3, {2, 5, 64},         2,   1,  1, 0, 0,  0,  F32, F16, F16, 2, 1e-6f},
      {3, {3, 4, 33},         1,   0,  1, 1, 1,  0,  F32, F32, F32, 3, 1e-5f},
      {3, {3, 4, 33},         1,   1,  0, 0, 1,  1,  F32, F32, F32, 1, 0.0f},
      {2, {7, 768},           1,   0,  0, 1, 0,  0,  F16, F32, F32, 7, 1e-5f},
      {2, {7, 768},           0,   0,  1, 1, 0,  0,  F32, F32, F16, 1, 1e-5f},
      {4, {2, 3, 2, 1000},    3,   1,  1, 0, 1,  1,  F16, F16, F32, 5, 1e-6f},
  };
  /* clang-format on */
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char what[64];
    snprintf(what, sizeof what, "layernorm case %zu", i);
    layernorm_case(&cases[i], what);
  }
}

/* The fused LAYERNORM rows of the host (rt_cpu()->layernorm: AVX-512)
 * against the row instructions' path, bit for bit: rows of 768 and of
 * lengths with 16-, 8- and 1-element tails, every combination of scale,
 * bias, residual and sum, f16 and f32. */
static void test_layernorm_paths(void) {
  const rt_cpu_paths *cpu = rt_cpu();
  if (!cpu->layernorm) {
    test_note("no fused LAYERNORM rows on this path");
    return;
  }
  static const size_t lens[] = {768, 33, 56, 1000, 7};
  for (size_t li = 0; li < sizeof lens / sizeof *lens; li++)
    for (int mask = 0; mask < 32; mask++) {
      const size_t D = lens[li], rows = 3, n = rows * D;
      const int sc = mask & 1, bi = mask >> 1 & 1, res = mask >> 2 & 1, sum = res && (mask >> 3 & 1);
      const int dt = mask >> 4 & 1 ? DT_FLOAT16 : DT_FLOAT32, yt = li % 2 ? DT_FLOAT32 : dt;
      float *x = gen(n, dt, 4.0f), *r = gen(n, dt, 2.0f), *scale = gen(D, DT_FLOAT32, 1.5f),
            *bias = gen(D, DT_FLOAT32, 1.0f), *row = malloc(D * sizeof *row);
      void *xb = malloc(n * 4), *rb = malloc(n * 4), *y[2] = {calloc(n, 4), calloc(n, 4)},
           *s[2] = {calloc(n, 4), calloc(n, 4)};
      for (size_t i = 0; i < n; i++)
        rt_put(xb, dt, i, x[i] + 7.0f), rt_put(rb, dt, i, r[i]);
      for (int path = 0; path < 2; path++) {
        const rt_ln_rows a = {.x = xb,
                              .res = res ? rb : NULL,
                              .sum = sum ? s[path] : NULL,
                              .y = y[path],
                              .xt = dt,
                              .rt = dt,
                              .st = dt,
                              .yt = yt,
                              .scale = sc ? scale : NULL,
                              .bias = bi ? bias : NULL,
                              .eps = 1e-5f,
                              .rms = mask == 5,
                              .d = D};
        if (path == 0)
          CHECK(cpu->layernorm(&a, 0, rows, row));
        else
          rt_layernorm_rows(&a, 0, rows, row);
      }
      int same = !memcmp(y[0], y[1], n * dtype_size(yt)) && !memcmp(s[0], s[1], n * dtype_size(dt));
      test_check(same, __FILE__, __LINE__, "fused layernorm rows equal the row instructions' bit for bit");
      if (!same) test_note("  D %zu, mask %d", D, mask);
      free(x), free(r), free(scale), free(bias), free(row), free(xb), free(rb);
      free(y[0]), free(y[1]), free(s[0]), free(s[1]);
    }
}

static void test_layernorm_check(void) {
  int64_t d[2] = {3, 8}, row[1] = {8}, bad[1] = {7};
  kcase c;
  kc_setup(&c, OM_TASK_LAYERNORM, 3, 0);
  kc_add(&c, DT_FLOAT16, LAYOUT_ND, 2, d);
  kc_add(&c, DT_FLOAT32, LAYOUT_ND, 1, row);
  kc_none(&c);
  kc_add(&c, DT_FLOAT16, LAYOUT_ND, 2, d);
  kc_add(&c, DT_FLOAT32, LAYOUT_ND, 2, d);
  kc_add(&c, DT_FLOAT16, LAYOUT_ND, 2, d);
  float eps = 1e-5f;
  c.task.params[OM_LAYERNORM_P_AXIS] = 1;
  memcpy(&c.task.params[OM_LAYERNORM_P_EPSILON], &eps, 4);
  CHECK_EQ_INT(kc_check(&c), OMRT_OK);
  c.task.block_dim = 4;
  expect_reject(&c, "layernorm block_dim above the rows", "block_dim");
  c.task.block_dim = 3, c.task.params[OM_LAYERNORM_P_AXIS] = 2;
  expect_reject(&c, "layernorm axis past the rank", "axis");
  c.task.params[OM_LAYERNORM_P_AXIS] = 1, c.task.params[OM_LAYERNORM_P_RMS] = 3;
  expect_reject(&c, "layernorm rms not 0/1", "rms");
  c.task.params[OM_LAYERNORM_P_RMS] = 0, eps = -1.0f;
  memcpy(&c.task.params[OM_LAYERNORM_P_EPSILON], &eps, 4);
  expect_reject(&c, "layernorm negative epsilon", "epsilon");
  eps = 1e-5f;
  memcpy(&c.task.params[OM_LAYERNORM_P_EPSILON], &eps, 4);
  kc_set(&c, OM_LAYERNORM_T_SCALE, DT_FLOAT32, 1, bad);
  expect_reject(&c, "layernorm scale not one row", "scale");
  kc_set(&c, OM_LAYERNORM_T_SCALE, DT_FLOAT32, 1, row);
  kc_set(&c, OM_LAYERNORM_T_SUM, DT_FLOAT32, 2, d);
  expect_reject(&c, "layernorm sum of another dtype", "dtype");
  kc_set(&c, OM_LAYERNORM_T_SUM, DT_FLOAT16, 2, d);
  c.task.tensors[OM_LAYERNORM_T_RESIDUAL] = OM_NONE;
  expect_reject(&c, "layernorm sum without a residual", "residual");
  kc_free(&c);
}

/* The exp-and-sum row instructions of the host against om_vexp (the
 * contract at the top). */
static void test_vexp_rows(void) {
  const rt_cpu_paths *cpu = rt_cpu();
  enum { N = 4099 }; /* not a multiple of 16: a masked tail */
  static float x[N], y[N], z[N];
  int bad = 0, bad_sum = 0;
  uint64_t n = 0;
  for (uint32_t sign = 0; sign < 2; sign++) { /* x - 0.5 over the floats of om_vexp's range and beyond */
    uint32_t top = sign ? 0xc2d20000u /* -105 */ : 0x42b40000u /* 90 */, b = sign << 31;
    while (b <= top) {
      size_t k = 0;
      if (b == sign << 31) /* the first row of each sign starts with the special values */
        x[k++] = INFINITY, x[k++] = -INFINITY, x[k++] = NAN, x[k++] = -NAN;
      for (; k < N && b <= top; k++, b += 61)
        memcpy(&x[k], &b, 4);
      for (size_t len = 1; len <= 40 && len <= k; len++) { /* the short rows' tails */
        memcpy(y, x, len * 4);
        float s = rt_vexp_sum(y, 0.5f, len);
        double want = 0;
        for (size_t i = 0; i < len; i++) {
          float e = om_vexp(x[i] - 0.5f);
          bad += memcmp(&e, &y[i], 4) != 0;
          want += e;
        }
        bad_sum += !(fabs(s - want) <= 1e-5 * fabs(want) || (isnan(want) && isnan(s)) ||
                     (want > FLT_MAX && isinf(s))); /* overflowing in f32 */
      }
      memcpy(y, x, k * 4), memcpy(z, x, k * 4);
      float s = rt_vexp_sum(y, 0.5f, k), s16 = cpu->vexp_sum_r16 ? cpu->vexp_sum_r16(z, 0.5f, k) : s;
      for (size_t i = 0; i < k; i++) {
        float e = om_vexp(x[i] - 0.5f), e16 = rt_h2f(rt_f2h(e));
        bad += memcmp(&e, &y[i], 4) != 0;
        bad += cpu->vexp_sum_r16 && memcmp(&e16, &z[i], 4) != 0 && !(isnan(e16) && isnan(z[i]));
      }
      bad_sum += memcmp(&s, &s16, 4) != 0 && !(isnan(s) && isnan(s16));
      n += k;
    }
  }
  test_note("vexp rows: %llu arguments (%s)", (unsigned long long)n,
            cpu->vexp_sum_r16 ? "with the f16 rounding" : "no f16 rounding path");
  CHECK_EQ_INT(bad, 0);
  CHECK_EQ_INT(bad_sum, 0);
}

int main(void) {
  test_note("kernel paths: %s", rt_cpu()->name);
  test_vexp_rows();
  test_softmax();
  test_softmax_check();
  test_layernorm();
  test_layernorm_paths();
  test_layernorm_check();
  return test_summary("norm");
}
