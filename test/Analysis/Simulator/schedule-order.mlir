// Program order is the schedule (the DistIR paper's pipeline example): a
// send that the receiving device must take part in delays independent
// compute placed after it; placing the compute first lets it run while the
// sender is still busy.
//
// distir-uniform: launch 1e-5 s, 9e11 B/s, 1.4e13 flop/s, 3.125e9 B/s links.
// Each 256x256 f32 elementwise add (distir-compat): 1e-5 + 2*262144/9e11 +
// 65536/1.4e13 = 1.0587223e-05 s. The send of 262144 bytes:
// 262144/3.125e9 = 8.388608e-05 s.
//
// RUN: distir-sim %s --entry send_first --cluster distir-uniform --cost-model distir-compat | FileCheck %s --check-prefix=SEND-FIRST
// RUN: distir-sim %s --entry compute_first --cluster distir-uniform --cost-model distir-compat | FileCheck %s --check-prefix=COMPUTE-FIRST
// RUN: distir-sim %s --entry send_first --cluster distir-uniform --cost-model distir-compat --format json | FileCheck %s --check-prefix=JSON

!t0 = tensor<256x256xf32, #dist.device<0>>
!t1 = tensor<256x256xf32, #dist.device<1>>

// d0: add [0, 1.0587e-5]; send d0->d1 [1.0587e-5, 9.4473e-5];
// d1: add waits for the send: [9.4473e-5, 1.05061e-4].
// SEND-FIRST: latency: 1.050605267e-04 s
// SEND-FIRST: critical path (3 ops):
// SEND-FIRST-NEXT: 0.000000e+00   1.058722e-05  arith.addf [0]
// SEND-FIRST-NEXT: 1.058722e-05   9.447330e-05  dist.send [0, 1]
// SEND-FIRST-NEXT: 9.447330e-05   1.050605e-04  arith.addf [1]
func.func @send_first(%x: !t0, %y: !t1) -> (!t1, !t1) {
  %a = arith.addf %x, %x : !t0
  %s = dist.send %a : !t0 -> !t1
  %b = arith.addf %y, %y : !t1
  return %s, %b : !t1, !t1
}

// d1's add runs at time 0, in parallel with d0's add; the send follows.
// COMPUTE-FIRST: latency: 9.447330337e-05 s
// COMPUTE-FIRST: critical path (2 ops):
// COMPUTE-FIRST-NEXT: 0.000000e+00   1.058722e-05  arith.addf [0]
// COMPUTE-FIRST-NEXT: 1.058722e-05   9.447330e-05  dist.send [0, 1]
func.func @compute_first(%x: !t0, %y: !t1) -> (!t1, !t1) {
  %a = arith.addf %x, %x : !t0
  %b = arith.addf %y, %y : !t1
  %s = dist.send %a : !t0 -> !t1
  return %s, %b : !t1, !t1
}

// JSON: "critical_path": [
// JSON-NEXT: 0,
// JSON-NEXT: 1,
// JSON-NEXT: 2
// JSON: "op": "dist.send",
// JSON: "stream": "communication"
