/* test_pad.c - the PAD task kind (runtime/kernels_pad.c) against the
 * reference evaluator's Pad (ir/eval.c), and its load-time check.
 *
 * Kernel cases: x = [3,4] (values 1..12), every mode, pads that grow, crop
 * (negative) and reach beyond one period (reflect and wrap repeat), f32 ->
 * f32, f32 -> f16 and i64 (constant 7), 1 to 3 blocks. The reference is
 * ir_eval_graph on the same Pad written in the IR text form; results must
 * agree exactly. Then ranks 1 to 5 with random extents (1s among them),
 * pads from -2 to 3 per side on random dims, every mode, f32 -> f32 and
 * f32 -> f16, 1 to 5 blocks: the row-at-a-time kernel merges unpadded dims
 * into their outer neighbour (every dim in constant mode), and a block may
 * start and end inside a row; plus the zero-insertion of ConvTranspose's
 * lowering, [2,3,1,5,1] -> [2,3,1,5,4]. Then every check rule is broken
 * once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/elem.h"
#include "common/fp16.h"
#include "ir/eval.h"
#include "ir/ir.h"
#include "omrt.h"
#include "runtime/kernels.h"
#include "kcase.h"
#include "support.h"

static void kc_init(kcase *c, int mode, uint32_t bd) {
  kc_setup(c, OM_TASK_PAD, bd, 2);
  c->task.params[OM_PAD_P_MODE] = mode;
}

static double get(const void *p, int dt, size_t i) {
  switch (dt) {
  case DT_FLOAT32: return ((const float *)p)[i];
  case DT_FLOAT16: return half_to_float(((const uint16_t *)p)[i]);
  default: return (double)((const int64_t *)p)[i];
  }
}

static const char *const MODES[] = {"constant", "reflect", "edge", "wrap"};
static const int64_t XD[2] = {3, 4};

static void one_case(int mode, const int64_t *pads, int xdt, int ydt, uint32_t bd) {
  int64_t yd[2] = {XD[0] + pads[0] + pads[2], XD[1] + pads[1] + pads[3]};
  kcase c;
  kc_init(&c, mode, bd);
  kc_set(&c, OM_PAD_T_X, xdt, 2, XD);
  kc_set(&c, OM_PAD_T_Y, ydt, 2, yd);
  c.task.params[OM_PAD_P_BEGIN] = (int32_t)pads[0], c.task.params[OM_PAD_P_BEGIN + 1] = (int32_t)pads[1];
  double value = 7;
  if (mode == 0) { /* the constant as bytes of y's dtype */
    uint8_t b[8] = {0};
    elem_put(b, ydt, 0, value);
    uint64_t bits = 0;
    for (int k = 0; k < 8; k++)
      bits |= (uint64_t)b[k] << (8 * k);
    c.task.params[OM_PAD_P_VALUE_LO] = (int32_t)(uint32_t)bits,
    c.task.params[OM_PAD_P_VALUE_HI] = (int32_t)(uint32_t)(bits >> 32);
  }
  for (int i = 0; i < 12; i++) {
    if (xdt == DT_FLOAT32)
      ((float *)c.data[OM_PAD_T_X])[i] = (float)(i + 1);
    else
      ((int64_t *)c.data[OM_PAD_T_X])[i] = i + 1;
  }
  omrt_status st = kc_check(&c);
  CHECK_EQ_INT(st, OMRT_OK);
  if (st != OMRT_OK) {
    test_note("  mode %d: %s", mode, omrt_last_error());
    kc_free(&c);
    return;
  }
  rt_args a;
  memset(&a, 0, sizeof a);
  for (int i = 0; i < 2; i++)
    a.data[i] = c.data[i], a.desc[i] = &c.t[i];
  for (uint32_t b = c.task.block_dim; b-- > 0;)
    rt_kernels[OM_TASK_PAD].run(&c.task, &a, b, NULL);

  const char *dn = xdt == DT_FLOAT32 ? "f32" : "i64";
  char text[512];
  snprintf(text, sizeof text,
           "graph g opset 18\ninput %%x : %s[3,4]\n%%y : %s[%lld,%lld] = Pad(%%x) {mode=\"%s\", "
           "pads=[%lld,%lld,%lld,%lld], "
           "value=7.0}\noutput %%y\n",
           dn, dn, (long long)yd[0], (long long)yd[1], MODES[mode], (long long)pads[0], (long long)pads[1],
           (long long)pads[2], (long long)pads[3]);
  arena ar;
  arena_init(&ar, 0);
  const void *ins[1] = {c.data[OM_PAD_T_X]};
  void *outs[1];
  int ok = kc_eval_text(text, "pad", ins, outs, &ar);
  for (int64_t i = 0; ok && i < yd[0] * yd[1]; i++) {
    ok = get(c.data[OM_PAD_T_Y], ydt, (size_t)i) == get(outs[0], xdt, (size_t)i);
    if (!ok)
      test_note("  %s pads %lld,%lld,%lld,%lld x %d y %d bd %u: y[%lld] = %g, want %g", MODES[mode],
                (long long)pads[0], (long long)pads[1], (long long)pads[2], (long long)pads[3], xdt, ydt, bd,
                (long long)i, get(c.data[OM_PAD_T_Y], ydt, (size_t)i), get(outs[0], xdt, (size_t)i));
  }
  CHECK(ok);
  arena_free(&ar);
  kc_free(&c);
}

