//===- Passes.td - DistIR conversion passes ----------------*- tablegen -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_CONVERSION_PASSES_TD
#define DISTIR_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def DistToRankPass : Pass<"dist-to-rank", "::mlir::ModuleOp"> {
  let summary = "Project global dist programs onto per-rank programs";
  let description = [{
    For every function that contains placed values, creates one function
    `@<name>_rank<R>` per rank `R` (device ids are ranks). Rank `R` keeps the
    ops that involve device `R`, plus the unplaced (scalar) ops they need;
    `dist.send` becomes `dist_rank.send` on the source and `dist_rank.recv`
    on the destination (tags count the transfers of each ordered pair), and
    each collective becomes one `dist_rank` op per member that names the
    group as a list of global ranks. Placed arguments and results go to
    their device; unplaced arguments to every rank, unplaced results to
    rank 0. `dist_rank.arg_map` and `dist_rank.result_map` record the
    global index of each argument and result.

    Before:

    ```mlir
    func.func @f(%x: tensor<4xf32, #dist.device<0>>) -> tensor<4xf32, #dist.device<1>> {
      %y = dist.send %x : tensor<4xf32, #dist.device<0>> -> tensor<4xf32, #dist.device<1>>
      return %y : tensor<4xf32, #dist.device<1>>
    }
    ```

    After (with `keep-global=false strip-placement=true`):

    ```mlir
    func.func @f_rank0(%x: tensor<4xf32>) attributes {
        dist_rank.arg_map = array<i64: 0>, dist_rank.num_ranks = 2 : i64,
        dist_rank.program = "f", dist_rank.rank = 0 : i64,
        dist_rank.result_map = array<i64>} {
      dist_rank.send %x to 1 tag 0 : tensor<4xf32>
      return
    }
    func.func @f_rank1() -> tensor<4xf32> attributes {
        dist_rank.arg_map = array<i64>, dist_rank.num_ranks = 2 : i64,
        dist_rank.program = "f", dist_rank.rank = 1 : i64,
        dist_rank.result_map = array<i64: 0>} {
      %0 = dist_rank.recv from 0 tag 0 : tensor<4xf32>
      return %0 : tensor<4xf32>
    }
    ```

    Program order is kept on every rank, so the projection of a program is
    deadlock-free; the pass still runs the matching check of
    `dist-rank-verify-matching` on its output. Calls, and ops with regions
    whose body spans several devices, are rejected.
  }];
  let options = [
    Option<"keepGlobal", "keep-global", "bool", /*default=*/"true",
           "Keep the global function (convert-dist-to-mpi turns it into a "
           "dispatcher on the rank)">,
    Option<"stripPlacement", "strip-placement", "bool", /*default=*/"false",
           "Drop the #dist.device encodings from the per-rank functions">,
    Option<"numRanks", "num-ranks", "int64_t", /*default=*/"0",
           "Number of ranks (0: the largest device id used plus one)">
  ];
  let dependentDialects = ["::distir::dist::DistDialect",
                           "::distir::dist_rank::DistRankDialect"];
}

def DistRankVerifyMatchingPass
    : Pass<"dist-rank-verify-matching", "::mlir::ModuleOp"> {
  let summary = "Check that the communication of per-rank programs matches "
                "and cannot deadlock";
  let description = [{
    Groups the functions that carry `dist_rank.program` by program and
    replays their communication with blocking (rendezvous) semantics: a send
    completes together with the matching receive on its destination (same
    source, tag, shape and element type), and a collective completes when
    every member of its group has reached it with the same kind, group,
    root and attributes. The check fails if some rank is left waiting (a
    deadlock, reported with what each stuck rank waits for) or if two
    matched ops disagree. Every rank named must have a function.
  }];
  let dependentDialects = ["::distir::dist_rank::DistRankDialect"];
}

