/* onnx_decomp_msft.c - ONNX Runtime's transformer contrib ops (domain
 * com.microsoft; their rows are in onnx_decomp_qms.c's importer table), the
 * ops its transformer optimizer and Hugging Face Optimum's exports write.
 * Each becomes the IR form the plain ONNX export of the same model has, so
 * the same passes fuse it: GELUs into the MatMul epilogue (passes/fuse.c),
 * the norms into one LayerNorm task with the residual Add (passes/norm.c),
 * the attentions into one ATTENTION task (passes/attention.c).
 *
 *   Gelu(X)                     Gelu(X) (erf form)
 *   FastGelu(X, [bias])         Gelu(X + bias, approximate tanh)
 *   BiasGelu(A, B)              Gelu(A + B)
 *   QuickGelu(X)                X * Sigmoid(alpha X), alpha (1.702)
 *   BiasAdd(X, bias, skip)      (X + bias) + skip
 *   SkipLayerNormalization(input, skip, gamma, [beta], [bias])
 *                               s = (input + bias) + skip; LayerNorm(s) over
 *                               the last axis (epsilon, 1e-12); outputs
 *                               output, mean, inv_std_var, s
 *   SkipSimplifiedLayerNormalization(input, skip, gamma, [bias])
 *                               the same with RMSNorm; outputs output, (mean:
 *                               refused when used), inv_std_var, s
 *   SimplifiedLayerNormalization(X, scale) (also the default domain)
 *                               RMSNorm over axes from axis (-1), epsilon
 *                               (1e-5), stash_type; outputs Y, inv_std_var
 *   Attention(input, weights, [bias], [mask_index], [past], [attention_bias])
 *                               Q, K, V = the three column blocks
 *                               (qkv_hidden_sizes, else thirds) of one
 *                               MatMul(input, weights) + bias, as
 *                               torch.nn.MultiheadAttention exports its
 *                               packed projection; num_heads heads; scores = Q K^T * scale
 *                               (1/sqrt(head size)) + the mask + attention_bias
 *                               (+ -inf above the diagonal, unidirectional);
 *                               Softmax; x V; heads merged. past, present,
 *                               past_sequence_length and rotary: refused
 *   MultiHeadAttention(query, key, value, [bias], [key_padding_mask],
 *                      [attention_bias]) the same with Q, K, V given (3-D
 *                               [B, S, D], or K and V 4-D [B, N, L, H]);
 *                               present_key / present_value are K and V per
 *                               head (no past)
 *   EmbedLayerNormalization(input_ids, [segment_ids], word_embedding,
 *                           position_embedding, [segment_embedding], gamma,
 *                           beta, [mask], [position_ids])
 *                               word[ids] + position[position_ids or 0..S-1]
 *                               (+ segment[segment_ids]), LayerNorm (epsilon);
 *                               outputs output, mask_index (the count of
 *                               mask == 1 per batch, int32; 0 without mask),
 *                               embedding_sum
 *   FusedMatMul(A, B)           alpha * MatMul(A', B'), A' = A with its
 *                               leading dim moved behind the batch dims
 *                               (transBatchA) and its last two swapped
 *                               (transA); B' alike
 *   MatMulIntegerToFloat(A, B, a_scale, b_scale, [a_zero_point],
 *                        [b_zero_point], [bias])
 *                               Cast(MatMulInteger(A, B, a_zp, b_zp), float)
 *                               * (a_scale * b_scale) + bias
 *   DynamicQuantizeMatMul(A, B, b_scale, [b_zero_point], [bias])
 *                               DynamicQuantizeLinear(A) -> the same
 * The masks (Attention's mask_index, MultiHeadAttention's key_padding_mask,
 * int32) add mask_filter_value (-10000) at the keys they exclude, as ONNX
 * Runtime does: 1-D [B] keys j >= end[b]; [2B] also j < start[b] (the second
 * half); 2-D [B, T] and 3-D [B, S, T] where the mask is 0. The last two ops
 * go through the default domain's own importers of DynamicQuantizeLinear and
 * MatMulInteger (onnx_import_node on nodes made here), so they become what
 * ONNX Runtime's quantize_dynamic form of the same model becomes, node for
 * node. Float inputs are float32 or float16; shapes the decompositions split
 * by (hidden sizes, head counts) must be known at import.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "frontend/onnx_decomp.h"

/* The float dtype of input i (float32 or float16), or a failure naming it. */
static dtype float_in(dc *b, int i, const char *name) {
  ir_value *v = dc_in(b, i);
  if (b->st || !v) return DT_UNDEFINED;
  dtype t = dc_dtype(b, v);
  if (!b->st && t != DT_FLOAT32 && t != DT_FLOAT16)
    dc_fail(b, ST_ERR_UNSUPPORTED, "input %s '%s' has data type %s; only float32 and float16", name, v->name,
            onnx_dtype_name(t));
  return t;
}

