//===- Lowering.cpp - Lowering and pricing of reduction programs ----------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Lowers synthesized programs to concurrent device groups of the full system
// and prices them with the collective cost model.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Synthesis/Synthesis.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <map>

using namespace distir;
using namespace distir::synth;

std::vector<SynthesisStep>
synth::getSynthesisSteps(llvm::ArrayRef<NamedSize> hierarchy,
                         llvm::ArrayRef<Instruction> program) {
  int64_t k = 1;
  for (const NamedSize &level : hierarchy)
    k *= level.size;
  ReductionState state = ReductionState::getInitial(k);
  std::vector<SynthesisStep> steps;
  for (const Instruction &instruction : program) {
    std::vector<llvm::SmallVector<int64_t>> groups =
        getDeviceGroups(hierarchy, instruction.slice, instruction.form);
    std::optional<ReductionState> next =
        applyCollective(state, instruction.collective, groups);
    assert(next && "lowering an invalid program");
    SynthesisStep &step = steps.emplace_back();
    step.kind = instruction.collective;
    // nccl-tests sizes: the gathered buffer for AllGather, the buffer before
    // the call for everything else (the root's for Broadcast).
    const ReductionState &sized =
        instruction.collective == CollectiveKind::AllGather ? *next : state;
    for (llvm::SmallVector<int64_t> &group : groups) {
      if (group.size() < 2)
        continue;
      step.chunks.push_back(sized.getNumHeldChunks(group[0]));
      step.groups.push_back(std::move(group));
    }
    state = std::move(*next);
  }
  return steps;
}

std::vector<LoweredStep> synth::lowerSteps(const Placement &placement,
                                           llvm::ArrayRef<SynthesisStep> steps,
                                           double bytes) {
  double chunkBytes =
      bytes / double(placement.getSynthesisHierarchy().getNumDevices());
  std::vector<LoweredStep> lowered;
  for (const SynthesisStep &step : steps) {
    LoweredStep &out = lowered.emplace_back();
    out.kind = step.kind;
    for (int64_t replica = 0; replica < placement.getNumReplicas(); ++replica)
      for (auto [group, chunks] : llvm::zip_equal(step.groups, step.chunks)) {
        out.bytes.push_back(double(chunks) * chunkBytes);
        llvm::SmallVector<int64_t> &devices = out.groups.emplace_back();
        for (int64_t device : group)
          devices.push_back(placement.getSystemDevice(replica, device));
      }
  }
  return lowered;
}

std::vector<LoweredStep>
synth::lowerProgram(const Placement &placement,
                    llvm::ArrayRef<Instruction> program, double bytes) {
  return lowerSteps(
      placement,
      getSynthesisSteps(placement.getSynthesisHierarchy().levels, program),
      bytes);
}

double synth::priceSteps(const CollectiveCostModel &model,
                         llvm::ArrayRef<LoweredStep> steps) {
  double total = 0;
  for (const LoweredStep &step : steps)
    total += model.getConcurrentTime(step.kind, step.groups,
                                     llvm::ArrayRef<double>(step.bytes));
  return total;
}

/// Rounds to 9 significant digits so that mathematically equal times (e.g.
/// a ring AllReduce and ReduceScatter ; AllGather) compare equal.
static double roundTime(double time) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.8e", time);
  return std::strtod(buf, nullptr);
}

std::vector<MatrixResult>
synth::synthesizeAll(const Hierarchy &system, llvm::ArrayRef<int64_t> axisSizes,
                     llvm::ArrayRef<unsigned> reduceAxes,
                     const CollectiveCostModel &model,
                     const SynthesisOptions &options, bool *exceeded) {
  if (exceeded)
    *exceeded = false;
  uint64_t work = 0, systemDevices = 1;
  llvm::SmallVector<int64_t> levelSizes;
  for (const NamedSize &level : system) {
    levelSizes.push_back(level.size);
    systemDevices *= level.size;
  }
  // Programs and their synthesis-level steps depend only on the synthesis
  // hierarchy's sizes; only the device mapping differs between matrices.
  std::map<
      std::vector<int64_t>,
      std::pair<std::vector<Program>, std::vector<std::vector<SynthesisStep>>>>
      programCache;
  std::vector<MatrixResult> results;
  for (ParallelismMatrix &matrix :
       enumerateParallelismMatrices(axisSizes, levelSizes)) {
    Placement placement(system, matrix, reduceAxes);
    MatrixResult result;
    result.synthesis = placement.getSynthesisHierarchy();
    result.matrix = std::move(matrix);
    const Hierarchy &hierarchy = result.synthesis.levels;

    std::vector<int64_t> sizes;
    for (const NamedSize &level : hierarchy)
      sizes.push_back(level.size);
    auto [it, inserted] = programCache.try_emplace(sizes);
    auto &[programs, programSteps] = it->second;
    if (inserted) {
      bool over = false;
      programs =
          synthesizePrograms(hierarchy, options.maxSize, options.maxWork - work,
                             &over, options.masters);
      if (over) {
        if (exceeded)
          *exceeded = true;
        return results;
      }
      for (const Program &program : programs) {
        programSteps.push_back(getSynthesisSteps(hierarchy, program));
        work += programSteps.back().size();
      }
    }
    // Pricing touches every system device once per step.
    uint64_t pricing = 0;
    for (const std::vector<SynthesisStep> &steps : programSteps)
      pricing += steps.size() * systemDevices;
    work += pricing;
    if (work > options.maxWork) {
      if (exceeded)
        *exceeded = true;
      return results;
    }
    for (auto [program, steps] : llvm::zip_equal(programs, programSteps))
      result.programs.push_back(
          {program,
           priceSteps(model, lowerSteps(placement, steps, options.bytes))});
    // Sort by rounded time; ties keep the enumeration order (fewer
    // instructions first). std::stable_sort's buffer API is deprecated in
    // this libstdc++, so the index breaks ties instead.
    std::vector<std::pair<double, size_t>> keys;
    for (auto [index, priced] : llvm::enumerate(result.programs))
      keys.push_back({roundTime(priced.time), index});
    llvm::sort(keys);
    std::vector<PricedProgram> sorted;
    for (const auto &key : keys)
      sorted.push_back(std::move(result.programs[key.second]));
    result.programs = std::move(sorted);
    Instruction baseline{
        0, {FormKind::InsideGroup, 0}, CollectiveKind::AllReduce};
    result.baselineTime =
        priceSteps(model, lowerProgram(placement, {baseline}, options.bytes));
    results.push_back(std::move(result));
  }
  return results;
}
