#!/bin/sh
# Builds, exports the test models (and omquant's calibration images), and runs every test with ctest.
set -eu
cd "$(dirname "$0")/.."
./scripts/build.sh
/usr/bin/python3 models/export_torchvision.py
/usr/bin/python3 models/export_zoo_old.py                  # an opset-8 model zoo style Tiny YOLOv2
/usr/bin/python3 models/export_qdq.py --calib resnet18   # omquant's calibration images
cd build
exec ctest --output-on-failure -j"$(nproc)"
