//===- PerOpMode.h - distir-search --strategy per-op ------------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_TOOLS_DISTIR_SEARCH_PEROPMODE_H
#define DISTIR_TOOLS_DISTIR_SEARCH_PEROPMODE_H

#include "DistIR/Analysis/Simulator.h"
#include "DistIR/Search/Driver.h"

#include <string>

namespace distir::search {

struct PerOpRequest {
  const ModelSource *source = nullptr;
  int64_t batch = 0;
  bool training = false;
  Cluster cluster;
  int64_t devices = 1;
  SimulatorOptions simulator;
  unsigned top = 10;
  std::string emitBest, traceBest, jsonFile;
  /// Also search the program with merged dimensions read apart.
  bool unflatten = true;
};

/// Builds the model's program, chooses its per-op strategy (dist-pase),
/// emits and simulates it, prints the report; 0 on success, else 1 after
/// one error line.
int runPerOpStrategy(const PerOpRequest &request, mlir::MLIRContext *context);

} // namespace distir::search

#endif // DISTIR_TOOLS_DISTIR_SEARCH_PEROPMODE_H
