//===- LeastSquares.cpp - Least squares with and without x >= 0 ----------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Dense solvers for the small systems of calibration (a few columns, tens to
// thousands of rows): Householder QR for unconstrained least squares, and
// the Lawson-Hanson active-set method ("Solving Least Squares Problems",
// 1974, ch. 23) for non-negative least squares. Columns are scaled to unit
// norm first: bytes, flops and the constant column differ by many orders of
// magnitude.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Analysis/Calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace distir;

namespace {

/// Row-major dense matrix view helpers.
struct Matrix {
  int64_t rows, cols;
  std::vector<double> data;
  double &at(int64_t r, int64_t c) { return data[r * cols + c]; }
  double at(int64_t r, int64_t c) const { return data[r * cols + c]; }
};

} // namespace

/// Least squares over the columns `selected` of `a`: returns one value per
/// selected column. Columns whose remaining norm after the previous
/// Householder steps is negligible get 0.
static std::vector<double> solveSubset(const Matrix &a,
                                       llvm::ArrayRef<double> b,
                                       llvm::ArrayRef<int64_t> selected) {
  int64_t m = a.rows, k = static_cast<int64_t>(selected.size());
  Matrix r{m, k, std::vector<double>(m * k)};
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < k; ++j)
      r.at(i, j) = a.at(i, selected[j]);
  std::vector<double> rhs(b.begin(), b.end());

  double scale = 0;
  for (double v : r.data)
    scale = std::max(scale, std::fabs(v));
  double tiny = scale * 1e-12;

  std::vector<bool> dropped(k, false);
  int64_t steps = std::min(m, k);
  for (int64_t j = 0; j < steps; ++j) {
    double norm = 0;
    for (int64_t i = j; i < m; ++i)
      norm += r.at(i, j) * r.at(i, j);
    norm = std::sqrt(norm);
    if (norm <= tiny) {
      dropped[j] = true;
      continue;
    }
    double alpha = r.at(j, j) > 0 ? -norm : norm;
    // v = x - alpha e1, stored in place below the diagonal.
    std::vector<double> v(m - j);
    for (int64_t i = j; i < m; ++i)
      v[i - j] = r.at(i, j);
    v[0] -= alpha;
    double vnorm2 = 0;
    for (double x : v)
      vnorm2 += x * x;
    if (vnorm2 == 0)
      continue;
    auto reflect = [&](auto get) {
      double dot = 0;
      for (int64_t i = j; i < m; ++i)
        dot += v[i - j] * get(i);
      double f = 2 * dot / vnorm2;
      for (int64_t i = j; i < m; ++i)
        get(i) -= f * v[i - j];
    };
    for (int64_t c = j; c < k; ++c)
      reflect([&](int64_t i) -> double & { return r.at(i, c); });
    reflect([&](int64_t i) -> double & { return rhs[i]; });
  }
  for (int64_t j = steps; j < k; ++j)
    dropped[j] = true;

  // Back substitution on the kept columns.
  std::vector<double> x(k, 0);
  for (int64_t j = steps - 1; j >= 0; --j) {
    if (dropped[j] || std::fabs(r.at(j, j)) <= tiny)
      continue;
    double sum = rhs[j];
    for (int64_t c = j + 1; c < k; ++c)
      sum -= r.at(j, c) * x[c];
    x[j] = sum / r.at(j, j);
  }
  return x;
}

/// Scales columns to unit norm; returns the factors (1 for zero columns).
static std::vector<double> normalizeColumns(Matrix &a) {
  std::vector<double> norms(a.cols, 0);
  for (int64_t j = 0; j < a.cols; ++j) {
    double sum = 0;
    for (int64_t i = 0; i < a.rows; ++i)
      sum += a.at(i, j) * a.at(i, j);
    norms[j] = sum > 0 ? std::sqrt(sum) : 1;
    for (int64_t i = 0; i < a.rows; ++i)
      a.at(i, j) /= norms[j];
  }
  return norms;
}

static bool checkShape(llvm::ArrayRef<double> a, int64_t rows, int64_t cols,
                       llvm::ArrayRef<double> b) {
  return rows > 0 && cols > 0 &&
         static_cast<int64_t>(a.size()) == rows * cols &&
         static_cast<int64_t>(b.size()) == rows &&
         llvm::all_of(a, [](double v) { return std::isfinite(v); }) &&
         llvm::all_of(b, [](double v) { return std::isfinite(v); });
}

