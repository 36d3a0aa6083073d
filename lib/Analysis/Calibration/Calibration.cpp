//===- Calibration.cpp - Calibration data model and JSON format -----------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Analysis/Calibration.h"
#include "DistIR/Support/JSON.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <cstdlib>

using namespace distir;
using llvm::json::Object;
using llvm::json::Value;

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

llvm::StringRef distir::stringifyComputeClass(ComputeClass opClass) {
  switch (opClass) {
  case ComputeClass::MatMul:
    return "matmul";
  case ComputeClass::Reduction:
    return "reduction";
  case ComputeClass::Elementwise:
    return "elementwise";
  case ComputeClass::Copy:
    return "copy";
  }
  llvm_unreachable("unknown compute class");
}

std::optional<ComputeClass>
distir::symbolizeComputeClass(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ComputeClass>>(name)
      .Case("matmul", ComputeClass::MatMul)
      .Case("reduction", ComputeClass::Reduction)
      .Case("elementwise", ComputeClass::Elementwise)
      .Case("copy", ComputeClass::Copy)
      .Default(std::nullopt);
}

llvm::ArrayRef<ComputeClass> distir::getAllComputeClasses() {
  static const ComputeClass classes[] = {
      ComputeClass::MatMul, ComputeClass::Reduction, ComputeClass::Elementwise,
      ComputeClass::Copy};
  return classes;
}

llvm::StringRef distir::getCalibrationKindName(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllReduce:
    return "all_reduce";
  case CollectiveKind::ReduceScatter:
    return "reduce_scatter";
  case CollectiveKind::AllGather:
    return "all_gather";
  case CollectiveKind::Broadcast:
    return "broadcast";
  case CollectiveKind::Reduce:
    return "reduce";
  case CollectiveKind::Scatter:
    return "scatter";
  case CollectiveKind::Gather:
    return "gather";
  case CollectiveKind::AllToAll:
    return "alltoall";
  case CollectiveKind::SendRecv:
    return "sendrecv";
  }
  llvm_unreachable("unknown collective kind");
}

std::optional<CollectiveKind>
distir::parseCalibrationKindName(llvm::StringRef name) {
  for (CollectiveKind kind : getAllCollectiveKinds())
    if (name == getCalibrationKindName(kind))
      return kind;
  return symbolizeCollectiveKind(name);
}

llvm::ArrayRef<CollectiveKind> distir::getAllCollectiveKinds() {
  static const CollectiveKind kinds[] = {
      CollectiveKind::AllReduce, CollectiveKind::ReduceScatter,
      CollectiveKind::AllGather, CollectiveKind::Broadcast,
      CollectiveKind::Reduce,    CollectiveKind::Scatter,
      CollectiveKind::Gather,    CollectiveKind::AllToAll,
      CollectiveKind::SendRecv};
  return kinds;
}

//===----------------------------------------------------------------------===//
// Pricing
//===----------------------------------------------------------------------===//

std::optional<double> Calibration::getComputeTime(ComputeClass opClass,
                                                  double bytes,
                                                  double flops) const {
  auto it = compute.find(opClass);
  if (it == compute.end())
    return std::nullopt;
  return it->second.evaluate(bytes, flops);
}

