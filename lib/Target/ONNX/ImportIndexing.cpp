//===- ImportIndexing.cpp - ONNX ops that compute with positions ----------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Trilu, CumSum, ArgMax/ArgMin, Tile, OneHot and GatherElements. Each is one
// structured op (linalg.generic, plus a reshape for Tile) whose body reads
// the loop positions with linalg.index where the op depends on them, so the
// analyses can cost and partition it like any other linalg op.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include <functional>

using namespace mlir;
using namespace distir;
using namespace distir::onnx_import;

namespace {
using Iter = utils::IteratorType;
} // namespace

/// An index (loop position) as an i64.
static Value indexAsI64(OpBuilder &b, Location loc, int64_t dim) {
  Value i = linalg::IndexOp::create(b, loc, dim);
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), i);
}

/// Integer `v` (of any width and signedness) as an i64.
static Value toI64(OpBuilder &b, Location loc, Value v, bool isUnsigned) {
  auto type = cast<IntegerType>(v.getType());
  if (type.getWidth() == 64)
    return v;
  if (isUnsigned || type.getWidth() == 1)
    return arith::ExtUIOp::create(b, loc, b.getI64Type(), v);
  return arith::ExtSIOp::create(b, loc, b.getI64Type(), v);
}

//===----------------------------------------------------------------------===//
// Trilu
//===----------------------------------------------------------------------===//

LogicalResult Importer::importTrilu() {
  if (!hasInput(0))
    return fail("expects an input");
  RankedTensorType type = inType(0);
  int64_t rank = type.getRank();
  if (rank < 2)
    return fail("input must have rank >= 2, got " + Twine(rank));
  int64_t k = 0;
  if (hasInput(1)) {
    FailureOr<int64_t> kv = knownScalarInt(1, "k");
    if (failed(kv))
      return failure();
    k = *kv;
  }
  bool upper = attrInt("upper", 1) != 0;
  // Element (.., i, j) is kept when j - i >= k (upper) or <= k (lower).
  auto keep = [&](int64_t i, int64_t j) {
    // In 128 bits: k may be any int64.
    __int128 diff = static_cast<__int128>(j) - i;
    return upper ? diff >= k : diff <= k;
  };
  Type elt = type.getElementType();
  ArrayRef<int64_t> shape = type.getShape();
  if (canFold(numElements(shape))) {
    // Causal masks are Trilu of a constant: fold them.
    SmallVector<Attribute> src(in(0).constant.getValues<Attribute>());
    Attribute zero = builder.getZeroAttr(elt);
    int64_t rows = shape[rank - 2], cols = shape[rank - 1];
    for (int64_t lin = 0; lin < static_cast<int64_t>(src.size()); ++lin)
      if (!keep((lin / cols) % rows, lin % cols))
        src[lin] = zero;
    setKnown(0, DenseElementsAttr::get(unplaced(shape, elt), src));
    return success();
  }
  Value init = empty(shape, elt);
  SmallVector<AffineMap> maps(2, builder.getMultiDimIdentityMap(rank));
  SmallVector<Iter> iters(rank, Iter::parallel);
  // k beyond the matrix keeps everything or nothing; clamped so that the
  // comparison below stays in range.
  int64_t bound = shape[rank - 2] + shape[rank - 1];
  int64_t kc = std::clamp<int64_t>(k, -bound, bound);
  Value r =
      linalg::GenericOp::create(
          builder, curLoc, TypeRange{init.getType()}, ValueRange{inValue(0)},
          ValueRange{init}, maps, iters,
          [&](OpBuilder &b, Location loc, ValueRange args) {
            Value i = linalg::IndexOp::create(b, loc, rank - 2);
            Value j = linalg::IndexOp::create(b, loc, rank - 1);
            Value diff = arith::SubIOp::create(b, loc, j, i);
            Value kv = arith::ConstantIndexOp::create(b, loc, kc);
            Value cond = arith::CmpIOp::create(
                b, loc,
                upper ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sle,
                diff, kv);
            Value zero = arith::ConstantOp::create(
                b, loc, cast<TypedAttr>(b.getZeroAttr(elt)));
            linalg::YieldOp::create(
                b, loc,
                Value(arith::SelectOp::create(b, loc, cond, args[0], zero)));
          })
          .getResult(0);
  setOutput(0, r);
  return success();
}

//===----------------------------------------------------------------------===//
// CumSum
//===----------------------------------------------------------------------===//

