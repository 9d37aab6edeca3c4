#!/usr/bin/python3
"""atc's per-op precision flags on a small net (Conv + Relu, a residual
Conv + Add + Relu, GlobalAveragePool, Flatten, Gemm, Softmax):
- --keep_dtype: node names and OpType::Name lines; the nodes are reported
  (--log=info) with the file and line; keeping every op type gives the
  must_keep_origin_dtype build's outputs;
- --modify_mixlist: to-add / to-remove move op types between the lists, the
  moved nodes are reported with their list;
- allow_mix_precision measures on --precision_calibration_input (or a
  random sample) and keeps nothing more on a net that is accurate already;
  a sample of the wrong size is refused naming the file;
- --precision_mode_v2: fp16, origin, mixed_float16 build what force_fp16,
  must_keep_origin_dtype and allow_mix_precision build; with
  --precision_mode, or an unknown value, it is refused;
- bad files (unknown node name, unknown op type, malformed JSON, unknown
  list or field, a to-remove of an op type not on the list): one line
  naming the file, the line (and field) and the value, exit 1, no om;
- atc --help documents the flags and the default lists.

Usage: precision_flags.py ATC OMRUN WORK_DIR
"""
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from checks import check, run, summary

def net(path):
    rng = np.random.default_rng(11)
    w = lambda *s: numpy_helper.from_array((rng.standard_normal(s) * 0.3).astype(np.float32))
    inits = [w(16, 3, 3, 3), w(16, 16, 3, 3), w(16, 10), w(10)]
    for t, n in zip(inits, ("w1", "w2", "fc", "fcb")):
        t.name = n
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "r1"], ["a2"], name="add2"),
        helper.make_node("Relu", ["a2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flat"),
        helper.make_node("Gemm", ["f", "fc", "fcb"], ["z"], name="fc"),
        helper.make_node("Softmax", ["z"], ["y"], name="softmax", axis=1),
    ]
    g = helper.make_graph(nodes, "prec", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def main():
    atc, omrun, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    model = f"{work}/net.onnx"
    net(model)
    x = np.random.default_rng(3).standard_normal((1, 3, 8, 8)).astype(np.float32)
    x.tofile(f"{work}/x.bin")

    def write(name, text):
        with open(f"{work}/{name}", "w") as f:
            f.write(text)
        return f"{work}/{name}"

    def build(out, *flags):
        if os.path.exists(f"{work}/{out}.om"):
            os.remove(f"{work}/{out}.om")
        return run(atc, f"--model={model}", "--framework=5", f"--output={work}/{out}", "--soc_version=Ascend310",
                   "--log=info", *flags)

    def output(out):
        p = run(omrun, "--model", f"{work}/{out}.om", "--input", f"{work}/x.bin", "--output", f"{work}/o_{out}")
        return np.fromfile(f"{work}/o_{out}/output_0.bin", np.float32) if p.returncode == 0 else None

    def refused(what, p, *needles, code=1, out=None):
        lines = [l for l in p.stderr.strip().splitlines() if not l.startswith("[INFO]")]
        ok = p.returncode == code and len(lines) == 1 and all(n in lines[0] for n in needles)
        if out:
            ok = ok and not os.path.exists(f"{work}/{out}.om")
        check(what, ok, f"exit {p.returncode}: {p.stderr.strip()}")

    # --keep_dtype: a node name and an op type, reported with file and line
    keep = write("keep.cfg", "# nodes kept in fp32\nconv2\n\nOpType::Gemm\n")
    p = build("keep", "--precision_mode=force_fp16", f"--keep_dtype={keep}")
    check("--keep_dtype: builds", p.returncode == 0, p.stderr)
    lines = [l for l in p.stderr.splitlines() if "precision: node" in l]
    check("--keep_dtype: conv2 reported as fp32 with keep.cfg:2",
          any("'conv2'" in l and "runs in fp32" in l and "keep.cfg:2" in l for l in lines), lines)
    check("--keep_dtype: the Gemm reported with keep.cfg:4 ('Gemm')",
          any("runs in fp32" in l and "keep.cfg:4" in l and "'Gemm'" in l for l in lines), lines)
    check("--keep_dtype: nothing else kept", len(lines) == 2, lines)
    # every op type kept: the fp32 build's outputs
    every = write("every.cfg", "".join(f"OpType::{t}\n" for t in
                                       ("Conv", "Relu", "Add", "GlobalAveragePool", "Flatten", "Gemm", "Softmax")))
    p = build("every", f"--keep_dtype={every}")
    p32 = build("fp32", "--precision_mode=must_keep_origin_dtype")
    p16 = build("fp16", "--precision_mode=force_fp16")
    y_every, y32, y16 = output("every"), output("fp32"), output("fp16")
    check("every op type kept: builds and runs", p.returncode == 0 and y_every is not None, p.stderr)
    if y_every is not None and y32 is not None and y16 is not None:
        check("every op type kept: the fp32 build's output (max diff <= 1e-6)",
              np.abs(y_every - y32).max() <= 1e-6, np.abs(y_every - y32).max())
        check("force_fp16 differs from fp32 (the keep is what closes the gap)", np.abs(y16 - y32).max() > 1e-6,
              np.abs(y16 - y32).max())

    # bad keep_dtype files
    bad = write("keep_bad.cfg", "conv2\nnosuch_node\n")
    refused("--keep_dtype: unknown node name: one line naming file:line and the name, exit 1, no om",
            build("bad1", f"--keep_dtype={bad}"), "keep_bad.cfg:2", "'nosuch_node'", out="bad1")
    bad = write("keep_bad2.cfg", "OpType::Bogus\n")
    refused("--keep_dtype: unknown op type: file:line and the type, exit 1, no om",
            build("bad2", f"--keep_dtype={bad}"), "keep_bad2.cfg:1", "'Bogus'", out="bad2")
    refused("--keep_dtype: a missing file is named, exit 1", build("bad3", f"--keep_dtype={work}/none.cfg"),
            "none.cfg", out="bad3")

    # --customize_dtypes: ATC's lines; a node name wins over an op type, and both over --keep_dtype
    cust = write("custom.cfg", "# ATC's customize_dtypes\nsoftmax::InputDtype:float32,OutputDtype:float32\n"
                 "OpType::Conv:InputDtype:float32,float32,OutputDtype:float32\n"
                 "conv2::InputDtype:float16,float16,OutputDtype:float16\n")
    p = build("custom", "--precision_mode=force_fp16", f"--keep_dtype={keep}", f"--customize_dtypes={cust}")
    check("--customize_dtypes: builds", p.returncode == 0, p.stderr)
    lines = [l for l in p.stderr.splitlines() if "precision: node" in l]
    check("--customize_dtypes: softmax in fp32 with custom.cfg:2",
          any("'softmax'" in l and "runs in fp32" in l and "custom.cfg:2 ('softmax')" in l for l in lines), lines)
    check("--customize_dtypes: conv1 in fp32 by OpType::Conv (custom.cfg:3)",
          any("'conv1'" in l and "runs in fp32" in l and "custom.cfg:3 ('Conv')" in l for l in lines), lines)
    check("--customize_dtypes: conv2's own line (fp16) wins over OpType::Conv and over --keep_dtype",
          any("'conv2'" in l and "runs in fp16" in l and "custom.cfg:4" in l for l in lines)
          and not any("'conv2'" in l and "fp32" in l for l in lines), lines)
    check("--customize_dtypes: --keep_dtype still keeps the Gemm (keep.cfg:4)",
          any("runs in fp32" in l and "keep.cfg:4" in l for l in lines), lines)
    every32 = write("custom_every.cfg", "".join(
        f"OpType::{t}:InputDtype:{','.join(['float32'] * n)},OutputDtype:float32\n"
        for t, n in (("Conv", 2), ("Relu", 1), ("Add", 2), ("GlobalAveragePool", 1), ("Flatten", 1), ("Gemm", 3),
                     ("Softmax", 1))))
    p = build("custom_every", f"--customize_dtypes={every32}")
    y_cust = output("custom_every")
    check("--customize_dtypes every op type float32: builds and runs", p.returncode == 0 and y_cust is not None,
          p.stderr)
    if y_cust is not None and y32 is not None:
        check("--customize_dtypes every op type float32: the fp32 build's output (max diff <= 1e-6)",
              np.abs(y_cust - y32).max() <= 1e-6, np.abs(y_cust - y32).max())
    soft16 = write("custom_soft16.cfg", "OpType::Softmax:InputDtype:float16,OutputDtype:float16\n")
    p = build("custom_mix", "--precision_mode=allow_mix_precision", f"--customize_dtypes={soft16}")
    lines = [l for l in p.stderr.splitlines() if "precision: node" in l]
    check("--customize_dtypes float16 under allow_mix_precision: the Softmax (black list) runs in fp16",
          p.returncode == 0 and any("'softmax'" in l and "runs in fp16" in l for l in lines)
          and not any("'softmax'" in l and "fp32" in l for l in lines), p.stderr[-600:])
    p = build("custom_keep16", "--precision_mode=must_keep_origin_dtype", f"--customize_dtypes={soft16}")
    refused("--customize_dtypes float16 under must_keep_origin_dtype: refused naming the line, no om", p,
            "custom_soft16.cfg:1", "must_keep_origin_dtype", out="custom_keep16")
    for i, (text, needles) in enumerate((
            ("softmax::InputDtype:float16,OutputDtype:float32\n", ("mixed",)),
            ("relu1::InputDtype:float16\nOpType::Relu:InputDtype:float16,OutputDtype:int8\n", ("both lists",)),
            ("OpType::Relu:InputDtype:float16,OutputDtype:int8\n", ("'int8'", "float16 or float32")),
            ("softmax::InputDtype:float32,float32,OutputDtype:float32\n", ("'softmax' (Softmax) has 1 input",)),
            ("nosuch::InputDtype:float32,OutputDtype:float32\n", ("'nosuch'",)),
            ("OpType::Bogus:InputDtype:float32,OutputDtype:float32\n", ("'Bogus'",)),
            ("softmax::float32\n", ("InputDtype",)),
            ("softmax::InputDtype:float33,OutputDtype:float32\n", ("'float33'",)))):
        bad = write(f"custom_bad{i}.cfg", "# bad\n" + text)
        refused(f"--customize_dtypes bad line {text.strip()!r}: one line naming custom_bad{i}.cfg:2, exit 1, no om",
                build(f"cbad{i}", f"--customize_dtypes={bad}"), f"custom_bad{i}.cfg:2", *needles, out=f"cbad{i}")

    # --is_weight_clip: an attention mask as exporters write it, (1 - mask) * fp32's lowest value, and a
    # masked_fill with it (Where); under force_fp16 the constant is stored as -65504 by default (ATC's
    # --is_weight_clip=1), as -inf with 0, where 0 * -inf makes the kept positions NaN
    lowest = numpy_helper.from_array(np.array(np.finfo(np.float32).min, np.float32), "lowest")
    one = numpy_helper.from_array(np.array(1.0, np.float32), "one")
    g = helper.make_graph(
        [helper.make_node("Sub", ["one", "mask"], ["inv"], name="inv"),
         helper.make_node("Mul", ["inv", "lowest"], ["bias"], name="bias"),
         helper.make_node("Add", ["s", "bias"], ["sb"], name="add"),
         helper.make_node("Softmax", ["sb"], ["y"], name="softmax", axis=-1),
         helper.make_node("Cast", ["mask"], ["keep"], name="keep", to=TensorProto.BOOL),
         helper.make_node("Where", ["keep", "s", "lowest"], ["filled"], name="fill"),
         helper.make_node("Softmax", ["filled"], ["y2"], name="softmax2", axis=-1)],
        "mask", [helper.make_tensor_value_info("s", TensorProto.FLOAT, [4, 8]),
                 helper.make_tensor_value_info("mask", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8]),
         helper.make_tensor_value_info("y2", TensorProto.FLOAT, [4, 8])], [lowest, one])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{work}/mask.onnx")
    rng = np.random.default_rng(5)
    s = rng.standard_normal((4, 8)).astype(np.float32)
    mask = (rng.random((4, 8)) < 0.6).astype(np.float32)
    mask[0] = 1  # nothing masked
    mask[3] = 0  # everything masked: both softmaxes are uniform in fp32
    s.tofile(f"{work}/s.bin")
    mask.tofile(f"{work}/mask.bin")
    ref = np.where(mask > 0, s, np.finfo(np.float32).min).astype(np.float64)
    ref = np.exp(ref - ref.max(-1, keepdims=True))
    ref /= ref.sum(-1, keepdims=True)
    ys = {}
    for label, flags in (("default", ()), ("clip1", ("--is_weight_clip=1",)), ("clip0", ("--is_weight_clip=0",))):
        p = run(atc, f"--model={work}/mask.onnx", "--framework=5", f"--output={work}/mask_{label}",
                "--soc_version=Ascend310", *flags)
        q = run(omrun, "--model", f"{work}/mask_{label}.om", "--input", f"{work}/s.bin,{work}/mask.bin", "--output",
                f"{work}/o_mask_{label}")
        ys[label] = [np.fromfile(f"{work}/o_mask_{label}/output_{i}.bin", np.float32).reshape(4, 8)
                     if p.returncode == 0 and q.returncode == 0 else None for i in range(2)]
    for label in ("default", "clip1"):
        y, y2 = ys[label]
        check(f"--is_weight_clip ({label}): fp32's lowest as -65504: both masks give the fp32 softmax (no NaN)",
              y is not None and np.abs(y - ref).max() < 2e-3 and np.abs(y2 - ref).max() < 2e-3,
              None if y is None else (np.abs(y - ref).max(), np.abs(y2 - ref).max()))
    y, y2 = ys["clip0"]
    check("--is_weight_clip=0: the lowest value is -inf: (1 - mask) * -inf is NaN where the mask keeps",
          y is not None and np.isnan(y[0]).all() and np.abs(y2[:3] - ref[:3]).max() < 2e-3,
          None if y is None else y.tolist())
    refused("--is_weight_clip=2: exit 2 naming the value",
            run(atc, f"--model={work}/mask.onnx", "--framework=5", f"--output={work}/mask_bad",
                "--soc_version=Ascend310", "--is_weight_clip=2"), "--is_weight_clip=2: expected 0 or 1", code=2)

    # --modify_mixlist
    mix = write("mix.json", '{\n  "black-list": {"to-add": ["Relu"]},\n'
                            '  "white-list": {"to-remove": ["GlobalAveragePool"]}\n}\n')
    p = build("mix", "--precision_mode=allow_mix_precision", f"--modify_mixlist={mix}")
    check("--modify_mixlist: builds", p.returncode == 0, p.stderr)
    lines = [l for l in p.stderr.splitlines() if "precision: node" in l]
    check("--modify_mixlist: both Conv+Relu nodes black-listed (Relu)",
          sum("(Conv) runs in fp32: black list (Relu)" in l for l in lines) == 2, lines)
    check("--modify_mixlist: the pool, now gray after a fp32 Relu chain, follows it",
          any("gray list, follows" in l and "GlobalAveragePool" in l for l in lines), lines)
    check("allow_mix_precision keeps Softmax in fp32 (default black list)",
          any("black list (Softmax)" in l for l in lines), lines)
    check("--modify_mixlist: the build runs", output("mix") is not None)

    for name, text, needles, what in (
        ("bad1.json", '{"black-list": {"to-add": ["Relu",]}}', ["bad1.json:1", "malformed JSON", "expected a value"], "malformed JSON"),
        ("bad2.json", '{\n "purple-list": {}\n}', ["bad2.json:2", "'purple-list'"], "unknown list name"),
        ("bad3.json", '{"black-list": {\n"to-delete": ["Relu"]}}', ["bad3.json:2", "'to-delete'", "black-list"],
         "unknown field"),
        ("bad4.json", '{"black-list": {"to-add": [\n\n"Nope"]}}', ["bad4.json:3", "black-list.to-add", "'Nope'"],
         "unknown op type"),
        ("bad5.json", '{"black-list": {"to-remove": ["Relu"]}}', ["bad5.json:1", "black-list.to-remove", "'Relu'"],
         "to-remove of an op type not on the list"),
        ("bad6.json", '{"black-list": {"to-add": ["Relu"]}, "white-list": {"to-add": ["Relu"]}}',
         ["bad6.json:1", "'Relu'", "black-list", "white-list"], "one op type added to two lists"),
        ("bad7.json", '["Relu"]', ["bad7.json:1", "expected an object of lists, got an array"], "not an object"),
    ):
        f = write(name, text)
        refused(f"--modify_mixlist: {what}: one line naming file:line, field and value, exit 1, no om",
                build("badm", "--precision_mode=allow_mix_precision", f"--modify_mixlist={f}"), *needles, out="badm")
    refused("--modify_mixlist without allow_mix_precision is refused (exit 2)",
            build("badm", f"--modify_mixlist={mix}"), "--modify_mixlist", "allow_mix_precision", code=2, out="badm")

    # measured: with a sample, and (float inputs) on a random one; an accurate net keeps only the lists'
    p = build("cal", "--precision_mode=allow_mix_precision", f"--precision_calibration_input={work}/x.bin")
    cal = [l for l in p.stderr.splitlines() if "calibration:" in l]
    check("--precision_calibration_input: builds and reports the measured cosine on the calibration input",
          p.returncode == 0 and any("against fp32 on the calibration input" in l for l in cal), p.stderr[-600:])
    check("an accurate net keeps no node beyond the lists' (Softmax)",
          sum("precision: node" in l for l in p.stderr.splitlines()) == 1, p.stderr[-600:])
    p = build("calr", "--precision_mode=allow_mix_precision")
    check("allow_mix_precision measures on a random sample when none is given",
          p.returncode == 0 and any("on the random sample" in l for l in p.stderr.splitlines()), p.stderr[-600:])
    np.zeros(5, np.float32).tofile(f"{work}/short.bin")
    refused("--precision_calibration_input: a file of the wrong size is named, exit 1, no om",
            build("badc", "--precision_mode=allow_mix_precision", f"--precision_calibration_input={work}/short.bin"),
            "short.bin", "bytes of input 0 'x'", out="badc")
    refused("--precision_calibration_input without allow_mix_precision is refused (exit 2)",
            build("badc", f"--precision_calibration_input={work}/x.bin"), "allow_mix_precision", code=2, out="badc")

    # --precision_mode_v2
    for v2, v1 in (("fp16", "force_fp16"), ("origin", "must_keep_origin_dtype"), ("mixed_float16", "allow_mix_precision")):
        a, b = build(f"v2_{v2}", f"--precision_mode_v2={v2}"), build(f"v1_{v2}", f"--precision_mode={v1}")
        ya, yb = output(f"v2_{v2}"), output(f"v1_{v2}")
        check(f"--precision_mode_v2={v2} builds what --precision_mode={v1} builds",
              a.returncode == 0 and ya is not None and yb is not None and np.array_equal(ya, yb) and
              f", {v1}," in a.stdout, a.stdout + a.stderr)
    refused("--precision_mode_v2 with --precision_mode is refused, naming both (exit 2)",
            build("badv", "--precision_mode_v2=fp16", "--precision_mode=force_fp16"), "--precision_mode_v2=fp16",
            "--precision_mode=force_fp16", code=2, out="badv")
    refused("--precision_mode_v2=mixed_bfloat16 is refused as not implemented (exit 2)",
            build("badv", "--precision_mode_v2=mixed_bfloat16"), "mixed_bfloat16", "not implement", code=2, out="badv")
    refused("--precision_mode_v2=bogus is refused (exit 2)", build("badv", "--precision_mode_v2=bogus"), "bogus",
            code=2, out="badv")

    h = run(atc, "--help").stdout
    check("atc --help documents --keep_dtype, --modify_mixlist, --precision_mode_v2 and the lists",
          all(s in h for s in ("--keep_dtype", "--modify_mixlist", "--precision_mode_v2", "OpType::Name",
                               "black list", "Softmax", "white list", "mixed_float16")))

    return summary()


if __name__ == "__main__":
    sys.exit(main())
