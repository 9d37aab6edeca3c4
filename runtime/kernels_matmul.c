/* kernels_matmul.c - MATMUL on the simulated cube unit: the load-time check,
 * the geometry (kernels_matmul.h), the portable tile and the run loop.
 *
 * The dataflow is the chip's (om_format.h, OM_TASK_MATMUL): for each tile
 * of tile_m rows x tile_n columns of one outer batch's y and each K chunk of
 * tile_k, op(A)'s rows are staged into L0A ([m][k], f32, times alpha),
 * op(B)'s rows into L0B ([n block][k][16], columns past N zero; a
 * FRACTAL_NZ B holds exactly those panels), and the 16-wide products are
 * accumulated in L0C ([n block][tile_m][16], f32). After the last chunk the
 * vector unit's epilogue writes y = act(acc + bias + beta * c) for the
 * tile's valid rows and columns, then the epilogue program (if any) runs
 * over them. fp16 operands are widened to f32 when staged: their products
 * are exact in f32, so this is the cube's fp16 x fp16 -> fp32 arithmetic;
 * L0A and L0B are staged for that (om_format.h, OM_L0_STAGING).
 * Transposed operands (trans_a, trans_b) are read with their strides while
 * staging; broadcast batch dims have stride 0; a row fold makes the rows of
 * several batches one evenly spaced row axis (common/matmul_geom.h).
 *
 * The multiply-accumulate is the 2-row x 16-lane loop of 4-lane GNU C
 * vectors that kernels_cube.c uses. On hosts with AVX2, FMA and F16C,
 * rt_cpu() selects kernels_matmul_x86.c's tile instead (same tiles, the
 * cube's micro-kernel, a FRACTAL_NZ B read in place).
 */
#include <math.h>

#include "runtime/epilogue.h"
#include "runtime/kernels_matmul.h"

/* --- geometry */

void rt_mm_geom_init(const om_task *task, const rt_args *args, rt_mm_geom *g) {
  const om_tensor *a = args->desc[OM_MATMUL_T_A], *b = args->desc[OM_MATMUL_T_B];
  const om_tensor *c = args->desc[OM_MATMUL_T_C], *y = args->desc[OM_MATMUL_T_Y];
  const int32_t *q = task->params;
  const int bnz = b->layout == LAYOUT_FRACTAL_NZ, fold = q[OM_MATMUL_P_FOLD];
  int pa[MAX_RANK], pb[MAX_RANK];
  mm_perm_decode(q[OM_MATMUL_P_PERM_A], (int)a->rank, pa); /* valid: rt_matmul_check */
  mm_perm_decode(q[OM_MATMUL_P_PERM_B], (int)b->rank, pb);
  const mm_operand oa = {(int)a->rank, a->dims, pa, q[OM_MATMUL_P_TRANS_A]},
                   ob = {(int)b->rank, b->dims, pb, q[OM_MATMUL_P_TRANS_B]};
  mm_geom mg;
  mm_geom_init(&oa, &ob, bnz, c ? (int)c->rank : -1, c ? c->dims : NULL, (int)y->rank, y->dims, &mg);
  int64_t a_row = 0, c_row = 0;
  mm_fold_rows(&mg, fold, &a_row, &c_row); /* legal: rt_matmul_check */
  *g = (rt_mm_geom){.a = a,
                    .b = b,
                    .c = c,
                    .y = y,
                    .ad = args->data[OM_MATMUL_T_A],
                    .bd = args->data[OM_MATMUL_T_B],
                    .cd = args->data[OM_MATMUL_T_C],
                    .biasd = task->ntensors > OM_MATMUL_T_BIAS ? args->data[OM_MATMUL_T_BIAS] : NULL,
                    .yd = args->data[OM_MATMUL_T_Y],
                    .act = q[OM_MATMUL_P_ACT],
                    .bnz = bnz,
                    .alpha = rt_param_f32(q[OM_MATMUL_P_ALPHA]),
                    .beta = rt_param_f32(q[OM_MATMUL_P_BETA]),
                    .clip_min = rt_param_f32(q[OM_MATMUL_P_CLIP_MIN]),
                    .clip_max = rt_param_f32(q[OM_MATMUL_P_CLIP_MAX]),
                    .m = mg.m,
                    .n = mg.n,
                    .k = mg.k,
                    .k16 = rt_ceil_div(mg.k, C0) * C0,
                    .tm = q[OM_MATMUL_P_TILE_M],
                    .tn = q[OM_MATMUL_P_TILE_N],
                    .tk = q[OM_MATMUL_P_TILE_K],
                    .batch = 1,
                    .nbd = mg.nbd - fold,
                    .a_sm = a_row,
                    .a_sk = mg.a_sk,
                    .b_sk = mg.b_sk,
                    .b_sn = mg.b_sn,
                    .c_sm = c_row,
                    .c_sn = mg.c_sn};
  for (int d = 0; d < mg.nbd; d++) {
    if (d >= g->nbd) {
      g->m *= mg.bdims[d];
      continue;
    }
    g->bdims[d] = mg.bdims[d], g->sa[d] = mg.sa[d], g->sb[d] = mg.sb[d], g->sc[d] = mg.sc[d];
    g->batch *= mg.bdims[d];
  }
  g->mtiles = rt_ceil_div(g->m, g->tm);
  g->ntiles = rt_ceil_div(g->n, g->tn);
}

