#!/usr/bin/env python3
"""Seeds of the `png` fuzz target (run.sh makes them once): small PNGs of
every colour type the decoder takes (grey, RGB, grey + alpha, RGBA), odd
sizes, written by PIL (default and stored compression) and by zlib here
(each filter type, fixed Huffman blocks, the IDAT data over several chunks),
and a palette and a 16-bit file to refuse.   png_seeds.py OUT_DIR"""
import os
import sys
import zlib

import numpy as np
from PIL import Image

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(1)


def chunk(kind, data):
    body = kind + data
    return len(data).to_bytes(4, "big") + body + (zlib.crc32(body) & 0xFFFFFFFF).to_bytes(4, "big")


for w, h in ((1, 1), (17, 9), (40, 33)):
    for mode, ct, c in (("L", 0, 1), ("RGB", 2, 3), ("LA", 4, 2), ("RGBA", 6, 4)):
        a = rng.integers(0, 256, (h, w, c)).astype(np.uint8)
        a[h // 2:] = a[h // 2:] // 16 * 16  # a smoother half, so the matcher finds runs
        im = Image.fromarray(a[..., 0] if c == 1 else a, mode)
        im.save(os.path.join(out, f"{w}x{h}_{mode}.png"))
        im.save(os.path.join(out, f"{w}x{h}_{mode}_stored.png"), compress_level=0)
        if w == 17:  # each filter type on every row, fixed Huffman blocks, IDAT in 16-byte chunks
            rows = a.reshape(h, w * c)
            for ft in range(5):
                raw = b"".join(bytes([ft]) + rows[y].tobytes() for y in range(h))  # unfiltered bytes, any type
                z = zlib.compressobj(9, zlib.DEFLATED, 15, 9, zlib.Z_FIXED if ft % 2 else zlib.Z_DEFAULT_STRATEGY)
                data = z.compress(raw) + z.flush()
                idat = b"".join(chunk(b"IDAT", data[i:i + 16]) for i in range(0, len(data), 16))
                ihdr = w.to_bytes(4, "big") + h.to_bytes(4, "big") + bytes([8, ct, 0, 0, 0])
                with open(os.path.join(out, f"own_{mode}_f{ft}.png"), "wb") as f:
                    f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + idat + chunk(b"IEND", b""))
Image.fromarray(rng.integers(0, 256, (9, 17, 3)).astype(np.uint8)).convert("P").save(os.path.join(out, "palette.png"))
Image.fromarray(rng.integers(0, 65535, (9, 17)).astype(np.uint16)).save(os.path.join(out, "grey16.png"))
print(f"png_seeds.py: {len(os.listdir(out))} seeds in {out}")
