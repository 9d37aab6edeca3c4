#!/usr/bin/python3
"""Rewrite a float ONNX model into ONNX Runtime's dynamic-quantization form (quantize_dynamic's output).

Every MatMul whose B is a constant 2-D initializer becomes

  x -> DynamicQuantizeLinear -> (x_q uint8, x_scale, x_zero_point)
  MatMulInteger(x_q, W_q, x_zero_point, W_zero_point) -> Cast(float) -> Mul(., x_scale * W_scale)

with W_q int8 symmetric (zero point 0, values in [-127, 127]), one scale per tensor, or one per
column with --per-channel. As quantize_dynamic does, a tensor that several MatMuls read (Q, K and V)
is quantized once: one DynamicQuantizeLinear per tensor. The other nodes stay as they are (a MatMul's
bias Add follows the Mul).

  models/make_dynamic_quant.py models/out/transformer_encoder.onnx te_dyn.onnx [--per-channel]

Needs python3-onnx and numpy. Prints how many MatMuls it rewrote.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, version_converter


def weight_scale(w, per_channel, channel_axis=1):
    """The symmetric int8 scale of w: max |w| / 127 per tensor or per channel along channel_axis (a
    MatMul's columns, axis 1; a Conv's output channels, axis 0), never 0."""
    others = tuple(a for a in range(w.ndim) if a != channel_axis)
    top = np.abs(w).max(axis=others) if per_channel else np.array(np.abs(w).max())
    return (np.maximum(top, 1e-8) / 127.0).astype(np.float32)


def quantize_weight(w, per_channel, channel_axis=1):
    """w as int8 symmetric (values in [-127, 127]) and its scale (weight_scale)."""
    s = weight_scale(w, per_channel, channel_axis)
    shape = [1] * w.ndim
    shape[channel_axis] = -1
    wq = np.clip(np.rint(w / s.reshape(shape) if per_channel else w / s), -127, 127).astype(np.int8)
    return wq, s


def quantize_input(nodes, quantized, x, p):
    """The name prefix of x's DynamicQuantizeLinear outputs (_xq, _xs, _xzp), appending the node to nodes
    the first time x is quantized: one per tensor, as quantize_dynamic writes them."""
    if x not in quantized:
        quantized[x] = p
        nodes.append(helper.make_node("DynamicQuantizeLinear", [x], [p + "_xq", p + "_xs", p + "_xzp"],
                                      name=p + "_DQL"))
    return quantized[x]


def drop_unused_initializers(graph):
    used = {i for n in graph.node for i in n.input}
    kept = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)


def rewrite(model, per_channel):
    graph = model.graph
    consts = {t.name: t for t in graph.initializer}
    nodes, count, quantized = [], 0, {}
    for node in graph.node:
        b = consts.get(node.input[1]) if node.op_type == "MatMul" else None
        if b is None or len(b.dims) != 2:
            nodes.append(node)
            continue
        wq, s = quantize_weight(numpy_helper.to_array(b).astype(np.float32), per_channel)
        p = f"dq{count}"
        count += 1
        graph.initializer.extend([numpy_helper.from_array(wq, p + "_W"), numpy_helper.from_array(s, p + "_Ws"),
                                  numpy_helper.from_array(np.zeros(s.shape, np.int8), p + "_Wzp")])
        x = quantize_input(nodes, quantized, node.input[0], p)
        nodes += [
            helper.make_node("MatMulInteger", [x + "_xq", p + "_W", x + "_xzp", p + "_Wzp"], [p + "_i32"],
                             name=p + "_MMI"),
            helper.make_node("Cast", [p + "_i32"], [p + "_f"], to=TensorProto.FLOAT, name=p + "_Cast"),
            helper.make_node("Mul", [x + "_xs", p + "_Ws"], [p + "_s"], name=p + "_ScaleMul"),
            helper.make_node("Mul", [p + "_f", p + "_s"], [node.output[0]], name=p + "_Mul"),
        ]
    del graph.node[:]
    graph.node.extend(nodes)
    drop_unused_initializers(graph)
    return count


def run_cli(doc, rewrite, what, min_opset=None):
    """The scripts' command line: IN.onnx OUT.onnx [--per-channel]; the model converted to min_opset first
    when its default-domain opset is below it."""
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        sys.exit(doc)
    model = onnx.load(args[0])
    if min_opset and next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")) < min_opset:
        model = version_converter.convert_version(model, min_opset)
    count = rewrite(model, "--per-channel" in sys.argv)
    onnx.checker.check_model(model)
    onnx.save(model, args[1])
    dqls = sum(n.op_type == "DynamicQuantizeLinear" for n in model.graph.node)
    print(f"{count} {what} rewritten ({dqls} DynamicQuantizeLinear) -> {args[1]}")


if __name__ == "__main__":
    run_cli(__doc__, rewrite, "MatMuls")
