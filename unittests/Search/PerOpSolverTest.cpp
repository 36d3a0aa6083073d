//===- PerOpSolverTest.cpp - PaSE solver against brute force --------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Search/PerOpSolver.h"
#include "DistIR/Search/PerOp.h"

#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <limits>
#include <random>
#include <string>

using namespace distir::pase;

namespace {

/// Random costs drawn from `cost` (default: reals in [0, 10)) for
/// `configs[v]` configurations per vertex and the given edges.
template <typename Distribution = std::uniform_real_distribution<double>>
CostGraph randomGraph(std::mt19937 &rng, const std::vector<int64_t> &configs,
                      const std::vector<std::pair<unsigned, unsigned>> &edges,
                      Distribution cost = Distribution(0.0, 10.0)) {
  CostGraph graph;
  for (int64_t n : configs) {
    std::vector<double> costs(n);
    for (double &c : costs)
      c = cost(rng);
    graph.addVertex(costs);
  }
  for (auto [from, to] : edges) {
    std::vector<double> costs(configs[from] * configs[to]);
    for (double &c : costs)
      c = cost(rng);
    graph.addEdge(from, to, costs);
  }
  return graph;
}

std::vector<std::pair<unsigned, unsigned>>
randomEdges(std::mt19937 &rng, unsigned n, double density) {
  std::bernoulli_distribution keep(density);
  std::vector<std::pair<unsigned, unsigned>> edges;
  for (unsigned a = 0; a < n; ++a)
    for (unsigned b = a + 1; b < n; ++b)
      if (keep(rng)) {
        // Both directions occur in real graphs (consumer before producer in
        // the vertex numbering).
        if (keep(rng))
          edges.push_back({a, b});
        else
          edges.push_back({b, a});
      }
  return edges;
}

void expectOptimal(const CostGraph &graph, const std::string &what) {
  auto fail = [&](const llvm::Twine &msg) {
    ADD_FAILURE() << what << ": " << msg.str();
  };
  mlir::FailureOr<Strategy> brute = solveBruteForce(graph, 1 << 22, fail);
  ASSERT_TRUE(mlir::succeeded(brute)) << what;
  std::vector<std::vector<unsigned>> orders = {generateSeq(graph),
                                               breadthFirstOrder(graph)};
  std::vector<unsigned> reversed(orders[1].rbegin(), orders[1].rend());
  orders.push_back(reversed);
  for (const std::vector<unsigned> &order : orders) {
    mlir::FailureOr<Strategy> dp = solve(graph, order, 1 << 22, fail);
    ASSERT_TRUE(mlir::succeeded(dp)) << what;
    EXPECT_NEAR(dp->cost, brute->cost, 1e-9 * (1 + brute->cost)) << what;
    EXPECT_NEAR(graph.evaluate(dp->config), dp->cost, 1e-9 * (1 + dp->cost))
        << what;
  }
}

} // namespace

TEST(PerOpSolver, DynamicProgramEqualsBruteForceOnRandomGraphs) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int64_t> configs(1, 4);
  for (unsigned trial = 0; trial < 300; ++trial) {
    unsigned n = 1 + trial % 9;
    std::vector<int64_t> counts(n);
    for (int64_t &c : counts)
      c = configs(rng);
    double density = 0.15 + 0.1 * (trial % 7);
    CostGraph graph = randomGraph(rng, counts, randomEdges(rng, n, density));
    expectOptimal(graph, "trial " + std::to_string(trial));
  }
}

TEST(PerOpSolver, DynamicProgramEqualsBruteForceOnChainsAndResidualBlocks) {
  std::mt19937 rng(11);
  // A chain with skip connections every third vertex (residual networks) and
  // parallel branches joined by one vertex (inception modules).
  for (unsigned n = 2; n <= 10; ++n) {
    std::vector<std::pair<unsigned, unsigned>> edges;
    for (unsigned v = 0; v + 1 < n; ++v)
      edges.push_back({v, v + 1});
    for (unsigned v = 0; v + 3 < n; v += 3)
      edges.push_back({v, v + 3});
    CostGraph chain = randomGraph(rng, std::vector<int64_t>(n, 3), edges);
    expectOptimal(chain, "residual chain of " + std::to_string(n));
  }
  std::vector<std::pair<unsigned, unsigned>> inception = {
      {0, 1}, {0, 2}, {0, 3}, {0, 4}, {1, 5}, {2, 6},
      {3, 7}, {4, 8}, {5, 9}, {6, 9}, {7, 9}, {8, 9}};
  CostGraph module = randomGraph(rng, std::vector<int64_t>(10, 4), inception);
  expectOptimal(module, "inception module");
}

