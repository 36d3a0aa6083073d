#!/usr/bin/env bash
# Builds and runs the synthesis benchmark against a DistIR build tree.
#   bench/synthesis/run.sh [BUILD_DIR] [RUNS]
# BUILD_DIR defaults to build/; it must have built DistIRSynthesis
# (ninja -C build DistIRSynthesis).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$root/build}"
runs="${2:-7}"
out="$build/bench/synthesis"
mkdir -p "$out"
clang++-22 -std=c++17 -O2 -fno-exceptions -fno-rtti \
  -I "$root/include" -isystem /usr/lib/llvm-22/include \
  "$root/bench/synthesis/synthesis-bench.cpp" \
  "$build/lib/libDistIRSynthesis.a" "$build/lib/libDistIRCostModel.a" \
  "$build/lib/libDistIRCluster.a" "$build/lib/libDistIRSupport.a" \
  -L/usr/lib/llvm-22/lib -Wl,-rpath,/usr/lib/llvm-22/lib -lMLIR -lLLVM \
  -o "$out/synthesis-bench"
"$out/synthesis-bench" "$runs"
