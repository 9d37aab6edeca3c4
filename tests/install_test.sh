#!/bin/sh
# cmake --install puts atc, omrun, libomrt and libascendcl (static and
# shared), omrt.h and acl/*.h, omrt.pc and ascendcl.pc, the CMake package and
# the SoC files under a prefix. Applications build against it with
# pkg-config alone, with find_package(omrt) (examples/acl_classify's own
# CMakeLists.txt among them), or with -lascendcl alone, and run a package;
# the libraries need only libc, libm, pthread; the shared ones export only
# their API and the static ones have no other global symbol. One version
# everywhere. In a JIT build (BUILD_DIR has libomrt_jit.so.*) libomrt_jit is
# installed beside libomrt and the installed omrun finds it (RUNPATH).
# Last, the prefix is moved and the source tree hidden, and the moved atc
# still compiles.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -eu
build=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
pass=0 fail=0
check() { # check WHAT COMMAND...
  what=$1; shift
  if "$@" > "$work/last.log" 2>&1; then pass=$((pass + 1)); echo "ok   $what"
  else fail=$((fail + 1)); echo "FAIL $what"; cat "$work/last.log"; fi
}
p=$work/prefix
soname() { readelf -d "$1" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p'; }
libdir=$(dirname "$(find "$p" -name omrt.pc)")/..
for f in bin/atc bin/omquant bin/omrun include/omrt.h include/acl/acl.h include/acl/acl_base.h include/acl/acl_rt.h \
         include/acl/acl_mdl.h include/acl/error_codes/rt_error_codes.h share/atc/socs/Ascend310.yaml \
         share/atc/socs/Ascend910.yaml; do
  check "installed $f" test -e "$p/$f"
done
export PKG_CONFIG_PATH="$libdir/pkgconfig"
for lib in omrt:omrt_ ascendcl:acl; do
  name=${lib%%:*} prefix=${lib#*:}
  check "installed lib$name.a and lib$name.so" test -e "$libdir/lib$name.a" -a -e "$libdir/lib$name.so"
  check "pkg-config finds $name" pkg-config --exists "$name"
  check "lib$name.so needs only libc, libm, pthread" sh -c \
    "readelf -d '$libdir/lib$name.so' | grep NEEDED | grep -v -E 'lib(c|m|pthread)\.so|ld-linux' | { ! grep .; }"
  check "lib$name.so exports only the $prefix API" sh -c \
    "nm -D --defined-only '$libdir/lib$name.so' | awk '{print \$3}' | grep -v '^$prefix' | { ! grep .; }"
  check "lib$name.a has no global symbol but the $prefix API" sh -c \
    "nm -g --defined-only '$libdir/lib$name.a' | awk 'NF == 3 {print \$3}' | grep -v '^$prefix' | { ! grep .; }"
done
# An application with names libomrt uses inside (crc32c, dtype_name, rt_error)
# links both static libraries without a clash.
cat > "$work/clash.c" <<'EOF'
#include <acl/acl.h>
#include <omrt.h>
#include <stdio.h>
unsigned crc32c(unsigned crc, const void *p, unsigned long n) { return crc + (unsigned)n + (p != 0); }
const char *dtype_name(int dt) { return dt ? "mine" : "none"; }
int rt_error = 3;
int main(void) {
  int32_t a, b, c;
  aclrtGetVersion(&a, &b, &c);
  printf("%s %d.%d.%d %s %u %d\n", omrt_version(), a, b, c, dtype_name(1), crc32c(1, "", 2), rt_error);
  return 0;
}
EOF
check "an application defining crc32c, dtype_name, rt_error links libomrt.a and libascendcl.a" sh -c \
  "cc -std=c11 -Wall -Werror '$work/clash.c' -I'$p/include' '$libdir/libascendcl.a' '$libdir/libomrt.a' \
      -lpthread -lm -o '$work/clash' && '$work/clash' | grep -q ' mine 4 3\$'"
# One version everywhere: atc --version, the file names and sonames, the
# header's OMRT_VERSION_* and omrt_version() of the installed library.
version=$("$p/bin/atc" --version | sed -n 's/^atc \([0-9]*\.[0-9]*\.[0-9]*\)$/\1/p')
check "atc --version prints atc MAJOR.MINOR.PATCH" test -n "$version"
check "libomrt.so.$version installed" test -f "$libdir/libomrt.so.$version"
so=$(soname "$libdir/libomrt.so")
check "libomrt's soname ($so) names its file (libomrt.so.$version)" sh -c \
  "case 'libomrt.so.$version' in '$so'|'$so'.*) exit 0;; esac; exit 1"
cat > "$work/version.c" <<'EOF'
#include <omrt.h>
#include <stdio.h>
int main(void) {
  printf("%d.%d.%d %s\n", OMRT_VERSION_MAJOR, OMRT_VERSION_MINOR, OMRT_VERSION_PATCH, omrt_version());
  return 0;
}
EOF
check "OMRT_VERSION_* and omrt_version() are atc's version" sh -c \
  "cc '$work/version.c' \$(pkg-config --cflags --libs omrt) -o '$work/version' &&
   LD_LIBRARY_PATH='$libdir' '$work/version' | grep -qx '$version $version'"
check "example builds with pkg-config (shared)" sh -c \
  "cc -std=c11 -Wall -Werror '$src/examples/classify.c' \$(pkg-config --cflags --libs omrt) -o '$work/classify'"
check "example builds against libomrt.a" sh -c \
  "cc -std=c11 -Wall -Werror '$src/examples/classify.c' \$(pkg-config --cflags omrt) '$libdir/libomrt.a' -lpthread -lm -o '$work/classify_static'"
# A tiny model through the installed atc, run by the example.
/usr/bin/python3 - "$work" <<'PY'
import sys, numpy as np
from onnx import helper, numpy_helper, TensorProto
w = numpy_helper.from_array(np.random.default_rng(1).standard_normal((10, 3, 3, 3)).astype(np.float32), "w")
g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3]),
                       helper.make_node("GlobalAveragePool", ["y"], ["p"]),
                       helper.make_node("Flatten", ["p"], ["z"])], "tiny",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                      [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)], [w])
