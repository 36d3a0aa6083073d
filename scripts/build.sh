#!/usr/bin/env bash
# Configures and builds DistIR.
#   scripts/build.sh [--sanitize] [--build-dir DIR] [extra cmake args...]
# Defaults: build/ (build-asan/ with --sanitize), Release with assertions,
# clang-22 + lld, Ninja, -j2.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir=""
sanitize=OFF
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --sanitize) sanitize=ON ;;
    --build-dir) build_dir="$2"; shift ;;
    *) extra+=("$1") ;;
  esac
  shift
done
if [ -z "$build_dir" ]; then
  build_dir="$root/build"
  [ "$sanitize" = ON ] && build_dir="$root/build-asan"
fi

cmake -G Ninja -S "$root" -B "$build_dir" \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
  -DLLVM_USE_LINKER=lld \
  -DCMAKE_BUILD_TYPE=Release -DLLVM_ENABLE_ASSERTIONS=ON \
  -DDISTIR_SANITIZE="$sanitize" -DDISTIR_WERROR=ON \
  "${extra[@]}" > "$build_dir.configure.log" 2>&1 \
  || { cat "$build_dir.configure.log"; exit 1; }
ninja -C "$build_dir" -j "${DISTIR_JOBS:-2}" all
