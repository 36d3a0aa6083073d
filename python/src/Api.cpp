//===- Api.cpp - DistIR's operations on MLIR text, for the bindings -------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "Api.h"

#include "DistIR/Analysis/Calibration.h"
#include "DistIR/Analysis/Executor.h"
#include "DistIR/Analysis/ProgramInputs.h"
#include "DistIR/Analysis/Simulator.h"
#include "DistIR/Cluster/Cluster.h"
#include "DistIR/Dialect/Dist/IR/DistCluster.h"
#include "DistIR/Dialect/Dist/Transforms/Passes.h"
#include "DistIR/InitAllDialects.h"
#include "DistIR/InitAllPasses.h"
#include "DistIR/Search/Driver.h"
#include "DistIR/Synthesis/Driver.h"
#include "DistIR/Target/ONNX/MLPBuilder.h"
#include "DistIR/Target/ONNX/ONNXImporter.h"
#include "DistIR/Tools/ToolUtils.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace distir;
using namespace distir::api;

namespace {

/// A context with every DistIR dialect, collecting error diagnostics.
class Session {
public:
  Session() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    // Errors name their op by location; no dump of the op.
    context.printOpOnDiagnostic(false);
    handler.emplace(&context, [this](Diagnostic &diag) {
      if (diag.getSeverity() != DiagnosticSeverity::Error)
        return success();
      append(diag.getLocation(), "error", diag.str());
      for (Diagnostic &note : diag.getNotes())
        append(note.getLocation(), "note", note.str());
      return success();
    });
  }

  /// Throws ApiError with the collected diagnostics (or `fallback`).
  [[noreturn]] void fail(const std::string &fallback) {
    throw ApiError(errors.empty() ? "error: " + fallback : errors);
  }

  /// Parses and verifies `text`; with `placed`, also its placements.
  OwningOpRef<ModuleOp> parse(const std::string &text, bool placed = true) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(text, ParserConfig(&context), "<input>");
    if (!module)
      fail("cannot parse the program");
    if (!placed)
      return module;
    PassManager pm(&context);
    pm.addPass(dist::createDistVerifyPlacementPass());
    if (failed(pm.run(*module)))
      fail("the program's placements do not verify");
    return module;
  }

  func::FuncOp entry(ModuleOp module, const std::string &name) {
    func::FuncOp func = findEntry(module, name);
    if (!func)
      fail("no entry function");
    return func;
  }

  MLIRContext context;

private:
  void append(Location loc, StringRef severity, const std::string &message) {
    while (auto name = dyn_cast<NameLoc>(loc))
      loc = name.getChildLoc();
    if (auto fused = dyn_cast<FusedLoc>(loc))
      if (!fused.getLocations().empty())
        loc = fused.getLocations().front();
    std::string line;
    llvm::raw_string_ostream os(line);
    if (auto file = dyn_cast<FileLineColLoc>(loc))
      os << file.getFilename().getValue() << ":" << file.getLine() << ":"
         << file.getColumn() << ": ";
    os << severity << ": " << message;
    if (!errors.empty())
      errors += "\n";
    errors += line;
  }

  std::string errors;
  std::optional<ScopedDiagnosticHandler> handler;
};

std::string print(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os);
  return text;
}

std::string print(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

Port port(Type type, std::string name, bool isUnsigned) {
  Port p;
  p.name = std::move(name);
  p.elementType = print(getElementTypeOrSelf(type));
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    p.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  p.isTensor = isa<TensorType>(type);
  p.isUnsigned = isUnsigned && isa<IntegerType>(getElementTypeOrSelf(type));
  return p;
}

} // namespace

std::string api::importONNX(const std::string &bytes,
                            const std::string &fileName,
                            const std::vector<std::pair<std::string, Shape>> &s,
                            bool weightsAsConstants,
                            const std::string &funcName, int64_t device) {
  Session session;
  ONNXImportOptions options;
  for (const auto &[name, shape] : s)
    options.inputShapes.push_back(
        {name, SmallVector<int64_t>(shape.begin(), shape.end())});
  options.weightsAsConstants = weightsAsConstants;
  options.funcName = funcName;
  options.device = device;
  OwningOpRef<ModuleOp> module =
      importONNXModel(bytes, fileName, options, &session.context);
  if (!module)
    session.fail("cannot import the ONNX model");
  return print(*module);
}

