//===- Rules.cpp - Split rules of data-movement ops -----------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// A data-movement op gets loops = its result's dimensions. A result
// dimension may be split into contiguous blocks when those blocks are
// blocks of one source dimension, so that each device moves its own part:
// then the source map sends the loop to that source dimension; every other
// source dimension is read whole (constant 0 in the map).
//
//===----------------------------------------------------------------------===//

#include "Tiles.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace distir::pase::detail;

namespace {

bool staticTensors(Operation *op) {
  auto isStatic = [](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return !tensor || tensor.hasStaticShape();
  };
  return llvm::all_of(op->getOperandTypes(), isStatic) &&
         llvm::all_of(op->getResultTypes(), isStatic);
}

/// A map from `loops` result dims to `operandRank` dims: `source[k]` is the
/// loop of operand dim k, or -1 (read whole).
AffineMap sourceMap(MLIRContext *context, unsigned loops,
                    ArrayRef<int64_t> source) {
  SmallVector<AffineExpr> exprs;
  for (int64_t loop : source)
    exprs.push_back(loop >= 0 ? getAffineDimExpr(loop, context)
                              : getAffineConstantExpr(0, context));
  return AffineMap::get(loops, 0, exprs, context);
}

} // namespace

std::optional<MovementRule>
distir::pase::detail::getMovementRule(Operation *op) {
  if (op->getNumResults() != 1 || !staticTensors(op))
    return std::nullopt;
  auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!result)
    return std::nullopt;
  MLIRContext *context = op->getContext();
  unsigned loops = result.getRank();
  MovementRule rule;
  rule.operandMaps.assign(op->getNumOperands(), AffineMap());
  rule.divisible.assign(result.getShape().begin(), result.getShape().end());
  rule.splittable.assign(loops, false);

  if (auto pad = dyn_cast<tensor::PadOp>(op)) {
    if (!pad.getLow().empty() || !pad.getHigh().empty())
      return std::nullopt; // dynamic padding
    SmallVector<int64_t> source;
    for (unsigned d = 0; d < loops; ++d) {
      bool unpadded = pad.getStaticLow()[d] == 0 && pad.getStaticHigh()[d] == 0;
      rule.splittable[d] = unpadded;
      source.push_back(unpadded ? static_cast<int64_t>(d) : -1);
    }
    rule.operandMaps[0] = sourceMap(context, loops, source);
    return rule;
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    auto src = collapse.getSrcType();
    SmallVector<int64_t> source(src.getRank(), -1);
    for (auto [j, group] :
         llvm::enumerate(collapse.getReassociationIndices())) {
      // Blocks of the merged dim are blocks of its outermost source dim.
      source[group.front()] = j;
      rule.splittable[j] = true;
      rule.divisible[j] = src.getDimSize(group.front());
    }
    rule.operandMaps[0] = sourceMap(context, loops, source);
    return rule;
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    auto src = expand.getSrcType();
    SmallVector<int64_t> source(src.getRank(), -1);
    for (auto [k, group] : llvm::enumerate(expand.getReassociationIndices())) {
      source[k] = group.front();
      rule.splittable[group.front()] = true;
    }
    rule.operandMaps[0] = sourceMap(context, loops, source);
    return rule;
  }
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    auto src = slice.getSourceType();
    if (!slice.getOffsets().empty() || !slice.getSizes().empty() ||
        !slice.getStrides().empty() || src.getRank() != result.getRank())
      return std::nullopt; // dynamic or rank-reducing
    SmallVector<int64_t> source;
    for (unsigned d = 0; d < loops; ++d) {
      bool whole = slice.getStaticOffsets()[d] == 0 &&
                   slice.getStaticSizes()[d] == src.getDimSize(d) &&
                   slice.getStaticStrides()[d] == 1;
      rule.splittable[d] = whole;
      source.push_back(whole ? static_cast<int64_t>(d) : -1);
    }
    rule.operandMaps[0] = sourceMap(context, loops, source);
    return rule;
  }
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    auto src = insert.getSourceType();
    if (!insert.getOffsets().empty() || !insert.getSizes().empty() ||
        !insert.getStrides().empty() || src.getRank() != result.getRank())
      return std::nullopt; // dynamic or rank-extending
    SmallVector<int64_t> source, dest;
    for (unsigned d = 0; d < loops; ++d) {
      // A dim the slice fills whole splits both the slice and the
      // destination alike (concatenations along another dim).
      bool whole = insert.getStaticOffsets()[d] == 0 &&
                   insert.getStaticSizes()[d] == result.getDimSize(d) &&
                   insert.getStaticStrides()[d] == 1;
      rule.splittable[d] = whole;
      source.push_back(whole ? static_cast<int64_t>(d) : -1);
      dest.push_back(d);
    }
    rule.operandMaps[0] = sourceMap(context, loops, source);
    rule.operandMaps[1] = sourceMap(context, loops, dest);
    return rule;
  }
  if (auto softmax = dyn_cast<linalg::SoftmaxOp>(op)) {
    // Rows are independent: every dim but the normalized one splits, and
    // input and output are read through the same blocks.
    SmallVector<int64_t> same;
    for (unsigned d = 0; d < loops; ++d) {
      rule.splittable[d] = d != softmax.getDimension();
      same.push_back(d);
    }
    rule.operandMaps[0] = sourceMap(context, loops, same);
    rule.operandMaps[1] = sourceMap(context, loops, same);
    return rule;
  }
  return std::nullopt;
}
