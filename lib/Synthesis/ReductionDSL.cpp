//===- ReductionDSL.cpp - Reduction programs and their semantics ----------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Device groups of slice/form pairs, device states with the validity and
// post-state rule of each collective, and the enumeration of valid programs.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Synthesis/Synthesis.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <bitset>
#include <cassert>
#include <set>

using namespace distir;
using namespace distir::synth;

//===----------------------------------------------------------------------===//
// Slice/form pairs
//===----------------------------------------------------------------------===//

bool synth::isValidSliceForm(llvm::ArrayRef<NamedSize> hierarchy,
                             unsigned slice, Form form) {
  if (slice >= hierarchy.size())
    return false;
  return form.kind == FormKind::InsideGroup || form.level < slice;
}

std::vector<llvm::SmallVector<int64_t>>
synth::getDeviceGroups(llvm::ArrayRef<NamedSize> hierarchy, unsigned slice,
                       Form form) {
  assert(isValidSliceForm(hierarchy, slice, form) && "invalid slice/form");
  size_t numLevels = hierarchy.size();
  // Levels whose coordinate varies inside a group.
  llvm::SmallVector<bool> varies(numLevels, false);
  unsigned first =
      form.kind == FormKind::InsideGroup ? slice + 1 : form.level + 1;
  unsigned last = form.kind == FormKind::InsideGroup ? numLevels - 1 : slice;
  for (unsigned l = first; l <= last && l < numLevels; ++l)
    varies[l] = true;

  int64_t numDevices = 1;
  for (const NamedSize &level : hierarchy)
    numDevices *= level.size;

  // Devices in increasing id order land in their group in rank order; a
  // group's key is its members' id with the varying coordinates zeroed.
  std::vector<llvm::SmallVector<int64_t>> groups;
  llvm::DenseMap<int64_t, size_t> groupOfKey;
  llvm::SmallVector<int64_t> coords(numLevels);
  for (int64_t device = 0; device < numDevices; ++device) {
    for (int64_t rest = device, l = numLevels; l-- > 0;) {
      coords[l] = rest % hierarchy[l].size;
      rest /= hierarchy[l].size;
    }
    if (form.kind == FormKind::Master &&
        llvm::any_of(llvm::drop_begin(coords, slice + 1),
                     [](int64_t c) { return c != 0; }))
      continue;
    int64_t key = 0;
    for (size_t l = 0; l < numLevels; ++l)
      key = key * hierarchy[l].size + (varies[l] ? 0 : coords[l]);
    auto [it, inserted] = groupOfKey.try_emplace(key, groups.size());
    if (inserted)
      groups.emplace_back();
    groups[it->second].push_back(device);
  }
  return groups;
}

static std::string formatForm(llvm::ArrayRef<NamedSize> hierarchy, Form form) {
  switch (form.kind) {
  case FormKind::InsideGroup:
    return "InsideGroup";
  case FormKind::Parallel:
    return "Parallel(" + hierarchy[form.level].name + ")";
  case FormKind::Master:
    return "Master(" + hierarchy[form.level].name + ")";
  }
  llvm_unreachable("unknown form");
}

std::string synth::formatInstruction(llvm::ArrayRef<NamedSize> hierarchy,
                                     const Instruction &instruction) {
  return (stringifyCollectiveKind(instruction.collective) + "(" +
          hierarchy[instruction.slice].name + ", " +
          formatForm(hierarchy, instruction.form) + ")")
      .str();
}

