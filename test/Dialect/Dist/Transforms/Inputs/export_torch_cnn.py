"""Exports a small inception-style CNN written with plain torch.nn (padded
convolutions in two branches joined by torch.cat, max pooling, flatten, a
linear head; random weights) to DIR/cnn.onnx with batch 4."""
import sys

import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(4, 4, 3, padding=1)
        self.b = torch.nn.Conv2d(4, 2, 1)
        self.pool = torch.nn.MaxPool2d(2)
        self.head = torch.nn.Linear(6 * 4 * 4, 10)

    def forward(self, x):
        y = torch.cat([torch.relu(self.a(x)), self.b(x)], dim=1)
        return self.head(torch.flatten(self.pool(y), 1))


torch.manual_seed(0)
torch.onnx.export(Block(), (torch.randn(4, 4, 8, 8),), sys.argv[1] + "/cnn.onnx",
                  input_names=["x"], output_names=["y"], opset_version=13)