static void test_kernel(void) {
  static const int64_t pads[][4] = {{1, 2, 0, 1}, {0, -1, -1, 2}, {5, 6, 4, 7}, {0, 0, 0, 0}};
  for (int mode = 0; mode < 4; mode++)
    for (size_t p = 0; p < sizeof pads / sizeof *pads; p++)
      for (uint32_t bd = 1; bd <= 3; bd++) {
        one_case(mode, pads[p], DT_FLOAT32, DT_FLOAT32, bd);
        one_case(mode, pads[p], DT_FLOAT32, DT_FLOAT16, bd);
        one_case(mode, pads[p], DT_INT64, DT_INT64, bd);
      }
}

static uint32_t rng = 12345;
static int64_t rnd(int64_t n) { /* 0 .. n-1 */
  rng = rng * 1664525u + 1013904223u;
  return (int64_t)((rng >> 8) % (uint32_t)n);
}

/* x [xd[rank]] padded by begin[d] before and end[d] after each dim, against ir_eval_graph. */
static void nd_case(int rank, const int64_t *xd, const int64_t *begin, const int64_t *end, int mode, int ydt,
                    uint32_t bd) {
  int64_t yd[5];
  uint64_t nx = 1, ny = 1;
  for (int d = 0; d < rank; d++)
    yd[d] = xd[d] + begin[d] + end[d], nx *= (uint64_t)xd[d], ny *= (uint64_t)yd[d];
  kcase c;
  kc_init(&c, mode, bd);
  kc_set(&c, OM_PAD_T_X, DT_FLOAT32, rank, xd);
  kc_set(&c, OM_PAD_T_Y, ydt, rank, yd);
  for (int d = 0; d < rank; d++)
    c.task.params[OM_PAD_P_BEGIN + d] = (int32_t)begin[d];
  if (mode == 0) { /* the constant 7 as bytes of y's dtype */
    uint8_t b[8] = {0};
    elem_put(b, ydt, 0, 7.0);
    uint32_t bits = 0;
    for (int k = 0; k < 4; k++)
      bits |= (uint32_t)b[k] << (8 * k);
    c.task.params[OM_PAD_P_VALUE_LO] = (int32_t)bits;
  }
  for (uint64_t i = 0; i < nx; i++)
    ((float *)c.data[OM_PAD_T_X])[i] = (float)(i + 1);
  omrt_status st = kc_check(&c);
  CHECK_EQ_INT(st, OMRT_OK);
  if (st != OMRT_OK) {
    test_note("  rank %d mode %d: %s", rank, mode, omrt_last_error());
    kc_free(&c);
    return;
  }
  kc_run_blocks(&c, NULL);
  char text[1024], dims[128] = "", ydims[128] = "", pads[128] = "";
  for (int d = 0; d < rank; d++) {
    snprintf(dims + strlen(dims), sizeof dims - strlen(dims), "%s%lld", d ? "," : "", (long long)xd[d]);
    snprintf(ydims + strlen(ydims), sizeof ydims - strlen(ydims), "%s%lld", d ? "," : "", (long long)yd[d]);
  }
  for (int k = 0; k < 2 * rank; k++)
    snprintf(pads + strlen(pads), sizeof pads - strlen(pads), "%s%lld", k ? "," : "",
             (long long)(k < rank ? begin[k] : end[k - rank]));
  snprintf(text, sizeof text,
           "graph g opset 18\ninput %%x : f32[%s]\n%%y : f32[%s] = Pad(%%x) {mode=\"%s\", pads=[%s], "
           "value=7.0}\noutput %%y\n",
           dims, ydims, MODES[mode], pads);
  arena ar;
  arena_init(&ar, 0);
  const void *ins[1] = {c.data[OM_PAD_T_X]};
  void *outs[1];
  int ok = kc_eval_text(text, "pad", ins, outs, &ar);
  for (uint64_t i = 0; ok && i < ny; i++) {
    double want = get(outs[0], DT_FLOAT32, (size_t)i);
    want = ydt == DT_FLOAT16 ? half_to_float(float_to_half((float)want)) : want;
    ok = get(c.data[OM_PAD_T_Y], ydt, (size_t)i) == want;
    if (!ok)
      test_note("  x [%s] pads [%s] %s y dtype %d bd %u: y[%llu] = %g, want %g", dims, pads, MODES[mode], ydt,
                bd, (unsigned long long)i, get(c.data[OM_PAD_T_Y], ydt, (size_t)i), want);
  }
  CHECK(ok);
  arena_free(&ar);
  kc_free(&c);
}

