/* test_matmul.c - the MATMUL task kind (runtime/kernels_matmul*.c) against a
 * naive reference, and its load-time check.
 *
 * Kernel cases cover ONNX MatMul and Gemm: 2-D, 1-D on either side (1-D x
 * 1-D gives a scalar), batch dims that broadcast ([2,1,4,8,16] x
 * [3,1,16,5]), trans_a / trans_b, alpha and beta with c of every broadcast
 * shape, relu and clip, M, N and K that are not multiples of 16 (and row
 * counts that are not multiples of the AVX2 micro-kernel's 6), tiles small
 * enough for several K chunks and several tiles per batch, and f32 / f16
 * operands with f32 / f16 c and y. Each case runs through the task's run
 * function (the path rt_cpu() chose; ctest runs this file a second time
 * with OMRT_PORTABLE=1) and, directly, through the portable tile and, when
 * the host has AVX2/FMA/F16C, the x86 tile. The reference is an independent
 * double-precision loop over the ONNX definition with numpy broadcasting.
 * Operands are generated representable in their dtype, so an f16 case's only
 * error is f32 summation plus the final rounding to y's dtype.
 * Then every rule of the check is broken once.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fp16.h"
#include "omrt.h"
#include "runtime/kernels.h"
#include "runtime/kernels_matmul.h"
#include "support.h"

static const char STRINGS[] = "\0test_task\0t";

typedef struct mcase {
  om_model_def def;
  om_tensor t[4];
  void *data[4];
  om_task task;
  omrt_model m;
} mcase;

static void mc_setup(mcase *c) {
  memset(c, 0, sizeof *c);
  c->def = (om_model_def){.l0a_bytes = 64 << 10,
                          .l0b_bytes = 64 << 10,
                          .l0c_bytes = 256 << 10,
                          .ub_bytes = 256 << 10,
                          .l1_bytes = 1 << 20,
                          .ntasks = 1};
  c->task = (om_task){.kind = OM_TASK_MATMUL, .name = 1, .block_dim = 1, .ntensors = 4};
  for (int s = 0; s < 4; s++)
    c->task.tensors[s] = OM_NONE;
  c->m.def = &c->def, c->m.tensors = c->t, c->m.tasks = &c->task;
  c->m.strings = STRINGS, c->m.strings_bytes = sizeof STRINGS;
}

static void mc_set(mcase *c, int s, int dt, int rank, const int64_t *dims) {
  om_tensor *t = &c->t[s];
  *t = (om_tensor){.name = 11, .region = OM_REGION_WORKSPACE, .dtype = (uint32_t)dt, .rank = (uint32_t)rank};
  uint64_t n = 1;
  for (int d = 0; d < rank; d++)
    t->dims[d] = dims[d], n *= (uint64_t)dims[d];
  t->bytes = n * dtype_size(dt);
  free(c->data[s]);
  c->data[s] = malloc((size_t)t->bytes + 8);
  memset(c->data[s], 0x7f, (size_t)t->bytes); /* garbage the kernel must overwrite */
  c->task.tensors[s] = (uint32_t)s;
}

static void mc_free(mcase *c) {
  for (int s = 0; s < 4; s++)
    free(c->data[s]);
}

static omrt_status mc_check(mcase *c) { return rt_kernels[OM_TASK_MATMUL].check(&c->m, 0, &c->task); }

static int32_t bits(float f) {
  int32_t b;
  memcpy(&b, &f, 4);
  return b;
}

