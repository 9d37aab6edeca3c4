/* precision.h - the dtype the precision pass gives each node's floating-point
 * work, shared by passes/precision.c (which retypes values) and
 * passes/layout.c (which inserts TransData where a producer's dtype differs
 * from what a consumer computes in, e.g. at graph inputs and outputs, which
 * keep the user's dtype), and the default mixed-precision lists atc's help
 * prints and --modify_mixlist edits.
 */
#ifndef PASSES_PRECISION_H
#define PASSES_PRECISION_H

#include "common/om_format.h"
#include "ir/ir.h"
#include "passes/pass.h"

/* 1 for f32 and f16, the only dtypes the lowering passes move around. */
int precision_is_float(int dt);

/* The dtype node n computes its floating-point activations in under
 * precision p: DT_FLOAT16 for ops with fp16 policy ALWAYS/FOLLOW under the
 * fp16 modes, unless the node is kept (its "precision" attribute is "fp32");
 * otherwise, and for a kept node, the dtype of its first output as the
 * frontend typed it (f32 in an f32 model; an f16 model's kept nodes stay
 * f16, as ATC's keep_dtype keeps the original dtype). */
int precision_node_dtype(const ir_node *n, om_precision p);
/* 1 when node n keeps an f32 output while it computes in precision_node_dtype
 * (its "precision" attribute is "f32_out", ir/ops.def: a MatMul of fp16
 * operands whose f32 sums are the result). */
int precision_f32_out(const ir_node *n);

/* allow_mix_precision's default lists, by op type (ONNX op types and the
 * IR's own: LayerNorm, FusedAttention): the list op_type is on (GRAY when
 * unlisted), and the i-th listed op type with its list (NULL past the end). */
prec_list precision_default_list(const char *op_type);
const char *precision_default_entry(int i, prec_list *list_out);

#endif