/// out[.., i, ..] = sum over j of x[.., j, ..] where j <= i (j < i when
/// exclusive; j >= i, j > i when reverse): a reduction over a second loop
/// along the axis, masked by the loop positions (quadratic in the axis
/// length, which is a sequence length in the models that use it).
LogicalResult Importer::importCumSum() {
  if (!hasInput(0) || !hasInput(1))
    return fail("expects x and axis");
  RankedTensorType type = inType(0);
  Type elt = type.getElementType();
  if (elt.isInteger(1))
    return fail("bool operands are not supported");
  int64_t rank = type.getRank();
  if (rank == 0)
    return fail("x must have rank >= 1");
  FailureOr<int64_t> axisV = knownScalarInt(1, "axis");
  if (failed(axisV))
    return failure();
  FailureOr<int64_t> axis = normAxis(*axisV, rank);
  if (failed(axis))
    return failure();
  bool exclusive = attrInt("exclusive", 0) != 0;
  bool reverse = attrInt("reverse", 0) != 0;
  ArrayRef<int64_t> shape = type.getShape();
  bool isFloat = isa<FloatType>(elt);

  // Loops: the result's dims, then j (the summed position along the axis).
  SmallVector<AffineExpr> inExprs, outExprs;
  for (int64_t d = 0; d < rank; ++d) {
    outExprs.push_back(builder.getAffineDimExpr(d));
    inExprs.push_back(builder.getAffineDimExpr(d == *axis ? rank : d));
  }
  SmallVector<AffineMap> maps = {AffineMap::get(rank + 1, 0, inExprs, ctx),
                                 AffineMap::get(rank + 1, 0, outExprs, ctx)};
  SmallVector<Iter> iters(rank, Iter::parallel);
  iters.push_back(Iter::reduction);
  arith::CmpIPredicate pred =
      reverse
          ? (exclusive ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::sge)
          : (exclusive ? arith::CmpIPredicate::slt : arith::CmpIPredicate::sle);
  Value init = filled(shape, elt, 0);
  Value r =
      linalg::GenericOp::create(
          builder, curLoc, TypeRange{init.getType()}, ValueRange{inValue(0)},
          ValueRange{init}, maps, iters,
          [&](OpBuilder &b, Location loc, ValueRange args) {
            Value i = linalg::IndexOp::create(b, loc, *axis);
            Value j = linalg::IndexOp::create(b, loc, rank);
            Value cond = arith::CmpIOp::create(b, loc, pred, j, i);
            Value zero = arith::ConstantOp::create(
                b, loc, cast<TypedAttr>(b.getZeroAttr(elt)));
            Value v = arith::SelectOp::create(b, loc, cond, args[0], zero);
            Value sum = isFloat
                            ? Value(arith::AddFOp::create(b, loc, args[1], v))
                            : Value(arith::AddIOp::create(b, loc, args[1], v));
            linalg::YieldOp::create(b, loc, sum);
          })
          .getResult(0);
  setOutput(0, r);
  return success();
}

//===----------------------------------------------------------------------===//
// ArgMax / ArgMin
//===----------------------------------------------------------------------===//

