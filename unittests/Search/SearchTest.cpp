//===- SearchTest.cpp - Tests of the search driver library ----------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Search/Search.h"
#include "DistIR/Dialect/Dist/Transforms/PipelineSchedule.h"
#include "DistIR/Target/ONNX/MLPBuilder.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

using namespace distir;
using namespace distir::search;

namespace {

using Key =
    std::tuple<int64_t, int64_t, int64_t, int64_t, std::string, std::string>;

Key keyOf(const SearchConfig &c) {
  return {c.dp, c.tp, c.pp, c.microbatches, c.schedule, c.mapping};
}

TEST(SearchEnumerate, ProductsAndDedup) {
  SearchSpace space;
  space.devices = 8;
  space.maxMicrobatches = 4;
  space.training = true;
  std::vector<SearchConfig> configs = enumerateConfigs(space, 16);
  std::set<Key> seen;
  for (const SearchConfig &c : configs) {
    EXPECT_EQ(c.getNumDevices(), 8);
    EXPECT_LE(c.microbatches, 16 / c.dp);
    EXPECT_EQ(c.schedule.empty(), c.pp == 1);
    if (c.pp > 1 && c.microbatches == 1)
      EXPECT_EQ(c.schedule, "gpipe");
    if (c.dp == 1 || c.tp == 1)
      EXPECT_EQ(c.mapping, "tp-inner");
    EXPECT_TRUE(seen.insert(keyOf(c)).second) << "duplicate configuration";
  }
  // (D,T,P) triples of 8 = 10; K in {1,2,4} (batch/D >= 4 except D = 8,
  // where K <= 2); schedules x3 when P > 1 and K > 1; mappings x2 when
  // D > 1 and T > 1.
  size_t expected = 0;
  for (int64_t dp : {1, 2, 4, 8})
    for (int64_t tp : {1, 2, 4, 8})
      for (int64_t pp : {1, 2, 4, 8}) {
        if (dp * tp * pp != 8)
          continue;
        for (int64_t k : {1, 2, 4}) {
          if (k > 16 / dp)
            continue;
          expected += (pp > 1 && k > 1 ? 3 : 1) * (dp > 1 && tp > 1 ? 2 : 1);
        }
      }
  EXPECT_EQ(configs.size(), expected);
}

TEST(SearchEnumerate, InferenceHasOneSchedule) {
  SearchSpace space;
  space.devices = 4;
  space.maxMicrobatches = 4;
  space.training = false;
  for (const SearchConfig &c : enumerateConfigs(space, 8))
    EXPECT_TRUE(c.schedule.empty() || c.schedule == "gpipe");
}

TEST(SearchEnumerate, FewerDevicesAndLimits) {
  SearchSpace space;
  space.devices = 4;
  space.allowFewerDevices = true;
  space.maxPP = 1;
  space.maxTP = 1;
  std::vector<SearchConfig> configs = enumerateConfigs(space, 2);
  // dp in {1, 2}; dp = 4 exceeds the batch.
  ASSERT_EQ(configs.size(), 2u);
  EXPECT_EQ(configs[0].dp, 1);
  EXPECT_EQ(configs[1].dp, 2);
}

TEST(SearchConfig, PassOptions) {
  SearchConfig c;
  c.dp = 2;
  c.tp = 4;
  EXPECT_EQ(c.getPassOptions(),
            "dp=2 tp=4 pp=1 microbatches=1 mapping=tp-inner");
  c.pp = 2;
  c.microbatches = 4;
  c.schedule = "1f1b";
  c.mapping = "dp-inner";
  EXPECT_EQ(c.getPassOptions(),
            "dp=2 tp=4 pp=2 microbatches=4 schedule=1f1b mapping=dp-inner");
}

TEST(SearchRank, ThroughputThenIndex) {
  std::vector<ConfigResult> results(4);
  results[0].status = ConfigStatus::Ok;
  results[0].throughput = 10;
  results[1].status = ConfigStatus::OutOfMemory;
  results[1].throughput = 100;
  results[2].status = ConfigStatus::Ok;
  results[2].throughput = 20;
  results[3].status = ConfigStatus::Ok;
  results[3].throughput = 10;
  EXPECT_EQ(rankResults(results), (std::vector<size_t>{2, 0, 3}));
}

/// A two-layer MLP training step of width `dim` and batch 8.
mlir::OwningOpRef<mlir::ModuleOp> buildTestMLP(mlir::MLIRContext *context,
                                               int64_t dim) {
  MLPOptions mlp;
  mlp.layers = 2;
  mlp.dim = dim;
  mlp.batch = 8;
  mlp.training = true;
  return buildMLP(mlp, mlir::UnknownLoc::get(context));
}

TEST(SearchRun, DeterministicAcrossJobs) {
  std::unique_ptr<mlir::MLIRContext> context = createSearchContext();
  mlir::OwningOpRef<mlir::ModuleOp> module = buildTestMLP(context.get(), 16);
  ASSERT_TRUE(module);
  mlir::FailureOr<SearchProgram> program =
      serializeProgram(*module, "mlp", /*batch=*/8);
  ASSERT_TRUE(succeeded(program));

  SearchSpace space;
  space.devices = 4;
  space.maxMicrobatches = 2;
  space.training = true;
  std::vector<SearchConfig> configs = enumerateConfigs(space, /*batch=*/8);
  SearchOptions options;
  options.cluster =
      *getClusterPreset("distir-uniform:devices=4", [](const llvm::Twine &) {});
  auto csv = [&](unsigned jobs) {
    options.jobs = jobs;
    std::vector<ConfigResult> results = runSearch(*program, configs, options);
    std::string text;
    llvm::raw_string_ostream os(text);
    writeCSV(os, results, rankResults(results));
    return text;
  };
  std::string one = csv(1);
  EXPECT_EQ(one, csv(2));
  EXPECT_EQ(one, csv(4));
  EXPECT_NE(one.find(",ok,"), std::string::npos);
}

// The simulator's device map makes one transformed program stand for its
// other device mappings (--fast transforms a template once per mapping
// group): the tp-inner program on dp-inner's devices is the dp-inner program.
TEST(SearchEstimate, DeviceMapEqualsRemappedProgram) {
  std::unique_ptr<mlir::MLIRContext> context = createSearchContext();
  mlir::OwningOpRef<mlir::ModuleOp> module = buildTestMLP(context.get(), 32);
  ASSERT_TRUE(module);
  SearchOptions options;
  options.cluster =
      *getClusterPreset("dgx1-v100:nodes=2", [](const llvm::Twine &) {});
  SearchConfig config;
  config.batch = 8;
  config.dp = 2;
  config.tp = 8;
  auto simulateAs = [&](llvm::StringRef mapping,
                        std::vector<int64_t> deviceMap) {
    config.mapping = mapping.str();
    std::string error;
    mlir::OwningOpRef<mlir::ModuleOp> transformed =
        transformProgram(*module, "mlp", config, options, error);
    EXPECT_TRUE(transformed) << error;
    SimulatorOptions sim;
    sim.deviceMap = std::move(deviceMap);
    mlir::FailureOr<SimulationResult> result =
        simulate(findStepFunction(*transformed, "mlp"), options.cluster, sim);
    EXPECT_TRUE(mlir::succeeded(result));
    return *result;
  };
  std::string error;
  auto tpInner = *dist::parseDeviceOrder("tp-inner", 2, 8, 1, error);
  auto dpInner = *dist::parseDeviceOrder("dp-inner", 2, 8, 1, error);
  std::vector<int64_t> map(16);
  for (int64_t d = 0; d < 2; ++d)
    for (int64_t t = 0; t < 8; ++t)
      map[dist::getDeviceId(tpInner, d, t, 0)] =
          dist::getDeviceId(dpInner, d, t, 0);
  SimulationResult direct = simulateAs("dp-inner", {});
  SimulationResult mapped = simulateAs("tp-inner", map);
  SimulationResult unmapped = simulateAs("tp-inner", {});
  EXPECT_EQ(direct.latency, mapped.latency);
  // The mapping matters on two nodes, so the map is not a no-op.
  EXPECT_NE(direct.latency, unmapped.latency);
  ASSERT_EQ(direct.devices.size(), mapped.devices.size());
  for (const auto &[device, report] : direct.devices) {
    EXPECT_EQ(report.peakBytes, mapped.devices.at(device).peakBytes);
    EXPECT_EQ(report.finish, mapped.devices.at(device).finish);
  }
}

// Each replica holds every weight on its tp * pp devices, and one
// microbatch's inputs (streamed) somewhere while it does:
// (dp * weights + inputs / K) / devices.
TEST(SearchMemory, ResidentLowerBound) {
  ResidentFootprint footprint;
  footprint.weightBytes = 1000;
  footprint.batchBytesPerSample = 10;
  SearchConfig config;
  config.batch = 40;
  config.dp = 2;
  config.tp = 2;
  config.pp = 1;
  EXPECT_EQ(getResidentLowerBound(footprint, config), (2 * 1000 + 400) / 4);
  config.dp = 1;
  config.tp = 4;
  EXPECT_EQ(getResidentLowerBound(footprint, config), (1000 + 400) / 4);
  // The pipeline's stages share the weights too: 1/1/4 spreads them over 4
  // devices like 1/4/1 (a bound over dp * tp alone would drop pipelines).
  config.tp = 1;
  config.pp = 4;
  EXPECT_EQ(getResidentLowerBound(footprint, config), (1000 + 400) / 4);
  // Four microbatches: a quarter of the batch's inputs at a time.
  config.microbatches = 4;
  EXPECT_EQ(getResidentLowerBound(footprint, config), (1000 + 100) / 4);
}

} // namespace

