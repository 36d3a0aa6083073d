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

#include "DistIR/Target/ONNX/ONNXImporter.h"
#include "DistIR/Dialect/Dist/IR/DistAttrs.h"
#include "DistIR/Dialect/Dist/IR/DistDialect.h"
#include "DistIR/Target/ONNX/MLPBuilder.h"
#include "ONNXChecker.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/SourceMgr.h"

#include "onnx/onnx_pb.h"

#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

using namespace mlir;

/// Layer of an op from the name of the ONNX node it came from: exporters
/// name transformer blocks `/blocks.N/...`, `/h.N/...` or `/layers.N/...`.
static std::optional<int64_t> layerFromName(StringRef name) {
  for (StringRef prefix : {"blocks.", "h.", "layers.", "layer."}) {
    size_t at = name.find(prefix);
    while (at != StringRef::npos) {
      if (at == 0 || name[at - 1] == '/' || name[at - 1] == '.') {
        StringRef digits = name.drop_front(at + prefix.size());
        digits = digits.take_while([](char c) { return llvm::isDigit(c); });
        int64_t layer;
        if (!digits.empty() && !digits.getAsInteger(10, layer))
          return layer;
      }
      at = name.find(prefix, at + 1);
    }
  }
  return std::nullopt;
}

/// Tags every op of an inference graph with its layer (`dist.layer`) and
/// `dist.phase = "forward"`, for pipeline parallelism: ops before the first
/// block (embeddings) belong to layer 0, ops after the last block (final
/// norm, head) to the last layer. Graphs without blocks stay untagged.
static void tagLayers(func::FuncOp func) {
  int64_t last = -1;
  func.walk([&](Operation *op) {
    if (auto loc = dyn_cast<NameLoc>(op->getLoc()))
      if (std::optional<int64_t> layer = layerFromName(loc.getName()))
        last = std::max(last, *layer);
  });
  if (last < 0)
    return;
  Builder b(func.getContext());
  int64_t current = 0;
  bool seenBlock = false;
  for (Operation &op : func.getBody().front().without_terminator()) {
    std::optional<int64_t> layer;
    if (auto loc = dyn_cast<NameLoc>(op.getLoc()))
      layer = layerFromName(loc.getName());
    if (layer) {
      current = *layer;
      seenBlock = true;
    } else if (seenBlock && current == last) {
      current = last; // head after the last block
    }
    op.setAttr("dist.layer", b.getI64IntegerAttr(current));
    op.setAttr("dist.phase", b.getStringAttr("forward"));
  }
}
using namespace distir;

//===----------------------------------------------------------------------===//
// Command-line options of --import-onnx
//===----------------------------------------------------------------------===//

static llvm::cl::OptionCategory onnxCategory("ONNX import options");

static llvm::cl::list<std::string> clInputShapes(
    "input-shape",
    llvm::cl::desc("Shape of a graph input for --import-onnx, replacing its "
                   "dynamic dimensions: NAME=d0,d1,... (repeatable)"),
    llvm::cl::value_desc("NAME=d0,d1,..."), llvm::cl::cat(onnxCategory));

static llvm::cl::list<std::string> clInputValues(
    "input-value",
    llvm::cl::desc("Bind a graph input of --import-onnx to constant values "
                   "(row-major): it becomes an initializer, leaves the "
                   "function signature, and shape operands computed from it "
                   "resolve at import time: NAME=v0,v1,... (repeatable)"),
    llvm::cl::value_desc("NAME=v0,v1,..."), llvm::cl::cat(onnxCategory));

static llvm::cl::opt<int64_t>
    clDevice("device",
             llvm::cl::desc("Device that --import-onnx and --build-mlp place "
                            "every value on (#dist.device<N>)"),
             llvm::cl::init(0), llvm::cl::cat(onnxCategory));

enum class WeightsMode { Arguments, Constants };
static llvm::cl::opt<WeightsMode> clWeights(
    "weights", llvm::cl::desc("How --import-onnx imports initializers"),
    llvm::cl::values(
        clEnumValN(WeightsMode::Arguments, "arguments",
                   "function arguments (default; no weight data is read)"),
        clEnumValN(WeightsMode::Constants, "constants",
                   "arith.constant dense<...> holding the weight data")),
    llvm::cl::init(WeightsMode::Arguments), llvm::cl::cat(onnxCategory));

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace {

/// Known values larger than this are not evaluated at import time.
constexpr int64_t kMaxFoldElements = 1 << 16;
/// Range results above this element count are rejected before anything is
/// allocated (no static tensor program holds such a tensor).
constexpr int64_t kMaxRangeElements = int64_t(1) << 31;
/// Integer initializers up to this size are treated as known values (shape
/// operands), not as weights.
constexpr int64_t kMaxShapeInitializer = 1 << 12;

/// The element count of `shape`, saturated at INT64_MAX (known values may
/// have absurd shapes, e.g. ConstantOfShape splats).
int64_t numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (llvm::MulOverflow(n, d, n))
      return std::numeric_limits<int64_t>::max();
  return n;
}

SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// ONNX multidirectional broadcasting of two shapes.
std::optional<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                    ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

/// For each linear index of `outShape`, the linear index of the element of
/// `inShape` it reads under ONNX broadcasting.
SmallVector<int64_t> broadcastIndices(ArrayRef<int64_t> outShape,
                                      ArrayRef<int64_t> inShape) {
  int64_t n = numElements(outShape);
  SmallVector<int64_t> outStrides = stridesOf(outShape);
  SmallVector<int64_t> inStrides = stridesOf(inShape);
  size_t offset = outShape.size() - inShape.size();
  SmallVector<int64_t> result(n);
  for (int64_t lin = 0; lin < n; ++lin) {
    int64_t src = 0;
    for (size_t d = offset; d < outShape.size(); ++d) {
      int64_t idx = (lin / outStrides[d]) % outShape[d];
      if (inShape[d - offset] != 1)
        src += idx * inStrides[d - offset];
    }
    result[lin] = src;
  }
  return result;
}

std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleave(shape, os, ",");
  os << "]";
  return s;
}

/// Why the data of `t` do not match its dims and data type, or "" if they
/// do (or are external). No data at all is accepted when `allowNoData`
/// (architecture-only initializers). ONNX shape inference reads tensor
/// data without checking its length, so this runs before it.
std::string tensorDataError(const onnx::TensorProto &t, bool allowNoData) {
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0)
      return "negative dimension " + std::to_string(d);
    if (llvm::MulOverflow(n, d, n))
      return "too many elements";
  }
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    return {};
  // Bytes per element in raw_data, values per element in the typed field.
  int64_t width = 0, perElement = 1, have = 0;
  switch (t.data_type()) {
  case onnx::TensorProto::FLOAT:
    width = 4, have = t.float_data_size();
    break;
  case onnx::TensorProto::COMPLEX64:
    width = 8, perElement = 2, have = t.float_data_size();
    break;
  case onnx::TensorProto::DOUBLE:
    width = 8, have = t.double_data_size();
    break;
  case onnx::TensorProto::COMPLEX128:
    width = 16, perElement = 2, have = t.double_data_size();
    break;
  case onnx::TensorProto::INT64:
    width = 8, have = t.int64_data_size();
    break;
  case onnx::TensorProto::UINT64:
    width = 8, have = t.uint64_data_size();
    break;
  case onnx::TensorProto::UINT32:
    width = 4, have = t.uint64_data_size();
    break;
  case onnx::TensorProto::INT32:
    width = 4, have = t.int32_data_size();
    break;
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
    width = 2, have = t.int32_data_size();
    break;
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL:
    width = 1, have = t.int32_data_size();
    break;
  case onnx::TensorProto::STRING:
    have = t.string_data_size();
    break;
  default:
    return {}; // Left to the checker.
  }
  if (t.has_raw_data()) {
    int64_t bytes;
    if (width == 0)
      return "raw_data is not allowed for this data type";
    if (llvm::MulOverflow(n, width, bytes))
      return "too many elements";
    if (static_cast<int64_t>(t.raw_data().size()) != bytes)
      return "raw_data holds " + std::to_string(t.raw_data().size()) +
             " bytes, expected " + std::to_string(bytes);
    return {};
  }
  if (have == 0 && allowNoData)
    return {};
  int64_t values;
  if (llvm::MulOverflow(n, perElement, values))
    return "too many elements";
  if (have != values)
    return "holds " + std::to_string(have) + " values, expected " +
           std::to_string(values);
  return {};
}

/// Why the tensors held by `graph` (initializers, node attributes, nested
/// subgraphs) are malformed, prefixed by where they are, or "".
/// `node` is set to the index of the node at fault, if any, `initializer`
/// to the name of the initializer at fault.
std::string graphDataError(const onnx::GraphProto &graph, int &node,
                           std::string &initializer) {
  node = -1;
  for (const onnx::TensorProto &t : graph.initializer())
    if (std::string err = tensorDataError(t, /*allowNoData=*/true);
        !err.empty()) {
      initializer = t.name();
      return "initializer '" + t.name() + "': " + err;
    }
  if (graph.sparse_initializer_size())
    return "sparse initializer '" +
           graph.sparse_initializer(0).values().name() +
           "': sparse tensors are not supported";
  for (int i = 0; i < graph.node_size(); ++i) {
    node = i;
    for (const onnx::AttributeProto &a : graph.node(i).attribute()) {
      std::string what = "attribute '" + a.name() + "'";
      if (a.has_sparse_tensor() || a.sparse_tensors_size())
        return what + ": sparse tensors are not supported";
      if (a.has_t())
        if (std::string err = tensorDataError(a.t(), /*allowNoData=*/false);
            !err.empty())
          return what + ": " + err;
      for (const onnx::TensorProto &t : a.tensors())
        if (std::string err = tensorDataError(t, /*allowNoData=*/false);
            !err.empty())
          return what + ": " + err;
      auto sub = [&](const onnx::GraphProto &g) -> std::string {
        int inner;
        std::string unused;
        std::string err = graphDataError(g, inner, unused);
        if (err.empty())
          return err;
        if (inner >= 0) {
          const onnx::NodeProto &n = g.node(inner);
          err = "node '" + n.name() + "' (" + n.op_type() + "): " + err;
        }
        return what + ": " + err;
      };
      if (a.has_g())
        if (std::string err = sub(a.g()); !err.empty())
          return err;
      for (const onnx::GraphProto &g : a.graphs())
        if (std::string err = sub(g); !err.empty())
          return err;
    }
  }
  node = -1;
  return {};
}

/// What ONNX shape inference (or the graph's declaration) says about a
/// value: its element type (0 if unknown) and, if its rank is known, its
/// dims (-1 where unknown).
struct OnnxType {
  int32_t elemType = 0;
  std::optional<SmallVector<int64_t>> dims;
};

/// Emits `msg` as one diagnostic line: control characters in it (node, op,
/// tensor or input names are arbitrary bytes) are escaped as \n, \r, \t
/// or \xNN.
void emitLine(Location loc, const Twine &msg) {
  std::string out;
  for (unsigned char c : msg.str()) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (c < 0x20 || c == 0x7f)
      out += "\\x" + llvm::utohexstr(c, /*LowerCase=*/true, /*Width=*/2);
    else
      out += static_cast<char>(c);
  }
  emitError(loc) << out;
}

/// One ONNX value during import.
struct TensorInfo {
  /// Static type, placed on the import device.
  RankedTensorType type;
  /// The MLIR value; null for known values until first used.
  Value value;
  /// The contents when known at import time (unplaced type).
  DenseElementsAttr constant;
  /// The ONNX element type is unsigned (UINT8..UINT64). MLIR integers are
  /// signless: the importer picks unsigned ops (divui, cmpi ult, uitofp, ...)
  /// for these values and reads their known contents zero-extended.
  bool isUnsigned = false;
};

class Importer {
public:
  Importer(MLIRContext *context, onnx::ModelProto &model, StringRef fileName,
           const ONNXImportOptions &options)
      : ctx(context), builder(context), model(model), options(options) {
    ctx->loadDialect<arith::ArithDialect, func::FuncDialect,
                     linalg::LinalgDialect, math::MathDialect,
                     tensor::TensorDialect, dist::DistDialect>();
    fileLoc = FileLineColLoc::get(ctx, fileName, 0, 0);
    curLoc = fileLoc;
    device = dist::DeviceAttr::get(ctx, options.device);
  }

  OwningOpRef<ModuleOp> run();

private:
  //===--------------------------------------------------------------------===//
  // Diagnostics and attributes
  //===--------------------------------------------------------------------===//

  /// Reports `reason` for the node being imported.
  LogicalResult fail(const Twine &reason) {
    if (curNode)
      emitLine(curLoc, "node '" + curNodeName + "' (" + curNode->op_type() +
                           "): " + reason);
    else
      emitLine(curLoc, reason);
    return failure();
  }

  const onnx::AttributeProto *attr(StringRef name) const {
    for (const onnx::AttributeProto &a : curNode->attribute())
      if (a.name() == name)
        return &a;
    return nullptr;
  }
  int64_t attrInt(StringRef name, int64_t dflt) const {
    const onnx::AttributeProto *a = attr(name);
    return a ? a->i() : dflt;
  }
  float attrFloat(StringRef name, float dflt) const {
    const onnx::AttributeProto *a = attr(name);
    return a ? a->f() : dflt;
  }
  std::optional<SmallVector<int64_t>> attrInts(StringRef name) const {
    const onnx::AttributeProto *a = attr(name);
    if (!a)
      return std::nullopt;
    return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
  }
  std::string attrString(StringRef name, StringRef dflt) const {
    const onnx::AttributeProto *a = attr(name);
    return a ? a->s() : dflt.str();
  }

  //===--------------------------------------------------------------------===//
  // Types, values and known contents
  //===--------------------------------------------------------------------===//

  RankedTensorType placed(ArrayRef<int64_t> shape, Type elt) const {
    return RankedTensorType::get(shape, elt, device);
  }
  RankedTensorType unplaced(ArrayRef<int64_t> shape, Type elt) const {
    return RankedTensorType::get(shape, elt);
  }

  FailureOr<Type> elementType(int32_t dataType, const Twine &what);
  /// The MLIR type of an ONNX data type; null if unsupported.
  Type supportedElementType(int32_t dataType);
  static bool isUnsignedType(int32_t dataType) {
    return dataType == onnx::TensorProto::UINT8 ||
           dataType == onnx::TensorProto::UINT16 ||
           dataType == onnx::TensorProto::UINT32 ||
           dataType == onnx::TensorProto::UINT64;
  }
  FailureOr<DenseElementsAttr> tensorContents(const onnx::TensorProto &t,
                                              const Twine &what);

  unsigned numInputs() const { return curNode->input_size(); }
  bool hasInput(unsigned i) const {
    return static_cast<int>(i) < curNode->input_size() &&
           !curNode->input(i).empty();
  }
  TensorInfo &in(unsigned i) { return values[curNode->input(i)]; }
  RankedTensorType inType(unsigned i) { return in(i).type; }
  ArrayRef<int64_t> inShape(unsigned i) { return in(i).type.getShape(); }
  Type inElt(unsigned i) { return in(i).type.getElementType(); }
  bool isKnown(unsigned i) { return static_cast<bool>(in(i).constant); }