/// The extreme along the axis (a reduction), then the first (or, with
/// select_last_index, the last) position holding it: a second reduction
/// with min (max) over the positions. A NaN is the maximum and minimum, as
/// in numpy: its first position is the answer.
LogicalResult Importer::importArgExtreme(bool isMax) {
  if (!hasInput(0))
    return fail("expects an input");
  RankedTensorType type = inType(0);
  Type elt = type.getElementType();
  if (elt.isInteger(1))
    return fail("bool operands are not supported");
  int64_t rank = type.getRank();
  if (rank == 0)
    return fail("input must have rank >= 1");
  FailureOr<int64_t> axis = normAxis(attrInt("axis", 0), rank);
  if (failed(axis))
    return failure();
  bool keepDims = attrInt("keepdims", 1) != 0;
  bool last = attrInt("select_last_index", 0) != 0;
  bool isUnsigned = in(0).isUnsigned;
  bool isFloat = isa<FloatType>(elt);
  if (type.getDimSize(*axis) == 0)
    return fail("the reduced axis is empty");
  Value x = inValue(0);
  Value extreme = reduce(x, {*axis}, isMax ? ReduceKind::Max : ReduceKind::Min,
                         /*keepDims=*/false, isUnsigned);

  SmallVector<int64_t> reducedShape;
  SmallVector<AffineExpr> reducedExprs;
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis) {
      reducedShape.push_back(type.getDimSize(d));
      reducedExprs.push_back(builder.getAffineDimExpr(d));
    }
  AffineMap reducedMap = AffineMap::get(rank, 0, reducedExprs, ctx);
  SmallVector<AffineMap> maps = {builder.getMultiDimIdentityMap(rank),
                                 reducedMap, reducedMap};
  SmallVector<Iter> iters(rank, Iter::parallel);
  iters[*axis] = Iter::reduction;
  Type i64 = builder.getI64Type();
  Value init =
      filled(reducedShape, i64,
             last ? -1.0 : static_cast<double>(type.getDimSize(*axis)));
  Value r =
      linalg::GenericOp::create(
          builder, curLoc, TypeRange{init.getType()}, ValueRange{x, extreme},
          ValueRange{init}, maps, iters,
          [&](OpBuilder &b, Location loc, ValueRange args) {
            Value hit;
            if (isFloat) {
              Value eq = arith::CmpFOp::create(
                  b, loc, arith::CmpFPredicate::OEQ, args[0], args[1]);
              Value nan = arith::CmpFOp::create(
                  b, loc, arith::CmpFPredicate::UNO, args[0], args[0]);
              hit = arith::OrIOp::create(b, loc, eq, nan);
            } else {
              hit = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          args[0], args[1]);
            }
            Value j = indexAsI64(b, loc, *axis);
            Value best =
                last ? Value(arith::MaxSIOp::create(b, loc, args[2], j))
                     : Value(arith::MinSIOp::create(b, loc, args[2], j));
            linalg::YieldOp::create(
                b, loc,
                Value(arith::SelectOp::create(b, loc, hit, best, args[2])));
          })
          .getResult(0);
  if (keepDims) {
    SmallVector<int64_t> kept(type.getShape());
    kept[*axis] = 1;
    r = reshape(r, kept);
  }
  setOutput(0, r, /*isUnsigned=*/false);
  return success();
}

//===----------------------------------------------------------------------===//
// Tile
//===----------------------------------------------------------------------===//

/// Tile = broadcast to [r0, d0, r1, d1, ...] (a dim r before every dim that
/// repeats), then collapse each (r, d) pair: copy k of the input along a dim
/// is block k of the result.
LogicalResult Importer::importTile() {
  if (!hasInput(0) || !hasInput(1))
    return fail("expects input and repeats");
  RankedTensorType type = inType(0);
  int64_t rank = type.getRank();
  FailureOr<SmallVector<int64_t>> repeats = knownInts(1, "repeats");
  if (failed(repeats))
    return failure();
  if (static_cast<int64_t>(repeats->size()) != rank)
    return fail("repeats has " + Twine(repeats->size()) +
                (repeats->size() == 1 ? " entry" : " entries") +
                " for an input of rank " + Twine(rank));
  SmallVector<int64_t> wide, outShape;
  SmallVector<AffineExpr> inExprs;
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t r = (*repeats)[d], size = type.getDimSize(d), total;
    if (r < 0)
      return fail("repeats must not be negative, got " + Twine(r));
    if (llvm::MulOverflow(r, size, total) || total > kMaxRangeElements)
      return fail("dim " + Twine(d) + " of the result (" + Twine(size) + " x " +
                  Twine(r) + ") is too large");
    outShape.push_back(total);
    ReassociationIndices group;
    if (r != 1) {
      group.push_back(wide.size());
      wide.push_back(r);
    }
    group.push_back(wide.size());
    inExprs.push_back(builder.getAffineDimExpr(wide.size()));
    wide.push_back(size);
    groups.push_back(group);
  }
  if (numElements(outShape) > kMaxRangeElements)
    return fail("the result has more than " + Twine(kMaxRangeElements) +
                " elements");
  Type elt = type.getElementType();
  if (canFold(numElements(outShape))) {
    SmallVector<Attribute> src(in(0).constant.getValues<Attribute>());
    SmallVector<int64_t> inStrides = stridesOf(type.getShape());
    SmallVector<int64_t> outStrides = stridesOf(outShape);
    SmallVector<Attribute> out(numElements(outShape));
    for (int64_t lin = 0; lin < static_cast<int64_t>(out.size()); ++lin) {
      int64_t s = 0;
      for (int64_t d = 0; d < rank; ++d)
        s += ((lin / outStrides[d]) % outShape[d] % type.getDimSize(d)) *
             inStrides[d];
      out[lin] = src[s];
    }
    setKnown(0, DenseElementsAttr::get(unplaced(outShape, elt), out));
    return success();
  }
  int64_t loops = wide.size();
  SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, inExprs, ctx),
                                 builder.getMultiDimIdentityMap(loops)};
  SmallVector<Iter> iters(loops, Iter::parallel);
  Value init = empty(wide, elt);
  Value r = linalg::GenericOp::create(
                builder, curLoc, TypeRange{init.getType()},
                ValueRange{inValue(0)}, ValueRange{init}, maps, iters,
                [](OpBuilder &b, Location loc, ValueRange args) {
                  linalg::YieldOp::create(b, loc, args[0]);
                })
                .getResult(0);
  if (loops != rank)
    r = tensor::CollapseShapeOp::create(builder, curLoc, placed(outShape, elt),
                                        r, groups);
  setOutput(0, r);
  return success();
}

