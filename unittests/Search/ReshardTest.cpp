//===- ReshardTest.cpp - Cross-mesh resharding
//-----------------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Unit-task counts of the Alpa resharding paper's microbenchmark derived from
// the tile boundaries, shared-link holding rules, and properties of every
// plan on random problems: each receiver gets each piece it lacks exactly
// once, and load-balanced broadcasts are never slower than naive sends.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Search/Reshard.h"
#include "DistIR/Dialect/Dist/IR/DistDialect.h"

#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

#include <map>
#include <random>
#include <set>

using namespace mlir;
using namespace distir;
using namespace distir::reshard;

namespace {

class ReshardTest : public ::testing::Test {
protected:
  ReshardTest() {
    context.loadDialect<dist::DistDialect>();
    cluster =
        *getClusterPreset("aws-p3.8xlarge:nodes=8", [](const llvm::Twine &) {});
  }

  /// A mesh of `shape` on consecutive devices from `first`.
  dist::MeshAttr mesh(ArrayRef<int64_t> shape, int64_t first) {
    int64_t n = 1;
    for (int64_t s : shape)
      n *= s;
    SmallVector<int64_t> devices;
    for (int64_t i = 0; i < n; ++i)
      devices.push_back(first + i);
    return dist::MeshAttr::get(&context, "", shape, devices);
  }

  Problem decomposeOrDie(dist::ShardingAttr from, dist::ShardingAttr to,
                         ArrayRef<int64_t> shape) {
    std::string error;
    FailureOr<Problem> problem =
        decompose(from, to, shape, 4, cluster,
                  [&](const llvm::Twine &msg) { error = msg.str(); });
    EXPECT_TRUE(succeeded(problem)) << error;
    return succeeded(problem) ? *problem : Problem();
  }