/* Refuses output k when something reads it. */
static void refuse_output(dc *b, int k, const char *what) {
  if (dc_output_used(b, k))
    dc_fail(b, ST_ERR_UNSUPPORTED, "output %d '%s' (%s) is used; it is not supported", k, b->nd->out[k]->name,
            what);
}

/* Refuses input i when given. */
static void refuse_input(dc *b, int i, const char *what) {
  if (dc_in(b, i))
    dc_fail(b, ST_ERR_UNSUPPORTED, "input %d '%s' (%s) is not supported", i, dc_in(b, i)->name, what);
}

static ir_value *add_opt(dc *b, ir_value *x, ir_value *y) { return y ? dc_op2(b, IR_OP_ADD, x, y) : x; }

static ir_value *gelu(dc *b, ir_value *x, int tanh_form) {
  ir_node *n = dc_node(b, IR_OP_GELU, 1, &x);
  dc_set_string(b, n, "approximate", tanh_form ? "tanh" : "none");
  return dc_val(b, n);
}

/* --- the GELUs and BiasAdd */

/* Gelu(X), FastGelu(X, [bias]), BiasGelu(A, B). */
static status onnx_decomp_ms_gelu(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  float_in(&b, 0, "X");
  const char *op = nd->np->op_type;
  if (!strcmp(op, "BiasGelu") && !dc_in(&b, 1)) return dc_refuse(&b, ST_ERR_INVALID, "input B is required");
  dc_output(&b, 0, gelu(&b, add_opt(&b, dc_in(&b, 0), dc_in(&b, 1)), !strcmp(op, "FastGelu")));
  return dc_end(&b);
}

/* QuickGelu(X): X * Sigmoid(alpha * X). */
static status onnx_decomp_quick_gelu(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  dtype t = float_in(&b, 0, "X");
  ir_value *x = dc_in(&b, 0);
  double alpha = dc_attr_float(&b, "alpha", 1.702);
  ir_value *ax = alpha == 1.0 || b.st ? x : dc_op2(&b, IR_OP_MUL, x, dc_scalar(&b, t, alpha));
  dc_output(&b, 0, dc_op2(&b, IR_OP_MUL, x, dc_op1(&b, IR_OP_SIGMOID, ax)));
  return dc_end(&b);
}

/* BiasAdd(X, bias, skip): (X + bias) + skip. */
static status onnx_decomp_bias_add(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  float_in(&b, 0, "X");
  dc_output(&b, 0, dc_op2(&b, IR_OP_ADD, dc_op2(&b, IR_OP_ADD, dc_in(&b, 0), dc_in(&b, 1)), dc_in(&b, 2)));
  return dc_end(&b);
}

/* --- the norms */

