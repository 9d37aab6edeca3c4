#!/bin/sh
# Builds the libFuzzer targets (clang, ASan + UBSan) in build-fuzz/ and runs one.
#
#   tests/fuzz/run.sh TARGET SECONDS [extra libFuzzer flags...]
#   TARGET: onnx | compile | om | om_mutate | om_semantic | jpeg | png | all (each for SECONDS, one after another)
#
# The working corpus lives in build-fuzz/corpus/TARGET (kept between runs);
# seeds are made on the first run (build-fuzz/seeds/TARGET): ONNX node tests'
# models for onnx, om packages compiled from them for om and om_mutate, one
# recipe per built-in seed model for compile and per built-in seed package
# for om_semantic (a recipe without mutations), small JPEGs made by
# jpeg_seeds.py (PIL, jpegtran) for jpeg, small PNGs made by png_seeds.py
# (PIL, zlib) for png; tests/fuzz/regressions/TARGET
# is always added. Crashes, leaks, timeouts (-timeout=10) and allocations
# over 2 GB are written to build-fuzz/artifacts/TARGET/ and end the run with
# a non-zero status. FUZZ_JOBS is not used: one fuzzer process at a time.
set -eu
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
TARGET=${1:?usage: run.sh TARGET SECONDS}
SECONDS_=${2:?usage: run.sh TARGET SECONDS}
shift 2
B=$ROOT/build-fuzz
NODE_TESTS=${NODE_TESTS:-$ROOT/../shared/onnx-node-tests/node}

if [ "$TARGET" = all ]; then
  for t in onnx compile om om_mutate om_semantic jpeg png; do "$0" "$t" "$SECONDS_" "$@"; done
  exit 0
fi
case $TARGET in onnx|compile|om|om_mutate|om_semantic|jpeg|png) ;; *) echo "run.sh: unknown target $TARGET" >&2; exit 2 ;; esac

CC=${CC:-clang}
command -v "$CC" >/dev/null || CC=clang-14
mkdir -p "$B"
[ -f "$B/CMakeCache.txt" ] ||
  CC=$CC cmake -S . -B "$B" -DATC_FUZZ=ON -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$B/build.log" 2>&1 ||
  { cat "$B/build.log"; exit 1; }
cmake --build "$B" -j"$(nproc)" --target fuzz_onnx fuzz_compile fuzz_om fuzz_om_mutate fuzz_om_semantic fuzz_jpeg fuzz_png atc \
  >>"$B/build.log" 2>&1 ||
  { tail -40 "$B/build.log"; exit 1; }

# --- seeds (once)
S=$B/seeds
# Node tests of ops the frontend imports (a few hundred small models).
OPS="conv relu maxpool averagepool globalaveragepool globalmaxpool add sub mul div flatten reshape
     squeeze unsqueeze identity dropout shape gather concat cast softmax logsoftmax gemm matmul
     batchnorm clip sigmoid constant"
if [ ! -d "$S/onnx" ]; then
  mkdir -p "$S/onnx"
  for op in $OPS; do
    for d in "$NODE_TESTS"/test_"$op"*; do
      [ -f "$d/model.onnx" ] && cp "$d/model.onnx" "$S/onnx/$(basename "$d").onnx"
    done
  done
  echo "run.sh: $(ls "$S/onnx" | wc -l) ONNX seeds from $NODE_TESTS"
fi
if [ ! -d "$S/om" ]; then
  mkdir -p "$S/om"
  for f in "$S"/onnx/*.onnx; do
    n=$(basename "$f" .onnx)
    "$B/atc" --model="$f" --framework=5 --output="$S/om/$n" --soc_version=Ascend310 >/dev/null 2>&1 || true
    "$B/atc" --model="$f" --framework=5 --output="$S/om/$n-fp32" --soc_version=Ascend310 \
      --precision_mode=must_keep_origin_dtype >/dev/null 2>&1 || true
  done
  find "$S/om" -name '*.om' -size +64k -delete
  echo "run.sh: $(ls "$S/om" | wc -l) om seeds compiled from them"
fi
if [ ! -d "$S/compile" ]; then
  mkdir -p "$S/compile"
  for i in 0 1 2 3; do
    printf "\\00$i\\000" >"$S/compile/seed$i"           # force_fp16, Ascend310
    printf "\\00$i\\014" >"$S/compile/seed$i-fp32"      # must_keep_origin_dtype
    printf "\\00$i\\001" >"$S/compile/seed$i-910"       # Ascend910
  done
fi
if [ ! -d "$S/om_semantic" ]; then
  mkdir -p "$S/om_semantic"
  for i in 0 1 2 3 4 5; do printf "\\00$i" >"$S/om_semantic/seed$i"; done
fi
if [ ! -d "$S/jpeg" ]; then
  /usr/bin/python3 "$ROOT/tests/fuzz/jpeg_seeds.py" "$S/jpeg.tmp" && mv "$S/jpeg.tmp" "$S/jpeg"
fi
if [ ! -d "$S/png" ]; then
  /usr/bin/python3 "$ROOT/tests/fuzz/png_seeds.py" "$S/png.tmp" && mv "$S/png.tmp" "$S/png"
fi
SEEDS=$S/$TARGET
[ "$TARGET" = om_mutate ] && SEEDS=$S/om

mkdir -p "$B/corpus/$TARGET" "$B/artifacts/$TARGET"
REG=$ROOT/tests/fuzz/regressions/$TARGET
set -- -max_total_time="$SECONDS_" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
  -artifact_prefix="$B/artifacts/$TARGET/" -print_final_stats=1 "$@" "$B/corpus/$TARGET" "$SEEDS"
[ -d "$REG" ] && [ -n "$(ls "$REG")" ] && set -- "$@" "$REG"
echo "run.sh: fuzz_$TARGET for ${SECONDS_}s"
exec "$B/tests/fuzz/fuzz_$TARGET" "$@"
