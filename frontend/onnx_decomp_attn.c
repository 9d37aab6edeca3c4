/* onnx_decomp_attn.c - Attention, RotaryEmbedding and LinearAttention as IR subgraphs
 * (onnx_decomp.h), after ONNX's reference implementations (opsets 23/24).
 *
 * Attention(Q, K, V, [attn_mask], [past_key], [past_value], [nonpad_kv_seqlen]):
 *   3-D inputs [B, S, H*D] become [B, H, S, D] (Reshape, Transpose) with the
 *   q_num_heads / kv_num_heads attributes; present K/V = Concat(past, K/V) on
 *   the sequence axis; scores = MatMul(Q * scale, K^T) (scale defaults to
 *   1/sqrt(D), computed from Shape(Q) so it folds at compile time); softcap
 *   c > 0 gives c * tanh(scores / c); then the bias: the mask (bool: 0 where
 *   true, -inf where false; float: added; padded with -inf/false up to the
 *   total kv length), causal (-inf where key j > query i + offset, offset the
 *   past length, or nonpad_kv_seqlen[b] - S_q with no past), and the padding
 *   of nonpad_kv_seqlen (-inf where j >= nonpad[b]); Softmax over keys (in
 *   softmax_precision when given; 0 for a row whose keys are all masked); Y = MatMul(probs, V), back to [B,
 * S, H*Dv] for 3-D inputs. The index grids for the masks are Range over dims read by Shape, so they fold at
 * compile time. Grouped-query attention (H_q = g * H_kv) reshapes Q to [B, H_kv, g*S_q, D] instead of
 * repeating K and V g times: query head h uses kv head h / g, the same pairing as ONNX's interleaved repeat,
 * and nothing is copied. qk_matmul_output (output 3), by qk_matmul_output_mode: 0 and 1 the scores after
 * softcap, 2 after the bias, 3 the softmax (as the reference has it). Needs the rank of Q at import (3-D or
 * 4-D) and, for 4-D inputs, the head counts (dims of Q and K known at import, or the attributes).
 *
 * RotaryEmbedding(X, cos_cache, sin_cache, [position_ids]) on a [B, S, H, D]
 *   view: the first rotary_embedding_dim (R) of D rotate, as halves or
 *   interleaved pairs (x1, x2) -> (cos x1 - sin x2, sin x1 + cos x2), with
 *   cos/sin = cache[position_ids] (Gather) or the caches themselves. R (or D
 *   when R is 0) must be known at import.
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "frontend/onnx_decomp.h"

/* Dim `axis` of v as an int64 scalar (folds at compile time). */
static ir_value *dim_of(dc *b, ir_value *v, int64_t axis) {
  return dc_gather(b, dc_shape(b, v), dc_scalar(b, DT_INT64, (double)axis), 0);
}

/* Dims [start, end) of v as a 1-D int64 value. */
static ir_value *dims_of(dc *b, ir_value *v, int64_t start, int64_t end) {
  static const int64_t axis0 = 0;
  return dc_slice(b, dc_shape(b, v), 1, &start, &end, &axis0);
}

ir_value *dc_bias_where(dc *b, ir_value *allowed, dtype dt, double masked) {
  return dc_where(b, allowed, dc_scalar(b, dt, 0), dc_scalar(b, dt, masked));
}

static ir_value *add_bias(dc *b, ir_value *sum, ir_value *part) {
  return sum ? dc_op2(b, IR_OP_ADD, sum, part) : part;
}

/* The head count of a 4-D input (dim 1) or the attribute; 0 when neither is known. */
static int64_t heads(dc *b, const ir_value *v, const char *attr) {
  if (v->rank == 4 && v->dims[1] > 0) return v->dims[1];
  return dc_attr_int(b, attr, 0);
}

ir_value *dc_split_heads(dc *b, ir_value *x, int64_t h) {
  static const int64_t perm[4] = {0, 2, 1, 3};
  int64_t shape[4] = {0, 0, h, -1};
  return dc_transpose(b, dc_reshape_to(b, x, 4, shape), 4, perm);
}

