#!/usr/bin/python3
"""A corpus of QDQ models beyond models/export_qdq.py's four, and how atc and omrun do on each.

Two sources of quantized models, written to --out (default /tmp/qdq_corpus; nothing is committed):

  omquant:   build/omquant (minmax, percentile, and "all": minmax with --ops all, the QDQ form ONNX
             Runtime's quantize_static writes, a Q/DQ pair on every activation of Mul, Concat,
             MaxPool, Resize, Softmax, ...) on float exports in models/out (models/export_torchvision.py's)
             or, failing that, in --float-dir (a model sweep's work directory, copied into --out/float),
             NAME_omq_METHOD.onnx, calibrated on CALIB seeded random normal images (the distribution
             the float exports' BatchNorms were estimated on);
  PyTorch:   torchvision.models.quantization's quantizable networks (mobilenet_v3_large, googlenet,
             inception_v3, shufflenet_v2_x1_0), seeded weights, BatchNorm statistics re-estimated as
             models/export_torchvision.py does, FX post-training quantization with the fbgemm qconfig
             mapping (fixed parameters for Hardsigmoid) and ONNX export at opset 13, as
             models/export_qdq.py does: NAME_fx.onnx (an export that fails is reported and skipped).

Each model gets NAME.input.bin (a seeded random input) and NAME.ort.bin (ONNX Runtime's output, its
int8 kernels, through bench/ort_bench.js --output). Then, per model: does atc compile it, how many of
its convolutions / matmuls are int8 tasks (QCONV2D against CONV2D, DWCONV, MATMUL, ... in the
`atc --mode=1` dump), omrun's output against ORT's (cosine, top-1 for classifiers) and, with
--rounds R > 0, the ratio of omrun's 1-thread latency to ORT's (both pinned to one core with
taskset, alternating R rounds, the minimum of each side's min latency). It prints one table row per
model (markdown) and writes --out/corpus.json.

Usage: models/qdq_corpus.py [--out DIR] [--bin-dir build] [--ort-bench FILE] [--float-dir DIR]
                            [--rounds R] [--core C] [--only NAME,...] [--make-only]
Models that exist in --out are not made again (delete them to remake).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CALIB = 8
SEED = 20261128
OPSET = 13

# omquant entries: float export in models/out -> methods
OMQUANT = {"mobilenet_v2": ["minmax", "percentile"], "efficientnet_b0": ["minmax", "percentile"],
           "mobilenet_v3_small": ["minmax", "percentile"], "shufflenet_v2_x1_0": ["minmax", "percentile"],
           "convnext_tiny": ["minmax"], "vit_b_16": ["minmax"], "googlenet": ["minmax", "all"],
           "regnet_y_400mf": ["minmax"], "lraspp_mobilenet_v3_large": ["minmax"],
           "transformer_encoder": ["minmax", "all"], "mobilenet_v3_large": ["minmax", "all"],
           "mnasnet1_0": ["minmax"], "deeplabv3_mobilenet_v3_large": ["minmax", "all"]}
# method "all": minmax with --ops all, the QDQ form ONNX Runtime's quantize_static writes (a Q/DQ pair on
# every activation of Mul, Concat, MaxPool, Resize, Softmax, Reshape, ...)
# float exports looked for in models/out, then in --float-dir (a model sweep's work directory, whose
# NAME.json names its inputs and shapes): copied into --out/float, never moved

# PyTorch FX entries: torchvision.models.quantization constructor name -> input side
FX = {"mobilenet_v3_large": 224, "googlenet": 224, "inception_v3": 299, "shufflenet_v2_x1_0": 224}

INT8 = ("QCONV2D", "QELTWISE", "QLUT")
FLOAT_MAC = ("CONV2D", "DWCONV", "CONV3D", "MATMUL", "ATTENTION")


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


def random_input(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)


def write_meta(base, shape, source, input_name="input"):
    with open(base + ".json", "w") as f:
        json.dump({"input": input_name, "input_shape": shape, "source": source}, f)


def float_source(args, name):
    """(path without .onnx, input name, input shape) of float export NAME, or None."""
    src = os.path.join(ROOT, "models", "out", name)
    if os.path.exists(src + ".onnx"):
        with open(src + ".json") as f:
            meta = json.load(f)
        return src, meta.get("input", "input"), meta["input_shape"]
    sweep = os.path.join(args.float_dir, name)
    if not os.path.exists(sweep + ".onnx"):
        return None
    with open(sweep + ".json") as f:
        meta = json.load(f)
    if len(meta.get("inputs", [])) != 1:
        return None
    copy = os.path.join(args.out, "float", name)
    os.makedirs(os.path.dirname(copy), exist_ok=True)
    if not os.path.exists(copy + ".onnx"):
        shutil.copyfile(sweep + ".onnx", copy + ".onnx")
    return copy, meta["inputs"][0], meta["shapes"][0]


def make_omquant(args, name, method):
    """NAME_omq_METHOD.onnx: omquant on float export NAME."""
    out = os.path.join(args.out, f"{name}_omq_{method}")
    if os.path.exists(out + ".onnx"):
        return out
    found = float_source(args, name)
    if not found:
        return None
    src, input_name, shape = found
    calib = os.path.join(args.out, "calib", name)
    os.makedirs(calib, exist_ok=True)
    for i in range(CALIB):
        path = os.path.join(calib, f"{i:03d}.bin")
        if not os.path.exists(path):
            random_input(shape, SEED + i).astype("<f4").tofile(path)
    t = time.time()
    p = run([os.path.join(args.bin_dir, "omquant"), "--model", src + ".onnx", "--calib", calib, "--output",
             out + ".onnx", "--method", "minmax" if method == "all" else method,
             "--ops", "all" if method == "all" else "weighted", "--input_shape", input_name + ":" + ",".join(map(str, shape))])
    if p.returncode:
        print(f"corpus: omquant {name} {method} failed: {p.stderr.strip()[-400:]}", file=sys.stderr)
        return None
    print(f"corpus: {out}.onnx ({time.time() - t:.0f} s)", file=sys.stderr)
    random_input(shape, SEED - 1).astype("<f4").tofile(out + ".input.bin")
    write_meta(out, shape, f"omquant {method} {src}.onnx", input_name)
    return out


def make_fx(args, name, side):
    """NAME_fx.onnx: torchvision's quantizable NAME through PyTorch FX post-training quantization."""
    out = os.path.join(args.out, f"{name}_fx")
    if os.path.exists(out + ".onnx"):
        return out
    import torch
    import torchvision
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    sys.path.insert(0, HERE)
    import export_qdq as eq  # noqa: E402  (quantized Concat export)
    import export_torchvision as et  # noqa: E402  (BatchNorm recipe)
    t = time.time()
    shape = [1, 3, side, side]
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    kw = {"aux_logits": False, "init_weights": True} if name in ("googlenet", "inception_v3") else {}
    model = getattr(torchvision.models.quantization, name)(weights=None, quantize=False, **kw)
    et.reestimate_batchnorm(model, gen, shape)
    engines = torch.backends.quantized.supported_engines
    torch.backends.quantized.engine = "fbgemm" if "fbgemm" in engines else "onednn"
    calib = [torch.randn(*shape, generator=gen) for _ in range(CALIB)]
    prepared = prepare_fx(model, get_default_qconfig_mapping("fbgemm"), (calib[0],))
    with torch.no_grad():
        for img in calib:
            prepared(img)
    qmodel = eq.quantized_cats(convert_fx(prepared), calib[0])
    x = torch.from_numpy(random_input(shape, SEED - 1))
    torch.onnx.export(qmodel, x, out + ".onnx", opset_version=OPSET, input_names=["input"],
                      output_names=["output"], do_constant_folding=True)
    x.numpy().astype("<f4").tofile(out + ".input.bin")
    write_meta(out, shape, f"PyTorch FX fbgemm, torchvision.models.quantization.{name}")
    print(f"corpus: {out}.onnx ({time.time() - t:.0f} s)", file=sys.stderr)
    return out


