/* onnx_decomp_misc.c - small decompositions (onnx_decomp.h): Hardmax,
 * Dropout (with its mask), CenterCropPad, Swish, SwiGLU.
 *
 *   Hardmax(x, axis)   Cast(Equal(iota along axis, ArgMax(x, axis, keepdims)), x's type):
 *                      the first maximum wins, as ArgMax picks it. The iota
 *                      is Range(0, dim) from Shape(x), so it folds at compile
 *                      time. Before opset 13: on Flatten(x, axis), axis -1.
 *   Dropout(x) in inference (or ratio 0): Identity; the mask, when read, is true
 *                      everywhere (Expand of a bool true to Shape(x)).
 *   CenterCropPad(x, shape): one Pad with negative pads for crops (x's dims
 *                      must be known at import).
 *   Swish(x)           x * Sigmoid(alpha * x); SwiGLU(a, b) = Swish(a) * b.
 *   CausalConvWithState  K shifted slices of past ++ input, each times its
 *                      tap's weights, summed (below).
 *   EyeLike(x)         Cast(Equal(column - row, k)) over x's 2-D shape.
 *   Det(x)             the Leibniz formula: Gather, ReduceProd, signs, ReduceSum.
 *   ReverseSequence    GatherElements along time at t < len ? len - 1 - t : t.
 *   MaxUnpool          ScatterElements of X into zeros at the flat indices I.
 *   Col2Im             ScatterElements (add) of the columns at a tap table.
 *   DFT                MatMuls with constant cos/sin tables along the axis.
 *   STFT               frames gathered by an index table, windowed, then DFT.
 *   Hann/Hamming/BlackmanWindow(size)  a0 - a1 cos(w n) + a2 cos(2 w n) over
 *                      n = Range(0, size), w = 2 pi / (size, or size - 1 when
 *                      periodic = 0), as ONNX's function bodies; size is a
 *                      compile-time input, so the whole window folds into a
 *                      constant.
 *   MelWeightMatrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz,
 *                      upper_edge_hertz)  every input a compile-time scalar,
 *                      so the matrix is computed here as ONNX's reference
 *                      computes it (below) and becomes a constant.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "frontend/onnx_decomp.h"
#include "common/elem.h"
#include "ir/shape.h"

/* Hardmax along axis of x. */
static ir_value *hardmax(dc *b, ir_value *x, int64_t axis) {
  if (b->st) return NULL;
  if (x->rank >= 0) {
    if (axis < -x->rank || axis >= x->rank)
      return dc_fail(b, ST_ERR_INVALID, "attribute 'axis' = %" PRId64 " is out of range for rank %d", axis,
                     x->rank);
    if (axis >= 0) axis -= x->rank;
  } else if (axis >= 0) {
    return dc_fail(b, ST_ERR_UNSUPPORTED,
                   "attribute 'axis' = %" PRId64 " needs the rank of input '%s', unknown at import", axis,
                   x->name);
  }
  ir_value *am = dc_argmax(b, x, axis, 1);
  ir_value *iota =
      dc_iota(b, DT_INT64, dc_gather(b, dc_shape(b, x), dc_scalar(b, DT_INT64, (double)axis), 0));
  int64_t shape[MAX_RANK];
  int n = 0;
  shape[n++] = -1;
  for (int64_t a = axis + 1; a < 0; a++)
    shape[n++] = 1;
  iota = dc_reshape_to(b, iota, n, shape);
  return dc_cast(b, dc_op2(b, IR_OP_EQUAL, iota, am), x->dtype);
}

/* Hardmax (opset 1; 13 changed it from coerce-to-2-D to one axis). */
status onnx_decomp_hardmax(onnx_node *nd, ir_node *none) {
  dc b;
  dc_begin(&b, nd);
  ir_value *x = dc_in(&b, 0);
  dc_dtype(&b, x);
  if (nd->c->opset >= 13) {
    dc_output(&b, 0, hardmax(&b, x, dc_attr_int(&b, "axis", -1)));
  } else {
    ir_node *fl = dc_node(&b, IR_OP_FLATTEN, 1, &x);
    dc_set_int(&b, fl, "axis", dc_attr_int(&b, "axis", 1));
    dc_output(&b, 0, dc_reshape(&b, hardmax(&b, dc_val(&b, fl), -1), dc_shape(&b, x)));
  }
  return dc_end(&b);
}

/* Dropout in inference: y = x; the mask (output 1) is all true. A
 * training_mode input (opset 12) must be a false constant, or the ratio a
 * constant 0 (which drops nothing). */
status onnx_decomp_dropout(onnx_node *nd, ir_node *none) {
  dc b;
  dc_begin(&b, nd);
  if (nd->c->opset < 12 && nd->nin > 1)
    return dc_refuse(&b, ST_ERR_INVALID, "Dropout takes 1 input before opset 12, it has %d", nd->nin);
  ir_value *training = dc_in(&b, 2), *ratio = dc_in(&b, 1);
  int zero_ratio =
      ratio && ratio->data && ir_value_elements(ratio) == 1 && elem_get(ratio->data, ratio->dtype, 0) == 0;
  if (training && (!training->data || ir_value_elements(training) != 1))
    dc_fail(&b, ST_ERR_UNSUPPORTED, "input 2 '%s' (training_mode) must be a one-element constant",
            training->name);
  else if (training && elem_get(training->data, training->dtype, 0) != 0 && !zero_ratio)
    dc_fail(&b, ST_ERR_UNSUPPORTED,
            "training_mode is true with a ratio other than a constant 0; only inference is "
            "supported");
  ir_value *x = dc_in(&b, 0);
  dc_output(&b, 0, x);
  if (dc_output_used(&b, 1)) {
    dc_output(&b, 1, dc_expand(&b, dc_scalar(&b, DT_BOOL, 1), dc_shape(&b, x)));
  }
  return dc_end(&b);
}

/* CenterCropPad(input_data, shape) (opset 18), attribute axes. */
status onnx_decomp_center_crop_pad(onnx_node *nd, ir_node *none) {
  dc b;
  dc_begin(&b, nd);
  ir_value *x = dc_in(&b, 0), *shape = dc_in(&b, 1);
  int64_t axes[MAX_RANK], pads[2 * MAX_RANK] = {0};
  int rank = x->rank, count = dc_attr_ints(&b, "axes", axes, MAX_RANK);
  char why[384];
  if (rank < 0 || ir_value_elements(x) < 0)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "input '%s' needs a shape known at import%s", x->name,
                     onnx_data_origin(nd->c, x, why, sizeof why));
  if (count < 0)
    for (count = 0; count < rank; count++)
      axes[count] = count;
  if (!shape->data || (shape->dtype != DT_INT64 && shape->dtype != DT_INT32) ||
      ir_value_elements(shape) != count)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "input 1 '%s' (shape) must be a constant int32/int64 list of %d sizes", shape->name,
                     count);
  uint32_t seen = 0;
  for (int i = 0; i < count; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    int64_t want = (int64_t)elem_get(shape->data, shape->dtype, i), have;
    if (a < 0 || a >= rank || (seen >> a) & 1u)
      return dc_refuse(&b, ST_ERR_INVALID, "axes[%d] = %" PRId64 " is out of range or repeated", i, axes[i]);
    if (want < 0) return dc_refuse(&b, ST_ERR_INVALID, "shape[%d] = %" PRId64 " is negative", i, want);
    seen |= 1u << a;
    have = x->dims[a];
    int64_t diff = want - have, half = (diff < 0 ? -diff : diff) / 2; /* the smaller half goes first */
    pads[a] = diff < 0 ? -half : half;
    pads[rank + a] = diff - pads[a];
  }
  dc_output(&b, 0, dc_pad(&b, x, rank, pads, 0));
  return dc_end(&b);
}