status onnx_decomp_attention(onnx_node *nd, ir_node *none) {
  dc b;
  dc_begin(&b, nd);
  ir_value *q = dc_in(&b, 0), *k = dc_in(&b, 1), *v = dc_in(&b, 2), *mask = dc_in(&b, 3);
  ir_value *past_k = dc_in(&b, 4), *past_v = dc_in(&b, 5), *nonpad = dc_in(&b, 6);
  dtype dt = dc_dtype(&b, q);
  int rank = q->rank;
  if (rank != 3 && rank != 4)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "input 0 '%s' (Q) needs rank 3 or 4 known at import", q->name);
  if (k->rank != rank || v->rank != rank)
    return dc_refuse(&b, ST_ERR_INVALID, "Q, K and V must have the same rank");
  if ((past_k == NULL) != (past_v == NULL))
    return dc_refuse(&b, ST_ERR_INVALID, "past_key and past_value must be given together");
  int64_t hq = heads(&b, q, "q_num_heads"), hkv = heads(&b, k, "kv_num_heads");
  if (hq < 1 || hkv < 1 || hq % hkv)
    return dc_refuse(
        &b, ST_ERR_UNSUPPORTED,
        "attributes 'q_num_heads' = %" PRId64 " and 'kv_num_heads' = %" PRId64
        " must be known (given, or dim 1 of 4-D Q and K) with q_num_heads a multiple of kv_num_heads",
        hq, hkv);
  int64_t mode = dc_attr_int(&b, "qk_matmul_output_mode", 0), sp = dc_attr_int(&b, "softmax_precision", dt);
  if (mode < 0 || mode > 3)
    return dc_refuse(&b, ST_ERR_INVALID, "attribute 'qk_matmul_output_mode' = %" PRId64 " must be 0 to 3",
                     mode);
  if (sp != DT_FLOAT32 && sp != dt)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "attribute 'softmax_precision' = %" PRId64 " (only 1, float32, or Q's type)", sp);
  if (dt != DT_FLOAT32 && dt != DT_FLOAT16)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "Q has data type %s; only float32 and float16",
                     onnx_dtype_name(dt));

  if (rank == 3)
    q = dc_split_heads(&b, q, hq), k = dc_split_heads(&b, k, hkv), v = dc_split_heads(&b, v, hkv);
  ir_value *pk = k, *pv = v;
  if (past_k) {
    ir_value *kk[2] = {past_k, k}, *vv[2] = {past_v, v};
    pk = dc_concat(&b, 2, 2, kk), pv = dc_concat(&b, 2, 2, vv);
  }
  dc_output(&b, 1, pk);
  dc_output(&b, 2, pv);

  /* scores [B, Hq, Sq, T] */
  ir_value *scale =
      dc_has_attr(&b, "scale")
          ? dc_scalar(&b, dt, dc_attr_float(&b, "scale", 1))
          : dc_op1(&b, IR_OP_RECIPROCAL, dc_op1(&b, IR_OP_SQRT, dc_cast(&b, dim_of(&b, q, 3), dt)));
  ir_value *qs = dc_op2(&b, IR_OP_MUL, q, scale);
  static const int64_t kt_perm[4] = {0, 1, 3, 2};
  ir_value *kt = dc_transpose(&b, pk, 4, kt_perm);
  int64_t g = hq / hkv;
  ir_value *scores;
  if (g > 1) { /* [B, Hkv, g*Sq, D] x [B, Hkv, D, T], back to [B, Hq, Sq, T] */
    static const int64_t tail = -1;
    int64_t kvlead[3] = {0, hkv, -1}, qlead[2] = {0, hq};
    ir_value *qshape[2] = {dc_ints(&b, 3, kvlead), dims_of(&b, q, 3, 4)};
    ir_value *qg = dc_reshape(&b, qs, dc_concat(&b, 0, 2, qshape));
    ir_value *sshape[3] = {dc_ints(&b, 2, qlead), dims_of(&b, q, 2, 3), dc_ints(&b, 1, &tail)};
    scores = dc_reshape(&b, dc_op2(&b, IR_OP_MATMUL, qg, kt), dc_concat(&b, 0, 3, sshape));
  } else {
    scores = dc_op2(&b, IR_OP_MATMUL, qs, kt);
  }
  double softcap = dc_attr_float(&b, "softcap", 0);
  if (softcap > 0) {
    ir_value *c = dc_scalar(&b, dt, softcap);
    scores = dc_op2(&b, IR_OP_MUL, dc_op1(&b, IR_OP_TANH, dc_op2(&b, IR_OP_DIV, scores, c)), c);
  } else if (softcap < 0) {
    return dc_refuse(&b, ST_ERR_INVALID, "attribute 'softcap' = %g must be >= 0", softcap);
  }
  ir_value *qk_out = scores;

  /* the bias */
  ir_value *bias = NULL;
  ir_value *t = dim_of(&b, pk, 2), *sq = dim_of(&b, q, 2);
  if (mask) {
    dtype mt = dc_dtype(&b, mask);
    const ir_value *k0 = dc_in(&b, 1); /* the kv length, when known at import, for padding the mask */
    int64_t kv = k0->dims[rank == 3 ? 1 : 2], past = !past_k ? 0 : past_k->rank == 4 ? past_k->dims[2] : -1;
    int64_t total = kv >= 0 && past >= 0 ? kv + past : -1;
    if (mask->rank >= 1 && total >= 0 && mask->dims[mask->rank - 1] >= 0 &&
        mask->dims[mask->rank - 1] < total) {
      int64_t pads[2 * MAX_RANK] = {0};
      pads[2 * mask->rank - 1] = total - mask->dims[mask->rank - 1];
      mask = dc_pad(&b, mask, mask->rank, pads, mt == DT_BOOL ? 0 : -INFINITY);
    }
    bias = mt == DT_BOOL ? dc_bias_where(&b, mask, dt, -INFINITY) : mask;
  }
  if (nonpad) dc_dtype(&b, nonpad);
  if (dc_attr_int(&b, "is_causal", 0)) {
    static const int64_t col[2] = {-1, 1}, col4[4] = {1, 1, -1, 1}, batch4[4] = {-1, 1, 1, 1};
    ir_value *jj = dc_iota(&b, DT_INT64, t), *allowed;
    if (!past_k && nonpad) { /* per batch: j <= i + nonpad[b] - Sq */
      ir_value *off = dc_reshape_to(&b, dc_op2(&b, IR_OP_SUB, dc_cast(&b, nonpad, DT_INT64), sq), 4, batch4);
      allowed = dc_op2(&b, IR_OP_LESSOREQUAL, jj,
                       dc_op2(&b, IR_OP_ADD, dc_reshape_to(&b, dc_iota(&b, DT_INT64, sq), 4, col4), off));
    } else {
      ir_value *ii = dc_reshape_to(&b, dc_iota(&b, DT_INT64, sq), 2, col);
      if (past_k) ii = dc_op2(&b, IR_OP_ADD, ii, dim_of(&b, past_k, 2));
      allowed = dc_op2(&b, IR_OP_LESSOREQUAL, jj, ii);
    }
    bias = add_bias(&b, bias, dc_bias_where(&b, allowed, dt, -INFINITY));
  }
  if (nonpad) { /* keys j < nonpad[b] */
    static const int64_t batch4[4] = {-1, 1, 1, 1};
    ir_value *n4 = dc_reshape_to(&b, dc_cast(&b, nonpad, DT_INT64), 4, batch4);
    bias = add_bias(&b, bias,
                    dc_bias_where(&b, dc_op2(&b, IR_OP_LESS, dc_iota(&b, DT_INT64, t), n4), dt, -INFINITY));
  }
  ir_value *biased = bias ? dc_op2(&b, IR_OP_ADD, scores, bias) : scores;
  if (mode == 2) qk_out = biased;

  ir_value *probs = dc_cast(&b, dc_softmax(&b, dc_cast(&b, biased, (dtype)sp), -1, 0), dt);
  if (bias) { /* a fully masked row attends to nothing: zeros, not NaN */
    static const int64_t last = -1;
    ir_value *none_allowed =
        dc_op2(&b, IR_OP_EQUAL, dc_reduce(&b, "max", biased, 1, &last, 1), dc_scalar(&b, dt, -INFINITY));
    probs = dc_where(&b, none_allowed, dc_scalar(&b, dt, 0), probs);
  }
  if (mode == 3) qk_out = probs;
  ir_value *y;
  if (g > 1) { /* [B, Hkv, g*Sq, T] x [B, Hkv, T, Dv], back to [B, Hq, Sq, Dv] */
    static const int64_t tail = -1;
    int64_t kvlead[3] = {0, hkv, -1}, qlead[2] = {0, hq};
    ir_value *pshape[2] = {dc_ints(&b, 3, kvlead), dims_of(&b, probs, 3, 4)};
    ir_value *pg = dc_reshape(&b, probs, dc_concat(&b, 0, 2, pshape));
    ir_value *yshape[3] = {dc_ints(&b, 2, qlead), dims_of(&b, q, 2, 3), dc_ints(&b, 1, &tail)};
    y = dc_reshape(&b, dc_op2(&b, IR_OP_MATMUL, pg, pv), dc_concat(&b, 0, 3, yshape));
  } else {
    y = dc_op2(&b, IR_OP_MATMUL, probs, pv);
  }
  if (rank == 3) {
    static const int64_t perm[4] = {0, 2, 1, 3}, merged[3] = {0, 0, -1};
    y = dc_reshape_to(&b, dc_transpose(&b, y, 4, perm), 3, merged);
  }
  dc_output(&b, 0, y);
  if (dc_output_used(&b, 3)) dc_output(&b, 3, qk_out);
  return dc_end(&b);
}

