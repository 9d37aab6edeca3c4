#!/bin/sh
# Configures and builds into build/ (Release, warnings as errors).
set -eu
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DATC_WERROR=ON > build.log 2>&1 || { cat build.log; exit 1; }
cmake --build build -j"$(nproc)" >> build.log 2>&1 || { tail -50 build.log; exit 1; }
echo "build: ok (build/atc, build/omrun)"