/* SkipLayerNormalization, SkipSimplifiedLayerNormalization. */
static status onnx_decomp_skip_layer_norm(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  int rms = !strcmp(nd->np->op_type, "SkipSimplifiedLayerNormalization");
  float_in(&b, 0, "input");
  float_in(&b, 1, "skip");
  double eps = dc_attr_float(&b, "epsilon", 1e-12);
  if (!b.st && !(eps >= 0))
    return dc_refuse(&b, ST_ERR_INVALID, "attribute 'epsilon' = %g must be >= 0", eps);
  ir_value *beta = rms ? NULL : dc_in(&b, 3), *bias = dc_in(&b, rms ? 3 : 4);
  if (rms) refuse_output(&b, 1, "mean");
  /* the bias first: a MatMul's bias Add, then the residual (the order the passes fuse) */
  ir_value *s = dc_op2(&b, IR_OP_ADD, add_opt(&b, dc_in(&b, 0), bias), dc_in(&b, 1));
  ir_value *mean = NULL, *inv = NULL;
  dc_output(&b, 0, dc_norm(&b, s, dc_in(&b, 2), beta, -1, eps, rms, 0, &mean, &inv));
  if (!rms && dc_output_used(&b, 1)) dc_output(&b, 1, mean);
  if (dc_output_used(&b, 2)) dc_output(&b, 2, inv);
  if (dc_output_used(&b, 3)) dc_output(&b, 3, s);
  return dc_end(&b);
}

status onnx_decomp_simplified_layer_norm(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *inv = NULL;
  dc_output(&b, 0,
            dc_norm(&b, dc_in(&b, 0), dc_in(&b, 1), NULL, dc_attr_int(&b, "axis", -1),
                    dc_attr_float(&b, "epsilon", 1e-5), 1, 1, NULL, &inv));
  if (dc_output_used(&b, 1)) dc_output(&b, 1, inv);
  return dc_end(&b);
}

/* EmbedLayerNormalization. */
static status onnx_decomp_embed_layer_norm(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *ids = dc_in(&b, 0), *seg = dc_in(&b, 1), *seg_emb = dc_in(&b, 4), *mask = dc_in(&b, 7),
           *pos = dc_in(&b, 8);
  float_in(&b, 2, "word_embedding");
  if (!dc_has_attr(&b, "epsilon")) return dc_refuse(&b, ST_ERR_INVALID, "attribute 'epsilon' is required");
  if ((seg == NULL) != (seg_emb == NULL))
    return dc_refuse(&b, ST_ERR_INVALID, "segment_ids and segment_embedding must be given together");
  if (dc_attr_int(&b, "mask_index_type", 1) != 1)
    refuse_output(&b, 1, "mask_index with mask_index_type != 1");
  if (!dc_in(&b, 5) || !dc_in(&b, 6))
    return dc_refuse(&b, ST_ERR_INVALID, "inputs gamma and beta are required");
  if (b.st) return dc_end(&b);
  ir_value *sum = dc_gather(&b, dc_in(&b, 2), ids, 0);
  if (!pos) { /* 0 .. S-1 */
    ir_value *s = dc_gather(&b, dc_shape(&b, ids), dc_scalar(&b, DT_INT64, 1), 0);
    pos = dc_iota(&b, DT_INT64, s);
  }
  sum = dc_op2(&b, IR_OP_ADD, sum, dc_gather(&b, dc_in(&b, 3), pos, 0));
  if (seg) sum = dc_op2(&b, IR_OP_ADD, sum, dc_gather(&b, seg_emb, seg, 0));
  dc_output(&b, 0,
            dc_norm(&b, sum, dc_in(&b, 5), dc_in(&b, 6), -1, dc_attr_float(&b, "epsilon", 1e-12), 0, 0, NULL,
                    NULL));
  if (dc_output_used(&b, 1)) {
    static const int64_t axis1 = 1, start = 0, end = 1, axis0 = 0;
    ir_value *count;
    if (mask) {
      ir_value *one = dc_scalar(&b, dc_dtype(&b, mask), 1);
      count = dc_reduce(&b, "sum", dc_cast(&b, dc_op2(&b, IR_OP_EQUAL, mask, one), DT_INT32), 1, &axis1, 0);
    } else {
      count =
          dc_expand(&b, dc_scalar(&b, DT_INT32, 0), dc_slice(&b, dc_shape(&b, ids), 1, &start, &end, &axis0));
    }
    dc_output(&b, 1, count);
  }
  if (dc_output_used(&b, 2)) dc_output(&b, 2, sum);
  return dc_end(&b);
}

/* --- the attentions */

/* The additive bias of an int32 key mask m (the forms in the top comment)
 * for scores [B, N, S, T] of T = t keys: [B, 1, 1 or S, T]. batch: B when
 * known at import, else -1. */
