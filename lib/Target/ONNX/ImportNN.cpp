//===- ImportNN.cpp - ONNX linear algebra, normalization, conv, pooling ---===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// MatMul, Gemm, Softmax, the normalizations and reductions, and
// convolution and pooling over N-d windows.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include <numeric>

using namespace mlir;
using namespace distir;
using namespace distir::onnx_import;

//===----------------------------------------------------------------------===//
// Linear algebra and normalization
//===----------------------------------------------------------------------===//

LogicalResult Importer::importMatMul() {
  if (!hasInput(0) || !hasInput(1))
    return fail("expects 2 inputs");
  if (isa<IntegerType>(inElt(0)))
    return fail("integer MatMul is not supported");
  FailureOr<Value> r = matmul(inValue(0), inValue(1));
  if (failed(r))
    return failure();
  setOutput(0, *r);
  return success();
}

LogicalResult Importer::importGemm() {
  if (!hasInput(0) || !hasInput(1))
    return fail("expects at least 2 inputs");
  if (inType(0).getRank() != 2 || inType(1).getRank() != 2)
    return fail("A and B must be matrices");
  if (!isa<FloatType>(inElt(0)))
    return fail("integer Gemm is not supported");
  Value a = inValue(0), b = inValue(1);
  if (attrInt("transA", 0))
    a = transpose(a, {1, 0});
  if (attrInt("transB", 0))
    b = transpose(b, {1, 0});
  auto ta = cast<RankedTensorType>(a.getType());
  auto tb = cast<RankedTensorType>(b.getType());
  if (ta.getDimSize(1) != tb.getDimSize(0))
    return fail("contraction dimensions differ: " + shapeStr(ta.getShape()) +
                " x " + shapeStr(tb.getShape()));
  Value y = matmul2d(a, b);
  double alpha = attrFloat("alpha", 1.0f), beta = attrFloat("beta", 1.0f);
  if (alpha != 1.0)
    y = scale(y, alpha);
  if (hasInput(2) && beta != 0.0) {
    Value c = inValue(2);
    if (beta != 1.0)
      c = scale(c, beta);
    auto r =
        elementwise({y, c}, ta.getElementType(),
                    [](OpBuilder &bb, Location loc, ArrayRef<Value> v) {
                      return Value(arith::AddFOp::create(bb, loc, v[0], v[1]));
                    });
    if (failed(r))
      return failure();
    if (cast<RankedTensorType>(r->getType()).getShape() !=
        cast<RankedTensorType>(y.getType()).getShape())
      return fail("C does not broadcast to the result shape");
    y = *r;
  }
  setOutput(0, y);
  return success();
}

LogicalResult Importer::importSoftmax(bool log) {
  if (!hasInput(0))
    return fail("expects 1 input");
  if (!isa<FloatType>(inElt(0)))
    return fail("integer operands are not supported");
  RankedTensorType type = inType(0);
  int64_t rank = type.getRank();
  if (rank == 0)
    return fail("input must have rank >= 1");
  FailureOr<int64_t> axis =
      normAxis(attrInt("axis", opset >= 13 ? -1 : 1), rank);
  if (failed(axis))
    return failure();
  Value x = inValue(0);
  SmallVector<int64_t> shape(type.getShape());
  int64_t dim = *axis;
  if (opset < 13 && *axis != rank - 1) {
    // Before opset 13 the input is coerced to 2-D at `axis`.
    ArrayRef<int64_t> s = type.getShape();
    x = reshape(x, {numElements(s.take_front(*axis)),
                    numElements(s.drop_front(*axis))});
    dim = 1;
  }
  auto xt = cast<RankedTensorType>(x.getType());
  Value init = empty(xt.getShape(), xt.getElementType());
  Value r = linalg::SoftmaxOp::create(builder, curLoc, TypeRange{xt}, x, init,
                                      static_cast<uint64_t>(dim))
                .getResult()[0];
  if (log) {
    r = *elementwise({r}, xt.getElementType(),
                     [](OpBuilder &b, Location loc, ArrayRef<Value> v) {
                       return Value(math::LogOp::create(b, loc, v[0]));
                     });
  }
  setOutput(0, reshape(r, shape));
  return success();
}

LogicalResult Importer::importLayerNorm() {
  if (!hasInput(0) || !hasInput(1))
    return fail("expects X and Scale");
  RankedTensorType type = inType(0);
  Type elt = type.getElementType();
  if (!isa<FloatType>(elt))
    return fail("integer operands are not supported");
  // Mean and variance are computed in stash_type, which is also the type
  // of the Mean and InvStdDev outputs; the normalized value returns to T
  // before Scale and B (the ONNX function body of LayerNormalization-17).
  int64_t stashCode = attrInt("stash_type", onnx::TensorProto::FLOAT);
  Type stash = supportedElementType(stashCode);
  if (!stash || !isa<FloatType>(stash))
    return fail("stash_type " +
                Twine(onnx::TensorProto_DataType_IsValid(stashCode)
                          ? onnx::TensorProto_DataType_Name(stashCode)
                          : std::to_string(stashCode)) +
                " is not supported (a float type is needed)");
  int64_t rank = type.getRank();
  FailureOr<int64_t> axis = normAxis(attrInt("axis", -1), rank);
  if (failed(axis))
    return failure();
  double eps = attrFloat("epsilon", 1e-5f);
  SmallVector<int64_t> axes;
  for (int64_t d = *axis; d < rank; ++d)
    axes.push_back(d);
  int64_t count = numElements(type.getShape().drop_front(*axis));
  auto convert = [&](Value v, Type to) {
    if (cast<RankedTensorType>(v.getType()).getElementType() == to)
      return v;
    return *elementwise({v}, to,
                        [&](OpBuilder &b, Location loc, ArrayRef<Value> a) {
                          return castFloat(b, loc, a[0], cast<FloatType>(to));
                        });
  };
  Value x = convert(inValue(0), stash);
  auto binary = [&](StringRef op, Value a, Value b) {
    return *elementwise({a, b}, stash,
                        [&](OpBuilder &bb, Location loc, ArrayRef<Value> v) {
                          return emitScalar(bb, loc, op, v, 0, 0);
                        });
  };
  Value mean = scale(reduce(x, axes, ReduceKind::Sum, true), 1.0 / count);
  Value centered = binary("Sub", x, mean);
  Value sq = *elementwise(
      {centered}, stash, [](OpBuilder &b, Location loc, ArrayRef<Value> v) {
        return Value(arith::MulFOp::create(b, loc, v[0], v[0]));
      });
  Value var = scale(reduce(sq, axes, ReduceKind::Sum, true), 1.0 / count);
  Value invStd = *elementwise(
      {var}, stash, [&](OpBuilder &b, Location loc, ArrayRef<Value> v) {
        Value e = arith::ConstantOp::create(b, loc, b.getFloatAttr(stash, eps));
        return Value(math::RsqrtOp::create(
            b, loc, arith::AddFOp::create(b, loc, v[0], e)));
      });
  Value y = convert(binary("Mul", centered, invStd), elt);
  FailureOr<Value> scaled = elementwise(
      {y, inValue(1)}, elt, [](OpBuilder &b, Location loc, ArrayRef<Value> v) {
        return Value(arith::MulFOp::create(b, loc, v[0], v[1]));
      });
  if (failed(scaled))
    return failure();
  y = *scaled;
  if (hasInput(2)) {
    FailureOr<Value> biased =
        elementwise({y, inValue(2)}, elt,
                    [](OpBuilder &b, Location loc, ArrayRef<Value> v) {
                      return Value(arith::AddFOp::create(b, loc, v[0], v[1]));
                    });
    if (failed(biased))
      return failure();
    y = *biased;
  }
  if (cast<RankedTensorType>(y.getType()).getShape() != type.getShape())
    return fail("Scale/B do not broadcast to the input shape");
  setOutput(0, y);
  setOutput(1, mean);
  setOutput(2, invStd);
  return success();
}

