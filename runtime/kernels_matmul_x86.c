/* kernels_matmul_x86.c - the MATMUL tile on AVX2 + FMA + F16C hosts.
 *
 * Same tiles as the portable tile in kernels_matmul.c (kernels_matmul.h
 * describes them), and the same K chunks unless nothing is staged per
 * chunk (B FRACTAL_NZ, A in place or in L1: tile_kstep), when the whole K
 * is one chunk; computed by the cube micro-kernels
 * of kernels_cube_x86.c (rt_cube_gemm_x86: on AVX-512 hosts the rows split
 * evenly into groups of 7 to 12 rows x 2 n blocks on ZMM registers, fewer
 * than 7 rows through the CONV2D tile's 6-row kernel; 6 rows x 1 block on
 * YMM ones):
 *   A  an f32 A whose rows run along K (trans_a = 0) is read in place;
 *      otherwise op(A)'s rows are staged as f32 times alpha (fp16
 *      converted 8 lanes at a time with vcvtph2ps; a transposed A is read
 *      along its contiguous M axis): the tile's rows over the whole K into
 *      the core's L1 when they fit there, once for every n tile the core
 *      runs on the same rows (rt_l1_holds: the run loop goes along N
 *      first), else each chunk's rows into L0A as [m][k];
 *   B  a FRACTAL_NZ B (constant weights, types.h) is read in place: each n
 *      block's chunk is klen consecutive rows of 16 lanes, f16 converted in
 *      registers as the micro-kernel goes, as the convolution reads
 *      FRACTAL_Z; an ND B (computed at run time) is packed into L0B as the
 *      same panels [n block][k][16] in its own dtype, columns past N zero.
 *      The weights do not fit any cache, so each panel comes from memory
 *      once per run: while a chunk is computed, the panel the core reads
 *      next (the next chunk, or the next tile's first) is fetched into the
 *      cache a slice per row group (next_panel, rt_mk_pf), instead of the
 *      first row group waiting for each line of it. Converting a panel to
 *      f32 once (two n blocks at a time, the copy in L2) and running every
 *      row group on the copy measured the same as converting in registers
 *      per row group (bench/matmul_task, ViT-B/16's four shapes, weights
 *      from memory: within 1%, alternating runs): the micro-kernel is bound
 *      by its FMAs and broadcasts (in cache ~91% of bench/fma_peak), not by
 *      B's loads or conversions;
 *   write-back  on the last chunk, straight from the registers for every
 *      whole n block: + bias (the sums start from it), + c (when it runs
 *      along N and beta is 1), relu / clip, f16 stores with vcvtps2ph
 *      (round to nearest even) or f32 stores, rows N elements apart. The
 *      last block of an N that is not a multiple of 16, a c that does not
 *      run along N or has another beta, and the transcendental acts (GELU,
 *      GELU_TANH, SILU: their vector code would swell every micro-kernel
 *      instance) finish from L0C through rt_mm_epilogue (for those acts
 *      mm_act_x86.inc's vector epilogue).
 * fp16 x fp16 products are exact in f32, so results differ from the portable
 * path only by summation order (FMA keeps one rounding per step).
 *
 * Compiled for plain x86-64: every function carries target("avx2,fma,f16c")
 * and is only reached through rt_cpu() (cpu.c) when the CPU has all three.
 */
#include "runtime/kernels_matmul.h"

#if defined(__x86_64__) && defined(__GNUC__)

#include "runtime/x86_simd.h"

enum { NB_STEP = 16 }; /* n blocks per micro-kernel call (the write-backs of one call) */

/* l0a[m * lda + k] = alpha * op(A)[m0 + m][kc + k] for m < rows, k < klen. */
static AVX2 void stage_a(const rt_mm_geom *g, int64_t oa, int64_t m0, int64_t rows, int64_t kc, int64_t klen,
                         size_t lda, float *l0a) {
  const int f16 = g->a->dtype == DT_FLOAT16;
  const __m256 alpha = _mm256_set1_ps(g->alpha);
  if (g->a_sk == 1) {
    for (int64_t m = 0; m < rows; m++) {
      const size_t i0 = (size_t)(oa + (m0 + m) * g->a_sm + kc);
      float *dst = l0a + (size_t)m * lda;
      int64_t j = 0;
      for (; j + 8 <= klen; j += 8)
        _mm256_storeu_ps(dst + j, _mm256_mul_ps(ld8h(g->ad, f16, i0 + (size_t)j), alpha));
      for (; j < klen; j++)
        dst[j] = g->alpha * rt_get(g->ad, (int)g->a->dtype, i0 + (size_t)j);
    }
    return;
  }
  for (int64_t k = 0; k < klen; k++) { /* trans_a: M is the contiguous axis */
    const size_t base = (size_t)(oa + m0 * g->a_sm + (kc + k) * g->a_sk);
    float *dst = l0a + k;
    for (int64_t m = 0; m < rows; m++, dst += lda)
      *dst = g->alpha * rt_get(g->ad, (int)g->a->dtype, base + (size_t)(m * g->a_sm));
  }
}

