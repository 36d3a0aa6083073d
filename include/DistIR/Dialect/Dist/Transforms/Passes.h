//===- Passes.h - dist dialect passes ---------------------------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_DIALECT_DIST_TRANSFORMS_PASSES_H
#define DISTIR_DIALECT_DIST_TRANSFORMS_PASSES_H

#include "DistIR/Analysis/CollectiveCost.h"
#include "DistIR/Analysis/Simulator.h"
#include "DistIR/Dialect/Dist/IR/DistDialect.h"
#include "DistIR/Dialect/Dist/Transforms/PassEnums.h"
#include "DistIR/Dialect/Dist/Transforms/PipelineSchedule.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace distir::dist {

#define GEN_PASS_DECL
#include "DistIR/Dialect/Dist/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "DistIR/Dialect/Dist/Transforms/Passes.h.inc"

} // namespace distir::dist

#endif // DISTIR_DIALECT_DIST_TRANSFORMS_PASSES_H
