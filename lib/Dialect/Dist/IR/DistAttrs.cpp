//===- DistAttrs.cpp - dist dialect attributes
//------------------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Dialect/Dist/IR/DistAttrs.h"
#include "DistIR/Dialect/Dist/IR/DistCluster.h"
#include "DistIR/Dialect/Dist/IR/DistDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace distir;
using namespace distir::dist;

#include "DistIR/Dialect/Dist/IR/DistEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "DistIR/Dialect/Dist/IR/DistAttrs.cpp.inc"

void DistDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "DistIR/Dialect/Dist/IR/DistAttrs.cpp.inc"
      >();
}

DeviceAttr distir::dist::getDevice(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return {};
  return dyn_cast_or_null<DeviceAttr>(tensor.getEncoding());
}

void distir::dist::copyStageTags(Operation *from, Operation *to,
                                 bool overwrite) {
  if (!from)
    return;
  // An op made in an adjoint op's stead belongs to the same adjoint; a
  // forward op's id is its own (two ops with one id pair with nothing).
  for (StringRef name : {kLayerAttrName, kPhaseAttrName, kVjpOfAttr})
    if (Attribute attr = from->getAttr(name);
        attr && (overwrite || !to->getAttr(name)))
      to->setAttr(name, attr);
}

void distir::dist::dropStageTags(Operation *op) {
  for (StringRef name :
       {kLayerAttrName, kPhaseAttrName, kVjpIdAttr, kVjpOfAttr})
    op->removeAttr(name);
}

RankedTensorType distir::dist::withDevice(RankedTensorType type,
                                          int64_t device) {
  return RankedTensorType::get(type.getShape(), type.getElementType(),
                               DeviceAttr::get(type.getContext(), device));
}

//===----------------------------------------------------------------------===//
// DeviceAttr
//===----------------------------------------------------------------------===//

LogicalResult DeviceAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 int64_t id) {
  if (id < 0)
    return emitError() << "device id must be non-negative, got " << id;
  return success();
}

//===----------------------------------------------------------------------===//
// ClusterAttr
//===----------------------------------------------------------------------===//

LogicalResult ClusterAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  StringRef name, ArrayRef<LevelAttr> levels,
                                  DeviceSpecAttr device) {
  // One set of rules for every face of a cluster: convert and reuse them.
  FailureOr<Cluster> cluster = clusterFromAttrParts(
      name, levels, device, [&](const Twine &msg) { emitError() << msg; });
  if (failed(cluster))
    return failure();
  return verifyCluster(*cluster, [&](const Twine &msg) { emitError() << msg; });
}

int64_t ClusterAttr::getNumDevices() const {
  int64_t n = 1;
  for (LevelAttr level : getLevels())
    n *= level.getSize();
  return n;
}

//===----------------------------------------------------------------------===//
// Sharding parameter syntax
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>> distir::dist::parseIntList(AsmParser &parser) {
  SmallVector<int64_t> values;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                     [&]() -> ParseResult {
                                       int64_t value;
                                       if (parser.parseInteger(value))
                                         return failure();
                                       values.push_back(value);
                                       return success();
                                     }))
    return failure();
  return values;
}

void distir::dist::printIntList(AsmPrinter &printer, ArrayRef<int64_t> values) {
  printer << '[';
  llvm::interleaveComma(values, printer);
  printer << ']';
}

FailureOr<SmallVector<DenseI64ArrayAttr>>
distir::dist::parseSplitAxes(AsmParser &parser) {
  SmallVector<DenseI64ArrayAttr> split;
  auto parseAxes = [&]() -> ParseResult {
    FailureOr<SmallVector<int64_t>> axes = parseIntList(parser);
    if (failed(axes))
      return failure();
    split.push_back(DenseI64ArrayAttr::get(parser.getContext(), *axes));
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseAxes))
    return failure();
  return split;
}

