/* onnx_decomp_norm.c - the normalizations as IR subgraphs (onnx_decomp.h).
 *
 * Each follows its ONNX function body: statistics with Reduce{mean} in the
 * stash type (a Cast in and out when X has another float type), the
 * normalized value cast back to X's type, then scale and bias. The variance
 * is the mean of squared deviations (the function bodies' E[x^2] - E[x]^2 is
 * the same value with more rounding).
 *
 * Channel-wise parameters ([C] for InstanceNormalization, GroupNormalization)
 * are applied on a [N, C, -1] view of X (Reshape with 0 = copy the dim), so
 * none of these needs X's rank at import; LayerNormalization and
 * RMSNormalization need it only for a non-negative axis (Reduce takes
 * negative axes as they are).
 *
 * BatchNormalization in inference is the IR's own BatchNormalization node
 * (which bn_fold folds into a preceding Conv); with training_mode = 1
 * (opset 14) it normalizes with the batch's statistics over every axis but
 * the channels and also returns the running statistics
 * input_mean * momentum + batch_mean * (1 - momentum) (the same for the
 * variance, the population variance of the batch), as ONNX's reference.
 * Before opset 7 (attributes is_test, consumed_inputs) the node is read as
 * opset 7 reads it, as ONNX's version converter rewrites it (dropping
 * is_test): only Y is produced, with the given statistics; a model that
 * uses the old training outputs is refused as at opset 7.
 */
#include <inttypes.h>

#include "frontend/onnx_decomp.h"

/* The stash type (attribute stash_type, default float32) and X in it. */
static dtype stash(dc *b, ir_value *x, int has_attr, ir_value **xu) {
  dtype xt = dc_dtype(b, x);
  int64_t st = has_attr ? dc_attr_int(b, "stash_type", DT_FLOAT32) : DT_FLOAT32;
  if (b->st) return DT_UNDEFINED;
  if (st != DT_FLOAT32 && st != xt) {
    dc_fail(b, ST_ERR_UNSUPPORTED, "attribute 'stash_type' = %" PRId64 " (only 1, float32, or X's own type)",
            st);
    return DT_UNDEFINED;
  }
  if (xt != DT_FLOAT32 && xt != DT_FLOAT16) {
    dc_fail(b, ST_ERR_UNSUPPORTED, "input '%s' has data type %s; only float32 and float16 are supported",
            x->name, onnx_dtype_name(xt));
    return DT_UNDEFINED;
  }
  *xu = dc_cast(b, x, (dtype)st);
  return (dtype)st;
}

/* Axes axis..rank-1 of x into axes; their count, or -1 after a failure. */
static int trailing_axes(dc *b, const ir_value *x, int64_t axis, int64_t *axes) {
  if (b->st) return -1;
  if (axis >= 0) {
    if (x->rank < 0) {
      dc_fail(b, ST_ERR_UNSUPPORTED,
              "attribute 'axis' = %" PRId64 " needs the rank of input '%s', unknown at import", axis,
              x->name);
      return -1;
    }
    axis -= x->rank;
  }
  if (axis >= 0 || axis < -MAX_RANK || (x->rank >= 0 && axis < -x->rank)) {
    dc_fail(b, ST_ERR_INVALID, "attribute 'axis' is out of range for input '%s'", x->name);
    return -1;
  }
  int n = 0;
  for (int64_t a = axis; a < 0; a++)
    axes[n++] = a;
  return n;
}

/* (x - mean) / sqrt(var + eps) over the axes, with mean, var and 1/sqrt(var + eps) out. */
static ir_value *standardize(dc *b, ir_value *x, int count, const int64_t *axes, double eps,
                             ir_value **mean_out, ir_value **var_out, ir_value **inv_out) {
  ir_value *mean = dc_reduce(b, "mean", x, count, axes, 1);
  ir_value *dev = dc_op2(b, IR_OP_SUB, x, mean);
  ir_value *var = dc_reduce(b, "mean", dc_op2(b, IR_OP_MUL, dev, dev), count, axes, 1);
  ir_value *e = b->st ? NULL : dc_scalar(b, x->dtype, eps);
  ir_value *inv = dc_op1(b, IR_OP_RECIPROCAL, dc_op1(b, IR_OP_SQRT, dc_op2(b, IR_OP_ADD, var, e)));
  if (mean_out) *mean_out = mean;
  if (var_out) *var_out = var;
  if (inv_out) *inv_out = inv;
  return dc_op2(b, IR_OP_MUL, dev, inv);
}

