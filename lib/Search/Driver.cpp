//===- Driver.cpp - A whole search, from a model spec to ranked results ---===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Search/Driver.h"
#include "DistIR/Dialect/Dist/Transforms/Passes.h"
#include "DistIR/Target/ONNX/MLPBuilder.h"
#include "DistIR/Target/ONNX/ONNXImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include <chrono>
#include <map>
#include <set>

using namespace mlir;
using namespace distir;
using namespace distir::search;

std::string search::parseModelSpec(StringRef spec, ModelSource &source) {
  if (spec.empty())
    return "no model (expected FILE.onnx or mlp:LAYERS,DIM)";
  if (spec.starts_with("mlp:")) {
    source.kind = ModelSource::MLP;
    source.entry = "mlp";
    auto [l, d] = spec.drop_front(4).split(',');
    if (l.getAsInteger(10, source.layers) || d.getAsInteger(10, source.dim) ||
        source.layers < 1 || source.dim < 1)
      return "malformed model '" + spec.str() +
             "' (expected mlp:LAYERS,DIM with positive integers)";
    return "";
  }
  if (spec.ends_with(".onnx")) {
    source.kind = ModelSource::ONNX;
    source.entry = "main";
    source.path = spec.str();
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
        llvm::MemoryBuffer::getFile(spec, /*IsText=*/false);
    if (!buffer)
      return "cannot read '" + spec.str() + "': " + buffer.getError().message();
    source.bytes = std::move(*buffer);
    return "";
  }
  return "unknown model '" + spec.str() +
         "' (expected FILE.onnx or mlp:LAYERS,DIM)";
}

OwningOpRef<ModuleOp> search::buildProgram(const ModelSource &source,
                                           int64_t batch, bool training,
                                           MLIRContext *context) {
  Location loc = FileLineColLoc::get(context, "<model>", 0, 0);
  if (source.kind == ModelSource::MLP) {
    MLPOptions options;
    options.layers = source.layers;
    options.dim = source.dim;
    options.batch = batch;
    options.training = training;
    options.dtype = source.dtype;
    return buildMLP(options, loc);
  }
  ONNXImportOptions options;
  options.inputShapes = source.inputShapes;
  for (auto &[name, shape] : options.inputShapes)
    if (!shape.empty())
      shape[0] = batch;
  options.funcName = source.entry;
  OwningOpRef<ModuleOp> module =
      importONNXModel(source.bytes->getBuffer(), source.path, options, context);
  if (!module)
    return {};
  // Every input split by data parallelism must have `batch` samples.
  auto func = module->lookupSymbol<func::FuncOp>(source.entry);
  if (!func) {
    emitError(loc) << "the imported model has no function @" << source.entry;
    return {};
  }
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto dim = func.getArgAttrOfType<IntegerAttr>(i, "dist.batch_dim");
    auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
    if (!dim || !type || dim.getInt() >= type.getRank())
      continue;
    int64_t size = type.getDimSize(dim.getInt());
    if (size != batch) {
      auto name = func.getArgAttrOfType<StringAttr>(i, "dist.name");
      emitError(loc) << "input '" << (name ? name.getValue() : "?")
                     << "' has batch dimension " << size << ", not --batch "
                     << batch << ": give its shape with --input-shape "
                     << (name ? name.getValue() : "NAME") << "=" << batch
                     << ",...";
      return {};
    }
  }
  if (source.training) {
    // The imported forward program becomes a training step.
    PassManager pm(context);
    // The names go through the pass's own option parser (one table of
    // values, in Passes.td); the tools checked them already.
    std::unique_ptr<Pass> autodiff = dist::createDistAutodiffPass();
    auto reportOption = [&](const Twine &message) {
      return emitError(UnknownLoc::get(context)) << message, failure();
    };
    if (failed(autodiff->initializeOptions(
            "loss=" + source.loss + " optimizer=" + source.optimizer +
                " compute=" + source.dtype,
            reportOption)))
      return {};
    pm.addPass(std::move(autodiff));
    if (failed(pm.run(*module)))
      return {};
  } else if (source.dtype != "f32") {
    // Inference in half precision, as after PyTorch's model.half().
    PassManager pm(context);
    std::unique_ptr<Pass> lower = dist::createDistLowPrecisionPass();
    if (failed(lower->initializeOptions(
            "type=" + source.dtype, [&](const Twine &message) {
              return emitError(UnknownLoc::get(context)) << message, failure();
            })))
      return {};
    pm.addPass(std::move(lower));
    if (failed(pm.run(*module)))
      return {};
  }
  return module;
}

void SearchRun::releaseModules() {
  for (OwningOpRef<ModuleOp> &module : modules)
    (void)module.release();
  for (OwningOpRef<ModuleOp> &module : templateModules)
    (void)module.release();
}

