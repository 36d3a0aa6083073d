"""Writes Gathers with a known scalar index (x[:, 0] as ViT picks its class
token, a negative index on the last axis, and a 1-D data tensor) and their
input to argv[1]."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]


def model(name, shape, axis, index, out_shape):
    idx = helper.make_tensor("idx", TensorProto.INT64, [], [index])
    node = helper.make_node("Gather", ["x", "idx"], ["y"], axis=axis,
                            name="gather")
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)],
        [idx])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(m, os.path.join(out, name + ".onnx"))
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    np.save(os.path.join(out, name + "-x.npy"), x)
    np.save(os.path.join(out, name + "-y.npy"), np.take(x, index, axis=axis))


model("token", [4, 17, 8], 1, 0, [4, 8])
model("last", [4, 6, 8], 2, -1, [4, 6])
model("vector", [5], 0, 3, [])
