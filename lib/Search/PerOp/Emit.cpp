//===- Emit.cpp - The explicit dist program of a per-op strategy ----------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Every op of the strategy runs once per device on its tiles (what
// tileOf() says, the same the cost graph priced). When devices lack the
// tiles an op reads, the producer's tiles move as one collective step, as a
// runtime would group them: an all-gather per replica group where every
// device reads the value whole, else one dist.reshard from the producer's
// layout to the consumer's (planned and priced as a whole by the resharding
// planner; dist-lower-reshard writes it as sends, broadcasts and
// all-gathers). A split reduction is summed by one all-reduce per group of
// partial tiles; only the group's first device starts from the original
// accumulator, the others from zeros.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Dialect/Dist/IR/DistOps.h"
#include "DistIR/Search/PerOp.h"
#include "Tiles.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace distir;
using namespace distir::pase;
using namespace distir::pase::detail;

namespace {

struct Piece {
  int64_t device;
  Tile tile;
  Value value;
};

bool contains(const Tile &outer, const Tile &inner) {
  for (auto [o, i] : llvm::zip(outer, inner))
    if (i.first < o.first || i.second > o.second)
      return false;
  return true;
}

Tile boundingBox(const Tile &a, const Tile &b) {
  Tile result;
  for (auto [x, y] : llvm::zip(a, b))
    result.push_back(
        {std::min(x.first, y.first), std::max(x.second, y.second)});
  return result;
}

RankedTensorType tileType(Type full, const Tile &tile, int64_t device) {
  auto type = cast<RankedTensorType>(full);
  SmallVector<int64_t> shape;
  for (auto [lo, hi] : tile)
    shape.push_back(hi - lo);
  return RankedTensorType::get(
      shape, type.getElementType(),
      dist::DeviceAttr::get(type.getContext(), device));
}

class Emitter {
public:
  Emitter(OpBuilder &builder, Location loc, ErrorFn error)
      : b(builder), loc(loc), error(error) {}

  /// `want` (inside `have`, the tile `value` holds on `device`).
  Value slice(Value value, const Tile &have, const Tile &want, int64_t device) {
    if (have == want)
      return value;
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (auto [h, w] : llvm::zip(have, want)) {
      offsets.push_back(b.getIndexAttr(w.first - h.first));
      sizes.push_back(b.getIndexAttr(w.second - w.first));
      strides.push_back(b.getIndexAttr(1));
    }
    return tensor::ExtractSliceOp::create(
        b, loc, tileType(value.getType(), want, device), value, offsets, sizes,
        strides);
  }

  Value insert(Value part, Value into, const Tile &partTile,
               const Tile &intoTile) {
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (auto [p, i] : llvm::zip(partTile, intoTile)) {
      offsets.push_back(b.getIndexAttr(p.first - i.first));
      sizes.push_back(b.getIndexAttr(p.second - p.first));
      strides.push_back(b.getIndexAttr(1));
    }
    return tensor::InsertSliceOp::create(b, loc, part, into, offsets, sizes,
                                         strides);
  }

  Value send(Value value, int64_t to) {
    auto type = cast<RankedTensorType>(value.getType());
    if (dist::getDevice(type).getId() == to)
      return value;
    return dist::SendOp::create(b, loc, dist::withDevice(type, to), value);
  }

  /// The tile `want` of the original value `original` on device `q`.
  FailureOr<Value> getTile(Value original, const Tile &want, int64_t q) {
    // Undefined contents: any tile of it is a new empty tensor.
    if (original.getDefiningOp<tensor::EmptyOp>())
      return Value(tensor::EmptyOp::create(
          b, loc, tileType(original.getType(), want, q), ValueRange()));
    SmallVector<Piece> &available = pieces[original];
    // Constants are copied to each device that reads them, not sent; a
    // value nobody produced fails there with one message.
    bool local = llvm::any_of(
        available, [&](const Piece &piece) { return piece.device == q; });
    if ((available.empty() ||
         (!local && original.getDefiningOp<arith::ConstantOp>())) &&
        failed(materializeConstant(original, q)))
      return failure();
    for (const Piece &piece : available)
      if (piece.device == q && contains(piece.tile, want))
        return slice(piece.value, piece.tile, want, q);
    // Moves were emitted before the op (gatherIfWhole, reshardIfMissing).
    error("internal: a device lacks the tile it reads after the resharding");
    return failure();
  }

