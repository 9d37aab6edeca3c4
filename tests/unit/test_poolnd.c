/* test_poolnd.c - the POOL_ND task kind (runtime/kernels_poolnd.c) against
 * a naive pooling written from ONNX's definition, the compiler's output
 * extents (ir_pool_out) and evaluator (ir/pool.c) against the same, and
 * the kernel's load-time check.
 *
 * Cases: 1, 2 and 3 spatial dims; max, average (with and without
 * count_include_pad) and Lp (p = 1, 2, 3); strides, dilations, asymmetric
 * pads, floor and ceil mode; f32 -> f32, f32 -> f16, and max on i8 and u8;
 * 1 to 3 blocks. The naive reference visits every tap of every window and
 * asks of each whether it lies in x and in the padded extent.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/elem.h"
#include "common/fp16.h"
#include "ir/eval.h"
#include "ir/ir.h"
#include "ir/pool.h"
#include "kcase.h"
#include "omrt.h"
#include "runtime/kernels.h"
#include "support.h"

typedef struct pcase {
  int r, mode, incl, p, ceil;
  int64_t x[3], k[3], s[3], dl[3], pb[3], pe[3];
} pcase;

static int64_t out_dim(int64_t in, int64_t k, int64_t s, int64_t dl, int64_t pb, int64_t pe, int ceil_mode) {
  int64_t ext = dl * (k - 1) + 1, span = in + pb + pe - ext;
  int64_t o = ceil_mode ? (span + s - 1) / s + 1 : span / s + 1;
  if (ceil_mode && (o - 1) * s - pb >= in) o--; /* the last window starts inside x or the begin pad */
  return o;
}

