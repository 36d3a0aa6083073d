//===- ONNXImporter.cpp - ONNX model -> linalg on placed tensors ----------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Imports an ONNX model as one `func.func` of linalg (named and generic),
// tensor, arith and math ops on static tensor types placed on one device
// (`#dist.device<N>` encoding). Design: docs/design/onnx-importer.md.
//
// Every ONNX value is tracked as a `TensorInfo`: its placed type, the MLIR
// value computing it (created on first use for known values) and, when known
// at import time, its contents. Shape-computing subgraphs (Shape, Gather,
// Concat, Unsqueeze, Slice, Range, ConstantOfShape, Cast, integer arithmetic,
// ...) are evaluated on those contents, so that every tensor of the emitted
// program gets a static shape even where ONNX shape inference gives up.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/ManagedStatic.h"

using namespace mlir;

/// The transformer block an op's ONNX node belongs to, from its name:
/// exporters name blocks `/blocks.N/...`, `/h.N/...`, `/layers.N/...`,
/// `/block.N/...` (T5) or `.../encoder_layer_N/...` (torchvision ViT). The
/// block is the name up to its number, so `encoder/layers.0` and
/// `decoder/layers.0` (nn.Transformer) are different blocks.
static std::optional<StringRef> blockFromName(StringRef name) {
  for (StringRef prefix :
       {"blocks.", "h.", "layers.", "layer.", "block.", "layer_"}) {
    size_t at = name.find(prefix);
    while (at != StringRef::npos) {
      if (at == 0 || name[at - 1] == '/' || name[at - 1] == '.' ||
          name[at - 1] == '_') {
        StringRef digits = name.drop_front(at + prefix.size());
        digits = digits.take_while([](char c) { return llvm::isDigit(c); });
        if (!digits.empty())
          return name.take_front(at + prefix.size() + digits.size());
      }
      at = name.find(prefix, at + 1);
    }
  }
  return std::nullopt;
}

/// Tags every op of an inference graph with its layer (`dist.layer`) and
/// `dist.phase = "forward"`, for pipeline parallelism: blocks are numbered
/// in the order the program first enters them; ops before the first block
/// (embeddings) belong to layer 0, ops between blocks to the block before
/// them, ops after the last block (final norm, head) to the last layer.
/// Graphs without blocks stay untagged (dist-dtp and dist-autodiff then cut
/// their data flow into layers).
static void tagLayers(func::FuncOp func) {
  llvm::StringMap<int64_t> blocks;
  func.walk([&](Operation *op) {
    if (auto loc = dyn_cast<NameLoc>(op->getLoc()))
      if (std::optional<StringRef> block = blockFromName(loc.getName()))
        blocks.try_emplace(*block, static_cast<int64_t>(blocks.size()));
  });
  if (blocks.empty())
    return;
  Builder b(func.getContext());
  int64_t current = 0;
  for (Operation &op : func.getBody().front().without_terminator()) {
    if (auto loc = dyn_cast<NameLoc>(op.getLoc()))
      if (std::optional<StringRef> block = blockFromName(loc.getName()))
        current = blocks.lookup(*block);
    op.setAttr("dist.layer", b.getI64IntegerAttr(current));
    op.setAttr("dist.phase", b.getStringAttr("forward"));
  }
}
using namespace distir;

//===----------------------------------------------------------------------===//
// Command-line options of --import-onnx
//===----------------------------------------------------------------------===//

// Registered by registerONNXTranslations(), that is by distir-translate
// only: other tools that link the importer (distir-search, distir-run) must
// not accept options they ignore.

namespace {
enum class WeightsMode { Arguments, Constants };
struct ImportCLOptions {
  llvm::cl::OptionCategory category{"ONNX import options"};
  llvm::cl::list<std::string> inputShapes{
      "input-shape",
      llvm::cl::desc("Shape of a graph input for --import-onnx, replacing "
                     "its dynamic dimensions: NAME=d0,d1,... (repeatable)"),
      llvm::cl::value_desc("NAME=d0,d1,..."), llvm::cl::cat(category)};
  llvm::cl::list<std::string> inputValues{
      "input-value",
      llvm::cl::desc("Bind a graph input of --import-onnx to constant values "
                     "(row-major): it becomes an initializer, leaves the "
                     "function signature, and shape operands computed from "
                     "it resolve at import time: NAME=v0,v1,... (repeatable)"),
      llvm::cl::value_desc("NAME=v0,v1,..."), llvm::cl::cat(category)};
  llvm::cl::opt<int64_t> device{
      "device",
      llvm::cl::desc("Device that --import-onnx and --build-mlp place every "
                     "value on (#dist.device<N>)"),
      llvm::cl::init(0), llvm::cl::cat(category)};
  llvm::cl::opt<WeightsMode> weights{
      "weights", llvm::cl::desc("How --import-onnx imports initializers"),
      llvm::cl::values(
          clEnumValN(WeightsMode::Arguments, "arguments",
                     "function arguments (default; no weight data is read)"),
          clEnumValN(WeightsMode::Constants, "constants",
                     "arith.constant dense<...> holding the weight data")),
      llvm::cl::init(WeightsMode::Arguments), llvm::cl::cat(category)};
};
} // namespace

static llvm::ManagedStatic<ImportCLOptions> clOptions;

using namespace distir::onnx_import;

//===----------------------------------------------------------------------===//
// Types and contents
//===----------------------------------------------------------------------===//

FailureOr<Type> Importer::elementType(int32_t dataType, const Twine &what) {
  if (Type type = supportedElementType(dataType))
    return type;
  std::string name = onnx::TensorProto_DataType_IsValid(dataType)
                         ? onnx::TensorProto_DataType_Name(dataType)
                         : std::to_string(dataType);
  (void)fail(what + ": unsupported element type " + name);
  return failure();
}

Type Importer::supportedElementType(int32_t dataType) {
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return Type(builder.getF32Type());
  case onnx::TensorProto::FLOAT16:
    return Type(builder.getF16Type());
  case onnx::TensorProto::BFLOAT16:
    return Type(builder.getBF16Type());
  case onnx::TensorProto::DOUBLE:
    return Type(builder.getF64Type());
  case onnx::TensorProto::INT64:
    return Type(builder.getI64Type());
  case onnx::TensorProto::INT32:
    return Type(builder.getI32Type());
  case onnx::TensorProto::INT16:
    return Type(builder.getI16Type());
  case onnx::TensorProto::INT8:
    return Type(builder.getI8Type());
  // Unsigned types are signless integers; TensorInfo::isUnsigned keeps the
  // signedness.
  case onnx::TensorProto::UINT64:
    return Type(builder.getI64Type());
  case onnx::TensorProto::UINT32:
    return Type(builder.getI32Type());
  case onnx::TensorProto::UINT16:
    return Type(builder.getI16Type());
  case onnx::TensorProto::UINT8:
    return Type(builder.getI8Type());
  case onnx::TensorProto::BOOL:
    return Type(builder.getI1Type());
  default:
    return Type();
  }
}

FailureOr<DenseElementsAttr>
Importer::tensorContents(const onnx::TensorProto &t, const Twine &what) {
  FailureOr<Type> elt = elementType(t.data_type(), what);
  if (failed(elt))
    return failure();
  SmallVector<int64_t> shape(t.dims().begin(), t.dims().end());
  for (int64_t d : shape)
    if (d < 0)
      return (void)fail(what + ": negative dimension"), failure();
  int64_t n = numElements(shape);
  auto type = unplaced(shape, *elt);
  unsigned bytes = std::max(1u, elt->getIntOrFloatBitWidth() / 8);
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    return (void)fail(what + ": external tensor data is not supported"),
           failure();
  if (t.has_raw_data()) {
    const std::string &raw = t.raw_data();
    if (static_cast<int64_t>(raw.size()) != n * bytes)
      return (void)fail(what + ": raw_data holds " + Twine(raw.size()) +
                        " bytes, expected " + Twine(n * bytes)),
             failure();
    if (elt->isInteger(1)) {
      SmallVector<bool> vals;
      for (char c : raw)
        vals.push_back(c != 0);
      return DenseElementsAttr::get(type, ArrayRef<bool>(vals));
    }
    bool detectedSplat = false;
    ArrayRef<char> data(raw.data(), raw.size());
    if (!DenseElementsAttr::isValidRawBuffer(type, data, detectedSplat))
      return (void)fail(what + ": invalid raw_data"), failure();
    return DenseElementsAttr::getFromRawBuffer(type, data);
  }
  auto sizeCheck = [&](int64_t have) -> LogicalResult {
    if (have != n)
      return fail(what + ": holds " + Twine(have) + " values, expected " +
                  Twine(n));
    return success();
  };
  if (isa<FloatType>(*elt) && t.data_type() != onnx::TensorProto::FLOAT16 &&
      t.data_type() != onnx::TensorProto::BFLOAT16) {
    SmallVector<double> vals;
    if (t.data_type() == onnx::TensorProto::DOUBLE)
      vals.assign(t.double_data().begin(), t.double_data().end());
    else
      vals.assign(t.float_data().begin(), t.float_data().end());
    if (failed(sizeCheck(vals.size())))
      return failure();
    return floatsAttr(shape, *elt, vals);
  }
  if (isa<FloatType>(*elt)) {
    // float16/bfloat16 bits stored in int32_data.
    if (failed(sizeCheck(t.int32_data_size())))
      return failure();
    SmallVector<APFloat> vals;
    for (int32_t bits : t.int32_data())
      vals.emplace_back(cast<FloatType>(*elt).getFloatSemantics(),
                        APInt(16, static_cast<uint16_t>(bits)));
    return DenseElementsAttr::get(type, vals);
  }
  SmallVector<int64_t> vals;
  if (t.data_type() == onnx::TensorProto::INT64)
    vals.assign(t.int64_data().begin(), t.int64_data().end());
  else if (t.data_type() == onnx::TensorProto::UINT32 ||
           t.data_type() == onnx::TensorProto::UINT64)
    for (uint64_t v : t.uint64_data()) // the bits; intsAttr truncates
      vals.push_back(static_cast<int64_t>(v));
  else
    vals.assign(t.int32_data().begin(), t.int32_data().end());
  if (failed(sizeCheck(vals.size())))
    return failure();
  return intsAttr(shape, *elt, vals);
}

