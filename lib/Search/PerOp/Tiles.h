//===- Tiles.h - Tiles of a per-op configuration (internal) -----*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Shared by the cost graph and the emitter, so that what is priced is what is
// emitted: which device holds which tile of each operand.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_LIB_SEARCH_PEROP_TILES_H
#define DISTIR_LIB_SEARCH_PEROP_TILES_H

#include "DistIR/Search/PerOp.h"

#include "mlir/IR/AffineMap.h"
#include "mlir/Transforms/RegionUtils.h"

#include <map>
#include <optional>

namespace distir::pase::detail {

using Tile = llvm::SmallVector<std::pair<int64_t, int64_t>>;

/// Mesh axes of a configuration: split loops in loop order, then replicas.
struct MeshLayout {
  llvm::SmallVector<int64_t> shape;
  /// Mesh axis of each loop, or -1.
  llvm::SmallVector<int64_t> axisOfLoop;
};

inline MeshLayout meshOf(const LoopSplit &split) {
  MeshLayout layout;
  for (int64_t f : split.factors) {
    layout.axisOfLoop.push_back(f > 1 ? layout.shape.size() : -1);
    if (f > 1)
      layout.shape.push_back(f);
  }
  if (split.replicas > 1 || layout.shape.empty())
    layout.shape.push_back(split.replicas);
  return layout;
}

inline llvm::SmallVector<int64_t> coordinatesOf(llvm::ArrayRef<int64_t> shape,
                                                int64_t position) {
  llvm::SmallVector<int64_t> coords(shape.size());
  for (int64_t axis = shape.size() - 1; axis >= 0; --axis) {
    coords[axis] = position % shape[axis];
    position /= shape[axis];
  }
  return coords;
}

/// The tile of an operand (read through `map`) that device `position` holds
/// or needs: a half-open range per tensor dimension.
inline Tile tileOf(mlir::AffineMap map, llvm::ArrayRef<int64_t> shape,
                   const LoopSplit &split, const MeshLayout &mesh,
                   int64_t position) {
  llvm::SmallVector<int64_t> coords = coordinatesOf(mesh.shape, position);
  Tile tile;
  for (auto [d, expr] : llvm::enumerate(map.getResults())) {
    int64_t size = shape[d];
    auto dim = llvm::dyn_cast<mlir::AffineDimExpr>(expr);
    if (!dim || split.factors[dim.getPosition()] == 1) {
      tile.push_back({0, size});
      continue;
    }
    int64_t f = split.factors[dim.getPosition()];
    int64_t c = coords[mesh.axisOfLoop[dim.getPosition()]];
    // Balanced, as dist.sharding splits (even when f divides the size).
    tile.push_back({c * size / f, (c + 1) * size / f});
  }
  return tile;
}

/// The whole tensor of `type`.
inline Tile fullTile(mlir::Type type) {
  Tile tile;
  for (int64_t size : llvm::cast<mlir::RankedTensorType>(type).getShape())
    tile.push_back({0, size});
  return tile;
}

/// Split rules of data-movement ops (Rules.cpp): their loops are their
/// result's dimensions. A result dimension may be split when it is a block
/// of one source dimension: unpadded dims of tensor.pad, full dims of
/// tensor.extract_slice, the outermost dim of each tensor.expand_shape or
/// tensor.collapse_shape group, dims a tensor.insert_slice fills whole.
struct MovementRule {
  /// Per operand (null for non-tensors): result dims -> operand dims, a
  /// constant 0 where the operand dim is read whole.
  llvm::SmallVector<mlir::AffineMap> operandMaps;
  /// Per loop: the size a split factor must divide.
  llvm::SmallVector<int64_t> divisible;
  llvm::SmallVector<bool> splittable;
};
std::optional<MovementRule> getMovementRule(mlir::Operation *op);

/// The map through which `operand` is read (null: read whole).
inline mlir::AffineMap operandMap(mlir::OpOperand &operand) {
  mlir::Operation *op = operand.getOwner();
  if (auto linalgOp = llvm::dyn_cast<mlir::linalg::LinalgOp>(op))
    return linalgOp.getMatchingIndexingMap(&operand);
  if (std::optional<MovementRule> rule = getMovementRule(op))
    return rule->operandMaps[operand.getOperandNumber()];
  return {};
}

/// The map through which `result` is written (null: written whole).
inline mlir::AffineMap resultMap(mlir::OpResult result) {
  mlir::Operation *op = result.getOwner();
  if (auto linalgOp = llvm::dyn_cast<mlir::linalg::LinalgOp>(op))
    return linalgOp.getIndexingMapMatchingResult(result);
  if (getMovementRule(op))
    return mlir::AffineMap::getMultiDimIdentityMap(
        llvm::cast<mlir::RankedTensorType>(result.getType()).getRank(),
        op->getContext());
  return {};
}

/// The tile of a `type` value accessed through `map` (operandMap or
/// resultMap; null: whole) that device `position` touches under `split`.
inline Tile tileThrough(mlir::AffineMap map, mlir::Type type,
                        const LoopSplit &split, int64_t position) {
  if (!map)
    return fullTile(type);
  return tileOf(map, llvm::cast<mlir::RankedTensorType>(type).getShape(), split,
                meshOf(split), position);
}

/// The tile of `operand` that device `position` reads under `split`.
inline Tile operandTile(mlir::OpOperand &operand, const LoopSplit &split,
                        int64_t position) {
  return tileThrough(operandMap(operand), operand.get().getType(), split,
                     position);
}

/// The tile of `result` that device `position` holds under `split`.
inline Tile resultTile(mlir::OpResult result, const LoopSplit &split,
                       int64_t position) {
  return tileThrough(resultMap(result), result.getType(), split, position);
}

/// The tiles tileOf() gives for `map` under `split` as a sharding: the
/// mesh is meshOf(split) with position p on device p, each tensor dimension
/// read as a split loop is split along that loop's axis (null map: the
/// value read whole on every position).
inline dist::ShardingAttr layoutSharding(mlir::MLIRContext *context,
                                         mlir::AffineMap map,
                                         const LoopSplit &split) {
  MeshLayout mesh = meshOf(split);
  llvm::SmallVector<llvm::SmallVector<int64_t>> dims;
  if (map)
    for (mlir::AffineExpr expr : map.getResults()) {
      llvm::SmallVector<int64_t> &axes = dims.emplace_back();
      if (auto dim = llvm::dyn_cast<mlir::AffineDimExpr>(expr))
        if (split.factors[dim.getPosition()] > 1)
          axes.push_back(mesh.axisOfLoop[dim.getPosition()]);
    }
  return dist::ShardingAttr::get(
      dist::MeshAttr::get(context, "", mesh.shape, {}), dims);
}

/// What decides which tile each device holds of a value read or written
/// through `map` (null: the whole value): per tensor dimension, its split
/// factor and the position stride of its mesh axis. Configurations with
/// equal keys hold equal tiles everywhere.
inline llvm::SmallVector<int64_t> layoutKey(mlir::AffineMap map,
                                            const LoopSplit &split) {
  llvm::SmallVector<int64_t> key;
  if (!map)
    return key;
  MeshLayout mesh = meshOf(split);
  for (mlir::AffineExpr expr : map.getResults()) {
    auto dim = llvm::dyn_cast<mlir::AffineDimExpr>(expr);
    if (!dim || split.factors[dim.getPosition()] == 1) {
      key.append({1, 0});
      continue;
    }
    int64_t stride = 1;
    for (size_t axis = mesh.axisOfLoop[dim.getPosition()] + 1;
         axis < mesh.shape.size(); ++axis)
      stride *= mesh.shape[axis];
    key.append({split.factors[dim.getPosition()], stride});
  }
  return key;
}

/// Tensors defined outside `op` that its regions read (a gather's table
/// read by `tensor.extract` in a linalg body): each device reads them whole.
inline llvm::SmallVector<mlir::Value> getCapturedTensors(mlir::Operation *op) {
  llvm::SetVector<mlir::Value> captured;
  mlir::getUsedValuesDefinedAbove(op->getRegions(), captured);
  llvm::SmallVector<mlir::Value> tensors;
  for (mlir::Value v : captured)
    if (llvm::isa<mlir::RankedTensorType>(v.getType()))
      tensors.push_back(v);
  return tensors;
}

/// A resharding that is an all-gather: every device needs the whole tensor,
/// and the producer's tiles split it along one dimension into `k` equal
/// blocks held by every group of `k` devices (one group per replica).
struct GatherPlan {
  int64_t dim = 0;
  /// Each group lists its devices in block order.
  llvm::SmallVector<llvm::SmallVector<int64_t>> groups;
};

inline std::optional<GatherPlan> gatherPlan(llvm::ArrayRef<Tile> have,
                                            llvm::ArrayRef<Tile> need,
                                            const Tile &whole) {
  if (have.empty() ||
      llvm::any_of(need, [&](const Tile &t) { return t != whole; }))
    return std::nullopt;
  // The one dimension the producer splits.
  std::optional<int64_t> dim;
  for (const Tile &tile : have)
    for (size_t d = 0; d < tile.size(); ++d)
      if (tile[d] != whole[d]) {
        if (dim && *dim != static_cast<int64_t>(d))
          return std::nullopt;
        dim = d;
      }
  if (!dim)
    return std::nullopt; // nothing to gather
  int64_t size = whole[*dim].second;
  int64_t block = have.front()[*dim].second - have.front()[*dim].first;
  if (block <= 0 || size % block != 0)
    return std::nullopt;
  int64_t k = size / block;
  // Devices holding each block, in device order; replicas form the groups.
  llvm::SmallVector<llvm::SmallVector<int64_t>> holders(k);
  for (auto [device, tile] : llvm::enumerate(have)) {
    if (tile[*dim].second - tile[*dim].first != block ||
        tile[*dim].first % block != 0)
      return std::nullopt;
    holders[tile[*dim].first / block].push_back(device);
  }
  GatherPlan plan;
  plan.dim = *dim;
  size_t replicas = holders.front().size();
  for (const auto &h : holders)
    if (h.size() != replicas || replicas == 0)
      return std::nullopt;
  for (size_t r = 0; r < replicas; ++r) {
    plan.groups.emplace_back();
    for (int64_t b = 0; b < k; ++b)
      plan.groups.back().push_back(holders[b][r]);
  }
  return plan;
}

/// Groups of device positions holding partial sums of one output tile (they
/// differ only in the split reduction loops' coordinates); empty when no
/// reduction loop is split.
inline llvm::SmallVector<llvm::SmallVector<int64_t>>
reductionGroups(mlir::linalg::LinalgOp op, const LoopSplit &split,
                int64_t devices) {
  MeshLayout mesh = meshOf(split);
  llvm::SmallVector<mlir::utils::IteratorType> iterators =
      op.getIteratorTypesArray();
  llvm::SmallVector<bool> reductionAxis(mesh.shape.size(), false);
  bool any = false;
  for (unsigned l = 0; l < iterators.size(); ++l)
    if (iterators[l] == mlir::utils::IteratorType::reduction &&
        split.factors[l] > 1) {
      reductionAxis[mesh.axisOfLoop[l]] = true;
      any = true;
    }
  llvm::SmallVector<llvm::SmallVector<int64_t>> groups;
  if (!any)
    return groups;
  std::map<llvm::SmallVector<int64_t>, size_t> index;
  for (int64_t position = 0; position < devices; ++position) {
    llvm::SmallVector<int64_t> key = coordinatesOf(mesh.shape, position);
    for (unsigned axis = 0; axis < key.size(); ++axis)
      if (reductionAxis[axis])
        key[axis] = 0;
    auto [it, inserted] = index.try_emplace(key, groups.size());
    if (inserted)
      groups.emplace_back();
    groups[it->second].push_back(position);
  }
  return groups;
}

} // namespace distir::pase::detail

#endif // DISTIR_LIB_SEARCH_PEROP_TILES_H
