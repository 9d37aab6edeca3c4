/* onnx_decomp_quant.c - QuantizeLinear and DequantizeLinear as the IR ops of
 * the same names (ir/ops.def), and the quantized ops built from them and
 * from the float ops (onnx_decomp.h).
 *
 *   QuantizeLinear(x, s, [zp])    one QuantizeLinear node, attr to = the output type
 *   DequantizeLinear(x, s, [zp])  one DequantizeLinear node, attr to = the float type
 *   DynamicQuantizeLinear(x)      one DynQuant: s = (max(0, max x) - min(0, min x)) / 255,
 *                                 zp = saturate(round(0 - min(0, min x) / s)),
 *                                 y = QuantizeLinear(x, s, zp) in uint8
 *   QLinearConv, QLinearMatMul    QuantizeLinear(Conv|MatMul(DequantizeLinear(x),
 *                                 DequantizeLinear(w)[, DequantizeLinear(B, x_scale *
 *                                 w_scale)]), y_scale, y_zero_point): the QDQ form
 *                                 of a QDQ export, so both formats meet one int8 path
 *                                 (onnx_decomp_qms.c builds ONNX Runtime's QLinear*
 *                                 contrib ops the same way)
 *   ConvInteger, MatMulInteger    Cast(Conv|MatMul(Cast(x) - x_zp, Cast(w) - w_zp),
 *                                 int32): the integer sums in float32, the reduction
 *                                 split into chunks whose partial sums stay below
 *                                 2^24 (exact), the chunks added in int32
 * The nodes of those four and of DynamicQuantizeLinear carry precision = "fp32"
 * (ir/ops.def): their results are
 * integers that fp16 arithmetic would change, so they compute in float32
 * under every precision mode (until the int8 tasks take them).
 *
 * Scale and zero point are per tensor (one element), per axis (1-D along
 * attribute axis, reshaped to [D, 1, ..] so that they broadcast against x,
 * the IR contract) or blocked (opset 21: x's rank, block_size consecutive
 * elements along axis sharing one, expanded by a Gather of i / block_size).
 * They may be run-time inputs. The integer types are those of the NPU's set:
 * int8, uint8, int16, uint16 and int32 (DequantizeLinear's input only).
 *
 * The storage types (common/types.h) compute in their working types, with a
 * Cast (a Convert) at each end:
 *   int4, uint4, int2, uint2  QuantizeLinear into int8 / uint8, clipped to
 *                             the narrow range (saturation is monotonic, so
 *                             this is saturate into it), then converted;
 *                             DequantizeLinear of the widened x and zp;
 *   float8, float4            QuantizeLinear is x / scale + zp in f32
 *                             converted with `saturate` (float4 always
 *                             saturates; no rounding to an integer);
 *                             DequantizeLinear (x - zp) * scale in f32, x and
 *                             zp widened, then the output type.
 * Those f32 nodes carry precision = "fp32".
 *
 * Malformed parameters are refused here, naming the node and the field:
 * a constant scale with an element that is 0, infinite or NaN; a zero point
 * of another type than the quantized values, or a nonzero one for int32; a
 * per-axis parameter whose length is not the axis's; a per-tensor one
 * (QLinear*'s x, y) with more than one element.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/elem.h"
#include "common/om_tasks_cube.h"
#include "common/quant.h"
#include "frontend/onnx_decomp.h"
#include "lower/qconv_weights.h"

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

/* A run-time scale or zero point is computed in f32 in every precision
 * mode, as ONNX Runtime computes it: an fp16 scale moves every value it
 * divides across int8 rounding boundaries (test_dynamicquantizelinear_expanded
 * in force_fp16: one element of six off by one). The nodes marked are those
 * of the parameter's own computation: its producer and, back from it, every
 * producer of a value no larger than the parameter (the min, max and range
 * arithmetic of a dynamic quantization, down to the reductions that read x);
 * the larger values those reductions read (x itself) are not. */
static int f32_already(const ir_node *n) { return !strcmp(ir_attr_string(n, "precision", ""), "fp32"); }

