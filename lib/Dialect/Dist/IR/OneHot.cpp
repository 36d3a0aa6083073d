//===- OneHot.cpp - One-hot accumulations of structured ops ---------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Dialect/Dist/IR/OneHot.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace distir;

std::optional<OneHotAccumulation>
distir::matchOneHotAccumulation(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1)
    return std::nullopt;
  Block *body = op.getBody();
  BlockArgument acc = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return std::nullopt;
  Value other = add.getLhs() == acc   ? add.getRhs()
                : add.getRhs() == acc ? add.getLhs()
                                      : Value();
  auto select = other ? other.getDefiningOp<arith::SelectOp>() : nullptr;
  if (!select || !matchPattern(select.getFalseValue(), m_AnyZeroFloat()))
    return std::nullopt;
  auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq)
    return std::nullopt;
  for (auto [loopSide, indexSide] : {std::pair(cmp.getLhs(), cmp.getRhs()),
                                     std::pair(cmp.getRhs(), cmp.getLhs())}) {
    // (A shard's row shifted by its block's offset: v + c.)
    int64_t offset = 0;
    if (auto shift = loopSide.getDefiningOp<arith::AddIOp>())
      for (auto [a, c] : {std::pair(shift.getLhs(), shift.getRhs()),
                          std::pair(shift.getRhs(), shift.getLhs())}) {
        APInt constant;
        if (a.getDefiningOp<linalg::IndexOp>() &&
            matchPattern(c, m_ConstantInt(&constant))) {
          offset = constant.getSExtValue();
          loopSide = a;
          break;
        }
      }
    auto loopIndex = loopSide.getDefiningOp<linalg::IndexOp>();
    if (!loopIndex)
      continue;
    unsigned v = loopIndex.getDim();
    if (op.getIteratorTypesArray()[v] != utils::IteratorType::parallel)
      continue;
    // `v` only in the output map, and read in the body only by this test.
    bool elsewhere = false;
    for (OpOperand *input : op.getDpsInputOperands())
      elsewhere |= op.getMatchingIndexingMap(input).isFunctionOfDim(v);
    body->walk([&](linalg::IndexOp other) {
      elsewhere |= other.getDim() == v && other != loopIndex;
    });
    if (elsewhere || !acc.hasOneUse())
      continue;
    // The index must not depend on the loop it selects.
    SetVector<Operation *> slice;
    BackwardSliceOptions options;
    options.filter = [&](Operation *o) { return o->getBlock() == body; };
    if (failed(getBackwardSlice(indexSide, &slice, options)))
      continue;
    if (Operation *def = indexSide.getDefiningOp();
        def && def->getBlock() == body)
      slice.insert(def);
    if (slice.contains(loopIndex.getOperation()))
      continue;
    return OneHotAccumulation{v, indexSide, std::move(slice), offset};
  }
  return std::nullopt;
}

Value distir::createRowInBlock(OpBuilder &b, Location loc, Value row,
                               Value rows) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  return arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, row, zero),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, row, rows));
}
