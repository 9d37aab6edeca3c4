#!/usr/bin/env python3
"""The inputs of the DVPP sample application's test (tests/acl_apps_test.sh dvpp).

  dvpp_app_ref.py REFERENCE_INPUT.bin WORK_DIR

From an exported model's reference input (float32 1x3x224x224, normalised as
torchvision does) it writes, in WORK_DIR:
  image.jpg      that picture as RGB, scaled to 320x256 (PIL bicubic), JPEG
                 quality 90, 4:2:0: what the application decodes with JPEGD;
  aipp.cfg       a static AIPP for YUV420SP_U8 224x224: the JPEG (full range)
                 YCbCr -> RGB matrix of docs/aipp.md, torchvision's mean and std;
  ref_input.bin  the float model's input computed here from the same file:
                 PIL's decode (libjpeg, YCbCr: luma at full scale, the 4:2:0
                 chroma as coded from libjpeg's half-scale decode, which does
                 not upsample it), each plane scaled to 224x224 by float bilinear with
                 half-pixel centres (dvpp_test.py's reference of VPC), then
                 AIPP's CSC and normalisation exactly as docs/aipp.md writes them.
"""
import os
import sys

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dvpp_test import bilinear, pil_ycbcr  # noqa: E402

MEAN = (123.675, 116.28, 103.53)
STD = (58.395, 57.12, 57.375)
MATRIX = ((256, 0, 359), (256, -88, -183), (256, 454, 0))
BIAS = (0, 128, 128)


def main():
    ref, work = sys.argv[1], sys.argv[2]
    x = np.fromfile(ref, "<f4").reshape(3, 224, 224)
    rgb = np.stack([x[c] * STD[c] + MEAN[c] for c in range(3)], -1).clip(0, 255).round().astype(np.uint8)
    jpg = os.path.join(work, "image.jpg")
    Image.fromarray(rgb).resize((320, 256), Image.BICUBIC).save(jpg, quality=90, subsampling=2)
    lines = ["aipp_op {", "  aipp_mode: static", "  related_input_rank: 0", "  input_format: YUV420SP_U8",
             "  src_image_size_w: 224", "  src_image_size_h: 224", "  csc_switch: true"]
    lines += [f"  matrix_r{i}c{j}: {MATRIX[i][j]}" for i in range(3) for j in range(3)]
    lines += [f"  input_bias_{i}: {BIAS[i]}" for i in range(3)]
    lines += [f"  mean_chn_{i}: {int(MEAN[i])}" for i in range(3)]
    lines += [f"  min_chn_{i}: {MEAN[i] - int(MEAN[i]):.3f}" for i in range(3)]
    lines += [f"  var_reci_chn_{i}: {1.0 / STD[i]:.7f}" for i in range(3)]
    with open(os.path.join(work, "aipp.cfg"), "w") as f:
        f.write("\n".join(lines + ["}", ""]))

    a = pil_ycbcr(jpg)
    h, w = a.shape[:2]
    half = Image.open(jpg)
    half.draft("YCbCr", (w // 2, h // 2))  # libjpeg's half-scale decode: 4:2:0 chroma as coded, no upsampling
    c = np.asarray(half).astype(np.int64)
    assert c.shape[:2] == (h // 2, w // 2)
    y = bilinear(a[..., 0], (0, 0, w, h), 224, 224)
    u = bilinear(c[..., 1], (0, 0, w // 2, h // 2), 112, 112)
    v = bilinear(c[..., 2], (0, 0, w // 2, h // 2), 112, 112)
    p = np.stack([y, np.repeat(np.repeat(u, 2, 0), 2, 1), np.repeat(np.repeat(v, 2, 0), 2, 1)]).astype(np.int64)
    out = np.empty((3, 224, 224), np.float32)
    for i in range(3):
        q = sum(MATRIX[i][j] * (p[j] - BIAS[j]) for j in range(3)) >> 8
        q = np.clip(q, 0, 255).astype(np.float32)
        mean, mn = np.float32(int(MEAN[i])), np.float32(float(f"{MEAN[i] - int(MEAN[i]):.3f}"))
        out[i] = (q - mean - mn) * np.float32(float(f"{1.0 / STD[i]:.7f}"))
    out[None].tofile(os.path.join(work, "ref_input.bin"))
    print(f"dvpp_app_ref.py: {jpg} ({os.path.getsize(jpg)} bytes), aipp.cfg, ref_input.bin")


if __name__ == "__main__":
    main()
