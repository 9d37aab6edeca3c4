#!/usr/bin/env bash
# bench/vector.sh - vector programs: JIT vs interpreter, fused vs unfused (issue 6).
#
# For each model, compiles two oms with atc: fused (the default) and unfused (the op-by-op build:
# --fusion_switch_file with ALL:off, every fusion rule off, so one task per ONNX op).
# Then, in rounds, runs each build with the JIT on and off, back to back and pinned to the same
# cores, with OMRT_PROFILE=1: whole-model latency (omrun's min over --loop runs) and the time in
# VPROG tasks per run. Each figure is the minimum over the rounds (the machine may be shared).
# The JIT's compile time at load is measured cold (an empty OMRT_JIT_CACHE directory each round)
# and cached (the directory the cold run filled). Prints a table with the ratios and writes TSV.
#
#   --models   comma-separated, from models/out (default efficientnet_b0,mobilenet_v3_small)
#   --threads  omrun --threads (default 1)
#   --rounds   rounds of the four runs (default 5)
#   --loop     omrun --loop per run (default 20)
#   --atc, --omrun  the binaries (default build/atc, build/omrun)
#   --work     directory for oms, logs, caches (default build/bench/vector)
#   --tsv      where the figures go (default WORK/vector.tsv)
#
# Exit 1 when a build or run fails. Not a test: nothing here runs under ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
MODELS="efficientnet_b0 mobilenet_v3_small"
THREADS=1
ROUNDS=5
LOOP=20
ATC=build/atc
OMRUN=build/omrun
WORK=build/bench/vector
TSV=""
die() { echo "vector: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  arg=$1; shift
  case $arg in
    --*=*) val=${arg#*=}; arg=${arg%%=*} ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --*) [ $# -gt 0 ] || die "$arg needs a value"; val=$1; shift ;;
    *) die "unexpected argument '$arg' (see --help)" ;;
  esac
  case $arg in
    --models) MODELS=${val//,/ } ;;
    --threads) THREADS=$val ;;
    --rounds) ROUNDS=$val ;;
    --loop) LOOP=$val ;;
    --atc) ATC=$val ;;
    --omrun) OMRUN=$val ;;
    --work) WORK=$val ;;
    --tsv) TSV=$val ;;
    *) die "unknown flag '$arg' (see --help)" ;;
  esac
