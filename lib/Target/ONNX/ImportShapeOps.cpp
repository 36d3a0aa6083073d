//===- ImportShapeOps.cpp - ONNX shape and data-movement ops --------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Reshape-like ops, Transpose, Split, Slice, Concat, Gather, Expand,
// Constant, Shape, Range and Cast: evaluated on known values (shape
// subgraphs) or emitted as tensor/linalg ops.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

using namespace mlir;
using namespace distir;
using namespace distir::onnx_import;

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

LogicalResult Importer::importReshapeLike(StringRef op) {
  if (!hasInput(0))
    return fail("expects an input");
  RankedTensorType type = inType(0);
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rank = type.getRank();
  SmallVector<int64_t> newShape;
  if (op == "Reshape") {
    FailureOr<SmallVector<int64_t>> target = knownInts(1, "shape operand");
    if (failed(target))
      return failure();
    bool allowZero = attrInt("allowzero", 0) != 0;
    int64_t inferred = -1, known = 1;
    for (auto [i, d] : llvm::enumerate(*target)) {
      if (d == 0 && !allowZero) {
        if (static_cast<int64_t>(i) >= rank)
          return fail("shape operand copies dimension " + Twine(i) +
                      " of a rank-" + Twine(rank) + " input");
        d = shape[i];
      }
      if (d == -1) {
        if (inferred >= 0)
          return fail("shape operand has more than one -1");
        inferred = i;
        newShape.push_back(1);
        continue;
      }
      if (d < 0)
        return fail("invalid dimension " + Twine(d) + " in shape operand");
      newShape.push_back(d);
      known *= d;
    }
    int64_t total = numElements(shape);
    if (inferred >= 0) {
      if (known == 0 || total % known != 0)
        return fail("cannot reshape " + shapeStr(shape) + " to " +
                    shapeStr(*target));
      newShape[inferred] = total / known;
    }
    if (numElements(newShape) != total)
      return fail("cannot reshape " + shapeStr(shape) + " to " +
                  shapeStr(newShape));
  } else if (op == "Flatten") {
    int64_t axis = attrInt("axis", 1);
    if (axis < -rank || axis > rank)
      return fail("axis " + Twine(axis) + " out of range for rank " +
                  Twine(rank));
    if (axis < 0)
      axis += rank;
    newShape = {numElements(shape.take_front(axis)),
                numElements(shape.drop_front(axis))};
  } else if (op == "Squeeze") {
    FailureOr<std::optional<SmallVector<int64_t>>> axes = axesOperand(13);
    if (failed(axes))
      return failure();
    SmallVector<int64_t> drop;
    if (*axes) {
      for (int64_t a : **axes) {
        FailureOr<int64_t> n = normAxis(a, rank);
        if (failed(n))
          return failure();
        if (shape[*n] != 1)
          return fail("cannot squeeze dimension " + Twine(*n) + " of size " +
                      Twine(shape[*n]));
        drop.push_back(*n);
      }
    }
    for (int64_t d = 0; d < rank; ++d)
      if (*axes ? !llvm::is_contained(drop, d) : shape[d] != 1)
        newShape.push_back(shape[d]);
  } else { // Unsqueeze
    FailureOr<std::optional<SmallVector<int64_t>>> axes = axesOperand(13);
    if (failed(axes))
      return failure();
    if (!*axes)
      return fail("missing axes");
    int64_t outRank = rank + (*axes)->size();
    SmallVector<int64_t> ins;
    for (int64_t a : **axes) {
      FailureOr<int64_t> n = normAxis(a, outRank);
      if (failed(n))
        return failure();
      if (llvm::is_contained(ins, *n))
        return fail("repeated axis " + Twine(*n));
      ins.push_back(*n);
    }
    unsigned src = 0;
    for (int64_t d = 0; d < outRank; ++d)
      newShape.push_back(llvm::is_contained(ins, d) ? 1 : shape[src++]);
  }
  if (isKnown(0)) {
    setKnown(0,
             in(0).constant.reshape(unplaced(newShape, type.getElementType())));
    return success();
  }
  setOutput(0, reshape(inValue(0), newShape));
  return success();
}

LogicalResult Importer::importTranspose() {
  if (!hasInput(0))
    return fail("expects an input");
  RankedTensorType type = inType(0);
  int64_t rank = type.getRank();
  SmallVector<int64_t> perm;
  if (auto p = attrInts("perm")) {
    perm = *p;
  } else {
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  }
  SmallVector<int64_t> sorted(perm);
  llvm::sort(sorted);
  for (int64_t d = 0; d < rank; ++d)
    if (static_cast<int64_t>(sorted.size()) != rank || sorted[d] != d)
      return fail("invalid permutation " + shapeStr(perm));
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  if (forwardSplat(0, shape))
    return success();
  if (canFold(numElements(shape))) {
    SmallVector<Attribute> src(in(0).constant.getValues<Attribute>());
    SmallVector<int64_t> inStrides = stridesOf(type.getShape());
    SmallVector<int64_t> outStrides = stridesOf(shape);
    SmallVector<Attribute> out(src.size());
    for (int64_t lin = 0; lin < static_cast<int64_t>(out.size()); ++lin) {
      int64_t s = 0;
      for (int64_t d = 0; d < rank; ++d)
        s += ((lin / outStrides[d]) % shape[d]) * inStrides[perm[d]];
      out[lin] = src[s];
    }
    setKnown(
        0, DenseElementsAttr::get(unplaced(shape, type.getElementType()), out));
    return success();
  }
  setOutput(0, transpose(inValue(0), perm));
  return success();
}

