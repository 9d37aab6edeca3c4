#!/usr/bin/python3
"""omrun's msame-style flags on a small model with two inputs and two outputs
(float32 x + y, and its int64 ArgMax), checked against numpy:
--outfmt BIN|TXT|NPY, --input as directories of samples (outputs named after
each sample, mismatched directories refused), --debug, --profiler (the table
and DIR/profile.json), --device, --version; and that every flag the README's
omrun and atc command lines use is one --help lists.

Usage: omrun_cli.py ATC_BINARY OMRUN_BINARY SOURCE_DIR WORK_DIR
"""
import json
import os
import re
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

from checks import check, run, summary

def main():
    atc, omrun, src, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    g = helper.make_graph(
        [helper.make_node("Add", ["x", "y"], ["s"], name="add"),
         helper.make_node("ArgMax", ["s"], ["a"], name="argmax", axis=2, keepdims=0)],
        "two", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
                helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4])],
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("a", TensorProto.INT64, None)])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{work}/two.onnx")
    p = run(atc, f"--model={work}/two.onnx", f"--output={work}/two", "--soc_version=Ascend310",
            "--precision_mode=must_keep_origin_dtype")
    check("the model compiles", p.returncode == 0, p.stderr)
    om = f"{work}/two.om"
    rng = np.random.default_rng(5)
    xs = [rng.standard_normal((2, 3, 4)).astype(np.float32) for _ in range(3)]
    ys = [rng.standard_normal((2, 3, 4)).astype(np.float32) for _ in range(3)]
    for d in ("xd", "yd"):
        os.makedirs(f"{work}/{d}")
    for k in range(3):  # names sort as the samples go: s0 < s1 < s2
        xs[k].tofile(f"{work}/xd/s{k}.bin")
        ys[k].tofile(f"{work}/yd/s{k}_y.bin")

    # One sample of files, each output format.
    x, y = xs[0], ys[0]
    ref_s, ref_a = x + y, (x + y).argmax(axis=2)
    for fmt in ("BIN", "TXT", "NPY", "npy"):
        out = f"{work}/out_{fmt}"
        p = run(omrun, "--model", om, "--input", f"{work}/xd/s0.bin,{work}/yd/s0_y.bin", "--output", out,
                "--outfmt", fmt)
        check(f"--outfmt {fmt} runs", p.returncode == 0, p.stderr)
        ext = fmt.lower()
        if p.returncode:
            continue
        if ext == "bin":
            s = np.fromfile(f"{out}/output_0.bin", "<f4").reshape(2, 3, 4)
            a = np.fromfile(f"{out}/output_1.bin", "<i8").reshape(2, 3)
        elif ext == "txt":
            s = np.loadtxt(f"{out}/output_0.txt", dtype=np.float32).reshape(2, 3, 4)
            a = np.loadtxt(f"{out}/output_1.txt", dtype=np.int64).reshape(2, 3)
            lines = open(f"{out}/output_0.txt").read().splitlines()
            check("TXT: one line per innermost row", len(lines) == 6 and all(len(l.split()) == 4 for l in lines), lines)
        else:
            s, a = np.load(f"{out}/output_0.npy"), np.load(f"{out}/output_1.npy")
            check(f"NPY: dtypes and shapes are the tensors' ({s.dtype} {s.shape}, {a.dtype} {a.shape})",
                  s.dtype == np.float32 and s.shape == (2, 3, 4) and a.dtype == np.int64 and a.shape == (2, 3))
        check(f"--outfmt {fmt}: the values are numpy's", np.array_equal(s, ref_s) and np.array_equal(a, ref_a))
    p = run(omrun, "--model", om, "--output", f"{work}/bad", "--outfmt", "JSON")
    check("--outfmt JSON: exit 1 naming the flag", p.returncode == 1 and "--outfmt" in p.stderr, p.stderr)

    # Directories of samples: every sample runs, its outputs named after it.
    out = f"{work}/out_dirs"
    p = run(omrun, "--model", om, "--input", f"{work}/xd,{work}/yd", "--output", out, "--loop", "2")
    check("--input dirA,dirB runs every sample", p.returncode == 0 and "3 samples" in p.stdout
          and "over 6 runs" in p.stdout, p.stdout + p.stderr)
    for k in range(3):
        f = f"{out}/s{k}_output_0.bin"
        got = np.fromfile(f, "<f4").reshape(2, 3, 4) if os.path.exists(f) else None
        check(f"sample s{k}: {os.path.basename(f)} is its sum", got is not None and np.array_equal(got, xs[k] + ys[k]))
    os.remove(f"{work}/yd/s2_y.bin")
    p = run(omrun, "--model", om, "--input", f"{work}/xd,{work}/yd", "--output", out)
    check("directories with different sample counts: exit 1 naming both", p.returncode == 1
          and f"{work}/yd" in p.stderr and f"{work}/xd" in p.stderr, p.stderr)
    p = run(omrun, "--model", om, "--input", f"{work}/xd,{work}/yd/s0_y.bin", "--output", out)
    check("a directory and a file: exit 1", p.returncode == 1 and "not both" in p.stderr, p.stderr)

    # --debug, --profiler (standing alone, and msame's "true"/"false")
    out = f"{work}/out_prof"
    inp = f"{work}/xd/s0.bin,{work}/xd/s1.bin"
    p = run(omrun, "--model", om, "--input", inp, "--output", out, "--debug", "--profiler", "--loop", "3")
    check("--debug describes the model and the samples", p.returncode == 0 and "workspace" in p.stdout
          and "format ND" in p.stdout and "sample 0 input 1: " in p.stdout, p.stdout + p.stderr)
    check("--profiler prints the time per kind and per task", "profile (per run, over 3 runs):" in p.stdout
          and "tasks (per run, in execution order):" in p.stdout, p.stdout)
    prof = json.load(open(f"{out}/profile.json")) if os.path.exists(f"{out}/profile.json") else {}
    tasks = prof.get("tasks", [])
    check("--profiler writes DIR/profile.json: runs, kinds, every task with name, kind and time",
          prof.get("runs") == 3 and prof.get("kinds") and tasks and all(
              {"index", "name", "kind", "ms_per_run"} <= set(t) and t["ms_per_run"] >= 0 for t in tasks)
          and abs(sum(t["ms_per_run"] for t in tasks) - prof["ms_per_run"]) <= 1e-3 + 0.01 * prof["ms_per_run"],
          prof)
    p = run(omrun, "--model", om, "--input", inp, "--output", f"{work}/out_quiet", "--debug", "false",
            "--profiler=false", "--device", "0")
    check("--debug false --profiler=false --device 0: neither", p.returncode == 0 and "workspace" not in p.stdout
          and "profile" not in p.stdout and not os.path.exists(f"{work}/out_quiet/profile.json"), p.stdout + p.stderr)
    p = run(omrun, "--model", om, "--output", out, "--debug", "maybe")
    check("--debug maybe: exit 1", p.returncode == 1 and "--debug" in p.stderr, p.stderr)
    p = run(omrun, "--model", om, "--output", out, "--device", "1")
    check("--device 1: exit 1", p.returncode == 1 and "--device" in p.stderr, p.stderr)
    p = run(omrun, "--version")
    check("--version names omrun's and libomrt's versions", p.returncode == 0
          and re.fullmatch(r"omrun (\d+\.\d+\.\d+) \(libomrt \1\)\n", p.stdout), p.stdout)

    # The README's commands use flags the tools have.
    readme = open(os.path.join(src, "README.md")).read()
    for tool, binary in (("omrun", omrun), ("atc", atc)):
        helptext = run(binary, "--help").stdout
        lines = [l for l in readme.splitlines() if re.search(rf"(^|[/ `]){tool} --", l)]
        flags = sorted({f for l in lines for f in re.findall(r"--([a-z_]+)", l)})
        missing = [f for f in flags if f"--{f}" not in helptext]
        check(f"README: the {len(flags)} flags its {tool} lines use are in {tool} --help", flags and not missing,
              missing)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