TEST(PerOpSolver, LargeTablesOnThreadsEqualBruteForce) {
  // Vertices with many configurations (counts not multiples of the scan's
  // four lanes), small integer costs (exact ties: the first minimum must
  // win), and dependent sets of two and three whose tables span several
  // chunks of the threaded fill.
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> small(0, 3);
  mlir::MLIRContext context;
  ASSERT_TRUE(context.isMultithreadingEnabled());
  auto fail = [](const llvm::Twine &msg) { ADD_FAILURE() << msg.str(); };
  std::vector<std::vector<std::pair<unsigned, unsigned>>> shapes = {
      {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {2, 3}, {1, 3}},
      {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {0, 2}},
      {{1, 0}, {2, 0}, {3, 0}}};
  for (unsigned trial = 0; trial < 6; ++trial) {
    std::vector<int64_t> counts = {17 + trial, 23, 19, 21 - trial};
    CostGraph graph =
        randomGraph(rng, counts, shapes[trial % shapes.size()], small);
    std::string what = "trial " + std::to_string(trial);
    mlir::FailureOr<Strategy> brute = solveBruteForce(graph, 1 << 22, fail);
    ASSERT_TRUE(mlir::succeeded(brute)) << what;
    for (std::vector<unsigned> order :
         {std::vector<unsigned>{0, 1, 2, 3}, std::vector<unsigned>{3, 2, 1, 0},
          std::vector<unsigned>{1, 3, 0, 2}}) {
      mlir::FailureOr<Strategy> alone = solve(graph, order, 1 << 22, fail);
      mlir::FailureOr<Strategy> threaded =
          solve(graph, order, 1 << 22, fail, &context);
      ASSERT_TRUE(mlir::succeeded(alone) && mlir::succeeded(threaded)) << what;
      EXPECT_EQ(alone->cost, brute->cost) << what;
      EXPECT_EQ(threaded->config, alone->config) << what;
      EXPECT_EQ(graph.evaluate(alone->config), alone->cost) << what;
    }
  }
}

TEST(PerOpSolver, LargeTablesWithSeveralFactorsPerLevel) {
  // Eliminating 4 leaves a factor over {0, 1, 2, 3}; eliminating 0 next
  // then meets it and the edge {0, 3} at the same (last) position of its
  // dependent set {1, 2, 3}: a table of about 8,000 entries summed per
  // entry, on threads.
  std::mt19937 rng(13);
  std::uniform_int_distribution<int> small(0, 3);
  mlir::MLIRContext context;
  auto fail = [](const llvm::Twine &msg) { ADD_FAILURE() << msg.str(); };
  std::vector<std::pair<unsigned, unsigned>> edges = {
      {4, 0}, {4, 1}, {4, 2}, {4, 3}, {0, 1}, {0, 3}, {1, 2}};
  CostGraph graph = randomGraph(rng, {19, 21, 20, 19, 18}, edges, small);
  mlir::FailureOr<Strategy> brute = solveBruteForce(graph, 1 << 22, fail);
  ASSERT_TRUE(mlir::succeeded(brute));
  std::vector<unsigned> order = {4, 0, 1, 2, 3};
  mlir::FailureOr<Strategy> alone = solve(graph, order, 1 << 22, fail);
  mlir::FailureOr<Strategy> threaded =
      solve(graph, order, 1 << 22, fail, &context);
  ASSERT_TRUE(mlir::succeeded(alone) && mlir::succeeded(threaded));
  EXPECT_EQ(alone->maxDependentSet, 4u);
  EXPECT_EQ(alone->cost, brute->cost);
  EXPECT_EQ(threaded->config, alone->config);
}

