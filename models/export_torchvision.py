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
       NAME in resnet50, resnet18 (omquant's test model), mobilenet_v2, squeezenet1_1, efficientnet_b0,
       mobilenet_v3_small, googlenet, densenet121, shufflenet_v2_x1_0,
       regnet_y_400mf, convnext_tiny, lraspp_mobilenet_v3_large
       (segmentation: its 'out' map, 1x21x224x224) and transformer_encoder
       (4 layers of torch.nn.TransformerEncoderLayer, d_model 256, 8 heads,
       batch_first, input 1x64x256) and crnn (an OCR text recogniser: conv
       stack, 2-layer bidirectional LSTM, 37 classes per column; input
       1x1x32x128, output 1x32x37) and lstm (2-layer torch.nn.LSTM, 80
       features in, hidden 256, batch_first, 100 steps: 1x100x80 ->
       1x100x256); default: all of these (the tests use them all).
       For the benchmark only (bench/run.sh exports them; large): vit_b_16
       (torchvision ViT-B/16), bert_base (a BERT-base-shaped encoder:
       int64 token ids 1x128 through an Embedding plus learned positions
       and LayerNorm, 12 layers of torch.nn.TransformerEncoderLayer, hidden
       768, 12 heads, FFN 3072, GELU; output 1x128x768) and
       deeplabv3_resnet50 (torchvision, its 'out' map; input 1x3x256x256,
       dilated ResNet-50 backbone), and the torchvision video classifiers
       r3d_18, mc3_18 and r2plus1d_18 (3-D convolutions; input a clip of 8
       frames 1x3x8x112x112, 400 Kinetics classes), and torchaudio's
       hubert_base (a 1 s 16 kHz waveform 1x16000 -> 1x49x768 features; its
       positional conv is a grouped Conv1d, kernel 128, with weight norm).
NAME.json's "input_dtype" is "int64" for token ids (the .input.bin then
holds little-endian int64), else "float32".
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torchvision

try:
    import torchaudio
except ImportError:  # only hubert_base needs it
    torchaudio = None

# name -> (constructor, opset the issue asks for)
MODELS = {
    "resnet50": (torchvision.models.resnet50, 13),
    "resnet18": (torchvision.models.resnet18, 13),
    "mobilenet_v2": (torchvision.models.mobilenet_v2, 11),
    "squeezenet1_1": (torchvision.models.squeezenet1_1, 9),
    "efficientnet_b0": (torchvision.models.efficientnet_b0, 13),
    "mobilenet_v3_small": (torchvision.models.mobilenet_v3_small, 13),
    "densenet121": (torchvision.models.densenet121, 13),
    "googlenet": (lambda: torchvision.models.googlenet(aux_logits=False, init_weights=True), 13),
    "shufflenet_v2_x1_0": (torchvision.models.shufflenet_v2_x1_0, 13),
    "regnet_y_400mf": (torchvision.models.regnet_y_400mf, 13),
    "convnext_tiny": (torchvision.models.convnext_tiny, 13),
    "lraspp_mobilenet_v3_large": (lambda: SegmentationOut(
        torchvision.models.segmentation.lraspp_mobilenet_v3_large(weights_backbone=None)), 13),
    "transformer_encoder": (lambda: transformer_encoder(), 17),
    "crnn": (lambda: CRNN(), 13),
    "lstm": (lambda: LSTMNet(), 13),
    "vit_b_16": (lambda: vit_b_16(), 17),
    "bert_base": (lambda: BertBase(), 17),
    "deeplabv3_resnet50": (lambda: SegmentationOut(
        torchvision.models.segmentation.deeplabv3_resnet50(weights_backbone=None, aux_loss=False)), 13),
    "r3d_18": (torchvision.models.video.r3d_18, 13),
    "mc3_18": (torchvision.models.video.mc3_18, 13),
    "r2plus1d_18": (torchvision.models.video.r2plus1d_18, 13),
    "hubert_base": (lambda: HubertFeatures(), 17),
}
BENCH_ONLY = {"vit_b_16", "bert_base", "deeplabv3_resnet50", "r3d_18", "mc3_18", "r2plus1d_18", "hubert_base"}


