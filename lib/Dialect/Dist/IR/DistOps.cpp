//===- DistOps.cpp - dist dialect operations
//--------------------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Verifiers of the communication ops. Each op's `**Constraints:**` list in
// DistOps.td is enforced here, rule by rule; the shared rules (distinct
// devices, matching operand types, dimension ranges, divisibility, reduction
// kinds) are helpers used by every op.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Dialect/Dist/IR/DistOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/DenseMap.h"

#include <cmath>

using namespace mlir;
using namespace distir::dist;

//===----------------------------------------------------------------------===//
// Shared verification helpers
//===----------------------------------------------------------------------===//

/// Prints a tensor type without its placement, for shape/type messages.
static std::string withoutEncoding(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  auto tensor = cast<RankedTensorType>(type);
  os << RankedTensorType::get(tensor.getShape(), tensor.getElementType());
  return s;
}

static int64_t deviceOf(Type type) { return getDevice(type).getId(); }

/// The devices of `types` are pairwise distinct. `what` names the values
/// ("operand" or "result").
static LogicalResult verifyDistinctDevices(Operation *op, TypeRange types,
                                           StringRef what) {
  if (types.empty())
    return op->emitOpError() << "expects at least one " << what;
  llvm::SmallDenseMap<int64_t, unsigned> seen;
  for (auto [i, type] : llvm::enumerate(types)) {
    auto [it, inserted] = seen.try_emplace(deviceOf(type), i);
    if (!inserted)
      return op->emitOpError()
             << "has " << what << " #" << i << " on device " << deviceOf(type)
             << ", which " << what << " #" << it->second
             << " already occupies; the devices of a group must be distinct";
  }
  return success();
}

/// Every type of `types` has the shape and element type of `types[0]`.
static LogicalResult verifySameTensorTypes(Operation *op, TypeRange types,
                                           StringRef what) {
  auto first = cast<RankedTensorType>(types.front());
  for (auto [i, type] : llvm::enumerate(types)) {
    auto tensor = cast<RankedTensorType>(type);
    if (tensor.getShape() != first.getShape() ||
        tensor.getElementType() != first.getElementType())
      return op->emitOpError()
             << "expects all " << what << "s to have the same shape and "
             << "element type, but " << what << " #" << i << " is "
             << withoutEncoding(tensor) << " and " << what << " #0 is "
             << withoutEncoding(first);
  }
  return success();
}

/// `dim` indexes a dimension of a tensor of rank `rank`.
static LogicalResult verifyDimInRange(Operation *op, int64_t dim, int64_t rank,
                                      StringRef name) {
  if (dim < 0 || dim >= rank)
    return op->emitOpError()
           << name << " " << dim << " is out of range for rank " << rank;
  return success();
}

/// Dimension `dim` of `type` splits into `parts` equal chunks.
static LogicalResult verifyDivisible(Operation *op, RankedTensorType type,
                                     int64_t dim, size_t parts,
                                     StringRef name) {
  int64_t size = type.getDimSize(dim);
  if (size % static_cast<int64_t>(parts) != 0)
    return op->emitOpError()
           << name << " " << dim << " has size " << size
           << ", which is not divisible by the group size " << parts;
  return success();
}

/// The reduction kind is defined on the element type.
static LogicalResult verifyReductionKind(Operation *op, ReductionKind kind,
                                         Type elementType) {
  bool isFloat = isa<FloatType>(elementType);
  bool isInt = isa<IntegerType>(elementType);
  if (kind == ReductionKind::Avg && !isFloat)
    return op->emitOpError()
           << "reduction 'avg' needs a floating-point element type, got "
           << elementType;
  if (!isFloat && !isInt)
    return op->emitOpError()
           << "reduction '" << stringifyReductionKind(kind)
           << "' needs an integer or floating-point element type, got "
           << elementType;
  return success();
}

/// `expected` (a tensor type without placement) matches `actual` up to the
/// device encoding.
static LogicalResult verifyResultShape(Operation *op, unsigned index,
                                       RankedTensorType expected, Type actual) {
  auto tensor = cast<RankedTensorType>(actual);
  if (tensor.getShape() != expected.getShape() ||
      tensor.getElementType() != expected.getElementType())
    return op->emitOpError()
           << "expects result #" << index << " to be "
           << withoutEncoding(expected) << ", got " << withoutEncoding(tensor);
  return success();
}

