//===- DistIRMLP.cpp - The published DistIR's parallel MLP step -----------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Rebuilds, as a dist program, the training step that the published DistIR
// simulates for its MLP benchmark under D/H/P parallelism, so that
// `distir-sim --cost-model distir-compat` can be compared with it program
// for program (docs/design/reference-facts.md): the same ops on the same
// devices in the same order, the same values live at the same time.
//
// Devices: replica i, horizontal partition j, stage s run on device
// (i * hp + j) * pp + s (DistIR numbers them from 1; its device 0 only
// holds the inputs before its init function distributes them, which it does
// not simulate).
//
//===----------------------------------------------------------------------===//

#include "DistIR/Dialect/Dist/IR/DistAttrs.h"
#include "DistIR/Dialect/Dist/IR/DistDialect.h"
#include "DistIR/Dialect/Dist/IR/DistOps.h"
#include "DistIR/Dialect/Dist/Transforms/PipelineSchedule.h"
#include "DistIR/Target/ONNX/MLPBuilder.h"
#include "MLPEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace distir;

namespace {
/// One microbatch's values on one horizontal partition, by original value.
struct MicrobatchValues {
  SmallVector<Value> y, a, da, dy, dw;
  Value loss, lossGrad;
};

class DistIRMLPBuilder {
public:
  DistIRMLPBuilder(const MLPOptions &options, const DistIRParallelism &par,
                   Location loc, Type elt)
      : options(options), par(par), loc(loc), b(loc.getContext()), elt(elt),
        blocks(options.layers / par.pp) {}

  OwningOpRef<ModuleOp> build();

private:
  int64_t device(int64_t i, int64_t j, int64_t s) const {
    return (i * par.hp + j) * par.pp + s;
  }
  int64_t stageOf(int64_t layer) const { return layer / blocks; }
  MLPEmitter on(int64_t dev) {
    return MLPEmitter{b, loc, elt, dist::DeviceAttr::get(b.getContext(), dev)};
  }
  RankedTensorType typeOn(int64_t dev, ArrayRef<int64_t> shape, Type t = {}) {
    return RankedTensorType::get(shape, t ? t : elt,
                                 dist::DeviceAttr::get(b.getContext(), dev));
  }
  /// Weight `layer`'s shape: DistIR scatters the function input of 0-based
  /// index k (wA is input 3, after x, z and n) along dim k % 2, Megatron
  /// style: wA by columns, wB by rows, and so on.
  SmallVector<int64_t> weightShape(int64_t layer) const {
    int64_t d = options.dim;
    if (layer % 2 == 0)
      return {d, d / par.hp};
    return {d / par.hp, d};
  }
  Value loss(MLPEmitter &e, Value a, Value z, Value n, bool gradient);
  void emitTask(int64_t i, const dist::PipelineTask &task);
  void emitOp(int64_t i, int64_t s, int64_t m, bool forward, int64_t layer,
              bool lossOp);
  void aggregate(int64_t m, Value value, bool isWeight, Value &into);

  const MLPOptions &options;
  const DistIRParallelism &par;
  Location loc;
  OpBuilder b;
  Type elt;
  int64_t blocks;

  // Per replica (reset for each): values[j][m], DistIR's matmul counter per
  // microbatch, and the aggregates over microbatches per j.
  std::vector<std::vector<MicrobatchValues>> values;
  std::vector<int64_t> matmuls;
  struct Aggregates {
    Value loss, inputGrad;
    SmallVector<Value> dw;
  };
  std::vector<std::vector<Aggregates>> aggregates; // [i][j]

  // Arguments per (i, j): microbatches of x and z, n, weights.
  struct Inputs {
    SmallVector<Value> x, z, w;
    Value n;
  };
  std::vector<std::vector<Inputs>> inputs;
};
} // namespace

Value DistIRMLPBuilder::loss(MLPEmitter &e, Value a, Value z, Value n,
                             bool gradient) {
  // Squared error per element over the sample count n (DistIR's Loss keeps
  // the element shape); its gradient 2 (a - z) / n.
  auto t = cast<RankedTensorType>(a.getType());
  AffineMap id = b.getMultiDimIdentityMap(2);
  AffineMap scalar = AffineMap::get(2, 0, {}, b.getContext());
  SmallVector<utils::IteratorType> iters(2, utils::IteratorType::parallel);
  Value init = e.empty(t.getShape());
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{a, z, n},
             ValueRange{init}, ArrayRef<AffineMap>{id, id, scalar, id}, iters,
             [&](OpBuilder &bb, Location l, ValueRange args) {
               Value diff = arith::SubFOp::create(bb, l, args[0], args[1]);
               Value count = arith::SIToFPOp::create(bb, l, elt, args[2]);
               Value num =
                   gradient ? Value(arith::MulFOp::create(bb, l, diff,
                                                          e.cst(bb, 2.0)))
                            : Value(arith::MulFOp::create(bb, l, diff, diff));
               linalg::YieldOp::create(
                   bb, l, Value(arith::DivFOp::create(bb, l, num, count)));
             })
      .getResult(0);
}

