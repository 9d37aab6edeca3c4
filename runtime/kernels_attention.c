/* kernels_attention.c - ATTENTION: softmax(scale * q k^T + biases, masked)
 * v in one task, the scores never leaving the AI core (contract in
 * om_format.h).
 *
 * A tile is one batch's tile_q query rows. Their q rows are staged once in
 * L0A ([row][D] f32). The keys go by in blocks of tile_kv, each in two cube
 * products and a vector pass between them (online softmax):
 *   1. the block's k rows into L0B as 16-key panels ([key block][D][16]),
 *      and S = q k^T into L0C ([key block][row][16] f32 accumulators);
 *   2. per row, in the UB: the row of S scaled, the biases added, the keys
 *      causal hides set to -inf; its max m' against the running max m;
 *      p = exp(s - m') (the vector unit's om_vexp) summed into the running
 *      sum l after l is rescaled by exp(m - m'), and the row's output
 *      accumulators rescaled by the same factor; p rounded to q's dtype
 *      (the cube's operand; on AVX-512 hosts as the exp stores it,
 *      rt_cpu()->vexp_sum_r16);
 *   3. the block's v rows into L0B as 16-column panels ([column
 *      block][key][16]), and O += p v into L0C ([column block][row][16]).
 * After the last block, y = O / l, a row whose every score was -inf giving
 * 0 (zero_masked) or NaN. With causal, blocks past the last key the tile's
 * last row sees are never loaded.
 *
 * The products go through the cube's micro-kernel (MATMUL's
 * rt_cube_gemm_x86 of kernels_cube_x86.c on x86 hosts, else the portable
 * 16-lane rows), the row work through the vector unit's row instructions
 * (kernels_norm.c); staging converts f16 with rt_vload. The x86
 * micro-kernel reads f16 or f32 B rows with any stride, as it reads
 * MATMUL's FRACTAL_NZ panels, so there steps 1 and 3 load nothing: k^T's
 * rows (16 keys of one d) and v's rows (16 columns of one key) are its B
 * rows in place, and only a last partial block of keys or columns (and k
 * stored as [Skv, D]: on AVX-512 hosts 16 keys at a time, transposed in
 * registers, rt_cpu()->attn_stage_k) is staged. The sums are the same, in the same
 * order. q's rows come in, and y's go out, as one run each (a tile's rows
 * are consecutive) unless the operand is a view (om_format.h: a head of
 * the in-projection's output, read row by row with its row stride; y
 * written into the out-projection's input likewise); k and v rows are
 * addressed with their row stride in any case. Everything is in f32 but the fp16 operands, so results
 * differ between the kernel paths only by f32 summation order.
 */
#include <math.h>

#include "common/vmath.h"
#include "runtime/kernels.h"

/* The task decoded: operands, dims, strides along y's batch dims. */
typedef struct attn_geom {
  const void *q, *k, *v, *bias[2];
  void *y;
  int qt, bt[2], yt;
  int64_t sq, skv, d, dv, dv16;
  int nbd;
  int64_t bdims[MAX_RANK];
  int64_t sq_b[MAX_RANK], sk_b[MAX_RANK], sv_b[MAX_RANK], sy_b[MAX_RANK]; /* per batch dim; 0: broadcast */
  int64_t sb_b[2][MAX_RANK];
  int64_t q_rs, k_rs, v_rs, y_rs; /* element steps between the rows of q, k (as stored), v and y */
  int64_t b_si[2], b_sj[2];       /* bias strides along Sq, Skv */
  int k_trans, causal, zero_masked;
  int in_place; /* k^T and v read in place by the micro-kernel (f16 or f32, x86) */
  int64_t causal_offset;
  float scale;
  int64_t tq, tkv, qtiles;
} attn_geom;

/* Strides of t along y's nbd batch dims (right-aligned, 0 where t's dim
 * is 1 or missing) into sb; the strides of t's last two dims into *s_row,
 * *s_col when t is a bias (matrix 0). */
static void batch_strides(const om_tensor *t, int nbd, int matrix, int64_t *sb, int64_t *s_row,
                          int64_t *s_col) {
  const int r = (int)t->rank;
  int64_t step = 1;
  for (int i = 0; i < nbd; i++)
    sb[i] = 0;
  if (s_row) *s_row = *s_col = 0;
  for (int j = r - 1, at = nbd + 1; j >= 0; j--, at--) {
    int64_t s = t->dims[j] == 1 ? 0 : step;
    if (at >= nbd) {
      if (!matrix) *(at == nbd ? s_row : s_col) = s;
    } else if (at >= 0) {
      sb[at] = s;
    }
    step *= t->dims[j];
  }
}