  MLIRContext context;
  Cluster cluster;
};

using Split = SmallVector<SmallVector<int64_t>>;
const SmallVector<int64_t> R = {}, S0 = {0}, S1 = {1}, S01 = {0, 1};

/// One case of the paper's microbenchmark and the counts its tile
/// boundaries give.
struct PaperCase {
  int number;
  Split from, to;
  SmallVector<int64_t> fromMesh, toMesh, shape;
  /// Product over dimensions of the pieces between the union of both
  /// sides' cuts.
  size_t tasks;
  /// Senders (source replicas) and receivers of every task.
  size_t senders, receivers;
};

const PaperCase kPaperCases[] = {
    // dim 0 cut in 2 on both sides; replicated over the 4 devices of a
    // mesh row on both sides.
    {1, {S0, R, R}, {S0, R, R}, {2, 4}, {2, 4}, {1024, 1024, 512}, 2, 4, 4},
    // The source holds everything on all 8 devices.
    {2, {R, R, R}, {S0, R, R}, {2, 4}, {2, 4}, {1024, 1024, 512}, 2, 8, 4},
    // dim 0 cut by the destination, dim 1 by the source: 2 x 2.
    {3, {R, S0, R}, {S0, R, R}, {2, 4}, {2, 4}, {1024, 1024, 512}, 4, 4, 4},
    // dim 1 cut in 8 by the source, dim 0 in 8 by the destination: 64
    // pieces, each on one source device and needed by one destination.
    {4, {R, S01, R}, {S01, R, R}, {2, 4}, {2, 4}, {1024, 1024, 512}, 64, 1, 1},
    // dim 0: the source's 4 cuts refine the destination's 2; each piece on
    // the 2 devices of a source column, needed by a destination row.
    {5, {S1, R, R}, {S0, R, R}, {2, 4}, {2, 4}, {1024, 1024, 512}, 4, 2, 4},
    // 3072 cut at 1536 (source) and 1024, 2048 (destination): 4 pieces.
    {6, {S0, R, R}, {S0, R, R}, {2, 4}, {3, 4}, {3072, 1024, 170}, 4, 4, 4},
    // A (1, 4) mesh splitting dim 0 in 4 to all 8 destination devices.
    {7, {S1, R, R}, {R, R, R}, {1, 4}, {2, 4}, {1024, 1024, 512}, 4, 1, 8},
    // dim 1 cut by the source, dim 2 by the destination: 2 x 2.
    {9, {R, S0, R}, {R, R, S0}, {2, 4}, {2, 4}, {1024, 1024, 512}, 4, 4, 4},
};

TEST_F(ReshardTest, PaperCaseUnitTasks) {
  for (const PaperCase &c : kPaperCases) {
    SCOPED_TRACE("case " + std::to_string(c.number));
    int64_t fromSize = c.fromMesh[0] * c.fromMesh[1];
    // Source on hosts from device 0, destination on the next host.
    int64_t toFirst = (fromSize + 3) / 4 * 4;
    Problem problem = decomposeOrDie(
        dist::ShardingAttr::get(mesh(c.fromMesh, 0), c.from),
        dist::ShardingAttr::get(mesh(c.toMesh, toFirst), c.to), c.shape);
    EXPECT_EQ(problem.tasks.size(), c.tasks);
    int64_t volume = 0;
    for (const UnitTask &task : problem.tasks) {
      EXPECT_EQ(task.senders.size(), c.senders);
      EXPECT_EQ(task.receivers.size(), c.receivers);
      EXPECT_TRUE(task.local.empty());
      volume += getVolume(task.box);
    }
    EXPECT_EQ(volume, c.shape[0] * c.shape[1] * c.shape[2]);
    // Written with their trailing unsplit entries (legal, not the printed
    // form), the same shardings give the same tasks.
    auto raw = [&](dist::MeshAttr on, const Split &split) {
      SmallVector<DenseI64ArrayAttr> axes;
      for (const SmallVector<int64_t> &dim : split)
        axes.push_back(DenseI64ArrayAttr::get(&context, dim));
      return dist::ShardingAttr::get(&context, on, axes, {},
                                     dist::ReductionKind::Sum, {}, {});
    };
    ASSERT_TRUE(c.from.back().empty() || c.to.back().empty());
    EXPECT_EQ(decomposeOrDie(raw(mesh(c.fromMesh, 0), c.from),
                             raw(mesh(c.toMesh, toFirst), c.to), c.shape)
                  .tasks.size(),
              c.tasks);
  }
}

TEST_F(ReshardTest, UnevenPiecesOfCaseSix) {
  Problem problem = decomposeOrDie(
      dist::ShardingAttr::get(mesh({2, 4}, 0), {S0, R, R}),
      dist::ShardingAttr::get(mesh({3, 4}, 8), {S0, R, R}), {3072, 1024, 170});
  std::vector<std::pair<int64_t, int64_t>> rows;
  for (const UnitTask &task : problem.tasks)
    rows.push_back(task.box[0]);
  EXPECT_EQ(rows, (std::vector<std::pair<int64_t, int64_t>>{
                      {0, 1024}, {1024, 1536}, {1536, 2048}, {2048, 3072}}));
  // [1024, 1536) is on source row 0 (devices 0-3), needed by destination
  // row 1 (devices 12-15).
  EXPECT_EQ(problem.tasks[1].senders, (SmallVector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(problem.tasks[1].receivers, (SmallVector<int64_t>{12, 13, 14, 15}));
}

TEST_F(ReshardTest, SharedDevicesCopyLocally) {
  // The same 8 devices, rows to columns: each device keeps the piece its
  // row and column share and receives the others.
  Problem problem =
      decomposeOrDie(dist::ShardingAttr::get(mesh({8}, 0), {S0, R}),
                     dist::ShardingAttr::get(mesh({8}, 0), {R, S0}), {8, 8});
  EXPECT_EQ(problem.tasks.size(), 64u);
  for (const UnitTask &task : problem.tasks) {
    bool diagonal = task.box[0] == task.box[1];
    EXPECT_EQ(task.local.size(), diagonal ? 1u : 0u);
    EXPECT_EQ(task.receivers.size(), diagonal ? 0u : 1u);
  }
}

TEST_F(ReshardTest, Errors) {
  std::string error;
  auto record = [&](const llvm::Twine &msg) { error = msg.str(); };
  dist::ShardingAttr even = dist::ShardingAttr::get(mesh({4}, 0), {S0});
  auto partial = dist::ShardingAttr::get(&context, mesh({4}, 0), {}, {0},
                                         dist::ReductionKind::Sum, {}, {});
  EXPECT_TRUE(failed(decompose(partial, even, {8}, 4, cluster, record)));
  EXPECT_NE(error.find("partial mesh axes"), std::string::npos) << error;
  // A strided tile is several boxes: refused.
  auto strided = dist::ShardingAttr::get(mesh({4}, 0), {S0}, {}, {2});
  EXPECT_TRUE(failed(decompose(strided, even, {8}, 4, cluster, record)));
  EXPECT_NE(error.find("strided"), std::string::npos) << error;
  dist::ShardingAttr outside = dist::ShardingAttr::get(mesh({4}, 30), {S0});
  EXPECT_TRUE(failed(decompose(even, outside, {8}, 4, cluster, record)));
  EXPECT_NE(error.find("outside the 32 devices"), std::string::npos) << error;
  // Rows in 257 pieces to columns in 257: 257^2 > 2^16 pieces.
  Cluster big = *getClusterPreset("distir-uniform:devices=1024",
                                  [](const llvm::Twine &) {});
  dist::ShardingAttr rows = dist::ShardingAttr::get(mesh({257}, 0), {S0, R});
  dist::ShardingAttr columns =
      dist::ShardingAttr::get(mesh({257}, 257), {R, S0});
  EXPECT_TRUE(failed(decompose(rows, columns, {257, 257}, 4, big, record)));
  EXPECT_NE(error.find("more than 65536 unit tasks"), std::string::npos)
      << error;
}

TEST_F(ReshardTest, HeldLinks) {
  CollectiveCostModel model(cluster);
  // A send across hosts: the sender's NIC out (2i + 1), the receiver's in.
  EXPECT_EQ(model.getHeldLinks(CollectiveKind::SendRecv, {1, 6}),
            (SmallVector<int64_t>{2 * 0 + 1, 2 * 1}));
  // Inside a host only NVLink (a device's own link: its stream).
  EXPECT_TRUE(model.getHeldLinks(CollectiveKind::SendRecv, {1, 2}).empty());
  // A broadcast over three hosts chains them: 0 sends, 1 receives and
  // forwards, 2 receives.
  EXPECT_EQ(model.getHeldLinks(CollectiveKind::Broadcast, {0, 4, 5, 8}),
            (SmallVector<int64_t>{1, 3, 2, 4}));
  // An all-reduce uses both directions of every NIC it crosses.
  EXPECT_EQ(model.getHeldLinks(CollectiveKind::AllReduce, {0, 4}),
            (SmallVector<int64_t>{1, 0, 3, 2}));
  // One NIC per GPU (dgx-h100): nothing shared.
  Cluster dgx =
      *getClusterPreset("dgx-h100:nodes=2", [](const llvm::Twine &) {});
  EXPECT_TRUE(CollectiveCostModel(dgx)
                  .getHeldLinks(CollectiveKind::SendRecv, {0, 8})
                  .empty());
}

TEST_F(ReshardTest, CaseOneTimesByHand) {
  Problem problem = decomposeOrDie(
      dist::ShardingAttr::get(mesh({2, 4}, 0), {S0, R, R}),
      dist::ShardingAttr::get(mesh({2, 4}, 8), {S0, R, R}), {1024, 1024, 512});
  CollectiveCostModel model(cluster);
  // Each 1 GiB half crosses a 10 Gbit/s NIC (1.25e9 B/s, 25 us latency).
  double once = 25e-6 + double(1 << 30) / 1.25e9;
  // Naive: device 0 sends its half to each of the 4 receivers in turn
  // (device 4 likewise on the other host, in parallel).
  Plan naive =
      planResharding(problem, Strategy::SendRecv, Balancer::None, model);
  EXPECT_NEAR(naive.time, 4 * once, 1e-9);
  // Broadcast: one ring broadcast over 5 devices per half (4 latency steps),
  // the NIC crossed once.
  Plan broadcast =
      planResharding(problem, Strategy::Broadcast, Balancer::Ensemble, model);
  EXPECT_NEAR(broadcast.time, 4 * 25e-6 + double(1 << 30) / 1.25e9, 1e-9);
  EXPECT_EQ(broadcast.transfers.size(), 2u);
}

/// Every receiver gets every piece it lacks exactly once.
void expectDelivers(const Problem &problem, const Plan &plan) {
  std::multiset<std::pair<int64_t, int64_t>> got; // (task, device)
  for (const Transfer &transfer : plan.transfers) {
    const Box &whole = problem.tasks[transfer.task].box;
    switch (transfer.kind) {
    case CollectiveKind::SendRecv:
      if (transfer.box == whole)
        got.insert({transfer.task, transfer.group[1]});
      break;
    case CollectiveKind::Broadcast:
      for (size_t i = 1; i < transfer.group.size(); ++i)
        got.insert({transfer.task, transfer.group[i]});
      break;
    case CollectiveKind::AllGather:
      for (int64_t device : transfer.group)
        got.insert({transfer.task, device});
      break;
    default:
      ADD_FAILURE() << "unexpected transfer kind";
    }
    // Senders hold what they send.
    if (transfer.kind != CollectiveKind::AllGather)
      EXPECT_TRUE(llvm::is_contained(problem.tasks[transfer.task].senders,
                                     transfer.group[0]));
  }
  std::multiset<std::pair<int64_t, int64_t>> want;
  for (auto [t, task] : llvm::enumerate(problem.tasks))
    for (int64_t device : task.receivers)
      want.insert({static_cast<int64_t>(t), device});
  EXPECT_EQ(got, want);
}

TEST_F(ReshardTest, RandomProblems) {
  std::mt19937 rng(7);
  auto pick = [&](int64_t n) {
    return std::uniform_int_distribution<int64_t>(0, n - 1)(rng);
  };
  CollectiveCostModel model(cluster);
  int applicable = 0;
  for (int round = 0; round < 60; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    SmallVector<int64_t> shape = {1 + pick(12), 1 + pick(12), 1 + pick(4)};
    auto randomSharding = [&](int64_t first) {
      SmallVector<int64_t> meshShape = {1 + pick(2), 1 + pick(4)};
      Split split(3);
      for (int64_t axis = 0; axis < 2; ++axis) {
        int64_t dim = pick(4); // 3: the axis replicates
        if (dim < 3)
          split[dim].push_back(axis);
      }
      return dist::ShardingAttr::get(mesh(meshShape, first), split);
    };
    // Destination on other hosts, or overlapping the source's devices.
    dist::ShardingAttr from = randomSharding(0);
    dist::ShardingAttr to = randomSharding(pick(2) ? 8 : pick(4));
    Problem problem = decomposeOrDie(from, to, shape);
    Plan naive =
        planResharding(problem, Strategy::SendRecv, Balancer::None, model);
    expectDelivers(problem, naive);
    for (Strategy strategy : getAllStrategies()) {
      if (whyNotApplicable(problem, strategy, cluster))
        continue;
      ++applicable;
      for (Balancer balancer :
           {Balancer::None, Balancer::LongestFirst, Balancer::Greedy,
            Balancer::DepthFirst, Balancer::Random, Balancer::Ensemble}) {
        Plan plan = planResharding(problem, strategy, balancer, model);
        expectDelivers(problem, plan);
      }
    }
    // The ensemble keeps the naive order among its candidates, so a
    // balanced plan is never slower than naive sends.
    Plan sendRecv =
        planResharding(problem, Strategy::SendRecv, Balancer::Ensemble, model);
    EXPECT_LE(sendRecv.time, naive.time + 1e-12);
  }
  EXPECT_GT(applicable, 60 * 2);
}

TEST_F(ReshardTest, SendRecvEstimate) {
  CollectiveCostModel model(cluster);
  SendRecvEstimator estimator(model);
  // Rows to columns on devices 0, 1: each sends the other one piece, and a
  // send holds both streams, so the two run one after the other.
  Problem swap =
      decomposeOrDie(dist::ShardingAttr::get(mesh({2}, 0), {S0}),
                     dist::ShardingAttr::get(mesh({2}, 0), {R, S0}), {4, 4});
  double one = model.getTime(CollectiveKind::SendRecv, {0, 1}, 4 * 4);
  EXPECT_NEAR(estimator.estimate(swap), 2 * one, 1e-15);
  Plan plan =
      planResharding(swap, Strategy::SendRecv, Balancer::Ensemble, model);
  EXPECT_NEAR(plan.time, 2 * one, 1e-15);
  // Where every piece has one sender, the plan sends what the estimate
  // counts; the busiest resource's load bounds every order from below.
  std::mt19937 rng(11);
  auto pick = [&](int64_t n) {
    return std::uniform_int_distribution<int64_t>(0, n - 1)(rng);
  };
  int compared = 0;
  for (int round = 0; round < 40; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    SmallVector<int64_t> shape = {4 * (1 + pick(4)), 4 * (1 + pick(4))};
    auto split = [&] { return pick(2) ? Split{S0, S1} : Split{S1, S0}; };
    Problem problem = decomposeOrDie(
        dist::ShardingAttr::get(mesh({2, 2}, pick(2) ? 0 : 8), split()),
        dist::ShardingAttr::get(mesh({2, 2}, pick(2) ? 4 : 12), split()),
        shape);
    if (llvm::any_of(problem.tasks,
                     [](const UnitTask &t) { return t.senders.size() != 1; }))
      continue;
    ++compared;
    double estimate = estimator.estimate(problem);
    EXPECT_GT(estimate, 0);
    for (Balancer balancer : {Balancer::None, Balancer::LongestFirst,
                              Balancer::Greedy, Balancer::Ensemble})
      EXPECT_LE(
          estimate,
          planResharding(problem, Strategy::SendRecv, balancer, model).time +
              1e-15);
  }
  EXPECT_GT(compared, 20);
  // Estimates start afresh; prices kept from earlier ones do not leak.
  EXPECT_NEAR(estimator.estimate(swap), 2 * one, 1e-15);
}

TEST_F(ReshardTest, BalancingBeatsNaiveWherePaperGains) {
  CollectiveCostModel model(cluster);
  for (const PaperCase &c : kPaperCases) {
    SCOPED_TRACE("case " + std::to_string(c.number));
    int64_t toFirst = (c.fromMesh[0] * c.fromMesh[1] + 3) / 4 * 4;
    Problem problem = decomposeOrDie(
        dist::ShardingAttr::get(mesh(c.fromMesh, 0), c.from),
        dist::ShardingAttr::get(mesh(c.toMesh, toFirst), c.to), c.shape);
    Plan naive =
        planResharding(problem, Strategy::SendRecv, Balancer::None, model);
    Plan broadcast =
        planResharding(problem, Strategy::Broadcast, Balancer::Ensemble, model);
    EXPECT_LE(broadcast.time, naive.time);
    // Cases 3, 4, 9: two source hosts feeding two destination hosts, where
    // order decides whether both senders stay busy.
    if (c.number == 3 || c.number == 4 || c.number == 9)
      EXPECT_LT(broadcast.time, 0.6 * naive.time);
  }
}

TEST_F(ReshardTest, ManyJobsStayBounded) {
  // 17 rows to 17 columns on 34 devices of one uniform cluster: 289
  // one-to-one pieces, more than the search recurses on (256): it keeps the
  // greedy's plan, which delivers each piece once.
  Cluster uniform = *getClusterPreset("distir-uniform:devices=34",
                                      [](const llvm::Twine &) {});
  std::string error;
  FailureOr<Problem> problem =
      decompose(dist::ShardingAttr::get(mesh({17}, 0), {S0, R}),
                dist::ShardingAttr::get(mesh({17}, 17), {R, S0}), {17, 17}, 4,
                uniform, [&](const llvm::Twine &msg) { error = msg.str(); });
  ASSERT_TRUE(succeeded(problem)) << error;
  EXPECT_EQ(problem->tasks.size(), 289u);
  CollectiveCostModel model(uniform);
  PlanOptions options;
  options.searchBudget = 300;
  Plan greedy = planResharding(*problem, Strategy::SendRecv, Balancer::Greedy,
                               model, options);
  Plan search = planResharding(*problem, Strategy::SendRecv,
                               Balancer::DepthFirst, model, options);
  expectDelivers(*problem, search);
  EXPECT_EQ(search.time, greedy.time);
  // A mesh larger than the planner takes is one error.
  Cluster big = *getClusterPreset("distir-uniform:devices=70000",
                                  [](const llvm::Twine &) {});
  EXPECT_TRUE(failed(
      decompose(dist::ShardingAttr::get(mesh({65537}, 0), {S0}),
                dist::ShardingAttr::get(mesh({1}, 0), {R}), {65537}, 4, big,
                [&](const llvm::Twine &msg) { error = msg.str(); })));
  EXPECT_NE(error.find("more than the 65536 a resharding plans for"),
            std::string::npos)
      << error;
}

} // namespace
