#!/usr/bin/python3
"""Shape gears end to end: atc --dynamic_batch_size, --dynamic_image_size and
--dynamic_dims against static compiles of the same model at each gear, omrun's
--dymBatch / --dymHW / --dymDims, and the one-line refusals (a value that is not
a gear, a wrong-size input, gears that disagree with --input_shape).

Small models by default (a conv net built with onnx.helper; a BERT-shaped
encoder exported from PyTorch with a dynamic sequence axis). With --models-dir,
also ResNet-50 (batch and image size gears) and BERT-base (dims gears) from
models/out, and the package sizes against one-shape packages.

Usage: gears_e2e.py ATC OMRUN WORK_DIR [--models-dir DIR]
"""
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from checks import check, cosine, run, summary

class Tools:
    def __init__(self, atc, omrun, work):
        self.atc, self.omrun, self.work = atc, omrun, work

    def compile(self, model, name, *flags):
        out = os.path.join(self.work, name)
        p = run(self.atc, f"--model={model}", "--framework=5", f"--output={out}", "--soc_version=Ascend310", *flags)
        return p, out + ".om"

    def run(self, om, inputs, name, *flags):
        """omrun om on the arrays `inputs`; the output arrays (float32), or the failed process."""
        paths = []
        for i, x in enumerate(inputs):
            paths.append(os.path.join(self.work, f"{name}_in{i}.bin"))
            x.tofile(paths[-1])
        out = os.path.join(self.work, name + "_out")
        p = run(self.omrun, "--model", om, "--input", ",".join(paths), "--output", out, *flags)
        if p.returncode != 0:
            return p
        outs, i = [], 0
        while os.path.exists(os.path.join(out, f"output_{i}.bin")):
            outs.append(np.fromfile(os.path.join(out, f"output_{i}.bin"), "<f4"))
            i += 1
        return outs


def gear_vs_static(t, model, label, gear_flags, gears, make_inputs, static_shape, omrun_flag):
    """Compiles `model` with gear_flags and once per gear statically; each gear's output must match the
    static compile's (cosine >= 0.9999). Returns (gear om bytes, the first static om's bytes)."""
    p, gear_om = t.compile(model, label + "_gears", *gear_flags)
    check(f"{label}: compiles with {' '.join(gear_flags[1:])}", p.returncode == 0 and "gears" in p.stdout,
          p.stderr + p.stdout)
    sizes = []
    for g in gears:
        p, static_om = t.compile(model, f"{label}_static_{'x'.join(map(str, g))}", static_shape(g))
        check(f"{label} {g}: static compile", p.returncode == 0, p.stderr)
        sizes.append(os.path.getsize(static_om) if p.returncode == 0 else 0)
        inputs = make_inputs(g)
        got = t.run(gear_om, inputs, f"{label}_g", *omrun_flag(g))
        ref = t.run(static_om, inputs, f"{label}_s")
        ok = isinstance(got, list) and isinstance(ref, list) and len(got) == len(ref) and all(
            a.size == b.size and cosine(a, b) >= 0.9999 for a, b in zip(got, ref))
        detail = (got.stderr if not isinstance(got, list) else ref.stderr if not isinstance(ref, list) else
                  [cosine(a, b) for a, b in zip(got, ref)])
        check(f"{label} gear {g}: matches the static compile (cosine >= 0.9999)", ok, detail)
        if ok:
            print(f"     cosine {min(cosine(a, b) for a, b in zip(got, ref)):.7f}")
    return os.path.getsize(gear_om) if os.path.exists(gear_om) else 0, sizes