static ir_value *swish(dc *b, ir_value *x) {
  dtype dt = dc_dtype(b, x);
  double alpha = dc_attr_float(b, "alpha", 1.0);
  ir_value *ax = alpha == 1.0 ? x : dc_op2(b, IR_OP_MUL, x, b->st ? NULL : dc_scalar(b, dt, alpha));
  return dc_op2(b, IR_OP_MUL, x, dc_op1(b, IR_OP_SIGMOID, ax));
}

/* Swish(x) (opset 24). */
status onnx_decomp_swish(onnx_node *nd, ir_node *none) {
  dc b;
  dc_begin(&b, nd);
  dc_output(&b, 0, swish(&b, dc_in(&b, 0)));
  return dc_end(&b);
}

/* SwiGLU(a, b) (opset 28) = Swish(a) * b. */
status onnx_decomp_swiglu(onnx_node *nd, ir_node *none) {
  dc b;
  dc_begin(&b, nd);
  dc_output(&b, 0, dc_op2(&b, IR_OP_MUL, swish(&b, dc_in(&b, 0)), dc_in(&b, 1)));
  return dc_end(&b);
}

/* Shrink(x) (opset 9) = x + bias where x < -lambd, x - bias where x > lambd,
 * else 0 (in x's dtype). */
status onnx_decomp_shrink(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *x = dc_in(&b, 0);
  dtype dt = dc_dtype(&b, x);
  double lambd = dc_attr_float(&b, "lambd", 0.5), bias = dc_attr_float(&b, "bias", 0.0);
  ir_value *lo = b.st ? NULL : dc_scalar(&b, dt, -lambd), *hi = b.st ? NULL : dc_scalar(&b, dt, lambd);
  ir_value *bv = b.st ? NULL : dc_scalar(&b, dt, bias), *zero = b.st ? NULL : dc_scalar(&b, dt, 0);
  ir_value *below = dc_where(&b, dc_op2(&b, IR_OP_LESS, x, lo), dc_op2(&b, IR_OP_ADD, x, bv), zero);
  dc_output(&b, 0, dc_where(&b, dc_op2(&b, IR_OP_GREATER, x, hi), dc_op2(&b, IR_OP_SUB, x, bv), below));
  return dc_end(&b);
}

/* LRN(x) (opset 1, 13) over the channels of x [N, C, D1..Dr]:
 *   y = x / (bias + alpha / size * sum over the size-wide channel window of x^2)^beta,
 * the window [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to [0, C).
 * The window sum is an average pool (count_include_pad, so the divisor is
 * always size) over x^2 with a unit dim inserted at 1: [N, 1, C, D1..Dr], a
 * window of size along C and 1 along the rest; needs x's rank (3..4, so the
 * pool has at most 3 spatial dims). */
status onnx_decomp_lrn(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *x = dc_in(&b, 0);
  dtype dt = dc_dtype(&b, x);
  int64_t size = dc_attr_int(&b, "size", 0);
  double alpha = dc_attr_float(&b, "alpha", 1e-4), beta = dc_attr_float(&b, "beta", 0.75);
  double bias = dc_attr_float(&b, "bias", 1.0);
  if (b.st) return dc_end(&b);
  if (size < 1 || size > 65535)
    return dc_refuse(&b, ST_ERR_INVALID, "attribute 'size' is %lld; expected 1..65535", (long long)size);
  if (x->rank < 3 || x->rank > 4)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "input '%s' needs a known rank of 3 or 4 (it has %s)", x->name,
                     x->rank < 0 ? "an unknown rank" : "another");
  int r = x->rank - 1; /* spatial dims of the pool: C and D1..Dr */
  int64_t k[3], st[3], dl[3], pads[6], axis = 1;
  for (int i = 0; i < r; i++)
    k[i] = st[i] = dl[i] = 1, pads[i] = pads[r + i] = 0;
  k[0] = size;
  pads[0] = (size - 1) / 2;
  pads[r] = size - 1 - pads[0];
  ir_value *sq = dc_unsqueeze(&b, dc_op2(&b, IR_OP_MUL, x, x), 1, &axis);
  ir_node *pool = dc_node(&b, IR_OP_AVGPOOL, 1, &sq);
  dc_set_ints(&b, pool, "kernel_shape", r, k);
  dc_set_ints(&b, pool, "strides", r, st);
  dc_set_ints(&b, pool, "dilations", r, dl);
  dc_set_ints(&b, pool, "pads", 2 * r, pads);
  dc_set_int(&b, pool, "ceil_mode", 0);
  dc_set_int(&b, pool, "count_include_pad", 1);
  ir_value *mean = dc_squeeze(&b, dc_val(&b, pool), 1, &axis);
  ir_value *den =
      dc_op2(&b, IR_OP_ADD, dc_op2(&b, IR_OP_MUL, mean, dc_scalar(&b, dt, alpha)), dc_scalar(&b, dt, bias));
  den = dc_op2(&b, IR_OP_POW, den, dc_scalar(&b, dt, beta));
  dc_output(&b, 0, dc_op2(&b, IR_OP_DIV, x, den));
  return dc_end(&b);
}