/* L0B[nb][k][j] = op(B)[kc + k][n0 + nb*16 + j] in B's dtype (es bytes),
 * zero past the tile's cols: the FRACTAL_NZ panels of an ND B. */
static AVX2 void stage_b(const rt_mm_geom *g, int64_t ob, int64_t n0, int64_t cols, int64_t kc, int64_t klen,
                         void *l0b) {
  const size_t es = dtype_size((int)g->b->dtype);
  const uint8_t *bd = (const uint8_t *)g->bd;
  uint8_t *dst = (uint8_t *)l0b;
  const int64_t nblocks = rt_ceil_div(cols, C0);
  if (g->b_sn == 1) { /* row-major B: each k row is contiguous along N */
    for (int64_t nb = 0; nb < nblocks; nb++) {
      const int64_t lanes = cols - nb * C0 < C0 ? cols - nb * C0 : C0;
      for (int64_t k = 0; k < klen; k++) {
        uint8_t *d = dst + (size_t)((nb * klen + k) * C0) * es;
        memcpy(d, bd + (size_t)(ob + (kc + k) * g->b_sk + n0 + nb * C0) * es, (size_t)lanes * es);
        if (lanes < C0) memset(d + (size_t)lanes * es, 0, (size_t)(C0 - lanes) * es);
      }
    }
    return;
  }
  /* trans_b (or a rank-1 B): each column n is contiguous along K */
  for (int64_t nb = 0; nb < nblocks; nb++)
    for (int64_t j = 0; j < C0; j++) {
      const int64_t n = nb * C0 + j;
      uint8_t *d = dst + (size_t)(nb * klen * C0 + j) * es;
      const size_t step = C0 * es;
      if (n >= cols) {
        for (int64_t k = 0; k < klen; k++)
          memset(d + (size_t)k * step, 0, es);
        continue;
      }
      const size_t base = (size_t)(ob + (n0 + n) * g->b_sn + kc * g->b_sk);
      if (es == 2) {
        const uint16_t *s = (const uint16_t *)bd + base;
        for (int64_t k = 0; k < klen; k++)
          memcpy(d + (size_t)k * step, s + k * g->b_sk, 2);
      } else {
        const float *s = (const float *)bd + base;
        for (int64_t k = 0; k < klen; k++)
          memcpy(d + (size_t)k * step, s + k * g->b_sk, 4);
      }
    }
}

/* Where the micro-kernel reads the rows of m tile mt of A from: A itself
 * (f32 along K, alpha 1), else staged whole (every K chunk) in L1 when they
 * fit, once for all the n tiles this core runs on the same rows, else a K
 * chunk at a time in L0A. In L1 the rows are lda_l1 floats apart, an odd
 * number of 64-byte lines (16 floats), so that a row group's rows fall in
 * different cache sets. */
enum { A_IN_PLACE, A_L1, A_L0A };
static size_t lda_l1(const rt_mm_geom *g) { return (size_t)(g->k16 % (2 * C0) ? g->k16 : g->k16 + C0); }
static int a_source(const rt_mm_geom *g, int64_t mt, const rt_core *core) {
  const int64_t rows = g->m - mt * g->tm < g->tm ? g->m - mt * g->tm : g->tm;
  if (g->a->dtype == DT_FLOAT32 && g->a_sk == 1 && g->alpha == 1.0f) return A_IN_PLACE;
  return (uint64_t)rows * lda_l1(g) * sizeof(float) <= core->l1_bytes ? A_L1 : A_L0A;
}