LogicalResult Importer::importBatchNorm() {
  for (unsigned i = 0; i < 5; ++i)
    if (!hasInput(i))
      return fail("expects X, scale, B, mean and var");
  if (attrInt("training_mode", 0))
    return fail("training mode is not supported");
  if (curNode->output_size() > 1)
    return fail("training outputs (running mean/var) are not supported");
  RankedTensorType type = inType(0);
  Type elt = type.getElementType();
  if (!isa<FloatType>(elt) || type.getRank() < 2)
    return fail("X must be a float tensor of rank >= 2");
  int64_t c = type.getDimSize(1);
  // spatial=0 (opsets 7 and 8): one parameter per activation, [C,D1,...],
  // broadcast over the batch dimension only. Otherwise one per channel,
  // [C], broadcast over the batch and spatial dimensions.
  bool perActivation = opset < 9 && attrInt("spatial", 1) == 0;
  ArrayRef<int64_t> want =
      perActivation ? type.getShape().drop_front() : ArrayRef<int64_t>(c);
  SmallVector<int64_t> paramShape(want);
  if (!perActivation)
    paramShape.append(type.getRank() - 2, 1);
  SmallVector<Value> params;
  for (unsigned i = 1; i < 5; ++i) {
    if (inShape(i) != want || inElt(i) != elt)
      return fail("parameter " + Twine(i) + " must be a " + shapeStr(want) +
                  " tensor of the input's element type" +
                  (perActivation ? " (spatial=0)" : ""));
    params.push_back(reshape(inValue(i), paramShape));
  }
  double eps = attrFloat("epsilon", 1e-5f);
  FailureOr<Value> r = elementwise(
      {inValue(0), params[0], params[1], params[2], params[3]}, elt,
      [&](OpBuilder &b, Location loc, ArrayRef<Value> v) {
        Value e = arith::ConstantOp::create(b, loc, b.getFloatAttr(elt, eps));
        Value inv = math::RsqrtOp::create(
            b, loc, arith::AddFOp::create(b, loc, v[4], e));
        Value n = arith::MulFOp::create(
            b, loc, arith::SubFOp::create(b, loc, v[0], v[3]), inv);
        return Value(arith::AddFOp::create(
            b, loc, arith::MulFOp::create(b, loc, n, v[1]), v[2]));
      });
  if (failed(r))
    return failure();
  setOutput(0, *r);
  return success();
}

FailureOr<std::optional<SmallVector<int64_t>>>
Importer::axesOperand(int inputSince) {
  if (opset >= inputSince) {
    // (ONNX's checker sees opset-18 models restated at opset 17, where the
    // attribute is still valid.)
    if (attr("axes"))
      return fail("axes is an input from opset " + Twine(inputSince) +
                  ", not an attribute");
    if (!hasInput(1))
      return std::optional<SmallVector<int64_t>>();
    FailureOr<SmallVector<int64_t>> axes = knownInts(1, "axes");
    if (failed(axes))
      return failure();
    return std::optional<SmallVector<int64_t>>(*axes);
  }
  return attrInts("axes");
}

LogicalResult Importer::importReduce(StringRef op) {
  if (!hasInput(0))
    return fail("expects an input");
  RankedTensorType type = inType(0);
  int64_t rank = type.getRank();
  // The other reductions take axes as an input from opset 18 (read from
  // the original model; ONNX's checker sees it restated, Opset18.h).
  FailureOr<std::optional<SmallVector<int64_t>>> axesOr =
      axesOperand(op == "ReduceSum" ? 13 : 18);
  if (failed(axesOr))
    return failure();
  bool keepDims = attrInt("keepdims", 1) != 0;
  SmallVector<int64_t> axes;
  if (!*axesOr || (*axesOr)->empty()) {
    if (attrInt("noop_with_empty_axes", 0)) {
      setOutput(0, inValue(0));
      return success();
    }
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  } else {
    for (int64_t a : **axesOr) {
      FailureOr<int64_t> n = normAxis(a, rank);
      if (failed(n))
        return failure();
      axes.push_back(*n);
    }
  }
  llvm::sort(axes);
  axes.erase(llvm::unique(axes), axes.end());
  ReduceKind kind = llvm::StringSwitch<ReduceKind>(op)
                        .Case("ReduceMax", ReduceKind::Max)
                        .Case("ReduceMin", ReduceKind::Min)
                        .Case("ReduceProd", ReduceKind::Prod)
                        .Default(ReduceKind::Sum);
  // L1, L2, SumSquare, LogSum and LogSumExp are sums of a map of the input,
  // some with a map of the sum.
  bool sumOfMap = llvm::is_contained({"ReduceL1", "ReduceL2", "ReduceSumSquare",
                                      "ReduceLogSum", "ReduceLogSumExp"},
                                     op);
  Type elt = type.getElementType();
  if (sumOfMap && !isa<FloatType>(elt))
    return fail("integer operands are not supported");
  Value x = inValue(0), shift;
  auto map = [&](ArrayRef<Value> inputs, auto fn) -> FailureOr<Value> {
    return elementwise(inputs, elt,
                       [&](OpBuilder &b, Location loc, ArrayRef<Value> v) {
                         return Value(fn(b, loc, v));
                       });
  };
  FailureOr<Value> mapped = x;
  if (op == "ReduceL1")
    mapped = map({x}, [](OpBuilder &b, Location loc, ArrayRef<Value> v) {
      return math::AbsFOp::create(b, loc, v[0]);
    });
  else if (op == "ReduceL2" || op == "ReduceSumSquare")
    mapped = map({x}, [](OpBuilder &b, Location loc, ArrayRef<Value> v) {
      return arith::MulFOp::create(b, loc, v[0], v[0]);
    });
  else if (op == "ReduceLogSumExp") {
    // log(sum(exp(x - m))) + m with m the maximum: no overflow of exp.
    shift = reduce(x, axes, ReduceKind::Max, /*keepDims=*/true);
    mapped = map({x, broadcastTo(shift, type.getShape())},
                 [](OpBuilder &b, Location loc, ArrayRef<Value> v) {
                   return math::ExpOp::create(
                       b, loc, arith::SubFOp::create(b, loc, v[0], v[1]));
                 });
  }
  if (failed(mapped))
    return failure();
  Value r = reduce(*mapped, axes, kind, keepDims, in(0).isUnsigned);
  FailureOr<Value> post = r;
  if (op == "ReduceL2")
    post = map({r}, [](OpBuilder &b, Location loc, ArrayRef<Value> v) {
      return math::SqrtOp::create(b, loc, v[0]);
    });
  else if (op == "ReduceLogSum")
    post = map({r}, [](OpBuilder &b, Location loc, ArrayRef<Value> v) {
      return math::LogOp::create(b, loc, v[0]);
    });
  else if (op == "ReduceLogSumExp")
    post =
        map({r, reshape(shift, cast<RankedTensorType>(r.getType()).getShape())},
            [](OpBuilder &b, Location loc, ArrayRef<Value> v) {
              return arith::AddFOp::create(
                  b, loc, math::LogOp::create(b, loc, v[0]), v[1]);
            });
  if (failed(post))
    return failure();
  r = *post;
  if (op == "ReduceMean") {
    int64_t count = 1;
    for (int64_t a : axes)
      count *= type.getDimSize(a);
    if (!isa<FloatType>(type.getElementType()))
      return fail("integer ReduceMean is not supported");
    r = scale(r, 1.0 / count);
  }
  setOutput(0, r);
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution and pooling (linalg.generic over N-d windows)
//===----------------------------------------------------------------------===//

namespace {
/// Output geometry of a convolution or pooling window over spatial dims.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, padLow, padHigh, out;
};
} // namespace