static ir_value *mask_bias(dc *b, ir_value *m, ir_value *t, int64_t batch, dtype dt, double filter,
                           const char *name) {
  if (b->st) return NULL;
  if (dc_dtype(b, m) != DT_INT32 && !b->st)
    return dc_fail(b, ST_ERR_UNSUPPORTED, "%s '%s' has type %s; int32 is supported", name, m->name,
                   onnx_dtype_name(m->dtype));
  static const int64_t b1t[4] = {0, 1, 1, -1}, col[2] = {-1, 1}, axis1 = 1, axis0 = 0;
  if (m->rank == 2 || m->rank == 3) { /* raw: 0 masks the key */
    ir_value *bias = dc_bias_where(b, dc_op2(b, IR_OP_GREATER, m, dc_scalar(b, DT_INT32, 0)), dt, filter);
    return m->rank == 2 ? dc_reshape_to(b, bias, 4, b1t) : dc_unsqueeze(b, bias, 1, &axis1);
  }
  if (m->rank != 1 || m->dims[0] < 1)
    return dc_fail(b, ST_ERR_UNSUPPORTED,
                   "%s '%s' needs a known shape [B], [2B], [B, T] or [B, S, T] at import", name, m->name);
  int two = batch > 0 && m->dims[0] == 2 * batch;
  if (batch > 0 && !two && m->dims[0] != batch)
    return dc_fail(b, ST_ERR_UNSUPPORTED,
                   "%s '%s' has %" PRId64 " values; [B] or [2B] (B %" PRId64 ") are supported", name, m->name,
                   m->dims[0], batch);
  int64_t half = two ? batch : m->dims[0], end2 = 2 * half;
  ir_value *j = dc_iota(b, DT_INT64, t), *mm = dc_cast(b, m, DT_INT64);
  ir_value *end = dc_reshape_to(b, dc_slice(b, mm, 1, &axis0, &half, &axis0), 2, col);
  ir_value *allowed = dc_op2(b, IR_OP_LESS, j, end); /* [B, T] */
  if (two) {
    ir_value *start = dc_reshape_to(b, dc_slice(b, mm, 1, &half, &end2, &axis0), 2, col);
    allowed = dc_op2(b, IR_OP_AND, allowed, dc_op2(b, IR_OP_GREATEROREQUAL, j, start));
  }
  return dc_reshape_to(b, dc_bias_where(b, allowed, dt, filter), 4, b1t);
}

/* Softmax(q k^T * scale + biases) v over [B, N, S, H] heads, merged back to
 * [B, S, N*Hv]. causal: -inf at keys j > query i. */
static ir_value *attend(dc *b, ir_value *q, ir_value *k, ir_value *v, double scale, ir_value *mask,
                        ir_value *attn_bias, int causal, dtype dt) {
  static const int64_t kt_perm[4] = {0, 1, 3, 2}, perm[4] = {0, 2, 1, 3}, merged[3] = {0, 0, -1};
  ir_value *s = dc_op2(b, IR_OP_MATMUL, q, dc_transpose(b, k, 4, kt_perm));
  s = dc_op2(b, IR_OP_MUL, s, b->st ? NULL : dc_scalar(b, dt, scale));
  s = add_opt(b, s, mask);
  s = add_opt(b, s, attn_bias);
  if (causal) {
    static const int64_t col[2] = {-1, 1}, two = 2;
    ir_value *sq = dc_gather(b, dc_shape(b, q), dc_scalar(b, DT_INT64, 2), 0);
    ir_value *t = dc_gather(b, dc_shape(b, k), dc_scalar(b, DT_INT64, two), 0);
    ir_value *allowed = dc_op2(b, IR_OP_LESSOREQUAL, dc_iota(b, DT_INT64, t),
                               dc_reshape_to(b, dc_iota(b, DT_INT64, sq), 2, col));
    s = dc_op2(b, IR_OP_ADD, s, dc_bias_where(b, allowed, dt, -INFINITY));
  }
  ir_value *y = dc_op2(b, IR_OP_MATMUL, dc_softmax(b, s, -1, 0), v);
  return dc_reshape_to(b, dc_transpose(b, y, 4, perm), 3, merged);
}

