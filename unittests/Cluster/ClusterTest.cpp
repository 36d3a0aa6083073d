//===- ClusterTest.cpp - Tests of the cluster model -----------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Cluster/Cluster.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cfloat>
#include <cmath>
#include <functional>
#include <limits>

using namespace distir;

namespace {

// A lambda ErrorFn keeps a reference to a callable that must outlive the
// call, so tests hold it in a named variable.
#define COLLECT_ERRORS(errors)                                                 \
  std::vector<std::string> errors;                                             \
  auto errors##Fn = [&errors](const llvm::Twine &message) {                    \
    errors.push_back(message.str());                                           \
  }

Cluster getPreset(llvm::StringRef spec) {
  COLLECT_ERRORS(errors);
  mlir::FailureOr<Cluster> cluster = getClusterPreset(spec, errorsFn);
  EXPECT_TRUE(succeeded(cluster))
      << spec.str() << ": " << (errors.empty() ? "" : errors.front());
  EXPECT_TRUE(errors.empty());
  return succeeded(cluster) ? *cluster : Cluster();
}

std::string toJSONText(const Cluster &cluster) {
  return llvm::formatv("{0:2}", clusterToJSON(cluster)).str();
}

/// A valid description that the error tests mutate.
const char *const kValidJSON = R"({
  "name": "test",
  "levels": [
    {"name": "node", "size": 2,
     "link": {"bandwidth": 5.0e10, "latency": 5e-6, "shared_by": 1}},
    {"name": "gpu", "size": 8, "link": {"bandwidth": 4.5e11, "latency": 2e-6}}
  ],
  "device": {"peak_flops": {"f32": 6.7e13, "bf16": 9.89e14},
             "memory_bandwidth": 3.35e12, "memory_capacity": 85899345920,
             "launch_overhead": 1e-5}
})";

std::string replaceOnce(std::string text, llvm::StringRef from,
                        llvm::StringRef to) {
  size_t pos = text.find(from.str());
  EXPECT_NE(pos, std::string::npos) << "fixture lacks '" << from.str() << "'";
  if (pos != std::string::npos)
    text.replace(pos, from.size(), to.str());
  return text;
}

//===----------------------------------------------------------------------===//
// Model queries
//===----------------------------------------------------------------------===//

TEST(ClusterTest, CoordinatesAreRowMajor) {
  Cluster cluster = getPreset("gcp-v100x8:nodes=2");
  ASSERT_EQ(cluster.levels.size(), 3u);
  EXPECT_EQ(cluster.getNumDevices(), 16);
  EXPECT_EQ(cluster.getCoordinates(0), (llvm::SmallVector<int64_t>{0, 0, 0}));
  EXPECT_EQ(cluster.getCoordinates(3), (llvm::SmallVector<int64_t>{0, 0, 3}));
  EXPECT_EQ(cluster.getCoordinates(4), (llvm::SmallVector<int64_t>{0, 1, 0}));
  EXPECT_EQ(cluster.getCoordinates(8), (llvm::SmallVector<int64_t>{1, 0, 0}));
  EXPECT_EQ(cluster.getCoordinates(13), (llvm::SmallVector<int64_t>{1, 1, 1}));
  EXPECT_EQ(cluster.getCoordinates(15), (llvm::SmallVector<int64_t>{1, 1, 3}));
}

TEST(ClusterTest, ConnectingLevel) {
  Cluster cluster = getPreset("gcp-v100x8:nodes=2");
  auto levelName = [&](int64_t a, int64_t b) -> std::string {
    std::optional<unsigned> level = cluster.getConnectingLevel(a, b);
    return level ? cluster.levels[*level].name : "<none>";
  };
  EXPECT_EQ(levelName(0, 3), "gpu");
  EXPECT_EQ(levelName(3, 0), "gpu");
  EXPECT_EQ(levelName(0, 4), "cpu");
  EXPECT_EQ(levelName(3, 4), "cpu");
  EXPECT_EQ(levelName(0, 8), "node");
  EXPECT_EQ(levelName(7, 8), "node");
  EXPECT_EQ(levelName(12, 15), "gpu");
  EXPECT_EQ(levelName(5, 5), "<none>");
}