  /// The MLIR value of input `i`, creating a placed constant for known
  /// values on first use.
  Value inValue(unsigned i) { return materialize(in(i)); }
  Value materialize(TensorInfo &t) {
    if (!t.value)
      t.value = arith::ConstantOp::create(builder, curLoc,
                                          t.constant.reshape(t.type));
    return t.value;
  }

  /// Integer contents of known input `i`, or failure with a diagnostic
  /// naming `what`.
  FailureOr<SmallVector<int64_t>> knownInts(unsigned i, const Twine &what);
  static SmallVector<int64_t> intsOf(DenseElementsAttr attr,
                                     bool isUnsigned = false);
  static SmallVector<double> floatsOf(DenseElementsAttr attr,
                                      bool isUnsigned = false);
  /// Contents of known input `i`, read per its signedness.
  SmallVector<int64_t> knownIntsOf(unsigned i) {
    return intsOf(in(i).constant, in(i).isUnsigned);
  }
  SmallVector<double> knownFloatsOf(unsigned i) {
    return floatsOf(in(i).constant, in(i).isUnsigned);
  }
  DenseElementsAttr intsAttr(ArrayRef<int64_t> shape, Type elt,
                             ArrayRef<int64_t> vals) const;
  DenseElementsAttr floatsAttr(ArrayRef<int64_t> shape, Type elt,
                               ArrayRef<double> vals) const;

  /// Defines output `i`; it is unsigned if `isUnsigned` says so, else if
  /// the node keeps its data input's element type and that input is
  /// unsigned (`outUnsigned`).
  void setOutput(unsigned i, Value v,
                 std::optional<bool> isUnsigned = std::nullopt) {
    if (static_cast<int>(i) >= curNode->output_size() ||
        curNode->output(i).empty())
      return;
    TensorInfo &t = values[curNode->output(i)];
    t.type = cast<RankedTensorType>(v.getType());
    t.value = v;
    t.constant = {};
    t.isUnsigned = isUnsigned.value_or(outUnsigned);
  }
  void setKnown(unsigned i, DenseElementsAttr c,
                std::optional<bool> isUnsigned = std::nullopt) {
    if (static_cast<int>(i) >= curNode->output_size() ||
        curNode->output(i).empty())
      return;
    TensorInfo &t = values[curNode->output(i)];
    t.type = placed(c.getType().getShape(), c.getType().getElementType());
    t.value = {};
    t.constant = c;
    t.isUnsigned = isUnsigned.value_or(outUnsigned);
  }
  /// True if every present input is known and the result of `numel`
  /// elements is small enough to evaluate at import time.
  bool canFold(int64_t numel) {
    if (numel > kMaxFoldElements)
      return false;
    // A small result of a huge known input (a Slice or Gather of a
    // ConstantOfShape splat) is computed at run time too: folding would
    // expand the whole input.
    for (unsigned i = 0; i < numInputs(); ++i)
      if (hasInput(i) &&
          (!isKnown(i) || numElements(inShape(i)) > kMaxFoldElements))
        return false;
    return true;
  }

  /// If input `i` is a known splat (a ConstantOfShape, of any size), sets
  /// output 0 to the same splat of `shape` and returns true: a Slice,
  /// Gather, Split part or Transpose of a splat is that splat.
  bool forwardSplat(unsigned i, ArrayRef<int64_t> shape, unsigned out = 0) {
    if (!isKnown(i) || !in(i).constant.isSplat())
      return false;
    setKnown(out,
             DenseElementsAttr::get(unplaced(shape, inElt(i)),
                                    in(i).constant.getSplatValue<Attribute>()));
    return true;
  }

  /// Normalizes a possibly negative axis of a rank-`rank` tensor.
  FailureOr<int64_t> normAxis(int64_t axis, int64_t rank) {
    if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
      return fail("axis " + Twine(axis) + " out of range for rank " +
                  Twine(rank));
    return axis < 0 ? axis + rank : axis;
  }

  //===--------------------------------------------------------------------===//
  // IR building blocks
  //===--------------------------------------------------------------------===//

  Value empty(ArrayRef<int64_t> shape, Type elt) {
    return tensor::EmptyOp::create(builder, curLoc, shape, elt, device);
  }
  Value scalarConst(OpBuilder &b, Location loc, Type elt, double v) {
    if (isa<FloatType>(elt))
      return arith::ConstantOp::create(b, loc, b.getFloatAttr(elt, v));
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(elt, (int64_t)v));
  }
  Value filled(ArrayRef<int64_t> shape, Type elt, double v) {
    Value init = empty(shape, elt);
    Value scalar = scalarConst(builder, curLoc, elt, v);
    return linalg::FillOp::create(builder, curLoc, ValueRange{scalar},
                                  ValueRange{init})
        .getResult(0);
  }

  using ScalarFn =
      function_ref<Value(OpBuilder &, Location, ArrayRef<Value> args)>;
  /// Elementwise op over `inputs` with ONNX broadcasting, as linalg.generic.
  FailureOr<Value> elementwise(ArrayRef<Value> inputs, Type outElt,
                               ScalarFn fn);
  /// Broadcasts `v` to `shape` (ONNX rules).
  Value broadcastTo(Value v, ArrayRef<int64_t> shape);
  Value reshape(Value v, ArrayRef<int64_t> shape);
  Value transpose(Value v, ArrayRef<int64_t> perm);
  Value matmul2d(Value a, Value b);
  FailureOr<Value> matmul(Value a, Value b);
  enum class ReduceKind { Sum, Max, Min, Prod };
  /// Reduces `v` over `axes` (sorted, unique). With `keepDims`, reduced dims
  /// stay as 1s. `isUnsigned`: integer Max/Min compare unsigned.
  Value reduce(Value v, ArrayRef<int64_t> axes, ReduceKind kind, bool keepDims,
               bool isUnsigned = false);
  Value extractSlice(Value v, ArrayRef<int64_t> offsets,
                     ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides);
  Value scale(Value v, double factor);
  /// tensor.pad with static amounts (SSA amounts lose the placement under
  /// canonicalization, docs/design/placement.md).
  Value pad(Value v, RankedTensorType type, ArrayRef<int64_t> low,
            ArrayRef<int64_t> high, Value padValue) {
    SmallVector<OpFoldResult> lo, hi;
    for (int64_t l : low)
      lo.push_back(builder.getIndexAttr(l));
    for (int64_t h : high)
      hi.push_back(builder.getIndexAttr(h));
    return tensor::PadOp::create(builder, curLoc, type, v, lo, hi, padValue);
  }

  //===--------------------------------------------------------------------===//
  // Ops
  //===--------------------------------------------------------------------===//

  /// Makes `node`, the `index`th of the graph, the node that diagnostics
  /// and the locations of emitted ops name.
  void setCurrentNode(const onnx::NodeProto &node, unsigned index);
  /// Makes the first node reading `name` current (none if no node reads
  /// it), so that a diagnostic about a graph input or initializer names
  /// the node and op that use it.
  void setFirstConsumer(StringRef name);
  /// ` (first read by node 'N' (Op))` for the node that setFirstConsumer
  /// made current, or "" if none.
  std::string readBy() const {
    if (!curNode)
      return {};
    return " (first read by node '" + curNodeName + "' (" + curNode->op_type() +
           "))";
  }
  /// Fails if output `name` of the current node, as imported, disagrees
  /// with the type ONNX inference gives it (a safety net: the importer
  /// computes every type itself).
  LogicalResult checkOutputType(StringRef name);
  LogicalResult importNode(const onnx::NodeProto &node, unsigned index);
  LogicalResult importElementwise(StringRef op);
  LogicalResult importMatMul();
  LogicalResult importGemm();
  LogicalResult importSoftmax(bool log);
  LogicalResult importLayerNorm();
  LogicalResult importBatchNorm();
  LogicalResult importReduce(StringRef op);
  LogicalResult importReshapeLike(StringRef op);
  LogicalResult importTranspose();
  LogicalResult importSplit();
  LogicalResult importSlice();
  LogicalResult importConcat();
  LogicalResult importGather();
  LogicalResult importExpand();
  LogicalResult importConstant();
  LogicalResult importConstantOfShape();
  LogicalResult importShape();
  LogicalResult importRange();
  LogicalResult importCast(bool like = false);
  LogicalResult importConv();
  LogicalResult importPool(StringRef op);

  /// Moves graph input `name` into an initializer holding `texts` parsed per
  /// its element type (--input-value).
  LogicalResult bindInputValue(StringRef name, ArrayRef<std::string> texts,
                               llvm::StringSet<> &initializerNames);

  /// Axes given by attribute `axes` before `inputSince`, by input 1 from it.
  FailureOr<std::optional<SmallVector<int64_t>>> axesOperand(int inputSince);

  MLIRContext *ctx;
  OpBuilder builder;
  onnx::ModelProto &model;
  const ONNXImportOptions &options;
  dist::DeviceAttr device;
  Location fileLoc = UnknownLoc();
  Location curLoc = UnknownLoc();
  const onnx::NodeProto *curNode = nullptr;
  std::string curNodeName;
  /// Outputs of the current node are unsigned by default (setOutput).
  bool outUnsigned = false;
  int64_t opset = 0;
  /// The last opset of the default domain that the ONNX library knows.
  int64_t maxOpset = 0;
  llvm::StringMap<TensorInfo> values;
  /// Graph inputs bound by --input-value: known values whatever their size.
  llvm::StringSet<> boundInputs;
  /// Types of the values as ONNX inference and the graph outputs' declared
  /// types give them; every node output is checked against them.
  llvm::StringMap<OnnxType> onnxTypes;
};

} // namespace

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

Value Importer::reshape(Value v, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getShape() == shape)
    return v;
  auto target = placed(shape, type.getElementType());
  if (target.getRank() < type.getRank()) {
    if (auto re = getReassociationIndicesForCollapse(type.getShape(), shape))
      return tensor::CollapseShapeOp::create(builder, curLoc, target, v, *re);
  } else if (target.getRank() > type.getRank()) {
    if (auto re = getReassociationIndicesForCollapse(shape, type.getShape()))
      return tensor::ExpandShapeOp::create(builder, curLoc, target, v, *re);
  }
  // General case: through a rank-1 (or rank-0 when empty shapes) tensor.
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
// Elementwise ops
//===----------------------------------------------------------------------===//

namespace {
/// Scalar semantics of an elementwise ONNX op, for evaluation at import time
/// (in double or int64) and for emission (arith/math ops).
struct ElementwiseInfo {
  unsigned arity;
  bool comparison = false; // result is i1
  bool logical = false;    // operands are i1
};
} // namespace

static std::optional<ElementwiseInfo> elementwiseInfo(StringRef op) {
  return llvm::StringSwitch<std::optional<ElementwiseInfo>>(op)
      .Cases(
          {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mod", "BitShift"},
          ElementwiseInfo{2})
      .Cases({"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"},
             ElementwiseInfo{2, true})
      .Cases({"And", "Or", "Xor"}, ElementwiseInfo{2, false, true})
      .Case("Not", ElementwiseInfo{1, false, true})
      .Case("Where", ElementwiseInfo{3})
      .Cases({"Neg", "Abs", "Sqrt", "Reciprocal", "Exp", "Log", "Erf", "Tanh",
              "Sigmoid", "Relu", "LeakyRelu", "Floor", "Ceil", "Sin", "Cos",
              "Softplus", "Gelu", "Elu", "HardSigmoid"},
             ElementwiseInfo{1})
      .Default(std::nullopt);
}

static bool isFloatOnly(StringRef op) {
  return llvm::is_contained({"Sqrt", "Reciprocal", "Exp", "Log", "Erf", "Tanh",
                             "Sigmoid", "LeakyRelu", "Floor", "Ceil", "Sin",
                             "Cos", "Softplus", "Gelu", "Elu", "HardSigmoid"},
                            op);
}

/// Evaluates a scalar op on doubles (floats) at import time.
static double evalFloat(StringRef op, ArrayRef<double> a, double alpha,
                        double beta) {
  double x = a[0], y = a.size() > 1 ? a[1] : 0;
  return llvm::StringSwitch<std::function<double()>>(op)
      .Case("Add", [&] { return x + y; })
      .Case("Sub", [&] { return x - y; })
      .Case("Mul", [&] { return x * y; })
      .Case("Div", [&] { return x / y; })
      .Case("Pow", [&] { return std::pow(x, y); })
      .Case("Max", [&] { return std::max(x, y); })
      .Case("Min", [&] { return std::min(x, y); })
      .Case("Mod", [&] { return std::fmod(x, y); })
      .Case("Equal", [&] { return double(x == y); })
      .Case("Less", [&] { return double(x < y); })
      .Case("Greater", [&] { return double(x > y); })
      .Case("LessOrEqual", [&] { return double(x <= y); })
      .Case("GreaterOrEqual", [&] { return double(x >= y); })
      .Case("And", [&] { return double(x != 0 && y != 0); })
      .Case("Or", [&] { return double(x != 0 || y != 0); })
      .Case("Xor", [&] { return double((x != 0) != (y != 0)); })
      .Case("Not", [&] { return double(x == 0); })
      .Case("Where", [&] { return x != 0 ? a[1] : a[2]; })
      .Case("Neg", [&] { return -x; })
      .Case("Abs", [&] { return std::fabs(x); })
      .Case("Sqrt", [&] { return std::sqrt(x); })
      .Case("Reciprocal", [&] { return 1.0 / x; })
      .Case("Exp", [&] { return std::exp(x); })
      .Case("Log", [&] { return std::log(x); })
      .Case("Erf", [&] { return std::erf(x); })
      .Case("Tanh", [&] { return std::tanh(x); })
      .Case("Sigmoid", [&] { return 1.0 / (1.0 + std::exp(-x)); })
      .Case("Relu", [&] { return std::max(x, 0.0); })
      .Case("LeakyRelu", [&] { return x >= 0 ? x : alpha * x; })
      .Case("Floor", [&] { return std::floor(x); })
      .Case("Ceil", [&] { return std::ceil(x); })
      .Case("Sin", [&] { return std::sin(x); })
      .Case("Cos", [&] { return std::cos(x); })
      .Case("Softplus", [&] { return std::log1p(std::exp(x)); })
      .Case("Gelu",
            [&] { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); })
      .Case("Elu", [&] { return x >= 0 ? x : alpha * (std::exp(x) - 1.0); })
      .Case("HardSigmoid",
            [&] { return std::clamp(alpha * x + beta, 0.0, 1.0); })
      .Default([] { return 0.0; })();
}

