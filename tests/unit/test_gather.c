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
 * (omrt_execute then fails). Then every check rule is broken once.
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
  diag d;
  diag_init(&d);
  ir_graph *g = NULL;
  CHECK(ir_parse(text, "gather", &g, &d) == ST_OK);
  if (!g) {
    test_note("  parse: %s", d.msg);
    kc_free(&c);
    return;
  }
  arena ar;
  arena_init(&ar, 0);
  const void *ins[2] = {c.data[OM_GATHER_T_X], c.data[OM_GATHER_T_INDICES]};
  void *outs[1];
  int ok = ir_eval_graph(g, ins, outs, &ar, &d) == ST_OK;
  if (!ok) test_note("  eval: %s", d.msg);
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
  ir_graph_free(g);
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
  default: break;
  }
  if (mutate < 0)
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
}

int main(void) {
  test_kernel();
  test_checks();
  return test_summary("gather");
}
