//===- DistToNCCL.cpp - Lower per-rank communication to NCCL calls --------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Each dist_rank op becomes one call into the C shim of
// runtime/nccl/DistIRNCCLRuntime.h, on raw pointers taken from the buffers
// behind the tensors. Communicators: every rank function starts with one
// `distir_nccl_group_comm(ranks, n)` per device group of its program, in
// the same order everywhere (the shim's first call for a group runs
// ncclCommSplit, collective over the world, and caches the result); a
// member's key is its index in the group, so communicator rank i is
// group[i] and NCCL's rank-ordered chunking matches the group order of dist
// ops. NCCL chunks are contiguous, so scatter,
// gather, all_gather, reduce_scatter and all_to_all need their chunk
// dimension to be the outermost non-unit one; other layouts are rejected.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Conversion/DistToRank.h"
#include "DistIR/Conversion/Passes.h"
#include "DistIR/Dialect/Dist/IR/DistOps.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"

namespace distir {
#define GEN_PASS_DEF_CONVERTDISTTONCCLPASS
#include "DistIR/Conversion/Passes.h.inc"
} // namespace distir

using namespace mlir;
using namespace distir;
using namespace distir::dist_rank;

namespace {

/// ncclDataType_t values (nccl.h, NCCL 2.x).
std::optional<int64_t> ncclType(Type t) {
  if (t.isInteger(8))
    return 0; // ncclInt8
  if (t.isInteger(32))
    return 2; // ncclInt32
  if (t.isInteger(64))
    return 4; // ncclInt64
  if (t.isF16())
    return 6; // ncclFloat16
  if (t.isF32())
    return 7; // ncclFloat32
  if (t.isF64())
    return 8; // ncclFloat64
  if (t.isBF16())
    return 9; // ncclBfloat16
  return std::nullopt;
}

/// ncclRedOp_t values.
int64_t ncclOp(dist::ReductionKind kind) {
  switch (kind) {
  case dist::ReductionKind::Sum:
    return 0;
  case dist::ReductionKind::Prod:
    return 1;
  case dist::ReductionKind::Max:
    return 2;
  case dist::ReductionKind::Min:
    return 3;
  case dist::ReductionKind::Avg:
    return 4;
  }
  return 0;
}

struct NCCLLowering {
  OpBuilder &b;
  ModuleOp module;
  int64_t self;
  std::map<SmallVector<int64_t>, Value> comms;

  Value i32(Location loc, int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  }
  Value i64(Location loc, int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  }
  /// Declares (once) and calls `name`. The call and the pointer
  /// extractions of its buffers go into one `memref.alloca_scope`: the shim
  /// sees raw pointers, so without the region the buffers' last use would be
  /// the extraction and buffer deallocation could free an input before the
  /// call reads it.
  void call(Location loc, StringRef name, ValueRange args) {
    auto func = module.lookupSymbol<func::FuncOp>(name);
    if (!func) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToEnd(module.getBody());
      func = func::FuncOp::create(
          b, loc, name, b.getFunctionType(TypeRange(args), TypeRange()));
      func.setPrivate();
    }
    auto scope = memref::AllocaScopeOp::create(b, loc, TypeRange());
    Block *body = new Block();
    scope.getBodyRegion().push_back(body);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(body);
    auto callOp = func::CallOp::create(b, loc, func, args);
    memref::AllocaScopeReturnOp::create(b, loc);
    for (Operation *op : pointerOps)
      op->moveBefore(callOp);
    pointerOps.clear();
  }
  /// Pointer extractions made for the next call, in creation order.
  SmallVector<Operation *> pointerOps;
  /// Pointer (as i64) to the data of a contiguous buffer.
  Value pointer(Location loc, Value buffer) {
    auto index = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
    auto cast = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
    pointerOps.push_back(index);
    pointerOps.push_back(cast);
    return cast;
  }
  static MemRefType bufferType(RankedTensorType t) {
    return MemRefType::get(t.getShape(), t.getElementType());
  }
  Value inBuffer(Location loc, Value tensor) {
    return bufferization::ToBufferOp::create(
        b, loc, bufferType(cast<RankedTensorType>(tensor.getType())), tensor,
        /*read_only=*/true);
  }
  std::pair<Value, Value> outBuffer(Location loc, Type type) {
    auto t = cast<RankedTensorType>(type);
    t = RankedTensorType::get(t.getShape(), t.getElementType());
    Value buffer = memref::AllocOp::create(b, loc, bufferType(t));
    Value tensor = bufferization::ToTensorOp::create(
        b, loc, t, buffer, /*restrict=*/true, /*writable=*/true);
    return {buffer, tensor};
  }

  LogicalResult lower(Operation *op);
};

/// Chunks along `dim` are contiguous when all outer dimensions are 1.
bool contiguousChunks(RankedTensorType t, int64_t dim) {
  for (int64_t d = 0; d < dim; ++d)
    if (t.getDimSize(d) != 1)
      return false;
  return true;
}

