/* qdq.h - rewriting a float ONNX model into QDQ form (quant/qdq.c): which
 * tensors and weights are quantized (the plan), and the quantized model
 * written with the protobuf-c code generated from onnx.proto.
 *
 * The form is the one ONNX Runtime's quantizer and PyTorch's QDQ export
 * write, which both ONNX Runtime and atc run:
 *   activations  uint8, asymmetric, per tensor: t -> QuantizeLinear ->
 *                DequantizeLinear -> every reader of t (a graph output
 *                named t stays the float t);
 *   weights      int8, symmetric (zero point 0, [-127, 127]), one scale per
 *                output channel (Conv: axis 0; Gemm: axis 0 with transB,
 *                else 1; MatMul: axis 1): an int8 initializer read through
 *                DequantizeLinear;
 *   biases       int32 with scale s_x * s_w per output channel and zero
 *                point 0 (so the integer bias adds to the int32 sums),
 *                read through DequantizeLinear.
 * Quantized nodes: Conv, Gemm and MatMul (activation inputs, weight, bias,
 * output; an output read only by a Relu or Clip is quantized after that
 * activation, so that atc folds it into the int8 convolution; a MatMul's
 * output read only by an Add of a constant bias [N] is quantized after that
 * Add, which atc folds into the int8 MatMul) and Add (inputs and output),
 * but those named in the skip list; with every_op also the float inputs
 * and outputs of the other ops ONNX Runtime's quantize_static quantizes by
 * default (Mul, Concat, MaxPool, AveragePool, GlobalAveragePool, Resize,
 * Sigmoid, HardSigmoid, Softmax, Transpose, Reshape, Flatten, Squeeze,
 * Unsqueeze, Split, Slice, Pad, LeakyRelu, Where, Gather), so that every
 * activation between them is a QuantizeLinear -> DequantizeLinear pair, as
 * that tool writes a model.
 * Only float32 tensors are quantized.
 *
 * Opset: per-channel DequantizeLinear needs opset 13; a model below it is
 * raised to 13, unless one of its nodes is an op whose inputs or attributes
 * changed by then (Squeeze, Split, Clip, Pad, ...): that is refused, naming
 * the node, as it needs a re-export at opset 13.
 *
 * Ownership: the plan and the written bytes live in the caller's arena;
 * the plan points into the model, which must outlive it.
 */
#ifndef QUANT_QDQ_H
#define QUANT_QDQ_H

#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/status.h"
#include "ir/ir.h"
#include "onnx.pb-c.h"

/* A node whose weight (and bias) are quantized. */
typedef struct oq_node {
  int index;    /* in graph.node */
  int w_input;  /* the weight's input index */
  int w_axis;   /* the weight's output-channel axis */
  int b_input;  /* the bias's input index (an int32 bias), -1 for none */
  int x_tensor; /* plan.tensors index of the activation input 0 (its scale is the bias's), -1 */
} oq_node;

typedef struct oq_plan {
  int ntensors;
  const char **tensors; /* activation tensors to quantize, in graph order (names in the model) */
  int nnodes;
  oq_node *nodes;
} oq_plan;

/* Plans the quantization of m. g is m loaded by the project's loader
 * (onnx_load_*; shapes inferred), which says which tensors are float32.
 * skip: node names left in float; every_op: quantize the every_op ops too. */
status oq_plan_make(const Onnx__ModelProto *m, const ir_graph *g, const char *const *skip, int nskip,
                    int every_op, arena *a, oq_plan *out, diag *d);

/* An activation range [lo, hi] (lo <= 0 <= hi) as uint8 scale and zero
 * point: scale (hi - lo) / 255 (1 for an empty range), zero point
 * round(-lo / scale). */
void oq_act_params(double lo, double hi, float *scale_out, uint8_t *zero_point_out);

/* Writes the QDQ model: m with the plan applied, tensor i's range being
 * [lo[i], hi[i]], packed into *bytes_out (*size_out bytes, in `a`). */
status oq_write(const Onnx__ModelProto *m, const oq_plan *p, const double *lo, const double *hi, arena *a,
                uint8_t **bytes_out, size_t *size_out, diag *d);

#endif
