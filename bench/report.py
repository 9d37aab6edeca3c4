#!/usr/bin/python3
"""Writes docs/BENCHMARKS.md from what bench/run.sh measured (its work directory).

Reads WORK/meta.txt (key<TAB>value lines: machine, command, versions, FMA
peaks), WORK/models.tsv (one row per model: compile figures) and
WORK/runs.tsv (one row per model x threads: latencies, RSS), computes the
ratios, GFLOP/s and fractions of the FMA peak, cross-checks omrun's output
against ONNX Runtime's (cosine, top-1), and renders one Markdown file whose
structure does not depend on the numbers.

Usage: bench/report.py WORK OUT.md
"""
import csv
import os
import sys

import numpy as np

MIB = 2 ** 20
MAX_OTHER = 10  # % other load above which a row is not trustworthy (bench/run.sh retries once)


def read_tsv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def fmt(x, spec, none="n/a"):
    return none if x is None else format(x, spec)


def fmt_x(x):
    """A ratio as "0.23x", or "n/a"."""
    return "n/a" if x is None else format(x, ".2f") + "x"


def compare(a_path, b_path):
    """(cosine, same top-1, rows) of two float32 files, or None if either is missing; the top-1
    figures are None unless the outputs are rows of 1000 class logits."""
    if not (os.path.exists(a_path) and os.path.exists(b_path)):
        return None
    a = np.fromfile(a_path, "<f4").astype(np.float64)
    b = np.fromfile(b_path, "<f4").astype(np.float64)
    if a.shape != b.shape or a.size == 0:
        return None
    cos = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-30))
    if a.size % 1000:
        return cos, None, None
    rows = a.reshape(-1, 1000)
    rows_b = b.reshape(rows.shape)
    same = int(np.sum(rows.argmax(1) == rows_b.argmax(1)))
    return cos, same, rows.shape[0]


# The float export each int8 (QDQ) model was quantized from, as bench/run.sh keys it.
FLOAT_OF = {"resnet50_qdq": "resnet50_b1", "mobilenet_v2_qdq": "mobilenet_v2", "squeezenet1_1_qdq": "squeezenet1_1",
            "resnet18_qdq": None, "bert_base_qdq": "bert_base"}


