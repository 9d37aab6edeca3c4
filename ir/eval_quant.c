/* eval_quant.c - the reference evaluator's quantized ops (ir/eval_quant.h):
 * QuantizeLinear and DequantizeLinear, element by element with
 * common/quant.h's arithmetic (the vector expansion, ir/vexpand.c, computes
 * the same). Inputs are
 * C-order ND buffers; a scale or zero point broadcasts numpy-style against
 * x (ops.def), so per tensor, per axis and blocked parameters are one case.
 */
#include "ir/eval_quant.h"

#include <string.h>

#include "common/elem.h"
#include "common/quant.h"
#include "ir/eval_internal.h"

int ir_eval_is_quant(ir_op op) { return op == IR_OP_QUANTIZE || op == IR_OP_DEQUANTIZE; }

/* Offset into v of the element of `out`'s dims at multi-index idx (v
 * broadcasting numpy-style, right-aligned). */
static int64_t bcast_at(const ir_value *v, const ir_value *out, const int64_t *idx) {
  int64_t at = 0, off = out->rank - v->rank;
  for (int k = 0; k < v->rank; k++)
    at = at * v->dims[k] + (v->dims[k] == 1 ? 0 : idx[k + off]);
  return at;
}

static void next_index(const ir_value *v, int64_t *idx) {
  for (int k = v->rank - 1; k >= 0; k--) {
    if (++idx[k] < v->dims[k]) return;
    idx[k] = 0;
  }
}

static status eval_qdq(ev *e) {
  const ir_node *n = e->n;
  const ir_value *X = n->in[0], *S = n->in[1], *Z = n->nin > 2 ? n->in[2] : NULL, *Y = n->out[0];
  const int quant = n->op == IR_OP_QUANTIZE;
  if (X->rank != Y->rank || memcmp(X->dims, Y->dims, sizeof(int64_t) * (size_t)X->rank))
    return fail(e, ST_ERR_INVALID, "x '%s' and y '%s' differ in shape", X->name, Y->name);
  for (int i = 1; i < n->nin; i++) {
    const ir_value *p = n->in[i];
    int ok = p->rank <= X->rank;
    for (int k = 0; ok && k < p->rank; k++)
      ok = p->dims[k] == 1 || p->dims[k] == X->dims[k + X->rank - p->rank];
    if (!ok) return fail(e, ST_ERR_INVALID, "'%s' does not broadcast against x '%s'", p->name, X->name);
  }
  if (quant ? !elem_is_float(X->dtype) : elem_is_float(X->dtype))
    return fail(e, ST_ERR_UNSUPPORTED, "x '%s' has dtype %s", X->name, dtype_name(X->dtype));
  void *y = arena_alloc_aligned(e->a, (size_t)ir_value_bytes(Y) + 1, 64);
  if (!y) return nomem(e);
  e->out[0] = y;
  int32_t lo, hi;
  q_range(Y->dtype, &lo, &hi);
  int64_t idx[MAX_RANK] = {0}, count = ir_value_elements(Y);
  for (int64_t i = 0; i < count; i++, next_index(Y, idx)) {
    float s = (float)elem_get(e->in[1], S->dtype, bcast_at(S, Y, idx));
    int32_t zp = Z ? (int32_t)elem_get_int(e->in[2], Z->dtype, bcast_at(Z, Y, idx)) : 0;
    if (quant)
      elem_put_int(y, Y->dtype, i, q_quantize((float)elem_get(e->in[0], X->dtype, i), s, zp, lo, hi));
    else
      elem_put(y, Y->dtype, i, q_dequantize((int32_t)elem_get_int(e->in[0], X->dtype, i), zp, s));
  }
  return ST_OK;
}

status ir_eval_quant(const ir_node *n, const void *const *inputs, void **outputs_out, arena *a, diag *d) {
  ev e = {n, inputs, outputs_out, a, d};
  switch (n->op) {
  case IR_OP_QUANTIZE:
  case IR_OP_DEQUANTIZE: return eval_qdq(&e);
  default: return fail(&e, ST_ERR_UNSUPPORTED, "not a quantized op");
  }
}
