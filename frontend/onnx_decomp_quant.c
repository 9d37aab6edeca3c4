/* onnx_decomp_quant.c - QuantizeLinear, DequantizeLinear and
 * DynamicQuantizeLinear as IR subgraphs (onnx_decomp.h): the QDQ nodes of a
 * quantized export, computed in float and cast at the ends.
 *
 *   QuantizeLinear(x, s, [zp])    y = Cast(Clip(Round(x / s) + zp, lo, hi)), Round
 *                                 half to even, [lo, hi] the output type's range,
 *                                 + zp and the clip in int32
 *   DequantizeLinear(x, s, [zp])  y = Cast(x - zp in int32) * s, in s's type
 *   DynamicQuantizeLinear(x)      s = (max(0, max x) - min(0, min x)) / 255,
 *                                 zp = Cast(Clip(Round(-min(0, min x) / s), 0, 255)),
 *                                 y = QuantizeLinear(x, s, zp) in uint8
 *
 * Scale and zero point are per tensor (one element), per axis (1-D along
 * attribute axis, reshaped to broadcast over the trailing dims) or blocked
 * (opset 21: x's rank, block_size consecutive elements along axis sharing
 * one, expanded by a Gather of i / block_size). They may be run-time inputs.
 * The integer types are those of the NPU's set: int8, uint8, int16, uint16
 * and int32 (DequantizeLinear's input only).
 */
#include <inttypes.h>

#include "frontend/onnx_decomp.h"

enum { QUANT_MAX_AXIS = 1 << 24 };

static int quant_type(dtype t) { return t == DT_INT8 || t == DT_UINT8 || t == DT_INT16 || t == DT_UINT16; }

static void range_of(dtype t, double *lo, double *hi) {
  switch (t) {
  case DT_INT8: *lo = -128, *hi = 127; break;
  case DT_UINT8: *lo = 0, *hi = 255; break;
  case DT_INT16: *lo = -32768, *hi = 32767; break;
  default: *lo = 0, *hi = 65535; break; /* DT_UINT16 */
  }
}

/* v (a scale or zero point) shaped to broadcast against x: per tensor as it
 * is, per axis [D] -> [D, 1, ..], blocked expanded along axis. */
static ir_value *along_axis(dc *b, ir_value *v, ir_value *x, int64_t axis, int64_t block) {
  if (b->st || !v) return v;
  if (block == 0 && (v->rank == 0 || (v->rank == 1 && v->dims[0] == 1)))
    return v; /* per tensor: axis unused */
  if (x->rank < 0) return dc_fail(b, ST_ERR_UNSUPPORTED, "input '%s' needs a known rank at import", x->name);
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis >= x->rank)
    return dc_fail(b, ST_ERR_INVALID, "attribute 'axis' is out of range for rank %d", x->rank);
  if (block == 0) {
    if (v->rank != 1)
      return dc_fail(b, ST_ERR_INVALID, "'%s' has rank %d; per-axis parameters are 1-D", v->name, v->rank);
    int64_t shape[MAX_RANK];
    int n = 0;
    shape[n++] = -1;
    for (int64_t a = axis + 1; a < x->rank; a++)
      shape[n++] = 1;
    return n == 1 ? v : dc_reshape_to(b, v, n, shape);
  }
  const int64_t d = x->dims[axis];
  if (block < 0 || d < 0 || d > QUANT_MAX_AXIS)
    return dc_fail(b, ST_ERR_UNSUPPORTED,
                   "blocked quantization needs block_size >= 1 and a known dim %" PRId64
                   " of '%s' (at most %d)",
                   axis, x->name, QUANT_MAX_AXIS);
  if (v->rank != x->rank)
    return dc_fail(b, ST_ERR_INVALID, "'%s' has rank %d; blocked parameters have the input's rank %d",
                   v->name, v->rank, x->rank);
  int64_t *idx = arena_array(&b->g->arena, (size_t)(d ? d : 1), sizeof *idx);
  if (!idx) return dc_fail(b, ST_ERR_NOMEM, "out of memory");
  for (int64_t i = 0; i < d; i++)
    idx[i] = i / block;
  return dc_gather(b, v, dc_ints(b, (int)d, idx), axis);
}

/* Round(x / s) + zp clipped to `to`'s range and cast to it; x and s in x's
 * float type. The zero point is added and the range applied in int32, exact
 * even where the float type (f16 under force_fp16) cannot hold an int16
 * value. */
static ir_value *quantize(dc *b, ir_value *x, ir_value *s, ir_value *zp, dtype to) {
  double lo, hi;
  range_of(to, &lo, &hi);
  ir_value *r = dc_op1(b, IR_OP_ROUND, dc_op2(b, IR_OP_DIV, x, s));
  ir_value *q =
      dc_cast(b, dc_clip(b, r, -2147483648.0, 2147483520.0), DT_INT32); /* the largest f32 below 2^31 */
  if (zp) q = dc_op2(b, IR_OP_ADD, q, dc_cast(b, zp, DT_INT32));
  if (b->st) return NULL;
  q = dc_op2(b, IR_OP_MAX, dc_op2(b, IR_OP_MIN, q, dc_scalar(b, DT_INT32, hi)), dc_scalar(b, DT_INT32, lo));
  return dc_cast(b, q, to);
}

