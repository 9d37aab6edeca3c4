/* test_reduce.c - the REDUCE task kind (runtime/kernels_reduce.c) against a
 * brute-force reference, its load-time check, and the compiler side of
 * Reduce: the reference evaluator (ir/eval.c) on the same cases.
 *
 * Kernel cases: a [3,1,4,5] input (the extent-1 dim exercises the kernel's
 * canonicalisation), every one of the 16 axes masks, every op, f32 and f16
 * in and out, f64, i32, i64, i16, u16, u32 and u64 for the integer ops, with and without keepdims,
 * 1 and 3 blocks; arg-extrema on data with ties, with and without
 * select_last_index; u64 extrema above 2^63; every op over an empty set
 * (its identity). The reference walks every x element in C order and
 * accumulates in double (f16 cases compare with fp16 tolerance). Then every
 * rule of the check is broken once and must be refused with a message that
 * names the task and the field. Finally the reference evaluator runs a few
 * Reduce graphs written in the IR text form (also the opset-18 default of
 * reducing every axis, noop, an empty reduction and select_last_index).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fp16.h"
#include "ir/eval.h"
#include "ir/ir.h"
#include "omrt.h"
#include "runtime/kernels.h"
#include "kcase.h"
#include "support.h"

static uint32_t rng_state = 777;
static int irand(int n) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return (int)((rng_state >> 8) % (uint32_t)n);
}

/* --- a task inside a fake model (tensor i in slot i) */

static void kc_run(kcase *c) {
  omrt_status s = kc_check(c);
  CHECK_EQ_INT(s, OMRT_OK);
  if (s != OMRT_OK) {
    test_note("  %s", omrt_last_error());
    return;
  }
  kc_run_blocks(c, NULL);
}

static void kc_init(kcase *c, int op, uint32_t mask, uint32_t block_dim) {
  kc_setup(c, OM_TASK_REDUCE, block_dim, 2);
  c->task.params[OM_REDUCE_P_OP] = op, c->task.params[OM_REDUCE_P_AXES] = (int32_t)mask;
}

static double get(const void *p, int dt, size_t i) {
  switch (dt) {
  case DT_FLOAT32: return ((const float *)p)[i];
  case DT_FLOAT16: return half_to_float(((const uint16_t *)p)[i]);
  case DT_DOUBLE: return ((const double *)p)[i];
  case DT_INT32: return ((const int32_t *)p)[i];
  case DT_INT16: return ((const int16_t *)p)[i];
  case DT_UINT16: return ((const uint16_t *)p)[i];
  case DT_UINT32: return ((const uint32_t *)p)[i];
  case DT_UINT64: return (double)((const uint64_t *)p)[i];
  default: return (double)((const int64_t *)p)[i];
  }
}

static void put(void *p, int dt, size_t i, double v) {
  switch (dt) {
  case DT_FLOAT32: ((float *)p)[i] = (float)v; break;
  case DT_FLOAT16: ((uint16_t *)p)[i] = float_to_half((float)v); break;
  case DT_DOUBLE: ((double *)p)[i] = v; break;
  case DT_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
  case DT_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
  case DT_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
  case DT_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
  case DT_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; break;
  default: ((int64_t *)p)[i] = (int64_t)v; break;
  }
}

/* --- kernel vs reference */

enum { RANK = 4, XN = 60 };
static const int64_t XD[RANK] = {3, 1, 4, 5};

/* y dims for mask/keepdims; returns the rank. */
static int y_dims(uint32_t mask, int keep, int64_t *yd) {
  int r = 0;
  for (int d = 0; d < RANK; d++)
    if (!((mask >> d) & 1u) || keep) yd[r++] = (mask >> d) & 1u ? 1 : XD[d];
  return r;
}