TEST(ClusterTest, SpanningLevel) {
  Cluster cluster = getPreset("gcp-v100x8:nodes=2");
  auto levelName = [&](llvm::ArrayRef<int64_t> group) -> std::string {
    std::optional<unsigned> level = cluster.getSpanningLevel(group);
    return level ? cluster.levels[*level].name : "<none>";
  };
  EXPECT_EQ(levelName({0, 1, 2, 3}), "gpu");
  EXPECT_EQ(levelName({0, 1, 2, 3, 4, 5, 6, 7}), "cpu");
  EXPECT_EQ(levelName({5, 4, 6}), "gpu");
  // The outermost level wins even when it is not spanned by the first pair.
  EXPECT_EQ(levelName({0, 1, 5, 9}), "node");
  EXPECT_EQ(levelName({0, 8}), "node");
  EXPECT_EQ(levelName({3}), "<none>");
  EXPECT_EQ(levelName({}), "<none>");
}

TEST(ClusterTest, PeakFlopsOnlyIntegersFallBackToF32) {
  Cluster cluster = getPreset("dgx1-v100");
  EXPECT_EQ(cluster.device.getPeakFlops("f16"), 125e12);
  EXPECT_EQ(cluster.device.getPeakFlops("f32"), 15.7e12);
  // V100 has no bf16 entry: bf16 ops have no price (the simulator reports
  // them), while integer and index ops run at the f32 rate.
  EXPECT_EQ(cluster.device.getPeakFlops("bf16"), std::nullopt);
  EXPECT_EQ(cluster.device.getPeakFlops("i64"), 15.7e12);
  EXPECT_EQ(cluster.device.getPeakFlops("i1"), 15.7e12);
  EXPECT_EQ(cluster.device.getPeakFlops("index"), 15.7e12);

  DeviceSpec device;
  EXPECT_EQ(device.getPeakFlops("f32"), std::nullopt);
  EXPECT_EQ(device.getPeakFlops("i32"), std::nullopt);
  device.peakFlops["f16"] = 1e12;
  EXPECT_EQ(device.getPeakFlops("f16"), 1e12);
  EXPECT_EQ(device.getPeakFlops("f64"), std::nullopt);
}

//===----------------------------------------------------------------------===//
// verifyCluster
//===----------------------------------------------------------------------===//

TEST(ClusterTest, VerifyRejectsBadFields) {
  Cluster valid = getPreset("dgx-h100");
  struct Case {
    const char *what;
    std::function<void(Cluster &)> mutate;
    const char *expected;
  };
  const Case cases[] = {
      {"no levels", [](Cluster &c) { c.levels.clear(); }, "has no levels"},
      {"empty name", [](Cluster &c) { c.levels[1].name = ""; },
       "level 1 has an empty name"},
      {"duplicate name", [](Cluster &c) { c.levels[1].name = "node"; },
       "duplicate level name 'node'"},
      {"zero size", [](Cluster &c) { c.levels[1].size = 0; },
       "level 'gpu': size must be >= 1, got 0"},
      {"zero bandwidth", [](Cluster &c) { c.levels[0].link.bandwidth = 0; },
       "level 'node': link bandwidth"},
      {"infinite bandwidth",
       [](Cluster &c) {
         c.levels[0].link.bandwidth = std::numeric_limits<double>::infinity();
       },
       "level 'node': link bandwidth"},
      {"NaN latency",
       [](Cluster &c) {
         c.levels[0].link.latency = std::numeric_limits<double>::quiet_NaN();
       },
       "level 'node': link latency"},
      {"negative latency", [](Cluster &c) { c.levels[0].link.latency = -1; },
       "level 'node': link latency"},
      {"zero sharedBy", [](Cluster &c) { c.levels[0].link.sharedBy = 0; },
       "level 'node': link sharedBy must be >= 1"},
      {"too many devices", [](Cluster &c) { c.levels[0].size = 1 << 22; },
       "exceeds the limit of 16777216"},
      {"overflow",
       [](Cluster &c) {
         c.levels[0].size = int64_t(1) << 40;
         c.levels[1].size = int64_t(1) << 40;
       },
       "exceeds the limit of 16777216"},
      {"int64 overflow",
       [](Cluster &c) {
         c.levels = {c.levels[0], c.levels[1]};
         c.levels[0].size = std::numeric_limits<int64_t>::max();
       },
       "total device count"},
      {"no flops", [](Cluster &c) { c.device.peakFlops.clear(); },
       "device has no peak flop/s entries"},
      {"no f32 flops", [](Cluster &c) { c.device.peakFlops.erase("f32"); },
       "device has no peak flop/s for 'f32'"},
      {"zero flops", [](Cluster &c) { c.device.peakFlops["f16"] = 0; },
       "device peak flop/s for 'f16'"},
      {"zero memory bandwidth",
       [](Cluster &c) { c.device.memoryBandwidth = 0; },
       "device memory bandwidth"},
      {"zero capacity", [](Cluster &c) { c.device.memoryCapacity = 0; },
       "device memory capacity must be positive, got 0"},
      {"negative overhead", [](Cluster &c) { c.device.launchOverhead = -1; },
       "device launch overhead"},
  };
  for (const Case &c : cases) {
    Cluster cluster = valid;
    c.mutate(cluster);
    COLLECT_ERRORS(errors);
    EXPECT_TRUE(failed(verifyCluster(cluster, errorsFn))) << c.what;
    ASSERT_EQ(errors.size(), 1u) << c.what;
    EXPECT_NE(errors[0].find(c.expected), std::string::npos)
        << c.what << ": " << errors[0];
  }
}

