/* kernels_qmatmul.c - QMATMUL, the int8 matrix product with a run-time x
 * zero point and a float epilogue (contract in om_tasks_cube.h): a
 * dynamically quantized model's MatMulInteger -> Cast -> Mul [-> Add].
 *
 * It is QCONV2D's 1x1 convolution over NHWC rows: x [M, K] is an image of
 * one row of M pixels with K channels, y [M, N] likewise, the weights in
 * QCONV2D's packing. The geometry (kernels_qconv.h) is filled here and the
 * tiles are QCONV2D's (portable, AVX2, AVX-512 VNNI: vpdpbusd is u8 x
 * i8), whose stores take the epilogue rt_qconv_geom's epi names instead
 * of the requantization: the zero point, known only now, enters as
 * -x_zp x the column sums, and the scale is read from its tensor.
 *
 * With a run-time w (format 2.14: two activations, a QDQ model's
 * attention) each block packs, per (batch, column tile) it runs, w's
 * columns as QCONV2D's weights into its core's L1 (u8 w as w - 128, its
 * zero point moved with it, so that the tiles' u8 x i8 products apply),
 * with their column sums; an i8 x is read as x + 128 (xmask), its zero
 * point moved likewise. Then with x' and w' those values and z', v' the
 * zero points, sum (x' - z')(w' - v') = sum x'w' - z' colsum(w') - v'
 * rowsum(x') + K z'v': the tiles' sums plus a term per column (the bias
 * array, in UB) and one per row (rowc, in UB). x is read in place when
 * its rows are contiguous along K and K is a multiple of 4 (the tiles
 * read groups of 4 bytes), else a tile's rows are first copied into L0A,
 * zero padded. Each tile then runs as a 1x1 convolution of its rows
 * (QCONV2D's tile functions) with x, y and the packing rebased to it.
 */
#include "runtime/kernels_qconv.h"

#include "common/matmul_geom.h"
#include "common/quant.h"

void rt_qmatmul_geom_init(const om_task *task, const rt_args *args, rt_qconv_geom *g) {
  const om_tensor *x = args->desc[OM_QMATMUL_T_X], *y = args->desc[OM_QMATMUL_T_Y];
  const om_tensor *s = args->desc[OM_QMATMUL_T_SCALE];
  const int64_t k = x->dims[x->rank - 1], n = y->dims[y->rank - 1],
                m = (int64_t)(rt_elements(y) / (uint64_t)n);
  (void)task;
  memset(g, 0, sizeof *g);
  g->x = args->data[OM_QMATMUL_T_X];
  g->w = args->data[OM_QMATMUL_T_W];
  g->bias = args->data[OM_QMATMUL_T_COLSUM];
  g->y = args->data[OM_QMATMUL_T_Y];
  g->c1in = rt_ceil_div(k, C0), g->h = 1, g->w_ = m;
  g->cout = n, g->c1out = rt_ceil_div(n, C0), g->ho = 1, g->wo = m;
  g->kg = g->c1in * 4;
  g->xis = (size_t)(m * k), g->xps = (size_t)k, g->xbs = C0;
  g->yis = (size_t)(m * n), g->yps = (size_t)n, g->ybs = C0;
  g->kh = g->kw = g->sh = g->sw = g->dh = g->dw = 1;
  const int64_t gd[5] = {1, n, k, 1, 1};
  convg_init(gd, &g->cg);
  g->qtail = (int)((k - (g->c1in - 1) * C0 + 3) / 4);
  g->cin = (int)k;
  g->nzp = -(int32_t) * (const uint8_t *)args->data[OM_QMATMUL_T_X_ZP];
  g->epi = s ? 2 : 1;
  g->scale = s ? args->data[OM_QMATMUL_T_SCALE] : NULL;
  g->sstep = s && rt_elements(s) > 1;
  g->fbias = args->data[OM_QMATMUL_T_BIAS];
}

/* --- a run-time w */

/* The task's product as its tiles see it. */
typedef struct act_geom {
  mm_geom mg;
  int64_t batch, c1, tm, tn, mt, nt, k4;
  uint8_t xmask, wmask; /* 0x80: i8 x read as u8; u8 w read as i8 */
  int32_t xz, wz;       /* the zero points of x' and w' */
  int copy;             /* x's rows are copied (not contiguous along K, or K % 4) */
  int ydt;              /* y's dtype */
  int32_t yzp, lo, hi;  /* a u8 / i8 y's requantization */
} act_geom;

