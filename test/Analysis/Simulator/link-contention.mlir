// --link-contention: transfers through one shared link (aws-p3.8xlarge: one
// 10 Gbit/s NIC, 1.25e9 B/s and 25 us, behind 4 GPUs) wait for each other;
// each direction of a NIC is its own link, and a device's own links (NVLink,
// or one NIC per GPU on dgx-h100) are its communication stream already.
// One 1 MiB send across hosts: 25e-6 + 1048576 / 1.25e9 = 8.638608e-4 s.
// RUN: distir-sim %s --entry two_out --cluster aws-p3.8xlarge:nodes=2 --overlap | FileCheck %s --check-prefix=FREE
// RUN: distir-sim %s --entry two_out --cluster aws-p3.8xlarge:nodes=2 --overlap --link-contention | FileCheck %s --check-prefix=QUEUED
// RUN: distir-sim %s --entry both_ways --cluster aws-p3.8xlarge:nodes=2 --overlap --link-contention | FileCheck %s --check-prefix=DUPLEX
// RUN: distir-sim %s --entry two_out_dgx --cluster dgx-h100:nodes=2 --overlap --link-contention | FileCheck %s --check-prefix=OWN
// RUN: distir-sim %s --entry broadcast_then_send --cluster aws-p3.8xlarge:nodes=3 --overlap --link-contention | FileCheck %s --check-prefix=CHAIN

!h0a = tensor<262144xf32, #dist.device<0>>
!h0b = tensor<262144xf32, #dist.device<1>>
!h0c = tensor<262144xf32, #dist.device<2>>
!h0d = tensor<262144xf32, #dist.device<3>>
!h1a = tensor<262144xf32, #dist.device<4>>
!h1b = tensor<262144xf32, #dist.device<5>>
!h1c = tensor<262144xf32, #dist.device<6>>
!h2a = tensor<262144xf32, #dist.device<8>>
!h2b = tensor<262144xf32, #dist.device<9>>

// Two GPUs of host 0 send to two GPUs of host 1 at once: alone on the NIC
// each takes 8.638608e-4 s; sharing it, the second waits for the first.
// FREE: latency: 8.638608000e-04 s
// QUEUED: shared links contended
// QUEUED: latency: 1.727721600e-03 s
func.func @two_out(%a: !h0a, %b: !h0b) -> (!h1a, !h1b) {
  %x = dist.send %a : !h0a -> !h1a
  %y = dist.send %b : !h0b -> !h1b
  return %x, %y : !h1a, !h1b
}

// Host 0 -> host 1 and host 1 -> host 0 at once: different directions, no
// wait; a send inside host 0 does not touch the NIC either.
// DUPLEX: latency: 8.638608000e-04 s
func.func @both_ways(%a: !h0a, %b: !h1b, %c: !h0c) -> (!h1a, !h0b, !h0d) {
  %x = dist.send %a : !h0a -> !h1a
  %y = dist.send %b : !h1b -> !h0b
  %z = dist.send %c : !h0c -> !h0d
  return %x, %y, %z : !h1a, !h0b, !h0d
}

// dgx-h100 has one NIC per GPU: the two sends run side by side (1 MiB over
// 5e10 B/s plus 5 us).
// OWN: latency: 2.597152000e-05 s
func.func @two_out_dgx(%a: !h0a, %b: !h0b) -> (!h2a, !h2b) {
  %x = dist.send %a : !h0a -> !h2a
  %y = dist.send %b : !h0b -> !h2b
  return %x, %y : !h2a, !h2b
}

// A broadcast from host 0 through host 1 to host 2 uses host 1's NIC in
// both directions (ring broadcast over 3 devices: 2 latency steps); a send
// out of host 1 started after it waits for it: 2 x 25e-6 + 8.388608e-4
// then 8.638608e-4 = 1.7527216e-3 s.
// CHAIN: latency: 1.752721600e-03 s
func.func @broadcast_then_send(%a: !h0a, %b: !h1b) -> (!h0a, !h1a, !h2a, !h0b) {
  %r:3 = dist.broadcast %a : !h0a -> !h0a, !h1a, !h2a
  %s = dist.send %b : !h1b -> !h0b
  return %r#0, %r#1, %r#2, %s : !h0a, !h1a, !h2a, !h0b
}