LogicalResult Importer::importSplit() {
  if (!hasInput(0))
    return fail("expects an input");
  RankedTensorType type = inType(0);
  FailureOr<int64_t> axis = normAxis(attrInt("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  int64_t dimSize = type.getDimSize(*axis);
  int64_t numOut = curNode->output_size();
  SmallVector<int64_t> sizes;
  if (opset >= 13 && hasInput(1)) {
    FailureOr<SmallVector<int64_t>> s = knownInts(1, "split");
    if (failed(s))
      return failure();
    sizes = *s;
  } else if (auto s = attrInts("split")) {
    sizes = *s;
  } else {
    int64_t parts = attrInt("num_outputs", numOut);
    int64_t chunk = (dimSize + parts - 1) / std::max<int64_t>(parts, 1);
    for (int64_t i = 0, left = dimSize; i < parts; ++i, left -= chunk)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, left)));
  }
  if (static_cast<int64_t>(sizes.size()) != numOut ||
      std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != dimSize)
    return fail("split sizes " + shapeStr(sizes) + " do not divide dimension " +
                Twine(*axis) + " of size " + Twine(dimSize) + " into " +
                Twine(numOut) + " outputs");
  Value x = isKnown(0) && (numElements(type.getShape()) <= kMaxFoldElements ||
                           in(0).constant.isSplat())
                ? Value()
                : inValue(0);
  int64_t offset = 0;
  for (int64_t i = 0; i < numOut; ++i) {
    SmallVector<int64_t> offsets(type.getRank(), 0), shape(type.getShape()),
        strides(type.getRank(), 1);
    offsets[*axis] = offset;
    shape[*axis] = sizes[i];
    if (forwardSplat(0, shape, i)) {
      // A part of a splat is that splat.
    } else if (!x) {
      SmallVector<Attribute> src(in(0).constant.getValues<Attribute>());
      SmallVector<int64_t> inStrides = stridesOf(type.getShape());
      SmallVector<int64_t> outStrides = stridesOf(shape);
      SmallVector<Attribute> out(numElements(shape));
      for (int64_t lin = 0; lin < static_cast<int64_t>(out.size()); ++lin) {
        int64_t s = 0;
        for (int64_t d = 0; d < type.getRank(); ++d)
          s += ((lin / outStrides[d]) % shape[d] + offsets[d]) * inStrides[d];
        out[lin] = src[s];
      }
      setKnown(i, DenseElementsAttr::get(unplaced(shape, type.getElementType()),
                                         out));
    } else {
      setOutput(i, extractSlice(x, offsets, shape, strides));
    }
    offset += sizes[i];
  }
  return success();
}

