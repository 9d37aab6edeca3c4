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
 *              dtype.
 *   Recurrence xw [T, B, G*H], rt [H, G*H], rb [G*H], h0, c0 [B, H], one
 *              f16/f32 dtype; cell 0..2 (G = 4, 3, 1), y_c only for an
 *              LSTM; y [T, B, H], y_h and y_c [B, H] in xw's dtype.
 */
#include "ir/fused.h"

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

/* FusedAttention: q [.., Sq, D], k [.., Skv, D] or (k_trans) [.., D, Skv],
 * v [.., Skv, Dv]; batch dims broadcast to y's; biases broadcast to
 * [y's batch.., Sq, Skv]. */
static status infer_attention(sf *s) {
  ir_node *n = s->n;
  const ir_value *q = n->in[0], *k = n->in[1], *v = n->in[2];
  status st;
  for (int i = 0; i < 3; i++) {
    if ((st = need_float(s, i))) return st;
    if (n->in[i]->rank < 2)
      return fail(s, ST_ERR_INVALID, "input %d '%s' %s has rank < 2", i, n->in[i]->name, dims_str(n->in[i]));
  }
  if (k->dtype != q->dtype || v->dtype != q->dtype)
    return fail(s, ST_ERR_INVALID, "q, k and v must share a dtype");
  int kt = ir_attr_int(n, "k_trans", 0) != 0;
  int64_t sq = q->dims[q->rank - 2], d = q->dims[q->rank - 1];
  int64_t skv = k->dims[k->rank - 2 + kt], kd = k->dims[k->rank - 1 - kt];
  if (kd != d || v->dims[v->rank - 2] != skv)
    return fail(s, ST_ERR_INVALID, "q %s, k %s (k_trans %d) and v %s do not agree on D and Skv", dims_str(q),
                dims_str(k), kt, dims_str(v));
  int nb = 0;
  for (int i = 0; i < 3; i++)
    nb = n->in[i]->rank - 2 > nb ? n->in[i]->rank - 2 : nb;
  int64_t dims[MAX_RANK + 2];
  for (int b = 0; b < nb; b++) { /* right-aligned batch dims, 1s broadcasting */
    dims[b] = 1;
    for (int i = 0; i < 3; i++) {
      const ir_value *x = n->in[i];
      int at = b - (nb - (x->rank - 2));
      int64_t e = at >= 0 ? x->dims[at] : 1;
      if (e != 1 && dims[b] != 1 && e != dims[b])
        return fail(s, ST_ERR_INVALID, "the batch dims of q %s, k %s and v %s do not broadcast", dims_str(q),
                    dims_str(k), dims_str(v));
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
  return set_out(s, 0, q->dtype, nb + 2, dims);
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