SmallVector<int64_t> Importer::intsOf(DenseElementsAttr attr, bool isUnsigned) {
  SmallVector<int64_t> out;
  bool zext = attr.getElementType().isInteger(1) || isUnsigned;
  if (isa<FloatType>(attr.getElementType())) {
    for (const APFloat &v : attr.getValues<APFloat>())
      out.push_back(static_cast<int64_t>(v.convertToDouble()));
    return out;
  }
  for (const APInt &v : attr.getValues<APInt>())
    out.push_back(zext ? v.getZExtValue() : v.getSExtValue());
  return out;
}

SmallVector<double> Importer::floatsOf(DenseElementsAttr attr,
                                       bool isUnsigned) {
  SmallVector<double> out;
  if (isa<FloatType>(attr.getElementType())) {
    for (APFloat v : attr.getValues<APFloat>()) {
      bool lost;
      v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
      out.push_back(v.convertToDouble());
    }
    return out;
  }
  if (isUnsigned) {
    for (const APInt &v : attr.getValues<APInt>())
      out.push_back(static_cast<double>(v.getZExtValue()));
    return out;
  }
  for (int64_t v : intsOf(attr))
    out.push_back(static_cast<double>(v));
  return out;
}

DenseElementsAttr Importer::intsAttr(ArrayRef<int64_t> shape, Type elt,
                                     ArrayRef<int64_t> vals) const {
  auto type = unplaced(shape, elt);
  if (elt.isInteger(1)) {
    SmallVector<bool> bools;
    for (int64_t v : vals)
      bools.push_back(v != 0);
    return DenseElementsAttr::get(type, ArrayRef<bool>(bools));
  }
  SmallVector<APInt> ints;
  for (int64_t v : vals)
    ints.push_back(APInt(elt.getIntOrFloatBitWidth(), v, /*isSigned=*/true,
                         /*implicitTrunc=*/true));
  return DenseElementsAttr::get(type, ints);
}

DenseElementsAttr Importer::floatsAttr(ArrayRef<int64_t> shape, Type elt,
                                       ArrayRef<double> vals) const {
  auto type = unplaced(shape, elt);
  if (!isa<FloatType>(elt)) {
    SmallVector<int64_t> ints;
    for (double v : vals)
      ints.push_back(static_cast<int64_t>(v));
    return intsAttr(shape, elt, ints);
  }
  SmallVector<APFloat> fs;
  for (double v : vals) {
    APFloat f(v);
    bool lost;
    f.convert(cast<FloatType>(elt).getFloatSemantics(),
              APFloat::rmNearestTiesToEven, &lost);
    fs.push_back(f);
  }
  return DenseElementsAttr::get(type, fs);
}

FailureOr<SmallVector<int64_t>> Importer::knownInts(unsigned i,
                                                    const Twine &what) {
  if (!hasInput(i))
    return (void)fail("missing " + what), failure();
  if (!isKnown(i))
    return (void)fail("unresolvable dynamic shape: " + what + " ('" +
                      curNode->input(i) + "') is not known at import time"),
           failure();
  if (isa<FloatType>(inElt(i)))
    return (void)fail(what + " must be an integer tensor"), failure();
  if (numElements(inShape(i)) > kMaxFoldElements)
    return (void)fail(what + " has more than " + Twine(kMaxFoldElements) +
                      " elements"),
           failure();
  return knownIntsOf(i);
}

//===----------------------------------------------------------------------===//
// IR building blocks
//===----------------------------------------------------------------------===//

FailureOr<Value> Importer::elementwise(ArrayRef<Value> inputs, Type outElt,
                                       ScalarFn fn) {
  SmallVector<int64_t> outShape;
  for (Value v : inputs) {
    auto shape = cast<RankedTensorType>(v.getType()).getShape();
    std::optional<SmallVector<int64_t>> b = broadcastShapes(outShape, shape);
    if (!b)
      return (void)fail("shapes " + shapeStr(outShape) + " and " +
                        shapeStr(shape) + " do not broadcast"),
             failure();
    outShape = *b;
  }
  int64_t rank = outShape.size();
  SmallVector<AffineMap> maps;
  for (Value v : inputs) {
    auto shape = cast<RankedTensorType>(v.getType()).getShape();
    int64_t offset = rank - shape.size();
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
      exprs.push_back(shape[d] == 1 && outShape[d + offset] != 1
                          ? builder.getAffineConstantExpr(0)
                          : builder.getAffineDimExpr(d + offset));
    maps.push_back(AffineMap::get(rank, 0, exprs, ctx));
  }
  maps.push_back(builder.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  Value init = empty(outShape, outElt);
  auto op = linalg::GenericOp::create(
      builder, curLoc, TypeRange{init.getType()}, inputs, ValueRange{init},
      maps, iters, [&](OpBuilder &b, Location loc, ValueRange args) {
        SmallVector<Value> scalars(args.drop_back());
        linalg::YieldOp::create(b, loc, fn(b, loc, scalars));
      });
  return op.getResult(0);
}

Value Importer::broadcastTo(Value v, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getShape() == shape)
    return v;
  // Broadcasting against a zero-free template: build the generic directly.
  int64_t rank = shape.size();
  int64_t offset = rank - type.getRank();
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < type.getRank(); ++d)
    exprs.push_back(type.getDimSize(d) == 1 && shape[d + offset] != 1
                        ? builder.getAffineConstantExpr(0)
                        : builder.getAffineDimExpr(d + offset));
  SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, exprs, ctx),
                                 builder.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  Value init = empty(shape, type.getElementType());
  return linalg::GenericOp::create(
             builder, curLoc, TypeRange{init.getType()}, ValueRange{v},
             ValueRange{init}, maps, iters,
             [&](OpBuilder &b, Location loc, ValueRange args) {
               linalg::YieldOp::create(b, loc, args[0]);
             })
      .getResult(0);
}

/// Cuts `src` and `dst` (equal element counts, no zero dims, both of rank
/// >= 1) into runs of consecutive dims with equal products, as fine as
/// possible; size-1 dims join the run before them (or the first run).
/// Returns nothing where the shapes have zero dims or rank 0.
static std::optional<std::pair<SmallVector<ReassociationIndices>,
                               SmallVector<ReassociationIndices>>>
alignedReshapeRuns(ArrayRef<int64_t> src, ArrayRef<int64_t> dst) {
  if (src.empty() || dst.empty() || llvm::is_contained(src, 0) ||
      llvm::is_contained(dst, 0))
    return std::nullopt;
  SmallVector<ReassociationIndices> srcRuns, dstRuns;
  size_t i = 0, j = 0;
  while (i < src.size() || j < dst.size()) {
    if (i == src.size() || j == dst.size()) {
      // Only size-1 dims are left on one side: they join the last run.
      if (srcRuns.empty())
        return std::nullopt;
      for (; i < src.size(); ++i)
        srcRuns.back().push_back(i);
      for (; j < dst.size(); ++j)
        dstRuns.back().push_back(j);
      break;
    }
    ReassociationIndices a{static_cast<int64_t>(i)}, b{static_cast<int64_t>(j)};
    int64_t pa = src[i++], pb = dst[j++];
    while (pa != pb) {
      if (pa < pb) {
        if (i == src.size())
          return std::nullopt;
        a.push_back(i);
        pa *= src[i++];
      } else {
        if (j == dst.size())
          return std::nullopt;
        b.push_back(j);
        pb *= dst[j++];
      }
    }
    srcRuns.push_back(std::move(a));
    dstRuns.push_back(std::move(b));
  }
  return std::make_pair(std::move(srcRuns), std::move(dstRuns));
}

