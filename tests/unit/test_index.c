/* test_index.c - the indexing task kinds (runtime/kernels_index.c: TOPK,
 * SCATTER, CUMSUM, ONEHOT and GATHER mode 2) against the reference
 * evaluator (ir/eval_index.c) on the same data, and their load-time checks.
 *
 * Each kernel case fills its inputs from a fixed generator with small
 * integers (so every sum and product is exact in f16, f32 and double and the
 * outputs must agree bit for bit), with ties (TopK), duplicate and negative
 * indices (Scatter, GatherND, OneHot) and NaN (TopK f32). Blocks run in
 * reverse order over block_dim 1..7, so a result that depended on the block
 * split or order would differ. TopK runs every k from 0 to the axis's
 * extent (its heap lives in the indices output, so every size is a case).
 * Out-of-range indices: SCATTER drops the update (checked as an "add 0" at
 * index 0 in the reference), GATHER mode 2 writes zeros, ONEHOT gives off.
 * Then every check rule of each kind is broken once.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/elem.h"
#include "common/fp16.h"
#include "ir/eval.h"
#include "ir/ir.h"
#include "kcase.h"
#include "omrt.h"
#include "runtime/kernels.h"
#include "support.h"

static uint32_t seed = 12345;
static int rnd(int n) { /* 0..n-1 */
  seed = seed * 1103515245u + 12345u;
  return (int)((seed >> 16) % (uint32_t)n);
}

static int64_t count_of(int rank, const int64_t *dims) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++)
    n *= dims[d];
  return n;
}

/* Element i of a tensor := v (small integers: exact in every dtype). */
static void put(void *p, int dt, int64_t i, double v) { elem_put(p, dt, i, v); }

/* "f32[3,4]" */
static const char *ty(char *buf, int dt, int rank, const int64_t *dims) {
  int at = snprintf(buf, 96, "%s[", dtype_name(dt));
  for (int d = 0; d < rank; d++)
    at += snprintf(buf + at, (size_t)(96 - at), "%s%lld", d ? "," : "", (long long)dims[d]);
  snprintf(buf + at, (size_t)(96 - at), "]");
  return buf;
}

/* Output slot s of the case equals want (bytes). */
static int same(kcase *c, int s, const void *want, const char *what) {
  int ok = !memcmp(c->data[s], want, (size_t)c->t[s].bytes);
  if (!ok) test_note("  %s: slot %d differs from the reference", what, s);
  return ok;
}

static int check_ok(kcase *c) {
  omrt_status st = kc_check(c);
  if (st != OMRT_OK) test_note("  check: %s", omrt_last_error());
  return st == OMRT_OK;
}

/* Checks and runs the case, then evaluates `text` on ins (outs point into
 * *ar, which the caller frees); 0 when a step fails. */
static int run_and_eval(kcase *c, const char *text, const void **ins, void **outs, arena *ar) {
  int ok = check_ok(c);
  rt_core core = {0};
  if (ok) kc_run_blocks(c, &core);
  return ok && kc_eval_text(text, "index", ins, outs, ar);
}

/* ---- TOPK ---- */

static void topk_case(int dt, int axis, int k, int largest, uint32_t bd) {
  int64_t xd[3] = {3, 6, 4}, yd[3] = {3, 6, 4};
  yd[axis] = k;
  kcase c;
  kc_setup(&c, OM_TASK_TOPK, bd, 3);
  c.task.params[OM_TOPK_P_AXIS] = axis, c.task.params[OM_TOPK_P_K] = k,
  c.task.params[OM_TOPK_P_LARGEST] = largest, c.task.params[OM_TOPK_P_SORTED] = 1;
  kc_set(&c, OM_TOPK_T_X, dt, 3, xd);
  kc_set(&c, OM_TOPK_T_VALUES, dt, 3, yd);
  kc_set(&c, OM_TOPK_T_INDICES, DT_INT64, 3, yd);
  for (int64_t i = 0; i < 72; i++) {
    put(c.data[OM_TOPK_T_X], dt, i, rnd(5) - (dt == DT_UINT8 ? 0 : 2)); /* ties */
    if (dt == DT_FLOAT32 && rnd(9) == 0) ((float *)c.data[OM_TOPK_T_X])[i] = NAN;
    if (dt == DT_DOUBLE && rnd(9) == 0) ((double *)c.data[OM_TOPK_T_X])[i] = NAN;
  }
  char text[512], t0[96], t1[96], t2[96];
  snprintf(text, sizeof text,
           "graph t opset 24\ninput %%x : %s\n%%v : %s, %%i : %s = TopK(%%x) {axis=%d, k=%d, largest=%d, "
           "sorted=1}\n"
           "output %%v, %%i\n",
           ty(t0, dt, 3, xd), ty(t1, dt, 3, yd), ty(t2, DT_INT64, 3, yd), axis, k, largest);
  arena ar;
  arena_init(&ar, 0);
  const void *ins[1] = {c.data[OM_TOPK_T_X]};
  void *outs[2];
  int ok = run_and_eval(&c, text, ins, outs, &ar) && same(&c, OM_TOPK_T_VALUES, outs[0], "values") &&
           same(&c, OM_TOPK_T_INDICES, outs[1], "indices");
  if (!ok) test_note("  TOPK dt %d axis %d k %d largest %d bd %u", dt, axis, k, largest, bd);
  CHECK(ok);
  arena_free(&ar);
  kc_free(&c);
}

