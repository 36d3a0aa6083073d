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

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSwitch.h"

#include <optional>

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

/// The option name of a strategy value ("" for Send, Planned and Auto): the
/// name the resharding planner's symbolizeStrategy reads.
inline llvm::StringRef getPlannerStrategyName(StageTransfer t) {
  switch (t) {
  case StageTransfer::SendRecv:
    return "send-recv";
  case StageTransfer::LocalAllGather:
    return "local-allgather";
  case StageTransfer::GlobalAllGather:
    return "global-allgather";
  case StageTransfer::Broadcast:
    return "broadcast";
  case StageTransfer::Send:
  case StageTransfer::Planned:
    break;
  }
  return "";
}

/// The values by their option names (for tools that take them as strings).
inline std::optional<LossKind> symbolizeLossKind(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<LossKind>>(name)
      .Case("mse", LossKind::MSE)
      .Case("cross-entropy", LossKind::CrossEntropy)
      .Default(std::nullopt);
}
inline std::optional<OptimizerKind>
symbolizeOptimizerKind(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<OptimizerKind>>(name)
      .Case("sgd", OptimizerKind::SGD)
      .Case("momentum", OptimizerKind::Momentum)
      .Case("adam", OptimizerKind::Adam)
      .Case("adamw", OptimizerKind::AdamW)
      .Default(std::nullopt);
}
inline std::optional<ComputePrecision>
symbolizeComputePrecision(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ComputePrecision>>(name)
      .Case("f32", ComputePrecision::F32)
      .Case("f16", ComputePrecision::F16)
      .Case("bf16", ComputePrecision::BF16)
      .Default(std::nullopt);
}

} // namespace distir::dist

#endif // DISTIR_DIALECT_DIST_TRANSFORMS_PASSENUMS_H
