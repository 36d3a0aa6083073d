"""Exports a stack of two plain torch.nn.TransformerEncoderLayer (width 64,
4 heads, feed-forward width FF, no dropout, batch first, each layer with its
own random weights) and a Linear(64, 10) head to DIR/encoder.onnx over
inputs [4, 16, 64].

usage: export_torch_encoder.py DIR FF"""
import sys

import torch
from torch import nn

torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self, ff, d=64, heads=4, layers=2):
        super().__init__()
        self.layers = nn.ModuleList([
            nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0,
                                       batch_first=True)
            for _ in range(layers)])
        self.head = nn.Linear(d, 10)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


model = Encoder(int(sys.argv[2])).eval()
torch.onnx.export(model, (torch.randn(4, 16, 64),), sys.argv[1] + "/encoder.onnx",
                  input_names=["x"], output_names=["y"], opset_version=13)
