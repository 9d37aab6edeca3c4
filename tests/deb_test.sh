#!/bin/sh
# cpack -G DEB: the runtime (omrt), compiler (atc) and, in a JIT build, JIT
# (omrt-jit) packages. Their dependencies come from dpkg-shlibdeps (the
# runtime: libc only); apt-get accepts them (`apt-get install -s`, a dry run
# against this machine's package database: a test must not install into
# /usr); unpacked with dpkg into a scratch root, the packaged atc compiles a
# model with its own SoC files and the AscendCL sample builds against the
# packaged headers and libascendcl (pkg-config) and runs it.
# Usage: deb_test.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -eu
build=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work/debs"
(cd "$build" && cpack -G DEB -B "$work/debs" > "$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; exit 1; }
pass=0 fail=0
check() { # check WHAT COMMAND...
  what=$1; shift
  if "$@" > "$work/last.log" 2>&1; then pass=$((pass + 1)); echo "ok   $what"
  else fail=$((fail + 1)); echo "FAIL $what"; cat "$work/last.log"; fi
}
version=$("$build/atc" --version | sed 's/^atc //')
debs=
for pkg in omrt atc omrt-jit; do
  deb=$work/debs/${pkg}_${version}_$(dpkg --print-architecture).deb
  [ "$pkg" = omrt-jit ] && [ ! -e "$build/libomrt_jit.so" ] && continue
  check "cpack wrote $(basename "$deb")" test -s "$deb"
  debs="$debs $deb"
done
deps() { dpkg-deb -f "$work/debs/$1_${version}_$(dpkg --print-architecture).deb" Depends; }
check "omrt depends on libc alone ($(deps omrt))" sh -c "[ \"\$(echo '$(deps omrt)' | sed 's/ (.*//')\" = libc6 ]"
check "atc depends on libprotobuf-c and libyaml" sh -c \
  "echo '$(deps atc)' | grep -q libprotobuf-c && echo '$(deps atc)' | grep -q libyaml"
# shellcheck disable=SC2086
check "apt-get install accepts the packages (dry run)" sh -c "apt-get install -s $debs | grep -q '^Conf omrt '"
root=$work/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" && touch "$root/var/lib/dpkg/status"
# (--unpack: the postinst, ldconfig, would run chrooted into a root without a shell)
# shellcheck disable=SC2086
check "dpkg unpacks them into a scratch root" dpkg --root="$root" --force-depends --unpack $debs
check "packaged files are under /usr" test -x "$root/usr/bin/atc" -a -x "$root/usr/bin/omquant" -a -x "$root/usr/bin/omrun" \
  -a -e "$root/usr/include/acl/acl.h" -a -e "$root/usr/lib/cmake/omrt/omrtConfig.cmake" \
  -a -e "$root/usr/share/atc/socs/Ascend310.yaml"
/usr/bin/python3 - "$work" <<'PY'
import sys, numpy as np
from onnx import helper, numpy_helper, TensorProto
w = numpy_helper.from_array(np.random.default_rng(3).standard_normal((10, 3, 3, 3)).astype(np.float32), "w")
g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3]),
                       helper.make_node("GlobalAveragePool", ["y"], ["p"]),
                       helper.make_node("Flatten", ["p"], ["z"])], "tiny",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                      [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)], [w])
open(sys.argv[1] + "/tiny.onnx", "wb").write(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
np.full((1, 3, 8, 8), 0.5, np.float32).tofile(sys.argv[1] + "/x.bin")
PY
check "the packaged atc compiles with the packaged SoC file" sh -c \
  "env -u ATC_SOC_DIR '$root/usr/bin/atc' --model='$work/tiny.onnx' --output='$work/tiny' --soc_version=Ascend310 \
     --log=info 2>&1 | grep -qF 'from $root/usr/bin/../share/atc/socs/Ascend310.yaml'"
check "the AscendCL sample builds against the packages (pkg-config ascendcl)" sh -c \
  "export PKG_CONFIG_PATH='$root/usr/lib/pkgconfig' &&
   cc -std=c11 -Wall -Werror '$src/examples/acl_classify/acl_classify.c' \$(pkg-config --cflags --libs ascendcl) \
      -o '$work/acl_classify'"
check "it runs the model with the packaged libascendcl, as the packaged omrun does" sh -c \
  "LD_LIBRARY_PATH='$root/usr/lib' '$work/acl_classify' '$work/tiny.om' '$work/x.bin' '$work/acl.bin' &&
   '$root/usr/bin/omrun' --model '$work/tiny.om' --input '$work/x.bin' --output '$work/out' &&
   cmp '$work/acl.bin' '$work/out/output_0.bin'"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
