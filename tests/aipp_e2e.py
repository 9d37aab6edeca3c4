#!/usr/bin/python3
"""atc --insert_op_conf (AIPP) end to end, against a reference written here
from CANN's AIPP documentation (not from the kernel):

  order: channel swap (rbuv_swap_switch, ax_swap_switch) -> crop -> CSC ->
  mean/min/var_reci -> padding;
  CSC: out_i = clamp(((sum_j matrix_ij * (in_j - input_bias_j)) >> 8) + output_bias_i, 0, 255)
  in integers (>> the arithmetic shift, Python's floor);
  normalisation: pixel_out = (pixel_in - mean_chn_i - min_chn_i) * var_reci_chn_i in f32.

Every input format (YUV420SP_U8 as NV12 and, with rbuv_swap_switch, NV21;
RGB888_U8 and with rbuv_swap BGR; XRGB8888_U8 with and without
ax_swap_switch; YUV400_U8), crop, padding, CSC with both matrices, batch 2,
two image inputs, dynamic AIPP (the parameters as a second input, packed
here from om_format.h's record, one an image: each image its own crop,
padding and normalisation), in must_keep_origin_dtype (f32, exact) and
force_fp16 (the reference rounded once to fp16, exact); the one-line
refusals of bad files, bad run-time images and unsupported combinations;
--mode=6 and --mode=1 show the AIPP.
With --models-dir: ResNet-50 compiled with an NV12 AIPP fed NV12 bytes
against the plain ResNet-50 fed the reference-preprocessed tensor.

Usage: aipp_e2e.py ATC OMRUN WORK_DIR [--models-dir DIR]
"""
import json
import os
import shutil
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

from checks import check, run, summary

FORMATS = {"YUV420SP_U8": 1, "XRGB8888_U8": 2, "RGB888_U8": 3, "YUV400_U8": 4}
JPEG_YUV2RGB = [[256, 0, 359], [256, -88, -183], [256, 454, 0]]
BT601_RGB2YUV = [[66, 129, 25], [-38, -74, 112], [112, -94, -18]]


def image_bytes(fmt, w, h):
    return {"YUV420SP_U8": w * h * 3 // 2, "XRGB8888_U8": w * h * 4, "RGB888_U8": w * h * 3,
            "YUV400_U8": w * h}[fmt]


