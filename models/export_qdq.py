#!/usr/bin/python3
"""Export int8 (QDQ) torchvision classifiers through PyTorch FX post-training quantization.

Each network is built exactly as models/export_torchvision.py builds its float export (same seed,
BatchNorm statistics re-estimated on the same random images, the same reference input), then
quantized with PyTorch FX (prepare_fx with the fbgemm qconfig: per-channel symmetric int8 weights,
uint8 activations with histogram observers), calibrated on CALIB seeded random images, converted
(convert_fx) and exported to ONNX opset 13, which writes QuantizeLinear / DequantizeLinear pairs
around every Conv, Gemm, Add, pooling and Relu ("QDQ"). For each model NAME it writes, to --out:

  NAME_qdq.onnx        the quantized model (batch 1, input "input" 1x3x224x224 float32)
  NAME_qdq.input.bin   the reference input (the float export's), raw little-endian float32
  NAME_qdq.output.bin  the FLOAT model's PyTorch output for it (1x1000 float32)
  NAME_qdq.torch.bin   PyTorch's quantized output for it (its FBGEMM engine, or oneDNN, which
                       runs the same fbgemm qconfig, when the build has no FBGEMM: Debian's)
  NAME_qdq.ort.bin     ONNX Runtime's output of NAME_qdq.onnx (int8 kernels), when node and
                       onnxruntime-node are there: bench/ort_bench.js with bench/node_modules
                       (bench/run.sh installs it), or --ort-bench FILE (another checkout's, whose
                       bench/node_modules has it). An export that lacks it (made where ORT was
                       not installed: a fresh checkout or worktree) gets it on the next run that
                       finds ORT, without exporting the model again.
  NAME_qdq.json        input name and shape, opset, seed, top-1/top-5 of each output

  calib/NAME/NNN.bin    the CALIB calibration images (000.bin ... 031.bin, raw float32 1x3x224x224),
                       the inputs omquant takes (--calib DIR)

The float models themselves are models/export_torchvision.py's NAME.onnx.

bert_base (the BERT-base-shaped encoder, int64 token ids 1x128) is quantized by the project's own
omquant (--omquant, default build/omquant) instead: the same QDQ form (per-channel int8 weights for
every Linear's MatMul, uint8 activations around every MatMul, the attention's two activation x
activation MatMuls included, and Add), calibrated on CALIB_IDS seeded random token-id sequences
(calib/bert_base/NNN.bin, raw int64 1x128) with minmax ranges. Its .input.bin and .output.bin are the
float export's (models/export_torchvision.py bert_base, which must exist), .torch.bin is not written.

Usage: models/export_qdq.py [--out DIR] [--ort-bench FILE] [NAME ...]
       models/export_qdq.py [--out DIR] --calib NAME [NAME ...]
       NAME in resnet50, mobilenet_v2, resnet18, squeezenet1_1, bert_base; default: the first four.
       --calib writes only calib/NAME/ (no model is built: cheap; what the tests need for omquant).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_torchvision as et  # noqa: E402  (same seeds and BatchNorm recipe)

MODELS = {"resnet50": torchvision.models.resnet50, "mobilenet_v2": torchvision.models.mobilenet_v2,
          "resnet18": torchvision.models.resnet18, "squeezenet1_1": torchvision.models.squeezenet1_1}
OPSET = 13
CALIB = 32
CALIB_SEED = 20261201
OMQUANT = {"bert_base": [1, 128]}  # quantized by build/omquant from the float export: its input shape
CALIB_IDS = 8  # calibration sequences for an OMQUANT model (the reference evaluator is slow on BERT)
RECIPE = 1  # bump when an export changes
SHAPE = [1, 3, 224, 224]


def float_model(name):
    """The float network and reference input exactly as export_torchvision.export makes them."""
    torch.manual_seed(et.SEED)
    gen = torch.Generator().manual_seed(et.SEED)
    model = MODELS[name]()
    et.reestimate_batchnorm(model, gen, SHAPE)
    x = torch.randn(*SHAPE, generator=gen)
    return model.eval(), x


def calibration_images():
    gen = torch.Generator().manual_seed(CALIB_SEED)
    return [torch.randn(*SHAPE, generator=gen) for _ in range(CALIB)]


def write_calibration(name, out_dir, calib):
    """calib/NAME/NNN.bin: one raw little-endian float32 file per calibration image (omquant --calib)."""
    d = os.path.join(out_dir, "calib", name)
    os.makedirs(d, exist_ok=True)
    for i, img in enumerate(calib):
        img.numpy().astype("<f4").tofile(os.path.join(d, f"{i:03d}.bin"))
    with open(os.path.join(d, "calib.json"), "w") as f:  # not a sample: omquant reads *.bin only
        json.dump({"count": len(calib), "seed": CALIB_SEED, "shape": SHAPE, "dtype": "float32"}, f)
    return d


def calibration_up_to_date(name, out_dir):
    path = os.path.join(out_dir, "calib", name, "calib.json")
    if not os.path.exists(path):
        return False
    with open(path) as f:
        meta = json.load(f)
    return meta.get("seed") == CALIB_SEED and meta.get("count") == CALIB and all(
        os.path.exists(os.path.join(out_dir, "calib", name, f"{i:03d}.bin")) for i in range(CALIB))


def quantize(model, calib):
    from torch.ao.quantization import QConfigMapping, get_default_qconfig
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    engines = torch.backends.quantized.supported_engines  # Debian's torch has oneDNN, not FBGEMM itself
    torch.backends.quantized.engine = "fbgemm" if "fbgemm" in engines else "onednn"
    qmap = QConfigMapping().set_global(get_default_qconfig("fbgemm"))
    prepared = prepare_fx(model, qmap, (calib[0],))
    with torch.no_grad():
        for img in calib:
            prepared(img)
    return quantized_cats(convert_fx(prepared), calib[0])


def quantized_cats(qmodel, x):
    """torch.cat of quantized tensors (SqueezeNet's Fire modules) as quantized::cat, which the ONNX
    exporter turns into DequantizeLinear -> Concat -> QuantizeLinear (it has no export for the
    former): each cat's output scale and zero point are read from one run on x."""
    cats = [n for n in qmodel.graph.nodes if n.op == "call_function" and n.target is torch.cat]
    params = {}

    def recorder(name):
        def cat(tensors, dim=0):
            y = torch.cat(tensors, dim)
            params[name] = (y.q_scale(), y.q_zero_point()) if y.is_quantized else None
            return y
        return cat
    for n in cats:
        n.target = recorder(n.name)
    qmodel.recompile()
    with torch.no_grad():
        qmodel(x)
    for n in cats:
        dim = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim", 0)
        if params.get(n.name):
            n.target, n.args, n.kwargs = torch.ops.quantized.cat, (n.args[0], dim, *params[n.name]), {}
        else:
            n.target = torch.cat
    qmodel.recompile()
    return qmodel


def top5(y):
    return torch.topk(torch.as_tensor(y).reshape(-1), 5).indices.tolist()


def ort_output(bench, onnx_path, input_path, out_path, shape=SHAPE, dtype="float32"):
    """ONNX Runtime's first output (bench/ort_bench.js --output), or None without node."""
    if not bench or not os.path.exists(bench):
        return None
    try:
        subprocess.run(["node", bench, "--model", onnx_path, "--input", input_path, "--shape",
                        ",".join(map(str, shape)), "--dtype", dtype, "--threads", "1", "--min", "1", "--max", "1",
                        "--budget", "0", "--output", out_path], check=True, stdout=subprocess.DEVNULL)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"models: ONNX Runtime reference not written: {e}", file=sys.stderr)
        return None
    return np.fromfile(out_path, dtype="<f4")