static void act_init(const om_task *task, const rt_args *args, act_geom *a) {
  const om_tensor *x = args->desc[OM_QMATMUL_T_X], *w = args->desc[OM_QMATMUL_T_W],
                  *y = args->desc[OM_QMATMUL_T_Y];
  const int32_t *q = task->params;
  int pa[MAX_RANK], pb[MAX_RANK];
  mm_perm_decode(q[OM_QMATMUL_P_PERM_A], (int)x->rank, pa); /* checked at load */
  mm_perm_decode(q[OM_QMATMUL_P_PERM_B], (int)w->rank, pb);
  const mm_operand oa = {(int)x->rank, x->dims, pa, 0}, ob = {(int)w->rank, w->dims, pb, 0};
  mm_geom_init(&oa, &ob, 0, -1, NULL, (int)y->rank, y->dims, &a->mg);
  a->batch = 1;
  for (int d = 0; d < a->mg.nbd; d++)
    a->batch *= a->mg.bdims[d];
  a->c1 = rt_ceil_div(a->mg.n, C0);
  a->tm = q[OM_QMATMUL_P_TILE_M], a->tn = q[OM_QMATMUL_P_TILE_N];
  a->mt = rt_ceil_div(a->mg.m, a->tm), a->nt = rt_ceil_div(a->c1, a->tn);
  a->k4 = rt_ceil_div(a->mg.k, 4) * 4;
  a->xmask = x->dtype == DT_INT8 ? 0x80 : 0, a->wmask = w->dtype == DT_UINT8 ? 0x80 : 0;
  const int32_t xz = x->dtype == DT_INT8 ? *(const int8_t *)args->data[OM_QMATMUL_T_X_ZP]
                                         : *(const uint8_t *)args->data[OM_QMATMUL_T_X_ZP];
  a->xz = xz + (a->xmask ? 128 : 0), a->wz = q[OM_QMATMUL_P_W_ZP] - (a->wmask ? 128 : 0);
  a->copy = a->mg.a_sk != 1 || a->mg.k % 4;
  a->ydt = (int)y->dtype;
  a->yzp = q[OM_QMATMUL_P_Y_ZP], a->lo = q[OM_QMATMUL_P_LO], a->hi = q[OM_QMATMUL_P_HI];
}

/* The task's bytes of L1 (w's packing), L0A (x's copied rows) and UB (the
 * column terms, the scales, the row terms). */
static void act_bytes(const act_geom *a, uint64_t *l1, uint64_t *l0a, uint64_t *ub) {
  *l1 = (uint64_t)a->tn * C0 * (uint64_t)rt_ceil_div(a->mg.k, C0) * C0;
  *l0a = a->copy ? (uint64_t)a->tm * (uint64_t)a->k4 : 0;
  *ub = (uint64_t)a->tn * C0 * 8 + (uint64_t)a->tm * 4;
}

/* Packs w's columns [n0, n0 + cols) of the matrix at w + ob into dst as
 * QCONV2D's [nbn][KG][16][4] (zeros past K and cols), as i8 (w ^ wmask),
 * and sets bias[j] = -z' colsum[j] + K z' v' (wrapping) for j < nbn*16.
 * The walk follows w's contiguous axis: with N contiguous (attention's P x
 * V) 4 rows at a time, each column's 4 bytes one dword, the column sums a
 * loop along each row; with K contiguous (Q x K^T) column by column, 4
 * bytes of K at a time; else byte by byte.
 * The column sums are kept in bias (as u32) until the last step. */