/* The reference: y element of every x element, then fold per op. */
static void reference(int op, int last, uint32_t mask, const double *x, double *ref, size_t yn) {
  double acc[XN], mx[XN];
  int64_t cnt[XN], pos[XN];
  for (size_t o = 0; o < yn; o++) {
    acc[o] = op == OM_REDUCE_PROD ? 1 : op == OM_REDUCE_MAX ? -INFINITY : op == OM_REDUCE_MIN ? INFINITY : 0;
    mx[o] = -INFINITY, cnt[o] = 0, pos[o] = 0;
  }
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < XN; i++) {
      int64_t idx[RANK], rest = (int64_t)i, o = 0, along = 0;
      for (int d = RANK - 1; d >= 0; d--)
        idx[d] = rest % XD[d], rest /= XD[d];
      for (int d = 0; d < RANK; d++)
        if (!((mask >> d) & 1u))
          o = o * XD[d] + idx[d];
        else
          along = idx[d]; /* arg modes reduce one axis */
      double v = x[i];
      if (pass == 0) {
        mx[o] = v > mx[o] ? v : mx[o];
        continue;
      }
      int first = cnt[o]++ == 0;
      switch (op) {
      case OM_REDUCE_MAX: acc[o] = fmax(acc[o], v); break;
      case OM_REDUCE_MIN: acc[o] = fmin(acc[o], v); break;
      case OM_REDUCE_PROD: acc[o] *= v; break;
      case OM_REDUCE_L1: acc[o] += fabs(v); break;
      case OM_REDUCE_L2:
      case OM_REDUCE_SUMSQUARE: acc[o] += v * v; break;
      case OM_REDUCE_LOGSUMEXP: acc[o] += exp(v - mx[o]); break;
      case OM_REDUCE_ARGMAX:
      case OM_REDUCE_ARGMIN: {
        int better = op == OM_REDUCE_ARGMAX ? v > acc[o] : v < acc[o];
        if (first || better || (last && v == acc[o])) acc[o] = v, pos[o] = along;
        break;
      }
      default: acc[o] += v; break;
      }
    }
  for (size_t o = 0; o < yn; o++) {
    double a = acc[o];
    switch (op) {
    case OM_REDUCE_MEAN: a /= (double)cnt[o]; break;
    case OM_REDUCE_L2: a = sqrt(a); break;
    case OM_REDUCE_LOGSUM: a = log(a); break;
    case OM_REDUCE_LOGSUMEXP: a = mx[o] + log(a); break;
    case OM_REDUCE_ARGMAX:
    case OM_REDUCE_ARGMIN: a = (double)pos[o]; break;
    default: break;
    }
    ref[o] = a;
  }
}

static void one_case(int op, uint32_t mask, int keep, int xdt, int ydt, int last, uint32_t bd) {
  int64_t yd[RANK];
  int yr = y_dims(mask, keep, yd);
  size_t yn = 1;
  for (int d = 0; d < yr; d++)
    yn *= (size_t)yd[d];
  kcase c;
  kc_init(&c, op, mask, bd < yn ? bd : 1);
  c.task.params[OM_REDUCE_P_SELECT_LAST_INDEX] = last;
  kc_set(&c, OM_REDUCE_T_X, xdt, RANK, XD);
  kc_set(&c, OM_REDUCE_T_Y, ydt, yr, yd);
  double x[XN], ref[XN];
  int fl = xdt == DT_FLOAT32 || xdt == DT_FLOAT16 || xdt == DT_DOUBLE;
  int uns = xdt == DT_UINT16 || xdt == DT_UINT32 || xdt == DT_UINT64;
  int is_arg = op == OM_REDUCE_ARGMAX || op == OM_REDUCE_ARGMIN;
  for (size_t i = 0; i < XN; i++) {
    /* positive data for LOGSUM; few distinct values for arg ties; small
     * magnitudes near 1 for PROD */
    double v = is_arg                 ? irand(4)
               : op == OM_REDUCE_PROD ? (fl ? 0.8 + irand(9) * 0.05 : irand(3) - 1)
                                      : irand(17) - 8;
    if (fl && !is_arg && op != OM_REDUCE_PROD) v = v / 4.0 + (op == OM_REDUCE_LOGSUM ? 2.5 : 0.0);
    if (uns) v = fabs(v);
    put(c.data[OM_REDUCE_T_X], xdt, i, v);
    x[i] = get(c.data[OM_REDUCE_T_X], xdt, i); /* as stored (f16-rounded) */
  }
  reference(op, last, mask, x, ref, yn);
  kc_run(&c);
  double worst = 0;
  size_t at = 0;
  for (size_t o = 0; o < yn; o++) {
    double got = get(c.data[OM_REDUCE_T_Y], ydt, o), e = fabs(got - ref[o]) / fmax(1.0, fabs(ref[o]));
    if (!(e <= worst)) worst = e, at = o;
  }
  double tol = ydt == DT_FLOAT16 ? 2e-3 : ydt == DT_FLOAT32 ? 1e-5 : ydt == DT_DOUBLE ? 1e-13 : 0;
  char what[128];
  snprintf(what, sizeof what, "reduce op %d mask 0x%x keep %d x %d y %d last %d bd %u", op, mask, keep, xdt,
           ydt, last, bd);
  test_check(worst <= tol, __FILE__, __LINE__, what);
  if (!(worst <= tol))
    test_note("  %s: error %g at %zu (got %g, want %g)", what, worst, at, get(c.data[OM_REDUCE_T_Y], ydt, at),
              ref[at]);
  kc_free(&c);
}

