//===- SynthesisTest.cpp - Tests of reduction synthesis (P²) --------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Built from the P² paper's examples (docs/design/reference-facts.md).
//
//===----------------------------------------------------------------------===//

#include "DistIR/Synthesis/Synthesis.h"

#include "llvm/ADT/STLExtras.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

using namespace distir;
using namespace distir::synth;

namespace {

using Groups = std::vector<llvm::SmallVector<int64_t>>;

constexpr FormKind kInside = FormKind::InsideGroup;
constexpr FormKind kParallel = FormKind::Parallel;
constexpr FormKind kMaster = FormKind::Master;

// [(rack,1),(server,2),(CPU,2),(GPU,4)]: CPUs A, B in server 1 and C, D in
// server 2; A0..A3 are devices 0..3, B0 is 4, C0 is 8, D0 is 12.
const Hierarchy kPaper = {{"rack", 1}, {"server", 2}, {"CPU", 2}, {"GPU", 4}};
enum : unsigned { kRack, kServer, kCpu, kGpu };

Groups groups(unsigned slice, FormKind kind, unsigned level = 0) {
  return getDeviceGroups(kPaper, slice, Form{kind, level});
}

Groups range(int64_t count, int64_t size, int64_t stride, int64_t step) {
  Groups result;
  for (int64_t g = 0; g < count; ++g) {
    llvm::SmallVector<int64_t> &group = result.emplace_back();
    for (int64_t i = 0; i < size; ++i)
      group.push_back(g * stride + i * step);
  }
  return result;
}

TEST(DeviceGroupsTest, PaperExamples) {
  // (CPU, InsideGroup) -> {A0-A3}, {B0-B3}, {C0-C3}, {D0-D3}.
  EXPECT_EQ(groups(kCpu, kInside), range(4, 4, 4, 1));
  // (CPU, Parallel(server)) -> {A0,B0}, {A1,B1}, ..., {C0,D0}, ...
  EXPECT_EQ(groups(kCpu, kParallel, kServer), (Groups{{0, 4},
                                                      {1, 5},
                                                      {2, 6},
                                                      {3, 7},
                                                      {8, 12},
                                                      {9, 13},
                                                      {10, 14},
                                                      {11, 15}}));
  // (CPU, Parallel(rack)) -> {A0,B0,C0,D0}, ...
  EXPECT_EQ(groups(kCpu, kParallel, kRack), range(4, 4, 1, 4));
  // (CPU, Master(rack)) -> only {A0,B0,C0,D0}.
  EXPECT_EQ(groups(kCpu, kMaster, kRack), (Groups{{0, 4, 8, 12}}));
  // (server, InsideGroup) -> {A0-A3,B0-B3}, {C0-C3,D0-D3}.
  EXPECT_EQ(groups(kServer, kInside), range(2, 8, 8, 1));
  // (server, Parallel(rack)) -> {A0,C0}, ..., {B3,D3}.
  EXPECT_EQ(groups(kServer, kParallel, kRack), range(8, 2, 1, 8));
  // (rack, InsideGroup) -> all 16.
  EXPECT_EQ(groups(kRack, kInside), range(1, 16, 0, 1));
}

TEST(DeviceGroupsTest, RemainingPairs) {
  EXPECT_EQ(groups(kGpu, kInside), range(16, 1, 1, 1));
  EXPECT_EQ(groups(kGpu, kParallel, kCpu), range(4, 4, 4, 1));
  EXPECT_EQ(groups(kGpu, kParallel, kServer), range(2, 8, 8, 1));
  EXPECT_EQ(groups(kGpu, kParallel, kRack), range(1, 16, 0, 1));
  // At the leaf there is nothing below the slice: Master = Parallel.
  EXPECT_EQ(groups(kGpu, kMaster, kCpu), range(4, 4, 4, 1));
  EXPECT_EQ(groups(kGpu, kMaster, kServer), range(2, 8, 8, 1));
  EXPECT_EQ(groups(kGpu, kMaster, kRack), range(1, 16, 0, 1));
  EXPECT_EQ(groups(kCpu, kMaster, kServer), (Groups{{0, 4}, {8, 12}}));
  EXPECT_EQ(groups(kServer, kMaster, kRack), (Groups{{0, 8}}));
}

TEST(DeviceGroupsTest, ValidPairs) {
  EXPECT_TRUE(isValidSliceForm(kPaper, kRack, {kInside, 0}));
  EXPECT_FALSE(isValidSliceForm(kPaper, kRack, {kParallel, kRack}));
  EXPECT_FALSE(isValidSliceForm(kPaper, kCpu, {kParallel, kCpu}));
  EXPECT_FALSE(isValidSliceForm(kPaper, kCpu, {kMaster, kGpu}));
  EXPECT_FALSE(isValidSliceForm(kPaper, 4, {kInside, 0}));
}

TEST(DeviceGroupsTest, CandidatesSkipSingletonsAndRepeats) {
  Hierarchy twoLevel = {{"root", 1}, {"node", 2}, {"gpu", 2}};
  std::vector<Instruction> candidates = getCandidateInstructions(twoLevel);
  std::set<std::string> pairs;
  for (const Instruction &instruction : candidates) {
    std::string text = formatInstruction(twoLevel, instruction);
    pairs.insert(text.substr(text.find('(')));
  }
  // (gpu, *) repeats (root|node, InsideGroup); (node, Parallel(root))
  // is the cross-node pair.
  EXPECT_EQ(pairs, (std::set<std::string>{
                       "(root, InsideGroup)", "(node, InsideGroup)",
                       "(node, Parallel(root))", "(node, Master(root))"}));
  // The Master pair takes AllReduce only, unless asked for all five.
  EXPECT_EQ(candidates.size(), 3u * 5u + 1u);
  EXPECT_EQ(getCandidateInstructions(twoLevel, MasterCollectives::All).size(),
            4u * 5u);
}

//===----------------------------------------------------------------------===//
// Semantics
//===----------------------------------------------------------------------===//

const Hierarchy kTwoLevel = {{"root", 1}, {"node", 2}, {"gpu", 2}};
enum : unsigned { kRoot2, kNode2, kGpu2 };

Instruction instr(CollectiveKind collective, unsigned slice, FormKind kind,
                  unsigned level = 0) {
  return {slice, {kind, level}, collective};
}

std::optional<ReductionState> run(llvm::ArrayRef<Instruction> program) {
  std::optional<ReductionState> state = ReductionState::getInitial(4);
  for (const Instruction &instruction : program) {
    state = applyInstruction(kTwoLevel, *state, instruction);
    if (!state)
      return std::nullopt;
  }
  return state;
}

TEST(SemanticsTest, InitialState) {
  ReductionState state = ReductionState::getInitial(4);
  EXPECT_FALSE(state.isFinal());
  for (int64_t d = 0; d < 4; ++d) {
    EXPECT_EQ(state.getNumHeldChunks(d), 4);
    for (int64_t r = 0; r < 4; ++r)
      for (int64_t c = 0; c < 4; ++c)
        EXPECT_EQ(state.get(d, r, c), c == d);
  }
  EXPECT_TRUE(ReductionState::getInitial(1).isFinal());
}

TEST(SemanticsTest, PaperFigure4InvalidPrograms) {
  using CK = CollectiveKind;
  // A ReduceScatter, then an AllReduce that mixes the halves.
  Program mixesHalves = {instr(CK::ReduceScatter, kNode2, kInside),
                         instr(CK::AllReduce, kRoot2, kInside)};
  EXPECT_TRUE(run(llvm::ArrayRef(mixesHalves).take_front(1)));
  EXPECT_FALSE(run(mixesHalves));
  // An AllReduce that reduces the same data twice.
  Program twice = {instr(CK::AllReduce, kNode2, kInside),
                   instr(CK::AllReduce, kRoot2, kInside)};
  EXPECT_TRUE(run(llvm::ArrayRef(twice).take_front(1)));
  EXPECT_FALSE(run(twice));
  // The repaired versions are valid.
  std::optional<ReductionState> state =
      run({instr(CK::ReduceScatter, kNode2, kInside),
           instr(CK::AllReduce, kNode2, kParallel, kRoot2),
           instr(CK::AllGather, kNode2, kInside)});
  ASSERT_TRUE(state);
  EXPECT_TRUE(state->isFinal());
}

TEST(SemanticsTest, PostStates) {
  using CK = CollectiveKind;
  // ReduceScatter in {0,1}: rank 0 keeps chunks 0-1, rank 1 chunks 2-3,
  // each with contributions {0,1}.
  std::optional<ReductionState> rs =
      run({instr(CK::ReduceScatter, kNode2, kInside)});
  ASSERT_TRUE(rs);
  for (int64_t r = 0; r < 4; ++r) {
    EXPECT_EQ(rs->get(0, r, 0) && rs->get(0, r, 1), r < 2);
    EXPECT_EQ(rs->get(1, r, 0) && rs->get(1, r, 1), r >= 2);
    EXPECT_FALSE(rs->get(0, r, 2));
  }
  EXPECT_EQ(rs->getNumHeldChunks(0), 2);
  // Reduce empties the non-roots; Broadcast refills them.
  std::optional<ReductionState> reduced =
      run({instr(CK::Reduce, kNode2, kInside)});
  ASSERT_TRUE(reduced);
  EXPECT_EQ(reduced->getNumHeldChunks(0), 4);
  EXPECT_EQ(reduced->getNumHeldChunks(1), 0);
  EXPECT_TRUE(reduced->get(0, 3, 1));
  // An AllGather of chunks that overlap is invalid; so is an AllGather
  // right at the start (every device holds every chunk).
  EXPECT_FALSE(run({instr(CK::AllGather, kNode2, kInside)}));
  // Broadcast would overwrite data the root does not have.
  EXPECT_FALSE(run({instr(CK::Broadcast, kNode2, kInside)}));
  // Reducing empty devices with non-empty ones mixes chunk sets.
  EXPECT_FALSE(run({instr(CK::Reduce, kNode2, kInside),
                    instr(CK::AllReduce, kNode2, kParallel, kRoot2)}));
  // ReduceScatter needs the held chunks to split evenly.
  const Hierarchy three = {{"root", 1}, {"x", 3}};
  EXPECT_TRUE(applyInstruction(three, ReductionState::getInitial(3),
                               instr(CK::ReduceScatter, 0, kInside)));
  std::optional<ReductionState> split =
      applyInstruction(kTwoLevel, ReductionState::getInitial(4),
                       instr(CK::ReduceScatter, kRoot2, kInside));
  ASSERT_TRUE(split);
  EXPECT_EQ(split->getNumHeldChunks(0), 1);
  EXPECT_FALSE(applyInstruction(kTwoLevel, *split,
                                instr(CK::ReduceScatter, kNode2, kInside)));
}

//===----------------------------------------------------------------------===//
// Enumeration
//===----------------------------------------------------------------------===//

std::set<std::string> programTexts(llvm::ArrayRef<NamedSize> hierarchy,
                                   unsigned maxSize) {
  std::set<std::string> texts;
  for (const Program &program : synthesizePrograms(hierarchy, maxSize))
    texts.insert(formatProgram(hierarchy, program));
  return texts;
}

TEST(SynthesisTest, FindsThePaperPrograms) {
  std::set<std::string> texts = programTexts(kTwoLevel, 5);
  EXPECT_TRUE(texts.count("AllReduce(root, InsideGroup)"));
  EXPECT_TRUE(texts.count("Reduce(node, InsideGroup) ; "
                          "AllReduce(node, Master(root)) ; "
                          "Broadcast(node, InsideGroup)"));
  EXPECT_TRUE(texts.count("ReduceScatter(node, InsideGroup) ; "
                          "AllReduce(node, Parallel(root)) ; "
                          "AllGather(node, InsideGroup)"));
  EXPECT_TRUE(texts.count("AllReduce(node, InsideGroup) ; "
                          "AllReduce(node, Parallel(root))"));
  for (const Program &program : synthesizePrograms(kTwoLevel, 5)) {
    std::optional<ReductionState> state = run(program);
    ASSERT_TRUE(state) << formatProgram(kTwoLevel, program);
    EXPECT_TRUE(state->isFinal()) << formatProgram(kTwoLevel, program);
  }
}

TEST(SynthesisTest, OrderedBySizeAndDeterministic) {
  std::vector<Program> programs = synthesizePrograms(kTwoLevel, 4);
  ASSERT_FALSE(programs.empty());
  EXPECT_EQ(programs.front().size(), 1u);
  for (size_t i = 1; i < programs.size(); ++i)
    EXPECT_LE(programs[i - 1].size(), programs[i].size());
  std::vector<Program> again = synthesizePrograms(kTwoLevel, 4);
  EXPECT_EQ(programs, again);
}

TEST(SynthesisTest, CountsNeverShrink) {
  for (const Hierarchy &hierarchy :
       {kTwoLevel, Hierarchy{{"root", 1}, {"a", 2}, {"b", 2}, {"c", 2}},
        Hierarchy{{"root", 1}, {"a", 3}, {"b", 2}}}) {
    std::set<std::string> previous;
    for (unsigned size = 0; size <= 5; ++size) {
      std::set<std::string> texts = programTexts(hierarchy, size);
      EXPECT_GE(texts.size(), previous.size());
      EXPECT_TRUE(std::includes(texts.begin(), texts.end(), previous.begin(),
                                previous.end()));
      previous = std::move(texts);
    }
    EXPECT_GT(previous.size(), 1u);
  }
}

//===----------------------------------------------------------------------===//
// Parallelism matrices and placements
//===----------------------------------------------------------------------===//

int64_t product(llvm::ArrayRef<int64_t> values) {
  int64_t result = 1;
  for (int64_t v : values)
    result *= v;
  return result;
}

/// Counts matrices by brute force over all divisor entries.
size_t bruteForceCount(llvm::ArrayRef<int64_t> axes,
                       llvm::ArrayRef<int64_t> levels) {
  size_t cells = axes.size() * levels.size(), count = 0;
  int64_t maxEntry = product(levels);
  std::vector<int64_t> entries(cells, 1);
  while (true) {
    bool ok = true;
    for (size_t i = 0; i < axes.size() && ok; ++i) {
      int64_t p = 1;
      for (size_t j = 0; j < levels.size(); ++j)
        p *= entries[i * levels.size() + j];
      ok = p == axes[i];
    }
    for (size_t j = 0; j < levels.size() && ok; ++j) {
      int64_t p = 1;
      for (size_t i = 0; i < axes.size(); ++i)
        p *= entries[i * levels.size() + j];
      ok = p == levels[j];
    }
    count += ok;
    size_t c = 0;
    while (c < cells && entries[c] == maxEntry)
      entries[c++] = 1;
    if (c == cells)
      return count;
    ++entries[c];
  }
}

TEST(ParallelismMatrixTest, ProductConstraints) {
  struct Case {
    std::vector<int64_t> axes, levels;
  };
  for (const Case &c : {Case{{2, 16}, {2, 16}}, Case{{4, 4, 4}, {4, 2, 8}},
                        Case{{6, 2}, {3, 4}}, Case{{8}, {2, 2, 2}},
                        Case{{2, 2, 2, 2}, {4, 4}}}) {
    std::vector<ParallelismMatrix> matrices =
        enumerateParallelismMatrices(c.axes, c.levels);
    ASSERT_FALSE(matrices.empty());
    std::set<ParallelismMatrix> unique(matrices.begin(), matrices.end());
    EXPECT_EQ(unique.size(), matrices.size());
    for (const ParallelismMatrix &m : matrices) {
      ASSERT_EQ(m.size(), c.axes.size());
      for (size_t i = 0; i < c.axes.size(); ++i)
        EXPECT_EQ(product(m[i]), c.axes[i]);
      for (size_t j = 0; j < c.levels.size(); ++j) {
        int64_t p = 1;
        for (size_t i = 0; i < c.axes.size(); ++i)
          p *= m[i][j];
        EXPECT_EQ(p, c.levels[j]);
      }
    }
    if (c.axes.size() * c.levels.size() <= 6 && product(c.levels) <= 16)
      EXPECT_EQ(matrices.size(), bruteForceCount(c.axes, c.levels));
  }
  EXPECT_EQ(
      enumerateParallelismMatrices({2, 16}, {2, 16}),
      (std::vector<ParallelismMatrix>{{{1, 2}, {2, 8}}, {{2, 1}, {1, 16}}}));
  EXPECT_TRUE(enumerateParallelismMatrices({2, 3}, {2, 2}).empty());
  EXPECT_TRUE(enumerateParallelismMatrices({}, {2}).empty());
}

TEST(ParallelismMatrixTest, DeepHierarchiesAreBounded) {
  // 12 levels of 2 and axes 8 x 512: C(12, 3) = 220 matrices, each once,
  // found without exploring dead prefixes; a limit cuts the enumeration
  // after limit + 1.
  std::vector<int64_t> levels(12, 2);
  EXPECT_EQ(enumerateParallelismMatrices({8, 512}, levels).size(), 220u);
  EXPECT_EQ(enumerateParallelismMatrices({8, 512}, levels, 10).size(), 11u);
  EXPECT_EQ(enumerateParallelismMatrices({8, 512}, levels, 220).size(), 220u);
  // 24 levels of 2 over three axes of 2^8 have about 9.7e9 matrices: the
  // first 4097 come at once.
  std::vector<int64_t> deep(24, 2);
  EXPECT_EQ(enumerateParallelismMatrices({256, 256, 256}, deep, 4096).size(),
            4097u);
  // A level of 2^21 devices: its 22 divisors are tried, not 2^21 values.
  EXPECT_EQ(enumerateParallelismMatrices({1 << 10, 1 << 11}, {1 << 21}).size(),
            1u);
}

TEST(PlacementTest, SynthesisHierarchyCollapsesLevels) {
  Hierarchy system = {{"node", 2}, {"cpu", 2}, {"gpu", 4}};
  // Axes a:4, b:4; a = node x gpu(2), b = cpu x gpu(2).
  ParallelismMatrix matrix = {{2, 1, 2}, {1, 2, 2}};
  SynthesisHierarchy one = buildSynthesisHierarchy(system, matrix, {0});
  EXPECT_EQ(one.levels, (Hierarchy{{"root", 1}, {"node", 2}, {"gpu", 2}}));
  SynthesisHierarchy both = buildSynthesisHierarchy(system, matrix, {0, 1});
  EXPECT_EQ(both.levels,
            (Hierarchy{{"root", 1}, {"node", 2}, {"cpu", 2}, {"gpu", 4}}));
  EXPECT_EQ(both.systemLevels[3], 2u);
  EXPECT_EQ(both.systemLevels[0], std::nullopt);
}

TEST(PlacementTest, MapsReplicasToDevices) {
  Hierarchy system = {{"node", 2}, {"gpu", 16}};
  Placement across(system, {{1, 2}, {2, 8}}, {1});
  ASSERT_EQ(across.getNumReplicas(), 2);
  // The reduced axis is node x the low 8 GPUs; replica 1 is the high GPUs.
  EXPECT_EQ(across.getSystemDevice(0, 0), 0);
  EXPECT_EQ(across.getSystemDevice(0, 7), 7);
  EXPECT_EQ(across.getSystemDevice(0, 8), 16);
  EXPECT_EQ(across.getSystemDevice(1, 0), 8);
  EXPECT_EQ(across.getSystemDevice(1, 15), 31);
  std::set<int64_t> seen;
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t d = 0; d < 16; ++d)
      seen.insert(across.getSystemDevice(r, d));
  EXPECT_EQ(seen.size(), 32u);

