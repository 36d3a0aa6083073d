//===- distir-run.cpp - Reference executor
//----------------------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// distir-run prog.mlir [--entry NAME] [--input NAME=file.npy]...
//   [--weights-from model.onnx] [--random-inputs SEED] [--output-dir DIR]
//   [--print-limit N]
//
// Inputs are named by argument number (`0`, `arg0`), by a `dist.name`
// argument attribute, or by the argument's name location (what the ONNX
// importer records).
//
//===----------------------------------------------------------------------===//

#include "DistIR/Analysis/Executor.h"
#include "DistIR/Analysis/ProgramInputs.h"
#include "DistIR/Analysis/TensorIO.h"
#include "DistIR/Target/ONNX/TensorProtoIO.h"
#include "DistIR/Tools/ToolUtils.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"

#include <limits>
#include <random>

using namespace mlir;
using namespace distir;
namespace cl = llvm::cl;

static cl::OptionCategory category("distir-run options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<program>"),
                                      cl::init("-"), cl::cat(category));
static cl::opt<std::string> entryName("entry", cl::desc("Function to run"),
                                      cl::cat(category));
static cl::list<std::string> inputs("input",
                                    cl::desc("Argument value: NAME=file.npy"),
                                    cl::value_desc("NAME=file.npy"),
                                    cl::cat(category));
static cl::opt<int64_t> randomSeed(
    "random-inputs",
    cl::desc("Fill arguments without --input with deterministic pseudo-random "
             "values from this seed (floats in [-1, 1), optimizer state in "
             "[0, 1), integers in [0, 8))"),
    cl::init(-1), cl::cat(category));
static cl::opt<std::string> weightsFrom(
    "weights-from",
    cl::desc("Bind every argument without --input whose name is an "
             "initializer of this ONNX model to the initializer's data"),
    cl::value_desc("model.onnx"), cl::cat(category));
static cl::opt<std::string> outputDir(
    "output-dir",
    cl::desc("Write each result as DIR/output_N.npy (or .pb) and list them "
             "(index, dist.name, file) in DIR/outputs.json"),
    cl::cat(category));
static cl::opt<std::string>
    outputFormat("output-format",
                 cl::desc("Format of written results: npy (default) or pb "
                          "(ONNX TensorProto)"),
                 cl::init("npy"), cl::cat(category));
