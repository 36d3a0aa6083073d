//===- InferLayers.h - Layers from the data flow ---------------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_LIB_DIALECT_DIST_TRANSFORMS_INFERLAYERS_H
#define DISTIR_LIB_DIALECT_DIST_TRANSFORMS_INFERLAYERS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace distir::dist {

/// Layers dist-autodiff infers for an untagged forward program: enough for
/// balanced pipelines of up to 16 stages.
constexpr int64_t kInferredLayers = 16;

/// Whether any op of `func` carries `dist.layer`.
bool hasLayerTags(mlir::func::FuncOp func);

/// Tags every op of the forward program `func` with `dist.layer` in
/// [0, numLayers) and `dist.phase = "forward"`: a contiguous partition of
/// the program order (every edge then goes to the same or a later layer, so
/// any grouping of consecutive layers is a valid pipeline), balanced by
/// compute (the simulator's flops of each op) with each cut moved, within a
/// quarter of a layer's share, to where the fewest bytes cross it. Fewer
/// layers when the program has fewer ops with compute. Fails (with an
/// error) on a training step (ops tagged `backward` or `update`): layers are
/// inferred on the forward program, before dist-autodiff.
mlir::LogicalResult inferLayers(mlir::func::FuncOp func, int64_t numLayers);

} // namespace distir::dist

#endif // DISTIR_LIB_DIALECT_DIST_TRANSFORMS_INFERLAYERS_H
