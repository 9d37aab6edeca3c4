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
 * ConvInteger on constant weights, imported as a QConv with a run-time
 * zero point (ops.def; frontend/onnx_decomp_quant.c), is written so too
 * (quantize_dynamic of a CNN): Cast -> Mul(., x_scale * W_scale) [-> Add(.,
 * bias)] [-> Relu | Clip], the scale one element or one per output channel
 * ([1, M, 1, 1]: axis 1), the bias a constant per output channel. They fold
 * into the QConv likewise (fold_conv), the Relu or Clip as its f32 clamp,
 * so that its QCONV2D task writes the last node's f32 value.
 *
 * First, DynQuant nodes (DynamicQuantizeLinear) reading one x compute the
 * same three values: the readers of a later one read the first one's, so
 * x is quantized once (ONNX Runtime's quantize_dynamic writes one per
 * tensor, but a per-MatMul rewrite repeats it for Q, K and V).
 *
 * Last, a QDQ model's MatMul of two activations (attention's Q x K^T and
 * P x V, as ONNX Runtime's quantize_static or omquant write them):
 *   DequantizeLinear(x_q) , DequantizeLinear(w_q) -> MatMul [-> QuantizeLinear]
 * with x_q and w_q run-time u8 or i8 values of rank >= 2, each dequantized
 * per tensor with a constant scale and zero point, becomes one QMatMul with
 * a run-time w (ops.def): the exact int32 sums of (x_q - x_zp) * (w_q -
 * w_zp), requantized with s_x * s_w / s_y (each product rounded to f32, as
 * the weighted islands of passes/qconv.c) when the MatMul's one reader is a
 * QuantizeLinear per tensor (its output the QMatMul's), else their f32
 * value times s_x * s_w (the MatMul's f32 output: the float graph sums the
 * same products in f32). What does not match is noted (atc --log=info).
 *
 * Before that, a DequantizeLinear per tensor of a run-time int8 value that
 * only Slices read (the in-projection's output split into Q, K and V)
 * moves below them (hoist_slices): the Slices copy int8 bytes, not f32,
 * and a MatMul reading such a Slice reads a DequantizeLinear (the fold).
 *
 * Contract.
 *   Needs:   shape_infer (dims to match the broadcasts); qconv first (it
 *            folds the MatMuls with constant weights and moves Transposes
 *            and Reshapes between a QuantizeLinear and a DequantizeLinear
 *            onto the int8 values).
 *   Changes: QMatMul(x, w, x_zp) whose i32 value only a Cast to f32
 *            reads, whose value only a Mul reads (not graph outputs),
 *            becomes QMatMul(x, w, x_zp, scale[, bias]) writing the Mul's
 *            (or the following Add's) value; the Cast, Mul and Add go.
 *            A run-time zero point QConv(x, w, x_zp) read only by a Cast
 *            to f32 [-> Mul] likewise becomes QConv(x, w, x_zp, scale[,
 *            bias]) [with f_lo, f_hi] writing the Cast's, Mul's, Add's,
 *            Relu's or Clip's value (scale 1 with the Cast alone).
 *            A DynQuant whose x an earlier DynQuant reads goes, its
 *            readers reading the earlier one's outputs, unless one of its
 *            outputs is a graph output.
 *            A DequantizeLinear as hoist_slices says is replaced by one
 *            per Slice (same scale and zero point) writing its output,
 *            the Slice reading the int8 value.
 *            A MatMul on two DequantizeLinear of run-time int8 values as
 *            above is a QMatMul(x_q, w_q, x_zp, scale) with attrs w_zp
 *            [and to, y_zp, lo, hi] writing the QuantizeLinear's output
 *            (which goes) or the MatMul's; the DequantizeLinears go when
 *            nothing else reads them.
 *   Leaves:  a QMatMul whose sums are read otherwise (it stays i32: the
 *            QMATMUL task writes them), a scale per row or of other dims,
 *            a bias that is not a constant per column: their nodes stay.
 *            A MatMul whose operands are not both such DequantizeLinears
 *            (a constant, a per-channel scale, a run-time scale, K past
 *            32768) stays float.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/elem.h"
#include "common/om_format.h"
#include "common/quant.h"
#include "pass.h"

/* The sole reader of v when it is op with two inputs and v is not a graph
 * output; sets *other to its other input. */
static ir_node *sole_binary(ir_graph *g, ir_value *v, ir_op op, ir_value **other) {
  ir_node *r = v->output_index >= 0 ? NULL : ir_value_sole_reader(g, v);
  if (!r || r->op != op || r->nin != 2 || r->nout != 1 || (r->in[0] == v) == (r->in[1] == v)) return NULL;
  *other = r->in[0] == v ? r->in[1] : r->in[0];
  return r;
}

/* The Cast to f32 that alone reads the int32 acc (not a graph output), or NULL. */
static ir_node *f32_cast(ir_graph *g, ir_value *acc) {
  ir_node *cast = acc->output_index >= 0 ? NULL : ir_value_sole_reader(g, acc);
  return cast && cast->op == IR_OP_CAST && cast->nin == 1 && cast->out[0]->dtype == DT_FLOAT32 ? cast : NULL;
}

static int same_shape(const ir_value *a, const ir_value *b) {
  return a->rank == b->rank && !memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank);
}

/* The Cast -> Mul [-> Add] after the int32 acc of an integer product q:
 * the scale s and the bias b it applies. */
typedef struct scale_chain {
  ir_node *cast, *mul, *add; /* add NULL when no bias Add follows */
  ir_value *s, *b;
} scale_chain;

/* Whether v can be the chain's scale (constant 0) or bias (1) for the n
 * output channels of acc. */
typedef int (*chain_fit)(const ir_value *v, const ir_value *acc, int64_t n, int constant);

/* Finds q's chain whose scale and bias fit; the bias also has n elements.
 * 1 when it has a Cast and a Mul; 0 with c->cast NULL (no Cast to f32 alone
 * reads acc) or c->mul NULL (no fitting Mul after it). */
static int chain_of(ir_graph *g, ir_node *q, int64_t n, chain_fit fit, scale_chain *c) {
  ir_value *acc = q->out[0];
  memset(c, 0, sizeof *c);
  if (!(c->cast = f32_cast(g, acc))) return 0;
  c->mul = sole_binary(g, c->cast->out[0], IR_OP_MUL, &c->s);
  if (!c->mul || !fit(c->s, acc, n, 0) || !same_shape(c->mul->out[0], acc)) return c->mul = NULL, 0;
  c->add = sole_binary(g, c->mul->out[0], IR_OP_ADD, &c->b);
  if (c->add && (!fit(c->b, acc, n, 1) || ir_value_elements(c->b) != n || !same_shape(c->add->out[0], acc)))
    c->add = NULL, c->b = NULL;
  return 1;
}

/* q takes c (its scale as input 3, its bias as 4) and writes last's output
 * (the chain's last node, or an activation after it); the chain and last
 * go. 1, or -1 out of memory. */
static int take_chain(ir_graph *g, ir_node *q, const scale_chain *c, ir_node *last) {
  ir_value *acc = q->out[0], *y = last->out[0];
  if (ir_node_set_input(g, q, 3, c->s) || (c->b && ir_node_set_input(g, q, 4, c->b))) return -1;
  if (c->s->producer && c->s->producer->op == IR_OP_MUL &&
      ir_attr_set_string(g, c->s->producer, "precision", "fp32"))
    return -1;
  q->out[0] = y;
  y->producer = q;
  acc->producer = NULL;
  c->cast->dead = c->mul->dead = last->dead = 1;
  if (c->add) c->add->dead = 1;
  return 1;
}

/* v f32 of one element, or of n along its last axis, broadcasting to acc
 * (rank at most acc's) without changing acc's dims; constant when asked. */
static int per_column(const ir_value *v, const ir_value *acc, int64_t n, int constant) {
  if (v->dtype != DT_FLOAT32 || v->rank > acc->rank || (constant && !v->data)) return 0;
  const int64_t e = ir_value_elements(v);
  return e == 1 || (e == n && v->dims[v->rank - 1] == n);
}

/* Folds a QMatMul q's Cast -> Mul [-> Add]; 1 when it did, -1 out of memory. */
static int fold(ir_graph *g, ir_node *q) {
  scale_chain c;
  if (!chain_of(g, q, q->in[1]->dims[1], per_column, &c)) return 0;
  return take_chain(g, q, &c, c.add ? c.add : c.mul);
}

/* v f32 of one element, or of m along axis 1 of the 4-D acc (rank at most
 * 4, its other dims 1: ONNX Runtime reshapes a per-channel scale and the
 * bias to [1, M, 1, 1]); constant when asked. */
static int per_channel(const ir_value *v, const ir_value *acc, int64_t m, int constant) {
  (void)acc;
  if (v->dtype != DT_FLOAT32 || v->rank > 4 || (constant && !v->data)) return 0;
  const int64_t e = ir_value_elements(v);
  return e == 1 || (e == m && v->rank >= 3 && v->dims[v->rank - 3] == m);
}

/* Folds the Cast -> Mul [-> Add] [-> Relu | Clip] after a run-time zero
 * point QConv q (ConvInteger's, ops.def) into it, as fold does for a
 * QMatMul: its scale per tensor or per output channel (any f32 value), its
 * bias a constant per output channel, the Relu or Clip (constant bounds)
 * its f32 clamp f_lo, f_hi. Without such a Mul the Cast alone folds, with
 * a scale of 1 (fl(fl((float)acc) * 1) is the Cast's value): QCONV2D
 * writes f32, not the i32 its layouts cannot move. 1 when it did, -1 out
 * of memory. */
static int fold_conv(ir_graph *g, ir_node *q) {
  scale_chain c;
  if (!chain_of(g, q, q->in[1]->dims[0], per_channel, &c) && !c.cast) return 0;
  if (ir_attr_set_int(g, q, "to", DT_FLOAT32)) return -1;
  if (!c.mul) { /* the Cast alone: scale 1 */
    char name[300];
    snprintf(name, sizeof name, "%s_one", q->name);
    const float one = 1.0f;
    const int64_t d1 = 1;
    ir_value *sv = ir_const_new(g, name, DT_FLOAT32, 1, &d1, &one, sizeof one), *y = c.cast->out[0];
    if (!sv || ir_node_set_input(g, q, 3, sv)) return -1;
    q->out[0]->producer = NULL, q->out[0] = y, y->producer = q, c.cast->dead = 1;
    return 1;
  }
  ir_node *last = c.add ? c.add : c.mul;
  ir_node *act = last->out[0]->output_index >= 0 ? NULL : ir_value_sole_reader(g, last->out[0]);
  if (act && !(act->op == IR_OP_RELU || (act->op == IR_OP_CLIP && act->nin == 1))) act = NULL;
  const int relu = act && act->op == IR_OP_RELU;
  if (act && (((relu || ir_attr_find(act, "min")) &&
               ir_attr_set_float(g, q, "f_lo", relu ? 0.0 : ir_attr_float(act, "min", 0.0))) ||
              (!relu && ir_attr_find(act, "max") &&
               ir_attr_set_float(g, q, "f_hi", ir_attr_float(act, "max", 0.0)))))
    return -1;
  return take_chain(g, q, &c, act ? act : last);
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

/* A constant f32 or f16 scale of one element, finite and > 0, into *s. */
static int tensor_scale(const ir_value *v, float *s) {
  double f;
  if (!v || !ir_value_float_scalar(v, &f)) return 0;
  *s = (float)f;
  return *s > 0.0f && !isinf(*s);
}

/* A zero point of one element (absent: 0) into *z. */
static int tensor_zp(const ir_value *v, int32_t *z) {
  *z = 0;
  if (!v) return 1;
  if (!v->data || ir_value_elements(v) != 1) return 0;
  *z = (int32_t)elem_get_int(v->data, v->dtype, 0);
  return 1;
}

/* One operand of an activation x activation MatMul: DequantizeLinear of a
 * run-time u8 / i8 value of rank >= 2 with a constant scale and zero point
 * per tensor; NULL (and *why) otherwise. */
static ir_value *act_operand(ir_value *v, float *s, int32_t *z, const char **why) {
  ir_node *dq = v->producer;
  if (!dq || dq->op != IR_OP_DEQUANTIZE) return *why = "an operand is no DequantizeLinear", NULL;
  ir_value *q = dq->in[0];
  if (q->data || (q->dtype != DT_UINT8 && q->dtype != DT_INT8) || q->rank < 2)
    return *why = "an operand is no run-time u8 / i8 value of rank >= 2", NULL;
  if (!tensor_scale(dq->in[1], s) || !tensor_zp(dq->nin > 2 ? dq->in[2] : NULL, z))
    return *why = "an operand's scale or zero point is not one constant (per tensor)", NULL;
  return q;
}

/* Why MatMul mm does not fold (the fold below), or NULL: the operands'
 * int8 values, scales and zero points then in x, w, sx, sw, xz, wz. */
static const char *act_reason(ir_node *mm, ir_value **x, ir_value **w, float *sx, float *sw, int32_t *xz,
                              int32_t *wz) {
  const char *why = NULL;
  if (mm->nin != 2 || mm->out[0]->dtype != DT_FLOAT32) return "not a plain f32 MatMul";
  if (!(*x = act_operand(mm->in[0], sx, xz, &why)) || !(*w = act_operand(mm->in[1], sw, wz, &why)))
    return why;
  if ((*x)->dims[(*x)->rank - 1] > OM_QMATMUL_MAX_K_ACT) return "K is past 32768";
  return NULL;
}

/* The activation x activation fold (top of file) of MatMul mm; 1 when it
 * folded, -1 out of memory. */
static int fold_act(ir_graph *g, pass_ctx *ctx, ir_node *mm) {
  ir_value *x, *w;
  float sx, sw, sy = 0.0f;
  int32_t xz, wz, yz = 0;
  const char *why = act_reason(mm, &x, &w, &sx, &sw, &xz, &wz);
  if (why) {
    if (ctx && ctx->note && !ctx->copy_weights && mm->in[0]->producer &&
        mm->in[0]->producer->op == IR_OP_DEQUANTIZE && mm->in[1]->producer &&
        mm->in[1]->producer->op == IR_OP_DEQUANTIZE && !mm->in[1]->producer->in[0]->data) {
      char msg[512];
      snprintf(msg, sizeof msg, "MatMul '%s' stays float (not int8): %s", mm->name, why);
      ctx->note(ctx->note_user, msg);
    }
    return 0;
  }
  ir_node *q = mm->out[0]->output_index >= 0 ? NULL : ir_value_sole_reader(g, mm->out[0]);
  if (q && (q->op != IR_OP_QUANTIZE || q->in[0] != mm->out[0] || q->nin < 2 || !tensor_scale(q->in[1], &sy) ||
            !tensor_zp(q->nin > 2 ? q->in[2] : NULL, &yz) ||
            (q->out[0]->dtype != DT_UINT8 && q->out[0]->dtype != DT_INT8)))
    q = NULL;
  const float scale = q ? sx * sw / sy : sx * sw; /* (s_x * s_w) / s_y in f32, as passes/qconv.c */
  if (!(scale > 0.0f) || isinf(scale)) return 0;
  char name[300];
  snprintf(name, sizeof name, "%s_x_zp", mm->name);
  const int64_t one = 1;
  const uint8_t zb = (uint8_t)xz;
  ir_value *zv = ir_const_new(g, name, x->dtype, 0, &one, &zb, 1);
  snprintf(name, sizeof name, "%s_scale", mm->name);
  ir_value *sv = ir_const_new(g, name, DT_FLOAT32, 1, &one, &scale, sizeof scale);
  ir_value *in[4] = {x, w, zv, sv}, *y = q ? q->out[0] : mm->out[0];
  ir_node *n = zv && sv ? ir_node_new(g, IR_OP_QMATMUL, mm->name, 4, in, 1, &y) : NULL;
  if (!n || ir_attr_set_int(g, n, "w_zp", wz)) return -1;
  if (q) {
    int32_t lo, hi;
    q_range((int)y->dtype, &lo, &hi);
    if (ir_attr_set_int(g, n, "to", y->dtype) || ir_attr_set_int(g, n, "y_zp", yz) ||
        ir_attr_set_int(g, n, "lo", lo) || ir_attr_set_int(g, n, "hi", hi))
      return -1;
    q->dead = 1;
  }
  n->origin = mm->origin;
  n->name = mm->name;
  mm->dead = 1;
  return 1;
}

/* A DequantizeLinear per tensor (constant scale and zero point) of a
 * run-time u8 / i8 value whose every reader is a Slice of it (a QDQ
 * attention's in-projection output, split into Q, K and V): each Slice
 * reads the int8 value and a DequantizeLinear of its own (the same scale
 * and zero point) writes the Slice's output; the first one goes. The same
 * values (DequantizeLinear is elementwise, a Slice moves elements), with
 * the copies moving int8 bytes instead of f32 and each DequantizeLinear
 * next to the nodes it feeds (vectorize fuses them). 1 when it did, -1 out
 * of memory. */
static int hoist_slices(ir_graph *g, ir_node *dq) {
  float s;
  int32_t z;
  ir_value *xq = dq->in[0], *v = dq->out[0];
  if (dq->nout != 1 || xq->data || (xq->dtype != DT_UINT8 && xq->dtype != DT_INT8) || v->output_index >= 0 ||
      v->count || !tensor_scale(dq->in[1], &s) || !tensor_zp(dq->nin > 2 ? dq->in[2] : NULL, &z))
    return 0;
  int readers = 0;
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *r = g->nodes[i];
    for (int k = 0; k < r->nin && !r->dead; k++)
      if (r->in[k] == v && (r->op != IR_OP_SLICE || k != 0)) return 0;
    readers += !r->dead && r->op == IR_OP_SLICE && r->nin >= 1 && r->in[0] == v;
  }
  if (!readers) return 0;
  for (int i = 0, n = g->nnodes; i < n; i++) {
    ir_node *r = g->nodes[i];
    if (r->dead || r->op != IR_OP_SLICE || r->in[0] != v) continue;
    char name[300];
    snprintf(name, sizeof name, "%.250s_q", r->name);
    ir_value *sq = ir_value_new(g, name, xq->dtype), *y = r->out[0];
    if (!sq) return -1;
    ir_value_set_shape(sq, y->rank, y->dims);
    ir_value *in[3] = {sq, dq->in[1], dq->nin > 2 ? dq->in[2] : NULL};
    snprintf(name, sizeof name, "%.250s_dq", r->name);
    r->in[0] = xq;
    r->out[0] = sq;
    sq->producer = r;
    ir_node *d = ir_node_new(g, IR_OP_DEQUANTIZE, name, dq->nin, in, 1, &y);
    if (!d || ir_attr_set_int(g, d, "to", y->dtype)) return -1;
    d->origin = dq->origin;
  }
  dq->dead = 1;
  return 1;
}

status pass_qmatmul(ir_graph *g, pass_ctx *ctx, diag *d) {
  int changed = merge_dynquant(g);
  for (int i = 0, n = g->nnodes; i < n; i++) {
    ir_node *dq = g->nodes[i];
    if (dq->dead || dq->op != IR_OP_DEQUANTIZE) continue;
    const int r = hoist_slices(g, dq);
    if (r < 0) return ir_node_error(d, ST_ERR_NOMEM, dq, "out of memory");
    changed |= r;
  }
  for (int i = 0, n = g->nnodes; i < n; i++) {
    ir_node *mm = g->nodes[i];
    if (mm->dead || mm->op != IR_OP_MATMUL) continue;
    const int r = fold_act(g, ctx, mm);
    if (r < 0) return ir_node_error(d, ST_ERR_NOMEM, mm, "out of memory");
    changed |= r;
  }
  for (int i = 0; i < g->nnodes; i++) {
    ir_node *q = g->nodes[i];
    if (q->dead || !((q->op == IR_OP_QMATMUL || ir_qconv_dynamic(q)) && q->nin == 3)) continue;
    const int r = q->op == IR_OP_QCONV ? fold_conv(g, q) : fold(g, q);
    if (r < 0) return ir_node_error(d, ST_ERR_NOMEM, q, "out of memory");
    changed |= r;
  }
  if (!changed) return ST_OK;
  ir_graph_compact(g);
  status st = ir_graph_toposort(g, d);
  return st == ST_OK ? pass_dce(g, ctx, d) : st;
}
