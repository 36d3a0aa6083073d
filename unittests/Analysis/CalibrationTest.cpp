//===- CalibrationTest.cpp - Tests of calibration fitting and formats -----===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// NNLS against systems solved by hand and against unconstrained least
// squares where that is already non-negative; the JSON round trip; pricing
// with group-size fallback; the measurement parsers on in-memory text.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Analysis/Calibration.h"
#include "DistIR/Analysis/OpCost.h"
#include "DistIR/Analysis/Simulator.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <cmath>
#include <string>
#include <vector>

using namespace distir;

namespace {

std::vector<double> nnls(const std::vector<double> &a, int64_t rows,
                         int64_t cols, const std::vector<double> &b) {
  mlir::FailureOr<std::vector<double>> x = solveNNLS(a, rows, cols, b);
  EXPECT_TRUE(succeeded(x));
  return succeeded(x) ? *x : std::vector<double>(cols, NAN);
}

TEST(NNLS, ClipsNegativeComponent) {
  // min (x1 - 1)^2 + (x2 + 1)^2, x >= 0  ->  (1, 0).
  std::vector<double> x = nnls({1, 0, 0, 1}, 2, 2, {1, -1});
  EXPECT_DOUBLE_EQ(x[0], 1);
  EXPECT_DOUBLE_EQ(x[1], 0);
}

TEST(NNLS, HandSolvedActiveConstraint) {
  // A = [1 0; 1 1; 0 1], b = (2, 1, -1): unconstrained (2, -1); with x2 = 0
  // the best x1 minimizes (x1-2)^2 + (x1-1)^2 -> 1.5; KKT: w2 = -1.5 < 0.
  std::vector<double> a = {1, 0, 1, 1, 0, 1};
  std::vector<double> b = {2, 1, -1};
  mlir::FailureOr<std::vector<double>> ls = solveLeastSquares(a, 3, 2, b);
  ASSERT_TRUE(succeeded(ls));
  EXPECT_NEAR((*ls)[0], 2, 1e-12);
  EXPECT_NEAR((*ls)[1], -1, 1e-12);
  std::vector<double> x = nnls(a, 3, 2, b);
  EXPECT_NEAR(x[0], 1.5, 1e-12);
  EXPECT_EQ(x[1], 0);
}

TEST(NNLS, DecreasingDataGivesConstant) {
  // Times that fall with size: the slope is clamped to 0 and the constant
  // is the mean.
  std::vector<double> x = nnls({1, 1, 1, 2, 1, 3}, 3, 2, {3, 2, 1});
  EXPECT_NEAR(x[0], 2, 1e-12);
  EXPECT_EQ(x[1], 0);
}

TEST(NNLS, MatchesLeastSquaresWhenNonNegative) {
  // An overdetermined system with a positive unconstrained solution and
  // columns of very different scales (constant, bytes, flops).
  std::vector<double> a, b;
  const double truth[3] = {1e-5, 2e-10, 3e-13};
  int64_t rows = 0;
  for (double bytes : {1e3, 1e5, 1e7, 1e9})
    for (double flops : {1e4, 1e8, 1e12}) {
      a.insert(a.end(), {1, bytes, flops});
      double noise = 1 + 1e-3 * std::sin(static_cast<double>(rows));
      b.push_back((truth[0] + truth[1] * bytes + truth[2] * flops) * noise);
      ++rows;
    }
  mlir::FailureOr<std::vector<double>> ls = solveLeastSquares(a, rows, 3, b);
  ASSERT_TRUE(succeeded(ls));
  for (double v : *ls)
    ASSERT_GT(v, 0);
  std::vector<double> x = nnls(a, rows, 3, b);
  for (int j = 0; j < 3; ++j) {
    EXPECT_NEAR(x[j], (*ls)[j], 1e-9 * std::fabs((*ls)[j])) << j;
    // Absolute residuals: the noise of the largest times hides the
    // constant, but the slopes come out.
    if (j > 0)
      EXPECT_NEAR(x[j], truth[j], 1e-2 * truth[j]) << j;
  }
}

TEST(NNLS, DependentColumns) {
  // Column 2 = 2 * column 1: any split fits; the result must fit exactly
  // and stay non-negative.
  std::vector<double> a = {1, 2, 2, 4, 3, 6};
  std::vector<double> x = nnls(a, 3, 2, {1, 2, 3});
  EXPECT_GE(x[0], 0);
  EXPECT_GE(x[1], 0);
  EXPECT_NEAR(x[0] + 2 * x[1], 1, 1e-12);
}

TEST(NNLS, ZeroColumnAndZeroRightHandSide) {
  std::vector<double> x = nnls({1, 0, 2, 0}, 2, 2, {1, 2});
  EXPECT_NEAR(x[0], 1, 1e-12);
  EXPECT_EQ(x[1], 0);
  x = nnls({1, 1, 2, 3}, 2, 2, {0, 0});
  EXPECT_EQ(x[0], 0);
  EXPECT_EQ(x[1], 0);
}

TEST(NNLS, RejectsBadShapes) {
  EXPECT_TRUE(failed(solveNNLS({1, 2, 3}, 2, 2, {1, 2})));
  EXPECT_TRUE(failed(solveNNLS({1, 2, 3, 4}, 2, 2, {1})));
  EXPECT_TRUE(failed(solveNNLS({}, 0, 2, {})));
  EXPECT_TRUE(failed(solveNNLS({1, NAN}, 1, 2, {1})));
  EXPECT_TRUE(failed(solveLeastSquares({1, 2, 3}, 2, 2, {1, 2})));
}

Calibration makeCalibration() {
  Calibration c;
  c.description = "test \"machine\"";
  c.compute[ComputeClass::MatMul] = {1e-5, 1e-9, 2.5e-13, std::nullopt};
  c.compute[ComputeClass::Copy] = {3e-6, 0.1, 0, FitQuality{12, -0.25, 0.5}};
  c.collectives[CollectiveKind::AllReduce][2] = {5e-6, 1e-10, std::nullopt};
  c.collectives[CollectiveKind::AllReduce][8] = {2e-5, 4e-10,
                                                 FitQuality{14, 0.999, 0.01}};
  c.collectives[CollectiveKind::SendRecv][2] = {1e-6, 1.0 / 3, std::nullopt};
  return c;
}

TEST(CalibrationJSON, RoundTrip) {
  Calibration c = makeCalibration();
  std::string text;
  llvm::raw_string_ostream os(text);
  os << calibrationToJSON(c);
  std::string error;
  mlir::FailureOr<Calibration> parsed = parseCalibrationJSON(
      text, [&](const llvm::Twine &msg) { error = msg.str(); });
  ASSERT_TRUE(succeeded(parsed)) << error;
  EXPECT_EQ(*parsed, c);
}

TEST(CalibrationJSON, ErrorsNameThePath) {
  std::string error;
  auto onError = [&](const llvm::Twine &msg) { error = msg.str(); };
  EXPECT_TRUE(failed(parseCalibrationJSON(
      R"({"format": "distir-calibration", "collectives": {"gather":
          [{"group_size": 2, "constant": 0, "per_byte": "x"}]}})",
      onError)));
  EXPECT_EQ(
      error,
      "$.collectives.gather[0].per_byte: expected a number, got a string");
  EXPECT_TRUE(failed(parseCalibrationJSON("{", onError)));
  EXPECT_EQ(error.rfind("invalid JSON: ", 0), 0u) << error;
}

