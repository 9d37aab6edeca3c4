/* qconv.c - quantized convolution islands become one int8 QConv.
 *
 * A QDQ model (PyTorch FX, ONNX Runtime's quantizer) writes a quantized
 * convolution as
 *   x_q -> DequantizeLinear -> Conv(., DequantizeLinear(w_q), bias) [-> Relu
 *   | Clip] -> QuantizeLinear -> y_q
 * with x_q, y_q u8 or i8 per tensor, w_q i8 constants per tensor or per
 * output channel with zero point 0, and the bias a float constant or the
 * DequantizeLinear of an i32 constant. Such an island computes, in ONNX
 * Runtime's integer kernels (and here), acc = bias_i32 + sum (x_q - x_zp) *
 * w_q exactly in int32, then y_q = clamp(round(acc * s_x*s_w/s_y) + y_zp)
 * once (common/quant.h q_requant): the QConv op of ops.def, which the
 * QCONV2D task runs on int8 data. A Relu or Clip island right after it
 * (DequantizeLinear -> Clip -> QuantizeLinear with the QConv's own scale and
 * zero point: MobileNetV2's ReLU6) folds into its clamp too. The Relu or Clip folds into the clamp
 * (QuantizeLinear is monotonic, so Q(clip(v, a, b)) = clamp(Q(v), Q(a),
 * Q(b))). The bias becomes round(b / (s_x * s_w[m])), half to even: the
 * i32 bias itself when it was quantized with that scale, as exporters do.
 * Casts to the dtype a value already has (PyTorch writes one after every
 * QuantizeLinear) go first: they would stand between an int8 value and the
 * vector programs that read it.
 *
 * A QuantizeLinear after MaxPool, Concat or an op that only moves elements
 * (Flatten, Reshape, Transpose, Slice, Pad, Resize nearest, ...), or a tree
 * of them, over DequantizeLinears of int8 values (ResNet's stem pool,
 * GoogLeNet's Concat -> MaxPool) moves to those inputs, exactly: the ops
 * run on the int8 values, a DequantizeLinear with the output's parameters
 * is gone and one with others is a requantization (fold_move). A Gemm island (A [N, K]
 * quantized per tensor, B = DequantizeLinear of constant i8 [M, K] with
 * transB = 1, alpha = beta = 1: a classifier, or a Linear layer on [N, K]
 * as PyTorch exports one) is a 1x1 QConv over the N rows, as a MatMul's
 * below (a QConv of [N, K, 1, 1] would make each row an image of one
 * pixel: BERT's 128-row out_proj ran at 187 GOP/s so). A MatMul island (A [.., K] quantized per tensor,
 * B = DequantizeLinear of constant i8 [K, N], per tensor or per column,
 * then optionally an Add of a constant bias [N]: a Linear layer as
 * exporters write it for a rank-3 input, or omquant's MatMul) is a 1x1 QConv
 * whose pixels are A's rows: Reshape to [1, rows, 1, K], Transpose to
 * [1, K, rows, 1] (layout makes each Transpose one channels-last
 * TransData), the QConv, and back the same way.
 *
 * DequantizeLinear(a_q), DequantizeLinear(b_q) -> Add | Mul [-> Relu |
 * Clip] -> QuantizeLinear (the residual adds) becomes one QEltwise on the
 * int8 tensors (fold_eltwise below); when one operand is a QConv's output
 * nothing else reads, the QConv takes the other as its residual and writes
 * the QEltwise's output itself (fold_residual).
 *
 * DequantizeLinear -> Pad (constant 0) -> AveragePool (PyTorch's
 * avg_pool2d with padding) becomes the pool with the Pad's pads, counted
 * (fold_pad_pool): the same sums and divisors, without an f32 Pad.
 *
 * DequantizeLinear -> GlobalAveragePool -> QuantizeLinear becomes the
 * integer mean ONNX Runtime computes, in float ops that give its bits
 * (fold_gap: Cast, Sub, ReduceSum or GlobalAveragePool, Mul, Round, Add, Clip, Cast in f32).
 *
 * A Conv, Gemm or MatMul on DequantizeLinear(x_q) and quantized weights
 * that is no island's, its output read by float ops (other tools' QDQ
 * files put Q/DQ on the weighted ops' inputs only; a classifier's float
 * output), becomes a QConv with an f32 output, the int8 sums times s_x *
 * s_w[m] (fold_float); what does not match is said with its reason (atc
 * --log=info) and stays float.
 *
 * The rest of a QDQ model stays as it is: the QuantizeLinear and
 * DequantizeLinear around average pooling and fold_move's
 * requantizations become vector programs (vectorize) that read and write the int8 tensors the QConvs
 * exchange, so activations stay int8 from one QConv to the next; a float op reads the DequantizeLinear of an
 * int8 value. A Concat of DequantizeLinears that no QuantizeLinear is above (ShuffleNetV2's, whose
 * channel shuffle feeds an unquantized half on) is passes/qsink.c's: the DequantizeLinears move down.
 *
 * Contract.
 *   Needs:   shape_infer, constfold, dce; runs before qfold (which would
 *            turn the int8 weights into float constants).
 *   Changes: Casts of u8/i8 values to their own dtype are removed; a Pad between a DequantizeLinear and an
 * AveragePool is the pool's (fold_pad_pool); each island above (2-D Conv, Gemm or
 * MatMul, weights constant) is replaced by one QConv node writing the island's QuantizeLinear output value
 * (or the following clamp island's; a Gemm's or a MatMul's through a Transpose and a Reshape); the ops a
 * QuantizeLinear moves across (fold_move) read and write int8 values, the top one its output (a leaf
 * dequantized with other parameters through a new QuantizeLinear, a Pad's constant quantized); each quantized
 * global average pool is the ReduceSum chain of fold_gap writing its QuantizeLinear's output; each residual
 * island is one QEltwise writing its QuantizeLinear's output, folded into the QConv that writes one of its
 * operands when nothing else reads that (fold_residual: the QConv's residual); each other Conv, Gemm or
 * MatMul on a per-tensor DequantizeLinear and quantized weights (not depthwise) is a QConv writing its f32
 * output (fold_float); nodes nothing reads any more are removed (dce). Leaves:  topological order; islands
 * that do not match (a weight zero point other than 0, a run-time scale, a 3-D Conv, a Gemm with transB = 0,
 * a Conv output read elsewhere) untouched: they run as float ops, as before.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/elem.h"
#include "common/quant.h"
#include "ir/conv.h"
#include "pass.h"

/* v seen through Casts to the dtype it already has. */
static ir_value *through_casts(ir_value *v) {
  while (v && v->producer && v->producer->op == IR_OP_CAST && v->producer->nin == 1 &&
         v->producer->in[0]->dtype == v->dtype)
    v = v->producer->in[0];
  return v;
}

static int is_q8(int dt) { return dt == DT_UINT8 || dt == DT_INT8; }

/* A constant scale (f32/f16, finite, > 0) of `count` elements (1 = per
 * tensor) into out[count]; 0 when it is not one. */
static int read_scale(const ir_value *s, int64_t count, float *out) {
  if (!s || !s->data || !elem_is_float(s->dtype)) return 0;
  int64_t n = ir_value_elements(s);
  if (n != 1 && n != count) return 0;
  for (int64_t i = 0; i < count; i++) {
    float f = (float)elem_get(s->data, s->dtype, (size_t)(n == 1 ? 0 : i));
    if (!(f > 0.0f) || isinf(f)) return 0;
    out[i] = f;
  }
  return 1;
}

