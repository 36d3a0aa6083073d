//===- DistToRank.cpp - Project global dist programs onto ranks -----------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Device ids are ranks. Every top-level op of a global function gets the
// device it runs on: the device of its placed operands and results (and of
// the values its regions use), or of the op that computed an unplaced
// operand (a scalar extracted from a tensor lives where the tensor lives).
// Ops with no device at all (constants, scalar math on unplaced arguments)
// are replicated: each rank clones the ones it needs. Communication ops
// become one dist_rank op per member, in program order, which is what keeps
// the projection deadlock-free.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Conversion/DistToRank.h"
#include "DistIR/Conversion/Passes.h"
#include "DistIR/Dialect/Dist/IR/DistOps.h"

#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace distir {
#define GEN_PASS_DEF_DISTTORANKPASS
#include "DistIR/Conversion/Passes.h.inc"
} // namespace distir

using namespace mlir;
using namespace distir;

namespace {

std::optional<int64_t> typeDevice(Type type) {
  if (dist::DeviceAttr device = dist::getDevice(type))
    return device.getId();
  return std::nullopt;
}

/// The devices a communication op involves, in the order its group lists
/// them (operand order, or result order for rooted one-to-many ops).
SmallVector<int64_t> commGroup(Operation *op) {
  SmallVector<int64_t> group;
  if (isa<dist::BroadcastOp, dist::ScatterOp>(op)) {
    for (Value v : op->getResults())
      group.push_back(*typeDevice(v.getType()));
  } else {
    for (Value v : op->getOperands())
      group.push_back(*typeDevice(v.getType()));
  }
  return group;
}

struct Projection {
  func::FuncOp global;
  int64_t numRanks = 0;
  bool stripPlacement = false;

  /// Device of each value of the top-level block (absent: replicated).
  DenseMap<Value, int64_t> valueDevice;
  /// Device of each non-communication top-level op (absent: replicated).
  DenseMap<Operation *, int64_t> opDevice;
  /// Tag of each dist.send (count of earlier sends of the same pair).
  DenseMap<Operation *, int64_t> sendTag;

  std::optional<int64_t> deviceOf(Value v) const {
    if (std::optional<int64_t> d = typeDevice(v.getType()))
      return d;
    auto it = valueDevice.find(v);
    if (it != valueDevice.end())
      return it->second;
    return std::nullopt;
  }

