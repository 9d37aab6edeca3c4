#!/usr/bin/env python3
"""DVPP in software (acl/acl_dvpp.c): JPEG decode against PIL's (libjpeg-turbo's)
decode, VPC against a float bilinear reference.

  dvpp_test.py jpeg|vpc DVPP_TOOL WORK_DIR

JPEGs are made here, at test time, with PIL (4:4:4, 4:2:2, 4:2:0, grey; quality
10 and 95; sizes 1x1, 17x9, 64x48, 641x479) and libjpeg-turbo's cjpeg /
jpegtran (4:4:0 and 4:1:1 sampling, restart intervals, non-interleaved scans,
progressive and arithmetic-coded files to refuse).

The reference: PIL's decode to YCbCr (draft mode: libjpeg's own IDCT, no colour
conversion). Luma must be within 2 levels. libjpeg upsamples chroma with its
"fancy" triangle filter, the decoder here writes 4:2:0 chroma as the mean of
the source chroma under each 2x2 luma block (a 4:2:0 source's chroma as it
is), so chroma is compared where both mean the same thing: for a 4:2:0 source
libjpeg's h2v2 filter applied to our chroma against PIL's full-resolution
chroma, for 4:2:2 its h2v1 filter on ours against the vertical mean of PIL's,
for 4:4:4 ours against the 2x2 mean of PIL's; 4:4:0 and 4:1:1 (smooth images)
ours against the 2x2 mean of PIL's. All within 2 levels.
Re-encodings that keep the coefficients (restart markers, one scan per
component) must decode byte for byte like the original.
Through AscendCL (dvpp_tool decode): the documented JPEGD output (width and
height rounded down to even, width stride a multiple of 128, height stride of
16, size = strides x 3 / 2, NV12 or NV21) holding the same planes, and the
refusals: truncated files, bad segment lengths, overflowing Huffman tables,
progressive, arithmetic, 12-bit, CMYK, sizes outside 32x32..8192x8192.

VPC (dvpp_tool vpc): resize, crop and crop-and-paste of synthetic YUV420SP
pictures (NV12 and NV21 in and out, down and up) against a float64 bilinear
with half-pixel centres, rounded half up: within 1 level (float32 order);
outside a paste area the output is untouched; and the refusals of the
documented rules (ROI parity, paste left alignment, regions outside the
picture, stride alignment, odd or too large sizes, formats, scale ratio).
"""
import os
import subprocess
import sys

import numpy as np
from PIL import Image

INVALID_PARAM, UNSUPPORTED, FAILURE = 100000, 200006, 500001
failures = 0


def check(ok, what):
    global failures
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures += 1


def run(*args):
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    return r.returncode, r.stdout.strip() + r.stderr.strip()


def picture(w, h, smooth=False):
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    f = 4.0 if smooth else 1.0
    r = 128 + 100 * np.sin(xx / (3.0 * f)) * np.cos(yy / (5.0 * f))
    g = 128 + 90 * np.cos((xx + yy) / (7.0 * f))
    b = 255 * xx / max(w - 1, 1) * 0.8 + 20
    return Image.fromarray(np.clip(np.stack([r, g, b], -1), 0, 255).astype(np.uint8))


def h2v1(c):  # libjpeg-turbo's h2v1 fancy upsampling
    left = np.concatenate([c[:, :1], c[:, :-1]], 1)
    right = np.concatenate([c[:, 1:], c[:, -1:]], 1)
    out = np.empty((c.shape[0], 2 * c.shape[1]), np.int64)
    out[:, 0::2] = (3 * c + left + 1) >> 2
    out[:, 1::2] = (3 * c + right + 2) >> 2
    out[:, 0], out[:, -1] = c[:, 0], c[:, -1]
    return out


