"""Exports two attention models written with plain torch.nn (random
weights, opset 13) for the fast-vs-full comparison of distir-search:

  encoder.onnx  a BERT-like nn.TransformerEncoder (2 layers, width 64,
                4 heads) over inputs [batch, 16, 64];
  seq2seq.onnx  an nn.Transformer encoder-decoder (1 + 1 layers, width 32,
                4 heads) over source and target [batch, 8, 32].

usage: export_attention.py OUT_DIR
"""
import os
import sys

import torch
from torch import nn

out = sys.argv[1]
torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self, d=64, heads=4, layers=2):
        super().__init__()
        self.embed = nn.Linear(d, d)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(d, 10)

    def forward(self, x):
        return self.head(self.encoder(self.embed(x)))


class Seq2Seq(nn.Module):
    def __init__(self, d=32, heads=4):
        super().__init__()
        self.model = nn.Transformer(d, heads, 1, 1, 2 * d, dropout=0.0,
                                    batch_first=True)

    def forward(self, src, tgt):
        return self.model(src, tgt)


# Not under torch.no_grad(): there PyTorch takes its fused encoder-layer
# kernel, which has no ONNX export.
torch.onnx.export(Encoder().eval(), torch.randn(8, 16, 64),
                  os.path.join(out, "encoder.onnx"), input_names=["x"],
                  output_names=["y"], opset_version=13,
                  dynamic_axes={"x": {0: "batch"}})
torch.onnx.export(Seq2Seq().eval(),
                  (torch.randn(8, 8, 32), torch.randn(8, 8, 32)),
                  os.path.join(out, "seq2seq.onnx"),
                  input_names=["src", "tgt"], output_names=["y"],
                  opset_version=13,
                  dynamic_axes={"src": {0: "batch"}, "tgt": {0: "batch"}})
