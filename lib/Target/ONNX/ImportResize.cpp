//===- ImportResize.cpp - ONNX Resize as per-axis structured ops ----------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Shapes are static, so every output position's source coordinate is known
// at import time: Resize is separable into one linear map per resized axis,
// out[.., o, ..] = sum_i M[o, i] * x[.., i, ..] (+ the extrapolation value
// where tf_crop_and_resize leaves the input). M follows ONNX's reference:
// the coordinate transformation, then nearest (rounding per nearest_mode),
// linear (2 taps) or cubic (4 taps, cubic_coeff_a, exclude_outside), with
// the input's edge values beyond its ends. An axis whose M repeats each
// input k times (nearest upsampling by an integer factor, U-Net's
// Upsample) is a broadcast and a collapse; any other is a contraction with
// the constant M: structured ops that keep the batch split and
// differentiate like any linalg op. The contraction counts in * out
// multiply-adds per position where an interpolation kernel reads 1-4
// inputs.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include <cmath>

using namespace mlir;
using namespace distir;
using namespace distir::onnx_import;

namespace {
/// One axis's interpolation: M (out x in, row-major) and, per output
/// position, whether it lies outside the input (tf_crop_and_resize).
struct AxisMap {
  int64_t in, out;
  std::vector<double> weights;
  std::vector<bool> outside;
};
} // namespace

/// Source coordinate of output position `o` (ONNX's
/// coordinate_transformation_mode). The resized length is in * scale,
/// unrounded (the spec's length_resized; the output has its floor).
static double sourceCoord(StringRef mode, int64_t o, int64_t in, double scale,
                          double roiStart, double roiEnd) {
  double x = static_cast<double>(o);
  double out = in * scale;
  if (mode == "half_pixel")
    return (x + 0.5) / scale - 0.5;
  if (mode == "pytorch_half_pixel")
    return out > 1 ? (x + 0.5) / scale - 0.5 : 0;
  if (mode == "align_corners")
    return out == 1 ? 0 : x * (in - 1) / (out - 1);
  if (mode == "asymmetric")
    return x / scale;
  if (mode == "tf_half_pixel_for_nn")
    return (x + 0.5) / scale;
  // tf_crop_and_resize
  return out > 1 ? roiStart * (in - 1) +
                       x * (roiEnd - roiStart) * (in - 1) / (out - 1)
                 : 0.5 * (roiStart + roiEnd) * (in - 1);
}

/// Cubic convolution coefficients of taps floor-1 .. floor+2 at `ratio`.
static std::array<double, 4> cubicCoeffs(double r, double a) {
  auto outer = [&](double t) {
    return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
  };
  auto inner = [&](double t) { return ((a + 2) * t - (a + 3)) * t * t + 1; };
  return {outer(r + 1), inner(r), inner(1 - r), outer(2 - r)};
}

/// Builds axis `d`'s map, or an error message.
static std::string buildAxisMap(AxisMap &m, StringRef mode, StringRef coordMode,
                                StringRef nearestMode, double scale,
                                double roiStart, double roiEnd, double cubicA,
                                bool excludeOutside) {
  m.weights.assign(m.out * m.in, 0);
  m.outside.assign(m.out, false);
  auto clampIdx = [&](int64_t i) {
    return std::clamp<int64_t>(i, 0, m.in - 1);
  };
  for (int64_t o = 0; o < m.out; ++o) {
    double x = sourceCoord(coordMode, o, m.in, scale, roiStart, roiEnd);
    if (!std::isfinite(x))
      return "the source coordinate of output " + std::to_string(o) +
             " is not finite";
    double *row = &m.weights[o * m.in];
    if (coordMode == "tf_crop_and_resize" && (x < 0 || x > m.in - 1)) {
      m.outside[o] = true;
      continue;
    }
    if (mode == "nearest") {
      double f = std::floor(x);
      bool tie = x - f == 0.5;
      double i = nearestMode == "floor"  ? f
                 : nearestMode == "ceil" ? std::ceil(x)
                 : tie ? (nearestMode == "round_prefer_ceil" ? f + 1 : f)
                       : std::round(x);
      row[clampIdx(static_cast<int64_t>(i))] += 1;
      continue;
    }
    double f = std::floor(x), r = x - f;
    int64_t x0 = static_cast<int64_t>(f);
    if (mode == "linear") {
      row[clampIdx(x0)] += 1 - r;
      row[clampIdx(x0 + 1)] += r;
      continue;
    }
    // cubic: taps x0-1 .. x0+2 (an integer x is tap x0 with ratio 0).
    std::array<double, 4> c = cubicCoeffs(r, cubicA);
    double kept = 0;
    for (int t = 0; t < 4; ++t) {
      int64_t i = x0 - 1 + t;
      if (excludeOutside && (i < 0 || i >= m.in))
        c[t] = 0;
      kept += c[t];
    }
    for (int t = 0; t < 4; ++t)
      row[clampIdx(x0 - 1 + t)] +=
          excludeOutside && kept != 0 ? c[t] / kept : c[t];
  }
  return "";
}