/// Evaluates a scalar op on integers at import time. Unsigned operands are
/// zero-extended; their division, remainder, comparisons and min/max are
/// computed in uint64. Signed Mod is Python's % (fmod=0) unless `truncMod`
/// (fmod=1: C's %). Arithmetic wraps around (two's complement) like the
/// emitted arith ops, e.g. Div(INT64_MIN, -1) is INT64_MIN; narrower types
/// are truncated to their width afterwards (intsAttr). Returns std::nullopt
/// for an integer division or remainder by zero.
static std::optional<int64_t> evalInt(StringRef op, ArrayRef<int64_t> a,
                                      bool isUnsigned, bool truncMod) {
  int64_t x = a[0], y = a.size() > 1 ? a[1] : 0;
  uint64_t ux = x, uy = y;
  if ((op == "Div" || op == "Mod") && y == 0)
    return std::nullopt;
  // x / -1 and x % -1 without the overflow trap of INT64_MIN / -1.
  if (!isUnsigned && y == -1 && op == "Div")
    return int64_t(uint64_t(0) - ux);
  if (!isUnsigned && y == -1 && op == "Mod")
    return int64_t(0);
  if (op == "Mod" && truncMod && !isUnsigned)
    return x % y;
  // BitShift (unsigned operands): shifting by the width or more gives 0.
  if (op == "BitShiftLeft")
    return uy >= 64 ? 0 : int64_t(ux << uy);
  if (op == "BitShiftRight")
    return uy >= 64 ? 0 : int64_t(ux >> uy);
  if (isUnsigned) {
    std::optional<int64_t> r =
        llvm::StringSwitch<std::function<std::optional<int64_t>()>>(op)
            .Case("Div", [&] { return int64_t(ux / uy); })
            .Case("Mod", [&] { return int64_t(ux % uy); })
            .Case("Max", [&] { return int64_t(std::max(ux, uy)); })
            .Case("Min", [&] { return int64_t(std::min(ux, uy)); })
            .Case("Less", [&] { return int64_t(ux < uy); })
            .Case("Greater", [&] { return int64_t(ux > uy); })
            .Case("LessOrEqual", [&] { return int64_t(ux <= uy); })
            .Case("GreaterOrEqual", [&] { return int64_t(ux >= uy); })
            .Cases({"Abs", "Relu"}, [&] { return x; })
            .Default([] { return std::nullopt; })();
    if (r)
      return *r;
  }
  return llvm::StringSwitch<std::function<int64_t()>>(op)
      .Case("Add", [&] { return int64_t(ux + uy); })
      .Case("Sub", [&] { return int64_t(ux - uy); })
      .Case("Mul", [&] { return int64_t(ux * uy); })
      // ONNX integer Div truncates toward zero.
      .Case("Div", [&] { return x / y; })
      .Case("Pow",
            [&] {
              // Square-and-multiply, exact modulo 2^64.
              uint64_t r = 1, base = ux;
              for (uint64_t e = y < 0 ? 0 : uy; e; e >>= 1, base *= base)
                if (e & 1)
                  r *= base;
              return y < 0 ? int64_t(0) : int64_t(r);
            })
      .Case("Max", [&] { return std::max(x, y); })
      .Case("Min", [&] { return std::min(x, y); })
      .Case("Mod",
            [&] {
              int64_t r = x % y;
              return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
            })
      .Case("Equal", [&] { return int64_t(x == y); })
      .Case("Less", [&] { return int64_t(x < y); })
      .Case("Greater", [&] { return int64_t(x > y); })
      .Case("LessOrEqual", [&] { return int64_t(x <= y); })
      .Case("GreaterOrEqual", [&] { return int64_t(x >= y); })
      .Case("And", [&] { return int64_t(x && y); })
      .Case("Or", [&] { return int64_t(x || y); })
      .Case("Xor", [&] { return int64_t(bool(x) != bool(y)); })
      .Case("Not", [&] { return int64_t(!x); })
      .Case("Where", [&] { return x ? a[1] : a[2]; })
      .Case("Neg", [&] { return int64_t(uint64_t(0) - ux); })
      .Case("Abs", [&] { return x < 0 ? int64_t(uint64_t(0) - ux) : x; })
      .Case("Relu", [&] { return std::max<int64_t>(x, 0); })
      .Default([] { return int64_t(0); })();
}

/// Converts scalar `x` to the float type `to` (rounding to nearest even).
/// float16 <-> bfloat16 goes through f32, which holds both: neither holds
/// the other, and arith.extf/truncf need a wider/narrower target.
static Value castFloat(OpBuilder &b, Location loc, Value x, FloatType to) {
  auto from = cast<FloatType>(x.getType());
  if (from == to)
    return x;
  if (from.getWidth() == to.getWidth()) {
    Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), x);
    return arith::TruncFOp::create(b, loc, to, wide);
  }
  if (from.getWidth() < to.getWidth())
    return arith::ExtFOp::create(b, loc, to, x);
  return arith::TruncFOp::create(b, loc, to, x);
}

/// Emits the scalar op; operands already have the op's element types.
/// `isUnsigned`: integer operands are unsigned.
static Value emitScalar(OpBuilder &b, Location loc, StringRef op,
                        ArrayRef<Value> a, double alpha, double beta,
                        bool isUnsigned = false) {
  Value x = a[0], y = a.size() > 1 ? a[1] : Value();
  Type t = x.getType();
  bool f = isa<FloatType>(t);
  auto cst = [&](double v) -> Value {
    if (f)
      return arith::ConstantOp::create(b, loc, b.getFloatAttr(t, v));
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(t, (int64_t)v));
  };
  auto cmp = [&](arith::CmpFPredicate fp, arith::CmpIPredicate ip,
                 arith::CmpIPredicate up) -> Value {
    if (f)
      return arith::CmpFOp::create(b, loc, fp, x, y);
    return arith::CmpIOp::create(b, loc, isUnsigned ? up : ip, x, y);
  };
  if (isUnsigned && !f) {
    if (op == "Div")
      return arith::DivUIOp::create(b, loc, x, y);
    // fmod=0 and fmod=1 agree on unsigned operands.
    if (op == "Mod")
      return arith::RemUIOp::create(b, loc, x, y);
    if (op == "Max")
      return arith::MaxUIOp::create(b, loc, x, y);
    if (op == "Min")
      return arith::MinUIOp::create(b, loc, x, y);
    if (op == "Abs" || op == "Relu")
      return x;
  }
  if (op == "Add")
    return f ? Value(arith::AddFOp::create(b, loc, x, y))
             : Value(arith::AddIOp::create(b, loc, x, y));
  if (op == "Sub")
    return f ? Value(arith::SubFOp::create(b, loc, x, y))
             : Value(arith::SubIOp::create(b, loc, x, y));
  if (op == "Mul")
    return f ? Value(arith::MulFOp::create(b, loc, x, y))
             : Value(arith::MulIOp::create(b, loc, x, y));
  if (op == "Div")
    return f ? Value(arith::DivFOp::create(b, loc, x, y))
             : Value(arith::DivSIOp::create(b, loc, x, y));
  if (op == "Pow")
    return f ? Value(math::PowFOp::create(b, loc, x, y))
             : Value(math::IPowIOp::create(b, loc, x, y));
  if (op == "Max")
    return f ? Value(arith::MaximumFOp::create(b, loc, x, y))
             : Value(arith::MaxSIOp::create(b, loc, x, y));
  if (op == "Min")
    return f ? Value(arith::MinimumFOp::create(b, loc, x, y))
             : Value(arith::MinSIOp::create(b, loc, x, y));
  if (op == "Mod")
    return f ? Value(arith::RemFOp::create(b, loc, x, y))
             : Value(arith::RemSIOp::create(b, loc, x, y));
  if (op == "Equal")
    return cmp(arith::CmpFPredicate::OEQ, arith::CmpIPredicate::eq,
               arith::CmpIPredicate::eq);
  if (op == "Less")
    return cmp(arith::CmpFPredicate::OLT, arith::CmpIPredicate::slt,
               arith::CmpIPredicate::ult);
  if (op == "Greater")
    return cmp(arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt,
               arith::CmpIPredicate::ugt);
  if (op == "LessOrEqual")
    return cmp(arith::CmpFPredicate::OLE, arith::CmpIPredicate::sle,
               arith::CmpIPredicate::ule);
  if (op == "GreaterOrEqual")
    return cmp(arith::CmpFPredicate::OGE, arith::CmpIPredicate::sge,
               arith::CmpIPredicate::uge);
  if (op == "And")
    return arith::AndIOp::create(b, loc, x, y);
  if (op == "Or")
    return arith::OrIOp::create(b, loc, x, y);
  if (op == "Xor")
    return arith::XOrIOp::create(b, loc, x, y);
  if (op == "Not")
    return arith::XOrIOp::create(
        b, loc, x, arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
  if (op == "Where")
    return arith::SelectOp::create(b, loc, a[0], a[1], a[2]);
  if (op == "Neg")
    return f ? Value(arith::NegFOp::create(b, loc, x))
             : Value(arith::SubIOp::create(b, loc, cst(0), x));
  if (op == "Abs")
    return f ? Value(math::AbsFOp::create(b, loc, x))
             : Value(math::AbsIOp::create(b, loc, x));
  if (op == "Sqrt")
    return math::SqrtOp::create(b, loc, x);
  if (op == "Reciprocal")
    return arith::DivFOp::create(b, loc, cst(1), x);
  if (op == "Exp")
    return math::ExpOp::create(b, loc, x);
  if (op == "Log")
    return math::LogOp::create(b, loc, x);
  if (op == "Erf")
    return math::ErfOp::create(b, loc, x);
  if (op == "Tanh")
    return math::TanhOp::create(b, loc, x);
  if (op == "Floor")
    return math::FloorOp::create(b, loc, x);
  if (op == "Ceil")
    return math::CeilOp::create(b, loc, x);
  if (op == "Sin")
    return math::SinOp::create(b, loc, x);
  if (op == "Cos")
    return math::CosOp::create(b, loc, x);
  if (op == "Sigmoid") {
    Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
    return arith::DivFOp::create(b, loc, cst(1),
                                 arith::AddFOp::create(b, loc, cst(1), e));
  }
  if (op == "Softplus")
    return math::Log1pOp::create(b, loc, math::ExpOp::create(b, loc, x));
  if (op == "Gelu") {
    Value s = arith::MulFOp::create(b, loc, x, cst(M_SQRT1_2));
    Value e =
        arith::AddFOp::create(b, loc, cst(1), math::ErfOp::create(b, loc, s));
    return arith::MulFOp::create(b, loc,
                                 arith::MulFOp::create(b, loc, x, cst(0.5)), e);
  }
  if (op == "Relu")
    return f ? Value(arith::MaximumFOp::create(b, loc, x, cst(0)))
             : Value(arith::MaxSIOp::create(b, loc, x, cst(0)));
  if (op == "LeakyRelu" || op == "Elu") {
    Value neg =
        op == "LeakyRelu"
            ? Value(arith::MulFOp::create(b, loc, x, cst(alpha)))
            : Value(arith::MulFOp::create(b, loc, cst(alpha),
                                          math::ExpM1Op::create(b, loc, x)));
    Value ge =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x, cst(0));
    return arith::SelectOp::create(b, loc, ge, x, neg);
  }
  if (op == "HardSigmoid") {
    Value v = arith::AddFOp::create(
        b, loc, arith::MulFOp::create(b, loc, x, cst(alpha)), cst(beta));
    return arith::MinimumFOp::create(
        b, loc, arith::MaximumFOp::create(b, loc, v, cst(0)), cst(1));
  }
  return Value();
}

