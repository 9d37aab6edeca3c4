#!/usr/bin/python3
"""atc on bad models: each must exit 1 with one line that names the file, the
node (name and op type) or tensor, and what is wrong, and must write nothing:
an om already at the output path stays byte for byte, and no temporary file
is left in the directory.

Usage: atc_bad_input.py ATC_BINARY WORK_DIR
"""
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from checks import check, summary

def conv_relu_graph(nodes=None, inits=None, input_dims=(1, 3, 8, 8)):
    w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "w")
    nodes = nodes if nodes is not None else [
        helper.make_node("Conv", ["x", "w"], ["y"], name="conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["y"], ["z"], name="relu0")]
    return helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(input_dims))],
                             [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
                             inits if inits is not None else [w])


def save(model_or_graph, path, opset=13):
    m = model_or_graph if isinstance(model_or_graph, onnx.ModelProto) else \
        helper.make_model(model_or_graph, opset_imports=[helper.make_opsetid("", opset)])
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def external_init(location, length=4 * 4 * 3 * 3 * 3, offset=0):
    t = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4, 3, 3, 3])
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)), ("length", str(length))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def run_atc(atc, model, out_base, extra=()):
    cmd = [atc, f"--model={model}", "--framework=5", f"--output={out_base}", "--soc_version=Ascend310", *extra]
    return subprocess.run(cmd, capture_output=True, text=True)


