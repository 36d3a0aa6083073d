// RUN: distir-opt %s | distir-opt | FileCheck %s
// RUN: distir-opt %s --mlir-print-op-generic | distir-opt | FileCheck %s
// RUN: distir-opt %s --verify-roundtrip > /dev/null

// #dist.mesh and #dist.sharding round-trip on arguments, results and ops;
// default-valued parameters (name, devices, partial, reduction, offsets,
// groups) are
// elided when printed.

// CHECK-LABEL: func.func @annotated
// CHECK-SAME: dist.sharding = #dist.sharding<mesh = <shape = [2, 4]>, split = {{\[}}[0], [1]]>
// CHECK-SAME: dist.sharding = #dist.sharding<mesh = <name = "stage1", shape = [4], devices = [4, 5, 6, 7]>, split = {{\[}}[0]], offsets = [0, 3, 6, 8, 10]>
// CHECK-SAME: dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = {{\[}}[], [0]], groups = [1, 3]>
// CHECK-SAME: dist.sharding = #dist.sharding<mesh = <shape = [2, 4]>, split = [], partial = [1], reduction = max>
func.func @annotated(
    %a: tensor<8x10xf32> {dist.sharding = #dist.sharding<mesh = #dist.mesh<shape = [2, 4]>, split = [[0], [1]]>},
    %b: tensor<10xf32> {dist.sharding = #dist.sharding<mesh = <name = "stage1", shape = [4], devices = [4, 5, 6, 7]>, split = [[0]], offsets = [0, 3, 6, 8, 10]>},
    // Strided: each of 3 groups of 4 columns split over 2 positions.
    %c: tensor<4x12xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[], [0]], groups = [1, 3]>})
    -> (tensor<8x10xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2, 4]>, split = [], partial = [1], reduction = max>}) {
  // CHECK: arith.addf {{.*}}dist.sharding = #dist.sharding<mesh = <shape = [2, 4]>, split = {{\[}}[], [0, 1]]>
  %0 = arith.addf %a, %a {dist.sharding = #dist.sharding<mesh = <shape = [2, 4]>, split = [[], [0, 1]]>} : tensor<8x10xf32>
  // A multi-result op carries one sharding per result.
  // CHECK: linalg.generic
  // CHECK-SAME: dist.sharding = [#dist.sharding<mesh = <shape = [2]>, split = {{\[}}[0]]>, #dist.sharding<mesh = <shape = [2]>, split = []>]
  %init = tensor.empty() : tensor<8xf32>
  %1:2 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                         iterator_types = ["parallel"]}
      ins(%init : tensor<8xf32>) outs(%init, %init : tensor<8xf32>, tensor<8xf32>)
      attrs = {dist.sharding = [#dist.sharding<mesh = <shape = [2]>, split = [[0]]>, #dist.sharding<mesh = <shape = [2]>, split = []>]} {
  ^bb0(%x: f32, %y: f32, %z: f32):
    linalg.yield %x, %x : f32, f32
  } -> (tensor<8xf32>, tensor<8xf32>)
  // CHECK: partial = [0], reduction = avg
  %2 = arith.addf %0, %0 {dist.sharding = #dist.sharding<mesh = <shape = [3]>, split = [], partial = [0], reduction = avg>} : tensor<8x10xf32>
  return %2 : tensor<8x10xf32>
}

// A bufferized program keeps its annotations on the buffers.
// CHECK-LABEL: func.func private @buffers
// CHECK-SAME: memref<8x4xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = {{\[\[}}0]]>}
func.func private @buffers(memref<8x4xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[0]]>})