void distir::dist::printSplitAxes(AsmPrinter &printer,
                                  ArrayRef<DenseI64ArrayAttr> split) {
  printer << '[';
  llvm::interleaveComma(split, printer, [&](DenseI64ArrayAttr axes) {
    printIntList(printer, axes.asArrayRef());
  });
  printer << ']';
}

FailureOr<ReductionKind>
distir::dist::parseReductionKeyword(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<ReductionKind> kind = symbolizeReductionKind(keyword);
  if (!kind)
    return parser.emitError(loc) << "unknown reduction '" << keyword
                                 << "' (sum, prod, max, min or avg)";
  return *kind;
}

//===----------------------------------------------------------------------===//
// MeshAttr
//===----------------------------------------------------------------------===//

/// Meshes larger than this are refused: no cluster preset comes close, and
/// products of axis sizes stay far from int64 overflow.
static constexpr int64_t kMaxMeshPositions = int64_t(1) << 24;

LogicalResult MeshAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               StringRef name, ArrayRef<int64_t> shape,
                               ArrayRef<int64_t> devices) {
  if (shape.empty())
    return emitError() << "mesh needs at least one axis";
  int64_t positions = 1;
  for (auto [axis, size] : llvm::enumerate(shape)) {
    if (size < 1)
      return emitError() << "mesh axis " << axis
                         << " must have a positive size, got " << size;
    if (size > kMaxMeshPositions / positions)
      return emitError() << "mesh has more than " << kMaxMeshPositions
                         << " positions";
    positions *= size;
  }
  if (devices.empty())
    return success();
  if (static_cast<int64_t>(devices.size()) != positions)
    return emitError() << "mesh of " << positions << " positions lists "
                       << devices.size() << " devices";
  llvm::SmallDenseSet<int64_t> seen;
  for (int64_t device : devices) {
    if (device < 0)
      return emitError() << "mesh device ids must be non-negative, got "
                         << device;
    if (!seen.insert(device).second)
      return emitError() << "mesh lists device " << device << " twice";
  }
  return success();
}

int64_t MeshAttr::getNumPositions() const {
  int64_t n = 1;
  for (int64_t size : getShape())
    n *= size;
  return n;
}

int64_t MeshAttr::getDevice(int64_t position) const {
  return getDevices().empty() ? position : getDevices()[position];
}

SmallVector<int64_t> MeshAttr::getCoordinates(int64_t position) const {
  ArrayRef<int64_t> shape = getShape();
  SmallVector<int64_t> coords(shape.size());
  for (int64_t axis = shape.size() - 1; axis >= 0; --axis) {
    coords[axis] = position % shape[axis];
    position /= shape[axis];
  }
  return coords;
}

//===----------------------------------------------------------------------===//
// ShardingAttr
//===----------------------------------------------------------------------===//

static int64_t productOfAxes(ArrayRef<int64_t> meshShape,
                             ArrayRef<int64_t> axes) {
  int64_t n = 1;
  for (int64_t axis : axes)
    n *= meshShape[axis];
  return n;
}

