#!/usr/bin/python3
"""Writes the small hand-made ONNX fixtures of test/Target/ONNX/Inputs.

Regenerate with:
    /usr/bin/python3 python/generators/make_onnx_fixtures.py test/Target/ONNX/Inputs

Uses only the `onnx` helper API (Debian's python3-onnx 1.12); weights are
deterministic so that the files are reproducible byte for byte.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def init(name, shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    return numpy_helper.from_array(
        (rng.standard_normal(shape) * 0.1).astype(dtype), name)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def save(model, out_dir, name):
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out_dir, name))


def model(graph, opset):
    m = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)],
        producer_name="distir-fixtures")
    m.ir_version = 8
    return m


def mlp():
    """Gemm + Relu + MatMul + Add + Softmax; batch dimension is dynamic."""
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1",
                         transB=1),
        helper.make_node("Relu", ["h"], ["r"], name="relu1"),
        helper.make_node("MatMul", ["r", "w2"], ["m"], name="fc2"),
        helper.make_node("Add", ["m", "b2"], ["a"], name="bias2"),
        helper.make_node("Softmax", ["a"], ["y"], name="softmax"),
    ]
    g = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])],
        [init("w1", (16, 8), seed=1), init("b1", (16,), seed=2),
         init("w2", (16, 4), seed=3), init("b2", (4,), seed=4)])
    return model(g, 13)


def shape_subgraph():
    """A torch-style shape computation: Shape -> Gather -> Unsqueeze ->
    Concat -> Reshape, plus Range, ConstantOfShape, Expand, Equal, Where."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Constant", [], ["c0"], name="c0",
                         value=helper.make_tensor("v", TensorProto.INT64, [],
                                                  [0])),
        helper.make_node("Constant", [], ["c1"], name="c1",
                         value=helper.make_tensor("v", TensorProto.INT64, [],
                                                  [1])),
        helper.make_node("Gather", ["s", "c0"], ["b"], name="gather_b"),
        helper.make_node("Gather", ["s", "c1"], ["t"], name="gather_t"),
        helper.make_node("Unsqueeze", ["b", "axes0"], ["bu"], name="unsq_b"),
        helper.make_node("Unsqueeze", ["t", "axes0"], ["tu"], name="unsq_t"),
        helper.make_node("Concat", ["bu", "tu", "heads", "minus1"], ["ns"],
                         name="concat_shape", axis=0),
        helper.make_node("Reshape", ["x", "ns"], ["xr"], name="split_heads"),
        helper.make_node("Transpose", ["xr"], ["xt"], name="transpose",
                         perm=[0, 2, 1, 3]),
        # Positions 0..T-1 from the dynamic length.
        helper.make_node("Range", ["c0", "t", "c1"], ["pos"], name="range"),
        helper.make_node("Unsqueeze", ["pos", "axes0"], ["pos2"],
                         name="unsq_pos"),
        helper.make_node("ConstantOfShape", ["tu"], ["ones"], name="cos",
                         value=helper.make_tensor("v", TensorProto.INT64, [1],
                                                  [1])),
        helper.make_node("Mul", ["ones", "minus1"], ["neg"], name="neg_ones"),
        helper.make_node("Equal", ["neg", "minus1"], ["eq"], name="equal"),
        helper.make_node("Where", ["eq", "ones", "neg"], ["w"], name="where"),
        helper.make_node("Cast", ["w"], ["wf"], name="cast",
                         to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["wf", "axes1"], ["wf2"],
                         name="unsq_w"),
        helper.make_node("Expand", ["wf2", "s"], ["mask"], name="expand"),
        helper.make_node("Add", ["x", "mask"], ["y"], name="add_mask"),
        helper.make_node("Gather", ["emb", "pos2"], ["pe"], name="pos_embed"),
    ]
    g = helper.make_graph(
        nodes, "shapes",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       ["B", "T", 8])],
        [helper.make_tensor_value_info("xt", TensorProto.FLOAT,
                                       ["B", 2, "T", 4]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       ["B", "T", 8]),
         helper.make_tensor_value_info("pe", TensorProto.FLOAT,
                                       [1, "T", 8])],
        [ints("axes0", [0]), ints("axes1", [1]), ints("heads", [2]), ints("minus1", [-1]),
         init("emb", (16, 8), seed=5)])
    return model(g, 13)