LogicalResult Importer::importElementwise(StringRef op) {
  ElementwiseInfo info = *elementwiseInfo(op);
  unsigned first = op == "Where" ? 1 : 0;
  for (unsigned i = 0; i < info.arity; ++i)
    if (!hasInput(i))
      return fail("expects " + Twine(info.arity) + " inputs");
  // Max and Min are variadic in ONNX; only the binary form is lowered.
  if (curNode->input_size() > static_cast<int>(info.arity))
    return fail("variadic form with " + Twine(curNode->input_size()) +
                " inputs is not supported");
  Type elt = inElt(first);
  // Pow's exponent may have another type than its base (converted below).
  for (unsigned i = first; i < info.arity; ++i)
    if (inElt(i) != elt && !(op == "Pow" && i == 1))
      return fail("operand element types differ");
  // The result has the base's type: an integer base with a float exponent
  // is computed in f64 and truncated toward zero (as numpy's astype).
  if (op == "Pow" && inElt(1) != elt &&
      (elt.isInteger(1) || inElt(1).isInteger(1)))
    return fail("unsupported combination of base and exponent types");
  bool mixedPow = op == "Pow" && inElt(1) != elt;
  if (op == "Where" && !inElt(0).isInteger(1))
    return fail("condition must be a bool tensor");
  if (info.logical && !elt.isInteger(1))
    return fail("operands must be bool tensors");
  if (isFloatOnly(op) && !isa<FloatType>(elt))
    return fail("integer operands are not supported");
  double alpha = attrFloat("alpha", op == "LeakyRelu"     ? 0.01f
                                    : op == "HardSigmoid" ? 0.2f
                                                          : 1.0f);
  double beta = attrFloat("beta", 0.5f);
  if (op == "Gelu" && attrString("approximate", "none") != "none")
    return fail("approximate Gelu is not supported");
  if (op == "Mod" && isa<FloatType>(elt) && attrInt("fmod", 0) == 0)
    return fail("float Mod requires fmod=1");
  // Signed integer Mod with fmod=0 takes the divisor's sign (Python's %).
  bool floorMod = op == "Mod" && !isa<FloatType>(elt) &&
                  attrInt("fmod", 0) == 0 && !in(first).isUnsigned;
  // Signedness of the operands (ONNX gives them one type) and the result.
  bool opUnsigned = in(first).isUnsigned;
  outUnsigned = !info.comparison && opUnsigned;
  // BitShift is defined on unsigned integers; evaluated and emitted per
  // direction.
  StringRef scalarOp = op;
  if (op == "BitShift") {
    if (!opUnsigned)
      return fail("operands must be unsigned integer tensors");
    std::string direction = attrString("direction", "");
    if (direction != "LEFT" && direction != "RIGHT")
      return fail("direction must be LEFT or RIGHT, got '" + direction + "'");
    scalarOp = direction == "LEFT" ? "BitShiftLeft" : "BitShiftRight";
  }
  Type outElt = info.comparison ? builder.getI1Type() : elt;

  SmallVector<int64_t> outShape;
  for (unsigned i = 0; i < info.arity; ++i) {
    auto b = broadcastShapes(outShape, inShape(i));
    if (!b)
      return fail("shapes " + shapeStr(outShape) + " and " +
                  shapeStr(inShape(i)) + " do not broadcast");
    outShape = *b;
  }

  // Evaluate at import time when all operands are known.
  if (canFold(numElements(outShape))) {
    int64_t n = numElements(outShape);
    SmallVector<SmallVector<int64_t>> idx;
    for (unsigned i = 0; i < info.arity; ++i)
      idx.push_back(broadcastIndices(outShape, inShape(i)));
    if (isa<FloatType>(elt) || mixedPow) {
      SmallVector<SmallVector<double>> vals;
      for (unsigned i = 0; i < info.arity; ++i)
        vals.push_back(knownFloatsOf(i));
      SmallVector<double> out(n);
      for (int64_t j = 0; j < n; ++j) {
        SmallVector<double> args;
        for (unsigned i = 0; i < info.arity; ++i)
          args.push_back(vals[i][idx[i][j]]);
        out[j] = evalFloat(op, args, alpha, beta);
      }
      setKnown(0, floatsAttr(outShape, outElt, out));
    } else {
      SmallVector<SmallVector<int64_t>> vals;
      for (unsigned i = 0; i < info.arity; ++i)
        vals.push_back(knownIntsOf(i));
      SmallVector<int64_t> out(n);
      for (int64_t j = 0; j < n; ++j) {
        SmallVector<int64_t> args;
        for (unsigned i = 0; i < info.arity; ++i)
          args.push_back(vals[i][idx[i][j]]);
        std::optional<int64_t> r =
            evalInt(scalarOp, args, opUnsigned, attrInt("fmod", 0) != 0);
        if (!r)
          return fail("integer division by zero");
        out[j] = *r;
      }
      setKnown(0, intsAttr(outShape, outElt, out));
    }
    return success();
  }

  // x^2 is common (variance in decomposed layer norms): emit a multiply.
  bool square = false;
  if (op == "Pow" && isKnown(1) && numElements(inShape(1)) == 1 &&
      isa<FloatType>(inElt(1)) && knownFloatsOf(1)[0] == 2.0)
    square = true;
  bool expUnsigned = op == "Pow" && in(1).isUnsigned;
  SmallVector<Value> operands;
  for (unsigned i = 0; i < (square ? 1u : info.arity); ++i)
    operands.push_back(inValue(i));
  FailureOr<Value> r = elementwise(
      operands, outElt, [&](OpBuilder &b, Location loc, ArrayRef<Value> a) {
        if (square)
          return Value(arith::MulFOp::create(b, loc, a[0], a[0]));
        if (op == "Pow" && a[1].getType() != a[0].getType() &&
            !isa<FloatType>(a[0].getType())) {
          Type t = a[0].getType();
          if (!isa<FloatType>(a[1].getType())) {
            // Integer base and exponent of different widths.
            Value e = cast<IntegerType>(a[1].getType()).getWidth() >=
                              cast<IntegerType>(t).getWidth()
                          ? Value(arith::TruncIOp::create(b, loc, t, a[1]))
                      : expUnsigned
                          ? Value(arith::ExtUIOp::create(b, loc, t, a[1]))
                          : Value(arith::ExtSIOp::create(b, loc, t, a[1]));
            return Value(math::IPowIOp::create(b, loc, a[0], e));
          }
          Type f64 = b.getF64Type();
          Value x = opUnsigned
                        ? Value(arith::UIToFPOp::create(b, loc, f64, a[0]))
                        : Value(arith::SIToFPOp::create(b, loc, f64, a[0]));
          Value e = a[1].getType() == f64
                        ? a[1]
                        : Value(arith::ExtFOp::create(b, loc, f64, a[1]));
          Value p = math::PowFOp::create(b, loc, x, e);
          return opUnsigned ? Value(arith::FPToUIOp::create(b, loc, t, p))
                            : Value(arith::FPToSIOp::create(b, loc, t, p));
        }
        if (op == "Pow" && a[1].getType() != a[0].getType()) {
          Type t = a[0].getType();
          Value e =
              isa<FloatType>(a[1].getType())
                  ? (cast<FloatType>(a[1].getType()).getWidth() <
                             cast<FloatType>(t).getWidth()
                         ? Value(arith::ExtFOp::create(b, loc, t, a[1]))
                         : Value(arith::TruncFOp::create(b, loc, t, a[1])))
              : expUnsigned ? Value(arith::UIToFPOp::create(b, loc, t, a[1]))
                            : Value(arith::SIToFPOp::create(b, loc, t, a[1]));
          return Value(math::PowFOp::create(b, loc, a[0], e));
        }
        if (op == "BitShift") {
          // Shifting by the width or more is poison in arith: give 0.
          Type t = a[0].getType();
          Value shifted =
              scalarOp == "BitShiftLeft"
                  ? Value(arith::ShLIOp::create(b, loc, a[0], a[1]))
                  : Value(arith::ShRUIOp::create(b, loc, a[0], a[1]));
          Value width = arith::ConstantOp::create(
              b, loc, b.getIntegerAttr(t, t.getIntOrFloatBitWidth()));
          Value inRange = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::ult, a[1], width);
          Value zero =
              arith::ConstantOp::create(b, loc, b.getIntegerAttr(t, 0));
          return Value(arith::SelectOp::create(b, loc, inRange, shifted, zero));
        }
        if (floorMod) {
          // r = x rem y; r + y where r and y differ in sign.
          Value r = arith::RemSIOp::create(b, loc, a[0], a[1]);
          Value zero = arith::ConstantOp::create(
              b, loc, b.getIntegerAttr(a[0].getType(), 0));
          Value nonZero =
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, r, zero);
          Value rNeg =
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, r, zero);
          Value yNeg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                             a[1], zero);
          Value differ = arith::XOrIOp::create(b, loc, rNeg, yNeg);
          Value fix = arith::AndIOp::create(b, loc, nonZero, differ);
          return Value(arith::SelectOp::create(
              b, loc, fix, arith::AddIOp::create(b, loc, r, a[1]), r));
        }
        return emitScalar(b, loc, op, a, alpha, beta, opUnsigned);
      });
  if (failed(r))
    return failure();
  setOutput(0, *r);
  return success();
}

//===----------------------------------------------------------------------===//
// Linear algebra and normalization
//===----------------------------------------------------------------------===//

LogicalResult Importer::importMatMul() {
  if (!hasInput(0) || !hasInput(1))
    return fail("expects 2 inputs");
  if (isa<IntegerType>(inElt(0)))
    return fail("integer MatMul is not supported");
  FailureOr<Value> r = matmul(inValue(0), inValue(1));
  if (failed(r))
    return failure();
  setOutput(0, *r);
  return success();
}

LogicalResult Importer::importGemm() {
  if (!hasInput(0) || !hasInput(1))
    return fail("expects at least 2 inputs");
  if (inType(0).getRank() != 2 || inType(1).getRank() != 2)
    return fail("A and B must be matrices");
  if (!isa<FloatType>(inElt(0)))
    return fail("integer Gemm is not supported");
  Value a = inValue(0), b = inValue(1);
  if (attrInt("transA", 0))
    a = transpose(a, {1, 0});
  if (attrInt("transB", 0))
    b = transpose(b, {1, 0});
  auto ta = cast<RankedTensorType>(a.getType());
  auto tb = cast<RankedTensorType>(b.getType());
  if (ta.getDimSize(1) != tb.getDimSize(0))
    return fail("contraction dimensions differ: " + shapeStr(ta.getShape()) +
                " x " + shapeStr(tb.getShape()));
  Value y = matmul2d(a, b);
  double alpha = attrFloat("alpha", 1.0f), beta = attrFloat("beta", 1.0f);
  if (alpha != 1.0)
    y = scale(y, alpha);
  if (hasInput(2) && beta != 0.0) {
    Value c = inValue(2);
    if (beta != 1.0)
      c = scale(c, beta);
    auto r =
        elementwise({y, c}, ta.getElementType(),
                    [](OpBuilder &bb, Location loc, ArrayRef<Value> v) {
                      return Value(arith::AddFOp::create(bb, loc, v[0], v[1]));
                    });
    if (failed(r))
      return failure();
    if (cast<RankedTensorType>(r->getType()).getShape() !=
        cast<RankedTensorType>(y.getType()).getShape())
      return fail("C does not broadcast to the result shape");
    y = *r;
  }
  setOutput(0, y);
  return success();
}

LogicalResult Importer::importSoftmax(bool log) {
  if (!hasInput(0))
    return fail("expects 1 input");
  if (!isa<FloatType>(inElt(0)))
    return fail("integer operands are not supported");
  RankedTensorType type = inType(0);
  int64_t rank = type.getRank();
  if (rank == 0)
    return fail("input must have rank >= 1");
  FailureOr<int64_t> axis =
      normAxis(attrInt("axis", opset >= 13 ? -1 : 1), rank);
  if (failed(axis))
    return failure();
  Value x = inValue(0);
  SmallVector<int64_t> shape(type.getShape());
  int64_t dim = *axis;
  if (opset < 13 && *axis != rank - 1) {
    // Before opset 13 the input is coerced to 2-D at `axis`.
    ArrayRef<int64_t> s = type.getShape();
    x = reshape(x, {numElements(s.take_front(*axis)),
                    numElements(s.drop_front(*axis))});
    dim = 1;
  }
  auto xt = cast<RankedTensorType>(x.getType());
  Value init = empty(xt.getShape(), xt.getElementType());
  Value r = linalg::SoftmaxOp::create(builder, curLoc, TypeRange{xt}, x, init,
                                      static_cast<uint64_t>(dim))
                .getResult()[0];
  if (log) {
    r = *elementwise({r}, xt.getElementType(),
                     [](OpBuilder &b, Location loc, ArrayRef<Value> v) {
                       return Value(math::LogOp::create(b, loc, v[0]));
                     });
  }
  setOutput(0, reshape(r, shape));
  return success();
}

LogicalResult Importer::importLayerNorm() {
  if (!hasInput(0) || !hasInput(1))
    return fail("expects X and Scale");
  RankedTensorType type = inType(0);
  Type elt = type.getElementType();
  if (!isa<FloatType>(elt))
    return fail("integer operands are not supported");
  // Mean and variance are computed in stash_type, which is also the type
  // of the Mean and InvStdDev outputs; the normalized value returns to T
  // before Scale and B (the ONNX function body of LayerNormalization-17).
  int64_t stashCode = attrInt("stash_type", onnx::TensorProto::FLOAT);
  Type stash = supportedElementType(stashCode);
  if (!stash || !isa<FloatType>(stash))
    return fail("stash_type " +
                Twine(onnx::TensorProto_DataType_IsValid(stashCode)
                          ? onnx::TensorProto_DataType_Name(stashCode)
                          : std::to_string(stashCode)) +
                " is not supported (a float type is needed)");
  int64_t rank = type.getRank();
  FailureOr<int64_t> axis = normAxis(attrInt("axis", -1), rank);
  if (failed(axis))
    return failure();
  double eps = attrFloat("epsilon", 1e-5f);
  SmallVector<int64_t> axes;
  for (int64_t d = *axis; d < rank; ++d)
    axes.push_back(d);
  int64_t count = numElements(type.getShape().drop_front(*axis));
  auto convert = [&](Value v, Type to) {
    if (cast<RankedTensorType>(v.getType()).getElementType() == to)
      return v;
    return *elementwise({v}, to,
                        [&](OpBuilder &b, Location loc, ArrayRef<Value> a) {
                          return castFloat(b, loc, a[0], cast<FloatType>(to));
                        });
  };
  Value x = convert(inValue(0), stash);
  auto binary = [&](StringRef op, Value a, Value b) {
    return *elementwise({a, b}, stash,
                        [&](OpBuilder &bb, Location loc, ArrayRef<Value> v) {
                          return emitScalar(bb, loc, op, v, 0, 0);
                        });
  };
  Value mean = scale(reduce(x, axes, ReduceKind::Sum, true), 1.0 / count);
  Value centered = binary("Sub", x, mean);
  Value sq = *elementwise(
      {centered}, stash, [](OpBuilder &b, Location loc, ArrayRef<Value> v) {
        return Value(arith::MulFOp::create(b, loc, v[0], v[0]));
      });
  Value var = scale(reduce(sq, axes, ReduceKind::Sum, true), 1.0 / count);
  Value invStd = *elementwise(
      {var}, stash, [&](OpBuilder &b, Location loc, ArrayRef<Value> v) {
        Value e = arith::ConstantOp::create(b, loc, b.getFloatAttr(stash, eps));
        return Value(math::RsqrtOp::create(
            b, loc, arith::AddFOp::create(b, loc, v[0], e)));
      });
  Value y = convert(binary("Mul", centered, invStd), elt);
  FailureOr<Value> scaled = elementwise(
      {y, inValue(1)}, elt, [](OpBuilder &b, Location loc, ArrayRef<Value> v) {
        return Value(arith::MulFOp::create(b, loc, v[0], v[1]));
      });
  if (failed(scaled))
    return failure();
  y = *scaled;
  if (hasInput(2)) {
    FailureOr<Value> biased =
        elementwise({y, inValue(2)}, elt,
                    [](OpBuilder &b, Location loc, ArrayRef<Value> v) {
                      return Value(arith::AddFOp::create(b, loc, v[0], v[1]));
                    });
    if (failed(biased))
      return failure();
    y = *biased;
  }
  if (cast<RankedTensorType>(y.getType()).getShape() != type.getShape())
    return fail("Scale/B do not broadcast to the input shape");
  setOutput(0, y);
  setOutput(1, mean);
  setOutput(2, invStd);
  return success();
}

LogicalResult Importer::importBatchNorm() {
  for (unsigned i = 0; i < 5; ++i)
    if (!hasInput(i))
      return fail("expects X, scale, B, mean and var");
  if (attrInt("training_mode", 0))
    return fail("training mode is not supported");
  if (curNode->output_size() > 1)
    return fail("training outputs (running mean/var) are not supported");
  RankedTensorType type = inType(0);
  Type elt = type.getElementType();
  if (!isa<FloatType>(elt) || type.getRank() < 2)
    return fail("X must be a float tensor of rank >= 2");
  int64_t c = type.getDimSize(1);
  // spatial=0 (opsets 7 and 8): one parameter per activation, [C,D1,...],
  // broadcast over the batch dimension only. Otherwise one per channel,
  // [C], broadcast over the batch and spatial dimensions.
  bool perActivation = opset < 9 && attrInt("spatial", 1) == 0;
  ArrayRef<int64_t> want =
      perActivation ? type.getShape().drop_front() : ArrayRef<int64_t>(c);
  SmallVector<int64_t> paramShape(want);
  if (!perActivation)
    paramShape.append(type.getRank() - 2, 1);
  SmallVector<Value> params;
  for (unsigned i = 1; i < 5; ++i) {
    if (inShape(i) != want || inElt(i) != elt)
      return fail("parameter " + Twine(i) + " must be a " + shapeStr(want) +
                  " tensor of the input's element type" +
                  (perActivation ? " (spatial=0)" : ""));
    params.push_back(reshape(inValue(i), paramShape));
  }
  double eps = attrFloat("epsilon", 1e-5f);
  FailureOr<Value> r = elementwise(
      {inValue(0), params[0], params[1], params[2], params[3]}, elt,
      [&](OpBuilder &b, Location loc, ArrayRef<Value> v) {
        Value e = arith::ConstantOp::create(b, loc, b.getFloatAttr(elt, eps));
        Value inv = math::RsqrtOp::create(
            b, loc, arith::AddFOp::create(b, loc, v[4], e));
        Value n = arith::MulFOp::create(
            b, loc, arith::SubFOp::create(b, loc, v[0], v[3]), inv);
        return Value(arith::AddFOp::create(
            b, loc, arith::MulFOp::create(b, loc, n, v[1]), v[2]));
      });
  if (failed(r))
    return failure();
  setOutput(0, *r);
  return success();
}

