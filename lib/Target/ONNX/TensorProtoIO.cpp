//===- TensorProtoIO.cpp - ONNX TensorProto files <-> runtime values ------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Target/ONNX/TensorProtoIO.h"
#include "DistIR/Analysis/ProgramInputs.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <limits>
#include <onnx/onnx_pb.h>

using namespace mlir;
using namespace distir;

namespace {
/// How one ONNX data type is stored.
struct ProtoType {
  Type elementType;
  int bytes; // in raw_data
};
} // namespace

static std::optional<ProtoType> getProtoType(int dataType, Builder &b) {
  using T = onnx::TensorProto;
  switch (dataType) {
  case T::FLOAT:
    return ProtoType{b.getF32Type(), 4};
  case T::DOUBLE:
    return ProtoType{b.getF64Type(), 8};
  case T::FLOAT16:
    return ProtoType{b.getF16Type(), 2};
  case T::BFLOAT16:
    return ProtoType{b.getBF16Type(), 2};
  case T::INT8:
    return ProtoType{b.getIntegerType(8), 1};
  case T::INT16:
    return ProtoType{b.getIntegerType(16), 2};
  case T::INT32:
    return ProtoType{b.getIntegerType(32), 4};
  case T::INT64:
    return ProtoType{b.getIntegerType(64), 8};
  case T::BOOL:
    return ProtoType{b.getI1Type(), 1};
  // Unsigned integers are read into signless integers of their width,
  // holding the same bits (the executor stores them wrapped to signed).
  case T::UINT8:
    return ProtoType{b.getIntegerType(8), 1};
  case T::UINT16:
    return ProtoType{b.getIntegerType(16), 2};
  case T::UINT32:
    return ProtoType{b.getIntegerType(32), 4};
  case T::UINT64:
    return ProtoType{b.getIntegerType(64), 8};
  default:
    return std::nullopt;
  }
}