TEST(PerOpSolver, TiesGoToTheFirstConfiguration) {
  // One vertex: its minimum over the configurations, the first of equal
  // minima, wherever it falls among the scan's four lanes or in the tail.
  auto fail = [](const llvm::Twine &msg) { ADD_FAILURE() << msg.str(); };
  std::vector<std::pair<std::vector<double>, int64_t>> cases = {
      {{4, 2, 7, 2, 2, 9, 2, 2, 2}, 1},
      {{4, 3, 7, 5, 2, 9, 2, 8, 2}, 4},
      {{4, 3, 7, 5, 6, 9, 8, 8, 2}, 8},
      {{2, 3, 7, 5, 6, 9, 8, 8, 2}, 0},
      {{5, 5, 5}, 0}};
  for (auto [costs, first] : cases) {
    CostGraph graph;
    graph.addVertex(costs);
    mlir::FailureOr<Strategy> dp = solve(graph, {0}, 100, fail);
    ASSERT_TRUE(mlir::succeeded(dp));
    EXPECT_EQ(dp->config[0], first);
  }
  // Through an edge: vertex 0's costs tie everywhere, so each entry of the
  // table over vertex 1 keeps vertex 0's first configuration reaching the
  // minimum of the edge's row.
  CostGraph pair;
  pair.addVertex(std::vector<double>(6, 1.0));
  pair.addVertex({0, 0});
  pair.addEdge(0, 1, {3, 3, 1, 2, 2, 1, 1, 1, 5, 1, 1, 9});
  mlir::FailureOr<Strategy> dp = solve(pair, {0, 1}, 100, fail);
  ASSERT_TRUE(mlir::succeeded(dp));
  EXPECT_EQ(dp->cost, 2.0);
  EXPECT_EQ(dp->config, (std::vector<int64_t>{1, 0}));
}

TEST(PerOpSolver, GenerateSeqKeepsDependentSetsSmall) {
  // A star: breadth-first order from the centre eliminates it first, with
  // every leaf dependent; GenerateSeq eliminates the leaves first.
  std::mt19937 rng(3);
  std::vector<std::pair<unsigned, unsigned>> star;
  for (unsigned leaf = 1; leaf < 12; ++leaf)
    star.push_back({0, leaf});
  CostGraph graph = randomGraph(rng, std::vector<int64_t>(12, 2), star);
  EXPECT_EQ(measureOrder(graph, generateSeq(graph)).first, 1u);
  EXPECT_EQ(measureOrder(graph, breadthFirstOrder(graph)).first, 11u);

  // Stacked inception-like modules: never worse than breadth-first.
  std::vector<std::pair<unsigned, unsigned>> edges;
  unsigned join = 0, next = 1;
  for (unsigned module = 0; module < 6; ++module) {
    unsigned out = next + 8;
    for (unsigned branch = 0; branch < 4; ++branch) {
      unsigned a = next++, b = next++;
      edges.push_back({join, a});
      edges.push_back({a, b});
      edges.push_back({b, out});
    }
    join = next++;
  }
  CostGraph stacked =
      randomGraph(rng, std::vector<int64_t>(join + 1, 3), edges);
  EXPECT_LE(measureOrder(stacked, generateSeq(stacked)).first,
            measureOrder(stacked, breadthFirstOrder(stacked)).first);
  auto fail = [](const llvm::Twine &msg) { ADD_FAILURE() << msg.str(); };
  mlir::FailureOr<Strategy> dp =
      solve(stacked, generateSeq(stacked), 1 << 20, fail);
  ASSERT_TRUE(mlir::succeeded(dp));
  EXPECT_EQ(dp->maxDependentSet,
            measureOrder(stacked, generateSeq(stacked)).first);
}