/* The batch strides (into sb) and row stride of operand t: its view's
 * (OM_ATTENTION_P_VIEW) when the task's views bit says so, else C order's. */
static void operand_strides(const om_task *task, const om_tensor *t, int v, int nbd, int64_t *sb,
                            int64_t *row) {
  const int r = (int)t->rank;
  if (!(task->params[OM_ATTENTION_P_VIEWS] >> v & 1)) {
    batch_strides(t, nbd, 1, sb, NULL, NULL);
    *row = t->dims[r - 1];
    return;
  }
  const int32_t *st = task->params + OM_ATTENTION_P_VIEW + 4 * v;
  for (int i = 0; i < nbd; i++)
    sb[i] = 0;
  for (int j = 0; j < r - 2; j++) /* right-aligned to y's batch dims */
    sb[nbd - (r - 2) + j] = t->dims[j] == 1 ? 0 : st[j];
  *row = st[r - 2];
}

static void geom_init(const om_task *task, const rt_args *args, attn_geom *g) {
  const om_tensor *q = args->desc[OM_ATTENTION_T_Q], *k = args->desc[OM_ATTENTION_T_K];
  const om_tensor *v = args->desc[OM_ATTENTION_T_V], *y = args->desc[OM_ATTENTION_T_Y];
  const int32_t *p = task->params;
  *g = (attn_geom){.q = args->data[OM_ATTENTION_T_Q],
                   .k = args->data[OM_ATTENTION_T_K],
                   .v = args->data[OM_ATTENTION_T_V],
                   .y = args->data[OM_ATTENTION_T_Y],
                   .qt = (int)q->dtype,
                   .yt = (int)y->dtype,
                   .k_trans = p[OM_ATTENTION_P_K_TRANS] != 0,
                   .causal = p[OM_ATTENTION_P_CAUSAL] != 0,
                   .zero_masked = p[OM_ATTENTION_P_ZERO_MASKED] != 0,
                   .causal_offset = p[OM_ATTENTION_P_CAUSAL_OFFSET],
                   .scale = rt_param_f32(p[OM_ATTENTION_P_SCALE]),
                   .tq = p[OM_ATTENTION_P_TILE_Q],
                   .tkv = p[OM_ATTENTION_P_TILE_KV]};
  g->sq = q->dims[q->rank - 2], g->d = q->dims[q->rank - 1];
  g->skv = v->dims[v->rank - 2], g->dv = v->dims[v->rank - 1];
  g->dv16 = rt_ceil_div(g->dv, C0) * C0;
  g->nbd = (int)y->rank - 2;
  for (int i = 0; i < g->nbd; i++)
    g->bdims[i] = y->dims[i];
  operand_strides(task, q, OM_ATTENTION_V_Q, g->nbd, g->sq_b, &g->q_rs);
  operand_strides(task, k, OM_ATTENTION_V_K, g->nbd, g->sk_b, &g->k_rs);
  operand_strides(task, v, OM_ATTENTION_V_V, g->nbd, g->sv_b, &g->v_rs);
  operand_strides(task, y, OM_ATTENTION_V_Y, g->nbd, g->sy_b, &g->y_rs);
  for (int b = 0; b < 2; b++) {
    const om_tensor *t = args->desc[OM_ATTENTION_T_BIAS0 + b];
    g->bias[b] = args->data[OM_ATTENTION_T_BIAS0 + b];
    if (t) {
      g->bt[b] = (int)t->dtype;
      batch_strides(t, g->nbd, 0, g->sb_b[b], &g->b_si[b], &g->b_sj[b]);
    }
  }
  g->qtiles = rt_ceil_div(g->sq, g->tq);
  g->in_place = rt_cpu()->gemm16 && (g->qt == DT_FLOAT16 || g->qt == DT_FLOAT32);
}

/* A B operand of the cube: n block nb's row k at b + nb * nbstride + k *
 * brow bytes, 16 lanes, f16 when bh, else f32. k and v read in place, or
 * staged in L0B ([block][k][16] f32: brow 64 bytes). */
typedef struct attn_b {
  const void *b;
  int bh;
  size_t brow, nbstride; /* bytes */
} attn_b;

/* c[nb*cstride + m*16 ..+16] (+)= sum_k a[m*lda + k] * B[nb][k][0..16) for
 * m < rows, nb < nblocks. On x86 hosts through MATMUL's micro-kernel
 * (rt_cube_gemm_x86: twelve rows against pairs of blocks on AVX-512),
 * GEMM_NB blocks a call (its out[] has one zero write-back per block: the
 * sums stay in L0C); else the portable rows, on staged operands only. */