def ops():
    """Layer norm, attention-style batched matmul, reductions, split,
    slice, concat, elementwise math."""
    f = TensorProto.FLOAT
    nodes = [
        helper.make_node("LayerNormalization", ["x", "g", "beta"], ["ln"],
                         name="ln", axis=-1, epsilon=1e-5),
        helper.make_node("Split", ["ln", "split"], ["q", "k"], name="split",
                         axis=2),
        helper.make_node("Transpose", ["k"], ["kt"], name="kt",
                         perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["s"], name="scores"),
        helper.make_node("ReduceMax", ["s"], ["smax"], name="rmax", axes=[-1]),
        helper.make_node("Sub", ["s", "smax"], ["sc"], name="center"),
        helper.make_node("Exp", ["sc"], ["e"], name="exp"),
        helper.make_node("ReduceSum", ["e", "axes_last"], ["es"], name="rsum"),
        helper.make_node("Div", ["e", "es"], ["p"], name="normalize"),
        helper.make_node("Slice", ["p", "starts", "ends", "axes_last"],
                         ["ps"], name="slice"),
        helper.make_node("Concat", ["ps", "ps"], ["pc"], name="concat",
                         axis=-1),
        helper.make_node("Pow", ["pc", "two"], ["sq"], name="pow"),
        helper.make_node("Sqrt", ["sq"], ["sr"], name="sqrt"),
        helper.make_node("Erf", ["sr"], ["er"], name="erf"),
        helper.make_node("Tanh", ["er"], ["th"], name="tanh"),
        helper.make_node("Sigmoid", ["th"], ["sg"], name="sigmoid"),
        helper.make_node("Reciprocal", ["sg"], ["rc"], name="recip"),
        helper.make_node("Neg", ["rc"], ["ng"], name="neg"),
        helper.make_node("Dropout", ["ng"], ["dr"], name="dropout"),
        helper.make_node("ReduceMean", ["dr"], ["mean"], name="rmean",
                         axes=[1], keepdims=0),
        helper.make_node("Identity", ["mean"], ["y"], name="identity"),
        helper.make_node("Less", ["q", "k"], ["lt"], name="less"),
        helper.make_node("Squeeze", ["g2", "axes0"], ["g2s"], name="squeeze"),
        helper.make_node("Log", ["g2s"], ["z"], name="log"),
    ]
    g = helper.make_graph(
        nodes, "ops",
        [helper.make_tensor_value_info("x", f, [2, 4, 8])],
        [helper.make_tensor_value_info("y", f, [2, 4]),
         helper.make_tensor_value_info("lt", TensorProto.BOOL, [2, 4, 4]),
         helper.make_tensor_value_info("z", f, [8])],
        [init("g", (8,), seed=6), init("beta", (8,), seed=7),
         ints("split", [4, 4]), ints("axes_last", [-1]), ints("starts", [1]),
         ints("ends", [3]), numpy_helper.from_array(np.array(2.0, np.float32),
                                                    "two"),
         ints("axes0", [0]), init("g2", (1, 8), seed=8)])
    return model(g, 17)