/// The device of `root` is among the devices of `group`.
static LogicalResult verifyRootInGroup(Operation *op, Type root,
                                       TypeRange group, StringRef what) {
  int64_t rootDevice = deviceOf(root);
  if (llvm::none_of(group,
                    [&](Type type) { return deviceOf(type) == rootDevice; }))
    return op->emitOpError()
           << "root device " << rootDevice
           << " must be the device of one of the " << what << "s";
  return success();
}

/// `type` with dimension `dim` multiplied by `mul` and divided by `div`.
/// Leaves non-tensors and out-of-range dimensions alone: the verifier reports
/// those with a precise message.
static Type scaleDim(Type type, int64_t dim, int64_t mul, int64_t div) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || dim < 0 || dim >= tensor.getRank() ||
      ShapedType::isDynamic(tensor.getDimSize(dim)))
    return type;
  SmallVector<int64_t> shape(tensor.getShape());
  if (shape[dim] % div != 0)
    return type;
  shape[dim] = shape[dim] / div * mul;
  return tensor.clone(shape);
}

/// `sum`, `max`, ...: the reduction kind as a bare keyword (the attribute's
/// own printer adds a leading space meant for the generic form).
static ParseResult parseReductionKind(OpAsmParser &parser,
                                      ReductionKindAttr &kind) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<ReductionKind> value = symbolizeReductionKind(keyword);
  if (!value)
    return parser.emitError(loc) << "unknown reduction kind '" << keyword
                                 << "'; expected sum, prod, max, min or avg";
  kind = ReductionKindAttr::get(parser.getContext(), *value);
  return success();
}

static void printReductionKind(OpAsmPrinter &printer, Operation *,
                               ReductionKindAttr kind) {
  printer << stringifyReductionKind(kind.getValue());
}

/// Shared memory effects of every communication op.
template <typename OpT>
static void getCommEffects(
    OpT op, SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                &effects) {
  effects.emplace_back(MemoryEffects::Read::get(),
                       CommunicationResource::get());
  effects.emplace_back(MemoryEffects::Write::get(),
                       CommunicationResource::get());
}

#define DIST_COMM_EFFECTS(OP)                                                  \
  void OP::getEffects(                                                         \
      SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>      \
          &effects) {                                                          \
    getCommEffects(*this, effects);                                            \
  }
DIST_COMM_EFFECTS(SendOp)
DIST_COMM_EFFECTS(AllReduceOp)
DIST_COMM_EFFECTS(AllGatherOp)
DIST_COMM_EFFECTS(ReduceScatterOp)
DIST_COMM_EFFECTS(AllToAllOp)
DIST_COMM_EFFECTS(BroadcastOp)
DIST_COMM_EFFECTS(ScatterOp)
DIST_COMM_EFFECTS(ReduceOp)
DIST_COMM_EFFECTS(GatherOp)
DIST_COMM_EFFECTS(ReshardOp)
#undef DIST_COMM_EFFECTS

//===----------------------------------------------------------------------===//
// SendOp
//===----------------------------------------------------------------------===//

LogicalResult SendOp::verify() {
  if (failed(verifyResultShape(*this, 0, getInput().getType(),
                               getResult().getType())))
    return failure();
  if (deviceOf(getInput().getType()) == deviceOf(getResult().getType()))
    return emitOpError() << "sends to its own device "
                         << deviceOf(getInput().getType());
  return success();
}

//===----------------------------------------------------------------------===//
// AllReduceOp
//===----------------------------------------------------------------------===//

LogicalResult
AllReduceOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                              Adaptor adaptor,
                              SmallVectorImpl<Type> &inferredReturnTypes) {
  llvm::append_range(inferredReturnTypes, adaptor.getInputs().getTypes());
  return success();
}

LogicalResult AllReduceOp::verify() {
  TypeRange types = getInputs().getTypes();
  if (failed(verifyDistinctDevices(*this, types, "operand")) ||
      failed(verifySameTensorTypes(*this, types, "operand")))
    return failure();
  return verifyReductionKind(*this, getKind(),
                             cast<RankedTensorType>(types[0]).getElementType());
}

//===----------------------------------------------------------------------===//
// AllGatherOp
//===----------------------------------------------------------------------===//

LogicalResult
AllGatherOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                              Adaptor adaptor,
                              SmallVectorImpl<Type> &inferredReturnTypes) {
  int64_t n = adaptor.getInputs().size();
  for (Type type : adaptor.getInputs().getTypes())
    inferredReturnTypes.push_back(scaleDim(type, adaptor.getDim(), n, 1));
  return success();
}

