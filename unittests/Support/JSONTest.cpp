//===- JSONTest.cpp - Bounded JSON parsing --------------------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Support/JSON.h"

#include "gtest/gtest.h"

#include <string>

using namespace distir;

namespace {

std::string nested(unsigned depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

TEST(JSON, NestingUpToTheLimitParses) {
  llvm::json::Value value(nullptr);
  std::string error;
  EXPECT_TRUE(parseJSON(nested(kMaxJSONNesting), value, error)) << error;
  EXPECT_TRUE(parseJSON(R"({"a": {"b": [1, {"c": []}]}})", value, error));
}

TEST(JSON, NestingBeyondTheLimitIsOneError) {
  llvm::json::Value value(nullptr);
  std::string error;
  EXPECT_FALSE(parseJSON(nested(kMaxJSONNesting + 1), value, error));
  EXPECT_EQ(error, "line 1, column 65: arrays and objects nested deeper "
                   "than 64 levels");
  // The position counts lines and columns.
  EXPECT_FALSE(parseJSON("{\n  \"x\": " + nested(100), value, error));
  EXPECT_EQ(error.substr(0, 19), "line 2, column 71: ");
}

TEST(JSON, BracketsInStringsDoNotNest) {
  llvm::json::Value value(nullptr);
  std::string error;
  std::string deepString = "\"" + std::string(1000, '[') + "\\\"{\"";
  EXPECT_TRUE(parseJSON("[" + deepString + "]", value, error)) << error;
}

TEST(JSON, SyntaxErrorsHaveAPosition) {
  llvm::json::Value value(nullptr);
  std::string error;
  EXPECT_FALSE(parseJSON("{\n  \"a\": 1,\n}", value, error));
  EXPECT_EQ(error, "line 3, column 1: expected object key");
}

} // namespace
