#!/usr/bin/python3
"""End-to-end test of a detector with its postprocessing: torchvision's SSDlite320-MobileNetV3-Large
(models/export_detection.py) compiled by atc, run by omrun, its detections against PyTorch's.

With --name maskrcnn_resnet18_fpn_128, a test-sized Mask R-CNN (models/export_detection.py's recipe that
gives real detections offline) instead, exported at test time into --work-dir's parent (NAME-export, one
export for both precisions, under a lock): its RPN (TopK, NMS), the box head over the counted proposals,
the per-class threshold and NMS, and the mask head picking each detection's label's mask; the masks
(28x28, before pasting) are checked too, detection by detection: within 1e-4 (must_keep_origin_dtype) or
0.05 (force_fp16) of PyTorch's.

The om's outputs are counted (data-dependent: NonZero, TopK and NonMaxSuppression inside), so
omrun writes only the detections there are. must_keep_origin_dtype must give PyTorch's detections
exactly in order: the same number, the same labels, boxes within 1 pixel, scores within 1e-4.
force_fp16 rounds the network's activations to fp16, which moves the scores (by up to ~0.025
here: the export scales the classification head, so logit errors grow with it), so detections
whose scores are that close may trade places and one within that of the score threshold may
appear or go. Each PyTorch detection is matched to an om detection of the same label whose box
is within 1 pixel; the test requires 95% of them found, the scores within 0.05, every detection
only one side has within the score error of the threshold, and every pair the om ranks the other
way round within twice the score error of each other. Exit 77 (skipped) when the export is
missing.
"""
import argparse
import fcntl
import json
import os
import subprocess
import sys

import numpy as np

import checks

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "ssdlite320_mobilenet_v3_large"
MASK_NAME = "maskrcnn_resnet18_fpn_128"


