#!/usr/bin/python3
"""Rewrite a float CNN into ONNX Runtime's dynamic-quantization form for Conv (quantize_dynamic's output).

Every 2-D Conv whose weights are a constant initializer becomes

  x -> DynamicQuantizeLinear -> (x_q uint8, x_scale, x_zero_point)
  ConvInteger(x_q, W_q, x_zero_point, W_zero_point) -> Cast(float) -> Mul(., x_scale * W_scale)
  [-> Add(., Reshape(bias, [1, -1, 1, 1]))]

with the Conv's attributes, W_q int8 symmetric (values in [-127, 127], zero point 0: ONNX Runtime's
ConvInteger takes a weight zero point per tensor), one scale per tensor, or with --per-channel one per
output channel, stored [M, 1, 1] so that x_scale * W_scale broadcasts along the output's channels. A
tensor that several Convs read (SqueezeNet's expand 1x1 and 3x3) is quantized once. The other nodes
(Relu, Clip, pools, Adds, the classifier's Gemm) stay float, as quantize_dynamic leaves them with
op_types_to_quantize=['Conv']. A model of an opset below 11 (DynamicQuantizeLinear's) is first converted
to opset 11 with onnx's version converter, as quantize_dynamic asks of its input.

  models/make_dynamic_quant_conv.py models/out/resnet18.onnx r18_dyn.onnx [--per-channel]

Needs python3-onnx and numpy. Prints how many Convs it rewrote.
"""

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from make_dynamic_quant import drop_unused_initializers, quantize_input, quantize_weight, run_cli


def rewrite(model, per_channel):
    graph = model.graph
    consts = {t.name: t for t in graph.initializer}
    nodes, count, quantized = [], 0, {}
    for node in graph.node:
        w = consts.get(node.input[1]) if node.op_type == "Conv" else None
        if w is None or len(w.dims) != 4:
            nodes.append(node)
            continue
        wq, s = quantize_weight(numpy_helper.to_array(w).astype(np.float32), per_channel, channel_axis=0)
        if per_channel:
            s = s.reshape(-1, 1, 1)
        p = f"cq{count}"
        count += 1
        graph.initializer.extend([numpy_helper.from_array(wq, p + "_W"), numpy_helper.from_array(s, p + "_Ws"),
                                  numpy_helper.from_array(np.array(0, np.int8), p + "_Wzp")])
        x = quantize_input(nodes, quantized, node.input[0], p)
        bias = len(node.input) > 2 and node.input[2]
        scaled = p + "_scaled" if bias else node.output[0]
        nodes += [
            helper.make_node("ConvInteger", [x + "_xq", p + "_W", x + "_xzp", p + "_Wzp"], [p + "_i32"],
                             name=p + "_ConvInteger", **{a.name: helper.get_attribute_value(a) for a in node.attribute}),
            helper.make_node("Cast", [p + "_i32"], [p + "_f"], to=TensorProto.FLOAT, name=p + "_Cast"),
            helper.make_node("Mul", [x + "_xs", p + "_Ws"], [p + "_s"], name=p + "_ScaleMul"),
            helper.make_node("Mul", [p + "_f", p + "_s"], [scaled], name=p + "_Mul"),
        ]
        if bias:
            graph.initializer.append(numpy_helper.from_array(np.array([1, -1, 1, 1], np.int64), p + "_bshape"))
            nodes += [
                helper.make_node("Reshape", [node.input[2], p + "_bshape"], [p + "_b"], name=p + "_BiasReshape"),
                helper.make_node("Add", [scaled, p + "_b"], [node.output[0]], name=p + "_BiasAdd"),
            ]
    del graph.node[:]
    graph.node.extend(nodes)
    drop_unused_initializers(graph)
    return count


if __name__ == "__main__":
    run_cli(__doc__, rewrite, "Convs", min_opset=11)