  /// When every device needs `original` whole and its producer's tiles
  /// (one per device) split it along one dim, gathers it with one
  /// dist.all_gather per replica group and records the whole copies.
  LogicalResult gatherIfWhole(Value original,
                              llvm::function_ref<Tile(int64_t)> need,
                              int64_t devices) {
    auto it = pieces.find(original);
    if (it == pieces.end() ||
        static_cast<int64_t>(it->second.size()) != devices)
      return success();
    SmallVector<Tile> have, needed;
    for (int64_t q = 0; q < devices; ++q) {
      if (it->second[q].device != q)
        return success();
      have.push_back(it->second[q].tile);
      needed.push_back(need(q));
    }
    Tile whole = fullTile(original.getType());
    std::optional<GatherPlan> plan = gatherPlan(have, needed, whole);
    if (!plan)
      return success();
    SmallVector<Piece> gathered;
    for (const SmallVector<int64_t> &group : plan->groups) {
      SmallVector<Value> inputs;
      for (int64_t q : group)
        inputs.push_back(it->second[q].value);
      auto gather = dist::AllGatherOp::create(b, loc, inputs, plan->dim);
      for (auto [i, q] : llvm::enumerate(group))
        gathered.push_back({q, whole, gather->getResult(i)});
    }
    // Whole copies first: getTile takes the device's own.
    SmallVector<Piece> &list = pieces[original];
    list.insert(list.begin(), gathered.begin(), gathered.end());
    return success();
  }

  /// When some device lacks the tile it reads of `operand` under `split`
  /// and the value is a producer's tiles: one dist.reshard from the
  /// producer's layout to the one the consumer reads, whose results are
  /// recorded as each device's own copy.
  LogicalResult reshardIfMissing(OpOperand &operand, const LoopSplit &split,
                                 int64_t devices) {
    return reshardIfMissing(
        operand.get(),
        [&](int64_t q) { return operandTile(operand, split, q); },
        layoutSharding(b.getContext(), operandMap(operand), split), devices);
  }

  LogicalResult reshardIfMissing(Value original,
                                 llvm::function_ref<Tile(int64_t)> needOf,
                                 dist::ShardingAttr target, int64_t devices) {
    auto producer = produced.find(original);
    if (producer == produced.end())
      return success();
    SmallVector<Piece> &list = pieces[original];
    SmallVector<Tile> need;
    bool missing = false;
    for (int64_t q = 0; q < devices; ++q) {
      need.push_back(needOf(q));
      missing |= llvm::none_of(list, [&](const Piece &piece) {
        return piece.device == q && contains(piece.tile, need.back());
      });
    }
    if (!missing)
      return success();
    auto type = cast<RankedTensorType>(original.getType());
    SmallVector<Type> types;
    for (auto [q, tile] : llvm::enumerate(need))
      types.push_back(tileType(type, tile, q));
    auto reshard = dist::ReshardOp::create(
        b, loc, types, producer->second.tiles, type.getShape(),
        producer->second.layout, target);
    SmallVector<Piece> moved;
    for (auto [q, tile] : llvm::enumerate(need))
      moved.push_back({static_cast<int64_t>(q), tile, reshard->getResult(q)});
    list.insert(list.begin(), moved.begin(), moved.end());
    return success();
  }

  /// A tensor constant is copied to each device that reads it.
  LogicalResult materializeConstant(Value original, int64_t q) {
    auto constant = original.getDefiningOp<arith::ConstantOp>();
    auto elements =
        constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
    if (!elements) {
      error("no tiles of a value read by a linalg op (it is not produced by "
            "a linalg op, an argument or a dense constant)");
      return failure();
    }
    auto type = cast<RankedTensorType>(original.getType());
    Tile full = fullTile(type);
    RankedTensorType placed = tileType(type, full, q);
    auto copy = arith::ConstantOp::create(
        b, loc, placed,
        DenseElementsAttr::getFromRawBuffer(placed, elements.getRawData()));
    pieces[original].push_back({q, full, copy});
    return success();
  }

  OpBuilder &b;
  Location loc;
  ErrorFn error;
  llvm::DenseMap<Value, SmallVector<Piece>> pieces;
  /// Values produced by the strategy's ops: their layout (mesh position p
  /// is device p) and each device's tile.
  struct Produced {
    dist::ShardingAttr layout;
    SmallVector<Value> tiles;
  };
  llvm::DenseMap<Value, Produced> produced;
};

} // namespace

