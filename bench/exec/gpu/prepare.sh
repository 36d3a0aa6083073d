#!/bin/bash
# Builds, on a machine with DistIR (and CUDA + NCCL at build time), the GPU
# bench bundle that bench/exec/gpu/run.sh runs on a GPU machine, which needs
# no LLVM, MPI launcher or DistIR build there (see ../README.md).
#   bench/exec/gpu/prepare.sh [BUILD_DIR] BUNDLE_DIR
# For each workload (the MLP step and the GPT-2 block step of
# bench/exec/run.sh, an nn.TransformerEncoder trained with Adam, torchvision's
# SqueezeNet 1.1 for inference and training, and collectives.mlir; one rank),
# with and without blas=true (cuBLAS) and fuse=true (elementwise fusion): the step
# executable (--dist-lower-to-llvm="comm=nccl device=gpu", the driver of
# test/Conversion/DistToGPU/Inputs/make-step-driver.py), its arguments, and
# distir-run's results for them; the runtime libraries it loads (DistIR's,
# libcudart, Open MPI's, which the NCCL shim links but a single rank does
# not call).
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
if [ $# -eq 2 ]; then build="$1"; bundle="$2"; else build="$root/build"; bundle="$1"; fi
bin="$build/bin"
inputs="$root/test/Conversion/DistToGPU/Inputs"
rm -rf "$bundle" && mkdir -p "$bundle/lib"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Global programs, each entry renamed <name>_step (a `main` would clash with
# the driver's) and given a C interface.
add() { # name, program (entry @main or @mlp)
  "$bin/distir-opt" "$2" --llvm-request-c-wrappers -o - \
    | sed -E "s/@(main|mlp)\b/@${1//-/_}_step/g" > "$work/$1-global.mlir"
}
"$bin/distir-translate" --build-mlp --layers 8 --dim 512 --batch 64 --training \
  -o "$work/mlp.mlir"
add mlp "$work/mlp.mlir"
/usr/bin/python3 "$root/python/distir/models/gpt2.py" --layers 1 --width 256 \
  --heads 4 --vocab 512 --n-ctx 64 --seq 64 --batch 8 -o "$work/gpt2.onnx" \
  > /dev/null 2>&1
"$bin/distir-translate" --import-onnx "$work/gpt2.onnx" \
  --input-shape input_ids=8,64 -o "$work/gpt2.mlir"
"$bin/distir-opt" "$work/gpt2.mlir" \
  "--dist-autodiff=loss=cross-entropy optimizer=sgd lr=0.01" -o "$work/gpt2-train.mlir"
add gpt2 "$work/gpt2-train.mlir"
# Models nobody on the team wrote: nn.TransformerEncoder trained with Adam,
# torchvision's SqueezeNet 1.1 for inference and trained with momentum.
/usr/bin/python3 "$root/bench/exec/gpu/export_models.py" "$work" > /dev/null 2>&1
"$bin/distir-translate" --import-onnx "$work/encoder.onnx" -o "$work/encoder.mlir"
"$bin/distir-opt" "$work/encoder.mlir" "--dist-autodiff=loss=mse optimizer=adam" \
  -o "$work/encoder-train.mlir"
add encoder "$work/encoder-train.mlir"
"$bin/distir-translate" --import-onnx "$work/squeezenet.onnx" -o "$work/squeezenet.mlir"
add squeezenet "$work/squeezenet.mlir"
"$bin/distir-opt" "$work/squeezenet.mlir" \
  "--dist-autodiff=loss=cross-entropy optimizer=momentum" -o "$work/squeezenet-train.mlir"
add squeezenet-train "$work/squeezenet-train.mlir"
sed 's/@collectives\b/@collectives_step/g' "$root/bench/exec/gpu/collectives.mlir" \
  > "$work/collectives-global.mlir"

for name in mlp gpt2 encoder squeezenet squeezenet-train collectives; do
  entry="${name//-/_}_step"
  program="$work/$name-global.mlir"
  mkdir -p "$bundle/$name/ref"
  /usr/bin/python3 "$inputs/make-inputs.py" "$program" "$entry" "$bundle/$name" 1 \
    > "$work/$name.inputs"
  "$bin/distir-run" "$program" --entry "$entry" @"$work/$name.inputs" \
    --output-dir "$bundle/$name/ref" > /dev/null
  rm -f "$bundle/$name"/in_*.npy
  /usr/bin/python3 "$inputs/make-step-driver.py" "$program" "$entry" > "$work/$name-driver.c"
  for variant in "" "-blas" "-fused" "-blas-fused"; do
    options="comm=nccl device=gpu"
    case $variant in *blas*) options="$options blas=true" ;; esac
    case $variant in *fused*) options="$options fuse=true" ;; esac
    "$bin/distir-opt" "$program" --dist-lower-to-llvm="$options" -o "$work/step.mlir"
    # Kernel launch sites of the step (each runs once per step unless a
    # host loop encloses it).
    grep -c "gpu.launch_func" "$work/step.mlir" \
      > "$bundle/$name/kernels$variant" || true
    "$bin/distir-translate" --mlir-to-llvmir "$work/step.mlir" -o "$work/step.ll"
    clang-22 -Wno-override-module -c -O2 "$work/step.ll" -o "$work/step.o"
    clang-22 -O2 -I"$root/runtime/cuda" -I"$root/runtime/nccl" \
      "$work/$name-driver.c" "$work/step.o" -L"$build/lib" \
      -lDistIRCUDARuntime -lDistIRNCCLRuntime -Wl,-rpath,'$ORIGIN/../lib' \
      -o "$bundle/$name/step$variant"
  done
done

cp "$build/lib/libDistIRCUDARuntime.so" "$build/lib/libDistIRNCCLRuntime.so" "$bundle/lib/"
ldconfig -p > "$work/ldcache"
for lib in libcudart.so.13 libmpi.so.40 libopen-rte.so.40 libopen-pal.so.40 \
    libhwloc.so.15 libevent_core-2.1.so.7 libevent_pthreads-2.1.so.7 libudev.so.1; do
  path=$(awk -v l="$lib" '$1 == l { print $NF; exit }' "$work/ldcache")
  [ -n "$path" ] || path=$(find /usr/local/cuda/lib64/ -name "$lib" | head -1)
  cp -L "$path" "$bundle/lib/"
done
cp "$root/bench/exec/gpu/run.sh" "$root/bench/exec/gpu_baseline.py" \
  "$inputs/compare-outputs.py" "$bundle/"
mkdir -p "$bundle/models" && cp "$root/python/distir/models/gpt2.py" "$bundle/models/"
echo "bundle in $bundle ($(du -sh "$bundle" | cut -f1))"
