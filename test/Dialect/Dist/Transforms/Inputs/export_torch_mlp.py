"""Exports a plain torch.nn.Sequential MLP (Linear, GELU, Linear, ReLU; random
weights) to DIR/mlp.onnx with batch 8."""
import sys

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(),
                            torch.nn.Linear(64, 16), torch.nn.ReLU())
torch.onnx.export(model, (torch.randn(8, 32),), sys.argv[1] + "/mlp.onnx",
                  input_names=["x"], output_names=["y"], opset_version=13)
