//===- Problem.cpp - PaSE's cost graph from a linalg program --------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Analysis/CollectiveCost.h"
#include "DistIR/Analysis/OpCost.h"
#include "DistIR/Search/PerOp.h"
#include "DistIR/Search/Reshard.h"
#include "MovePrice.h"
#include "Tiles.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <mutex>
#include <numeric>
#include <unordered_map>

using namespace mlir;
using namespace distir;
using namespace distir::pase;
using namespace distir::pase::detail;

namespace {

/// Loops that can be split without halos: every operand reads them as a
/// plain dimension (convolution windows `oh + kh` are not split).
SmallVector<bool> splittableLoops(linalg::LinalgOp op) {
  SmallVector<bool> ok(op.getNumLoops(), true);
  // linalg.index reads a loop's global position, and a tile would see its
  // own: the loops it reads stay whole (a max pool's backward reads the
  // window's, not the batch's or the channels').
  op->walk([&](linalg::IndexOp index) {
    if (index->getParentOfType<linalg::LinalgOp>() == op)
      ok[index.getDim()] = false;
  });
  // A split reduction is resolved by a sum all-reduce: only sums split.
  if (!pase::isSumReduction(op)) {
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    for (unsigned l = 0; l < iterators.size(); ++l)
      if (iterators[l] == utils::IteratorType::reduction)
        ok[l] = false;
  }
  for (AffineMap map : op.getIndexingMapsArray()) {
    SmallVector<int> uses(op.getNumLoops(), 0);
    for (AffineExpr expr : map.getResults()) {
      if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
        ++uses[dim.getPosition()];
        continue;
      }
      expr.walk([&](AffineExpr inner) {
        if (auto dim = dyn_cast<AffineDimExpr>(inner))
          ok[dim.getPosition()] = false;
      });
    }
    for (unsigned l = 0; l < uses.size(); ++l)
      if (uses[l] > 1)
        ok[l] = false;
  }
  return ok;
}

/// The share of a loop of `size` that its largest tile covers under a
/// balanced split by `factor` (ceil(size / factor) / size).
double largestShare(int64_t size, int64_t factor) {
  return size > 0 ? double((size + factor - 1) / factor) / double(size) : 1.0;
}

/// The share of an operand read through `map` that the largest tile holds:
/// per plain dimension, its loop's largest share.
double shareOf(AffineMap map, ArrayRef<int64_t> ranges,
               const LoopSplit &split) {
  double share = 1;
  for (AffineExpr expr : map.getResults())
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      share *= largestShare(ranges[dim.getPosition()],
                            split.factors[dim.getPosition()]);
  return share;
}

/// Imbalance an uneven split may have: the largest tile at most 1/64 above
/// the mean (n >= 64 f), so that a 50257-word vocabulary splits over 64
/// devices while the odd feature-map sizes of CNNs (147, 73, 35 pixels)
/// do not multiply the configurations (InceptionV3 on 64 devices: 16 s
/// to search with 1/16, 11.5 s with 1/64, 8.9 s without uneven splits).
constexpr int64_t kUnevenMinPerTile = 64;

/// Every split of the loops whose product divides `devices`. With `uneven`
/// a factor need not divide its loop (balanced tiles, floor(i n / f), as
/// dist.sharding splits) if the tiles stay within kUnevenMinPerTile.
void enumerateSplits(ArrayRef<int64_t> ranges, ArrayRef<bool> splittable,
                     int64_t devices, bool uneven, LoopSplit &current,
                     unsigned loop, int64_t used, std::vector<LoopSplit> &out) {
  if (loop == ranges.size()) {
    if (devices % used != 0)
      return;
    current.replicas = devices / used;
    out.push_back(current);
    return;
  }
  for (int64_t f = 1; f <= devices / used; ++f) {
    if (devices % (used * f) != 0 || (f > 1 && !splittable[loop]) ||
        (ranges[loop] % f != 0 &&
         (!uneven || ranges[loop] < kUnevenMinPerTile * f)))
      continue;
    current.factors[loop] = f;
    enumerateSplits(ranges, splittable, devices, uneven, current, loop + 1,
                    used * f, out);
  }
  current.factors[loop] = 1;
}