static void params_in_f32(dc *b, const ir_value *param) {
  if (b->st || !param || param->data || !param->producer || f32_already(param->producer)) return;
  const int64_t most = ir_value_elements(param);
  ir_node **todo = arena_array(&b->g->arena, (size_t)b->g->nnodes, sizeof *todo);
  if (!todo) {
    dc_fail(b, ST_ERR_NOMEM, "out of memory");
    return;
  }
  int n = 0; /* each node is pushed once: marked as it is pushed */
  dc_set_string(b, todo[n++] = param->producer, "precision", "fp32");
  while (n > 0 && !b->st) {
    const ir_node *p = todo[--n];
    for (int j = 0; j < p->nin; j++) {
      const ir_value *v = p->in[j];
      int64_t e = v ? ir_value_elements(v) : -1;
      if (!v || v->data || !v->producer || e < 0 || e > most || f32_already(v->producer)) continue;
      dc_set_string(b, todo[n++] = v->producer, "precision", "fp32");
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

/* The storage-type QuantizeLinear (top of the file): x, sa, za shaped. */
static ir_value *quantize_storage(dc *b, ir_value *x, ir_value *sa, ir_value *za, dtype to) {
  int wt = dtype_working(to);
  if (b->st) return NULL;
  if (wt != DT_FLOAT32) { /* the sub-byte integers */
    int bits = dtype_bits(to), sgn = wt == DT_INT8;
    ir_value *q = qdq(b, IR_OP_QUANTIZE, x, sa, za, (dtype)wt, 0);
    double lo = sgn ? -ldexp(1, bits - 1) : 0, hi = sgn ? ldexp(1, bits - 1) - 1 : ldexp(1, bits) - 1;
    return dc_cast(b, dc_clip(b, q, lo, hi), to);
  }
  int first = b->g->nnodes;
  ir_value *y = dc_op2(b, IR_OP_DIV, dc_cast(b, x, DT_FLOAT32), dc_cast(b, sa, DT_FLOAT32));
  if (za) y = dc_op2(b, IR_OP_ADD, y, za);
  for (int i = first; !b->st && i < b->g->nnodes; i++)
    dc_set_string(b, b->g->nodes[i], "precision", "fp32");
  if (b->st) return NULL;
  ir_node *n = dc_node(b, IR_OP_CAST, 1, &y);
  dc_set_int(b, n, "to", to);
  dc_set_int(b, n, "saturate", dc_attr_int(b, "saturate", 1));
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
  if (!quant_type(to) && (!dtype_is_storage(to) || to == DT_BFLOAT16 || to == DT_FLOAT8E8M0))
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "output type %s is not supported (int8, uint8, int16, uint16, the float8s but e8m0, "
                     "float4e2m1, int4, uint4, int2, uint2 are)",
                     onnx_dtype_name(to));
  if (prec != 0 && prec != xt && prec != DT_FLOAT32)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "attribute 'precision' = %" PRId64 " (float32 or x's type)",
                     prec);
  check_scale(&b, s, "y_scale");
  params_in_f32(&b, s);
  params_in_f32(&b, zp);
  ir_value *sa = along_axis(&b, s, x, axis, block, "y_scale");
  if (zp && dtype_is_storage(to)) { /* widened before it is reshaped */
    zp = dc_cast(&b, zp, (dtype)dtype_working(to));
    dc_infer(&b);
  }
  ir_value *za = along_axis(&b, zp, x, axis, block, "y_zero_point");
  dc_output(&b, 0,
            dtype_is_storage(to) ? quantize_storage(&b, x, sa, za, to)
                                 : qdq(&b, IR_OP_QUANTIZE, x, sa, za, to, 1));
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
  dtype xs = xt; /* a storage type computes in its working type (top of the file) */
  if (dtype_is_storage(xt) && xt != DT_BFLOAT16 && xt != DT_FLOAT8E8M0) {
    if (zp && zp->dtype != xt)
      return dc_refuse(&b, ST_ERR_INVALID, "x_zero_point '%s' has type %s, the quantized values %s", zp->name,
                       onnx_dtype_name(zp->dtype), onnx_dtype_name(xt));
    xt = (dtype)dtype_working(xt);
    x = dc_cast(&b, x, xt);
    if (zp) zp = dc_cast(&b, zp, xt);
    dc_infer(&b);
  }
  if (xt == DT_FLOAT32 && xs != DT_FLOAT32) { /* float8, float4: (x - zp) * scale in f32 */
    dtype to = want ? (dtype)want : st;
    if (!float_type(st) || !float_type(to))
      return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                       "x_scale / output type %s / %s; float32 and float16 are supported",
                       onnx_dtype_name(st), onnx_dtype_name(to));
    check_scale(&b, s, "x_scale");
    ir_value *sa = along_axis(&b, s, x, axis, block, "x_scale");
    ir_value *za = along_axis(&b, zp, x, axis, block, "x_zero_point");
    int first = b.g->nnodes;
    ir_value *y = za ? dc_op2(&b, IR_OP_SUB, x, za) : x;
    y = dc_op2(&b, IR_OP_MUL, y, dc_cast(&b, sa, DT_FLOAT32));
    for (int i = first; !b.st && i < b.g->nnodes; i++)
      dc_set_string(&b, b.g->nodes[i], "precision", "fp32");
    dc_output(&b, 0, dc_cast(&b, y, to));
    return dc_end(&b);
  }
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
  params_in_f32(&b, s);
  params_in_f32(&b, zp);
  ir_value *sa = along_axis(&b, s, x, axis, block, "x_scale");
  ir_value *za = along_axis(&b, zp, x, axis, block, "x_zero_point");
  dc_output(&b, 0, qdq(&b, IR_OP_DEQUANTIZE, x, sa, za, to, 1));
  return dc_end(&b);
}