LogicalResult AllGatherOp::verify() {
  TypeRange types = getInputs().getTypes();
  if (failed(verifyDistinctDevices(*this, types, "operand")) ||
      failed(verifySameTensorTypes(*this, types, "operand")))
    return failure();
  return verifyDimInRange(*this, getDim(),
                          cast<RankedTensorType>(types[0]).getRank(), "dim");
}

//===----------------------------------------------------------------------===//
// ReduceScatterOp
//===----------------------------------------------------------------------===//

LogicalResult
ReduceScatterOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                  Adaptor adaptor,
                                  SmallVectorImpl<Type> &inferredReturnTypes) {
  int64_t n = adaptor.getInputs().size();
  for (Type type : adaptor.getInputs().getTypes())
    inferredReturnTypes.push_back(scaleDim(type, adaptor.getDim(), 1, n));
  return success();
}

LogicalResult ReduceScatterOp::verify() {
  TypeRange types = getInputs().getTypes();
  if (failed(verifyDistinctDevices(*this, types, "operand")) ||
      failed(verifySameTensorTypes(*this, types, "operand")))
    return failure();
  auto type = cast<RankedTensorType>(types[0]);
  if (failed(verifyDimInRange(*this, getDim(), type.getRank(), "dim")) ||
      failed(verifyDivisible(*this, type, getDim(), types.size(), "dim")))
    return failure();
  return verifyReductionKind(*this, getKind(), type.getElementType());
}

//===----------------------------------------------------------------------===//
// AllToAllOp
//===----------------------------------------------------------------------===//

LogicalResult
AllToAllOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                             Adaptor adaptor,
                             SmallVectorImpl<Type> &inferredReturnTypes) {
  int64_t n = adaptor.getInputs().size();
  for (Type type : adaptor.getInputs().getTypes()) {
    // Only concatenate what was split, so a rejected split leaves the type
    // unchanged for the verifier to report. (Comparing the split type with
    // the input does not tell: an empty split dim splits into itself.)
    auto tensor = dyn_cast<RankedTensorType>(type);
    int64_t dim = adaptor.getSplitDim();
    bool splits = tensor && dim >= 0 && dim < tensor.getRank() &&
                  !ShapedType::isDynamic(tensor.getDimSize(dim)) &&
                  tensor.getDimSize(dim) % n == 0;
    inferredReturnTypes.push_back(
        splits
            ? scaleDim(scaleDim(type, dim, 1, n), adaptor.getConcatDim(), n, 1)
            : type);
  }
  return success();
}

LogicalResult AllToAllOp::verify() {
  TypeRange types = getInputs().getTypes();
  if (failed(verifyDistinctDevices(*this, types, "operand")) ||
      failed(verifySameTensorTypes(*this, types, "operand")))
    return failure();
  auto type = cast<RankedTensorType>(types[0]);
  if (failed(verifyDimInRange(*this, getSplitDim(), type.getRank(),
                              "split_dim")) ||
      failed(verifyDimInRange(*this, getConcatDim(), type.getRank(),
                              "concat_dim")))
    return failure();
  return verifyDivisible(*this, type, getSplitDim(), types.size(), "split_dim");
}

//===----------------------------------------------------------------------===//
// BroadcastOp
//===----------------------------------------------------------------------===//

LogicalResult BroadcastOp::verify() {
  TypeRange results = getResults().getTypes();
  if (failed(verifyDistinctDevices(*this, results, "result")))
    return failure();
  for (auto [i, type] : llvm::enumerate(results))
    if (failed(verifyResultShape(*this, i, getInput().getType(), type)))
      return failure();
  return verifyRootInGroup(*this, getInput().getType(), results, "result");
}

//===----------------------------------------------------------------------===//
// ScatterOp
//===----------------------------------------------------------------------===//