/// Most devices first: among equally cheap configurations (free ops such as
/// fused zero fills) the solver keeps the first, which then follows its
/// neighbours' split instead of replicating.
void sortByReplicas(std::vector<LoopSplit> &splits) {
  std::vector<size_t> order(splits.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return splits[a].replicas < splits[b].replicas ||
           (splits[a].replicas == splits[b].replicas && a < b);
  });
  // Permute in place (the configurations stay where they were allocated).
  for (size_t i = 0; i < order.size(); ++i) {
    size_t j = order[i];
    while (j < i)
      j = order[j];
    if (j != i)
      std::swap(splits[i], splits[j]);
  }
}

/// What vertexCost reads of an op, once for all its configurations
/// (LinalgOp::getStaticLoopRanges builds and uniques affine maps each call).
struct OpGeometry {
  SmallVector<int64_t> ranges;
  /// (bytes, indexing map) of each input and each init.
  SmallVector<std::pair<double, AffineMap>> inputs, inits;

  explicit OpGeometry(linalg::LinalgOp op) : ranges(op.getStaticLoopRanges()) {
    for (OpOperand *operand : op.getDpsInputOperands())
      inputs.push_back({double(getTensorBytes(operand->get().getType())),
                        op.getMatchingIndexingMap(operand)});
    for (OpOperand &operand : op.getDpsInitsMutable())
      inits.push_back({double(getTensorBytes(operand.get().getType())),
                       op.getMatchingIndexingMap(&operand)});
  }
};

/// Compute of one tile plus the all-reduce a split reduction needs.
double vertexCost(linalg::LinalgOp op, const OpGeometry &geometry,
                  const LoopSplit &split, const ComputeWork &work,
                  const Cluster &cluster,
                  const CollectiveCostModel &collectives,
                  const PerOpOptions &options) {
  // The largest tile decides the time (uneven splits: ceil(n / f)).
  ArrayRef<int64_t> ranges = geometry.ranges;
  double points = 1;
  for (auto [range, f] : llvm::zip(ranges, split.factors))
    points *= largestShare(range, f);
  double inFull = 0, inTile = 0, outFull = 0, outTile = 0;
  for (auto [bytes, map] : geometry.inputs) {
    inFull += bytes;
    inTile += bytes * shareOf(map, ranges, split);
  }
  for (auto [bytes, map] : geometry.inits) {
    outFull += bytes;
    outTile += bytes * shareOf(map, ranges, split);
  }
  ComputeWork tile = work;
  tile.flops *= points;
  double inRatio = inFull > 0 ? inTile / inFull : 1.0;
  double outRatio = outFull > 0 ? outTile / outFull : 1.0;
  tile.bytesRead *= inRatio;
  tile.inputBytes *= inRatio;
  tile.bytesWritten *= outRatio;
  tile.outputElements *= outRatio;
  double cost = priceCompute(tile, cluster.device, options.model);

  SmallVector<SmallVector<int64_t>> all =
      reductionGroups(op, split, options.devices);
  if (all.empty())
    return cost;
  return cost +
         collectives.getConcurrentTime(CollectiveKind::AllReduce, all, outTile);
}

/// Whether every device holds, of the producer's tiles, what it reads.
bool allLocal(ArrayRef<Tile> have, ArrayRef<Tile> need) {
  for (auto [h, n] : llvm::zip(have, need))
    for (auto [x, y] : llvm::zip(h, n))
      if (y.first < x.first || y.second > x.second)
        return false;
  return true;
}