def reference(raw, cfg, n, c, h, w):
    """The documented AIPP of n images packed in raw (uint8), as float32 [n, c, h, w]."""
    fmt, sw, sh = cfg["input_format"], cfg["src_w"], cfg["src_h"]
    per = image_bytes(fmt, sw, sh)
    out = np.empty((n, c, h, w), np.float32)
    for k in range(n):
        b = raw[k * per:(k + 1) * per].astype(np.int64)
        if fmt == "YUV420SP_U8":
            y = b[:sw * sh].reshape(sh, sw)
            uv = b[sw * sh:].reshape(sh // 2, sw // 2, 2).repeat(2, axis=0).repeat(2, axis=1)
            p = [y, uv[..., 0], uv[..., 1]]
            if cfg.get("rbuv_swap"):
                p = [p[0], p[2], p[1]]
        elif fmt == "YUV400_U8":
            p = [b.reshape(sh, sw)]
        else:
            px = b.reshape(sh, sw, 4 if fmt == "XRGB8888_U8" else 3)
            if fmt == "XRGB8888_U8":
                px = px[..., 0:3] if cfg.get("ax_swap") else px[..., 1:4]
            p = [px[..., 0], px[..., 1], px[..., 2]]
            if cfg.get("rbuv_swap"):
                p = [p[2], p[1], p[0]]
        if cfg.get("crop"):
            x0, y0, cw, ch = cfg["crop_x"], cfg["crop_y"], cfg["crop_w"], cfg["crop_h"]
            p = [q[y0:y0 + ch, x0:x0 + cw] for q in p]
        if cfg.get("csc"):
            m, ib, ob = cfg["matrix"], cfg.get("input_bias", [0] * 3), cfg.get("output_bias", [0] * 3)
            p = [np.clip(((sum(m[i][j] * (p[j] - ib[j]) for j in range(3))) >> 8) + ob[i], 0, 255) for i in range(3)]
        pl, pr, pt, pb = cfg.get("pad", (0, 0, 0, 0))
        for ch in range(c):
            v = (p[ch] - cfg.get("mean", [0] * 4)[ch]).astype(np.float32)
            v = (v - np.float32(cfg.get("min", [0.0] * 4)[ch])) * np.float32(cfg.get("var", [1.0] * 4)[ch])
            out[k, ch] = np.float32(cfg.get("pad_value", 0.0))
            out[k, ch, pt:h - pb, pl:w - pr] = v
    return out


def conf_text(cfg, rank=0):
    """cfg as ATC's aipp_op block."""
    lines = ["aipp_op {", "  aipp_mode: static", f"  related_input_rank: {rank}",
             f"  input_format: {cfg['input_format']}",
             f"  src_image_size_w: {cfg['src_w']}", f"  src_image_size_h: {cfg['src_h']}"]
    for k, key in (("rbuv_swap", "rbuv_swap_switch"), ("ax_swap", "ax_swap_switch")):
        if cfg.get(k):
            lines.append(f"  {key}: true")
    if cfg.get("crop"):
        lines += ["  crop: true", f"  load_start_pos_w: {cfg['crop_x']}", f"  load_start_pos_h: {cfg['crop_y']}",
                  f"  crop_size_w: {cfg['crop_w']}", f"  crop_size_h: {cfg['crop_h']}"]
    if "pad" in cfg:
        l, r, t, b = cfg["pad"]
        lines += ["  padding: true", f"  left_padding_size: {l}", f"  right_padding_size: {r}",
                  f"  top_padding_size: {t}", f"  bottom_padding_size: {b}",
                  f"  padding_value: {cfg.get('pad_value', 0.0)!r}"]
    if cfg.get("csc"):
        lines.append("  csc_switch: true")
        for i in range(3):
            for j in range(3):
                lines.append(f"  matrix_r{i}c{j}: {cfg['matrix'][i][j]}")
        for i in range(3):
            lines.append(f"  input_bias_{i}: {cfg.get('input_bias', [0] * 3)[i]}")
            lines.append(f"  output_bias_{i}: {cfg.get('output_bias', [0] * 3)[i]}")
    for key, name in (("mean", "mean_chn"), ("min", "min_chn"), ("var", "var_reci_chn")):
        for i, v in enumerate(cfg.get(key, [])):
            lines.append(f"  {name}_{i}: {v!r}")
    return "\n".join(lines + ["}", ""])


def pack(cfg, c, h, w):
    """om_format.h's om_aipp_params record (192 bytes) for dynamic AIPP."""
    crop = 1 if cfg.get("crop") else 0
    cx, cy = (cfg["crop_x"], cfg["crop_y"]) if crop else (0, 0)
    cw, ch = (cfg["crop_w"], cfg["crop_h"]) if crop else (cfg["src_w"], cfg["src_h"])
    pad = cfg.get("pad", (0, 0, 0, 0))
    m = cfg.get("matrix", [[0] * 3] * 3)
    rec = struct.pack("<Iii8B", FORMATS[cfg["input_format"]], cfg["src_w"], cfg["src_h"],
                      1 if cfg.get("csc") else 0, 1 if cfg.get("rbuv_swap") else 0, 1 if cfg.get("ax_swap") else 0,
                      crop, 1 if "pad" in cfg else 0, 0, 0, 0)
    rec += struct.pack("<4i", cx, cy, cw, ch) + struct.pack("<4i", *pad)
    rec += struct.pack("<9i", *[m[i][j] for i in range(3) for j in range(3)])
    rec += struct.pack("<3i", *cfg.get("input_bias", [0] * 3)) + struct.pack("<3i", *cfg.get("output_bias", [0] * 3))
    rec += struct.pack("<4i", *(list(cfg.get("mean", [0] * 3)) + [0])[:4])
    rec += struct.pack("<4f", *(list(cfg.get("min", [0.0] * 3)) + [0.0])[:4])
    rec += struct.pack("<4f", *(list(cfg.get("var", [1.0] * 3)) + [1.0])[:4])
    rec += struct.pack("<f", cfg.get("pad_value", 0.0)) + bytes(28)
    assert len(rec) == 192
    return rec


def reference_images(raw, cfgs, c, h, w):
    """reference() of image k by cfgs[k] (dynamic AIPP's per-image records)."""
    per = image_bytes(cfgs[0]["input_format"], cfgs[0]["src_w"], cfgs[0]["src_h"])
    return np.concatenate([reference(raw[k * per:(k + 1) * per], cfg, 1, c, h, w) for k, cfg in enumerate(cfgs)])


def identity_model(path, shapes):
    """Each input i [n, c, h, w] straight to output y<i> (an Identity)."""
    nodes = [helper.make_node("Identity", [f"x{i}"], [f"y{i}"], name=f"id{i}") for i in range(len(shapes))]
    g = helper.make_graph(nodes, "aipp_id",
                          [helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, s) for i, s in enumerate(shapes)],
                          [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, s) for i, s in enumerate(shapes)])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def smooth_image(rng, fmt, w, h, n):
    """n images of random but plausible pixels (the whole uint8 range appears)."""
    return rng.integers(0, 256, size=n * image_bytes(fmt, w, h), dtype=np.uint8)


def compile_om(atc, work, name, model, shape, conf, precision, *flags):
    """atc with conf as --insert_op_conf: (the om's path, "") or (None, atc's error)."""
    cf = os.path.join(work, name + ".cfg")
    with open(cf, "w") as f:
        f.write(conf)
    om = os.path.join(work, name)
    r = run(atc, f"--model={model}", "--framework=5", f"--output={om}", f"--input_shape={shape}",
            "--soc_version=Ascend310", f"--precision_mode={precision}", f"--insert_op_conf={cf}", *flags)
    return (om + ".om", "") if r.returncode == 0 else (None, r.stderr.strip())


def run_om(omrun, work, name, om, inputs, nout, *flags):
    """omrun on om with inputs (bytes each): (the float32 outputs, "") or (None, omrun's error)."""
    files = []
    for i, data in enumerate(inputs):
        p = os.path.join(work, f"{name}_in{i}.bin")
        with open(p, "wb") as f:
            f.write(data)
        files.append(p)
    out = os.path.join(work, name + "_out")
    r = run(omrun, "--model", om, "--input", ",".join(files), "--output", out, *flags)
    if r.returncode != 0:
        return None, r.stderr.strip()
    return [np.fromfile(os.path.join(out, f"output_{i}.bin"), np.float32) for i in range(nout)], ""


def compile_run(atc, omrun, work, name, model, shape, conf, precision, inputs, nout):
    om, err = compile_om(atc, work, name, model, shape, conf, precision)
    if om is None:
        return None, err
    return run_om(omrun, work, name, om, inputs, nout)


def expect(ref, precision):
    return ref.astype(np.float16).astype(np.float32) if precision == "force_fp16" else ref


