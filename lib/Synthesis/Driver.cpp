//===- Driver.cpp - A synthesis request, from text to priced programs -----===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Synthesis/Driver.h"
#include "DistIR/Analysis/CollectiveCost.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace distir;
using namespace distir::synth;

namespace {
/// Parses a positive integer; rejects signs, blanks and overflow.
std::optional<int64_t> parseSize(llvm::StringRef text) {
  int64_t value;
  if (text.empty() || !llvm::all_of(text, llvm::isDigit) ||
      text.getAsInteger(10, value) || value < 1)
    return std::nullopt;
  return value;
}

/// Parses `NAME:SIZE,...` (or, with `allowBareSize`, `SIZE` entries named
/// `<prefix><index>`).
std::optional<Hierarchy>
parseNamedSizes(llvm::StringRef text, llvm::StringRef what, bool allowBareSize,
                llvm::StringRef prefix,
                llvm::function_ref<void(const llvm::Twine &)> fail) {
  Hierarchy result;
  if (text.trim().empty()) {
    fail(llvm::Twine("empty ") + what);
    return std::nullopt;
  }
  llvm::SmallVector<llvm::StringRef> items;
  text.split(items, ',');
  llvm::StringSet<> names;
  for (auto [index, rawItem] : llvm::enumerate(items)) {
    llvm::StringRef item = rawItem.trim();
    llvm::StringRef name, sizeText;
    if (item.contains(':')) {
      std::tie(name, sizeText) = item.split(':');
      name = name.trim();
      sizeText = sizeText.trim();
    } else if (allowBareSize) {
      sizeText = item;
    }
    if (!item.contains(':') && !allowBareSize) {
      fail(llvm::Twine("invalid ") + what + " entry '" + item +
           "': expected NAME:SIZE");
      return std::nullopt;
    }
    if (item.contains(':') && name.empty()) {
      fail(llvm::Twine("invalid ") + what + " entry '" + item +
           "': empty name");
      return std::nullopt;
    }
    std::optional<int64_t> size = parseSize(sizeText);
    if (!size || *size > (int64_t(1) << 24)) {
      fail(llvm::Twine("invalid ") + what + " entry '" + item +
           "': size must be an integer from 1 to 16777216");
      return std::nullopt;
    }
    std::string fullName =
        name.empty() ? (prefix + llvm::Twine(index)).str() : name.str();
    if (!names.insert(fullName).second) {
      fail(llvm::Twine("duplicate ") + what + " name '" + fullName + "'");
      return std::nullopt;
    }
    result.push_back({fullName, *size});
  }
  return result;
}

/// Product of sizes, or std::nullopt past 2^24 devices.
std::optional<int64_t> getProduct(const Hierarchy &levels) {
  int64_t product = 1;
  for (const NamedSize &level : levels) {
    product *= level.size;
    if (product > (int64_t(1) << 24))
      return std::nullopt;
  }
  return product;
}

llvm::json::Array sizesToJSON(const Hierarchy &levels) {
  llvm::json::Array result;
  for (const NamedSize &level : levels)
    result.push_back(
        llvm::json::Object{{"name", level.name}, {"size", level.size}});
  return result;
}

llvm::json::Value programToJSON(const Hierarchy &hierarchy,
                                const PricedProgram &priced) {
  llvm::json::Array instructions;
  for (const Instruction &instruction : priced.program)
    instructions.push_back(formatInstruction(hierarchy, instruction));
  return llvm::json::Object{{"instructions", std::move(instructions)},
                            {"time", priced.time}};
}
} // namespace