enum { GEMM_NB = 32 };
static void gemm16(const float *a, size_t lda, int64_t rows, size_t klen, const attn_b *b, int64_t nblocks,
                   float *c, size_t cstride, int first) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (rt_cpu()->gemm16) {
    static const rt_mk_out none[GEMM_NB];
    for (int64_t nb = 0; nb < nblocks; nb += GEMM_NB)
      rt_cube_gemm_x86(a, lda, rows, klen, (const uint8_t *)b->b + (size_t)nb * b->nbstride, b->bh, b->brow,
                       b->nbstride, nblocks - nb < GEMM_NB ? nblocks - nb : GEMM_NB, c + nb * cstride,
                       cstride, first, none, NULL);
    return;
  }
#endif
  for (int64_t nb = 0; nb < nblocks; nb++) {
    const float *bp = (const float *)((const uint8_t *)b->b + (size_t)nb * b->nbstride);
    float *cp = c + nb * cstride;
    if (first) memset(cp, 0, (size_t)rows * C0 * sizeof *cp);
    int64_t m = 0;
    for (; m + 2 <= rows; m += 2)
      rt_mmad16_2(a + m * lda, (int64_t)lda, (int64_t)klen, bp, cp + m * C0);
    if (m < rows) rt_mmad16_1(a + m * lda, (int64_t)klen, bp, cp + m * C0);
  }
}

/* L0B[nb][d][16] = k[kc + nb*16 + j][d] for the block's keys (zero past
 * them): the B operand of q k^T. `row` is a staging row of the UB. */
static void stage_k(const attn_geom *g, int64_t ok, int64_t kc, int64_t cols, float *l0b, float *row) {
  const int64_t nbk = rt_ceil_div(cols, C0), d = g->d;
  if (cols % C0) memset(l0b + (nbk - 1) * d * C0, 0, (size_t)(d * C0) * sizeof *l0b);
  if (g->k_trans) { /* k^T [D][Skv]: 16 keys of a d row are one panel row */
    for (int64_t nb = 0; nb < nbk; nb++) {
      const int64_t lanes = cols - nb * C0 < C0 ? cols - nb * C0 : C0;
      for (int64_t c = 0; c < d; c++)
        rt_vload(l0b + (nb * d + c) * C0, g->k, g->qt, (size_t)(ok + c * g->k_rs + kc + nb * C0),
                 (size_t)lanes);
    }
    return;
  }
  int64_t j = 0;
  const rt_cpu_paths *cpu = rt_cpu();
  if (cpu->attn_stage_k &&
      (g->qt == DT_FLOAT16 || g->qt == DT_FLOAT32)) /* k [Skv][D]: 16 keys transposed at once */
    for (; j + C0 <= cols; j += C0)
      cpu->attn_stage_k(l0b + (j / C0) * d * C0, g->k, g->qt == DT_FLOAT16, (size_t)(ok + (kc + j) * g->k_rs),
                        (size_t)g->k_rs, (size_t)d);
  for (; j < cols; j++) { /* k [Skv][D]: one key's row, scattered down its lane */
    rt_vload(row, g->k, g->qt, (size_t)(ok + (kc + j) * g->k_rs), (size_t)d);
    float *dst = l0b + (j / C0) * d * C0 + j % C0;
    for (int64_t c = 0; c < d; c++)
      dst[c * C0] = row[c];
  }
}

/* L0B[nb - nb0][j][16] = v[kc + j][nb*16 + lane] for the column blocks nb
 * from nb0 (zero past Dv): the B operand of p v. */
static void stage_v(const attn_geom *g, int64_t ov, int64_t kc, int64_t cols, int64_t nb0, float *l0b) {
  const int64_t nbv = g->dv16 / C0, tail = g->dv - (nbv - 1) * C0;
  for (int64_t nb = nb0; nb < nbv; nb++) {
    const int64_t lanes = nb == nbv - 1 ? tail : C0;
    float *dst = l0b + (nb - nb0) * cols * C0;
    if (lanes < C0) memset(dst, 0, (size_t)(cols * C0) * sizeof *dst);
    for (int64_t j = 0; j < cols; j++)
      rt_vload(dst + j * C0, g->v, g->qt, (size_t)(ov + (kc + j) * g->v_rs + nb * C0), (size_t)lanes);
  }
}

/* S = q k^T for the keys [kc, kc + cols): whole 16-key blocks of k^T read
 * in place when the micro-kernel can (g->in_place), the rest staged. */