/// Computes pads and output sizes per ONNX (auto_pad, pads, ceil_mode).
static std::string computeWindow(Window &w, ArrayRef<int64_t> spatial,
                                 StringRef autoPad,
                                 std::optional<SmallVector<int64_t>> pads,
                                 bool ceilMode) {
  size_t n = spatial.size();
  w.padLow.assign(n, 0);
  w.padHigh.assign(n, 0);
  w.out.resize(n);
  if (pads) {
    if (pads->size() != 2 * n)
      return "pads must have " + std::to_string(2 * n) + " values";
    for (size_t i = 0; i < n; ++i) {
      w.padLow[i] = (*pads)[i];
      w.padHigh[i] = (*pads)[i + n];
    }
  }
  for (size_t i = 0; i < n; ++i) {
    int64_t eff = (w.kernel[i] - 1) * w.dilations[i] + 1;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t out = (spatial[i] + w.strides[i] - 1) / w.strides[i];
      int64_t total =
          std::max<int64_t>(0, (out - 1) * w.strides[i] + eff - spatial[i]);
      w.padLow[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.padHigh[i] = total - w.padLow[i];
    } else if (autoPad == "VALID") {
      w.padLow[i] = w.padHigh[i] = 0;
    } else if (autoPad != "NOTSET" && !autoPad.empty()) {
      return "unsupported auto_pad '" + autoPad.str() + "'";
    }
    int64_t span = spatial[i] + w.padLow[i] + w.padHigh[i] - eff;
    if (span < 0)
      return "window larger than the padded input";
    w.out[i] = (ceilMode ? (span + w.strides[i] - 1) / w.strides[i]
                         : span / w.strides[i]) +
               1;
    // With ceil_mode, the last window must start inside the input or the
    // low padding.
    if (ceilMode && (w.out[i] - 1) * w.strides[i] >= spatial[i] + w.padLow[i])
      --w.out[i];
  }
  return {};
}

/// sum(inputs[0] * inputs[1]) into zeros of `outShape` as one
/// linalg.generic (further inputs only bound loops).
Value Importer::multiplyAccumulate(ArrayRef<Value> inputs,
                                   ArrayRef<AffineMap> maps,
                                   ArrayRef<utils::IteratorType> iters,
                                   ArrayRef<int64_t> outShape, Type elt) {
  Value init = filled(outShape, elt, 0);
  return linalg::GenericOp::create(
             builder, curLoc, TypeRange{init.getType()}, inputs,
             ValueRange{init}, maps, iters,
             [&](OpBuilder &b, Location loc, ValueRange args) {
               Value m = arith::MulFOp::create(b, loc, args[0], args[1]);
               linalg::YieldOp::create(
                   b, loc,
                   Value(arith::AddFOp::create(b, loc, args.back(), m)));
             })
      .getResult(0);
}

/// The convolution of `x` (padded) with `weight` as one linalg.generic.
/// Loops: (n, [g,] f, o_1..o_s, c, k_1..k_s); the group loop exists only
/// for group > 1, with a shape-only [group, f/group] input that gives it
/// bounds (its index only appears as g * size + f otherwise). `cg` and
/// `fg` are the input and output channels per group.
Value Importer::emitConv(Value x, Value weight, int64_t group, int64_t cg,
                         int64_t fg, ArrayRef<int64_t> strides,
                         ArrayRef<int64_t> dilations,
                         ArrayRef<int64_t> outSpatial) {
  auto xt = cast<RankedTensorType>(x.getType());
  Type elt = xt.getElementType();
  int64_t ns = xt.getRank() - 2, n = xt.getDimSize(0), f = fg * group;
  int64_t base = group > 1 ? 1 : 0;
  int64_t loops = 3 + base + 2 * ns;
  auto d = [&](int64_t i) { return builder.getAffineDimExpr(i); };
  AffineExpr g = group > 1 ? d(1) : builder.getAffineConstantExpr(0);
  AffineExpr fo = d(1 + base), ci = d(2 + base + ns);
  SmallVector<AffineExpr> xe = {d(0), g * cg + ci};
  for (int64_t i = 0; i < ns; ++i)
    xe.push_back(d(2 + base + i) * strides[i] +
                 d(3 + base + ns + i) * dilations[i]);
  SmallVector<AffineExpr> we = {g * fg + fo, ci};
  for (int64_t i = 0; i < ns; ++i)
    we.push_back(d(3 + base + ns + i));
  SmallVector<AffineExpr> oe = {d(0), g * fg + fo};
  for (int64_t i = 0; i < ns; ++i)
    oe.push_back(d(2 + base + i));
  SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, xe, ctx),
                                 AffineMap::get(loops, 0, we, ctx),
                                 AffineMap::get(loops, 0, oe, ctx)};
  SmallVector<utils::IteratorType> iters(2 + base + ns,
                                         utils::IteratorType::parallel);
  iters.append(1 + ns, utils::IteratorType::reduction);
  SmallVector<int64_t> outShape = {n, f};
  llvm::append_range(outShape, outSpatial);
  SmallVector<Value> inputs = {x, weight};
  if (group > 1) {
    maps.insert(maps.begin() + 2, AffineMap::get(loops, 0, {d(1), fo}, ctx));
    inputs.push_back(empty({group, fg}, elt));
  }
  return multiplyAccumulate(inputs, maps, iters, outShape, elt);
}