/* A per-tensor zero point: absent (0) or a one-element constant. */
static int read_zp(const ir_value *z, int32_t *out) {
  *out = 0;
  if (!z) return 1;
  if (!z->data || ir_value_elements(z) != 1) return 0;
  *out = (int32_t)elem_get_int(z->data, z->dtype, 0);
  return 1;
}

/* The matched island. */
typedef struct island {
  ir_node *q, *act, *conv, *xdq, *wdq;
  ir_node *add;     /* a MatMul's bias Add, or NULL */
  ir_value *bias;   /* the bias (Conv's and Gemm's input 2, the Add's constant), or NULL */
  ir_value *xq;     /* the int8 input */
  float sx, sy;     /* input and output scales */
  int32_t xzp, yzp; /* zero points */
  int32_t lo, hi;   /* the output clamp */
} island;

/* DequantizeLinear(x_q) of the given rank with a per-tensor constant scale
 * and zero point. */
static int match_x(ir_value *v, int rank, island *is) {
  ir_node *dq = v->producer;
  if (!dq || dq->op != IR_OP_DEQUANTIZE) return 0;
  ir_value *xq = through_casts(dq->in[0]);
  if (xq->data || !is_q8(xq->dtype) || xq->rank != rank) return 0;
  if (!read_scale(dq->in[1], 1, &is->sx) || !read_zp(dq->nin > 2 ? dq->in[2] : NULL, &is->xzp)) return 0;
  is->xdq = dq, is->xq = xq;
  return 1;
}

/* DequantizeLinear(constant i8 weights) with zero point 0 and a constant
 * scale per tensor or per output channel. The output channels are axis 0
 * (Conv, Gemm: the scale [M, 1, ..] of the weights' rank, as the importer
 * reshapes a per-axis scale so that it broadcasts; a 1-D [M] against [M, K]
 * would run along K) or the last axis (MatMul's [K, N]: the scale [N]). */
static int match_w(ir_value *v, int axis, ir_node **dq_out) {
  ir_node *dq = v->producer;
  if (!dq || dq->op != IR_OP_DEQUANTIZE || !dq->in[0]->data || dq->in[0]->dtype != DT_INT8) return 0;
  const ir_value *s = dq->in[1], *z = dq->nin > 2 ? dq->in[2] : NULL;
  int64_t m = v->dims[axis], n = ir_value_elements(s);
  const int along = axis == 0 ? s->rank == v->rank && s->dims[0] == m
                              : s->rank >= 1 && s->rank <= v->rank && s->dims[s->rank - 1] == m;
  if (n != 1 && !(n == m && along)) return 0;
  if (z) {
    if (!z->data || ir_value_elements(z) != n) return 0;
    for (int64_t i = 0; i < n; i++)
      if (elem_get_int(z->data, z->dtype, (size_t)i) != 0) return 0;
  }
  *dq_out = dq;
  return 1;
}

/* p a Conv, Gemm or MatMul on DequantizeLinear(x_q) and
 * DequantizeLinear(constant i8 weights) (match_x, match_w); the bias is the
 * Conv's or Gemm's input 2, or a MatMul's Add (is->add, set by the caller). */
static int match_op(ir_node *p, island *is) {
  is->conv = p;
  if (p->op == IR_OP_MATMUL)
    return p->nin == 2 && p->in[0]->rank >= 2 && p->in[1]->rank == 2 &&
           match_x(p->in[0], p->in[0]->rank, is) && match_w(p->in[1], 1, &is->wdq);
  if (is->add) return 0;
  is->bias = p->nin > 2 ? p->in[2] : NULL;
  if (p->op == IR_OP_GEMM)
    return p->in[0]->rank == 2 && p->in[1]->rank == 2 && ir_attr_int(p, "transA", 0) == 0 &&
           ir_attr_int(p, "transB", 0) == 1 && ir_attr_float(p, "alpha", 1.0) == 1.0 &&
           ir_attr_float(p, "beta", 1.0) == 1.0 && match_x(p->in[0], 2, is) && match_w(p->in[1], 0, &is->wdq);
  if (p->op != IR_OP_CONV || p->nin > 3 || p->out[0]->rank != 4 || p->in[1]->rank != 4 ||
      ir_attr_find(p, "act"))
    return 0;
  return match_x(p->in[0], 4, is) && match_w(p->in[1], 0, &is->wdq);
}

/* Conv | Gemm | MatMul [-> Add of a constant bias, after a MatMul] [-> Relu
 * | Clip] -> QuantizeLinear, each value read only by the next. */
static int match_island(ir_graph *g, ir_node *q, island *is) {
  memset(is, 0, sizeof *is);
  is->q = q;
  if (q->nin < 2 || !is_q8(q->out[0]->dtype) || !read_scale(q->in[1], 1, &is->sy) ||
      !read_zp(q->nin > 2 ? q->in[2] : NULL, &is->yzp))
    return 0;
  q_range(q->out[0]->dtype, &is->lo, &is->hi);
  ir_node *p = q->in[0]->producer;
  if (!p || ir_value_single_user(g, q->in[0]) != q) return 0;
  if (p->op == IR_OP_RELU || (p->op == IR_OP_CLIP && p->nin == 1)) {
    is->act = p;
    p = p->in[0]->producer;
    if (!p || ir_value_single_user(g, is->act->in[0]) != is->act) return 0;
  }
  if (p->op == IR_OP_ADD && p->nin == 2 && (p->in[0]->data || p->in[1]->data)) { /* a MatMul's bias */
    const int k = p->in[1]->data ? 1 : 0;
    ir_node *mm = p->in[1 - k]->producer;
    if (!mm || mm->op != IR_OP_MATMUL || ir_value_single_user(g, p->in[1 - k]) != p ||
        p->out[0]->rank != mm->out[0]->rank)
      return 0;
    is->add = p, is->bias = p->in[k];
    p = mm;
  }
  return match_op(p, is);
}

/* The output clamp with a Relu or Clip folded in. */
static void fold_act(island *is) {
  const ir_node *a = is->act;
  if (!a) return;
  int32_t lo0 = is->lo, hi0 = is->hi, qlo = is->yzp, qhi = hi0;
  if (a->op == IR_OP_CLIP) {
    float mn = (float)ir_attr_float(a, "min", -INFINITY), mx = (float)ir_attr_float(a, "max", INFINITY);
    qlo = isinf(mn) && mn < 0 ? lo0 : q_quantize(mn, is->sy, is->yzp, lo0, hi0);
    qhi = isinf(mx) && mx > 0 ? hi0 : q_quantize(mx, is->sy, is->yzp, lo0, hi0);
  }
  if (qlo > is->lo) is->lo = qlo;
  if (qhi < is->hi) is->hi = qhi;
}

/* The bias as i32 in units of s_x * sw[m] (bias 0 when absent); 0 when it
 * is neither a float constant nor the DequantizeLinear of constants (scale
 * and zero point per tensor or per channel). bs: scratch [m]. */
