#!/bin/bash
# Runs a bundle made by bench/exec/gpu/prepare.sh on a GPU machine (one
# process, one GPU): each step executable 40 times, then PyTorch's eager step
# of the same model on the same GPU; prints median step times and their
# ratio, and compares the results of each executable's first step with
# distir-run's (relative error at most 1e-4). The results are kept in
# BUNDLE/results/<model><variant>/ (for compare.sh elsewhere).
#   run.sh [BUNDLE_DIR]
set -uo pipefail
bundle="$(cd "${1:-$(dirname "$0")}" && pwd)"
results="$bundle/results"
rm -rf "$results"
libdir() { # the lib folder of a pip-installed nvidia.* package
  python3 -c "import nvidia.$1, os; print(os.path.join(list(nvidia.$1.__path__)[0], 'lib'))" 2>/dev/null
}
found() { local f; f=$(find / -name "$1" -not -path "/proc/*" 2>/dev/null | head -1); [ -n "$f" ] && dirname "$f"; }
export LD_LIBRARY_PATH="$bundle/lib:$(libdir nccl):$(libdir cu13):$(found libnccl.so.2):$(found libcublas.so.13):${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
median() { sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' | head -1; }
for model in mlp gpt2 encoder squeezenet squeezenet-train collectives; do
  theirs=nan  # PyTorch baselines for the two workloads of bench/exec/run.sh
  case $model in mlp|gpt2)
    theirs=$(cd "$bundle" && timeout 300 python3 gpu_baseline.py --model $model | median) ;;
  esac
  for variant in "" -blas -fused -blas-fused; do
    [ -x "$bundle/$model/step$variant" ] || continue
    rm -f "$bundle/$model"/out_*.bin
    line=$(timeout 300 "$bundle/$model/step$variant" "$bundle/$model" 40 2>&1 | tail -1)
    echo "$model$variant: $line ($(cat "$bundle/$model/kernels$variant" 2>/dev/null) launch sites)"
    ours=$(echo "$line" | median)
    mkdir -p "$results/$model$variant"
    cp "$bundle/$model"/out_*.bin "$results/$model$variant/" 2>/dev/null
    python3 "$bundle/compare-outputs.py" "$bundle/$model/ref" \
      "$results/$model$variant" 1e-4 | tail -1 | sed "s/^/$model$variant: /"
    python3 -c "import sys; o, p = float(sys.argv[2]), float(sys.argv[3]); \
print('%-12s distir %8.3f ms   pytorch %8.3f ms   ratio %.2f' % (sys.argv[1], o, p, o / p))" \
      "$model$variant" "${ours:-nan}" "${theirs:-nan}"
  done
done
exit 0
