//===- MPIMemoryEffects.cpp - What mpi ops do to their buffers ------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// MLIR 22's mpi ops declare no memory effects, so upstream passes must
// assume the worst of them; ownership-based buffer deallocation refuses
// such ops outright. These external models say what MPI does: a send reads
// its buffer, a receive writes its buffer, an all-reduce reads one and
// writes the other. Every effect is on the MPI library too (a global
// resource), so the ops are never reordered against each other or erased.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Conversion/MPIMemoryEffects.h"

#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {

/// Effects of an mpi op: `reads`/`writes` list its buffer operands; all of
/// them also read and write the default (global) resource: MPI state.
template <typename Op>
struct MPIEffects
    : public MemoryEffectOpInterface::ExternalModel<MPIEffects<Op>, Op> {
  void
  getEffects(Operation *op,
             SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                 &effects) const {
    auto mpiOp = cast<Op>(op);
    for (OpOperand *operand : readBuffers(mpiOp))
      effects.emplace_back(MemoryEffects::Read::get(), operand);
    for (OpOperand *operand : writtenBuffers(mpiOp))
      effects.emplace_back(MemoryEffects::Write::get(), operand);
    effects.emplace_back(MemoryEffects::Read::get());
    effects.emplace_back(MemoryEffects::Write::get());
  }

  static SmallVector<OpOperand *> readBuffers(Op op) {
    if constexpr (std::is_same_v<Op, mpi::SendOp> ||
                  std::is_same_v<Op, mpi::ISendOp>)
      return {&op.getRefMutable()};
    else if constexpr (std::is_same_v<Op, mpi::AllReduceOp>)
      return {&op.getSendbufMutable()};
    else
      return {};
  }
  static SmallVector<OpOperand *> writtenBuffers(Op op) {
    if constexpr (std::is_same_v<Op, mpi::RecvOp> ||
                  std::is_same_v<Op, mpi::IRecvOp>)
      return {&op.getRefMutable()};
    else if constexpr (std::is_same_v<Op, mpi::AllReduceOp>)
      return {&op.getRecvbufMutable()};
    else
      return {};
  }
};

} // namespace

void distir::registerMPIMemoryEffectModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, mpi::MPIDialect *) {
    mpi::SendOp::attachInterface<MPIEffects<mpi::SendOp>>(*ctx);
    mpi::ISendOp::attachInterface<MPIEffects<mpi::ISendOp>>(*ctx);
    mpi::RecvOp::attachInterface<MPIEffects<mpi::RecvOp>>(*ctx);
    mpi::IRecvOp::attachInterface<MPIEffects<mpi::IRecvOp>>(*ctx);
    mpi::AllReduceOp::attachInterface<MPIEffects<mpi::AllReduceOp>>(*ctx);
  });
}
