//===- MemoryPlan.cpp - Static-offset memory planning
//-----------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Greedy by size (largest first, lowest offset free for the buffer's whole
// lifetime), as in TFLite's arena planner. Finding the placed buffers whose
// lifetimes intersect a new one uses a time index of fixed-width buckets, so
// that programs with millions of short-lived temporaries plan in near-linear
// time instead of quadratic.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Analysis/MemoryPlan.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <numeric>
#include <vector>

using namespace distir;

int64_t distir::planStaticOffsets(llvm::ArrayRef<PlanBuffer> buffers) {
  if (buffers.empty())
    return 0;
  int64_t horizon = 0;
  for (const PlanBuffer &buffer : buffers)
    horizon = std::max(horizon, buffer.end);
  // At most ~4096 buckets, so a buffer that lives for the whole program is
  // indexed in at most that many places.
  int64_t width = std::max<int64_t>(64, horizon / 4096 + 1);
  std::vector<std::vector<uint32_t>> buckets(horizon / width + 1);

  std::vector<uint32_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  // Largest first; ties by earlier start, then input order (determinism).
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (buffers[a].bytes != buffers[b].bytes)
      return buffers[a].bytes > buffers[b].bytes;
    if (buffers[a].begin != buffers[b].begin)
      return buffers[a].begin < buffers[b].begin;
    return a < b;
  });

  std::vector<int64_t> offsets(buffers.size(), -1);
  std::vector<uint32_t> stamp(buffers.size(), UINT32_MAX);
  std::vector<uint32_t> conflicts;
  int64_t arena = 0;
  for (uint32_t round = 0; round < order.size(); ++round) {
    uint32_t index = order[round];
    const PlanBuffer &buffer = buffers[index];
    if (buffer.bytes == 0 || buffer.end <= buffer.begin)
      continue;
    int64_t first = buffer.begin / width, last = (buffer.end - 1) / width;
    conflicts.clear();
    for (int64_t b = first; b <= last; ++b)
      for (uint32_t other : buckets[b]) {
        if (stamp[other] == round)
          continue;
        stamp[other] = round;
        if (buffers[other].begin < buffer.end &&
            buffer.begin < buffers[other].end)
          conflicts.push_back(other);
      }
    std::sort(conflicts.begin(), conflicts.end(),
              [&](uint32_t a, uint32_t b) { return offsets[a] < offsets[b]; });
    int64_t offset = 0;
    for (uint32_t other : conflicts) {
      if (offsets[other] >= offset + buffer.bytes)
        break; // fits in the gap below `other`
      offset = std::max(offset, offsets[other] + buffers[other].bytes);
    }
    offsets[index] = offset;
    arena = std::max(arena, offset + buffer.bytes);
    for (int64_t b = first; b <= last; ++b)
      buckets[b].push_back(index);
  }
  return arena;
}
