//===- Pipelines.cpp - From global dist programs to LLVM ------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Conversion/Pipelines.h"
#include "DistIR/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace {
/// Replaces aggregated linalg ops (linalg.softmax) by the generic ops they
/// are made of: convert-linalg-to-loops only handles structured ops.
/// Upstream offers this decomposition only as a transform-dialect op.
struct DecomposeAggregatedOpsPass
    : public PassWrapper<DecomposeAggregatedOpsPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(DecomposeAggregatedOpsPass)
  StringRef getArgument() const final {
    return "distir-decompose-aggregated-linalg";
  }
  StringRef getDescription() const final {
    return "Decompose aggregated linalg ops (softmax) into generic ops";
  }
  void getDependentDialects(DialectRegistry &registry) const final {
    registry.insert<arith::ArithDialect, linalg::LinalgDialect,
                    math::MathDialect, tensor::TensorDialect>();
  }
  void runOnOperation() final {
    SmallVector<linalg::AggregatedOpInterface> ops;
    getOperation()->walk(
        [&](linalg::AggregatedOpInterface op) { ops.push_back(op); });
    for (linalg::AggregatedOpInterface op : ops) {
      OpBuilder b(op);
      FailureOr<SmallVector<Value>> values = op.decomposeOperation(b);
      if (failed(values)) {
        op->emitOpError("cannot be decomposed into structured ops");
        return signalPassFailure();
      }
      op->replaceAllUsesWith(*values);
      op->erase();
    }
  }
};
} // namespace

void distir::buildDistToLLVMPipeline(OpPassManager &pm,
                                     const DistToLLVMPipelineOptions &options) {
  if (options.project)
    pm.addPass(createDistToRankPass());
  ConvertDistToMPIPassOptions mpi;
  mpi.implementation = options.mpiImplementation;
  pm.addPass(createConvertDistToMPIPass(mpi));
  buildRankToLLVMPipeline(pm, options);
}

void distir::buildRankToLLVMPipeline(OpPassManager &pm,
                                     const DistToLLVMPipelineOptions &options) {
  // Identity layouts at function boundaries keep the C interface of the
  // entry point simple (contiguous buffers); one-shot inserts copies where
  // slices are passed.
  // Elementwise arith/math ops on whole tensors (dist-dtp's gradient
  // accumulation, for instance) have no bufferization: make them linalg.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addNestedPass<func::FuncOp>(
      std::make_unique<DecomposeAggregatedOpsPass>());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createSCFToControlFlowPass());
  // Math ops without an LLVM intrinsic (math.erf in GELU) call libm.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertToLLVMPass());
  if (options.mpiImplementation.getValue() == "OpenMPI")
    pm.addPass(createDistFixOpenMPISymbolsPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void distir::registerDistConversionPassesAndPipelines() {
  registerDistConversionPasses();
  PassRegistration<DecomposeAggregatedOpsPass>();
  PassPipelineRegistration<DistToLLVMPipelineOptions>(
      "dist-lower-to-llvm",
      "Lower a global dist program to per-rank LLVM dialect code with MPI "
      "communication (see docs/design/lowering.md)",
      buildDistToLLVMPipeline);
}
