#!/usr/bin/python3
"""End-to-end check of a dynamically quantized transformer (ONNX Runtime's quantize_dynamic form).

models/make_dynamic_quant.py rewrites the float export models/out/NAME.onnx (every MatMul with constant
weights as DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul by x_scale * w_scale); atc compiles it,
omrun runs it on NAME.input.bin, and ONNX Runtime (bench/ort_bench.js with its node_modules, or
--ort-bench) runs the same model, whose MatMulInteger is exact int32 arithmetic, as here:

  atc compiles it (MatMulInteger sums of K up to 3072 products of uint8 x int8 pass float32's exact
  integers: the reduction splits into exact chunks);
  cosine with ORT's output >= 0.999.

It also reports (info, no bar) the cosine and max error of both against the float model's output
(NAME.output.bin). Skipped (exit 77) with a message when the float export, python3-onnx or ONNX Runtime
is missing. Exit 0 when every check passes; the closing line says "N passed, M failed".
"""
import argparse
import json
import os
import sys

import numpy as np

import checks

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIP = 77


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="the float export, e.g. transformer_encoder")
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "models", "out"))
    ap.add_argument("--bin-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work-dir", default=None)
    ap.add_argument("--ort-bench", default=os.path.join(ROOT, "bench", "ort_bench.js"))
    args = ap.parse_args()

    name = args.model
    paths = {k: os.path.join(args.models_dir, name + k) for k in (".onnx", ".json", ".input.bin")}
    skip = checks.ort_model_skip("model_dynamic_quant", paths.values(), f"models/export_torchvision.py {name}",
                                 "models/make_dynamic_quant.py", args.ort_bench)
    if skip:
        print(skip)
        return SKIP
    with open(paths[".json"]) as f:
        meta = json.load(f)
    work = args.work_dir or os.path.join(args.bin_dir, "e2e", name + "_dyn")
    os.makedirs(work, exist_ok=True)
    dyn = os.path.join(work, name + "_dyn.onnx")
    shape = ",".join(str(d) for d in meta["input_shape"])
    dtype = meta.get("input_dtype", "float32")

    def check(what, ok, detail, show=False):
        return checks.check(f"{name}_dyn: {what}", ok, detail, show=show)

    p = checks.run(sys.executable, os.path.join(ROOT, "models", "make_dynamic_quant.py"), paths[".onnx"], dyn)
    if not check("rewritten", p.returncode == 0, f"{p.stdout.strip()} {p.stderr.strip()[-300:]}", show=True):
        return checks.summary()
    ort_out = os.path.join(work, "ort.bin")
    p = checks.run("node", args.ort_bench, "--model", dyn, "--input", paths[".input.bin"], "--shape", shape,
                   "--dtype", dtype, "--threads", "1", "--min", "1", "--max", "1", "--budget", "0", "--warmup", "0",
                   "--output", ort_out)
    if not check("ONNX Runtime runs it", p.returncode == 0, p.stderr.strip()[-300:]):
        return checks.summary()
    om = os.path.join(work, name + "_dyn")
    p = checks.run(os.path.join(args.bin_dir, "atc"), f"--model={dyn}", "--framework=5", f"--output={om}",
                   f"--input_shape={meta['input']}:{shape}", "--soc_version=Ascend310")
    if not check("atc compiles", p.returncode == 0, f"exit {p.returncode} {p.stderr.strip()[:300]}"):
        return checks.summary()
    out_dir = os.path.join(work, "out")
    p = checks.run(os.path.join(args.bin_dir, "omrun"), "--model", om + ".om", "--input", paths[".input.bin"],
                   "--output", out_dir, "--loop", "1")
    if not check("omrun runs", p.returncode == 0, f"exit {p.returncode} {p.stderr.strip()[:300]}"):
        return checks.summary()
    got = np.fromfile(os.path.join(out_dir, "output_0.bin"), "<f4").astype(np.float64)
    ort = np.fromfile(ort_out, "<f4").astype(np.float64)
    if not check("output size", got.shape == ort.shape, f"{got.size} values, ORT has {ort.size}"):
        return checks.summary()
    cos = checks.cosine(ort, got)
    check("accuracy vs ORT", cos >= 0.999,
          f"cosine {cos:.6f} (bar 0.999); max abs error {float(np.max(np.abs(ort - got))):.3g}", show=True)
    ref_path = os.path.join(args.models_dir, name + ".output.bin")
    if os.path.exists(ref_path):
        ref = np.fromfile(ref_path, "<f4").astype(np.float64)
        if ref.shape == got.shape:
            print(f"info {name}_dyn: vs the float model's output: omrun cosine {checks.cosine(ref, got):.6f} "
                  f"max error {float(np.max(np.abs(ref - got))):.3g}; ORT cosine {checks.cosine(ref, ort):.6f} "
                  f"max error {float(np.max(np.abs(ref - ort))):.3g}")
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