std::optional<double> Calibration::getCollectiveTime(CollectiveKind kind,
                                                     int64_t groupSize,
                                                     double bytes) const {
  auto it = collectives.find(kind);
  if (it == collectives.end() || it->second.empty())
    return std::nullopt;
  if (groupSize < 2)
    return 0.0;
  const std::map<int64_t, CollectiveCoefficients> &bySize = it->second;
  auto exact = bySize.find(groupSize);
  if (exact != bySize.end())
    return exact->second.evaluate(bytes);
  // Nearest measured group size; the larger one on a tie.
  int64_t best = -1;
  for (const auto &entry : bySize) {
    int64_t size = entry.first;
    if (best < 0 ||
        std::llabs(size - groupSize) <= std::llabs(best - groupSize))
      best = size;
  }
  const CollectiveCoefficients &nearest = bySize.at(best);
  double scale = 1;
  double measured = CollectiveCostModel::getBandwidthFactor(
      kind, best, CollectiveAlgorithm::Ring);
  if (measured > 0)
    scale = CollectiveCostModel::getBandwidthFactor(kind, groupSize,
                                                    CollectiveAlgorithm::Ring) /
            measured;
  return nearest.constant + nearest.perByte * scale * bytes;
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

static std::string formatNumber(double value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%g", value);
  return text;
}

static std::string describe(const Value &value) {
  switch (value.kind()) {
  case Value::Null:
    return "null";
  case Value::Boolean:
    return *value.getAsBoolean() ? "true" : "false";
  case Value::Number:
    return formatNumber(*value.getAsNumber());
  case Value::String:
    return "a string";
  case Value::Array:
    return "an array";
  case Value::Object:
    return "an object";
  }
  llvm_unreachable("unknown JSON value kind");
}

static std::string childPath(llvm::StringRef path, llvm::StringRef key) {
  bool isIdent = !key.empty() && llvm::all_of(key, [](char c) {
    return llvm::isAlnum(c) || c == '_';
  });
  if (isIdent)
    return (path + "." + key).str();
  std::string quoted;
  llvm::raw_string_ostream os(quoted);
  os << path << "[" << Value(key) << "]";
  return quoted;
}

static std::string indexPath(llvm::StringRef path, size_t index) {
  return (path + "[" + llvm::Twine(index) + "]").str();
}

namespace {

/// Builds a Calibration from a parsed document, stopping at the first error.
class CalibrationReader {
public:
  explicit CalibrationReader(ErrorFn emitError) : emitError(emitError) {}

  mlir::LogicalResult read(const Value &root, Calibration &calibration);

private:
  mlir::LogicalResult error(llvm::StringRef path, const llvm::Twine &message) {
    emitError(path + ": " + message);
    return mlir::failure();
  }
  const Object *getObject(const Value &value, llvm::StringRef path,
                          llvm::ArrayRef<llvm::StringRef> allowed);
  mlir::LogicalResult readNumber(const Object &object, llvm::StringRef path,
                                 llvm::StringRef key, bool required,
                                 double &result);
  mlir::LogicalResult readFit(const Object &object, llvm::StringRef path,
                              std::optional<FitQuality> &fit);
  mlir::LogicalResult readCompute(const Value &value, llvm::StringRef path,
                                  Calibration &calibration);
  mlir::LogicalResult readCollectives(const Value &value, llvm::StringRef path,
                                      Calibration &calibration);

  ErrorFn emitError;
};

} // namespace

const Object *
CalibrationReader::getObject(const Value &value, llvm::StringRef path,
                             llvm::ArrayRef<llvm::StringRef> allowed) {
  const Object *object = value.getAsObject();
  if (!object) {
    (void)error(path, "expected an object, got " + describe(value));
    return nullptr;
  }
  if (allowed.empty())
    return object;
  // The smallest unknown key, so that the one error is deterministic.
  std::optional<std::string> unknown;
  for (const auto &entry : *object) {
    llvm::StringRef key = entry.first;
    if (!llvm::is_contained(allowed, key) && (!unknown || key < *unknown))
      unknown = key.str();
  }
  if (!unknown)
    return object;
  (void)error(childPath(path, *unknown), "unknown key (expected one of: " +
                                             llvm::join(allowed, ", ") + ")");
  return nullptr;
}

mlir::LogicalResult CalibrationReader::readNumber(const Object &object,
                                                  llvm::StringRef path,
                                                  llvm::StringRef key,
                                                  bool required,
                                                  double &result) {
  const Value *value = object.get(key);
  if (!value) {
    if (required)
      return error(path, "missing required key '" + key + "'");
    return mlir::success();
  }
  std::string keyPath = childPath(path, key);
  std::optional<double> number = value->getAsNumber();
  if (!number)
    return error(keyPath, "expected a number, got " + describe(*value));
  if (!std::isfinite(*number) || *number < 0)
    return error(keyPath,
                 "expected a non-negative number, got " + describe(*value));
  result = *number;
  return mlir::success();
}

mlir::LogicalResult CalibrationReader::readFit(const Object &object,
                                               llvm::StringRef path,
                                               std::optional<FitQuality> &fit) {
  const Value *value = object.get("fit");
  if (!value)
    return mlir::success();
  std::string fitPath = childPath(path, "fit");
  const Object *fitObject =
      getObject(*value, fitPath, {"samples", "r2", "max_rel_error"});
  if (!fitObject)
    return mlir::failure();
  FitQuality quality;
  const Value *samples = fitObject->get("samples");
  if (!samples)
    return error(fitPath, "missing required key 'samples'");
  std::optional<int64_t> count = samples->getAsInteger();
  if (!count || *count < 1)
    return error(childPath(fitPath, "samples"),
                 "expected a positive integer, got " + describe(*samples));
  quality.samples = *count;
  // R^2 may be negative for a poor fit.
  if (const Value *r2 = fitObject->get("r2")) {
    std::optional<double> number = r2->getAsNumber();
    if (!number || !std::isfinite(*number))
      return error(childPath(fitPath, "r2"),
                   "expected a number, got " + describe(*r2));
    quality.rSquared = *number;
  }
  if (failed(readNumber(*fitObject, fitPath, "max_rel_error",
                        /*required=*/false, quality.maxRelativeError)))
    return mlir::failure();
  fit = quality;
  return mlir::success();
}

mlir::LogicalResult CalibrationReader::readCompute(const Value &value,
                                                   llvm::StringRef path,
                                                   Calibration &calibration) {
  const Object *object = getObject(value, path, {});
  if (!object)
    return mlir::failure();
  // Sorted keys: deterministic first error.
  std::vector<std::string> keys;
  for (const auto &entry : *object)
    keys.push_back(entry.first.str());
  llvm::sort(keys);
  for (const std::string &key : keys) {
    std::string classPath = childPath(path, key);
    std::optional<ComputeClass> opClass = symbolizeComputeClass(key);
    if (!opClass)
      return error(classPath, "unknown op class (expected matmul, reduction, "
                              "elementwise or copy)");
    const Object *entry =
        getObject(*object->get(key), classPath,
                  {"constant", "per_byte", "per_flop", "fit"});
    if (!entry)
      return mlir::failure();
    ComputeCoefficients coefficients;
    if (failed(readNumber(*entry, classPath, "constant", /*required=*/true,
                          coefficients.constant)) ||
        failed(readNumber(*entry, classPath, "per_byte", /*required=*/true,
                          coefficients.perByte)) ||
        failed(readNumber(*entry, classPath, "per_flop", /*required=*/true,
                          coefficients.perFlop)) ||
        failed(readFit(*entry, classPath, coefficients.fit)))
      return mlir::failure();
    calibration.compute[*opClass] = coefficients;
  }
  return mlir::success();
}

mlir::LogicalResult
CalibrationReader::readCollectives(const Value &value, llvm::StringRef path,
                                   Calibration &calibration) {
  const Object *object = getObject(value, path, {});
  if (!object)
    return mlir::failure();
  std::vector<std::string> keys;
  for (const auto &entry : *object)
    keys.push_back(entry.first.str());
  llvm::sort(keys);
  for (const std::string &key : keys) {
    std::string kindPath = childPath(path, key);
    std::optional<CollectiveKind> kind = parseCalibrationKindName(key);
    if (!kind)
      return error(kindPath, "unknown collective kind (expected all_reduce, "
                             "all_gather, reduce_scatter, broadcast, reduce, "
                             "scatter, gather, alltoall or sendrecv)");
    if (calibration.collectives.count(*kind))
      return error(kindPath, "collective '" + getCalibrationKindName(*kind) +
                                 "' is given twice");
    const llvm::json::Array *sizes = object->get(key)->getAsArray();
    if (!sizes)
      return error(kindPath,
                   "expected an array, got " + describe(*object->get(key)));
    if (sizes->empty())
      return error(kindPath, "expected at least one group size entry");
    std::map<int64_t, CollectiveCoefficients> &bySize =
        calibration.collectives[*kind];
    for (auto [index, item] : llvm::enumerate(*sizes)) {
      std::string itemPath = indexPath(kindPath, index);
      const Object *entry = getObject(
          item, itemPath, {"group_size", "constant", "per_byte", "fit"});
      if (!entry)
        return mlir::failure();
      const Value *groupValue = entry->get("group_size");
      if (!groupValue)
        return error(itemPath, "missing required key 'group_size'");
      std::optional<int64_t> groupSize = groupValue->getAsInteger();
      if (!groupSize || *groupSize < 2)
        return error(childPath(itemPath, "group_size"),
                     "expected an integer >= 2, got " + describe(*groupValue));
      if (bySize.count(*groupSize))
        return error(childPath(itemPath, "group_size"),
                     "group size " + llvm::Twine(*groupSize) +
                         " is given twice");
      CollectiveCoefficients coefficients;
      if (failed(readNumber(*entry, itemPath, "constant", /*required=*/true,
                            coefficients.constant)) ||
          failed(readNumber(*entry, itemPath, "per_byte", /*required=*/true,
                            coefficients.perByte)) ||
          failed(readFit(*entry, itemPath, coefficients.fit)))
        return mlir::failure();
      bySize[*groupSize] = coefficients;
    }
  }
  return mlir::success();
}

mlir::LogicalResult CalibrationReader::read(const Value &root,
                                            Calibration &calibration) {
  const Object *object =
      getObject(root, "$",
                {"format", "version", "description", "compute", "collectives"});
  if (!object)
    return mlir::failure();
  const Value *format = object->get("format");
  if (!format)
    return error("$", "missing required key 'format'");
  if (format->getAsString() !=
      std::optional<llvm::StringRef>("distir-calibration"))
    return error("$.format", "expected \"distir-calibration\"");
  if (const Value *version = object->get("version"))
    if (version->getAsInteger() != std::optional<int64_t>(1))
      return error("$.version", "unsupported version " + describe(*version) +
                                    " (expected 1)");
  if (const Value *description = object->get("description")) {
    std::optional<llvm::StringRef> text = description->getAsString();
    if (!text)
      return error("$.description",
                   "expected a string, got " + describe(*description));
    calibration.description = text->str();
  }
  if (const Value *compute = object->get("compute"))
    if (failed(readCompute(*compute, "$.compute", calibration)))
      return mlir::failure();
  if (const Value *collectives = object->get("collectives"))
    if (failed(readCollectives(*collectives, "$.collectives", calibration)))
      return mlir::failure();
  if (calibration.compute.empty() && calibration.collectives.empty())
    return error("$", "no 'compute' or 'collectives' entries");
  return mlir::success();
}

mlir::FailureOr<Calibration> distir::parseCalibrationJSON(llvm::StringRef text,
                                                          ErrorFn emitError) {
  Value root(nullptr);
  std::string parseError;
  if (!parseJSON(text, root, parseError)) {
    emitError("invalid JSON: " + parseError);
    return mlir::failure();
  }
  Calibration calibration;
  CalibrationReader reader(emitError);
  if (failed(reader.read(root, calibration)))
    return mlir::failure();
  return calibration;
}

mlir::FailureOr<Calibration> distir::readCalibrationFile(llvm::StringRef path,
                                                         ErrorFn emitError) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buffer) {
    emitError("cannot read calibration '" + path +
              "': " + buffer.getError().message());
    return mlir::failure();
  }
  return parseCalibrationJSON(
      (*buffer)->getBuffer(),
      [&](const llvm::Twine &m) { emitError(path + ": " + m); });
}

