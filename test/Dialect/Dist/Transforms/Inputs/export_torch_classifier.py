"""Exports a plain torch.nn.Sequential classifier (Linear 256 -> HIDDEN, ReLU,
Linear HIDDEN -> 64, ReLU, Linear 64 -> CLASSES, Softmax; random weights) to
DIR/classifier.onnx with batch 8. The first two layers are Megatron's pair;
the last one is a head.

usage: export_torch_classifier.py DIR CLASSES [HIDDEN (default 256)]"""
import sys

import torch

torch.manual_seed(0)
classes = int(sys.argv[2])
hidden = int(sys.argv[3]) if len(sys.argv) > 3 else 256
model = torch.nn.Sequential(torch.nn.Linear(256, hidden), torch.nn.ReLU(),
                            torch.nn.Linear(hidden, 64), torch.nn.ReLU(),
                            torch.nn.Linear(64, classes),
                            torch.nn.Softmax(dim=-1))
torch.onnx.export(model, (torch.randn(8, 256),), sys.argv[1] + "/classifier.onnx",
                  input_names=["x"], output_names=["y"], opset_version=13)