def ConvertDistToMPIPass : Pass<"convert-dist-to-mpi", "::mlir::ModuleOp"> {
  let summary = "Lower per-rank programs to the upstream mpi dialect";
  let description = [{
    Expects the output of `dist-to-rank`. Strips placement encodings, then
    rewrites each `dist_rank` op on tensors into `mpi` ops on buffers
    (`bufferization.to_buffer` / `memref.alloc` + `bufferization.to_tensor`):

    * `send`/`recv`: `mpi.send`/`mpi.recv` on `MPI_COMM_WORLD`, tag kept;
    * `all_reduce`: `mpi.allreduce` on the group's communicator (`avg`:
      sum, then divide by the group size);
    * `reduce`: the same, kept by the root only; `reduce_scatter`: an
      all-reduce, then each member keeps its chunk;
    * `broadcast`, `scatter`, `gather`, `all_gather`, `all_to_all` (no
      `mpi` op in MLIR 22): rooted rounds of blocking sends and receives in
      group order (member `i` sends to every other member in group order
      while those receive from `i`), which cannot deadlock.

    Each rank function starts by asking the runtime
    (`runtime/mpi/DistIRMPIRuntime.h`, library `DistIRMPIRuntime`) for the
    communicator of every device group of the program that needs one
    (all-reduce, reduce-scatter, reduce): `distir_mpi_group_comm(ranks, n)`
    on a constant array of the group's ranks. The runtime runs one
    `MPI_Comm_split` per group for the life of the process and frees the
    communicators at `MPI_Finalize`, so repeated steps reuse them. The calls
    come
    in the same order on every rank, since the split is collective. A global
    function kept by `dist-to-rank` becomes a dispatcher with its original
    signature: it switches on `mpi.comm_rank` to the rank's function and
    returns empty tensors (zeros for scalars) for the results the rank does
    not own. The module gets the `dlti.map` that `convert-mpi-to-llvm`
    needs.
  }];
  let options = [
    Option<"implementation", "mpi-implementation",
           "::distir::MPIImplementation",
           /*default=*/"::distir::MPIImplementation::OpenMPI",
           "MPI ABI of the lowering: OpenMPI or MPICH", [{::llvm::cl::values(
             clEnumValN(::distir::MPIImplementation::OpenMPI, "OpenMPI",
                        "Open MPI's ABI"),
             clEnumValN(::distir::MPIImplementation::MPICH, "MPICH",
                        "MPICH's ABI"))}]>
  ];
  let dependentDialects = ["::mlir::mpi::MPIDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::DLTIDialect"];
}

def DistFixOpenMPISymbolsPass
    : Pass<"dist-fix-openmpi-symbols", "::mlir::ModuleOp"> {
  let summary = "Rename the OpenMPI reduction-op globals that "
                "convert-mpi-to-llvm gets wrong";
  let description = [{
    MLIR 22's `convert-mpi-to-llvm` refers to `ompi_mpi_sum` (and `_prod`,
    `_max`, `_min`, ...) for OpenMPI, but OpenMPI exports these handles as
    `ompi_mpi_op_sum`, ...; the link (or the JIT) then fails with an
    undefined symbol. This pass renames the `llvm.mlir.global`s and their
    `llvm.mlir.addressof` uses. The same lowering reads the communicator
    that `MPI_Comm_split` returns as a sign-extended i32 (MPICH's integer
    handle); OpenMPI's handle is a pointer, so the pass loads it as i64.
    Run it after `convert-mpi-to-llvm`.
  }];
}