FailureOr<std::optional<SmallVector<int64_t>>>
Importer::axesOperand(int inputSince) {
  if (opset >= inputSince) {
    if (!hasInput(1))
      return std::optional<SmallVector<int64_t>>();
    FailureOr<SmallVector<int64_t>> axes = knownInts(1, "axes");
    if (failed(axes))
      return failure();
    return std::optional<SmallVector<int64_t>>(*axes);
  }
  return attrInts("axes");
}

LogicalResult Importer::importReduce(StringRef op) {
  if (!hasInput(0))
    return fail("expects an input");
  RankedTensorType type = inType(0);
  int64_t rank = type.getRank();
  // The other reductions take axes as an input from opset 18, which is
  // after ONNX 1.12's last opset (17): kept for a newer ONNX library.
  FailureOr<std::optional<SmallVector<int64_t>>> axesOr =
      axesOperand(op == "ReduceSum" ? 13 : 18);
  if (failed(axesOr))
    return failure();
  bool keepDims = attrInt("keepdims", 1) != 0;
  SmallVector<int64_t> axes;
  if (!*axesOr || (*axesOr)->empty()) {
    if (attrInt("noop_with_empty_axes", 0)) {
      setOutput(0, inValue(0));
      return success();
    }
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  } else {
    for (int64_t a : **axesOr) {
      FailureOr<int64_t> n = normAxis(a, rank);
      if (failed(n))
        return failure();
      axes.push_back(*n);
    }
  }
  llvm::sort(axes);
  axes.erase(llvm::unique(axes), axes.end());
  ReduceKind kind = llvm::StringSwitch<ReduceKind>(op)
                        .Case("ReduceMax", ReduceKind::Max)
                        .Case("ReduceMin", ReduceKind::Min)
                        .Case("ReduceProd", ReduceKind::Prod)
                        .Default(ReduceKind::Sum);
  Value r = reduce(inValue(0), axes, kind, keepDims, in(0).isUnsigned);
  if (op == "ReduceMean") {
    int64_t count = 1;
    for (int64_t a : axes)
      count *= type.getDimSize(a);
    if (!isa<FloatType>(type.getElementType()))
      return fail("integer ReduceMean is not supported");
    r = scale(r, 1.0 / count);
  }
  setOutput(0, r);
  return success();
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

LogicalResult Importer::importReshapeLike(StringRef op) {
  if (!hasInput(0))
    return fail("expects an input");
  RankedTensorType type = inType(0);
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rank = type.getRank();
  SmallVector<int64_t> newShape;
  if (op == "Reshape") {
    FailureOr<SmallVector<int64_t>> target = knownInts(1, "shape operand");
    if (failed(target))
      return failure();
    bool allowZero = attrInt("allowzero", 0) != 0;
    int64_t inferred = -1, known = 1;
    for (auto [i, d] : llvm::enumerate(*target)) {
      if (d == 0 && !allowZero) {
        if (static_cast<int64_t>(i) >= rank)
          return fail("shape operand copies dimension " + Twine(i) +
                      " of a rank-" + Twine(rank) + " input");
        d = shape[i];
      }
      if (d == -1) {
        if (inferred >= 0)
          return fail("shape operand has more than one -1");
        inferred = i;
        newShape.push_back(1);
        continue;
      }
      if (d < 0)
        return fail("invalid dimension " + Twine(d) + " in shape operand");
      newShape.push_back(d);
      known *= d;
    }
    int64_t total = numElements(shape);
    if (inferred >= 0) {
      if (known == 0 || total % known != 0)
        return fail("cannot reshape " + shapeStr(shape) + " to " +
                    shapeStr(*target));
      newShape[inferred] = total / known;
    }
    if (numElements(newShape) != total)
      return fail("cannot reshape " + shapeStr(shape) + " to " +
                  shapeStr(newShape));
  } else if (op == "Flatten") {
    int64_t axis = attrInt("axis", 1);
    if (axis < -rank || axis > rank)
      return fail("axis " + Twine(axis) + " out of range for rank " +
                  Twine(rank));
    if (axis < 0)
      axis += rank;
    newShape = {numElements(shape.take_front(axis)),
                numElements(shape.drop_front(axis))};
  } else if (op == "Squeeze") {
    FailureOr<std::optional<SmallVector<int64_t>>> axes = axesOperand(13);
    if (failed(axes))
      return failure();
    SmallVector<int64_t> drop;
    if (*axes) {
      for (int64_t a : **axes) {
        FailureOr<int64_t> n = normAxis(a, rank);
        if (failed(n))
          return failure();
        if (shape[*n] != 1)
          return fail("cannot squeeze dimension " + Twine(*n) + " of size " +
                      Twine(shape[*n]));
        drop.push_back(*n);
      }
    }
    for (int64_t d = 0; d < rank; ++d)
      if (*axes ? !llvm::is_contained(drop, d) : shape[d] != 1)
        newShape.push_back(shape[d]);
  } else { // Unsqueeze
    FailureOr<std::optional<SmallVector<int64_t>>> axes = axesOperand(13);
    if (failed(axes))
      return failure();
    if (!*axes)
      return fail("missing axes");
    int64_t outRank = rank + (*axes)->size();
    SmallVector<int64_t> ins;
    for (int64_t a : **axes) {
      FailureOr<int64_t> n = normAxis(a, outRank);
      if (failed(n))
        return failure();
      if (llvm::is_contained(ins, *n))
        return fail("repeated axis " + Twine(*n));
      ins.push_back(*n);
    }
    unsigned src = 0;
    for (int64_t d = 0; d < outRank; ++d)
      newShape.push_back(llvm::is_contained(ins, d) ? 1 : shape[src++]);
  }
  if (isKnown(0)) {
    setKnown(0,
             in(0).constant.reshape(unplaced(newShape, type.getElementType())));
    return success();
  }
  setOutput(0, reshape(inValue(0), newShape));
  return success();
}

LogicalResult Importer::importTranspose() {
  if (!hasInput(0))
    return fail("expects an input");
  RankedTensorType type = inType(0);
  int64_t rank = type.getRank();
  SmallVector<int64_t> perm;
  if (auto p = attrInts("perm")) {
    perm = *p;
  } else {
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  }
  SmallVector<int64_t> sorted(perm);
  llvm::sort(sorted);
  for (int64_t d = 0; d < rank; ++d)
    if (static_cast<int64_t>(sorted.size()) != rank || sorted[d] != d)
      return fail("invalid permutation " + shapeStr(perm));
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  if (forwardSplat(0, shape))
    return success();
  if (canFold(numElements(shape))) {
    SmallVector<Attribute> src(in(0).constant.getValues<Attribute>());
    SmallVector<int64_t> inStrides = stridesOf(type.getShape());
    SmallVector<int64_t> outStrides = stridesOf(shape);
    SmallVector<Attribute> out(src.size());
    for (int64_t lin = 0; lin < static_cast<int64_t>(out.size()); ++lin) {
      int64_t s = 0;
      for (int64_t d = 0; d < rank; ++d)
        s += ((lin / outStrides[d]) % shape[d]) * inStrides[perm[d]];
      out[lin] = src[s];
    }
    setKnown(
        0, DenseElementsAttr::get(unplaced(shape, type.getElementType()), out));
    return success();
  }
  setOutput(0, transpose(inValue(0), perm));
  return success();
}

LogicalResult Importer::importSplit() {
  if (!hasInput(0))
    return fail("expects an input");
  RankedTensorType type = inType(0);
  FailureOr<int64_t> axis = normAxis(attrInt("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  int64_t dimSize = type.getDimSize(*axis);
  int64_t numOut = curNode->output_size();
  SmallVector<int64_t> sizes;
  if (opset >= 13 && hasInput(1)) {
    FailureOr<SmallVector<int64_t>> s = knownInts(1, "split");
    if (failed(s))
      return failure();
    sizes = *s;
  } else if (auto s = attrInts("split")) {
    sizes = *s;
  } else {
    int64_t parts = attrInt("num_outputs", numOut);
    int64_t chunk = (dimSize + parts - 1) / std::max<int64_t>(parts, 1);
    for (int64_t i = 0, left = dimSize; i < parts; ++i, left -= chunk)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, left)));
  }
  if (static_cast<int64_t>(sizes.size()) != numOut ||
      std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != dimSize)
    return fail("split sizes " + shapeStr(sizes) + " do not divide dimension " +
                Twine(*axis) + " of size " + Twine(dimSize) + " into " +
                Twine(numOut) + " outputs");
  Value x = isKnown(0) && (numElements(type.getShape()) <= kMaxFoldElements ||
                           in(0).constant.isSplat())
                ? Value()
                : inValue(0);
  int64_t offset = 0;
  for (int64_t i = 0; i < numOut; ++i) {
    SmallVector<int64_t> offsets(type.getRank(), 0), shape(type.getShape()),
        strides(type.getRank(), 1);
    offsets[*axis] = offset;
    shape[*axis] = sizes[i];
    if (forwardSplat(0, shape, i)) {
      // A part of a splat is that splat.
    } else if (!x) {
      SmallVector<Attribute> src(in(0).constant.getValues<Attribute>());
      SmallVector<int64_t> inStrides = stridesOf(type.getShape());
      SmallVector<int64_t> outStrides = stridesOf(shape);
      SmallVector<Attribute> out(numElements(shape));
      for (int64_t lin = 0; lin < static_cast<int64_t>(out.size()); ++lin) {
        int64_t s = 0;
        for (int64_t d = 0; d < type.getRank(); ++d)
          s += ((lin / outStrides[d]) % shape[d] + offsets[d]) * inStrides[d];
        out[lin] = src[s];
      }
      setKnown(i, DenseElementsAttr::get(unplaced(shape, type.getElementType()),
                                         out));
    } else {
      setOutput(i, extractSlice(x, offsets, shape, strides));
    }
    offset += sizes[i];
  }
  return success();
}

LogicalResult Importer::importSlice() {
  if (!hasInput(0))
    return fail("expects an input");
  RankedTensorType type = inType(0);
  int64_t rank = type.getRank();
  SmallVector<int64_t> starts, ends, axes, steps;
  if (opset >= 10) {
    FailureOr<SmallVector<int64_t>> s = knownInts(1, "starts");
    if (failed(s))
      return failure();
    FailureOr<SmallVector<int64_t>> e = knownInts(2, "ends");
    if (failed(e))
      return failure();
    starts = *s;
    ends = *e;
    if (hasInput(3)) {
      FailureOr<SmallVector<int64_t>> a = knownInts(3, "axes");
      if (failed(a))
        return failure();
      axes = *a;
    }
    if (hasInput(4)) {
      FailureOr<SmallVector<int64_t>> st = knownInts(4, "steps");
      if (failed(st))
        return failure();
      steps = *st;
    }
  } else {
    starts = attrInts("starts").value_or(SmallVector<int64_t>());
    ends = attrInts("ends").value_or(SmallVector<int64_t>());
    axes = attrInts("axes").value_or(SmallVector<int64_t>());
  }
  if (starts.size() != ends.size())
    return fail("starts and ends differ in length");
  if (axes.empty())
    for (int64_t i = 0; i < static_cast<int64_t>(starts.size()); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size())
    return fail("starts, ends, axes and steps differ in length");
  SmallVector<int64_t> offsets(rank, 0), sizes(type.getShape()),
      strides(rank, 1);
  for (size_t i = 0; i < starts.size(); ++i) {
    FailureOr<int64_t> a = normAxis(axes[i], rank);
    if (failed(a))
      return failure();
    int64_t dim = type.getDimSize(*a), step = steps[i];
    if (step == 0)
      return fail("step 0");
    int64_t start = starts[i], end = ends[i];
    if (start < 0)
      start += dim;
    if (end < 0)
      end += dim;
    // Counts in uint64: -step overflows for INT64_MIN, and end - start +
    // step - 1 for huge steps.
    int64_t count;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      count = end > start ? 1 + static_cast<int64_t>(uint64_t(end - start - 1) /
                                                     uint64_t(step))
                          : 0;
    } else if (dim == 0) {
      start = end = count = 0;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      count = start > end
                  ? 1 + static_cast<int64_t>(uint64_t(start - end - 1) /
                                             (uint64_t(0) - uint64_t(step)))
                  : 0;
    }
    // One element read: the step does not matter (and an extreme one
    // would only overflow index arithmetic downstream).
    if (count <= 1)
      step = 1;
    offsets[*a] = start;
    sizes[*a] = count;
    strides[*a] = step;
  }
  bool negative = llvm::any_of(strides, [](int64_t s) { return s < 0; });
  if (forwardSplat(0, sizes))
    return success();
  if (canFold(numElements(sizes))) {
    SmallVector<Attribute> src(in(0).constant.getValues<Attribute>());
    SmallVector<int64_t> inStrides = stridesOf(type.getShape());
    SmallVector<int64_t> outStrides = stridesOf(sizes);
    SmallVector<Attribute> out(numElements(sizes));
    for (int64_t lin = 0; lin < static_cast<int64_t>(out.size()); ++lin) {
      int64_t s = 0;
      for (int64_t d = 0; d < rank; ++d)
        s += (offsets[d] + ((lin / outStrides[d]) % sizes[d]) * strides[d]) *
             inStrides[d];
      out[lin] = src[s];
    }
    setKnown(
        0, DenseElementsAttr::get(unplaced(sizes, type.getElementType()), out));
    return success();
  }
  if (numElements(sizes) == 0) {
    // An empty slice: no element is read (extract_slice would reject an
    // offset at the end of the dimension).
    setOutput(0, empty(sizes, type.getElementType()));
    return success();
  }
  if (negative) {
    // out[i] = x[offset + i * stride] per dim, strides possibly negative.
    SmallVector<AffineExpr> xe;
    for (int64_t d = 0; d < rank; ++d)
      xe.push_back(builder.getAffineDimExpr(d) * strides[d] + offsets[d]);
    SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, xe, ctx),
                                   builder.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    Value init = empty(sizes, type.getElementType());
    setOutput(0, linalg::GenericOp::create(
                     builder, curLoc, TypeRange{init.getType()},
                     ValueRange{inValue(0)}, ValueRange{init}, maps, iters,
                     [](OpBuilder &b, Location loc, ValueRange args) {
                       linalg::YieldOp::create(b, loc, args[0]);
                     })
                     .getResult(0));
    return success();
  }
  setOutput(0, extractSlice(inValue(0), offsets, sizes, strides));
  return success();
}