// One mapping per parallelism matrix of (dp, tp, pp) over the levels; the
// familiar names where they denote the matrix.
TEST(SearchEnumerate, MappingsAreParallelismMatrices) {
  // 2 nodes x 8 devices, D/T/P = 2/4/2: the inter-node factor 2 goes to dp,
  // tp or pp. tp-inner puts pp across nodes; dp-inner is the same matrix.
  std::vector<std::string> m = enumerateMappings({2, 8}, 2, 4, 2);
  EXPECT_EQ(m, (std::vector<std::string>{"tp-inner", "tp:2,dp:2,pp:2,tp:2",
                                         "tp:4,pp:2,dp:2"}));
  // D/T = 4/4: both familiar mappings are distinct matrices.
  EXPECT_EQ(enumerateMappings({2, 8}, 4, 4, 1),
            (std::vector<std::string>{"tp-inner", "dp-inner"}));
  // One level: one matrix.
  EXPECT_EQ(enumerateMappings({4}, 2, 2, 1),
            (std::vector<std::string>{"tp-inner"}));
  // Fewer devices than the cluster: the innermost levels hold them.
  EXPECT_EQ(enumerateMappings({2, 8}, 2, 2, 2),
            (std::vector<std::string>{"tp-inner"}));
  // Devices that do not fit the levels: no matrix.
  EXPECT_TRUE(enumerateMappings({2, 8}, 4, 4, 2).empty());
}

TEST(SearchEnumerate, LevelsMultiplyMappings) {
  SearchSpace space;
  space.devices = 16;
  space.levels = {2, 8};
  space.maxMicrobatches = 1;
  for (const SearchConfig &c : enumerateConfigs(space, 64))
    if (c.dp == 2 && c.tp == 4 && c.pp == 2)
      EXPECT_TRUE(c.mapping == "tp-inner" ||
                  c.mapping.find(':') != std::string::npos);
  size_t count = 0;
  for (const SearchConfig &c : enumerateConfigs(space, 64))
    count += c.dp == 2 && c.tp == 4 && c.pp == 2;
  EXPECT_EQ(count, 3u);
}
