#!/bin/sh
# Installs everything the build, the tests and models/ need, from Debian packages.
# clang-14 + libclang-rt-14-dev: the libFuzzer targets of tests/fuzz (CI runs them briefly).
# Safe to run again: apt-get skips what is already installed.
set -eu
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
PACKAGES="build-essential cmake pkg-config protobuf-c-compiler libprotobuf-c-dev libonnx-dev libyaml-dev
          python3 python3-numpy python3-torch python3-torchvision python3-onnx
          clang-14 libclang-rt-14-dev"
missing=""
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "install-deps: installing:$missing"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
else
  echo "install-deps: all packages present"
fi