ir_value *dc_norm(dc *b, ir_value *x, ir_value *scale, ir_value *bias, int64_t axis, double eps, int rms,
                  int stash_attr, ir_value **mean, ir_value **inv) {
  ir_value *xu = NULL, *m = NULL, *r = NULL, *y = NULL;
  int64_t axes[MAX_RANK];
  stash(b, x, stash_attr, &xu);
  int count = trailing_axes(b, x, axis, axes);
  if (count < 0) return NULL;
  if (rms) {
    ir_value *ms = dc_reduce(b, "mean", dc_op2(b, IR_OP_MUL, xu, xu), count, axes, 1);
    ir_value *e = b->st ? NULL : dc_scalar(b, xu->dtype, eps);
    r = dc_op1(b, IR_OP_RECIPROCAL, dc_op1(b, IR_OP_SQRT, dc_op2(b, IR_OP_ADD, ms, e)));
    y = dc_op2(b, IR_OP_MUL, xu, r);
  } else {
    y = standardize(b, xu, count, axes, eps, &m, NULL, &r);
  }
  y = dc_op2(b, IR_OP_MUL, dc_cast(b, y, x->dtype), scale);
  if (bias) y = dc_op2(b, IR_OP_ADD, y, bias);
  if (mean) *mean = m;
  if (inv) *inv = r;
  return y;
}

/* LayerNormalization(X, Scale, [B]) -> Y, [Mean], [InvStdDev] (opset 17). */
status onnx_decomp_layer_norm(onnx_node *nd, ir_node *none) {
  dc b;
  dc_begin(&b, nd);
  ir_value *mean = NULL, *inv = NULL;
  ir_value *y = dc_norm(&b, dc_in(&b, 0), dc_in(&b, 1), dc_in(&b, 2), dc_attr_int(&b, "axis", -1),
                        dc_attr_float(&b, "epsilon", 1e-5), 0, 1, &mean, &inv);
  dc_output(&b, 0, y);
  if (dc_output_used(&b, 1)) dc_output(&b, 1, mean);
  if (dc_output_used(&b, 2)) dc_output(&b, 2, inv);
  return dc_end(&b);
}

/* RMSNormalization(X, scale) -> Y (opset 23): X / sqrt(mean(X^2) + eps) * scale. */
status onnx_decomp_rms_norm(onnx_node *nd, ir_node *none) {
  dc b;
  dc_begin(&b, nd);
  dc_output(&b, 0,
            dc_norm(&b, dc_in(&b, 0), dc_in(&b, 1), NULL, dc_attr_int(&b, "axis", -1),
                    dc_attr_float(&b, "epsilon", 1e-5), 1, 1, NULL, NULL));
  return dc_end(&b);
}

/* v ([K]) as [K, 1], to broadcast over the last axis of an [N, K, S] view. */
static ir_value *column(dc *b, ir_value *v) {
  static const int64_t shape[2] = {-1, 1};
  return dc_reshape_to(b, v, 2, shape);
}

/* InstanceNormalization(X, scale, B) (opset 6): per (n, c) over the spatial dims. */
status onnx_decomp_instance_norm(onnx_node *nd, ir_node *none) {
  dc b;
  dc_begin(&b, nd);
  ir_value *x = dc_in(&b, 0);
  static const int64_t ncs[3] = {0, 0, -1}, last = 2;
  if (dc_dtype(&b, x) != DT_FLOAT32 && x->dtype != DT_FLOAT16 && !b.st)
    dc_fail(&b, ST_ERR_UNSUPPORTED, "input '%s' has data type %s; only float32 and float16 are supported",
            x->name, onnx_dtype_name(x->dtype));
  ir_value *x3 = dc_reshape_to(&b, x, 3, ncs);
  ir_value *y = standardize(&b, x3, 1, &last, dc_attr_float(&b, "epsilon", 1e-5), NULL, NULL, NULL);
  y = dc_op2(&b, IR_OP_ADD, dc_op2(&b, IR_OP_MUL, y, column(&b, dc_in(&b, 1))), column(&b, dc_in(&b, 2)));
  dc_output(&b, 0, dc_reshape(&b, y, dc_shape(&b, x)));
  return dc_end(&b);
}

