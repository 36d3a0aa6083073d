#!/usr/bin/env python3
"""PyTorch baseline on one GPU for bench/exec/gpu: the training steps that
bench/exec/gpu/prepare.sh compiles, in eager PyTorch on CUDA, fp32 without
TF32 (as DistIR's kernels compute):
  --model mlp:  bias-free Linear + ReLU per layer, mean squared error;
                forward, loss, backward (gradients are the step's results);
  --model gpt2: the GPT-2 module of python/distir/models/gpt2.py,
                cross-entropy, backward, SGD update.
Prints the median step time of STEPS steps after WARMUP, each step
synchronized (as DistIR's GPU step driver does)."""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
# The repository's models, or their copy in a bench/exec/gpu bundle.
sys.path.insert(0, os.path.join(HERE, "..", "..", "python", "distir", "models"))
sys.path.insert(0, os.path.join(HERE, "models"))


def mlp_step(args):
    layers = []
    for _ in range(args.layers):
        layers += [nn.Linear(args.dim, args.dim, bias=False), nn.ReLU()]
    model = nn.Sequential(*layers).cuda()
    x = torch.randn(args.batch, args.dim, device="cuda")
    target = torch.randn(args.batch, args.dim, device="cuda")

    def step():
        model.zero_grad(set_to_none=False)
        F.mse_loss(model(x), target).backward()
    return step


def gpt2_step(args):
    import gpt2
    model = gpt2.GPT2(args.layers, args.width, args.heads, args.vocab,
                      args.seq).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    ids = torch.randint(0, args.vocab, (args.batch, args.seq), device="cuda")
    target = torch.randint(0, args.vocab, (args.batch, args.seq),
                           device="cuda")

    def step():
        optimizer.zero_grad(set_to_none=False)
        logits = model(ids)
        F.cross_entropy(logits.reshape(-1, args.vocab),
                        target.reshape(-1)).backward()
        optimizer.step()
    return step


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", choices=["mlp", "gpt2"], default="mlp")
    parser.add_argument("--layers", type=int)
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--batch", type=int)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=512)
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    if args.layers is None:
        args.layers = 8 if args.model == "mlp" else 1
    if args.batch is None:
        args.batch = 64 if args.model == "mlp" else 8
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    step = mlp_step(args) if args.model == "mlp" else gpt2_step(args)
    times = []
    for i in range(args.warmup + args.steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        if i >= args.warmup:
            times.append((time.perf_counter() - t0) * 1e3)
    print("pytorch %s: median %.3f ms" % (args.model,
                                          statistics.median(times)))


if __name__ == "__main__":
    main()