/* The attributes both attentions share: num_heads (required), scale (0: 1/sqrt(head)), unidirectional. */
static int64_t num_heads(dc *b) {
  int64_t n = dc_attr_int(b, "num_heads", 0);
  if (!b->st && n < 1) dc_fail(b, ST_ERR_INVALID, "attribute 'num_heads' is required and must be >= 1");
  return n;
}

static double attn_scale(dc *b, int64_t head) {
  double scale = dc_attr_float(b, "scale", 0);
  return scale != 0 ? scale : 1 / sqrt((double)head);
}

static int unidirectional(dc *b) {
  int64_t u = dc_attr_int(b, "unidirectional", 0);
  if (u != 0 && u != 1) dc_fail(b, ST_ERR_INVALID, "attribute 'unidirectional' = %" PRId64 " (0 or 1)", u);
  return u == 1;
}

/* Columns [start, end) of the last axis of x. */
static ir_value *cols(dc *b, ir_value *x, int64_t start, int64_t end) {
  static const int64_t last = -1;
  return dc_slice(b, x, 1, &start, &end, &last);
}

/* Attention (com.microsoft 1). */
static status onnx_decomp_ms_attention(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *x = dc_in(&b, 0), *w = dc_in(&b, 1), *bias = dc_in(&b, 2), *mask = dc_in(&b, 3);
  dtype dt = float_in(&b, 0, "input");
  int64_t n = num_heads(&b);
  int causal = unidirectional(&b);
  refuse_input(&b, 4, "past");
  refuse_input(&b, 6, "past_sequence_length");
  refuse_output(&b, 1, "present");
  if (dc_attr_int(&b, "do_rotary", 0))
    dc_fail(&b, ST_ERR_UNSUPPORTED, "attribute 'do_rotary' is not supported");
  if (b.st) return dc_end(&b);
  if (x->rank != 3 || w->rank != 2 || w->dims[1] < 1)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "input '%s' needs rank 3 and weights '%s' a known 2-D shape at import", x->name,
                     w->name);
  int64_t hs[3];
  int count = dc_attr_ints(&b, "qkv_hidden_sizes", hs, 3);
  if (count < 0 && !b.st) {
    if (w->dims[1] % 3)
      return dc_refuse(&b, ST_ERR_INVALID, "weights '%s' has %" PRId64 " columns, not 3 equal blocks",
                       w->name, w->dims[1]);
    hs[0] = hs[1] = hs[2] = w->dims[1] / 3;
  } else if (!b.st && (count != 3 || hs[0] != hs[1] || hs[0] < 1 || hs[2] < 1 ||
                       hs[0] + hs[1] + hs[2] != w->dims[1])) {
    return dc_refuse(&b, ST_ERR_INVALID,
                     "attribute 'qkv_hidden_sizes' must be 3 sizes, Q's = K's, adding up to the %" PRId64
                     " columns of weights",
                     w->dims[1]);
  }
  if (!b.st && (hs[0] % n || hs[2] % n))
    return dc_refuse(&b, ST_ERR_INVALID,
                     "hidden sizes %" PRId64 ", %" PRId64 " are not multiples of num_heads %" PRId64, hs[0],
                     hs[2], n);
  /* one MatMul for the three (its bias fused), sliced: the views the attention reads */
  ir_value *packed = add_opt(&b, dc_op2(&b, IR_OP_MATMUL, x, w), bias), *qkv[3];
  for (int i = 0, at = 0; i < 3 && !b.st; at += (int)hs[i], i++)
    qkv[i] = dc_split_heads(&b, cols(&b, packed, at, at + hs[i]), n);
  if (b.st) return dc_end(&b);
  ir_value *mb = NULL;
  if (mask) {
    ir_value *t = dc_gather(&b, dc_shape(&b, x), dc_scalar(&b, DT_INT64, 1), 0);
    mb = mask_bias(&b, mask, t, x->dims[0], dt, dc_attr_float(&b, "mask_filter_value", -10000), "mask_index");
  }
  dc_output(&b, 0,
            attend(&b, qkv[0], qkv[1], qkv[2], attn_scale(&b, hs[0] / n), mb, dc_in(&b, 5), causal, dt));
  return dc_end(&b);
}

