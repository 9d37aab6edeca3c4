#!/usr/bin/python3
"""omrun --dump over the exported models (issue 21: a layer dump works for
every task kind, under fusions, gears and both precision modes).

For each model in MODELS (those models/out holds; others are noted and
skipped), compiled by atc in force_fp16 and must_keep_origin_dtype, and for
resnet50 also with batch gears 1,2 (run at gear 2): omrun --dump DIR, then
- dump.json parses and lists every task of the package, in order, with the
  kind and name `atc --mode=1` gives it;
- every output it lists that has a file is a float32 .npy of the shape
  listed (the logical, ONNX-layout shape), and every finite value there is
  finite in the dump (no layout conversion read padding or past the end);
- the dump of the tensor holding the model's output equals the output file
  omrun wrote (to fp16 rounding when the stored tensor is fp16);
- every task kind in the package dumped at least one file, or only writes
  packed weights.
Prints the kinds seen over all models. Exit 0 when all hold, 1 otherwise,
77 when no model is exported.

Usage: layer_dump_models.py ATC OMRUN MODELS_DIR WORK_DIR
"""
import json
import os
import shutil
import sys

import numpy as np

from checks import check, run, summary

# CI exports these (models/export_torchvision.py); r3d_18 adds 3-D tasks when present.
MODELS = ["resnet50", "mobilenet_v2", "efficientnet_b0", "densenet121", "googlenet", "shufflenet_v2_x1_0",
          "regnet_y_400mf", "convnext_tiny", "lraspp_mobilenet_v3_large", "transformer_encoder", "crnn", "lstm",
          "r3d_18"]
kinds_seen = set()


def dump_case(atc, omrun, models, work, name, prec, gears):
    meta = json.load(open(os.path.join(models, name + ".json")))
    shape = list(meta["input_shape"])
    label = f"{name} {prec}{' gears' if gears else ''}"
    case = os.path.join(work, f"{name}-{prec}{'-gears' if gears else ''}")
    shutil.rmtree(case, ignore_errors=True)
    os.makedirs(case)
    om = os.path.join(case, "m")
    flags = [f"--input_shape={meta['input']}:{','.join(map(str, shape))}"]
    run_flags = []
    inp = os.path.join(models, name + ".input.bin")
    if gears:
        flags = [f"--input_shape={meta['input']}:-1,{','.join(map(str, shape[1:]))}", "--dynamic_batch_size=1,2"]
        run_flags = ["--dymBatch", "2"]
        data = open(inp, "rb").read()
        inp = os.path.join(case, "input2.bin")
        open(inp, "wb").write(data + data)
    r = run(atc, f"--model={models}/{name}.onnx", "--framework=5", f"--output={om}", "--soc_version=Ascend310",
            f"--precision_mode={prec}", *flags)
    if not check(f"{label}: atc", r.returncode == 0, r.stderr.strip()):
        return
    r = run(atc, "--mode=1", f"--om={om}.om", f"--json={case}/m.json")
    if not check(f"{label}: atc --mode=1", r.returncode == 0, r.stderr.strip()):
        return
    pkg = json.load(open(f"{case}/m.json"))
    dump, out = os.path.join(case, "dump"), os.path.join(case, "out")
    r = run(omrun, "--model", om + ".om", "--input", inp, "--output", out, "--dump", dump, "--outfmt", "NPY",
            *run_flags)
    if not check(f"{label}: omrun --dump", r.returncode == 0, r.stderr.strip()):
        return
    index = json.load(open(os.path.join(dump, "dump.json")))
    tasks = index["tasks"]
    ptasks = pkg["tasks"]
    if gears:  # the dump holds the chosen gear's tasks only (gear 1: batch 2)
        g = pkg["gears"]["gears"][1]
        ptasks = ptasks[g["first_task"]:g["first_task"] + g["ntasks"]]
    check(f"{label}: every task dumped", len(tasks) == len(ptasks), f"{len(tasks)} of {len(ptasks)}")
    dumped_kinds, kinds = set(), set()
    for t, p in zip(tasks, ptasks):
        kinds.add(t["kind"])
        check(f"{label}: task {t['task']} is the package's", t["kind"] == p["kind"] and t["name"] == p["name"],
              f"{t['kind']} {t['name']} vs {p['kind']} {p['name']}")
        for o in t["outputs"]:
            if not o.get("file"):
                continue
            x = np.load(os.path.join(dump, o["file"]))
            check(f"{label}: {o['file']} dtype and shape", x.dtype == np.float32 and list(x.shape) == o["shape"],
                  f"{x.dtype} {list(x.shape)} vs {o['shape']}")
            check(f"{label}: {o['file']} finite", np.isfinite(x).all())
            dumped_kinds.add(t["kind"])
    missing = kinds - dumped_kinds - {"WPACK"}
    check(f"{label}: every kind dumped a file", not missing, sorted(missing))
    kinds_seen.update(dumped_kinds)
    # The model output: the last task writing a tensor of that name (the graph output's ONNX name).
    want = np.load(os.path.join(out, "output_0.npy")).astype(np.float32)
    last = None
    for t in tasks:
        for o in t["outputs"]:
            if o.get("file") and list(o["shape"]) == list(want.shape) and o.get("onnx_tensor"):
                last = o
    if check(f"{label}: a dump holds the model output", last is not None):
        got = np.load(os.path.join(dump, last["file"]))
        tol = 1e-3 * max(1.0, float(np.abs(want).max())) if last["dtype"] == "float16" else 0
        check(f"{label}: dump of the output equals omrun's output", np.abs(got - want).max() <= tol,
              f"max diff {np.abs(got - want).max()}")
    shutil.rmtree(case, ignore_errors=True)


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    atc, omrun, models, work = sys.argv[1:]
    have = [m for m in MODELS if os.path.exists(os.path.join(models, m + ".onnx"))]
    if not have:
        print(f"layer_dump_models: no model of {MODELS} in {models}: run models/export_torchvision.py")
        return 77
    for m in sorted(set(MODELS) - set(have)):
        print(f"note: {m} is not exported; skipped")
    os.makedirs(work, exist_ok=True)
    for m in have:
        for prec in ("force_fp16", "must_keep_origin_dtype"):
            dump_case(atc, omrun, models, work, m, prec, False)
    if "resnet50" in have:
        dump_case(atc, omrun, models, work, "resnet50", "force_fp16", True)
    print(f"task kinds dumped: {', '.join(sorted(kinds_seen))}")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
