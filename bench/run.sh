#!/bin/bash
# bench/run.sh - omrun against ONNX Runtime on the same models, inputs, cores and thread counts.
#
#   bench/run.sh [--quick] [--models a,b,...] [--threads 1,2]
#
# One command, from a clean checkout: installs what it needs (Debian packages through
# scripts/install-deps.sh --bench; the peer, onnxruntime-node pinned in bench/package.json, into
# bench/node_modules with its optional CUDA download switched off), builds the project
# (scripts/build.sh), exports the models (models/export_torchvision.py; the int8 ones, NAME_qdq,
# models/export_qdq.py: ORT runs the same QDQ model), measures this machine's
# fp32 FMA peak (bench/fma_peak.c), then for each model: compiles it with atc (wall time, om size),
# counts the FLOPs of its cube work from the package (bench/flops.py), and for each thread count runs omrun (latency, peak RSS) and
# ONNX Runtime (latency) in alternating rounds, pinned to the same cores. Writes
# docs/BENCHMARKS.md (bench/report.py); the raw figures stay in build/bench/.
#
#   --quick     about 1 s of timed runs per measurement instead of about 8 s (a smoke run)
#   --models    comma-separated subset of: resnet50_b1 resnet50_b4 mobilenet_v2 squeezenet1_1
#               efficientnet_b0 mobilenet_v3_small vit_b_16 bert_base convnext_tiny
#               shufflenet_v2_x1_0 lstm deeplabv3_resnet50 (resnet50 = both batches)
#               resnet50_qdq mobilenet_v2_qdq resnet18_qdq squeezenet1_1_qdq bert_base_qdq; default all
#   --no-vector skip bench/vector.sh (JIT vs interpreter, fused vs unfused on efficientnet_b0 and
#               mobilenet_v3_small, when --models has them)
#   --threads   comma-separated thread counts; default 1,2
#   --no-build  use build/atc and build/omrun as they are (no scripts/build.sh)
#
# Not a test: nothing here runs under ctest or .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
COMMAND="bench/run.sh${*:+ $*}"

ALL_MODELS="resnet50_b1 resnet50_b4 mobilenet_v2 squeezenet1_1 efficientnet_b0 mobilenet_v3_small vit_b_16 bert_base
            convnext_tiny shufflenet_v2_x1_0 lstm deeplabv3_resnet50
            resnet50_qdq mobilenet_v2_qdq resnet18_qdq squeezenet1_1_qdq bert_base_qdq"
ALL_MODELS=$(echo $ALL_MODELS)
QUICK=0
BUILD=1
VECTOR=1
MODELS="$ALL_MODELS"
THREADS="1 2"
die() { echo "bench: $*" >&2; exit 1; }
set_models() {
  MODELS=""
  for m in ${1//,/ }; do
    case " $ALL_MODELS resnet50 " in
      *" $m "*) ;;
      *) die "unknown model '$m' (known: $ALL_MODELS resnet50)" ;;
    esac
    [ "$m" = resnet50 ] && m="resnet50_b1 resnet50_b4"
    MODELS="$MODELS $m"
  done
}
set_threads() {
  THREADS=${1//,/ }
  for t in $THREADS; do [[ $t =~ ^[1-9][0-9]*$ ]] || die "--threads: '$t' is not a positive integer"; done
}
while [ $# -gt 0 ]; do
  arg=$1; shift
  case $arg in
    --quick) QUICK=1 ;;
    --no-build) BUILD=0 ;;
    --no-vector) VECTOR=0 ;;
    --models=*) set_models "${arg#*=}" ;;
    --threads=*) set_threads "${arg#*=}" ;;
    --models|--threads)
      [ $# -gt 0 ] || die "$arg needs a value"
      if [ "$arg" = --models ]; then set_models "$1"; else set_threads "$1"; fi
      shift ;;
    -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$arg' (see --help)" ;;
  esac
done
[ -n "${MODELS// /}" ] || die "--models names no model"

# The runs of a measurement (BUDGET_S seconds, MIN_RUNS..MAX_RUNS runs in all) go in ROUNDS rounds,
# omrun's and ORT's alternating, so that a period when something else slows the machine down falls
# on both runtimes instead of on whichever was running then.
if [ $QUICK = 1 ]; then
  BUDGET_S=1; MIN_RUNS=3; MAX_RUNS=20; ROUNDS=1; WARMUP=1; ATC_REPS=1; FMA_S=0.2
else
  BUDGET_S=8; MIN_RUNS=10; MAX_RUNS=1200; ROUNDS=5; WARMUP=2; ATC_REPS=3; FMA_S=0.5
fi
MAX_OTHER=10   # % of all cores busy with other work during a measurement before it is retried
# A T-thread figure slower than the same runtime's 1-thread figure / (MIN_SCALE x T) was likely
# measured while this VM's other cores ran slow (their speed changes for minutes at a time,
# invisibly to /proc/stat; both runtimes scale 1.8-2.0x on 2 cores on the large models when they
# do not). Such a pair gets ROUNDS more rounds after SLOW_WAIT seconds, at most MAX_ATTEMPTS
# times in all; its figures are the lowest round medians over all of them.
MIN_SCALE=0.8; SLOW_WAIT=20; MAX_ATTEMPTS=3
PY=/usr/bin/python3
WORK=$ROOT/build/bench
log() { echo "bench: $*"; }
now_ns() { date +%s%N; }
stat_busy() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }
one_line() { tr '\t\n' '  ' | sed 's/  */ /g; s/^ //; s/ $//' | cut -c1-300; }

