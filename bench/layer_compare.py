#!/usr/bin/python3
"""layer_compare.py - one model's time per ONNX node group, libomrt against ONNX Runtime.

  bench/layer_compare.py --model X.onnx --input IN.bin [--shape 1,3,224,224] [--om X.om]
                         [--cpu 1] [--rounds 5] [--loop 10] [--ort-budget 1] [--stat min|median]
                         [--top 25] [--build build] [--work DIR] [--rt]

Both runtimes run on one thread pinned to one core (taskset -c CPU; with --rt also at real-time
priority, chrt -f 50, for a loaded machine: keep --loop and --ort-budget to a few seconds a run):
  - the om (X.om, or X.onnx compiled with build/atc into DIR): bench/ab_runs --per-task (built
    into DIR from build/libomrt.a), the om on both sides at one thread, L timed runs each per
    round after two untimed ones; a task's time is the minimum (--stat min) or median over the
    rounds of its fastest run on each side. ab_runs links no JIT, so a vector program's task
    (VPROG) is timed by omrun, JIT on, instead: omrun --loop 1 and --loop L+1 --profiler per
    round, the difference of the task's two totals over L (omrun's first run is cold). Which ONNX nodes a task stands for
    comes from `atc --mode=1` (the SOURCES partition: the task's "onnx_nodes").
  - ORT: bench/ort_bench.js --threads 1 --profile (onnxruntime-node's enableProfiling), a
    --ort-budget seconds' run per round; the trace holds one "Node" event per node per run (dur in
    microseconds); the two warm-up runs are dropped and each node's time is the minimum (or
    median) over the timed runs of all rounds.
The rounds alternate the om and ORT, so that a stretch in which the machine runs slower (on a
shared host its speed drifts by tens of percent from minute to minute) falls on both.

How the names line up: ORT names a node it fused from a QDQ group (DequantizeLinear -> Conv ->
QuantizeLinear becomes QLinearConv, likewise QLinearAdd, QLinearConcat, QLinearGlobalAveragePool,
...) after the group's ONNX op with a "_token_N" suffix, and keeps the ONNX name of a node it left
alone (a QuantizeLinear, a MaxPool on uint8). With the suffix dropped, the name is an ONNX node, and
the om task whose onnx_nodes hold it is the group both runtimes' times are summed under. ORT's own
nodes (the NCHW <-> NHWC Transposes its layout pass inserts, named "Transpose...") and nodes no om
task names are groups of their own, ORT time only; om tasks no ORT node maps to (TRANSDATA into
NC1HWC0, a requantizing QLUT that ORT folds away) are om time only.

Each group gets a class (dense conv by kernel and stride, stem conv (<= 4 input channels),
depthwise, grouped, pooling, concat / layout, Q/DQ / requant, element-wise, head); the report sums
the groups by class and ranks classes and groups by the time the om loses (om - ORT, ms per run).
"""
import argparse
import collections
import glob
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"layer_compare: {' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}{r.stdout}")
    return r.stdout


def pick(values, stat):
    return min(values) if stat == "min" else statistics.median(values)


def om_tasks(a, om):
    """The om's tasks from atc --mode=1: kind, name, params, onnx_nodes and tensor dims."""
    js = os.path.join(a.work, "om.json")
    run([os.path.join(a.build, "atc"), "--mode=1", "--om", om, "--json", js])
    d = json.load(open(js))
    dims = {t["index"]: t["dims"] for t in d["tensors"]}
    for t in d["tasks"]:
        t["dims"] = {slot: dims.get(i) for slot, i in t["tensors"].items()}
    return d["tasks"]


def om_round(a, om, per, jit):
    """One round of the om: bench/ab_runs --per-task runs it twice in turn (two contexts, two
    untimed runs each, then --loop timed runs each) and prints each task's fastest run on each
    side; both are appended to per[task index]. ab_runs interprets vector programs, so omrun (JIT
    on) runs too, --loop 1 and --loop L+1 (omrun has no warm-up run and its profile is the mean
    over its runs), and the difference over L, each task's mean warm run, goes to jit[index]."""
    out = run(a.pin + [a.ab_runs, "--runs", str(a.loop), "--per-task", om + "@1", om + "@1", a.input])
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 5 and f[0].isdigit():
            per[int(f[0])] += [float(f[2]), float(f[3])]
    cum = []
    for loop in (1, a.loop + 1):
        d = os.path.join(a.work, "omrun")
        run(a.pin + [os.path.join(a.build, "omrun"), "--model", om, "--input", a.input, "--output", d, "--loop",
                     str(loop), "--threads", "1", "--profiler"])
        cum.append({t["index"]: t["ms_per_run"] * loop for t in json.load(open(os.path.join(d, "profile.json")))["tasks"]})
    for i in cum[1]:
        jit[i].append(max(0.0, (cum[1][i] - cum[0].get(i, 0.0)) / a.loop))


