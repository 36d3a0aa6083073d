//===- TileParallelLoops.cpp - Parallel loops tiled into GPU blocks -------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// gpu-map-parallel-loops maps a loop nest's outer scf.parallel to blocks and
// a nested one to threads. Loops from convert-linalg-to-parallel-loops are
// not nested, so each iteration would be a block of one thread: tile the
// innermost dimension (contiguous in row-major buffers) by the block size.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"

namespace distir {
#define GEN_PASS_DEF_DISTGPUTILEPARALLELLOOPSPASS
#include "DistIR/Conversion/Passes.h.inc"
} // namespace distir

using namespace mlir;

namespace {

struct TileParallelLoopsPass
    : public distir::impl::DistGPUTileParallelLoopsPassBase<
          TileParallelLoopsPass> {
  using DistGPUTileParallelLoopsPassBase::DistGPUTileParallelLoopsPassBase;

  void runOnOperation() final {
    if (blockSize < 1) {
      getOperation().emitError("dist-gpu-tile-parallel-loops: block-size "
                               "must be positive");
      return signalPassFailure();
    }
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk([&](scf::ParallelOp op) {
      if (!op->getParentOfType<scf::ParallelOp>())
        loops.push_back(op);
    });
    for (scf::ParallelOp op : loops) {
      SmallVector<int64_t> sizes(op.getNumLoops(), 1);
      sizes.back() = blockSize;
      scf::tileParallelLoop(op, sizes, /*noMinMaxBounds=*/true);
    }
  }
};

} // namespace
