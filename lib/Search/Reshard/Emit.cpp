//===- Emit.cpp - A resharding plan as a dist function --------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// The function takes each source device's tile and returns each destination
// device's tile. Transfers appear in the plan's order (program order is the
// schedule); each destination tile is assembled from the pieces it received
// or already held.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Dialect/Dist/IR/DistOps.h"
#include "DistIR/Search/Reshard.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"

#include <map>

using namespace mlir;
using namespace distir;
using namespace distir::reshard;

namespace {
class PlanEmitter {
public:
  PlanEmitter(OpBuilder &b, Location loc, Type elementType)
      : b(b), loc(loc), elementType(elementType) {}

  RankedTensorType tileType(const Box &box, int64_t device) const {
    SmallVector<int64_t> shape;
    for (auto [lo, hi] : box)
      shape.push_back(hi - lo);
    return dist::withDevice(RankedTensorType::get(shape, elementType), device);
  }

  SmallVector<OpFoldResult> indexAttrs(ArrayRef<int64_t> values) {
    return llvm::map_to_vector(
        values, [&](int64_t v) -> OpFoldResult { return b.getIndexAttr(v); });
  }

  /// `want` out of `value`, the tile `have` on `device`.
  Value slice(Value value, const Box &have, const Box &want, int64_t device) {
    if (have == want)
      return value;
    SmallVector<int64_t> offsets, sizes;
    for (auto [h, w] : llvm::zip(have, want)) {
      offsets.push_back(w.first - h.first);
      sizes.push_back(w.second - w.first);
    }
    return tensor::ExtractSliceOp::create(
        b, loc, tileType(want, device), value, indexAttrs(offsets),
        indexAttrs(sizes), indexAttrs(SmallVector<int64_t>(want.size(), 1)));
  }

  Value insert(Value part, Value into, const Box &partBox, const Box &intoBox) {
    SmallVector<int64_t> offsets, sizes;
    for (auto [p, i] : llvm::zip(partBox, intoBox)) {
      offsets.push_back(p.first - i.first);
      sizes.push_back(p.second - p.first);
    }
    return tensor::InsertSliceOp::create(
        b, loc, part, into, indexAttrs(offsets), indexAttrs(sizes),
        indexAttrs(SmallVector<int64_t>(partBox.size(), 1)));
  }

private:
  OpBuilder &b;
  Location loc;
  Type elementType;
};
} // namespace

FailureOr<SmallVector<Value>>
reshard::emitTransfers(OpBuilder &b, Location loc, const Problem &problem,
                       const Plan &plan, ValueRange sources, Type elementType,
                       ErrorFn emitError,
                       function_ref<void(Operation *, bool)> created) {
  PlanEmitter emitter(b, loc, elementType);
  const Layout &from = problem.sourceLayout;
  const Layout &to = problem.destinationLayout;
  // Reports each new op: on the destination side (a receiving collective,
  // the tile assembly) or not.
  auto note = [&](Value value, bool destination) {
    if (created)
      if (Operation *op = value.getDefiningOp())
        created(op, destination);
    return value;
  };

  // The source tile of each source device.
  std::map<int64_t, std::pair<Value, const Box *>> sourceOf;
  for (auto [p, device] : llvm::enumerate(from.devices))
    sourceOf[device] = {sources[p], &from.boxes[p]};
  auto sliceFrom = [&](int64_t device, const Box &box) {
    auto [value, have] = sourceOf.at(device);
    Value piece = emitter.slice(value, *have, box, device);
    // A whole tile is the source value itself: nothing new to report.
    return piece == value ? piece : note(piece, false);
  };

  // Pieces each destination device holds, and all-gather parts in flight.
  std::map<int64_t, SmallVector<std::pair<Box, Value>>> pieces;
  std::map<std::pair<int64_t, int64_t>, Value> parts;
  for (const UnitTask &task : problem.tasks)
    for (int64_t device : task.local)
      pieces[device].push_back({task.box, sliceFrom(device, task.box)});
  for (const Transfer &transfer : plan.transfers) {
    const Box &whole = problem.tasks[transfer.task].box;
    switch (transfer.kind) {
    case CollectiveKind::SendRecv: {
      auto [sender, receiver] =
          std::make_pair(transfer.group[0], transfer.group[1]);
      Value moved = note(
          dist::SendOp::create(b, loc, emitter.tileType(transfer.box, receiver),
                               sliceFrom(sender, transfer.box)),
          false);
      if (transfer.box == whole)
        pieces[receiver].push_back({transfer.box, moved});
      else
        parts[{transfer.task, receiver}] = moved;
      break;
    }
    case CollectiveKind::Broadcast: {
      SmallVector<Type> types;
      for (int64_t device : transfer.group)
        types.push_back(emitter.tileType(transfer.box, device));
      auto broadcast = dist::BroadcastOp::create(
          b, loc, types, sliceFrom(transfer.group[0], transfer.box));
      if (created)
        created(broadcast, false);
      for (size_t i = 1; i < transfer.group.size(); ++i)
        pieces[transfer.group[i]].push_back(
            {transfer.box, broadcast.getResult(i)});
      break;
    }
    case CollectiveKind::AllGather: {
      SmallVector<Value> inputs;
      for (int64_t device : transfer.group)
        inputs.push_back(parts.at({transfer.task, device}));
      auto gather = dist::AllGatherOp::create(b, loc, inputs, transfer.dim);
      if (created)
        created(gather, true);
      for (auto [i, device] : llvm::enumerate(transfer.group))
        pieces[device].push_back({transfer.box, gather.getResult(i)});
      break;
    }
    default:
      emitError("internal: a resharding plan has a " +
                stringifyCollectiveKind(transfer.kind) + " transfer");
      return failure();
    }
  }

  // Each destination tile from its pieces.
  SmallVector<Value> results;
  for (auto [device, box] : llvm::zip(to.devices, to.boxes)) {
    SmallVector<std::pair<Box, Value>> &held = pieces[device];
    int64_t covered = 0;
    for (const auto &piece : held)
      covered += getVolume(piece.first);
    if (covered != getVolume(box)) {
      emitError("internal: the plan gives device " + Twine(device) + " " +
                Twine(covered) + " of the " + Twine(getVolume(box)) +
                " elements of its tile");
      return failure();
    }
    if (held.size() == 1) {
      results.push_back(held.front().second);
      continue;
    }
    Value tile = note(tensor::EmptyOp::create(
                          b, loc, emitter.tileType(box, device), ValueRange()),
                      true);
    for (const auto &[pieceBox, value] : held)
      tile = note(emitter.insert(value, tile, pieceBox, box), true);
    results.push_back(tile);
  }
  return results;
}