static void test_kernel(void) {
  for (int op = 0; op < OM_REDUCE_OP_COUNT; op++) {
    int is_arg = op == OM_REDUCE_ARGMAX || op == OM_REDUCE_ARGMIN;
    int int_ok = op == OM_REDUCE_SUM || op == OM_REDUCE_PROD || op == OM_REDUCE_MAX || op == OM_REDUCE_MIN ||
                 op == OM_REDUCE_L1 || op == OM_REDUCE_SUMSQUARE || is_arg;
    for (uint32_t mask = 0; mask < 16; mask++) {
      if (is_arg && __builtin_popcount(mask) != 1) continue;
      for (int keep = 0; keep < 2; keep++) {
        uint32_t bd = 1 + 2 * (mask & 1u);
        if (is_arg) {
          for (int last = 0; last < 2; last++) {
            one_case(op, mask, keep, DT_FLOAT32, DT_INT64, last, bd);
            one_case(op, mask, keep, DT_INT64, DT_INT64, last, bd);
            one_case(op, mask, keep, DT_FLOAT16, DT_INT64, last, bd);
            one_case(op, mask, keep, DT_DOUBLE, DT_INT64, last, bd);
            one_case(op, mask, keep, DT_UINT32, DT_INT64, last, bd);
          }
          continue;
        }
        one_case(op, mask, keep, DT_FLOAT32, DT_FLOAT32, 0, bd);
        one_case(op, mask, keep, DT_FLOAT16, DT_FLOAT16, 0, bd);
        one_case(op, mask, keep, DT_FLOAT32, DT_FLOAT16, 0, bd);
        one_case(op, mask, keep, DT_DOUBLE, DT_DOUBLE, 0, bd);
        if (int_ok) {
          static const int ints[] = {DT_INT32, DT_INT64, DT_INT16, DT_UINT16, DT_UINT32, DT_UINT64};
          for (size_t k = 0; k < sizeof ints / sizeof *ints; k++)
            one_case(op, mask, keep, ints[k], ints[k], 0, bd);
        }
      }
    }
  }
}

/* u64 extrema and arg-extrema order values above 2^63 as unsigned numbers. */
static void test_u64_order(void) {
  static const int ops[] = {OM_REDUCE_MAX, OM_REDUCE_MIN, OM_REDUCE_ARGMAX, OM_REDUCE_ARGMIN};
  const uint64_t x[4] = {5, UINT64_MAX - 1, 1ull << 63, 7};
  const uint64_t want[4] = {UINT64_MAX - 1, 5, 1, 0};
  int64_t xd[1] = {4}, yd[1] = {1};
  for (int k = 0; k < 4; k++) {
    kcase c;
    kc_init(&c, ops[k], 1u, 1);
    kc_set(&c, OM_REDUCE_T_X, DT_UINT64, 1, xd);
    kc_set(&c, OM_REDUCE_T_Y, k < 2 ? DT_UINT64 : DT_INT64, 1, yd);
    memcpy(c.data[OM_REDUCE_T_X], x, sizeof x);
    kc_run(&c);
    uint64_t got;
    memcpy(&got, c.data[OM_REDUCE_T_Y], 8);
    CHECK(got == want[k]);
    kc_free(&c);
  }
}