static void test_topk(void) {
  static const int dts[5] = {DT_FLOAT32, DT_FLOAT16, DT_DOUBLE, DT_INT64, DT_UINT8};
  for (int t = 0; t < 5; t++)
    for (int axis = 0; axis < 3; axis++)
      for (int largest = 0; largest < 2; largest++)
        for (int k = 0; k <= (axis == 0 ? 3 : axis == 1 ? 6 : 4); k++)
          for (int rep = 0; rep < 2; rep++)
            topk_case(dts[t], axis, k, largest, 1 + (uint32_t)((k + rep) % 3));
}

/* ---- SCATTER ---- */

static const char *const reductions[5] = {"none", "add", "mul", "max", "min"};

/* mode 0: ScatterElements over `axis` with indices `idims`; mode 1:
 * ScatterND with indices `idims` (last = kd). oob: update 0's index is out
 * of range (the kernel drops it; the reference adds 0 at index 0). */
static void scatter_case(int mode, int dt, int axis, int irank, const int64_t *idims, int red, uint32_t bd,
                         int oob) {
  int64_t xd[3] = {4, 3, 5}, ud[MAX_RANK];
  int urank;
  if (mode == 0) {
    urank = irank;
    memcpy(ud, idims, sizeof(int64_t) * (size_t)irank);
  } else {
    int kd = (int)idims[irank - 1];
    urank = 0;
    for (int d = 0; d < irank - 1; d++)
      ud[urank++] = idims[d];
    for (int d = kd; d < 3; d++)
      ud[urank++] = xd[d];
  }
  int64_t ni = count_of(irank, idims), nu = count_of(urank, ud);
  kcase c;
  kc_setup(&c, OM_TASK_SCATTER, bd, 4);
  c.task.params[OM_SCATTER_P_MODE] = mode, c.task.params[OM_SCATTER_P_AXIS] = axis,
  c.task.params[OM_SCATTER_P_REDUCTION] = red;
  kc_set(&c, OM_SCATTER_T_DATA, dt, 3, xd);
  kc_set(&c, OM_SCATTER_T_INDICES, DT_INT64, irank, idims);
  kc_set(&c, OM_SCATTER_T_UPDATES, dt, urank, ud);
  kc_set(&c, OM_SCATTER_T_Y, dt, 3, xd);
  for (int64_t i = 0; i < 60; i++)
    put(c.data[OM_SCATTER_T_DATA], dt, i, rnd(4) + (dt == DT_UINT8 ? 0 : -1));
  for (int64_t i = 0; i < nu; i++)
    put(c.data[OM_SCATTER_T_UPDATES], dt, i, rnd(4) + (dt == DT_UINT8 ? 0 : -1));
  int64_t *ix = c.data[OM_SCATTER_T_INDICES];
  for (int64_t i = 0; i < ni; i++) {
    int64_t D = mode == 0 ? xd[axis] : xd[i % idims[irank - 1]];
    ix[i] = rnd((int)(2 * D)) - D; /* [-D, D), duplicates likely */
  }
  int64_t *ix_ref = malloc((size_t)ni * sizeof *ix_ref);
  void *u_ref = malloc((size_t)c.t[OM_SCATTER_T_UPDATES].bytes);
  memcpy(ix_ref, ix, (size_t)ni * sizeof *ix);
  memcpy(u_ref, c.data[OM_SCATTER_T_UPDATES], (size_t)c.t[OM_SCATTER_T_UPDATES].bytes);
  if (oob) { /* the kernel drops the update; the reference adds 0 at index 0 */
    ix[0] = mode == 0 ? xd[axis] : xd[0];
    ix_ref[0] = 0;
    int64_t slice = mode == 0 ? 1 : nu / count_of(irank - 1, idims);
    for (int64_t e = 0; e < slice; e++)
      put(u_ref, dt, e, 0);
    red = 1;
    c.task.params[OM_SCATTER_P_REDUCTION] = 1;
  }
  char text[512], t0[96], t1[96], t2[96];
  int at = snprintf(text, sizeof text, "graph s opset 18\ninput %%x : %s\ninput %%i : %s\ninput %%u : %s\n",
                    ty(t0, dt, 3, xd), ty(t1, DT_INT64, irank, idims), ty(t2, dt, urank, ud));
  if (mode == 0)
    snprintf(text + at, sizeof text - (size_t)at,
             "%%y : %s = ScatterElements(%%x, %%i, %%u) {axis=%d, reduction=\"%s\"}\n"
             "output %%y\n",
             t0, axis, reductions[red]);
  else
    snprintf(text + at, sizeof text - (size_t)at,
             "%%y : %s = ScatterND(%%x, %%i, %%u) {reduction=\"%s\"}\noutput %%y\n", t0, reductions[red]);
  arena ar;
  arena_init(&ar, 0);
  const void *ins[3] = {c.data[OM_SCATTER_T_DATA], ix_ref, u_ref};
  void *outs[1];
  int ok = run_and_eval(&c, text, ins, outs, &ar) && same(&c, OM_SCATTER_T_Y, outs[0], "y");
  if (!ok) test_note("  SCATTER mode %d dt %d axis %d red %d bd %u oob %d", mode, dt, axis, red, bd, oob);
  CHECK(ok);
  arena_free(&ar);
  free(ix_ref), free(u_ref);
  kc_free(&c);
}