static int read_bias(const island *is, const float *sw, int64_t m, float *bs, int32_t *out) {
  const ir_value *b = is->bias;
  if (!b) {
    memset(out, 0, sizeof(int32_t) * (size_t)m);
    return 1;
  }
  if (ir_value_elements(b) != m || (b->rank > 0 && b->dims[b->rank - 1] != m)) return 0;
  const ir_node *dq = b->producer;
  const ir_value *bz = dq && dq->nin > 2 ? dq->in[2] : NULL; /* per tensor or per channel */
  const int64_t nz = bz ? ir_value_elements(bz) : 0;
  const int is_dq = dq && dq->op == IR_OP_DEQUANTIZE && dq->in[0]->data && read_scale(dq->in[1], m, bs) &&
                    (!bz || (bz->data && (nz == 1 || nz == m)));
  if (!is_dq && (!b->data || !elem_is_float(b->dtype))) return 0;
  for (int64_t i = 0; i < m; i++) {
    const int32_t bzp = bz ? (int32_t)elem_get_int(bz->data, bz->dtype, (size_t)(nz == 1 ? 0 : i)) : 0;
    double bf =
        is_dq ? q_dequantize((int32_t)elem_get_int(dq->in[0]->data, dq->in[0]->dtype, (size_t)i), bzp, bs[i])
              : elem_get(b->data, b->dtype, (size_t)i);
    double r = nearbyint(bf / (double)(is->sx * sw[i]));
    if (!(fabs(r) < 2147483647.0)) return 0;
    out[i] = (int32_t)r;
  }
  return 1;
}

static status nomem(const ir_node *n, diag *d) { return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory"); }

/* y = Reshape(x, y's shape), a node named after `at` and `suffix`, with
 * at's origin; 1 ok, 0 out of memory. */
static int add_reshape(ir_graph *g, const ir_node *at, ir_value *x, ir_value *y, const char *suffix) {
  char name[256];
  snprintf(name, sizeof name, "%s_%s_shape", at->name, suffix);
  const int64_t rank = y->rank;
  ir_value *shape = ir_const_new(g, name, DT_INT64, 1, &rank, y->dims, sizeof(int64_t) * (size_t)rank);
  snprintf(name, sizeof name, "%s_%s", at->name, suffix);
  ir_value *in[2] = {x, shape};
  ir_node *r = shape ? ir_node_new(g, IR_OP_RESHAPE, name, 2, in, 1, &y) : NULL;
  if (r) r->origin = at->origin;
  return r != NULL;
}

/* y = Transpose(x, perm) of rank 4, a node named after `at` and `suffix`,
 * with at's origin; NULL when out of memory. */
static ir_value *add_transpose(ir_graph *g, const ir_node *at, ir_value *x, const int64_t *perm,
                               const char *suffix) {
  char name[256];
  snprintf(name, sizeof name, "%s_%s", at->name, suffix);
  ir_value *y = ir_value_new(g, name, x->dtype);
  if (!y) return NULL;
  int64_t dims[4];
  for (int k = 0; k < 4; k++)
    dims[k] = x->dims[perm[k]];
  ir_value_set_shape(y, 4, dims);
  ir_node *t = ir_node_new(g, IR_OP_TRANSPOSE, name, 1, &x, 1, &y);
  if (!t || ir_attr_set_ints(g, t, "perm", 4, perm)) return NULL;
  t->origin = at->origin;
  return y;
}

/* A Gemm's or MatMul's x [.., K] (P rows) as [1, K, P, 1] and its output
 * [1, N, P, 1] back in its shape: Reshape to the channels-last [1, P, 1, K] and
 * Transpose, so the QConv's pixels are the rows (one VNNI tile spans many).
 * passes/layout.c then drops both Transposes and runs the QConv on the NHWC
 * rows in place when K and N are multiples of 16 (qconv_nhwc), else makes
 * each one channels-last TransData. Sets in[0] and *out to the QConv's
 * operands; 0 when out of memory. */
static int matmul_operands(ir_graph *g, const ir_node *mm, ir_value *xq, ir_value **in0, ir_value **out) {
  static const int64_t to_nchw[4] = {0, 3, 1, 2}, to_nhwc[4] = {0, 2, 3, 1};
  const int64_t k = xq->dims[xq->rank - 1], rows = ir_value_elements(xq) / k,
                m = (*out)->dims[(*out)->rank - 1];
  const int64_t xd[4] = {1, rows, 1, k}, yd[4] = {1, m, rows, 1};
  char name[256];
  snprintf(name, sizeof name, "%s_x4", mm->name);
  ir_value *x4 = ir_value_new(g, name, xq->dtype);
  snprintf(name, sizeof name, "%s_y4", mm->name);
  ir_value *y4 = ir_value_new(g, name, (*out)->dtype);
  if (!x4 || !y4) return 0;
  ir_value_set_shape(x4, 4, xd);
  ir_value_set_shape(y4, 4, yd);
  ir_value *xt = add_reshape(g, mm, xq, x4, "in") ? add_transpose(g, mm, x4, to_nchw, "in_t") : NULL;
  ir_value *yt = xt ? add_transpose(g, mm, y4, to_nhwc, "out_t") : NULL;
  if (!yt || !add_reshape(g, mm, yt, *out, "out")) return 0;
  *in0 = xt;
  *out = y4;
  return 1;
}

/* Replaces the island by a QConv writing the QuantizeLinear's output (a
 * Gemm's or a MatMul's: a 1x1 QConv over its rows, matmul_operands); without
 * a QuantizeLinear (is->q NULL: fold_float) a QConv writing the op's own f32
 * output, mult = s_x * s_w[m]. */
static status rewrite(ir_graph *g, island *is, arena *scratch, int *done, diag *d) {
  ir_node *conv = is->conv;
  ir_value *w = is->wdq->in[0];
  const int matmul = conv->op == IR_OP_MATMUL;
  const int64_t m = w->dims[matmul ? 1 : 0], kd = w->dims[matmul ? 0 : 1];
  float *sw = arena_array(scratch, (size_t)m, sizeof(float));
  float *mult = arena_array(scratch, (size_t)m, sizeof(float));
  float *bs = arena_array(scratch, (size_t)m, sizeof(float));
  int32_t *bias = arena_array(scratch, (size_t)m, sizeof(int32_t));
  if (!sw || !mult || !bs || !bias) return nomem(conv, d);
  if (!read_scale(is->wdq->in[1], m, sw) || !read_bias(is, sw, m, bs, bias)) return ST_OK;
  for (int64_t i = 0; i < m; i++) {
    mult[i] =
        is->q ? is->sx * sw[i] / is->sy : is->sx * sw[i]; /* (s_x * s_w) / s_y in f32, as ONNX Runtime's */
    if (!(mult[i] > 0.0f) || isinf(mult[i])) return ST_OK;
  }
  fold_act(is);
  if (is->lo > is->hi) return ST_OK; /* a Clip below the output's range: left as it is */
  char name[256];
  snprintf(name, sizeof name, "%s_bias_i32", conv->name);
  ir_value *bv = ir_const_new(g, name, DT_INT32, 1, &m, bias, sizeof(int32_t) * (size_t)m);
  snprintf(name, sizeof name, "%s_requant", conv->name);
  ir_value *mv = ir_const_new(g, name, DT_FLOAT32, 1, &m, mult, sizeof(float) * (size_t)m);
  if (!bv || !mv) return nomem(conv, d);
  ir_value *in[4] = {is->xq, w, bv, mv};
  ir_value *out = is->q ? is->q->out[0] : is->add ? is->add->out[0] : conv->out[0];
  const int gemm = conv->op == IR_OP_GEMM || matmul;
  if (gemm) { /* [.., K] x [M, K]^T as a 1x1 QConv, its weights [M, K, 1, 1] */
    const int64_t wd[4] = {m, kd, 1, 1};
    int8_t *wt = arena_array(scratch, (size_t)(m * kd), 1);
    if (!wt) return nomem(conv, d);
    for (int64_t i = 0; i < m * kd; i++) /* MatMul's [K, M] transposed */
      wt[i] = matmul ? ((const int8_t *)w->data)[(i % kd) * m + i / kd] : ((const int8_t *)w->data)[i];
    snprintf(name, sizeof name, "%s_w4", conv->name);
    in[1] = ir_const_new(g, name, DT_INT8, 4, wd, wt, (size_t)(m * kd));
    if (!in[1]) return nomem(conv, d);
  }
  if (gemm && !matmul_operands(g, conv, is->xq, &in[0], &out)) return nomem(conv, d);
  ir_node *qc = ir_node_new(g, IR_OP_QCONV, conv->name, 4, in, 1, &out);
  if (!qc) return nomem(conv, d);
  static const char *const window[] = {"kernel_shape", "strides", "pads", "dilations"};
  static const int64_t gemm_window[4][4] = {{1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}};
  for (int k = 0; k < 4; k++) {
    int64_t v[8];
    int c = gemm ? (k == 2 ? 4 : 2) : ir_attr_ints(conv, window[k], v, 8);
    if (c > 0 && ir_attr_set_ints(g, qc, window[k], c, gemm ? gemm_window[k] : v)) return nomem(conv, d);
  }
  if (ir_attr_set_int(g, qc, "group", ir_attr_int(conv, "group", 1)) ||
      ir_attr_set_int(g, qc, "x_zp", is->xzp) || ir_attr_set_int(g, qc, "y_zp", is->yzp) ||
      ir_attr_set_int(g, qc, "lo", is->lo) || ir_attr_set_int(g, qc, "hi", is->hi) ||
      ir_attr_set_int(g, qc, "to", out->dtype))
    return nomem(conv, d);
  qc->origin = conv->origin;
  qc->name = conv->name; /* the Conv's name (it goes; compact rebuilds the name table) */
  conv->dead = 1;
  if (is->q) is->q->dead = 1;
  if (is->act) is->act->dead = 1;
  if (is->add) is->add->dead = 1;
  *done = 1;
  return ST_OK;
}

/* Why Conv, Gemm or MatMul p, whose x is a DequantizeLinear, stays a float
 * op instead of an int8 QConv with an f32 output (fold_float); NULL when it
 * folds. Fills *is. */
static const char *float_reason(ir_node *p, island *is) {
  memset(is, 0, sizeof *is);
  if (p->out[0]->dtype != DT_FLOAT32) return "its output is not f32";
  if (!match_x(p->in[0], p->in[0]->rank, is))
    return "x is not an int8 value's DequantizeLinear with one constant scale and zero point (per tensor)";
  if (p->op == IR_OP_MATMUL && p->in[1]->producer && p->in[1]->producer->op == IR_OP_DEQUANTIZE &&
      !p->in[1]->producer->in[0]->data)
    return ""; /* activation x activation: passes/qmatmul.c's (it notes why, when it stays float) */
  ir_node *wdq;
  if (p->in[1]->rank != (p->op == IR_OP_CONV ? 4 : 2) || !match_w(p->in[1], p->op == IR_OP_MATMUL, &wdq))
    return "the weights are not constant i8's DequantizeLinear with zero point 0 and a scale per tensor or "
           "per output channel";
  if (!match_op(p, is)) return "Gemm's transA / transB / alpha / beta, a Conv's rank or its fused activation";
  if (p->op == IR_OP_CONV && ir_attr_int(p, "group", 1) > 1 &&
      ir_attr_int(p, "group", 1) == p->in[0]->dims[1])
    return "depthwise (the int8 depthwise tiles requantize only)";
  return NULL;
}

/* Conv | Gemm | MatMul on DequantizeLinear(x_q) and DequantizeLinear of
 * constant i8 weights (match_op) that is no island's (its output is read
 * by float ops: other tools' QDQ, with Q/DQ on the weighted ops' inputs
 * only, or a classifier's float output): one QConv computing the op's f32
 * output (a MatMul's: with its constant bias Add, as an island's) from the
 * int8 data, y = fl(fl((float)acc) * (s_x * s_w[m])), the
 * bias in acc as round(b / (s_x * s_w[m])) (rewrite). The float graph
 * computes the same products of dequantized values and sums them in f32;
 * the int32 sum is exact and the bias moves by at most half a step of
 * s_x * s_w[m]. What does not match is noted (atc --log=info) with its
 * reason. 1 when it rewrote. */
static status fold_float(ir_graph *g, pass_ctx *ctx, ir_node *p, arena *scratch, int *done, diag *d) {
  const ir_node *xdq = p->in[0]->producer;
  if (!xdq || xdq->op != IR_OP_DEQUANTIZE) return ST_OK;
  island is;
  const char *why = float_reason(p, &is);
  ir_node *add = why || p->op != IR_OP_MATMUL || p->out[0]->output_index >= 0
                     ? NULL
                     : ir_value_sole_reader(g, p->out[0]);
  if (add && add->op == IR_OP_ADD && add->nin == 2 && (add->in[0]->data || add->in[1]->data) &&
      add->out[0]->rank == p->out[0]->rank && add->out[0]->dtype == DT_FLOAT32) { /* a Linear layer's bias */
    ir_value *b = add->in[add->in[1]->data ? 1 : 0];
    const int64_t n = p->out[0]->dims[p->out[0]->rank - 1];
    if (b->rank >= 1 && ir_value_elements(b) == n && b->dims[b->rank - 1] == n) is.add = add, is.bias = b;
  }
  if (!why) {
    int folded = 0;
    status st = rewrite(g, &is, scratch, &folded, d);
    *done |= folded;
    if (st != ST_OK || folded) return st;
    why = "its scales or bias are out of range";
  }
  if (ctx && ctx->note && !ctx->copy_weights && *why) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s '%s' stays float (not int8): %s", ir_ops[p->op].name, p->name, why);
    ctx->note(ctx->note_user, msg);
  }
  return ST_OK;
}