/* Reductions over an empty set (x [2,0,3], axis 1) give each op's identity
 * (om_format.h REDUCE); y still has 2x1x3 elements. */
static void test_empty(void) {
  int64_t xd[3] = {2, 0, 3}, yd[3] = {2, 1, 3};
  static const struct {
    int op, dt;
    double want;
  } cases[] = {
      {OM_REDUCE_SUM, DT_FLOAT32, 0},
      {OM_REDUCE_PROD, DT_FLOAT32, 1},
      {OM_REDUCE_MEAN, DT_FLOAT32, NAN},
      {OM_REDUCE_MAX, DT_FLOAT32, -INFINITY},
      {OM_REDUCE_MIN, DT_FLOAT16, INFINITY},
      {OM_REDUCE_L2, DT_FLOAT32, 0},
      {OM_REDUCE_LOGSUM, DT_DOUBLE, -INFINITY},
      {OM_REDUCE_LOGSUMEXP, DT_FLOAT32, -INFINITY},
      {OM_REDUCE_SUMSQUARE, DT_DOUBLE, 0},
      {OM_REDUCE_PROD, DT_INT64, 1},
      {OM_REDUCE_MAX, DT_INT16, INT16_MIN},
      {OM_REDUCE_MIN, DT_UINT16, UINT16_MAX},
      {OM_REDUCE_SUM, DT_UINT32, 0},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    kcase c;
    kc_init(&c, cases[k].op, 2u, 2);
    kc_set(&c, OM_REDUCE_T_X, cases[k].dt, 3, xd);
    kc_set(&c, OM_REDUCE_T_Y, cases[k].dt, 3, yd);
    kc_run(&c);
    int ok = 1;
    for (size_t o = 0; o < 6; o++) {
      double got = get(c.data[OM_REDUCE_T_Y], cases[k].dt, o), want = cases[k].want;
      ok &= isnan(want) ? isnan(got) : got == want;
    }
    char what[80];
    snprintf(what, sizeof what, "empty reduction op %d dtype %d", cases[k].op, cases[k].dt);
    test_check(ok, __FILE__, __LINE__, what);
    kc_free(&c);
  }
}

/* Sums over half a million f32 elements (GroupNorm's statistics over C x T,
 * conv_tasnet's 512 x 999) add up pairwise: SUM, MEAN and SUMSQUARE stay
 * within 1e-6 of the double sum, where summing in sequence errs by more
 * (checked on the same data, so the case keeps its teeth). */
static void test_long_sum(void) {
  enum { N = 1 << 19 };
  int64_t xd[2] = {2, N}, yd[2] = {2, 1};
  static const int ops[] = {OM_REDUCE_SUM, OM_REDUCE_MEAN, OM_REDUCE_SUMSQUARE};
  for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
    kcase c;
    kc_init(&c, ops[k], 2u, 2);
    kc_set(&c, OM_REDUCE_T_X, DT_FLOAT32, 2, xd);
    kc_set(&c, OM_REDUCE_T_Y, DT_FLOAT32, 2, yd);
    float *x = c.data[OM_REDUCE_T_X];
    for (size_t i = 0; i < 2 * (size_t)N; i++)
      x[i] = 1.0f + (float)irand(1 << 20) / (float)(1 << 20); /* ReLU-like: all positive, mean 1.5 */
    kc_run(&c);
    for (int r = 0; r < 2; r++) {
      double exact = 0;
      float seq = 0;
      for (size_t i = 0; i < N; i++) {
        double v = x[(size_t)r * N + i], t = ops[k] == OM_REDUCE_SUMSQUARE ? v * v : v;
        exact += t;
        seq += (float)t;
      }
      if (ops[k] == OM_REDUCE_MEAN) exact /= N, seq /= (float)N;
      double got = ((const float *)c.data[OM_REDUCE_T_Y])[r];
      CHECK(fabs(seq - exact) > 1e-6 * exact); /* the data defeats summing in sequence */
      CHECK(fabs(got - exact) <= 1e-6 * exact);
      if (fabs(got - exact) > 1e-6 * exact)
        test_note("  op %d row %d: got %.9g, exact %.9g, in sequence %.9g", ops[k], r, got, exact,
                  (double)seq);
    }
    kc_free(&c);
  }
}