# --- 1. dependencies, the peer, the build, the models -------------------------------------------
if [ ! -x /usr/bin/time ] || ! command -v node >/dev/null || ! command -v npm >/dev/null || ! command -v taskset >/dev/null; then
  ./scripts/install-deps.sh --bench
fi
ORT_PIN=$(sed -n 's/.*"onnxruntime-node": *"\([^"]*\)".*/\1/p' bench/package.json)
have_ort=$(node -p "try { require('./bench/node_modules/onnxruntime-node/package.json').version } catch (e) { '' }" 2>/dev/null || true)
if [ "$have_ort" != "$ORT_PIN" ]; then
  log "installing onnxruntime-node $ORT_PIN into bench/node_modules (npm registry; no GPU download)"
  # The package's postinstall would fetch CUDA provider libraries from outside the npm registry;
  # ONNXRUNTIME_NODE_INSTALL=skip turns that off (the CPU libraries are inside the npm tarball).
  # npm >= 11 does not run dependency install scripts unless allowed anyway.
  ( cd bench && export ONNXRUNTIME_NODE_INSTALL=skip npm_config_onnxruntime_node_install=skip &&
    if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi ) \
    > "$ROOT/build-bench-npm.log" 2>&1 || { cat "$ROOT/build-bench-npm.log"; die "npm install failed"; }
  rm -f "$ROOT/build-bench-npm.log"
fi
ORT_VERSION=$(cd bench && node -p "require('onnxruntime-node').env.versions.node")

[ $BUILD = 0 ] || ./scripts/build.sh
mkdir -p "$WORK/bin"
# Private copies: a rebuild of build/ while the benchmark runs does not change what it measures.
for b in atc omrun; do
  [ -x "build/$b" ] || die "build/$b is missing (run scripts/build.sh, or drop --no-build)"
  cp "build/$b" "$WORK/bin/$b"
done
ATC=$WORK/bin/atc
OMRUN=$WORK/bin/omrun
need_export=""; need_qdq=""
for m in $MODELS; do
  case $m in
    bert_base_qdq) need_qdq="$need_qdq bert_base"; n=bert_base ;; # omquant quantizes the float export
    *_qdq) need_qdq="$need_qdq ${m%_qdq}"; continue ;; # int8 (QDQ) exports: models/export_qdq.py
    resnet50_*) n=resnet50 ;;
    *) n=$m ;;
  esac
  case " $need_export " in *" $n "*) ;; *) need_export="$need_export $n" ;; esac
done
# shellcheck disable=SC2086
[ -z "$need_export" ] || $PY models/export_torchvision.py $need_export
# shellcheck disable=SC2086
[ -z "$need_qdq" ] || $PY models/export_qdq.py $need_qdq