/* DynamicQuantizeLinear (opset 11): one DynQuant node (ops.def), uint8
 * with the scale and zero point of x's range (0 included). */
status onnx_decomp_dynamic_quantize(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *x = dc_in(&b, 0);
  if (dc_dtype(&b, x) != DT_FLOAT32 && !b.st)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "x has type %s; float32 is supported",
                     onnx_dtype_name(x->dtype));
  ir_node *n = dc_node_outs(&b, IR_OP_DYNQUANT, 1, &x, 3);
  if (n) n->out[1]->dtype = DT_FLOAT32;
  for (int k = 0; n && k < 3; k++)
    dc_output(&b, k, n->out[k]);
  dc_keep_dtype(&b); /* fp16 would move the scale, and with it the integers */
  return dc_end(&b);
}

/* --- the quantized compute ops: QLinearConv and QLinearMatMul as
 * DequantizeLinear -> Conv / MatMul -> QuantizeLinear (the QDQ form a QDQ
 * export has, which the compiler's int8 folding recognizes), ConvInteger and
 * MatMulInteger as an exact integer-valued float computation. */

static int int8_type(dtype t) { return t == DT_INT8 || t == DT_UINT8; }

/* A per-tensor parameter: one element (rank 0 or [1]; an unknown shape passes). */
static void check_per_tensor(dc *b, const ir_value *v, const char *what) {
  if (b->st || !v || v->rank <= 0) return;
  int64_t n = 1;
  for (int i = 0; i < v->rank; i++)
    n *= v->dims[i];
  if (n != 1)
    dc_fail(b, ST_ERR_INVALID, "%s '%s' must be per tensor (one element), it has %" PRId64, what, v->name, n);
}

ir_value *dc_dq_operand(dc *b, ir_value *x, ir_value *s, ir_value *zp, int64_t axis, const char *name) {
  char sname[48], zname[48];
  snprintf(sname, sizeof sname, "%s_scale", name);
  snprintf(zname, sizeof zname, "%s_zero_point", name);
  if (b->st) return NULL;
  if (!x || !s) return dc_fail(b, ST_ERR_INVALID, "input %s is required", x ? sname : name);
  dtype xt = dc_dtype(b, x), st = dc_dtype(b, s);
  if (zp) dc_dtype(b, zp);
  if (b->st) return NULL;
  if (!int8_type(xt))
    return dc_fail(b, ST_ERR_UNSUPPORTED, "input %s '%s' has type %s; int8 and uint8 are supported", name,
                   x->name, onnx_dtype_name(xt));
  if (!float_type(st))
    return dc_fail(b, ST_ERR_UNSUPPORTED, "%s '%s' has type %s; float32 and float16 are supported", sname,
                   s->name, onnx_dtype_name(st));
  check_scale(b, s, sname);
  check_zero_point(b, zp, xt, zname);
  if (axis < 0) {
    check_per_tensor(b, s, sname);
    check_per_tensor(b, zp, zname);
  }
  ir_value *sa = axis < 0 ? s : along_axis(b, s, x, axis, 0, sname);
  ir_value *za = axis < 0 ? zp : along_axis(b, zp, x, axis, 0, zname);
  return qdq(b, IR_OP_DEQUANTIZE, x, sa, za, st, 0);
}

