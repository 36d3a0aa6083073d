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
#include "llvm/ADT/MapVector.h"

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

struct RankLowering {
  OpBuilder &b;
  int64_t self;
  Value world;
  /// Communicator of each group that needs one (all-reduce based ops).
  std::map<SmallVector<int64_t>, Value> comms;

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
                        i32(loc, dest), world);
  }
  Value recv(Location loc, RankedTensorType type, int64_t source, int64_t tag) {
    Value buffer = memref::AllocOp::create(b, loc, bufferType(type));
    mpi::RecvOp::create(b, loc, TypeRange(), flat(loc, buffer), i32(loc, tag),
                        i32(loc, source), world);
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

  FailureOr<Value> allReduce(Operation *op, Value input,
                             ArrayRef<int64_t> group,
                             dist::ReductionKind kind) {
    Location loc = op->getLoc();
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
    Value comm = comms.at(SmallVector<int64_t>(group));
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
    if (self == root) {
      for (int64_t member : group)
        if (member != root)
          send(loc, value, member, kCollectiveTag);
      return value;
    }
    return recv(loc, type, root, kCollectiveTag);
  }

  LogicalResult lower(Operation *op);
};

RankedTensorType plain(Type t) {
  auto tensor = cast<RankedTensorType>(t);
  return RankedTensorType::get(tensor.getShape(), tensor.getElementType());
}

LogicalResult RankLowering::lower(Operation *op) {
  Location loc = op->getLoc();
  b.setInsertionPoint(op);
  Value replacement;
  if (auto s = dyn_cast<SendOp>(op)) {
    send(loc, s.getInput(), s.getDest(), s.getTag());
  } else if (auto r = dyn_cast<RecvOp>(op)) {
    replacement = recv(loc, plain(r.getType()), r.getSource(), r.getTag());
  } else if (auto ar = dyn_cast<AllReduceOp>(op)) {
    FailureOr<Value> v =
        allReduce(op, ar.getInput(), ar.getGroup(), ar.getKind());
    if (failed(v))
      return failure();
    replacement = *v;
  } else if (auto rs = dyn_cast<ReduceScatterOp>(op)) {
    FailureOr<Value> v =
        allReduce(op, rs.getInput(), rs.getGroup(), rs.getKind());
    if (failed(v))
      return failure();
    int64_t index = llvm::find(rs.getGroup(), self) - rs.getGroup().begin();
    replacement = chunk(loc, *v, rs.getDim(), index, rs.getGroup().size());
  } else if (auto red = dyn_cast<ReduceOp>(op)) {
    FailureOr<Value> v =
        allReduce(op, red.getInput(), red.getGroup(), red.getKind());
    if (failed(v))
      return failure();
    if (red.getResult())
      replacement = *v;
  } else if (auto bc = dyn_cast<BroadcastOp>(op)) {
    replacement = rootedRound(loc, bc.getGroup(), bc.getRoot(), bc.getInput(),
                              plain(bc.getType()));
  } else if (auto sc = dyn_cast<ScatterOp>(op)) {
    ArrayRef<int64_t> group = sc.getGroup();
    int64_t n = group.size();
    if (self == static_cast<int64_t>(sc.getRoot())) {
      for (int64_t j = 0; j < n; ++j) {
        Value piece = chunk(loc, sc.getInput(), sc.getDim(), j, n);
        if (group[j] == self)
          replacement = piece;
        else
          send(loc, piece, group[j], kCollectiveTag);
      }
    } else {
      replacement =
          recv(loc, plain(sc.getType()), sc.getRoot(), kCollectiveTag);
    }
  } else if (auto ga = dyn_cast<GatherOp>(op)) {
    ArrayRef<int64_t> group = ga.getGroup();
    if (self == static_cast<int64_t>(ga.getRoot())) {
      SmallVector<Value> pieces;
      for (int64_t member : group)
        pieces.push_back(member == self
                             ? ga.getInput()
                             : recv(loc, plain(ga.getInput().getType()), member,
                                    kCollectiveTag));
      replacement = concat(loc, pieces, ga.getDim(),
                           cast<RankedTensorType>(ga.getResult().getType()));
    } else {
      send(loc, ga.getInput(), ga.getRoot(), kCollectiveTag);
    }
  } else if (auto ag = dyn_cast<AllGatherOp>(op)) {
    SmallVector<Value> pieces;
    for (int64_t member : ag.getGroup())
      pieces.push_back(rootedRound(loc, ag.getGroup(), member,
                                   member == self ? ag.getInput() : Value(),
                                   plain(ag.getInput().getType())));
    replacement = concat(loc, pieces, ag.getDim(), ag.getType());
  } else if (auto a2a = dyn_cast<AllToAllOp>(op)) {
    ArrayRef<int64_t> group = a2a.getGroup();
    int64_t n = group.size();
    int64_t selfIndex = llvm::find(group, self) - group.begin();
    SmallVector<Value> pieces;
    for (int64_t i = 0; i < n; ++i) {
      if (group[i] == self) {
        for (int64_t j = 0; j < n; ++j)
          if (j != i)
            send(loc, chunk(loc, a2a.getInput(), a2a.getSplitDim(), j, n),
                 group[j], kCollectiveTag);
        pieces.push_back(
            chunk(loc, a2a.getInput(), a2a.getSplitDim(), selfIndex, n));
      } else {
        auto inType = a2a.getInput().getType();
        SmallVector<int64_t> shape(inType.getShape());
        shape[a2a.getSplitDim()] /= n;
        pieces.push_back(
            recv(loc, RankedTensorType::get(shape, inType.getElementType()),
                 group[i], kCollectiveTag));
      }
    }
    replacement = concat(loc, pieces, a2a.getConcatDim(), a2a.getType());
  } else {
    return op->emitOpError("is not supported by convert-dist-to-mpi");
  }
  if (replacement)
    op->getResult(0).replaceAllUsesWith(replacement);
  op->erase();
  return success();
}