/* MultiHeadAttention (com.microsoft 1). */
static status onnx_decomp_mha(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *q = dc_in(&b, 0), *k = dc_in(&b, 1), *v = dc_in(&b, 2), *bias = dc_in(&b, 3),
           *mask = dc_in(&b, 4);
  dtype dt = float_in(&b, 0, "query");
  int64_t n = num_heads(&b);
  int causal = unidirectional(&b);
  for (int i = 6; i < nd->nin; i++)
    refuse_input(&b, i, "past and cache inputs");
  refuse_output(&b, 3, "qk");
  if (b.st) return dc_end(&b);
  if (!k || !v)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "packed QKV / KV (no key or value input) is not supported");
  int k4 = k->rank == 4;
  if (q->rank != 3 || q->dims[2] < 1 || (k->rank != 3 && !k4) || v->rank != k->rank)
    return dc_refuse(
        &b, ST_ERR_UNSUPPORTED,
        "query needs a known shape [B, S, D] and key, value rank 3 ([B, L, D]) or 4 ([B, N, L, H]) at "
        "import");
  if (k4 && bias) return dc_refuse(&b, ST_ERR_UNSUPPORTED, "bias with 4-D key and value is not supported");
  int64_t d = q->dims[2], dv = k4 ? -1 : v->dims[2];
  if (d % n)
    return dc_refuse(&b, ST_ERR_INVALID, "query's hidden size %" PRId64 " is not a multiple of num_heads", d);
  if (bias) {
    if (dv < 1 || bias->rank != 1 || bias->dims[0] != 2 * d + dv)
      return dc_refuse(&b, ST_ERR_INVALID,
                       "bias '%s' must have 2 x %" PRId64 " + value's hidden size elements", bias->name, d);
    q = dc_op2(&b, IR_OP_ADD, q, cols(&b, bias, 0, d));
    k = dc_op2(&b, IR_OP_ADD, k, cols(&b, bias, d, 2 * d));
    v = dc_op2(&b, IR_OP_ADD, v, cols(&b, bias, 2 * d, 2 * d + dv));
  }
  ir_value *q4 = dc_split_heads(&b, q, n);
  if (!k4) k = dc_split_heads(&b, k, n), v = dc_split_heads(&b, v, n);
  ir_value *mb = NULL;
  if (mask) {
    ir_value *t = dc_gather(&b, dc_shape(&b, k), dc_scalar(&b, DT_INT64, 2), 0);
    mb = mask_bias(&b, mask, t, q->dims[0], dt, dc_attr_float(&b, "mask_filter_value", -10000),
                   "key_padding_mask");
  }
  dc_output(&b, 0, attend(&b, q4, k, v, attn_scale(&b, d / n), mb, dc_in(&b, 5), causal, dt));
  if (dc_output_used(&b, 1)) dc_output(&b, 1, k);
  if (dc_output_used(&b, 2)) dc_output(&b, 2, v);
  return dc_end(&b);
}

/* --- the matrix products */

/* FusedMatMul's operand x: transBatch moves dim 0 behind the batch dims, trans swaps the last two. */
static ir_value *fused_operand(dc *b, ir_value *x, const char *name) {
  char tb[16], tt[16];
  snprintf(tb, sizeof tb, "transBatch%s", name);
  snprintf(tt, sizeof tt, "trans%s", name);
  int64_t batch = dc_attr_int(b, tb, 0), trans = dc_attr_int(b, tt, 0);
  if (b->st) return NULL;
  if ((batch != 0 && batch != 1) || (trans != 0 && trans != 1))
    return dc_fail(b, ST_ERR_INVALID, "attributes '%s', '%s' must be 0 or 1", tb, tt);
  if (!batch && !trans) return x;
  int r = x->rank;
  if (r < 2) return dc_fail(b, ST_ERR_UNSUPPORTED, "%s '%s' needs rank >= 2 known at import", name, x->name);
  int64_t perm[MAX_RANK];
  for (int i = 0; i < r; i++)
    perm[i] = i;
  if (batch && r > 2) {
    for (int i = 0; i < r - 2; i++)
      perm[i] = i + 1;
    perm[r - 2] = 0;
  }
  if (trans) {
    int64_t t = perm[r - 2];
    perm[r - 2] = perm[r - 1], perm[r - 1] = t;
  }
  return dc_transpose(b, x, r, perm);
}

