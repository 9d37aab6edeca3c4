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
 *            and the BN is removed (unless ctx->fusion_off has
 *            FUSION_CONV_BN, ConvBatchnormFusionPass:off). Every other BN (inference: x of rank >= 2,
 *            parameters [C]) becomes a scale-and-shift y = x * s + t with s, t
 *            shaped [C, 1, ..., 1]: constants "<bn>/scale", "<bn>/shift"
 *            (computed like the fold above) when the parameters are constant;
 *            else y = (x - mean) * s + B with s = scale / sqrt(var + eps)
 *            computed by small [C] nodes at run time. The new nodes take the
 *            BN's origin, so they make one vector program even in the
 *            op-by-op build (vectorize), and fuse with what follows otherwise.
 *   Leaves:  topological order; unreferenced constants dropped; every new
 *            value shaped and typed.
 */
#include <math.h>
#include <stdio.h>

#include "common/elem.h"
#include "pass.h"

static int is_float(int dt) { return dt == DT_FLOAT32 || dt == DT_FLOAT16 || dt == DT_DOUBLE; }

static int const_float(const ir_value *v) {
  return v && v->data && v->layout == LAYOUT_ND && is_float(v->dtype);
}

/* The Conv that `bn` can fold into, or NULL. */
static ir_node *foldable_conv(const ir_graph *g, const ir_node *bn) {
  const ir_value *x = bn->in[0];
  ir_node *conv = x->producer;
  if (!conv || conv->dead || conv->op != IR_OP_CONV || ir_value_single_user(g, x) != bn) return NULL;
  if ((conv->nin > 3 && conv->in[3]) || ir_attr_find(conv, "act")) return NULL;
  if (!const_float(conv->in[1]) || conv->in[1]->dims[0] < 1 ||
      (conv->nin > 2 && conv->in[2] && !const_float(conv->in[2])))
    return NULL;
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
    double v = elem_get(var->data, var->dtype, m) + eps;
    if (!(v > 0))
      return ir_node_error(d, ST_ERR_INVALID, bn, "var + epsilon = %g for channel %lld is not positive", v,
                           (long long)m);
    double s = elem_get(scale->data, scale->dtype, m) / sqrt(v);
    for (int64_t k = 0; k < per; k++)
      elem_put(w2, W->dtype, m * per + k, elem_get(W->data, W->dtype, m * per + k) * s);
    double bm = b ? elem_get(b->data, b->dtype, m) : 0.0;
    elem_put(b2, bdt, m,
             (bm - elem_get(mean->data, mean->dtype, m)) * s + elem_get(beta->data, beta->dtype, m));
  }
  char wname[256], bname[256];
  snprintf(wname, sizeof wname, "%.200s_bn", W->name);
  snprintf(bname, sizeof bname, "%.200s_bias_bn", conv->name);
  ir_value *nw =
      ir_const_new(g, wname, W->dtype, W->rank, W->dims, w2, (size_t)(M * per) * dtype_size(W->dtype));
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

/* A new node of one output named `name` with the given dtype and dims, part
 * of the node whose origin is `origin`. */
static ir_value *add_node(ir_graph *g, int origin, ir_op op, const char *name, int nin, ir_value *const *in,
                          dtype dt, int rank, const int64_t *dims) {
  ir_value *y = ir_value_new(g, name, dt);
  ir_node *n = y ? ir_node_new(g, op, name, nin, in, 1, &y) : NULL;
  if (!n) return NULL;
  n->origin = origin;
  ir_value_set_shape(y, rank, dims);
  return y;
}

