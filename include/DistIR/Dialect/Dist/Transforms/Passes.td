//===- Passes.td - dist dialect passes ---------------------*- tablegen -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_DIALECT_DIST_TRANSFORMS_PASSES_TD
#define DISTIR_DIALECT_DIST_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def DistVerifyPlacementPass : Pass<"dist-verify-placement", "::mlir::ModuleOp"> {
  let summary = "Check that every tensor value is placed and that only "
                "communication ops change placement";
  let description = [{
    Checks the placement rules of the `dist` dialect on a whole module:

    * every tensor value (operation results and block arguments) has a
      `#dist.device` encoding;
    * every compute op (any op outside the `dist` dialect, except terminators,
      calls and region control flow, which only forward values) has all its
      tensor operands and results on one device;
    * if the module carries a `dist.cluster`, every device id is smaller
      than the cluster's number of devices.

    The pass changes nothing; it fails with one error per offending op.

    Example of a rejected program (linalg named ops, unlike `arith` ops, do
    not force operands and results to share a type, hence a device):

    ```mlir
    // distir-opt --dist-verify-placement
    !t0 = tensor<4xf32, #dist.device<0>>
    !t1 = tensor<4xf32, #dist.device<1>>
    func.func @f(%a: !t0, %b: !t1, %init: !t0) -> !t0 {
      // expected-error @+1 {{has operand #0 on device 0 and operand #1 on device 1}}
      %c = linalg.add ins(%a, %b : !t0, !t1) outs(%init : !t0) -> !t0
      return %c : !t0
    }
    ```
  }];
  let dependentDialects = ["::distir::dist::DistDialect"];
}

def DistAttachClusterPass : Pass<"dist-attach-cluster", "::mlir::ModuleOp"> {
  let summary = "Attach a cluster description to the module";
  let description = [{
    Resolves `cluster` (a preset such as `dgx-h100`, `dgx-h100:nodes=4` or
    `distir-uniform:devices=8`, or the path of a JSON file) and attaches it
    to the module as the `dist.cluster` attribute, replacing any previous
    one. Later passes and analyses read the cluster from there.

    Presets: `aws-p3.8xlarge`, `dgx-a100`, `dgx-h100`, `dgx1-v100`,
    `dgx2-v100x16`, `distir-uniform`, `gcp-a100x16`, `gcp-v100x8`. Every
    preset takes `nodes=N`; `distir-uniform` also takes `devices=N` (devices
    per node). Quote a value that contains a comma:
    `--dist-attach-cluster='cluster="distir-uniform:nodes=2,devices=4"'`.

    Example: `distir-opt --dist-attach-cluster=cluster=dgx-h100:nodes=2 in.mlir`
  }];
  let options = [
    Option<"cluster", "cluster", "std::string", /*default=*/"\"\"",
           "Preset name (NAME[:key=value,...]) or path of a JSON cluster file">
  ];
  let dependentDialects = ["::distir::dist::DistDialect"];
}

def DistImportShardPass : Pass<"dist-import-shard", "::mlir::ModuleOp"> {
  let summary = "Turn upstream shard annotations into dist.sharding";
  let description = [{
    Reads the annotations of MLIR's `shard` dialect (`shard.grid`,
    `shard.sharding`, `shard.shard`) and records them as `dist.sharding`
    attributes, the form DistIR's transforms and reports use:

    * `shard.grid @g(shape = 2x4)` becomes `#dist.mesh<name = "g", shape =
      [2, 4]>` (positions are devices 0 .. N-1);
    * `split_axes` becomes `split`, `sharded_dims_offsets` becomes
      `offsets`;
    * `shard.shard %v to %s` records the sharding on what defines `%v`: a
      function argument's attribute or the producing op's `dist.sharding`
      (with `annotate_for_users`, the same: DistIR keeps one sharding per
      value), and its uses take `%v` again.

    The annotation ops are then erased, and so are the grids and shardings
    nothing uses any more. Each form DistIR cannot express is one error at
    the op: dynamic grid sizes, halos, dynamic offsets, a sharding that is not
    a `shard.sharding` of this module, or two different shardings for one
    value.

    Example: `distir-opt --dist-import-shard annotated.mlir`
  }];
  let dependentDialects = ["::distir::dist::DistDialect"];
}

def DistPropagateShardingPass
    : Pass<"dist-propagate-sharding", "::mlir::ModuleOp"> {
  let summary = "Propagate dist.sharding annotations to every op, by "
                "upstream shard's sharding rules";
  let description = [{
    Completes a partial sharding plan without a search: the `dist.sharding`
    already on function arguments and op results (a user's, or imported by
    `dist-import-shard`) spreads to every op the rules of upstream MLIR's
    `shard` dialect cover (`ShardingInterface`: linalg ops from their
    indexing maps, element-wise ops, `tensor.empty`, ...). A split of a
    parallel loop carries over to the op's other operands and results; a
    split of a reduction loop leaves the result summed (the all-reduce is
    the partitioner's), so annotating the first matmul of an MLP by output
    features makes the second one split its reduction: Megatron's pairing.

    The pass writes the annotations out as `shard.grid` / `shard.sharding` /
    `shard.shard` (one grid per mesh) on a copy of each function, runs
    upstream's `sharding-propagation` there, and folds the result back into
    `dist.sharding`: on each op result and function argument the sharding
    its producer's annotation gives (a consumer that wants another layout
    is counted as a resharding; the value keeps one sharding). Meshes come
    back as they were (names, device lists).

    Upstream stops at ops it has no rule for, so those are cut out of its
    view and crossed by DistIR's own rules between rounds, until nothing
    new is reached: `tensor.collapse_shape` / `expand_shape` (a split on
    the first non-unit dimension of a merged group, dividing it evenly,
    splits the merged dimension, and back; any other would need data
    movement), `linalg.softmax`, `tensor.pad`, `tensor.extract_slice`,
    `tensor.insert_slice` and `tensor.concat` (a split on a dimension they
    keep whole carries), and linalg ops with
    broadcast indexing maps (loops from the maps; a constant index reads a
    whole dimension).

    A remark per function gives the ops with a sharding, those that split
    something, those crossed by DistIR's rules, the values resharded for a
    consumer, the arguments sharded, the rounds, the ops propagation
    stopped at (a sharded operand, no sharding carried) and the ops not
    reached (they keep no sharding; `dist-pase` then chooses them by cost).
    Errors, one at the value: partial axes (annotate the summed value),
    explicit offsets (only balanced splits propagate), strided splits
    (`groups`: only contiguous ones propagate), shard annotations
    already in the module (run `dist-import-shard` first); upstream's own
    errors are passed on.

    Example: `distir-opt --dist-propagate-sharding` then
    `--dist-pase='devices=N emit=true'` to partition by the propagated plan.
  }];
  let options = [
    Option<"traversal", "traversal", "::mlir::shard::TraversalOrder",
           /*default=*/"::mlir::shard::TraversalOrder::BackwardForward",
           "Order of upstream's propagation", [{::llvm::cl::values(
             clEnumValN(::mlir::shard::TraversalOrder::Forward, "forward",
                        "forward only"),
             clEnumValN(::mlir::shard::TraversalOrder::Backward, "backward",
                        "backward only"),
             clEnumValN(::mlir::shard::TraversalOrder::ForwardBackward,
                        "forward-backward", "forward, then backward"),
             clEnumValN(::mlir::shard::TraversalOrder::BackwardForward,
                        "backward-forward", "backward, then forward"))}]>
  ];
  let dependentDialects = ["::distir::dist::DistDialect",
                           "::mlir::shard::ShardDialect"];
}