def load(dir_, stem, dtype, cols):
    a = np.fromfile(os.path.join(dir_, stem), dtype)
    return a.reshape(-1, cols) if cols > 1 else a


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--precision", default="must_keep_origin_dtype")
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "models", "out"))
    ap.add_argument("--bin-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work-dir", default=None)
    ap.add_argument("--name", default=NAME, choices=[NAME, MASK_NAME])
    args = ap.parse_args()
    prec, mdir, name = args.precision, args.models_dir, args.name
    work = args.work_dir or os.path.join(args.bin_dir, "e2e", f"{name}-{prec}")
    if name == MASK_NAME:  # exported here, once for both precisions
        mdir = os.path.join(os.path.dirname(os.path.abspath(work)), name + "-export")
        os.makedirs(mdir, exist_ok=True)
        with open(os.path.join(mdir, ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            p = subprocess.run([sys.executable, os.path.join(ROOT, "models", "export_detection.py"), "--name", name,
                                "--out", mdir], capture_output=True, text=True)
        if not checks.check("export", p.returncode == 0, (p.stderr + p.stdout).strip()[-400:]):
            return checks.summary(name)
    return compare(args, prec, mdir, name, work)


def compare(args, prec, mdir, name, work):
    onnx_path, meta_path = os.path.join(mdir, name + ".onnx"), os.path.join(mdir, name + ".json")
    if not os.path.exists(onnx_path) or not os.path.exists(meta_path):
        print(f"detection_e2e: {onnx_path} is missing: run models/export_detection.py first\nskipped")
        return 77
    with open(meta_path) as f:
        meta = json.load(f)
    os.makedirs(work, exist_ok=True)
    om_base, out_dir = os.path.join(work, name), os.path.join(work, "out")
    shape = ",".join(str(d) for d in meta["input_shape"])
    p = checks.run(os.path.join(args.bin_dir, "atc"), f"--model={onnx_path}", "--framework=5",
                   f"--output={om_base}", f"--input_shape={meta['input']}:{shape}", "--soc_version=Ascend310",
                   f"--precision_mode={prec}")
    if not checks.check(f"{prec}: atc compiles", p.returncode == 0, (p.stderr + p.stdout).strip()[-400:]):
        return checks.summary(name)
    p = checks.run(os.path.join(args.bin_dir, "omrun"), "--model", om_base + ".om", "--input",
                   os.path.join(mdir, name + ".input.bin"), "--output", out_dir, "--loop", "1")
    if not checks.check(f"{prec}: omrun runs", p.returncode == 0, (p.stderr + p.stdout).strip()[-400:]):
        return checks.summary(name)
    boxes, scores = load(mdir, name + ".boxes.bin", "<f4", 4), load(mdir, name + ".scores.bin", "<f4", 1)
    labels = load(mdir, name + ".labels.bin", "<i8", 1)
    gb, gs = load(out_dir, "output_0.bin", "<f4", 4), load(out_dir, "output_1.bin", "<f4", 1)
    gl = load(out_dir, "output_2.bin", "<i8", 1)
    masks = load(mdir, name + ".masks.bin", "<f4", 28 * 28) if "masks" in meta.get("outputs", []) else None
    gm = load(out_dir, "output_3.bin", "<f4", 28 * 28) if masks is not None else None
    n, m = len(scores), len(gs)
    checks.check(f"{prec}: PyTorch has detections", n > 0, f"{n} detections", show=True)
    if prec == "must_keep_origin_dtype":
        checks.check(f"{prec}: as many detections", m == n, f"om {m}, PyTorch {n}", show=True)
        k = min(m, n)
        checks.check(f"{prec}: labels in order", np.array_equal(gl[:k], labels[:k]),
                     f"first difference at {int(np.argmax(gl[:k] != labels[:k]))}" if k else "")
        err = float(np.max(np.abs(gb[:k] - boxes[:k]))) if k else 0.0
        checks.check(f"{prec}: boxes within 1 pixel", err <= 1.0, f"max error {err:.3g} px", show=True)
        serr = float(np.max(np.abs(gs[:k] - scores[:k]))) if k else 0.0
        checks.check(f"{prec}: scores", serr <= 1e-4, f"max error {serr:.3g}", show=True)
        if masks is not None:
            merr = float(np.max(np.abs(gm[:k] - masks[:k]))) if k else 0.0
            checks.check(f"{prec}: masks", len(gm) == m and merr <= 1e-4, f"{len(gm)} masks, max error {merr:.3g}",
                         show=True)
        return checks.summary(name)
    # force_fp16: match each PyTorch detection to an unused om detection of its label and box
    used, pos = np.zeros(m, bool), np.full(n, -1)
    for i in range(n):
        cand = [j for j in range(m) if not used[j] and gl[j] == labels[i] and np.max(np.abs(gb[j] - boxes[i])) <= 1.0]
        if cand:
            pos[i] = min(cand, key=lambda j: abs(gs[j] - scores[i]))
            used[pos[i]] = True
    found = pos >= 0
    err = float(np.max(np.abs(gs[pos[found]] - scores[found]))) if found.any() else 0.0
    tol = 2 * err  # two scores each off by up to err may trade places
    thresh = float(meta.get("score_thresh", 0.0))
    checks.check(f"{prec}: detections found", found.sum() >= 0.95 * n,
                 f"{int(found.sum())} of {n} PyTorch detections among the om's {m} (label, box within 1 px)",
                 show=True)
    checks.check(f"{prec}: scores", err <= 0.05, f"max error {err:.3g} (bar 0.05)", show=True)
    if masks is not None:
        merr = float(np.max(np.abs(gm[pos[found]] - masks[found]))) if found.any() else 0.0
        checks.check(f"{prec}: masks", len(gm) == m and merr <= 0.05,
                     f"{len(gm)} masks, max error {merr:.3g} over the matched detections (bar 0.05)", show=True)
    # a detection only one side has sits within the score error of the threshold
    lone = [float(scores[i]) for i in range(n) if not found[i]] + [float(gs[j]) for j in range(m) if not used[j]]
    checks.check(f"{prec}: detections only one side has are at the threshold",
                 all(abs(v - thresh) <= err for v in lone), f"scores {lone} vs threshold {thresh}", show=True)
    # the order: every pair the om ranks the other way round is a near tie (scores within tol)
    idx = np.flatnonzero(found)
    inv = [(a, b) for x, a in enumerate(idx) for b in idx[x + 1:] if pos[a] > pos[b]]
    worst = max((float(scores[a] - scores[b]) for a, b in inv), default=0.0)
    checks.check(f"{prec}: order", worst <= tol,
                 f"{len(inv)} of {len(idx) * (len(idx) - 1) // 2} pairs ranked the other way round, all with "
                 f"PyTorch scores within {worst:.3g} (bar: twice the score error, {tol:.3g})", show=True)
    return checks.summary(name)


if __name__ == "__main__":
    sys.exit(main())