/// `r` ([N, F, spatial...]) plus input 2 (B, [F]) when the node has it.
FailureOr<Value> Importer::addChannelBias(Value r, int64_t f, int64_t ns) {
  if (!hasInput(2))
    return r;
  if (inShape(2) != ArrayRef<int64_t>{f})
    return (void)fail("B must have shape [" + Twine(f) + "]"), failure();
  Type elt = cast<RankedTensorType>(r.getType()).getElementType();
  SmallVector<int64_t> bshape = {f};
  bshape.append(ns, 1);
  return elementwise({r, reshape(inValue(2), bshape)}, elt,
                     [](OpBuilder &b, Location loc, ArrayRef<Value> v) {
                       return Value(arith::AddFOp::create(b, loc, v[0], v[1]));
                     });
}

LogicalResult Importer::importConv() {
  if (!hasInput(0) || !hasInput(1))
    return fail("expects X and W");
  RankedTensorType xt = inType(0), wt = inType(1);
  Type elt = xt.getElementType();
  if (!isa<FloatType>(elt) || wt.getElementType() != elt)
    return fail("X and W must be float tensors of one element type");
  int64_t rank = xt.getRank();
  if (rank < 3 || wt.getRank() != rank)
    return fail("X and W must have the same rank >= 3");
  int64_t ns = rank - 2, group = attrInt("group", 1);
  int64_t n = xt.getDimSize(0), c = xt.getDimSize(1), f = wt.getDimSize(0);
  if (group <= 0 || c % group || f % group || wt.getDimSize(1) != c / group)
    return fail("channels " + Twine(c) + ", filters " + Twine(f) +
                " and group " + Twine(group) + " do not match W " +
                shapeStr(wt.getShape()));
  Window w;
  w.kernel.assign(wt.getShape().begin() + 2, wt.getShape().end());
  if (auto k = attrInts("kernel_shape"); k && *k != w.kernel)
    return fail("kernel_shape differs from W's shape");
  w.strides = attrInts("strides").value_or(SmallVector<int64_t>(ns, 1));
  w.dilations = attrInts("dilations").value_or(SmallVector<int64_t>(ns, 1));
  if (static_cast<int64_t>(w.strides.size()) != ns ||
      static_cast<int64_t>(w.dilations.size()) != ns)
    return fail("strides/dilations must have one value per spatial dim");
  std::string err =
      computeWindow(w, xt.getShape().drop_front(2),
                    attrString("auto_pad", "NOTSET"), attrInts("pads"), false);
  if (!err.empty())
    return fail(err);
  Value x = inValue(0);
  bool padded = llvm::any_of(w.padLow, [](int64_t p) { return p; }) ||
                llvm::any_of(w.padHigh, [](int64_t p) { return p; });
  if (padded) {
    SmallVector<int64_t> lo = {0, 0}, hi = {0, 0}, shape = {n, c};
    llvm::append_range(lo, w.padLow);
    llvm::append_range(hi, w.padHigh);
    for (int64_t i = 0; i < ns; ++i)
      shape.push_back(xt.getDimSize(i + 2) + w.padLow[i] + w.padHigh[i]);
    Value zero = scalarConst(builder, curLoc, elt, 0);
    x = pad(x, placed(shape, elt), lo, hi, zero);
  }
  Value r = emitConv(x, inValue(1), group, c / group, f / group, w.strides,
                     w.dilations, w.out);
  FailureOr<Value> biased = addChannelBias(r, f, ns);
  if (failed(biased))
    return failure();
  setOutput(0, *biased);
  return success();
}

