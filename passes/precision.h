/* precision.h - the dtype the precision pass gives each node's floating-point
 * work, shared by passes/precision.c (which retypes values) and
 * passes/layout.c (which inserts TransData where a producer's dtype differs
 * from what a consumer computes in, e.g. at graph inputs and outputs, which
 * keep the user's dtype).
 */
#ifndef PASSES_PRECISION_H
#define PASSES_PRECISION_H

#include "common/om_format.h"
#include "ir/ir.h"

/* 1 for f32 and f16, the only dtypes the lowering passes move around. */
int precision_is_float(int dt);

/* The dtype node n computes its floating-point activations in under
 * precision p: DT_FLOAT16 for ops with fp16 policy ALWAYS/FOLLOW under the
 * fp16 modes (Softmax excepted under allow_mix_precision), otherwise the
 * dtype of its first output as the frontend typed it. */
int precision_node_dtype(const ir_node *n, om_precision p);

#endif