static void act_pack(const act_geom *a, const uint8_t *w, int64_t ob, int64_t n0, int64_t cols, int8_t *dst,
                     int32_t *bias) {
  const int64_t k = a->mg.k, kg = rt_ceil_div(k, C0) * 4, nbn = rt_ceil_div(cols, C0);
  const int64_t sk = a->mg.b_sk, sn = a->mg.b_sn, blk = kg * C0 * 4; /* bytes per packed column block */
  const uint8_t m = a->wmask, *w0 = w + ob + n0 * sn;
  uint32_t *cs = (uint32_t *)(void *)bias;
  memset(dst, 0, (size_t)(nbn * blk));
  memset(cs, 0, (size_t)(nbn * C0) * sizeof *cs);
  const uint32_t m4 = m * 0x01010101u;
  if (sn == 1) {
    for (int64_t i = 0; i < k; i++) {
      const uint8_t *src = w0 + i * sk;
      for (int64_t j = 0; j < cols; j++)
        cs[j] += (uint32_t)(int32_t)(int8_t)(src[j] ^ m);
    }
    int64_t i = 0;
    for (; i + 4 <= k; i += 4) { /* a group of 4 rows: each column's 4 bytes, one dword */
      const uint8_t *s0 = w0 + i * sk, *s1 = s0 + sk, *s2 = s1 + sk, *s3 = s2 + sk;
      for (int64_t jb = 0; jb * C0 < cols; jb++) {
        int8_t *d = dst + jb * blk + i * C0;
        const int64_t j0 = jb * C0, n = cols - j0 < C0 ? cols - j0 : C0;
        for (int64_t j = 0; j < n; j++) {
          const uint32_t v = ((uint32_t)s0[j0 + j] | (uint32_t)s1[j0 + j] << 8 | (uint32_t)s2[j0 + j] << 16 |
                              (uint32_t)s3[j0 + j] << 24) ^
                             m4;
          memcpy(d + j * 4, &v, 4);
        }
      }
    }
    for (; i < k; i++) { /* K's last rows past a multiple of 4 */
      const uint8_t *src = w0 + i * sk;
      int8_t *d = dst + (i / 4) * C0 * 4 + i % 4;
      for (int64_t j = 0; j < cols; j++)
        d[(j / C0) * blk + (j % C0) * 4] = (int8_t)(src[j] ^ m);
    }
  } else {
    for (int64_t j = 0; j < cols; j++) {
      const uint8_t *src = w0 + j * sn;
      int8_t *d = dst + (j / C0) * blk + (j % C0) * 4;
      int64_t i = 0;
      if (sk == 1) {
        for (; i + 4 <= k; i += 4) {
          uint32_t v;
          memcpy(&v, src + i, 4);
          v ^= m4;
          memcpy(d + i * C0, &v, 4);
        }
        uint32_t s = 0;
        for (int64_t r = 0; r < i; r++)
          s += (uint32_t)(int32_t)(int8_t)(src[r] ^ m);
        cs[j] = s;
      }
      for (; i < k; i++) {
        const int8_t v = (int8_t)(src[i * sk] ^ m);
        d[(i / 4) * C0 * 4 + i % 4] = v;
        cs[j] += (uint32_t)(int32_t)v;
      }
    }
  }
  const uint32_t kzv = (uint32_t)k * (uint32_t)a->xz * (uint32_t)a->wz;
  for (int64_t j = 0; j < nbn * C0; j++)
    bias[j] = (int32_t)(kzv - (uint32_t)a->xz * cs[j]);
}

