//===- distir-synth.cpp - Hierarchical reduction synthesis driver ---------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Prints, for every placement of parallelism axes on a hierarchy, the valid
// reduction programs with their predicted times, the single-AllReduce
// baseline and the speedup of the best program. See
// docs/design/synthesis.md.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Analysis/CollectiveCost.h"
#include "DistIR/Cluster/Cluster.h"
#include "DistIR/Synthesis/Synthesis.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <string>

using namespace distir;
using namespace distir::synth;

namespace {
enum class OutputFormat { Text, JSON };

llvm::cl::OptionCategory category("distir-synth options");

llvm::cl::opt<std::string> hierarchyOpt(
    "hierarchy",
    llvm::cl::desc("System hierarchy, outermost first: NAME:SIZE,... "
                   "(default: the cluster's levels)"),
    llvm::cl::value_desc("levels"), llvm::cl::cat(category));
llvm::cl::opt<std::string>
    axesOpt("axes",
            llvm::cl::desc("Parallelism axis sizes: SIZE or NAME:SIZE, ..."),
            llvm::cl::value_desc("axes"), llvm::cl::cat(category));
llvm::cl::opt<std::string>
    reduceOpt("reduce",
              llvm::cl::desc("Indices of the axes to reduce over: I[,J...]"),
              llvm::cl::value_desc("indices"), llvm::cl::cat(category));
llvm::cl::opt<std::string> clusterOpt(
    "cluster",
    llvm::cl::desc("Cluster preset spec or JSON file that prices the "
                   "programs (default: distir-uniform with the hierarchy's "
                   "device count)"),
    llvm::cl::value_desc("spec"), llvm::cl::cat(category));
llvm::cl::opt<unsigned>
    maxSizeOpt("max-size",
               llvm::cl::desc("Largest program size, in instructions"),
               llvm::cl::init(5), llvm::cl::cat(category));
llvm::cl::opt<std::string>
    algoOpt("algo", llvm::cl::desc("NCCL algorithm: ring or tree"),
            llvm::cl::init("ring"), llvm::cl::cat(category));
llvm::cl::opt<double> bytesOpt("bytes",
                               llvm::cl::desc("Bytes each device reduces"),
                               llvm::cl::init(64.0 * 1024 * 1024),
                               llvm::cl::cat(category));
llvm::cl::opt<OutputFormat> formatOpt(
    "format", llvm::cl::desc("Output format"),
    llvm::cl::values(clEnumValN(OutputFormat::Text, "text", "human-readable"),
                     clEnumValN(OutputFormat::JSON, "json", "JSON")),
    llvm::cl::init(OutputFormat::Text), llvm::cl::cat(category));

/// Largest program size we accept: the search is exponential in it.
constexpr unsigned kMaxProgramSize = 8;
/// Most placements (parallelism matrices) of the axes that are synthesized.
constexpr size_t kMaxPlacements = 4096;

int fail(const llvm::Twine &message) {
  llvm::errs() << "error: " << message << "\n";
  return 1;
}

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
mlir::FailureOr<Hierarchy> parseNamedSizes(llvm::StringRef text,
                                           llvm::StringRef what,
                                           bool allowBareSize,
                                           llvm::StringRef prefix) {
  Hierarchy result;
  if (text.trim().empty()) {
    fail(llvm::Twine("empty ") + what);
    return mlir::failure();
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
      return mlir::failure();
    }
    if (item.contains(':') && name.empty()) {
      fail(llvm::Twine("invalid ") + what + " entry '" + item +
           "': empty name");
      return mlir::failure();
    }
    std::optional<int64_t> size = parseSize(sizeText);
    if (!size || *size > (int64_t(1) << 24)) {
      fail(llvm::Twine("invalid ") + what + " entry '" + item +
           "': size must be an integer from 1 to 16777216");
      return mlir::failure();
    }
    std::string fullName =
        name.empty() ? (prefix + llvm::Twine(index)).str() : name.str();
    if (!names.insert(fullName).second) {
      fail(llvm::Twine("duplicate ") + what + " name '" + fullName + "'");
      return mlir::failure();
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

std::string formatTime(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6e", seconds);
  return buf;
}

std::string formatNumber(double value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", value);
  return buf;
}

std::string formatSizes(const Hierarchy &levels) {
  std::string result;
  for (const NamedSize &level : levels) {
    if (!result.empty())
      result += " ";
    result += level.name + ":" + std::to_string(level.size);
  }
  return result;
}

std::string formatMatrix(const ParallelismMatrix &matrix) {
  std::string result = "[";
  for (auto [i, row] : llvm::enumerate(matrix)) {
    result += i ? ", [" : "[";
    for (auto [j, value] : llvm::enumerate(row))
      result += (j ? ", " : "") + std::to_string(value);
    result += "]";
  }
  return result + "]";
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

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "DistIR hierarchical reduction synthesis (P2)\n\n"
      "  distir-synth --hierarchy node:2,gpu:16 --axes 2,16 --reduce 1 "
      "--cluster gcp-a100x16:nodes=2\n");

  if (axesOpt.getNumOccurrences() == 0)
    return fail("missing --axes");
  if (reduceOpt.getNumOccurrences() == 0)
    return fail("missing --reduce");
  if (hierarchyOpt.getNumOccurrences() == 0 &&
      clusterOpt.getNumOccurrences() == 0)
    return fail("missing --hierarchy (or a --cluster to take it from)");
  std::optional<CollectiveAlgorithm> algorithm =
      symbolizeCollectiveAlgorithm(algoOpt);
  if (!algorithm)
    return fail("unknown algorithm '" + algoOpt +
                "' (expected 'ring' or 'tree')");
  if (maxSizeOpt < 1 || maxSizeOpt > kMaxProgramSize)
    return fail("--max-size must be between 1 and " +
                llvm::Twine(kMaxProgramSize));
  if (!(bytesOpt > 0) || bytesOpt > 1e18)
    return fail("--bytes must be a positive number");

  // The cluster first: it may supply the hierarchy.
  std::optional<Cluster> cluster;
  if (clusterOpt.getNumOccurrences()) {
    std::string error;
    auto onError = [&error](const llvm::Twine &message) {
      if (error.empty())
        error = message.str();
    };
    mlir::FailureOr<Cluster> resolved = resolveCluster(clusterOpt, onError);
    if (failed(resolved))
      return fail(error);
    cluster = std::move(*resolved);
  }

  Hierarchy hierarchy;
  if (hierarchyOpt.getNumOccurrences()) {
    mlir::FailureOr<Hierarchy> parsed =
        parseNamedSizes(hierarchyOpt, "hierarchy", false, "");
    if (failed(parsed))
      return 1;
    hierarchy = std::move(*parsed);
  } else {
    for (const LevelSpec &level : cluster->levels)
      hierarchy.push_back({level.name, level.size});
  }
  std::optional<int64_t> numDevices = getProduct(hierarchy);
  if (!numDevices)
    return fail("hierarchy has more than 16777216 devices");

  mlir::FailureOr<Hierarchy> axes = parseNamedSizes(axesOpt, "axes", true, "a");
  if (failed(axes))
    return 1;
  std::optional<int64_t> axesProduct = getProduct(*axes);
  if (!axesProduct || *axesProduct != *numDevices)
    return fail("axes product " +
                (axesProduct ? llvm::Twine(*axesProduct)
                             : llvm::Twine("(over 16777216)")) +
                " does not match hierarchy product " +
                llvm::Twine(*numDevices));

  llvm::SmallVector<unsigned> reduceAxes;
  llvm::SmallVector<llvm::StringRef> reduceItems;
  llvm::StringRef(reduceOpt).split(reduceItems, ',');
  for (llvm::StringRef rawItem : reduceItems) {
    llvm::StringRef item = rawItem.trim();
    unsigned index;
    if (item.empty() || !llvm::all_of(item, llvm::isDigit) ||
        item.getAsInteger(10, index))
      return fail("invalid reduce index '" + item + "'");
    if (index >= axes->size())
      return fail("reduce index " + llvm::Twine(index) +
                  " out of range (there are " + llvm::Twine(axes->size()) +
                  " axes)");
    if (llvm::is_contained(reduceAxes, index))
      return fail("duplicate reduce index " + llvm::Twine(index));
    reduceAxes.push_back(index);
  }
  llvm::sort(reduceAxes);
  int64_t groupSize = 1;
  for (unsigned axis : reduceAxes)
    groupSize *= (*axes)[axis].size;
  if (groupSize == 1)
    return fail("nothing to reduce: the reduced axes have size 1");
  if (groupSize > kMaxSynthesisDevices)
    return fail("the reduction spans " + llvm::Twine(groupSize) +
                " devices; synthesis supports at most " +
                llvm::Twine(kMaxSynthesisDevices));

  if (!cluster) {
    std::string error;
    auto onError = [&error](const llvm::Twine &message) {
      error = message.str();
    };
    mlir::FailureOr<Cluster> uniform = getClusterPreset(
        ("distir-uniform:devices=" + llvm::Twine(*numDevices)).str(), onError);
    if (failed(uniform))
      return fail(error);
    cluster = std::move(*uniform);
  } else if (cluster->getNumDevices() != *numDevices) {
    return fail("hierarchy has " + llvm::Twine(*numDevices) +
                " devices but cluster '" + cluster->name + "' has " +
                llvm::Twine(cluster->getNumDevices()));
  }

  llvm::SmallVector<int64_t> axisSizes, levelSizes;
  for (const NamedSize &axis : *axes)
    axisSizes.push_back(axis.size);
  for (const NamedSize &level : hierarchy)
    levelSizes.push_back(level.size);
  // Every placement of the axes on the levels is synthesized and priced:
  // deep hierarchies have combinatorially many (24 levels of 2 and axes
  // 256 x 65536 give C(24, 8) = 735471), so they are refused up front.
  if (enumerateParallelismMatrices(axisSizes, levelSizes, kMaxPlacements)
          .size() > kMaxPlacements)
    return fail("the axes can be placed on the hierarchy's " +
                llvm::Twine(hierarchy.size()) + " levels in more than " +
                llvm::Twine(kMaxPlacements) +
                " ways, each synthesized and priced; merge levels "
                "(e.g. node:2,gpu:8 instead of eight levels of 2)");
  CollectiveCostModel model(*cluster, *algorithm);
  SynthesisOptions options;
  options.maxSize = maxSizeOpt;
  options.bytes = bytesOpt;
  std::vector<MatrixResult> results =
      synthesizeAll(hierarchy, axisSizes, reduceAxes, model, options);

  llvm::SmallVector<std::string> reducedNames;
  for (unsigned axis : reduceAxes)
    reducedNames.push_back((*axes)[axis].name);

  if (formatOpt == OutputFormat::JSON) {
    llvm::json::Array matrices;
    for (const MatrixResult &result : results) {
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
    for (unsigned axis : reduceAxes)
      reduceArray.push_back(int64_t(axis));
    llvm::json::Object root{{"hierarchy", sizesToJSON(hierarchy)},
                            {"axes", sizesToJSON(*axes)},
                            {"reduce", std::move(reduceArray)},
                            {"cluster", cluster->name},
                            {"algorithm", algoOpt.getValue()},
                            {"bytes", bytesOpt.getValue()},
                            {"max_size", int64_t(maxSizeOpt)},
                            {"matrices", std::move(matrices)}};
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(root)))
                 << "\n";
    return 0;
  }

  llvm::raw_ostream &os = llvm::outs();
  os << "hierarchy: " << formatSizes(hierarchy) << "\n";
  os << "axes: " << formatSizes(*axes) << "\n";
  os << "reduce: " << llvm::join(reducedNames, ", ") << "\n";
  os << "cluster: " << cluster->name << " (" << algoOpt << ", "
     << formatNumber(bytesOpt) << " bytes per device)\n";
  os << "max size: " << maxSizeOpt << "\n";
  os << "parallelism matrices: " << results.size() << "\n";
  for (auto [index, result] : llvm::enumerate(results)) {
    const Hierarchy &levels = result.synthesis.levels;
    os << "\nmatrix " << index << ": " << formatMatrix(result.matrix) << "\n";
    os << "  synthesis hierarchy: " << formatSizes(levels) << "\n";
    os << "  valid programs: " << result.programs.size() << "\n";
    for (auto [rank, priced] : llvm::enumerate(result.programs))
      os << "  #" << rank << " " << formatTime(priced.time) << " s  "
         << formatProgram(levels, priced.program) << "\n";
    os << "  baseline AllReduce: " << formatTime(result.baselineTime) << " s\n";
    if (!result.programs.empty()) {
      const PricedProgram &best = result.programs.front();
      os << "  best: " << formatProgram(levels, best.program) << "  "
         << formatTime(best.time) << " s  speedup "
         << llvm::formatv("{0:F2}", result.baselineTime / best.time) << "x\n";
    }
  }
  return 0;
}
