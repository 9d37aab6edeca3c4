/* test_gather.c - the GATHER task kind (runtime/kernels_gather.c) against
 * the reference evaluator's Gather and GatherElements (ir/eval.c), and its
 * load-time check.
 *
 * Kernel cases: x = [3,4,5] f32 (values 0..59, exact in f16 too), every
 * axis, i64 and i32 indices with negative entries, Gather with 2-D indices
 * and GatherElements with indices smaller than x outside the axis, f32 ->
 * f32, f32 -> f16 and i64 data, 1 to 3 blocks. The same case runs through
 * ir_eval_node on an IR node built from text, and the outputs must agree
 * exactly. Out-of-range indices write zeros and are recorded in the core
 * (omrt_execute then fails). With an extent (indices counted along axis
 * 0, their padding out of range): Gather, GatherElements and GatherND
 * read only the first n index rows (no fault), gather them, and write
 * zeros for the rest, for counts 0, some, all and beyond the bound. Then
 * every check rule is broken once.
 */
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

static void kc_init(kcase *c, int mode, int axis, uint32_t bd) {
  kc_setup(c, OM_TASK_GATHER, bd, 3);
  c->task.params[OM_GATHER_P_MODE] = mode, c->task.params[OM_GATHER_P_AXIS] = axis;
}

static double get(const void *p, int dt, size_t i) {
  switch (dt) {
  case DT_FLOAT32: return ((const float *)p)[i];
  case DT_FLOAT16: return half_to_float(((const uint16_t *)p)[i]);
  default: return (double)((const int64_t *)p)[i];
  }
}

static const int64_t XD[3] = {3, 4, 5};

/* One case; idx values are wrapped into [-D, D) unless `oob` (then index 0
 * is D: out of range, expecting zero). */
static void one_case(int mode, int axis, int idt, int xdt, int ydt, uint32_t bd, int oob) {
  int64_t D = XD[axis], idims[3], ydims[MAX_RANK];
  int irank, yrank = 0;
  if (mode == 0) {
    irank = 2, idims[0] = 2, idims[1] = 3;
    for (int d = 0; d < axis; d++)
      ydims[yrank++] = XD[d];
    for (int d = 0; d < irank; d++)
      ydims[yrank++] = idims[d];
    for (int d = axis + 1; d < 3; d++)
      ydims[yrank++] = XD[d];
  } else {
    irank = 3;
    for (int d = 0; d < 3; d++)
      idims[d] = d == axis ? 6 : XD[d] - (d == 2 ? 1 : 0);
    memcpy(ydims, idims, sizeof idims);
    yrank = 3;
  }
  int64_t ni = 1, ny = 1;
  for (int d = 0; d < irank; d++)
    ni *= idims[d];
  for (int d = 0; d < yrank; d++)
    ny *= ydims[d];
  kcase c;
  kc_init(&c, mode, axis, bd);
  kc_set(&c, OM_GATHER_T_X, xdt, 3, XD);
  kc_set(&c, OM_GATHER_T_INDICES, idt, irank, idims);
  kc_set(&c, OM_GATHER_T_Y, ydt, yrank, ydims);
  for (size_t i = 0; i < 60; i++) {
    if (xdt == DT_FLOAT32)
      ((float *)c.data[OM_GATHER_T_X])[i] = (float)i;
    else
      ((int64_t *)c.data[OM_GATHER_T_X])[i] = (int64_t)i * 1000003;
  }
  for (int64_t i = 0; i < ni; i++) {
    int64_t k = (i * 7 + 3) % (2 * D) - D; /* in [-D, D) */
    if (oob && i == 0) k = D;
    if (idt == DT_INT64)
      ((int64_t *)c.data[OM_GATHER_T_INDICES])[i] = k;
    else
      ((int32_t *)c.data[OM_GATHER_T_INDICES])[i] = (int32_t)k;
  }
  omrt_status st = kc_check(&c);
  CHECK_EQ_INT(st, OMRT_OK);
  if (st != OMRT_OK) {
    test_note("  %s", omrt_last_error());
    kc_free(&c);
    return;
  }
  rt_args a;
  memset(&a, 0, sizeof a);
  for (int i = 0; i < 3; i++)
    a.data[i] = c.data[i], a.desc[i] = &c.t[i];
  rt_core core = {0};
  for (uint32_t b = c.task.block_dim; b-- > 0;)
    rt_kernels[OM_TASK_GATHER].run(&c.task, &a, b, &core);
  CHECK_EQ_INT(core.fault, oob); /* an index outside the axis is recorded (omrt_execute fails) */

  /* the reference: the evaluator on the same node, with the out-of-range
   * index (if any) replaced by 0 and that element compared with zero */
  if (oob) {
    if (idt == DT_INT64)
      ((int64_t *)c.data[OM_GATHER_T_INDICES])[0] = 0;
    else
      ((int32_t *)c.data[OM_GATHER_T_INDICES])[0] = 0;
  }
  char text[512];
  const char *xn = xdt == DT_FLOAT32 ? "f32" : "i64", *in = idt == DT_INT64 ? "i64" : "i32";
  int at = snprintf(text, sizeof text, "graph g opset 13\ninput %%x : %s[3,4,5]\ninput %%i : %s[", xn, in);
  for (int d = 0; d < irank; d++)
    at += snprintf(text + at, sizeof text - (size_t)at, "%s%lld", d ? "," : "", (long long)idims[d]);
  at += snprintf(text + at, sizeof text - (size_t)at, "]\n%%y : %s[", xn);
  for (int d = 0; d < yrank; d++)
    at += snprintf(text + at, sizeof text - (size_t)at, "%s%lld", d ? "," : "", (long long)ydims[d]);
  snprintf(text + at, sizeof text - (size_t)at, "] = %s(%%x, %%i) {axis=%d}\noutput %%y\n",
           mode ? "GatherElements" : "Gather", axis);
  arena ar;
  arena_init(&ar, 0);
  const void *ins[2] = {c.data[OM_GATHER_T_X], c.data[OM_GATHER_T_INDICES]};
  void *outs[1];
  int ok = kc_eval_text(text, "gather", ins, outs, &ar);
  for (int64_t i = 0; ok && i < ny; i++) {
    double want = get(outs[0], xdt, (size_t)i), got = get(c.data[OM_GATHER_T_Y], ydt, (size_t)i);
    int zero = 0;
    if (oob) { /* the elements that came from index 0 */
      int64_t inner = 1;
      for (int dd = axis + 1; dd < 3; dd++)
        inner *= XD[dd];
      zero = mode == 0 ? i / inner % ni == 0 : i == 0;
    }
    ok = got == (zero ? 0.0 : want);
    if (!ok)
      test_note("  mode %d axis %d idt %d xdt %d ydt %d bd %u oob %d: y[%lld] = %g, want %g", mode, axis, idt,
                xdt, ydt, bd, oob, (long long)i, got, zero ? 0.0 : want);
  }
  CHECK(ok);
  arena_free(&ar);
  kc_free(&c);
}

