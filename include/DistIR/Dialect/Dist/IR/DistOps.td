//===- DistOps.td - dist dialect operations ----------------*- tablegen -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_DIALECT_DIST_IR_DISTOPS_TD
#define DISTIR_DIALECT_DIST_IR_DISTOPS_TD

include "DistIR/Dialect/Dist/IR/DistAttrs.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Dist_PlacedTensor : Type<
    And<[IsTensorTypePred, HasRankPred, HasStaticShapePred,
         CPred<"::llvm::isa_and_nonnull<::distir::dist::DeviceAttr>("
               "::llvm::cast<::mlir::RankedTensorType>($_self).getEncoding())">]>,
    "statically shaped tensor placed on a device (#dist.device encoding)",
    "::mlir::RankedTensorType">;

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

class Dist_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dist_Dialect, mnemonic, traits>;

/// Communication ops move data; they are not pure so that CSE and DCE keep
/// them in place (program order is the schedule).
class Dist_CommOp<string mnemonic, list<Trait> traits = []>
    : Dist_Op<mnemonic, !listconcat(traits, [
        DeclareOpInterfaceMethods<MemoryEffectsOpInterface>])> {
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Point to point
//===----------------------------------------------------------------------===//

def Dist_SendOp : Dist_CommOp<"send"> {
  let summary = "Copy a value to another device";
  let description = [{
    Sends `input` from the device it lives on to the device of the result
    type. In the per-rank view this becomes a send on the source and a
    receive on the destination.

    ```
    device 0: [x]  ──►  device 1: [x]
    ```

    Example:

    ```mlir
    !t0 = tensor<4x8xf32, #dist.device<0>>
    !t1 = tensor<4x8xf32, #dist.device<1>>
    func.func @send(%x: !t0) -> !t1 {
      %y = dist.send %x : !t0 -> !t1
      return %y : !t1
    }
    ```

    **Constraints:**
    * the result has the shape and element type of the input;
    * the result lives on a different device than the input.
  }];
  let arguments = (ins Dist_PlacedTensor:$input);
  let results = (outs Dist_PlacedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

//===----------------------------------------------------------------------===//
// Collectives with one operand and one result per device
//===----------------------------------------------------------------------===//

class Dist_GroupOp<string mnemonic, list<Trait> traits = []>
    : Dist_CommOp<mnemonic, !listconcat(traits, [
        InferTypeOpAdaptor])> {
  let results = (outs Variadic<Dist_PlacedTensor>:$results);
}

def Dist_AllReduceOp : Dist_GroupOp<"all_reduce"> {
  let summary = "Reduce one value per device and give the result to all";
  let description = [{
    Each participating device contributes one operand; every device receives
    the element-wise reduction of all operands. Result `i` lives on the
    device of operand `i`.

    ```
    device 0: [a]      device 0: [a+b]
    device 1: [b]  ──► device 1: [a+b]
    ```

    Example:

    ```mlir
    !t0 = tensor<8xf32, #dist.device<0>>
    !t1 = tensor<8xf32, #dist.device<1>>
    func.func @all_reduce(%a: !t0, %b: !t1) -> (!t0, !t1) {
      %r:2 = dist.all_reduce sum %a, %b : !t0, !t1
      return %r#0, %r#1 : !t0, !t1
    }
    ```

    **Constraints:**
    * at least one operand, each on a distinct device;
    * all operands have the same shape and element type;
    * `avg` needs a floating-point element type, other kinds an integer or
      floating-point one.
  }];
  let arguments = (ins Dist_ReductionKindAttr:$kind,
                       Variadic<Dist_PlacedTensor>:$inputs);
  let assemblyFormat = "custom<ReductionKind>($kind) $inputs attr-dict `:` type($inputs)";
}

def Dist_AllGatherOp : Dist_GroupOp<"all_gather"> {
  let summary = "Concatenate one value per device and give it to all";
  let description = [{
    Every device receives the concatenation, along `dim`, of the operands in
    operand order.

    ```
    device 0: [a]      device 0: [a b]
    device 1: [b]  ──► device 1: [a b]
    ```

    Example:

    ```mlir
    !t0 = tensor<2x8xf32, #dist.device<0>>
    !t1 = tensor<2x8xf32, #dist.device<1>>
    func.func @all_gather(%a: !t0, %b: !t1)
        -> (tensor<4x8xf32, #dist.device<0>>, tensor<4x8xf32, #dist.device<1>>) {
      %r:2 = dist.all_gather %a, %b dim 0 : !t0, !t1
      return %r#0, %r#1 : tensor<4x8xf32, #dist.device<0>>, tensor<4x8xf32, #dist.device<1>>
    }
    ```

    **Constraints:**
    * at least one operand, each on a distinct device;
    * all operands have the same shape and element type;
    * `dim` is a dimension of the operands.
  }];
  let arguments = (ins Variadic<Dist_PlacedTensor>:$inputs,
                       I64Attr:$dim);
  let assemblyFormat = "$inputs `dim` $dim attr-dict `:` type($inputs)";
}

def Dist_ReduceScatterOp : Dist_GroupOp<"reduce_scatter"> {
  let summary = "Reduce one value per device and scatter the chunks";
  let description = [{
    The element-wise reduction of the operands is split into as many equal
    chunks along `dim` as there are devices; device `i` receives chunk `i`.

    ```
    device 0: [a0 a1]      device 0: [a0+b0]
    device 1: [b0 b1]  ──► device 1: [a1+b1]
    ```

    Example:

    ```mlir
    !t0 = tensor<4x8xf32, #dist.device<0>>
    !t1 = tensor<4x8xf32, #dist.device<1>>
    func.func @reduce_scatter(%a: !t0, %b: !t1)
        -> (tensor<2x8xf32, #dist.device<0>>, tensor<2x8xf32, #dist.device<1>>) {
      %r:2 = dist.reduce_scatter sum %a, %b dim 0 : !t0, !t1
      return %r#0, %r#1 : tensor<2x8xf32, #dist.device<0>>, tensor<2x8xf32, #dist.device<1>>
    }
    ```

    **Constraints:**
    * at least one operand, each on a distinct device;
    * all operands have the same shape and element type;
    * `dim` is a dimension of the operands and its size is divisible by the
      number of devices;
    * the reduction kind suits the element type (as for `all_reduce`).
  }];
  let arguments = (ins Dist_ReductionKindAttr:$kind,
                       Variadic<Dist_PlacedTensor>:$inputs,
                       I64Attr:$dim);
  let assemblyFormat = "custom<ReductionKind>($kind) $inputs `dim` $dim attr-dict `:` type($inputs)";
}

def Dist_AllToAllOp : Dist_GroupOp<"all_to_all"> {
  let summary = "Exchange chunks between every pair of devices";
  let description = [{
    Each operand is split into as many equal chunks along `split_dim` as
    there are devices; device `j` receives chunk `j` of every operand,
    concatenated along `concat_dim` in operand order.

    ```
    device 0: [a0 a1]      device 0: [a0 b0]
    device 1: [b0 b1]  ──► device 1: [a1 b1]
    ```

    Example:

    ```mlir
    !t0 = tensor<2x8xf32, #dist.device<0>>
    !t1 = tensor<2x8xf32, #dist.device<1>>
    func.func @all_to_all(%a: !t0, %b: !t1)
        -> (tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>) {
      %r:2 = dist.all_to_all %a, %b split_dim 1 concat_dim 0 : !t0, !t1
      return %r#0, %r#1 : tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>
    }
    ```

    **Constraints:**
    * at least one operand, each on a distinct device;
    * all operands have the same shape and element type;
    * `split_dim` and `concat_dim` are dimensions of the operands, and the
      size of `split_dim` is divisible by the number of devices.
  }];
  let arguments = (ins Variadic<Dist_PlacedTensor>:$inputs,
                       I64Attr:$split_dim, I64Attr:$concat_dim);
  let assemblyFormat = [{
    $inputs `split_dim` $split_dim `concat_dim` $concat_dim attr-dict `:`
    type($inputs)
  }];
}

//===----------------------------------------------------------------------===//
// Rooted collectives
//===----------------------------------------------------------------------===//

def Dist_BroadcastOp : Dist_CommOp<"broadcast"> {
  let summary = "Copy a value from its device to every device of a group";
  let description = [{
    The root is the device of `input`; the group is the devices of the
    results, which include the root.

    ```
    device 0: [x]      device 0: [x]
    device 1: [ ]  ──► device 1: [x]
    ```

    Example:

    ```mlir
    !t0 = tensor<8xf32, #dist.device<0>>
    !t1 = tensor<8xf32, #dist.device<1>>
    func.func @broadcast(%x: !t0) -> (!t0, !t1) {
      %r:2 = dist.broadcast %x : !t0 -> !t0, !t1
      return %r#0, %r#1 : !t0, !t1
    }
    ```

    **Constraints:**
    * at least one result, each on a distinct device, one of them the root;
    * every result has the shape and element type of the input.
  }];
  let arguments = (ins Dist_PlacedTensor:$input);
  let results = (outs Variadic<Dist_PlacedTensor>:$results);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($results)";
}

def Dist_ScatterOp : Dist_CommOp<"scatter"> {
  let summary = "Split a value along a dimension and give one chunk to each device";
  let description = [{
    The root (the device of `input`) splits `input` into as many equal chunks
    along `dim` as there are results; result `i` receives chunk `i`. The
    group is the devices of the results, which include the root.

    ```
    device 0: [x0 x1]      device 0: [x0]
    device 1: [     ]  ──► device 1: [x1]
    ```

    Example:

    ```mlir
    !c0 = tensor<2x8xf32, #dist.device<0>>
    !c1 = tensor<2x8xf32, #dist.device<1>>
    func.func @scatter(%x: tensor<4x8xf32, #dist.device<0>>) -> (!c0, !c1) {
      %r:2 = dist.scatter %x dim 0 : tensor<4x8xf32, #dist.device<0>> -> !c0, !c1
      return %r#0, %r#1 : !c0, !c1
    }
    ```

    **Constraints:**
    * at least one result, each on a distinct device, one of them the root;
    * `dim` is a dimension of the input, divisible by the number of results;
    * every result has the input's element type and shape, except `dim`,
      which is divided by the number of results.
  }];
  let arguments = (ins Dist_PlacedTensor:$input, I64Attr:$dim);
  let results = (outs Variadic<Dist_PlacedTensor>:$results);
  let assemblyFormat = [{
    $input `dim` $dim attr-dict `:` type($input) `->` type($results)
  }];
}

def Dist_ReduceOp : Dist_CommOp<"reduce"> {
  let summary = "Reduce one value per device onto a root device";
  let description = [{
    The root is the device of the result; it must contribute an operand.

    ```
    device 0: [a]      device 0: [a+b]
    device 1: [b]  ──► device 1: [ ]
    ```

    Example:

    ```mlir
    !t0 = tensor<8xf32, #dist.device<0>>
    !t1 = tensor<8xf32, #dist.device<1>>
    func.func @reduce(%a: !t0, %b: !t1) -> !t0 {
      %r = dist.reduce sum %a, %b : !t0, !t1 -> !t0
      return %r : !t0
    }
    ```

    **Constraints:**
    * at least one operand, each on a distinct device, one of them the root;
    * operands and result have the same shape and element type;
    * the reduction kind suits the element type (as for `all_reduce`).
  }];
  let arguments = (ins Dist_ReductionKindAttr:$kind,
                       Variadic<Dist_PlacedTensor>:$inputs);
  let results = (outs Dist_PlacedTensor:$result);
  let assemblyFormat = [{
    custom<ReductionKind>($kind) $inputs attr-dict `:` type($inputs) `->` type($result)
  }];
}

def Dist_GatherOp : Dist_CommOp<"gather"> {
  let summary = "Concatenate one value per device onto a root device";
  let description = [{
    The root is the device of the result; it must contribute an operand. The
    result is the concatenation of the operands along `dim`, in operand
    order.

    ```
    device 0: [a]      device 0: [a b]
    device 1: [b]  ──► device 1: [ ]
    ```

    Example:

    ```mlir
    !t0 = tensor<2x8xf32, #dist.device<0>>
    !t1 = tensor<2x8xf32, #dist.device<1>>
    func.func @gather(%a: !t0, %b: !t1) -> tensor<4x8xf32, #dist.device<0>> {
      %r = dist.gather %a, %b dim 0 : !t0, !t1 -> tensor<4x8xf32, #dist.device<0>>
      return %r : tensor<4x8xf32, #dist.device<0>>
    }
    ```

    **Constraints:**
    * at least one operand, each on a distinct device, one of them the root;
    * all operands have the same shape and element type;
    * `dim` is a dimension of the operands; the result has their element
      type and shape, except `dim`, which is multiplied by the number of
      operands.
  }];
  let arguments = (ins Variadic<Dist_PlacedTensor>:$inputs, I64Attr:$dim);
  let results = (outs Dist_PlacedTensor:$result);
  let assemblyFormat = [{
    $inputs `dim` $dim attr-dict `:` type($inputs) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Resharding
//===----------------------------------------------------------------------===//

def Dist_ReshardOp : Dist_CommOp<"reshard"> {
  let summary = "Move a tensor from one sharding on a mesh to another";
  let description = [{
    The operands are the tiles of a tensor of shape `shape` sharded by
    `from` (one per position of its mesh, in row-major order, each on that
    position's device); the results are its tiles under `to`, on the
    positions of the destination mesh. The meshes may differ (a pipeline
    stage boundary, Alpa's cross-mesh resharding) or share devices.

    `dist-lower-reshard` plans the move (unit tasks, send/recv, scatter and
    all-gather, or broadcasts, balanced over the senders and the hosts'
    shared links; docs/design/resharding.md) and replaces the op by the
    plan's `tensor.extract_slice`, `dist` and `tensor.insert_slice` ops;
    the simulator prices it as that plan, the reference executor runs it
    directly.

    ```
    rows on devices 0, 1          columns on devices 2, 3
    device 0: [a b]               device 2: [a]
    device 1: [c d]        ──►              [c]
                                  device 3: [b]
                                            [d]
    ```

    Example:

    ```mlir
    !r0 = tensor<2x4xf32, #dist.device<0>>
    !r1 = tensor<2x4xf32, #dist.device<1>>
    !c2 = tensor<4x2xf32, #dist.device<2>>
    !c3 = tensor<4x2xf32, #dist.device<3>>
    func.func @reshard(%a: !r0, %b: !r1) -> (!c2, !c3) {
      %r:2 = dist.reshard %a, %b shape [4, 4]
          from <mesh = <shape = [2]>, split = [[0]]>
          to <mesh = <shape = [2], devices = [2, 3]>, split = [[], [0]]>
          : !r0, !r1 -> !c2, !c3
      return %r#0, %r#1 : !c2, !c3
    }
    ```

    **Constraints:**
    * `shape` is static and non-negative; neither sharding has partial
      axes, and each fits a tensor of `shape`;
    * one operand per source mesh position, on its device, of its tile's
      shape; one result per destination position likewise; all of one
      element type.
  }];
  let arguments = (ins Variadic<Dist_PlacedTensor>:$inputs,
                       DenseI64ArrayAttr:$shape,
                       Dist_ShardingAttr:$source,
                       Dist_ShardingAttr:$destination);
  let results = (outs Variadic<Dist_PlacedTensor>:$results);
  let assemblyFormat = [{
    $inputs `shape` $shape `from` $source `to` $destination attr-dict `:`
    type($inputs) `->` type($results)
  }];
}

//===----------------------------------------------------------------------===//
// Profiled work
//===----------------------------------------------------------------------===//

def Dist_KernelOp : Dist_Op<"kernel", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Work known only by its measured time (a profiled op)";
  let description = [{
    An op of a profiled program: what it computes is unknown, how long it
    ran is measured. `distir-replay --emit-program` writes a replayed trace
    (docs/design/replay.md) as a `dist` program of these, so that
    `distir-sim`, its Chrome trace and its critical-path report apply to a
    real job as to a program built here (there each device is one thread
    of a rank). The simulator runs it for `duration` seconds on its
    device's compute stream, and reports it as communication when
    `communication` is set (a transfer step of a collective, run by a
    communication thread); the result (often an empty tensor: an ordering
    token) is ready at its end. It has no semantics, so the reference
    executor and the lowerings reject it.

    Example (a backward op that waits for a gradient transfer):

    ```mlir
    !tok = tensor<0xf32, #dist.device<0>>
    %t = dist.kernel "gloo:all_reduce step 0" {communication,
        duration = 2.0e-05 : f64} : !tok
    %b = dist.kernel "AddmmBackward0" (%t : !tok)
        {duration = 1.5e-04 : f64} : !tok
    ```

    **Constraints:**
    * `duration` is finite and non-negative;
    * every operand is on the result's device.
  }];
  let arguments = (ins StrAttr:$label, Variadic<Dist_PlacedTensor>:$inputs,
                       F64Attr:$duration, UnitAttr:$communication);
  let results = (outs Dist_PlacedTensor:$result);
  let assemblyFormat = [{
    $label (`(` $inputs^ `:` type($inputs) `)`)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

#endif // DISTIR_DIALECT_DIST_IR_DISTOPS_TD
