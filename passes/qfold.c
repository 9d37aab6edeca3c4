/* qfold.c - QuantizeLinear and DequantizeLinear of constants become
 * constants.
 *
 * Why a pass of its own: constfold leaves these two ops alone (ir/eval.h's
 * ir_fold_node), because DequantizeLinear(constant int8 weights) is where a
 * quantized model's weights are still visible as int8 with their scales and
 * zero points. This is the place in the pipeline where that is read; today
 * every such node is folded here with the reference evaluator's arithmetic
 * (common/quant.h), so that lower_gemm, bn_fold and fuse see float weights
 * exactly as they would after constfold.
 *
 * Contract.
 *   Needs:   shape_infer, constfold (scales and zero points are constants
 *            where the model has them so).
 *   Changes: QuantizeLinear and DequantizeLinear nodes whose inputs are all
 *            constants (below constfold's size limit) are folded into
 *            constants; the graph is compacted.
 *   Leaves:  topological order; no QuantizeLinear or DequantizeLinear of
 *            constants only (below the size limit).
 */
#include "ir/eval.h"
#include "pass.h"

enum { FOLD_MAX_BYTES = 64 << 20 }; /* constfold's */

status pass_qfold(ir_graph *g, pass_ctx *ctx, diag *d) {
  (void)ctx;
  arena scratch;
  arena_init(&scratch, 0);
  status st = ST_OK;
  for (int i = 0; i < g->nnodes && st == ST_OK; i++) {
    st = ir_fold_quant_node(g, g->nodes[i], FOLD_MAX_BYTES, &scratch, d);
    arena_free(&scratch);
  }
  if (st == ST_OK) ir_graph_compact(g);
  return st;
}