/// Decodes one little-endian raw element.
static double decodeRaw(const char *p, const ProtoType &t) {
  if (t.elementType.isF32()) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  if (t.elementType.isF64()) {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  if (auto f = dyn_cast<FloatType>(t.elementType)) {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    return llvm::APFloat(f.getFloatSemantics(), llvm::APInt(16, bits))
        .convertToDouble();
  }
  // Sign-extend in unsigned arithmetic (shifting negative values is UB).
  uint64_t u = 0;
  std::memcpy(&u, p, t.bytes);
  if (t.bytes < 8 && ((u >> (t.bytes * 8 - 1)) & 1))
    u |= ~uint64_t(0) << (t.bytes * 8);
  return t.elementType.isInteger(1)
             ? ((u & 0xff) ? 1 : 0)
             : static_cast<double>(static_cast<int64_t>(u));
}

/// The values of `proto`; on failure sets `error` to `what`: the reason.
static std::optional<RuntimeValue> decode(const onnx::TensorProto &proto,
                                          MLIRContext *context,
                                          std::string &error, Type expected,
                                          const Twine &what) {
  auto fail = [&](const Twine &msg) -> std::optional<RuntimeValue> {
    error = (what + ": " + msg).str();
    return std::nullopt;
  };
  Builder b(context);
  std::optional<ProtoType> type = getProtoType(proto.data_type(), b);
  // Older ONNX test data stores bfloat16 tensors as UINT16 bit patterns.
  if (proto.data_type() == onnx::TensorProto::UINT16 && expected &&
      expected.isBF16())
    type = ProtoType{expected, 2};
  if (!type)
    return fail("unsupported TensorProto data type " +
                Twine(proto.data_type()));
  if (proto.data_location() == onnx::TensorProto::EXTERNAL)
    return fail("external tensor data is not supported");
  SmallVector<int64_t> shape;
  for (int64_t d : proto.dims()) {
    if (d < 0)
      return fail("negative dimension " + Twine(d));
    shape.push_back(d);
  }
  RuntimeValue value = RuntimeValue::tensor(type->elementType, shape);
  size_t n = value.getNumElements();
  std::vector<double> &data = *value.data;
  auto check = [&](size_t have) { return have == n; };
  if (proto.has_raw_data()) {
    const std::string &raw = proto.raw_data();
    if (raw.size() != n * type->bytes)
      return fail("raw_data holds " + Twine(raw.size()) + " bytes, expected " +
                  Twine(n * type->bytes));
    for (size_t i = 0; i < n; ++i)
      data[i] = decodeRaw(raw.data() + i * type->bytes, *type);
  } else if (proto.float_data_size() || type->elementType.isF32()) {
    if (!check(proto.float_data_size()))
      return fail("float_data holds " + Twine(proto.float_data_size()) +
                  " values, expected " + Twine(n));
    for (size_t i = 0; i < n; ++i)
      data[i] = proto.float_data(static_cast<int>(i));
  } else if (type->elementType.isF64()) {
    if (!check(proto.double_data_size()))
      return fail("double_data holds " + Twine(proto.double_data_size()) +
                  " values, expected " + Twine(n));
    for (size_t i = 0; i < n; ++i)
      data[i] = proto.double_data(static_cast<int>(i));
  } else if (proto.data_type() == onnx::TensorProto::UINT32 ||
             proto.data_type() == onnx::TensorProto::UINT64) {
    if (!check(proto.uint64_data_size()))
      return fail("uint64_data holds " + Twine(proto.uint64_data_size()) +
                  " values, expected " + Twine(n));
    for (size_t i = 0; i < n; ++i)
      data[i] = static_cast<double>(
          static_cast<int64_t>(proto.uint64_data(static_cast<int>(i))));
  } else if (type->elementType.isInteger(64)) {
    if (!check(proto.int64_data_size()))
      return fail("int64_data holds " + Twine(proto.int64_data_size()) +
                  " values, expected " + Twine(n));
    for (size_t i = 0; i < n; ++i)
      data[i] = static_cast<double>(proto.int64_data(static_cast<int>(i)));
  } else {
    // int32_data carries every type narrower than 32 bits (half types as
    // their bit patterns).
    if (!check(proto.int32_data_size()))
      return fail("int32_data holds " + Twine(proto.int32_data_size()) +
                  " values, expected " + Twine(n));
    for (size_t i = 0; i < n; ++i) {
      int32_t v = proto.int32_data(static_cast<int>(i));
      if (auto f = dyn_cast<FloatType>(type->elementType))
        data[i] = llvm::APFloat(f.getFloatSemantics(),
                                llvm::APInt(16, static_cast<uint16_t>(v)))
                      .convertToDouble();
      else
        data[i] = v;
    }
  }
  for (double &x : data)
    x = roundToType(type->elementType, x);
  return value;
}

std::optional<RuntimeValue> distir::readTensorProtoFile(StringRef path,
                                                        MLIRContext *context,
                                                        std::string &error,
                                                        Type expected) {
  auto file = llvm::MemoryBuffer::getFile(path);
  if (!file) {
    error = (path + ": cannot open: " + file.getError().message()).str();
    return std::nullopt;
  }
  onnx::TensorProto proto;
  StringRef bytes = (*file)->getBuffer();
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    error = (path + ": not a serialized onnx.TensorProto").str();
    return std::nullopt;
  }
  return decode(proto, context, error, expected, path);
}

std::optional<llvm::StringMap<RuntimeValue>>
distir::readModelInitializers(StringRef path, MLIRContext *context,
                              const llvm::StringSet<> &wanted,
                              std::string &error) {
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!file) {
    error = (path + ": cannot open: " + file.getError().message()).str();
    return std::nullopt;
  }
  onnx::ModelProto model;
  StringRef bytes = (*file)->getBuffer();
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    error = (path + ": larger than protobuf's 2 GiB limit (store the "
                    "weights as external data)")
                .str();
    return std::nullopt;
  }
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    error = (path + ": not a serialized onnx.ModelProto").str();
    return std::nullopt;
  }
  llvm::StringMap<RuntimeValue> values;
  for (const onnx::TensorProto &t : model.graph().initializer()) {
    // Only what is asked for: decoded values take 8 bytes an element.
    if (!wanted.contains(t.name()))
      continue;
    std::optional<RuntimeValue> value = decode(
        t, context, error, Type(), path + ": initializer '" + t.name() + "'");
    if (!value)
      return std::nullopt;
    values.insert({t.name(), std::move(*value)});
  }
  return values;
}

