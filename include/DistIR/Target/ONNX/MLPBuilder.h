//===- MLPBuilder.h - MLP training programs ---------------------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_TARGET_ONNX_MLPBUILDER_H
#define DISTIR_TARGET_ONNX_MLPBUILDER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <string>

namespace distir {

/// Options of the MLP program builder (DistIR paper's MLP benchmark).
struct MLPOptions {
  int64_t layers = 4;
  int64_t dim = 64;
  int64_t batch = 16;
  /// Element type: "f32", "f16" or "bf16".
  std::string dtype = "f32";
  /// Also emit loss, backward pass and SGD update.
  bool training = false;
  int64_t device = 0;
};

/// Builds `func.func @mlp`: per layer a matmul with a [dim, dim] weight and a
/// ReLU; with `training`, a mean-squared-error loss against a label input,
/// the backward pass (ReLU and matmul gradients) and an SGD update of every
/// weight, returned as the new weights. Emits a diagnostic at `loc` and
/// returns null on invalid options.
mlir::OwningOpRef<mlir::ModuleOp> buildMLP(const MLPOptions &options,
                                           mlir::Location loc);

/// The degrees of the published DistIR's hybrid parallelisation of its MLP
/// (data, horizontal = tensor, pipeline) and its microbatch count.
struct DistIRParallelism {
  int64_t dp = 1, hp = 1, pp = 1, microbatches = 1;
};

/// Builds the training step that the published DistIR's MLP transform
/// (mlp_dhp_transform + its optimizer ops) produces, as a dist program on
/// devices 0 .. dp*hp*pp-1, for `--cost-model distir-compat`: DistIR's op
/// structure (MatMul, ReLU, Loss, LossGrad, ReluGrad, MatMulGrad as two
/// matmuls, one SGD update per weight), its Megatron weight split, its
/// PipeDream order with stage transfers at the end of each time step, its
/// microbatch aggregation (a copy of microbatch 0, then Add or Concat) and
/// its all-reduces and all-gathers. The arguments are the inputs of DistIR's
/// simulated function (its init function's results): microbatches, the
/// sample count `n` and weight shards, already on their devices. See
/// docs/design/reference-facts.md. Emits a diagnostic at `loc` and returns
/// null on invalid options.
mlir::OwningOpRef<mlir::ModuleOp>
buildDistIRMLP(const MLPOptions &options, const DistIRParallelism &parallelism,
               mlir::Location loc);

/// Registers `--build-mlp` with mlir-translate.
void registerMLPBuilderTranslation();

} // namespace distir

#endif // DISTIR_TARGET_ONNX_MLPBUILDER_H
