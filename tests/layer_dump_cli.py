#!/usr/bin/python3
"""Layer dumps, overflow checks and omcompare on a small conv net
(Conv + BatchNormalization + Relu, a residual Conv + Add + Relu, MaxPool,
Concat, GlobalAveragePool, Flatten, Gemm, Softmax), in force_fp16 and
must_keep_origin_dtype:
- omrun --dump: dump.json lists every task with the ONNX nodes fused into it
  (the Conv, its BatchNormalization and Relu as one task), the .npy files
  are float32 in ONNX layout (NCHW) and named by ONNX tensor, the last one
  equals the model output omrun wrote, the fp16 dump agrees with the fp32
  one; --dump_nodes limits the files;
- omrun --check_overflow names the first task (and its ONNX node) whose
  fp16 output overflowed, exit 1; without it, a warning and exit 0;
- omcompare: every row of the fp32 build at cosine >= 0.99999 against the
  reference evaluator; its --golden table (the fp16 dump against the fp32
  dump) equals a direct numpy comparison of the two dumps; an overflowing
  node is the one marked first below the threshold (exit 2).

Usage: layer_dump_cli.py ATC OMRUN OMCOMPARE WORK_DIR
"""
import csv
import json
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from checks import check, run, summary

def const(name, a):
    return numpy_helper.from_array(np.asarray(a, dtype=np.float32), name)


