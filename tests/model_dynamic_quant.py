#!/usr/bin/python3
"""End-to-end check of a dynamically quantized model (ONNX Runtime's quantize_dynamic form).

models/make_dynamic_quant.py rewrites the float export models/out/NAME.onnx (every MatMul with constant
weights as DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul by x_scale * w_scale); atc compiles it,
omrun runs it on NAME.input.bin, and ONNX Runtime (bench/ort_bench.js with its node_modules, or
--ort-bench) runs the same model, whose MatMulInteger is exact int32 arithmetic, as here:

  atc compiles it (MatMulInteger sums of K up to 3072 products of uint8 x int8 pass float32's exact
  integers: the reduction splits into exact chunks);
  cosine with ORT's output >= 0.999.

With --conv, a CNN: models/make_dynamic_quant_conv.py rewrites every Conv as DynamicQuantizeLinear ->
ConvInteger -> Cast -> Mul [-> Add] (--per-channel: one weight scale per output channel), and then

  every ConvInteger runs as an int8 QCONV2D (no CONV2D or DWCONV task is left);
  cosine with ORT's output >= 0.999 and the same top-1 class.

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
    ap.add_argument("--conv", action="store_true", help="a CNN: its Convs as ConvInteger")
    ap.add_argument("--per-channel", action="store_true", help="one weight scale per output channel")
    ap.add_argument("--precision-mode", default=None, help="atc's --precision_mode (default: atc's)")
    args = ap.parse_args()
    tool = "make_dynamic_quant_conv.py" if args.conv else "make_dynamic_quant.py"
    suffix = "_dyn" + ("pc" if args.per_channel else "")

    name = args.model
    paths = {k: os.path.join(args.models_dir, name + k) for k in (".onnx", ".json", ".input.bin")}
    skip = checks.ort_model_skip("model_dynamic_quant", paths.values(), f"models/export_torchvision.py {name}",
                                 "models/" + tool, args.ort_bench)
    if skip:
        print(skip)
        return SKIP
    with open(paths[".json"]) as f:
        meta = json.load(f)
    work = args.work_dir or os.path.join(args.bin_dir, "e2e", name + suffix)
    os.makedirs(work, exist_ok=True)
    dyn = os.path.join(work, name + suffix + ".onnx")
    shape = ",".join(str(d) for d in meta["input_shape"])
    dtype = meta.get("input_dtype", "float32")

    def check(what, ok, detail, show=False):
        return checks.check(f"{name}{suffix}: {what}", ok, detail, show=show)

    p = checks.run(sys.executable, os.path.join(ROOT, "models", tool), paths[".onnx"], dyn,
                   *(["--per-channel"] if args.per_channel else []))
    if not check("rewritten", p.returncode == 0, f"{p.stdout.strip()} {p.stderr.strip()[-300:]}", show=True):
        return checks.summary()
    ort_out = os.path.join(work, "ort.bin")
    p = checks.run("node", args.ort_bench, "--model", dyn, "--input", paths[".input.bin"], "--shape", shape,
                   "--dtype", dtype, "--threads", "1", "--min", "1", "--max", "1", "--budget", "0", "--warmup", "0",
                   "--output", ort_out)
    if not check("ONNX Runtime runs it", p.returncode == 0, p.stderr.strip()[-300:]):
        return checks.summary()
    om = os.path.join(work, name + suffix)
    p = checks.run(os.path.join(args.bin_dir, "atc"), f"--model={dyn}", "--framework=5", f"--output={om}",
                   f"--input_shape={meta['input']}:{shape}", "--soc_version=Ascend310",
                   *([f"--precision_mode={args.precision_mode}"] if args.precision_mode else []))
    if not check("atc compiles", p.returncode == 0, f"exit {p.returncode} {p.stderr.strip()[:300]}"):
        return checks.summary()
    if args.conv:
        p = checks.run(os.path.join(args.bin_dir, "atc"), "--mode=1", f"--om={om}.om", f"--json={om}.json")
        kinds = {}
        if p.returncode == 0:
            with open(om + ".json") as f:
                for t in json.load(f).get("tasks", []):
                    kinds[t.get("kind")] = kinds.get(t.get("kind"), 0) + 1
        check("int8 convolutions", kinds.get("QCONV2D", 0) > 0 and not kinds.get("CONV2D") and not kinds.get("DWCONV"),
              f"{kinds.get('QCONV2D', 0)} QCONV2D, {kinds.get('CONV2D', 0)} CONV2D, {kinds.get('DWCONV', 0)} DWCONV",
              show=True)
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
    if args.conv:
        check("top-1 vs ORT", int(np.argmax(got)) == int(np.argmax(ort)),
              f"omrun {int(np.argmax(got))}, ORT {int(np.argmax(ort))}", show=True)
    ref_path = os.path.join(args.models_dir, name + ".output.bin")
    if os.path.exists(ref_path):
        ref = np.fromfile(ref_path, "<f4").astype(np.float64)
        if ref.shape == got.shape:
            print(f"info {name}{suffix}: vs the float model's output: omrun cosine {checks.cosine(ref, got):.6f} "
                  f"max error {float(np.max(np.abs(ref - got))):.3g}; ORT cosine {checks.cosine(ref, ort):.6f} "
                  f"max error {float(np.max(np.abs(ref - ort))):.3g}")
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
