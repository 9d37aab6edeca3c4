#!/bin/sh
# The main job: export ResNet-50 from PyTorch to ONNX, compile it with atc,
# run it with omrun on the software NPU, and check the result against PyTorch.
set -eu
cd "$(dirname "$0")/.."
./scripts/build.sh
/usr/bin/python3 models/export_torchvision.py resnet50
exec /usr/bin/python3 tests/model_e2e.py --model resnet50 --precision force_fp16 --verbose
