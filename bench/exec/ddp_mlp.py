#!/usr/bin/env python3
"""PyTorch DDP (gloo) baseline for bench/exec: the MLP training step that
`distir-translate --build-mlp --layers L --dim D --batch B --training` builds
(bias-free Linear + ReLU per layer, mean squared error), data parallel over
RANKS processes with one intra-op thread each, gradients all-reduced by DDP.
Prints the median and minimum step time (forward, loss, backward with the
all-reduce) of STEPS steps after WARMUP, from rank 0."""
import argparse

import torch
from torch import nn

import ddp_common


def worker(rank, args):
    layers = []
    for _ in range(args.layers):
        layers += [nn.Linear(args.dim, args.dim, bias=False), nn.ReLU()]
    model = nn.parallel.DistributedDataParallel(nn.Sequential(*layers))
    local = args.batch // args.ranks
    x = torch.randn(local, args.dim)
    target = torch.randn(local, args.dim)
    loss_fn = nn.MSELoss()

    def step():
        model.zero_grad(set_to_none=False)
        loss_fn(model(x), target).backward()

    ddp_common.time_steps(rank, args, step)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--batch", type=int, default=64)
    ddp_common.add_options(parser, port=29517)
    ddp_common.run(worker, parser.parse_args())


if __name__ == "__main__":
    main()