def write_ort_reference(name, out_dir, bench):
    """NAME_qdq.ort.bin for an existing export, and its top-5 in NAME_qdq.json; False without ORT."""
    base = os.path.join(out_dir, name + "_qdq")
    yo = ort_output(bench, base + ".onnx", base + ".input.bin", base + ".ort.bin")
    if yo is None:
        return False
    with open(base + ".json") as f:
        meta = json.load(f)
    meta["ort_int8_top5"] = top5(yo)
    with open(base + ".json", "w") as f:
        json.dump(meta, f, indent=1)
    return True


def export(name, out_dir, bench):
    model, x = float_model(name)
    with torch.no_grad():
        y = model(x)
    calib = calibration_images()
    write_calibration(name, out_dir, calib)
    qmodel = quantize(model, calib)
    with torch.no_grad():
        yq = qmodel(x)
    base = os.path.join(out_dir, name + "_qdq")
    torch.onnx.export(qmodel, x, base + ".onnx", opset_version=OPSET, input_names=["input"],
                      output_names=["output"], do_constant_folding=True)
    x.numpy().astype("<f4").tofile(base + ".input.bin")
    y.numpy().astype("<f4").tofile(base + ".output.bin")
    yq.numpy().astype("<f4").tofile(base + ".torch.bin")
    yo = ort_output(bench, base + ".onnx", base + ".input.bin", base + ".ort.bin")
    meta = {"model": name + "_qdq", "float_model": name, "opset": OPSET, "input": "input", "input_shape": SHAPE,
            "input_dtype": "float32", "output_shape": list(y.shape), "kind": "classifier", "quantized": True,
            "seed": et.SEED, "calib_count": CALIB, "calib_seed": CALIB_SEED,
            "recipe": RECIPE, "top1": top5(y)[0], "top5": top5(y), "torch_int8_top5": top5(yq)}
    if yo is not None:
        meta["ort_int8_top5"] = top5(yo)
    with open(base + ".json", "w") as f:
        json.dump(meta, f, indent=1)
    return base + ".onnx"