Value Importer::reshape(Value v, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getShape() == shape)
    return v;
  auto target = placed(shape, type.getElementType());
  // Cut both shapes into the finest runs of equal element counts and go
  // through one dim per run: a pure collapse or expand is one op, a mixed
  // reshape a collapse then an expand. Flattening everything instead would
  // merge a batch dimension with the dims before it and force data
  // parallelism to gather the batch (e.g. [S, B, E] -> [S, B*H, E/H] in
  // nn.MultiheadAttention keeps S and B apart this way).
  if (std::optional<std::pair<SmallVector<ReassociationIndices>,
                              SmallVector<ReassociationIndices>>>
          runs = alignedReshapeRuns(type.getShape(), shape)) {
    auto [srcRuns, dstRuns] = *runs;
    SmallVector<int64_t> mid;
    for (const ReassociationIndices &run : srcRuns) {
      int64_t size = 1;
      for (int64_t d : run)
        size *= type.getDimSize(d);
      mid.push_back(size);
    }
    Value v2 = v;
    if (static_cast<int64_t>(mid.size()) != type.getRank())
      v2 = tensor::CollapseShapeOp::create(
          builder, curLoc, placed(mid, type.getElementType()), v, srcRuns);
    if (static_cast<int64_t>(mid.size()) == target.getRank())
      return v2;
    return tensor::ExpandShapeOp::create(builder, curLoc, target, v2, dstRuns);
  }
  // Zero-sized or rank-0 shapes: through a rank-1 (or rank-0) tensor.
  int64_t n = numElements(type.getShape());
  Value flat = v;
  if (type.getRank() != 1) {
    SmallVector<ReassociationIndices> re;
    if (type.getRank() > 0) {
      re.emplace_back();
      for (int64_t d = 0; d < type.getRank(); ++d)
        re.back().push_back(d);
      flat = tensor::CollapseShapeOp::create(
          builder, curLoc, placed({n}, type.getElementType()), v, re);
    } else {
      flat = tensor::ExpandShapeOp::create(
          builder, curLoc, placed({1}, type.getElementType()), v, re);
    }
  }
  if (target.getRank() == 1)
    return flat;
  SmallVector<ReassociationIndices> re;
  if (target.getRank() == 0)
    return tensor::CollapseShapeOp::create(builder, curLoc, target, flat, re);
  re.emplace_back();
  for (int64_t d = 0; d < target.getRank(); ++d)
    re.back().push_back(d);
  return tensor::ExpandShapeOp::create(builder, curLoc, target, flat, re);
}

Value Importer::transpose(Value v, ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  Value init = empty(shape, type.getElementType());
  return linalg::TransposeOp::create(builder, curLoc, v, init, perm)
      .getResult()[0];
}

Value Importer::matmul2d(Value a, Value b) {
  auto ta = cast<RankedTensorType>(a.getType());
  auto tb = cast<RankedTensorType>(b.getType());
  Value init =
      filled({ta.getDimSize(0), tb.getDimSize(1)}, ta.getElementType(), 0);
  return linalg::MatmulOp::create(builder, curLoc, TypeRange{init.getType()},
                                  ValueRange{a, b}, ValueRange{init})
      .getResult(0);
}

FailureOr<Value> Importer::matmul(Value a, Value b) {
  auto ta = cast<RankedTensorType>(a.getType());
  auto tb = cast<RankedTensorType>(b.getType());
  if (ta.getRank() == 0 || tb.getRank() == 0)
    return (void)fail("MatMul operands must have rank >= 1"), failure();
  if (ta.getElementType() != tb.getElementType())
    return (void)fail("operand element types differ"), failure();
  bool vecA = ta.getRank() == 1, vecB = tb.getRank() == 1;
  if (vecA)
    a = reshape(a, {1, ta.getDimSize(0)});
  if (vecB)
    b = reshape(b, {tb.getDimSize(0), 1});
  ta = cast<RankedTensorType>(a.getType());
  tb = cast<RankedTensorType>(b.getType());
  int64_t m = ta.getDimSize(ta.getRank() - 2), k = ta.getShape().back();
  int64_t kb = tb.getDimSize(tb.getRank() - 2), n = tb.getShape().back();
  if (k != kb)
    return (void)fail(
               "contraction dimensions differ: " + shapeStr(ta.getShape()) +
               " x " + shapeStr(tb.getShape())),
           failure();
  ArrayRef<int64_t> batchA = ta.getShape().drop_back(2);
  ArrayRef<int64_t> batchB = tb.getShape().drop_back(2);
  SmallVector<int64_t> resultShape;
  Value result;
  if (tb.getRank() == 2) {
    // [..., M, K] x [K, N]: one matmul on the flattened rows.
    int64_t rows = numElements(batchA) * m;
    Value mm = matmul2d(reshape(a, {rows, k}), b);
    resultShape.assign(batchA.begin(), batchA.end());
    resultShape.append({m, n});
    result = reshape(mm, resultShape);
  } else {
    std::optional<SmallVector<int64_t>> batch = broadcastShapes(batchA, batchB);
    if (!batch)
      return (void)fail("batch dimensions " + shapeStr(batchA) + " and " +
                        shapeStr(batchB) + " do not broadcast"),
             failure();
    // One contraction over the N-D batch, not a batch_matmul on flattened
    // batches: flattening would merge dimensions that distribution splits
    // differently (the batch and the attention heads of GPT-2).
    SmallVector<int64_t> shapeA(*batch), shapeB(*batch);
    shapeA.append({m, k});
    shapeB.append({k, n});
    resultShape.assign(batch->begin(), batch->end());
    resultShape.append({m, n});
    int64_t nb = batch->size();
    SmallVector<AffineExpr> batchDims, exprsA, exprsB, exprsC;
    for (int64_t d = 0; d < nb; ++d)
      batchDims.push_back(builder.getAffineDimExpr(d));
    AffineExpr dm = builder.getAffineDimExpr(nb),
               dn = builder.getAffineDimExpr(nb + 1),
               dk = builder.getAffineDimExpr(nb + 2);
    exprsA.assign(batchDims);
    exprsA.append({dm, dk});
    exprsB.assign(batchDims);
    exprsB.append({dk, dn});
    exprsC.assign(batchDims);
    exprsC.append({dm, dn});
    SmallVector<AffineMap> maps = {AffineMap::get(nb + 3, 0, exprsA, ctx),
                                   AffineMap::get(nb + 3, 0, exprsB, ctx),
                                   AffineMap::get(nb + 3, 0, exprsC, ctx)};
    SmallVector<utils::IteratorType> iters(nb + 2,
                                           utils::IteratorType::parallel);
    iters.push_back(utils::IteratorType::reduction);
    Value init = filled(resultShape, ta.getElementType(), 0);
    result =
        linalg::GenericOp::create(
            builder, curLoc, TypeRange{init.getType()},
            ValueRange{broadcastTo(a, shapeA), broadcastTo(b, shapeB)},
            ValueRange{init}, maps, iters,
            [&](OpBuilder &bb, Location loc, ValueRange args) {
              Value product = arith::MulFOp::create(bb, loc, args[0], args[1]);
              linalg::YieldOp::create(
                  bb, loc,
                  arith::AddFOp::create(bb, loc, product, args[2]).getResult());
            })
            .getResult(0);
  }
  if (vecA || vecB) {
    SmallVector<int64_t> shape(resultShape.begin(), resultShape.end() - 2);
    if (!vecA)
      shape.push_back(m);
    if (!vecB)
      shape.push_back(n);
    result = reshape(result, shape);
  }
  return result;
}

