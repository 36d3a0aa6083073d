//===- Synthesis.h - Hierarchical reduction synthesis (P²) ------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Parallelism placement and reduction synthesis on hierarchical systems,
// after P² (Xie et al., MLSys 2022); see docs/design/synthesis.md.
//
// * A parallelism matrix factors each parallelism axis over the levels of
//   the system hierarchy (row products = axis sizes, column products = level
//   sizes).
// * The synthesis hierarchy keeps, per system level, the product of the
//   reduction axes' factors (levels where it is 1 are dropped), below a
//   root level of size 1.
// * A reduction program is a list of instructions (slice level, form,
//   collective); each slice/form pair names disjoint device groups.
// * Device states are boolean k x k matrices (row = data chunk, column =
//   contributing device); each collective has a validity rule and a
//   post-state. Synthesis enumerates the programs that take the initial
//   state to the final one, then lowers them to device groups of the full
//   system, which CollectiveCostModel prices.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_SYNTHESIS_SYNTHESIS_H
#define DISTIR_SYNTHESIS_SYNTHESIS_H

#include "DistIR/Analysis/CollectiveCost.h"
#include "DistIR/Cluster/Cluster.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace distir {
namespace synth {

//===----------------------------------------------------------------------===//
// Hierarchies and parallelism matrices
//===----------------------------------------------------------------------===//

/// A named level (or parallelism axis) and its size.
struct NamedSize {
  std::string name;
  int64_t size = 1;

  bool operator==(const NamedSize &o) const {
    return name == o.name && size == o.size;
  }
};

/// Levels outermost first; device ids are row-major (innermost fastest).
using Hierarchy = std::vector<NamedSize>;

/// Entry [axis][level] is the factor of the axis placed at the level.
using ParallelismMatrix = std::vector<std::vector<int64_t>>;

/// Every integer matrix whose row products are `axisSizes` and column
/// products `levelSizes`, in a deterministic (lexicographic, row-major)
/// order. Empty when the products differ. At most `limit` + 1 are
/// returned: more than `limit` says the enumeration was cut (deep
/// hierarchies have combinatorially many: 24 levels of 2 split over three
/// axes of 2^8 give 24! / (8!)^3, about 9.7e9).
std::vector<ParallelismMatrix>
enumerateParallelismMatrices(llvm::ArrayRef<int64_t> axisSizes,
                             llvm::ArrayRef<int64_t> levelSizes,
                             size_t limit = SIZE_MAX);

/// The reduction hierarchy of a placement: level 0 is `root` (size 1), then
/// one level per system level whose product of reduction-axis factors is
/// > 1 (several reduction axes at one level are collapsed into it).
struct SynthesisHierarchy {
  Hierarchy levels;
  /// For each level, the system level it comes from (none for the root).
  std::vector<std::optional<unsigned>> systemLevels;

  /// Devices of one reduction group (the product of the level sizes).
  int64_t getNumDevices() const;
};

SynthesisHierarchy buildSynthesisHierarchy(const Hierarchy &system,
                                           const ParallelismMatrix &matrix,
                                           llvm::ArrayRef<unsigned> reduceAxes);

//===----------------------------------------------------------------------===//
// The reduction DSL
//===----------------------------------------------------------------------===//

enum class FormKind { InsideGroup, Parallel, Master };

/// InsideGroup, or Parallel(e)/Master(e) with `level` = e.
struct Form {
  FormKind kind = FormKind::InsideGroup;
  unsigned level = 0;

  bool operator==(const Form &o) const {
    return kind == o.kind &&
           (kind == FormKind::InsideGroup || level == o.level);
  }
};

/// One instruction; `collective` is AllReduce, ReduceScatter, AllGather,
/// Reduce or Broadcast.
struct Instruction {
  unsigned slice = 0;
  Form form;
  CollectiveKind collective = CollectiveKind::AllReduce;