//===----------------------------------------------------------------------===//
// OneHot
//===----------------------------------------------------------------------===//

LogicalResult Importer::importOneHot() {
  if (!hasInput(0) || !hasInput(1) || !hasInput(2))
    return fail("expects indices, depth and values");
  RankedTensorType idxType = inType(0);
  Type idxElt = idxType.getElementType();
  if (idxElt.isInteger(1))
    return fail("indices must be numeric, not bool");
  if (!isKnown(1))
    return fail("unresolvable dynamic shape: depth ('" + curNode->input(1) +
                "') is not known at import time");
  if (numElements(inShape(1)) != 1)
    return fail("depth must be a scalar");
  double depthF = isa<FloatType>(inElt(1))
                      ? knownFloatsOf(1)[0]
                      : static_cast<double>(knownIntsOf(1)[0]);
  if (!(depthF >= 1) || depthF > static_cast<double>(kMaxRangeElements))
    return fail("depth must be at least 1 and at most " +
                Twine(kMaxRangeElements));
  int64_t depth = static_cast<int64_t>(depthF);
  if (inType(2).getRank() != 1 || inShape(2)[0] != 2)
    return fail("values must be a 2-element tensor [off, on], got shape " +
                shapeStr(inShape(2)));
  int64_t rank = idxType.getRank() + 1;
  FailureOr<int64_t> axis = normAxis(attrInt("axis", -1), rank);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(idxType.getShape());
  shape.insert(shape.begin() + *axis, depth);
  if (numElements(shape) > kMaxRangeElements)
    return fail("the result has more than " + Twine(kMaxRangeElements) +
                " elements");
  Type elt = inElt(2);
  // Known values are constants in the body; others are read from the
  // tensor (captured, like a Gather's table).
  SmallVector<Attribute> values;
  if (isKnown(2))
    values.assign(in(2).constant.getValues<Attribute>().begin(),
                  in(2).constant.getValues<Attribute>().end());
  Value valuesV = isKnown(2) ? Value() : inValue(2);
  bool idxUnsigned = in(0).isUnsigned;
  SmallVector<AffineExpr> idxExprs;
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis)
      idxExprs.push_back(builder.getAffineDimExpr(d));
  SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, idxExprs, ctx),
                                 builder.getMultiDimIdentityMap(rank)};
  SmallVector<Iter> iters(rank, Iter::parallel);
  Value init = empty(shape, elt);
  Value r =
      linalg::GenericOp::create(
          builder, curLoc, TypeRange{init.getType()}, ValueRange{inValue(0)},
          ValueRange{init}, maps, iters,
          [&](OpBuilder &b, Location loc, ValueRange args) {
            Type i64 = b.getI64Type();
            // Float indices are truncated toward zero; negative ones count
            // from the end (index + depth).
            Value i = isa<FloatType>(idxElt)
                          ? Value(arith::FPToSIOp::create(b, loc, i64, args[0]))
                          : toI64(b, loc, args[0], idxUnsigned);
            Value d =
                arith::ConstantOp::create(b, loc, b.getIntegerAttr(i64, depth));
            Value zero =
                arith::ConstantOp::create(b, loc, b.getIntegerAttr(i64, 0));
            Value neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                              i, zero);
            i = arith::SelectOp::create(b, loc, neg,
                                        arith::AddIOp::create(b, loc, i, d), i);
            Value hit = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              i, indexAsI64(b, loc, *axis));
            auto value = [&](int64_t k) -> Value {
              if (!valuesV)
                return arith::ConstantOp::create(b, loc,
                                                 cast<TypedAttr>(values[k]));
              return tensor::ExtractOp::create(
                  b, loc, valuesV,
                  ValueRange{arith::ConstantIndexOp::create(b, loc, k)});
            };
            Value off = value(0), on = value(1);
            linalg::YieldOp::create(
                b, loc, Value(arith::SelectOp::create(b, loc, hit, on, off)));
          })
          .getResult(0);
  setOutput(0, r, in(2).isUnsigned);
  return success();
}

