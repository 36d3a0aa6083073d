// The program search of dist-synthesize-reductions is exponential in
// max-size: a group of 256 devices in four levels stops at the synthesis work
// budget (docs/design/limits.md) with one error instead of running for most
// of a minute; max-size=2 fits and replaces nothing it cannot beat.
// Not in the sanitizer build: each candidate copies the 2 MB chunk state of
// 256 devices, which ASan makes 100x slower (the same search runs there on
// small groups in synthesize-reductions*.mlir and Synthesis/).
// UNSUPPORTED: sanitize
// RUN: %python %S/Inputs/all_reduce_group.py 256 > %t.mlir
// RUN: not distir-opt %t.mlir --dist-synthesize-reductions="cluster=%S/Inputs/four-levels-256.json max-size=5" 2>&1 | FileCheck %s --check-prefix=WORK
// RUN: distir-opt %t.mlir --dist-synthesize-reductions="cluster=%S/Inputs/four-levels-256.json max-size=2 verbose=1" --dist-verify-placement -o /dev/null 2>&1 | FileCheck %s --check-prefix=FITS

// WORK: error: 'dist.all_reduce' op synthesizing every program of up to 5 instructions for this group of 256 devices would take more than 67108864 work units (docs/design/limits.md); lower max-size
// WORK-NOT: error:

// FITS: remark: replaced by AllReduce(a, InsideGroup) ; AllReduce(a, Parallel(root))
// FITS-NOT: error:
