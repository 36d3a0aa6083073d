//===- distir-exec.cpp - Run a dist program's ranks under mpirun ----------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// mpirun -np N distir-exec prog.mlir [--entry NAME] [--input NAME=file.npy]...
//   [--random-inputs SEED] [--output-dir DIR] [--timeout S]
//
// Every process parses the global program, projects it onto the ranks
// (dist-to-rank), lowers it to LLVM with MPI communication
// (dist-lower-to-llvm) and JIT-compiles it; the entry point dispatches on
// the MPI rank. Each rank reads only the inputs it uses (random inputs
// follow distir-run's sequence, so both tools see the same values) and
// writes the results it owns as DIR/output_K.npy. Set-up errors are agreed
// on by all ranks before any communication, so they end the job cleanly;
// later failures call MPI_Abort, and --timeout turns a hang into an error.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Analysis/Executor.h"
#include "DistIR/Analysis/ProgramInputs.h"
#include "DistIR/Analysis/TensorIO.h"
#include "DistIR/Conversion/DistToRank.h"
#include "DistIR/Conversion/Passes.h"
#include "DistIR/Conversion/Pipelines.h"
#include "DistIR/Target/ONNX/TensorProtoIO.h"
#include "DistIR/Tools/ToolUtils.h"

#include "DistIRMPIRuntime.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <malloc.h>
#include <random>
#include <unistd.h>

using namespace mlir;
using namespace distir;
namespace cl = llvm::cl;

static cl::OptionCategory category("distir-exec options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<program>"),
                                      cl::init("-"), cl::cat(category));
static cl::opt<std::string> entryName("entry", cl::desc("Function to run"),
                                      cl::cat(category));
static cl::opt<std::string> weightsFrom(
    "weights-from",
    cl::desc("Bind arguments without --input to the initializers of this ONNX "
             "model, by name (the model's own weights; like distir-run)"),
    cl::value_desc("model.onnx"), cl::cat(category));
static cl::list<std::string> inputs("input",
                                    cl::desc("Argument value: NAME=file.npy"),
                                    cl::value_desc("NAME=file.npy"),
                                    cl::cat(category));
static cl::opt<int64_t> randomSeed(
    "random-inputs",
    cl::desc("Fill arguments without --input with the pseudo-random values "
             "distir-run uses for this seed"),
    cl::init(-1), cl::cat(category));
static cl::opt<std::string>
    outputDir("output-dir",
              cl::desc("Write each result, on its owning rank, as "
                       "DIR/output_N.npy"),
              cl::cat(category));
static cl::opt<unsigned> timeoutSeconds(
    "timeout", cl::desc("Fail (exit 124) after this many seconds (0: never)"),
    cl::init(300), cl::cat(category));
static cl::opt<unsigned>
    optLevel("O",
             cl::desc("LLVM optimization level of the compiled rank code, 0-3 "
                      "(default 2)"),
             cl::init(2), cl::Prefix, cl::cat(category));
#ifdef DISTIR_BLAS_LIBRARY
static constexpr bool kHaveBLAS = true;
#else
static constexpr bool kHaveBLAS = false;
#endif
static cl::opt<bool> useBLAS(
    "blas",
    cl::desc("Matrix products as OpenBLAS calls (default: on when distir-exec "
             "was built with OpenBLAS; one BLAS thread per rank unless "
             "OPENBLAS_NUM_THREADS says otherwise)"),
    cl::init(kHaveBLAS), cl::cat(category));
static cl::opt<bool> fuseElementwise(
    "fuse",
    cl::desc("Fuse elementwise ops with their producers and consumers before "
             "bufferization (one loop nest instead of one per op)"),
    cl::init(false), cl::cat(category));
static cl::opt<unsigned>
    repeat("repeat",
           cl::desc("Run the step this many times on the same inputs (the "
                    "outputs are the last run's)"),
           cl::init(1), cl::cat(category));