TEST(ClusterTest, VerifyAcceptsLimit) {
  Cluster cluster = getPreset("distir-uniform");
  cluster.levels[0].size = 1 << 12;
  cluster.levels[1].size = 1 << 12;
  COLLECT_ERRORS(errors);
  EXPECT_TRUE(succeeded(verifyCluster(cluster, errorsFn)));
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(cluster.getNumDevices(), 1 << 24);
}

//===----------------------------------------------------------------------===//
// Presets
//===----------------------------------------------------------------------===//

TEST(ClusterTest, PresetNamesAreSorted) {
  llvm::ArrayRef<llvm::StringRef> names = getClusterPresetNames();
  EXPECT_TRUE(llvm::is_sorted(names));
  std::vector<std::string> expected = {
      "aws-p3.8xlarge", "dgx-a100",       "dgx-h100",    "dgx1-v100",
      "dgx2-v100x16",   "distir-uniform", "gcp-a100x16", "gcp-v100x8"};
  std::vector<std::string> actual;
  for (llvm::StringRef name : names)
    actual.push_back(name.str());
  EXPECT_EQ(actual, expected);
}

TEST(ClusterTest, EveryPresetVerifiesAndRoundTrips) {
  for (llvm::StringRef name : getClusterPresetNames()) {
    SCOPED_TRACE(name.str());
    Cluster cluster = getPreset(name);
    EXPECT_EQ(cluster.name, name.str());
    EXPECT_EQ(cluster.levels.front().name, "node");
    EXPECT_EQ(cluster.levels.front().size, 1);

    COLLECT_ERRORS(errors);
    EXPECT_TRUE(succeeded(verifyCluster(cluster, errorsFn)));

    mlir::FailureOr<Cluster> parsed =
        parseClusterJSON(toJSONText(cluster), errorsFn);
    ASSERT_TRUE(succeeded(parsed)) << (errors.empty() ? "" : errors.front());
    EXPECT_EQ(*parsed, cluster);
    EXPECT_TRUE(errors.empty());

    // Also through the compact printer.
    std::string compact = llvm::formatv("{0}", clusterToJSON(cluster)).str();
    parsed = parseClusterJSON(compact, errorsFn);
    ASSERT_TRUE(succeeded(parsed));
    EXPECT_EQ(*parsed, cluster);
  }
}

TEST(ClusterTest, NodesOptionScalesEveryPreset) {
  for (llvm::StringRef name : getClusterPresetNames()) {
    SCOPED_TRACE(name.str());
    Cluster one = getPreset(name);
    Cluster three = getPreset((name + ":nodes=3").str());
    EXPECT_EQ(three.getNumDevices(), 3 * one.getNumDevices());
    EXPECT_EQ(three.levels[0].size, 3);
    EXPECT_EQ(three.name, (name + ":nodes=3").str());
    EXPECT_EQ(three.device, one.device);
  }
}