LogicalResult Importer::importSlice() {
  if (!hasInput(0))
    return fail("expects an input");
  RankedTensorType type = inType(0);
  int64_t rank = type.getRank();
  SmallVector<int64_t> starts, ends, axes, steps;
  if (opset >= 10) {
    FailureOr<SmallVector<int64_t>> s = knownInts(1, "starts");
    if (failed(s))
      return failure();
    FailureOr<SmallVector<int64_t>> e = knownInts(2, "ends");
    if (failed(e))
      return failure();
    starts = *s;
    ends = *e;
    if (hasInput(3)) {
      FailureOr<SmallVector<int64_t>> a = knownInts(3, "axes");
      if (failed(a))
        return failure();
      axes = *a;
    }
    if (hasInput(4)) {
      FailureOr<SmallVector<int64_t>> st = knownInts(4, "steps");
      if (failed(st))
        return failure();
      steps = *st;
    }
  } else {
    starts = attrInts("starts").value_or(SmallVector<int64_t>());
    ends = attrInts("ends").value_or(SmallVector<int64_t>());
    axes = attrInts("axes").value_or(SmallVector<int64_t>());
  }
  if (starts.size() != ends.size())
    return fail("starts and ends differ in length");
  if (axes.empty())
    for (int64_t i = 0; i < static_cast<int64_t>(starts.size()); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size())
    return fail("starts, ends, axes and steps differ in length");
  SmallVector<int64_t> offsets(rank, 0), sizes(type.getShape()),
      strides(rank, 1);
  for (size_t i = 0; i < starts.size(); ++i) {
    FailureOr<int64_t> a = normAxis(axes[i], rank);
    if (failed(a))
      return failure();
    int64_t dim = type.getDimSize(*a), step = steps[i];
    if (step == 0)
      return fail("step 0");
    int64_t start = starts[i], end = ends[i];
    if (start < 0)
      start += dim;
    if (end < 0)
      end += dim;
    // Counts in uint64: -step overflows for INT64_MIN, and end - start +
    // step - 1 for huge steps.
    int64_t count;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      count = end > start ? 1 + static_cast<int64_t>(uint64_t(end - start - 1) /
                                                     uint64_t(step))
                          : 0;
    } else if (dim == 0) {
      start = end = count = 0;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      count = start > end
                  ? 1 + static_cast<int64_t>(uint64_t(start - end - 1) /
                                             (uint64_t(0) - uint64_t(step)))
                  : 0;
    }
    // One element read: the step does not matter (and an extreme one
    // would only overflow index arithmetic downstream).
    if (count <= 1)
      step = 1;
    offsets[*a] = start;
    sizes[*a] = count;
    strides[*a] = step;
  }
  bool negative = llvm::any_of(strides, [](int64_t s) { return s < 0; });
  if (forwardSplat(0, sizes))
    return success();
  if (canFold(numElements(sizes))) {
    SmallVector<Attribute> src(in(0).constant.getValues<Attribute>());
    SmallVector<int64_t> inStrides = stridesOf(type.getShape());
    SmallVector<int64_t> outStrides = stridesOf(sizes);
    SmallVector<Attribute> out(numElements(sizes));
    for (int64_t lin = 0; lin < static_cast<int64_t>(out.size()); ++lin) {
      int64_t s = 0;
      for (int64_t d = 0; d < rank; ++d)
        s += (offsets[d] + ((lin / outStrides[d]) % sizes[d]) * strides[d]) *
             inStrides[d];
      out[lin] = src[s];
    }
    setKnown(
        0, DenseElementsAttr::get(unplaced(sizes, type.getElementType()), out));
    return success();
  }
  if (numElements(sizes) == 0) {
    // An empty slice: no element is read (extract_slice would reject an
    // offset at the end of the dimension).
    setOutput(0, empty(sizes, type.getElementType()));
    return success();
  }
  if (negative) {
    // out[i] = x[offset + i * stride] per dim, strides possibly negative.
    SmallVector<AffineExpr> xe;
    for (int64_t d = 0; d < rank; ++d)
      xe.push_back(builder.getAffineDimExpr(d) * strides[d] + offsets[d]);
    SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, xe, ctx),
                                   builder.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    Value init = empty(sizes, type.getElementType());
    setOutput(0, linalg::GenericOp::create(
                     builder, curLoc, TypeRange{init.getType()},
                     ValueRange{inValue(0)}, ValueRange{init}, maps, iters,
                     [](OpBuilder &b, Location loc, ValueRange args) {
                       linalg::YieldOp::create(b, loc, args[0]);
                     })
                     .getResult(0));
    return success();
  }
  setOutput(0, extractSlice(inValue(0), offsets, sizes, strides));
  return success();
}

LogicalResult Importer::importConcat() {
  if (numInputs() == 0)
    return fail("expects at least one input");
  RankedTensorType first = inType(0);
  FailureOr<int64_t> axis = normAxis(attrInt("axis", 0), first.getRank());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(first.getShape());
  shape[*axis] = 0;
  for (unsigned i = 0; i < numInputs(); ++i) {
    if (!hasInput(i))
      return fail("missing input " + Twine(i));
    RankedTensorType t = inType(i);
    if (t.getRank() != first.getRank() ||
        t.getElementType() != first.getElementType())
      return fail("inputs differ in rank or element type");
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (d != *axis && t.getDimSize(d) != first.getDimSize(d))
        return fail("input shapes " + shapeStr(first.getShape()) + " and " +
                    shapeStr(t.getShape()) + " differ outside axis " +
                    Twine(*axis));
    shape[*axis] += t.getDimSize(*axis);
  }
  if (canFold(numElements(shape))) {
    SmallVector<int64_t> outStrides = stridesOf(shape);
    SmallVector<Attribute> out(numElements(shape));
    int64_t offset = 0;
    for (unsigned i = 0; i < numInputs(); ++i) {
      RankedTensorType t = inType(i);
      SmallVector<Attribute> src(in(i).constant.getValues<Attribute>());
      SmallVector<int64_t> inStrides = stridesOf(t.getShape());
      for (int64_t lin = 0; lin < static_cast<int64_t>(src.size()); ++lin) {
        int64_t dst = 0;
        for (int64_t d = 0; d < t.getRank(); ++d) {
          int64_t idx = (lin / inStrides[d]) % t.getDimSize(d);
          dst += (d == *axis ? idx + offset : idx) * outStrides[d];
        }
        out[dst] = src[lin];
      }
      offset += t.getDimSize(*axis);
    }
    setKnown(0, DenseElementsAttr::get(unplaced(shape, first.getElementType()),
                                       out));
    return success();
  }
  // tensor.insert_slice into a placed tensor.empty (tensor.concat loses the
  // placement under canonicalization, docs/design/placement.md).
  Value result = empty(shape, first.getElementType());
  int64_t offset = 0;
  for (unsigned i = 0; i < numInputs(); ++i) {
    RankedTensorType t = inType(i);
    if (t.getDimSize(*axis) == 0)
      continue;
    SmallVector<int64_t> offsets(t.getRank(), 0), strides(t.getRank(), 1);
    offsets[*axis] = offset;
    result = tensor::InsertSliceOp::create(
        builder, curLoc, inValue(i), result, ValueRange{}, ValueRange{},
        ValueRange{}, builder.getDenseI64ArrayAttr(offsets),
        builder.getDenseI64ArrayAttr(t.getShape()),
        builder.getDenseI64ArrayAttr(strides));
    offset += t.getDimSize(*axis);
  }
  setOutput(0, result);
  return success();
}

