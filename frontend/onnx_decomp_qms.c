/* onnx_decomp_qms.c - ONNX Runtime's quantized contrib ops (domain
 * com.microsoft, the importer table at the end): the QOperator format that
 * ONNX Runtime's quantizer, Intel Neural Compressor and the ONNX model
 * zoo's int8 models write. Each becomes its QDQ form, as QLinearConv does
 * (onnx_decomp_quant.c): DequantizeLinear of each 8-bit input -> the float
 * op -> QuantizeLinear, so both formats meet one int8 path (passes/qconv.c
 * folds the islands it knows into QConv / QEltwise / the integer global
 * mean, qlut.c the elementwise ones into QLut tables; the rest run as float
 * ops between int8 tensors).
 *
 *   QLinearAdd, QLinearMul (A, A_scale, [A_zp], B, B_scale, [B_zp], C_scale, [C_zp])
 *                              Q(DQ(A) + | * DQ(B)), broadcasting
 *   QLinearLeakyRelu, QLinearSigmoid (X, X_scale, [X_zp], Y_scale, [Y_zp])
 *                              Q(LeakyRelu(DQ(X), alpha (0.01)) | Sigmoid(DQ(X)))
 *   QLinearGlobalAveragePool (X, x_scale, x_zp, y_scale, y_zp)
 *                              Q(GlobalAveragePool(DQ(X))); channels_last = 1:
 *                              X is [N, D1.., C], transposed to [N, C, D1..]
 *                              first (int8) and the result back
 *   QLinearAveragePool (X, x_scale, [x_zp], y_scale, [y_zp])
 *                              Q(AveragePool(DQ(X))) with AveragePool's
 *                              window attributes; channels_last as above
 *   QLinearConcat (Y_scale, Y_zp, then (X, X_scale, X_zp) per input)
 *                              Q(Concat(DQ(X1), DQ(X2), ..), axis (required))
 *   QLinearSoftmax (X, X_scale, [x_zp], y_scale, [y_zp])
 *                              Q(Softmax(DQ(X), axis (-1))) with the Softmax of
 *                              attribute opset (required): below 13 the input
 *                              coerced to 2-D at axis
 *   QLinearReduceMean (data, data_scale, [data_zp], reduced_scale, [reduced_zp])
 *                              Q(ReduceMean(DQ(data), axes (required), keepdims (1)))
 *   QGemm (A, a_scale, a_zp, B, b_scale, [b_zp], [C], [y_scale], [y_zp])
 *                              Gemm(DQ(A), DQ(B), C * alpha * a_scale * b_scale,
 *                              alpha, transA, transB) (C int32, its scale the
 *                              product), then Q(., y_scale, y_zp); without
 *                              y_scale the float32 Gemm is the output. A per
 *                              tensor, B per tensor or per column (N).
 * Every scale and zero point is per tensor except QGemm's b_scale, b_zp.
 * The output's type is that of the 8-bit inputs (T), QGemm's y_zp's (A's
 * without). Absent zero points are 0. Malformed parameters are refused
 * naming the node and the field (dc_dq_operand, dc_q_result): a missing
 * scale, a scale of 0 or not finite, a zero point of another type than its
 * values, a parameter of more than one element where one is required. The
 * nodes made carry precision = "fp32" (dc_keep_dtype), as QLinearConv's.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "frontend/onnx_decomp.h"

/* The ONNX type of input i (its dtype, or a failure naming it). */
static dtype in_type(dc *b, int i, const char *name) {
  ir_value *v = dc_in(b, i);
  if (b->st) return DT_UNDEFINED;
  if (!v) {
    dc_fail(b, ST_ERR_INVALID, "input %s is required", name);
    return DT_UNDEFINED;
  }
  return dc_dtype(b, v);
}

/* DequantizeLinear of the per-tensor operand at inputs i (values), i + 1
 * (scale), i + 2 (zero point). */
static ir_value *dq_at(dc *b, int i, const char *name) {
  return dc_dq_operand(b, dc_in(b, i), dc_in(b, i + 1), dc_in(b, i + 2), -1, name);
}

/* QuantizeLinear of y with the scale and zero point at inputs i, i + 1 into
 * type t, the zero point's type t too. */
static ir_value *q_at(dc *b, ir_value *y, int i, const char *name, dtype t) {
  ir_value *zp = dc_in(b, i + 1);
  if (b->st) return NULL;
  if (zp && dc_dtype(b, zp) != t && !b->st)
    return dc_fail(b, ST_ERR_INVALID, "%s_zero_point '%s' has type %s, the quantized values %s", name,
                   zp->name, onnx_dtype_name(zp->dtype), onnx_dtype_name(t));
  return dc_q_result(b, y, dc_in(b, i), zp, name, t);
}