LogicalResult NCCLLowering::lower(Operation *op) {
  Location loc = op->getLoc();
  b.setInsertionPoint(op);
  auto type =
      cast<RankedTensorType>(op->getNumOperands() ? op->getOperand(0).getType()
                                                  : op->getResult(0).getType());
  std::optional<int64_t> dtype = ncclType(type.getElementType());
  if (!dtype)
    return op->emitOpError() << "element type " << type.getElementType()
                             << " has no NCCL data type";
  auto requireContiguous = [&](RankedTensorType t,
                               int64_t dim) -> LogicalResult {
    if (contiguousChunks(t, dim))
      return success();
    return op->emitOpError()
           << "chunks along dimension " << dim << " of " << t
           << " are not contiguous; convert-dist-to-nccl needs the chunk "
              "dimension to be the outermost non-unit one";
  };
  auto groupAttr = op->getAttrOfType<DenseI64ArrayAttr>("group");
  Value comm =
      groupAttr ? comms.at(SmallVector<int64_t>(groupAttr.asArrayRef().begin(),
                                                groupAttr.asArrayRef().end()))
                : Value();
  auto groupIndex = [&](int64_t rank) {
    return llvm::find(groupAttr.asArrayRef(), rank) -
           groupAttr.asArrayRef().begin();
  };
  Value dt = i32(loc, *dtype);
  Value replacement;
  if (auto s = dyn_cast<SendOp>(op)) {
    call(loc, "distir_nccl_send",
         {pointer(loc, inBuffer(loc, s.getInput())),
          i64(loc, type.getNumElements()), dt, i32(loc, s.getDest())});
  } else if (auto r = dyn_cast<RecvOp>(op)) {
    auto [buffer, tensor] = outBuffer(loc, r.getType());
    call(loc, "distir_nccl_recv",
         {pointer(loc, buffer), i64(loc, type.getNumElements()), dt,
          i32(loc, r.getSource())});
    replacement = tensor;
  } else if (auto ar = dyn_cast<AllReduceOp>(op)) {
    auto [buffer, tensor] = outBuffer(loc, ar.getType());
    call(loc, "distir_nccl_all_reduce",
         {comm, pointer(loc, inBuffer(loc, ar.getInput())),
          pointer(loc, buffer), i64(loc, type.getNumElements()), dt,
          i32(loc, ncclOp(ar.getKind()))});
    replacement = tensor;
  } else if (auto rs = dyn_cast<ReduceScatterOp>(op)) {
    if (failed(requireContiguous(type, rs.getDim())))
      return failure();
    auto [buffer, tensor] = outBuffer(loc, rs.getType());
    call(loc, "distir_nccl_reduce_scatter",
         {comm, pointer(loc, inBuffer(loc, rs.getInput())),
          pointer(loc, buffer), i64(loc, rs.getType().getNumElements()), dt,
          i32(loc, ncclOp(rs.getKind()))});
    replacement = tensor;
  } else if (auto ag = dyn_cast<AllGatherOp>(op)) {
    if (failed(requireContiguous(ag.getType(), ag.getDim())))
      return failure();
    auto [buffer, tensor] = outBuffer(loc, ag.getType());
    call(loc, "distir_nccl_all_gather",
         {comm, pointer(loc, inBuffer(loc, ag.getInput())),
          pointer(loc, buffer), i64(loc, type.getNumElements()), dt});
    replacement = tensor;
  } else if (auto a2a = dyn_cast<AllToAllOp>(op)) {
    if (failed(requireContiguous(type, a2a.getSplitDim())) ||
        failed(requireContiguous(a2a.getType(), a2a.getConcatDim())))
      return failure();
    auto [buffer, tensor] = outBuffer(loc, a2a.getType());
    call(loc, "distir_nccl_all_to_all",
         {comm, pointer(loc, inBuffer(loc, a2a.getInput())),
          pointer(loc, buffer),
          i64(loc, type.getNumElements() / groupAttr.size()), dt});
    replacement = tensor;
  } else if (auto bc = dyn_cast<BroadcastOp>(op)) {
    auto [buffer, tensor] = outBuffer(loc, bc.getType());
    Value in = bc.getInput() ? pointer(loc, inBuffer(loc, bc.getInput()))
                             : i64(loc, 0);
    call(loc, "distir_nccl_broadcast",
         {comm, in, pointer(loc, buffer), i64(loc, type.getNumElements()), dt,
          i32(loc, groupIndex(bc.getRoot()))});
    replacement = tensor;
  } else if (auto red = dyn_cast<ReduceOp>(op)) {
    Value out = i64(loc, 0);
    if (red.getResult()) {
      auto [buffer, tensor] = outBuffer(loc, red.getResult().getType());
      out = pointer(loc, buffer);
      replacement = tensor;
    }
    call(loc, "distir_nccl_reduce",
         {comm, pointer(loc, inBuffer(loc, red.getInput())), out,
          i64(loc, type.getNumElements()), dt, i32(loc, ncclOp(red.getKind())),
          i32(loc, groupIndex(red.getRoot()))});
  } else if (auto ga = dyn_cast<GatherOp>(op)) {
    Value out = i64(loc, 0);
    if (ga.getResult()) {
      auto resultType = cast<RankedTensorType>(ga.getResult().getType());
      if (failed(requireContiguous(resultType, ga.getDim())))
        return failure();
      auto [buffer, tensor] = outBuffer(loc, resultType);
      out = pointer(loc, buffer);
      replacement = tensor;
    }
    call(loc, "distir_nccl_gather",
         {comm, pointer(loc, inBuffer(loc, ga.getInput())), out,
          i64(loc, type.getNumElements()), dt,
          i32(loc, groupIndex(ga.getRoot()))});
  } else if (auto sc = dyn_cast<ScatterOp>(op)) {
    Value in = i64(loc, 0);
    if (sc.getInput()) {
      if (failed(requireContiguous(sc.getInput().getType(), sc.getDim())))
        return failure();
      in = pointer(loc, inBuffer(loc, sc.getInput()));
    }
    auto [buffer, tensor] = outBuffer(loc, sc.getType());
    call(loc, "distir_nccl_scatter",
         {comm, in, pointer(loc, buffer),
          i64(loc, sc.getType().getNumElements()), dt,
          i32(loc, groupIndex(sc.getRoot()))});
    replacement = tensor;
  } else {
    return op->emitOpError("is not supported by convert-dist-to-nccl");
  }
  if (replacement)
    op->getResult(0).replaceAllUsesWith(replacement);
  op->erase();
  return success();
}

