#!/usr/bin/env bash
# Time to transform and simulate one D/T/P configuration of each of the
# DistIR paper's workloads on 16 V100s (dgx1-v100:nodes=2):
#   MLP 1B / 17B / 103B training (16x8192, 64x16384, 96x32768),
#   GPT-2 1.6B / 13B / 175B inference (architecture only, from ONNX).
# For each: build or import, dist-dtp (through distir-opt, text in and out),
# ops in the distributed program, distir-sim's load / simulate / report
# phases (--no-memory-plan; the static plan is also timed where it finishes
# within PLAN_LIMIT seconds), and the simulated latency.
#   bench/simulator/paper-configs.sh [BUILD_DIR] [WORKLOAD...]
# WORKLOAD: mlp1b mlp17b mlp103b gpt2-1.6b gpt2-13b gpt2-175b (default: all)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$root/build}"
shift || true
workloads=("$@")
[ ${#workloads[@]} -eq 0 ] &&
  workloads=(mlp1b mlp17b mlp103b gpt2-1.6b gpt2-13b gpt2-175b)
bin="$build/bin"
tmp="${TMPDIR:-/tmp}/distir-bench-paper"
mkdir -p "$tmp"
cluster="dgx1-v100:nodes=2"
plan_limit="${PLAN_LIMIT:-120}"

seconds() { # command... -> wall seconds on stdout, command output discarded
  local start end
  start=$(date +%s.%N)
  "$@" > /dev/null
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN{printf "%.2f", b - a}'
}

printf "%-10s %-22s %8s %8s %9s %8s %8s %8s %9s %12s\n" workload config \
  build_s dtp_s ops load_s sim_s report_s plan_s latency_s
for w in "${workloads[@]}"; do
  case "$w" in
    mlp1b) kind=mlp; layers=16; dim=8192; batch=512; cfg="dp=2 tp=4 pp=2 microbatches=8 schedule=1f1b" ;;
    mlp17b) kind=mlp; layers=64; dim=16384; batch=2048; cfg="dp=1 tp=4 pp=4 microbatches=16 schedule=1f1b" ;;
    mlp103b) kind=mlp; layers=96; dim=32768; batch=2048; cfg="dp=1 tp=4 pp=4 microbatches=64 schedule=1f1b" ;;
    gpt2-1.6b|gpt2-13b|gpt2-175b)
      kind=gpt2; batch=16; cfg="dp=1 tp=4 pp=4 microbatches=4" ;;
    *) echo "unknown workload '$w'" >&2; exit 2 ;;
  esac
  prog="$tmp/$w.mlir"
  if [ "$kind" = mlp ]; then
    entry=mlp
    build_s=$(seconds "$bin/distir-translate" --build-mlp --layers "$layers" \
      --dim "$dim" --batch "$batch" --training -o "$prog")
  else
    entry=main
    onnx="$tmp/$w.onnx"
    [ -f "$onnx" ] || /usr/bin/python3 "$root/python/distir/models/gpt2.py" \
      --preset "$w" --arch-only -o "$onnx" > /dev/null 2>&1
    build_s=$(seconds "$bin/distir-translate" --import-onnx "$onnx" \
      --input-shape "input_ids=$batch,1024" -o "$prog")
  fi
  dtp="$tmp/$w-dtp.mlir"
  dtp_s=$(seconds "$bin/distir-opt" "$prog" "--dist-dtp=$cfg" -o "$dtp")
  ops=$(awk "/func.func @${entry}_dtp/,/^  }/" "$dtp" | grep -c ' = \|dist\.send\|return')
  "$bin/distir-sim" "$dtp" --entry "${entry}_dtp" --cluster "$cluster" \
    --batch "$batch" --no-memory-plan --timing > "$tmp/$w.sim" 2> "$tmp/$w.time"
  load=$(awk '$1=="load"{print $2}' "$tmp/$w.time")
  sim=$(awk '$1=="simulate"{print $2}' "$tmp/$w.time")
  report=$(awk '$1=="report"{print $2}' "$tmp/$w.time")
  latency=$(awk '$1=="latency:"{print $2}' "$tmp/$w.sim")
  if timeout "$plan_limit" "$bin/distir-sim" "$dtp" --entry "${entry}_dtp" \
      --cluster "$cluster" --timing > /dev/null 2> "$tmp/$w.plan"; then
    plan=$(awk '$1=="simulate"{print $2}' "$tmp/$w.plan")
  else
    plan=">$plan_limit"
  fi
  printf "%-10s %-22s %8s %8s %9s %8s %8s %8s %9s %12s\n" "$w" \
    "$(echo "$cfg" | sed 's/dp=\([0-9]*\) tp=\([0-9]*\) pp=\([0-9]*\) microbatches=\([0-9]*\).*/D\/T\/P\/K=\1\/\2\/\3\/\4/')" \
    "$build_s" "$dtp_s" "$ops" "$load" "$sim" "$report" "$plan" "$latency"
done
