#!/usr/bin/python3
"""atc's flags on a small real model: --help, both --flag=value and --flag value
forms, usage errors (exit 2), --log=info phase lines, --dump_graph (IR text
and DOT after every pass), --mode=1 (om to JSON), --mode=3 (precheck), --out_nodes,
--fusion_switch_file (each rule, ALL, the op-by-op build), --disable_reuse_memory and
OP_NO_REUSE_MEM (workspace tensors that share no memory), --singleop (one op model per
description, run by omrun; each bad description named by index, op and field), omrun
running the result against numpy, and a weight made by ConstantOfShape past
the 64 MiB and 2^26-step folding bounds (the ONNX zoo's "light" VGG-19
pattern) folded at compile time.

Usage: atc_cli.py ATC_BINARY OMRUN_BINARY WORK_DIR
"""
import json
import os
import resource
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from checks import check, run, summary

# The kernel paths omrun is run on (runtime/cpu.c): what the host picks (the 512-bit micro-kernels on an
# AVX-512 host), the 256-bit ones, and the portable C ones.
KERNEL_PATHS = (("x86", None), ("AVX2", dict(os.environ, OMRT_AVX512="0")),
                ("portable", dict(os.environ, OMRT_PORTABLE="1")))


def conv2d(x, w, pad):
    """Stride-1 NCHW convolution in float64, `pad` zeros on every side."""
    k = w.shape[2]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    h, wd = xp.shape[2] - k + 1, xp.shape[3] - k + 1
    y = np.zeros((x.shape[0], w.shape[0], h, wd), np.float64)
    for i in range(k):
        for j in range(k):
            y += np.einsum("nchw,oc->nohw", xp[:, :, i:i + h, j:j + wd], w[:, :, i, j])
    return y


def compile_om(atc, model, base, prec, label, *flags):
    """atc model -> base.om under precision mode prec and flags (checked), and the om as JSON ({} on failure)."""
    p = run(atc, f"--model={model}", f"--output={base}", "--soc_version=Ascend310", "--framework=5",
            f"--precision_mode={prec}", *flags)
    check(f"{label}, {prec}: compiles", p.returncode == 0, p.stderr)
    p = run(atc, "--mode=1", f"--om={base}.om", f"--json={base}.json")
    return json.load(open(base + ".json")) if p.returncode == 0 else {"tasks": [], "tensors": []}


def check_paths(omrun, base, inp, ref, tol, label):
    """Runs base.om on inp on every kernel path: max error <= tol x max|ref|."""
    for kernels, env in KERNEL_PATHS:
        p = subprocess.run([omrun, "--model", base + ".om", "--input", inp, "--output", base + "_out"],
                           capture_output=True, text=True, env=env)
        got = np.fromfile(os.path.join(base + "_out", "output_0.bin"), "<f4") if p.returncode == 0 else np.zeros(0)
        err = np.abs(got - ref.ravel()).max() / np.abs(ref).max() if got.size == ref.size else -1
        check(f"{label}, {kernels} kernels: matches the reference", 0 <= err <= tol, f"{err} {p.stderr}")


