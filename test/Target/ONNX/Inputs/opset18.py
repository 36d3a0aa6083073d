"""Opset-18 models (ONNX 1.12, linked by the importer, stops at opset 17):
what changed in opset 18, each with a reference computed here, and models
from plain torch.nn code raised to opset 18.

  opset18.py write OUT_DIR      writes NAME.onnx, NAME-input.npy and
                                NAME-expected.npy (or -expected_K.npy)
  opset18.py compare OUT_DIR NAME RUN_DIR
                                compares distir-run's outputs with the
                                references: one line per model

Torch 1.13 exports at most opset 17, so the torch.nn models are exported at
opset 13 and raised here the way opset 18 states the same computation:
reductions take their axes as an input, an even Split gives num_outputs
instead of sizes. The CNN is written node by node with the weights of a
torch module (Conv, GroupNorm without affine, Mish), because opset 18's
GroupNormalization and Mish have no exporter here.
"""
import io
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import TensorProto, helper

F = TensorProto.FLOAT
REDUCTIONS = ["ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
              "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd",
              "ReduceSumSquare"]


def model(nodes, inputs, outputs, inits=(), opset=18):
    g = helper.make_graph(
        nodes, "m", [helper.make_tensor_value_info(n, F, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        [onnx.numpy_helper.from_array(v, n) for n, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def mish(x):
    return x * np.tanh(np.log1p(np.exp(x)))


def group_norm(x, groups, scale, bias, eps=1e-5):
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1).astype(np.float64)
    y = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) +
                                                  eps)
    y = y * scale.reshape(1, groups, 1) + bias.reshape(1, groups, 1)
    return y.reshape(x.shape).astype(np.float32)


def hand_models(rng):
    """name -> (model, inputs {name: array}, expected [arrays])."""
    cases = {}
    x = rng.standard_normal((2, 3, 4)).astype(np.float32) * 3
    cases["mish"] = (model([helper.make_node("Mish", ["x"], ["y"])],
                           [("x", [2, 3, 4])], [("y", F, [2, 3, 4])]),
                     {"x": x}, [mish(x)])

    x = rng.standard_normal((2, 6, 4, 4)).astype(np.float32)
    scale = rng.standard_normal(3).astype(np.float32)
    bias = rng.standard_normal(3).astype(np.float32)
    cases["groupnorm"] = (
        model([helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"],
                                num_groups=3, epsilon=1e-5)],
              [("x", [2, 6, 4, 4])], [("y", F, [2, 6, 4, 4])],
              [("s", scale), ("b", bias)]),
        {"x": x}, [group_norm(x, 3, scale, bias)])

    # Reductions with axes as an input (initializer, Constant node, empty
    # with and without noop_with_empty_axes, absent).
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    pos = np.abs(x) + 0.5
    big = x + 200
    nodes = [
        helper.make_node("Constant", [], ["neg"],
                         value=onnx.numpy_helper.from_array(
                             np.array([-1], np.int64))),
        helper.make_node("ReduceMax", ["x", "a1"], ["max"], keepdims=0),
        helper.make_node("ReduceMean", ["x", "neg"], ["mean"]),
        helper.make_node("ReduceMin", ["x", "none"], ["min"], keepdims=0),
        helper.make_node("ReduceProd", ["x", "none"], ["same"], keepdims=0,
                         noop_with_empty_axes=1),
        helper.make_node("ReduceSumSquare", ["x"], ["sq"], keepdims=1),
        helper.make_node("ReduceL2", ["x", "a02"], ["l2"], keepdims=0),
        helper.make_node("ReduceL1", ["x", "a1"], ["l1"]),
        helper.make_node("ReduceLogSum", ["pos", "a1"], ["ls"], keepdims=0),
        helper.make_node("ReduceLogSumExp", ["big", "a02"], ["lse"],
                         keepdims=0),
    ]
    cases["reduce"] = (
        model(nodes, [("x", [2, 3, 4]), ("pos", [2, 3, 4]), ("big", [2, 3, 4])],
              [("max", F, [2, 4]), ("mean", F, [2, 3, 1]), ("min", F, []),
               ("same", F, [2, 3, 4]), ("sq", F, [1, 1, 1]),
               ("l2", F, [3]), ("l1", F, [2, 1, 4]), ("ls", F, [2, 4]),
               ("lse", F, [3])],
              [("a1", np.array([1], np.int64)),
               ("none", np.zeros(0, np.int64)),
               ("a02", np.array([0, 2], np.int64))]),
        {"x": x, "pos": pos, "big": big},
        [x.max(1), x.mean(-1, keepdims=True), np.array(x.min()), x,
         (x * x).sum().reshape(1, 1, 1),
         np.sqrt((x * x).sum((0, 2))), np.abs(x).sum(1, keepdims=True),
         np.log(pos.sum(1)),
         # exp(200) overflows float32: only a shifted sum gets this right.
         big.max((0, 2)) + np.log(np.exp(
             big.astype(np.float64) - big.max((0, 2), keepdims=True)).sum(
                 (0, 2)))])

    # Split by num_outputs (the last chunk smaller), Pad on some axes,
    # ScatterElements with max.
    x = rng.standard_normal((2, 7)).astype(np.float32)
    data = rng.standard_normal((3, 3)).astype(np.float32)
    idx = np.array([[0, 1, 2], [2, 0, 1]], np.int64)
    upd = rng.standard_normal((2, 3)).astype(np.float32) * 3
    scattered = data.copy()
    for i in range(2):
        for j in range(3):
            scattered[idx[i, j], j] = max(scattered[idx[i, j], j], upd[i, j])
    cases["shapes"] = (
        model([helper.make_node("Split", ["x"], ["s0", "s1", "s2"], axis=1,
                                num_outputs=3),
               helper.make_node("Pad", ["x", "pads", "", "axes"], ["p"]),
               helper.make_node("ScatterElements", ["d", "i", "u"], ["sc"],
                                axis=0, reduction="max")],
              [("x", [2, 7]), ("d", [3, 3]), ("u", [2, 3])],
              [("s0", F, [2, 3]), ("s1", F, [2, 3]), ("s2", F, [2, 1]),
               ("p", F, [2, 10]), ("sc", F, [3, 3])],
              [("pads", np.array([1, 2], np.int64)),
               ("axes", np.array([-1], np.int64)), ("i", idx)]),
        {"x": x, "d": data, "u": upd},
        [x[:, :3], x[:, 3:6], x[:, 6:], np.pad(x, ((0, 0), (1, 2))),
         scattered])
    return cases