  LogicalResult analyze();
  LogicalResult analyzeComputeOp(Operation *op);
  int64_t resultOwner(Value v) const { return deviceOf(v).value_or(0); }
  FailureOr<func::FuncOp> build(OpBuilder &b, int64_t rank, StringRef name);
  LogicalResult emitComm(OpBuilder &b, Operation *op, int64_t rank,
                         IRMapping &map);
  RankedTensorType localType(Type t) const {
    auto tensor = cast<RankedTensorType>(t);
    if (!stripPlacement)
      return tensor;
    return RankedTensorType::get(tensor.getShape(), tensor.getElementType());
  }
};

LogicalResult Projection::analyzeComputeOp(Operation *op) {
  if (auto call = dyn_cast<CallOpInterface>(op)) {
    auto callee = dyn_cast_or_null<FunctionOpInterface>(call.resolveCallable());
    if (callee && callee.isExternal())
      return op->emitOpError()
             << "calls @" << callee.getName()
             << ", which has no body; a distributed program can only call "
                "functions that can be inlined into it";
    return op->emitOpError()
           << "is a call; dist-to-rank needs calls inlined first (--inline)";
  }
  // Devices of the op, its results, and everything its regions touch.
  llvm::SmallSetVector<int64_t, 4> devices;
  std::string firstUse;
  WalkResult walk = op->walk([&](Operation *inner) -> WalkResult {
    if (inner != op && isa<dist::DistDialect>(inner->getDialect())) {
      inner->emitOpError("inside a region is not supported by dist-to-rank");
      return WalkResult::interrupt();
    }
    for (Value v : inner->getOperands()) {
      std::optional<int64_t> d = typeDevice(v.getType());
      // Values from outside the op (captured or operands) carry the device
      // of their producer.
      if (!d && !op->isAncestor(v.getParentRegion()->getParentOp()))
        d = deviceOf(v);
      if (d)
        devices.insert(*d);
    }
    for (Value v : inner->getResults())
      if (std::optional<int64_t> d = typeDevice(v.getType()))
        devices.insert(*d);
    for (Region &region : inner->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (std::optional<int64_t> d = typeDevice(arg.getType()))
            devices.insert(*d);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (devices.size() > 1) {
    InFlightDiagnostic diag = op->emitOpError() << "involves devices ";
    llvm::interleaveComma(devices, diag);
    diag << "; only dist communication ops may move data between devices "
            "(a scalar lives on the device of the op that computed it)";
    return diag;
  }
  if (devices.empty())
    return success();
  int64_t device = devices.front();
  if (device >= numRanks)
    return op->emitOpError() << "runs on device " << device
                             << " but the program has " << numRanks << " ranks";
  opDevice[op] = device;
  for (Value r : op->getResults())
    valueDevice[r] = device;
  return success();
}

LogicalResult Projection::analyze() {
  if (!llvm::hasSingleElement(global.getBody()))
    return global.emitOpError()
           << "has " << global.getBody().getBlocks().size()
           << " blocks; dist-to-rank expects a single-block function";
  for (BlockArgument arg : global.getArguments())
    if (std::optional<int64_t> d = typeDevice(arg.getType()))
      if (*d >= numRanks)
        return global.emitOpError()
               << "argument #" << arg.getArgNumber() << " is on device " << *d
               << " but the program has " << numRanks << " ranks";
  DenseMap<std::pair<int64_t, int64_t>, int64_t> pairCount;
  for (Operation &op : global.getBody().front().without_terminator()) {
    if (isa<dist::ReshardOp>(op))
      return op.emitOpError() << "is planned by --dist-lower-reshard; run it "
                                 "before dist-to-rank";
    if (isa<dist::KernelOp>(op))
      return op.emitOpError() << "is profiled work (a measured duration, no "
                                 "semantics): it can be simulated, not "
                                 "lowered";
    if (isa<dist::DistDialect>(op.getDialect())) {
      for (Value v : llvm::concat<Value>(op.getOperands(), op.getResults()))
        if (std::optional<int64_t> d = typeDevice(v.getType()); *d >= numRanks)
          return op.emitOpError()
                 << "involves device " << *d << " but the program has "
                 << numRanks << " ranks";
      if (isa<dist::SendOp>(op)) {
        auto key = std::make_pair(*typeDevice(op.getOperand(0).getType()),
                                  *typeDevice(op.getResult(0).getType()));
        sendTag[&op] = pairCount[key]++;
      }
      continue;
    }
    if (failed(analyzeComputeOp(&op)))
      return failure();
  }
  return success();
}

LogicalResult Projection::emitComm(OpBuilder &b, Operation *op, int64_t rank,
                                   IRMapping &map) {
  Location loc = op->getLoc();
  SmallVector<int64_t> group = commGroup(op);
  auto index = llvm::find(group, rank) - group.begin();
  auto groupAttr = b.getDenseI64ArrayAttr(group);
  auto input = [&](unsigned i) { return map.lookup(op->getOperand(i)); };
  auto resultType = [&](unsigned i) {
    return localType(op->getResult(i).getType());
  };
  if (auto send = dyn_cast<dist::SendOp>(op)) {
    int64_t src = *typeDevice(send.getInput().getType());
    int64_t dst = *typeDevice(send.getResult().getType());
    int64_t tag = sendTag.lookup(op);
    if (src == dst)
      return op->emitOpError("sends to its own device");
    if (rank == src)
      dist_rank::SendOp::create(b, loc, input(0), dst, tag);
    if (rank == dst)
      map.map(send.getResult(),
              dist_rank::RecvOp::create(b, loc, resultType(0), src, tag)
                  .getResult());
    return success();
  }
  if (auto ar = dyn_cast<dist::AllReduceOp>(op)) {
    map.map(op->getResult(index), dist_rank::AllReduceOp::create(
                                      b, loc, resultType(index), input(index),
                                      groupAttr, ar.getKindAttr()));
    return success();
  }
  if (auto ag = dyn_cast<dist::AllGatherOp>(op)) {
    map.map(op->getResult(index), dist_rank::AllGatherOp::create(
                                      b, loc, resultType(index), input(index),
                                      groupAttr, ag.getDimAttr()));
    return success();
  }
  if (auto rs = dyn_cast<dist::ReduceScatterOp>(op)) {
    map.map(op->getResult(index),
            dist_rank::ReduceScatterOp::create(
                b, loc, resultType(index), input(index), groupAttr,
                rs.getKindAttr(), rs.getDimAttr()));
    return success();
  }
  if (auto a2a = dyn_cast<dist::AllToAllOp>(op)) {
    map.map(op->getResult(index),
            dist_rank::AllToAllOp::create(
                b, loc, resultType(index), input(index), groupAttr,
                a2a.getSplitDimAttr(), a2a.getConcatDimAttr()));
    return success();
  }
  if (auto bc = dyn_cast<dist::BroadcastOp>(op)) {
    int64_t root = *typeDevice(bc.getInput().getType());
    Value in = rank == root ? input(0) : Value();
    map.map(op->getResult(index), dist_rank::BroadcastOp::create(
                                      b, loc, resultType(index), in,
                                      b.getI64IntegerAttr(root), groupAttr));
    return success();
  }
  if (auto sc = dyn_cast<dist::ScatterOp>(op)) {
    int64_t root = *typeDevice(sc.getInput().getType());
    Value in = rank == root ? input(0) : Value();
    map.map(op->getResult(index),
            dist_rank::ScatterOp::create(b, loc, resultType(index), in,
                                         b.getI64IntegerAttr(root), groupAttr,
                                         sc.getDimAttr()));
    return success();
  }
  if (auto red = dyn_cast<dist::ReduceOp>(op)) {
    int64_t root = *typeDevice(red.getResult().getType());
    Type type = rank == root ? Type(resultType(0)) : Type();
    auto local = dist_rank::ReduceOp::create(b, loc, type, input(index),
                                             b.getI64IntegerAttr(root),
                                             groupAttr, red.getKindAttr());
    if (rank == root)
      map.map(red.getResult(), local.getResult());
    return success();
  }
  if (auto ga = dyn_cast<dist::GatherOp>(op)) {
    int64_t root = *typeDevice(ga.getResult().getType());
    Type type = rank == root ? Type(resultType(0)) : Type();
    auto local = dist_rank::GatherOp::create(b, loc, type, input(index),
                                             b.getI64IntegerAttr(root),
                                             groupAttr, ga.getDimAttr());
    if (rank == root)
      map.map(ga.getResult(), local.getResult());
    return success();
  }
  return op->emitOpError("is not supported by dist-to-rank");
}

bool involves(Operation *op, int64_t rank) {
  if (isa<dist::SendOp>(op))
    return *typeDevice(op->getOperand(0).getType()) == rank ||
           *typeDevice(op->getResult(0).getType()) == rank;
  return llvm::is_contained(commGroup(op), rank);
}

FailureOr<func::FuncOp> Projection::build(OpBuilder &b, int64_t rank,
                                          StringRef name) {
  Block &body = global.getBody().front();
  Operation *terminator = body.getTerminator();

  // Which ops rank `rank` runs: its own and the communication it takes part
  // in, plus the replicated ops whose values those need (backwards).
  DenseSet<Operation *> keep;
  DenseSet<Value> needed;
  auto markNeeded = [&](Operation *op) {
    keep.insert(op);
    for (Value v : op->getOperands())
      needed.insert(v);
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegions(), captured);
    for (Value v : captured)
      needed.insert(v);
  };
  SmallVector<unsigned> resultMap;
  for (OpOperand &operand : terminator->getOpOperands())
    if (resultOwner(operand.get()) == rank) {
      resultMap.push_back(operand.getOperandNumber());
      needed.insert(operand.get());
    }
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    bool isComm = isa<dist::DistDialect>(op.getDialect());
    if (isComm) {
      if (involves(&op, rank))
        markNeeded(&op);
      continue;
    }
    auto device = opDevice.find(&op);
    if (device != opDevice.end()) {
      if (device->second == rank)
        markNeeded(&op);
      continue;
    }
    // Replicated: only where used (or everywhere if it has no results).
    if (op.getNumResults() == 0 || llvm::any_of(op.getResults(), [&](Value v) {
          return needed.contains(v);
        }))
      markNeeded(&op);
  }

  // Signature: placed arguments on their device, unplaced ones everywhere.
  SmallVector<Type> argTypes, resultTypes;
  SmallVector<int64_t> argMap, resultMapAttr;
  for (BlockArgument arg : global.getArguments()) {
    std::optional<int64_t> d = typeDevice(arg.getType());
    if (d && *d != rank)
      continue;
    argMap.push_back(arg.getArgNumber());
    argTypes.push_back(d ? Type(localType(arg.getType())) : arg.getType());
  }
  for (unsigned i : resultMap) {
    Type t = terminator->getOperand(i).getType();
    resultTypes.push_back(
        isa<RankedTensorType>(t) && typeDevice(t) ? Type(localType(t)) : t);
    resultMapAttr.push_back(i);
  }
  auto func = func::FuncOp::create(b, global.getLoc(), name,
                                   b.getFunctionType(argTypes, resultTypes));
  func->setAttr(dist_rank::kRankAttr, b.getI64IntegerAttr(rank));
  func->setAttr(dist_rank::kNumRanksAttr, b.getI64IntegerAttr(numRanks));
  func->setAttr(dist_rank::kProgramAttr, b.getStringAttr(global.getSymName()));
  func->setAttr(dist_rank::kArgMapAttr, b.getDenseI64ArrayAttr(argMap));
  func->setAttr(dist_rank::kResultMapAttr,
                b.getDenseI64ArrayAttr(resultMapAttr));
  Block *entry = func.addEntryBlock();
  IRMapping map;
  for (auto [i, global] : llvm::enumerate(argMap))
    map.map(this->global.getArgument(global), entry->getArgument(i));

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(entry);
  for (Operation &op : body.without_terminator()) {
    if (!keep.contains(&op))
      continue;
    if (isa<dist::DistDialect>(op.getDialect())) {
      if (failed(emitComm(b, &op, rank, map)))
        return failure();
      continue;
    }
    b.clone(op, map);
  }
  SmallVector<Value> results;
  for (unsigned i : resultMap)
    results.push_back(map.lookup(terminator->getOperand(i)));
  func::ReturnOp::create(b, terminator->getLoc(), results);

  if (stripPlacement)
    distir::stripPlacement(func);
  return func;
}

/// The largest device id used in `func`, or -1.
int64_t maxDevice(func::FuncOp func) {
  int64_t result = -1;
  auto visit = [&](Type t) {
    if (std::optional<int64_t> d = typeDevice(t))
      result = std::max(result, *d);
  };
  for (Type t : func.getArgumentTypes())
    visit(t);
  func.walk([&](Operation *op) {
    for (Value v : op->getResults())
      visit(v.getType());
    for (Region &r : op->getRegions())
      for (Block &block : r)
        for (BlockArgument arg : block.getArguments())
          visit(arg.getType());
  });
  return result;
}

} // namespace

void distir::stripPlacement(Operation *root) {
  AttrTypeReplacer replacer;
  replacer.addReplacement([](RankedTensorType t) -> std::optional<Type> {
    if (!isa_and_nonnull<dist::DeviceAttr>(t.getEncoding()))
      return std::nullopt;
    return RankedTensorType::get(t.getShape(), t.getElementType());
  });
  // Dense constants hold their type in the attribute, which the generic
  // sub-element replacement does not rebuild.
  replacer.addReplacement(
      [](DenseIntOrFPElementsAttr a) -> std::optional<Attribute> {
        auto t = dyn_cast<RankedTensorType>(a.getType());
        if (!t || !isa_and_nonnull<dist::DeviceAttr>(t.getEncoding()))
          return std::nullopt;
        return a.reshape(
            RankedTensorType::get(t.getShape(), t.getElementType()));
      });
  // Inherent attributes (arith.constant's value) live in properties, which
  // replaceElementsIn does not visit.
  root->walk([&](Operation *op) {
    if (!op->getPropertiesStorageSize())
      return;
    Attribute props = op->getPropertiesAsAttribute();
    Attribute replaced = props ? replacer.replace(props) : Attribute();
    if (replaced && replaced != props)
      (void)op->setPropertiesFromAttribute(replaced, /*emitError=*/nullptr);
  });
  replacer.recursivelyReplaceElementsIn(root, /*replaceAttrs=*/true,
                                        /*replaceLocs=*/false,
                                        /*replaceTypes=*/true);
}

namespace {
/// The most ranks a program may be projected onto.
constexpr int64_t kMaxRanks = int64_t(1) << 16;

struct DistToRankPass
    : public distir::impl::DistToRankPassBase<DistToRankPass> {
  using DistToRankPassBase::DistToRankPassBase;

  void runOnOperation() final {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> globals;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && !func->hasAttr(dist_rank::kRankAttr) &&
          maxDevice(func) >= 0)
        globals.push_back(func);

    for (func::FuncOp global : globals) {
      Projection p;
      p.global = global;
      p.stripPlacement = stripPlacement;
      p.numRanks = numRanks > 0 ? numRanks.getValue() : maxDevice(global) + 1;
      // One function per rank: bound the work a device id can ask for.
      if (numRanks < 0 || p.numRanks > kMaxRanks) {
        global.emitOpError()
            << (numRanks != 0 ? "num-ranks=" + std::to_string(numRanks)
                              : "uses device " + std::to_string(p.numRanks - 1))
            << ": dist-to-rank builds one function per rank, for 1 to "
            << kMaxRanks << " ranks";
        return signalPassFailure();
      }
      if (failed(p.analyze()))
        return signalPassFailure();
      OpBuilder b(global);
      b.setInsertionPointAfter(global);
      SmallVector<Attribute> rankFuncs;
      for (int64_t r = 0; r < p.numRanks; ++r) {
        std::string name = (global.getSymName() + "_rank" + Twine(r)).str();
        if (symbols.lookup(name)) {
          global.emitOpError() << "cannot create rank function @" << name
                               << ": the symbol already exists";
          return signalPassFailure();
        }
        FailureOr<func::FuncOp> func = p.build(b, r, name);
        if (failed(func))
          return signalPassFailure();
        symbols.insert(*func);
        b.setInsertionPointAfter(*func);
        rankFuncs.push_back(FlatSymbolRefAttr::get(*func));
      }
      if (keepGlobal)
        global->setAttr(dist_rank::kRanksAttr, b.getArrayAttr(rankFuncs));
      else
        global.erase();
    }
    if (failed(verifyRankMatching(module)))
      signalPassFailure();
  }
};
} // namespace