struct ConvertDistToNCCLPass
    : public distir::impl::ConvertDistToNCCLPassBase<ConvertDistToNCCLPass> {
  using ConvertDistToNCCLPassBase::ConvertDistToNCCLPassBase;

  void runOnOperation() final {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    // A kept global function (dist_rank.ranks) becomes the dispatcher.
    WalkResult bad = module.walk([&](Operation *op) {
      auto parent = op->getParentOfType<func::FuncOp>();
      if (parent && parent->hasAttr(kRanksAttr))
        return WalkResult::skip();
      if (isa<dist::DistDialect>(op->getDialect())) {
        op->emitOpError("is a global communication op; run dist-to-rank "
                        "before convert-dist-to-nccl");
        return WalkResult::interrupt();
      }
      if (isa<DistRankDialect>(op->getDialect())) {
        auto func = op->getParentOfType<func::FuncOp>();
        if (!func || !func->hasAttr(kRankAttr)) {
          op->emitOpError()
              << "is outside a rank function (one with '" << kRankAttr << "')";
          return WalkResult::interrupt();
        }
      }
      return WalkResult::advance();
    });
    if (bad.wasInterrupted())
      return signalPassFailure();

    stripPlacement(module);

    llvm::MapVector<StringRef, SmallVector<func::FuncOp>> programs;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(kRankAttr)) {
        StringRef program;
        if (auto name = func->getAttrOfType<StringAttr>(kProgramAttr))
          program = name.getValue();
        programs[program].push_back(func);
      }

    OpBuilder b(ctx);
    for (auto &[program, funcs] : programs) {
      std::set<SmallVector<int64_t>> groups;
      for (func::FuncOp func : funcs)
        func.walk([&](Operation *op) {
          if (auto g = op->getAttrOfType<DenseI64ArrayAttr>("group");
              g && isa<DistRankDialect>(op->getDialect()))
            groups.insert(SmallVector<int64_t>(g.asArrayRef().begin(),
                                               g.asArrayRef().end()));
        });
      for (func::FuncOp func : funcs) {
        int64_t self = func->getAttrOfType<IntegerAttr>(kRankAttr).getInt();
        Location loc = func.getLoc();
        b.setInsertionPointToStart(&func.getBody().front());
        NCCLLowering lowering{b, module, self, {}, {}};
        for (const SmallVector<int64_t> &group : groups)
          lowering.comms[group] = buildGroupCommunicator(
              b, module, loc, group, "distir_nccl_group_comm");
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
      if (!global || !global->hasAttr(kRanksAttr))
        continue;
      buildRankDispatcher(global, funcs, [&](OpBuilder &b, Location loc) {
        auto rank = module.lookupSymbol<func::FuncOp>("distir_nccl_world_rank");
        if (!rank) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToEnd(module.getBody());
          rank = func::FuncOp::create(
              b, loc, "distir_nccl_world_rank",
              b.getFunctionType(TypeRange(), {b.getI32Type()}));
          rank.setPrivate();
        }
        return func::CallOp::create(b, loc, rank, ValueRange()).getResult(0);
      });
    }
  }
};
} // namespace