/* HannWindow, HammingWindow, BlackmanWindow (opset 17): the ONNX op type picks the coefficients. */
status onnx_decomp_window(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  const char *op = nd->np->op_type;
  double a0 = 0.5, a1 = 0.5, a2 = 0; /* Hann */
  if (!strcmp(op, "HammingWindow")) a0 = 25.0 / 46.0, a1 = 21.0 / 46.0;
  if (!strcmp(op, "BlackmanWindow")) a0 = 0.42, a1 = 0.5, a2 = 0.08;
  double size = 0;
  status in = onnx_scalar_input(nd, 0, "size", &size); /* its message is recorded */
  if (in) return in;
  if (size < 1 || size > (1 << 24) || size != floor(size))
    return dc_refuse(&b, ST_ERR_INVALID, "input 0 (size) is %g; expected an integer 1..%d", size, 1 << 24);
  int64_t periodic = dc_attr_int(&b, "periodic", 1), to = dc_attr_int(&b, "output_datatype", DT_FLOAT32);
  if (periodic != 0 && periodic != 1)
    return dc_refuse(&b, ST_ERR_INVALID, "attribute 'periodic' = %" PRId64 " must be 0 or 1", periodic);
  if (to != DT_FLOAT32 && to != DT_FLOAT16 && to != DT_INT32 && to != DT_INT64 && to != DT_INT8 &&
      to != DT_UINT8)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "attribute 'output_datatype' = %" PRId64 " (%s) is not supported", to,
                     onnx_dtype_name((dtype)to));
  double den = periodic ? size : size - 1;
  ir_value *n = dc_iota(&b, DT_FLOAT32, dc_scalar(&b, DT_FLOAT32, size));
  /* size 1 symmetric: ONNX divides by zero too; the single sample is then a0 - a1 + a2 (n = 0, cos 0 = 1) */
  ir_value *wn = dc_op2(&b, IR_OP_MUL, n, dc_scalar(&b, DT_FLOAT32, den > 0 ? 2 * M_PI / den : 0));
  ir_value *y = dc_op2(&b, IR_OP_SUB, dc_scalar(&b, DT_FLOAT32, a0),
                       dc_op2(&b, IR_OP_MUL, dc_scalar(&b, DT_FLOAT32, a1), dc_op1(&b, IR_OP_COS, wn)));
  if (a2 != 0) {
    ir_value *c2 = dc_op1(&b, IR_OP_COS, dc_op2(&b, IR_OP_MUL, wn, dc_scalar(&b, DT_FLOAT32, 2)));
    y = dc_op2(&b, IR_OP_ADD, y, dc_op2(&b, IR_OP_MUL, dc_scalar(&b, DT_FLOAT32, a2), c2));
  }
  dc_output(&b, 0, dc_cast(&b, y, (dtype)to));
  return dc_end(&b);
}

/* numpy's floor division of doubles (a // b): the quotient from fmod,
 * rounded to the nearest integer when within 0.5 of it. */
static double np_floordiv(double a, double b) {
  double mod = fmod(a, b), div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
  if (div == 0) return copysign(0.0, a / b);
  double f = floor(div);
  return div - f > 0.5 ? f + 1 : f;
}

/* ONNX's mel scale, 2595 log10(1 + hz / 700), in the edges' dtype: f32
 * edges compute in f32 as numpy does on float32 scalars. */
static double hz_to_mel(double hz, int f32) {
  return f32 ? (double)(2595.0f * log10f(1.0f + (float)hz / 700.0f)) : 2595.0 * log10(1.0 + hz / 700.0);
}

/* MelWeightMatrix (opset 17), as ONNX's reference: num_mel_bins + 2 band
 * edges k = 0 .. num_mel_bins + 1 equally spaced on the mel scale by
 * (mel(upper) - mel(lower)) / (num_mel_bins + 2) from mel(lower) (the
 * step in the edges' dtype, the rest in f64), each mapped back to hertz
 * (700 (10^(mel / 2595) - 1)) and to the bin (dft_length + 1) hz //
 * sample_rate, truncated to an integer; band i rises linearly from bin
 * e[i] (0) to e[i+1] (1) and falls to e[i+2] (0, exclusive), a band with
 * e[i] = e[i+1] being 1 at that bin; later writes win, as the reference's
 * loops. Output [dft_length / 2 + 1, num_mel_bins] in output_datatype. */
status onnx_decomp_mel_weight_matrix(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  static const char *const what[5] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz",
                                      "upper_edge_hertz"};
  double v[5];
  for (int i = 0; i < 5; i++) {
    status in = onnx_scalar_input(nd, i, what[i], &v[i]); /* its message is recorded */
    if (in) return in;
  }
  int edge_dt = nd->in[3]->dtype, f32 = edge_dt == DT_FLOAT32;
  if ((!f32 && edge_dt != DT_DOUBLE) || (int)nd->in[4]->dtype != edge_dt)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "lower_edge_hertz and upper_edge_hertz must both be f32 or f64");
  for (int i = 0; i < 3; i++)
    if (v[i] != floor(v[i]) || v[i] < 1 || v[i] > (1 << 24))
      return dc_refuse(&b, ST_ERR_INVALID, "input %d (%s) is %g; expected an integer 1..%d", i, what[i], v[i],
                       1 << 24);
  int64_t mels = (int64_t)v[0], dft = (int64_t)v[1], rows = dft / 2 + 1,
          to = dc_attr_int(&b, "output_datatype", DT_FLOAT32);
  if (rows * mels > (1 << 24))
    return dc_refuse(&b, ST_ERR_LIMIT, "the matrix [%" PRId64 ", %" PRId64 "] has more than %d elements",
                     rows, mels, 1 << 24);
  if (!dtype_size((int)to) || to == DT_BOOL)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "attribute 'output_datatype' = %" PRId64 " (%s) is not supported", to,
                     onnx_dtype_name((dtype)to));
  double low = hz_to_mel(v[3], f32), high = hz_to_mel(v[4], f32), step = (high - low) / (double)(mels + 2);
  if (f32) step = (double)(((float)high - (float)low) / (float)(mels + 2));
  int64_t *edge = arena_array(&b.g->arena, (size_t)mels + 2, sizeof *edge);
  double *m = arena_array(&b.g->arena, (size_t)(rows * mels), sizeof *m);
  if (!edge || !m) return dc_refuse(&b, ST_ERR_NOMEM, "out of memory");
  for (int64_t k = 0; k < mels + 2; k++) {
    double hz = 700 * (pow(10, ((double)k * step + low) / 2595) - 1);
    double bin = np_floordiv((double)(dft + 1) * hz, v[2]);
    if (!(bin >= 0 && bin < (double)rows))
      return dc_refuse(&b, ST_ERR_INVALID,
                       "band edge %" PRId64 " (%g Hz) falls on bin %g, outside the %" PRId64
                       " bins of a %" PRId64 "-point DFT",
                       k, hz, bin, rows, dft);
    edge[k] = (int64_t)bin;
  }
  memset(m, 0, (size_t)(rows * mels) * sizeof *m);
  for (int64_t i = 0; i < mels; i++) {
    int64_t lo = edge[i], mid = edge[i + 1], hi = edge[i + 2];
    if (mid == lo) m[mid * mels + i] = 1;
    for (int64_t j = lo; mid != lo && j <= mid; j++)
      m[j * mels + i] = (double)(j - lo) / (double)(mid - lo);
    for (int64_t j = mid; j < hi; j++)
      m[j * mels + i] = (double)(hi - j) / (double)(hi - mid);
  }
  int64_t dims[2] = {rows, mels};
  dc_output(&b, 0, dc_cast(&b, dc_const(&b, DT_DOUBLE, 2, dims, m), (dtype)to));
  return dc_end(&b);
}

/* CausalConvWithState(input [B, C, L], weight [C, 1, K], [bias [C]],
 * [past_state [B, C, K-1]]) (opset 27) -> output [B, C, L], present_state:
 * seq = past_state (zeros when absent: a left Pad) ++ input along the time
 * axis, output[t] = act(bias + sum_k weight[:, 0, k] * seq[t + k]) with act
 * none or SiLU ("silu" / "swish"), computed in f32 (f16 data is rounded once,
 * at the end), present_state = the last K-1 of seq. */
