#!/usr/bin/env bash
# One configuration through the command-line tools against the same
# configuration inside distir-search (issue 18, deliverable 5): the 96-layer,
# dim-32768 MLP training step (batch 2048) at D/T/P/K = 1/4/4/64, GPipe, on
# dgx1-v100:nodes=2.
#   text:     distir-opt --dist-dtp (text out) | distir-sim
#   bytecode: distir-opt --dist-dtp --emit-bytecode | distir-sim
#   trusted:  the same with distir-opt --verify-each=false and distir-sim
#             --trust-input (the search does not re-verify its own
#             transforms either)
#   one-tool: distir-sim --pass-pipeline 'builtin.module(dist-dtp{...})'
#             (transform and simulate in one process, nothing written)
#   one-tool-trusted: the same with --verify-each=false
#   search:   distir-search --timing, the per-configuration figure of the
#             same configuration (transform + simulation, in process)
# Building the sequential program (distir-translate --build-mlp) is timed
# apart: the search builds it once for all configurations. All runs skip the
# static memory plan (the search ranks by the liveness peak).
#   bench/search/cli-vs-inprocess.sh [BUILD_DIR] [RUNS]
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

start=$(now)
build_mlp
echo "build (distir-translate --build-mlp, text): $(echo "$(now) - $start" | bc) s, $(du -h "$work/mlp.mlir" | cut -f1)"

for mode in text bytecode trusted; do
  flag=""
  trust=""
  [ "$mode" = bytecode ] && flag="--emit-bytecode"
  [ "$mode" = trusted ] && flag="--emit-bytecode --verify-each=false" && trust="--trust-input"
  for r in $(seq "$runs"); do
    start=$(now)
    "$bin/distir-opt" "$work/mlp.mlir" --dist-dtp="$dtp" $flag -o "$work/step.$mode"
    "$bin/distir-sim" "$work/step.$mode" --entry mlp_dtp --cluster "$cluster" \
      --no-memory-plan $trust > "$work/sim.$mode.txt"
    echo "$(now) - $start" | bc
  done | median > "$work/$mode.s"
  echo "$mode: $(cat "$work/$mode.s") s (median of $runs), step program $(du -h "$work/step.$mode" | cut -f1), latency $(grep -m1 '^latency' "$work/sim.$mode.txt" | awk '{print $2}')"
done

for mode in one-tool one-tool-trusted; do
  verify=true
  [ "$mode" = one-tool-trusted ] && verify=false
  for r in $(seq "$runs"); do
    start=$(now)
    "$bin/distir-sim" "$work/mlp.mlir" --pass-pipeline "builtin.module(dist-dtp{$dtp})" \
      --verify-each=$verify --entry mlp_dtp --cluster "$cluster" \
      --no-memory-plan > "$work/sim.$mode.txt"
    echo "$(now) - $start" | bc
  done | median > "$work/$mode.s"
  echo "$mode: $(cat "$work/$mode.s") s (median of $runs), latency $(grep -m1 '^latency' "$work/sim.$mode.txt" | awk '{print $2}')"
done

# In process: the same configuration's transform + simulation time.
for r in $(seq "$runs"); do
  "$bin/distir-search" --model mlp:96,32768 --batch 2048 --training \
    --cluster "$cluster" --devices 16 --max-dp 1 --max-tp 4 --max-pp 4 \
    --max-microbatches 64 --no-memory-precheck --jobs 1 --no-progress \
    --timing --csv "$work/search.csv" 2> "$work/timing.txt" > /dev/null || true  # every configuration is oom: exit 1
  # "... 1/4/4/64 gpipe tp-inner: transform 1.2 s, simulate 350 ms"
  grep -m1 "D/T/P/K 1/4/4/64 gpipe tp-inner:" "$work/timing.txt" | \
    sed -E 's/.*transform ([0-9.]+) ([mu]?s), simulate ([0-9.]+) ([mu]?s).*/\1 \2 \3 \4/' | \
    awk 'function sec(v, u) { return u == "ms" ? v / 1e3 : u == "us" ? v / 1e6 : v }
         { print sec($1, $2) + sec($3, $4) }'
done | median > "$work/search.s"
echo "search (in process, transform + simulation): $(cat "$work/search.s") s (median of $runs)"
for mode in text bytecode trusted one-tool one-tool-trusted; do
  echo "$mode / search: $(echo "scale=2; $(cat "$work/$mode.s") / $(cat "$work/search.s")" | bc)x"
done
