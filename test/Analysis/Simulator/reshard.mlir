// The simulator prices a dist.reshard as its fastest plan (the transfers
// dist-lower-reshard would emit, alone on the cluster): rows of a 4x4 f32
// tensor on devices 0, 1 to columns on 2, 3 of one aws-p3.8xlarge host are
// four 2x2 pieces (16 bytes) over NVLink (150e9 B/s, 2 us), two rounds of
// two parallel sends: 2 x (2e-6 + 16 / 150e9) = 4.000213333e-6 s.
// RUN: distir-sim %s --cluster aws-p3.8xlarge --entry rows_to_columns | FileCheck %s
// RUN: not distir-sim %s --cluster distir-uniform:devices=2 --entry rows_to_columns 2>&1 | FileCheck %s --check-prefix=OUTSIDE
// CHECK: latency: 4.000213333e-06 s
// OUTSIDE: error: device 2 is outside cluster 'distir-uniform:devices=2' of 2 devices

!r0 = tensor<2x4xf32, #dist.device<0>>
!r1 = tensor<2x4xf32, #dist.device<1>>
!c2 = tensor<4x2xf32, #dist.device<2>>
!c3 = tensor<4x2xf32, #dist.device<3>>
func.func @rows_to_columns(%a: !r0, %b: !r1) -> (!c2, !c3) {
  %r:2 = dist.reshard %a, %b shape [4, 4]
      from <mesh = <shape = [2]>, split = [[0]]>
      to <mesh = <shape = [2], devices = [2, 3]>, split = [[], [0]]>
      : !r0, !r1 -> !c2, !c3
  return %r#0, %r#1 : !c2, !c3
}
