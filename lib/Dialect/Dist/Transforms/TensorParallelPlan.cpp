//===- TensorParallelPlan.cpp - Weight splits for tensor parallelism ------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Megatron's column/row pairs, found from the data flow of any program
// through the linalg structured-op interface (see TensorParallelPlan.h).
//
//===----------------------------------------------------------------------===//

#include "TensorParallelPlan.h"

#include "PadDimension.h"

#include "DistIR/Analysis/CollectiveCost.h"
#include "DistIR/Analysis/OpCost.h"
#include "DistIR/Dialect/Dist/IR/DistAttrs.h"
#include "DistIR/Dialect/Dist/IR/DistCluster.h"
#include "DistIR/Dialect/Dist/Transforms/Passes.h"
#include "DistIR/Support/Format.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using namespace mlir;
using namespace distir;
using namespace distir::dist;

namespace {

/// A weight operand traced back to its argument: argDim[i] is the argument
/// dimension that operand dimension i reads.
struct WeightUse {
  BlockArgument arg;
  SmallVector<int64_t> argDim;
  /// The argument's type as the program reads it: padded where a
  /// `tensor.pad` pads the argument on entry (PadDimension.h).
  RankedTensorType type;
  /// Lookups (getLookupOf, any phase) of the weight or of a value on the
  /// way to it (a mixed-precision cast the head reads too): a tied
  /// embedding.
  SmallVector<Operation *> lookups;
};

/// `v` when it is an elementwise float cast (mixed precision's low-precision
/// copy of a weight) of its single input: that input, else null.
Value castSource(linalg::GenericOp generic) {
  if (generic.getNumDpsInputs() != 1 || generic->getNumResults() != 1 ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return nullptr;
  Block &body = generic.getRegion().front();
  if (body.getOperations().size() != 2 ||
      !isa<arith::TruncFOp, arith::ExtFOp>(body.front()) ||
      body.front().getOperand(0) != body.getArgument(0))
    return nullptr;
  return generic.getDpsInputs()[0];
}

/// Whether `op` belongs to the forward pass (training steps from
/// dist-autodiff tag the rest `backward` or `update`): the plan pairs forward
/// projections; the backward and the update follow their weights' splits.
bool isForward(Operation *op) {
  auto phase = op->getAttrOfType<StringAttr>("dist.phase");
  return !phase || phase.getValue() == "forward";
}

/// The op of the function's body that holds `op` (itself, or the op whose
/// region it is in).
Operation *topLevel(Operation *op) {
  while (op->getParentOp() && !isa<func::FuncOp>(op->getParentOp()))
    op = op->getParentOp();
  return op;
}

/// Forward ops that use `v` (in their bodies too).
unsigned forwardUses(Value v) {
  unsigned n = 0;
  for (Operation *user : v.getUsers())
    n += isForward(topLevel(user));
  return n;
}

/// Lookups (getLookupOf) that read `v`: the forward ones, and copies
/// dist-recompute made in the backward pass.
SmallVector<Operation *> lookupsOf(Value v) {
  SmallVector<Operation *> found;
  for (Operation *user : v.getUsers())
    if (auto owner = dyn_cast<linalg::LinalgOp>(user->getParentOp()))
      if (getLookupOf(owner, v) == user)
        found.push_back(owner);
  return found;
}

/// How many of `lookups` run in the forward pass.
unsigned countForward(ArrayRef<Operation *> lookups) {
  return llvm::count_if(lookups, [](Operation *op) { return isForward(op); });
}

/// What the program reads of argument `arg`: the argument, or its padding
/// on entry (PadDimension.h) when that is its only use.
Value readOf(BlockArgument arg) {
  if (arg.hasOneUse())
    if (auto pad = dyn_cast<tensor::PadOp>(*arg.user_begin()))
      return pad.getResult();
  return arg;
}

/// The weight argument `v` reads through float casts and transposes (each
/// used once in the forward pass).
std::optional<WeightUse> traceWeight(Value v, func::FuncOp func) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() == 0 || !isa<FloatType>(type.getElementType()))
    return std::nullopt;
  SmallVector<int64_t> dims =
      llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  // (Lookups of a tied weight are checked by the plan.)
  SmallVector<Operation *> lookups;
  while (true) {
    auto asArgument = [&](Value a) -> BlockArgument {
      auto arg = dyn_cast<BlockArgument>(a);
      if (!arg || arg.getOwner() != &func.getBody().front() ||
          func.getArgAttr(arg.getArgNumber(), "dist.batch_dim"))
        return nullptr;
      return arg;
    };
    SmallVector<Operation *> here = lookupsOf(v);
    // (The forward ones first: the plan's decisions name the first.)
    for (bool forward : {true, false})
      for (Operation *l : here)
        if (isForward(l) == forward)
          lookups.push_back(l);
    if (isa<BlockArgument>(v)) {
      BlockArgument arg = asArgument(v);
      if (!arg)
        return std::nullopt;
      return WeightUse{arg, dims, cast<RankedTensorType>(arg.getType()),
                       std::move(lookups)};
    }
    if (forwardUses(v) - countForward(here) != 1)
      return std::nullopt;
    Operation *def = v.getDefiningOp();
    // An argument padded on entry (its only use) reads as the argument.
    if (auto pad = dyn_cast_or_null<tensor::PadOp>(def)) {
      BlockArgument arg = asArgument(pad.getSource());
      if (!arg || !arg.hasOneUse())
        return std::nullopt;
      return WeightUse{arg, dims, pad.getResultType(), std::move(lookups)};
    }
    if (auto transpose = dyn_cast_or_null<linalg::TransposeOp>(def)) {
      ArrayRef<int64_t> perm = transpose.getPermutation();
      for (int64_t &d : dims)
        d = perm[d];
      v = transpose.getInput();
      continue;
    }
    auto generic = dyn_cast_or_null<linalg::GenericOp>(def);
    Value source = generic ? castSource(generic) : nullptr;
    if (!source)
      return std::nullopt;
    v = source;
  }
}

/// A linalg op reading one weight and at least one activation.
struct Projection {
  linalg::LinalgOp op;
  WeightUse weight;
  unsigned weightOperand, activationOperand;
  /// Column split: the weight dim, its loop and the result dim it gives.
  int64_t colDim = -1, colLoop = -1, colResultDim = -1;
  /// Row split: the weight dim and the reduction loop it indexes.
  int64_t rowDim = -1, rowLoop = -1;
};

