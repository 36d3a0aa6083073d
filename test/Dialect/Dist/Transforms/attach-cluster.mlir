// Every preset resolves, with and without options, and is attached as a
// verified #dist.cluster that round-trips.
// RUN: distir-opt %s --dist-attach-cluster=cluster=aws-p3.8xlarge --verify-roundtrip | FileCheck %s --check-prefix=AWS
// RUN: distir-opt %s --dist-attach-cluster=cluster=dgx-a100:nodes=3 --verify-roundtrip | FileCheck %s --check-prefix=A100
// RUN: distir-opt %s --dist-attach-cluster=cluster=dgx-h100:nodes=4 --verify-roundtrip | FileCheck %s --check-prefix=H100
// RUN: distir-opt %s --dist-attach-cluster=cluster=dgx1-v100 --verify-roundtrip | FileCheck %s --check-prefix=DGX1
// RUN: distir-opt %s --dist-attach-cluster=cluster=dgx2-v100x16:nodes=2 --verify-roundtrip | FileCheck %s --check-prefix=DGX2
// RUN: distir-opt %s '--dist-attach-cluster=cluster="distir-uniform:nodes=2,devices=8"' --verify-roundtrip | FileCheck %s --check-prefix=UNIFORM
// RUN: distir-opt %s --dist-attach-cluster=cluster=gcp-a100x16:nodes=2 --verify-roundtrip | FileCheck %s --check-prefix=GCPA
// RUN: distir-opt %s --dist-attach-cluster=cluster=gcp-v100x8 --verify-roundtrip | FileCheck %s --check-prefix=GCPV
// A JSON file works the same way, and a later attach replaces the cluster.
// RUN: distir-opt %s --dist-attach-cluster=cluster=dgx1-v100 --dist-attach-cluster=cluster=%S/../../../Cluster/Inputs/dgx-h100x2.json | FileCheck %s --check-prefix=JSON

// AWS: dist.cluster = #dist.cluster<name = "aws-p3.8xlarge", levels = [#dist.level<name = "node", size = 1, bandwidth = 1.250000e+09, latency = 2.500000e-05, shared_by = 4>, #dist.level<name = "gpu", size = 4,
// A100: name = "dgx-a100:nodes=3", levels = [#dist.level<name = "node", size = 3, bandwidth = 2.500000e+10, {{.*}}#dist.level<name = "gpu", size = 8, bandwidth = 3.000000e+11
// A100-SAME: bf16 = 3.120000e+14 : f64
// A100-SAME: memory_capacity = 85899345920
// H100: name = "dgx-h100:nodes=4", levels = [#dist.level<name = "node", size = 4, bandwidth = 5.000000e+10
// H100-SAME: memory_bandwidth = 3.350000e+12
// DGX1: name = "dgx1-v100", levels = [#dist.level<name = "node", size = 1, bandwidth = 1.250000e+10, latency = 5.000000e-06, shared_by = 2>, #dist.level<name = "gpu", size = 8, bandwidth = 1.500000e+11
// DGX2: name = "dgx2-v100x16:nodes=2", levels = [#dist.level<name = "node", size = 2, {{.*}}#dist.level<name = "gpu", size = 16,
// UNIFORM: name = "distir-uniform:nodes=2,devices=8", levels = [#dist.level<name = "node", size = 2, bandwidth = 3.125000e+09, latency = 0.000000e+00>, #dist.level<name = "device", size = 8, bandwidth = 3.125000e+09, latency = 0.000000e+00>]
// UNIFORM-SAME: peak_flops = {bf16 = 1.400000e+13 : f64, f16 = 1.400000e+13 : f64, f32 = 1.400000e+13 : f64}, memory_bandwidth = 9.000000e+11, memory_capacity = 17179869184, launch_overhead = 1.000000e-05
// GCPA: name = "gcp-a100x16:nodes=2", levels = [#dist.level<name = "node", size = 2, bandwidth = 7.500000e+09, latency = 2.500000e-05, shared_by = 16>, #dist.level<name = "gpu", size = 16, bandwidth = 2.700000e+11
// GCPV: levels = [#dist.level<name = "node", size = 1, bandwidth = 7.500000e+09, latency = 2.500000e-05, shared_by = 8>, #dist.level<name = "cpu", size = 2, bandwidth = 3.200000e+10, latency = 3.000000e-06>, #dist.level<name = "gpu", size = 4, bandwidth = 1.350000e+11
// JSON: name = "dgx-h100x2", levels = [#dist.level<name = "node", size = 2,
// JSON-NOT: dgx1-v100
module {
}