/* --- the epilogue from L0C */

void rt_mm_epilogue(const rt_mm_geom *g, int64_t bt, int64_t m0, int64_t rows, int64_t n0, int64_t cols,
                    const float *acc, int64_t ldm, int with_bias) {
  if (g->act >= OM_ACT_GELU && rt_cpu()->mm_act_epilogue && (!g->cd || g->c_sn == 1)) {
    rt_cpu()->mm_act_epilogue(g, bt, m0, rows, n0, cols, acc, ldm, with_bias); /* the same bits, in vectors */
    return;
  }
  const int yt = (int)g->y->dtype, ct = g->c ? (int)g->c->dtype : 0;
  int64_t oa, ob, oc;
  rt_mm_batch_offsets(g, bt, &oa, &ob, &oc);
  for (int64_t m = 0; m < rows; m++) {
    const size_t yrow = (size_t)((bt * g->m + m0 + m) * g->n + n0);
    const int64_t crow = oc + (m0 + m) * g->c_sm + n0 * g->c_sn;
    for (int64_t n = 0; n < cols; n++) {
      float v = acc[((n / C0) * ldm + m) * C0 + n % C0];
      if (with_bias && g->biasd) v += g->biasd[n0 + n];
      if (g->cd) v += g->beta * rt_get(g->cd, ct, (size_t)(crow + n * g->c_sn));
      rt_put(g->yd, yt, yrow + (size_t)n, rt_act(v, g->act, g->clip_min, g->clip_max));
    }
  }
}

/* --- the portable tile */

/* The 16-lane multiply-accumulate rows are the CONV2D tile's (rt_mmad16_1/2, kernels.h). */

