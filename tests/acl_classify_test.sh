#!/bin/sh
# examples/acl_classify on ResNet-50, as an Ascend developer would run it:
# installed with cmake --install, the model compiled by the installed atc
# (models/out/resnet50.onnx, the torchvision export), the sample built
# against the installed headers with -lascendcl alone and AddressSanitizer
# (leaks included: every AscendCL resource is released), run on the
# export's input, and its output compared with PyTorch's
# (models/out/resnet50.output.bin): cosine >= 0.999 and the same top-1.
# Usage: acl_classify_test.sh BUILD_DIR SOURCE_DIR WORK_DIR MODELS_DIR
set -eu
build=$1 src=$2 work=$3 models=$4
rm -rf "$work" && mkdir -p "$work"
for f in resnet50.onnx resnet50.input.bin resnet50.output.bin; do
  [ -e "$models/$f" ] || { echo "FAIL $models/$f is missing (models/export_torchvision.py resnet50 makes it)"; exit 1; }
done
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
p=$work/prefix
libdir=$(dirname "$(find "$p" -name ascendcl.pc)")/..
"$p/bin/atc" --model="$models/resnet50.onnx" --framework=5 --output="$work/resnet50" \
  --input_shape="input:1,3,224,224" --soc_version=Ascend310
cc -std=c11 -Wall -Werror -g -fsanitize=address -fno-omit-frame-pointer \
  "$src/examples/acl_classify/acl_classify.c" -I"$p/include" -L"$libdir" -lascendcl -Wl,-rpath,"$libdir" \
  -o "$work/acl_classify"
ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 \
  "$work/acl_classify" "$work/resnet50.om" "$models/resnet50.input.bin" "$work/output.bin"
/usr/bin/python3 - "$work/output.bin" "$models/resnet50.output.bin" <<'PY'
import sys
import numpy as np
got, ref = (np.fromfile(f, "<f4").astype(np.float64) for f in sys.argv[1:3])
cos = float(got @ ref / (np.linalg.norm(got) * np.linalg.norm(ref))) if got.size == ref.size else -1.0
ok = cos >= 0.999 and got.argmax() == ref.argmax()
print(f"{'ok  ' if ok else 'FAIL'} acl_classify vs PyTorch: cosine {cos:.6f} (>= 0.999), top-1 {got.argmax()} "
      f"(PyTorch {ref.argmax()})")
sys.exit(0 if ok else 1)
PY
