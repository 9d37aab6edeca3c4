/* onnx_decomp_experimental.c - ONNX's experimental ops (onnx_decomp.h).
 *
 * ONNX 1.2 listed these as experimental in the default domain and removed them
 * in opset 10; exports of that time still carry them (the model zoo's
 * Tiny YOLOv2 starts with an ImageScaler), and ONNX Runtime still runs them.
 * Each is a few elementwise ops or one Slice:
 *
 *   ImageScaler(x [N, C, H, W])  x * scale + bias[c]   (bias: C floats, required;
 *                                scale default 1)
 *   Scale(x)                     x * scale             (default 1)
 *   Affine(x)                    alpha * x + beta      (defaults 1, 0)
 *   ScaledTanh(x)                alpha * Tanh(beta * x)      (both required)
 *   ParametricSoftplus(x)        alpha * Softplus(beta * x)  (both required)
 *   Crop(x [N, C, H, W])         border = [left, top, right, bottom]; without
 *                                scale the window is rows [top, H - bottom) and
 *                                columns [left, W - right), with scale = [h, w]
 *                                rows [top, top + h) and columns [left, left + w)
 *
 * The arithmetic is in x's dtype, in the order written above, as ONNX
 * Runtime's kernels compute it. An attribute ONNX Runtime requires is
 * required here too, and its absence is refused naming it.
 */
#include <inttypes.h>

#include "frontend/onnx_decomp.h"

/* The float attribute `name`, refused when absent. */
static double required_float(dc *b, const char *name) {
  if (!b->st && !dc_has_attr(b, name)) dc_fail(b, ST_ERR_INVALID, "attribute '%s' is required", name);
  return dc_attr_float(b, name, 0.0);
}

/* x of a float dtype (these ops are defined on float tensors). */
static ir_value *float_input(dc *b) {
  ir_value *x = dc_in(b, 0);
  dtype dt = dc_dtype(b, x);
  if (!b->st && dt != DT_FLOAT32 && dt != DT_FLOAT16)
    return dc_fail(b, ST_ERR_UNSUPPORTED,
                   "input '%s' has data type %s; only float32 and float16 are supported", x->name,
                   onnx_dtype_name(dt));
  return x;
}

/* x * s, or x itself when s is 1. */
static ir_value *times(dc *b, ir_value *x, double s) {
  if (b->st || s == 1.0) return x;
  return dc_op2(b, IR_OP_MUL, x, dc_scalar(b, dc_dtype(b, x), s));
}

status onnx_decomp_image_scaler(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *x = float_input(&b);
  const Onnx__AttributeProto *bias = onnx_attr(nd, "bias");
  if (b.st) return dc_end(&b);
  if (!bias) return dc_refuse(&b, ST_ERR_INVALID, "attribute 'bias' is required");
  if (x->rank != 4)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "input '%s' must be [N, C, H, W] with its rank known (rank %d)",
                     x->name, x->rank);
  int64_t c = x->dims[1];
  if (bias->n_floats < 1 || (c >= 0 && (int64_t)bias->n_floats != c))
    return dc_refuse(&b, ST_ERR_INVALID,
                     "attribute 'bias' has %zu values for the %" PRId64 " channels of '%s'", bias->n_floats,
                     c, x->name);
  /* The bias as a float32 [C, 1, 1] constant, in x's dtype (a Cast that folds). */
  int64_t dims[3] = {(int64_t)bias->n_floats, 1, 1};
  ir_value *bv = dc_cast(&b, dc_const(&b, DT_FLOAT32, 3, dims, bias->floats), dc_dtype(&b, x));
  ir_value *y = times(&b, x, dc_attr_float(&b, "scale", 1.0));
  dc_output(&b, 0, dc_op2(&b, IR_OP_ADD, y, bv));
  return dc_end(&b);
}

status onnx_decomp_scale(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  /* A scale of 1 is x itself, which dc_output copies to the output. */
  dc_output(&b, 0, times(&b, float_input(&b), dc_attr_float(&b, "scale", 1.0)));
  return dc_end(&b);
}

status onnx_decomp_affine(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *x = float_input(&b);
  double alpha = dc_attr_float(&b, "alpha", 1.0), beta = dc_attr_float(&b, "beta", 0.0);
  ir_value *y = b.st ? NULL : dc_op2(&b, IR_OP_MUL, x, dc_scalar(&b, dc_dtype(&b, x), alpha));
  dc_output(&b, 0, b.st ? NULL : dc_op2(&b, IR_OP_ADD, y, dc_scalar(&b, dc_dtype(&b, x), beta)));
  return dc_end(&b);
}

/* alpha * op(beta * x), for ScaledTanh and ParametricSoftplus. */
static status scaled_unary(onnx_node *nd, ir_op op) {
  dc b;
  dc_begin(&b, nd);
  ir_value *x = float_input(&b);
  double alpha = required_float(&b, "alpha"), beta = required_float(&b, "beta");
  ir_value *y = b.st ? NULL : dc_op1(&b, op, times(&b, x, beta));
  dc_output(&b, 0, b.st ? NULL : dc_op2(&b, IR_OP_MUL, y, dc_scalar(&b, dc_dtype(&b, x), alpha)));
  return dc_end(&b);
}

status onnx_decomp_scaled_tanh(onnx_node *nd, ir_node *none) {
  (void)none;
  return scaled_unary(nd, IR_OP_TANH);
}

status onnx_decomp_parametric_softplus(onnx_node *nd, ir_node *none) {
  (void)none;
  return scaled_unary(nd, IR_OP_SOFTPLUS);
}

status onnx_decomp_crop(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *x = dc_in(&b, 0);
  int64_t border[4], scale[2];
  int nborder = dc_attr_ints(&b, "border", border, 4);
  int nscale = dc_attr_ints(&b, "scale", scale, 2);
  if (b.st) return dc_end(&b);
  if (nborder != 4)
    return dc_refuse(&b, ST_ERR_INVALID, "attribute 'border' must be 4 values [left, top, right, bottom]%s",
                     nborder < 0 ? " and is required" : "");
  if (nscale >= 0 && nscale != 2)
    return dc_refuse(&b, ST_ERR_INVALID, "attribute 'scale' must be 2 values [height, width], it has %d",
                     nscale);
  if (x->rank != 4 || x->dims[2] < 0 || x->dims[3] < 0)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "input '%s' must be [N, C, H, W] with H and W known at compile time", x->name);
  int64_t left = border[0], top = border[1], right = border[2], bottom = border[3];
  int64_t h = x->dims[2], w = x->dims[3];
  for (int i = 0; i < 4; i++)
    if (border[i] < 0)
      return dc_refuse(&b, ST_ERR_INVALID, "attribute 'border' value %d (%" PRId64 ") is negative", i,
                       border[i]);
  int64_t row_end = nscale == 2 ? top + scale[0] : h - bottom;
  int64_t col_end = nscale == 2 ? left + scale[1] : w - right;
  if (row_end <= top || row_end > h || col_end <= left || col_end > w)
    return dc_refuse(&b, ST_ERR_INVALID,
                     "the crop window rows [%" PRId64 ", %" PRId64 "), columns [%" PRId64 ", %" PRId64
                     ") is empty or outside the %" PRId64 " x %" PRId64 " input '%s'",
                     top, row_end, left, col_end, h, w, x->name);
  const int64_t starts[2] = {top, left}, ends[2] = {row_end, col_end}, axes[2] = {2, 3};
  dc_output(&b, 0, dc_slice(&b, x, 2, starts, ends, axes));
  return dc_end(&b);
}