def DistLowerReshardPass : Pass<"dist-lower-reshard", "::mlir::ModuleOp"> {
  let summary = "Replace each dist.reshard by its planned transfers";
  let description = [{
    Plans every `dist.reshard` with the cross-mesh resharding planner
    (docs/design/resharding.md) on the cluster (`cluster=`, else the
    module's `dist.cluster`): the tensor is cut into unit tasks, each moved
    by `strategy` (`auto`: the fastest of send-recv, local and global
    scatter + all-gather, and broadcast), with senders and order chosen by
    `balance`. The op is replaced by the plan's `tensor.extract_slice` on
    the senders, `dist.send` / `dist.broadcast` / `dist.all_gather` in the
    planned order, and each destination tile assembled with
    `tensor.insert_slice`. A forced strategy that cannot serve an op (no
    dimension of a piece divides into its receivers) is an error there.

    Example: `distir-opt --dist-lower-reshard=cluster=aws-p3.8xlarge:nodes=4
    stage.mlir`
  }];
  let options = [
    Option<"cluster", "cluster", "std::string", /*default=*/"\"\"",
           "Cluster preset or JSON file (default: the module's "
           "dist.cluster)">,
    Option<"strategy", "strategy", "::distir::dist::ReshardStrategy",
           /*default=*/"::distir::dist::ReshardStrategy::Auto",
           "auto, send-recv, local-allgather, global-allgather or "
           "broadcast", [{::llvm::cl::values(
             clEnumValN(::distir::dist::ReshardStrategy::Auto, "auto",
                        "the fastest strategy that applies"),
             clEnumValN(::distir::dist::ReshardStrategy::SendRecv, "send-recv",
                        "point-to-point sends"),
             clEnumValN(::distir::dist::ReshardStrategy::LocalAllGather,
                        "local-allgather",
                        "parts per receiving host, then an all-gather there"),
             clEnumValN(::distir::dist::ReshardStrategy::GlobalAllGather,
                        "global-allgather",
                        "parts, then an all-gather over all receivers"),
             clEnumValN(::distir::dist::ReshardStrategy::Broadcast, "broadcast",
                        "one broadcast per piece"))}]>,
    Option<"balance", "balance", "::distir::dist::ReshardBalance",
           /*default=*/"::distir::dist::ReshardBalance::Ensemble",
           "ensemble, lpt, greedy, dfs, random or none", [{::llvm::cl::values(
             clEnumValN(::distir::dist::ReshardBalance::Ensemble, "ensemble",
                        "the best of the others"),
             clEnumValN(::distir::dist::ReshardBalance::LongestFirst, "lpt",
                        "longest processing time first"),
             clEnumValN(::distir::dist::ReshardBalance::Greedy, "greedy",
                        "the (job, sender) that finishes first"),
             clEnumValN(::distir::dist::ReshardBalance::DepthFirst, "dfs",
                        "bounded depth-first search"),
             clEnumValN(::distir::dist::ReshardBalance::Random, "random",
                        "seeded random orders"),
             clEnumValN(::distir::dist::ReshardBalance::None, "none",
                        "decomposition order, first sender"))}]>
  ];
  let dependentDialects = ["::distir::dist::DistDialect",
                           "::mlir::tensor::TensorDialect"];
}

def DistPerOpStrategyPass : Pass<"dist-pase", "::mlir::ModuleOp"> {
  let summary = "Choose a sharding per op by PaSE's dynamic program";
  let description = [{
    PaSE (Elango, IPDPS 2021) on the linalg ops of each public function
    (static shapes): every op may split each loop it reads as a plain
    dimension by a factor dividing the loop size, with the product of the
    factors dividing `devices` (the other devices replicate the tile).
    Each configuration costs the compute of one tile plus the all-reduce of a
    split reduction loop; each producer/consumer pair costs the transfer of
    what the consumer's tile lacks from the producer's. Costs come from the
    simulator's cost model on the cluster (`cluster=`, else the module's
    `dist.cluster`). The exact minimum is found by dynamic programming over
    the GenerateSeq order (`order=bfs` for breadth-first, a baseline), then
    recorded as `dist.sharding` on every op: the mesh is the split factors
    in loop order, then the replicas, over devices 0 .. devices-1.

    Ops and arguments that already carry `dist.sharding` (written by hand,
    or folded from upstream `shard.sharding` by `dist-import-shard`) are
    constraints: an op keeps only the configurations that hold its results
    as annotated, and the readers of an annotated argument read it where it
    is; the search chooses everything else by cost, so an annotated
    column-parallel matmul gets its row-parallel partner. An annotation no
    configuration can follow (partial axes, another mesh size, an uneven,
    strided or differently ordered split) is one error at the op. The pass records its
    own choices the same way, so a second `dist-pase` keeps them unless
    `follow-annotations=false`.

    The space depends on how the program writes its dimensions: a batch
    merged with the sequence (nn.MultiheadAttention's `[S * B, E]`
    projections) can be split with the sequence only. So the search also
    runs on the program as `dist-unflatten-reshapes` rewrites it (merged
    dimensions kept apart), when that changes it, and keeps the form with
    the lower optimum (or the one that has a strategy): the function's body
    is then the rewritten one. `unflatten=false` searches the program as
    written only; so do the baselines, the random picks and a program that
    carries `dist.sharding` annotations (they name its dimensions as
    written).

    On a training step (`dist-autodiff`), the ops of each forward op's
    adjoint (`dist.vjp_of`) follow the forward op's configuration, as
    PaSE's paper counts an op's forward and backward as one vertex: an
    adjoint loop that runs along a dimension of a forward operand, result
    or incoming gradient takes that forward loop's factor (other loops
    stay whole), and the solver
    sees one vertex per group (saved activations no longer join forward
    and backward ops into large dependent sets). The tied space is
    smaller, so its optimum can be higher: `tie-adjoints=auto` (default)
    ties only when the search with a vertex per op needs a table over
    `max-table`; `always` ties whenever there are adjoints, `never` gives
    every op its own vertex.

    A remark on each function gives the cost, the largest dependent set,
    the ops without a split rule (run whole on every device), how many
    adjoint ops followed their forward op (or were searched on their own,
    and why) and the form kept, with the other form's optimum;
    `report=true` adds one remark per op with its loop factors. Errors: no
    cluster, `devices` outside the cluster, dynamic loop sizes, a dependent
    set whose table exceeds `max-table` entries (on a training step the
    error names the weights several differentiated ops read: each one's
    gradient sum joins its readers).

    With `emit=true` the function becomes the explicit `dist` program of
    the strategy: `<name>_pase` runs every op once per device on its tiles
    (arguments arrive as the tiles each device reads, results leave as
    their distinct tiles); an operand some device lacks moves as one
    `dist.all_gather` per replica group (read whole) or one `dist.reshard`
    from the producer's layout to the consumer's (`dist-lower-reshard`
    plans it for the per-rank lowering), and split reductions are summed
    with `dist.all_reduce`. The function itself keeps its signature,
    scatters the arguments from device 0, calls it and reassembles the
    results there, so `distir-run` compares it with the sequential program.
    Emission needs arguments placed on device 0 (`dist-place`) and a body of
    linalg ops, `tensor.empty`, constants and scalar ops; anything else is
    one error naming the op. `pick=random:SEED` replaces the optimum by a
    random configuration per op (tests of the emitter cover every kind of
    resharding that way); `pick=data-parallel` and `pick=one-weird-trick` by
    the hand-written baselines (the batch loop split everywhere; fully
    connected layers by output features instead), priced in the same cost
    graph; the baselines ignore annotations.

    Example: `distir-opt --dist-pase='devices=8 cluster=dgx-h100 report=true'`
  }];
  let options = [
    Option<"devices", "devices", "int64_t", /*default=*/"1",
           "Number of devices (0 .. devices-1) that share the work">,
    Option<"cluster", "cluster", "std::string", /*default=*/"\"\"",
           "Cluster preset or JSON file (default: the module's dist.cluster)">,
    Option<"order", "order", "::distir::dist::EliminationOrder",
           /*default=*/"::distir::dist::EliminationOrder::GenerateSeq",
           "Elimination order: generate-seq or bfs", [{::llvm::cl::values(
             clEnumValN(::distir::dist::EliminationOrder::GenerateSeq,
                        "generate-seq", "PaSE's GenerateSeq"),
             clEnumValN(::distir::dist::EliminationOrder::BFS, "bfs",
                        "breadth-first from the inputs"))}]>,
    Option<"maxTable", "max-table", "int64_t", /*default=*/"16777216",
           "Largest dynamic-programming table (entries)">,
    Option<"maxConfigs", "max-configs", "int64_t", /*default=*/"1024",
           "Configurations kept per op (the cheapest by vertex cost; the "
           "remark says how many ops were cut)">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark per op with its loop split">,
    Option<"tieAdjoints", "tie-adjoints", "::distir::dist::TieAdjoints",
           /*default=*/"::distir::dist::TieAdjoints::Auto",
           "When the adjoint ops of a training step follow their forward "
           "op's configuration (one vertex per forward op)",
           [{::llvm::cl::values(
             clEnumValN(::distir::dist::TieAdjoints::Auto, "auto",
                        "when a vertex per op needs a table over max-table"),
             clEnumValN(::distir::dist::TieAdjoints::Always, "always",
                        "always (PaSE's paper)"),
             clEnumValN(::distir::dist::TieAdjoints::Never, "never",
                        "never: a vertex per op"))}]>,
    Option<"followAnnotations", "follow-annotations", "bool",
           /*default=*/"true",
           "Keep the dist.sharding already on ops and arguments (a user's, "
           "an imported one, or an earlier dist-pase's choice); false "
           "searches every configuration">,
    Option<"emit", "emit", "bool", /*default=*/"false",
           "Rewrite the function into the strategy's dist program">,
    Option<"pick", "pick", "std::string", /*default=*/"\"optimal\"",
           "optimal, data-parallel, one-weird-trick, or random:SEED (a "
           "random configuration per op)">,
    Option<"unflatten", "unflatten", "bool", /*default=*/"true",
           "Also search the program as dist-unflatten-reshapes rewrites it "
           "(merged dimensions read apart) and keep the cheaper form "
           "(pick=optimal only)">
  ];
  let dependentDialects = ["::distir::dist::DistDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def DistPlacePass : Pass<"dist-place", "::mlir::ModuleOp"> {
  let summary = "Place an unplaced program on one device and mark its "
                "batch inputs";
  let description = [{
    The way in for IR from another compiler: plain `linalg`, `tensor`,
    `arith`, `math` and `scf` on tensors without placements. Every tensor
    type in the module (function signatures, block arguments, op results,
    constants) gets the encoding `#dist.device<device>`; tensors already
    placed on that device stay, a tensor with any other encoding is an
    error naming the op.

    Then, in each public function, the batch is inferred from the data
    flow: dimensions of values that must be split together are joined
    through the structured-op interface (operand dimensions indexed by the
    same loop of a `linalg` op, the outermost non-unit dimension of each
    reshaped group, the full dimensions of slices, pads and concats,
    element-wise ops). The batch is the class of result #0's dimension
    `result-batch-dim`; each argument with a dimension in that class gets
    `dist.batch_dim` (arguments without one are weights). An error names
    what prevents the inference: a class that meets a reduction loop (the
    op is named), or no argument in the class. `result-batch-dim=-1` skips
    it; arguments already carrying `dist.batch_dim` keep it.
    Arguments without `dist.name` are named `arg<N>`.

    Layers need no tags: `dist-dtp` infers them from the data flow for
    `pp` > 1 (or run `dist-infer-layers`).

    Example: `distir-opt --dist-place=device=0 --dist-dtp='dp=2' in.mlir`
  }];
  let options = [
    Option<"device", "device", "int64_t", /*default=*/"0",
           "Device every tensor is placed on">,
    Option<"resultBatchDim", "result-batch-dim", "int64_t", /*default=*/"0",
           "Dimension of result #0 that is the batch (-1: do not infer)">
  ];
  let dependentDialects = ["::distir::dist::DistDialect"];
}

