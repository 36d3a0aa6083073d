//===- OpCost.h - Work and price of compute ops -----------------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Costs come from the op itself: a linalg structured op's work is the size of
// its iteration domain times the scalar ops of its body, and its traffic the
// bytes of the tensors it reads and writes. Other tensor ops are priced by
// the bytes they move; views and allocations are free.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_ANALYSIS_OPCOST_H
#define DISTIR_ANALYSIS_OPCOST_H

#include "DistIR/Analysis/Simulator.h"
#include "DistIR/Cluster/Cluster.h"

#include "mlir/IR/Operation.h"

#include <optional>
#include <string>

namespace distir {

/// What an op on tensors does, independent of the device.
struct ComputeWork {
  /// Scalar operations (a multiply-add counts 2).
  double flops = 0;
  /// Bytes of tensors read (inputs, and outputs the body reads).
  double bytesRead = 0;
  /// Bytes of tensors written.
  double bytesWritten = 0;
  /// Bytes of the op's inputs only (what the DistIR formulas charge).
  double inputBytes = 0;
  /// Elements of the results.
  double outputElements = 0;
  /// Has reduction loops (priced as a MatMul by the DistIR formulas).
  bool isContraction = false;
  /// Costs nothing: allocations, views, metadata, zero-fills fused into the
  /// contraction that consumes them.
  bool isFree = false;
  /// Element type name used to pick the peak flop/s ("f32", "bf16", ...).
  std::string dtype = "f32";
  /// Class whose calibrated model prices the op (see ComputeClass).
  ComputeClass opClass = ComputeClass::Copy;
};

/// Bytes of a statically shaped tensor type (i1 counts one byte); 0 for
/// other types.
int64_t getTensorBytes(mlir::Type type);

/// Name of an element type as used in DeviceSpec::peakFlops.
std::string getDTypeName(mlir::Type elementType);

/// Whether `op` is a `linalg.transpose` of the two innermost dimensions
/// that only contractions read as an input (directly or through
/// `tensor.extract_slice`s): GEMM libraries read such an
/// operand transposed in place (cuBLAS/BLAS op flags, PyTorch's `t()` view),
/// so it is a view of its input that costs nothing and allocates nothing.
bool isTransposedOperandView(mlir::Operation *op);

/// The work of `op` (any op with tensor operands or results outside the
/// dist dialect).
ComputeWork getComputeWork(mlir::Operation *op);

/// Seconds `work` takes on `device` under `model`. The calibrated model
/// uses `calibration` (bytes = bytesRead + bytesWritten) and falls back to
/// the analytic roofline when it is null or lacks the op's class.
double priceCompute(const ComputeWork &work, const DeviceSpec &device,
                    CostModelKind model,
                    const Calibration *calibration = nullptr);

/// The ops that the published DistIR prices by a fixed rule rather than by
/// their work: a copy (its Identity) is free, a concatenation (its Concat)
/// one kernel launch. Null for every other op.
std::optional<double> getDistIRCompatFixedPrice(mlir::Operation *op,
                                                const DeviceSpec &device);

} // namespace distir

#endif // DISTIR_ANALYSIS_OPCOST_H