/// An index (of any integer type) as an `index`, negative ones counted
/// from `size`.
Value distir::onnx_import::wrapIndex(OpBuilder &b, Location loc, Value raw,
                                     int64_t size, bool isUnsigned) {
  Value i =
      isUnsigned
          ? Value(arith::IndexCastUIOp::create(b, loc, b.getIndexType(), raw))
          : Value(arith::IndexCastOp::create(b, loc, b.getIndexType(), raw));
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value n = arith::ConstantIndexOp::create(b, loc, size);
  Value neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, zero);
  return arith::SelectOp::create(b, loc, neg,
                                 arith::AddIOp::create(b, loc, i, n), i);
}

LogicalResult Importer::importGather() {
  if (!hasInput(0) || !hasInput(1))
    return fail("expects data and indices");
  RankedTensorType data = inType(0), idxType = inType(1);
  if (!isa<IntegerType>(idxType.getElementType()) ||
      idxType.getElementType().isInteger(1))
    return fail("indices must be an integer tensor");
  int64_t rank = data.getRank();
  if (rank == 0)
    return fail("data must have rank >= 1");
  FailureOr<int64_t> axis = normAxis(attrInt("axis", 0), rank);
  if (failed(axis))
    return failure();
  int64_t dim = data.getDimSize(*axis);
  SmallVector<int64_t> shape(data.getShape().take_front(*axis));
  llvm::append_range(shape, idxType.getShape());
  llvm::append_range(shape, data.getShape().drop_front(*axis + 1));
  bool idxUnsigned = in(1).isUnsigned;
  // Known indices are range-checked here (a huge known index tensor, e.g.
  // a splat, only through its first element).
  if (isKnown(1)) {
    SmallVector<int64_t> known =
        numElements(idxType.getShape()) <= kMaxFoldElements
            ? knownIntsOf(1)
            : SmallVector<int64_t>();
    if (known.empty() && in(1).constant.isSplat())
      known = intsOf(
          DenseElementsAttr::get(unplaced({1}, idxType.getElementType()),
                                 in(1).constant.getSplatValue<Attribute>()),
          idxUnsigned);
    for (int64_t i : known)
      if (i < -dim || i >= dim)
        return fail("index " + Twine(i) + " out of range [" + Twine(-dim) +
                    ", " + Twine(dim) + ")");
  }
  if (forwardSplat(0, shape))
    return success();
  if (canFold(numElements(shape))) {
    SmallVector<Attribute> src(in(0).constant.getValues<Attribute>());
    SmallVector<int64_t> idx = knownIntsOf(1);
    SmallVector<int64_t> inStrides = stridesOf(data.getShape());
    SmallVector<int64_t> outStrides = stridesOf(shape);
    int64_t ir = idxType.getRank();
    SmallVector<int64_t> idxStrides = stridesOf(idxType.getShape());
    SmallVector<Attribute> out(numElements(shape));
    for (int64_t lin = 0; lin < static_cast<int64_t>(out.size()); ++lin) {
      SmallVector<int64_t> o(shape.size());
      for (size_t d = 0; d < shape.size(); ++d)
        o[d] = (lin / outStrides[d]) % shape[d];
      int64_t ilin = 0;
      for (int64_t d = 0; d < ir; ++d)
        ilin += o[*axis + d] * idxStrides[d];
      int64_t k = idx[ilin] < 0 ? idx[ilin] + dim : idx[ilin];
      int64_t s = 0;
      for (int64_t d = 0; d < rank; ++d) {
        int64_t c = d < *axis ? o[d] : d == *axis ? k : o[d - 1 + ir];
        s += c * inStrides[d];
      }
      out[lin] = src[s];
    }
    setKnown(
        0, DenseElementsAttr::get(unplaced(shape, data.getElementType()), out));
    return success();
  }
  // A known scalar index (ViT's class token, x[:, 0]) is a slice and a
  // reshape, which the transforms split like any other slice, not a generic
  // whose body reads the whole tensor.
  if (isKnown(1) && idxType.getRank() == 0) {
    int64_t k = knownIntsOf(1).front();
    SmallVector<int64_t> offsets(rank, 0), sizes(data.getShape()),
        strides(rank, 1);
    offsets[*axis] = k < 0 ? k + dim : k;
    sizes[*axis] = 1;
    setOutput(
        0, reshape(extractSlice(inValue(0), offsets, sizes, strides), shape));
    return success();
  }
  // linalg.generic over the result; the body reads the index and extracts
  // from `data` (an embedding lookup for axis 0).
  Value dataV = inValue(0), idxV = inValue(1);
  int64_t outRank = shape.size(), ir = idxType.getRank();
  SmallVector<AffineExpr> idxExprs;
  for (int64_t d = 0; d < ir; ++d)
    idxExprs.push_back(builder.getAffineDimExpr(*axis + d));
  SmallVector<AffineMap> maps = {AffineMap::get(outRank, 0, idxExprs, ctx),
                                 builder.getMultiDimIdentityMap(outRank)};
  SmallVector<utils::IteratorType> iters(outRank,
                                         utils::IteratorType::parallel);
  Value init = empty(shape, data.getElementType());
  Value r = linalg::GenericOp::create(
                builder, curLoc, TypeRange{init.getType()}, ValueRange{idxV},
                ValueRange{init}, maps, iters,
                [&](OpBuilder &b, Location loc, ValueRange args) {
                  Value i = wrapIndex(b, loc, args[0], dim, idxUnsigned);
                  SmallVector<Value> coords;
                  for (int64_t d = 0; d < rank; ++d) {
                    if (d == *axis)
                      coords.push_back(i);
                    else
                      coords.push_back(linalg::IndexOp::create(
                          b, loc, d < *axis ? d : d - 1 + ir));
                  }
                  Value v = tensor::ExtractOp::create(b, loc, dataV, coords);
                  linalg::YieldOp::create(b, loc, v);
                })
                .getResult(0);
  setOutput(0, r);
  return success();
}

