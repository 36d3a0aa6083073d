"""Checks the memory columns of two one-device distir-search CSVs (SGD,
Adam) of the same ONNX model against the parameter count P of its float
initializers."""
import csv
import sys

import numpy as np
import onnx

model = onnx.load(sys.argv[1])
p = sum(int(np.prod(t.dims)) for t in model.graph.initializer
        if t.data_type == onnx.TensorProto.FLOAT)
sgd, adam = (next(csv.DictReader(open(f))) for f in sys.argv[2:4])
num = lambda row, key: int(row[key])
print("resident sgd = 4P:", num(sgd, "resident_bytes") == 4 * p)
print("resident adam - sgd = 8P + 4:",
      num(adam, "resident_bytes") - num(sgd, "resident_bytes") == 8 * p + 4)
print("peak adam - sgd = 8P + 4:",
      num(adam, "peak_bytes") - num(sgd, "peak_bytes") == 8 * p + 4)
print("gradients = 4P:", num(sgd, "peak_gradients") == 4 * p,
      num(adam, "peak_gradients") == 4 * p)
