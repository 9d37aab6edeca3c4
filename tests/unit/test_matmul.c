/* test_matmul.c - the MATMUL task kind (runtime/kernels_matmul*.c) against a
 * naive reference, and its load-time check.
 *
 * Kernel cases cover ONNX MatMul and Gemm: 2-D, 1-D on either side (1-D x
 * 1-D gives a scalar), batch dims that broadcast ([2,1,4,8,16] x
 * [3,1,16,5]), trans_a / trans_b, alpha and beta with c of every broadcast
 * shape, relu and clip, M, N and K that are not multiples of 16 (and row
 * counts that are not multiples of the micro-kernel's 6), skinny M (one
 * to four rows), tiles small enough for several K chunks and several tiles
 * per batch, and f32 / f16 operands with f32 / f16 c and y; then what the
 * compiler now writes: B as FRACTAL_NZ (packed here from the ND data, per
 * batch), a bias [N], and batch dims folded into the rows (fold, a shared
 * B: torch's [64,1,256] x [256,768] in-projection among them). Each case runs
 * through the task's run function (the path rt_cpu() chose; ctest runs this
 * file again with OMRT_PORTABLE=1 and with OMRT_AVX512=0; numbered as a
 * task run, so that a core's later tiles find their A rows staged in L1)
 * and, directly, through the portable tile and, when the host has
 * AVX2/FMA/F16C, the x86 tile, with the core's L1 (A staged whole there)
 * and without (A staged per K chunk in L0A). Tiles of 7 rows or more run
 * the AVX-512 hosts' MATMUL kernel in even groups of 7 to 12 rows (13 rows:
 * 7 + a 6-row group; 16: 8 + 8; 37: 10 + 9 + 9 + 9), on pairs of n blocks
 * and on an odd last block. The reference is an independent double-precision loop over the
 * ONNX definition with numpy broadcasting. Operands are generated
 * representable in their dtype, so an f16 case's only error is f32
 * summation plus the final rounding to y's dtype.
 * Then the transcendental epilogue acts give the same bits on every path.
 * The load-time check: test_matmul_check.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fp16.h"
#include "omrt.h"
#include "runtime/kernels.h"
#include "runtime/kernels_matmul.h"
#include "common/matmul_geom.h"
#include "mcase.h"
#include "support.h"

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
/* The operand in slot s (ND data) transposed by perm (its view's dim d is
 * stored dim perm[d]) into a new C-order buffer *data_out, described by
 * *view_out. */
static void materialise(const mcase *c, int s, const void *src, const int *perm, om_tensor *view_out,
                        void **data_out) {
  const om_tensor *t = &c->t[s];
  const size_t es = dtype_size((int)t->dtype);
  int64_t st[MAX_RANK], stride = 1;
  *view_out = *t;
  for (int d = (int)t->rank - 1; d >= 0; d--)
    st[d] = stride, stride *= t->dims[d];
  for (uint32_t d = 0; d < t->rank; d++)
    view_out->dims[d] = t->dims[perm[d]];
  uint8_t *out = malloc((size_t)count(t) * es + 1);
  for (uint64_t i = 0; i < count(t); i++) {
    uint64_t rest = i, at = 0;
    for (int d = (int)t->rank - 1; d >= 0; d--) {
      at += rest % (uint64_t)view_out->dims[d] * (uint64_t)st[perm[d]];
      rest /= (uint64_t)view_out->dims[d];
    }
    memcpy(out + i * es, (const uint8_t *)src + at * es, es);
  }
  *data_out = out;
}