LogicalResult Importer::importPool(StringRef op) {
  if (!hasInput(0))
    return fail("expects an input");
  RankedTensorType xt = inType(0);
  Type elt = xt.getElementType();
  // MaxPool also takes 8-bit integers (opset 12); the others only floats.
  if (!isa<FloatType>(elt) && (op != "MaxPool" || elt.isInteger(1)))
    return fail("integer operands are not supported");
  bool isUnsigned = in(0).isUnsigned;
  int64_t rank = xt.getRank();
  if (rank < 3)
    return fail("input must have rank >= 3");
  int64_t ns = rank - 2;
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
    SmallVector<int64_t> axes;
    for (int64_t i = 2; i < rank; ++i)
      axes.push_back(i);
    bool isMax = op == "GlobalMaxPool";
    Value r = reduce(inValue(0), axes,
                     isMax ? ReduceKind::Max : ReduceKind::Sum, true);
    if (!isMax)
      r = scale(r, 1.0 / numElements(xt.getShape().drop_front(2)));
    setOutput(0, r);
    return success();
  }
  bool withIndices = curNode->output_size() > 1 && !curNode->output(1).empty();
  int64_t storageOrder = attrInt("storage_order", 0);
  if (withIndices && storageOrder != 0 && storageOrder != 1)
    return fail("storage_order must be 0 or 1, got " + Twine(storageOrder));
  Window w;
  auto k = attrInts("kernel_shape");
  if (!k || static_cast<int64_t>(k->size()) != ns)
    return fail("kernel_shape must have one value per spatial dim");
  w.kernel = *k;
  w.strides = attrInts("strides").value_or(SmallVector<int64_t>(ns, 1));
  w.dilations = attrInts("dilations").value_or(SmallVector<int64_t>(ns, 1));
  if (static_cast<int64_t>(w.strides.size()) != ns ||
      static_cast<int64_t>(w.dilations.size()) != ns)
    return fail("strides/dilations must have one value per spatial dim");
  bool isMax = op == "MaxPool";
  std::string err = computeWindow(w, xt.getShape().drop_front(2),
                                  attrString("auto_pad", "NOTSET"),
                                  attrInts("pads"), attrInt("ceil_mode", 0));
  if (!err.empty())
    return fail(err);
  Value x = inValue(0);
  SmallVector<int64_t> lo = {0, 0}, hi = {0, 0};
  SmallVector<int64_t> shape(xt.getShape().take_front(2));
  bool padded = false;
  for (int64_t i = 0; i < ns; ++i) {
    int64_t eff = (w.kernel[i] - 1) * w.dilations[i] + 1;
    // ceil_mode windows may run past the high padding: pad further.
    int64_t need = (w.out[i] - 1) * w.strides[i] + eff;
    int64_t high =
        std::max(w.padHigh[i], need - xt.getDimSize(i + 2) - w.padLow[i]);
    lo.push_back(w.padLow[i]);
    hi.push_back(high);
    padded |= w.padLow[i] || high;
    shape.push_back(xt.getDimSize(i + 2) + w.padLow[i] + high);
  }
  // The identity of max: -inf, or the least value of the integer type.
  auto lowest = [&]() -> Value {
    if (auto ft = dyn_cast<FloatType>(elt))
      return arith::ConstantOp::create(
          builder, curLoc,
          builder.getFloatAttr(elt,
                               APFloat::getInf(ft.getFloatSemantics(), true)));
    unsigned width = elt.getIntOrFloatBitWidth();
    return arith::ConstantOp::create(
        builder, curLoc,
        builder.getIntegerAttr(elt, isUnsigned
                                        ? APInt::getMinValue(width)
                                        : APInt::getSignedMinValue(width)));
  };
  if (padded) {
    Value padVal = isMax ? lowest() : scalarConst(builder, curLoc, elt, 0);
    x = pad(x, placed(shape, elt), lo, hi, padVal);
  }
  // Loops: (n, c, o_1..o_s, k_1..k_s); the window tensor gives k's bounds.
  int64_t loops = 2 + 2 * ns;
  auto d = [&](int64_t i) { return builder.getAffineDimExpr(i); };
  SmallVector<AffineExpr> xe = {d(0), d(1)}, ke, oe = {d(0), d(1)};
  for (int64_t i = 0; i < ns; ++i) {
    xe.push_back(d(2 + i) * w.strides[i] + d(2 + ns + i) * w.dilations[i]);
    ke.push_back(d(2 + ns + i));
    oe.push_back(d(2 + i));
  }
  SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, xe, ctx),
                                 AffineMap::get(loops, 0, ke, ctx),
                                 AffineMap::get(loops, 0, oe, ctx)};
  SmallVector<utils::IteratorType> iters(2 + ns, utils::IteratorType::parallel);
  iters.append(ns, utils::IteratorType::reduction);
  SmallVector<int64_t> outShape(xt.getShape().take_front(2));
  llvm::append_range(outShape, w.out);
  Value window = empty(w.kernel, elt);
  Value init;
  if (isMax) {
    init = linalg::FillOp::create(builder, curLoc, ValueRange{lowest()},
                                  ValueRange{empty(outShape, elt)})
               .getResult(0);
  } else {
    init = filled(outShape, elt, 0);
  }
  bool isFloat = isa<FloatType>(elt);
  if (withIndices) {
    // Indices: the flat index of the first maximum of each window into the
    // unpadded input, (n * C + c) * prod(spatial) + the spatial position
    // in row-major (storage_order 0) or column-major (1) order, as the
    // ONNX reference. The window is scanned in row-major order and a later
    // element replaces the maximum only if it is strictly greater.
    maps.push_back(maps.back());
    Type i64 = builder.getI64Type();
    Value idxInit = filled(outShape, i64, 0);
    ArrayRef<int64_t> spatial = xt.getShape().drop_front(2);
    int64_t channels = xt.getDimSize(1);
    auto generic = linalg::GenericOp::create(
        builder, curLoc, TypeRange{init.getType(), idxInit.getType()},
        ValueRange{x, window}, ValueRange{init, idxInit}, maps, iters,
        [&](OpBuilder &b, Location loc, ValueRange args) {
          Value greater =
              isFloat
                  ? Value(arith::CmpFOp::create(
                        b, loc, arith::CmpFPredicate::OGT, args[0], args[2]))
                  : Value(arith::CmpIOp::create(b, loc,
                                                isUnsigned
                                                    ? arith::CmpIPredicate::ugt
                                                    : arith::CmpIPredicate::sgt,
                                                args[0], args[2]));
          auto cst = [&](int64_t v) -> Value {
            return arith::ConstantIndexOp::create(b, loc, v);
          };
          auto idx = [&](int64_t d) -> Value {
            return linalg::IndexOp::create(b, loc, d);
          };
          // Input coordinates of the element: o * stride + k * dilation -
          // padLow per spatial dim.
          SmallVector<Value> pos;
          for (int64_t i = 0; i < ns; ++i) {
            Value p = arith::AddIOp::create(
                b, loc,
                arith::MulIOp::create(b, loc, idx(2 + i), cst(w.strides[i])),
                arith::MulIOp::create(b, loc, idx(2 + ns + i),
                                      cst(w.dilations[i])));
            pos.push_back(arith::SubIOp::create(b, loc, p, cst(w.padLow[i])));
          }
          Value lin = cst(0);
          if (storageOrder == 0) {
            for (int64_t i = 0; i < ns; ++i)
              lin = arith::AddIOp::create(
                  b, loc, arith::MulIOp::create(b, loc, lin, cst(spatial[i])),
                  pos[i]);
          } else {
            for (int64_t i = ns - 1; i >= 0; --i)
              lin = arith::AddIOp::create(
                  b, loc, arith::MulIOp::create(b, loc, lin, cst(spatial[i])),
                  pos[i]);
          }
          Value plane = arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, idx(0), cst(channels)),
              idx(1));
          lin = arith::AddIOp::create(
              b, loc,
              arith::MulIOp::create(b, loc, plane, cst(numElements(spatial))),
              lin);
          Value linI64 = arith::IndexCastOp::create(b, loc, i64, lin);
          linalg::YieldOp::create(
              b, loc,
              ValueRange{
                  arith::SelectOp::create(b, loc, greater, args[0], args[2]),
                  arith::SelectOp::create(b, loc, greater, linI64, args[3])});
        });
    setOutput(0, generic.getResult(0));
    setOutput(1, generic.getResult(1), /*isUnsigned=*/false);
    return success();
  }
  Value r =
      linalg::GenericOp::create(
          builder, curLoc, TypeRange{init.getType()}, ValueRange{x, window},
          ValueRange{init}, maps, iters,
          [&](OpBuilder &b, Location loc, ValueRange args) {
            Value v =
                !isMax ? Value(arith::AddFOp::create(b, loc, args[2], args[0]))
                : isFloat
                    ? Value(arith::MaximumFOp::create(b, loc, args[2], args[0]))
                : isUnsigned
                    ? Value(arith::MaxUIOp::create(b, loc, args[2], args[0]))
                    : Value(arith::MaxSIOp::create(b, loc, args[2], args[0]));
            linalg::YieldOp::create(b, loc, v);
          })
          .getResult(0);
  if (!isMax) {
    // Divisor per output position: the window positions inside the input
    // (count_include_pad=0) or inside the input and its pads
    // (count_include_pad=1); ceil_mode's extra high padding never counts.
    bool includePad = attrInt("count_include_pad", 0) != 0;
    SmallVector<SmallVector<int64_t>> counts(ns);
    bool uniform = true;
    for (int64_t i = 0; i < ns; ++i) {
      int64_t size = xt.getDimSize(i + 2);
      int64_t lo = includePad ? -w.padLow[i] : 0;
      int64_t hi = includePad ? size + w.padHigh[i] : size;
      for (int64_t o = 0; o < w.out[i]; ++o) {
        int64_t cnt = 0;
        for (int64_t k = 0; k < w.kernel[i]; ++k) {
          int64_t pos = o * w.strides[i] - w.padLow[i] + k * w.dilations[i];
          cnt += pos >= lo && pos < hi;
        }
        counts[i].push_back(cnt);
        uniform &= cnt == w.kernel[i];
      }
    }
    if (uniform) {
      r = scale(r, 1.0 / numElements(w.kernel));
    } else {
      SmallVector<int64_t> outStrides = stridesOf(w.out);
      SmallVector<double> divisor(numElements(w.out));
      for (int64_t lin = 0; lin < static_cast<int64_t>(divisor.size()); ++lin) {
        int64_t prod = 1;
        for (int64_t i = 0; i < ns; ++i)
          prod *= counts[i][(lin / outStrides[i]) % w.out[i]];
        divisor[lin] = std::max<int64_t>(prod, 1);
      }
      Value c = arith::ConstantOp::create(
          builder, curLoc,
          floatsAttr(w.out, elt, divisor).reshape(placed(w.out, elt)));
      r = *elementwise(
          {r, c}, elt, [](OpBuilder &b, Location loc, ArrayRef<Value> v) {
            return Value(arith::DivFOp::create(b, loc, v[0], v[1]));
          });
    }
  }
  setOutput(0, r);
  return success();
}