TEST(CalibrationPricing, ComputeAndCollectives) {
  Calibration c = makeCalibration();
  EXPECT_DOUBLE_EQ(*c.getComputeTime(ComputeClass::MatMul, 1e6, 4e12),
                   1e-5 + 1e-3 + 1.0);
  EXPECT_FALSE(c.getComputeTime(ComputeClass::Reduction, 1, 1));
  // Exact group sizes.
  EXPECT_DOUBLE_EQ(*c.getCollectiveTime(CollectiveKind::AllReduce, 2, 1e6),
                   5e-6 + 1e-4);
  EXPECT_DOUBLE_EQ(*c.getCollectiveTime(CollectiveKind::AllReduce, 8, 1e6),
                   2e-5 + 4e-4);
  // n = 4: nearest is 2 (distance 2 < 4); bytes term scaled by
  // f(4)/f(2) = 1.5.
  EXPECT_DOUBLE_EQ(*c.getCollectiveTime(CollectiveKind::AllReduce, 4, 1e6),
                   5e-6 + 1.5e-4);
  // n = 5: tie between 2 and 8 is 3 vs 3 -> the larger, 8; scale
  // f(5)/f(8) = (8/5) / (14/8) = 0.9142857...
  double scale = (2.0 * 4 / 5) / (2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(*c.getCollectiveTime(CollectiveKind::AllReduce, 5, 1e6),
                   2e-5 + 4e-10 * scale * 1e6);
  // n = 16: nearest 8, f(16)/f(8) = (30/16)/(14/8).
  EXPECT_DOUBLE_EQ(*c.getCollectiveTime(CollectiveKind::AllReduce, 16, 1e6),
                   2e-5 + 4e-10 * (30.0 / 16) / (14.0 / 8) * 1e6);
  EXPECT_EQ(*c.getCollectiveTime(CollectiveKind::AllReduce, 1, 1e6), 0);
  EXPECT_FALSE(c.getCollectiveTime(CollectiveKind::AllGather, 2, 1e6));
}

TEST(Measurements, CSVWithExtraColumnsAndComments) {
  std::vector<ComputeSample> samples;
  std::string error;
  auto onError = [&](const llvm::Twine &msg) { error = msg.str(); };
  ASSERT_TRUE(
      succeeded(parseComputeCSV("# note\n"
                                "kernel, seconds ,op_class,flops,bytes\n"
                                "\n"
                                "mm_8,1e-6,matmul,1024,2048\n",
                                "x.csv", samples, onError)))
      << error;
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].opClass, ComputeClass::MatMul);
  EXPECT_EQ(samples[0].bytes, 2048);
  EXPECT_EQ(samples[0].flops, 1024);
  EXPECT_EQ(samples[0].seconds, 1e-6);
  EXPECT_TRUE(failed(parseComputeCSV("op_class,bytes,flops,seconds\n"
                                     "matmul,1,1,1\nmatmul,1,x,1\n",
                                     "y.csv", samples, onError)));
  EXPECT_EQ(error, "y.csv:3: invalid flops 'x'");
}

