/* kernels_matmul.c - MATMUL on the simulated cube unit: the load-time check,
 * the geometry (kernels_matmul.h) and the portable tile.
 *
 * The dataflow is the chip's (om_format.h, OM_TASK_MATMUL): for each tile
 * of tile_m rows x tile_n columns of one batch's y and each K chunk of
 * tile_k, op(A)'s rows are staged into L0A ([m][k], f32), op(B)'s rows into
 * L0B ([n block][k][16], columns past N zero), and the 16-wide products are
 * accumulated in L0C ([n block][tile_m][16], f32). After the last chunk the
 * vector unit's epilogue writes y = act(alpha * acc + beta * c) for the
 * tile's valid rows and columns. fp16 operands are widened to f32 when
 * staged: their products are exact in f32, so this is the cube's fp16 x
 * fp16 -> fp32 arithmetic; L0A and L0B are staged for that (om_format.h,
 * OM_L0_STAGING). Transposed operands (trans_a, trans_b) are read with
 * their strides while staging; broadcast batch dims have stride 0.
 *
 * The multiply-accumulate is the 2-row x 16-lane loop of 4-lane GNU C
 * vectors that kernels_cube.c uses. On hosts with AVX2, FMA and F16C,
 * rt_cpu() selects kernels_matmul_x86.c's tile instead (same tiles, same
 * buffers, the cube's FMA micro-kernel).
 */
#include <math.h>

#include "runtime/kernels_matmul.h"

/* --- geometry */

void rt_mm_geom_init(const om_task *task, const rt_args *args, rt_mm_geom *g) {
  const om_tensor *a = args->desc[OM_MATMUL_T_A], *b = args->desc[OM_MATMUL_T_B];
  const om_tensor *c = args->desc[OM_MATMUL_T_C], *y = args->desc[OM_MATMUL_T_Y];
  const int32_t *q = task->params;
  const int ta = q[OM_MATMUL_P_TRANS_A], tb = q[OM_MATMUL_P_TRANS_B];
  const int ra = (int)a->rank, rb = (int)b->rank, ry = (int)y->rank;
  *g = (rt_mm_geom){.a = a,
                    .b = b,
                    .c = c,
                    .y = y,
                    .ad = args->data[OM_MATMUL_T_A],
                    .bd = args->data[OM_MATMUL_T_B],
                    .cd = args->data[OM_MATMUL_T_C],
                    .yd = args->data[OM_MATMUL_T_Y],
                    .act = q[OM_MATMUL_P_ACT],
                    .alpha = rt_param_f32(q[OM_MATMUL_P_ALPHA]),
                    .beta = rt_param_f32(q[OM_MATMUL_P_BETA]),
                    .clip_min = rt_param_f32(q[OM_MATMUL_P_CLIP_MIN]),
                    .clip_max = rt_param_f32(q[OM_MATMUL_P_CLIP_MAX]),
                    .tm = q[OM_MATMUL_P_TILE_M],
                    .tn = q[OM_MATMUL_P_TILE_N],
                    .tk = q[OM_MATMUL_P_TILE_K]};
  if (ra >= 2) {
    int64_t r0 = a->dims[ra - 2], r1 = a->dims[ra - 1];
    g->m = ta ? r1 : r0, g->k = ta ? r0 : r1;
    g->a_sm = ta ? 1 : r1, g->a_sk = ta ? r1 : 1;
  } else {
    g->m = 1, g->k = a->dims[0], g->a_sm = 0, g->a_sk = 1;
  }
  if (rb >= 2) {
    int64_t r0 = b->dims[rb - 2], r1 = b->dims[rb - 1];
    g->n = tb ? r0 : r1;
    g->b_sk = tb ? 1 : r1, g->b_sn = tb ? r1 : 1;
  } else {
    g->n = 1, g->b_sk = 1, g->b_sn = 0;
  }
  g->nbd = ry - (ra >= 2) - (rb >= 2);
  const int abat = ra >= 2 ? ra - 2 : 0, bbat = rb >= 2 ? rb - 2 : 0;
  int64_t step_a = g->m * g->k, step_b = g->k * g->n;
  g->batch = 1;
  for (int d = g->nbd - 1, s = 0; d >= 0; d--, s++) {
    int64_t da = s < abat ? a->dims[abat - 1 - s] : 1, db = s < bbat ? b->dims[bbat - 1 - s] : 1;
    g->bdims[d] = y->dims[d];
    g->sa[d] = da == 1 ? 0 : step_a;
    g->sb[d] = db == 1 ? 0 : step_b;
    step_a *= da, step_b *= db;
    g->batch *= y->dims[d];
  }
  /* c: strides along y's dims (0 where it broadcasts), then split into batch, M, N */
  int64_t scy[MAX_RANK] = {0}, step = 1;
  if (c)
    for (int j = ry - 1, s = 0; j >= 0 && s < (int)c->rank; j--, s++) {
      int64_t dc = c->dims[c->rank - 1 - s];
      scy[j] = dc == 1 ? 0 : step;
      step *= dc;
    }
  for (int d = 0; d < g->nbd; d++)
    g->sc[d] = scy[d];
  g->c_sm = ra >= 2 ? scy[g->nbd] : 0;
  g->c_sn = rb >= 2 ? scy[ry - 1] : 0;
  g->mtiles = rt_ceil_div(g->m, g->tm);
  g->ntiles = rt_ceil_div(g->n, g->tn);
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
      size_t base = (size_t)(oa + (m0 + m) * g->a_sm + kc * g->a_sk);
      if (g->a_sk == 1)
        rt_load_f32(l0a + m * klen, g->ad, at, base, (size_t)klen);
      else
        for (int64_t k = 0; k < klen; k++)
          l0a[m * klen + k] = rt_get(g->ad, at, base + (size_t)(k * g->a_sk));
    }
    for (int64_t nb = 0; nb < nblocks; nb++)
      for (int64_t k = 0; k < klen; k++) {
        float *dst = l0b + (nb * klen + k) * C0;
        for (int j = 0; j < C0; j++) {
          int64_t n = nb * C0 + j;
          dst[j] =
              n < cols ? rt_get(g->bd, btp, (size_t)(ob + (kc + k) * g->b_sk + (n0 + n) * g->b_sn)) : 0.0f;
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
  /* the vector unit's epilogue */
  const int yt = (int)g->y->dtype, ct = g->c ? (int)g->c->dtype : 0;
  for (int64_t m = 0; m < rows; m++) {
    size_t yrow = (size_t)((bt * g->m + m0 + m) * g->n + n0);
    for (int64_t n = 0; n < cols; n++) {
      float v = g->alpha * l0c[((n / C0) * g->tm + m) * C0 + n % C0];
      if (g->cd) v += g->beta * rt_get(g->cd, ct, (size_t)(oc + (m0 + m) * g->c_sm + (n0 + n) * g->c_sn));
      rt_put(g->yd, yt, yrow + (size_t)n, rt_act(v, g->act, g->clip_min, g->clip_max));
    }
  }
}

void rt_matmul_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  rt_mm_geom g;
  rt_mm_geom_init(task, args, &g);
  uint64_t lo, hi, per_batch = (uint64_t)(g.mtiles * g.ntiles);
  rt_block_range((uint64_t)g.batch * per_batch, task->block_dim, block, &lo, &hi);
  void (*tile)(const rt_mm_geom *, int64_t, int64_t, int64_t, rt_core *) = rt_cpu()->matmul_tile;
  if (!tile) tile = rt_matmul_tile;
  for (uint64_t t = lo; t < hi; t++) {
    int64_t bt = (int64_t)(t / per_batch), in_b = (int64_t)(t % per_batch);
    tile(&g, bt, in_b / g.ntiles, in_b % g.ntiles, core);
  }
}