/* The end of every decomposition here: y is output 0. */
static status finish(dc *b, ir_value *y) {
  dc_output(b, 0, y);
  dc_keep_dtype(b);
  return dc_end(b);
}

/* QLinearAdd, QLinearMul (com.microsoft 1). */
static status onnx_decomp_qlinear_binary(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  dtype t = in_type(&b, 0, "A"), tb = in_type(&b, 3, "B");
  if (!b.st && tb != t)
    return dc_refuse(&b, ST_ERR_INVALID, "B '%s' has type %s, A's is %s", dc_in(&b, 3)->name,
                     onnx_dtype_name(tb), onnx_dtype_name(t));
  ir_op op = strcmp(nd->np->op_type, "QLinearMul") ? IR_OP_ADD : IR_OP_MUL;
  ir_value *y = dc_op2(&b, op, dq_at(&b, 0, "A"), dq_at(&b, 3, "B"));
  return finish(&b, q_at(&b, y, 6, "C", t));
}

/* QLinearLeakyRelu, QLinearSigmoid (com.microsoft 1). */
static status onnx_decomp_qlinear_unary(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  dtype t = in_type(&b, 0, "X");
  ir_value *x = dq_at(&b, 0, "X"), *y;
  if (!strcmp(nd->np->op_type, "QLinearSigmoid")) {
    y = dc_op1(&b, IR_OP_SIGMOID, x);
  } else {
    ir_node *n = dc_node(&b, IR_OP_LEAKYRELU, 1, &x);
    dc_set_float(&b, n, "alpha", dc_attr_float(&b, "alpha", 0.01));
    y = dc_val(&b, n);
  }
  return finish(&b, q_at(&b, y, 3, "Y", t));
}

/* x [N, D1.., C] -> [N, C, D1..] (to_first) or back; x itself when the
 * attribute channels_last is 0 (which must be 0 or 1). */
static ir_value *channels(dc *b, ir_value *x, int to_first) {
  int64_t last = dc_attr_int(b, "channels_last", 0);
  if (b->st || !x || last == 0) return x;
  if (last != 1) return dc_fail(b, ST_ERR_INVALID, "attribute 'channels_last' = %" PRId64 " (0 or 1)", last);
  dc_infer(b); /* x's rank, when this builder made it */
  if (x->rank < 3) return dc_fail(b, ST_ERR_UNSUPPORTED, "'%s' needs a known rank >= 3 at import", x->name);
  int64_t perm[MAX_RANK];
  int r = x->rank;
  perm[0] = 0;
  for (int i = 1; i < r; i++)
    perm[i] = to_first ? (i == 1 ? r - 1 : i - 1) : (i == r - 1 ? 1 : i + 1);
  return dc_transpose(b, x, r, perm);
}

/* QLinearGlobalAveragePool and QLinearAveragePool (com.microsoft 1): the
 * pool between x's and y's parameters, channels first (int8 transposes). */
static status qlinear_pool(onnx_node *nd, ir_op op) {
  dc b;
  dc_begin(&b, nd);
  dtype t = in_type(&b, 0, "X");
  ir_value *x = channels(&b, dc_in(&b, 0), 1);
  x = dc_dq_operand(&b, x, dc_in(&b, 1), dc_in(&b, 2), -1, "x");
  ir_node *n = dc_node(&b, op, 1, &x);
  if (n && op == IR_OP_AVGPOOL) {
    status s = onnx_avgpool_attrs(nd, n);
    if (s) b.st = s;
  }
  return finish(&b, channels(&b, q_at(&b, dc_val(&b, n), 3, "y", t), 0));
}

static status onnx_decomp_qlinear_gap(onnx_node *nd, ir_node *none) {
  (void)none;
  return qlinear_pool(nd, IR_OP_GLOBALAVGPOOL);
}

static status onnx_decomp_qlinear_avgpool(onnx_node *nd, ir_node *none) {
  (void)none;
  return qlinear_pool(nd, IR_OP_AVGPOOL);
}

/* QLinearConcat (com.microsoft 1): Y_scale, Y_zero_point, then a (X,
 * X_scale, X_zero_point) triple per concatenated input. */