CASES = [
    ("nv12_csc_norm", {"input_format": "YUV420SP_U8", "src_w": 12, "src_h": 8, "csc": True, "matrix": JPEG_YUV2RGB,
                       "input_bias": [0, 128, 128], "mean": [124, 116, 104], "min": [0.5, 0.25, 0.0],
                       "var": [0.017125, 0.017507, 0.017429]}, (1, 3, 8, 12)),
    ("nv21_crop", {"input_format": "YUV420SP_U8", "src_w": 16, "src_h": 12, "rbuv_swap": True, "crop": True,
                   "crop_x": 2, "crop_y": 4, "crop_w": 10, "crop_h": 6, "csc": True, "matrix": JPEG_YUV2RGB,
                   "input_bias": [0, 128, 128]}, (1, 3, 6, 10)),
    ("nv12_raw_pad", {"input_format": "YUV420SP_U8", "src_w": 8, "src_h": 6, "pad": (1, 2, 3, 1),
                      "pad_value": -1.5, "mean": [16, 128, 128]}, (1, 3, 10, 11)),
    ("rgb_batch2", {"input_format": "RGB888_U8", "src_w": 9, "src_h": 7, "mean": [123, 117, 104],
                    "var": [1 / 58.395, 1 / 57.12, 1 / 57.375]}, (2, 3, 7, 9)),
    ("bgr_crop_pad", {"input_format": "RGB888_U8", "src_w": 20, "src_h": 10, "rbuv_swap": True, "crop": True,
                      "crop_x": 3, "crop_y": 1, "crop_w": 13, "crop_h": 8, "pad": (2, 1, 0, 2), "pad_value": 7.0},
     (1, 3, 10, 16)),
    ("rgb2yuv_csc", {"input_format": "RGB888_U8", "src_w": 8, "src_h": 8, "csc": True, "matrix": BT601_RGB2YUV,
                     "output_bias": [16, 128, 128], "min": [16.0, 128.0, 128.0], "var": [0.1, 0.2, -0.2]},
     (1, 3, 8, 8)),
    ("xrgb", {"input_format": "XRGB8888_U8", "src_w": 10, "src_h": 5, "mean": [1, 2, 3]}, (1, 3, 5, 10)),
    ("rgbx_axswap_bgr", {"input_format": "XRGB8888_U8", "src_w": 10, "src_h": 5, "ax_swap": True, "rbuv_swap": True,
                         "var": [2.0, 0.5, 0.25]}, (1, 3, 5, 10)),
    ("yuv400", {"input_format": "YUV400_U8", "src_w": 14, "src_h": 9, "crop": True, "crop_x": 1, "crop_y": 2,
                "crop_w": 12, "crop_h": 6, "mean": [128], "var": [1 / 128.0]}, (2, 1, 6, 12)),
]


def static_cases(atc, omrun, work, rng):
    for name, cfg, shape in CASES:
        n, c, h, w = shape
        model = identity_model(os.path.join(work, name + ".onnx"), [list(shape)])
        raw = smooth_image(rng, cfg["input_format"], cfg["src_w"], cfg["src_h"], n)
        ref = reference(raw, cfg, n, c, h, w)
        for precision in ("must_keep_origin_dtype", "force_fp16"):
            outs, err = compile_run(atc, omrun, work, f"{name}_{precision}", model, f"x0:{n},{c},{h},{w}",
                                    conf_text(cfg), precision, [raw.tobytes()], 1)
            if outs is None:
                check(f"{name} {precision}", False, err)
                continue
            want = expect(ref, precision).ravel()
            bad = np.flatnonzero(outs[0] != want)
            check(f"{name} {precision}: bit-exact against the documented formulas", len(bad) == 0,
                  f"{len(bad)} of {want.size} differ, first at {bad[:1]}: {outs[0][bad[:1]]} vs {want[bad[:1]]}")


def two_inputs(atc, omrun, work, rng):
    a = {"input_format": "YUV420SP_U8", "src_w": 8, "src_h": 4, "csc": True, "matrix": JPEG_YUV2RGB,
         "input_bias": [0, 128, 128], "mean": [100, 100, 100]}
    b = {"input_format": "YUV400_U8", "src_w": 6, "src_h": 6, "var": [0.5]}
    model = identity_model(os.path.join(work, "two.onnx"), [[1, 3, 4, 8], [1, 1, 6, 6]])
    ra, rb = smooth_image(rng, "YUV420SP_U8", 8, 4, 1), smooth_image(rng, "YUV400_U8", 6, 6, 1)
    conf = conf_text(a, 0) + conf_text(b, 1)
    outs, err = compile_run(atc, omrun, work, "two", model, "x0:1,3,4,8;x1:1,1,6,6", conf, "must_keep_origin_dtype",
                            [ra.tobytes(), rb.tobytes()], 2)
    check("two image inputs (related_input_rank 0 and 1) compile and run", outs is not None, err)
    if outs is not None:
        check("two inputs: input 0 (NV12 + CSC) exact", np.array_equal(outs[0], reference(ra, a, 1, 3, 4, 8).ravel()))
        check("two inputs: input 1 (YUV400) exact", np.array_equal(outs[1], reference(rb, b, 1, 1, 6, 6).ravel()))
    om = os.path.join(work, "two.om")
    r = run(atc, "--mode=6", f"--om={om}")
    check("--mode=6 shows both AIPPs", r.returncode == 0 and r.stdout.count("aipp:") == 2 and
          "YUV420SP_U8 8x4" in r.stdout and " u8 " in r.stdout, r.stdout + r.stderr)
    js = os.path.join(work, "two.json")
    r = run(atc, "--mode=1", f"--om={om}", f"--json={js}")
    ok = r.returncode == 0
    if ok:
        doc = json.load(open(js))
        tasks = [t for t in doc["tasks"] if t["kind"] == "AIPP"]
        ok = len(tasks) == 2 and tasks[0]["params"]["aipp_mode"] == "static" and \
            tasks[0]["params"]["input_format"] == "YUV420SP_U8" and tasks[1]["params"]["input_format"] == "YUV400_U8"
    check("--mode=1 dumps both AIPP tasks with their parameters", ok, r.stderr)


