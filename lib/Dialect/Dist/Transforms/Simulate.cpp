//===- Simulate.cpp - The simulator as a pass
//------------------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Runs the simulator inside a pipeline (e.g. right after dist-dtp) and
// writes its report, so that build scripts need no separate distir-sim
// invocation. The IR is left unchanged.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Analysis/Calibration.h"
#include "DistIR/Analysis/Simulator.h"
#include "DistIR/Dialect/Dist/IR/DistCluster.h"
#include "DistIR/Dialect/Dist/IR/EntryFunction.h"
#include "DistIR/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ToolOutputFile.h"

namespace distir::dist {
#define GEN_PASS_DEF_DISTSIMULATEPASS
#include "DistIR/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace distir::dist

using namespace mlir;
using namespace distir;

namespace {
struct DistSimulatePass
    : public dist::impl::DistSimulatePassBase<DistSimulatePass> {
  using DistSimulatePassBase::DistSimulatePassBase;

  void runOnOperation() final {
    ModuleOp module = getOperation();
    auto fail = [&](const Twine &msg) {
      mlir::emitError(module.getLoc()) << "dist-simulate: " << msg;
      signalPassFailure();
    };

    FailureOr<Cluster> resolved = dist::resolveModuleCluster(
        module, cluster,
        "set cluster=NAME|file.json or attach one with dist-attach-cluster",
        [&](const Twine &msg) { fail(msg); });
    if (failed(resolved))
      return;

    SimulatorOptions options;
    options.costModel = costModel;
    options.algorithm = algorithm;
    options.overlap = overlap;
    if (!calibration.empty()) {
      bool ok = true;
      FailureOr<Calibration> c =
          readCalibrationFile(calibration, [&](const Twine &msg) {
            fail(msg);
            ok = false;
          });
      if (failed(c) || !ok)
        return;
      options.calibration = std::make_shared<const Calibration>(std::move(*c));
      if (options.costModel == CostModelKind::DistIRCompat)
        return fail("calibration= goes with cost-model=calibrated");
      options.costModel = CostModelKind::Calibrated;
    }
    if (batch > 0)
      options.batchSize = batch;

    std::string entryError;
    func::FuncOp entryFunc =
        dist::lookupEntryFunction(module, entry, "entry=NAME", entryError);
    if (!entryFunc)
      return fail(entryError);

    FailureOr<SimulationResult> result =
        simulate(entryFunc, *resolved, options);
    if (failed(result))
      return signalPassFailure();
    std::string message;
    std::unique_ptr<llvm::ToolOutputFile> file =
        openOutputFile(output, &message);
    if (!file)
      return fail(message);
    if (format == dist::ReportFormat::JSON)
      file->os() << llvm::formatv("{0:2}", result->toJSON()) << "\n";
    else
      result->printText(file->os());
    file->keep();
  }
};
} // namespace