/* A reduced run of stride 1 (reduce_run: blocks loaded as f32, one loop per
 * op) gives the same bits as the general odometer path on the same values
 * read with stride 2: every float op, f32 and f16, lengths around the
 * 64-element pair block and the 8 blocks summed side by side, and long
 * ones, each once with a NaN inside; for the extrema also with +0 and -0
 * among values of one sign (the lanes of run_extreme must give the first
 * zero's sign, as the scalar loop). */
static void test_contiguous_runs(void) {
  static const int ops[] = {OM_REDUCE_SUM,    OM_REDUCE_MEAN,     OM_REDUCE_MAX, OM_REDUCE_MIN,
                            OM_REDUCE_PROD,   OM_REDUCE_L1,       OM_REDUCE_L2,  OM_REDUCE_SUMSQUARE,
                            OM_REDUCE_LOGSUM, OM_REDUCE_LOGSUMEXP};
  static const int64_t lens[] = {1, 63, 64, 65, 512, 575, 1000, 100003};
  for (size_t o = 0; o < sizeof ops / sizeof *ops; o++)
    for (int dt = 0; dt < 2; dt++)
      for (size_t l = 0; l < sizeof lens / sizeof *lens; l++)
        for (int nan = 0; nan < 4; nan++) {
          if (nan >= 2 && ops[o] != OM_REDUCE_MAX && ops[o] != OM_REDUCE_MIN) continue;
          int xdt = dt ? DT_FLOAT16 : DT_FLOAT32;
          int64_t n = lens[l], d1[1] = {n}, d2[2] = {n, 2}, y1[1] = {1}, y2[2] = {1, 2};
          kcase a, b;
          kc_init(&a, ops[o], 1u, 1);
          kc_set(&a, OM_REDUCE_T_X, xdt, 1, d1);
          kc_set(&a, OM_REDUCE_T_Y, xdt, 1, y1);
          kc_init(&b, ops[o], 1u, 2);
          kc_set(&b, OM_REDUCE_T_X, xdt, 2, d2);
          kc_set(&b, OM_REDUCE_T_Y, xdt, 2, y2);
          for (int64_t i = 0; i < n; i++) {
            double v = 0.5 + irand(1 << 24) / 16777216.0; /* positive, near 1: PROD and LOGSUM stay finite */
            v = nan == 1 && i == n / 2 ? NAN : nan == 2 ? -v : v;
            if (nan >= 2 && i % 7 == 3) v = i % 2 ? -0.0 : 0.0; /* a zero extremum: the first zero's sign */
            put(a.data[OM_REDUCE_T_X], xdt, (size_t)i, v);
            put(b.data[OM_REDUCE_T_X], xdt, (size_t)(2 * i), v);
            put(b.data[OM_REDUCE_T_X], xdt, (size_t)(2 * i + 1), -v);
          }
          kc_run(&a);
          kc_run(&b);
          size_t es = dt ? 2 : 4;
          int same = memcmp(a.data[OM_REDUCE_T_Y], b.data[OM_REDUCE_T_Y], es) == 0;
          CHECK(same);
          if (!same)
            test_note("  op %d dtype %d n %lld nan %d: run %.9g, strided %.9g", ops[o], xdt, (long long)n,
                      nan, get(a.data[OM_REDUCE_T_Y], xdt, 0), get(b.data[OM_REDUCE_T_Y], xdt, 0));
          kc_free(&a);
          kc_free(&b);
        }
}

/* --- the load-time check */