/* --- data and the reference */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static float frand(void) { /* [-1, 1) */
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static double get(const void *p, int dt, size_t i) {
  return dt == DT_FLOAT16 ? half_to_float(((const uint16_t *)p)[i]) : ((const float *)p)[i];
}

static void fill(void *p, int dt, uint64_t n) {
  for (uint64_t i = 0; i < n; i++) {
    float v = frand();
    if (dt == DT_FLOAT16)
      ((uint16_t *)p)[i] = float_to_half(v);
    else
      ((float *)p)[i] = v;
  }
}

static uint64_t count(const om_tensor *t) {
  uint64_t n = 1;
  for (uint32_t d = 0; d < t->rank; d++)
    n *= (uint64_t)t->dims[d];
  return n;
}

/* Index into t (dims right-aligned against `full` of rank fr, size-1 dims
 * broadcast) of the multi-index idx over `full`. */
static size_t bcast_index(const om_tensor *t, int tr, const int64_t *tdims, int fr, const int64_t *idx) {
  size_t at = 0;
  for (int d = 0; d < tr; d++) {
    int64_t i = idx[fr - tr + d];
    at = at * (size_t)tdims[d] + (size_t)(tdims[d] == 1 ? 0 : i);
  }
  (void)t;
  return at;
}

/* ref[y elements] and, per element, the scale of its error bound. */
static void reference(const mcase *c, int ta, int tb, double alpha, double beta, int act, double lo,
                      double hi, double *ref, double *scale) {
  const om_tensor *A = &c->t[OM_MATMUL_T_A], *B = &c->t[OM_MATMUL_T_B], *Y = &c->t[OM_MATMUL_T_Y];
  const om_tensor *C = c->task.tensors[OM_MATMUL_T_C] == OM_NONE ? NULL : &c->t[OM_MATMUL_T_C];
  int ra = (int)A->rank, rb = (int)B->rank;
  /* A as [abat..., M, K] in storage order, B as [bbat..., K|N ...] */
  int64_t M = ra >= 2 ? A->dims[ra - 2 + ta] : 1, K = ra >= 2 ? A->dims[ra - 1 - ta] : A->dims[0];
  int64_t N = rb >= 2 ? B->dims[rb - 1 - tb] : 1;
  int abat = ra >= 2 ? ra - 2 : 0, bbat = rb >= 2 ? rb - 2 : 0, nb = abat > bbat ? abat : bbat;
  int64_t bdims[MAX_RANK];
  for (int d = 0; d < nb; d++) {
    int64_t da = d - (nb - abat) >= 0 ? A->dims[d - (nb - abat)] : 1;
    int64_t db = d - (nb - bbat) >= 0 ? B->dims[d - (nb - bbat)] : 1;
    bdims[d] = da == 1 ? db : da;
  }
  int64_t batches = 1;
  for (int d = 0; d < nb; d++)
    batches *= bdims[d];
  for (int64_t bt = 0; bt < batches; bt++) {
    int64_t idx[MAX_RANK], r = bt;
    for (int d = nb - 1; d >= 0; d--)
      idx[d] = r % bdims[d], r /= bdims[d];
    size_t ab = bcast_index(A, abat, A->dims, nb, idx), bb = bcast_index(B, bbat, B->dims, nb, idx);
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++) {
        double acc = 0, mag = 0;
        for (int64_t k = 0; k < K; k++) {
          size_t ai = ab * (size_t)(M * K) + (size_t)(ta ? k * M + m : m * K + k);
          size_t bi = bb * (size_t)(K * N) + (size_t)(rb < 2 ? k : tb ? n * K + k : k * N + n);
          double p =
              get(c->data[OM_MATMUL_T_A], (int)A->dtype, ai) * get(c->data[OM_MATMUL_T_B], (int)B->dtype, bi);
          acc += p, mag += fabs(p);
        }
        size_t yi = (size_t)((bt * M + m) * N + n);
        double v = alpha * acc;
        mag *= fabs(alpha);
        if (C) {
          int64_t yidx[MAX_RANK], rr = (int64_t)yi;
          for (int d = (int)Y->rank - 1; d >= 0; d--)
            yidx[d] = rr % Y->dims[d], rr /= Y->dims[d];
          double cv = beta * get(c->data[OM_MATMUL_T_C], (int)C->dtype,
                                 bcast_index(C, (int)C->rank, C->dims, (int)Y->rank, yidx));
          v += cv, mag += fabs(cv);
        }
        if (act == OM_ACT_RELU) v = v > 0 ? v : 0;
        if (act == OM_ACT_CLIP) v = v < lo ? lo : v > hi ? hi : v;
        ref[yi] = v, scale[yi] = mag;
      }
  }
}