def net(work, scale=1.0):
    rng = np.random.default_rng(7)
    w = lambda *s: (rng.standard_normal(s) * 0.2).astype(np.float32)
    inits = [const("w1", w(16, 3, 3, 3)), const("b1", w(16)),
             const("g", 1 + w(16)), const("be", w(16)), const("mu", w(16)), const("var", 1 + np.abs(w(16))),
             const("w2", w(16, 16, 3, 3)), const("w3", w(8, 16, 1, 1)),
             const("fc", w(24, 10)), const("fcb", w(10)), const("k", [scale])]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "g", "be", "mu", "var"], ["bn1"], name="bn1"),
        helper.make_node("Relu", ["bn1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "r1"], ["a2"], name="add2"),
        helper.make_node("Relu", ["a2"], ["r2"], name="relu2"),
        helper.make_node("Mul", ["r2", "k"], ["m2"], name="scale"),
        helper.make_node("MaxPool", ["m2"], ["p2"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p2", "w3"], ["c3"], name="conv3"),
        helper.make_node("Concat", ["p2", "c3"], ["cat"], name="concat", axis=1),
        helper.make_node("GlobalAveragePool", ["cat"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc", "fcb"], ["logits"], name="fc"),
        helper.make_node("Softmax", ["logits"], ["prob"], name="softmax", axis=1),
    ]
    g = helper.make_graph(nodes, "dumpnet", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                          [helper.make_tensor_value_info("prob", TensorProto.FLOAT, None)], inits)
    path = f"{work}/dumpnet_{scale:g}.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def compile_om(atc, onnx_path, out, mode):
    p = run(atc, f"--model={onnx_path}", "--framework=5", f"--output={out}", "--soc_version=Ascend310",
            f"--precision_mode={mode}")
    check(f"compiles ({mode})", p.returncode == 0, p.stderr)
    return out + ".om"


def main():
    atc, omrun, omcompare, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    model = net(work)
    x = np.random.default_rng(1).standard_normal((1, 3, 16, 16)).astype(np.float32)
    x.tofile(f"{work}/x.bin")
    dumps = {}
    for mode in ("force_fp16", "must_keep_origin_dtype"):
        om = compile_om(atc, model, f"{work}/net_{mode}", mode)
        d = f"{work}/dump_{mode}"
        p = run(omrun, "--model", om, "--input", f"{work}/x.bin", "--output", f"{work}/out_{mode}", "--dump", d)
        check(f"omrun --dump ({mode})", p.returncode == 0 and "dump:" in p.stdout, p.stderr)
        idx = json.load(open(f"{d}/dump.json"))
        tasks = idx["tasks"]
        run(atc, "--mode=1", f"--om={om}", f"--json={work}/j.json")
        j = json.load(open(f"{work}/j.json"))
        check(f"every task in dump.json ({mode})", len(tasks) == len(j["tasks"]) > 0)
        t1 = [t for t in tasks if "conv1" in t["onnx_nodes"]]
        check(f"Conv, BatchNormalization and Relu are one task's nodes ({mode})",
              len(t1) == 1 and t1[0]["onnx_nodes"] == ["conv1", "bn1", "relu1"] and
              t1[0]["outputs"][0]["onnx_tensor"] == "r1", t1)
        t2 = [t for t in tasks if "add2" in t["onnx_nodes"]]
        check(f"the residual Add is listed with its Conv ({mode})",
              len(t2) == 1 and {"conv2", "add2", "relu2"} <= set(t2[0]["onnx_nodes"]), t2)
        r1 = np.load(f"{d}/r1.npy")
        check(f"r1.npy is float32 NCHW [1,16,16,16] ({mode})", r1.dtype == np.float32 and r1.shape == (1, 16, 16, 16),
              (r1.dtype, r1.shape))
        out = np.fromfile(f"{work}/out_{mode}/output_0.bin", dtype=np.float32)
        prob = np.load(f"{d}/prob.npy")
        check(f"the dumped model output equals omrun's ({mode})", np.array_equal(prob.reshape(-1), out))
        for t in tasks:
            for o in t["outputs"]:
                if o["file"]:
                    a = np.load(f"{d}/{o['file']}")
                    if list(a.shape) != o["shape"]:
                        check(f"{o['file']} has dump.json's shape", False, (a.shape, o["shape"]))
        dumps[mode] = d
    a = np.load(f"{dumps['force_fp16']}/p2.npy").reshape(-1)
    b = np.load(f"{dumps['must_keep_origin_dtype']}/p2.npy").reshape(-1)
    cos = float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
    check("fp16 and fp32 dumps of p2 agree (cosine > 0.999)", cos > 0.999, cos)

    om16 = f"{work}/net_force_fp16.om"
    p = run(omrun, "--model", om16, "--input", f"{work}/x.bin", "--output", f"{work}/o", "--dump",
            f"{work}/dn", "--dump_nodes", "relu1,pool")
    files = sorted(f for f in os.listdir(f"{work}/dn") if f.endswith(".npy"))
    check("--dump_nodes dumps only the listed nodes' tasks", p.returncode == 0 and files == ["p2.npy", "r1.npy"],
          (files, p.stderr))
    p = run(omrun, "--model", om16, "--output", f"{work}/o", "--dump_nodes", "relu1")
    check("--dump_nodes without --dump is refused", p.returncode == 1 and "--dump" in p.stderr, p.stderr)

    # A model of batch gears 1 and 2: --dump with --dymBatch dumps the chosen gear's tasks.
    omg = f"{work}/net_gears"
    p = run(atc, f"--model={model}", "--framework=5", f"--output={omg}", "--soc_version=Ascend310",
            "--precision_mode=must_keep_origin_dtype", "--input_shape=x:-1,3,16,16", "--dynamic_batch_size=1,2")
    check("compiles with --dynamic_batch_size=1,2", p.returncode == 0, p.stderr)
    run(atc, "--mode=1", f"--om={omg}.om", f"--json={work}/jg.json")
    jg = json.load(open(f"{work}/jg.json"))
    x2 = np.concatenate([x, x[:, :, ::-1, :]])
    x2.tofile(f"{work}/x2.bin")
    p = run(omrun, "--model", f"{omg}.om", "--input", f"{work}/x2.bin", "--output", f"{work}/og", "--dump",
            f"{work}/dg", "--dymBatch", "2")
    check("omrun --dump --dymBatch 2", p.returncode == 0 and "dump:" in p.stdout, p.stdout + p.stderr)
    tasks = json.load(open(f"{work}/dg/dump.json"))["tasks"] if p.returncode == 0 else []
    g1 = jg["gears"]["gears"][1]
    check("SOURCES covers every gear: each gear has a task standing for conv1",
          all(sum("conv1" in t.get("onnx_nodes", []) for t in jg["tasks"][g["first_task"]:g["first_task"] + g["ntasks"]])
              == 1 for g in jg["gears"]["gears"]), jg["tasks"])
    check("the dump holds gear 2's tasks only, with their ONNX nodes",
          [t["task"] for t in tasks] == list(range(g1["first_task"], g1["first_task"] + g1["ntasks"])) and
          any("conv1" in t["onnx_nodes"] for t in tasks), (g1, [t["task"] for t in tasks]))
    r1 = np.load(f"{work}/dg/r1.npy") if p.returncode == 0 else np.zeros(0)
    ref = np.load(f"{dumps['must_keep_origin_dtype']}/r1.npy")
    check("gear 2's r1.npy is [2,16,16,16], sample 0 the static model's",
          r1.shape == (2, 16, 16, 16) and np.allclose(r1[:1], ref, rtol=1e-4, atol=1e-5), r1.shape)
    out = np.fromfile(f"{work}/og/output_0.bin", dtype=np.float32)
    prob = np.load(f"{work}/dg/prob.npy") if p.returncode == 0 else np.zeros(0)
    check("gear 2's dumped output equals omrun's", prob.shape == (2, 10) and np.array_equal(prob.reshape(-1), out))
    # Gear 1 runs first in the task table: gear 2's later tasks write tensors of the same names.
    p = run(omrun, "--model", f"{omg}.om", "--input", f"{work}/x.bin", "--output", f"{work}/og1", "--dump",
            f"{work}/dg1", "--dymBatch", "1")
    names = sorted(f for f in os.listdir(f"{work}/dg1") if f.endswith(".npy")) if p.returncode == 0 else []
    check("omrun --dump --dymBatch 1 dumps the gear's tensors, r1 and prob among them",
          p.returncode == 0 and "r1.npy" in names and "prob.npy" in names and
          np.load(f"{work}/dg1/r1.npy").shape == (1, 16, 16, 16), (names, p.stderr))

    # fp16 overflow: the scale of 3e4 takes r2 past 65504.
    hot = net(work, 3e4)
    om_hot = compile_om(atc, hot, f"{work}/hot", "force_fp16")
    (x * 4).tofile(f"{work}/x4.bin")
    p = run(omrun, "--model", om_hot, "--input", f"{work}/x4.bin", "--output", f"{work}/oh")
    check("without --check_overflow: exit 0 and a warning", p.returncode == 0 and "inf/NaN" in p.stderr, p.stderr)
    p = run(omrun, "--model", om_hot, "--input", f"{work}/x4.bin", "--output", f"{work}/oh", "--check_overflow")
    check("--check_overflow names the task, its ONNX node and the tensor",
          p.returncode == 1 and "overflow: task" in p.stderr and "'scale'" in p.stderr and "'m2'" in p.stderr,
          p.stderr)

    # omcompare against the reference evaluator, fp32 build.
    p = run(omcompare, "--model", model, "--om", f"{work}/net_must_keep_origin_dtype.om", "--input",
            f"{work}/x.bin", "--output", f"{work}/cmp32")
    rows = list(csv.DictReader(open(f"{work}/cmp32/compare.csv"))) if p.returncode in (0, 2) else []
    check("omcompare (fp32) runs, exit 0", p.returncode == 0, p.stdout + p.stderr)
    check("omcompare (fp32): every row cosine >= 0.99999",
          len(rows) >= 5 and all(float(r["cosine"]) >= 0.99999 for r in rows), rows)
    order = [r["node"] for r in rows]
    check("omcompare rows are in graph order", order.index("relu1") < order.index("scale") < order.index("pool") < order.index("softmax"),
          order)
    # --golden: the fp16 dump against the fp32 dump equals numpy on the two dumps.
    p = run(omcompare, "--model", model, "--om", om16, "--input", f"{work}/x.bin", "--golden",
            dumps["must_keep_origin_dtype"], "--output", f"{work}/cmpg", "--threshold", "0.5")
    rows = list(csv.DictReader(open(f"{work}/cmpg/compare.csv"))) if p.returncode in (0, 2) else []
    agree = len(rows) >= 5
    for r in rows:
        f = r["tensor"].replace("/", "_")
        a = np.load(f"{work}/cmpg/dump/{f}.npy").astype(np.float64).reshape(-1)
        b = np.load(f"{dumps['must_keep_origin_dtype']}/{f}.npy").astype(np.float64).reshape(-1)
        c = a @ b / np.linalg.norm(a) / np.linalg.norm(b)
        e = np.linalg.norm(a - b) / np.linalg.norm(b)
        agree &= abs(c - float(r["cosine"])) < 1e-6 and abs(np.abs(a - b).max() - float(r["max_abs_err"])) < 1e-6 \
            and abs(e - float(r["rel_euclidean"])) < 1e-6
    check("omcompare --golden agrees with numpy on the two dumps", p.returncode == 0 and agree, p.stdout + p.stderr)
    # The overflowing model: the scale node is the first below the threshold.
    p = run(omcompare, "--model", hot, "--om", om_hot, "--input", f"{work}/x4.bin", "--output", f"{work}/cmph")
    rows = list(csv.DictReader(open(f"{work}/cmph/compare.csv"))) if p.returncode in (0, 2) else []
    first = [r["node"] for r in rows if r["mark"].startswith("first below")]
    check("omcompare marks the overflowing node first below the threshold, exit 2",
          p.returncode == 2 and first == ["scale"], (p.returncode, first, p.stdout[-600:], p.stderr))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