TEST(Measurements, NcclTestsOlderLayoutAndNranks) {
  // nccl-tests before root columns (size count type redop time ...), with
  // the group size from an `nranks` field and the kind from the file name.
  const char *text =
      "# nranks 4 (synthetic)\n"
      "#       size         count    type   redop     time   algbw   busbw  "
      "error     time   algbw   busbw  error\n"
      "     1048576        262144   float     sum    100.0   10.49   18.35  "
      "0e+00    101.0   10.38   18.17  0e+00\n";
  EXPECT_TRUE(isNcclTestsOutput(text));
  std::vector<CollectiveSample> samples;
  std::string error;
  ASSERT_TRUE(succeeded(
      parseNcclTestsOutput(text, "logs/reduce_scatter_perf.log", {}, samples,
                           [&](const llvm::Twine &msg) { error = msg.str(); })))
      << error;
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].kind, CollectiveKind::ReduceScatter);
  EXPECT_EQ(samples[0].groupSize, 4);
  EXPECT_EQ(samples[0].bytes, 1048576);
  EXPECT_DOUBLE_EQ(samples[0].seconds, 100e-6);
  EXPECT_FALSE(isNcclTestsOutput("# c\nkind,group_size,bytes,seconds\n"));
}

TEST(Fit, RejectsEmptyAndNonPositive) {
  std::string error;
  auto onError = [&](const llvm::Twine &msg) { error = msg.str(); };
  EXPECT_TRUE(failed(fitCalibration({}, {}, FitOptions(), onError)));
  EXPECT_EQ(error, "no measurements to fit");
  ComputeSample bad{ComputeClass::Copy, 1, 1, -1};
  EXPECT_TRUE(failed(fitCalibration(bad, {}, FitOptions(), onError)));
  EXPECT_EQ(error, "measured time must be positive, got -1");
  CollectiveSample lonely{CollectiveKind::AllReduce, 1, 1, 1};
  EXPECT_TRUE(failed(fitCalibration({}, lonely, FitOptions(), onError)));
  EXPECT_EQ(error, "group size must be at least 2, got 1");
}

