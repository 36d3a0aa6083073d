//===- Fit.cpp - Fit calibration coefficients to measurements -------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Analysis/Calibration.h"

#include "llvm/Support/Format.h"

#include <cmath>

using namespace distir;

/// Fits `times ~ features * coefficients` with coefficients >= 0; rows are
/// weighted by 1 / time for relative residuals.
static mlir::FailureOr<std::vector<double>>
fitLinear(const std::vector<std::vector<double>> &features,
          const std::vector<double> &times, const FitOptions &options,
          FitQuality &quality) {
  int64_t rows = static_cast<int64_t>(times.size());
  int64_t cols = static_cast<int64_t>(features.front().size());
  std::vector<double> a, b;
  a.reserve(rows * cols);
  for (int64_t i = 0; i < rows; ++i) {
    double weight = options.relative ? 1 / times[i] : 1;
    for (double f : features[i])
      a.push_back(f * weight);
    b.push_back(times[i] * weight);
  }
  mlir::FailureOr<std::vector<double>> x = solveNNLS(a, rows, cols, b);
  if (failed(x))
    return mlir::failure();

  double mean = 0;
  for (double t : times)
    mean += t / rows;
  double ssRes = 0, ssTot = 0, maxRel = 0;
  for (int64_t i = 0; i < rows; ++i) {
    double predicted = 0;
    for (int64_t j = 0; j < cols; ++j)
      predicted += features[i][j] * (*x)[j];
    double residual = predicted - times[i];
    ssRes += residual * residual;
    ssTot += (times[i] - mean) * (times[i] - mean);
    maxRel = std::max(maxRel, std::fabs(residual) / times[i]);
  }
  quality.samples = rows;
  quality.maxRelativeError = maxRel;
  // All times equal: R^2 is 1 for an exact fit and 0 otherwise.
  quality.rSquared = ssTot > 0 ? 1 - ssRes / ssTot : (ssRes == 0 ? 1 : 0);
  return x;
}

mlir::FailureOr<Calibration>
distir::fitCalibration(llvm::ArrayRef<ComputeSample> compute,
                       llvm::ArrayRef<CollectiveSample> collectives,
                       const FitOptions &options, ErrorFn emitError) {
  if (compute.empty() && collectives.empty()) {
    emitError("no measurements to fit");
    return mlir::failure();
  }
  auto checkTime = [&](double seconds) {
    if (std::isfinite(seconds) && seconds > 0)
      return true;
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::format("%g", seconds);
    emitError("measured time must be positive, got " + text);
    return false;
  };

  Calibration calibration;
  for (ComputeClass opClass : getAllComputeClasses()) {
    std::vector<std::vector<double>> features;
    std::vector<double> times;
    for (const ComputeSample &sample : compute) {
      if (sample.opClass != opClass)
        continue;
      if (!checkTime(sample.seconds))
        return mlir::failure();
      features.push_back({1.0, sample.bytes, sample.flops});
      times.push_back(sample.seconds);
    }
    if (times.empty())
      continue;
    FitQuality quality;
    mlir::FailureOr<std::vector<double>> x =
        fitLinear(features, times, options, quality);
    if (failed(x)) {
      emitError("cannot fit op class '" + stringifyComputeClass(opClass) +
                "' (non-finite measurements)");
      return mlir::failure();
    }
    ComputeCoefficients &c = calibration.compute[opClass];
    c.constant = (*x)[0];
    c.perByte = (*x)[1];
    c.perFlop = (*x)[2];
    c.fit = quality;
  }

  std::map<std::pair<CollectiveKind, int64_t>, std::vector<size_t>> groups;
  for (auto [index, sample] : llvm::enumerate(collectives)) {
    if (!checkTime(sample.seconds))
      return mlir::failure();
    if (sample.groupSize < 2) {
      emitError("group size must be at least 2, got " +
                llvm::Twine(sample.groupSize));
      return mlir::failure();
    }
    groups[{sample.kind, sample.groupSize}].push_back(index);
  }
  for (const auto &[key, indices] : groups) {
    std::vector<std::vector<double>> features;
    std::vector<double> times;
    for (size_t index : indices) {
      features.push_back({1.0, collectives[index].bytes});
      times.push_back(collectives[index].seconds);
    }
    FitQuality quality;
    mlir::FailureOr<std::vector<double>> x =
        fitLinear(features, times, options, quality);
    if (failed(x)) {
      emitError("cannot fit collective '" + getCalibrationKindName(key.first) +
                "' over " + llvm::Twine(key.second) +
                " devices (non-finite measurements)");
      return mlir::failure();
    }
    CollectiveCoefficients &c = calibration.collectives[key.first][key.second];
    c.constant = (*x)[0];
    c.perByte = (*x)[1];
    c.fit = quality;
  }
  return calibration;
}

void distir::printFitReport(const Calibration &calibration,
                            llvm::raw_ostream &os) {
  auto printFit = [&](const std::optional<FitQuality> &fit) {
    if (fit)
      os << llvm::format(" %8lld %9.6f %12.4e\n", (long long)fit->samples,
                         fit->rSquared, fit->maxRelativeError);
    else
      os << llvm::format(" %8s %9s %12s\n", "-", "-", "-");
  };
  if (!calibration.compute.empty()) {
    os << "compute: time = c0 + c1 * bytes + c2 * flops\n";
    os << llvm::format("  %-12s %12s %12s %12s %8s %9s %12s\n", "op class",
                       "c0 (s)", "c1 (s/B)", "c2 (s/flop)", "samples", "R^2",
                       "max rel err");
    for (const auto &[opClass, c] : calibration.compute) {
      os << llvm::format("  %-12s %12.4e %12.4e %12.4e",
                         stringifyComputeClass(opClass).str().c_str(),
                         c.constant, c.perByte, c.perFlop);
      printFit(c.fit);
    }
  }
  if (!calibration.collectives.empty()) {
    os << "collectives: time = c0 + c1 * bytes\n";
    os << llvm::format("  %-14s %5s %12s %12s %8s %9s %12s\n", "kind", "n",
                       "c0 (s)", "c1 (s/B)", "samples", "R^2", "max rel err");
    for (const auto &[kind, bySize] : calibration.collectives)
      for (const auto &[groupSize, c] : bySize) {
        os << llvm::format("  %-14s %5lld %12.4e %12.4e",
                           getCalibrationKindName(kind).str().c_str(),
                           (long long)groupSize, c.constant, c.perByte);
        printFit(c.fit);
      }
  }
}