def dynamic_case(atc, omrun, work, rng):
    model = identity_model(os.path.join(work, "dyn.onnx"), [[2, 3, 6, 8]])
    conf = "aipp_op {\n  aipp_mode: dynamic\n  related_input_rank: 0\n  max_src_image_size: 400\n}\n"
    cfg = {"input_format": "YUV420SP_U8", "src_w": 16, "src_h": 10, "crop": True, "crop_x": 4, "crop_y": 2,
           "crop_w": 8, "crop_h": 6, "csc": True, "matrix": JPEG_YUV2RGB, "input_bias": [0, 128, 128],
           "mean": [10, 20, 30], "var": [0.5, 0.25, 2.0]}
    # Image 1 its own crop, padding and normalisation (AscendCL's batchIndex); format, size and CSC shared.
    cfg1 = dict(cfg, crop_x=6, crop_y=4, crop_w=6, crop_h=4, pad=(1, 1, 2, 0), pad_value=-3.0, mean=[1, 2, 3],
                min=[0.5, 0.0, 4.0], var=[1.0, -1.0, 0.125])
    raw = smooth_image(rng, "YUV420SP_U8", 16, 10, 2)  # 240 bytes an image; the input holds 2 x 400
    buf = np.zeros(800, np.uint8)
    buf[:raw.size] = raw
    outs, err = compile_run(atc, omrun, work, "dyn", model, "x0:2,3,6,8", conf, "force_fp16",
                            [buf.tobytes(), pack(cfg, 3, 6, 8) * 2], 1)
    check("dynamic AIPP compiles (input 1 is ascend_dynamic_aipp_data) and runs", outs is not None, err)
    if outs is not None:
        want = expect(reference(raw, cfg, 2, 3, 6, 8), "force_fp16").ravel()
        check("dynamic AIPP (NV12, crop, CSC, batch 2, one set for both images) exact", np.array_equal(outs[0], want))
    outs, err = run_om(omrun, work, "dyn_per_image", os.path.join(work, "dyn.om"),
                       [buf.tobytes(), pack(cfg, 3, 6, 8) + pack(cfg1, 3, 6, 8)], 1)
    want = expect(reference_images(raw, [cfg, cfg1], 3, 6, 8), "force_fp16").ravel()
    check("dynamic AIPP, a record an image (image 1: its own crop, padding, mean, min, var_reci) exact",
          outs is not None and np.array_equal(outs[0], want), err)
    r = run(atc, "--mode=6", f"--om={os.path.join(work, 'dyn.om')}")
    check("--mode=6 shows the dynamic AIPP", "aipp:       input 0 dynamic" in r.stdout and
          "ascend_dynamic_aipp_data" in r.stdout and "[2, 192]" in r.stdout, r.stdout + r.stderr)
    # Parameters the model cannot take, at run time: one line, exit 1.
    for what, bad, text in (
            ("an image larger than max_src_image_size", [dict(cfg, src_w=32, src_h=16, crop_x=0)] * 2, "bytes"),
            ("a crop outside the image", [dict(cfg, crop_x=10)] * 2, "crop"),
            ("an output size the model does not take", [dict(cfg, crop_w=6)] * 2, "model input"),
            ("image 1's crop outside the image", [cfg, dict(cfg1, crop_x=12)], "image 1: crop"),
            ("images that differ in what they share (the swap)", [cfg, dict(cfg1, rbuv_swap=True)],
             "image 1's format, image size, swaps or csc differ")):
        p = os.path.join(work, "dyn_bad.bin")
        with open(p, "wb") as f:
            f.write(b"".join(pack(b, 3, 6, 8) for b in bad))
        r = run(omrun, "--model", os.path.join(work, "dyn.om"), "--input",
                os.path.join(work, "dyn_in0.bin") + "," + p, "--output", os.path.join(work, "dyn_bad_out"))
        lines = r.stderr.strip().splitlines()
        check(f"dynamic AIPP refuses {what} at run time (one line, exit 1)",
              r.returncode == 1 and len(lines) == 1 and "AIPP" in lines[0] and text in lines[0], r.stderr)


