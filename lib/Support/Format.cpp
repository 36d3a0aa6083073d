//===- Format.cpp - Human-readable quantities in DistIR's reports ---------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Support/Format.h"

#include "llvm/Support/FormatVariadic.h"

std::string distir::formatSeconds(double seconds) {
  if (seconds >= 1)
    return llvm::formatv("{0:f3} s", seconds).str();
  if (seconds >= 1e-3)
    return llvm::formatv("{0:f3} ms", seconds * 1e3).str();
  return llvm::formatv("{0:f3} us", seconds * 1e6).str();
}
