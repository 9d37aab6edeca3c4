#!/usr/bin/python3
"""Operators on small torch exports, against PyTorch.

ONNX's node tests run these ops at toy sizes; here torch.onnx exports of
realistic shapes check what they do not:
  - grouped convolution on the cube (FRACTAL_Z_G, common/conv_group.h), with
    bias, residual Add and Relu fused into the CONV2D task, for group shapes
    that exercise every case of the layout: group width 8 (runs of one
    block, half-empty fractals), 4 (ResNeXt), 24 (blocks straddling groups),
    64 (runs of several blocks), channel counts not multiple of 16, strided
    and dilated windows;
  - RNN, GRU and LSTM (unrolled at import, frontend/onnx_decomp_rnn.c):
    bidirectional and stacked layers (the reverse direction, Y's direction
    axis, the second layer reading both directions), batch-first models
    (torch transposes around the op), GRU as torch exports it
    (linear_before_reset = 1), a Relu RNN, and an LSTM given initial states;
  - GridSample (frontend/onnx_decomp_grid.c): every mode and padding mode,
    both align_corners, positions well outside the image, odd sizes;
  - RoiAlign as torchvision exports it, aligned or not, with boxes past the
    feature map's edges;
  - MaxPool's Indices output (padded, strided windows);
  - import that needs inference first (frontend/onnx_load.c, step 4), on
    graphs exported with a symbolic length that --input_shape fixes:
    GroupNorm as torch exports it before opset 18 (Reshape ->
    InstanceNormalization -> Reshape -> Mul -> Add) after a 1-D Conv, the
    front of HuBERT's feature extractor, whose values are typed only by
    inference; and attention with relative positions, whose bias table is
    sliced to the 2L - 1 offsets a sequence of L = Shape(x)[1] needs (Slice
    ends from Shape -> Gather -> Mul -> Sub) and gathered at Range-made
    offsets;
  - 3-D convolution on the cube (CONV3D, NDC1HWC0 / FRACTAL_Z_3D) with
    BatchNorm folded and bias, residual and Relu fused: a video stem with
    depth pads, strided and dilated depth windows, channel counts not
    multiple of 16, an R(2+1)D block ((1,3,3) then (3,1,1) kernels), and
    MaxPool3d / AvgPool3d (POOL on NDC1HWC0, ceil mode, count_include_pad)
    and ConvTranspose3d (a CONV3D over a zero-inserted input);
  - torchaudio's Emformer (4 layers, segment 4, right context 1, fixed
    lengths), whose attention concatenates an empty memory bank (torch.cat
    skips empty 1-D tensors; the export keeps them) and slices with ends
    computed from the shape of that concatenation.
Each is compiled by atc and run by omrun in both precisions:
must_keep_origin_dtype max abs error <= 1e-4 x max|ref|, force_fp16 cosine
>= 0.999. Exit 0 when all pass.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torchaudio
import torchvision


class GroupConv(torch.nn.Module):
    def __init__(self, cin, cout, groups, k, stride, dil):
        super().__init__()
        self.opset = 13
        self.conv = torch.nn.Conv2d(cin, cout, k, stride, padding=dil * (k // 2), dilation=dil, groups=groups)
        self.skip = torch.nn.Conv2d(cin, cout, 1, stride)

    def forward(self, x):
        return torch.relu(self.conv(x) + self.skip(x))


class Seq(torch.nn.Module):
    """A recurrent layer followed by a linear head over every step's output."""

    def __init__(self, rnn, hidden, states=None):
        super().__init__()
        self.rnn = rnn
        self.head = torch.nn.Linear(hidden * (2 if rnn.bidirectional else 1), 5)
        # fixed, non-zero initial states [layers * directions, batch, hidden]: exported as constants
        self.register_buffer("h0", torch.randn(*states) * 0.5 if states else None)

    def forward(self, x):
        if self.h0 is not None:
            y, _ = self.rnn(x, (self.h0, -self.h0))
        else:
            y, _ = self.rnn(x)
        return self.head(y)


