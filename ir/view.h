/* view.h - data-movement ops as strided views of their input.
 *
 * Transpose, Slice, Split, Expand, Tile, DepthToSpace and SpaceToDepth all write
 * their output in C order while reading the input at affine positions: for
 * an output walked as a C-order array of `dims` (the view; its element count
 * is the output's), element idx comes from input element
 *   offset + sum_d idx[d] * strides[d]     (strides in elements, may be 0
 *                                           for repetition or negative for
 *                                           reversed slices).
 * ir_view_build derives that view from the node's attributes (the IR
 * contract of ops.def) and the input's dims; it is the one definition that
 * shape inference (output dims), the reference evaluator (the copy) and
 * emit (the STRIDED_COPY task's params) share, so they cannot disagree.
 */
#ifndef IR_VIEW_H
#define IR_VIEW_H

#include <stdint.h>

#include "ir/ir.h"

enum { IR_SPLIT_MAX_OUTPUTS = 4096 }; /* = Split's max_out in ops.def (torch.unbind over a sequence) */

typedef struct ir_view {
  int rank;                  /* 0..MAX_RANK */
  int64_t offset;            /* input elements */
  int64_t dims[MAX_RANK];    /* extents, C order */
  int64_t strides[MAX_RANK]; /* input elements per step */
  int out_rank;              /* the output value's rank and dims */
  int64_t out_dims[MAX_RANK];
} ir_view;

/* 1 for the ops ir_view_build handles. */
int ir_view_op(ir_op op);

/* The view of output `out` of node n (Split has one view per output; the
 * other ops one output) over an input of rank `rank` and dims `dims`.
 * Returns 0, or -1 with a message in err (bad attributes for those dims). */
int ir_view_build(const ir_node *n, int out, int rank, const int64_t *dims, ir_view *v_out, char *err,
                  size_t err_size);

#endif
