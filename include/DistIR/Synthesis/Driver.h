//===- Driver.h - A synthesis request, from text to priced programs -*- C++
//-*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// What distir-synth and the Python package share: parsing and checking a
// request (hierarchy, axes, reduced axes, cluster), synthesizing and pricing
// the reduction programs of every placement, and the JSON report.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_SYNTHESIS_DRIVER_H
#define DISTIR_SYNTHESIS_DRIVER_H

#include "DistIR/Cluster/Cluster.h"
#include "DistIR/Synthesis/Synthesis.h"

#include "llvm/Support/JSON.h"

#include <optional>
#include <string>

namespace distir::synth {

/// Largest program size we accept: the search is exponential in it.
constexpr unsigned kMaxProgramSize = 8;
/// Most placements (parallelism matrices) of the axes that are synthesized.
constexpr size_t kMaxPlacements = 4096;

struct SynthesisRequest {
  /// `NAME:SIZE,...`, outermost first; none: the cluster's levels.
  std::optional<std::string> hierarchy;
  /// `SIZE` or `NAME:SIZE`, ... (bare sizes are named a0, a1, ...).
  std::string axes;
  /// Indices of the axes to reduce over: `I[,J...]`.
  std::string reduce;
  /// Cluster preset or JSON file pricing the programs; empty:
  /// distir-uniform with the hierarchy's device count.
  std::string cluster;
  unsigned maxSize = 5;
  MasterCollectives masters = MasterCollectives::AllReduce;
  std::string algorithm = "ring";
  double bytes = 64.0 * 1024 * 1024;
  /// Work budget of the synthesis (kMaxSynthesisWork).
  uint64_t maxWork = kMaxSynthesisWork;
};

struct SynthesisReport {
  Hierarchy hierarchy, axes;
  llvm::SmallVector<unsigned> reduceAxes;
  Cluster cluster;
  /// One per placement of the axes on the hierarchy.
  std::vector<MatrixResult> results;
};

/// Checks `request`, synthesizes and prices. Returns std::nullopt after
/// reporting one error message through `error`.
std::optional<SynthesisReport>
runSynthesis(const SynthesisRequest &request,
             llvm::function_ref<void(const llvm::Twine &)> error);

/// The report as distir-synth --format=json writes it.
llvm::json::Value toJSON(const SynthesisRequest &request,
                         const SynthesisReport &report);

} // namespace distir::synth

#endif // DISTIR_SYNTHESIS_DRIVER_H
