#!/bin/bash
# bench/compile_time.sh - atc's compile time and peak memory on long chains (issue 24 item 3).
#
#   bench/compile_time.sh [--atc PATH] [N ...]        (default N: 1000 4000 20000 100000)
#
# Writes a chain of N Relu nodes (x [1,16] -> Relu -> ... -> y) with python3-onnx, compiles it with
# atc --soc_version=Ascend310 and prints N, wall seconds and peak resident KiB (/usr/bin/time -v).
# Not a test: nothing here runs under ctest; run it on an idle machine for figures worth quoting.
set -euo pipefail
cd "$(dirname "$0")/.."
ATC=build/atc
if [ "${1:-}" = "--atc" ]; then ATC=$2; shift 2; fi
SIZES=${*:-"1000 4000 20000 100000"}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
printf '%8s %10s %12s\n' nodes seconds peak_KiB
for n in $SIZES; do
  /usr/bin/python3 - "$n" "$WORK/chain.onnx" <<'PY'
import sys
from onnx import helper, TensorProto, save
n, path = int(sys.argv[1]), sys.argv[2]
nodes = [helper.make_node("Relu", ["x" if i == 0 else f"t{i-1}"], ["y" if i == n - 1 else f"t{i}"], name=f"r{i}")
         for i in range(n)]
g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
PY
  /usr/bin/time -v "$ATC" --model="$WORK/chain.onnx" --framework=5 --output="$WORK/chain" \
    --soc_version=Ascend310 >"$WORK/out.txt" 2>"$WORK/time.txt" || { cat "$WORK/out.txt" "$WORK/time.txt"; exit 1; }
  secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s}' "$WORK/time.txt")
  kib=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/time.txt")
  printf '%8d %10.2f %12d\n' "$n" "$secs" "$kib"
done
