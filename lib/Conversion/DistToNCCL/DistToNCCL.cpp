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
#include "mlir/Transforms/DialectConversion.h"

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

MemRefType bufferType(RankedTensorType t) {
  return MemRefType::get(t.getShape(), t.getElementType());
}

/// Chunks along `dim` are contiguous when all outer dimensions are 1.
bool contiguousChunks(RankedTensorType t, int64_t dim) {
  for (int64_t d = 0; d < dim; ++d)
    if (t.getDimSize(d) != 1)
      return false;
  return true;
}

/// The element type every dist_rank op moves.
RankedTensorType movedType(Operation *op) {
  return cast<RankedTensorType>(op->getNumOperands()
                                    ? op->getOperand(0).getType()
                                    : op->getResult(0).getType());
}

/// What the shim cannot do, as one error at the op (checked for every op
/// before anything is lowered, so the patterns never fail).
LogicalResult checkNCCLLowerable(Operation *op) {
  RankedTensorType type = movedType(op);
  if (!ncclType(type.getElementType()))
    return op->emitOpError() << "element type " << type.getElementType()
                             << " has no NCCL data type";
  auto requireContiguous = [&](Type t, int64_t dim) -> LogicalResult {
    auto placed = cast<RankedTensorType>(t);
    // Reported as the lowering sees it: placement is stripped first.
    auto tensor =
        RankedTensorType::get(placed.getShape(), placed.getElementType());
    if (contiguousChunks(tensor, dim))
      return success();
    return op->emitOpError()
           << "chunks along dimension " << dim << " of " << tensor
           << " are not contiguous; convert-dist-to-nccl needs the chunk "
              "dimension to be the outermost non-unit one";
  };
  if (auto rs = dyn_cast<ReduceScatterOp>(op))
    return requireContiguous(type, rs.getDim());
  if (auto ag = dyn_cast<AllGatherOp>(op))
    return requireContiguous(ag.getType(), ag.getDim());
  if (auto a2a = dyn_cast<AllToAllOp>(op)) {
    if (failed(requireContiguous(type, a2a.getSplitDim())))
      return failure();
    return requireContiguous(a2a.getType(), a2a.getConcatDim());
  }
  if (auto ga = dyn_cast<GatherOp>(op); ga && ga.getResult())
    return requireContiguous(ga.getResult().getType(), ga.getDim());
  if (auto sc = dyn_cast<ScatterOp>(op); sc && sc.getInput())
    return requireContiguous(sc.getInput().getType(), sc.getDim());
  return success();
}

/// Builds the shim call of one dist_rank op (the patterns below construct one
/// per match, on the conversion's rewriter).
struct NCCLLowering {
  OpBuilder &b;
  const RankFunctionContext &rank;
  Operation *op;

  Location loc() const { return op->getLoc(); }
  Value i32(int64_t v) {
    return arith::ConstantOp::create(b, loc(), b.getI32IntegerAttr(v));
  }
  Value i64(int64_t v) {
    return arith::ConstantOp::create(b, loc(), b.getI64IntegerAttr(v));
  }
  Value dtype() { return i32(*ncclType(movedType(op).getElementType())); }
  Value comm() {
    auto group = op->getAttrOfType<DenseI64ArrayAttr>("group");
    return rank.comms.at(SmallVector<int64_t>(group.asArrayRef()));
  }
  /// Index of global rank `r` in the op's group (NCCL's root argument).
  Value groupIndex(int64_t r) {
    ArrayRef<int64_t> group =
        op->getAttrOfType<DenseI64ArrayAttr>("group").asArrayRef();
    return i32(llvm::find(group, r) - group.begin());
  }
  Value inBuffer(Value tensor) {
    return bufferization::ToBufferOp::create(
        b, loc(), bufferType(cast<RankedTensorType>(tensor.getType())), tensor,
        /*read_only=*/true);
  }
  /// A fresh buffer and the tensor the op's result becomes.
  std::pair<Value, Value> outBuffer(Type type) {
    auto t = cast<RankedTensorType>(type);
    t = RankedTensorType::get(t.getShape(), t.getElementType());
    Value buffer = memref::AllocOp::create(b, loc(), bufferType(t));
    Value tensor = bufferization::ToTensorOp::create(
        b, loc(), t, buffer, /*restrict=*/true, /*writable=*/true);
    return {buffer, tensor};
  }

