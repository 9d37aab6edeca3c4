#!/usr/bin/env python3
"""AscendCL's dump and profiling, end to end (tests/acl_apps/acl_dump_prof.c):

dump: aclInit's acl.json with a "dump" section (mode "all") -> the model run
  twice -> DUMP/{time}/0/{model}/{id}/{0,1}/ each hold one file per task,
  named {op_type}.{op_name}.{task_id}.0.{timestamp}; each file decodes (an
  8-byte length, a DumpData protobuf read here with a hand-written wire
  format reader, the tensors' bytes) and its outputs, turned back from their
  stored dtype and layout into ONNX layout, are the values `omrun --dump`
  writes for the same ONNX tensors, bit for bit; the inputs of the tasks
  that read an activation are the bytes an earlier task wrote (or the
  model's input); the two iterations are identical.
setdump: aclmdlInitDump / SetDump with a dump_list naming two ONNX nodes
  (mode "output") dumps exactly the tasks standing for them; the execution
  after aclmdlFinalizeDump dumps nothing; the callback receives the same
  files (in order, ending with isLastChunk) whose outputs decode to the
  same values.
prof: aclprofInit / Start / Stop (and acl.json's "profiler" section, written
  at aclFinalize) -> op_summary_*.csv parses, one row per task per execution (Iteration ID 1..RUNS, Task ID 0..ntasks-1, each
  iteration's tasks in order, non-negative durations); the subscription's
  records through the pipe: one per task per execution, start <= end,
  duration = end - start, the same op names and types as the CSV.

Usage: acl_dump_prof.py APP ATC OMRUN WORK MODELS_DIR
"""
import csv
import glob
import json
import os
import re
import struct
import subprocess
import sys

import numpy as np

app, atc, omrun, work, models = sys.argv[1:6]
MODEL = "mobilenet_v3_small"
RUNS = 2
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)
    return ok


def run(*cmd, **kw):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if p.returncode != 0:
        print(p.stdout + p.stderr)
        sys.exit(f"FAIL {' '.join(map(str, cmd))}: exit {p.returncode}")
    return p.stdout


# --- the protobuf wire format: a message as {field: [values]} (varints as
# ints, length-delimited fields as bytes)

