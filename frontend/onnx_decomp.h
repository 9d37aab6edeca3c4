/* onnx_decomp.h - decompositions at import: one ONNX node -> a small IR subgraph.
 *
 * Many ONNX ops are defined by ONNX as functions of simpler ops
 * (LayerNormalization, the losses, Attention, ...). Their importers build that
 * body out of IR ops the rest of the compiler already runs, with the builder
 * below. An importer row in onnx_ops.c whose IR op is NULL is a decomposition:
 * the generic code checks arity and attributes as for any row, then calls the
 * row's function (declared here) with no IR node; the function does the rest.
 *
 * Ownership. Everything the builder makes (nodes, temporaries, constants) is
 * allocated in the graph's arena and owned by the graph, like any imported
 * node. The ONNX node's output values (nd->out) belong to the loader; the
 * builder only makes its final nodes produce them (dc_output). A `dc` itself
 * lives on the importer's stack for one node.
 *
 * Names. Nodes and temporaries are named "<base>/<Op><k>" and constants
 * "<base>/c<k>", where base is the ONNX node's name (or its first named output's
 * name when unnamed), so messages and profiles point back at the ONNX node.
 *
 * Errors. The first failure (out of memory, or a case the decomposition
 * refuses, via dc_fail) is recorded in the builder; every later call does
 * nothing and returns NULL, so a decomposition is written as straight-line
 * code and returns dc_end(), which reports that first failure. dc_end also
 * refuses an ONNX output that something reads but no dc_output produced.
 *
 * Data types. The builder sets each temporary's dtype when it makes the node
 * (onnx_result_dtype), so a decomposition can make constants of the right
 * dtype. The ONNX node's inputs were inferred before it (onnx_load.c, step 4);
 * dc_dtype fails, naming the value, when one's dtype still is not known.
 */
#ifndef FRONTEND_ONNX_DECOMP_H
#define FRONTEND_ONNX_DECOMP_H

#include "frontend/onnx_internal.h"

enum { DC_MAX_OUTPUTS = 32 };

typedef struct dc {
  onnx_node *nd;
  ir_graph *g;
  const char *base;                 /* prefix of every generated name */
  int first_node;                   /* g->nodes index of the first node this builder made */
  int inferred;                     /* g->nodes before this index are inferred (dc_infer) */
  int count;                        /* names given out so far */
  status st;                        /* the first failure, ST_OK while none */
  ir_value *result[DC_MAX_OUTPUTS]; /* what dc_output named for each ONNX output */
} dc;

void dc_begin(dc *b, onnx_node *nd);
/* Infers the nodes made since the last dc_infer (dtypes, dims, small
 * constants folded, as the loader does after every importer), for a builder
 * that reads the shapes of its own results while it builds. */
void dc_infer(dc *b);
/* Wires the results named by dc_output to the ONNX outputs; ST_OK when every
 * used ONNX output was produced, else the first failure. */
status dc_end(dc *b);
/* Records "node 'name' (Op): <message>" as the builder's failure (if it is the
 * first) and returns NULL, so `return dc_fail(...)` works in value helpers. */
