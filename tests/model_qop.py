#!/usr/bin/python3
"""End-to-end check of a QOperator-format int8 model against ONNX Runtime and against its QDQ twin.

NAME_qop.onnx is models/export_qoperator.py's rewrite of models/export_qdq.py's NAME_qdq.onnx into the
format ONNX Runtime's quantizer and the model zoo's int8 models use (QLinearConv and the com.microsoft
QLinearAdd, QLinearGlobalAveragePool, QGemm, ...), with the same quantization parameters. It is taken
from --models-dir, or made in the work directory when missing there (needs python3-onnx, NAME_qdq.onnx
and, for ORT's output, node with onnxruntime-node beside --ort-bench); without them the test is skipped
(exit 77). Both models are compiled with atc and run by omrun on the same input:

  the QOperator package has int8 tasks (QCONV2D, QELTWISE, QLUT) exactly where the QDQ twin's has them
  (task by task: the same islands folded), and no CONV2D;
  cosine with ORT's output of the QOperator model >= 0.99 and the same top-1;
  omrun's outputs of the two packages equal (max abs difference reported; cosine >= 0.9999).

--model qop_ops instead checks the small graph of every com.microsoft QLinear op ORT's CPU provider runs
(models/export_qoperator.py qop_ops), compiled in must_keep_origin_dtype: its int8 tasks (QCONV2D, QLUT,
QELTWISE) and its output against ORT's (all but 1% of the values within 1e-5, none past one step).

Exit 0 when every check passes; the closing line says "N passed, M failed".
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
INT8_KINDS = ("QCONV2D", "QELTWISE", "QLUT")


def tasks(atc, om):
    """The package's tasks (atc --mode=1's JSON), each as (kind, params)."""
    p = subprocess.run([atc, "--mode=1", f"--om={om}", f"--json={om[:-3]}.json"], capture_output=True, text=True)
    if p.returncode:
        return []
    with open(om[:-3] + ".json") as f:
        return [(t.get("kind"), json.dumps(t.get("params"), sort_keys=True)) for t in json.load(f).get("tasks", [])]


def check_ops(atc, omrun, src, work, meta, check):
    """qop_ops (every com.microsoft QLinear op ORT runs, one graph) in must_keep_origin_dtype, whose float
    tail (the dequantized results concatenated) stays float32: its int8 tasks, and its output against ORT's."""
    base, shape = os.path.join(work, "qop_ops"), ",".join(str(d) for d in meta["input_shape"])
    p = subprocess.run([atc, f"--model={src}/qop_ops.onnx", "--framework=5", f"--output={base}",
                        f"--input_shape={meta['input']}:{shape}", "--soc_version=Ascend310",
                        "--precision_mode=must_keep_origin_dtype"], capture_output=True, text=True)
    check("atc compiles", p.returncode == 0, f"exit {p.returncode} {p.stderr.strip()[:300]}")
    if p.returncode:
        return checks.summary()
    kinds = [t[0] for t in tasks(atc, base + ".om")]
    count = {k: kinds.count(k) for k in INT8_KINDS + ("CONV2D",)}
    # QLinearConv and the quantized QGemm; QLinearSigmoid x2, QLinearLeakyRelu; QLinearMul, QLinearAdd x2
    check("int8 tasks", count == {"QCONV2D": 2, "QELTWISE": 3, "QLUT": 3, "CONV2D": 0},
          ", ".join(f"{k} {n}" for k, n in count.items()))
    p = subprocess.run([omrun, "--model", base + ".om", "--input", f"{src}/qop_ops.input.bin", "--output",
                        base + "-out", "--loop", "1"], capture_output=True, text=True)
    check("omrun runs", p.returncode == 0, f"exit {p.returncode} {p.stderr.strip()[:300]}")
    if p.returncode:
        return checks.summary()
    got = np.fromfile(os.path.join(base + "-out", "output_0.bin"), "<f4").astype(np.float64)
    ort = np.fromfile(f"{src}/qop_ops.ort.bin", "<f4").astype(np.float64)
    if got.shape != ort.shape:
        check("output size", False, f"{got.size} values, ORT {ort.size}")
        return checks.summary()
    diff = np.abs(got - ort)
    # one step of the coarsest output scale (0.05); the float QGemm's values differ in float32 rounding only
    check("output vs ORT", float(diff.max()) <= 0.05 and np.mean(diff <= 1e-5) >= 0.99,
          f"{int(np.sum(diff > 1e-5))} of {got.size} values differ by more than 1e-5, max abs difference "
          f"{float(diff.max()):.3g} (bars: 1% of them, 0.05)")
    return checks.summary()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="resnet18", help="the base name: NAME_qop against NAME_qdq; or qop_ops")
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "models", "out"))
    ap.add_argument("--bin-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work-dir", default=None)
    ap.add_argument("--ort-bench", default=os.path.join(ROOT, "bench", "ort_bench.js"))
    args = ap.parse_args()

    ops = args.model == "qop_ops"
    qop, qdq = ("qop_ops", None) if ops else (args.model + "_qop", args.model + "_qdq")
    work = args.work_dir or os.path.join(args.bin_dir, "e2e", qop)
    os.makedirs(work, exist_ok=True)
    src = args.models_dir
    if not all(os.path.exists(os.path.join(src, qop + k)) for k in (".onnx", ".json", ".input.bin", ".ort.bin")):
        src = work
        p = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "models", "export_qoperator.py"), "--out", work,
                            "--models-dir", args.models_dir, "--ort-bench", args.ort_bench, args.model],
                           capture_output=True, text=True)
        if p.returncode or not os.path.exists(os.path.join(work, qop + ".ort.bin")):
            print(f"model_qop: SKIP: no {qop} in {args.models_dir} and it could not be made here "
                  f"(models/export_qoperator.py needs python3-onnx, {qdq + '.onnx, ' if qdq else ''}ONNX Runtime beside "
                  f"{args.ort_bench}): {(p.stderr or p.stdout).strip()[-300:]}")
            return SKIP
        print(p.stdout.strip())
    with open(os.path.join(src, qop + ".json")) as f:
        meta = json.load(f)
    shape = ",".join(str(d) for d in meta["input_shape"])
    inp = os.path.join(src, qop + ".input.bin")

    def check(what, ok, detail):
        checks.check(f"{qop}: {what}", ok, detail, show=True)

    atc, omrun = os.path.join(args.bin_dir, "atc"), os.path.join(args.bin_dir, "omrun")
    if ops:
        return check_ops(atc, omrun, src, work, meta, check)
    outs, listed = {}, {}
    for name, onnx_path in ((qop, os.path.join(src, qop + ".onnx")), (qdq, os.path.join(args.models_dir, qdq + ".onnx"))):
        base = os.path.join(work, name)
        p = subprocess.run([atc, f"--model={onnx_path}", "--framework=5", f"--output={base}",
                            f"--input_shape={meta['input']}:{shape}", "--soc_version=Ascend310"],
                           capture_output=True, text=True)
        check(f"atc compiles {name}", p.returncode == 0, f"exit {p.returncode} {p.stderr.strip()[:300]}")
        if p.returncode:
            return checks.summary()
        listed[name] = tasks(atc, base + ".om")
        out_dir = os.path.join(work, name + "-out")
        p = subprocess.run([omrun, "--model", base + ".om", "--input", inp, "--output", out_dir, "--loop", "1"],
                           capture_output=True, text=True)
        check(f"omrun runs {name}", p.returncode == 0, f"exit {p.returncode} {p.stderr.strip()[:300]}")
        if p.returncode:
            return checks.summary()
        outs[name] = np.fromfile(os.path.join(out_dir, "output_0.bin"), "<f4").astype(np.float64)

    a, b = listed[qop], listed[qdq]
    count = {k: sum(t[0] == k for t in a) for k in INT8_KINDS + ("CONV2D",)}
    where = [i for i in range(max(len(a), len(b)))
             if (i < len(a) and a[i][0] in INT8_KINDS) != (i < len(b) and b[i][0] in INT8_KINDS)]
    check("int8 tasks where the QDQ twin has them", not where and count["QCONV2D"] > 0 and count["CONV2D"] == 0,
          ", ".join(f"{k} {n}" for k, n in count.items()) + (f"; int8 in one package only at tasks {where[:8]}"
                                                              if where else ""))
    same = sum(x == y for x, y in zip(a, b))
    print(f"info {qop}: {len(a)} tasks (twin {len(b)}), {same} of them of the twin's kind and params")
    got, twin = outs[qop], outs[qdq]
    ort = np.fromfile(os.path.join(src, qop + ".ort.bin"), "<f4").astype(np.float64)
    if got.shape != ort.shape or got.shape != twin.shape:
        check("output size", False, f"{got.size} values, ORT {ort.size}, twin {twin.size}")
        return checks.summary()
    checks.int8_vs_ort(ort, got)
    ct = checks.cosine(twin, got)
    check("same output as the QDQ twin's package", ct >= 0.9999,
          f"cosine {ct:.7f} (bar 0.9999), {int(np.sum(got != twin))} of {got.size} values differ, max abs "
          f"difference {float(np.max(np.abs(twin - got))):.3g}")
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