/* y[n, c, o...] by the definition. */
static double naive(const pcase *pc, const double *x, const int64_t *xd, const int64_t *o, int64_t nc) {
  int64_t xd3[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, dl[3] = {1, 1, 1}, pb[3] = {0}, pe[3] = {0},
          o3[3] = {0};
  for (int j = 0; j < pc->r; j++) {
    int at = 3 - pc->r + j;
    xd3[at] = xd[j], k[at] = pc->k[j], s[at] = pc->s[j], dl[at] = pc->dl[j], pb[at] = pc->pb[j],
    pe[at] = pc->pe[j];
    o3[at] = o[j];
  }
  double acc = pc->mode == 0 ? -INFINITY : 0;
  int64_t valid = 0, padded = 0;
  for (int64_t a = 0; a < k[0]; a++)
    for (int64_t b = 0; b < k[1]; b++)
      for (int64_t c = 0; c < k[2]; c++) {
        int64_t at[3] = {o3[0] * s[0] - pb[0] + a * dl[0], o3[1] * s[1] - pb[1] + b * dl[1],
                         o3[2] * s[2] - pb[2] + c * dl[2]};
        int in_x = 1, in_pad = 1;
        for (int j = 0; j < 3; j++)
          in_x &= at[j] >= 0 && at[j] < xd3[j], in_pad &= at[j] >= -pb[j] && at[j] < xd3[j] + pe[j];
        padded += in_pad;
        if (!in_x) continue;
        valid++;
        double v = x[nc * xd3[0] * xd3[1] * xd3[2] + (at[0] * xd3[1] + at[1]) * xd3[2] + at[2]];
        if (pc->mode == 0)
          acc = fmax(acc, v);
        else if (pc->mode == 1)
          acc += v;
        else
          acc += pow(fabs(v), pc->p);
      }
  if (pc->mode == 1) return acc / (double)(pc->incl ? padded : valid);
  if (pc->mode == 2) return pow(acc, 1.0 / pc->p);
  return acc;
}

static void one_case(const pcase *pc, int xdt, int ydt, uint32_t bd) {
  int rank = pc->r + 2;
  int64_t xd[5] = {2, 3}, yd[5] = {2, 3};
  for (int j = 0; j < pc->r; j++) {
    xd[2 + j] = pc->x[j];
    yd[2 + j] = out_dim(pc->x[j], pc->k[j], pc->s[j], pc->dl[j], pc->pb[j], pc->pe[j], pc->ceil);
    CHECK_EQ_INT(ir_pool_out(pc->x[j], pc->k[j], pc->s[j], pc->dl[j], pc->pb[j], pc->pe[j], pc->ceil),
                 yd[2 + j]);
  }
  kcase c;
  kc_setup(&c, OM_TASK_POOL_ND, bd, 2);
  kc_set(&c, OM_POOL_ND_T_X, xdt, rank, xd);
  kc_set(&c, OM_POOL_ND_T_Y, ydt, rank, yd);
  int32_t *q = c.task.params;
  q[OM_POOL_ND_P_MODE] = pc->mode, q[OM_POOL_ND_P_COUNT_INCLUDE_PAD] = pc->incl,
  q[OM_POOL_ND_P_LP_P] = pc->mode == 2 ? pc->p : 0;
  for (int j = 0; j < pc->r; j++)
    q[OM_POOL_ND_P_KERNEL + j] = (int32_t)pc->k[j], q[OM_POOL_ND_P_STRIDES + j] = (int32_t)pc->s[j],
                            q[OM_POOL_ND_P_DILATIONS + j] = (int32_t)pc->dl[j],
                            q[OM_POOL_ND_P_PAD_BEGIN + j] = (int32_t)pc->pb[j],
                            q[OM_POOL_ND_P_PAD_END + j] = (int32_t)pc->pe[j];
  uint64_t xn = c.t[OM_POOL_ND_T_X].bytes / dtype_size(xdt), yn = c.t[OM_POOL_ND_T_Y].bytes / dtype_size(ydt);
  double *x = malloc(xn * sizeof *x);
  for (uint64_t i = 0; i < xn; i++) {
    x[i] = xdt == DT_INT8    ? (double)((int)(i * 37 % 251) - 125)
           : xdt == DT_UINT8 ? (double)(i * 37 % 251)
                             : sin(0.7 * (double)i) * 2;
    elem_put(c.data[OM_POOL_ND_T_X], xdt, (int64_t)i, x[i]);
  }
  char what[200];
  snprintf(what, sizeof what, "r=%d mode=%d incl=%d p=%d ceil=%d xdt=%d ydt=%d bd=%u", pc->r, pc->mode,
           pc->incl, pc->p, pc->ceil, xdt, ydt, bd);
  omrt_status st = kc_check(&c);
  CHECK_EQ_INT(st, OMRT_OK);
  if (st == OMRT_OK) {
    rt_args a;
    memset(&a, 0, sizeof a);
    for (int i = 0; i < 2; i++)
      a.data[i] = c.data[i], a.desc[i] = &c.t[i];
    for (uint32_t b = bd; b-- > 0;)
      rt_kernels[OM_TASK_POOL_ND].run(&c.task, &a, b, NULL);
  } else {
    test_note("  %s: %s", what, omrt_last_error());
  }
  /* the compiler's evaluator on the same pool in IR text */
  static const char *const ops[] = {"MaxPool", "AveragePool", "LpPool"};
  char text[1024], dims[64], ks[64], ss[64], ds[64], ps[96];
  const char *dn = xdt == DT_INT8 ? "i8" : xdt == DT_UINT8 ? "u8" : "f32";
  int at = snprintf(dims, sizeof dims, "%lld,%lld", (long long)xd[0], (long long)xd[1]);
  for (int j = 0; j < pc->r; j++)
    at += snprintf(dims + at, sizeof dims - (size_t)at, ",%lld", (long long)xd[2 + j]);
  int64_t pads[6];
  for (int j = 0; j < pc->r; j++)
    pads[j] = pc->pb[j], pads[pc->r + j] = pc->pe[j];
  const int64_t *lists[4] = {pc->k, pc->s, pc->dl, pads};
  char *outs[4] = {ks, ss, ds, ps};
  for (int l = 0; l < 4; l++) {
    int n = l == 3 ? 2 * pc->r : pc->r, w = snprintf(outs[l], 64, "[");
    for (int j = 0; j < n; j++)
      w += snprintf(outs[l] + w, (size_t)(64 - w), "%s%lld", j ? "," : "", (long long)lists[l][j]);
    snprintf(outs[l] + w, (size_t)(64 - w), "]");
  }
  snprintf(text, sizeof text,
           "graph g opset 18\ninput %%x : %s[%s]\n%%y : ?[?] = %s(%%x) {ceil_mode=%d, count_include_pad=%d, "
           "dilations=%s, kernel_shape=%s, p=%d, pads=%s, strides=%s}\noutput %%y\n",
           dn, dims, ops[pc->mode], pc->ceil, pc->incl, ds, ks, pc->p, ps, ss);
  diag d;
  diag_init(&d);
  ir_graph *g = NULL;
  arena ar;
  arena_init(&ar, 0);
  void *eo[1] = {NULL};
  int eok = ir_parse(text, "pool", &g, &d) == ST_OK;
  if (eok) {
    for (int k = 0; k < rank; k++)
      g->nodes[0]->out[0]->dims[k] = yd[k];
    g->nodes[0]->out[0]->rank = rank, g->nodes[0]->out[0]->dtype = (dtype)xdt;
    const void *ins[1] = {c.data[OM_POOL_ND_T_X]};
    eok = ir_eval_graph(g, ins, eo, &ar, &d) == ST_OK;
  }
  CHECK(eok);
  if (!eok) test_note("  %s: eval: %s", what, d.msg);
  int bad = 0;
  for (uint64_t i = 0; i < yn && st == OMRT_OK && !bad; i++) {
    int64_t rest = (int64_t)i, o[3], plane = 1;
    for (int j = pc->r - 1; j >= 0; j--)
      o[j] = rest % yd[2 + j], rest /= yd[2 + j], plane *= yd[2 + j];
    double want = naive(pc, x, pc->x, o, (int64_t)i / plane);
    double got = elem_get(c.data[OM_POOL_ND_T_Y], ydt, (int64_t)i);
    double tol = ydt == DT_FLOAT16   ? 2e-3 * (1 + fabs(want))
                 : ydt == DT_FLOAT32 ? 2e-6 * (1 + fabs(want))
                                     : 0;
    double ev = eok ? elem_get(eo[0], xdt, (int64_t)i) : want;
    if (fabs(got - want) > tol || fabs(ev - want) > 2e-6 * (1 + fabs(want))) {
      bad = 1;
      test_note("  %s: y[%llu] = %.9g, evaluator %.9g, want %.9g", what, (unsigned long long)i, got, ev,
                want);
    }
  }
  CHECK(!bad);
  arena_free(&ar);
  ir_graph_free(g);
  free(x);
  kc_free(&c);
}

static void test_kernel(void) {
  pcase cases[] = {
      {.r = 1, .x = {9}, .k = {3}, .s = {2}, .dl = {1}, .pb = {1}, .pe = {0}},
      {.r = 1, .x = {10}, .k = {2}, .s = {3}, .dl = {3}, .pb = {2}, .pe = {2}, .ceil = 1},
      {.r = 2, .x = {7, 6}, .k = {3, 2}, .s = {2, 1}, .dl = {2, 2}, .pb = {1, 0}, .pe = {2, 1}, .ceil = 1},
      {.r = 2, .x = {5, 5}, .k = {2, 2}, .s = {2, 2}, .dl = {1, 1}, .pb = {1, 1}, .pe = {1, 1}},
      {.r = 3,
       .x = {4, 5, 6},
       .k = {2, 3, 2},
       .s = {1, 2, 2},
       .dl = {1, 1, 2},
       .pb = {0, 1, 1},
       .pe = {1, 1, 0}},
      {.r = 3,
       .x = {5, 4, 4},
       .k = {3, 2, 2},
       .s = {2, 2, 3},
       .dl = {2, 1, 1},
       .pb = {1, 0, 1},
       .pe = {2, 1, 1},
       .ceil = 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    pcase pc = cases[i];
    uint32_t bd = (uint32_t)(1 + i % 3);
    pc.mode = 0;
    one_case(&pc, DT_FLOAT32, DT_FLOAT32, bd);
    one_case(&pc, DT_FLOAT32, DT_FLOAT16, bd);
    one_case(&pc, DT_INT8, DT_INT8, bd);
    one_case(&pc, DT_UINT8, DT_UINT8, bd);
    pc.mode = 1;
    for (pc.incl = 0; pc.incl <= 1; pc.incl++) {
      one_case(&pc, DT_FLOAT32, DT_FLOAT32, bd);
      one_case(&pc, DT_FLOAT32, DT_FLOAT16, bd);
    }
    pc.mode = 2, pc.incl = 0;
    for (pc.p = 1; pc.p <= 3; pc.p++)
      one_case(&pc, DT_FLOAT32, DT_FLOAT32, bd);
  }
}

/* A valid 2-D avg pool [1,2,5,5] k2 s2 pads 1 (y [1,2,3,3]) that `mutate` breaks. */
static void bad(int mutate, const char *what, const char *want) {
  int64_t xd[4] = {1, 2, 5, 5}, yd[4] = {1, 2, 3, 3};
  kcase c;
  kc_setup(&c, OM_TASK_POOL_ND, 2, 2);
  kc_set(&c, OM_POOL_ND_T_X, DT_FLOAT32, 4, xd);
  kc_set(&c, OM_POOL_ND_T_Y, DT_FLOAT32, 4, yd);
  int32_t *q = c.task.params;
  q[OM_POOL_ND_P_MODE] = 1, q[OM_POOL_ND_P_KERNEL] = q[OM_POOL_ND_P_KERNEL + 1] = 2,
  q[OM_POOL_ND_P_STRIDES] = q[OM_POOL_ND_P_STRIDES + 1] = 2,
  q[OM_POOL_ND_P_DILATIONS] = q[OM_POOL_ND_P_DILATIONS + 1] = 1,
  q[OM_POOL_ND_P_PAD_BEGIN] = q[OM_POOL_ND_P_PAD_BEGIN + 1] = 1,
  q[OM_POOL_ND_P_PAD_END] = q[OM_POOL_ND_P_PAD_END + 1] = 1;
  switch (mutate) {
  case 0: q[OM_POOL_ND_P_MODE] = 3; break;
  case 1: q[OM_POOL_ND_P_LP_P] = 2; break;       /* p outside lp */
  case 2: q[OM_POOL_ND_P_KERNEL + 2] = 1; break; /* a third kernel dim for 2 spatial dims */
  case 3: q[OM_POOL_ND_P_PAD_BEGIN] = 2; break;  /* pad as large as the kernel */
  case 4: q[OM_POOL_ND_P_STRIDES] = 0; break;    /* stride 0 */
  case 5: yd[3] = 5, kc_set(&c, OM_POOL_ND_T_Y, DT_FLOAT32, 4, yd); break;
  case 6:
    kc_set(&c, OM_POOL_ND_T_X, DT_INT8, 4, xd), kc_set(&c, OM_POOL_ND_T_Y, DT_INT8, 4, yd);
    break; /* avg on i8 */
  case 7: c.task.block_dim = 19; break;
  case 8:
    q[OM_POOL_ND_P_COUNT_INCLUDE_PAD] = 1, q[OM_POOL_ND_P_MODE] = 0;
    break; /* count_include_pad on max */
  case 9: q[OM_POOL_ND_NPARAMS + 2] = 1; break;
  default: break;
  }
  if (mutate < 0)
    CHECK_EQ_INT(kc_check(&c), OMRT_OK);
  else
    expect_reject(&c, what, want);
  kc_free(&c);
}

static void test_checks(void) {
  bad(-1, "valid", NULL);
  bad(0, "mode 3", "mode");
  bad(1, "p outside lp", "p =");
  bad(2, "third kernel dim", test_param_ref(OM_POOL_ND_P_KERNEL + 2));
  bad(3, "pad = kernel extent", "below the kernel extent");
  bad(4, "stride 0", test_param_ref(OM_POOL_ND_P_STRIDES));
  bad(5, "y dim", "floor");
  bad(6, "avg on i8", "dtype");
  bad(7, "block_dim", "block_dim");
  bad(8, "count_include_pad on max", "count_include_pad");
  bad(9, "unused param", test_param_ref(OM_POOL_ND_NPARAMS + 2));
}

int main(void) {
  test_kernel();
  test_checks();
  return test_summary("poolnd");
}
