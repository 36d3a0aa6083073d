//===- DistDialect.h - The dist dialect -------------------------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_DIALECT_DIST_IR_DISTDIALECT_H
#define DISTIR_DIALECT_DIST_IR_DISTDIALECT_H

#include "mlir/IR/Dialect.h"

#include "DistIR/Dialect/Dist/IR/DistDialect.h.inc"

#endif // DISTIR_DIALECT_DIST_IR_DISTDIALECT_H
