#!/usr/bin/python3
"""omquant on the float ResNet-18 with its 32 calibration images, end to end.

  1. omquant --model resnet18.onnx --calib calib/resnet18 --output resnet18_qdq.onnx --report ...
     (min-max): it must succeed, and the report's fake-quantized output (the reference evaluator
     on the QDQ model, first calibration image) must be within cosine 0.99 of the float one;
  2. ONNX Runtime (bench/ort_bench.js, when bench/node_modules has onnxruntime-node, or
     --ort-bench) runs the QDQ model on resnet18.input.bin: cosine >= 0.99 against the float
     model's PyTorch output (resnet18.output.bin) and the same top-1;
  3. atc compiles the QDQ model (force_fp16) to int8 cube tasks only (no CONV2D, DWCONV or MATMUL:
     omquant quantizes the classifier's graph output as ONNX Runtime does), and omrun runs it; its
     cosine against the float output is reported and must be >= 0.99 too (measured 0.9989 with min-max while the QDQ model
     runs as fake quantization in fp16).
  4. --threads does not change the result: 5 of the images with --method entropy (whose histograms
     depend on the order samples are taken in) on 1 thread and on 3 write the same bytes.
The models come from models/export_torchvision.py resnet18 and models/export_qdq.py --calib
resnet18; without them the test is skipped (exit 77) with a message saying so. The closing
line says "N passed, M failed".
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

import numpy as np

from checks import cosine

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIP = 77


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "models", "out"))
    ap.add_argument("--work-dir", default=None)
    ap.add_argument("--ort-bench", default=os.path.join(ROOT, "bench", "ort_bench.js"))
    args = ap.parse_args()
    md = args.models_dir
    model, ref_in, ref_out = (os.path.join(md, "resnet18" + e) for e in (".onnx", ".input.bin", ".output.bin"))
    calib = os.path.join(md, "calib", "resnet18")
    missing = [p for p in (model, ref_in, ref_out, os.path.join(calib, "031.bin")) if not os.path.exists(p)]
    if missing:
        print(f"omquant_e2e: SKIPPED: {missing[0]} is missing: run models/export_torchvision.py resnet18 and "
              "models/export_qdq.py --calib resnet18 first")
        return SKIP
    work = args.work_dir or os.path.join(args.bin_dir, "e2e", "omquant-resnet18")
    os.makedirs(work, exist_ok=True)
    qdq, report = os.path.join(work, "resnet18_qdq.onnx"), os.path.join(work, "report.tsv")
    ref = np.fromfile(ref_out, dtype="<f4")
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        passed, failed = passed + bool(ok), failed + (not ok)
        print(("ok   " if ok else "FAIL ") + what)

    t = time.time()
    r = subprocess.run([os.path.join(args.bin_dir, "omquant"), "--model", model, "--calib", calib, "--output", qdq,
                        "--report", report], capture_output=True, text=True)
    sys.stdout.write(r.stdout[-2000:])
    check(r.returncode == 0 and os.path.exists(qdq), f"omquant writes the QDQ model ({time.time() - t:.0f} s)")
    if r.returncode:
        print(r.stderr)
        print(f"{passed} passed, {failed} failed")
        return 1
    with open(report) as f:
        m = re.search(r"output cosine \(float vs fake-quant, first sample\): ([0-9.]+)", f.read())
    fq = float(m.group(1)) if m else 0.0
    check(fq >= 0.99, f"reference evaluator: fake-quantized output vs float cosine {fq:.5f} >= 0.99")

    five = ",".join(sorted(os.path.join(calib, f) for f in os.listdir(calib) if f.endswith(".bin"))[:5])
    outs = []
    for threads in (1, 3):
        out = os.path.join(work, f"threads{threads}.onnx")
        t = time.time()
        r = subprocess.run([os.path.join(args.bin_dir, "omquant"), "--model", model, "--calib", five, "--output", out,
                            "--method", "entropy", "--threads", str(threads)], capture_output=True, text=True)
        check(r.returncode == 0, f"omquant --threads {threads} on 5 images, entropy ({time.time() - t:.1f} s)")
        outs.append(open(out, "rb").read() if r.returncode == 0 else r.stderr)
    check(outs[0] == outs[1], "--threads 1 and --threads 3 write the same model")

    bench = args.ort_bench
    if os.path.isdir(os.path.join(os.path.dirname(bench), "node_modules", "onnxruntime-node")):
        ort_out = os.path.join(work, "ort.bin")
        r = subprocess.run(["node", bench, "--model", qdq, "--input", ref_in, "--shape", "1,3,224,224", "--threads",
                            "1", "--min", "1", "--max", "1", "--budget", "0", "--output", ort_out],
                           capture_output=True, text=True)
        ok = r.returncode == 0 and os.path.exists(ort_out)
        check(ok, "ONNX Runtime runs the QDQ model")
        if ok:
            y = np.fromfile(ort_out, dtype="<f4")
            c = cosine(y, ref)
            check(c >= 0.99, f"ONNX Runtime QDQ output vs float PyTorch output: cosine {c:.5f} >= 0.99")
            check(int(np.argmax(y)) == int(np.argmax(ref)),
                  f"ONNX Runtime QDQ top-1 {int(np.argmax(y))} == float top-1 {int(np.argmax(ref))}")
        else:
            print(r.stderr[-2000:])
    else:
        print(f"note: no onnxruntime-node beside {bench}: the ONNX Runtime check is skipped "
              "(scripts/install-deps.sh --bench installs it, or pass --ort-bench)")

    om = os.path.join(work, "resnet18_qdq")
    r = subprocess.run([os.path.join(args.bin_dir, "atc"), f"--model={qdq}", "--framework=5", f"--output={om}",
                        "--input_shape=input:1,3,224,224", "--soc_version=Ascend310"], capture_output=True, text=True)
    check(r.returncode == 0, "atc compiles the QDQ model")
    if r.returncode == 0:
        js = om + ".json"
        subprocess.run([os.path.join(args.bin_dir, "atc"), "--mode=1", f"--om={om}.om", f"--json={js}"],
                       capture_output=True, text=True)
        kinds = [t["kind"] for t in json.load(open(js))["tasks"]] if os.path.exists(js) else []
        float_cube = [k for k in kinds if k in ("CONV2D", "DWCONV", "MATMUL")]
        check(kinds.count("QCONV2D") > 0 and not float_cube,
              f"int8 cube tasks only: {kinds.count('QCONV2D')} QCONV2D, float ones {float_cube} (the classifier too)")
        out = os.path.join(work, "out")
        r = subprocess.run([os.path.join(args.bin_dir, "omrun"), "--model", om + ".om", "--input", ref_in, "--output",
                            out], capture_output=True, text=True)
        check(r.returncode == 0, "omrun runs it")
        if r.returncode == 0:
            c = cosine(np.fromfile(os.path.join(out, "output_0.bin"), dtype="<f4"), ref)
            check(c >= 0.99, f"omrun QDQ output vs float PyTorch output: cosine {c:.5f} >= 0.99")
        else:
            print(r.stderr[-2000:])
    else:
        print(r.stderr[-2000:])
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