/* QConv qc's output read, through the Transposes, Reshapes and Casts to
 * its dtype that alone read it (a Gemm's or MatMul's way back to its shape,
 * matmul_operands; PyTorch's Casts), only by DequantizeLinear -> Relu | Clip
 * -> QuantizeLinear of that dtype:
 *  - with the DequantizeLinear's scale and zero point (MobileNetV2's ReLU6
 *    after its convolutions) the clamp folds into qc, and the last of those
 *    nodes writes the QuantizeLinear's output. Exact: with one scale and
 *    zero point Q(DQ(v)) = v for every v of the dtype, Q(clip(DQ(v), a, b))
 *    = clamp(v, Q(a), Q(b)), and moving elements commutes with a clamp;
 *  - else, for a Relu (or a Clip at 0 with no upper bound: a Linear's
 *    output quantized before its ReLU, as some quantizers write it), qc's lo
 *    rises to the DequantizeLinear's zero point z and the QuantizeLinear
 *    reads the DequantizeLinear: relu(DQ(v)) = DQ(max(v, z)) exactly, as DQ
 *    is increasing and DQ(z) = 0. The requantization DQ -> Q stays.
 * 1 when it folded. */
static int fold_clamp(ir_graph *g, ir_node *qc) {
  ir_node *last = qc, *dq = NULL;
  if (qc->nin > 4 || ir_qconv_dynamic(qc)) return 0;
  for (;;) {
    ir_value *v = last->out[0];
    ir_node *r = ir_value_sole_reader(g, v); /* NULL for a graph output */
    if (!r || r->nout != 1 || r->in[0] != v) return 0;
    if (r->op == IR_OP_DEQUANTIZE) {
      dq = r;
      break;
    }
    if (!(r->op == IR_OP_TRANSPOSE || r->op == IR_OP_RESHAPE || (r->op == IR_OP_CAST && r->nin == 1)) ||
        r->out[0]->dtype != qc->out[0]->dtype)
      return 0;
    last = r;
  }
  ir_node *act = ir_value_sole_reader(g, dq->out[0]);
  if (!act || !(act->op == IR_OP_RELU || (act->op == IR_OP_CLIP && act->nin == 1))) return 0;
  ir_node *q = ir_value_sole_reader(g, act->out[0]);
  if (!q || q->op != IR_OP_QUANTIZE || q->out[0]->dtype != qc->out[0]->dtype) return 0;
  island is = {
      .q = q, .act = act, .lo = (int32_t)ir_attr_int(qc, "lo", 0), .hi = (int32_t)ir_attr_int(qc, "hi", 0)};
  float s1;
  int32_t z1;
  if (!read_scale(dq->in[1], 1, &s1) || !read_zp(dq->nin > 2 ? dq->in[2] : NULL, &z1) ||
      !read_scale(q->in[1], 1, &is.sy) || !read_zp(q->nin > 2 ? q->in[2] : NULL, &is.yzp))
    return 0;
  if (s1 != is.sy || z1 != is.yzp || z1 != (int32_t)ir_attr_int(qc, "y_zp", 0)) {
    if (act->op == IR_OP_CLIP &&
        !(ir_attr_float(act, "min", -INFINITY) == 0.0 && ir_attr_float(act, "max", INFINITY) == INFINITY))
      return 0;
    if (z1 > is.hi || ir_attr_set_int(g, qc, "lo", z1 > is.lo ? z1 : is.lo)) return 0;
    ir_replace_uses(g, act->out[0], dq->out[0]);
    act->dead = 1;
    return 1;
  }
  fold_act(&is);
  if (is.lo > is.hi || ir_attr_set_int(g, qc, "lo", is.lo) || ir_attr_set_int(g, qc, "hi", is.hi)) return 0;
  ir_value *y = last->out[0], *out = q->out[0];
  last->out[0] = out;
  out->producer = last;
  y->producer = NULL;
  q->dead = act->dead = dq->dead = 1;
  return 1;
}

