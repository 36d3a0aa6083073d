//===- FixOpenMPISymbols.cpp - Rename OpenMPI reduction-op globals --------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// MLIR 22's convert-mpi-to-llvm names OpenMPI's predefined reduction ops
// `ompi_mpi_<op>`, but OpenMPI exports them as `ompi_mpi_op_<op>`
// (ompi/mpi/c/allreduce.c uses MPI_SUM == &ompi_mpi_op_sum). Without this
// rename, linking or JIT-resolving the lowered module fails.
//
// It also loads the communicator that MPI_Comm_split returns as an i32 and
// sign-extends it, which is right for MPICH's integer handles but truncates
// OpenMPI's pointer handles (the next call through that communicator
// crashes); the pass loads the whole 64-bit handle instead.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace distir {
#define GEN_PASS_DEF_DISTFIXOPENMPISYMBOLSPASS
#include "DistIR/Conversion/Passes.h.inc"
} // namespace distir

using namespace mlir;

namespace {
struct DistFixOpenMPISymbolsPass
    : public distir::impl::DistFixOpenMPISymbolsPassBase<
          DistFixOpenMPISymbolsPass> {
  using DistFixOpenMPISymbolsPassBase::DistFixOpenMPISymbolsPassBase;

  /// `load i32 %out; sext to i64` of MPI_Comm_split's output handle becomes
  /// `load i64 %out`.
  void fixCommSplit(ModuleOp module) {
    SmallVector<LLVM::CallOp> calls;
    module.walk([&](LLVM::CallOp call) {
      if (call.getCallee() == StringRef("MPI_Comm_split") &&
          call.getNumOperands() == 4)
        calls.push_back(call);
    });
    for (LLVM::CallOp call : calls) {
      Value out = call.getOperand(3);
      for (Operation *user : llvm::make_early_inc_range(out.getUsers())) {
        auto load = dyn_cast<LLVM::LoadOp>(user);
        if (!load || !load.getType().isInteger(32))
          continue;
        OpBuilder b(load);
        auto wide = LLVM::LoadOp::create(b, load.getLoc(), b.getI64Type(), out);
        for (Operation *ext : llvm::make_early_inc_range(load->getUsers()))
          if (auto sext = dyn_cast<LLVM::SExtOp>(ext);
              sext && sext.getType().isInteger(64)) {
            sext.replaceAllUsesWith(wide.getResult());
            sext.erase();
          }
        if (load->use_empty())
          load.erase();
      }
    }
  }

  void runOnOperation() final {
    ModuleOp module = getOperation();
    fixCommSplit(module);
    static constexpr StringLiteral ops[] = {
        "max", "min",  "sum",  "prod",   "land",   "band",   "lor",
        "bor", "lxor", "bxor", "minloc", "maxloc", "replace"};
    SymbolTable symbols(module);
    for (StringRef op : ops) {
      std::string wrong = ("ompi_mpi_" + op).str();
      std::string right = ("ompi_mpi_op_" + op).str();
      Operation *global = symbols.lookup(wrong);
      if (!global || !isa<LLVM::GlobalOp>(global))
        continue;
      if (symbols.lookup(right)) {
        // Both exist: point the uses at the right one and drop the wrong.
        if (failed(SymbolTable::replaceAllSymbolUses(
                StringAttr::get(&getContext(), wrong),
                StringAttr::get(&getContext(), right), module)))
          return signalPassFailure();
        symbols.erase(global);
        continue;
      }
      if (failed(symbols.rename(global, right))) {
        global->emitOpError() << "cannot be renamed to " << right;
        return signalPassFailure();
      }
    }
  }
};
} // namespace