/* Slice of the last axis (3) of a 4-D value: [start, end) by step. */
static ir_value *last_slice(dc *b, ir_value *x, int64_t start, int64_t end, int64_t step) {
  static const int64_t axis = 3;
  return dc_slice_steps(b, x, 1, &start, &end, &axis, &step);
}

status onnx_decomp_rotary(onnx_node *nd, ir_node *none) {
  dc b;
  dc_begin(&b, nd);
  ir_value *x = dc_in(&b, 0), *cosc = dc_in(&b, 1), *sinc = dc_in(&b, 2), *pos = dc_in(&b, 3);
  static const int64_t perm[4] = {0, 2, 1, 3};
  int64_t nh = dc_attr_int(&b, "num_heads", 0), r = dc_attr_int(&b, "rotary_embedding_dim", 0), d = -1;
  int interleaved = dc_attr_int(&b, "interleaved", 0) != 0;
  dc_dtype(&b, x);
  ir_value *x4;
  if (x->rank == 4) {
    x4 = dc_transpose(&b, x, 4, perm);
    d = x->dims[3];
  } else if (x->rank == 3) {
    if (nh < 1) return dc_refuse(&b, ST_ERR_INVALID, "attribute 'num_heads' is required for a 3-D input");
    int64_t shape[4] = {0, 0, nh, -1};
    x4 = dc_reshape_to(&b, x, 4, shape);
    if (x->dims[2] >= 0) d = x->dims[2] / nh;
  } else {
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "input 0 '%s' needs rank 3 or 4 known at import", x->name);
  }
  if (d < 0)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "input 0 '%s' needs its head size known at import", x->name);
  if (r == 0) r = d;
  if (r < 2 || r % 2 || r > d)
    return dc_refuse(&b, ST_ERR_INVALID,
                     "rotary_embedding_dim = %" PRId64 " must be even and at most the head size %" PRId64, r,
                     d);
  ir_value *cs = pos ? dc_gather(&b, cosc, pos, 0) : cosc, *sn = pos ? dc_gather(&b, sinc, pos, 0) : sinc;
  static const int64_t heads_axis = 2;
  cs = dc_unsqueeze(&b, cs, 1, &heads_axis), sn = dc_unsqueeze(&b, sn, 1, &heads_axis);
  ir_value *x1 = interleaved ? last_slice(&b, x4, 0, r, 2) : last_slice(&b, x4, 0, r / 2, 1);
  ir_value *x2 = interleaved ? last_slice(&b, x4, 1, r, 2) : last_slice(&b, x4, r / 2, r, 1);
  ir_value *re = dc_op2(&b, IR_OP_SUB, dc_op2(&b, IR_OP_MUL, cs, x1), dc_op2(&b, IR_OP_MUL, sn, x2));
  ir_value *im = dc_op2(&b, IR_OP_ADD, dc_op2(&b, IR_OP_MUL, sn, x1), dc_op2(&b, IR_OP_MUL, cs, x2));
  ir_value *rot;
  if (interleaved) {
    static const int64_t pair_axis = 4, merged[4] = {0, 0, 0, -1};
    ir_value *pair[2] = {dc_unsqueeze(&b, re, 1, &pair_axis), dc_unsqueeze(&b, im, 1, &pair_axis)};
    rot = dc_reshape_to(&b, dc_concat(&b, 4, 2, pair), 4, merged);
  } else {
    ir_value *halves[2] = {re, im};
    rot = dc_concat(&b, 3, 2, halves);
  }
  if (r < d) {
    ir_value *parts[2] = {rot, last_slice(&b, x4, r, INT64_MAX, 1)};
    rot = dc_concat(&b, 3, 2, parts);
  }
  dc_output(&b, 0, x->rank == 4 ? dc_transpose(&b, rot, 4, perm) : dc_reshape(&b, rot, dc_shape(&b, x)));
  return dc_end(&b);
}