LogicalResult Importer::importExpand() {
  if (!hasInput(0))
    return fail("expects an input");
  FailureOr<SmallVector<int64_t>> target = knownInts(1, "shape operand");
  if (failed(target))
    return failure();
  for (int64_t d : *target)
    if (d < 0)
      return fail("invalid dimension " + Twine(d) + " in shape operand");
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(inShape(0), *target);
  if (!shape)
    return fail("cannot expand " + shapeStr(inShape(0)) + " to " +
                shapeStr(*target));
  Type elt = inElt(0);
  if (isKnown(0) && numElements(*shape) <= kMaxFoldElements) {
    SmallVector<Attribute> src(in(0).constant.getValues<Attribute>());
    SmallVector<int64_t> idx = broadcastIndices(*shape, inShape(0));
    SmallVector<Attribute> out;
    for (int64_t i : idx)
      out.push_back(src[i]);
    setKnown(0, DenseElementsAttr::get(unplaced(*shape, elt), out));
    return success();
  }
  if (isKnown(0) && in(0).constant.isSplat()) {
    setKnown(0,
             DenseElementsAttr::get(unplaced(*shape, elt),
                                    in(0).constant.getSplatValue<Attribute>()));
    return success();
  }
  setOutput(0, broadcastTo(inValue(0), *shape));
  return success();
}

LogicalResult Importer::importConstant() {
  if (const onnx::AttributeProto *a = attr("value")) {
    FailureOr<DenseElementsAttr> c =
        tensorContents(a->t(), "attribute 'value'");
    if (failed(c))
      return failure();
    setKnown(0, *c, isUnsignedType(a->t().data_type()));
    return success();
  }
  Type f32 = builder.getF32Type(), i64 = builder.getI64Type();
  if (const onnx::AttributeProto *a = attr("value_float")) {
    setKnown(0, floatsAttr({}, f32, {a->f()}));
    return success();
  }
  if (const onnx::AttributeProto *a = attr("value_floats")) {
    SmallVector<double> v(a->floats().begin(), a->floats().end());
    setKnown(0, floatsAttr({static_cast<int64_t>(v.size())}, f32, v));
    return success();
  }
  if (const onnx::AttributeProto *a = attr("value_int")) {
    setKnown(0, intsAttr({}, i64, {a->i()}));
    return success();
  }
  if (const onnx::AttributeProto *a = attr("value_ints")) {
    SmallVector<int64_t> v(a->ints().begin(), a->ints().end());
    setKnown(0, intsAttr({static_cast<int64_t>(v.size())}, i64, v));
    return success();
  }
  return fail("only tensor, float(s) and int(s) values are supported");
}

LogicalResult Importer::importConstantOfShape() {
  FailureOr<SmallVector<int64_t>> shape = knownInts(0, "shape operand");
  if (failed(shape))
    return failure();
  for (int64_t d : *shape)
    if (d < 0)
      return fail("negative dimension in shape operand");
  Attribute value = builder.getF32FloatAttr(0);
  Type elt = builder.getF32Type();
  if (const onnx::AttributeProto *a = attr("value")) {
    FailureOr<DenseElementsAttr> c =
        tensorContents(a->t(), "attribute 'value'");
    if (failed(c))
      return failure();
    if (c->getNumElements() != 1)
      return fail("attribute 'value' must hold one element");
    elt = c->getElementType();
    value = *c->getValues<Attribute>().begin();
    outUnsigned = isUnsignedType(a->t().data_type());
  }
  setKnown(0, DenseElementsAttr::get(unplaced(*shape, elt), value));
  return success();
}

LogicalResult Importer::importShape() {
  if (!hasInput(0))
    return fail("expects an input");
  ArrayRef<int64_t> shape = inShape(0);
  int64_t rank = shape.size();
  int64_t start = attrInt("start", 0), end = attrInt("end", rank);
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  SmallVector<int64_t> dims(shape.begin() + start, shape.begin() + end);
  setKnown(0, intsAttr({static_cast<int64_t>(dims.size())},
                       builder.getI64Type(), dims));
  return success();
}