def main():
    atc, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    outside = os.path.join(work, "outside")
    os.makedirs(outside)
    weights = np.ones((4, 3, 3, 3), np.float32).tobytes()
    with open(os.path.join(outside, "secret.bin"), "wb") as f:
        f.write(weights)

    cases = []  # (label, model file, strings the message must contain, extra flags)

    def case(label, make, must, extra=()):
        d = os.path.join(work, label)
        os.makedirs(d)
        path = os.path.join(d, "model.onnx")
        make(d, path)
        cases.append((label, path, must, extra))

    case("truncated", lambda d, p: (save(conv_relu_graph(), p),
                                    open(p, "r+b").truncate(os.path.getsize(p) // 2)), ["model.onnx"])
    case("cycle", lambda d, p: save(conv_relu_graph(nodes=[
        helper.make_node("Relu", ["b"], ["a"], name="relu_a"),
        helper.make_node("Relu", ["a"], ["b"], name="relu_b"),
        helper.make_node("Relu", ["x"], ["z"], name="relu_z")], inits=[]), p), ["model.onnx", "cycle", "Relu"])
    case("unknown_op", lambda d, p: save(conv_relu_graph(nodes=[
        helper.make_node("FooBar", ["x"], ["z"], name="mystery")], inits=[]), p), ["model.onnx", "mystery", "FooBar"])
    case("dangling_input", lambda d, p: save(conv_relu_graph(nodes=[
        helper.make_node("Conv", ["x", "w"], ["y"], name="conv0", kernel_shape=[3, 3]),
        helper.make_node("Add", ["y", "nowhere"], ["z"], name="add0")]), p),
        ["model.onnx", "add0", "Add", "nowhere"])
    bad_w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "w")
    bad_w.raw_data = bad_w.raw_data[:100]
    case("initializer_size", lambda d, p: save(conv_relu_graph(inits=[bad_w]), p), ["model.onnx", "'w'", "100"])
    case("symbolic_dim", lambda d, p: save(conv_relu_graph(input_dims=("N", 3, 8, 8)), p),
         ["model.onnx", "'x'", "N", "--input_shape"])
    case("huge_constant", lambda d, p: save(helper.make_graph(
        [helper.make_node("ConstantOfShape", ["shape"], ["c"], name="big"),
         helper.make_node("Add", ["x", "c"], ["z"], name="add0")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([1 << 31], np.int64), "shape")]), p),
        ["model.onnx", "big", "ConstantOfShape", "8589934592", "4294967296"])
    case("external_absolute", lambda d, p: save(conv_relu_graph(
        inits=[external_init(os.path.join(outside, "secret.bin"))]), p), ["model.onnx", "'w'"])
    case("external_dotdot", lambda d, p: save(conv_relu_graph(
        inits=[external_init("../outside/secret.bin")]), p), ["model.onnx", "'w'"])

    def symlinked(d, p):
        os.symlink(os.path.join(outside, "secret.bin"), os.path.join(d, "w.bin"))
        save(conv_relu_graph(inits=[external_init("w.bin")]), p)
    case("external_symlink", symlinked, ["model.onnx", "'w'"])

    def hardlinked(d, p):
        os.link(os.path.join(outside, "secret.bin"), os.path.join(d, "w.bin"))
        save(conv_relu_graph(inits=[external_init("w.bin")]), p)
    case("external_hardlink", hardlinked, ["model.onnx", "'w'"])

    def past_eof(d, p):
        with open(os.path.join(d, "w.bin"), "wb") as f:
            f.write(weights)
        save(conv_relu_graph(inits=[external_init("w.bin", offset=64)]), p)
    case("external_past_eof", past_eof, ["model.onnx", "'w'"])

    def qdq_matmul(ws, wz=None, k=8, n=4):
        """A quantized Linear layer (DQ -> MatMul with per-column int8 weights -> Q) with weight scale ws."""
        inits = [numpy_helper.from_array(np.array(0.03, np.float32), "xs"),
                 numpy_helper.from_array(np.array(120, np.uint8), "xz"),
                 numpy_helper.from_array(np.ones((k, n), np.int8), "w"), numpy_helper.from_array(ws, "ws"),
                 numpy_helper.from_array(np.array(0.05, np.float32), "ys"),
                 numpy_helper.from_array(np.array(10, np.uint8), "yz")]
        if wz is not None:
            inits.append(numpy_helper.from_array(wz, "wz"))
        nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="q_x"),
                 helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xf"], name="dq_x"),
                 helper.make_node("DequantizeLinear", ["w", "ws"] + (["wz"] if wz is not None else []), ["wf"],
                                  name="dq_w", axis=1),
                 helper.make_node("MatMul", ["xf", "wf"], ["mm"], name="fc"),
                 helper.make_node("QuantizeLinear", ["mm", "ys", "yz"], ["y"], name="q_y")]
        return helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, k])],
                                 [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    case("qmatmul_scale_zero", lambda d, p: save(qdq_matmul(np.array([0.01, 0.01, 0, 0.01], np.float32)), p),
         ["model.onnx", "dq_w", "DequantizeLinear", "'ws'[2]", "finite and nonzero"])
    case("qmatmul_scale_nan", lambda d, p: save(qdq_matmul(np.array([np.nan, 0.01, 0.01, 0.01], np.float32)), p),
         ["model.onnx", "dq_w", "'ws'[0]", "finite and nonzero"])
    case("qmatmul_axis", lambda d, p: save(qdq_matmul(np.full(8, 0.01, np.float32)), p),
         ["model.onnx", "dq_w", "'ws'", "mismatched per-axis"])
    case("qmatmul_zero_point_type", lambda d, p: save(qdq_matmul(np.full(4, 0.01, np.float32),
                                                                 np.zeros(4, np.uint8)), p),
         ["model.onnx", "dq_w", "'wz'", "uint8"])

    for label, path, must, extra in cases:
        d = os.path.dirname(path)
        old = os.path.join(d, "out.om")
        with open(old, "wb") as f:
            f.write(b"old package")
        before = sorted(os.listdir(d))
        p = run_atc(atc, path, os.path.join(d, "out"), extra)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        msg = lines[0] if lines else ""
        check(f"{label}: exit 1", p.returncode == 1, f"exit {p.returncode}")
        check(f"{label}: one line", len(lines) == 1 and not p.stdout.strip(), repr(p.stderr + p.stdout)[:300])
        missing = [s for s in must if s not in msg]
        check(f"{label}: names {must}", not missing, msg if missing else "")
        with open(old, "rb") as f:
            check(f"{label}: old om untouched", f.read() == b"old package")
        check(f"{label}: no new files", sorted(os.listdir(d)) == before, str(sorted(os.listdir(d))))

    # The good model compiles, and --input_shape fixes a symbolic dim.
    d = os.path.join(work, "good")
    os.makedirs(d)
    save(conv_relu_graph(input_dims=("N", 3, 8, 8)), os.path.join(d, "model.onnx"))
    p = run_atc(atc, os.path.join(d, "model.onnx"), os.path.join(d, "out"), ["--input_shape=x:2,3,8,8"])
    check("good model compiles", p.returncode == 0 and os.path.exists(os.path.join(d, "out.om")), p.stderr.strip())
    p = run_atc(atc, os.path.join(d, "model.onnx"), os.path.join(d, "out2"), ["--input_shape=nosuch:1,3,8,8"])
    check("unknown --input_shape name", p.returncode == 1 and "nosuch" in p.stderr and "'x'" in p.stderr
          and not os.path.exists(os.path.join(d, "out2.om")), p.stderr.strip())

    return summary()


if __name__ == "__main__":
    sys.exit(main())