static status onnx_decomp_qlinear_concat(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  int count = (nd->nin - 2) / 3;
  if ((nd->nin - 2) % 3)
    return dc_refuse(
        &b, ST_ERR_INVALID,
        "has %d inputs: Y_scale, Y_zero_point, then an (X, X_scale, X_zero_point) triple per input", nd->nin);
  if (!dc_has_attr(&b, "axis")) return dc_refuse(&b, ST_ERR_INVALID, "attribute 'axis' is required");
  dtype t = in_type(&b, 1, "Y_zero_point");
  ir_value **in = arena_array(&b.g->arena, (size_t)count, sizeof *in);
  if (!in) return dc_refuse(&b, ST_ERR_NOMEM, "out of memory");
  for (int k = 0; k < count && !b.st; k++) {
    char name[32];
    snprintf(name, sizeof name, "X%d", k + 1);
    dtype tk = in_type(&b, 2 + 3 * k, name);
    if (!b.st && tk != t)
      return dc_refuse(&b, ST_ERR_INVALID, "%s '%s' has type %s, Y_zero_point's is %s", name,
                       dc_in(&b, 2 + 3 * k)->name, onnx_dtype_name(tk), onnx_dtype_name(t));
    in[k] = dq_at(&b, 2 + 3 * k, name);
  }
  ir_value *y = b.st ? NULL : dc_concat(&b, dc_attr_int(&b, "axis", 0), count, in);
  return finish(&b, q_at(&b, y, 0, "Y", t));
}

/* QLinearSoftmax (com.microsoft 1). */
static status onnx_decomp_qlinear_softmax(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  if (!dc_has_attr(&b, "opset")) return dc_refuse(&b, ST_ERR_INVALID, "attribute 'opset' is required");
  int64_t opset = dc_attr_int(&b, "opset", 13);
  if (opset < 1) return dc_refuse(&b, ST_ERR_INVALID, "attribute 'opset' = %" PRId64 " (>= 1)", opset);
  dtype t = in_type(&b, 0, "X");
  ir_value *x = dq_at(&b, 0, "X");
  ir_node *n = dc_node(&b, IR_OP_SOFTMAX, 1, &x);
  dc_set_int(&b, n, "axis", dc_attr_int(&b, "axis", -1));
  dc_set_int(&b, n, "coerce_2d", opset < 13);
  dc_set_int(&b, n, "log", 0);
  return finish(&b, q_at(&b, dc_val(&b, n), 3, "y", t));
}

/* QLinearReduceMean (com.microsoft 1). */
static status onnx_decomp_qlinear_reduce_mean(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  int64_t axes[MAX_RANK];
  int count = dc_attr_ints(&b, "axes", axes, MAX_RANK);
  if (!b.st && count < 0) return dc_refuse(&b, ST_ERR_INVALID, "attribute 'axes' is required");
  int64_t keep = dc_attr_int(&b, "keepdims", 1);
  if (keep != 0 && keep != 1)
    return dc_refuse(&b, ST_ERR_INVALID, "attribute 'keepdims' = %" PRId64 " (0 or 1)", keep);
  dtype t = in_type(&b, 0, "data");
  ir_value *y = dc_reduce(&b, "mean", dq_at(&b, 0, "data"), count, axes, (int)keep);
  return finish(&b, q_at(&b, y, 3, "reduced", t));
}

/* QGemm (com.microsoft 1). */
static status onnx_decomp_qgemm(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *a = dc_in(&b, 0), *as = dc_in(&b, 1), *bm = dc_in(&b, 3), *bs = dc_in(&b, 4), *c = dc_in(&b, 6);
  ir_value *ys = dc_in(&b, 7), *yz = dc_in(&b, 8);
  double alpha = dc_attr_float(&b, "alpha", 1.0);
  int64_t ta = dc_attr_int(&b, "transA", 0), tb = dc_attr_int(&b, "transB", 0);
  if (b.st) return dc_end(&b);
  if ((ta != 0 && ta != 1) || (tb != 0 && tb != 1))
    return dc_refuse(&b, ST_ERR_INVALID, "attributes transA = %" PRId64 ", transB = %" PRId64 " (0 or 1)", ta,
                     tb);
  if (yz && !ys) return dc_refuse(&b, ST_ERR_INVALID, "input y_zero_point '%s' without y_scale", yz->name);
  if (a->rank != 2 || bm->rank != 2)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "A '%s' and B '%s' need rank 2 at import (they have %d, %d)",
                     a->name, bm->name, a->rank, bm->rank);
  ir_value *in[3] = {dc_dq_operand(&b, a, as, dc_in(&b, 2), -1, "a"),
                     dc_dq_operand(&b, bm, bs, dc_in(&b, 5), tb ? 0 : 1, "b"), NULL};
  if (c) { /* int32, scale alpha * a_scale * b_scale (per column: broadcast along C's last axis) */
    if (dc_dtype(&b, c) != DT_INT32 && !b.st)
      return dc_refuse(&b, ST_ERR_INVALID, "C '%s' has type %s; QGemm's C is int32", c->name,
                       onnx_dtype_name(c->dtype));
    ir_value *scale = dc_op2(&b, IR_OP_MUL, as, bs);
    if (alpha != 1.0) scale = dc_op2(&b, IR_OP_MUL, scale, b.st ? NULL : dc_scalar(&b, as->dtype, alpha));
    in[2] = dc_op2(&b, IR_OP_MUL, dc_cast(&b, c, as->dtype), scale);
  }
  ir_node *g = dc_node(&b, IR_OP_GEMM, c ? 3 : 2, in);
  dc_set_float(&b, g, "alpha", alpha);
  dc_set_float(&b, g, "beta", 1.0);
  dc_set_int(&b, g, "transA", ta);
  dc_set_int(&b, g, "transB", tb);
  ir_value *y = dc_val(&b, g);
  return finish(&b, ys ? q_at(&b, y, 7, "y", yz ? dc_dtype(&b, yz) : a->dtype) : y);
}

