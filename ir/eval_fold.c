/* eval_fold.c - folding one node into a constant with the evaluator
 * (ir_fold_node, ir/eval.h).
 *
 * A node folds when the evaluator implements its op, its inputs are all
 * constants (a Shape or Size needs only its input's dims), each of its
 * outputs (all present: a Split's pieces fold together) is smaller than the
 * caller's limit, and the evaluation is cheap: at most FOLD_MAX_WORK inner
 * steps, counted as the largest output's loop extent times the steps per
 * output element of the ops whose evaluation is not linear in their inputs
 * and outputs (windows, dot products); the ops that only fold
 * (ConstantOfShape, Range, ...) are bounded by the size limit alone. Each
 * output value keeps its name and becomes a constant in place, so readers
 * need no rewiring; the node is marked dead.
 *
 * QuantizeLinear and DequantizeLinear are not folded here: DequantizeLinear
 * of constant int8 weights is the quantized weights as the qfold pass reads
 * them (passes/qfold.c), which folds the ones it does not absorb with
 * ir_fold_quant_node.
 */
#include "ir/eval.h"

/* FOLD_MAX_WORK bounds the evaluator's inner steps, so that a small output
 * computed from a huge window (a pool padded to 65535 x 65535, a long dot
 * product) runs on the device instead of stalling the compiler. */
#define FOLD_MAX_WORK ((int64_t)1 << 26)
static int64_t elements(const ir_value *v) { return v ? ir_value_elements(v) : 0; }

/* The iterations of a loop nest over v's dims: its elements, except that an
 * empty dim counts 1, since an evaluator's outer loops may still run over the
 * other dims of an empty value (a Softmax over [2^40, 0]). -1 past 2^63. */
static int64_t loop_extent(const ir_value *v) {
  int64_t n = 1;
  for (int i = 0; v && i < v->rank; i++)
    if (__builtin_mul_overflow(n, v->dims[i] > 1 ? v->dims[i] : 1, &n)) return -1;
  return n;
}

/* Inner steps per output element of the ops whose evaluation is not linear in
 * their inputs and outputs; 1 for the rest. -1 when it is not known yet. */
static int64_t steps_per_output(const ir_node *n) {
  int64_t k[MAX_RANK], steps = 1;
  int count;
  switch (n->op) {
  case IR_OP_MAXPOOL:
  case IR_OP_AVGPOOL:
  case IR_OP_LPPOOL: /* the window's nested loops; an empty */
  case IR_OP_GLOBALMAXPOOL:
  case IR_OP_GLOBALAVGPOOL:
  case IR_OP_GLOBALLPPOOL: /* dim still costs 1 */
    if (n->op == IR_OP_MAXPOOL || n->op == IR_OP_AVGPOOL || n->op == IR_OP_LPPOOL) {
      count = ir_attr_ints(n, "kernel_shape", k, MAX_RANK);
      if (count < 1 || count > MAX_RANK) return -1;
    } else {
      if (!n->in[0] || n->in[0]->rank < 2) return -1;
      count = n->in[0]->rank - 2;
      for (int i = 0; i < count; i++)
        k[i] = n->in[0]->dims[2 + i];
    }
    for (int i = 0; i < count; i++)
      if (k[i] < 0 || __builtin_mul_overflow(steps, k[i] > 1 ? k[i] : 1, &steps)) return -1;
    return steps;
  case IR_OP_CONV: /* weight [M, C/G, k...]: one output reads C/G x k... */
    if (!n->in[1] || n->in[1]->rank < 1) return -1;
    return n->in[1]->dims[0] > 0 ? elements(n->in[1]) / n->in[1]->dims[0] : 1;
  case IR_OP_MATMUL:
  case IR_OP_GEMM: /* K: A's last dim (or first, transposed: the larger bounds it) */
    if (!n->in[0] || n->in[0]->rank < 1) return -1;
    for (int i = 0; i < n->in[0]->rank; i++)
      steps = n->in[0]->dims[i] > steps ? n->in[0]->dims[i] : steps;
    return steps;
  default: return 1;
  }
}

