/* pipeline.c - the order of the passes, in one array (see pass.h).
 *
 *   shape_infer  dims and dtypes of every value, from --input_shape
 *   constfold    evaluates nodes whose inputs are all constant (shape arithmetic)
 *   dce          drops nodes whose outputs nothing reads, and Identity
 *   qconv        DQ -> Conv -> Q islands of a QDQ model -> one int8 QConv
 *   qmatmul      QMatMul -> Cast -> Mul(scale) [-> Add(bias)] -> one QMatMul with its f32 epilogue,
 *                ConvInteger's QConv likewise [-> Relu | Clip]; the DynQuants of one x -> one
 *   qsink        DQ -> Concat -> channel shuffle / Slices: the int8 values move, one DQ per channel after
 *   qfold        DequantizeLinear / QuantizeLinear of constants (int8 weights) -> constants
 *   norm         decomposed LayerNorm / RMSNorm (+ residual Add) -> one LayerNorm
 *   attention    MatMul, scale, masks, Softmax, MatMul -> one FusedAttention
 *   lower_gemm   Gemm -> MatMul (one form for every matrix product)
 *   bn_fold      BatchNormalization after Conv -> Conv weights and bias
 *   conv_taps    a Conv's kernel taps that read only padding are dropped
 *   conv_patches a Conv over non-overlapping patches of few channels -> MatMul
 *   fuse         Conv/MatMul + bias + residual Add + Relu/Clip -> one Conv/MatMul
 *   vectorize    other elementwise ops -> vector programs, chains fused into one
 *   precision    --precision_mode: fp16 activations and weights where allowed
 *   qlut         a vector program from one int8 tensor to another -> a 256-entry table
 *   layout       NC1HWC0 activations, FRACTAL_Z weights, TransData at edges
 *   epilogue     a Conv's or MatMul's one reader, a vector program, runs in its tiles
 *   tiling       cube/vector tiles per the SoC's buffers, block_dim over AI cores
 *   memplan      one workspace, liveness-based offsets
 *   emit         the task list and the om package
 *
 * norm, attention, bn_fold, conv_patches, fuse, vectorize's merging and
 * epilogue are the fusion rules
 * (fusion_rules below); atc can turn each off.
 *
 * Import (frontend/onnx_load.c) has already applied the first two, best
 * effort, with the same rules (ir_shape_try, ir/shape.h): every value whose
 * inputs were known got its shape and dtype, and every node whose inputs
 * were constants and whose result is under 64 KiB folded, so that importers
 * could read ranks and the constants of shape arithmetic. shape_infer and
 * constfold run again over the whole graph: they recompute and check every
 * shape, normalise attributes, report errors, and fold the larger results.
 */
#include "pass.h"

#include <string.h>

const pass pass_pipeline[] = {
    {"shape_infer", pass_shape_infer},
    {"constfold", pass_constfold},
    {"dce", pass_dce},
    {"qconv", pass_qconv},
    {"qmatmul", pass_qmatmul},
    {"qsink", pass_qsink},
    {"qfold", pass_qfold},
    {"norm", pass_norm},
    {"attention", pass_attention},
    {"lower_gemm", pass_lower_gemm},
    {"bn_fold", pass_bn_fold},
    {"conv_taps", pass_conv_taps},
    {"conv_patches", pass_conv_patches},
    {"fuse", pass_fuse},
    {"vectorize", pass_vectorize},
    {"precision", pass_precision},
    {"qlut", pass_qlut},
    {"layout", pass_layout},
    {"epilogue", pass_epilogue},
    {"tiling", pass_tiling},
    {"memplan", pass_memplan},
    {"emit", pass_emit},
};
const int pass_pipeline_count = (int)(sizeof pass_pipeline / sizeof *pass_pipeline);

const fusion_rule fusion_rules[] = {
    {"ConvBatchnormFusionPass", FUSION_CONV_BN,
     "BatchNormalization after a Conv folds into the Conv's weights and bias"},
    {"ConvAddReluFusionPass", FUSION_CONV_ADD_RELU,
     "bias Add, residual Add and Relu/Clip after a Conv run inside it"},
    {"VectorProgramFusionPass", FUSION_VECTOR_PROGRAM, "chains of elementwise ops become one vector program"},
    {"ConvEpilogueFusionPass", FUSION_CONV_EPILOGUE,
     "a vector program after a Conv runs in the Conv's tiles (UB fusion)"},
    {"ConvInputScaleFusionPass", FUSION_CONV_INPUT_SCALE,
     "a per-channel Mul (squeeze-excitation) before a 1x1 Conv scales the input the Conv stages"},
    {"MatMulAddActFusionPass", FUSION_MATMUL_ADD_ACT,
     "bias Add, residual Add and Relu/Clip after a MatMul or Gemm run inside it"},
    {"MatMulEpilogueFusionPass", FUSION_MATMUL_EPILOGUE,
     "a vector program after a MatMul or Gemm runs in the MatMul's tiles (UB fusion)"},
    {"TransposeMatMulFusionPass", FUSION_MATMUL_TRANSPOSE,
     "a Transpose feeding a MatMul is read through permuted strides instead of copied"},
    {"LayerNormFusionPass", FUSION_LAYERNORM,
     "LayerNorm and RMSNorm chains (and a residual Add feeding them) become one vector task"},
    {"AttentionFusionPass", FUSION_ATTENTION,
     "MatMul(q, k^T), scale, masks, Softmax and MatMul(., v) become one task that never stores the scores"},
    {"AttentionViewFusionPass", FUSION_ATTENTION_VIEW,
     "Slice / Reshape / Transpose chains around a fused attention become strided views of its operands"},
    {"ConvPatchMatMulFusionPass", FUSION_CONV_PATCHES,
     "a Conv whose stride is its kernel, over fewer than 16 channels with kernel rows of 16 or more, "
     "becomes a MatMul over its patches, with the Reshape / Transpose chain after it that keeps the order"},
};
const int fusion_rule_count = (int)(sizeof fusion_rules / sizeof *fusion_rules);

const pass *pass_find(const char *name) {
  for (int i = 0; i < pass_pipeline_count; i++)
    if (strcmp(pass_pipeline[i].name, name) == 0) return &pass_pipeline[i];
  return NULL;
}