Value Importer::reduce(Value v, ArrayRef<int64_t> axes, ReduceKind kind,
                       bool keepDims, bool isUnsigned) {
  auto type = cast<RankedTensorType>(v.getType());
  Type elt = type.getElementType();
  SmallVector<int64_t> reducedShape, keptShape;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    bool r = llvm::is_contained(axes, d);
    if (!r)
      reducedShape.push_back(type.getDimSize(d));
    keptShape.push_back(r ? 1 : type.getDimSize(d));
  }
  double identity = 0;
  Value initScalar;
  if (kind == ReduceKind::Prod)
    identity = 1;
  if (kind == ReduceKind::Max || kind == ReduceKind::Min) {
    bool isMax = kind == ReduceKind::Max;
    if (auto ft = dyn_cast<FloatType>(elt)) {
      initScalar = arith::ConstantOp::create(
          builder, curLoc,
          builder.getFloatAttr(elt,
                               APFloat::getInf(ft.getFloatSemantics(), isMax)));
    } else {
      unsigned w = elt.getIntOrFloatBitWidth();
      APInt lim = isUnsigned
                      ? (isMax ? APInt::getMinValue(w) : APInt::getMaxValue(w))
                  : isMax ? APInt::getSignedMinValue(w)
                          : APInt::getSignedMaxValue(w);
      initScalar = arith::ConstantOp::create(builder, curLoc,
                                             builder.getIntegerAttr(elt, lim));
    }
  } else {
    initScalar = scalarConst(builder, curLoc, elt, identity);
  }
  Value init = linalg::FillOp::create(builder, curLoc, ValueRange{initScalar},
                                      ValueRange{empty(reducedShape, elt)})
                   .getResult(0);
  bool isFloat = isa<FloatType>(elt);
  Value red =
      linalg::ReduceOp::create(
          builder, curLoc, ValueRange{v}, ValueRange{init}, axes,
          [&](OpBuilder &b, Location loc, ValueRange args) {
            Value x = args[0], acc = args[1], r;
            switch (kind) {
            case ReduceKind::Sum:
              r = isFloat ? Value(arith::AddFOp::create(b, loc, x, acc))
                          : Value(arith::AddIOp::create(b, loc, x, acc));
              break;
            case ReduceKind::Prod:
              r = isFloat ? Value(arith::MulFOp::create(b, loc, x, acc))
                          : Value(arith::MulIOp::create(b, loc, x, acc));
              break;
            case ReduceKind::Max:
              r = isFloat ? Value(arith::MaximumFOp::create(b, loc, x, acc))
                  : isUnsigned ? Value(arith::MaxUIOp::create(b, loc, x, acc))
                               : Value(arith::MaxSIOp::create(b, loc, x, acc));
              break;
            case ReduceKind::Min:
              r = isFloat ? Value(arith::MinimumFOp::create(b, loc, x, acc))
                  : isUnsigned ? Value(arith::MinUIOp::create(b, loc, x, acc))
                               : Value(arith::MinSIOp::create(b, loc, x, acc));
              break;
            }
            linalg::YieldOp::create(b, loc, r);
          })
          .getResult(0);
  return keepDims ? reshape(red, keptShape) : red;
}

Value Importer::extractSlice(Value v, ArrayRef<int64_t> offsets,
                             ArrayRef<int64_t> sizes,
                             ArrayRef<int64_t> strides) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getShape() == sizes &&
      llvm::all_of(offsets, [](int64_t o) { return o == 0; }))
    return v;
  auto resultType = placed(sizes, type.getElementType());
  return tensor::ExtractSliceOp::create(
      builder, curLoc, resultType, v, ValueRange{}, ValueRange{}, ValueRange{},
      builder.getDenseI64ArrayAttr(offsets),
      builder.getDenseI64ArrayAttr(sizes),
      builder.getDenseI64ArrayAttr(strides));
}