static void scores(const attn_geom *g, const float *qa, int64_t rows, int64_t ok, int64_t kc, int64_t cols,
                   float *l0b, float *row, float *s) {
  const int64_t nbk = rt_ceil_div(cols, C0), d = g->d;
  const size_t cstride = (size_t)(g->tq * C0), es = dtype_size(g->qt);
  int64_t done = 0;
  if (g->in_place && g->k_trans) {
    done = cols / C0;
    const attn_b kb = {(const uint8_t *)g->k + (size_t)(ok + kc) * es, g->qt == DT_FLOAT16,
                       (size_t)g->k_rs * es, C0 * es};
    gemm16(qa, (size_t)d, rows, (size_t)d, &kb, done, s, cstride, 1);
  }
  if (done == nbk) return;
  stage_k(g, ok, kc + done * C0, cols - done * C0, l0b, row);
  const attn_b kb = {l0b, 0, C0 * sizeof(float), (size_t)(d * C0) * sizeof(float)};
  gemm16(qa, (size_t)d, rows, (size_t)d, &kb, nbk - done, s + (size_t)done * cstride, cstride, 1);
}

/* O += p v for the keys [kc, kc + cols): whole 16-column blocks of v read
 * in place when the micro-kernel can, the rest staged. */
static void accumulate(const attn_geom *g, const float *p, int64_t rows, int64_t ov, int64_t kc, int64_t cols,
                       float *l0b, float *o) {
  const int64_t nbv = g->dv16 / C0;
  const size_t cstride = (size_t)(g->tq * C0), es = dtype_size(g->qt);
  int64_t done = 0;
  if (g->in_place) {
    done = g->dv / C0;
    const attn_b vb = {(const uint8_t *)g->v + (size_t)(ov + kc * g->v_rs) * es, g->qt == DT_FLOAT16,
                       (size_t)g->v_rs * es, C0 * es};
    gemm16(p, (size_t)g->tkv, rows, (size_t)cols, &vb, done, o, cstride, 0);
  }
  if (done == nbv) return;
  stage_v(g, ov, kc, cols, done, l0b);
  const attn_b vb = {l0b, 0, C0 * sizeof(float), (size_t)(cols * C0) * sizeof(float)};
  gemm16(p, (size_t)g->tkv, rows, (size_t)cols, &vb, nbv - done, o + (size_t)done * cstride, cstride, 0);
}

/* Query row i's scores of the keys [kc, kc + cols) into pr: its L0C
 * accumulators (16-key blocks tile_q * 16 floats apart from s) scaled, the
 * biases added (`row` stages a bias row), the keys causal hides -inf; their
 * max. Without biases and causal the max comes with the scaling (the
 * host's attn_scale_max: the same values in one pass). */
static float score_row(const attn_geom *g, float *pr, const float *s, int64_t i, int64_t kc, int64_t cols,
                       const int64_t *ob, float *row) {
  const rt_cpu_paths *cpu = rt_cpu();
  const size_t sstride = (size_t)(g->tq * C0);
  if (!g->bias[0] && !g->bias[1] && !g->causal && cpu->attn_scale_max)
    return cpu->attn_scale_max(pr, s, sstride, (size_t)cols, g->scale);
  for (int64_t nb = 0; nb < rt_ceil_div(cols, C0); nb++) {
    const float *sr = s + nb * (int64_t)sstride;
    int64_t lanes = cols - nb * C0 < C0 ? cols - nb * C0 : C0;
    for (int64_t j = 0; j < lanes; j++)
      pr[nb * C0 + j] = sr[j] * g->scale;
  }
  for (int b = 0; b < 2; b++) {
    if (!g->bias[b]) continue;
    const size_t at = (size_t)(ob[b] + i * g->b_si[b] + kc * g->b_sj[b]);
    if (g->b_sj[b]) {
      rt_vload(row, g->bias[b], g->bt[b], at, (size_t)cols);
      for (int64_t j = 0; j < cols; j++)
        pr[j] += row[j];
    } else {
      const float add = rt_get(g->bias[b], g->bt[b], at);
      for (int64_t j = 0; j < cols; j++)
        pr[j] += add;
    }
  }
  if (g->causal) {
    int64_t see = i + g->causal_offset + 1 - kc; /* keys [kc, kc + see) are visible */
    for (int64_t j = see < 0 ? 0 : see; j < cols; j++)
      pr[j] = -INFINITY;
  }
  return rt_vmax(pr, (size_t)cols);
}

/* dst[j] = src[j] * k for j < n (distinct runs: the loop vectorizes). */
static void scale_run(float *restrict dst, const float *restrict src, float k, int64_t n) {
  for (int64_t j = 0; j < n; j++)
    dst[j] = src[j] * k;
}

