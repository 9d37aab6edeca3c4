#!/usr/bin/python3
"""model_sweep.py - export models nobody has tried yet, compile and run them, compare with PyTorch.

For each model in the list (torchvision 0.14 and torchaudio 0.13, random initialisation with a fixed
seed, eval mode, no pretrained weights, no network), in this order:

  1. export to ONNX (opset 17, static input shapes) in a child process with a time limit (a model
     whose export takes longer is reported as skipped); the export, its inputs and PyTorch's outputs
     are cached in --work (NAME.onnx, NAME.in<i>.bin, NAME.out<i>.bin, NAME.json); BatchNorm running
     statistics of single-input image and video models are re-estimated on a few random batches first (as
     models/export_torchvision.py does) so that deep nets keep activations of a sane size;
  2. for each precision mode (force_fp16, must_keep_origin_dtype): build/atc, then build/omrun on
     the exported inputs, then the comparison of every output with PyTorch's: cosine, max abs error
     / max|ref| and, for classifiers, top-1.

One line per model and mode: "export failed" / "export skipped" / "atc error: <its line>" /
"run error: <its line>" / the accuracy figures with PASS or FAIL against the product's bars
(force_fp16: cosine >= 0.999 and the same top-1; must_keep_origin_dtype: max abs error <= 1e-4 x
max|ref|). A detector's force_fp16 run is matched instead, as tests/detection_e2e.py does: each PyTorch
detection to an om detection whose box is within 1 pixel, 95% of them found with scores within 0.05
(fp16 rounding reorders near ties). With --markdown the lines form docs/MODEL_SWEEP.md's table.

With --fp16-reference, instead of compiling: PyTorch's own output with every weight, every input and
every leaf module's output rounded to fp16, against its float32 output (cosine, top-1). A force_fp16 miss
that PyTorch shows as much by itself is the random-initialised network's, not the compiler's.

With --speed, every model whose force_fp16 om runs (its accuracy row has figures, whether or not they
meet the bar: a random network's own fp16 loss says nothing of its speed) is then timed against ONNX Runtime
(bench/ort_bench.js on the same ONNX file and inputs, CPU provider): --rounds rounds, each
alternating the two runtimes, each runtime's figure the CPU time (perf stat's task-clock) of the
process pinned to cores 0..T-1 (taskset; --cpus another list) running the model n times, minus that of the same process
running it once (loading, JIT compile, node's and the session's start-up; the least of one such run
per round, since a disturbance only adds time), over n - 1. n is chosen once per model, from a run of
3 of each, so that the slower runtime's n runs take about --budget seconds of CPU time (5 to 1000
runs): the start-up's own variation (a large ONNX file takes ORT seconds to load and optimise) must be
small beside that.
CPU time, not wall time: on a loaded machine another process taking the core lengthens the wall time
but not the CPU time. The line gives both runtimes' medians over the rounds in ms per run, the ratio
omrun / ORT of the medians with the lowest and highest ratio of a single round, and each runtime's
spread (highest round / lowest round - 1).

Usage: scripts/model_sweep.py [--work DIR] [--bin DIR] [--modes m1,m2] [--export-limit S] [--markdown]
                              [--fp16-reference] [--speed [--threads T] [--cpus LIST] [--rounds R] [--budget S]] [NAME ...]
       (default: every model; --work /tmp/sweep; --bin build; --export-limit 180; --threads 1;
        --rounds 3; --budget 4)
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import checks  # noqa: E402

SEED = 20261128
OPSET = 17
EXPORT_LIMIT_S = 180
RECIPE = 2  # bump when an export changes


def _tv(name, **kw):
    """torchvision's constructor NAME, from torchvision.models or its segmentation, video and optical
    flow families."""
    def ctor():
        import torchvision.models as tm
        for family in (tm, tm.segmentation, tm.video, tm.optical_flow, tm.detection):
            if hasattr(family, name):
                return getattr(family, name)(weights=None, **kw)
        raise AttributeError(f"torchvision 0.14 has no model {name}")

    return ctor


def wrapped(make, pick, *extra):
    """A constructor of make()'s module whose output is pick(its output) (one tensor out of a tuple,
    list or dict), called with the model's inputs followed by each extra() (fixed lengths)."""
    def ctor():
        import torch

        class Wrapped(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.m = make()

            def forward(self, *xs):
                return pick(self.m(*xs, *[f() for f in extra]))

        return Wrapped()

    return ctor


def _ta(name, **kw):
    """torchaudio's model NAME, imported when built (torchaudio is needed by its models only)."""
    def ctor():
        import torchaudio
        return getattr(torchaudio.models, name)(**kw)

    return ctor


def _nn(name, **kw):
    """torch.nn's module NAME."""
    def ctor():
        import torch
        return getattr(torch.nn, name)(**kw)

    return ctor


def _decoder(d_model, nhead, ffn, layers):
    """torch.nn.TransformerDecoder of `layers` layers (batch first) called as (tgt, memory, causal mask)."""
    def ctor():
        import torch
        layer = torch.nn.TransformerDecoderLayer(d_model, nhead, ffn, batch_first=True)
        return torch.nn.TransformerDecoder(layer, layers)

    return ctor


def _causal(n):
    import torch
    return lambda: torch.nn.Transformer.generate_square_subsequent_mask(n)


def _tacotron2_encoder():
    import torchaudio
    return torchaudio.models.Tacotron2().encoder


def _net(name, **kw):
    """scripts/sweep_nets.py's network NAME (built from torch.nn)."""
    def ctor():
        import sweep_nets
        return getattr(sweep_nets, name)(**kw)

    return ctor


def _detections(net, logits, scale=8.0):
    """A torchvision detector on a batch of one image: its boxes and scores (labels are int64 and follow the
    boxes). A random head scores every box about alike (ties everywhere, nothing above a threshold): the
    classification layer `logits` (a path of attributes) is scaled so that the scores spread, and the
    threshold of each detector's entry keeps the clear winners only."""
    def make():
        m = net()
        layer = m
        for a in logits.split("."):
            layer = getattr(layer, a)
        with __import__("torch").no_grad():
            layer.weight.mul_(scale)
        return m

    return wrapped(make, lambda ds: (ds[0]["boxes"], ds[0]["scores"]))


def _lengths(n):
    import torch
    return lambda: torch.tensor([n], dtype=torch.int64)


IMG = [[1, 3, 224, 224]]
GPT2_KV = [[1, 8], [2, 1, 4, 16, 32], [2, 1, 4, 16, 32]]  # ids, past keys, past values: 2 layers, 4 heads, 16 past
GPT2_DYN = {0: {0: "batch", 1: "seq"}, 1: {1: "batch", 3: "past"}, 2: {1: "batch", 3: "past"}}
# name: (constructor, input shapes, kind[, options]). kind "classifier" adds the top-1 check; "detection" (a
# torchvision detector, compared as "dense", but matched in force_fp16) re-estimates the BatchNorm statistics of its backbone only. Options:
# "dtypes" (one per input: float32, int64 (uniform in [0, "high"), default 1000) or bool (about 85% true,
# the first of the last axis always)), "opset" (default OPSET), "dynamic" ({input: {axis: name}}, exported as
# dynamic axes; atc gets the static shape as --input_shape).
MODELS = {
    "alexnet": (_tv("alexnet"), IMG, "classifier"),
    "vgg11_bn": (_tv("vgg11_bn"), IMG, "classifier"),
    "inception_v3": (_tv("inception_v3", aux_logits=False, init_weights=True), [[1, 3, 299, 299]], "classifier"),
    "mnasnet1_0": (_tv("mnasnet1_0"), IMG, "classifier"),
    "resnext50_32x4d": (_tv("resnext50_32x4d"), IMG, "classifier"),
    "regnet_x_400mf": (_tv("regnet_x_400mf"), IMG, "classifier"),
    "efficientnet_v2_s": (_tv("efficientnet_v2_s"), IMG, "classifier"),
    "vit_b_32": (_tv("vit_b_32"), IMG, "classifier"),
    "swin_t": (_tv("swin_t"), IMG, "classifier"),
    "maxvit_t": (_tv("maxvit_t"), IMG, "classifier"),
    "fcn_resnet50": (wrapped(_tv("fcn_resnet50", weights_backbone=None), lambda y: y["out"]), IMG, "dense"),
    "mobilenet_v3_large": (_tv("mobilenet_v3_large"), IMG, "classifier"),
    "squeezenet1_0": (_tv("squeezenet1_0"), IMG, "classifier"),
    "s3d": (_tv("s3d"), [[1, 3, 16, 224, 224]], "classifier"),
    "raft_small": (wrapped(_tv("raft_small"), lambda y: y[-1]), [[1, 3, 128, 128], [1, 3, 128, 128]], "dense"),
    "wav2vec2_base": (wrapped(_ta("wav2vec2_base"), lambda y: y[0]), [[1, 16000]], "dense"),
    "conformer": (wrapped(_ta("Conformer", input_dim=80, num_heads=4, ffn_dim=256, num_layers=4,
                                    depthwise_conv_kernel_size=31), lambda y: y[0], _lengths(100)),
                  [[1, 100, 80]], "dense"),
    "conv_tasnet": (_ta("conv_tasnet_base"), [[1, 1, 8000]], "dense"),
    "hdemucs_low": (_ta("hdemucs_low", sources=["bass", "drums", "other", "vocals"]), [[1, 2, 8192]], "dense"),
    "wavernn": (_ta("WaveRNN", upsample_scales=[5, 5, 11], n_classes=256, hop_length=275, n_freq=128),
                [[1, 1, 275 * 6], [1, 1, 128, 10]], "dense"),
    "deepspeech": (_ta("DeepSpeech", n_feature=80), [[1, 1, 100, 80]], "dense"),
    "emformer": (wrapped(_ta("Emformer", input_dim=80, num_heads=4, ffn_dim=256, num_layers=4,
                                   segment_length=4, right_context_length=1), lambda y: y[0], _lengths(20)),
                 [[1, 21, 80]], "dense"),
    "regnet_y_800mf": (_tv("regnet_y_800mf"), IMG, "classifier"),
    "wide_resnet50_2": (_tv("wide_resnet50_2"), IMG, "classifier"),
    "efficientnet_b3": (_tv("efficientnet_b3"), [[1, 3, 300, 300]], "classifier"),
    "convnext_small": (_tv("convnext_small"), IMG, "classifier"),
    "swin_v2_t": (_tv("swin_v2_t"), IMG, "classifier"),
    "googlenet": (_tv("googlenet", aux_logits=False, init_weights=True), IMG, "classifier"),
    "densenet121": (_tv("densenet121"), IMG, "classifier"),
    "shufflenet_v2_x0_5": (_tv("shufflenet_v2_x0_5"), IMG, "classifier"),
    "mobilenet_v3_small_160": (_tv("mobilenet_v3_small"), [[1, 3, 160, 160]], "classifier"),
    "resnet18_b3": (_tv("resnet18"), [[3, 3, 224, 224]], "classifier"),
    "deeplabv3_mobilenet_v3_large": (wrapped(_tv("deeplabv3_mobilenet_v3_large", weights_backbone=None),
                                             lambda y: y["out"]), IMG, "dense"),
    "lraspp_mobilenet_v3_large": (wrapped(_tv("lraspp_mobilenet_v3_large", weights_backbone=None),
                                          lambda y: y["out"]), IMG, "dense"),
    "r3d_18": (_tv("r3d_18"), [[1, 3, 8, 112, 112]], "classifier"),
    "r2plus1d_18": (_tv("r2plus1d_18"), [[1, 3, 8, 112, 112]], "classifier"),
    "mc3_18": (_tv("mc3_18"), [[1, 3, 8, 112, 112]], "classifier"),
    "hubert_base": (wrapped(_ta("hubert_base"), lambda y: y[0]), [[1, 16000]], "dense"),
    "tacotron2_encoder": (wrapped(_tacotron2_encoder, lambda y: y, _lengths(50)), [[1, 512, 50]], "dense"),
    "wav2letter": (_ta("Wav2Letter", num_classes=40), [[1, 1, 16000]], "dense"),
    "gru_2l_bidir": (wrapped(_nn("GRU", input_size=64, hidden_size=128, num_layers=2, bidirectional=True,
                                 batch_first=True), lambda y: y[0]), [[1, 50, 64]], "dense"),
    "transformer_decoder": (wrapped(_decoder(256, 4, 512, 2), lambda y: y, _causal(20)),
                            [[1, 20, 256], [1, 30, 256]], "dense"),
    "efficientnet_v2_m": (_tv("efficientnet_v2_m"), IMG, "classifier"),
    "regnet_y_16gf": (_tv("regnet_y_16gf"), IMG, "classifier"),
    "convnext_base": (_tv("convnext_base"), IMG, "classifier"),
    "swin_b": (_tv("swin_b"), IMG, "classifier"),
    "swin_v2_b": (_tv("swin_v2_b"), [[1, 3, 256, 256]], "classifier"),
    "vit_l_16": (_tv("vit_l_16"), IMG, "classifier"),
    "mvit_v2_s": (_tv("mvit_v2_s"), [[1, 3, 16, 224, 224]], "classifier"),
    "raft_large": (wrapped(_tv("raft_large"), lambda y: y[-1]), [[1, 3, 128, 128], [1, 3, 128, 128]], "dense"),
    "fasterrcnn_mobilenet_v3_large_320_fpn": (_detections(_tv("fasterrcnn_mobilenet_v3_large_320_fpn",
                                                              weights_backbone=None, box_score_thresh=0.5),
                                                          "roi_heads.box_predictor.cls_score"),
                                              [[1, 3, 320, 320]], "detection"),
    "retinanet_resnet50_fpn": (_detections(_tv("retinanet_resnet50_fpn", weights_backbone=None, score_thresh=0.5,
                                               min_size=320, max_size=320), "head.classification_head.cls_logits"),
                               [[1, 3, 320, 320]], "detection"),
    "fcos_resnet50_fpn": (_detections(_tv("fcos_resnet50_fpn", weights_backbone=None, score_thresh=0.5,
                                          min_size=320, max_size=320), "head.classification_head.cls_logits"),
                          [[1, 3, 320, 320]], "detection"),
    "maskrcnn_resnet50_fpn": (_detections(_tv("maskrcnn_resnet50_fpn", weights_backbone=None, box_score_thresh=0.5,
                                              min_size=320, max_size=320), "roi_heads.box_predictor.cls_score"),
                              [[1, 3, 320, 320]], "detection"),
    "keypointrcnn_resnet50_fpn": (_detections(_tv("keypointrcnn_resnet50_fpn", weights_backbone=None,
                                                  box_score_thresh=0.5, min_size=320, max_size=320),
                                              "roi_heads.box_predictor.cls_score"),
                                  [[1, 3, 320, 320]], "detection"),
    "fasterrcnn_resnet50_fpn": (_detections(_tv("fasterrcnn_resnet50_fpn", weights_backbone=None,
                                                box_score_thresh=0.5, min_size=320, max_size=320),
                                            "roi_heads.box_predictor.cls_score"),
                                [[1, 3, 320, 320]], "detection"),
    "wav2vec2_large": (wrapped(_ta("wav2vec2_large"), lambda y: y[0]), [[1, 16000]], "dense"),
    "hubert_large": (wrapped(_ta("hubert_large"), lambda y: y[0]), [[1, 16000]], "dense"),
    "gpt2_kv": (_net("GPT2KV"), GPT2_KV, "dense", {"dtypes": ["int64", "float32", "float32"]}),
    "gpt2_kv_dyn_op14": (_net("GPT2KV"), GPT2_KV, "dense",
                         {"dtypes": ["int64", "float32", "float32"], "opset": 14, "dynamic": GPT2_DYN}),
    "gpt2_kv_first": (_net("GPT2KV"), [[1, 8], [2, 1, 4, 0, 32], [2, 1, 4, 0, 32]], "dense",
                      {"dtypes": ["int64", "float32", "float32"]}),  # the first step: an empty cache
    "gpt2_kv_op11": (_net("GPT2KV"), GPT2_KV, "dense", {"dtypes": ["int64", "float32", "float32"], "opset": 11}),
    "t5_small": (_net("T5Small"), [[1, 24], [1, 24], [1, 12]], "dense", {"dtypes": ["int64", "bool", "int64"]}),
    "t5_small_dyn_op15": (_net("T5Small"), [[1, 24], [1, 24], [1, 12]], "dense",
                          {"dtypes": ["int64", "bool", "int64"], "opset": 15,
                           "dynamic": {0: {1: "src"}, 1: {1: "src"}, 2: {1: "tgt"}}}),
    "unet_small": (_net("UNet"), [[1, 4, 32, 32], [1]], "dense"),
    "unet_small_op13": (_net("UNet"), [[1, 4, 32, 32], [1]], "dense", {"opset": 13}),
    "yolo_small": (_net("YOLO"), [[1, 3, 256, 256]], "dense"),
    "yolo_small_op11": (_net("YOLO"), [[1, 3, 256, 256]], "dense", {"opset": 11, "dynamic": {0: {2: "h", 3: "w"}}}),
}


def build(name):
    """NAME's module in eval mode and its inputs, the same on every call (seeded)."""
    import torch
    make, shapes, kind = MODELS[name][:3]
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    model = make()
    for m in model.modules():  # a zero-initialised Linear (ViT's head) makes the output say nothing
        if isinstance(m, torch.nn.Linear) and not m.weight.detach().any():
            torch.nn.init.normal_(m.weight, std=0.02)  # seeded by manual_seed above
            if m.bias is not None:
                torch.nn.init.normal_(m.bias, std=0.02)
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if bns and len(shapes) == 1 and len(shapes[0]) >= 4:  # images and video: batches of 2
        for bn in bns:
            bn.reset_running_stats()
            bn.momentum = None
        net = model.m.backbone if kind == "detection" else model  # a detector's train mode wants targets
        net.train()
        with torch.no_grad():
            for _ in range(2):
                net(torch.randn(2, *shapes[0][1:], generator=gen))
    model.eval()
    return model, [_input(s, t, gen) for s, t in zip(shapes, options(name)["dtypes"])]


def options(name):
    """NAME's options (see MODELS) with their defaults filled in."""
    opts = dict(MODELS[name][3]) if len(MODELS[name]) > 3 else {}
    opts.setdefault("dtypes", ["float32"] * len(MODELS[name][1]))
    opts.setdefault("opset", OPSET)
    opts.setdefault("dynamic", {})
    return opts


def _input(shape, dtype, gen):
    import torch
    if dtype == "int64":
        return torch.randint(0, 1000, shape, generator=gen, dtype=torch.int64)
    if dtype == "bool":
        x = torch.rand(*shape, generator=gen) < 0.85
        x[..., 0] = True  # no row of a mask all false
        return x
    return torch.randn(*shape, generator=gen)


NUMPY_DTYPE = {"float32": "<f4", "int64": "<i8", "bool": "u1"}


def export(name, work):
    """Child process: export NAME to work/NAME.onnx with its inputs and PyTorch's outputs."""
    import torch
    _, shapes, kind = MODELS[name][:3]
    opts = options(name)
    # PyTorch 1.13 has no ONNX symbolic for Tensor.zero_ (swin_v2_t zeroes the k third of its qkv bias
    # copy): zeros of x's shape, folded to a constant with the weights
    torch.onnx.register_custom_op_symbolic(
        "aten::zero", lambda g, x: g.op("ConstantOfShape", g.op("Shape", x),
                                        value_t=torch.zeros(1, dtype=torch.float32)), OPSET)
    model, xs = build(name)
    with torch.no_grad():
        ys = model(*xs)
    ys = list(ys) if isinstance(ys, (tuple, list)) else [ys]
    names = [f"in{i}" for i in range(len(xs))]
    path = os.path.join(work, name + ".onnx")
    dynamic = {names[i]: axes for i, axes in opts["dynamic"].items()}
    torch.onnx.export(model, tuple(xs), path, opset_version=opts["opset"], input_names=names,
                      do_constant_folding=True, dynamic_axes=dynamic or None)
    for i, (x, t) in enumerate(zip(xs, opts["dtypes"])):
        x.numpy().astype(NUMPY_DTYPE[t]).tofile(os.path.join(work, f"{name}.in{i}.bin"))
    out_dtypes = ["int64" if y.dtype == torch.int64 else "float32" for y in ys]
    for i, (y, t) in enumerate(zip(ys, out_dtypes)):
        y.numpy().astype(NUMPY_DTYPE[t]).tofile(os.path.join(work, f"{name}.out{i}.bin"))
    with open(os.path.join(work, name + ".json"), "w") as f:
        json.dump({"recipe": RECIPE, "inputs": names, "shapes": shapes, "dtypes": opts["dtypes"],
                   "outputs": len(ys), "out_dtypes": out_dtypes, "kind": kind}, f)


def fp16_reference(name, work):
    """PyTorch's own force_fp16 loss on NAME. The module with every float weight and buffer,
    every input and every leaf module's float outputs rounded to fp16 (computing in float32 between
    roundings), against its float32 outputs in work: returns the comparison. A model that loses as
    much as the om by this alone is not a compiler defect."""
    import torch
    model, xs = build(name)
    with torch.no_grad():
        for t in list(model.parameters()) + list(model.buffers()):
            if t.is_floating_point():
                t.copy_(t.half().float())

    def rounded(y):
        if torch.is_tensor(y):
            return y.half().float() if y.is_floating_point() else y
        if isinstance(y, (tuple, list)):
            return type(y)(rounded(v) for v in y)
        if isinstance(y, dict):
            return {k: rounded(v) for k, v in y.items()}
        return y

    for m in model.modules():
        if not list(m.children()):
            m.register_forward_hook(lambda m, i, y: rounded(y))
    with torch.no_grad():
        ys = model(*[rounded(x) for x in xs])
    ys = list(ys) if isinstance(ys, (tuple, list)) else [ys]
    with open(os.path.join(work, name + ".json")) as f:
        meta = json.load(f)
    cos, top1 = 1.0, None
    for i, y in enumerate(ys):
        ref = np.fromfile(os.path.join(work, f"{name}.out{i}.bin"), "<f4").astype(np.float64)
        got = y.numpy().astype(np.float64).ravel()
        cos = min(cos, checks.cosine(ref, got))
        if i == 0 and meta["kind"] == "classifier":
            top1 = int(np.argmax(got)) == int(np.argmax(ref))
    text = f"PyTorch rounded to fp16: cosine {cos:.6f}"
    if top1 is not None:
        text += ", top-1 " + ("same" if top1 else "DIFFERENT")
    return text


def exported(name, work, limit_s):
    """(meta, None) when work holds NAME's export of this recipe, else (None, why) after trying it for at
    most limit_s seconds."""
    meta_path = os.path.join(work, name + ".json")
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            meta = json.load(f)
        if meta.get("recipe") == RECIPE:
            return meta, None
        os.remove(meta_path)
    t = time.time()
    try:
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--export-one", name, "--work", work],
                           capture_output=True, text=True, timeout=limit_s)
    except subprocess.TimeoutExpired:
        return None, f"export skipped: longer than {limit_s:g} s (--export-limit)"
    if p.returncode or not os.path.exists(meta_path):
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        return None, "export failed: " + (lines[-1] if lines else f"exit {p.returncode}")[:200]
    print(f"# {name}: exported in {time.time() - t:.0f} s", file=sys.stderr, flush=True)
    with open(meta_path) as f:
        return json.load(f), None