# ResNet-50 batch 4: the batch-1 reference image first, then three seeded random images.
case " $MODELS " in *" resnet50_b4 "*)
  $PY - "$ROOT/models/out/resnet50.input.bin" "$WORK/resnet50.b4.input.bin" <<'EOF'
import sys
import numpy as np
x0 = np.fromfile(sys.argv[1], "<f4").reshape(1, 3, 224, 224)
rest = np.random.default_rng(20261122).standard_normal((3, 3, 224, 224)).astype("<f4")
np.concatenate([x0, rest]).astype("<f4").tofile(sys.argv[2])
EOF
;; esac

# --- 2. the FMA peak ------------------------------------------------------------------------------
cc -O2 -pthread -o "$WORK/fma_peak" bench/fma_peak.c
log "measuring the FMA peak (again after the models; the higher figure counts)"
"$WORK/fma_peak" --threads "${THREADS// /,}" --seconds $FMA_S | tee "$WORK/fma_peak.txt"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
b0=$(stat_busy); n0=$(now_ns); sleep 1
BUSY_BEFORE=$(awk -v b0="$b0" -v b1="$(stat_busy)" -v n0="$n0" -v n1="$(now_ns)" -v hz="$(getconf CLK_TCK)" \
  -v cores="$(nproc)" 'BEGIN {printf "%.0f", (b1 - b0) / hz / ((n1 - n0) / 1e9 * cores) * 100}')
[ "$BUSY_BEFORE" -le 10 ] ||
  log "warning: the machine was ${BUSY_BEFORE}% busy with other work just now: figures will be skewed (see 'other load %')"

# --- 3. per model: compile, FLOPs; per thread count: omrun and ORT back to back -------------------
printf 'key\tname\tbatch\tflops\tom_bytes\tatc_s\tatc_error\tonnx_bytes\n' > "$WORK/models.tsv"
printf 'key\tthreads\tomrun_median_ms\tomrun_runs\tomrun_rss_kib\tomrun_error\tomrun_out\tort_median_ms\tort_runs\tort_error\tort_out\tomrun_other_pct\tort_other_pct\n' > "$WORK/runs.tsv"

# Interference: CPU time the machine spent on anything but the measured process (busy and steal
# jiffies of /proc/stat minus the process's own user+sys time from GNU time), as a percentage of
# all cores over the measurement's wall time. Figures measured beside other work are not comparable.
HZ=$(getconf CLK_TCK)
other_pct() { # other_pct BUSY0 BUSY1 NS0 NS1 TIMEFILE
  local own
  own=$(sed -n 's/^[[:space:]]*\(User\|System\) time (seconds): //p' "$5" | awk '{s += $1} END {print s + 0}')
  awk -v b0="$1" -v b1="$2" -v n0="$3" -v n1="$4" -v own="$own" -v hz="$HZ" -v cores="$(nproc)" \
    'BEGIN {w = (n1 - n0) / 1e9; o = ((b1 - b0) / hz - own) / (w * cores) * 100; if (o < 0) o = 0; printf "%.1f", o}'
}

min_of() { printf '%s\n' "$@" | sort -g | head -1; } # min_of X... : the smallest

cpu_list() { # cores 0..T-1 for T threads (all cores when T exceeds them)
  local t=$1 n
  n=$(nproc)
  [ "$t" -le "$n" ] || t=$n
  echo "0-$((t - 1))"
}

