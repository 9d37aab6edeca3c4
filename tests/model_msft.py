#!/usr/bin/python3
"""ONNX Runtime's transformer contrib ops (com.microsoft: frontend/onnx_decomp_msft.c) against ORT itself.

For each op, a small graph built here with python3-onnx: the op (the graph's one input one of its float
operands, the rest initializers), its outputs flattened, cast to float and concatenated into the one
output. Each is run by ONNX Runtime (bench/ort_bench.js --output, graph optimizations off; the reference;
numpy's for BiasAdd, which ORT's CPU build does not run) and compiled by atc in
force_fp16 and must_keep_origin_dtype and run by omrun on the same input:

  must_keep_origin_dtype: max |omrun - ORT| <= 1e-4 x max |ORT|;
  force_fp16: cosine >= 0.999 and max |omrun - ORT| <= 2e-2 x max |ORT|.

Where the case has a plain twin (the same computation written with default-domain ONNX ops, as PyTorch
exports it), that twin is compiled too and the two packages must have the same task kinds in the same
order (force_fp16): the decomposition lands in the fusions the plain export gets (one LAYERNORM for
SkipLayerNormalization with its residual, one ATTENTION for Attention, the GELU in the MATMUL epilogue).

--whole NAME:HEADS also takes models/out's NAME.onnx (a float32 transformer export; skipped when missing)
through models/make_msft_fused.py into the fused contrib form (SkipLayerNormalization, BiasGelu,
Attention): ORT's output of the rewrite within 1e-4 x max |ref| of NAME.output.bin, and atc's package of
it the plain model's task kinds in order, with omrun's output byte for byte the plain package's.

Without python3-onnx or ONNX Runtime beside --ort-bench the test is skipped (exit 77).
Usage: tests/model_msft.py [--bin-dir build] [--work-dir DIR] [--ort-bench bench/ort_bench.js]
                           [--models-dir models/out] [--whole NAME:HEADS] [CASE ...]
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

import checks

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIP = 77
MS = "com.microsoft"

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:
    onnx = None

rng = np.random.default_rng(7)


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


class G:
    """A graph being built: one float input x, initializers, nodes; outputs gathered into one float vector."""

    def __init__(self, x_shape):
        self.x = f32(*x_shape)
        self.nodes, self.inits, self.n = [], [], 0

    def init(self, arr):
        name = f"c{self.n}"
        self.n += 1
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(self, op, ins, nout=1, domain="", **attrs):
        outs = [f"t{self.n}_{k}" for k in range(nout)]
        self.n += 1
        self.nodes.append(helper.make_node(op, ins, outs, name=f"{op}_{self.n}", domain=domain, **attrs))
        return outs if nout > 1 else outs[0]

    def model(self, outs, opset=17):
        flat = []
        for o in outs:
            c = self.node("Cast", [o], to=TensorProto.FLOAT)
            flat.append(self.node("Reshape", [c, self.init(np.array([-1], np.int64))]))
        y = self.node("Concat", flat, axis=0) if len(flat) > 1 else flat[0]
        self.nodes.append(helper.make_node("Identity", [y], ["y"], name="out"))
        g = helper.make_graph(self.nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, self.x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid(MS, 1)])
        m.ir_version = 8
        return m


# --- plain-ONNX pieces for the twins

def erf_gelu(g, v):
    d = g.node("Div", [v, g.init(np.array(np.sqrt(2), np.float32))])
    e = g.node("Add", [g.node("Erf", [d]), g.init(np.array(1, np.float32))])
    return g.node("Mul", [g.node("Mul", [v, e]), g.init(np.array(0.5, np.float32))])


def heads(g, v, n):
    r = g.node("Reshape", [v, g.init(np.array([0, 0, n, -1], np.int64))])
    return g.node("Transpose", [r], perm=[0, 2, 1, 3])


def plain_attention(g, q, k, v, n, head, bias=None):
    s = g.node("MatMul", [heads(g, q, n), g.node("Transpose", [heads(g, k, n)], perm=[0, 1, 3, 2])])
    s = g.node("Div", [s, g.init(np.array(np.sqrt(head), np.float32))])
    if bias is not None:
        s = g.node("Add", [s, bias])
    y = g.node("MatMul", [g.node("Softmax", [s], axis=-1), heads(g, v, n)])
    y = g.node("Transpose", [y], perm=[0, 2, 1, 3])
    return g.node("Reshape", [y, g.init(np.array([0, 0, -1], np.int64))])


# --- the cases: each returns (contrib model, input, plain twin or None)

def simple(op, nin_extra, x_shape=(2, 8, 32), **attrs):
    def fn():
        g = G(x_shape)
        ins = ["x"] + [g.init(a) for a in nin_extra]
        return g.model([g.node(op, ins, domain=MS, **attrs)]), g.x, None
    return fn


def case_fast_gelu_mm():
    def build(plain):
        g = G((1, 16, 32))
        w, b = g.init(f32(32, 64, scale=0.2)), g.init(f32(64))
        mm = g.node("MatMul", ["x", w])
        if plain:
            v = g.node("Add", [mm, b])
            cube = g.node("Mul", [g.node("Mul", [v, v]), v])
            inner = g.node("Add", [v, g.node("Mul", [cube, g.init(np.array(0.044715, np.float32))])])
            t = g.node("Tanh", [g.node("Mul", [inner, g.init(np.array(np.sqrt(2 / np.pi), np.float32))])])
            y = g.node("Mul", [g.node("Mul", [v, g.init(np.array(0.5, np.float32))]),
                               g.node("Add", [t, g.init(np.array(1, np.float32))])])
        else:
            y = g.node("FastGelu", [mm, b], domain=MS)
        return g.model([y]), g.x
    m, x = build(False)
    return m, x, build(True)[0]


def case_skip_ln():
    def build(plain):
        g = G((2, 8, 64))
        w, bias = g.init(f32(64, 64, scale=0.15)), g.init(f32(64))
        gamma, beta = g.init(f32(64)), g.init(f32(64))
        mm = g.node("MatMul", ["x", w])
        if plain:
            s = g.node("Add", [g.node("Add", [mm, bias]), "x"])
            y = g.node("LayerNormalization", [s, gamma, beta], epsilon=1e-12)
            outs = [y]
        else:
            y, s = g.node("SkipLayerNormalization", [mm, "x", gamma, beta, bias], nout=4, domain=MS, epsilon=1e-12)[::3]
            outs = [y]
        return g.model(outs), g.x
    m, x = build(False)
    return m, x, build(True)[0]


def case_skip_ln_outputs():
    g = G((2, 8, 64))
    gamma, beta, skip = g.init(f32(64)), g.init(f32(64)), g.init(f32(2, 8, 64))
    outs = g.node("SkipLayerNormalization", ["x", skip, gamma, beta], nout=4, domain=MS, epsilon=1e-5)
    return g.model([outs[0], outs[3]]), g.x, None


def case_skip_simplified():
    g = G((2, 8, 64))
    gamma, skip, bias = g.init(f32(64)), g.init(f32(2, 8, 64)), g.init(f32(64))
    outs = g.node("SkipSimplifiedLayerNormalization", ["x", skip, gamma, bias], nout=4, domain=MS, epsilon=1e-6)
    return g.model([outs[0], outs[3]]), g.x, None


def case_simplified():
    g = G((2, 8, 64))
    y = g.node("SimplifiedLayerNormalization", ["x", g.init(f32(64))], epsilon=1e-6)  # default domain, as ORT has it
    return g.model([y]), g.x, None


def case_layer_norm_opset13():
    """LayerNormalization before opset 17: ORT's own default-domain schema, which its optimizer writes."""
    g = G((2, 8, 64))
    outs = g.node("LayerNormalization", ["x", g.init(f32(64)), g.init(f32(64))], nout=3, epsilon=1e-5)
    return g.model(outs, opset=13), g.x, None


