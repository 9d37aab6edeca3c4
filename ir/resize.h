/* resize.h - Resize (ops.def has the IR contract): output dims, the
 * per-dim tap tables the RESIZE task runs on (om_format.h), and the
 * reference evaluator, all from one reading of the node's attributes.
 *
 * The tables are where ONNX's semantics live: for every resampled dim and
 * output coordinate, the coordinate transform gives a source position, the
 * mode gives its neighbours and their coefficients (nearest rounding,
 * linear, cubic with cubic_coeff_a, antialiased filters stretched by
 * 1/scale when downsampling, exclude_outside renormalising), and edge
 * clamping turns the neighbours into x coordinates -- as ONNX's reference
 * implementation (onnx/reference/ops/op_resize.py) does, in double.
 */
#ifndef IR_RESIZE_H
#define IR_RESIZE_H

#include "common/arena.h"
#include "common/status.h"
#include "ir/ir.h"

enum { IR_RESIZE_MAX_TAPS = 1024, IR_RESIZE_MAX_COMBOS = 4096 };

/* Shape inference for Resize n: output dims into dims_out (x's rank);
 * replaces `sizes` and `keep_aspect_ratio_policy` by the `scales` the
 * coordinate transform uses. Errors name the node. */
status ir_resize_infer(ir_graph *g, ir_node *n, diag *d, int64_t *dims_out);

typedef struct ir_resize_tables {
  int rank;
  int select;         /* nearest: one tap per coordinate and no weights */
  int taps[MAX_RANK]; /* 0: the dim is not resampled */
  int64_t count;      /* entries, dim after dim: y dims[d] x taps[d] */
  int32_t *idx;       /* [count] x coordinates; -1 in tap 0: outside (extrapolation) */
  float *w;           /* [count] weights; NULL when select */
} ir_resize_tables;

/* The tables of Resize n (after shape inference) for x and y; allocated
 * from `a`. ST_ERR_UNSUPPORTED when a dim needs more than
 * IR_RESIZE_MAX_TAPS taps or the leading dims more than
 * IR_RESIZE_MAX_COMBOS tap combinations. */
status ir_resize_tables_build(const ir_node *n, const ir_value *x, const ir_value *y, arena *a,
                              ir_resize_tables *out, diag *d);

/* The reference evaluator for Resize n (ir_eval_node's contract, eval.h). */
status ir_eval_resize(const ir_node *n, const void *const *inputs, void **outputs_out, arena *a, diag *d);

#endif
