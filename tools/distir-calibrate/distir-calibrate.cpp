//===- distir-calibrate.cpp - Fit cost coefficients to measurements -------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// distir-calibrate --compute FILE.csv... --collective FILE.csv|nccl.txt...
//   [--kind NAME] [--group-size N] [--absolute] [--description TEXT]
//   [-o calibration.json] [--report]
//
// Fits per op class time = c0 + c1*bytes + c2*flops and per collective and
// group size time = c0 + c1*bytes by non-negative least squares, and writes
// the calibration JSON read by `distir-sim --cost-model calibrated`.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Analysis/Calibration.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace distir;
namespace cl = llvm::cl;

static cl::OptionCategory category("distir-calibrate options");
static cl::list<std::string>
    computeFiles("compute",
                 cl::desc("Compute CSV (op_class,bytes,flops,seconds); "
                          "repeatable or comma-separated"),
                 cl::value_desc("file.csv"), cl::CommaSeparated,
                 cl::cat(category));
static cl::list<std::string> collectiveFiles(
    "collective",
    cl::desc("Collective CSV (kind,group_size,bytes,seconds) or nccl-tests "
             "output; repeatable or comma-separated"),
    cl::value_desc("file"), cl::CommaSeparated, cl::cat(category));
static cl::opt<std::string>
    kindName("kind",
             cl::desc("Collective measured by the nccl-tests files (default: "
                      "from the binary name in their header)"),
             cl::value_desc("all_reduce|all_gather|..."), cl::cat(category));
static cl::opt<int64_t>
    groupSize("group-size",
              cl::desc("Ranks of the nccl-tests runs (default: the number "
                       "of '# Rank' lines)"),
              cl::init(0), cl::cat(category));
static cl::opt<bool>
    absolute("absolute",
             cl::desc("Minimize absolute instead of relative residuals"),
             cl::cat(category));
static cl::opt<std::string>
    description("description",
                cl::desc("Free text stored in the calibration (e.g. the "
                         "machine)"),
                cl::cat(category));
static cl::opt<std::string> outputFile("o", cl::desc("Calibration JSON output"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::cat(category));
static cl::opt<bool>
    report("report",
           cl::desc("Print coefficients, R^2 and the largest relative error "
                    "per class (to stdout, or stderr when the JSON goes "
                    "there)"),
           cl::cat(category));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "DistIR calibration: fits cost coefficients to microbenchmark and "
      "nccl-tests measurements\n");
  bool ok = true;
  auto onError = [&](const llvm::Twine &msg) {
    llvm::errs() << "error: " << msg << "\n";
    ok = false;
  };
  auto fail = [&](const llvm::Twine &msg) {
    onError(msg);
    return 1;
  };

  if (computeFiles.empty() && collectiveFiles.empty())
    return fail("no measurements: pass --compute FILE.csv and/or "
                "--collective FILE");
  NcclTestsOptions ncclOptions;
  if (!kindName.empty()) {
    ncclOptions.kind = parseCalibrationKindName(kindName);
    if (!ncclOptions.kind)
      return fail("unknown collective kind '" + kindName +
                  "' (expected all_reduce, all_gather, reduce_scatter, "
                  "broadcast, reduce, scatter, gather, alltoall or "
                  "sendrecv)");
  }
  if (groupSize.getNumOccurrences()) {
    if (groupSize < 2)
      return fail("--group-size must be at least 2");
    ncclOptions.groupSize = groupSize;
  }

  auto readFile =
      [&](llvm::StringRef path) -> std::unique_ptr<llvm::MemoryBuffer> {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
        llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
    if (!buffer) {
      onError("cannot read '" + path + "': " + buffer.getError().message());
      return nullptr;
    }
    return std::move(*buffer);
  };

  std::vector<ComputeSample> computeSamples;
  for (const std::string &path : computeFiles) {
    std::unique_ptr<llvm::MemoryBuffer> buffer = readFile(path);
    if (!buffer || failed(parseComputeCSV(buffer->getBuffer(), path,
                                          computeSamples, onError)))
      return 1;
  }
  std::vector<CollectiveSample> collectiveSamples;
  for (const std::string &path : collectiveFiles) {
    std::unique_ptr<llvm::MemoryBuffer> buffer = readFile(path);
    if (!buffer)
      return 1;
    llvm::StringRef text = buffer->getBuffer();
    if (isNcclTestsOutput(text)
            ? failed(parseNcclTestsOutput(text, path, ncclOptions,
                                          collectiveSamples, onError))
            : failed(
                  parseCollectiveCSV(text, path, collectiveSamples, onError)))
      return 1;
  }

  FitOptions fitOptions;
  fitOptions.relative = !absolute;
  mlir::FailureOr<Calibration> calibration =
      fitCalibration(computeSamples, collectiveSamples, fitOptions, onError);
  if (failed(calibration))
    return 1;
  calibration->description = description;

  std::error_code ec;
  if (llvm::StringRef dir = llvm::sys::path::parent_path(outputFile);
      outputFile != "-" && !dir.empty())
    if ((ec = llvm::sys::fs::create_directories(dir)))
      return fail("cannot create directory '" + dir + "': " + ec.message());
  llvm::ToolOutputFile output(outputFile, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return fail("cannot write '" + outputFile + "': " + ec.message());
  output.os() << llvm::formatv("{0:2}", calibrationToJSON(*calibration))
              << "\n";
  output.keep();
  if (report)
    printFitReport(*calibration,
                   outputFile == "-" ? llvm::errs() : llvm::outs());
  return ok ? 0 : 1;
}
