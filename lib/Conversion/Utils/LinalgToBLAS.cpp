//===- LinalgToBLAS.cpp - Matrix products of rank code as CBLAS calls -----===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// The loops convert-linalg-to-loops makes of a matmul run at a small
// fraction of what a tuned kernel reaches on the same core; a well-kept BLAS
// (OpenBLAS from Debian) is the kernel PyTorch's CPU path uses too. This
// pass replaces each structured contraction on buffers that is one matrix
// product (optionally batched) by `cblas_sgemm`/`cblas_dgemm` calls:
//
//   C[b] += op(A[b]) * op(B[b])   (row-major; op = transpose when the
//                                  operand's map reads (k, m) / (n, k))
//
// It applies when the op is a contraction (linalg::inferContractionDims:
// one m, one n, one k dimension, any batch dimensions, one call per batch
// index), every operand has the same f32/f64 element type, C is indexed
// (batch..., m, n), and every
// operand's innermost stride is statically 1 (leading dimensions come from
// the buffers' strided metadata). Everything else stays for
// convert-linalg-to-loops. It runs after buffer deallocation: the calls take
// raw pointers, and the frees placed by then follow the replaced op.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"

namespace distir {
#define GEN_PASS_DEF_DISTLINALGTOBLASPASS
#include "DistIR/Conversion/Passes.h.inc"
} // namespace distir

using namespace mlir;

