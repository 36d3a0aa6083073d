#!/usr/bin/env python3
"""PyTorch DDP (gloo) baseline for bench/exec: the training step of the GPT-2
model of python/distir/models/gpt2.py (the same module DistIR imports),
cross-entropy over the vocabulary, data parallel over RANKS processes with
one intra-op thread each; gradients all-reduced by DDP, SGD update. Prints
the median and minimum step time of STEPS steps after WARMUP, from rank 0."""
import argparse
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

import ddp_common

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python", "distir", "models"))
import gpt2  # noqa: E402


def worker(rank, args):
    model = nn.parallel.DistributedDataParallel(
        gpt2.GPT2(args.layers, args.width, args.heads, args.vocab, args.seq))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    local = args.batch // args.ranks
    ids = torch.randint(0, args.vocab, (local, args.seq))
    target = torch.randint(0, args.vocab, (local, args.seq))

    def step():
        optimizer.zero_grad(set_to_none=False)
        logits = model(ids)
        F.cross_entropy(logits.reshape(-1, args.vocab),
                        target.reshape(-1)).backward()
        optimizer.step()

    ddp_common.time_steps(rank, args, step)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", type=int, default=1)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=512)
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--batch", type=int, default=8)
    ddp_common.add_options(parser, port=29518)
    ddp_common.run(worker, parser.parse_args())


if __name__ == "__main__":
    main()