static cl::opt<bool> reportResources(
    "report-resources",
    cl::desc("Print, per rank, the communicator splits and the resident "
             "memory after the first and the last step"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> timeSteps(
    "time-steps",
    cl::desc("Print, per rank, the wall time of the steps after the first "
             "(median and minimum; with --repeat)"),
    cl::init(false), cl::cat(category));
static cl::opt<unsigned>
    printLimit("print-limit",
               cl::desc("Elements of each result to print (default 16)"),
               cl::init(16), cl::cat(category));

static int worldRank = 0;

/// The largest argument or result buffer distir-exec allocates.
static constexpr int64_t kMaxBufferBytes = int64_t(1) << 40;

/// Resident set size of this process (/proc/self/statm), in bytes.
static int64_t residentBytes() {
  long pages = 0, resident = 0;
  if (FILE *f = fopen("/proc/self/statm", "r")) {
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
      resident = 0;
    fclose(f);
  }
  return static_cast<int64_t>(resident) * sysconf(_SC_PAGESIZE);
}

extern "C" void onTimeout(int) {
  char msg[128];
  int n = snprintf(msg, sizeof(msg),
                   "error: rank %d timed out (--timeout %u s); the ranks "
                   "hang or run too long\n",
                   worldRank, timeoutSeconds.getValue());
  if (n > 0)
    (void)!write(STDERR_FILENO, msg, n);
  _exit(124);
}

static int64_t elementBytes(Type t) {
  if (t.isF32() || t.isInteger(32))
    return 4;
  if (t.isF64() || t.isInteger(64))
    return 8;
  if (t.isInteger(16))
    return 2;
  if (t.isInteger(8) || t.isInteger(1))
    return 1;
  return 0;
}

/// A buffer and its memref descriptor (allocated, aligned, offset, sizes,
/// strides), as the C interface of a lowered function expects.
struct Buffer {
  Type element;
  SmallVector<int64_t> shape;
  std::vector<char> bytes;
  std::vector<int64_t> descriptor;
  void *descriptorPtr = nullptr;

  Buffer(Type element, ArrayRef<int64_t> shape)
      : element(element), shape(shape) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    bytes.assign(std::max<int64_t>(n, 1) * elementBytes(element), 0);
    descriptor.assign(3 + 2 * shape.size(), 0);
    auto ptr = reinterpret_cast<int64_t>(bytes.data());
    descriptor[0] = descriptor[1] = ptr;
    int64_t stride = 1;
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      descriptor[3 + d] = shape[d];
      descriptor[3 + shape.size() + d] = stride;
      stride *= shape[d];
    }
    descriptorPtr = descriptor.data();
  }
  int64_t size() const { return bytes.size() / elementBytes(element); }

  void fill(const RuntimeValue &v) {
    for (int64_t i = 0, e = v.data->size(); i < e && i < size(); ++i) {
      double x = (*v.data)[i];
      char *p = bytes.data() + i * elementBytes(element);
      if (element.isF32()) {
        float f = static_cast<float>(x);
        memcpy(p, &f, 4);
      } else if (element.isF64()) {
        memcpy(p, &x, 8);
      } else {
        int64_t k = static_cast<int64_t>(x);
        memcpy(p, &k, elementBytes(element)); // little-endian truncation
      }
    }
  }
  RuntimeValue read(bool isTensor) const {
    RuntimeValue v = isTensor ? RuntimeValue::tensor(element, shape)
                              : RuntimeValue::scalar(element, 0);
    v.isTensor = isTensor;
    for (int64_t i = 0; i < size(); ++i) {
      const char *p = bytes.data() + i * elementBytes(element);
      double x;
      if (element.isF32()) {
        float f;
        memcpy(&f, p, 4);
        x = f;
      } else if (element.isF64()) {
        memcpy(&x, p, 8);
      } else {
        int64_t k = 0;
        memcpy(&k, p, elementBytes(element));
        unsigned width = element.getIntOrFloatBitWidth();
        if (width < 64 && (k >> (width - 1)) & 1 && width > 1)
          k |= ~((int64_t(1) << width) - 1); // sign-extend
        x = static_cast<double>(k);
      }
      (*v.data)[i] = x;
    }
    return v;
  }
};

