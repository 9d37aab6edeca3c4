#!/usr/bin/python3
"""FLOPs of an ONNX model's convolutions and matrix products, for bench/run.sh.

Fixes every symbolic dim of the graph inputs' first axis to --batch, runs
onnx.shape_inference, then counts 2 x multiply-accumulates of each

  Conv     N x Cout x prod(output spatial) x (Cin / group) x prod(kernel)
  Gemm     M x N x K                         (transA / transB respected)
  MatMul   prod(broadcast batch dims) x M x N x K

Everything else (BatchNorm, activations, pooling, elementwise, bias adds) is
left out: these are the cube unit's work, the figure GFLOP/s is quoted
against. Prints one line:  flops: <total> (conv <c>, gemm <g>, matmul <m>)
Exit 1 with a message when a counted node has an unknown shape.

Usage: bench/flops.py MODEL.onnx [--batch N]
"""
import argparse
import sys

import onnx
from onnx import shape_inference


def dims_of(vi):
    out = []
    for d in vi.type.tensor_type.shape.dim:
        out.append(d.dim_value if d.HasField("dim_value") else None)
    return out


def prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--batch", type=int, default=1)
    args = ap.parse_args()

    model = onnx.load(args.model)
    inits = {i.name for i in model.graph.initializer}
    for inp in model.graph.input:
        if inp.name in inits:
            continue
        dims = inp.type.tensor_type.shape.dim
        if len(dims) and not dims[0].HasField("dim_value"):
            dims[0].dim_value = args.batch
    model = shape_inference.infer_shapes(model, strict_mode=False)

    shapes = {}
    for vi in list(model.graph.input) + list(model.graph.value_info) + list(model.graph.output):
        shapes[vi.name] = dims_of(vi)
    for init in model.graph.initializer:
        shapes[init.name] = list(init.dims)

    def shape(name, node):
        s = shapes.get(name)
        if s is None or any(d is None for d in s):
            sys.exit(f"flops: {args.model}: node '{node.name}' ({node.op_type}): no static shape for '{name}'")
        return s

    conv = gemm = matmul = 0
    for node in model.graph.node:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        if node.op_type == "Conv":
            w = shape(node.input[1], node)
            y = shape(node.output[0], node)
            # w: Cout x Cin/group x k...; y: N x Cout x spatial...
            conv += 2 * y[0] * y[1] * prod(y[2:]) * w[1] * prod(w[2:])
        elif node.op_type == "Gemm":
            a = shape(node.input[0], node)
            b = shape(node.input[1], node)
            m, k = (a[1], a[0]) if attrs.get("transA", 0) else (a[0], a[1])
            n = b[0] if attrs.get("transB", 0) else b[1]
            gemm += 2 * m * n * k
        elif node.op_type == "MatMul":
            a = shape(node.input[0], node)
            b = shape(node.input[1], node)
            if len(a) == 1:
                a = [1] + a
            if len(b) == 1:
                b = b + [1]
            y = shape(node.output[0], node)
            batch = prod(y[:-2]) if len(y) > 2 else 1
            matmul += 2 * batch * a[-2] * b[-1] * a[-1]
    total = conv + gemm + matmul
    print(f"flops: {total} (conv {conv}, gemm {gemm}, matmul {matmul})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
