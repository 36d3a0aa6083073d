//===- OpCost.cpp - Work and price of compute ops
//---------------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Analysis/OpCost.h"
#include "DistIR/Dialect/Dist/IR/OneHot.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <algorithm>

using namespace mlir;
using namespace distir;

int64_t distir::getTensorBytes(Type type) {
  auto shaped = dyn_cast<RankedTensorType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return 0;
  // Index has no bit width (asking for one is undefined): 64 bits, as on
  // the targets we lower to; other non-scalar element types too.
  Type element = shaped.getElementType();
  unsigned bits = element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 64;
  return shaped.getNumElements() * std::max<int64_t>(1, (bits + 7) / 8);
}

std::string distir::getDTypeName(Type elementType) {
  // The builtin types' names directly: printing builds an AsmState, which
  // was a fifth of a search's time when done for every simulated op.
  if (auto intType = dyn_cast<IntegerType>(elementType)) {
    const char *prefix = intType.isSigned()     ? "si"
                         : intType.isUnsigned() ? "ui"
                                                : "i";
    return prefix + std::to_string(intType.getWidth());
  }
  if (isa<IndexType>(elementType))
    return "index";
  if (elementType.isF16())
    return "f16";
  if (elementType.isBF16())
    return "bf16";
  if (elementType.isF32())
    return "f32";
  if (elementType.isF64())
    return "f64";
  std::string name;
  llvm::raw_string_ostream os(name);
  elementType.print(os);
  return name;
}

static int64_t getElements(Type type) {
  auto shaped = dyn_cast<RankedTensorType>(type);
  return shaped && shaped.hasStaticShape() ? shaped.getNumElements() : 0;
}

/// A zero-fill consumed only as the accumulator of contractions: libraries
/// fuse it into the GEMM (beta = 0), so it costs nothing on its own.
static bool isFusedAccumulatorInit(linalg::FillOp fill) {
  Value result = fill.getResult(0);
  if (result.use_empty())
    return false;
  for (OpOperand &use : result.getUses()) {
    auto consumer = dyn_cast<linalg::LinalgOp>(use.getOwner());
    if (!consumer || !consumer.isDpsInit(&use) ||
        consumer.getNumReductionLoops() == 0)
      return false;
  }
  return true;
}

/// Whether `value` is read only as contraction inputs, directly or through
/// slices (a slice of a view is a view: the tile a device reads of a
/// distributed GEMM's transposed weight).
static bool isReadOnlyByContractions(Value value) {
  if (value.use_empty())
    return false;
  for (OpOperand &use : value.getUses()) {
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(use.getOwner())) {
      if (!isReadOnlyByContractions(slice.getResult()))
        return false;
      continue;
    }
    auto consumer = dyn_cast<linalg::LinalgOp>(use.getOwner());
    if (!consumer || !consumer.isDpsInput(&use) ||
        consumer.getNumReductionLoops() == 0)
      return false;
  }
  return true;
}

bool distir::isTransposedOperandView(Operation *op) {
  auto transpose = dyn_cast<linalg::TransposeOp>(op);
  if (!transpose)
    return false;
  ArrayRef<int64_t> perm = transpose.getPermutation();
  int64_t rank = static_cast<int64_t>(perm.size());
  if (rank < 2 || perm[rank - 1] != rank - 2 || perm[rank - 2] != rank - 1)
    return false;
  for (int64_t d = 0; d < rank - 2; ++d)
    if (perm[d] != d)
      return false;
  return isReadOnlyByContractions(transpose.getResult()[0]);
}

/// The static loop ranges, read off the operand dims that a loop indexes
/// directly. LinalgOp::getStaticLoopRanges composes affine maps, which
/// uniques new affine expressions in the context for every op priced; it is
/// only used when some loop appears in no operand dim on its own (e.g. the
/// window loops of a convolution).
static SmallVector<int64_t> getLoopRanges(linalg::LinalgOp op) {
  unsigned numLoops = op.getNumLoops();
  SmallVector<int64_t> ranges(numLoops, ShapedType::kDynamic);
  // One call: named ops build their indexing maps on every call.
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps.size() != op->getNumOperands())
    return op.getStaticLoopRanges();
  unsigned found = 0;
  for (auto [value, map] : llvm::zip_equal(op->getOperands(), maps)) {
    auto type = dyn_cast<ShapedType>(value.getType());
    if (!type || !type.hasRank() ||
        map.getNumResults() != static_cast<unsigned>(type.getRank()))
      continue;
    for (auto [expr, size] : llvm::zip_equal(map.getResults(), type.getShape()))
      if (auto dim = dyn_cast<AffineDimExpr>(expr);
          dim && ranges[dim.getPosition()] == ShapedType::kDynamic &&
          !ShapedType::isDynamic(size)) {
        ranges[dim.getPosition()] = size;
        ++found;
      }
  }
  if (found != numLoops)
    return op.getStaticLoopRanges();
  return ranges;
}

/// Scalar ops of a structured op's body (the terminator and linalg.index
/// excluded).
static int64_t countRawBodyOps(linalg::LinalgOp op) {
  int64_t count = 0;
  for (Operation &bodyOp : op->getRegion(0).front().without_terminator())
    if (!isa<linalg::IndexOp>(bodyOp))
      ++count;
  return count;
}

/// Scalar ops of a structured op's body, at least one per point.
static int64_t countBodyOps(linalg::LinalgOp op) {
  return std::max<int64_t>(countRawBodyOps(op), 1);
}

