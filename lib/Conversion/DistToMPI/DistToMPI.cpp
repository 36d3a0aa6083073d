//===- DistToMPI.cpp - Lower per-rank programs to the mpi dialect ---------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Communication stays on tensors: each dist_rank op becomes mpi ops on the
// buffers behind its tensors (bufferization.to_buffer for what is sent,
// memref.alloc + bufferization.to_tensor for what is received), so that the
// upstream one-shot bufferization later turns the whole function into
// buffers and inserts the copies that non-contiguous slices need.
//
// MLIR 22's mpi dialect has send, recv and allreduce but no gather,
// scatter, broadcast, all-gather or all-to-all. Those are built from rooted
// rounds of blocking point-to-point transfers in group order: in round i,
// member i sends to every other member (in group order) while each of them
// receives from member i. Every rank walks the rounds in the same order and
// only one rank sends per round, so no cycle of waits can form. This moves
// (n-1) chunks through the root of each round instead of pipelining them
// (NCCL's ring moves each byte once per link); it is a correctness-first
// CPU path. Reduce-scatter and reduce use MPI_Allreduce and keep the part
// they need, which costs an all-reduce.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Conversion/DistToRank.h"
#include "DistIR/Conversion/MPIMemoryEffects.h"
#include "DistIR/Conversion/Passes.h"
#include "DistIR/Dialect/Dist/IR/DistOps.h"

#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/DialectConversion.h"

namespace distir {
#define GEN_PASS_DEF_CONVERTDISTTOMPIPASS
#include "DistIR/Conversion/Passes.h.inc"
} // namespace distir

using namespace mlir;
using namespace distir;
using namespace distir::dist_rank;

namespace {

/// Tag of the point-to-point rounds of composed collectives. MPI keeps
/// messages of one (source, tag, communicator) in order, and every pair of
/// ranks runs its collectives in the same order, so one tag suffices.
constexpr int64_t kCollectiveTag = 32000;

RankedTensorType plain(Type t) {
  auto tensor = cast<RankedTensorType>(t);
  return RankedTensorType::get(tensor.getShape(), tensor.getElementType());
}

/// Builds the mpi ops of one dist_rank op (the patterns below construct one
/// per match, on the conversion's rewriter).
struct RankLowering {
  OpBuilder &b;
  const RankFunctionContext &rank;
  Operation *op;

  Value i32(Location loc, int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  }
  static MemRefType bufferType(RankedTensorType t) {
    return MemRefType::get(t.getShape(), t.getElementType());
  }
  /// The 1-D view of a contiguous buffer: MLIR 22's mpi-to-llvm lowering
  /// takes the element count from dimension 0 only.
  Value flat(Location loc, Value buffer) {
    auto type = cast<MemRefType>(buffer.getType());
    if (type.getRank() == 1)
      return buffer;
    int64_t n = type.getNumElements();
    return memref::ReinterpretCastOp::create(
        b, loc, MemRefType::get({n}, type.getElementType()), buffer,
        /*offset=*/0, /*sizes=*/ArrayRef<int64_t>{n},
        /*strides=*/ArrayRef<int64_t>{1});
  }
  void send(Location loc, Value tensor, int64_t dest, int64_t tag) {
    auto type = cast<RankedTensorType>(tensor.getType());
    Value buffer = bufferization::ToBufferOp::create(
        b, loc, bufferType(type), tensor, /*read_only=*/true);
    mpi::SendOp::create(b, loc, TypeRange(), flat(loc, buffer), i32(loc, tag),
                        i32(loc, dest), rank.world);
  }
  Value recv(Location loc, RankedTensorType type, int64_t source, int64_t tag) {
    Value buffer = memref::AllocOp::create(b, loc, bufferType(type));
    mpi::RecvOp::create(b, loc, TypeRange(), flat(loc, buffer), i32(loc, tag),
                        i32(loc, source), rank.world);
    return bufferization::ToTensorOp::create(b, loc, type, buffer,
                                             /*restrict=*/true,
                                             /*writable=*/true);
  }

