/* test_strided.c - the STRIDED_COPY task kind (runtime/kernels_strided.c)
 * and the views it runs (ir/view.c).
 *
 * Kernel: views built by hand over x = [2,3,4] (a transpose, a reversed
 * slice with steps -2, a broadcast with stride 0, a plain copy, a view that
 * merges into one run, an empty view) in f32 -> f32, f16 -> f32, f32 -> f16,
 * i64, u8 and i16 (bytes), 1 to 3 blocks, against the definition: y[i] =
 * x[offset + sum idx_d * stride_d]. Check: each rule broken once must be
 * refused with a message naming the task. Views: ir_view_build for each op
 * on small inputs, compared with index formulas written out here (ONNX's
 * definitions of Transpose, Slice with clamping, Expand, Tile,
 * DepthToSpace DCR/CRD, SpaceToDepth), through the reference evaluator.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fp16.h"
#include "ir/eval.h"
#include "ir/ir.h"
#include "ir/view.h"
#include "omrt.h"
#include "runtime/kernels.h"
#include "kcase.h"
#include "support.h"

static void kc_view(kcase *c, int rank, int64_t offset, const int64_t *dims, const int64_t *strides) {
  c->task.params[OM_STRIDED_COPY_P_RANK] = rank, c->task.params[OM_STRIDED_COPY_P_OFFSET] = (int32_t)offset;
  for (int d = 0; d < rank; d++)
    c->task.params[OM_STRIDED_COPY_P_DIMS + d] = (int32_t)dims[d],
                                            c->task.params[OM_STRIDED_COPY_P_STRIDES + d] =
                                                (int32_t)strides[d];
}

static void kc_init(kcase *c, uint32_t block_dim) { kc_setup(c, OM_TASK_STRIDED_COPY, block_dim, 2); }

static double get(const void *p, int dt, size_t i) {
  switch (dt) {
  case DT_FLOAT32: return ((const float *)p)[i];
  case DT_FLOAT16: return half_to_float(((const uint16_t *)p)[i]);
  case DT_INT64: return (double)((const int64_t *)p)[i];
  case DT_INT16: return ((const int16_t *)p)[i];
  default: return ((const uint8_t *)p)[i];
  }
}

static void put(void *p, int dt, size_t i, double v) {
  switch (dt) {
  case DT_FLOAT32: ((float *)p)[i] = (float)v; break;
  case DT_FLOAT16: ((uint16_t *)p)[i] = float_to_half((float)v); break;
  case DT_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
  case DT_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
  default: ((uint8_t *)p)[i] = (uint8_t)v; break;
  }
}

/* --- the kernel against the definition */

typedef struct vcase {
  const char *name;
  int rank;
  int64_t offset, dims[MAX_RANK], strides[MAX_RANK];
} vcase;

static void run_view(const vcase *vc, int xdt, int ydt, uint32_t bd) {
  static const int64_t xd[3] = {2, 3, 4};
  int64_t yn = 1;
  for (int d = 0; d < vc->rank; d++)
    yn *= vc->dims[d];
  kcase c;
  kc_init(&c, (uint32_t)(yn == 0 ? 1 : bd < yn ? bd : yn));
  kc_set(&c, OM_STRIDED_COPY_T_X, xdt, 3, xd);
  kc_set(&c, OM_STRIDED_COPY_T_Y, ydt, 1, &yn);
  kc_view(&c, vc->rank, vc->offset, vc->dims, vc->strides);
  for (size_t i = 0; i < 24; i++)
    put(c.data[OM_STRIDED_COPY_T_X], xdt, i, (double)(i * 3 % 24) - 4);
  omrt_status st = kc_check(&c);
  CHECK_EQ_INT(st, OMRT_OK);
  if (st != OMRT_OK) {
    test_note("  %s: %s", vc->name, omrt_last_error());
    kc_free(&c);
    return;
  }
  rt_args a;
  memset(&a, 0, sizeof a);
  for (int i = 0; i < 2; i++)
    a.data[i] = c.data[i], a.desc[i] = &c.t[i];
  for (uint32_t b = c.task.block_dim; b-- > 0;)
    rt_kernels[OM_TASK_STRIDED_COPY].run(&c.task, &a, b, NULL);
  int ok = 1;
  for (int64_t i = 0; i < yn && ok; i++) {
    int64_t rest = i, at = vc->offset;
    for (int d = vc->rank - 1; d >= 0; d--)
      at += rest % vc->dims[d] * vc->strides[d], rest /= vc->dims[d];
    ok =
        get(c.data[OM_STRIDED_COPY_T_Y], ydt, (size_t)i) == get(c.data[OM_STRIDED_COPY_T_X], xdt, (size_t)at);
    if (!ok)
      test_note("  %s x %d y %d bd %u: y[%lld] = %g, want x[%lld] = %g", vc->name, xdt, ydt, bd, (long long)i,
                get(c.data[OM_STRIDED_COPY_T_Y], ydt, (size_t)i), (long long)at,
                get(c.data[OM_STRIDED_COPY_T_X], xdt, (size_t)at));
  }
  CHECK(ok);
  kc_free(&c);
}