static int float_type(dtype t) { return t == DT_FLOAT32 || t == DT_FLOAT16; }

/* QuantizeLinear (opset 10; axis 13; block_size, output_dtype 21). */
status onnx_decomp_quantize(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *x = dc_in(&b, 0), *s = dc_in(&b, 1), *zp = dc_in(&b, 2);
  dtype xt = dc_dtype(&b, x), st = dc_dtype(&b, s), zt = zp ? dc_dtype(&b, zp) : DT_UNDEFINED;
  int64_t want = dc_attr_int(&b, "output_dtype", 0), axis = dc_attr_int(&b, "axis", 1);
  int64_t block = dc_attr_int(&b, "block_size", 0), prec = dc_attr_int(&b, "precision", 0);
  if (b.st) return dc_end(&b);
  dtype to = zp ? zt : want ? (dtype)want : DT_UINT8;
  if (zp && want && want != zt)
    return dc_refuse(&b, ST_ERR_INVALID,
                     "attribute 'output_dtype' = %" PRId64 " differs from y_zero_point's type %s", want,
                     onnx_dtype_name(zt));
  if (!float_type(xt) || !float_type(st))
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "x and y_scale have types %s and %s; float32 and float16 are supported",
                     onnx_dtype_name(xt), onnx_dtype_name(st));
  if (!quant_type(to))
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "output type %s is not supported (int8, uint8, int16, uint16 are)", onnx_dtype_name(to));
  if (prec != 0 && prec != xt && prec != DT_FLOAT32)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "attribute 'precision' = %" PRId64 " (float32 or x's type)",
                     prec);
  ir_value *xf = dc_cast(&b, x, DT_FLOAT32); /* the division in float32 whatever x's type */
  ir_value *sf = dc_cast(&b, along_axis(&b, s, x, axis, block), DT_FLOAT32);
  dc_output(&b, 0, quantize(&b, xf, sf, along_axis(&b, zp, x, axis, block), to));
  return dc_end(&b);
}

/* DequantizeLinear (opset 10; axis 13; block_size 21; output_dtype 23). */
status onnx_decomp_dequantize(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *x = dc_in(&b, 0), *s = dc_in(&b, 1), *zp = dc_in(&b, 2);
  dtype xt = dc_dtype(&b, x), st = dc_dtype(&b, s);
  int64_t want = dc_attr_int(&b, "output_dtype", 0), axis = dc_attr_int(&b, "axis", 1);
  int64_t block = dc_attr_int(&b, "block_size", 0);
  if (zp) dc_dtype(&b, zp);
  if (b.st) return dc_end(&b);
  if (!quant_type(xt) && xt != DT_INT32)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "x has type %s (int8, uint8, int16, uint16, int32 are supported)", onnx_dtype_name(xt));
  if (zp && zp->dtype != xt)
    return dc_refuse(&b, ST_ERR_INVALID, "x_zero_point has type %s, x %s", onnx_dtype_name(zp->dtype),
                     onnx_dtype_name(xt));
  dtype to = want ? (dtype)want : st;
  if (!float_type(st) || !float_type(to))
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "x_scale / output type %s / %s; float32 and float16 are supported", onnx_dtype_name(st),
                     onnx_dtype_name(to));
  /* x - zp in int32 (exact), then the product in float */
  ir_value *v = x;
  if (zp)
    v = dc_op2(&b, IR_OP_SUB, dc_cast(&b, x, DT_INT32),
               dc_cast(&b, along_axis(&b, zp, x, axis, block), DT_INT32));
  v = dc_op2(&b, IR_OP_MUL, dc_cast(&b, v, DT_FLOAT32),
             dc_cast(&b, along_axis(&b, s, x, axis, block), DT_FLOAT32));
  dc_output(&b, 0, dc_cast(&b, v, to));
  return dc_end(&b);
}

/* DynamicQuantizeLinear (opset 11): uint8 with the scale and zero point of x's range (0 included). */
status onnx_decomp_dynamic_quantize(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *x = dc_in(&b, 0);
  if (dc_dtype(&b, x) != DT_FLOAT32 && !b.st)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "x has type %s; float32 is supported",
                     onnx_dtype_name(x->dtype));
  ir_value *zero = b.st ? NULL : dc_scalar(&b, DT_FLOAT32, 0);
  ir_value *lo = dc_op2(&b, IR_OP_MIN, dc_reduce(&b, "min", x, 0, NULL, 0), zero);
  ir_value *hi = dc_op2(&b, IR_OP_MAX, dc_reduce(&b, "max", x, 0, NULL, 0), zero);
  ir_value *scale =
      dc_op2(&b, IR_OP_DIV, dc_op2(&b, IR_OP_SUB, hi, lo), b.st ? NULL : dc_scalar(&b, DT_FLOAT32, 255));
  ir_value *zpf =
      dc_clip(&b, dc_op1(&b, IR_OP_ROUND, dc_op2(&b, IR_OP_DIV, dc_op1(&b, IR_OP_NEG, lo), scale)), 0, 255);
  ir_value *zp = dc_cast(&b, zpf, DT_UINT8);
  dc_output(&b, 0, quantize(&b, x, scale, zp, DT_UINT8));
  dc_output(&b, 1, scale);
  dc_output(&b, 2, zp);
  return dc_end(&b);
}