def error_models():
    """name -> model whose import must fail with one line."""
    r = lambda **a: model(
        [helper.make_node("Resize", ["x", "", "sc"], ["y"], **a)],
        [("x", [1, 1, 2, 2])], [("y", F, [1, 1, 4, 4])],
        [("sc", np.array([1, 1, 2, 2], np.float32))])
    return {
        "resize-antialias": r(mode="linear", antialias=1),
        "resize-policy": r(keep_aspect_ratio_policy="not_larger"),
        "reduce-runtime-axes": model(
            [helper.make_node("ReduceMax", ["x", "a"], ["y"])],
            [("x", [2, 3]), ("a", [1])], [("y", F, [2])]),
        "groupnorm-groups": model(
            [helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"],
                              num_groups=4)],
            [("x", [1, 6, 2])], [("y", F, [1, 6, 2])],
            [("s", np.ones(4, np.float32)), ("b", np.zeros(4, np.float32))]),
        "groupnorm-scale": model(
            [helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"],
                              num_groups=2)],
            [("x", [1, 6, 2])], [("y", F, [1, 6, 2])],
            [("s", np.ones(6, np.float32)), ("b", np.zeros(6, np.float32))]),
        "opset-19": model([helper.make_node("Relu", ["x"], ["y"])],
                          [("x", [2])], [("y", F, [2])], opset=19),
        "new-ops": model(
            [helper.make_node("BitwiseAnd", ["a", "b"], ["c"], name="and0"),
             helper.make_node("BitwiseAnd", ["c", "b"], ["d"]),
             helper.make_node("CenterCropPad", ["d", "shape"], ["y"])],
            [("a", [4]), ("b", [4])], [("y", F, [2])],
            [("shape", np.array([2], np.int64))]),
    }


def raise_to_opset18(m):
    """A torch export at opset 13 stated at opset 18: reductions other than
    ReduceSum take their axes as an input, an even Split num_outputs."""
    g = m.graph
    shapes = {}
    inferred = onnx.shape_inference.infer_shapes(m)
    for vi in list(inferred.graph.value_info) + list(inferred.graph.input):
        t = vi.type.tensor_type
        if t.HasField("shape"):
            shapes[vi.name] = [d.dim_value for d in t.shape.dim]
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in g.initializer}
    consts = {n.output[0]: onnx.numpy_helper.to_array(n.attribute[0].t)
              for n in g.node if n.op_type == "Constant"}
    changed = {"reductions": 0, "splits": 0}
    for k, n in enumerate(g.node):
        if n.op_type in REDUCTIONS:
            axes = [a for a in n.attribute if a.name == "axes"]
            if axes:
                name = f"opset18_axes_{k}"
                g.initializer.append(onnx.numpy_helper.from_array(
                    np.array(axes[0].ints, np.int64), name))
                n.attribute.remove(axes[0])
                n.input.append(name)
                changed["reductions"] += 1
        if n.op_type == "Split" and len(n.input) == 2:
            sizes = inits.get(n.input[1], consts.get(n.input[1]))
            if sizes is not None and len(set(sizes.tolist())) == 1:
                del n.input[1]
                n.attribute.append(helper.make_attribute(
                    "num_outputs", len(n.output)))
                changed["splits"] += 1
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = 18
    m.ir_version = 8
    return m, changed