TEST(ClusterTest, DistIRUniformDevicesOption) {
  Cluster cluster = getPreset("distir-uniform:devices=8,nodes=2");
  EXPECT_EQ(cluster.name, "distir-uniform:devices=8,nodes=2");
  EXPECT_EQ(cluster.getNumDevices(), 16);
  ASSERT_EQ(cluster.levels.size(), 2u);
  EXPECT_EQ(cluster.levels[1].name, "device");
  EXPECT_EQ(cluster.levels[1].size, 8);
  for (const LevelSpec &level : cluster.levels)
    EXPECT_EQ(level.link, (LinkSpec{3.125e9, 0, 1}));
  EXPECT_EQ(getPreset("distir-uniform").getNumDevices(), 4);
  // Option values are spelled canonically in the name.
  EXPECT_EQ(getPreset("distir-uniform:devices=08").name,
            "distir-uniform:devices=8");
}

TEST(ClusterTest, PresetValues) {
  Cluster h100 = getPreset("dgx-h100:nodes=2");
  ASSERT_EQ(h100.levels.size(), 2u);
  EXPECT_EQ(h100.levels[0].link, (LinkSpec{5e10, 5e-6, 1}));
  EXPECT_EQ(h100.levels[1].link, (LinkSpec{450e9, 2e-6, 1}));
  EXPECT_EQ(h100.levels[1].size, 8);
  EXPECT_EQ(h100.device.peakFlops.at("bf16"), 989e12);
  EXPECT_EQ(h100.device.memoryCapacity, 85899345920);
  EXPECT_EQ(h100.device.memoryBandwidth, 3.35e12);

  Cluster gcp = getPreset("gcp-a100x16");
  EXPECT_EQ(gcp.levels[0].link, (LinkSpec{7.5e9, 2.5e-5, 16}));
  EXPECT_EQ(gcp.device.memoryCapacity, 42949672960);
  EXPECT_EQ(gcp.device.memoryBandwidth, 1555e9);

  Cluster v100x8 = getPreset("gcp-v100x8");
  EXPECT_EQ(v100x8.levels[0].link, (LinkSpec{7.5e9, 2.5e-5, 8}));
  EXPECT_EQ(v100x8.levels[1].link, (LinkSpec{32e9, 3e-6, 1}));
  EXPECT_EQ(v100x8.levels[2].link, (LinkSpec{135e9, 2e-6, 1}));

  Cluster aws = getPreset("aws-p3.8xlarge");
  EXPECT_EQ(aws.levels[0].link, (LinkSpec{1.25e9, 2.5e-5, 4}));
  EXPECT_EQ(aws.device.memoryCapacity, 17179869184);

  Cluster dgx1 = getPreset("dgx1-v100");
  EXPECT_EQ(dgx1.levels[0].link, (LinkSpec{1.25e10, 5e-6, 2}));
  EXPECT_EQ(dgx1.device.memoryCapacity, 34359738368);
  EXPECT_EQ(getPreset("dgx2-v100x16").getNumDevices(), 16);
  EXPECT_EQ(getPreset("dgx-a100").levels[0].link, (LinkSpec{2.5e10, 5e-6, 1}));
}

