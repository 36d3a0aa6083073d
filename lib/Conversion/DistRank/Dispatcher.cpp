//===- Dispatcher.cpp - One entry point that runs this process's rank -----===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Shared by the MPI and NCCL lowerings: they differ only in how a process
// learns its rank.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Conversion/DistToRank.h"
#include "DistIR/Dialect/Dist/IR/DistRankOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace distir::dist_rank;

SmallVector<Value> distir::buildPlaceholderResults(OpBuilder &b, Location loc,
                                                   TypeRange types) {
  SmallVector<Value> values;
  for (Type t : types) {
    if (auto tensor = dyn_cast<RankedTensorType>(t))
      values.push_back(tensor::EmptyOp::create(b, loc, tensor.getShape(),
                                               tensor.getElementType()));
    else
      values.push_back(
          arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(t))));
  }
  return values;
}

void distir::buildRankDispatcher(
    func::FuncOp global, ArrayRef<func::FuncOp> rankFuncs,
    function_ref<Value(OpBuilder &, Location)> getRank) {
  Location loc = global.getLoc();
  global->removeAttr(kRanksAttr);
  Block &entry = global.getBody().front();
  entry.dropAllDefinedValueUses();
  entry.dropAllReferences();
  while (!entry.empty())
    entry.back().erase();
  OpBuilder b = OpBuilder::atBlockEnd(&entry);
  Value rank =
      arith::IndexCastOp::create(b, loc, b.getIndexType(), getRank(b, loc));
  SmallVector<int64_t> cases;
  for (func::FuncOp f : rankFuncs)
    cases.push_back(f->getAttrOfType<IntegerAttr>(kRankAttr).getInt());
  TypeRange resultTypes = global.getResultTypes();
  auto sw = scf::IndexSwitchOp::create(b, loc, resultTypes, rank, cases,
                                       cases.size());
  auto placeholders = [&](OpBuilder &cb) {
    return buildPlaceholderResults(cb, loc, resultTypes);
  };
  for (auto [i, f] : llvm::enumerate(rankFuncs)) {
    Block &block = sw.getCaseRegions()[i].emplaceBlock();
    OpBuilder cb = OpBuilder::atBlockEnd(&block);
    SmallVector<Value> args;
    for (int64_t a :
         f->getAttrOfType<DenseI64ArrayAttr>(kArgMapAttr).asArrayRef())
      args.push_back(entry.getArgument(a));
    auto call = func::CallOp::create(cb, loc, f, args);
    SmallVector<Value> results = placeholders(cb);
    for (auto [j, r] : llvm::enumerate(
             f->getAttrOfType<DenseI64ArrayAttr>(kResultMapAttr).asArrayRef()))
      results[r] = call.getResult(j);
    scf::YieldOp::create(cb, loc, results);
  }
  Block &fallback = sw.getDefaultRegion().emplaceBlock();
  OpBuilder cb = OpBuilder::atBlockEnd(&fallback);
  scf::YieldOp::create(cb, loc, placeholders(cb));
  func::ReturnOp::create(b, loc, sw.getResults());
}

Value distir::buildGroupCommunicator(OpBuilder &b, ModuleOp module,
                                     Location loc, ArrayRef<int64_t> group,
                                     StringRef runtimeFunc) {
  Type i64 = b.getI64Type();
  auto func = module.lookupSymbol<func::FuncOp>(runtimeFunc);
  if (!func) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(module.getBody());
    func = func::FuncOp::create(b, loc, runtimeFunc,
                                b.getFunctionType({i64, i64}, {i64}));
    func.setPrivate();
  }
  // One constant array per distinct group, named by its members.
  std::string name = "__distir_group";
  for (int64_t r : group)
    name += "_" + std::to_string(r);
  auto type = MemRefType::get({static_cast<int64_t>(group.size())}, i64);
  if (!module.lookupSymbol(name)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    auto values = DenseElementsAttr::get(
        RankedTensorType::get(type.getShape(), i64), group);
    memref::GlobalOp::create(b, loc, name, b.getStringAttr("private"), type,
                             values, /*constant=*/true,
                             /*alignment=*/IntegerAttr());
  }
  Value ranks = memref::GetGlobalOp::create(b, loc, type, name);
  Value index = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, ranks);
  Value pointer = arith::IndexCastOp::create(b, loc, i64, index);
  Value size = arith::ConstantOp::create(
      b, loc, b.getI64IntegerAttr(static_cast<int64_t>(group.size())));
  return func::CallOp::create(b, loc, func, ValueRange{pointer, size})
      .getResult(0);
}