/// Folds microbatch `m`'s `value` into `into`: DistIR copies microbatch 0
/// (an Identity) when there are several, then adds weight gradients and
/// concatenates batch-dependent outputs along the batch.
void DistIRMLPBuilder::aggregate(int64_t m, Value value, bool isWeight,
                                 Value &into) {
  auto t = cast<RankedTensorType>(value.getType());
  MLPEmitter e = on(dist::getDevice(t).getId());
  if (m == 0) {
    into = par.microbatches == 1
               ? value
               : linalg::CopyOp::create(b, loc, ValueRange{value},
                                        ValueRange{e.empty(t.getShape())})
                     .getResult(0);
    return;
  }
  if (isWeight) {
    into = e.map({into, value}, [&](OpBuilder &bb, ArrayRef<Value> v) -> Value {
      return arith::AddFOp::create(bb, loc, v[0], v[1]);
    });
    return;
  }
  auto acc = cast<RankedTensorType>(into.getType());
  SmallVector<int64_t> shape(acc.getShape());
  shape[0] += t.getDimSize(0);
  into = tensor::ConcatOp::create(b, loc, e.type(shape), uint64_t{0},
                                  ValueRange{into, value});
}

void DistIRMLPBuilder::emitOp(int64_t i, int64_t s, int64_t m, bool forward,
                              int64_t layer, bool lossOp) {
  int64_t layers = options.layers;
  bool isMatmul = !lossOp;
  for (int64_t j = 0; j < par.hp; ++j) {
    MLPEmitter e = on(device(i, j, s));
    MicrobatchValues &v = values[j][m];
    Inputs &in = inputs[i][j];
    if (lossOp) {
      Value a = v.a[layers - 1];
      if (forward)
        v.loss = loss(e, a, in.z[m], in.n, /*gradient=*/false);
      else
        v.lossGrad = loss(e, a, in.z[m], in.n, /*gradient=*/true);
      continue;
    }
    Value input = layer == 0 ? in.x[m] : v.a[layer - 1];
    if (forward) {
      v.y[layer] = e.matmul(input, in.w[layer]);
      continue;
    }
    // MatMulGrad(x, w, dz) -> (dz w^T, x^T dz).
    v.dy[layer] = e.matmul(v.da[layer], e.transpose(in.w[layer]));
    v.dw[layer] = e.matmul(e.transpose(input), v.da[layer]);
  }
  // Horizontal partitions sum every second matmul's batch-dependent result.
  if (isMatmul && par.hp > 1 && ++matmuls[m] % 2 == 0) {
    SmallVector<Value> group;
    for (int64_t j = 0; j < par.hp; ++j)
      group.push_back(forward ? values[j][m].y[layer] : values[j][m].dy[layer]);
    auto reduced =
        dist::AllReduceOp::create(b, loc, dist::ReductionKind::Sum, group);
    for (int64_t j = 0; j < par.hp; ++j)
      (forward ? values[j][m].y[layer] : values[j][m].dy[layer]) =
          reduced.getResult(j);
  }
  // The function's outputs are aggregated over microbatches right away.
  for (int64_t j = 0; j < par.hp; ++j) {
    Aggregates &agg = aggregates[i][j];
    if (lossOp && forward)
      aggregate(m, values[j][m].loss, false, agg.loss);
    if (!lossOp && !forward && layer == 0)
      aggregate(m, values[j][m].dy[0], false, agg.inputGrad);
  }
  if (!lossOp && !forward)
    for (int64_t j = 0; j < par.hp; ++j)
      aggregate(m, values[j][m].dw[layer], true, aggregates[i][j].dw[layer]);
}

