//===- ApproximateMath.cpp - Kernel math without libdevice ----------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// The NVVM lowering calls libdevice for math functions, which ties code
// generation to a CUDA installation (and leaves unresolved calls in the PTX
// when none is found). Upstream's expansion and polynomial approximation
// patterns turn transcendental functions into arithmetic; what they leave
// (floor, sqrt, fma, ...) is one PTX instruction each, emitted as inline
// assembly. Any other math op is an error.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/TypeSwitch.h"

namespace distir {
#define GEN_PASS_DEF_DISTGPUAPPROXIMATEMATHPASS
#include "DistIR/Conversion/Passes.h.inc"
} // namespace distir

using namespace mlir;

namespace {

/// The PTX instruction (without type suffix) of a math op that has one.
std::optional<StringRef> ptxInstruction(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<StringRef>>(op)
      .Case<math::AbsFOp>([](auto) { return StringRef("abs"); })
      .Case<math::FloorOp>([](auto) { return StringRef("cvt.rmi"); })
      .Case<math::CeilOp>([](auto) { return StringRef("cvt.rpi"); })
      .Case<math::TruncOp>([](auto) { return StringRef("cvt.rzi"); })
      .Case<math::RoundEvenOp>([](auto) { return StringRef("cvt.rni"); })
      .Case<math::SqrtOp>([](auto) { return StringRef("sqrt.rn"); })
      .Case<math::FmaOp>([](auto) { return StringRef("fma.rn"); })
      .Default([](Operation *) { return std::nullopt; });
}

/// `op` as one PTX instruction in inline assembly, e.g.
/// "cvt.rmi.f32.f32 $0, $1;" with constraints "=f,f".
LogicalResult toInlinePTX(Operation *op) {
  std::optional<StringRef> instruction = ptxInstruction(op);
  Type type = op->getResult(0).getType();
  if (!instruction || !(type.isF32() || type.isF64()))
    return op->emitOpError("device=gpu: no GPU lowering of this math op "
                           "without CUDA's libdevice");
  std::string suffix = type.isF32() ? ".f32" : ".f64";
  std::string text = instruction->str() + suffix;
  if (instruction->starts_with("cvt"))
    text += suffix; // cvt names destination and source types.
  text += " $0";
  std::string constraints = type.isF32() ? "=f" : "=d";
  for (unsigned i = 0; i < op->getNumOperands(); ++i) {
    text += ", $" + std::to_string(i + 1);
    constraints += type.isF32() ? ",f" : ",d";
  }
  text += ";";
  OpBuilder b(op);
  auto asmOp = LLVM::InlineAsmOp::create(
      b, op->getLoc(), type, op->getOperands(), text, constraints,
      /*has_side_effects=*/false, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  op->getResult(0).replaceAllUsesWith(asmOp.getRes());
  op->erase();
  return success();
}

struct ApproximateMathPass
    : public distir::impl::DistGPUApproximateMathPassBase<ApproximateMathPass> {
  void runOnOperation() final {
    RewritePatternSet patterns(&getContext());
    math::populateExpansionPatterns(patterns);
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    SmallVector<Operation *> rest;
    getOperation()->walk([&](Operation *op) {
      if (isa<math::MathDialect>(op->getDialect()))
        rest.push_back(op);
    });
    for (Operation *op : rest)
      if (failed(toInlinePTX(op)))
        return signalPassFailure();
  }
};

} // namespace