static void test_scatter(void) {
  static const int dts[4] = {DT_FLOAT32, DT_DOUBLE, DT_INT64, DT_UINT8};
  int64_t e0[3] = {6, 3, 4}, e1[3] = {2, 7, 5}, e2[3] = {4, 2, 9};
  int64_t n1[2] = {5, 1}, n2[2] = {6, 2}, n3[3] = {2, 3, 3};
  for (int t = 0; t < 4; t++)
    for (int red = 0; red < 5; red++)
      for (uint32_t bd = 1; bd <= 7; bd += 3) {
        scatter_case(0, dts[t], 0, 3, e0, red, bd, 0);
        scatter_case(0, dts[t], 1, 3, e1, red, bd, 0);
        scatter_case(0, dts[t], 2, 3, e2, red, bd, 0);
        scatter_case(1, dts[t], 0, 2, n1, red, bd, 0);
        scatter_case(1, dts[t], 0, 2, n2, red, bd, 0);
        scatter_case(1, dts[t], 0, 3, n3, red, bd, 0);
      }
  for (uint32_t bd = 1; bd <= 4; bd += 3) {
    scatter_case(0, DT_FLOAT32, 1, 3, e1, 0, bd, 1);
    scatter_case(1, DT_INT64, 0, 2, n2, 0, bd, 1);
  }
}

/* SCATTER mode 2 (TensorScatter): cache [3,6,2] written along axis 1 with
 * updates of `len` positions at per-batch write indices (none: all 0). */
static void tensorscatter_case(int circular, int len, int with_w, uint32_t bd) {
  int64_t xd[3] = {3, 6, 2}, ud[3] = {3, len, 2}, wd[1] = {3};
  kcase c;
  kc_setup(&c, OM_TASK_SCATTER, bd, 4);
  c.task.params[OM_SCATTER_P_MODE] = 2, c.task.params[OM_SCATTER_P_AXIS] = 1,
  c.task.params[OM_SCATTER_P_CIRCULAR] = circular;
  kc_set(&c, OM_SCATTER_T_DATA, DT_FLOAT32, 3, xd);
  kc_set(&c, OM_SCATTER_T_INDICES, DT_INT64, 1, wd);
  kc_set(&c, OM_SCATTER_T_UPDATES, DT_FLOAT32, 3, ud);
  kc_set(&c, OM_SCATTER_T_Y, DT_FLOAT32, 3, xd);
  if (!with_w) c.task.tensors[OM_SCATTER_T_INDICES] = OM_NONE;
  for (int64_t i = 0; i < 36; i++)
    put(c.data[OM_SCATTER_T_DATA], DT_FLOAT32, i, (double)i);
  for (int64_t i = 0; i < 3 * len * 2; i++)
    put(c.data[OM_SCATTER_T_UPDATES], DT_FLOAT32, i, -1.0 - (double)i);
  int64_t *w = c.data[OM_SCATTER_T_INDICES];
  for (int b = 0; b < 3; b++)
    w[b] = circular ? 2 * b + 1 : b * (6 - len) / 2; /* circular wraps past 6 */
  char text[512], t0[96], t1[96];
  int at =
      snprintf(text, sizeof text, "graph ts opset 24\ninput %%x : %s\ninput %%u : %s\n%s",
               ty(t0, DT_FLOAT32, 3, xd), ty(t1, DT_FLOAT32, 3, ud), with_w ? "input %w : i64[3]\n" : "");
  snprintf(text + at, sizeof text - (size_t)at,
           "%%y : %s = TensorScatter(%%x, %%u%s) {axis=-2, mode=\"%s\"}\noutput %%y\n", t0,
           with_w ? ", %w" : "", circular ? "circular" : "linear");
  arena ar;
  arena_init(&ar, 0);
  const void *ins[3] = {c.data[OM_SCATTER_T_DATA], c.data[OM_SCATTER_T_UPDATES],
                        c.data[OM_SCATTER_T_INDICES]};
  void *outs[1];
  int ok = run_and_eval(&c, text, ins, outs, &ar) && same(&c, OM_SCATTER_T_Y, outs[0], "y");
  if (!ok) test_note("  TENSORSCATTER circular %d len %d w %d bd %u", circular, len, with_w, bd);
  CHECK(ok);
  arena_free(&ar);
  kc_free(&c);
}

