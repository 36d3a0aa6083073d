//===- Executor.h - Reference executor of dist programs ---------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Runs a program (sequential or a global dist program) on the CPU with
// concrete values, in program order. Linalg structured ops run generically
// from their iteration domain, indexing maps and body, so named and generic
// ops share one implementation; tensor, arith and math ops run directly;
// dist communication ops with their sequential meaning (send copies,
// all_reduce reduces, all_gather concatenates, ...).
//
// Values are held as doubles and rounded to their element type after every
// op (f32 through float, f16/bf16 through APFloat, integers wrapped to their
// width), so results match an f32 implementation up to summation order.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_ANALYSIS_EXECUTOR_H
#define DISTIR_ANALYSIS_EXECUTOR_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Types.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <vector>

namespace distir {

/// A concrete tensor or scalar.
struct RuntimeValue {
  /// Element type (scalars and tensors alike).
  mlir::Type elementType;
  /// Empty for scalars.
  llvm::SmallVector<int64_t, 4> shape;
  bool isTensor = false;
  /// Row-major elements (one for scalars). Shared: ops never mutate their
  /// operands' data.
  std::shared_ptr<std::vector<double>> data;

  int64_t getNumElements() const;
  /// A zero-filled tensor.
  static RuntimeValue tensor(mlir::Type elementType,
                             llvm::ArrayRef<int64_t> shape);
  static RuntimeValue scalar(mlir::Type type, double value);
};

/// How values of one element type are rounded, decided once per type: the
/// executor rounds every scalar it computes, and asking the type each time
/// (an interface cast) was a third of its run time.
class Rounding {
public:
  Rounding() = default;
  static Rounding get(mlir::Type elementType);
  /// Rounds `value` to what the element type can hold.
  double apply(double value) const {
    switch (kind) {
    case Kind::Exact:
      return value;
    case Kind::F32:
      return static_cast<double>(static_cast<float>(value));
    default:
      return applySlow(value);
    }
  }

private:
  enum class Kind : uint8_t { Exact, F32, OtherFloat, Integer };
  double applySlow(double value) const;
  Kind kind = Kind::Exact;
  const llvm::fltSemantics *semantics = nullptr;
  unsigned width = 64;
};

/// Rounds `value` to what `elementType` can hold.
inline double roundToType(mlir::Type elementType, double value) {
  return Rounding::get(elementType).apply(value);
}

/// Runs `func` on `inputs` (one per argument, in order) and returns its
/// results. Reports an error (at the offending op) for unsupported ops and
/// mismatched inputs.
mlir::FailureOr<llvm::SmallVector<RuntimeValue>>
execute(mlir::func::FuncOp func, llvm::ArrayRef<RuntimeValue> inputs);

} // namespace distir

#endif // DISTIR_ANALYSIS_EXECUTOR_H