static void test_kernel(void) {
  for (int mode = 0; mode < 2; mode++)
    for (int axis = 0; axis < 3; axis++)
      for (uint32_t bd = 1; bd <= 3; bd++) {
        one_case(mode, axis, DT_INT64, DT_FLOAT32, DT_FLOAT32, bd, 0);
        one_case(mode, axis, DT_INT32, DT_FLOAT32, DT_FLOAT16, bd, 0);
        one_case(mode, axis, DT_INT32, DT_INT64, DT_INT64, bd, 0);
        one_case(mode, axis, DT_INT64, DT_FLOAT32, DT_FLOAT32, bd, 1);
      }
}

/* Mode 0 (x [3,4,5] axis 1, indices [6] -> y [3,6,5]), 1 (axis 0,
 * indices [6,4,5]) or 2 (GatherND, indices [6,1] -> y [6,4,5]) with the
 * indices counted along axis 0 by n: rows past n hold index 1000, which
 * would fault if read. */
static void extent_case(int mode, int64_t n, uint32_t bd) {
  int64_t idims[3] = {6, mode == 2 ? 1 : 4, 5}, ydims[3] = {mode == 0 ? 3 : 6, mode == 0 ? 6 : 4, 5}, one = 1;
  int irank = mode == 0 ? 1 : mode == 2 ? 2 : 3, axis = mode == 0;
  kcase c;
  kc_init(&c, mode, mode == 2 ? 0 : axis, bd);
  c.task.ntensors = OM_GATHER_NTENSORS_EXTENT;
  kc_set(&c, OM_GATHER_T_X, DT_FLOAT32, 3, XD);
  kc_set(&c, OM_GATHER_T_INDICES, DT_INT64, irank, idims);
  kc_set(&c, OM_GATHER_T_Y, DT_FLOAT32, 3, ydims);
  kc_set(&c, OM_GATHER_T_EXTENT, DT_INT64, 1, &one);
  *(int64_t *)c.data[OM_GATHER_T_EXTENT] = n;
  float *x = c.data[OM_GATHER_T_X], *y = c.data[OM_GATHER_T_Y];
  int64_t *ix = c.data[OM_GATHER_T_INDICES], per = mode == 0 ? 1 : mode == 2 ? 1 : 20, valid = n < 6 ? n : 6;
  for (int i = 0; i < 60; i++)
    x[i] = (float)i;
  for (int64_t r = 0; r < 6; r++)
    for (int64_t e = 0; e < per; e++)
      ix[r * per + e] = r < valid ? (r * 5 + e) % 3 : 1000; /* in range for every axis */
  CHECK_EQ_INT(kc_check(&c), OMRT_OK);
  rt_core core = {0};
  kc_run_blocks(&c, &core);
  CHECK_EQ_INT(core.fault, 0); /* no index past the count was read */
  int bad = 0;
  for (int64_t i = 0; i < (mode == 0 ? 90 : 120); i++) {
    int64_t b = i / 5 % 6, want; /* mode 0: y[i / 30, b, i % 5] = x[i / 30, ix[b], i % 5] */
    if (mode == 0)
      want = b < valid ? i / 30 * 20 + ix[b] * 5 + i % 5 : -1;
    else /* y[r, j, k] = x[ix[r, j, k], j, k]; GatherND: y[r, :, :] = x[ix[r], :, :] */
      want = i / 20 < valid ? ix[mode == 1 ? i : i / 20] * 20 + i % 20 : -1;
    bad += want < 0 ? y[i] != 0.0f : y[i] != x[want];
  }
  CHECKF(bad == 0, "  mode %d, count %lld, %u blocks: %d elements wrong", mode, (long long)n, bd, bad);
  kc_free(&c);
}

