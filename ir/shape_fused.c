/* shape_fused.c - the shape rules of the fused ops (ir/fused.h), the
 * checks the runtime's kernels repeat at load (runtime/kernels_norm.c), so
 * a graph these rules accept never meets a load-time refusal:
 *   LayerNorm  x f16/f32 of rank >= 1; the axis normalised to >= 0; scale
 *              and bias D elements each (D = the product of x's dims from
 *              the axis on, >= 1) with dims equal to x's last ones after
 *              leading 1s, f16/f32; residual x's dims and dtype; y and sum
 *              x's dims and dtype, sum only with a residual.
 *   FusedAttention  q, k, v one f16/f32 dtype, rank >= 2, agreeing on D
 *              and Skv (k read as [.., D, Skv] with k_trans), batch dims
 *              broadcasting to y's; biases f16/f32 broadcasting to the
 *              scores [y's batch.., Sq, Skv]; y [batch.., Sq, Dv] in q's
 *              dtype. With operand views (q_view .. y_view, ops.def) these
 *              are the views' dims, each view inside its value (strides
 *              >= 0), and the output keeps the dims of the value y views.
 *   Recurrence xw [T, B, G*H], rt [H, G*H], rb [G*H], h0, c0 [B, H], one
 *              f16/f32 dtype; cell 0..2 (G = 4, 3, 1), y_c only for an
 *              LSTM; y [T, B, H], y_h and y_c [B, H] in xw's dtype.
 */
#include "ir/fused.h"

#include "ir/view.h"

#include <string.h>

typedef struct sf {
  ir_graph *g;
  ir_node *n;
  diag *d;
} sf;

/* Errors name the node: ir_node_error over the context's diag and node. */
#define fail(s, code, ...) ir_node_error((s)->d, (code), (s)->n, __VA_ARGS__)

static const char *dims_str(const ir_value *v) { return ir_dims_str(v->rank, v->dims); }

static int is_f16_f32(int dt) { return dt == DT_FLOAT32 || dt == DT_FLOAT16; }

int ir_fused_op(ir_op op) { return op == IR_OP_LAYERNORM || op == IR_OP_ATTENTION || op == IR_OP_RECURRENCE; }

static status set_out(sf *s, int k, dtype dt, int rank, const int64_t *dims) {
  ir_value *y = s->n->out[k];
  if (!y) return fail(s, ST_ERR_INVALID, "output %d is missing", k);
  y->dtype = dt;
  ir_value_set_shape(y, rank, dims);
  if (ir_value_bytes(y) < 0) return fail(s, ST_ERR_LIMIT, "output '%s' is too large", y->name);
  return ST_OK;
}

static status need_float(sf *s, int i) {
  const ir_value *v = s->n->in[i];
  if (!is_f16_f32(v->dtype))
    return fail(s, ST_ERR_UNSUPPORTED, "input %d '%s' has dtype %s; expected f32 or f16", i, v->name,
                dtype_name(v->dtype) ? dtype_name(v->dtype) : "?");
  return ST_OK;
}

/* v holds one row of x (from `axis` on): dims equal to x's last ones after
 * leading 1s. */
static int holds_row(const ir_value *v, const ir_value *x, int axis) {
  int lead = v->rank - (x->rank - axis);
  if (lead < 0) return 0;
  for (int i = 0; i < v->rank; i++)
    if (i < lead ? v->dims[i] != 1 : v->dims[i] != x->dims[axis + i - lead]) return 0;
  return 1;
}

static status infer_layernorm(sf *s) {
  ir_node *n = s->n;
  const ir_value *x = n->in[0];
  status st = need_float(s, 0);
  if (st) return st;
  if (x->rank < 1) return fail(s, ST_ERR_INVALID, "input 'x' %s has rank 0", dims_str(x));
  int64_t a = ir_attr_int(n, "axis", -1);
  if (a < -x->rank || a >= x->rank)
    return fail(s, ST_ERR_INVALID, "axis %lld out of range for input %s", (long long)a, dims_str(x));
  int axis = (int)(a < 0 ? a + x->rank : a);
  if (ir_attr_set_int(s->g, n, "axis", axis)) return fail(s, ST_ERR_NOMEM, "out of memory");
  int64_t d = 1;
  for (int i = axis; i < x->rank; i++)
    d *= x->dims[i];
  if (d < 1) return fail(s, ST_ERR_INVALID, "the row (input %s from axis %d on) is empty", dims_str(x), axis);
  for (int i = 1; i < 3 && i < n->nin; i++) {
    if (!n->in[i]) continue;
    if ((st = need_float(s, i))) return st;
    if (!holds_row(n->in[i], x, axis))
      return fail(s, ST_ERR_INVALID, "%s '%s' %s does not hold one row of input %s (axis %d)",
                  i == 1 ? "scale" : "bias", n->in[i]->name, dims_str(n->in[i]), dims_str(x), axis);
  }
  const ir_value *r = n->nin > 3 ? n->in[3] : NULL;
  if (r && (r->dtype != x->dtype || r->rank != x->rank ||
            memcmp(r->dims, x->dims, sizeof(int64_t) * (size_t)x->rank)))
    return fail(s, ST_ERR_INVALID, "residual '%s' %s differs from input %s in dims or dtype", r->name,
                dims_str(r), dims_str(x));
  if (n->nout > 1 && !r) return fail(s, ST_ERR_INVALID, "output 'sum' without a residual");
  for (int k = 0; k < n->nout && st == ST_OK; k++)
    st = set_out(s, k, x->dtype, x->rank, x->dims);
  return st;
}

