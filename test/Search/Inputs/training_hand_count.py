"""Checks search-training-hand-count.test's plans against the hand count of
docs/design/memory.md."""
import csv
import json
import sys

import numpy
import onnx

model, plans, table, plot = sys.argv[1:5]
P = sum(int(numpy.prod(t.dims)) for t in onnx.load(model).graph.initializer)
print("parameters", P)
# The hand count of docs/design/memory.md, recomputed from the architecture.
L, h, a, V, s = 24, 2048, 16, 50304, 128
states = 16 * P + 4
activations = L * s * h * (34 + 5 * a * s // h) + s * V * (2 + 4)
hand = states + activations
rows = {c["microbatches"]: c for c in json.load(open(plans))["configurations"]}
k4 = rows[4]
split = k4["peak_breakdown"]
print("weights 4P:", split["weights"] == 4 * P)
print("optimizer state 8P + 4:", split["optimizer_state"] == 8 * P + 4)
print("gradients 2P:", split["gradients"] == 2 * P)
print("peak within 5% of the hand count:",
      abs(k4["peak_bytes"] - hand) / hand < 0.05)
print("K=1 needs more memory than K=4:", rows[1]["peak_bytes"] > k4["peak_bytes"])
print("csv rows %d, plot %s" % (len(list(csv.DictReader(open(table)))),
                                open(plot).read().lstrip().startswith(("<svg", "<?xml"))))
