//===- ImporterImpl.h - State and helpers of the ONNX importer -*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Private to lib/Target/ONNX: the importer's per-model state (class
// Importer) and the helpers its op families share. Each family's import
// functions live in their own file (ImportElementwise.cpp, ImportNN.cpp,
// ImportShapeOps.cpp); ONNXImporter.cpp holds the driver.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_LIB_TARGET_ONNX_IMPORTERIMPL_H
#define DISTIR_LIB_TARGET_ONNX_IMPORTERIMPL_H

#include "DistIR/Dialect/Dist/IR/DistAttrs.h"
#include "DistIR/Dialect/Dist/IR/DistDialect.h"
#include "DistIR/Target/ONNX/MLPBuilder.h"
#include "DistIR/Target/ONNX/ONNXImporter.h"
#include "ONNXChecker.h"
#include "Opset18.h"

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

namespace distir::onnx_import {
using namespace mlir;
} // namespace distir::onnx_import

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace distir::onnx_import {

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
inline int64_t numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (llvm::MulOverflow(n, d, n))
      return std::numeric_limits<int64_t>::max();
  return n;
}

inline SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// ONNX multidirectional broadcasting of two shapes.
inline std::optional<SmallVector<int64_t>>
broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
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
inline SmallVector<int64_t> broadcastIndices(ArrayRef<int64_t> outShape,
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

inline std::string shapeStr(ArrayRef<int64_t> shape) {
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
inline std::string tensorDataError(const onnx::TensorProto &t,
                                   bool allowNoData) {
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
inline std::string graphDataError(const onnx::GraphProto &graph, int &node,
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

/// An index of any integer type as an `index`; negative ones count from
/// `size` (ONNX's Gather/GatherElements/Scatter* convention).
Value wrapIndex(OpBuilder &b, Location loc, Value raw, int64_t size,
                bool isUnsigned);

/// Emits `msg` as one diagnostic line: control characters in it (node, op,
/// tensor or input names are arbitrary bytes) are escaped as \n, \r, \t
/// or \xNN.
inline void emitLine(Location loc, const Twine &msg) {
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
  // The steps of run()
  //===--------------------------------------------------------------------===//
  /// An argument's name and whether it is batched (a graph input of rank
  /// > 0, tagged dist.batch_dim for dist-dtp).
  using ArgRole = std::pair<std::string, bool>;

  /// The default domain's opset, within those the ONNX library knows.
  LogicalResult readOpset();
  /// Notes the initializers, and those without data (architecture-only
  /// models), which the checker sees as graph inputs.
  void noteInitializers();
  /// --input-shape and --input-value, applied to the graph so that ONNX's
  /// inference sees them.
  LogicalResult applyInputOptions();
  /// What would crash or mislead ONNX's checker and inference: names for
  /// unnamed nodes, ops unknown at the opset, tensor data against dims,
  /// window attributes.
  LogicalResult checkBeforeONNX();
  /// ONNX's checker and shape inference, then the input ranks its inference
  /// cannot check; remembers the inferred types (onnxTypes).
  LogicalResult checkAndInferShapes();
  /// The function's arguments: graph inputs, then the weights (initializers
  /// that stay constants go to `values` only).
  LogicalResult importArguments(Block *body, SmallVector<Type> &argTypes,
                                SmallVector<ArgRole> &argRoles);
  /// Every node, in graph order.
  LogicalResult importNodes();
  /// The return, the signature and the argument/result attributes.
  LogicalResult finishFunction(func::FuncOp func, ArrayRef<Type> argTypes,
                               ArrayRef<ArgRole> argRoles);

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
  /// The one integer of known input `i` (a scalar operand such as an axis
  /// or K), or failure with a diagnostic naming `what`.
  FailureOr<int64_t> knownScalarInt(unsigned i, const Twine &what) {
    FailureOr<SmallVector<int64_t>> v = knownInts(i, what);
    if (failed(v))
      return failure();
    if (v->size() != 1)
      return (void)fail(what + " must be a scalar, got " + Twine(v->size()) +
                        " elements"),
             failure();
    return (*v)[0];
  }
  /// Fails on the first known index of input `i` outside [-size, size),
  /// where `sizeOf(n)` is the size the n-th index (row-major) addresses.
  /// Unknown or huge index tensors are checked at run time.
  LogicalResult checkKnownIndices(unsigned i,
                                  function_ref<int64_t(size_t)> sizeOf) {
    if (!isKnown(i) || numElements(inShape(i)) > kMaxFoldElements)
      return success();
    for (auto [n, index] : llvm::enumerate(knownIntsOf(i))) {
      int64_t size = sizeOf(n);
      if (index < -size || index >= size)
        return fail("index " + Twine(index) + " out of range [" + Twine(-size) +
                    ", " + Twine(size) + ")");
    }
    return success();
  }
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

  /// Normalizes a possibly negative axis of a rank-`rank` tensor (a scalar
  /// has none: every caller indexes the axis's dimension).
  FailureOr<int64_t> normAxis(int64_t axis, int64_t rank) {
    if (axis < -rank || axis >= rank)
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
  /// Fails with one line listing every op type of `graph` that the importer
  /// does not implement (node count and first node of each).
  LogicalResult checkImplementedOps(const onnx::GraphProto &graph);
  LogicalResult importElementwise(StringRef op);
  LogicalResult importClip();
  LogicalResult importTrilu();
  LogicalResult importCumSum();
  LogicalResult importArgExtreme(bool isMax);
  LogicalResult importTile();
  LogicalResult importOneHot();
  LogicalResult importGatherElements();
  LogicalResult importTopK();
  LogicalResult importNonZero();
  /// ScatterND (`nd`) or ScatterElements.
  LogicalResult importScatter(bool nd);
  LogicalResult importInstanceNorm();
  LogicalResult importEinsum();
  LogicalResult importConvTranspose();
  /// `r` ([N, F, spatial...]) plus the node's bias input 2, if any.
  FailureOr<Value> addChannelBias(Value r, int64_t f, int64_t ns);
  LogicalResult importPad();
  LogicalResult importResize();
  /// RNN, GRU or LSTM (`op`), unrolled over the static sequence.
  LogicalResult importRecurrent(StringRef op);
  /// sum(inputs[0] * inputs[1]) over the reduction loops, into zeros.
  Value multiplyAccumulate(ArrayRef<Value> inputs, ArrayRef<AffineMap> maps,
                           ArrayRef<utils::IteratorType> iters,
                           ArrayRef<int64_t> outShape, Type elt);
  /// Convolution of padded `x` with `weight` ([F, C/group, k...]).
  Value emitConv(Value x, Value weight, int64_t group, int64_t cg, int64_t fg,
                 ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                 ArrayRef<int64_t> outSpatial);
  /// ConvTranspose of `x` with `weight` ([C, F/group, k...]) before its
  /// pads: the `full` output positions, one convolution per stride phase.
  Value emitConvTranspose(Value x, Value weight, int64_t group, int64_t cg,
                          int64_t fg, ArrayRef<int64_t> strides,
                          ArrayRef<int64_t> dilations, ArrayRef<int64_t> full);
  /// (x - mean) / sqrt(var + eps) over the dims of `x` from `firstAxis` on.
  FailureOr<Value> normalizeFrom(Value x, int64_t firstAxis, double eps);
  /// `y` ([N, C, ...]) times input `scaleInput` plus input `biasInput`,
  /// both of shape [C].
  FailureOr<Value> scaleChannels(Value y, unsigned scaleInput,
                                 unsigned biasInput);
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
  LogicalResult importGroupNorm();
  LogicalResult checkChannelNormOperands();
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
  /// The last opset of the default domain the importer accepts: the ONNX
  /// library's, or kImportMaxOpset where that is later.
  int64_t maxOpset = 0;
  /// The model's opset is past the ONNX library's: its checker and inference
  /// see the model restated at opset 17 (Opset18.h).
  bool restateForONNX = false;
  llvm::StringMap<TensorInfo> values;
  /// Graph inputs bound by --input-value: known values whatever their size.
  llvm::StringSet<> boundInputs;
  /// Every initializer, and those without data.
  llvm::StringSet<> initializerNames, dataless;
  /// Types of the values as ONNX inference and the graph outputs' declared
  /// types give them; every node output is checked against them.
  llvm::StringMap<OnnxType> onnxTypes;
};

//===----------------------------------------------------------------------===//
// Scalar semantics shared by the op families (ImportElementwise.cpp)
//===----------------------------------------------------------------------===//

/// Scalar semantics of an elementwise ONNX op, for evaluation at import time
/// (in double or int64) and for emission (arith/math ops).
struct ElementwiseInfo {
  unsigned arity;
  bool comparison = false; // result is i1
  bool logical = false;    // operands are i1
};

std::optional<ElementwiseInfo> elementwiseInfo(StringRef op);
/// Converts a float scalar to another float type (through f32 between
/// f16 and bf16, which arith cannot convert directly).
Value castFloat(OpBuilder &b, Location loc, Value x, FloatType to);
/// The scalar body of elementwise ONNX op `op` on `a` (attributes `alpha`,
/// `beta`; unsigned integer semantics with `isUnsigned`).
Value emitScalar(OpBuilder &b, Location loc, StringRef op, ArrayRef<Value> a,
                 double alpha, double beta, bool isUnsigned = false);

} // namespace distir::onnx_import

#endif // DISTIR_LIB_TARGET_ONNX_IMPORTERIMPL_H
