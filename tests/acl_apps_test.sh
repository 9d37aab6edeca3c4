#!/bin/sh
# The AscendCL applications of tests/acl_apps, each built against the
# public headers with -lascendcl alone and AddressSanitizer and
# UndefinedBehaviorSanitizer (leaks included: every AscendCL resource is
# released), run on exported models, their outputs compared with the
# export's reference (models/out/NAME.output.bin): cosine >= 0.999, and the
# same top-1 for a classifier.
#   sync:  acl_sync.c on MobileNetV3-Small and the 2-layer LSTM (a sequence
#          output), each run twice on reused datasets;
#   async: acl_async_aipp.c on MobileNetV3-Small compiled with dynamic AIPP
#          (RGB888 frames, per-run crop and normalisation), four runs queued
#          on one stream, their outputs taken in callbacks on the
#          application's thread;
#   v2:    acl_v2.c on MobileNetV3-Small compiled with dynamic AIPP: described
#          from the file before loading, loaded in its own memory, the
#          parameters input sized by aclmdlGetAippDataSize, run with
#          aclmdlExecuteV2; its output must be omrun's on the same om and the
#          inputs the application gave (byte for byte);
#   batch_aipp: acl_batch_aipp.c on MobileNetV3-Small of batch 3 compiled
#          with dynamic AIPP: each image of the batch its own crop window
#          and normalisation (the aclmdlSetAIPP* calls' batchIndex), every
#          image's output against the reference.
#   threads: acl_threads.c on Tiny YOLOv2 compiled with image size gears
#          416x416 and 320x320, initialized with the samples' acl.json,
#          loaded once in the application's memory, run twice by each of two
#          worker threads (one gear each) sharing its context, each with its
#          own stream; each gear's output (as many bytes as
#          aclmdlGetCurOutputDims says) must be omrun's on the same om and
#          image, byte for byte, and the 416x416 one the export's reference.
#   dvpp:  acl_dvpp.c: MobileNetV3-Small's reference input as a 320x256 JPEG
#          (tests/dvpp/dvpp_app_ref.py, PIL) decoded by acldvppJpegDecodeAsync,
#          resized to 224x224 by acldvppVpcResizeAsync and fed as it is to the
#          model compiled with a static AIPP (YUV420SP_U8, CSC to RGB,
#          torchvision's normalisation); its output against the float model
#          (must_keep_origin_dtype, omrun) on the input dvpp_app_ref.py computes
#          from PIL's decode of the same file with the same resize (the two
#          decoders' pixels differ by a level at most): cosine >= 0.999 and
#          the same top-1.
#   dump_prof: acl_dump_prof.c on MobileNetV3-Small: the dump by aclInit's
#          acl.json, by aclmdlSetDump with layers and by a callback, and the
#          profiling (op summary and subscription), checked by
#          tests/acl_dump_prof.py (DumpData decoded, against omrun --dump).
#   singleop: acl_singleop.c on op models atc --singleop compiles from a
#          description file written here (Add, MatMul, SoftmaxV2, Cast;
#          Sub loaded from memory): every result against values the
#          application computes, and the documented errors of unmatched calls.
# Usage: acl_apps_test.sh sync|async|v2|batch_aipp|threads|dvpp|dump_prof|singleop ATC SOURCE_DIR LIB_DIR WORK_DIR MODELS_DIR
set -eu
what=$1 atc=$2 src=$3 lib=$4 work=$5 models=$6
rm -rf "$work" && mkdir -p "$work"
need() {
  for f in "$@"; do
    [ -e "$models/$f" ] || { echo "FAIL $models/$f is missing (models/export_torchvision.py makes it)"; exit 1; }
  done
}
build() { # build NAME: tests/acl_apps/NAME.c -> $work/NAME
  cc -std=c11 -Wall -Wextra -Werror -g -fsanitize=address,undefined -fno-sanitize-recover=undefined \
    -fno-omit-frame-pointer "$src/tests/acl_apps/$1.c" -I"$src/include" -L"$lib" -lascendcl -lpthread -lm \
    -Wl,-rpath,"$lib" -o "$work/$1"
}
compare() { # compare GOT REF CLASSIFIER(0|1)
  /usr/bin/python3 - "$1" "$2" "$3" <<'PY'
import sys
import numpy as np
got, ref = (np.fromfile(f, "<f4").astype(np.float64) for f in sys.argv[1:3])
top = sys.argv[3] == "1"
cos = float(got @ ref / (np.linalg.norm(got) * np.linalg.norm(ref))) if got.size == ref.size else -1.0
ok = cos >= 0.999 and (not top or got.argmax() == ref.argmax())
print(f"{'ok  ' if ok else 'FAIL'} {sys.argv[1]} vs {sys.argv[2]}: cosine {cos:.6f} (>= 0.999)"
      + (f", top-1 {got.argmax()} (reference {ref.argmax()})" if top else ""))
sys.exit(0 if ok else 1)
PY
}
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
case $what in
sync)
  need mobilenet_v3_small.onnx mobilenet_v3_small.input.bin mobilenet_v3_small.output.bin \
    lstm.onnx lstm.input.bin lstm.output.bin
  build acl_sync
  for m in mobilenet_v3_small:1,3,224,224:1 lstm:1,100,80:0; do
    name=${m%%:*} rest=${m#*:}
    shape=${rest%:*} top=${rest#*:}
    "$atc" --model="$models/$name.onnx" --framework=5 --output="$work/$name" --input_shape="input:$shape" \
      --soc_version=Ascend310 > "$work/$name.atc.log"
    "$work/acl_sync" "$work/$name.om" "$work/$name.out" "$models/$name.input.bin" || {
      echo "FAIL acl_sync on $name"
      exit 1
    }
    compare "$work/${name}.out0.bin" "$models/$name.output.bin" "$top"
  done
  ;;
async)
  need mobilenet_v3_small.onnx mobilenet_v3_small.input.bin mobilenet_v3_small.output.bin
  build acl_async_aipp
  printf 'aipp_op {\n  aipp_mode: dynamic\n  related_input_rank: 0\n  max_src_image_size: %d\n}\n' \
    $((242 * 236 * 3)) > "$work/aipp.cfg"
  "$atc" --model="$models/mobilenet_v3_small.onnx" --framework=5 --output="$work/mnv3_aipp" \
    --input_shape="input:1,3,224,224" --insert_op_conf="$work/aipp.cfg" --soc_version=Ascend310 \
    > "$work/atc.log"
  "$work/acl_async_aipp" "$work/mnv3_aipp.om" "$models/mobilenet_v3_small.input.bin" 224 224 "$work/out" \
    > "$work/run.log" 2>&1 || {
    cat "$work/run.log"
    echo "FAIL acl_async_aipp"
    exit 1
  }
  cat "$work/run.log"
  for k in 0 1 2 3; do
    grep -q "run $k: class" "$work/run.log" || { echo "FAIL no callback for run $k"; exit 1; }
    compare "$work/out$k.bin" "$models/mobilenet_v3_small.output.bin" 1
  done
  ;;
v2)
  need mobilenet_v3_small.onnx mobilenet_v3_small.input.bin mobilenet_v3_small.output.bin
  build acl_v2
  printf 'aipp_op {\n  aipp_mode: dynamic\n  related_input_rank: 0\n  max_src_image_size: %d\n}\n' \
    $((230 * 228 * 3)) > "$work/aipp.cfg"
  "$atc" --model="$models/mobilenet_v3_small.onnx" --framework=5 --output="$work/mnv3_aipp" \
    --input_shape="input:1,3,224,224" --insert_op_conf="$work/aipp.cfg" --soc_version=Ascend310 \
    > "$work/atc.log"
  mkdir -p "$work/app" "$work/omrun"
  "$work/acl_v2" "$work/mnv3_aipp.om" "$models/mobilenet_v3_small.input.bin" 224 224 "$work/app" \
    > "$work/run.log" 2>&1 || {
    cat "$work/run.log"
    echo "FAIL acl_v2"
    exit 1
  }
  cat "$work/run.log"
  "$(dirname "$atc")/omrun" --model "$work/mnv3_aipp.om" --input "$work/app/input_0.bin,$work/app/input_1.bin" \
    --output "$work/omrun" > "$work/omrun.log" 2>&1 || { cat "$work/omrun.log"; echo "FAIL omrun"; exit 1; }
  if cmp -s "$work/app/output_0.bin" "$work/omrun/output_0.bin"; then
    echo "ok   acl_v2's output is omrun's on the same om and inputs ($(md5sum < "$work/app/output_0.bin" | cut -c1-32))"
  else
    echo "FAIL acl_v2's output differs from omrun's on the same om and inputs"
    exit 1
  fi
  compare "$work/app/output_0.bin" "$models/mobilenet_v3_small.output.bin" 1
  ;;