def conv():
    """Conv + BatchNormalization + LeakyRelu + pooling + Flatten +
    LogSoftmax."""
    f = TensorProto.FLOAT
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization",
                         ["c", "scale", "bias", "mean", "var"], ["bn"],
                         name="bn", epsilon=1e-5),
        helper.make_node("LeakyRelu", ["bn"], ["lr"], name="lrelu",
                         alpha=0.1),
        helper.make_node("MaxPool", ["lr"], ["mp"], name="maxpool",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("AveragePool", ["mp"], ["ap"], name="avgpool",
                         kernel_shape=[2, 2], strides=[1, 1]),
        helper.make_node("GlobalAveragePool", ["ap"], ["gp"], name="gap"),
        helper.make_node("Flatten", ["gp"], ["fl"], name="flatten"),
        helper.make_node("LogSoftmax", ["fl"], ["y"], name="logsoftmax"),
    ]
    g = helper.make_graph(
        nodes, "conv",
        [helper.make_tensor_value_info("x", f, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", f, [1, 4])],
        [init("w", (4, 3, 3, 3), seed=9), init("b", (4,), seed=10),
         init("scale", (4,), seed=11), init("bias", (4,), seed=12),
         init("mean", (4,), seed=13),
         numpy_helper.from_array(np.ones(4, np.float32), "var")])
    return model(g, 13)


def unsupported():
    """Det: an op the importer does not implement."""
    nodes = [helper.make_node("Det", ["a"], ["y"], name="determinant")]
    g = helper.make_graph(
        nodes, "unsupported",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    return model(g, 13)


def several_unsupported():
    """Two unsupported op types, one of them twice, between supported ops:
    the importer lists them all in one line."""
    nodes = [helper.make_node("Relu", ["a"], ["r"], name="relu"),
             helper.make_node("Det", ["r"], ["d1"], name="det_first"),
             helper.make_node("Bernoulli", ["p"], ["coin"], name="coin"),
             helper.make_node("Det", ["a"], ["d2"], name="det_second"),
             helper.make_node("Add", ["d1", "d2"], ["y"], name="add")]
    g = helper.make_graph(
        nodes, "several_unsupported",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3, 3]),
         helper.make_tensor_value_info("p", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("coin", TensorProto.FLOAT, [4])])
    return model(g, 15)


def old_opset():
    """Opset 6: Relu is unchanged up to opset 7 (accepted), Add is not."""
    nodes = [helper.make_node("Relu", ["a"], ["r"], name="relu"),
             helper.make_node("Add", ["r", "a"], ["y"], name="add")]
    g = helper.make_graph(
        nodes, "old",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    return model(g, 6)


def arch_only():
    """Initializers with dims but no data (architecture-only models)."""
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[64, 32])
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="proj")]
    g = helper.make_graph(
        nodes, "arch",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", 32])],
        [w])
    m = model(g, 13)
    return m


def unsigned():
    """uint8 arithmetic, comparison and casts (unsigned semantics)."""
    u8 = TensorProto.UINT8
    nodes = [
        helper.make_node("Div", ["a", "b"], ["q"], name="div"),
        helper.make_node("Mod", ["a", "b"], ["r"], name="mod"),
        helper.make_node("Max", ["a", "b"], ["m"], name="max"),
        helper.make_node("Less", ["a", "b"], ["lt"], name="less"),
        helper.make_node("Cast", ["a"], ["f"], name="tofloat",
                         to=TensorProto.FLOAT),
        helper.make_node("Cast", ["a"], ["w"], name="widen",
                         to=TensorProto.INT32),
        helper.make_node("Cast", ["f"], ["back"], name="tou8", to=u8),
        helper.make_node("Pow", ["f", "b"], ["p"], name="pow"),
    ]
    g = helper.make_graph(
        nodes, "unsigned",
        [helper.make_tensor_value_info("a", u8, [4]),
         helper.make_tensor_value_info("b", u8, [4])],
        [helper.make_tensor_value_info("q", u8, [4]),
         helper.make_tensor_value_info("r", u8, [4]),
         helper.make_tensor_value_info("m", u8, [4]),
         helper.make_tensor_value_info("lt", TensorProto.BOOL, [4]),
         helper.make_tensor_value_info("f", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("w", TensorProto.INT32, [4]),
         helper.make_tensor_value_info("back", u8, [4]),
         helper.make_tensor_value_info("p", TensorProto.FLOAT, [4])])
    return model(g, 15)


def unsigned_pow():
    """A uint8 base with a float exponent (not in ONNX's Pow type list, but
    accepted by its checker): computed in f64 via uitofp/fptoui."""
    nodes = [helper.make_node("Pow", ["a", "h"], ["y"], name="root")]
    g = helper.make_graph(
        nodes, "unsigned_pow",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [4])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [4])],
        [numpy_helper.from_array(np.array([0.5], np.float32), "h")])
    return model(g, 15)