ir_value *dc_q_result(dc *b, ir_value *y, ir_value *s, ir_value *zp, const char *name, dtype def) {
  char sname[48], zname[48];
  snprintf(sname, sizeof sname, "%s_scale", name);
  snprintf(zname, sizeof zname, "%s_zero_point", name);
  if (b->st) return NULL;
  if (!s) return dc_fail(b, ST_ERR_INVALID, "input %s is required", sname);
  dtype st = dc_dtype(b, s), to = zp ? dc_dtype(b, zp) : def;
  if (b->st) return NULL;
  if (!float_type(st))
    return dc_fail(b, ST_ERR_UNSUPPORTED, "%s '%s' has type %s; float32 and float16 are supported", sname,
                   s->name, onnx_dtype_name(st));
  if (!int8_type(to))
    return dc_fail(b, ST_ERR_INVALID, "%s '%s' has type %s; int8 or uint8", zname, zp ? zp->name : "",
                   onnx_dtype_name(to));
  check_scale(b, s, sname);
  check_per_tensor(b, s, sname);
  check_per_tensor(b, zp, zname);
  return qdq(b, IR_OP_QUANTIZE, y, s, zp, to, 0);
}

/* QLinearConv's int32 bias B as floats: DequantizeLinear with scale
 * x_scale * w_scale (one element, or one per output channel) and zero point 0. */
static ir_value *dq_bias(dc *b, ir_value *bias, ir_value *xs, ir_value *ws) {
  if (b->st || !bias) return NULL;
  if (dc_dtype(b, bias) != DT_INT32 && !b->st)
    return dc_fail(b, ST_ERR_INVALID, "B '%s' has type %s; a QLinearConv bias is int32", bias->name,
                   onnx_dtype_name(bias->dtype));
  if (bias->rank > 1)
    return dc_fail(b, ST_ERR_INVALID, "B '%s' has rank %d; a bias is 1-D", bias->name, bias->rank);
  return qdq(b, IR_OP_DEQUANTIZE, bias, dc_op2(b, IR_OP_MUL, xs, ws), NULL, xs ? xs->dtype : DT_FLOAT32, 0);
}

/* A Conv node over x and w (and bias) with nd's window attributes. */
static ir_value *conv(dc *b, ir_value *x, ir_value *w, ir_value *bias, const ir_value *weight) {
  if (b->st) return NULL;
  if (weight->rank != 4 && weight->rank != 5)
    return dc_fail(b, ST_ERR_UNSUPPORTED, "weight '%s' has rank %d; 2-D and 3-D convolutions are supported",
                   weight->name, weight->rank);
  ir_value *in[3] = {x, w, bias};
  ir_node *cv = dc_node(b, IR_OP_CONV, bias ? 3 : 2, in);
  if (cv) {
    status s = onnx_conv_window(b->nd, cv, weight);
    if (s) b->st = s;
  }
  return dc_val(b, cv);
}

/* QLinearConv (opset 10): x per tensor, w per tensor or per output channel. */
status onnx_decomp_qlinear_conv(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *x = dc_in(&b, 0), *xs = dc_in(&b, 1), *xz = dc_in(&b, 2), *w = dc_in(&b, 3), *ws = dc_in(&b, 4);
  ir_value *wz = dc_in(&b, 5), *ys = dc_in(&b, 6), *yz = dc_in(&b, 7), *bias = dc_in(&b, 8);
  if (!x || !xs || !w || !ws || !ys)
    return dc_refuse(&b, ST_ERR_INVALID, "inputs x, x_scale, w, w_scale and y_scale are required");
  ir_value *xd = dc_dq_operand(&b, x, xs, xz, -1, "x"), *wd = dc_dq_operand(&b, w, ws, wz, 0, "w");
  ir_value *y = conv(&b, xd, wd, dq_bias(&b, bias, xs, ws), w);
  dc_output(&b, 0, dc_q_result(&b, y, ys, yz, "y", DT_UINT8));
  dc_keep_dtype(&b);
  return dc_end(&b);
}

/* QLinearMatMul (opset 10; float16 scales 21): a per tensor or per row, b
 * per tensor or per column. */