/* GroupNormalization(X, scale, bias): statistics per (n, group) on an
 * [N, G, -1] view. Opset 21: scale and bias are per channel ([C]); opset 18:
 * per group ([G]). */
status onnx_decomp_group_norm(onnx_node *nd, ir_node *none) {
  dc b;
  dc_begin(&b, nd);
  ir_value *x = dc_in(&b, 0), *xu = NULL;
  int per_channel = nd->c->opset >= 21;
  int64_t groups = dc_attr_int(&b, "num_groups", 0);
  if (!dc_has_attr(&b, "num_groups") || groups < 1)
    dc_fail(&b, ST_ERR_INVALID, "attribute 'num_groups' is required and must be >= 1");
  stash(&b, x, per_channel, &xu);
  int64_t ngs[3] = {0, groups, -1}, ncs[3] = {0, 0, -1}, last = 2;
  ir_value *y = standardize(&b, dc_reshape_to(&b, xu, 3, ngs), 1, &last, dc_attr_float(&b, "epsilon", 1e-5),
                            NULL, NULL, NULL);
  if (per_channel) y = dc_reshape_to(&b, dc_reshape(&b, y, dc_shape(&b, x)), 3, ncs);
  y = dc_cast(&b, y, x->dtype);
  y = dc_op2(&b, IR_OP_ADD, dc_op2(&b, IR_OP_MUL, y, column(&b, dc_in(&b, 1))), column(&b, dc_in(&b, 2)));
  dc_output(&b, 0, dc_reshape(&b, y, dc_shape(&b, x)));
  return dc_end(&b);
}

/* MeanVarianceNormalization(X) (opset 9): (X - mean) / (sqrt(var) + 1e-9) over axes (default [0, 2, 3]). */
status onnx_decomp_mvn(onnx_node *nd, ir_node *none) {
  dc b;
  dc_begin(&b, nd);
  ir_value *x = dc_in(&b, 0);
  int64_t axes[MAX_RANK] = {0, 2, 3};
  int count = dc_attr_ints(&b, "axes", axes, MAX_RANK);
  if (count < 0) count = 3;
  if (count == 0) dc_fail(&b, ST_ERR_INVALID, "attribute 'axes' is empty");
  ir_value *mean = dc_reduce(&b, "mean", x, count, axes, 1);
  ir_value *dev = dc_op2(&b, IR_OP_SUB, x, mean);
  ir_value *sd =
      dc_op1(&b, IR_OP_SQRT, dc_reduce(&b, "mean", dc_op2(&b, IR_OP_MUL, dev, dev), count, axes, 1));
  ir_value *e = b.st ? NULL : dc_scalar(&b, dc_dtype(&b, x), 1e-9);
  dc_output(&b, 0, dc_op2(&b, IR_OP_DIV, dev, dc_op2(&b, IR_OP_ADD, sd, e)));
  return dc_end(&b);
}

/* LpNormalization(X) (opset 1): X / ||X||_p along axis (default -1), p 1 or 2; 0 where the norm is 0. */
status onnx_decomp_lp_norm(onnx_node *nd, ir_node *none) {
  dc b;
  dc_begin(&b, nd);
  int64_t p = dc_attr_int(&b, "p", 2), axis = dc_attr_int(&b, "axis", -1);
  if (p != 1 && p != 2) dc_fail(&b, ST_ERR_INVALID, "attribute 'p' = %" PRId64 " must be 1 or 2", p);
  ir_value *x = dc_in(&b, 0);
  ir_value *norm = dc_reduce(&b, p == 1 ? "l1" : "l2", x, 1, &axis, 1);
  ir_value *zero = b.st ? NULL : dc_scalar(&b, dc_dtype(&b, x), 0);
  dc_output(&b, 0, dc_where(&b, dc_op2(&b, IR_OP_EQUAL, norm, zero), zero, dc_op2(&b, IR_OP_DIV, x, norm)));
  return dc_end(&b);
}

