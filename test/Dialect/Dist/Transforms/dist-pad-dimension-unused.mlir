// An argument nothing reads is padded and left unread (the ONNX Shape,
// Size and CastLike node tests have such inputs: they crashed the pass).
// RUN: distir-opt %s --dist-pad-dimension="arg=a dim=0 size=8" | FileCheck %s

// CHECK-LABEL: func.func @unused
// CHECK: tensor.pad %arg0 low[0] high[3]
// CHECK: return %arg1
func.func @unused(%a: tensor<5xf32> {dist.name = "a"}, %b: tensor<2xf32>) -> tensor<2xf32> {
  return %b : tensor<2xf32>
}