  bool operator==(const Instruction &o) const {
    return slice == o.slice && form == o.form && collective == o.collective;
  }
};

using Program = llvm::SmallVector<Instruction, 5>;

/// Device groups (indices into the row-major devices of `hierarchy`, each
/// group in rank order) of a slice/form pair:
///   InsideGroup:  devices sharing the coordinates of levels 0..slice;
///   Parallel(e):  devices that differ only at levels e+1..slice;
///   Master(e):    the Parallel(e) groups whose coordinates below `slice`
///                 are all 0.
/// Requires isValidSliceForm.
std::vector<llvm::SmallVector<int64_t>>
getDeviceGroups(llvm::ArrayRef<NamedSize> hierarchy, unsigned slice, Form form);

/// Parallel(e) and Master(e) need e < slice; every slice must exist.
bool isValidSliceForm(llvm::ArrayRef<NamedSize> hierarchy, unsigned slice,
                      Form form);

/// "AllReduce(server, Parallel(rack))".
std::string formatInstruction(llvm::ArrayRef<NamedSize> hierarchy,
                              const Instruction &instruction);
/// Instructions joined by " ; ".
std::string formatProgram(llvm::ArrayRef<NamedSize> hierarchy,
                          llvm::ArrayRef<Instruction> program);

/// The states of all k devices of a reduction group: device d's k x k
/// boolean matrix has bit (chunk r, contributor c) set when the chunk r it
/// holds includes c's contribution.
class ReductionState {
public:
  /// Device d holds every chunk with its own contribution only.
  static ReductionState getInitial(int64_t numDevices);
  /// Whether every device holds every chunk with every contribution.
  bool isFinal() const;

  int64_t getNumDevices() const { return k; }
  bool get(int64_t device, int64_t chunk, int64_t contributor) const;
  void set(int64_t device, int64_t chunk, int64_t contributor, bool value);
  /// How many chunks `device` holds (rows with any bit set).
  int64_t getNumHeldChunks(int64_t device) const;

  bool operator==(const ReductionState &o) const {
    return k == o.k && bits == o.bits;
  }
  bool operator!=(const ReductionState &o) const { return !(*this == o); }

  /// The words of one row (bit c of the row = contributor c).
  llvm::ArrayRef<uint64_t> getRow(int64_t device, int64_t chunk) const {
    return llvm::ArrayRef<uint64_t>(bits).slice((device * k + chunk) * w, w);
  }
  llvm::MutableArrayRef<uint64_t> getRow(int64_t device, int64_t chunk) {
    return llvm::MutableArrayRef<uint64_t>(bits).slice((device * k + chunk) * w,
                                                       w);
  }

private:
  int64_t k = 0;
  /// Words per row.
  int64_t w = 0;
  std::vector<uint64_t> bits;
};

/// Applies `collective` to each of `groups` (rank order; rank 0 is the root
/// of Reduce and Broadcast). Returns std::nullopt when the Hoare-style
/// precondition fails for some group:
///   AllReduce, ReduceScatter, Reduce: all members hold the same non-empty
///     set of chunks and, per chunk, pairwise disjoint contributions (no
///     data is reduced twice); ReduceScatter also needs the number of held
///     chunks divisible by the group size;
///   AllGather: members hold pairwise disjoint, equally many, non-empty
///     chunk sets;
///   Broadcast: the root holds something and every other member's state is
///     contained in the root's (nothing is overwritten that is not kept).
/// Post-states: AllReduce gives every member the union; ReduceScatter gives
/// rank i the i-th block of the held chunks, reduced; Reduce gives the root
/// the union and empties the others; AllGather gives everyone every chunk;
/// Broadcast copies the root.
std::optional<ReductionState>
applyCollective(const ReductionState &state, CollectiveKind collective,
                llvm::ArrayRef<llvm::SmallVector<int64_t>> groups);

/// Applies one instruction on `hierarchy`.
std::optional<ReductionState>
applyInstruction(llvm::ArrayRef<NamedSize> hierarchy,
                 const ReductionState &state, const Instruction &instruction);

/// The collectives the Master form takes. With AllReduce alone (the
/// default) the enumeration gives the P2 paper's 47 programs for one
/// reduction axis of 32 devices on [[2, 16]] at size 5 (All: 104); the rule
/// is inferred from that count, see docs/design/synthesis.md.
enum class MasterCollectives { AllReduce, All };

/// The instructions synthesis tries, in a fixed order: slice/form pairs
/// that give groups of at least two devices, each group set once (the
/// first pair naming it wins), times the five collectives (Master pairs:
/// times those `masters` allows).
std::vector<Instruction> getCandidateInstructions(
    llvm::ArrayRef<NamedSize> hierarchy,
    MasterCollectives masters = MasterCollectives::AllReduce);

/// The largest reduction group synthesis accepts (states are k^3 bits).
constexpr int64_t kMaxSynthesisDevices = 256;

/// Every program of at most `maxSize` instructions that takes the initial
/// state to the final one, by increasing size, then in candidate order.
/// Prefixes that are invalid, change nothing, or already reach the final
/// state are not extended. Requires hierarchy devices <=
/// kMaxSynthesisDevices. Each candidate tried costs max(k, k^2 ceil(k/64) /
/// 64) work units for k devices (the device count, or a 64th of the state's
/// words, which applying it copies); past `budget` the search stops and sets
/// `*exceeded` (the programs found so far are returned).
std::vector<Program>
synthesizePrograms(llvm::ArrayRef<NamedSize> hierarchy, unsigned maxSize = 5,
                   uint64_t budget = UINT64_MAX, bool *exceeded = nullptr,
                   MasterCollectives masters = MasterCollectives::AllReduce);

//===----------------------------------------------------------------------===//
// Lowering and pricing
//===----------------------------------------------------------------------===//

/// A placement of parallelism axes on a system: maps devices of the
/// synthesis hierarchy, in each replica (assignment of the non-reduction
/// axes), to system device ids.
class Placement {
public:
  Placement(const Hierarchy &system, const ParallelismMatrix &matrix,
            llvm::ArrayRef<unsigned> reduceAxes);