//===----------------------------------------------------------------------===//
// GatherElements
//===----------------------------------------------------------------------===//

/// out[p] = data[p with p[axis] replaced by indices[p]]: a linalg.generic
/// over the indices whose body extracts from `data` (like Gather).
LogicalResult Importer::importGatherElements() {
  if (!hasInput(0) || !hasInput(1))
    return fail("expects data and indices");
  RankedTensorType data = inType(0), idxType = inType(1);
  if (!isa<IntegerType>(idxType.getElementType()) ||
      idxType.getElementType().isInteger(1))
    return fail("indices must be an integer tensor");
  int64_t rank = data.getRank();
  if (rank == 0 || idxType.getRank() != rank)
    return fail("data and indices must have the same rank >= 1");
  FailureOr<int64_t> axis = normAxis(attrInt("axis", 0), rank);
  if (failed(axis))
    return failure();
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && idxType.getDimSize(d) > data.getDimSize(d))
      return fail("indices dim " + Twine(d) + " (" +
                  Twine(idxType.getDimSize(d)) + ") exceeds the data's (" +
                  Twine(data.getDimSize(d)) + ")");
  int64_t dim = data.getDimSize(*axis);
  bool idxUnsigned = in(1).isUnsigned;
  if (failed(checkKnownIndices(1, [&](size_t) { return dim; })))
    return failure();
  Value dataV = inValue(0);
  SmallVector<AffineMap> maps(2, builder.getMultiDimIdentityMap(rank));
  SmallVector<Iter> iters(rank, Iter::parallel);
  Value init = empty(idxType.getShape(), data.getElementType());
  Value r =
      linalg::GenericOp::create(
          builder, curLoc, TypeRange{init.getType()}, ValueRange{inValue(1)},
          ValueRange{init}, maps, iters,
          [&](OpBuilder &b, Location loc, ValueRange args) {
            Value i = wrapIndex(b, loc, args[0], dim, idxUnsigned);
            SmallVector<Value> coords;
            for (int64_t d = 0; d < rank; ++d)
              coords.push_back(
                  d == *axis ? i : Value(linalg::IndexOp::create(b, loc, d)));
            linalg::YieldOp::create(
                b, loc,
                Value(tensor::ExtractOp::create(b, loc, dataV, coords)));
          })
          .getResult(0);
  setOutput(0, r);
  return success();
}

//===----------------------------------------------------------------------===//
// TopK
//===----------------------------------------------------------------------===//