batch_aipp)
  need mobilenet_v3_small.onnx mobilenet_v3_small.input.bin mobilenet_v3_small.output.bin
  build acl_batch_aipp
  printf 'aipp_op {\n  aipp_mode: dynamic\n  related_input_rank: 0\n  max_src_image_size: %d\n}\n' \
    $((238 * 234 * 3)) > "$work/aipp.cfg"
  "$atc" --model="$models/mobilenet_v3_small.onnx" --framework=5 --output="$work/mnv3_aipp" \
    --input_shape="input:3,3,224,224" --insert_op_conf="$work/aipp.cfg" --soc_version=Ascend310 \
    > "$work/atc.log"
  "$work/acl_batch_aipp" "$work/mnv3_aipp.om" "$models/mobilenet_v3_small.input.bin" 224 224 "$work/out" \
    > "$work/run.log" 2>&1 || {
    cat "$work/run.log"
    echo "FAIL acl_batch_aipp"
    exit 1
  }
  cat "$work/run.log"
  for k in 0 1 2; do
    compare "$work/out$k.bin" "$models/mobilenet_v3_small.output.bin" 1
  done
  ;;
threads)
  m=tiny_yolov2_op8
  need $m.onnx $m.input.bin $m.output.bin
  build acl_threads
  "$atc" --model="$models/$m.onnx" --framework=5 --output="$work/yolo" --input_shape="image:1,3,-1,-1" \
    --dynamic_image_size="416,416;320,320" --soc_version=Ascend310 > "$work/atc.log"
  /usr/bin/python3 -c "import numpy as np, sys
