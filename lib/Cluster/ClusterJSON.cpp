//===- ClusterJSON.cpp - JSON format of cluster descriptions --------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Reads and writes the JSON face of the cluster model. The reader is strict:
// every key is checked (a typo must not silently fall back to a default) and
// every error names the JSON path of the offending field.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Cluster/Cluster.h"
#include "DistIR/Support/JSON.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstdio>

using namespace distir;
using llvm::json::Array;
using llvm::json::Object;
using llvm::json::Value;

/// Same bound as verifyCluster; checked here to report it with a JSON path.
static constexpr int64_t kMaxDevices = int64_t(1) << 24;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static std::string formatNumber(double value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", value);
  return buf;
}

/// Returns the value as an int64_t if it is an integral number in range.
/// Avoids json::Value::getAsInteger, whose double-to-int64 conversion is
/// undefined for exactly 2^63.
static std::optional<int64_t> getExactInteger(const Value &value) {
  if (std::optional<uint64_t> u = value.getAsUINT64()) {
    if (*u > uint64_t(std::numeric_limits<int64_t>::max()))
      return std::nullopt;
    return int64_t(*u);
  }
  std::optional<double> d = value.getAsNumber();
  double intPart;
  if (!d || std::modf(*d, &intPart) != 0.0 || !(std::fabs(*d) < 0x1p63))
    return std::nullopt;
  return int64_t(*d);
}

