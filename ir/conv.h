/* conv.h - the Conv window over 2 or 3 spatial dims (ops.def has the IR
 * contract): one reading of the attributes for shape inference, the
 * reference evaluator, fusion, layout, tiling and emission, so they cannot
 * disagree. 1-D convolutions are 2-D ones by the time they reach the IR
 * (frontend/onnx_conv.c).
 */
#ifndef IR_CONV_H
#define IR_CONV_H

#include "common/arena.h"
#include "common/status.h"
#include "ir/ir.h"

enum { IR_CONV_MAX_SPATIAL = 3 };

typedef struct ir_conv {
  int r; /* spatial dims, 2 or 3 */
  int64_t group;
  int64_t k[IR_CONV_MAX_SPATIAL], s[IR_CONV_MAX_SPATIAL], dl[IR_CONV_MAX_SPATIAL];
  int64_t pb[IR_CONV_MAX_SPATIAL], pe[IR_CONV_MAX_SPATIAL]; /* pads at the begin and the end */
} ir_conv;

/* The window of Conv n for a weight of rank r + 2 (kernel dims from
 * kernel_shape, else the weight's): absent strides, dilations, pads and
 * group default to 1, 1, 0 and 1; auto_pad is not read (shape inference
 * resolves it first). Each value in 1..2^31-1 (pads 0..2^31-1). Returns 0,
 * or -1 with a message in err. */
int ir_conv_read(const ir_node *n, int r, ir_conv *out, char *err, size_t cap);

/* Shape inference for Conv n: checks dtypes, channels, group, bias and
 * residual against the weight, resolves auto_pad into explicit pads (then
 * dropped), writes kernel_shape, strides, dilations, pads (ONNX's order:
 * begins, then ends) and group back, and the output's rank and dims.
 * Errors name the node. */
status ir_conv_infer(ir_graph *g, ir_node *n, diag *d, int *rank_out, int64_t *dims_out);

/* The reference evaluator for Conv n (ir_eval_node's contract, eval.h):
 * f32 products accumulated in double, + bias, + residual, act. */
status ir_eval_conv(const ir_node *n, const void *const *inputs, void **outputs_out, arena *a, diag *d);

#endif