def first_error(text):
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    errs = [l for l in lines if "error" in l.lower()]
    return ((errs or lines or ["(no message)"])[0])[:300]


def match_detections(work, name, out):
    """force_fp16 moves a detector's scores by its fp16 rounding, so near ties may trade places and a
    detection near the threshold appear or go: each PyTorch detection (boxes out0, scores out1) is matched
    to an unused om detection whose box is within 1 pixel. Returns (matched, PyTorch's count, om's count,
    the largest score error of a matched pair)."""
    rb = np.fromfile(os.path.join(work, f"{name}.out0.bin"), "<f4").reshape(-1, 4)
    rs = np.fromfile(os.path.join(work, f"{name}.out1.bin"), "<f4")
    gb = np.fromfile(os.path.join(out, "output_0.bin"), "<f4").reshape(-1, 4)
    gs = np.fromfile(os.path.join(out, "output_1.bin"), "<f4")
    used, found, serr = np.zeros(len(gb), bool), 0, 0.0
    for i in range(len(rb)):
        d = np.abs(gb - rb[i]).max(axis=1) if len(gb) else np.zeros(0)
        d[used] = np.inf
        j = int(np.argmin(d)) if len(d) else -1
        if j >= 0 and d[j] <= 1.0:
            used[j], found, serr = True, found + 1, max(serr, abs(float(gs[j]) - float(rs[i])))
    return found, len(rb), len(gb), serr


