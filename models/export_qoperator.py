#!/usr/bin/python3
"""Rewrite a QDQ export into the QOperator format, as ONNX Runtime's quantizer writes QOperator models.

The int8 models users download (the ONNX model zoo's *-int8, ONNX Runtime's quantizer with
QuantFormat.QOperator, Intel Neural Compressor) carry each quantized layer as one operator on the
8-bit tensors: the ai.onnx QLinearConv / QLinearMatMul and ONNX Runtime's com.microsoft contrib ops
(QLinearAdd, QLinearGlobalAveragePool, QGemm, ...). This takes models/export_qdq.py's QDQ export
NAME_qdq.onnx (DequantizeLinear -> float op -> QuantizeLinear islands) and writes the same network in
that form, with the same quantization parameters:

  QuantizeLinear at the input; Conv [-> Relu] -> QLinearConv; Add [-> Relu] -> QLinearAdd
  (com.microsoft); GlobalAveragePool -> QLinearGlobalAveragePool (com.microsoft); Gemm -> QGemm
  (com.microsoft, int32 bias C, y_scale and y_zero_point); MaxPool and Flatten, whose input and
  output share one scale and zero point, on the uint8 tensor itself; DequantizeLinear at the output.

A Relu before a QuantizeLinear of zero point 0 (uint8) is the clamp the quantization already does, so
it is dropped, as the quantizer drops it. QLinearConv's bias is the QDQ model's int32 bias requantized
to the scale x_scale * w_scale (the same integers where the export used that scale, as PyTorch does).
The PyTorch exporter's no-op Casts (uint8 to uint8) and its constants computed by ConstantOfShape and
Cast are read through. A node this rewrite does not know stops it with a message naming the node.

For NAME = resnet18 it writes, to --out (default models/out):
  NAME_qop.onnx       the QOperator model (opset 13, com.microsoft 1; input "input" 1x3x224x224 float32)
  NAME_qop.input.bin  the QDQ export's reference input (a copy)
  NAME_qop.ort.bin    ONNX Runtime's output of NAME_qop.onnx (bench/ort_bench.js --output: its int8
                      kernels), when node and bench/node_modules/onnxruntime-node are there
  NAME_qop.json       the QDQ export's metadata, model NAME_qop, "format": "qoperator",
                      "qdq_model": NAME_qdq, ort_int8_top5 of ORT's output

NAME = qop_ops instead builds a small graph of every com.microsoft QLinear op ONNX Runtime's CPU
provider runs (ops_model below), input x 1x8x12x12, and writes qop_ops.{onnx,input.bin,ort.bin,json}.

Usage: models/export_qoperator.py [--out DIR] [--models-dir DIR] [--ort-bench FILE] [NAME ...]
       (default NAME: resnet18; needs python3-onnx and, but for qop_ops, NAME_qdq.onnx in --models-dir)
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

MS = "com.microsoft"
SHAPE = [1, 3, 224, 224]
OPS_SHAPE = [1, 8, 12, 12]


class Rewrite:
    """The QDQ graph read once (constants, quantized tensors, consumers), then rewritten node by node."""

    def __init__(self, model):
        self.g = model.graph
        self.const = {t.name: numpy_helper.to_array(t) for t in self.g.initializer}
        self.alias = {}  # a no-op Cast's output -> its input
        self.q = {}  # QuantizeLinear output -> (float input, scale, zero point)
        self.dq = {}  # DequantizeLinear output of a run-time tensor -> (quantized tensor, scale, zp)
        self.wdq = {}  # DequantizeLinear output of a constant -> (values, scale, zp, axis)
        self.users = {}
        for n in self.g.node:
            for i in n.input:
                self.users.setdefault(i, []).append(n)
        for n in self.g.node:
            self.read(n)
        self.nodes, self.inits, self.made = [], [], {}  # made: initializer name -> value

    def attr(self, n, name, default=None):
        for a in n.attribute:
            if a.name == name:
                return helper.get_attribute_value(a)
        return default

    def read(self, n):
        c, ins = self.const, list(n.input)
        if n.op_type == "Constant":
            c[n.output[0]] = numpy_helper.to_array(self.attr(n, "value"))
        elif n.op_type == "ConstantOfShape" and ins[0] in c:
            v = self.attr(n, "value")
            v = numpy_helper.to_array(v) if v is not None else np.zeros(1, np.float32)
            c[n.output[0]] = np.full(c[ins[0]].astype(np.int64), v.reshape(-1)[0], v.dtype)
        elif n.op_type == "Cast" and ins[0] in c:
            c[n.output[0]] = c[ins[0]].astype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[self.attr(n, "to")])
        elif n.op_type == "Identity" and ins[0] in c:
            c[n.output[0]] = c[ins[0]]
        elif n.op_type == "Cast":
            self.alias[n.output[0]] = ins[0]  # checked no-op where read (quantized tensors only)
        elif n.op_type == "QuantizeLinear":
            self.q[n.output[0]] = (ins[0], c[ins[1]], c[ins[2]])
        elif n.op_type == "DequantizeLinear" and ins[0] in c:
            self.wdq[n.output[0]] = (c[ins[0]], c[ins[1]], c[ins[2]] if len(ins) > 2 else None,
                                     self.attr(n, "axis", 1))
        elif n.op_type == "DequantizeLinear":
            self.dq[n.output[0]] = (self.through(ins[0]), c[ins[1]], c[ins[2]])

    def through(self, name):
        while name in self.alias:
            name = self.alias[name]
        if name not in self.q:
            sys.exit(f"export_qoperator: '{name}' is read as quantized but is no QuantizeLinear output")
        return name

    def init(self, name, value):
        if name not in self.made:
            self.made[name] = np.asarray(value)
            self.inits.append(numpy_helper.from_array(self.made[name], name))
        return name

    def qparams(self, qname):
        """The scale and zero point initializers of quantized tensor qname."""
        _, s, z = self.q[qname]
        return [self.init(qname + "_scale", np.float32(s)), self.init(qname + "_zero_point", z)]

    def dq_input(self, n, i):
        if n.input[i] not in self.dq:
            sys.exit(f"export_qoperator: input {i} of {n.op_type} '{n.name}' is not a DequantizeLinear")
        return self.dq[n.input[i]][0]

    def result(self, n):
        """The QuantizeLinear output n writes, through a Relu that quantization already clamps."""
        users = self.users.get(n.output[0], [])
        if len(users) == 1 and users[0].op_type == "Relu":
            relu = users[0]
            users = self.users.get(relu.output[0], [])
            if len(users) == 1 and users[0].op_type == "QuantizeLinear":
                _, _, z = self.q[users[0].output[0]]
                if not (z.dtype == np.uint8 and int(z) == 0):
                    sys.exit(f"export_qoperator: Relu '{relu.name}' before a zero point {z} is not a clamp")
        if len(users) != 1 or users[0].op_type != "QuantizeLinear":
            sys.exit(f"export_qoperator: {n.op_type} '{n.name}' is not followed by one QuantizeLinear")
        return users[0].output[0]

    def emit(self, op, inputs, output, name, domain="", **attrs):
        self.nodes.append(helper.make_node(op, inputs, [output], name=name, domain=domain or None, **attrs))

    def same_params(self, n, x, y):
        (_, s1, z1), (_, s2, z2) = self.q[x], self.q[y]
        if s1 != s2 or z1 != z2:
            sys.exit(f"export_qoperator: {n.op_type} '{n.name}' changes the quantization parameters")

    def weight(self, n, i, base):
        """The int8 weight initializer of input i and its scale and zero point (per channel)."""
        if n.input[i] not in self.wdq:
            sys.exit(f"export_qoperator: input {i} of {n.op_type} '{n.name}' is not a constant DequantizeLinear")
        w, s, z, _ = self.wdq[n.input[i]]
        z = np.zeros_like(w, shape=s.shape) if z is None else z
        return [self.init(base, w), self.init(base + "_scale", s.astype(np.float32)), self.init(base + "_zero_point", z)]

    def bias(self, n, i, x_scale, w_scale, base):
        """Input i (the DequantizeLinear of an int32 bias) requantized to x_scale * w_scale."""
        if len(n.input) <= i or not n.input[i]:
            return []
        if n.input[i] not in self.wdq:
            sys.exit(f"export_qoperator: the bias of {n.op_type} '{n.name}' is not a constant DequantizeLinear")
        b, s, z, _ = self.wdq[n.input[i]]
        f = (b.astype(np.float64) - (0 if z is None else z.astype(np.float64))) * s.astype(np.float64)
        scale = np.float64(np.float32(x_scale)) * w_scale.astype(np.float32).astype(np.float64)
        return [self.init(base, np.round(f / scale).astype(np.int32))]

    def node(self, n):
        op, name = n.op_type, n.name or n.output[0]
        if op in ("Constant", "ConstantOfShape", "Identity", "Cast", "DequantizeLinear", "Relu"):
            return  # read above, or part of an island
        if op == "QuantizeLinear":
            src = self.q[n.output[0]][0]
            if src in {i.name for i in self.g.input}:  # the model's input
                self.emit("QuantizeLinear", [src] + self.qparams(n.output[0]), n.output[0], name)
            return
        y = self.result(n)
        if op == "Conv":
            x = self.dq_input(n, 0)
            w = self.weight(n, 1, name + "/w")
            b = self.bias(n, 2, self.q[x][1], self.made[w[1]], name + "/b")
            attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
            self.emit("QLinearConv", [x] + self.qparams(x) + w + self.qparams(y) + b, y, name, **attrs)
        elif op == "Add":
            a, b = self.dq_input(n, 0), self.dq_input(n, 1)
            self.emit("QLinearAdd", [a] + self.qparams(a) + [b] + self.qparams(b) + self.qparams(y), y, name, MS)
        elif op == "GlobalAveragePool":
            x = self.dq_input(n, 0)
            self.emit("QLinearGlobalAveragePool", [x] + self.qparams(x) + self.qparams(y), y, name, MS,
                      channels_last=0)
        elif op in ("MaxPool", "Flatten"):
            x = self.dq_input(n, 0)
            self.same_params(n, x, y)
            attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
            self.emit(op, [x], y, name, **attrs)
        elif op == "Gemm":
            if self.attr(n, "alpha", 1.0) != 1.0 or self.attr(n, "beta", 1.0) != 1.0 or self.attr(n, "transA", 0):
                sys.exit(f"export_qoperator: Gemm '{name}' has alpha, beta or transA not of a Linear layer")
            a = self.dq_input(n, 0)
            w = self.weight(n, 1, name + "/B")
            c = self.bias(n, 2, self.q[a][1], self.made[w[1]], name + "/C")
            self.emit("QGemm", [a] + self.qparams(a) + w + (c or [""]) + self.qparams(y), y, name, MS,
                      transB=self.attr(n, "transB", 0))
        else:
            sys.exit(f"export_qoperator: {op} '{name}' has no QOperator form here")

    def run(self, model):
        for n in self.g.node:
            self.node(n)
        (out,) = self.g.output
        if out.name not in self.dq:
            sys.exit(f"export_qoperator: the output '{out.name}' is not a DequantizeLinear")
        q = self.dq[out.name][0]
        self.emit("DequantizeLinear", [q] + self.qparams(q), out.name, "output/DequantizeLinear")
        graph = helper.make_graph(self.nodes, self.g.name + "_qoperator", list(self.g.input), list(self.g.output),
                                  self.inits)
        opsets = [helper.make_opsetid("", 13), helper.make_opsetid(MS, 1)]
        qm = helper.make_model(graph, opset_imports=opsets, producer_name="export_qoperator.py")
        qm.ir_version = model.ir_version
        onnx.checker.check_model(qm)
        return qm


def ops_model(seed=20261129):
    """qop_ops: every com.microsoft QLinear op ONNX Runtime's CPU provider runs, in one small graph.

    x [1, 8, 12, 12] -> QuantizeLinear (u8) -> QLinearConv 3x3 (c) -> QLinearSigmoid (s), QLinearLeakyRelu
    (l) of c -> QLinearMul(s, l) (m) -> QLinearAdd(m, c) (a) -> QLinearAveragePool 3x3 /2 (p) ->
    QLinearConcat(p, p) (k) -> QLinearGlobalAveragePool (g) -> Reshape [1, 32] -> QGemm (int32 C, u8
    output) (q) -> QLinearSoftmax (o); QGemm with a float output (f, alpha 0.5) of g; and an int8 branch:
    x -> QuantizeLinear (i8) -> QLinearSigmoid, QLinearAdd with itself. The output is every result
    dequantized, flattened and concatenated, [1, n]. (QLinearReduceMean is left out: ORT's CPU provider
    has no kernel for it.)
    """
    rng = np.random.default_rng(seed)
    inits, nodes = [], []

    def c(name, v):
        inits.append(numpy_helper.from_array(np.asarray(v), name))

    def node(op, ins, out, domain=None, **attrs):
        nodes.append(helper.make_node(op, ins, [out], name=out, domain=domain, **attrs))

    f32, u8, i8 = np.float32, np.uint8, np.int8
    for name, s, z in (("x", 0.02, u8(128)), ("c", 0.05, u8(100)), ("s", 1 / 256, u8(0)), ("l", 0.04, u8(30)),
                       ("m", 0.03, u8(10)), ("a", 0.05, u8(40)), ("p", 0.045, u8(38)), ("g", 0.03, u8(20)),
                       ("q", 0.05, u8(128)), ("o", 1 / 256, u8(0)), ("x8", 0.025, i8(-3)), ("s8", 1 / 256, i8(-128)),
                       ("a8", 0.03, i8(5))):
        c(name + "_s", f32(s))
        c(name + "_z", z)
    # Weights in [-64, 63]: ORT's u8 x s8 kernels on an x86 CPU without VNNI add pairs of products in
    # int16 (vpmaddubsw), which saturates past 255 x 64 x 2; in this range its output is the exact one.
    c("w", rng.integers(-64, 64, (16, 8, 3, 3)).astype(i8))
    c("w_s", (rng.random(16) * 0.01 + 0.002).astype(f32))
    c("w_z", np.zeros(16, i8))
    c("B", rng.integers(-64, 64, (10, 32)).astype(i8))
    c("B_s", (rng.random(10) * 0.01 + 0.002).astype(f32))
    c("B_z", np.zeros(10, i8))
    c("C", rng.integers(-500, 500, 10).astype(np.int32))
    c("shape", np.array([1, 32], np.int64))
    c("flat", np.array([1, -1], np.int64))

    def qp(n):
        return [n + "_s", n + "_z"]

    node("QuantizeLinear", ["x"] + qp("x"), "xq")
    node("QLinearConv", ["xq"] + qp("x") + ["w", "w_s", "w_z"] + qp("c"), "cq", pads=[1, 1, 1, 1])
    node("QLinearSigmoid", ["cq"] + qp("c") + qp("s"), "sq", MS)
    node("QLinearLeakyRelu", ["cq"] + qp("c") + qp("l"), "lq", MS, alpha=0.1)
    node("QLinearMul", ["sq"] + qp("s") + ["lq"] + qp("l") + qp("m"), "mq", MS)
    node("QLinearAdd", ["mq"] + qp("m") + ["cq"] + qp("c") + qp("a"), "aq", MS)
    node("QLinearAveragePool", ["aq"] + qp("a") + qp("p"), "pq", MS, kernel_shape=[3, 3], strides=[2, 2],
         pads=[1, 1, 1, 1])
    node("QLinearConcat", qp("p") + ["pq"] + qp("p") + ["pq"] + qp("p"), "kq", MS, axis=1)
    node("QLinearGlobalAveragePool", ["kq"] + qp("p") + qp("g"), "gq", MS, channels_last=0)
    node("Reshape", ["gq", "shape"], "rq")
    node("QGemm", ["rq"] + qp("g") + ["B", "B_s", "B_z", "C"] + qp("q"), "qq", MS, transB=1)
    node("QLinearSoftmax", ["qq"] + qp("q") + qp("o"), "oq", MS, opset=13, axis=-1)
    node("QGemm", ["rq"] + qp("g") + ["B", "B_s", "B_z", "C"], "qf", MS, transB=1, alpha=0.5)
    node("QuantizeLinear", ["x"] + qp("x8"), "x8q")
    node("QLinearSigmoid", ["x8q"] + qp("x8") + qp("s8"), "s8q", MS)
    node("QLinearAdd", ["s8q"] + qp("s8") + ["x8q"] + qp("x8") + qp("a8"), "a8q", MS)
    parts = []
    for q, n in (("aq", "a"), ("kq", "p"), ("qq", "q"), ("oq", "o"), ("a8q", "a8")):
        node("DequantizeLinear", [q] + qp(n), q + "_f")
        node("Reshape", [q + "_f", "flat"], q + "_flat")
        parts.append(q + "_flat")
    node("Concat", parts + ["qf"], "y", axis=1)
    graph = helper.make_graph(nodes, "qop_ops", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, OPS_SHAPE)],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, "n"])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(MS, 1)],
                              producer_name="export_qoperator.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model, rng.standard_normal(OPS_SHAPE).astype(np.float32)


def export_ops(out_dir, bench):
    dst = os.path.join(out_dir, "qop_ops")
    model, x = ops_model()
    os.makedirs(out_dir, exist_ok=True)
    onnx.save(model, dst + ".onnx")
    x.tofile(dst + ".input.bin")
    meta = {"model": "qop_ops", "format": "qoperator", "input": "x", "input_shape": OPS_SHAPE, "input_dtype": "float32"}
    if ort_output(bench, dst + ".onnx", dst + ".input.bin", dst + ".ort.bin", OPS_SHAPE) is None:
        print(f"models: no onnxruntime-node beside {bench}: {dst}.ort.bin not written", file=sys.stderr)
    with open(dst + ".json", "w") as f:
        json.dump(meta, f, indent=1)
    print(f"models: wrote {dst}.onnx ({len(model.graph.node)} nodes)")
    return dst


def ort_output(bench, onnx_path, input_path, out_path, shape=SHAPE):
    """ONNX Runtime's first output (bench/ort_bench.js --output), or None without it."""
    if not bench or not os.path.isdir(os.path.join(os.path.dirname(bench), "node_modules", "onnxruntime-node")):
        return None
    subprocess.run(["node", bench, "--model", onnx_path, "--input", input_path, "--shape", ",".join(map(str, shape)),
                    "--threads", "1", "--min", "1", "--max", "1", "--budget", "0", "--output", out_path],
                   check=True, stdout=subprocess.DEVNULL)
    return np.fromfile(out_path, "<f4")


