#!/bin/sh
# CI's fuzzing step (called by .ci/run after the main tests), ~5 minutes on 2 cores:
#   1. build-asan/: the regression replayer with gcc -fsanitize=address,undefined,
#      replaying tests/fuzz/regressions/* (every input: no crash, no sanitizer
#      report, a specific refusal message), then 20,000 generated om_semantic
#      mutants (fuzz_replay --semantic, seed 1);
#   2. each libFuzzer target in build-fuzz/ (clang), seeded as
#      tests/fuzz/run.sh does, for a fixed number of executions with a fixed
#      seed (-seed=1 -runs=N, sized for about 30 s each; FUZZ_CI_SECONDS, default
#      300, only caps a slow machine). A fresh checkout therefore explores the
#      same inputs every time, so CI's verdict is reproducible: a commit that
#      passes once passes again. Long random exploration is run.sh's job. Any
#      crash fails CI; the input is in build-fuzz/artifacts/<target>/ (add it
#      to regressions/).
# Step 1 also runs the fault-injection loop (tests/fault_injection.py) with
# build-asan's atc_fi under LeakSanitizer: every injected failure must leave
# no leak behind.
# FUZZ_CI_SECONDS=0 skips step 2.
set -eu
cd "$(dirname "$0")/../.."
SECS=${FUZZ_CI_SECONDS:-300}
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
mkdir -p build-asan
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS="$SAN" \
  -DCMAKE_EXE_LINKER_FLAGS="$SAN" -DCMAKE_SHARED_LINKER_FLAGS="$SAN" >build-asan/build.log 2>&1 ||
  { cat build-asan/build.log; exit 1; }
cmake --build build-asan -j"$(nproc)" --target fuzz_replay atc_fi >>build-asan/build.log 2>&1 || { tail -40 build-asan/build.log; exit 1; }
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  build-asan/tests/fuzz/fuzz_replay tests/fuzz/regressions >build-asan/fuzz_replay.log 2>&1 ||
  { cat build-asan/fuzz_replay.log; exit 1; }
tail -1 build-asan/fuzz_replay.log
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  build-asan/tests/fuzz/fuzz_replay --semantic 20000 1 >build-asan/fuzz_semantic.log 2>&1 ||
  { tail -30 build-asan/fuzz_semantic.log; exit 1; }
tail -1 build-asan/fuzz_semantic.log
ASAN_OPTIONS=detect_leaks=1 /usr/bin/python3 tests/fault_injection.py build-asan/tests/atc_fi \
  build-asan/tmp/fault_injection >build-asan/fault_injection.log 2>&1 ||
  { tail -60 build-asan/fault_injection.log; exit 1; }
tail -1 build-asan/fault_injection.log
[ "$SECS" -gt 0 ] || exit 0
for t in onnx compile om om_mutate om_semantic jpeg png; do
  case $t in onnx | om) runs=800000 ;; om_mutate) runs=300000 ;; jpeg | png) runs=200000 ;; compile) runs=12000 ;; om_semantic) runs=8000 ;; esac
  tests/fuzz/run.sh "$t" "$SECS" -seed=1 -runs=$runs >"build-asan/fuzz-$t.log" 2>&1 ||
    { tail -60 "build-asan/fuzz-$t.log"; exit 1; }
  grep -E '^Done|^stat::number_of_executed_units' "build-asan/fuzz-$t.log" | tr '\n' ' '; echo "($t)"
done
