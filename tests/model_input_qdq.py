#!/usr/bin/python3
"""End-to-end check of an input-only QDQ model (Q/DQ on the weighted ops' inputs only, as other tools write).

models/make_input_qdq.py rewrites models/out/NAME.onnx (a PyTorch FX QDQ export, models/export_qdq.py; or,
with --omquant, the float export quantized first by omquant --ops all, calibrated on NAME.input.bin: a
transformer's every MatMul, the attention's two activation x activation ones included) so
that QuantizeLinear / DequantizeLinear pairs stay only on the inputs of Conv, Gemm and MatMul: each
convolution's output is float and feeds float ops (the residual Add, Relu, pooling, the classifier's
float output) until the next convolution's QuantizeLinear. atc compiles it, omrun runs it on
NAME.input.bin, and ONNX Runtime (bench/ort_bench.js with its node_modules, or --ort-bench) runs the same
model:

  every convolution runs as int8 (QCONV2D, those with a float consumer with an f32 output; a transformer's
  activation x activation MatMuls as QMATMUL), no CONV2D, DWCONV or MATMUL task is left (--allow-float KIND
  N: at most N tasks of KIND may stay);
  cosine with ORT's output >= 0.99 and the same top-1 (a sequence model's output: cosine >= 0.999), ORT's
  output being the closer of its two runs: with its graph optimisations (its fused int8 kernels) and without
  them (--opt disabled: every QuantizeLinear / DequantizeLinear as written, the QDQ graph's own arithmetic),
  as docs/BENCHMARKS.md's int8 table takes them. The two differ: on a host without AVX-512 VNNI, ORT's
  fused kernels put the transformer's output at cosine 0.998 from the float model's (0.955 for omquant's
  QDQ model as it is), the graph as written at 0.99999 (0.99995).

With --omquant --as-quantized the model checked is omquant's own QDQ output (Q/DQ around every op, as ONNX
Runtime's quantize_static writes them), not rewritten.

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
    ap.add_argument("--as-quantized", action="store_true",
                    help="with --omquant: check omquant's QDQ model itself (Q/DQ around every op), not rewritten")
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
    tag = name + ("_qdq" if args.as_quantized else "_inputs")
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
    if args.as_quantized:
        model = source
    else:
        p = checks.run(sys.executable, os.path.join(ROOT, "models", "make_input_qdq.py"), source, model)
        if not check("rewritten", p.returncode == 0, f"{p.stdout.strip()} {p.stderr.strip()[-300:]}", show=True):
            return checks.summary()
    ort_outs = {}
    for opt in ("all", "disabled"):
        ort_outs[opt] = os.path.join(work, "ort.bin" if opt == "all" else "ort_as_written.bin")
        p = checks.run("node", args.ort_bench, "--model", model, "--input", paths[".input.bin"], "--shape", shape,
                       "--dtype", meta.get("input_dtype", "float32"), "--threads", "1", "--min", "1", "--max", "1",
                       "--budget", "0", "--warmup", "0", "--opt", opt, "--output", ort_outs[opt])
        if not check(f"ONNX Runtime runs it (--opt {opt})", p.returncode == 0, p.stderr.strip()[-300:]):
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
    runs = {opt: np.fromfile(path, "<f4").astype(np.float64) for opt, path in ort_outs.items()}
    if not check("output size", all(got.shape == r.shape for r in runs.values()),
                 f"{got.size} values, ORT has {runs['all'].size}"):
        return checks.summary()
    coss = {opt: checks.cosine(r, got) for opt, r in runs.items()}
    closer = max(coss, key=coss.get)
    ort = runs[closer]
    print(f"info {tag}: cosine vs ORT {coss['all']:.6f}, vs ORT as written {coss['disabled']:.6f}")
    if meta.get("kind") == "sequence":  # no classes: the values alone
        check("accuracy vs ORT", coss[closer] >= 0.999,
              f"cosine {coss[closer]:.6f} vs ORT{' as written' if closer == 'disabled' else ''} (bar 0.999)", show=True)
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
