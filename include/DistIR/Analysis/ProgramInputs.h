//===- ProgramInputs.h - Naming and generating program inputs ---*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Shared by the tools that feed inputs to a program (distir-run, distir-exec):
// one definition of the names an argument answers to and of the
// deterministic pseudo-random inputs, so that every tool given the same seed
// runs the program on the same values.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_ANALYSIS_PROGRAMINPUTS_H
#define DISTIR_ANALYSIS_PROGRAMINPUTS_H

#include "DistIR/Analysis/Executor.h"

#include <random>
#include <string>

namespace distir {

/// The names argument `i` of `func` answers to: its number (`0`, `arg0`,
/// `%arg0`), its `dist.name` attribute and its name location, in that order.
llvm::SmallVector<std::string> getArgumentNames(mlir::func::FuncOp func,
                                                unsigned i);

/// A pseudo-random value of `type` drawn from `rng`: floats uniform in
/// [-1, 1) (in [0, 1) when `nonNegative`), integers in [0, 8), rounded to
/// the element type.
RuntimeValue makeRandomInput(mlir::Type type, std::mt19937_64 &rng,
                             bool nonNegative = false);

/// The random value of argument `i` of `func`: optimizer state
/// (`dist.optimizer_state`) is drawn non-negative, so that Adam's second
/// moments are valid and a random step is comparable between programs.
RuntimeValue makeRandomArgument(mlir::func::FuncOp func, unsigned i,
                                std::mt19937_64 &rng);

/// Values an integer argument may hold because it is used as an index: a
/// `tensor.extract` (an embedding lookup, an ONNX Gather) reads the
/// argument's values, through casts and ops that only move them (slices,
/// reshapes, dist communication), as the index of a dimension of size `dim`.
/// `lo` is -dim when the program wraps negative indices (ONNX semantics:
/// `select(i < 0, i + dim, i)`), 0 otherwise; `hi` is dim (exclusive).
struct IndexBound {
  int64_t lo = 0;
  int64_t hi = 0;
  /// The extract that needs it (for the message).
  mlir::Operation *user = nullptr;
};

/// For each argument of `func`, the tightest bound its index uses impose
/// (std::nullopt: not used as an index, or only after arithmetic this
/// analysis does not follow).
llvm::SmallVector<std::optional<IndexBound>>
getArgumentIndexBounds(mlir::func::FuncOp func);

/// Checks `value`, argument `i` of a program, against `bound`; on failure
/// returns the message (which element, its value, the valid range).
std::optional<std::string> checkIndexBound(const RuntimeValue &value,
                                           const IndexBound &bound);

} // namespace distir

#endif // DISTIR_ANALYSIS_PROGRAMINPUTS_H
