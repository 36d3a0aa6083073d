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

#endif // DISTIR_DIALECT_DIST_IR_DISTATTRS_TD