TEST(ClusterTest, PresetErrors) {
  struct Case {
    const char *spec;
    std::vector<const char *> expected;
  };
  const Case cases[] = {
      {"dgx-h200",
       {"unknown cluster preset 'dgx-h200'", "dgx-h100", "distir-uniform",
        "aws-p3.8xlarge"}},
      {"", {"unknown cluster preset ''"}},
      {"dgx-h100:gpus=4", {"unknown option 'gpus'", "'dgx-h100'", "nodes"}},
      {"dgx-h100:devices=4", {"unknown option 'devices'"}},
      {"dgx-h100:nodes=abc", {"invalid value 'abc' for option 'nodes'"}},
      {"dgx-h100:nodes=0", {"invalid value '0' for option 'nodes'"}},
      {"dgx-h100:nodes=-2", {"invalid value '-2'"}},
      {"dgx-h100:nodes=99999999999999999999999", {"invalid value"}},
      {"distir-uniform:devices=2.5", {"invalid value '2.5'"}},
      {"dgx-h100:nodes=2,nodes=3", {"duplicate option 'nodes'"}},
      {"dgx-h100:", {"malformed option ''", "expected key=value"}},
      {"dgx-h100:nodes", {"malformed option 'nodes'"}},
      {"dgx-h100:nodes=2,", {"malformed option ''"}},
      {"dgx-h100:=2", {"malformed option '=2'"}},
      {"dgx-h100:nodes=1000000000", {"exceeds the limit"}},
  };
  for (const Case &c : cases) {
    COLLECT_ERRORS(errors);
    EXPECT_TRUE(failed(getClusterPreset(c.spec, errorsFn))) << c.spec;
    ASSERT_EQ(errors.size(), 1u) << c.spec;
    for (const char *expected : c.expected)
      EXPECT_NE(errors[0].find(expected), std::string::npos)
          << c.spec << ": " << errors[0];
  }
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

TEST(ClusterTest, ParseValidJSON) {
  COLLECT_ERRORS(errors);
  mlir::FailureOr<Cluster> cluster = parseClusterJSON(kValidJSON, errorsFn);
  ASSERT_TRUE(succeeded(cluster)) << (errors.empty() ? "" : errors.front());
  EXPECT_EQ(cluster->name, "test");
  ASSERT_EQ(cluster->levels.size(), 2u);
  EXPECT_EQ(cluster->levels[0].link, (LinkSpec{5e10, 5e-6, 1}));
  // shared_by defaults to 1.
  EXPECT_EQ(cluster->levels[1].link, (LinkSpec{4.5e11, 2e-6, 1}));
  EXPECT_EQ(cluster->device.memoryCapacity, 85899345920);
  EXPECT_EQ(cluster->device.peakFlops.size(), 2u);
  EXPECT_EQ(cluster->device.launchOverhead, 1e-5);
  EXPECT_EQ(cluster->getNumDevices(), 16);
}

TEST(ClusterTest, ParseDefaults) {
  // latency, shared_by and launch_overhead are optional.
  std::string text = R"({"name": "x",
    "levels": [{"name": "gpu", "size": 4, "link": {"bandwidth": 1e9}}],
    "device": {"peak_flops": {"f32": 1e12}, "memory_bandwidth": 1e11,
               "memory_capacity": 1024}})";
  COLLECT_ERRORS(errors);
  mlir::FailureOr<Cluster> cluster = parseClusterJSON(text, errorsFn);
  ASSERT_TRUE(succeeded(cluster)) << (errors.empty() ? "" : errors.front());
  EXPECT_EQ(cluster->levels[0].link, (LinkSpec{1e9, 0, 1}));
  EXPECT_EQ(cluster->device.launchOverhead, 0);
  // Integral doubles are accepted where integers are expected.
  text = replaceOnce(text, "\"size\": 4", "\"size\": 4.0");
  cluster = parseClusterJSON(text, errorsFn);
  ASSERT_TRUE(succeeded(cluster));
  EXPECT_EQ(cluster->levels[0].size, 4);
}

TEST(ClusterTest, DoublesRoundTripExactly) {
  Cluster cluster = getPreset("dgx-h100");
  cluster.levels[0].link.bandwidth = 0.1;
  cluster.levels[0].link.latency = 1.0 / 3.0;
  cluster.levels[1].link.bandwidth = DBL_MAX;
  cluster.levels[1].link.latency = std::numeric_limits<double>::denorm_min();
  cluster.device.peakFlops["f32"] = 123456789.123456789;
  cluster.device.peakFlops["f16"] = 1e16; // integral: printed without exponent
  cluster.device.peakFlops["bf16"] = 1e300;
  cluster.device.peakFlops["i8"] = DBL_MIN;
  cluster.device.memoryBandwidth = std::nextafter(3.35e12, 1e13);
  cluster.device.memoryCapacity = std::numeric_limits<int64_t>::max();
  cluster.device.launchOverhead = 2.0 / 7.0;

  COLLECT_ERRORS(errors);
  ASSERT_TRUE(succeeded(verifyCluster(cluster, errorsFn)));
  mlir::FailureOr<Cluster> parsed =
      parseClusterJSON(toJSONText(cluster), errorsFn);
  ASSERT_TRUE(succeeded(parsed)) << (errors.empty() ? "" : errors.front());
  EXPECT_EQ(*parsed, cluster);
  EXPECT_EQ(parsed->levels[0].link.bandwidth, 0.1);
  EXPECT_EQ(parsed->device.memoryBandwidth, std::nextafter(3.35e12, 1e13));
}

