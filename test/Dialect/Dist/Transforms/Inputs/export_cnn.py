"""Exports a small residual CNN written with plain torch.nn (random weights,
opset 13): a 3x3 stem, two residual blocks of two padded 3x3 convolutions,
max pooling, a linear head. No block names: layers come from the data flow.

usage: export_cnn.py OUT.onnx
"""
import sys

import torch
from torch import nn
torch.manual_seed(0)
class Block(nn.Module):
    def __init__(s, c):
        super().__init__(); s.c1 = nn.Conv2d(c, c, 3, padding=1); s.c2 = nn.Conv2d(c, c, 3, padding=1)
    def forward(s, x):
        return torch.relu(x + s.c2(torch.relu(s.c1(x))))
class Net(nn.Module):
    def __init__(s):
        super().__init__()
        s.stem = nn.Conv2d(3, 16, 3, padding=1); s.b1 = Block(16); s.pool = nn.MaxPool2d(2); s.b2 = Block(16)
        s.fc = nn.Linear(16 * 4 * 4, 10)
    def forward(s, x):
        x = s.pool(s.b1(torch.relu(s.stem(x))))
        x = s.pool(s.b2(x))
        return s.fc(torch.flatten(x, 1))
m = Net().eval()
with torch.no_grad():
    for p in m.parameters(): p.add_(torch.randn_like(p) * 0.01)
torch.onnx.export(m, torch.randn(2, 3, 16, 16), sys.argv[1], input_names=["x"], output_names=["y"], opset_version=13, dynamic_axes={"x": {0: "batch"}})