static void run_tile(const attn_geom *g, int64_t bt, int64_t qt, rt_core *core) {
  const int64_t q0 = qt * g->tq, rows = g->sq - q0 < g->tq ? g->sq - q0 : g->tq;
  const int64_t tq = g->tq, tkv = g->tkv, nbv = g->dv16 / C0;
  float *qa = (float *)core->l0a, *l0b = (float *)core->l0b;
  float *s = (float *)core->l0c, *o = s + tq * tkv;
  float *p = (float *)core->ub, *mrow = p + tq * tkv, *lrow = mrow + tq, *row = lrow + tq;
  int64_t oq = 0, ok = 0, ov = 0, oy = 0, ob[2] = {0, 0}, rem = bt;
  for (int i = g->nbd - 1; i >= 0; i--) {
    int64_t idx = rem % g->bdims[i];
    rem /= g->bdims[i];
    oq += idx * g->sq_b[i], ok += idx * g->sk_b[i], ov += idx * g->sv_b[i], oy += idx * g->sy_b[i];
    ob[0] += idx * g->sb_b[0][i], ob[1] += idx * g->sb_b[1][i];
  }
  const rt_cpu_paths *cpu = rt_cpu();
  if (g->q_rs == g->d) /* the tile's rows are one run */
    rt_vload(qa, g->q, g->qt, (size_t)(oq + q0 * g->d), (size_t)(rows * g->d));
  else
    for (int64_t m = 0; m < rows; m++)
      rt_vload(qa + m * g->d, g->q, g->qt, (size_t)(oq + (q0 + m) * g->q_rs), (size_t)g->d);
  for (int64_t m = 0; m < rows; m++)
    mrow[m] = -INFINITY, lrow[m] = 0.0f;
  memset(o, 0, (size_t)(nbv * tq * C0) * sizeof *o);
  int64_t kv_end = g->skv;
  if (g->causal) { /* the last row sees keys up to q0 + rows - 1 + offset */
    int64_t last = q0 + rows - 1 + g->causal_offset + 1;
    kv_end = last < 0 ? 0 : last < kv_end ? last : kv_end;
  }
  for (int64_t kc = 0; kc < kv_end; kc += tkv) {
    const int64_t cols = kv_end - kc < tkv ? kv_end - kc : tkv;
    scores(g, qa, rows, ok, kc, cols, l0b, row, s);
    for (int64_t m = 0; m < rows; m++) {
      float *pr = p + m * tkv;
      const float mx = score_row(g, pr, s + m * C0, q0 + m, kc, cols, ob, row);
      const float m_old = mrow[m], m_new = mx > m_old ? mx : m_old;
      if (m_new == -INFINITY) { /* nothing visible yet: p = 0, not exp(-inf + inf) */
        memset(pr, 0, (size_t)cols * sizeof *pr);
        continue;
      }
      const float corr = m_old == -INFINITY ? 0.0f : om_vexp(m_old - m_new);
      const int r16 = g->qt == DT_FLOAT16; /* p becomes the cube's f16 operand */
      if (r16 && cpu->vexp_sum_r16)        /* p and its rounding in one pass */
        lrow[m] = lrow[m] * corr + cpu->vexp_sum_r16(pr, m_new, (size_t)cols);
      else
        lrow[m] = lrow[m] * corr + rt_vexp_sum(pr, m_new, (size_t)cols);
      mrow[m] = m_new;
      if (corr != 1.0f && m_old != -INFINITY) /* a row that saw no key holds 0 * v: as it is */
        for (int64_t nb = 0; nb < nbv; nb++) {
          float *orow = o + (nb * tq + m) * C0;
          for (int j = 0; j < C0; j++)
            orow[j] *= corr;
        }
      if (r16 && !cpu->vexp_sum_r16) {
        if (cpu->round16)
          cpu->round16(pr, (uint32_t)cols);
        else
          for (int64_t j = 0; j < cols; j++)
            pr[j] = rt_h2f(rt_f2h(pr[j]));
      }
    }
    accumulate(g, p, rows, ov, kc, cols, l0b, o);
  }
  /* y's rows are one run too (unless y is a view): out through the UB's p
   * (free now) in runs of as many rows as it holds, one conversion each
   * (row by row through `row` when one row of Dv does not fit) */
  const int64_t fit = tq * tkv / g->dv, run = fit > 0 ? fit : 1;
  float *buf = fit > 0 ? p : row;
  for (int64_t m0 = 0; m0 < rows; m0 += run) {
    const int64_t n = rows - m0 < run ? rows - m0 : run;
    for (int64_t m = m0; m < m0 + n; m++) {
      const float inv = 1.0f / lrow[m];
      const int dead = mrow[m] == -INFINITY;
      const float fill = g->zero_masked ? 0.0f : NAN;
      float *yr = buf + (m - m0) * g->dv;
      for (int64_t nb = 0; nb < nbv; nb++) {
        const float *orow = o + (nb * tq + m) * C0;
        const int64_t lanes = g->dv - nb * C0 < C0 ? g->dv - nb * C0 : C0;
        float *dst = yr + nb * C0;
        if (dead)
          for (int64_t j = 0; j < lanes; j++)
            dst[j] = fill;
        else
          scale_run(dst, orow, inv, lanes);
      }
    }
    if (g->y_rs == g->dv)
      rt_vstore(g->y, g->yt, (size_t)(oy + (q0 + m0) * g->dv), buf, (size_t)(n * g->dv));
    else
      for (int64_t m = 0; m < n; m++)
        rt_vstore(g->y, g->yt, (size_t)(oy + (q0 + m0 + m) * g->y_rs), buf + m * g->dv, (size_t)g->dv);
  }
}

