"""A plain torch.nn model whose input is read by every block (a skip
connection from the input into each of 3 blocks), exported to ONNX: with
pp=3 the input crosses from stage 0 to stages 1 and 2.

usage: export_skip.py OUT.onnx
"""
import sys

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(16, 32)
        self.b = nn.Linear(32, 16)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


class Skip(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Block() for _ in range(3)])

    def forward(self, x):
        h = x
        for layer in self.layers:
            h = layer(h) + x
        return h


torch.manual_seed(0)
torch.onnx.export(Skip(), (torch.randn(8, 16),), sys.argv[1],
                  input_names=["x"])
