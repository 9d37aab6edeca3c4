/* onnx_conv.h - the convolution family at import (frontend/onnx_conv.c):
 * 1-D Conv as 2-D with H = 1, and ConvTranspose (1-D to 3-D) as a
 * convolution over a zero-inserted input. */
#ifndef FRONTEND_ONNX_CONV_H
#define FRONTEND_ONNX_CONV_H

#include "frontend/onnx_internal.h"

/* Spatial rank of ONNX Conv/ConvTranspose node nd: kernel_shape's length,
 * else the weights' rank - 2; -1 when neither is known. */
int onnx_conv_spatial_rank(onnx_node *nd);
/* Conv with one spatial dim: n (the imported Conv node, reading nd's
 * inputs and writing its output) becomes a 2-D Conv between an Unsqueeze of
 * x and w (axis 2) and a Squeeze of its output. */
status onnx_conv_1d(onnx_node *nd, ir_node *n);
/* ConvTranspose (a decomposition row: no IR node). */
status onnx_decomp_conv_transpose(onnx_node *nd, ir_node *none);

#endif