x = np.fromfile(sys.argv[1], '<f4').reshape(1, 3, 416, 416)
np.ascontiguousarray(x[:, :, 40:360, 60:380]).tofile(sys.argv[2])" "$models/$m.input.bin" "$work/image_320x320.bin"
  printf '{\n  "dump": {"dump_path": "", "dump_mode": "output", "dump_list": []},\n  "profiler": {"switch": "off"}\n}\n' \
    > "$work/acl.json"
  mkdir -p "$work/app"
  "$work/acl_threads" "$work/yolo.om" "$work/acl.json" "$work/app" 2 "$models/$m.input.bin" 416 416 \
    "$work/image_320x320.bin" 320 320 > "$work/run.log" 2>&1 || {
    cat "$work/run.log"
    echo "FAIL acl_threads"
    exit 1
  }
  cat "$work/run.log"
  for g in 416x416:$models/$m.input.bin 320x320:$work/image_320x320.bin; do
    hw=${g%%:*} image=${g#*:}
    mkdir -p "$work/omrun_$hw"
    "$(dirname "$atc")/omrun" --model "$work/yolo.om" --input "$image" --dymHW "$(echo "$hw" | tr x ,)" \
      --output "$work/omrun_$hw" > "$work/omrun_$hw.log" 2>&1 || { cat "$work/omrun_$hw.log"; echo "FAIL omrun $hw"; exit 1; }
    if cmp -s "$work/app/output_$hw.bin" "$work/omrun_$hw/output_0.bin"; then
      echo "ok   gear $hw: acl_threads' output is omrun's ($(wc -c < "$work/app/output_$hw.bin") bytes)"
    else
      echo "FAIL gear $hw: acl_threads' output differs from omrun's on the same om and image"
      exit 1
    fi
  done
  compare "$work/app/output_416x416.bin" "$models/$m.output.bin" 0
  ;;
dvpp)
  need mobilenet_v3_small.onnx mobilenet_v3_small.input.bin
  build acl_dvpp
  /usr/bin/python3 "$src/tests/dvpp/dvpp_app_ref.py" "$models/mobilenet_v3_small.input.bin" "$work"
  "$atc" --model="$models/mobilenet_v3_small.onnx" --framework=5 --output="$work/mnv3_yuv" \
    --input_shape="input:1,3,224,224" --insert_op_conf="$work/aipp.cfg" --soc_version=Ascend310 \
    > "$work/atc.log"
  "$atc" --model="$models/mobilenet_v3_small.onnx" --framework=5 --output="$work/mnv3_fp32" \
    --input_shape="input:1,3,224,224" --precision_mode=must_keep_origin_dtype --soc_version=Ascend310 \
    > "$work/atc_fp32.log"
  mkdir -p "$work/float"
  "$(dirname "$atc")/omrun" --model "$work/mnv3_fp32.om" --input "$work/ref_input.bin" --output "$work/float" \
    > "$work/omrun.log" 2>&1 || { cat "$work/omrun.log"; echo "FAIL omrun"; exit 1; }
  "$work/acl_dvpp" "$work/mnv3_yuv.om" "$work/image.jpg" "$work/out.bin" > "$work/run.log" 2>&1 || {
    cat "$work/run.log"
    echo "FAIL acl_dvpp"
    exit 1
  }
  cat "$work/run.log"
  compare "$work/out.bin" "$work/float/output_0.bin" 1
  ;;
