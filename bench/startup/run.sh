#!/usr/bin/env bash
# Start-up time of the command-line tools (`--version`: load, relocate,
# static initializers, option parsing, exit). The tools link LLVM's and
# MLIR's static archives (DISTIR_STATIC_TOOLS); distir-exec, which must share
# libMLIR.so with its JIT, links the shared libraries and is the baseline of
# the same build and session. The test suite starts several thousand tool
# processes, so this figure is a large part of its time.
#   bench/startup/run.sh [BUILD_DIR] [RUNS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:-$root/build}/bin"
runs="${2:-50}"
ms() {
  local start end
  start=$(date +%s%N)
  for _ in $(seq "$runs"); do "$@" > /dev/null; done
  end=$(date +%s%N)
  echo "scale=1; ($end - $start) / 1000000 / $runs" | bc
}
base=$(ms "$bin/distir-exec" --version)
echo "distir-exec (libMLIR.so, libLLVM.so): $base ms per start (mean of $runs)"
for t in opt translate run sim search; do
  if [ "$(ldd "$bin/distir-$t" | grep -c libMLIR)" -gt 0 ]; then link=libMLIR.so; else link=static; fi
  t_ms=$(ms "$bin/distir-$t" --version)
  echo "distir-$t ($link): $t_ms ms per start, distir-exec / distir-$t $(echo "scale=2; $base / $t_ms" | bc)x"
done