class Sample(torch.nn.Module):
    """grid_sample of the input at a fixed grid (a constant of the export) reaching 30% past the borders."""

    def __init__(self, out_hw, mode, padding, align):
        super().__init__()
        self.mode, self.padding, self.align = mode, padding, align
        self.register_buffer("grid", (torch.rand(2, *out_hw, 2) * 2 - 1) * 1.3)

    def forward(self, x):
        return torch.nn.functional.grid_sample(x, self.grid, mode=self.mode, padding_mode=self.padding,
                                               align_corners=self.align)


class Roi(torch.nn.Module):
    """torchvision's roi_align over fixed boxes (some past the feature map's edge) of a 2-image batch.
    This torchvision exports RoiAlign without coordinate_transformation_mode, whose default became
    half_pixel in opset 16: aligned=False (output_half_pixel) is only what it means at opset 11."""

    def __init__(self, aligned):
        super().__init__()
        self.aligned = aligned
        self.opset = 16 if aligned else 11
        boxes = torch.tensor([[0, 4.0, 6.0, 60.0, 50.0], [1, -8.0, 10.0, 30.0, 90.0], [0, 50.0, 50.0, 52.0, 53.0],
                              [1, 0.0, 0.0, 100.0, 80.0], [1, 33.3, 12.7, 47.9, 77.1]])
        self.register_buffer("boxes", boxes)

    def forward(self, x):
        return torchvision.ops.roi_align(x, self.boxes, output_size=(7, 5), spatial_scale=0.25, sampling_ratio=2,
                                         aligned=self.aligned)


class PoolIndices(torch.nn.Module):
    """max_pool2d's indices (torch's per-plane positions, which its export computes from MaxPool's Indices
    output), as floats: exact integers, so fp32 must match exactly."""

    def forward(self, x):
        _, i = torch.nn.functional.max_pool2d(x, 3, 2, padding=1, return_indices=True)
        return i.to(torch.float32)


class HubertFront(torch.nn.Module):
    """HuBERT's feature extractor's first layers: a 1-D Conv over the waveform, GroupNorm (one group per
    channel in HuBERT; fewer here too), GELU, a second 1-D Conv. The waveform length is symbolic."""

    def __init__(self, groups):
        super().__init__()
        self.opset, self.dynamic = 13, {1: "T"}
        self.conv = torch.nn.Conv1d(1, 32, 10, stride=5, bias=False)
        self.norm = torch.nn.GroupNorm(groups, 32)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)
        self.conv2 = torch.nn.Conv1d(32, 32, 3, 2, bias=False)

    def forward(self, w):
        x = torch.nn.functional.gelu(self.norm(self.conv(w.unsqueeze(1))))
        return torch.nn.functional.gelu(self.conv2(x))


class RelPosAttention(torch.nn.Module):
    """Self-attention with learned relative-position biases over a 1-D Conv front end: the table of
    2 * maxlen - 1 offsets is sliced to the 2L - 1 a sequence of L needs, L = x.shape[1] of the Conv's
    output, and gathered at j - i + L - 1 for query i and key j. The waveform length is symbolic."""

    def __init__(self, d=32, maxlen=128):
        super().__init__()
        self.opset, self.dynamic = 13, {1: "T"}
        self.front = torch.nn.Conv1d(1, d, 10, stride=5)
        self.q, self.k, self.v = torch.nn.Linear(d, d), torch.nn.Linear(d, d), torch.nn.Linear(d, d)
        self.rel = torch.nn.Parameter(torch.randn(2 * maxlen - 1, d) * 0.1)
        self.d = d

    def forward(self, w):
        x = self.front(w.unsqueeze(1)).transpose(1, 2)
        n = x.shape[1]
        q, k, v = self.q(x), self.k(x), self.v(x)
        rel = self.rel[:2 * n - 1]
        pos = torch.arange(n)
        r = rel[pos[None, :] - pos[:, None] + (n - 1)]
        bias = (q.unsqueeze(2) * r.unsqueeze(0)).sum(-1)
        return torch.softmax((q @ k.transpose(1, 2) + bias) / self.d ** 0.5, -1) @ v