static void test_tensorscatter(void) {
  for (uint32_t bd = 1; bd <= 7; bd += 3)
    for (int len = 1; len <= 6; len += 2) {
      tensorscatter_case(0, len, 1, bd);
      tensorscatter_case(1, len, 1, bd);
      tensorscatter_case(0, len, 0, bd);
    }
}

/* ---- CUMSUM ---- */

static void cumsum_case(int dt, int axis, int excl, int rev, int prod, uint32_t bd) {
  int64_t xd[3] = {3, 5, 4};
  kcase c;
  kc_setup(&c, OM_TASK_CUMSUM, bd, 2);
  int32_t *q = c.task.params;
  q[OM_CUMSUM_P_AXIS] = axis, q[OM_CUMSUM_P_EXCLUSIVE] = excl, q[OM_CUMSUM_P_REVERSE] = rev,
  q[OM_CUMSUM_P_OP] = prod;
  kc_set(&c, OM_CUMSUM_T_X, dt, 3, xd);
  kc_set(&c, OM_CUMSUM_T_Y, dt, 3, xd);
  for (int64_t i = 0; i < 60; i++)
    put(c.data[OM_CUMSUM_T_X], dt, i, prod ? rnd(3) - 1 + (rnd(2) ? 0 : 2 * rnd(2)) : rnd(7) - 3);
  char text[400], t0[96];
  snprintf(text, sizeof text,
           "graph c opset 26\ninput %%x : %s\n%%y : %s = %s(%%x) {axis=%d, exclusive=%d, reverse=%d}\noutput "
           "%%y\n",
           ty(t0, dt, 3, xd), t0, prod ? "CumProd" : "CumSum", axis - 3, excl, rev); /* a negative axis */
  arena ar;
  arena_init(&ar, 0);
  const void *ins[1] = {c.data[OM_CUMSUM_T_X]};
  void *outs[1];
  int ok = run_and_eval(&c, text, ins, outs, &ar) && same(&c, OM_CUMSUM_T_Y, outs[0], "y");
  if (!ok) test_note("  CUMSUM dt %d axis %d excl %d rev %d prod %d bd %u", dt, axis, excl, rev, prod, bd);
  CHECK(ok);
  arena_free(&ar);
  kc_free(&c);
}

static void test_cumsum(void) {
  static const int dts[5] = {DT_FLOAT32, DT_FLOAT16, DT_DOUBLE, DT_INT32, DT_INT64};
  for (int t = 0; t < 5; t++)
    for (int axis = 0; axis < 3; axis++)
      for (int f = 0; f < 8; f++)
        cumsum_case(dts[t], axis, f & 1, f >> 1 & 1, f >> 2, 1 + (uint32_t)(f % 3));
}

/* ---- ONEHOT ---- */