/* The elements from the first to the last one view v reaches (its
 * strides >= 0, no dim 0): -1 when that overflows. */
static int64_t view_reach(const ir_view *v) {
  int64_t last = 0, step;
  for (int d = 0; d < v->rank; d++)
    if (__builtin_mul_overflow(v->dims[d] - 1, v->strides[d], &step) ||
        __builtin_add_overflow(last, step, &last))
      return -1;
  return last;
}

/* Operand t's view (ir_attn_operand) lies inside the value it views:
 * strides >= 0, every element reached within the value. */
static status check_view(sf *s, int t, const ir_view *v) {
  static const char *const names[4] = {"q", "k", "v", "y"};
  const ir_value *x = t < 3 ? s->n->in[t] : s->n->out[0];
  if (ir_attr_ints(s->n, ir_attn_view_attr[t], NULL, 0) < 0) return ST_OK;
  int64_t elems = ir_value_elements(x), reach = view_reach(v);
  for (int d = 0; d < v->rank; d++)
    if (v->strides[d] < 0 || v->dims[d] == 0) reach = -1;
  if (reach < 0 || elems < 0 || v->offset > elems - 1 - reach)
    return fail(s, ST_ERR_INVALID, "%s's view %s (offset %lld) reaches outside '%s' %s", names[t],
                ir_dims_str(v->rank, v->dims), (long long)v->offset, x->name, dims_str(x));
  return ST_OK;
}

/* FusedAttention: q [.., Sq, D], k [.., Skv, D] or (k_trans) [.., D, Skv],
 * v [.., Skv, Dv], each read through its view when the node has one
 * (ir_attn_operand); batch dims broadcast to y's; biases broadcast to
 * [y's batch.., Sq, Skv]; y, or its view, [batch.., Sq, Dv]. */
static status infer_attention(sf *s) {
  ir_node *n = s->n;
  ir_view op[4];
  status st;
  memset(op, 0, sizeof op);
  for (int i = 0; i < 4; i++) {
    if (i < 3 && (st = need_float(s, i))) return st;
    if (i == 3 && ir_attr_ints(n, ir_attn_view_attr[3], NULL, 0) < 0) break;
    if (ir_attn_operand(n, i, &op[i])) return fail(s, ST_ERR_INVALID, "malformed %s", ir_attn_view_attr[i]);
    if (i < 3 && op[i].rank < 2)
      return fail(s, ST_ERR_INVALID, "input %d '%s' %s has rank < 2", i, n->in[i]->name,
                  ir_dims_str(op[i].rank, op[i].dims));
    if ((st = check_view(s, i, &op[i]))) return st;
  }
  const ir_view *q = &op[0], *k = &op[1], *v = &op[2];
  if (n->in[1]->dtype != n->in[0]->dtype || n->in[2]->dtype != n->in[0]->dtype)
    return fail(s, ST_ERR_INVALID, "q, k and v must share a dtype");
  int kt = ir_attr_int(n, "k_trans", 0) != 0;
  int64_t sq = q->dims[q->rank - 2], d = q->dims[q->rank - 1];
  int64_t skv = k->dims[k->rank - 2 + kt], kd = k->dims[k->rank - 1 - kt];
  if (kd != d || v->dims[v->rank - 2] != skv)
    return fail(s, ST_ERR_INVALID, "q %s, k %s (k_trans %d) and v %s do not agree on D and Skv",
                ir_dims_str(q->rank, q->dims), ir_dims_str(k->rank, k->dims), kt,
                ir_dims_str(v->rank, v->dims));
  int nb = 0;
  for (int i = 0; i < 3; i++)
    nb = op[i].rank - 2 > nb ? op[i].rank - 2 : nb;
  int64_t dims[MAX_RANK + 2];
  for (int b = 0; b < nb; b++) { /* right-aligned batch dims, 1s broadcasting */
    dims[b] = 1;
    for (int i = 0; i < 3; i++) {
      int at = b - (nb - (op[i].rank - 2));
      int64_t e = at >= 0 ? op[i].dims[at] : 1;
      if (e != 1 && dims[b] != 1 && e != dims[b])
        return fail(s, ST_ERR_INVALID, "the batch dims of q %s, k %s and v %s do not broadcast",
                    ir_dims_str(q->rank, q->dims), ir_dims_str(k->rank, k->dims),
                    ir_dims_str(v->rank, v->dims));
      if (e != 1) dims[b] = e;
    }
  }
  dims[nb] = sq, dims[nb + 1] = skv; /* the scores, which the biases broadcast to */
  for (int i = 3; i < n->nin; i++) {
    const ir_value *b = n->in[i];
    if (!b) continue;
    if ((st = need_float(s, i))) return st;
    int ok = b->rank <= nb + 2;
    for (int j = 0; ok && j < b->rank; j++) {
      int64_t e = b->dims[b->rank - 1 - j], want = dims[nb + 1 - j];
      ok = e == 1 || e == want;
    }
    if (!ok)
      return fail(s, ST_ERR_INVALID, "bias '%s' %s does not broadcast to the scores %s", b->name, dims_str(b),
                  ir_dims_str(nb + 2, dims));
  }
  dims[nb + 1] = v->dims[v->rank - 1];
  if (ir_attr_ints(n, ir_attn_view_attr[3], NULL, 0) < 0) return set_out(s, 0, n->in[0]->dtype, nb + 2, dims);
  /* y is a view of out[0], whose dims stay */
  const ir_view *y = &op[3];
  if (y->rank != nb + 2 || memcmp(y->dims, dims, sizeof(int64_t) * (size_t)(nb + 2)))
    return fail(s, ST_ERR_INVALID, "y's view %s is not the result's %s", ir_dims_str(y->rank, y->dims),
                ir_dims_str(nb + 2, dims));
  ir_value *out = n->out[0];
  return set_out(s, 0, n->in[0]->dtype, out->rank, out->dims);
}

