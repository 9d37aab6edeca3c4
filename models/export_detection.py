#!/usr/bin/python3
"""Export torchvision's SSDlite320-MobileNetV3-Large with its postprocessing to ONNX, with a
reference input and PyTorch's detections.

No pretrained weights can be downloaded here, so the network is initialised from a fixed seed
and its BatchNorm statistics are re-estimated on random images (as models/export_torchvision.py
does). A random head scores every anchor about alike (a softmax over 91 classes of near-zero
logits: each score near 1/91, ties everywhere), which makes an order comparison meaningless; the
classification head's last convolutions are scaled (HEAD_SCALE) so that the scores spread, and the
score threshold is raised (SCORE_THRESH): torchvision's 0.001 keeps the most detections there can
be (300), among which scores a few 1e-6 apart, which float rounding alone may swap. The export is the whole torchvision model in
eval mode: transform (normalise, resize to 320x320), backbone, head, box decoding, the per-class
threshold and top-k (NonZero, GatherND, TopK with a run-time k), batched NMS, and the box
rescaling. Writes:

  NAME.onnx          the model (opset 17), input 'input' 1x3x320x320, outputs boxes, scores, labels
  NAME.input.bin     the input, raw little-endian float32 (C order), values in [0, 1)
  NAME.boxes.bin     PyTorch's boxes, float32 [n, 4] (x1, y1, x2, y2 in input pixels)
  NAME.scores.bin    PyTorch's scores, float32 [n]
  NAME.labels.bin    PyTorch's labels, int64 [n]
  NAME.json          input name, shape and dtype, opset, n, the score threshold, the seed

Usage: models/export_detection.py [--out DIR]   (NAME: ssdlite320_mobilenet_v3_large)
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torchvision

NAME = "ssdlite320_mobilenet_v3_large"
SEED = 20261128
OPSET = 17
SHAPE = [1, 3, 320, 320]
HEAD_SCALE = 4.0  # the classification head's last convs: top scores from ~0.98 down, spread
SCORE_THRESH = 0.5  # torchvision's default 0.001 keeps 300 detections, some of them near ties
RECIPE = 2  # bump when the export changes: earlier exports are then redone


class Detections(torch.nn.Module):
    """The torchvision model on a batch of one image, its detections as three tensors."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        d = self.net([x[0]])[0]
        return d["boxes"], d["scores"], d["labels"]


def reestimate_batchnorm(net, gen):
    """Train-mode passes through the backbone and head (SSD's own train mode needs targets)."""
    bns = [m for m in net.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None  # cumulative average over the batches below
    net.train()
    with torch.no_grad():
        for _ in range(4):
            x = torch.rand(8, *SHAPE[1:], generator=gen)
            mean = torch.tensor(net.transform.image_mean).view(1, 3, 1, 1)
            std = torch.tensor(net.transform.image_std).view(1, 3, 1, 1)
            features = list(net.backbone((x - mean) / std).values())
            net.head(features)
    net.eval()


def export(out_dir):
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    net = torchvision.models.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None,
                                                                      score_thresh=SCORE_THRESH)
    reestimate_batchnorm(net, gen)
    with torch.no_grad():
        for block in net.head.classification_head.module_list:
            block[-1].weight.mul_(HEAD_SCALE)  # the block's last layer: a plain Conv2d
    model = Detections(net).eval()
    x = torch.rand(*SHAPE, generator=gen)
    with torch.no_grad():
        boxes, scores, labels = model(x)
    path = os.path.join(out_dir, NAME + ".onnx")
    torch.onnx.export(model, x, path, opset_version=OPSET, input_names=["input"],
                      output_names=["boxes", "scores", "labels"], do_constant_folding=True)
    x.numpy().astype("<f4").tofile(os.path.join(out_dir, NAME + ".input.bin"))
    boxes.numpy().astype("<f4").tofile(os.path.join(out_dir, NAME + ".boxes.bin"))
    scores.numpy().astype("<f4").tofile(os.path.join(out_dir, NAME + ".scores.bin"))
    labels.numpy().astype("<i8").tofile(os.path.join(out_dir, NAME + ".labels.bin"))
    meta = {"model": NAME, "opset": OPSET, "input": "input", "input_shape": SHAPE, "input_dtype": "float32",
            "kind": "detection", "detections": int(scores.shape[0]), "score_thresh": net.score_thresh,
            "outputs": ["boxes", "scores", "labels"], "seed": SEED, "recipe": RECIPE}
    with open(os.path.join(out_dir, NAME + ".json"), "w") as f:
        json.dump(meta, f, indent=1)
    return path, int(scores.shape[0])


def up_to_date(out_dir):
    exts = (".onnx", ".input.bin", ".boxes.bin", ".scores.bin", ".labels.bin", ".json")
    files = [os.path.join(out_dir, NAME + ext) for ext in exts]
    if not all(os.path.exists(f) for f in files):
        return False
    with open(files[-1]) as f:
        meta = json.load(f)
    return meta.get("seed") == SEED and meta.get("recipe") == RECIPE


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "out"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    t = time.time()
    if up_to_date(args.out):
        print(f"models: {NAME}: up to date in {args.out}")
        return
    path, n = export(args.out)
    print(f"models: {NAME}: wrote {path} ({os.path.getsize(path) / 2**20:.1f} MiB, {n} detections) "
          f"in {time.time() - t:.1f} s")


if __name__ == "__main__":
    main()