static void onehot_case(int idt, int ydt, int axis, uint32_t bd) {
  int64_t id[2] = {2, 5}, vd[1] = {2}, yd[3], depth = 4;
  for (int d = 0, k = 0; d < 3; d++)
    yd[d] = d == axis ? depth : id[k++];
  kcase c;
  kc_setup(&c, OM_TASK_ONEHOT, bd, 3);
  c.task.params[OM_ONEHOT_P_AXIS] = axis, c.task.params[OM_ONEHOT_P_DEPTH] = (int32_t)depth;
  kc_set(&c, OM_ONEHOT_T_INDICES, idt, 2, id);
  kc_set(&c, OM_ONEHOT_T_VALUES, ydt, 1, vd);
  kc_set(&c, OM_ONEHOT_T_Y, ydt, 3, yd);
  static const double idx[10] = {0, 3, -1, -4, 4, -5, 2, 1, 7, -2};
  for (int i = 0; i < 10; i++)
    put(c.data[OM_ONEHOT_T_INDICES], idt, i, idx[i]);
  if (idt == DT_FLOAT32 || idt == DT_DOUBLE)
    put(c.data[OM_ONEHOT_T_INDICES], idt, 7, 1.75),
        put(c.data[OM_ONEHOT_T_INDICES], idt, 9, -0.5); /* truncated: 1, 0 */
  put(c.data[OM_ONEHOT_T_VALUES], ydt, 0, -1), put(c.data[OM_ONEHOT_T_VALUES], ydt, 1, 3);
  char text[400], t0[96], t1[96], t2[96];
  snprintf(
      text, sizeof text,
      "graph o opset 11\ninput %%i : %s\ninput %%v : %s\n%%y : %s = OneHot(%%i, %%v) {axis=%d, depth=%lld}\n"
      "output %%y\n",
      ty(t0, idt, 2, id), ty(t1, ydt, 1, vd), ty(t2, ydt, 3, yd), axis, (long long)depth);
  arena ar;
  arena_init(&ar, 0);
  const void *ins[2] = {c.data[OM_ONEHOT_T_INDICES], c.data[OM_ONEHOT_T_VALUES]};
  void *outs[1];
  int ok = run_and_eval(&c, text, ins, outs, &ar) && same(&c, OM_ONEHOT_T_Y, outs[0], "y");
  if (!ok) test_note("  ONEHOT idt %d ydt %d axis %d bd %u", idt, ydt, axis, bd);
  CHECK(ok);
  arena_free(&ar);
  kc_free(&c);
}

static void test_onehot(void) {
  for (int axis = 0; axis < 3; axis++)
    for (uint32_t bd = 1; bd <= 5; bd += 2) {
      onehot_case(DT_INT64, DT_FLOAT32, axis, bd);
      onehot_case(DT_INT32, DT_INT64, axis, bd);
      onehot_case(DT_FLOAT32, DT_UINT8, axis, bd);
      onehot_case(DT_DOUBLE, DT_DOUBLE, axis, bd);
    }
}

/* ---- GATHER mode 2 (GatherND) ---- */

static void gathernd_case(int b, int irank, const int64_t *idims, int xdt, int ydt, uint32_t bd, int oob) {
  int64_t xd[3] = {2, 3, 4}, yd[MAX_RANK];
  int kd = (int)idims[irank - 1], yrank = 0;
  for (int d = 0; d < irank - 1; d++)
    yd[yrank++] = idims[d];
  for (int d = b + kd; d < 3; d++)
    yd[yrank++] = xd[d];
  if (bd > count_of(yrank, yd)) bd = (uint32_t)count_of(yrank, yd);
  kcase c;
  kc_setup(&c, OM_TASK_GATHER, bd, 3);
  c.task.params[OM_GATHER_P_MODE] = 2, c.task.params[OM_GATHER_P_AXIS] = b;
  kc_set(&c, OM_GATHER_T_X, xdt, 3, xd);
  kc_set(&c, OM_GATHER_T_INDICES, DT_INT32, irank, idims);
  kc_set(&c, OM_GATHER_T_Y, ydt, yrank, yd);
  for (int64_t i = 0; i < 24; i++)
    put(c.data[OM_GATHER_T_X], xdt, i, (double)i);
  int64_t ni = count_of(irank, idims);
  int32_t *ix = c.data[OM_GATHER_T_INDICES];
  for (int64_t i = 0; i < ni; i++) {
    int64_t D = xd[b + i % kd];
    ix[i] = (int32_t)(rnd((int)(2 * D)) - D);
  }
  int inner = (int)count_of(3 - b - kd, xd + b + kd);
  if (oob) ix[0] = (int32_t)xd[b]; /* row 0 reads nothing: zeros */
  char text[400], t0[96], t1[96], t2[96];
  snprintf(text, sizeof text,
           "graph n opset 13\ninput %%x : %s\ninput %%i : %s\n%%y : %s = GatherND(%%x, %%i) "
           "{batch_dims=%d}\noutput %%y\n",
           ty(t0, xdt, 3, xd), ty(t1, DT_INT32, irank, idims), ty(t2, xdt, yrank, yd), b);
  arena ar;
  arena_init(&ar, 0);
  int ok = check_ok(&c);
  rt_core core = {0};
  if (ok) kc_run_blocks(&c, &core);
  CHECK_EQ_INT(core.fault, ok && oob); /* recorded: omrt_execute fails */
  if (oob) ix[0] = 0;
  const void *ins[2] = {c.data[OM_GATHER_T_X], c.data[OM_GATHER_T_INDICES]};
  void *outs[1];
  ok = ok && kc_eval_text(text, "index", ins, outs, &ar);
  for (int64_t i = 0; ok && i < count_of(yrank, yd); i++) {
    double want = i < inner && oob ? 0.0 : elem_get(outs[0], xdt, i),
           got = elem_get(c.data[OM_GATHER_T_Y], ydt, i);
    ok = want == got;
    if (!ok) test_note("  y[%lld] = %g, want %g", (long long)i, got, want);
  }
  if (!ok) test_note("  GATHERND b %d kd %d xdt %d ydt %d bd %u oob %d", b, kd, xdt, ydt, bd, oob);
  CHECK(ok);
  arena_free(&ar);
  kc_free(&c);
}

