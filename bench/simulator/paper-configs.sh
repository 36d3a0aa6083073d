#!/usr/bin/env bash
# Time to transform and simulate the DistIR paper's configurations on 16
# V100s (dgx1-v100:nodes=2): MLP 1B/17B/103B training and GPT-2
# 1.6B/13B/175B inference, one representative configuration each.
#   bench/simulator/paper-configs.sh [BUILD_DIR] [WORKLOAD...]
# WORKLOAD: mlp1b mlp17b mlp103b gpt2-1.6b gpt2-13b gpt2-175b (default: all;
# SMALL=1: mlp1b gpt2-1.6b). Environment:
#   OUT=DIR            programs and ONNX files (default $TMPDIR/distir-sim-paper;
#                      the architecture-only ONNX exports are reused)
#   MEMPLAN_TIMEOUT=S  bound of the run with the static-offset memory plan
#                      (default 120; 0 skips it)
#   GPT2_VOCAB=V       GPT-2 vocabulary (default 50304: GPT-2's 50257 padded
#                      to a multiple of 128 as Megatron-LM does; dist-dtp
#                      needs tp to divide the vocabulary of the LM head)
# Columns: build = distir-translate --build-mlp or --import-onnx (wall),
# dtp = the DistDTPPass line of distir-opt --mlir-timing, opt = the whole
# distir-opt run (parse + dist-dtp + print), ops = operations in the
# distributed function, load/sim = distir-sim --timing (load: parse, verify,
# placement check; sim: simulation proper) with --no-memory-plan, sim+plan =
# simulation with the memory plan, latency = simulated step time.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$root/build}"
[ $# -gt 0 ] && shift
bin="$build/bin"
out="${OUT:-${TMPDIR:-/tmp}/distir-sim-paper}"
plan_timeout="${MEMPLAN_TIMEOUT:-120}"
cluster="dgx1-v100:nodes=2"
mkdir -p "$out"

if [ $# -gt 0 ]; then
  workloads=("$@")
elif [ -n "${SMALL:-}" ]; then
  workloads=(mlp1b gpt2-1.6b)
else
  workloads=(mlp1b mlp17b mlp103b gpt2-1.6b gpt2-13b gpt2-175b)
fi

# Wall seconds of a command (output to $out/last.*).
walltime() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" > "$out/last.out" 2> "$out/last.err"
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b - a}'
}

# Operations in function @$2 of file $1 (lines that start an operation).
count_ops() {
  awk -v f="func.func @$2(" '
    index($0, f) { on = 1; next }
    on && /^  }/ { exit }
    on && /^ *(%[^ ]+ = )?"?[a-z_]+\.[a-z_.]+/ { n++ }
    END { print n + 0 }' "$1"
}

printf "%-10s %-10s %-13s %8s %8s %8s %9s %7s %7s %9s %12s\n" \
  workload batch D/T/P/K build_s dtp_s opt_s ops load_s sim_s sim+plan_s \
  latency_s
for w in "${workloads[@]}"; do
  case "$w" in
    mlp1b)   kind=mlp; layers=16; dim=8192;  batch=64;   cfg="2 4 2 8" ;;
    mlp17b)  kind=mlp; layers=64; dim=16384; batch=2048; cfg="1 4 4 16" ;;
    mlp103b) kind=mlp; layers=96; dim=32768; batch=2048; cfg="1 4 4 64" ;;
    gpt2-1.6b|gpt2-13b|gpt2-175b)
             kind=gpt2; batch=16; seq=1024; cfg="1 4 4 4" ;;
    *) echo "unknown workload $w" >&2; exit 1 ;;
  esac
  read -r d t p k <<< "$cfg"
  prog="$out/$w.mlir"
  if [ "$kind" = mlp ]; then
    entry=mlp
    build_s=$(walltime "$bin/distir-translate" --build-mlp --layers "$layers" \
      --dim "$dim" --batch "$batch" --training -o "$prog")
  else
    entry=main
    vocab="${GPT2_VOCAB:-50304}"
    onnx="$out/$w-v$vocab.onnx"
    if [ ! -s "$onnx" ]; then
      /usr/bin/python3 "$root/python/distir/models/gpt2.py" --preset "$w" \
        --vocab "$vocab" --arch-only --seq "$seq" --batch 1 -o "$onnx" \
        > /dev/null 2>&1
    fi
    build_s=$(walltime "$bin/distir-translate" --import-onnx "$onnx" \
      --input-shape "input_ids=$batch,$seq" -o "$prog")
  fi
  dprog="$out/$w-dtp.mlir"
  opt_s=$(walltime "$bin/distir-opt" "$prog" --mlir-timing \
    --dist-dtp="dp=$d tp=$t pp=$p microbatches=$k schedule=1f1b" -o "$dprog")
  dtp_s=$(awk '/DistDTPPass/{print $1}' "$out/last.err")
  ops=$(count_ops "$dprog" "${entry}_dtp")
  "$bin/distir-sim" "$dprog" --entry "${entry}_dtp" --cluster "$cluster" \
    --batch "$batch" --timing --no-memory-plan > "$out/$w.sim" 2> "$out/$w.simtime"
  load_s=$(awk '$1=="load"{print $2}' "$out/$w.simtime")
  sim_s=$(awk '$1=="simulate"{print $2}' "$out/$w.simtime")
  latency=$(awk '$1=="latency:"{printf "%.4g", $2}' "$out/$w.sim")
  plan_s="-"
  if [ "$plan_timeout" != 0 ]; then
    if timeout "$plan_timeout" "$bin/distir-sim" "$dprog" --entry "${entry}_dtp" \
        --cluster "$cluster" --batch "$batch" --timing \
        > "$out/$w.plan.sim" 2> "$out/$w.plan.simtime"; then
      plan_s=$(awk '$1=="simulate"{print $2}' "$out/$w.plan.simtime")
    else
      plan_s=">$plan_timeout"
    fi
  fi
  printf "%-10s %-10s %-13s %8s %8s %8s %9s %7s %7s %9s %12s\n" \
    "$w" "$batch" "$d/$t/$p/$k" "$build_s" "$dtp_s" "$opt_s" "$ops" \
    "$load_s" "$sim_s" "$plan_s" "$latency"
done