/// The repeat factor k when row o of `m` reads input o / k with weight 1
/// (nearest upsampling by an integer factor), else 0.
static int64_t repeatFactor(const AxisMap &m) {
  if (m.out % m.in != 0)
    return 0;
  int64_t k = m.out / m.in;
  for (int64_t o = 0; o < m.out; ++o) {
    if (m.outside[o])
      return 0;
    for (int64_t i = 0; i < m.in; ++i)
      if (m.weights[o * m.in + i] != (i == o / k ? 1.0 : 0.0))
        return 0;
  }
  return k;
}

LogicalResult Importer::importResize() {
  if (!hasInput(0))
    return fail("expects X");
  RankedTensorType type = inType(0);
  Type elt = type.getElementType();
  if (!isa<FloatType>(elt))
    return fail("integer operands are not supported");
  int64_t rank = type.getRank();
  bool v10 = opset < 11;
  std::string mode = attrString("mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    return fail("unsupported mode '" + mode + "'");
  if (v10 && mode == "cubic")
    return fail("cubic mode needs opset 11");
  // Opset 18's additions, at their defaults only.
  if (attrInt("antialias", 0) != 0)
    return fail("antialias is not supported");
  if (attr("axes"))
    return fail("the axes attribute is not supported (give scales or sizes "
                "for every dim)");
  if (attrString("keep_aspect_ratio_policy", "stretch") != "stretch")
    return fail("keep_aspect_ratio_policy '" +
                attrString("keep_aspect_ratio_policy", "") +
                "' is not supported (only stretch)");
  // Opset 10 is the asymmetric transformation with floor rounding.
  std::string coordMode =
      v10 ? "asymmetric"
          : attrString("coordinate_transformation_mode", "half_pixel");
  std::string nearestMode =
      v10 ? "floor" : attrString("nearest_mode", "round_prefer_floor");
  if (!llvm::is_contained({"half_pixel", "pytorch_half_pixel", "align_corners",
                           "asymmetric", "tf_half_pixel_for_nn",
                           "tf_crop_and_resize"},
                          StringRef(coordMode)))
    return fail("unsupported coordinate_transformation_mode '" + coordMode +
                "'");
  if (!llvm::is_contained(
          {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"},
          StringRef(nearestMode)))
    return fail("unsupported nearest_mode '" + nearestMode + "'");

  unsigned roiInput = 1, scalesInput = v10 ? 1 : 2, sizesInput = 3;
  auto given = [&](unsigned i) {
    return hasInput(i) && numElements(inShape(i)) > 0;
  };
  SmallVector<double> scales(rank, 1.0), roi;
  SmallVector<int64_t> outShape(type.getShape());
  if (given(scalesInput)) {
    if (!isKnown(scalesInput))
      return fail("unresolvable dynamic shape: scales ('" +
                  curNode->input(scalesInput) +
                  "') is not known at import time");
    SmallVector<double> s = knownFloatsOf(scalesInput);
    if (static_cast<int64_t>(s.size()) != rank)
      return fail("scales must have one value per dim");
    for (int64_t d = 0; d < rank; ++d) {
      if (!(s[d] > 0) || !std::isfinite(s[d]))
        return fail("scale " + std::to_string(s[d]) + " of dim " + Twine(d) +
                    " must be positive and finite");
      double size = std::floor(type.getDimSize(d) * s[d]);
      if (size > static_cast<double>(kMaxRangeElements))
        return fail("dim " + Twine(d) + " of the result is too large");
      outShape[d] = static_cast<int64_t>(size);
      scales[d] = s[d];
    }
  } else if (!v10 && given(sizesInput)) {
    FailureOr<SmallVector<int64_t>> s = knownInts(sizesInput, "sizes");
    if (failed(s))
      return failure();
    if (static_cast<int64_t>(s->size()) != rank)
      return fail("sizes must have one value per dim");
    for (int64_t d = 0; d < rank; ++d) {
      if ((*s)[d] <= 0 || (*s)[d] > kMaxRangeElements)
        return fail("size " + Twine((*s)[d]) + " of dim " + Twine(d) +
                    " is out of range");
      outShape[d] = (*s)[d];
      scales[d] = static_cast<double>((*s)[d]) / type.getDimSize(d);
    }
  } else {
    return fail("expects scales or sizes");
  }
  if (numElements(outShape) > kMaxRangeElements)
    return fail("the result has more than " + Twine(kMaxRangeElements) +
                " elements");
  if (coordMode == "tf_crop_and_resize") {
    if (!given(roiInput))
      return fail("tf_crop_and_resize needs a roi");
    if (!isKnown(roiInput))
      return fail("unresolvable dynamic shape: roi ('" +
                  curNode->input(roiInput) + "') is not known at import time");
    roi = knownFloatsOf(roiInput);
    if (static_cast<int64_t>(roi.size()) != 2 * rank)
      return fail("roi must have two values per dim");
  }
  double cubicA = attrFloat("cubic_coeff_a", -0.75f);
  bool excludeOutside = attrInt("exclude_outside", 0) != 0;
  double extrapolation = attrFloat("extrapolation_value", 0);

  Value x = inValue(0);
  for (int64_t d = 0; d < rank; ++d) {
    AxisMap m{type.getDimSize(d), outShape[d], {}, {}};
    if (m.in == 0 || m.out == 0)
      return fail("dim " + Twine(d) + " is empty");
    std::string err = buildAxisMap(
        m, mode, coordMode, nearestMode, scales[d], roi.empty() ? 0 : roi[d],
        roi.empty() ? 1 : roi[d + rank], cubicA, excludeOutside);
    if (!err.empty())
      return fail(err);
    bool identity = m.in == m.out;
    for (int64_t o = 0; identity && o < m.out; ++o)
      identity = !m.outside[o] && m.weights[o * m.in + o] == 1.0;
    if (identity)
      continue;
    auto xt = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> shape(xt.getShape());
    shape[d] = m.out;
    if (int64_t k = repeatFactor(m)) {
      // [.., in, ..] -> [.., in, k, ..] (broadcast) -> [.., in * k, ..].
      SmallVector<int64_t> wide(xt.getShape());
      wide.insert(wide.begin() + d + 1, k);
      SmallVector<AffineExpr> inExprs;
      SmallVector<ReassociationIndices> groups;
      for (int64_t j = 0; j < rank + 1; ++j) {
        if (j != d + 1)
          inExprs.push_back(builder.getAffineDimExpr(j));
        if (j == d + 1)
          groups.back().push_back(j);
        else
          groups.push_back({j});
      }
      SmallVector<AffineMap> maps = {AffineMap::get(rank + 1, 0, inExprs, ctx),
                                     builder.getMultiDimIdentityMap(rank + 1)};
      Value init = empty(wide, elt);
      Value b = linalg::GenericOp::create(
                    builder, curLoc, TypeRange{init.getType()}, ValueRange{x},
                    ValueRange{init}, maps,
                    SmallVector<utils::IteratorType>(
                        rank + 1, utils::IteratorType::parallel),
                    [](OpBuilder &bb, Location loc, ValueRange args) {
                      linalg::YieldOp::create(bb, loc, args[0]);
                    })
                    .getResult(0);
      x = tensor::CollapseShapeOp::create(builder, curLoc, placed(shape, elt),
                                          b, groups);
      continue;
    }
    // out[.., o, ..] = sum_i M[o, i] x[.., i, ..] (+ extrapolation).
    bool anyOutside = llvm::is_contained(m.outside, true);
    SmallVector<double> bias;
    for (int64_t o = 0; o < m.out; ++o)
      bias.push_back(m.outside[o] ? extrapolation : 0);
    Value mat =
        arith::ConstantOp::create(builder, curLoc,
                                  floatsAttr({m.out, m.in}, elt, m.weights)
                                      .reshape(placed({m.out, m.in}, elt)));
    // Loops: x's dims with dim d as the output position, then i.
    SmallVector<AffineExpr> xe, oe;
    for (int64_t j = 0; j < rank; ++j) {
      xe.push_back(builder.getAffineDimExpr(j == d ? rank : j));
      oe.push_back(builder.getAffineDimExpr(j));
    }
    AffineExpr od = builder.getAffineDimExpr(d),
               id = builder.getAffineDimExpr(rank);
    SmallVector<AffineMap> maps = {AffineMap::get(rank + 1, 0, xe, ctx),
                                   AffineMap::get(rank + 1, 0, {od, id}, ctx),
                                   AffineMap::get(rank + 1, 0, oe, ctx)};
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    iters.push_back(utils::IteratorType::reduction);
    Value init = filled(shape, elt, 0);
    if (anyOutside) {
      // The extrapolation value where the row lies outside the input.
      Value b = arith::ConstantOp::create(
          builder, curLoc,
          floatsAttr({m.out}, elt, bias).reshape(placed({m.out}, elt)));
      SmallVector<AffineMap> bmaps = {
          AffineMap::get(rank, 0, {builder.getAffineDimExpr(d)}, ctx),
          builder.getMultiDimIdentityMap(rank)};
      Value e = empty(shape, elt);
      init = linalg::GenericOp::create(
                 builder, curLoc, TypeRange{e.getType()}, ValueRange{b},
                 ValueRange{e}, bmaps,
                 SmallVector<utils::IteratorType>(
                     rank, utils::IteratorType::parallel),
                 [](OpBuilder &bb, Location loc, ValueRange args) {
                   linalg::YieldOp::create(bb, loc, args[0]);
                 })
                 .getResult(0);
    }
    x = linalg::GenericOp::create(
            builder, curLoc, TypeRange{init.getType()}, ValueRange{x, mat},
            ValueRange{init}, maps, iters,
            [](OpBuilder &bb, Location loc, ValueRange args) {
              Value p = arith::MulFOp::create(bb, loc, args[0], args[1]);
              linalg::YieldOp::create(
                  bb, loc, Value(arith::AddFOp::create(bb, loc, args[2], p)));
            })
            .getResult(0);
  }
  setOutput(0, x);
  return success();
}