static void test_gathernd(void) {
  int64_t a[3] = {2, 2, 2}, b1[3] = {2, 5, 1}, b2[3] = {2, 3, 1}, full[2] = {4, 3}, one[1] = {1};
  for (uint32_t bd = 1; bd <= 5; bd += 2) {
    gathernd_case(0, 3, a, DT_FLOAT32, DT_FLOAT32, bd, 0);
    gathernd_case(1, 3, b1, DT_INT64, DT_INT64, bd, 0);
    gathernd_case(2, 3, b2, DT_FLOAT32, DT_FLOAT16, bd, 0);
    gathernd_case(0, 2, full, DT_FLOAT32, DT_FLOAT32, bd, 0);
    gathernd_case(0, 1, one, DT_INT64, DT_INT64, bd, 0);
    gathernd_case(0, 3, a, DT_FLOAT32, DT_FLOAT32, bd, 1);
  }
}

/* ---- load-time checks: a valid task of each kind, then one rule broken ---- */

/* The unmutated case (mutate < 0) passes the load check, a mutated one is
 * rejected with a message naming want; frees c. */
static void expect_verdict(kcase *c, int mutate, const char *want) {
  if (mutate < 0)
    CHECK_EQ_INT(kc_check(c), OMRT_OK);
  else
    expect_reject(c, want, want);
  kc_free(c);
}

static void bad_topk(int mutate, const char *want) {
  int64_t xd[2] = {3, 5}, yd[2] = {3, 2};
  kcase c;
  kc_setup(&c, OM_TASK_TOPK, 3, 3);
  c.task.params[OM_TOPK_P_AXIS] = 1, c.task.params[OM_TOPK_P_K] = 2, c.task.params[OM_TOPK_P_LARGEST] = 1;
  kc_set(&c, OM_TOPK_T_X, DT_FLOAT32, 2, xd);
  kc_set(&c, OM_TOPK_T_VALUES, DT_FLOAT32, 2, yd);
  kc_set(&c, OM_TOPK_T_INDICES, DT_INT64, 2, yd);
  switch (mutate) {
  case 0: c.task.params[OM_TOPK_P_K] = 6; break;
  case 1: c.task.params[OM_TOPK_P_AXIS] = 2; break;
  case 2: kc_set(&c, OM_TOPK_T_INDICES, DT_INT32, 2, yd); break;
  case 3: c.task.params[OM_TOPK_P_LARGEST] = 2; break;
  case 4: c.task.params[OM_TOPK_NPARAMS + 1] = 1; break;
  case 5: c.task.block_dim = 4; break;
  case 6: kc_set(&c, OM_TOPK_T_VALUES, DT_FLOAT32, 2, xd); break;
  case 7: kc_set(&c, OM_TOPK_T_X, DT_BOOL, 2, xd); break;
  case 8: kc_set(&c, OM_TOPK_T_VALUES, DT_INT32, 2, yd); break;
  default: break;
  }
  expect_verdict(&c, mutate, want);
}

