#!/usr/bin/python3
"""End-to-end check of one exported model: atc -> omrun -> compare with PyTorch.

Compiles models/out/NAME.onnx with atc (batch fixed by --input_shape, SoC
Ascend310), runs it with omrun on NAME.input.bin, and compares omrun's output
with PyTorch's fp32 output (NAME.output.bin):

  force_fp16 (and the other fp16 modes): cosine similarity >= 0.999 and the same top-1
  must_keep_origin_dtype:                max abs error <= 1e-4 x max|reference|
NAME.json's "reference" names another reference than PyTorch (vgg19_light's is ONNX Runtime).
Models whose NAME.json has a "kind" other than "classifier" (segmentation maps,
sequence outputs) skip the top-1 check; the other checks are the same.

It also checks what atc reports: the memory plan within 1.25x of the liveness
lower bound, and (fp16) the om at most 0.52x the ONNX file's size (OM_SIZE_BAR), in either
--impl-mode: high_performance (Winograd for eligible 3x3 convs, weights transformed at run
time) or high_precision (direct convolution only); without it, atc's default for the
precision (high_precision under must_keep_origin_dtype, high_performance otherwise).
Exit 0 when every check passes; the closing line says "N passed, M failed".
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

import numpy as np

import checks

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# fp16 om size bar as a fraction of the ONNX file: 0.52x (half, plus the
# package's own tables). The zero padding of the cube's layouts (channels
# rounded up to 16, the empty half of group-width-8 fractals) is not stored
# (om ZMAP partition), so no model needs a wider bar.
OM_SIZE_BAR = 0.52
# Exports not made by models/export_torchvision.py NAME.
EXPORTERS = {"vgg19_light": "models/export_zoo_light.py", "tiny_yolov2_op8": "models/export_zoo_old.py"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--precision", default="force_fp16")
    ap.add_argument("--impl-mode", default=None, choices=["high_precision", "high_performance"],
                    help="atc --op_select_implmode (default: atc's default for the precision)")
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "models", "out"))
    ap.add_argument("--bin-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work-dir", default=None, help="where the om and outputs go (default: build/e2e/NAME-PRECISION)")
    ap.add_argument("--loop", type=int, default=3, help="omrun --loop (1 for the large models)")
    ap.add_argument("--skip-missing", action="store_true",
                    help="exit 77 (skipped) when the export is missing: the large bench-side models")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()

    name, prec = args.model, args.precision
    onnx_path = os.path.join(args.models_dir, name + ".onnx")
    meta_path = os.path.join(args.models_dir, name + ".json")
    if not os.path.exists(onnx_path) or not os.path.exists(meta_path):
        script = EXPORTERS.get(name, "models/export_torchvision.py " + name)
        print(f"model_e2e: {onnx_path} is missing: run {script} first")
        if args.skip_missing:
            print("skipped")
            return 77
        print("0 passed, 1 failed")
        return 1
    with open(meta_path) as f:
        meta = json.load(f)
    work = args.work_dir or os.path.join(args.bin_dir, "e2e", f"{name}-{prec}")
    os.makedirs(work, exist_ok=True)
    om_base = os.path.join(work, name)
    shape = ",".join(str(d) for d in meta["input_shape"])

    def check(what, ok, detail):
        checks.check(f"{name} {prec}: {what}", ok, detail, show=True)

    atc = [os.path.join(args.bin_dir, "atc"), f"--model={onnx_path}", "--framework=5", f"--output={om_base}",
           f"--input_shape={meta['input']}:{shape}", "--soc_version=Ascend310", f"--precision_mode={prec}",
           "--log=info"] + ([f"--op_select_implmode={args.impl_mode}"] if args.impl_mode else [])
    if args.verbose:
        print("$ " + " ".join(atc))
    t = time.time()
    p = subprocess.run(atc, capture_output=True, text=True)
    atc_s = time.time() - t
    if args.verbose or p.returncode:
        sys.stdout.write(p.stderr + p.stdout)
    check("atc compiles", p.returncode == 0, f"exit {p.returncode} in {atc_s:.2f} s")
    if p.returncode:
        return checks.summary()
    m = re.search(r"workspace ([\d.]+) MiB, liveness lower bound ([\d.]+) MiB \(([\d.]+)x\)", p.stdout)
    ratio = float(m.group(3)) if m else float("inf")
    check("memory plan", m is not None and ratio <= 1.25,
          f"{m.group(1)} MiB vs lower bound {m.group(2)} MiB = {ratio:.3f}x (bar 1.25x)" if m else "not reported")
    om_size, onnx_size = os.path.getsize(om_base + ".om"), os.path.getsize(onnx_path)
    if prec != "must_keep_origin_dtype":
        check("om size", om_size <= OM_SIZE_BAR * onnx_size,
              f"{om_size / 2**20:.2f} MiB = {om_size / onnx_size:.3f}x the ONNX file (bar {OM_SIZE_BAR}x)")
    else:
        print(f"info {name} {prec}: om size {om_size / 2**20:.2f} MiB = {om_size / onnx_size:.3f}x the ONNX file")

    out_dir = os.path.join(work, "out")
    omrun = [os.path.join(args.bin_dir, "omrun"), "--model", om_base + ".om", "--input",
             os.path.join(args.models_dir, name + ".input.bin"), "--output", out_dir, "--loop", str(args.loop)]
    if args.verbose:
        print("$ " + " ".join(omrun))
    p = subprocess.run(omrun, capture_output=True, text=True)
    if args.verbose or p.returncode:
        sys.stdout.write(p.stderr + p.stdout)
    check("omrun runs", p.returncode == 0, f"exit {p.returncode}")
    if p.returncode == 0:
        ref = np.fromfile(os.path.join(args.models_dir, name + ".output.bin"), "<f4").astype(np.float64)
        got = np.fromfile(os.path.join(out_dir, "output_0.bin"), "<f4").astype(np.float64)
        if got.shape != ref.shape:
            check("output size", False, f"{got.size} values, PyTorch has {ref.size}")
        else:
            cos = checks.cosine(ref, got)
            err = float(np.max(np.abs(ref - got)))
            rel = err / float(np.max(np.abs(ref)))
            top1, want = int(np.argmax(got)), int(np.argmax(ref))
            if prec == "must_keep_origin_dtype":
                check("accuracy", rel <= 1e-4, f"max abs error {err:.3g} = {rel:.3g} x max|ref| (bar 1e-4); cosine {cos:.6f}")
            else:
                check("accuracy", cos >= 0.999, f"cosine {cos:.6f} (bar 0.999); max abs error {err:.3g} = {rel:.3g} x max|ref|")
            if meta.get("kind", "classifier") == "classifier":
                check("top-1", top1 == want, f"omrun {top1}, PyTorch {want}")
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
