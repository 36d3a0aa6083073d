#!/usr/bin/env bash
# Tied LM heads split by vocabulary (issue 15, deliverable 3): a GPT-2-like
# training step (1 block, width 256, 8 x 128 tokens, Adam, cross-entropy)
# exported with HuggingFace's tie (the head reads the token embedding),
# simulated on dgx-h100 at tp=1 (the baseline, run here in the same session)
# and tp=4, for a vocabulary tp divides (50304) and GPT-2's own (50257,
# padded), tied and untied. Prints step latency and peak memory per device.
#   bench/dtp/tied-embedding.sh [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:-$root/build}/bin"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

printf '%-7s %-7s %-4s %12s %14s\n' vocab head tp latency_ms peak_MB_per_dev
for vocab in 50304 50257; do
  for head in tied untied; do
    flag=--arch-only
    [ "$head" = tied ] && flag=--tie-embeddings # (the tie needs the weights)
    /usr/bin/python3 "$root/python/distir/models/gpt2.py" --layers 1 \
      --width 256 --heads 4 --vocab "$vocab" --n-ctx 128 --seq 128 --batch 8 \
      $flag -o "$work/model.onnx" > /dev/null 2>&1
    "$bin/distir-translate" --import-onnx "$work/model.onnx" \
      --input-shape input_ids=8,128 |
      "$bin/distir-opt" --dist-attach-cluster=cluster=dgx-h100 \
        "--dist-autodiff=loss=cross-entropy optimizer=adam" -o "$work/train.mlir"
    for tp in 1 4; do
      "$bin/distir-opt" "$work/train.mlir" --dist-dtp="tp=$tp" -o "$work/step.mlir"
      "$bin/distir-sim" "$work/step.mlir" --entry main_dtp > "$work/sim.txt"
      latency=$(awk '/^latency:/ {printf "%.3f", $2 * 1e3}' "$work/sim.txt")
      # The largest peak over the devices (the table after "device").
      peak=$(awk '/^device/ {t = 1; next} /^critical/ {t = 0}
                  t && $5 + 0 > m {m = $5 + 0} END {printf "%.0f", m / 1e6}' \
               "$work/sim.txt")
      printf '%-7s %-7s %-4s %12s %14s\n' "$vocab" "$head" "$tp" "$latency" "$peak"
    done
  done
done