def conv_net(work, rng):
    """x [N, 3, H, W] -> conv 3x3 -> relu -> conv 3x3 stride 2 -> global average pool -> flatten -> gemm."""
    w1 = rng.standard_normal((16, 3, 3, 3)).astype(np.float32) * 0.3
    w2 = rng.standard_normal((32, 16, 3, 3)).astype(np.float32) * 0.1
    fc = rng.standard_normal((10, 32)).astype(np.float32) * 0.2
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "w1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c1"], ["r1"]),
         helper.make_node("Conv", ["r1", "w2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
         helper.make_node("GlobalAveragePool", ["c2"], ["p"]),
         helper.make_node("Flatten", ["p"], ["f"]),
         helper.make_node("Gemm", ["f", "fc"], ["y"], transB=1)],
        "convnet", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(fc, "fc")])
    path = os.path.join(work, "convnet.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def bert_shaped(work):
    """A small BERT-shaped encoder (token and position embeddings, LayerNorm, two encoder layers with a
    padding mask), ids and mask int64 [1, seq] with a dynamic seq axis."""
    import torch
    torch.manual_seed(0)

    class Enc(torch.nn.Module):
        def __init__(self, vocab=500, d=64, heads=4, layers=2, maxlen=128):
            super().__init__()
            self.tok, self.pos = torch.nn.Embedding(vocab, d), torch.nn.Embedding(maxlen, d)
            self.ln = torch.nn.LayerNorm(d)
            layer = torch.nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, batch_first=True, activation="gelu")
            self.enc = torch.nn.TransformerEncoder(layer, layers)

        def forward(self, ids, mask):
            pos = torch.arange(ids.shape[1]).unsqueeze(0)
            return self.enc(self.ln(self.tok(ids) + self.pos(pos)), src_key_padding_mask=(mask == 0))

    m = Enc().eval()
    path = os.path.join(work, "bert_shaped.onnx")
    ids, mask = torch.randint(0, 500, (1, 32)), torch.ones(1, 32, dtype=torch.int64)
    torch.onnx.export(m, (ids, mask), path, input_names=["ids", "mask"], output_names=["out"], opset_version=17,
                      dynamic_axes={"ids": {1: "seq"}, "mask": {1: "seq"}, "out": {1: "seq"}})
    return path


def refusals(t, model, rng):
    """Each bad input: one line naming the flag and the value, exit 1, nothing written."""
    bad = [
        (["--input_shape=x:-1,3,16,16"], ["--input_shape", "-1", "--dynamic_batch_size"]),
        (["--input_shape=x:1,3,16,16", "--dynamic_batch_size=1,2"], ["--dynamic_batch_size", "1,2", "-1"]),
        (["--input_shape=x:1,-1,16,16", "--dynamic_batch_size=1,2"], ["--input_shape", "x:1,-1,16,16"]),
        (["--input_shape=x:-1,3,16,16", "--dynamic_batch_size=4"], ["--dynamic_batch_size", "\"4\""]),
        (["--input_shape=x:-1,3,16,16", "--dynamic_batch_size=1,2,2"], ["--dynamic_batch_size", "'2'", "twice"]),
        (["--input_shape=x:-1,3,16,16", "--dynamic_batch_size=1,0"], ["--dynamic_batch_size", "'0'"]),
        (["--input_shape=x:1,3,-1,-1", "--dynamic_image_size=16,16;24"], ["--dynamic_image_size", "'24'"]),
        (["--input_shape=x:1,3,-1,16", "--dynamic_image_size=16,16;24,24"], ["--input_shape", "x:1,3,-1,16"]),
        (["--input_shape=x:1,3,-1,-1", "--dynamic_dims=16,16;24"], ["--dynamic_dims", "'24'"]),
        (["--input_shape=x:-1,3,-1,-1", "--dynamic_dims=1,16,16;2,24"], ["--dynamic_dims", "'2,24'"]),
        (["--input_shape=x:-1,3,16,16", "--dynamic_batch_size=1,2", "--dynamic_dims=1;2"],
         ["--dynamic_batch_size", "--dynamic_dims"]),
    ]
    for flags, words in bad:
        p, om = t.compile(model, "refused", *flags)
        lines = p.stderr.strip().splitlines()
        check(f"atc {' '.join(flags)}: one line naming {words}, exit 1, nothing written",
              p.returncode == 1 and len(lines) == 1 and all(w in lines[0] for w in words) and not os.path.exists(om),
              p.stderr)

    p, om = t.compile(model, "convnet_b", "--input_shape=x:-1,3,16,16", "--dynamic_batch_size=1,2,4,8")
    x = rng.standard_normal((2, 3, 16, 16)).astype(np.float32)
    got = t.run(om, [x], "nongear", "--dymBatch", "3")
    check("omrun --dymBatch 3 (not a gear): exit 1, one line listing the gears",
          not isinstance(got, list) and got.returncode == 1 and len(got.stderr.strip().splitlines()) == 1
          and "--dymBatch 3" in got.stderr and "1, 2, 4, 8" in got.stderr, getattr(got, "stderr", got))
    got = t.run(om, [x], "nogear")
    check("omrun without --dymBatch on a gear model: exit 1 naming the flag and the gears",
          not isinstance(got, list) and got.returncode == 1 and "--dymBatch" in got.stderr and "8" in got.stderr,
          getattr(got, "stderr", got))
    got = t.run(om, [x], "wrongsize", "--dymBatch", "4")
    check("omrun --dymBatch 4 with a batch-2 file: exit 1 naming the gear and both sizes",
          not isinstance(got, list) and got.returncode == 1 and "--dymBatch 4" in got.stderr
          and str(x.nbytes) in got.stderr and str(2 * x.nbytes) in got.stderr, getattr(got, "stderr", got))
    got = t.run(om, [x], "wrongflag", "--dymHW", "16,16")
    check("omrun --dymHW on a batch-gear model: exit 1 naming --dymBatch",
          not isinstance(got, list) and got.returncode == 1 and "--dymBatch" in got.stderr,
          getattr(got, "stderr", got))
    p, om1 = t.compile(model, "convnet_static", "--input_shape=x:2,3,16,16")
    got = t.run(om1, [x], "static", "--dymBatch", "2")
    check("omrun --dymBatch on a static model: exit 1 saying it has no gears",
          not isinstance(got, list) and got.returncode == 1 and "no gears" in got.stderr, getattr(got, "stderr", got))
    p = run(t.atc, "--mode=1", f"--om={om}", f"--json={t.work}/gears.json")
    with open(f"{t.work}/gears.json") as f:
        text = f.read()
    check("atc --mode=1 lists the gears", p.returncode == 0 and '"gears": {"kind": "batch"' in text, p.stderr)
    p = run(t.atc, "--mode=6", f"--om={om}")
    check("atc --mode=6 shows the gears and the dynamic input dims",
          p.returncode == 0 and "gears:      batch 1; 2; 4; 8" in p.stdout and "[-1, 3, 16, 16]" in p.stdout
          and "--dynamic_batch_size=1,2,4,8" in p.stdout, p.stdout + p.stderr)
    p = run(t.atc, "--mode=6", f"--om={om1}")
    check("atc --mode=6 on a static model: no gears", p.returncode == 0 and "gears:      none" in p.stdout, p.stdout)