  /// An argument of a shim call: a value, or a buffer passed as its pointer.
  struct Arg {
    Value value;
    bool pointer = false;
  };
  static Arg ptr(Value buffer) { return {buffer, true}; }

  /// Declares (once) and calls `name`. The call and the pointer
  /// extractions of its buffers go into one `memref.alloca_scope`: the shim
  /// sees raw pointers, so without the region the buffers' last use would be
  /// the extraction and buffer deallocation could free an input before the
  /// call reads it.
  void call(StringRef name, ArrayRef<Arg> args) {
    auto scope = memref::AllocaScopeOp::create(b, loc(), TypeRange());
    OpBuilder::InsertionGuard guard(b);
    b.createBlock(&scope.getBodyRegion());
    SmallVector<Value> values;
    for (const Arg &arg : args) {
      if (!arg.pointer) {
        values.push_back(arg.value);
        continue;
      }
      Value index =
          memref::ExtractAlignedPointerAsIndexOp::create(b, loc(), arg.value);
      values.push_back(
          arith::IndexCastOp::create(b, loc(), b.getI64Type(), index));
    }
    auto module = op->getParentOfType<ModuleOp>();
    auto callee = module.lookupSymbol<func::FuncOp>(name);
    if (!callee) {
      OpBuilder::InsertionGuard moduleGuard(b);
      b.setInsertionPointToEnd(module.getBody());
      callee = func::FuncOp::create(
          b, loc(), name, b.getFunctionType(TypeRange(values), TypeRange()));
      callee.setPrivate();
    }
    func::CallOp::create(b, loc(), callee, values);
    memref::AllocaScopeReturnOp::create(b, loc());
  }

  // One overload per dist_rank op: the value replacing its result (null
  // when the op has none on this rank).
  Value lower(SendOp s, SendOp::Adaptor adaptor) {
    call("distir_nccl_send", {ptr(inBuffer(adaptor.getInput())),
                              {i64(movedType(op).getNumElements())},
                              {dtype()},
                              {i32(s.getDest())}});
    return {};
  }
  Value lower(RecvOp r, RecvOp::Adaptor) {
    auto [buffer, tensor] = outBuffer(r.getType());
    call("distir_nccl_recv", {ptr(buffer),
                              {i64(movedType(op).getNumElements())},
                              {dtype()},
                              {i32(r.getSource())}});
    return tensor;
  }
  Value lower(AllReduceOp ar, AllReduceOp::Adaptor adaptor) {
    auto [buffer, tensor] = outBuffer(ar.getType());
    call("distir_nccl_all_reduce", {{comm()},
                                    ptr(inBuffer(adaptor.getInput())),
                                    ptr(buffer),
                                    {i64(movedType(op).getNumElements())},
                                    {dtype()},
                                    {i32(ncclOp(ar.getKind()))}});
    return tensor;
  }
  Value lower(ReduceScatterOp rs, ReduceScatterOp::Adaptor adaptor) {
    auto [buffer, tensor] = outBuffer(rs.getType());
    call("distir_nccl_reduce_scatter", {{comm()},
                                        ptr(inBuffer(adaptor.getInput())),
                                        ptr(buffer),
                                        {i64(rs.getType().getNumElements())},
                                        {dtype()},
                                        {i32(ncclOp(rs.getKind()))}});
    return tensor;
  }
  Value lower(AllGatherOp ag, AllGatherOp::Adaptor adaptor) {
    auto [buffer, tensor] = outBuffer(ag.getType());
    call("distir_nccl_all_gather", {{comm()},
                                    ptr(inBuffer(adaptor.getInput())),
                                    ptr(buffer),
                                    {i64(movedType(op).getNumElements())},
                                    {dtype()}});
    return tensor;
  }
  Value lower(AllToAllOp a2a, AllToAllOp::Adaptor adaptor) {
    auto [buffer, tensor] = outBuffer(a2a.getType());
    int64_t n = a2a.getGroup().size();
    call("distir_nccl_all_to_all", {{comm()},
                                    ptr(inBuffer(adaptor.getInput())),
                                    ptr(buffer),
                                    {i64(movedType(op).getNumElements() / n)},
                                    {dtype()}});
    return tensor;
  }
  Value lower(BroadcastOp bc, BroadcastOp::Adaptor adaptor) {
    auto [buffer, tensor] = outBuffer(bc.getType());
    Arg in =
        adaptor.getInput() ? ptr(inBuffer(adaptor.getInput())) : Arg{i64(0)};
    call("distir_nccl_broadcast", {{comm()},
                                   in,
                                   ptr(buffer),
                                   {i64(movedType(op).getNumElements())},
                                   {dtype()},
                                   {groupIndex(bc.getRoot())}});
    return tensor;
  }
  Value lower(ReduceOp red, ReduceOp::Adaptor adaptor) {
    Arg out{i64(0)};
    Value tensor;
    if (red.getResult()) {
      auto [buffer, result] = outBuffer(red.getResult().getType());
      out = ptr(buffer);
      tensor = result;
    }
    call("distir_nccl_reduce", {{comm()},
                                ptr(inBuffer(adaptor.getInput())),
                                out,
                                {i64(movedType(op).getNumElements())},
                                {dtype()},
                                {i32(ncclOp(red.getKind()))},
                                {groupIndex(red.getRoot())}});
    return tensor;
  }
  Value lower(GatherOp ga, GatherOp::Adaptor adaptor) {
    Arg out{i64(0)};
    Value tensor;
    if (ga.getResult()) {
      auto [buffer, result] = outBuffer(ga.getResult().getType());
      out = ptr(buffer);
      tensor = result;
    }
    call("distir_nccl_gather", {{comm()},
                                ptr(inBuffer(adaptor.getInput())),
                                out,
                                {i64(movedType(op).getNumElements())},
                                {dtype()},
                                {groupIndex(ga.getRoot())}});
    return tensor;
  }
  Value lower(ScatterOp sc, ScatterOp::Adaptor adaptor) {
    Arg in{i64(0)};
    if (adaptor.getInput())
      in = ptr(inBuffer(adaptor.getInput()));
    auto [buffer, tensor] = outBuffer(sc.getType());
    call("distir_nccl_scatter", {{comm()},
                                 in,
                                 ptr(buffer),
                                 {i64(sc.getType().getNumElements())},
                                 {dtype()},
                                 {groupIndex(sc.getRoot())}});
    return tensor;
  }
};

