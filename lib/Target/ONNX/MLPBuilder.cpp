//===- MLPBuilder.cpp - MLP training programs -----------------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Builds the DistIR paper's MLP benchmark in the importer's form (linalg on
// static tensors placed on one device): forward MatMul + ReLU per layer and,
// for training, a mean-squared-error loss, the backward pass and an SGD
// update.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Target/ONNX/MLPBuilder.h"
#include "DistIR/Dialect/Dist/IR/DistAttrs.h"
#include "DistIR/Dialect/Dist/IR/DistDialect.h"
#include "MLPEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ManagedStatic.h"

using namespace mlir;
using namespace distir;

// Registered by registerMLPBuilderTranslation(), that is by
// distir-translate only (see ONNXImporter.cpp).
namespace {
struct MLPCLOptions {
  llvm::cl::OptionCategory category{"MLP builder options"};
  llvm::cl::opt<int64_t> layers{"layers", llvm::cl::desc("--build-mlp: layers"),
                                llvm::cl::init(4), llvm::cl::cat(category)};
  llvm::cl::opt<int64_t> dim{
      "dim",
      llvm::cl::desc("--build-mlp: hidden width (weights are dim x dim)"),
      llvm::cl::init(64), llvm::cl::cat(category)};
  llvm::cl::opt<int64_t> batch{"batch",
                               llvm::cl::desc("--build-mlp: batch size"),
                               llvm::cl::init(16), llvm::cl::cat(category)};
  llvm::cl::opt<std::string> dtype{
      "dtype", llvm::cl::desc("--build-mlp: element type, f32, f16 or bf16"),
      llvm::cl::init("f32"), llvm::cl::cat(category)};
  llvm::cl::opt<bool> training{
      "training",
      llvm::cl::desc("--build-mlp: add loss, backward pass and SGD update"),
      llvm::cl::init(false), llvm::cl::cat(category)};
  llvm::cl::list<int64_t> distirDHP{
      "distir-dhp",
      llvm::cl::desc("--build-mlp --training: the published DistIR's own "
                     "parallel program for degrees dp,hp,pp and a microbatch "
                     "count (for --cost-model distir-compat)"),
      llvm::cl::value_desc("dp,hp,pp,k"), llvm::cl::CommaSeparated,
      llvm::cl::cat(category)};
};
} // namespace

static llvm::ManagedStatic<MLPCLOptions> clOptions;