open(sys.argv[1] + "/tiny.onnx", "wb").write(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
g = helper.make_graph([helper.make_node("Sigmoid", ["x"], ["z"])], "act",  # one vector program
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                      [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)])
open(sys.argv[1] + "/act.onnx", "wb").write(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
np.ones((1, 3, 8, 8), np.float32).tofile(sys.argv[1] + "/x.bin")
PY
check "installed atc compiles" "$p/bin/atc" --model="$work/tiny.onnx" --output="$work/tiny" --soc_version=Ascend310
check "example runs (shared)" sh -c \
  "LD_LIBRARY_PATH='$libdir' '$work/classify' '$work/tiny.om' '$work/x.bin' > '$work/run.log'"
check "example prints top-5" grep -q "top-5: class" "$work/run.log"
check "example runs (static)" "$work/classify_static" "$work/tiny.om" "$work/x.bin"
check "installed omrun runs" "$p/bin/omrun" --model "$work/tiny.om" --input "$work/x.bin" --output "$work/out"

# The AscendCL sample: against the installed headers with -lascendcl alone,
# with pkg-config, and with find_package(omrt) (its own CMakeLists.txt); each
# build computes what omrun does.
check "acl_classify builds with -lascendcl alone" \
  cc -std=c11 -Wall -Werror "$src/examples/acl_classify/acl_classify.c" -I"$p/include" -L"$libdir" -lascendcl \
  -Wl,-rpath,"$libdir" -o "$work/acl_classify"
check "acl_classify builds with pkg-config ascendcl" sh -c \
  "cc -std=c11 -Wall -Werror '$src/examples/acl_classify/acl_classify.c' \$(pkg-config --cflags --libs ascendcl) \
      -o '$work/acl_classify_pc'"
check "acl_classify builds against libascendcl.a" sh -c \
  "cc -std=c11 -Wall -Werror '$src/examples/acl_classify/acl_classify.c' \$(pkg-config --cflags ascendcl) \
      '$libdir/libascendcl.a' -lpthread -lm -o '$work/acl_classify_static'"
check "find_package(omrt) builds examples/acl_classify (omrt::ascendcl)" sh -c \
  "cmake -S '$src/examples/acl_classify' -B '$work/cmake-sample' -DCMAKE_PREFIX_PATH='$p' &&
   cmake --build '$work/cmake-sample'"
mkdir -p "$work/cmake-app"
cp "$src/examples/classify.c" "$src/examples/acl_classify/acl_classify.c" "$work/cmake-app/"
cat > "$work/cmake-app/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.20)
project(app LANGUAGES C)
find_package(omrt 0.3 REQUIRED)
add_executable(classify classify.c)
target_link_libraries(classify PRIVATE omrt::omrt)
add_executable(acl_classify_static acl_classify.c)
target_link_libraries(acl_classify_static PRIVATE omrt::ascendcl_static)
EOF
check "find_package(omrt 0.3) gives omrt::omrt and omrt::ascendcl_static" sh -c \
  "cmake -S '$work/cmake-app' -B '$work/cmake-app/build' -DCMAKE_PREFIX_PATH='$p' &&
   cmake --build '$work/cmake-app/build'"
check "find_package(omrt 9.0) refuses this version" sh -c \
  "sed 's/omrt 0.3 REQUIRED/omrt 9.0 REQUIRED/' '$work/cmake-app/CMakeLists.txt' > '$work/CMakeLists.txt' &&
   mkdir -p '$work/cmake-v9' && cp '$work/CMakeLists.txt' '$work/cmake-app/'*.c '$work/cmake-v9/' &&
   ! cmake -S '$work/cmake-v9' -B '$work/cmake-v9/build' -DCMAKE_PREFIX_PATH='$p'"
for app in acl_classify acl_classify_pc acl_classify_static cmake-sample/acl_classify cmake-app/build/acl_classify_static; do
  check "$app runs the model and writes what omrun does" sh -c \
    "LD_LIBRARY_PATH='$libdir' '$work/$app' '$work/tiny.om' '$work/x.bin' '$work/app.bin' > '$work/app.log' &&
     cmp '$work/app.bin' '$work/out/output_0.bin'"
done
check "cmake-app/build/classify (omrt::omrt) runs the model" sh -c \
  "'$work/cmake-app/build/classify' '$work/tiny.om' '$work/x.bin' | grep -q 'top-5: class'"
jit_soname=$(if [ -e "$build/libomrt_jit.so" ]; then soname "$build/libomrt_jit.so"; fi)
if [ -n "$jit_soname" ]; then
  check "installed $jit_soname" test -e "$libdir/$jit_soname"
  check "installed atc compiles a vector program" "$p/bin/atc" --model="$work/act.onnx" --output="$work/act" \
    --soc_version=Ascend310
  check "installed omrun loads the installed libomrt_jit" sh -c \
    "'$p/bin/omrun' --jit=on --model '$work/act.om' --input '$work/x.bin' --output '$work/out' 2>&1 | grep -q '^jit: 1 programs'"
fi
# The prefix moved elsewhere after install, the source tree out of sight
# (a tmpfs over it in a private mount namespace, where unshare allows): the
# installed atc reads its SoC file from its own prefix (--log=info names it)
# and compiles.
moved=$(mktemp -d "${TMPDIR:-/tmp}/omrt-moved.XXXXXX")
trap 'rm -rf "$moved"' EXIT
mv "$p" "$moved/prefix" && cp "$work/tiny.onnx" "$moved/"
hide=
if unshare -rm sh -c "mount -t tmpfs none '$src' && test ! -e '$src/socs'" 2>/dev/null; then
  hide="unshare -rm sh -c \"mount -t tmpfs none '$src' && exec \\\"\\\$@\\\"\" sh"
else
  echo "note: unshare -rm is not permitted here: the source tree stays visible (the SoC path check still holds)"
fi
check "moved prefix${hide:+, source tree hidden}: installed atc compiles with its own SoC file" sh -c \
  "$hide env -u ATC_SOC_DIR '$moved/prefix/bin/atc' --model='$moved/tiny.onnx' --output='$moved/tiny' \
     --soc_version=Ascend310 --log=info 2> '$moved/atc.log' &&
   grep -qF 'SoC Ascend310 from $moved/prefix/bin/../share/atc/socs/Ascend310.yaml' '$moved/atc.log' &&
   test -s '$moved/tiny.om' || { cat '$moved/atc.log'; false; }"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