/* LinearAttention(query, key, value, [past_state], [decay], [beta],
 * [erase_gate]) (opset 27) -> output [B, T, H_q*d_v], present_state
 * [B, H_kv, d_k, d_v]: the recurrence unrolled over the T steps (T known at
 * import), in f32 as ONNX's reference, per step t on [B, H, ...] slices:
 *   gated rules:  S = S * exp(g_t)       (g per head or per key dim)
 *   delta rules:  v_t = beta_t * (v_t - S^T (erase_t * k_t))
 *   all:          S = S + k_t (x) v_t;  o_t = scale * q_t^T S
 * with scale 1/sqrt(d_k) by default. Grouped queries read their KV head's
 * state by viewing q_t as [B, H_kv, g, d_k], as Attention does. S starts
 * at past_state or zero (the first step then skips its products). */
status onnx_decomp_linear_attention(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *q = dc_in(&b, 0), *k = dc_in(&b, 1), *v = dc_in(&b, 2), *past = dc_in(&b, 3);
  ir_value *decay = dc_in(&b, 4), *beta = dc_in(&b, 5), *erase = dc_in(&b, 6);
  const dtype qt = dc_dtype(&b, q);
  const int64_t hq = dc_attr_int(&b, "q_num_heads", 0), hkv = dc_attr_int(&b, "kv_num_heads", 0);
  char rule[16];
  onnx_attr_string(nd, "update_rule", "gated_delta", rule, sizeof rule);
  if (b.st) return dc_end(&b);
  const int gated = !strcmp(rule, "gated") || !strcmp(rule, "gated_delta");
  const int delta = !strcmp(rule, "delta") || !strcmp(rule, "gated_delta");
  if (!gated && !delta && strcmp(rule, "linear"))
    return dc_refuse(&b, ST_ERR_INVALID,
                     "attribute 'update_rule' = '%s' (linear, gated, delta or gated_delta)", rule);
  if (hq < 1 || hkv < 1 || hq % hkv)
    return dc_refuse(&b, ST_ERR_INVALID,
                     "q_num_heads %" PRId64 " must be a positive multiple of kv_num_heads %" PRId64, hq, hkv);
  if (!gated != !decay || !delta != !beta || (erase && !delta))
    return dc_refuse(&b, ST_ERR_INVALID, "update_rule '%s' %s decay, %s beta%s", rule,
                     gated ? "needs" : "forbids", delta ? "needs" : "forbids",
                     erase && !delta ? " and forbids erase_gate" : "");
  if (q->rank != 3 || k->rank != 3 || v->rank != 3 || q->dims[1] < 1 || q->dims[2] < 0 || v->dims[2] < 0 ||
      q->dims[2] % hq || v->dims[2] % hkv)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "query, key and value need known shapes [B, T, H*D] at import");
  if (qt != DT_FLOAT32 && qt != DT_FLOAT16)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "query has type %s; float32 and float16 are supported",
                     onnx_dtype_name(qt));
  const int64_t T = q->dims[1], dk = q->dims[2] / hq, g = hq / hkv;
  if (T > 4096)
    return dc_refuse(&b, ST_ERR_LIMIT,
                     "sequence length %" PRId64 " is over 4096 (the recurrence is unrolled)", T);
  double scale = dc_attr_float(&b, "scale", 0);
  if (scale == 0) scale = 1 / sqrt((double)dk);
  const dtype st = past ? dc_dtype(&b, past) : qt;
  static const int64_t axis2 = 2, last = -1, before_last = -2;
  ir_value *q4 = dc_cast(&b, dc_split_heads(&b, q, hq), DT_FLOAT32),
           *k4 = dc_cast(&b, dc_split_heads(&b, k, hkv), DT_FLOAT32);
  ir_value *v4 = dc_cast(&b, dc_split_heads(&b, v, hkv), DT_FLOAT32); /* [B, H, T, D] */
  ir_value *g4 = NULL, *b4 = NULL, *e4 = NULL;
  if (decay) /* [B, T, H_kv] (one per head) or [B, T, H_kv*d_k]: [B, H_kv, T, 1 or d_k] */
    g4 = dc_cast(&b, dc_split_heads(&b, decay, hkv), DT_FLOAT32);
  if (beta) /* [B, T, H_kv or 1] -> [B, H_kv or 1, T, 1] */
    b4 = dc_cast(&b, dc_transpose(&b, dc_unsqueeze(&b, beta, 1, &last), 4, (const int64_t[]){0, 2, 1, 3}),
                 DT_FLOAT32);
  if (erase) e4 = dc_cast(&b, dc_split_heads(&b, erase, hkv), DT_FLOAT32);
  ir_value *s = past ? dc_cast(&b, past, DT_FLOAT32) : NULL; /* [B, H_kv, d_k, d_v] */
  ir_value **outs = arena_array(&b.g->arena, (size_t)T, sizeof *outs);
  if (!outs) return dc_refuse(&b, ST_ERR_NOMEM, "out of memory");
  const int64_t qg[4] = {0, hkv, g, dk}, oh[3] = {0, hq, -1};
  for (int64_t t = 0; t < T && !b.st; t++) {
    ir_value *ti = dc_scalar(&b, DT_INT64, (double)t);
    ir_value *kt = dc_gather(&b, k4, ti, 2), *vt = dc_gather(&b, v4, ti, 2); /* [B, H_kv, D] */
    if (gated && s)
      s = dc_op2(&b, IR_OP_MUL, s,
                 dc_unsqueeze(&b, dc_op1(&b, IR_OP_EXP, dc_gather(&b, g4, ti, 2)), 1, &last));
    if (delta) {
      if (s) {
        ir_value *ke = e4 ? dc_op2(&b, IR_OP_MUL, dc_gather(&b, e4, ti, 2), kt) : kt;
        ir_value *got =
            dc_squeeze(&b, dc_op2(&b, IR_OP_MATMUL, dc_unsqueeze(&b, ke, 1, &axis2), s), 1, &axis2);
        vt = dc_op2(&b, IR_OP_SUB, vt, got);
      }
      vt = dc_op2(&b, IR_OP_MUL, vt, dc_gather(&b, b4, ti, 2));
    }
    ir_value *outer =
        dc_op2(&b, IR_OP_MUL, dc_unsqueeze(&b, kt, 1, &last), dc_unsqueeze(&b, vt, 1, &before_last));
    s = s ? dc_op2(&b, IR_OP_ADD, s, outer) : outer;
    ir_value *qt4 = dc_reshape_to(&b, dc_gather(&b, q4, ti, 2), 4, qg); /* [B, H_kv, g, d_k] */
    ir_value *o = dc_op2(&b, IR_OP_MUL, dc_op2(&b, IR_OP_MATMUL, qt4, s), dc_scalar(&b, DT_FLOAT32, scale));
    outs[t] = dc_unsqueeze(&b, dc_reshape_to(&b, o, 3, oh), 1, &axis2); /* [B, H_q, 1, d_v] */
  }
  if (b.st) return dc_end(&b);
  ir_value *all = T == 1 ? outs[0] : dc_concat(&b, 2, (int)T, outs); /* [B, H_q, T, d_v] */
  all = dc_transpose(&b, all, 4, (const int64_t[]){0, 2, 1, 3});
  dc_output(&b, 0, dc_cast(&b, dc_reshape_to(&b, all, 3, (const int64_t[]){0, 0, -1}), qt));
  if (dc_output_used(&b, 1)) dc_output(&b, 1, dc_cast(&b, s, st));
  return dc_end(&b);
}