TEST(ClusterTest, JSONErrorsNamePaths) {
  struct Case {
    const char *what;
    std::string text;
    std::vector<const char *> expected;
  };
  std::string valid = kValidJSON;
  const Case cases[] = {
      {"syntax error", R"({"name": "x",)", {"invalid JSON: line 1, column"}},
      {"syntax error on a later line",
       replaceOnce(valid, "\"size\": 8,", "\"size\": 8"),
       {"invalid JSON: line 6, column", "expected , or }"}},
      {"empty text", "", {"invalid JSON"}},
      {"not an object", "[1, 2]", {"$: expected an object, got an array"}},
      {"missing cluster name",
       replaceOnce(valid, "\"name\": \"test\",", ""),
       {"$: missing required key 'name'"}},
      {"missing size",
       replaceOnce(valid, "\"size\": 8,", ""),
       {"$.levels[1]: missing required key 'size'"}},
      {"missing bandwidth",
       replaceOnce(valid, "\"bandwidth\": 4.5e11, ", ""),
       {"$.levels[1].link: missing required key 'bandwidth'"}},
      {"misspelled device",
       replaceOnce(valid, "\"device\"", "\"devise\""),
       {"$.devise: unknown key (did you mean 'device'?)"}},
      {"missing memory_capacity",
       replaceOnce(valid, "\"memory_capacity\": 85899345920,", ""),
       {"$.device: missing required key 'memory_capacity'"}},
      {"unknown key",
       replaceOnce(valid, "\"bandwidth\": 4.5e11", "\"bandwith\": 4.5e11"),
       {"$.levels[1].link.bandwith: unknown key", "did you mean 'bandwidth'?"}},
      {"unknown unrelated key",
       replaceOnce(valid, "\"name\": \"gpu\",", "\"name\": \"gpu\", \"x\": 1,"),
       {"$.levels[1].x: unknown key", "name, size, link"}},
      {"wrong type size",
       replaceOnce(valid, "\"size\": 8", "\"size\": \"8\""),
       {"$.levels[1].size: expected an integer, got a string"}},
      {"fractional size",
       replaceOnce(valid, "\"size\": 8", "\"size\": 2.5"),
       {"$.levels[1].size: expected an integer, got 2.5"}},
      {"wrong type name",
       replaceOnce(valid, "\"name\": \"gpu\"", "\"name\": 3"),
       {"$.levels[1].name: expected a string, got 3"}},
      {"wrong type levels",
       R"({"name": "x", "levels": {"gpu": 8}, "device": {}})",
       {"$.levels: expected an array, got an object"}},
      {"wrong type link",
       replaceOnce(valid,
                   "\"link\": {\"bandwidth\": 4.5e11, "
                   "\"latency\": 2e-6}",
                   "\"link\": null"),
       {"$.levels[1].link: expected an object, got null"}},
      {"wrong type bandwidth",
       replaceOnce(valid, "\"bandwidth\": 4.5e11", "\"bandwidth\": true"),
       {"$.levels[1].link.bandwidth: expected a number, got true"}},
      {"negative bandwidth",
       replaceOnce(valid, "\"bandwidth\": 4.5e11", "\"bandwidth\": -1"),
       {"$.levels[1].link.bandwidth: expected a positive number, got -1"}},
      {"infinite bandwidth",
       replaceOnce(valid, "\"bandwidth\": 4.5e11", "\"bandwidth\": 1e999"),
       {"$.levels[1].link.bandwidth: expected a positive number, got inf"}},
      {"negative latency",
       replaceOnce(valid, "\"latency\": 5e-6", "\"latency\": -5e-6"),
       {"$.levels[0].link.latency: expected a non-negative number"}},
      {"zero shared_by",
       replaceOnce(valid, "\"shared_by\": 1", "\"shared_by\": 0"),
       {"$.levels[0].link.shared_by: expected a positive integer, got 0"}},
      {"zero size",
       replaceOnce(valid, "\"size\": 2", "\"size\": 0"),
       {"$.levels[0].size: expected a positive integer, got 0"}},
      {"huge size",
       replaceOnce(valid, "\"size\": 2", "\"size\": 9223372036854775808"),
       {"$.levels[0].size: expected an integer"}},
      {"too many devices",
       replaceOnce(valid, "\"size\": 2", "\"size\": 4194304"),
       {"$.levels[1].size: total device count exceeds the limit of 16777216"}},
      {"empty level name",
       replaceOnce(valid, "\"name\": \"gpu\"", "\"name\": \"\""),
       {"$.levels[1].name: expected a non-empty string"}},
      {"duplicate level name",
       replaceOnce(valid, "\"name\": \"gpu\"", "\"name\": \"node\""),
       {"$.levels[1].name: duplicate level name 'node'", "$.levels[0].name"}},
      {"no levels",
       R"({"name": "x", "levels": [], "device": {"peak_flops": {"f32": 1},
           "memory_bandwidth": 1, "memory_capacity": 1}})",
       {"$.levels: expected at least one level"}},
      {"empty peak_flops",
       replaceOnce(valid, "{\"f32\": 6.7e13, \"bf16\": 9.89e14}", "{}"),
       {"$.device.peak_flops: expected at least one element type"}},
      {"zero peak flops",
       replaceOnce(valid, "\"bf16\": 9.89e14", "\"bf16\": 0"),
       {"$.device.peak_flops.bf16: expected a positive number, got 0"}},
      {"odd element type name",
       replaceOnce(valid, "\"bf16\": 9.89e14", "\"b f\": \"x\""),
       {"$.device.peak_flops[\"b f\"]: expected a number, got a string"}},
      {"wrong type memory_capacity",
       replaceOnce(valid, "85899345920", "\"80GB\""),
       {"$.device.memory_capacity: expected an integer, got a string"}},
      {"duplicate key",
       replaceOnce(valid, "\"bandwidth\": 4.5e11",
                   "\"bandwidth\": 4.5e11, "
                   "\"bandwidth\": 4.5e12"),
       {"$.levels[1].link.bandwidth: duplicate key"}},
      {"duplicate escaped key",
       replaceOnce(valid, "\"f32\": 6.7e13",
                   "\"f32\": 6.7e13, \"\\u0066\\\"32\": 1, "
                   "\"f\\\"32\": 2"),
       {"$.device.peak_flops[\"f\\\"32\"]: duplicate key"}},
      {"same key in different objects is fine until a real error",
       replaceOnce(valid, "\"size\": 2", "\"size\": 0"),
       {"$.levels[0].size: expected a positive integer"}},
      {"negative launch_overhead",
       replaceOnce(valid, "\"launch_overhead\": 1e-5",
                   "\"launch_overhead\": -1e-5"),
       {"$.device.launch_overhead: expected a non-negative number"}},
  };
  for (const Case &c : cases) {
    COLLECT_ERRORS(errors);
    EXPECT_TRUE(failed(parseClusterJSON(c.text, errorsFn))) << c.what;
    ASSERT_EQ(errors.size(), 1u) << c.what;
    for (const char *expected : c.expected)
      EXPECT_NE(errors[0].find(expected), std::string::npos)
          << c.what << ": " << errors[0];
    // Message conventions: lowercase start (after the path), no final period.
    EXPECT_NE(errors[0].back(), '.') << c.what << ": " << errors[0];
  }
}