def ort_bench(args, base, shape, threads=1, runs=1, output=None):
    cmd = ["node", args.ort_bench, "--model", base + ".onnx", "--input", base + ".input.bin", "--shape",
           ",".join(map(str, shape)), "--threads", threads, "--min", runs, "--max", runs, "--budget", 0]
    if output:
        cmd += ["--output", output]
    if args.core is not None:
        cmd = ["taskset", "-c", args.core] + cmd
    return run(cmd, cwd=os.path.dirname(args.ort_bench))


def min_ms(text):
    m = re.search(r"min ([0-9.]+) ms", text)
    return float(m.group(1)) if m else None


def check(args, base):
    """One row: the figures for base.onnx."""
    name = os.path.basename(base)
    with open(base + ".json") as f:
        meta = json.load(f)
    shape, input_name = meta["input_shape"], meta.get("input", "input")
    row = {"model": name}
    if not os.path.exists(base + ".ort.bin"):
        p = ort_bench(args, base, shape, output=base + ".ort.bin")
        if p.returncode:
            row["ort"] = p.stderr.strip()[-300:]
    work = os.path.join(args.out, "work", name)
    os.makedirs(work, exist_ok=True)
    om = os.path.join(work, name)
    atc = os.path.join(args.bin_dir, "atc")
    p = run([atc, f"--model={base}.onnx", "--framework=5", f"--output={om}",
             f"--input_shape={input_name}:" + ",".join(map(str, shape)), "--soc_version=Ascend310"])
    if p.returncode:
        row["atc"] = p.stderr.strip()[-300:]
        return row
    p = run([atc, "--mode=1", f"--om={om}.om", f"--json={om}.json"])
    kinds = {}
    with open(om + ".json") as f:
        for t in json.load(f).get("tasks", []):
            kinds[t.get("kind")] = kinds.get(t.get("kind"), 0) + 1
    row["kinds"] = kinds
    row["int8_mac"] = kinds.get("QCONV2D", 0)
    row["float_mac"] = sum(kinds.get(k, 0) for k in FLOAT_MAC)
    row["int8"] = sum(kinds.get(k, 0) for k in INT8)
    row["tasks"] = sum(kinds.values())
    out_dir = os.path.join(work, "out")
    p = run([os.path.join(args.bin_dir, "omrun"), "--model", om + ".om", "--input", base + ".input.bin",
             "--output", out_dir])
    if p.returncode:
        row["omrun"] = (p.stderr or p.stdout).strip()[-300:]
        return row
    if os.path.exists(base + ".ort.bin"):
        got = np.fromfile(os.path.join(out_dir, "output_0.bin"), "<f4").astype(np.float64)
        ref = np.fromfile(base + ".ort.bin", "<f4").astype(np.float64)
        if got.shape == ref.shape:
            row["cosine"] = float(got @ ref / (np.linalg.norm(got) * np.linalg.norm(ref) + 1e-300))
            if got.size == 1000:
                row["top1"] = [int(np.argmax(got)), int(np.argmax(ref))]
        else:
            row["cosine"] = f"{got.size} values, ORT {ref.size}"
    if args.rounds > 0:
        ours, theirs = [], []
        omrun = [os.path.join(args.bin_dir, "omrun"), "--model", om + ".om", "--input", base + ".input.bin",
                 "--output", out_dir, "--threads", 1, "--loop", args.loop]
        if args.core is not None:
            omrun = ["taskset", "-c", args.core] + omrun
        for _ in range(args.rounds):
            ours.append(min_ms(run(omrun, env=dict(os.environ, OMRT_THREADS="1")).stdout))
            theirs.append(min_ms(ort_bench(args, base, shape, runs=args.loop).stdout))
        if None not in ours and None not in theirs:
            row["ms"] = [min(ours), min(theirs)]
            row["ratio"] = min(ours) / min(theirs)
    return row