/* --- the com.microsoft importer table (onnx_ops.c's onnx_import_node reads
 * it for the nodes of that domain, onnx_ops.c's own table for the default
 * domain's: a name is accepted only from its own domain). min_opset is of
 * the com.microsoft opset. */
static const onnx_ms_importer ms_importers[] = {
    {{"QLinearAdd", NULL, 1, 7, 8, 1, "", onnx_decomp_qlinear_binary},
     "A,A_scale,A_zero_point?,B,B_scale,B_zero_point?,C_scale,C_zero_point?"},
    {{"QLinearMul", NULL, 1, 7, 8, 1, "", onnx_decomp_qlinear_binary},
     "A,A_scale,A_zero_point?,B,B_scale,B_zero_point?,C_scale,C_zero_point?"},
    {{"QLinearGlobalAveragePool", NULL, 1, 5, 5, 1, "-channels_last:i", onnx_decomp_qlinear_gap},
     "X,x_scale,x_zero_point?,y_scale,y_zero_point?"},
    {{"QLinearAveragePool", NULL, 1, 4, 5, 1,
      "-auto_pad:s -kernel_shape:I -strides:I -pads:I -ceil_mode:i -count_include_pad:i -channels_last:i",
      onnx_decomp_qlinear_avgpool},
     "X,x_scale,x_zero_point?,y_scale,y_zero_point?"},
    {{"QLinearConcat", NULL, 1, 5, 65535, 1, "-axis:i", onnx_decomp_qlinear_concat},
     "Y_scale,Y_zero_point,X1,X1_scale,X1_zero_point?"},
    {{"QLinearLeakyRelu", NULL, 1, 4, 5, 1, "-alpha:f", onnx_decomp_qlinear_unary},
     "X,X_scale,X_zero_point?,Y_scale,Y_zero_point?"},
    {{"QLinearSigmoid", NULL, 1, 4, 5, 1, "", onnx_decomp_qlinear_unary},
     "X,X_scale,X_zero_point?,Y_scale,Y_zero_point?"},
    {{"QLinearSoftmax", NULL, 1, 4, 5, 1, "-axis:i -opset:i", onnx_decomp_qlinear_softmax},
     "X,X_scale,x_zero_point?,y_scale,y_zero_point?"},
    {{"QLinearReduceMean", NULL, 1, 4, 5, 1, "-axes:I -keepdims:i", onnx_decomp_qlinear_reduce_mean},
     "data,data_scale,data_zero_point?,reduced_scale,reduced_zero_point?"},
    {{"QGemm", NULL, 1, 6, 9, 1, "-alpha:f -transA:i -transB:i", onnx_decomp_qgemm},
     "A,a_scale,a_zero_point?,B,b_scale,b_zero_point?,C?,y_scale,y_zero_point?"},
};

/* Row i of this table, then of onnx_decomp_msft.c's (the transformer ops); NULL past the end. */
static const onnx_ms_importer *ms_row(int i) {
  const int own = (int)(sizeof ms_importers / sizeof *ms_importers);
  return i < own                              ? &ms_importers[i]
         : i - own < onnx_msft_importer_count ? &onnx_msft_importers[i - own]
                                              : NULL;
}

const onnx_ms_importer *onnx_ms_importer_find(const char *op_type) {
  for (int i = 0; ms_row(i); i++)
    if (!strcmp(ms_row(i)->im.op_type, op_type)) return ms_row(i);
  return NULL;
}

const char *onnx_ms_op_list(char *buf, size_t size) {
  size_t len = 0;
  buf[0] = 0;
  for (int i = 0; ms_row(i) && len < size; i++)
    len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", ms_row(i)->im.op_type);
  return buf;
}