static status onnx_decomp_fused_matmul(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  dtype t = float_in(&b, 0, "A");
  double alpha = dc_attr_float(&b, "alpha", 1.0);
  ir_value *y =
      dc_op2(&b, IR_OP_MATMUL, fused_operand(&b, dc_in(&b, 0), "A"), fused_operand(&b, dc_in(&b, 1), "B"));
  if (alpha != 1.0 && !b.st) y = dc_op2(&b, IR_OP_MUL, y, dc_scalar(&b, t, alpha));
  dc_output(&b, 0, y);
  return dc_end(&b);
}

/* Imports the default-domain op `op` on inputs in (NULL: omitted) through
 * its own importer (onnx_ops.c), as the node a model would have, into nout
 * fresh values out[]; the nodes made are inferred. */
static void import_onnx(dc *b, const char *op, int nin, ir_value **in, int nout, ir_value **out) {
  if (b->st) return;
  onnx_ctx *c = b->nd->c;
  char name[256];
  snprintf(name, sizeof name, "%.200s/%s%d", b->base, op, b->count++);
  Onnx__NodeProto *np = arena_alloc(&c->scratch, sizeof *np);
  char **inames = arena_array(&c->scratch, (size_t)nin, sizeof *inames);
  char **onames = arena_array(&c->scratch, (size_t)nout, sizeof *onames);
  int *uses = arena_array(&c->scratch, (size_t)nout, sizeof *uses);
  if (!np || !inames || !onames || !uses) {
    dc_fail(b, ST_ERR_NOMEM, "out of memory");
    return;
  }
  *np = (Onnx__NodeProto)ONNX__NODE_PROTO__INIT;
  np->name = arena_strdup(&c->scratch, name);
  np->op_type = (char *)op;
  np->domain = (char *)"";
  for (int i = 0; i < nin; i++)
    inames[i] = in[i] ? (char *)in[i]->name : (char *)"";
  for (int k = 0; k < nout; k++) {
    char oname[300];
    snprintf(oname, sizeof oname, "%s_out%d", name, k);
    out[k] = ir_value_new(b->g, oname, DT_UNDEFINED);
    if (!out[k] || !np->name) {
      dc_fail(b, ST_ERR_NOMEM, "out of memory");
      return;
    }
    onames[k] = (char *)out[k]->name;
    uses[k] = 1;
  }
  np->n_input = (size_t)nin, np->input = inames, np->n_output = (size_t)nout, np->output = onames;
  onnx_node sub = {.c = c,
                   .np = np,
                   .index = b->nd->index,
                   .nin = nin,
                   .nout = nout,
                   .in = in,
                   .out = out,
                   .uses = uses,
                   .scope = b->nd->scope};
  status s = onnx_import_node(&sub);
  if (s) {
    b->st = s;
    return;
  }
  dc_infer(b);
}

/* Cast(MatMulInteger(a, bm, az, bz), float) * (as * bs) + bias: the form
 * quantize_dynamic writes (models/make_dynamic_quant.py), bias after. */
static ir_value *integer_to_float(dc *b, ir_value *a, ir_value *bm, ir_value *as, ir_value *az, ir_value *bz,
                                  ir_value *bs, ir_value *bias) {
  ir_value *in[4] = {a, bm, az, bz}, *acc = NULL;
  int nin = bz ? 4 : az ? 3 : 2;
  import_onnx(b, "MatMulInteger", nin, in, 1, &acc);
  ir_value *f = dc_cast(b, acc, DT_FLOAT32); /* in the form's order: Cast, the scales' Mul, Mul, Add */
  ir_value *scale = dc_op2(b, IR_OP_MUL, as, bs);
  return add_opt(b, dc_op2(b, IR_OP_MUL, f, scale), bias);
}