/// Time to turn the producer's tiles of a tensor into the consumer's (one
/// tile per device each), as the emitter moves it: nothing where every
/// device holds what it reads, an all-gather per replica group where that
/// is what it is, else one dist.reshard. The simulator prices that op by
/// the resharding planner's best plan; the cost graph, which prices
/// thousands of layout pairs, by the send/recv estimate (the load of the
/// busiest stream or link) of every device receiving, from each producer
/// tile it overlaps, the overlap (docs/design/pase.md).
double priceMove(ArrayRef<Tile> have, ArrayRef<Tile> need, uint32_t haveId,
                 ArrayRef<int64_t> haveKey, ArrayRef<int64_t> needKey,
                 RankedTensorType type, const CollectiveCostModel &collectives,
                 reshard::SendRecvEstimator &estimator,
                 llvm::DenseMap<uint32_t, HolderTable> &tables) {
  if (std::optional<GatherPlan> plan = gatherPlan(have, need, fullTile(type)))
    return collectives.getConcurrentTime(
        CollectiveKind::AllGather, plan->groups, double(getTensorBytes(type)));
  int64_t devices = static_cast<int64_t>(have.size());
  if (devices > kMaxGridDevices || !keysFormGrid(haveKey, needKey, type))
    return estimateFromTiles(have, need, type, estimator);
  // One table per producer layout (the key's interned id).
  auto it = tables.find(haveId);
  if (it == tables.end())
    it = tables
             .try_emplace(haveId,
                          makeHolderTable(haveKey, type.getRank(), devices))
             .first;
  return estimateOnGrid(haveKey, needKey, type, it->second, devices, estimator);
}

/// The distinct layouts of a tensor over an op's configurations (read or
/// written through `map`; null: whole): per configuration its class, per
/// class a configuration, its layout key and, when a price needs them, its
/// tiles.
struct SideLayouts {
  SideLayouts(AffineMap map, RankedTensorType type, ArrayRef<LoopSplit> splits,
              int64_t devices)
      : map(map), type(type), splits(splits), devices(devices) {
    keys.reserve(splits.size()); // the map below points into the keys
    llvm::DenseMap<ArrayRef<int64_t>, uint32_t> classes;
    for (const LoopSplit &split : splits) {
      keys.push_back(layoutKey(map, split));
      auto [it, inserted] =
          classes.try_emplace(ArrayRef<int64_t>(keys.back()),
                              static_cast<uint32_t>(representative.size()));
      if (inserted)
        representative.push_back(keys.size() - 1);
      classOf.push_back(it->second);
    }
    tiles.resize(representative.size());
  }

  ArrayRef<int64_t> keyOf(size_t cls) const {
    return keys[representative[cls]];
  }
  ArrayRef<Tile> tilesOf(size_t cls) {
    if (tiles[cls].empty())
      for (int64_t q = 0; q < devices; ++q)
        tiles[cls].push_back(
            tileThrough(map, type, splits[representative[cls]], q));
    return tiles[cls];
  }

  AffineMap map;
  RankedTensorType type;
  ArrayRef<LoopSplit> splits;
  int64_t devices;
  std::vector<SmallVector<int64_t>> keys; // per configuration
  SmallVector<uint32_t> classOf;
  SmallVector<size_t> representative;
  std::vector<SmallVector<Tile>> tiles;
};

/// Prices the cost graph's moves from several threads (the edges are
/// independent): priceMove where anything moves, once per type and layout
/// pair (the prices shared under a lock; equal keys give equal prices, so
/// the graph does not depend on which thread priced a key first), with an
/// estimator and holder tables per thread.
class MovePricer {
public:
  explicit MovePricer(const CollectiveCostModel &collectives)
      : collectives(collectives) {}

