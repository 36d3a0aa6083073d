//===- DistAttrs.td - dist dialect attributes --------------*- tablegen -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_DIALECT_DIST_IR_DISTATTRS_TD
#define DISTIR_DIALECT_DIST_IR_DISTATTRS_TD

include "DistIR/Dialect/Dist/IR/DistDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/EnumAttr.td"

class Dist_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Dist_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

/// A binary64 parameter printed with the shortest text that round-trips.
/// Stored as APFloat because attribute storage needs hash_value().
class Dist_DoubleParameter<string desc>
    : AttrOrTypeParameter<"::llvm::APFloat", desc> {
  let comparator = "$_lhs.bitwiseIsEqual($_rhs)";
  let parser = [{ [&]() -> ::mlir::FailureOr<::llvm::APFloat> {
    double value;
    if (::mlir::failed($_parser.parseFloat(value)))
      return ::mlir::failure();
    return ::llvm::APFloat(value);
  }() }];
  let printer = [{ $_printer.printFloat($_self) }];
}

//===----------------------------------------------------------------------===//
// Placement
//===----------------------------------------------------------------------===//

def Dist_DeviceAttr : Dist_Attr<"Device", "device"> {
  let summary = "Device on which a tensor value lives";
  let description = [{
    Used as the encoding of a ranked tensor type to place the value on one
    device of the cluster. Device ids are non-negative and index the devices
    of the cluster in row-major order of its hierarchy levels.

    Example:

    ```mlir
    %0 = tensor.empty() : tensor<4x8xf32, #dist.device<3>>
    ```
  }];
  let parameters = (ins "int64_t":$id);
  let assemblyFormat = "`<` $id `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

def Dist_ReductionKind : I32EnumAttr<"ReductionKind",
    "Reduction applied by a reducing collective", [
      I32EnumAttrCase<"Sum", 0, "sum">,
      I32EnumAttrCase<"Prod", 1, "prod">,
      I32EnumAttrCase<"Max", 2, "max">,
      I32EnumAttrCase<"Min", 3, "min">,
      I32EnumAttrCase<"Avg", 4, "avg">
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::distir::dist";
}

def Dist_ReductionKindAttr
    : EnumAttr<Dist_Dialect, Dist_ReductionKind, "reduction"> {
  let assemblyFormat = "`<` $value `>`";
}

/// A bracketed list of `#dist.level` attributes.
def Dist_LevelListParameter
    : ArrayRefParameter<"::distir::dist::LevelAttr", "levels, outermost first"> {
  let parser = [{ [&]() -> ::mlir::FailureOr<::llvm::SmallVector<::distir::dist::LevelAttr>> {
    ::llvm::SmallVector<::distir::dist::LevelAttr> levels;
    if (::mlir::failed($_parser.parseCommaSeparatedList(
            ::mlir::AsmParser::Delimiter::Square, [&]() -> ::mlir::ParseResult {
              ::distir::dist::LevelAttr level;
              if ($_parser.parseAttribute(level))
                return ::mlir::failure();
              levels.push_back(level);
              return ::mlir::success();
            })))
      return ::mlir::failure();
    return levels;
  }() }];
  let printer = [{
    $_printer << '[';
    ::llvm::interleaveComma($_self, $_printer, [&](::distir::dist::LevelAttr level) {
      $_printer.printAttribute(level);
    });
    $_printer << ']';
  }];
}

//===----------------------------------------------------------------------===//
// Cluster description
//===----------------------------------------------------------------------===//

def Dist_LevelAttr : Dist_Attr<"Level", "level"> {
  let summary = "One level of a cluster hierarchy and its link class";
  let description = [{
    `size` devices (or groups) at this level; the link of the level connects
    devices whose coordinates first differ here. `bandwidth` is in bytes per
    second per direction, `latency` in seconds, and `shared_by` devices share
    one such link.

    Example: `#dist.level<name = "node", size = 2, bandwidth = 5.0e+10,
    latency = 5.0e-06, shared_by = 8>`
  }];
  let parameters = (ins
    StringRefParameter<"level name">:$name,
    "int64_t":$size,
    Dist_DoubleParameter<"bytes per second per direction">:$bandwidth,
    Dist_DoubleParameter<"seconds per message">:$latency,
    DefaultValuedParameter<"int64_t", "1", "devices sharing one link">:$shared_by
  );
  let assemblyFormat = "`<` struct(params) `>`";
}

def Dist_DeviceSpecAttr : Dist_Attr<"DeviceSpec", "device_spec"> {
  let summary = "Specification shared by every device of a cluster";
  let description = [{
    `peak_flops` maps element type names (`f32`, `f16`, `bf16`, ...) to peak
    FLOP/s; `memory_bandwidth` is in bytes per second, `memory_capacity` in
    bytes and `launch_overhead` in seconds per kernel.
  }];
  let parameters = (ins
    "::mlir::DictionaryAttr":$peak_flops,
    Dist_DoubleParameter<"bytes per second">:$memory_bandwidth,
    "int64_t":$memory_capacity,
    Dist_DoubleParameter<"seconds per kernel">:$launch_overhead
  );
  let assemblyFormat = "`<` struct(params) `>`";
}

def Dist_ClusterAttr : Dist_Attr<"Cluster", "cluster"> {
  let summary = "The cluster a program targets";
  let description = [{
    A hierarchy of levels (outermost first) and the device specification.
    Attach it to a module as `dist.cluster` (the `dist-attach-cluster` pass
    does so from a preset name or a JSON file).

    Example:

    ```mlir
    module attributes {dist.cluster = #dist.cluster<name = "tiny",
        levels = [#dist.level<name = "node", size = 1, bandwidth = 1.0e+10,
                              latency = 0.0, shared_by = 1>,
                  #dist.level<name = "gpu", size = 2, bandwidth = 1.0e+11,
                              latency = 1.0e-06, shared_by = 1>],
        device = #dist.device_spec<peak_flops = {f32 = 1.0e+13 : f64},
                                   memory_bandwidth = 1.0e+12,
                                   memory_capacity = 1073741824,
                                   launch_overhead = 1.0e-05>>} {
    }
    ```
  }];
  let parameters = (ins
    StringRefParameter<"cluster name">:$name,
    Dist_LevelListParameter:$levels,
    "::distir::dist::DeviceSpecAttr":$device
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Number of devices: the product of the level sizes.
    int64_t getNumDevices() const;
  }];
}


