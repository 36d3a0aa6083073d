#!/usr/bin/env python3
"""Exports the models of bench/exec/gpu that nobody on the team wrote, as
ONNX (opset 14) into DIR: encoder.onnx (nn.TransformerEncoder, 2 layers,
d_model 64, 4 heads, batch-first input 4 x 16 x 64, a Linear head to 10)
and squeezenet.onnx (torchvision's squeezenet1_1, 10 classes, 2 x 3 x 64 x
64). Random weights, fixed seed. usage: export_models.py DIR"""
import os
import sys

import torch
import torchvision
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model=64, nhead=4,
                                           dim_feedforward=128, dropout=0.0,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2)
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        return self.head(self.encoder(x))


def main():
    out = sys.argv[1]
    torch.manual_seed(0)
    torch.onnx.export(Encoder().eval(), (torch.randn(4, 16, 64),),
                      os.path.join(out, "encoder.onnx"), input_names=["x"],
                      output_names=["y"], opset_version=14)
    torch.onnx.export(torchvision.models.squeezenet1_1(num_classes=10).eval(),
                      (torch.randn(2, 3, 64, 64),),
                      os.path.join(out, "squeezenet.onnx"), input_names=["x"],
                      output_names=["y"], opset_version=14)


if __name__ == "__main__":
    main()
