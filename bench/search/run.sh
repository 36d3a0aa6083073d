#!/bin/sh
# Times distir-search on the DistIR paper's MLP 1B workload (16 layers of
# 8192 x 8192, 16 V100s in two DGX-1 nodes) and records the best
# configuration per batch size. Usage:
#   bench/search/run.sh [BUILD_DIR] [OUT_DIR] [JOBS]
# Writes OUT_DIR/mlp1b-b64.{txt,csv,json,svg}, OUT_DIR/mlp1b-sweep.{...}
# and prints the timing lines (stderr of --timing). PAPER=1 adds the other
# paper workloads on the same 16 V100s: MLP 17B training at batch 2048 and
# GPT-2 1.6B / 13B / 175B inference (architecture-only ONNX, sequence 1024)
# over batch sizes; BIG=1 the 96-layer MLP anchor.
set -e
BUILD=${1:-build}
OUT=${2:-${TMPDIR:-/tmp}/distir-search-bench}
JOBS=${3:-2}
SEARCH=$BUILD/bin/distir-search
mkdir -p "$OUT"

# Fixed batch (issue 5's "MLP 1B training at fixed batch").
$SEARCH --model mlp:16,8192 --batch 64 --training \
  --cluster dgx1-v100:nodes=2 --devices 16 --max-microbatches 8 \
  --jobs "$JOBS" --top 10 --no-progress --timing \
  --csv "$OUT/mlp1b-b64.csv" --json "$OUT/mlp1b-b64.json" \
  --plot "$OUT/mlp1b-b64.svg" --emit-best "$OUT/mlp1b-b64-best.mlir" \
  > "$OUT/mlp1b-b64.txt" 2> "$OUT/mlp1b-b64.time"
cat "$OUT/mlp1b-b64.txt" "$OUT/mlp1b-b64.time"

# Batch sweep: which configuration wins as the batch grows.
$SEARCH --model mlp:16,8192 --batch-sweep 8,32,128,512,2048,8192 --training \
  --cluster dgx1-v100:nodes=2 --devices 16 --max-microbatches 8 \
  --jobs "$JOBS" --top 10 --no-progress --timing \
  --csv "$OUT/mlp1b-sweep.csv" --json "$OUT/mlp1b-sweep.json" \
  --plot "$OUT/mlp1b-sweep.svg" \
  > "$OUT/mlp1b-sweep.txt" 2> "$OUT/mlp1b-sweep.time"
cat "$OUT/mlp1b-sweep.txt" "$OUT/mlp1b-sweep.time"

# The same sweep with data and tensor parallelism only (the DistIR paper's
# Figure 5 setting, no pipeline).
$SEARCH --model mlp:16,8192 --batch-sweep 8,32,128,512,2048,8192 --training \
  --cluster dgx1-v100:nodes=2 --devices 16 --max-pp 1 \
  --jobs "$JOBS" --top 10 --no-progress --timing \
  --csv "$OUT/mlp1b-dt-sweep.csv" --plot "$OUT/mlp1b-dt-sweep.svg" \
  > "$OUT/mlp1b-dt-sweep.txt" 2> "$OUT/mlp1b-dt-sweep.time"
cat "$OUT/mlp1b-dt-sweep.txt" "$OUT/mlp1b-dt-sweep.time"

if [ -n "${PAPER:-}" ]; then
  $SEARCH --model mlp:64,16384 --batch 2048 --training \
    --cluster dgx1-v100:nodes=2 --devices 16 --max-microbatches 16 \
    --jobs "$JOBS" --top 5 --no-progress --timing --no-verify \
    --csv "$OUT/mlp17b.csv" > "$OUT/mlp17b.txt" 2> "$OUT/mlp17b.time" || true
  cat "$OUT/mlp17b.txt" "$OUT/mlp17b.time"
  for preset in gpt2-1.6b gpt2-13b gpt2-175b; do
    [ -f "$OUT/$preset.onnx" ] || /usr/bin/python3 python/distir/models/gpt2.py \
      --preset "$preset" --arch-only -o "$OUT/$preset.onnx" > /dev/null 2>&1
    $SEARCH --model "$OUT/$preset.onnx" --input-shape input_ids=1,1024 \
      --batch-sweep 16,64,256 --cluster dgx1-v100:nodes=2 --devices 16 \
      --max-microbatches 8 --jobs "$JOBS" --top 5 --no-progress --timing \
      --no-verify --csv "$OUT/$preset.csv" \
      > "$OUT/$preset.txt" 2> "$OUT/$preset.time" || true
    cat "$OUT/$preset.txt" "$OUT/$preset.time"
  done
fi

# The anchor of issue 5 (the published Python DistIR: 12.7 s for one
# 96-layer, dim-32768 MLP configuration, D/T/P/K = 1/4/4/64): every K of
# D/T/P = 1/4/4. Slow (minutes): only with BIG=1.
if [ -n "$BIG" ]; then
  $SEARCH --model mlp:96,32768 --batch 2048 --training \
    --cluster dgx1-v100:nodes=2 --devices 16 --max-dp 1 --max-tp 4 \
    --max-pp 4 --max-microbatches 64 --jobs 1 --no-progress --timing \
    --csv "$OUT/mlp103b.csv" > "$OUT/mlp103b.txt" 2> "$OUT/mlp103b.time" || true
  cat "$OUT/mlp103b.txt" "$OUT/mlp103b.time"
fi