FailureOr<SearchRun> search::searchModel(const ModelSource &source,
                                         ArrayRef<int64_t> batches,
                                         const SearchSpace &space,
                                         const SearchOptions &options,
                                         MLIRContext *context) {
  using Clock = std::chrono::steady_clock;
  auto seconds = [](auto a, auto b) {
    return std::chrono::duration<double>(b - a).count();
  };
  auto start = Clock::now();
  SearchRun run;
  SmallVector<SearchProgram> programs;
  std::vector<SearchConfig> configs;
  auto addProgram = [&](int64_t batch,
                        SmallVector<OwningOpRef<ModuleOp>> &into) {
    OwningOpRef<ModuleOp> module =
        buildProgram(source, batch, space.training, context);
    if (!module)
      return failure();
    FailureOr<SearchProgram> program =
        serializeProgram(*module, source.entry, batch);
    if (failed(program))
      return (void)emitError(module->getLoc(), "cannot serialize the program"),
             failure();
    programs.push_back(std::move(*program));
    into.push_back(std::move(module));
    return success();
  };
  for (int64_t batch : batches) {
    if (failed(addProgram(batch, run.modules)))
      return failure();
    std::vector<SearchConfig> some =
        enumerateConfigs(space, batch, &run.truncatedMappings);
    configs.insert(configs.end(), some.begin(), some.end());
  }
  if (configs.empty())
    return run;
  // Fast estimation simulates smaller template programs.
  if (options.fast)
    for (const SearchConfig &config : configs) {
      int64_t batch = getTemplateConfig(config, space.training).batch;
      if (llvm::any_of(programs, [&](const SearchProgram &p) {
            return p.batch == batch;
          }))
        continue;
      if (failed(addProgram(batch, run.templateModules)))
        return failure();
    }
  auto built = Clock::now();
  run.results = runSearch(programs, configs, options);
  run.ranking = rankResults(run.results);
  run.buildSeconds = seconds(start, built);
  run.searchSeconds = seconds(built, Clock::now());

  // dist-dtp's tensor-parallel decisions, for the reports.
  // Per degree and microbatch size of the first batch's configurations
  // (final projections are priced per microbatch); sizes with the same
  // decisions share one report.
  std::map<int64_t, std::set<int64_t>> divisors; // tp -> dp * K
  for (const SearchConfig &config : configs)
    if (config.tp > 1 && config.batch == batches.front())
      divisors[config.tp].insert(config.dp * config.microbatches);
  if (!run.modules.empty())
    if (auto func =
            run.modules.front()->lookupSymbol<func::FuncOp>(source.entry)) {
      for (const auto &[tp, tpDivisors] : divisors) {
        size_t first = run.tensorParallel.size();
        std::vector<std::vector<std::string>> reportOutcomes;
        // Largest divisor first: microbatch sizes ascending.
        for (int64_t divisor : llvm::reverse(tpDivisors)) {
          std::vector<TensorParallelDecision> decisions;
          std::vector<dist::TensorParallelDecisionInfo> infos =
              dist::getTensorParallelDecisions(func, tp, &options.cluster,
                                               divisor);
          if (infos.empty())
            continue; // tagged weights: dist-dtp splits every layer
          std::vector<std::string> outcomes;
          for (const dist::TensorParallelDecisionInfo &d : infos) {
            outcomes.push_back(d.outcome);
            std::string location;
            llvm::raw_string_ostream os(location);
            if (auto file = d.loc->findInstanceOf<FileLineColLoc>())
              os << file.getFilename().getValue() << ":" << file.getLine()
                 << ":" << file.getColumn();
            else
              d.loc.print(os);
            decisions.push_back({location, d.what});
          }
          // Sizes with the same outcomes share a report (its prices are
          // the smallest size's).
          int64_t size = batches.front() / divisor;
          auto same = llvm::find(reportOutcomes, outcomes);
          if (same != reportOutcomes.end()) {
            run.tensorParallel[first + (same - reportOutcomes.begin())]
                .microbatchSizes.push_back(size);
            continue;
          }
          reportOutcomes.push_back(std::move(outcomes));
          run.tensorParallel.push_back({tp, {size}, std::move(decisions)});
        }
      }
    }

  // The model's work per step, for achieved flop/s, MFU and tokens/s.
  std::map<int64_t, ModelWork> work;
  for (auto [batch, module] : llvm::zip(batches, run.modules))
    work[batch] = getModelWork(*module, source.entry);
  for (ConfigResult &r : run.results) {
    const ModelWork &w = work[r.config.batch];
    r.modelFlops = w.flops;
    r.peakFlopsPerDevice =
        options.cluster.device.getPeakFlops(w.dtype).value_or(0);
    r.tokensPerSample = w.tokensPerSample;
  }
  return run;
}
