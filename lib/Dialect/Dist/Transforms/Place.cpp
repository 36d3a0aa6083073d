//===- Place.cpp - Place an unplaced program and infer its batch ----------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// IR from another compiler carries no placements and no batch marks. This
// pass places every tensor on one device and infers the batch from the data
// flow, so that dist-dtp (and the search) accept the program. Dimensions
// that must be split together are joined in a union-find over (value, dim)
// pairs; the batch is the class of a result dimension, and the arguments
// that have a dimension in it are the batch inputs.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Dialect/Dist/IR/DistAttrs.h"
#include "DistIR/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"

namespace distir::dist {
#define GEN_PASS_DEF_DISTPLACEPASS
#include "DistIR/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace distir::dist

using namespace mlir;
using namespace distir;
using namespace distir::dist;

namespace {

/// `type` placed on `device`; null (after an error at `loc`) when it is
/// placed elsewhere or not a ranked tensor.
Type placeType(Type type, int64_t device, Location loc) {
  if (isa<UnrankedTensorType>(type))
    return emitError(loc) << "dist-place cannot place the unranked " << type,
           Type();
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return type;
  if (!tensor.getEncoding())
    return withDevice(tensor, device);
  if (DeviceAttr placed = getDevice(tensor); placed && placed.getId() == device)
    return type;
  return emitError(loc) << "dist-place: " << type
                        << " already has an encoding other than "
                           "#dist.device<"
                        << device << ">",
         Type();
}

LogicalResult placeModule(ModuleOp module, int64_t device) {
  auto retype = [&](Value v, Location loc) -> LogicalResult {
    Type placed = placeType(v.getType(), device, loc);
    if (!placed)
      return failure();
    v.setType(placed);
    return success();
  };
  WalkResult walk = module.walk([&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (failed(retype(arg, arg.getLoc())))
            return WalkResult::interrupt();
    for (Value result : op->getResults())
      if (failed(retype(result, op->getLoc())))
        return WalkResult::interrupt();
    if (auto func = dyn_cast<FunctionOpInterface>(op)) {
      SmallVector<Type> inputs, results;
      for (Type t : func.getArgumentTypes())
        inputs.push_back(placeType(t, device, op->getLoc()));
      for (Type t : func.getResultTypes())
        results.push_back(placeType(t, device, op->getLoc()));
      if (llvm::is_contained(inputs, Type()) ||
          llvm::is_contained(results, Type()))
        return WalkResult::interrupt();
      func.setType(FunctionType::get(op->getContext(), inputs, results));
    }
    if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
      auto type = dyn_cast<RankedTensorType>(cst.getType());
      if (!type || cst.getValue().getType() == type)
        return WalkResult::advance();
      Attribute value = cst.getValue();
      if (auto dense = dyn_cast<DenseIntOrFPElementsAttr>(value))
        value = dense.reshape(type);
      else if (auto resource = dyn_cast<DenseResourceElementsAttr>(value))
        value = DenseResourceElementsAttr::get(type, resource.getRawHandle());
      else {
        op->emitOpError() << "dist-place cannot place a constant of " << value;
        return WalkResult::interrupt();
      }
      cst.setValueAttr(cast<TypedAttr>(value));
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// Union-find over dimensions: (value, dim) pairs and the loops of linalg
/// ops ((op, loop) pairs; ops and values have distinct addresses).
class DimClasses {
public:
  using Key = std::pair<const void *, int64_t>;
  int64_t find(Key k) {
    auto [it, inserted] = ids.try_emplace(k, parent.size());
    if (inserted)
      parent.push_back(it->second);
    int64_t i = it->second;
    while (parent[i] != i)
      i = parent[i] = parent[parent[i]];
    return i;
  }
  void join(Key a, Key b) {
    int64_t ra = find(a), rb = find(b);
    if (ra != rb)
      parent[ra] = rb;
  }
  static Key of(Value v, int64_t d) { return {v.getAsOpaquePointer(), d}; }

private:
  llvm::DenseMap<Key, int64_t> ids;
  SmallVector<int64_t> parent;
};

int64_t rankOf(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t ? t.getRank() : -1;
}

/// Joins the dims of `small` and `large` across a reassociation: each dim of
/// the collapsed value with the outermost non-unit dim of its group.
void joinReshape(DimClasses &dims, Value collapsed, Value expanded,
                 ArrayRef<ReassociationIndices> groups) {
  auto shape = cast<RankedTensorType>(expanded.getType()).getShape();
  for (auto [j, group] : llvm::enumerate(groups)) {
    if (group.empty())
      continue;
    int64_t pick = group.front();
    for (int64_t d : group)
      if (shape[d] != 1) {
        pick = d;
        break;
      }
    dims.join(DimClasses::of(collapsed, j), DimClasses::of(expanded, pick));
  }
}

/// Joins the dims of a slice with those of the full value they cover whole
/// (offset 0, the full size, stride 1); `dropped`: full dims the slice drops.
void joinSlice(DimClasses &dims, Value full, Value slice,
               OffsetSizeAndStrideOpInterface op,
               const llvm::SmallBitVector &dropped) {
  auto shape = cast<RankedTensorType>(full.getType()).getShape();
  int64_t j = 0;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (dropped.test(d))
      continue;
    std::optional<int64_t> off = getConstantIntValue(op.getMixedOffsets()[d]);
    std::optional<int64_t> size = getConstantIntValue(op.getMixedSizes()[d]);
    std::optional<int64_t> stride =
        getConstantIntValue(op.getMixedStrides()[d]);
    if (off == 0 && size == shape[d] && stride == 1)
      dims.join(DimClasses::of(full, d), DimClasses::of(slice, j));
    ++j;
  }
}

/// Joins the dimensions `op` keeps together.
void joinOp(DimClasses &dims, Operation *op) {
  using K = DimClasses;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    for (OpOperand &operand : op->getOpOperands()) {
      if (rankOf(operand.get()) < 0)
        continue;
      AffineMap map = linalgOp.getMatchingIndexingMap(&operand);
      for (auto [r, expr] : llvm::enumerate(map.getResults()))
        if (auto dim = dyn_cast<AffineDimExpr>(expr))
          dims.join(K::of(operand.get(), r), {op, dim.getPosition()});
    }
    for (auto [result, init] :
         llvm::zip(op->getResults(), linalgOp.getDpsInits()))
      for (int64_t d = 0; d < rankOf(result); ++d)
        dims.join(K::of(result, d), K::of(init, d));
    return;
  }
  if (auto softmax = dyn_cast<linalg::SoftmaxOp>(op)) {
    for (int64_t d = 0; d < rankOf(softmax.getInput()); ++d) {
      dims.join(K::of(softmax.getInput(), d), K::of(op->getResult(0), d));
      dims.join(K::of(softmax.getOutput(), d), K::of(op->getResult(0), d));
    }
    return;
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
    return joinReshape(dims, collapse.getResult(), collapse.getSrc(),
                       collapse.getReassociationIndices());
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    return joinReshape(dims, expand.getSrc(), expand.getResult(),
                       expand.getReassociationIndices());
  if (auto extract = dyn_cast<tensor::ExtractSliceOp>(op))
    return joinSlice(dims, extract.getSource(), extract.getResult(), extract,
                     extract.getDroppedDims());
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    for (int64_t d = 0; d < rankOf(insert.getResult()); ++d)
      dims.join(K::of(insert.getResult(), d), K::of(insert.getDest(), d));
    return joinSlice(dims, insert.getDest(), insert.getSource(), insert,
                     insert.getDroppedDims());
  }
  if (auto pad = dyn_cast<tensor::PadOp>(op)) {
    for (int64_t d = 0; d < rankOf(pad.getResult()); ++d)
      if (getConstantIntValue(pad.getMixedLowPad()[d]) == 0 &&
          getConstantIntValue(pad.getMixedHighPad()[d]) == 0)
        dims.join(K::of(pad.getSource(), d), K::of(pad.getResult(), d));
    return;
  }
  if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
    for (Value in : concat.getInputs())
      for (int64_t d = 0; d < rankOf(in); ++d)
        if (d != static_cast<int64_t>(concat.getDim()))
          dims.join(K::of(in, d), K::of(concat.getResult(), d));
    return;
  }
  // Element-wise ops on tensors and casts keep every dim.
  if (isa<tensor::CastOp>(op) ||
      (op->hasTrait<OpTrait::Elementwise>() && op->getNumResults() == 1)) {
    Value result = op->getResult(0);
    for (Value in : op->getOperands())
      if (rankOf(in) == rankOf(result))
        for (int64_t d = 0; d < rankOf(in); ++d)
          dims.join(K::of(in, d), K::of(result, d));
  }
}

/// Marks the batch arguments of `func` (see the pass description).
LogicalResult inferBatch(func::FuncOp func, int64_t resultDim) {
  auto fail = [&](const Twine &why) {
    return func.emitError() << "dist-place cannot infer the batch of @"
                            << func.getSymName() << ": " << why
                            << "; mark the batch inputs with dist.batch_dim "
                               "and pass result-batch-dim=-1";
  };
  if (func.getNumResults() == 0)
    return fail("it has no result");
  auto type = dyn_cast<RankedTensorType>(func.getResultTypes()[0]);
  if (!type || resultDim >= type.getRank())
    return fail("result #0 (" +
                llvm::formatv("{0}", func.getResultTypes()[0]).str() +
                ") has no dimension " + Twine(resultDim));
  auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
  DimClasses dims;
  func.walk([&](Operation *op) { joinOp(dims, op); });
  int64_t batch = dims.find(DimClasses::of(ret.getOperand(0), resultDim));
  SmallVector<std::pair<unsigned, int64_t>> marks;
  for (BlockArgument arg : func.getArguments())
    for (int64_t d = 0; d < rankOf(arg); ++d)
      if (dims.find(DimClasses::of(arg, d)) == batch) {
        marks.push_back({arg.getArgNumber(), d});
        break;
      }
  if (marks.empty())
    return fail("no argument dimension reaches dimension " + Twine(resultDim) +
                " of result #0 through the ops it follows (linalg, "
                "reshapes, slices, pads, concats, element-wise)");
  for (auto [arg, d] : marks)
    if (!func.getArgAttr(arg, "dist.batch_dim"))
      func.setArgAttr(
          arg, "dist.batch_dim",
          IntegerAttr::get(IntegerType::get(func.getContext(), 64), d));
  return success();
}

struct DistPlacePass : public dist::impl::DistPlacePassBase<DistPlacePass> {
  using DistPlacePassBase::DistPlacePassBase;

  void runOnOperation() final {
    ModuleOp module = getOperation();
    if (device < 0) {
      mlir::emitError(module.getLoc())
          << "dist-place: device must be non-negative, got "
          << static_cast<int64_t>(device);
      return signalPassFailure();
    }
    if (resultBatchDim < -1) {
      mlir::emitError(module.getLoc())
          << "dist-place: result-batch-dim must be -1 or a dimension, got "
          << static_cast<int64_t>(resultBatchDim);
      return signalPassFailure();
    }
    if (failed(placeModule(module, device)))
      return signalPassFailure();
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.isPublic())
        continue;
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        if (!func.getArgAttr(i, "dist.name"))
          func.setArgAttr(i, "dist.name",
                          StringAttr::get(&getContext(), "arg" + Twine(i)));
      if (resultBatchDim >= 0 && failed(inferBatch(func, resultBatchDim)))
        return signalPassFailure();
    }
  }
};
} // namespace