TEST(PerOpSolver, MalformedGraphsAndBudgetsFailWithOneMessage) {
  std::string message;
  auto record = [&](const llvm::Twine &msg) { message = msg.str(); };
  CostGraph empty;
  empty.addVertex({});
  EXPECT_TRUE(mlir::failed(solve(empty, {0}, 100, record)));
  EXPECT_EQ(message, "vertex 0 has no configuration");

  CostGraph graph;
  graph.addVertex({1, 2});
  graph.addVertex({1, 2, 3});
  graph.addEdge(0, 1, {0, 0, 0});
  EXPECT_TRUE(mlir::failed(solve(graph, {0, 1}, 100, record)));
  EXPECT_EQ(message, "edge 0 -> 1 has 3 costs for 2 x 3 configurations");

  graph.edges.clear();
  graph.addEdge(1, 1, std::vector<double>(9, 0));
  EXPECT_TRUE(mlir::failed(solve(graph, {0, 1}, 100, record)));
  EXPECT_EQ(message, "edge 1 -> 1 does not join two distinct vertices");

  graph.edges.clear();
  graph.addEdge(0, 1, std::vector<double>(6, 0));
  EXPECT_TRUE(mlir::failed(solve(graph, {0, 0}, 100, record)));
  EXPECT_EQ(message, "the elimination order is not a permutation of the 2 "
                     "vertices");
  EXPECT_TRUE(mlir::failed(solve(graph, {0, 1}, 2, record)));
  EXPECT_EQ(message, "the dependent set of vertex 0 (1 vertices) needs a "
                     "table of more than 2 entries");
  EXPECT_TRUE(mlir::failed(solveBruteForce(graph, 5, record)));
  EXPECT_EQ(message, "more than 5 assignments to enumerate");
}

// Tied vertices (an adjoint following its forward op): the contracted
// graph's optimum equals the best strategy of the original graph among
// those where every tied vertex takes its leader's mapped configuration,
// found by enumerating the leaders' configurations.
TEST(PerOpSolver, TiedGraphEqualsBruteForceOverTheTiedSpace) {
  std::mt19937 rng(17);
  auto fail = [&](const llvm::Twine &msg) { ADD_FAILURE() << msg.str(); };
  for (int trial = 0; trial < 150; ++trial) {
    unsigned n = 3 + trial % 7;
    std::uniform_int_distribution<int64_t> configCount(1, 4);
    std::vector<int64_t> counts(n);
    for (int64_t &c : counts)
      c = configCount(rng);
    CostGraph graph = randomGraph(rng, counts, randomEdges(rng, n, 0.5));
    // Vertex v follows an earlier leader with probability 1/2 (chains of
    // followers are not formed: a leader is never tied itself).
    Tying tying;
    tying.leaderOf.assign(n, -1);
    tying.follow.resize(n);
    std::bernoulli_distribution tie(0.5);
    for (unsigned v = 1; v < n; ++v) {
      std::vector<unsigned> leaders;
      for (unsigned u = 0; u < v; ++u)
        if (tying.leaderOf[u] < 0)
          leaders.push_back(u);
      if (!tie(rng))
        continue;
      unsigned u = leaders[rng() % leaders.size()];
      tying.leaderOf[v] = u;
      for (int64_t c = 0; c < counts[u]; ++c)
        tying.follow[v].push_back(
            std::uniform_int_distribution<int64_t>(0, counts[v] - 1)(rng));
      ++tying.tied;
    }
    TiedGraph tied = contract(graph, tying);
    // Brute force over the leaders' configurations.
    double best = std::numeric_limits<double>::infinity();
    std::vector<int64_t> vertexConfig(tied.graph.numVertices(), 0);
    while (true) {
      best = std::min(best,
                      graph.evaluate(expandConfig(tying, tied, vertexConfig)));
      unsigned k = 0;
      while (k < vertexConfig.size() &&
             ++vertexConfig[k] == tied.graph.numConfigs(k))
        vertexConfig[k++] = 0;
      if (k == vertexConfig.size())
        break;
    }
    mlir::FailureOr<Strategy> dp =
        solve(tied.graph, generateSeq(tied.graph), 1 << 22, fail);
    ASSERT_TRUE(mlir::succeeded(dp));
    EXPECT_NEAR(dp->cost, best, 1e-9 * (1 + best)) << "trial " << trial;
    EXPECT_NEAR(graph.evaluate(expandConfig(tying, tied, dp->config)), best,
                1e-9 * (1 + best))
        << "trial " << trial;
  }
}