def refusals(atc, omrun, work):
    model = identity_model(os.path.join(work, "bad.onnx"), [[1, 3, 8, 8]])
    good = "aipp_op {\n  aipp_mode: static\n  input_format: RGB888_U8\n"
    bad = [
        ("an unknown key", good + "  colour: 3\n}\n", ":4: unknown key 'colour' = '3'"),
        ("an out-of-range value", good + "  mean_chn_0: 300\n}\n", ":4: key 'mean_chn_0' = '300'"),
        ("a bad format", "aipp_op {\n  input_format: NV12\n}\n", ":2: key 'input_format' = 'NV12': not an input"),
        ("a size that disagrees with the model", good + "  src_image_size_w: 10\n  src_image_size_h: 8\n}\n",
         ":4: key 'src_image_size_w/h' = '10x8'"),
        ("a format that disagrees with the model's channels", "aipp_op {\n  input_format: YUV400_U8\n}\n",
         ":2: key 'input_format' = 'YUV400_U8' gives 1 channel"),
        ("a crop outside the image", good + "  src_image_size_w: 10\n  src_image_size_h: 10\n  crop: true\n"
         "  load_start_pos_w: 4\n  crop_size_w: 8\n  crop_size_h: 8\n}\n", "leaves the 10x10 image"),
        ("scaling, which Ascend310's AIPP lacks (its SoC file says)", good + "  resize: true\n}\n",
         ":4: key 'resize' = 'true': this SoC's AIPP does not scale (" ),
        ("a scaling size", good + "  resize: false\n  resize_output_w: 8\n}\n",
         ":5: key 'resize_output_w' = '8': this SoC's AIPP does not scale"),
        ("a format ATC names that Ascend310's AIPP does not read", "aipp_op {\n  input_format: YUYV_U8\n}\n",
         ":2: key 'input_format' = 'YUYV_U8': not an input format of this SoC; Ascend310's AIPP reads "
         "YUV420SP_U8 XRGB8888_U8 RGB888_U8 YUV400_U8 ("),
        ("rotation", good + "  rotation: true\n}\n", ":4: key 'rotation' = 'true': not supported by this atc"),
        ("a missing input", good + "  related_input_rank: 3\n}\n", "key 'related_input_rank' = '3'"),
        ("static keys in dynamic mode", "aipp_op {\n  aipp_mode: dynamic\n  max_src_image_size: 100\n"
         "  input_format: RGB888_U8\n}\n", ":4: key 'input_format': dynamic AIPP"),
    ]
    for what, text, want in bad:
        cf = os.path.join(work, "bad.cfg")
        with open(cf, "w") as f:
            f.write(text)
        out = os.path.join(work, "bad_out")
        r = run(atc, f"--model={model}", "--framework=5", f"--output={out}", "--soc_version=Ascend310",
                f"--insert_op_conf={cf}")
        lines = r.stderr.strip().splitlines()
        check(f"atc refuses {what} (one line naming file, line, key and value; exit 1; nothing written)",
              r.returncode == 1 and len(lines) == 1 and want in lines[0] and "bad.cfg" in lines[0] and
              not os.path.exists(out + ".om"), r.stderr)
    cf = os.path.join(work, "ok.cfg")
    with open(cf, "w") as f:
        f.write(good + "}\n")
    # What ATC forbids stays refused: one line naming the flag or the key, nothing written.
    crop = good + "  src_image_size_w: 10\n  src_image_size_h: 10\n  crop: true\n  crop_size_w: 8\n" \
        "  crop_size_h: 8\n}\n"
    for what, text, flags, want in (
            ("AIPP with --dynamic_dims", good + "}\n", ["--input_shape=x0:1,3,-1,-1", "--dynamic_dims=8,8;6,6"],
             "--insert_op_conf with --dynamic_dims: AIPP and dynamic dims"),
            ("AIPP with --input_format=ND", good + "}\n", ["--input_format=ND"], "--input_format=ND: AIPP takes"),
            ("static AIPP with a crop and --dynamic_image_size", crop,
             ["--input_shape=x0:1,3,-1,-1", "--dynamic_image_size=8,8;6,6"], "bad.cfg:6: key 'crop': with"),
            ("static AIPP with src_image_size_w and --dynamic_image_size", good + "  src_image_size_w: 8\n}\n",
             ["--input_shape=x0:1,3,-1,-1", "--dynamic_image_size=8,8;6,6"], "bad.cfg:4: key 'src_image_size_w'")):
        cf = os.path.join(work, "bad.cfg")
        with open(cf, "w") as f:
            f.write(text)
        out = os.path.join(work, "bad_out")
        r = run(atc, f"--model={model}", "--framework=5", f"--output={out}", "--soc_version=Ascend310",
                f"--insert_op_conf={cf}", *flags)
        lines = r.stderr.strip().splitlines()
        check(f"atc refuses {what} (one line naming the flag or key; exit 1; nothing written)",
              r.returncode == 1 and len(lines) == 1 and want in lines[0] and not os.path.exists(out + ".om"), r.stderr)
    r = run(atc, f"--model={model}", "--framework=5", f"--output={os.path.join(work, 'g')}", "--soc_version=Ascend310",
            f"--insert_op_conf={cf}")
    ok = r.returncode == 0
    if ok:  # a wrong-size image at run time
        p = os.path.join(work, "short.bin")
        with open(p, "wb") as f:
            f.write(bytes(100))
        r = run(omrun, "--model", os.path.join(work, "g.om"), "--input", p, "--output", os.path.join(work, "g_out"))
        lines = r.stderr.strip().splitlines()
        ok = r.returncode == 1 and len(lines) == 1 and "has 100 bytes" in lines[0] and "expects 192" in lines[0]
    check("omrun refuses a wrong-size image (one line, exit 1)", ok, r.stderr)


# Static AIPP under batch gears: (name, cfg, the model input's C, H, W).
GEAR_CASES = [
    ("gb_nv12_crop", {"input_format": "YUV420SP_U8", "src_w": 16, "src_h": 10, "crop": True, "crop_x": 2, "crop_y": 2,
                      "crop_w": 10, "crop_h": 6, "csc": True, "matrix": JPEG_YUV2RGB, "input_bias": [0, 128, 128],
                      "mean": [10, 20, 30]}, (3, 6, 10)),
    ("gb_rgb_crop_pad", {"input_format": "RGB888_U8", "src_w": 12, "src_h": 9, "crop": True, "crop_x": 1, "crop_y": 2,
                         "crop_w": 9, "crop_h": 6, "pad": (1, 2, 0, 2), "pad_value": -3.0, "var": [0.5, 0.25, 2.0]},
     (3, 8, 12)),
    ("gb_xrgb_pad", {"input_format": "XRGB8888_U8", "src_w": 7, "src_h": 5, "pad": (2, 0, 1, 1), "pad_value": 1.5,
                     "mean": [1, 2, 3]}, (3, 7, 9)),
]