static void reference(const mcase *c, const om_tensor *A, const void *adata, const om_tensor *B,
                      const void *bdata, int ta, int tb, double alpha, double beta, int act, double lo,
                      double hi, double *ref, double *scale) {
  const om_tensor *Y = &c->t[OM_MATMUL_T_Y];
  const om_tensor *C = c->task.tensors[OM_MATMUL_T_C] == OM_NONE ? NULL : &c->t[OM_MATMUL_T_C];
  const float *bias = c->task.tensors[OM_MATMUL_T_BIAS] == OM_NONE ? NULL : c->data[OM_MATMUL_T_BIAS];
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
          double p = get(adata, (int)A->dtype, ai) * get(bdata, (int)B->dtype, bi);
          acc += p, mag += fabs(p);
        }
        size_t yi = (size_t)((bt * M + m) * N + n);
        double v = alpha * acc;
        mag *= fabs(alpha);
        if (bias) v += bias[n], mag += fabs(bias[n]);
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
        if (act >= OM_ACT_GELU) {
          /* slopes below 1.2; the f32 approximations' own error within
           * 1e-6 * (1 + |v|), as 4e-6 (compare's f32_rel) * 0.25 * it */
          mag = 1.2 * mag + 0.25 * (1 + fabs(v));
          v = act == OM_ACT_GELU        ? 0.5 * v * (1 + erf(v / sqrt(2)))
              : act == OM_ACT_GELU_TANH ? 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)))
                                        : v / (1 + exp(-v));
        }
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
  int nz, bias, fold;             /* b as FRACTAL_NZ; a bias [N]; y's batch dims folded into the rows */
  int pa[MAX_RANK], pb[MAX_RANK]; /* permutations (ad, bd as stored; all 0: none) */
} spec;

static int has_perm(const int *p, int rank) {
  for (int d = 0; d < rank; d++)
    if (p[d]) return 1;
  return 0;
}