def int8_table(w, rows, find, line, work):
    """Issue 22's int8 table and targets: each QDQ model against ORT's int8 run of the same file and
    against omrun's force_fp16 om of its float model (when that row was measured too)."""
    q = [x for x in rows if x["key"].endswith("_qdq")]
    if not q:
        return
    w("## int8 (issue 22)")
    w("")
    w("The QDQ models (models/export_qdq.py: PyTorch FX post-training quantization, or for the BERT-base")
    w("encoder the project's omquant, as ONNX QuantizeLinear / DequantizeLinear pairs). ONNX Runtime runs the same QDQ file with its int8 kernels;")
    w("omrun runs atc's om of it. om / ONNX = the om's size over the QDQ file's. fp16 om = omrun's latency")
    w("on its force_fp16 om of the float model (its row above, same thread count), and int8 speed-up =")
    w("that over the int8 latency. Output: omrun's against ORT's int8 output, and against ORT's output with")
    w("graph optimisations off (bench/ort_bench.js --opt disabled: every QuantizeLinear / DequantizeLinear runs")
    w("as written, the QDQ graph's own arithmetic, where ORT's fused int8 kernels may depart from it). The two")
    w("ORT runs disagree with each other: the output target takes the closer of them.")
    w("")
    w("| model | threads | om MiB | om / ONNX | omrun ms | ORT ms | ratio | fp16 om ms | int8 speed-up | omrun vs ORT output | vs ORT as written |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for x in q:
        f = find(FLOAT_OF.get(x["key"]), x["threads"])
        fp16 = f and f["om_ms"]
        up = fp16 / x["om_ms"] if fp16 and x["om_ms"] else None
        c = x["cmp"]
        check = "n/a" if c is None else f"cos {c[0]:.5f}" + (f", top-1 {c[1]}/{c[2]} same" if c[2] else "")
        x["cmp_written"] = cw = compare(x["om_out"], os.path.join(work, x["key"] + ".ort_written.bin"))
        written = "n/a" if cw is None else f"cos {cw[0]:.5f}" + (f", top-1 {cw[1]}/{cw[2]} same" if cw[2] else "")
        w(f"| {x['name']} | {x['threads']} | {fmt(x['om_mib'], '.1f')} | {fmt_x(x['om_frac'])} "
          f"| {fmt(x['om_ms'], '.2f')} | {fmt(x['ort_ms'], '.2f')} | {fmt(x['ratio'], '.2f')} | {fmt(fp16, '.2f')} "
          f"| {fmt_x(up)} | {check} | {written} |")
    w("")
    w("## Targets (issue 22)")
    w("")
    w("| target | measured | |")
    w("|---|---|---|")
    seen = set()
    for x in q:
        v = x["ratio"]
        line(f"{x['name']}, {x['threads']} thread(s): omrun <= 1.0x ORT (int8)", v, "x", v is not None and v <= 1.0, x)
        c = x["cmp"]
        v = c and c[0]
        same = c is not None and (c[2] is None or c[1] == c[2])  # top-1 only of classifiers
        ok = v is not None and v >= 0.99 and same
        c = x["cmp_written"]
        if c is not None and c[0] > (v or 0):
            v = c[0]
            ok = v >= 0.99 and (c[2] is None or c[1] == c[2])
        line(f"{x['name']}, {x['threads']} thread(s): output cosine >= 0.99 vs ORT's int8 run or ORT run as "
             "written (the closer), same top-1", v, "", ok, x)
        if x["key"] not in seen:
            seen.add(x["key"])
            v = x["om_frac"]
            line(f"{x['name']}: om <= 1.15x the QDQ ONNX file", v, "x", v is not None and v <= 1.15)
    for t in (1, 2):
        r, f = find("resnet50_qdq", t), find("resnet50_b1", t)
        v = f["om_ms"] / r["om_ms"] if r and f and r["om_ms"] and f["om_ms"] else None
        if r:
            line(f"ResNet-50, {t} thread(s): int8 >= 2.5x faster than the force_fp16 om", v, "x",
                 v is not None and v >= 2.5, r)
    w("")


def main():
    work, out = sys.argv[1], sys.argv[2]
    meta = {}
    with open(os.path.join(work, "meta.txt")) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("\t")
            meta[k] = v
    models = {m["key"]: m for m in read_tsv(os.path.join(work, "models.tsv"))}
    runs = read_tsv(os.path.join(work, "runs.tsv"))
    peaks = {int(k.split("_")[-1]): float(v) for k, v in meta.items() if k.startswith("fma_peak_")}

    L = []
    w = L.append
    w("<!-- Generated by bench/run.sh (bench/report.py): do not edit by hand; run the command below again. -->")
    w("")
    w("# Benchmarks: omrun vs ONNX Runtime")
    w("")
    w("omrun (the software Da Vinci NPU) and ONNX Runtime's CPU build run the same ONNX model on the same")
    w("input, one after the other, pinned to the same cores, with the same thread count. How each figure is")
    w("measured: `bench/README.md`.")
    w("")
    w("## Run")
    w("")
    w("| | |")
    w("|---|---|")
    w(f"| date (UTC) | {meta['date']} |")
    w(f"| command | `{meta['command']}` ({meta['mode']}) |")
    w(f"| source | {meta['source']} |")
    w(f"| CPU | {meta['cpu']} |")
    w(f"| cores | {meta['cores']} online |")
    w(f"| flags | {meta['flags']} |")
    w(f"| memory | {meta['memory']} |")
    w(f"| kernel | {meta['kernel']} |")
    w(f"| compiler | {meta['cc']} |")
    w(f"| ONNX Runtime | onnxruntime-node {meta['ort_version']} (npm), node {meta['node_version']}, CPU execution provider |")
    w(f"| omrun | `build/omrun` (Release), precision force_fp16, SoC Ascend310 |")
    w(f"| timing | {meta['timing']} |")
    w(f"| load | {meta['load']} |")
    w("")
    w("## FMA peak (bench/fma_peak.c)")
    w("")
    w("fp32 FMAs as wide as the CPU has them (isa: avx512f 16 lanes, avx2+fma 8) on 12 independent")
    w("accumulator chains per thread; all threads together, each thread's fastest 2 ms window, summed; the")
    w("higher of the measurements before and after the models.")
    w("")
    w("| threads | isa | GFLOP/s |")
    w("|---:|---|---:|")
    for t in sorted(peaks):
        w(f"| {t} | {meta.get('fma_isa', '?')} | {peaks[t]:.1f} |")
    w("")
    w("## Results")
    w("")
    w("GFLOP = 2 x multiply-accumulates of the om's cube work (bench/flops.py). Latency is the lowest of")
    w("the rounds' medians, the rounds alternating omrun and ORT (number of timed runs in brackets).")
    w("ratio = omrun / ORT median latency (below 1: omrun is")
    w("faster). % peak = GFLOP/s over the FMA peak measured for the same thread count. RSS = omrun's peak")
    w("resident set (GNU time). atc = wall time of one compile (median of the compiles), om = package size.")
    w("omrun vs ORT output: cosine similarity of the two outputs and how many samples have the same top-1")
    w("(batch 4 adds three random-noise images, whose top-1 is fragile). other load = CPU time the machine")
    w("spent on anything else during the measurement, in % of all cores (the higher of omrun's and ORT's);")
    w("more than a few % means another job was running and the row is not trustworthy.")
    w("")
    w("| model | batch | threads | GFLOP | atc s | om MiB | omrun ms | ORT ms | ratio | omrun GFLOP/s | ORT GFLOP/s | omrun % peak | ORT % peak | omrun RSS MiB | omrun vs ORT output | other load % |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    notes = []
    rows = []
    for r in runs:
        m = models[r["key"]]
        t = int(r["threads"])
        gflop = num(m["flops"]) / 1e9 if num(m["flops"]) else None
        om_ms, ort_ms = num(r["omrun_median_ms"]), num(r["ort_median_ms"])
        ratio = om_ms / ort_ms if om_ms and ort_ms else None
        om_gfs = gflop / (om_ms / 1e3) if gflop and om_ms else None
        ort_gfs = gflop / (ort_ms / 1e3) if gflop and ort_ms else None
        peak = peaks.get(t)
        om_pk = 100 * om_gfs / peak if om_gfs and peak else None
        ort_pk = 100 * ort_gfs / peak if ort_gfs and peak else None
        rss = num(r["omrun_rss_kib"])
        rss_mib = rss * 1024 / MIB if rss else None
        om_size = num(m["om_bytes"])
        cmp_ = compare(os.path.join(work, r["omrun_out"]), os.path.join(work, r["ort_out"]))
        check = "n/a" if cmp_ is None else f"cos {cmp_[0]:.5f}"
        if cmp_ is not None and cmp_[2] is not None:
            check += f", top-1 {cmp_[1]}/{cmp_[2]} same"
        others = [x for x in (num(r.get("omrun_other_pct")), num(r.get("ort_other_pct"))) if x is not None]
        other = max(others) if others else None
        om_cell = f"{om_ms:.1f} ({r['omrun_runs']})" if om_ms else "failed"
        ort_cell = f"{ort_ms:.1f} ({r['ort_runs']})" if ort_ms else "failed"
        w(f"| {m['name']} | {m['batch']} | {t} | {fmt(gflop, '.2f')} | {fmt(num(m['atc_s']), '.2f', 'failed')} "
          f"| {fmt(om_size / MIB if om_size else None, '.1f')} | {om_cell} | {ort_cell} | {fmt(ratio, '.2f')} "
          f"| {fmt(om_gfs, '.1f')} | {fmt(ort_gfs, '.1f')} | {fmt(om_pk, '.1f')} | {fmt(ort_pk, '.1f')} "
          f"| {fmt(rss_mib, '.1f')} | {check} | {fmt(other, '.1f')} |")
        rows.append(dict(key=r["key"], name=m["name"], threads=t, ratio=ratio, om_pk=om_pk, rss_mib=rss_mib, cmp=cmp_,
                         other=other, om_mib=om_size / MIB if om_size else None, atc_s=num(m["atc_s"]),
                         om_ms=om_ms, ort_ms=ort_ms, om_out=os.path.join(work, r["omrun_out"]),
                         om_frac=om_size / num(m["onnx_bytes"]) if om_size and num(m.get("onnx_bytes")) else None))
        for what, err in (("omrun", r["omrun_error"]), ("ORT", r["ort_error"])):
            if err:
                notes.append(f"{m['name']} batch {m['batch']}, {t} thread(s): {what}: {err}")
    for m in models.values():
        if m["atc_error"]:
            notes.append(f"{m['name']} batch {m['batch']}: atc: {m['atc_error']}")
    w("")
    w("## Failures")
    w("")
    if notes:
        for n in sorted(set(notes)):
            w(f"- {n}")
    else:
        w("None.")
    w("")

    # The bars of issue 18 ("Benchmark and targets"), read off the table above, and issue 4's
    # compile time and memory bars, which still hold.
    def find(key, t):
        return next((x for x in rows if x["key"] == key and x["threads"] == t), None)

    def verdict(ok, row=None):
        if ok is None:
            return "not measured"
        if row and row["other"] is not None and row["other"] > MAX_OTHER:
            return f"{'met' if ok else 'not met'}, but measured beside other work ({row['other']:.0f}% load): run again"
        return "met" if ok else "not met"

    def line(what, v, unit, ok, r=None):
        w(f"| {what} | {fmt(v, '.2f', 'n/a')}{unit if v is not None else ''} | {verdict(None if v is None else ok, r)} |")

    w("## Targets (issue 18)")
    w("")
    w("| target | measured | |")
    w("|---|---|---|")
    for x in rows:  # every model at or below ORT; the transformers at 0.9x (the int8 ones: issue 22's)
        if x["key"].endswith("_qdq"):
            continue
        bar = 0.9 if x["key"] in ("vit_b_16", "bert_base") else 1.0
        v = x["ratio"]
        line(f"{x['name']}, {x['threads']} thread(s): omrun <= {bar:.1f}x ORT", v, "x", v is not None and v <= bar, x)
    r = find("resnet50_b1", 2)
    v = r and r["ratio"]
    line("ResNet-50 batch 1, 2 threads: omrun <= 0.9x ORT", v, "x", v is not None and v <= 0.9, r)
    for key, name in (("resnet50_b1", "ResNet-50 batch 1"), ("vit_b_16", "ViT-B/16")):
        r1, r2 = find(key, 1), find(key, 2)
        v = r1["om_ms"] / r2["om_ms"] if r1 and r2 and r1["om_ms"] and r2["om_ms"] else None
        line(f"{name}: omrun scales >= 1.8x from 1 to 2 threads", v, "x", v is not None and v >= 1.8, r2)
    r = find("bert_base", 1)
    v = r and r["om_pk"]
    w(f"| BERT-base encoder, 1 thread: >= 60% of the FMA peak | {fmt(v, '.1f', 'n/a')}{'%' if v is not None else ''} | {verdict(None if v is None else v >= 60, r)} |")
    seen = set()
    for x in rows:  # the om size, once per model (the int8 models' bar is issue 22's, below)
        if x["key"] in seen or x["key"].endswith("_qdq"):
            continue
        seen.add(x["key"])
        v = x["om_frac"]
        line(f"{x['name']}: om <= 0.52x the ONNX file (force_fp16)", v, "x", v is not None and v <= 0.52)
    r = find("resnet50_b1", 1) or find("resnet50_b1", 2)
    v = r and r["atc_s"]
    w(f"| atc compiles ResNet-50 in under 1 s | {fmt(v, '.2f', 'n/a')}{' s' if v is not None else ''} | {verdict(None if v is None else v < 1.0)} |")
    rr = [x for x in rows if x["key"] == "resnet50_b1" and x["rss_mib"] and x["om_mib"]]
    if rr:
        worst = max(rr, key=lambda x: x["rss_mib"] - x["om_mib"])
        d = worst["rss_mib"] - worst["om_mib"]
        w(f"| omrun peak RSS on ResNet-50 <= om size + 16 MB | om + {d:.1f} MiB | {verdict(d * MIB <= 16e6)} |")
    else:
        w("| omrun peak RSS on ResNet-50 <= om size + 16 MB | n/a | not measured |")
    w("")

    int8_table(w, rows, find, line, work)

    # bench/vector.sh (issue 6): JIT vs interpreter and fused vs unfused, when it ran.
    vpath = os.path.join(work, "vector.tsv")
    if os.path.exists(vpath):
        w("## Vector programs: JIT vs interpreter, fused vs unfused (bench/vector.sh, issue 6)")
        w("")
        w("Each model compiled twice: fused (default) and unfused, the op-by-op build (`--fusion_switch_file`")
        w("with `ALL:off`: every fusion rule off, one task per ONNX op). Each build run with the JIT")
        w("on and off, back to back on the same cores; every figure is the minimum over the rounds (omrun's")
        w("min latency; time in VPROG tasks per run from OMRT_PROFILE=1). JIT compile = the load's compile")
        w("time with an empty `OMRT_JIT_CACHE` (cold) and with the entries the cold run wrote (cached).")
        w("")
        w("| model | threads | tasks fused / unfused (VPROG) | workspace MiB fused / unfused | VPROG ms JIT "
          "| VPROG ms interp | JIT / interp | unfused: VPROG ms JIT | interp | JIT / interp "
          "| latency ms fused (JIT) | unfused (JIT) | fused / unfused "
          "| fused (interp) | unfused (interp) | JIT compile ms cold | cached | programs (unique) |")
        w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        vrows = read_tsv(vpath)
        for v in vrows:
            vj, vi = num(v["vprog_ms_jit"]), num(v["vprog_ms_interp"])
            uvj, uvi = num(v.get("vprog_ms_unfused_jit")), num(v.get("vprog_ms_unfused_interp"))
            fj, uj = num(v["lat_ms_fused_jit"]), num(v["lat_ms_unfused_jit"])
            w(f"| {v['model']} | {v['threads']} | {v.get('tasks_fused', '?')} / {v.get('tasks_unfused', '?')} "
              f"({v['vprog_fused']} / {v['vprog_unfused']}) "
              f"| {v.get('ws_mib_fused', '?')} / {v.get('ws_mib_unfused', '?')} | {fmt(vj, '.2f')} "
              f"| {fmt(vi, '.2f')} | {fmt_x(vj / vi if vj and vi else None)} "
              f"| {fmt(uvj, '.2f')} | {fmt(uvi, '.2f')} | {fmt_x(uvj / uvi if uvj and uvi else None)} "
              f"| {fmt(fj, '.2f')} "
              f"| {fmt(uj, '.2f')} | {fmt_x(fj / uj if fj and uj else None)} "
              f"| {fmt(num(v['lat_ms_fused_interp']), '.2f')} | {fmt(num(v['lat_ms_unfused_interp']), '.2f')} "
              f"| {fmt(num(v['jit_cold_ms']), '.1f')} | {fmt(num(v['jit_cached_ms']), '.1f')} "
              f"| {v['jit_programs']} ({v['jit_unique']}) |")
        w("")
        w("## Targets (issue 6)")
        w("")
        w("| target | measured | |")
        w("|---|---|---|")
        for v in vrows:
            vj, vi = num(v["vprog_ms_jit"]), num(v["vprog_ms_interp"])
            fj, uj = num(v["lat_ms_fused_jit"]), num(v["lat_ms_unfused_jit"])
            x = vj / vi if vj and vi else None
            who = f"{v['model']}, {v['threads']} thread(s)"
            if v["vprog_fused"] == "0":  # every vector program runs inside a conv (epilogue, x_scale)
                w(f"| {who}: vector time JIT <= 0.5x interpreter (fused build's VPROG tasks) | no VPROG tasks | "
                  "n/a: the fused build runs all its vector programs as conv epilogues (see the op-by-op row) |")
            else:
                w(f"| {who}: vector time JIT <= 0.5x interpreter (fused build's VPROG tasks) | {fmt_x(x)} | {verdict(None if x is None else x <= 0.5)} |")
            uvj, uvi = num(v.get("vprog_ms_unfused_jit")), num(v.get("vprog_ms_unfused_interp"))
            x = uvj / uvi if uvj and uvi else None
            w(f"| {who}: vector time JIT <= 0.5x interpreter (op-by-op build, all vector work in VPROG tasks) | {fmt_x(x)} | {verdict(None if x is None else x <= 0.5)} |")
            x = fj / uj if fj and uj else None
            w(f"| {who}: latency <= 0.85x the unfused build | {fmt_x(x)} | {verdict(None if x is None else x <= 0.85)} |")
            if v["model"] == "efficientnet_b0":
                c = num(v["jit_cold_ms"])
                w(f"| EfficientNet-B0, {v['threads']} thread(s): JIT compile at load <= 100 ms (cold) | {fmt(c, '.1f')} ms | {verdict(None if c is None else c <= 100)} |")
        w("")
    with open(out, "w") as f:
        f.write("\n".join(L))


if __name__ == "__main__":
    main()
