//===- ONNXChecker.cpp - Exception-safe ONNX checker/inference ------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Compiled with -fexceptions (see CMakeLists.txt): nothing thrown by the ONNX
// library may escape this file.
//
//===----------------------------------------------------------------------===//

#include "ONNXChecker.h"

#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

#include <algorithm>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

using namespace distir::onnx_import;

/// First line of `msg`, so that every diagnostic stays on one line, without
/// a trailing period (diagnostic style).
static std::string firstLine(const std::string &msg) {
  std::string line = msg.substr(0, msg.find('\n'));
  while (!line.empty() &&
         (line.back() == ' ' || line.back() == '\r' || line.back() == '.'))
    line.pop_back();
  return line.empty() ? std::string("unknown error") : line;
}

/// A cycle of model-local functions calling each other ("d.f -> d.g ->
/// d.f"), or empty. ONNX's shape inference expands function calls without a
/// depth limit: a recursive function overflows its stack.
static std::string functionCycle(const onnx::ModelProto &model) {
  std::map<std::string, const onnx::FunctionProto *> functions;
  for (const onnx::FunctionProto &f : model.functions())
    functions[f.domain() + "." + f.name()] = &f;
  std::map<std::string, int> state; // 1: on the DFS path, 2: done
  std::vector<std::string> path;
  std::string cycle;
  std::function<bool(const std::string &)> visit = [&](const std::string &f) {
    state[f] = 1;
    path.push_back(f);
    for (const onnx::NodeProto &node : functions[f]->node()) {
      std::string callee = node.domain() + "." + node.op_type();
      if (!functions.count(callee))
        continue;
      if (state[callee] == 1) {
        auto from = std::find(path.begin(), path.end(), callee);
        for (auto it = from; it != path.end(); ++it)
          cycle += *it + " -> ";
        cycle += callee;
        return true;
      }
      if (state[callee] == 0 && visit(callee))
        return true;
    }
    path.pop_back();
    state[f] = 2;
    return false;
  };
  for (auto &[name, f] : functions)
    if (state[name] == 0 && visit(name))
      break;
  return cycle;
}

std::string distir::onnx_import::checkModel(const onnx::ModelProto &model) {
  if (std::string cycle = functionCycle(model); !cycle.empty())
    return "model-local functions call each other recursively (" + cycle +
           "); recursion is not supported";
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    return firstLine(e.what());
  } catch (...) {
    return "unknown exception";
  }
  return {};
}

namespace {
/// ONNX 1.12's shape inference of a few ops reads input dims it never checked
/// exist (SIGSEGV, found by fuzz/): Conv and ConvTranspose whose X has fewer
/// than 3 dims or not as many as W, LayerNormalization of a scalar with Mean or
/// InvStdDev requested. This registry hands out copies of their schemas whose
/// inference checks those ranks first and otherwise fails like any inference
/// error (the node's outputs stay unknown); the importer then reports the rank
/// at the node. It guards every place inference runs: the graph, subgraphs and
/// model-local functions, declared or computed ranks alike.
class GuardedSchemaRegistry final : public onnx::ISchemaRegistry {
public:
  const onnx::OpSchema *GetSchema(const std::string &key,
                                  const int maxInclusiveVersion,
                                  const std::string &domain) const override {
    const onnx::OpSchema *schema =
        onnx::OpSchemaRegistry::Schema(key, maxInclusiveVersion, domain);
    if (!schema || (domain != onnx::ONNX_DOMAIN && domain != "ai.onnx"))
      return schema;
    std::function<void(onnx::InferenceContext &)> guard;
    if (key == "Conv" || key == "ConvTranspose")
      guard = checkConvRanks;
    else if (key == "LayerNormalization")
      guard = checkLayerNormRank;
    else
      return schema;
    std::lock_guard<std::mutex> lock(mutex);
    std::unique_ptr<onnx::OpSchema> &copy = guarded[schema];
    if (!copy) {
      copy = std::make_unique<onnx::OpSchema>(*schema);
      onnx::InferenceFunction inner =
          schema->GetTypeAndShapeInferenceFunction();
      copy->TypeAndShapeInferenceFunction(
          [guard, inner](onnx::InferenceContext &ctx) {
            guard(ctx);
            if (inner)
              inner(ctx);
          });
    }
    return copy.get();
  }

private:
  static int inputRank(onnx::InferenceContext &ctx, size_t i) {
    return i < ctx.getNumInputs() && onnx::hasInputShape(ctx, i)
               ? ctx.getInputType(i)->tensor_type().shape().dim_size()
               : -1;
  }
  static void checkConvRanks(onnx::InferenceContext &ctx) {
    int x = inputRank(ctx, 0), w = inputRank(ctx, 1);
    if ((x >= 0 && x < 3) || (x >= 0 && w >= 0 && x != w))
      fail_shape_inference("X (rank ", x, ") and W (rank ", w,
                           ") need the same rank >= 3");
  }
  static void checkLayerNormRank(onnx::InferenceContext &ctx) {
    if (ctx.getNumOutputs() > 1 && inputRank(ctx, 0) == 0)
      fail_shape_inference("X is a scalar");
  }

  mutable std::mutex mutex;
  mutable std::map<const onnx::OpSchema *, std::unique_ptr<onnx::OpSchema>>
      guarded;
};
} // namespace

std::string distir::onnx_import::inferShapes(onnx::ModelProto &model) {
  static const GuardedSchemaRegistry registry;
  try {
    onnx::ShapeInferenceOptions options(/*check_type_val=*/false,
                                        /*strict_mode_val=*/0,
                                        /*data_prop_val=*/true);
    onnx::shape_inference::InferShapes(model, &registry, options);
  } catch (const std::exception &e) {
    return firstLine(e.what());
  } catch (...) {
    return "unknown exception";
  }
  return {};
}

std::string distir::onnx_import::checkSchema(const std::string &opType,
                                             const std::string &domain,
                                             int opset) {
  try {
    if (!onnx::OpSchemaRegistry::Schema(opType, opset, domain))
      return "no schema for this op at opset " + std::to_string(opset);
  } catch (const std::exception &e) {
    return firstLine(e.what());
  } catch (...) {
    return "unknown exception";
  }
  return {};
}

int distir::onnx_import::schemaSinceVersion(const std::string &opType,
                                            int opset) {
  try {
    if (const onnx::OpSchema *s =
            onnx::OpSchemaRegistry::Schema(opType, opset, ""))
      return s->since_version();
  } catch (...) {
  }
  return 0;
}

int distir::onnx_import::maxOpset() {
  try {
    const auto &map =
        onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    auto it = map.find(onnx::ONNX_DOMAIN);
    if (it != map.end())
      return it->second.second;
  } catch (...) {
  }
  return 0;
}
