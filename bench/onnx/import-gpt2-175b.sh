#!/bin/sh
# Time and peak memory of importing the GPT-2 175B architecture-only model
# (issue 3 item 5: under 10 s and 2 GB). Usage, from the source root:
#   bench/onnx/import-gpt2-175b.sh [build-dir] [batch] [seq]
# Writes the model and the IR under $TMPDIR (default /tmp) and prints the
# /usr/bin/time -v figures of the import and of a placement check.
set -eu
BUILD=${1:-build}
BATCH=${2:-1}
SEQ=${3:-2048}
TMP=${TMPDIR:-/tmp}/distir-bench-onnx
mkdir -p "$TMP"
MODEL=$TMP/gpt2-175b.onnx
if [ ! -f "$MODEL" ]; then
  /usr/bin/time -f "export: %e s wall, %M KB peak RSS" \
    /usr/bin/python3 python/distir/models/gpt2.py --preset gpt2-175b \
    --arch-only -o "$MODEL" 2>&1 | grep -E "^(wrote|export)"
fi
ls -l "$MODEL" | awk '{print "model: " $5 " bytes"}'
/usr/bin/time -v "$BUILD/bin/distir-translate" --import-onnx "$MODEL" \
  --input-shape "input_ids=$BATCH,$SEQ" -o "$TMP/gpt2-175b.mlir" 2> "$TMP/time.txt"
grep -E "Elapsed|Maximum resident" "$TMP/time.txt" | sed 's/^\s*/import: /'
ls -l "$TMP/gpt2-175b.mlir" | awk '{print "IR: " $5 " bytes"}'
printf 'ops: '; grep -c ' = ' "$TMP/gpt2-175b.mlir"
/usr/bin/time -f "verify-placement: %e s wall, %M KB peak RSS" \
  "$BUILD/bin/distir-opt" --dist-verify-placement "$TMP/gpt2-175b.mlir" -o /dev/null