std::optional<Projection> asProjection(linalg::LinalgOp op, func::FuncOp func) {
  if (op->getNumResults() != 1 || op.getNumDpsInits() != 1)
    return std::nullopt;
  std::optional<Projection> p;
  std::optional<unsigned> activation;
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (!isa<RankedTensorType>(input->get().getType()))
      continue;
    if (std::optional<WeightUse> w = traceWeight(input->get(), func)) {
      if (p)
        return std::nullopt; // two weights: not a projection
      p = Projection{op, *w, input->getOperandNumber(), 0};
    } else if (!activation) {
      activation = input->getOperandNumber();
    }
  }
  if (!p || !activation)
    return std::nullopt;
  p->activationOperand = *activation;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  AffineMap weightMap = maps[p->weightOperand];
  AffineMap actMap = maps[*activation];
  AffineMap outMap = maps[op.getDpsInitsMutable()[0].getOperandNumber()];
  llvm::SmallDenseSet<unsigned> indexed;
  op->getRegion(0).walk(
      [&](linalg::IndexOp index) { indexed.insert(index.getDim()); });
  for (unsigned d = 0; d < weightMap.getNumResults(); ++d) {
    auto dim = dyn_cast<AffineDimExpr>(weightMap.getResult(d));
    if (!dim || indexed.contains(dim.getPosition()))
      continue;
    unsigned loop = dim.getPosition();
    std::optional<unsigned> inAct = actMap.getResultPosition(dim);
    if (iterators[loop] == utils::IteratorType::parallel) {
      std::optional<unsigned> out = outMap.getResultPosition(dim);
      if (p->colDim < 0 && out && !inAct) {
        p->colDim = d;
        p->colLoop = loop;
        p->colResultDim = *out;
      }
    } else if (p->rowDim < 0 && inAct) {
      p->rowDim = d;
      p->rowLoop = loop;
    }
  }
  return p;
}

/// Whether `v` is a zero-filled fresh tensor (partial sums add up into it),
/// float or integer, as dist-dtp's isZeroInit.
bool isZeroFilled(Value v) {
  auto fill = v.getDefiningOp<linalg::FillOp>();
  if (!fill || !fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
    return false;
  Value scalar = fill.getInputs()[0];
  return matchPattern(scalar, m_AnyZeroFloat()) ||
         matchPattern(scalar, m_Zero());
}

/// Groups of a column-split projection: the number of equal slices its
/// output (through reshapes and elementwise ops such as a bias add) is cut
/// into along the last dimension, e.g. 3 for fused Q, K, V.
int64_t projectionGroups(Value result) {
  Value v = result;
  for (int step = 0; step < 4; ++step) {
    auto type = cast<RankedTensorType>(v.getType());
    int64_t last = type.getRank() - 1, width = type.getDimSize(last);
    SmallVector<tensor::ExtractSliceOp> slices;
    Operation *next = nullptr;
    bool several = false;
    for (Operation *user : v.getUsers()) {
      if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user))
        slices.push_back(slice);
      else if (next && next != user)
        several = true;
      else
        next = user;
    }
    if (slices.size() >= 2 && !next) {
      int64_t count = slices.size();
      if (width % count != 0)
        return 1;
      int64_t part = width / count;
      llvm::SmallDenseSet<int64_t> starts;
      for (tensor::ExtractSliceOp slice : slices) {
        ArrayRef<int64_t> offs = slice.getStaticOffsets(),
                          sizes = slice.getStaticSizes(),
                          strides = slice.getStaticStrides();
        if (!slice.getOffsets().empty() || !slice.getSizes().empty() ||
            !slice.getStrides().empty() || offs[last] % part != 0 ||
            sizes[last] != part || strides[last] != 1)
          return 1;
        for (int64_t d = 0; d < last; ++d)
          if (offs[d] != 0 || sizes[d] != type.getDimSize(d))
            return 1;
        starts.insert(offs[last]);
      }
      return static_cast<int64_t>(starts.size()) == count ? count : 1;
    }
    if (!next || several || !slices.empty() || next->getNumResults() != 1 ||
        !isa<tensor::ExpandShapeOp, linalg::GenericOp>(next))
      return 1;
    auto nextType = dyn_cast<RankedTensorType>(next->getResult(0).getType());
    if (!nextType || nextType.getShape().back() != width)
      return 1;
    v = next->getResult(0);
  }
  return 1;
}

/// `width` padded to a multiple of `tp`.
int64_t paddedWidth(int64_t width, int64_t tp) {
  return static_cast<int64_t>(llvm::divideCeil(width, tp)) * tp;
}

std::string argName(func::FuncOp func, BlockArgument arg) {
  if (auto name =
          func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "dist.name"))
    return "'" + name.getValue().str() + "'";
  return "argument #" + std::to_string(arg.getArgNumber());
}

/// Where an op comes from, in a few words: its ONNX node name or file
/// position.
std::string describe(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().getValue() + ":" + Twine(file.getLine()) + ":" +
            Twine(file.getColumn()))
        .str();
  if (auto fused = dyn_cast<FusedLoc>(loc);
      fused && !fused.getLocations().empty())
    return describe(fused.getLocations().front());
  return "unknown location";
}

/// Whether no projection reads, in the forward pass, a value computed from
/// `op`'s results: the last projection of its path (an LM head).
bool isHead(Operation *op,
            const DenseMap<Operation *, unsigned> &projectionOf) {
  DenseSet<Value> reached(op->getResults().begin(), op->getResults().end());
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode()) {
    if (!isForward(next))
      continue;
    bool reads = false;
    next->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        reads |= reached.contains(operand);
    });
    if (!reads)
      continue;
    if (projectionOf.count(next))
      return false;
    reached.insert(next->getResults().begin(), next->getResults().end());
  }
  return true;
}

/// Whether `v` is a static tensor.empty, or a fill of one (a padded init
/// is the same op at a larger size).
bool isFreshInit(Value v) {
  if (auto fill = v.getDefiningOp<linalg::FillOp>())
    v = fill.getOutputs()[0];
  auto empty = v.getDefiningOp<tensor::EmptyOp>();
  return empty && empty.getDynamicSizes().empty();
}

/// Why `p`'s weight cannot be padded in place (padProjection in
/// DataTensorParallel.cpp rebuilds its chain and projection at the padded
/// size), or an empty string.
std::string whyNotPaddable(const Projection &p) {
  // The chain from the argument (casts, transposes: single-result linalg
  // ops) must be read by nothing else: no gradient, update or result.
  Operation *projection = p.op;
  for (Value v = p.weight.arg;; v = (*v.getUsers().begin())->getResult(0)) {
    if (!v.hasOneUse())
      return "other ops (a gradient, an update, a result) read the weight";
    if (v == projection->getOperand(p.weightOperand))
      break;
    auto op = cast<linalg::LinalgOp>(*v.getUsers().begin());
    if (!isFreshInit(op.getDpsInits()[0]))
      return "the init of its '" + op->getName().getStringRef().str() +
             "' is not a fresh tensor";
  }
  auto op = cast<linalg::LinalgOp>(projection);
  if (!isFreshInit(op.getDpsInits()[0]))
    return "its init is not a fresh tensor";
  // Other inputs indexed by the padded loop would keep their width.
  AffineExpr loop = getAffineDimExpr(p.colLoop, op->getContext());
  for (OpOperand *input : op.getDpsInputOperands())
    if (input->getOperandNumber() != p.weightOperand &&
        op.getMatchingIndexingMap(input).getResultPosition(loop))
      return "another input of it is indexed by its columns";
  return "";
}

