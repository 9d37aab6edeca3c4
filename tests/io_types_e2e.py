#!/usr/bin/python3
"""atc's I/O type and layout flags end to end, against a numpy reference:
--input_format=NHWC (an NHWC model: Transpose, Conv, Relu, Transpose back
compiles to channels-last TransDatas around the conv), --output_type
(FP32, FP16, UINT8, per output node:index:TYPE), --input_fp16_nodes,
--is_input_adjust_hw_layout / --is_output_adjust_hw_layout (fp16 NC1HWC0
I/O: the conv reads and writes the caller's buffers directly), the one-line
refusals, and ATC flags this atc does not implement named as such.

Usage: io_types_e2e.py ATC OMRUN WORK_DIR
"""
import json
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from checks import check, run, summary

def conv_relu_ref(x, w):
    """NCHW conv 3x3 pad 1 then relu, in float64."""
    n, c, h, wd = x.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((n, w.shape[0], h, wd))
    for i in range(h):
        for j in range(wd):
            y[:, :, i, j] = np.tensordot(xp[:, :, i:i + 3, j:j + 3], w, axes=([1, 2, 3], [1, 2, 3]))
    return np.maximum(y, 0)


def to_nc1hwc0(x):
    n, c, h, w = x.shape
    c1 = (c + 15) // 16
    y = np.zeros((n, c1 * 16, h, w), x.dtype)
    y[:, :c] = x
    return y.reshape(n, c1, 16, h, w).transpose(0, 1, 3, 4, 2).copy()


def from_nc1hwc0(y, c):
    n, c1, h, w, _ = y.shape
    return y.transpose(0, 1, 4, 2, 3).reshape(n, c1 * 16, h, w)[:, :c]


