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
#include "DistIR/Synthesis/Driver.h"
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
llvm::cl::opt<MasterCollectives> mastersOpt(
    "master-collectives",
    llvm::cl::desc("Collectives the Master form takes (docs/design/"
                   "synthesis.md)"),
    llvm::cl::values(
        clEnumValN(MasterCollectives::AllReduce, "allreduce",
                   "AllReduce only: the P2 paper's programs (default)"),
        clEnumValN(MasterCollectives::All, "all", "all five collectives")),
    llvm::cl::init(MasterCollectives::AllReduce), llvm::cl::cat(category));
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

int fail(const llvm::Twine &message) {
  llvm::errs() << "error: " << message << "\n";
  return 1;
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
  // Checked here to name the flags; the rest by runSynthesis.
  if (maxSizeOpt < 1 || maxSizeOpt > kMaxProgramSize)
    return fail("--max-size must be between 1 and " +
                llvm::Twine(kMaxProgramSize));
  if (!(bytesOpt > 0) || bytesOpt > 1e18)
    return fail("--bytes must be a positive number");

  SynthesisRequest request;
  if (hierarchyOpt.getNumOccurrences())
    request.hierarchy = hierarchyOpt;
  request.axes = axesOpt;
  request.reduce = reduceOpt;
  request.cluster = clusterOpt;
  request.maxSize = maxSizeOpt;
  request.masters = mastersOpt;
  request.algorithm = algoOpt;
  request.bytes = bytesOpt;
  std::optional<SynthesisReport> report =
      runSynthesis(request, [](const llvm::Twine &message) { fail(message); });
  if (!report)
    return 1;
  const Hierarchy &hierarchy = report->hierarchy;
  const Hierarchy *axes = &report->axes;
  const std::vector<MatrixResult> &results = report->results;
  const Cluster *cluster = &report->cluster;
  llvm::SmallVector<std::string> reducedNames;
  for (unsigned axis : report->reduceAxes)
    reducedNames.push_back((*axes)[axis].name);

  if (formatOpt == OutputFormat::JSON) {
    llvm::outs() << llvm::formatv("{0:2}", toJSON(request, *report)) << "\n";
    return 0;
  }

  llvm::raw_ostream &os = llvm::outs();
  os << "hierarchy: " << formatSizes(hierarchy) << "\n";
  os << "axes: " << formatSizes(*axes) << "\n";
  os << "reduce: " << llvm::join(reducedNames, ", ") << "\n";
  os << "cluster: " << cluster->name << " (" << algoOpt << ", "
     << formatNumber(bytesOpt) << " bytes per device)\n";
  os << "max size: " << maxSizeOpt << "\n";
  if (mastersOpt == MasterCollectives::All)
    os << "master form: all collectives\n";
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
