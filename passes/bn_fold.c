/* bn_fold.c - BatchNormalization after a Conv folds into the Conv's weights.
 *
 * Contract.
 *   Needs:   shape_infer, constfold (BN parameters and Conv weights constant).
 *   Changes: BatchNormalization(x, scale, B, mean, var) where x is produced by
 *            a Conv with constant weights W (and constant bias b, if any), no
 *            residual and no act, x read by nothing but this BN, and all four
 *            BN parameters constant: with s[m] = scale[m] / sqrt(var[m] + eps)
 *              W'[m,...] = W[m,...] * s[m]
 *              b'[m]     = (b[m] - mean[m]) * s[m] + B[m]    (b = 0 if absent)
 *            computed in f64 and stored in W's (and b's) dtype, as new
 *            constants "<W>_bn" and "<conv>_bias_bn" (the old ones may be
 *            shared). The Conv then produces the BN's output value (name kept)
 *            and the BN is removed. Other BNs are left for the vector unit.
 *   Leaves:  topological order; unreferenced constants dropped.
 */
#include <math.h>
#include <stdio.h>

#include "ir/eval.h"
#include "pass.h"

static int is_float(int dt) { return dt == DT_FLOAT32 || dt == DT_FLOAT16 || dt == DT_DOUBLE; }

static int const_float(const ir_value *v) { return v && v->data && v->layout == LAYOUT_ND && is_float(v->dtype); }

/* The Conv that `bn` can fold into, or NULL. */
static ir_node *foldable_conv(const ir_graph *g, const ir_node *bn) {
  const ir_value *x = bn->in[0];
  ir_node *conv = x->producer;
  if (!conv || conv->dead || conv->op != IR_OP_CONV || ir_value_single_user(g, x) != bn) return NULL;
  if ((conv->nin > 3 && conv->in[3]) || ir_attr_find(conv, "act")) return NULL;
  if (!const_float(conv->in[1]) || conv->in[1]->dims[0] < 1 || (conv->nin > 2 && conv->in[2] && !const_float(conv->in[2]))) return NULL;
  for (int i = 1; i < 5; i++)
    if (!const_float(bn->in[i])) return NULL;
  return conv;
}

static status fold(ir_graph *g, ir_node *conv, ir_node *bn, arena *scratch, diag *d) {
  const ir_value *W = conv->in[1], *b = conv->nin > 2 ? conv->in[2] : NULL;
  const ir_value *scale = bn->in[1], *beta = bn->in[2], *mean = bn->in[3], *var = bn->in[4];
  double eps = ir_attr_float(bn, "epsilon", 1e-5);
  int64_t M = W->dims[0], per = ir_value_elements(W) / M;
  dtype bdt = b ? b->dtype : W->dtype;
  void *w2 = arena_array(scratch, (size_t)(M * per), dtype_size(W->dtype));
  void *b2 = arena_array(scratch, (size_t)M, dtype_size(bdt));
  if (!w2 || !b2) return ir_node_error(d, ST_ERR_NOMEM, bn, "out of memory folding");
  for (int64_t m = 0; m < M; m++) {
    double v = ir_elem_get(var->data, var->dtype, m) + eps;
    if (!(v > 0))
      return ir_node_error(d, ST_ERR_INVALID, bn, "var + epsilon = %g for channel %lld is not positive", v,
                           (long long)m);
    double s = ir_elem_get(scale->data, scale->dtype, m) / sqrt(v);
    for (int64_t k = 0; k < per; k++)
      ir_elem_set(w2, W->dtype, m * per + k, ir_elem_get(W->data, W->dtype, m * per + k) * s);
    double bm = b ? ir_elem_get(b->data, b->dtype, m) : 0.0;
    ir_elem_set(b2, bdt, m, (bm - ir_elem_get(mean->data, mean->dtype, m)) * s + ir_elem_get(beta->data, beta->dtype, m));
  }
  char wname[256], bname[256];
  snprintf(wname, sizeof wname, "%.200s_bn", W->name);
  snprintf(bname, sizeof bname, "%.200s_bias_bn", conv->name);
  ir_value *nw = ir_const_new(g, wname, W->dtype, W->rank, W->dims, w2, (size_t)(M * per) * dtype_size(W->dtype));
  ir_value *nb = ir_const_new(g, bname, bdt, 1, &M, b2, (size_t)M * dtype_size(bdt));
  if (!nw || !nb || ir_node_set_input(g, conv, 2, nb))
    return ir_node_error(d, ST_ERR_NOMEM, bn, "out of memory folding");
  conv->in[1] = nw;
  ir_value *y = bn->out[0];
  conv->out[0] = y;
  y->producer = conv;
  bn->dead = 1;
  return ST_OK;
}

status pass_bn_fold(ir_graph *g, pass_ctx *ctx, diag *d) {
  arena scratch;
  arena_init(&scratch, 0);
  status st = ST_OK;
  for (int i = 0; i < g->nnodes && st == ST_OK; i++) {
    ir_node *bn = g->nodes[i], *conv;
    if (!bn->dead && bn->op == IR_OP_BATCHNORM && (conv = foldable_conv(g, bn))) st = fold(g, conv, bn, &scratch, d);
  }
  arena_free(&scratch);
  if (st == ST_OK) ir_graph_compact(g);
  return st;
}
