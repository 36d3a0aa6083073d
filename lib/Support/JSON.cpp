//===- JSON.cpp - Bounded JSON parsing ------------------------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Support/JSON.h"

#include "llvm/ADT/StringExtras.h"

using namespace llvm;

/// "line L, column C: " of byte `offset` of `text`.
static std::string positionOf(StringRef text, size_t offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column) +
         ": ";
}

/// llvm::json's "[3:14, byte=40]: Expected ..." as "line 3, column 14:
/// expected ...".
static std::string formatParseError(StringRef message) {
  std::string position;
  StringRef rest = message;
  if (rest.consume_front("[")) {
    auto [location, tail] = rest.split("]: ");
    auto [line, column] = location.split(", ").first.split(':');
    if (!tail.empty() && !line.empty() && !column.empty()) {
      position = ("line " + line + ", column " + column + ": ").str();
      message = tail;
    }
  }
  std::string text = message.str();
  if (!text.empty())
    text[0] = toLower(text[0]);
  return position + text;
}

bool distir::parseJSON(StringRef text, json::Value &result,
                       std::string &error) {
  // Nesting of arrays and objects outside strings, checked before the
  // recursive parser sees the document.
  unsigned depth = 0;
  bool inString = false;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJSONNesting) {
        error = positionOf(text, i) + "arrays and objects nested deeper than " +
                std::to_string(kMaxJSONNesting) + " levels";
        return false;
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  Expected<json::Value> parsed = json::parse(text);
  if (!parsed) {
    error = formatParseError(toString(parsed.takeError()));
    return false;
  }
  result = std::move(*parsed);
  return true;
}