def maxpool_indices(storage_order):
    """MaxPool with its Indices output (padded 3x3 window, stride 2)."""
    nodes = [helper.make_node("MaxPool", ["x"], ["y", "i"], name="pool",
                              kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                              strides=[2, 2], storage_order=storage_order)]
    g = helper.make_graph(
        nodes, "maxpool_indices",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 2, 2]),
         helper.make_tensor_value_info("i", TensorProto.INT64, [1, 2, 2, 2])])
    return model(g, 12)


def float_mod():
    """Mod of floats without fmod=1 (the ONNX spec requires it)."""
    nodes = [helper.make_node("Mod", ["a", "b"], ["y"], name="mod")]
    g = helper.make_graph(
        nodes, "float_mod",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    return model(g, 13)


def bound_inputs():
    """Reshape whose target shape and a Mul whose scale are graph inputs
    (bound with --input-value); `shape` has a dynamic length, `x` two
    dynamic dimensions; `small` and `flag` only pass through."""
    nodes = [helper.make_node("Mul", ["x", "scale"], ["s"], name="scale"),
             helper.make_node("Reshape", ["s", "shape"], ["y"],
                              name="reshape")]
    g = helper.make_graph(
        nodes, "bound",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "M"]),
         helper.make_tensor_value_info("scale", TensorProto.FLOAT, [6]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, ["K"]),
         helper.make_tensor_value_info("small", TensorProto.UINT8, [1]),
         helper.make_tensor_value_info("flag", TensorProto.BOOL, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["P", "Q"]),
         helper.make_tensor_value_info("small", TensorProto.UINT8, [1]),
         helper.make_tensor_value_info("flag", TensorProto.BOOL, [2])])
    return model(g, 13)


def bitshift(direction, dtype=TensorProto.UINT16):
    """x << s and x >> s on unsigned integers."""
    nodes = [helper.make_node("BitShift", ["x", "s"], ["y"], name="shift",
                              direction=direction)]
    g = helper.make_graph(
        nodes, "bitshift",
        [helper.make_tensor_value_info("x", dtype, [4]),
         helper.make_tensor_value_info("s", dtype, [4])],
        [helper.make_tensor_value_info("y", dtype, [4])])
    return model(g, 11)