/// `distir_entry(memref args..., memref outs...)`: calls the dispatcher and
/// stores its results into the caller's buffers; scalars travel as 0-d
/// memrefs. Built on tensors, before bufferization.
static func::FuncOp buildEntryWrapper(ModuleOp module, func::FuncOp global) {
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Location loc = global.getLoc();
  auto asMemRef = [](Type t) {
    if (auto tensor = dyn_cast<RankedTensorType>(t))
      return MemRefType::get(tensor.getShape(), tensor.getElementType());
    return MemRefType::get({}, t);
  };
  SmallVector<Type> types;
  for (Type t : global.getArgumentTypes())
    types.push_back(asMemRef(t));
  for (Type t : global.getResultTypes())
    types.push_back(asMemRef(t));
  auto wrapper = func::FuncOp::create(b, loc, "distir_entry",
                                      b.getFunctionType(types, {}));
  wrapper->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  Block *block = wrapper.addEntryBlock();
  b.setInsertionPointToEnd(block);
  SmallVector<Value> args;
  for (auto [i, t] : llvm::enumerate(global.getArgumentTypes())) {
    Value arg = block->getArgument(i);
    if (auto tensor = dyn_cast<RankedTensorType>(t))
      args.push_back(bufferization::ToTensorOp::create(b, loc, tensor, arg,
                                                       /*restrict=*/true));
    else
      args.push_back(memref::LoadOp::create(b, loc, arg, ValueRange{}));
  }
  auto call = func::CallOp::create(b, loc, global, args);
  unsigned numArgs = global.getNumArguments();
  for (auto [i, r] : llvm::enumerate(call.getResults())) {
    Value out = block->getArgument(numArgs + i);
    if (isa<RankedTensorType>(r.getType())) {
      auto m = bufferization::MaterializeInDestinationOp::create(
          b, loc, TypeRange(), r, out);
      m.setRestrict(true);
      m.setWritable(true);
    } else {
      memref::StoreOp::create(b, loc, r, out, ValueRange{});
    }
  }
  func::ReturnOp::create(b, loc);
  return wrapper;
}

/// Keeps only `entry` and what it calls: every other function becomes
/// private, calls are inlined (so that the entry is one global program, as
/// dist-to-rank needs; a call that cannot be inlined is reported there), and
/// functions nothing uses any more are dropped. This way a module with
/// several public functions, such as dist-dtp's wrapper and its distributed
/// program, runs whichever of them --entry names.
static LogicalResult isolateEntry(ModuleOp module, func::FuncOp entry) {
  for (auto func : module.getOps<func::FuncOp>())
    if (func != entry && !func.isExternal())
      func.setPrivate();
  PassManager pm(module.getContext());
  // No simplification pipeline: run the program as written.
  pm.addPass(createInlinerPass({}, [](OpPassManager &) {}));
  pm.addPass(createSymbolDCEPass());
  return pm.run(module);
}

/// Replaces the body of every other rank's function by a stub returning
/// empty values: the dispatcher only calls this rank's, and compiling all
/// ranks' code in every process would cost ranks^2 compilations in all.
/// Runs after convert-dist-to-mpi, which sets up the communicators.
static void stubOtherRanks(ModuleOp module, int rank) {
  for (auto func : module.getOps<func::FuncOp>()) {
    auto r = func->getAttrOfType<IntegerAttr>(dist_rank::kRankAttr);
    if (!r || r.getInt() == rank || func.isExternal())
      continue;
    OpBuilder b(func.getContext());
    Location loc = func.getLoc();
    if (!llvm::all_of(func.getResultTypes(), [&](Type t) {
          auto tensor = dyn_cast<RankedTensorType>(t);
          return tensor ? tensor.hasStaticShape()
                        : static_cast<bool>(b.getZeroAttr(t));
        }))
      continue;
    Region &body = func.getBody();
    body.dropAllReferences();
    while (!body.empty())
      body.back().erase();
    b.setInsertionPointToEnd(func.addEntryBlock());
    func::ReturnOp::create(
        b, loc, buildPlaceholderResults(b, loc, func.getResultTypes()));
  }
}