status onnx_decomp_causal_conv(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *x = dc_in(&b, 0), *w = dc_in(&b, 1), *bias = dc_in(&b, 2), *past = dc_in(&b, 3);
  dc_dtype(&b, x);
  char act[16];
  onnx_attr_string(nd, "activation", "none", act, sizeof act);
  const int silu = !strcmp(act, "silu") || !strcmp(act, "swish");
  if (b.st) return dc_end(&b);
  if (!silu && strcmp(act, "none"))
    return dc_refuse(&b, ST_ERR_INVALID, "attribute 'activation' = '%s' (none, silu or swish)", act);
  if (x->rank != 3 || x->dims[2] < 0 || w->rank != 3 || w->dims[1] != 1 || w->dims[2] < 1 ||
      w->dims[2] > 4096)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "input [B, C, L] and weight [C, 1, K] need known shapes at import (K <= 4096)");
  const int64_t L = x->dims[2], K = w->dims[2];
  ir_value *seq = x;
  if (past) {
    ir_value *in[2] = {past, x};
    seq = dc_concat(&b, 2, 2, in);
  } else if (K > 1) {
    seq = dc_pad(&b, x, 3, (const int64_t[]){0, 0, K - 1, 0, 0, 0}, 0);
  }
  static const int64_t time_axis = 2, col[2] = {-1, 1};
  /* the sum of products in f32 for f16 data, rounded once at the end */
  const dtype xt = x->dtype;
  ir_value *seqf = dc_cast(&b, seq, DT_FLOAT32);
  w = dc_cast(&b, w, DT_FLOAT32);
  ir_value *y = NULL;
  for (int64_t k = 0; k < K && !b.st; k++) {
    const int64_t k1 = k + 1, kl = k + L; /* the weight's tap k; seq[k, k + L) */
    ir_value *wk = dc_reshape_to(&b, dc_slice(&b, w, 1, &k, &k1, &time_axis), 2, col); /* [C, 1] */
    ir_value *t = dc_op2(&b, IR_OP_MUL, dc_slice(&b, seqf, 1, &k, &kl, &time_axis), wk);
    y = y ? dc_op2(&b, IR_OP_ADD, y, t) : t;
  }
  if (bias) y = dc_op2(&b, IR_OP_ADD, y, dc_reshape_to(&b, dc_cast(&b, bias, DT_FLOAT32), 2, col));
  if (silu) y = dc_op2(&b, IR_OP_MUL, y, dc_op1(&b, IR_OP_SIGMOID, y));
  dc_output(&b, 0, dc_cast(&b, y, xt));
  if (dc_output_used(&b, 1)) {
    const int64_t s0 = L, s1 = L + K - 1;
    dc_output(&b, 1, dc_slice(&b, seq, 1, &s0, &s1, &time_axis));
  }
  return dc_end(&b);
}

/* EyeLike(input [H, W]) (opset 9): ones where column - row = k, in attribute
 * dtype's type (default input's); only the input's shape is read, so the
 * result folds into a constant. */
status onnx_decomp_eye_like(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *x = dc_in(&b, 0);
  dtype xt = dc_dtype(&b, x);
  const int64_t k = dc_attr_int(&b, "k", 0), want = dc_attr_int(&b, "dtype", xt);
  if (b.st) return dc_end(&b);
  if (x->rank != 2 || x->dims[0] < 0 || x->dims[1] < 0)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "input '%s' needs a known 2-D shape at import", x->name);
  if (!dtype_size((int)want)) /* every numeric dtype and bool: the result folds to a constant */
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "attribute 'dtype' = %" PRId64 " (%s) is not supported", want,
                     onnx_dtype_name((dtype)want));
  static const int64_t column[2] = {-1, 1};
  ir_value *rows =
      dc_reshape_to(&b, dc_iota(&b, DT_INT64, dc_scalar(&b, DT_INT64, (double)x->dims[0])), 2, column);
  ir_value *cols = dc_iota(&b, DT_INT64, dc_scalar(&b, DT_INT64, (double)x->dims[1]));
  ir_value *diag =
      dc_op2(&b, IR_OP_EQUAL, dc_op2(&b, IR_OP_SUB, cols, rows), dc_scalar(&b, DT_INT64, (double)k));
  dc_output(&b, 0, dc_cast(&b, diag, (dtype)want));
  return dc_end(&b);
}

/* Det(X [..., n, n]) (opset 11): the Leibniz formula, the sum over the n!
 * permutations p of sign(p) * prod_i X[i][p(i)]: X flattened to [..., n*n],
 * a Gather of the n! x n flat indices i*n + p(i), ReduceProd over the last
 * axis, times the signs, ReduceSum. No pivoting and no division; n! * n
 * products, so n is bounded (DET_MAX_N). */
enum { DET_MAX_N = 5, DET_MAX_PERMS = 120 };

status onnx_decomp_det(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *x = dc_in(&b, 0);
  dtype dt = dc_dtype(&b, x);
  if (b.st) return dc_end(&b);
  int r = x->rank;
  if (r < 2 || ir_value_elements(x) < 0)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "input '%s' needs a known shape of rank >= 2 at import",
                     x->name);
  const int64_t n = x->dims[r - 1];
  if (x->dims[r - 2] != n)
    return dc_refuse(&b, ST_ERR_INVALID, "input '%s' is not square: %" PRId64 " x %" PRId64, x->name,
                     x->dims[r - 2], n);
  if (n < 1 || n > DET_MAX_N)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "%" PRId64 " x %" PRId64 " matrices: only 1 to %d rows are supported", n, n, DET_MAX_N);
  /* the permutations in lexicographic order, each with its sign */
  int64_t idx[DET_MAX_PERMS * DET_MAX_N], perm[DET_MAX_N];
  double signs[DET_MAX_PERMS]; /* storage for count values of x's dtype */
  int count = 0;
  for (int i = 0; i < n; i++)
    perm[i] = i;
  for (;;) {
    int inversions = 0;
    for (int i = 0; i < n; i++) {
      idx[count * n + i] = i * n + perm[i];
      for (int j = i + 1; j < n; j++)
        inversions += perm[j] < perm[i];
    }
    elem_put(signs, dt, (size_t)count, inversions % 2 ? -1.0 : 1.0);
    count++;
    int i = (int)n - 2; /* next permutation */
    while (i >= 0 && perm[i] > perm[i + 1])
      i--;
    if (i < 0) break;
    int j = (int)n - 1;
    while (perm[j] < perm[i])
      j--;
    int64_t t = perm[i];
    perm[i] = perm[j], perm[j] = t;
    for (int lo = i + 1, hi = (int)n - 1; lo < hi; lo++, hi--)
      t = perm[lo], perm[lo] = perm[hi], perm[hi] = t;
  }
  int64_t flat[MAX_RANK];
  memcpy(flat, x->dims, (size_t)(r - 2) * sizeof *flat);
  flat[r - 2] = n * n;
  const int64_t last = -1;
  ir_value *xf = dc_reshape_to(&b, x, r - 1, flat);
  ir_value *terms = dc_gather(&b, xf, dc_const(&b, DT_INT64, 2, (int64_t[]){count, n}, idx), r - 2);
  ir_value *prods = dc_reduce(&b, "prod", terms, 1, &last, 0);
  ir_value *signed_prods = dc_op2(&b, IR_OP_MUL, prods, dc_const(&b, dt, 1, (int64_t[]){count}, signs));
  dc_output(&b, 0, dc_reduce(&b, "sum", signed_prods, 1, &last, 0));
  return dc_end(&b);
}

