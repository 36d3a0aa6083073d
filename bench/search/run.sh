#!/bin/sh
# Times distir-search on the DistIR paper's workloads on 16 V100s in two
# DGX-1 nodes (dgx1-v100:nodes=2) and records the best configuration per
# batch size. Usage:
#   bench/search/run.sh [BUILD_DIR] [OUT_DIR] [JOBS] [SECTION...]
# SECTION (default: mlp1b mlp1b-sweep mlp1b-dt, plus mlp103b-anchor with
# BIG=1):
#   mlp1b           MLP 1B (16 x 8192) training, batch 64, K <= 8
#   mlp1b-sweep     the same over batch sizes 8...8192
#   mlp1b-dt        the same sweep, data and tensor parallelism only
#   mlp17b          MLP 17B (64 x 16384) training, batch 2048, K <= 16
#   mlp103b         MLP 103B (96 x 32768) training, batch 2048, K <= 8 (the
#                   whole grid with K <= 64 takes too long here)
#   mlp103b-anchor  MLP 103B, D/T/P = 1/4/4 only, K = 1...64 (slow)
#   paper-fp16      MLP 1B, 17B and 103B in fp16 on 16 V100s in one DGX-2
#                   (dgx2-v100x16), batch 128...131072, K <= 256: the best
#                   configuration per batch size (--fast)
#   gpt2-1.6b gpt2-13b gpt2-175b
#                   GPT-2 inference (sequence 1024) over batch sizes
#                   $GPT2_BATCHES (default 8,16,32,64) with K <= $GPT2_MAX_K
#                   (default 8); the ONNX files (architecture only) are
#                   written to OUT_DIR once by python/distir/models/gpt2.py
#                   with vocabulary $GPT2_VOCAB (default 50304: GPT-2's
#                   50257 padded to a multiple of 128 as Megatron-LM does;
#                   dist-dtp needs tp to divide the LM head's vocabulary)
# EXTRA: more distir-search options for every run (e.g. EXTRA=--no-verify).
# Writes OUT_DIR/SECTION.{txt,csv,...} and prints the table and the timing
# line (stderr of --timing) of each run.
set -e
BUILD=${1:-build}
OUT=${2:-${TMPDIR:-/tmp}/distir-search-bench}
JOBS=${3:-2}
[ $# -gt 3 ] && shift 3 || set --
SEARCH=$BUILD/bin/distir-search
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$OUT"
if [ $# -eq 0 ]; then
  set -- mlp1b mlp1b-sweep mlp1b-dt
  [ -n "$BIG" ] && set -- "$@" mlp103b-anchor
fi
GPT2_BATCHES=${GPT2_BATCHES:-8,16,32,64}
GPT2_MAX_K=${GPT2_MAX_K:-8}
GPT2_VOCAB=${GPT2_VOCAB:-50304}

# run NAME distir-search-options...: 16 V100s, --timing; table to NAME.txt,
# timing line to NAME.time.
run() {
  name=$1
  shift
  $SEARCH "$@" --cluster dgx1-v100:nodes=2 --devices 16 --jobs "$JOBS" \
    --no-progress --timing $EXTRA \
    > "$OUT/$name.txt" 2> "$OUT/$name.time" || true
  cat "$OUT/$name.txt" "$OUT/$name.time"
}

for section in "$@"; do
case $section in
mlp1b)

# Fixed batch (issue 5's "MLP 1B training at fixed batch").
$SEARCH --model mlp:16,8192 --batch 64 --training \
  --cluster dgx1-v100:nodes=2 --devices 16 --max-microbatches 8 \
  --jobs "$JOBS" --top 10 --no-progress --timing $EXTRA \
  --csv "$OUT/mlp1b-b64.csv" --json "$OUT/mlp1b-b64.json" \
  --plot "$OUT/mlp1b-b64.svg" --emit-best "$OUT/mlp1b-b64-best.mlir" \
  > "$OUT/mlp1b-b64.txt" 2> "$OUT/mlp1b-b64.time"
cat "$OUT/mlp1b-b64.txt" "$OUT/mlp1b-b64.time"
;;
mlp1b-sweep)
# Batch sweep: which configuration wins as the batch grows.
$SEARCH --model mlp:16,8192 --batch-sweep 8,32,128,512,2048,8192 --training \
  --cluster dgx1-v100:nodes=2 --devices 16 --max-microbatches 8 \
  --jobs "$JOBS" --top 10 --no-progress --timing $EXTRA \
  --csv "$OUT/mlp1b-sweep.csv" --json "$OUT/mlp1b-sweep.json" \
  --plot "$OUT/mlp1b-sweep.svg" \
  > "$OUT/mlp1b-sweep.txt" 2> "$OUT/mlp1b-sweep.time"
