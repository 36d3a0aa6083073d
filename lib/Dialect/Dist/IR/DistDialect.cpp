//===- DistDialect.cpp - The dist dialect
//-----------------------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Dialect/Dist/IR/DistDialect.h"
#include "DistIR/Dialect/Dist/IR/DistOps.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace distir::dist;

#include "DistIR/Dialect/Dist/IR/DistDialect.cpp.inc"

void DistDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "DistIR/Dialect/Dist/IR/DistOps.cpp.inc"
      >();
}

LogicalResult DistDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  if (attr.getName() == getClusterAttrName()) {
    if (!isa<ModuleOp>(op))
      return op->emitError() << "'" << getClusterAttrName()
                             << "' may only be attached to a module";
    if (!isa<ClusterAttr>(attr.getValue()))
      return op->emitError()
             << "'" << getClusterAttrName()
             << "' must be a #dist.cluster attribute, got " << attr.getValue();
    return success();
  }
  return op->emitError() << "unknown dist dialect attribute '"
                         << attr.getName().getValue() << "'";
}