/* The int8 value v is the DequantizeLinear of (through Casts to its own
 * dtype), when that DequantizeLinear's scale and zero point are (s, z)
 * per tensor and its dtype is dt; else NULL. */
static ir_value *dequantized(ir_value *v, float s, int32_t z, int dt) {
  ir_node *dq = v->producer;
  if (!dq || dq->op != IR_OP_DEQUANTIZE) return NULL;
  ir_value *xq = through_casts(dq->in[0]);
  float sx;
  int32_t zx;
  if (xq->data || (int)xq->dtype != dt || !read_scale(dq->in[1], 1, &sx) ||
      !read_zp(dq->nin > 2 ? dq->in[2] : NULL, &zx) || sx != s || zx != z)
    return NULL;
  return xq;
}

/* v is the DequantizeLinear of a non-constant int8 value with a per-tensor
 * constant scale and zero point. */
static int dequantizes_int8(const ir_value *v) {
  const ir_node *dq = v->producer;
  float s;
  int32_t z;
  if (!dq || dq->op != IR_OP_DEQUANTIZE) return 0;
  const ir_value *xq = through_casts(dq->in[0]);
  return !xq->data && is_q8(xq->dtype) && read_scale(dq->in[1], 1, &s) &&
         read_zp(dq->nin > 2 ? dq->in[2] : NULL, &z);
}

/* A new QuantizeLinear of v with q's scale, zero point and dtype (Concat
 * input i's requantization); NULL when out of memory. */
static ir_value *requantize(ir_graph *g, const ir_node *q, ir_value *v, int i) {
  char name[256];
  snprintf(name, sizeof name, "%s_in%d", q->name, i);
  ir_value *y = ir_value_new(g, name, q->out[0]->dtype);
  if (!y) return NULL;
  ir_value_set_shape(y, v->rank, v->dims);
  ir_value *in[3] = {v, q->in[1], q->nin > 2 ? q->in[2] : NULL};
  ir_node *r = ir_node_new(g, IR_OP_QUANTIZE, name, q->nin, in, 1, &y);
  if (!r || ir_attr_set_int(g, r, "to", q->out[0]->dtype)) return NULL;
  r->origin = q->origin;
  return y;
}

/* The ops a QuantizeLinear moves across to their inputs, exactly: it is
 * elementwise and non-decreasing, so it commutes with every op that only
 * moves, repeats or drops elements (Flatten, Reshape, Squeeze, Unsqueeze,
 * Transpose, Slice, DepthToSpace, SpaceToDepth, Resize in nearest mode,
 * Pad: its constant c becomes Q(c)), joins them (Concat) or takes a
 * window's maximum (MaxPool: Q(max v) = max Q(v)). Their data is input 0
 * (Concat: every input). */
static int commutes_with_q(const ir_node *n) {
  if (n->nout != 1) return 0;
  switch (n->op) {
  case IR_OP_FLATTEN:
  case IR_OP_RESHAPE:
  case IR_OP_SQUEEZE:
  case IR_OP_UNSQUEEZE:
  case IR_OP_TRANSPOSE:
  case IR_OP_SLICE:
  case IR_OP_DEPTHTOSPACE:
  case IR_OP_SPACETODEPTH:
  case IR_OP_PAD:
  case IR_OP_MAXPOOL:
  case IR_OP_CONCAT: return 1;
  case IR_OP_RESIZE: return !strcmp(ir_attr_string(n, "mode", "nearest"), "nearest");
  default: return 0;
  }
}

enum { QMOVE_MAX = 32 };

/* The ops a QuantizeLinear moves across (fold_move): op[0] the one it
 * reads, then the ops under it, each writing a value only the op above
 * reads; and the inputs they read from elsewhere, the leaves: input slot[k]
 * of at[k], each a DequantizeLinear of an int8 value, xq[k] that value when
 * its parameters are the QuantizeLinear's, else NULL (requantized). */
typedef struct qmove {
  ir_node *op[QMOVE_MAX], *at[QMOVE_MAX];
  int slot[QMOVE_MAX], nop, nleaf;
  ir_value *xq[QMOVE_MAX];
} qmove;

/* Adds n and the ops under it to t; 0 when a leaf is no DequantizeLinear of
 * an int8 value (per tensor) or the tree is too large. Under a Slice a leaf
 * must have the QuantizeLinear's parameters: requantizing the whole input
 * of a Slice would cost more than the float Slice's QuantizeLinear (a
 * transformer's q, k and v, each a third of one projection, would each
 * requantize all of it). */
static int collect_moves(ir_graph *g, ir_node *n, float s, int32_t z, int dt, int same, qmove *t) {
  if (t->nop == QMOVE_MAX) return 0;
  t->op[t->nop++] = n;
  same |= n->op == IR_OP_SLICE;
  const int nin = n->op == IR_OP_CONCAT ? n->nin : 1; /* Reshape's shape, Resize's sizes stay */
  for (int i = 0; i < nin; i++) {
    ir_value *v = n->in[i];
    ir_node *p = v->producer;
    if (p && commutes_with_q(p) && v->output_index < 0 && ir_value_single_user(g, v) == n) {
      if (!collect_moves(g, p, s, z, dt, same, t)) return 0;
      continue;
    }
    if (t->nleaf == QMOVE_MAX || !dequantizes_int8(v)) return 0;
    t->at[t->nleaf] = n, t->slot[t->nleaf] = i;
    t->xq[t->nleaf] = dequantized(v, s, z, dt);
    if (same && !t->xq[t->nleaf]) return 0;
    t->nleaf++;
  }
  return 1;
}

