#!/usr/bin/python3
"""Rewrite a QDQ model into the input-only QDQ form of other quantization tools.

PyTorch FX and ONNX Runtime's quantize_static (omquant) quantize every op's output, so each Conv,
Gemm or MatMul sits in a DequantizeLinear -> op -> QuantizeLinear island. NVIDIA's quantization
toolkits (and PyTorch 2 export quantization, and hand-written graphs) put QuantizeLinear /
DequantizeLinear pairs on the inputs of the weighted ops only: the op's output stays float, and the
float ops after it (bias, Relu, the residual Add, pooling, the classifier's output) run in float until
the next weighted op's QuantizeLinear.

This script makes that form from a QDQ model: every activation's QuantizeLinear -> DequantizeLinear
pair is kept only for the readers that are a Conv's, Gemm's or MatMul's operand (input 0, or any
input of a MatMul: an activation x activation product); every other reader of the DequantizeLinear
reads the QuantizeLinear's float input instead. Weights (DequantizeLinear of constants) stay. Nodes
nothing reads any more go. A graph output that was a DequantizeLinear's keeps its name.

  models/make_input_qdq.py IN_QDQ.onnx OUT.onnx

Needs python3-onnx. Prints how many readers it moved and how many nodes remain of each kind.
"""
import collections
import sys

import onnx

WEIGHTED = {"Conv", "Gemm", "MatMul"}


def rewrite(model):
    graph = model.graph
    consts = {t.name for t in graph.initializer}
    producer = {o: n for n in graph.node for o in n.output}

    def float_source(v):
        """The float value an activation's DequantizeLinear output v stands for, or None."""
        dq = producer.get(v)
        if dq is None or dq.op_type != "DequantizeLinear":
            return None
        src = dq.input[0]
        while src in producer and producer[src].op_type == "Cast":  # PyTorch's Cast after each Q
            src = producer[src].input[0]
        q = producer.get(src)
        if q is None or q.op_type != "QuantizeLinear" or q.input[0] in consts:
            return None
        return q.input[0]

    moved = 0
    for node in graph.node:
        if node.op_type == "QuantizeLinear" or node.op_type == "DequantizeLinear":
            continue
        for i, v in enumerate(node.input):
            keep = node.op_type in WEIGHTED and (i == 0 or node.op_type == "MatMul")
            src = None if keep else float_source(v)
            if src is not None:
                node.input[i] = src
                moved += 1
    outputs = {o.name for o in graph.output}
    live, nodes = set(outputs), []
    for node in reversed(graph.node):
        if any(o in live for o in node.output):
            nodes.append(node)
            live.update(node.input)
    nodes.reverse()
    del graph.node[:]
    graph.node.extend(nodes)
    kept = [t for t in graph.initializer if t.name in live]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    vi = [v for v in graph.value_info if v.name in live]
    del graph.value_info[:]
    graph.value_info.extend(vi)
    return moved


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    model = onnx.load(sys.argv[1])
    moved = rewrite(model)
    onnx.checker.check_model(model)
    onnx.save(model, sys.argv[2])
    kinds = collections.Counter(n.op_type for n in model.graph.node)
    print(f"{moved} readers moved to the float value -> {sys.argv[2]}: "
          + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))


if __name__ == "__main__":
    main()
