#!/usr/bin/python3
"""Write an ONNX model zoo style Tiny YOLOv2 at opset 8, as the zoo's tinyyolov2-8 is laid out.

The zoo's older files were not exported from PyTorch: they come from converters of 2017-2018 and use
what ONNX had then. Tiny YOLOv2 (VOC) starts with an ImageScaler (an experimental op ONNX removed in
opset 10: scale 1/255, bias 0), then eight 3x3 convolutions without bias, each followed by
BatchNormalization (opset 7, with its `spatial` attribute) and LeakyRelu(0.1), with 2x2 max pools
(the sixth of stride 1 and pads [0, 0, 1, 1], keeping 13 x 13), and a 1x1 convolution to 125
channels (5 anchors x (20 classes + 5)). This builds that graph with onnx.helper and seeded random
weights, and computes its output with the same weights in PyTorch (the reference): the BatchNorm
statistics are those of the input itself (one training-mode pass), so activations keep a
realistic scale through the nine layers. For NAME = tiny_yolov2_op8 it writes:

  NAME.onnx          the model, input 'image' 1x3x416x416 (pixel values 0..255), output 'grid' 1x125x13x13;
                     IR version 3, its initializers listed as graph inputs too, as in the zoo's file
  NAME.input.bin     one input, raw little-endian float32 (C order)
  NAME.output.bin    PyTorch's float32 output for it
  NAME.json          input name and shape, "kind": "detection_grid"

Usage: models/export_zoo_old.py [--out DIR]
"""
import argparse
import json
import os
import time

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

import model_files

NAME = "tiny_yolov2_op8"
SHAPE = [1, 3, 416, 416]
OPSET = 8
SEED = 20261129
RECIPE = 1  # bump when the model changes
CHANNELS = [16, 32, 64, 128, 256, 512, 1024, 1024]
OUT_CHANNELS = 125
EPS = 1e-5
SLOPE = 0.1


def make_weights(gen):
    """Random conv weights (He-scaled) and the final conv's bias."""
    ws, cin = [], 3
    for cout in CHANNELS:
        ws.append(torch.randn(cout, cin, 3, 3, generator=gen) * (2.0 / (cin * 9)) ** 0.5)
        cin = cout
    head = torch.randn(OUT_CHANNELS, cin, 1, 1, generator=gen) * (1.0 / cin) ** 0.5
    head_bias = torch.randn(OUT_CHANNELS, generator=gen) * 0.1
    return ws, head, head_bias


def forward(x, ws, head, head_bias, bn):
    """The network in PyTorch. bn: per layer (scale, bias, mean, var), or None to measure them
    (returned as the second value)."""
    measured = []
    y = x * (1.0 / 255.0)
    for i, w in enumerate(ws):
        y = F.conv2d(y, w, padding=1)
        if bn is None:
            mean = y.mean(dim=(0, 2, 3))
            var = y.var(dim=(0, 2, 3), unbiased=False)
            c = w.shape[0]
            gen = torch.Generator().manual_seed(SEED + i)
            scale = 1.0 + 0.1 * torch.randn(c, generator=gen)
            bias = 0.1 * torch.randn(c, generator=gen)
            measured.append((scale, bias, mean, var))
            s, b, m, v = measured[-1]
        else:
            s, b, m, v = bn[i]
        y = F.batch_norm(y, m, v, s, b, training=False, eps=EPS)
        y = F.leaky_relu(y, SLOPE)
        if i < 5:
            y = F.max_pool2d(y, 2, 2)
        elif i == 5:
            y = F.max_pool2d(F.pad(y, (0, 1, 0, 1), value=float("-inf")), 2, 1)
    return F.conv2d(y, head, head_bias), measured


def build_onnx(ws, head, head_bias, bn):
    inits, nodes = [], []

    def const(name, t):
        inits.append(numpy_helper.from_array(t.numpy().astype(np.float32), name))
        return name

    nodes.append(helper.make_node("ImageScaler", ["image"], ["scaled"], name="scale", scale=1.0 / 255.0,
                                  bias=[0.0, 0.0, 0.0]))
    y = "scaled"
    for i, w in enumerate(ws):
        k = i + 1
        s, b, m, v = bn[i]
        nodes.append(helper.make_node("Conv", [y, const(f"convolution{k}_W", w)], [f"conv{k}"], name=f"conv{k}",
                                      kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1], dilations=[1, 1],
                                      group=1))
        nodes.append(helper.make_node("BatchNormalization",
                                      [f"conv{k}", const(f"bn{k}_scale", s), const(f"bn{k}_B", b),
                                       const(f"bn{k}_mean", m), const(f"bn{k}_var", v)],
                                      [f"bn{k}"], name=f"bn{k}", epsilon=EPS, spatial=1))
        nodes.append(helper.make_node("LeakyRelu", [f"bn{k}"], [f"act{k}"], name=f"act{k}", alpha=SLOPE))
        y = f"act{k}"
        if i < 6:
            last = i == 5
            nodes.append(helper.make_node("MaxPool", [y], [f"pool{k}"], name=f"pool{k}", kernel_shape=[2, 2],
                                          strides=[1, 1] if last else [2, 2],
                                          pads=[0, 0, 1, 1] if last else [0, 0, 0, 0]))
            y = f"pool{k}"
    nodes.append(helper.make_node("Conv", [y, const("convolution9_W", head), const("convolution9_B", head_bias)],
                                  ["grid"], name="conv9", kernel_shape=[1, 1], strides=[1, 1], pads=[0, 0, 0, 0]))
    # IR version 3, as the zoo's opset-8 files: every initializer is also a graph input.
    inputs = [helper.make_tensor_value_info("image", TensorProto.FLOAT, SHAPE)]
    inputs += [helper.make_tensor_value_info(t.name, TensorProto.FLOAT, list(t.dims)) for t in inits]
    graph = helper.make_graph(nodes, "tiny_yolov2", inputs,
                              [helper.make_tensor_value_info("grid", TensorProto.FLOAT, [1, OUT_CHANNELS, 13, 13])],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="export_zoo_old")
    model.ir_version = 3
    return model


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(here, "out"))
    args = ap.parse_args()
    files = model_files.paths(args.out, NAME)
    if model_files.up_to_date(files, SEED, RECIPE):
        print(f"models: {NAME}: up to date in {args.out}")
        return
    t = time.time()
    gen = torch.Generator().manual_seed(SEED)
    ws, head, head_bias = make_weights(gen)
    x = torch.rand(*SHAPE, generator=gen) * 255.0
    with torch.no_grad():
        _, bn = forward(x, ws, head, head_bias, None)
        y, _ = forward(x, ws, head, head_bias, bn)
    model = build_onnx(ws, head, head_bias, bn)
    onnx.checker.check_model(model)
    os.makedirs(args.out, exist_ok=True)
    onnx.save(model, files[0])
    x.numpy().astype("<f4").tofile(files[1])
    y.numpy().astype("<f4").tofile(files[2])
    meta = {"model": NAME, "opset": OPSET, "input": "image", "input_shape": SHAPE, "input_dtype": "float32",
            "output_shape": list(y.shape), "kind": "detection_grid", "seed": SEED, "recipe": RECIPE}
    with open(files[3], "w") as f:
        json.dump(meta, f, indent=1)
    print(f"models: {NAME}: wrote {files[0]} ({os.path.getsize(files[0]) / 2**20:.1f} MiB) in {time.time() - t:.1f} s")


if __name__ == "__main__":
    main()
