#!/bin/sh
# Writes a digest of what the build computes, for refactors that must not
# change a single result: the CRC-32C of every ONNX node test's outputs in
# both precision modes (conformance --digests), and the md5 of omrun's
# outputs for every exported model in models/out, each compiled in
# force_fp16 and must_keep_origin_dtype and run on 1 and on 2 threads, on
# the kernel path the host selects and on the portable one.
#
#   scripts/output-digest.sh OUT.txt [BUILD_DIR] [NODE_TESTS_DIR]
#
# Compare two digests with diff; any line that differs is a changed result.
set -eu
cd "$(dirname "$0")/.."
out=$1
build=${2:-build}
nodes=${3:-../shared/onnx-node-tests/node}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
: > "$out"
if [ -d "$nodes" ]; then
  "$build/tests/conformance" --quiet --digests="$work/nodes.txt" "$nodes" > /dev/null || true
  sed 's/^/node /' "$work/nodes.txt" >> "$out"
else
  echo "output-digest: no node tests at $nodes" >&2
fi
for json in models/out/*.json; do
  name=$(basename "$json" .json)
  input=$(python3 -c "import json,sys; m=json.load(open(sys.argv[1])); print(m['input']+':'+','.join(map(str,m['input_shape'])))" "$json")
  for prec in force_fp16 must_keep_origin_dtype; do
    if ! "$build/atc" --model="models/out/$name.onnx" --framework=5 --output="$work/m" --input_shape="$input" \
         --soc_version=Ascend310 --precision_mode="$prec" > "$work/atc.log" 2>&1; then
      echo "model $name $prec atc-failed" >> "$out"
      continue
    fi
    for env in "OMRT_THREADS=1" "OMRT_THREADS=2" "OMRT_THREADS=2 OMRT_PORTABLE=1"; do
      rm -rf "$work/o"
      if env $env "$build/omrun" --model "$work/m.om" --input "models/out/$name.input.bin" --output "$work/o" \
           > /dev/null 2>&1; then
        sum=$(cat "$work"/o/output_*.bin | md5sum | cut -d' ' -f1)
      else
        sum=omrun-failed
      fi
      echo "model $name $prec $(echo "$env" | tr ' ' ,) $sum" >> "$out"
    done
  done
done
echo "output-digest: $(wc -l < "$out") results in $out"