namespace {

/// CBLAS enum values (cblas.h).
constexpr int64_t kRowMajor = 101, kNoTrans = 111, kTrans = 112;

/// How one operand is read: the loop dims of its two matrix axes (row,
/// column) and, for each of its leading axes, the batch loop it follows.
struct OperandAxes {
  SmallVector<unsigned> batch;
  unsigned row, col;
};

/// The operand's map as (batch..., row, col) over loop dims, if it is a
/// projected permutation of that form; the batch axes are batch loops in
/// loop order (an operand may skip some: it is broadcast along them).
std::optional<OperandAxes> axesOf(AffineMap map,
                                  const linalg::ContractionDimensions &dims) {
  if (!map.isProjectedPermutation() || map.getNumResults() < 2)
    return std::nullopt;
  SmallVector<unsigned> loops;
  for (AffineExpr e : map.getResults())
    loops.push_back(cast<AffineDimExpr>(e).getPosition());
  OperandAxes axes;
  axes.row = loops[loops.size() - 2];
  axes.col = loops.back();
  for (unsigned l : ArrayRef<unsigned>(loops).drop_back(2)) {
    if (!llvm::is_contained(dims.batch, l) ||
        (!axes.batch.empty() && l < axes.batch.back()))
      return std::nullopt;
    axes.batch.push_back(l);
  }
  return axes;
}

struct LinalgToBLASPass
    : public distir::impl::DistLinalgToBLASPassBase<LinalgToBLASPass> {
  using DistLinalgToBLASPassBase::DistLinalgToBLASPassBase;

  func::FuncOp gemmDecl(ModuleOp module, OpBuilder &b, Type element) {
    StringRef name = element.isF32() ? "cblas_sgemm" : "cblas_dgemm";
    if (auto f = module.lookupSymbol<func::FuncOp>(name))
      return f;
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(module.getBody());
    Type i32 = b.getI32Type(), ptr = LLVM::LLVMPointerType::get(b.getContext());
    auto f = func::FuncOp::create(
        b, module.getLoc(), name,
        b.getFunctionType({i32, i32, i32, i32, i32, i32, element, ptr, i32, ptr,
                           i32, element, ptr, i32},
                          {}));
    f.setPrivate();
    return f;
  }

  /// Rewrites `op` into CBLAS calls; false (op untouched) when it does not
  /// fit.
  bool rewrite(linalg::LinalgOp op, ModuleOp module) {
    if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
        op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
      return false;
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(op);
    if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
        dims->k.size() != 1 ||
        op.getNumLoops() != 3 + dims->batch.size())
      return false;
    SmallVector<Value> buffers = {op.getDpsInputs()[0], op.getDpsInputs()[1],
                                  op.getDpsInits()[0]};
    Type element = cast<MemRefType>(buffers[2].getType()).getElementType();
    if (!element.isF32() && !element.isF64())
      return false;
    SmallVector<OperandAxes> axes;
    for (auto [i, buffer] : llvm::enumerate(buffers)) {
      auto type = dyn_cast<MemRefType>(buffer.getType());
      if (!type || type.getElementType() != element)
        return false;
      SmallVector<int64_t> strides;
      int64_t offset;
      if (failed(type.getStridesAndOffset(strides, offset)) ||
          strides.back() != 1)
        return false;
      std::optional<OperandAxes> a =
          axesOf(op.getMatchingIndexingMap(&op->getOpOperand(i)), *dims);
      if (!a)
        return false;
      axes.push_back(*a);
    }
    unsigned m = dims->m[0], n = dims->n[0], k = dims->k[0];
    bool transA = axes[0].row == k && axes[0].col == m;
    bool transB = axes[1].row == n && axes[1].col == k;
    if (!(transA || (axes[0].row == m && axes[0].col == k)) ||
        !(transB || (axes[1].row == k && axes[1].col == n)) ||
        axes[2].row != m || axes[2].col != n ||
        axes[2].batch.size() != dims->batch.size())
      return false;

    OpBuilder b(op);
    Location loc = op.getLoc();
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
    int64_t bytes = element.getIntOrFloatBitWidth() / 8;
    auto cIndex = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v).getResult();
    };
    auto toI32 = [&](Value v) {
      return arith::IndexCastOp::create(b, loc, i32, v).getResult();
    };
    SmallVector<Value> loopSizes;
    for (Range r : op.createLoopRanges(b, loc))
      loopSizes.push_back(getValueOrCreateConstantIndexOp(b, loc, r.size));
    // Base address (aligned pointer + offset, in bytes), leading dimension
    // and stride along each batch loop (0 where the operand is broadcast)
    // of each operand.
    struct View {
      Value base, ld;
      SmallVector<Value> batchStrides;
    };
    SmallVector<View> views;
    for (auto [i, buffer] : llvm::enumerate(buffers)) {
      auto meta =
          memref::ExtractStridedMetadataOp::create(b, loc, buffer);
      Value aligned =
          memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
      // The aligned pointer excludes the view's offset: add it.
      Value offsetBytes = arith::MulIOp::create(b, loc, meta.getOffset(),
                                                cIndex(bytes));
      Value base = arith::AddIOp::create(b, loc, aligned, offsetBytes);
      unsigned rank = cast<MemRefType>(buffer.getType()).getRank();
      View v{base, meta.getStrides()[rank - 2], {}};
      for (unsigned l : dims->batch) {
        const auto *at = llvm::find(axes[i].batch, l);
        v.batchStrides.push_back(
            at == axes[i].batch.end()
                ? cIndex(0)
                : meta.getStrides()[at - axes[i].batch.begin()]);
      }
      views.push_back(v);
    }
    auto pointerAt = [&](const View &view, ArrayRef<Value> batch) {
      Value elements = cIndex(0);
      for (auto [index, stride] : llvm::zip(batch, view.batchStrides))
        elements = arith::AddIOp::create(
            b, loc, elements, arith::MulIOp::create(b, loc, index, stride));
      Value off = arith::MulIOp::create(b, loc, elements, cIndex(bytes));
      Value addr = arith::AddIOp::create(b, loc, view.base, off);
      Value asInt = arith::IndexCastOp::create(b, loc, i64, addr);
      return LLVM::IntToPtrOp::create(b, loc, ptrType, asInt).getResult();
    };
    func::FuncOp gemm = gemmDecl(module, b, element);
    auto constI32 = [&](int64_t v) {
      return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v))
          .getResult();
    };
    Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(element, 1.0));
    Value order = constI32(kRowMajor);
    Value tA = constI32(transA ? kTrans : kNoTrans);
    Value tB = constI32(transB ? kTrans : kNoTrans);
    Value sizeM = toI32(loopSizes[m]), sizeN = toI32(loopSizes[n]),
          sizeK = toI32(loopSizes[k]);
    // BLAS wants ld >= max(1, columns). A one-row view may carry any row
    // stride (it is never used): raise it. Views with a smaller stride and
    // several rows (broadcasts) keep the loops: the op is cloned into the
    // other branch of a run-time check.
    Value cond;
    SmallVector<Value> lds;
    for (auto [i, view] : llvm::enumerate(views)) {
      Value rows = loopSizes[axes[i].row], cols = loopSizes[axes[i].col];
      Value minLd = arith::MaxSIOp::create(b, loc, cols, cIndex(1));
      Value oneRow = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           rows, cIndex(1));
      Value ld = arith::SelectOp::create(
          b, loc, oneRow, arith::MaxSIOp::create(b, loc, view.ld, minLd),
          view.ld);
      Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, ld,
                                       minLd);
      cond = cond ? arith::AndIOp::create(b, loc, cond, ok).getResult() : ok;
      lds.push_back(toI32(ld));
    }
    auto check = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(check.elseBlock()->getTerminator());
      b.clone(*op);
    }
    b.setInsertionPoint(check.thenBlock()->getTerminator());
    auto emitCall = [&](ArrayRef<Value> batch) {
      func::CallOp::create(
          b, loc, gemm,
          ValueRange{order, tA, tB, sizeM, sizeN, sizeK, one,
                     pointerAt(views[0], batch), lds[0],
                     pointerAt(views[1], batch), lds[1], one,
                     pointerAt(views[2], batch), lds[2]});
    };
    // One call per batch index, in nested loops.
    SmallVector<Value> batch;
    for (unsigned l : dims->batch) {
      auto loop =
          scf::ForOp::create(b, loc, cIndex(0), loopSizes[l], cIndex(1));
      b.setInsertionPoint(loop.getBody()->getTerminator());
      batch.push_back(loop.getInductionVar());
    }
    emitCall(batch);
    op->erase();
    return true;
  }

  void runOnOperation() final {
    ModuleOp module = getOperation();
    SmallVector<linalg::LinalgOp> ops;
    module.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    for (linalg::LinalgOp op : ops)
      rewrite(op, module);
  }
};

} // namespace