def DistDTPPass : Pass<"dist-dtp", "::mlir::ModuleOp"> {
  let summary = "Distribute a sequential program by data, tensor and "
                "pipeline parallelism";
  let description = [{
    Rewrites a sequential program (every tensor on one device, no `dist`
    ops) into a global `dist` program on `dp` x `tp` x `pp` devices with
    `microbatches` microbatches per step:

    * **data parallelism** splits the batch dimension of the arguments
      marked `dist.batch_dim = D`; values reduced over the batch (weight
      gradients, the loss) are all-reduced over the data-parallel group;
    * **tensor parallelism** (Megatron) splits the weights marked
      `dist.layer = L`: even layers by columns, odd layers by rows, so that
      each column/row pair needs one all-reduce (in forward and backward).
      When no weight carries `dist.layer` (imported models, plain IR), the
      column/row pairs are derived from the data flow: a column split is
      followed through the ops that keep it free up to the projections that
      contract over it (docs/design/dtp.md); `report=true` says, per op
      reading a weight, how it is split or why it stays replicated, and a
      `tp` that splits no weight is an error. A projection weight carrying
      a `dist.sharding` that splits one dimension into `tp` shards over the
      mesh's minor axes (a user's, from `dist-propagate-sharding`, or
      written by `annotate-shardings`) is a constraint: split along that
      dimension, or not split when replicated; one the pairs cannot
      follow is an error naming the weight. A final projection (an LM
      head, a classifier) is split by columns and gathered, padded with
      zero columns when `tp` does not divide its width (inference), or
      left replicated, whichever the module's `dist.cluster` (default
      `dgx-h100`) prices faster; the decision shows both times. One whose
      weight's `dist.sharding` asks for its column split is split
      regardless. In a
      training step, such a head is padded with everything tied to its
      columns (`dist-pad-dimension`: its gradient, optimizer state, the
      logits masked to -inf where the loss needs it) when the padded
      program's plan then splits it; the step keeps those values padded
      and the wrapper cuts them;
    * **pipeline parallelism** cuts the layers (ops tagged `dist.layer`,
      weights by their `dist.layer`) into `pp` balanced contiguous stages;
      values crossing stages are sent at the start of the time step in
      which the receiving stage first needs them (with
      `stage-transfer=planned`, a value every tensor-parallel rank holds
      is moved by the cross-mesh resharding planner instead of `tp`
      copies: e.g. scattered and all-gathered inside the receiving node,
      or broadcast over a shared NIC);
    * **microbatches** split each replica's batch into `microbatches` parts
      that run one after the other; weight gradients are accumulated in
      place (each microbatch adds into the previous one's gradient buffer)
      and all-reduced once per step. The `schedule` orders the
      tasks (stage, microbatch, forward/backward) of every stage: `gpipe`
      (all forwards, then all backwards), `1f1b` (stage i runs
      min(K, pp-i-1) forwards, then alternates), `eager-1f1b`
      (min(K, 2(pp-i)-1) forward warm-ups), `pipedream` (the published
      DistIR's PipeDream order: each step a stage alternates between its
      ready forwards and backwards). Tasks are merged into time steps
      and the step function's program order follows them, so the schedule
      is explicit in the IR. Ops need `dist.layer` and `dist.phase`
      (`forward`, `backward`, `update`) tags for `pp` > 1 (with one stage,
      untagged ops run in each microbatch's forward); programs from
      `--build-mlp` and dist-autodiff carry them.

    Every other value's layout follows from the linalg structured-op
    interface: a loop is split when an operand dimension it indexes is
    split (unless the body reads that loop's `linalg.index`), a split
    reduction loop yields partial sums that are reduced at once, operands
    are sliced (free) or gathered to match. Reshapes, static slices and
    `linalg.softmax` keep the splits they can (e.g. the batch merged with
    the sequence); other ops run replicated on gathered operands. GPT-2
    imported from ONNX thus runs data-parallel with no communication, and
    pipelined by transformer block (the importer tags ops with their
    block).

    The entry function `@f` becomes `@f_dtp`, taking one local argument per
    (argument, data-parallel replica, tensor-parallel rank) and returning
    the same per result — the training or inference step itself — and a new
    `@f` with the original signature that distributes the inputs from their
    device (broadcast, then each device keeps its shard), calls `@f_dtp`
    and gathers the results back, so that the reference executor can
    compare it with the sequential program. Device ids follow `mapping`:
    `tp-inner` (tensor rank fastest, then replica, then stage: tensor-parallel
    groups on neighbouring devices, e.g. inside a node), `dp-inner` (replica
    fastest, then tensor rank, then stage), or an explicit mixed-radix order
    `AXIS:FACTOR,...` (least significant first; an axis may be split into
    several factors), which expresses any parallelism matrix over a device
    hierarchy: on 2 nodes of 8 devices, `tp:4,pp:2,dp:2` keeps tensor and
    pipeline parallelism inside a node and spreads data parallelism over
    the nodes. `distir-search` enumerates these matrices.

    **Per-stage meshes** (`stage-tp=T0,T1,...`, one degree per stage, in
    place of `tp`): stage s runs on its own mesh of `dp` x `Ts` devices, as
    Alpa's submeshes; the meshes follow each other in device order (stage 0
    on devices 0 .. dp*T0-1, ...), and inside a mesh `mapping` (`tp-inner`
    or `dp-inner`) orders replicas and tensor ranks. The tensor-parallel
    plan is made for the least common multiple of the degrees (a padded
    width divides every stage's degree) and each stage splits what it
    holds over its own degree; a stage of degree 1 keeps its weights whole.
    A value that crosses stages of different degrees is gathered on its
    stage when tensor-split, then moved as a replicated tensor: one send
    per receiving rank from a sender of its replica (`stage-transfer=send`)
    or the resharding planner's plan between the two meshes.
  }];
  let options = [
    Option<"dp", "dp", "int64_t", /*default=*/"1", "Data-parallel degree">,
    Option<"tp", "tp", "int64_t", /*default=*/"1", "Tensor-parallel degree">,
    ListOption<"stageTp", "stage-tp", "int64_t",
               "Tensor-parallel degree of each pipeline stage (pp entries, "
               "instead of one tp): stage s runs on its own dp x tp_s mesh, "
               "the stages' meshes one after the other in device order">,
    Option<"pp", "pp", "int64_t", /*default=*/"1",
           "Pipeline-parallel degree (stages)">,
    Option<"microbatches", "microbatches", "int64_t", /*default=*/"1",
           "Microbatches per step">,
    Option<"schedule", "schedule", "::distir::dist::PipelineSchedule",
           /*default=*/"::distir::dist::PipelineSchedule::GPipe",
           "Microbatch schedule: gpipe, 1f1b, eager-1f1b or pipedream",
           [{::llvm::cl::values(
             clEnumValN(::distir::dist::PipelineSchedule::GPipe, "gpipe",
                        "every forward, then every backward"),
             clEnumValN(::distir::dist::PipelineSchedule::OneFOneB, "1f1b",
                        "P - s - 1 warm-up forwards, then one forward, one "
                        "backward"),
             clEnumValN(::distir::dist::PipelineSchedule::EagerOneFOneB,
                        "eager-1f1b", "1F1B with 2 (P - s) - 1 warm-up "
                        "forwards"),
             clEnumValN(::distir::dist::PipelineSchedule::PipeDream,
                        "pipedream", "dist-ir's PipeDream order"))}]>,
    Option<"mapping", "mapping", "std::string", /*default=*/"\"tp-inner\"",
           "Device ids: tp-inner, dp-inner, or AXIS:FACTOR,... (least "
           "significant first)">,
    Option<"entry", "entry", "std::string", /*default=*/"\"\"",
           "Function to distribute (default: the only public function)">,
    Option<"devices", "devices", "int64_t", /*default=*/"0",
           "Devices the program must use: dp*tp*pp must equal it (0: not "
           "checked, except that a `dist.cluster` attached to the module "
           "bounds dp*tp*pp)">,
    Option<"annotateSchedule", "annotate-schedule", "bool",
           /*default=*/"false",
           "Tag every op of the step function with its task as "
           "`dist.task = \"stage S forward|backward|update [M]\"` and, "
           "when it was created for a source op with `dist.layer`, that "
           "layer; a send between stages that runs at the start of its "
           "consumer's time step also gets `dist.receive`">,
    Option<"stageTransfer", "stage-transfer", "::distir::dist::StageTransfer",
           /*default=*/"::distir::dist::StageTransfer::Send",
           "How a value replicated over the tensor-parallel group crosses "
           "stages: send (each rank sends its copy to its counterpart), "
           "planned (the cross-mesh resharding planner on the module's "
           "dist.cluster picks send-recv, scatter + all-gather or broadcast "
           "and balances the senders; docs/design/resharding.md), or one "
           "planner strategy forced: send-recv, local-allgather (Megatron's "
           "scatter-gather), global-allgather, broadcast", [{::llvm::cl::values(
             clEnumValN(::distir::dist::StageTransfer::Send, "send",
                        "each rank sends its copy to its counterpart"),
             clEnumValN(::distir::dist::StageTransfer::Planned, "planned",
                        "the resharding planner's fastest plan"),
             clEnumValN(::distir::dist::StageTransfer::SendRecv, "send-recv",
                        "point-to-point sends, balanced"),
             clEnumValN(::distir::dist::StageTransfer::LocalAllGather,
                        "local-allgather", "Megatron's scatter-gather"),
             clEnumValN(::distir::dist::StageTransfer::GlobalAllGather,
                        "global-allgather",
                        "parts, then an all-gather over all receivers"),
             clEnumValN(::distir::dist::StageTransfer::Broadcast, "broadcast",
                        "one broadcast per piece"))}]>,
    Option<"report", "report", "bool", /*default=*/"false",
           "With tp > 1 on a program whose weights carry no dist.layer: a "
           "remark at every op that reads a weight, saying how tensor "
           "parallelism splits it (column or row) or why it stays "
           "replicated">,
    Option<"annotateShardings", "annotate-shardings", "bool",
           /*default=*/"false",
           "Write the plan back as `dist.sharding` on each argument and "
           "result of the wrapper: the layout the step holds it in, over "
           "the mesh [dp, tp] of its stage (named `stage S` when pp > 1, "
           "listing its devices); a padded dimension gets the offsets of "
           "its real elements, a grouped split (a fused Q/K/V weight) "
           "`groups`">
  ];
  let dependentDialects = ["::distir::dist::DistDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::func::FuncDialect"];
}

def DistLowPrecisionPass : Pass<"dist-low-precision", "::mlir::ModuleOp"> {
  let summary = "Run an inference program in f16 or bf16, as a model "
                "converted with .half() runs";
  let description = [{
    Every f32 value of each public function becomes `type`: its float
    arguments (inputs and weights alike, so weights are stored in 2 bytes),
    constants, the values of every op and the results; integer arguments
    (token ids) stay. No cast is inserted, as in PyTorch inference after
    `model.half()` (or `.to(torch.bfloat16)`): the simulator then prices
    the program with the cluster's peak flop/s for that type and counts 2
    bytes per element. Training steps use `dist-autodiff{compute=...}`
    instead (fp32 master weights). `type=f32` changes nothing. A program
    that already mixes float types (casts) is one error at the cast.

    ```
    distir-opt model.mlir --dist-low-precision=type=bf16
    ```
  }];
  let options = [
    Option<"type", "type", "::distir::dist::ComputePrecision",
           /*default=*/"::distir::dist::ComputePrecision::F16",
           "Element type of every float value", [{::llvm::cl::values(
             clEnumValN(::distir::dist::ComputePrecision::F32, "f32",
                        "unchanged"),
             clEnumValN(::distir::dist::ComputePrecision::F16, "f16",
                        "float16"),
             clEnumValN(::distir::dist::ComputePrecision::BF16, "bf16",
                        "bfloat16"))}]>
  ];
}

def DistInferLayersPass : Pass<"dist-infer-layers", "::mlir::ModuleOp"> {
  let summary = "Tag a forward program's ops with layers from its data flow, "
                "for pipeline parallelism";
  let description = [{
    Pipeline parallelism cuts a program into stages by the `dist.layer` of
    its ops. The ONNX importer derives layers from node names (transformer
    blocks); this pass derives them for any forward program: a contiguous
    partition of the program order into `layers` layers (every edge goes to
    the same or a later layer, so grouping consecutive layers into stages is
    always valid, with skip connections sent ahead), balanced by compute
    (the simulator's flops of each op), each cut moved within a quarter of
    a layer's share to where the fewest bytes cross it. Ops also get
    `dist.phase = "forward"`. Functions whose ops already carry layers keep
    them unless `force`. `dist-dtp` with `pp` > 1 on an untagged program and
    `dist-autodiff` on an untagged forward program infer layers the same
    way, so pipelines apply to CNNs and to models exported without block
    names.

    ```
    distir-opt resnet.mlir --dist-infer-layers=layers=8 --dist-dtp=pp=4
    ```
  }];
  let options = [
    Option<"layers", "layers", "int64_t", /*default=*/"16",
           "Layers to cut the program into (fewer when it has fewer ops "
           "with compute)">,
    Option<"entry", "entry", "std::string", /*default=*/"\"\"",
           "Function to tag (default: every function with a body)">,
    Option<"force", "force", "bool", /*default=*/"false",
           "Replace existing dist.layer tags">
  ];
  let dependentDialects = ["::distir::dist::DistDialect"];
}

def DistPadDimensionPass : Pass<"dist-pad-dimension", "::mlir::ModuleOp"> {
  let summary = "Pad a dimension of an argument, and every dimension tied to "
                "it, keeping what the program computes";
  let description = [{
    Megatron pads its vocabulary (50257 -> 50304) so that tensor
    parallelism divides it. This pass pads dimension `dim` of argument
    `arg` to `size` (or to the next multiple of `multiple`) together with
    every dimension the program ties to it through the structured-op
    interface: operand dimensions indexed by the same loop of a `linalg`
    op, results with their inits, reshapes that keep the dimension whole,
    full slices, `linalg.softmax`. For an LM head in a training step that
    is the head's weight, the logits, the loss's reductions, the logits'
    gradient, the weight gradient, the optimizer state and the update.

    Arguments of the class are padded with zeros on entry (`tensor.pad`),
    constants with zeros, and results are cut back to their size, so the
    function's signature and results do not change. An abstract
    interpretation proves that padded positions never reach a real one:
    every op that reduces over the padded loop must leave its accumulator
    unchanged there (adding zeros, a maximum with -inf, a select whose
    condition compares the padded index for equality with a value: such
    values are taken to be indices in range, as a gather's must be). Where
    a maximum or a softmax over the dimension would read padded zeros, its
    input is masked (padded positions set to -inf by a `linalg.generic`)
    and the check restarts. Anything outside these rules is an error naming
    the op, and the module is left unchanged. `dist-dtp` uses the same
    padding for an LM head whose width tp does not divide.

    ```
    distir-opt train.mlir       --dist-pad-dimension="arg=/lm_head/Transpose_output_0 dim=1 multiple=8"
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"\"",
           "Function to pad (default: the only public function)">,
    Option<"arg", "arg", "std::string", /*default=*/"\"\"",
           "Argument whose dimension is padded: its dist.name, or its "
           "number">,
    Option<"dim", "dim", "int64_t", /*default=*/"0",
           "Dimension of the argument to pad">,
    Option<"size", "size", "int64_t", /*default=*/"0",
           "Padded size (0: from multiple)">,
    Option<"multiple", "multiple", "int64_t", /*default=*/"0",
           "Pad to the next multiple of this (when size is 0)">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark with what was padded, masked and cut">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def DistUnflattenReshapesPass
    : Pass<"dist-unflatten-reshapes", "::mlir::ModuleOp"> {
  let summary = "Keep dimensions apart that a reshape merges only to split "
                "them again (nn.MultiheadAttention's [batch * heads])";
  let description = [{
    torch's `nn.MultiheadAttention` views its `[S, B, E]` projections as
    `[S, B * H, E / H]`, so the batch and the heads share one dimension
    through the attention, and a layout with one mesh axis per dimension
    cannot split it by data and tensor parallelism at once. This pass
    rewrites each `tensor.expand_shape` of a `tensor.collapse_shape` (the
    ONNX importer's form of a Reshape) as an expand to the finest shape
    both sides agree on (`[S, B, H, E / H]`) followed by a collapse, then
    sinks every collapse that merges two dimensions of size > 1 through its
    consumers: `linalg.generic` ops by upstream linalg's fold-by-expansion
    (element-wise ops, batched contractions), `linalg.transpose` and
    `linalg.softmax` (when the normalized dimension is one source
    dimension) by patterns of their own; a `linalg.matmul` that reads
    merged rows (the attention's projections of `[S * B, E]`, and in a
    training step their gradients) becomes the same contraction as a
    `linalg.generic`, which is then sunk through. A weight or bias gradient
    (a backward op whose result reaches the optimizer update through
    element-wise ops, transposes or accumulation) reads its sums over merged
    rows (`[S * B]`) as two reductions and keeps its own dimensions merged:
    they are its weight's, and the update keeps the weight's layout. Every
    other op reads merged rows apart and keeps merged reduced dimensions
    (the heads' features, which tensor parallelism splits as one); an
    operand merging both kinds is split into two collapses first. A
    collapse stops at the expand that splits it again (folded away) or at
    an op that needs the merged form (those above, ops of the update, an op
    annotated with `dist.sharding`). Semantics are
    unchanged. New ops take `dist.layer` / `dist.phase` from the
    op they replace. `dist-dtp` runs this rewrite itself when `tp` > 1
    and the batch is split too (`dp` > 1 or `microbatches` > 1).

    ```
    distir-opt encoder.mlir --dist-unflatten-reshapes=report=true
    ```
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark per function with the reshapes rewritten and the "
           "ops that now read the merged dimensions apart">,
    Option<"maxRewrites", "max-rewrites", "int64_t", /*default=*/"-1",
           "Stop after this many pattern applications per function, folds "
           "included (-1: no limit), as the greedy driver's "
           "max-num-rewrites; a function whose rewrite is not done by then "
           "is an error (the rewrite did not converge)">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def DistAutodiffPass : Pass<"dist-autodiff", "::mlir::ModuleOp"> {
  let summary = "Turn a forward (inference) function into a training step: "
                "loss, reverse-mode backward pass and optimizer update";
  let description = [{
    Rewrites every function of the module that is a forward program, as the
    ONNX importer writes it (inputs, then weights; one result, the model
    output), into one training step:

    * signature: the inputs, then `target` (`dist.name = "target"`, batched
      like the inputs), then every weight (a floating-point argument
      without `dist.batch_dim`, not marked `dist.frozen` as the importer
      marks BatchNorm statistics, not named in `frozen`; frozen arguments
      stay where they are and are not returned), then the optimizer state: per weight
      `<weight>.m` (momentum buffer or Adam's first moment) and
      `<weight>.v` (Adam's second moment), in weight order, then `step`
      (Adam: the number of steps taken so far, a rank-0 f32 tensor), each
      marked `dist.optimizer_state` (memory reports count it apart from the
      weights). State starts as zeros, as `torch.optim` starts it.
    * results: the loss (`dist.name = "loss"`), then every updated weight,
      then the updated state, in the argument order.
    * `loss=mse` is PyTorch's `MSELoss()` (mean over all elements; the
      target has the output's type); `loss=cross-entropy` is
      `CrossEntropyLoss()` (mean over all positions, classes on the last
      axis of the output, the target holds `i64` class indices of the
      output's shape without its last dimension).
    * the backward pass has one vector-Jacobian rule per op kind. Every
      structured (`linalg`) op goes through one generic rule: the adjoint
      of input i is a `linalg.generic` over the op's iteration space that
      reads the result's adjoint and the op's inputs, writes through input
      i's indexing map and reduces over the loops that map drops; its body
      is the derivative of the op's body (a table of `arith`/`math`
      derivatives). Bodies that reduce must combine with `addf`,
      `maximumf` or `minimumf`. `linalg.matmul` gets `dA = dC Bᵀ`,
      `dB = Aᵀ dC` as matmuls; `linalg.softmax`, reshapes, slices,
      `tensor.insert_slice` and `tensor.pad` have their own rules. A value
      used several times (tied weights) gets the sum of its adjoints. An op
      on the gradient path without a rule is an error naming the op.
    * the update follows `torch.optim`: `sgd` (`p - lr g`), `momentum`
      (`b = momentum b + g`, `p - lr b`), `adam` (bias-corrected moments;
      `weight-decay` adds `wd p` to the gradient) and `adamw` (decoupled
      decay `p (1 - lr wd)`). It is one `linalg.generic` per weight that
      reads the weight, its gradient and its state and yields all of them
      updated. Weights without a gradient are returned unchanged.
    * `compute=bf16` (or `f16`) is mixed precision as Megatron and
      DeepSpeed run it: the weights and optimizer state stay fp32 (master
      weights), each f32 argument is cast to the low type on entry, the
      forward and backward passes compute in it (2-byte activations and
      weight gradients), the output is cast back to f32 for the loss, and
      each weight gradient is cast to f32 for the update.
    * every op is tagged with `dist.phase` (`forward`, `backward`,
      `update`) and `dist.layer` (a backward op takes its forward op's
      layer, an update its weight's first user's; a forward program without
      layer tags first gets 16 from its data flow, as `dist-infer-layers`
      gives), so that `dist-dtp`
      (microbatches, pipeline stages), `dist-recompute` and `dist-zero`
      apply.

    Example:
    `distir-translate --import-onnx model.onnx | distir-opt
    --dist-autodiff='loss=cross-entropy optimizer=adamw lr=1e-3'`
  }];
  let options = [
    Option<"loss", "loss", "::distir::dist::LossKind",
           /*default=*/"::distir::dist::LossKind::MSE",
           "Loss: mse or cross-entropy",
           [{::llvm::cl::values(
             clEnumValN(::distir::dist::LossKind::MSE, "mse",
                        "mean squared error (MSELoss)"),
             clEnumValN(::distir::dist::LossKind::CrossEntropy,
                        "cross-entropy",
                        "CrossEntropyLoss on class indices"))}]>,
    Option<"optimizer", "optimizer", "::distir::dist::OptimizerKind",
           /*default=*/"::distir::dist::OptimizerKind::SGD",
           "Optimizer: sgd, momentum, adam or adamw",
           [{::llvm::cl::values(
             clEnumValN(::distir::dist::OptimizerKind::SGD, "sgd", "SGD"),
             clEnumValN(::distir::dist::OptimizerKind::Momentum, "momentum",
                        "SGD with momentum"),
             clEnumValN(::distir::dist::OptimizerKind::Adam, "adam", "Adam"),
             clEnumValN(::distir::dist::OptimizerKind::AdamW, "adamw",
                        "AdamW (decoupled weight decay)"))}]>,
    Option<"lr", "lr", "double", /*default=*/"0.01", "Learning rate">,
    Option<"momentum", "momentum", "double", /*default=*/"0.9",
           "Momentum factor (optimizer=momentum)">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9",
           "Adam's first-moment decay">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999",
           "Adam's second-moment decay">,
    Option<"eps", "eps", "double", /*default=*/"1e-8",
           "Adam's denominator term">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "Weight decay (L2 for sgd/momentum/adam, decoupled for adamw)">,
    ListOption<"frozen", "frozen", "std::string",
               "Names (dist.name) of weights not to train">,
    Option<"compute", "compute", "::distir::dist::ComputePrecision",
           /*default=*/"::distir::dist::ComputePrecision::F32",
           "Mixed precision: f16 or bf16 runs forward and backward in that "
           "type with fp32 master weights and state (f32: the model's types)",
           [{::llvm::cl::values(
             clEnumValN(::distir::dist::ComputePrecision::F32, "f32",
                        "the model's types"),
             clEnumValN(::distir::dist::ComputePrecision::F16, "f16",
                        "float16 compute"),
             clEnumValN(::distir::dist::ComputePrecision::BF16, "bf16",
                        "bfloat16 compute"))}]>
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::distir::dist::DistDialect"];
}

def DistRecomputePass : Pass<"dist-recompute", "::mlir::ModuleOp"> {
  let summary = "Gradient checkpointing: recompute forward activations in "
                "the backward pass";
  let description = [{
    For the layers in `layers` (default: every layer), the forward values
    that backward ops read are recomputed right before the first backward op
    that needs them, instead of living from the forward to the backward
    pass. The recomputation is rebuilt from the layer's inputs (what its
    forward ops read from outside the layer: the previous layer's output,
    weights), which stay alive as checkpoints, as in Megatron's full
    recomputation and PyTorch's per-layer `checkpoint`: each chosen layer's
    forward runs once more, whatever the layer count. The clones are
    tagged `dist.phase = "backward"` so that `dist-dtp` schedules them with
    the backward pass of their layer. Ops are identified by their
    `dist.layer` and `dist.phase` tags (programs from `--build-mlp` carry
    them). Outputs are unchanged; the simulated peak memory goes down and
    the forward compute of the chosen layers runs twice.

    Run it on the sequential program, before `dist-dtp`:
    `distir-opt --dist-recompute --dist-dtp=dp=2 ...`.
  }];
  let options = [
    ListOption<"layers", "layers", "int64_t",
               "Layers whose activations are recomputed (default: all)">
  ];
  let dependentDialects = ["::distir::dist::DistDialect"];
}

def DistZeroPass : Pass<"dist-zero", "::mlir::ModuleOp"> {
  let summary = "ZeRO: partition the weight update, gradients and weights "
                "of a data-parallel training step over its replicas";
  let description = [{
    Applies ZeRO (Rajbhandari et al., 2020) to a data-parallel training
    step produced by `dist-dtp` (dp > 1, any `microbatches`, also with `tp`
    and `pp`). A *weight-gradient group* is a `dist.all_reduce sum` over N
    devices whose every result is read only by an element-wise update (a
    `linalg.generic` with identity maps, e.g. SGD's `w - lr * g`) of a
    function argument, the weight. Each group's weight is split into N
    equal chunks along its first dimension divisible by N; replica i (the
    i-th operand of the all-reduce) owns chunk i.

    * `stage=1` (update/optimizer-state partitioning): the all-reduce
      becomes a `dist.reduce_scatter`; each replica updates only its chunk
      (of the weight, of the gradient and of any optimizer state the update
      reads); a `dist.all_gather` rebuilds the full updated weight, so the
      step's signature and results are unchanged. SGD has no optimizer
      state, so what shrinks is the reduced gradient and the update's
      temporaries.
    * `stage=2` (+ gradient partitioning): the reduced gradient exists only
      as a chunk. With microbatches, every microbatch's gradient is
      reduce-scattered as soon as it is computed and the chunks are
      accumulated, so no full accumulated gradient is kept (`dist-dtp`
      keeps every microbatch's full gradient until the update). With one
      microbatch the program equals stage 1.
    * `stage=3` (+ parameter partitioning): the step function's weight
      arguments and updated-weight results become the chunks; every use of
      a weight (per microbatch, in forward and backward) is preceded by its
      own `dist.all_gather`, so no full weight lives between uses. Callers
      (the wrapper `dist-dtp` emits) slice each replica's chunk out of the
      full weight they passed before (`tensor.extract_slice`) and
      `dist.gather` the updated chunks onto the device whose result they
      used, so the wrapper keeps its signature and outputs.

    The step function is tagged `dist.zero_stage`. Errors (one each, at the
    offending op or the module): a stage other than 1, 2, 3; a module with
    no weight-gradient group (no data-parallel axis); a weight with no
    dimension divisible by its group's size (chunks are not padded); a
    gradient or updated weight with other uses; a function already
    transformed.

    Example: `distir-opt --dist-dtp="dp=4 microbatches=2"
    --dist-zero=stage=3 mlp.mlir`. See docs/design/zero.md.
  }];
  let options = [
    Option<"stage", "stage", "int64_t", /*default=*/"1",
           "ZeRO stage: 1 (update), 2 (+ gradients), 3 (+ weights)">
  ];
  let dependentDialects = ["::distir::dist::DistDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def DistSimulatePass : Pass<"dist-simulate", "::mlir::ModuleOp"> {
  let summary = "Simulate a function and write the report (IR unchanged)";
  let description = [{
    The `distir-sim` analysis inside a pipeline: predicts the runtime, memory
    and critical path of `entry` (default: the only public function) on
    `cluster` (default: the module's `dist.cluster`) and writes the text or
    JSON report to `output` (default: stdout). For example:

    `distir-opt mlp.mlir --dist-dtp=dp=2 --dist-simulate="cluster=dgx-h100 entry=mlp_dtp output=report.json format=json" -o dtp.mlir`
  }];
  let options = [
    Option<"cluster", "cluster", "std::string", /*default=*/"\"\"",
           "Preset (NAME[:key=value,...]) or JSON file; default: the "
           "module's dist.cluster">,
    Option<"entry", "entry", "std::string", /*default=*/"\"\"",
           "Function to simulate">,
    Option<"costModel", "cost-model", "::distir::CostModelKind",
           /*default=*/"::distir::CostModelKind::Analytic",
           "analytic, distir-compat or calibrated (with calibration=FILE)",
           [{::llvm::cl::values(
             clEnumValN(::distir::CostModelKind::Analytic, "analytic",
                        "roofline compute, topology-aware collectives"),
             clEnumValN(::distir::CostModelKind::DistIRCompat,
                        "distir-compat", "the published DistIR formulas"),
             clEnumValN(::distir::CostModelKind::Calibrated, "calibrated",
                        "fitted to measurements (calibration=FILE)"))}]>,
    Option<"calibration", "calibration", "std::string", /*default=*/"\"\"",
           "Calibration JSON file written by distir-calibrate">,
    Option<"algorithm", "algo", "::distir::CollectiveAlgorithm",
           /*default=*/"::distir::CollectiveAlgorithm::Ring",
           "Collective algorithm: ring or tree", [{::llvm::cl::values(
             clEnumValN(::distir::CollectiveAlgorithm::Ring, "ring",
                        "ring collectives"),
             clEnumValN(::distir::CollectiveAlgorithm::Tree, "tree",
                        "tree collectives"))}]>,
    Option<"overlap", "overlap", "bool", /*default=*/"false",
           "Separate compute and communication streams per device">,
    Option<"batch", "batch", "int64_t", /*default=*/"0",
           "Samples per step, to report throughput">,
    Option<"format", "format", "::distir::dist::ReportFormat",
           /*default=*/"::distir::dist::ReportFormat::Text", "text or json",
           [{::llvm::cl::values(
             clEnumValN(::distir::dist::ReportFormat::Text, "text",
                        "the text report"),
             clEnumValN(::distir::dist::ReportFormat::JSON, "json",
                        "the JSON report"))}]>,
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "Report file (- for stdout)">
  ];
}

def DistSynthesizeReductionsPass
    : Pass<"dist-synthesize-reductions", "::mlir::ModuleOp"> {
  let summary = "Replace all-reduces that span hierarchy levels by "
                "synthesized hierarchical reductions (P²)";
  let description = [{
    For each `dist.all_reduce` whose group spans several levels of the
    cluster hierarchy, builds the synthesis problem of that group (per
    level, how many devices of the group it holds; the reduction axis is the
    whole group, which must be the product of its per-level coordinate
    sets), enumerates the reduction programs of at most `max-size`
    instructions (see docs/design/synthesis.md; the Master form takes
    AllReduce only unless `master-collectives=all`), prices them and the single
    all-reduce with the collective cost model (`algo` = NCCL ring or tree),
    and, if the best program is predicted faster, replaces the all-reduce by
    the program's `dist` collectives.

    Data chunks follow the ops' semantics: `reduce_scatter` and
    `all_gather` act on dimension 0, so programs that use them need
    dimension 0 divisible by the group size; an `all_gather` whose members'
    chunks would not concatenate in order, or an `avg` reduction over
    unequally many contributions, also rules a program out. The next best
    program is tried; if none beats the all-reduce, it is kept. Groups
    within one level, groups that are not a product of per-level sets and
    groups of more than 256 devices keep their all-reduce. With `verbose`,
    each decision is reported as a remark on the all-reduce.

    The cluster is `cluster` (a preset spec or a JSON file, as for
    `dist-attach-cluster`) or else the module's `dist.cluster` attribute.

    Example (`gcp-a100x16:nodes=2`, two GPUs on each node):

    ```mlir
    !t0 = tensor<1024x256xf32, #dist.device<0>>
    !t1 = tensor<1024x256xf32, #dist.device<1>>
    !t16 = tensor<1024x256xf32, #dist.device<16>>
    !t17 = tensor<1024x256xf32, #dist.device<17>>
    func.func @f(%a: !t0, %b: !t1, %c: !t16, %d: !t17)
        -> (!t0, !t1, !t16, !t17) {
      %r:4 = dist.all_reduce sum %a, %b, %c, %d : !t0, !t1, !t16, !t17
      return %r#0, %r#1, %r#2, %r#3 : !t0, !t1, !t16, !t17
    }
    ```

    becomes ReduceScatter inside each node, AllReduce of each chunk across
    the nodes, AllGather inside each node:

    ```mlir
    !t0 = tensor<1024x256xf32, #dist.device<0>>
    !t1 = tensor<1024x256xf32, #dist.device<1>>
    !t16 = tensor<1024x256xf32, #dist.device<16>>
    !t17 = tensor<1024x256xf32, #dist.device<17>>
    !h0 = tensor<512x256xf32, #dist.device<0>>
    !h1 = tensor<512x256xf32, #dist.device<1>>
    !h16 = tensor<512x256xf32, #dist.device<16>>
    !h17 = tensor<512x256xf32, #dist.device<17>>
    func.func @f(%a: !t0, %b: !t1, %c: !t16, %d: !t17)
        -> (!t0, !t1, !t16, !t17) {
      %0:2 = dist.reduce_scatter sum %a, %b dim 0 : !t0, !t1
      %1:2 = dist.reduce_scatter sum %c, %d dim 0 : !t16, !t17
      %2:2 = dist.all_reduce sum %0#0, %1#0 : !h0, !h16
      %3:2 = dist.all_reduce sum %0#1, %1#1 : !h1, !h17
      %4:2 = dist.all_gather %2#0, %3#0 dim 0 : !h0, !h1
      %5:2 = dist.all_gather %2#1, %3#1 dim 0 : !h16, !h17
      return %4#0, %4#1, %5#0, %5#1 : !t0, !t1, !t16, !t17
    }
    ```
  }];
  let options = [
    Option<"cluster", "cluster", "std::string", /*default=*/"\"\"",
           "Preset name (NAME[:key=value,...]) or path of a JSON cluster "
           "file; defaults to the module's dist.cluster attribute">,
    Option<"algo", "algo", "::distir::CollectiveAlgorithm",
           /*default=*/"::distir::CollectiveAlgorithm::Ring",
           "Collective algorithm used for pricing: ring or tree",
           [{::llvm::cl::values(
             clEnumValN(::distir::CollectiveAlgorithm::Ring, "ring",
                        "ring collectives"),
             clEnumValN(::distir::CollectiveAlgorithm::Tree, "tree",
                        "tree collectives"))}]>,
    Option<"maxSize", "max-size", "unsigned", /*default=*/"5",
           "Largest number of instructions of a synthesized program (1..8)">,
    Option<"masterCollectives", "master-collectives",
           "::distir::synth::MasterCollectives",
           /*default=*/"::distir::synth::MasterCollectives::AllReduce",
           "Collectives the Master form takes: allreduce (the P2 paper's "
           "programs) or all",
           [{::llvm::cl::values(
             clEnumValN(::distir::synth::MasterCollectives::AllReduce,
                        "allreduce", "AllReduce only"),
             clEnumValN(::distir::synth::MasterCollectives::All, "all",
                        "all five collectives"))}]>,
    Option<"verbose", "verbose", "bool", /*default=*/"false",
           "Report each decision as a remark on the all-reduce">
  ];
  let dependentDialects = ["::distir::dist::DistDialect"];
}

#endif // DISTIR_DIALECT_DIST_TRANSFORMS_PASSES_TD
