//===- MemoryPlan.h - Static-offset memory planning -------------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// DistIR knows the whole schedule, so buffers can get fixed offsets in one
// arena ahead of time: no allocator, no fragmentation. The arena size is an
// upper bound on what a caching allocator needs and at least the liveness
// peak.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_ANALYSIS_MEMORYPLAN_H
#define DISTIR_ANALYSIS_MEMORYPLAN_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>

namespace distir {

/// A buffer live on the half-open program-order interval [begin, end).
struct PlanBuffer {
  int64_t begin;
  int64_t end;
  int64_t bytes;
};

/// Assigns offsets greedily (largest buffer first, lowest offset that does
/// not overlap a buffer with an intersecting lifetime) and returns the arena
/// size.
int64_t planStaticOffsets(llvm::ArrayRef<PlanBuffer> buffers);

} // namespace distir

#endif // DISTIR_ANALYSIS_MEMORYPLAN_H