  /// The price of every pair of `from` x `to` layout classes (row-major):
  /// the classes' keys interned and the known prices read under one lock,
  /// the new ones priced (tiles built only for them: most pairs of an edge
  /// repeat a key another edge priced) and recorded under a second.
  std::vector<double> priceAll(RankedTensorType type, SideLayouts &from,
                               SideLayouts &to) {
    size_t fromClasses = from.representative.size(),
           toClasses = to.representative.size();
    std::vector<double> cost(fromClasses * toClasses);
    SmallVector<uint32_t> fromIds, toIds, missing;
    const void *typeKey = type.getAsOpaquePointer();
    {
      std::lock_guard<std::mutex> lock(mutex);
      for (size_t a = 0; a < fromClasses; ++a)
        fromIds.push_back(intern(from.keyOf(a)));
      for (size_t b = 0; b < toClasses; ++b)
        toIds.push_back(intern(to.keyOf(b)));
      for (size_t a = 0; a < fromClasses; ++a)
        for (size_t b = 0; b < toClasses; ++b) {
          auto it = moves.find(MoveKey{fromIds[a], toIds[b], typeKey});
          if (it != moves.end())
            cost[a * toClasses + b] = it->second;
          else
            missing.push_back(static_cast<uint32_t>(a * toClasses + b));
        }
    }
    if (missing.empty())
      return cost;
    std::unique_ptr<Worker> worker;
    for (uint32_t i : missing) {
      size_t a = i / toClasses, b = i % toClasses;
      ArrayRef<Tile> have = from.tilesOf(a), need = to.tilesOf(b);
      if (allLocal(have, need))
        continue;
      if (!worker)
        worker = acquire();
      cost[i] = priceMove(have, need, fromIds[a], from.keyOf(a), to.keyOf(b),
                          type, collectives, worker->estimator, worker->tables);
    }
    std::lock_guard<std::mutex> lock(mutex);
    if (worker)
      idle.push_back(std::move(worker));
    // Another thread may have priced a key meanwhile: the same price.
    for (uint32_t i : missing)
      moves.try_emplace(
          MoveKey{fromIds[i / toClasses], toIds[i % toClasses], typeKey},
          cost[i]);
    return cost;
  }

private:
  struct Worker {
    explicit Worker(const CollectiveCostModel &collectives)
        : estimator(collectives) {}
    reshard::SendRecvEstimator estimator;
    llvm::DenseMap<uint32_t, HolderTable> tables;
  };
  std::unique_ptr<Worker> acquire() {
    std::lock_guard<std::mutex> lock(mutex);
    if (idle.empty())
      return std::make_unique<Worker>(collectives);
    std::unique_ptr<Worker> worker = std::move(idle.back());
    idle.pop_back();
    return worker;
  }

  /// A layout key (layoutKey) as a small number, under the lock: moves are
  /// looked up by two numbers and the type; holder tables by the first.
  uint32_t intern(ArrayRef<int64_t> key) {
    return layoutIds
        .try_emplace(SmallVector<int64_t>(key),
                     static_cast<uint32_t>(layoutIds.size()))
        .first->second;
  }

  const CollectiveCostModel &collectives;
  std::mutex mutex;
  struct KeyHash {
    size_t operator()(const SmallVector<int64_t> &key) const {
      return llvm::hash_combine_range(key.begin(), key.end());
    }
  };
  std::unordered_map<SmallVector<int64_t>, uint32_t, KeyHash> layoutIds;
  using MoveKey = std::tuple<uint32_t, uint32_t, const void *>;
  llvm::DenseMap<MoveKey, double> moves;
  std::vector<std::unique_ptr<Worker>> idle;
};

/// The tile each of devices 0 .. devices-1 holds of a `type` value sharded
/// by `sharding`, or why it has no such tiles.
FailureOr<SmallVector<Tile>> annotatedTiles(dist::ShardingAttr sharding,
                                            RankedTensorType type,
                                            int64_t devices, std::string &why) {
  llvm::raw_string_ostream os(why);
  if (!sharding.getPartial().empty()) {
    os << "it has partial axes (per-op strategies sum a split reduction at "
          "once; annotate the summed value)";
    return failure();
  }
  if (!sharding.getOffsets().empty()) {
    os << "it has explicit offsets (dist-pase splits a loop only into "
          "balanced tiles)";
    return failure();
  }
  if (sharding.isStrided()) {
    os << "it is strided (groups; dist-pase splits a loop only into "
          "contiguous tiles)";
    return failure();
  }
  dist::MeshAttr mesh = sharding.getMesh();
  if (mesh.getNumPositions() != devices) {
    os << "its mesh has " << mesh.getNumPositions()
       << " positions, and dist-pase distributes over " << devices
       << " devices";
    return failure();
  }
  SmallVector<Tile> tiles(devices);
  SmallVector<bool> seen(devices, false);
  for (int64_t p = 0; p < devices; ++p) {
    int64_t device = mesh.getDevice(p);
    if (device < 0 || device >= devices || seen[device]) {
      os << "its mesh does not place one position on each of devices 0 .. "
         << devices - 1;
      return failure();
    }
    seen[device] = true;
    SmallVector<int64_t> coordinates = mesh.getCoordinates(p);
    for (auto [d, size] : llvm::enumerate(type.getShape()))
      tiles[device].push_back(sharding.getShardRange(
          d, size, sharding.getShardIndex(d, coordinates)));
  }
  return tiles;
}

