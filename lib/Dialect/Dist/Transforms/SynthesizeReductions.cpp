//===- SynthesizeReductions.cpp - Hierarchical all-reduce synthesis -------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Replaces each `dist.all_reduce` whose group spans several levels of the
// cluster hierarchy by the predicted-fastest reduction program synthesized
// by the P² library (DistIR/Synthesis/Synthesis.h), when that program beats
// the single all-reduce.
//
// The group's synthesis hierarchy is `root:1` followed by one level per
// cluster level at which the group's devices take more than one coordinate,
// sized by the number of such coordinates; the group must be the product of
// its per-level coordinate sets. Synthesis device ids are row-major over
// those levels, coordinates ranked in increasing order.
//
// Lowering keeps, per synthesis device, the sorted list of chunks it holds
// (chunk c = rows [c*R/k, (c+1)*R/k) of dimension 0, k = group size) and the
// SSA value that holds exactly those chunks, concatenated in order.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Analysis/CollectiveCost.h"
#include "DistIR/Cluster/Cluster.h"
#include "DistIR/Dialect/Dist/IR/DistCluster.h"
#include "DistIR/Dialect/Dist/IR/DistOps.h"
#include "DistIR/Dialect/Dist/Transforms/Passes.h"
#include "DistIR/Synthesis/Synthesis.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace distir::dist {
#define GEN_PASS_DEF_DISTSYNTHESIZEREDUCTIONSPASS
#include "DistIR/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace distir::dist

using namespace mlir;
using namespace distir;
using namespace distir::dist;
using distir::synth::Hierarchy;
using distir::synth::NamedSize;
using distir::synth::Program;

namespace {

/// The synthesis problem of one all-reduce group.
struct GroupProblem {
  /// `root:1` then the spanned levels.
  Hierarchy hierarchy;
  /// Operand index of each synthesis device.
  SmallVector<int64_t> operandOf;
  /// System device id of each synthesis device.
  SmallVector<int64_t> systemDevice;
};

/// One collective of a lowered program, members as synthesis devices in
/// operand order (rank 0 is the root of Reduce and Broadcast).
struct PlannedOp {
  CollectiveKind kind;
  SmallVector<int64_t> members;
};

/// Rounds to 9 significant digits so that mathematically equal times compare
/// equal (as the synthesis library does when it sorts programs).
double roundTime(double time) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.8e", time);
  return std::strtod(buf, nullptr);
}

std::string formatTime(double time) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6e", time);
  return buf;
}

/// Builds the problem of a group of distinct, in-range devices, or returns
/// the reason why the group is not a product of per-level coordinate sets.
FailureOr<GroupProblem> buildProblem(const Cluster &cluster,
                                     ArrayRef<int64_t> devices,
                                     std::string &reason) {
  unsigned numLevels = cluster.levels.size();
  SmallVector<SmallVector<int64_t>> coords;
  std::vector<std::vector<int64_t>> levelCoords(numLevels);
  for (int64_t device : devices) {
    coords.push_back(cluster.getCoordinates(device));
    for (unsigned l = 0; l < numLevels; ++l)
      levelCoords[l].push_back(coords.back()[l]);
  }
  int64_t product = 1;
  GroupProblem problem;
  problem.hierarchy.push_back({"root", 1});
  SmallVector<unsigned> spanned;
  for (unsigned l = 0; l < numLevels; ++l) {
    std::vector<int64_t> &set = levelCoords[l];
    llvm::sort(set);
    set.erase(std::unique(set.begin(), set.end()), set.end());
    product *= static_cast<int64_t>(set.size());
    if (set.size() > 1) {
      spanned.push_back(l);
      problem.hierarchy.push_back(
          {cluster.levels[l].name, static_cast<int64_t>(set.size())});
    }
  }
  if (product != static_cast<int64_t>(devices.size())) {
    reason = "the group is not a product of per-level device sets";
    return failure();
  }
  problem.operandOf.assign(devices.size(), -1);
  problem.systemDevice.assign(devices.size(), -1);
  for (auto [operand, device] : llvm::enumerate(devices)) {
    int64_t index = 0;
    for (unsigned l : spanned) {
      const std::vector<int64_t> &set = levelCoords[l];
      int64_t rank = llvm::lower_bound(set, coords[operand][l]) - set.begin();
      index = index * static_cast<int64_t>(set.size()) + rank;
    }
    problem.operandOf[index] = operand;
    problem.systemDevice[index] = device;
  }
  return problem;
}

