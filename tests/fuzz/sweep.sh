#!/bin/sh
# The om damage sweep of issue 5 on a ResNet-50 package (not in CI: slow).
#   tests/fuzz/sweep.sh [PREFIX_BYTES [RANDOM_POSITIONS [TRUNCATIONS]]]
# defaults 65536 4096 1000 (the issue's figures: ~560,000 loads, truncations
# first, then random positions, then the prefix; a flip in WEIGHTS costs a
# CRC over that partition, ~11 ms for the ~100 MB package with the hardware
# CRC, so the whole sweep takes about an hour on one core; progress lines
# carry the counts so far).
# Needs build/ (scripts/build.sh) and models/out/resnet50.onnx
# (models/export_torchvision.py resnet50).
set -eu
cd "$(dirname "$0")/../.."
cmake --build build --target fuzz_replay atc >/dev/null
OM=build/sweep/resnet50.om
mkdir -p build/sweep
[ -f "$OM" ] || build/atc --model=models/out/resnet50.onnx --framework=5 --output=build/sweep/resnet50 \
  --soc_version=Ascend310 --input_shape="input:1,3,224,224" >/dev/null
OMRT_THREADS=1 exec build/tests/fuzz/fuzz_replay --sweep "$OM" "${1:-65536}" "${2:-4096}" "${3:-1000}"