status onnx_decomp_qlinear_matmul(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *a = dc_in(&b, 0), *as = dc_in(&b, 1), *az = dc_in(&b, 2), *bm = dc_in(&b, 3), *bs = dc_in(&b, 4);
  ir_value *bz = dc_in(&b, 5), *ys = dc_in(&b, 6), *yz = dc_in(&b, 7);
  if (!a || !as || !bm || !bs || !ys)
    return dc_refuse(&b, ST_ERR_INVALID, "inputs a, a_scale, b, b_scale and y_scale are required");
  if (a->rank < 2 || bm->rank < 2)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "a '%s' and b '%s' need known ranks >= 2 at import", a->name,
                     bm->name);
  ir_value *ad = dc_dq_operand(&b, a, as, az, a->rank - 2, "a"),
           *bd = dc_dq_operand(&b, bm, bs, bz, bm->rank - 1, "b");
  dc_output(&b, 0, dc_q_result(&b, dc_op2(&b, IR_OP_MATMUL, ad, bd), ys, yz, "y", DT_UINT8));
  dc_keep_dtype(&b);
  return dc_end(&b);
}

/* The *Integer ops compute sum_k (x_k - x_zp)(w_k - w_zp) in float32, which
 * is exact while every partial sum is an integer below 2^24 in magnitude.
 * The reduction splits into chunks along its outer unit (a matmul's K, a
 * conv's input channel: `tap` consecutive products each) for which that
 * holds: |x - x_zp| (over x's type's range) times the largest sum of
 * |w - w_zp| over one output and the chunk's units (from the constant
 * weights, else units x tap x the largest |w - w_zp|) stays within 2^24.
 * Each chunk's float32 result is cast to int32 and the chunks are added in
 * int32, so the result is exact for every K. */
enum { EXACT_LIMIT = 1 << 24, MAX_CHUNKS = 64 };

/* The largest |v - zp| over v's type's range for the zero point(s) zp
 * (constant; the widest shift for a run-time one; 0 when absent). */
static int64_t max_shift(const ir_value *zp, dtype t) {
  int32_t lo, hi;
  q_range(t, &lo, &hi);
  if (!zp || !zp->data) return zp ? (int64_t)hi - lo : (hi > -(int64_t)lo ? hi : -(int64_t)lo);
  int64_t m = 0, n = ir_value_elements(zp);
  for (int64_t i = 0; i < n; i++) {
    int64_t z = elem_get_int(zp->data, zp->dtype, i), d = z - lo > hi - z ? z - lo : hi - z;
    m = d > m ? d : m;
  }
  return m;
}

/* Splits the `units` reduction units into chunks whose sums stay exact
 * (above); end[c] is chunk c's end unit. w's elements split as w[i] ->
 * output (i / inner / k) * inner + i % inner, unit (i / inner) % k / tap,
 * with k = units * tap (a conv weight [M, C, kh, kw]: inner 1, tap kh*kw;
 * a matmul's [.., K, N]: inner N, tap 1); zp per tensor or one per output
 * % inner (per output when inner is 1). Returns the chunk count, or fails
 * naming the node when one unit alone is too wide or more than MAX_CHUNKS
 * are needed. */