def export(name, models_dir, out_dir, bench):
    src = os.path.join(models_dir, name + "_qdq")
    dst = os.path.join(out_dir, name + "_qop")
    if not os.path.exists(src + ".onnx"):
        sys.exit(f"export_qoperator: {src}.onnx missing: run models/export_qdq.py {name}")
    model = onnx.load(src + ".onnx")
    qm = Rewrite(model).run(model)
    os.makedirs(out_dir, exist_ok=True)
    onnx.save(qm, dst + ".onnx")
    shutil.copyfile(src + ".input.bin", dst + ".input.bin")
    with open(src + ".json") as f:
        meta = json.load(f)
    meta.update(model=name + "_qop", format="qoperator", qdq_model=name + "_qdq")
    y = ort_output(bench, dst + ".onnx", dst + ".input.bin", dst + ".ort.bin")
    if y is None:
        print(f"models: no onnxruntime-node beside {bench}: {dst}.ort.bin not written", file=sys.stderr)
    else:
        meta["ort_int8_top5"] = [int(i) for i in np.argsort(-y)[:5]]
    with open(dst + ".json", "w") as f:
        json.dump(meta, f, indent=1)
    ops = sorted({f"{n.domain + '.' if n.domain else ''}{n.op_type}" for n in qm.graph.node})
    print(f"models: wrote {dst}.onnx ({len(qm.graph.node)} nodes: {', '.join(ops)})")
    return dst


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "out"))
    ap.add_argument("--models-dir", default=os.path.join(here, "out"), help="where NAME_qdq.* are")
    ap.add_argument("--ort-bench", default=os.path.join(here, "..", "bench", "ort_bench.js"),
                    help="bench/ort_bench.js with its node_modules (ONNX Runtime's reference output)")
    ap.add_argument("names", nargs="*", default=["resnet18"])
    args = ap.parse_args()
    for n in args.names:
        if n == "qop_ops":
            export_ops(args.out, args.ort_bench)
        else:
            export(n, args.models_dir, args.out, args.ort_bench)


if __name__ == "__main__":
    main()
