#!/bin/sh
# Installs everything the build, the tests and models/ need, from Debian packages.
# clang-14 + libclang-rt-14-dev: the libFuzzer targets of tests/fuzz (CI runs them briefly).
# clang-format-14: scripts/check-format.sh (ctest format/clang_format).
# python3-pil (also a dependency of python3-torchvision) and libjpeg-turbo-progs (cjpeg, jpegtran):
# the JPEGs of the DVPP tests (tests/dvpp/dvpp_test.py: samplings, restart intervals, progressive,
# arithmetic-coded files to refuse).
# llvm-16-dev: libomrt_jit (runtime/jit), the optional LLVM OrcJIT compiler of vector programs;
# without it the build still works and vector programs are interpreted.
# Safe to run again: apt-get skips what is already installed.
#   --bench  also what bench/run.sh needs: GNU time (already in the base list),
#            and Node.js with npm unless a node and an npm are already on PATH
#            (a Node.js from elsewhere is kept: Debian's npm would conflict with it),
#            and python3-torchaudio for scripts/model_sweep.py's torchaudio models.
set -eu
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
PACKAGES="build-essential cmake pkg-config protobuf-c-compiler libprotobuf-c-dev libonnx-dev libyaml-dev
          python3 python3-numpy python3-torch python3-torchvision python3-onnx python3-pil libjpeg-turbo-progs time
          clang-14 clang-format-14 libclang-rt-14-dev llvm-16-dev"
missing=""
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ "${1:-}" = "--bench" ]; then
  command -v node >/dev/null 2>&1 || missing="$missing nodejs"
  command -v npm >/dev/null 2>&1 || missing="$missing npm"
  dpkg-query -W -f='${Status}' python3-torchaudio 2>/dev/null | grep -q "ok installed" || missing="$missing python3-torchaudio"
fi
if [ -n "$missing" ]; then
  echo "install-deps: installing:$missing"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
else
  echo "install-deps: all packages present"
fi
