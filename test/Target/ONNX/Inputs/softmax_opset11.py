"""Softmax and LogSoftmax before opset 13 coerce the input to 2-D: the
dimensions before `axis` become the rows, those from `axis` on the columns,
and the (log-)softmax runs over each row's whole column block. Writes a
rank-3 model with axis=1 at opset 11 (DIR/model.onnx), an input
(DIR/x.npy) and numpy's results of that definition (DIR/expected_N.npy):
an importer that normalized over axis 1 alone would differ.

usage: softmax_opset11.py DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
shape = [2, 3, 4]
nodes = [
    helper.make_node("Softmax", ["x"], ["s"], axis=1),
    helper.make_node("LogSoftmax", ["x"], ["l"], axis=1),
]
graph = helper.make_graph(
    nodes, "softmax11",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
    [helper.make_tensor_value_info("s", TensorProto.FLOAT, shape),
     helper.make_tensor_value_info("l", TensorProto.FLOAT, shape)])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
onnx.checker.check_model(model)
onnx.save(model, os.path.join(out, "model.onnx"))

x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
np.save(os.path.join(out, "x.npy"), x)
rows = x.reshape(shape[0], -1)  # [2, 12]: axis 1 onwards is one block
e = np.exp(rows - rows.max(axis=1, keepdims=True))
softmax = (e / e.sum(axis=1, keepdims=True)).reshape(shape)
np.save(os.path.join(out, "expected_0.npy"), softmax)
np.save(os.path.join(out, "expected_1.npy"), np.log(softmax))