static int split_reduction(dc *b, const ir_value *x, const ir_value *xz, const ir_value *w,
                           const ir_value *wz, int64_t units, int64_t tap, int64_t inner, int64_t *end) {
  if (b->st) return 0;
  int64_t xm = max_shift(xz, x->dtype), k = units * tap, chunks = 0;
  int64_t n = ir_value_elements(w), outs = n / k, nz = wz && wz->data ? ir_value_elements(wz) : 0;
  arena tmp;
  arena_init(&tmp, 0);
  /* usum[u * outs + o]: sum of |w - zp| of unit u for output o */
  int64_t *usum = NULL, *run = NULL;
  if (w->data && (!wz || wz->data)) {
    usum = arena_array(&tmp, (size_t)(n / tap ? n / tap : 1), sizeof *usum);
    run = arena_array(&tmp, (size_t)(outs ? outs : 1), sizeof *run);
    if (!usum || !run) usum = NULL;
  }
  if (usum)
    for (int64_t i = 0; i < n; i++) {
      int64_t o = i / inner / k * inner + i % inner, u = (i / inner) % k / tap;
      int64_t zi = nz > 1 ? (inner > 1 ? i % inner : o) : 0;
      int64_t d = elem_get_int(w->data, w->dtype, i) - (nz ? elem_get_int(wz->data, wz->dtype, zi) : 0);
      usum[u * outs + o] += d < 0 ? -d : d;
    }
  const int64_t wide = tap * max_shift(wz, w->dtype); /* a unit's bound without the weights */
  for (int64_t u = 0; u < units && chunks <= MAX_CHUNKS;) {
    int64_t u0 = u;
    if (usum) memset(run, 0, (size_t)(outs ? outs : 1) * sizeof *run);
    for (; u < units; u++) {
      int fits = 1;
      for (int64_t o = 0; usum && o < outs && fits; o++)
        fits = (run[o] + usum[u * outs + o]) * xm <= EXACT_LIMIT;
      if (!usum) fits = (u - u0 + 1) * wide * xm <= EXACT_LIMIT;
      if (!fits) break;
      for (int64_t o = 0; usum && o < outs; o++)
        run[o] += usum[u * outs + o];
    }
    if (u == u0) {
      arena_free(&tmp);
      dc_fail(b, ST_ERR_UNSUPPORTED,
              "the int32 result cannot be computed exactly: one input channel's %" PRId64
              " products may pass float32's exact integers (2^24)",
              tap);
      return 0;
    }
    if (chunks < MAX_CHUNKS) end[chunks] = u;
    chunks++;
  }
  arena_free(&tmp);
  if (chunks > MAX_CHUNKS) {
    dc_fail(b, ST_ERR_UNSUPPORTED,
            "the int32 result cannot be computed exactly: a sum of %" PRId64
            " products needs more than %d chunks below float32's exact integers (2^24)",
            k, MAX_CHUNKS);
    return 0;
  }
  return (int)chunks;
}

/* v - zp as exact floats (zp shaped along axis; per tensor when axis < 0). */
static ir_value *shifted(dc *b, ir_value *v, ir_value *zp, int64_t axis, const char *what) {
  ir_value *f = dc_cast(b, v, DT_FLOAT32);
  if (!zp) return f;
  ir_value *z = axis < 0 ? zp : along_axis(b, zp, v, axis, 0, what);
  return dc_op2(b, IR_OP_SUB, f, dc_cast(b, z, DT_FLOAT32));
}

/* The checks the *Integer ops share: 8-bit operands, zero points of their types. */
static void check_integer_operand(dc *b, const ir_value *v, const ir_value *zp, const char *name,
                                  const char *zname) {
  if (b->st) return;
  dtype t = dc_dtype(b, v);
  if (zp) dc_dtype(b, zp);
  if (b->st) return;
  if (!int8_type(t)) {
    dc_fail(b, ST_ERR_UNSUPPORTED, "input %s '%s' has type %s; int8 and uint8 are supported", name, v->name,
            onnx_dtype_name(t));
    return;
  }
  check_zero_point(b, zp, t, zname);
}

/* The chunks of a reduction (split_reduction) over x and w, both float32
 * along axes xa and wa: op(x chunk, w chunk) cast to int32 each, added in int32. */
static ir_value *chunked(dc *b, ir_value *(*op)(dc *, ir_value *, ir_value *, const ir_value *), ir_value *x,
                         int64_t xa, ir_value *w, int64_t wa, const ir_value *weight, int chunks,
                         const int64_t *end) {
  if (b->st) return NULL;
  if (chunks == 1) return dc_cast(b, op(b, x, w, weight), DT_INT32);
  ir_value *sum = NULL;
  for (int c = 0; c < chunks && !b->st; c++) {
    int64_t s0 = c ? end[c - 1] : 0, s1 = end[c];
    ir_value *part = dc_cast(
        b, op(b, dc_slice(b, x, 1, &s0, &s1, &xa), dc_slice(b, w, 1, &s0, &s1, &wa), weight), DT_INT32);
    sum = sum ? dc_op2(b, IR_OP_ADD, sum, part) : part;
  }
  return sum;
}

static ir_value *conv_op(dc *b, ir_value *x, ir_value *w, const ir_value *weight) {
  return conv(b, x, w, NULL, weight);
}

static ir_value *matmul_op(dc *b, ir_value *x, ir_value *w, const ir_value *weight) {
  (void)weight;
  return dc_op2(b, IR_OP_MATMUL, x, w);
}

