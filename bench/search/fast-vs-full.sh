#!/bin/sh
# Runs distir-search twice on the same workload, without and with --fast,
# checks that the two CSVs agree (test/Search/Inputs/compare_fast.py) and
# prints the ratio of the search times measured in this run. Usage:
#   bench/search/fast-vs-full.sh [BUILD_DIR] [OUT_DIR] [JOBS] WORKLOAD
# WORKLOAD:
#   mlp103b-anchor  MLP 96 x 32768 training, batch 2048, D/T/P = 1/4/4,
#                   K = 1...64 (the issue's 12.7 s anchor configuration is
#                   D/T/P/K = 1/4/4/64; its own times are printed too)
#   mlp1b           MLP 16 x 8192 training, batch 64, K <= 8
#   gpt2-1.6b       GPT-2 1.6B inference, sequence 1024, batches
#                   $GPT2_BATCHES (default 8,16,32,64), K <= $GPT2_MAX_K
#                   (default 8); the ONNX file is exported once to OUT_DIR
set -e
BUILD=${1:-build}
OUT=${2:-${TMPDIR:-/tmp}/distir-search-fast}
JOBS=${3:-2}
WORKLOAD=${4:-mlp103b-anchor}
SEARCH=$BUILD/bin/distir-search
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
GPT2_BATCHES=${GPT2_BATCHES:-8,16,32,64}
GPT2_MAX_K=${GPT2_MAX_K:-8}
mkdir -p "$OUT"
case $WORKLOAD in
mlp103b-anchor)
  set -- --model mlp:96,32768 --batch 2048 --training --max-dp 1 --max-tp 4 \
    --max-pp 4 --max-microbatches 64 --no-memory-precheck ;;
mlp1b)
  set -- --model mlp:16,8192 --batch 64 --training --max-microbatches 8 ;;
gpt2-1.6b)
  onnx=$OUT/gpt2-1.6b-v50304.onnx
  if [ ! -s "$onnx" ]; then
    /usr/bin/python3 "$ROOT/python/distir/models/gpt2.py" --preset gpt2-1.6b \
      --vocab 50304 --arch-only --seq 1024 --batch 1 -o "$onnx" > /dev/null
  fi
  set -- --model "$onnx" --input-shape input_ids=1,1024 \
    --batch-sweep "$GPT2_BATCHES" --max-microbatches "$GPT2_MAX_K" ;;
*)
  echo "unknown workload $WORKLOAD" >&2
  exit 1 ;;
esac
for mode in full fast; do
  flag=
  [ $mode = fast ] && flag=--fast
  # Exit status 1 means "nothing fits" (the MLP 103B anchor): still timed.
  $SEARCH "$@" $flag --cluster dgx1-v100:nodes=2 --devices 16 \
    --jobs "$JOBS" --no-progress --timing --csv "$OUT/$WORKLOAD-$mode.csv" \
    > "$OUT/$WORKLOAD-$mode.txt" 2> "$OUT/$WORKLOAD-$mode.time" || true
  grep '^build' "$OUT/$WORKLOAD-$mode.time" | sed "s/^/$mode: /"
done
/usr/bin/python3 "$ROOT/test/Search/Inputs/compare_fast.py" \
  "$OUT/$WORKLOAD-full.csv" "$OUT/$WORKLOAD-fast.csv"
search() { sed -n 's/.*search \([0-9.]*\) s.*/\1/p' "$OUT/$WORKLOAD-$1.time"; }
awk -v full="$(search full)" -v fast="$(search fast)" 'BEGIN {
  printf "search time: full %s s, fast %s s, ratio %.1f\n", full, fast, full / fast }'
if [ "$WORKLOAD" = mlp103b-anchor ]; then
  for mode in full fast; do
    grep 'D/T/P/K 1/4/4/64 ' "$OUT/$WORKLOAD-$mode.time" | sed "s/^/$mode: /"
  done
fi