  const SynthesisHierarchy &getSynthesisHierarchy() const { return synthesis; }
  int64_t getNumReplicas() const { return numReplicas; }
  /// The system device of synthesis device `device` in `replica`.
  int64_t getSystemDevice(int64_t replica, int64_t device) const {
    return table[replica * synthesis.getNumDevices() + device];
  }

private:
  SynthesisHierarchy synthesis;
  int64_t numReplicas = 1;
  std::vector<int64_t> table;
};

/// One collective step on the full system: concurrent groups with their
/// sizes in bytes (nccl-tests convention, see CollectiveCost.h).
struct LoweredStep {
  CollectiveKind kind;
  std::vector<llvm::SmallVector<int64_t>> groups;
  std::vector<double> bytes;
};

/// One step of a program on the synthesis hierarchy: its groups of two or
/// more devices, and how many chunks each group's collective moves
/// (nccl-tests convention: the gathered buffer for AllGather, the buffer
/// before the call otherwise).
struct SynthesisStep {
  CollectiveKind kind = CollectiveKind::AllReduce;
  std::vector<llvm::SmallVector<int64_t>> groups;
  std::vector<int64_t> chunks;
};

/// Replays a valid program on `hierarchy`.
std::vector<SynthesisStep>
getSynthesisSteps(llvm::ArrayRef<NamedSize> hierarchy,
                  llvm::ArrayRef<Instruction> program);

/// Maps synthesis steps to the full system: every group in every replica;
/// a chunk is `bytes / k`.
std::vector<LoweredStep> lowerSteps(const Placement &placement,
                                    llvm::ArrayRef<SynthesisStep> steps,
                                    double bytes);

/// Lowers a valid program on a placement; `bytes` is the size of the buffer
/// each device reduces.
std::vector<LoweredStep> lowerProgram(const Placement &placement,
                                      llvm::ArrayRef<Instruction> program,
                                      double bytes);

/// Steps run in sequence; each step's groups run concurrently.
double priceSteps(const CollectiveCostModel &model,
                  llvm::ArrayRef<LoweredStep> steps);

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

struct PricedProgram {
  Program program;
  double time = 0;
};

/// Synthesis results for one parallelism matrix.
struct MatrixResult {
  ParallelismMatrix matrix;
  SynthesisHierarchy synthesis;
  /// Valid programs sorted by predicted time (ties: fewer instructions,
  /// then enumeration order).
  std::vector<PricedProgram> programs;
  /// One AllReduce over each whole reduction group.
  double baselineTime = 0;
};

/// Work units (devices touched by a candidate instruction or a priced step)
/// one synthesizeAll may spend: about 2 s on one core. The search is
/// exponential in the program size, so requests past it are refused.
constexpr uint64_t kMaxSynthesisWork = uint64_t(1) << 26;

struct SynthesisOptions {
  unsigned maxSize = 5;
  /// Work budget (see kMaxSynthesisWork).
  uint64_t maxWork = kMaxSynthesisWork;
  /// Bytes each device reduces.
  double bytes = 64.0 * 1024 * 1024;
  MasterCollectives masters = MasterCollectives::AllReduce;
};

/// Runs synthesis and pricing for every parallelism matrix. `system` must
/// have the cluster's device count; axis products must equal it and reduce
/// axes must be distinct and in range (the CLI checks all of this). Past
/// `options.maxWork` it stops and sets `*exceeded` (results incomplete).
std::vector<MatrixResult> synthesizeAll(const Hierarchy &system,
                                        llvm::ArrayRef<int64_t> axisSizes,
                                        llvm::ArrayRef<unsigned> reduceAxes,
                                        const CollectiveCostModel &model,
                                        const SynthesisOptions &options,
                                        bool *exceeded = nullptr);

} // namespace synth
} // namespace distir

#endif // DISTIR_SYNTHESIS_SYNTHESIS_H
