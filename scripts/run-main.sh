#!/usr/bin/env bash
# README command 1: installs dependencies, builds, and runs the main job on
# built-in defaults: import the bundled GPT-2 (ONNX, 2 blocks, width 64),
# search data/tensor/pipeline strategies for it on a preset cluster with the
# simulator, print the best ones, and write the chosen program, its Chrome
# trace, the search results and the chosen program's per-rank programs.
#   scripts/run-main.sh [--cluster NAME|file.json] [--devices N] [--batch B]
#                       [--out DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cluster="dgx-h100:nodes=2"
devices=16
batch=8
out="$root/out"
while [ $# -gt 0 ]; do
  case "$1" in
    --cluster) cluster="$2"; shift ;;
    --devices) devices="$2"; shift ;;
    --batch) batch="$2"; shift ;;
    --out) out="$2"; shift ;;
    *) echo "run-main: unknown argument '$1' (expected --cluster, --devices, --batch or --out)" >&2; exit 2 ;;
  esac
  shift
done

"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"

bin="$root/build/bin"
model="$root/test/Target/ONNX/Inputs/gpt2-test.onnx"
mkdir -p "$out"
echo "== main job: GPT-2 ($model), batch $batch, $devices devices of '$cluster' =="
"$bin/distir-search" --model "$model" --input-shape "input_ids=$batch,32" \
  --batch "$batch" --cluster "$cluster" --devices "$devices" \
  --max-microbatches 4 --top 5 --jobs 2 --no-progress --fast \
  --csv "$out/search.csv" --json "$out/search.json" --plot "$out/search.svg" \
  --emit-best "$out/best.mlir" --trace-best "$out/best-trace.json"
"$bin/distir-opt" "$out/best.mlir" --inline --dist-to-rank -o "$out/best-ranks.mlir"
ranks=$(grep -c "func.func @.*_rank[0-9]" "$out/best-ranks.mlir" || true)
echo "per-rank programs: $ranks functions"
echo "wrote $out/best.mlir (global program), $out/best-ranks.mlir (per-rank"
echo "programs), $out/best-trace.json (open in Perfetto), $out/search.{csv,json,svg}"