def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def message(b):
    out, i = {}, 0
    while i < len(b):
        key, i = varint(b, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = varint(b, i)
        elif wire == 2:
            n, i = varint(b, i)
            v, i = bytes(b[i:i + n]), i + n
        elif wire == 1:
            v, i = struct.unpack_from("<Q", b, i)[0], i + 8
        elif wire == 5:
            v, i = struct.unpack_from("<I", b, i)[0], i + 4
        else:
            raise ValueError(f"wire type {wire}")
        out.setdefault(field, []).append(v)
    return out


def one(m, f, default=0):
    return m.get(f, [default])[0]


def shape(b):
    return [int(d) for d in message(b).get(1, [])] if b else []


DTYPES = {1: np.float32, 2: np.float16, 3: np.int8, 4: np.uint8, 7: np.int32, 8: np.int64, 11: np.bool_}


def read_dump(path):
    """A dump file: (op_name, inputs, outputs); a tensor is a dict with
    dtype, format, shape, original_shape, original_op name, bytes."""
    raw = open(path, "rb").read()
    n = struct.unpack_from("<Q", raw, 0)[0]
    d = message(raw[8:8 + n])
    at = 8 + n
    ins, outs = [], []
    for field, size_field, orig_field, into in ((4, 5, 6, ins), (3, 6, 7, outs)):
        for t in d.get(field, []):
            m = message(t)
            size = one(m, size_field)
            op = message(one(m, 4, b"")) if field == 3 else {}
            into.append({"dtype": one(m, 1), "format": one(m, 2), "shape": shape(one(m, 3, b"")),
                         "original_shape": shape(one(m, orig_field, b"")), "size": size,
                         "onnx": one(op, 1, b"").decode(), "index": one(op, 2)})
    for t in ins + outs:  # the bytes follow the message: inputs, then outputs
        t["bytes"] = raw[at:at + t["size"]]
        at += t["size"]
    check_ok = at == len(raw)
    return {"op_name": one(d, 6, b"").decode(), "version": one(d, 1, b"").decode(), "time": one(d, 2),
            "inputs": ins, "outputs": outs, "whole": check_ok}


def to_onnx(t):
    """A dumped tensor's values in ONNX layout (float64), or None for packed weights."""
    a = np.frombuffer(t["bytes"], DTYPES[t["dtype"]]).astype(np.float64)
    if t["format"] == 2:  # ND
        return a.reshape(t["shape"])
    if t["format"] == 3:  # NC1HWC0 -> NCHW
        n, c1, h, w, c0 = t["shape"]
        c = t["original_shape"][1]
        return a.reshape(n, c1, h, w, c0).transpose(0, 1, 4, 2, 3).reshape(n, c1 * c0, h, w)[:, :c]
    return None


# --- the model, omrun's layer dump of it

os.makedirs(work, exist_ok=True)
om = os.path.join(work, "mnv3.om")
run(atc, f"--model={models}/{MODEL}.onnx", "--framework=5", f"--output={work}/mnv3", "--input_shape=input:1,3,224,224",
    "--soc_version=Ascend310")
inp = f"{models}/{MODEL}.input.bin"
run(omrun, "--model", om, "--input", inp, "--output", f"{work}/omrun", "--dump", f"{work}/omrun_dump")
ref = json.load(open(f"{work}/omrun_dump/dump.json"))
tasks = ref["tasks"]
ntasks = len(tasks)
ref_file = {o["onnx_tensor"]: os.path.join(work, "omrun_dump", o["file"])
            for t in tasks for o in t["outputs"] if o["file"] and o["onnx_tensor"]}
print(f"{MODEL}: {ntasks} tasks, {len(ref_file)} ONNX tensors in omrun's dump")

# --- dump: aclInit's acl.json, mode "all"

dump_dir = os.path.join(work, "dump")
os.makedirs(dump_dir, exist_ok=True)
acl_json = os.path.join(work, "acl.json")
json.dump({"dump": {"dump_path": dump_dir, "dump_mode": "all", "dump_list": [{"model_name": "mnv3"}]}},
          open(acl_json, "w"))
run(app, "dump", om, acl_json, inp, RUNS)
times = os.listdir(dump_dir)
check(len(times) == 1 and re.fullmatch(r"\d{14}", times[0]) is not None, f"one {{time}} directory: {times}")
base = os.path.join(dump_dir, times[0], "0", "mnv3", "1")
check(sorted(os.listdir(base)) == [str(i) for i in range(RUNS)], f"{base}: iterations 0..{RUNS - 1}")
NAME = re.compile(r"([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.(\d+)\.0\.(\d{16})")
iters = []
for it in range(RUNS):
    files = sorted(os.listdir(os.path.join(base, str(it))))
    check(len(files) == ntasks, f"iteration {it}: {len(files)} files, one per task ({ntasks}), each named "
          "{op_type}.{op_name}.{task_id}.0.{timestamp}")
    by_task = {}
    for f in files:
        m = NAME.fullmatch(f)
        if m is None:
            check(False, f"{f}: named {{op_type}}.{{op_name}}.{{task_id}}.0.{{timestamp}}")
            continue
        d = read_dump(os.path.join(base, str(it), f))
        d["kind"], d["task"] = m.group(1), int(m.group(3))
        by_task[d["task"]] = d
    iters.append(by_task)

model_input = np.fromfile(inp, "<f4")
worst, compared, whole = 0.0, 0, True
outputs_seen = {}  # stored bytes -> task (what earlier tasks wrote)
fed = 0  # tasks with an activation input: an earlier task's output or the model input
reads_activation = 0
last = {}  # ONNX tensor -> (task, output) of its last writer
for t in range(ntasks):
    d = iters[0].get(t)
    if d is None:
        check(False, f"task {t}: no file")
        continue
    whole &= d["whole"] and d["version"] == "2.0" and d["op_name"] == tasks[t]["name"]
    acts = [x for x in d["inputs"] if x["format"] in (2, 3)]
    if acts:
        hit = False
        for x in acts:
            v = to_onnx(x)
            hit |= x["bytes"] in outputs_seen or (v is not None and v.size == model_input.size and
                                                    np.allclose(v.ravel(), model_input, atol=2e-3))
        reads_activation += 1
        fed += hit
    for o in d["outputs"]:
        outputs_seen[o["bytes"]] = t
        last[o["onnx"]] = (t, o)  # (a tensor several tasks write in parts: its last writer's)
for name, (t, o) in last.items():
    if name in ref_file:
        got, want = to_onnx(o), np.load(ref_file[name]).astype(np.float64)
        if got is None or got.shape != want.shape:
            check(False, f"task {t} output {name}: shape {None if got is None else got.shape} vs {want.shape}")
            continue
        worst = max(worst, float(np.abs(got - want).max()) if got.size else 0.0)
        compared += 1
check(whole, "every file: length, DumpData (version 2.0, op_name the task's) and exactly its tensors' bytes")
check(compared >= len(ref_file) * 0.9 and worst == 0.0,
      f"{compared} dumped outputs are omrun --dump's values for the same ONNX tensors (max |diff| {worst})")
check(fed == reads_activation and reads_activation > ntasks // 2,
      f"{fed} of {reads_activation} tasks reading activations read an earlier task's output or the model input")
same = all([x["bytes"] for x in iters[0][t]["inputs"] + iters[0][t]["outputs"]] ==
           [x["bytes"] for x in iters[1][t]["inputs"] + iters[1][t]["outputs"]]
           for t in range(ntasks) if t in iters[0] and t in iters[1])
check(same, "iterations 0 and 1 dumped the same tensors")

# --- setdump: two layers by ONNX node name, mode "output"; then the callback

nodes = [tasks[3]["onnx_nodes"][0], tasks[ntasks // 2]["onnx_nodes"][0]]
want = sorted(t["task"] for t in tasks if set(t["onnx_nodes"]) & set(nodes))
set_dir = os.path.join(work, "setdump")
cb_dir = os.path.join(work, "callback")
os.makedirs(set_dir, exist_ok=True)
os.makedirs(cb_dir, exist_ok=True)
dump_json = os.path.join(work, "dump.json")
json.dump({"dump": {"dump_path": set_dir, "dump_mode": "output",
                    "dump_list": [{"model_name": "mobilenet_v3_small_other"},
                                  {"model_name": "mnv3", "layer": nodes}]}}, open(dump_json, "w"))
print(run(app, "setdump", om, dump_json, inp, RUNS, cb_dir).strip())
got_files = sorted(glob.glob(os.path.join(set_dir, "*", "0", "mnv3", "1", "*", "*")))
got_tasks = sorted({int(NAME.fullmatch(os.path.basename(f)).group(3)) for f in got_files})
check(got_tasks == want and len(got_files) == RUNS * len(want),
      f"layers {nodes}: tasks {got_tasks} dumped {len(got_files)} times (want tasks {want}, {RUNS} runs; "
      "none after aclmdlFinalizeDump)")
check(all(not read_dump(f)["inputs"] and read_dump(f)["outputs"] for f in got_files), "mode output: no inputs")
cb = sorted(os.listdir(cb_dir))
check(len(cb) == ntasks, f"callback: {len(cb)} files, one per task")
cb_worst, cb_n = 0.0, 0
for f in cb:
    m = NAME.fullmatch(f)
    d = read_dump(os.path.join(cb_dir, f))
    ref_outs = iters[0][int(m.group(3))]["outputs"] if m and int(m.group(3)) in iters[0] else []
    for o, r in zip(d["outputs"], ref_outs):
        a, b = to_onnx(o), to_onnx(r)
        if a is not None and b is not None:
            cb_worst = max(cb_worst, float(np.abs(a - b).max()) if a.size else 0.0)
            cb_n += 1
    whole &= d["whole"] and not d["inputs"]
check(whole and cb_n > 0 and cb_worst == 0.0,
      f"callback: whole files, outputs only (dump_mode not set), {cb_n} outputs as the files' (max |diff| {cb_worst})")

# --- profiling: the op summary and the subscription

prof_dir = os.path.join(work, "prof")
os.makedirs(prof_dir, exist_ok=True)
records = os.path.join(work, "records.txt")
print(run(app, "prof", om, prof_dir, inp, RUNS, records).strip())
sums = glob.glob(os.path.join(prof_dir, "op_summary_*_1.csv"))
check(len(sums) == 1, f"one op summary: {sums}")
rows = list(csv.DictReader(open(sums[0]))) if sums else []
cols = ["Device_id", "Model Name", "Model ID", "Iteration ID", "Task ID", "Stream ID", "Op Name", "OP Type",
        "Task Type", "Task Start Time(us)", "Task Duration(us)", "Task Wait Time(us)", "Output Shapes",
        "Output Data Types", "Output Formats"]
check(bool(rows) and list(rows[0].keys()) == cols, "the CSV's columns")
check(len(rows) == RUNS * ntasks, f"{len(rows)} rows: one per task per execution ({RUNS} x {ntasks})")
ok = True
for k, r in enumerate(rows):
    it, t = k // ntasks, k % ntasks
    ok &= (r["Model Name"] == "mnv3" and int(r["Iteration ID"]) == it + 1 and int(r["Task ID"]) == t and
           r["Op Name"] == tasks[t]["name"] and r["OP Type"] == tasks[t]["kind"] and
           float(r["Task Duration(us)"]) >= 0 and float(r["Task Wait Time(us)"]) >= 0)
    if t:
        ok &= float(r["Task Start Time(us)"]) >= float(rows[k - 1]["Task Start Time(us)"])
check(ok, "rows: model, iteration, task order, names and kinds as omrun's, times in order")
total = sum(float(r["Task Duration(us)"]) for r in rows) / RUNS
print(f"     tasks' time per execution: {total:.0f} us")
recs = [ln.rstrip("\n").split("\t") for ln in open(records)]
check(len(recs) == RUNS * ntasks, f"subscription: {len(recs)} records, one per task per execution")
ok = all(int(s) <= int(e) and int(d) == int(e) - int(s) and int(mid) == 1 for mid, _, _, s, e, d in recs)
ok &= [(r[1], r[2]) for r in recs] == [(tasks[k % ntasks]["kind"], tasks[k % ntasks]["name"]) for k in range(len(recs))]
check(ok, "records: model 1, start <= end, duration = end - start, the tasks' types and names in order")

# acl.json's profiler section: the whole process, written by aclFinalize
json_dir = os.path.join(work, "prof_json")
os.makedirs(json_dir, exist_ok=True)
prof_json = os.path.join(work, "acl_prof.json")
json.dump({"profiler": {"switch": "on", "output": json_dir, "aic_metrics": "PipeUtilization"}}, open(prof_json, "w"))
run(app, "dump", om, prof_json, inp, RUNS)
sums = glob.glob(os.path.join(json_dir, "op_summary_*_1.csv"))
rows = list(csv.DictReader(open(sums[0]))) if len(sums) == 1 else []
check(len(rows) == RUNS * ntasks and [int(r["Iteration ID"]) for r in rows[::ntasks]] == list(range(1, RUNS + 1)),
      f"acl.json profiler: {len(rows)} rows written at aclFinalize, iterations 1..{RUNS}")

sys.exit(1 if failures else 0)