/// A function from the source tiles to the destination tiles, its body
/// empty (the builder at its start).
static func::FuncOp createTileFunction(OpBuilder &b, ModuleOp module,
                                       StringRef name, const Problem &problem,
                                       Type elementType) {
  MLIRContext *context = module.getContext();
  b.setInsertionPointToEnd(module.getBody());
  Location loc = NameLoc::get(b.getStringAttr(name));
  PlanEmitter emitter(b, loc, elementType);
  SmallVector<Type> argTypes, resultTypes;
  for (auto [device, box] :
       llvm::zip(problem.sourceLayout.devices, problem.sourceLayout.boxes))
    argTypes.push_back(emitter.tileType(box, device));
  for (auto [device, box] : llvm::zip(problem.destinationLayout.devices,
                                      problem.destinationLayout.boxes))
    resultTypes.push_back(emitter.tileType(box, device));
  auto func = func::FuncOp::create(
      b, loc, name, FunctionType::get(context, argTypes, resultTypes));
  // The arguments and results are tiles already (a `dist.sharding` would
  // describe the whole tensor): they are named after their mesh positions.
  auto named = [&](StringRef prefix, size_t i) {
    return b.getDictionaryAttr(
        {b.getNamedAttr("dist.name", b.getStringAttr(prefix + Twine(i)))});
  };
  for (size_t p = 0; p < argTypes.size(); ++p)
    func.setArgAttrs(p, named("src", p));
  for (size_t q = 0; q < resultTypes.size(); ++q)
    func.setResultAttrs(q, named("dst", q));
  b.setInsertionPointToStart(func.addEntryBlock());
  return func;
}

FailureOr<func::FuncOp> reshard::emitPlan(ModuleOp module, StringRef name,
                                          const Problem &problem,
                                          const Plan &plan, Type elementType,
                                          ErrorFn emitError) {
  OpBuilder b(module.getContext());
  func::FuncOp func = createTileFunction(b, module, name, problem, elementType);
  FailureOr<SmallVector<Value>> results =
      emitTransfers(b, func.getLoc(), problem, plan, func.getArguments(),
                    elementType, emitError);
  if (failed(results)) {
    func.erase();
    return failure();
  }
  func::ReturnOp::create(b, func.getLoc(), *results);
  return func;
}

func::FuncOp reshard::emitReshardOp(ModuleOp module, StringRef name,
                                    const Problem &problem, Type elementType) {
  OpBuilder b(module.getContext());
  func::FuncOp func = createTileFunction(b, module, name, problem, elementType);
  auto op = dist::ReshardOp::create(b, func.getLoc(), func.getResultTypes(),
                                    func.getArguments(),
                                    b.getDenseI64ArrayAttr(problem.shape),
                                    problem.source, problem.destination);
  func::ReturnOp::create(b, func.getLoc(), op.getResults());
  return func;
}