/* QuantizeLinear(op(..)) for a tree of ops that commute with it
 * (commutes_with_q, each value read only by the op above), its leaves
 * DequantizeLinears of int8 values, per tensor (ResNet's stem pool, the
 * Flatten before a classifier, SqueezeNet's and GoogLeNet's Concat ->
 * MaxPool, a transformer's Reshape and Transpose around its attention):
 * the QuantizeLinear moves to the leaves, where Q(DQ(x_q)) is x_q itself
 * when both have one scale, zero point and dtype, else a requantization (a
 * new QuantizeLinear with the output's parameters, which vectorize and
 * qlut make an int8 -> int8 table: GoogLeNet's and Inception's branches,
 * each with its own scale); the ops read and write int8 values, and the
 * one it read writes its output. Exact (commutes_with_q). A
 * DequantizeLinear other nodes read stays for them. 1 when it rewrote, -1
 * when out of memory. */
static int fold_move(ir_graph *g, ir_node *q) {
  if (q->nin < 2 || !is_q8(q->out[0]->dtype)) return 0;
  ir_node *top = q->in[0]->producer;
  if (!top || !commutes_with_q(top) || ir_value_single_user(g, q->in[0]) != q ||
      top->out[0]->output_index >= 0)
    return 0;
  float s;
  int32_t z, lo, hi;
  const int dt = q->out[0]->dtype;
  if (!read_scale(q->in[1], 1, &s) || !read_zp(q->nin > 2 ? q->in[2] : NULL, &z)) return 0;
  qmove t = {.nop = 0};
  if (!collect_moves(g, top, s, z, dt, 0, &t)) return 0;
  for (int k = 0; k < t.nleaf; k++)
    if (!t.xq[k] && !(t.xq[k] = requantize(g, q, t.at[k]->in[t.slot[k]], k))) return -1;
  q_range(dt, &lo, &hi);
  for (int k = 0; k < t.nop; k++)
    if (t.op[k]->op == IR_OP_PAD &&
        ir_attr_set_float(g, t.op[k], "value",
                          q_quantize((float)ir_attr_float(t.op[k], "value", 0.0), s, z, lo, hi)))
      return -1;
  for (int k = 0; k < t.nleaf; k++)
    t.at[k]->in[t.slot[k]] = t.xq[k];
  for (int k = 1; k < t.nop; k++)
    t.op[k]->out[0]->dtype = dt; /* the int8 values moved */
  ir_value *y = top->out[0], *out = q->out[0];
  top->out[0] = out;
  out->producer = top;
  y->producer = NULL;
  q->dead = 1;
  return 1;
}

/* DequantizeLinear(a_q), DequantizeLinear(b_q) -> Add | Mul [-> Relu |
 * Clip] -> QuantizeLinear, every scale and zero point a per-tensor
 * constant, a_q and b_q int8 values of the output's dims (ResNet's and
 * MobileNetV2's residual adds): one QEltwise reading a_q and b_q writes the
 * QuantizeLinear's output, with common/quant.h's q_eltwise, the same f32
 * operations as the float nodes it replaces (the Relu or Clip is the clamp,
 * as in fold_act). The DequantizeLinears stay for any other reader. */
static status fold_eltwise(ir_graph *g, ir_node *q, int *done, diag *d) {
  island is = {.q = q};
  if (q->nin < 2 || !is_q8(q->out[0]->dtype) || !read_scale(q->in[1], 1, &is.sy) ||
      !read_zp(q->nin > 2 ? q->in[2] : NULL, &is.yzp))
    return ST_OK;
  ir_node *p = q->in[0]->producer;
  if (!p || ir_value_single_user(g, q->in[0]) != q || q->in[0]->output_index >= 0) return ST_OK;
  if (p->op == IR_OP_RELU || (p->op == IR_OP_CLIP && p->nin == 1)) {
    is.act = p;
    p = p->in[0]->producer;
    if (!p || ir_value_single_user(g, is.act->in[0]) != is.act || is.act->in[0]->output_index >= 0)
      return ST_OK;
  }
  if (!(p->op == IR_OP_ADD || p->op == IR_OP_MUL) || p->nin != 2) return ST_OK;
  const ir_value *y = p->out[0];
  ir_value *xq[2];
  float s[2];
  int32_t z[2];
  for (int i = 0; i < 2; i++) {
    const ir_node *dq = p->in[i]->producer;
    if (!dq || dq->op != IR_OP_DEQUANTIZE) return ST_OK;
    xq[i] = through_casts(dq->in[0]);
    if (xq[i]->data || !is_q8(xq[i]->dtype) || xq[i]->rank != y->rank ||
        memcmp(xq[i]->dims, y->dims, sizeof(int64_t) * (size_t)y->rank) || !read_scale(dq->in[1], 1, &s[i]) ||
        !read_zp(dq->nin > 2 ? dq->in[2] : NULL, &z[i]))
      return ST_OK;
  }
  q_range(q->out[0]->dtype, &is.lo, &is.hi);
  fold_act(&is);
  if (is.lo > is.hi) return ST_OK; /* a Clip below the output's range: left as it is */
  ir_value *out = q->out[0];
  ir_node *e = ir_node_new(g, IR_OP_QELTWISE, p->name, 2, xq, 1, &out);
  if (!e || ir_attr_set_string(g, e, "op", p->op == IR_OP_MUL ? "mul" : "add") ||
      ir_attr_set_int(g, e, "a_zp", z[0]) || ir_attr_set_int(g, e, "b_zp", z[1]) ||
      ir_attr_set_int(g, e, "y_zp", is.yzp) || ir_attr_set_float(g, e, "a_scale", s[0]) ||
      ir_attr_set_float(g, e, "b_scale", s[1]) || ir_attr_set_float(g, e, "y_scale", is.sy) ||
      ir_attr_set_int(g, e, "lo", is.lo) || ir_attr_set_int(g, e, "hi", is.hi) ||
      ir_attr_set_int(g, e, "to", out->dtype))
    return nomem(p, d);
  e->origin = p->origin;
  e->name = p->name; /* the Add's name (it goes; compact rebuilds the name table) */
  q->dead = p->dead = 1;
  if (is.act) is.act->dead = 1;
  *done = 1;
  return ST_OK;
}

/* QEltwise e one of whose operands c is a QConv's output that nothing
 * else reads (nor the graph's outputs): the QConv takes e's other operand
 * as its residual r (ops.def) and writes e's output, so y before the Add
 * is never stored (ResNet's and MobileNetV2's residual blocks: their last
 * convolution). Needs the QConv without a residual or a clamp of its own
 * (lo..hi its dtype's range: QCONV2D's residual clamps c so), e's output
 * of c's dtype and e's zero point for c the QConv's y_zp. Exact: the QConv
 * computes c as before, then e's q_eltwise on it; f32 + and * commute, so
 * c may be either operand. */