def raw_dims(cfg, n):
    """The raw image input's dims as --mode=6 prints them ([N, H, W, C]; NV12 [N, H*3/2, W, 1])."""
    fmt, w, h = cfg["input_format"], cfg["src_w"], cfg["src_h"]
    if fmt == "YUV420SP_U8":
        return f"[{n}, {h * 3 // 2}, {w}, 1]"
    return f"[{n}, {h}, {w}, {dict(XRGB8888_U8=4, RGB888_U8=3, YUV400_U8=1)[fmt]}]"


def input_line(atc, om):
    r = run(atc, "--mode=6", f"--om={om}")
    lines = [x for x in r.stdout.splitlines() if x.startswith("  0  ")]
    return lines[0] if lines else r.stdout + r.stderr


def batch_gears(atc, omrun, work, rng):
    """Static AIPP on a model compiled with --dynamic_batch_size: every gear's graph has it; the input holds the
    largest gear's images (ATC's input-size rule, N the largest gear); each gear runs its batch."""
    gears = (1, 2, 4)
    for name, cfg, (c, h, w) in GEAR_CASES:
        model = identity_model(os.path.join(work, name + ".onnx"), [["N", c, h, w]])
        om, err = compile_om(atc, work, name, model, f"x0:-1,{c},{h},{w}", conf_text(cfg), "must_keep_origin_dtype",
                             "--dynamic_batch_size=1,2,4")
        if not check(f"{name}: static AIPP with --dynamic_batch_size=1,2,4 compiles", om, err):
            continue
        per = image_bytes(cfg["input_format"], cfg["src_w"], cfg["src_h"])
        line = input_line(atc, om)
        check(f"{name}: input 0 is u8 {raw_dims(cfg, -1)}, the largest gear's {4 * per} bytes",
              " u8 " in line and raw_dims(cfg, -1) in line and f" {4 * per} bytes" in line, line)
        for n in gears:
            raw = smooth_image(rng, cfg["input_format"], cfg["src_w"], cfg["src_h"], n)
            outs, err = run_om(omrun, work, f"{name}_b{n}", om, [raw.tobytes()], 1, "--dymBatch", str(n))
            check(f"{name}: --dymBatch {n} bit-exact against the documented formulas",
                  outs is not None and np.array_equal(outs[0], reference(raw, cfg, n, c, h, w).ravel()), err)


def dynamic_batch_gears(atc, omrun, work, rng):
    """Dynamic AIPP with --dynamic_batch_size: the image input holds the largest gear's images of
    max_src_image_size bytes, the parameters input a record an image; a gear of batch n reads the first n."""
    model = identity_model(os.path.join(work, "gbd.onnx"), [["N", 3, 6, 8]])
    conf = "aipp_op {\n  aipp_mode: dynamic\n  max_src_image_size: 400\n}\n"
    om, err = compile_om(atc, work, "gbd", model, "x0:-1,3,6,8", conf, "force_fp16", "--dynamic_batch_size=1,3")
    if not check("dynamic AIPP with --dynamic_batch_size=1,3 compiles", om, err):
        return
    line = input_line(atc, om)
    check("dynamic AIPP with batch gears: input 0 is u8 [-1, 400], the largest gear's 1200 bytes",
          "[-1, 400]" in line and " 1200 bytes" in line, line)
    cfg = {"input_format": "YUV420SP_U8", "src_w": 16, "src_h": 10, "crop": True, "crop_x": 4, "crop_y": 2,
           "crop_w": 8, "crop_h": 6, "csc": True, "matrix": JPEG_YUV2RGB, "input_bias": [0, 128, 128],
           "mean": [10, 20, 30], "var": [0.5, 0.25, 2.0]}
    for n in (1, 3):
        raw = smooth_image(rng, "YUV420SP_U8", 16, 10, n)
        buf = np.zeros(n * 400, np.uint8)
        buf[:raw.size] = raw
        outs, err = run_om(omrun, work, f"gbd_b{n}", om, [buf.tobytes(), pack(cfg, 3, 6, 8) * n], 1,
                           "--dymBatch", str(n))
        want = expect(reference(raw, cfg, n, 3, 6, 8), "force_fp16").ravel()
        check(f"dynamic AIPP, --dymBatch {n}: NV12, crop, CSC exact", outs is not None and np.array_equal(outs[0], want),
              err)
        cfgs = [dict(cfg, crop_x=2 * k, crop_y=2 * (2 - k), mean=[10 * k, 20, 30 - k]) for k in range(n)]
        outs, err = run_om(omrun, work, f"gbd_pi{n}", om,
                           [buf.tobytes(), b"".join(pack(c, 3, 6, 8) for c in cfgs)], 1, "--dymBatch", str(n))
        want = expect(reference_images(raw, cfgs, 3, 6, 8), "force_fp16").ravel()
        check(f"dynamic AIPP, --dymBatch {n}: each image its own crop and mean exact",
              outs is not None and np.array_equal(outs[0], want), err)
    outs, err = run_om(omrun, work, "gbd_bad", om, [bytes(1200), pack(cfg, 3, 6, 8) * 2 +
                                                    pack(dict(cfg, crop_x=10), 3, 6, 8)], 1, "--dymBatch", "3")
    check("dynamic AIPP with batch gears refuses a crop outside the image at run time (one line)",
          outs is None and len(err.splitlines()) == 1 and "AIPP" in err and "image 2: crop" in err, err)