/* The K chunk the tiles of m tile mt run: with B read in place (FRACTAL_NZ)
 * and A not staged per chunk, nothing is, so the whole K is one chunk: each
 * row group's sums stay in the registers from the first k to the last (no
 * round trip through L0C), and each micro-kernel call streams its n block
 * pair's panel from start to end. Otherwise the task's tile_k (A, B or
 * both staged in L0A / L0B a chunk at a time). The sums are the same: K is
 * added in order either way, and L0C keeps them in f32. Shorter chunks
 * that would keep a call's A rows and B pair within L1 (128 to 512 rows)
 * measured slower, not faster: the sums' trips through L0C cost more than
 * the L2 reads they save (bench/matmul_task, BERT's shapes: 1-13%; ViT's
 * in-projection, 197x768 x 768x2304, whose staged A and n tile of B just
 * overflow the host's 1 MiB L2: 11% slower in 256-row chunks, 14% in
 * 384). Nor did fewer n blocks a step (NB_STEP 4 or 8: a B step that stays
 * in L2 while every row group reads it) run faster, there or on the
 * 3072-deep MLP output projection's 48-row tiles. A tile runs at 93-97% of
 * bench/fma_peak taken alongside, the micro-kernel's own rate; the rest is
 * B's first read from memory (one 48 x 768 x 3072 tile: 5-7% slower with
 * its weights from memory than from cache, 1.5% for a 197-row tile), which
 * fetching the next block pair's first rows ahead of its call did not
 * recover (within the noise, 0-2%). */
static int64_t tile_kstep(const rt_mm_geom *g, int64_t mt, const rt_core *core) {
  return g->bnz && a_source(g, mt, core) != A_L0A ? g->k : g->tk;
}

/* The FRACTAL_NZ B rows this core reads after chunk kc of tile (bt, mt, nt)
 * (chunks of kstep): the tile's next chunk, else the start of the next tile
 * in the run loop's order (rt_matmul_run), at most tile_k rows of it (what
 * the first row group reads first); 0 after the last tile. */
static int next_panel(const rt_mm_geom *g, int64_t bt, int64_t mt, int64_t nt, int64_t kc, int64_t kstep,
                      rt_mk_pf *pf) {
  if (kc + kstep < g->k) {
    kc += kstep;
  } else {
    kc = 0;
    if (++nt == g->ntiles) nt = 0, mt++;
    if (mt == g->mtiles) mt = 0, bt++;
    if (bt == g->batch) return 0;
  }
  int64_t oa, ob, oc;
  rt_mm_batch_offsets(g, bt, &oa, &ob, &oc);
  const size_t es = dtype_size((int)g->b->dtype);
  const int64_t n0 = nt * g->tn, cols = g->n - n0 < g->tn ? g->n - n0 : g->tn;
  const int64_t klen = g->k - kc < g->tk ? g->k - kc : g->tk;
  *pf = (rt_mk_pf){.b = (const uint8_t *)g->bd + (size_t)(ob + ((n0 / C0) * g->k16 + kc) * C0) * es,
                   .bytes = (size_t)(klen * C0) * es,
                   .nbstride = (size_t)(g->k16 * C0) * es,
                   .nblocks = rt_ceil_div(cols, C0)};
  return 1;
}