void DistIRMLPBuilder::emitTask(int64_t i, const dist::PipelineTask &task) {
  int64_t s = task.stage, m = task.microbatch, layers = options.layers;
  int64_t first = s * blocks, last = first + blocks - 1;
  if (task.phase == dist::PipelinePhase::Forward) {
    for (int64_t l = first; l <= last; ++l) {
      emitOp(i, s, m, /*forward=*/true, l, /*lossOp=*/false);
      for (int64_t j = 0; j < par.hp; ++j) {
        MicrobatchValues &v = values[j][m];
        v.a[l] = on(device(i, j, s)).relu(v.y[l]);
      }
    }
    if (s == par.pp - 1) {
      emitOp(i, s, m, /*forward=*/true, layers - 1, /*lossOp=*/true);
      emitOp(i, s, m, /*forward=*/false, layers - 1, /*lossOp=*/true);
    }
    return;
  }
  for (int64_t l = last; l >= first; --l) {
    for (int64_t j = 0; j < par.hp; ++j) {
      MicrobatchValues &v = values[j][m];
      Value grad = l == layers - 1 ? v.lossGrad : v.dy[l + 1];
      v.da[l] = on(device(i, j, s)).reluGrad(grad, v.y[l]);
    }
    emitOp(i, s, m, /*forward=*/false, l, /*lossOp=*/false);
  }
}

