//===- PassEnums.h - Enumerated options of the dist passes ------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// The closed sets of values the dist passes take as options (ODS options of
// these types with `llvm::cl::values`: `--help` and the generated pass
// reference list the values, and C++ users set them typed). Enums of
// other layers that passes take too: PipelineSchedule
// (PipelineSchedule.h), CostModelKind (Analysis/Simulator.h),
// CollectiveAlgorithm (Analysis/CollectiveCost.h).
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_DIALECT_DIST_TRANSFORMS_PASSENUMS_H
#define DISTIR_DIALECT_DIST_TRANSFORMS_PASSENUMS_H

namespace distir::dist {

/// dist-autodiff's loss (PyTorch's MSELoss and CrossEntropyLoss, mean).
enum class LossKind { MSE, CrossEntropy };

/// dist-autodiff's optimizer (torch.optim's update rules).
enum class OptimizerKind { SGD, Momentum, Adam, AdamW };

/// dist-autodiff's compute precision (f16/bf16: mixed precision with fp32
/// master weights and state).
enum class ComputePrecision { F32, F16, BF16 };

/// dist-simulate's report format.
enum class ReportFormat { Text, JSON };

/// dist-pase's elimination order.
enum class EliminationOrder { GenerateSeq, BFS };

/// dist-pase's tie-adjoints: when an adjoint op follows its forward op.
enum class TieAdjoints { Auto, Always, Never };

/// dist-dtp's stage-transfer: how a value every tensor-parallel rank holds
/// crosses stages. Send: each rank to its counterpart; Planned: the
/// resharding planner's fastest plan; the others force one planner strategy.
enum class StageTransfer {
  Send,
  Planned,
  SendRecv,
  LocalAllGather,
  GlobalAllGather,
  Broadcast
};

/// dist-lower-reshard's strategy: the planner's fastest (Auto) or one forced.
enum class ReshardStrategy {
  Auto,
  SendRecv,
  LocalAllGather,
  GlobalAllGather,
  Broadcast
};

/// dist-lower-reshard's load balancing of unit tasks over senders
/// (reshard::Balancer).
enum class ReshardBalance {
  Ensemble,
  LongestFirst,
  Greedy,
  DepthFirst,
  Random,
  None
};

} // namespace distir::dist

#endif // DISTIR_DIALECT_DIST_TRANSFORMS_PASSENUMS_H
