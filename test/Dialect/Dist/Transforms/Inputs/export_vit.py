"""Exports a small torchvision VisionTransformer (2 layers, width 64, 4
heads, 32x32 images in 8x8 patches; random weights, opset 14).

usage: export_vit.py OUT.onnx
"""
import sys

import torch
from torchvision.models.vision_transformer import VisionTransformer

torch.manual_seed(0)
model = VisionTransformer(image_size=32, patch_size=8, num_layers=2,
                          num_heads=4, hidden_dim=64, mlp_dim=128,
                          num_classes=10).eval()
torch.onnx.export(model, torch.randn(2, 3, 32, 32), sys.argv[1],
                  input_names=["x"], output_names=["y"], opset_version=14,
                  dynamic_axes={"x": {0: "batch"}})