/* ReverseSequence(input, sequence_lens [B]) (opset 10): along time_axis, the
 * first sequence_lens[b] steps of batch entry b reversed, the rest kept:
 * GatherElements at t < len ? len - 1 - t : t, an index built from a Range
 * over time and the run-time lengths, expanded to the input's (known) shape. */
status onnx_decomp_reverse_sequence(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *x = dc_in(&b, 0), *lens = dc_in(&b, 1);
  dc_dtype(&b, x);
  dc_dtype(&b, lens);
  const int64_t ta = dc_attr_int(&b, "time_axis", 0), ba = dc_attr_int(&b, "batch_axis", 1);
  if (b.st) return dc_end(&b);
  if (x->rank < 2 || ir_value_elements(x) < 0)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "input '%s' needs a known shape of rank >= 2 at import",
                     x->name);
  if (!((ta == 0 && ba == 1) || (ta == 1 && ba == 0)))
    return dc_refuse(&b, ST_ERR_INVALID,
                     "time_axis %" PRId64 " and batch_axis %" PRId64 " must be 0 and 1, or 1 "
                     "and 0",
                     ta, ba);
  const int64_t T = x->dims[ta];
  ir_value *t = dc_iota(&b, DT_INT64, dc_scalar(&b, DT_INT64, (double)T)), *len = dc_cast(&b, lens, DT_INT64);
  /* t and len laid out along their axes: [T, 1] and [1, B] (time first), or [1, T] and [B, 1] */
  const int64_t tcol[2] = {-1, 1}, trow[2] = {1, -1};
  t = dc_reshape_to(&b, t, 2, ta == 0 ? tcol : trow);
  len = dc_reshape_to(&b, len, 2, ta == 0 ? trow : tcol);
  ir_value *rev = dc_op2(&b, IR_OP_SUB, dc_op2(&b, IR_OP_SUB, len, dc_scalar(&b, DT_INT64, 1)), t);
  ir_value *idx = dc_where(&b, dc_op2(&b, IR_OP_LESS, t, len), rev, t);
  int64_t shape[MAX_RANK];
  shape[0] = x->dims[0], shape[1] = x->dims[1];
  for (int i = 2; i < x->rank; i++)
    shape[i] = 1;
  idx = dc_reshape_to(&b, idx, x->rank, shape);
  idx = dc_expand(&b, idx, dc_ints(&b, x->rank, x->dims));
  dc_output(&b, 0, dc_gather_elements(&b, x, idx, ta));
  return dc_end(&b);
}

/* MaxUnpool(X [N, C, D1..Dr], I, [output_shape]) (opset 9, 11): zeros of the
 * output's shape with X's values scattered to the flat positions I holds
 * (those MaxPool's Indices gives): ScatterElements on the flattened tensors,
 * whose shape is, per spatial dim, (D - 1) * stride + kernel - pad_begin -
 * pad_end. A larger output_shape (a compile-time input) pads that with zeros
 * at the end (what ONNX's node test expects). */
status onnx_decomp_max_unpool(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *x = dc_in(&b, 0), *ind = dc_in(&b, 1);
  dtype xt = dc_dtype(&b, x);
  dc_dtype(&b, ind);
  if (b.st) return dc_end(&b);
  if (x->rank < 3 || x->rank > 2 + 3 || ir_value_elements(x) < 0)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "X needs a known shape [N, C, D1..Dr], r = 1..3, at import");
  const int r = x->rank - 2;
  int64_t out[MAX_RANK], want[MAX_RANK], ks[3], st[3] = {1, 1, 1}, pads[6] = {0};
  if (dc_attr_ints(&b, "kernel_shape", ks, 3) != r)
    return dc_refuse(&b, ST_ERR_INVALID, "attribute 'kernel_shape' must have %d values", r);
  int ns = dc_attr_ints(&b, "strides", st, 3), np = dc_attr_ints(&b, "pads", pads, 6);
  if ((ns >= 0 && ns != r) || (np >= 0 && np != 2 * r))
    return dc_refuse(&b, ST_ERR_INVALID, "attributes 'strides' / 'pads' must have %d / %d values", r, 2 * r);
  out[0] = x->dims[0], out[1] = x->dims[1];
  for (int j = 0; j < r; j++)
    out[2 + j] = (x->dims[2 + j] - 1) * st[j] + ks[j] - pads[j] - pads[r + j];
  int count = 0, padded = 0;
  if (dc_in(&b, 2)) { /* the indices still address the default shape; the rest is zero padding at the end */
    status in = onnx_ints_input(nd, 2, "output_shape", want, MAX_RANK, &count); /* its message is recorded */
    if (in) return in;
    if (count != x->rank)
      return dc_refuse(&b, ST_ERR_INVALID, "output_shape has %d values; X has rank %d", count, x->rank);
    for (int j = 0; j < x->rank; j++) {
      if (want[j] < out[j])
        return dc_refuse(&b, ST_ERR_INVALID,
                         "output_shape[%d] = %" PRId64 " is below the unpooled size %" PRId64, j, want[j],
                         out[j]);
      padded |= want[j] != out[j];
    }
  }
  int64_t total = 1;
  for (int j = 0; j < x->rank; j++) {
    if (out[j] < 1 || out[j] > (1 << 24) || total * out[j] > (1 << 28))
      return dc_refuse(&b, ST_ERR_UNSUPPORTED, "output dim %d = %" PRId64 " is outside what is supported", j,
                       out[j]);
    total *= out[j];
  }
  static const int64_t flat[1] = {-1};
  ir_value *zeros = dc_expand(&b, dc_scalar(&b, xt, 0), dc_ints(&b, 1, &total));
  ir_value *sin[3] = {zeros, dc_reshape_to(&b, dc_cast(&b, ind, DT_INT64), 1, flat),
                      dc_reshape_to(&b, x, 1, flat)};
  ir_node *sc = dc_node(&b, IR_OP_SCATTERELEMENTS, 3, sin);
  dc_set_int(&b, sc, "axis", 0);
  dc_set_string(&b, sc, "reduction", "none");
  ir_value *y = dc_reshape_to(&b, dc_val(&b, sc), x->rank, out);
  if (padded) {
    int64_t p[2 * MAX_RANK] = {0};
    for (int j = 0; j < x->rank; j++)
      p[x->rank + j] = want[j] - out[j];
    y = dc_pad(&b, y, x->rank, p, 0);
  }
  dc_output(&b, 0, y);
  return dc_end(&b);
}

/* MaxPool: the IR's own MaxPool node, under the ONNX node's name. When its
 * Indices output is read, the flat index of each window's maximum too: a
 * compile-time table T[o][k] holds, for output position o and window tap k,
 * the input position the tap reads (row-major, or column-major with
 * storage_order = 1), or P (past the last) for a tap in the padding; X
 * flattened to [N, C, P] and padded with one -inf is gathered at T, ArgMax
 * over the taps picks the first maximum (as ONNX's reference scans the
 * window), and T at that tap plus (n*C + c)*P is the index. Needs X's shape
 * at import; float types. */