  /// Chunk `i` of `n` of `tensor` along `dim`.
  Value chunk(Location loc, Value tensor, int64_t dim, int64_t i, int64_t n) {
    auto type = cast<RankedTensorType>(tensor.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] /= n;
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)), sizes,
        strides(type.getRank(), b.getIndexAttr(1));
    offsets[dim] = b.getIndexAttr(i * shape[dim]);
    for (int64_t s : shape)
      sizes.push_back(b.getIndexAttr(s));
    auto chunkType = RankedTensorType::get(shape, type.getElementType());
    // An empty tensor has no in-bounds offset to slice at (MLIR's verifier
    // rejects offset 0 of a 0-sized dim): its chunks are empty tensors.
    if (type.getNumElements() == 0)
      return tensor::EmptyOp::create(b, loc, shape, type.getElementType());
    return tensor::ExtractSliceOp::create(b, loc, chunkType, tensor, offsets,
                                          sizes, strides);
  }
  /// Concatenation of equally shaped `pieces` along `dim`.
  Value concat(Location loc, ArrayRef<Value> pieces, int64_t dim,
               RankedTensorType resultType) {
    resultType = RankedTensorType::get(resultType.getShape(),
                                       resultType.getElementType());
    Value result = tensor::EmptyOp::create(b, loc, resultType.getShape(),
                                           resultType.getElementType());
    for (auto [i, piece] : llvm::enumerate(pieces)) {
      auto type = cast<RankedTensorType>(piece.getType());
      if (type.getNumElements() == 0)
        continue; // nothing to insert (and no in-bounds offset)
      SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)),
          sizes, strides(type.getRank(), b.getIndexAttr(1));
      offsets[dim] = b.getIndexAttr(i * type.getDimSize(dim));
      for (int64_t s : type.getShape())
        sizes.push_back(b.getIndexAttr(s));
      result = tensor::InsertSliceOp::create(b, loc, piece, result, offsets,
                                             sizes, strides);
    }
    return result;
  }

  Value allReduce(Location loc, Value input, ArrayRef<int64_t> group,
                  dist::ReductionKind kind) {
    auto type = cast<RankedTensorType>(input.getType());
    mpi::MPI_ReductionOpEnum mpiOp;
    switch (kind) {
    case dist::ReductionKind::Sum:
    case dist::ReductionKind::Avg:
      mpiOp = mpi::MPI_ReductionOpEnum::MPI_SUM;
      break;
    case dist::ReductionKind::Prod:
      mpiOp = mpi::MPI_ReductionOpEnum::MPI_PROD;
      break;
    case dist::ReductionKind::Max:
      mpiOp = mpi::MPI_ReductionOpEnum::MPI_MAX;
      break;
    case dist::ReductionKind::Min:
      mpiOp = mpi::MPI_ReductionOpEnum::MPI_MIN;
      break;
    }
    Value comm = rank.comms.at(SmallVector<int64_t>(group));
    Value in = bufferization::ToBufferOp::create(b, loc, bufferType(type),
                                                 input, /*read_only=*/true);
    Value out = memref::AllocOp::create(b, loc, bufferType(type));
    mpi::AllReduceOp::create(b, loc, TypeRange(), flat(loc, in), flat(loc, out),
                             mpiOp, comm);
    Value result = bufferization::ToTensorOp::create(b, loc, type, out,
                                                     /*restrict=*/true,
                                                     /*writable=*/true);
    if (kind != dist::ReductionKind::Avg)
      return result;
    // avg = sum / n, elementwise.
    auto floatType = cast<FloatType>(type.getElementType());
    Value n = arith::ConstantOp::create(
        b, loc, b.getFloatAttr(floatType, static_cast<double>(group.size())));
    AffineMap id = b.getMultiDimIdentityMap(type.getRank());
    SmallVector<utils::IteratorType> iterators(type.getRank(),
                                               utils::IteratorType::parallel);
    return linalg::GenericOp::create(
               b, loc, TypeRange{type}, ValueRange{}, ValueRange{result},
               ArrayRef<AffineMap>{id}, iterators,
               [&](OpBuilder &nb, Location l, ValueRange args) {
                 Value q = arith::DivFOp::create(nb, l, args[0], n);
                 linalg::YieldOp::create(nb, l, q);
               })
        .getResult(0);
  }

  /// Rooted round: `root` sends `value` (on root) to every other member,
  /// which receives a tensor of `type`. Returns the value on every member.
  Value rootedRound(Location loc, ArrayRef<int64_t> group, int64_t root,
                    Value value, RankedTensorType type) {
    if (rank.self == root) {
      for (int64_t member : group)
        if (member != root)
          send(loc, value, member, kCollectiveTag);
      return value;
    }
    return recv(loc, type, root, kCollectiveTag);
  }

  // One overload per dist_rank op: the value replacing its result (null
  // when the op has none on this rank).
  Value lower(SendOp op, SendOp::Adaptor adaptor) {
    send(op.getLoc(), adaptor.getInput(), op.getDest(), op.getTag());
    return {};
  }
  Value lower(RecvOp op, RecvOp::Adaptor) {
    return recv(op.getLoc(), plain(op.getType()), op.getSource(), op.getTag());
  }
  Value lower(AllReduceOp op, AllReduceOp::Adaptor adaptor) {
    return allReduce(op.getLoc(), adaptor.getInput(), op.getGroup(),
                     op.getKind());
  }
  Value lower(ReduceScatterOp op, ReduceScatterOp::Adaptor adaptor) {
    Value all =
        allReduce(op.getLoc(), adaptor.getInput(), op.getGroup(), op.getKind());
    int64_t index =
        llvm::find(op.getGroup(), rank.self) - op.getGroup().begin();
    return chunk(op.getLoc(), all, op.getDim(), index, op.getGroup().size());
  }
  Value lower(ReduceOp op, ReduceOp::Adaptor adaptor) {
    Value all =
        allReduce(op.getLoc(), adaptor.getInput(), op.getGroup(), op.getKind());
    return op.getResult() ? all : Value();
  }
  Value lower(BroadcastOp op, BroadcastOp::Adaptor adaptor) {
    return rootedRound(op.getLoc(), op.getGroup(), op.getRoot(),
                       adaptor.getInput(), plain(op.getType()));
  }
  Value lower(ScatterOp op, ScatterOp::Adaptor adaptor) {
    Location loc = op.getLoc();
    ArrayRef<int64_t> group = op.getGroup();
    int64_t n = group.size();
    if (rank.self != static_cast<int64_t>(op.getRoot()))
      return recv(loc, plain(op.getType()), op.getRoot(), kCollectiveTag);
    Value mine;
    for (int64_t j = 0; j < n; ++j) {
      Value piece = chunk(loc, adaptor.getInput(), op.getDim(), j, n);
      if (group[j] == rank.self)
        mine = piece;
      else
        send(loc, piece, group[j], kCollectiveTag);
    }
    return mine;
  }
  Value lower(GatherOp op, GatherOp::Adaptor adaptor) {
    Location loc = op.getLoc();
    if (rank.self != static_cast<int64_t>(op.getRoot())) {
      send(loc, adaptor.getInput(), op.getRoot(), kCollectiveTag);
      return {};
    }
    SmallVector<Value> pieces;
    for (int64_t member : op.getGroup())
      pieces.push_back(member == rank.self
                           ? adaptor.getInput()
                           : recv(loc, plain(op.getInput().getType()), member,
                                  kCollectiveTag));
    return concat(loc, pieces, op.getDim(),
                  cast<RankedTensorType>(op.getResult().getType()));
  }
  Value lower(AllGatherOp op, AllGatherOp::Adaptor adaptor) {
    SmallVector<Value> pieces;
    for (int64_t member : op.getGroup())
      pieces.push_back(
          rootedRound(op.getLoc(), op.getGroup(), member,
                      member == rank.self ? adaptor.getInput() : Value(),
                      plain(op.getInput().getType())));
    return concat(op.getLoc(), pieces, op.getDim(), op.getType());
  }
  Value lower(AllToAllOp op, AllToAllOp::Adaptor adaptor) {
    Location loc = op.getLoc();
    ArrayRef<int64_t> group = op.getGroup();
    int64_t n = group.size();
    int64_t selfIndex = llvm::find(group, rank.self) - group.begin();
    Value input = adaptor.getInput();
    SmallVector<Value> pieces;
    for (int64_t i = 0; i < n; ++i) {
      if (group[i] == rank.self) {
        for (int64_t j = 0; j < n; ++j)
          if (j != i)
            send(loc, chunk(loc, input, op.getSplitDim(), j, n), group[j],
                 kCollectiveTag);
        pieces.push_back(chunk(loc, input, op.getSplitDim(), selfIndex, n));
      } else {
        auto inType = op.getInput().getType();
        SmallVector<int64_t> shape(inType.getShape());
        shape[op.getSplitDim()] /= n;
        pieces.push_back(
            recv(loc, RankedTensorType::get(shape, inType.getElementType()),
                 group[i], kCollectiveTag));
      }
    }
    return concat(loc, pieces, op.getConcatDim(), op.getType());
  }
};