LogicalResult
ShardingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                     MeshAttr mesh, ArrayRef<DenseI64ArrayAttr> split,
                     ArrayRef<int64_t> partial, ReductionKind reduction,
                     ArrayRef<int64_t> offsets, ArrayRef<int64_t> groups) {
  if (!mesh)
    return emitError() << "sharding needs a mesh";
  if (!groups.empty() && groups.back() == 1)
    return emitError() << "'groups' must not end in 1 (the default)";
  for (auto [dim, count] : llvm::enumerate(groups)) {
    if (count < 1)
      return emitError() << "'groups' of dimension " << dim
                         << " must be at least 1, got " << count;
    if (count > 1 && (dim >= split.size() || split[dim].empty()))
      return emitError() << "dimension " << dim << " has " << count
                         << " groups but is not split";
    if (count > 1 && !offsets.empty())
      return emitError() << "'groups' and 'offsets' do not combine";
  }
  int64_t rank = mesh.getShape().size();
  llvm::SmallDenseSet<int64_t> used;
  auto useAxis = [&](int64_t axis, const Twine &where) -> LogicalResult {
    if (axis < 0 || axis >= rank)
      return emitError() << where << " names mesh axis " << axis
                         << ", but the mesh has rank " << rank;
    if (!used.insert(axis).second)
      return emitError() << "mesh axis " << axis << " is used twice";
    return success();
  };
  int64_t expectedOffsets = 0;
  for (auto [dim, axes] : llvm::enumerate(split)) {
    for (int64_t axis : axes.asArrayRef())
      if (failed(useAxis(axis, "dimension " + Twine(dim))))
        return failure();
    if (!axes.empty())
      expectedOffsets += productOfAxes(mesh.getShape(), axes.asArrayRef()) + 1;
  }
  for (int64_t axis : partial)
    if (failed(useAxis(axis, "'partial'")))
      return failure();
  if (offsets.empty())
    return success();
  if (static_cast<int64_t>(offsets.size()) != expectedOffsets)
    return emitError() << "'offsets' needs " << expectedOffsets
                       << " values (shards + 1 per split dimension), got "
                       << offsets.size();
  size_t at = 0;
  for (auto [dim, axes] : llvm::enumerate(split)) {
    if (axes.empty())
      continue;
    int64_t shards = productOfAxes(mesh.getShape(), axes.asArrayRef());
    if (offsets[at] != 0)
      return emitError() << "'offsets' of dimension " << dim
                         << " must start at 0, got " << offsets[at];
    for (int64_t i = 0; i < shards; ++i)
      if (offsets[at + i + 1] < offsets[at + i])
        return emitError() << "'offsets' of dimension " << dim
                           << " must not decrease";
    at += shards + 1;
  }
  return success();
}

ArrayRef<int64_t> ShardingAttr::getSplitAxes(unsigned dim) const {
  if (dim >= getSplit().size())
    return {};
  return getSplit()[dim].asArrayRef();
}

int64_t ShardingAttr::getNumShards(unsigned dim) const {
  return productOfAxes(getMesh().getShape(), getSplitAxes(dim));
}

int64_t ShardingAttr::getGroupCount(unsigned dim) const {
  return dim < getGroups().size() ? getGroups()[dim] : 1;
}

bool ShardingAttr::isStrided() const {
  return llvm::any_of(getGroups(), [](int64_t count) { return count > 1; });
}

int64_t ShardingAttr::getShardIndex(unsigned dim,
                                    ArrayRef<int64_t> coordinates) const {
  int64_t index = 0;
  for (int64_t axis : getSplitAxes(dim))
    index = index * getMesh().getShape()[axis] + coordinates[axis];
  return index;
}

std::pair<int64_t, int64_t>
ShardingAttr::getShardRange(unsigned dim, int64_t size, int64_t shard) const {
  assert(getGroupCount(dim) == 1 && "a strided split has no single range");
  int64_t shards = getNumShards(dim);
  // Offsets list only split dimensions: an unsplit one is whole.
  if (!getOffsets().empty() && !getSplitAxes(dim).empty()) {
    size_t at = 0;
    for (unsigned d = 0; d < dim; ++d)
      if (int64_t k = getSplitAxes(d).empty() ? 0 : getNumShards(d))
        at += k + 1;
    return {getOffsets()[at + shard], getOffsets()[at + shard + 1]};
  }
  // Balanced: floor(i * n / k), computed without overflowing i * n.
  auto start = [&](int64_t i) {
    return (i / shards) * size + ((i % shards) * size) / shards;
  };
  return {start(shard), start(shard + 1)};
}

