#!/bin/sh
# Configures and builds into build/ (Release, warnings as errors); the log is build/build.log.
set -eu
cd "$(dirname "$0")/.."
mkdir -p build
log=build/build.log
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DATC_WERROR=ON > "$log" 2>&1 || { cat "$log"; exit 1; }
cmake --build build -j"$(nproc)" >> "$log" 2>&1 || { tail -50 "$log"; exit 1; }
echo "build: ok (build/atc, build/omrun)"