def save(g, path):
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def main():
    atc, omrun, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    rng = np.random.default_rng(19)
    w = (rng.standard_normal((20, 3, 3, 3)) * 0.3).astype(np.float32)
    init = [numpy_helper.from_array(w, "w")]
    conv = helper.make_node("Conv", ["t", "w"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], name="conv")
    nhwc = save(helper.make_graph(
        [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 3, 1, 2]), conv,
         helper.make_node("Relu", ["c"], ["r"], name="relu"),
         helper.make_node("Transpose", ["r"], ["y"], perm=[0, 2, 3, 1], name="back")],
        "nhwc", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 9, 7, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], init), os.path.join(work, "nhwc.onnx"))
    nchw = save(helper.make_graph(
        [helper.make_node("Identity", ["x"], ["t"]), conv, helper.make_node("Relu", ["c"], ["y"], name="relu"),
         helper.make_node("Sigmoid", ["c"], ["s"], name="sig")],
        "nchw", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, None)], init), os.path.join(work, "nchw.onnx"))

    def compile_run(model, name, x, *flags):
        out = os.path.join(work, name)
        p = run(atc, f"--model={model}", "--framework=5", f"--output={out}", "--soc_version=Ascend310", *flags)
        if p.returncode != 0:
            return p, None, None
        x.tofile(out + ".in.bin")
        q = run(omrun, "--model", out + ".om", "--input", out + ".in.bin", "--output", out + "_out")
        j = run(atc, "--mode=1", f"--om={out}.om", f"--json={out}.json")
        kinds = []
        if j.returncode == 0:
            with open(out + ".json") as f:
                kinds = [t["kind"] for t in json.load(f)["tasks"]]
        outs = [open(os.path.join(out + "_out", f), "rb").read() for f in sorted(os.listdir(out + "_out"))
                if f.startswith("output_")] if q.returncode == 0 else None
        return q, outs, kinds

    # NHWC: input [2, 9, 7, 3] and output [2, 9, 7, 20], both channels last
    x = rng.standard_normal((2, 9, 7, 3)).astype(np.float32)
    ref = conv_relu_ref(x.transpose(0, 3, 1, 2), w).transpose(0, 2, 3, 1)
    p, outs, kinds = compile_run(nhwc, "nhwc", x, "--input_format=NHWC")
    got = np.frombuffer(outs[0], "<f4") if outs else np.zeros(0)
    check("NHWC model: conv between two channels-last TransDatas, no transposes",
          kinds.count("CONV2D") == 1 and "STRIDED_COPY" not in kinds and len(kinds) <= 4, kinds)
    check("NHWC model matches the reference", got.size == ref.size and np.abs(got - ref.ravel()).max() < 1e-2,
          got.size and np.abs(got - ref.ravel()).max())

    # --output_type and --input_fp16_nodes
    p, outs, _ = compile_run(nhwc, "fp16", x.astype(np.float16), "--input_fp16_nodes=x", "--output_type=FP16")
    got = np.frombuffer(outs[0], "<f2").astype(np.float64) if outs else np.zeros(0)
    check("--input_fp16_nodes=x --output_type=FP16: fp16 in and out",
          got.size == ref.size and np.abs(got - ref.ravel()).max() < 1e-2, getattr(p, "stderr", ""))
    p, outs, _ = compile_run(nhwc, "u8", x * 100, "--output_type=UINT8")
    ref8 = np.clip(np.trunc(conv_relu_ref((x * 100).transpose(0, 3, 1, 2), w).transpose(0, 2, 3, 1)), 0, 255)
    got = np.frombuffer(outs[0], "u1").astype(np.float64) if outs else np.zeros(0)
    # fp16 rounding can move a value across an integer
    check("--output_type=UINT8: truncated and saturated",
          got.size == ref8.size and np.abs(got - ref8.ravel()).max() <= 1 and (got == 255).any(),
          getattr(p, "stderr", ""))

    x1 = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    yr = conv_relu_ref(x1, w)
    p, outs, _ = compile_run(nchw, "per_output", x1, "--output_type=sig:0:FP16")
    ok = outs and len(outs[0]) == yr.size * 4 and len(outs[1]) == yr.size * 2
    check("--output_type=sig:0:FP16: only that output is fp16", ok, getattr(p, "stderr", outs and list(map(len, outs))))

    # fp16 NC1HWC0 in and out: the conv task alone
    x5 = to_nc1hwc0(x1.astype(np.float16))
    p, outs, kinds = compile_run(nchw, "five_d", x5, "--input_fp16_nodes=x", "--is_input_adjust_hw_layout=true",
                                 "--out_nodes=relu:0", "--is_output_adjust_hw_layout=true")
    got = np.frombuffer(outs[0], "<f2").reshape(1, 2, 8, 8, 16).astype(np.float64) if outs else None
    check("NC1HWC0 fp16 I/O: one CONV2D task", kinds == ["CONV2D"], kinds)
    check("NC1HWC0 fp16 I/O matches the reference, padding channels zero",
          got is not None and np.abs(from_nc1hwc0(got, 20) - yr).max() < 1e-2 and not got[:, 1, :, :, 4:].any())

    # refusals: one line naming the flag and the value, exit 1, nothing written
    bad = [
        (["--output_type=INT8"], "--output_type=\"INT8\""),
        (["--output_type=relu:3:FP16"], "'relu:3' is not a model output"),
        (["--input_fp16_nodes=q"], "'q' is not a model input (the inputs: 'x')"),
        (["--input_fp16_nodes=x", "--is_input_adjust_hw_layout=yes"], "'yes' is not true or false"),
        (["--is_output_adjust_hw_layout=true"], "needs --out_nodes"),
        (["--out_nodes=relu:0", "--is_output_adjust_hw_layout=true,false"], "has 2 values for the 1 --out_nodes"),
    ]
    for flags, want in bad:
        out = os.path.join(work, "refused")
        p = run(atc, f"--model={nchw}", "--framework=5", f"--output={out}", "--soc_version=Ascend310", *flags)
        lines = p.stderr.strip().splitlines()
        check(f"refused: {' '.join(flags)}", p.returncode == 1 and len(lines) == 1 and want in lines[0]
              and not os.path.exists(out + ".om"), p.stderr)
    p = run(atc, f"--model={nchw}", "--framework=5", "--output=x", "--soc_version=Ascend310", "--weight=a.bin")
    check("an ATC flag this atc lacks is named as not supported",
          p.returncode == 2 and "--weight is an ATC flag not supported by this atc" in p.stderr, p.stderr)

    return summary("io_types_e2e")


if __name__ == "__main__":
    sys.exit(main())