//===----------------------------------------------------------------------===//
// InstanceNormalization
//===----------------------------------------------------------------------===//

FailureOr<Value> Importer::normalizeFrom(Value x, int64_t firstAxis,
                                         double eps) {
  auto type = cast<RankedTensorType>(x.getType());
  Type elt = type.getElementType();
  SmallVector<int64_t> axes;
  for (int64_t d = firstAxis; d < type.getRank(); ++d)
    axes.push_back(d);
  int64_t count = numElements(type.getShape().drop_front(firstAxis));
  if (count == 0)
    return fail("nothing to normalize over (an empty dim)");
  auto binary = [&](StringRef op, Value a, Value b) {
    return *elementwise({a, b}, elt,
                        [&](OpBuilder &bb, Location loc, ArrayRef<Value> v) {
                          return emitScalar(bb, loc, op, v, 0, 0);
                        });
  };
  Value mean = scale(reduce(x, axes, ReduceKind::Sum, true), 1.0 / count);
  Value centered = binary("Sub", x, mean);
  Value sq = *elementwise(
      {centered}, elt, [](OpBuilder &b, Location loc, ArrayRef<Value> v) {
        return Value(arith::MulFOp::create(b, loc, v[0], v[0]));
      });
  Value var = scale(reduce(sq, axes, ReduceKind::Sum, true), 1.0 / count);
  Value invStd = *elementwise(
      {var}, elt, [&](OpBuilder &b, Location loc, ArrayRef<Value> v) {
        Value e = arith::ConstantOp::create(b, loc, b.getFloatAttr(elt, eps));
        return Value(math::RsqrtOp::create(
            b, loc, arith::AddFOp::create(b, loc, v[0], e)));
      });
  return binary("Mul", centered, invStd);
}

/// y * scale + bias, with scale and bias of shape [C] broadcast along dim 1
/// of y ([N, C, ...]).
FailureOr<Value> Importer::scaleChannels(Value y, unsigned scaleInput,
                                         unsigned biasInput) {
  auto type = cast<RankedTensorType>(y.getType());
  int64_t channels = type.getDimSize(1);
  SmallVector<int64_t> perChannel(type.getRank() - 1, 1);
  perChannel[0] = channels;
  for (unsigned i : {scaleInput, biasInput}) {
    if (inType(i).getRank() != 1 || inShape(i)[0] != channels)
      return fail(Twine(i == scaleInput ? "scale" : "bias") + " must have " +
                  Twine(channels) + " elements (one per channel), got shape " +
                  shapeStr(inShape(i)));
    if (inElt(i) != type.getElementType())
      return fail("scale and bias must have the input's element type");
  }
  Type elt = type.getElementType();
  Value s = reshape(inValue(scaleInput), perChannel);
  Value b = reshape(inValue(biasInput), perChannel);
  return elementwise(
      {y, s, b}, elt, [](OpBuilder &bb, Location loc, ArrayRef<Value> v) {
        return Value(arith::AddFOp::create(
            bb, loc, arith::MulFOp::create(bb, loc, v[0], v[1]), v[2]));
      });
}

/// The input, scale and bias of InstanceNormalization and
/// GroupNormalization: a float tensor [N, C, D1, ...].
LogicalResult Importer::checkChannelNormOperands() {
  if (!hasInput(0) || !hasInput(1) || !hasInput(2))
    return fail("expects input, scale and bias");
  RankedTensorType type = inType(0);
  if (!isa<FloatType>(type.getElementType()))
    return fail("integer operands are not supported");
  if (type.getRank() < 3)
    return fail("input must have rank >= 3 ([N, C, D1, ...]), got " +
                Twine(type.getRank()));
  return success();
}

LogicalResult Importer::importInstanceNorm() {
  if (failed(checkChannelNormOperands()))
    return failure();
  FailureOr<Value> y =
      normalizeFrom(inValue(0), 2, attrFloat("epsilon", 1e-5f));
  if (failed(y))
    return failure();
  FailureOr<Value> out = scaleChannels(*y, 1, 2);
  if (failed(out))
    return failure();
  setOutput(0, *out);
  return success();
}

LogicalResult Importer::importGroupNorm() {
  if (failed(checkChannelNormOperands()))
    return failure();
  RankedTensorType type = inType(0);
  if (!attr("num_groups"))
    return fail("expects the num_groups attribute");
  int64_t groups = attrInt("num_groups", 0), channels = type.getDimSize(1);
  if (groups < 1 || channels % groups != 0)
    return fail("num_groups " + Twine(groups) + " must divide the " +
                Twine(channels) + " channels");
  // Opset 18: one scale and one bias per group (opset 21: per channel).
  for (unsigned i : {1u, 2u})
    if (inType(i).getRank() != 1 || inShape(i)[0] != groups)
      return fail(Twine(i == 1 ? "scale" : "bias") + " must have " +
                  Twine(groups) + " elements (one per group), got shape " +
                  shapeStr(inShape(i)));
  // [N, C, D...] -> [N, G, C/G * D...]: normalized and scaled per (n, g)
  // like InstanceNormalization's channels, then back.
  int64_t perGroup = channels / groups;
  for (int64_t d : type.getShape().drop_front(2))
    perGroup *= d;
  Value grouped = reshape(inValue(0), {type.getDimSize(0), groups, perGroup});
  FailureOr<Value> y = normalizeFrom(grouped, 2, attrFloat("epsilon", 1e-5f));
  if (failed(y))
    return failure();
  FailureOr<Value> scaled = scaleChannels(*y, 1, 2);
  if (failed(scaled))
    return failure();
  setOutput(0, reshape(*scaled, type.getShape()));
  return success();
}

