"""Exports a model whose inference reduces over the batch (random weights,
opset 13): y = W2 relu(W1 x - mean over the batch of W1 x). Data-parallel
replicas must all-reduce the batch mean, and with microbatches each one
depends on the others'.

usage: export_batch_mean.py OUT.onnx
"""
import sys

import torch
from torch import nn

torch.manual_seed(0)


class BatchCentered(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.l1 = nn.Linear(d, d)
        self.l2 = nn.Linear(d, d)

    def forward(self, x):
        h = self.l1(x)
        return self.l2(torch.relu(h - h.mean(dim=0, keepdim=True)))


torch.onnx.export(BatchCentered().eval(), torch.randn(8, 32), sys.argv[1],
                  input_names=["x"], output_names=["y"], opset_version=13,
                  dynamic_axes={"x": {0: "batch"}})