/* ConvInteger as one int8 QConv with a run-time x zero point (ops.def):
 * u8 x with a per-tensor zero point (absent, a constant or a run-time
 * value: DynamicQuantizeLinear's), a constant 2-D W [M, C/group, KH, KW]
 * whose values less their zero point (per tensor or per output channel)
 * are all i8, explicit pads (auto_pad NOTSET or VALID), K within QCONV2D's
 * range, and the int32 result read only by a Cast to float (as ONNX
 * Runtime's quantize_dynamic writes it: passes/qmatmul.c folds that Cast
 * into the QConv, whose QCONV2D task then writes f32). The i8 weights w -
 * w_zp into *w8 (the graph's arena); 0 when it does not fit. */
static int qconv_fits(dc *b, const ir_value *x, const ir_value *w, const ir_value *xz, const ir_value *wz,
                      int8_t **w8) {
  const Onnx__NodeProto *r = onnx_sole_reader(b->nd, 0);
  int to_float = 0;
  for (size_t i = 0; r && !strcmp(r->op_type, "Cast") && i < r->n_attribute; i++)
    to_float |= !strcmp(r->attribute[i]->name, "to") && r->attribute[i]->i == 1; /* FLOAT */
  if (!to_float || x->dtype != DT_UINT8 || x->rank != 4 || !w->data || w->rank != 4 || (wz && !wz->data) ||
      !(dc_attr_string_is(b, "auto_pad", "NOTSET", "NOTSET") ||
        dc_attr_string_is(b, "auto_pad", "NOTSET", "VALID")))
    return 0;
  for (int i = 0; xz && i < xz->rank; i++)
    if (xz->dims[i] != 1) return 0;
  const int64_t n = ir_value_elements(w), m = w->dims[0], per = m > 0 ? n / m : 0,
                nz = wz ? ir_value_elements(wz) : 0, group = dc_attr_int(b, "group", 1);
  qconvw_geom gm; /* K as QCONV2D packs it (lower/qconv_weights.h) */
  if (per < 1 || (nz != 0 && nz != 1 && nz != m) || w->dims[1] * group != x->dims[1] ||
      qconvw_init(m, x->dims[1], group, w->dims[2], w->dims[3], &gm) || gm.kg * 4 > OM_QCONV_MAX_K)
    return 0;
  int8_t *q = arena_array(&b->g->arena, (size_t)n, 1);
  if (!q) return 0;
  for (int64_t i = 0; i < n; i++) {
    const int64_t v = elem_get_int(w->data, w->dtype, (size_t)i) -
                      (nz ? elem_get_int(wz->data, wz->dtype, (size_t)(nz == 1 ? 0 : i / per)) : 0);
    if (v < -128 || v > 127) return 0;
    q[i] = (int8_t)v;
  }
  *w8 = q;
  return 1;
}

/* ConvInteger (opset 10): int32 y = conv(x - x_zero_point, w - w_zero_point),
 * x's zero point per tensor, w's per tensor or per output channel. One
 * QConv when qconv_fits (passes/qmatmul.c folds the Cast -> Mul [-> Add]
 * [-> Relu | Clip] of a dynamically quantized CNN into it), else an exact
 * integer-valued float convolution in chunks (split_reduction): a
 * consumer that reads the int32 values themselves gets them exactly. */
status onnx_decomp_conv_integer(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *x = dc_in(&b, 0), *w = dc_in(&b, 1), *xz = dc_in(&b, 2), *wz = dc_in(&b, 3);
  check_integer_operand(&b, x, xz, "x", "x_zero_point");
  check_integer_operand(&b, w, wz, "w", "w_zero_point");
  check_per_tensor(&b, xz, "x_zero_point");
  if (b.st) return dc_end(&b);
  int8_t *w8;
  if (qconv_fits(&b, x, w, xz, wz, &w8)) {
    ir_value *in[3] = {x, dc_const(&b, DT_INT8, 4, w->dims, w8), xz ? xz : dc_scalar(&b, DT_UINT8, 0)};
    ir_node *qc = dc_node_whole(&b, IR_OP_QCONV, 3, in);
    if (qc && !b.st) {
      status s = onnx_conv_window(b.nd, qc, w);
      if (s) b.st = s;
    }
    dc_set_int(&b, qc, "to", DT_INT32);
    dc_set_int(&b, qc, "rt_x_zp", 1);
    dc_output(&b, 0, dc_val(&b, qc));
    return dc_end(&b);
  }
  int64_t k = 1;
  for (int i = 1; i < w->rank; i++)
    k = w->dims[i] > 0 ? k * w->dims[i] : -1;
  if (w->rank < 4 || k < 1 || w->dims[0] < 1)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "weight '%s' needs a known shape of rank 4 or 5 at import",
                     w->name);
  int64_t end[MAX_CHUNKS], tap = k / w->dims[1];
  int chunks = split_reduction(&b, x, xz, w, wz, w->dims[1], tap, 1, end);
  if (chunks > 1 && dc_attr_int(&b, "group", 1) != 1 && !b.st)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "the int32 result of a grouped convolution cannot be computed exactly: a sum of %" PRId64
                     " products may pass float32's exact integers (2^24)",
                     k);
  ir_value *y = chunked(&b, conv_op, shifted(&b, x, xz, -1, "x_zero_point"), 1,
                        shifted(&b, w, wz, 0, "w_zero_point"), 1, w, chunks, end);
  dc_output(&b, 0, y);
  dc_keep_dtype(&b);
  return dc_end(&b);
}