def ort_round(a, per, op):
    """One round of ORT: each node's time in every timed run appended to per[node name] (the two
    warm-up runs dropped), its ORT op into op."""
    prefix = os.path.join(a.work, "ort")
    for f in glob.glob(prefix + "_*.json"):
        os.remove(f)
    run(a.pin + ["node", os.path.join(HERE, "ort_bench.js"), "--model", a.model, "--input", a.input, "--shape",
                 a.shape, "--threads", "1", "--warmup", "2", "--min", "5", "--budget", str(a.ort_budget),
                 "--profile", prefix])
    traces = glob.glob(prefix + "_*.json")
    if len(traces) != 1:
        sys.exit(f"layer_compare: expected one ORT trace {prefix}_*.json, found {len(traces)}")
    runs = collections.defaultdict(list)
    for e in json.load(open(traces[0])):
        if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time"):
            continue
        name = e["name"][: -len("_kernel_time")]
        runs[name].append(e["dur"] / 1000.0)
        op[name] = e["args"].get("op_name", "?")
    for name, v in runs.items():
        per[name] += v[2:]


def onnx_nodes(path):
    """(ONNX node name -> op type, Conv name -> (cout, cin per group, kh, kw, group, stride)), the
    weights read through their DequantizeLinear."""
    import onnx

    g = onnx.load(path, load_external_data=False).graph
    shapes = {i.name: list(i.dims) for i in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    convs = {}
    for n in g.node:
        if n.op_type != "Conv":
            continue
        w = n.input[1]
        if w not in shapes and w in producer and producer[w].op_type == "DequantizeLinear":
            w = producer[w].input[0]
        s = shapes.get(w)
        at = {x.name: onnx.helper.get_attribute_value(x) for x in n.attribute}
        if s and len(s) == 4:
            convs[n.name] = (s[0], s[1], s[2], s[3], at.get("group", 1), (at.get("strides") or [1])[0])
    return {n.name: n.op_type for n in g.node}, convs


ORT_CLASS = {
    "QuantizeLinear": "Q/DQ / requant", "DequantizeLinear": "Q/DQ / requant", "DynamicQuantizeLinear": "Q/DQ / requant",
    "Transpose": "concat / layout", "Concat": "concat / layout", "QLinearConcat": "concat / layout",
    "Reshape": "concat / layout", "Flatten": "head", "Gemm": "head", "MatMul": "head", "QGemm": "head",
    "MaxPool": "pooling", "AveragePool": "pooling", "QLinearAveragePool": "pooling",
    "QLinearGlobalAveragePool": "pooling", "GlobalAveragePool": "pooling",
}


def task_class(t, ops, convs):
    """A task's class and a short shape label. A task that names no ONNX node (a Gemm's int8
    product, whose nodes its epilogue task holds) is known by its own name."""
    k = t["kind"]
    nodes = t["onnx_nodes"] or [t["name"]]
    types = {ops.get(n) for n in nodes}
    if k in ("QCONV2D", "CONV2D") and any(n in convs for n in nodes):
        cout, cin_g, kh, kw, group, stride = next(convs[n] for n in nodes if n in convs)
        cin = cin_g * group
        y = t["dims"].get("y")
        shape = f"{cin}->{cout} {y[2]}x{y[3]}" if y and len(y) >= 4 else f"{cin}->{cout}"
        if group > 1 and group == cin and cin_g == 1:
            return f"depthwise {kh}x{kw} s{stride}", shape
        if group > 1:
            return f"grouped {kh}x{kw}", shape
        if cin <= 4:
            return f"stem {kh}x{kw} s{stride}", shape
        return f"conv {kh}x{kw} s{stride}", shape
    if types & {"Gemm", "MatMul", "Flatten"} or k in ("MATMUL", "QMATMUL"):
        return "head", k
    if k == "POOL":
        p = t["params"]
        return "pooling", f"{p.get('mode')} {p.get('kh')}x{p.get('kw')} s{p.get('stride_h')}"
    if k in ("TRANSDATA", "CONCAT", "COPY_SLICE", "SLICE") or types == {"Concat"}:
        return "concat / layout", k
    if types <= {"QuantizeLinear", "DequantizeLinear"} or (k == "QLUT" and not t["onnx_nodes"]):
        return "Q/DQ / requant", k
    return "element-wise", k


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True)
    p.add_argument("--input", required=True)
    p.add_argument("--shape", default="1,3,224,224")
    p.add_argument("--om", help="the om to time (default: --model compiled by build/atc)")
    p.add_argument("--cpu", default="1")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--loop", type=int, default=10)
    p.add_argument("--ort-budget", type=float, default=1, help="seconds of ORT runs per round")
    p.add_argument("--stat", choices=("min", "median"), default="min")
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--work", default="/tmp/layer_compare")
    p.add_argument("--rt", action="store_true", help="run both at real-time priority (chrt -f 50)")
    a = p.parse_args()
    a.pin = (["chrt", "-f", "50"] if a.rt else []) + ["taskset", "-c", a.cpu]
    os.makedirs(a.work, exist_ok=True)
    om = a.om
    if not om:
        om = os.path.join(a.work, "model")
        run([os.path.join(a.build, "atc"), f"--model={a.model}", "--framework=5", "--soc_version=Ascend310",
             f"--input_shape=input:{a.shape}", f"--output={om}"])
        om += ".om"

    a.ab_runs = os.path.join(a.work, "ab_runs")
    run(["cc", "-O2", "-I" + os.path.join(ROOT, "include"), os.path.join(HERE, "ab_runs.c"),
         os.path.join(a.build, "libomrt.a"), "-lm", "-lpthread", "-ldl", "-o", a.ab_runs])
    tasks = om_tasks(a, om)
    ops, convs = onnx_nodes(a.model)
    om_per, jit, ort_per, ort_op = (collections.defaultdict(list), collections.defaultdict(list),
                                    collections.defaultdict(list), {})
    for r in range(a.rounds):  # in turn, so that a slower stretch of the machine falls on both
        om_round(a, om, om_per, jit)
        ort_round(a, ort_per, ort_op)
    om_ms = {i: pick(jit[i] if tasks[i]["kind"] == "VPROG" else v, a.stat) for i, v in om_per.items()}
    ort_ms = {n: pick(v, a.stat) for n, v in ort_per.items() if v}

    owner = {n: t["index"] for t in tasks for n in t["onnx_nodes"]}
    groups = {}  # key -> [label, class, shape, om ms, ort ms, ort ops]
    for t in tasks:
        cls, shape = task_class(t, ops, convs)
        groups[t["index"]] = [t["name"], cls, shape, om_ms.get(t["index"], 0.0), 0.0, []]
    for name, ms in ort_ms.items():
        onnx_name = re.sub(r"_token_\d+$", "", name)
        key = owner.get(onnx_name, name)
        if key not in groups:
            groups[key] = [name, ORT_CLASS.get(ort_op[name], "element-wise"), "ORT only", 0.0, 0.0, []]
        groups[key][4] += ms
        groups[key][5].append(ort_op[name])

    om_total = sum(g[3] for g in groups.values())
    ort_total = sum(g[4] for g in groups.values())
    print(f"model {os.path.basename(a.model)}: om {om_total:.3f} ms, ORT {ort_total:.3f} ms "
          f"(sum of per-task / per-node {a.stat}s, 1 thread, cpu {a.cpu}), ratio {om_total / ort_total:.2f}")
    by = collections.defaultdict(lambda: [0.0, 0.0, 0])
    for g in groups.values():
        c = by[g[1]]
        c[0] += g[3]
        c[1] += g[4]
        c[2] += 1
    print(f"\n{'class':24} {'groups':>6} {'om ms':>9} {'ORT ms':>9} {'ratio':>6} {'lost ms':>8}")
    for cls, (om_t, ort_t, n) in sorted(by.items(), key=lambda kv: kv[1][1] - kv[1][0]):
        ratio = f"{om_t / ort_t:6.2f}" if ort_t > 0 else "     -"
        print(f"{cls:24} {n:6d} {om_t:9.3f} {ort_t:9.3f} {ratio} {om_t - ort_t:8.3f}")
    print(f"\nthe {a.top} groups that lose most (om - ORT):")
    print(f"{'lost ms':>8} {'om':>8} {'ORT':>8} {'ratio':>6}  {'class':20} {'shape':18} group (ORT ops)")
    for g in sorted(groups.values(), key=lambda g: g[4] - g[3])[: a.top]:
        ratio = f"{g[3] / g[4]:6.2f}" if g[4] > 0 else "     -"
        ops = ",".join(sorted(set(g[5]))) or "-"
        print(f"{g[3] - g[4]:8.3f} {g[3]:8.3f} {g[4]:8.3f} {ratio}  {g[1]:20} {g[2]:18} {g[0]} ({ops})")


if __name__ == "__main__":
    main()
