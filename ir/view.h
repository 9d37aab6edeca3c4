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

/* The strided view v of node n's input (v->dims are the input's dims, its
 * offset and strides address some tensor below it) carried through n to
 * its output k, into *out_v (dims = the output's, out_rank / out_dims
 * alike): a Transpose, Slice or Split moves each output dim along one
 * input dim; a Reshape, Flatten, Squeeze, Unsqueeze or Identity regroups
 * the dims, which is a view when each run of input dims merged into output
 * dims steps evenly (stride[i] = stride[i+1] * dims[i+1]); output dims of 1
 * get stride 0. Returns 0, or -1 when n is another op, has an empty input
 * or output, or the output is no strided view of v. */
int ir_view_follow(const ir_node *n, int k, const ir_view *v, ir_view *out_v);

/* The inverse of ir_view_follow for the ops that move every element once
 * (Transpose and the Reshape family): from the view y of node n's output
 * (y->dims are the output's), the view of its input (dims = n->in[0]'s)
 * into *x_out. Returns 0, or -1 when n is another op or the input is no
 * strided view of y. */
int ir_view_unfollow(const ir_node *n, const ir_view *y, ir_view *x_out);

/* FusedAttention's operand t (0 q, 1 k, 2 v: inputs; 3 y: the output) as
 * the node reads or writes it: its logical dims and its element offset and
 * strides in the value it views (in[t], or out[0] for y). The attribute
 * "q_view" / "k_view" / "v_view" / "y_view" = [offset, dims[r], strides[r]]
 * (ops.def) when the node has it, else the value itself in C order; for y
 * without one, its dims are out[0]'s. Returns 0, or -1 for a malformed
 * attribute. */
int ir_attn_operand(const ir_node *n, int t, ir_view *v_out);
extern const char *const ir_attn_view_attr[4];

#endif