static status fold_residual(ir_graph *g, ir_node *e, int *done, diag *d) {
  static const char *const zp[2] = {"a_zp", "b_zp"}, *const sc[2] = {"a_scale", "b_scale"};
  for (int i = 0; i < 2; i++) {
    ir_value *c = e->in[i], *r = e->in[1 - i], *out = e->out[0];
    ir_node *qc = c->producer;
    int32_t lo, hi;
    q_range(c->dtype, &lo, &hi);
    if (!qc || qc->op != IR_OP_QCONV || qc->nin != 4 || ir_qconv_dynamic(qc) ||
        ir_value_single_user(g, c) != e || c->dtype != out->dtype || r->rank != 4 ||
        ir_attr_int(qc, "lo", 0) != lo || ir_attr_int(qc, "hi", 0) != hi ||
        ir_attr_int(e, zp[i], 0) != ir_attr_int(qc, "y_zp", 0))
      continue;
    if (ir_attr_set_string(g, qc, "r_op", ir_attr_string(e, "op", "add")) ||
        ir_attr_set_float(g, qc, "c_scale", ir_attr_float(e, sc[i], 0.0)) ||
        ir_attr_set_float(g, qc, "r_scale", ir_attr_float(e, sc[1 - i], 0.0)) ||
        ir_attr_set_int(g, qc, "r_zp", ir_attr_int(e, zp[1 - i], 0)) ||
        ir_attr_set_float(g, qc, "o_scale", ir_attr_float(e, "y_scale", 0.0)) ||
        ir_attr_set_int(g, qc, "o_zp", ir_attr_int(e, "y_zp", 0)) ||
        ir_attr_set_int(g, qc, "lo", ir_attr_int(e, "lo", 0)) ||
        ir_attr_set_int(g, qc, "hi", ir_attr_int(e, "hi", 0)) || ir_node_set_input(g, qc, 4, r))
      return nomem(qc, d);
    qc->out[0] = out;
    out->producer = qc;
    c->producer = NULL;
    e->dead = *done = 1;
    return ST_OK;
  }
  return ST_OK;
}

/* A new node op(in[0..nin)) named after `at` and `suffix` writing y (or,
 * when y is NULL, a new value of dtype dt and dims[rank]), computing in its
 * own dtypes (precision "fp32"); its output, or NULL when out of memory. */
static ir_value *add_op(ir_graph *g, const ir_node *at, ir_op op, const char *suffix, int nin, ir_value **in,
                        ir_value *y, int dt, int rank, const int64_t *dims) {
  char name[256];
  snprintf(name, sizeof name, "%s_%s", at->name, suffix);
  if (!y && (y = ir_value_new(g, name, dt)) != NULL) ir_value_set_shape(y, rank, dims);
  ir_node *n = y ? ir_node_new(g, op, name, nin, in, 1, &y) : NULL;
  if (!n || ir_attr_set_string(g, n, "precision", "fp32")) return NULL;
  n->origin = at->origin;
  return y;
}

/* A new f32 scalar constant named after `at` and `suffix`. */
static ir_value *f32_const(ir_graph *g, const ir_node *at, const char *suffix, float v) {
  char name[256];
  snprintf(name, sizeof name, "%s_%s", at->name, suffix);
  return ir_const_new(g, name, DT_FLOAT32, 0, NULL, &v, sizeof v);
}

/* DequantizeLinear(x_q) -> GlobalAveragePool -> QuantizeLinear, each
 * scale and zero point a per-tensor constant (an SE block's squeeze, a
 * classifier's pool): the mean as ONNX Runtime's integer kernel computes
 * it (its QDQ graph optimizer makes this island a QLinearGlobalAveragePool),
 * acc = sum over the H x W window of (x_q - x_zp), exact, then y =
 * clamp(round_half_even(acc * m) + y_zp, lo, hi) with m = s_x / (s_y * HW)
 * in f32, that is q_requant's steps. Written with float ops that compute
 * those bits: Cast to f32 and Sub x_zp (exact), ReduceSum over H and W
 * (integers below 2^24 in f32, so exact in any order; the rule needs HW *
 * 255 < 2^24), Mul m, Round, Add y_zp, Clip, Cast, all kept in f32
 * (precision "fp32"). The float island instead sums dequantized values in
 * f32 and divides twice; its result differs from ONNX Runtime's by one step
 * now and then, and MobileNetV3-Large's SE blocks amplify that. When HW *
 * 255 < 2^21 the sum is GlobalAveragePool (f32: the POOL task on the
 * NC1HWC0 tensor, where ReduceSum needs an ND copy of it) times HW,
 * rounded: the same integer. Proof: |acc| <= 255 HW < 2^21 and the pool's
 * sum of integers is exact, so its mean is acc / HW with a relative error
 * of at most two f32 roundings (a division, or a product with 1 / HW), the
 * product with HW one more: |error| < 3 * 2^-24 * 2^21 = 3/8 < 1/2. 1 when
 * it rewrote, -1 when out of memory. */
static int fold_gap(ir_graph *g, ir_node *q) {
  float sy, sx;
  int32_t zy, zx;
  if (q->nin < 2 || !is_q8(q->out[0]->dtype) || !read_scale(q->in[1], 1, &sy) ||
      !read_zp(q->nin > 2 ? q->in[2] : NULL, &zy))
    return 0;
  ir_node *p = q->in[0]->producer;
  if (!p || p->op != IR_OP_GLOBALAVGPOOL || ir_value_single_user(g, q->in[0]) != q ||
      q->in[0]->output_index >= 0)
    return 0;
  const ir_node *dq = p->in[0]->producer;
  if (!dq || dq->op != IR_OP_DEQUANTIZE) return 0;
  ir_value *xq = through_casts(dq->in[0]);
  if (xq->data || !is_q8(xq->dtype) || xq->rank != 4 || !read_scale(dq->in[1], 1, &sx) ||
      !read_zp(dq->nin > 2 ? dq->in[2] : NULL, &zx))
    return 0;
  const int64_t hw = xq->dims[2] * xq->dims[3];
  if (hw <= 0 || hw * 255 >= 16777216) return 0;
  const float m = sx / (sy * (float)hw);
  if (!(m > 0.0f) || isinf(m)) return 0;
  int32_t lo, hi;
  q_range(q->out[0]->dtype, &lo, &hi);
  const int64_t *yd = p->out[0]->dims;
  ir_value *in[2] = {xq, NULL}, *v;
  if (!(v = add_op(g, q, IR_OP_CAST, "gap_f32", 1, in, NULL, DT_FLOAT32, 4, xq->dims)) ||
      ir_attr_set_int(g, v->producer, "to", DT_FLOAT32))
    return -1;
  in[0] = v, in[1] = f32_const(g, q, "gap_x_zp", (float)zx);
  if (!in[1] || !(v = add_op(g, q, IR_OP_SUB, "gap_centered", 2, in, NULL, DT_FLOAT32, 4, xq->dims)))
    return -1;
  static const int64_t axes[2] = {2, 3};
  in[0] = v;
  if (hw * 255 < (1 << 21)) { /* the pool's mean times HW, rounded: the sum (above) */
    if (!(v = add_op(g, q, IR_OP_GLOBALAVGPOOL, "gap_mean", 1, in, NULL, DT_FLOAT32, 4, yd))) return -1;
    in[0] = v, in[1] = f32_const(g, q, "gap_hw", (float)hw);
    if (!in[1] || !(v = add_op(g, q, IR_OP_MUL, "gap_times_hw", 2, in, NULL, DT_FLOAT32, 4, yd))) return -1;
    in[0] = v;
    if (!(v = add_op(g, q, IR_OP_ROUND, "gap_sum", 1, in, NULL, DT_FLOAT32, 4, yd))) return -1;
  } else if (!(v = add_op(g, q, IR_OP_REDUCE, "gap_sum", 1, in, NULL, DT_FLOAT32, 4, yd)) ||
             ir_attr_set_string(g, v->producer, "mode", "sum") ||
             ir_attr_set_int(g, v->producer, "keepdims", 1) ||
             ir_attr_set_ints(g, v->producer, "axes", 2, axes))
    return -1;
  in[0] = v, in[1] = f32_const(g, q, "gap_mult", m);
  if (!in[1] || !(v = add_op(g, q, IR_OP_MUL, "gap_scaled", 2, in, NULL, DT_FLOAT32, 4, yd))) return -1;
  in[0] = v;
  if (!(v = add_op(g, q, IR_OP_ROUND, "gap_round", 1, in, NULL, DT_FLOAT32, 4, yd))) return -1;
  in[0] = v, in[1] = f32_const(g, q, "gap_y_zp", (float)zy);
  if (!in[1] || !(v = add_op(g, q, IR_OP_ADD, "gap_shift", 2, in, NULL, DT_FLOAT32, 4, yd))) return -1;
  in[0] = v;
  if (!(v = add_op(g, q, IR_OP_CLIP, "gap_clamp", 1, in, NULL, DT_FLOAT32, 4, yd)) ||
      ir_attr_set_float(g, v->producer, "min", lo) || ir_attr_set_float(g, v->producer, "max", hi))
    return -1;
  in[0] = v;
  ir_value *out = q->out[0];
  out->producer = NULL;
  if (!add_op(g, q, IR_OP_CAST, "gap_cast", 1, in, out, 0, 0, NULL) ||
      ir_attr_set_int(g, out->producer, "to", out->dtype))
    return -1;
  q->dead = 1;
  return 1;
}