ComputeWork distir::getComputeWork(Operation *op) {
  ComputeWork work;
  Type dtypeSource;
  for (Type type : op->getResultTypes())
    if (isa<RankedTensorType>(type)) {
      dtypeSource = cast<RankedTensorType>(type).getElementType();
      break;
    }
  if (!dtypeSource)
    for (Type type : op->getOperandTypes())
      if (isa<RankedTensorType>(type)) {
        dtypeSource = cast<RankedTensorType>(type).getElementType();
        break;
      }
  if (dtypeSource)
    work.dtype = getDTypeName(dtypeSource);

  for (Type type : op->getResultTypes()) {
    work.outputElements += getElements(type);
    work.bytesWritten += getTensorBytes(type);
  }

  // Allocations, metadata and views move no data.
  if (isa<tensor::EmptyOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp,
          tensor::CastOp, tensor::BitcastOp, tensor::ReshapeOp,
          tensor::ExtractSliceOp, tensor::DimOp, tensor::RankOp>(op) ||
      op->hasTrait<OpTrait::ConstantLike>()) {
    work.isFree = true;
    work.bytesWritten = 0;
    return work;
  }
  if (isTransposedOperandView(op)) {
    work.isFree = true;
    work.bytesWritten = 0;
    return work;
  }
  if (auto fill = dyn_cast<linalg::FillOp>(op);
      fill && isFusedAccumulatorInit(fill)) {
    work.isFree = true;
    work.bytesWritten = 0;
    return work;
  }

  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    double points = 1;
    SmallVector<int64_t> ranges = getLoopRanges(linalgOp);
    // A one-hot accumulation (dist-autodiff's gather adjoint) is a
    // scatter-add: one update per point of the other loops, as frameworks'
    // index_add and the CPU lowering run it.
    std::optional<OneHotAccumulation> oneHot;
    if (auto generic = dyn_cast<linalg::GenericOp>(op))
      oneHot = matchOneHotAccumulation(generic);
    for (auto [l, range] : llvm::enumerate(ranges))
      if (!oneHot || l != oneHot->loop)
        points *= static_cast<double>(std::max<int64_t>(range, 0));
    work.flops = points * static_cast<double>(countBodyOps(linalgOp));
    work.isContraction = linalgOp.getNumReductionLoops() > 0;
    double inputElements = 0;
    for (OpOperand *input : linalgOp.getDpsInputOperands()) {
      double bytes = getTensorBytes(input->get().getType());
      work.bytesRead += bytes;
      work.inputBytes += bytes;
      inputElements += getElements(input->get().getType());
    }
    // Calibration class: contractions reuse their inputs across the
    // iteration domain, reductions read each input element about once.
    if (work.isContraction)
      work.opClass = points > inputElements ? ComputeClass::MatMul
                                            : ComputeClass::Reduction;
    else
      work.opClass = countRawBodyOps(linalgOp) > 0 ? ComputeClass::Elementwise
                                                   : ComputeClass::Copy;
    for (OpOperand &init : linalgOp.getDpsInitsMutable())
      if (linalgOp.payloadUsesValueFromOperand(&init))
        work.bytesRead += getTensorBytes(init.get().getType());
    return work;
  }

  // Elementwise ops on tensors (arith, math): one scalar op per element.
  for (Type type : op->getOperandTypes()) {
    double bytes = getTensorBytes(type);
    work.bytesRead += bytes;
    work.inputBytes += bytes;
  }
  if (op->hasTrait<OpTrait::Elementwise>()) {
    work.flops = work.outputElements;
    work.opClass = ComputeClass::Elementwise;
  }
  // insert_slice writes only the slice into its destination (in place).
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    double bytes = getTensorBytes(insert.getSource().getType());
    work.bytesRead = work.inputBytes = bytes;
    work.bytesWritten = bytes;
  }
  return work;
}

double distir::priceCompute(const ComputeWork &work, const DeviceSpec &device,
                            CostModelKind model,
                            const Calibration *calibration) {
  if (work.isFree)
    return 0;
  if (model == CostModelKind::Calibrated) {
    if (calibration)
      if (std::optional<double> time = calibration->getComputeTime(
              work.opClass, work.bytesRead + work.bytesWritten, work.flops))
        return *time;
    model = CostModelKind::Analytic;
  }
  switch (model) {
  case CostModelKind::DistIRCompat: {
    // DistIR: one throughput for every dtype (f32 peak), inputs read once.
    // Cluster::validate requires an f32 entry.
    double throughput = *device.getPeakFlops("f32");
    if (work.isContraction)
      return device.launchOverhead + work.inputBytes / device.memoryBandwidth +
             work.flops / throughput;
    return device.launchOverhead + work.inputBytes / device.memoryBandwidth +
           work.outputElements / throughput;
  }
  case CostModelKind::Analytic: {
    // Roofline: bound by compute or by memory traffic, plus the launch.
    // The simulator checks that the dtype has a peak before pricing.
    std::optional<double> peak = device.getPeakFlops(work.dtype);
    assert(peak && "priced an op whose dtype has no peak flop/s");
    double compute = work.flops / *peak;
    double memory =
        (work.bytesRead + work.bytesWritten) / device.memoryBandwidth;
    return device.launchOverhead + std::max(compute, memory);
  }
  case CostModelKind::Calibrated:
    break;
  }
  llvm_unreachable("unknown cost model");
}

std::optional<double>
distir::getDistIRCompatFixedPrice(Operation *op, const DeviceSpec &device) {
  if (isa<linalg::CopyOp>(op))
    return 0.0;
  if (isa<tensor::ConcatOp>(op))
    return device.launchOverhead;
  return std::nullopt;
}
