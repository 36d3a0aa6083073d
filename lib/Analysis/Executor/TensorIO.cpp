//===- TensorIO.cpp - Read and write tensors as .npy files
//------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// The .npy format is a magic string, a version, a Python-dict header
// ({'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }) and raw
// row-major data.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Analysis/TensorIO.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace mlir;
using namespace distir;

namespace {
struct DType {
  char kind; // 'f', 'i', 'u', 'b'
  int bytes;
};
} // namespace

/// Value of `key` in the header dict, up to the next top-level comma.
static std::optional<StringRef> headerField(StringRef header, StringRef key) {
  size_t at = header.find(("'" + key + "'").str());
  if (at == StringRef::npos)
    return std::nullopt;
  StringRef rest = header.drop_front(at + key.size() + 2).ltrim();
  if (!rest.consume_front(":"))
    return std::nullopt;
  rest = rest.ltrim();
  if (rest.starts_with("(")) {
    size_t close = rest.find(')');
    return close == StringRef::npos ? std::nullopt
                                    : std::optional(rest.take_front(close + 1));
  }
  size_t end = rest.find_first_of(",}");
  return rest.take_front(end).rtrim();
}

std::optional<RuntimeValue>
distir::readNpy(StringRef path, MLIRContext *context, std::string &error) {
  auto file = llvm::MemoryBuffer::getFile(path);
  if (!file) {
    error = (path + ": cannot open: " + file.getError().message()).str();
    return std::nullopt;
  }
  return parseNpy((*file)->getBuffer(), path, context, error);
}

