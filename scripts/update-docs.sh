#!/usr/bin/env bash
# Regenerates the reference pages from ODS and copies them into docs/.
# test/docs/generated-docs.test fails when the committed copies are stale.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
ninja -C "$build" distir-doc
pages="Dialects/Dist.md Dialects/DistRank.md Passes/DistPasses.md Passes/DistConversionPasses.md"
for f in $pages; do
  mkdir -p "$root/docs/$(dirname "$f")"
  cp "$build/docs/$f" "$root/docs/$f"
done
echo "updated $pages"