def export_omquant(name, out_dir, bench, omquant):
    """NAME_qdq by omquant from the float export NAME.onnx, calibrated on seeded random token ids."""
    src = os.path.join(out_dir, name)
    for ext in (".onnx", ".input.bin", ".output.bin", ".json"):
        if not os.path.exists(src + ext):
            sys.exit(f"export_qdq: {src + ext} is missing: run models/export_torchvision.py {name} first")
    if not os.path.exists(omquant):
        sys.exit(f"export_qdq: {omquant} is missing: build it (scripts/build.sh) or pass --omquant")
    with open(src + ".json") as f:
        fmeta = json.load(f)
    shape, vocab = OMQUANT[name], et.TOKEN_IDS[name]
    calib_dir = os.path.join(out_dir, "calib", name)
    os.makedirs(calib_dir, exist_ok=True)
    gen = torch.Generator().manual_seed(CALIB_SEED)
    for i in range(CALIB_IDS):
        ids = torch.randint(0, vocab, shape, generator=gen, dtype=torch.int64)
        ids.numpy().astype("<i8").tofile(os.path.join(calib_dir, f"{i:03d}.bin"))
    base = src + "_qdq"
    subprocess.run([omquant, "--model", src + ".onnx", "--calib", calib_dir, "--output", base + ".onnx",
                    "--input_shape", f"{fmeta['input']}:{','.join(map(str, shape))}"], check=True)
    for ext in (".input.bin", ".output.bin"):
        shutil.copyfile(src + ext, base + ext)
    yo = ort_output(bench, base + ".onnx", base + ".input.bin", base + ".ort.bin", shape, "int64")
    meta = {"model": name + "_qdq", "float_model": name, "opset": fmeta["opset"], "input": fmeta["input"],
            "input_shape": shape, "input_dtype": "int64", "output_shape": fmeta["output_shape"],
            "kind": fmeta["kind"], "quantized": True, "quantizer": "omquant", "seed": et.SEED,
            "calib_count": CALIB_IDS, "calib_seed": CALIB_SEED, "recipe": RECIPE}
    if yo is not None:
        y = np.fromfile(base + ".output.bin", dtype="<f4").astype(np.float64)
        yo = yo.astype(np.float64)
        meta["ort_int8_cosine_vs_float"] = float(y @ yo / np.sqrt((y @ y) * (yo @ yo)))
    with open(base + ".json", "w") as f:
        json.dump(meta, f, indent=1)
    return base + ".onnx"


def up_to_date(name, out_dir):
    base = os.path.join(out_dir, name + "_qdq")
    torch_bin = () if name in OMQUANT else (".torch.bin",)
    files = [base + ext for ext in (".onnx", ".input.bin", ".output.bin", ".json") + torch_bin]
    if not all(os.path.exists(f) for f in files):
        return False
    with open(base + ".json") as f:
        meta = json.load(f)
    return meta.get("seed") == et.SEED and meta.get("recipe") == RECIPE and meta.get("calib_seed") == CALIB_SEED


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "out"))
    ap.add_argument("--ort-bench", default=os.path.join(here, "..", "bench", "ort_bench.js"),
                    help="bench/ort_bench.js with its node_modules (ONNX Runtime's reference output)")
    ap.add_argument("--calib", action="store_true", help="write only the calibration images calib/NAME/")
    ap.add_argument("--omquant", default=os.path.join(here, "..", "build", "omquant"),
                    help="the omquant that quantizes bert_base")
    ap.add_argument("names", nargs="*", default=list(MODELS))
    args = ap.parse_args()
    for n in args.names:
        if n not in MODELS and n not in OMQUANT or args.calib and n in OMQUANT:
            sys.exit(f"export_qdq: unknown model '{n}' (known: {', '.join(MODELS)}"
                     f"{'' if args.calib else ', ' + ', '.join(OMQUANT)})")
    if args.calib:
        for n in args.names:
            if calibration_up_to_date(n, args.out):
                print(f"models: calib/{n}: up to date in {args.out}")
            else:
                print(f"models: wrote {CALIB} calibration images to {write_calibration(n, args.out, calibration_images())}")
        return
    bench = args.ort_bench
    if not os.path.isdir(os.path.join(os.path.dirname(bench), "node_modules", "onnxruntime-node")):
        print(f"models: no onnxruntime-node beside {bench}: the exports get no ONNX Runtime reference "
              "(NAME_qdq.ort.bin, which tests/model_qdq.py needs); run bench/run.sh once to install it, "
              "or pass --ort-bench with a checkout's bench/ort_bench.js that has it", file=sys.stderr)
        bench = None
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    for n in args.names:
        t = time.time()
        if up_to_date(n, args.out):
            ort_path = os.path.join(args.out, n + "_qdq.ort.bin")
            if not os.path.exists(ort_path) and bench and n in MODELS and write_ort_reference(n, args.out, bench):
                print(f"models: {n}_qdq: wrote its ONNX Runtime reference {ort_path}")
            else:
                print(f"models: {n}_qdq: up to date in {args.out}")
            continue
        path = export_omquant(n, args.out, bench, args.omquant) if n in OMQUANT else export(n, args.out, bench)
        print(f"models: {n}_qdq: wrote {path} ({os.path.getsize(path) / 2**20:.1f} MiB) in {time.time() - t:.1f} s")


if __name__ == "__main__":
    main()