def non_tensor_inputs():
    """A sequence input (SequenceLength) and a string input (Cast): the
    importer emits static tensor programs and rejects both."""
    seq = helper.make_graph(
        [helper.make_node("SequenceLength", ["s"], ["n"], name="len")],
        "sequence",
        [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT,
                                                [2])],
        [helper.make_tensor_value_info("n", TensorProto.INT64, [])])
    text = helper.make_graph(
        [helper.make_node("Cast", ["t"], ["y"], name="parse",
                          to=TensorProto.FLOAT)],
        "string",
        [helper.make_tensor_value_info("t", TensorProto.STRING, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    return model(seq, 13), model(text, 13)


def int_div_overflow():
    """Known integer Div/Mod whose C++ evaluation would trap: INT64_MIN / -1
    (and INT32_MIN / -1), Mod by -1 with fmod=0 and fmod=1."""
    i64min = np.iinfo(np.int64).min
    i32min = np.iinfo(np.int32).min
    nodes = [helper.make_node("Div", ["a", "b"], ["q"], name="div"),
             helper.make_node("Mod", ["a", "b"], ["m"], name="mod"),
             helper.make_node("Mod", ["a", "b"], ["t"], name="fmod", fmod=1),
             helper.make_node("Div", ["a32", "b32"], ["q32"], name="div32")]
    g = helper.make_graph(
        nodes, "int_div_overflow", [],
        [helper.make_tensor_value_info("q", TensorProto.INT64, [3]),
         helper.make_tensor_value_info("m", TensorProto.INT64, [3]),
         helper.make_tensor_value_info("t", TensorProto.INT64, [3]),
         helper.make_tensor_value_info("q32", TensorProto.INT32, [1])],
        [ints("a", [i64min, 7, i64min]), ints("b", [-1, -1, 2]),
         numpy_helper.from_array(np.array([i32min], np.int32), "a32"),
         numpy_helper.from_array(np.array([-1], np.int32), "b32")])
    return model(g, 13)


def int_div_zero():
    """Known integer Div by zero."""
    nodes = [helper.make_node("Div", ["a", "b"], ["q"], name="div")]
    g = helper.make_graph(
        nodes, "int_div_zero", [],
        [helper.make_tensor_value_info("q", TensorProto.INT64, [2])],
        [ints("a", [1, 2]), ints("b", [1, 0])])
    return model(g, 13)


def scalar(name, value, dtype):
    return numpy_helper.from_array(np.array(value, dtype=dtype), name)


def range_large():
    """Range results above the fold limit (65,536 elements): computed at
    run time. A Slice of a huge ConstantOfShape splat is not expanded."""
    nodes = [helper.make_node("Range", ["s", "l", "d"], ["r"], name="range"),
             helper.make_node("Range", ["fs", "fl", "fd"], ["fr"],
                              name="frange"),
             helper.make_node("ConstantOfShape", ["big"], ["z"], name="zeros",
                              value=helper.make_tensor(
                                  "v", TensorProto.FLOAT, [1], [1.5])),
             helper.make_node("Slice", ["z", "st", "en"], ["y"],
                              name="slice")]
    g = helper.make_graph(
        nodes, "range_large", [],
        [helper.make_tensor_value_info("r", TensorProto.INT64, [100000]),
         helper.make_tensor_value_info("fr", TensorProto.FLOAT, [70000]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        [scalar("s", 5, np.int64), scalar("l", 300005, np.int64),
         scalar("d", 3, np.int64), scalar("fs", 0.5, np.float32),
         scalar("fl", 17500.5, np.float32), scalar("fd", 0.25, np.float32),
         ints("big", [1 << 40]), ints("st", [3]), ints("en", [5])])
    return model(g, 13)


def range_huge(dtype):
    """Range of 2^40 (int64) or ~1e30 (float) elements: rejected before
    anything is allocated."""
    np_type = np.int64 if dtype == TensorProto.INT64 else np.float32
    limit = (1 << 40) if dtype == TensorProto.INT64 else 1e30
    nodes = [helper.make_node("Range", ["s", "l", "d"], ["r"], name="range")]
    g = helper.make_graph(
        nodes, "range_huge", [],
        [helper.make_tensor_value_info("r", dtype, ["N"])],
        [scalar("s", 0, np_type), scalar("l", limit, np_type),
         scalar("d", 1, np_type)])
    return model(g, 13)


def bad_tensor_data():
    """An initializer and Constant tensors whose data disagree with their
    dims (ONNX shape inference would read past them), and a sparse
    Constant. Not valid ONNX: saved unchecked."""
    bad_init = TensorProto()
    bad_init.name = "s"
    bad_init.data_type = TensorProto.INT64
    bad_init.dims.extend([2])
    bad_init.raw_data = b"\x01\x00"
    init_graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape")],
        "bad_init",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])],
        [bad_init])
    bad_const = TensorProto()
    bad_const.name = "v"
    bad_const.data_type = TensorProto.INT64
    bad_const.dims.extend([2])
    bad_const.raw_data = b"\x03\x00\x00\x00\x00"
    const_graph = helper.make_graph(
        [helper.make_node("Constant", [], ["c"], name="c", value=bad_const),
         helper.make_node("Reshape", ["x", "c"], ["y"], name="reshape")],
        "bad_const",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])])
    sparse = helper.make_sparse_tensor(
        helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0]),
        helper.make_tensor("i", TensorProto.INT64, [1], [2]), [4])
    sparse_graph = helper.make_graph(
        [helper.make_node("Constant", [], ["c"], name="c",
                          sparse_value=sparse),
         helper.make_node("Add", ["x", "c"], ["y"], name="add")],
        "sparse_const",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    return model(init_graph, 13), model(const_graph, 13), \
        model(sparse_graph, 13)


def bad_window(op, **attrs):
    """A Conv or pooling node with an invalid window attribute (ONNX shape
    inference divides by strides)."""
    inputs = ["x", "w"] if op.startswith("Conv") else ["x"]
    nodes = [helper.make_node(op, inputs, ["y"], name="window", **attrs)]
    g = helper.make_graph(
        nodes, "bad_window",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 5, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       ["N", "C", "H", "W"])],
        [init("w", (1, 1, 3, 3))] if op.startswith("Conv") else [])
    return model(g, 13)


