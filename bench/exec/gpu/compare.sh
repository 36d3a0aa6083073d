#!/bin/bash
# Compares the results run.sh brought back with distir-run's, for every
# workload and variant: compare.sh BUNDLE_DIR RESULTS_DIR [RTOL]
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
status=0
for dir in "$2"/*/; do
  run=$(basename "$dir")
  model=${run%-blas}
  echo "== $run"
  /usr/bin/python3 "$root/test/Conversion/DistToGPU/Inputs/compare-outputs.py" \
    "$1/$model/ref" "$dir" "${3:-1e-5}" | tail -1 || status=1
done
exit $status