for key in $MODELS; do
  onnx=$key; batch=1; input=models/out/$key.input.bin
  case $key in
    resnet50_b1) onnx=resnet50; name=ResNet-50; input=models/out/resnet50.input.bin ;;
    resnet50_b4) onnx=resnet50; name=ResNet-50; batch=4; input=$WORK/resnet50.b4.input.bin ;;
    mobilenet_v2) name=MobileNetV2 ;;
    squeezenet1_1) name="SqueezeNet 1.1" ;;
    efficientnet_b0) name=EfficientNet-B0 ;;
    mobilenet_v3_small) name=MobileNetV3-Small ;;
    vit_b_16) name=ViT-B/16 ;;
    bert_base) name="BERT-base encoder (seq 128)" ;;
    convnext_tiny) name=ConvNeXt-Tiny ;;
    shufflenet_v2_x1_0) name="ShuffleNetV2 x1.0" ;;
    lstm) name="LSTM 2x256 (100 steps)" ;;
    deeplabv3_resnet50) name="DeepLabV3-ResNet50 (256x256)" ;;
    resnet50_qdq) name="ResNet-50 int8" ;;
    mobilenet_v2_qdq) name="MobileNetV2 int8" ;;
    resnet18_qdq) name="ResNet-18 int8" ;;
    squeezenet1_1_qdq) name="SqueezeNet 1.1 int8" ;;
    bert_base_qdq) name="BERT-base encoder int8 (seq 128)" ;;
  esac
  # The input's name, shape (batch first) and dtype, from the export's NAME.json.
  read -r in_name in_shape in_dtype < <($PY -c 'import json, sys
m = json.load(open(sys.argv[1])); s = m["input_shape"]; s[0] = int(sys.argv[2])
print(m["input"], ",".join(map(str, s)), m.get("input_dtype", "float32"))' "models/out/$onnx.json" "$batch")
  model=models/out/$onnx.onnx
  om=$WORK/$key
  rm -f "$om.om"
  flops=""

  log "$key: atc"
  atc_s=""; atc_err=""; times=()
  for _ in $(seq $ATC_REPS); do
    t0=$(now_ns)
    if "$ATC" --model="$model" --framework=5 --output="$om" --input_shape="$in_name:$in_shape" \
         --soc_version=Ascend310 > "$WORK/$key.atc.log" 2>&1; then
      times+=($(( $(now_ns) - t0 )))
    else
      atc_err=$(grep -m1 'error' "$WORK/$key.atc.log" || tail -1 "$WORK/$key.atc.log")
      atc_err=$(echo "$atc_err" | one_line)
      break
    fi
  done
  if [ -z "$atc_err" ]; then
    atc_s=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR] = $1} END {printf "%.3f", a[int((NR + 1) / 2)] / 1e9}')
    om_bytes=$(stat -c %s "$om.om")
    "$ATC" --mode=1 --om="$om.om" --json="$om.json" > /dev/null 2>&1 &&
      flops=$($PY bench/flops.py "$om.json" | sed -n 's/^flops: \([0-9]*\).*/\1/p')
    log "$key: atc ${atc_s} s, om $om_bytes bytes, ${flops:-?} FLOPs of cube work"
  else
    om_bytes=""
    log "$key: atc failed: $atc_err"
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$key" "$name" "$batch" "$flops" "$om_bytes" "$atc_s" "$atc_err" \
    "$(stat -c %s "$model")" >> "$WORK/models.tsv"

  # An int8 model once more through ORT with graph optimisations off, for the output check only:
  # its Q / DQ pairs then round as the graph says, where ORT's fused int8 kernels may not (its
  # QLinearSoftmax departs from the QDQ Softmax it replaces).
  case $key in *_qdq)
    rm -f "$WORK/$key.ort_written.bin"
    node bench/ort_bench.js --model "$model" --input "$input" --shape "$in_shape" --dtype "$in_dtype" --threads 1 \
      --opt disabled --warmup 0 --min 1 --max 1 --budget 0 --output "$WORK/$key.ort_written.bin" \
      > "$WORK/$key.ort_written.log" 2>&1 || log "$key: ORT with optimisations off failed (see $key.ort_written.log)"
  ;; esac

  one_om=""; one_ort="" # this model's 1-thread figures, for the scaling check
  for t in $THREADS; do
    cpus=$(cpu_list "$t")
    # A pair measured beside other work (over $MAX_OTHER% other load) is measured once more from
    # scratch; one whose T-thread figures do not scale from the 1-thread ones (above) gets more
    # rounds (keep=1), up to MAX_ATTEMPTS times.
    keep=0
    for attempt in $(seq $MAX_ATTEMPTS); do
      om_med=""; om_runs=""; om_rss=""; om_err=""; om_other=""; om_out="$key.t$t.omrun"
      ort_med=""; ort_runs=""; ort_err=""; ort_other=""; ort_out="$key.t$t.ort.bin"
      rm -rf "${WORK:?}/$om_out" "$WORK/$ort_out"
      # Three untimed omrun runs (their median) tell the run count for the budget, ORT's too.
      n=$MIN_RUNS
      if [ -z "$atc_err" ]; then
        if taskset -c "$cpus" "$OMRUN" --model "$om.om" --input "$input" --output "$WORK/$om_out" --threads "$t" \
             --loop 3 > "$WORK/$key.t$t.omrun.log" 2>&1; then
          t1=$(sed -n 's/^latency: min [0-9.]* ms, median \([0-9.]*\) ms.*/\1/p' "$WORK/$key.t$t.omrun.log")
          n=$(awk -v b=$BUDGET_S -v t="$t1" -v lo=$MIN_RUNS -v hi=$MAX_RUNS \
                'BEGIN {n = int(b * 1000 / (t > 0 ? t : 1)) + 1; if (n < lo) n = lo; if (n > hi) n = hi; print n}')
        else
          om_err=$(grep -m1 '^omrun:' "$WORK/$key.t$t.omrun.log" | one_line || true)
          [ -n "$om_err" ] || om_err="omrun failed (see build/bench/$key.t$t.omrun.log)"
        fi
      else
        om_err="not run: atc failed"
      fi
      per=$(( (n + ROUNDS - 1) / ROUNDS ))
      log "$key, $t thread(s): $ROUNDS round(s) of $per runs each, omrun then ONNX Runtime"
      if [ $keep = 0 ]; then om_meds=(); ort_meds=(); om_rss=0; om_runs=0; ort_runs=0; om_other=0; ort_other=0; fi
      for _ in $(seq $ROUNDS); do
        # omrun, under GNU time (peak RSS)
        if [ -z "$om_err" ]; then
          b0=$(stat_busy); n0=$(now_ns)
          if /usr/bin/time -v -o "$WORK/$key.t$t.time" taskset -c "$cpus" "$OMRUN" --model "$om.om" --input "$input" \
               --output "$WORK/$om_out" --loop "$per" --threads "$t" > "$WORK/$key.t$t.omrun.log" 2>&1; then
            o=$(other_pct "$b0" "$(stat_busy)" "$n0" "$(now_ns)" "$WORK/$key.t$t.time")
            med=""; runs=""
            read -r med runs < <(sed -n 's/^latency: min [0-9.]* ms, median \([0-9.]*\) ms over \([0-9]*\) runs$/\1 \2/p' \
                                  "$WORK/$key.t$t.omrun.log")
            rss=$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$WORK/$key.t$t.time")
            if [ -n "$med" ]; then
              om_meds+=("$med"); om_runs=$((om_runs + runs))
              om_rss=$(( rss > om_rss ? rss : om_rss ))
              om_other=$(awk -v a="$o" -v b="$om_other" 'BEGIN {print (a > b ? a : b)}')
            else
              om_err="no latency line in omrun's output"
            fi
          else
            om_err=$(grep -m1 '^omrun:' "$WORK/$key.t$t.omrun.log" | one_line || true)
            [ -n "$om_err" ] || om_err="omrun failed (exit status; see build/bench/$key.t$t.omrun.log)"
          fi
        fi
        # ONNX Runtime on the same model, input, cores and thread count: exactly $per timed runs.
        if [ -z "$ort_err" ]; then
          b0=$(stat_busy); n0=$(now_ns)
          if /usr/bin/time -v -o "$WORK/$key.t$t.ort.time" taskset -c "$cpus" node bench/ort_bench.js --model "$model" \
               --input "$input" --shape "$in_shape" --dtype "$in_dtype" --threads "$t" --warmup $WARMUP --min "$per" --max "$per" \
               --budget 0 --output "$WORK/$ort_out" > "$WORK/$key.t$t.ort.log" 2>&1; then
            o=$(other_pct "$b0" "$(stat_busy)" "$n0" "$(now_ns)" "$WORK/$key.t$t.ort.time")
            med=""; runs=""
            read -r med runs < <(sed -n 's/^ort: .* median \([0-9.]*\) ms over \([0-9]*\) runs$/\1 \2/p' "$WORK/$key.t$t.ort.log")
            if [ -n "$med" ]; then
              ort_meds+=("$med"); ort_runs=$((ort_runs + runs))
              ort_other=$(awk -v a="$o" -v b="$ort_other" 'BEGIN {print (a > b ? a : b)}')
            else
              ort_err="no latency line in ort_bench's output"
            fi
          else
            ort_err=$(tail -1 "$WORK/$key.t$t.ort.log" | one_line)
          fi
        fi
      done
      # Each runtime's figure: the lowest of its rounds' medians. Interference from outside only
      # adds time, and it comes and goes: the least disturbed round is the best estimate of each.
      if [ -z "$om_err" ]; then
        om_med=$(min_of "${om_meds[@]}")
        log "$key: omrun, $t thread(s): median $om_med ms (rounds ${om_meds[*]}), RSS $om_rss KiB, other load $om_other%"
      else
        om_rss=""; om_runs=""; om_other=""; log "$key: omrun: $om_err"
      fi
      if [ -z "$ort_err" ]; then
        ort_med=$(min_of "${ort_meds[@]}")
        log "$key: ONNX Runtime, $t thread(s): median $ort_med ms (rounds ${ort_meds[*]}), other load $ort_other%"
      else
        ort_runs=""; ort_other=""; log "$key: ORT: $ort_err"
      fi
      clean=$(awk -v a="${om_other:-0}" -v b="${ort_other:-0}" -v m=$MAX_OTHER 'BEGIN {print (a <= m && b <= m)}')
      # scaled: 0 when a figure is slower than its 1-thread figure / (MIN_SCALE x t)
      scaled=$(awk -v t="$t" -v s=$MIN_SCALE -v a="$om_med" -v a1="$one_om" -v b="$ort_med" -v b1="$one_ort" \
                 'BEGIN {ok = 1; if (t > 1 && a != "" && a1 != "" && a * s * t > a1) ok = 0
                         if (t > 1 && b != "" && b1 != "" && b * s * t > b1) ok = 0; print ok}')
      if [ "$clean" != 1 ] && [ $attempt -lt 2 ]; then
        log "$key, $t thread(s): other work shared the machine (omrun ${om_other:-?}%, ORT ${ort_other:-?}%): measuring again"
        keep=0
        sleep 5
      elif [ "$scaled" != 1 ] && [ $attempt -lt $MAX_ATTEMPTS ]; then
        log "$key, $t thread(s): omrun $om_med ms (1 thread: $one_om), ORT $ort_med ms (1 thread: $one_ort) scale" \
            "less than ${MIN_SCALE}x$t: the other cores may have run slow, $ROUNDS more rounds in $SLOW_WAIT s"
        keep=1
        sleep $SLOW_WAIT
      else
        [ "$scaled" = 1 ] || log "$key, $t thread(s): still short of ${MIN_SCALE}x$t after $attempt attempts" \
                                 "(the lowest round medians of all are recorded)"
        break
      fi
    done
    if [ "$t" = 1 ]; then one_om=$om_med; one_ort=$ort_med; fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$key" "$t" "$om_med" "$om_runs" "$om_rss" "$om_err" \
      "$om_out/output_0.bin" "$ort_med" "$ort_runs" "$ort_err" "$ort_out" "$om_other" "$ort_other" >> "$WORK/runs.tsv"
  done
