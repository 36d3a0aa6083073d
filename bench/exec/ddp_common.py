"""Shared by the PyTorch DDP baselines of bench/exec: process-group set-up,
the timed step loop and its report line, and the common options."""
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def add_options(parser, port):
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--port", type=int, default=port)


def run(worker, args):
    """Starts args.ranks processes running worker(rank, args)."""
    mp.spawn(_main, args=(worker, args), nprocs=args.ranks, join=True)


def _main(rank, worker, args):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(args.port))
    dist.init_process_group("gloo", rank=rank, world_size=args.ranks)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    worker(rank, args)
    dist.destroy_process_group()


def time_steps(rank, args, step):
    """Runs step() warmup + steps times (a barrier ends each); rank 0 prints
    the median and minimum of the timed ones."""
    times = []
    for i in range(args.warmup + args.steps):
        start = time.perf_counter()
        step()
        dist.barrier()
        if i >= args.warmup:
            times.append(time.perf_counter() - start)
    if rank == 0:
        print("pytorch ddp gloo: %d ranks, %d threads each: step time over %d "
              "steps: median %.3f ms, min %.3f ms" %
              (args.ranks, args.threads, len(times),
               1e3 * statistics.median(times), 1e3 * min(times)), flush=True)