ir_value *dc_fail(dc *b, status code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The same, returning the builder's (first) failure: `return dc_refuse(...)`. */
status dc_refuse(dc *b, status code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* --- the ONNX node's inputs and attributes (kinds were checked against the row's spec) */

ir_value *dc_in(dc *b, int i); /* input i, or NULL when absent or omitted */
int dc_has_attr(dc *b, const char *name);
int64_t dc_attr_int(dc *b, const char *name, int64_t def);
double dc_attr_float(dc *b, const char *name, double def);
int dc_attr_string_is(dc *b, const char *name, const char *def, const char *s);
/* INTS attribute: copies up to max values into out and returns the count;
 * -1 when absent; a failure when there are more than max. */
int dc_attr_ints(dc *b, const char *name, int64_t *out, int max);
/* The dtype of v; a failure naming v when it is not known yet. */
dtype dc_dtype(dc *b, const ir_value *v);
/* Whether ONNX output k exists and something reads it. */
int dc_output_used(dc *b, int k);

/* --- constants (in the graph arena) */

ir_value *dc_scalar(dc *b, dtype dt, double v);    /* rank 0, any numeric dtype or bool */
ir_value *dc_ints(dc *b, int n, const int64_t *v); /* 1-D int64 */
ir_value *dc_const(dc *b, dtype dt, int rank, const int64_t *dims, const void *data);

/* --- nodes. dc_node makes a node with one fresh output; set attributes on it,
 * then dc_val gives its output with the dtype set. */

ir_node *dc_node(dc *b, ir_op op, int nin, ir_value *const *in);
/* dc_node for the case where the whole ONNX node is one IR node: it keeps the
 * ONNX node's own name (as a row with an IR op would), so messages and
 * profiles read as for any imported node. */
ir_node *dc_node_whole(dc *b, ir_op op, int nin, ir_value *const *in);
ir_value *dc_val(dc *b, ir_node *n);
/* A node with nout (at most the op's max_out in ops.def) fresh outputs, each of the node's
 * result dtype: read them as n->out[k]. */
ir_node *dc_node_outs(dc *b, ir_op op, int nin, ir_value *const *in, int nout);
void dc_set_int(dc *b, ir_node *n, const char *name, int64_t v);
void dc_set_float(dc *b, ir_node *n, const char *name, double v);
void dc_set_string(dc *b, ir_node *n, const char *name, const char *v);
void dc_set_ints(dc *b, ir_node *n, const char *name, int count, const int64_t *v);

ir_value *dc_op1(dc *b, ir_op op, ir_value *x);
ir_value *dc_op2(dc *b, ir_op op, ir_value *x, ir_value *y);
ir_value *dc_where(dc *b, ir_value *cond, ir_value *x, ir_value *y);
ir_value *dc_cast(dc *b, ir_value *x, dtype to); /* x itself when it already has dtype `to` */
ir_value *dc_clip(dc *b, ir_value *x, double lo,
                  double hi); /* Clip with constant bounds (attributes min, max) */
/* Reduce{mode} over axes (count 0: every axis), keepdims 0|1. */
ir_value *dc_reduce(dc *b, const char *mode, ir_value *x, int count, const int64_t *axes, int keepdims);
/* x [..., m, k] times y [..., k, n] (equal ranks >= 2): MatMul on the cube for
 * f32 and f16; other dtypes (f64, integers), which the cube does not take, as
 * ReduceSum(Unsqueeze(x, -1) * Unsqueeze(y, -3), axis -2) on the vector unit. */
ir_value *dc_matmul(dc *b, ir_value *x, ir_value *y);
/* ArgMax along one axis (the first maximum), int64. */
ir_value *dc_argmax(dc *b, ir_value *x, int64_t axis, int keepdims);
ir_value *dc_reshape(dc *b, ir_value *x, ir_value *shape); /* allowzero 0 */
ir_value *dc_reshape_to(dc *b, ir_value *x, int rank, const int64_t *dims);
ir_value *dc_unsqueeze(dc *b, ir_value *x, int count, const int64_t *axes);
ir_value *dc_squeeze(dc *b, ir_value *x, int count, const int64_t *axes);
ir_value *dc_transpose(dc *b, ir_value *x, int count, const int64_t *perm);
ir_value *dc_softmax(dc *b, ir_value *x, int64_t axis, int log);
ir_value *dc_concat(dc *b, int64_t axis, int count, ir_value *const *in);
ir_value *dc_slice(dc *b, ir_value *x, int count, const int64_t *starts, const int64_t *ends,
                   const int64_t *axes);
/* dc_slice with a step per axis (steps NULL: all 1). */
ir_value *dc_slice_steps(dc *b, ir_value *x, int count, const int64_t *starts, const int64_t *ends,
                         const int64_t *axes, const int64_t *steps);
ir_value *dc_gather(dc *b, ir_value *x, ir_value *indices, int64_t axis);
ir_value *dc_gather_elements(dc *b, ir_value *x, ir_value *indices, int64_t axis);
ir_value *dc_expand(dc *b, ir_value *x, ir_value *shape); /* shape: a 1-D int64 value */
/* Constant-mode Pad: pads holds rank begins, then rank ends. */
ir_value *dc_pad(dc *b, ir_value *x, int rank, const int64_t *pads, double value);
ir_value *dc_iota(dc *b, dtype dt, ir_value *n); /* Range(0, n, 1), n a scalar of dtype dt */
ir_value *dc_shape(dc *b, ir_value *x);

/* Marks every node this builder made so far precision = "fp32" (ir/ops.def):
 * they compute in their original dtypes under every precision mode. For
 * the decompositions of ops whose results are integers defined by exact
 * arithmetic, which fp16 would change. */
void dc_keep_dtype(dc *b);

/* Makes ONNX output k be v (v stays usable for building). At dc_end the node
 * producing v (when this builder made it and v is not another output)
 * produces out[k] instead, and this builder's readers of v follow; otherwise
 * an Identity copies v to it. No-op when output k is absent. */
void dc_output(dc *b, int k, ir_value *v);

/* --- the decompositions (the `fn` of importer rows with a NULL IR op); the
 * ir_node argument is always NULL. */

/* onnx_decomp_norm.c */
status onnx_decomp_layer_norm(onnx_node *nd, ir_node *none);
status onnx_decomp_rms_norm(onnx_node *nd, ir_node *none);
status onnx_decomp_group_norm(onnx_node *nd, ir_node *none);
status onnx_decomp_instance_norm(onnx_node *nd, ir_node *none);
status onnx_decomp_mvn(onnx_node *nd, ir_node *none);
status onnx_decomp_lp_norm(onnx_node *nd, ir_node *none);
status onnx_decomp_batchnorm(onnx_node *nd, ir_node *none);
/* LayerNormalization (rms 0) or RMSNormalization (rms 1) of x over its axes
 * from `axis` on, as those ops' decompositions build it (the form
 * passes/norm.c fuses), times scale, plus bias when not NULL. stash_attr:
 * the ONNX node's attribute stash_type applies (else float32). *mean (NULL
 * for rms) and *inv (1/sqrt(var + eps)), keepdims, when not NULL. */
ir_value *dc_norm(dc *b, ir_value *x, ir_value *scale, ir_value *bias, int64_t axis, double eps, int rms,
                  int stash_attr, ir_value **mean, ir_value **inv);
/* onnx_decomp_loss.c */
status onnx_decomp_nll_loss(onnx_node *nd, ir_node *none);
status onnx_decomp_sce_loss(onnx_node *nd, ir_node *none);
/* onnx_decomp_misc.c */
status onnx_decomp_hardmax(onnx_node *nd, ir_node *none);
status onnx_decomp_dropout(onnx_node *nd, ir_node *none);
status onnx_decomp_center_crop_pad(onnx_node *nd, ir_node *none);
status onnx_decomp_swish(onnx_node *nd, ir_node *none);
status onnx_decomp_swiglu(onnx_node *nd, ir_node *none);
status onnx_decomp_shrink(onnx_node *nd, ir_node *none);
status onnx_decomp_lrn(onnx_node *nd, ir_node *none);
status onnx_decomp_window(onnx_node *nd, ir_node *none);
status onnx_decomp_mel_weight_matrix(onnx_node *nd, ir_node *none);
status onnx_decomp_causal_conv(onnx_node *nd, ir_node *none);
status onnx_decomp_eye_like(onnx_node *nd, ir_node *none);
status onnx_decomp_det(onnx_node *nd, ir_node *none);
status onnx_decomp_reverse_sequence(onnx_node *nd, ir_node *none);
status onnx_decomp_max_unpool(onnx_node *nd, ir_node *none);
status onnx_decomp_col2im(onnx_node *nd, ir_node *none);
status onnx_decomp_dft(onnx_node *nd, ir_node *none);
status onnx_decomp_stft(onnx_node *nd, ir_node *none);
status onnx_decomp_maxpool(onnx_node *nd, ir_node *none);
/* onnx_decomp_experimental.c */
status onnx_decomp_image_scaler(onnx_node *nd, ir_node *none);
status onnx_decomp_scale(onnx_node *nd, ir_node *none);
status onnx_decomp_affine(onnx_node *nd, ir_node *none);
status onnx_decomp_scaled_tanh(onnx_node *nd, ir_node *none);
status onnx_decomp_parametric_softplus(onnx_node *nd, ir_node *none);
status onnx_decomp_crop(onnx_node *nd, ir_node *none);
/* onnx_decomp_einsum.c */
status onnx_decomp_einsum(onnx_node *nd, ir_node *none);
/* onnx_decomp_grid.c */
status onnx_decomp_grid_sample(onnx_node *nd, ir_node *none);
status onnx_decomp_affine_grid(onnx_node *nd, ir_node *none);
status onnx_decomp_roi_align(onnx_node *nd, ir_node *none);
status onnx_decomp_deform_conv(onnx_node *nd, ir_node *none);
/* onnx_decomp_quant.c */
status onnx_decomp_quantize(onnx_node *nd, ir_node *none);
status onnx_decomp_dequantize(onnx_node *nd, ir_node *none);
status onnx_decomp_dynamic_quantize(onnx_node *nd, ir_node *none);
status onnx_decomp_qlinear_conv(onnx_node *nd, ir_node *none);
status onnx_decomp_qlinear_matmul(onnx_node *nd, ir_node *none);
status onnx_decomp_conv_integer(onnx_node *nd, ir_node *none);
status onnx_decomp_matmul_integer(onnx_node *nd, ir_node *none);
/* The quantized ops' operands, shared with onnx_decomp_qms.c (com.microsoft). DequantizeLinear
 * of the 8-bit operand `name` (x; its scale s and zero point zp, named
 * "<name>_scale", "<name>_zero_point" in messages) checked: x and s present,
 * x int8 or uint8, s float, finite and nonzero, zp of x's type; per tensor
 * when axis < 0, else per tensor or along axis. */
ir_value *dc_dq_operand(dc *b, ir_value *x, ir_value *s, ir_value *zp, int64_t axis, const char *name);
/* QuantizeLinear of a quantized op's float result y with the per-tensor
 * scale s (required) and zero point zp ("<name>_scale", "<name>_zero_point"),
 * the output type zp's, `def` without zp. */
ir_value *dc_q_result(dc *b, ir_value *y, ir_value *s, ir_value *zp, const char *name, dtype def);
/* onnx_decomp_rnn.c */
status onnx_decomp_rnn(onnx_node *nd, ir_node *none);
status onnx_decomp_gru(onnx_node *nd, ir_node *none);
status onnx_decomp_lstm(onnx_node *nd, ir_node *none);
/* onnx_decomp_attn.c */
/* 0 where allowed, `masked` elsewhere (-INFINITY: an attention mask), in dtype dt. */
ir_value *dc_bias_where(dc *b, ir_value *allowed, dtype dt, double masked);
/* A 3-D [B, S, H*D] input as [B, H, S, D] (h heads). */
ir_value *dc_split_heads(dc *b, ir_value *x, int64_t h);
status onnx_decomp_rotary(onnx_node *nd, ir_node *none);
status onnx_decomp_attention(onnx_node *nd, ir_node *none);
status onnx_decomp_linear_attention(onnx_node *nd, ir_node *none);
/* onnx_decomp_msft.c: ONNX Runtime's transformer contrib ops; SimplifiedLayerNormalization is
 * also a default-domain row (ONNX Runtime registers it there) */
status onnx_decomp_simplified_layer_norm(onnx_node *nd, ir_node *none);
/* onnx_control.c: If, Loop and Scan, unrolled or selected at import */
status onnx_import_if(onnx_node *nd, ir_node *none);
status onnx_import_loop(onnx_node *nd, ir_node *none);
status onnx_import_scan(onnx_node *nd, ir_node *none);
/* onnx_seq.c: the sequence ops, resolved at import into lists of tensors */
status onnx_import_sequence_empty(onnx_node *nd, ir_node *none);
status onnx_import_sequence_construct(onnx_node *nd, ir_node *none);
status onnx_import_split_to_sequence(onnx_node *nd, ir_node *none);
status onnx_import_sequence_insert(onnx_node *nd, ir_node *none);
status onnx_import_sequence_erase(onnx_node *nd, ir_node *none);
status onnx_import_sequence_at(onnx_node *nd, ir_node *none);
status onnx_import_sequence_length(onnx_node *nd, ir_node *none);
status onnx_import_concat_from_sequence(onnx_node *nd, ir_node *none);

#endif