bool distir::writeTensorProtoFile(StringRef path, const RuntimeValue &value,
                                  StringRef name, std::string &error,
                                  bool isUnsigned) {
  onnx::TensorProto proto;
  proto.set_name(name.str());
  for (int64_t d : value.shape)
    proto.add_dims(d);
  Type t = value.elementType;
  const std::vector<double> &data = *value.data;
  if (t.isF64()) {
    proto.set_data_type(onnx::TensorProto::DOUBLE);
    for (double v : data)
      proto.add_double_data(v);
  } else if (isa<FloatType>(t)) {
    // Narrower and wider float types are written as float.
    proto.set_data_type(onnx::TensorProto::FLOAT);
    for (double v : data)
      proto.add_float_data(static_cast<float>(v));
  } else if (t.isInteger(1)) {
    proto.set_data_type(onnx::TensorProto::BOOL);
    for (double v : data)
      proto.add_int32_data(v != 0);
  } else if (isUnsigned && isa<IntegerType>(t)) {
    // The bits of each (signed-wrapped) value, read as unsigned.
    unsigned width = t.getIntOrFloatBitWidth();
    uint64_t mask = width >= 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1;
    proto.set_data_type(width <= 8    ? onnx::TensorProto::UINT8
                        : width <= 16 ? onnx::TensorProto::UINT16
                        : width <= 32 ? onnx::TensorProto::UINT32
                                      : onnx::TensorProto::UINT64);
    for (double v : data) {
      uint64_t bits = static_cast<uint64_t>(static_cast<int64_t>(v)) & mask;
      if (width <= 16)
        proto.add_int32_data(static_cast<int32_t>(bits));
      else
        proto.add_uint64_data(bits);
    }
  } else if (t.isInteger(64) || t.isIndex()) {
    proto.set_data_type(onnx::TensorProto::INT64);
    for (double v : data)
      proto.add_int64_data(static_cast<int64_t>(v));
  } else {
    unsigned width = t.getIntOrFloatBitWidth();
    proto.set_data_type(width <= 8    ? onnx::TensorProto::INT8
                        : width <= 16 ? onnx::TensorProto::INT16
                                      : onnx::TensorProto::INT32);
    for (double v : data)
      proto.add_int32_data(static_cast<int32_t>(v));
  }
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) {
    error = (path + ": cannot serialize the tensor").str();
    return false;
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = (path + ": cannot write: " + ec.message()).str();
    return false;
  }
  os << bytes;
  return true;
}

/// The names an argument's weight may have in a model: its dist.name and
/// its name location (not the positional names getArgumentNames adds).
static SmallVector<std::string, 2> weightNames(func::FuncOp func, unsigned i) {
  SmallVector<std::string, 2> names;
  if (auto name = func.getArgAttrOfType<StringAttr>(i, "dist.name"))
    names.push_back(name.str());
  if (auto loc = dyn_cast<NameLoc>(func.getArgument(i).getLoc()))
    names.push_back(loc.getName().str());
  return names;
}

bool distir::bindModelInitializers(
    StringRef path, func::FuncOp func,
    MutableArrayRef<std::optional<RuntimeValue>> args, std::string &error) {
  assert(args.size() == func.getNumArguments() && "one slot per argument");
  llvm::StringSet<> wanted;
  for (unsigned i = 0; i < args.size(); ++i)
    if (!args[i])
      for (const std::string &name : weightNames(func, i))
        wanted.insert(name);
  std::optional<llvm::StringMap<RuntimeValue>> weights =
      readModelInitializers(path, func.getContext(), wanted, error);
  if (!weights)
    return false;
  for (unsigned i = 0; i < args.size(); ++i) {
    if (args[i])
      continue;
    std::string mismatch;
    for (const std::string &name : weightNames(func, i)) {
      auto it = weights->find(name);
      if (it == weights->end())
        continue;
      Type argType = func.getArgumentTypes()[i];
      auto type = dyn_cast<RankedTensorType>(argType);
      const RuntimeValue &value = it->second;
      if (!type || type.getElementType() != value.elementType ||
          type.getShape() != ArrayRef<int64_t>(value.shape)) {
        std::string expected, got;
        llvm::raw_string_ostream(expected) << argType;
        llvm::raw_string_ostream(got)
            << RankedTensorType::get(value.shape, value.elementType);
        if (mismatch.empty())
          mismatch = (path + ": initializer '" + name + "' is " + got +
                      ", argument #" + Twine(i) + " expects " + expected)
                         .str();
        continue;
      }
      args[i] = value;
      break;
    }
    if (!args[i] && !mismatch.empty()) {
      error = mismatch;
      return false;
    }
  }
  return true;
}