def opset18():
    """ReduceMean with an axes attribute at opset 18, where axes is an
    input: read as the opset-13 attribute it would be miscompiled."""
    nodes = [helper.make_node("ReduceMean", ["x"], ["y"], name="mean",
                              axes=[1])]
    g = helper.make_graph(
        nodes, "opset18",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 1])])
    return model(g, 18)


def cast_half_bfloat():
    """Cast float16 -> bfloat16 -> float16 (same width, neither holds the
    other)."""
    nodes = [helper.make_node("Cast", ["x"], ["b"], name="to_bf16",
                              to=TensorProto.BFLOAT16),
             helper.make_node("Cast", ["b"], ["y"], name="to_f16",
                              to=TensorProto.FLOAT16)]
    g = helper.make_graph(
        nodes, "cast_half_bfloat",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [3])],
        [helper.make_tensor_value_info("b", TensorProto.BFLOAT16, [3]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT16, [3])])
    return model(g, 13)


def declared_type_mismatch():
    """A Reshape to Abs(Shape(x)), which ONNX cannot infer (no data
    propagation through Abs): the graph declares its output [3,2], the
    importer computes [2,3]."""
    nodes = [helper.make_node("Shape", ["x"], ["s"], name="shape"),
             helper.make_node("Abs", ["s"], ["a"], name="abs"),
             helper.make_node("Reshape", ["x", "a"], ["y"], name="reshape")]
    g = helper.make_graph(
        nodes, "declared_type_mismatch",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])])
    return model(g, 13)


def dropout_mask(opset):
    """Dropout in inference with its mask output: of the input's type T at
    opsets 7-9, bool from opset 10."""
    mask_type = TensorProto.FLOAT if opset < 10 else TensorProto.BOOL
    nodes = [helper.make_node("Dropout", ["x"], ["y", "mask"], name="drop")]
    g = helper.make_graph(
        nodes, "dropout_mask",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("mask", mask_type, [2, 3])])
    return model(g, opset)


def slice_extreme_steps():
    """Slice with step INT64_MIN (reverse; -step overflows) and INT64_MAX
    (forward): one element each."""
    i64 = np.iinfo(np.int64)
    nodes = [helper.make_node("Slice", ["x", "s1", "e1", "a", "min"], ["y1"],
                              name="reverse"),
             helper.make_node("Slice", ["x", "s2", "e2", "a", "max"], ["y2"],
                              name="forward")]
    g = helper.make_graph(
        nodes, "slice_extreme_steps",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y1", TensorProto.FLOAT, [1]),
         helper.make_tensor_value_info("y2", TensorProto.FLOAT, [1])],
        [ints("s1", [-1]), ints("e1", [i64.min]), ints("a", [0]),
         ints("min", [i64.min]), ints("s2", [1]), ints("e2", [i64.max]),
         ints("max", [i64.max])])
    return model(g, 13)