LogicalResult Importer::importConcat() {
  if (numInputs() == 0)
    return fail("expects at least one input");
  RankedTensorType first = inType(0);
  FailureOr<int64_t> axis = normAxis(attrInt("axis", 0), first.getRank());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(first.getShape());
  shape[*axis] = 0;
  for (unsigned i = 0; i < numInputs(); ++i) {
    if (!hasInput(i))
      return fail("missing input " + Twine(i));
    RankedTensorType t = inType(i);
    if (t.getRank() != first.getRank() ||
        t.getElementType() != first.getElementType())
      return fail("inputs differ in rank or element type");
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (d != *axis && t.getDimSize(d) != first.getDimSize(d))
        return fail("input shapes " + shapeStr(first.getShape()) + " and " +
                    shapeStr(t.getShape()) + " differ outside axis " +
                    Twine(*axis));
    shape[*axis] += t.getDimSize(*axis);
  }
  if (canFold(numElements(shape))) {
    SmallVector<int64_t> outStrides = stridesOf(shape);
    SmallVector<Attribute> out(numElements(shape));
    int64_t offset = 0;
    for (unsigned i = 0; i < numInputs(); ++i) {
      RankedTensorType t = inType(i);
      SmallVector<Attribute> src(in(i).constant.getValues<Attribute>());
      SmallVector<int64_t> inStrides = stridesOf(t.getShape());
      for (int64_t lin = 0; lin < static_cast<int64_t>(src.size()); ++lin) {
        int64_t dst = 0;
        for (int64_t d = 0; d < t.getRank(); ++d) {
          int64_t idx = (lin / inStrides[d]) % t.getDimSize(d);
          dst += (d == *axis ? idx + offset : idx) * outStrides[d];
        }
        out[dst] = src[lin];
      }
      offset += t.getDimSize(*axis);
    }
    setKnown(0, DenseElementsAttr::get(unplaced(shape, first.getElementType()),
                                       out));
    return success();
  }
  // tensor.insert_slice into a placed tensor.empty (tensor.concat loses the
  // placement under canonicalization, docs/design/placement.md).
  Value result = empty(shape, first.getElementType());
  int64_t offset = 0;
  for (unsigned i = 0; i < numInputs(); ++i) {
    RankedTensorType t = inType(i);
    if (t.getDimSize(*axis) == 0)
      continue;
    SmallVector<int64_t> offsets(t.getRank(), 0), strides(t.getRank(), 1);
    offsets[*axis] = offset;
    result = tensor::InsertSliceOp::create(
        builder, curLoc, inValue(i), result, ValueRange{}, ValueRange{},
        ValueRange{}, builder.getDenseI64ArrayAttr(offsets),
        builder.getDenseI64ArrayAttr(t.getShape()),
        builder.getDenseI64ArrayAttr(strides));
    offset += t.getDimSize(*axis);
  }
  setOutput(0, result);
  return success();
}

LogicalResult Importer::importGather() {
  if (!hasInput(0) || !hasInput(1))
    return fail("expects data and indices");
  RankedTensorType data = inType(0), idxType = inType(1);
  if (!isa<IntegerType>(idxType.getElementType()) ||
      idxType.getElementType().isInteger(1))
    return fail("indices must be an integer tensor");
  int64_t rank = data.getRank();
  if (rank == 0)
    return fail("data must have rank >= 1");
  FailureOr<int64_t> axis = normAxis(attrInt("axis", 0), rank);
  if (failed(axis))
    return failure();
  int64_t dim = data.getDimSize(*axis);
  SmallVector<int64_t> shape(data.getShape().take_front(*axis));
  llvm::append_range(shape, idxType.getShape());
  llvm::append_range(shape, data.getShape().drop_front(*axis + 1));
  bool idxUnsigned = in(1).isUnsigned;
  // Known indices are range-checked here (a huge known index tensor, e.g.
  // a splat, only through its first element).
  if (isKnown(1)) {
    SmallVector<int64_t> known =
        numElements(idxType.getShape()) <= kMaxFoldElements
            ? knownIntsOf(1)
            : SmallVector<int64_t>();
    if (known.empty() && in(1).constant.isSplat())
      known = intsOf(
          DenseElementsAttr::get(unplaced({1}, idxType.getElementType()),
                                 in(1).constant.getSplatValue<Attribute>()),
          idxUnsigned);
    for (int64_t i : known)
      if (i < -dim || i >= dim)
        return fail("index " + Twine(i) + " out of range [" + Twine(-dim) +
                    ", " + Twine(dim) + ")");
  }
  if (forwardSplat(0, shape))
    return success();
  if (canFold(numElements(shape))) {
    SmallVector<Attribute> src(in(0).constant.getValues<Attribute>());
    SmallVector<int64_t> idx = knownIntsOf(1);
    SmallVector<int64_t> inStrides = stridesOf(data.getShape());
    SmallVector<int64_t> outStrides = stridesOf(shape);
    int64_t ir = idxType.getRank();
    SmallVector<int64_t> idxStrides = stridesOf(idxType.getShape());
    SmallVector<Attribute> out(numElements(shape));
    for (int64_t lin = 0; lin < static_cast<int64_t>(out.size()); ++lin) {
      SmallVector<int64_t> o(shape.size());
      for (size_t d = 0; d < shape.size(); ++d)
        o[d] = (lin / outStrides[d]) % shape[d];
      int64_t ilin = 0;
      for (int64_t d = 0; d < ir; ++d)
        ilin += o[*axis + d] * idxStrides[d];
      int64_t k = idx[ilin] < 0 ? idx[ilin] + dim : idx[ilin];
      int64_t s = 0;
      for (int64_t d = 0; d < rank; ++d) {
        int64_t c = d < *axis ? o[d] : d == *axis ? k : o[d - 1 + ir];
        s += c * inStrides[d];
      }
      out[lin] = src[s];
    }
    setKnown(
        0, DenseElementsAttr::get(unplaced(shape, data.getElementType()), out));
    return success();
  }
  // linalg.generic over the result; the body reads the index and extracts
  // from `data` (an embedding lookup for axis 0).
  Value dataV = inValue(0), idxV = inValue(1);
  int64_t outRank = shape.size(), ir = idxType.getRank();
  SmallVector<AffineExpr> idxExprs;
  for (int64_t d = 0; d < ir; ++d)
    idxExprs.push_back(builder.getAffineDimExpr(*axis + d));
  SmallVector<AffineMap> maps = {AffineMap::get(outRank, 0, idxExprs, ctx),
                                 builder.getMultiDimIdentityMap(outRank)};
  SmallVector<utils::IteratorType> iters(outRank,
                                         utils::IteratorType::parallel);
  Value init = empty(shape, data.getElementType());
  Value r =
      linalg::GenericOp::create(
          builder, curLoc, TypeRange{init.getType()}, ValueRange{idxV},
          ValueRange{init}, maps, iters,
          [&](OpBuilder &b, Location loc, ValueRange args) {
            Value i = idxUnsigned ? Value(arith::IndexCastUIOp::create(
                                        b, loc, b.getIndexType(), args[0]))
                                  : Value(arith::IndexCastOp::create(
                                        b, loc, b.getIndexType(), args[0]));
            Value zero = arith::ConstantIndexOp::create(b, loc, 0);
            Value size = arith::ConstantIndexOp::create(b, loc, dim);
            Value neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                              i, zero);
            i = arith::SelectOp::create(
                b, loc, neg, arith::AddIOp::create(b, loc, i, size), i);
            SmallVector<Value> coords;
            for (int64_t d = 0; d < rank; ++d) {
              if (d == *axis)
                coords.push_back(i);
              else
                coords.push_back(linalg::IndexOp::create(
                    b, loc, d < *axis ? d : d - 1 + ir));
            }
            Value v = tensor::ExtractOp::create(b, loc, dataV, coords);
            linalg::YieldOp::create(b, loc, v);
          })
          .getResult(0);
  setOutput(0, r);
  return success();
}

LogicalResult Importer::importExpand() {
  if (!hasInput(0))
    return fail("expects an input");
  FailureOr<SmallVector<int64_t>> target = knownInts(1, "shape operand");
  if (failed(target))
    return failure();
  for (int64_t d : *target)
    if (d < 0)
      return fail("invalid dimension " + Twine(d) + " in shape operand");
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(inShape(0), *target);
  if (!shape)
    return fail("cannot expand " + shapeStr(inShape(0)) + " to " +
                shapeStr(*target));
  Type elt = inElt(0);
  if (isKnown(0) && numElements(*shape) <= kMaxFoldElements) {
    SmallVector<Attribute> src(in(0).constant.getValues<Attribute>());
    SmallVector<int64_t> idx = broadcastIndices(*shape, inShape(0));
    SmallVector<Attribute> out;
    for (int64_t i : idx)
      out.push_back(src[i]);
    setKnown(0, DenseElementsAttr::get(unplaced(*shape, elt), out));
    return success();
  }
  if (isKnown(0) && in(0).constant.isSplat()) {
    setKnown(0,
             DenseElementsAttr::get(unplaced(*shape, elt),
                                    in(0).constant.getSplatValue<Attribute>()));
    return success();
  }
  setOutput(0, broadcastTo(inValue(0), *shape));
  return success();
}

LogicalResult Importer::importConstant() {
  if (const onnx::AttributeProto *a = attr("value")) {
    FailureOr<DenseElementsAttr> c =
        tensorContents(a->t(), "attribute 'value'");
    if (failed(c))
      return failure();
    setKnown(0, *c, isUnsignedType(a->t().data_type()));
    return success();
  }
  Type f32 = builder.getF32Type(), i64 = builder.getI64Type();
  if (const onnx::AttributeProto *a = attr("value_float")) {
    setKnown(0, floatsAttr({}, f32, {a->f()}));
    return success();
  }
  if (const onnx::AttributeProto *a = attr("value_floats")) {
    SmallVector<double> v(a->floats().begin(), a->floats().end());
    setKnown(0, floatsAttr({static_cast<int64_t>(v.size())}, f32, v));
    return success();
  }
  if (const onnx::AttributeProto *a = attr("value_int")) {
    setKnown(0, intsAttr({}, i64, {a->i()}));
    return success();
  }
  if (const onnx::AttributeProto *a = attr("value_ints")) {
    SmallVector<int64_t> v(a->ints().begin(), a->ints().end());
    setKnown(0, intsAttr({static_cast<int64_t>(v.size())}, i64, v));
    return success();
  }
  return fail("only tensor, float(s) and int(s) values are supported");
}

LogicalResult Importer::importConstantOfShape() {
  FailureOr<SmallVector<int64_t>> shape = knownInts(0, "shape operand");
  if (failed(shape))
    return failure();
  for (int64_t d : *shape)
    if (d < 0)
      return fail("negative dimension in shape operand");
  Attribute value = builder.getF32FloatAttr(0);
  Type elt = builder.getF32Type();
  if (const onnx::AttributeProto *a = attr("value")) {
    FailureOr<DenseElementsAttr> c =
        tensorContents(a->t(), "attribute 'value'");
    if (failed(c))
      return failure();
    if (c->getNumElements() != 1)
      return fail("attribute 'value' must hold one element");
    elt = c->getElementType();
    value = *c->getValues<Attribute>().begin();
    outUnsigned = isUnsignedType(a->t().data_type());
  }
  setKnown(0, DenseElementsAttr::get(unplaced(*shape, elt), value));
  return success();
}

LogicalResult Importer::importShape() {
  if (!hasInput(0))
    return fail("expects an input");
  ArrayRef<int64_t> shape = inShape(0);
  int64_t rank = shape.size();
  int64_t start = attrInt("start", 0), end = attrInt("end", rank);
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  SmallVector<int64_t> dims(shape.begin() + start, shape.begin() + end);
  setKnown(0, intsAttr({static_cast<int64_t>(dims.size())},
                       builder.getI64Type(), dims));
  return success();
}

LogicalResult Importer::importRange() {
  static const char *names[] = {"start", "limit", "delta"};
  for (unsigned i = 0; i < 3; ++i) {
    if (!hasInput(i))
      return fail("missing " + Twine(names[i]));
    if (!isKnown(i))
      return fail("unresolvable dynamic shape: " + Twine(names[i]) + " ('" +
                  curNode->input(i) + "') is not known at import time");
    if (numElements(inShape(i)) != 1)
      return fail("start, limit and delta must be scalars");
  }
  Type elt = inElt(0);
  if (inElt(1) != elt || inElt(2) != elt)
    return fail("start, limit and delta differ in element type");
  // The element count max(ceil((limit - start) / delta), 0), checked
  // before anything is allocated: integers exactly (in 128 bits), floats
  // in double.
  bool isFloat = isa<FloatType>(elt);
  int64_t si = 0, di = 0;
  double sf = 0, df = 0;
  int64_t n;
  if (isFloat) {
    sf = knownFloatsOf(0)[0];
    double lf = knownFloatsOf(1)[0];
    df = knownFloatsOf(2)[0];
    if (df == 0)
      return fail("delta is 0");
    double count = std::ceil((lf - sf) / df);
    if (std::isnan(count))
      return fail("range bounds are not finite");
    if (count > static_cast<double>(kMaxRangeElements))
      return fail("range has more than " + Twine(kMaxRangeElements) +
                  " elements");
    n = count > 0 ? static_cast<int64_t>(count) : 0;
  } else {
    si = knownIntsOf(0)[0];
    int64_t li = knownIntsOf(1)[0];
    di = knownIntsOf(2)[0];
    if (di == 0)
      return fail("delta is 0");
    __int128 diff = static_cast<__int128>(li) - si;
    __int128 count = diff / di;
    if (diff % di != 0 && ((diff > 0) == (di > 0)))
      ++count;
    if (count > kMaxRangeElements)
      return fail("range has more than " + Twine(kMaxRangeElements) +
                  " elements");
    n = count > 0 ? static_cast<int64_t>(count) : 0;
  }
  if (n <= kMaxFoldElements) {
    if (isFloat) {
      SmallVector<double> vals;
      for (int64_t i = 0; i < n; ++i)
        vals.push_back(sf + i * df);
      setKnown(0, floatsAttr({n}, elt, vals));
    } else {
      SmallVector<int64_t> vals;
      for (int64_t i = 0; i < n; ++i)
        vals.push_back(si + i * di);
      setKnown(0, intsAttr({n}, elt, vals));
    }
    return success();
  }
  // Too large to evaluate: start + i * delta at run time (floats in f64,
  // rounded once to the element type).
  Value init = empty({n}, elt);
  SmallVector<AffineMap> maps = {builder.getMultiDimIdentityMap(1)};
  SmallVector<utils::IteratorType> iters = {utils::IteratorType::parallel};
  Value r =
      linalg::GenericOp::create(
          builder, curLoc, TypeRange{init.getType()}, ValueRange{},
          ValueRange{init}, maps, iters,
          [&](OpBuilder &b, Location loc, ValueRange) {
            Value i = arith::IndexCastOp::create(
                b, loc, b.getI64Type(), linalg::IndexOp::create(b, loc, 0));
            Value v;
            if (isFloat) {
              Type f64 = b.getF64Type();
              Value fi = arith::SIToFPOp::create(b, loc, f64, i);
              v = arith::AddFOp::create(
                  b, loc, scalarConst(b, loc, f64, sf),
                  arith::MulFOp::create(b, loc, fi,
                                        scalarConst(b, loc, f64, df)));
              if (!elt.isF64())
                v = arith::TruncFOp::create(b, loc, elt, v);
            } else {
              if (elt.getIntOrFloatBitWidth() < 64)
                i = arith::TruncIOp::create(b, loc, elt, i);
              v = arith::AddIOp::create(
                  b, loc,
                  arith::ConstantOp::create(b, loc, b.getIntegerAttr(elt, si)),
                  arith::MulIOp::create(
                      b, loc, i,
                      arith::ConstantOp::create(b, loc,
                                                b.getIntegerAttr(elt, di))));
            }
            linalg::YieldOp::create(b, loc, v);
          })
          .getResult(0);
  setOutput(0, r);
  return success();
}