/// Describes a JSON value for "expected X, got Y" messages.
static std::string describe(const Value &value) {
  switch (value.kind()) {
  case Value::Null:
    return "null";
  case Value::Boolean:
    return *value.getAsBoolean() ? "true" : "false";
  case Value::Number:
    if (std::optional<int64_t> i = getExactInteger(value))
      return std::to_string(*i);
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

/// Appends an object key to a JSON path, quoting keys that are not
/// identifiers (e.g. odd element type names).
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

/// llvm::json silently keeps the last of duplicate object keys, which would
/// hide a mistake just like an unknown key. Returns the path of the first
/// duplicate key in `text`, which must be valid JSON.
static std::optional<std::string> findDuplicateKey(llvm::StringRef text) {
  struct Frame {
    bool isObject;
    std::string path;
    llvm::StringSet<> keys;
    std::string lastKey;
    size_t index = 0;
    bool expectKey = true;
  };
  std::vector<Frame> stack;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (c == '"') {
      size_t start = i;
      for (++i; i < e && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      if (stack.empty() || !stack.back().isObject || !stack.back().expectKey)
        continue;
      llvm::StringRef raw = text.slice(start + 1, i);
      std::string key = raw.str();
      if (raw.contains('\\')) {
        // Let the real parser decode escapes.
        llvm::Expected<Value> decoded =
            llvm::json::parse(text.slice(start, i + 1));
        if (!decoded) {
          llvm::consumeError(decoded.takeError());
        } else if (std::optional<llvm::StringRef> str =
                       decoded->getAsString()) {
          key = str->str();
        }
      }
      Frame &frame = stack.back();
      frame.expectKey = false;
      if (!frame.keys.insert(key).second)
        return childPath(frame.path, key);
      frame.lastKey = std::move(key);
    } else if (c == '{' || c == '[') {
      std::string path = "$";
      if (!stack.empty()) {
        const Frame &parent = stack.back();
        path = parent.isObject ? childPath(parent.path, parent.lastKey)
                               : indexPath(parent.path, parent.index);
      }
      stack.push_back(Frame{c == '{', std::move(path), {}, {}, 0, true});
    } else if (c == '}' || c == ']') {
      if (!stack.empty())
        stack.pop_back();
    } else if (c == ',' && !stack.empty()) {
      if (stack.back().isObject)
        stack.back().expectKey = true;
      else
        ++stack.back().index;
    }
  }
  return std::nullopt;
}

namespace {

/// Builds a Cluster from a parsed JSON document, stopping at the first
/// error.
class ClusterReader {
public:
  explicit ClusterReader(ErrorFn emitError) : emitError(emitError) {}

  mlir::LogicalResult readCluster(const Value &root, Cluster &cluster);

private:
  mlir::LogicalResult error(llvm::StringRef path, const llvm::Twine &message) {
    emitError(path + ": " + message);
    return mlir::failure();
  }

  /// Checks that `value` is an object with only `allowed` keys.
  const Object *getObject(const Value &value, llvm::StringRef path,
                          llvm::ArrayRef<llvm::StringRef> allowed);
  /// Returns the value of a required key, or null after reporting it.
  const Value *getRequired(const Object &object, llvm::StringRef path,
                           llvm::StringRef key);

  mlir::LogicalResult readString(const Value &value, llvm::StringRef path,
                                 bool allowEmpty, std::string &result);
  mlir::LogicalResult readNumber(const Value &value, llvm::StringRef path,
                                 bool allowZero, double &result);
  mlir::LogicalResult readPositiveInteger(const Value &value,
                                          llvm::StringRef path,
                                          int64_t &result);

  mlir::LogicalResult readLevel(const Value &value, llvm::StringRef path,
                                LevelSpec &level);
  mlir::LogicalResult readLink(const Value &value, llvm::StringRef path,
                               LinkSpec &link);
  mlir::LogicalResult readDevice(const Value &value, llvm::StringRef path,
                                 DeviceSpec &device);

  ErrorFn emitError;
};

} // namespace

const Object *
ClusterReader::getObject(const Value &value, llvm::StringRef path,
                         llvm::ArrayRef<llvm::StringRef> allowed) {
  const Object *object = value.getAsObject();
  if (!object) {
    (void)error(path, "expected an object, got " + describe(value));
    return nullptr;
  }
  // Report the smallest unknown key so the single error is deterministic
  // (json::Object is unordered).
  std::optional<std::string> unknown;
  for (const auto &entry : *object) {
    llvm::StringRef key = entry.first;
    if (llvm::is_contained(allowed, key))
      continue;
    if (!unknown || key < *unknown)
      unknown = key.str();
  }
  if (!unknown)
    return object;

  std::string message = "unknown key";
  llvm::StringRef best;
  unsigned bestDistance = 3;
  for (llvm::StringRef candidate : allowed) {
    unsigned distance = candidate.edit_distance(*unknown);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (!best.empty())
    message += " (did you mean '" + best.str() + "'?)";
  else
    message += " (expected one of: " + llvm::join(allowed, ", ") + ")";
  (void)error(childPath(path, *unknown), message);
  return nullptr;
}

const Value *ClusterReader::getRequired(const Object &object,
                                        llvm::StringRef path,
                                        llvm::StringRef key) {
  const Value *value = object.get(key);
  if (!value)
    (void)error(path, "missing required key '" + key + "'");
  return value;
}

mlir::LogicalResult ClusterReader::readString(const Value &value,
                                              llvm::StringRef path,
                                              bool allowEmpty,
                                              std::string &result) {
  std::optional<llvm::StringRef> str = value.getAsString();
  if (!str)
    return error(path, "expected a string, got " + describe(value));
  if (!allowEmpty && str->empty())
    return error(path, "expected a non-empty string");
  result = str->str();
  return mlir::success();
}

mlir::LogicalResult ClusterReader::readNumber(const Value &value,
                                              llvm::StringRef path,
                                              bool allowZero, double &result) {
  std::optional<double> number = value.getAsNumber();
  if (!number)
    return error(path, "expected a number, got " + describe(value));
  // Overlong literals such as 1e999 parse to infinity; reject those too.
  bool ok = std::isfinite(*number) && (allowZero ? *number >= 0 : *number > 0);
  if (!ok)
    return error(path, llvm::Twine(allowZero ? "expected a non-negative number"
                                             : "expected a positive number") +
                           ", got " + describe(value));
  // -0 reads as 0: the writer prints -0.0 as "-0", which reads back as the
  // integer 0 and prints "0" (the fuzzer's round trip found it).
  result = *number + 0.0;
  return mlir::success();
}

mlir::LogicalResult ClusterReader::readPositiveInteger(const Value &value,
                                                       llvm::StringRef path,
                                                       int64_t &result) {
  if (value.kind() != Value::Number)
    return error(path, "expected an integer, got " + describe(value));
  std::optional<int64_t> integer = getExactInteger(value);
  if (!integer)
    return error(path, "expected an integer, got " + describe(value));
  if (*integer < 1)
    return error(path, "expected a positive integer, got " + describe(value));
  result = *integer;
  return mlir::success();
}

mlir::LogicalResult ClusterReader::readLink(const Value &value,
                                            llvm::StringRef path,
                                            LinkSpec &link) {
  const Object *object =
      getObject(value, path, {"bandwidth", "latency", "shared_by"});
  if (!object)
    return mlir::failure();

  const Value *bandwidth = getRequired(*object, path, "bandwidth");
  if (!bandwidth || failed(readNumber(*bandwidth, childPath(path, "bandwidth"),
                                      /*allowZero=*/false, link.bandwidth)))
    return mlir::failure();

  link.latency = 0;
  if (const Value *latency = object->get("latency"))
    if (failed(readNumber(*latency, childPath(path, "latency"),
                          /*allowZero=*/true, link.latency)))
      return mlir::failure();

  link.sharedBy = 1;
  if (const Value *sharedBy = object->get("shared_by"))
    if (failed(readPositiveInteger(*sharedBy, childPath(path, "shared_by"),
                                   link.sharedBy)))
      return mlir::failure();
  return mlir::success();
}

mlir::LogicalResult ClusterReader::readLevel(const Value &value,
                                             llvm::StringRef path,
                                             LevelSpec &level) {
  const Object *object = getObject(value, path, {"name", "size", "link"});
  if (!object)
    return mlir::failure();

  const Value *name = getRequired(*object, path, "name");
  if (!name || failed(readString(*name, childPath(path, "name"),
                                 /*allowEmpty=*/false, level.name)))
    return mlir::failure();

  const Value *size = getRequired(*object, path, "size");
  if (!size ||
      failed(readPositiveInteger(*size, childPath(path, "size"), level.size)))
    return mlir::failure();

  const Value *link = getRequired(*object, path, "link");
  if (!link || failed(readLink(*link, childPath(path, "link"), level.link)))
    return mlir::failure();
  return mlir::success();
}

mlir::LogicalResult ClusterReader::readDevice(const Value &value,
                                              llvm::StringRef path,
                                              DeviceSpec &device) {
  const Object *object = getObject(
      value, path,
      {"peak_flops", "memory_bandwidth", "memory_capacity", "launch_overhead"});
  if (!object)
    return mlir::failure();

  const Value *peakFlops = getRequired(*object, path, "peak_flops");
  if (!peakFlops)
    return mlir::failure();
  std::string flopsPath = childPath(path, "peak_flops");
  const Object *flopsObject = peakFlops->getAsObject();
  if (!flopsObject)
    return error(flopsPath, "expected an object, got " + describe(*peakFlops));
  if (flopsObject->empty())
    return error(flopsPath, "expected at least one element type entry");
  // Visit entries in key order so the reported error is deterministic.
  std::vector<llvm::StringRef> dtypes;
  for (const auto &entry : *flopsObject)
    dtypes.push_back(entry.first);
  llvm::sort(dtypes);
  device.peakFlops.clear();
  for (llvm::StringRef dtype : dtypes) {
    double flops;
    if (failed(readNumber(*flopsObject->get(dtype), childPath(flopsPath, dtype),
                          /*allowZero=*/false, flops)))
      return mlir::failure();
    device.peakFlops[dtype.str()] = flops;
  }

  const Value *memoryBandwidth = getRequired(*object, path, "memory_bandwidth");
  if (!memoryBandwidth ||
      failed(readNumber(*memoryBandwidth, childPath(path, "memory_bandwidth"),
                        /*allowZero=*/false, device.memoryBandwidth)))
    return mlir::failure();

  const Value *memoryCapacity = getRequired(*object, path, "memory_capacity");
  if (!memoryCapacity ||
      failed(readPositiveInteger(*memoryCapacity,
                                 childPath(path, "memory_capacity"),
                                 device.memoryCapacity)))
    return mlir::failure();

  device.launchOverhead = 0;
  if (const Value *launchOverhead = object->get("launch_overhead"))
    if (failed(readNumber(*launchOverhead, childPath(path, "launch_overhead"),
                          /*allowZero=*/true, device.launchOverhead)))
      return mlir::failure();
  return mlir::success();
}

mlir::LogicalResult ClusterReader::readCluster(const Value &root,
                                               Cluster &cluster) {
  llvm::StringRef path = "$";
  const Object *object = getObject(root, path, {"name", "levels", "device"});
  if (!object)
    return mlir::failure();

  const Value *name = getRequired(*object, path, "name");
  if (!name || failed(readString(*name, childPath(path, "name"),
                                 /*allowEmpty=*/true, cluster.name)))
    return mlir::failure();

  const Value *levels = getRequired(*object, path, "levels");
  if (!levels)
    return mlir::failure();
  std::string levelsPath = childPath(path, "levels");
  const Array *levelArray = levels->getAsArray();
  if (!levelArray)
    return error(levelsPath, "expected an array, got " + describe(*levels));
  if (levelArray->empty())
    return error(levelsPath, "expected at least one level");

  cluster.levels.clear();
  llvm::StringMap<size_t> levelIndex;
  int64_t numDevices = 1;
  for (auto [index, levelValue] : llvm::enumerate(*levelArray)) {
    std::string levelPath = indexPath(levelsPath, index);
    LevelSpec level;
    if (failed(readLevel(levelValue, levelPath, level)))
      return mlir::failure();
    auto [it, inserted] = levelIndex.try_emplace(level.name, index);
    if (!inserted)
      return error(childPath(levelPath, "name"),
                   "duplicate level name '" + level.name + "' (also " +
                       indexPath(levelsPath, it->second) + ".name)");
    if (llvm::MulOverflow(numDevices, level.size, numDevices) ||
        numDevices > kMaxDevices)
      return error(childPath(levelPath, "size"),
                   "total device count exceeds the limit of " +
                       llvm::Twine(kMaxDevices));
    cluster.levels.push_back(std::move(level));
  }

  const Value *device = getRequired(*object, path, "device");
  if (!device ||
      failed(readDevice(*device, childPath(path, "device"), cluster.device)))
    return mlir::failure();
  return mlir::success();
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

mlir::FailureOr<Cluster> distir::parseClusterJSON(llvm::StringRef text,
                                                  ErrorFn emitError) {
  Value document(nullptr);
  std::string parseError;
  if (!parseJSON(text, document, parseError)) {
    emitError("invalid JSON: " + parseError);
    return mlir::failure();
  }

  if (std::optional<std::string> path = findDuplicateKey(text)) {
    emitError(*path + ": duplicate key");
    return mlir::failure();
  }

  Cluster cluster;
  if (failed(ClusterReader(emitError).readCluster(document, cluster)))
    return mlir::failure();
  // The reader already checked every field with its path; this is the
  // authoritative check in case the two ever drift apart.
  if (failed(verifyCluster(cluster, emitError)))
    return mlir::failure();
  return cluster;
}

Value distir::clusterToJSON(const Cluster &cluster) {
  Array levels;
  for (const LevelSpec &level : cluster.levels) {
    levels.push_back(Object{
        {"name", level.name},
        {"size", level.size},
        {"link", Object{{"bandwidth", level.link.bandwidth},
                        {"latency", level.link.latency},
                        {"shared_by", level.link.sharedBy}}},
    });
  }

  Object peakFlops;
  for (const auto &[dtype, flops] : cluster.device.peakFlops)
    peakFlops[dtype] = flops;

  return Object{
      {"name", cluster.name},
      {"levels", std::move(levels)},
      {"device", Object{{"peak_flops", std::move(peakFlops)},
                        {"memory_bandwidth", cluster.device.memoryBandwidth},
                        {"memory_capacity", cluster.device.memoryCapacity},
                        {"launch_overhead", cluster.device.launchOverhead}}},
  };
}
