//===- DistDialect.td - The dist dialect -------------------*- tablegen -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_DIALECT_DIST_IR_DISTDIALECT_TD
#define DISTIR_DIALECT_DIST_IR_DISTDIALECT_TD

include "mlir/IR/OpBase.td"

def Dist_Dialect : Dialect {
  let name = "dist";
  let cppNamespace = "::distir::dist";
  let summary = "Explicitly placed distributed programs";
  let description = [{
    The `dist` dialect describes a distributed program in its *global view*:
    one function that contains the work of every device.

    * **Placement is explicit.** Every tensor value lives on exactly one
      device, written as the encoding of its ranked tensor type:
      `tensor<64x128xf32, #dist.device<3>>`. Upstream compute ops (`linalg`,
      `tensor`, `arith`, `math`) work unchanged on such types; the
      `dist-verify-placement` pass checks that each of them keeps all its
      operands and results on one device.
    * **Only communication ops move data between devices.** `dist.send`
      copies a value to another device; the collectives (`all_reduce`,
      `all_gather`, `reduce_scatter`, `broadcast`, `reduce`, `scatter`,
      `gather`, `all_to_all`) take one operand per participating device and
      return their results on those devices.
    * **Program order is the schedule.** Ops execute in block order; each
      device runs one op at a time and an op that involves several devices
      starts when all of them are free.
    * **The cluster** the program targets can be attached to the module as
      the `dist.cluster` attribute (`#dist.cluster<...>`).
    * **Argument roles** guide the parallelizing transforms: `dist.batch_dim
      = D` marks an argument whose dimension D is the batch, `dist.layer =
      L` a weight of layer L, and `dist.name = "..."` names an argument for
      the tools (`distir-run --input NAME=...`).
    * **Result marks**: `dist.unsigned` on a function result says that its
      signless integers hold unsigned values (set by the ONNX importer for
      UINT8..UINT64 outputs; `distir-run` writes such results unsigned).
    * **Transform marks**: `dist.zero_stage = S` (1, 2 or 3) on a function
      says that `dist-zero` applied ZeRO stage S to it; `dist.gradient_buffer`
      on a `tensor.empty` marks a step-long gradient buffer of `dist-dtp`
      (the simulator's memory breakdown); `dist.receive` on a `dist.send`
      says that `dist-dtp` runs it at the start of its consumer's time step
      (with `annotate-schedule`).

    * **Shardings**: `dist.sharding = #dist.sharding<...>` on a function
      argument, a function result or an op (one per result) records how a
      plan distributes the value over a `#dist.mesh` of devices.

    Version log:
    * 0.1: device encoding, communication ops, cluster attribute, argument
      roles.
    * 0.2: `#dist.mesh` and `#dist.sharding`, result attributes verified.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Name of the module attribute that holds the target cluster.
    static constexpr ::llvm::StringLiteral getClusterAttrName() {
      return ::llvm::StringLiteral("dist.cluster");
    }
  private:
    void registerAttributes();
  public:
  }];
}

#endif // DISTIR_DIALECT_DIST_IR_DISTDIALECT_TD