def layernorm_stash(stash_type):
    """LayerNormalization on float16 with its Mean and InvStdDev outputs,
    which have stash_type (float by default)."""
    attrs = {} if stash_type is None else {"stash_type": stash_type}
    out_type = TensorProto.FLOAT if stash_type is None else stash_type
    nodes = [helper.make_node("LayerNormalization", ["x", "s", "b"],
                              ["y", "mean", "inv"], name="ln", **attrs)]
    g = helper.make_graph(
        nodes, "layernorm_stash",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [2, 4]),
         helper.make_tensor_value_info("mean", out_type, [2, 1]),
         helper.make_tensor_value_info("inv", out_type, [2, 1])],
        [init("s", (4,), np.float16, seed=1), init("b", (4,), np.float16,
                                                    seed=2)])
    return model(g, 17)


def batchnorm_spatial0():
    """BatchNormalization-7 with spatial=0: per-activation [C,H,W]
    parameters, broadcast over the batch dimension."""
    shape = (2, 3, 2)
    nodes = [helper.make_node("BatchNormalization",
                              ["x", "s", "b", "m", "v"], ["y"], name="bn",
                              spatial=0)]
    g = helper.make_graph(
        nodes, "batchnorm_spatial0",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, (2,) + shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, (2,) + shape)],
        [init("s", shape, seed=1), init("b", shape, seed=2),
         init("m", shape, seed=3),
         numpy_helper.from_array(
             np.linspace(0.5, 1.6, 12, dtype=np.float32).reshape(shape),
             "v")])
    return model(g, 7)


