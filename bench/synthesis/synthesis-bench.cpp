//===- synthesis-bench.cpp - Time reduction synthesis and pricing ---------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Times synthesizeAll (every parallelism matrix, program enumeration, lowering
// and pricing) for three axes 4 x 4 x 4 on the 64 GPUs of
// gcp-v100x8:nodes=8, reducing over one, two and all three axes. Prints the
// median of several runs. Build and run with bench/synthesis/run.sh.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Synthesis/Synthesis.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

using namespace distir;
using namespace distir::synth;

int main(int argc, char **argv) {
  int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
  std::string error;
  auto onError = [&error](const llvm::Twine &message) {
    error = message.str();
  };
  mlir::FailureOr<Cluster> cluster =
      getClusterPreset("gcp-v100x8:nodes=8", onError);
  if (failed(cluster)) {
    llvm::errs() << "error: " << error << "\n";
    return 1;
  }
  Hierarchy system;
  for (const LevelSpec &level : cluster->levels)
    system.push_back({level.name, level.size});
  CollectiveCostModel model(*cluster);
  SynthesisOptions options;

  std::printf("cluster %s (%lld devices), axes 4,4,4, max size %u\n",
              cluster->name.c_str(), (long long)cluster->getNumDevices(),
              options.maxSize);
  for (std::vector<unsigned> reduce :
       {std::vector<unsigned>{0}, std::vector<unsigned>{0, 1},
        std::vector<unsigned>{0, 1, 2}}) {
    std::vector<double> seconds;
    size_t matrices = 0, programs = 0;
    double bestSpeedup = 0;
    for (int run = 0; run < runs; ++run) {
      auto start = std::chrono::steady_clock::now();
      std::vector<MatrixResult> results =
          synthesizeAll(system, {4, 4, 4}, reduce, model, options);
      auto stop = std::chrono::steady_clock::now();
      seconds.push_back(std::chrono::duration<double>(stop - start).count());
      matrices = results.size();
      programs = 0;
      for (const MatrixResult &result : results) {
        programs += result.programs.size();
        if (!result.programs.empty())
          bestSpeedup = std::max(bestSpeedup,
                                 result.baselineTime / result.programs[0].time);
      }
    }
    std::sort(seconds.begin(), seconds.end());
    std::string axes;
    for (unsigned axis : reduce)
      axes += (axes.empty() ? "" : ",") + std::to_string(axis);
    std::printf("reduce %-5s  %2zu matrices  %6zu priced programs  "
                "best speedup %.2fx  median %.3f s (min %.3f, %d runs)\n",
                axes.c_str(), matrices, programs, bestSpeedup,
                seconds[seconds.size() / 2], seconds.front(), runs);
  }
  return 0;
}
