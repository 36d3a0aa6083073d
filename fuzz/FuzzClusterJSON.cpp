//===- FuzzClusterJSON.cpp - libFuzzer harness: cluster JSON
//---------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Parses the input as a cluster description; a parsed cluster must
// serialize and parse back to itself.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Cluster/Cluster.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto ignore = [](const llvm::Twine &) {};
  mlir::FailureOr<distir::Cluster> cluster = distir::parseClusterJSON(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), ignore);
  if (mlir::failed(cluster))
    return 0;
  std::string text =
      llvm::formatv("{0}", distir::clusterToJSON(*cluster)).str();
  mlir::FailureOr<distir::Cluster> again =
      distir::parseClusterJSON(text, ignore);
  if (mlir::failed(again) ||
      llvm::formatv("{0}", distir::clusterToJSON(*again)).str() != text)
    std::abort(); // the round trip of a valid cluster must hold
  return 0;
}
