"""Checks the memory columns of one-device distir-search CSVs of the same
ONNX model (SGD, Adam, and optionally Adam with --dtype bf16) against the
parameter count P of its float initializers."""
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
# The optimizer state column: Adam's two moments per parameter and its step
# count (8P + 4), none for SGD; the weights column keeps the weights alone.
print("optimizer state sgd = 0, adam = 8P + 4:",
      num(sgd, "peak_optimizer_state") == 0,
      num(adam, "peak_optimizer_state") == 8 * p + 4)
print("weights adam = weights sgd = 4P:",
      num(adam, "peak_weights") == num(sgd, "peak_weights") == 4 * p)
if len(sys.argv) > 4:
    # Mixed precision: fp32 master weights and moments stay resident
    # (12P + 4), the weight gradients are bf16 (2P): 16 bytes per parameter
    # with the bf16 weight copies (2P, live during the step).
    bf16 = next(csv.DictReader(open(sys.argv[4])))
    print("bf16 resident = 12P + 4:", num(bf16, "resident_bytes") == 12 * p + 4)
    print("bf16 optimizer state = 8P + 4:",
          num(bf16, "peak_optimizer_state") == 8 * p + 4)
    print("bf16 gradients = 2P:", num(bf16, "peak_gradients") == 2 * p)
    print("bf16 activations < f32 activations:",
          num(bf16, "peak_activations") < num(adam, "peak_activations"))