void rt_attention_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  if (rt_elements(args->desc[OM_ATTENTION_T_Y]) == 0) return; /* a 0 dim: no query rows */
  attn_geom g;
  geom_init(task, args, &g);
  uint64_t lo, hi, batch = 1;
  for (int i = 0; i < g.nbd; i++)
    batch *= (uint64_t)g.bdims[i];
  rt_block_range(batch * (uint64_t)g.qtiles, task->block_dim, block, &lo, &hi);
  for (uint64_t t = lo; t < hi; t++)
    run_tile(&g, (int64_t)(t / (uint64_t)g.qtiles), (int64_t)(t % (uint64_t)g.qtiles), core);
}

/* --- the load-time check */

/* The bytes [*lo, *hi) operand tensor t (view v, -1: none) reaches: its
 * span when it is a view (checked by check_view), else its own. */
static void view_bytes(const om_task *task, const om_tensor *t, int v, uint64_t *lo, uint64_t *hi) {
  *lo = t->offset;
  *hi = t->offset + t->bytes;
  if (v >= 0 && task->params[OM_ATTENTION_P_VIEWS] >> v & 1)
    *hi = t->offset +
          (uint64_t)(uint32_t)task->params[OM_ATTENTION_P_VIEW + 4 * v + 3] * dtype_size((int)t->dtype);
}

/* Operand t's view params (om_format.h): all 0 without its views bit, else
 * a rank of 2..4, strides >= 0 (0 past them), every element reached within
 * the span and the span within the workspace. */
static omrt_status check_view(const rt_chk *c, const om_tensor *t, int v) {
  static const char *const names[OM_ATTENTION_NVIEWS] = {"q", "k", "v", "y"};
  const int at = OM_ATTENTION_P_VIEW + 4 * v, r = (int)t->rank;
  const int32_t *w = c->task->params + at;
  if (!(c->task->params[OM_ATTENTION_P_VIEWS] >> v & 1)) {
    for (int j = 0; j < 4; j++)
      if (w[j] != 0)
        return rt_chk_fail(c, "params[%d] = %d, expected 0 (%s is not a view)", at + j, w[j], names[v]);
    return OMRT_OK;
  }
  if (r < 2 || r > 4) return rt_chk_fail(c, "%s is a view of rank %d, expected 2..4", names[v], r);
  if (t->region != OM_REGION_WORKSPACE)
    return rt_chk_fail(c, "%s is a view outside the WORKSPACE region (region %u)", names[v], t->region);
  for (int j = 0; j < 3; j++)
    if (w[j] < 0 || (j >= r - 1 && w[j] != 0))
      return rt_chk_fail(c, "params[%d] = %d: %s's stride %d must be %s", at + j, w[j], names[v], j,
                         j < r - 1 ? ">= 0" : "0 (past its rank)");
  const uint64_t span = (uint64_t)(uint32_t)w[3], es = dtype_size((int)t->dtype);
  uint64_t last = (uint64_t)t->dims[r - 1] - 1; /* the last element's distance from the first */
  for (int j = 0; j < r - 1; j++) {
    uint64_t step;
    if (__builtin_mul_overflow((uint64_t)t->dims[j] - 1, (uint64_t)w[j], &step) ||
        __builtin_add_overflow(last, step, &last))
      last = UINT64_MAX;
  }
  if (rt_elements(t) > 0 && (w[3] <= 0 || last >= span))
    return rt_chk_fail(c, "params[%d] span = %d: %s's view reaches element %llu, outside it", at + 3, w[3],
                       names[v], (unsigned long long)last);
  if (t->offset + span * es > c->m->def->workspace_bytes)
    return rt_chk_fail(
        c, "params[%d] span = %d: %s's view from byte %llu runs past the workspace (%llu bytes)", at + 3,
        w[3], names[v], (unsigned long long)t->offset, (unsigned long long)c->m->def->workspace_bytes);
  return OMRT_OK;
}