//===----------------------------------------------------------------------===//
// Meshes and shardings
//===----------------------------------------------------------------------===//

/// `[[0], [], [1, 2]]`: for each tensor dimension, the mesh axes that split
/// it, major to minor.
def Dist_SplitAxesParameter
    : ArrayRefParameter<"::mlir::DenseI64ArrayAttr",
                        "mesh axes per tensor dimension"> {
  let parser = [{ ::distir::dist::parseSplitAxes($_parser) }];
  let printer = [{ ::distir::dist::printSplitAxes($_printer, $_self) }];
}

/// `[2, 4]`: a bracketed list of integers.
class Dist_IntListParameter<string desc>
    : ArrayRefParameter<"int64_t", desc> {
  let parser = [{ ::distir::dist::parseIntList($_parser) }];
  let printer = [{ ::distir::dist::printIntList($_printer, $_self) }];
}

class Dist_OptionalIntListParameter<string desc>
    : Dist_IntListParameter<desc> {
  let defaultValue = "::llvm::SmallVector<int64_t>()";
  let comparator =
      "::llvm::ArrayRef<int64_t>($_lhs) == ::llvm::ArrayRef<int64_t>($_rhs)";
}

def Dist_ReductionKindParameter
    : AttrOrTypeParameter<"::distir::dist::ReductionKind",
                          "reduction of pending partial values"> {
  let parser = [{ ::distir::dist::parseReductionKeyword($_parser) }];
  let printer = [{ $_printer << ::distir::dist::stringifyReductionKind($_self) }];
  let defaultValue = "::distir::dist::ReductionKind::Sum";
}

def Dist_MeshAttr : Dist_Attr<"Mesh", "mesh"> {
  let summary = "An N-d arrangement of cluster devices";
  let description = [{
    `shape` gives the size of each mesh axis (outermost first); `devices`
    lists the cluster device at each mesh position in row-major order
    (default: devices 0 .. N-1). `name` is optional and only informative
    (pipeline stages name their meshes).

    Example: `#dist.mesh<shape = [2, 4]>`,
    `#dist.mesh<name = "stage1", shape = [2], devices = [4, 6]>`
  }];
  let parameters = (ins
    StringRefParameter<"mesh name", "\"\"">:$name,
    Dist_IntListParameter<"size of each mesh axis">:$shape,
    Dist_OptionalIntListParameter<"device of each position">:$devices
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Number of positions: the product of the axis sizes.
    int64_t getNumPositions() const;
    /// Cluster device at a row-major mesh position.
    int64_t getDevice(int64_t position) const;
    /// Coordinates of a row-major mesh position.
    ::llvm::SmallVector<int64_t> getCoordinates(int64_t position) const;
  }];
}