void rt_matmul_tile(const rt_mm_geom *g, int64_t bt, int64_t mt, int64_t nt, rt_core *core) {
  float *l0a = (float *)core->l0a, *l0b = (float *)core->l0b, *l0c = (float *)core->l0c;
  const int at = (int)g->a->dtype, btp = (int)g->b->dtype;
  const int64_t m0 = mt * g->tm, rows = g->m - m0 < g->tm ? g->m - m0 : g->tm;
  const int64_t n0 = nt * g->tn, cols = g->n - n0 < g->tn ? g->n - n0 : g->tn;
  const int64_t nblocks = rt_ceil_div(cols, C0);
  int64_t oa, ob, oc;
  rt_mm_batch_offsets(g, bt, &oa, &ob, &oc);
  memset(l0c, 0, (size_t)(nblocks * g->tm * C0) * sizeof(float));
  for (int64_t kc = 0; kc < g->k; kc += g->tk) {
    const int64_t klen = g->k - kc < g->tk ? g->k - kc : g->tk;
    for (int64_t m = 0; m < rows; m++) {
      const size_t base = (size_t)(oa + (m0 + m) * g->a_sm + kc * g->a_sk);
      for (int64_t k = 0; k < klen; k++)
        l0a[m * klen + k] = g->alpha * rt_get(g->ad, at, base + (size_t)(k * g->a_sk));
    }
    for (int64_t nb = 0; nb < nblocks; nb++)
      for (int64_t k = 0; k < klen; k++) {
        float *dst = l0b + (nb * klen + k) * C0;
        for (int j = 0; j < C0; j++) {
          const int64_t n = n0 + nb * C0 + j, kk = kc + k;
          const size_t at_b = g->bnz ? (size_t)(ob + ((n / C0) * g->k16 + kk) * C0 + n % C0)
                                     : (size_t)(ob + kk * g->b_sk + n * g->b_sn);
          dst[j] = n < n0 + cols ? rt_get(g->bd, btp, at_b) : 0.0f;
        }
      }
    for (int64_t nb = 0; nb < nblocks; nb++) {
      const float *b = l0b + nb * klen * C0;
      float *c = l0c + nb * g->tm * C0;
      int64_t m = 0;
      for (; m + 2 <= rows; m += 2)
        rt_mmad16_2(l0a + m * klen, klen, klen, b, c + m * C0);
      if (m < rows) rt_mmad16_1(l0a + m * klen, klen, b, c + m * C0);
    }
  }
  rt_mm_epilogue(g, bt, m0, rows, n0, cols, l0c, g->tm, 1);
}

/* --- the run loop */

void rt_matmul_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  rt_mm_geom g;
  rt_mm_geom_init(task, args, &g);
  uint64_t lo, hi, per_batch = (uint64_t)(g.mtiles * g.ntiles);
  rt_block_range((uint64_t)g.batch * per_batch, task->block_dim, block, &lo, &hi);
  void (*tile)(const rt_mm_geom *, int64_t, int64_t, int64_t, rt_core *) = rt_cpu()->matmul_tile;
  if (!tile) tile = rt_matmul_tile;
  const rt_vplan *epi = args->aux; /* the epilogue program (epilogue.c), or NULL */
  for (uint64_t t = lo; t < hi; t++) {
    const int64_t bt = (int64_t)(t / per_batch), in_b = (int64_t)(t % per_batch);
    const int64_t mt = in_b / g.ntiles, nt = in_b % g.ntiles;
    tile(&g, bt, mt, nt, core);
    if (epi) {
      const int64_t m0 = mt * g.tm, n0 = nt * g.tn;
      const int64_t rows = g.m - m0 < g.tm ? g.m - m0 : g.tm, cols = g.n - n0 < g.tn ? g.n - n0 : g.tn;
      rt_epi_rows(epi, task, args, (uint64_t)((bt * g.m + m0) * g.n + n0), (uint64_t)rows, (uint64_t)cols,
                  (uint64_t)g.n, core);
    }
  }
}

/* --- the load-time check */

static int finite_bits(int32_t bits) { return isfinite(rt_param_f32(bits)); }