def h2v2(c):  # libjpeg-turbo's h2v2 fancy upsampling
    up = np.concatenate([c[:1], c[:-1]], 0)
    down = np.concatenate([c[1:], c[-1:]], 0)
    res = np.empty((2 * c.shape[0], 2 * c.shape[1]), np.int64)
    for r, far in ((0, up), (1, down)):
        s = 3 * c + far
        left = np.concatenate([s[:, :1], s[:, :-1]], 1)
        right = np.concatenate([s[:, 1:], s[:, -1:]], 1)
        o = np.empty((c.shape[0], 2 * c.shape[1]), np.int64)
        o[:, 0::2] = (3 * s + left + 8) >> 4
        o[:, 1::2] = (3 * s + right + 7) >> 4
        o[:, 0], o[:, -1] = (4 * s[:, 0] + 8) >> 4, (4 * s[:, -1] + 7) >> 4
        res[r::2] = o
    return res


def mean2x2(a, h, w):
    p = np.pad(a, ((0, h % 2), (0, w % 2)), mode="edge")
    return (p[0::2, 0::2] + p[1::2, 0::2] + p[0::2, 1::2] + p[1::2, 1::2] + 2) // 4


def planes(raw, w, h, ystride=None, hstride=None):
    """(Y, U, V) int64 planes of an NV12 buffer (unpadded, or with strides)."""
    cw, ch = (w + 1) // 2, (h + 1) // 2
    if ystride is None:
        y = raw[: w * h].reshape(h, w)
        uv = raw[w * h: w * h + cw * 2 * ch].reshape(ch, cw * 2)
    else:
        y = raw[: ystride * h].reshape(h, ystride)[:, :w]
        uv = raw[ystride * hstride: ystride * hstride + ystride * ch].reshape(ch, ystride)[:, : cw * 2]
    return y.astype(np.int64), uv[:, 0::2].astype(np.int64), uv[:, 1::2].astype(np.int64)


def pil_ycbcr(path):
    im = Image.open(path)
    if im.mode == "L":
        return np.asarray(im).astype(np.int64)[..., None]
    im.draft("YCbCr", im.size)
    assert im.mode == "YCbCr"
    return np.asarray(im).astype(np.int64)