LogicalResult pase::emitStrategy(func::FuncOp function,
                                 const PerOpProblem &problem,
                                 const Strategy &strategy, ErrorFn error) {
  MLIRContext *context = function.getContext();
  Block &body = function.getBody().front();
  int64_t devices = 0;
  for (const std::vector<LoopSplit> &configs : problem.configs)
    for (const LoopSplit &split : configs) {
      int64_t n = split.replicas;
      for (int64_t f : split.factors)
        n *= f;
      devices = std::max(devices, n);
    }
  llvm::DenseMap<Operation *, size_t> vertexOf;
  for (size_t v = 0; v < problem.ops.size(); ++v)
    vertexOf[problem.ops[v]] = v;

  // What the body may hold besides the strategy's ops.
  for (Operation &op : body) {
    if (vertexOf.count(&op) ||
        isa<tensor::EmptyOp, arith::ConstantOp, func::ReturnOp>(op))
      continue;
    bool scalar =
        llvm::none_of(op.getOperandTypes(), llvm::IsaPred<TensorType>) &&
        llvm::none_of(op.getResultTypes(), llvm::IsaPred<TensorType>) &&
        op.getNumRegions() == 0;
    if (scalar)
      continue;
    // Ops that read tensors into scalars would need their scalars on every
    // device.
    op.emitError() << "dist-pase cannot emit '" << op.getName()
                   << "': it reads tensors without producing one";
    return failure();
  }
  for (BlockArgument arg : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.hasStaticShape() || !dist::getDevice(type) ||
        dist::getDevice(type).getId() != 0) {
      function.emitError() << "dist-pase emits programs whose arguments are "
                              "static tensors placed on device 0 (run "
                              "dist-place first); argument #"
                           << arg.getArgNumber() << " is " << arg.getType();
      return failure();
    }
  }

  // The tile each device reads of each argument: the bounding box of its
  // reads.
  llvm::MapVector<std::pair<unsigned, int64_t>, Tile> argumentTiles;
  for (size_t v = 0; v < problem.ops.size(); ++v) {
    Operation *op = problem.ops[v];
    const LoopSplit &split = problem.configs[v][strategy.config[v]];
    for (OpOperand &operand : op->getOpOperands()) {
      auto arg = dyn_cast<BlockArgument>(operand.get());
      if (!arg || arg.getOwner() != &body || !isa<TensorType>(arg.getType()))
        continue;
      for (int64_t q = 0; q < devices; ++q) {
        Tile tile = operandTile(operand, split, q);
        auto key = std::make_pair(arg.getArgNumber(), q);
        auto it = argumentTiles.find(key);
        if (it == argumentTiles.end())
          argumentTiles.insert({key, tile});
        else
          it->second = boundingBox(it->second, tile);
      }
    }
  }

  // Arguments a body reads by index are read whole by every device.
  for (Operation *op : problem.ops)
    for (Value captured : getCapturedTensors(op)) {
      auto arg = dyn_cast<BlockArgument>(captured);
      if (!arg || arg.getOwner() != &body)
        continue;
      for (int64_t q = 0; q < devices; ++q)
        argumentTiles[std::make_pair(arg.getArgNumber(), q)] =
            fullTile(arg.getType());
    }

  // The per-device function.
  OpBuilder b(function);
  SmallVector<Type> innerInputs;
  for (auto &[key, tile] : argumentTiles)
    innerInputs.push_back(
        tileType(body.getArgument(key.first).getType(), tile, key.second));
  std::string name = (function.getSymName() + "_pase").str();
  if (SymbolTable::lookupNearestSymbolFrom(function,
                                           StringAttr::get(context, name))) {
    function.emitError() << "dist-pase: a symbol '" << name
                         << "' exists already";
    return failure();
  }
  auto inner = func::FuncOp::create(b, function.getLoc(), name,
                                    b.getFunctionType(innerInputs, {}));
  Block *innerBody = inner.addEntryBlock();
  b.setInsertionPointToStart(innerBody);
  Emitter emitter(b, function.getLoc(), error);
  for (auto [index, entry] : llvm::enumerate(argumentTiles))
    emitter.pieces[body.getArgument(entry.first.first)].push_back(
        {entry.first.second, entry.second, innerBody->getArgument(index)});

  IRMapping scalars;
  for (Operation &op : body) {
    if (isa<func::ReturnOp, tensor::EmptyOp>(op))
      continue;
    if (auto constant = dyn_cast<arith::ConstantOp>(op);
        constant && isa<TensorType>(constant.getType()))
      continue;
    auto found = vertexOf.find(&op);
    if (found == vertexOf.end()) {
      b.clone(op, scalars);
      continue;
    }
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    emitter.loc = op.getLoc();
    const LoopSplit &split =
        problem.configs[found->second][strategy.config[found->second]];
    SmallVector<SmallVector<int64_t>> groups;
    if (linalgOp)
      groups = reductionGroups(linalgOp, split, devices);
    llvm::DenseSet<int64_t> followers;
    for (const SmallVector<int64_t> &group : groups)
      for (int64_t q : llvm::drop_begin(group))
        followers.insert(q);
    // Operands every device reads whole from a producer that split them
    // along one dim: one all-gather per replica group (as priced).
    for (OpOperand &operand : op.getOpOperands()) {
      if (!isa<RankedTensorType>(operand.get().getType()))
        continue;
      if (failed(emitter.gatherIfWhole(
              operand.get(),
              [&](int64_t q) { return operandTile(operand, split, q); },
              devices)))
        return failure();
    }
    // Operands some device lacks: one resharding each (as priced).
    for (OpOperand &operand : op.getOpOperands()) {
      if (!isa<RankedTensorType>(operand.get().getType()) ||
          operand.get().getDefiningOp<tensor::EmptyOp>())
        continue;
      if (failed(emitter.reshardIfMissing(operand, split, devices)))
        return failure();
    }
    // Tensors the body reads by index: whole on every device (as priced).
    SmallVector<Value> captured = getCapturedTensors(&op);
    dist::ShardingAttr replicated = layoutSharding(context, AffineMap(), split);
    for (Value value : captured) {
      auto whole = [&](int64_t) { return fullTile(value.getType()); };
      if (failed(emitter.gatherIfWhole(value, whole, devices)) ||
          failed(emitter.reshardIfMissing(value, whole, replicated, devices)))
        return failure();
    }
    // Ops without a split rule run whole: a plain copy.
    bool ruled = linalgOp || getMovementRule(&op).has_value();
    SmallVector<Value> results; // [device * numResults + result]
    for (int64_t q = 0; q < devices; ++q) {
      // Per operand, not per value: one value may be read through two maps
      // (an input and the accumulator), each as its own tile.
      SmallVector<std::pair<unsigned, Value>> operands;
      for (OpOperand &operand : op.getOpOperands()) {
        auto type = dyn_cast<RankedTensorType>(operand.get().getType());
        if (!type)
          continue;
        Tile tile = operandTile(operand, split, q);
        bool init = linalgOp && linalgOp.isDpsInit(&operand);
        if (init && (followers.contains(q) ||
                     operand.get().getDefiningOp<tensor::EmptyOp>())) {
          Value empty = tensor::EmptyOp::create(
              b, op.getLoc(), tileType(type, tile, q), ValueRange());
          if (followers.contains(q)) {
            Value zero = arith::ConstantOp::create(
                b, op.getLoc(), b.getZeroAttr(type.getElementType()));
            empty = linalg::FillOp::create(b, op.getLoc(), zero, empty)
                        .getResult(0);
          }
          operands.push_back({operand.getOperandNumber(), empty});
          continue;
        }
        FailureOr<Value> value = emitter.getTile(operand.get(), tile, q);
        if (failed(value))
          return failure();
        operands.push_back({operand.getOperandNumber(), *value});
      }
      // A fresh mapping per copy: a region argument already mapped would be
      // dropped from the cloned block.
      IRMapping mapping = scalars;
      for (Value value : captured) {
        FailureOr<Value> tile =
            emitter.getTile(value, fullTile(value.getType()), q);
        if (failed(tile))
          return failure();
        mapping.map(value, *tile);
      }
      SmallVector<Type> types;
      for (OpResult result : op.getResults())
        types.push_back(
            tileType(result.getType(), resultTile(result, split, q), q));
      Operation *copy;
      auto expand = ruled ? dyn_cast<tensor::ExpandShapeOp>(op) : nullptr;
      auto slice = ruled ? dyn_cast<tensor::ExtractSliceOp>(op) : nullptr;
      auto insert = ruled ? dyn_cast<tensor::InsertSliceOp>(op) : nullptr;
      if (expand) {
        // The static output shape is an attribute: build it for the tile.
        copy = tensor::ExpandShapeOp::create(b, op.getLoc(), types[0],
                                             operands[0].second,
                                             expand.getReassociationIndices());
      } else if (slice) {
        // Split dims are whole dims of the source: offset 0, the tile's size.
        auto tileShape = cast<RankedTensorType>(types[0]).getShape();
        copy = tensor::ExtractSliceOp::create(
            b, op.getLoc(), cast<RankedTensorType>(types[0]),
            operands[0].second,
            getAsIndexOpFoldResult(op.getContext(), slice.getStaticOffsets()),
            getAsIndexOpFoldResult(op.getContext(), tileShape),
            getAsIndexOpFoldResult(op.getContext(), slice.getStaticStrides()));
      } else if (insert) {
        // Split dims are filled whole by the slice: offset 0, its tile size.
        auto sourceShape =
            cast<RankedTensorType>(operands[0].second.getType()).getShape();
        copy = tensor::InsertSliceOp::create(
            b, op.getLoc(), operands[0].second, operands[1].second,
            getAsIndexOpFoldResult(op.getContext(), insert.getStaticOffsets()),
            getAsIndexOpFoldResult(op.getContext(), sourceShape),
            getAsIndexOpFoldResult(op.getContext(), insert.getStaticStrides()));
      } else {
        copy = b.clone(op, mapping);
        for (auto [number, value] : operands)
          copy->setOperand(number, value);
        for (auto [result, type] : llvm::zip(copy->getResults(), types))
          result.setType(type);
      }
      // The annotation describes the whole value, not this tile.
      copy->removeAttr(dist::kShardingAttrName);
      for (OpResult result : copy->getResults())
        results.push_back(result);
    }
    unsigned numResults = op.getNumResults();
    for (const SmallVector<int64_t> &group : groups) {
      SmallVector<Value> partials;
      for (int64_t q : group)
        partials.push_back(results[q * numResults]);
      auto reduce = dist::AllReduceOp::create(
          b, op.getLoc(), dist::ReductionKind::Sum, partials);
      for (auto [i, q] : llvm::enumerate(group))
        results[q * numResults] = reduce->getResult(i);
    }
    for (unsigned r = 0; r < numResults; ++r) {
      OpResult result = op.getResult(r);
      Emitter::Produced &record = emitter.produced[result];
      record.layout = layoutSharding(context, resultMap(result), split);
      for (int64_t q = 0; q < devices; ++q) {
        Value tile = results[q * numResults + r];
        emitter.pieces[result].push_back(
            {q, resultTile(result, split, q), tile});
        record.tiles.push_back(tile);
      }
    }
  }

  // Returned values leave as their distinct tiles, one holder each.
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<Value> innerResults;
  struct Outgoing {
    unsigned result;
    Tile tile;
    int64_t device;
  };
  SmallVector<Outgoing> outgoing;
  for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
    if (isa<BlockArgument>(value))
      continue;
    auto it = emitter.pieces.find(value);
    if (it == emitter.pieces.end()) {
      ret.emitError() << "dist-pase: result #" << index
                      << " is not computed by a linalg op";
      return failure();
    }
    SmallVector<Tile> seen;
    for (const Piece &piece : it->second) {
      if (llvm::is_contained(seen, piece.tile))
        continue;
      seen.push_back(piece.tile);
      innerResults.push_back(piece.value);
      outgoing.push_back(
          {static_cast<unsigned>(index), piece.tile, piece.device});
    }
  }
  func::ReturnOp::create(b, function.getLoc(), innerResults);
  inner.setFunctionType(
      b.getFunctionType(innerInputs, TypeRange(ValueRange(innerResults))));

  // The wrapper: scatter, call, reassemble on device 0.
  auto *wrapper = new Block();
  for (BlockArgument arg : body.getArguments())
    wrapper->addArgument(arg.getType(), arg.getLoc());
  b.setInsertionPointToStart(wrapper);
  Emitter outer(b, function.getLoc(), error);
  SmallVector<Value> callArgs;
  for (auto &[key, tile] : argumentTiles) {
    Value full = wrapper->getArgument(key.first);
    auto type = cast<RankedTensorType>(full.getType());
    callArgs.push_back(
        outer.send(outer.slice(full, fullTile(type), tile, 0), key.second));
  }
  auto call = func::CallOp::create(b, function.getLoc(), inner, callArgs);
  SmallVector<Value> finals;
  for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      finals.push_back(wrapper->getArgument(arg.getArgNumber()));
      continue;
    }
    auto type = cast<RankedTensorType>(value.getType());
    Tile full = fullTile(type);
    Value assembled;
    for (auto [i, out] : llvm::enumerate(outgoing)) {
      if (out.result != index)
        continue;
      Value part = outer.send(call.getResult(i), 0);
      if (out.tile == full) {
        assembled = part;
        break;
      }
      if (!assembled)
        assembled = tensor::EmptyOp::create(
            b, function.getLoc(), tileType(type, full, 0), ValueRange());
      assembled = outer.insert(part, assembled, out.tile, full);
    }
    finals.push_back(assembled);
  }
  func::ReturnOp::create(b, function.getLoc(), finals);
  body.dropAllDefinedValueUses();
  body.dropAllReferences();
  body.erase();
  function.getBody().push_back(wrapper);
  return success();
}