/// A column candidate: the ops its split reaches and their partners.
struct Candidate {
  unsigned projection; // index into the projections
  int64_t groups = 1;
  SmallPtrSet<Operation *, 16> members; // ops that run split (with partners)
  SmallVector<unsigned> partners;       // row-split projections
  std::string invalid;                  // why the split cannot apply
  int64_t reduced = 0;                  // bytes all-reduced
  /// Blocked before reaching any partner: a column split that gathers
  /// `gathered` bytes at `end` (0 at a program result, returned split).
  bool terminal = false;
  Operation *end = nullptr;
  int64_t gathered = 0;
  /// tp does not divide the output width.
  bool indivisible = false;
  /// No projection follows on its path (isHead): an LM head, a classifier.
  bool head = false;
  /// A final projection's split reduced over (a loss's row maximum, its sum
  /// of exponentials, its target logit): partial results, each all-reduced.
  SmallVector<Operation *> reductions;
};

/// Seconds of `op` on one device of `pricing`'s cluster on one piece of the
/// batch (1 / rowsDivisor of the activation's rows) when it computes `share`
/// of its output columns (the analytic cost model: flops, the bytes
/// written and the output's bytes read scale with both, the activation's
/// bytes with the rows, the weight's with the columns).
double priceShare(Operation *op, Value activation, Value weight, double share,
                  const TensorParallelPricing &pricing) {
  ComputeWork work = getComputeWork(op);
  double rows = 1.0 / static_cast<double>(pricing.rowsDivisor);
  double activationBytes =
      static_cast<double>(getTensorBytes(activation.getType()));
  double weightBytes = static_cast<double>(getTensorBytes(weight.getType()));
  work.flops *= share * rows;
  work.bytesWritten *= share * rows;
  work.outputElements *= share * rows;
  work.bytesRead =
      activationBytes * rows + weightBytes * share +
      (work.bytesRead - activationBytes - weightBytes) * share * rows;
  return priceCompute(work, pricing.cluster.device, CostModelKind::Analytic);
}

} // namespace

std::optional<ReductionKind> distir::dist::getReductionCombiner(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || op->getNumResults() != 1 || linalgOp.getNumDpsInits() != 1)
    return std::nullopt;
  Block &body = op->getRegion(0).front();
  BlockArgument acc =
      linalgOp.getMatchingBlockArgument(linalgOp.getDpsInitOperand(0));
  // Mixed precision widens the accumulator and narrows the result around
  // the combining op: look through those casts.
  auto peel = [](Value v) {
    while (Operation *cast = v.getDefiningOp<arith::ExtFOp>()
                                 ? v.getDefiningOp()
                                 : v.getDefiningOp<arith::TruncFOp>())
      v = cast->getOperand(0);
    return v;
  };
  Operation *def = peel(body.getTerminator()->getOperand(0)).getDefiningOp();
  if (!def || def->getNumOperands() != 2 || !acc.hasOneUse())
    return std::nullopt;
  bool lhs = peel(def->getOperand(0)) == acc,
       rhs = peel(def->getOperand(1)) == acc;
  if (lhs == rhs)
    return std::nullopt;
  // (arith.maxnumf ignores NaN, which an all-reduce max need not: not
  // matched.)
  if (isa<arith::MaximumFOp>(def))
    return ReductionKind::Max;
  if (isa<arith::MinimumFOp>(def))
    return ReductionKind::Min;
  if (isa<arith::AddFOp, arith::AddIOp>(def))
    return ReductionKind::Sum;
  return std::nullopt;
}

tensor::ExtractOp distir::dist::getLookupOf(linalg::LinalgOp op, Value table) {
  if (op->getNumResults() != 1 || op.getNumReductionLoops() != 0 ||
      !isa<FloatType>(getElementTypeOrSelf(op->getResult(0).getType())) ||
      llvm::is_contained(op->getOperands(), table))
    return nullptr;
  tensor::ExtractOp lookup;
  for (Operation *user : table.getUsers()) {
    if (!op->isProperAncestor(user))
      continue;
    auto extract = dyn_cast<tensor::ExtractOp>(user);
    if (!extract || lookup)
      return nullptr;
    lookup = extract;
  }
  Operation *yield = op->getRegion(0).front().getTerminator();
  if (!lookup || lookup->getParentRegion() != &op->getRegion(0) ||
      yield->getNumOperands() != 1 ||
      yield->getOperand(0) != lookup.getResult())
    return nullptr;
  return lookup;
}

