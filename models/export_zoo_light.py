#!/usr/bin/python3
"""Export a 'light' VGG-19 as the ONNX model zoo builds its light models, with ONNX Runtime's output.

The zoo's light VGG-19, AlexNet and ZFNet-512 carry no weights: every large initializer is
replaced by a ConstantOfShape node whose value is one number (10^8 elements for VGG-19's first
fully connected layer), so the file is a few KiB and a compiler must make the weights itself.
This builds the same graph from torchvision's vgg19 (random init, fixed seed): each initializer
of at least LARGE elements becomes ConstantOfShape(shape) with value 1 / fan_in (the product of
its dimensions after the first), which keeps activations of realistic scale through the 19
layers of ReLU; the small ones (biases) stay initializers. For NAME = vgg19_light it writes:

  NAME.onnx          the light model, input 1x3x224x224
  NAME.input.bin     one input, raw little-endian float32 (C order)
  NAME.output.bin    ONNX Runtime's float32 output for it (bench/ort_bench.js --output), 1x1000
  NAME.json          input name and shape, "kind": "zoo_light", "reference": "onnxruntime"

ONNX Runtime (node and bench/node_modules) is required: PyTorch cannot run the light graph.
Usage: models/export_zoo_light.py [--out DIR] [--ort-bench PATH]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import torch
import torchvision
from onnx import helper, numpy_helper

import model_files

NAME = "vgg19_light"
SHAPE = [1, 3, 224, 224]
OPSET = 13
LARGE = 1024  # initializers with at least this many elements become ConstantOfShape
SEED = 20261128
RECIPE = 1  # bump when the export changes


def lighten(model):
    """Replace each large initializer by a ConstantOfShape node in front of the graph's nodes."""
    graph = model.graph
    kept, made = [], []
    for init in graph.initializer:
        dims = list(init.dims)
        count = int(np.prod(dims)) if dims else 1
        if count < LARGE or init.data_type != onnx.TensorProto.FLOAT:
            kept.append(init)
            continue
        fan_in = int(np.prod(dims[1:])) if len(dims) > 1 else 1
        shape = numpy_helper.from_array(np.array(dims, np.int64), init.name + "_shape")
        value = helper.make_tensor("value", onnx.TensorProto.FLOAT, [1], [1.0 / fan_in])
        kept.append(shape)
        made.append(helper.make_node("ConstantOfShape", [shape.name], [init.name], name=init.name + "_light",
                                     value=value))
    del graph.initializer[:]
    graph.initializer.extend(kept)
    nodes = made + list(graph.node)
    del graph.node[:]
    graph.node.extend(nodes)
    return len(made)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(here, "out"))
    ap.add_argument("--ort-bench", default=os.path.join(here, "..", "bench", "ort_bench.js"),
                    help="bench/ort_bench.js with its node_modules (the reference output)")
    args = ap.parse_args()
    files = model_files.paths(args.out, NAME)
    if model_files.up_to_date(files, SEED, RECIPE):
        print(f"models: {NAME}: up to date in {args.out}")
        return
    if not os.path.isdir(os.path.join(os.path.dirname(args.ort_bench), "node_modules", "onnxruntime-node")):
        sys.exit(f"export_zoo_light: {args.ort_bench} has no node_modules/onnxruntime-node (the reference)")
    t = time.time()
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    net = torchvision.models.vgg19().eval()
    x = torch.randn(*SHAPE, generator=gen)
    with tempfile.TemporaryDirectory() as tmp:
        full = os.path.join(tmp, "full.onnx")
        torch.onnx.export(net, x, full, opset_version=OPSET, input_names=["input"], output_names=["output"],
                          do_constant_folding=True)
        model = onnx.load(full)
    made = lighten(model)
    os.makedirs(args.out, exist_ok=True)
    onnx.save(model, files[0])
    x.numpy().astype("<f4").tofile(files[1])
    subprocess.run(["node", args.ort_bench, "--model", files[0], "--input", files[1], "--shape",
                    ",".join(map(str, SHAPE)), "--threads", "1", "--min", "1", "--max", "1", "--budget", "0",
                    "--output", files[2]], check=True, stdout=subprocess.DEVNULL)
    y = np.fromfile(files[2], "<f4")
    meta = {"model": NAME, "opset": OPSET, "input": "input", "input_shape": SHAPE, "input_dtype": "float32",
            "output_shape": [1, int(y.size)], "kind": "zoo_light", "reference": "onnxruntime",
            "constant_of_shape_nodes": made, "seed": SEED, "recipe": RECIPE}
    with open(files[3], "w") as f:
        json.dump(meta, f, indent=1)
    print(f"models: {NAME}: wrote {files[0]} ({os.path.getsize(files[0]) / 2**10:.1f} KiB, {made} ConstantOfShape "
          f"weights) in {time.time() - t:.1f} s")


if __name__ == "__main__":
    main()