/* The params that are not tensor shapes: flags, scalars, the activation. */
static omrt_status check_scalars(const rt_chk *c, int ra, int rb, int has_c) {
  const int32_t *q = c->task->params;
  const int32_t act = q[OM_MATMUL_P_ACT], alpha = q[OM_MATMUL_P_ALPHA], beta = q[OM_MATMUL_P_BETA];
  const int32_t clip_min = q[OM_MATMUL_P_CLIP_MIN], clip_max = q[OM_MATMUL_P_CLIP_MAX];
  for (int k = OM_MATMUL_P_TRANS_A; k <= OM_MATMUL_P_TRANS_B; k++)
    if (q[k] != 0 && (q[k] != 1 || (k == OM_MATMUL_P_TRANS_A ? ra : rb) < 2))
      return rt_chk_fail(c, "params[%d] trans_%c = %d, expected 0 or (rank >= 2) 1", k,
                         k == OM_MATMUL_P_TRANS_A ? 'a' : 'b', q[k]);
  if (!finite_bits(alpha) || !finite_bits(beta))
    return rt_chk_fail(c, "params[%d] alpha %g or params[%d] beta %g is not finite", OM_MATMUL_P_ALPHA,
                       rt_param_f32(alpha), OM_MATMUL_P_BETA, rt_param_f32(beta));
  if (!has_c && beta != 0)
    return rt_chk_fail(c, "params[%d] beta = %g without c", OM_MATMUL_P_BETA, rt_param_f32(beta));
  if (act < OM_ACT_NONE || act >= OM_ACT_COUNT)
    return rt_chk_fail(c, "params[%d] act = %d unknown", OM_MATMUL_P_ACT, act);
  if (act == OM_ACT_CLIP && !(rt_param_f32(clip_min) <= rt_param_f32(clip_max)))
    return rt_chk_fail(c, "clip_min %g > clip_max %g (or NaN)", rt_param_f32(clip_min),
                       rt_param_f32(clip_max));
  if (act != OM_ACT_CLIP && (clip_min != 0 || clip_max != 0))
    return rt_chk_fail(c, "params[%d], params[%d] = %d, %d, expected 0 (act is not clip)",
                       OM_MATMUL_P_CLIP_MIN, OM_MATMUL_P_CLIP_MAX, clip_min, clip_max);
  for (int k = OM_MATMUL_NPARAMS; k < OM_TASK_MAX_PARAMS; k++)
    if (q[k] != 0) return rt_chk_fail(c, "params[%d] = %d, expected 0 (unused)", k, q[k]);
  return OMRT_OK;
}

/* The operands' views (their logical dims ad, bd) form a product y; sets
 * M, N, K and the batch rank. */
static omrt_status check_dims(const rt_chk *c, int ra, const int64_t *ad, int rb, const int64_t *bd,
                              const om_tensor *cc, const om_tensor *y, int64_t *M_out, int64_t *N_out,
                              int *nbd_out) {
  const int32_t *q = c->task->params;
  const int32_t ta = q[OM_MATMUL_P_TRANS_A], tb = q[OM_MATMUL_P_TRANS_B];
  const int ry = (int)y->rank;
  int64_t M = ra >= 2 ? ad[ta ? ra - 1 : ra - 2] : 1;
  int64_t K = ra >= 2 ? ad[ta ? ra - 2 : ra - 1] : ad[0];
  int64_t Kb = rb >= 2 ? bd[tb ? rb - 1 : rb - 2] : bd[0];
  int64_t N = rb >= 2 ? bd[tb ? rb - 2 : rb - 1] : 1;
  if (K != Kb) return rt_chk_fail(c, "a's K = %lld != b's K = %lld", (long long)K, (long long)Kb);
  if (M < 1 || N < 1 || K < 1)
    return rt_chk_fail(c, "M %lld, N %lld, K %lld: each must be >= 1", (long long)M, (long long)N,
                       (long long)K);
  const int abat = ra >= 2 ? ra - 2 : 0, bbat = rb >= 2 ? rb - 2 : 0, nbd = ry - (ra >= 2) - (rb >= 2);
  if (nbd != (abat > bbat ? abat : bbat))
    return rt_chk_fail(c, "y rank %d: expected %d (batch rank %d%s%s)", ry,
                       (abat > bbat ? abat : bbat) + (ra >= 2) + (rb >= 2), abat > bbat ? abat : bbat,
                       ra >= 2 ? " + M" : "", rb >= 2 ? " + N" : "");
  if ((ra >= 2 && y->dims[nbd] != M) || (rb >= 2 && y->dims[ry - 1] != N))
    return rt_chk_fail(c, "y matrix dims do not match M %lld, N %lld", (long long)M, (long long)N);
  for (int d = nbd - 1, s = 0; d >= 0; d--, s++) {
    int64_t da = s < abat ? ad[abat - 1 - s] : 1, db = s < bbat ? bd[bbat - 1 - s] : 1;
    int64_t want = da == 1 ? db : da;
    if ((db != 1 && db != da && da != 1) || y->dims[d] != want)
      return rt_chk_fail(c, "batch dim %d: a %lld and b %lld do not broadcast to y %lld", d, (long long)da,
                         (long long)db, (long long)y->dims[d]);
  }
  if (cc) {
    if (cc->rank > y->rank) return rt_chk_fail(c, "c rank %u > y rank %u", cc->rank, y->rank);
    for (uint32_t s = 0; s < cc->rank; s++) {
      int64_t dc = cc->dims[cc->rank - 1 - s], dy = y->dims[y->rank - 1 - s];
      if (dc != 1 && dc != dy)
        return rt_chk_fail(c, "c dims[%u] = %lld does not broadcast to y's %lld", cc->rank - 1 - s,
                           (long long)dc, (long long)dy);
    }
  }
  *M_out = M, *N_out = N, *nbd_out = nbd;
  return OMRT_OK;
}

