//===- Passes.td - dist dialect passes ---------------------*- tablegen -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_DIALECT_DIST_TRANSFORMS_PASSES_TD
#define DISTIR_DIALECT_DIST_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def DistVerifyPlacementPass : Pass<"dist-verify-placement", "::mlir::ModuleOp"> {
  let summary = "Check that every tensor value is placed and that only "
                "communication ops change placement";
  let description = [{
    Checks the placement rules of the `dist` dialect on a whole module:

    * every tensor value (operation results and block arguments) has a
      `#dist.device` encoding;
    * every compute op (any op outside the `dist` dialect, except terminators,
      calls and region control flow, which only forward values) has all its
      tensor operands and results on one device;
    * if the module carries a `dist.cluster`, every device id is smaller
      than the cluster's number of devices.

    The pass changes nothing; it fails with one error per offending op.

    Example of a rejected program (linalg named ops, unlike `arith` ops, do
    not force operands and results to share a type, hence a device):

    ```mlir
    // distir-opt --dist-verify-placement
    !t0 = tensor<4xf32, #dist.device<0>>
    !t1 = tensor<4xf32, #dist.device<1>>
    func.func @f(%a: !t0, %b: !t1, %init: !t0) -> !t0 {
      // expected-error @+1 {{has operand #0 on device 0 and operand #1 on device 1}}
      %c = linalg.add ins(%a, %b : !t0, !t1) outs(%init : !t0) -> !t0
      return %c : !t0
    }
    ```
  }];
  let dependentDialects = ["::distir::dist::DistDialect"];
}

def DistAttachClusterPass : Pass<"dist-attach-cluster", "::mlir::ModuleOp"> {
  let summary = "Attach a cluster description to the module";
  let description = [{
    Resolves `cluster` (a preset such as `dgx-h100`, `dgx-h100:nodes=4` or
    `distir-uniform:devices=8`, or the path of a JSON file) and attaches it
    to the module as the `dist.cluster` attribute, replacing any previous
    one. Later passes and analyses read the cluster from there.

    Presets: `aws-p3.8xlarge`, `dgx-a100`, `dgx-h100`, `dgx1-v100`,
    `dgx2-v100x16`, `distir-uniform`, `gcp-a100x16`, `gcp-v100x8`. Every
    preset takes `nodes=N`; `distir-uniform` also takes `devices=N` (devices
    per node). Quote a value that contains a comma:
    `--dist-attach-cluster='cluster="distir-uniform:nodes=2,devices=4"'`.

    Example: `distir-opt --dist-attach-cluster=cluster=dgx-h100:nodes=2 in.mlir`
  }];
  let options = [
    Option<"cluster", "cluster", "std::string", /*default=*/"\"\"",
           "Preset name (NAME[:key=value,...]) or path of a JSON cluster file">
  ];
  let dependentDialects = ["::distir::dist::DistDialect"];
}

def DistDTPPass : Pass<"dist-dtp", "::mlir::ModuleOp"> {
  let summary = "Distribute a sequential program by data, tensor and "
                "pipeline parallelism";
  let description = [{
    Rewrites a sequential program (every tensor on one device, no `dist`
    ops) into a global `dist` program on a `dp` x `tp` device grid:

    * **data parallelism** splits the batch dimension of the arguments
      marked `dist.batch_dim = D`; values reduced over the batch (weight
      gradients, the loss) are all-reduced over the data-parallel group;
    * **tensor parallelism** (Megatron) splits the weights marked
      `dist.layer = L`: even layers by columns, odd layers by rows, so that
      each column/row pair needs one all-reduce (in forward and backward).

    Every other value's layout follows from the linalg structured-op
    interface: a loop is split when an operand dimension it indexes is
    split, a split reduction loop yields partial sums that are all-reduced
    at once, operands are sliced (free) or all-gathered to match, and ops
    the pass cannot split (non-structured ops, bodies that read
    `linalg.index`) run replicated on gathered operands.

    The entry function `@f` becomes `@f_dtp`, taking and returning one local
    shard per device (the training step itself), and a new `@f` with the
    original signature that distributes the inputs from their device
    (broadcast and slice), calls `@f_dtp` and gathers the results back, so
    that the reference executor can compare it with the sequential program.
    `mapping` decides which grid axis is innermost in device ids:
    `tp-inner` (tensor-parallel groups on neighbouring devices, e.g. inside
    a node) or `dp-inner`.

    Pipeline parallelism (`pp` > 1) and microbatching (`microbatches` > 1)
    are rejected with an error: they are not implemented yet.
  }];
  let options = [
    Option<"dp", "dp", "int64_t", /*default=*/"1", "Data-parallel degree">,
    Option<"tp", "tp", "int64_t", /*default=*/"1", "Tensor-parallel degree">,
    Option<"pp", "pp", "int64_t", /*default=*/"1",
           "Pipeline-parallel degree (only 1 is supported)">,
    Option<"microbatches", "microbatches", "int64_t", /*default=*/"1",
           "Microbatches per step (only 1 is supported)">,
    Option<"mapping", "mapping", "std::string", /*default=*/"\"tp-inner\"",
           "Innermost grid axis in device ids: tp-inner or dp-inner">,
    Option<"entry", "entry", "std::string", /*default=*/"\"\"",
           "Function to distribute (default: the only public function)">
  ];
  let dependentDialects = ["::distir::dist::DistDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::func::FuncDialect"];
}

#endif // DISTIR_DIALECT_DIST_TRANSFORMS_PASSES_TD