dump_prof)
  need mobilenet_v3_small.onnx mobilenet_v3_small.input.bin
  build acl_dump_prof
  /usr/bin/python3 "$src/tests/acl_dump_prof.py" "$work/acl_dump_prof" "$atc" "$(dirname "$atc")/omrun" "$work" "$models"
  ;;
singleop)
  build acl_singleop
  t() { printf '{"format": "ND", "shape": [%s], "type": "%s"}' "$1" "$2"; }
  cat > "$work/ops.json" <<JSON
[
  {"op": "Add", "input_desc": [$(t 2,3 float), $(t 2,3 float)], "output_desc": [$(t 2,3 float)]},
  {"op": "Add", "input_desc": [$(t 3,3 int32), $(t 3,3 int32)], "output_desc": [$(t 3,3 int32)]},
  {"op": "MatMul", "input_desc": [$(t 3,4 float16), $(t 5,4 float16)], "output_desc": [$(t 3,5 float16)],
   "attr": [{"name": "transpose_x2", "type": "bool", "value": true}]},
  {"op": "SoftmaxV2", "input_desc": [$(t 2,7 float)], "output_desc": [$(t 2,7 float)],
   "attr": [{"name": "axes", "type": "list_int", "value": [-1]}]},
  {"op": "Cast", "input_desc": [$(t 4 float)], "output_desc": [$(t 4 int32)],
   "attr": [{"name": "dst_type", "type": "int", "value": 3}]}
]
JSON
  cat > "$work/sub.json" <<JSON
[{"op": "Sub", "name": "sub", "input_desc": [$(t 2,3 float), $(t 2,3 float)], "output_desc": [$(t 2,3 float)]}]
JSON
  for f in ops sub; do
    "$atc" --singleop="$work/$f.json" --output="$work/$f" --soc_version=Ascend310 \
      --precision_mode=must_keep_origin_dtype > "$work/atc_$f.log"
  done
  "$work/acl_singleop" "$work/ops" "$work/sub/sub.om" > "$work/run.log" 2>&1 || {
    cat "$work/run.log"
    echo "FAIL acl_singleop"
    exit 1
  }
  cat "$work/run.log"
  ;;
*) echo "usage: $0 sync|async|v2|batch_aipp|threads|dvpp|dump_prof|singleop ATC SOURCE_DIR LIB_DIR WORK_DIR MODELS_DIR"; exit 2 ;;
esac
