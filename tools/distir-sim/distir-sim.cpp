//===- distir-sim.cpp - Simulate a dist program on a cluster
//----------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// distir-sim prog.mlir [--cluster NAME|file.json] [--cost-model analytic|
//   distir-compat|calibrated] [--calibration file.json] [--algo ring|tree]
//   [--overlap] [--link-contention] [--batch B]
//   [--entry NAME] [--trace out.json] [--format text|json] [-o out]
//   [--pass-pipeline 'builtin.module(dist-dtp{...})' [--verify-each=false]]
//   [--trust-input]
//
//===----------------------------------------------------------------------===//

#include "DistIR/Analysis/Simulator.h"
#include "DistIR/Dialect/Dist/IR/DistCluster.h"
#include "DistIR/Dialect/Dist/IR/DistDialect.h"
#include "DistIR/Dialect/Dist/Transforms/Passes.h"
#include "DistIR/InitAllPasses.h"
#include "DistIR/Tools/ToolUtils.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"

#include <chrono>

using namespace mlir;
using namespace distir;
namespace cl = llvm::cl;

static cl::OptionCategory category("distir-sim options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<program>"),
                                      cl::init("-"), cl::cat(category));
static cl::opt<std::string> outputFile("o", cl::desc("Report file"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::cat(category));
static cl::opt<std::string> clusterSpec(
    "cluster",
    cl::desc("Preset (NAME[:key=value,...]) or JSON file; defaults to the "
             "module's dist.cluster"),
    cl::value_desc("NAME|file.json"), cl::cat(category));
static cl::opt<std::string>
    costModel("cost-model",
              cl::desc("analytic (default), distir-compat or calibrated"),
              cl::init("analytic"), cl::cat(category));
static cl::opt<std::string> calibrationFile(
    "calibration",
    cl::desc("Calibration JSON written by distir-calibrate (implies "
             "--cost-model calibrated)"),
    cl::value_desc("file.json"), cl::cat(category));
static cl::opt<std::string> algorithm("algo",
                                      cl::desc("Collectives: ring or tree"),
                                      cl::init("ring"), cl::cat(category));
static cl::opt<bool>
    overlap("overlap",
            cl::desc("Separate compute and communication streams per device"),
            cl::cat(category));
static cl::opt<bool> linkContention(
    "link-contention",
    cl::desc("Transfers through a shared link (one NIC behind several "
             "devices) wait for each other"),
    cl::cat(category));
static cl::opt<int64_t> batch("batch",
                              cl::desc("Samples per step, for throughput"),
                              cl::init(0), cl::cat(category));
static cl::opt<std::string> entryName("entry", cl::desc("Function to simulate"),
                                      cl::cat(category));
static cl::opt<std::string> traceFile("trace",
                                      cl::desc("Write a Chrome trace here"),
                                      cl::value_desc("file"),
                                      cl::cat(category));
static cl::opt<std::string> format("format", cl::desc("text or json"),
                                   cl::init("text"), cl::cat(category));
static cl::opt<bool> noMemoryPlan(
    "no-memory-plan",
    cl::desc("Skip the static-offset memory plan (reported as -1)"),
    cl::cat(category));
static cl::opt<int64_t> peakBuffers(
    "peak-buffers",
    cl::desc("List the N largest buffers live at each device's memory peak "
             "(what holds the memory, with the op that allocated it)"),
    cl::value_desc("N"), cl::init(0), cl::cat(category));
static cl::opt<std::string> passPipeline(
    "pass-pipeline",
    cl::desc("Transform the program with this pass pipeline first, in this "
             "process (e.g. 'builtin.module(dist-dtp{tp=4 pp=4})', then "
             "--entry F_dtp): one configuration without writing and reading "
             "back the transformed program"),
    cl::value_desc("pipeline"), cl::cat(category));
static cl::opt<bool>
    verifyEach("verify-each",
               cl::desc("Verify the program after each pass of --pass-pipeline "
                        "(default true)"),
               cl::init(true), cl::cat(category));
static cl::opt<bool> trustInput(
    "trust-input",
    cl::desc("Do not verify the program on loading: for one that a DistIR "
             "tool has just written (distir-opt ... --emit-bytecode), where "
             "the verifier is most of the load time. An invalid program is "
             "then undefined behaviour, as with mlir-opt's "
             "--mlir-very-unsafe-disable-verifier-on-parsing"),
    cl::cat(category));
static cl::opt<bool>
    timing("timing",
           cl::desc("Print the time of each phase (load, transform, "
                    "simulate, report) to stderr"),
           cl::cat(category));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "DistIR simulator: predicts the runtime, memory "
                              "and critical path of a dist program\n");
  auto fail = [](const Twine &msg) {
    llvm::errs() << "error: " << msg << "\n";
    return 1;
  };

  SimulatorOptions options;
  std::optional<CostModelKind> model = symbolizeCostModelKind(costModel);
  if (!model)
    return fail("unknown cost model '" + costModel +
                "' (expected analytic or distir-compat), or calibrated with "
                "--calibration FILE");
  if (!calibrationFile.empty() && costModel.getNumOccurrences() == 0)
    model = CostModelKind::Calibrated;
  options.costModel = *model;
  if (*model == CostModelKind::Calibrated && calibrationFile.empty())
    return fail("--cost-model calibrated needs --calibration FILE");
  if (*model != CostModelKind::Calibrated && !calibrationFile.empty())
    return fail("--calibration is only used by --cost-model calibrated, not " +
                costModel);
  std::optional<CollectiveAlgorithm> algo =
      symbolizeCollectiveAlgorithm(algorithm);
  if (!algo)
    return fail("unknown collective algorithm '" + algorithm +
                "' (expected ring or tree)");
  options.algorithm = *algo;
  options.overlap = overlap;
  options.linkContention = linkContention;
  options.planMemory = !noMemoryPlan;
  if (peakBuffers < 0)
    return fail("--peak-buffers must not be negative");
  options.peakBuffers = peakBuffers;
  if (batch < 0)
    return fail("--batch must be positive");
  if (batch > 0)
    options.batchSize = batch;
  if (format != "text" && format != "json")
    return fail("unknown format '" + format + "' (expected text or json)");

  if (!calibrationFile.empty()) {
    FailureOr<Calibration> calibration =
        readCalibrationFile(calibrationFile, [](const Twine &msg) {
          llvm::errs() << "error: " << msg << "\n";
        });
    if (failed(calibration))
      return 1;
    options.calibration =
        std::make_shared<const Calibration>(std::move(*calibration));
  }

  using Clock = std::chrono::steady_clock;
  auto phaseStart = Clock::now();
  auto phase = [&](const char *name) {
    auto now = Clock::now();
    if (timing)
      llvm::errs() << llvm::formatv(
          "{0,-10} {1:f3} s\n", name,
          std::chrono::duration<double>(now - phaseStart).count());
    phaseStart = now;
  };

  if (failed(prepareOutputFile(outputFile)) ||
      failed(prepareOutputFile(traceFile)))
    return 1;

  if (verifyEach.getNumOccurrences() && passPipeline.empty())
    return fail("--verify-each applies to --pass-pipeline only");
  // The passes on the module: the pipeline as `builtin.module(...)` or
  // without its anchor.
  std::string passes;
  if (!passPipeline.empty()) {
    StringRef text = StringRef(passPipeline).trim();
    size_t open = text.find_first_of("({,");
    StringRef head = text.take_front(open).rtrim();
    if (open != StringRef::npos && text[open] == '(' && head.contains('.')) {
      if (head != "builtin.module")
        return fail("--pass-pipeline: the passes run on the module "
                    "('builtin.module(...)'), not on '" +
                    head + "'");
      if (!text.ends_with(")"))
        return fail("--pass-pipeline: expected 'builtin.module(...)' as a "
                    "whole, got '" +
                    passPipeline + "'");
      text = text.drop_front(open + 1).drop_back();
    }
    passes = text.str();
  }

  ToolSession session;
  // A pipeline may place the program itself (dist-place): placement is
  // checked after it.
  OwningOpRef<ModuleOp> module =
      session.loadProgram(inputFile, /*checkPlacement=*/passes.empty(),
                          /*verify=*/!trustInput);
  if (!module)
    return 1;
  phase("load");

  if (!passPipeline.empty()) {
    registerAllPasses();
    // dist-dtp prices its choices on the module's cluster: the one this
    // simulation runs on, as in distir-search.
    if (!clusterSpec.empty() && !dist::getModuleCluster(*module)) {
      FailureOr<Cluster> resolved =
          resolveCluster(clusterSpec, [](const Twine &msg) {
            llvm::errs() << "error: " << msg << "\n";
          });
      if (failed(resolved))
        return 1;
      module->getContext()->getOrLoadDialect<dist::DistDialect>();
      (*module)->setAttr(dist::DistDialect::getClusterAttrName(),
                         dist::clusterToAttr(module->getContext(), *resolved));
    }
    PassManager pm(module->getContext());
    pm.enableVerifier(verifyEach);
    std::string error;
    llvm::raw_string_ostream errorStream(error);
    if (failed(parsePassPipeline(passes, pm, errorStream)))
      return fail("--pass-pipeline: " + StringRef(error).trim());
    // Then the placement check (it changes nothing: no verifier after it).
    PassManager check(module->getContext());
    check.enableVerifier(false);
    check.addPass(dist::createDistVerifyPlacementPass());
    // A pass that fails says why; one that fails silently gets a line.
    bool reported = false;
    ScopedDiagnosticHandler watch(module->getContext(), [&](Diagnostic &d) {
      reported |= d.getSeverity() == DiagnosticSeverity::Error;
      return failure(); // on to the session's handler
    });
    if (failed(pm.run(*module)) || failed(check.run(*module)))
      return reported ? 1 : fail("--pass-pipeline: the pipeline failed");
    phase("transform");
  }

  FailureOr<Cluster> cluster = dist::resolveModuleCluster(
      *module, clusterSpec,
      "pass --cluster NAME|file.json or attach one with --dist-attach-cluster",
      [](const Twine &msg) { llvm::errs() << "error: " << msg << "\n"; });
  if (failed(cluster))
    return 1;

  func::FuncOp entry = findEntry(*module, entryName);
  if (!entry)
    return 1;
  FailureOr<SimulationResult> result = simulate(entry, *cluster, options);
  if (failed(result))
    return 1;
  phase("simulate");

  std::string report;
  llvm::raw_string_ostream os(report);
  if (format == "json")
    os << llvm::formatv("{0:2}", result->toJSON()) << "\n";
  else
    result->printText(os);
  if (failed(writeFile(outputFile, report)))
    return 1;
  if (!traceFile.empty() &&
      failed(writeFile(traceFile,
                       llvm::formatv("{0}", result->toChromeTrace()).str())))
    return 1;
  phase("report");
  // Tearing down a million-op module takes longer than simulating it; the
  // process is about to exit anyway.
  (void)module.release();
  return 0;
}