/* --- the load-time check */

static int finite_bits(int32_t bits) { return isfinite(rt_param_f32(bits)); }

omrt_status rt_matmul_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "MATMUL"};
  const om_tensor *a, *b, *cc, *y;
  omrt_status s;
  if ((s = rt_chk_ntensors(&c, OM_MATMUL_NTENSORS)) ||
      (s = rt_chk_tensor(&c, OM_MATMUL_T_A, "a", 0, LAYOUT_ND, -1, 0, &a)) ||
      (s = rt_chk_tensor(&c, OM_MATMUL_T_B, "b", 0, LAYOUT_ND, -1, 0, &b)) ||
      (s = rt_chk_tensor(&c, OM_MATMUL_T_C, "c", 1, LAYOUT_ND, -1, 0, &cc)) ||
      (s = rt_chk_tensor(&c, OM_MATMUL_T_Y, "y", 0, LAYOUT_ND, -1, 0, &y)))
    return s;
  if (a->dtype != b->dtype) return rt_chk_fail(&c, "a dtype %u != b dtype %u", a->dtype, b->dtype);
  const int32_t *q = task->params;
  const int32_t ta = q[OM_MATMUL_P_TRANS_A], tb = q[OM_MATMUL_P_TRANS_B], act = q[OM_MATMUL_P_ACT];
  const int32_t alpha = q[OM_MATMUL_P_ALPHA], beta = q[OM_MATMUL_P_BETA];
  const int32_t clip_min = q[OM_MATMUL_P_CLIP_MIN], clip_max = q[OM_MATMUL_P_CLIP_MAX];
  const int ra = (int)a->rank, rb = (int)b->rank, ry = (int)y->rank;
  if (ra < 1 || rb < 1) return rt_chk_fail(&c, "a rank %d and b rank %d: both must be >= 1", ra, rb);
  for (int k = OM_MATMUL_P_TRANS_A; k <= OM_MATMUL_P_TRANS_B; k++)
    if (q[k] != 0 && (q[k] != 1 || (k == OM_MATMUL_P_TRANS_A ? ra : rb) < 2))
      return rt_chk_fail(&c, "params[%d] trans_%c = %d, expected 0 or (rank >= 2) 1", k,
                         k == OM_MATMUL_P_TRANS_A ? 'a' : 'b', q[k]);
  if (!finite_bits(alpha) || !finite_bits(beta))
    return rt_chk_fail(&c, "params[%d] alpha %g or params[%d] beta %g is not finite", OM_MATMUL_P_ALPHA,
                       rt_param_f32(alpha), OM_MATMUL_P_BETA, rt_param_f32(beta));
  if (!cc && beta != 0)
    return rt_chk_fail(&c, "params[%d] beta = %g without c", OM_MATMUL_P_BETA, rt_param_f32(beta));
  if (act != OM_ACT_NONE && act != OM_ACT_RELU && act != OM_ACT_CLIP)
    return rt_chk_fail(&c, "params[%d] act = %d unknown", OM_MATMUL_P_ACT, act);
  if (act == OM_ACT_CLIP && !(rt_param_f32(clip_min) <= rt_param_f32(clip_max)))
    return rt_chk_fail(&c, "clip_min %g > clip_max %g (or NaN)", rt_param_f32(clip_min),
                       rt_param_f32(clip_max));
  if (act != OM_ACT_CLIP && (clip_min != 0 || clip_max != 0))
    return rt_chk_fail(&c, "params[%d], params[%d] = %d, %d, expected 0 (act is not clip)",
                       OM_MATMUL_P_CLIP_MIN, OM_MATMUL_P_CLIP_MAX, clip_min, clip_max);
  for (int k = OM_MATMUL_NPARAMS; k < OM_TASK_MAX_PARAMS; k++)
    if (q[k] != 0) return rt_chk_fail(&c, "params[%d] = %d, expected 0 (unused)", k, q[k]);

  /* matrix dims */
  int64_t M = ra >= 2 ? a->dims[ta ? ra - 1 : ra - 2] : 1;
  int64_t K = ra >= 2 ? a->dims[ta ? ra - 2 : ra - 1] : a->dims[0];
  int64_t Kb = rb >= 2 ? b->dims[tb ? rb - 1 : rb - 2] : b->dims[0];
  int64_t N = rb >= 2 ? b->dims[tb ? rb - 2 : rb - 1] : 1;
  if (K != Kb) return rt_chk_fail(&c, "a's K = %lld != b's K = %lld", (long long)K, (long long)Kb);
  if (M < 1 || N < 1 || K < 1)
    return rt_chk_fail(&c, "M %lld, N %lld, K %lld: each must be >= 1", (long long)M, (long long)N,
                       (long long)K);
  const int abat = ra >= 2 ? ra - 2 : 0, bbat = rb >= 2 ? rb - 2 : 0, nbd = ry - (ra >= 2) - (rb >= 2);
  if (nbd != (abat > bbat ? abat : bbat))
    return rt_chk_fail(&c, "y rank %d: expected %d (batch rank %d%s%s)", ry,
                       (abat > bbat ? abat : bbat) + (ra >= 2) + (rb >= 2), abat > bbat ? abat : bbat,
                       ra >= 2 ? " + M" : "", rb >= 2 ? " + N" : "");
  if ((ra >= 2 && y->dims[nbd] != M) || (rb >= 2 && y->dims[ry - 1] != N))
    return rt_chk_fail(&c, "y matrix dims do not match M %lld, N %lld", (long long)M, (long long)N);
  for (int d = nbd - 1, s = 0; d >= 0; d--, s++) {
    int64_t da = s < abat ? a->dims[abat - 1 - s] : 1, db = s < bbat ? b->dims[bbat - 1 - s] : 1;
    int64_t want = da == 1 ? db : da;
    if ((db != 1 && db != da && da != 1) || y->dims[d] != want)
      return rt_chk_fail(&c, "batch dim %d: a %lld and b %lld do not broadcast to y %lld", d, (long long)da,
                         (long long)db, (long long)y->dims[d]);
  }
  if (cc) {
    if (cc->rank > y->rank) return rt_chk_fail(&c, "c rank %u > y rank %u", cc->rank, y->rank);
    for (uint32_t s = 0; s < cc->rank; s++) {
      int64_t dc = cc->dims[cc->rank - 1 - s], dy = y->dims[y->rank - 1 - s];
      if (dc != 1 && dc != dy)
        return rt_chk_fail(&c, "c dims[%u] = %lld does not broadcast to y's %lld", cc->rank - 1 - s,
                           (long long)dc, (long long)dy);
    }
  }

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
  uint64_t batch = 1;
  for (int k = 0; k < nbd; k++)
    batch *= (uint64_t)y->dims[k]; /* <= y's elements: no overflow */
  uint64_t tiles;
  if (mul_u64(batch, (uint64_t)rt_ceil_div(M, tm), &tiles) ||
      mul_u64(tiles, (uint64_t)rt_ceil_div(N, tn), &tiles))
    return rt_chk_fail(&c, "tile count overflows");
  return rt_chk_block_dim(&c, tiles, "tiles");
}