TEST(Simulator, CalibratedModelNeedsACalibration) {
  mlir::MLIRContext context;
  context.loadDialect<mlir::func::FuncDialect>();
  std::string diagnostic;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    diagnostic = d.str();
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>("func.func @f() { return }",
                                              &context);
  ASSERT_TRUE(module);
  auto entry = module->lookupSymbol<mlir::func::FuncOp>("f");
  std::string error;
  mlir::FailureOr<Cluster> cluster = getClusterPreset(
      "distir-uniform", [&](const llvm::Twine &m) { error = m.str(); });
  ASSERT_TRUE(succeeded(cluster)) << error;
  SimulatorOptions options;
  options.costModel = CostModelKind::Calibrated;
  EXPECT_TRUE(failed(simulate(entry, *cluster, options)));
  EXPECT_EQ(diagnostic, "the calibrated cost model needs a calibration");
  options.calibration = std::make_shared<const Calibration>(makeCalibration());
  EXPECT_TRUE(succeeded(simulate(entry, *cluster, options)));
}

} // namespace

// The calibration tables are keyed by the element type's printed name; the
// fast path for builtin types must print the same.
TEST(OpCost, DTypeNameMatchesPrinter) {
  mlir::MLIRContext context;
  mlir::Builder b(&context);
  for (mlir::Type type :
       {mlir::Type(b.getF16Type()), mlir::Type(b.getBF16Type()),
        mlir::Type(b.getF32Type()), mlir::Type(b.getF64Type()),
        mlir::Type(b.getIndexType()), mlir::Type(b.getI1Type()),
        mlir::Type(b.getI64Type()), mlir::Type(b.getIntegerType(8, true)),
        mlir::Type(b.getIntegerType(16, false)),
        mlir::Type(b.getType<mlir::Float8E4M3FNType>()),
        mlir::Type(b.getType<mlir::Float4E2M1FNType>())}) {
    std::string printed;
    llvm::raw_string_ostream os(printed);
    type.print(os);
    EXPECT_EQ(getDTypeName(type), printed);
  }
}

// Flops of structured ops: the loop ranges come from the operand dims a loop
// indexes directly (matmul, a transposing generic) or, when a loop indexes
// none on its own (the window loops of a convolution), from
// LinalgOp::getStaticLoopRanges; both must give the whole iteration space.
TEST(OpCost, StructuredFlopsCoverEveryLoop) {
  mlir::MLIRContext context;
  context.loadDialect<mlir::func::FuncDialect, mlir::linalg::LinalgDialect,
                      mlir::tensor::TensorDialect, mlir::arith::ArithDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(R"mlir(
    func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>,
                 %c: tensor<4x16xf32>, %t: tensor<8x4xf32>,
                 %o: tensor<4x8xf32>, %img: tensor<1x6x6x3xf32>,
                 %w: tensor<3x3x3x5xf32>, %co: tensor<1x4x4x5xf32>) {
      %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>)
                         outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
      %1 = linalg.generic {
          indexing_maps = [affine_map<(i, j) -> (j, i)>,
                           affine_map<(i, j) -> (i, j)>],
          iterator_types = ["parallel", "parallel"]}
          ins(%t : tensor<8x4xf32>) outs(%o : tensor<4x8xf32>) {
        ^bb0(%x: f32, %y: f32):
          %n = arith.negf %x : f32
          linalg.yield %n : f32
      } -> tensor<4x8xf32>
      %2 = linalg.conv_2d_nhwc_hwcf
          ins(%img, %w : tensor<1x6x6x3xf32>, tensor<3x3x3x5xf32>)
          outs(%co : tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
      return
    })mlir",
                                              &context);
  ASSERT_TRUE(module);
  std::vector<double> flops;
  module->walk([&](mlir::linalg::LinalgOp op) {
    flops.push_back(getComputeWork(op).flops);
  });
  // Multiply-add bodies count 2 per point, the negation 1.
  ASSERT_EQ(flops.size(), 3u);
  EXPECT_EQ(flops[0], 4.0 * 16 * 8 * 2);
  EXPECT_EQ(flops[1], 4.0 * 8);
  EXPECT_EQ(flops[2], 1.0 * 4 * 4 * 5 * 3 * 3 * 3 * 2);
}
