#!/usr/bin/env bash
# Long fuzzing campaigns with the libFuzzer harnesses of fuzz/, built first
# (incrementally) in build-fuzz/: the sanitizer build with libFuzzer's
# coverage instrumentation in every library (-DDISTIR_FUZZ_COVERAGE=ON;
# build-asan/ leaves it out, the test suite runs faster without it).
#   scripts/fuzz-campaign.sh [--runs N | --seconds S] [HARNESS...]
# HARNESS: onnx, mlir, cluster-json, synth, npy (default: all). Each runs
# until N inputs (default 1000000) or S seconds, from its seed corpus
# (fuzz/corpus/HARNESS plus the test suite's inputs) into
# out/fuzz/HARNESS/corpus; crashes land in out/fuzz/HARNESS/ (crash-*,
# leak-*, timeout-*) and the script exits non-zero. The last lines of each
# log (executions, executions per second, coverage) are printed; the
# numbers in fuzz/README.md come from this script.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$root/build-fuzz/bin"
limit=(-runs=1000000)
harnesses=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) limit=(-runs="$2"); shift ;;
    --seconds) limit=(-max_total_time="$2"); shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) harnesses+=("$1") ;;
  esac
  shift
done
[ ${#harnesses[@]} -eq 0 ] && harnesses=(onnx mlir cluster-json synth npy)
"$root/scripts/build.sh" --sanitize --build-dir "$root/build-fuzz" -DDISTIR_FUZZ_COVERAGE=ON

seeds() { # harness -> extra read-only seed directories
  case "$1" in
    onnx) echo "$root/fuzz/corpus/onnx $root/test/Target/ONNX/Inputs" ;;
    mlir) echo "$root/test/Dialect/Dist $root/test/Conversion/DistToRank" ;;
    *) echo "$root/fuzz/corpus/$1" ;;
  esac
}
maxlen() { # synthesis requests past a few hundred bytes only name bigger
  # hierarchies, which the synthesis limits refuse or price slowly
  case "$1" in
    synth) echo 256 ;;
    *) echo 8192 ;;
  esac
}
dict() {
  case "$1" in
    onnx) echo "-dict=$root/fuzz/dicts/onnx.dict" ;;
    mlir) echo "-dict=$root/fuzz/dicts/mlir.dict" ;;
    cluster-json) echo "-dict=$root/fuzz/dicts/json.dict" ;;
  esac
}

status=0
for h in "${harnesses[@]}"; do
  exe="$bin/distir-fuzz-$h"
  [ -x "$exe" ] || { echo "no $exe: build with scripts/build.sh --sanitize" >&2; exit 1; }
  out="$root/out/fuzz/$h"
  mkdir -p "$out/corpus"
  echo "== $h (${limit[*]})"
  # shellcheck disable=SC2046
  if ! ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0 "$exe" "${limit[@]}" \
      -seed=1 -max_len="$(maxlen "$h")" -timeout=10 -rss_limit_mb=4096 \
      -print_final_stats=1 $(dict "$h") -artifact_prefix="$out/" \
      "$out/corpus" $(seeds "$h") > "$out/log.txt" 2>&1; then
    echo "$h: FAILED (see $out/log.txt and $out/crash-*)"
    status=1
  fi
  grep -E "^#[0-9]+.*(DONE|INITED)|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb" "$out/log.txt" | tail -5
done
exit $status
