#!/usr/bin/env python3
"""PyTorch DDP (gloo) baseline for bench/exec: the training step of the GPT-2
model of python/distir/models/gpt2.py (the same module DistIR imports),
cross-entropy over the vocabulary, data parallel over RANKS processes with
one intra-op thread each; gradients all-reduced by DDP, SGD update. Prints
the median and minimum step time of STEPS steps after WARMUP, from rank 0."""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python", "distir", "models"))
import gpt2  # noqa: E402


def worker(rank, args):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(args.port))
    dist.init_process_group("gloo", rank=rank, world_size=args.ranks)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(
        gpt2.GPT2(args.layers, args.width, args.heads, args.vocab, args.seq))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    local = args.batch // args.ranks
    ids = torch.randint(0, args.vocab, (local, args.seq))
    target = torch.randint(0, args.vocab, (local, args.seq))
    times = []
    for step in range(args.warmup + args.steps):
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=False)
        logits = model(ids)
        loss = F.cross_entropy(logits.reshape(-1, args.vocab),
                               target.reshape(-1))
        loss.backward()
        optimizer.step()
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
    parser.add_argument("--layers", type=int, default=1)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=512)
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--port", type=int, default=29518)
    args = parser.parse_args()
    mp.spawn(worker, args=(args,), nprocs=args.ranks, join=True)


if __name__ == "__main__":
    main()