/* --- one case */

typedef struct spec {
  const char *what;
  int ra, rb, rc; /* rc < 0: no c */
  int64_t ad[MAX_RANK], bd[MAX_RANK], cd[MAX_RANK], yd[MAX_RANK];
  int ry, ta, tb;
  float alpha, beta;
  int act;
  int tm, tn, tk;
} spec;

static void run_tile(void (*tile)(const rt_mm_geom *, int64_t, int64_t, int64_t, rt_core *), const mcase *c,
                     rt_core *core) {
  rt_args a;
  memset(&a, 0, sizeof a);
  for (int s = 0; s < 4; s++)
    if (c->task.tensors[s] != OM_NONE) a.data[s] = c->data[s], a.desc[s] = &c->t[s];
  rt_mm_geom g;
  rt_mm_geom_init(&c->task, &a, &g);
  for (int64_t bt = 0; bt < g.batch; bt++)
    for (int64_t mt = 0; mt < g.mtiles; mt++)
      for (int64_t nt = 0; nt < g.ntiles; nt++)
        tile(&g, bt, mt, nt, core);
}

static int compare(const mcase *c, const double *ref, const double *scale, const char *what,
                   const char *path) {
  const om_tensor *Y = &c->t[OM_MATMUL_T_Y];
  int yt = (int)Y->dtype, bad = 0;
  double f32_rel = 4e-6 * (double)(Y->rank ? 1 : 1); /* f32 summation, per unit of sum |terms| */
  for (uint64_t i = 0; i < count(Y); i++) {
    double got = get(c->data[OM_MATMUL_T_Y], yt, i);
    double tol = f32_rel * scale[i] + 1e-7 +
                 (yt == DT_FLOAT16 ? fabs(ref[i]) * 0x1p-11 + 0x1p-24 : fabs(ref[i]) * 0x1p-24);
    if (!(fabs(got - ref[i]) <= tol)) {
      if (bad++ < 3)
        test_note("  %s [%s]: y[%llu] = %.9g, reference %.9g (tol %.3g)", what, path, (unsigned long long)i,
                  got, ref[i], tol);
    }
  }
  return bad == 0;
}