def Dist_ShardingAttr : Dist_Attr<"Sharding", "sharding"> {
  let summary = "How a tensor value is split over a device mesh";
  let description = [{
    `split` has one entry per leading tensor dimension (missing trailing
    entries are empty): the mesh axes that split that dimension, major to
    minor, so dimension d has `k_d` = product of those axes' sizes shards.
    Mesh axes that split no dimension replicate the value along them, except
    the axes in `partial`: along those, the devices hold partial values whose
    `reduction` (default `sum`) is the tensor, pending an all-reduce or a
    reduce-scatter (a split reduction loop).

    Shard `i` of dimension d covers `[floor(i * n / k_d), floor((i + 1) *
    n / k_d))` of its `n` elements: even when `k_d` divides `n`, balanced
    within one element otherwise. `offsets` overrides this for uneven splits:
    for each split dimension in order, `k_d + 1` non-decreasing offsets from
    0 to `n` (the form of upstream `shard.sharding`'s
    `sharded_dims_offsets`).

    `groups` makes a split strided (PyTorch's `_StridedShard`): with
    `g_d > 1` entries for dimension d, the dimension is `g_d` equal groups
    laid end to end and its split axes split each group, so shard `i` holds
    block `i` of every group, in group order (`n / (g_d * k_d)` elements
    each). A fused Q/K/V projection split by heads is one: each rank holds
    its heads of Q, of K and of V. Every grouped dimension is split and
    divides evenly; `groups` does not end in 1 (the default) and does not
    combine with `offsets`.

    As a discardable attribute `dist.sharding` it annotates a function
    argument, or an op (one sharding, or an array of one per result):
    the distribution a plan chose for the value, which partitioning
    materializes as placed values.

    Examples:

    ```mlir
    func.func private @shardings(
        // Rows split over mesh axis 0, columns over axis 1.
        tensor<8x16xf32> {dist.sharding = #dist.sharding<
            mesh = <shape = [2, 4]>, split = [[0], [1]]>},
        // Replicated over axis 0, partial sums over axis 1.
        tensor<8x16xf32> {dist.sharding = #dist.sharding<
            mesh = <shape = [2, 4]>, split = [], partial = [1]>},
        // A vocabulary of 10 over 4 shards as 3, 3, 2, 2.
        tensor<2x10xf32> {dist.sharding = #dist.sharding<
            mesh = <shape = [4]>, split = [[], [0]],
            offsets = [0, 3, 6, 8, 10]>},
        // Q, K and V side by side, each split by heads over 2 ranks: rank
        // 0 holds columns 0-15, 32-47 and 64-79.
        tensor<32x96xf32> {dist.sharding = #dist.sharding<
            mesh = <shape = [2]>, split = [[], [0]], groups = [1, 3]>})
    ```
  }];
  let parameters = (ins
    "::distir::dist::MeshAttr":$mesh,
    Dist_SplitAxesParameter:$split,
    Dist_OptionalIntListParameter<"partial mesh axes">:$partial,
    Dist_ReductionKindParameter:$reduction,
    Dist_OptionalIntListParameter<"shard offsets">:$offsets,
    Dist_OptionalIntListParameter<"groups of each dimension">:$groups
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let builders = [
    // Split axes per dimension, nothing partial; trailing unsplit
    // dimensions and trailing 1 groups are dropped (the printed form, so
    // equal layouts give equal attributes). Groups of unsplit dimensions
    // are kept for the verifier to refuse.
    AttrBuilderWithInferredContext<(ins
        "::distir::dist::MeshAttr":$mesh,
        "::llvm::ArrayRef<::llvm::SmallVector<int64_t>>":$split,
        CArg<"::llvm::ArrayRef<int64_t>", "{}">:$offsets,
        CArg<"::llvm::ArrayRef<int64_t>", "{}">:$groups), [{
      ::mlir::MLIRContext *context = mesh.getContext();
      ::llvm::SmallVector<::mlir::DenseI64ArrayAttr> axes;
      for (::llvm::ArrayRef<int64_t> dimAxes : split)
        axes.push_back(::mlir::DenseI64ArrayAttr::get(context, dimAxes));
      while (!axes.empty() && axes.back().empty())
        axes.pop_back();
      ::llvm::ArrayRef<int64_t> trimmed = groups;
      while (!trimmed.empty() && trimmed.back() == 1)
        trimmed = trimmed.drop_back();
      return $_get(context, mesh, axes, ::llvm::ArrayRef<int64_t>(),
                   ::distir::dist::ReductionKind::Sum, offsets, trimmed);
    }]>
  ];
  let extraClassDeclaration = [{
    /// Mesh axes splitting dimension `dim` (empty past the split list).
    ::llvm::ArrayRef<int64_t> getSplitAxes(unsigned dim) const;
    /// Number of shards of dimension `dim`.
    int64_t getNumShards(unsigned dim) const;
    /// Which shard of `dim` the mesh position with `coordinates` holds.
    int64_t getShardIndex(unsigned dim,
                          ::llvm::ArrayRef<int64_t> coordinates) const;
    /// Groups of dimension `dim` (1 past the groups list).
    int64_t getGroupCount(unsigned dim) const;
    /// True when some dimension is split in groups (strided).
    bool isStrided() const;
    /// Half-open range of shard `shard` of dimension `dim` of size `size`;
    /// a contiguous split only (not isStrided() for `dim`).
    std::pair<int64_t, int64_t> getShardRange(unsigned dim, int64_t size,
                                              int64_t shard) const;
    /// Shape of the piece at mesh position `position` of a `shape` tensor.
    ::llvm::SmallVector<int64_t> getLocalShape(::llvm::ArrayRef<int64_t> shape,
                                               int64_t position) const;
    /// True when no dimension is split and nothing is partial.
    bool isReplicated() const;
    /// Checks the sharding against the type of the value it annotates.
    ::mlir::LogicalResult verifyFor(
        ::mlir::Type type,
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError) const;
  }];
}

#endif // DISTIR_DIALECT_DIST_IR_DISTATTRS_TD