def image_gears(atc, omrun, work, rng):
    """--dynamic_image_size: static AIPP without crop, padding or image size (ATC's rule): the image is each gear's
    H x W; dynamic AIPP takes each gear's image size at run time, without crop or padding."""
    gears = ((6, 8), (10, 12))
    model = identity_model(os.path.join(work, "gi.onnx"), [[2, 3, "H", "W"]])
    flags = ("--dynamic_image_size=6,8;10,12",)
    for name, cfg in (("gi_nv12", {"input_format": "YUV420SP_U8", "src_w": 0, "src_h": 0, "csc": True,
                                   "matrix": JPEG_YUV2RGB, "input_bias": [0, 128, 128], "mean": [5, 6, 7]}),
                      ("gi_rgb", {"input_format": "RGB888_U8", "src_w": 0, "src_h": 0, "rbuv_swap": True,
                                  "min": [0.5, 1.5, 2.5], "var": [0.25, 0.5, 2.0]})):
        om, err = compile_om(atc, work, name, model, "x0:2,3,-1,-1", conf_text(cfg), "must_keep_origin_dtype", *flags)
        if not check(f"{name}: static AIPP (src_image_size 0) with --dynamic_image_size compiles", om, err):
            continue
        big = image_bytes(cfg["input_format"], 12, 10) * 2
        line = input_line(atc, om)
        check(f"{name}: input 0 holds the largest gear's {big} bytes", f" {big} bytes" in line, line)
        for h, w in gears:
            g = dict(cfg, src_w=w, src_h=h)
            raw = smooth_image(rng, cfg["input_format"], w, h, 2)
            outs, err = run_om(omrun, work, f"{name}_{h}x{w}", om, [raw.tobytes()], 1, "--dymHW", f"{h},{w}")
            check(f"{name}: --dymHW {h},{w} bit-exact against the documented formulas",
                  outs is not None and np.array_equal(outs[0], reference(raw, g, 2, 3, h, w).ravel()), err)
    conf = "aipp_op {\n  aipp_mode: dynamic\n  max_src_image_size: 360\n}\n"
    om, err = compile_om(atc, work, "gid", model, "x0:2,3,-1,-1", conf, "must_keep_origin_dtype", *flags)
    if not check("dynamic AIPP with --dynamic_image_size compiles", om, err):
        return
    for h, w in gears:
        cfg = {"input_format": "RGB888_U8", "src_w": w, "src_h": h, "mean": [100, 110, 120]}
        raw = smooth_image(rng, "RGB888_U8", w, h, 2)
        buf = np.zeros(720, np.uint8)
        buf[:raw.size] = raw
        outs, err = run_om(omrun, work, f"gid_{h}x{w}", om, [buf.tobytes(), pack(cfg, 3, h, w) * 2], 1, "--dymHW",
                           f"{h},{w}")
        check(f"dynamic AIPP, --dymHW {h},{w}: the gear's image size exact",
              outs is not None and np.array_equal(outs[0], reference(raw, cfg, 2, 3, h, w).ravel()), err)
    for what, cfg in (("a crop", {"input_format": "RGB888_U8", "src_w": 10, "src_h": 8, "crop": True, "crop_x": 2,
                                  "crop_y": 2, "crop_w": 8, "crop_h": 6}),
                      ("the other gear's size", {"input_format": "RGB888_U8", "src_w": 12, "src_h": 10})):
        outs, err = run_om(omrun, work, "gid_bad", om, [bytes(720), pack(cfg, 3, 6, 8) * 2], 1, "--dymHW", "6,8")
        check(f"dynamic AIPP with image size gears refuses {what} at run time (one line)",
              outs is None and len(err.splitlines()) == 1 and "AIPP" in err, err)