SmallVector<int64_t> ShardingAttr::getLocalShape(ArrayRef<int64_t> shape,
                                                 int64_t position) const {
  SmallVector<int64_t> coords = getMesh().getCoordinates(position);
  SmallVector<int64_t> local(shape);
  for (unsigned dim = 0; dim < shape.size(); ++dim) {
    if (getSplitAxes(dim).empty())
      continue;
    if (getGroupCount(dim) > 1) {
      local[dim] = shape[dim] / getNumShards(dim); // even (verifyFor)
      continue;
    }
    auto [begin, end] =
        getShardRange(dim, shape[dim], getShardIndex(dim, coords));
    local[dim] = end - begin;
  }
  return local;
}

bool ShardingAttr::isReplicated() const {
  return getPartial().empty() &&
         llvm::all_of(getSplit(),
                      [](DenseI64ArrayAttr axes) { return axes.empty(); });
}

LogicalResult
ShardingAttr::verifyFor(Type type,
                        function_ref<InFlightDiagnostic()> emitError) const {
  // Bufferized programs keep their annotations on the buffers.
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !isa<RankedTensorType, MemRefType>(type))
    return emitError() << "a sharding needs a ranked tensor or memref, got "
                       << type;
  if (getSplit().size() > static_cast<size_t>(shaped.getRank()))
    return emitError() << "sharding splits " << getSplit().size()
                       << " dimensions of a rank-" << shaped.getRank()
                       << " tensor";
  for (unsigned dim = 0; dim < getSplit().size(); ++dim) {
    if (getSplitAxes(dim).empty())
      continue;
    int64_t size = shaped.getDimSize(dim);
    if (ShapedType::isDynamic(size))
      return emitError() << "sharding splits dynamic dimension " << dim;
    int64_t shards = getNumShards(dim);
    if (int64_t count = getGroupCount(dim);
        count > 1 && size % (count * shards) != 0)
      return emitError() << "dimension " << dim << " of " << size
                         << " elements does not divide into " << count
                         << " groups of " << shards << " shards";
    if (getOffsets().empty())
      continue;
    int64_t end = getShardRange(dim, size, shards - 1).second;
    if (end != size)
      return emitError() << "'offsets' of dimension " << dim << " end at "
                         << end << ", but the dimension has " << size
                         << " elements";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// The dist.sharding annotation
//===----------------------------------------------------------------------===//

LogicalResult distir::dist::verifyOpShardings(Operation *op, Attribute attr) {
  SmallVector<ShardingAttr> shardings;
  if (auto one = dyn_cast<ShardingAttr>(attr)) {
    shardings.push_back(one);
  } else if (auto array = dyn_cast<ArrayAttr>(attr)) {
    for (Attribute element : array) {
      auto sharding = dyn_cast<ShardingAttr>(element);
      if (!sharding)
        return op->emitError() << "'" << kShardingAttrName
                               << "' array elements must be #dist.sharding, "
                                  "got "
                               << element;
      shardings.push_back(sharding);
    }
  } else {
    return op->emitError() << "'" << kShardingAttrName
                           << "' must be a #dist.sharding or an array of "
                              "them, got "
                           << attr;
  }
  if (shardings.size() != op->getNumResults())
    return op->emitError() << "'" << kShardingAttrName << "' gives "
                           << shardings.size() << " shardings for "
                           << op->getNumResults() << " results";
  for (unsigned index = 0; index < shardings.size(); ++index)
    if (failed(
            shardings[index].verifyFor(op->getResult(index).getType(), [&]() {
              return op->emitError() << "result #" << index << ": ";
            })))
      return failure();
  return success();
}

ShardingAttr distir::dist::getResultSharding(Operation *op, unsigned index) {
  Attribute attr = op->getAttr(kShardingAttrName);
  if (auto one = dyn_cast_or_null<ShardingAttr>(attr))
    return index == 0 ? one : ShardingAttr();
  if (auto array = dyn_cast_or_null<ArrayAttr>(attr))
    if (index < array.size())
      return dyn_cast<ShardingAttr>(array[index]);
  return {};
}
