/* onnx_decomp_loss.c - NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
 * as IR subgraphs (onnx_decomp.h).
 *
 * NLL(input [N, C, d...], target [N, d...], [weight [C]]):
 *   t      = target, with ignore_index replaced by 0 (so every index is valid)
 *   loss   = -GatherElements(input, Unsqueeze(t, 1), axis 1), squeezed at 1
 *   w      = weight[t] (Gather) or 1, and 0 where target == ignore_index
 *   none: loss * w;  sum: ReduceSum(loss * w);  mean: ReduceSum(loss * w) / ReduceSum(w)
 * (without weight and ignore_index, mean is ReduceMean(loss)). SCE is NLL of
 * LogSoftmax(scores, axis 1), which is also its optional log_prob output.
 */
#include <inttypes.h>

#include "frontend/onnx_decomp.h"

enum { RED_NONE, RED_SUM, RED_MEAN };

static int reduction(dc *b) {
  if (dc_attr_string_is(b, "reduction", "mean", "mean")) return RED_MEAN;
  if (dc_attr_string_is(b, "reduction", "mean", "sum")) return RED_SUM;
  if (!dc_attr_string_is(b, "reduction", "mean", "none"))
    dc_fail(b, ST_ERR_INVALID, "attribute 'reduction' must be \"none\", \"sum\" or \"mean\"");
  return RED_NONE;
}

static ir_value *nll(dc *b, ir_value *logp, ir_value *target, ir_value *weight) {
  static const int64_t one = 1;
  int red = reduction(b);
  dtype ft = dc_dtype(b, logp), it = dc_dtype(b, target);
  if (b->st) return NULL;
  if (it != DT_INT64 && it != DT_INT32)
    return dc_fail(b, ST_ERR_INVALID, "input 1 '%s' (target) must be int32 or int64, it is %s", target->name,
                   onnx_dtype_name(it));
  ir_value *t = target, *ignored = NULL;
  if (dc_has_attr(b, "ignore_index")) {
    ignored = dc_op2(b, IR_OP_EQUAL, target, dc_scalar(b, it, (double)dc_attr_int(b, "ignore_index", 0)));
    t = dc_where(b, ignored, dc_scalar(b, it, 0), target);
  }
  ir_value *w = weight ? dc_gather(b, weight, t, 0) : NULL;
  if (ignored) w = dc_where(b, ignored, dc_scalar(b, ft, 0), w ? w : dc_scalar(b, ft, 1));
  ir_value *picked = dc_gather_elements(b, logp, dc_unsqueeze(b, t, 1, &one), 1);
  ir_value *loss = dc_op1(b, IR_OP_NEG, dc_squeeze(b, picked, 1, &one));
  if (w) loss = dc_op2(b, IR_OP_MUL, loss, w);
  if (red == RED_NONE) return loss;
  if (red == RED_SUM) return dc_reduce(b, "sum", loss, 0, NULL, 0);
  if (!w) return dc_reduce(b, "mean", loss, 0, NULL, 0);
  return dc_op2(b, IR_OP_DIV, dc_reduce(b, "sum", loss, 0, NULL, 0), dc_reduce(b, "sum", w, 0, NULL, 0));
}

/* NegativeLogLikelihoodLoss(input, target, [weight]) (opset 12). */
status onnx_decomp_nll_loss(onnx_node *nd, ir_node *none) {
  dc b;
  dc_begin(&b, nd);
  dc_output(&b, 0, nll(&b, dc_in(&b, 0), dc_in(&b, 1), dc_in(&b, 2)));
  return dc_end(&b);
}

/* SoftmaxCrossEntropyLoss(scores, labels, [weights]) -> output, [log_prob] (opset 12). */
status onnx_decomp_sce_loss(onnx_node *nd, ir_node *none) {
  dc b;
  dc_begin(&b, nd);
  ir_value *logp = dc_softmax(&b, dc_in(&b, 0), 1, 1);
  dc_output(&b, 0, nll(&b, logp, dc_in(&b, 1), dc_in(&b, 2)));
  if (dc_output_used(&b, 1)) dc_output(&b, 1, logp);
  return dc_end(&b);
}