std::optional<RuntimeValue> distir::parseNpy(StringRef bytes, StringRef path,
                                             MLIRContext *context,
                                             std::string &error) {
  auto fail = [&](const Twine &msg) -> std::optional<RuntimeValue> {
    error = (path + ": " + msg).str();
    return std::nullopt;
  };
  if (!bytes.starts_with("\x93NUMPY") || bytes.size() < 10)
    return fail("not a .npy file (bad magic)");
  uint8_t major = static_cast<uint8_t>(bytes[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = llvm::support::endian::read16le(bytes.data() + 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return fail("truncated header");
    headerLen = llvm::support::endian::read32le(bytes.data() + 8);
    headerStart = 12;
  } else {
    return fail("unsupported .npy version " + Twine(major));
  }
  if (headerStart + headerLen > bytes.size())
    return fail("truncated header");
  StringRef header = bytes.substr(headerStart, headerLen);

  std::optional<StringRef> descr = headerField(header, "descr");
  std::optional<StringRef> order = headerField(header, "fortran_order");
  std::optional<StringRef> shapeText = headerField(header, "shape");
  if (!descr || !order || !shapeText)
    return fail("malformed header");
  if (*order != "False")
    return fail("Fortran-order arrays are not supported");
  StringRef d = descr->trim("'\"");
  if (d.size() < 3 || (d[0] != '<' && d[0] != '|' && d[0] != '='))
    return fail("unsupported dtype '" + d + "' (need little-endian)");
  DType dtype{d[1], 0};
  if (d.drop_front(2).getAsInteger(10, dtype.bytes))
    return fail("unsupported dtype '" + d + "'");

  Builder b(context);
  Type elementType;
  switch (dtype.kind) {
  case 'f':
    elementType = dtype.bytes == 2   ? Type(b.getF16Type())
                  : dtype.bytes == 4 ? Type(b.getF32Type())
                  : dtype.bytes == 8 ? Type(b.getF64Type())
                                     : Type();
    break;
  case 'i':
  case 'u':
    if (dtype.bytes == 1 || dtype.bytes == 2 || dtype.bytes == 4 ||
        dtype.bytes == 8)
      elementType = b.getIntegerType(dtype.bytes * 8);
    break;
  case 'b':
    if (dtype.bytes == 1)
      elementType = b.getI1Type();
    break;
  }
  if (!elementType)
    return fail("unsupported dtype '" + d + "'");

  SmallVector<int64_t> shape;
  StringRef dims = shapeText->trim("() ");
  SmallVector<StringRef> parts;
  dims.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef part : parts) {
    int64_t dim;
    if (part.trim().getAsInteger(10, dim) || dim < 0)
      return fail("malformed shape " + *shapeText);
    shape.push_back(dim);
  }
  // The data must be in the file before anything is allocated: a header
  // claiming 1e9 elements allocated 8 GB first.
  int64_t count = 1, needed = 0;
  for (int64_t dim : shape)
    if (llvm::MulOverflow(count, dim, count))
      return fail("shape " + *shapeText + " has more than 2^63 elements");
  uint64_t available = bytes.size() - headerStart - headerLen;
  if (llvm::MulOverflow(count, static_cast<int64_t>(dtype.bytes), needed))
    return fail("shape " + *shapeText + " needs more than 2^63 bytes");
  if (available < static_cast<uint64_t>(needed))
    return fail("truncated data: the shape " + *shapeText + " needs " +
                Twine(needed) + " bytes, the file has " + Twine(available));
  RuntimeValue value = RuntimeValue::tensor(elementType, shape);
  const char *data = bytes.data() + headerStart + headerLen;
  for (int64_t i = 0; i < count; ++i) {
    const char *p = data + i * dtype.bytes;
    double v = 0;
    if (dtype.kind == 'f' && dtype.bytes == 4) {
      float f;
      std::memcpy(&f, p, 4);
      v = f;
    } else if (dtype.kind == 'f' && dtype.bytes == 8) {
      std::memcpy(&v, p, 8);
    } else if (dtype.kind == 'f') {
      llvm::APFloat h(llvm::APFloat::IEEEhalf(),
                      llvm::APInt(16, llvm::support::endian::read16le(p)));
      v = h.convertToDouble();
    } else {
      uint64_t raw = 0;
      std::memcpy(&raw, p, dtype.bytes);
      if (dtype.kind == 'i' && dtype.bytes < 8 &&
          (raw >> (dtype.bytes * 8 - 1)) & 1)
        raw |= ~uint64_t(0) << (dtype.bytes * 8);
      v = dtype.kind == 'i' ? static_cast<double>(static_cast<int64_t>(raw))
                            : static_cast<double>(raw);
      if (dtype.kind == 'b')
        v = raw != 0;
    }
    (*value.data)[i] = roundToType(elementType, v);
  }
  return value;
}

bool distir::writeNpy(StringRef path, const RuntimeValue &value,
                      std::string &error, bool isUnsigned) {
  std::string descr = "<f4";
  int bytes = 4;
  Type t = value.elementType;
  if (t.isF64()) {
    descr = "<f8";
    bytes = 8;
  } else if (t.isInteger(1)) {
    descr = "|b1";
    bytes = 1;
  } else if (t.isIntOrIndex()) {
    unsigned width = t.isIndex() ? 64 : t.getIntOrFloatBitWidth();
    bytes = width <= 8 ? 1 : width <= 16 ? 2 : width <= 32 ? 4 : 8;
    // The low bytes of the (signed-wrapped) value are the unsigned bits.
    descr = std::string(bytes == 1 ? "|" : "<") +
            (isUnsigned && !t.isIndex() ? "u" : "i") + std::to_string(bytes);
  }
  std::string shape = "(";
  for (int64_t d : value.shape)
    shape += std::to_string(d) + ", ";
  if (value.shape.size() > 1)
    shape.erase(shape.size() - 1); // "(2, 3)"; keep "(4,)" for rank 1
  if (value.shape.size() > 1)
    shape.back() = ')';
  else
    shape = value.shape.empty() ? "()"
                                : "(" + std::to_string(value.shape[0]) + ",)";
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so that the data starts at a multiple of 64 bytes, ending in '\n'.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');

  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = (path + ": cannot write: " + ec.message()).str();
    return false;
  }
  os << "\x93NUMPY" << char(1) << char(0);
  char len[2];
  llvm::support::endian::write16le(len, static_cast<uint16_t>(header.size()));
  os.write(len, 2);
  os << header;
  const std::vector<double> &data =
      value.data ? *value.data : std::vector<double>();
  for (double v : data) {
    char buf[8];
    if (descr == "<f4") {
      float f = static_cast<float>(v);
      std::memcpy(buf, &f, 4);
    } else if (descr == "<f8") {
      std::memcpy(buf, &v, 8);
    } else {
      int64_t i = static_cast<int64_t>(v);
      std::memcpy(buf, &i, 8); // little-endian: low bytes first
    }
    os.write(buf, bytes);
  }
  return true;
}
