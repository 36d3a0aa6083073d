#!/bin/bash
# Per-rank execution speed against PyTorch DDP, measured in the same run on
# this machine (see README.md). Usage: bench/exec/run.sh [BUILD_DIR]
#
#  1. MLP training step (8 x 512, batch 64, bias-free Linear + ReLU, MSE),
#     data parallel on 2 ranks: distir-exec vs DDP with gloo.
#  2. GPT-2 training step (1 block, width 256, 4 heads, vocab 512, sequence
#     64, batch 8, cross-entropy, SGD), data parallel on 2 ranks.
# Each side: the median of 40 steps after warm-up (distir-exec: 1 step;
# PyTorch: 5, its gloo and autograd warm up slower); one thread per rank
# (OpenBLAS and PyTorch intra-op threads).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build}"
bin="$build/bin"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mpi=(mpirun --allow-run-as-root --oversubscribe -np 2)

median_ms() { sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' | head -1; }

report() { # name, ours (ms), pytorch (ms)
  python3 -c "import sys; o, p = float(sys.argv[2]), float(sys.argv[3]); \
print('%-28s distir-exec %8.2f ms   pytorch ddp %8.2f ms   ratio %.2f' % (sys.argv[1], o, p, o / p))" "$@"
}

"$bin/distir-translate" --build-mlp --layers 8 --dim 512 --batch 64 --training \
  -o "$work/mlp.mlir"
"$bin/distir-opt" "$work/mlp.mlir" --dist-dtp=dp=2 -o "$work/mlp-dp2.mlir"
ours=$("${mpi[@]}" "$bin/distir-exec" "$work/mlp-dp2.mlir" --entry mlp_dtp \
  --random-inputs 1 --repeat 41 --time-steps | grep "^rank 0: step time" | median_ms)
theirs=$(/usr/bin/python3 "$root/bench/exec/ddp_mlp.py" | median_ms)
report "MLP 8x512 batch 64, dp=2" "$ours" "$theirs"

/usr/bin/python3 "$root/python/distir/models/gpt2.py" --layers 1 --width 256 \
  --heads 4 --vocab 512 --n-ctx 64 --seq 64 --batch 8 -o "$work/gpt2.onnx" \
  > /dev/null 2>&1
"$bin/distir-translate" --import-onnx "$work/gpt2.onnx" \
  --input-shape input_ids=8,64 -o "$work/gpt2.mlir"
"$bin/distir-opt" "$work/gpt2.mlir" \
  "--dist-autodiff=loss=cross-entropy optimizer=sgd lr=0.01" --dist-dtp=dp=2 \
  -o "$work/gpt2-dp2.mlir"
# The model's own weights (PyTorch's initialization, as in ddp_gpt2.py):
# uniform random weights saturate the softmax, and the denormal gradients
# that follow slow every product several times over.
ours=$("${mpi[@]}" "$bin/distir-exec" "$work/gpt2-dp2.mlir" --entry main_dtp \
  --weights-from "$work/gpt2.onnx" --random-inputs 1 --repeat 41 --time-steps \
  | grep "^rank 0: step time" | median_ms)
theirs=$(/usr/bin/python3 "$root/bench/exec/ddp_gpt2.py" 2>/dev/null | median_ms)
report "GPT-2 block, dp=2" "$ours" "$theirs"