Value Importer::scale(Value v, double factor) {
  Type elt = cast<RankedTensorType>(v.getType()).getElementType();
  FailureOr<Value> r = elementwise(
      {v}, elt, [&](OpBuilder &b, Location loc, ArrayRef<Value> a) -> Value {
        Value c = scalarConst(b, loc, elt, factor);
        if (isa<FloatType>(elt))
          return arith::MulFOp::create(b, loc, a[0], c);
        return arith::MulIOp::create(b, loc, a[0], c);
      });
  return *r; // A single operand always broadcasts.
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

void Importer::setCurrentNode(const onnx::NodeProto &node, unsigned index) {
  curNode = &node;
  curNodeName = node.name().empty()
                    ? node.op_type() + "_" + std::to_string(index)
                    : node.name();
  curLoc = NameLoc::get(
      builder.getStringAttr(curNodeName),
      FileLineColLoc::get(
          ctx, cast<FileLineColLoc>(fileLoc).getFilename().getValue(),
          index + 1, 0));
}

void Importer::setFirstConsumer(StringRef name) {
  curNode = nullptr;
  curLoc = fileLoc;
  const onnx::GraphProto &graph = model.graph();
  for (int i = 0; i < graph.node_size(); ++i)
    if (llvm::is_contained(graph.node(i).input(), name)) {
      setCurrentNode(graph.node(i), i);
      return;
    }
}

/// `tensor<2x?xf32>`-style rendering; unsigned integers as `ui8` etc.,
/// an unknown rank as `*`, an element type MLIR lacks by its ONNX name.
static std::string typeStr(std::optional<ArrayRef<int64_t>> dims,
                           StringRef elt) {
  std::string s = "tensor<";
  if (!dims)
    s += "*x";
  else
    for (int64_t d : *dims)
      s += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
  return s + elt.str() + ">";
}

LogicalResult Importer::checkOutputType(StringRef name) {
  auto it = onnxTypes.find(name);
  auto vit = values.find(name);
  if (it == onnxTypes.end() || vit == values.end())
    return success();
  const OnnxType &want = it->second;
  const TensorInfo &got = vit->second;
  auto eltName = [](Type t, bool isUnsigned) {
    std::string str;
    llvm::raw_string_ostream os(str);
    if (isUnsigned && t.isInteger() && !t.isInteger(1))
      os << "ui" << t.getIntOrFloatBitWidth();
    else
      os << t;
    return str;
  };
  bool ok = true;
  std::string wantElt = "?";
  if (want.elemType != 0) {
    Type t = supportedElementType(want.elemType);
    bool isUnsigned = isUnsignedType(want.elemType);
    ok = t == got.type.getElementType() && isUnsigned == got.isUnsigned;
    wantElt = t ? eltName(t, isUnsigned)
              : onnx::TensorProto_DataType_IsValid(want.elemType)
                  ? onnx::TensorProto_DataType_Name(want.elemType)
                  : std::to_string(want.elemType);
  }
  ArrayRef<int64_t> shape = got.type.getShape();
  if (want.dims) {
    ok &= want.dims->size() == shape.size();
    for (auto [w, g] : llvm::zip(*want.dims, shape))
      ok &= w < 0 || w == g;
  }
  if (ok)
    return success();
  std::optional<ArrayRef<int64_t>> wantDims;
  if (want.dims)
    wantDims = ArrayRef<int64_t>(*want.dims);
  return fail(
      "output '" + name + "' has type " +
      typeStr(shape, eltName(got.type.getElementType(), got.isUnsigned)) +
      ", but ONNX expects " + typeStr(wantDims, wantElt));
}

/// The ops of the default domain that importNode imports (for some
/// attribute values and types only: it says which when it refuses).
/// The reductions importReduce implements.
static bool isReductionOp(StringRef op) {
  return llvm::is_contained({"ReduceMean", "ReduceSum", "ReduceMax",
                             "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                             "ReduceSumSquare", "ReduceLogSum",
                             "ReduceLogSumExp"},
                            op);
}

static bool isImplementedOp(StringRef op) {
  return elementwiseInfo(op).has_value() || isReductionOp(op) ||
         llvm::is_contained({"MatMul",
                             "Gemm",
                             "Softmax",
                             "LogSoftmax",
                             "LayerNormalization",
                             "BatchNormalization",
                             "Reshape",
                             "Flatten",
                             "Squeeze",
                             "Unsqueeze",
                             "Transpose",
                             "Split",
                             "Slice",
                             "Concat",
                             "Gather",
                             "Expand",
                             "Constant",
                             "ConstantOfShape",
                             "Shape",
                             "Size",
                             "Range",
                             "Cast",
                             "CastLike",
                             "Conv",
                             "MaxPool",
                             "AveragePool",
                             "GlobalAveragePool",
                             "GlobalMaxPool",
                             "Clip",
                             "Trilu",
                             "CumSum",
                             "ArgMax",
                             "ArgMin",
                             "Tile",
                             "OneHot",
                             "GatherElements",
                             "InstanceNormalization",
                             "GroupNormalization",
                             "Einsum",
                             "ConvTranspose",
                             "Pad",
                             "Resize",
                             "LSTM",
                             "GRU",
                             "RNN",
                             "TopK",
                             "ScatterElements",
                             "ScatterND",
                             "Scatter",
                             "NonZero",
                             "Identity",
                             "Dropout"},
                            op);
}

LogicalResult Importer::checkImplementedOps(const onnx::GraphProto &graph) {
  // Op type -> (nodes, first node's index), in order of first appearance.
  std::vector<std::pair<std::string, std::pair<unsigned, unsigned>>> missing;
  for (auto [index, node] : llvm::enumerate(graph.node())) {
    bool defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
    if (defaultDomain && isImplementedOp(node.op_type()))
      continue;
    std::string key =
        defaultDomain ? node.op_type() : node.domain() + "." + node.op_type();
    auto it = llvm::find_if(missing, [&](auto &m) { return m.first == key; });
    if (it == missing.end())
      it = missing.insert(missing.end(),
                          {key, {0u, static_cast<unsigned>(index)}});
    ++it->second.first;
  }
  if (missing.empty())
    return success();
  // One line at the first such node, listing every unsupported op.
  auto [firstKey, first] = missing.front();
  const onnx::NodeProto &node = graph.node(first.second);
  setCurrentNode(node, first.second);
  if (!node.domain().empty() && node.domain() != "ai.onnx" &&
      missing.size() == 1 && first.first == 1)
    return fail("unsupported op domain '" + node.domain() + "'");
  if (missing.size() == 1 && first.first == 1)
    return fail("unsupported operator");
  std::string list;
  unsigned nodes = 0;
  for (auto [i, entry] : llvm::enumerate(missing)) {
    const auto &[op, where] = entry;
    nodes += where.first;
    const onnx::NodeProto &at = graph.node(where.second);
    list +=
        (i ? ", " : "") + op + " (" + std::to_string(where.first) +
        (where.first == 1 ? " node" : " nodes") + ", first '" +
        (at.name().empty() ? at.op_type() + "_" + std::to_string(where.second)
                           : at.name()) +
        "')";
  }
  return fail("unsupported operator; the model has " + Twine(nodes) +
              " nodes of " + Twine(missing.size()) +
              (missing.size() == 1 ? " unsupported operator: "
                                   : " unsupported operators: ") +
              list);
}

LogicalResult Importer::importNode(const onnx::NodeProto &node,
                                   unsigned index) {
  setCurrentNode(node, index);
  StringRef op = node.op_type();
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    return fail("unsupported op domain '" + node.domain() + "'");
  if (opset < 7) {
    // An op whose schema at this opset is still the one in effect at opset
    // 7 has opset-7 semantics; anything older is not implemented.
    int since = onnx_import::schemaSinceVersion(node.op_type(), opset);
    int at7 = onnx_import::schemaSinceVersion(node.op_type(), 7);
    if (since == 0 || since != at7)
      return fail("unsupported opset " + Twine(opset) +
                  " for this op (supported: 7 to " + Twine(maxOpset) +
                  "; older opsets only for ops unchanged up to opset 7)");
  }
  for (int i = 0; i < node.input_size(); ++i)
    if (!node.input(i).empty() && !values.count(node.input(i)))
      return fail("input '" + node.input(i) + "' is not defined");
  if (!node.attribute().empty()) {
    for (const onnx::AttributeProto &a : node.attribute())
      if (a.type() == onnx::AttributeProto::GRAPH ||
          a.type() == onnx::AttributeProto::GRAPHS)
        return fail("subgraph attributes are not supported");
  }
  // Ops whose result has their data input's element type keep its
  // signedness; the others set it per output.
  bool keepsType =
      (elementwiseInfo(op) && !elementwiseInfo(op)->comparison) ||
      isReductionOp(op) ||
      llvm::is_contained({"Reshape",         "Flatten",   "Squeeze",
                          "Unsqueeze",       "Transpose", "Split",
                          "Slice",           "Concat",    "Gather",
                          "Expand",          "MaxPool",   "Clip",
                          "Trilu",           "CumSum",    "Tile",
                          "GatherElements",  "Pad",       "TopK",
                          "ScatterElements", "ScatterND", "Scatter"},
                         op);
  unsigned data = op == "Where" ? 1 : 0;
  outUnsigned = keepsType && hasInput(data) && in(data).isUnsigned;

  if (elementwiseInfo(op))
    return importElementwise(op);
  if (op == "MatMul")
    return importMatMul();
  if (op == "Gemm")
    return importGemm();
  if (op == "Softmax" || op == "LogSoftmax")
    return importSoftmax(op == "LogSoftmax");
  if (op == "LayerNormalization")
    return importLayerNorm();
  if (op == "BatchNormalization")
    return importBatchNorm();
  if (isReductionOp(op))
    return importReduce(op);
  if (op == "Reshape" || op == "Flatten" || op == "Squeeze" ||
      op == "Unsqueeze")
    return importReshapeLike(op);
  if (op == "Transpose")
    return importTranspose();
  if (op == "Split")
    return importSplit();
  if (op == "Slice")
    return importSlice();
  if (op == "Concat")
    return importConcat();
  if (op == "Gather")
    return importGather();
  if (op == "Expand")
    return importExpand();
  if (op == "Constant")
    return importConstant();
  if (op == "ConstantOfShape")
    return importConstantOfShape();
  if (op == "Shape")
    return importShape();
  if (op == "Size") {
    if (!hasInput(0))
      return fail("expects an input");
    setKnown(0, intsAttr({}, builder.getI64Type(), {numElements(inShape(0))}));
    return success();
  }
  if (op == "Range")
    return importRange();
  if (op == "Cast" || op == "CastLike")
    return importCast(op == "CastLike");
  if (op == "Conv")
    return importConv();
  if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool" ||
      op == "GlobalMaxPool")
    return importPool(op);
  if (op == "Clip")
    return importClip();
  if (op == "Trilu")
    return importTrilu();
  if (op == "CumSum")
    return importCumSum();
  if (op == "ArgMax" || op == "ArgMin")
    return importArgExtreme(op == "ArgMax");
  if (op == "Tile")
    return importTile();
  if (op == "OneHot")
    return importOneHot();
  if (op == "GatherElements")
    return importGatherElements();
  if (op == "TopK")
    return importTopK();
  if (op == "NonZero")
    return importNonZero();
  // Scatter (opsets 9-10) is ScatterElements without reduction.
  if (op == "ScatterElements" || op == "ScatterND" || op == "Scatter")
    return importScatter(op == "ScatterND");
  if (op == "InstanceNormalization")
    return importInstanceNorm();
  if (op == "GroupNormalization")
    return importGroupNorm();
  if (op == "Einsum")
    return importEinsum();
  if (op == "ConvTranspose")
    return importConvTranspose();
  if (op == "Pad")
    return importPad();
  if (op == "Resize")
    return importResize();
  if (op == "LSTM" || op == "GRU" || op == "RNN")
    return importRecurrent(op);
  if (op == "Identity" || op == "Dropout") {
    if (!hasInput(0))
      return fail("expects an input");
    if (op == "Dropout" && hasInput(2)) {
      if (!isKnown(2) || intsOf(in(2).constant)[0] != 0)
        return fail("training mode is not supported");
    }
    values[node.output(0)] = in(0);
    // The mask keeps everything: true (bool) from opset 10, ones of the
    // input's type T before.
    if (op == "Dropout" && node.output_size() > 1 && !node.output(1).empty()) {
      Type elt = inElt(0);
      Attribute one = opset >= 10 ? Attribute(builder.getBoolAttr(true))
                      : isa<FloatType>(elt)
                          ? Attribute(builder.getFloatAttr(elt, 1.0))
                          : Attribute(builder.getIntegerAttr(elt, 1));
      Type maskElt = opset >= 10 ? builder.getI1Type() : elt;
      setKnown(1, DenseElementsAttr::get(unplaced(inShape(0), maskElt), one),
               /*isUnsigned=*/opset < 10 && in(0).isUnsigned);
    }
    return success();
  }
  assert(!isImplementedOp(op) && "isImplementedOp lists an op without import");
  return fail("unsupported operator");
}

