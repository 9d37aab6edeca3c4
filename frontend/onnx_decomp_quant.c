/* onnx_decomp_quant.c - QuantizeLinear and DequantizeLinear as the IR ops of
 * the same names (ir/ops.def), and DynamicQuantizeLinear built from them
 * (onnx_decomp.h).
 *
 *   QuantizeLinear(x, s, [zp])    one QuantizeLinear node, attr to = the output type
 *   DequantizeLinear(x, s, [zp])  one DequantizeLinear node, attr to = the float type
 *   DynamicQuantizeLinear(x)      s = (max(0, max x) - min(0, min x)) / 255,
 *                                 zp = saturate(round(0 - min(0, min x) / s)),
 *                                 y = QuantizeLinear(x, s, zp) in uint8
 *
 * Scale and zero point are per tensor (one element), per axis (1-D along
 * attribute axis, reshaped to [D, 1, ..] so that they broadcast against x,
 * the IR contract) or blocked (opset 21: x's rank, block_size consecutive
 * elements along axis sharing one, expanded by a Gather of i / block_size).
 * They may be run-time inputs. The integer types are those of the NPU's set:
 * int8, uint8, int16, uint16 and int32 (DequantizeLinear's input only).
 *
 * Malformed parameters are refused here, naming the node and the field:
 * a constant scale with an element that is 0, infinite or NaN; a zero point
 * of another type than the quantized values, or a nonzero one for int32; a
 * per-axis parameter whose length is not the axis's.
 */
#include <inttypes.h>
#include <math.h>

#include "common/elem.h"
#include "frontend/onnx_decomp.h"

enum { QUANT_MAX_AXIS = 1 << 24 };

static int quant_type(dtype t) { return t == DT_INT8 || t == DT_UINT8 || t == DT_INT16 || t == DT_UINT16; }

static int float_type(dtype t) { return t == DT_FLOAT32 || t == DT_FLOAT16; }

/* v (a scale or zero point) shaped to broadcast against x: per tensor as it
 * is, per axis [D] -> [D, 1, ..], blocked expanded along axis. `what` names
 * v's ONNX input in messages. */
static ir_value *along_axis(dc *b, ir_value *v, ir_value *x, int64_t axis, int64_t block, const char *what) {
  if (b->st || !v) return v;
  if (block == 0 && (v->rank == 0 || (v->rank == 1 && v->dims[0] == 1)))
    return v; /* per tensor: axis unused */
  if (x->rank < 0) return dc_fail(b, ST_ERR_UNSUPPORTED, "input '%s' needs a known rank at import", x->name);
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis >= x->rank)
    return dc_fail(b, ST_ERR_INVALID, "attribute 'axis' is out of range for rank %d", x->rank);
  if (block == 0) {
    if (v->rank != 1)
      return dc_fail(b, ST_ERR_INVALID, "%s '%s' has rank %d; per-axis parameters are 1-D", what, v->name,
                     v->rank);
    if (x->dims[axis] >= 0 && v->dims[0] != x->dims[axis])
      return dc_fail(b, ST_ERR_INVALID,
                     "%s '%s' has %" PRId64 " elements, but axis %" PRId64 " of '%s' has %" PRId64
                     " (mismatched per-axis parameters)",
                     what, v->name, v->dims[0], axis, x->name, x->dims[axis]);
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
    return dc_fail(b, ST_ERR_INVALID, "%s '%s' has rank %d; blocked parameters have the input's rank %d",
                   what, v->name, v->rank, x->rank);
  int64_t *idx = arena_array(&b->g->arena, (size_t)(d ? d : 1), sizeof *idx);
  if (!idx) return dc_fail(b, ST_ERR_NOMEM, "out of memory");
  for (int64_t i = 0; i < d; i++)
    idx[i] = i / block;
  return dc_gather(b, v, dc_ints(b, (int)d, idx), axis);
}

/* A constant scale must be finite and nonzero in every element. */
static void check_scale(dc *b, const ir_value *s, const char *what) {
  if (b->st || !s || !s->data) return;
  int64_t n = ir_value_elements(s);
  for (int64_t i = 0; i < n; i++) {
    double v = elem_get(s->data, s->dtype, i);
    if (v == 0 || !isfinite(v)) {
      dc_fail(b, ST_ERR_INVALID, "%s '%s'[%" PRId64 "] = %g: a scale must be finite and nonzero", what,
              s->name, i, v);
      return;
    }
  }
}

/* A zero point has the quantized values' type; an int32 one is 0. */
static void check_zero_point(dc *b, const ir_value *zp, dtype want, const char *what) {
  if (b->st || !zp) return;
  if (zp->dtype != want) {
    dc_fail(b, ST_ERR_INVALID, "%s '%s' has type %s, the quantized values %s", what, zp->name,
            onnx_dtype_name(zp->dtype), onnx_dtype_name(want));
    return;
  }
  if (want != DT_INT32 || !zp->data) return;
  int64_t n = ir_value_elements(zp);
  for (int64_t i = 0; i < n; i++)
    if (elem_get_int(zp->data, zp->dtype, i) != 0) {
      dc_fail(b, ST_ERR_INVALID, "%s '%s'[%" PRId64 "] = %" PRId64 " is out of range: int32 has zero point 0",
              what, zp->name, i, elem_get_int(zp->data, zp->dtype, i));
      return;
    }
}

/* One QuantizeLinear or DequantizeLinear node: x, the scale and the zero
 * point shaped against x, attribute to. */
static ir_value *qdq(dc *b, ir_op op, ir_value *x, ir_value *s, ir_value *zp, dtype to, int whole) {
  if (b->st) return NULL;
  ir_value *in[3] = {x, s, zp};
  ir_node *n = whole ? dc_node_whole(b, op, zp ? 3 : 2, in) : dc_node(b, op, zp ? 3 : 2, in);
  if (!n) return NULL;
  dc_set_int(b, n, "to", to);
  return dc_val(b, n);
}

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
  check_scale(&b, s, "y_scale");
  ir_value *sa = along_axis(&b, s, x, axis, block, "y_scale");
  ir_value *za = along_axis(&b, zp, x, axis, block, "y_zero_point");
  dc_output(&b, 0, qdq(&b, IR_OP_QUANTIZE, x, sa, za, to, 1));
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
  dtype to = want ? (dtype)want : st;
  if (!float_type(st) || !float_type(to))
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "x_scale / output type %s / %s; float32 and float16 are supported", onnx_dtype_name(st),
                     onnx_dtype_name(to));
  check_scale(&b, s, "x_scale");
  check_zero_point(&b, zp, xt, "x_zero_point");
  ir_value *sa = along_axis(&b, s, x, axis, block, "x_scale");
  ir_value *za = along_axis(&b, zp, x, axis, block, "x_zero_point");
  dc_output(&b, 0, qdq(&b, IR_OP_DEQUANTIZE, x, sa, za, to, 1));
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
  dc_output(&b, 0, qdq(&b, IR_OP_QUANTIZE, x, scale, zp, DT_UINT8, 0));
  dc_output(&b, 1, scale);
  dc_output(&b, 2, zp);
  return dc_end(&b);
}