def transformer_encoder():
    """4 layers of nn.TransformerEncoderLayer. nn.TransformerEncoder deep-copies one
    layer, so all four would start with the same weights (and the exporter would
    store them once); a trained model's layers differ, so each is re-initialised
    from the seeded generator."""
    model = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(256, 8, batch_first=True), 4,
                                        enable_nested_tensor=False)
    for layer in model.layers:
        for p in layer.parameters():
            if p.dim() > 1:
                torch.nn.init.xavier_uniform_(p)
            else:
                torch.nn.init.normal_(p, std=0.02)
    return model
class CRNN(torch.nn.Module):
    """A CRNN text recogniser (the OCR shape: a conv stack reduces a 32x128 grey text line to
    32 columns of 256 features, a 2-layer bidirectional LSTM reads them, a linear layer gives
    37 character scores per column), batch first at both ends."""

    def __init__(self):
        super().__init__()

        def stage(cin, cout, pool):
            return [torch.nn.Conv2d(cin, cout, 3, 1, 1), torch.nn.BatchNorm2d(cout), torch.nn.ReLU(),
                    torch.nn.MaxPool2d(pool, pool)]
        self.cnn = torch.nn.Sequential(*stage(1, 64, (2, 2)), *stage(64, 128, (2, 2)), *stage(128, 256, (2, 1)),
                                       *stage(256, 256, (4, 1)))
        self.rnn = torch.nn.LSTM(256, 128, num_layers=2, bidirectional=True)
        self.fc = torch.nn.Linear(256, 37)

    def forward(self, x):
        f = self.cnn(x).squeeze(2).permute(2, 0, 1)  # [columns, batch, 256]
        y, _ = self.rnn(f)
        return self.fc(y).permute(1, 0, 2)  # [batch, columns, 37]


def vit_b_16():
    """torchvision's ViT-B/16. Its constructor zeroes the classification head (fine-tuning starts
    there), which makes every output 0: the head gets seeded random weights instead."""
    model = torchvision.models.vit_b_16()
    torch.nn.init.normal_(model.heads.head.weight, std=0.02)
    torch.nn.init.normal_(model.heads.head.bias, std=0.02)
    return model


class LSTMNet(torch.nn.Module):
    """A 2-layer LSTM over 100 steps of 80 features (a speech or sensor model's shape), batch first."""

    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.LSTM(80, 256, num_layers=2, batch_first=True)

    def forward(self, x):
        return self.rnn(x)[0]


class HubertFeatures(torch.nn.Module):
    """torchaudio's hubert_base (random init) reduced to its features: forward() also returns
    the lengths, which are None for an unpadded batch."""

    def __init__(self):
        super().__init__()
        if torchaudio is None:
            sys.exit("export_torchvision: hubert_base needs torchaudio")
        self.net = torchaudio.models.hubert_base()

    def forward(self, waveform):
        return self.net(waveform)[0]


class BertBase(torch.nn.Module):
    """A BERT-base-shaped encoder: token ids through an Embedding plus learned positions and a
    LayerNorm, then 12 post-norm layers of hidden 768, 12 heads, FFN 3072 with GELU. Each layer is
    initialised on its own (nn.TransformerEncoder deep-copies one layer)."""

    def __init__(self, vocab=30522, hidden=768, layers=12, heads=12, ffn=3072, seq=128):
        super().__init__()
        self.tok = torch.nn.Embedding(vocab, hidden)
        self.pos = torch.nn.Parameter(torch.randn(1, seq, hidden) * 0.02)
        self.norm = torch.nn.LayerNorm(hidden)
        layer = torch.nn.TransformerEncoderLayer(hidden, heads, ffn, dropout=0.0, activation="gelu",
                                                 batch_first=True)
        self.enc = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        for lyr in self.enc.layers:
            for p in lyr.parameters():
                if p.dim() > 1:
                    torch.nn.init.xavier_uniform_(p)
                else:
                    torch.nn.init.normal_(p, std=0.02)
        torch.nn.init.normal_(self.tok.weight, std=0.02)

    def forward(self, ids):
        return self.enc(self.norm(self.tok(ids) + self.pos[:, :ids.shape[1]]))


