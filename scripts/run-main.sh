#!/usr/bin/env bash
# README command 1: installs dependencies, builds, and runs the main job on
# built-in defaults. Today the main job takes the bundled data-parallel
# training step (examples/mlp-data-parallel.mlir), attaches a preset cluster,
# checks placement before and after canonicalization, and writes the program
# and the cluster description to out/. (Import of the bundled GPT-2, the
# strategy search, per-rank programs and traces join as they land.)
#   scripts/run-main.sh [--cluster NAME|file.json] [--out DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cluster="dgx-h100:nodes=2"
out="$root/out"
while [ $# -gt 0 ]; do
  case "$1" in
    --cluster) cluster="$2"; shift ;;
    --out) out="$2"; shift ;;
    *) echo "run-main: unknown argument '$1' (expected --cluster or --out)" >&2; exit 2 ;;
  esac
  shift
done

"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"

bin="$root/build/bin"
mkdir -p "$out"
program="$root/examples/mlp-data-parallel.mlir"
echo "== main job: $program on cluster '$cluster' =="
"$bin/distir-opt" "$program" \
  "--dist-attach-cluster=cluster=\"$cluster\"" \
  --dist-verify-placement --canonicalize --cse --dist-verify-placement \
  -o "$out/program.mlir"
"$bin/distir-translate" --export-cluster-json "$out/program.mlir" \
  -o "$out/cluster.json"
echo "placement verified; program written to $out/program.mlir"
echo "cluster written to $out/cluster.json:"
grep -E '"name"|"size"|"bandwidth"' "$out/cluster.json" | sed 's/^/  /'
echo "communication ops in the program:"
grep -oE 'dist\.[a-z_]+' "$out/program.mlir" | grep -v 'dist\.\(cluster\|device\|level\)' | sort | uniq -c | sed 's/^/  /'