LogicalResult Importer::bindInputValue(StringRef name,
                                       ArrayRef<std::string> texts,
                                       llvm::StringSet<> &initializerNames) {
  onnx::GraphProto *graph = model.mutable_graph();
  auto error = [&](const Twine &msg) {
    emitLine(fileLoc, msg);
    return failure();
  };
  int index = -1;
  for (int i = 0; i < graph->input_size(); ++i)
    if (graph->input(i).name() == name && !initializerNames.count(name))
      index = i;
  if (index < 0 || boundInputs.count(name))
    return error("--input-value names '" + name +
                 (boundInputs.count(name) ? "' twice"
                                          : "', which is not a graph input"));
  const onnx::ValueInfoProto &vi = graph->input(index);
  if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape())
    return error("--input-value names '" + name +
                 "', which is not a tensor input of known rank");
  const onnx::TypeProto::Tensor &tt = vi.type().tensor_type();
  int32_t dataType = tt.elem_type();
  FailureOr<Type> elt = elementType(dataType, "input '" + name + "'");
  if (failed(elt))
    return failure();
  std::string typeName = onnx::TensorProto_DataType_Name(dataType);
  // The shape: the input's, where one dynamic dimension may be inferred
  // from the number of values.
  int64_t n = texts.size();
  SmallVector<int64_t> shape;
  int dynamicDim = -1;
  int64_t known = 1;
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto &dim = tt.shape().dim(i);
    if (dim.has_dim_value() && dim.dim_value() >= 0) {
      shape.push_back(dim.dim_value());
      known *= dim.dim_value();
      continue;
    }
    if (dynamicDim >= 0)
      return error("--input-value cannot infer two dynamic dimensions of "
                   "input '" +
                   name + "': pass --input-shape " + name + "=d0,d1,...");
    dynamicDim = i;
    shape.push_back(0);
  }
  if (dynamicDim >= 0 && known > 0 && n % known == 0)
    shape[dynamicDim] = n / known;
  if (numElements(shape) != n || (dynamicDim >= 0 && known == 0 && n != 0)) {
    // "?" marks the dynamic dimension that the count does not determine.
    std::string dims = "[";
    for (auto [d, size] : llvm::enumerate(shape))
      dims += (d ? "," : "") + (static_cast<int>(d) == dynamicDim
                                    ? std::string("?")
                                    : std::to_string(size));
    dims += "]";
    return error("--input-value gives " + Twine(n) + " values for input '" +
                 name + "' of shape " + dims + " (" +
                 (dynamicDim >= 0 ? "a multiple of " + Twine(known)
                                  : Twine(numElements(shape))) +
                 " elements)");
  }
  // Encode the values as raw_data (little-endian) of the input's type.
  onnx::TensorProto t;
  t.set_name(name.str());
  t.set_data_type(dataType);
  for (int64_t d : shape)
    t.add_dims(d);
  std::string raw;
  unsigned width = elt->getIntOrFloatBitWidth();
  auto append = [&](uint64_t bits, unsigned bytes) {
    for (unsigned i = 0; i < bytes; ++i)
      raw.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  };
  for (StringRef text : texts) {
    auto bad = [&](StringRef why) {
      return error("bad --input-value for input '" + name + "': '" + text +
                   "' " + why);
    };
    if (auto ft = dyn_cast<FloatType>(*elt)) {
      double d;
      if (text.getAsDouble(d))
        return bad("is not a number");
      APFloat f(d);
      bool lost;
      f.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      append(f.bitcastToAPInt().getZExtValue(), width / 8);
      continue;
    }
    if (elt->isInteger(1)) {
      if (text != "0" && text != "1" && text != "true" && text != "false")
        return bad("is not a bool (0, 1, true or false)");
      append(text == "1" || text == "true", 1);
      continue;
    }
    if (isUnsignedType(dataType)) {
      uint64_t u;
      if (text.getAsInteger(10, u))
        return bad("is not an unsigned integer");
      if (width < 64 && u >> width)
        return bad("is out of range for " + typeName);
      append(u, width / 8);
      continue;
    }
    int64_t i;
    if (text.getAsInteger(10, i))
      return bad("is not an integer");
    if (width < 64 &&
        (i < -(int64_t(1) << (width - 1)) || i >= (int64_t(1) << (width - 1))))
      return bad("is out of range for " + typeName);
    append(static_cast<uint64_t>(i), width / 8);
  }
  t.set_raw_data(raw);
  *graph->add_initializer() = t;
  initializerNames.insert(name);
  boundInputs.insert(name);
  // From IR version 4 an initializer need not be a graph input; older
  // models list every initializer among the inputs.
  if (model.ir_version() >= 4)
    graph->mutable_input()->DeleteSubrange(index, 1);
  return success();
}

LogicalResult Importer::readOpset() {
  // Opset of the default domain.
  for (const onnx::OperatorSetIdProto &o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      opset = o.version();
  if (opset == 0) {
    emitLine(fileLoc, "model imports no opset of the default ONNX domain");
    return failure();
  }
  // Opsets 1-6 are accepted per node, for ops unchanged since (importNode).
  // The last one is the ONNX library's, or opset 18 where the library stops
  // at 17: the importer implements opset 18, and the checker and shape
  // inference see the model restated at opset 17 (Opset18.h). A later
  // model would be checked, and its attributes read, against the wrong
  // schemas.
  int64_t libraryOpset = onnx_import::maxOpset();
  maxOpset = std::max<int64_t>(libraryOpset, onnx_import::kImportMaxOpset);
  restateForONNX = opset > libraryOpset;
  if (opset < 1 || opset > maxOpset) {
    emitError(fileLoc) << "unsupported opset " << opset << " (supported: 7 to "
                       << maxOpset << ")";
    return failure();
  }
  return success();
}

void Importer::noteInitializers() {
  onnx::GraphProto *graph = model.mutable_graph();
  // Initializers without data (architecture-only models) would fail the
  // checker: check a copy in which they are graph inputs.
  for (const onnx::TensorProto &t : graph->initializer()) {
    initializerNames.insert(t.name());
    bool hasData = t.has_raw_data() || t.float_data_size() ||
                   t.int32_data_size() || t.int64_data_size() ||
                   t.double_data_size() || t.string_data_size() ||
                   t.uint64_data_size() ||
                   t.data_location() == onnx::TensorProto::EXTERNAL;
    if (!hasData && numElements(SmallVector<int64_t>(t.dims().begin(),
                                                     t.dims().end())) != 0)
      dataless.insert(t.name());
  }
}

LogicalResult Importer::applyInputOptions() {
  onnx::GraphProto *graph = model.mutable_graph();
  // Apply --input-shape to the graph inputs so that ONNX inference sees it.
  llvm::StringMap<SmallVector<int64_t>> shapes;
  for (const auto &[name, dims] : options.inputShapes) {
    bool found = false;
    for (const onnx::ValueInfoProto &vi : graph->input())
      found |= vi.name() == name && !initializerNames.count(name);
    if (!found || shapes.count(name)) {
      emitLine(fileLoc,
               "--input-shape names '" + name +
                   (found ? "' twice" : "', which is not a graph input"));
      return failure();
    }
    shapes[name] = dims;
  }
  for (onnx::ValueInfoProto &vi : *graph->mutable_input()) {
    auto it = shapes.find(vi.name());
    if (it == shapes.end() || !vi.type().has_tensor_type())
      continue;
    onnx::TensorShapeProto *shape =
        vi.mutable_type()->mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() != static_cast<int>(it->second.size())) {
      emitLine(fileLoc, "--input-shape gives " + Twine(it->second.size()) +
                            " dimensions for input '" + vi.name() +
                            "' of rank " + Twine(shape->dim_size()));
      return failure();
    }
    for (int i = 0; i < shape->dim_size(); ++i) {
      onnx::TensorShapeProto::Dimension *dim = shape->mutable_dim(i);
      if (dim->has_dim_value() && dim->dim_value() != it->second[i]) {
        emitLine(fileLoc, "--input-shape gives " + Twine(it->second[i]) +
                              " for dimension " + Twine(i) + " of input '" +
                              vi.name() + "', which the model fixes to " +
                              Twine(dim->dim_value()));
        return failure();
      }
      dim->set_dim_value(it->second[i]);
    }
  }
  // Bind --input-value inputs (after --input-shape, which may give their
  // shape) before checking, so that ONNX inference sees them as constants.
  for (const auto &[name, texts] : options.inputValues)
    if (failed(bindInputValue(name, texts, initializerNames)))
      return failure();
  return success();
}

LogicalResult Importer::checkBeforeONNX() {
  onnx::GraphProto *graph = model.mutable_graph();
  // Unnamed nodes get the names diagnostics give them (`<OpType>_<index>`),
  // so that the checker's and inference's messages name them too (they
  // say `Node ()` otherwise).
  for (int i = 0; i < graph->node_size(); ++i)
    if (graph->node(i).name().empty())
      graph->mutable_node(i)->set_name(graph->node(i).op_type() + "_" +
                                       std::to_string(i));
  // An op that ONNX does not know at this opset: the checker would say
  // `No Op registered for FooBar ...` without naming the node.
  for (int i = 0; i < graph->node_size(); ++i) {
    const onnx::NodeProto &node = graph->node(i);
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      continue;
    // Ops new in opset 18 are known to the importer, not the library:
    // checkImplementedOps lists those it does not implement.
    if (restateForONNX && onnx_import::isNewInOpset18(node.op_type()))
      continue;
    if (!onnx_import::checkSchema(node.op_type(), "", opset).empty()) {
      setCurrentNode(node, i);
      (void)fail("unknown operator: ONNX has no schema for it at opset " +
                 Twine(opset));
      return failure();
    }
  }
  // Tensor data that disagree with their dims would crash ONNX inference.
  {
    int node;
    std::string initializer;
    std::string err = graphDataError(*graph, node, initializer);
    if (!err.empty()) {
      // An initializer's error names the first node reading it.
      if (node >= 0)
        setCurrentNode(graph->node(node), node);
      else if (!initializer.empty())
        setFirstConsumer(initializer);
      (void)fail(err);
      return failure();
    }
  }
  // Window attributes that ONNX inference divides by or sizes with
  // (convPoolShapeInference: strides 0 is a SIGFPE).
  for (int i = 0; i < graph->node_size(); ++i) {
    const onnx::NodeProto &node = graph->node(i);
    if ((!node.domain().empty() && node.domain() != "ai.onnx") ||
        !llvm::is_contained(
            {"Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool"},
            node.op_type()))
      continue;
    for (const onnx::AttributeProto &a : node.attribute()) {
      bool positive = llvm::is_contained(
          {"strides", "dilations", "kernel_shape"}, a.name());
      bool group =
          a.name() == "group" && StringRef(node.op_type()).starts_with("Conv");
      if (!positive && !group && a.name() != "pads")
        continue;
      SmallVector<int64_t> vals(a.ints().begin(), a.ints().end());
      if (group)
        vals = {a.i()};
      int64_t min = a.name() == "pads" ? 0 : 1;
      if (llvm::any_of(vals, [&](int64_t v) { return v < min; })) {
        setCurrentNode(node, i);
        (void)fail("attribute '" + a.name() + "' must be " +
                   (min ? "positive" : "non-negative") + ", got " +
                   (group ? std::to_string(a.i()) : shapeStr(vals)));
        return failure();
      }
    }
  }
  return success();
}