def checker_errors():
    """An op ONNX does not know, an unnamed Add with one input (the checker
    says `Node ()`) and a Relu whose declared output type conflicts with
    inference. Not valid ONNX: saved unchecked."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    unknown = helper.make_graph(
        [helper.make_node("FooBar", ["x"], ["y"], name="weird")],
        "unknown_op", [x], [y])
    arity = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="relu"),
         helper.make_node("Add", ["r"], ["y"])], "unnamed_arity", [x], [y])
    conflict = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        "declared_conflict", [x],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [2])])
    return model(unknown, 13), model(arity, 13), model(conflict, 13)


def control_characters():
    """A node name with a newline (on an unsupported op) and an op type
    with a control character:
    each diagnostic must stay on one line. Not valid ONNX: saved
    unchecked."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    name = helper.make_graph(
        [helper.make_node("Det", ["m"], ["d"], name="bad\nname")],
        "newline_name",
        [helper.make_tensor_value_info("m", TensorProto.FLOAT, [2, 2])],
        [helper.make_tensor_value_info("d", TensorProto.FLOAT, [])])
    op = helper.make_graph(
        [helper.make_node("Foo\x01Bar", ["x"], ["y"], name="tab\tnode")],
        "control_op", [x], [y])
    return model(name, 13), model(op, 13)


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out_dir, exist_ok=True)
    save(mlp(), out_dir, "mlp.onnx")
    save(shape_subgraph(), out_dir, "shapes.onnx")
    save(ops(), out_dir, "ops.onnx")
    save(conv(), out_dir, "conv.onnx")
    save(unsupported(), out_dir, "unsupported-op.onnx")
    save(several_unsupported(), out_dir, "several-unsupported.onnx")
    save(old_opset(), out_dir, "old-opset.onnx")
    save(unsigned(), out_dir, "unsigned.onnx")
    save(unsigned_pow(), out_dir, "unsigned-pow.onnx")
    save(maxpool_indices(1), out_dir, "maxpool-indices.onnx")
    save(maxpool_indices(2), out_dir, "maxpool-bad-order.onnx")
    save(float_mod(), out_dir, "float-mod.onnx")
    save(bound_inputs(), out_dir, "bound-inputs.onnx")
    save(bitshift("LEFT"), out_dir, "bitshift-left.onnx")
    save(bitshift("RIGHT"), out_dir, "bitshift-right.onnx")
    save(bitshift("UP"), out_dir, "bitshift-bad-direction.onnx")
    # Not valid ONNX (BitShift takes unsigned types): saved unchecked.
    onnx.save(bitshift("LEFT", TensorProto.INT32),
              os.path.join(out_dir, "bitshift-signed.onnx"))
    seq, text = non_tensor_inputs()
    save(seq, out_dir, "sequence-input.onnx")
    save(text, out_dir, "string-input.onnx")
    # The checker rejects data-less initializers: save without checking.
    onnx.save(arch_only(), os.path.join(out_dir, "arch-only.onnx"))
    save(int_div_overflow(), out_dir, "int-div-overflow.onnx")
    save(int_div_zero(), out_dir, "int-div-zero.onnx")
    save(range_large(), out_dir, "range-large.onnx")
    save(range_huge(TensorProto.INT64), out_dir, "range-huge.onnx")
    save(range_huge(TensorProto.FLOAT), out_dir, "range-huge-float.onnx")
    for m, name in zip(bad_tensor_data(),
                       ("bad-initializer-data", "bad-constant-data",
                        "sparse-constant")):
        onnx.save(m, os.path.join(out_dir, name + ".onnx"))
    for name, op, attrs in (
            ("conv-stride0", "Conv", {"strides": [1, 0]}),
            ("conv-group0", "Conv", {"group": 0}),
            ("convtranspose-dilation0", "ConvTranspose",
             {"dilations": [0, 1]}),
            ("maxpool-kernel0", "MaxPool", {"kernel_shape": [0, 2]}),
            ("avgpool-stride0", "AveragePool",
             {"kernel_shape": [2, 2], "strides": [0, 1]}),
            ("lppool-negative-pads", "LpPool",
             {"kernel_shape": [2, 2], "pads": [0, -1, 0, 0]})):
        onnx.save(bad_window(op, **attrs),
                  os.path.join(out_dir, name + ".onnx"))
    # ONNX 1.12's checker knows opsets up to 17: saved unchecked.
    onnx.save(opset18(), os.path.join(out_dir, "opset-18.onnx"))
    save(cast_half_bfloat(), out_dir, "cast-half-bfloat.onnx")
    save(declared_type_mismatch(), out_dir, "declared-type-mismatch.onnx")
    save(dropout_mask(7), out_dir, "dropout7-mask.onnx")
    save(dropout_mask(12), out_dir, "dropout12-mask.onnx")
    save(slice_extreme_steps(), out_dir, "slice-extreme-steps.onnx")
    save(layernorm_stash(None), out_dir, "layernorm-f16.onnx")
    # stash_type INT64 is not a float type: saved unchecked.
    onnx.save(layernorm_stash(TensorProto.INT64),
              os.path.join(out_dir, "layernorm-stash-int.onnx"))
    save(batchnorm_spatial0(), out_dir, "batchnorm-spatial0.onnx")
    for m, name in zip(checker_errors(),
                       ("unknown-op", "unnamed-node-arity",
                        "declared-type-conflict")):
        onnx.save(m, os.path.join(out_dir, name + ".onnx"))
    for m, name in zip(control_characters(),
                       ("newline-node-name", "control-op-type")):
        onnx.save(m, os.path.join(out_dir, name + ".onnx"))
    with open(os.path.join(out_dir, "malformed.onnx"), "wb") as f:
        f.write(b"\x08\x07\x12\xffnot a protobuf\x00\x01")


if __name__ == "__main__":
    main()