std::string api::buildMLP(int64_t layers, int64_t dim, int64_t batch,
                          bool training, const std::string &dtype,
                          int64_t device,
                          const std::vector<int64_t> &distirDHP) {
  Session session;
  MLPOptions options;
  options.layers = layers;
  options.dim = dim;
  options.batch = batch;
  options.training = training;
  options.dtype = dtype;
  options.device = device;
  Location loc = UnknownLoc::get(&session.context);
  OwningOpRef<ModuleOp> module;
  if (distirDHP.empty()) {
    module = distir::buildMLP(options, loc);
  } else {
    if (distirDHP.size() != 4)
      session.fail("distir_dhp takes four numbers (dp, hp, pp, k)");
    module = buildDistIRMLP(
        options, {distirDHP[0], distirDHP[1], distirDHP[2], distirDHP[3]}, loc);
  }
  if (!module)
    session.fail("invalid MLP options");
  return print(*module);
}

std::string api::verify(const std::string &text) {
  Session session;
  return print(*session.parse(text));
}

std::string api::runPipeline(const std::string &text,
                             const std::string &pipeline) {
  static bool registered = [] {
    registerAllPasses();
    return true;
  }();
  (void)registered;
  Session session;
  // Unplaced programs are welcome: the pipeline may start with dist-place.
  OwningOpRef<ModuleOp> module = session.parse(text, /*placed=*/false);
  // The passes run on the module itself: a "builtin.module(...)" wrapper
  // is dropped (kept, it would nest a pass manager for inner modules).
  StringRef p = StringRef(pipeline).trim();
  if (p.consume_front("builtin.module(") && !p.consume_back(")"))
    throw ApiError("error: invalid pass pipeline '" + pipeline +
                   "': unbalanced parentheses");
  PassManager pm(&session.context);
  std::string parseErrors;
  llvm::raw_string_ostream errs(parseErrors);
  if (failed(parsePassPipeline(p, pm, errs))) {
    SmallVector<StringRef> lines;
    StringRef(parseErrors).split(lines, '\n', -1, /*KeepEmpty=*/false);
    throw ApiError("error: invalid pass pipeline '" + pipeline +
                   "': " + llvm::join(lines, "; "));
  }
  if (failed(pm.run(*module)))
    session.fail("the pipeline failed");
  return print(*module);
}

Signature api::signature(const std::string &text, const std::string &name) {
  Session session;
  OwningOpRef<ModuleOp> module = session.parse(text);
  func::FuncOp func = session.entry(*module, name);
  Signature sig;
  sig.entry = func.getSymName().str();
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto argName = func.getArgAttrOfType<StringAttr>(i, "dist.name");
    sig.arguments.push_back(
        port(func.getArgumentTypes()[i],
             argName ? argName.str() : "arg" + std::to_string(i), false));
  }
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    auto resultName = func.getResultAttrOfType<StringAttr>(i, "dist.name");
    sig.results.push_back(
        port(func.getResultTypes()[i],
             resultName ? resultName.str() : "output_" + std::to_string(i),
             func.getResultAttr(i, "dist.unsigned") != nullptr));
  }
  return sig;
}