static cl::opt<unsigned>
    printLimit("print-limit",
               cl::desc("Elements of each result to print (default 64)"),
               cl::init(64), cl::cat(category));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "DistIR reference executor: runs a (distributed) program on the CPU\n");
  auto fail = [](const Twine &msg) {
    llvm::errs() << "error: " << msg << "\n";
    return 1;
  };

  ToolSession session;
  MLIRContext &context = session.context;
  OwningOpRef<ModuleOp> module = session.loadProgram(inputFile);
  if (!module)
    return 1;
  func::FuncOp entry = findEntry(*module, entryName);
  if (!entry)
    return 1;

  unsigned numArgs = entry.getNumArguments();
  SmallVector<std::optional<RuntimeValue>> args(numArgs);
  for (const std::string &spec : inputs) {
    auto [name, path] = StringRef(spec).split('=');
    if (path.empty())
      return fail("--input expects NAME=file.npy, got '" + spec + "'");
    std::optional<unsigned> index;
    for (unsigned i = 0; i < numArgs && !index; ++i)
      if (llvm::is_contained(getArgumentNames(entry, i), name.str()))
        index = i;
    if (!index)
      return fail("@" + entry.getSymName() + " has no argument named '" + name +
                  "'");
    if (args[*index])
      return fail("argument '" + name + "' is given twice");
    std::string error;
    std::optional<RuntimeValue> value =
        path.ends_with(".pb")
            ? readTensorProtoFile(
                  path, &context, error,
                  getElementTypeOrSelf(entry.getArgumentTypes()[*index]))
            : readNpy(path, &context, error);
    if (!value)
      return fail(error);
    args[*index] = std::move(*value);
  }
  if (!weightsFrom.empty()) {
    std::string error;
    if (!bindModelInitializers(weightsFrom, entry, args, error))
      return fail(error);
  }
  std::mt19937_64 rng(static_cast<uint64_t>(std::max<int64_t>(randomSeed, 0)));
  SmallVector<RuntimeValue> values;
  for (unsigned i = 0; i < numArgs; ++i) {
    if (!args[i]) {
      if (randomSeed < 0)
        return fail("missing input for argument #" + Twine(i) + " (" +
                    getArgumentNames(entry, i).back() + ") of @" +
                    entry.getSymName() +
                    "; pass --input NAME=file.npy or --random-inputs SEED");
      args[i] = makeRandomArgument(entry, i, rng);
    } else {
      // A scalar argument given as a 0-d array.
      if (!isa<TensorType>(entry.getArgumentTypes()[i]) &&
          args[i]->shape.empty())
        args[i]->isTensor = false;
    }
    values.push_back(*args[i]);
  }
  // Inputs used as indices are range-checked before running, so that a bad
  // token id is reported as the input it is.
  SmallVector<std::optional<IndexBound>> bounds = getArgumentIndexBounds(entry);
  for (unsigned i = 0; i < numArgs; ++i)
    if (bounds[i] && values[i].elementType ==
                         getElementTypeOrSelf(entry.getArgumentTypes()[i]))
      if (std::optional<std::string> bad =
              checkIndexBound(values[i], *bounds[i]))
        return fail("input '" + getArgumentNames(entry, i).back() +
                    "': " + *bad);

  FailureOr<SmallVector<RuntimeValue>> results = execute(entry, values);
  if (failed(results))
    return 1;

  if (outputFormat != "npy" && outputFormat != "pb")
    return fail("unknown --output-format '" + outputFormat +
                "' (expected npy or pb)");
  if (!outputDir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
      return fail("cannot create '" + outputDir + "': " + ec.message());
  llvm::json::Array listing;
  for (auto [i, result] : llvm::enumerate(*results)) {
    // `dist.unsigned` (set by the ONNX importer) marks integer results that
    // hold unsigned values in signless integers.
    bool isUnsigned = entry.getResultAttr(i, "dist.unsigned") != nullptr &&
                      isa<IntegerType>(result.elementType);
    llvm::outs() << "output #" << i << ": " << entry.getResultTypes()[i];
    if (!outputDir.empty()) {
      SmallString<128> path(outputDir);
      std::string name = "output_" + std::to_string(i);
      llvm::sys::path::append(path, name + "." + outputFormat);
      std::string error;
      bool written =
          outputFormat == "pb"
              ? writeTensorProtoFile(path, result, name, error, isUnsigned)
              : writeNpy(path, result, error, isUnsigned);
      if (!written)
        return fail(error);
      llvm::outs() << " -> " << path;
      auto resultName = entry.getResultAttrOfType<StringAttr>(i, "dist.name");
      listing.push_back(llvm::json::Object{
          {"index", static_cast<int64_t>(i)},
          {"name", resultName ? llvm::json::Value(resultName.str())
                              : llvm::json::Value(nullptr)},
          {"file", name + "." + outputFormat}});
    }
    llvm::outs() << "\n  [";
    const std::vector<double> &data = *result.data;
    unsigned width =
        isUnsigned ? result.elementType.getIntOrFloatBitWidth() : 0;
    for (size_t e = 0; e < data.size() && e < printLimit; ++e) {
      llvm::outs() << (e ? ", " : "");
      if (isUnsigned)
        llvm::outs() << (static_cast<uint64_t>(static_cast<int64_t>(data[e])) &
                         (width >= 64 ? ~uint64_t(0)
                                      : (uint64_t(1) << width) - 1));
      else if (result.elementType.isIntOrIndex())
        // Exactly, not as %g: the values are already wrapped to the type.
        llvm::outs() << (data[e] >= 9.2233720368547758e18
                             ? std::numeric_limits<int64_t>::max()
                             : static_cast<int64_t>(data[e]));
      else
        llvm::outs() << llvm::format("%.9g", data[e]);
    }
    if (data.size() > printLimit)
      llvm::outs() << ", ... (" << data.size() << " elements)";
    llvm::outs() << "]\n";
  }
  if (!outputDir.empty()) {
    // Which file holds which result (a training step has dozens).
    SmallString<128> path(outputDir);
    llvm::sys::path::append(path, "outputs.json");
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return fail("cannot write '" + path + "': " + ec.message());
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(listing))) << "\n";
  }
  (void)module.release(); // skip the teardown of large modules
  return 0;
}