TEST(ClusterTest, UnknownKeyIsDeterministic) {
  // Several unknown keys: the smallest one is reported, whatever the order.
  std::string text = replaceOnce(kValidJSON, "\"name\": \"test\",",
                                 "\"name\": \"test\", \"zz\": 1, \"aa\": 2,");
  COLLECT_ERRORS(errors);
  EXPECT_TRUE(failed(parseClusterJSON(text, errorsFn)));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("$.aa: unknown key"), std::string::npos)
      << errors[0];
}

//===----------------------------------------------------------------------===//
// resolveCluster
//===----------------------------------------------------------------------===//

/// A temporary file removed at the end of the scope.
struct TempFile {
  llvm::SmallString<128> path;

  explicit TempFile(llvm::StringRef contents) {
    int fd;
    if (llvm::sys::fs::createTemporaryFile("distir-cluster", "json", fd, path))
      return;
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << contents;
  }
  ~TempFile() {
    if (!path.empty())
      llvm::sys::fs::remove(path);
  }
};

TEST(ClusterTest, ResolvePreset) {
  COLLECT_ERRORS(errors);
  mlir::FailureOr<Cluster> cluster =
      resolveCluster("dgx-a100:nodes=2", errorsFn);
  ASSERT_TRUE(succeeded(cluster));
  EXPECT_EQ(cluster->name, "dgx-a100:nodes=2");
  EXPECT_EQ(cluster->getNumDevices(), 16);
  EXPECT_TRUE(failed(resolveCluster("nope", errorsFn)));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("unknown cluster preset 'nope'"), std::string::npos);
}