def case_attention(mask_kind):
    n, hid, s, bsz = 4, 64, 16, 2

    def build(plain):
        g = G((bsz, s, hid))
        w, b = f32(hid, 3 * hid, scale=0.15), f32(3 * hid, scale=0.1)
        valid = np.array([s, s - 5], np.int32)
        raw = (np.arange(s)[None, :] < valid[:, None]).astype(np.int32)
        if plain:
            packed = g.node("Add", [g.node("MatMul", ["x", g.init(w)]), g.init(b)])  # as torch's MHA exports it
            qkv = [g.node("Slice", [packed, g.init(np.array([i * hid], np.int64)),
                                    g.init(np.array([(i + 1) * hid], np.int64)), g.init(np.array([-1], np.int64))])
                   for i in range(3)]
            bias = None
            if mask_kind:
                bias = g.init(np.where(raw > 0, 0, -10000).astype(np.float32).reshape(bsz, 1, 1, s))
            y = plain_attention(g, *qkv, n, hid // n, bias)
        else:
            mask = {"": "", "1d": lambda: g.init(valid), "2d": lambda: g.init(raw),
                    "2b": lambda: g.init(np.concatenate([valid, np.zeros(bsz, np.int32)])),
                    "3d": lambda: g.init(np.broadcast_to(raw[:, None, :], (bsz, s, s)).copy())}[mask_kind]
            ins = ["x", g.init(w), g.init(b)] + ([mask()] if mask_kind else [])
            y = g.node("Attention", ins, domain=MS, num_heads=n)
        return g.model([y]), g.x
    m, x = build(False)
    return m, x, build(True)[0] if mask_kind in ("", "2d") else None


def case_attention_causal():
    g = G((1, 16, 64))
    w = g.init(f32(64, 3 * 64, scale=0.15))
    y = g.node("Attention", ["x", w, g.init(f32(3 * 64, scale=0.1))], domain=MS, num_heads=4, unidirectional=1)
    return g.model([y]), g.x, None


def case_mha():
    g = G((2, 16, 64))
    k, v = g.init(f32(2, 24, 64)), g.init(f32(2, 24, 48))
    mask = g.init((np.arange(24)[None, :] < np.array([24, 17])[:, None]).astype(np.int32))
    y = g.node("MultiHeadAttention", ["x", k, v, g.init(f32(64 + 64 + 48, scale=0.1)), mask,
                                      g.init(f32(1, 4, 16, 24, scale=0.5))], domain=MS, num_heads=4)
    return g.model([y]), g.x, None


def case_embed_ln():
    g = G((100, 32))  # the word embedding is the input (omrun and ort_bench feed float tensors)
    ids = g.init(rng.integers(0, 100, (2, 12)).astype(np.int32))
    seg = g.init(rng.integers(0, 2, (2, 12)).astype(np.int32))
    mask = g.init((np.arange(12)[None, :] < np.array([12, 7])[:, None]).astype(np.int32))
    outs = g.node("EmbedLayerNormalization", [ids, seg, "x", g.init(f32(16, 32)), g.init(f32(2, 32)),
                                              g.init(f32(32)), g.init(f32(32)), mask], nout=3, domain=MS, epsilon=1e-12)
    return g.model(outs), g.x, None


def case_bias_add():
    """ONNX Runtime's CPU build has no BiasAdd kernel: the reference is numpy's (X + bias) + skip."""
    g = G((2, 8, 32))
    bias, skip = f32(32), f32(2, 8, 32)
    y = g.node("BiasAdd", ["x", g.init(bias), g.init(skip)], domain=MS)
    return g.model([y]), g.x, None, ((g.x + bias) + skip).astype(np.float32)


def case_fused_matmul():
    g = G((3, 4, 8, 16))
    # transBatch: the leading dim holds the rows ([M, batch.., K]; with trans [K, batch.., M])
    a = g.node("FusedMatMul", ["x", g.init(f32(8, 3, 4, 16))], domain=MS, alpha=0.5, transB=1, transBatchB=1)
    b = g.node("FusedMatMul", [g.init(f32(8, 3, 4, 5)), "x"], domain=MS, transA=1, transBatchA=1)
    return g.model([a, b]), g.x, None


def case_dyn_quant():
    g = G((2, 8, 32))
    w = f32(32, 16)
    s = np.float32(np.abs(w).max() / 127)
    wq = np.clip(np.rint(w / s), -127, 127).astype(np.int8)
    y = g.node("DynamicQuantizeMatMul", ["x", g.init(wq), g.init(np.array([s], np.float32)),
                                         g.init(np.array([0], np.int8)), g.init(f32(16))], domain=MS)
    return g.model([y]), g.x, None


def case_integer_to_float():
    g = G((16, 8))  # b_scale per column is the input; A and B integers
    a = g.init(rng.integers(0, 255, (2, 5, 16)).astype(np.uint8))
    # B in [-64, 63]: without VNNI, ORT's u8 x s8 kernel sums pairs of products in int16 (vpmaddubsw),
    # saturating past 255 x 64 x 2; in this range its output is the model's exact arithmetic.
    b = g.init(rng.integers(-64, 64, (16, 8)).astype(np.int8))
    sc = g.node("ReduceMax", [g.node("Abs", ["x"])], axes=[0], keepdims=0)
    y = g.node("MatMulIntegerToFloat", [a, b, g.init(np.array(0.02, np.float32)), sc,
                                        g.init(np.array(128, np.uint8)), "", g.init(f32(8))], domain=MS)
    return g.model([y]), g.x, None


CASES = {
    "gelu": simple("Gelu", []),
    "fast_gelu": simple("FastGelu", [f32(32)]),
    "fast_gelu_matmul": case_fast_gelu_mm,
    "quick_gelu": simple("QuickGelu", [], alpha=1.5),
    "bias_add": lambda: case_bias_add(),
    "skip_layer_norm": case_skip_ln,
    "skip_layer_norm_sum": case_skip_ln_outputs,
    "skip_simplified_layer_norm": case_skip_simplified,
    "simplified_layer_norm": case_simplified,
    "layer_norm_opset13": case_layer_norm_opset13,
    "attention": lambda: case_attention(""),
    "attention_mask_2d": lambda: case_attention("2d"),
    "attention_mask_1d": lambda: case_attention("1d"),
    "attention_mask_2b": lambda: case_attention("2b"),
    "attention_mask_3d": lambda: case_attention("3d"),
    "attention_causal": case_attention_causal,
    "multihead_attention": case_mha,
    "embed_layer_norm": case_embed_ln,
    "fused_matmul": case_fused_matmul,
    "dynamic_quantize_matmul": case_dyn_quant,
    "matmul_integer_to_float": case_integer_to_float,
}


def case_bias_gelu_mm():
    def build(plain):
        g = G((1, 16, 32))
        w, b = g.init(f32(32, 64, scale=0.2)), g.init(f32(64))
        mm = g.node("MatMul", ["x", w])
        y = erf_gelu(g, g.node("Add", [mm, b])) if plain else g.node("BiasGelu", [mm, b], domain=MS)
        return g.model([y]), g.x
    m, x = build(False)
    return m, x, build(True)[0]


CASES["bias_gelu_matmul"] = case_bias_gelu_mm


def kinds(atc, om):
    j = om[:-3] + ".json"
    p = subprocess.run([atc, "--mode=1", f"--om={om}", f"--json={j}"], capture_output=True, text=True)
    if p.returncode:
        return None
    with open(j) as f:
        return [t.get("kind") for t in json.load(f).get("tasks", [])]


def compile_run(atc, omrun, path, x_path, shape, prec, base):
    p = subprocess.run([atc, f"--model={path}", "--framework=5", f"--output={base}", f"--input_shape=x:{shape}",
                        "--soc_version=Ascend310", f"--precision_mode={prec}"], capture_output=True, text=True)
    if p.returncode:
        return None, f"atc: exit {p.returncode} {p.stderr.strip()[:400]}"
    p = subprocess.run([omrun, "--model", base + ".om", "--input", x_path, "--output", base + "-out", "--loop", "1"],
                       capture_output=True, text=True)
    if p.returncode:
        return None, f"omrun: exit {p.returncode} {p.stderr.strip()[:400]}"
    return np.fromfile(os.path.join(base + "-out", "output_0.bin"), "<f4").astype(np.float64), ""


def whole_model(args, work, spec):
    name, heads = spec.split(":")
    src = os.path.join(args.models_dir, name)
    if not all(os.path.exists(src + k) for k in (".onnx", ".json", ".input.bin", ".output.bin")):
        print(f"info {name}: not in {args.models_dir}, whole-model check skipped")
        return
    with open(src + ".json") as f:
        meta = json.load(f)
    base = os.path.join(work, name + "_msft")
    p = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "models", "make_msft_fused.py"), src + ".onnx",
                        base + ".onnx", "--heads", heads], capture_output=True, text=True)
    if not checks.check(f"{name}: rewritten", p.returncode == 0, (p.stderr or p.stdout).strip()[-300:]):
        return
    print(f"info {name}: {p.stdout.strip()}")
    shape = ",".join(str(d) for d in meta["input_shape"])
    p = subprocess.run(["node", args.ort_bench, "--model", base + ".onnx", "--input", src + ".input.bin", "--shape",
                        shape, "--threads", "1", "--warmup", "0", "--min", "1", "--max", "1", "--output",
                        base + ".ort.bin", "--dtype", meta.get("input_dtype", "float32")], capture_output=True, text=True)
    if not checks.check(f"{name}: ORT runs the rewrite", p.returncode == 0, p.stderr.strip()[-300:]):
        return
    ref, ort = (np.fromfile(f, "<f4").astype(np.float64) for f in (src + ".output.bin", base + ".ort.bin"))
    top, diff = float(np.max(np.abs(ref))), float(np.max(np.abs(ort - ref))) if ort.shape == ref.shape else np.inf
    checks.check(f"{name}: ORT's output of the rewrite vs the reference", diff <= 1e-4 * top,
                 f"max abs error {diff:.3g} of max |ref| {top:.3g}", show=True)
    got, k = [], []
    for path, b in ((src + ".onnx", base + "-plain"), (base + ".onnx", base)):
        p = subprocess.run([os.path.join(args.bin_dir, "atc"), f"--model={path}", "--framework=5", f"--output={b}",
                            f"--input_shape={meta['input']}:{shape}", "--soc_version=Ascend310",
                            "--precision_mode=force_fp16"], capture_output=True, text=True)
        if not checks.check(f"{name}: atc compiles {os.path.basename(path)}", p.returncode == 0, p.stderr.strip()[-300:]):
            return
        k.append(kinds(os.path.join(args.bin_dir, "atc"), b + ".om"))
        subprocess.run([os.path.join(args.bin_dir, "omrun"), "--model", b + ".om", "--input", src + ".input.bin",
                        "--output", b + "-out", "--loop", "1"], capture_output=True, text=True)
        out = os.path.join(b + "-out", "output_0.bin")
        got.append(open(out, "rb").read() if os.path.exists(out) else None)
    checks.check(f"{name}: the plain model's tasks", k[0] is not None and k[0] == k[1],
                 f"{len(k[1] or [])} tasks, plain {len(k[0] or [])}", show=True)
    checks.check(f"{name}: omrun's output equals the plain package's", got[0] is not None and got[0] == got[1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work-dir", default=None)
    ap.add_argument("--ort-bench", default=os.path.join(ROOT, "bench", "ort_bench.js"))
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "models", "out"))
    ap.add_argument("--whole", action="append", default=[], help="NAME:HEADS, a whole model rewritten (top comment)")
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    if onnx is None:
        print("model_msft: SKIP: python3-onnx is not installed")
        return SKIP
    if not os.path.isdir(os.path.join(os.path.dirname(args.ort_bench), "node_modules", "onnxruntime-node")):
        print(f"model_msft: SKIP: no ONNX Runtime (node_modules/onnxruntime-node) beside {args.ort_bench}")
        return SKIP
    work = args.work_dir or os.path.join(args.bin_dir, "e2e", "msft")
    os.makedirs(work, exist_ok=True)
    atc, omrun = os.path.join(args.bin_dir, "atc"), os.path.join(args.bin_dir, "omrun")
    for name in args.cases or CASES:
        model, x, twin, *own = CASES[name]()
        base = os.path.join(work, name)
        onnx.save(model, base + ".onnx")
        x.tofile(base + ".input.bin")
        shape = ",".join(str(d) for d in x.shape)
        if own:  # an op ORT's CPU build does not run
            own[0].tofile(base + ".ort.bin")
        else:
            p = subprocess.run(["node", args.ort_bench, "--model", base + ".onnx", "--input", base + ".input.bin",
                                "--shape", shape, "--threads", "1", "--warmup", "0", "--min", "1", "--max", "1",
                                "--output", base + ".ort.bin", "--opt", "disabled"], capture_output=True, text=True)
            if not checks.check(f"{name}: ORT runs", p.returncode == 0, p.stderr.strip()[-300:]):
                continue
        ref = np.fromfile(base + ".ort.bin", "<f4").astype(np.float64)
        top = float(np.max(np.abs(ref))) or 1.0
        for prec in ("must_keep_origin_dtype", "force_fp16"):
            got, err = compile_run(atc, omrun, base + ".onnx", base + ".input.bin", shape, prec, f"{base}-{prec}")
            if not checks.check(f"{name} {prec}: compiles and runs", got is not None, err):
                continue
            if not checks.check(f"{name} {prec}: output size", got.shape == ref.shape, f"{got.size} vs ORT {ref.size}"):
                continue
            diff, cos = float(np.max(np.abs(got - ref))), checks.cosine(got, ref)
            ok = diff <= 1e-4 * top if prec == "must_keep_origin_dtype" else cos >= 0.999 and diff <= 2e-2 * top
            checks.check(f"{name} {prec}: vs ORT", ok, f"max abs error {diff:.3g} ({diff / top:.2g} of max |ref| "
                         f"{top:.3g}), cosine {cos:.7f}", show=True)
        if twin is not None:
            onnx.save(twin, base + "-plain.onnx")
            k = [None, None]
            for i, (path, b) in enumerate(((base + ".onnx", base + "-force_fp16"), (base + "-plain.onnx", base + "-plain"))):
                if i:
                    compile_run(atc, omrun, path, base + ".input.bin", shape, "force_fp16", b)
                k[i] = kinds(atc, b + ".om")
            checks.check(f"{name}: the plain twin's tasks", k[0] is not None and k[0] == k[1],
                         f"{k[0]} vs plain {k[1]}", show=True)
    for spec in args.whole:
        whole_model(args, work, spec)
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