static void test_kernel(void) {
  static const vcase cases[] = {
      {"transpose 2,0,1", 3, 0, {4, 2, 3}, {1, 12, 4}},
      {"slice reversed step -2", 3, 23, {2, 2, 2}, {-12, -8, -2}},
      {"broadcast", 4, 0, {2, 2, 3, 4}, {0, 12, 4, 1}},
      {"copy", 3, 0, {2, 3, 4}, {12, 4, 1}},
      {"rows slice (merges)", 2, 4, {2, 8}, {12, 1}},
      {"empty", 2, 0, {0, 4}, {4, 1}},
      {"scalar", 0, 5, {0}, {0}},
  };
  const int dts[][2] = {{DT_FLOAT32, DT_FLOAT32}, {DT_FLOAT16, DT_FLOAT32}, {DT_FLOAT32, DT_FLOAT16},
                        {DT_INT64, DT_INT64},     {DT_UINT8, DT_UINT8},     {DT_INT16, DT_INT16}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
    for (size_t t = 0; t < sizeof dts / sizeof *dts; t++)
      for (uint32_t bd = 1; bd <= 3; bd++)
        run_view(&cases[k], dts[t][0], dts[t][1], bd);
}

/* Dtypes of one size copy bits (BitCast's flat copy, or any view of it):
 * f32 -> i32 and f16 -> u16 words equal the source's, NaNs and -0 included. */
static void test_bit_copies(void) {
  static const int pairs[][2] = {{DT_FLOAT32, DT_INT32}, {DT_FLOAT16, DT_UINT16}, {DT_INT8, DT_UINT8}};
  static const int64_t xd[1] = {24}, yd[1] = {12};
  for (size_t k = 0; k < sizeof pairs / sizeof *pairs; k++) {
    kcase c;
    kc_init(&c, 2);
    kc_set(&c, OM_STRIDED_COPY_T_X, pairs[k][0], 1, xd);
    kc_set(&c, OM_STRIDED_COPY_T_Y, pairs[k][1], 1, yd);
    kc_view(&c, 1, 23, (const int64_t[]){12}, (const int64_t[]){-2}); /* every other, reversed */
    size_t es = dtype_size(pairs[k][0]);
    uint8_t *x = c.data[OM_STRIDED_COPY_T_X];
    for (size_t i = 0; i < 24 * es; i++)
      x[i] = (uint8_t)(i * 37 + 11); /* NaN and denormal patterns among them */
    CHECK_EQ_INT(kc_check(&c), OMRT_OK);
    rt_args a;
    memset(&a, 0, sizeof a);
    for (int i = 0; i < 2; i++)
      a.data[i] = c.data[i], a.desc[i] = &c.t[i];
    for (uint32_t b = 0; b < c.task.block_dim; b++)
      rt_kernels[OM_TASK_STRIDED_COPY].run(&c.task, &a, b, NULL);
    int same = 1;
    for (size_t i = 0; i < 12; i++)
      same &= !memcmp((uint8_t *)c.data[OM_STRIDED_COPY_T_Y] + i * es, x + (23 - 2 * i) * es, es);
    CHECK(same);
    kc_free(&c);
  }
}

/* A valid transpose that `mutate` breaks. */
static void bad(int mutate, const char *what, const char *want) {
  static const int64_t xd[3] = {2, 3, 4}, vd[3] = {4, 2, 3}, vs[3] = {1, 12, 4}, yd[3] = {4, 2, 3};
  kcase c;
  kc_init(&c, 2);
  kc_set(&c, OM_STRIDED_COPY_T_X, DT_FLOAT32, 3, xd);
  kc_set(&c, OM_STRIDED_COPY_T_Y, DT_FLOAT32, 3, yd);
  kc_view(&c, 3, 0, vd, vs);
  switch (mutate) {
  case 0: c.task.params[OM_STRIDED_COPY_P_RANK] = 9; break;
  case 1: c.task.params[OM_STRIDED_COPY_P_OFFSET] = -1; break;
  case 2: c.task.params[OM_STRIDED_COPY_P_OFFSET] = 1; break;      /* reads past the end */
  case 3: c.task.params[OM_STRIDED_COPY_P_STRIDES] = -1; break;    /* reads before the start */
  case 4: c.task.params[OM_STRIDED_COPY_P_DIMS] = 5; break;        /* more elements than y */
  case 5: c.task.params[OM_STRIDED_COPY_P_DIMS + 2] = -3; break;   /* negative dim */
  case 6: c.task.params[OM_STRIDED_COPY_NPARAMS + 2] = 1; break;   /* unused param */
  case 7: kc_set(&c, OM_STRIDED_COPY_T_Y, DT_INT16, 3, yd); break; /* f32 -> i16 */
  case 8: c.t[OM_STRIDED_COPY_T_Y].layout = LAYOUT_NC1HWC0; break;
  case 9: c.task.block_dim = 25; break;
  case 10: c.t[OM_STRIDED_COPY_T_X].bytes = 8; break;
  case 11: c.task.tensors[OM_STRIDED_COPY_T_X] = OM_NONE; break;
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
  bad(0, "rank 9", "rank");
  bad(1, "negative offset", "offset");
  bad(2, "past the end", "reads x elements");
  bad(3, "before the start", "reads x elements");
  bad(4, "element count", "elements");
  bad(5, "negative dim", "negative");
  bad(6, "unused param", test_param_ref(OM_STRIDED_COPY_NPARAMS + 2));
  bad(7, "f32 to i16", "dtype");
  bad(8, "NC1HWC0 y", "layout");
  bad(9, "block_dim", "block_dim");
  bad(10, "bytes", "bytes");
  bad(11, "missing x", "OM_NONE");
}

/* --- views through the reference evaluator, against ONNX's formulas */

/* Runs one-node graph text on x = 0, 1, 2, ... (f32) into out. */
static int run_graph(const char *text, float *out, size_t n) {
  float x[256];
  for (int i = 0; i < 256; i++)
    x[i] = (float)i;
  diag d;
  diag_init(&d);
  ir_graph *g = NULL;
  if (ir_parse(text, "view", &g, &d) != ST_OK) {
    test_note("  parse: %s", d.msg);
    return -1;
  }
  arena a;
  arena_init(&a, 0);
  const void *ins[1] = {x};
  void *outs[1];
  int rc = ir_eval_graph(g, ins, outs, &a, &d) == ST_OK ? 0 : -1;
  if (rc)
    test_note("  eval: %s", d.msg);
  else
    memcpy(out, outs[0], n * sizeof *out);
  arena_free(&a);
  ir_graph_free(g);
  return rc;
}

static void test_views(void) {
  float y[256];
  /* Transpose [2,3,4] perm [1,2,0]: y[j,k,i] = x[i,j,k] */
  int ok = run_graph("graph g opset 13\ninput %x : f32[2,3,4]\n%y : f32[3,4,2] = Transpose(%x) "
                     "{perm=[1,2,0]}\noutput %y\n",
                     y, 24) == 0;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 4; k++)
        ok &= y[(j * 4 + k) * 2 + i] == (float)((i * 3 + j) * 4 + k);
  CHECK(ok);
  /* Slice axis 1 of [2,10]: starts 8, ends -9 (clamped to 1), steps -3: 8, 5, 2 */
  ok = run_graph("graph g opset 13\ninput %x : f32[2,10]\n%y : f32[2,3] = Slice(%x) {axes=[-1], ends=[-9], "
                 "starts=[8], steps=[-3]}\noutput %y\n",
                 y, 6) == 0;
  CHECK(ok && y[0] == 8 && y[1] == 5 && y[2] == 2 && y[3] == 18 && y[5] == 12);
  /* Slice with huge ends clamps: x[1:, ...] */
  ok = run_graph("graph g opset 13\ninput %x : f32[3,2]\n%y : f32[2,2] = Slice(%x) "
                 "{ends=[9223372036854775807], starts=[1]}\noutput %y\n",
                 y, 4) == 0;
  CHECK(ok && y[0] == 2 && y[3] == 5);
  /* The extremes of int64 as starts, ends and steps (ONNX clamps them; nothing may overflow):
   * reversed from the end by INT64_MIN steps is one element, the last; INT64_MAX steps from
   * INT64_MIN (clamped to 0) one element, the first; a reversal of everything with ends INT64_MIN */
  ok = run_graph("graph g opset 13\ninput %x : f32[5]\n%y : f32[1] = Slice(%x) {ends=[-9223372036854775808], "
                 "starts=[9223372036854775807], steps=[-9223372036854775808]}\noutput %y\n",
                 y, 1) == 0;
  CHECK(ok && y[0] == 4);
  ok = run_graph("graph g opset 13\ninput %x : f32[5]\n%y : f32[1] = Slice(%x) {ends=[9223372036854775807], "
                 "starts=[-9223372036854775808], steps=[9223372036854775807]}\noutput %y\n",
                 y, 1) == 0;
  CHECK(ok && y[0] == 0);
  ok = run_graph("graph g opset 13\ninput %x : f32[5]\n%y : f32[5] = Slice(%x) {ends=[-9223372036854775808], "
                 "starts=[-1], steps=[-1]}\noutput %y\n",
                 y, 5) == 0;
  CHECK(ok && y[0] == 4 && y[4] == 0);
  /* Expand [3,1] to [2,1,4]: y[a,b,c] = x[b] */
  ok = run_graph(
           "graph g opset 13\ninput %x : f32[3,1]\n%y : f32[2,3,4] = Expand(%x) {shape=[2,1,4]}\noutput %y\n",
           y, 24) == 0;
  for (int i = 0; i < 24; i++)
    ok &= y[i] == (float)(i / 4 % 3);
  CHECK(ok);
  /* Tile [2,3] by [2,2]: y[i,j] = x[i % 2, j % 3] */
  ok = run_graph(
           "graph g opset 13\ninput %x : f32[2,3]\n%y : f32[4,6] = Tile(%x) {repeats=[2,2]}\noutput %y\n", y,
           24) == 0;
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 6; j++)
      ok &= y[i * 6 + j] == (float)(i % 2 * 3 + j % 3);
  CHECK(ok);
  /* DepthToSpace [1,8,2,3] b=2: DCR ch = (i*b + j)*C' + c, CRD ch = c*b*b + i*b + j */
  for (int crd = 0; crd < 2; crd++) {
    char text[256];
    snprintf(text, sizeof text,
             "graph g opset 13\ninput %%x : f32[1,8,2,3]\n%%y : f32[1,2,4,6] = DepthToSpace(%%x) "
             "{blocksize=2, mode=\"%s\"}\noutput %%y\n",
             crd ? "CRD" : "DCR");
    ok = run_graph(text, y, 48) == 0;
    for (int c = 0; c < 2; c++)
      for (int h = 0; h < 4; h++)
        for (int w = 0; w < 6; w++) {
          int i = h % 2, j = w % 2, ch = crd ? c * 4 + i * 2 + j : (i * 2 + j) * 2 + c;
          ok &= y[(c * 4 + h) * 6 + w] == (float)((ch * 2 + h / 2) * 3 + w / 2);
        }
    CHECK(ok);
  }
  /* SpaceToDepth [1,2,4,6] b=2: y[(i*b + j)*C + c, h, w] = x[c, h*b + i, w*b + j] */
  ok = run_graph("graph g opset 13\ninput %x : f32[1,2,4,6]\n%y : f32[1,8,2,3] = SpaceToDepth(%x) "
                 "{blocksize=2}\noutput %y\n",
                 y, 48) == 0;
  for (int oc = 0; oc < 8; oc++)
    for (int h = 0; h < 2; h++)
      for (int w = 0; w < 3; w++) {
        int i = oc / 4, j = oc / 2 % 2, c = oc % 2;
        ok &= y[(oc * 2 + h) * 3 + w] == (float)((c * 4 + h * 2 + i) * 6 + w * 2 + j);
      }
  CHECK(ok);
  /* bad attributes are refused by the view builder */
  ir_graph *g = NULL;
  diag d;
  diag_init(&d);
  CHECK(ir_parse(
            "graph g opset 13\ninput %x : f32[2,3]\n%y : f32[3,2] = Transpose(%x) {perm=[0,0]}\noutput %y\n",
            "v", &g, &d) == ST_OK);
  if (g) {
    ir_view v;
    char err[128];
    CHECK(ir_view_build(g->nodes[0], 0, 2, g->inputs[0]->dims, &v, err, sizeof err) == -1 &&
          strstr(err, "permutation"));
    ir_graph_free(g);
  }
}

int main(void) {
  test_bit_copies();
  test_kernel();
  test_checks();
  test_views();
  return test_summary("strided");
}
