#!/usr/bin/python3
"""omrun loads libomrt_jit (and LLVM) only for a model with vector programs
(tools/lazy_jit.h): a model without programs, or --jit=off, never maps
libLLVM (checked with the dynamic loader's LD_DEBUG=files log); a model
with programs is compiled; and with the library unavailable (OMRT_JIT_LIBRARY
naming a missing file, or a library that is not libomrt_jit) omrun prints
the notice once, interprets the programs and writes the same outputs.

Usage: omrun_lazy_jit.py ATC_BINARY OMRUN_BINARY WORK_DIR
"""
import os
import shutil
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from checks import check, summary

def save(work, name, nodes, inits):
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    path = os.path.join(work, name + ".onnx")
    with open(path, "wb") as f:
        f.write(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    return path


def main():
    atc, omrun, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w")
    models = {  # name -> has vector programs
        "plain": (save(work, "plain", [helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3])], [w]), 0),
        "vprog": (save(work, "vprog", [helper.make_node("Sigmoid", ["x"], ["s"]),
                                       helper.make_node("Mul", ["x", "s"], ["y"])], []), 1),
    }
    x = os.path.join(work, "x.bin")
    rng.standard_normal((1, 3, 8, 8)).astype(np.float32).tofile(x)
    env = dict(os.environ)
    env.pop("OMRT_JIT", None)
    env.pop("OMRT_JIT_CACHE", None)
    env.pop("OMRT_JIT_LIBRARY", None)

    def run(name, out, *flags, **extra):
        e = dict(env, **extra)
        return subprocess.run([omrun, "--model", os.path.join(work, name + ".om"), "--input", x,
                               "--output", os.path.join(work, out), *flags], capture_output=True, text=True, env=e)

    def output(out):
        with open(os.path.join(work, out, "output_0.bin"), "rb") as f:
            return f.read()

    for name, (onnx, _) in models.items():
        p = subprocess.run([atc, f"--model={onnx}", "--framework=5", f"--output={os.path.join(work, name)}",
                            "--soc_version=Ascend310"], capture_output=True, text=True)
        check(f"atc compiles {name}", p.returncode == 0, p.stderr)
    notice = "omrun: jit: cannot load "
    for name, (_, programs) in models.items():
        for flags in ([], ["--jit=off"]):
            p = run(name, f"{name}_ld", *flags, LD_DEBUG="files")
            llvm = "libLLVM" in p.stderr
            want = programs and not flags
            check(f"{name} {' '.join(flags) or '--jit=on'}: libLLVM {'loaded' if want else 'not loaded'}",
                  p.returncode == 0 and llvm == want, p.stdout + p.stderr[-2000:])
        p = run(name, f"{name}_off", "--jit=off")
        check(f"{name} runs interpreted", p.returncode == 0, p.stderr)
        p = run(name, f"{name}_on", "--jit=on")
        line = [ln for ln in p.stdout.splitlines() if ln.startswith("jit:")]
        check(f"{name} --jit=on: one jit line", p.returncode == 0 and len(line) == 1, p.stdout + p.stderr)
        if programs:
            check(f"{name} --jit=on compiles its programs", line and " programs (" in line[0]
                  and not line[0].startswith("jit: 0 ") and notice not in p.stderr, p.stdout + p.stderr)
        else:
            check(f"{name} --jit=on: no programs, JIT not loaded", line and "no vector programs" in line[0], line)
        check(f"{name}: JIT and interpreter give the same bytes", output(f"{name}_on") == output(f"{name}_off"))
        for what, lib in (("missing library", os.path.join(work, "no-such-dir", "libomrt_jit.so")),
                          ("not a libomrt_jit", "libm.so.6")):
            p = run(name, f"{name}_nolib", "--jit=on", OMRT_JIT_LIBRARY=lib)
            check(f"{name} --jit=on, {what}: runs", p.returncode == 0, p.stderr)
            check(f"{name} --jit=on, {what}: notice {'once' if programs else 'not printed'}",
                  p.stderr.count(notice) == programs and (not programs or lib in p.stderr), p.stderr)
            check(f"{name} --jit=on, {what}: same bytes", p.returncode == 0
                  and output(f"{name}_nolib") == output(f"{name}_off"))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