OwningOpRef<ModuleOp> DistIRMLPBuilder::build() {
  int64_t layers = options.layers, d = options.dim;
  int64_t rows = options.batch / par.dp / par.microbatches;
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(b, loc, "mlp_distir",
                                   b.getFunctionType(TypeRange{}, {}));
  Block *body = func.addEntryBlock();

  // The simulated function's inputs (DistIR's init function's results).
  inputs.assign(par.dp, std::vector<Inputs>(par.hp));
  for (int64_t i = 0; i < par.dp; ++i)
    for (int64_t j = 0; j < par.hp; ++j) {
      Inputs &in = inputs[i][j];
      int64_t head = device(i, j, 0), tail = device(i, j, par.pp - 1);
      for (int64_t m = 0; m < par.microbatches; ++m)
        in.x.push_back(body->addArgument(typeOn(head, {rows, d}), loc));
      for (int64_t m = 0; m < par.microbatches; ++m)
        in.z.push_back(body->addArgument(typeOn(tail, {rows, d}), loc));
      in.n = body->addArgument(typeOn(tail, {}, b.getI32Type()), loc);
      for (int64_t l = 0; l < layers; ++l)
        in.w.push_back(body->addArgument(
            typeOn(device(i, j, stageOf(l)), weightShape(l)), loc));
    }

  b.setInsertionPointToStart(body);
  aggregates.assign(par.dp, std::vector<Aggregates>(par.hp));
  std::vector<std::vector<dist::PipelineTask>> steps = dist::getPipelineSteps(
      par.pp, par.microbatches, dist::PipelineSchedule::PipeDream);
  for (int64_t i = 0; i < par.dp; ++i) {
    MicrobatchValues empty;
    empty.y.resize(layers);
    empty.a.resize(layers);
    empty.da.resize(layers);
    empty.dy.resize(layers);
    empty.dw.resize(layers);
    values.assign(par.hp,
                  std::vector<MicrobatchValues>(par.microbatches, empty));
    matmuls.assign(par.microbatches, 0);
    for (Aggregates &agg : aggregates[i])
      agg.dw.resize(layers);
    for (std::vector<dist::PipelineTask> step : steps) {
      llvm::erase_if(step, [](const dist::PipelineTask &t) {
        return t.phase == dist::PipelinePhase::Update;
      });
      llvm::sort(step,
                 [](const dist::PipelineTask &x, const dist::PipelineTask &y) {
                   return x.stage < y.stage;
                 });
      for (const dist::PipelineTask &task : step)
        emitTask(i, task);
      // Stage transfers at the end of the time step: a forward stage's last
      // activation to the next stage, a backward stage's input gradient to
      // the previous one.
      for (const dist::PipelineTask &task : step) {
        bool forward = task.phase == dist::PipelinePhase::Forward;
        int64_t s = task.stage, m = task.microbatch;
        if (forward ? s + 1 == par.pp : s == 0)
          continue;
        int64_t to = forward ? s + 1 : s - 1;
        for (int64_t j = 0; j < par.hp; ++j) {
          MicrobatchValues &v = values[j][m];
          Value &sent = forward ? v.a[(s + 1) * blocks - 1] : v.dy[s * blocks];
          auto t = cast<RankedTensorType>(sent.getType());
          sent = dist::SendOp::create(
              b, loc, typeOn(device(i, j, to), t.getShape()), sent);
        }
      }
    }
  }

  // Data-parallel aggregation in DistIR's output order: the loss, the weight
  // gradients from the last layer down, the input gradient before wA's.
  SmallVector<Value> results;
  auto gatherOrKeep = [&](function_ref<Value &(Aggregates &)> get) {
    for (int64_t j = 0; j < par.hp; ++j) {
      SmallVector<Value> group;
      for (int64_t i = 0; i < par.dp; ++i)
        group.push_back(get(aggregates[i][j]));
      if (par.dp == 1) {
        results.push_back(group[0]);
        continue;
      }
      auto gathered = dist::AllGatherOp::create(b, loc, group, /*dim=*/0);
      llvm::append_range(results, gathered.getResults());
    }
  };
  auto reduceGradient = [&](int64_t layer) {
    if (par.dp == 1)
      return;
    for (int64_t j = 0; j < par.hp; ++j) {
      SmallVector<Value> group;
      for (int64_t i = 0; i < par.dp; ++i)
        group.push_back(aggregates[i][j].dw[layer]);
      auto reduced =
          dist::AllReduceOp::create(b, loc, dist::ReductionKind::Sum, group);
      for (int64_t i = 0; i < par.dp; ++i)
        aggregates[i][j].dw[layer] = reduced.getResult(i);
    }
  };
  gatherOrKeep([](Aggregates &agg) -> Value & { return agg.loss; });
  for (int64_t l = layers - 1; l >= 1; --l)
    reduceGradient(l);
  gatherOrKeep([](Aggregates &agg) -> Value & { return agg.inputGrad; });
  reduceGradient(0);

  // One SGD update per weight (DistIR: one SGDOptimizer op per device).
  for (int64_t i = 0; i < par.dp; ++i)
    for (int64_t j = 0; j < par.hp; ++j)
      for (int64_t l = 0; l < layers; ++l) {
        Value updated =
            on(device(i, j, stageOf(l)))
                .sgdUpdate(inputs[i][j].w[l], aggregates[i][j].dw[l]);
        // The optimizer updates in place (distir-compat's one overwrite).
        updated.getDefiningOp()->setAttr("dist.phase",
                                         b.getStringAttr("update"));
        results.push_back(updated);
      }
  func::ReturnOp::create(b, loc, results);
  func.setFunctionType(b.getFunctionType(body->getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  if (failed(verify(*module)))
    return {};
  return module;
}

OwningOpRef<ModuleOp> distir::buildDistIRMLP(const MLPOptions &options,
                                             const DistIRParallelism &par,
                                             Location loc) {
  auto fail = [&](const Twine &message) {
    emitError(loc) << message;
    return OwningOpRef<ModuleOp>();
  };
  if (!options.training)
    return fail("--distir-dhp builds a training step: add --training");
  if (par.dp < 1 || par.hp < 1 || par.pp < 1 || par.microbatches < 1)
    return fail("--distir-dhp degrees and microbatches must be positive");
  if (options.layers < 1 || options.dim < 1 || options.batch < 1)
    return fail("--layers, --dim and --batch must be positive");
  // Each bound checked before any product is formed (no overflow); the
  // program has about a dozen ops per layer, microbatch, replica and
  // partition.
  constexpr int64_t kMaxDevices = 4096, kMaxMicrobatches = 4096,
                    kMaxLayers = 10000, kMaxDim = 1 << 20, kMaxBatch = 1 << 30,
                    kMaxSteps = 1 << 24;
  if (par.dp > kMaxDevices || par.hp > kMaxDevices || par.pp > kMaxDevices ||
      par.dp * par.hp * par.pp > kMaxDevices ||
      par.microbatches > kMaxMicrobatches || options.layers > kMaxLayers ||
      options.dim > kMaxDim || options.batch > kMaxBatch ||
      par.dp * par.hp * par.microbatches * options.layers > kMaxSteps)
    return fail("--distir-dhp: program too large (at most 4096 devices, 4096 "
                "microbatches, 10000 layers, dim 2^20, batch 2^30, and "
                "dp * hp * microbatches * layers at most 2^24)");
  if (options.layers % par.pp)
    return fail("--distir-dhp: pp=" + Twine(par.pp) + " does not divide the " +
                Twine(options.layers) + " layers");
  if (par.hp > 1 && options.layers % 2)
    return fail("--distir-dhp: hp > 1 pairs column- and row-split layers and "
                "needs an even layer count, not " +
                Twine(options.layers));
  if (options.dim % par.hp)
    return fail("--distir-dhp: hp=" + Twine(par.hp) + " does not divide dim " +
                Twine(options.dim));
  if (options.batch % (par.dp * par.microbatches))
    return fail("--distir-dhp: dp * microbatches = " +
                Twine(par.dp * par.microbatches) + " does not divide batch " +
                Twine(options.batch));
  Type elt = getMLPElementType(options.dtype, loc);
  if (!elt)
    return {};
  return DistIRMLPBuilder(options, par, loc, elt).build();
}
