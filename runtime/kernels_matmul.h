/* kernels_matmul.h - the MATMUL task's geometry, shared by the portable path
 * (kernels_matmul.c) and the x86 path (kernels_matmul_x86.c).
 *
 * om_format.h (OM_TASK_MATMUL) is the contract, common/matmul_geom.h the
 * strides. rt_mm_geom_init decodes a task that rt_matmul_check accepted,
 * with its row fold applied: the rows of the row axis (M, times the folded
 * batch dims) are evenly spaced in A and C, and the remaining (outer) batch
 * dims index whole products. In elements:
 *   A element (row r, k) of outer batch bt at  a_off(bt) + r * a_sm + k * a_sk,
 *   B element (k, n), ND                       b_off(bt) + k * b_sk + n * b_sn,
 *                     FRACTAL_NZ               b_off(bt) + ((n / 16) * k16 + k) * 16 + n % 16,
 *   C element (r, n)                           c_off(bt) + r * c_sm + n * c_sn,
 *   Y element (r, n)                           (bt * m + r) * n_ + n.
 *
 * A tile (bt, mt, nt) is rows [mt*tile_m, ...) x columns [nt*tile_n, ...)
 * of outer batch bt; K runs in chunks of tile_k. The portable tile stages
 * each chunk as f32 (fp16 values are exact in f32):
 *   L0A [m][k]           the chunk's rows of op(A), klen floats a row;
 *   L0B [nb][k][16]      the chunk's rows of op(B), 16 columns per n block,
 *                        columns past N zero;
 *   L0C [nb][tile_m][16] f32 accumulators.
 * The x86 tile (kernels_matmul_x86.c) reads a FRACTAL_NZ B in place.
 * After the tile: y = act(alpha * acc + bias + beta * c) in y's dtype, then
 * the epilogue program over the tile (rt_matmul_run).
 */
#ifndef RUNTIME_KERNELS_MATMUL_H
#define RUNTIME_KERNELS_MATMUL_H

#include "common/matmul_geom.h"
#include "runtime/kernels.h"

typedef struct rt_mm_geom {
  const om_tensor *a, *b, *c, *y;
  const void *ad, *bd, *cd;
  const float *biasd; /* [N] f32, or NULL */
  void *yd;
  int act, bnz; /* bnz: b is FRACTAL_NZ */
  float alpha, beta, clip_min, clip_max;
  int64_t m, n, k;         /* rows of the row axis, columns, reduction (elements) */
  int64_t k16;             /* FRACTAL_NZ b: panel height, K rounded up to 16 */
  int64_t tm, tn, tk;      /* tile sizes (elements, multiples of 16) */
  int64_t batch;           /* outer batches: the product of y's unfolded batch dims */
  int64_t mtiles, ntiles;  /* tiles = batch * mtiles * ntiles */
  int nbd;                 /* y's unfolded batch rank */
  int64_t bdims[MAX_RANK]; /* y's unfolded batch dims */
  int64_t sa[MAX_RANK], sb[MAX_RANK], sc[MAX_RANK]; /* per unfolded batch dim; 0 where broadcast */
  int64_t a_sm, a_sk, b_sk, b_sn, c_sm, c_sn;       /* a_sm, c_sm: per row of the row axis */
} rt_mm_geom;

/* Decodes a checked task (args: the resolved tensors). */
void rt_mm_geom_init(const om_task *task, const rt_args *args, rt_mm_geom *g_out);

/* Element offsets of outer batch bt's A, B and C (C: 0 without C). */
static inline void rt_mm_batch_offsets(const rt_mm_geom *g, int64_t bt, int64_t *oa, int64_t *ob,
                                       int64_t *oc) {
  int64_t a = 0, b = 0, c = 0;
  for (int d = g->nbd - 1; d >= 0; d--) {
    int64_t i = bt % g->bdims[d];
    bt /= g->bdims[d];
    a += i * g->sa[d], b += i * g->sb[d], c += i * g->sc[d];
  }
  *oa = a, *ob = b, *oc = c;
}

/* The epilogue of rows [m0, m0 + rows) x columns [n0, n0 + cols) of outer
 * batch bt from f32 sums acc (column j of row m at acc[((j / 16) * ldm + m)
 * * 16 + j % 16], the L0C layout with ldm = tile_m): y = act(alpha * acc +
 * bias + beta * c). with_bias = 0 when the sums already hold the bias. */
void rt_mm_epilogue(const rt_mm_geom *g, int64_t bt, int64_t m0, int64_t rows, int64_t n0, int64_t cols,
                    const float *acc, int64_t ldm, int with_bias);

/* The portable tile; the x86 one (rt_matmul_tile_x86) has the same
 * contract: writes tile (bt, mt, nt) of y completely (before the epilogue
 * program), using core's buffers. */
void rt_matmul_tile(const rt_mm_geom *g, int64_t bt, int64_t mt, int64_t nt, rt_core *core);
#if defined(__x86_64__) && defined(__GNUC__)
void rt_matmul_tile_x86(const rt_mm_geom *g, int64_t bt, int64_t mt, int64_t nt, rt_core *core);
#endif

#endif
