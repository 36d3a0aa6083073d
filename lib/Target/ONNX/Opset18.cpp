//===- Opset18.cpp - Opset-18 models for ONNX 1.12's checker --------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// The linked ONNX library (1.12) knows opsets up to 17, so its checker and
// shape inference cannot read an opset-18 model. The importer itself
// implements opset 18 (reductions with axes as an input, Split's
// num_outputs, Pad's axes, Mish, GroupNormalization, ...); only the checker
// and inference see the copy written here, in which every node is restated
// at opset 17 with the same output names. Where the restatement cannot
// carry a value (axes not constant at import, uneven num_outputs), it drops
// what opset 17 cannot express: ONNX's inference then leaves those outputs
// unknown, and the importer, which reads the original, decides.
//
//===----------------------------------------------------------------------===//

#include "Opset18.h"

#include "onnx/onnx_pb.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstring>
#include <optional>
#include <string>
#include <vector>

using namespace distir::onnx_import;

bool distir::onnx_import::isNewInOpset18(const std::string &op) {
  return llvm::is_contained({"Mish", "GroupNormalization", "BitwiseAnd",
                             "BitwiseNot", "BitwiseOr", "BitwiseXor",
                             "CenterCropPad", "Col2Im"},
                            op);
}

namespace {
bool isDefaultDomain(const std::string &domain) {
  return domain.empty() || domain == "ai.onnx";
}

/// The int64 values of `name` when an initializer or a Constant node holds
/// them, else nullopt.
std::optional<std::vector<int64_t>> constantInts(const onnx::GraphProto &g,
                                                 const std::string &name) {
  auto fromTensor =
      [](const onnx::TensorProto &t) -> std::optional<std::vector<int64_t>> {
    if (t.data_type() != onnx::TensorProto::INT64 ||
        t.data_location() == onnx::TensorProto::EXTERNAL)
      return std::nullopt;
    if (t.has_raw_data()) {
      const std::string &raw = t.raw_data();
      std::vector<int64_t> v(raw.size() / sizeof(int64_t));
      if (!v.empty())
        std::memcpy(v.data(), raw.data(), v.size() * sizeof(int64_t));
      return v;
    }
    return std::vector<int64_t>(t.int64_data().begin(), t.int64_data().end());
  };
  for (const onnx::TensorProto &t : g.initializer())
    if (t.name() == name)
      return fromTensor(t);
  for (const onnx::NodeProto &n : g.node()) {
    if (n.op_type() != "Constant" || !isDefaultDomain(n.domain()) ||
        !llvm::is_contained(n.output(), name))
      continue;
    for (const onnx::AttributeProto &a : n.attribute()) {
      if (a.name() == "value" && a.has_t())
        return fromTensor(a.t());
      if (a.name() == "value_ints")
        return std::vector<int64_t>(a.ints().begin(), a.ints().end());
    }
  }
  return std::nullopt;
}

void removeAttribute(onnx::NodeProto &n, const std::string &name) {
  auto *attrs = n.mutable_attribute();
  for (int i = attrs->size() - 1; i >= 0; --i)
    if (attrs->Get(i).name() == name)
      attrs->DeleteSubrange(i, 1);
}

const onnx::AttributeProto *findAttribute(const onnx::NodeProto &n,
                                          const std::string &name) {
  for (const onnx::AttributeProto &a : n.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

/// The domain of nodes ONNX's inference must not interpret (a custom
/// domain: the checker accepts its ops, inference leaves their outputs
/// unknown).
constexpr const char *kOpaqueDomain = "distir.opset18";

onnx::NodeProto opaque(const onnx::NodeProto &node) {
  onnx::NodeProto n = node;
  n.set_domain(kOpaqueDomain);
  n.clear_attribute();
  return n;
}

/// Drops inputs from `count` on.
void truncateInputs(onnx::NodeProto &n, int count) {
  while (n.input_size() > count)
    n.mutable_input()->RemoveLast();
}

onnx::NodeProto makeNode(const std::string &op, std::vector<std::string> ins,
                         std::vector<std::string> outs,
                         const std::string &name) {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name(name);
  for (std::string &in : ins)
    n.add_input(std::move(in));
  for (std::string &out : outs)
    n.add_output(std::move(out));
  return n;
}

/// Rewrites one opset-18 node into `out` (opset-17 nodes, same outputs).
void restate(const onnx::GraphProto &g, const onnx::NodeProto &node,
             std::vector<onnx::NodeProto> &out,
             std::vector<onnx::TensorProto> &initializers, unsigned &fresh) {
  const std::string &op = node.op_type();
  auto freshName = [&](const std::string &what) {
    return node.name() + "/opset17_" + what + "_" + std::to_string(fresh++);
  };
  onnx::NodeProto n = node;
  bool reduce = llvm::is_contained(
      {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
       "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSumSquare"},
      op);
  if (reduce) {
    // Axes became an input in opset 18; empty axes either reduce all or,
    // with noop_with_empty_axes, nothing.
    const onnx::AttributeProto *noop =
        findAttribute(node, "noop_with_empty_axes");
    bool noopOnEmpty = noop && noop->i() != 0;
    removeAttribute(n, "noop_with_empty_axes");
    std::optional<std::vector<int64_t>> axes = std::vector<int64_t>();
    if (node.input_size() > 1 && !node.input(1).empty())
      axes = constantInts(g, node.input(1));
    if (!axes) {
      // Known to the importer only (or not at all, which it reports).
      out.push_back(opaque(node));
      return;
    }
    truncateInputs(n, 1);
    if (!axes->empty()) {
      onnx::AttributeProto *a = n.add_attribute();
      a->set_name("axes");
      a->set_type(onnx::AttributeProto::INTS);
      for (int64_t v : *axes)
        a->add_ints(v);
    } else if (noopOnEmpty) {
      n.set_op_type("Identity");
      n.clear_attribute();
    }
    out.push_back(std::move(n));
    return;
  }
  // Split's num_outputs (an uneven last chunk has no opset-17 form), Pad's
  // axes (pads for some axes only), Resize's antialias, axes and
  // keep_aspect_ratio_policy: what ONNX 1.12 would infer without them could
  // be wrong, so it infers nothing. (LpPool, whose ceil_mode is new too, is
  // not implemented and is refused before the checker runs.)
  if ((op == "Split" && findAttribute(node, "num_outputs")) ||
      (op == "Pad" && node.input_size() > 3 && !node.input(3).empty()) ||
      (op == "Resize" &&
       (findAttribute(node, "antialias") || findAttribute(node, "axes") ||
        findAttribute(node, "keep_aspect_ratio_policy")))) {
    out.push_back(opaque(node));
    return;
  }
  // A malformed node keeps its arity for the importer's diagnostic, out of
  // ONNX's sight.
  if ((op == "Mish" && (node.input_size() < 1 || node.output_size() < 1)) ||
      (op == "GroupNormalization" &&
       (node.input_size() != 3 || node.output_size() < 1))) {
    out.push_back(opaque(node));
    return;
  }
  if (op == "Mish") {
    // Mish(x) = x * tanh(softplus(x)).
    std::string softplus = freshName("softplus"), tanh = freshName("tanh");
    out.push_back(
        makeNode("Softplus", {node.input(0)}, {softplus}, freshName("node")));
    out.push_back(makeNode("Tanh", {softplus}, {tanh}, freshName("node")));
    out.push_back(
        makeNode("Mul", {node.input(0), tanh}, {node.output(0)}, node.name()));
    return;
  }
  if (op == "GroupNormalization") {
    // [N, C, ...] -> [N, G, C/G * ...], normalized per (n, g) with the
    // per-group scale and bias (opset 18), back to the input's shape.
    const onnx::AttributeProto *groups = findAttribute(node, "num_groups");
    const onnx::AttributeProto *eps = findAttribute(node, "epsilon");
    onnx::TensorProto shape;
    shape.set_name(freshName("group_shape"));
    shape.set_data_type(onnx::TensorProto::INT64);
    shape.add_dims(3);
    shape.add_int64_data(0);
    shape.add_int64_data(groups ? groups->i() : 1);
    shape.add_int64_data(-1);
    std::string grouped = freshName("grouped"), normed = freshName("normed"),
                inShape = freshName("shape");
    out.push_back(makeNode("Reshape", {node.input(0), shape.name()}, {grouped},
                           freshName("node")));
    onnx::NodeProto norm = makeNode("InstanceNormalization",
                                    {grouped, node.input(1), node.input(2)},
                                    {normed}, freshName("node"));
    if (eps)
      *norm.add_attribute() = *eps;
    out.push_back(std::move(norm));
    out.push_back(
        makeNode("Shape", {node.input(0)}, {inShape}, freshName("node")));
    out.push_back(
        makeNode("Reshape", {normed, inShape}, {node.output(0)}, node.name()));
    initializers.push_back(std::move(shape));
    return;
  }
  out.push_back(std::move(n));
}
} // namespace

void distir::onnx_import::restateOpset18As17(onnx::ModelProto &model) {
  for (onnx::OperatorSetIdProto &o : *model.mutable_opset_import())
    if (isDefaultDomain(o.domain()) && o.version() == 18)
      o.set_version(17);
  onnx::OperatorSetIdProto *opaqueImport = model.add_opset_import();
  opaqueImport->set_domain(kOpaqueDomain);
  opaqueImport->set_version(1);
  onnx::GraphProto *g = model.mutable_graph();
  std::vector<onnx::NodeProto> nodes;
  std::vector<onnx::TensorProto> initializers;
  unsigned fresh = 0;
  for (const onnx::NodeProto &node : g->node()) {
    if (isDefaultDomain(node.domain()))
      restate(*g, node, nodes, initializers, fresh);
    else
      nodes.push_back(node);
  }
  g->clear_node();
  for (onnx::NodeProto &n : nodes)
    *g->add_node() = std::move(n);
  for (onnx::TensorProto &t : initializers)
    *g->add_initializer() = std::move(t);
}