def nhwc_model(path, shape, transpose):
    """x0 [N, H, W, C] to y0: through a Transpose to NCHW (a channels-last model's first layer), or as it is."""
    node = helper.make_node("Transpose", ["x0"], ["y0"], perm=[0, 3, 1, 2]) if transpose else \
        helper.make_node("Identity", ["x0"], ["y0"])
    n, h, w, c = shape
    out = [n, c, h, w] if transpose else shape
    g = helper.make_graph([node], "aipp_nhwc", [helper.make_tensor_value_info("x0", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("y0", TensorProto.FLOAT, out)])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def nhwc(atc, omrun, work, rng):
    """--input_format=NHWC (ATC takes NCHW or NHWC with AIPP): AIPP gives the image in front of the NHWC input."""
    cfg = {"input_format": "YUV420SP_U8", "src_w": 12, "src_h": 8, "crop": True, "crop_x": 2, "crop_y": 0,
           "crop_w": 9, "crop_h": 6, "pad": (0, 1, 1, 1), "pad_value": 2.5, "csc": True, "matrix": JPEG_YUV2RGB,
           "input_bias": [0, 128, 128], "var": [0.5, 0.25, 0.125]}
    for transpose in (1, 0):
        name = "nhwc_t" if transpose else "nhwc_id"
        model = nhwc_model(os.path.join(work, name + ".onnx"), ["N", 8, 10, 3], transpose)
        om, err = compile_om(atc, work, name, model, "x0:-1,8,10,3", conf_text(cfg), "must_keep_origin_dtype",
                             "--input_format=NHWC", "--dynamic_batch_size=1,2")
        if not check(f"{name}: AIPP with --input_format=NHWC and batch gears compiles", om, err):
            continue
        js = os.path.join(work, name + ".json")
        r = run(atc, "--mode=1", f"--om={om}", f"--json={js}")
        kinds = [t["kind"] for t in json.load(open(js))["tasks"]] if r.returncode == 0 else []
        if transpose:
            check(f"{name}: the model's Transpose to NCHW reads AIPP's image (a gear: AIPP, the output's TransData)",
                  kinds == ["AIPP", "TRANSDATA"] * 2, kinds)
        for n in (1, 2):
            raw = smooth_image(rng, "YUV420SP_U8", 12, 8, n)
            ref = reference(raw, cfg, n, 3, 8, 10)
            outs, err = run_om(omrun, work, f"{name}_b{n}", om, [raw.tobytes()], 1, "--dymBatch", str(n))
            want = ref if transpose else ref.transpose(0, 2, 3, 1)
            check(f"{name}: --dymBatch {n} bit-exact ({'NCHW after the Transpose' if transpose else 'NHWC'})",
                  outs is not None and np.array_equal(outs[0], want.ravel()), err)
    model = nhwc_model(os.path.join(work, "nhwc_hw.onnx"), [1, "H", "W", 3], 1)
    g = {"input_format": "RGB888_U8", "src_w": 0, "src_h": 0, "mean": [1, 2, 3]}
    om, err = compile_om(atc, work, "nhwc_hw", model, "x0:1,-1,-1,3", conf_text(g), "must_keep_origin_dtype",
                         "--input_format=NHWC", "--dynamic_image_size=4,6;6,4")
    if check("AIPP with --input_format=NHWC and --dynamic_image_size compiles", om, err):
        for h, w in ((4, 6), (6, 4)):
            raw = smooth_image(rng, "RGB888_U8", w, h, 1)
            outs, err = run_om(omrun, work, f"nhwc_hw_{h}x{w}", om, [raw.tobytes()], 1, "--dymHW", f"{h},{w}")
            ref = reference(raw, dict(g, src_w=w, src_h=h), 1, 3, h, w)
            check(f"NHWC, --dymHW {h},{w} bit-exact", outs is not None and np.array_equal(outs[0], ref.ravel()), err)


def resnet50(atc, omrun, work, models_dir):
    onnx_path = os.path.join(models_dir, "resnet50.onnx")
    if not os.path.exists(onnx_path):
        check("resnet50.onnx present", False, onnx_path)
        return
    # An NV12 frame of smooth content (a camera's), 224x224.
    yy, xx = np.mgrid[0:224, 0:224]
    y = (128 + 90 * np.sin(xx / 17.0) * np.cos(yy / 23.0)).astype(np.uint8)
    u = (128 + 60 * np.sin(xx[::2, ::2] / 29.0 + 1)).astype(np.uint8)
    v = (128 + 60 * np.cos(yy[::2, ::2] / 31.0)).astype(np.uint8)
    nv12 = np.concatenate([y.ravel(), np.stack([u, v], -1).ravel()])
    cfg = {"input_format": "YUV420SP_U8", "src_w": 224, "src_h": 224, "csc": True, "matrix": JPEG_YUV2RGB,
           "input_bias": [0, 128, 128], "mean": [123, 116, 103], "min": [0.675, 0.28, 0.53],
           "var": [1 / (0.229 * 255), 1 / (0.224 * 255), 1 / (0.225 * 255)]}
    ref = reference(nv12, cfg, 1, 3, 224, 224)
    outs, err = compile_run(atc, omrun, work, "r50_aipp", onnx_path, "input:1,3,224,224", conf_text(cfg),
                            "force_fp16", [nv12.tobytes()], 1)
    check("resnet50 with NV12 AIPP compiles and runs on NV12 bytes", outs is not None, err)
    plain = os.path.join(work, "r50")
    r = run(atc, f"--model={onnx_path}", "--framework=5", f"--output={plain}", "--input_shape=input:1,3,224,224",
            "--soc_version=Ascend310")
    p = os.path.join(work, "r50_ref_in.bin")
    ref.tofile(p)
    r2 = run(omrun, "--model", plain + ".om", "--input", p, "--output", os.path.join(work, "r50_out"))
    check("plain resnet50 runs on the reference-preprocessed tensor", r.returncode == 0 and r2.returncode == 0,
          r.stderr + r2.stderr)
    if outs is None or r2.returncode:
        return
    a, b = outs[0].astype(np.float64), np.fromfile(os.path.join(work, "r50_out", "output_0.bin"), np.float32)
    cos = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
    print(f"     resnet50 AIPP vs reference-preprocessed: cosine {cos:.6f}, top-1 {a.argmax()} vs {b.argmax()}")
    check("resnet50: AIPP on NV12 matches the plain model on the reference tensor (cosine >= 0.999)",
          cos >= 0.999 and a.argmax() == b.argmax(), cos)


def main():
    atc, omrun, work = sys.argv[1:4]
    models_dir = sys.argv[sys.argv.index("--models-dir") + 1] if "--models-dir" in sys.argv else None
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    rng = np.random.default_rng(1919)
    if models_dir:
        resnet50(atc, omrun, work, models_dir)
    else:
        static_cases(atc, omrun, work, rng)
        two_inputs(atc, omrun, work, rng)
        dynamic_case(atc, omrun, work, rng)
        batch_gears(atc, omrun, work, rng)
        dynamic_batch_gears(atc, omrun, work, rng)
        image_gears(atc, omrun, work, rng)
        nhwc(atc, omrun, work, rng)
        refusals(atc, omrun, work)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
