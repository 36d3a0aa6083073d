//===- DistOps.h - dist dialect operations ----------------------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_DIALECT_DIST_IR_DISTOPS_H
#define DISTIR_DIALECT_DIST_IR_DISTOPS_H

#include "DistIR/Dialect/Dist/IR/DistAttrs.h"
#include "DistIR/Dialect/Dist/IR/DistDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace distir::dist {
/// The resource that communication ops read and write, so that generic
/// passes (CSE, DCE, hoisting) neither merge, drop nor reorder them.
struct CommunicationResource
    : public mlir::SideEffects::Resource::Base<CommunicationResource> {
  llvm::StringRef getName() override { return "dist.communication"; }
};
} // namespace distir::dist

#define GET_OP_CLASSES
#include "DistIR/Dialect/Dist/IR/DistOps.h.inc"

#endif // DISTIR_DIALECT_DIST_IR_DISTOPS_H