static void one_case(const spec *sp, int opdt, int cdt, int ydt, uint32_t bd) {
  mcase c;
  mc_setup(&c);
  mc_set(&c, 0, opdt, sp->ra, sp->ad);
  mc_set(&c, 1, opdt, sp->rb, sp->bd);
  if (sp->rc >= 0) mc_set(&c, 2, cdt, sp->rc, sp->cd);
  mc_set(&c, 3, ydt, sp->ry, sp->yd);
  int32_t *q = c.task.params;
  q[OM_MATMUL_P_TRANS_A] = sp->ta, q[OM_MATMUL_P_TRANS_B] = sp->tb, q[OM_MATMUL_P_ALPHA] = bits(sp->alpha),
  q[OM_MATMUL_P_BETA] = sp->rc >= 0 ? bits(sp->beta) : 0, q[OM_MATMUL_P_ACT] = sp->act;
  float lo = -0.25f, hi = 0.5f;
  if (sp->act == OM_ACT_CLIP) q[OM_MATMUL_P_CLIP_MIN] = bits(lo), q[OM_MATMUL_P_CLIP_MAX] = bits(hi);
  q[OM_MATMUL_P_TILE_M] = sp->tm, q[OM_MATMUL_P_TILE_N] = sp->tn, q[OM_MATMUL_P_TILE_K] = sp->tk;
  c.task.block_dim = bd;
  for (int s = 0; s < 3; s++)
    if (c.task.tensors[s] != OM_NONE) fill(c.data[s], (int)c.t[s].dtype, count(&c.t[s]));
  char what[160];
  snprintf(what, sizeof what, "%s (%s operands, c %s, y %s, block_dim %u)", sp->what, dtype_name(opdt),
           dtype_name(cdt), dtype_name(ydt), bd);
  omrt_status st = mc_check(&c);
  CHECK_EQ_INT(st, OMRT_OK);
  if (st != OMRT_OK) {
    test_note("  %s: %s", what, omrt_last_error());
    mc_free(&c);
    return;
  }
  uint64_t ny = count(&c.t[OM_MATMUL_T_Y]);
  double *ref = malloc(ny * sizeof *ref), *scale = malloc(ny * sizeof *scale);
  reference(&c, sp->ta, sp->tb, sp->alpha, sp->rc >= 0 ? sp->beta : 0, sp->act, lo, hi, ref, scale);

  size_t l0a = 2 * (size_t)c.def.l0a_bytes, l0b = 2 * (size_t)c.def.l0b_bytes, l0c = c.def.l0c_bytes;
  rt_core core = {.l0a = aligned_alloc(64, l0a),
                  .l0b = aligned_alloc(64, l0b),
                  .l0c = aligned_alloc(64, l0c),
                  .l0a_bytes = l0a,
                  .l0b_bytes = l0b,
                  .l0c_bytes = l0c};
  /* the task's run function, block by block (the path rt_cpu() chose) */
  rt_args a;
  memset(&a, 0, sizeof a);
  for (int s = 0; s < 4; s++)
    if (c.task.tensors[s] != OM_NONE) a.data[s] = c.data[s], a.desc[s] = &c.t[s];
  for (uint32_t b = bd; b-- > 0;)
    rt_kernels[OM_TASK_MATMUL].run(&c.task, &a, b, &core);
  CHECK(compare(&c, ref, scale, what, rt_cpu()->name));
  /* each path's tile directly */
  memset(c.data[OM_MATMUL_T_Y], 0x7f, (size_t)c.t[OM_MATMUL_T_Y].bytes);
  run_tile(rt_matmul_tile, &c, &core);
  CHECK(compare(&c, ref, scale, what, "portable tile"));
#if defined(__x86_64__) && defined(__GNUC__)
  if (rt_cpu()->matmul_tile) {
    memset(c.data[OM_MATMUL_T_Y], 0x7f, (size_t)c.t[OM_MATMUL_T_Y].bytes);
    run_tile(rt_matmul_tile_x86, &c, &core);
    CHECK(compare(&c, ref, scale, what, "x86 tile"));
  }
#endif
  free(core.l0a), free(core.l0b), free(core.l0c);
  free(ref), free(scale);
  mc_free(&c);
}