def sweep_one(name, mode, meta, work, bindir):
    """One mode of one model: returns (ok, ran, text); ran: the om ran and every output is finite, so
    its figures say how far it is from PyTorch (a miss of the bar, not an error)."""
    base = os.path.join(work, f"{name}-{mode}")
    shape = ";".join(f"{n}:{','.join(map(str, s))}" for n, s in zip(meta["inputs"], meta["shapes"]))
    t = time.time()
    p = checks.run(os.path.join(bindir, "atc"), f"--model={os.path.join(work, name + '.onnx')}", "--framework=5",
                   f"--output={base}", f"--input_shape={shape}", "--soc_version=Ascend310",
                   f"--precision_mode={mode}", "--log=error")
    atc_s = time.time() - t
    if p.returncode:
        return False, False, "atc error: " + first_error(p.stderr + p.stdout)
    out = base + "-out"
    ins = ",".join(os.path.join(work, f"{name}.in{i}.bin") for i in range(len(meta["inputs"])))
    t = time.time()
    p = checks.run(os.path.join(bindir, "omrun"), "--model", base + ".om", "--input", ins, "--output", out)
    run_s = time.time() - t
    if p.returncode:
        return False, False, "run error: " + first_error(p.stderr + p.stdout)
    cos, rel, top1 = 1.0, 0.0, None
    if meta["kind"] == "detection" and mode != "must_keep_origin_dtype":
        found, n, m, serr = match_detections(work, name, out)
        ok = n > 0 and found >= 0.95 * n and serr <= 0.05
        return ok, True, (f"{'PASS' if ok else 'FAIL'} {found} of {n} detections matched (om {m}; boxes within "
                          f"1 px, scores within {serr:.1e}) (atc {atc_s:.1f} s, omrun {run_s:.1f} s)")
    for i in range(meta["outputs"]):
        dtype = NUMPY_DTYPE[meta.get("out_dtypes", ["float32"] * meta["outputs"])[i]]
        ref = np.fromfile(os.path.join(work, f"{name}.out{i}.bin"), dtype).astype(np.float64)
        got_path = os.path.join(out, f"output_{i}.bin")
        if not os.path.exists(got_path):
            return False, False, f"run error: no output_{i}.bin"
        got = np.fromfile(got_path, dtype).astype(np.float64)
        if got.size != ref.size:
            return False, False, f"output {i}: {got.size} values, PyTorch has {ref.size}"
        if got.size == 0:  # a detector with no detections: as PyTorch, but nothing to compare
            return False, True, (f"FAIL output {i}: 0 values, as PyTorch: nothing to compare (atc {atc_s:.1f} s, "
                                 f"omrun {run_s:.1f} s)")
        bad = int(np.count_nonzero(~np.isfinite(got)))
        if bad:  # a NaN would pass the figures below (min and max skip it)
            return False, False, f"FAIL output {i}: {bad} of {got.size} values are NaN or inf (atc {atc_s:.1f} s, omrun {run_s:.1f} s)"
        cos = min(cos, checks.cosine(ref, got))
        rel = max(rel, float(np.max(np.abs(ref - got))) / max(float(np.max(np.abs(ref))), 1e-30))
        if i == 0 and meta["kind"] == "classifier":
            top1 = int(np.argmax(got)) == int(np.argmax(ref))
    ok = rel <= 1e-4 if mode == "must_keep_origin_dtype" else cos >= 0.999 and top1 is not False
    text = f"cosine {cos:.6f}, max err {rel:.2e} x max|ref|"
    if top1 is not None:
        text += ", top-1 " + ("same" if top1 else "DIFFERENT")
    return ok, True, f"{'PASS' if ok else 'FAIL'} {text} (atc {atc_s:.1f} s, omrun {run_s:.1f} s)"