TensorParallelPlan
distir::dist::planTensorParallel(func::FuncOp func, int64_t tp,
                                 const TensorParallelPricing &pricing) {
  TensorParallelPlan plan;
  Block &body = func.getBody().front();
  DenseMap<Operation *, int64_t> position;
  SmallVector<Projection> projections;
  DenseMap<Operation *, unsigned> projectionOf;
  DenseMap<BlockArgument, unsigned> projectionUses;
  for (Operation &op : body) {
    position[&op] = static_cast<int64_t>(position.size());
    if (!isForward(&op))
      continue;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      if (std::optional<Projection> p = asProjection(linalgOp, func))
        if (p->colDim >= 0 || p->rowDim >= 0) {
          projectionOf[&op] = projections.size();
          projections.push_back(*p);
          ++projectionUses[p->weight.arg];
        }
  }

  // 0. Annotated projection weights: the split they ask for (none when
  // replicated), or why it is not a tensor-parallel split.
  DenseMap<unsigned, std::optional<WeightSplit>> annotated;
  for (const Projection &p : projections) {
    unsigned arg = p.weight.arg.getArgNumber();
    auto sharding = func.getArgAttrOfType<ShardingAttr>(arg, kShardingAttrName);
    if (!sharding || annotated.count(arg) ||
        llvm::any_of(plan.refused, [&](auto &r) { return r.first == arg; }))
      continue;
    // Any mesh: the split dimension's shards, over the minor axes, are the
    // tensor ranks (the major axes replicate it, as over dist-dtp's own
    // [dp, tp] meshes).
    std::string why;
    std::optional<int64_t> dim;
    if (!sharding.getPartial().empty() || !sharding.getOffsets().empty())
      why = "it has partial axes or explicit offsets";
    for (auto [d, axes] : llvm::enumerate(sharding.getSplit())) {
      if (axes.empty() || !why.empty())
        continue;
      if (dim)
        why = "it splits more than one dimension";
      dim = static_cast<int64_t>(d);
    }
    if (why.empty() && dim && sharding.getNumShards(*dim) != tp)
      why = "it splits dimension " + std::to_string(*dim) + " into " +
            std::to_string(sharding.getNumShards(*dim)) +
            " shards, and tp=" + std::to_string(tp);
    // The tensor ranks are the mesh's minor axes (dist-dtp's [dp, tp]):
    // a split over major axes only would be across replicas.
    if (why.empty() && dim) {
      ArrayRef<int64_t> axes = sharding.getSplitAxes(*dim);
      int64_t rank = sharding.getMesh().getShape().size();
      for (auto [k, axis] : llvm::enumerate(axes))
        if (axis != rank - static_cast<int64_t>(axes.size() - k)) {
          why = "it splits dimension " + std::to_string(*dim) +
                " over mesh axes other than the minor ones (the tensor "
                "ranks of a [dp, tp] mesh)";
          break;
        }
    }
    if (!why.empty())
      plan.refused.push_back(
          {arg, argName(func, func.getArgument(arg)) + ": " + why});
    else
      annotated[arg] = dim ? std::optional<WeightSplit>(WeightSplit{
                                 *dim, sharding.getGroupCount(*dim)})
                           : std::nullopt;
  }

  // 1. Follow each column candidate's split through the data flow.
  std::vector<Candidate> candidates;
  for (auto [index, p] : llvm::enumerate(projections)) {
    Candidate c;
    c.projection = index;
    c.head = isHead(p.op, projectionOf);
    // A head's weight may also be looked up (tied embeddings): split by
    // rows, the lookups give partial sums.
    Value read = readOf(p.weight.arg);
    if (!c.head && !p.weight.lookups.empty()) {
      c.invalid = "its weight is also looked up by index (only a final "
                  "projection's split gives the lookups partial sums)";
      candidates.push_back(std::move(c));
      continue;
    }
    if (projectionUses[p.weight.arg] + countForward(lookupsOf(read)) !=
        forwardUses(read)) {
      c.invalid = "its weight is also read by ops that are not projections";
      candidates.push_back(std::move(c));
      continue;
    }
    if (p.colDim < 0) {
      c.invalid = "its weight has no output dimension to split";
      candidates.push_back(std::move(c));
      continue;
    }
    RankedTensorType weightType = p.weight.type;
    int64_t width = weightType.getDimSize(p.weight.argDim[p.colDim]);
    Value result = p.op->getResult(0);
    if (p.colResultDim ==
        cast<RankedTensorType>(result.getType()).getRank() - 1)
      c.groups = projectionGroups(result);
    if (width % (c.groups * tp) != 0) {
      c.indivisible = c.groups == 1;
      c.invalid = "tp=" + std::to_string(tp) +
                  " does not divide its output width (" +
                  std::to_string(width / c.groups) + ")";
      // The first projection of a pair: padded with everything tied to its
      // columns, if the caller can (a head is decided below, priced).
      if (c.indivisible && !c.head)
        plan.classPadding.push_back({p.weight.arg.getArgNumber(),
                                     p.weight.argDim[p.colDim],
                                     paddedWidth(width, tp), p.op});
      candidates.push_back(std::move(c));
      continue;
    }
    // A split value: its split dim seen as [groups, inner], the tensor axis
    // cutting `inner` into tp blocks (inner = the dim's size: a plain
    // split; smaller: heads inside a merged [batch * heads] dim).
    struct Split {
      int64_t dim, inner;
    };
    DenseMap<Value, Split> split;
    split[result] = {p.colResultDim, width / c.groups};
    c.members.insert(p.op);
    // (A final projection's split may end in reductions over it, all-reduced
    // partial results as Megatron's vocabulary-parallel cross-entropy; a
    // split between projections runs to its partners.)
    Value reaching; // the split value the op being visited reads
    auto block = [&](Operation *op, const Twine &why) {
      if (!c.invalid.empty())
        return;
      c.invalid = ("its split reaches '" + op->getName().getStringRef() +
                   "' (" + describe(op->getLoc()) + ")" + ", which " + why)
                      .str();
      c.terminal = c.partners.empty();
      c.end = op;
      c.gathered = op->hasTrait<OpTrait::IsTerminator>()
                       ? 0
                       : getTensorBytes(reaching.getType());
    };
    for (Operation *op = p.op->getNextNode(); op && c.invalid.empty();
         op = op->getNextNode()) {
      SmallVector<OpOperand *> derived;
      for (OpOperand &operand : op->getOpOperands())
        if (split.count(operand.get()))
          derived.push_back(&operand);
      if (derived.empty() || !isForward(op))
        continue;
      reaching = derived.front()->get();
      c.members.insert(op);
      if (op->hasTrait<OpTrait::IsTerminator>()) {
        block(op, "returns it (a result would need an all-gather)");
        break;
      }
      Split in = split[derived.front()->get()];
      int64_t dim = in.dim;
      auto setResult = [&](int64_t d, int64_t inner) {
        split[op->getResult(0)] = {d, inner};
      };
      if (auto softmax = dyn_cast<linalg::SoftmaxOp>(op)) {
        if (static_cast<int64_t>(softmax.getDimension()) == dim)
          block(op, "normalizes over the split dimension");
        setResult(dim, in.inner);
        continue;
      }
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
        SmallVector<AffineMap> maps = linalgOp.getIndexingMapsArray();
        std::optional<unsigned> loop;
        for (OpOperand *operand : derived) {
          Split here = split[operand->get()];
          auto e = dyn_cast<AffineDimExpr>(
              maps[operand->getOperandNumber()].getResult(here.dim));
          if (!e || (loop && *loop != e.getPosition()) ||
              here.inner != in.inner) {
            block(op, "mixes the split dimension with other indices");
            break;
          }
          loop = e.getPosition();
        }
        if (!c.invalid.empty())
          break;
        bool indexed = false;
        op->getRegion(0).walk(
            [&](linalg::IndexOp index) { indexed |= index.getDim() == *loop; });
        // A plain split's shards shift the index by their offset.
        bool plain =
            cast<RankedTensorType>(reaching.getType()).getDimSize(dim) ==
            in.inner;
        if (indexed && !(c.head && plain)) {
          block(op, "reads the split loop's index");
          break;
        }
        if (linalgOp.getIteratorTypesArray()[*loop] ==
            utils::IteratorType::reduction) {
          auto it = projectionOf.find(op);
          if (it != projectionOf.end() &&
              projections[it->second].rowLoop == static_cast<int64_t>(*loop) &&
              derived.size() == 1 &&
              derived.front()->getOperandNumber() ==
                  projections[it->second].activationOperand &&
              isZeroFilled(linalgOp.getDpsInits()[0]) &&
              getReductionCombiner(op) == ReductionKind::Sum) {
            c.partners.push_back(it->second);
            continue;
          }
          std::optional<ReductionKind> kind = getReductionCombiner(op);
          if (c.head && derived.size() == 1 &&
              (kind == ReductionKind::Max || kind == ReductionKind::Min ||
               (kind == ReductionKind::Sum &&
                isZeroFilled(linalgOp.getDpsInits()[0])))) {
            c.reductions.push_back(op);
            continue;
          }
          block(op, "reduces over the split dimension");
          break;
        }
        for (OpOperand &init : linalgOp.getDpsInitsMutable()) {
          std::optional<unsigned> at =
              maps[init.getOperandNumber()].getResultPosition(
                  getAffineDimExpr(*loop, op->getContext()));
          if (!at) {
            block(op, "drops the split dimension");
            break;
          }
          split[linalgOp->getResult(init.getOperandNumber() -
                                    linalgOp.getNumDpsInputs())] = {
              static_cast<int64_t>(*at), in.inner};
        }
        continue;
      }
      if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
        // The result dim of the group that holds the split: the one where
        // `inner` elements (counted from the group's innermost dim) end.
        RankedTensorType type = expand.getResultType();
        ReassociationIndices group = expand.getReassociationIndices()[dim];
        int64_t below = 1, to = -1, inner = 0;
        for (int64_t d : llvm::reverse(group)) {
          int64_t size = type.getDimSize(d);
          if (below * size >= in.inner) {
            if (in.inner % below == 0) {
              to = d;
              inner = in.inner / below;
            }
            break;
          }
          below *= size;
        }
        if (to < 0 || inner % tp != 0) {
          block(op, "splits it into dimensions that tp=" + std::to_string(tp) +
                        " does not divide");
          break;
        }
        setResult(to, inner);
        continue;
      }
      if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
        RankedTensorType type = collapse.getSrcType();
        for (auto [g, group] :
             llvm::enumerate(collapse.getReassociationIndices()))
          if (llvm::is_contained(group, dim)) {
            int64_t inner = in.inner;
            for (int64_t d : group)
              if (d > dim)
                inner *= type.getDimSize(d);
            setResult(g, inner);
          }
        continue;
      }
      if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op);
          slice &&
          slice.getSourceType().getRank() == slice.getType().getRank() &&
          slice.getOffsets().empty() && slice.getSizes().empty() &&
          slice.getStrides().empty()) {
        setResult(dim, std::min(in.inner, slice.getType().getDimSize(dim)));
        continue;
      }
      if (auto pad = dyn_cast<tensor::PadOp>(op);
          pad && pad.getLow().empty() && pad.getHigh().empty() &&
          pad.getSource() == derived.front()->get()) {
        if (pad.getStaticLow()[dim] != 0 || pad.getStaticHigh()[dim] != 0)
          block(op, "pads the split dimension");
        setResult(dim, in.inner);
        continue;
      }
      block(op, "keeps no split");
    }
    if (c.invalid.empty() && c.partners.empty() && !c.reductions.empty()) {
      c.invalid = "its split ends in reductions over it";
      c.terminal = true;
      c.end = c.reductions.front();
    }
    if (c.invalid.empty() && c.partners.empty())
      c.invalid = "its split reaches no projection that contracts over it";
    for (unsigned partner : c.partners)
      c.reduced +=
          getTensorBytes(projections[partner].op->getResult(0).getType());
    candidates.push_back(std::move(c));
  }

  // 2. Candidates that meet (beyond their own projections) form a group.
  llvm::EquivalenceClasses<unsigned> classes;
  for (unsigned i = 0; i < candidates.size(); ++i)
    classes.insert(i);
  DenseMap<Operation *, unsigned> firstReach;
  for (auto [i, c] : llvm::enumerate(candidates)) {
    if (!c.invalid.empty())
      continue;
    for (Operation *op : c.members) {
      if (op == projections[c.projection].op.getOperation())
        continue;
      auto [it, inserted] = firstReach.try_emplace(op, i);
      if (!inserted)
        classes.unionSets(it->second, i);
    }
  }
  struct Group {
    SmallVector<unsigned> members;
    double work = 0, reduced = 0;
  };
  SmallVector<Group> groups;
  for (auto it = classes.begin(); it != classes.end(); ++it) {
    if (!(*it)->isLeader())
      continue;
    Group g;
    bool valid = true;
    SmallPtrSet<Operation *, 32> ops;
    for (auto m = classes.member_begin(**it); m != classes.member_end(); ++m) {
      const Candidate &c = candidates[*m];
      g.members.push_back(*m);
      valid &= c.invalid.empty();
      for (Operation *op : c.members)
        if (ops.insert(op).second)
          g.work += getComputeWork(op).flops;
      g.reduced += static_cast<double>(c.reduced);
    }
    if (valid)
      groups.push_back(std::move(g));
  }

  // 3. Groups by split work (then the least all-reduced data), each kept
  // when it agrees with those kept before: a projection is either a column
  // or a row split, and a weight shared by several projections (an
  // exporter's deduplicated initializer) gets one split.
  llvm::sort(groups, [](const Group &a, const Group &b) {
    return std::make_tuple(a.work, -a.reduced, -int64_t(a.members.front())) >
           std::make_tuple(b.work, -b.reduced, -int64_t(b.members.front()));
  });
  DenseMap<Operation *, bool> role;      // true: column
  SmallPtrSet<Operation *, 32> splitOps; // run on split values
  auto splitOf = [&](unsigned index, bool column) {
    const Projection &p = projections[index];
    return WeightSplit{p.weight.argDim[column ? p.colDim : p.rowDim],
                       column ? candidates[index].groups : 1};
  };
  for (const Group &g : groups) {
    SmallVector<std::pair<unsigned, bool>> roles; // projection, column
    for (unsigned m : g.members) {
      roles.push_back({candidates[m].projection, true});
      for (unsigned partner : candidates[m].partners)
        roles.push_back({partner, false});
    }
    // Against the kept groups and within this one.
    bool agrees = true;
    DenseMap<unsigned, WeightSplit> mine;
    for (auto [index, column] : roles) {
      const Projection &p = projections[index];
      WeightSplit split = splitOf(index, column);
      auto r = role.find(p.op);
      auto kept = plan.splits.find(p.weight.arg.getArgNumber());
      auto [here, fresh] = mine.try_emplace(p.weight.arg.getArgNumber(), split);
      auto asked = annotated.find(p.weight.arg.getArgNumber());
      agrees &= (r == role.end() || r->second == column) &&
                (kept == plan.splits.end() || kept->second == split) &&
                (fresh || here->second == split) &&
                (asked == annotated.end() || asked->second == split);
    }
    if (!agrees)
      continue;
    for (unsigned m : g.members)
      splitOps.insert(candidates[m].members.begin(),
                      candidates[m].members.end());
    for (auto [index, column] : roles)
      role[projections[index].op] = column;
    for (auto [arg, split] : mine)
      plan.splits[arg] = split;
  }

  // 3b. Heads: projections with no projection after them (an LM head, a
  // classifier). Megatron splits them by columns and gathers the output;
  // here that is kept when it is faster than running them replicated, or
  // when the weight's dist.sharding asks for that split.
  // Projection -> (decision, its prices).
  DenseMap<unsigned, std::pair<std::string, std::string>> headNotes;
  CollectiveCostModel collectives(pricing.cluster);
  std::string pricedOn = "priced on '" + pricing.cluster.name + "'" +
                         (pricing.defaulted ? ": no dist.cluster" : "");
  for (auto [index, c] : llvm::enumerate(candidates)) {
    const Projection &p = projections[index];
    unsigned arg = p.weight.arg.getArgNumber();
    // (Outputs cut into groups after it are not a final projection's.)
    if ((!c.terminal && !c.indivisible) || c.groups > 1 || role.count(p.op) ||
        plan.splits.count(arg) || projectionUses[p.weight.arg] != 1 ||
        !c.head || p.colDim < 0)
      continue;
    // An annotated head is split as its dist.sharding says (a plan written
    // back by annotate-shardings), whatever the prices; any other
    // annotation leaves it to the checks below.
    bool forced = false;
    if (auto asked = annotated.find(arg); asked != annotated.end()) {
      if (!asked->second || c.indivisible ||
          !(*asked->second == WeightSplit{p.weight.argDim[p.colDim], 1}))
        continue;
      forced = true;
    }
    Value result = p.op->getResult(0);
    auto resultType = cast<RankedTensorType>(result.getType());
    int64_t width = resultType.getDimSize(p.colResultDim);
    int64_t padded = width;
    if (c.indivisible) {
      // Only a weight nothing else reads (no gradient, no update) can be
      // padded in place of the argument; the init must be a fill to pad.
      std::string why = whyNotPaddable(p);
      if (!why.empty()) {
        headNotes[index] = {"replicated: " + argName(func, p.weight.arg) +
                                " is not split: " + c.invalid +
                                ", and it cannot be padded: " + why,
                            ""};
        // A weight with a gradient and an update: padded with everything
        // tied to its columns, if the caller can (PadDimension.h).
        if (!p.weight.arg.hasOneUse())
          plan.classPadding.push_back(
              {arg, p.weight.argDim[p.colDim], paddedWidth(width, tp), p.op});
        continue;
      }
      padded = llvm::divideCeil(width, tp) * tp;
    }
    // The analytic model needs the cluster's peak for the op's type.
    std::string dtype = getComputeWork(p.op).dtype;
    bool priceable = pricing.cluster.device.getPeakFlops(dtype).has_value();
    if (!priceable && !forced) {
      headNotes[index] = {
          "replicated: " + argName(func, p.weight.arg) +
              " is not split: cluster '" + pricing.cluster.name +
              "' has no peak flop/s for " + dtype + " to price a split",
          ""};
      continue;
    }
    double share = static_cast<double>(padded / tp) / width;
    Value activation = p.op->getOperand(p.activationOperand);
    Value weight = p.op->getOperand(p.weightOperand);
    double whole = 0, part = 0;
    if (priceable) {
      whole = priceShare(p.op, activation, weight, 1.0, pricing);
      part = priceShare(p.op, activation, weight, share, pricing);
    }
    double gatherBytes =
        c.indivisible
            ? static_cast<double>(getTensorBytes(resultType)) * padded / width
            : static_cast<double>(c.gathered);
    // A result returned split is gathered by the caller onto one device.
    bool returned = !c.indivisible && c.end->hasTrait<OpTrait::IsTerminator>();
    if (returned)
      for (Value v : c.end->getOperands())
        if (c.members.contains(v.getDefiningOp()))
          gatherBytes = static_cast<double>(getTensorBytes(v.getType()));
    gatherBytes /= static_cast<double>(pricing.rowsDivisor);
    // A split that only ends in reductions gathers nothing.
    bool gathers = c.indivisible || returned || c.gathered > 0;
    double gather =
        gathers ? collectives.getTime(returned ? CollectiveKind::Gather
                                               : CollectiveKind::AllGather,
                                      pricing.group, gatherBytes)
                : 0;
    double allReduce = 0;
    for (Operation *r : c.reductions)
      allReduce += collectives.getTime(
          CollectiveKind::AllReduce, pricing.group,
          static_cast<double>(getTensorBytes(r->getResult(0).getType())) /
              static_cast<double>(pricing.rowsDivisor));
    // The lookups of a tied weight (the token embedding) give partial sums.
    ArrayRef<Operation *> tied = p.weight.lookups;
    for (Operation *l : tied)
      allReduce += collectives.getTime(
          CollectiveKind::AllReduce, pricing.group,
          static_cast<double>(getTensorBytes(l->getResult(0).getType())) /
              static_cast<double>(pricing.rowsDivisor));
    std::string times =
        formatSeconds(part) +
        (gathers ? (returned ? " + gather " : " + all-gather ") +
                       formatSeconds(gather)
                 : std::string()) +
        (c.reductions.empty() && tied.empty()
             ? std::string()
             : " + all-reduce " + formatSeconds(allReduce)) +
        " against " + formatSeconds(whole) + " replicated, " + pricedOn;
    gather += allReduce;
    std::string name = argName(func, p.weight.arg);
    // A split that saves less than this share of the time is not worth
    // its communication and reassembly.
    constexpr int kMinGainPercent = 2;
    if (!priceable)
      times = "not priced: cluster '" + pricing.cluster.name +
              "' has no peak flop/s for " + dtype +
              (pricing.defaulted ? " (no dist.cluster)" : "");
    if (!forced && part + gather > (1 - kMinGainPercent / 100.0) * whole) {
      headNotes[index] = {
          "replicated: " + name + " is not split: a column split" +
              (c.indivisible ? " padded to " + std::to_string(padded)
                             : std::string()) +
              (part + gather < whole
                   ? " saves less than " + std::to_string(kMinGainPercent) + "%"
                   : " would not be faster"),
          " (" + times + ")"};
      continue;
    }
    int64_t dim = p.weight.argDim[p.colDim];
    std::string where;
    if (c.indivisible) {
      where = ", padded from " + std::to_string(width) + " to " +
              std::to_string(padded) + " and gathered right after it";
      plan.padded.push_back({arg, dim, padded, p.op});
    } else if (returned) {
      where = ", returned split (the caller gathers it)";
    } else if (gathers) {
      where = ", gathered at '" + c.end->getName().getStringRef().str() +
              "' (" + describe(c.end->getLoc()) + ")";
    }
    if (!c.reductions.empty())
      where += ", " + std::to_string(c.reductions.size()) +
               " reductions over it all-reduced (the first at " +
               describe(c.reductions.front()->getLoc()) + ")";
    if (tied.size() == 1)
      where += ", its lookup by index (" + describe(tied.front()->getLoc()) +
               ") split by rows, partial sums all-reduced";
    else if (!tied.empty())
      where += ", its " + std::to_string(tied.size()) +
               " lookups by index (the first at " +
               describe(tied.front()->getLoc()) +
               ") split by rows, partial sums all-reduced";
    headNotes[index] = {where, ": " + times};
    role[p.op] = true;
    plan.splits[arg] = WeightSplit{dim, 1};
    plan.lookups.insert(tied.begin(), tied.end());
    splitOps.insert(c.members.begin(), c.members.end());
  }

  // Annotated splits the kept pairs do not realize.
  for (auto [arg, want] : annotated) {
    if (!want)
      continue;
    auto kept = plan.splits.find(arg);
    if (kept != plan.splits.end() && kept->second == *want)
      continue;
    std::string why = "no tensor-parallel pairing splits its dimension " +
                      std::to_string(want->dim);
    if (want->groups > 1)
      why += " in " + std::to_string(want->groups) + " groups";
    // Why the column candidate stopped, unless that is a final
    // projection's end (split and gathered there) or the groups differ.
    for (auto [index, p] : llvm::enumerate(projections)) {
      const Candidate &c = candidates[index];
      if (p.weight.arg.getArgNumber() == arg && p.colDim >= 0 &&
          p.weight.argDim[p.colDim] == want->dim && !c.invalid.empty() &&
          want->groups == 1 && !(c.head && c.terminal && !c.indivisible))
        why = "a column split of it is not possible (" + c.invalid + ")";
    }
    plan.refused.push_back(
        {arg, argName(func, func.getArgument(arg)) + ": " + why});
  }
  llvm::sort(plan.refused);

  // 4. The decisions, in program order.
  for (auto [index, p] : llvm::enumerate(projections)) {
    std::string what;
    llvm::raw_string_ostream os(what);
    std::string name = argName(func, p.weight.arg);
    auto r = role.find(p.op);
    bool asked = annotated.count(p.weight.arg.getArgNumber());
    if (r != role.end() && r->second) {
      os << "column split of " << name << " (dim " << p.weight.argDim[p.colDim]
         << ")";
      if (candidates[index].groups > 1)
        os << " in " << candidates[index].groups << " groups";
      if (asked)
        os << ", as its dist.sharding says";
      os << headNotes.lookup(index).first;
    } else if (auto note = headNotes.find(index); note != headNotes.end()) {
      os << note->second.first;
    } else if (r != role.end()) {
      os << "row split of " << name << " (dim " << p.weight.argDim[p.rowDim]
         << "): partial sums, one all-reduce";
      if (asked)
        os << ", as its dist.sharding says";
    } else if (asked && !annotated.lookup(p.weight.arg.getArgNumber())) {
      os << "replicated: " << name
         << " is not split, as its dist.sharding "
            "says";
    } else if (asked) {
      WeightSplit want = *annotated.lookup(p.weight.arg.getArgNumber());
      os << "replicated: " << name << " is not split: its dist.sharding "
         << "asks for dimension " << want.dim;
      if (want.groups > 1)
        os << " in " << want.groups << " groups";
      os << ", which no pairing splits";
    } else {
      os << "replicated: " << name << " is not split: ";
      if (!candidates[index].invalid.empty())
        os << "a column split is not possible (" << candidates[index].invalid
           << ")";
      else
        os << "its column split conflicts with pairs that split more work";
      os << ", and no column-split projection feeds it";
    }
    // The decision, then the prices that chose it (which depend on sizes).
    size_t outcome = what.size();
    if (auto note = headNotes.find(index); note != headNotes.end())
      what += note->second.second;
    plan.decisions.push_back({p.op, what, outcome});
  }
  // Other forward ops that read a weight (a slice of it, a gather from it)
  // run replicated: say so too.
  for (Operation &op : body) {
    if (!isForward(&op) || projectionOf.count(&op) || splitOps.contains(&op) ||
        !isa<linalg::LinalgOp>(op))
      continue;
    std::optional<std::string> why;
    op.walk([&](Operation *nested) {
      for (Value operand : nested->getOperands()) {
        Value v = operand;
        Operation *through = nullptr;
        while (Operation *def = v.getDefiningOp()) {
          if (!isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
                   tensor::CollapseShapeOp, linalg::TransposeOp, tensor::PadOp>(
                  def) &&
              !(isa<linalg::GenericOp>(def) &&
                castSource(cast<linalg::GenericOp>(def))))
            break;
          // (An argument padded on entry reads as the argument.)
          if (!isa<linalg::TransposeOp, linalg::GenericOp, tensor::PadOp>(def))
            through = def;
          v = def->getOperand(0);
        }
        auto arg = dyn_cast<BlockArgument>(v);
        if (why || !arg || arg.getOwner() != &body ||
            func.getArgAttr(arg.getArgNumber(), "dist.batch_dim") ||
            !isa<FloatType>(getElementTypeOrSelf(arg.getType())))
          continue;
        std::string name = argName(func, arg);
        auto split = plan.splits.find(arg.getArgNumber());
        if (nested != &op && split != plan.splits.end() &&
            plan.lookups.contains(&op))
          why = "vocabulary-parallel lookup of " + name + " (dim " +
                std::to_string(split->second.dim) +
                " split): each device reads the rows it holds, partial sums, "
                "one all-reduce";
        else if (nested != &op)
          why = "replicated: reads " + name + " by index (a gather)";
        else if (through)
          why = "replicated: reads " + name + " through '" +
                through->getName().getStringRef().str() +
                "', which the plan does not split";
      }
    });
    if (why)
      plan.decisions.push_back({&op, *why});
  }
  llvm::sort(plan.decisions, [&](const TensorParallelDecision &a,
                                 const TensorParallelDecision &b) {
    return position[a.op] < position[b.op];
  });
  return plan;
}

