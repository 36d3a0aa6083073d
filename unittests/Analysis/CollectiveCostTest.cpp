//===- CollectiveCostTest.cpp - Tests of the collective cost model --------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Every expected value below is computed by hand from the formulas of
// docs/design/collective-cost.md and the preset numbers of
// docs/design/cluster.md.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Analysis/CollectiveCost.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace distir;

namespace {

using Groups = std::vector<llvm::SmallVector<int64_t>>;

Cluster getPreset(llvm::StringRef spec) {
  std::string error;
  auto onError = [&error](const llvm::Twine &message) {
    error = message.str();
  };
  mlir::FailureOr<Cluster> cluster = getClusterPreset(spec, onError);
  EXPECT_TRUE(succeeded(cluster)) << error;
  return succeeded(cluster) ? *cluster : Cluster();
}

// gcp-a100x16: NVSwitch 270 GB/s, 2 us; NIC 60 Gbps, 25 us, shared by 16.
constexpr double kGpuBw = 270e9, kGpuLat = 2e-6;
constexpr double kNicBw = 7.5e9, kNicLat = 25e-6;
constexpr double kBytes = 1e9;

void expectNear(double expected, double actual) {
  EXPECT_NEAR(expected, actual, 1e-9 * expected) << "expected " << expected;
}

TEST(CollectiveCostTest, NamesRoundTrip) {
  for (CollectiveKind kind :
       {CollectiveKind::AllReduce, CollectiveKind::ReduceScatter,
        CollectiveKind::AllGather, CollectiveKind::Broadcast,
        CollectiveKind::Reduce, CollectiveKind::Scatter, CollectiveKind::Gather,
        CollectiveKind::AllToAll, CollectiveKind::SendRecv})
    EXPECT_EQ(symbolizeCollectiveKind(stringifyCollectiveKind(kind)), kind);
  EXPECT_EQ(symbolizeCollectiveKind("all_reduce"), std::nullopt);
  EXPECT_EQ(symbolizeCollectiveAlgorithm("ring"), CollectiveAlgorithm::Ring);
  EXPECT_EQ(symbolizeCollectiveAlgorithm("tree"), CollectiveAlgorithm::Tree);
  EXPECT_EQ(symbolizeCollectiveAlgorithm("Ring"), std::nullopt);
  EXPECT_EQ(stringifyCollectiveAlgorithm(CollectiveAlgorithm::Tree), "tree");
}

// The DistIR-compatible reference values of docs/design/reference-facts.md.
TEST(CollectiveCostTest, DistIRReferenceAllReduce) {
  Cluster cluster = getPreset("distir-uniform:devices=8");
  CollectiveCostModel model(cluster);
  double bytes = 4.0 * 1024 * 1024;
  auto rel = [](double expected, double actual) {
    EXPECT_NEAR(expected, actual, 1e-6 * expected);
  };
  rel(1.342177e-3, model.getTime(CollectiveKind::AllReduce, {0, 1}, bytes));
  rel(2.013266e-3,
      model.getTime(CollectiveKind::AllReduce, {0, 1, 2, 3}, bytes));
  rel(2.348810e-3, model.getTime(CollectiveKind::AllReduce,
                                 {0, 1, 2, 3, 4, 5, 6, 7}, bytes));
}

TEST(CollectiveCostTest, TrivialGroupsAreFree) {
  Cluster cluster = getPreset("gcp-a100x16:nodes=2");
  CollectiveCostModel model(cluster);
  EXPECT_EQ(model.getTime(CollectiveKind::AllReduce, {3}, kBytes), 0);
  EXPECT_EQ(model.getTime(CollectiveKind::AllReduce, {}, kBytes), 0);
  EXPECT_EQ(
      model.getConcurrentTime(CollectiveKind::AllReduce, Groups{}, kBytes), 0);
}

TEST(CollectiveCostTest, RingInsideOneNode) {
  Cluster cluster = getPreset("gcp-a100x16:nodes=2");
  CollectiveCostModel model(cluster);
  llvm::SmallVector<int64_t> group = {4, 5, 6, 7};
  auto time = [&](CollectiveKind kind) {
    return model.getTime(kind, group, kBytes);
  };
  expectNear(6 * kGpuLat + 1.5 * kBytes / kGpuBw,
             time(CollectiveKind::AllReduce));
  for (CollectiveKind kind :
       {CollectiveKind::ReduceScatter, CollectiveKind::AllGather,
        CollectiveKind::AllToAll, CollectiveKind::Gather,
        CollectiveKind::Scatter})
    expectNear(3 * kGpuLat + 0.75 * kBytes / kGpuBw, time(kind));
  for (CollectiveKind kind :
       {CollectiveKind::Broadcast, CollectiveKind::Reduce})
    expectNear(3 * kGpuLat + kBytes / kGpuBw, time(kind));
  expectNear(kGpuLat + kBytes / kGpuBw,
             model.getTime(CollectiveKind::SendRecv, {4, 9}, kBytes));
}

TEST(CollectiveCostTest, TreeInsideOneNode) {
  Cluster cluster = getPreset("gcp-a100x16:nodes=2");
  CollectiveCostModel model(cluster, CollectiveAlgorithm::Tree);
  EXPECT_EQ(model.getAlgorithm(), CollectiveAlgorithm::Tree);
  llvm::SmallVector<int64_t> group = {0, 1, 2, 3, 4};
  // ceil(log2 5) = 3 levels up and 3 down; each byte crosses a link twice.
  expectNear(6 * kGpuLat + 2 * kBytes / kGpuBw,
             model.getTime(CollectiveKind::AllReduce, group, kBytes));
  expectNear(3 * kGpuLat + kBytes / kGpuBw,
             model.getTime(CollectiveKind::Broadcast, group, kBytes));
  expectNear(3 * kGpuLat + kBytes / kGpuBw,
             model.getTime(CollectiveKind::Reduce, group, kBytes));
  // NCCL has no tree reduce-scatter or all-gather: they stay rings.
  expectNear(4 * kGpuLat + 0.8 * kBytes / kGpuBw,
             model.getTime(CollectiveKind::ReduceScatter, group, kBytes));
  expectNear(4 * kGpuLat + 0.8 * kBytes / kGpuBw,
             model.getTime(CollectiveKind::AllGather, group, kBytes));
}

TEST(CollectiveCostTest, FactorsAndSteps) {
  auto ring = CollectiveAlgorithm::Ring, tree = CollectiveAlgorithm::Tree;
  EXPECT_EQ(CollectiveCostModel::getBandwidthFactor(CollectiveKind::AllReduce,
                                                    8, ring),
            1.75);
  EXPECT_EQ(CollectiveCostModel::getBandwidthFactor(CollectiveKind::AllReduce,
                                                    8, tree),
            2.0);
  EXPECT_EQ(CollectiveCostModel::getBandwidthFactor(CollectiveKind::AllGather,
                                                    8, ring),
            0.875);
  EXPECT_EQ(
      CollectiveCostModel::getLatencySteps(CollectiveKind::AllReduce, 8, ring),
      14);
  EXPECT_EQ(
      CollectiveCostModel::getLatencySteps(CollectiveKind::AllReduce, 8, tree),
      6);
  EXPECT_EQ(
      CollectiveCostModel::getLatencySteps(CollectiveKind::AllReduce, 9, tree),
      8);
  EXPECT_EQ(
      CollectiveCostModel::getLatencySteps(CollectiveKind::Gather, 8, tree), 7);
  EXPECT_EQ(
      CollectiveCostModel::getLatencySteps(CollectiveKind::AllReduce, 1, ring),
      0);
}

TEST(CollectiveCostTest, AcrossNodesUsesTheSlowestLink) {
  Cluster cluster = getPreset("gcp-a100x16:nodes=2");
  CollectiveCostModel model(cluster);
  expectNear(2 * kNicLat + 1.0 * kBytes / kNicBw,
             model.getTime(CollectiveKind::AllReduce, {0, 16}, kBytes));
  // Two GPUs per node: NVSwitch and NIC both used, the NIC limits; one ring
  // crosses each NIC once per direction, so the group does not split it.
  expectNear(6 * kNicLat + 1.5 * kBytes / kNicBw,
             model.getTime(CollectiveKind::AllReduce, {0, 1, 16, 17}, kBytes));
  expectNear(3 * kNicLat + 0.75 * kBytes / kNicBw,
             model.getTime(CollectiveKind::AllGather, {17, 0, 16, 1}, kBytes));
  expectNear(kNicLat + kBytes / kNicBw,
             model.getTime(CollectiveKind::SendRecv, {5, 20}, kBytes));
  // All-to-all sends one stream per member: two members share each NIC.
  expectNear(3 * kNicLat + 0.75 * kBytes / (kNicBw / 2),
             model.getTime(CollectiveKind::AllToAll, {0, 1, 16, 17}, kBytes));
}

TEST(CollectiveCostTest, ConcurrentGroupsShareTheNic) {
  Cluster cluster = getPreset("gcp-a100x16:nodes=2");
  CollectiveCostModel model(cluster);
  Groups crossing;
  for (int64_t gpu = 0; gpu < 16; ++gpu)
    crossing.push_back({gpu, 16 + gpu});
  // 16 groups cross the one NIC of each node: each gets 1/16 of it.
  expectNear(
      2 * kNicLat + kBytes / (kNicBw / 16),
      model.getConcurrentTime(CollectiveKind::AllReduce, crossing, kBytes));
  expectNear(2 * kNicLat + kBytes / (kNicBw / 2),
             model.getConcurrentTime(CollectiveKind::AllReduce,
                                     Groups{{0, 16}, {1, 17}}, kBytes));
  // Groups inside the nodes have their own NVSwitch ports.
  expectNear(2 * kGpuLat + kBytes / kGpuBw,
             model.getConcurrentTime(CollectiveKind::AllReduce,
                                     Groups{{0, 1}, {2, 3}, {16, 17}}, kBytes));
  // One group alone is getTime.
  EXPECT_EQ(model.getConcurrentTime(CollectiveKind::AllReduce,
                                    Groups{{0, 1, 16, 17}}, kBytes),
            model.getTime(CollectiveKind::AllReduce, {0, 1, 16, 17}, kBytes));
  // An inner group next to a crossing one: only the crossing one uses a NIC.
  expectNear(2 * kNicLat + kBytes / kNicBw,
             model.getConcurrentTime(CollectiveKind::AllReduce,
                                     Groups{{0, 16}, {1, 2}}, kBytes));
}

TEST(CollectiveCostTest, ConcurrentGroupsWithPerGroupSizes) {
  Cluster cluster = getPreset("gcp-a100x16:nodes=2");
  CollectiveCostModel model(cluster);
  // The slower group decides; both split the NICs.
  double sizes[] = {kBytes, 4 * kBytes};
  expectNear(kNicLat + 4 * kBytes / (kNicBw / 2),
             model.getConcurrentTime(CollectiveKind::Broadcast,
                                     Groups{{0, 16}, {1, 17}}, sizes));
}

TEST(CollectiveCostTest, SharedByPicksTheLinkInstance) {
  // dgx1-v100: 4 NICs of 100 Gbps per node of 8 GPUs (2 GPUs per NIC).
  Cluster cluster = getPreset("dgx1-v100:nodes=2");
  CollectiveCostModel model(cluster);
  double nic = 100 * 1.25e8, lat = 5e-6;
  expectNear(2 * lat + kBytes / (nic / 2),
             model.getConcurrentTime(CollectiveKind::AllReduce,
                                     Groups{{0, 8}, {1, 9}}, kBytes));
  expectNear(2 * lat + kBytes / nic,
             model.getConcurrentTime(CollectiveKind::AllReduce,
                                     Groups{{0, 8}, {2, 10}}, kBytes));
}

TEST(CollectiveCostTest, ThreeLevelSpanningLevel) {
  // gcp-v100x8: node (NIC 7.5 GB/s, 25 us), cpu (PCIe 32 GB/s, 3 us),
  // gpu (NVLink 135 GB/s, 2 us).
  Cluster cluster = getPreset("gcp-v100x8:nodes=2");
  CollectiveCostModel model(cluster);
  expectNear(2 * 2e-6 + kBytes / 135e9,
             model.getTime(CollectiveKind::AllReduce, {0, 1}, kBytes));
  expectNear(2 * 3e-6 + kBytes / 32e9,
             model.getTime(CollectiveKind::AllReduce, {0, 4}, kBytes));
  expectNear(6 * 25e-6 + 1.5 * kBytes / 7.5e9,
             model.getTime(CollectiveKind::AllReduce, {0, 4, 8, 12}, kBytes));
}

} // namespace