/// Groups that need a communicator: those of ops built on MPI_Allreduce.
SmallVector<int64_t> commGroupOf(Operation *op) {
  if (isa<AllReduceOp, ReduceScatterOp, ReduceOp>(op)) {
    auto group = op->getAttrOfType<DenseI64ArrayAttr>("group").asArrayRef();
    return SmallVector<int64_t>(group.begin(), group.end());
  }
  return {};
}

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
    if (implementation != "OpenMPI" && implementation != "MPICH") {
      module.emitError() << "unknown MPI implementation '" << implementation
                         << "'; expected OpenMPI or MPICH";
      return signalPassFailure();
    }
    // Global dist ops left over mean dist-to-rank did not run.
    // (A kept global function is replaced by the dispatcher.)
    WalkResult leftover = module.walk([&](Operation *op) {
      auto parent = op->getParentOfType<func::FuncOp>();
      if (parent && parent->hasAttr(kRanksAttr))
        return WalkResult::skip();
      if (isa<dist::DistDialect>(op->getDialect())) {
        op->emitOpError("is a global communication op; run dist-to-rank "
                        "before convert-dist-to-mpi");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (leftover.wasInterrupted())
      return signalPassFailure();

    if (!module->hasAttr("dlti.map")) {
      auto entry =
          DataLayoutEntryAttr::get(StringAttr::get(ctx, "MPI:Implementation"),
                                   StringAttr::get(ctx, implementation));
      module->setAttr("dlti.map",
                      MapAttr::get(ctx, {cast<DataLayoutEntryInterface>(
                                            Attribute(entry))}));
    }

    // Placement has served its purpose; bufferization wants plain tensors.
    stripPlacement(module);

    // Rank functions by program.
    llvm::MapVector<StringRef, SmallVector<func::FuncOp>> programs;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(kRankAttr)) {
        StringRef program;
        if (auto name = func->getAttrOfType<StringAttr>(kProgramAttr))
          program = name.getValue();
        programs[program].push_back(func);
      }
    // dist_rank ops outside rank functions cannot be lowered.
    WalkResult stray = module.walk([&](Operation *op) {
      if (!isa<DistRankDialect>(op->getDialect()))
        return WalkResult::advance();
      auto func = op->getParentOfType<func::FuncOp>();
      if (!func || !func->hasAttr(kRankAttr)) {
        op->emitOpError() << "is outside a rank function (one with '"
                          << kRankAttr << "')";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (stray.wasInterrupted())
      return signalPassFailure();

    OpBuilder b(ctx);
    for (auto &[program, funcs] : programs) {
      // The same splits, in the same order, on every rank of the program.
      std::set<SmallVector<int64_t>> groups;
      for (func::FuncOp func : funcs)
        func.walk([&](Operation *op) {
          SmallVector<int64_t> g = commGroupOf(op);
          if (!g.empty())
            groups.insert(g);
        });
      for (func::FuncOp func : funcs) {
        int64_t self = func->getAttrOfType<IntegerAttr>(kRankAttr).getInt();
        b.setInsertionPointToStart(&func.getBody().front());
        Location loc = func.getLoc();
        RankLowering lowering{b, self, {}, {}};
        lowering.world =
            mpi::CommWorldOp::create(b, loc, mpi::CommType::get(ctx));
        // Communicators come from the runtime's cache (one MPI_Comm_split
        // per group for the life of the process, freed at MPI_Finalize);
        // the handle is what convert-mpi-to-llvm makes of an !mpi.comm.
        for (const SmallVector<int64_t> &group : groups) {
          Value handle = buildGroupCommunicator(b, module, loc, group,
                                                "distir_mpi_group_comm");
          lowering.comms[group] =
              UnrealizedConversionCastOp::create(
                  b, loc, TypeRange{mpi::CommType::get(ctx)}, handle)
                  .getResult(0);
        }
        SmallVector<Operation *> ops;
        func.walk([&](Operation *op) {
          if (isa<DistRankDialect>(op->getDialect()))
            ops.push_back(op);
        });
        for (Operation *op : ops)
          if (failed(lowering.lower(op)))
            return signalPassFailure();
      }
      if (program.empty())
        continue;
      auto global = module.lookupSymbol<func::FuncOp>(program);
      if (global && global->hasAttr(kRanksAttr))
        buildRankDispatcher(global, funcs, [](OpBuilder &b, Location loc) {
          Value world = mpi::CommWorldOp::create(
              b, loc, mpi::CommType::get(b.getContext()));
          return mpi::CommRankOp::create(b, loc, Type(), b.getI32Type(), world)
              .getRank();
        });
    }
  }
};

} // namespace