OwningOpRef<ModuleOp> distir::buildMLP(const MLPOptions &options,
                                       Location loc) {
  MLIRContext *ctx = loc.getContext();
  if (options.layers < 1 || options.dim < 1 || options.batch < 1) {
    emitError(loc) << "--layers, --dim and --batch must be positive";
    return {};
  }
  // The program has about 20 ops per layer and dim x dim weights: beyond
  // these bounds it would exhaust memory instead of failing.
  constexpr int64_t kMaxLayers = 10000, kMaxDim = 1 << 20, kMaxBatch = 1 << 30;
  if (options.layers > kMaxLayers || options.dim > kMaxDim ||
      options.batch > kMaxBatch) {
    emitError(loc) << "MLP too large: --layers " << options.layers << ", --dim "
                   << options.dim << ", --batch " << options.batch
                   << " (at most " << kMaxLayers << ", " << kMaxDim << ", "
                   << kMaxBatch << ")";
    return {};
  }
  if (options.device < 0) {
    emitError(loc) << "--device must be >= 0";
    return {};
  }
  Type elt = getMLPElementType(options.dtype, loc);
  if (!elt)
    return {};
  OpBuilder b(ctx);
  MLPEmitter e{b, loc, elt, dist::DeviceAttr::get(ctx, options.device)};
  int64_t bsz = options.batch, d = options.dim, n = options.layers;

  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  SmallVector<Type> args = {e.type({bsz, d})};
  if (options.training)
    args.push_back(e.type({bsz, d}));
  for (int64_t i = 0; i < n; ++i)
    args.push_back(e.type({d, d}));
  auto func = func::FuncOp::create(b, loc, "mlp", b.getFunctionType(args, {}));
  Block *body = func.addEntryBlock();
  b.setInsertionPointToStart(body);
  Value x = body->getArgument(0);
  unsigned firstWeight = options.training ? 2 : 1;
  // Roles for dist-dtp: batch inputs and the weights' layer order.
  for (unsigned i = 0; i < firstWeight; ++i)
    func.setArgAttr(i, "dist.batch_dim", b.getI64IntegerAttr(0));
  for (int64_t i = 0; i < n; ++i)
    func.setArgAttr(firstWeight + i, "dist.layer", b.getI64IntegerAttr(i));
  auto weight = [&](int64_t i) { return body->getArgument(firstWeight + i); };

  // Tags every op emitted since the previous call with its layer and phase,
  // which dist-dtp uses to form pipeline stages and schedules.
  Operation *tagged = nullptr;
  auto tag = [&](int64_t layer, StringRef phase) {
    Operation *op = tagged ? tagged->getNextNode() : &body->front();
    for (; op; op = op->getNextNode()) {
      op->setAttr("dist.layer", b.getI64IntegerAttr(layer));
      op->setAttr("dist.phase", b.getStringAttr(phase));
      tagged = op;
    }
  };

  // Forward: h_i = relu(h_{i-1} @ w_i).
  SmallVector<Value> acts = {x}, pre;
  for (int64_t i = 0; i < n; ++i) {
    Value z = e.matmul(acts.back(), weight(i));
    pre.push_back(z);
    acts.push_back(e.relu(z));
    tag(i, "forward");
  }
  SmallVector<Value> results;
  if (!options.training) {
    results.push_back(acts.back());
  } else {
    // Loss: mean((h_n - y)^2); its gradient 2 (h_n - y) / (batch * dim).
    Value label = body->getArgument(1);
    double inv = 1.0 / static_cast<double>(bsz * d);
    Value diff = e.map({acts.back(), label},
                       [&](OpBuilder &bb, ArrayRef<Value> a) -> Value {
                         return arith::SubFOp::create(bb, loc, a[0], a[1]);
                       });
    Value sq = e.map(diff, [&](OpBuilder &bb, ArrayRef<Value> a) -> Value {
      return arith::MulFOp::create(bb, loc, a[0], a[0]);
    });
    Value total = e.sumAll(sq);
    Value loss = e.map(total, [&](OpBuilder &bb, ArrayRef<Value> a) -> Value {
      return arith::MulFOp::create(bb, loc, a[0], e.cst(bb, inv));
    });
    results.push_back(loss);
    tag(n - 1, "forward");
    Value grad = e.map(diff, [&](OpBuilder &bb, ArrayRef<Value> a) -> Value {
      return arith::MulFOp::create(bb, loc, a[0], e.cst(bb, 2 * inv));
    });
    tag(n - 1, "backward");
    // Backward, last layer first.
    SmallVector<Value> newWeights(n);
    for (int64_t i = n - 1; i >= 0; --i) {
      Value dz = e.reluGrad(grad, pre[i]);
      Value dw = e.matmul(e.transpose(acts[i]), dz);
      if (i > 0)
        grad = e.matmul(dz, e.transpose(weight(i)));
      tag(i, "backward");
      newWeights[i] = e.sgdUpdate(weight(i), dw);
      tag(i, "update");
    }
    llvm::append_range(results, newWeights);
  }
  func::ReturnOp::create(b, loc, results);
  func.setFunctionType(b.getFunctionType(args, ValueRange(results).getTypes()));
  if (failed(verify(*module)))
    return {};
  return module;
}

/// The --device option is declared with the ONNX importer's options.
int64_t getONNXImportDeviceOption();

void distir::registerMLPBuilderTranslation() {
  *clOptions; // the command-line options of --build-mlp
  static TranslateToMLIRRegistration reg(
      "build-mlp",
      "Build the MLP benchmark program (--layers, --dim, --batch, --dtype, "
      "--training, --device); reads no input",
      [](llvm::StringRef, MLIRContext *ctx) -> OwningOpRef<Operation *> {
        Location loc = FileLineColLoc::get(ctx, "build-mlp", 0, 0);
        MLPOptions options;
        options.layers = clOptions->layers;
        options.dim = clOptions->dim;
        options.batch = clOptions->batch;
        options.training = clOptions->training;
        options.device = getONNXImportDeviceOption();
        options.dtype = clOptions->dtype;
        OwningOpRef<ModuleOp> module;
        if (clOptions->distirDHP.getNumOccurrences()) {
          if (clOptions->distirDHP.size() != 4) {
            emitError(loc) << "--distir-dhp takes four numbers dp,hp,pp,k, "
                              "got "
                           << clOptions->distirDHP.size();
            return {};
          }
          DistIRParallelism par{
              clOptions->distirDHP[0], clOptions->distirDHP[1],
              clOptions->distirDHP[2], clOptions->distirDHP[3]};
          module = buildDistIRMLP(options, par, loc);
        } else {
          module = buildMLP(options, loc);
        }
        if (!module)
          return {};
        return OwningOpRef<Operation *>(module.release());
      },
      [](DialectRegistry &registry) {
        registry.insert<arith::ArithDialect, func::FuncDialect,
                        linalg::LinalgDialect, math::MathDialect,
                        tensor::TensorDialect, dist::DistDialect>();
      });
}