/* Recurrence: H from rt's rows, G from the cell; every operand's dims
 * follow from xw's T and B. */
static status infer_recurrence(sf *s) {
  ir_node *n = s->n;
  const ir_value *xw = n->in[0], *rt = n->in[1];
  status st;
  int64_t cell = ir_attr_int(n, "cell", -1);
  if (cell < 0 || cell > 2)
    return fail(s, ST_ERR_INVALID, "attribute cell = %lld, expected 0..2", (long long)cell);
  const int64_t G = cell == 0 ? 4 : cell == 1 ? 3 : 1;
  if (xw->rank != 3 || rt->rank != 2)
    return fail(s, ST_ERR_INVALID, "xw %s must have rank 3 and rt %s rank 2", dims_str(xw), dims_str(rt));
  const int64_t T = xw->dims[0], B = xw->dims[1], H = rt->dims[0];
  if (T < 1 || B < 1 || H < 1 || xw->dims[2] != G * H || rt->dims[1] != G * H)
    return fail(s, ST_ERR_INVALID, "xw %s and rt %s do not hold %lld gate blocks of %lld", dims_str(xw),
                dims_str(rt), (long long)G, (long long)H);
  const int64_t want[5][2] = {{0, 0}, {0, 0}, {G * H, 0}, {B, H}, {B, H}};
  for (int i = 0; i < n->nin; i++) {
    const ir_value *v = n->in[i];
    if (!v) continue;
    if ((st = need_float(s, i))) return st;
    if (v->dtype != xw->dtype)
      return fail(s, ST_ERR_INVALID, "input %d '%s' differs from xw in dtype", i, v->name);
    if (i < 2) continue;
    int rank = i == 2 ? 1 : 2;
    if (v->rank != rank || v->dims[0] != want[i][0] || (rank == 2 && v->dims[1] != want[i][1]))
      return fail(s, ST_ERR_INVALID, "input %d '%s' %s, expected %s", i, v->name, dims_str(v),
                  ir_dims_str(rank, want[i]));
  }
  if (n->nin > 4 && n->in[4] && cell != 0) return fail(s, ST_ERR_INVALID, "c0 without an LSTM cell");
  if (n->nout != (cell == 0 ? 3 : 2))
    return fail(s, ST_ERR_INVALID, "%d outputs, expected %d", n->nout, cell == 0 ? 3 : 2);
  const int64_t ydims[3] = {T, B, H};
  st = set_out(s, 0, xw->dtype, 3, ydims);
  for (int k = 1; k < n->nout && st == ST_OK; k++)
    st = set_out(s, k, xw->dtype, 2, ydims + 1);
  return st;
}

status ir_shape_infer_fused(ir_graph *g, ir_node *n, diag *d) {
  sf s = {g, n, d};
  switch (n->op) {
  case IR_OP_LAYERNORM: return infer_layernorm(&s);
  case IR_OP_ATTENTION: return infer_attention(&s);
  case IR_OP_RECURRENCE: return infer_recurrence(&s);
  default: return fail(&s, ST_ERR_INVALID, "not a fused op");
  }
}
