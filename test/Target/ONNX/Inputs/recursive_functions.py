#!/usr/bin/env python3
"""Writes two hostile models to DIR: a model-local function that calls itself
(self.onnx) and two that call each other (mutual.onnx). ONNX's shape
inference expands such calls without end (a stack overflow, SIGSEGV)."""
import os
import sys

import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
opsets = [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)]


def function(name, callee):
    return helper.make_function(
        "local", name, ["a"], ["b"],
        [helper.make_node(callee, ["a"], ["b"], domain="local")], opsets)


def save(path, functions):
    graph = helper.make_graph(
        [helper.make_node("F", ["x"], ["y"], domain="local")], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=opsets,
                              functions=functions)
    model.ir_version = 8
    onnx.save(model, os.path.join(out, path))


save("self.onnx", [function("F", "F")])
save("mutual.onnx", [function("F", "G"), function("G", "F")])