std::vector<Array> api::execute(const std::string &text,
                                const std::string &name,
                                const std::vector<Array> &inputs) {
  Session session;
  OwningOpRef<ModuleOp> module = session.parse(text);
  func::FuncOp func = session.entry(*module, name);
  if (inputs.size() != func.getNumArguments())
    throw ApiError("error: @" + func.getSymName().str() + " takes " +
                   std::to_string(func.getNumArguments()) + " arguments, got " +
                   std::to_string(inputs.size()));
  SmallVector<RuntimeValue> values;
  for (auto [i, in] : llvm::enumerate(inputs)) {
    Type type = func.getArgumentTypes()[i];
    auto tensor = dyn_cast<RankedTensorType>(type);
    Shape expected;
    if (tensor)
      expected.assign(tensor.getShape().begin(), tensor.getShape().end());
    std::string argName = getArgumentNames(func, i).back();
    if (in.shape != expected)
      throw ApiError(
          "error: input '" + argName + "' has shape " +
          llvm::formatv("[{0:$[,]}]",
                        llvm::make_range(in.shape.begin(), in.shape.end()))
              .str() +
          ", argument #" + std::to_string(i) + " expects " + print(type));
    RuntimeValue value =
        tensor ? RuntimeValue::tensor(tensor.getElementType(), expected)
               : RuntimeValue::scalar(type, 0);
    value.isTensor = static_cast<bool>(tensor);
    Type element = getElementTypeOrSelf(type);
    for (auto [dst, src] : llvm::zip(*value.data, in.data))
      dst = roundToType(element, src);
    values.push_back(std::move(value));
  }
  SmallVector<std::optional<IndexBound>> bounds = getArgumentIndexBounds(func);
  for (unsigned i = 0; i < values.size(); ++i)
    if (bounds[i])
      if (std::optional<std::string> bad =
              checkIndexBound(values[i], *bounds[i]))
        throw ApiError("error: input '" + getArgumentNames(func, i).back() +
                       "': " + *bad);
  FailureOr<SmallVector<RuntimeValue>> results = distir::execute(func, values);
  if (failed(results))
    session.fail("execution failed");
  std::vector<Array> out;
  for (RuntimeValue &r : *results) {
    Array a;
    a.elementType = print(r.elementType);
    a.shape.assign(r.shape.begin(), r.shape.end());
    a.data = *r.data;
    a.isTensor = r.isTensor;
    out.push_back(std::move(a));
  }
  return out;
}

std::pair<std::string, std::string> api::simulate(const std::string &text,
                                                  const std::string &name,
                                                  const SimulateOptions &o) {
  Session session;
  SimulatorOptions options;
  std::optional<CostModelKind> model = symbolizeCostModelKind(o.costModel);
  if (!model)
    throw ApiError("error: unknown cost model '" + o.costModel +
                   "' (expected analytic, distir-compat or calibrated)");
  options.costModel = *model;
  if ((*model == CostModelKind::Calibrated) == o.calibrationFile.empty())
    throw ApiError("error: the calibrated cost model and a calibration file "
                   "go together");
  std::optional<CollectiveAlgorithm> algo =
      symbolizeCollectiveAlgorithm(o.algorithm);
  if (!algo)
    throw ApiError("error: unknown collective algorithm '" + o.algorithm +
                   "' (expected ring or tree)");
  options.algorithm = *algo;
  options.overlap = o.overlap;
  if (o.batch < 0 || o.peakBuffers < 0)
    throw ApiError("error: batch and peak_buffers must not be negative");
  if (o.batch > 0)
    options.batchSize = o.batch;
  options.peakBuffers = o.peakBuffers;
  std::string errors;
  auto collect = [&](const Twine &msg) {
    if (errors.empty())
      errors = "error: " + msg.str();
  };
  if (!o.calibrationFile.empty()) {
    FailureOr<Calibration> calibration =
        readCalibrationFile(o.calibrationFile, collect);
    if (failed(calibration))
      throw ApiError(errors);
    options.calibration =
        std::make_shared<const Calibration>(std::move(*calibration));
  }
  OwningOpRef<ModuleOp> module = session.parse(text);
  FailureOr<Cluster> cluster = dist::resolveModuleCluster(
      *module, o.cluster,
      "pass cluster= or attach one with dist-attach-cluster", collect);
  if (failed(cluster))
    throw ApiError(errors);
  func::FuncOp func = session.entry(*module, name);
  FailureOr<SimulationResult> result =
      distir::simulate(func, *cluster, options);
  if (failed(result))
    session.fail("simulation failed");
  std::string trace;
  if (o.trace)
    trace = llvm::formatv("{0}", result->toChromeTrace()).str();
  return {llvm::formatv("{0}", result->toJSON()).str(), trace};
}