LogicalResult Importer::checkAndInferShapes() {
  onnx::GraphProto *graph = model.mutable_graph();
  onnx::ModelProto checked;
  const onnx::ModelProto *toCheck = &model;
  // Past the library's opset, ops it cannot know must be reported before
  // its checker sees them (one line listing every unsupported op).
  if (restateForONNX && failed(checkImplementedOps(*graph)))
    return failure();
  if (!dataless.empty() || restateForONNX) {
    checked = model;
    onnx::GraphProto *g = checked.mutable_graph();
    auto *inits = g->mutable_initializer();
    for (int i = inits->size() - 1; i >= 0; --i) {
      const onnx::TensorProto &t = inits->Get(i);
      if (!dataless.count(t.name()))
        continue;
      bool listed = false;
      for (const onnx::ValueInfoProto &vi : g->input())
        listed |= vi.name() == t.name();
      if (!listed) {
        onnx::ValueInfoProto *vi = g->add_input();
        vi->set_name(t.name());
        auto *tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(t.data_type());
        for (int64_t d : t.dims())
          tt->mutable_shape()->add_dim()->set_dim_value(d);
      }
      inits->DeleteSubrange(i, 1);
    }
    if (restateForONNX)
      onnx_import::restateOpset18As17(checked);
    toCheck = &checked;
  }
  // The checker's and inference's messages name a node as `Node (NAME)`
  // or `node name: NAME)`: report them at that node.
  auto failAtNamedNode = [&](const Twine &what, StringRef err) {
    for (int i = 0; i < graph->node_size(); ++i) {
      const std::string &name = graph->node(i).name();
      if (err.contains("Node (" + name + ")") ||
          err.contains("node name: " + name + ")")) {
        setCurrentNode(graph->node(i), i);
        break;
      }
    }
    return fail(what + ": " + err);
  };
  std::string err = onnx_import::checkModel(*toCheck);
  if (!err.empty()) {
    (void)failAtNamedNode("invalid ONNX model", err);
    return failure();
  }
  onnx::ModelProto inferred = *toCheck;
  err = onnx_import::inferShapes(inferred);
  if (!err.empty()) {
    (void)failAtNamedNode("ONNX shape inference failed", err);
    return failure();
  }
  // The ranks ONNX 1.12's inference would have crashed on (its guarded
  // schemas left those nodes' outputs unknown instead, ONNXChecker.cpp),
  // declared or computed: one line at the node.
  llvm::StringMap<int> ranks;
  auto noteRank = [&](const onnx::ValueInfoProto &vi) {
    if (vi.type().has_tensor_type() && vi.type().tensor_type().has_shape())
      ranks[vi.name()] = vi.type().tensor_type().shape().dim_size();
  };
  llvm::for_each(inferred.graph().input(), noteRank);
  llvm::for_each(inferred.graph().value_info(), noteRank);
  for (const onnx::TensorProto &t : model.graph().initializer())
    ranks[t.name()] = t.dims_size();
  auto rankOf = [&](const std::string &name) {
    auto it = ranks.find(name);
    return it == ranks.end() ? -1 : it->second;
  };
  for (int i = 0; i < graph->node_size(); ++i) {
    const onnx::NodeProto &n = graph->node(i);
    if (n.input_size() < 1)
      continue;
    int x = rankOf(n.input(0));
    std::string why;
    if (n.op_type() == "LayerNormalization" && n.output_size() > 1 && x == 0)
      why = "X is a scalar; LayerNormalization needs rank >= 1";
    if ((n.op_type() == "Conv" || n.op_type() == "ConvTranspose") &&
        n.input_size() > 1) {
      int w = rankOf(n.input(1));
      if (x >= 0 && x < 3)
        why =
            "X must have rank >= 3 ([N, C, D1, ...]), got " + std::to_string(x);
      else if (x >= 0 && w >= 0 && x != w)
        why = "X (rank " + std::to_string(x) + ") and W (rank " +
              std::to_string(w) + ") must have the same rank";
    }
    if (!why.empty()) {
      setCurrentNode(n, i);
      (void)fail(why);
      return failure();
    }
  }
  // Remember what inference says (and the graph outputs' declarations,
  // which it merged into the outputs) for checkOutputType.
  auto remember = [&](const onnx::ValueInfoProto &vi) {
    if (!vi.type().has_tensor_type())
      return;
    const onnx::TypeProto::Tensor &tt = vi.type().tensor_type();
    OnnxType t;
    t.elemType = tt.elem_type();
    if (tt.has_shape()) {
      t.dims.emplace();
      for (const auto &dim : tt.shape().dim())
        t.dims->push_back(dim.has_dim_value() ? dim.dim_value() : -1);
    }
    onnxTypes[vi.name()] = std::move(t);
  };
  for (const onnx::ValueInfoProto &vi : inferred.graph().value_info())
    remember(vi);
  for (const onnx::ValueInfoProto &vi : inferred.graph().output())
    remember(vi);
  return success();
}

LogicalResult Importer::importArguments(Block *body,
                                        SmallVector<Type> &argTypes,
                                        SmallVector<ArgRole> &argRoles) {
  onnx::GraphProto *graph = model.mutable_graph();
  auto addArg = [&](StringRef name, RankedTensorType type,
                    bool isGraphInput = false) {
    argRoles.push_back({name.str(), isGraphInput && type.getRank() > 0});
    Location loc = NameLoc::get(builder.getStringAttr(name), fileLoc);
    BlockArgument arg = body->addArgument(type, loc);
    argTypes.push_back(type);
    TensorInfo &t = values[name];
    t.type = type;
    t.value = arg;
  };
  for (const onnx::ValueInfoProto &vi : graph->input()) {
    if (initializerNames.count(vi.name()))
      continue;
    // The importer emits static tensor programs: sequence, optional and
    // map values (and string tensors, elementType) have no counterpart.
    // Those errors name the node that reads the input.
    if (!vi.type().has_tensor_type() ||
        !supportedElementType(vi.type().tensor_type().elem_type()))
      setFirstConsumer(vi.name());
    if (!vi.type().has_tensor_type()) {
      const onnx::TypeProto &type = vi.type();
      StringRef kind = type.has_sequence_type()        ? "a sequence"
                       : type.has_optional_type()      ? "an optional"
                       : type.has_map_type()           ? "a map"
                       : type.has_sparse_tensor_type() ? "a sparse tensor"
                                                       : "a non-tensor";
      (void)fail("input '" + vi.name() + "' has " + kind +
                 " type: non-tensor types are not supported");
      return failure();
    }
    const onnx::TypeProto::Tensor &tt = vi.type().tensor_type();
    FailureOr<Type> elt =
        elementType(tt.elem_type(), "input '" + vi.name() + "'");
    if (failed(elt))
      return failure();
    if (!tt.has_shape()) {
      setFirstConsumer(vi.name());
      emitLine(curLoc, "input '" + vi.name() +
                           "' has no shape: pass --input-shape " + vi.name() +
                           "=d0,d1,..." + readBy());
      return failure();
    }
    SmallVector<int64_t> shape;
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
      const auto &dim = tt.shape().dim(i);
      if (!dim.has_dim_value() || dim.dim_value() < 0) {
        // Reported at the first node reading the input (the message text
        // stays as tools match it).
        setFirstConsumer(vi.name());
        emitLine(curLoc,
                 "unresolvable dynamic shape: dimension " + Twine(i) +
                     (dim.has_dim_param() ? " ('" + dim.dim_param() + "')"
                                          : std::string()) +
                     " of input '" + vi.name() +
                     "' is dynamic: pass --input-shape " + vi.name() +
                     "=d0,d1,..." + readBy());
        return failure();
      }
      shape.push_back(dim.dim_value());
    }
    addArg(vi.name(), placed(shape, *elt), /*isGraphInput=*/true);
    values[vi.name()].isUnsigned = isUnsignedType(tt.elem_type());
  }
  for (const onnx::TensorProto &t : graph->initializer()) {
    std::string what = "initializer '" + t.name() + "'";
    // Only on failure: the search is linear in the graph.
    if (!supportedElementType(t.data_type()))
      setFirstConsumer(t.name());
    FailureOr<Type> elt = elementType(t.data_type(), what);
    if (failed(elt))
      return failure();
    SmallVector<int64_t> shape(t.dims().begin(), t.dims().end());
    if (llvm::any_of(shape, [](int64_t d) { return d < 0; })) {
      emitLine(fileLoc, what + " has a negative dimension");
      return failure();
    }
    int64_t n = numElements(shape);
    bool hasData = !dataless.count(t.name()) &&
                   t.data_location() != onnx::TensorProto::EXTERNAL;
    bool isShapeLike = !isa<FloatType>(*elt) && n <= kMaxShapeInitializer;
    if (hasData && (options.weightsAsConstants || isShapeLike || n <= 1 ||
                    boundInputs.count(t.name()))) {
      FailureOr<DenseElementsAttr> c = tensorContents(t, what);
      if (failed(c))
        return failure();
      TensorInfo &info = values[t.name()];
      info.type = placed(shape, *elt);
      info.constant = *c;
      info.isUnsigned = isUnsignedType(t.data_type());
      continue;
    }
    if (options.weightsAsConstants && !hasData) {
      emitLine(fileLoc, what + " has no data: --weights=constants needs them");
      return failure();
    }
    addArg(t.name(), placed(shape, *elt));
    values[t.name()].isUnsigned = isUnsignedType(t.data_type());
  }

  return success();
}