cat "$OUT/mlp1b-sweep.txt" "$OUT/mlp1b-sweep.time"
;;
mlp1b-dt)
# The same sweep with data and tensor parallelism only (the DistIR paper's
# Figure 5 setting, no pipeline).
$SEARCH --model mlp:16,8192 --batch-sweep 8,32,128,512,2048,8192 --training \
  --cluster dgx1-v100:nodes=2 --devices 16 --max-pp 1 \
  --jobs "$JOBS" --top 10 --no-progress --timing $EXTRA \
  --csv "$OUT/mlp1b-dt-sweep.csv" --plot "$OUT/mlp1b-dt-sweep.svg" \
  > "$OUT/mlp1b-dt-sweep.txt" 2> "$OUT/mlp1b-dt-sweep.time"
cat "$OUT/mlp1b-dt-sweep.txt" "$OUT/mlp1b-dt-sweep.time"
;;
mlp17b)
run mlp17b --model mlp:64,16384 --batch 2048 --training \
  --max-microbatches 16 --top 10 --csv "$OUT/mlp17b.csv"
;;
mlp103b)
run mlp103b --model mlp:96,32768 --batch 2048 --training \
  --max-microbatches 8 --top 10 --no-memory-precheck --csv "$OUT/mlp103b.csv"
;;
mlp103b-anchor)
# The anchor of issue 5 (the published Python DistIR: 12.7 s for one
# 96-layer, dim-32768 MLP configuration, D/T/P/K = 1/4/4/64): every K of
# D/T/P = 1/4/4. Slow (minutes).
run mlp103b-anchor --model mlp:96,32768 --batch 2048 --training \
  --max-dp 1 --max-tp 4 --max-pp 4 --max-microbatches 64 \
  --no-memory-precheck --csv "$OUT/mlp103b-anchor.csv"
;;
paper-fp16)
for m in 16,8192 64,16384 96,32768; do
  $SEARCH --model mlp:$m --training --dtype f16 \
    --batch-sweep 128,512,2048,8192,32768,131072 --cluster dgx2-v100x16 \
    --devices 16 --max-microbatches 256 --fast --jobs "$JOBS" --no-progress \
    --timing $EXTRA --csv "$OUT/paper-fp16-$m.csv" \
    > "$OUT/paper-fp16-$m.txt" 2> "$OUT/paper-fp16-$m.time" || true
  grep -E "configurations|best at" "$OUT/paper-fp16-$m.txt"
  tail -1 "$OUT/paper-fp16-$m.time"
done
;;
gpt2-1.6b|gpt2-13b|gpt2-175b)
# GPT-2 inference over batch sizes (the DistIR paper's GPT-2 grids).
onnx=$OUT/$section-v$GPT2_VOCAB.onnx
if [ ! -s "$onnx" ]; then
  /usr/bin/python3 "$ROOT/python/distir/models/gpt2.py" --preset "$section" \
    --vocab "$GPT2_VOCAB" --arch-only --seq 1024 --batch 1 -o "$onnx" \
    > /dev/null 2>&1
fi
run "$section" --model "$onnx" --input-shape input_ids=1,1024 \
  --batch-sweep "$GPT2_BATCHES" --max-microbatches "$GPT2_MAX_K" --top 10 \
  --csv "$OUT/$section.csv" --plot "$OUT/$section.svg"
;;
*)
echo "unknown section $section" >&2
exit 1
;;
esac
done
