//===- ClockAlignment.cpp - Per-rank clock offsets from collectives -------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Replay/Dataflow.h"

#include <cmath>

using namespace distir::replay;

ClockAlignment distir::replay::alignClocks(const DataflowGraph &graph) {
  int64_t ranks = graph.numRanks;
  ClockAlignment alignment;
  alignment.offsets.assign(ranks, 0.0);
  const std::vector<Collective> &collectives = graph.collectives;
  if (collectives.empty())
    return alignment;

  // Least squares: minimize sum over collectives c and ranks r of
  // (end[c][r] + o_r - m_c)^2 with o_0 = 0; the minimum is
  // o_r = mean_c(end[c][0] - end[c][r]).
  for (int64_t r = 1; r < ranks; ++r) {
    double sum = 0;
    for (const Collective &c : collectives)
      sum += c.end[0] - c.end[r];
    alignment.offsets[r] = sum / collectives.size();
  }

  // A collective cannot end on rank r before it started on rank q:
  // o_r - o_q >= start[c][q] - end[c][r]. Cyclic projection onto each
  // violated half-space moves the two offsets symmetrically.
  auto sweep = [&](bool project) {
    int64_t violated = 0;
    for (const Collective &c : collectives)
      for (int64_t r = 0; r < ranks; ++r)
        for (int64_t q = 0; q < ranks; ++q) {
          if (q == r)
            continue;
          double bound = c.start[q] - c.end[r];
          double slack = alignment.offsets[r] - alignment.offsets[q] - bound;
          if (slack >= -1e-12)
            continue;
          ++violated;
          if (project) {
            alignment.offsets[r] -= slack / 2;
            alignment.offsets[q] += slack / 2;
          }
        }
    return violated;
  };
  alignment.constraints =
      (int64_t)collectives.size() * ranks * std::max<int64_t>(0, ranks - 1);
  alignment.violatedBeforeProjection = sweep(/*project=*/false);
  for (int round = 0; round < 1000 && sweep(/*project=*/true) > 0; ++round) {
  }
  double base = alignment.offsets[0];
  for (double &offset : alignment.offsets)
    offset -= base;

  double squares = 0;
  int64_t terms = 0;
  for (const Collective &c : collectives) {
    double mean = 0;
    for (int64_t r = 0; r < ranks; ++r)
      mean += c.end[r] + alignment.offsets[r];
    mean /= ranks;
    for (int64_t r = 0; r < ranks; ++r) {
      double d = c.end[r] + alignment.offsets[r] - mean;
      squares += d * d;
      ++terms;
    }
  }
  alignment.residual = std::sqrt(squares / terms);
  return alignment;
}