static const spec SPECS[] = {
    {"2-D [2,3]x[3,4]", 2, 2, -1, {2, 3}, {3, 4}, {0}, {2, 4}, 2, 0, 0, 1, 0, 0, 16, 16, 16},
    {"1-D x 1-D [5]x[5]", 1, 1, -1, {5}, {5}, {0}, {0}, 0, 0, 0, 1, 0, 0, 16, 16, 16},
    {"1-D x 3-D [7]x[2,7,5]", 1, 3, -1, {7}, {2, 7, 5}, {0}, {2, 5}, 2, 0, 0, 1, 0, 0, 16, 16, 16},
    {"4-D x 1-D [2,3,4,7]x[7]", 4, 1, -1, {2, 3, 4, 7}, {7}, {0}, {2, 3, 4}, 3, 0, 0, 1, 0, 0, 16, 16, 16},
    {"broadcast [2,1,4,8,16]x[3,1,16,5]",
     5,
     4,
     -1,
     {2, 1, 4, 8, 16},
     {3, 1, 16, 5},
     {0},
     {2, 3, 4, 8, 5},
     5,
     0,
     0,
     1,
     0,
     0,
     16,
     16,
     16},
    {"broadcast [4,9]x[3,2,9,7]",
     2,
     4,
     -1,
     {4, 9},
     {3, 2, 9, 7},
     {0},
     {3, 2, 4, 7},
     4,
     0,
     0,
     1,
     0,
     0,
     16,
     16,
     16},
    {"odd [37,53]x[53,29], K chunks",
     2,
     2,
     -1,
     {37, 53},
     {53, 29},
     {0},
     {37, 29},
     2,
     0,
     0,
     1,
     0,
     0,
     16,
     16,
     16},
    {"odd [37,53]x[53,29], one tile",
     2,
     2,
     -1,
     {37, 53},
     {53, 29},
     {0},
     {37, 29},
     2,
     0,
     0,
     1,
     0,
     0,
     48,
     32,
     64},
    {"[13,200]x[200,45] tile_k 64",
     2,
     2,
     -1,
     {13, 200},
     {200, 45},
     {0},
     {13, 45},
     2,
     0,
     0,
     1,
     0,
     0,
     16,
     32,
     64},
    {"gemm transA [6,11]^T x [6,19]",
     2,
     2,
     -1,
     {6, 11},
     {6, 19},
     {0},
     {11, 19},
     2,
     1,
     0,
     1,
     0,
     0,
     16,
     16,
     16},
    {"gemm transB [11,6] x [19,6]^T",
     2,
     2,
     -1,
     {11, 6},
     {19, 6},
     {0},
     {11, 19},
     2,
     0,
     1,
     1,
     0,
     0,
     16,
     16,
     16},
    {"gemm both trans, alpha 0.5, beta 2, c [N]",
     2,
     2,
     1,
     {21, 17},
     {33, 21},
     {33},
     {17, 33},
     2,
     1,
     1,
     0.5f,
     2.0f,
     0,
     16,
     16,
     16},
    {"gemm c [M,1]", 2, 2, 2, {17, 21}, {21, 33}, {17, 1}, {17, 33}, 2, 0, 0, 1, 1, 0, 16, 32, 16},
    {"gemm c scalar [], relu",
     2,
     2,
     0,
     {17, 21},
     {21, 33},
     {0},
     {17, 33},
     2,
     0,
     0,
     1.5f,
     -0.5f,
     OM_ACT_RELU,
     32,
     16,
     32},
    {"gemm c [M,N], clip",
     2,
     2,
     2,
     {17, 21},
     {21, 33},
     {17, 33},
     {17, 33},
     2,
     0,
     0,
     1,
     1,
     OM_ACT_CLIP,
     16,
     16,
     32},
    {"batched c [2,1,N] + trans_b",
     3,
     3,
     3,
     {2, 9, 20},
     {2, 40, 20},
     {2, 1, 40},
     {2, 9, 40},
     3,
     0,
     1,
     1,
     1,
     0,
     16,
     32,
     16},
    {"[3,100,70]x[70,130]",
     3,
     2,
     -1,
     {3, 100, 70},
     {70, 130},
     {0},
     {3, 100, 130},
     3,
     0,
     0,
     1,
     0,
     0,
     64,
     64,
     64},
    {"[130,300]x[300,70] big tiles",
     2,
     2,
     1,
     {130, 300},
     {300, 70},
     {70},
     {130, 70},
     2,
     0,
     0,
     1,
     1,
     0,
     144,
     80,
     112},
};