static void test_kernel_nd(void) {
  for (int t = 0; t < 400; t++) {
    int rank = 1 + (int)rnd(5), mode = (int)rnd(4);
    int64_t xd[5], begin[5], end[5];
    for (int d = 0; d < rank; d++) {
      xd[d] = rnd(3) == 0 ? 1 : 2 + rnd(5);
      int padded = rnd(2) == 0;
      begin[d] = padded ? rnd(6) - 2 : 0, end[d] = padded ? rnd(6) - 2 : 0;
      if (xd[d] + begin[d] + end[d] < 1) begin[d] = end[d] = 0; /* y keeps at least one element */
      if (mode == 1 && xd[d] < 2) begin[d] = begin[d] < 0 ? begin[d] : 0, end[d] = end[d] < 0 ? end[d] : 0;
      if (xd[d] + begin[d] + end[d] < 1) begin[d] = end[d] = 0;
    }
    int64_t ny = 1;
    for (int d = 0; d < rank; d++)
      ny *= xd[d] + begin[d] + end[d];
    uint32_t bd = 1 + (uint32_t)rnd(ny < 5 ? ny : 5);
    nd_case(rank, xd, begin, end, mode, t % 3 == 2 ? DT_FLOAT16 : DT_FLOAT32, bd);
  }
  static const int64_t zx[5] = {2, 3, 1, 5, 1}, zb[5] = {0}, ze[5] = {0, 0, 0, 0, 3};
  for (uint32_t bd = 1; bd <= 4; bd++)
    nd_case(5, zx, zb, ze, 0, DT_FLOAT32, bd);
}

/* A valid edge pad of [3,4] by 1 on each side that `mutate` breaks. */
static void bad(int mutate, const char *what, const char *want) {
  int64_t yd[2] = {5, 6}, y1[1] = {30}, x1[2] = {3, 1};
  kcase c;
  kc_init(&c, 2, 2);
  kc_set(&c, OM_PAD_T_X, DT_FLOAT32, 2, XD);
  kc_set(&c, OM_PAD_T_Y, DT_FLOAT32, 2, yd);
  c.task.params[OM_PAD_P_BEGIN] = 1, c.task.params[OM_PAD_P_BEGIN + 1] = 1;
  switch (mutate) {
  case 0: c.task.params[OM_PAD_P_MODE] = 4; break;
  case 1: c.task.params[OM_PAD_P_BEGIN + 2] = 1; break; /* begin of a dim x does not have */
  case 2: c.task.params[OM_PAD_P_VALUE_LO] = 5; break;  /* a constant outside constant mode */
  case 3:
    c.task.params[OM_PAD_P_MODE] = 0, c.task.params[OM_PAD_P_VALUE_HI] = 1;
    break; /* 8 bytes of constant for f32 */
  case 4: kc_set(&c, OM_PAD_T_Y, DT_FLOAT32, 1, y1); break;
  case 5: kc_set(&c, OM_PAD_T_Y, DT_INT16, 2, yd); break;
  case 6:
    c.task.params[OM_PAD_P_MODE] = 1;
    kc_set(&c, OM_PAD_T_X, DT_FLOAT32, 2, x1);
    break; /* reflect of a 1-wide dim */
  case 7: c.task.block_dim = 31; break;
  case 8: c.t[OM_PAD_T_X].layout = LAYOUT_NC1HWC0; break;
  case 9: c.t[OM_PAD_T_Y].bytes = 8; break;
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
  bad(1, "begin beyond the rank", test_param_ref(OM_PAD_P_BEGIN + 2));
  bad(2, "constant outside constant mode", test_param_ref(OM_PAD_P_VALUE_LO));
  bad(3, "constant too wide", test_param_ref(OM_PAD_P_VALUE_HI));
  bad(4, "rank", "rank");
  bad(5, "f32 to i16", "dtype");
  bad(6, "reflect of one element", "reflect");
  bad(7, "block_dim", "block_dim");
  bad(8, "layout", "layout");
  bad(9, "bytes", "bytes");
}

int main(void) {
  test_kernel();
  test_kernel_nd();
  test_checks();
  return test_summary("pad");
}