/* Tile t of the task (act_geom's order: batch, column tile, row tile). */
static void act_tile(const act_geom *a, const rt_args *args, uint64_t t, rt_core *core,
                     rt_qconv_tile_fn tile) {
  const int64_t bt = (int64_t)(t / (uint64_t)(a->nt * a->mt)), ni = (int64_t)(t / (uint64_t)a->mt) % a->nt,
                mi = (int64_t)(t % (uint64_t)a->mt);
  const mm_geom *mg = &a->mg;
  int64_t oa = 0, ob = 0, rem = bt;
  for (int d = mg->nbd - 1; d >= 0; d--) {
    const int64_t i = rem % mg->bdims[d];
    rem /= mg->bdims[d];
    oa += i * mg->sa[d], ob += i * mg->sb[d];
  }
  const int64_t n0 = ni * a->tn * C0, cols = mg->n - n0 < a->tn * C0 ? mg->n - n0 : a->tn * C0,
                m0 = mi * a->tm, rows = mg->m - m0 < a->tm ? mg->m - m0 : a->tm, nbn = rt_ceil_div(cols, C0);
  int32_t *bias = (int32_t *)(void *)core->ub, *rowc = bias + a->tn * C0 * 2;
  float *mult = (float *)(void *)(bias + a->tn * C0);
  if (!rt_l1_holds(core, args->data[OM_QMATMUL_T_W], bt, ni, OM_TASK_QMATMUL)) {
    act_pack(a, args->data[OM_QMATMUL_T_W], ob, n0, cols, (int8_t *)core->l1, bias);
    const float s = args->data[OM_QMATMUL_T_SCALE] ? *(const float *)args->data[OM_QMATMUL_T_SCALE] : 0.0f;
    for (int64_t j = 0; j < nbn * C0; j++)
      mult[j] = s;
  }
  const uint8_t *x = (const uint8_t *)args->data[OM_QMATMUL_T_X] + oa + m0 * mg->a_sm;
  size_t xps = (size_t)mg->a_sm;
  if (a->copy) { /* rows of k4 bytes in L0A, zero padded */
    uint8_t *rows_buf = core->l0a;
    for (int64_t r = 0; r < rows; r++) {
      for (int64_t i = 0; i < mg->k; i++)
        rows_buf[r * a->k4 + i] = x[r * mg->a_sm + i * mg->a_sk];
      for (int64_t i = mg->k; i < a->k4; i++)
        rows_buf[r * a->k4 + i] = (uint8_t)a->xmask; /* x' = 0 there: w' is 0 too */
    }
    x = rows_buf, xps = (size_t)a->k4;
  }
  for (int64_t r = 0; r < rows && a->wz; r++) { /* -v' rowsum(x') */
    uint32_t sum = 0;
    for (int64_t i = 0; i < mg->k; i++)
      sum += (uint32_t)(x[(size_t)r * xps + (size_t)i] ^ a->xmask);
    rowc[r] = (int32_t)(0u - (uint32_t)a->wz * sum);
  }
  rt_qconv_geom g;
  memset(&g, 0, sizeof g);
  g.x = x, g.w = (const int8_t *)core->l1, g.bias = bias, g.mult = mult;
  g.y = (uint8_t *)args->data[OM_QMATMUL_T_Y] +
        (size_t)((bt * mg->m + m0) * mg->n + n0) * (a->ydt == DT_UINT8 || a->ydt == DT_INT8 ? 1 : 4);
  g.c1in = rt_ceil_div(mg->k, C0), g.h = 1, g.w_ = rows;
  g.cout = cols, g.c1out = nbn, g.ho = 1, g.wo = rows;
  g.kg = g.c1in * 4;
  g.xis = 0, g.xps = xps, g.xbs = C0;
  g.yis = 0, g.yps = (size_t)mg->n, g.ybs = C0;
  g.kh = g.kw = g.sh = g.sw = g.dh = g.dw = 1;
  const int64_t gd[5] = {1, cols, mg->k, 1, 1};
  convg_init(gd, &g.cg);
  g.qtail = (int)((mg->k - (g.c1in - 1) * C0 + 3) / 4);
  g.cin = (int)mg->k;
  g.xmask = a->xmask;
  g.rowc = a->wz ? rowc : NULL;
  g.nzp = 1, g.scale = mult;
  if (a->ydt == DT_INT32 || a->ydt == DT_FLOAT32)
    g.epi = a->ydt == DT_INT32 ? 1 : 2;
  else
    g.yzp = a->yzp, g.lo = g.clo = a->lo, g.hi = g.chi = a->hi, g.ycut = 1;
  tile(&g, 0, 0, rows, 0, nbn);
}

static void act_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  act_geom a;
  act_init(task, args, &a);
  const rt_cpu_paths *cpu = rt_cpu();
  const rt_qconv_tile_fn tile = cpu->qconv_tile ? cpu->qconv_tile : rt_qconv_tile_c;
  uint64_t lo, hi;
  rt_block_range((uint64_t)(a.batch * a.nt * a.mt), task->block_dim, block, &lo, &hi);
  for (uint64_t t = lo; t < hi; t++)
    act_tile(&a, args, t, core, tile);
}

