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
from onnx import TensorProto, helper, numpy_helper


def weight_scale(w, per_channel):
    """The symmetric int8 scale of w: max |w| / 127 per tensor or per column (never 0)."""
    top = np.abs(w).max(axis=0) if per_channel else np.array(np.abs(w).max())
    return (np.maximum(top, 1e-8) / 127.0).astype(np.float32)


def rewrite(model, per_channel):
    graph = model.graph
    consts = {t.name: t for t in graph.initializer}
    nodes, count, quantized = [], 0, {}
    for node in graph.node:
        b = consts.get(node.input[1]) if node.op_type == "MatMul" else None
        if b is None or len(b.dims) != 2:
            nodes.append(node)
            continue
        w = numpy_helper.to_array(b).astype(np.float32)
        s = weight_scale(w, per_channel)
        wq = np.clip(np.rint(w / s), -127, 127).astype(np.int8)
        p = f"dq{count}"
        count += 1
        graph.initializer.extend([numpy_helper.from_array(wq, p + "_W"), numpy_helper.from_array(s, p + "_Ws"),
                                  numpy_helper.from_array(np.zeros(s.shape, np.int8), p + "_Wzp")])
        if node.input[0] not in quantized:
            quantized[node.input[0]] = p
            nodes.append(helper.make_node("DynamicQuantizeLinear", [node.input[0]],
                                          [p + "_xq", p + "_xs", p + "_xzp"], name=p + "_DQL"))
        x = quantized[node.input[0]]
        nodes += [
            helper.make_node("MatMulInteger", [x + "_xq", p + "_W", x + "_xzp", p + "_Wzp"], [p + "_i32"],
                             name=p + "_MMI"),
            helper.make_node("Cast", [p + "_i32"], [p + "_f"], to=TensorProto.FLOAT, name=p + "_Cast"),
            helper.make_node("Mul", [x + "_xs", p + "_Ws"], [p + "_s"], name=p + "_ScaleMul"),
            helper.make_node("Mul", [p + "_f", p + "_s"], [node.output[0]], name=p + "_Mul"),
        ]
    del graph.node[:]
    graph.node.extend(nodes)
    used = {i for n in graph.node for i in n.input}
    kept = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    return count


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        sys.exit(__doc__)
    model = onnx.load(args[0])
    count = rewrite(model, "--per-channel" in sys.argv)
    onnx.checker.check_model(model)
    onnx.save(model, args[1])
    dqls = sum(n.op_type == "DynamicQuantizeLinear" for n in model.graph.node)
    print(f"{count} MatMuls rewritten ({dqls} DynamicQuantizeLinear) -> {args[1]}")


if __name__ == "__main__":
    main()