def ConvertDistToNCCLPass : Pass<"convert-dist-to-nccl", "::mlir::ModuleOp"> {
  let summary = "Lower per-rank communication to calls into the NCCL shim";
  let description = [{
    Expects the output of `dist-to-rank` with placement stripped or not.
    Rewrites each `dist_rank` op on tensors into `func.call`s of the C
    functions of `runtime/nccl/DistIRNCCLRuntime.h` (library
    `DistIRNCCLRuntime`, built when CUDA and NCCL are found) on buffers
    (`bufferization.to_buffer`, `memref.alloc` + `bufferization.to_tensor`,
    pointers taken with `memref.extract_aligned_pointer_as_index`):
    `distir_nccl_send`/`_recv` (one `ncclGroupStart/End` each),
    `_all_reduce`, `_all_gather`, `_reduce_scatter`, `_broadcast`,
    `_reduce`, and `_gather`/`_scatter`/`_all_to_all` built from grouped
    `ncclSend`/`ncclRecv`. Every rank function first asks the shim for the
    communicator of each device group of its program with
    `distir_nccl_group_comm(ranks, n)` (one `ncclCommSplit` of the world
    communicator per group for the life of the process, which the shim
    creates with `ncclCommInitRank` and a unique
    id broadcast by rank 0 over MPI), in the same order on every rank. The
    global function kept by `dist-to-rank` becomes a dispatcher on
    `distir_nccl_world_rank()`. Buffers may live in device memory (used in
    place) or host memory (staged through device scratch buffers by the
    shim).

    Chunked collectives need their chunk dimension to be the outermost
    non-unit one (NCCL chunks are contiguous); other layouts are rejected
    with an error, as are element types without an NCCL data type.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def DistDecomposeAggregatedLinalgPass
    : Pass<"distir-decompose-aggregated-linalg"> {
  let summary = "Decompose aggregated linalg ops (softmax) into generic ops";
  let description = [{
    Replaces every op implementing `linalg::AggregatedOpInterface`
    (`linalg.softmax`) by the structured ops it is made of, so that
    `convert-linalg-to-loops`, which handles structured ops only, can lower
    rank programs of imported transformers. Upstream offers this
    decomposition only as a transform-dialect op. Part of
    `dist-lower-to-llvm`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

def DistFuseElementwisePass : Pass<"dist-fuse-elementwise"> {
  let summary = "Fuse elementwise linalg ops into elementwise consumers";
  let description = [{
    Merges an elementwise `linalg.generic` (all loops parallel, no payload
    reading its init) into the elementwise `linalg.generic` that consumes
    its result, with upstream's `linalg::fuseElementwiseOps`, so that a
    chain such as GELU's runs as one loop nest (or one GPU kernel) with no
    intermediate buffer. Unlike upstream's `linalg-fuse-elementwise-ops`
    it applies that rewrite alone (no reshape propagation, which drops the
    `#dist.device` encodings of rank programs; no fill or constant folding)
    and only where nothing is computed twice: the producer has no other
    user and the consumer no reduction loop (which would also hide a
    contraction from `dist-linalg-to-blas`). A producer that accumulates
    into its init is never fused: upstream keeps it as a result of the
    fused op and, in a consumer with loops it lacks, repeats the
    accumulation. Part of `dist-lower-to-llvm` with `fuse=true`.
  }];
  let options = [
    Option<"maxFusions", "max-fusions", "int64_t", "-1",
           "Stop after this many fusions (-1: no limit; for bisecting)">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def DistOutlineLoopNestsPass : Pass<"dist-outline-loop-nests", "::mlir::ModuleOp"> {
  let summary = "Move each outermost loop nest on buffers into a function";
  let description = [{
    After `convert-linalg-to-loops` a rank program is one function with a
    loop nest per structured op: hundreds of loops in one body, on which
    LLVM's optimizer spends time superlinear in the function's size (a
    GPT-2 block's training step took 10 s to optimize at -O2, 0.3 s at -O0
    to compile). This pass moves every outermost `scf.for`/`scf.parallel`
    without results into a private function of its own (`noinline`, so
    that LLVM optimizes each loop nest alone), called where the loop was;
    constants the loop uses are cloned into the function, every other value
    from outside becomes an argument. Part of `dist-lower-to-llvm` on CPUs.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def DistOneHotToScatterPass : Pass<"dist-one-hot-to-scatter"> {
  let summary = "Run one-hot contractions on buffers as scatter-add loops";
  let description = [{
    `dist-autodiff` writes the adjoint of a gather (an embedding lookup) as
    a structured op over the table's rows and the op's points,
    `dT[v, e] += select(ids[b, s] == v, dy[b, s, e], 0)`: the analyses see a
    reduction over the batch into the table, but loops over it cost rows x
    points iterations. When a parallel loop `v` of a `linalg.generic` on
    buffers appears only in the output map and in one `index == v` test that
    selects the only change to the accumulator (`acc + select(test, x, 0)`),
    and the index does not depend on `v`, this pass replaces the op by loops
    over its other dimensions that compute `v` = index and, when it lies in
    the table, accumulate into that row (a scatter-add, one update per
    point). Part of `dist-lower-to-llvm`, after bufferization.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def DistLinalgToBLASPass : Pass<"dist-linalg-to-blas", "::mlir::ModuleOp"> {
  let summary = "Call CBLAS for matrix products of rank code on buffers";
  let description = [{
    Replaces each structured contraction on buffers that is one (optionally
    batched) matrix product, `C[b] += op(A[b]) * op(B[b])`, by calls of
    `cblas_sgemm` (f32) or `cblas_dgemm` (f64): one call, or one per batch
    index in nested `scf.for` loops. Applies when
    `linalg::inferContractionDims` finds one m, one n and one k dimension
    (batch dimensions: any), all operands share the element type, the result
    is indexed (batch..., m, n), the inputs (batch..., m, k) or (batch...,
    k, m) and (batch..., k, n) or (batch..., n, k) (transposes are passed to
    BLAS; an input may omit batch dimensions: it is broadcast along them),
    and every operand's innermost stride is statically 1; leading dimensions come from the buffers' strided
    metadata. Other ops are left for `convert-linalg-to-loops`. The program
    must then be linked with a CBLAS (OpenBLAS). With `library=cublas` the
    calls go to `distir_cublas_sgemm`/`_dgemm` instead, which take the same
    arguments on device buffers and run cuBLAS on the rank's stream
    (runtime/cuda/DistIRCUDARuntime.h). Part of
    `dist-lower-to-llvm{blas=true}`, after buffer deallocation.
  }];
  let options = [
    Option<"library", "library", "::distir::BLASLibrary",
           /*default=*/"::distir::BLASLibrary::CBLAS",
           "Which GEMM to call: cblas (host buffers) or cublas (device "
           "buffers, device=gpu code)", [{::llvm::cl::values(
             clEnumValN(::distir::BLASLibrary::CBLAS, "cblas",
                        "CBLAS on host buffers"),
             clEnumValN(::distir::BLASLibrary::CUBLAS, "cublas",
                        "cuBLAS on device buffers"))}]>,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def DistGPUStageConstantsPass
    : Pass<"dist-gpu-stage-constants", "::mlir::func::FuncOp"> {
  let summary = "Copy constant globals that compute reads into device memory";
  let description = [{
    In `device=gpu` rank code every `memref.alloc` is device memory and
    every kernel reads device memory, but `memref.get_global` (a constant
    tensor after bufferization) names host memory. This pass gives each
    such use its own buffer, `memref.alloc` + `memref.copy` from the global,
    which `dist-gpu-lower-copies` turns into a host-to-device copy. Globals
    whose only users take their address for a runtime call (the rank lists
    of `distir_nccl_group_comm`) stay on the host. Part of
    `dist-lower-to-llvm{device=gpu}`, after bufferization and before buffer
    deallocation (which then frees the copies).
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def DistGPUPrepareKernelsPass
    : Pass<"dist-gpu-prepare-kernels", "::mlir::ModuleOp"> {
  let summary = "Prepare device=gpu buffer code for kernel mapping";
  let description = [{
    Runs after buffer deallocation was lowered, before linalg becomes
    parallel loops:
    - the bookkeeping arrays of the deallocation lowering (operands of the
      `dealloc_helper` calls: pointers and ownership flags) are host memory:
      `memref.alloca` instead of `memref.alloc`;
    - a `memref.copy` from a `memref.get_global` (host memory) becomes a call
      of `distir_cuda_copy(dst, src, bytes)`
      (runtime/cuda/DistIRCUDARuntime.h); both buffers must be contiguous;
      every other copy is between device buffers and becomes a
      `linalg.copy`, which runs as a kernel (LLVM's lowering of
      `memref.copy` would read device memory on the host);
    - a structured op without loops (on 0-d buffers: a scalar loss, a
      step count) is put in a one-iteration `scf.parallel`, so that it also
      becomes a kernel;
    - the loops of a structured op with a reduction loop before a parallel
      one (a bias gradient summed over the batch) are interchanged, parallel
      loops first, so that it becomes one kernel whose threads reduce
      sequentially rather than a host loop launching a kernel per
      iteration.
    Part of `dist-lower-to-llvm{device=gpu}`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def DistGPUWrapHostLoopsPass
    : Pass<"dist-gpu-wrap-host-loops", "::mlir::func::FuncOp"> {
  let summary = "Run leftover host code that touches buffers as one GPU thread";
  let description = [{
    After `convert-parallel-loops-to-gpu`, code that reads or writes
    buffers outside a kernel is left where no parallel loop could be
    mapped: sequential loops (a scatter-add, a scan) and scalar accesses.
    On the host it would read device memory. This pass wraps the largest
    such region of the function body (an op without results whose nested
    ops contain no kernel launch, call or allocation) into a `gpu.launch` of
    one block of one thread, so it runs on the GPU in program order. A load
    whose value the host needs (a result leaving the region) cannot be
    moved and is an error. Part of `dist-lower-to-llvm{device=gpu}`.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def DistGPUTileParallelLoopsPass
    : Pass<"dist-gpu-tile-parallel-loops", "::mlir::func::FuncOp"> {
  let summary = "Tile the innermost dimension of parallel loops for GPU blocks";
  let description = [{
    Tiles every outermost `scf.parallel` by `block-size` along its innermost
    dimension (1 along the others), with fixed-size inner loops guarded by
    `scf.if` (`no-min-max-bounds`), so that `gpu-map-parallel-loops` maps the
    tile to the threads of a block and consecutive threads touch consecutive
    elements of row-major buffers. Part of `dist-lower-to-llvm{device=gpu}`.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block (tile of the innermost dimension)">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::affine::AffineDialect"];
}

def DistGPUApproximateMathPass : Pass<"dist-gpu-approximate-math"> {
  let summary = "Math functions of kernels as arithmetic (no libdevice)";
  let description = [{
    `convert-gpu-to-nvvm` lowers `math.exp`, `math.erf`, `math.tanh`, ... to
    calls of CUDA's libdevice (`__nv_expf`), which must then be found in a
    CUDA toolkit when the kernels are compiled. This pass expands them first
    (upstream's math expansion and polynomial approximation patterns, the
    same the CPU vectorizers use) and writes what remains (`absf`, `floor`,
    `ceil`, `trunc`, `roundeven`, `sqrt`, `fma` on f32/f64) as one PTX
    instruction each (`llvm.inline_asm`), so that kernels compile on
    machines without CUDA and give the same values everywhere. Any other
    math op is an error. Part of `dist-lower-to-llvm{device=gpu}`, on the
    kernels' `gpu.module`s.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

#endif // DISTIR_CONVERSION_PASSES_TD