static void kernel_cases(void) {
  static const int dts[][3] = {{DT_FLOAT32, DT_FLOAT32, DT_FLOAT32},
                               {DT_FLOAT16, DT_FLOAT16, DT_FLOAT16},
                               {DT_FLOAT16, DT_FLOAT32, DT_FLOAT32},
                               {DT_FLOAT32, DT_FLOAT16, DT_FLOAT16}};
  for (size_t i = 0; i < sizeof SPECS / sizeof *SPECS; i++)
    for (size_t k = 0; k < sizeof dts / sizeof *dts; k++) {
      const spec *sp = &SPECS[i];
      /* tiles = batch * mtiles * ntiles; try 1 block, 2, and one per tile */
      int64_t M = sp->ra >= 2 ? sp->ad[sp->ra - 2 + sp->ta] : 1,
              N = sp->rb >= 2 ? sp->bd[sp->rb - 1 - sp->tb] : 1;
      int nbd = sp->ry - (sp->ra >= 2) - (sp->rb >= 2);
      uint64_t tiles = (uint64_t)((M + sp->tm - 1) / sp->tm) * (uint64_t)((N + sp->tn - 1) / sp->tn);
      for (int d = 0; d < nbd; d++)
        tiles *= (uint64_t)sp->yd[d];
      uint32_t bds[3] = {1, tiles >= 2 ? 2 : 1, (uint32_t)(tiles < 65535 ? tiles : 65535)};
      for (int b = 0; b < 3; b++)
        if (b == 0 || bds[b] != bds[b - 1]) one_case(sp, dts[k][0], dts[k][1], dts[k][2], bds[b]);
    }
}

/* --- the check */

static void valid(mcase *c) {
  mc_setup(c);
  mc_set(c, 0, DT_FLOAT32, 3, (int64_t[]){2, 5, 7});
  mc_set(c, 1, DT_FLOAT32, 2, (int64_t[]){7, 9});
  mc_set(c, 2, DT_FLOAT32, 1, (int64_t[]){9});
  mc_set(c, 3, DT_FLOAT32, 3, (int64_t[]){2, 5, 9});
  int32_t *q = c->task.params;
  q[OM_MATMUL_P_ALPHA] = bits(1.0f), q[OM_MATMUL_P_BETA] = bits(1.0f),
  q[OM_MATMUL_P_TILE_M] = q[OM_MATMUL_P_TILE_N] = q[OM_MATMUL_P_TILE_K] = 16;
}

static void expect_reject(mcase *c, const char *what, const char *want) {
  omrt_status s = mc_check(c);
  const char *msg = omrt_last_error();
  int ok = s == OMRT_ERR_FORMAT && msg && strstr(msg, "test_task") && strstr(msg, want);
  test_check(ok, __FILE__, __LINE__, what);
  if (!ok) test_note("  %s: status %d, message '%s'", what, s, msg ? msg : "(null)");
  mc_free(c);
}

