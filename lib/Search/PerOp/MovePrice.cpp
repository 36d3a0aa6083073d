//===- MovePrice.cpp - Send/recv estimate of a cost-graph move ------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "MovePrice.h"

#include "DistIR/Analysis/OpCost.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace distir;
using namespace distir::pase::detail;

/// The senders the estimate tries for a piece of a block held by `holders`
/// (in device order): the holder nearest the receiver (device ids
/// differing in the fewest high bits: the same node first), then holder
/// `receiver mod holders` if it differs; the estimator takes the less
/// loaded. Not every holder, which would price devices x blocks x holders
/// sends.
static SmallVector<int64_t, 2> sendersOf(ArrayRef<int64_t> holders,
                                         int64_t receiver) {
  int64_t nearest = holders.front();
  for (int64_t h : holders)
    if ((h ^ receiver) < (nearest ^ receiver))
      nearest = h;
  SmallVector<int64_t, 2> senders = {nearest};
  int64_t spread = holders[receiver % static_cast<int64_t>(holders.size())];
  if (spread != nearest)
    senders.push_back(spread);
  return senders;
}

/// The send/recv estimate of a move from the tiles themselves: the
/// producer's blocks read off the tiles' starts. estimateOnGrid computes
/// the same from the layout keys; this is for grids it does not cover.
double distir::pase::detail::estimateFromTiles(
    ArrayRef<Tile> have, ArrayRef<Tile> need, RankedTensorType type,
    reshard::SendRecvEstimator &estimator) {
  double elementBytes = double(getTensorBytes(type)) /
                        double(std::max<int64_t>(1, type.getNumElements()));
  // The producer's tiles are the blocks of a grid (tileOf, balanced
  // splits): per dimension the blocks' starts; the holders of each block.
  size_t rank = have.front().size();
  SmallVector<SmallVector<int64_t>> starts(rank);
  for (const Tile &tile : have)
    for (size_t d = 0; d < rank; ++d)
      starts[d].push_back(tile[d].first);
  SmallVector<int64_t> stride(rank, 1);
  int64_t numBlocks = 1;
  for (size_t d = rank; d-- > 0;) {
    llvm::sort(starts[d]);
    starts[d].erase(llvm::unique(starts[d]), starts[d].end());
    stride[d] = numBlocks;
    numBlocks *= static_cast<int64_t>(starts[d].size());
  }
  // Block b of dimension d is [starts[d][b], starts[d][b + 1] or the size).
  auto blockOf = [&](size_t d, int64_t i) {
    return static_cast<int64_t>(llvm::upper_bound(starts[d], i) -
                                starts[d].begin()) -
           1;
  };
  auto blockEnd = [&](size_t d, int64_t b) {
    return b + 1 < static_cast<int64_t>(starts[d].size()) ? starts[d][b + 1]
                                                          : type.getDimSize(d);
  };
  std::vector<SmallVector<int64_t>> holders(numBlocks);
  for (auto [device, tile] : llvm::enumerate(have)) {
    int64_t id = 0;
    for (size_t d = 0; d < rank; ++d)
      id += blockOf(d, tile[d].first) * stride[d];
    holders[id].push_back(device);
  }
  estimator.reset();
  SmallVector<int64_t> lo(rank), hi(rank), at(rank);
  for (auto [q, want] : llvm::enumerate(need)) {
    int64_t receiver = static_cast<int64_t>(q);
    // The blocks `want` overlaps, per dimension.
    bool empty = false;
    for (size_t d = 0; d < rank; ++d) {
      empty |= want[d].second <= want[d].first;
      lo[d] = blockOf(d, want[d].first);
      hi[d] = std::max(lo[d], blockOf(d, want[d].second - 1));
    }
    if (empty)
      continue;
    at = lo;
    while (true) {
      int64_t id = 0, volume = 1;
      for (size_t d = 0; d < rank; ++d) {
        id += at[d] * stride[d];
        volume *=
            std::max<int64_t>(0, std::min(want[d].second, blockEnd(d, at[d])) -
                                     std::max(want[d].first, starts[d][at[d]]));
      }
      ArrayRef<int64_t> from = holders[id];
      if (volume > 0 && !from.empty() && !llvm::is_contained(from, receiver))
        estimator.add(sendersOf(from, receiver), receiver,
                      double(volume) * elementBytes);
      // Odometer over the overlapped blocks.
      size_t d = at.size();
      while (d-- > 0 && ++at[d] > hi[d])
        at[d] = lo[d];
      if (d == size_t(-1))
        break;
    }
  }
  return estimator.getBusiest();
}