static status onnx_decomp_matmul_integer_to_float(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  if (dc_dtype(&b, dc_in(&b, 2)) != DT_FLOAT32 && !b.st)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "a_scale has type %s; float32 is supported",
                     onnx_dtype_name(dc_in(&b, 2)->dtype));
  dc_output(&b, 0,
            integer_to_float(&b, dc_in(&b, 0), dc_in(&b, 1), dc_in(&b, 2), dc_in(&b, 4), dc_in(&b, 5),
                             dc_in(&b, 3), dc_in(&b, 6)));
  return dc_end(&b);
}

static status onnx_decomp_dynamic_quantize_matmul(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *a = dc_in(&b, 0), *q[3] = {NULL, NULL, NULL};
  if (dc_dtype(&b, a) != DT_FLOAT32 && !b.st)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "A has type %s; float32 is supported",
                     onnx_dtype_name(a->dtype));
  import_onnx(&b, "DynamicQuantizeLinear", 1, &a, 3, q);
  dc_output(&b, 0,
            integer_to_float(&b, q[0], dc_in(&b, 1), q[1], q[2], dc_in(&b, 3), dc_in(&b, 2), dc_in(&b, 4)));
  return dc_end(&b);
}

/* --- the rows (onnx_decomp_qms.c's table holds them with the QOperator ones) */

const onnx_ms_importer onnx_msft_importers[] = {
    {{"Gelu", NULL, 1, 1, 1, 1, "", onnx_decomp_ms_gelu}, "X"},
    {{"FastGelu", NULL, 1, 1, 2, 1, "", onnx_decomp_ms_gelu}, "X,bias?"},
    {{"BiasGelu", NULL, 1, 2, 2, 1, "", onnx_decomp_ms_gelu}, "A,B"},
    {{"QuickGelu", NULL, 1, 1, 1, 1, "-alpha:f", onnx_decomp_quick_gelu}, "X"},
    {{"BiasAdd", NULL, 1, 3, 3, 1, "", onnx_decomp_bias_add}, "X,bias,skip"},
    {{"SkipLayerNormalization", NULL, 1, 3, 5, 4, "-epsilon:f", onnx_decomp_skip_layer_norm},
     "input,skip,gamma,beta?,bias?"},
    {{"SkipSimplifiedLayerNormalization", NULL, 1, 3, 4, 4, "-epsilon:f", onnx_decomp_skip_layer_norm},
     "input,skip,gamma,bias?"},
    {{"SimplifiedLayerNormalization", NULL, 1, 2, 2, 2, "-axis:i -epsilon:f -stash_type:i",
      onnx_decomp_simplified_layer_norm},
     "X,scale"},
    {{"Attention", NULL, 1, 2, 7, 2,
      "-num_heads:i -unidirectional:i -qkv_hidden_sizes:I -mask_filter_value:f -scale:f -do_rotary:i "
      "-past_present_share_buffer:i -rotary_embedding_dim:i",
      onnx_decomp_ms_attention},
     "input,weights"},
    {{"MultiHeadAttention", NULL, 1, 1, 10, 4, "-num_heads:i -unidirectional:i -mask_filter_value:f -scale:f",
      onnx_decomp_mha},
     "query"},
    {{"EmbedLayerNormalization", NULL, 1, 7, 9, 3, "-epsilon:f -mask_index_type:i",
      onnx_decomp_embed_layer_norm},
     "input_ids,segment_ids?,word_embedding,position_embedding,segment_embedding?,gamma,beta"},
    {{"FusedMatMul", NULL, 1, 2, 2, 1, "-alpha:f -transA:i -transB:i -transBatchA:i -transBatchB:i",
      onnx_decomp_fused_matmul},
     "A,B"},
    {{"MatMulIntegerToFloat", NULL, 1, 4, 7, 1, "", onnx_decomp_matmul_integer_to_float},
     "A,B,a_scale,b_scale"},
    {{"DynamicQuantizeMatMul", NULL, 1, 3, 5, 1, "", onnx_decomp_dynamic_quantize_matmul}, "A,B,b_scale"},
};
const int onnx_msft_importer_count = (int)(sizeof onnx_msft_importers / sizeof *onnx_msft_importers);
