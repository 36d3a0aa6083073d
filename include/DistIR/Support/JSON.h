//===- JSON.h - Bounded JSON parsing for DistIR's input files ---*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Cluster descriptions and calibrations are JSON files users write or
// generate. llvm::json::parse recurses once per nesting level, so a hostile
// document ([[[[...]]]] a million deep, also inside a value) overflowed the
// stack. parseJSON refuses documents nested deeper than any DistIR format
// needs before parsing, and reports parse errors as "line L, column C:
// message".
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_SUPPORT_JSON_H
#define DISTIR_SUPPORT_JSON_H

#include "llvm/Support/JSON.h"

#include <string>

namespace distir {

/// Arrays and objects nested deeper than this are refused (DistIR's formats
/// nest at most 5 levels).
constexpr unsigned kMaxJSONNesting = 64;

/// Parses `text`. On failure returns false and sets `error` to one line:
/// "line L, column C: ..." (1-based), e.g. for nesting beyond
/// kMaxJSONNesting or a syntax error.
bool parseJSON(llvm::StringRef text, llvm::json::Value &result,
               std::string &error);

} // namespace distir

#endif // DISTIR_SUPPORT_JSON_H
