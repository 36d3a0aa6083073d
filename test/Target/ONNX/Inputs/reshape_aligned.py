"""Writes heads.onnx (Reshape [4, 6, 8] -> [4, 12, 4]), ones.onnx
(Reshape [4, 1, 6, 8] -> [4, 3, 16, 1]) and their inputs to argv[1]."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]


def model(name, src, dst):
    shape = helper.make_tensor("shape", TensorProto.INT64, [len(dst)], dst)
    node = helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")
    graph = helper.make_graph(
        [node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, src)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, dst)], [shape])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(m, os.path.join(out, name + ".onnx"))
    x = np.arange(np.prod(src), dtype=np.float32).reshape(src)
    return x


np.save(os.path.join(out, "x.npy"), model("heads", [4, 6, 8], [4, 12, 4]))
np.save(os.path.join(out, "x1.npy"), model("ones", [4, 1, 6, 8], [4, 3, 16, 1]))