std::string synth::formatProgram(llvm::ArrayRef<NamedSize> hierarchy,
                                 llvm::ArrayRef<Instruction> program) {
  std::string result;
  for (const Instruction &instruction : program) {
    if (!result.empty())
      result += " ; ";
    result += formatInstruction(hierarchy, instruction);
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Device states
//===----------------------------------------------------------------------===//

ReductionState ReductionState::getInitial(int64_t numDevices) {
  ReductionState state;
  state.k = numDevices;
  state.w = (numDevices + 63) / 64;
  state.bits.assign(numDevices * numDevices * state.w, 0);
  for (int64_t d = 0; d < numDevices; ++d)
    for (int64_t r = 0; r < numDevices; ++r)
      state.set(d, r, d, true);
  return state;
}

bool ReductionState::isFinal() const {
  uint64_t lastMask = k % 64 == 0 ? ~uint64_t(0) : (uint64_t(1) << k % 64) - 1;
  for (int64_t row = 0; row < k * k; ++row)
    for (int64_t i = 0; i < w; ++i)
      if (bits[row * w + i] != (i + 1 == w ? lastMask : ~uint64_t(0)))
        return false;
  return true;
}

bool ReductionState::get(int64_t device, int64_t chunk,
                         int64_t contributor) const {
  return (getRow(device, chunk)[contributor / 64] >> (contributor % 64)) & 1;
}

void ReductionState::set(int64_t device, int64_t chunk, int64_t contributor,
                         bool value) {
  uint64_t &word = getRow(device, chunk)[contributor / 64];
  uint64_t mask = uint64_t(1) << (contributor % 64);
  word = value ? word | mask : word & ~mask;
}

static bool isEmptyRow(llvm::ArrayRef<uint64_t> row) {
  return llvm::all_of(row, [](uint64_t word) { return word == 0; });
}

int64_t ReductionState::getNumHeldChunks(int64_t device) const {
  int64_t count = 0;
  for (int64_t r = 0; r < k; ++r)
    count += !isEmptyRow(getRow(device, r));
  return count;
}

/// A set of chunks; fixed-size so the search does not allocate.
using ChunkSet = std::bitset<kMaxSynthesisDevices>;

static ChunkSet getHeldChunks(const ReductionState &state, int64_t device) {
  ChunkSet held;
  for (int64_t r = 0, k = state.getNumDevices(); r < k; ++r)
    if (!isEmptyRow(state.getRow(device, r)))
      held.set(r);
  return held;
}

static void clearDevice(ReductionState &state, int64_t device) {
  for (int64_t r = 0, k = state.getNumDevices(); r < k; ++r)
    llvm::fill(state.getRow(device, r), 0);
}

/// AllReduce, ReduceScatter and Reduce: same chunks, disjoint contributions.
/// Fills `sum` with the union of each held row; false if invalid.
static bool getDisjointSum(const ReductionState &state,
                           llvm::ArrayRef<int64_t> group,
                           llvm::SmallVectorImpl<int64_t> &heldRows,
                           std::vector<uint64_t> &sum) {
  ChunkSet held = getHeldChunks(state, group[0]);
  if (held.none())
    return false;
  for (int64_t device : llvm::drop_begin(group))
    if (getHeldChunks(state, device) != held)
      return false;
  heldRows.clear();
  for (int64_t r = 0, k = state.getNumDevices(); r < k; ++r)
    if (held.test(r))
      heldRows.push_back(r);
  size_t w = state.getRow(0, 0).size();
  sum.assign(heldRows.size() * w, 0);
  for (auto [index, row] : llvm::enumerate(heldRows)) {
    uint64_t *acc = &sum[index * w];
    for (int64_t device : group) {
      llvm::ArrayRef<uint64_t> words = state.getRow(device, row);
      for (size_t i = 0; i < w; ++i) {
        if (acc[i] & words[i])
          return false;
        acc[i] |= words[i];
      }
    }
  }
  return true;
}

static bool applyToGroup(ReductionState &next, const ReductionState &state,
                         CollectiveKind collective,
                         llvm::ArrayRef<int64_t> group) {
  size_t w = state.getRow(0, 0).size();
  int64_t m = group.size();
  switch (collective) {
  case CollectiveKind::AllReduce:
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::Reduce: {
    llvm::SmallVector<int64_t> heldRows;
    std::vector<uint64_t> sum;
    if (!getDisjointSum(state, group, heldRows, sum))
      return false;
    int64_t numRows = heldRows.size();
    if (collective == CollectiveKind::ReduceScatter && numRows % m != 0)
      return false;
    for (auto [rank, device] : llvm::enumerate(group)) {
      clearDevice(next, device);
      int64_t begin = 0, end = numRows;
      if (collective == CollectiveKind::ReduceScatter) {
        begin = int64_t(rank) * (numRows / m);
        end = begin + numRows / m;
      } else if (collective == CollectiveKind::Reduce && rank != 0) {
        end = 0;
      }
      for (int64_t index = begin; index < end; ++index)
        llvm::copy(llvm::ArrayRef<uint64_t>(&sum[index * w], w),
                   next.getRow(device, heldRows[index]).begin());
    }
    return true;
  }
  case CollectiveKind::AllGather: {
    ChunkSet all;
    int64_t count = -1;
    for (int64_t device : group) {
      ChunkSet held = getHeldChunks(state, device);
      if (held.none() || (all & held).any())
        return false;
      if (count >= 0 && int64_t(held.count()) != count)
        return false;
      count = held.count();
      all |= held;
    }
    for (int64_t source : group) {
      ChunkSet held = getHeldChunks(state, source);
      for (int64_t row = 0, k = state.getNumDevices(); row < k; ++row)
        if (held.test(row))
          for (int64_t device : group)
            llvm::copy(state.getRow(source, row),
                       next.getRow(device, row).begin());
    }
    return true;
  }
  case CollectiveKind::Broadcast: {
    int64_t root = group[0];
    if (getHeldChunks(state, root).none())
      return false;
    int64_t k = state.getNumDevices();
    for (int64_t device : llvm::drop_begin(group))
      for (int64_t r = 0; r < k; ++r) {
        llvm::ArrayRef<uint64_t> mine = state.getRow(device, r);
        llvm::ArrayRef<uint64_t> theirs = state.getRow(root, r);
        for (size_t i = 0; i < w; ++i)
          if (mine[i] & ~theirs[i])
            return false;
      }
    for (int64_t device : llvm::drop_begin(group))
      for (int64_t r = 0; r < k; ++r)
        llvm::copy(state.getRow(root, r), next.getRow(device, r).begin());
    return true;
  }
  default:
    return false;
  }
}

std::optional<ReductionState>
synth::applyCollective(const ReductionState &state, CollectiveKind collective,
                       llvm::ArrayRef<llvm::SmallVector<int64_t>> groups) {
  ReductionState next = state;
  for (const llvm::SmallVector<int64_t> &group : groups) {
    if (group.size() < 2)
      continue;
    if (!applyToGroup(next, state, collective, group))
      return std::nullopt;
  }
  return next;
}

std::optional<ReductionState>
synth::applyInstruction(llvm::ArrayRef<NamedSize> hierarchy,
                        const ReductionState &state,
                        const Instruction &instruction) {
  if (!isValidSliceForm(hierarchy, instruction.slice, instruction.form))
    return std::nullopt;
  return applyCollective(
      state, instruction.collective,
      getDeviceGroups(hierarchy, instruction.slice, instruction.form));
}

//===----------------------------------------------------------------------===//
// Enumeration
//===----------------------------------------------------------------------===//

static constexpr CollectiveKind kCollectives[] = {
    CollectiveKind::AllReduce, CollectiveKind::ReduceScatter,
    CollectiveKind::AllGather, CollectiveKind::Reduce,
    CollectiveKind::Broadcast};

std::vector<Instruction>
synth::getCandidateInstructions(llvm::ArrayRef<NamedSize> hierarchy,
                                MasterCollectives masters) {
  std::vector<Instruction> result;
  std::set<std::vector<std::vector<int64_t>>> seen;
  for (unsigned slice = 0; slice < hierarchy.size(); ++slice) {
    llvm::SmallVector<Form> forms = {{FormKind::InsideGroup, 0}};
    for (unsigned e = 0; e < slice; ++e)
      forms.push_back({FormKind::Parallel, e});
    for (unsigned e = 0; e < slice; ++e)
      forms.push_back({FormKind::Master, e});
    for (Form form : forms) {
      std::vector<std::vector<int64_t>> key;
      for (const llvm::SmallVector<int64_t> &group :
           getDeviceGroups(hierarchy, slice, form))
        if (group.size() >= 2)
          key.emplace_back(group.begin(), group.end());
      // Singletons and repeats of an earlier group set change nothing new.
      if (key.empty() || !seen.insert(key).second)
        continue;
      for (CollectiveKind collective : kCollectives)
        if (form.kind != FormKind::Master ||
            masters == MasterCollectives::All ||
            collective == CollectiveKind::AllReduce)
          result.push_back({slice, form, collective});
    }
  }
  return result;
}

namespace {
struct ProgramSearch {
  llvm::ArrayRef<NamedSize> hierarchy;
  unsigned maxSize;
  std::vector<Instruction> candidates;
  std::vector<std::vector<llvm::SmallVector<int64_t>>> groups;
  Program prefix;
  std::vector<Program> found;
  /// Work spent and allowed; what one candidate tried costs.
  uint64_t work = 0, budget = UINT64_MAX, candidateCost = 1;
  bool exceeded = false;

  void visit(const ReductionState &state) {
    for (auto [index, candidate] : llvm::enumerate(candidates)) {
      work += candidateCost;
      if (exceeded || work > budget) {
        exceeded = true;
        return;
      }
      std::optional<ReductionState> next =
          applyCollective(state, candidate.collective, groups[index]);
      if (!next || *next == state)
        continue;
      prefix.push_back(candidate);
      if (next->isFinal())
        found.push_back(prefix);
      else if (prefix.size() < maxSize)
        visit(*next);
      prefix.pop_back();
    }
  }
};
} // namespace

std::vector<Program>
synth::synthesizePrograms(llvm::ArrayRef<NamedSize> hierarchy, unsigned maxSize,
                          uint64_t budget, bool *exceeded,
                          MasterCollectives masters) {
  int64_t numDevices = 1;
  for (const NamedSize &level : hierarchy)
    numDevices *= level.size;
  assert(numDevices <= kMaxSynthesisDevices && "reduction group too large");
  ProgramSearch search{
      hierarchy, maxSize, getCandidateInstructions(hierarchy, masters),
      {},        {},      {}};
  for (const Instruction &candidate : search.candidates)
    search.groups.push_back(
        getDeviceGroups(hierarchy, candidate.slice, candidate.form));
  search.budget = budget;
  // Trying a candidate copies and scans the k x k x ceil(k/64)-word state:
  // its cost is the device count, or a 64th of the state's words where that
  // is larger (k > 64; counting only devices let 256 devices run 45 s).
  auto k = static_cast<uint64_t>(numDevices);
  search.candidateCost = std::max(k, k * k * llvm::divideCeil(k, 64) / 64);
  if (maxSize > 0)
    search.visit(ReductionState::getInitial(numDevices));
  if (exceeded)
    *exceeded = search.exceeded;
  // Depth-first order within one size is candidate order; group by size
  // (std::stable_sort's buffer API is deprecated in this libstdc++).
  std::vector<Program> bySize;
  for (unsigned size = 1; size <= maxSize; ++size)
    for (Program &program : search.found)
      if (program.size() == size)
        bySize.push_back(std::move(program));
  search.found = std::move(bySize);
  return std::move(search.found);
}