/// Plans the `dist` ops of `program`, tracking chunks and (for `avg`)
/// contribution counts. Returns the reason when the program cannot be
/// expressed with the ops' semantics.
FailureOr<std::vector<PlannedOp>>
planProgram(ArrayRef<NamedSize> hierarchy, ArrayRef<synth::Instruction> program,
            RankedTensorType type, ReductionKind reduction,
            std::string &reason) {
  int64_t k = 1;
  for (const NamedSize &level : hierarchy)
    k *= level.size;
  bool splits = llvm::any_of(program, [](const synth::Instruction &inst) {
    return inst.collective == CollectiveKind::ReduceScatter ||
           inst.collective == CollectiveKind::AllGather;
  });
  if (splits && (type.getRank() == 0 || type.getDimSize(0) % k != 0)) {
    reason = type.getRank() == 0
                 ? std::string("a rank-0 tensor cannot be split")
                 : "dimension 0 of size " + std::to_string(type.getDimSize(0)) +
                       " is not divisible by the " + std::to_string(k) +
                       " devices of the group";
    return failure();
  }
  // chunks[d]: sorted chunks held by d; count[d][c]: contributions in d's
  // chunk c (only used for avg).
  std::vector<std::vector<int64_t>> chunks(k);
  std::vector<std::vector<int64_t>> count(k, std::vector<int64_t>(k, 1));
  for (int64_t d = 0; d < k; ++d)
    for (int64_t c = 0; c < k; ++c)
      chunks[d].push_back(c);

  std::vector<PlannedOp> plan;
  for (const synth::Instruction &inst : program) {
    for (const SmallVector<int64_t> &group :
         synth::getDeviceGroups(hierarchy, inst.slice, inst.form)) {
      if (group.size() < 2)
        continue;
      PlannedOp op{inst.collective, SmallVector<int64_t>(group)};
      int64_t root = group.front();
      switch (inst.collective) {
      case CollectiveKind::AllReduce:
      case CollectiveKind::ReduceScatter:
      case CollectiveKind::Reduce: {
        // The program is valid: members hold the same chunks.
        std::vector<int64_t> held = chunks[root];
        if (reduction == ReductionKind::Avg) {
          for (int64_t c : held)
            for (int64_t d : group)
              if (count[d][c] != count[root][c]) {
                reason = "avg would weigh unequal partial reductions";
                return failure();
              }
        }
        std::vector<int64_t> total(k, 0);
        for (int64_t c : held)
          for (int64_t d : group)
            total[c] += count[d][c];
        int64_t g = group.size();
        for (auto [rank, d] : llvm::enumerate(group)) {
          if (inst.collective == CollectiveKind::ReduceScatter) {
            int64_t block = held.size() / g;
            chunks[d].assign(held.begin() + rank * block,
                             held.begin() + (rank + 1) * block);
          } else if (inst.collective == CollectiveKind::Reduce && rank != 0) {
            chunks[d].clear();
          }
          for (int64_t c : chunks[d])
            count[d][c] = total[c];
        }
        break;
      }
      case CollectiveKind::AllGather: {
        // Operand order: by first held chunk; the concatenation must be
        // the sorted union.
        llvm::sort(op.members, [&](int64_t a, int64_t b) {
          return chunks[a].front() < chunks[b].front();
        });
        std::vector<int64_t> all;
        for (int64_t d : op.members) {
          if (!all.empty() && all.back() > chunks[d].front()) {
            reason = "an all_gather would concatenate chunks out of order";
            return failure();
          }
          all.insert(all.end(), chunks[d].begin(), chunks[d].end());
        }
        std::vector<int64_t> counts(k, 0);
        for (int64_t d : op.members)
          for (int64_t c : chunks[d])
            counts[c] = count[d][c];
        for (int64_t d : op.members) {
          chunks[d] = all;
          for (int64_t c : all)
            count[d][c] = counts[c];
        }
        break;
      }
      case CollectiveKind::Broadcast:
        for (int64_t d : group) {
          chunks[d] = chunks[root];
          count[d] = count[root];
        }
        break;
      default:
        reason = "unsupported collective " +
                 stringifyCollectiveKind(inst.collective).str();
        return failure();
      }
      plan.push_back(std::move(op));
    }
  }
  for (int64_t d = 0; d < k; ++d) {
    if (static_cast<int64_t>(chunks[d].size()) != k) {
      reason = "the program does not leave every device the whole tensor";
      return failure();
    }
  }
  return plan;
}

