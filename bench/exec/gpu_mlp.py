#!/usr/bin/env python3
"""PyTorch baseline on one GPU for bench/exec: the MLP training step that
`distir-translate --build-mlp --layers L --dim D --batch B --training` builds
(bias-free Linear + ReLU per layer, mean squared error; forward, loss,
backward), on CUDA in eager mode. Prints the median step time of STEPS steps
after WARMUP (each step synchronized, as distir's GPU step driver does)."""
import argparse
import statistics
import time

import torch
from torch import nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    layers = []
    for _ in range(args.layers):
        layers += [nn.Linear(args.dim, args.dim, bias=False), nn.ReLU()]
    model = nn.Sequential(*layers).cuda()
    x = torch.randn(args.batch, args.dim, device="cuda")
    target = torch.randn(args.batch, args.dim, device="cuda")
    loss_fn = nn.MSELoss()
    times = []
    for i in range(args.warmup + args.steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        model.zero_grad(set_to_none=False)
        loss_fn(model(x), target).backward()
        torch.cuda.synchronize()
        if i >= args.warmup:
            times.append((time.perf_counter() - t0) * 1e3)
    print("pytorch-gpu mlp %dx%d batch %d: median %.3f ms" %
          (args.layers, args.dim, args.batch, statistics.median(times)))


if __name__ == "__main__":
    main()