void rt_qmatmul_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  if (!args->data[OM_QMATMUL_T_COLSUM]) {
    act_run(task, args, block, core);
    return;
  }
  rt_qconv_geom g;
  rt_qmatmul_geom_init(task, args, &g);
  const int64_t tm = task->params[OM_QMATMUL_P_TILE_M], tn = task->params[OM_QMATMUL_P_TILE_N];
  const int64_t mt = rt_ceil_div(g.wo, tm), nt = rt_ceil_div(g.c1out, tn);
  const rt_cpu_paths *cpu = rt_cpu();
  const rt_qconv_tile_fn tile = cpu->qconv_tile ? cpu->qconv_tile : rt_qconv_tile_c;
  uint64_t lo, hi;
  rt_block_range((uint64_t)(mt * nt), task->block_dim, block, &lo, &hi);
  for (uint64_t t = lo; t < hi; t++) {
    const int64_t mi = (int64_t)t / nt, ni = (int64_t)t % nt, p0 = mi * tm, nb0 = ni * tn;
    tile(&g, 0, p0, p0 + tm < g.wo ? p0 + tm : g.wo, nb0, nb0 + tn < g.c1out ? nb0 + tn : g.c1out);
  }
}

/* The load-time check of a run-time w (om_tasks_cube.h). */
static omrt_status act_check(const rt_chk *c) {
  const om_task *task = c->task;
  const int32_t *q = task->params;
  const om_tensor *x, *w, *z, *s, *b, *y;
  const uint32_t q8 = RT_DT(DT_UINT8) | RT_DT(DT_INT8);
  omrt_status st;
  if ((st = rt_chk_tensor_of(c, OM_QMATMUL_T_X, "x", 0, LAYOUT_ND, -1, q8, &x)) ||
      (st = rt_chk_tensor_of(c, OM_QMATMUL_T_W, "w", 0, LAYOUT_ND, -1, q8, &w)) ||
      (st = rt_chk_tensor_of(c, OM_QMATMUL_T_X_ZP, "x_zp", 0, LAYOUT_ND, -1, RT_DT(x->dtype), &z)) ||
      (st = rt_chk_tensor_of(c, OM_QMATMUL_T_SCALE, "scale", 1, LAYOUT_ND, -1, RT_DT(DT_FLOAT32), &s)) ||
      (st = rt_chk_tensor_of(c, OM_QMATMUL_T_BIAS, "bias", 1, LAYOUT_ND, 1, RT_DT(DT_FLOAT32), &b)) ||
      (st = rt_chk_tensor_of(c, OM_QMATMUL_T_Y, "y", 0, LAYOUT_ND, -1,
                             s ? RT_DT(DT_FLOAT32) | q8 : RT_DT(DT_INT32), &y)))
    return st;
  if (b) return rt_chk_fail(c, "a bias with a run-time w (colsum absent)");
  if (rt_elements(z) != 1 || (s && rt_elements(s) != 1))
    return rt_chk_fail(c, "x_zp and scale have %llu and %llu elements, expected 1",
                       (unsigned long long)rt_elements(z), s ? (unsigned long long)rt_elements(s) : 1ULL);
  int32_t lo, hi;
  q_range((int)w->dtype, &lo, &hi);
  if (q[OM_QMATMUL_P_W_ZP] < lo || q[OM_QMATMUL_P_W_ZP] > hi)
    return rt_chk_fail(c, "params[%d] w_zp = %d outside w's range", OM_QMATMUL_P_W_ZP, q[OM_QMATMUL_P_W_ZP]);
  const int yq = y->dtype == DT_UINT8 || y->dtype == DT_INT8;
  q_range(yq ? (int)y->dtype : DT_UINT8, &lo, &hi);
  if (yq ? q[OM_QMATMUL_P_Y_ZP] < lo || q[OM_QMATMUL_P_Y_ZP] > hi || q[OM_QMATMUL_P_LO] < lo ||
               q[OM_QMATMUL_P_HI] > hi || q[OM_QMATMUL_P_LO] > q[OM_QMATMUL_P_HI]
         : q[OM_QMATMUL_P_Y_ZP] || q[OM_QMATMUL_P_LO] || q[OM_QMATMUL_P_HI])
    return rt_chk_fail(c, "params y_zp %d, lo %d, hi %d: in y's range with lo <= hi (u8 / i8 y), else 0",
                       q[OM_QMATMUL_P_Y_ZP], q[OM_QMATMUL_P_LO], q[OM_QMATMUL_P_HI]);
  const int ra = (int)x->rank, rb = (int)w->rank, ry = (int)y->rank;
  int pa[MAX_RANK], pb[MAX_RANK];
  if (ra < 2 || rb < 2 || mm_perm_decode(q[OM_QMATMUL_P_PERM_A], ra, pa) ||
      mm_perm_decode(q[OM_QMATMUL_P_PERM_B], rb, pb))
    return rt_chk_fail(c, "x rank %d, w rank %d (>= 2), perm_a %#x, perm_b %#x: permutations of them", ra, rb,
                       (unsigned)q[OM_QMATMUL_P_PERM_A], (unsigned)q[OM_QMATMUL_P_PERM_B]);
  const mm_operand oa = {ra, x->dims, pa, 0}, ob = {rb, w->dims, pb, 0};
  int64_t ad[MAX_RANK], bd[MAX_RANK];
  mm_logical(&oa, ad, NULL);
  mm_logical(&ob, bd, NULL);
  const int64_t k = ad[ra - 1];
  if (bd[rb - 2] != k || k < 1 || k > OM_QMATMUL_MAX_K_ACT || ad[ra - 2] < 1 || bd[rb - 1] < 1)
    return rt_chk_fail(c, "x's K %lld, w's K %lld: equal, 1..%d; M and N >= 1", (long long)k,
                       (long long)bd[rb - 2], OM_QMATMUL_MAX_K_ACT);
  const int nbd = (ra > rb ? ra : rb) - 2;
  if (ry != nbd + 2 || y->dims[ry - 2] != ad[ra - 2] || y->dims[ry - 1] != bd[rb - 1])
    return rt_chk_fail(c, "y rank %d dims: expected rank %d, [.., %lld, %lld]", ry, nbd + 2,
                       (long long)ad[ra - 2], (long long)bd[rb - 1]);
  for (int d = 0; d < nbd; d++) {
    const int ia = d - (nbd - (ra - 2)), ib = d - (nbd - (rb - 2));
    const int64_t da = ia >= 0 ? ad[ia] : 1, db = ib >= 0 ? bd[ib] : 1;
    if ((da != db && da != 1 && db != 1) || y->dims[d] != (da == 1 ? db : da))
      return rt_chk_fail(c, "batch dim %d: x %lld and w %lld do not broadcast to y %lld", d, (long long)da,
                         (long long)db, (long long)y->dims[d]);
  }
  const int32_t tm = q[OM_QMATMUL_P_TILE_M], tn = q[OM_QMATMUL_P_TILE_N];
  if (tm < 1 || tn < 1) return rt_chk_fail(c, "tile_m %d and tile_n %d must be >= 1", tm, tn);
  rt_args args = {0};
  for (int j = 0; j < OM_QMATMUL_NTENSORS; j++)
    args.desc[j] = task->tensors[j] == OM_NONE ? NULL : &c->m->tensors[task->tensors[j]];
  static const uint8_t zero[1];
  args.data[OM_QMATMUL_T_X_ZP] = (void *)zero; /* act_init reads it; its value does not matter here */
  act_geom a;
  act_init(task, &args, &a);
  uint64_t l1, l0a, ub;
  act_bytes(&a, &l1, &l0a, &ub);
  const om_model_def *d = c->m->def;
  if (l1 > d->l1_bytes || l0a > d->l0a_bytes || ub > d->ub_bytes)
    return rt_chk_fail(
        c, "tile_m %d, tile_n %d need %llu, %llu and %llu bytes of L1, L0A and UB, capacity %u, %u, %u", tm,
        tn, (unsigned long long)l1, (unsigned long long)l0a, (unsigned long long)ub, d->l1_bytes,
        d->l0a_bytes, d->ub_bytes);
  return rt_chk_block_dim(c, (uint64_t)(a.batch * a.nt * a.mt), "tiles");
}