/// Emits `plan` before `op` and replaces it.
void emitPlan(AllReduceOp op, const GroupProblem &problem,
              ArrayRef<PlannedOp> plan) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto fullType = cast<RankedTensorType>(op.getInputs().front().getType());
  int64_t k = problem.operandOf.size();
  // values[d] and its number of chunks (rows = held * R / k).
  SmallVector<Value> values(k);
  SmallVector<int64_t> held(k, k);
  for (int64_t d = 0; d < k; ++d)
    values[d] = op.getInputs()[problem.operandOf[d]];
  auto typeWith = [&](int64_t numChunks, int64_t device) {
    SmallVector<int64_t> shape(fullType.getShape());
    if (numChunks != k)
      shape[0] = shape[0] / k * numChunks;
    return withDevice(RankedTensorType::get(shape, fullType.getElementType()),
                      device);
  };
  ReductionKind reduction = op.getKind();
  const uint64_t dim0 = 0;
  for (const PlannedOp &step : plan) {
    SmallVector<Value> inputs;
    for (int64_t d : step.members)
      inputs.push_back(values[d]);
    int64_t g = step.members.size();
    int64_t root = step.members.front();
    switch (step.kind) {
    case CollectiveKind::AllReduce: {
      auto created = AllReduceOp::create(b, loc, reduction, inputs);
      for (auto [i, d] : llvm::enumerate(step.members))
        values[d] = created.getResults()[i];
      break;
    }
    case CollectiveKind::ReduceScatter: {
      auto created = ReduceScatterOp::create(b, loc, reduction, inputs, dim0);
      for (auto [i, d] : llvm::enumerate(step.members)) {
        values[d] = created.getResults()[i];
        held[d] /= g;
      }
      break;
    }
    case CollectiveKind::AllGather: {
      auto created = AllGatherOp::create(b, loc, inputs, dim0);
      for (auto [i, d] : llvm::enumerate(step.members)) {
        values[d] = created.getResults()[i];
        held[d] *= g;
      }
      break;
    }
    case CollectiveKind::Reduce: {
      auto created =
          ReduceOp::create(b, loc, values[root].getType(), reduction, inputs);
      for (int64_t d : step.members)
        values[d] = Value();
      values[root] = created.getResult();
      break;
    }
    case CollectiveKind::Broadcast: {
      SmallVector<Type> types;
      for (int64_t d : step.members)
        types.push_back(typeWith(held[root], problem.systemDevice[d]));
      auto created = BroadcastOp::create(b, loc, types, values[root]);
      for (auto [i, d] : llvm::enumerate(step.members)) {
        values[d] = created.getResults()[i];
        held[d] = held[root];
      }
      break;
    }
    default:
      llvm_unreachable("planProgram emits only the five DSL collectives");
    }
  }
  SmallVector<Value> replacements(k);
  for (int64_t d = 0; d < k; ++d)
    replacements[problem.operandOf[d]] = values[d];
  op->replaceAllUsesWith(replacements);
  op->erase();
}

struct DistSynthesizeReductionsPass
    : public dist::impl::DistSynthesizeReductionsPassBase<
          DistSynthesizeReductionsPass> {
  using DistSynthesizeReductionsPassBase::DistSynthesizeReductionsPassBase;

  void runOnOperation() final;

private:
  /// Synthesizes for one all-reduce; fails only on errors.
  LogicalResult processAllReduce(AllReduceOp op, const Cluster &cluster,
                                 const CollectiveCostModel &model);

  void remark(Operation *op, const Twine &message) {
    if (verbose)
      emitRemark(op->getLoc(), message);
  }

  /// Programs per synthesis hierarchy (sizes).
  std::map<std::vector<int64_t>, std::vector<Program>> programCache;
};

void DistSynthesizeReductionsPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto moduleError = [&](const Twine &msg) {
    mlir::emitError(module.getLoc(), msg);
  };

  if (maxSize < 1 || maxSize > 8) {
    moduleError("max-size must be in 1..8, got " + Twine(maxSize));
    return signalPassFailure();
  }

  FailureOr<Cluster> resolved = resolveModuleCluster(
      module, cluster,
      "pass cluster=NAME or cluster=path.json to dist-synthesize-reductions, "
      "or attach one with dist-attach-cluster",
      moduleError);
  if (failed(resolved))
    return signalPassFailure();
  Cluster &resolvedCluster = *resolved;

  CollectiveCostModel model(resolvedCluster, algo);
  SmallVector<AllReduceOp> ops;
  module.walk([&](AllReduceOp op) { ops.push_back(op); });
  bool failedAny = false;
  for (AllReduceOp op : ops)
    if (failed(processAllReduce(op, resolvedCluster, model)))
      failedAny = true;
  if (failedAny)
    signalPassFailure();
}