/* DequantizeLinear(x_q) -> Pad -> AveragePool, the Pad constant 0 on the
 * spatial dims only and read by the pool alone, the pool 2-D without
 * padding of its own (or counting it: count_include_pad), ceil_mode 0,
 * undilated (PyTorch's avg_pool2d with padding, as FX exports Inception's
 * pooling branches): the pool reads the DequantizeLinear with the Pad's
 * pads added to its own and count_include_pad = 1, so the window sums the
 * same taps (the Pad's zeros add nothing) and divides by the same count.
 * The Pad ran on ND f32 between two TransDatas; the pool now reads the
 * dequantized NC1HWC0 tensor in place. 1 when it rewrote, -1 when out of
 * memory. */
static int fold_pad_pool(ir_graph *g, ir_node *pool) {
  ir_node *pad = pool->in[0]->producer;
  const ir_value *v = pool->in[0];
  int64_t pp[8], pk[4] = {0, 0, 0, 0}, one[2];
  if (!pad || pad->op != IR_OP_PAD || pad->nin != 1 || v->rank != 4 || v->output_index >= 0 ||
      ir_value_single_user(g, v) != pool || strcmp(ir_attr_string(pad, "mode", "constant"), "constant") ||
      ir_attr_float(pad, "value", 0.0) != 0.0 || ir_attr_ints(pad, "pads", pp, 8) != 8 ||
      !pad->in[0]->producer || pad->in[0]->producer->op != IR_OP_DEQUANTIZE)
    return 0;
  if (pp[0] || pp[1] || pp[4] || pp[5] || pp[2] < 0 || pp[3] < 0 || pp[6] < 0 || pp[7] < 0) return 0;
  const int np = ir_attr_ints(pool, "pads", pk, 4), nd = ir_attr_ints(pool, "dilations", one, 2);
  if ((np >= 0 && np != 4) || ir_attr_int(pool, "ceil_mode", 0) != 0 ||
      (nd >= 0 && (nd != 2 || one[0] != 1 || one[1] != 1)) ||
      (ir_attr_int(pool, "count_include_pad", 0) == 0 && (pk[0] || pk[1] || pk[2] || pk[3])))
    return 0;
  const int64_t pads[4] = {pk[0] + pp[2], pk[1] + pp[3], pk[2] + pp[6], pk[3] + pp[7]};
  if (ir_attr_set_ints(g, pool, "pads", 4, pads) || ir_attr_set_int(g, pool, "count_include_pad", 1))
    return -1;
  pool->in[0] = pad->in[0];
  pad->dead = 1;
  return 1;
}

/* Casts of an int8 value to the dtype it has (PyTorch's after each
 * QuantizeLinear) go: their readers read the value. */
static int drop_noop_casts(ir_graph *g) {
  int changed = 0;
  for (int i = 0; i < g->nnodes; i++) {
    ir_node *c = g->nodes[i];
    if (c->dead || c->op != IR_OP_CAST || c->nin != 1 || c->in[0]->dtype != c->out[0]->dtype ||
        !is_q8(c->in[0]->dtype) || c->out[0]->output_index >= 0)
      continue;
    ir_replace_uses(g, c->out[0], c->in[0]);
    c->dead = changed = 1;
  }
  return changed;
}

status pass_qconv(ir_graph *g, pass_ctx *ctx, diag *d) {
  arena scratch;
  arena_init(&scratch, 0);
  status st = ST_OK;
  int changed = drop_noop_casts(g);
  const int count = g->nnodes; /* the QConvs appended are not visited */
  for (int i = 0; i < count && st == ST_OK; i++) {
    const int r = g->nodes[i]->op == IR_OP_AVGPOOL && !g->nodes[i]->dead ? fold_pad_pool(g, g->nodes[i]) : 0;
    if (r < 0) st = nomem(g->nodes[i], d);
    changed |= r > 0;
  }
  for (int i = 0; i < count && st == ST_OK; i++) {
    ir_node *q = g->nodes[i];
    island is;
    if (q->dead || q->op != IR_OP_QUANTIZE) continue;
    int moved = fold_move(g, q);
    if (!moved) moved = fold_gap(g, q);
    if (moved < 0) st = nomem(q, d);
    if (moved) {
      changed = 1;
      continue;
    }
    if (!match_island(g, q, &is)) {
      st = fold_eltwise(g, q, &changed, d);
      continue;
    }
    st = rewrite(g, &is, &scratch, &changed, d);
    arena_free(&scratch);
  }
  for (int i = 0; i < count && st == ST_OK; i++) {
    ir_node *p = g->nodes[i];
    if (!p->dead && (p->op == IR_OP_CONV || p->op == IR_OP_GEMM || p->op == IR_OP_MATMUL))
      st = fold_float(g, ctx, p, &scratch, &changed, d);
    arena_free(&scratch);
  }
  arena_free(&scratch);
  if (st != ST_OK) return st;
  for (int i = 0; i < g->nnodes; i++)
    if (!g->nodes[i]->dead && g->nodes[i]->op == IR_OP_QCONV && fold_clamp(g, g->nodes[i])) changed = 1;
  if (changed) {
    ir_graph_compact(g);
    st = ir_graph_toposort(g, d);
    if (st == ST_OK) st = pass_dce(g, ctx, d);
  }
  /* after fold_clamp (a residual's lo..hi are y's) and dce (the
   * DequantizeLinears the QEltwises replaced no longer read their values) */
  int folded = 0;
  for (int i = 0; i < g->nnodes && st == ST_OK; i++)
    if (!g->nodes[i]->dead && g->nodes[i]->op == IR_OP_QELTWISE)
      st = fold_residual(g, g->nodes[i], &folded, d);
  if (st != ST_OK || !folded) return st;
  ir_graph_compact(g);
  return ir_graph_toposort(g, d);
}
