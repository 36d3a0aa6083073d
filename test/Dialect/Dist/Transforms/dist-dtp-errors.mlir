// RUN: not distir-opt %s --dist-dtp=pp=2 2>&1 | FileCheck %s --check-prefix=PP --implicit-check-not=note:
// RUN: not distir-opt %s --dist-dtp=microbatches=3 2>&1 | FileCheck %s --check-prefix=MB
// A huge microbatch count is refused before anything is built per microbatch
// (it used to allocate gigabytes first), and dp * microbatches may overflow.
// RUN: not distir-opt %s --dist-dtp=microbatches=1000000000 2>&1 | FileCheck %s --check-prefix=MBHUGE
// RUN: not distir-opt %s "--dist-dtp=dp=2 microbatches=4611686018427387904" 2>&1 | FileCheck %s --check-prefix=MBOVERFLOW
// RUN: not distir-opt %s --dist-dtp=schedule=zigzag 2>&1 | FileCheck %s --check-prefix=SCHED
// RUN: not distir-opt %S/Inputs/dtp-partly-tagged.mlir '--dist-dtp=pp=2' 2>&1 | FileCheck %s --check-prefix=UNTAGGED
// RUN: not distir-opt %S/Inputs/dtp-batch-behind.mlir --dist-dtp=tp=2 2>&1 | FileCheck %s --check-prefix=NOSPLIT
// RUN: not distir-opt %S/Inputs/dtp-no-weights.mlir --dist-dtp=tp=2 2>&1 | FileCheck %s --check-prefix=NOWEIGHTS
// One stage: untagged ops run in each microbatch's forward.
// RUN: distir-opt %S/Inputs/dtp-untagged.mlir '--dist-dtp=dp=2 microbatches=2' -o /dev/null
// RUN: not distir-opt %s --dist-dtp=dp=0 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not distir-opt %s --dist-dtp=mapping=diagonal 2>&1 | FileCheck %s --check-prefix=MAP
// RUN: not distir-opt %s "--dist-dtp=dp=2 tp=2 mapping=tp:2,dp:4" 2>&1 | FileCheck %s --check-prefix=MAPPRODUCT
// RUN: not distir-opt %s "--dist-dtp=dp=2 mapping=tp:0,dp:2" 2>&1 | FileCheck %s --check-prefix=MAPFACTOR
// RUN: not distir-opt %s --dist-dtp=dp=3 2>&1 | FileCheck %s --check-prefix=BATCH
// RUN: not distir-opt %s --dist-dtp=tp=3 2>&1 | FileCheck %s --check-prefix=TP
// RUN: not distir-opt %s --dist-dtp=entry=nope 2>&1 | FileCheck %s --check-prefix=ENTRY
// RUN: not distir-opt %S/Inputs/dtp-no-batch.mlir --dist-dtp=dp=2 2>&1 | FileCheck %s --check-prefix=NOBATCH --implicit-check-not=note:
// RUN: not distir-opt %S/Inputs/dtp-two-devices.mlir --dist-dtp=dp=2 2>&1 | FileCheck %s --check-prefix=DEVICES
// RUN: not distir-opt %S/Inputs/dtp-two-funcs.mlir --dist-dtp=dp=2 2>&1 | FileCheck %s --check-prefix=FUNCS
// RUN: not distir-opt %s "--dist-dtp=dp=2 devices=4" 2>&1 | FileCheck %s --check-prefix=NDEV
// RUN: not distir-opt %s "--dist-dtp=dp=2 devices=-1" 2>&1 | FileCheck %s --check-prefix=NEGDEV
// RUN: not distir-opt %s --dist-attach-cluster=cluster=dgx-h100 "--dist-dtp=dp=4 tp=4" 2>&1 | FileCheck %s --check-prefix=CLUSTER
// RUN: distir-opt %s --dist-attach-cluster=cluster=dgx-h100 "--dist-dtp=dp=4 devices=4" -o /dev/null

// PP: error: pp=2 exceeds the 1 layers of the program
// MB: error: dp * microbatches = 3 does not divide the batch dimension (4) of argument #0
// MBHUGE: error: dp * microbatches = 1000000000 does not divide the batch dimension (4) of argument #0
// MBOVERFLOW: error: dist-dtp: dp=2, tp=1, pp=1, microbatches=4611686018427387904: the product of the degrees overflows int64
// SCHED: for the --schedule option: Cannot find option named 'zigzag'!
// UNTAGGED: error: 'linalg.matmul' op pipeline parallelism and microbatching need ops tagged with dist.layer and dist.phase (programs from --build-mlp carry them)
// NOSPLIT: dtp-batch-behind.mlir:8:1: error: tp=2 splits no weight of this program (first projection: replicated: argument #1 is not split: a column split would not be faster ({{.*}} against {{.*}} replicated, priced on 'dgx-h100': no dist.cluster)); run with report=true for every decision
// NOWEIGHTS: dtp-no-weights.mlir:4:1: error: tp=2 splits no weight of this program: no op reads a weight argument (a floating-point argument without dist.batch_dim)
// ZERO: error: dist-dtp degrees must be >= 1 (dp=0, tp=1, pp=1, microbatches=1)
// MAP: error: dist-dtp: bad mapping 'diagonal' (expected tp-inner, dp-inner or AXIS:FACTOR,... with AXIS in dp, tp, pp, least significant first)
// MAPPRODUCT: error: dist-dtp: mapping 'tp:2,dp:4' has dp, tp, pp = 4, 2, 1; the degrees are 2, 2, 1
// MAPFACTOR: error: dist-dtp: bad mapping 'tp:0,dp:2'
// BATCH: error: dp=3 does not divide the batch dimension (4) of argument #0
// TP: error: tp=3 does not divide dimension 1 (8) of weight argument #1
// ENTRY: error: dist-dtp: no function @nope with a body
// NOBATCH: error: data parallelism and microbatching need the batch inputs marked with a dist.batch_dim argument attribute
// DEVICES: error: 'dist.send' op dist-dtp expects a program on one device, found devices 0 and 1
// FUNCS: error: dist-dtp: several public functions (@{{.*}}); choose one with entry=NAME
// NDEV: error: dist-dtp: dp*tp*pp = 2 differs from the 4 devices given (devices=4)
// NEGDEV: error: dist-dtp: devices=-1 is negative
// CLUSTER: error: dist-dtp: dp*tp*pp = 16 exceeds the 8 devices of the attached cluster 'dgx-h100'

!x = tensor<4x8xf32, #dist.device<0>>
!w = tensor<8x8xf32, #dist.device<0>>
func.func @mlp(%x: !x {dist.batch_dim = 0 : i64}, %w0: !w {dist.layer = 0 : i64}) -> !x {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !x
  %z = linalg.fill ins(%zero : f32) outs(%e : !x) -> !x
  %h = linalg.matmul ins(%x, %w0 : !x, !w) outs(%z : !x) -> !x
  return %h : !x
}
