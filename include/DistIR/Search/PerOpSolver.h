//===- PerOpSolver.h - PaSE's per-operator strategy solver ------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// The combinatorial core of PaSE (Elango, "PaSE: Parallelization Strategies
// for Efficient DNN Training", IPDPS 2021): every vertex (an op) picks one of
// its configurations; a strategy costs the sum of the vertex costs and the
// edge costs (resharding between neighbours). The exact minimum is found by
// dynamic programming over a vertex order: eliminating a vertex minimizes it
// out for every configuration of its *dependent set* (the not yet eliminated
// vertices it interacts with), so the work is exponential only in the largest
// dependent set. GenerateSeq picks the order greedily by smallest dependent
// set. The solver knows nothing about IR; docs/design/pase.md maps ops to it.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_SEARCH_PEROPSOLVER_H
#define DISTIR_SEARCH_PEROPSOLVER_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"

#include <cstdint>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace distir::pase {

/// A cost graph: vertex v has `vertexCost[v].size()` configurations.
struct CostGraph {
  struct Edge {
    unsigned from, to;
    /// cost[cFrom * numConfigs(to) + cTo].
    std::vector<double> cost;
  };
  std::vector<std::vector<double>> vertexCost;
  std::vector<Edge> edges;

  unsigned numVertices() const { return vertexCost.size(); }
  int64_t numConfigs(unsigned v) const { return vertexCost[v].size(); }
  /// Adds a vertex and returns its index.
  unsigned addVertex(std::vector<double> costs);
  void addEdge(unsigned from, unsigned to, std::vector<double> cost);
  /// Cost of a full assignment.
  double evaluate(llvm::ArrayRef<int64_t> config) const;
};

struct Strategy {
  double cost = 0;
  /// The chosen configuration of every vertex.
  std::vector<int64_t> config;
  /// Largest dependent set met by the order (vertices, not table entries).
  unsigned maxDependentSet = 0;
  /// Largest table (product of dependent-set configuration counts).
  int64_t maxTableSize = 1;
};

using ErrorFn = llvm::function_ref<void(const llvm::Twine &)>;

/// GenerateSeq: repeatedly eliminate the vertex with the smallest dependent
/// set (ties: smallest table, then lowest index). Deterministic.
std::vector<unsigned> generateSeq(const CostGraph &graph);

/// Breadth-first order from vertex 0 (then from each unreached vertex): the
/// baseline GenerateSeq is compared with.
std::vector<unsigned> breadthFirstOrder(const CostGraph &graph);

/// Largest dependent set and table size an order meets (no cost work).
std::pair<unsigned, int64_t> measureOrder(const CostGraph &graph,
                                          llvm::ArrayRef<unsigned> order);

/// Exact minimum by elimination in `order` with back-substitution. Fails
/// with one message when a table would exceed `maxTableSize` entries or the
/// graph is malformed. With `threads`, large tables are filled on that
/// context's threads (each entry the same sums in the same order: the
/// result does not depend on the thread count).
mlir::FailureOr<Strategy> solve(const CostGraph &graph,
                                llvm::ArrayRef<unsigned> order,
                                int64_t maxTableSize, ErrorFn error,
                                mlir::MLIRContext *threads = nullptr);

/// Exact minimum by enumerating every assignment (tests; fails past
/// `maxAssignments`).
mlir::FailureOr<Strategy>
solveBruteForce(const CostGraph &graph, int64_t maxAssignments, ErrorFn error);

} // namespace distir::pase

#endif // DISTIR_SEARCH_PEROPSOLVER_H
