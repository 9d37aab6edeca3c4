#!/usr/bin/python3
"""Export torchvision classifiers to ONNX with a reference input and output.

No pretrained weights can be downloaded here, so each network is initialised
from a fixed seed and its BatchNorm statistics are re-estimated on random
images (train-mode forward passes with a cumulative average), which gives
activations and logits of realistic scale. For each model NAME it writes:

  NAME.onnx          the model, batch dim symbolic ("batch"), fixed by atc --input_shape
  NAME.input.bin     one input, raw little-endian float32, 1x3x224x224 (C order)
  NAME.output.bin    PyTorch's float32 output for it, 1x1000
  NAME.json          input name and shape, opset, PyTorch's top-1 and top-5

Usage: models/export_torchvision.py [--out DIR] [NAME ...]
       NAME in resnet50, mobilenet_v2, squeezenet1_1, efficientnet_b0
       (default: the first three, the ones the tests use; bench/run.sh also
       asks for efficientnet_b0)
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torchvision

# name -> (constructor, opset the issue asks for)
MODELS = {
    "resnet50": (torchvision.models.resnet50, 13),
    "mobilenet_v2": (torchvision.models.mobilenet_v2, 11),
    "squeezenet1_1": (torchvision.models.squeezenet1_1, 9),
    "efficientnet_b0": (torchvision.models.efficientnet_b0, 13),  # benchmarked (bench/), not yet tested
}
DEFAULT = ["resnet50", "mobilenet_v2", "squeezenet1_1"]
SEED = 20261122
BN_BATCHES = 4
BN_BATCH_SIZE = 8


def reestimate_batchnorm(model, gen):
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None  # cumulative moving average over the batches below
    model.train()
    with torch.no_grad():
        for _ in range(BN_BATCHES):
            model(torch.randn(BN_BATCH_SIZE, 3, 224, 224, generator=gen))
    model.eval()


def export(name, out_dir):
    ctor, opset = MODELS[name]
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    model = ctor()
    reestimate_batchnorm(model, gen)
    x = torch.randn(1, 3, 224, 224, generator=gen)
    with torch.no_grad():
        y = model(x)
    path = os.path.join(out_dir, name + ".onnx")
    torch.onnx.export(model, x, path, opset_version=opset, input_names=["input"],
                      output_names=["output"], dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
                      do_constant_folding=True)
    x.numpy().astype("<f4").tofile(os.path.join(out_dir, name + ".input.bin"))
    y.numpy().astype("<f4").tofile(os.path.join(out_dir, name + ".output.bin"))
    top5 = torch.topk(y[0], 5).indices.tolist()
    meta = {"model": name, "opset": opset, "input": "input", "input_shape": [1, 3, 224, 224],
            "output_shape": list(y.shape), "top1": top5[0], "top5": top5, "seed": SEED}
    with open(os.path.join(out_dir, name + ".json"), "w") as f:
        json.dump(meta, f, indent=1)
    return path


def up_to_date(name, out_dir):
    """True when an earlier run with the same seed and opset left every file."""
    files = [os.path.join(out_dir, name + ext) for ext in (".onnx", ".input.bin", ".output.bin", ".json")]
    if not all(os.path.exists(f) for f in files):
        return False
    with open(files[3]) as f:
        meta = json.load(f)
    return meta.get("seed") == SEED and meta.get("opset") == MODELS[name][1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "out"))
    ap.add_argument("names", nargs="*", default=DEFAULT)
    args = ap.parse_args()
    for n in args.names:
        if n not in MODELS:
            sys.exit(f"export_torchvision: unknown model '{n}' (known: {', '.join(MODELS)})")
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    for n in args.names:
        t = time.time()
        if up_to_date(n, args.out):
            print(f"models: {n}: up to date in {args.out}")
            continue
        path = export(n, args.out)
        print(f"models: {n}: wrote {path} ({os.path.getsize(path) / 2**20:.1f} MiB) in {time.time() - t:.1f} s")


if __name__ == "__main__":
    main()
