#!/usr/bin/python3
"""Fault injection over a whole atc compile (issue 5 item 3).

atc_fi (tests/fault/fault.c) fails the Nth call of one kind (ATC_FAULT=KIND:N,
KIND = alloc, write, fsync, rename or link). For each kind this loops N = 1, 2, ...
over the compile of two small models (Conv + Relu + MaxPool in force_fp16; a
residual block with a Gemm + Softmax head in must_keep_origin_dtype) into a
directory whose output file already holds old contents, until a run finishes
without reaching call N. Every run in which the fault fired must either fail cleanly:
  * exit with status 1 (not a signal, not a sanitizer's exit code),
  * print an error message on stderr besides the injector's own line,
  * leave the old output file byte for byte as it was (except when the one
    fsync after the rename, of the directory, fails: then the file is already
    the complete new package and atc says so),
  * leave nothing else in the directory (no temporary file),
  * and, in a sanitizer build, produce no AddressSanitizer/LeakSanitizer report
    (tests/fuzz/ci.sh runs this under ASan with detect_leaks=1).
or, where the compiler degrades on purpose (ir.c: a failed allocation in
is_sorted or ir_graph_compact only skips a shortcut), succeed with exactly the
package a fault-free run writes. The last run of each loop must succeed and
write that package.

Usage: fault_injection.py ATC_FI_BINARY WORK_DIR [--stride K]
--stride K tries every Kth allocation only after the first 200 (default 1:
every N; a few thousand runs of a short-lived process).
"""
import os
import shutil
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

OLD = b"old output: must survive every failed compile\n"


def main():
    atc, work = sys.argv[1:3]
    stride = int(sys.argv[sys.argv.index("--stride") + 1]) if "--stride" in sys.argv else 1
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    rng = np.random.default_rng(5)

    def init(name, *shape):
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)

    # 1. Conv + Relu + MaxPool; 2. a residual block with a classifier head
    # (fusion, Gemm lowering, Softmax: more passes, more allocations).
    small = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["r"], name="relu0"),
         helper.make_node("MaxPool", ["r"], ["y"], name="pool0", kernel_shape=[2, 2], strides=[2, 2])],
        "fi", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [init("w", 4, 3, 3, 3), init("b", 4)])
    resnet = helper.make_graph(
        [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
         helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
         helper.make_node("Add", ["c2", "r1"], ["s"], name="add"),
         helper.make_node("Relu", ["s"], ["r2"], name="relu2"),
         helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
         helper.make_node("Flatten", ["g"], ["f"], name="flat"),
         helper.make_node("Gemm", ["f", "wg", "bg"], ["l"], name="fc", transB=1),
         helper.make_node("Softmax", ["l"], ["y"], name="softmax")],
        "fi_res", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [init("w1", 16, 3, 3, 3), init("b1", 16), init("w2", 16, 16, 3, 3), init("b2", 16),
         init("wg", 10, 16), init("bg", 10)])
    failures = 0
    summary = []
    for name, graph, flags in (("conv_relu", small, []),
                               ("residual", resnet, ["--precision_mode=must_keep_origin_dtype"])):
        failures += fault_loop(atc, work, name, graph, flags, stride, summary)
    print(f"fault_injection: {'; '.join(summary)}; {failures} failed")
    return 1 if failures else 0


def fault_loop(atc, work, name, graph, flags, stride, summary):
    model = os.path.join(work, name + ".onnx")
    with open(model, "wb") as f:
        f.write(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    out_dir = os.path.join(work, name)
    os.makedirs(out_dir)
    out = os.path.join(out_dir, "net.om")
    cmd = [atc, f"--model={model}", "--framework=5", f"--output={out_dir}/net", "--soc_version=Ascend310"] + flags
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1")
    env["ATC_FAULT"] = "none:0"
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        print(f"FAIL {name}: the fault-free compile: {r.stderr}")
        return 1
    with open(out, "rb") as f:
        good = f.read()

    failures = 0
    for kind in ("alloc", "write", "fsync", "rename", "link"):
        n, fired, survived = 0, 0, 0
        while True:
            n = n + 1 if n < 200 else n + stride
            with open(out, "wb") as f:
                f.write(OLD)
            env["ATC_FAULT"] = f"{kind}:{n}"
            r = subprocess.run(cmd, capture_output=True, text=True, env=env)
            err = r.stderr
            injected = f"atc_fi: injected {kind} failure at call {n}" in err
            listing = sorted(os.listdir(out_dir))
            with open(out, "rb") as f:
                now = f.read()
            problems = []
            if "Sanitizer" in err or "runtime error:" in err:
                problems.append("sanitizer report")
            if not injected:
                if r.returncode != 0:
                    problems.append(f"exit {r.returncode} without an injected fault")
                elif now != good or listing != ["net.om"]:
                    problems.append(f"success but output {'unchanged' if now == OLD else 'differs'}, directory {listing}")
            elif r.returncode == 0:
                fired += 1
                survived += 1
                if now != good or listing != ["net.om"]:
                    problems.append(f"the fault was ignored: exit 0, output {'unchanged' if now == OLD else 'differs'}, directory {listing}")
            else:
                fired += 1
                message = "\n".join(l for l in err.splitlines() if not l.startswith("atc_fi: ")).strip()
                if r.returncode != 1:
                    problems.append(f"exit status {r.returncode}, want 1")
                if len(message) < 10:
                    problems.append("no error message")
                if "written, but syncing directory" in err:
                    # the directory fsync after the rename: the new package is
                    # complete and in place, only its durability is unknown
                    if now != good:
                        problems.append("directory fsync failed and the output is not the complete package")
                elif now != OLD:
                    problems.append("old output file changed")
                if listing != ["net.om"]:
                    problems.append(f"directory holds {listing}")
            if problems:
                failures += 1
                print(f"FAIL {name} {kind}:{n}: {'; '.join(problems)}\n  stderr: {err.strip()[:2000]}")
                for extra in os.listdir(out_dir):
                    if extra != "net.om":
                        os.remove(os.path.join(out_dir, extra))
            elif injected and r.returncode and fired <= 3:
                print(f"ok   {name} {kind}:{n}: {message.splitlines()[-1][:200]}")
            if not injected:
                break
            if failures > 20:
                print("too many failures, stopping")
                return failures
        summary.append(f"{name} {kind}: {fired} injected ({survived} degraded to the same package)")
        print(f"--   {name} {kind}: the compile makes {n - 1} counted calls; {fired} injected failures checked, "
              f"{fired - survived} refused, {survived} compiled the same package anyway")
    return failures


if __name__ == "__main__":
    sys.exit(main())
