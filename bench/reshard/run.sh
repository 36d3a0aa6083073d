#!/usr/bin/env bash
# Plans the Alpa resharding paper's many-to-many microbenchmark (its Table 2
# cases, fp32, aws-p3.8xlarge: 4 V100 per host, one 10 Gbit/s NIC per host)
# with distir-reshard, and larger meshes to time the planner: prints, per case,
# the unit tasks, the naive send/recv plan's and the chosen plan's simulated
# time, the speedup and the planning time (wall clock, one run).
# usage: bench/reshard/run.sh [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:-$root/build}/bin"
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
cases=(
  "1 S0RR S0RR 2x4 2x4 1024x1024x512 aws-p3.8xlarge:nodes=4"
  "2 RRR S0RR 2x4 2x4 1024x1024x512 aws-p3.8xlarge:nodes=4"
  "3 RS0R S0RR 2x4 2x4 1024x1024x512 aws-p3.8xlarge:nodes=4"
  "4 RS01R S01RR 2x4 2x4 1024x1024x512 aws-p3.8xlarge:nodes=4"
  "5 S1RR S0RR 2x4 2x4 1024x1024x512 aws-p3.8xlarge:nodes=4"
  "6 S0RR S0RR 2x4 3x4 3072x1024x170 aws-p3.8xlarge:nodes=5"
  "7 S1RR RRR 1x4 2x4 1024x1024x512 aws-p3.8xlarge:nodes=3"
  "9 RS0R RRS0 2x4 2x4 1024x1024x512 aws-p3.8xlarge:nodes=4"
  "4x8 RS01R S01RR 4x8 4x8 1024x1024x512 aws-p3.8xlarge:nodes=16"
  "8x8 RS01R S10RR 8x8 8x8 2048x2048x64 aws-p3.8xlarge:nodes=32"
)
printf "%-5s %-6s %-6s %-6s %-6s %6s %12s %12s %-16s %8s %8s\n" case from to \
  src dst tasks naive_s chosen_s strategy speedup plan_s
for line in "${cases[@]}"; do
  read -r name src dst sm dm shape cluster <<<"$line"
  start=$(date +%s.%N)
  json=$("$bin/distir-reshard" --cluster "$cluster" --src-sharding "$src" \
    --dst-sharding "$dst" --src-mesh "$sm" --dst-mesh "$dm" --shape "$shape" \
    --format json)
  end=$(date +%s.%N)
  echo "$json" > "$tmp"
  /usr/bin/python3 - "$tmp" "$name" "$src" "$dst" "$sm" "$dm" \
    "$(echo "$end - $start" | bc)" <<'PY'
import json, sys
path, name, src, dst, sm, dm, seconds = sys.argv[1:]
r = json.load(open(path))
naive = r["strategies"][0]["simulated_s"]
chosen = r["chosen"]
print(f"{name:<5} {src:<6} {dst:<6} {sm:<6} {dm:<6} {len(r['unit_tasks']):6d} "
      f"{naive:12.4f} {chosen['simulated_s']:12.4f} {chosen['strategy']:<16} "
      f"{naive / chosen['simulated_s']:7.1f}x {float(seconds):8.2f}")
PY
done