done

# --- 3b. vector programs: JIT vs interpreter, fused vs unfused (bench/vector.sh) ------------------
rm -f "$WORK/vector.tsv"
VMODELS=""
for m in efficientnet_b0 mobilenet_v3_small; do case " $MODELS " in *" $m "*) VMODELS="$VMODELS,$m" ;; esac; done
if [ $VECTOR = 1 ] && [ -n "$VMODELS" ]; then
  log "vector programs: JIT vs interpreter, fused vs unfused (bench/vector.sh)"
  for t in $THREADS; do
    bench/vector.sh --atc "$ATC" --omrun "$OMRUN" --models "${VMODELS#,}" --threads "$t" \
      --rounds $([ $QUICK = 1 ] && echo 1 || echo 5) --loop $([ $QUICK = 1 ] && echo 3 || echo 20) \
      --work "$WORK/vector" --tsv "$WORK/vector.t$t.tsv" || log "bench/vector.sh failed (see above)"
    if [ -f "$WORK/vector.t$t.tsv" ]; then
      if [ -f "$WORK/vector.tsv" ]; then tail -n +2 "$WORK/vector.t$t.tsv" >> "$WORK/vector.tsv"
      else cp "$WORK/vector.t$t.tsv" "$WORK/vector.tsv"; fi
    fi
  done
