//===- DistRankOps.td - per-rank communication ops ---------*- tablegen -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// The `dist_rank` dialect holds the communication ops of *per-rank* programs,
// the output of `dist-to-rank`. Unlike `dist` ops (global view: one operand
// per device), a `dist_rank` op is what one rank executes: a send, a receive,
// or its part in a collective over a group of global ranks.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_DIALECT_DIST_IR_DISTRANKOPS_TD
#define DISTIR_DIALECT_DIST_IR_DISTRANKOPS_TD

include "DistIR/Dialect/Dist/IR/DistAttrs.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def DistRank_Dialect : Dialect {
  let name = "dist_rank";
  let cppNamespace = "::distir::dist_rank";
  let summary = "Communication ops of per-rank programs";
  let description = [{
    The per-rank view of a `dist` program. `dist-to-rank` projects a global
    function onto each rank `R` as `@<name>_rank<R>`; communication in those
    functions uses the ops of this dialect. Each op is one rank's part of a
    point-to-point transfer or of a collective; a collective names its
    device group as the list of global ranks (`group`), in the operand order
    of the global op, so chunk `i` of a scatter or gather belongs to
    `group[i]`. Functions carry `dist_rank.rank` (the rank they run on),
    `dist_rank.num_ranks`, `dist_rank.program` (the global function) and
    `dist_rank.arg_map` / `dist_rank.result_map` (the global argument and
    result index of each of their arguments and results).

    Version log:
    * 0.1: send/recv and the eight collectives.
  }];
  let dependentDialects = ["::distir::dist::DistDialect"];
  // dist_rank.rank and the other function attributes are checked where
  // they are attached (lowerings rely on them).
  let hasOperationAttrVerify = 1;
}

class DistRank_Op<string mnemonic, list<Trait> traits = []>
    : Op<DistRank_Dialect, mnemonic, !listconcat(traits, [
        MemoryEffects<[MemRead, MemWrite]>])> {
  let hasVerifier = 1;
}

def DistRank_Tensor : Type<
    And<[IsTensorTypePred, HasRankPred, HasStaticShapePred]>,
    "statically shaped tensor", "::mlir::RankedTensorType">;

def DistRank_SendOp : DistRank_Op<"send"> {
  let summary = "Send a tensor to another rank (blocking)";
  let description = [{
    Matched by a `dist_rank.recv` with the same tag on rank `dest`.

    Example: `dist_rank.send %x to 1 tag 0 : tensor<4xf32>`
  }];
  let arguments = (ins DistRank_Tensor:$input, I64Attr:$dest, I64Attr:$tag);
  let assemblyFormat = "$input `to` $dest `tag` $tag attr-dict `:` type($input)";
}

def DistRank_RecvOp : DistRank_Op<"recv"> {
  let summary = "Receive a tensor from another rank (blocking)";
  let description = [{
    Example: `%y = dist_rank.recv from 0 tag 0 : tensor<4xf32>`
  }];
  let arguments = (ins I64Attr:$source, I64Attr:$tag);
  let results = (outs DistRank_Tensor:$result);
  let assemblyFormat = "`from` $source `tag` $tag attr-dict `:` type($result)";
}

def DistRank_AllReduceOp : DistRank_Op<"all_reduce"> {
  let summary = "This rank's part of an all-reduce over `group`";
  let description = [{
    Example:
    `%r = dist_rank.all_reduce #dist.reduction<sum> %x group [0, 1] : tensor<8xf32> -> tensor<8xf32>`
  }];
  let arguments = (ins DistRank_Tensor:$input, DenseI64ArrayAttr:$group,
                       Dist_ReductionKindAttr:$kind);
  let results = (outs DistRank_Tensor:$result);
  let assemblyFormat = [{
    qualified($kind) $input `group` $group attr-dict `:` type($input)
    `->` type($result)
  }];
}

def DistRank_AllGatherOp : DistRank_Op<"all_gather"> {
  let summary = "This rank's part of an all-gather over `group`";
  let arguments = (ins DistRank_Tensor:$input, DenseI64ArrayAttr:$group,
                       I64Attr:$dim);
  let results = (outs DistRank_Tensor:$result);
  let assemblyFormat = [{
    $input `group` $group `dim` $dim attr-dict `:` type($input) `->` type($result)
  }];
}