LogicalResult Importer::importRange() {
  static const char *names[] = {"start", "limit", "delta"};
  for (unsigned i = 0; i < 3; ++i) {
    if (!hasInput(i))
      return fail("missing " + Twine(names[i]));
    if (!isKnown(i))
      return fail("unresolvable dynamic shape: " + Twine(names[i]) + " ('" +
                  curNode->input(i) + "') is not known at import time");
    if (numElements(inShape(i)) != 1)
      return fail("start, limit and delta must be scalars");
  }
  Type elt = inElt(0);
  if (inElt(1) != elt || inElt(2) != elt)
    return fail("start, limit and delta differ in element type");
  // The element count max(ceil((limit - start) / delta), 0), checked
  // before anything is allocated: integers exactly (in 128 bits), floats
  // in double.
  bool isFloat = isa<FloatType>(elt);
  int64_t si = 0, di = 0;
  double sf = 0, df = 0;
  int64_t n;
  if (isFloat) {
    sf = knownFloatsOf(0)[0];
    double lf = knownFloatsOf(1)[0];
    df = knownFloatsOf(2)[0];
    if (df == 0)
      return fail("delta is 0");
    double count = std::ceil((lf - sf) / df);
    if (std::isnan(count))
      return fail("range bounds are not finite");
    if (count > static_cast<double>(kMaxRangeElements))
      return fail("range has more than " + Twine(kMaxRangeElements) +
                  " elements");
    n = count > 0 ? static_cast<int64_t>(count) : 0;
  } else {
    si = knownIntsOf(0)[0];
    int64_t li = knownIntsOf(1)[0];
    di = knownIntsOf(2)[0];
    if (di == 0)
      return fail("delta is 0");
    __int128 diff = static_cast<__int128>(li) - si;
    __int128 count = diff / di;
    if (diff % di != 0 && ((diff > 0) == (di > 0)))
      ++count;
    if (count > kMaxRangeElements)
      return fail("range has more than " + Twine(kMaxRangeElements) +
                  " elements");
    n = count > 0 ? static_cast<int64_t>(count) : 0;
  }
  if (n <= kMaxFoldElements) {
    if (isFloat) {
      SmallVector<double> vals;
      for (int64_t i = 0; i < n; ++i)
        vals.push_back(sf + i * df);
      setKnown(0, floatsAttr({n}, elt, vals));
    } else {
      SmallVector<int64_t> vals;
      for (int64_t i = 0; i < n; ++i)
        vals.push_back(si + i * di);
      setKnown(0, intsAttr({n}, elt, vals));
    }
    return success();
  }
  // Too large to evaluate: start + i * delta at run time (floats in f64,
  // rounded once to the element type).
  Value init = empty({n}, elt);
  SmallVector<AffineMap> maps = {builder.getMultiDimIdentityMap(1)};
  SmallVector<utils::IteratorType> iters = {utils::IteratorType::parallel};
  Value r =
      linalg::GenericOp::create(
          builder, curLoc, TypeRange{init.getType()}, ValueRange{},
          ValueRange{init}, maps, iters,
          [&](OpBuilder &b, Location loc, ValueRange) {
            Value i = arith::IndexCastOp::create(
                b, loc, b.getI64Type(), linalg::IndexOp::create(b, loc, 0));
            Value v;
            if (isFloat) {
              Type f64 = b.getF64Type();
              Value fi = arith::SIToFPOp::create(b, loc, f64, i);
              v = arith::AddFOp::create(
                  b, loc, scalarConst(b, loc, f64, sf),
                  arith::MulFOp::create(b, loc, fi,
                                        scalarConst(b, loc, f64, df)));
              if (!elt.isF64())
                v = arith::TruncFOp::create(b, loc, elt, v);
            } else {
              if (elt.getIntOrFloatBitWidth() < 64)
                i = arith::TruncIOp::create(b, loc, elt, i);
              v = arith::AddIOp::create(
                  b, loc,
                  arith::ConstantOp::create(b, loc, b.getIntegerAttr(elt, si)),
                  arith::MulIOp::create(
                      b, loc, i,
                      arith::ConstantOp::create(b, loc,
                                                b.getIntegerAttr(elt, di))));
            }
            linalg::YieldOp::create(b, loc, v);
          })
          .getResult(0);
  setOutput(0, r);
  return success();
}