static int64_t keyFactor(ArrayRef<int64_t> key, size_t d) {
  return key.empty() ? 1 : key[2 * d];
}
static int64_t keyCoordinate(ArrayRef<int64_t> key, size_t d, int64_t device) {
  int64_t f = keyFactor(key, d);
  return f > 1 ? (device / key[2 * d + 1]) % f : 0;
}

HolderTable distir::pase::detail::makeHolderTable(ArrayRef<int64_t> key,
                                                  size_t rank,
                                                  int64_t devices) {
  HolderTable table;
  table.blockStride.assign(rank, 1);
  int64_t numBlocks = 1;
  for (size_t d = rank; d-- > 0;) {
    table.blockStride[d] = numBlocks;
    numBlocks *= keyFactor(key, d);
  }
  std::vector<SmallVector<int64_t>> holders(numBlocks);
  for (int64_t p = 0; p < devices; ++p) {
    int64_t id = 0;
    for (size_t d = 0; d < rank; ++d)
      id += keyCoordinate(key, d, p) * table.blockStride[d];
    table.blockOfDevice.push_back(static_cast<int32_t>(id));
    holders[id].push_back(p);
  }
  table.numBlocks = numBlocks;
  table.senders.assign(numBlocks * devices, {});
  for (int64_t b = 0; b < numBlocks; ++b) {
    if (holders[b].empty())
      continue;
    for (int64_t q = 0; q < devices; ++q) {
      SmallVector<int64_t, 2> senders = sendersOf(holders[b], q);
      table.of(b, q).nearest = static_cast<int32_t>(senders.front());
      table.of(b, q).spread = static_cast<int32_t>(senders.back());
    }
  }
  return table;
}

/// Whether every block of both layouts is non-empty (a split factor never
/// exceeds its dimension), so that the grid of the keys is the grid of the
/// tiles.
bool distir::pase::detail::keysFormGrid(ArrayRef<int64_t> haveKey,
                                        ArrayRef<int64_t> needKey,
                                        RankedTensorType type) {
  for (auto [d, size] : llvm::enumerate(type.getShape()))
    if (keyFactor(haveKey, d) > size || keyFactor(needKey, d) > size)
      return false;
  return true;
}