//===----------------------------------------------------------------------===//
// ConvTranspose
//===----------------------------------------------------------------------===//

/// ConvTranspose before its pads, without multiplying zeros. Along one
/// spatial dim, output o = i * s + k * d receives x[i] * w[k]; the outputs
/// of phase r (o = q * s + r) receive only the taps k with k * d = r
/// (mod s), which are k0 + j * (s / g) (g = gcd(d, s)), and read
/// x[q - t0 - j * (d / g)] with t0 = (k0 * d - r) / s. So each phase (a
/// tuple of per-dim phases) is a stride-1 correlation of the input, padded
/// with the few zeros its taps reach past the edges, with a sub-kernel: one
/// linalg.generic, inserted into the full output with stride s. The
/// multiply-adds are the transposed convolution's own, not s^dims times
/// them as for the zero-dilated input.
Value Importer::emitConvTranspose(Value x, Value weight, int64_t group,
                                  int64_t cg, int64_t fg,
                                  ArrayRef<int64_t> strides,
                                  ArrayRef<int64_t> dilations,
                                  ArrayRef<int64_t> full) {
  auto xt = cast<RankedTensorType>(x.getType());
  auto wt = cast<RankedTensorType>(weight.getType());
  Type elt = xt.getElementType();
  int64_t ns = xt.getRank() - 2, n = xt.getDimSize(0), f = fg * group;
  // Per dim and phase r: first tap k0, tap count J, offset t0.
  struct Phase {
    int64_t k0 = 0, taps = 0, t0 = 0, positions = 0;
  };
  SmallVector<SmallVector<Phase>> phases(ns);
  SmallVector<int64_t> padLo(ns, 0), padHi(ns, 0), step(ns), slope(ns);
  for (int64_t i = 0; i < ns; ++i) {
    int64_t s = strides[i], d = dilations[i], kernel = wt.getDimSize(2 + i);
    int64_t in = xt.getDimSize(2 + i), g = std::gcd(d, s);
    step[i] = s / g;
    slope[i] = d / g;
    for (int64_t r = 0; r < s; ++r) {
      Phase p;
      p.positions = r < full[i] ? (full[i] - r + s - 1) / s : 0;
      int64_t k0 = 0;
      while (k0 < std::min(kernel, step[i]) && (k0 * d) % s != r)
        ++k0;
      if (k0 < kernel && (k0 * d) % s == r && p.positions > 0) {
        p.k0 = k0;
        p.taps = (kernel - 1 - k0) / step[i] + 1;
        p.t0 = (k0 * d - r) / s;
        // x index q - t0 - j * slope ranges over
        // [-(t0 + (taps - 1) * slope), positions - 1 - t0].
        padLo[i] = std::max(padLo[i], p.t0 + (p.taps - 1) * slope[i]);
        padHi[i] = std::max(padHi[i], p.positions - 1 - p.t0 - (in - 1));
      }
      phases[i].push_back(p);
    }
  }
  // The input with the zeros the taps reach past its edges.
  SmallVector<int64_t> lo = {0, 0}, hi = {0, 0}, paddedShape = {n, cg * group};
  for (int64_t i = 0; i < ns; ++i) {
    lo.push_back(padLo[i]);
    hi.push_back(padHi[i]);
    paddedShape.push_back(xt.getDimSize(2 + i) + padLo[i] + padHi[i]);
  }
  Value xp = llvm::any_of(padLo, [](int64_t v) { return v > 0; }) ||
                     llvm::any_of(padHi, [](int64_t v) { return v > 0; })
                 ? pad(x, placed(paddedShape, elt), lo, hi,
                       scalarConst(builder, curLoc, elt, 0))
                 : x;
  SmallVector<int64_t> fullShape = {n, f};
  llvm::append_range(fullShape, full);
  Value y = filled(fullShape, elt, 0);
  // Loops: (n, [g,] f, q_1..q_ns, c, j_1..j_ns), as emitConv's.
  int64_t base = group > 1 ? 1 : 0, loops = 3 + base + 2 * ns;
  auto d = [&](int64_t i) { return builder.getAffineDimExpr(i); };
  AffineExpr g = group > 1 ? d(1) : builder.getAffineConstantExpr(0);
  AffineExpr fo = d(1 + base), ci = d(2 + base + ns);
  SmallVector<int64_t> phase(ns, 0);
  while (true) {
    bool noTaps = false;
    SmallVector<int64_t> positions, taps;
    for (int64_t i = 0; i < ns; ++i) {
      const Phase &p = phases[i][phase[i]];
      noTaps |= p.taps == 0 || p.positions == 0;
      positions.push_back(p.positions);
      taps.push_back(p.taps);
    }
    if (!noTaps) {
      SmallVector<AffineExpr> xe = {d(0), g * cg + ci}, we = {g * cg + ci, fo},
                              oe = {d(0), g * fg + fo}, je;
      for (int64_t i = 0; i < ns; ++i) {
        const Phase &p = phases[i][phase[i]];
        AffineExpr q = d(2 + base + i), j = d(3 + base + ns + i);
        xe.push_back(q + (padLo[i] - p.t0) - j * slope[i]);
        we.push_back(j * step[i] + p.k0);
        oe.push_back(q);
        je.push_back(j);
      }
      SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, xe, ctx),
                                     AffineMap::get(loops, 0, we, ctx)};
      SmallVector<Value> inputs = {xp, weight};
      if (group > 1) {
        maps.push_back(AffineMap::get(loops, 0, {d(1), fo}, ctx));
        inputs.push_back(empty({group, fg}, elt));
      }
      // The input channel and the taps' loops appear in no operand as
      // plain dims (W reads g * cg + c): a shape-only operand bounds them.
      je.insert(je.begin(), ci);
      SmallVector<int64_t> bounds = {cg};
      llvm::append_range(bounds, taps);
      maps.push_back(AffineMap::get(loops, 0, je, ctx));
      inputs.push_back(empty(bounds, elt));
      maps.push_back(AffineMap::get(loops, 0, oe, ctx));
      SmallVector<utils::IteratorType> iters(2 + base + ns,
                                             utils::IteratorType::parallel);
      iters.append(1 + ns, utils::IteratorType::reduction);
      SmallVector<int64_t> outShape = {n, f};
      llvm::append_range(outShape, positions);
      Value part = multiplyAccumulate(inputs, maps, iters, outShape, elt);
      SmallVector<int64_t> offsets = {0, 0}, strideOf = {1, 1};
      for (int64_t i = 0; i < ns; ++i) {
        offsets.push_back(phase[i]);
        strideOf.push_back(strides[i]);
      }
      y = tensor::InsertSliceOp::create(builder, curLoc, part, y, ValueRange{},
                                        ValueRange{}, ValueRange{}, offsets,
                                        outShape, strideOf);
    }
    // Next phase tuple (the last dim fastest).
    int64_t i = ns - 1;
    while (i >= 0 && ++phase[i] == strides[i])
      phase[i--] = 0;
    if (i < 0)
      break;
  }
  return y;
}