LogicalResult Importer::importCast(bool like) {
  if (!hasInput(0) || (like && !hasInput(1)))
    return fail(like ? "expects input and target_type" : "expects an input");
  // CastLike takes the element type of its second input.
  FailureOr<Type> to = like ? FailureOr<Type>(inElt(1))
                            : elementType(attrInt("to", 0), "attribute 'to'");
  if (failed(to))
    return failure();
  Type from = inElt(0);
  // Unsigned sources widen with zero extension and convert with uitofp;
  // unsigned targets take fptoui.
  bool fromUnsigned = in(0).isUnsigned;
  outUnsigned = like ? in(1).isUnsigned : isUnsignedType(attrInt("to", 0));
  bool toUnsigned = outUnsigned;
  ArrayRef<int64_t> shape = inShape(0);
  if (canFold(numElements(shape))) {
    if (isa<FloatType>(*to)) {
      setKnown(0, floatsAttr(shape, *to, knownFloatsOf(0)));
    } else if (isa<FloatType>(from)) {
      SmallVector<int64_t> v;
      for (double f : knownFloatsOf(0))
        v.push_back(to->isInteger(1) ? f != 0
                    : toUnsigned && f >= 0
                        ? static_cast<int64_t>(static_cast<uint64_t>(f))
                        : static_cast<int64_t>(f));
      setKnown(0, intsAttr(shape, *to, v));
    } else {
      setKnown(0, intsAttr(shape, *to, knownIntsOf(0)));
    }
    return success();
  }
  if (from == *to) {
    setOutput(0, inValue(0));
    return success();
  }
  FailureOr<Value> r = elementwise(
      {inValue(0)}, *to, [&](OpBuilder &b, Location loc, ArrayRef<Value> a) {
        Value x = a[0];
        Type t = *to;
        auto ft = dyn_cast<FloatType>(from), tt = dyn_cast<FloatType>(t);
        if (ft && tt)
          return castFloat(b, loc, x, tt);
        if (t.isInteger(1)) {
          if (ft)
            return Value(arith::CmpFOp::create(
                b, loc, arith::CmpFPredicate::UNE, x,
                arith::ConstantOp::create(b, loc, b.getFloatAttr(from, 0))));
          return Value(arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::ne, x,
              arith::ConstantOp::create(b, loc, b.getIntegerAttr(from, 0))));
        }
        if (tt)
          return from.isInteger(1) || fromUnsigned
                     ? Value(arith::UIToFPOp::create(b, loc, t, x))
                     : Value(arith::SIToFPOp::create(b, loc, t, x));
        if (ft)
          return toUnsigned ? Value(arith::FPToUIOp::create(b, loc, t, x))
                            : Value(arith::FPToSIOp::create(b, loc, t, x));
        unsigned fw = from.getIntOrFloatBitWidth(),
                 tw = t.getIntOrFloatBitWidth();
        if (fw < tw)
          return from.isInteger(1) || fromUnsigned
                     ? Value(arith::ExtUIOp::create(b, loc, t, x))
                     : Value(arith::ExtSIOp::create(b, loc, t, x));
        return Value(arith::TruncIOp::create(b, loc, t, x));
      });
  if (failed(r))
    return failure();
  setOutput(0, *r);
  return success();
}

//===----------------------------------------------------------------------===//
// Pad
//===----------------------------------------------------------------------===//