struct ConvertDistToMPIPass
    : public distir::impl::ConvertDistToMPIPassBase<ConvertDistToMPIPass> {
  using ConvertDistToMPIPassBase::ConvertDistToMPIPassBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    ConvertDistToMPIPassBase::getDependentDialects(registry);
    registerMPIMemoryEffectModels(registry);
  }

  void runOnOperation() final {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    RankLoweringBackend backend;
    backend.passName = "convert-dist-to-mpi";
    // Only the ops built on MPI_Allreduce use a group communicator; the
    // others are point-to-point on the world.
    backend.needsCommunicator = [](Operation *op) {
      return isa<AllReduceOp, ReduceScatterOp, ReduceOp>(op);
    };
    backend.buildWorld = [&](OpBuilder &b, Location loc) -> Value {
      return mpi::CommWorldOp::create(b, loc, mpi::CommType::get(ctx));
    };
    // Communicators come from the runtime's cache (one MPI_Comm_split per
    // group for the life of the process, freed at MPI_Finalize); the handle
    // is what convert-mpi-to-llvm makes of an !mpi.comm.
    backend.buildCommunicator = [&](OpBuilder &b, Location loc,
                                    ArrayRef<int64_t> group) -> Value {
      Value handle = buildGroupCommunicator(b, module, loc, group,
                                            "distir_mpi_group_comm");
      return UnrealizedConversionCastOp::create(
                 b, loc, TypeRange{mpi::CommType::get(ctx)}, handle)
          .getResult(0);
    };
    backend.populatePatterns = populateDistRankToMPIConversionPatterns;
    backend.getRank = [](OpBuilder &b, Location loc) -> Value {
      Value world =
          mpi::CommWorldOp::create(b, loc, mpi::CommType::get(b.getContext()));
      return mpi::CommRankOp::create(b, loc, Type(), b.getI32Type(), world)
          .getRank();
    };
    if (failed(lowerRankPrograms(module, backend)))
      return signalPassFailure();
    if (!module->hasAttr("dlti.map")) {
      auto entry = DataLayoutEntryAttr::get(
          StringAttr::get(ctx, "MPI:Implementation"),
          StringAttr::get(ctx, implementation == MPIImplementation::MPICH
                                   ? "MPICH"
                                   : "OpenMPI"));
      module->setAttr("dlti.map",
                      MapAttr::get(ctx, {cast<DataLayoutEntryInterface>(
                                            Attribute(entry))}));
    }
  }
};

} // namespace

void distir::populateDistRankToMPIConversionPatterns(
    RewritePatternSet &patterns, const RankFunctionContext &rank) {
  patterns.add<RankOpConversion<SendOp, RankLowering>,
               RankOpConversion<RecvOp, RankLowering>,
               RankOpConversion<AllReduceOp, RankLowering>,
               RankOpConversion<ReduceScatterOp, RankLowering>,
               RankOpConversion<ReduceOp, RankLowering>,
               RankOpConversion<BroadcastOp, RankLowering>,
               RankOpConversion<ScatterOp, RankLowering>,
               RankOpConversion<GatherOp, RankLowering>,
               RankOpConversion<AllGatherOp, RankLowering>,
               RankOpConversion<AllToAllOp, RankLowering>>(
      patterns.getContext(), rank);
}