omrt_status rt_attention_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "ATTENTION"};
  const om_tensor *q, *k, *v, *b[2], *y;
  omrt_status s;
  if ((s = rt_chk_ntensors(&c, OM_ATTENTION_NTENSORS)) ||
      (s = rt_chk_tensor(&c, OM_ATTENTION_T_Q, "q", 0, LAYOUT_ND, -1, 0, &q)) ||
      (s = rt_chk_tensor(&c, OM_ATTENTION_T_K, "k", 0, LAYOUT_ND, -1, 0, &k)) ||
      (s = rt_chk_tensor(&c, OM_ATTENTION_T_V, "v", 0, LAYOUT_ND, -1, 0, &v)) ||
      (s = rt_chk_tensor(&c, OM_ATTENTION_T_BIAS0, "bias0", 1, LAYOUT_ND, -1, 0, &b[0])) ||
      (s = rt_chk_tensor(&c, OM_ATTENTION_T_BIAS1, "bias1", 1, LAYOUT_ND, -1, 0, &b[1])) ||
      (s = rt_chk_tensor(&c, OM_ATTENTION_T_Y, "y", 0, LAYOUT_ND, -1, 0, &y)))
    return s;
  if (k->dtype != q->dtype || v->dtype != q->dtype)
    return rt_chk_fail(&c, "q, k and v dtypes %u, %u, %u differ", q->dtype, k->dtype, v->dtype);
  const int32_t *p = task->params;
  for (int t = OM_ATTENTION_P_K_TRANS; t <= OM_ATTENTION_P_ZERO_MASKED; t++)
    if (t != OM_ATTENTION_P_CAUSAL_OFFSET && (uint32_t)p[t] > 1)
      return rt_chk_fail(&c, "params[%d] = %d, expected 0 or 1", t, p[t]);
  if (!p[OM_ATTENTION_P_CAUSAL] && p[OM_ATTENTION_P_CAUSAL_OFFSET])
    return rt_chk_fail(&c, "params[%d] causal_offset = %d without causal", OM_ATTENTION_P_CAUSAL_OFFSET,
                       p[OM_ATTENTION_P_CAUSAL_OFFSET]);
  if (!isfinite(rt_param_f32(p[OM_ATTENTION_P_SCALE])))
    return rt_chk_fail(&c, "params[%d] scale is not finite", OM_ATTENTION_P_SCALE);
  for (int t = OM_ATTENTION_NPARAMS; t < OM_TASK_MAX_PARAMS; t++)
    if (p[t] != 0) return rt_chk_fail(&c, "params[%d] = %d, expected 0 (unused)", t, p[t]);
  const om_tensor *viewed[OM_ATTENTION_NVIEWS] = {q, k, v, y};
  if ((uint32_t)p[OM_ATTENTION_P_VIEWS] >> OM_ATTENTION_NVIEWS)
    return rt_chk_fail(&c, "params[%d] views = %d, expected bits 0..3", OM_ATTENTION_P_VIEWS,
                       p[OM_ATTENTION_P_VIEWS]);
  for (int t = 0; t < OM_ATTENTION_NVIEWS; t++)
    if ((s = check_view(&c, viewed[t], t))) return s;
  if (p[OM_ATTENTION_P_VIEWS]) { /* om_load.c's access check, over the bytes the views reach */
    const om_tensor *rd[5] = {q, k, v, b[0], b[1]};
    uint64_t ylo, yhi, lo, hi;
    view_bytes(task, y, OM_ATTENTION_V_Y, &ylo, &yhi);
    for (int t = 0; t < 5; t++) {
      if (!rd[t] || rd[t]->region != y->region ||
          (y->region != OM_REGION_WORKSPACE && rd[t]->index != y->index))
        continue;
      view_bytes(task, rd[t], t < 3 ? t : -1, &lo, &hi);
      if (lo < yhi && ylo < hi)
        return rt_chk_fail(&c, "y's bytes %llu..%llu overlap those operand %d reads (%llu..%llu)",
                           (unsigned long long)ylo, (unsigned long long)yhi - 1, t, (unsigned long long)lo,
                           (unsigned long long)hi - 1);
    }
  }
  const int rq = (int)q->rank, rk = (int)k->rank, rv = (int)v->rank, ry = (int)y->rank;
  if (rq < 2 || rk < 2 || rv < 2 || ry < 2)
    return rt_chk_fail(&c, "q, k, v and y ranks %d, %d, %d, %d: each must be >= 2", rq, rk, rv, ry);
  const int kt = p[OM_ATTENTION_P_K_TRANS];
  const int64_t sq = q->dims[rq - 2], d = q->dims[rq - 1], skv = k->dims[rk - 2 + kt];
  const int64_t dv = v->dims[rv - 1];
  if (k->dims[rk - 1 - kt] != d || v->dims[rv - 2] != skv || y->dims[ry - 2] != sq || y->dims[ry - 1] != dv)
    return rt_chk_fail(&c, "q, k (k_trans %d), v and y disagree on Sq, Skv, D or Dv", kt);
  if (sq < 1 || skv < 1 || d < 1 || dv < 1)
    return rt_chk_fail(&c, "Sq %lld, Skv %lld, D %lld, Dv %lld: each must be >= 1", (long long)sq,
                       (long long)skv, (long long)d, (long long)dv);
  const int nbd = ry - 2;
  const om_tensor *ops[3] = {q, k, v};
  for (int t = 0; t < 3; t++) { /* batch dims broadcast to y's */
    if ((int)ops[t]->rank - 2 > nbd) return rt_chk_fail(&c, "operand %d has more batch dims than y", t);
    for (int j = 0; j < (int)ops[t]->rank - 2; j++) {
      int64_t e = ops[t]->dims[j], want = y->dims[nbd - ((int)ops[t]->rank - 2) + j];
      if (e != 1 && e != want)
        return rt_chk_fail(&c, "operand %d batch dim %d = %lld does not broadcast to y's %lld", t, j,
                           (long long)e, (long long)want);
    }
  }
  for (int t = 0; t < 2; t++) {
    if (!b[t]) continue;
    if ((int)b[t]->rank > ry) return rt_chk_fail(&c, "bias%d rank %u > y rank %d", t, b[t]->rank, ry);
    for (int j = 0; j < (int)b[t]->rank; j++) {
      int at = ry - (int)b[t]->rank + j;
      int64_t e = b[t]->dims[j], want = at == ry - 1 ? skv : y->dims[at];
      if (e != 1 && e != want)
        return rt_chk_fail(&c, "bias%d dims[%d] = %lld does not broadcast to the scores' %lld", t, j,
                           (long long)e, (long long)want);
    }
  }
  const int64_t tq = p[OM_ATTENTION_P_TILE_Q], tkv = p[OM_ATTENTION_P_TILE_KV];
  for (int t = OM_ATTENTION_P_TILE_Q; t <= OM_ATTENTION_P_TILE_KV; t++)
    if (p[t] < 16 || p[t] > 4096 || p[t] % 16)
      return rt_chk_fail(&c, "params[%d] = %d, expected a multiple of 16 in 16..4096", t, p[t]);
  const uint64_t es = dtype_size((int)q->dtype), dv16 = (uint64_t)rt_ceil_div(dv, C0) * C0;
  uint64_t w = (uint64_t)tkv > (uint64_t)d ? (uint64_t)tkv : (uint64_t)d;
  w = w > dv16 ? w : dv16;
  const om_model_def *def = m->def;
  const struct {
    const char *what;
    uint64_t need, have;
  } caps[] = {{"L0A", (uint64_t)tq * (uint64_t)d * es, def->l0a_bytes},
              {"L0B", (uint64_t)tkv * ((uint64_t)d > dv16 ? (uint64_t)d : dv16) * es, def->l0b_bytes},
              {"L0C", (uint64_t)tq * ((uint64_t)tkv + dv16) * 4, def->l0c_bytes},
              {"UB", ((uint64_t)tq * ((uint64_t)tkv + 2) + w) * 4, def->ub_bytes}};
  for (size_t t = 0; t < sizeof caps / sizeof *caps; t++)
    if (caps[t].need > caps[t].have)
      return rt_chk_fail(&c, "tile_q %lld, tile_kv %lld need %llu bytes of %s, capacity %llu", (long long)tq,
                         (long long)tkv, (unsigned long long)caps[t].need, caps[t].what,
                         (unsigned long long)caps[t].have);
  uint64_t tiles = (uint64_t)rt_ceil_div(sq, tq);
  for (int j = 0; j < nbd; j++)
    tiles *= (uint64_t)y->dims[j]; /* <= y's elements / 16: no overflow */
  return rt_chk_block_dim(&c, tiles, "tiles");
}
