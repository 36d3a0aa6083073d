#!/usr/bin/env bash
# Fails if a tracked C++ file is not formatted with clang-format-14 (LLVM
# style, see .clang-format). Fix with: scripts/check-format.sh --fix
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
fmt=clang-format-14
mapfile -t files < <(git ls-files '*.cpp' '*.h' 2>/dev/null || find include lib tools unittests -name '*.cpp' -o -name '*.h')
if [ "${1:-}" = "--fix" ]; then
  $fmt -i "${files[@]}"
  exit 0
fi
bad=0
for f in "${files[@]}"; do
  if ! $fmt --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "not formatted: $f (run scripts/check-format.sh --fix)"
    bad=1
  fi
done
[ "$bad" -eq 0 ] && echo "check-format: ${#files[@]} files formatted"
exit "$bad"