/// Keeps the configurations of `op` under which every device holds the
/// tiles of its results that the op's `dist.sharding` (a user's or an
/// imported annotation) says, and reads each function argument that
/// carries `dist.sharding` exactly as that argument is distributed (an
/// argument stays where it is; its readers follow it). None left is one
/// error at the op.
LogicalResult keepAnnotated(Operation *op, std::vector<LoopSplit> &splits,
                            int64_t devices) {
  auto function = op->getParentOfType<func::FuncOp>();
  for (OpOperand &operand : op->getOpOperands()) {
    auto arg = dyn_cast<BlockArgument>(operand.get());
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!arg || !type || arg.getOwner() != &function.getBody().front())
      continue;
    auto sharding = function.getArgAttrOfType<dist::ShardingAttr>(
        arg.getArgNumber(), dist::kShardingAttrName);
    if (!sharding)
      continue;
    std::string why;
    FailureOr<SmallVector<Tile>> tiles =
        annotatedTiles(sharding, type, devices, why);
    if (failed(tiles))
      return op->emitError() << "dist-pase: cannot follow the dist.sharding "
                                "of argument #"
                             << arg.getArgNumber() << ": " << why;
    llvm::erase_if(splits, [&](const LoopSplit &split) {
      for (int64_t q = 0; q < devices; ++q)
        if (operandTile(operand, split, q) != (*tiles)[q])
          return true;
      return false;
    });
    if (splits.empty())
      return op->emitError()
             << "dist-pase: no configuration of this op reads argument #"
             << arg.getArgNumber()
             << " as its dist.sharding distributes it (arguments are not "
                "moved; a split must divide the loop that reads it)";
  }
  if (!op->hasAttr(dist::kShardingAttrName))
    return success();
  SmallVector<std::optional<SmallVector<Tile>>> wanted;
  for (OpResult result : op->getResults()) {
    wanted.emplace_back();
    dist::ShardingAttr sharding =
        dist::getResultSharding(op, result.getResultNumber());
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!sharding || !type)
      continue;
    std::string why;
    FailureOr<SmallVector<Tile>> tiles =
        annotatedTiles(sharding, type, devices, why);
    if (failed(tiles))
      return op->emitError()
             << "dist-pase: cannot follow the dist.sharding of result #"
             << result.getResultNumber() << ": " << why;
    wanted.back() = std::move(*tiles);
  }
  llvm::erase_if(splits, [&](const LoopSplit &split) {
    for (OpResult result : op->getResults())
      if (const auto &tiles = wanted[result.getResultNumber()])
        for (int64_t q = 0; q < devices; ++q)
          if (resultTile(result, split, q) != (*tiles)[q])
            return true;
    return false;
  });
  if (splits.empty())
    return op->emitError()
           << "dist-pase: no configuration of this op holds its results as "
              "its dist.sharding says (splits are balanced and follow the "
              "loop order's mesh axes)";
  return success();
}

/// mlir::parallelFor over blocks of items: it registers each index with a
/// diagnostic handler (a lock and a map update per index), which costs
/// more than a small vertex or edge (the cost graph of a 4-device
/// Transformer step was slower on two threads than on one).
void parallelForBlocks(MLIRContext *context, size_t n,
                       llvm::function_ref<void(size_t)> fn) {
  size_t blocks = std::min<size_t>(n, 64 * context->getNumThreads());
  mlir::parallelFor(context, 0, blocks, [&](size_t b) {
    for (size_t i = b * n / blocks, e = (b + 1) * n / blocks; i < e; ++i)
      fn(i);
  });
}

/// Whether `op` reads a function argument that carries `dist.sharding` or
/// carries one itself: keepAnnotated then filters its configurations.
bool readsAnnotations(Operation *op) {
  if (op->hasAttr(dist::kShardingAttrName))
    return true;
  auto function = op->getParentOfType<func::FuncOp>();
  for (Value operand : op->getOperands()) {
    auto arg = dyn_cast<BlockArgument>(operand);
    if (arg && arg.getOwner() == &function.getBody().front() &&
        function.getArgAttr(arg.getArgNumber(), dist::kShardingAttrName))
      return true;
  }
  return false;
}

