//===- Calibration.h - Measured cost coefficients ---------------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// A calibration replaces the analytic formulas by linear models fitted to
// measurements of the machine the program will run on:
//
//   compute op of class C:           time = c0 + c1 * bytes + c2 * flops
//   collective K over n devices:     time = c0 + c1 * bytes
//
// with non-negative coefficients, fitted by non-negative least squares
// (Lawson-Hanson) to microbenchmark CSVs and to the text output of NVIDIA's
// nccl-tests. `bytes` and `flops` are counted exactly as the simulator counts
// them (ComputeWork in OpCost.h; the nccl-tests size convention of
// CollectiveCostModel). See docs/design/calibration.md.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_ANALYSIS_CALIBRATION_H
#define DISTIR_ANALYSIS_CALIBRATION_H

#include "DistIR/Analysis/CollectiveCost.h"
#include "DistIR/Cluster/Cluster.h"

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace distir {

//===----------------------------------------------------------------------===//
// Op classes
//===----------------------------------------------------------------------===//

/// How a compute op is priced by a calibration. Derived from the op's
/// ComputeWork (see getComputeWork):
///   matmul:      structured op with reduction loops that reuses its inputs
///                (iteration points > input elements): matmul, batch_matmul,
///                convolutions, contractions written as linalg.generic;
///   reduction:   structured op with reduction loops and no reuse: sums,
///                max over an axis, dot products, matrix-vector products;
///   elementwise: structured op without reduction loops whose body computes
///                (add, exp, fused bias+relu, ...), and arith/math ops on
///                tensors;
///   copy:        data movement: structured ops whose body only yields
///                (copy, transpose, broadcast, non-fused fill) and every
///                other priced tensor op (insert_slice, concat, pad, ...).
enum class ComputeClass { MatMul, Reduction, Elementwise, Copy };

llvm::StringRef stringifyComputeClass(ComputeClass opClass);
std::optional<ComputeClass> symbolizeComputeClass(llvm::StringRef name);
llvm::ArrayRef<ComputeClass> getAllComputeClasses();

/// Name of a collective in calibration files: the nccl-tests binary name
/// without `_perf` ("all_reduce", "all_gather", "reduce_scatter",
/// "broadcast", "reduce", "scatter", "gather", "alltoall", "sendrecv").
llvm::StringRef getCalibrationKindName(CollectiveKind kind);
/// Accepts the names above and CollectiveKind's own ("AllReduce", ...).
std::optional<CollectiveKind> parseCalibrationKindName(llvm::StringRef name);
llvm::ArrayRef<CollectiveKind> getAllCollectiveKinds();

//===----------------------------------------------------------------------===//
// Data model
//===----------------------------------------------------------------------===//

/// How well a model fits the measurements it came from (informational).
struct FitQuality {
  int64_t samples = 0;
  /// Coefficient of determination on the measured times.
  double rSquared = 0;
  /// max |predicted - measured| / measured over the samples.
  double maxRelativeError = 0;
  bool operator==(const FitQuality &o) const {
    return samples == o.samples && rSquared == o.rSquared &&
           maxRelativeError == o.maxRelativeError;
  }
};

/// time = constant + perByte * bytes + perFlop * flops (seconds).
struct ComputeCoefficients {
  double constant = 0, perByte = 0, perFlop = 0;
  std::optional<FitQuality> fit;
  double evaluate(double bytes, double flops) const {
    return constant + perByte * bytes + perFlop * flops;
  }
  bool operator==(const ComputeCoefficients &o) const {
    return constant == o.constant && perByte == o.perByte &&
           perFlop == o.perFlop && fit == o.fit;
  }
};

/// time = constant + perByte * bytes (seconds), for one group size.
struct CollectiveCoefficients {
  double constant = 0, perByte = 0;
  std::optional<FitQuality> fit;
  double evaluate(double bytes) const { return constant + perByte * bytes; }
  bool operator==(const CollectiveCoefficients &o) const {
    return constant == o.constant && perByte == o.perByte && fit == o.fit;
  }
};

/// Fitted coefficients of one machine.
struct Calibration {
  /// Free text: where the measurements came from.
  std::string description;
  std::map<ComputeClass, ComputeCoefficients> compute;
  /// Per collective kind, per group size (>= 2).
  std::map<CollectiveKind, std::map<int64_t, CollectiveCoefficients>>
      collectives;

  /// Seconds of a compute op of `opClass`; nullopt when the class was not
  /// calibrated (the simulator then uses the analytic roofline).
  std::optional<double> getComputeTime(ComputeClass opClass, double bytes,
                                       double flops) const;

  /// Seconds of collective `kind` over `groupSize` devices moving `bytes`
  /// (nccl-tests size convention). A group of one costs 0. When that group
  /// size was not measured, the nearest measured one is used (the larger on
  /// a tie) with its per-byte coefficient scaled by the ratio of ring
  /// bus-bandwidth factors f(groupSize) / f(measured). nullopt when `kind`
  /// was not calibrated at all (the simulator then uses the analytic
  /// topology model).
  std::optional<double>
  getCollectiveTime(CollectiveKind kind, int64_t groupSize, double bytes) const;

  bool operator==(const Calibration &o) const {
    return description == o.description && compute == o.compute &&
           collectives == o.collectives;
  }
};

/// Parses the JSON format (docs/design/calibration.md). Errors are one line
/// and name the JSON path of the offending field, e.g.
/// `$.compute.matmul.per_byte: expected a non-negative number, got -1`.
mlir::FailureOr<Calibration> parseCalibrationJSON(llvm::StringRef text,
                                                  ErrorFn emitError);
/// Reads and parses a file; errors are prefixed with the file name.
mlir::FailureOr<Calibration> readCalibrationFile(llvm::StringRef path,
                                                 ErrorFn emitError);
/// Serializes; parseCalibrationJSON(toJSON(c)) == c.
llvm::json::Value calibrationToJSON(const Calibration &calibration);

//===----------------------------------------------------------------------===//
// Measurements
//===----------------------------------------------------------------------===//

struct ComputeSample {
  ComputeClass opClass;
  double bytes = 0, flops = 0, seconds = 0;
};

struct CollectiveSample {
  CollectiveKind kind;
  int64_t groupSize = 0;
  double bytes = 0, seconds = 0;
};

/// Parses a compute CSV: a header naming at least the columns
/// `op_class,bytes,flops,seconds` (any order, other columns ignored), then
/// one measurement per line. Blank lines and lines starting with `#` are
/// skipped. Errors are `FILE:LINE: message`.
mlir::LogicalResult parseComputeCSV(llvm::StringRef text,
                                    llvm::StringRef fileName,
                                    std::vector<ComputeSample> &samples,
                                    ErrorFn emitError);

/// Parses a collective CSV with columns `kind,group_size,bytes,seconds`.
mlir::LogicalResult parseCollectiveCSV(llvm::StringRef text,
                                       llvm::StringRef fileName,
                                       std::vector<CollectiveSample> &samples,
                                       ErrorFn emitError);

/// What the text of an nccl-tests run does not say (or overrides).
struct NcclTestsOptions {
  std::optional<CollectiveKind> kind;
  std::optional<int64_t> groupSize;
};

/// True if `text` looks like the output of an nccl-tests binary rather than
/// a CSV: its first line that is neither blank nor a `#` comment has no
/// comma (or, with only comments, they name a `*_perf` binary or `algbw`).
bool isNcclTestsOutput(llvm::StringRef text);

/// Parses the output of an nccl-tests binary (`all_reduce_perf -b 8 -e 1G
/// -f 2 ...`): one sample per data row with the out-of-place time (us). The
/// kind comes from `options.kind`, else from the binary name in the header
/// (`# Collective test starting: all_reduce_perf`, `# nccl-tests ...
/// all_gather_perf`), else from the file name; the group size from
/// `options.groupSize`, else from the number of `#  Rank N ...` lines, else
/// from an `nranks N` header field.
mlir::LogicalResult parseNcclTestsOutput(llvm::StringRef text,
                                         llvm::StringRef fileName,
                                         const NcclTestsOptions &options,
                                         std::vector<CollectiveSample> &samples,
                                         ErrorFn emitError);

//===----------------------------------------------------------------------===//
// Fitting
//===----------------------------------------------------------------------===//

/// Minimizes ||A x - b||_2 subject to x >= 0 (Lawson-Hanson active set).
/// `a` holds `rows` x `cols` entries, row major. Fails on mismatched sizes.
mlir::FailureOr<std::vector<double>> solveNNLS(llvm::ArrayRef<double> a,
                                               int64_t rows, int64_t cols,
                                               llvm::ArrayRef<double> b);

/// Unconstrained least squares by Householder QR (columns whose remaining
/// norm is negligible get 0, so rank-deficient systems give a solution).
mlir::FailureOr<std::vector<double>>
solveLeastSquares(llvm::ArrayRef<double> a, int64_t rows, int64_t cols,
                  llvm::ArrayRef<double> b);

struct FitOptions {
  /// Minimize relative rather than absolute residuals (each row weighted by
  /// 1 / measured time), so that latency-bound small sizes count as much as
  /// bandwidth-bound large ones.
  bool relative = true;
};

/// Fits one model per op class and per (collective kind, group size) found
/// in the samples. Fails when there are no samples or a time is not
/// positive.
mlir::FailureOr<Calibration>
fitCalibration(llvm::ArrayRef<ComputeSample> compute,
               llvm::ArrayRef<CollectiveSample> collectives,
               const FitOptions &options, ErrorFn emitError);

/// Human-readable table of coefficients and fit quality.
void printFitReport(const Calibration &calibration, llvm::raw_ostream &os);

} // namespace distir

#endif // DISTIR_ANALYSIS_CALIBRATION_H