status onnx_decomp_maxpool(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *x = dc_in(&b, 0);
  ir_node *mp = dc_node_whole(&b, IR_OP_MAXPOOL, 1, &x);
  status as = mp ? onnx_maxpool_attrs(nd, mp) : ST_OK; /* its message is recorded */
  if (as) return as;
  ir_value *y = dc_val(&b, mp);
  dc_output(&b, 0, y);
  if (b.st || !dc_output_used(&b, 1)) return dc_end(&b);

  dtype xt = dc_dtype(&b, x);
  if (!b.st &&
      ((xt != DT_FLOAT32 && xt != DT_FLOAT16) || x->rank < 3 || x->rank > 5 || ir_value_elements(x) < 0))
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "Indices needs X of a float type and a known shape [N, C, D1..Dr] "
                     "(r = 1..3) at import");
  if (ir_shape_try(b.g, mp, 0, nd->c->d)) return dc_refuse(&b, ST_ERR_NOMEM, "out of memory");
  if (y->rank != x->rank) return dc_refuse(&b, ST_ERR_INVALID, "the pooled shape could not be inferred");
  const int r = x->rank - 2;
  int64_t k[3], s[3], dl[3], pads[6], pb[3];
  ir_attr_ints(mp, "kernel_shape", k, 3);
  ir_attr_ints(mp, "strides", s, 3);
  ir_attr_ints(mp, "dilations", dl, 3);
  ir_attr_ints(mp, "pads", pads, 6);
  const char *ap = ir_attr_string(mp, "auto_pad", "NOTSET");
  int64_t O = 1, K = 1, P = 1;
  for (int j = 0; j < r; j++) {
    const int64_t in = x->dims[2 + j], out = y->dims[2 + j];
    int64_t total = (out - 1) * s[j] + (k[j] - 1) * dl[j] + 1 - in;
    if (total < 0) total = 0;
    pb[j] = !strcmp(ap, "SAME_UPPER") ? total / 2 : !strcmp(ap, "SAME_LOWER") ? total - total / 2 : pads[j];
    O *= out, K *= k[j], P *= in;
  }
  if (O * K > (1 << 24))
    return dc_refuse(&b, ST_ERR_LIMIT, "Indices: %" PRId64 " window taps, more than %d", O * K, 1 << 24);
  const int col_major = dc_attr_int(&b, "storage_order", 0) == 1;
  int64_t *t = arena_array(&b.g->arena, (size_t)(O * K), sizeof *t),
          *base = arena_array(&b.g->arena, (size_t)O, sizeof *base);
  if (!t || !base) return dc_refuse(&b, ST_ERR_NOMEM, "out of memory");
  for (int64_t o = 0; o < O; o++) {
    base[o] = o * K;
    for (int64_t q = 0; q < K; q++) {
      int64_t orest = o, qrest = q, pos[3], inside = 1;
      for (int j = r - 1; j >= 0; j--) {
        const int64_t oj = orest % y->dims[2 + j], qj = qrest % k[j];
        orest /= y->dims[2 + j], qrest /= k[j];
        pos[j] = oj * s[j] - pb[j] + qj * dl[j];
        inside &= pos[j] >= 0 && pos[j] < x->dims[2 + j];
      }
      int64_t flat = 0;
      if (col_major)
        for (int j = r - 1; j >= 0; j--)
          flat = flat * x->dims[2 + j] + pos[j];
      else
        for (int j = 0; j < r; j++)
          flat = flat * x->dims[2 + j] + pos[j];
      t[o * K + q] = inside ? flat : P;
    }
  }
  const int64_t n = x->dims[0], c = x->dims[1];
  ir_value *xs = dc_reshape_to(&b, x, 3, (const int64_t[]){n, c, P});
  ir_value *padded = dc_pad(&b, xs, 3, (const int64_t[]){0, 0, 0, 0, 0, 1}, -INFINITY);
  ir_value *tab = dc_const(&b, DT_INT64, 1, (const int64_t[]){O * K}, t);
  ir_value *g = dc_reshape_to(&b, dc_gather(&b, padded, tab, 2), 4, (const int64_t[]){n, c, O, K});
  ir_value *at =
      dc_op2(&b, IR_OP_ADD, dc_argmax(&b, g, 3, 0), dc_const(&b, DT_INT64, 1, &O, base)); /* [N, C, O] */
  ir_value *sp = dc_gather(&b, tab, at, 0);
  int64_t *nc = arena_array(&b.g->arena, (size_t)(n * c), sizeof *nc);
  if (!nc) return dc_refuse(&b, ST_ERR_NOMEM, "out of memory");
  for (int64_t i = 0; i < n * c; i++)
    nc[i] = i * P;
  ir_value *idx = dc_op2(&b, IR_OP_ADD, sp, dc_const(&b, DT_INT64, 3, (const int64_t[]){n, c, 1}, nc));
  int64_t ydims[5];
  for (int j = 0; j < x->rank; j++)
    ydims[j] = y->dims[j];
  dc_output(&b, 1, dc_reshape_to(&b, idx, x->rank, ydims));
  return dc_end(&b);
}

/* Col2Im(input [N, C*K, L], image_shape, block_shape) (opset 18): every
 * column of the sliding blocks added back into the image. A compile-time
 * table gives, for block element k and block position l, the image position
 * it covers (or a spill slot P past the image, for positions in the padding);
 * ScatterElements with reduction add puts input [N, C, K*L] into zeros
 * [N, C, P + 1], and the first P make the image. image_shape and
 * block_shape are compile-time inputs. */
