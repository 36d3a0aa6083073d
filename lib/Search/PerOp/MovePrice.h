//===- MovePrice.h - Send/recv estimate of a cost-graph move ---*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// The cost graph prices each resharding between two layouts of a value by
// the send/recv estimate (reshard::SendRecvEstimator): every device
// receives, from the producer tiles its own tile overlaps, the overlap.
// Internal to DistIRPerOp; the unit tests check that the estimate on the
// layout keys' grid equals the one read off the tiles.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_LIB_SEARCH_PEROP_MOVEPRICE_H
#define DISTIR_LIB_SEARCH_PEROP_MOVEPRICE_H

#include "Tiles.h"

#include "DistIR/Search/Reshard.h"

#include "mlir/IR/BuiltinTypes.h"

#include <vector>

namespace distir::pase::detail {

/// Of a producer layout (a layoutKey: per dimension its split factor and
/// the position stride of its mesh axis), the block of the grid each device
/// holds and, per block and receiver, the senders the estimate tries: the
/// holder nearest the receiver (device ids differing in the fewest high
/// bits: the same node first) and holder `q mod holders`. A function of
/// the key alone, so built once per key and shared by every move from it.
struct HolderTable {
  llvm::SmallVector<int64_t> blockStride; // per dimension, the last fastest
  int64_t numBlocks = 0;
  std::vector<int32_t> blockOfDevice;
  /// Of one block for one receiver: the senders (-1: nobody holds the
  /// block) and the same as the estimator's send ids + 1 (0: not looked up
  /// yet; filled by estimateOnGrid for the one estimator it is used with).
  struct Senders {
    int32_t nearest = -1, spread = -1;
    uint32_t nearestSend = 0, spreadSend = 0;
  };
  /// [receiver * numBlocks + block]: a receiver's pieces read neighbours.
  std::vector<Senders> senders;
  /// The estimator whose ids these are. A table stays with the one
  /// estimator of its thread (MovePricer's Worker), so the address is not
  /// reused by another while the table lives.
  const reshard::SendRecvEstimator *sendsOf = nullptr;

  Senders &of(int64_t block, int64_t receiver) {
    return senders[receiver * numBlocks + block];
  }
};

/// Devices up to which the cost graph prices moves on holder tables (at
/// most 16 x kMaxGridDevices^2 bytes, 1 MiB, per producer layout and
/// thread); beyond, from the tiles.
constexpr int64_t kMaxGridDevices = 256;

HolderTable makeHolderTable(llvm::ArrayRef<int64_t> key, size_t rank,
                            int64_t devices);

/// Whether every block of both layouts is non-empty (a split factor never
/// exceeds its dimension), so that the grid of the keys is the grid of the
/// tiles.
bool keysFormGrid(llvm::ArrayRef<int64_t> haveKey,
                  llvm::ArrayRef<int64_t> needKey, mlir::RankedTensorType type);

/// The estimate on the grids of the two layout keys (layoutKey; empty: the
/// value whole on every device) with the producer's holder table: the same
/// pieces in the same order and with the same senders as estimateFromTiles.
double estimateOnGrid(llvm::ArrayRef<int64_t> haveKey,
                      llvm::ArrayRef<int64_t> needKey,
                      mlir::RankedTensorType type, HolderTable &table,
                      int64_t devices, reshard::SendRecvEstimator &estimator);

/// The estimate read off the tiles themselves (the producer's blocks from
/// the tiles' starts): for grids the keys do not describe.
double estimateFromTiles(llvm::ArrayRef<Tile> have, llvm::ArrayRef<Tile> need,
                         mlir::RankedTensorType type,
                         reshard::SendRecvEstimator &estimator);

} // namespace distir::pase::detail

#endif // DISTIR_LIB_SEARCH_PEROP_MOVEPRICE_H
