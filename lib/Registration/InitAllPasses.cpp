//===- InitAllPasses.cpp - Register DistIR's passes
//-------------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/InitAllPasses.h"
#include "DistIR/Conversion/Pipelines.h"
#include "DistIR/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

void distir::registerDistPasses() {
  static bool initOnce = [] {
    dist::registerDistPasses();
    registerDistConversionPassesAndPipelines();
    return true;
  }();
  (void)initOnce;
}

void distir::registerAllPasses() {
  static bool initOnce = [] {
    registerDistPasses();
    mlir::registerTransformsPasses();
    mlir::registerConversionPasses();
    mlir::arith::registerArithPasses();
    mlir::bufferization::registerBufferizationPasses();
    mlir::func::registerFuncPasses();
    mlir::registerLinalgPasses();
    mlir::LLVM::registerLLVMPasses();
    mlir::math::registerMathPasses();
    mlir::registerSCFPasses();
    mlir::shard::registerShardPasses();
    mlir::tensor::registerTensorPasses();
    return true;
  }();
  (void)initOnce;
}