/* A valid sum over axis 2 of [3,1,4,5] (keepdims) that `mutate` breaks. */
static void bad(int mutate, const char *what, const char *want) {
  kcase c;
  int64_t yd[RANK] = {3, 1, 1, 5}, yd2[3] = {3, 1, 5}, ybad[RANK] = {3, 1, 1, 4};
  kc_init(&c, OM_REDUCE_SUM, 4u, 2);
  kc_set(&c, OM_REDUCE_T_X, DT_FLOAT32, RANK, XD);
  kc_set(&c, OM_REDUCE_T_Y, DT_FLOAT32, RANK, yd);
  switch (mutate) {
  case 0: c.task.params[OM_REDUCE_P_OP] = OM_REDUCE_OP_COUNT; break;
  case 1: c.task.params[OM_REDUCE_P_AXES] = 16; break;
  case 2: c.task.params[OM_REDUCE_P_AXES] = -1; break;
  case 3: c.task.params[OM_REDUCE_P_SELECT_LAST_INDEX] = 1; break;
  case 4: c.task.params[OM_REDUCE_NPARAMS + 2] = 3; break;
  case 5: kc_set(&c, OM_REDUCE_T_Y, DT_FLOAT32, RANK, ybad); break;
  case 6: kc_set(&c, OM_REDUCE_T_Y, DT_FLOAT32, 2, yd2); break;
  case 7: kc_set(&c, OM_REDUCE_T_Y, DT_INT32, RANK, yd); break;
  case 8:
    c.task.params[OM_REDUCE_P_OP] = OM_REDUCE_ARGMAX, c.task.params[OM_REDUCE_P_AXES] = 5;
    kc_set(&c, OM_REDUCE_T_Y, DT_INT64, 2, yd2);
    break;
  case 9:
    c.task.params[OM_REDUCE_P_OP] = OM_REDUCE_MEAN;
    kc_set(&c, OM_REDUCE_T_X, DT_INT64, RANK, XD);
    kc_set(&c, OM_REDUCE_T_Y, DT_INT64, RANK, yd);
    break;
  case 10: c.task.params[OM_REDUCE_P_OP] = OM_REDUCE_ARGMIN; break; /* y must be i64 */
  case 11: c.task.block_dim = 16; break;
  case 12: c.t[OM_REDUCE_T_Y].bytes += 4; break;
  case 13: c.t[OM_REDUCE_T_X].layout = LAYOUT_NC1HWC0; break;
  case 14: c.task.ntensors = 3, c.task.tensors[OM_REDUCE_NTENSORS] = 1; break;
  case 15: c.task.tensors[OM_REDUCE_T_Y] = OM_NONE; break;
  case 16:
    c.task.params[OM_REDUCE_P_OP] = OM_REDUCE_ARGMAX, c.task.params[OM_REDUCE_P_AXES] = 2;
    c.t[OM_REDUCE_T_X].dims[1] = 0, c.t[OM_REDUCE_T_X].bytes = 0;
    kc_set(&c, OM_REDUCE_T_Y, DT_INT64, RANK, (const int64_t[]){3, 1, 4, 5});
    break;
  default: break;
  }
  if (mutate < 0)
    CHECK_EQ_INT(kc_check(&c), OMRT_OK);
  else
    expect_reject(&c, what, want);
  kc_free(&c);
}

static void test_check_rules(void) {
  bad(-1, "valid", "");
  bad(0, "unknown op", "op = 12");
  bad(1, "mask beyond the rank", "beyond x's rank");
  bad(2, "negative mask", test_param_ref(OM_REDUCE_P_AXES));
  bad(3, "select_last_index on a sum", "select_last_index");
  bad(4, "unused param set", test_param_ref(OM_REDUCE_NPARAMS + 2));
  bad(5, "wrong kept dim", "y dims[3]");
  bad(6, "wrong y rank", "y rank");
  bad(7, "float x, integer y", "y dtype");
  bad(8, "argmax over two axes", "one axis");
  bad(9, "mean of integers", "x dtype");
  bad(10, "argmin into f32", "y dtype");
  bad(11, "block_dim above y elements", "block_dim");
  bad(12, "bytes do not match", "bytes");
  bad(13, "NC1HWC0 x", "layout");
  bad(14, "three tensors", "ntensors");
  bad(15, "missing y", "OM_NONE");
  bad(16, "argmax over an empty axis", "empty axis");
}

/* --- the reference evaluator on Reduce graphs */