static void check_cases(void) {
  mcase c;
  valid(&c);
  CHECK_EQ_INT(mc_check(&c), OMRT_OK);
  mc_free(&c);
  valid(&c), c.task.ntensors = 3, expect_reject(&c, "ntensors", "ntensors");
  valid(&c), c.task.tensors[OM_MATMUL_T_A] = OM_NONE, expect_reject(&c, "a missing", "a");
  valid(&c), c.t[OM_MATMUL_T_B].dtype = DT_FLOAT16, c.t[OM_MATMUL_T_B].bytes /= 2,
             expect_reject(&c, "a/b dtypes", "b dtype");
  valid(&c), c.t[OM_MATMUL_T_A].dtype = DT_INT32, expect_reject(&c, "int a", "dtype");
  valid(&c), c.t[OM_MATMUL_T_Y].layout = LAYOUT_NC1HWC0, expect_reject(&c, "y layout", "layout");
  valid(&c), c.t[OM_MATMUL_T_Y].bytes += 4, expect_reject(&c, "y bytes", "bytes");
  valid(&c), mc_set(&c, 1, DT_FLOAT32, 2, (int64_t[]){8, 9}), expect_reject(&c, "K mismatch", "K");
  valid(&c), mc_set(&c, 3, DT_FLOAT32, 3, (int64_t[]){2, 5, 8}), expect_reject(&c, "y N", "matrix dims");
  valid(&c), mc_set(&c, 3, DT_FLOAT32, 2, (int64_t[]){5, 9}), expect_reject(&c, "y rank", "y rank");
  valid(&c), mc_set(&c, 1, DT_FLOAT32, 3, (int64_t[]){3, 7, 9}), expect_reject(&c, "batch", "batch dim");
  valid(&c), mc_set(&c, 3, DT_FLOAT32, 3, (int64_t[]){1, 5, 9}), expect_reject(&c, "y batch", "batch dim");
  valid(&c), mc_set(&c, 2, DT_FLOAT32, 1, (int64_t[]){4}), expect_reject(&c, "c broadcast", "c dims");
  valid(&c), mc_set(&c, 2, DT_FLOAT32, 4, (int64_t[]){1, 2, 5, 9}), expect_reject(&c, "c rank", "c rank");
  valid(&c), c.task.params[OM_MATMUL_P_TRANS_A] = 2, expect_reject(&c, "trans_a 2", "trans_a");
  valid(&c), mc_set(&c, 1, DT_FLOAT32, 1, (int64_t[]){7}), mc_set(&c, 3, DT_FLOAT32, 2, (int64_t[]){2, 5}),
      c.task.params[OM_MATMUL_P_TRANS_B] = 1, expect_reject(&c, "trans_b on 1-D", "trans_b");
  valid(&c), c.task.params[OM_MATMUL_P_ALPHA] = bits(INFINITY), expect_reject(&c, "alpha inf", "alpha");
  valid(&c), c.task.params[OM_MATMUL_P_BETA] = bits(NAN), expect_reject(&c, "beta nan", "beta");
  valid(&c), c.task.tensors[OM_MATMUL_T_C] = OM_NONE, expect_reject(&c, "beta without c", "without c");
  valid(&c), c.task.params[OM_MATMUL_P_ACT] = 3, expect_reject(&c, "act", "act");
  valid(&c), c.task.params[OM_MATMUL_P_ACT] = OM_ACT_CLIP, c.task.params[OM_MATMUL_P_CLIP_MIN] = bits(2),
             c.task.params[OM_MATMUL_P_CLIP_MAX] = bits(1), expect_reject(&c, "clip order", "clip_min");
  valid(&c), c.task.params[OM_MATMUL_P_CLIP_MIN] = 1,
             expect_reject(&c, "clip param without clip", test_param_ref(OM_MATMUL_P_CLIP_MIN));
  valid(&c), c.task.params[OM_MATMUL_P_TILE_M] = 24, expect_reject(&c, "tile_m 24", "tile_m");
  valid(&c), c.task.params[OM_MATMUL_P_TILE_K] = 0, expect_reject(&c, "tile_k 0", "tile_k");
  valid(&c), c.task.params[OM_MATMUL_P_TILE_N] = 65552, expect_reject(&c, "tile_n too big", "tile_n");
  valid(&c), c.task.params[OM_MATMUL_P_TILE_M] = 2048, c.task.params[OM_MATMUL_P_TILE_K] = 16,
             expect_reject(&c, "L0A", "L0A");
  valid(&c), c.task.params[OM_MATMUL_P_TILE_N] = 2048, c.task.params[OM_MATMUL_P_TILE_K] = 16,
             expect_reject(&c, "L0B", "L0B");
  valid(&c), c.task.params[OM_MATMUL_P_TILE_M] = 1024, c.task.params[OM_MATMUL_P_TILE_N] = 1024,
             expect_reject(&c, "L0C", "L0C");
  valid(&c), c.task.params[OM_MATMUL_NPARAMS + 2] = 1, expect_reject(&c, "unused param", "unused");
  valid(&c), c.task.block_dim = 3, expect_reject(&c, "block_dim > tiles", "block_dim");
  valid(&c), mc_set(&c, 0, DT_FLOAT32, 3, (int64_t[]){2, 5, 0}),
      mc_set(&c, 1, DT_FLOAT32, 2, (int64_t[]){0, 9}), expect_reject(&c, "K = 0", "K 0");
}

int main(void) {
  kernel_cases();
  check_cases();
  return test_summary("test_matmul");
}