/// TopK by ranks: rank[i] = how many elements along the axis come before
/// element i in the order (larger first, or smaller first; ties by
/// position), a reduction over a second loop; then slot j of the result
/// takes the element of rank j (a second reduction). Structured and exact
/// (sorted), quadratic in the axis length (a router's experts, a beam).
LogicalResult Importer::importTopK() {
  if (!hasInput(0) || !hasInput(1))
    return fail("expects X and K");
  RankedTensorType type = inType(0);
  Type elt = type.getElementType();
  if (elt.isInteger(1))
    return fail("bool operands are not supported");
  int64_t rank = type.getRank();
  if (rank == 0)
    return fail("X must have rank >= 1");
  FailureOr<int64_t> axis = normAxis(attrInt("axis", -1), rank);
  if (failed(axis))
    return failure();
  FailureOr<int64_t> kv = knownScalarInt(1, "K");
  if (failed(kv))
    return failure();
  int64_t k = *kv, n = type.getDimSize(*axis);
  if (k < 0 || k > n)
    return fail("K " + Twine(k) + " is out of range [0, " + Twine(n) + "]");
  bool largest = attrInt("largest", 1) != 0;
  bool isFloat = isa<FloatType>(elt), isUnsigned = in(0).isUnsigned;
  Type i64 = builder.getI64Type();
  ArrayRef<int64_t> shape = type.getShape();
  Value x = inValue(0);
  auto before = [&](OpBuilder &b, Location loc, Value other, Value self) {
    // `other` comes first when it is strictly larger (smaller).
    if (isFloat)
      return Value(arith::CmpFOp::create(b, loc,
                                         largest ? arith::CmpFPredicate::OGT
                                                 : arith::CmpFPredicate::OLT,
                                         other, self));
    arith::CmpIPredicate p = largest ? (isUnsigned ? arith::CmpIPredicate::ugt
                                                   : arith::CmpIPredicate::sgt)
                                     : (isUnsigned ? arith::CmpIPredicate::ult
                                                   : arith::CmpIPredicate::slt);
    return Value(arith::CmpIOp::create(b, loc, p, other, self));
  };
  auto equal = [&](OpBuilder &b, Location loc, Value a, Value c) {
    return isFloat
               ? Value(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                             a, c))
               : Value(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             a, c));
  };
  // Loops: x's dims, then the other position along the axis.
  SmallVector<AffineExpr> self, other;
  for (int64_t d = 0; d < rank; ++d) {
    self.push_back(builder.getAffineDimExpr(d));
    other.push_back(builder.getAffineDimExpr(d == *axis ? rank : d));
  }
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  iters.push_back(utils::IteratorType::reduction);
  SmallVector<AffineMap> rankMaps = {AffineMap::get(rank + 1, 0, self, ctx),
                                     AffineMap::get(rank + 1, 0, other, ctx),
                                     AffineMap::get(rank + 1, 0, self, ctx)};
  Value rankInit = filled(shape, i64, 0);
  Value ranks =
      linalg::GenericOp::create(
          builder, curLoc, TypeRange{rankInit.getType()}, ValueRange{x, x},
          ValueRange{rankInit}, rankMaps, iters,
          [&](OpBuilder &b, Location loc, ValueRange args) {
            Value i = linalg::IndexOp::create(b, loc, *axis);
            Value j = linalg::IndexOp::create(b, loc, rank);
            Value earlier =
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, j, i);
            Value tieFirst = arith::AndIOp::create(
                b, loc, equal(b, loc, args[1], args[0]), earlier);
            Value counts = arith::OrIOp::create(
                b, loc, before(b, loc, args[1], args[0]), tieFirst);
            Value one = arith::ExtUIOp::create(b, loc, i64, counts);
            linalg::YieldOp::create(
                b, loc, Value(arith::AddIOp::create(b, loc, args[2], one)));
          })
          .getResult(0);
  // Slot s takes the element of rank s: loops are the result's dims, then
  // the position along the axis.
  SmallVector<int64_t> outShape(shape);
  outShape[*axis] = k;
  SmallVector<AffineMap> pickMaps = {AffineMap::get(rank + 1, 0, other, ctx),
                                     AffineMap::get(rank + 1, 0, other, ctx),
                                     AffineMap::get(rank + 1, 0, self, ctx),
                                     AffineMap::get(rank + 1, 0, self, ctx)};
  Value valuesInit = filled(outShape, elt, 0);
  Value indicesInit = filled(outShape, i64, 0);
  auto pick = linalg::GenericOp::create(
      builder, curLoc, TypeRange{valuesInit.getType(), indicesInit.getType()},
      ValueRange{x, ranks}, ValueRange{valuesInit, indicesInit}, pickMaps,
      iters, [&](OpBuilder &b, Location loc, ValueRange args) {
        Value slot = arith::IndexCastOp::create(
            b, loc, i64, linalg::IndexOp::create(b, loc, *axis));
        Value hit = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          args[1], slot);
        Value pos = arith::IndexCastOp::create(
            b, loc, i64, linalg::IndexOp::create(b, loc, rank));
        Value v = arith::SelectOp::create(b, loc, hit, args[0], args[2]);
        Value idx = arith::SelectOp::create(b, loc, hit, pos, args[3]);
        linalg::YieldOp::create(b, loc, ValueRange{v, idx});
      });
  setOutput(0, pick.getResult(0));
  setOutput(1, pick.getResult(1), /*isUnsigned=*/false);
  return success();
}

//===----------------------------------------------------------------------===//
// ScatterElements and ScatterND
//===----------------------------------------------------------------------===//