fi

# --- 4. the FMA peak again, machine and run description ------------------------------------------
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
"$WORK/fma_peak" --threads "${THREADS// /,}" --seconds $FMA_S | tee -a "$WORK/fma_peak.txt"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
flags=$(sed -n 's/^flags[[:space:]]*: //p' /proc/cpuinfo | head -1)
fl=""
for f in avx2 fma f16c avx512f; do
  case " $flags " in *" $f "*) fl="$fl $f: yes," ;; *) fl="$fl $f: no," ;; esac
done
src="git $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
# (the report this run rewrites does not count as a change to what was measured)
[ -z "$(git status --porcelain --untracked-files=no -- . ':!docs/BENCHMARKS.md' 2>/dev/null)" ] ||
  src="$src with uncommitted changes"
[ $BUILD = 1 ] || src="$src (--no-build: binaries as found in build/)"
{
  printf 'date\t%s\n' "$(date -u '+%Y-%m-%d %H:%M')"
  printf 'command\t%s\n' "$COMMAND"
  printf 'mode\t%s\n' "$([ $QUICK = 1 ] && echo 'quick: smoke-run figures, not for comparison' || echo full)"
  printf 'source\t%s\n' "$src"
  printf 'cpu\t%s\n' "$cpu"
  printf 'cores\t%s\n' "$(nproc)"
  printf 'flags\t%s\n' "${fl%,}"
  printf 'memory\t%s\n' "$(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
  printf 'kernel\t%s\n' "$(uname -sr)"
  printf 'cc\t%s\n' "$(cc --version | head -1)"
  printf 'ort_version\t%s\n' "$ORT_VERSION"
  printf 'node_version\t%s\n' "$(node --version)"
  printf 'timing\t%s\n' "timed runs for >= $BUDGET_S s (>= $MIN_RUNS, at most $MAX_RUNS runs) per runtime, in $ROUNDS round(s) alternating omrun and ORT (each round its own process and warm-up), the figure the lowest of the rounds' medians; T threads pinned to cores 0..T-1 (taskset) for both runtimes; a T-thread pair that does not scale ${MIN_SCALE}xT from the 1-thread figures gets $ROUNDS more rounds (up to $MAX_ATTEMPTS sets)"
  printf 'fma_isa\t%s\n' "$(sed -n 's/.*isa \([^,]*\),.*/\1/p' "$WORK/fma_peak.txt" | head -1)"
  printf 'load\t%s\n' "CPU busy with other work ${BUSY_BEFORE}% in the second before the models; 1/5/15-minute load average $LOAD_BEFORE before, $LOAD_AFTER after (per-row figures: 'other load %')"
  sed -n 's/^fma_peak: threads \([0-9]*\), isa [^,]*, \([0-9.]*\) GFLOP\/s$/\1 \2/p' "$WORK/fma_peak.txt" |
    sort -k1,1n -k2,2gr | awk '!seen[$1]++ {printf "fma_peak_%s\t%s\n", $1, $2}'
} > "$WORK/meta.txt"

# --- 5. the report ---------------------------------------------------------------------------------
mkdir -p docs
$PY bench/report.py "$WORK" docs/BENCHMARKS.md
log "wrote docs/BENCHMARKS.md (raw figures in build/bench/)"