/// An op that becomes a vertex: its configurations and their costs.
struct VertexTask {
  Operation *op = nullptr;
  /// A result type that is not a static tensor (not configured).
  Type nonStatic;
  bool followAnnotations = false;
  std::vector<LoopSplit> splits;
  std::vector<double> costs;
  bool replicated = false; // no split rule: whole on every device
  bool truncated = false;  // cut to the cheapest maxConfigsPerOp
  bool dynamicLoops = false;
  /// The element type the cluster has no peak flop/s for (not priced).
  std::string missingPeak;
};

/// Fills `task`'s configurations and costs. Reads the IR only, except that
/// keepAnnotated (followAnnotations) reports at the op: the threads run
/// the tasks without annotations.
LogicalResult configureVertex(VertexTask &task, const Cluster &cluster,
                              const CollectiveCostModel &collectives,
                              const PerOpOptions &options) {
  Operation &op = *task.op;
  auto keep = [&](std::vector<LoopSplit> &splits) {
    return success(!task.followAnnotations ||
                   succeeded(keepAnnotated(&op, splits, options.devices)));
  };
  // The op's work, once its loop sizes are known static. As the simulator:
  // the roofline needs the element type's peak (the DistIR-compatible
  // model prices every type at the f32 one); without one, the op is not
  // priced and the serial pass reports it.
  ComputeWork work;
  auto priceable = [&] {
    work = getComputeWork(&op);
    if (work.isFree || options.model == CostModelKind::DistIRCompat ||
        cluster.device.getPeakFlops(work.dtype))
      return true;
    task.missingPeak = work.dtype;
    return false;
  };
  // Enumerated into a scratch list reused by the thread's next op, then
  // copied at their exact number: the configurations of every op stay
  // alive, and growing each list by doubling left most of the search's
  // fresh memory (and its page faults) unused.
  thread_local std::vector<LoopSplit> scratch;
  auto enumerate = [&](ArrayRef<int64_t> ranges, ArrayRef<bool> splittable,
                       bool uneven) {
    scratch.clear();
    LoopSplit current;
    current.factors.assign(ranges.size(), 1);
    enumerateSplits(ranges, splittable, options.devices, uneven, current, 0, 1,
                    scratch);
    sortByReplicas(scratch);
    task.splits.assign(scratch.begin(), scratch.end());
  };
  auto linalgOp = dyn_cast<linalg::LinalgOp>(&op);
  if (std::optional<MovementRule> rule = getMovementRule(&op)) {
    // Data movement: each device moves its block; nothing to reduce.
    // Reshapes and slices need whole blocks of their source dims.
    enumerate(rule->divisible, rule->splittable, /*uneven=*/false);
    if (failed(keep(task.splits)))
      return failure();
    if (!priceable())
      return success();
    for (const LoopSplit &split : task.splits) {
      int64_t tiles = options.devices / split.replicas;
      ComputeWork tile = work;
      tile.flops /= tiles;
      tile.bytesRead /= tiles;
      tile.inputBytes /= tiles;
      tile.bytesWritten /= tiles;
      tile.outputElements /= tiles;
      task.costs.push_back(priceCompute(tile, cluster.device, options.model));
    }
    return success();
  }
  if (!linalgOp || !linalgOp.hasPureTensorSemantics()) {
    // No split rule: the whole op on every device, priced and reported.
    LoopSplit whole;
    whole.replicas = options.devices;
    task.splits = {whole};
    if (failed(keep(task.splits)))
      return failure();
    if (!priceable())
      return success();
    task.costs = {priceCompute(work, cluster.device, options.model)};
    task.replicated = true;
    return success();
  }
  OpGeometry geometry(linalgOp);
  ArrayRef<int64_t> ranges = geometry.ranges;
  if (llvm::any_of(ranges, ShapedType::isDynamic)) {
    task.dynamicLoops = true;
    return success();
  }
  std::vector<LoopSplit> &splits = task.splits;
  enumerate(ranges, splittableLoops(linalgOp), options.unevenSplits);
  if (failed(keep(splits)))
    return failure();
  if (!priceable())
    return success();
  std::vector<double> &costs = task.costs;
  costs.reserve(splits.size());
  for (const LoopSplit &split : splits)
    costs.push_back(vertexCost(linalgOp, geometry, split, work, cluster,
                               collectives, options));
  if (static_cast<int64_t>(splits.size()) > options.maxConfigsPerOp) {
    // Keep the cheapest by vertex cost (stable: ties keep their order).
    std::vector<size_t> index(splits.size());
    std::iota(index.begin(), index.end(), 0);
    std::sort(index.begin(), index.end(), [&](size_t a, size_t b) {
      return costs[a] < costs[b] || (costs[a] == costs[b] && a < b);
    });
    index.resize(options.maxConfigsPerOp);
    std::sort(index.begin(), index.end());
    std::vector<LoopSplit> keptSplits;
    std::vector<double> keptCosts;
    for (size_t i : index) {
      keptSplits.push_back(splits[i]);
      keptCosts.push_back(costs[i]);
    }
    splits = std::move(keptSplits);
    costs = std::move(keptCosts);
    task.truncated = true;
  }
  return success();
}

} // namespace