LogicalResult Importer::importCast(bool like) {
  if (!hasInput(0) || (like && !hasInput(1)))
    return fail(like ? "expects input and target_type" : "expects an input");
  // CastLike takes the element type of its second input.
  FailureOr<Type> to = like ? FailureOr<Type>(inElt(1))
                            : elementType(attrInt("to", 0), "attribute 'to'");
  if (failed(to))
    return failure();
  Type from = inElt(0);
  // Unsigned sources widen with zero extension and convert with uitofp;
  // unsigned targets take fptoui.
  bool fromUnsigned = in(0).isUnsigned;
  outUnsigned = like ? in(1).isUnsigned : isUnsignedType(attrInt("to", 0));
  bool toUnsigned = outUnsigned;
  ArrayRef<int64_t> shape = inShape(0);
  if (canFold(numElements(shape))) {
    if (isa<FloatType>(*to)) {
      setKnown(0, floatsAttr(shape, *to, knownFloatsOf(0)));
    } else if (isa<FloatType>(from)) {
      SmallVector<int64_t> v;
      for (double f : knownFloatsOf(0))
        v.push_back(to->isInteger(1) ? f != 0
                    : toUnsigned && f >= 0
                        ? static_cast<int64_t>(static_cast<uint64_t>(f))
                        : static_cast<int64_t>(f));
      setKnown(0, intsAttr(shape, *to, v));
    } else {
      setKnown(0, intsAttr(shape, *to, knownIntsOf(0)));
    }
    return success();
  }
  if (from == *to) {
    setOutput(0, inValue(0));
    return success();
  }
  FailureOr<Value> r = elementwise(
      {inValue(0)}, *to, [&](OpBuilder &b, Location loc, ArrayRef<Value> a) {
        Value x = a[0];
        Type t = *to;
        auto ft = dyn_cast<FloatType>(from), tt = dyn_cast<FloatType>(t);
        if (ft && tt)
          return castFloat(b, loc, x, tt);
        if (t.isInteger(1)) {
          if (ft)
            return Value(arith::CmpFOp::create(
                b, loc, arith::CmpFPredicate::UNE, x,
                arith::ConstantOp::create(b, loc, b.getFloatAttr(from, 0))));
          return Value(arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::ne, x,
              arith::ConstantOp::create(b, loc, b.getIntegerAttr(from, 0))));
        }
        if (tt)
          return from.isInteger(1) || fromUnsigned
                     ? Value(arith::UIToFPOp::create(b, loc, t, x))
                     : Value(arith::SIToFPOp::create(b, loc, t, x));
        if (ft)
          return toUnsigned ? Value(arith::FPToUIOp::create(b, loc, t, x))
                            : Value(arith::FPToSIOp::create(b, loc, t, x));
        unsigned fw = from.getIntOrFloatBitWidth(),
                 tw = t.getIntOrFloatBitWidth();
        if (fw < tw)
          return from.isInteger(1) || fromUnsigned
                     ? Value(arith::ExtUIOp::create(b, loc, t, x))
                     : Value(arith::ExtSIOp::create(b, loc, t, x));
        return Value(arith::TruncIOp::create(b, loc, t, x));
      });
  if (failed(r))
    return failure();
  setOutput(0, *r);
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution and pooling (linalg.generic over N-d windows)
//===----------------------------------------------------------------------===//

namespace {
/// Output geometry of a convolution or pooling window over spatial dims.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, padLow, padHigh, out;
};
} // namespace

/// Computes pads and output sizes per ONNX (auto_pad, pads, ceil_mode).
static std::string computeWindow(Window &w, ArrayRef<int64_t> spatial,
                                 StringRef autoPad,
                                 std::optional<SmallVector<int64_t>> pads,
                                 bool ceilMode) {
  size_t n = spatial.size();
  w.padLow.assign(n, 0);
  w.padHigh.assign(n, 0);
  w.out.resize(n);
  if (pads) {
    if (pads->size() != 2 * n)
      return "pads must have " + std::to_string(2 * n) + " values";
    for (size_t i = 0; i < n; ++i) {
      w.padLow[i] = (*pads)[i];
      w.padHigh[i] = (*pads)[i + n];
    }
  }
  for (size_t i = 0; i < n; ++i) {
    int64_t eff = (w.kernel[i] - 1) * w.dilations[i] + 1;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t out = (spatial[i] + w.strides[i] - 1) / w.strides[i];
      int64_t total =
          std::max<int64_t>(0, (out - 1) * w.strides[i] + eff - spatial[i]);
      w.padLow[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.padHigh[i] = total - w.padLow[i];
    } else if (autoPad == "VALID") {
      w.padLow[i] = w.padHigh[i] = 0;
    } else if (autoPad != "NOTSET" && !autoPad.empty()) {
      return "unsupported auto_pad '" + autoPad.str() + "'";
    }
    int64_t span = spatial[i] + w.padLow[i] + w.padHigh[i] - eff;
    if (span < 0)
      return "window larger than the padded input";
    w.out[i] = (ceilMode ? (span + w.strides[i] - 1) / w.strides[i]
                         : span / w.strides[i]) +
               1;
    // With ceil_mode, the last window must start inside the input or the
    // low padding.
    if (ceilMode && (w.out[i] - 1) * w.strides[i] >= spatial[i] + w.padLow[i])
      --w.out[i];
  }
  return {};
}

LogicalResult Importer::importConv() {
  if (!hasInput(0) || !hasInput(1))
    return fail("expects X and W");
  RankedTensorType xt = inType(0), wt = inType(1);
  Type elt = xt.getElementType();
  if (!isa<FloatType>(elt) || wt.getElementType() != elt)
    return fail("X and W must be float tensors of one element type");
  int64_t rank = xt.getRank();
  if (rank < 3 || wt.getRank() != rank)
    return fail("X and W must have the same rank >= 3");
  int64_t ns = rank - 2, group = attrInt("group", 1);
  int64_t n = xt.getDimSize(0), c = xt.getDimSize(1), f = wt.getDimSize(0);
  if (group <= 0 || c % group || f % group || wt.getDimSize(1) != c / group)
    return fail("channels " + Twine(c) + ", filters " + Twine(f) +
                " and group " + Twine(group) + " do not match W " +
                shapeStr(wt.getShape()));
  Window w;
  w.kernel.assign(wt.getShape().begin() + 2, wt.getShape().end());
  if (auto k = attrInts("kernel_shape"); k && *k != w.kernel)
    return fail("kernel_shape differs from W's shape");
  w.strides = attrInts("strides").value_or(SmallVector<int64_t>(ns, 1));
  w.dilations = attrInts("dilations").value_or(SmallVector<int64_t>(ns, 1));
  if (static_cast<int64_t>(w.strides.size()) != ns ||
      static_cast<int64_t>(w.dilations.size()) != ns)
    return fail("strides/dilations must have one value per spatial dim");
  std::string err =
      computeWindow(w, xt.getShape().drop_front(2),
                    attrString("auto_pad", "NOTSET"), attrInts("pads"), false);
  if (!err.empty())
    return fail(err);
  Value x = inValue(0);
  bool padded = llvm::any_of(w.padLow, [](int64_t p) { return p; }) ||
                llvm::any_of(w.padHigh, [](int64_t p) { return p; });
  if (padded) {
    SmallVector<int64_t> lo = {0, 0}, hi = {0, 0}, shape = {n, c};
    llvm::append_range(lo, w.padLow);
    llvm::append_range(hi, w.padHigh);
    for (int64_t i = 0; i < ns; ++i)
      shape.push_back(xt.getDimSize(i + 2) + w.padLow[i] + w.padHigh[i]);
    Value zero = scalarConst(builder, curLoc, elt, 0);
    x = pad(x, placed(shape, elt), lo, hi, zero);
  }
  // Loops: (n, [g,] f, o_1..o_s, c, k_1..k_s); the group loop exists only
  // for group > 1, with a shape-only [group, f/group] input that gives it
  // bounds (its index only appears as g * size + f otherwise).
  int64_t cg = c / group, fg = f / group;
  int64_t base = group > 1 ? 1 : 0;
  int64_t loops = 3 + base + 2 * ns;
  auto d = [&](int64_t i) { return builder.getAffineDimExpr(i); };
  AffineExpr g = group > 1 ? d(1) : builder.getAffineConstantExpr(0);
  AffineExpr fo = d(1 + base), ci = d(2 + base + ns);
  SmallVector<AffineExpr> xe = {d(0), g * cg + ci};
  for (int64_t i = 0; i < ns; ++i)
    xe.push_back(d(2 + base + i) * w.strides[i] +
                 d(3 + base + ns + i) * w.dilations[i]);
  SmallVector<AffineExpr> we = {g * fg + fo, ci};
  for (int64_t i = 0; i < ns; ++i)
    we.push_back(d(3 + base + ns + i));
  SmallVector<AffineExpr> oe = {d(0), g * fg + fo};
  for (int64_t i = 0; i < ns; ++i)
    oe.push_back(d(2 + base + i));
  SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, xe, ctx),
                                 AffineMap::get(loops, 0, we, ctx),
                                 AffineMap::get(loops, 0, oe, ctx)};
  SmallVector<utils::IteratorType> iters(2 + base + ns,
                                         utils::IteratorType::parallel);
  iters.append(1 + ns, utils::IteratorType::reduction);
  SmallVector<int64_t> outShape = {n, f};
  llvm::append_range(outShape, w.out);
  SmallVector<Value> inputs = {x, inValue(1)};
  if (group > 1) {
    maps.insert(maps.begin() + 2, AffineMap::get(loops, 0, {d(1), fo}, ctx));
    inputs.push_back(empty({group, fg}, elt));
  }
  Value init = filled(outShape, elt, 0);
  Value r =
      linalg::GenericOp::create(
          builder, curLoc, TypeRange{init.getType()}, inputs, ValueRange{init},
          maps, iters,
          [&](OpBuilder &b, Location loc, ValueRange args) {
            Value m = arith::MulFOp::create(b, loc, args[0], args[1]);
            linalg::YieldOp::create(
                b, loc, Value(arith::AddFOp::create(b, loc, args.back(), m)));
          })
          .getResult(0);
  if (hasInput(2)) {
    if (inShape(2) != ArrayRef<int64_t>{f})
      return fail("B must have shape [" + Twine(f) + "]");
    SmallVector<int64_t> bshape = {f};
    bshape.append(ns, 1);
    r = *elementwise({r, reshape(inValue(2), bshape)}, elt,
                     [](OpBuilder &b, Location loc, ArrayRef<Value> v) {
                       return Value(arith::AddFOp::create(b, loc, v[0], v[1]));
                     });
  }
  setOutput(0, r);
  return success();
}