/* Runs the graph; a failure is noted unless `expect_fail`. */
static int eval_run(const char *text, const float *in, float *out, size_t n, int expect_fail) {
  diag d;
  diag_init(&d);
  ir_graph *g = NULL;
  if (ir_parse(text, "reduce", &g, &d) != ST_OK) {
    test_note("  parse: %s", d.msg);
    return -1;
  }
  arena a;
  arena_init(&a, 0);
  const void *ins[1] = {in};
  void *outs[1];
  int rc = ir_eval_graph(g, ins, outs, &a, &d) == ST_OK ? 0 : -1;
  if (rc && !expect_fail)
    test_note("  eval: %s", d.msg);
  else
    memcpy(out, outs[0], n * dtype_size(g->outputs[0]->dtype));
  arena_free(&a);
  ir_graph_free(g);
  return rc;
}

static int eval_f32(const char *text, const float *in, float *out, size_t n) {
  return eval_run(text, in, out, n, 0);
}

static void test_eval(void) {
  const float x[6] = {1, 5, 3, 5, 2, 0}; /* [2,3] */
  float y[6];
  CHECK(eval_f32("graph g opset 18\ninput %x : f32[2,3]\n%y : f32[2,1] = Reduce(%x) {axes=[-1], keepdims=1, "
                 "mode=\"sum\"}\noutput %y\n",
                 x, y, 2) == 0 &&
        y[0] == 9 && y[1] == 7);
  CHECK(eval_f32("graph g opset 18\ninput %x : f32[2,3]\n%y : f32[] = Reduce(%x) {keepdims=0, "
                 "mode=\"max\"}\noutput %y\n",
                 x, y, 1) == 0 &&
        y[0] == 5);
  CHECK(eval_f32("graph g opset 18\ninput %x : f32[2,3]\n%y : f32[2,3] = Reduce(%x) {keepdims=1, "
                 "mode=\"sumsquare\", noop=1}\noutput %y\n",
                 x, y, 6) == 0 &&
        y[1] == 25 && y[4] == 4);
  CHECK(eval_f32("graph g opset 18\ninput %x : f32[2,3]\n%y : f32[3] = Reduce(%x) {axes=[0], keepdims=0, "
                 "mode=\"logsumexp\"}\noutput %y\n",
                 x, y, 3) == 0 &&
        fabs(y[0] - log(exp(1.0) + exp(5.0))) < 1e-5);
  int64_t idx[2];
  CHECK(eval_f32("graph g opset 18\ninput %x : f32[2,3]\n%y : i64[2] = Reduce(%x) {axes=[1], keepdims=0, "
                 "mode=\"argmax\", select_last_index=0}\noutput %y\n",
                 x, (float *)idx, 2) == 0 &&
        idx[0] == 1 && idx[1] == 0);
  CHECK(eval_f32("graph g opset 18\ninput %x : f32[2,3]\n%y : i64[2] = Reduce(%x) {axes=[1], keepdims=0, "
                 "mode=\"argmax\", select_last_index=1}\noutput %y\n",
                 x, (float *)idx, 2) == 0 &&
        idx[0] == 1 && idx[1] == 0);
  const float x2[6] = {1, 5, 5, 0, 2, 0};
  CHECK(eval_f32("graph g opset 18\ninput %x : f32[2,3]\n%y : i64[2] = Reduce(%x) {axes=[1], keepdims=0, "
                 "mode=\"argmin\", select_last_index=1}\noutput %y\n",
                 x2, (float *)idx, 2) == 0 &&
        idx[0] == 0 && idx[1] == 2);
  /* an empty reduction gives the identity */
  CHECK(eval_f32("graph g opset 18\ninput %x : f32[2,0]\n%y : f32[2,1] = Reduce(%x) {axes=[1], keepdims=1, "
                 "mode=\"prod\"}\noutput %y\n",
                 x, y, 2) == 0 &&
        y[0] == 1 && y[1] == 1);
  CHECK(eval_run("graph g opset 18\ninput %x : f32[2,3]\n%y : f32[2,1] = Reduce(%x) {axes=[1, 1], "
                 "keepdims=1, mode=\"sum\"}\noutput %y\n",
                 x, y, 2, 1) != 0); /* repeated axis */
}

int main(void) {
  test_kernel();
  test_u64_order();
  test_empty();
  test_long_sum();
  test_contiguous_runs();
  test_check_rules();
  test_eval();
  return test_summary("reduce");
}
