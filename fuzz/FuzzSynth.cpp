//===- FuzzSynth.cpp - libFuzzer harness: reduction synthesis requests ----===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// The input's lines are distir-synth's arguments: hierarchy, axes, reduce,
// cluster (optional), algorithm; programs of at most 3 instructions keep
// each execution short (and a smaller work budget). Every request synthesizes
// or fails with a message.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Synthesis/Driver.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(reinterpret_cast<const char *>(data), size)
      .split(lines, '\n', /*MaxSplit=*/5);
  lines.resize(5);
  distir::synth::SynthesisRequest request;
  if (!lines[0].empty())
    request.hierarchy = lines[0].str();
  request.axes = lines[1].str();
  request.reduce = lines[2].str();
  // Presets only: a path would read files.
  if (lines[3].starts_with("dgx") || lines[3].starts_with("gcp") ||
      lines[3].starts_with("distir-uniform"))
    request.cluster = lines[3].str();
  request.algorithm = lines[4].empty() ? "ring" : lines[4].str();
  request.maxSize = 3;
  // A sixty-fourth of the tools' budget keeps each input well under the
  // harness's timeout with sanitizers and coverage on.
  request.maxWork = distir::synth::kMaxSynthesisWork / 64;
  (void)distir::synth::runSynthesis(request, [](const llvm::Twine &) {});
  return 0;
}
