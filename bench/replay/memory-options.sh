#!/usr/bin/env bash
# distir-replay --memory-budget against real runs: records a PyTorch DDP job
# (gloo, one thread per rank, 2 ranks) as traced, predicts from its trace the
# iteration time and peak allocation of gradient accumulation (2 and 4
# microbatches) and, for the MLP, of activation checkpointing (in as many
# segments as the advice chose),
# then records the job really run that way and replays its own trace: the
# measured (profiled) iteration and the traced peak are what the prediction
# is compared with.
# usage: bench/replay/memory-options.sh [BUILD_DIR] [WORK_DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:-$root/build}/bin"
work="${2:-$(mktemp -d)}"
record="$root/python/generators/record_ddp_traces.py"
py=/usr/bin/python3
mkdir -p "$work"
quiet() { timeout 300 "$@" 2> >(grep -v "^W[0-9]\|WARNING\|leaked semaphore\|warnings.warn" >&2); }

# Reports with every option listed: a budget of one byte fits nothing.
report() { # DIR: the replay of the job in DIR, with the memory options
  "$bin/distir-replay" "$1"/rank?.json --memory-budget 1 --format json > "$1/replay.json"
}

printf "%-12s %-34s %19s %10s %14s %12s %12s %8s\n" model option \
  predicted_s measured_s "within range" predicted_B measured_B error
for model in mlp transformer; do
  base="$work/$model"
  quiet $py "$record" --out "$base" --model "$model" --iterations 6
  report "$base"
  runs=("accumulate 2" "accumulate 4")
  # The real checkpointed run uses the segment count the advice chose.
  segments=$($py -c "import json; print(next(o['segments'] for o in json.load(open('$base/replay.json'))['memory']['options'] if 'segments' in o))")
  [ "$model" = mlp ] && runs+=("checkpoint $segments")
  for run in "${runs[@]}"; do
    set -- $run
    dir="$work/$model-$1-$2"
    quiet $py "$record" --out "$dir" --model "$model" --iterations 6 --"$1" "$2"
    report "$dir"
    $py - "$base/replay.json" "$dir/replay.json" "$model" "$1" "$2" <<'PY'
import json, sys
base, real, model, kind, n = sys.argv[1:]
n = int(n)
options = json.load(open(base))["memory"]["options"]
if kind == "accumulate":
    option = next(o for o in options if o.get("microbatches") == n)
else:
    option = next(o for o in options if "segments" in o)
real = json.load(open(real))
measured = real["measured_iteration_s"]
peak = real["memory"]["traced_peak_bytes"]
lo, hi, q = (option["predicted_iteration_s"], option["predicted_iteration_upper_s"],
             option["peak_bytes"])
name = option["option"]
span = f"{lo:.4f}-{hi:.4f}" if hi != lo else f"{lo:.4f}"
where = ("yes" if lo <= measured <= hi else
         f"{100 * (measured / hi - 1):+.0f}% over" if measured > hi else
         f"{100 * (measured / lo - 1):+.0f}% under")
print(f"{model:12s} {name:34s} {span:>19s} {measured:10.4f} {where:>14s} "
      f"{q:12d} {peak:12d} {100 * (q / peak - 1):+7.1f}%")
PY
  done
  $py -c "
import json; r = json.load(open('$base/replay.json'))
print(f\"{'$model':12s} {'traced':34s} {r['predicted_iteration_s']:19.4f} {r['measured_iteration_s']:10.4f} {100 * r['relative_error']:+13.1f}% {r['memory']['traced_peak_bytes']:12d}\")"
done
