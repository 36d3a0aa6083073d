//===- DistAttrs.cpp - dist dialect attributes
//------------------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Dialect/Dist/IR/DistAttrs.h"
#include "DistIR/Dialect/Dist/IR/DistCluster.h"
#include "DistIR/Dialect/Dist/IR/DistDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace distir;
using namespace distir::dist;

#include "DistIR/Dialect/Dist/IR/DistEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "DistIR/Dialect/Dist/IR/DistAttrs.cpp.inc"

void DistDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "DistIR/Dialect/Dist/IR/DistAttrs.cpp.inc"
      >();
}

DeviceAttr distir::dist::getDevice(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return {};
  return dyn_cast_or_null<DeviceAttr>(tensor.getEncoding());
}

RankedTensorType distir::dist::withDevice(RankedTensorType type,
                                          int64_t device) {
  return RankedTensorType::get(type.getShape(), type.getElementType(),
                               DeviceAttr::get(type.getContext(), device));
}

//===----------------------------------------------------------------------===//
// DeviceAttr
//===----------------------------------------------------------------------===//

LogicalResult DeviceAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 int64_t id) {
  if (id < 0)
    return emitError() << "device id must be non-negative, got " << id;
  return success();
}

//===----------------------------------------------------------------------===//
// ClusterAttr
//===----------------------------------------------------------------------===//

LogicalResult ClusterAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  StringRef name, ArrayRef<LevelAttr> levels,
                                  DeviceSpecAttr device) {
  // One set of rules for every face of a cluster: convert and reuse them.
  FailureOr<Cluster> cluster = clusterFromAttrParts(
      name, levels, device, [&](const Twine &msg) { emitError() << msg; });
  if (failed(cluster))
    return failure();
  return verifyCluster(*cluster, [&](const Twine &msg) { emitError() << msg; });
}

int64_t ClusterAttr::getNumDevices() const {
  int64_t n = 1;
  for (LevelAttr level : getLevels())
    n *= level.getSize();
  return n;
}
