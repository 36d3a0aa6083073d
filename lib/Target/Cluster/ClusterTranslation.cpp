//===- ClusterTranslation.cpp - Cluster JSON <-> MLIR
//-----------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Target/Cluster/ClusterTranslation.h"
#include "DistIR/Dialect/Dist/IR/DistCluster.h"
#include "DistIR/Dialect/Dist/IR/DistDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace distir;

static OwningOpRef<Operation *> importClusterJSON(llvm::SourceMgr &sourceMgr,
                                                  MLIRContext *context) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  Location loc = FileLineColLoc::get(context, buffer->getBufferIdentifier(),
                                     /*line=*/1, /*column=*/1);
  context->loadDialect<dist::DistDialect>();
  FailureOr<Cluster> cluster = parseClusterJSON(
      buffer->getBuffer(), [&](const Twine &msg) { emitError(loc) << msg; });
  if (failed(cluster))
    return {};
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  (*module)->setAttr(dist::DistDialect::getClusterAttrName(),
                     dist::clusterToAttr(context, *cluster));
  return OwningOpRef<Operation *>(module.release());
}

static LogicalResult exportClusterJSON(Operation *op, raw_ostream &os) {
  auto module = dyn_cast<ModuleOp>(op);
  dist::ClusterAttr attr = module ? dist::getModuleCluster(module) : nullptr;
  if (!attr)
    return emitError(op->getLoc())
           << "no '" << dist::DistDialect::getClusterAttrName()
           << "' attribute to export";
  os << llvm::formatv("{0:2}", clusterToJSON(dist::clusterFromAttr(attr)))
     << "\n";
  return success();
}

void distir::registerClusterTranslations(
    void (*registerDialects)(DialectRegistry &)) {
  static void (*extraDialects)(DialectRegistry &) = registerDialects;
  static TranslateToMLIRRegistration importReg(
      "import-cluster-json",
      "Import a cluster JSON file as a module carrying dist.cluster",
      importClusterJSON,
      [](DialectRegistry &registry) { registry.insert<dist::DistDialect>(); });
  static TranslateFromMLIRRegistration exportReg(
      "export-cluster-json", "Export a module's dist.cluster as JSON",
      exportClusterJSON, [](DialectRegistry &registry) {
        registry.insert<dist::DistDialect>();
        if (extraDialects)
          extraDialects(registry);
      });
}
