//===- VerifyMatching.cpp - Deadlock check of per-rank programs -----------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Replays the communication of per-rank programs with rendezvous semantics:
// a blocking send completes only together with its receive, a collective
// only when all members have reached it. This is the strictest MPI
// behaviour (MPI_Send may block until the receive is posted), so programs
// that pass cannot deadlock under any buffering. A projection of a global
// program keeps program order on every rank and always passes; the check
// matters for hand-written or transformed per-rank programs.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Conversion/DistToRank.h"
#include "DistIR/Conversion/Passes.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

namespace distir {
#define GEN_PASS_DEF_DISTRANKVERIFYMATCHINGPASS
#include "DistIR/Conversion/Passes.h.inc"
} // namespace distir

using namespace mlir;
using namespace distir;
using namespace distir::dist_rank;

namespace {

/// One communication step of one rank.
struct Event {
  enum Kind { Send, Recv, Collective } kind;
  Operation *op;
  int64_t peer = -1;
  int64_t tag = -1;
  RankedTensorType type;
  SmallVector<int64_t> group;
  /// Everything members of a collective must agree on.
  std::string signature;
};

std::string typeString(RankedTensorType type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (type)
    os << RankedTensorType::get(type.getShape(), type.getElementType());
  return s;
}

std::string describe(const Event &e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  switch (e.kind) {
  case Event::Send:
    os << "send to rank " << e.peer << " (tag " << e.tag << ", "
       << typeString(e.type) << ")";
    break;
  case Event::Recv:
    os << "receive from rank " << e.peer << " (tag " << e.tag << ", "
       << typeString(e.type) << ")";
    break;
  case Event::Collective:
    os << e.op->getName().stripDialect() << " over group [";
    llvm::interleaveComma(e.group, os);
    os << "]";
    break;
  }
  return s;
}

/// Builds the events of a rank function; reports ops it cannot check.
LogicalResult collectEvents(func::FuncOp func, int64_t self, int64_t numRanks,
                            SmallVectorImpl<Event> &events) {
  auto checkPeer = [&](Operation *op, int64_t peer) -> LogicalResult {
    if (peer >= numRanks)
      return op->emitOpError() << "names rank " << peer << " but program has "
                               << numRanks << " ranks";
    if (peer == self)
      return op->emitOpError() << "communicates with its own rank " << self;
    return success();
  };
  WalkResult walk = func.walk([&](Operation *op) -> WalkResult {
    if (!isa<DistRankDialect>(op->getDialect()))
      return WalkResult::advance();
    if (op->getParentOp() != func)
      return op->emitOpError(
          "is inside a region; the matching check handles straight-line "
          "communication only");
    Event e;
    e.op = op;
    if (auto send = dyn_cast<SendOp>(op)) {
      if (failed(checkPeer(op, send.getDest())))
        return WalkResult::interrupt();
      e.kind = Event::Send;
      e.peer = send.getDest();
      e.tag = send.getTag();
      e.type = send.getInput().getType();
      events.push_back(std::move(e));
      return WalkResult::advance();
    }
    if (auto recv = dyn_cast<RecvOp>(op)) {
      if (failed(checkPeer(op, recv.getSource())))
        return WalkResult::interrupt();
      e.kind = Event::Recv;
      e.peer = recv.getSource();
      e.tag = recv.getTag();
      e.type = recv.getResult().getType();
      events.push_back(std::move(e));
      return WalkResult::advance();
    }
    e.kind = Event::Collective;
    auto group = op->getAttrOfType<DenseI64ArrayAttr>("group");
    e.group.assign(group.asArrayRef().begin(), group.asArrayRef().end());
    if (!llvm::is_contained(e.group, self))
      return op->emitOpError() << "runs on rank " << self
                               << " which is not a member of its group";
    for (int64_t member : e.group)
      if (member >= numRanks)
        return op->emitOpError() << "group names rank " << member
                                 << " but program has " << numRanks << " ranks";
    // Root-dependent operands and the payload type.
    RankedTensorType payload;
    std::optional<int64_t> root;
    if (auto rootAttr = op->getAttrOfType<IntegerAttr>("root"))
      root = rootAttr.getInt();
    bool isRoot = root && *root == self;
    if (isa<BroadcastOp, ScatterOp>(op)) {
      bool hasInput = op->getNumOperands() == 1;
      if (hasInput != isRoot)
        return op->emitOpError()
               << (isRoot ? "on its root rank needs an input"
                          : "takes an input only on its root rank")
               << " (root " << *root << ", rank " << self << ")";
      payload = cast<RankedTensorType>(op->getResult(0).getType());
    } else {
      payload = cast<RankedTensorType>(op->getOperand(0).getType());
      if (isa<ReduceOp, GatherOp>(op)) {
        bool hasResult = op->getNumResults() == 1;
        if (hasResult != isRoot)
          return op->emitOpError()
                 << (isRoot ? "on its root rank needs a result"
                            : "has a result only on its root rank")
                 << " (root " << *root << ", rank " << self << ")";
      }
    }
    llvm::raw_string_ostream os(e.signature);
    os << op->getName() << " " << typeString(payload);
    // Group, root, reduction kind and dimensions, in attribute order.
    for (NamedAttribute attr : op->getAttrDictionary())
      os << " " << attr.getName().getValue() << "=" << attr.getValue();
    events.push_back(std::move(e));
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult verifyProgram(StringRef program,
                            ArrayRef<std::pair<int64_t, func::FuncOp>> funcs,
                            int64_t numRanks) {
  SmallVector<func::FuncOp> byRank(numRanks);
  for (auto [rank, func] : funcs) {
    if (rank < 0 || rank >= numRanks)
      return func.emitOpError()
             << "has rank " << rank << " outside [0, " << numRanks << ")";
    if (byRank[rank]) {
      InFlightDiagnostic diag = func.emitOpError()
                                << "is a second function for rank " << rank
                                << " of program '" << program << "'";
      diag.attachNote(byRank[rank].getLoc()) << "first function";
      return diag;
    }
    byRank[rank] = func;
  }
  SmallVector<SmallVector<Event>> events(numRanks);
  for (int64_t r = 0; r < numRanks; ++r)
    if (byRank[r] && failed(collectEvents(byRank[r], r, numRanks, events[r])))
      return failure();
  for (int64_t r = 0; r < numRanks; ++r)
    if (!byRank[r])
      return func::FuncOp(funcs.front().second).emitOpError()
             << "belongs to program '" << program << "' of " << numRanks
             << " ranks, which has no function for rank " << r;

  SmallVector<size_t> head(numRanks, 0);
  auto current = [&](int64_t r) -> Event * {
    return head[r] < events[r].size() ? &events[r][head[r]] : nullptr;
  };
  bool progress = true;
  while (progress) {
    progress = false;
    for (int64_t r = 0; r < numRanks; ++r) {
      Event *e = current(r);
      if (!e)
        continue;
      if (e->kind == Event::Send) {
        Event *other = current(e->peer);
        if (!other || other->kind != Event::Recv || other->peer != r)
          continue;
        if (other->tag != e->tag ||
            typeString(other->type) != typeString(e->type)) {
          InFlightDiagnostic diag =
              e->op->emitOpError()
              << "on rank " << r << " (" << describe(*e)
              << ") is matched by a receive that disagrees on rank " << e->peer
              << " (" << describe(*other) << ")";
          diag.attachNote(other->op->getLoc()) << "the receive";
          return diag;
        }
        ++head[r];
        ++head[e->peer];
        progress = true;
        continue;
      }
      if (e->kind != Event::Collective)
        continue;
      // Ready when every member waits at a collective on the same group.
      bool ready = llvm::all_of(e->group, [&](int64_t m) {
        Event *o = current(m);
        return o && o->kind == Event::Collective && o->group == e->group;
      });
      if (!ready)
        continue;
      for (int64_t m : e->group) {
        Event *o = current(m);
        if (o->signature != e->signature) {
          InFlightDiagnostic diag = e->op->emitOpError()
                                    << "on rank " << r
                                    << " does not match the collective of rank "
                                    << m << " over the same group";
          diag.attachNote(o->op->getLoc()) << "rank " << m << " runs this";
          return diag;
        }
      }
      for (int64_t m : e->group)
        ++head[m];
      progress = true;
    }
  }
  SmallVector<int64_t> stuck;
  for (int64_t r = 0; r < numRanks; ++r)
    if (current(r))
      stuck.push_back(r);
  if (stuck.empty())
    return success();
  Event *first = current(stuck.front());
  InFlightDiagnostic diag = first->op->emitOpError()
                            << "communication of program '" << program
                            << "' deadlocks: rank " << stuck.front()
                            << " waits forever to " << describe(*first);
  for (int64_t r : ArrayRef<int64_t>(stuck).drop_front()) {
    Event *e = current(r);
    diag.attachNote(e->op->getLoc())
        << "rank " << r << " waits to " << describe(*e);
  }
  return diag;
}

struct DistRankVerifyMatchingPass
    : public distir::impl::DistRankVerifyMatchingPassBase<
          DistRankVerifyMatchingPass> {
  using DistRankVerifyMatchingPassBase::DistRankVerifyMatchingPassBase;
  void runOnOperation() final {
    if (failed(verifyRankMatching(getOperation())))
      signalPassFailure();
  }
};
} // namespace

LogicalResult distir::verifyRankMatching(ModuleOp module) {
  llvm::MapVector<StringRef, SmallVector<std::pair<int64_t, func::FuncOp>>>
      programs;
  llvm::StringMap<int64_t> numRanks;
  for (auto func : module.getOps<func::FuncOp>()) {
    auto rank = func->getAttrOfType<IntegerAttr>(kRankAttr);
    if (!rank)
      continue;
    StringRef program;
    if (auto name = func->getAttrOfType<StringAttr>(kProgramAttr))
      program = name.getValue();
    programs[program].push_back({rank.getInt(), func});
    int64_t &n = numRanks[program];
    if (auto count = func->getAttrOfType<IntegerAttr>(kNumRanksAttr))
      n = std::max(n, count.getInt());
    n = std::max(n, rank.getInt() + 1);
  }
  bool ok = true;
  for (auto &[program, funcs] : programs)
    if (failed(verifyProgram(program, funcs, numRanks[program])))
      ok = false;
  return success(ok);
}