static void test_extent(void) {
  static const int64_t counts[] = {0, 2, 6, 9, -1};
  for (int mode = 0; mode < 3; mode++)
    for (int i = 0; i < 5; i++)
      for (uint32_t bd = 1; bd <= 3; bd++)
        extent_case(mode, counts[i], bd);
}

/* A valid Gather over axis 1 with [2] indices that `mutate` breaks. */
static void bad(int mutate, const char *what, const char *want) {
  int64_t id[1] = {2}, yd[3] = {3, 2, 5}, ybad[3] = {3, 2, 4};
  kcase c;
  kc_init(&c, 0, 1, 2);
  kc_set(&c, OM_GATHER_T_X, DT_FLOAT32, 3, XD);
  kc_set(&c, OM_GATHER_T_INDICES, DT_INT64, 1, id);
  kc_set(&c, OM_GATHER_T_Y, DT_FLOAT32, 3, yd);
  switch (mutate) {
  case 0: c.task.params[OM_GATHER_P_MODE] = 3; break; /* 2 is GatherND (test_index.c) */
  case 1: c.task.params[OM_GATHER_P_AXIS] = 3; break;
  case 2: c.task.params[OM_GATHER_NPARAMS + 2] = 1; break;
  case 3: kc_set(&c, OM_GATHER_T_INDICES, DT_FLOAT32, 1, id); break;
  case 4: kc_set(&c, OM_GATHER_T_Y, DT_INT16, 3, yd); break;
  case 5: kc_set(&c, OM_GATHER_T_Y, DT_FLOAT32, 3, ybad); break;
  case 6: c.task.params[OM_GATHER_P_MODE] = 1; break; /* GatherElements needs indices of x's rank */
  case 7: c.task.block_dim = 31; break;
  case 8: c.t[OM_GATHER_T_INDICES].layout = LAYOUT_NC1HWC0; break;
  case 9: c.task.ntensors = 2; break;
  case 10: c.t[OM_GATHER_T_Y].bytes = 4; break;
  case 11: /* an extent along axis 1 of [1, 2] indices: fine; of [2, 1] ones: not a prefix */
  case 12:
  case 13: {
    int64_t one = 1, i2[2] = {mutate == 12 ? 2 : 1, mutate == 12 ? 1 : 2}, y4[4] = {3, i2[0], i2[1], 5};
    kc_set(&c, OM_GATHER_T_INDICES, DT_INT64, 2, i2);
    kc_set(&c, OM_GATHER_T_Y, DT_FLOAT32, 4, y4);
    c.task.ntensors = OM_GATHER_NTENSORS_EXTENT;
    kc_set(&c, OM_GATHER_T_EXTENT, mutate == 13 ? DT_INT32 : DT_INT64, 1, &one);
    c.task.params[OM_GATHER_P_EXTENT_AXIS] = 1;
    break;
  }
  case 14: c.task.params[OM_GATHER_P_EXTENT_AXIS] = 1; break; /* without an extent */
  default: break;
  }
  if (mutate < 0 || mutate == 11)
    CHECK_EQ_INT(kc_check(&c), OMRT_OK);
  else
    expect_reject(&c, what, want);
  kc_free(&c);
}

static void test_checks(void) {
  bad(-1, "valid", "");
  bad(0, "mode", "mode");
  bad(1, "axis", "axis");
  bad(2, "unused param", test_param_ref(OM_GATHER_NPARAMS + 2));
  bad(3, "float indices", "indices dtype");
  bad(4, "f32 to i16", "dtype");
  bad(5, "y dims", "y dims[2]");
  bad(6, "elements rank", "indices rank");
  bad(7, "block_dim", "block_dim");
  bad(8, "NC1HWC0 indices", "layout");
  bad(9, "two tensors", "ntensors");
  bad(10, "bytes", "bytes");
  bad(11, "extent", "");
  bad(12, "extent not a prefix", "before extent_axis");
  bad(13, "i32 extent", "extent must be i64");
  bad(14, "extent_axis without an extent", test_param_ref(OM_GATHER_P_EXTENT_AXIS));
}

int main(void) {
  test_kernel();
  test_extent();
  test_checks();
  return test_summary("gather");
}
