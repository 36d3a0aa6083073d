#!/usr/bin/env python3
"""PyTorch DDP (gloo) baseline for bench/exec: the MLP training step that
`distir-translate --build-mlp --layers L --dim D --batch B --training` builds
(bias-free Linear + ReLU per layer, mean squared error), data parallel over
RANKS processes with one intra-op thread each, gradients all-reduced by DDP.
Prints the median and minimum step time (forward, loss, backward with the
all-reduce) of STEPS steps after WARMUP, from rank 0."""
import argparse
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn


def worker(rank, args):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(args.port))
    dist.init_process_group("gloo", rank=rank, world_size=args.ranks)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    layers = []
    for _ in range(args.layers):
        layers += [nn.Linear(args.dim, args.dim, bias=False), nn.ReLU()]
    model = nn.parallel.DistributedDataParallel(nn.Sequential(*layers))
    local = args.batch // args.ranks
    x = torch.randn(local, args.dim)
    target = torch.randn(local, args.dim)
    loss_fn = nn.MSELoss()
    times = []
    for step in range(args.warmup + args.steps):
        start = time.perf_counter()
        model.zero_grad(set_to_none=False)
        loss = loss_fn(model(x), target)
        loss.backward()
        dist.barrier()
        if step >= args.warmup:
            times.append(time.perf_counter() - start)
    if rank == 0:
        print("pytorch ddp gloo: %d ranks, %d threads each: step time over %d "
              "steps: median %.3f ms, min %.3f ms" %
              (args.ranks, args.threads, len(times),
               1e3 * statistics.median(times), 1e3 * min(times)), flush=True)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--port", type=int, default=29517)
    args = parser.parse_args()
    mp.spawn(worker, args=(args,), nprocs=args.ranks, join=True)


if __name__ == "__main__":
    main()
