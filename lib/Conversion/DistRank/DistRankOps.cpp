//===- DistRankOps.cpp - per-rank communication ops -----------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Verifiers of the dist_rank ops check what one op can know on its own:
// groups are distinct non-negative ranks, the root is a member, and result
// shapes follow from the input shape and the group size. What depends on
// the rank a function runs on (membership, root holds the input) is checked
// by dist-rank-verify-matching.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Dialect/Dist/IR/DistRankOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace distir;
using namespace distir::dist_rank;

#include "DistIR/Conversion/DistRankDialect.cpp.inc"

LogicalResult
DistRankDialect::verifyOperationAttribute(Operation *op,
                                          NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  Attribute value = attribute.getValue();
  auto fail = [&](const Twine &what) {
    return op->emitOpError() << "attribute '" << name << "' " << what;
  };
  // (Function-like: the attributes stay on the LLVM functions.)
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (name == kRanksAttr) {
    auto list = dyn_cast<ArrayAttr>(value);
    if (!func || !list || !llvm::all_of(list, llvm::IsaPred<FlatSymbolRefAttr>))
      return fail("must be a list of symbol references on a function");
    return success();
  }
  if (!func)
    return fail("belongs on a function");
  if (name == kRankAttr || name == kNumRanksAttr) {
    auto integer = dyn_cast<IntegerAttr>(value);
    if (!integer || !integer.getType().isInteger(64))
      return fail("must be an i64 integer");
    int64_t v = integer.getInt();
    if (name == kRankAttr) {
      if (v < 0)
        return fail("must not be negative");
      if (func.isExternal())
        return fail("needs a function with a body (a rank's program)");
      if (auto n = func->getAttrOfType<IntegerAttr>(kNumRanksAttr);
          n && n.getType().isInteger(64) && v >= n.getInt())
        return fail("is " + Twine(v) + " but '" + kNumRanksAttr + "' is " +
                    Twine(n.getInt()));
    } else if (v < 1) {
      return fail("must be at least 1");
    }
    return success();
  }
  if (name == kProgramAttr)
    return isa<StringAttr>(value) ? success() : fail("must be a string");
  if (name == kArgMapAttr || name == kResultMapAttr) {
    auto map = dyn_cast<DenseI64ArrayAttr>(value);
    if (!map || llvm::any_of(map.asArrayRef(), [](int64_t i) { return i < 0; }))
      return fail("must be an array<i64> of indices (not negative)");
    // Counted on func.func only: lowering to LLVM expands memref arguments.
    if (!isa<func::FuncOp>(op))
      return success();
    size_t expected =
        name == kArgMapAttr ? func.getNumArguments() : func.getNumResults();
    if (map.size() != static_cast<int64_t>(expected))
      return fail("has " + Twine(map.size()) + " entries for " +
                  Twine(expected) +
                  (name == kArgMapAttr ? " arguments" : " results"));
    return success();
  }
  return fail("is not a dist_rank attribute (known: rank, num_ranks, "
              "program, arg_map, result_map, ranks)");
}

void DistRankDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "DistIR/Conversion/DistRankOps.cpp.inc"
      >();
}

/// Shape and element type, ignoring any encoding.
static bool sameShapeAndElement(RankedTensorType a, RankedTensorType b) {
  return a.getShape() == b.getShape() &&
         a.getElementType() == b.getElementType();
}

static LogicalResult verifyGroup(Operation *op, ArrayRef<int64_t> group,
                                 std::optional<int64_t> root = std::nullopt) {
  if (group.empty())
    return op->emitOpError("needs a non-empty group");
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t rank : group) {
    if (rank < 0)
      return op->emitOpError() << "group has negative rank " << rank;
    if (!seen.insert(rank).second)
      return op->emitOpError() << "group lists rank " << rank << " twice";
  }
  if (root && !llvm::is_contained(group, *root))
    return op->emitOpError()
           << "root " << *root << " is not a member of the group";
  return success();
}

/// `result` is `input` with dimension `dim` multiplied (`factor` > 0) or
/// divided (`factor` < 0) by `n`.
static LogicalResult verifyScaledDim(Operation *op, RankedTensorType input,
                                     RankedTensorType result, int64_t dim,
                                     int64_t n, bool multiply,
                                     StringRef dimName = "dim") {
  if (dim < 0 || dim >= input.getRank())
    return op->emitOpError()
           << dimName << " " << dim << " is not a dimension of the input type "
           << input;
  if (!multiply && input.getDimSize(dim) % n != 0)
    return op->emitOpError()
           << "dimension " << dim << " of size " << input.getDimSize(dim)
           << " is not divisible by the group size " << n;
  SmallVector<int64_t> shape(input.getShape());
  shape[dim] = multiply ? shape[dim] * n : shape[dim] / n;
  if (result.getShape() != ArrayRef<int64_t>(shape) ||
      result.getElementType() != input.getElementType())
    return op->emitOpError()
           << "result type " << result << " does not match input type " << input
           << " with dimension " << dim
           << (multiply ? " multiplied" : " divided") << " by " << n;
  return success();
}

