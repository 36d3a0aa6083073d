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
// It applies when the op is a contraction (linalg::inferContractionDims),
// every operand has the same f32/f64 element type, and each operand reads
// its dims as (batch..., rows..., cols...): C as (m..., n...), A as (m...,
// k...) or transposed, B as (k..., n...) or transposed; a C stored as (n...,
// m...) is the product B^T A^T (the operands trade places). A zero fill of C
// right before the op becomes BLAS's beta = 0. Several m (or n, k)
// loops form one BLAS dimension when the buffer's strides let them collapse
// (a [B, S, E] activation times an [E, F] weight is one (B*S) x E product; a
// weight gradient sums over B and S as one K), checked at run time with
// BLAS's leading-dimension rule; batch loops become nested loops of calls.
// Operands' innermost strides must be statically 1 (leading dimensions and
// strides come from the buffers' strided metadata). Everything else stays for
// convert-linalg-to-loops. It runs after buffer deallocation: the calls take
// raw pointers, and the frees placed by then follow the replaced op.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <limits>

namespace distir {
#define GEN_PASS_DEF_DISTLINALGTOBLASPASS
#include "DistIR/Conversion/Passes.h.inc"
} // namespace distir

using namespace mlir;

namespace {

/// CBLAS enum values (cblas.h).
constexpr int64_t kRowMajor = 101, kNoTrans = 111, kTrans = 112;

/// The role of a loop of a contraction.
enum class Role { Batch, M, N, K };

/// How one operand is read: for each of its axes, the loop it follows; the
/// leading axes follow batch loops (in loop order; an operand may skip some:
/// it is broadcast along them), then come the row axes (one role), then the
/// column axes (another role), each group in loop order and complete.
struct OperandAxes {
  SmallVector<unsigned> batch, rows, cols;
  Role rowRole = Role::M, colRole = Role::K;
};

struct Contraction {
  linalg::ContractionDimensions dims;
  Role roleOf(unsigned loop) const {
    if (llvm::is_contained(dims.m, loop))
      return Role::M;
    if (llvm::is_contained(dims.n, loop))
      return Role::N;
    if (llvm::is_contained(dims.k, loop))
      return Role::K;
    return Role::Batch;
  }
  size_t groupSize(Role role) const {
    return role == Role::M   ? dims.m.size()
           : role == Role::N ? dims.n.size()
           : role == Role::K ? dims.k.size()
                             : dims.batch.size();
  }
};

std::optional<OperandAxes> axesOf(AffineMap map, const Contraction &c) {
  if (!map.isProjectedPermutation())
    return std::nullopt;
  OperandAxes axes;
  size_t pos = 0, n = map.getNumResults();
  auto loopAt = [&](size_t i) {
    return cast<AffineDimExpr>(map.getResult(i)).getPosition();
  };
  for (; pos < n && c.roleOf(loopAt(pos)) == Role::Batch; ++pos)
    axes.batch.push_back(loopAt(pos));
  if (pos == n)
    return std::nullopt;
  axes.rowRole = c.roleOf(loopAt(pos));
  for (; pos < n && c.roleOf(loopAt(pos)) == axes.rowRole; ++pos)
    axes.rows.push_back(loopAt(pos));
  if (pos == n)
    return std::nullopt;
  axes.colRole = c.roleOf(loopAt(pos));
  for (; pos < n && c.roleOf(loopAt(pos)) == axes.colRole; ++pos)
    axes.cols.push_back(loopAt(pos));
  if (pos != n || axes.rows.size() != c.groupSize(axes.rowRole) ||
      axes.cols.size() != c.groupSize(axes.colRole))
    return std::nullopt;
  for (ArrayRef<unsigned> group :
       {ArrayRef<unsigned>(axes.batch), ArrayRef<unsigned>(axes.rows),
        ArrayRef<unsigned>(axes.cols)})
    if (!llvm::is_sorted(group))
      return std::nullopt;
  return axes;
}

struct LinalgToBLASPass
    : public distir::impl::DistLinalgToBLASPassBase<LinalgToBLASPass> {
  using DistLinalgToBLASPassBase::DistLinalgToBLASPassBase;

  func::FuncOp gemmDecl(ModuleOp module, OpBuilder &b, Type element) {
    std::string name =
        (library == distir::BLASLibrary::CUBLAS ? "distir_cublas_" : "cblas_") +
        std::string(element.isF32() ? "sgemm" : "dgemm");
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

  /// The linalg.fill of zeros into `output` that runs right before `op`
  /// (only ops without memory effects in between), or null.
  static linalg::FillOp findZeroFill(Operation *op, Value output) {
    for (Operation *prev = op->getPrevNode(); prev;
         prev = prev->getPrevNode()) {
      if (auto fill = dyn_cast<linalg::FillOp>(prev)) {
        if (fill.hasPureBufferSemantics() && fill.getDpsInits()[0] == output &&
            matchPattern(fill.getDpsInputs()[0], m_PosZeroFloat()))
          return fill;
        return {};
      }
      if (!isMemoryEffectFree(prev))
        return {};
    }
    return {};
  }

  /// Rewrites `op` into CBLAS calls; false (op untouched) when it does not
  /// fit.
  bool rewrite(linalg::LinalgOp op, ModuleOp module) {
    if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
        op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
      return false;
    FailureOr<linalg::ContractionDimensions> inferred =
        linalg::inferContractionDims(op);
    if (failed(inferred) || inferred->m.empty() || inferred->n.empty() ||
        inferred->k.empty())
      return false;
    Contraction c{*inferred};
    if (op.getNumLoops() != c.dims.batch.size() + c.dims.m.size() +
                                c.dims.n.size() + c.dims.k.size())
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
          axesOf(op.getMatchingIndexingMap(&op->getOpOperand(i)), c);
      if (!a)
        return false;
      axes.push_back(*a);
    }
    auto is = [](const OperandAxes &a, Role row, Role col) {
      return a.rowRole == row && a.colRole == col;
    };
    // C stored as [n][m] (attention's dQ/dK products): C^T = B^T A^T, so
    // the operands trade places and m and n their roles.
    if (is(axes[2], Role::N, Role::M)) {
      std::swap(buffers[0], buffers[1]);
      std::swap(axes[0], axes[1]);
      std::swap(c.dims.m, c.dims.n);
      auto swapRole = [](Role &r) {
        r = r == Role::M ? Role::N : r == Role::N ? Role::M : r;
      };
      for (OperandAxes &a : axes) {
        swapRole(a.rowRole);
        swapRole(a.colRole);
      }
    }
    bool transA = is(axes[0], Role::K, Role::M);
    bool transB = is(axes[1], Role::N, Role::K);
    if (!(transA || is(axes[0], Role::M, Role::K)) ||
        !(transB || is(axes[1], Role::K, Role::N)) ||
        !is(axes[2], Role::M, Role::N) ||
        axes[2].batch.size() != c.dims.batch.size())
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
    auto mul = [&](Value x, Value y) {
      return arith::MulIOp::create(b, loc, x, y).getResult();
    };
    auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
      return arith::CmpIOp::create(b, loc, p, x, y).getResult();
    };
    SmallVector<Value> loopSizes;
    for (Range r : op.createLoopRanges(b, loc))
      loopSizes.push_back(getValueOrCreateConstantIndexOp(b, loc, r.size));
    auto product = [&](ArrayRef<unsigned> loops) {
      Value p = cIndex(1);
      for (unsigned l : loops)
        p = mul(p, loopSizes[l]);
      return p;
    };
    // Each operand as a row-major matrix: rows x cols with leading
    // dimension ld, plus a stride per batch loop (0 where broadcast). The
    // grouped axes must collapse (each stride = the next one times its
    // size), which `cond` checks at run time along with BLAS's
    // ld >= max(1, cols); a one-row view may carry any row stride (never
    // used): it is raised. When the check fails, the op runs as loops (it
    // is cloned into the other branch).
    struct View {
      Value base, ld;
      SmallVector<Value> batchStrides;
    };
    SmallVector<View> views;
    Value cond = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
    for (auto [i, buffer] : llvm::enumerate(buffers)) {
      const OperandAxes &a = axes[i];
      auto meta = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
      Value aligned =
          memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
      // The aligned pointer excludes the view's offset: add it.
      Value base = arith::AddIOp::create(b, loc, aligned,
                                         mul(meta.getOffset(), cIndex(bytes)));
      auto strides = meta.getStrides();
      size_t firstRow = a.batch.size(), firstCol = firstRow + a.rows.size();
      for (size_t d = firstRow; d + 1 < strides.size(); ++d) {
        if (d + 1 == firstCol)
          continue; // rows to cols: the leading dimension, checked below
        unsigned next = d + 1 < firstCol ? a.rows[d + 1 - firstRow]
                                         : a.cols[d + 1 - firstCol];
        cond = arith::AndIOp::create(b, loc, cond,
                                     cmp(arith::CmpIPredicate::eq, strides[d],
                                         mul(strides[d + 1], loopSizes[next])));
      }
      Value rows = product(a.rows), cols = product(a.cols);
      Value minLd = arith::MaxSIOp::create(b, loc, cols, cIndex(1));
      Value rowStride = strides[firstCol - 1];
      Value ld = arith::SelectOp::create(
          b, loc, cmp(arith::CmpIPredicate::eq, rows, cIndex(1)),
          arith::MaxSIOp::create(b, loc, rowStride, minLd), rowStride);
      cond = arith::AndIOp::create(b, loc, cond,
                                   cmp(arith::CmpIPredicate::sge, ld, minLd));
      View v{base, ld, {}};
      for (unsigned l : c.dims.batch) {
        const auto *at = llvm::find(a.batch, l);
        v.batchStrides.push_back(
            at == a.batch.end() ? cIndex(0) : strides[at - a.batch.begin()]);
      }
      views.push_back(v);
    }
    auto pointerAt = [&](const View &view, ArrayRef<Value> batch) {
      Value elements = cIndex(0);
      for (auto [index, stride] : llvm::zip(batch, view.batchStrides))
        elements = arith::AddIOp::create(b, loc, elements, mul(index, stride));
      Value addr = arith::AddIOp::create(b, loc, view.base,
                                         mul(elements, cIndex(bytes)));
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
    // CBLAS takes 32-bit sizes and leading dimensions: larger products keep
    // the loops (part of the run-time check).
    Value maxInt =
        cIndex(static_cast<int64_t>(std::numeric_limits<int32_t>::max()));
    auto fits = [&](Value v) {
      cond = arith::AndIOp::create(b, loc, cond,
                                   cmp(arith::CmpIPredicate::sle, v, maxInt));
      return toI32(v);
    };
    Value sizeM = fits(product(c.dims.m)), sizeN = fits(product(c.dims.n)),
          sizeK = fits(product(c.dims.k));
    SmallVector<Value> lds;
    for (const View &v : views)
      lds.push_back(fits(v.ld));
    // C zero-filled just before (the usual init of a product) is written
    // by BLAS with beta = 0 instead: one pass over C less. The fill moves to
    // the loops' branch.
    linalg::FillOp zeroFill = findZeroFill(op, buffers[2]);
    Value beta =
        zeroFill
            ? arith::ConstantOp::create(b, loc, b.getFloatAttr(element, 0.0))
                  .getResult()
            : one;
    auto check = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(check.elseBlock()->getTerminator());
      if (zeroFill)
        b.clone(*zeroFill);
      b.clone(*op);
    }
    if (zeroFill)
      zeroFill->erase();
    b.setInsertionPoint(check.thenBlock()->getTerminator());
    // One call per batch index, in nested loops.
    SmallVector<Value> batch;
    for (unsigned l : c.dims.batch) {
      auto loop =
          scf::ForOp::create(b, loc, cIndex(0), loopSizes[l], cIndex(1));
      b.setInsertionPoint(loop.getBody()->getTerminator());
      batch.push_back(loop.getInductionVar());
    }
    func::CallOp::create(b, loc, gemm,
                         ValueRange{order, tA, tB, sizeM, sizeN, sizeK, one,
                                    pointerAt(views[0], batch), lds[0],
                                    pointerAt(views[1], batch), lds[1], beta,
                                    pointerAt(views[2], batch), lds[2]});
    op->erase();
    return true;
  }

  void runOnOperation() final {
    ModuleOp module = getOperation();
    SmallVector<linalg::LinalgOp> ops;
    // Contractions only: rewriting one may erase the fill before it.
    module.walk([&](linalg::LinalgOp op) {
      if (linalg::isaContractionOpInterface(op))
        ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops)
      rewrite(op, module);
  }
};

} // namespace