class MHA(torch.nn.Module):
    """torch.nn.MultiheadAttention over x as query, key and value, with one kind of mask (constants)."""

    def __init__(self, e, heads, length, mask):
        super().__init__()
        self.tasks = {"ATTENTION": 1}  # each build must fuse the chain into one task
        self.mha, self.mask = torch.nn.MultiheadAttention(e, heads, batch_first=True), mask
        self.register_buffer("causal", torch.triu(torch.full((length, length), float("-inf")), 1))
        self.register_buffer("bool_causal", torch.triu(torch.ones(length, length, dtype=torch.bool), 1))
        pad = torch.zeros(2, length, dtype=torch.bool)
        pad[1, length - 5:] = True  # the second sequence's last 5 keys are padding
        self.register_buffer("pad", pad)

    def forward(self, x):
        masks = {"none": {}, "causal": {"attn_mask": self.causal}, "bool causal": {"attn_mask": self.bool_causal},
                 "key padding": {"key_padding_mask": self.pad}}
        return self.mha(x, x, x, need_weights=False, **masks[self.mask])[0]


class Video3d(torch.nn.Module):
    """Conv3d + BatchNorm3d + Relu, optionally with a residual, a pool or a transposed convolution after."""

    def __init__(self, cin, cout, k, stride, pad, dil=1, residual=False, tail=None):
        super().__init__()
        self.conv = torch.nn.Conv3d(cin, cout, k, stride, pad, dil, bias=False)
        self.bn = torch.nn.BatchNorm3d(cout)
        with torch.no_grad():  # non-trivial statistics, so the fold matters
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.3, 0.3)
        self.skip = torch.nn.Conv3d(cin, cout, 1, stride) if residual else None
        self.tail = tail

    def forward(self, x):
        y = self.bn(self.conv(x))
        if self.skip is not None:
            y = y + self.skip(x)
        y = torch.relu(y)
        return self.tail(y) if self.tail is not None else y


class Split128(torch.nn.Module):
    """A Split of 128 outputs, each scaled, concatenated back: the shape of WaveRNN's upsampler, which
    splits its 128 channels one by one."""

    def forward(self, x):
        return torch.cat([c * (i + 1) for i, c in enumerate(torch.split(x, 1, dim=1))], 2)


class R2Plus1d(torch.nn.Module):
    """torchvision's Conv2Plus1D twice with the identity shortcut, then global pooling and a linear head."""

    def __init__(self, c, mid):
        super().__init__()

        def conv(ci, co):
            return torch.nn.Sequential(torch.nn.Conv3d(ci, mid, (1, 3, 3), 1, (0, 1, 1), bias=False),
                                       torch.nn.BatchNorm3d(mid), torch.nn.ReLU(),
                                       torch.nn.Conv3d(mid, co, (3, 1, 1), 1, (1, 0, 0), bias=False),
                                       torch.nn.BatchNorm3d(co))

        self.a, self.b = conv(c, c), conv(c, c)
        self.head = torch.nn.Linear(c, 10)

    def forward(self, x):
        y = torch.relu(self.b(torch.relu(self.a(x))) + x)
        return self.head(torch.nn.functional.adaptive_avg_pool3d(y, 1).flatten(1))


class Emformer(torch.nn.Module):
    """torchaudio's Emformer on 20 frames plus 1 of right context, its lengths a constant."""

    def __init__(self):
        super().__init__()
        self.opset = 17
        self.m = torchaudio.models.Emformer(input_dim=80, num_heads=4, ffn_dim=256, num_layers=4, segment_length=4,
                                            right_context_length=1)
        self.register_buffer("lengths", torch.tensor([20]))

    def forward(self, x):
        return self.m(x, self.lengths)[0]