/// Pads the dimension class of `pad`'s weight (padDimension) when the
/// padded program's plan splits it, trying it on a copy first; says what it
/// decided in `notes`. True when `func` was padded (and `result` updated).
static bool padWeightClass(func::FuncOp func, int64_t tp,
                           const TensorParallelPricing &pricing,
                           const WeightPadding &pad,
                           std::vector<TensorParallelDecision> &notes,
                           PaddedTensorParallelPlan &result) {
  BlockArgument arg = func.getArgument(pad.arg);
  int64_t width = cast<RankedTensorType>(arg.getType()).getDimSize(pad.dim);
  std::string name = argName(func, arg);
  // Try it on a copy: the projection found there by a probe attribute.
  constexpr llvm::StringLiteral kProbe = "distir_pad_probe";
  pad.projection->setAttr(kProbe, UnitAttr::get(func.getContext()));
  OpBuilder b(func);
  auto trial = cast<func::FuncOp>(b.clone(*func));
  pad.projection->removeAttr(kProbe);
  trial.setSymName((func.getSymName() + "__distir_pad_trial").str());
  trial.setPrivate();
  std::string why, outcome;
  // Where the padded program's decision says its prices (npos: none).
  size_t outcomeEnd = std::string::npos;
  bool split = false;
  Operation *failedOp = nullptr;
  if (succeeded(padDimension(trial, pad.arg, pad.dim, pad.size,
                             /*apply=*/true, /*zeroResults=*/true, why,
                             &failedOp))) {
    TensorParallelPlan padded = planTensorParallel(trial, tp, pricing);
    split = padded.splits.count(pad.arg);
    for (const TensorParallelDecision &d : padded.decisions)
      if (d.op->hasAttr(kProbe)) {
        outcome = d.what;
        outcomeEnd = d.outcome;
      }
  }
  if (failedOp)
    why += " (" + describe(failedOp->getLoc()) + ")";
  trial.erase();
  if (!split) {
    // The padded program's own reason, without its prefix.
    std::string prefix = "replicated: " + name + " is not split: ";
    if (StringRef(outcome).starts_with(prefix)) {
      outcome = outcome.substr(prefix.size());
      if (outcomeEnd != std::string::npos)
        outcomeEnd -= std::min(outcomeEnd, prefix.size());
    }
    std::string head =
        "replicated: " + name + " is not split: tp=" + std::to_string(tp) +
        " does not divide its output width (" + std::to_string(width) +
        "), and padded to " + std::to_string(pad.size) +
        " with the values tied to it: ";
    TensorParallelDecision note{pad.projection, head};
    if (!why.empty()) {
      note.what += "it would not compute the same: " + why;
    } else if (outcome.empty()) {
      note.what += "it is not split";
    } else {
      // The decision, then its prices (which depend on sizes).
      note.what += outcome;
      if (outcomeEnd != std::string::npos)
        note.outcome = head.size() + outcomeEnd;
    }
    notes.push_back(std::move(note));
    return false;
  }
  // The same padding as on the copy (it verified there).
  FailureOr<DimensionPadding> padding =
      padDimension(func, pad.arg, pad.dim, pad.size, /*apply=*/true,
                   /*zeroResults=*/true, why);
  if (failed(padding)) {
    notes.push_back(
        {pad.projection,
         "replicated: " + name + " is not split: padding it failed: " + why});
    return false;
  }
  for (unsigned a : padding->args) {
    auto padOp = cast<tensor::PadOp>(*func.getArgument(a).getUsers().begin());
    result.args[a] = padOp.getResultType();
  }
  result.results.append(padding->results.begin(), padding->results.end());
  notes.push_back(
      {pad.projection,
       ", padded from " + std::to_string(width) + " to " +
           std::to_string(pad.size) + " with the " +
           std::to_string(padding->values) + " values tied to it (" +
           std::to_string(padding->args.size()) + " arguments" +
           (padding->masked ? ", " + std::to_string(padding->masked) +
                                  " masked to -inf at the padded positions"
                            : std::string()) +
           ", kept padded in the step)"});
  return true;
}

