#!/bin/sh
# examples/acl_batch on ResNet-50 compiled with a dynamic batch (1, 2, 4):
# the application loads it by configuration, runs every batch of copies of
# the export's input on a stream between timing events, takes the classes
# in a callback on its own thread, and checks that every image of every
# batch gets one class; its output (the first image of batch 4) is
# compared with PyTorch's (models/out/resnet50.output.bin): cosine >= 0.999
# and the same top-1.
# Usage: acl_batch_test.sh ATC ACL_BATCH WORK_DIR MODELS_DIR
set -eu
atc=$1 app=$2 work=$3 models=$4
rm -rf "$work" && mkdir -p "$work"
for f in resnet50.onnx resnet50.input.bin resnet50.output.bin; do
  [ -e "$models/$f" ] || { echo "FAIL $models/$f is missing (models/export_torchvision.py resnet50 makes it)"; exit 1; }
done
"$atc" --model="$models/resnet50.onnx" --framework=5 --output="$work/resnet50_batch" \
  --input_shape="input:-1,3,224,224" --dynamic_batch_size="1,2,4" --soc_version=Ascend310 > "$work/atc.log"
rc=0
"$app" "$work/resnet50_batch.om" "$models/resnet50.input.bin" "$work/output.bin" > "$work/run.log" 2>&1 || rc=$?
cat "$work/run.log"
[ "$rc" -eq 0 ] || { echo "FAIL acl_batch exited with $rc"; exit 1; }
for b in 1 2 4; do
  grep -q "batch $b: class" "$work/run.log" || { echo "FAIL no line for batch $b"; exit 1; }
done
/usr/bin/python3 - "$work/output.bin" "$models/resnet50.output.bin" <<'PY'
import sys
import numpy as np
got, ref = (np.fromfile(f, "<f4").astype(np.float64) for f in sys.argv[1:3])
cos = float(got @ ref / (np.linalg.norm(got) * np.linalg.norm(ref))) if got.size == ref.size else -1.0
ok = cos >= 0.999 and got.argmax() == ref.argmax()
print(f"{'ok  ' if ok else 'FAIL'} acl_batch vs PyTorch: cosine {cos:.6f} (>= 0.999), top-1 {got.argmax()} "
      f"(PyTorch {ref.argmax()})")
sys.exit(0 if ok else 1)
PY
