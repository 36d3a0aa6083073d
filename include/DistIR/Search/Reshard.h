//===- Reshard.h - Cross-mesh resharding (Alpa) -----------------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Moves a tensor from one sharding on one device mesh to another sharding on
// another mesh (a pipeline stage boundary), as in Zhuang et al., "On
// Optimizing the Communication of Model Parallelism" (MLSys 2023):
//
// 1. decompose: the tensor is cut at every source and destination tile
//    boundary; each piece (unit communication task) has the source devices
//    that hold it (candidate senders) and the destination devices that need
//    it (receivers);
// 2. strategy: each task becomes transfers, by point-to-point sends, by
//    sends of parts plus an all-gather among the receivers of one host
//    (local) or of all hosts (global), or by one broadcast from a sender to
//    all receivers;
// 3. load balance: which sender serves each task and in which order, so
//    that the hosts' shared NICs stay busy in parallel (longest processing
//    time first, greedy earliest-finish, depth-first search with a bound and a
//    node budget, randomized rounds, and the ensemble that keeps the best);
// 4. emit: the plan as a `dist` function from source tiles to destination
//    tiles.
//
// Plans are priced by the same rule the simulator applies under link
// contention: each transfer starts when its devices' communication streams
// and the shared links it holds are free (CollectiveCostModel).
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_SEARCH_RESHARD_H
#define DISTIR_SEARCH_RESHARD_H

#include "DistIR/Analysis/CollectiveCost.h"
#include "DistIR/Cluster/Cluster.h"
#include "DistIR/Dialect/Dist/IR/DistAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <memory>
#include <optional>
#include <string>

namespace distir::reshard {

/// Half-open ranges, one per tensor dimension.
using Box = llvm::SmallVector<std::pair<int64_t, int64_t>>;
int64_t getVolume(const Box &box);
bool contains(const Box &outer, const Box &inner);

/// The piece of a sharded tensor each mesh position holds.
struct Layout {
  /// Cluster device of each mesh position (row-major).
  llvm::SmallVector<int64_t> devices;
  /// The box each position holds.
  llvm::SmallVector<Box> boxes;
};

/// One unit communication task: a piece of the tensor that is either wholly
/// inside or wholly outside every source and destination tile.
struct UnitTask {
  Box box;
  double bytes = 0;
  /// Source devices holding the piece (ascending).
  llvm::SmallVector<int64_t> senders;
  /// Destination devices that need the piece and do not hold it.
  llvm::SmallVector<int64_t> receivers;
  /// Destination devices that hold the piece already (a source tile of the
  /// same device covers it): a local copy.
  llvm::SmallVector<int64_t> local;
};

/// A resharding problem, decomposed.
struct Problem {
  llvm::SmallVector<int64_t> shape;
  int64_t elementBytes = 4;
  dist::ShardingAttr source, destination;
  Layout sourceLayout, destinationLayout;
  std::vector<UnitTask> tasks;
};

/// Limits the decomposition (unit tasks) and the emitted program.
constexpr int64_t kMaxUnitTasks = int64_t(1) << 16;

/// Decomposes the move of a `shape` tensor from `source` to `destination`.
/// Partial (pending reduction) shardings, devices outside `cluster`, meshes
/// of more than kMaxUnitTasks positions and more than kMaxUnitTasks tasks
/// are one error each.
mlir::FailureOr<Problem> decompose(dist::ShardingAttr source,
                                   dist::ShardingAttr destination,
                                   llvm::ArrayRef<int64_t> shape,
                                   int64_t elementBytes, const Cluster &cluster,
                                   ErrorFn emitError);

enum class Strategy { SendRecv, LocalAllGather, GlobalAllGather, Broadcast };
llvm::StringRef stringifyStrategy(Strategy strategy);
std::optional<Strategy> symbolizeStrategy(llvm::StringRef name);
llvm::ArrayRef<Strategy> getAllStrategies();

enum class Balancer {
  /// Tasks in decomposition order, each from its first candidate sender
  /// (the naive plan under SendRecv).
  None,
  /// Longest processing time first: jobs by decreasing size, each from
  /// the sender that finishes it first on the schedule so far.
  LongestFirst,
  /// Repeatedly the (job, sender) that finishes first; ties by size.
  Greedy,
  /// Depth-first search over order and senders, pruned by the best
  /// makespan, within a node budget (deterministic); on more than 256 jobs
  /// (one recursion level each) it keeps the greedy's plan.
  DepthFirst,
  /// Random job orders with greedy sender choice (seeded).
  Random,
  /// The best of all of the above.
  Ensemble,
};
llvm::StringRef stringifyBalancer(Balancer balancer);
std::optional<Balancer> symbolizeBalancer(llvm::StringRef name);

/// One communication op of a plan.
struct Transfer {
  /// SendRecv, Broadcast or AllGather.
  CollectiveKind kind = CollectiveKind::SendRecv;
  /// Send: {from, to}. Broadcast: the root, then the receivers. AllGather:
  /// the members in part order.
  llvm::SmallVector<int64_t> group;
  /// The data a send or broadcast moves; an all-gather's whole result.
  Box box;
  /// AllGather: the dimension its parts are concatenated along.
  int64_t dim = -1;
  /// Index of the unit task.
  int64_t task = -1;
  /// Predicted start and end under the plan's order (seconds).
  double start = 0, end = 0;
};

struct PlanOptions {
  /// Nodes the depth-first search may visit.
  int64_t searchBudget = 20000;
  /// Rounds of the randomized balancer.
  int64_t randomRounds = 16;
  uint64_t seed = 1;
};

struct Plan {
  Strategy strategy = Strategy::SendRecv;
  Balancer balancer = Balancer::None;
  /// For Ensemble: the balancer whose plan was kept.
  Balancer chosen = Balancer::None;
  /// Program order.
  llvm::SmallVector<Transfer> transfers;
  /// Predicted makespan (seconds).
  double time = 0;
  /// Bytes that cross a shared link (a host NIC), summed over transfers.
  double sharedLinkBytes = 0;
};

/// Why `strategy` cannot serve `problem`, or std::nullopt if it can (an
/// all-gather needs a dimension of each piece divisible by its receivers).
std::optional<std::string> whyNotApplicable(const Problem &problem,
                                            Strategy strategy,
                                            const Cluster &cluster);

/// The plan of `strategy` balanced by `balancer`. The strategy must be
/// applicable.
Plan planResharding(const Problem &problem, Strategy strategy,
                    Balancer balancer, const CollectiveCostModel &model,
                    const PlanOptions &options = {});

/// The fastest plan (predicted) among the applicable strategies, balanced
/// by `balancer`; with `only`, that strategy's plan, or std::nullopt and
/// `whyNot` when it does not apply.
std::optional<Plan> planFastest(const Problem &problem, Balancer balancer,
                                const CollectiveCostModel &model,
                                std::optional<Strategy> only = std::nullopt,
                                std::string *whyNot = nullptr);

/// A quick estimate of a send/recv plan, for callers that price many
/// reshardings (the per-op search's cost graph): each receiver's piece comes
/// from the candidate sender whose resources (both communication streams,
/// the shared links the send holds) are least loaded so far, and the
/// estimate is the load of the busiest resource. It ignores waits between
/// transfers, so it bounds from below every send/recv schedule of the same
/// senders (where each piece has one holder: every send/recv plan); it
/// ignores the other strategies, which may do better where a piece has many
/// receivers. Transfer prices are kept across estimates.
class SendRecvEstimator {
public:
  explicit SendRecvEstimator(const CollectiveCostModel &model);
  ~SendRecvEstimator();

