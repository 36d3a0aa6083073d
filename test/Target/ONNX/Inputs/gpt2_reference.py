#!/usr/bin/python3
"""Exports a small GPT-2 with real (seeded) weights to ONNX and writes
PyTorch's logits for a fixed input, so that the imported program's reference
execution can be compared with PyTorch.

usage: gpt2_reference.py SRC_ROOT OUT_DIR
writes OUT_DIR/gpt2.onnx, OUT_DIR/input_ids.npy, OUT_DIR/logits.npy
"""

import argparse
import os
import sys

import numpy as np
import torch

src_root, out = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(src_root, "python", "distir", "models"))
import gpt2  # noqa: E402

args = argparse.Namespace(preset="gpt2-test", layers=None, width=None,
                          heads=None, vocab=None, n_ctx=None, seq=8, batch=2,
                          opset=13, seed=0, arch_only=False,
                          output=os.path.join(out, "gpt2.onnx"))
gpt2.export(args)

layers, width, heads, vocab, n_ctx = gpt2.PRESETS["gpt2-test"]
torch.manual_seed(0)  # same seed, same initialization order: same weights
model = gpt2.GPT2(layers, width, heads, vocab, n_ctx, "cpu").eval()
ids = torch.from_numpy(
    np.random.default_rng(3).integers(0, vocab, (2, 8)).astype(np.int64))
with torch.no_grad():
    logits = model(ids).numpy()
np.save(os.path.join(out, "input_ids.npy"), ids.numpy())
np.save(os.path.join(out, "logits.npy"), logits)