# Models whose input is not a 1x3x224x224 image or whose output is not 1000
# class logits: input shape, and "kind" in NAME.json ("classifier" when absent
# here: model_e2e.py then also checks top-1).
SHAPES = {"transformer_encoder": [1, 64, 256], "crnn": [1, 1, 32, 128], "lstm": [1, 100, 80],
          "bert_base": [1, 128], "deeplabv3_resnet50": [1, 3, 256, 256], "r3d_18": [1, 3, 8, 112, 112],
          "mc3_18": [1, 3, 8, 112, 112], "r2plus1d_18": [1, 3, 8, 112, 112],
          "hubert_base": [1, 16000]}
KINDS = {"lraspp_mobilenet_v3_large": "segmentation", "transformer_encoder": "sequence", "crnn": "sequence",
         "lstm": "sequence", "bert_base": "sequence", "deeplabv3_resnet50": "segmentation",
         "hubert_base": "sequence"}
TOKEN_IDS = {"bert_base": 30522}  # int64 token-id inputs: the vocabulary size
DEFAULT = [m for m in MODELS if m not in BENCH_ONLY]  # the tests use them all
SEED = 20261122
RECIPE = 2  # bump when an export changes (weights, inputs): earlier exports are then redone


class SegmentationOut(torch.nn.Module):
    """A torchvision segmentation model reduced to its 'out' map."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)["out"]

BN_BATCHES = 4
BN_BATCH_SIZE = 8


def reestimate_batchnorm(model, gen, shape):
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:  # LayerNorm models (ConvNeXt, the transformer): nothing to re-estimate
        model.eval()
        return
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None  # cumulative moving average over the batches below
    model.train()
    with torch.no_grad():
        for _ in range(BN_BATCHES):
            model(torch.randn(BN_BATCH_SIZE, *shape[1:], generator=gen))
    model.eval()


def export(name, out_dir):
    ctor, opset = MODELS[name]
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    model = ctor()
    shape = SHAPES.get(name, [1, 3, 224, 224])
    if name in TOKEN_IDS:
        model.eval()
        x = torch.randint(0, TOKEN_IDS[name], shape, generator=gen, dtype=torch.int64)
    else:
        reestimate_batchnorm(model, gen, shape)
        x = torch.randn(*shape, generator=gen)
    with torch.no_grad():
        y = model(x)
    path = os.path.join(out_dir, name + ".onnx")
    torch.onnx.export(model, x, path, opset_version=opset, input_names=["input"],
                      output_names=["output"], dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
                      do_constant_folding=True)
    x.numpy().astype("<i8" if name in TOKEN_IDS else "<f4").tofile(os.path.join(out_dir, name + ".input.bin"))
    y.numpy().astype("<f4").tofile(os.path.join(out_dir, name + ".output.bin"))
    meta = {"model": name, "opset": opset, "input": "input", "input_shape": shape,
            "input_dtype": "int64" if name in TOKEN_IDS else "float32",
            "output_shape": list(y.shape), "kind": KINDS.get(name, "classifier"), "seed": SEED,
            "recipe": RECIPE}
    if meta["kind"] == "classifier":
        top5 = torch.topk(y[0], 5).indices.tolist()
        meta.update(top1=top5[0], top5=top5)
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
    return meta.get("seed") == SEED and meta.get("opset") == MODELS[name][1] and meta.get("recipe") == RECIPE


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