/* Whether MatMulInteger(a, bm, az, bz) is one int8 QMatMul (ops.def): u8 a
 * with a zero point per tensor (absent, a constant or a run-time value), a
 * constant i8 B [K, N] whose zero point is absent or all 0, K a multiple
 * of 4 up to the task's OM_QCONV_MAX_K (om_tasks_cube.h QMATMUL). */
static int qmatmul_fits(const ir_value *a, const ir_value *bm, const ir_value *az, const ir_value *bz) {
  if (a->dtype != DT_UINT8 || bm->dtype != DT_INT8 || !bm->data || bm->rank != 2 || bm->dims[0] % 4 ||
      bm->dims[0] > OM_QCONV_MAX_K || a->dims[a->rank - 1] != bm->dims[0])
    return 0;
  for (int i = 0; az && i < az->rank; i++)
    if (az->dims[i] != 1) return 0;
  if (bz && !bz->data) return 0;
  for (int64_t i = 0; bz && i < ir_value_elements(bz); i++)
    if (elem_get_int(bz->data, bz->dtype, i) != 0) return 0;
  return 1;
}

/* MatMulInteger (opset 10): int32 y = (a - a_zero_point) @ (b - b_zero_point),
 * a's zero point per tensor or per row, b's per tensor or per column. One
 * QMatMul when qmatmul_fits (passes/qmatmul.c folds the Cast -> Mul [->
 * Add] of a dynamically quantized model into it), else the float chunks
 * above. */
status onnx_decomp_matmul_integer(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *a = dc_in(&b, 0), *bm = dc_in(&b, 1), *az = dc_in(&b, 2), *bz = dc_in(&b, 3);
  check_integer_operand(&b, a, az, "A", "a_zero_point");
  check_integer_operand(&b, bm, bz, "B", "b_zero_point");
  if (b.st) return dc_end(&b);
  if (a->rank < 2 || bm->rank < 2 || bm->dims[bm->rank - 2] < 1 || bm->dims[bm->rank - 1] < 1)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "A '%s' and B '%s' need known shapes of rank >= 2 at import",
                     a->name, bm->name);
  int64_t k = bm->dims[bm->rank - 2], n = bm->dims[bm->rank - 1];
  if (qmatmul_fits(a, bm, az, bz)) {
    ir_value *in[3] = {a, bm, az ? az : dc_scalar(&b, DT_UINT8, 0)};
    dc_output(&b, 0, dc_val(&b, dc_node_whole(&b, IR_OP_QMATMUL, 3, in)));
    return dc_end(&b);
  }
  int64_t end[MAX_CHUNKS];
  int chunks = split_reduction(&b, a, az, bm, bz, k, 1, n, end);
  ir_value *y = chunked(&b, matmul_op, shifted(&b, a, az, a->rank - 2, "a_zero_point"), a->rank - 1,
                        shifted(&b, bm, bz, bm->rank - 1, "b_zero_point"), bm->rank - 2, bm, chunks, end);
  dc_output(&b, 0, y);
  dc_keep_dtype(&b);
  /* The MatMuls' operands, 8-bit values less their zero points, are exact
   * in fp16 and their sums exact in the f32 accumulator: fp16 operands,
   * f32 results (ir/ops.def, precision "f32_out"). */
  for (int i = b.first_node; !b.st && i < b.g->nnodes; i++)
    if (b.g->nodes[i]->op == IR_OP_MATMUL) dc_set_string(&b, b.g->nodes[i], "precision", "f32_out");
  return dc_end(&b);
}