LogicalResult Importer::importPool(StringRef op) {
  if (!hasInput(0))
    return fail("expects an input");
  RankedTensorType xt = inType(0);
  Type elt = xt.getElementType();
  // MaxPool also takes 8-bit integers (opset 12); the others only floats.
  if (!isa<FloatType>(elt) && (op != "MaxPool" || elt.isInteger(1)))
    return fail("integer operands are not supported");
  bool isUnsigned = in(0).isUnsigned;
  int64_t rank = xt.getRank();
  if (rank < 3)
    return fail("input must have rank >= 3");
  int64_t ns = rank - 2;
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
    SmallVector<int64_t> axes;
    for (int64_t i = 2; i < rank; ++i)
      axes.push_back(i);
    bool isMax = op == "GlobalMaxPool";
    Value r = reduce(inValue(0), axes,
                     isMax ? ReduceKind::Max : ReduceKind::Sum, true);
    if (!isMax)
      r = scale(r, 1.0 / numElements(xt.getShape().drop_front(2)));
    setOutput(0, r);
    return success();
  }
  bool withIndices = curNode->output_size() > 1 && !curNode->output(1).empty();
  int64_t storageOrder = attrInt("storage_order", 0);
  if (withIndices && storageOrder != 0 && storageOrder != 1)
    return fail("storage_order must be 0 or 1, got " + Twine(storageOrder));
  Window w;
  auto k = attrInts("kernel_shape");
  if (!k || static_cast<int64_t>(k->size()) != ns)
    return fail("kernel_shape must have one value per spatial dim");
  w.kernel = *k;
  w.strides = attrInts("strides").value_or(SmallVector<int64_t>(ns, 1));
  w.dilations = attrInts("dilations").value_or(SmallVector<int64_t>(ns, 1));
  if (static_cast<int64_t>(w.strides.size()) != ns ||
      static_cast<int64_t>(w.dilations.size()) != ns)
    return fail("strides/dilations must have one value per spatial dim");
  bool isMax = op == "MaxPool";
  std::string err = computeWindow(w, xt.getShape().drop_front(2),
                                  attrString("auto_pad", "NOTSET"),
                                  attrInts("pads"), attrInt("ceil_mode", 0));
  if (!err.empty())
    return fail(err);
  Value x = inValue(0);
  SmallVector<int64_t> lo = {0, 0}, hi = {0, 0};
  SmallVector<int64_t> shape(xt.getShape().take_front(2));
  bool padded = false;
  for (int64_t i = 0; i < ns; ++i) {
    int64_t eff = (w.kernel[i] - 1) * w.dilations[i] + 1;
    // ceil_mode windows may run past the high padding: pad further.
    int64_t need = (w.out[i] - 1) * w.strides[i] + eff;
    int64_t high =
        std::max(w.padHigh[i], need - xt.getDimSize(i + 2) - w.padLow[i]);
    lo.push_back(w.padLow[i]);
    hi.push_back(high);
    padded |= w.padLow[i] || high;
    shape.push_back(xt.getDimSize(i + 2) + w.padLow[i] + high);
  }
  // The identity of max: -inf, or the least value of the integer type.
  auto lowest = [&]() -> Value {
    if (auto ft = dyn_cast<FloatType>(elt))
      return arith::ConstantOp::create(
          builder, curLoc,
          builder.getFloatAttr(elt,
                               APFloat::getInf(ft.getFloatSemantics(), true)));
    unsigned width = elt.getIntOrFloatBitWidth();
    return arith::ConstantOp::create(
        builder, curLoc,
        builder.getIntegerAttr(elt, isUnsigned
                                        ? APInt::getMinValue(width)
                                        : APInt::getSignedMinValue(width)));
  };
  if (padded) {
    Value padVal = isMax ? lowest() : scalarConst(builder, curLoc, elt, 0);
    x = pad(x, placed(shape, elt), lo, hi, padVal);
  }
  // Loops: (n, c, o_1..o_s, k_1..k_s); the window tensor gives k's bounds.
  int64_t loops = 2 + 2 * ns;
  auto d = [&](int64_t i) { return builder.getAffineDimExpr(i); };
  SmallVector<AffineExpr> xe = {d(0), d(1)}, ke, oe = {d(0), d(1)};
  for (int64_t i = 0; i < ns; ++i) {
    xe.push_back(d(2 + i) * w.strides[i] + d(2 + ns + i) * w.dilations[i]);
    ke.push_back(d(2 + ns + i));
    oe.push_back(d(2 + i));
  }
  SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, xe, ctx),
                                 AffineMap::get(loops, 0, ke, ctx),
                                 AffineMap::get(loops, 0, oe, ctx)};
  SmallVector<utils::IteratorType> iters(2 + ns, utils::IteratorType::parallel);
  iters.append(ns, utils::IteratorType::reduction);
  SmallVector<int64_t> outShape(xt.getShape().take_front(2));
  llvm::append_range(outShape, w.out);
  Value window = empty(w.kernel, elt);
  Value init;
  if (isMax) {
    init = linalg::FillOp::create(builder, curLoc, ValueRange{lowest()},
                                  ValueRange{empty(outShape, elt)})
               .getResult(0);
  } else {
    init = filled(outShape, elt, 0);
  }
  bool isFloat = isa<FloatType>(elt);
  if (withIndices) {
    // Indices: the flat index of the first maximum of each window into the
    // unpadded input, (n * C + c) * prod(spatial) + the spatial position
    // in row-major (storage_order 0) or column-major (1) order, as the
    // ONNX reference. The window is scanned in row-major order and a later
    // element replaces the maximum only if it is strictly greater.
    maps.push_back(maps.back());
    Type i64 = builder.getI64Type();
    Value idxInit = filled(outShape, i64, 0);
    ArrayRef<int64_t> spatial = xt.getShape().drop_front(2);
    int64_t channels = xt.getDimSize(1);
    auto generic = linalg::GenericOp::create(
        builder, curLoc, TypeRange{init.getType(), idxInit.getType()},
        ValueRange{x, window}, ValueRange{init, idxInit}, maps, iters,
        [&](OpBuilder &b, Location loc, ValueRange args) {
          Value greater =
              isFloat
                  ? Value(arith::CmpFOp::create(
                        b, loc, arith::CmpFPredicate::OGT, args[0], args[2]))
                  : Value(arith::CmpIOp::create(b, loc,
                                                isUnsigned
                                                    ? arith::CmpIPredicate::ugt
                                                    : arith::CmpIPredicate::sgt,
                                                args[0], args[2]));
          auto cst = [&](int64_t v) -> Value {
            return arith::ConstantIndexOp::create(b, loc, v);
          };
          auto idx = [&](int64_t d) -> Value {
            return linalg::IndexOp::create(b, loc, d);
          };
          // Input coordinates of the element: o * stride + k * dilation -
          // padLow per spatial dim.
          SmallVector<Value> pos;
          for (int64_t i = 0; i < ns; ++i) {
            Value p = arith::AddIOp::create(
                b, loc,
                arith::MulIOp::create(b, loc, idx(2 + i), cst(w.strides[i])),
                arith::MulIOp::create(b, loc, idx(2 + ns + i),
                                      cst(w.dilations[i])));
            pos.push_back(arith::SubIOp::create(b, loc, p, cst(w.padLow[i])));
          }
          Value lin = cst(0);
          if (storageOrder == 0) {
            for (int64_t i = 0; i < ns; ++i)
              lin = arith::AddIOp::create(
                  b, loc, arith::MulIOp::create(b, loc, lin, cst(spatial[i])),
                  pos[i]);
          } else {
            for (int64_t i = ns - 1; i >= 0; --i)
              lin = arith::AddIOp::create(
                  b, loc, arith::MulIOp::create(b, loc, lin, cst(spatial[i])),
                  pos[i]);
          }
          Value plane = arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, idx(0), cst(channels)),
              idx(1));
          lin = arith::AddIOp::create(
              b, loc,
              arith::MulIOp::create(b, loc, plane, cst(numElements(spatial))),
              lin);
          Value linI64 = arith::IndexCastOp::create(b, loc, i64, lin);
          linalg::YieldOp::create(
              b, loc,
              ValueRange{
                  arith::SelectOp::create(b, loc, greater, args[0], args[2]),
                  arith::SelectOp::create(b, loc, greater, linI64, args[3])});
        });
    setOutput(0, generic.getResult(0));
    setOutput(1, generic.getResult(1), /*isUnsigned=*/false);
    return success();
  }
  Value r =
      linalg::GenericOp::create(
          builder, curLoc, TypeRange{init.getType()}, ValueRange{x, window},
          ValueRange{init}, maps, iters,
          [&](OpBuilder &b, Location loc, ValueRange args) {
            Value v =
                !isMax ? Value(arith::AddFOp::create(b, loc, args[2], args[0]))
                : isFloat
                    ? Value(arith::MaximumFOp::create(b, loc, args[2], args[0]))
                : isUnsigned
                    ? Value(arith::MaxUIOp::create(b, loc, args[2], args[0]))
                    : Value(arith::MaxSIOp::create(b, loc, args[2], args[0]));
            linalg::YieldOp::create(b, loc, v);
          })
          .getResult(0);
  if (!isMax) {
    // Divisor per output position: the window positions inside the input
    // (count_include_pad=0) or inside the input and its pads
    // (count_include_pad=1); ceil_mode's extra high padding never counts.
    bool includePad = attrInt("count_include_pad", 0) != 0;
    SmallVector<SmallVector<int64_t>> counts(ns);
    bool uniform = true;
    for (int64_t i = 0; i < ns; ++i) {
      int64_t size = xt.getDimSize(i + 2);
      int64_t lo = includePad ? -w.padLow[i] : 0;
      int64_t hi = includePad ? size + w.padHigh[i] : size;
      for (int64_t o = 0; o < w.out[i]; ++o) {
        int64_t cnt = 0;
        for (int64_t k = 0; k < w.kernel[i]; ++k) {
          int64_t pos = o * w.strides[i] - w.padLow[i] + k * w.dilations[i];
          cnt += pos >= lo && pos < hi;
        }
        counts[i].push_back(cnt);
        uniform &= cnt == w.kernel[i];
      }
    }
    if (uniform) {
      r = scale(r, 1.0 / numElements(w.kernel));
    } else {
      SmallVector<int64_t> outStrides = stridesOf(w.out);
      SmallVector<double> divisor(numElements(w.out));
      for (int64_t lin = 0; lin < static_cast<int64_t>(divisor.size()); ++lin) {
        int64_t prod = 1;
        for (int64_t i = 0; i < ns; ++i)
          prod *= counts[i][(lin / outStrides[i]) % w.out[i]];
        divisor[lin] = std::max<int64_t>(prod, 1);
      }
      Value c = arith::ConstantOp::create(
          builder, curLoc,
          floatsAttr(w.out, elt, divisor).reshape(placed(w.out, elt)));
      r = *elementwise(
          {r, c}, elt, [](OpBuilder &b, Location loc, ArrayRef<Value> v) {
            return Value(arith::DivFOp::create(b, loc, v[0], v[1]));
          });
    }
  }
  setOutput(0, r);
  return success();
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
      llvm::is_contained({"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin",
                          "ReduceProd", "Reshape", "Flatten", "Squeeze",
                          "Unsqueeze", "Transpose", "Split", "Slice", "Concat",
                          "Gather", "Expand", "MaxPool"},
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
  if (op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax" ||
      op == "ReduceMin" || op == "ReduceProd")
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

OwningOpRef<ModuleOp> Importer::run() {

  // Opset of the default domain.
  for (const onnx::OperatorSetIdProto &o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      opset = o.version();
  if (opset == 0) {
    emitLine(fileLoc, "model imports no opset of the default ONNX domain");
    return {};
  }
  // Opsets 1-6 are accepted per node, for ops unchanged since (importNode).
  // The last one is the ONNX library's: the checker and shape inference
  // know no later schemas (a later model would be checked, and its
  // attributes read, against the wrong ones).
  maxOpset = onnx_import::maxOpset();
  if (opset < 1 || opset > maxOpset) {
    emitError(fileLoc) << "unsupported opset " << opset << " (supported: 7 to "
                       << maxOpset << ")";
    return {};
  }
  onnx::GraphProto *graph = model.mutable_graph();

  // Initializers without data (architecture-only models) would fail the
  // checker: check a copy in which they are graph inputs.
  llvm::StringSet<> initializerNames, dataless;
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
      return {};
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
      return {};
    }
    for (int i = 0; i < shape->dim_size(); ++i) {
      onnx::TensorShapeProto::Dimension *dim = shape->mutable_dim(i);
      if (dim->has_dim_value() && dim->dim_value() != it->second[i]) {
        emitLine(fileLoc, "--input-shape gives " + Twine(it->second[i]) +
                              " for dimension " + Twine(i) + " of input '" +
                              vi.name() + "', which the model fixes to " +
                              Twine(dim->dim_value()));
        return {};
      }
      dim->set_dim_value(it->second[i]);
    }
  }
  // Bind --input-value inputs (after --input-shape, which may give their
  // shape) before checking, so that ONNX inference sees them as constants.
  for (const auto &[name, texts] : options.inputValues)
    if (failed(bindInputValue(name, texts, initializerNames)))
      return {};
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
    if (!onnx_import::checkSchema(node.op_type(), "", opset).empty()) {
      setCurrentNode(node, i);
      (void)fail("unknown operator: ONNX has no schema for it at opset " +
                 Twine(opset));
      return {};
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
      return {};
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
        return {};
      }
    }
  }
  {
    onnx::ModelProto checked;
    const onnx::ModelProto *toCheck = &model;
    if (!dataless.empty()) {
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
      return {};
    }
    onnx::ModelProto inferred = *toCheck;
    err = onnx_import::inferShapes(inferred);
    if (!err.empty()) {
      (void)failAtNamedNode("ONNX shape inference failed", err);
      return {};
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
  }

  // Function signature: graph inputs, then weights.
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  builder.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(builder, fileLoc, options.funcName,
                                   builder.getFunctionType({}, {}));
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);
  SmallVector<Type> argTypes;
  // Names survive printing as `dist.name`; graph inputs (not weights) are
  // batched along dimension 0 for dist-dtp.
  SmallVector<std::pair<std::string, bool>> argRoles;
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
      return {};
    }
    const onnx::TypeProto::Tensor &tt = vi.type().tensor_type();
    FailureOr<Type> elt =
        elementType(tt.elem_type(), "input '" + vi.name() + "'");
    if (failed(elt))
      return {};
    if (!tt.has_shape()) {
      setFirstConsumer(vi.name());
      emitLine(curLoc, "input '" + vi.name() +
                           "' has no shape: pass --input-shape " + vi.name() +
                           "=d0,d1,..." + readBy());
      return {};
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
        return {};
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
      return {};
    SmallVector<int64_t> shape(t.dims().begin(), t.dims().end());
    if (llvm::any_of(shape, [](int64_t d) { return d < 0; })) {
      emitLine(fileLoc, what + " has a negative dimension");
      return {};
    }
    int64_t n = numElements(shape);
    bool hasData = !dataless.count(t.name()) &&
                   t.data_location() != onnx::TensorProto::EXTERNAL;
    bool isShapeLike = !isa<FloatType>(*elt) && n <= kMaxShapeInitializer;
    if (hasData && (options.weightsAsConstants || isShapeLike || n <= 1 ||
                    boundInputs.count(t.name()))) {
      FailureOr<DenseElementsAttr> c = tensorContents(t, what);
      if (failed(c))
        return {};
      TensorInfo &info = values[t.name()];
      info.type = placed(shape, *elt);
      info.constant = *c;
      info.isUnsigned = isUnsignedType(t.data_type());
      continue;
    }
    if (options.weightsAsConstants && !hasData) {
      emitLine(fileLoc, what + " has no data: --weights=constants needs them");
      return {};
    }
    addArg(t.name(), placed(shape, *elt));
    values[t.name()].isUnsigned = isUnsignedType(t.data_type());
  }

  unsigned index = 0;
  for (const onnx::NodeProto &node : graph->node()) {
    if (failed(importNode(node, index++)))
      return {};
    // Every output must have been defined (e.g. no unsupported optional
    // outputs left dangling).
    for (const std::string &out : node.output()) {
      if (!out.empty() && !values.count(out)) {
        (void)fail("output '" + out + "' is not supported");
        return {};
      }
      if (!out.empty() && failed(checkOutputType(out)))
        return {};
    }
  }
  curNode = nullptr;
  curLoc = fileLoc;

  SmallVector<Value> results;
  SmallVector<bool> resultUnsigned;
  for (const onnx::ValueInfoProto &vi : graph->output()) {
    auto it = values.find(vi.name());
    if (it == values.end()) {
      emitLine(fileLoc,
               "graph output '" + vi.name() + "' is not computed by any node");
      return {};
    }
    results.push_back(materialize(it->second));
    resultUnsigned.push_back(it->second.isUnsigned);
  }
  func::ReturnOp::create(builder, fileLoc, results);
  func.setFunctionType(
      builder.getFunctionType(argTypes, ValueRange(results).getTypes()));
  for (auto [i, role] : llvm::enumerate(argRoles)) {
    func.setArgAttr(i, "dist.name", builder.getStringAttr(role.first));
    if (role.second)
      func.setArgAttr(i, "dist.batch_dim", builder.getI64IntegerAttr(0));
  }
  // Unsigned results (UINT8..UINT64), for distir-run's output files.
  for (auto [i, isUnsigned] : llvm::enumerate(resultUnsigned))
    if (isUnsigned)
      func.setResultAttr(i, "dist.unsigned", builder.getUnitAttr());
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
  options.device = clDevice;
  options.weightsAsConstants = clWeights == WeightsMode::Constants;
  if (clDevice < 0) {
    emitError(loc) << "--device must be >= 0";
    return {};
  }
  for (const std::string &spec : clInputShapes) {
    std::pair<std::string, SmallVector<int64_t>> shape;
    std::string err = parseInputShape(spec, shape);
    if (!err.empty()) {
      emitLine(loc, err);
      return {};
    }
    options.inputShapes.push_back(std::move(shape));
  }
  for (const std::string &spec : clInputValues) {
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
int64_t getONNXImportDeviceOption() { return clDevice; }
