// RUN: distir-opt --dist-gpu-approximate-math --split-input-file --verify-diagnostics %s | FileCheck %s

// Transcendental functions become arithmetic; what has one PTX instruction
// becomes that instruction; nothing is left for libdevice.
// CHECK-LABEL: func.func @f(
// CHECK-NOT: math.
// CHECK: llvm.inline_asm asm_dialect = att "cvt.rmi.f32.f32 $0, $1;", "=f,f"
// CHECK: llvm.inline_asm asm_dialect = att "sqrt.rn.f64 $0, $1;", "=d,d"
// CHECK: llvm.inline_asm asm_dialect = att "abs.f32 $0, $1;", "=f,f"
// CHECK-NOT: math.
// CHECK: return
func.func @f(%x: f32, %y: f64) -> (f32, f32, f32, f64, f32, f32, f32) {
  %e = math.exp %x : f32
  %t = math.tanh %x : f32
  %r = math.erf %x : f32
  %fl = math.floor %x : f32
  %s = math.sqrt %y : f64
  %m = math.fma %x, %x, %x : f32
  %a = math.absf %x : f32
  return %e, %t, %r, %s, %fl, %m, %a : f32, f32, f32, f64, f32, f32, f32
}

// -----

func.func @unsupported(%x: f32) -> f32 {
  // expected-error @below {{device=gpu: no GPU lowering of this math op without CUDA's libdevice}}
  %c = math.copysign %x, %x : f32
  return %c : f32
}
