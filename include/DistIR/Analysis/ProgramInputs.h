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
/// [-1, 1), integers in [0, 8), rounded to the element type.
RuntimeValue makeRandomInput(mlir::Type type, std::mt19937_64 &rng);

} // namespace distir

#endif // DISTIR_ANALYSIS_PROGRAMINPUTS_H