def torch_models(rng):
    import torch
    torch.manual_seed(0)
    cases = {}

    class Encoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            layer = torch.nn.TransformerEncoderLayer(
                16, 4, 32, dropout=0.0, batch_first=True)
            self.enc = torch.nn.TransformerEncoder(layer, 2)

        def forward(self, x):
            y = self.enc(x)
            a, b = torch.chunk(y, 2, dim=-1)
            return a * torch.sigmoid(b)

    class CNN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.gn = torch.nn.GroupNorm(4, 8, affine=False)
            self.c2 = torch.nn.Conv2d(8, 4, 3)

        def forward(self, x):
            y = self.c2(torch.nn.functional.mish(self.gn(self.c1(x))))
            return y.amax(dim=(2, 3))

    enc = Encoder().eval()
    x = torch.randn(2, 5, 16)
    buf = io.BytesIO()
    torch.onnx.export(enc, (x,), buf, input_names=["x"], output_names=["y"],
                      opset_version=13)
    m, changed = raise_to_opset18(onnx.load_from_string(buf.getvalue()))
    with torch.no_grad():
        cases["torch_encoder"] = (m, {"x": x.numpy()},
                                  [enc(x).numpy()], changed)

    cnn = CNN().eval()
    x = torch.randn(4, 3, 8, 8)
    w = {k: v.detach().numpy() for k, v in cnn.state_dict().items()}
    nodes = [
        helper.make_node("Conv", ["x", "c1.weight", "c1.bias"], ["h1"],
                         pads=[1, 1, 1, 1]),
        helper.make_node("GroupNormalization", ["h1", "gs", "gb"], ["h2"],
                         num_groups=4, epsilon=cnn.gn.eps),
        helper.make_node("Mish", ["h2"], ["h3"]),
        helper.make_node("Conv", ["h3", "c2.weight", "c2.bias"], ["h4"]),
        helper.make_node("ReduceMax", ["h4", "hw"], ["y"], keepdims=0),
    ]
    inits = [(k, v) for k, v in w.items()] + [
        ("gs", np.ones(4, np.float32)), ("gb", np.zeros(4, np.float32)),
        ("hw", np.array([2, 3], np.int64))]
    m = model(nodes, [("x", [4, 3, 8, 8])], [("y", F, [4, 4])], inits)
    with torch.no_grad():
        cases["torch_cnn"] = (m, {"x": x.numpy()}, [cnn(x).numpy()], None)
    return cases


def write(out):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(18)
    for name, (m, inputs, expected) in hand_models(rng).items():
        onnx.save(m, os.path.join(out, name + ".onnx"))
        for k, v in inputs.items():
            np.save(os.path.join(out, f"{name}-{k}.npy"), v)
        for i, e in enumerate(expected):
            np.save(os.path.join(out, f"{name}-expected_{i}.npy"),
                    np.asarray(e, np.float32))
    for name, m in error_models().items():
        onnx.save(m, os.path.join(out, name + ".onnx"))
    for name, (m, inputs, expected, changed) in torch_models(rng).items():
        onnx.save(m, os.path.join(out, name + ".onnx"))
        for k, v in inputs.items():
            np.save(os.path.join(out, f"{name}-{k}.npy"), v)
        for i, e in enumerate(expected):
            np.save(os.path.join(out, f"{name}-expected_{i}.npy"), e)
        if changed:
            print(f"{name}: raised to opset 18: {changed['reductions']} "
                  f"reductions with axes inputs, {changed['splits']} "
                  "num_outputs splits")


def compare(out, name, run_dir):
    i, ok, worst = 0, True, 0.0
    while os.path.exists(os.path.join(out, f"{name}-expected_{i}.npy")):
        e = np.load(os.path.join(out, f"{name}-expected_{i}.npy"))
        a = np.load(os.path.join(run_dir, f"output_{i}.npy"))
        if a.shape != e.shape:
            print(f"{name}: output {i} has shape {a.shape}, expected "
                  f"{e.shape}")
            return
        err = float(np.max(np.abs(a - e)) / max(np.max(np.abs(e)), 1e-30))
        worst = max(worst, err)
        ok &= err <= 1e-4
        i += 1
    print(f"{name}: {i} outputs, relative error {worst:.1e}: {ok and i > 0}")


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        compare(sys.argv[2], sys.argv[3], sys.argv[4])