  /// Starts a new estimate.
  void reset();
  /// One piece of `bytes` for `receiver`, from one of `senders`.
  void add(llvm::ArrayRef<int64_t> senders, int64_t receiver, double bytes);
  /// The id of the send from `sender` to `receiver` (priced on first use;
  /// stable for the estimator's life), for callers that keep ids.
  uint32_t getSendId(int64_t sender, int64_t receiver);
  /// A piece of `bytes` by send `first` or `second` (ids), whichever would
  /// end first: add({s1, s2}, ...) of their senders; `first` wins ties.
  void addEither(uint32_t first, uint32_t second, double bytes);
  /// addEither of each, in order (one call for a receiver's pieces).
  struct Choice {
    uint32_t first, second;
    double bytes;
  };
  void addEach(llvm::ArrayRef<Choice> choices);
  /// The load of the busiest resource so far (seconds).
  double getBusiest() const { return busiest; }

  /// The estimate of `problem`'s unit tasks.
  double estimate(const Problem &problem);

private:
  /// A send's resources and its time.
  struct Send;
  struct Cache;
  /// Adds send `id` of `bytes` to the load of each resource it holds.
  void charge(uint32_t id, double bytes);
  const CollectiveCostModel &model;
  std::unique_ptr<Cache> cache;
  double busiest = 0;
};

/// Prices transfers in program order: each starts when its devices'
/// communication streams and its shared links are free; fills start/end
/// and returns the makespan.
double schedulePlan(llvm::MutableArrayRef<Transfer> transfers,
                    const CollectiveCostModel &model, int64_t elementBytes);

/// Emits the transfers of `plan` at `b`'s insertion point. `sources` holds
/// each source position's tile; returns each destination position's tile.
/// `created`, if given, sees every new op and whether it runs on the
/// destination side (an all-gather among receivers, a tile's assembly) or
/// on the sending side (slices, sends, broadcasts).
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
emitTransfers(mlir::OpBuilder &b, mlir::Location loc, const Problem &problem,
              const Plan &plan, mlir::ValueRange sources,
              mlir::Type elementType, ErrorFn emitError,
              llvm::function_ref<void(mlir::Operation *, bool)> created = {});

/// Writes `plan` as a function `name` into `module`: one argument per
/// source position (its tile, on its device, `dist.name = "src<p>"`), one
/// result per destination position (`dst<q>`).
mlir::FailureOr<mlir::func::FuncOp>
emitPlan(mlir::ModuleOp module, llvm::StringRef name, const Problem &problem,
         const Plan &plan, mlir::Type elementType, ErrorFn emitError);

/// Writes the resharding itself as a function `name` holding one
/// `dist.reshard` (same signature as emitPlan's): what
/// `dist-lower-reshard` plans and the reference executor runs directly.
mlir::func::FuncOp emitReshardOp(mlir::ModuleOp module, llvm::StringRef name,
                                 const Problem &problem,
                                 mlir::Type elementType);

} // namespace distir::reshard

#endif // DISTIR_SEARCH_RESHARD_H