/* bn -> Mul(x, s) then Add(., t), s and t [C, 1, ..., 1] (see the contract). */
static status lower(ir_graph *g, ir_node *bn, arena *scratch, diag *d) {
  ir_value *x = bn->in[0], *scale = bn->in[1], *beta = bn->in[2], *mean = bn->in[3], *var = bn->in[4],
           *y = bn->out[0];
  double eps = ir_attr_float(bn, "epsilon", 1e-5);
  int r = x->rank;
  int64_t C = x->dims[1], cdims[MAX_RANK];
  cdims[0] = C;
  for (int i = 1; i < r - 1; i++)
    cdims[i] = 1;
  char name[300];
  ir_value *s, *t;
  if (const_float(scale) && const_float(beta) && const_float(mean) && const_float(var)) {
    void *sd = arena_array(scratch, (size_t)C, dtype_size(x->dtype)),
         *td = arena_array(scratch, (size_t)C, dtype_size(x->dtype));
    if (!sd || !td) return ir_node_error(d, ST_ERR_NOMEM, bn, "out of memory lowering");
    for (int64_t c = 0; c < C; c++) {
      double v = elem_get(var->data, var->dtype, c) + eps;
      if (!(v > 0))
        return ir_node_error(d, ST_ERR_INVALID, bn, "var + epsilon = %g for channel %lld is not positive", v,
                             (long long)c);
      double k = elem_get(scale->data, scale->dtype, c) / sqrt(v);
      elem_put(sd, x->dtype, c, k);
      elem_put(td, x->dtype, c,
               elem_get(beta->data, beta->dtype, c) - elem_get(mean->data, mean->dtype, c) * k);
    }
    snprintf(name, sizeof name, "%.250s/scale", bn->name);
    s = ir_const_new(g, name, x->dtype, r - 1, cdims, sd, (size_t)C * dtype_size(x->dtype));
    snprintf(name, sizeof name, "%.250s/shift", bn->name);
    t = ir_const_new(g, name, x->dtype, r - 1, cdims, td, (size_t)C * dtype_size(x->dtype));
  } else {
    dtype dt = var->dtype;
    uint8_t e[8] = {0};
    elem_put(e, dt, 0, eps);
    snprintf(name, sizeof name, "%.250s/eps", bn->name);
    ir_value *ev = ir_const_new(g, name, dt, 0, NULL, e, dtype_size(dt));
    snprintf(name, sizeof name, "%.250s/shape", bn->name);
    ir_value *shape =
        ir_const_new(g, name, DT_INT64, 1, (const int64_t[]){r - 1}, cdims, (size_t)(r - 1) * sizeof *cdims);
    ir_value *in[2] = {var, ev}, *v1 = NULL, *k = NULL;
    snprintf(name, sizeof name, "%.250s/var_eps", bn->name);
    if (ev && shape) v1 = add_node(g, bn->origin, IR_OP_ADD, name, 2, in, dt, 1, &C);
    snprintf(name, sizeof name, "%.250s/std", bn->name);
    if (v1) v1 = add_node(g, bn->origin, IR_OP_SQRT, name, 1, &v1, dt, 1, &C);
    snprintf(name, sizeof name, "%.250s/k", bn->name);
    in[0] = scale, in[1] = v1;
    if (v1) k = add_node(g, bn->origin, IR_OP_DIV, name, 2, in, dt, 1, &C);
    /* [C] -> [C, 1, ..., 1] */
    ir_value *const cvals[3] = {k, mean, beta};
    static const char *const cnames[3] = {"scale", "mean", "shift"};
    ir_value *rv[3] = {NULL, NULL, NULL};
    for (int j = 0; j < 3 && k; j++) {
      snprintf(name, sizeof name, "%.250s/%s", bn->name, cnames[j]);
      in[0] = cvals[j], in[1] = shape;
      rv[j] = add_node(g, bn->origin, IR_OP_RESHAPE, name, 2, in, dt, r - 1, cdims);
      if (!rv[j] || ir_attr_set_int(g, rv[j]->producer, "allowzero", 0))
        return ir_node_error(d, ST_ERR_NOMEM, bn, "out of memory lowering");
    }
    /* (x - mean) * s, which keeps more precision than x * s - mean * s when x is near the mean */
    snprintf(name, sizeof name, "%.250s/centered", bn->name);
    in[0] = x, in[1] = rv[1];
    x = rv[1] ? add_node(g, bn->origin, IR_OP_SUB, name, 2, in, x->dtype, r, x->dims) : NULL;
    s = rv[0], t = rv[2];
  }
  snprintf(name, sizeof name, "%.250s/scaled", bn->name);
  ir_value *in[2] = {x, s},
           *m = x && s && t ? add_node(g, bn->origin, IR_OP_MUL, name, 2, in, x->dtype, r, x->dims) : NULL;
  snprintf(name, sizeof name, "%.250s/shifted", bn->name);
  in[0] = m, in[1] = t;
  ir_node *add = m ? ir_node_new(g, IR_OP_ADD, name, 2, in, 1, &y) : NULL;
  if (!add) return ir_node_error(d, ST_ERR_NOMEM, bn, "out of memory lowering");
  add->origin = bn->origin;
  bn->dead = 1;
  return ST_OK;
}

status pass_bn_fold(ir_graph *g, pass_ctx *ctx, diag *d) {
  arena scratch;
  arena_init(&scratch, 0);
  status st = ST_OK;
  for (int i = 0; i < g->nnodes && st == ST_OK; i++) {
    ir_node *bn = g->nodes[i], *conv;
    if (!(ctx->fusion_off & FUSION_CONV_BN) && !bn->dead && bn->op == IR_OP_BATCHNORM &&
        (conv = foldable_conv(g, bn)))
      st = fold(g, conv, bn, &scratch, d);
  }
  int lowered = 0, count = g->nnodes; /* lower appends nodes; they are not BNs */
  for (int i = 0; i < count && st == ST_OK; i++) {
    ir_node *bn = g->nodes[i];
    if (bn->dead || bn->op != IR_OP_BATCHNORM) continue;
    if (bn->in[0]->rank < 2 || !is_float(bn->in[0]->dtype))
      st = ir_node_error(d, ST_ERR_UNSUPPORTED, bn, "input '%s' must be a float tensor of rank >= 2",
                         bn->in[0]->name);
    else
      st = lower(g, bn, &scratch, d), lowered = 1;
  }
  arena_free(&scratch);
  if (st == ST_OK) ir_graph_compact(g);
  if (st == ST_OK && lowered) st = ir_graph_toposort(g, d);
  return st;
}