torch.manual_seed(11)  # the modules' weights below, then (in main) the inputs
CASES = [  # (name, module, input shape)
    (f"conv cin {ci} cout {co} group {g} k {k} stride {st} dilation {d}", GroupConv(ci, co, g, k, st, d), (1, ci, hw, hw))
    for ci, co, g, k, st, d, hw in ((48, 48, 6, 3, 1, 1, 14), (104, 104, 13, 3, 2, 1, 15), (128, 128, 32, 3, 1, 1, 9),
                                    (72, 48, 3, 3, 1, 2, 12), (256, 256, 4, 1, 1, 1, 7), (40, 60, 5, 5, 2, 1, 11))
] + [
    ("gru 2-layer bidirectional", Seq(torch.nn.GRU(16, 24, num_layers=2, bidirectional=True), 24), (7, 2, 16)),
    ("rnn relu bidirectional batch-first",
     Seq(torch.nn.RNN(12, 20, nonlinearity="relu", bidirectional=True, batch_first=True), 20), (3, 5, 12)),
    ("lstm bidirectional batch-first, initial states",
     Seq(torch.nn.LSTM(10, 16, bidirectional=True, batch_first=True), 16, states=(2, 2, 16)), (2, 6, 10)),
    ("lstm 3-layer", Seq(torch.nn.LSTM(8, 32, num_layers=3), 32), (9, 1, 8)),
] + [(f"grid_sample {m} {p} align_corners={a}", Sample((11, 13), m, p, a), (2, 3, 17, 23))
     for m in ("bilinear", "nearest", "bicubic") for p in ("zeros", "border", "reflection") for a in (False, True)
     # Not bicubic with border padding: there ONNX's definition (its reference clamps an outside position,
     # then takes the 4x4 window) and PyTorch (which clamps each tap of the unclamped window) differ, and
     # the compiler follows ONNX.
     if (m, p) != ("bicubic", "border")] + [
    (f"roi_align aligned={a}", Roi(a), (2, 8, 20, 24)) for a in (False, True)] + [
    ("max_pool2d indices", PoolIndices(), (2, 5, 13, 16))] + [
    (f"hubert front, groupnorm {g} groups", HubertFront(g), (1, 400)) for g in (32, 8)] + [
    ("relative-position attention", RelPosAttention(), (1, 400))] + [
    (f"multihead attention {e}/{h} heads, length {n}, mask {m}", MHA(e, h, n, m), (2, n, e))
    for e, h, n, m in ((64, 4, 37, "none"), (64, 4, 37, "causal"), (96, 3, 70, "bool causal"),
                       (40, 5, 21, "key padding"))] + [
    ("conv3d video stem (3,7,7) stride (1,2,2), BN, relu", Video3d(3, 24, (3, 7, 7), (1, 2, 2), (1, 3, 3)),
     (1, 3, 6, 30, 30)),
    ("conv3d 3x3x3 residual, BN, relu", Video3d(24, 24, 3, 1, 1, residual=True), (2, 24, 5, 9, 11)),
    ("conv3d strided, dilated depth", Video3d(20, 36, 3, (2, 1, 2), (2, 1, 1), (2, 1, 1), residual=True),
     (1, 20, 9, 8, 10)),
    ("conv3d + maxpool3d", Video3d(8, 40, (1, 3, 3), 1, (0, 1, 1), tail=torch.nn.MaxPool3d((2, 3, 3), 2, 1)),
     (1, 8, 7, 13, 12)),
    ("conv3d + avgpool3d ceil, no pad count",
     Video3d(16, 16, (3, 1, 1), 1, (1, 0, 0),
             tail=torch.nn.AvgPool3d(3, (2, 2, 1), 1, ceil_mode=True, count_include_pad=False)), (1, 16, 6, 7, 9)),
    ("conv3d + conv_transpose3d", Video3d(12, 20, 3, 1, 1, tail=torch.nn.ConvTranspose3d(20, 8, (3, 4, 4), (1, 2, 2),
                                                                                       (1, 1, 1))), (1, 12, 4, 6, 5)),
    ("r(2+1)d block + head, channels not multiple of 16", R2Plus1d(24, 45), (1, 24, 4, 14, 14))] + [
    ("split into 128 outputs and concat back (WaveRNN's resnet_stretch)", Split128(), (1, 128, 10))] + [
    ("emformer 4 layers (empty memory bank, slice ends from shapes)", Emformer(), (1, 21, 80))]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--only", default="", help="run only the cases whose name contains this")
    args = ap.parse_args()
    torch.manual_seed(11)
    fails = 0
    with tempfile.TemporaryDirectory() as work:
        cases = [c for c in CASES if args.only in c[0]]
        for i, (name, net, shape) in enumerate(cases):
            net.eval()
            x = torch.randn(*shape)
            with torch.no_grad():
                ref = net(x).numpy().astype(np.float64).ravel()
            onnx = os.path.join(work, f"r{i}.onnx")
            dynamic = getattr(net, "dynamic", None)  # symbolic dims of x, fixed by --input_shape
            torch.onnx.export(net, x, onnx, opset_version=getattr(net, "opset", 16), input_names=["x"], output_names=["y"],
                              dynamic_axes={"x": dynamic} if dynamic else None)
            fix = ["--input_shape=x:" + ",".join(map(str, shape))] if dynamic else []
            x.numpy().astype("<f4").tofile(os.path.join(work, "x.bin"))
            for prec in ("must_keep_origin_dtype", "force_fp16"):
                om = os.path.join(work, f"r{i}_{prec}")
                out = os.path.join(work, f"out{i}_{prec}")
                p = subprocess.run([os.path.join(args.bin_dir, "atc"), f"--model={onnx}", "--framework=5",
                                    f"--output={om}", "--soc_version=Ascend310", f"--precision_mode={prec}"] + fix,
                                   capture_output=True, text=True)
                if p.returncode == 0 and getattr(net, "tasks", None):
                    p = subprocess.run([os.path.join(args.bin_dir, "atc"), "--mode=1", f"--om={om}.om",
                                        f"--json={om}.json"], capture_output=True, text=True)
                    with open(f"{om}.json") as f:
                        kinds = [t["kind"] for t in json.load(f)["tasks"]]
                    have = {k: kinds.count(k) for k in net.tasks}
                    if p.returncode == 0 and have != net.tasks:
                        p = subprocess.CompletedProcess(p.args, 1, "", f"tasks {have}, expected {net.tasks}")
                if p.returncode == 0:
                    p = subprocess.run([os.path.join(args.bin_dir, "omrun"), "--model", om + ".om", "--input",
                                        os.path.join(work, "x.bin"), "--output", out], capture_output=True, text=True)
                label = f"{name} {prec}"
                if p.returncode:
                    print(f"FAIL {label}: {p.stderr.strip() or p.stdout.strip()}")
                    fails += 1
                    continue
                got = np.fromfile(os.path.join(out, "output_0.bin"), "<f4").astype(np.float64)
                if got.shape != ref.shape:
                    print(f"FAIL {label}: {got.size} values, PyTorch has {ref.size}")
                    fails += 1
                    continue
                rel = np.max(np.abs(got - ref)) / np.max(np.abs(ref))
                cos = float(ref @ got / (np.linalg.norm(ref) * np.linalg.norm(got) + 1e-30))
                ok = rel <= 1e-4 if prec == "must_keep_origin_dtype" else cos >= 0.999
                fails += not ok
                print(f"{'ok  ' if ok else 'FAIL'} {label}: max abs error {rel:.3g} x max|ref|, cosine {cos:.6f}")
    print(f"{len(cases) * 2 - fails} passed, {fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
