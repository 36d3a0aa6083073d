//===- Api.h - DistIR's operations on MLIR text, for the bindings -*- C++
//-*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// What the Python package calls: every operation takes and returns MLIR
// text, JSON text or plain arrays, so that the bindings hold no MLIR object
// across calls and interoperate with any other MLIR tooling. Each call runs
// in its own MLIRContext; a failure throws ApiError with the diagnostics
// (location: error: message, one per line).
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_PYTHON_API_H
#define DISTIR_PYTHON_API_H

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace distir::api {

/// A failed operation; what() holds the diagnostics.
struct ApiError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using Shape = std::vector<int64_t>;

/// Imports a serialized ONNX model (see distir-translate --import-onnx).
std::string importONNX(const std::string &bytes, const std::string &fileName,
                       const std::vector<std::pair<std::string, Shape>> &shapes,
                       bool weightsAsConstants, const std::string &funcName,
                       int64_t device);

/// Builds the MLP benchmark program (distir-translate --build-mlp); with
/// four `distirDHP` numbers (dp, hp, pp, k), the published DistIR's own
/// parallel training step (--distir-dhp).
std::string buildMLP(int64_t layers, int64_t dim, int64_t batch, bool training,
                     const std::string &dtype, int64_t device,
                     const std::vector<int64_t> &distirDHP = {});

/// Parses `text`, verifies it and its placements; returns it printed.
std::string verify(const std::string &text);

/// Runs the textual pass pipeline `pipeline` (as distir-opt's
/// --pass-pipeline, e.g. "builtin.module(dist-dtp{dp=2})" or a bare
/// "dist-place,dist-dtp{dp=2}") on `text`, which may be unplaced.
std::string runPipeline(const std::string &text, const std::string &pipeline);

/// One argument or result of a function.
struct Port {
  std::string name;
  /// Element type as MLIR prints it (f32, i64, i1, bf16, ...).
  std::string elementType;
  Shape shape;
  bool isTensor = true;
  /// Integers holding unsigned values (the importer's dist.unsigned).
  bool isUnsigned = false;
};

struct Signature {
  std::string entry;
  std::vector<Port> arguments, results;
};

/// The entry function's signature (`entry` empty: the only public one).
Signature signature(const std::string &text, const std::string &entry);

/// A value as the reference executor holds it: row-major doubles.
struct Array {
  std::string elementType;
  Shape shape;
  std::vector<double> data;
  bool isTensor = true;
};

/// Runs `entry` on the reference executor. `inputs` are in argument order,
/// already of the arguments' shapes (checked) and element types.
std::vector<Array> execute(const std::string &text, const std::string &entry,
                           const std::vector<Array> &inputs);

struct SimulateOptions {
  std::string cluster; // empty: the module's dist.cluster
  std::string costModel = "analytic";
  std::string calibrationFile;
  std::string algorithm = "ring";
  bool overlap = false;
  int64_t batch = 0;
  int64_t peakBuffers = 0;
  bool trace = false;
};

/// Simulates `entry`: the report as JSON (distir-sim --format=json) and,
/// with `trace`, the Chrome trace as JSON.
std::pair<std::string, std::string> simulate(const std::string &text,
                                             const std::string &entry,
                                             const SimulateOptions &options);

struct SearchRequest {
  /// `mlp:LAYERS,DIM` or the path of an ONNX model.
  std::string model;
  std::vector<std::pair<std::string, Shape>> inputShapes;
  std::vector<int64_t> batches;
  bool training = false;
  std::string dtype = "f32", loss = "mse", optimizer = "sgd";
  bool dtypeGiven = false;
  std::string cluster;
  int64_t devices = 0; // 0: every device of the cluster
  bool allowFewer = false;
  int64_t maxMicrobatches = 1, maxDP = 0, maxTP = 0, maxPP = 0, maxZero = 0;
  bool recompute = false;
  /// Per-stage tensor-parallel degrees (distir-search --stage-meshes).
  bool stageMeshes = false;
  std::string costModel = "analytic", algorithm = "ring";
  bool overlap = false, fast = false;
  unsigned jobs = 0; // 0: one per hardware thread
  /// Also return the best configuration's program.
  bool emitBest = false;
};

/// Runs a search (as distir-search): the report as JSON (distir-search
/// --json) and, with `emitBest`, the best program (empty when none fits).
std::pair<std::string, std::string> search(const SearchRequest &request);

/// Synthesizes hierarchical reductions (as distir-synth --format=json).
/// `hierarchy` empty with `hasHierarchy` false: the cluster's levels.
std::string synthesize(const std::string &hierarchy, bool hasHierarchy,
                       const std::string &axes, const std::string &reduce,
                       const std::string &cluster, unsigned maxSize,
                       const std::string &algorithm, double bytes,
                       bool allMasterCollectives);

/// A cluster preset or JSON file, resolved and written as cluster JSON.
std::string clusterJSON(const std::string &spec);

} // namespace distir::api

#endif // DISTIR_PYTHON_API_H