status onnx_decomp_col2im(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *x = dc_in(&b, 0);
  dtype xt = dc_dtype(&b, x);
  int64_t img[3], blk[3], dil[3] = {1, 1, 1}, st[3] = {1, 1, 1}, pads[6] = {0};
  int r = 0, rb = 0;
  status in = b.st ? b.st : onnx_ints_input(nd, 1, "image_shape", img, 3, &r); /* its message is recorded */
  if (!in) in = onnx_ints_input(nd, 2, "block_shape", blk, 3, &rb);
  if (in) return in;
  if (r < 1 || r != rb)
    return dc_refuse(&b, ST_ERR_INVALID, "image_shape and block_shape need 1..3 values each, alike");
  int nd_ = dc_attr_ints(&b, "dilations", dil, 3), ns = dc_attr_ints(&b, "strides", st, 3);
  int np = dc_attr_ints(&b, "pads", pads, 6);
  if ((nd_ >= 0 && nd_ != r) || (ns >= 0 && ns != r) || (np >= 0 && np != 2 * r))
    return dc_refuse(&b, ST_ERR_INVALID, "dilations, strides and pads need %d, %d and %d values", r, r,
                     2 * r);
  if (x->rank != 3 || ir_value_elements(x) < 0)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "input '%s' needs a known shape [N, C*K, L] at import", x->name);
  int64_t K = 1, L = 1, P = 1, nb[3];
  for (int j = 0; j < r; j++) {
    if (img[j] < 1 || blk[j] < 1 || dil[j] < 1 || st[j] < 1 || img[j] > 65536 || blk[j] > 4096)
      return dc_refuse(&b, ST_ERR_INVALID,
                       "image_shape, block_shape, dilations and strides must be positive");
    nb[j] = (img[j] + pads[j] + pads[r + j] - (dil[j] * (blk[j] - 1) + 1)) / st[j] + 1;
    if (nb[j] < 1)
      return dc_refuse(&b, ST_ERR_INVALID, "the blocks do not fit the padded image along dim %d", j);
    K *= blk[j], L *= nb[j], P *= img[j];
  }
  if (x->dims[1] % K || x->dims[2] != L || K * L > (1 << 24))
    return dc_refuse(&b, ST_ERR_INVALID,
                     "input [N, %" PRId64 ", %" PRId64 "] must be [N, C*%" PRId64 ", %" PRId64 "]",
                     x->dims[1], x->dims[2], K, L);
  const int64_t n = x->dims[0], c = x->dims[1] / K;
  int64_t *idx = arena_array(&b.g->arena, (size_t)(K * L), sizeof *idx);
  if (!idx) return dc_refuse(&b, ST_ERR_NOMEM, "out of memory");
  for (int64_t k = 0; k < K; k++)
    for (int64_t l = 0; l < L; l++) {
      int64_t kr = k, lr = l, flat = 0, inside = 1, pos[3];
      for (int j = r - 1; j >= 0; j--) {
        const int64_t kj = kr % blk[j], lj = lr % nb[j];
        kr /= blk[j], lr /= nb[j];
        pos[j] = lj * st[j] - pads[j] + kj * dil[j];
        inside &= pos[j] >= 0 && pos[j] < img[j];
      }
      for (int j = 0; j < r; j++)
        flat = flat * img[j] + pos[j];
      idx[k * L + l] = inside ? flat : P;
    }
  ir_value *ix = dc_const(&b, DT_INT64, 3, (const int64_t[]){1, 1, K * L}, idx);
  ix = dc_expand(&b, ix, dc_ints(&b, 3, (const int64_t[]){n, c, K * L}));
  ir_value *sc_in[3] = {dc_expand(&b, dc_scalar(&b, xt, 0), dc_ints(&b, 3, (const int64_t[]){n, c, P + 1})),
                        ix, dc_reshape_to(&b, x, 3, (const int64_t[]){n, c, K * L})};
  ir_node *sc = dc_node(&b, IR_OP_SCATTERELEMENTS, 3, sc_in);
  dc_set_int(&b, sc, "axis", 2);
  dc_set_string(&b, sc, "reduction", "add");
  static const int64_t zero = 0, axis2 = 2;
  ir_value *y = dc_slice(&b, dc_val(&b, sc), 1, &zero, &P, &axis2);
  int64_t yd[5] = {n, c};
  for (int j = 0; j < r; j++)
    yd[2 + j] = img[j];
  dc_output(&b, 0, dc_reshape_to(&b, y, 2 + r, yd));
  return dc_end(&b);
}

/* The cos/sin tables of an n-point DFT: rows input points, cols outputs,
 * scaled by 1/n for the inverse; irfft counts every bin but DC and Nyquist
 * twice (the inverse of a half spectrum). */
static void dft_tables(dc *b, int64_t rows, int64_t cols, int64_t n, int inverse, int irfft, ir_value **c,
                       ir_value **s) {
  float *cm = arena_array(&b->g->arena, (size_t)(rows * cols), sizeof *cm);
  float *sm = arena_array(&b->g->arena, (size_t)(rows * cols), sizeof *sm);
  if (!cm || !sm) {
    *c = *s = dc_fail(b, ST_ERR_NOMEM, "out of memory");
    return;
  }
  for (int64_t t = 0; t < rows; t++)
    for (int64_t k = 0; k < cols; k++) {
      const double a = 2 * M_PI * (double)((t * k) % n) / (double)n;
      const double w = irfft && t != 0 && 2 * t != n ? 2.0 : 1.0, scale = inverse ? w / (double)n : 1.0;
      cm[t * cols + k] = (float)(cos(a) * scale);
      sm[t * cols + k] = (float)(sin(a) * scale);
    }
  *c = dc_const(b, DT_FLOAT32, 2, (const int64_t[]){rows, cols}, cm);
  *s = dc_const(b, DT_FLOAT32, 2, (const int64_t[]){rows, cols}, sm);
}

/* The transform of the real part xr and imaginary part xi (or NULL) along
 * their last axis by the tables: forward Xr = xr C + xi S, Xi = xi C - xr S;
 * inverse xr' = Xr C - Xi S, xi' = Xr S + Xi C. */
static void dft_apply(dc *b, ir_value *xr, ir_value *xi, ir_value *c, ir_value *s, int inverse, ir_value **re,
                      ir_value **im) {
  ir_value *rc = dc_op2(b, IR_OP_MATMUL, xr, c), *rs = dc_op2(b, IR_OP_MATMUL, xr, s);
  *re = rc;
  *im = inverse ? rs : dc_op1(b, IR_OP_NEG, rs);
  if (!xi) return;
  ir_value *ic = dc_op2(b, IR_OP_MATMUL, xi, c), *is = dc_op2(b, IR_OP_MATMUL, xi, s);
  *re = inverse ? dc_op2(b, IR_OP_SUB, *re, is) : dc_op2(b, IR_OP_ADD, *re, is);
  *im = dc_op2(b, IR_OP_ADD, *im, ic);
}

/* DFT(input [..., 1 or 2], [dft_length], [axis]) (opset 17: axis attribute,
 * default 1; opset 20: axis input, default -2): the discrete Fourier
 * transform of n = dft_length (default: the axis' length) points along the
 * signal axis (the input truncated, or zero padded, to n), as matrix products
 * with constant cos/sin tables on the signal moved to the last axis:
 *   forward  Xr = xr C + xi S,  Xi = xi C - xr S
 *   inverse  xr = (Xr C - Xi S) / n,  xi = (Xr S + Xi C) / n
 * C[t][k] = cos(2 pi k t / n), S likewise with sin; onesided keeps the
 * first n/2 + 1 outputs, or, with inverse, takes a half spectrum (n = 2 (m -
 * 1) by default) and returns the real signal [..., n, 1], every bin but DC
 * and Nyquist counted twice for its mirror image (numpy's irfft). Negative axes count on the signal without
 * its last (real/imaginary) dim, as ONNX's reference. dft_length and axis are compile-time inputs. */