static LogicalResult verifyKind(Operation *op, dist::ReductionKind kind,
                                Type element) {
  if (kind == dist::ReductionKind::Avg && !isa<FloatType>(element))
    return op->emitOpError("avg needs a floating-point element type");
  if (!isa<FloatType, IntegerType>(element))
    return op->emitOpError() << "cannot reduce element type " << element;
  return success();
}

LogicalResult SendOp::verify() {
  if (static_cast<int64_t>(getDest()) < 0)
    return emitOpError() << "destination rank "
                         << static_cast<int64_t>(getDest()) << " is negative";
  if (static_cast<int64_t>(getTag()) < 0)
    return emitOpError() << "tag " << static_cast<int64_t>(getTag())
                         << " is negative";
  return success();
}

LogicalResult RecvOp::verify() {
  if (static_cast<int64_t>(getSource()) < 0)
    return emitOpError() << "source rank " << static_cast<int64_t>(getSource())
                         << " is negative";
  if (static_cast<int64_t>(getTag()) < 0)
    return emitOpError() << "tag " << static_cast<int64_t>(getTag())
                         << " is negative";
  return success();
}

LogicalResult AllReduceOp::verify() {
  if (failed(verifyGroup(*this, getGroup())))
    return failure();
  if (!sameShapeAndElement(getInput().getType(), getResult().getType()))
    return emitOpError() << "result type " << getResult().getType()
                         << " does not match input type "
                         << getInput().getType();
  return verifyKind(*this, getKind(), getInput().getType().getElementType());
}

LogicalResult AllGatherOp::verify() {
  if (failed(verifyGroup(*this, getGroup())))
    return failure();
  return verifyScaledDim(*this, getInput().getType(), getResult().getType(),
                         getDim(), getGroup().size(), /*multiply=*/true);
}

LogicalResult ReduceScatterOp::verify() {
  if (failed(verifyGroup(*this, getGroup())) ||
      failed(
          verifyKind(*this, getKind(), getInput().getType().getElementType())))
    return failure();
  return verifyScaledDim(*this, getInput().getType(), getResult().getType(),
                         getDim(), getGroup().size(), /*multiply=*/false);
}

LogicalResult AllToAllOp::verify() {
  if (failed(verifyGroup(*this, getGroup())))
    return failure();
  RankedTensorType input = getInput().getType();
  int64_t n = getGroup().size();
  for (auto [name, dim] :
       {std::pair<StringRef, int64_t>{"split_dim", getSplitDim()},
        {"concat_dim", getConcatDim()}})
    if (dim < 0 || dim >= input.getRank())
      return emitOpError() << name << " " << dim
                           << " is not a dimension of the input type " << input;
  if (input.getDimSize(getSplitDim()) % n != 0)
    return emitOpError() << "dimension " << getSplitDim() << " of size "
                         << input.getDimSize(getSplitDim())
                         << " is not divisible by the group size " << n;
  SmallVector<int64_t> shape(input.getShape());
  shape[getSplitDim()] /= n;
  shape[getConcatDim()] *= n;
  RankedTensorType result = getResult().getType();
  if (result.getShape() != ArrayRef<int64_t>(shape) ||
      result.getElementType() != input.getElementType())
    return emitOpError() << "result type " << result
                         << " does not match the all-to-all of input type "
                         << input << " over " << n << " ranks";
  return success();
}

LogicalResult BroadcastOp::verify() {
  if (failed(verifyGroup(*this, getGroup(), getRoot())))
    return failure();
  if (getInput() &&
      !sameShapeAndElement(getInput().getType(), getResult().getType()))
    return emitOpError() << "result type " << getResult().getType()
                         << " does not match input type "
                         << getInput().getType();
  return success();
}

LogicalResult ScatterOp::verify() {
  if (failed(verifyGroup(*this, getGroup(), getRoot())))
    return failure();
  if (!getInput())
    return success();
  return verifyScaledDim(*this, getInput().getType(), getResult().getType(),
                         getDim(), getGroup().size(), /*multiply=*/false);
}

LogicalResult ReduceOp::verify() {
  if (failed(verifyGroup(*this, getGroup(), getRoot())) ||
      failed(
          verifyKind(*this, getKind(), getInput().getType().getElementType())))
    return failure();
  if (getResult() &&
      !sameShapeAndElement(getInput().getType(), getResult().getType()))
    return emitOpError() << "result type " << getResult().getType()
                         << " does not match input type "
                         << getInput().getType();
  return success();
}

LogicalResult GatherOp::verify() {
  if (failed(verifyGroup(*this, getGroup(), getRoot())))
    return failure();
  if (!getResult())
    return success();
  return verifyScaledDim(*this, getInput().getType(), getResult().getType(),
                         getDim(), getGroup().size(), /*multiply=*/true);
}

#define GET_OP_CLASSES
#include "DistIR/Conversion/DistRankOps.cpp.inc"
