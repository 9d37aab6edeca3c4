#!/bin/sh
# Builds, exports the test models, and runs every test with ctest.
set -eu
cd "$(dirname "$0")/.."
./scripts/build.sh
/usr/bin/python3 models/export_torchvision.py
cd build
exec ctest --output-on-failure -j"$(nproc)"
