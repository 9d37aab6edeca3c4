/* matmul_geom.h - the MATMUL task's matrix geometry (om_format.h), shared
 * by the compiler (passes/tiling.c decides the row fold from it; emit
 * encodes operand permutations) and the runtime (runtime/kernels_matmul.c
 * checks both and addresses the operands with it).
 *
 * An operand is stored in C order with its dims; it is read through a
 * permutation (a Transpose folded into the MatMul: logical dim d is stored
 * dim perm[d]) and then, with trans, with its last two logical dims
 * swapped. From the operands it derives M, N, K, y's batch dims and each
 * operand's element strides, 0 along a dim it broadcasts over:
 *   A element (m, k) of batch index i  at  sum_d i_d * sa[d] + m * a_sm + k * a_sk
 *   B element (k, n)                       sum_d i_d * sb[d] + k * b_sk + n * b_sn
 *   C element (m, n)                       sum_d i_d * sc[d] + m * c_sm + n * c_sn
 * where i runs over y's batch dims (C order). A FRACTAL_NZ B (types.h; no
 * permutation, no trans) is no strided array: sb[d] steps whole padded
 * matrices (N1*16 x K1*16 elements) and b_sk, b_sn are 0; the kernels
 * address its panels. c is contiguous, numpy-broadcast to y.
 *
 * The row fold. y's last `fold` batch dims and M can be one axis of rows
 * when B (and so each column's bias) is the same for every index of those
 * dims and A's and C's rows are evenly spaced along it: the product is then
 * one matrix of (their product) * M rows, tiled as such, which for a batch
 * of one-row products ([64,1,256] x [256,768]: torch's attention
 * in-projection) is the difference between 64 matrix-vector products and
 * one matrix product. y's rows are contiguous in any case.
 */
#ifndef COMMON_MATMUL_GEOM_H
#define COMMON_MATMUL_GEOM_H

#include <stdint.h>

#include "types.h"

typedef struct mm_geom {
  int nbd;                                          /* y's batch rank */
  int64_t bdims[MAX_RANK];                          /* y's batch dims */
  int64_t m, n, k;                                  /* matrix sizes (elements) */
  int64_t sa[MAX_RANK], sb[MAX_RANK], sc[MAX_RANK]; /* element strides per batch dim */
  int64_t a_sm, a_sk, b_sk, b_sn, c_sm, c_sn;       /* element strides within a matrix */
} mm_geom;

/* One operand: rank and dims as stored, perm (NULL: none) and trans. */
typedef struct mm_operand {
  int rank;
  const int64_t *dims;
  const int *perm;
  int trans;
} mm_operand;

/* A permutation as the task's perm_a / perm_b param: 0 = none (the
 * identity), else perm[d] in bits [4d, 4d + 4) for d < rank, the bits above
 * 0. decode: -1 when code is not a permutation of 0..rank-1 in this form. */
int mm_perm_decode(int32_t code, int rank, int *perm_out);
int32_t mm_perm_encode(int rank, const int *perm);

/* The operand's logical dims (perm applied, before trans) and, when
 * strides_out is not NULL, its element strides along them. */
void mm_logical(const mm_operand *o, int64_t *dims_out, int64_t *strides_out);

/* The geometry of y = op(a) x op(b) (+ c): bnz: b is FRACTAL_NZ (never
 * permuted or transposed); c of rank rc (< 0: no c), y of rank ry. The dims
 * must be a valid product (the runtime's check, the compiler's shape
 * inference); nothing is checked here. */
void mm_geom_init(const mm_operand *a, const mm_operand *b, int bnz, int rc, const int64_t *cd, int ry,
                  const int64_t *yd, mm_geom *g_out);

/* Whether y's last `fold` batch dims (0 <= fold <= nbd) fold into the row
 * axis: 0 with the element steps from one row to the next of a and c
 * (*a_row, *c_row; 0 when the operand does not vary along the rows), -1
 * when B varies over a folded dim or A's or C's rows are not evenly spaced. */
int mm_fold_rows(const mm_geom *g, int fold, int64_t *a_row_out, int64_t *c_row_out);

/* The largest fold mm_fold_rows accepts. */
int mm_max_fold(const mm_geom *g);

#endif
