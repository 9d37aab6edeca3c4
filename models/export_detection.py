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

With --name maskrcnn_resnet18_fpn_128 it exports instead a test-sized Mask R-CNN (tests/detection_e2e.py
makes it at test time): torchvision's MaskRCNN on a ResNet-18 FPN backbone (frozen BatchNorm at its
identity statistics), 5 classes, a 128x128 image, 200 / 30 RPN proposals before / after NMS. A random box
predictor gives no detection worth comparing (each class about 1/5, below any threshold), so the recipe
makes real ones offline: the classification layer is scaled (MASK_CLS_SCALE) so the scores spread, classes
1 and 2 get a bias (MASK_CLS_BIAS) so that boxes clear the 0.5 threshold, the RPN's and the box head's
regression layers are scaled down (REG_SCALE) so that proposals and boxes stay near their anchors (a random
regression makes degenerate boxes), and the input is a drawn image (a gradient with seeded rectangles)
rather than noise; ONNX opset 15 (MASK_OPSET says why). Its outputs are the roi_heads' detections on the transformed image: boxes, scores,
labels and the 28x28 mask of each detection's label (mask_prob[index, labels]); the paste of each mask
into the image (a Loop resizing each mask to its box's size, a shape its values give) is not exported.
Writes the files above plus NAME.masks.bin (float32 [n, 1, 28, 28]).

Usage: models/export_detection.py [--out DIR] [--name NAME]
       (NAME: ssdlite320_mobilenet_v3_large (default) or maskrcnn_resnet18_fpn_128)
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


MASK_NAME = "maskrcnn_resnet18_fpn_128"
MASK_SIZE = 128
MASK_CLS_SCALE = 8.0  # the scores spread (0.65 .. 0.95 on the drawn image)
MASK_CLS_BIAS = {1: 3.0, 2: 2.5}  # classes whose boxes clear the threshold
REG_SCALE = 0.1  # RPN and box regression near their anchors / proposals
# torchvision 0.14 exports roi_align (aligned=False) as a RoiAlign without coordinate_transformation_mode,
# whose default from opset 16 on is half_pixel: every sample half a pixel off PyTorch's (ONNX Runtime and
# the om then agree with each other, not with PyTorch). At opset 15 RoiAlign-10 samples as PyTorch does.
MASK_OPSET = 15
MASK_RECIPE = 1


class MaskDetections(torch.nn.Module):
    """Mask R-CNN's roi_heads detections on one image (boxes on the transformed image, masks unpasted)."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        images, _ = self.net.transform([x[0]])
        features = self.net.backbone(images.tensors)
        proposals, _ = self.net.rpn(images, features)
        d = self.net.roi_heads(features, proposals, images.image_sizes)[0][0]
        return d["boxes"], d["scores"], d["labels"], d["masks"]


def drawn_image(size, gen):
    """A gradient background with six seeded rectangles of plain colour, [1, 3, size, size] in [0, 1]."""
    t = torch.linspace(0, 1, size)
    img = torch.stack([t[None, :].expand(size, size) * 0.5 + 0.25, t[:, None].expand(size, size) * 0.5 + 0.25,
                       torch.full((size, size), 0.4)])
    for _ in range(6):
        r = torch.rand(7, generator=gen)
        x0, y0 = int(r[0] * size * 0.7), int(r[1] * size * 0.7)
        w, h = int(8 + r[2] * size * 0.3), int(8 + r[3] * size * 0.3)
        img[:, y0:y0 + h, x0:x0 + w] = r[4:7, None, None]
    return img[None]


def export_mask(out_dir):
    from torchvision.models.detection import MaskRCNN
    from torchvision.models.detection.backbone_utils import resnet_fpn_backbone
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    backbone = resnet_fpn_backbone(backbone_name="resnet18", weights=None, trainable_layers=5)
    net = MaskRCNN(backbone, num_classes=5, min_size=MASK_SIZE, max_size=MASK_SIZE, rpn_pre_nms_top_n_test=200,
                   rpn_post_nms_top_n_test=30, box_score_thresh=SCORE_THRESH, box_detections_per_img=20)
    with torch.no_grad():
        net.rpn.head.bbox_pred.weight.mul_(REG_SCALE)
        head = net.roi_heads.box_predictor
        head.cls_score.weight.mul_(MASK_CLS_SCALE)
        for k, b in MASK_CLS_BIAS.items():
            head.cls_score.bias[k] += b
        head.bbox_pred.weight.mul_(REG_SCALE)
    model = MaskDetections(net.eval()).eval()
    x = drawn_image(MASK_SIZE, gen)
    with torch.no_grad():
        outs = model(x)
    path = os.path.join(out_dir, MASK_NAME + ".onnx")
    names = ["boxes", "scores", "labels", "masks"]
    torch.onnx.export(model, x, path, opset_version=MASK_OPSET, input_names=["input"], output_names=names,
                      do_constant_folding=True)
    x.numpy().astype("<f4").tofile(os.path.join(out_dir, MASK_NAME + ".input.bin"))
    for name, t in zip(names, outs):
        t.numpy().astype("<i8" if name == "labels" else "<f4").tofile(os.path.join(out_dir, f"{MASK_NAME}.{name}.bin"))
    meta = {"model": MASK_NAME, "opset": MASK_OPSET, "input": "input", "input_shape": [1, 3, MASK_SIZE, MASK_SIZE],
            "input_dtype": "float32", "kind": "detection", "detections": int(outs[1].shape[0]),
            "score_thresh": SCORE_THRESH, "outputs": names, "seed": SEED, "recipe": MASK_RECIPE}
    with open(os.path.join(out_dir, MASK_NAME + ".json"), "w") as f:
        json.dump(meta, f, indent=1)
    return path, int(outs[1].shape[0])


def up_to_date(out_dir, name=NAME):
    exts = (".onnx", ".input.bin", ".boxes.bin", ".scores.bin", ".labels.bin", ".json")
    files = [os.path.join(out_dir, name + ext) for ext in exts]
    if not all(os.path.exists(f) for f in files):
        return False
    with open(files[-1]) as f:
        meta = json.load(f)
    return meta.get("seed") == SEED and meta.get("recipe") == (RECIPE if name == NAME else MASK_RECIPE)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "out"))
    ap.add_argument("--name", default=NAME, choices=[NAME, MASK_NAME])
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    t = time.time()
    if up_to_date(args.out, args.name):
        print(f"models: {args.name}: up to date in {args.out}")
        return
    path, n = (export if args.name == NAME else export_mask)(args.out)
    print(f"models: {args.name}: wrote {path} ({os.path.getsize(path) / 2**20:.1f} MiB, {n} detections) "
          f"in {time.time() - t:.1f} s")


if __name__ == "__main__":
    main()
