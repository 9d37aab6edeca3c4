#!/usr/bin/python3
"""ConvInteger end to end, against a numpy reference of its exact int32 sums:

  - read only by a Cast to float (ONNX Runtime's dynamic quantization): u8 weights with a zero
    point per output channel (the weights less it fit int8), groups 2, asymmetric pads, strides
    (1, 2): one int8 QCONV2D writing the Cast's f32 value, no float convolution, bit-exact;
  - its int32 result a graph output (a consumer of the integers): the exact float decomposition
    (a CONV2D, no QCONV2D), bit-exact;
  - weights less their zero point outside int8 (u8 weights far from it) and read by a Cast: the
    float decomposition too, bit-exact.

Usage: conv_integer_e2e.py ATC OMRUN WORK_DIR
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from checks import check, run, summary

N, C, H, W, M, G = 1, 6, 9, 8, 20, 2


def reference(x, w, wz, xz):
    """int64 sums of (x - xz)(w - wz[m]) over ConvInteger's window: pads (1, 0, 1, 2), strides (1, 2)."""
    xp = np.pad(x.astype(np.int64) - int(xz), ((0, 0), (0, 0), (1, 1), (0, 2)))
    ho, wo = H, (W + 2 - 3) // 2 + 1
    y = np.zeros((N, M, ho, wo), np.int64)
    cg, mg = C // G, M // G
    for m in range(M):
        g = m // mg
        wf = w[m].astype(np.int64) - int(wz[m])
        for i in range(ho):
            for j in range(wo):
                y[0, m, i, j] = (xp[0, g * cg:(g + 1) * cg, i:i + 3, j * 2:j * 2 + 3] * wf).sum()
    return y


def model(path, w, wz, xz, cast):
    nodes = [helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["yi" if cast else "y"], pads=[1, 0, 1, 2],
                              strides=[1, 2], group=G)]
    if cast:
        nodes.append(helper.make_node("Cast", ["yi"], ["y"], to=TensorProto.FLOAT))
    g = helper.make_graph(nodes, "conv_integer", [helper.make_tensor_value_info("x", TensorProto.UINT8, [N, C, H, W])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT if cast else TensorProto.INT32, None)],
                          [numpy_helper.from_array(w, "w"), numpy_helper.from_array(wz, "wz"),
                           numpy_helper.from_array(xz, "xz")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    atc, omrun, work = sys.argv[1:]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(7)
    x = rng.integers(0, 256, (N, C, H, W)).astype(np.uint8)
    xz = np.array(37, np.uint8)
    wz = rng.integers(100, 156, (M,)).astype(np.uint8)
    near = (wz.reshape(-1, 1, 1, 1).astype(np.int64) + rng.integers(-128, 128, (M, C // G, 3, 3))).clip(0, 255)
    far = rng.integers(0, 256, (M, C // G, 3, 3))
    far[0, 0, 0, 0] = 0  # wz[0] >= 100: 0 - wz[0] is below -128 whatever the draw
    xin = os.path.join(work, "x.bin")
    x.tofile(xin)
    cases = [("cast", near, True, "QCONV2D"), ("int32 output", near, False, "CONV2D"),
             ("weights outside int8", far, True, "CONV2D")]
    for name, w, cast, kind in cases:
        w = w.astype(np.uint8)
        tag = name.replace(" ", "_")
        onnx_path, om = os.path.join(work, tag + ".onnx"), os.path.join(work, tag)
        model(onnx_path, w, wz, xz, cast)
        p = run(atc, f"--model={onnx_path}", "--framework=5", "--soc_version=Ascend310", f"--output={om}")
        if not check(f"{name}: atc compiles", p.returncode == 0, p.stderr.strip()[-300:]):
            continue
        run(atc, "--mode=1", f"--om={om}.om", f"--json={om}.json")
        with open(om + ".json") as f:
            kinds = [t["kind"] for t in json.load(f)["tasks"]]
        other = "CONV2D" if kind == "QCONV2D" else "QCONV2D"
        check(f"{name}: runs as {kind}", kind in kinds and other not in kinds, " ".join(kinds))
        out = os.path.join(work, tag + "_out")
        p = run(omrun, "--model", om + ".om", "--input", xin, "--output", out)
        if not check(f"{name}: omrun runs", p.returncode == 0, p.stderr.strip()[-300:]):
            continue
        got = np.fromfile(os.path.join(out, "output_0.bin"), "<f4" if cast else "<i4").astype(np.int64)
        want = reference(x, w, wz, xz).reshape(-1)
        check(f"{name}: exact", got.shape == want.shape and np.array_equal(got, want),
              f"{got.size} values, max error {np.abs(got - want).max() if got.shape == want.shape else '-'}")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