status onnx_decomp_dft(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *x = dc_in(&b, 0);
  dtype xt = dc_dtype(&b, x);
  int64_t axis = nd->c->opset >= 20 ? -1 : dc_attr_int(&b, "axis", 1);
  const int inverse = dc_attr_int(&b, "inverse", 0) != 0, onesided = dc_attr_int(&b, "onesided", 0) != 0;
  double v;
  status in = ST_OK;
  if (!b.st && nd->c->opset >= 20 && dc_in(&b, 2) && !(in = onnx_scalar_input(nd, 2, "axis", &v)))
    axis = (int64_t)v;
  if (in) return in;
  if (b.st) return dc_end(&b);
  if ((xt != DT_FLOAT32 && xt != DT_FLOAT16) || x->rank < 2 || ir_value_elements(x) < 0 ||
      (x->dims[x->rank - 1] != 1 && x->dims[x->rank - 1] != 2))
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "input '%s' needs a float type and a known shape [..., 1 or 2] at import", x->name);
  const int sr = x->rank - 1; /* the signal's rank, without the real/imaginary dim */
  if (axis < 0) axis += sr;
  if (axis < 0 || axis >= sr)
    return dc_refuse(&b, ST_ERR_INVALID, "axis is out of range for the signal's rank %d", sr);
  const int64_t len = x->dims[axis];
  const int irfft = inverse && onesided; /* a half spectrum in, a real signal of n points out */
  int64_t n = irfft ? 2 * (len - 1) : len;
  if (dc_in(&b, 1)) {
    if ((in = onnx_scalar_input(nd, 1, "dft_length", &v))) return in;
    n = (int64_t)v;
  }
  if (n < 1 || n > 65536)
    return dc_refuse(&b, ST_ERR_INVALID, "dft_length %" PRId64 " is outside 1..65536", n);
  /* rows: the input points used; cols: the outputs. The inverse of a half
   * spectrum counts each bin but DC and Nyquist twice (its mirror image). */
  const int64_t half = n / 2 + 1, rows = irfft ? (len < half ? len : half) : len < n ? len : n;
  const int64_t cols = irfft ? n : onesided ? half : n;
  ir_value *C = NULL, *S = NULL;
  dft_tables(&b, rows, cols, n, inverse, irfft, &C, &S);
  /* the parts, signal axis last, the first `rows` points */
  int64_t perm[MAX_RANK], back[MAX_RANK], last = x->rank - 1;
  for (int i = 0, j = 0; i < sr; i++)
    if (i != axis) perm[j++] = i;
  perm[sr - 1] = axis;
  for (int i = 0; i < sr; i++)
    back[perm[i]] = i;
  ir_value *part[2] = {NULL, NULL};
  for (int p = 0; p < x->dims[last] && !b.st; p++) {
    const int64_t s0 = p, s1 = p + 1, t0 = 0, ax = axis;
    ir_value *v1 = dc_squeeze(&b, dc_slice(&b, dc_cast(&b, x, DT_FLOAT32), 1, &s0, &s1, &last), 1, &last);
    if (rows < len) v1 = dc_slice(&b, v1, 1, &t0, &rows, &ax);
    part[p] = dc_transpose(&b, v1, sr, perm);
  }
  ir_value *re = NULL, *im = NULL;
  dft_apply(&b, part[0], part[1], C, S, inverse, &re, &im);
  ir_value *both[2] = {dc_unsqueeze(&b, dc_transpose(&b, re, sr, back), 1, &last),
                       dc_unsqueeze(&b, dc_transpose(&b, im, sr, back), 1, &last)};
  dc_output(&b, 0, dc_cast(&b, irfft ? both[0] : dc_concat(&b, last, 2, both), xt));
  return dc_end(&b);
}

/* STFT(signal [B, L, 1 or 2], frame_step, [window [W]], [frame_length])
 * (opset 17) -> [B, frames, bins, 2]: frames of frame_length (default W)
 * every frame_step points, gathered by a compile-time index table, times the
 * window, then the DFT tables along the frame (onesided, the default, keeps
 * frame_length / 2 + 1 bins). frame_step and frame_length are compile-time
 * inputs; the window may be computed at run time. */
status onnx_decomp_stft(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *x = dc_in(&b, 0), *win = dc_in(&b, 2);
  dtype xt = dc_dtype(&b, x);
  const int onesided = dc_attr_int(&b, "onesided", 1) != 0;
  double step = 0, flen = 0;
  status in = b.st ? b.st : onnx_scalar_input(nd, 1, "frame_step", &step); /* its message is recorded */
  if (!in && dc_in(&b, 3)) in = onnx_scalar_input(nd, 3, "frame_length", &flen);
  if (in) return in;
  if ((xt != DT_FLOAT32 && xt != DT_FLOAT16) || x->rank != 3 || ir_value_elements(x) < 0 ||
      (x->dims[2] != 1 && x->dims[2] != 2))
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "signal '%s' needs a float type and a known shape [B, L, 1 or 2]", x->name);
  int64_t fl = flen > 0 ? (int64_t)flen : win && win->rank == 1 ? win->dims[0] : 0;
  const int64_t L = x->dims[1], st = (int64_t)step;
  if (fl < 1 || fl > 65536 || fl > L || st < 1)
    return dc_refuse(&b, ST_ERR_INVALID,
                     "frame_length %" PRId64 " (from the input or the window) and frame_step %" PRId64
                     " must be positive, the frame no longer than the signal (%" PRId64 ")",
                     fl, st, L);
  if (win && (win->rank != 1 || win->dims[0] != fl))
    return dc_refuse(&b, ST_ERR_INVALID, "window '%s' must be 1-D of frame_length %" PRId64, win->name, fl);
  const int64_t frames = (L - fl) / st + 1, bins = onesided ? fl / 2 + 1 : fl;
  int64_t *idx = arena_array(&b.g->arena, (size_t)(frames * fl), sizeof *idx);
  if (!idx) return dc_refuse(&b, ST_ERR_NOMEM, "out of memory");
  for (int64_t f = 0; f < frames; f++)
    for (int64_t t = 0; t < fl; t++)
      idx[f * fl + t] = f * st + t;
  ir_value *tab = dc_const(&b, DT_INT64, 2, (const int64_t[]){frames, fl}, idx);
  ir_value *wf = win ? dc_cast(&b, win, DT_FLOAT32) : NULL;
  ir_value *part[2] = {NULL, NULL};
  static const int64_t last = 2;
  for (int p = 0; p < x->dims[2] && !b.st; p++) {
    const int64_t s0 = p, s1 = p + 1;
    ir_value *sig =
        dc_squeeze(&b, dc_slice(&b, dc_cast(&b, x, DT_FLOAT32), 1, &s0, &s1, &last), 1, &last); /* [B, L] */
    part[p] = dc_gather(&b, sig, tab, 1); /* [B, frames, fl] */
    if (wf) part[p] = dc_op2(&b, IR_OP_MUL, part[p], wf);
  }
  ir_value *C = NULL, *S = NULL, *re = NULL, *im = NULL;
  dft_tables(&b, fl, bins, fl, 0, 0, &C, &S);
  dft_apply(&b, part[0], part[1], C, S, 0, &re, &im);
  static const int64_t out_axis = 3;
  ir_value *both[2] = {dc_unsqueeze(&b, re, 1, &out_axis), dc_unsqueeze(&b, im, 1, &out_axis)};
  dc_output(&b, 0, dc_cast(&b, dc_concat(&b, 3, 2, both), xt));
  return dc_end(&b);
}
