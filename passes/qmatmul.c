/* qmatmul.c - a dynamically quantized MatMul's float epilogue folds into
 * its int8 QMatMul.
 *
 * ONNX Runtime's dynamic quantization writes each MatMul with constant
 * weights as
 *   x -> DynamicQuantizeLinear -> (x_q, x_scale, x_zp)
 *   MatMulInteger(x_q, W_q, x_zp) -> Cast(to float) -> Mul(., x_scale * W_scale)
 *   [-> Add(., bias)]
 * The importer makes MatMulInteger on a constant i8 W_q with zero point 0
 * one QMatMul (ops.def; frontend/onnx_decomp_quant.c), exact int32 sums.
 * Here the Cast, the Mul by a scale of one element or one per column (any
 * f32 value: the run-time product x_scale * W_scale) and an Add of a
 * constant f32 bias per column fold into it: the QMatMul takes the scale
 * and the bias as inputs and writes the last node's f32 value, computing
 * the same f32 operations in the same order (ops.def), so its bits are the
 * graph's. The scale's producer, when a Mul, is marked precision "fp32": it
 * is the f32 product the graph defines, under every precision mode.
 *
 * First, DynQuant nodes (DynamicQuantizeLinear) reading one x compute the
 * same three values: the readers of a later one read the first one's, so
 * x is quantized once (ONNX Runtime's quantize_dynamic writes one per
 * tensor, but a per-MatMul rewrite repeats it for Q, K and V).
 *
 * Contract.
 *   Needs:   shape_infer (dims to match the broadcasts).
 *   Changes: QMatMul(x, w, x_zp) whose i32 value only a Cast to f32
 *            reads, whose value only a Mul reads (not graph outputs),
 *            becomes QMatMul(x, w, x_zp, scale[, bias]) writing the Mul's
 *            (or the following Add's) value; the Cast, Mul and Add go.
 *            A DynQuant whose x an earlier DynQuant reads goes, its
 *            readers reading the earlier one's outputs, unless one of its
 *            outputs is a graph output.
 *   Leaves:  a QMatMul whose sums are read otherwise (it stays i32: the
 *            QMATMUL task writes them), a scale per row or of other dims,
 *            a bias that is not a constant per column: their nodes stay.
 */
#include <string.h>

#include "pass.h"

/* The sole reader of v when it is op with two inputs and v is not a graph
 * output; sets *other to its other input. */
static ir_node *sole_binary(ir_graph *g, ir_value *v, ir_op op, ir_value **other) {
  ir_node *r = v->output_index >= 0 ? NULL : ir_value_sole_reader(g, v);
  if (!r || r->op != op || r->nin != 2 || r->nout != 1 || (r->in[0] == v) == (r->in[1] == v)) return NULL;
  *other = r->in[0] == v ? r->in[1] : r->in[0];
  return r;
}

/* v f32 of one element, or of n along its last axis, broadcasting to y
 * (rank at most y's) without changing y's dims; constant when asked. */
static int per_column(const ir_value *v, const ir_value *y, int64_t n, int constant) {
  if (v->dtype != DT_FLOAT32 || v->rank > y->rank || (constant && !v->data)) return 0;
  const int64_t e = ir_value_elements(v);
  return e == 1 || (e == n && v->dims[v->rank - 1] == n);
}

static int same_shape(const ir_value *a, const ir_value *b) {
  return a->rank == b->rank && !memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank);
}

/* Folds q's Cast -> Mul [-> Add]; 1 when it did, -1 out of memory. */
static int fold(ir_graph *g, ir_node *q) {
  ir_value *acc = q->out[0], *s, *b = NULL;
  const int64_t n = q->in[1]->dims[1];
  ir_node *cast = acc->output_index >= 0 ? NULL : ir_value_sole_reader(g, acc);
  if (!cast || cast->op != IR_OP_CAST || cast->nin != 1 || cast->out[0]->dtype != DT_FLOAT32) return 0;
  ir_node *mul = sole_binary(g, cast->out[0], IR_OP_MUL, &s);
  if (!mul || !per_column(s, acc, n, 0) || !same_shape(mul->out[0], acc)) return 0;
  ir_node *add = sole_binary(g, mul->out[0], IR_OP_ADD, &b);
  if (add && (!per_column(b, acc, n, 1) || ir_value_elements(b) != n || !same_shape(add->out[0], acc)))
    add = NULL, b = NULL;
  ir_node *last = add ? add : mul;
  if (ir_node_set_input(g, q, 3, s) || (b && ir_node_set_input(g, q, 4, b))) return -1;
  if (s->producer && s->producer->op == IR_OP_MUL && ir_attr_set_string(g, s->producer, "precision", "fp32"))
    return -1;
  ir_value *y = last->out[0];
  q->out[0] = y;
  y->producer = q;
  acc->producer = NULL;
  cast->dead = mul->dead = 1;
  if (add) add->dead = 1;
  return 1;
}

/* Merges the DynQuants of one x (above); 1 when one went. */
static int merge_dynquant(ir_graph *g) {
  int changed = 0;
  for (int i = 0; i < g->nnodes; i++) {
    ir_node *a = g->nodes[i];
    if (a->dead || a->op != IR_OP_DYNQUANT) continue;
    for (int j = i + 1; j < g->nnodes; j++) {
      ir_node *b = g->nodes[j];
      if (b->dead || b->op != IR_OP_DYNQUANT || b->in[0] != a->in[0]) continue;
      int out = 0;
      for (int k = 0; k < b->nout; k++)
        out |= b->out[k]->output_index >= 0;
      if (out) continue;
      for (int k = 0; k < b->nout; k++)
        ir_replace_uses(g, b->out[k], a->out[k]);
      b->dead = 1;
      changed = 1;
    }
  }
  return changed;
}

status pass_qmatmul(ir_graph *g, pass_ctx *ctx, diag *d) {
  int changed = merge_dynquant(g);
  for (int i = 0; i < g->nnodes; i++) {
    ir_node *q = g->nodes[i];
    if (q->dead || q->op != IR_OP_QMATMUL || q->nin != 3) continue;
    const int r = fold(g, q);
    if (r < 0) return ir_node_error(d, ST_ERR_NOMEM, q, "out of memory");
    changed |= r;
  }
  if (!changed) return ST_OK;
  ir_graph_compact(g);
  status st = ir_graph_toposort(g, d);
  return st == ST_OK ? pass_dce(g, ctx, d) : st;
}