AVX2 void rt_matmul_tile_x86(const rt_mm_geom *g, int64_t bt, int64_t mt, int64_t nt, rt_core *core) {
  float *l0a = (float *)core->l0a, *l0c = (float *)core->l0c;
  const int64_t m0 = mt * g->tm, rows = g->m - m0 < g->tm ? g->m - m0 : g->tm;
  const int64_t n0 = nt * g->tn, cols = g->n - n0 < g->tn ? g->n - n0 : g->tn;
  const int64_t nblocks = rt_ceil_div(cols, C0), nfull = cols / C0;
  const size_t es = dtype_size((int)g->b->dtype), ys = dtype_size((int)g->y->dtype);
  const size_t cs = g->c ? dtype_size((int)g->c->dtype) : 0, cstride = (size_t)(g->tm * C0);
  int64_t oa, ob, oc;
  rt_mm_batch_offsets(g, bt, &oa, &ob, &oc);
  const int asrc = a_source(g, mt, core);
  const int64_t kstep = tile_kstep(g, mt, core);
  /* whole blocks write back from the registers unless c needs the general epilogue */
  const int direct = (!g->cd || (g->c_sn == 1 && g->beta == 1.0f)) && g->act <= OM_ACT_CLIP;
  const int64_t ndirect = direct ? nfull : 0;
  float bias_tail[C0]; /* the last block's bias lanes, zero past N */
  for (int j = 0; j < C0; j++) {
    const int64_t n = n0 + (nblocks - 1) * C0 + j;
    bias_tail[j] = g->biasd && n < g->n ? g->biasd[n] : 0.0f;
  }
  if (asrc == A_L1 && !rt_l1_holds(core, g->ad, bt, mt, g->tm))
    stage_a(g, oa, m0, rows, 0, g->k, lda_l1(g), (float *)core->l1);
  for (int64_t kc = 0; kc < g->k; kc += kstep) {
    const int64_t klen = g->k - kc < kstep ? g->k - kc : kstep;
    const int first = kc == 0, last = kc + klen >= g->k;
    const float *a = l0a;
    size_t lda = (size_t)klen;
    if (asrc == A_IN_PLACE)
      a = (const float *)g->ad + oa + m0 * g->a_sm + kc, lda = (size_t)g->a_sm;
    else if (asrc == A_L1)
      a = (const float *)core->l1 + kc, lda = lda_l1(g);
    else
      stage_a(g, oa, m0, rows, kc, klen, (size_t)klen, l0a);
    const void *b;
    size_t nbstride;
    rt_mk_pf pf;
    const int fetch = g->bnz && next_panel(g, bt, mt, nt, kc, kstep, &pf);
    if (g->bnz) {
      b = (const uint8_t *)g->bd + (size_t)(ob + ((n0 / C0) * g->k16 + kc) * C0) * es;
      nbstride = (size_t)(g->k16 * C0) * es;
    } else {
      stage_b(g, ob, n0, cols, kc, klen, core->l0b);
      b = core->l0b, nbstride = (size_t)(klen * C0) * es;
    }
    for (int64_t nbc = 0; nbc < nblocks; nbc += NB_STEP) {
      const int64_t nbn = nblocks - nbc < NB_STEP ? nblocks - nbc : NB_STEP;
      rt_mk_out out[NB_STEP];
      int64_t nwb = 0; /* blocks of this step that write back from the registers */
      for (int64_t nb = 0; nb < nbn; nb++) {
        const int64_t blk = nbc + nb, n = n0 + blk * C0;
        const int wb = last && blk < ndirect;
        nwb += wb;
        out[nb] = (rt_mk_out){
            .bias = blk == nblocks - 1 ? bias_tail
                    : g->biasd         ? g->biasd + n
                                       : NULL,
            .y = wb ? (uint8_t *)g->yd + (size_t)((bt * g->m + m0) * g->n + n) * ys : NULL,
            .res = wb && g->cd ? (const uint8_t *)g->cd + (size_t)(oc + m0 * g->c_sm + n) * cs : NULL,
            .ystride = (size_t)g->n,
            .rstride = (size_t)g->c_sm,
            .yf16 = g->y->dtype == DT_FLOAT16,
            .rf16 = g->c && g->c->dtype == DT_FLOAT16,
            .act = g->act,
            .lo = g->clip_min,
            .hi = g->clip_max};
      }
      const uint8_t *bs = (const uint8_t *)b + (size_t)nbc * nbstride;
      float *cc = l0c + (size_t)nbc * cstride;
      const rt_mk_pf *p = fetch && nbc == 0 ? &pf : NULL; /* fetched over the first step's row groups */
      if (nwb)
        rt_cube_gemm_x86(a, lda, rows, (size_t)klen, bs, es == 2, C0 * es, nbstride, nwb, cc, cstride, first,
                         out, p);
      if (nwb < nbn)
        rt_cube_gemm_x86(a, lda, rows, (size_t)klen, bs + (size_t)nwb * nbstride, es == 2, C0 * es, nbstride,
                         nbn - nwb, cc + (size_t)nwb * cstride, cstride, first, out + nwb, nwb ? NULL : p);
    }
  }
  if (ndirect < nblocks) /* the blocks left in L0C (their sums hold the bias) */
    rt_mm_epilogue(g, bt, m0, rows, n0 + ndirect * C0, cols - ndirect * C0, l0c + (size_t)ndirect * cstride,
                   g->tm, 0);
}

#endif