  Placement inside(system, {{2, 1}, {1, 16}}, {1});
  EXPECT_EQ(inside.getSynthesisHierarchy().levels,
            (Hierarchy{{"root", 1}, {"gpu", 16}}));
  EXPECT_EQ(inside.getSystemDevice(1, 3), 19);
}

//===----------------------------------------------------------------------===//
// Pricing
//===----------------------------------------------------------------------===//

Cluster getPreset(llvm::StringRef spec) {
  std::string error;
  auto onError = [&error](const llvm::Twine &message) {
    error = message.str();
  };
  mlir::FailureOr<Cluster> cluster = getClusterPreset(spec, onError);
  EXPECT_TRUE(succeeded(cluster)) << error;
  return succeeded(cluster) ? *cluster : Cluster();
}

TEST(PricingTest, LoweredStepsAndHandComputedTime) {
  Cluster cluster = getPreset("gcp-a100x16:nodes=2");
  CollectiveCostModel model(cluster);
  Placement placement({{"node", 2}, {"gpu", 16}}, {{1, 2}, {2, 8}}, {1});
  const Hierarchy &h = placement.getSynthesisHierarchy().levels;
  ASSERT_EQ(h, (Hierarchy{{"root", 1}, {"node", 2}, {"gpu", 8}}));
  using CK = CollectiveKind;
  Program program = {instr(CK::ReduceScatter, 1, kInside),
                     instr(CK::AllReduce, 1, kParallel, 0),
                     instr(CK::AllGather, 1, kInside)};
  double bytes = 64.0 * 1024 * 1024;
  std::vector<LoweredStep> steps = lowerProgram(placement, program, bytes);
  ASSERT_EQ(steps.size(), 3u);
  // 2 nodes x 2 replicas groups of 8 GPUs; then 2 x 8 pairs across nodes.
  EXPECT_EQ(steps[0].groups.size(), 4u);
  EXPECT_EQ(steps[0].groups[0],
            (llvm::SmallVector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(steps[1].groups.size(), 16u);
  EXPECT_EQ(steps[1].groups[0], (llvm::SmallVector<int64_t>{0, 16}));
  EXPECT_EQ(steps[0].bytes[0], bytes);
  EXPECT_EQ(steps[1].bytes[0], bytes / 8);
  EXPECT_EQ(steps[2].bytes[0], bytes);

  double local = 7 * 2e-6 + bytes * 7 / 8 / 270e9;
  double cross = 2 * 25e-6 + (bytes / 8) / (7.5e9 / 16);
  EXPECT_NEAR(priceSteps(model, steps), 2 * local + cross, 1e-12);

  // The baseline: two 16-GPU rings share both NICs.
  Instruction allReduce = instr(CK::AllReduce, 0, kInside);
  double baseline = 30 * 25e-6 + bytes * 30 / 16 / (7.5e9 / 2);
  EXPECT_NEAR(priceSteps(model, lowerProgram(placement, {allReduce}, bytes)),
              baseline, 1e-12);
}

TEST(PricingTest, AcrossNodesBeatsAllReduceInsideKeepsIt) {
  using CK = CollectiveKind;
  Cluster cluster = getPreset("gcp-a100x16:nodes=2");
  CollectiveCostModel model(cluster);
  std::vector<MatrixResult> results = synthesizeAll(
      {{"node", 2}, {"gpu", 16}}, {2, 16}, {1}, model, SynthesisOptions());
  ASSERT_EQ(results.size(), 2u);
  // [[1, 2], [2, 8]]: the reduction crosses nodes.
  const MatrixResult &across = results[0];
  ASSERT_FALSE(across.programs.empty());
  EXPECT_LT(across.programs.front().time, 0.6 * across.baselineTime);
  EXPECT_GT(across.programs.front().program.size(), 1u);
  // [[2, 1], [1, 16]]: inside a node the single AllReduce stays best.
  const MatrixResult &inside = results[1];
  ASSERT_FALSE(inside.programs.empty());
  EXPECT_EQ(inside.programs.front().program,
            (Program{instr(CK::AllReduce, 0, kInside)}));
  EXPECT_DOUBLE_EQ(inside.programs.front().time, inside.baselineTime);
  // Only AllReduce, ReduceScatter ; AllGather and Reduce ; Broadcast.
  EXPECT_EQ(inside.programs.size(), 3u);
  for (size_t i = 1; i < across.programs.size(); ++i)
    EXPECT_LE(across.programs[i - 1].time, across.programs[i].time * 1.000001);
}

} // namespace
