//===- BufferRoot.h - The buffer behind casts and views ---------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_LIB_CONVERSION_DISTTOGPU_BUFFERROOT_H
#define DISTIR_LIB_CONVERSION_DISTTOGPU_BUFFERROOT_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace distir {

/// The buffer a chain of memref.cast and view ops starts from (where it was
/// allocated, or a block argument).
inline mlir::Value getBufferRoot(mlir::Value v) {
  while (mlir::Operation *def = v.getDefiningOp()) {
    if (!mlir::isa<mlir::memref::CastOp, mlir::ViewLikeOpInterface>(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

} // namespace distir

#endif // DISTIR_LIB_CONVERSION_DISTTOGPU_BUFFERROOT_H
