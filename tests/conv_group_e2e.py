#!/usr/bin/python3
"""Grouped convolution on the cube (FRACTAL_Z_G, common/conv_group.h) against PyTorch.

Builds small ONNX models of one grouped Conv (+ bias + residual Add + Relu,
which fuse into the CONV2D task) for group shapes that exercise every case
of the layout: group width 8 (runs of one block, half-empty fractals), 4
(ResNeXt), 24 (blocks straddling groups: runs of one block with different
input ranges), 64 (runs of several blocks), channel counts not multiple of
16, and strided / dilated windows. Each is compiled by atc and run by omrun
in both precisions: must_keep_origin_dtype max abs error <= 1e-4 x max|ref|,
force_fp16 cosine >= 0.999. Exit 0 when all pass.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

CASES = [  # (cin, cout, groups, k, stride, dilation, hw)
    (48, 48, 6, 3, 1, 1, 14), (104, 104, 13, 3, 2, 1, 15), (128, 128, 32, 3, 1, 1, 9),
    (72, 48, 3, 3, 1, 2, 12), (256, 256, 4, 1, 1, 1, 7), (40, 60, 5, 5, 2, 1, 11),
]


class Net(torch.nn.Module):
    def __init__(self, cin, cout, groups, k, stride, dil):
        super().__init__()
        self.conv = torch.nn.Conv2d(cin, cout, k, stride, padding=dil * (k // 2), dilation=dil, groups=groups)
        self.skip = torch.nn.Conv2d(cin, cout, 1, stride)

    def forward(self, x):
        return torch.relu(self.conv(x) + self.skip(x))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bin-dir", required=True)
    args = ap.parse_args()
    torch.manual_seed(7)
    fails = 0
    with tempfile.TemporaryDirectory() as work:
        for i, (cin, cout, g, k, s, d, hw) in enumerate(CASES):
            net = Net(cin, cout, g, k, s, d).eval()
            x = torch.randn(1, cin, hw, hw)
            with torch.no_grad():
                ref = net(x).numpy().astype(np.float64).ravel()
            onnx = os.path.join(work, f"g{i}.onnx")
            torch.onnx.export(net, x, onnx, opset_version=13, input_names=["x"], output_names=["y"])
            x.numpy().astype("<f4").tofile(os.path.join(work, "x.bin"))
            for prec in ("must_keep_origin_dtype", "force_fp16"):
                om = os.path.join(work, f"g{i}_{prec}")
                out = os.path.join(work, f"out{i}_{prec}")
                p = subprocess.run([os.path.join(args.bin_dir, "atc"), f"--model={onnx}", "--framework=5",
                                    f"--output={om}", "--soc_version=Ascend310", f"--precision_mode={prec}"],
                                   capture_output=True, text=True)
                if p.returncode == 0:
                    p = subprocess.run([os.path.join(args.bin_dir, "omrun"), "--model", om + ".om", "--input",
                                        os.path.join(work, "x.bin"), "--output", out], capture_output=True, text=True)
                name = f"cin {cin} cout {cout} group {g} k {k} stride {s} dilation {d} {prec}"
                if p.returncode:
                    print(f"FAIL {name}: {p.stderr.strip() or p.stdout.strip()}")
                    fails += 1
                    continue
                got = np.fromfile(os.path.join(out, "output_0.bin"), "<f4").astype(np.float64)
                rel = np.max(np.abs(got - ref)) / np.max(np.abs(ref))
                cos = float(ref @ got / (np.linalg.norm(ref) * np.linalg.norm(got) + 1e-30))
                ok = rel <= 1e-4 if prec == "must_keep_origin_dtype" else cos >= 0.999
                fails += not ok
                print(f"{'ok  ' if ok else 'FAIL'} {name}: max abs error {rel:.3g} x max|ref|, cosine {cos:.6f}")
    print(f"{len(CASES) * 2 - fails} passed, {fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