mlir::FailureOr<std::vector<double>>
distir::solveLeastSquares(llvm::ArrayRef<double> a, int64_t rows, int64_t cols,
                          llvm::ArrayRef<double> b) {
  if (!checkShape(a, rows, cols, b))
    return mlir::failure();
  Matrix m{rows, cols, std::vector<double>(a.begin(), a.end())};
  std::vector<double> norms = normalizeColumns(m);
  std::vector<int64_t> all(cols);
  for (int64_t j = 0; j < cols; ++j)
    all[j] = j;
  std::vector<double> x = solveSubset(m, b, all);
  for (int64_t j = 0; j < cols; ++j)
    x[j] /= norms[j];
  return x;
}

mlir::FailureOr<std::vector<double>>
distir::solveNNLS(llvm::ArrayRef<double> a, int64_t rows, int64_t cols,
                  llvm::ArrayRef<double> b) {
  if (!checkShape(a, rows, cols, b))
    return mlir::failure();
  Matrix m{rows, cols, std::vector<double>(a.begin(), a.end())};
  std::vector<double> norms = normalizeColumns(m);

  std::vector<double> x(cols, 0);
  std::vector<bool> passive(cols, false), blocked(cols, false);
  auto gradient = [&]() {
    // w = A^T (b - A x)
    std::vector<double> residual(b.begin(), b.end());
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        residual[i] -= m.at(i, j) * x[j];
    std::vector<double> w(cols, 0);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        w[j] += m.at(i, j) * residual[i];
    return w;
  };
  double bnorm = 0;
  for (double v : b)
    bnorm += v * v;
  bnorm = std::sqrt(bnorm);
  // Columns have unit norm, so |w_j| <= ||b - A x|| <= ||b||.
  double tol = 10 * std::numeric_limits<double>::epsilon() *
               static_cast<double>(std::max(rows, cols)) * bnorm;

  for (int64_t outer = 0; outer < 3 * cols + 3; ++outer) {
    std::vector<double> w = gradient();
    int64_t entering = -1;
    for (int64_t j = 0; j < cols; ++j)
      if (!passive[j] && !blocked[j] && w[j] > tol &&
          (entering < 0 || w[j] > w[entering]))
        entering = j;
    if (entering < 0)
      break;
    passive[entering] = true;

    for (int64_t inner = 0; inner < 3 * cols + 3; ++inner) {
      std::vector<int64_t> set;
      for (int64_t j = 0; j < cols; ++j)
        if (passive[j])
          set.push_back(j);
      std::vector<double> z = solveSubset(m, b, set);
      if (inner == 0 && z[llvm::find(set, entering) - set.begin()] <= 0) {
        // Only rounding makes this happen (the column is numerically
        // dependent on the passive ones): keep it out for good.
        passive[entering] = false;
        blocked[entering] = true;
        break;
      }
      if (llvm::all_of(z, [](double v) { return v > 0; })) {
        std::fill(x.begin(), x.end(), 0.0);
        for (auto [i, j] : llvm::enumerate(set))
          x[j] = z[i];
        break;
      }
      // Step from x towards z as far as feasibility allows; the blocking
      // variable leaves the passive set.
      double alpha = std::numeric_limits<double>::infinity();
      int64_t blocking = -1;
      for (auto [i, j] : llvm::enumerate(set)) {
        if (z[i] > 0)
          continue;
        double denominator = x[j] - z[i];
        double ratio = denominator > 0 ? x[j] / denominator : 0;
        if (ratio < alpha) {
          alpha = ratio;
          blocking = j;
        }
      }
      for (auto [i, j] : llvm::enumerate(set))
        x[j] += alpha * (z[i] - x[j]);
      x[blocking] = 0;
      for (int64_t j : set)
        if (x[j] <= 0) {
          x[j] = 0;
          passive[j] = false;
        }
    }
  }
  for (int64_t j = 0; j < cols; ++j)
    x[j] = std::max(0.0, x[j]) / norms[j];
  return x;
}