static void bad_scatter(int mutate, const char *want) {
  int64_t xd[2] = {4, 3}, id[2] = {2, 3}, nd[2] = {2, 1}, ud[2] = {2, 3};
  kcase c;
  kc_setup(&c, OM_TASK_SCATTER, 12, 4);
  c.task.params[OM_SCATTER_P_AXIS] = 1;
  kc_set(&c, OM_SCATTER_T_DATA, DT_FLOAT32, 2, xd);
  kc_set(&c, OM_SCATTER_T_INDICES, DT_INT64, 2, id);
  kc_set(&c, OM_SCATTER_T_UPDATES, DT_FLOAT32, 2, ud);
  kc_set(&c, OM_SCATTER_T_Y, DT_FLOAT32, 2, xd);
  switch (mutate) {
  case 0: c.task.params[OM_SCATTER_P_MODE] = 3; break;
  case 1: c.task.params[OM_SCATTER_P_REDUCTION] = 5; break;
  case 2: kc_set(&c, OM_SCATTER_T_UPDATES, DT_INT32, 2, ud); break;
  case 3: c.task.params[OM_SCATTER_P_AXIS] = 2; break;
  case 4: kc_set(&c, OM_SCATTER_T_UPDATES, DT_FLOAT32, 1, ud); break;
  case 5: /* only the axis may exceed data's dims */
    c.task.params[OM_SCATTER_P_AXIS] = 0, id[1] = 4, ud[1] = 4,
    kc_set(&c, OM_SCATTER_T_INDICES, DT_INT64, 2, id), kc_set(&c, OM_SCATTER_T_UPDATES, DT_FLOAT32, 2, ud);
    break;
  case 6:
    c.task.params[OM_SCATTER_P_MODE] = 1, kc_set(&c, OM_SCATTER_T_INDICES, DT_INT64, 2, nd);
    break; /* ND: axis must be 0 */
  case 7:
    c.task.params[OM_SCATTER_P_MODE] = 1, c.task.params[OM_SCATTER_P_AXIS] = 0, nd[1] = 3,
    kc_set(&c, OM_SCATTER_T_INDICES, DT_INT64, 2, nd);
    break;
  case 8: c.task.block_dim = 13; break;
  case 9: kc_set(&c, OM_SCATTER_T_Y, DT_FLOAT32, 2, ud); break;
  case 10: kc_set(&c, OM_SCATTER_T_INDICES, DT_FLOAT32, 2, id); break;
  case 11:
    c.task.params[OM_SCATTER_P_MODE] = 1, c.task.params[OM_SCATTER_P_AXIS] = 0,
    kc_set(&c, OM_SCATTER_T_INDICES, DT_INT64, 2, nd);
    break; /* updates [2,3] ok */
  case 12:
    c.task.params[OM_SCATTER_P_MODE] = 2, c.task.params[OM_SCATTER_P_AXIS] = 0;
    break; /* TensorScatter: dim 0 is the batch */
  case 13: c.task.params[OM_SCATTER_P_MODE] = 2, c.task.params[OM_SCATTER_P_REDUCTION] = 1; break;
  case 14:
    c.task.params[OM_SCATTER_P_MODE] = 2, kc_set(&c, OM_SCATTER_T_UPDATES, DT_FLOAT32, 2, xd);
    break; /* write indices [2,3], not [4] */
  case 15:
    c.task.params[OM_SCATTER_P_MODE] = 2, ud[1] = 4, kc_set(&c, OM_SCATTER_T_UPDATES, DT_FLOAT32, 2, ud);
    break;
  case 16: c.task.params[OM_SCATTER_P_MODE] = 2, c.task.params[OM_SCATTER_P_CIRCULAR] = 2; break;
  default: break;
  }
  if (mutate < 0 || mutate == 11)
    CHECK_EQ_INT(kc_check(&c), OMRT_OK);
  else
    expect_reject(&c, want, want);
  kc_free(&c);
}

static void bad_cumsum(int mutate, const char *want) {
  int64_t xd[2] = {3, 5}, yd[2] = {3, 4};
  kcase c;
  kc_setup(&c, OM_TASK_CUMSUM, 3, 2);
  c.task.params[OM_CUMSUM_P_AXIS] = 1;
  kc_set(&c, OM_CUMSUM_T_X, DT_INT32, 2, xd);
  kc_set(&c, OM_CUMSUM_T_Y, DT_INT32, 2, xd);
  switch (mutate) {
  case 0: c.task.params[OM_CUMSUM_P_OP] = 2; break;
  case 1: kc_set(&c, OM_CUMSUM_T_X, DT_INT8, 2, xd), kc_set(&c, OM_CUMSUM_T_Y, DT_INT8, 2, xd); break;
  case 2: kc_set(&c, OM_CUMSUM_T_Y, DT_INT32, 2, yd); break;
  case 3: c.task.params[OM_CUMSUM_P_AXIS] = 2; break;
  case 4: c.task.block_dim = 4; break;
  case 5: kc_set(&c, OM_CUMSUM_T_Y, DT_INT64, 2, xd); break;
  case 6: c.task.params[OM_CUMSUM_P_EXCLUSIVE] = -1; break;
  default: break;
  }
  expect_verdict(&c, mutate, want);
}