/// Ops the CPU lowering handles.
static bool isSupported(Operation *op) {
  StringRef ns = op->getDialect() ? op->getDialect()->getNamespace() : "";
  return llvm::is_contained({"func", "arith", "math", "linalg", "tensor", "scf",
                             "bufferization", "memref", "affine", "dist", "cf",
                             "index"},
                            ns);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // A step frees its buffers and the next allocates the same sizes again:
  // keep freed memory in the heap (as framework caching allocators do)
  // instead of returning large blocks to the kernel, which made every step
  // pay page faults and zeroing for all of its memory.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  // Options first: --help, --version and a wrong flag exit here, before
  // MPI_Init, which outside mpirun starts an Open MPI daemon (about 0.4 s)
  // and under mpirun would require MPI_Finalize before any exit.
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "DistIR runner: runs each rank of a dist program (start it under "
      "mpirun -np N)\n");
  MPI_Init(&argc, &argv);
  int worldSize = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
  if (timeoutSeconds > 0) {
    signal(SIGALRM, onTimeout);
    alarm(timeoutSeconds);
  }
  // One write per message, so that the ranks' lines do not interleave.
  auto error = [&](const Twine &msg) {
    std::string line =
        ("error: rank " + Twine(worldRank) + ": " + msg + "\n").str();
    (void)!write(STDERR_FILENO, line.data(), line.size());
    return false;
  };
  /// Before any communication: all ranks agree whether to go on.
  auto agree = [&](bool ok) {
    int mine = ok ? 1 : 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all == 1;
  };
  auto stop = [&](int rc) {
    MPI_Finalize();
    return rc;
  };

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  ToolSession session;
  MLIRContext &context = session.context;
  registerBuiltinDialectTranslation(context);
  registerLLVMDialectTranslation(context);

  bool ok = true;
  if (repeat == 0)
    ok = error("--repeat must be at least 1");
  if (useBLAS && !kHaveBLAS)
    ok = error("--blas: distir-exec was built without OpenBLAS "
               "(libopenblas-dev)");
  if (optLevel > 3)
    ok = error("-O" + Twine(optLevel.getValue()) +
               ": the optimization level is 0, 1, 2 or 3");
  OwningOpRef<ModuleOp> module =
      ok ? session.loadProgram(inputFile) : OwningOpRef<ModuleOp>();
  func::FuncOp entry = module ? findEntry(*module, entryName) : nullptr;
  ok = ok && entry && succeeded(isolateEntry(*module, entry));
  // Index uses of integer arguments, read off the global program.
  SmallVector<std::optional<IndexBound>> indexBounds;
  if (ok)
    indexBounds = getArgumentIndexBounds(entry);

  // Unsupported ops, element types, and the rank count.
  int64_t numRanks = 0;
  SmallVector<func::FuncOp> rankFuncs;
  if (ok) {
    entry.walk([&](Operation *op) {
      if (ok && !isSupported(op))
        ok = error("'" + op->getName().getStringRef() +
                   "' is not supported by distir-exec (it lowers func, "
                   "linalg, tensor, arith, math, scf and dist ops)");
    });
    for (Type t : llvm::concat<const Type>(entry.getArgumentTypes(),
                                           entry.getResultTypes())) {
      auto tensor = dyn_cast<RankedTensorType>(t);
      Type element = tensor ? tensor.getElementType() : t;
      if (ok && (elementBytes(element) == 0 ||
                 (!tensor && !isa<IntegerType, FloatType>(t))))
        ok = error("argument or result type " + llvm::formatv("{0}", t).str() +
                   " is not supported by distir-exec (f32, f64, i1-i64)");
      // Buffers are allocated in full: their size must be countable.
      int64_t bytes = elementBytes(element);
      for (int64_t d : tensor ? tensor.getShape() : ArrayRef<int64_t>())
        if (ok && (d < 0 || llvm::MulOverflow(bytes, d, bytes) ||
                   bytes > kMaxBufferBytes))
          ok =
              error("argument or result type " + llvm::formatv("{0}", t).str() +
                    " needs more than " + Twine(kMaxBufferBytes >> 30) +
                    " GiB (or a dynamic size); distir-exec allocates every "
                    "argument and result in full");
    }
  }
  if (ok) {
    PassManager pm(&context);
    pm.addPass(createDistToRankPass());
    ok = succeeded(pm.run(*module));
    if (ok && !entry->hasAttr(dist_rank::kRanksAttr))
      ok = error("@" + entry.getSymName() +
                 " has no placed values; nothing to distribute");
  }
  if (ok) {
    for (Attribute a : entry->getAttrOfType<ArrayAttr>(dist_rank::kRanksAttr))
      rankFuncs.push_back(module->lookupSymbol<func::FuncOp>(
          cast<FlatSymbolRefAttr>(a).getValue()));
    numRanks = rankFuncs.size();
    if (numRanks != worldSize)
      ok = error("@" + entry.getSymName() + " runs on " + Twine(numRanks) +
                 " devices but mpirun started " + Twine(worldSize) +
                 " processes; run it with mpirun -np " + Twine(numRanks));
  }

  // Inputs: every rank checks all of them, reads only its own.
  unsigned numArgs = ok ? entry.getNumArguments() : 0;
  SmallVector<std::optional<std::string>> paths(numArgs);
  for (const std::string &spec : inputs) {
    if (!ok)
      break;
    auto [name, path] = StringRef(spec).split('=');
    if (path.empty()) {
      ok = error("--input expects NAME=file.npy, got '" + spec + "'");
      break;
    }
    std::optional<unsigned> index;
    for (unsigned i = 0; i < numArgs && !index; ++i)
      if (llvm::is_contained(getArgumentNames(entry, i), name.str()))
        index = i;
    if (!index)
      ok = error("@" + entry.getSymName() + " has no argument named '" + name +
                 "'");
    else if (paths[*index])
      ok = error("argument '" + name + "' is given twice");
    else if (!llvm::sys::fs::exists(path))
      ok = error("input file '" + path + "' does not exist");
    else
      paths[*index] = path.str();
  }
  SmallVector<int64_t> myArgs, myResults;
  if (ok) {
    func::FuncOp mine = rankFuncs[worldRank];
    auto argMap =
        mine->getAttrOfType<DenseI64ArrayAttr>(dist_rank::kArgMapAttr);
    auto resultMap =
        mine->getAttrOfType<DenseI64ArrayAttr>(dist_rank::kResultMapAttr);
    myArgs.assign(argMap.asArrayRef().begin(), argMap.asArrayRef().end());
    myResults.assign(resultMap.asArrayRef().begin(),
                     resultMap.asArrayRef().end());
  }
  // Values from --weights-from. Every rank binds every argument, so that
  // all draw the same --random-inputs values for the others, and keeps
  // only its own.
  SmallVector<std::optional<RuntimeValue>> weights(numArgs);
  SmallVector<bool> fromModel(numArgs, false);
  if (ok && !weightsFrom.empty()) {
    // Arguments given by --input are not looked up: marked bound.
    for (unsigned i = 0; i < numArgs; ++i)
      if (paths[i])
        weights[i] = RuntimeValue();
    std::string message;
    if (!bindModelInitializers(weightsFrom, entry, weights, message))
      ok = error(message);
    for (unsigned i = 0; i < numArgs; ++i) {
      fromModel[i] = weights[i] && !paths[i];
      if (!fromModel[i] || !llvm::is_contained(myArgs, i))
        weights[i].reset();
    }
    // Said once, so that a partial binding is never silent.
    if (ok && worldRank == 0) {
      std::string line =
          ("distir-exec: " + Twine(llvm::count(fromModel, true)) + " of " +
           Twine(numArgs) + " arguments of @" + entry.getSymName() +
           " bound to initializers of " + weightsFrom + "\n")
              .str();
      (void)!write(STDERR_FILENO, line.data(), line.size());
    }
  }
  std::mt19937_64 rng(static_cast<uint64_t>(std::max<int64_t>(randomSeed, 0)));
  SmallVector<std::unique_ptr<Buffer>> buffers;
  SmallVector<Type> argTypes =
      ok ? SmallVector<Type>(entry.getArgumentTypes()) : SmallVector<Type>();
  for (unsigned i = 0; i < numArgs && ok; ++i) {
    Type t = argTypes[i];
    auto tensor = dyn_cast<RankedTensorType>(t);
    auto buffer = std::make_unique<Buffer>(tensor ? tensor.getElementType() : t,
                                           tensor ? tensor.getShape()
                                                  : ArrayRef<int64_t>());
    bool needed = llvm::is_contained(myArgs, i);
    std::optional<RuntimeValue> value;
    if (fromModel[i]) {
      value = std::move(weights[i]); // none when another rank holds it
    } else if (!paths[i]) {
      if (randomSeed < 0) {
        ok = error("missing input for argument #" + Twine(i) + " (" +
                   getArgumentNames(entry, i).back() + ") of @" +
                   entry.getSymName() +
                   "; pass --input NAME=file.npy, --weights-from MODEL or "
                   "--random-inputs SEED");
        break;
      }
      value = makeRandomArgument(entry, i, rng);
    } else if (needed) {
      std::string message;
      value = readNpy(*paths[i], &context, message);
      if (!value) {
        ok = error(message);
        break;
      }
      int64_t n = value->getNumElements();
      if (n != buffer->size() || value->elementType != buffer->element ||
          (tensor && ArrayRef<int64_t>(value->shape) != tensor.getShape())) {
        std::string got;
        llvm::raw_string_ostream(got)
            << RankedTensorType::get(value->shape, value->elementType);
        ok = error("input '" + getArgumentNames(entry, i).back() + "' ('" +
                   *paths[i] + "') holds " + got + "; argument #" + Twine(i) +
                   " of @" + entry.getSymName() + " expects " +
                   llvm::formatv("{0}", t).str());
        break;
      }
    }
    if (needed && value && indexBounds[i])
      if (std::optional<std::string> bad =
              checkIndexBound(*value, *indexBounds[i])) {
        ok =
            error("input '" + getArgumentNames(entry, i).back() + "' (" +
                  (paths[i] ? "'" + *paths[i] + "'"
                            : "--random-inputs " + std::to_string(randomSeed)) +
                  "): " + *bad);
        break;
      }
    if (needed && value)
      buffer->fill(*value);
    buffers.push_back(std::move(buffer));
  }

  // Lower to LLVM: convert-dist-to-mpi, the entry wrapper, then the rest.
  // (Lowering replaces `entry`; keep what is needed of it.)
  SmallVector<Type> resultTypes =
      ok ? SmallVector<Type>(entry.getResultTypes()) : SmallVector<Type>();
  std::unique_ptr<ExecutionEngine> engine;
  void (*step)(void **) = nullptr;
  if (ok) {
    PassManager pm(&context);
    DistToLLVMPipelineOptions options;
    options.blas = useBLAS;
    options.fuse = fuseElementwise;
    ConvertDistToMPIPassOptions mpi;
    pm.addPass(createConvertDistToMPIPass(mpi));
    ok = succeeded(pm.run(*module));
    if (ok) {
      stubOtherRanks(*module, worldRank);
      buildEntryWrapper(*module, entry);
      PassManager rest(&context);
      buildRankToLLVMPipeline(rest, options);
      ok = succeeded(rest.run(*module));
    }
  }
  if (ok) {
    ExecutionEngineOptions engineOptions;
    SmallVector<StringRef> libs = {DISTIR_C_RUNNER_UTILS};
#ifdef DISTIR_BLAS_LIBRARY
    if (useBLAS) {
      // Ranks are processes: one BLAS thread each, unless asked otherwise.
      setenv("OPENBLAS_NUM_THREADS", "1", /*overwrite=*/0);
      libs.push_back(DISTIR_BLAS_LIBRARY);
    }
#endif
    engineOptions.sharedLibPaths = libs;
    // LLVM's optimization pipeline on the lowered module (the loops lowered
    // from linalg are only fast once optimized and vectorized).
    // The host's target machine tells the loop vectorizer the vector
    // width (without one it assumes no vector registers and keeps every
    // elementwise loop scalar).
    llvm::CodeGenOptLevel codeGenLevel =
        llvm::CodeGenOpt::getLevel(optLevel).value_or(
            llvm::CodeGenOptLevel::Default);
    auto makeHostMachine = [&]() -> std::unique_ptr<llvm::TargetMachine> {
      auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
      if (!builder) {
        llvm::consumeError(builder.takeError());
        return nullptr;
      }
      builder->setCodeGenOptLevel(codeGenLevel);
      auto machine = builder->createTargetMachine();
      if (!machine) {
        llvm::consumeError(machine.takeError());
        return nullptr;
      }
      return std::move(*machine);
    };
    std::unique_ptr<llvm::TargetMachine> hostMachine = makeHostMachine();
    std::function<llvm::Error(llvm::Module *)> optimize =
        makeOptimizingTransformer(optLevel, /*sizeLevel=*/0, hostMachine.get());
    engineOptions.transformer = optimize;
    // MLIR 22's ExecutionEngine::create ignores jitCodeGenOptLevel (set for
    // versions that honour it): it compiles with the target machine it is
    // given, or a default-level one it makes, so -O0/-O1 would otherwise
    // still run the -O2 instruction selection and register allocation.
    engineOptions.jitCodeGenOptLevel = codeGenLevel;
    auto created =
        ExecutionEngine::create(*module, engineOptions, makeHostMachine());
    if (!created) {
      ok = error("JIT compilation failed: " +
                 llvm::toString(created.takeError()));
    } else {
      engine = std::move(*created);
      // Looking the entry up compiles it now, so that a code-generation
      // failure is agreed on below instead of surfacing in one rank only.
      auto found = engine->lookupPacked("_mlir_ciface_distir_entry");
      if (!found)
        ok = error("JIT compilation failed: " +
                   llvm::toString(found.takeError()));
      else
        step = *found;
    }
  }
  if (!agree(ok))
    return stop(1);

  // Run: arguments, then one output buffer per global result.
  for (Type t : resultTypes) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    buffers.push_back(std::make_unique<Buffer>(
        tensor ? tensor.getElementType() : t,
        tensor ? tensor.getShape() : ArrayRef<int64_t>()));
  }
  SmallVector<void *> packed;
  for (auto &buffer : buffers)
    packed.push_back(&buffer->descriptorPtr);
  int64_t firstResident = 0;
  std::vector<double> seconds;
  for (unsigned run = 0; run < repeat; ++run) {
    auto start = std::chrono::steady_clock::now();
    step(packed.data());
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
    if (run == 0)
      firstResident = residentBytes();
  }
  if (timeSteps) {
    // The first step pays for first touches of memory and lazy set-up.
    std::vector<double> warm(seconds.begin() + (repeat > 1 ? 1 : 0),
                             seconds.end());
    std::sort(warm.begin(), warm.end());
    std::string line;
    llvm::raw_string_ostream os(line);
    os << "rank " << worldRank << ": step time over " << warm.size()
       << " steps: median " << llvm::format("%.3f", 1e3 * warm[warm.size() / 2])
       << " ms, min " << llvm::format("%.3f", 1e3 * warm.front()) << " ms\n";
    (void)!write(STDOUT_FILENO, line.data(), line.size());
  }
  if (reportResources) {
    std::string line;
    llvm::raw_string_ostream os(line);
    os << "rank " << worldRank << ": " << repeat
       << " steps, communicator splits: " << distir_mpi_comm_splits()
       << ", cached communicators: " << distir_mpi_cached_comms()
       << ", resident memory after step 1: " << firstResident / 1024
       << " KiB, after step " << repeat << ": " << residentBytes() / 1024
       << " KiB\n";
    (void)!write(STDOUT_FILENO, line.data(), line.size());
  }

  if (!outputDir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(outputDir)) {
      llvm::errs() << "error: cannot create '" << outputDir
                   << "': " << ec.message() << "\n";
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  std::string text, manifest;
  llvm::raw_string_ostream os(text), listed(manifest);
  for (int64_t k : myResults) {
    const Buffer &out = *buffers[numArgs + k];
    Type t = resultTypes[k];
    RuntimeValue value = out.read(isa<RankedTensorType>(t));
    os << "rank " << worldRank << ": output #" << k << ": " << t;
    if (!outputDir.empty()) {
      SmallString<128> path(outputDir);
      llvm::sys::path::append(path, "output_" + std::to_string(k) + ".npy");
      std::string message;
      if (!writeNpy(path, value, message)) {
        llvm::errs() << "error: " << message << "\n";
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      os << " -> " << path;
      listed << "output #" << k << ": " << t << "\n";
    }
    os << "\n  [";
    const std::vector<double> &data = *value.data;
    for (size_t e = 0; e < data.size() && e < printLimit; ++e)
      os << (e ? ", " : "") << llvm::format("%.9g", data[e]);
    if (data.size() > printLimit)
      os << ", ... (" << data.size() << " elements)";
    os << "]\n";
  }
  // Which results this rank wrote, in a file of its own: mpirun forwards
  // the ranks' stdout in chunks that may interleave mid-line.
  if (!outputDir.empty()) {
    SmallString<128> path(outputDir);
    llvm::sys::path::append(path, "outputs_rank" + std::to_string(worldRank) +
                                      ".txt");
    std::error_code ec;
    llvm::raw_fd_ostream file(path, ec);
    if (ec) {
      llvm::errs() << "error: cannot write '" << path << "': " << ec.message()
                   << "\n";
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    file << manifest;
  }
  // Ranks print in turn (mpirun may still interleave their streams).
  for (int r = 0; r < worldSize; ++r) {
    if (r == worldRank) {
      llvm::outs() << os.str();
      llvm::outs().flush();
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  (void)module.release();
  return stop(0);
}