done
for v in THREADS ROUNDS LOOP; do [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "--${v,,}: '${!v}' is not a positive integer"; done
[ -x "$ATC" ] && [ -x "$OMRUN" ] || die "$ATC or $OMRUN is missing (build first)"
"$OMRUN" --help | grep -q -- '--jit' || die "$OMRUN has no --jit flag"
mkdir -p "$WORK"
TSV=${TSV:-$WORK/vector.tsv}
cpus="0-$(( (THREADS <= $(nproc) ? THREADS : $(nproc)) - 1 ))"
printf '# the op-by-op build: every fusion rule off, one task per ONNX op\nALL:off\n' > "$WORK/unfused.cfg"

printf 'model\tthreads\tvprog_fused\tvprog_unfused\tvprog_ms_jit\tvprog_ms_interp\tlat_ms_fused_jit\tlat_ms_unfused_jit\tlat_ms_fused_interp\tlat_ms_unfused_interp\tjit_cold_ms\tjit_cached_ms\tjit_programs\tjit_unique\ttasks_fused\ttasks_unfused\tws_mib_fused\tws_mib_unfused\tvprog_ms_unfused_jit\tvprog_ms_unfused_interp\n' > "$TSV"

# run OM JIT CACHE -> "latency_min_ms vprog_ms jit_ms" (jit_ms "-" with the JIT off)
run() {
  local log=$WORK/run.log
  if ! OMRT_PROFILE=1 OMRT_JIT_CACHE=$3 taskset -c "$cpus" "$OMRUN" --model "$1" --input "$INPUT" --output "$WORK/out" \
      --loop "$LOOP" --threads "$THREADS" --jit "$2" > "$log" 2>&1; then
    cat "$log" >&2
    die "omrun failed on $1 (--jit $2)"
  fi
  local lat vp jit
  lat=$(sed -n 's/^latency: min \([0-9.]*\) ms.*/\1/p' "$log")
  vp=$(awk '$1 == "VPROG" {print $4}' "$log")
  jit=$(sed -n 's/^jit: .* in \([0-9.]*\) ms (.*/\1/p' "$log")
  grep '^jit:' "$log" > "$WORK/jit.line" || true
  echo "$lat ${vp:-0} ${jit:--}"
}
min() { awk -v a="$1" -v b="$2" 'BEGIN {print (a == "" || b + 0 < a + 0) ? b : a}'; }

for m in $MODELS; do
  onnx=models/out/$m.onnx
  INPUT=models/out/$m.input.bin
  [ -f "$onnx" ] || die "$onnx is missing: run models/export_torchvision.py $m"
  for b in fused unfused; do
    extra=()
    [ $b = unfused ] && extra=("--fusion_switch_file=$WORK/unfused.cfg")
    "$ATC" --model="$onnx" --framework=5 --output="$WORK/$m.$b" --input_shape="input:1,3,224,224" \
      --soc_version=Ascend310 "${extra[@]}" > "$WORK/$m.$b.atc.log" 2>&1 || { cat "$WORK/$m.$b.atc.log"; die "atc failed"; }
  done
  count() { "$ATC" --mode=1 --om="$WORK/$m.$1.om" --json="$WORK/$m.$1.json" > /dev/null &&
            { grep -o '"kind": *"VPROG"' "$WORK/$m.$1.json" || true; } | wc -l; } # 0 when fusion left none
  nf=$(count fused); nu=$(count unfused)
  # "atc: wrote X.om: 10.34 MiB, 120 tasks, ..." and "atc: memory plan: workspace 2.87 MiB, ..."
  tasks() { sed -n 's/^atc: wrote .* MiB, \([0-9]*\) tasks,.*/\1/p' "$WORK/$m.$1.atc.log"; }
  ws() { sed -n 's/^atc: memory plan: workspace \([0-9.]*\) MiB.*/\1/p' "$WORK/$m.$1.atc.log"; }
  declare -A best=()
  for r in $(seq "$ROUNDS"); do
    cache=$WORK/cache.$m
    rm -rf "$cache"
    for cfg in fused:on unfused:on fused:off unfused:off; do
      b=${cfg%:*}; j=${cfg#*:}
      read -r lat vp jit < <(run "$WORK/$m.$b.om" "$j" "$cache")
      best[lat.$cfg]=$(min "${best[lat.$cfg]:-}" "$lat")
      best[vp.$cfg]=$(min "${best[vp.$cfg]:-}" "$vp")
      if [ "$cfg" = fused:on ]; then
        best[cold]=$(min "${best[cold]:-}" "$jit")
        read -r _ _ jit < <(run "$WORK/$m.$b.om" on "$cache") # the same build again: from the cache
        best[cached]=$(min "${best[cached]:-}" "$jit")
        prog=$(sed -n 's/^jit: \([0-9]*\) programs (\([0-9]*\) unique.*/\1 \2/p' "$WORK/jit.line")
      fi
    done
    echo "vector: $m round $r/$ROUNDS: fused jit ${best[lat.fused:on]} ms, interp ${best[lat.fused:off]} ms" >&2
  done
  rm -rf "$WORK/cache.$m"
  read -r np nuq <<< "$prog"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$m" "$THREADS" "$nf" "$nu" \
    "${best[vp.fused:on]}" "${best[vp.fused:off]}" "${best[lat.fused:on]}" "${best[lat.unfused:on]}" \
    "${best[lat.fused:off]}" "${best[lat.unfused:off]}" "${best[cold]}" "${best[cached]}" "$np" "$nuq" \
    "$(tasks fused)" "$(tasks unfused)" "$(ws fused)" "$(ws unfused)" "${best[vp.unfused:on]}" "${best[vp.unfused:off]}" >> "$TSV"
  unset best
done

# The table: ratios below 1 favour the JIT / the fused build.
awk -F'\t' 'NR == 1 {next}
  function ratio(a, b) { return b > 0 ? a / b : 0 }
  {printf "%-20s T=%s  VPROG ms fused: JIT %7.2f, interp %7.2f (%.2fx); unfused: JIT %7.2f, interp %7.2f (%.2fx)  |  latency ms, JIT: fused %7.2f, unfused %7.2f (%.2fx); interp: fused %7.2f, unfused %7.2f (%.2fx)  |  JIT compile %.1f ms cold, %.1f ms cached (%s programs, %s unique)  |  tasks fused %s, unfused %s (VPROG %s, %s)  |  workspace MiB fused %s, unfused %s\n",
     $1, $2, $5, $6, ratio($5, $6), $19, $20, ratio($19, $20), $7, $8, ratio($7, $8), $9, $10, ratio($9, $10), $11,
     $12, $13, $14, $15, $16, $3, $4, $17, $18}' "$TSV"
echo "vector: figures in $TSV" >&2