/// Pad with known amounts (input from opset 11, attribute before; negative
/// amounts crop). Constant mode is a static tensor.pad; edge and reflect
/// read the input at clamped or mirrored positions (linalg.generic +
/// tensor.extract).
LogicalResult Importer::importPad() {
  if (!hasInput(0))
    return fail("expects data");
  RankedTensorType type = inType(0);
  int64_t rank = type.getRank();
  Type elt = type.getElementType();
  std::string mode = attrString("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect")
    return fail("unsupported mode '" + mode + "'");
  SmallVector<int64_t> amounts;
  double value = 0;
  bool runtimeValue = false;
  if (opset < 11) {
    amounts = attrInts("pads").value_or(SmallVector<int64_t>());
    value = attrFloat("value", 0);
  } else {
    FailureOr<SmallVector<int64_t>> p = knownInts(1, "pads");
    if (failed(p))
      return failure();
    amounts = *p;
    if (hasInput(2)) {
      if (inElt(2) != elt || numElements(inShape(2)) != 1)
        return fail("constant_value must be a scalar of the input's type");
      if (isKnown(2))
        value = isa<FloatType>(elt) ? knownFloatsOf(2)[0]
                                    : static_cast<double>(knownIntsOf(2)[0]);
      else
        runtimeValue = true;
    }
    if (hasInput(3)) {
      // Opset 18's axes: the amounts are for these axes only.
      FailureOr<SmallVector<int64_t>> axes = knownInts(3, "axes");
      if (failed(axes))
        return failure();
      if (amounts.size() != 2 * axes->size())
        return fail("pads must have two values per axis");
      SmallVector<int64_t> all(2 * rank, 0);
      for (auto [j, a] : llvm::enumerate(*axes)) {
        FailureOr<int64_t> axis = normAxis(a, rank);
        if (failed(axis))
          return failure();
        all[*axis] = amounts[j];
        all[*axis + rank] = amounts[j + axes->size()];
      }
      amounts = all;
    }
  }
  if (static_cast<int64_t>(amounts.size()) != 2 * rank)
    return fail("pads must have " + Twine(2 * rank) + " values, got " +
                Twine(amounts.size()));
  // Negative amounts crop first; what is left pads.
  SmallVector<int64_t> offsets(rank), sizes(rank), lo(rank), hi(rank), out;
  bool crop = false, grow = false;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t begin = amounts[d], end = amounts[d + rank];
    int64_t size = type.getDimSize(d);
    offsets[d] = std::max<int64_t>(0, -begin);
    sizes[d] = size - offsets[d] - std::max<int64_t>(0, -end);
    if (sizes[d] < 0)
      return fail("pads crop dim " + Twine(d) + " (" + Twine(size) +
                  ") below zero");
    lo[d] = std::max<int64_t>(0, begin);
    hi[d] = std::max<int64_t>(0, end);
    int64_t total;
    if (llvm::AddOverflow(sizes[d], lo[d] + hi[d], total) ||
        lo[d] > kMaxRangeElements || hi[d] > kMaxRangeElements ||
        total > kMaxRangeElements)
      return fail("dim " + Twine(d) + " of the result is too large");
    out.push_back(total);
    crop |= sizes[d] != size;
    grow |= lo[d] || hi[d];
  }
  if (numElements(out) > kMaxRangeElements)
    return fail("the result has more than " + Twine(kMaxRangeElements) +
                " elements");
  if (mode != "constant" && grow)
    for (int64_t d = 0; d < rank; ++d)
      if ((lo[d] || hi[d]) &&
          (sizes[d] == 0 ||
           (mode == "reflect" && (lo[d] >= sizes[d] || hi[d] >= sizes[d]))))
        return fail("mode '" + mode + "' cannot pad dim " + Twine(d) +
                    " of size " + Twine(sizes[d]) + " by " + Twine(lo[d]) +
                    " and " + Twine(hi[d]));
  Value x = inValue(0);
  if (crop)
    x = extractSlice(x, offsets, sizes, SmallVector<int64_t>(rank, 1));
  if (!grow) {
    setOutput(0, x);
    return success();
  }
  if (mode == "constant") {
    Value padded = pad(x, placed(out, elt), lo, hi,
                       scalarConst(builder, curLoc, elt, value));
    if (runtimeValue) {
      // A value known only at run time: selected where the position lies
      // outside the input (a rank-0 operand broadcast by its map).
      Value v = inValue(2);
      if (cast<RankedTensorType>(v.getType()).getRank() != 0)
        v = reshape(v, {});
      SmallVector<AffineMap> maps = {builder.getMultiDimIdentityMap(rank),
                                     AffineMap::get(rank, 0, {}, ctx),
                                     builder.getMultiDimIdentityMap(rank)};
      Value init = empty(out, elt);
      padded =
          linalg::GenericOp::create(
              builder, curLoc, TypeRange{init.getType()}, ValueRange{padded, v},
              ValueRange{init}, maps,
              SmallVector<utils::IteratorType>(rank,
                                               utils::IteratorType::parallel),
              [&](OpBuilder &b, Location loc, ValueRange args) {
                Value inside =
                    arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
                for (int64_t d = 0; d < rank; ++d) {
                  if (!lo[d] && !hi[d])
                    continue;
                  Value p = linalg::IndexOp::create(b, loc, d);
                  Value ge = arith::CmpIOp::create(
                      b, loc, arith::CmpIPredicate::sge, p,
                      arith::ConstantIndexOp::create(b, loc, lo[d]));
                  Value lt = arith::CmpIOp::create(
                      b, loc, arith::CmpIPredicate::slt, p,
                      arith::ConstantIndexOp::create(b, loc, lo[d] + sizes[d]));
                  inside = arith::AndIOp::create(
                      b, loc, inside, arith::AndIOp::create(b, loc, ge, lt));
                }
                linalg::YieldOp::create(b, loc,
                                        Value(arith::SelectOp::create(
                                            b, loc, inside, args[0], args[1])));
              })
              .getResult(0);
    }
    setOutput(0, padded);
    return success();
  }
  SmallVector<AffineMap> maps = {builder.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  Value init = empty(out, elt);
  bool reflect = mode == "reflect";
  Value r =
      linalg::GenericOp::create(
          builder, curLoc, TypeRange{init.getType()}, ValueRange{},
          ValueRange{init}, maps, iters,
          [&](OpBuilder &b, Location loc, ValueRange) {
            SmallVector<Value> coords;
            for (int64_t d = 0; d < rank; ++d) {
              Value p = linalg::IndexOp::create(b, loc, d);
              if (!lo[d] && !hi[d]) {
                coords.push_back(p);
                continue;
              }
              auto cst = [&](int64_t v) -> Value {
                return arith::ConstantIndexOp::create(b, loc, v);
              };
              // q = p - lo, then mirrored (reflect) or clamped (edge)
              // into [0, size).
              Value q = arith::SubIOp::create(b, loc, p, cst(lo[d]));
              Value last = cst(sizes[d] - 1);
              Value below = arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::slt, q, cst(0));
              Value above = arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::sgt, q, last);
              Value low = reflect
                              ? Value(arith::SubIOp::create(b, loc, cst(0), q))
                              : cst(0);
              Value high = reflect ? Value(arith::SubIOp::create(
                                         b, loc, cst(2 * (sizes[d] - 1)), q))
                                   : last;
              q = arith::SelectOp::create(b, loc, below, low, q);
              coords.push_back(arith::SelectOp::create(b, loc, above, high, q));
            }
            linalg::YieldOp::create(
                b, loc, Value(tensor::ExtractOp::create(b, loc, x, coords)));
          })
          .getResult(0);
  setOutput(0, r);
  return success();
}
