#!/usr/bin/env bash
# dPRO's question on real jobs: records PyTorch DDP (gloo, one thread per
# rank) with the default bucket_cap_mb (25), replays the traces
# (distir-replay --optimize), then times real unprofiled runs with the
# default and with the recommended cap (the default again when it advises
# keeping the traced buckets: the two columns then show the noise),
# alternating, and prints the median step times side by side (each run: 3 warm-up and 40 timed iterations; REPEATS runs each).
# usage: bench/replay/run.sh [BUILD_DIR] [WORK_DIR] [REPEATS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:-$root/build}/bin"
work="${2:-$(mktemp -d)}"
repeats="${3:-10}"
record="$root/python/generators/record_ddp_traces.py"
py=/usr/bin/python3
mkdir -p "$work"
quiet() { timeout 300 "$@" 2> >(grep -v "^W[0-9]\|WARNING\|leaked semaphore\|warnings.warn" >&2); }

step_time() { # MODEL RANKS CAP: one unprofiled run's step time
  quiet $py "$record" --out "$work/time" --model "$1" --ranks "$2" \
    --iterations 40 --bucket-cap-mb "$3" --no-trace
  $py -c "import json; print(json.load(open('$work/time/run.json'))['unprofiled_step_s'])"
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

printf "%-12s %5s %10s %10s %12s %12s %9s %12s %12s %9s\n" model ranks \
  measured predicted error unaligned recommend predicted_x default_s recommended_s
for model in mlp transformer; do
  for ranks in 2 4; do
    dir="$work/$model-$ranks"
    quiet $py "$record" --out "$dir" --model "$model" --ranks "$ranks" \
      --iterations 6 --bucket-cap-mb 25
    "$bin/distir-replay" "$dir"/rank?.json --optimize --format json > "$dir/replay.json"
    read -r measured predicted error unaligned cap speedup < <($py -c "
import json; r = json.load(open('$dir/replay.json')); o = r['optimization']
rec = o['recommended']
# Keeping the traced buckets means the traced (default) cap.
cap = 25 if rec['keep_traced'] else rec['bucket_cap_mb']
print(r['measured_iteration_s'], r['predicted_iteration_s'], r['relative_error'],
      r['relative_error_unaligned'], 1e4 if cap == 'one bucket' else cap,
      1.0 if rec['keep_traced'] else o['predicted_speedup'])")
    # Alternate the two caps in ABBA order so that drifting load and the
    # position in a pair hit both alike.
    : > "$dir/default.txt"; : > "$dir/recommended.txt"
    for i in $(seq "$repeats"); do
      if [ $((i % 2)) = 1 ]; then
        step_time "$model" "$ranks" 25 >> "$dir/default.txt"
        step_time "$model" "$ranks" "$cap" >> "$dir/recommended.txt"
      else
        step_time "$model" "$ranks" "$cap" >> "$dir/recommended.txt"
        step_time "$model" "$ranks" 25 >> "$dir/default.txt"
      fi
    done
    default=$(median < "$dir/default.txt")
    recommended=$(median < "$dir/recommended.txt")
    printf "%-12s %5d %10.4f %10.4f %+12.3f %+12.3f %9s %12.2f %12.4f %12.4f\n" \
      "$model" "$ranks" "$measured" "$predicted" "$error" "$unaligned" "$cap" \
      "$speedup" "$default" "$recommended"
  done
done