PaddedTensorParallelPlan distir::dist::planTensorParallelWithPadding(
    func::FuncOp func, int64_t tp, const TensorParallelPricing &pricing) {
  PaddedTensorParallelPlan result;
  result.plan = planTensorParallel(func, tp, pricing);
  std::vector<TensorParallelDecision> notes;
  for (const WeightPadding &pad :
       std::vector<WeightPadding>(result.plan.classPadding))
    if (!result.args.count(pad.arg) &&
        padWeightClass(func, tp, pricing, pad, notes, result))
      result.plan = planTensorParallel(func, tp, pricing);
  // A weight left replicated: its note replaces the plan's decision. A
  // padded one: the padding joins the decision that splits it.
  for (const TensorParallelDecision &note : notes) {
    auto it = llvm::find_if(
        result.plan.decisions,
        [&](const TensorParallelDecision &d) { return d.op == note.op; });
    if (StringRef(note.what).starts_with("replicated")) {
      if (it != result.plan.decisions.end())
        *it = note;
      else
        result.plan.decisions.push_back(note);
      continue;
    }
    if (it == result.plan.decisions.end()) {
      // (Not expected: the padded weight is read through its pad, so its
      // projection keeps a decision.)
      result.plan.decisions.push_back(
          {note.op, StringRef(note.what).drop_front(2).str()});
      continue;
    }
    size_t at = std::min(it->outcome, it->what.size());
    it->what.insert(at, note.what);
    if (it->outcome != std::string::npos)
      it->outcome += note.what.size();
  }
  return result;
}

