//===- DistDialect.cpp - The dist dialect
//-----------------------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Dialect/Dist/IR/DistDialect.h"
#include "DistIR/Dialect/Dist/IR/DistOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/InliningUtils.h"

#include <cmath>

using namespace mlir;
using namespace distir::dist;

#include "DistIR/Dialect/Dist/IR/DistDialect.cpp.inc"

namespace {
/// Communication ops are plain dataflow on placed tensors (no regions, no
/// symbols), so a call whose callee communicates can be inlined.
struct DistInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

/// The type of argument `argIndex` of `op`'s region `regionIndex`, if any.
static Type argumentType(Operation *op, unsigned regionIndex,
                         unsigned argIndex) {
  if (regionIndex >= op->getNumRegions())
    return {};
  Region &region = op->getRegion(regionIndex);
  if (auto function = dyn_cast<FunctionOpInterface>(op))
    if (argIndex < function.getNumArguments())
      return function.getArgumentTypes()[argIndex];
  if (region.empty() || argIndex >= region.getNumArguments())
    return {};
  return region.getArgument(argIndex).getType();
}

/// Checks `dist.sharding` on a function argument or result of type `type`.
static LogicalResult verifyValueSharding(Operation *op, StringRef what,
                                         unsigned index, Type type,
                                         NamedAttribute attr) {
  auto sharding = dyn_cast<ShardingAttr>(attr.getValue());
  if (!sharding)
    return op->emitError() << "'" << kShardingAttrName << "' of " << what
                           << " #" << index << " must be a #dist.sharding, got "
                           << attr.getValue();
  return sharding.verifyFor(
      type, [&]() { return op->emitError() << what << " #" << index << ": "; });
}

void DistDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "DistIR/Dialect/Dist/IR/DistOps.cpp.inc"
      >();
  addInterfaces<DistInlinerInterface>();
}

/// A signless integer of at most 64 bits (getInt() asserts on others) that
/// is not negative.
static bool isNonNegativeI64(IntegerAttr value) {
  if (!value)
    return false;
  auto type = dyn_cast<IntegerType>(value.getType());
  return type && type.isSignless() && type.getWidth() <= 64 &&
         value.getInt() >= 0;
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
  // Roles of ops in a training step, set by program builders for dist-dtp.
  if (attr.getName() == "dist.layer") {
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!isNonNegativeI64(value))
      return op->emitError()
             << "'dist.layer' must be a non-negative integer, got "
             << attr.getValue();
    return success();
  }
  // dist-autodiff's pairing of a forward op with the ops of its adjoint.
  if (attr.getName() == kVjpIdAttr || attr.getName() == kVjpOfAttr) {
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!isNonNegativeI64(value))
      return op->emitError()
             << "'" << attr.getName().getValue()
             << "' must be a non-negative integer, got " << attr.getValue();
    return success();
  }
  if (attr.getName() == "dist.task") {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitError()
             << "'dist.task' must be a string, got " << attr.getValue();
    return success();
  }
  // Set by dist-dtp{annotate-schedule} on a send (or broadcast) between
  // pipeline stages that runs at the start of its consumer's time step.
  if (attr.getName() == "dist.receive") {
    if (!isa<UnitAttr>(attr.getValue()) || !isa<SendOp, BroadcastOp>(op))
      return op->emitError() << "'dist.receive' must be a unit attribute on "
                                "a dist.send or dist.broadcast";
    return success();
  }
  // Set by dist-dtp on the tensor.empty of a step-long gradient buffer (the
  // simulator's memory breakdown).
  if (attr.getName() == "dist.gradient_buffer") {
    if (!isa<UnitAttr>(attr.getValue()) ||
        op->getName().getStringRef() != "tensor.empty")
      return op->emitError() << "'dist.gradient_buffer' must be a unit "
                                "attribute on a tensor.empty";
    return success();
  }
  if (attr.getName() == "dist.phase") {
    auto value = dyn_cast<StringAttr>(attr.getValue());
    if (!value || !llvm::is_contained({"forward", "backward", "update"},
                                      value.getValue()))
      return op->emitError() << "'dist.phase' must be \"forward\", "
                                "\"backward\" or \"update\", got "
                             << attr.getValue();
    return success();
  }
  // A plan's distribution of the op's results.
  if (attr.getName() == kShardingAttrName)
    return verifyOpShardings(op, attr.getValue());
  // Set by dist-zero on the training step it transformed.
  if (attr.getName() == "dist.zero_stage") {
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!value || value.getInt() < 1 || value.getInt() > 3)
      return op->emitError()
             << "'dist.zero_stage' must be 1, 2 or 3, got " << attr.getValue();
    return success();
  }
  // Set by distir-replay --emit-program on the replayed program: the
  // replay's own latency (seconds), to compare with the simulator's.
  if (attr.getName() == "dist.replayed_latency") {
    auto value = dyn_cast<FloatAttr>(attr.getValue());
    if (!value || !isa<func::FuncOp>(op) ||
        !std::isfinite(value.getValueAsDouble()) ||
        value.getValueAsDouble() < 0)
      return op->emitError() << "'dist.replayed_latency' must be a "
                                "finite, non-negative float on a func.func";
    return success();
  }
  return op->emitError() << "unknown dist dialect attribute '"
                         << attr.getName().getValue() << "'";
}

LogicalResult DistDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == "dist.batch_dim" || name == "dist.layer") {
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!value || value.getInt() < 0)
      return op->emitError()
             << "'" << name << "' of argument #" << argIndex
             << " must be a non-negative integer, got " << attr.getValue();
    return success();
  }
  // Set by the ONNX importer on BatchNorm statistics (not trained), and by
  // dist-autodiff on optimizer state (momenta, Adam moments, step count).
  if (name == "dist.frozen" || name == "dist.optimizer_state") {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError()
             << "'" << name << "' of argument #" << argIndex
             << " must be a unit attribute, got " << attr.getValue();
    return success();
  }
  if (name == "dist.name") {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitError() << "'dist.name' of argument #" << argIndex
                             << " must be a string, got " << attr.getValue();
    return success();
  }
  if (name == kShardingAttrName)
    return verifyValueSharding(op, "argument", argIndex,
                               argumentType(op, regionIndex, argIndex), attr);
  return op->emitError() << "unknown dist argument attribute '" << name << "'";
}

LogicalResult DistDialect::verifyRegionResultAttribute(Operation *op,
                                                       unsigned regionIndex,
                                                       unsigned resultIndex,
                                                       NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  // Set by the ONNX importer for UINT8..UINT64 outputs.
  if (name == "dist.unsigned") {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError()
             << "'dist.unsigned' of result #" << resultIndex
             << " must be a unit attribute, got " << attr.getValue();
    return success();
  }
  if (name == "dist.name") {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitError() << "'dist.name' of result #" << resultIndex
                             << " must be a string, got " << attr.getValue();
    return success();
  }
  if (name == kShardingAttrName) {
    Type type;
    if (auto function = dyn_cast<FunctionOpInterface>(op))
      if (resultIndex < function.getNumResults())
        type = function.getResultTypes()[resultIndex];
    return verifyValueSharding(op, "result", resultIndex, type, attr);
  }
  return op->emitError() << "unknown dist result attribute '" << name << "'";
}
