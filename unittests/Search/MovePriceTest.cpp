//===- MovePriceTest.cpp - The cost graph's move estimate -----------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// dist-pase prices a resharding on the grid of the two layout keys (holder
// tables, per-dimension overlap lists) instead of reading the producer's
// blocks off the tiles: both must give the same estimate, bit for bit, on
// every pair of layouts (even and balanced uneven splits; mesh axes in
// dist-pase's order and in any order), or the search would choose differently.
//
//===----------------------------------------------------------------------===//

#include "MovePrice.h"

#include "DistIR/Dialect/Dist/IR/DistDialect.h"

#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

#include <numeric>
#include <random>

using namespace mlir;
using namespace distir;
using namespace distir::pase;
using namespace distir::pase::detail;

namespace {

/// A random split of the loops of an identity map over `devices`: each
/// factor a power of two whose product divides `devices`, the rest
/// replicas (dimensions of 65 and 130 make the tiles uneven).
LoopSplit randomSplit(std::mt19937 &random, ArrayRef<int64_t> shape,
                      int64_t devices) {
  LoopSplit split;
  split.factors.assign(shape.size(), 1);
  int64_t used = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t f = int64_t(1) << (random() % 4);
    while (devices % (used * f) != 0 || f > shape[d])
      f /= 2;
    split.factors[d] = f;
    used *= f;
  }
  split.replicas = devices / used;
  return split;
}

SmallVector<Tile> tilesOf(AffineMap map, ArrayRef<int64_t> shape,
                          const LoopSplit &split, int64_t devices) {
  SmallVector<Tile> tiles;
  for (int64_t q = 0; q < devices; ++q)
    tiles.push_back(tileOf(map, shape, split, meshOf(split), q));
  return tiles;
}

/// The key of `split` with its mesh axes (split dimensions and replicas)
/// in a random order instead of meshOf's (replicas innermost), so that a
/// block's holders are spread over the devices and the nearest holder and
/// holder `q mod holders` differ.
SmallVector<int64_t> shuffledKey(std::mt19937 &random, const LoopSplit &split) {
  SmallVector<int64_t> sizes, dimOfAxis;
  for (auto [d, f] : llvm::enumerate(split.factors))
    if (f > 1) {
      sizes.push_back(f);
      dimOfAxis.push_back(d);
    }
  sizes.push_back(split.replicas);
  dimOfAxis.push_back(-1);
  SmallVector<size_t> order(sizes.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), random);
  SmallVector<int64_t> key;
  for (int64_t f : split.factors)
    key.append({f, 0});
  int64_t stride = 1;
  for (size_t axis : llvm::reverse(order)) {
    if (dimOfAxis[axis] >= 0)
      key[2 * dimOfAxis[axis] + 1] = stride;
    stride *= sizes[axis];
  }
  return key;
}

/// The tiles a key says each device holds: in each dimension block
/// (q / stride) mod factor of `factor` balanced blocks.
SmallVector<Tile> tilesOfKey(ArrayRef<int64_t> key, ArrayRef<int64_t> shape,
                             int64_t devices) {
  SmallVector<Tile> tiles(devices);
  for (int64_t q = 0; q < devices; ++q)
    for (auto [d, n] : llvm::enumerate(shape)) {
      int64_t f = key[2 * d], c = f > 1 ? (q / key[2 * d + 1]) % f : 0;
      tiles[q].push_back({c * n / f, (c + 1) * n / f});
    }
  return tiles;
}

TEST(MovePrice, GridEstimateEqualsTileEstimate) {
  MLIRContext context;
  context.loadDialect<dist::DistDialect>();
  // Replicas of 3 and 6 on 12 devices: holder counts that are not powers
  // of two.
  for (const char *spec : {"dgx-h100:nodes=2", "aws-p3.8xlarge:nodes=4",
                           "distir-uniform:devices=12"}) {
    Cluster cluster = *getClusterPreset(spec, [](const llvm::Twine &) {});
    CollectiveCostModel model(cluster);
    reshard::SendRecvEstimator estimator(model);
    int64_t devices = cluster.getNumDevices();
    std::mt19937 random(7);
    int checked = 0, moved = 0;
    for (int trial = 0; trial < 400; ++trial) {
      // Sizes with odd factors give balanced uneven tiles.
      SmallVector<int64_t> shape;
      size_t rank = 1 + random() % 4;
      for (size_t d = 0; d < rank; ++d)
        shape.push_back(
            int64_t(std::vector<int64_t>{8, 24, 65, 130}[random() % 4]));
      auto type = RankedTensorType::get(shape, Float32Type::get(&context));
      AffineMap map = AffineMap::getMultiDimIdentityMap(rank, &context);
      LoopSplit from = randomSplit(random, shape, devices);
      LoopSplit to = randomSplit(random, shape, devices);
      // Half the trials as dist-pase lays configurations out (meshOf),
      // half with the mesh axes in any order.
      bool shuffled = trial % 2;
      SmallVector<int64_t> haveKey =
          shuffled ? shuffledKey(random, from) : layoutKey(map, from);
      SmallVector<int64_t> needKey =
          shuffled ? shuffledKey(random, to) : layoutKey(map, to);
      if (trial % 10 == 0)
        needKey.clear(); // the consumer reads the value whole
      SmallVector<Tile> have = shuffled ? tilesOfKey(haveKey, shape, devices)
                                        : tilesOf(map, shape, from, devices);
      SmallVector<Tile> need = needKey.empty()
                                   ? SmallVector<Tile>(devices, fullTile(type))
                               : shuffled ? tilesOfKey(needKey, shape, devices)
                                          : tilesOf(map, shape, to, devices);
      ASSERT_TRUE(keysFormGrid(haveKey, needKey, type));
      double fromTiles = estimateFromTiles(have, need, type, estimator);
      HolderTable table = makeHolderTable(haveKey, rank, devices);
      double onGrid =
          estimateOnGrid(haveKey, needKey, type, table, devices, estimator);
      EXPECT_EQ(fromTiles, onGrid)
          << spec << " trial " << trial << ": " << formatSplit(from) << " -> "
          << formatSplit(to);
      ++checked;
      moved += onGrid > 0;
    }
    EXPECT_EQ(checked, 400);
    // Most random pairs move something: the comparison is not vacuous.
    EXPECT_GT(moved, 250) << spec;
  }
}

TEST(MovePrice, HolderTablePicksNearestAndSpread) {
  // 8 devices, dimension 0 split in 2 along the outer mesh axis (stride 4):
  // devices 0-3 hold block 0, devices 4-7 block 1.
  HolderTable table = makeHolderTable({2, 4}, 1, 8);
  EXPECT_EQ(table.blockOfDevice,
            (std::vector<int32_t>{0, 0, 0, 0, 1, 1, 1, 1}));
  // Receiver 1 of block 1: nearest by device id bits is 5; spread 1 mod 4.
  EXPECT_EQ(table.of(1, 1).nearest, 5);
  EXPECT_EQ(table.of(1, 1).spread, 5);
  // Receiver 2 of block 1: nearest 6, spread holders[2] = 6.
  EXPECT_EQ(table.of(1, 2).nearest, 6);
  // Receiver 6 of block 0: nearest 2 (6 ^ 2 = 4 is least), spread 0+2 = 2.
  EXPECT_EQ(table.of(0, 6).nearest, 2);
  EXPECT_EQ(table.of(0, 7).spread, 3);
}

} // namespace