/// ConvTranspose: the full output (every position a tap reaches, plus
/// output_padding) from emitConvTranspose, then the pads crop it (negative
/// pads extend it with zeros) and the bias is added.
LogicalResult Importer::importConvTranspose() {
  if (!hasInput(0) || !hasInput(1))
    return fail("expects X and W");
  RankedTensorType xt = inType(0), wt = inType(1);
  Type elt = xt.getElementType();
  if (!isa<FloatType>(elt) || wt.getElementType() != elt)
    return fail("X and W must be float tensors of one element type");
  int64_t rank = xt.getRank();
  if (rank < 3 || wt.getRank() != rank)
    return fail("X and W must have the same rank >= 3");
  int64_t ns = rank - 2, group = attrInt("group", 1);
  int64_t n = xt.getDimSize(0), c = xt.getDimSize(1), fg = wt.getDimSize(1);
  if (group <= 0 || c % group || wt.getDimSize(0) != c)
    return fail("channels " + Twine(c) + " and group " + Twine(group) +
                " do not match W " + shapeStr(wt.getShape()));
  int64_t f = fg * group;
  SmallVector<int64_t> kernel(wt.getShape().drop_front(2));
  if (auto k = attrInts("kernel_shape"); k && *k != kernel)
    return fail("kernel_shape differs from W's shape");
  auto perDim = [&](StringRef name,
                    int64_t dflt) -> FailureOr<SmallVector<int64_t>> {
    SmallVector<int64_t> v =
        attrInts(name).value_or(SmallVector<int64_t>(ns, dflt));
    if (static_cast<int64_t>(v.size()) != ns)
      return (void)fail(name + " must have one value per spatial dim"),
             failure();
    return v;
  };
  FailureOr<SmallVector<int64_t>> strides = perDim("strides", 1);
  FailureOr<SmallVector<int64_t>> dilations = perDim("dilations", 1);
  FailureOr<SmallVector<int64_t>> outPad = perDim("output_padding", 0);
  if (failed(strides) || failed(dilations) || failed(outPad))
    return failure();
  std::string autoPad = attrString("auto_pad", "NOTSET");
  std::optional<SmallVector<int64_t>> outputShape = attrInts("output_shape");
  if (outputShape && static_cast<int64_t>(outputShape->size()) == rank)
    outputShape->erase(outputShape->begin(), outputShape->begin() + 2);
  if (outputShape && static_cast<int64_t>(outputShape->size()) != ns)
    return fail("output_shape must have one value per spatial dim");
  std::optional<SmallVector<int64_t>> pads = attrInts("pads");
  if (pads && static_cast<int64_t>(pads->size()) != 2 * ns)
    return fail("pads must have two values per spatial dim");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return fail("unknown auto_pad '" + autoPad + "'");

  SmallVector<int64_t> full, begin, out;
  for (int64_t i = 0; i < ns; ++i) {
    int64_t in = xt.getDimSize(2 + i), s = (*strides)[i];
    int64_t d = (*dilations)[i], op = (*outPad)[i];
    if (op < 0 || op >= std::max(s, d))
      return fail("output_padding " + Twine(op) +
                  " must be below the stride or the dilation");
    int64_t eff = (kernel[i] - 1) * d + 1;
    int64_t whole = s * (in - 1) + op + eff;
    int64_t padBegin = 0, padEnd = 0;
    if (outputShape || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      // The spec's total padding, split as ONNX's reference splits it.
      int64_t target = outputShape ? (*outputShape)[i] : in * s;
      // A negative total extends the output (zeros, then the bias), as
      // ONNX's reference does with its floor division.
      int64_t total = whole - target;
      int64_t half = llvm::divideFloorSigned(total, int64_t(2));
      padBegin = autoPad == "SAME_UPPER" ? half : total - half;
      padEnd = total - padBegin;
    } else if (pads && autoPad == "NOTSET") {
      padBegin = (*pads)[i];
      padEnd = (*pads)[i + ns];
    }
    if (padBegin + padEnd >= whole || padBegin >= whole || padEnd >= whole ||
        -padBegin > kMaxRangeElements || -padEnd > kMaxRangeElements)
      return fail("pads " + Twine(padBegin) + " and " + Twine(padEnd) +
                  " leave no output of the " + Twine(whole) + " positions");
    full.push_back(whole);
    begin.push_back(padBegin);
    out.push_back(whole - padBegin - padEnd);
  }
  Value r = emitConvTranspose(inValue(0), inValue(1), group, c / group, fg,
                              *strides, *dilations, full);
  // Positive pads crop the full output; negative ones extend it.
  SmallVector<int64_t> offsets = {0, 0}, sizes = {n, f}, extendLo = {0, 0},
                       extendHi = {0, 0};
  bool crop = false, extend = false;
  for (int64_t i = 0; i < ns; ++i) {
    int64_t padEnd = full[i] - begin[i] - out[i];
    offsets.push_back(std::max<int64_t>(0, begin[i]));
    sizes.push_back(full[i] - offsets.back() - std::max<int64_t>(0, padEnd));
    extendLo.push_back(std::max<int64_t>(0, -begin[i]));
    extendHi.push_back(std::max<int64_t>(0, -padEnd));
    crop |= sizes.back() != full[i];
    extend |= extendLo.back() || extendHi.back();
  }
  if (crop)
    r = extractSlice(r, offsets, sizes, SmallVector<int64_t>(rank, 1));
  if (extend) {
    SmallVector<int64_t> shape = {n, f};
    llvm::append_range(shape, out);
    r = pad(r, placed(shape, elt), extendLo, extendHi,
            scalarConst(builder, curLoc, elt, 0));
  }
  FailureOr<Value> biased = addChannelBias(r, f, ns);
  if (failed(biased))
    return failure();
  setOutput(0, *biased);
  return success();
}