bool pase::isSumReduction(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0)
    return false;
  Block *body = op.getBlock();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add || add->getBlock() != body)
    return false;
  BlockArgument out = body->getArgument(op.getNumDpsInputs());
  return add.getLhs() == out || add.getRhs() == out;
}

std::string pase::formatSplit(const LoopSplit &split) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(split.factors, os);
  os << "]";
  if (split.replicas > 1)
    os << " x" << split.replicas << " replicas";
  return text;
}

FailureOr<PerOpProblem> pase::buildPerOpProblem(func::FuncOp function,
                                                const Cluster &cluster,
                                                const PerOpOptions &options,
                                                ErrorFn error) {
  if (options.devices < 1 || options.devices > cluster.getNumDevices()) {
    error("devices=" + Twine(options.devices) + " must be between 1 and the " +
          Twine(cluster.getNumDevices()) + " devices of cluster '" +
          cluster.name + "'");
    return failure();
  }
  PerOpProblem problem;
  CollectiveCostModel collectives(cluster);
  // Tensors of one type between the same layouts recur along the program.
  MovePricer pricer(collectives);
  llvm::DenseMap<Operation *, unsigned> vertexOf;
  // The ops that become vertices, in program order. Their configurations
  // and costs are independent of each other: computed on the context's
  // threads, then added in program order (errors too: the first op's).
  std::vector<VertexTask> vertexTasks;
  for (Operation &op : function.getBody().front()) {
    if (isa<tensor::EmptyOp, arith::ConstantOp>(op) ||
        llvm::none_of(op.getResultTypes(), llvm::IsaPred<TensorType>))
      continue;
    VertexTask task;
    task.op = &op;
    for (Type type : op.getResultTypes()) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor || !tensor.hasStaticShape()) {
        task.nonStatic = type;
        break;
      }
    }
    // Annotations are followed in program order (keepAnnotated reports).
    task.followAnnotations = options.followAnnotations && readsAnnotations(&op);
    vertexTasks.push_back(std::move(task));
  }
  // Named linalg ops memoize their indexing maps in an attribute on first
  // use: set them here, so that the threads below only read the IR.
  for (const VertexTask &task : vertexTasks)
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(task.op))
      (void)linalgOp.getIndexingMapsArray();
  parallelForBlocks(function.getContext(), vertexTasks.size(), [&](size_t i) {
    VertexTask &task = vertexTasks[i];
    if (!task.nonStatic && !task.followAnnotations)
      (void)configureVertex(task, cluster, collectives, options);
  });
  for (VertexTask &task : vertexTasks) {
    Operation &op = *task.op;
    if (task.nonStatic) {
      op.emitError() << "per-op strategies need static tensor shapes, got "
                     << task.nonStatic;
      return failure();
    }
    if (task.followAnnotations &&
        failed(configureVertex(task, cluster, collectives, options)))
      return failure();
    if (task.dynamicLoops) {
      op.emitError() << "per-op strategies need static loop sizes";
      return failure();
    }
    if (!task.missingPeak.empty()) {
      op.emitError() << "per-op strategies price this op at the peak flop/s "
                        "of its element type, and cluster '"
                     << cluster.name << "' has none for " << task.missingPeak
                     << " (add it to the device's peak_flops)";
      return failure();
    }
    if (task.replicated)
      ++problem.replicatedOps[op.getName().getStringRef().str()];
    if (task.truncated)
      ++problem.truncatedOps;
    vertexOf[&op] = problem.graph.addVertex(std::move(task.costs));
    problem.ops.push_back(&op);
    problem.configs.push_back(std::move(task.splits));
  }

  // Edges: a consumer's operands, then the tensors its body reads by index
  // (a gather's table, ViT's class-token select, an embedding), which every
  // device needs whole, whatever the consumer's configuration.
  struct EdgeTask {
    unsigned u, v;
    OpOperand *operand; // null: `captured`
    Value captured;
  };
  std::vector<EdgeTask> tasks;
  for (auto [v, consumer] : llvm::enumerate(problem.ops)) {
    unsigned vertex = static_cast<unsigned>(v);
    for (OpOperand &operand : consumer->getOpOperands()) {
      Operation *def = operand.get().getDefiningOp();
      if (!isa<RankedTensorType>(operand.get().getType()) || !def)
        continue;
      auto it = vertexOf.find(def);
      if (it != vertexOf.end())
        tasks.push_back({it->second, vertex, &operand, Value()});
    }
    for (Value captured : getCapturedTensors(consumer)) {
      Operation *def = captured.getDefiningOp();
      auto it = def ? vertexOf.find(def) : vertexOf.end();
      if (it != vertexOf.end())
        tasks.push_back({it->second, vertex, nullptr, captured});
    }
  }

  // The cost of moving `produced` from the producer u's layouts to those in
  // which the consumer v reads it through `toMap` (null: whole, as a body
  // reads a captured tensor).
  auto edgeCost = [&](unsigned u, unsigned v, OpResult produced,
                      AffineMap toMap) {
    const std::vector<LoopSplit> &from = problem.configs[u];
    const std::vector<LoopSplit> &to = problem.configs[v];
    // Price each pair of distinct layouts once: most configurations of
    // an op differ only in loops this tensor does not see.
    auto type = cast<RankedTensorType>(produced.getType());
    SideLayouts fromSide(resultMap(produced), type, from, options.devices);
    SideLayouts toSide(toMap, type, to, options.devices);
    std::vector<double> pairCost = pricer.priceAll(type, fromSide, toSide);
    size_t toClasses = toSide.representative.size();
    std::vector<double> cost(from.size() * to.size());
    for (size_t a = 0; a < from.size(); ++a)
      for (size_t b = 0; b < to.size(); ++b)
        cost[a * to.size() + b] =
            pairCost[fromSide.classOf[a] * toClasses + toSide.classOf[b]];
    return cost;
  };
  std::vector<std::vector<double>> edgeCosts(tasks.size());
  parallelForBlocks(function.getContext(), tasks.size(), [&](size_t i) {
    const EdgeTask &task = tasks[i];
    edgeCosts[i] =
        task.operand
            ? edgeCost(task.u, task.v, cast<OpResult>(task.operand->get()),
                       operandMap(*task.operand))
            : edgeCost(task.u, task.v, cast<OpResult>(task.captured),
                       AffineMap());
  });
  for (auto [task, cost] : llvm::zip(tasks, edgeCosts))
    problem.graph.addEdge(task.u, task.v, std::move(cost));
  return problem;
}

dist::ShardingAttr
pase::getResultSharding(Operation *op, const LoopSplit &split, unsigned index) {
  return layoutSharding(op->getContext(), resultMap(op->getResult(index)),
                        split);
}

void pase::annotateStrategy(const PerOpProblem &problem,
                            const Strategy &strategy) {
  for (size_t v = 0; v < problem.ops.size(); ++v) {
    Operation *op = problem.ops[v];
    const LoopSplit &split = problem.configs[v][strategy.config[v]];
    Builder builder(op->getContext());
    if (op->getNumResults() == 1) {
      op->setAttr(dist::kShardingAttrName, getResultSharding(op, split, 0));
      continue;
    }
    SmallVector<Attribute> all;
    for (unsigned i = 0; i < op->getNumResults(); ++i)
      all.push_back(getResultSharding(op, split, i));
    op->setAttr(dist::kShardingAttrName, builder.getArrayAttr(all));
  }
}
