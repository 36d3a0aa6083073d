// RUN: distir-opt %s | distir-opt | FileCheck %s
// RUN: distir-opt %s --mlir-print-op-generic | distir-opt | FileCheck %s
// RUN: distir-opt %s --verify-roundtrip > /dev/null

// Every dist attribute round-trips in custom and generic form, standalone
// and nested.

// CHECK: module attributes {
// CHECK-SAME: dist.cluster = #dist.cluster<name = "two-gpus", levels = [#dist.level<name = "node", size = 1, bandwidth = 1.000000e+10, latency = 0.000000e+00>, #dist.level<name = "gpu", size = 2, bandwidth = 1.000000e+11, latency = 9.9999999999999995E-7, shared_by = 2>], device = <peak_flops = {bf16 = 2.000000e+14 : f64, f32 = 1.000000e+13 : f64}, memory_bandwidth = 1.000000e+12, memory_capacity = 1073741824, launch_overhead = 1.000000e-05>>
// CHECK-SAME: test.device = #dist.device<7>
// CHECK-SAME: test.level = #dist.level<name = "rack", size = 4, bandwidth = 1.250000e+09, latency = 2.500000e-05, shared_by = 16>
// CHECK-SAME: test.reduction = #dist.reduction<max>
// CHECK-SAME: test.spec = #dist.device_spec<peak_flops = {f16 = 1.250000e+14 : f64}, memory_bandwidth = 9.000000e+11, memory_capacity = 34359738368, launch_overhead = 0.000000e+00>
module attributes {
  dist.cluster = #dist.cluster<name = "two-gpus",
      levels = [#dist.level<name = "node", size = 1, bandwidth = 1.0e10, latency = 0.0>,
                #dist.level<name = "gpu", size = 2, bandwidth = 1.0e11, latency = 1.0e-6, shared_by = 2>],
      device = #dist.device_spec<peak_flops = {f32 = 1.0e13 : f64, bf16 = 2.0e14 : f64},
                                 memory_bandwidth = 1.0e12, memory_capacity = 1073741824,
                                 launch_overhead = 1.0e-5>>,
  test.device = #dist.device<7>,
  test.reduction = #dist.reduction<max>,
  test.level = #dist.level<name = "rack", size = 4, bandwidth = 1.25e9, latency = 2.5e-5, shared_by = 16>,
  test.spec = #dist.device_spec<peak_flops = {f16 = 1.25e14 : f64}, memory_bandwidth = 9.0e11,
                                memory_capacity = 34359738368, launch_overhead = 0.0>
} {
  // Full precision survives printing: 0.1 and 1/3 are not representable
  // with 6 digits.
  // CHECK: test.precise = #dist.level<name = "odd", size = 3, bandwidth = 1.000000e-01, latency = 0.33333333333333331>
  func.func private @f() attributes {
    test.precise = #dist.level<name = "odd", size = 3, bandwidth = 0.1, latency = 0.33333333333333331>
  }
}
