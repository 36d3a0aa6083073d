//===- VerifyPlacement.cpp - Check the placement rules of dist programs ---===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Placement lives in types (`#dist.device` encodings), so upstream ops build
// and verify without knowing about devices. This pass adds the rules that
// upstream verifiers cannot know: every tensor is placed, and only `dist`
// communication ops move data between devices.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Dialect/Dist/IR/DistCluster.h"
#include "DistIR/Dialect/Dist/IR/DistOps.h"
#include "DistIR/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"

#include "llvm/Support/MathExtras.h"

namespace distir::dist {
#define GEN_PASS_DEF_DISTVERIFYPLACEMENTPASS
#include "DistIR/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace distir::dist

using namespace mlir;
using namespace distir;
using namespace distir::dist;

namespace {

/// Checks one value's placement; returns its device, or failure after
/// reporting the problem at `op`.
struct PlacementChecker {
  /// Number of devices of the attached cluster, if any.
  std::optional<int64_t> numDevices;
  StringRef clusterName;

  /// Missing placements are reported where the value is defined, not at
  /// each use (`reportMissing` false).
  FailureOr<std::optional<int64_t>> check(Operation *op, Value value,
                                          const Twine &what,
                                          bool reportMissing = true) {
    auto tensor = dyn_cast<TensorType>(value.getType());
    if (!tensor)
      return std::optional<int64_t>(); // scalars are not placed
    DeviceAttr device = getDevice(tensor);
    if (!device) {
      if (!reportMissing)
        return std::optional<int64_t>();
      op->emitOpError() << what << " of type " << value.getType()
                        << " has no placement; every tensor value needs a "
                           "#dist.device encoding";
      return failure();
    }
    if (numDevices && device.getId() >= *numDevices) {
      op->emitOpError() << what << " is on device " << device.getId()
                        << " but cluster '" << clusterName << "' has only "
                        << *numDevices << " devices";
      return failure();
    }
    // Sizes are int64 byte counts everywhere (simulator, executor,
    // lowering): a type whose bytes overflow them would be counted as 0.
    auto ranked = dyn_cast<RankedTensorType>(tensor);
    if (reportMissing && ranked && ranked.hasStaticShape()) {
      uint64_t bits = ranked.getElementType().isIntOrFloat()
                          ? ranked.getElementType().getIntOrFloatBitWidth()
                          : 64;
      int64_t bytes = std::max<int64_t>(1, (bits + 7) / 8);
      bool overflow = false;
      for (int64_t dim : ranked.getShape())
        overflow |= llvm::MulOverflow(bytes, dim, bytes);
      if (overflow) {
        op->emitOpError() << what << " of type " << value.getType()
                          << " holds more than 2^63 bytes (the limit of "
                             "every size DistIR counts)";
        return failure();
      }
    }
    return std::optional<int64_t>(device.getId());
  }
};

/// Ops that only forward values (returns, yields, calls, loops) may mix
/// devices; the values themselves are still checked.
static bool forwardsValues(Operation *op) {
  return op->hasTrait<OpTrait::IsTerminator>() || isa<CallOpInterface>(op) ||
         isa<RegionBranchOpInterface>(op) || isa<ModuleOp>(op) ||
         op->hasTrait<OpTrait::SymbolTable>();
}

struct DistVerifyPlacementPass
    : public dist::impl::DistVerifyPlacementPassBase<DistVerifyPlacementPass> {
  using DistVerifyPlacementPassBase::DistVerifyPlacementPassBase;

  void runOnOperation() final {
    ModuleOp module = getOperation();
    PlacementChecker checker;
    if (ClusterAttr cluster = getModuleCluster(module)) {
      checker.numDevices = cluster.getNumDevices();
      checker.clusterName = cluster.getName();
    }

    bool ok = true;
    module.walk([&](Operation *op) {
      if (failed(verifyOp(op, checker)))
        ok = false;
    });
    if (!ok)
      signalPassFailure();
  }

  LogicalResult verifyOp(Operation *op, PlacementChecker &checker) {
    // Block arguments are checked at the op that owns their region.
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (failed(checker.check(
                  op, arg, "block argument #" + Twine(arg.getArgNumber()))))
            return failure();

    // Record the first device seen and where it came from.
    std::optional<int64_t> device;
    std::string deviceOwner;
    bool singleDevice =
        !forwardsValues(op) && !isa_and_nonnull<DistDialect>(op->getDialect());
    auto visit = [&](Value value, const Twine &what,
                     bool isResult) -> LogicalResult {
      FailureOr<std::optional<int64_t>> placed =
          checker.check(op, value, what, /*reportMissing=*/isResult);
      if (failed(placed))
        return failure();
      if (!*placed || !singleDevice)
        return success();
      if (!device) {
        device = *placed;
        deviceOwner = what.str();
        return success();
      }
      if (*device != **placed)
        return op->emitOpError()
               << "has " << deviceOwner << " on device " << *device << " and "
               << what << " on device " << **placed
               << "; only dist communication ops may move data between "
                  "devices";
      return success();
    };
    for (OpOperand &operand : op->getOpOperands())
      if (failed(visit(operand.get(),
                       "operand #" + Twine(operand.getOperandNumber()),
                       /*isResult=*/false)))
        return failure();
    for (OpResult result : op->getResults())
      if (failed(visit(result, "result #" + Twine(result.getResultNumber()),
                       /*isResult=*/true)))
        return failure();
    return success();
  }
};
} // namespace
