#!/usr/bin/env bash
# The tools' allocator (DISTIR_TCMALLOC) against the C library's malloc, same
# binaries, same session. The baseline preloads libc and libstdc++, which puts
# their malloc/free and operator new/delete ahead of tcmalloc's in the
# dynamic linker's search order (check: LD_DEBUG=bindings). Runs:
#   search: the main job's search (scripts/run-main.sh: GPT-2 1.6B training,
#           batch 64, 16 devices of dgx-h100:nodes=2, --fast), one worker
#   dtp:    distir-opt --dist-dtp on the 96-layer MLP at D/T/P/K 1/4/4/64
#           (bytecode out)
#   sim:    distir-sim on that program
#   bench/search/allocator.sh [BUILD_DIR] [RUNS]
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
if [ "$(readelf -d "$bin/distir-search" | grep -c tcmalloc)" -eq 0 ]; then
  echo "allocator: $bin/distir-search does not link tcmalloc (DISTIR_TCMALLOC=OFF or not installed)" >&2
  exit 1
fi
libdir="$(dirname "$(ldd "$bin/distir-search" | awk '/libc\.so/ {print $3}')")"
glibc="$libdir/libc.so.6:$libdir/libstdc++.so.6"

/usr/bin/python3 "$root/python/distir/models/gpt2.py" --preset gpt2-1.6b \
  --vocab 50304 --arch-only -o "$work/gpt2.onnx" > /dev/null 2>&1
build_mlp

run_case() {
  case "$1" in
    search)
      "$bin/distir-search" --model "$work/gpt2.onnx" --input-shape input_ids=64,1024 \
        --batch 64 --training --loss cross-entropy --optimizer adam --dtype bf16 \
        --cluster dgx-h100:nodes=2 --devices 16 --max-microbatches 2 --top 5 \
        --jobs 1 --no-progress --fast > /dev/null ;;
    dtp)
      "$bin/distir-opt" "$work/mlp.mlir" --dist-dtp="$dtp" --emit-bytecode -o "$work/step.bc" ;;
    sim)
      "$bin/distir-sim" "$work/step.bc" --entry mlp_dtp --cluster "$cluster" \
        --no-memory-plan > /dev/null ;;
  esac
}

for case in search dtp sim; do
  for r in $(seq "$runs"); do
    for alloc in tcmalloc glibc; do
      start=$(now)
      if [ "$alloc" = glibc ]; then LD_PRELOAD="$glibc" run_case "$case"; else run_case "$case"; fi
      echo "$alloc $(echo "$(now) - $start" | bc)"
    done
  done > "$work/$case.times"
  t=$(awk '$1 == "tcmalloc" {print $2}' "$work/$case.times" | median)
  g=$(awk '$1 == "glibc" {print $2}' "$work/$case.times" | median)
  echo "$case: tcmalloc $t s, glibc malloc $g s (medians of $runs, alternating): glibc / tcmalloc $(echo "scale=2; $g / $t" | bc)x"
done