/* v ([C]) shaped to broadcast over the channels of a rank-r [N, C, D1..] tensor: [C, 1, .., 1]. */
static ir_value *per_channel(dc *b, ir_value *v, int rank) {
  int64_t shape[MAX_RANK];
  shape[0] = -1;
  for (int i = 1; i < rank - 1; i++)
    shape[i] = 1;
  return rank > 2 ? dc_reshape_to(b, v, rank - 1, shape) : v;
}

/* BatchNormalization(X, scale, B, input_mean, input_var) -> Y, [running_mean, running_var]. */
status onnx_decomp_batchnorm(onnx_node *nd, ir_node *none) {
  dc b;
  dc_begin(&b, nd);
  double eps = dc_attr_float(&b, "epsilon", 1e-5);
  if (dc_attr_int(&b, "spatial", 1) != 1)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "spatial=0 (per-activation statistics) is not supported");
  int64_t training = dc_attr_int(&b, "training_mode", 0);
  if (training != 0 && training != 1)
    return dc_refuse(&b, ST_ERR_INVALID, "attribute 'training_mode' = %" PRId64 " must be 0 or 1", training);
  for (int k = training ? 3 : 1; k < nd->nout; k++)
    if (dc_output_used(&b, k))
      return dc_refuse(&b, ST_ERR_UNSUPPORTED, "output %d '%s' is used, but %s", k, nd->out[k]->name,
                       training ? "training mode produces only Y, running_mean and running_var (opset 14)"
                                : "only Y is produced outside training mode (training_mode = 1, opset 14)");
  ir_value *x = dc_in(&b, 0);
  if (!training) {
    ir_value *in[5] = {x, dc_in(&b, 1), dc_in(&b, 2), dc_in(&b, 3), dc_in(&b, 4)};
    ir_node *n = dc_node_whole(&b, IR_OP_BATCHNORM, 5, in);
    dc_set_float(&b, n, "epsilon", eps);
    dc_output(&b, 0, dc_val(&b, n));
    return dc_end(&b);
  }
  dtype dt = dc_dtype(&b, x);
  if (!b.st && dt != DT_FLOAT32 && dt != DT_FLOAT16)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "input '%s' has data type %s; only float32 and float16 are supported", x->name,
                     onnx_dtype_name(dt));
  if (!b.st && (x->rank < 2 || x->rank > MAX_RANK))
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "training mode needs the rank of input '%s' (2 or more) at import", x->name);
  if (b.st) return dc_end(&b);
  int64_t axes[MAX_RANK];
  int count = 0;
  for (int a = 0; a < x->rank; a++)
    if (a != 1) axes[count++] = a;
  ir_value *mean = NULL, *var = NULL;
  ir_value *y = standardize(&b, x, count, axes, eps, &mean, &var, NULL);
  y = dc_op2(&b, IR_OP_MUL, y, per_channel(&b, dc_in(&b, 1), x->rank));
  dc_output(&b, 0, dc_op2(&b, IR_OP_ADD, y, per_channel(&b, dc_in(&b, 2), x->rank)));
  if (dc_output_used(&b, 1) || dc_output_used(&b, 2)) {
    double momentum = dc_attr_float(&b, "momentum", 0.9);
    static const int64_t flat[1] = {-1};
    ir_value *m = b.st ? NULL : dc_scalar(&b, dt, momentum),
             *m1 = b.st ? NULL : dc_scalar(&b, dt, 1 - momentum);
    ir_value *batch_mean = dc_reshape_to(&b, mean, 1, flat), *batch_var = dc_reshape_to(&b, var, 1, flat);
    ir_value *run_mean = dc_op2(&b, IR_OP_MUL, dc_in(&b, 3), m),
             *run_var = dc_op2(&b, IR_OP_MUL, dc_in(&b, 4), m);
    dc_output(&b, 1, dc_op2(&b, IR_OP_ADD, run_mean, dc_op2(&b, IR_OP_MUL, batch_mean, m1)));
    dc_output(&b, 2, dc_op2(&b, IR_OP_ADD, run_var, dc_op2(&b, IR_OP_MUL, batch_var, m1)));
  }
  return dc_end(&b);
}
