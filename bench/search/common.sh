# Sourced by the one-configuration benches of this folder (allocator.sh,
# cli-vs-inprocess.sh): arguments [BUILD_DIR] [RUNS], a scratch directory,
# a clock and a median, and the configuration both time: the 96-layer,
# dim-32768 MLP training step (batch 2048) at D/T/P/K 1/4/4/64, GPipe, on
# dgx1-v100:nodes=2.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:-$root/build}/bin"
runs="${2:-3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cluster="dgx1-v100:nodes=2"
dtp="dp=1 tp=4 pp=4 microbatches=64 schedule=gpipe mapping=tp-inner"
now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# The sequential program, as text, in $work/mlp.mlir.
build_mlp() {
  "$bin/distir-translate" --build-mlp --layers 96 --dim 32768 --batch 2048 \
    --training -o "$work/mlp.mlir"
}
