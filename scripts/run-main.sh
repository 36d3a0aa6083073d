#!/usr/bin/env bash
# README command 1: installs dependencies, builds, and runs the main job on
# built-in defaults: plan the *training* of a real-sized model. It exports
# the DistIR paper's GPT-2 1.6B (24 blocks, width 2048, 16 heads, sequence
# 1024; architecture only, vocabulary padded to 50304 so that tensor
# parallelism divides it) from PyTorch to ONNX, turns it into a training
# step (cross-entropy, Adam, bf16 mixed precision with fp32 master weights)
# and searches data/tensor/pipeline strategies with microbatches on a preset
# cluster with the simulator; prints the best ones and writes the chosen
# program, its Chrome trace and the search results.
#   scripts/run-main.sh [--cluster NAME|file.json] [--devices N] [--batch B]
#                       [--out DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cluster="dgx-h100:nodes=2"
devices=16
batch=64
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
mkdir -p "$out"
model="$out/gpt2-1.6b.onnx"
/usr/bin/python3 "$root/python/distir/models/gpt2.py" --preset gpt2-1.6b \
  --vocab 50304 --arch-only -o "$model" > /dev/null
echo "== main job: train GPT-2 1.6B (Adam, bf16 mixed precision), batch $batch x 1024 tokens, $devices devices of '$cluster' =="
start=$(date +%s)
"$bin/distir-search" --model "$model" --input-shape "input_ids=$batch,1024" \
  --batch "$batch" --training --loss cross-entropy --optimizer adam \
  --dtype bf16 --cluster "$cluster" --devices "$devices" \
  --max-microbatches 2 --top 5 --jobs 2 --no-progress --fast \
  --csv "$out/search.csv" --json "$out/search.json" --plot "$out/search.svg" \
  --emit-best "$out/best.mlir" --trace-best "$out/best-trace.json"
echo "search: $(( $(date +%s) - start )) s"
echo "wrote $out/best.mlir (global training step), $out/best-trace.json"
echo "(open in Perfetto), $out/search.{csv,json,svg}; per-rank programs:"
echo "  $bin/distir-opt $out/best.mlir --inline --dist-to-rank -o $out/best-ranks.mlir"