LogicalResult Importer::importNodes() {
  onnx::GraphProto *graph = model.mutable_graph();
  if (failed(checkImplementedOps(*graph)))
    return failure();
  unsigned index = 0;
  for (const onnx::NodeProto &node : graph->node()) {
    if (failed(importNode(node, index++)))
      return failure();
    // Every output must have been defined (e.g. no unsupported optional
    // outputs left dangling).
    for (const std::string &out : node.output()) {
      if (!out.empty() && !values.count(out)) {
        (void)fail("output '" + out + "' is not supported");
        return failure();
      }
      if (!out.empty() && failed(checkOutputType(out)))
        return failure();
    }
  }
  curNode = nullptr;
  curLoc = fileLoc;

  return success();
}

LogicalResult Importer::finishFunction(func::FuncOp func,
                                       ArrayRef<Type> argTypes,
                                       ArrayRef<ArgRole> argRoles) {
  onnx::GraphProto *graph = model.mutable_graph();
  SmallVector<Value> results;
  SmallVector<bool> resultUnsigned;
  for (const onnx::ValueInfoProto &vi : graph->output()) {
    auto it = values.find(vi.name());
    if (it == values.end()) {
      emitLine(fileLoc,
               "graph output '" + vi.name() + "' is not computed by any node");
      return failure();
    }
    results.push_back(materialize(it->second));
    resultUnsigned.push_back(it->second.isUnsigned);
  }
  func::ReturnOp::create(builder, fileLoc, results);
  func.setFunctionType(
      builder.getFunctionType(argTypes, ValueRange(results).getTypes()));
  // BatchNormalization's running statistics are initializers like the
  // weights, but no optimizer trains them (dist-autodiff skips them).
  llvm::StringSet<> statistics;
  for (const onnx::NodeProto &node : graph->node())
    if (node.op_type() == "BatchNormalization")
      for (int i = 3; i < std::min(node.input_size(), 5); ++i)
        statistics.insert(node.input(i));
  for (auto [i, role] : llvm::enumerate(argRoles)) {
    func.setArgAttr(i, "dist.name", builder.getStringAttr(role.first));
    if (role.second)
      func.setArgAttr(i, "dist.batch_dim", builder.getI64IntegerAttr(0));
    if (statistics.contains(role.first))
      func.setArgAttr(i, "dist.frozen", builder.getUnitAttr());
  }
  // Unsigned results (UINT8..UINT64), for distir-run's output files.
  for (auto [i, isUnsigned] : llvm::enumerate(resultUnsigned))
    if (isUnsigned)
      func.setResultAttr(i, "dist.unsigned", builder.getUnitAttr());
  return success();
}

OwningOpRef<ModuleOp> Importer::run() {
  if (failed(readOpset()))
    return {};
  noteInitializers();
  if (failed(applyInputOptions()) || failed(checkBeforeONNX()) ||
      failed(checkAndInferShapes()))
    return {};

  // Function signature: graph inputs, then weights.
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  builder.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(builder, fileLoc, options.funcName,
                                   builder.getFunctionType({}, {}));
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);
  SmallVector<Type> argTypes;
  SmallVector<ArgRole> argRoles;
  if (failed(importArguments(body, argTypes, argRoles)) ||
      failed(importNodes()) || failed(finishFunction(func, argTypes, argRoles)))
    return {};
  tagLayers(func);
  if (failed(verify(*module)))
    return {};
  return module;
}

//===----------------------------------------------------------------------===//
// Public API and registration
//===----------------------------------------------------------------------===//

std::string
distir::parseInputShape(StringRef spec,
                        std::pair<std::string, SmallVector<int64_t>> &result) {
  auto [name, dims] = spec.rsplit('=');
  if (name.empty() || !spec.contains('='))
    return "bad --input-shape '" + spec.str() + "': expected NAME=d0,d1,...";
  result.first = name.str();
  result.second.clear();
  if (dims.empty())
    return {}; // A scalar input.
  SmallVector<StringRef> parts;
  dims.split(parts, ',');
  for (StringRef p : parts) {
    int64_t d;
    if (p.trim().getAsInteger(10, d) || d < 0)
      return "bad --input-shape '" + spec.str() + "': '" + p.str() +
             "' is not a dimension size";
    result.second.push_back(d);
  }
  return {};
}

std::string distir::parseInputValue(
    StringRef spec, std::pair<std::string, SmallVector<std::string>> &result) {
  auto [name, vals] = spec.split('=');
  if (name.empty() || !spec.contains('='))
    return "bad --input-value '" + spec.str() + "': expected NAME=v0,v1,...";
  result.first = name.str();
  result.second.clear();
  if (vals.empty())
    return {}; // No values: an empty tensor.
  SmallVector<StringRef> parts;
  vals.split(parts, ',');
  for (StringRef p : parts)
    result.second.push_back(p.trim().str());
  return {};
}

OwningOpRef<ModuleOp> distir::importONNXModel(StringRef bytes,
                                              StringRef fileName,
                                              const ONNXImportOptions &options,
                                              MLIRContext *context) {
  Location loc = FileLineColLoc::get(context, fileName, 0, 0);
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    emitError(loc) << "malformed ONNX file: cannot parse the model protobuf";
    return {};
  }
  if (!model.has_graph()) {
    emitError(loc) << "malformed ONNX file: the model has no graph";
    return {};
  }
  Importer importer(context, model, fileName, options);
  return importer.run();
}

static OwningOpRef<Operation *> importONNXTranslation(llvm::SourceMgr &sm,
                                                      MLIRContext *context) {
  const llvm::MemoryBuffer *buffer = sm.getMemoryBuffer(sm.getMainFileID());
  Location loc =
      FileLineColLoc::get(context, buffer->getBufferIdentifier(), 0, 0);
  ONNXImportOptions options;
  options.device = clOptions->device;
  options.weightsAsConstants = clOptions->weights == WeightsMode::Constants;
  if (options.device < 0) {
    emitError(loc) << "--device must be >= 0";
    return {};
  }
  for (const std::string &spec : clOptions->inputShapes) {
    std::pair<std::string, SmallVector<int64_t>> shape;
    std::string err = parseInputShape(spec, shape);
    if (!err.empty()) {
      emitLine(loc, err);
      return {};
    }
    options.inputShapes.push_back(std::move(shape));
  }
  for (const std::string &spec : clOptions->inputValues) {
    std::pair<std::string, SmallVector<std::string>> value;
    std::string err = parseInputValue(spec, value);
    if (!err.empty()) {
      emitLine(loc, err);
      return {};
    }
    options.inputValues.push_back(std::move(value));
  }
  OwningOpRef<ModuleOp> module = importONNXModel(
      buffer->getBuffer(), buffer->getBufferIdentifier(), options, context);
  if (!module)
    return {};
  return OwningOpRef<Operation *>(module.release());
}

void distir::registerONNXTranslations() {
  *clOptions; // the command-line options of --import-onnx
  static TranslateToMLIRRegistration importReg(
      "import-onnx",
      "Import an ONNX model as linalg/tensor/arith/math on placed tensors",
      importONNXTranslation, [](DialectRegistry &registry) {
        registry.insert<arith::ArithDialect, func::FuncDialect,
                        linalg::LinalgDialect, math::MathDialect,
                        tensor::TensorDialect, dist::DistDialect>();
      });
  registerMLPBuilderTranslation();
}

/// Shared with --build-mlp (MLPBuilder.cpp), which places on the same device.
int64_t getONNXImportDeviceOption() { return clOptions->device; }