/// estimateFromTiles on the grids of the two layout keys: the same pieces
/// in the same order (receivers in device order; the producer blocks a
/// receiver's tile overlaps, the last dimension fastest) with the same
/// senders, but each receiver's overlaps read from per-dimension lists and
/// its senders from the producer's holder table instead of searched. The
/// pieces of a consumer block are listed once and reused by every receiver
/// of that block.
double distir::pase::detail::estimateOnGrid(
    ArrayRef<int64_t> haveKey, ArrayRef<int64_t> needKey, RankedTensorType type,
    HolderTable &table, int64_t devices,
    reshard::SendRecvEstimator &estimator) {
  ArrayRef<int64_t> shape = type.getShape();
  size_t rank = shape.size();
  double elementBytes = double(getTensorBytes(type)) /
                        double(std::max<int64_t>(1, type.getNumElements()));
  // Per dimension and consumer block: the producer blocks it overlaps, in
  // order, with the overlap's length (balanced blocks: [c n / f, ...)).
  struct Overlap {
    int64_t blockId, length;
  };
  SmallVector<std::vector<SmallVector<Overlap, 2>>> overlaps(rank);
  SmallVector<int64_t> needStride(rank, 1);
  int64_t needBlocks = 1;
  for (size_t d = rank; d-- > 0;) {
    int64_t n = shape[d], f = keyFactor(haveKey, d), g = keyFactor(needKey, d);
    needStride[d] = needBlocks;
    needBlocks *= g;
    overlaps[d].resize(g);
    for (int64_t j = 0; j < g; ++j)
      for (int64_t i = 0; i < f; ++i) {
        int64_t length = std::min((j + 1) * n / g, (i + 1) * n / f) -
                         std::max(j * n / g, i * n / f);
        if (length > 0)
          overlaps[d][j].push_back({i * table.blockStride[d], length});
      }
  }
  // The pieces of each consumer block (producer block, bytes), in the
  // odometer's order over the overlapped blocks; built on first use.
  struct Piece {
    int64_t blockId;
    double bytes;
  };
  std::vector<Piece> pieces;
  std::vector<std::pair<uint32_t, uint32_t>> piecesOf(needBlocks, {0, 0});
  std::vector<bool> listed(needBlocks, false);
  SmallVector<ArrayRef<Overlap>> varying;
  SmallVector<size_t> at;
  auto listPieces = [&](int64_t q) {
    // Dimensions with one overlap add a constant to the block id and a
    // factor to the volume; the others run as an odometer, the last one in
    // an inner loop (the order of the full odometer, last dimension
    // fastest; volumes are exact integer products in any order).
    int64_t baseId = 0, baseVolume = 1;
    varying.clear();
    for (size_t d = 0; d < rank; ++d) {
      ArrayRef<Overlap> list = overlaps[d][keyCoordinate(needKey, d, q)];
      if (list.empty())
        return;
      if (list.size() == 1) {
        baseId += list.front().blockId;
        baseVolume *= list.front().length;
      } else {
        varying.push_back(list);
      }
    }
    if (varying.empty()) {
      pieces.push_back({baseId, double(baseVolume) * elementBytes});
      return;
    }
    ArrayRef<Overlap> inner = varying.back();
    size_t outer = varying.size() - 1;
    at.assign(outer, 0);
    while (true) {
      int64_t id = baseId, volume = baseVolume;
      for (size_t k = 0; k < outer; ++k) {
        id += varying[k][at[k]].blockId;
        volume *= varying[k][at[k]].length;
      }
      for (const Overlap &overlap : inner)
        pieces.push_back({id + overlap.blockId,
                          double(volume * overlap.length) * elementBytes});
      size_t k = outer;
      while (k-- > 0 && ++at[k] == varying[k].size())
        at[k] = 0;
      if (k == size_t(-1))
        break;
    }
  };
  if (table.sendsOf != &estimator) {
    for (HolderTable::Senders &senders : table.senders)
      senders.nearestSend = senders.spreadSend = 0;
    table.sendsOf = &estimator;
  }
  estimator.reset();
  std::vector<reshard::SendRecvEstimator::Choice> choices;
  for (int64_t q = 0; q < devices; ++q) {
    int64_t block = 0;
    for (size_t d = 0; d < rank; ++d)
      block += keyCoordinate(needKey, d, q) * needStride[d];
    if (!listed[block]) {
      listed[block] = true;
      uint32_t first = static_cast<uint32_t>(pieces.size());
      listPieces(q);
      piecesOf[block] = {first, static_cast<uint32_t>(pieces.size())};
    }
    int64_t own = table.blockOfDevice[q];
    HolderTable::Senders *of = table.senders.data() + q * table.numBlocks;
    choices.clear();
    for (uint32_t i = piecesOf[block].first; i < piecesOf[block].second; ++i) {
      const Piece &piece = pieces[i];
      HolderTable::Senders &from = of[piece.blockId];
      if (piece.blockId == own || from.nearest < 0)
        continue;
      if (!from.nearestSend) {
        from.nearestSend = estimator.getSendId(from.nearest, q) + 1;
        from.spreadSend = estimator.getSendId(from.spread, q) + 1;
      }
      choices.push_back(
          {from.nearestSend - 1, from.spreadSend - 1, piece.bytes});
    }
    estimator.addEach(choices);
  }
  return estimator.getBusiest();
}
