#!/usr/bin/python3
"""End-to-end check of an input-only QDQ model (Q/DQ on the weighted ops' inputs only, as other tools write).

models/make_input_qdq.py rewrites models/out/NAME.onnx (a PyTorch FX QDQ export, models/export_qdq.py; or,
with --omquant, the float export quantized first by omquant --ops all, calibrated on NAME.input.bin: a
transformer's every MatMul, the attention's two activation x activation ones included) so
that QuantizeLinear / DequantizeLinear pairs stay only on the inputs of Conv, Gemm and MatMul: each
convolution's output is float and feeds float ops (the residual Add, Relu, pooling, the classifier's
float output) until the next convolution's QuantizeLinear. atc compiles it, omrun runs it on
NAME.input.bin, and ONNX Runtime (bench/ort_bench.js with its node_modules, or --ort-bench) runs the same
model (on a CPU without VNNI, with its int8 weights dequantized ahead: checks.ort_peer_model):

  every convolution runs as int8 (QCONV2D, those with a float consumer with an f32 output), no CONV2D,
  DWCONV or MATMUL task is left (--allow-float KIND N: at most N tasks of KIND may stay, e.g. the
  attention's activation x activation MATMULs);
  cosine with ORT's output >= 0.99 and the same top-1 (a sequence model's output: cosine >= 0.999).

It also reports (info, no bar) the om size and the cosine of both against the float model's PyTorch output
(NAME.output.bin). Skipped (exit 77) with a message when the export, python3-onnx or ONNX Runtime is
missing. Exit 0 when every check passes; the closing line says "N passed, M failed".
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
    ap.add_argument("--model", required=True, help="a QDQ export, e.g. resnet18_qdq")
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "models", "out"))
    ap.add_argument("--bin-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work-dir", default=None)
    ap.add_argument("--ort-bench", default=os.path.join(ROOT, "bench", "ort_bench.js"))
    ap.add_argument("--allow-float", nargs=2, action="append", default=[], metavar=("KIND", "N"),
                    help="at most N float cube tasks of KIND may stay")
    ap.add_argument("--omquant", action="store_true", help="NAME is a float export: quantize it with omquant first")
    args = ap.parse_args()

    name = args.model
    paths = {k: os.path.join(args.models_dir, name + k) for k in (".onnx", ".json", ".input.bin")}
    skip = checks.ort_model_skip("model_input_qdq", paths.values(), f"models/export_qdq.py {name[:-4]}",
                                 "models/make_input_qdq.py", args.ort_bench)
    if skip:
        print(skip)
        return SKIP
    with open(paths[".json"]) as f:
        meta = json.load(f)
    tag = name + "_inputs"
    work = args.work_dir or os.path.join(args.bin_dir, "e2e", tag)
    os.makedirs(work, exist_ok=True)
    model = os.path.join(work, tag + ".onnx")
    shape = ",".join(str(d) for d in meta["input_shape"])

    def check(what, ok, detail, show=False):
        return checks.check(f"{tag}: {what}", ok, detail, show=show)

    source = paths[".onnx"]
    if args.omquant:
        source = os.path.join(work, name + "_qdq.onnx")
        p = checks.run(os.path.join(args.bin_dir, "omquant"), "--model", paths[".onnx"], "--calib",
                       paths[".input.bin"], "--output", source, "--ops", "all")
        if not check("omquant quantizes it", p.returncode == 0, p.stderr.strip()[-300:]):
            return checks.summary()
    p = checks.run(sys.executable, os.path.join(ROOT, "models", "make_input_qdq.py"), source, model)
    if not check("rewritten", p.returncode == 0, f"{p.stdout.strip()} {p.stderr.strip()[-300:]}", show=True):
        return checks.summary()
    ort_out = os.path.join(work, "ort.bin")
    p = checks.run("node", args.ort_bench, "--model", checks.ort_peer_model(model, work), "--input", paths[".input.bin"], "--shape", shape,
                   "--dtype", meta.get("input_dtype", "float32"), "--threads", "1", "--min", "1", "--max", "1", "--budget", "0", "--warmup", "0",
                   "--output", ort_out)
    if not check("ONNX Runtime runs it", p.returncode == 0, p.stderr.strip()[-300:]):
        return checks.summary()
    om = os.path.join(work, tag)
    p = checks.run(os.path.join(args.bin_dir, "atc"), f"--model={model}", "--framework=5", f"--output={om}",
                   f"--input_shape={meta['input']}:{shape}", "--soc_version=Ascend310")
    if not check("atc compiles", p.returncode == 0, f"exit {p.returncode} {p.stderr.strip()[:300]}"):
        return checks.summary()
    p = checks.run(os.path.join(args.bin_dir, "atc"), "--mode=1", f"--om={om}.om", f"--json={om}.json")
    kinds = {}
    if p.returncode == 0:
        with open(om + ".json") as f:
            for t in json.load(f).get("tasks", []):
                kinds[t.get("kind")] = kinds.get(t.get("kind"), 0) + 1
    allowed = {k: int(n) for k, n in args.allow_float}
    left = {k: kinds.get(k, 0) for k in ("CONV2D", "DWCONV", "MATMUL")}
    check("int8 convolutions", kinds.get("QCONV2D", 0) > 0 and all(v <= allowed.get(k, 0) for k, v in left.items()),
          f"{kinds.get('QCONV2D', 0)} QCONV2D; float: " + ", ".join(f"{v} {k}" for k, v in left.items()),
          show=True)
    print(f"info {tag}: om {os.path.getsize(om + '.om') / 2**20:.2f} MiB, tasks {json.dumps(kinds, sort_keys=True)}")
    out_dir = os.path.join(work, "out")
    p = checks.run(os.path.join(args.bin_dir, "omrun"), "--model", om + ".om", "--input", paths[".input.bin"],
                   "--output", out_dir, "--loop", "1")
    if not check("omrun runs", p.returncode == 0, f"exit {p.returncode} {p.stderr.strip()[:300]}"):
        return checks.summary()
    got = np.fromfile(os.path.join(out_dir, "output_0.bin"), "<f4").astype(np.float64)
    ort = np.fromfile(ort_out, "<f4").astype(np.float64)
    if not check("output size", got.shape == ort.shape, f"{got.size} values, ORT has {ort.size}"):
        return checks.summary()
    if meta.get("kind") == "sequence":  # no classes: the values alone
        cos = checks.cosine(ort, got)
        check("accuracy vs ORT", cos >= 0.999, f"cosine {cos:.6f} (bar 0.999)", show=True)
    else:
        checks.int8_vs_ort(ort, got)
    ref_path = os.path.join(args.models_dir, name + ".output.bin")
    if os.path.exists(ref_path):
        ref = np.fromfile(ref_path, "<f4").astype(np.float64)
        if ref.shape == got.shape:
            print(f"info {tag}: cosine vs the float model's PyTorch output: omrun {checks.cosine(ref, got):.6f}, "
                  f"ORT {checks.cosine(ref, ort):.6f}")
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