std::optional<SynthesisReport>
synth::runSynthesis(const SynthesisRequest &request,
                    llvm::function_ref<void(const llvm::Twine &)> fail) {
  auto failed = [&](const llvm::Twine &message) {
    fail(message);
    return std::nullopt;
  };
  if (!request.hierarchy && request.cluster.empty())
    return failed("no hierarchy (and no cluster to take it from)");
  std::optional<CollectiveAlgorithm> algorithm =
      symbolizeCollectiveAlgorithm(request.algorithm);
  if (!algorithm)
    return failed("unknown algorithm '" + request.algorithm +
                  "' (expected 'ring' or 'tree')");
  if (request.maxSize < 1 || request.maxSize > kMaxProgramSize)
    return failed("the largest program size must be between 1 and " +
                  llvm::Twine(kMaxProgramSize));
  if (!(request.bytes > 0) || request.bytes > 1e18)
    return failed("the bytes reduced must be a positive number");

  SynthesisReport report;
  // The cluster first: it may supply the hierarchy.
  std::optional<Cluster> cluster;
  if (!request.cluster.empty()) {
    std::string error;
    mlir::FailureOr<Cluster> resolved =
        resolveCluster(request.cluster, [&error](const llvm::Twine &message) {
          if (error.empty())
            error = message.str();
        });
    if (mlir::failed(resolved))
      return failed(error);
    cluster = std::move(*resolved);
  }
  if (request.hierarchy) {
    std::optional<Hierarchy> parsed =
        parseNamedSizes(*request.hierarchy, "hierarchy", false, "", fail);
    if (!parsed)
      return std::nullopt;
    report.hierarchy = std::move(*parsed);
  } else {
    for (const LevelSpec &level : cluster->levels)
      report.hierarchy.push_back({level.name, level.size});
  }
  std::optional<int64_t> numDevices = getProduct(report.hierarchy);
  if (!numDevices)
    return failed("hierarchy has more than 16777216 devices");

  std::optional<Hierarchy> axes =
      parseNamedSizes(request.axes, "axes", true, "a", fail);
  if (!axes)
    return std::nullopt;
  report.axes = std::move(*axes);
  std::optional<int64_t> axesProduct = getProduct(report.axes);
  if (!axesProduct || *axesProduct != *numDevices)
    return failed("axes product " +
                  (axesProduct ? llvm::Twine(*axesProduct)
                               : llvm::Twine("(over 16777216)")) +
                  " does not match hierarchy product " +
                  llvm::Twine(*numDevices));

  llvm::SmallVector<llvm::StringRef> reduceItems;
  llvm::StringRef(request.reduce).split(reduceItems, ',');
  for (llvm::StringRef rawItem : reduceItems) {
    llvm::StringRef item = rawItem.trim();
    unsigned index;
    if (item.empty() || !llvm::all_of(item, llvm::isDigit) ||
        item.getAsInteger(10, index))
      return failed("invalid reduce index '" + item + "'");
    if (index >= report.axes.size())
      return failed("reduce index " + llvm::Twine(index) +
                    " out of range (there are " +
                    llvm::Twine(report.axes.size()) + " axes)");
    if (llvm::is_contained(report.reduceAxes, index))
      return failed("duplicate reduce index " + llvm::Twine(index));
    report.reduceAxes.push_back(index);
  }
  llvm::sort(report.reduceAxes);
  int64_t groupSize = 1;
  for (unsigned axis : report.reduceAxes)
    groupSize *= report.axes[axis].size;
  if (groupSize == 1)
    return failed("nothing to reduce: the reduced axes have size 1");
  if (groupSize > kMaxSynthesisDevices)
    return failed("the reduction spans " + llvm::Twine(groupSize) +
                  " devices; synthesis supports at most " +
                  llvm::Twine(kMaxSynthesisDevices));

  if (!cluster) {
    std::string error;
    mlir::FailureOr<Cluster> uniform = getClusterPreset(
        ("distir-uniform:devices=" + llvm::Twine(*numDevices)).str(),
        [&error](const llvm::Twine &message) { error = message.str(); });
    if (mlir::failed(uniform))
      return failed(error);
    cluster = std::move(*uniform);
  } else if (cluster->getNumDevices() != *numDevices) {
    return failed("hierarchy has " + llvm::Twine(*numDevices) +
                  " devices but cluster '" + cluster->name + "' has " +
                  llvm::Twine(cluster->getNumDevices()));
  }

  llvm::SmallVector<int64_t> axisSizes, levelSizes;
  for (const NamedSize &axis : report.axes)
    axisSizes.push_back(axis.size);
  for (const NamedSize &level : report.hierarchy)
    levelSizes.push_back(level.size);
  // Every placement of the axes on the levels is synthesized and priced:
  // deep hierarchies have combinatorially many (24 levels of 2 and axes
  // 256 x 65536 give C(24, 8) = 735471), so they are refused up front.
  if (enumerateParallelismMatrices(axisSizes, levelSizes, kMaxPlacements)
          .size() > kMaxPlacements)
    return failed("the axes can be placed on the hierarchy's " +
                  llvm::Twine(report.hierarchy.size()) +
                  " levels in more than " + llvm::Twine(kMaxPlacements) +
                  " ways, each synthesized and priced; merge levels "
                  "(e.g. node:2,gpu:8 instead of eight levels of 2)");
  CollectiveCostModel model(*cluster, *algorithm);
  SynthesisOptions options;
  options.maxSize = request.maxSize;
  options.masters = request.masters;
  options.bytes = request.bytes;
  options.maxWork = request.maxWork;
  bool exceeded = false;
  report.results = synthesizeAll(report.hierarchy, axisSizes, report.reduceAxes,
                                 model, options, &exceeded);
  if (exceeded)
    return failed(
        "synthesizing and pricing every program of up to " +
        llvm::Twine(request.maxSize) + " instructions on the " +
        llvm::Twine(*numDevices) + " devices would take more than " +
        llvm::Twine(kMaxSynthesisWork) +
        " work units (docs/design/limits.md); lower the program size or reduce "
        "over fewer devices");
  report.cluster = std::move(*cluster);
  return report;
}

llvm::json::Value synth::toJSON(const SynthesisRequest &request,
                                const SynthesisReport &report) {
  llvm::json::Array matrices;
  for (const MatrixResult &result : report.results) {
    llvm::json::Array rows;
    for (const std::vector<int64_t> &row : result.matrix)
      rows.push_back(llvm::json::Array(row));
    llvm::json::Array programs;
    for (const PricedProgram &priced : result.programs)
      programs.push_back(programToJSON(result.synthesis.levels, priced));
    llvm::json::Object matrix{
        {"matrix", std::move(rows)},
        {"synthesis_hierarchy", sizesToJSON(result.synthesis.levels)},
        {"num_programs", int64_t(result.programs.size())},
        {"programs", std::move(programs)},
        {"baseline_time", result.baselineTime}};
    if (!result.programs.empty()) {
      matrix["best"] =
          programToJSON(result.synthesis.levels, result.programs.front());
      matrix["speedup"] = result.baselineTime / result.programs.front().time;
    }
    matrices.push_back(std::move(matrix));
  }
  llvm::json::Array reduceArray;
  for (unsigned axis : report.reduceAxes)
    reduceArray.push_back(int64_t(axis));
  return llvm::json::Object{
      {"hierarchy", sizesToJSON(report.hierarchy)},
      {"axes", sizesToJSON(report.axes)},
      {"reduce", std::move(reduceArray)},
      {"cluster", report.cluster.name},
      {"algorithm", request.algorithm},
      {"bytes", request.bytes},
      {"max_size", int64_t(request.maxSize)},
      {"master_collectives",
       request.masters == MasterCollectives::All ? "all" : "allreduce"},
      {"matrices", std::move(matrices)}};
}
