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

    Example of a rejected program:

    ```mlir
    func.func @f(%a: tensor<4xf32, #dist.device<0>>,
                 %b: tensor<4xf32, #dist.device<1>>) -> tensor<4xf32, #dist.device<0>> {
      // error: 'arith.addf' op has operands and results on devices 0 and 1
      %c = arith.addf %a, %b : tensor<4xf32, #dist.device<0>>
      return %c : tensor<4xf32, #dist.device<0>>
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

#endif // DISTIR_DIALECT_DIST_TRANSFORMS_PASSES_TD