static void run_tile(void (*tile)(const rt_mm_geom *, int64_t, int64_t, int64_t, rt_core *), const mcase *c,
                     rt_core *core) {
  rt_args a;
  memset(&a, 0, sizeof a);
  for (int s = 0; s < OM_MATMUL_NTENSORS; s++)
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
  q[OM_MATMUL_P_FOLD] = sp->fold;
  q[OM_MATMUL_P_PERM_A] = has_perm(sp->pa, sp->ra) ? mm_perm_encode(sp->ra, sp->pa) : 0;
  q[OM_MATMUL_P_PERM_B] = has_perm(sp->pb, sp->rb) ? mm_perm_encode(sp->rb, sp->pb) : 0;
  c.task.block_dim = bd;
  if (sp->bias) mc_set(&c, OM_MATMUL_T_BIAS, DT_FLOAT32, 1, (int64_t[]){sp->yd[sp->ry - 1]});
  for (int s = 0; s < OM_MATMUL_NTENSORS; s++)
    if (s != OM_MATMUL_T_Y && c.task.tensors[s] != OM_NONE)
      fill(c.data[s], (int)c.t[s].dtype, count(&c.t[s]));
  if (sp->nz) mc_to_nz(&c);
  char what[200];
  snprintf(what, sizeof what, "%s (%s operands%s, c %s, y %s, block_dim %u)", sp->what, dtype_name(opdt),
           sp->nz ? ", b FRACTAL_NZ" : "", dtype_name(cdt), dtype_name(ydt), bd);
  omrt_status st = mc_check(&c);
  CHECK_EQ_INT(st, OMRT_OK);
  if (st != OMRT_OK) {
    test_note("  %s: %s", what, omrt_last_error());
    mc_free(&c);
    return;
  }
  uint64_t ny = count(&c.t[OM_MATMUL_T_Y]);
  double *ref = malloc(ny * sizeof *ref), *scale = malloc(ny * sizeof *scale);
  om_tensor va = c.t[OM_MATMUL_T_A], vb = c.t[OM_MATMUL_T_B];
  void *adata = c.data[OM_MATMUL_T_A], *bdata = c.b_nd ? c.b_nd : c.data[OM_MATMUL_T_B];
  if (has_perm(sp->pa, sp->ra)) materialise(&c, OM_MATMUL_T_A, adata, sp->pa, &va, &adata);
  if (has_perm(sp->pb, sp->rb)) materialise(&c, OM_MATMUL_T_B, bdata, sp->pb, &vb, &bdata);
  reference(&c, &va, adata, &vb, bdata, sp->ta, sp->tb, sp->alpha, sp->rc >= 0 ? sp->beta : 0, sp->act, lo,
            hi, ref, scale);
  if (adata != c.data[OM_MATMUL_T_A]) free(adata);
  if (bdata != c.data[OM_MATMUL_T_B] && bdata != c.b_nd) free(bdata);

  size_t l0a = 2 * (size_t)c.def.l0a_bytes, l0b = 2 * (size_t)c.def.l0b_bytes, l0c = c.def.l0c_bytes;
  size_t l1 = c.def.l1_bytes;
  static uint64_t runs; /* a task run number per case, as the executor numbers them (rt_l1_holds) */
  rt_core core = {.l1 = aligned_alloc(64, l1),
                  .l0a = aligned_alloc(64, l0a),
                  .l0b = aligned_alloc(64, l0b),
                  .l0c = aligned_alloc(64, l0c),
                  .l1_bytes = l1,
                  .l0a_bytes = l0a,
                  .l0b_bytes = l0b,
                  .l0c_bytes = l0c,
                  .run = ++runs};
  /* the task's run function, block by block (the path rt_cpu() chose; a
   * core's blocks after the first may find their A rows staged in L1) */
  rt_args a;
  memset(&a, 0, sizeof a);
  for (int s = 0; s < OM_MATMUL_NTENSORS; s++)
    if (c.task.tensors[s] != OM_NONE) a.data[s] = c.data[s], a.desc[s] = &c.t[s];
  for (uint32_t b = bd; b-- > 0;)
    rt_kernels[OM_TASK_MATMUL].run(&c.task, &a, b, &core);
  CHECK(compare(&c, ref, scale, what, rt_cpu()->name));
  /* each path's tile directly (outside a task run: nothing kept in L1) */
  core.run = 0;
  memset(c.data[OM_MATMUL_T_Y], 0x7f, (size_t)c.t[OM_MATMUL_T_Y].bytes);
  run_tile(rt_matmul_tile, &c, &core);
  CHECK(compare(&c, ref, scale, what, "portable tile"));
#if defined(__x86_64__) && defined(__GNUC__)
  if (rt_cpu()->matmul_tile) {
    memset(c.data[OM_MATMUL_T_Y], 0x7f, (size_t)c.t[OM_MATMUL_T_Y].bytes);
    run_tile(rt_matmul_tile_x86, &c, &core);
    CHECK(compare(&c, ref, scale, what, "x86 tile"));
    /* and with no L1: A staged a K chunk at a time in L0A */
    core.l1_bytes = 0;
    memset(c.data[OM_MATMUL_T_Y], 0x7f, (size_t)c.t[OM_MATMUL_T_Y].bytes);
    run_tile(rt_matmul_tile_x86, &c, &core);
    CHECK(compare(&c, ref, scale, what, "x86 tile, A staged per chunk"));
  }
#endif
  free(core.l1), free(core.l0a), free(core.l0b), free(core.l0c);
  free(ref), free(scale);
  mc_free(&c);
}

