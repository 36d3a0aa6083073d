//===- Driver.h - A whole search, from a model spec to ranked results -*- C++
//-*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// What distir-search and the Python package share: the model a search
// distributes (built-in MLP or an ONNX file, inference or a training step),
// and the run that builds its program for each batch size, enumerates the
// configurations, evaluates and ranks them, and fills in the model's work
// (flops, MFU, tokens) per result.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_SEARCH_DRIVER_H
#define DISTIR_SEARCH_DRIVER_H

#include "DistIR/Search/Search.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>

namespace distir::search {

/// Where the sequential program comes from.
struct ModelSource {
  enum Kind { MLP, ONNX } kind = MLP;
  int64_t layers = 0, dim = 0;
  /// mlp: element type; ONNX training: the compute type (mixed precision).
  std::string dtype = "f32";
  std::string path;
  std::unique_ptr<llvm::MemoryBuffer> bytes;
  llvm::SmallVector<std::pair<std::string, llvm::SmallVector<int64_t>>>
      inputShapes;
  /// The function dist-dtp distributes ("mlp" or "main").
  std::string entry;
  /// ONNX training: the dist-autodiff options.
  bool training = false;
  std::string loss = "mse", optimizer = "sgd";
};

/// Parses a model spec, `mlp:LAYERS,DIM` or `FILE.onnx` (read here), into
/// `source` (kind, layers, dim, path, bytes, entry). Returns an error
/// message, or an empty string.
std::string parseModelSpec(llvm::StringRef spec, ModelSource &source);

/// Builds the sequential program for `batch` samples (ONNX: every input's
/// first dimension set to `batch`; with `source.training`, the dist-autodiff
/// step). Reports errors through the context's diagnostic handler.
mlir::OwningOpRef<mlir::ModuleOp> buildProgram(const ModelSource &source,
                                               int64_t batch, bool training,
                                               mlir::MLIRContext *context);

/// A finished search.
struct SearchRun {
  /// The sequential program of each batch size (as `batches`).
  llvm::SmallVector<mlir::OwningOpRef<mlir::ModuleOp>> modules;
  /// Programs of the fast estimation's template batches.
  llvm::SmallVector<mlir::OwningOpRef<mlir::ModuleOp>> templateModules;
  std::vector<ConfigResult> results;
  std::vector<size_t> ranking;
  /// D/T/P choices whose device mappings were cut to tp-inner and dp-inner.
  int64_t truncatedMappings = 0;
  /// dist-dtp's decisions for each tensor-parallel degree searched (> 1) on
  /// the first batch's program: each weight-reading op's split, or why it
  /// stays replicated.
  std::vector<TensorParallelReport> tensorParallel;
  /// Seconds spent building the programs and searching.
  double buildSeconds = 0, searchSeconds = 0;

  SearchRun() = default;
  SearchRun(SearchRun &&) = default;
  SearchRun &operator=(SearchRun &&) = default;
  /// Tearing down large modules is slow; a process about to exit may skip
  /// it.
  void releaseModules();
};

/// Searches `batches` x `space` for `source` with `options` (whose
/// `training` must equal `space.training`). Fails, with diagnostics through
/// the context, when a program cannot be built; an empty search space
/// yields no results.
mlir::FailureOr<SearchRun> searchModel(const ModelSource &source,
                                       llvm::ArrayRef<int64_t> batches,
                                       const SearchSpace &space,
                                       const SearchOptions &options,
                                       mlir::MLIRContext *context);

} // namespace distir::search

#endif // DISTIR_SEARCH_DRIVER_H