/// Combines the value so far with an update under ONNX's `reduction`
/// (none: the update replaces it; updates apply in index order, so the last
/// one to a position wins, as in ONNX's reference).
static Value combineScatter(OpBuilder &b, Location loc, StringRef reduction,
                            Value acc, Value update, bool isFloat,
                            bool isUnsigned) {
  if (reduction == "add")
    return isFloat ? Value(arith::AddFOp::create(b, loc, acc, update))
                   : Value(arith::AddIOp::create(b, loc, acc, update));
  if (reduction == "mul")
    return isFloat ? Value(arith::MulFOp::create(b, loc, acc, update))
                   : Value(arith::MulIOp::create(b, loc, acc, update));
  if (reduction == "max")
    return isFloat      ? Value(arith::MaximumFOp::create(b, loc, acc, update))
           : isUnsigned ? Value(arith::MaxUIOp::create(b, loc, acc, update))
                        : Value(arith::MaxSIOp::create(b, loc, acc, update));
  if (reduction == "min")
    return isFloat      ? Value(arith::MinimumFOp::create(b, loc, acc, update))
           : isUnsigned ? Value(arith::MinUIOp::create(b, loc, acc, update))
                        : Value(arith::MinSIOp::create(b, loc, acc, update));
  return update;
}

/// out[p] = data[p] combined with every update whose index names p: one
/// linalg.generic over the data's positions (parallel) and the updates'
/// positions (reduction), the data as its init. Exact and structured;
/// data size x update count comparisons (a KV-cache write, a sparse
/// gradient: few updates).
LogicalResult Importer::importScatter(bool nd) {
  if (!hasInput(0) || !hasInput(1) || !hasInput(2))
    return fail("expects data, indices and updates");
  RankedTensorType data = inType(0), idxType = inType(1), upd = inType(2);
  Type elt = data.getElementType();
  if (!isa<IntegerType>(idxType.getElementType()) ||
      idxType.getElementType().isInteger(1))
    return fail("indices must be an integer tensor");
  if (upd.getElementType() != elt)
    return fail("updates must have the data's element type");
  std::string reduction = attrString("reduction", "none");
  if (!llvm::is_contained({"none", "add", "mul", "max", "min"},
                          StringRef(reduction)))
    return fail("unknown reduction '" + reduction + "'");
  if (elt.isInteger(1) && reduction != "none")
    return fail("reduction '" + reduction + "' on bool data");
  int64_t rank = data.getRank();
  if (rank == 0)
    return fail("data must have rank >= 1");
  bool isFloat = isa<FloatType>(elt), isUnsigned = in(0).isUnsigned;
  bool idxUnsigned = in(1).isUnsigned;
  Value idxV = inValue(1);
  SmallVector<AffineMap> maps;
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  int64_t loops;
  std::function<Value(OpBuilder &, Location, ValueRange)> hitOf;
  if (!nd) {
    FailureOr<int64_t> axis = normAxis(attrInt("axis", 0), rank);
    if (failed(axis))
      return failure();
    if (idxType.getShape() != upd.getShape() || idxType.getRank() != rank)
      return fail("indices and updates must have the data's rank and one "
                  "shape");
    for (int64_t d = 0; d < rank; ++d)
      if (d != *axis && upd.getDimSize(d) != data.getDimSize(d))
        return fail("updates must cover the data's dim " + Twine(d) + " (" +
                    Twine(data.getDimSize(d)) + "), got " +
                    Twine(upd.getDimSize(d)));
    int64_t dim = data.getDimSize(*axis);
    if (failed(checkKnownIndices(1, [&](size_t) { return dim; })))
      return failure();
    // Loops: the data's dims, then the updates' position along the axis.
    loops = rank + 1;
    SmallVector<AffineExpr> other;
    for (int64_t d = 0; d < rank; ++d)
      other.push_back(builder.getAffineDimExpr(d == *axis ? rank : d));
    AffineMap otherMap = AffineMap::get(loops, 0, other, ctx);
    maps = {otherMap, otherMap};
    iters.push_back(utils::IteratorType::reduction);
    int64_t a = *axis;
    hitOf = [=](OpBuilder &b, Location loc, ValueRange args) -> Value {
      Value i = wrapIndex(b, loc, args[0], dim, idxUnsigned);
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, i,
                                   linalg::IndexOp::create(b, loc, a));
    };
  } else {
    int64_t q = idxType.getRank();
    int64_t k = q ? idxType.getDimSize(q - 1) : 0;
    if (q < 1 || k < 1 || k > rank)
      return fail("indices must have rank >= 1 and a last dim in [1, " +
                  Twine(rank) + "]");
    SmallVector<int64_t> want(idxType.getShape().drop_back());
    llvm::append_range(want, data.getShape().drop_front(k));
    if (upd.getShape() != ArrayRef<int64_t>(want))
      return fail("updates must have shape " + shapeStr(want) + ", got " +
                  shapeStr(upd.getShape()));
    if (failed(checkKnownIndices(
            1, [&](size_t n) { return data.getDimSize(n % k); })))
      return failure();
    // Loops: the data's dims, then the index tuples' positions.
    int64_t u = q - 1;
    loops = rank + u;
    SmallVector<AffineExpr> updExprs;
    for (int64_t d = 0; d < u; ++d)
      updExprs.push_back(builder.getAffineDimExpr(rank + d));
    for (int64_t d = k; d < rank; ++d)
      updExprs.push_back(builder.getAffineDimExpr(d));
    maps = {AffineMap::get(loops, 0, updExprs, ctx)};
    iters.append(u, utils::IteratorType::reduction);
    SmallVector<int64_t> sizes(data.getShape());
    hitOf = [=](OpBuilder &b, Location loc, ValueRange) -> Value {
      // The tuple at this position names the data position's first k dims.
      Value all = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
      for (int64_t c = 0; c < k; ++c) {
        SmallVector<Value> coords;
        for (int64_t d = 0; d < u; ++d)
          coords.push_back(linalg::IndexOp::create(b, loc, rank + d));
        coords.push_back(arith::ConstantIndexOp::create(b, loc, c));
        Value raw = tensor::ExtractOp::create(b, loc, idxV, coords);
        Value i = wrapIndex(b, loc, raw, sizes[c], idxUnsigned);
        Value eq = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, i,
                                         linalg::IndexOp::create(b, loc, c));
        all = arith::AndIOp::create(b, loc, all, eq);
      }
      return all;
    };
  }
  maps.push_back(AffineMap::get(
      loops, 0,
      llvm::to_vector(llvm::map_range(llvm::seq<int64_t>(0, rank),
                                      [&](int64_t d) -> AffineExpr {
                                        return builder.getAffineDimExpr(d);
                                      })),
      ctx));
  SmallVector<Value> ins;
  if (!nd)
    ins.push_back(idxV);
  ins.push_back(inValue(2));
  Value r =
      linalg::GenericOp::create(
          builder, curLoc, TypeRange{inValue(0).getType()}, ins,
          ValueRange{inValue(0)}, maps, iters,
          [&](OpBuilder &b, Location loc, ValueRange args) {
            Value update = args[args.size() - 2], acc = args.back();
            Value hit = hitOf(b, loc, args);
            Value combined = combineScatter(b, loc, reduction, acc, update,
                                            isFloat, isUnsigned);
            linalg::YieldOp::create(
                b, loc,
                Value(arith::SelectOp::create(b, loc, hit, combined, acc)));
          })
          .getResult(0);
  setOutput(0, r);
  return success();
}