static const spec SPECS[] = {
    {.what = "2-D [2,3]x[3,4]",
     .ra = 2,
     .rb = 2,
     .rc = -1,
     .ad = {2, 3},
     .bd = {3, 4},
     .yd = {2, 4},
     .ry = 2,
     .alpha = 1,
     .tm = 16,
     .tn = 16,
     .tk = 16},
    {.what = "1-D x 1-D [5]x[5]",
     .ra = 1,
     .rb = 1,
     .rc = -1,
     .ad = {5},
     .bd = {5},
     .ry = 0,
     .alpha = 1,
     .tm = 16,
     .tn = 16,
     .tk = 16},
    {.what = "1-D x 3-D [7]x[2,7,5]",
     .ra = 1,
     .rb = 3,
     .rc = -1,
     .ad = {7},
     .bd = {2, 7, 5},
     .yd = {2, 5},
     .ry = 2,
     .alpha = 1,
     .tm = 16,
     .tn = 16,
     .tk = 16},
    {.what = "4-D x 1-D [2,3,4,7]x[7]",
     .ra = 4,
     .rb = 1,
     .rc = -1,
     .ad = {2, 3, 4, 7},
     .bd = {7},
     .yd = {2, 3, 4},
     .ry = 3,
     .alpha = 1,
     .tm = 16,
     .tn = 16,
     .tk = 16},
    {.what = "broadcast [2,1,4,8,16]x[3,1,16,5]",
     .ra = 5,
     .rb = 4,
     .rc = -1,
     .ad = {2, 1, 4, 8, 16},
     .bd = {3, 1, 16, 5},
     .yd = {2, 3, 4, 8, 5},
     .ry = 5,
     .alpha = 1,
     .tm = 16,
     .tn = 16,
     .tk = 16},
    {.what = "broadcast [4,9]x[3,2,9,7]",
     .ra = 2,
     .rb = 4,
     .rc = -1,
     .ad = {4, 9},
     .bd = {3, 2, 9, 7},
     .yd = {3, 2, 4, 7},
     .ry = 4,
     .alpha = 1,
     .tm = 16,
     .tn = 16,
     .tk = 16},
    {.what = "odd [37,53]x[53,29], K chunks",
     .ra = 2,
     .rb = 2,
     .rc = -1,
     .ad = {37, 53},
     .bd = {53, 29},
     .yd = {37, 29},
     .ry = 2,
     .alpha = 1,
     .tm = 16,
     .tn = 16,
     .tk = 16},
    {.what = "odd [37,53]x[53,29], one tile",
     .ra = 2,
     .rb = 2,
     .rc = -1,
     .ad = {37, 53},
     .bd = {53, 29},
     .yd = {37, 29},
     .ry = 2,
     .alpha = 1,
     .tm = 48,
     .tn = 32,
     .tk = 64},
    {.what = "[13,200]x[200,45] tile_k 64",
     .ra = 2,
     .rb = 2,
     .rc = -1,
     .ad = {13, 200},
     .bd = {200, 45},
     .yd = {13, 45},
     .ry = 2,
     .alpha = 1,
     .tm = 16,
     .tn = 32,
     .tk = 64},
    {.what = "gemm transA [6,11]^T x [6,19]",
     .ra = 2,
     .rb = 2,
     .rc = -1,
     .ad = {6, 11},
     .bd = {6, 19},
     .yd = {11, 19},
     .ry = 2,
     .ta = 1,
     .alpha = 1,
     .tm = 16,
     .tn = 16,
     .tk = 16},
    {.what = "gemm transB [11,6] x [19,6]^T",
     .ra = 2,
     .rb = 2,
     .rc = -1,
     .ad = {11, 6},
     .bd = {19, 6},
     .yd = {11, 19},
     .ry = 2,
     .tb = 1,
     .alpha = 1,
     .tm = 16,
     .tn = 16,
     .tk = 16},
    {.what = "gemm both trans, alpha 0.5, beta 2, c [N]",
     .ra = 2,
     .rb = 2,
     .rc = 1,
     .ad = {21, 17},
     .bd = {33, 21},
     .cd = {33},
     .yd = {17, 33},
     .ry = 2,
     .ta = 1,
     .tb = 1,
     .alpha = 0.5f,
     .beta = 2.0f,
     .tm = 16,
     .tn = 16,
     .tk = 16},
    {.what = "gemm c [M,1]",
     .ra = 2,
     .rb = 2,
     .rc = 2,
     .ad = {17, 21},
     .bd = {21, 33},
     .cd = {17, 1},
     .yd = {17, 33},
     .ry = 2,
     .alpha = 1,
     .beta = 1,
     .tm = 16,
     .tn = 32,
     .tk = 16},
    {.what = "gemm c scalar [], relu",
     .ra = 2,
     .rb = 2,
     .rc = 0,
     .ad = {17, 21},
     .bd = {21, 33},
     .yd = {17, 33},
     .ry = 2,
     .alpha = 1.5f,
     .beta = -0.5f,
     .act = OM_ACT_RELU,
     .tm = 32,
     .tn = 16,
     .tk = 32},
    {.what = "gemm c [M,N], clip",
     .ra = 2,
     .rb = 2,
     .rc = 2,
     .ad = {17, 21},
     .bd = {21, 33},
     .cd = {17, 33},
     .yd = {17, 33},
     .ry = 2,
     .alpha = 1,
     .beta = 1,
     .act = OM_ACT_CLIP,
     .tm = 16,
     .tn = 16,
     .tk = 32},
    {.what = "batched c [2,1,N] + trans_b",
     .ra = 3,
     .rb = 3,
     .rc = 3,
     .ad = {2, 9, 20},
     .bd = {2, 40, 20},
     .cd = {2, 1, 40},
     .yd = {2, 9, 40},
     .ry = 3,
     .tb = 1,
     .alpha = 1,
     .beta = 1,
     .tm = 16,
     .tn = 32,
     .tk = 16},
    {.what = "[3,100,70]x[70,130]",
     .ra = 3,
     .rb = 2,
     .rc = -1,
     .ad = {3, 100, 70},
     .bd = {70, 130},
     .yd = {3, 100, 130},
     .ry = 3,
     .alpha = 1,
     .tm = 64,
     .tn = 64,
     .tk = 64},
    {.what = "[130,300]x[300,70] big tiles",
     .ra = 2,
     .rb = 2,
     .rc = 1,
     .ad = {130, 300},
     .bd = {300, 70},
     .cd = {70},
     .yd = {130, 70},
     .ry = 2,
     .alpha = 1,
     .beta = 1,
     .tm = 144,
     .tn = 80,
     .tk = 112},
    /* what the compiler writes now: FRACTAL_NZ B, bias, folded rows */
    {.what = "NZ [37,53]x[53,29] + bias, K chunks",
     .ra = 2,
     .rb = 2,
     .rc = -1,
     .ad = {37, 53},
     .bd = {53, 29},
     .yd = {37, 29},
     .ry = 2,
     .alpha = 1,
     .tm = 16,
     .tn = 16,
     .tk = 16,
     .nz = 1,
     .bias = 1},
    {.what = "NZ [100,300]x[300,250] + bias + residual, relu",
     .ra = 2,
     .rb = 2,
     .rc = 2,
     .ad = {100, 300},
     .bd = {300, 250},
     .cd = {100, 250},
     .yd = {100, 250},
     .ry = 2,
     .alpha = 1,
     .beta = 1,
     .act = OM_ACT_RELU,
     .tm = 64,
     .tn = 128,
     .tk = 128,
     .nz = 1,
     .bias = 1},
    {.what = "NZ batched B [3,40,33], c [33], clip",
     .ra = 3,
     .rb = 3,
     .rc = 1,
     .ad = {3, 20, 40},
     .bd = {3, 40, 33},
     .cd = {33},
     .yd = {3, 20, 33},
     .ry = 3,
     .alpha = 1,
     .beta = 1,
     .act = OM_ACT_CLIP,
     .tm = 16,
     .tn = 32,
     .tk = 32,
     .nz = 1},
    {.what = "NZ fold [64,1,256]x[256,768] + bias (MHA in-projection)",
     .ra = 3,
     .rb = 2,
     .rc = -1,
     .ad = {64, 1, 256},
     .bd = {256, 768},
     .yd = {64, 1, 768},
     .ry = 3,
     .alpha = 1,
     .tm = 64,
     .tn = 128,
     .tk = 128,
     .nz = 1,
     .bias = 1,
     .fold = 1},
    {.what = "fold 2 [2,3,5,24]x[24,20], c [2,3,5,20]",
     .ra = 4,
     .rb = 2,
     .rc = 4,
     .ad = {2, 3, 5, 24},
     .bd = {24, 20},
     .cd = {2, 3, 5, 20},
     .yd = {2, 3, 5, 20},
     .ry = 4,
     .alpha = 1,
     .beta = 1,
     .tm = 16,
     .tn = 16,
     .tk = 16,
     .fold = 2},
    {.what = "NZ fold 1 of [2,3,5,24]x[24,20], c [3,5,1]",
     .ra = 4,
     .rb = 2,
     .rc = 3,
     .ad = {2, 3, 5, 24},
     .bd = {24, 20},
     .cd = {3, 5, 1},
     .yd = {2, 3, 5, 20},
     .ry = 4,
     .alpha = 1,
     .beta = 0.5f,
     .tm = 16,
     .tn = 16,
     .tk = 16,
     .nz = 1,
     .fold = 1},
    /* the transcendental acts (format 2.10): from L0C through the vector
     * epilogue (a last run of fewer lanes lane by lane), or with a c that
     * does not run along N through the portable one */
    {.what = "NZ [37,53]x[53,29] + bias, gelu",
     .ra = 2,
     .rb = 2,
     .rc = -1,
     .ad = {37, 53},
     .bd = {53, 29},
     .yd = {37, 29},
     .ry = 2,
     .alpha = 1,
     .act = OM_ACT_GELU,
     .tm = 16,
     .tn = 16,
     .tk = 16,
     .nz = 1,
     .bias = 1},
    {.what = "NZ [100,300]x[300,250] + bias + residual, gelu_tanh",
     .ra = 2,
     .rb = 2,
     .rc = 2,
     .ad = {100, 300},
     .bd = {300, 250},
     .cd = {100, 250},
     .yd = {100, 250},
     .ry = 2,
     .alpha = 1,
     .beta = 1,
     .act = OM_ACT_GELU_TANH,
     .tm = 64,
     .tn = 128,
     .tk = 128,
     .nz = 1,
     .bias = 1},
    {.what = "[3,100,70]x[70,130], c [130] beta 0.5, silu",
     .ra = 3,
     .rb = 2,
     .rc = 1,
     .ad = {3, 100, 70},
     .bd = {70, 130},
     .cd = {130},
     .yd = {3, 100, 130},
     .ry = 3,
     .alpha = 1,
     .beta = 0.5f,
     .act = OM_ACT_SILU,
     .tm = 64,
     .tn = 64,
     .tk = 64},
    {.what = "[2,9,20]x[20,40] trans_b, c [2,9,1] (along M), gelu",
     .ra = 3,
     .rb = 3,
     .rc = 3,
     .ad = {2, 9, 20},
     .bd = {2, 40, 20},
     .cd = {2, 9, 1},
     .yd = {2, 9, 40},
     .ry = 3,
     .tb = 1,
     .alpha = 1,
     .beta = 1,
     .act = OM_ACT_GELU,
     .tm = 16,
     .tn = 32,
     .tk = 16},
    {.what = "skinny M=1 NZ [1,768]x[768,100] + bias",
     .ra = 2,
     .rb = 2,
     .rc = -1,
     .ad = {1, 768},
     .bd = {768, 100},
     .yd = {1, 100},
     .ry = 2,
     .alpha = 1,
     .tm = 16,
     .tn = 112,
     .tk = 128,
     .nz = 1,
     .bias = 1},
    {.what = "skinny M=4 NZ [4,96]x[96,48], alpha 0.5",
     .ra = 2,
     .rb = 2,
     .rc = -1,
     .ad = {4, 96},
     .bd = {96, 48},
     .yd = {4, 48},
     .ry = 2,
     .alpha = 0.5f,
     .tm = 16,
     .tn = 48,
     .tk = 96,
     .nz = 1},
    {.what = "NZ 1-D A [40]x[3,40,24]",
     .ra = 1,
     .rb = 3,
     .rc = -1,
     .ad = {40},
     .bd = {3, 40, 24},
     .yd = {3, 24},
     .ry = 2,
     .alpha = 1,
     .tm = 16,
     .tn = 16,
     .tk = 32,
     .nz = 1,
     .bias = 1},
    {.what = "perm_a [1,0,2]: [64,1,256] as [1,64,256] stored, fold, NZ + bias",
     .ra = 3,
     .rb = 2,
     .rc = -1,
     .ad = {1, 64, 256},
     .bd = {256, 768},
     .yd = {64, 1, 768},
     .ry = 3,
     .alpha = 1,
     .tm = 64,
     .tn = 128,
     .tk = 128,
     .nz = 1,
     .bias = 1,
     .fold = 1,
     .pa = {1, 0, 2}},
    {.what = "perm_b [1,2,0]: K^T of a [20,3,16] head split",
     .ra = 3,
     .rb = 3,
     .rc = -1,
     .ad = {3, 20, 16},
     .bd = {20, 3, 16},
     .yd = {3, 20, 20},
     .ry = 3,
     .alpha = 0.25f,
     .tm = 16,
     .tn = 16,
     .tk = 16,
     .pb = {1, 2, 0}},
    {.what = "perm_a [1,0,2] + perm_b [1,0,2] + trans_b: Q K^T of heads",
     .ra = 3,
     .rb = 3,
     .rc = -1,
     .ad = {20, 3, 16},
     .bd = {20, 3, 16},
     .yd = {3, 20, 20},
     .ry = 3,
     .tb = 1,
     .alpha = 1,
     .tm = 32,
     .tn = 32,
     .tk = 16,
     .pa = {1, 0, 2},
     .pb = {1, 0, 2}},
    {.what = "perm_a [1,0,2] trans_a, 4-D perm_b [0,2,1,3]",
     .ra = 3,
     .rb = 4,
     .rc = -1,
     .ad = {37, 3, 5},
     .bd = {2, 37, 3, 9},
     .yd = {2, 3, 5, 9},
     .ry = 4,
     .ta = 1,
     .alpha = 1,
     .tm = 16,
     .tn = 16,
     .tk = 16,
     .pa = {1, 0, 2},
     .pb = {0, 2, 1, 3}},
    {.what = "trans_a batched [6,40,7]^T x [40,19]",
     .ra = 3,
     .rb = 2,
     .rc = -1,
     .ad = {6, 40, 7},
     .bd = {40, 19},
     .yd = {6, 7, 19},
     .ry = 3,
     .ta = 1,
     .alpha = 1,
     .tm = 16,
     .tn = 16,
     .tk = 16},
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
      int64_t ad[MAX_RANK], bd[MAX_RANK];
      for (int d = 0; d < sp->ra; d++)
        ad[d] = sp->ad[has_perm(sp->pa, sp->ra) ? sp->pa[d] : d];
      for (int d = 0; d < sp->rb; d++)
        bd[d] = sp->bd[has_perm(sp->pb, sp->rb) ? sp->pb[d] : d];
      int64_t M = sp->ra >= 2 ? ad[sp->ra - 2 + sp->ta] : 1, N = sp->rb >= 2 ? bd[sp->rb - 1 - sp->tb] : 1;
      int nbd = sp->ry - (sp->ra >= 2) - (sp->rb >= 2);
      for (int d = nbd - sp->fold; d < nbd; d++)
        M *= sp->yd[d];
      uint64_t tiles = (uint64_t)((M + sp->tm - 1) / sp->tm) * (uint64_t)((N + sp->tn - 1) / sp->tn);
      for (int d = 0; d < nbd - sp->fold; d++)
        tiles *= (uint64_t)sp->yd[d];
      uint32_t bds[3] = {1, tiles >= 2 ? 2 : 1, (uint32_t)(tiles < 65535 ? tiles : 65535)};
      for (int b = 0; b < 3; b++)
        if (b == 0 || bds[b] != bds[b - 1]) one_case(sp, dts[k][0], dts[k][1], dts[k][2], bds[b]);
    }
}