TEST(ClusterTest, ResolveFile) {
  Cluster expected = getPreset("gcp-v100x8:nodes=2");
  TempFile file(toJSONText(expected));
  ASSERT_FALSE(file.path.empty());
  COLLECT_ERRORS(errors);
  mlir::FailureOr<Cluster> cluster = resolveCluster(file.path, errorsFn);
  ASSERT_TRUE(succeeded(cluster)) << (errors.empty() ? "" : errors.front());
  EXPECT_EQ(*cluster, expected);
}

TEST(ClusterTest, ResolveFileErrorNamesFile) {
  TempFile file(R"({"name": "x"})");
  ASSERT_FALSE(file.path.empty());
  COLLECT_ERRORS(errors);
  EXPECT_TRUE(failed(resolveCluster(file.path, errorsFn)));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0],
            (file.path + ": $: missing required key 'levels'").str());
}

TEST(ClusterTest, ResolveMissingFile) {
  for (const char *spec :
       {"/nonexistent/dir/cluster.json", "missing.json", "some/dir/cluster"}) {
    COLLECT_ERRORS(errors);
    EXPECT_TRUE(failed(resolveCluster(spec, errorsFn))) << spec;
    ASSERT_EQ(errors.size(), 1u) << spec;
    std::string prefix =
        "cannot open cluster file '" + std::string(spec) + "': ";
    EXPECT_EQ(errors[0].rfind(prefix, 0), 0u) << errors[0];
    EXPECT_GT(errors[0].size(), prefix.size()) << errors[0];
  }
}

TEST(ClusterTest, ResolveFixture) {
  // The fixture lives in the source tree next to the lit tests.
  llvm::SmallString<256> path(DISTIR_SOURCE_DIR);
  llvm::sys::path::append(path, "test", "Cluster", "Inputs", "dgx-h100x2.json");
  ASSERT_TRUE(llvm::sys::fs::exists(path))
      << "missing fixture " << path.str().str();

  COLLECT_ERRORS(errors);
  mlir::FailureOr<Cluster> cluster = resolveCluster(path, errorsFn);
  ASSERT_TRUE(succeeded(cluster)) << (errors.empty() ? "" : errors.front());
  EXPECT_EQ(cluster->name, "dgx-h100x2");
  EXPECT_EQ(cluster->getNumDevices(), 16);
  // Same machine as the preset, less f64/tf32 peaks.
  Cluster preset = getPreset("dgx-h100:nodes=2");
  EXPECT_EQ(cluster->levels, preset.levels);
  EXPECT_EQ(cluster->device.peakFlops.at("bf16"),
            preset.device.peakFlops.at("bf16"));
  EXPECT_EQ(cluster->device.memoryCapacity, preset.device.memoryCapacity);
}

} // namespace
