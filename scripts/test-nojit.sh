#!/bin/sh
# Builds into build-nojit/ without libomrt_jit (-DATC_JIT=OFF, as on a machine
# without LLVM 16) and runs every test there with ctest: vector programs are
# interpreted, and the JIT's own tests are not built. Run after
# scripts/test.sh, which exports the test models both builds use.
# model/omquant_resnet18 is left to scripts/test.sh: its three minutes are
# omquant's calibration in the reference evaluator, which has no JIT.
set -eu
cd "$(dirname "$0")/.."
mkdir -p build-nojit
log=build-nojit/build.log
cmake -S . -B build-nojit -DCMAKE_BUILD_TYPE=Release -DATC_WERROR=ON -DATC_JIT=OFF > "$log" 2>&1 || { cat "$log"; exit 1; }
grep -q "libomrt_jit is not built" "$log" || { echo "test-nojit: build-nojit still builds libomrt_jit" >&2; exit 1; }
cmake --build build-nojit -j"$(nproc)" >> "$log" 2>&1 || { tail -50 "$log"; exit 1; }
echo "build-nojit: ok (no libomrt_jit)"
cd build-nojit
exec ctest --output-on-failure -j"$(nproc)" -E "^model/omquant_resnet18$"