omrt_status rt_matmul_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "MATMUL"};
  const om_tensor *a, *b, *cc, *y, *bias = NULL;
  const int32_t *q = task->params;
  omrt_status s;
  if (task->ntensors != OM_MATMUL_NTENSORS - 1 &&
      (s = rt_chk_ntensors(&c, rt_epi_ntensors(task)))) /* 4: a format 2.0 task (no bias slot) */
    return s;
  if ((s = rt_chk_tensor(&c, OM_MATMUL_T_A, "a", 0, LAYOUT_ND, -1, 0, &a)) ||
      (s = rt_chk_tensor(&c, OM_MATMUL_T_C, "c", 1, LAYOUT_ND, -1, 0, &cc)) ||
      (s = rt_chk_tensor(&c, OM_MATMUL_T_Y, "y", 0, LAYOUT_ND, -1, 0, &y)))
    return s;
  const uint32_t bi = task->tensors[OM_MATMUL_T_B]; /* an index the loader checked, or OM_NONE */
  const int bl = bi != OM_NONE && m->tensors[bi].layout == LAYOUT_FRACTAL_NZ ? LAYOUT_FRACTAL_NZ : LAYOUT_ND;
  if ((s = rt_chk_tensor(&c, OM_MATMUL_T_B, "b", 0, bl, -1, 0, &b))) return s;
  if (task->ntensors > OM_MATMUL_T_BIAS &&
      (s = rt_chk_tensor(&c, OM_MATMUL_T_BIAS, "bias", 1, LAYOUT_ND, 1, 1, &bias)))
    return s;
  if (task->ntensors == OM_MATMUL_NTENSORS - 1 && q[OM_MATMUL_P_EPILOGUE] != 0)
    return rt_chk_fail(&c, "params[%d] epilogue = %d without the bias slot (ntensors %u)",
                       OM_MATMUL_P_EPILOGUE, q[OM_MATMUL_P_EPILOGUE], task->ntensors);
  if (a->dtype != b->dtype) return rt_chk_fail(&c, "a dtype %u != b dtype %u", a->dtype, b->dtype);
  const int ra = (int)a->rank, rb = (int)b->rank;
  if (ra < 1 || rb < 1) return rt_chk_fail(&c, "a rank %d and b rank %d: both must be >= 1", ra, rb);
  if ((s = check_scalars(&c, ra, rb, cc != NULL))) return s;
  if (b->layout == LAYOUT_FRACTAL_NZ && (q[OM_MATMUL_P_TRANS_B] || q[OM_MATMUL_P_PERM_B]))
    return rt_chk_fail(&c, "params[%d] trans_b = %d, params[%d] perm_b = %d with a FRACTAL_NZ b: expected 0",
                       OM_MATMUL_P_TRANS_B, q[OM_MATMUL_P_TRANS_B], OM_MATMUL_P_PERM_B,
                       q[OM_MATMUL_P_PERM_B]);
  int pa[MAX_RANK], pb[MAX_RANK];
  if (mm_perm_decode(q[OM_MATMUL_P_PERM_A], ra, pa) || mm_perm_decode(q[OM_MATMUL_P_PERM_B], rb, pb))
    return rt_chk_fail(
        &c,
        "params[%d] perm_a = %#x or params[%d] perm_b = %#x is no permutation of a's rank %d or "
        "b's rank %d",
        OM_MATMUL_P_PERM_A, (unsigned)q[OM_MATMUL_P_PERM_A], OM_MATMUL_P_PERM_B,
        (unsigned)q[OM_MATMUL_P_PERM_B], ra, rb);
  const mm_operand oa = {ra, a->dims, pa, q[OM_MATMUL_P_TRANS_A]},
                   ob = {rb, b->dims, pb, q[OM_MATMUL_P_TRANS_B]};
  int64_t ad[MAX_RANK], bd[MAX_RANK], M = 0, N = 0;
  int nbd = 0;
  mm_logical(&oa, ad, NULL);
  mm_logical(&ob, bd, NULL);
  if ((s = check_dims(&c, ra, ad, rb, bd, cc, y, &M, &N, &nbd))) return s;
  if (bias && bias->dims[0] != N)
    return rt_chk_fail(&c, "bias dims[0] = %lld, expected N = %lld", (long long)bias->dims[0], (long long)N);

  /* the row fold */
  const int32_t fold = q[OM_MATMUL_P_FOLD];
  mm_geom mg;
  int64_t a_row, c_row;
  if (fold < 0 || fold > nbd)
    return rt_chk_fail(&c, "params[%d] fold = %d, expected 0..%d (y's batch rank)", OM_MATMUL_P_FOLD, fold,
                       nbd);
  mm_geom_init(&oa, &ob, b->layout == LAYOUT_FRACTAL_NZ, cc ? (int)cc->rank : -1, cc ? cc->dims : NULL,
               (int)y->rank, y->dims, &mg);
  if (mm_fold_rows(&mg, fold, &a_row, &c_row))
    return rt_chk_fail(&c,
                       "params[%d] fold = %d: b varies along a folded batch dim, or a's or c's rows are not "
                       "evenly spaced along the row axis",
                       OM_MATMUL_P_FOLD, fold);

  /* tiles and the buffer capacities */
  const int64_t tm = q[OM_MATMUL_P_TILE_M], tn = q[OM_MATMUL_P_TILE_N], tk = q[OM_MATMUL_P_TILE_K];
  for (int k = OM_MATMUL_P_TILE_M; k <= OM_MATMUL_P_TILE_K; k++)
    if (q[k] < 16 || q[k] > 65536 || q[k] % 16)
      return rt_chk_fail(&c, "params[%d] tile_%c = %d, expected a multiple of 16 in 16..65536", k,
                         "mnk"[k - OM_MATMUL_P_TILE_M], q[k]);
  const uint64_t es = dtype_size((int)a->dtype);
  const om_model_def *d = m->def;
  const struct {
    const char *what;
    uint64_t need, have;
  } caps[] = {{"L0A", (uint64_t)tm * (uint64_t)tk * es, d->l0a_bytes},
              {"L0B", (uint64_t)tk * (uint64_t)tn * es, d->l0b_bytes},
              {"L0C", (uint64_t)tm * (uint64_t)tn * 4, d->l0c_bytes}};
  for (size_t k = 0; k < sizeof caps / sizeof *caps; k++)
    if (caps[k].need > caps[k].have)
      return rt_chk_fail(&c, "tile_m %lld, tile_n %lld, tile_k %lld need %llu bytes of %s, capacity %llu",
                         (long long)tm, (long long)tn, (long long)tk, (unsigned long long)caps[k].need,
                         caps[k].what, (unsigned long long)caps[k].have);
  uint64_t batch = 1, rows = (uint64_t)M;
  for (int k = 0; k < nbd; k++)
    if (k < nbd - fold)
      batch *= (uint64_t)y->dims[k]; /* <= y's elements: no overflow */
    else
      rows *= (uint64_t)y->dims[k];
  uint64_t tiles;
  if (mul_u64(batch, (uint64_t)rt_ceil_div((int64_t)rows, tm), &tiles) ||
      mul_u64(tiles, (uint64_t)rt_ceil_div(N, tn), &tiles))
    return rt_chk_fail(&c, "tile count overflows");
  return rt_chk_block_dim(&c, tiles, "tiles");
}
