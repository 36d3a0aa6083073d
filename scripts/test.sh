#!/usr/bin/env bash
# README command 2: installs dependencies, builds, and runs every test
# (lit/FileCheck regression tests, GoogleTest unit tests, formatting gate),
# first in the normal build, then in the ASan+UBSan build (without the
# few tests marked "UNSUPPORTED: sanitize-subset" unless --sanitize-all).
#   scripts/test.sh [--no-sanitize | --sanitize-all]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sanitize=1
# Both runs share one cache of PyTorch model exports (%export_cache).
shared_params=(--param "export_cache=$root/build/test/export-cache")
lit_params=()
usage() { echo "usage: scripts/test.sh [--no-sanitize | --sanitize-all]" >&2; exit 2; }
[ $# -le 1 ] || usage
case "${1:-}" in
  "") ;;
  --no-sanitize) sanitize=0 ;;
  --sanitize-all) lit_params=(--param sanitize_all=1) ;;
  *) usage ;;
esac

"$root/scripts/install-deps.sh"

passed=0
failed=0
run_suite() { # build dir, label, lit arguments...
  local dir="$1" label="$2" out rc
  shift 2
  out="$(mktemp)"
  set +e
  /usr/lib/llvm-22/bin/lit -sv --time-tests "$@" "$dir/test" "$dir/test/Unit" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  set -e
  local p f
  p=$(sed -n 's/^ *Passed *: *\([0-9]*\).*/\1/p' "$out" | tail -1)
  f=$(awk -F: '/^ *(Failed|Unresolved|Timed Out|Unexpectedly Passed) *:/ {s += $2} END {print s + 0}' "$out")
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
  if [ "$rc" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then failed=$((failed + 1)); fi
  echo "[$label] lit exit code $rc"
  rm -f "$out"
}

echo "== build (Release + assertions) =="
"$root/scripts/build.sh"
run_suite "$root/build" release "${shared_params[@]}"

echo "== formatting (clang-format-14, C++ sources) =="
if "$root/scripts/check-format.sh"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi

if [ "$sanitize" = 1 ]; then
  echo "== build (ASan + UBSan) =="
  "$root/scripts/build.sh" --sanitize
  run_suite "$root/build-asan" sanitize "${shared_params[@]}" \
    ${lit_params[@]+"${lit_params[@]}"}
fi

if ! grep -q "NCCL paths enabled" "$root/build.configure.log"; then
  echo "note: CUDA/NCCL not found: the NCCL runtime shim and its compile/link test were skipped"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