static int foldable(const ir_node *n, int64_t max_bytes) {
  if (n->nout < 1 || !ir_eval_supported(n->op)) return 0;
  for (int k = 0; k < n->nout; k++) /* a counted output's extent is a run-time fact */
    if (n->out[k] && n->out[k]->count_axis >= 0) return 0;
  int64_t outs = 0, work;
  for (int k = 0; k < n->nout; k++) { /* every output present and small; the loops of the largest */
    int64_t bytes = n->out[k] ? ir_value_bytes(n->out[k]) : -1, ext = n->out[k] ? loop_extent(n->out[k]) : -1;
    if (bytes < 0 || bytes >= max_bytes) return 0;
    outs = ext < 0 || outs < 0 ? -1 : ext > outs ? ext : outs;
  }
  int64_t per = steps_per_output(n);
  int reads_dims_only = n->op == IR_OP_SHAPE || n->op == IR_OP_SIZE;
  for (int i = 0; i < n->nin && outs >= 0 && !reads_dims_only; i++) /* an empty input's loops count too */
    if (elements(n->in[i]) == 0) {
      int64_t ext = loop_extent(n->in[i]);
      outs = ext < 0 || ext > outs ? ext : outs;
    }
  /* The ops that only fold (ops.def's lay NONE: Shape, Size, ConstantOfShape,
   * Range) cost a step per output element, already bounded by max_bytes. */
  if (ir_ops[n->op].lay != IR_LAY_NONE &&
      (per < 0 || outs < 0 || __builtin_mul_overflow(per, outs, &work) || work > FOLD_MAX_WORK))
    return 0;
  if (reads_dims_only) return n->in[0]->rank >= 0;
  for (int i = 0; i < n->nin; i++)
    if (n->in[i] && !n->in[i]->data) return 0;
  return 1;
}

static int is_quant(const ir_node *n) { return n->op == IR_OP_QUANTIZE || n->op == IR_OP_DEQUANTIZE; }

static status fold(ir_graph *g, ir_node *n, int64_t max_bytes, arena *scratch, diag *d) {
  if (n->dead || !foldable(n, max_bytes)) return ST_OK;
  /* any number of outputs: a Split into 128 rows (WaveRNN's stretch) folds too */
  const void **in = arena_array(scratch, (size_t)n->nin + 1, sizeof *in);
  void **out = arena_array(scratch, (size_t)n->nout, sizeof *out);
  const void **data = arena_array(scratch, (size_t)n->nout, sizeof *data);
  if (!in || !out || !data) return diag_set(d, ST_ERR_NOMEM, "out of memory folding node '%s'", n->name);
  for (int j = 0; j < n->nin; j++)
    in[j] = n->in[j] ? n->in[j]->data : NULL;
  diag local;
  diag_init(&local);
  status est = ir_eval_node(n, in, out, scratch, &local);
  if (est == ST_ERR_UNSUPPORTED) return ST_OK;
  if (est) return diag_set(d, est, "%s", local.msg);
  for (int k = 0; k < n->nout; k++)
    if (!(data[k] = arena_memdup(&g->arena, out[k], (size_t)ir_value_bytes(n->out[k]))))
      return diag_set(d, ST_ERR_NOMEM, "out of memory folding node '%s'", n->name);
  for (int k = 0; k < n->nout; k++) {
    n->out[k]->data = data[k];
    n->out[k]->producer = NULL;
  }
  n->dead = 1;
  return ST_OK;
}

status ir_fold_node(ir_graph *g, ir_node *n, int64_t max_bytes, arena *scratch, diag *d) {
  return is_quant(n) ? ST_OK : fold(g, n, max_bytes, scratch, d);
}

status ir_fold_quant_node(ir_graph *g, ir_node *n, int64_t max_bytes, arena *scratch, diag *d) {
  return is_quant(n) ? fold(g, n, max_bytes, scratch, d) : ST_OK;
}