def compare_with_pil(path, sampling, tool, work, label):
    out = os.path.join(work, "out.yuv")
    rc, text = run(tool, "jpeg", path, out)
    if rc:
        check(False, f"{label}: decode refused: {text}")
        return None
    w, h = map(int, text.split())
    raw = np.fromfile(out, np.uint8)
    y, u, v = planes(raw, w, h)
    ref = pil_ycbcr(path)
    dy = int(np.abs(y - ref[..., 0]).max())
    if ref.shape[2] == 1:
        duv = int(max(np.abs(u - 128).max(), np.abs(v - 128).max()))
    else:
        duv = 0
        for ours, full in ((u, ref[..., 1]), (v, ref[..., 2])):
            if sampling == "4:2:0":
                d = np.abs(h2v2(ours)[:h, :w] - full)
            elif sampling == "4:2:2":
                p = np.pad(full, ((0, h % 2), (0, 0)), mode="edge")
                d = np.abs(h2v1(ours)[:, :w] - (p[0::2] + p[1::2] + 1) // 2)
            else:
                d = np.abs(ours - mean2x2(full, h, w))
            duv = max(duv, int(d.max()))
    check(dy <= 2 and duv <= 2, f"{label}: {w}x{h}, max |Y - PIL| {dy}, chroma {duv} (<= 2)")
    return raw


def segments(data):
    """(marker, offset of its 0xFF, length) of each segment before the first SOS."""
    i, out = 2, []
    while i + 4 <= len(data) and data[i] == 0xFF:
        m, n = data[i + 1], int.from_bytes(data[i + 2: i + 4], "big")
        out.append((m, i, n))
        if m == 0xDA:
            break
        i += 2 + n
    return out


def jpeg_tests(tool, work):
    sub = {0: "4:4:4", 1: "4:2:2", 2: "4:2:0"}
    for w, h in ((1, 1), (17, 9), (64, 48), (641, 479)):
        for ss, name in sub.items():
            for q in (10, 95):
                p = os.path.join(work, f"pil_{w}x{h}_{ss}_{q}.jpg")
                picture(w, h).save(p, quality=q, subsampling=ss)
                compare_with_pil(p, name, tool, work, f"PIL {name} q{q}")
        p = os.path.join(work, f"pil_{w}x{h}_grey.jpg")
        picture(w, h).convert("L").save(p, quality=75)
        compare_with_pil(p, "grey", tool, work, "PIL grey q75")
    # cjpeg: 4:4:0 and 4:1:1 (libjpeg-turbo's own samplings), odd sizes.
    ppm = os.path.join(work, "in.ppm")
    picture(97, 45, smooth=True).save(ppm)
    for samp, name in (("1x2", "4:4:0"), ("4x1", "4:1:1"), ("2x2", "4:2:0")):
        p = os.path.join(work, f"cjpeg_{samp}.jpg")
        rc, text = run("cjpeg", "-quality", "90", "-sample", samp, "-outfile", p, ppm)
        check(rc == 0, f"cjpeg -sample {samp}: {text}")
        compare_with_pil(p, "smooth" if name != "4:2:0" else name, tool, work, f"cjpeg {name}")
    # Lossless re-encodings: restart intervals, one scan per component: byte-identical decodes.
    base = os.path.join(work, "pil_641x479_2_95.jpg")
    grey = os.path.join(work, "pil_641x479_grey.jpg")
    scans = os.path.join(work, "scans.txt")
    with open(scans, "w") as f:
        f.write("0;\n1;\n2;\n")
    for src, args, label in ((base, ["-restart", "1"], "restart every MCU row"),
                             (base, ["-restart", "3B"], "restart every 3 MCUs"),
                             (grey, ["-restart", "5B"], "grey, restart every 5 blocks"),
                             (base, ["-scans", scans], "one scan per component")):
        p = os.path.join(work, "re.jpg")
        rc, text = run("jpegtran", *args, "-outfile", p, src)
        a, b = os.path.join(work, "a.yuv"), os.path.join(work, "b.yuv")
        rc1, _ = run(tool, "jpeg", src, a)
        rc2, t2 = run(tool, "jpeg", p, b)
        same = rc == 0 and rc1 == 0 and rc2 == 0 and open(a, "rb").read() == open(b, "rb").read()
        check(same, f"jpegtran {' '.join(args)} ({label}): same decode as the original {t2 if rc2 else ''}")

    # Through AscendCL: the documented output description, NV12 and NV21.
    for src, comps in ((base, 3), (os.path.join(work, "pil_641x479_0_95.jpg"), 3), (grey, 1)):
        mod = os.path.join(work, "mod.yuv")
        run(tool, "jpeg", src, mod)
        y0, u0, v0 = planes(np.fromfile(mod, np.uint8), 641, 479)
        for nv21 in (0, 1):
            out = os.path.join(work, "acl.yuv")
            rc, text = run(tool, "decode", src, out, *(["nv21"] if nv21 else []))
            if rc:
                check(False, f"acl decode {os.path.basename(src)}: {text}")
                continue
            w, h, ws, hs, size, nc, ret = map(int, text.split())
            raw = np.fromfile(out, np.uint8)
            check((w, h, ws, hs, size, nc, ret) == (640, 478, 768, 480, 768 * 480 * 3 // 2, comps, 0),
                  f"acl decode {os.path.basename(src)}{' NV21' if nv21 else ''}: description {text}")
            y, a, b = planes(raw, 641, 479, ws, hs)
            u, v = (b, a) if nv21 else (a, b)
            check(np.array_equal(y, y0) and np.array_equal(u, u0) and np.array_equal(v, v0),
                  f"acl decode {os.path.basename(src)}{' NV21' if nv21 else ''}: planes at the strides as the module's")

    # Refusals.
    data = open(base, "rb").read()
    segs = segments(data)

    def refuse(name, blob, code, words, mode="decode"):
        p = os.path.join(work, name + ".jpg")
        with open(p, "wb") as f:
            f.write(blob)
        rc, text = run(tool, mode, p, os.path.join(work, "bad.yuv"))
        ok = rc == 1 and all(wd in text for wd in words) and (code is None or f"error {code}:" in text)
        check(ok, f"refused {name}: {text.splitlines()[0] if text else '(no output)'}")

    sos = [o for m, o, n in segs if m == 0xDA][0]
    refuse("truncated_data", data[: (sos + len(data)) // 2], FAILURE, ["ends early", "ret 1"])
    refuse("truncated_header", data[: sos - 20], INVALID_PARAM, ["acldvppJpegGetImageInfo", "runs past the end"])
    refuse("not_jpeg", b"GIF89a" + data[6:], INVALID_PARAM, ["no SOI"])
    dqt = [o for m, o, n in segs if m == 0xDB][0]
    refuse("dqt_length_1", data[: dqt + 2] + b"\x00\x01" + data[dqt + 4:], INVALID_PARAM,
           ["0xFFDB", "segment length 1"])
    small = open(os.path.join(work, "pil_64x48_2_10.jpg"), "rb").read()
    sdqt = [o for m, o, n in segments(small) if m == 0xDB][0]
    refuse("dqt_length_long", small[: sdqt + 2] + b"\xff\xf0" + small[sdqt + 4:], INVALID_PARAM,
           ["0xFFDB", "segment length 65520 runs past the end"])
    dqt_n = int.from_bytes(data[dqt + 2: dqt + 4], "big")
    refuse("dqt_short", data[: dqt + 2] + (dqt_n - 10).to_bytes(2, "big") + data[dqt + 4:], INVALID_PARAM, ["DQT"])
    dht = [o for m, o, n in segs if m == 0xC4][0]
    counts = bytearray(data[dht + 5: dht + 21])
    nz = [i for i in range(16) if counts[i]][-1]
    moved = min(3, counts[nz])
    counts[0] += moved
    counts[nz] -= moved  # as many codes, three of them 1 bit long: the 1-bit codes overflow
    refuse("huffman_overflow", data[: dht + 5] + bytes(counts) + data[dht + 21:], INVALID_PARAM,
           ["DHT", "overflow"])
    sof = [o for m, o, n in segs if m in (0xC0, 0xC1)][0]
    refuse("12bit", data[: sof + 4] + b"\x0c" + data[sof + 5:], UNSUPPORTED, ["12-bit"])
    refuse("sof_components", data[: sof + 9] + b"\x02" + data[sof + 10:], UNSUPPORTED, ["2 components"])
    refuse("zero_height", data[: sof + 5] + b"\x00\x00" + data[sof + 7:], UNSUPPORTED, ["DNL"])
    p = os.path.join(work, "prog.jpg")
    picture(64, 48).save(p, quality=90, progressive=True)
    refuse("progressive", open(p, "rb").read(), UNSUPPORTED, ["progressive", "SOF2"])
    refuse("progressive_module", open(p, "rb").read(), None, ["progressive"], mode="jpeg")
    p = os.path.join(work, "arith.jpg")
    rc, text = run("jpegtran", "-arithmetic", "-outfile", p, base)
    check(rc == 0, f"jpegtran -arithmetic {text}")
    refuse("arithmetic", open(p, "rb").read(), UNSUPPORTED, ["arithmetic"])
    p = os.path.join(work, "cmyk.jpg")
    picture(64, 48).convert("CMYK").save(p, quality=90)
    refuse("cmyk", open(p, "rb").read(), UNSUPPORTED, ["4 components"])
    refuse("too_small", open(os.path.join(work, "pil_17x9_2_95.jpg"), "rb").read(), UNSUPPORTED,
           ["17x9", "32x32"])
    # Every truncation of two files: refused with a message or decoded, never a crash.
    for name in ("pil_17x9_2_10.jpg", "pil_64x48_1_95.jpg"):
        rc, text = run(tool, "truncations", os.path.join(work, name), "-")
        check(rc == 0 and text.endswith(" 0 bad"), f"every prefix of {name}: {text.splitlines()[-1] if text else ''}")


def bilinear(plane, rect, ow, oh):
    """float reference: half-pixel centres, clamped to the region, rounded half up."""
    x, y, w, h = rect
    src = plane[y: y + h, x: x + w].astype(np.float64)

    def taps(m, n):
        s = np.clip((np.arange(m) + 0.5) * n / m - 0.5, 0, n - 1)
        i0 = np.floor(s).astype(np.int64)
        return i0, np.minimum(i0 + 1, n - 1), s - i0

    x0, x1, wx = taps(ow, w)
    y0, y1, wy = taps(oh, h)
    a = src[:, x0] * (1 - wx) + src[:, x1] * wx
    b = a[y0] * (1 - wy[:, None]) + a[y1] * wy[:, None]
    return np.floor(b + 0.5).clip(0, 255)


def nv(raw, w, h, ws, hs, vu=False):
    y = raw[: ws * hs].reshape(hs, ws)[:h, :w].astype(np.int64)
    uv = raw[ws * hs: ws * hs * 3 // 2].reshape(hs // 2, ws)[: h // 2, :w].astype(np.int64)
    u, v = uv[:, 0::2], uv[:, 1::2]
    return (y, v, u) if vu else (y, u, v)


def vpc_tests(tool, work):
    rng = np.random.default_rng(3)
    NV12, NV21 = 1, 2

    def picture(w, h, ws, hs):
        yy, xx = np.mgrid[0:hs, 0:ws]
        raw = np.zeros(ws * hs * 3 // 2, np.uint8)
        lum = (128 + 100 * np.sin(xx / 5.0) * np.cos(yy / 7.0) + rng.integers(-20, 20, (hs, ws))).clip(0, 255)
        raw[: ws * hs] = lum.astype(np.uint8).ravel()
        raw[ws * hs:] = rng.integers(0, 256, ws * hs // 2).astype(np.uint8)
        return raw

    def call(mode, iw, ih, iws, ihs, ifmt, ow, oh, ows, ohs, ofmt, *roi, raw=None):
        raw = picture(iw, ih, iws, ihs) if raw is None else raw
        src, dst = os.path.join(work, "vin.yuv"), os.path.join(work, "vout.yuv")
        raw.tofile(src)
        rc, text = run(tool, "vpc", mode, src, iw, ih, iws, ihs, ifmt, dst, ow, oh, ows, ohs, ofmt, *roi)
        return rc, text, raw, (np.fromfile(dst, np.uint8) if rc == 0 else None)

    cases = [
        ("resize", 640, 478, 640, 480, NV12, 224, 224, 224, 224, NV12, ()),
        ("resize", 64, 48, 64, 48, NV12, 300, 200, 304, 200, NV21, ()),
        ("resize", 640, 478, 768, 480, NV21, 100, 60, 112, 64, NV21, ()),
        ("crop", 640, 478, 768, 480, NV12, 224, 224, 224, 224, NV12, (10, 209, 20, 219)),
        ("crop", 300, 200, 304, 200, NV21, 128, 96, 128, 96, NV12, (0, 299, 0, 199)),
        ("paste", 640, 478, 768, 480, NV12, 224, 224, 224, 224, NV12, (100, 499, 50, 349, 16, 207, 2, 193)),
        ("paste", 640, 478, 640, 478, NV12, 224, 224, 240, 230, NV21, (0, 639, 0, 477, 0, 223, 32, 191)),
    ]
    for mode, iw, ih, iws, ihs, ifmt, ow, oh, ows, ohs, ofmt, roi in cases:
        label = f"{mode} {iw}x{ih} {'NV21' if ifmt == NV21 else 'NV12'} -> {ow}x{oh} {'NV21' if ofmt == NV21 else 'NV12'} {roi}"
        rc, text, raw, out = call(mode, iw, ih, iws, ihs, ifmt, ow, oh, ows, ohs, ofmt, *roi)
        if rc:
            check(False, f"{label}: {text}")
            continue
        src = nv(raw, iw, ih, iws, ihs, ifmt == NV21)
        got = nv(out, ow, oh, ows, ohs, ofmt == NV21)
        crop = (roi[0], roi[2], roi[1] - roi[0] + 1, roi[3] - roi[2] + 1) if roi else (0, 0, iw, ih)
        to = (roi[4], roi[6], roi[5] - roi[4] + 1, roi[7] - roi[6] + 1) if len(roi) == 8 else (0, 0, ow, oh)
        err = 0
        for k in range(3):
            s = 1 if k == 0 else 2
            want = bilinear(src[k], tuple(c // s for c in crop), to[2] // s, to[3] // s)
            region = got[k][to[1] // s: (to[1] + to[3]) // s, to[0] // s: (to[0] + to[2]) // s]
            err = max(err, int(np.abs(region - want).max()))
        untouched = True
        if len(roi) == 8:
            mask = np.ones((oh, ow), bool)
            mask[to[1]: to[1] + to[3], to[0]: to[0] + to[2]] = False
            untouched = bool((got[0][mask] == 7).all()) and bool((got[1][mask[0::2, 0::2]] == 7).all())
        check(text == "0" and err <= 1 and untouched,
              f"{label}: ret {text}, max |out - float bilinear| {err} (<= 1), outside the paste area untouched {untouched}")

    def refused(words, code, *args):
        rc, text, _, _ = call(*args)
        ok = rc == 1 and f"error {code}:" in text and all(w in text for w in words)
        check(ok, f"refused: {text}")

    base = ("crop", 640, 478, 768, 480, NV12, 224, 224, 224, 224, NV12)
    refused(["cropArea", "left 11", "left a multiple of 2"], INVALID_PARAM, *base, 11, 209, 20, 219)
    refused(["cropArea", "right 210", "right and bottom odd"], INVALID_PARAM, *base, 10, 210, 20, 219)
    refused(["cropArea", "top 21"], INVALID_PARAM, *base, 10, 209, 21, 219)
    refused(["cropArea", "bottom 218"], INVALID_PARAM, *base, 10, 209, 20, 218)
    refused(["cropArea", "at least 10x6"], INVALID_PARAM, *base, 10, 17, 20, 219)
    refused(["cropArea", "outside the 640x478 picture"], INVALID_PARAM, *base, 10, 641, 20, 219)
    paste = ("paste",) + base[1:]
    refused(["pasteArea", "left 8", "left a multiple of 16"], INVALID_PARAM, *paste, 10, 209, 20, 219, 8, 207, 2, 193)
    refused(["pasteArea", "outside the 224x224"], INVALID_PARAM, *paste, 10, 209, 20, 219, 16, 231, 2, 193)
    refused(["inputDesc widthStride 650", "multiple of 16"], INVALID_PARAM, "resize", 640, 478, 650, 480, NV12,
            224, 224, 224, 224, NV12)
    refused(["outputDesc heightStride 225"], INVALID_PARAM, "resize", 640, 478, 640, 478, NV12, 224, 224, 224, 225,
            NV12)
    refused(["outputDesc width x height 225x224", "even"], INVALID_PARAM, "resize", 640, 478, 640, 478, NV12, 225,
            224, 240, 224, NV12)
    refused(["outputDesc width x height 4100x224", "4096x4096"], INVALID_PARAM, "resize", 640, 478, 640, 478, NV12,
            4100, 224, 4112, 224, NV12)
    refused(["inputDesc format 0"], UNSUPPORTED, "resize", 640, 478, 640, 478, 0, 224, 224, 224, 224, NV12)
    refused(["640x478 to 16x12", "1/32 to 16"], INVALID_PARAM, "resize", 640, 478, 640, 478, NV12, 16, 12, 16, 12,
            NV12)
    refused(["10x6 to 176x6", "1/32 to 16"], INVALID_PARAM, "crop", 64, 48, 64, 48, NV12, 176, 6, 176, 6, NV12,
            0, 9, 0, 5)


def main():
    what, tool, work = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(work, exist_ok=True)
    if what == "jpeg":
        jpeg_tests(tool, work)
    elif what == "vpc":
        vpc_tests(tool, work)
    else:
        sys.exit(f"dvpp_test.py: unknown test {what}")
    print(f"dvpp_test.py {what}: {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