def main():
    atc, omrun, work = sys.argv[1:4]
    models_dir = sys.argv[sys.argv.index("--models-dir") + 1] if "--models-dir" in sys.argv else None
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    t = Tools(atc, omrun, work)
    rng = np.random.default_rng(19)

    if not models_dir:
        model = conv_net(work, rng)
        gear_vs_static(t, model, "convnet batch", ["--input_shape=x:-1,3,16,16", "--dynamic_batch_size=1,2,4,8"],
                       [(1,), (2,), (4,), (8,)], lambda g: [rng.standard_normal((g[0], 3, 16, 16)).astype(np.float32)],
                       lambda g: f"--input_shape=x:{g[0]},3,16,16", lambda g: ["--dymBatch", str(g[0])])
        gear_vs_static(t, model, "convnet image size",
                       ["--input_shape=x:1,3,-1,-1", "--dynamic_image_size=16,16;32,24;20,36"],
                       [(16, 16), (32, 24), (20, 36)],
                       lambda g: [rng.standard_normal((1, 3) + g).astype(np.float32)],
                       lambda g: f"--input_shape=x:1,3,{g[0]},{g[1]}", lambda g: ["--dymHW", f"{g[0]},{g[1]}"])
        gear_vs_static(t, model, "convnet dims (batch and width)",
                       ["--input_shape=x:-1,3,16,-1", "--dynamic_dims=1,16;2,32;4,8"], [(1, 16), (2, 32), (4, 8)],
                       lambda g: [rng.standard_normal((g[0], 3, 16, g[1])).astype(np.float32)],
                       lambda g: f"--input_shape=x:{g[0]},3,16,{g[1]}",
                       lambda g: ["--dymDims", f"x:{g[0]},3,16,{g[1]}"])
        bert = bert_shaped(work)

        def ids_mask(g):
            mask = np.ones((1, g[0]), np.int64)
            mask[0, g[0] * 3 // 4:] = 0
            return [rng.integers(0, 500, (1, g[0])).astype(np.int64), mask]

        gear_vs_static(t, bert, "BERT-shaped encoder dims",
                       ["--input_shape=ids:1,-1;mask:1,-1", "--dynamic_dims=16,16;32,32;64,64"],
                       [(16,), (32,), (64,)], ids_mask, lambda g: f"--input_shape=ids:1,{g[0]};mask:1,{g[0]}",
                       lambda g: ["--dymDims", f"ids:1,{g[0]};mask:1,{g[0]}"])
        refusals(t, model, rng)
    else:
        resnet = os.path.join(models_dir, "resnet50.onnx")
        x0 = np.fromfile(os.path.join(models_dir, "resnet50.input.bin"), "<f4").reshape(1, 3, 224, 224)
        gear_bytes, static = gear_vs_static(
            t, resnet, "resnet50 batch", ["--input_shape=input:-1,3,224,224", "--dynamic_batch_size=1,2,4,8"],
            [(1,), (2,), (4,), (8,)],
            lambda g: [np.concatenate([x0] + [rng.standard_normal(x0.shape).astype(np.float32)] * (g[0] - 1))],
            lambda g: f"--input_shape=input:{g[0]},3,224,224", lambda g: ["--dymBatch", str(g[0])])
        ratio = gear_bytes / static[0] if static and static[0] else 0
        print(f"     resnet50: 4 batch gears {gear_bytes} bytes, batch-1 om {static[0] if static else 0}: {ratio:.4f}x")
        check("resnet50 batch gears om <= 1.15x the one-shape om", 0 < ratio <= 1.15, ratio)
        gear_bytes, static = gear_vs_static(
            t, resnet, "resnet50 image size",
            ["--input_shape=input:1,3,-1,-1", "--dynamic_image_size=224,224;320,320;256,192"],
            [(224, 224), (320, 320), (256, 192)], lambda g: [rng.standard_normal((1, 3) + g).astype(np.float32)],
            lambda g: f"--input_shape=input:1,3,{g[0]},{g[1]}", lambda g: ["--dymHW", f"{g[0]},{g[1]}"])
        ratio = gear_bytes / static[0] if static and static[0] else 0
        print(f"     resnet50: 3 image size gears {ratio:.4f}x the one-shape om")
        check("resnet50 image size gears om <= 1.15x the one-shape om", 0 < ratio <= 1.15, ratio)
        # Dims gears on the encoders: transformer_encoder (in the default export set, so always run)
        # and bert_base (a benchmark-only export: run when models/ has exported it).
        enc = np.fromfile(os.path.join(models_dir, "transformer_encoder.input.bin"), "<f4").reshape(1, 64, 256)
        encoders = [("transformer_encoder", "1,-1,256", [(16,), (32,), (64,)], lambda g: [enc[:, :g[0]].copy()],
                     lambda g: f"1,{g[0]},256")]
        if os.path.exists(os.path.join(models_dir, "bert_base.input.bin")):
            ids = np.fromfile(os.path.join(models_dir, "bert_base.input.bin"), "<i8")
            encoders.append(("bert_base", "1,-1", [(32,), (64,), (128,)], lambda g: [ids[:g[0]].reshape(1, g[0])],
                             lambda g: f"1,{g[0]}"))
        else:
            print("     bert_base not exported (models/export_torchvision.py bert_base): its dims gears not run")
        for name, shape, gears, feed, dims in encoders:
            gear_bytes, static = gear_vs_static(
                t, os.path.join(models_dir, name + ".onnx"), name + " dims",
                [f"--input_shape=input:{shape}", "--dynamic_dims=" + ";".join(str(g[0]) for g in gears)], gears,
                feed, lambda g, dims=dims: f"--input_shape=input:{dims(g)}",
                lambda g, dims=dims: ["--dymDims", f"input:{dims(g)}"])
            ratio = gear_bytes / static[0] if static and static[0] else 0
            print(f"     {name}: {len(gears)} dims gears {ratio:.4f}x the one-shape om")
            check(f"{name} dims gears om <= 1.15x the one-shape om", 0 < ratio <= 1.15, ratio)

    return summary("gears_e2e")


if __name__ == "__main__":
    sys.exit(main())
