#!/usr/bin/python3
"""End-to-end check of one quantized (QDQ) export: atc -> omrun -> compare with ONNX Runtime's int8 output.

Compiles models/out/NAME.onnx (made by models/export_qdq.py: PyTorch FX post-training quantization, QDQ
ONNX) with atc, runs it with omrun on NAME.input.bin and compares the output with ONNX Runtime's output for
the same model (NAME.ort.bin, its int8 kernels), which computes the quantized islands with the integer
arithmetic atc's QConv does:

  the package has QCONV2D tasks (the convolutions run as int8) and no CONV2D task left;
  cosine similarity with ORT's output >= 0.99 and the same top-1.

It also reports (info, no bar) the om size against the ONNX file and the cosine against the float model's
PyTorch output (NAME.output.bin). When the export is missing the test is skipped (exit 77) with a message
saying how to make it. Exit 0 when every check passes; the closing line says "N passed, M failed".
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

import checks

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIP = 77


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="e.g. resnet50_qdq")
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "models", "out"))
    ap.add_argument("--bin-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work-dir", default=None)
    args = ap.parse_args()

    name = args.model
    paths = {k: os.path.join(args.models_dir, name + k) for k in (".onnx", ".json", ".input.bin", ".ort.bin")}
    missing = [p for p in paths.values() if not os.path.exists(p)]
    if missing:
        print(f"model_qdq: SKIP: {', '.join(missing)} missing: run models/export_qdq.py {name[:-4]} "
              "(needs python3-torch and node with /work/main/bench/node_modules for the ORT output)")
        return SKIP
    with open(paths[".json"]) as f:
        meta = json.load(f)
    work = args.work_dir or os.path.join(args.bin_dir, "e2e", name)
    os.makedirs(work, exist_ok=True)
    om_base = os.path.join(work, name)
    shape = ",".join(str(d) for d in meta["input_shape"])

    def check(what, ok, detail):
        checks.check(f"{name}: {what}", ok, detail, show=True)

    atc = os.path.join(args.bin_dir, "atc")
    p = subprocess.run([atc, f"--model={paths['.onnx']}", "--framework=5", f"--output={om_base}",
                        f"--input_shape={meta['input']}:{shape}", "--soc_version=Ascend310"],
                       capture_output=True, text=True)
    check("atc compiles", p.returncode == 0, f"exit {p.returncode} {p.stderr.strip()[:300]}")
    if p.returncode:
        return checks.summary()
    p = subprocess.run([atc, "--mode=1", f"--om={om_base}.om", f"--json={om_base}.json"], capture_output=True,
                       text=True)
    kinds = {}
    if p.returncode == 0:
        with open(om_base + ".json") as f:
            for t in json.load(f).get("tasks", []):
                kinds[t.get("kind")] = kinds.get(t.get("kind"), 0) + 1
    check("int8 convolutions", kinds.get("QCONV2D", 0) > 0 and kinds.get("CONV2D", 0) == 0,
          f"{kinds.get('QCONV2D', 0)} QCONV2D, {kinds.get('CONV2D', 0)} CONV2D, {kinds.get('DWCONV', 0)} DWCONV tasks")
    om_size, onnx_size = os.path.getsize(om_base + ".om"), os.path.getsize(paths[".onnx"])
    print(f"info {name}: om {om_size / 2**20:.2f} MiB = {om_size / onnx_size:.3f}x the QDQ ONNX file")

    out_dir = os.path.join(work, "out")
    p = subprocess.run([os.path.join(args.bin_dir, "omrun"), "--model", om_base + ".om", "--input",
                        paths[".input.bin"], "--output", out_dir, "--loop", "1"], capture_output=True, text=True)
    check("omrun runs", p.returncode == 0, f"exit {p.returncode} {p.stderr.strip()[:300]}")
    if p.returncode:
        return checks.summary()
    got = np.fromfile(os.path.join(out_dir, "output_0.bin"), "<f4").astype(np.float64)
    ort = np.fromfile(paths[".ort.bin"], "<f4").astype(np.float64)
    if got.shape != ort.shape:
        check("output size", False, f"{got.size} values, ORT has {ort.size}")
        return checks.summary()
    checks.int8_vs_ort(ort, got)
    ref_path = os.path.join(args.models_dir, name + ".output.bin")
    if os.path.exists(ref_path):
        ref = np.fromfile(ref_path, "<f4").astype(np.float64)
        if ref.shape == got.shape:
            print(f"info {name}: cosine vs the float model's PyTorch output: omrun {checks.cosine(ref, got):.6f}, "
                  f"ORT int8 {checks.cosine(ref, ort):.6f}")
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