def main():
    atc, omrun, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    rng = np.random.default_rng(7)
    w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["r"], name="relu0"),
         helper.make_node("MaxPool", ["r"], ["m"], name="pool0", kernel_shape=[2, 2], strides=[2, 2]),
         helper.make_node("GlobalAveragePool", ["m"], ["gap"], name="gap0"),
         helper.make_node("Flatten", ["gap"], ["y"], name="flat0")],
        "cli", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = os.path.join(work, "cli.onnx")
    with open(model, "wb") as f:
        f.write(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    x.tofile(os.path.join(work, "x.bin"))

    # reference in numpy
    conv = conv2d(x.astype(np.float64), w.astype(np.float64), 1)
    relu = np.maximum(conv + b[None, :, None, None], 0)
    pool = relu.reshape(2, 8, 4, 2, 4, 2).max(axis=(3, 5))
    ref = pool.mean(axis=(2, 3))

    p = run(atc, "--help")
    check("--help exits 0 and lists flags", p.returncode == 0 and "--soc_version" in p.stdout and "--dump_graph" in p.stdout)
    p = run(atc)
    check("no flags: usage, exit 2", p.returncode == 2 and "usage" in p.stderr)
    p = run(atc, "--modle=x.onnx")
    check("unknown flag: exit 2 naming it", p.returncode == 2 and "--modle" in p.stderr, p.stderr)
    p = run(atc, f"--model={model}", "--output", os.path.join(work, "o"), "--soc_version")
    check("flag without value: exit 2", p.returncode == 2 and "--soc_version" in p.stderr, p.stderr)
    p = run(atc, f"--model={model}", f"--output={work}/o", "--soc_version=Ascend310", "--precision_mode=fast")
    check("bad --precision_mode: exit 2", p.returncode == 2 and "fast" in p.stderr, p.stderr)
    p = run(atc, f"--model={model}", f"--output={work}/o", "--soc_version=Ascend310", "--framework=3")
    check("--framework other than 5: exit 2", p.returncode == 2 and "framework" in p.stderr, p.stderr)
    p = run(atc, f"--model={model}", f"--output={work}/o", "--soc_version=Ascend999", "--input_shape=x:2,3,8,8")
    check("unknown SoC lists the known ones", p.returncode == 1 and "Ascend310" in p.stderr, p.stderr)
    outdir = os.path.join(work, "outdir")
    os.makedirs(outdir)
    for bad in (outdir + "/", outdir, "", outdir + "/.", outdir + "/.."):
        p = run(atc, f"--model={model}", f"--output={bad}", "--soc_version=Ascend310")
        check(f"--output={bad!r} (a directory): exit 2 naming the flag, nothing written",
              p.returncode == 2 and "--output" in p.stderr and "directory" in p.stderr and not os.listdir(outdir)
              and not os.path.exists(os.path.join(work, ".om")) and not os.path.exists(outdir + ".om"), p.stderr)
    # No leftovers (issue 24): past `ulimit -f` (SIGXFSZ) the write fails, nothing stays beside the
    # target and an old package is untouched; a name of 251 characters (NAME_MAX 255) still gets a
    # temporary file name that fits; omrun's outputs are written the same way.
    lim = os.path.join(work, "limit")
    os.makedirs(lim)
    with open(os.path.join(lim, "m.om"), "wb") as f:
        f.write(b"old package")
    small = lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))
    p = subprocess.run([atc, f"--model={model}", f"--output={lim}/m", "--soc_version=Ascend310",
                        "--input_shape=x:2,3,8,8"], capture_output=True, text=True, preexec_fn=small)
    check("past ulimit -f: exit 1 naming the write, the old package untouched, no temporary left",
          p.returncode == 1 and "File too large" in p.stderr and os.listdir(lim) == ["m.om"]
          and open(os.path.join(lim, "m.om"), "rb").read() == b"old package", p.stderr + str(os.listdir(lim)))
    longname = os.path.join(lim, "n" * 248)
    p = run(atc, f"--model={model}", f"--output={longname}", "--soc_version=Ascend310", "--input_shape=x:2,3,8,8")
    check("--output of 248 characters (251 with .om) compiles, nothing else left",
          p.returncode == 0 and sorted(os.listdir(lim)) == sorted(["m.om", "n" * 248 + ".om"]), p.stderr)
    outs = os.path.join(lim, "out")
    p = subprocess.run([omrun, "--model", longname + ".om", "--input", os.path.join(work, "x.bin"), "--output", outs,
                        "--outfmt", "TXT"], capture_output=True, text=True,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (8, 8)))
    check("omrun past ulimit -f: exit 1, no partial or empty output file",
          p.returncode == 1 and "File too large" in p.stderr and not os.listdir(outs), p.stderr)

    p = run(atc, "--version")
    check("--version prints 'atc X.Y.Z'", p.returncode == 0 and p.stdout.startswith("atc ")
          and p.stdout.split()[1].count(".") == 2, p.stdout + p.stderr)

    # ATC's other spellings: -flag (one dash) and dashes for underscores in the name
    p = run(atc, f"-model={model}", "-framework", "5", f"--output={work}/dash", "--soc-version=Ascend310",
            "-input-shape=x:2,3,8,8")
    check("-flag and --soc-version spellings compile", p.returncode == 0 and os.path.exists(f"{work}/dash.om"),
          p.stderr)
    p = run(atc, "-help")
    check("-help prints the usage", p.returncode == 0 and "--soc_version" in p.stdout, p.stderr)
    p = run(atc, f"--model={model}", "--op-name-map=x.txt")
    check("an unsupported ATC flag in dash spelling is named", p.returncode == 2 and "op-name-map" in p.stderr, p.stderr)

    # --flag value form, --log=info, --dump_graph
    dump = os.path.join(work, "dump")
    p = run(atc, "--model", model, "--framework", "5", "--output", os.path.join(work, "space"), "--soc_version",
            "Ascend910", "--input_shape", "x:2,3,8,8", "--log", "info", "--dump_graph", dump)
    check("--flag value form compiles", p.returncode == 0, p.stderr)
    phases = [l for l in p.stderr.splitlines() if l.startswith("[INFO] atc:") and " SoC " not in l]
    check("--log=info names the SoC file read", "[INFO] atc: SoC Ascend910 from " in p.stderr
          and "Ascend910.yaml" in p.stderr, p.stderr)
    check("--log=info: a line per phase with its time", len(phases) >= 12 and all(l.rstrip().endswith("ms") for l in phases),
          p.stderr)
    check("summary names workspace and lower bound", "liveness lower bound" in p.stdout, p.stdout)
    dumped = sorted(os.listdir(dump)) if os.path.isdir(dump) else []
    check("--dump_graph: IR and DOT after import and every pass",
          len([f for f in dumped if f.endswith(".ir")]) >= 12 and len([f for f in dumped if f.endswith(".dot")]) >= 12
          and any("layout" in f for f in dumped), dumped)
    if dumped:
        with open(os.path.join(dump, [f for f in dumped if f.endswith("_fuse.ir")][0])) as f:
            fused = f.read()
        check("fuse dump shows Conv with relu, no Relu node", 'act="relu"' in fused and "= Relu(" not in fused, fused)

    # --flag=value form, runs, matches numpy in both precisions
    for prec, bar in (("must_keep_origin_dtype", 1e-4), ("force_fp16", 2e-2)):
        base = os.path.join(work, prec)
        p = run(atc, f"--model={model}", "--framework=5", f"--output={base}", "--soc_version=Ascend310",
                "--input_shape=x:2,3,8,8", f"--precision_mode={prec}")
        check(f"{prec}: compiles", p.returncode == 0 and os.path.exists(base + ".om"), p.stderr)
        p = run(omrun, "--model", base + ".om", "--input", os.path.join(work, "x.bin"), "--output", base + "_out")
        check(f"{prec}: omrun runs", p.returncode == 0, p.stderr + p.stdout)
        if p.returncode == 0:
            got = np.fromfile(os.path.join(base + "_out", "output_0.bin"), "<f4").reshape(ref.shape)
            err = float(np.abs(got - ref).max() / np.abs(ref).max())
            check(f"{prec}: matches numpy (rel err {err:.2g} <= {bar})", err <= bar)

    # ConstantOfShape making a 70M-element (280 MB) constant that only its last 4 values are read of: the
    # ops that only fold are bounded by 4 GiB, not by the 64 MiB / 2^26-step bounds of foldable ones.
    big, n = os.path.join(work, "cos.onnx"), 70_000_000
    g = helper.make_graph(
        [helper.make_node("ConstantOfShape", ["shape"], ["c"], name="big",
                          value=helper.make_tensor("v", TensorProto.FLOAT, [1], [0.5])),
         helper.make_node("Slice", ["c", "st", "en"], ["s"], name="tail"),
         helper.make_node("Add", ["x", "s"], ["y"], name="add")], "cos",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        [numpy_helper.from_array(np.array(v, np.int64), k) for k, v in (("shape", [n]), ("st", [n - 4]), ("en", [n]))])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), big)
    xb = np.arange(4, dtype=np.float32)
    xb.tofile(os.path.join(work, "xb.bin"))
    p = run(atc, f"--model={big}", f"--output={work}/cos", "--soc_version=Ascend310",
            "--precision_mode=must_keep_origin_dtype")
    check("ConstantOfShape of 70M elements folds at compile time", p.returncode == 0, p.stderr)
    p = run(omrun, "--model", f"{work}/cos.om", "--input", os.path.join(work, "xb.bin"), "--output", f"{work}/cos_out")
    got = np.fromfile(f"{work}/cos_out/output_0.bin", "<f4") if p.returncode == 0 else None
    check("... and runs: x + 0.5", got is not None and np.array_equal(got, xb + 0.5), p.stderr)

    # --mode=1: the package as JSON
    js = os.path.join(work, "m.json")
    p = run(atc, "--mode=1", f"--om={work}/force_fp16.om", f"--json={js}")
    check("--mode=1 writes JSON", p.returncode == 0 and os.path.exists(js), p.stderr)
    if os.path.exists(js):
        with open(js) as f:
            doc = json.load(f)
        text = json.dumps(doc)
        check("JSON names the SoC, precision, tasks and the atc command line",
              "Ascend310" in text and "force_fp16" in text and "CONV2D" in text and "--precision_mode=force_fp16" in text)
        version = run(atc, "--version").stdout.strip()
        check("the om records the version atc --version prints", doc.get("model", {}).get("atc_version") == version,
              f"{doc.get('model', {}).get('atc_version')} != {version}")
    # ... naming every task kind: weights fed at run time are packed by a WPACK task
    g2 = helper.make_graph(
        [helper.make_node("Conv", ["x", "wr"], ["y"], name="conv_rt", kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
        "rtw", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8]),
                helper.make_tensor_value_info("wr", TensorProto.FLOAT, [8, 3, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    rtw = os.path.join(work, "rtw.onnx")
    onnx.save(helper.make_model(g2, opset_imports=[helper.make_opsetid("", 13)]), rtw)
    p = run(atc, f"--model={rtw}", "--framework=5", f"--output={work}/rtw", "--soc_version=Ascend310")
    if p.returncode == 0:
        p = run(atc, "--mode=1", f"--om={work}/rtw.om", f"--json={work}/rtw.json")
    kinds = [t["kind"] for t in json.load(open(f"{work}/rtw.json"))["tasks"]] if p.returncode == 0 else []
    check("--mode=1 names every task kind (WPACK for run-time weights)",
          "WPACK" in kinds and all(isinstance(k, str) for k in kinds), f"{kinds} {p.stderr}")
    p = run(atc, "--mode=1", f"--om={model}", f"--json={work}/bad.json")
    check("--mode=1 on a non-om: exit 1, no JSON", p.returncode == 1 and not os.path.exists(f"{work}/bad.json"), p.stderr)

    # --mode=3: precheck lists every unsupported node, compiles nothing
    pre = os.path.join(work, "precheck")
    os.makedirs(pre)
    p = run(atc, "--mode=3", f"--model={model}", "--soc_version=Ascend310", "--input_shape=x:2,3,8,8",
            env=dict(os.environ, ASCEND_WORK_PATH=pre))
    check("--mode=3 on a supported model: exit 0, says so",
          p.returncode == 0 and "precheck passed" in p.stdout and "5 nodes" in p.stdout, p.stdout + p.stderr)
    rep = os.path.join(pre, "check_result.json")
    got = json.load(open(rep)) if os.path.exists(rep) else {}
    check("--mode=3 writes check_result.json in $ASCEND_WORK_PATH: success, 5 nodes, nothing unsupported",
          got.get("result") == "success" and got.get("nodes") == 5 and got.get("unsupported") == [], got)
    if os.path.exists(rep):
        os.remove(rep)
    bad = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["a"], name="ok0"),
         helper.make_node("MadeUpOpA", ["a"], ["b"], name="first_bad"),
         helper.make_node("Relu", ["b"], ["c"], name="downstream"),
         helper.make_node("MadeUpOpB", ["a"], ["d"], name="second_bad"),
         helper.make_node("Add", ["c", "d"], ["y"], name="join")],
        "pre", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    bad_model = os.path.join(pre, "bad.onnx")
    with open(bad_model, "wb") as f:
        f.write(helper.make_model(bad, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    p = run(atc, "--mode=3", f"--model={bad_model}", "--soc_version=Ascend310", f"--output={pre}/bad",
            f"--check_report={pre}/report.json")
    lines = [l for l in p.stdout.splitlines() if l.startswith("atc: precheck: ")]
    check("--mode=3 lists each unsupported node once, by name and op, and exits 1",
          p.returncode == 1 and len(lines) == 2 and "first_bad" in lines[0] and "MadeUpOpA" in lines[0]
          and "second_bad" in lines[1] and "MadeUpOpB" in lines[1], p.stdout + p.stderr)
    check("--mode=3 does not report nodes that fail only through an unsupported input",
          "downstream" not in p.stdout and "'join'" not in p.stdout and "2 of 5 nodes" in p.stdout, p.stdout)
    check("--mode=3 writes no om", sorted(os.listdir(pre)) == ["bad.onnx", "report.json"], os.listdir(pre))
    rep = os.path.join(pre, "report.json")
    got = json.load(open(rep)) if os.path.exists(rep) else {}
    unsup = got.get("unsupported", [])
    check("--check_report: failed, the two unsupported nodes by name and op",
          got.get("result") == "failed" and len(unsup) == 2 and "first_bad" in unsup[0] and "MadeUpOpA" in unsup[0]
          and "second_bad" in unsup[1] and "MadeUpOpB" in unsup[1] and "error" in got, got)
    p = run(atc, f"--model={bad_model}", "--soc_version=Ascend310", f"--output={pre}/bad0",
            f"--check_report={pre}/compile.json")
    got = json.load(open(f"{pre}/compile.json")) if os.path.exists(f"{pre}/compile.json") else {}
    check("--check_report with a failed --mode=0 compile: exit 1, the report says why",
          p.returncode == 1 and got.get("result") == "failed" and "MadeUpOpA" in got.get("error", ""), p.stderr)
    p = run(atc, f"--model={model}", "--soc_version=Ascend310", f"--output={pre}/good", "--input_shape=x:2,3,8,8",
            f"--check_report={pre}/none.json")
    check("--check_report with a compile that succeeds: no report left",
          p.returncode == 0 and not os.path.exists(f"{pre}/none.json"), p.stderr)
    with open(f"{pre}/kept.json", "w") as f:
        f.write("mine")
    p = run(atc, f"--model={model}", "--soc_version=Ascend310", f"--output={pre}/good", "--input_shape=x:2,3,8,8",
            f"--check_report={pre}/kept.json")
    check("--check_report with a compile that succeeds: an existing file at that path is left as it was",
          p.returncode == 0 and open(f"{pre}/kept.json").read() == "mine", p.stderr)
    p = run(atc, "--mode=3", f"--model={model}")
    check("--mode=3 without --soc_version: exit 2", p.returncode == 2 and "--soc_version" in p.stderr, p.stderr)

    # --out_nodes: stop after the pool
    base = os.path.join(work, "cut")
    p = run(atc, f"--model={model}", f"--output={base}", "--soc_version=Ascend310", "--input_shape=x:2,3,8,8",
            "--out_nodes=pool0:0", "--precision_mode=must_keep_origin_dtype")
    check("--out_nodes compiles", p.returncode == 0, p.stderr)
    p = run(omrun, "--model", base + ".om", "--input", os.path.join(work, "x.bin"), "--output", base + "_out")
    if p.returncode == 0:
        got = np.fromfile(os.path.join(base + "_out", "output_0.bin"), "<f4")
        check("--out_nodes output is the pool's", got.size == pool.size and
              np.abs(got - pool.ravel()).max() <= 1e-4 * np.abs(pool).max())
    else:
        check("--out_nodes model runs", False, p.stderr)
    p = run(atc, f"--model={model}", f"--output={base}2", "--soc_version=Ascend310", "--input_shape=x:2,3,8,8",
            "--out_nodes=nosuch:0")
    check("--out_nodes with an unknown node: exit 1 naming it", p.returncode == 1 and "nosuch" in p.stderr, p.stderr)

    # --fusion_switch_file: VectorProgramFusionPass:off gives one vector program per elementwise op (SiLU + add:
    # three programs instead of one), computing the same thing.
    g = helper.make_graph(
        [helper.make_node("Sigmoid", ["x"], ["s"], name="sig0"), helper.make_node("Mul", ["x", "s"], ["m"], name="mul0"),
         helper.make_node("Add", ["m", "x"], ["y"], name="add0")],
        "silu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    silu = os.path.join(work, "silu.onnx")
    with open(silu, "wb") as f:
        f.write(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    silu_ref = x / (1 + np.exp(-x.astype(np.float64))) + x
    switches = os.path.join(work, "fusion.cfg")
    with open(switches, "w") as f:
        f.write("# the op-by-op build\n\n  VectorProgramFusionPass : off  # one program per op\n")
    for name, extra, want in (("fused", [], 1), ("unfused", [f"--fusion_switch_file={switches}"], 3)):
        base = os.path.join(work, name)
        p = run(atc, f"--model={silu}", f"--output={base}", "--soc_version=Ascend310", "--framework=5",
                "--precision_mode=must_keep_origin_dtype", *extra)
        check(f"--fusion_switch_file: {name} build compiles", p.returncode == 0, p.stderr)
        p = run(atc, "--mode=1", f"--om={base}.om", f"--json={base}.json")
        n = sum(t["kind"] == "VPROG" for t in json.load(open(base + ".json"))["tasks"]) if p.returncode == 0 else -1
        check(f"--fusion_switch_file: {name} build has {want} vector program(s)", n == want, n)
        p = run(omrun, "--model", base + ".om", "--input", os.path.join(work, "x.bin"), "--output", base + "_out")
        got = np.fromfile(os.path.join(base + "_out", "output_0.bin"), "<f4") if p.returncode == 0 else np.zeros(0)
        check(f"--fusion_switch_file: {name} build computes SiLU(x) + x", got.size == silu_ref.size and
              np.abs(got - silu_ref.ravel()).max() <= 1e-5 * np.abs(silu_ref).max(), p.stderr)
    # LayerNormFusionPass: a LayerNormalization (which the frontend decomposes) fed by a residual Add is one
    # LAYERNORM task; switched off, the decomposition's two REDUCE tasks come back. Both against numpy.
    scale = rng.standard_normal((8, 8)).astype(np.float32)
    bias = rng.standard_normal((8, 8)).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("Add", ["x", "x"], ["s"], name="res0"),
         helper.make_node("LayerNormalization", ["s", "scale", "bias"], ["y"], name="ln0", axis=2, epsilon=1e-5)],
        "ln", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(scale, "scale"), numpy_helper.from_array(bias, "bias")])
    lnm = os.path.join(work, "ln.onnx")
    with open(lnm, "wb") as f:
        f.write(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    s2 = 2 * x.astype(np.float64)
    mean = s2.mean(axis=(2, 3), keepdims=True)
    ln_ref = (s2 - mean) / np.sqrt(((s2 - mean) ** 2).mean(axis=(2, 3), keepdims=True) + 1e-5) * scale + bias
    with open(switches, "w") as f:
        f.write("LayerNormFusionPass:off\n")
    for name, extra, want in (("ln-fused", [], (1, 0)), ("ln-off", [f"--fusion_switch_file={switches}"], (0, 2))):
        base = os.path.join(work, name)
        p = run(atc, f"--model={lnm}", f"--output={base}", "--soc_version=Ascend310", "--framework=5",
                "--precision_mode=must_keep_origin_dtype", *extra)
        check(f"LayerNormFusionPass: {name} build compiles", p.returncode == 0, p.stderr)
        p = run(atc, "--mode=1", f"--om={base}.om", f"--json={base}.json")
        kinds = [t["kind"] for t in json.load(open(base + ".json"))["tasks"]] if p.returncode == 0 else []
        got_kinds = (kinds.count("LAYERNORM"), kinds.count("REDUCE"))
        check(f"LayerNormFusionPass: {name} build has (LAYERNORM, REDUCE) tasks {want}", got_kinds == want, kinds)
        p = run(omrun, "--model", base + ".om", "--input", os.path.join(work, "x.bin"), "--output", base + "_out")
        got = np.fromfile(os.path.join(base + "_out", "output_0.bin"), "<f4") if p.returncode == 0 else np.zeros(0)
        check(f"LayerNormFusionPass: {name} build computes the norm", got.size == ln_ref.size and
              np.abs(got - ln_ref.ravel()).max() <= 1e-5 * np.abs(ln_ref).max(), p.stderr)
    # A fire module (SqueezeNet): its two expand convs write straight into their Concat's buffer (memplan: no
    # COPY_SLICE task), and the next conv reads the concatenation, against numpy in both precisions. 9x9
    # pixels, 32 + 16 channels concatenated (whole channel blocks), then a 3x3 conv over the 48.
    xf = rng.standard_normal((1, 24, 9, 9)).astype(np.float32)
    xf.tofile(os.path.join(work, "xf.bin"))
    wsq = (rng.standard_normal((16, 24, 1, 1)) * 0.3).astype(np.float32)
    we1 = (rng.standard_normal((32, 16, 1, 1)) * 0.3).astype(np.float32)
    we3 = (rng.standard_normal((16, 16, 3, 3)) * 0.2).astype(np.float32)
    wout = (rng.standard_normal((8, 48, 3, 3)) * 0.1).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "wsq"], ["s"], name="squeeze"), helper.make_node("Relu", ["s"], ["sr"]),
         helper.make_node("Conv", ["sr", "we1"], ["e1"], name="expand1x1"),
         helper.make_node("Conv", ["sr", "we3"], ["e3"], name="expand3x3", pads=[1, 1, 1, 1]),
         helper.make_node("Concat", ["e1", "e3"], ["cat"], name="cat", axis=1),
         helper.make_node("Conv", ["cat", "wout"], ["y"], name="out", pads=[1, 1, 1, 1])],
        "fire", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 24, 9, 9])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, n) for w, n in ((wsq, "wsq"), (we1, "we1"), (we3, "we3"), (wout, "wout"))])
    fire = os.path.join(work, "fire.onnx")
    with open(fire, "wb") as f:
        f.write(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    sr = np.maximum(conv2d(xf, wsq, 0), 0)
    fire_ref = conv2d(np.concatenate([conv2d(sr, we1, 0), conv2d(sr, we3, 1)], axis=1), wout, 1)
    for prec, tol in (("must_keep_origin_dtype", 1e-5), ("force_fp16", 2e-2)):
        base = os.path.join(work, f"fire_{prec}")
        kinds = [t["kind"] for t in compile_om(atc, fire, base, prec, "fire module")["tasks"]]
        check(f"fire module, {prec}: the Concat is no task", kinds.count("CONV2D") == 4 and "COPY_SLICE" not in kinds,
              kinds)
        check_paths(omrun, base, os.path.join(work, "xf.bin"), fire_ref, tol, f"fire module, {prec}")
    # RGB stems read the model's NCHW input in place (no TRANSDATA before them), against numpy on every kernel
    # path in both precisions: a 7x7/2 stem (the x86 packed rows), a dilated 3x3 one (the portable tile on
    # every path) and a 1x1 one over a 1x1 image (one-pixel tiles), 3 and 4 input channels, 2 images.
    for sname, cin, hw, k, stride, dil, pad in (("stem7", 3, 19, 7, 2, 1, 3), ("stem_dilated", 4, 9, 3, 1, 2, 2),
                                               ("stem_pixel", 3, 1, 1, 1, 1, 0)):
        xs = rng.standard_normal((2, cin, hw, hw)).astype(np.float32)
        xs.tofile(os.path.join(work, sname + ".bin"))
        ws = (rng.standard_normal((20, cin, k, k)) * 0.3).astype(np.float32)
        g = helper.make_graph(
            [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[k, k], strides=[stride, stride],
                              dilations=[dil, dil], pads=[pad] * 4), helper.make_node("Relu", ["c"], ["y"])],
            sname, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, cin, hw, hw])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [numpy_helper.from_array(ws, "w")])
        path = os.path.join(work, sname + ".onnx")
        with open(path, "wb") as f:
            f.write(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
        wd = np.zeros((20, cin, (k - 1) * dil + 1, (k - 1) * dil + 1))
        wd[:, :, ::dil, ::dil] = ws
        full = conv2d(xs.astype(np.float64), wd, pad)
        ref = np.maximum(full[:, :, ::stride, ::stride], 0)
        for prec, tol in (("must_keep_origin_dtype", 1e-5), ("force_fp16", 2e-2)):
            base = os.path.join(work, f"{sname}_{prec}")
            om = compile_om(atc, path, base, prec, sname)
            first = om["tasks"][0] if om["tasks"] else {}
            check(f"{sname}, {prec}: the conv reads the ND input (no TRANSDATA)", first.get("kind") == "CONV2D" and
                  om["tensors"][first["tensors"]["x"]]["layout"] == "ND", [t["kind"] for t in om["tasks"]])
            check_paths(omrun, base, os.path.join(work, sname + ".bin"), ref, tol, f"{sname}, {prec}")
    # Two residual blocks (ResNet's bottleneck, shortened): each block's last conv writes its output over its
    # residual (memplan: y at the residual's offset, the second over the first's output), against numpy on
    # every kernel path in both precisions. 32 channels, 10x10 pixels; the 3x3 conv takes the Winograd path in
    # force_fp16 (must_keep_origin_dtype's default is the direct convolution).
    xr = rng.standard_normal((1, 32, 10, 10)).astype(np.float32)
    xr.tofile(os.path.join(work, "xr.bin"))
    rw = {n: (rng.standard_normal(shape) * sc).astype(np.float32) for n, shape, sc in (
        ("r0", (32, 32, 3, 3), 0.08), ("r1", (32, 32, 1, 1), 0.2), ("r2", (32, 32, 3, 3), 0.08),
        ("r3", (32, 32, 1, 1), 0.2), ("r4", (32, 32, 1, 1), 0.2), ("r5", (16, 32, 1, 1), 0.2))}
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "r0"], ["c0"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c0"], ["t"]),
         helper.make_node("Conv", ["t", "r1"], ["c1"]), helper.make_node("Relu", ["c1"], ["a"]),
         helper.make_node("Conv", ["a", "r2"], ["c2"], pads=[1, 1, 1, 1]), helper.make_node("Add", ["c2", "t"], ["s2"]),
         helper.make_node("Relu", ["s2"], ["u"]),
         helper.make_node("Conv", ["u", "r3"], ["c3"]), helper.make_node("Relu", ["c3"], ["b"]),
         helper.make_node("Conv", ["b", "r4"], ["c4"]), helper.make_node("Add", ["c4", "u"], ["v"]),
         helper.make_node("Conv", ["v", "r5"], ["y"])],
        "residual", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 10, 10])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, n) for n, w in rw.items()])
    resid = os.path.join(work, "residual.onnx")
    with open(resid, "wb") as f:
        f.write(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    relu = lambda z: np.maximum(z, 0)  # noqa: E731
    t = relu(conv2d(xr, rw["r0"], 1))
    u = relu(conv2d(relu(conv2d(t, rw["r1"], 0)), rw["r2"], 1) + t)
    resid_ref = conv2d(conv2d(relu(conv2d(u, rw["r3"], 0)), rw["r4"], 0) + u, rw["r5"], 0)
    for prec, tol in (("must_keep_origin_dtype", 1e-5), ("force_fp16", 2e-2)):
        base = os.path.join(work, f"residual_{prec}")
        om = compile_om(atc, resid, base, prec, "residual blocks")
        over = [t["name"] for t in om["tasks"] if t["kind"] == "CONV2D" and t["tensors"].get("residual") is not None
                and om["tensors"][t["tensors"]["residual"]]["offset"] == om["tensors"][t["tensors"]["y"]]["offset"]]
        check(f"residual blocks, {prec}: both convs write over their residual", len(over) == 2, over)
        check_paths(omrun, base, os.path.join(work, "xr.bin"), resid_ref, tol, f"residual blocks, {prec}")
    # --op_select_implmode's default follows the precision: Winograd (CONV2D algorithm 2) for the 3x3 convs under
    # force_fp16, the direct convolution (0) under must_keep_origin_dtype, which asks for the original precision;
    # the flag overrides either.
    for prec, flags, want, tol in (("must_keep_origin_dtype", (), 0, 1e-5),
                                   ("must_keep_origin_dtype", ("--op_select_implmode=high_performance",), 2, 1e-5),
                                   ("force_fp16", (), 2, 2e-2),
                                   ("force_fp16", ("--op_select_implmode=high_precision",), 0, 2e-2)):
        label = f"residual blocks, {prec} {' '.join(flags) or '(default implmode)'}"
        base = os.path.join(work, f"residual_{prec}_{len(flags)}")
        om = compile_om(atc, resid, base, prec, label, *flags)
        algs = [t["params"]["algorithm"] for t in om["tasks"] if t["kind"] == "CONV2D" and t["params"]["kh"] == 3]
        check(f"{label}: 3x3 convs run algorithm {want}", len(algs) == 2 and set(algs) == {want}, algs)
        check_paths(omrun, base, os.path.join(work, "xr.bin"), resid_ref, tol, label)
    # ConvInputScaleFusionPass: a squeeze-excitation block (pool, 1x1 Conv, Sigmoid, Mul, 1x1 Conv) runs the Mul
    # inside the last Conv (its x_scale) by default and as a vector program with the rule off; both compute the
    # block, on every kernel path. 20 channels (a last channel block of 4 real lanes), 7x7
    # pixels (tiles of 16 leave a 1-pixel tile: the matrix-vector path) and 2 images (one scale each).
    xs = rng.standard_normal((2, 20, 7, 7)).astype(np.float32)
    xs.tofile(os.path.join(work, "xs.bin"))
    wse = (rng.standard_normal((20, 20, 1, 1)) * 0.3).astype(np.float32)
    wpj = (rng.standard_normal((12, 20, 1, 1)) * 0.3).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("GlobalAveragePool", ["x"], ["sq"], name="squeeze"),
         helper.make_node("Conv", ["sq", "wse"], ["fc"], name="fc"),
         helper.make_node("Sigmoid", ["fc"], ["gate"], name="gate"),
         helper.make_node("Mul", ["gate", "x"], ["ex"], name="excite"),
         helper.make_node("Conv", ["ex", "wpj"], ["y"], name="project")],
        "se", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 20, 7, 7])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(wse, "wse"), numpy_helper.from_array(wpj, "wpj")])
    se = os.path.join(work, "se.onnx")
    with open(se, "wb") as f:
        f.write(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    xd = xs.astype(np.float64)
    gate = 1 / (1 + np.exp(-np.einsum("nc,oc->no", xd.mean(axis=(2, 3)), wse[:, :, 0, 0].astype(np.float64))))
    se_ref = np.einsum("nchw,oc->nohw", xd * gate[:, :, None, None], wpj[:, :, 0, 0].astype(np.float64))
    off = os.path.join(work, "se_off.cfg")
    with open(off, "w") as f:
        f.write("ConvInputScaleFusionPass:off\n")
    for name, extra, scaled, vprogs in (("fused", [], 1, 0), ("unfused", [f"--fusion_switch_file={off}"], 0, 1)):
        for prec, tol in (("must_keep_origin_dtype", 1e-5), ("force_fp16", 2e-2)):
            base = os.path.join(work, f"se_{name}_{prec}")
            p = run(atc, f"--model={se}", f"--output={base}", "--soc_version=Ascend310", "--framework=5",
                    f"--precision_mode={prec}", *extra)
            check(f"SE block {name}, {prec}: compiles", p.returncode == 0, p.stderr)
            p = run(atc, "--mode=1", f"--om={base}.om", f"--json={base}.json")
            tasks = json.load(open(base + ".json"))["tasks"] if p.returncode == 0 else []
            proj = [t for t in tasks if t["name"] == "project"]
            got_n = (sum(t["kind"] == "VPROG" for t in tasks), proj[0]["params"]["x_scale"] if proj else -1,
                     "x_scale" in proj[0]["tensors"] if proj else None)
            check(f"SE block {name}, {prec}: {vprogs} vector program(s), x_scale {scaled}", got_n ==
                  (vprogs, scaled, bool(scaled)), got_n)
            for kernels, env in KERNEL_PATHS:
                p = subprocess.run([omrun, "--model", base + ".om", "--input", os.path.join(work, "xs.bin"),
                                    "--output", base + "_out"], capture_output=True, text=True, env=env)
                got = np.fromfile(os.path.join(base + "_out", "output_0.bin"), "<f4") if p.returncode == 0 \
                    else np.zeros(0)
                err = np.abs(got - se_ref.ravel()).max() / np.abs(se_ref).max() if got.size == se_ref.size else -1
                check(f"SE block {name}, {prec}, {kernels} kernels: matches the reference",
                      0 <= err <= tol, f"{err} {p.stderr}")
    # The same block with SiLU(project) * u after it (u a second input): in f32 the project Conv carries
    # both an x_scale (slot 5) and an epilogue program whose extra input u follows it (slot 6).
    us = rng.standard_normal((2, 12, 7, 7)).astype(np.float32)
    us.tofile(os.path.join(work, "us.bin"))
    g = helper.make_graph(
        [helper.make_node("GlobalAveragePool", ["x"], ["sq"], name="squeeze"),
         helper.make_node("Conv", ["sq", "wse"], ["fc"], name="fc"),
         helper.make_node("Sigmoid", ["fc"], ["gate"], name="gate"),
         helper.make_node("Mul", ["gate", "x"], ["ex"], name="excite"),
         helper.make_node("Conv", ["ex", "wpj"], ["c"], name="project"),
         helper.make_node("Sigmoid", ["c"], ["cs"], name="sig"), helper.make_node("Mul", ["c", "cs"], ["sl"], name="silu"),
         helper.make_node("Mul", ["sl", "u"], ["y"], name="times_u")],
        "se_epi", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 20, 7, 7]),
                   helper.make_tensor_value_info("u", TensorProto.FLOAT, [2, 12, 7, 7])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(wse, "wse"), numpy_helper.from_array(wpj, "wpj")])
    se_epi = os.path.join(work, "se_epi.onnx")
    with open(se_epi, "wb") as f:
        f.write(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    se_epi_ref = se_ref / (1 + np.exp(-se_ref)) * us
    base = os.path.join(work, "se_epi")
    p = run(atc, f"--model={se_epi}", f"--output={base}", "--soc_version=Ascend310", "--framework=5",
            "--precision_mode=must_keep_origin_dtype")
    check("SE block + epilogue with an input: compiles", p.returncode == 0, p.stderr)
    p = run(atc, "--mode=1", f"--om={base}.om", f"--json={base}.json")
    tasks = json.load(open(base + ".json"))["tasks"] if p.returncode == 0 else []
    proj = [t for t in tasks if t["name"] == "project"]
    slots = sorted(proj[0]["tensors"]) if proj else []
    check("SE block + epilogue with an input: the project Conv has x_scale and epi_in1",
          "x_scale" in slots and "epi_in1" in slots and proj[0]["params"].get("epilogue") is not None, slots)
    for kernels, env in KERNEL_PATHS:
        p = subprocess.run([omrun, "--model", base + ".om", "--input",
                            os.path.join(work, "xs.bin") + "," + os.path.join(work, "us.bin"), "--output", base + "_out"],
                           capture_output=True, text=True, env=env)
        got = np.fromfile(os.path.join(base + "_out", "output_0.bin"), "<f4") if p.returncode == 0 else np.zeros(0)
        err = np.abs(got - se_epi_ref.ravel()).max() / np.abs(se_epi_ref).max() if got.size == se_epi_ref.size else -1
        check(f"SE block + epilogue with an input, {kernels} kernels: matches the reference",
              0 <= err <= 1e-5, f"{err} {p.stderr}")
    # Every rule: Conv -> BatchNormalization -> Relu -> Add(., Conv) is two CONV tasks by default, besides the two
    # TransData at the edges (BN folded and Relu inside conv0, the Add inside conv1 as its residual); with ALL:off
    # it is op by op: two convs and three programs, the BN's Mul and Add (one ONNX op) in one of them. Later lines
    # win, and each rule turns off alone.
    wb = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
    w1 = rng.standard_normal((8, 3, 1, 1)).astype(np.float32)
    bnp = [rng.uniform(0.5, 1.5, 8), rng.standard_normal(8), rng.standard_normal(8) * 0.1, rng.uniform(0.5, 2, 8)]
    bnp = [a.astype(np.float32) for a in bnp]
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "wb"], ["c0"], name="conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("BatchNormalization", ["c0", "bs", "bb", "bm", "bv"], ["n0"], name="bn0", epsilon=1e-5),
         helper.make_node("Relu", ["n0"], ["r0"], name="relu0"),
         helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", kernel_shape=[1, 1]),
         helper.make_node("Add", ["r0", "c1"], ["y"], name="add0")],
        "block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(wb, "wb"), numpy_helper.from_array(w1, "w1")] +
        [numpy_helper.from_array(a, n) for a, n in zip(bnp, ("bs", "bb", "bm", "bv"))])
    block = os.path.join(work, "block.onnx")
    with open(block, "wb") as f:
        f.write(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    xd = x.astype(np.float64)
    c0 = conv2d(xd, wb.astype(np.float64), 1)
    n0 = ((c0 - bnp[2][:, None, None]) / np.sqrt(bnp[3][:, None, None] + 1e-5) * bnp[0][:, None, None]
          + bnp[1][:, None, None])
    block_ref = np.maximum(n0, 0) + conv2d(xd, w1.astype(np.float64), 0)
    # (tasks, vector programs); both convs read the 3-channel input x in place (no TRANSDATA for it)
    for name, text, want in (("default", None, (3, 0)), ("all-off", "ALL:off\n", (6, 3)),
                             ("all-off-then-on", "ALL:off\nALL:on\n", (3, 0)),
                             ("vector-off", "VectorProgramFusionPass:off\n", (3, 0)),
                             ("epilogue-off", "ConvEpilogueFusionPass:off\n", (3, 0)),
                             ("addrelu-off", "ConvAddReluFusionPass:off\n", (3, 0)),
                             ("addrelu-epilogue-off", "ConvAddReluFusionPass:off\nConvEpilogueFusionPass:off\n", (4, 1)),
                             ("bn-off", "ConvBatchnormFusionPass:off\nConvEpilogueFusionPass:off\n", (4, 1)),
                             ("bn-vector-epilogue-off", "ALL:off\nConvAddReluFusionPass:on\n", (5, 2))):
        base = os.path.join(work, "block-" + name)
        extra = []
        if text:
            with open(base + ".cfg", "w") as f:
                f.write(text)
            extra = [f"--fusion_switch_file={base}.cfg"]
        p = run(atc, f"--model={block}", f"--output={base}", "--soc_version=Ascend310", "--framework=5",
                "--precision_mode=must_keep_origin_dtype", *extra)
        check(f"--fusion_switch_file {name}: compiles", p.returncode == 0, p.stderr)
        p = run(atc, "--mode=1", f"--om={base}.om", f"--json={base}.json")
        tasks = json.load(open(base + ".json"))["tasks"] if p.returncode == 0 else []
        got_n = (len(tasks), sum(t["kind"] == "VPROG" for t in tasks))
        check(f"--fusion_switch_file {name}: {want[0]} tasks, {want[1]} vector programs", got_n == want, got_n)
        p = run(omrun, "--model", base + ".om", "--input", os.path.join(work, "x.bin"), "--output", base + "_out")
        got = np.fromfile(os.path.join(base + "_out", "output_0.bin"), "<f4") if p.returncode == 0 else np.zeros(0)
        check(f"--fusion_switch_file {name}: computes the block", got.size == block_ref.size and
              np.abs(got - block_ref.ravel()).max() <= 1e-4 * np.abs(block_ref).max(), p.stderr)
    for text, needle in (("VectorProgramFusionPass:maybe\n", "fusion.bad:1"), ("\nNoSuchPass:off\n", "fusion.bad:2"),
                         ("VectorProgramFusionPass\n", "fusion.bad:1")):
        bad = os.path.join(work, "fusion.bad")
        with open(bad, "w") as f:
            f.write(text)
        p = run(atc, f"--model={silu}", f"--output={work}/badfuse", "--soc_version=Ascend310",
                f"--fusion_switch_file={bad}")
        check(f"--fusion_switch_file {text.strip()!r}: exit 2 naming file and line",
              p.returncode == 2 and needle in p.stderr and not os.path.exists(f"{work}/badfuse.om"), p.stderr)
    p = run(atc, f"--model={silu}", f"--output={work}/badfuse", "--soc_version=Ascend310",
            f"--fusion_switch_file={work}/nosuch.cfg")
    check("--fusion_switch_file missing: exit 2 naming it", p.returncode == 2 and "nosuch.cfg" in p.stderr, p.stderr)

    check_no_reuse(atc, omrun, work, rng)
    check_hint_flags(atc, omrun, work, rng)
    check_singleop(atc, omrun, work, rng)
    return summary()


def workspace_overlaps(doc, names=None):
    """Pairs of workspace tensors (one of them in names, if given) whose byte ranges overlap."""
    ws = [t for t in doc["tensors"] if t["region"] == "WORKSPACE"]
    return [(a["name"], b["name"]) for i, a in enumerate(ws) for b in ws[i + 1:]
            if (names is None or a["name"] in names or b["name"] in names)
            and a["offset"] < b["offset"] + b["bytes"] and b["offset"] < a["offset"] + a["bytes"]]


def check_no_reuse(atc, omrun, work, rng):
    """--disable_reuse_memory=1: no two workspace tensors share bytes (the residual Conv writes a buffer of its
    own); OP_NO_REUSE_MEM: only the named node's outputs get memory of their own; the outputs are the same."""
    w1, w2, w3 = (rng.standard_normal((16, 16, 3, 3)).astype(np.float32) * 0.2 for _ in range(3))
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "w1"], ["a"], name="c1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["a"], ["b"], name="r1"),
         helper.make_node("Conv", ["b", "w2"], ["c"], name="c2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Add", ["c", "a"], ["d"], name="res"),
         helper.make_node("Conv", ["d", "w3"], ["e"], name="c3", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["e"], ["y"], name="r3")],
        "reuse", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, n) for w, n in ((w1, "w1"), (w2, "w2"), (w3, "w3"))])
    model = os.path.join(work, "reuse.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), model)
    x = os.path.join(work, "reuse_x.bin")
    rng.standard_normal((1, 16, 16, 16)).astype(np.float32).tofile(x)
    outs = {}
    for label, flags, env in (("default", [], None), ("--disable_reuse_memory=1", ["--disable_reuse_memory=1"], None),
                              ("OP_NO_REUSE_MEM", ["--log=info"], dict(os.environ, OP_NO_REUSE_MEM="c1, nosuch"))):
        base = os.path.join(work, "reuse_" + str(len(outs)))
        p = subprocess.run([atc, f"--model={model}", f"--output={base}", "--soc_version=Ascend310", "--framework=5",
                            "--precision_mode=must_keep_origin_dtype", *flags], capture_output=True, text=True, env=env)
        check(f"{label}: compiles", p.returncode == 0, p.stderr)
        doc = {"tensors": []}
        if p.returncode == 0 and run(atc, "--mode=1", f"--om={base}.om", f"--json={base}.json").returncode == 0:
            doc = json.load(open(base + ".json"))
        q = subprocess.run([omrun, "--model", base + ".om", "--input", x, "--output", base + "_out"],
                           capture_output=True, text=True)
        out = os.path.join(base + "_out", "output_0.bin")
        outs[label] = open(out, "rb").read() if q.returncode == 0 and os.path.exists(out) else None
        if label == "default":
            check("default: workspace tensors share memory (the residual Conv writes over its residual)",
                  len(workspace_overlaps(doc)) > 0, doc["tensors"])
        elif label == "OP_NO_REUSE_MEM":
            check("OP_NO_REUSE_MEM=c1: c1's output shares no bytes, other tensors still do",
                  not workspace_overlaps(doc, {"a"}) and len(workspace_overlaps(doc)) > 0, doc["tensors"])
            check("OP_NO_REUSE_MEM: an entry naming nothing is reported at --log=info",
                  "'nosuch' names no node" in p.stderr and "'c1'" not in p.stderr, p.stderr)
        else:
            check("--disable_reuse_memory=1: no two workspace tensors share bytes",
                  len(doc["tensors"]) > 0 and not workspace_overlaps(doc), doc["tensors"])
    check("--disable_reuse_memory / OP_NO_REUSE_MEM: the same output bytes as the default",
          outs["default"] is not None and outs["default"] == outs["--disable_reuse_memory=1"] == outs["OP_NO_REUSE_MEM"])
    p = run(atc, f"--model={model}", f"--output={work}/reuse_bad", "--soc_version=Ascend310", "--framework=5",
            "--disable_reuse_memory=2")
    check("--disable_reuse_memory=2: exit 2 naming the value", p.returncode == 2 and "=2: expected 0 or 1" in p.stderr,
          p.stderr)


def check_hint_flags(atc, omrun, work, rng):
    """--enable_small_channel and --deterministic (0 or 1) are accepted and compile the same tasks, vector
    programs and tensors as without them; what --deterministic asks for holds anyway: the om gives the same
    output bytes on 1 and 2 threads and run after run (a 3-channel stem, a Gemm, Softmax, a reduction)."""
    w = rng.standard_normal((32, 3, 3, 3)).astype(np.float32) * 0.3
    wg = rng.standard_normal((32, 100)).astype(np.float32) * 0.1
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], name="stem", kernel_shape=[3, 3], strides=[2, 2],
                          pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["r"], name="relu"),
         helper.make_node("GlobalAveragePool", ["r"], ["p"], name="gap"),
         helper.make_node("Flatten", ["p"], ["f"], name="flat"),
         helper.make_node("Gemm", ["f", "wg"], ["l"], name="fc"),
         helper.make_node("Softmax", ["l"], ["y"], name="softmax", axis=1),
         helper.make_node("ReduceSum", ["r"], ["s"], name="sum", keepdims=0)],
        "hints", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 96, 96])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(wg, "wg")])
    model = os.path.join(work, "hints.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), model)
    x = os.path.join(work, "hints_x.bin")
    rng.standard_normal((1, 3, 96, 96)).astype(np.float32).tofile(x)
    compiled = {}
    for flags in ((), ("--enable_small_channel=1", "--deterministic=1"), ("--enable_small_channel=0", "--deterministic=0")):
        base = os.path.join(work, "hints_" + str(len(compiled)))
        p = run(atc, f"--model={model}", f"--output={base}", "--soc_version=Ascend310", "--framework=5", *flags)
        check(f"{' '.join(flags) or 'no hint flags'}: compiles", p.returncode == 0, p.stderr)
        doc = {}
        if p.returncode == 0 and run(atc, "--mode=1", f"--om={base}.om", f"--json={base}.json").returncode == 0:
            doc = json.load(open(base + ".json"))
        compiled[flags] = (base, {k: doc.get(k) for k in ("tasks", "vprogs", "tensors", "weights")})
    same = [c for _, c in compiled.values()]
    check("--enable_small_channel / --deterministic 0 or 1: the same tasks, programs, tensors and weights",
          same[0]["tasks"] and same[0] == same[1] == same[2])
    base = compiled[("--enable_small_channel=1", "--deterministic=1")][0]
    outs = []
    for threads in ("1", "2", "2"):
        d = f"{base}_out{len(outs)}"
        q = subprocess.run([omrun, "--model", base + ".om", "--input", x, "--output", d, "--threads", threads],
                           capture_output=True, text=True)
        outs.append([open(os.path.join(d, f"output_{i}.bin"), "rb").read() if q.returncode == 0 else None
                     for i in range(2)])
    check("--deterministic=1: the same output bytes on 1 and 2 threads, and run after run",
          outs[0][0] is not None and outs[0] == outs[1] == outs[2])
    for flag in ("enable_small_channel", "deterministic"):
        p = run(atc, f"--model={model}", f"--output={work}/hints_bad", "--soc_version=Ascend310", "--framework=5",
                f"--{flag}=true")
        check(f"--{flag}=true: exit 2 naming the value", p.returncode == 2 and f"--{flag}=true: expected 0 or 1" in p.stderr,
              p.stderr)


def tdesc(shape, dtype="float", fmt="ND"):
    return {"format": fmt, "shape": list(shape), "type": dtype}


def check_singleop(atc, omrun, work, rng):
    """atc --singleop: one om per description (named by "name" or ATC's default rule), each run by omrun
    against numpy; a bad description is one line naming the file, the index, the op and the field."""
    ops = [
        {"op": "Add", "name": "add", "input_desc": [tdesc([3, 3], "int32")] * 2,
         "output_desc": [tdesc([3, 3], "int32")]},
        {"op": "MatMul", "input_desc": [tdesc([3, 4], "float16"), tdesc([5, 4], "float16")],
         "output_desc": [tdesc([3, 5], "float16")],
         "attr": [{"name": "transpose_x2", "type": "bool", "value": True}]},
        {"op": "SoftmaxV2", "name": "softmax", "input_desc": [tdesc([2, 7])], "output_desc": [tdesc([2, 7])],
         "attr": [{"name": "axes", "type": "list_int", "value": [-1]}]},
        {"op": "Cast", "name": "cast", "input_desc": [tdesc([4], "float")], "output_desc": [tdesc([4], "int32")],
         "attr": [{"name": "dst_type", "type": "int", "value": 3}]},
        {"op": "Conv2D", "name": "conv", "input_desc": [tdesc([1, 3, 8, 8], "float16", "NCHW"),
                                                         tdesc([4, 3, 3, 3], "float16", "NCHW")],
         "output_desc": [tdesc([1, 4, 4, 4], "float16", "NCHW")],
         "attr": [{"name": "strides", "type": "list_int", "value": [1, 1, 2, 2]},
                  {"name": "pads", "type": "list_int", "value": [1, 0, 1, 0]}]},
        {"op": "AvgPool", "name": "avgpool", "input_desc": [tdesc([1, 2, 5, 5], "float", "NCHW")],
         "output_desc": [tdesc([1, 2, 3, 3], "float", "NCHW")],
         "attr": [{"name": "ksize", "type": "list_int", "value": [1, 1, 3, 3]},
                  {"name": "strides", "type": "list_int", "value": [1, 1, 2, 2]},
                  {"name": "padding", "type": "string", "value": "SAME"}]},
    ]
    sdir, path = os.path.join(work, "singleop"), os.path.join(work, "ops.json")
    with open(path, "w") as f:
        json.dump(ops, f, indent=1)
    p = run(atc, f"--singleop={path}", f"--output={sdir}", "--soc_version=Ascend310")
    names = ["add", "1_MatMul_1_2_3_4_1_2_5_4_1_2_3_5", "softmax", "cast", "conv", "avgpool"]
    check("--singleop: compiles one om per description (ATC's default name without \"name\")",
          p.returncode == 0 and sorted(os.listdir(sdir)) == sorted(n + ".om" for n in names), p.stdout + p.stderr)
    a, b = rng.integers(-100, 100, (2, 3, 3)).astype(np.int32)
    x1, x2 = rng.standard_normal((3, 4)).astype(np.float16), rng.standard_normal((5, 4)).astype(np.float16)
    sm = rng.standard_normal((2, 7)).astype(np.float32)
    cx = np.array([1.7, -2.5, 300.2, -0.4], np.float32)
    e = np.exp(sm - sm.max(1, keepdims=True))
    cvx, cvw = rng.standard_normal((1, 3, 8, 8)).astype(np.float16), rng.standard_normal((4, 3, 3, 3)).astype(np.float16)
    xp = np.pad(cvx.astype(np.float64), ((0, 0), (0, 0), (1, 0), (1, 0)))  # pads: top 1, bottom 0, left 1, right 0
    conv = np.array([[[[(xp[0, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3] * cvw[o]).sum() for j in range(4)]
                       for i in range(4)] for o in range(4)]])
    ap = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)  # SAME, 3x3 / 2: windows rows 0-1, 1-3, 3-4
    win = [(0, 2), (1, 4), (3, 5)]
    avg = np.array([[[[ap[0, c, a:b, p:q].mean() for p, q in win] for a, b in win] for c in range(2)]])
    cases = [("add", (a, b), a + b, np.int32, 0),
             (names[1], (x1, x2), x1.astype(np.float32) @ x2.astype(np.float32).T, np.float16, 2e-3),
             ("softmax", (sm,), e / e.sum(1, keepdims=True), np.float32, 2e-3),
             ("cast", (cx,), cx.astype(np.int32), np.int32, 0),
             ("conv", (cvx, cvw), conv, np.float16, 2e-3),
             ("avgpool", (ap,), avg, np.float32, 2e-3)]
    for name, ins, ref, dt, tol in cases:
        files = []
        for k, t in enumerate(ins):
            files.append(os.path.join(work, f"so_{name}_{k}.bin"))
            t.tofile(files[-1])
        out = os.path.join(work, f"so_{name}_out")
        q = run(omrun, "--model", os.path.join(sdir, name + ".om"), "--input", ",".join(files), "--output", out)
        got = np.fromfile(os.path.join(out, "output_0.bin"), dt) if q.returncode == 0 else np.zeros(0)
        ok = got.size == ref.size and np.abs(got.astype(np.float64) - ref.ravel()).max() <= tol * max(
            1, np.abs(ref).max())
        check(f"--singleop: omrun runs {name}.om: {'exact' if tol == 0 else f'within {tol}'}", ok, q.stderr)
    p = run(atc, "--mode=1", f"--om={sdir}/add.om", f"--json={work}/add.json")
    rec = json.load(open(f"{work}/add.json"))["model"].get("singleop", "") if p.returncode == 0 else ""
    check("--singleop: the om records the op and its descriptions (--mode=1 shows them)",
          rec.startswith("op Add\ninput 3 2 2 3 3\n"), rec or p.stderr)

    mm = ops[1]
    bad = [
        ("malformed JSON", "[{\"op\": \"Add\",}]", ["bad.json:1", "malformed JSON"]),
        ("not an array", "{}", ["bad.json:1", "expected an array"]),
        ("unknown op", [ops[0], dict(mm, op="Frobnicate")], ["bad.json: op 1 (Frobnicate)", "op:", "'Frobnicate'"]),
        ("unknown attr", [dict(mm, attr=[{"name": "transpose_y", "type": "bool", "value": True}])],
         ["op 0 (MatMul)", "attr 'transpose_y'", "transpose_x1"]),
        ("attr of the wrong type", [dict(mm, attr=[{"name": "transpose_x2", "type": "int", "value": 1}])],
         ["op 0 (MatMul)", "attr 'transpose_x2'.type", "bool"]),
        ("attr value of the wrong type", [dict(mm, attr=[{"name": "transpose_x2", "type": "bool", "value": 1}])],
         ["op 0 (MatMul)", "attr 'transpose_x2'.value"]),
        ("a shape that does not compute", [ops[0], dict(mm, attr=[])], ["op 1 (MatMul)", "MatMul"]),
        ("an output shape that is not the op's",
         [ops[0], ops[2], dict(mm, output_desc=[tdesc([3, 6], "float16")])],
         ["op 2 (MatMul)", "output_desc[0].shape", "[3,6]", "[3,5]"]),
        ("a dim that is not a number", [dict(ops[0], input_desc=[tdesc([3, "3"], "int32"), tdesc([3, 3], "int32")])],
         ["op 0 (Add)", "input_desc[0].shape[1]"]),
        ("a dynamic dim", [dict(ops[0], input_desc=[tdesc([-1, 3], "int32"), tdesc([3, 3], "int32")])],
         ["op 0 (Add)", "input_desc[0].shape[0]", "dynamic"]),
        ("a chip format", [dict(ops[0], input_desc=[tdesc([3, 3], "int32", "NC1HWC0")] * 2)],
         ["op 0 (Add)", "input_desc[0].format", "NC1HWC0"]),
        ("an unknown dtype", [dict(ops[0], output_desc=[tdesc([3, 3], "complex64")])],
         ["op 0 (Add)", "output_desc[0].type", "complex64"]),
        ("a missing required attr", [dict(ops[3], attr=[])], ["op 0 (Cast)", "attr 'dst_type'", "missing"]),
        ("too many inputs", [dict(ops[0], input_desc=[tdesc([3, 3], "int32")] * 3)], ["op 0 (Add)", "input_desc"]),
        ("two descriptions of one name", [ops[0], ops[0]], ["op 1 (Add)", "name", "'add'"]),
    ]
    for what, content, needles in bad:
        bdir, bpath = os.path.join(work, "singleop_bad"), os.path.join(work, "bad.json")
        shutil.rmtree(bdir, ignore_errors=True)
        with open(bpath, "w") as f:
            f.write(content if isinstance(content, str) else json.dumps(content))
        p = run(atc, f"--singleop={bpath}", f"--output={bdir}", "--soc_version=Ascend310")
        line = p.stderr.strip()
        check(f"--singleop, {what}: exit 1, one line naming it, nothing written",
              p.returncode == 1 and "\n" not in line and all(n in line for n in needles) and
              not (os.path.isdir(bdir) and os.listdir(bdir)), line)
    p = run(atc, f"--singleop={path}", f"--output={sdir}", "--soc_version=Ascend310", f"--model={work}/cli.onnx")
    check("--singleop with --model: usage error naming --model", p.returncode == 2 and "--model" in p.stderr,
          p.stderr)
    p = run(atc, f"--singleop={path}", f"--output={sdir}")
    check("--singleop without --soc_version: usage error", p.returncode == 2 and "--soc_version" in p.stderr, p.stderr)


if __name__ == "__main__":
    sys.exit(main())