LogicalResult ScatterOp::verify() {
  TypeRange results = getResults().getTypes();
  if (failed(verifyDistinctDevices(*this, results, "result")))
    return failure();
  RankedTensorType input = getInput().getType();
  if (failed(verifyDimInRange(*this, getDim(), input.getRank(), "dim")) ||
      failed(verifyDivisible(*this, input, getDim(), results.size(), "dim")))
    return failure();
  auto chunk = cast<RankedTensorType>(
      scaleDim(input, getDim(), 1, static_cast<int64_t>(results.size())));
  for (auto [i, type] : llvm::enumerate(results))
    if (failed(verifyResultShape(*this, i, chunk, type)))
      return failure();
  return verifyRootInGroup(*this, input, results, "result");
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::verify() {
  TypeRange types = getInputs().getTypes();
  if (failed(verifyDistinctDevices(*this, types, "operand")) ||
      failed(verifySameTensorTypes(*this, types, "operand")) ||
      failed(verifyResultShape(*this, 0, cast<RankedTensorType>(types[0]),
                               getResult().getType())) ||
      failed(verifyRootInGroup(*this, getResult().getType(), types, "operand")))
    return failure();
  return verifyReductionKind(*this, getKind(),
                             cast<RankedTensorType>(types[0]).getElementType());
}

//===----------------------------------------------------------------------===//
// GatherOp
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::verify() {
  TypeRange types = getInputs().getTypes();
  if (failed(verifyDistinctDevices(*this, types, "operand")) ||
      failed(verifySameTensorTypes(*this, types, "operand")))
    return failure();
  auto type = cast<RankedTensorType>(types[0]);
  if (failed(verifyDimInRange(*this, getDim(), type.getRank(), "dim")))
    return failure();
  auto whole = cast<RankedTensorType>(
      scaleDim(type, getDim(), static_cast<int64_t>(types.size()), 1));
  if (failed(verifyResultShape(*this, 0, whole, getResult().getType())))
    return failure();
  return verifyRootInGroup(*this, getResult().getType(), types, "operand");
}

#define GET_OP_CLASSES
#include "DistIR/Dialect/Dist/IR/DistOps.cpp.inc"

//===----------------------------------------------------------------------===//
// ReshardOp
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

LogicalResult KernelOp::verify() {
  double duration = getDuration().convertToDouble();
  if (!std::isfinite(duration) || duration < 0)
    return emitOpError() << "needs a finite, non-negative duration, got "
                         << duration;
  DeviceAttr device = getDevice(getResult().getType());
  for (auto [i, input] : llvm::enumerate(getInputs()))
    if (getDevice(input.getType()) != device)
      return emitOpError() << "operand #" << i << " is on device "
                           << getDevice(input.getType()).getId()
                           << ", the result on device " << device.getId();
  return success();
}

// Program order is the schedule: profiled work is never moved or removed.
void KernelOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  getCommEffects(*this, effects);
}

LogicalResult ReshardOp::verify() {
  ArrayRef<int64_t> shape = getShape();
  if (llvm::any_of(shape, [](int64_t size) { return size < 0; }))
    return emitOpError() << "needs a static, non-negative shape";
  if (getInputs().empty() || getResults().empty())
    return emitOpError() << "needs at least one operand and one result";
  Type element =
      cast<RankedTensorType>(getInputs().front().getType()).getElementType();
  auto global = RankedTensorType::get(shape, element);
  auto checkSide = [&](StringRef role, ShardingAttr sharding, TypeRange tiles,
                       StringRef what) -> LogicalResult {
    if (!sharding.getPartial().empty())
      return emitOpError() << "'" << role
                           << "' has partial axes: a pending reduction is "
                              "not a resharding";
    if (sharding.isStrided())
      return emitOpError() << "'" << role
                           << "' is strided (groups): a resharding moves "
                              "contiguous tiles";
    if (failed(sharding.verifyFor(
            global, [&]() { return emitOpError() << "'" << role << "': "; })))
      return failure();
    MeshAttr mesh = sharding.getMesh();
    if (static_cast<int64_t>(tiles.size()) != mesh.getNumPositions())
      return emitOpError() << "has " << tiles.size() << " " << what
                           << "s, but the '" << role << "' mesh has "
                           << mesh.getNumPositions() << " positions";
    for (auto [p, type] : llvm::enumerate(tiles)) {
      auto tile = cast<RankedTensorType>(type);
      auto expected = withDevice(
          RankedTensorType::get(sharding.getLocalShape(shape, p), element),
          mesh.getDevice(p));
      if (tile != expected)
        return emitOpError()
               << what << " #" << p << " must be " << expected << " (position "
               << p << " of the '" << role << "' mesh), got " << tile;
    }
    return success();
  };
  if (failed(
          checkSide("from", getSource(), getInputs().getTypes(), "operand")) ||
      failed(
          checkSide("to", getDestination(), getResults().getTypes(), "result")))
    return failure();
  return success();
}
