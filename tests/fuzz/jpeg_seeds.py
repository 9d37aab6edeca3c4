#!/usr/bin/env python3
"""Seeds of the `jpeg` fuzz target (run.sh makes them once): small JPEGs of
every sampling PIL writes (4:4:4, 4:2:2, 4:2:0, grey), odd sizes, two
qualities, and jpegtran re-encodings with restart intervals and one scan per
component where jpegtran is installed.   jpeg_seeds.py OUT_DIR"""
import os
import shutil
import subprocess
import sys

import numpy as np
from PIL import Image

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(1)
for w, h in ((1, 1), (17, 9), (40, 33)):
    yy, xx = np.mgrid[0:h, 0:w]
    rgb = np.stack([xx * 7 % 256, yy * 11 % 256, (xx + yy) * 5 % 256], -1).astype(np.uint8)
    rgb = (rgb // 2 + rng.integers(0, 128, rgb.shape)).astype(np.uint8)
    im = Image.fromarray(rgb)
    for ss in (0, 1, 2):
        for q in (20, 90):
            im.save(os.path.join(out, f"{w}x{h}_s{ss}_q{q}.jpg"), quality=q, subsampling=ss)
    im.convert("L").save(os.path.join(out, f"{w}x{h}_grey.jpg"), quality=75)
if shutil.which("jpegtran"):
    src = os.path.join(out, "40x33_s2_q90.jpg")
    with open(os.path.join(out, "scans.txt"), "w") as f:
        f.write("0;\n1;\n2;\n")
    for name, args in (("restart1", ["-restart", "1B"]), ("restart_rows", ["-restart", "1"]),
                       ("scans", ["-scans", os.path.join(out, "scans.txt")])):
        subprocess.run(["jpegtran", *args, "-outfile", os.path.join(out, f"jt_{name}.jpg"), src], check=True)
    os.remove(os.path.join(out, "scans.txt"))
print(f"jpeg_seeds.py: {len(os.listdir(out))} seeds in {out}")
