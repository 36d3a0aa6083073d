//===- OneHotToScatter.cpp - One-hot contractions as scatter-add loops ----===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// dist-autodiff writes the adjoint of a gather (an embedding lookup) as a
// structured op over the gathered table's rows and the op's points,
//
//   dT[v, e] += select(ids[b, s] == v, dy[b, s, e], 0)   over (b, s, v, e),
//
// which analyses see as what it is (a reduction over the batch into the
// table: data parallelism all-reduces it). Run as loops it costs rows x
// points iterations; a framework's index_add costs one per point. When a
// parallel loop `v` of such an op on buffers is read only by
// `index == v` tests that guard the only change to the accumulator, and the
// index does not depend on `v`, the op runs as loops over the other
// dimensions that compute v = index (skipping indices outside the table)
// and accumulate into that row: a scatter-add.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Conversion/Passes.h"
#include "DistIR/Dialect/Dist/IR/OneHot.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace distir {
#define GEN_PASS_DEF_DISTONEHOTTOSCATTERPASS
#include "DistIR/Conversion/Passes.h.inc"
} // namespace distir

using namespace mlir;
using namespace distir;

namespace {

struct OneHotToScatterPass
    : public distir::impl::DistOneHotToScatterPassBase<OneHotToScatterPass> {
  void runOnOperation() final {
    SmallVector<std::pair<linalg::GenericOp, OneHotAccumulation>> ops;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (!op.hasPureBufferSemantics())
        return;
      if (std::optional<OneHotAccumulation> match = matchOneHotAccumulation(op))
        ops.push_back({op, *match});
    });
    for (auto &[op, match] : ops)
      rewrite(op, match);
  }

  void rewrite(linalg::GenericOp op, const OneHotAccumulation &match) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Block *body = op.getBody();
    SmallVector<Range> ranges =
        cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc);
    SmallVector<Value> lbs, ubs, steps;
    SmallVector<unsigned> loops;
    for (auto [l, r] : llvm::enumerate(ranges)) {
      if (l == match.loop)
        continue;
      loops.push_back(l);
      lbs.push_back(getValueOrCreateConstantIndexOp(b, loc, r.offset));
      ubs.push_back(getValueOrCreateConstantIndexOp(b, loc, r.size));
      steps.push_back(getValueOrCreateConstantIndexOp(b, loc, r.stride));
    }
    Value rows =
        getValueOrCreateConstantIndexOp(b, loc, ranges[match.loop].size);
    scf::buildLoopNest(
        b, loc, lbs, ubs, steps,
        [&](OpBuilder &nb, Location l, ValueRange ivs) {
          SmallVector<Value> point(ranges.size());
          for (auto [k, loop] : llvm::enumerate(loops))
            point[loop] = ivs[k];
          auto at = [&](AffineMap map) {
            SmallVector<Value> indices;
            for (AffineExpr e : map.getResults())
              indices.push_back(point[cast<AffineDimExpr>(e).getPosition()]);
            return indices;
          };
          IRMapping mapping;
          for (OpOperand *input : op.getDpsInputOperands()) {
            BlockArgument arg = op.getMatchingBlockArgument(input);
            if (arg.use_empty())
              continue;
            Value value = input->get();
            mapping.map(arg, isa<MemRefType>(value.getType())
                                 ? memref::LoadOp::create(
                                       nb, l, value,
                                       at(op.getMatchingIndexingMap(input)))
                                       .getResult()
                                 : value);
          }
          // The index first (it needs no accumulator), then the row.
          const SetVector<Operation *> &slice = match.indexOps;
          auto cloneOp = [&](Operation &o) {
            if (auto index = dyn_cast<linalg::IndexOp>(o)) {
              mapping.map(index.getResult(), point[index.getDim()]);
              return;
            }
            nb.clone(o, mapping);
          };
          for (Operation &o : body->without_terminator())
            if (slice.contains(&o))
              cloneOp(o);
          Value row = mapping.lookupOrDefault(match.index);
          if (auto source = match.index.getDefiningOp<linalg::IndexOp>())
            row = point[source.getDim()];
          if (match.offset != 0)
            row = arith::SubIOp::create(
                nb, l, row,
                arith::ConstantIndexOp::create(nb, l, match.offset));
          Value inside = createRowInBlock(nb, l, row, rows);
          auto guard = scf::IfOp::create(nb, l, inside);
          OpBuilder ib = OpBuilder::atBlockBegin(guard.thenBlock());
          point[match.loop] = row;
          OpOperand *init = op.getDpsInitOperand(0);
          SmallVector<Value> outIndex = at(op.getMatchingIndexingMap(init));
          mapping.map(op.getMatchingBlockArgument(init),
                      memref::LoadOp::create(ib, l, init->get(), outIndex));
          for (Operation &o : body->without_terminator()) {
            if (slice.contains(&o))
              continue;
            if (auto index = dyn_cast<linalg::IndexOp>(o)) {
              mapping.map(index.getResult(), point[index.getDim()]);
              continue;
            }
            ib.clone(o, mapping);
          }
          Value result = mapping.lookup(body->getTerminator()->getOperand(0));
          memref::StoreOp::create(ib, l, result, init->get(), outIndex);
        });
    op->erase();
  }
};

} // namespace