static Value fitToJSON(const FitQuality &fit) {
  return Object{{"samples", fit.samples},
                {"r2", fit.rSquared},
                {"max_rel_error", fit.maxRelativeError}};
}

Value distir::calibrationToJSON(const Calibration &calibration) {
  Object compute;
  for (const auto &[opClass, c] : calibration.compute) {
    Object entry{{"constant", c.constant},
                 {"per_byte", c.perByte},
                 {"per_flop", c.perFlop}};
    if (c.fit)
      entry["fit"] = fitToJSON(*c.fit);
    compute[stringifyComputeClass(opClass)] = std::move(entry);
  }
  Object collectives;
  for (const auto &[kind, bySize] : calibration.collectives) {
    llvm::json::Array sizes;
    for (const auto &[groupSize, c] : bySize) {
      Object entry{{"group_size", groupSize},
                   {"constant", c.constant},
                   {"per_byte", c.perByte}};
      if (c.fit)
        entry["fit"] = fitToJSON(*c.fit);
      sizes.push_back(std::move(entry));
    }
    collectives[getCalibrationKindName(kind)] = std::move(sizes);
  }
  Object root{{"format", "distir-calibration"}, {"version", 1}};
  if (!calibration.description.empty())
    root["description"] = calibration.description;
  if (!compute.empty())
    root["compute"] = std::move(compute);
  if (!collectives.empty())
    root["collectives"] = std::move(collectives);
  return root;
}