/* --- the transcendental acts: every path the same bits */

/* rt_mm_epilogue (the vector epilogue where rt_cpu() has one) against
 * rt_act and rt_put lane by lane, bit for bit, on sums over [-12, 12] and
 * the edges (0, -0, the clamps, inf, NaN), f16 and f32 y, a row of 45
 * columns (whole vectors and a last run of 13 or 5 lanes). */
static void act_paths_case(int act, int ydt) {
  enum { ROWS = 3, COLS = 45, LDM = 16 };
  mcase c;
  mc_setup(&c);
  mc_set(&c, 0, DT_FLOAT32, 2, (int64_t[]){ROWS, 8});
  mc_set(&c, 1, DT_FLOAT32, 2, (int64_t[]){8, COLS});
  mc_set(&c, 3, ydt, 2, (int64_t[]){ROWS, COLS});
  c.task.params[OM_MATMUL_P_ALPHA] = bits(1), c.task.params[OM_MATMUL_P_ACT] = act;
  c.task.params[OM_MATMUL_P_TILE_M] = c.task.params[OM_MATMUL_P_TILE_N] = c.task.params[OM_MATMUL_P_TILE_K] =
      64;
  CHECK_EQ_INT(mc_check(&c), OMRT_OK);
  rt_args a;
  memset(&a, 0, sizeof a);
  for (int s = 0; s < OM_MATMUL_NTENSORS; s++)
    if (c.task.tensors[s] != OM_NONE) a.data[s] = c.data[s], a.desc[s] = &c.t[s];
  rt_mm_geom g;
  rt_mm_geom_init(&c.task, &a, &g);
  static const float edges[] = {0.0f,   -0.0f,    3.92f,     -3.92f, 2.457f, -2.457f, 17.33f, -17.33f,
                                1e-30f, INFINITY, -INFINITY, NAN,    6.0f,   -6.0f,   1e-3f,  -1e-3f};
  float acc[3 * LDM * 16] = {0};
  int bad = 0;
  for (int round = 0; round < 200; round++) {
    for (int m = 0; m < ROWS; m++)
      for (int n = 0; n < COLS; n++) {
        const int i = m * COLS + n;
        acc[((n / 16) * LDM + m) * 16 + n % 16] =
            round == 0 && i < (int)(sizeof edges / sizeof *edges) ? edges[i] : 12.0f * frand();
      }
    rt_mm_epilogue(&g, 0, 0, ROWS, 0, COLS, acc, LDM, 0);
    for (int m = 0; m < ROWS; m++)
      for (int n = 0; n < COLS; n++) {
        const size_t at = (size_t)(m * COLS + n);
        const float v = rt_act(acc[((n / 16) * LDM + m) * 16 + n % 16], act, 0.0f, 0.0f);
        uint32_t want, got;
        if (ydt == DT_FLOAT16)
          want = float_to_half(v), got = ((const uint16_t *)c.data[3])[at];
        else
          memcpy(&want, &v, 4), memcpy(&got, (const float *)c.data[3] + at, 4);
        if (v != v) /* any NaN */
          want = got = ydt == DT_FLOAT16 ? (got & 0x7c00) == 0x7c00 && (got & 0x3ff)
                                         : (got & 0x7f800000u) == 0x7f800000u && (got & 0x7fffff);
        if ((want != got || (v != v && !got)) && bad++ < 3)
          test_note("  act %d y %s [%s]: acc %a -> %#x, lane by lane %#x", act, dtype_name(ydt),
                    rt_cpu()->name, (double)acc[((n / 16) * LDM + m) * 16 + n % 16], got, want);
      }
  }
  CHECK(bad == 0);
  mc_free(&c);
}

int main(void) {
  for (int act = OM_ACT_GELU; act < OM_ACT_COUNT; act++) {
    act_paths_case(act, DT_FLOAT32);
    act_paths_case(act, DT_FLOAT16);
  }
  kernel_cases();
  return test_summary("test_matmul");
}