omrt_status rt_qmatmul_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "QMATMUL"};
  const om_tensor *x, *w, *cs, *z, *s, *b, *y;
  omrt_status st;
  if ((st = rt_chk_ntensors(&c, OM_QMATMUL_NTENSORS))) return st;
  if (task->tensors[OM_QMATMUL_T_COLSUM] == OM_NONE) return act_check(&c);
  for (int k = OM_QMATMUL_P_W_ZP; k < OM_QMATMUL_NPARAMS; k++)
    if (task->params[k])
      return rt_chk_fail(&c, "params[%d] = %d with a packed w: expected 0", k, task->params[k]);
  if ((st = rt_chk_tensor_of(&c, OM_QMATMUL_T_X, "x", 0, LAYOUT_ND, -1, RT_DT(DT_UINT8), &x)) ||
      (st = rt_chk_tensor_of(&c, OM_QMATMUL_T_W, "w", 0, LAYOUT_ND, 4, RT_DT(DT_INT8), &w)) ||
      (st = rt_chk_tensor_of(&c, OM_QMATMUL_T_COLSUM, "colsum", 0, LAYOUT_ND, 1, RT_DT(DT_INT32), &cs)) ||
      (st = rt_chk_tensor_of(&c, OM_QMATMUL_T_X_ZP, "x_zp", 0, LAYOUT_ND, -1, RT_DT(DT_UINT8), &z)) ||
      (st = rt_chk_tensor_of(&c, OM_QMATMUL_T_SCALE, "scale", 1, LAYOUT_ND, -1, RT_DT(DT_FLOAT32), &s)) ||
      (st = rt_chk_tensor_of(&c, OM_QMATMUL_T_BIAS, "bias", 1, LAYOUT_ND, 1, RT_DT(DT_FLOAT32), &b)) ||
      (st =
           rt_chk_tensor_of(&c, OM_QMATMUL_T_Y, "y", 0, LAYOUT_ND, -1, RT_DT(s ? DT_FLOAT32 : DT_INT32), &y)))
    return st;
  if (x->rank < 1 || y->rank != x->rank)
    return rt_chk_fail(&c, "x and y have ranks %u and %u, expected one rank >= 1", x->rank, y->rank);
  for (uint32_t d = 0; d + 1 < x->rank; d++)
    if (x->dims[d] != y->dims[d])
      return rt_chk_fail(&c, "y dim %u = %lld, x's %lld: y is x's dims with the last N", d,
                         (long long)y->dims[d], (long long)x->dims[d]);
  const int64_t k = x->dims[x->rank - 1], n = y->dims[y->rank - 1], c1out = rt_ceil_div(n, C0);
  if (k < 1 || n < 1 || k % 4 || k > OM_QCONV_MAX_K)
    return rt_chk_fail(&c, "K = %lld and N = %lld: K a multiple of 4 up to %d, N >= 1", (long long)k,
                       (long long)n, OM_QCONV_MAX_K);
  if (w->dims[0] != c1out || w->dims[1] != rt_ceil_div(k, C0) * 4 || w->dims[2] != C0 || w->dims[3] != 4)
    return rt_chk_fail(&c, "w dims [%lld, %lld, %lld, %lld], expected [%lld, %lld, 16, 4]",
                       (long long)w->dims[0], (long long)w->dims[1], (long long)w->dims[2],
                       (long long)w->dims[3], (long long)c1out, (long long)(rt_ceil_div(k, C0) * 4));
  if (cs->dims[0] != c1out * C0 || (b && b->dims[0] != c1out * C0))
    return rt_chk_fail(&c, "colsum and bias have %lld and %lld elements, expected %lld",
                       (long long)cs->dims[0], b ? (long long)b->dims[0] : 0LL, (long long)(c1out * C0));
  if (rt_elements(z) != 1)
    return rt_chk_fail(&c, "x_zp has %llu elements, expected 1", (unsigned long long)rt_elements(z));
  if (s && rt_elements(s) != 1 && (rt_elements(s) != (uint64_t)n || s->dims[s->rank - 1] != n))
    return rt_chk_fail(&c, "scale has %llu elements, expected 1 or N = %lld",
                       (unsigned long long)rt_elements(s), (long long)n);
  if (b && !s) return rt_chk_fail(&c, "a bias without a scale (y i32)");
  const int32_t tm = task->params[OM_QMATMUL_P_TILE_M], tn = task->params[OM_QMATMUL_P_TILE_N];
  if (tm < 1 || tn < 1) return rt_chk_fail(&c, "tile_m %d and tile_n %d must be >= 1", tm, tn);
  const uint64_t rows = rt_elements(y) / (uint64_t)n;
  return rt_chk_block_dim(&c, rt_ceil_div((int64_t)rows, tm) * (uint64_t)rt_ceil_div(c1out, tn), "tiles");
}