def cpu_ms(cmd, cpus):
    """CPU time in ms (task-clock: every thread of the process) of cmd pinned to the cores cpus (taskset's
    list); raises RuntimeError with its first error line when it fails."""
    p = subprocess.run(["perf", "stat", "-x,", "-e", "task-clock", "taskset", "-c", cpus] + cmd,
                       capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(first_error(p.stderr + p.stdout))
    for line in p.stderr.splitlines():
        f = line.split(",")
        if len(f) > 2 and f[2] == "task-clock":
            return float(f[0])
    raise RuntimeError("perf stat printed no task-clock (is perf allowed: kernel.perf_event_paranoid?)")


def speed_one(name, meta, work, bindir, threads, cpus, rounds, budget_s):
    """Times NAME's force_fp16 om against ONNX Runtime (the module comment says how): returns the line."""
    ins = ",".join(os.path.join(work, f"{name}.in{i}.bin") for i in range(len(meta["inputs"])))
    shapes = ":".join(",".join(map(str, s)) for s in meta["shapes"])
    out = os.path.join(work, f"{name}-speed-out")
    cmds = {
        "omrun": lambda n: [os.path.join(bindir, "omrun"), "--model", os.path.join(work, f"{name}-force_fp16.om"),
                            "--input", ins, "--output", out, "--threads", str(threads), "--loop", str(n)],
        "ort": lambda n: ["node", os.path.join(ROOT, "bench", "ort_bench.js"), "--model",
                          os.path.join(work, name + ".onnx"), "--input", ins, "--shape", shapes, "--threads",
                          str(threads), "--min", str(n), "--max", str(n), "--budget", "0",
                          "--dtype", ":".join(meta.get("dtypes", ["float32"] * len(meta["inputs"])))],
    }
    try:
        once = {k: cpu_ms(c(1), cpus) for k, c in cmds.items()}
        est = max((cpu_ms(c(3), cpus) - once[k]) / 2 for k, c in cmds.items())  # ms per run, slower one
        n = int(min(1000, max(5, budget_s * 1e3 / max(est, 1e-3))))
        base = {k: [v] for k, v in once.items()}
        total = {k: [] for k in cmds}
        for r in range(rounds):
            for k in (list(cmds) if r % 2 == 0 else list(cmds)[::-1]):  # alternate which goes first
                if r:
                    base[k].append(cpu_ms(cmds[k](1), cpus))
                total[k].append(cpu_ms(cmds[k](n), cpus))
    except RuntimeError as e:
        return False, f"speed: {e}"
    per = {k: [(t - min(base[k])) / (n - 1) for t in total[k]] for k in cmds}
    med = {k: float(np.median(v)) for k, v in per.items()}
    ratios = [a / b for a, b in zip(per["omrun"], per["ort"])]
    spread = {k: max(v) / min(v) - 1 for k, v in per.items()}
    return True, (f"omrun {med['omrun']:.1f} ms, ORT {med['ort']:.1f} ms, ratio {med['omrun'] / med['ort']:.2f} "
                  f"(rounds {min(ratios):.2f}-{max(ratios):.2f}), spread omrun {spread['omrun'] * 100:.0f}%, "
                  f"ORT {spread['ort'] * 100:.0f}% ({threads} thread{'s' if threads > 1 else ''}, "
                  f"{rounds} x {n} runs, CPU time)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*")
    ap.add_argument("--work", default="/tmp/sweep")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build"))
    ap.add_argument("--modes", default="force_fp16,must_keep_origin_dtype")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--export-only", action="store_true", help="only export (and cache) the models")
    ap.add_argument("--export-limit", type=float, default=EXPORT_LIMIT_S,
                    help=f"seconds an export may take before it is skipped (default {EXPORT_LIMIT_S}; more on a "
                    "loaded machine)")
    ap.add_argument("--speed", action="store_true",
                    help="time each model's passing force_fp16 om against ONNX Runtime (see above)")
    ap.add_argument("--threads", type=int, default=1, help="--speed: threads of both runtimes (default 1)")
    ap.add_argument("--cpus", help="--speed: the cores both runtimes are pinned to (taskset -c; default 0..T-1)")
    ap.add_argument("--rounds", type=int, default=3, help="--speed: alternating rounds (default 3)")
    ap.add_argument("--budget", type=float, default=4.0,
                    help="--speed: seconds of timed runs per round of the slower runtime (default 4)")
    ap.add_argument("--fp16-reference", action="store_true",
                    help="instead of atc and omrun: PyTorch's own loss with weights and layer outputs rounded to fp16 "
                    "(to tell a force_fp16 miss of the network itself from a compiler defect)")
    ap.add_argument("--export-one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    if args.export_one:
        export(args.export_one, args.work)
        return 0
    names = args.names or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        print(f"model_sweep: unknown model {unknown[0]} (the list: {', '.join(MODELS)})", file=sys.stderr)
        return 2
    if args.markdown:
        print("| model | mode | result |\n|---|---|---|")
    for name in names:
        meta, why = exported(name, args.work, args.export_limit)
        if args.export_only:
            print(f"{name:20} {'export ok' if meta else why}", flush=True)
            continue
        if args.fp16_reference:
            print(f"{name:20} {'fp16 reference':24} {fp16_reference(name, args.work) if meta else why}", flush=True)
            continue
        ran = set()
        for mode in args.modes.split(","):
            if meta is None:
                ok, text = False, why
            else:
                ok, good, text = sweep_one(name, mode, meta, args.work, args.bin)
                if good:
                    ran.add(mode)
            checks.results.append(ok)
            print(f"| {name} | {mode} | {text} |" if args.markdown else f"{name:20} {mode:24} {text}", flush=True)
            if meta is None:
                break
        if args.speed and "force_fp16" in ran:
            cpus = args.cpus or ("0" if args.threads == 1 else f"0-{args.threads - 1}")
            ok, text = speed_one(name, meta, args.work, args.bin, args.threads, cpus, args.rounds, args.budget)
            checks.results.append(ok)
            print(f"| {name} | speed | {text} |" if args.markdown else f"{name:20} {'speed':24} {text}", flush=True)
    return checks.summary("model_sweep")


if __name__ == "__main__":
    sys.exit(main())