static void bad_onehot(int mutate, const char *want) {
  int64_t id[1] = {3}, vd[1] = {2}, v3[1] = {3}, yd[2] = {3, 5}, ybad[2] = {5, 3};
  kcase c;
  kc_setup(&c, OM_TASK_ONEHOT, 15, 3);
  c.task.params[OM_ONEHOT_P_AXIS] = 1, c.task.params[OM_ONEHOT_P_DEPTH] = 5;
  kc_set(&c, OM_ONEHOT_T_INDICES, DT_INT64, 1, id);
  kc_set(&c, OM_ONEHOT_T_VALUES, DT_FLOAT32, 1, vd);
  kc_set(&c, OM_ONEHOT_T_Y, DT_FLOAT32, 2, yd);
  switch (mutate) {
  case 0: kc_set(&c, OM_ONEHOT_T_VALUES, DT_FLOAT32, 1, v3); break;
  case 1: kc_set(&c, OM_ONEHOT_T_Y, DT_FLOAT32, 2, ybad); break;
  case 2: c.task.params[OM_ONEHOT_P_DEPTH] = -5; break;
  case 3: c.task.params[OM_ONEHOT_P_AXIS] = 2; break;
  case 4: kc_set(&c, OM_ONEHOT_T_VALUES, DT_INT64, 1, vd); break;
  case 5: c.task.block_dim = 16; break;
  case 6: kc_set(&c, OM_ONEHOT_T_INDICES, DT_BOOL, 1, id); break;
  default: break;
  }
  expect_verdict(&c, mutate, want);
}

static void bad_gathernd(int mutate, const char *want) {
  int64_t xd[3] = {2, 3, 4}, id[3] = {2, 5, 1}, yd[3] = {2, 5, 4}, ibad[3] = {3, 5, 1}, ikd[3] = {2, 5, 3};
  kcase c;
  kc_setup(&c, OM_TASK_GATHER, 40, 3);
  c.task.params[OM_GATHER_P_MODE] = 2, c.task.params[OM_GATHER_P_AXIS] = 1;
  kc_set(&c, OM_GATHER_T_X, DT_FLOAT32, 3, xd);
  kc_set(&c, OM_GATHER_T_INDICES, DT_INT64, 3, id);
  kc_set(&c, OM_GATHER_T_Y, DT_FLOAT32, 3, yd);
  switch (mutate) {
  case 0: kc_set(&c, OM_GATHER_T_INDICES, DT_INT64, 3, ibad); break;
  case 1: kc_set(&c, OM_GATHER_T_INDICES, DT_INT64, 3, ikd); break;
  case 2: c.task.params[OM_GATHER_P_AXIS] = 3; break;
  case 3: kc_set(&c, OM_GATHER_T_Y, DT_FLOAT32, 3, xd); break;
  case 4: c.task.block_dim = 41; break;
  case 5: c.task.params[OM_GATHER_P_MODE] = 3; break;
  default: break;
  }
  expect_verdict(&c, mutate, want);
}

static void test_checks(void) {
  bad_topk(-1, "");
  bad_topk(0, "k = 6");
  bad_topk(1, "axis");
  bad_topk(2, "indices dtype");
  bad_topk(3, "largest");
  bad_topk(4, test_param_ref(OM_TOPK_NPARAMS + 1));
  bad_topk(5, "block_dim");
  bad_topk(6, "values dims[1]");
  bad_topk(7, "x dtype");
  bad_topk(8, "values dtype");
  bad_scatter(-1, "");
  bad_scatter(0, "mode");
  bad_scatter(1, "reduction");
  bad_scatter(2, "dtypes");
  bad_scatter(3, "axis");
  bad_scatter(4, "rank");
  bad_scatter(5, "indices dims[1]");
  bad_scatter(6, "expected 0 for ScatterND");
  bad_scatter(7, "indices dims[1] = 3");
  bad_scatter(8, "block_dim");
  bad_scatter(9, "y dims[0]");
  bad_scatter(10, "indices dtype");
  bad_scatter(11, "");
  bad_scatter(12, "axis = 0, expected 1..1");
  bad_scatter(13, "reduction = 1");
  bad_scatter(14, "write indices");
  bad_scatter(15, "updates dims[0] = 2, expected 4");
  bad_scatter(16, "circular = 2");
  bad_cumsum(-1, "");
  bad_cumsum(0, "op");
  bad_cumsum(1, "x dtype");
  bad_cumsum(2, "y dims[1]");
  bad_cumsum(3, "axis");
  bad_cumsum(4, "block_dim");
  bad_cumsum(5, "y dtype");
  bad_cumsum(6, "exclusive");
  bad_onehot(-1, "");
  bad_onehot(0, "values");
  bad_onehot(1, "y dims[0]");
  bad_onehot(2, "depth");
  bad_onehot(3, "axis");
  bad_onehot(4, "values");
  bad_onehot(5, "block_dim");
  bad_onehot(6, "indices dtype");
  bad_gathernd(-1, "");
  bad_gathernd(0, "batch");
  bad_gathernd(1, "indices dims[2]");
  bad_gathernd(2, "batch_dims");
  bad_gathernd(3, "y dims[1]");
  bad_gathernd(4, "block_dim");
  bad_gathernd(5, "mode");
}

int main(void) {
  test_topk();
  test_scatter();
  test_tensorscatter();
  test_cumsum();
  test_onehot();
  test_gathernd();
  test_checks();
  return test_summary("index");
}