std::string api::clusterJSON(const std::string &spec) {
  std::string errors;
  FailureOr<Cluster> cluster = resolveCluster(spec, [&](const Twine &msg) {
    if (errors.empty())
      errors = "error: " + msg.str();
  });
  if (failed(cluster) || !errors.empty())
    throw ApiError(errors.empty() ? "error: invalid cluster" : errors);
  return llvm::formatv("{0:2}", clusterToJSON(*cluster)).str();
}

std::pair<std::string, std::string> api::search(const SearchRequest &r) {
  using namespace distir::search;
  auto fail = [](const std::string &msg) -> ApiError {
    return ApiError("error: " + msg);
  };
  ModelSource source;
  if (std::string error = parseModelSpec(r.model, source); !error.empty())
    throw fail(error);
  if (!llvm::is_contained({"f32", "f16", "bf16"}, r.dtype))
    throw fail("dtype must be f32, f16 or bf16, not '" + r.dtype + "'");
  source.dtype = r.dtype;
  if (source.kind == ModelSource::ONNX) {
    source.training = r.training;
    source.loss = r.loss;
    source.optimizer = r.optimizer;
    if (!llvm::is_contained({"mse", "cross-entropy"}, r.loss))
      throw fail("loss must be mse or cross-entropy, not '" + r.loss + "'");
    if (!llvm::is_contained({"sgd", "momentum", "adam", "adamw"}, r.optimizer))
      throw fail("optimizer must be sgd, momentum, adam or adamw, not '" +
                 r.optimizer + "'");
    if (r.dtypeGiven && !r.training)
      throw fail("dtype applies to mlp: models and to ONNX training");
    for (const auto &[name, shape] : r.inputShapes)
      source.inputShapes.push_back(
          {name, SmallVector<int64_t>(shape.begin(), shape.end())});
  } else if (!r.inputShapes.empty()) {
    throw fail("input_shapes apply to ONNX models only");
  }
  if (r.batches.empty())
    throw fail("no batch size");
  for (int64_t b : r.batches)
    if (b < 1)
      throw fail("batch sizes must be positive, got " + std::to_string(b));
  std::vector<int64_t> batches = r.batches;
  llvm::sort(batches);
  batches.erase(std::unique(batches.begin(), batches.end()), batches.end());

  std::string clusterError;
  FailureOr<Cluster> cluster = resolveCluster(r.cluster, [&](const Twine &m) {
    if (clusterError.empty())
      clusterError = m.str();
  });
  if (failed(cluster) || !clusterError.empty())
    throw fail(clusterError.empty() ? "invalid cluster '" + r.cluster + "'"
                                    : clusterError);
  if (source.kind == ModelSource::MLP &&
      !cluster->device.getPeakFlops(source.dtype))
    throw fail("cluster '" + cluster->name + "' has no peak flop/s for " +
               source.dtype);
  int64_t available = cluster->getNumDevices();
  int64_t devices = r.devices ? r.devices : available;
  if (devices < 1 || !llvm::isPowerOf2_64(devices))
    throw fail("devices " + std::to_string(devices) + " is not a power of two");
  if (devices > available)
    throw fail("devices " + std::to_string(devices) + " exceeds the " +
               std::to_string(available) + " devices of cluster " +
               cluster->name);
  if (r.maxMicrobatches < 1 || !llvm::isPowerOf2_64(r.maxMicrobatches))
    throw fail("max_microbatches " + std::to_string(r.maxMicrobatches) +
               " is not a power of two");
  if (r.maxDP < 0 || r.maxTP < 0 || r.maxPP < 0)
    throw fail("max_dp, max_tp and max_pp must be >= 0");
  if (r.maxZero < 0 || r.maxZero > 3)
    throw fail("zero must be a ZeRO stage from 0 to 3");
  if ((r.maxZero > 0 || r.recompute) && !r.training)
    throw fail("zero and recompute apply to training steps (training=True)");

  SearchOptions options;
  std::optional<CostModelKind> model = symbolizeCostModelKind(r.costModel);
  if (!model || *model == CostModelKind::Calibrated)
    throw fail("unknown cost model '" + r.costModel +
               "' (expected analytic or distir-compat)");
  options.simulator.costModel = *model;
  std::optional<CollectiveAlgorithm> algo =
      symbolizeCollectiveAlgorithm(r.algorithm);
  if (!algo)
    throw fail("unknown collective algorithm '" + r.algorithm +
               "' (expected ring or tree)");
  options.simulator.algorithm = *algo;
  options.simulator.overlap = r.overlap;
  if (r.fast && r.overlap)
    throw fail("fast replays tasks on one stream per device; it cannot be "
               "combined with overlap");
  options.fast = r.fast;
  options.training = r.training;
  options.cluster = *cluster;
  options.jobs =
      r.jobs ? r.jobs : llvm::hardware_concurrency().compute_thread_count();

  SearchSpace space;
  space.devices = devices;
  space.allowFewerDevices = r.allowFewer;
  space.maxMicrobatches = r.maxMicrobatches;
  space.maxDP = r.maxDP;
  space.maxTP = r.maxTP;
  space.maxPP = r.maxPP;
  space.training = r.training;
  space.maxZero = r.maxZero;
  space.tryRecompute = r.recompute;
  space.stageMeshes = r.stageMeshes;
  for (const LevelSpec &level : cluster->levels)
    space.levels.push_back(level.size);

  std::unique_ptr<MLIRContext> context = createSearchContext();
  std::string errors;
  ScopedDiagnosticHandler collect(context.get(), [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error && errors.empty())
      errors = "error: " + diag.str();
    return success();
  });
  FailureOr<SearchRun> run =
      searchModel(source, batches, space, options, context.get());
  if (failed(run))
    throw ApiError(errors.empty() ? "error: the search failed" : errors);
  if (run->results.empty())
    throw fail("no configuration to search (check max_dp, max_tp and "
               "max_pp)");
  SearchSummary summary;
  summary.model = r.model;
  summary.cluster = r.cluster;
  summary.devices = devices;
  summary.capacityBytes = cluster->device.memoryCapacity;
  summary.training = r.training;
  summary.costModel = r.costModel;
  summary.batchSweep = batches.size() > 1;
  std::string report =
      llvm::formatv("{0}", toJSON(summary, run->results, run->ranking)).str();
  std::string best;
  if (r.emitBest && !run->ranking.empty()) {
    const SearchConfig &config = run->results[run->ranking.front()].config;
    size_t which = llvm::find(batches, config.batch) - batches.begin();
    std::string error;
    OwningOpRef<ModuleOp> transformed = transformProgram(
        *run->modules[which], source.entry, config, options, error);
    if (!transformed)
      throw fail("cannot transform the best configuration: " + error);
    best = print(*transformed);
  }
  return {report, best};
}

std::string api::synthesize(const std::string &hierarchy, bool hasHierarchy,
                            const std::string &axes, const std::string &reduce,
                            const std::string &cluster, unsigned maxSize,
                            const std::string &algorithm, double bytes,
                            bool allMasterCollectives) {
  synth::SynthesisRequest request;
  if (hasHierarchy)
    request.hierarchy = hierarchy;
  request.axes = axes;
  request.reduce = reduce;
  request.cluster = cluster;
  request.maxSize = maxSize;
  if (allMasterCollectives)
    request.masters = synth::MasterCollectives::All;
  request.algorithm = algorithm;
  request.bytes = bytes;
  std::string error;
  std::optional<synth::SynthesisReport> report =
      synth::runSynthesis(request, [&](const Twine &message) {
        if (error.empty())
          error = "error: " + message.str();
      });
  if (!report)
    throw ApiError(error);
  return llvm::formatv("{0}", synth::toJSON(request, *report)).str();
}