LogicalResult DistSynthesizeReductionsPass::processAllReduce(
    AllReduceOp op, const Cluster &cluster, const CollectiveCostModel &model) {
  int64_t numDevices = cluster.getNumDevices();
  SmallVector<int64_t> devices;
  for (Value input : op.getInputs()) {
    int64_t device = getDevice(input).getId();
    if (device >= numDevices)
      return op.emitOpError("device ")
             << device << " of the group is outside cluster '" << cluster.name
             << "' (" << numDevices << " devices)";
    devices.push_back(device);
  }
  if (devices.size() < 2) {
    remark(op, "kept: a group of one device");
    return success();
  }
  std::string reason;
  FailureOr<GroupProblem> problem = buildProblem(cluster, devices, reason);
  if (failed(problem)) {
    remark(op, "kept: " + reason);
    return success();
  }
  const Hierarchy &hierarchy = problem->hierarchy;
  if (hierarchy.size() < 3) {
    remark(op, "kept: the group spans one hierarchy level (" +
                   hierarchy.back().name + ")");
    return success();
  }
  int64_t k = devices.size();
  if (k > synth::kMaxSynthesisDevices) {
    remark(op, "kept: the group has " + Twine(k) + " devices (at most " +
                   Twine(synth::kMaxSynthesisDevices) + " are synthesized)");
    return success();
  }

  std::vector<int64_t> sizes;
  for (const NamedSize &level : hierarchy)
    sizes.push_back(level.size);
  auto cached = programCache.find(sizes);
  if (cached == programCache.end()) {
    // The enumeration is exponential in max-size: bounded by the work budget
    // distir-synth uses (docs/design/limits.md).
    bool exceeded = false;
    std::vector<Program> programs =
        synth::synthesizePrograms(hierarchy, maxSize, synth::kMaxSynthesisWork,
                                  &exceeded, masterCollectives);
    if (exceeded)
      return op.emitOpError("synthesizing every program of up to ")
             << unsigned(maxSize) << " instructions for this group of " << k
             << " devices would take more than " << synth::kMaxSynthesisWork
             << " work units (docs/design/limits.md); lower max-size";
    cached = programCache.emplace(sizes, std::move(programs)).first;
  }
  const std::vector<Program> &programs = cached->second;

  auto type = cast<RankedTensorType>(op.getInputs().front().getType());
  double bytes = static_cast<double>(type.getNumElements()) *
                 llvm::divideCeil(type.getElementTypeBitWidth(), 8);

  synth::LoweredStep baselineStep{
      CollectiveKind::AllReduce, {SmallVector<int64_t>(devices)}, {bytes}};
  double baseline = roundTime(synth::priceSteps(model, baselineStep));

  // Price every program on the group's system devices.
  struct Candidate {
    double time;
    size_t index;
  };
  std::vector<Candidate> candidates;
  for (auto [index, program] : llvm::enumerate(programs)) {
    std::vector<synth::LoweredStep> lowered;
    for (const synth::SynthesisStep &step :
         synth::getSynthesisSteps(hierarchy, program)) {
      synth::LoweredStep out{step.kind, {}, {}};
      for (auto [group, chunks] : llvm::zip(step.groups, step.chunks)) {
        SmallVector<int64_t> system;
        for (int64_t d : group)
          system.push_back(problem->systemDevice[d]);
        out.groups.push_back(std::move(system));
        out.bytes.push_back(bytes * static_cast<double>(chunks) /
                            static_cast<double>(k));
      }
      lowered.push_back(std::move(out));
    }
    candidates.push_back({roundTime(synth::priceSteps(model, lowered)), index});
  }
  // Ties keep the enumeration order (fewer instructions first).
  llvm::sort(candidates, [](const Candidate &a, const Candidate &b) {
    return a.time < b.time || (a.time == b.time && a.index < b.index);
  });

  // The first skipped program and why, and how many were skipped.
  std::string skipped;
  int64_t numSkipped = 0;
  auto skippedNote = [&]() -> std::string {
    if (numSkipped == 0)
      return "";
    return "; skipped " + std::to_string(numSkipped) +
           " faster program(s) that the dist ops cannot express, first " +
           skipped;
  };
  for (const Candidate &candidate : candidates) {
    if (candidate.time >= baseline)
      break;
    const Program &program = programs[candidate.index];
    std::string why;
    FailureOr<std::vector<PlannedOp>> plan =
        planProgram(hierarchy, program, type, op.getKind(), why);
    if (failed(plan)) {
      if (numSkipped++ == 0)
        skipped = synth::formatProgram(hierarchy, program) + ": " + why;
      continue;
    }
    remark(op, "replaced by " + synth::formatProgram(hierarchy, program) +
                   " (predicted " + formatTime(candidate.time) +
                   " s, all_reduce " + formatTime(baseline) + " s)" +
                   skippedNote());
    emitPlan(op, *problem, *plan);
    return success();
  }
  remark(op, "kept: no expressible program is predicted faster than the "
             "all_reduce (" +
                 formatTime(baseline) + " s)" + skippedNote());
  return success();
}

} // namespace
