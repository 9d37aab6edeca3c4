/* kernels_matmul.h - the MATMUL task's geometry, shared by the portable path
 * (kernels_matmul.c) and the x86 path (kernels_matmul_x86.c).
 *
 * om_format.h (OM_TASK_MATMUL) is the contract. rt_mm_geom_init decodes a
 * task that rt_matmul_check accepted into matrix sizes, element strides and
 * per-batch-dim strides, so a tile only adds offsets:
 *   A element (m, k) of batch bt is at  a_off(bt) + m * a_sm + k * a_sk,
 *   B element (k, n)                    b_off(bt) + k * b_sk + n * b_sn,
 *   C element (m, n)                    c_off(bt) + m * c_sm + n * c_sn,
 *   Y element (m, n)                    (bt * M + m) * N + n,
 * all in elements. The batch index bt runs over y's batch dims in C order.
 *
 * A tile (bt, mt, nt) is rows [mt*tile_m, ...) x columns [nt*tile_n, ...),
 * staged per K chunk of tile_k as f32 (fp16 values are exact in f32):
 *   L0A [m][k]        the chunk's rows of op(A), klen floats a row;
 *   L0B [nb][k][16]   the chunk's rows of op(B), 16 columns per n block,
 *                     columns past N zero;
 *   L0C [nb][tile_m][16]  f32 accumulators.
 * The epilogue y = act(alpha * acc + beta * c) runs from L0C.
 */
#ifndef RUNTIME_KERNELS_MATMUL_H
#define RUNTIME_KERNELS_MATMUL_H

#include "runtime/kernels.h"

typedef struct rt_mm_geom {
  const om_tensor *a, *b, *c, *y;
  const void *ad, *bd, *cd;
  void *yd;
  int act;
  float alpha, beta, clip_min, clip_max;
  int64_t m, n, k;                                  /* matrix sizes (elements) */
  int64_t tm, tn, tk;                               /* tile sizes (elements, multiples of 16) */
  int64_t batch, mtiles, ntiles;                    /* tiles = batch * mtiles * ntiles */
  int nbd;                                          /* y's batch rank */
  int64_t bdims[MAX_RANK];                          /* y's batch dims */
  int64_t sa[MAX_RANK], sb[MAX_RANK], sc[MAX_RANK]; /* per batch dim; 0 where broadcast */
  int64_t a_sm, a_sk, b_sk, b_sn, c_sm, c_sn;
} rt_mm_geom;

/* Decodes a checked task (args: the resolved tensors). */
void rt_mm_geom_init(const om_task *task, const rt_args *args, rt_mm_geom *g_out);

/* Element offsets of batch bt's A, B and C (C: 0 without C). */
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

/* The portable tile; the AVX2 one (rt_matmul_tile_x86) has the same contract:
 * writes tile (bt, mt, nt) of y completely, using core's L0A/L0B/L0C. */
void rt_matmul_tile(const rt_mm_geom *g, int64_t bt, int64_t mt, int64_t nt, rt_core *core);
#if defined(__x86_64__) && defined(__GNUC__)
void rt_matmul_tile_x86(const rt_mm_geom *g, int64_t bt, int64_t mt, int64_t nt, rt_core *core);
#endif

#endif
