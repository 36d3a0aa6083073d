#!/usr/bin/env bash
# Simulator speed: simulated ops per second on generated programs of 10^3 to
# 10^6 ops (bench/simulator/gen_program.py), split into load (parse, verify,
# placement check: upstream MLIR parser) and simulation proper.
#   bench/simulator/run.sh [BUILD_DIR] [MAX_OPS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$root/build}"
max="${2:-1000000}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
printf "%10s %10s %12s %14s %10s\n" ops load_s simulate_s sim_ops_per_s peak_MB
for n in 1000 10000 100000 1000000; do
  [ "$n" -gt "$max" ] && break
  /usr/bin/python3 "$root/bench/simulator/gen_program.py" "$n" > "$tmp/p.mlir"
  ops=$(grep -c ' = \| return ' "$tmp/p.mlir")
  /usr/bin/time -f "%M" -o "$tmp/mem" "$build/bin/distir-sim" "$tmp/p.mlir" \
    --cluster dgx-h100 --timing > /dev/null 2> "$tmp/t"
  load=$(awk '$1=="load"{print $2}' "$tmp/t")
  sim=$(awk '$1=="simulate"{print $2}' "$tmp/t")
  rate=$(awk -v o="$ops" -v s="$sim" 'BEGIN{printf "%.3g", (s > 0 ? o / s : 0)}')
  mem=$(awk '{printf "%.0f", $1 / 1024}' "$tmp/mem")
  printf "%10d %10s %12s %14s %10s\n" "$ops" "$load" "$sim" "$rate" "$mem"
done
