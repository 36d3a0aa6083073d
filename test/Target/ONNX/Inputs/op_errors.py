"""Writes small models that the importer must refuse, one per error path of
Clip, Trilu, CumSum, ArgMax, Tile, OneHot, GatherElements,
InstanceNormalization, Einsum, Celu, ConvTranspose, Pad, Resize, LSTM,
GRU, TopK, ScatterElements, ScatterND and NonZero: OUT_DIR/<name>.onnx for each name
printed (one per line). Saved unchecked: several are invalid ONNX on
purpose (the importer's checks must hold whatever ONNX's inference says).

usage: op_errors.py OUT_DIR
       op_errors.py --check DISTIR_TRANSLATE OUT_DIR
the second form imports each and prints 'NAME: exit S, L line(s): MESSAGE'
(MESSAGE without the file position and 'error: ').
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def model(name, nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, name,
                          [helper.make_tensor_value_info(n, t, s)
                           for n, t, s in inputs],
                          [helper.make_tensor_value_info(n, t, s)
                           for n, t, s in outputs],
                          [numpy_helper.from_array(np.asarray(v), n)
                           for n, v in inits])
    return helper.make_model(
        g, opset_imports=[helper.make_operatorsetid("", opset)])


def const(name, values):
    """A Constant node (exporters write shape operands this way; float
    initializers are weights)."""
    return helper.make_node("Constant", [], [name], name=name + "_const",
                            value=numpy_helper.from_array(np.asarray(values),
                                                          name))


def node(op, ins, outs=("y",), **attrs):
    return helper.make_node(op, list(ins), list(outs), name=op.lower(),
                            **attrs)


CASES = {
    "clip-int-opset6": model(
        "m", [node("Clip", ["x"], min=0.0, max=1.0)],
        [("x", TensorProto.INT32, [2])], [("y", TensorProto.INT32, [2])],
        opset=6),
    "clip-min-type": model(
        "m", [node("Clip", ["x", "lo"])], [("x", F, [2])], [("y", F, [2])],
        inits=[("lo", np.array(0, np.int64))]),
    "clip-min-shape": model(
        "m", [node("Clip", ["x", "lo"])], [("x", F, [2])], [("y", F, [2])],
        inits=[("lo", np.zeros(2, np.float32))]),
    "trilu-rank1": model(
        "m", [node("Trilu", ["x"])], [("x", F, [3])], [("y", F, [3])]),
    "trilu-k-vector": model(
        "m", [node("Trilu", ["x", "k"])], [("x", F, [3, 3])],
        [("y", F, [3, 3])], inits=[("k", np.array([1, 2], np.int64))]),
    "cumsum-axis-input": model(
        "m", [node("CumSum", ["x", "axis"])],
        [("x", F, [3]), ("axis", I64, [])], [("y", F, [3])]),
    "cumsum-bool": model(
        "m", [node("CumSum", ["x", "axis"])], [("x", B, [3])],
        [("y", B, [3])], inits=[("axis", np.array(0, np.int64))]),
    "argmax-axis": model(
        "m", [node("ArgMax", ["x"], axis=2)], [("x", F, [2, 3])],
        [("y", I64, [1, 3])]),
    "argmax-empty": model(
        "m", [node("ArgMax", ["x"], axis=1)], [("x", F, [2, 0])],
        [("y", I64, [2, 1])]),
    "tile-repeats-length": model(
        "m", [node("Tile", ["x", "r"])], [("x", F, [2, 3])],
        [("y", F, [4, 3])], inits=[("r", np.array([2], np.int64))]),
    "tile-negative": model(
        "m", [node("Tile", ["x", "r"])], [("x", F, [2])], [("y", F, ["n"])],
        inits=[("r", np.array([-1], np.int64))]),
    "tile-huge": model(
        "m", [node("Tile", ["x", "r"])], [("x", F, [4])], [("y", F, ["n"])],
        inits=[("r", np.array([2 ** 62], np.int64))]),
    "onehot-depth-zero": model(
        "m", [node("OneHot", ["i", "d", "v"])], [("i", I64, [2])],
        [("y", F, [2, 1])], inits=[("d", np.array(0, np.int64)),
                                   ("v", np.array([0, 1], np.float32))]),
    "onehot-values-shape": model(
        "m", [node("OneHot", ["i", "d", "v"])], [("i", I64, [2])],
        [("y", F, [2, 3])], inits=[("d", np.array(3, np.int64)),
                                   ("v", np.array([0, 1, 2], np.float32))]),
    "gatherelements-rank": model(
        "m", [node("GatherElements", ["x", "i"])],
        [("x", F, [2, 3]), ("i", I64, [2])], [("y", F, [2])]),
    "gatherelements-index": model(
        "m", [node("GatherElements", ["x", "i"], axis=1)],
        [("x", F, [2, 3])], [("y", F, [2, 1])],
        inits=[("i", np.array([[0], [3]], np.int64))]),
    "instancenorm-rank": model(
        "m", [node("InstanceNormalization", ["x", "s", "b"])],
        [("x", F, [2, 3])], [("y", F, [2, 3])],
        inits=[("s", np.ones(3, np.float32)), ("b", np.zeros(3, np.float32))]),
    "instancenorm-scale": model(
        "m", [node("InstanceNormalization", ["x", "s", "b"])],
        [("x", F, [2, 3, 4])], [("y", F, [2, 3, 4])],
        inits=[("s", np.ones(2, np.float32)), ("b", np.zeros(3, np.float32))]),
    "einsum-terms": model(
        "m", [node("Einsum", ["a", "b"], equation="ij->i")],
        [("a", F, [2, 3]), ("b", F, [3])], [("y", F, [2])]),
    "einsum-character": model(
        "m", [node("Einsum", ["a"], equation="i1->i")], [("a", F, [2, 3])],
        [("y", F, [2])]),
    "einsum-rank": model(
        "m", [node("Einsum", ["a"], equation="ijk->i")], [("a", F, [2, 3])],
        [("y", F, [2])]),
    "einsum-sizes": model(
        "m", [node("Einsum", ["a", "b"], equation="ij,ij->i")],
        [("a", F, [2, 3]), ("b", F, [2, 4])], [("y", F, [2])]),
    "einsum-output-twice": model(
        "m", [node("Einsum", ["a"], equation="ij->ii")], [("a", F, [2, 2])],
        [("y", F, [2, 2])]),
    "einsum-output-unknown": model(
        "m", [node("Einsum", ["a"], equation="ij->k")], [("a", F, [2, 2])],
        [("y", F, [2])]),
    "einsum-two-ellipses": model(
        "m", [node("Einsum", ["a"], equation="......->")],
        [("a", F, [2, 2])], [("y", F, [])]),
    "convtranspose-channels": model(
        "m", [node("ConvTranspose", ["x", "w"])], [("x", F, [1, 3, 4, 4])],
        [("y", F, ["a", "b", "c", "d"])],
        inits=[("w", np.zeros((2, 2, 3, 3), np.float32))]),
    "convtranspose-output-padding": model(
        "m", [node("ConvTranspose", ["x", "w"], strides=[2, 2],
                   output_padding=[2, 0])], [("x", F, [1, 2, 4, 4])],
        [("y", F, ["a", "b", "c", "d"])],
        inits=[("w", np.zeros((2, 2, 3, 3), np.float32))]),
    "convtranspose-pads": model(
        "m", [node("ConvTranspose", ["x", "w"], pads=[3, 0, 3, 0])],
        [("x", F, [1, 2, 2, 2])], [("y", F, ["a", "b", "c", "d"])],
        inits=[("w", np.zeros((2, 2, 3, 3), np.float32))]),
    "convtranspose-auto-pad": model(
        "m", [node("ConvTranspose", ["x", "w"], auto_pad="SIDEWAYS")],
        [("x", F, [1, 2, 2, 2])], [("y", F, ["a", "b", "c", "d"])],
        inits=[("w", np.zeros((2, 2, 3, 3), np.float32))]),
    "pad-mode": model(
        "m", [node("Pad", ["x", "p"], mode="wrap")], [("x", F, [2])],
        [("y", F, ["n"])], inits=[("p", np.array([1, 1], np.int64))]),
    "pad-count": model(
        "m", [node("Pad", ["x", "p"])], [("x", F, [2, 2])],
        [("y", F, ["n", "m"])], inits=[("p", np.array([1, 1], np.int64))]),
    "pad-crop": model(
        "m", [node("Pad", ["x", "p"])], [("x", F, [2])], [("y", F, ["n"])],
        inits=[("p", np.array([-2, -1], np.int64))]),
    "pad-reflect-wide": model(
        "m", [node("Pad", ["x", "p"], mode="reflect")], [("x", F, [2])],
        [("y", F, ["n"])], inits=[("p", np.array([2, 0], np.int64))]),
    "resize-no-scales": model(
        "m", [node("Resize", ["x", "", ""])], [("x", F, [1, 1, 2, 2])],
        [("y", F, ["a", "b", "c", "d"])], opset=13),
    "resize-scales-count": model(
        "m", [const("s", np.array([1, 2], np.float32)),
              node("Resize", ["x", "", "s"])], [("x", F, [1, 1, 2, 2])],
        [("y", F, ["a", "b", "c", "d"])],
        opset=13),
    "resize-scale-zero": model(
        "m", [const("s", np.array([1, 1, 0, 2], np.float32)),
              node("Resize", ["x", "", "s"])], [("x", F, [1, 1, 2, 2])],
        [("y", F, ["a", "b", "c", "d"])],
        opset=13),
    "resize-coordinate-mode": model(
        "m", [const("s", np.array([1, 1, 2, 2], np.float32)),
              node("Resize", ["x", "", "s"],
                   coordinate_transformation_mode="sideways")],
        [("x", F, [1, 1, 2, 2])], [("y", F, ["a", "b", "c", "d"])],
        opset=13),
    "resize-crop-no-roi": model(
        "m", [const("s", np.array([1, 1, 2, 2], np.float32)),
              node("Resize", ["x", "", "s"],
                   coordinate_transformation_mode="tf_crop_and_resize")],
        [("x", F, [1, 1, 2, 2])], [("y", F, ["a", "b", "c", "d"])],
        opset=13),
    "lstm-weights": model(
        "m", [node("LSTM", ["x", "w", "r"], ["y"], hidden_size=3)],
        [("x", F, [2, 1, 4])], [("y", F, [2, 1, 1, 3])],
        inits=[("w", np.zeros((1, 12, 5), np.float32)),
               ("r", np.zeros((1, 12, 3), np.float32))]),
    "lstm-activation": model(
        "m", [node("LSTM", ["x", "w", "r"], ["y"], hidden_size=3,
                   activations=["Sigmoid", "Softsign", "Tanh"])],
        [("x", F, [2, 1, 4])], [("y", F, [2, 1, 1, 3])],
        inits=[("w", np.zeros((1, 12, 4), np.float32)),
               ("r", np.zeros((1, 12, 3), np.float32))]),
    # ONNX 1.12's own inference crashed on these (fuzz/): a scalar X with
    # Mean requested, given or computed.
    "layernorm-scalar-input": model(
        "m", [node("LayerNormalization", ["x", "s", "b"], ["y", "mean"])],
        [("x", F, [])], [("y", F, []), ("mean", F, [])],
        inits=[("s", np.array(1, np.float32)), ("b", np.array(0, np.float32))]),
    "layernorm-scalar-computed": model(
        "m", [node("ReduceSum", ["x"], ["r"], keepdims=0),
              node("LayerNormalization", ["r", "s", "b"], ["y", "mean"])],
        [("x", F, [2, 4])], [("y", F, []), ("mean", F, [])],
        inits=[("s", np.array(1, np.float32)), ("b", np.array(0, np.float32))]),
    # Conv with X of fewer dims than W crashed ONNX 1.12's inference
    # (fuzz/); the ranks checked are the declared ones.
    "conv-rank2": model(
        "m", [node("Conv", ["x", "w"])], [("x", F, [1, 1])],
        [("y", F, [1, 1, 1, 1])],
        inits=[("w", np.ones((1, 1, 3, 3), np.float32))]),
    "conv-rank-mismatch": model(
        "m", [node("Conv", ["x", "w"])], [("x", F, [1, 1, 4])],
        [("y", F, [1, 1, 2, 2])],
        inits=[("w", np.ones((1, 1, 3, 3), np.float32))]),
    # The same with X's rank computed by the graph (Flatten: rank 2), which
    # no declared type shows: ONNX 1.12's inference of Conv and
    # ConvTranspose reads the missing dims (SIGSEGV).
    "conv-rank-computed": model(
        "m", [node("Flatten", ["x"], ["f"]), node("Conv", ["f", "w"])],
        [("x", F, [1, 1, 4, 4])], [("y", F, [1, 1, 1, 1])],
        inits=[("w", np.ones((1, 1, 3, 3), np.float32))]),
    "convtranspose-rank-computed": model(
        "m", [node("Flatten", ["x"], ["f"]),
              node("ConvTranspose", ["f", "w"])],
        [("x", F, [1, 1, 4, 4])], [("y", F, [1, 1, 1, 1])],
        inits=[("w", np.ones((1, 1, 3, 3), np.float32))]),
    # A scalar has no axis (Split indexed a missing dim: SIGSEGV, fuzz/).
    "split-scalar": model(
        "m", [node("Split", ["x"], ["a", "b"], axis=0)], [("x", F, [])],
        [("a", F, []), ("b", F, [])], opset=13),
    "lstm-sequence-too-long": model(
        "m", [node("LSTM", ["x", "w", "r", "", "lens"], ["y"],
                   hidden_size=3)],
        [("x", F, [2, 1, 4])], [("y", F, [2, 1, 1, 3])],
        inits=[("w", np.zeros((1, 12, 4), np.float32)),
               ("r", np.zeros((1, 12, 3), np.float32)),
               ("lens", np.array([3], np.int32))]),
    "lstm-sequence-lens-shape": model(
        "m", [node("LSTM", ["x", "w", "r", "", "lens"], ["y"],
                   hidden_size=3)],
        [("x", F, [2, 1, 4])], [("y", F, [2, 1, 1, 3])],
        inits=[("w", np.zeros((1, 12, 4), np.float32)),
               ("r", np.zeros((1, 12, 3), np.float32)),
               ("lens", np.array([2, 2], np.int32))]),
    "gru-initial-h": model(
        "m", [node("GRU", ["x", "w", "r", "", "", "h0"], ["y"],
                   hidden_size=3)],
        [("x", F, [2, 1, 4])], [("y", F, [2, 1, 1, 3])],
        inits=[("w", np.zeros((1, 9, 4), np.float32)),
               ("r", np.zeros((1, 9, 3), np.float32)),
               ("h0", np.zeros((1, 2, 3), np.float32))]),
    "topk-k": model(
        "m", [node("TopK", ["x", "k"], ["v", "i"])], [("x", F, [3])],
        [("v", F, ["n"]), ("i", I64, ["n"])],
        inits=[("k", np.array([4], np.int64))]),
    "scatter-reduction": model(
        "m", [node("ScatterElements", ["x", "i", "u"], reduction="sum")],
        [("x", F, [2, 3]), ("u", F, [2, 1])], [("y", F, [2, 3])],
        inits=[("i", np.array([[0], [1]], np.int64))], opset=16),
    "scatter-cover": model(
        "m", [node("ScatterElements", ["x", "i", "u"], axis=1)],
        [("x", F, [2, 3]), ("u", F, [1, 1])], [("y", F, [2, 3])],
        inits=[("i", np.array([[0]], np.int64))], opset=16),
    "scatter-index": model(
        "m", [node("ScatterElements", ["x", "i", "u"], axis=1)],
        [("x", F, [2, 3]), ("u", F, [2, 1])], [("y", F, [2, 3])],
        inits=[("i", np.array([[0], [3]], np.int64))], opset=16),
    "scatternd-updates": model(
        "m", [node("ScatterND", ["x", "i", "u"])],
        [("x", F, [4, 3]), ("u", F, [2, 2])], [("y", F, [4, 3])],
        inits=[("i", np.array([[0], [2]], np.int64))], opset=16),
    "nonzero-runtime": model(
        "m", [node("NonZero", ["x"])], [("x", F, [2, 3])],
        [("y", I64, [2, "n"])]),
    "topk-k-vector": model(
        "m", [node("TopK", ["x", "k"], ["v", "i"])], [("x", F, [3])],
        [("v", F, ["n"]), ("i", I64, ["n"])],
        inits=[("k", np.array([1, 2], np.int64))]),
    "convtranspose-output-shape": model(
        "m", [node("ConvTranspose", ["x", "w"], output_shape=[4, 4, 4])],
        [("x", F, [1, 2, 2, 2])], [("y", F, ["a", "b", "c", "d"])],
        inits=[("w", np.zeros((2, 2, 3, 3), np.float32))]),
    "pad-value-type": model(
        "m", [node("Pad", ["x", "p", "v"])], [("x", F, [2])],
        [("y", F, ["n"])], inits=[("p", np.array([1, 1], np.int64)),
                                  ("v", np.array(0, np.int64))]),
    "resize-nearest-mode": model(
        "m", [const("s", np.array([1, 1, 2, 2], np.float32)),
              node("Resize", ["x", "", "s"], nearest_mode="sideways")],
        [("x", F, [1, 1, 2, 2])], [("y", F, ["a", "b", "c", "d"])],
        opset=13),
    "resize-sizes": model(
        "m", [node("Resize", ["x", "", "", "z"])], [("x", F, [1, 1, 2, 2])],
        [("y", F, ["a", "b", "c", "d"])],
        inits=[("z", np.array([1, 1, 0, 4], np.int64))], opset=13),
    "celu-alpha-zero": model(
        "m", [node("Celu", ["x"], alpha=0.0)], [("x", F, [2])],
        [("y", F, [2])]),
}


def main():
    if sys.argv[1] == "--check":
        tool, out = sys.argv[2], sys.argv[3]
        for name in CASES:
            r = subprocess.run([tool, "--import-onnx",
                                os.path.join(out, name + ".onnx"), "-o",
                                os.devnull], capture_output=True, text=True,
                               timeout=60)
            lines = [l for l in r.stderr.splitlines() if l.strip()]
            message = lines[0].split("error: ", 1)[-1] if lines else ""
            print(f"{name}: exit {r.returncode}, {len(lines)} "
                  f"line{'s' if len(lines) != 1 else ''}: {message}")
        return
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, m in CASES.items():
        onnx.save(m, os.path.join(out, name + ".onnx"))
        print(name)


if __name__ == "__main__":
    main()