def fmt(row):
    if "atc" in row:
        return f"| {row['model']} | atc refuses: {row['atc'].splitlines()[-1][:120]} | | | |"
    mac = f"{row['int8_mac']} / {row['int8_mac'] + row['float_mac']} (int8 tasks {row['int8']} / {row['tasks']})"
    if "omrun" in row:
        return f"| {row['model']} | {mac} | omrun fails: {row['omrun'].splitlines()[-1][:100]} | | |"
    cos = row.get("cosine")
    cos = f"{cos:.4f}" if isinstance(cos, float) else str(cos)
    top = row.get("top1")
    top = ("same" if top[0] == top[1] else f"{top[0]} vs {top[1]}") if top else "-"
    ratio = f"{row['ratio']:.2f} ({row['ms'][0]:.2f} / {row['ms'][1]:.2f} ms)" if "ratio" in row else "-"
    return f"| {row['model']} | {mac} | {cos} | {top} | {ratio} |"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="/tmp/qdq_corpus")
    ap.add_argument("--bin-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--ort-bench", default=os.path.join(ROOT, "bench", "ort_bench.js"))
    ap.add_argument("--float-dir", default="/tmp/sweep6-work", help="more float exports (NAME.onnx, NAME.json)")
    ap.add_argument("--rounds", type=int, default=0, help="alternating timing rounds (0: no timing)")
    ap.add_argument("--loop", type=int, default=10, help="runs per timing round and side")
    ap.add_argument("--core", default=None, help="pin both runtimes to this core (taskset -c)")
    ap.add_argument("--only", default="", help="comma-separated model names (as in the table)")
    ap.add_argument("--make-only", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    only = set(filter(None, args.only.split(",")))
    bases = []
    for name, methods in OMQUANT.items():
        for m in methods:
            if not only or f"{name}_omq_{m}" in only:
                bases.append(make_omquant(args, name, m))
    for name, side in FX.items():
        if not only or f"{name}_fx" in only:
            try:
                bases.append(make_fx(args, name, side))
            except Exception as e:  # an export PyTorch cannot write is a row of its own
                print(f"corpus: {name}_fx: export failed: {e}", file=sys.stderr)
    bases = [b for b in bases if b]
    if args.make_only:
        return 0
    rows = []
    print("| model | int8 conv+matmul tasks / all (int8 tasks / all tasks) | cosine vs ORT | top-1 | "
          "1-thread time / ORT |\n|---|---|---|---|---|", flush=True)
    for b in bases:
        rows.append(check(args, b))
        print(fmt(rows[-1]), flush=True)
    with open(os.path.join(args.out, "corpus.json"), "w") as f:
        json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