struct ConvertDistToNCCLPass
    : public distir::impl::ConvertDistToNCCLPassBase<ConvertDistToNCCLPass> {
  using ConvertDistToNCCLPassBase::ConvertDistToNCCLPassBase;

  void runOnOperation() final {
    ModuleOp module = getOperation();
    RankLoweringBackend backend;
    backend.passName = "convert-dist-to-nccl";
    backend.needsCommunicator = [](Operation *) { return true; };
    backend.buildCommunicator = [&](OpBuilder &b, Location loc,
                                    ArrayRef<int64_t> group) {
      return buildGroupCommunicator(b, module, loc, group,
                                    "distir_nccl_group_comm");
    };
    backend.checkLowerable = checkNCCLLowerable;
    backend.populatePatterns = populateDistRankToNCCLConversionPatterns;
    backend.getRank = [&](OpBuilder &b, Location loc) -> Value {
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
    };
    if (failed(lowerRankPrograms(module, backend)))
      return signalPassFailure();
  }
};
} // namespace

void distir::populateDistRankToNCCLConversionPatterns(
    RewritePatternSet &patterns, const RankFunctionContext &rank) {
  patterns.add<RankOpConversion<SendOp, NCCLLowering>,
               RankOpConversion<RecvOp, NCCLLowering>,
               RankOpConversion<AllReduceOp, NCCLLowering>,
               RankOpConversion<ReduceScatterOp, NCCLLowering>,
               RankOpConversion<AllGatherOp, NCCLLowering>,
               RankOpConversion<AllToAllOp, NCCLLowering>,
               RankOpConversion<BroadcastOp, NCCLLowering>,
               RankOpConversion<ReduceOp, NCCLLowering>,
               RankOpConversion<GatherOp, NCCLLowering>,
               RankOpConversion<ScatterOp, NCCLLowering>>(patterns.getContext(),
                                                          rank);
}
