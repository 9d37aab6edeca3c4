"""checks.py - what the Python end-to-end tests share: a tally of checks, running a command, cosine.

The test scripts run as `python3 tests/NAME.py ...`, so tests/ is on sys.path and `import checks`
finds this file. check() prints one line per check ('ok  ' or 'FAIL', the detail on failure, or
always with show=True: measured figures worth seeing in a passing log) and tallies it; summary() prints the tally and returns the script's exit status: 0 only when at
least one check ran and every check passed (a script that checked nothing has failed).
"""
import os
import subprocess
import sys

import numpy as np

results = []  # one bool per check() call, in order


def check(what, ok, detail="", show=False):
    ok = bool(ok)
    results.append(ok)
    print(f"{'ok  ' if ok else 'FAIL'} {what}{': ' + str(detail) if detail and (show or not ok) else ''}", flush=True)
    return ok


def run(*cmd, env=None):
    """Run cmd (arguments converted with str), capturing stdout and stderr as text."""
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env)


def cosine(a, b):
    """Cosine similarity in float64 of two arrays of any shape; 1 for two zero arrays, 0 for one."""
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na == 0 or nb == 0:
        return 1.0 if na == nb else 0.0
    return float(a @ b / (na * nb))


def int8_vs_ort(ort, got):
    """The int8 model checks against ONNX Runtime's int8 output: cosine >= 0.99 and the same top-1."""
    cos = cosine(ort, got)
    check("accuracy vs ORT int8", cos >= 0.99, f"cosine {cos:.6f} (bar 0.99); max abs error "
          f"{float(np.max(np.abs(ort - got))):.3g}")
    check("top-1 vs ORT int8", int(np.argmax(got)) == int(np.argmax(ort)),
          f"omrun {int(np.argmax(got))}, ORT {int(np.argmax(ort))}")


def ort_model_skip(tool, paths, export_hint, needs_onnx, ort_bench):
    """Why a model test against ONNX Runtime cannot run here, as its SKIP line, or None: a file of
    paths missing (export_hint says how to make it), python3-onnx missing (needs_onnx: what needs
    it), or no onnxruntime-node beside ort_bench."""
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        return f"{tool}: SKIP: {', '.join(missing)} missing: run {export_hint}"
    if subprocess.run([sys.executable, "-c", "import onnx"], capture_output=True).returncode:
        return f"{tool}: SKIP: python3-onnx is missing ({needs_onnx} needs it)"
    if not os.path.isdir(os.path.join(os.path.dirname(ort_bench), "node_modules", "onnxruntime-node")):
        return (f"{tool}: SKIP: no onnxruntime-node beside {ort_bench} "
                "(scripts/install-deps.sh --bench installs it, or pass --ort-bench)")
    return None


def summary(name=""):
    """Print '[name: ]P passed, F failed' and return the exit status."""
    passed = sum(results)
    print(f"{name + ': ' if name else ''}{passed} passed, {len(results) - passed} failed", flush=True)
    return 0 if results and passed == len(results) else 1