def DistRank_ReduceScatterOp : DistRank_Op<"reduce_scatter"> {
  let summary = "This rank's part of a reduce-scatter over `group`";
  let arguments = (ins DistRank_Tensor:$input, DenseI64ArrayAttr:$group,
                       Dist_ReductionKindAttr:$kind, I64Attr:$dim);
  let results = (outs DistRank_Tensor:$result);
  let assemblyFormat = [{
    qualified($kind) $input `group` $group `dim` $dim attr-dict `:`
    type($input) `->` type($result)
  }];
}

def DistRank_AllToAllOp : DistRank_Op<"all_to_all"> {
  let summary = "This rank's part of an all-to-all over `group`";
  let arguments = (ins DistRank_Tensor:$input, DenseI64ArrayAttr:$group,
                       I64Attr:$split_dim, I64Attr:$concat_dim);
  let results = (outs DistRank_Tensor:$result);
  let assemblyFormat = [{
    $input `group` $group `split_dim` $split_dim `concat_dim` $concat_dim
    attr-dict `:` type($input) `->` type($result)
  }];
}

def DistRank_BroadcastOp : DistRank_Op<"broadcast"> {
  let summary = "This rank's part of a broadcast from `root` over `group`";
  let description = [{
    The root passes the value; the other members pass nothing. Every member
    gets the value.

    Example (root, then another member):

    ```mlir
    func.func @root(%x: tensor<8xf32>) -> tensor<8xf32> {
      %r = dist_rank.broadcast root 0 group [0, 1] value %x : tensor<8xf32> : tensor<8xf32>
      return %r : tensor<8xf32>
    }
    func.func @member() -> tensor<8xf32> {
      %s = dist_rank.broadcast root 0 group [0, 1] : tensor<8xf32>
      return %s : tensor<8xf32>
    }
    ```
  }];
  let arguments = (ins Optional<DistRank_Tensor>:$input, I64Attr:$root,
                       DenseI64ArrayAttr:$group);
  let results = (outs DistRank_Tensor:$result);
  let assemblyFormat = [{
    `root` $root `group` $group (`value` $input^ `:` type($input))? attr-dict
    `:` type($result)
  }];
}

def DistRank_ScatterOp : DistRank_Op<"scatter"> {
  let summary = "This rank's part of a scatter from `root` over `group`";
  let arguments = (ins Optional<DistRank_Tensor>:$input, I64Attr:$root,
                       DenseI64ArrayAttr:$group, I64Attr:$dim);
  let results = (outs DistRank_Tensor:$result);
  let assemblyFormat = [{
    `root` $root `group` $group `dim` $dim (`value` $input^ `:` type($input))?
    attr-dict `:` type($result)
  }];
}

def DistRank_ReduceOp : DistRank_Op<"reduce"> {
  let summary = "This rank's part of a reduction onto `root` over `group`";
  let description = [{
    Every member passes a value; only the root gets a result.
  }];
  let arguments = (ins DistRank_Tensor:$input, I64Attr:$root,
                       DenseI64ArrayAttr:$group, Dist_ReductionKindAttr:$kind);
  let results = (outs Optional<DistRank_Tensor>:$result);
  let assemblyFormat = [{
    qualified($kind) $input `root` $root `group` $group attr-dict `:`
    type($input) (`->` type($result)^)?
  }];
}

def DistRank_GatherOp : DistRank_Op<"gather"> {
  let summary = "This rank's part of a gather onto `root` over `group`";
  let arguments = (ins DistRank_Tensor:$input, I64Attr:$root,
                       DenseI64ArrayAttr:$group, I64Attr:$dim);
  let results = (outs Optional<DistRank_Tensor>:$result);
  let assemblyFormat = [{
    $input `root` $root `group` $group `dim` $dim attr-dict `:` type($input)
    (`->` type($result)^)?
  }];
}

#endif // DISTIR_DIALECT_DIST_IR_DISTRANKOPS_TD