std::vector<TensorParallelDecisionInfo>
distir::dist::getTensorParallelDecisions(func::FuncOp func, int64_t tp,
                                         const Cluster *cluster,
                                         int64_t rowsDivisor) {
  std::vector<TensorParallelDecisionInfo> out;
  if (tp <= 1)
    return out;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (func.getArgAttr(i, "dist.layer"))
      return out; // dist-dtp splits tagged weights by their tags.
  TensorParallelPricing pricing =
      getTensorParallelPricing(func, tp, cluster, rowsDivisor);
  // As dist-dtp decides, paddings included: on a copy.
  OpBuilder b(func);
  auto copy = cast<func::FuncOp>(b.clone(*func));
  copy.setSymName((func.getSymName() + "__distir_decisions").str());
  copy.setPrivate();
  for (const TensorParallelDecision &d :
       planTensorParallelWithPadding(copy, tp, pricing).plan.decisions)
    out.push_back({d.op->getLoc(), d.what, d.what.substr(0, d.outcome)});
  copy.erase();
  return out;
}

TensorParallelPricing
distir::dist::getTensorParallelPricing(func::FuncOp func, int64_t tp,
                                       const Cluster *cluster,
                                       int64_t rowsDivisor) {
  TensorParallelPricing pricing;
  // The group mapping=tp-inner places, whatever the mapping: the choice is
  // then the same in every mapping and in distir-search's templates.
  for (int64_t t = 0; t < tp; ++t)
    pricing.group.push_back(t);
  pricing.rowsDivisor = std::max<int64_t>(rowsDivisor, 1);
  if (cluster) {
    pricing.cluster = *cluster;
  } else if (ClusterAttr attr =
                 getModuleCluster(func->getParentOfType<ModuleOp>())) {
    pricing.cluster = clusterFromAttr(attr);
  } else {
    FailureOr<Cluster> preset =
        getClusterPreset(kDefaultPricingCluster, [](const llvm::Twine &) {});
    assert(succeeded(preset) && "the default pricing cluster is a preset");
    pricing.cluster = std::move(*preset);
    pricing.defaulted = true;
  }
  return pricing;
}
