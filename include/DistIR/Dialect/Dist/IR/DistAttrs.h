//===- DistAttrs.h - dist dialect attributes --------------------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_DIALECT_DIST_IR_DISTATTRS_H
#define DISTIR_DIALECT_DIST_IR_DISTATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"

#include "DistIR/Dialect/Dist/IR/DistEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "DistIR/Dialect/Dist/IR/DistAttrs.h.inc"

namespace distir::dist {

/// The device a value lives on, or null if its type carries no
/// `#dist.device` encoding.
DeviceAttr getDevice(mlir::Type type);
inline DeviceAttr getDevice(mlir::Value value) {
  return getDevice(value.getType());
}

/// `type` placed on `device` (replacing any existing encoding).
mlir::RankedTensorType withDevice(mlir::RankedTensorType type, int64_t device);

} // namespace distir::dist

#endif // DISTIR_DIALECT_DIST_IR_DISTATTRS_H