//===----------------------------------------------------------------------===//
// NonZero
//===----------------------------------------------------------------------===//

/// NonZero's result shape is the count of non-zero elements: a static
/// program has it only when the input is known at import time, where the
/// indices are computed (a mask built from constants); a runtime input is
/// refused with that reason.
LogicalResult Importer::importNonZero() {
  if (!hasInput(0))
    return fail("expects an input");
  RankedTensorType type = inType(0);
  int64_t rank = type.getRank();
  if (rank == 0)
    return fail("input must have rank >= 1");
  if (!isKnown(0))
    return fail("unresolvable dynamic shape: the input ('" + curNode->input(0) +
                "') is not known at import time (the result's size is its "
                "number of non-zero elements)");
  if (numElements(type.getShape()) > kMaxFoldElements)
    return fail("input has more than " + Twine(kMaxFoldElements) + " elements");
  SmallVector<double> values = isa<FloatType>(type.getElementType())
                                   ? knownFloatsOf(0)
                                   : SmallVector<double>();
  SmallVector<int64_t> ints = isa<FloatType>(type.getElementType())
                                  ? SmallVector<int64_t>()
                                  : knownIntsOf(0);
  SmallVector<int64_t> strides = stridesOf(type.getShape());
  std::vector<SmallVector<int64_t>> rows(rank);
  int64_t n = numElements(type.getShape());
  for (int64_t lin = 0; lin < n; ++lin) {
    bool nonZero = values.empty() ? ints[lin] != 0 : values[lin] != 0;
    if (!nonZero)
      continue;
    for (int64_t d = 0; d < rank; ++d)
      rows[d].push_back((lin / strides[d]) % type.getDimSize(d));
  }
  int64_t count = rows[0].size();
  SmallVector<int64_t> flat;
  for (const SmallVector<int64_t> &row : rows)
    llvm::append_range(flat, row);
  setKnown(0, intsAttr({rank, count}, builder.getI64Type(), flat),
           /*isUnsigned=*/false);
  return success();
}
