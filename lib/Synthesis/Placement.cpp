//===- Placement.cpp - Parallelism matrices and placements ----------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Enumerates parallelism matrices, builds the synthesis hierarchy of a
// reduction and maps its devices back to system device ids.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Synthesis/Synthesis.h"

#include "llvm/ADT/STLExtras.h"

#include <cassert>
#include <numeric>

using namespace distir;
using namespace distir::synth;

//===----------------------------------------------------------------------===//
// Parallelism matrices
//===----------------------------------------------------------------------===//

namespace {
/// Fills the matrix cell by cell (row-major), keeping the remaining product
/// of every row and column; the last row and column are forced.
struct MatrixEnumerator {
  llvm::ArrayRef<int64_t> axisSizes;
  llvm::ArrayRef<int64_t> levelSizes;
  std::vector<int64_t> rowLeft, colLeft;
  ParallelismMatrix current;
  std::vector<ParallelismMatrix> result;
  /// Enumeration stops after limit + 1 matrices.
  size_t limit;

  /// Whether `need` divides the product of `left[from..]` (computed by
  /// gcds: the product may overflow).
  static bool fits(int64_t need, const std::vector<int64_t> &left,
                   size_t from) {
    for (size_t k = from; k < left.size() && need > 1; ++k)
      need /= std::gcd(need, left[k]);
    return need == 1;
  }

  void visit(size_t i, size_t j) {
    size_t rows = axisSizes.size(), cols = levelSizes.size();
    if (result.size() > limit)
      return;
    if (i == rows) {
      result.push_back(current);
      return;
    }
    size_t nextI = j + 1 == cols ? i + 1 : i;
    size_t nextJ = j + 1 == cols ? 0 : j + 1;
    auto tryValue = [&](int64_t value) {
      if (rowLeft[i] % value != 0 || colLeft[j] % value != 0)
        return;
      rowLeft[i] /= value;
      colLeft[j] /= value;
      current[i][j] = value;
      // Prune dead subtrees: what row i still needs must fit the columns
      // after j, and what column j still holds must fit the rows after i
      // (without this, 24 levels of 2 explored 2^23 prefixes per row).
      if (fits(rowLeft[i], colLeft, j + 1) && fits(colLeft[j], rowLeft, i + 1))
        visit(nextI, nextJ);
      rowLeft[i] *= value;
      colLeft[j] *= value;
    };
    bool lastRow = i + 1 == rows, lastCol = j + 1 == cols;
    if (lastRow && lastCol) {
      if (rowLeft[i] == colLeft[j])
        tryValue(rowLeft[i]);
      return;
    }
    if (lastRow)
      return tryValue(colLeft[j]);
    if (lastCol)
      return tryValue(rowLeft[i]);
    // The divisors of the bound in increasing order (pairs up to its
    // square root: a level of 2^21 devices has 22 divisors, not 2^21
    // candidates).
    int64_t bound = std::gcd(rowLeft[i], colLeft[j]);
    std::vector<int64_t> small, large;
    for (int64_t value = 1; value <= bound / value; ++value)
      if (bound % value == 0) {
        small.push_back(value);
        if (value != bound / value)
          large.push_back(bound / value);
      }
    for (int64_t value : small)
      tryValue(value);
    for (int64_t value : llvm::reverse(large))
      tryValue(value);
  }
};
} // namespace

std::vector<ParallelismMatrix>
synth::enumerateParallelismMatrices(llvm::ArrayRef<int64_t> axisSizes,
                                    llvm::ArrayRef<int64_t> levelSizes,
                                    size_t limit) {
  if (axisSizes.empty() || levelSizes.empty())
    return {};
  if (llvm::any_of(axisSizes, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(levelSizes, [](int64_t s) { return s < 1; }))
    return {};
  MatrixEnumerator enumerator{
      axisSizes,
      levelSizes,
      std::vector<int64_t>(axisSizes),
      std::vector<int64_t>(levelSizes),
      ParallelismMatrix(axisSizes.size(),
                        std::vector<int64_t>(levelSizes.size(), 1)),
      {},
      limit};
  enumerator.visit(0, 0);
  return std::move(enumerator.result);
}

//===----------------------------------------------------------------------===//
// Synthesis hierarchy
//===----------------------------------------------------------------------===//

int64_t SynthesisHierarchy::getNumDevices() const {
  int64_t count = 1;
  for (const NamedSize &level : levels)
    count *= level.size;
  return count;
}

SynthesisHierarchy
synth::buildSynthesisHierarchy(const Hierarchy &system,
                               const ParallelismMatrix &matrix,
                               llvm::ArrayRef<unsigned> reduceAxes) {
  SynthesisHierarchy result;
  result.levels.push_back({"root", 1});
  result.systemLevels.push_back(std::nullopt);
  for (unsigned level = 0; level < system.size(); ++level) {
    int64_t size = 1;
    for (unsigned axis : reduceAxes)
      size *= matrix[axis][level];
    if (size == 1)
      continue;
    result.levels.push_back({system[level].name, size});
    result.systemLevels.push_back(level);
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Placement
//===----------------------------------------------------------------------===//

Placement::Placement(const Hierarchy &system, const ParallelismMatrix &matrix,
                     llvm::ArrayRef<unsigned> reduceAxes)
    : synthesis(buildSynthesisHierarchy(system, matrix, reduceAxes)) {
  size_t numAxes = matrix.size();
  llvm::SmallVector<bool> isReduced(numAxes, false);
  for (unsigned axis : reduceAxes)
    isReduced[axis] = true;

  int64_t numDevices = 1;
  for (const NamedSize &level : system)
    numDevices *= level.size;
  int64_t groupSize = synthesis.getNumDevices();
  assert(numDevices % groupSize == 0 && "reduction group must divide system");
  numReplicas = numDevices / groupSize;
  table.assign(numDevices, -1);

  for (int64_t device = 0; device < numDevices; ++device) {
    // Per-level coordinates, row-major.
    llvm::SmallVector<int64_t> coords(system.size());
    for (int64_t rest = device, l = system.size(); l-- > 0;) {
      coords[l] = rest % system[l].size;
      rest /= system[l].size;
    }
    // Within a level, the axes' digits are mixed radix with axis 0 most
    // significant. Reduction digits form the synthesis coordinate of the
    // level; all other digits (level-major, then axis order) the replica.
    int64_t synthIndex = 0, replica = 0;
    for (size_t l = 0; l < system.size(); ++l) {
      int64_t rest = coords[l];
      llvm::SmallVector<int64_t> digits(numAxes);
      for (size_t a = numAxes; a-- > 0;) {
        digits[a] = rest % matrix[a][l];
        rest /= matrix[a][l];
      }
      for (size_t a = 0; a < numAxes; ++a) {
        if (isReduced[a])
          synthIndex = synthIndex * matrix[a][l] + digits[a];
        else
          replica = replica * matrix[a][l] + digits[a];
      }
    }
    table[replica * groupSize + synthIndex] = device;
  }
}
