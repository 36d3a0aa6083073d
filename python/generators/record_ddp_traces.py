#!/usr/bin/env python3
"""Runs a real data-parallel PyTorch job and records its traces.

Each rank (a process, gloo backend unless --backend, torch.set_num_threads(1))
trains an MLP or a small nn.TransformerEncoder with DistributedDataParallel,
warms up, then profiles a few iterations with torch.profiler (record_shapes
and profile_memory unless --no-shapes / --no-memory) and writes its trace
as Chrome-trace JSON in the layout of Kineto exports (what pip builds of
PyTorch write): `cpu_op` events with "Input Dims",
"Sequence number" and "Fwd thread id", `[memory]` instant events, the
ProfilerStep#N iteration markers and "distributedInfo" (backend, rank,
world_size). Debian's PyTorch is built without Kineto and its own exporter
drops shapes and memory events, so the events are taken from the profiler
(`prof.events()`) and written here; timestamps are each process's own
profiler clock, as in a real job, which is why distir-replay aligns clocks.

With --device cuda the model and its batches live on the GPU (every rank on
GPU `rank % device_count`), the profiler also records CUDA activity, and
where PyTorch has Kineto the trace is Kineto's own export
(export_chrome_trace: kernels on CUDA streams, cuda_runtime launches with
their correlation ids, NCCL kernels); without Kineto it stops (a trace of
the launches alone would be replayed as if they were the work). --backend
nccl needs --device cuda. Each iteration ends with the device synchronized.
--destroy-before-stop closes the last iteration's marker, then destroys the
process group before the profiler stops (a CUPTI teardown crash with
PyTorch 2.11; the GPU traces of test/Replay/Inputs/gpu-mlp-2 and
bench/replay/gpu were recorded before the marker was closed first, so their
last iteration also holds that barrier).

Also writes run.json: the configuration (the batch per rank as run) and the
wall-clock step time measured without the profiler (the same number of
iterations, each ending with the device synchronized as in the profiled
ones, timed with perf_counter between barriers; the GPU traces above were
timed with one synchronization after the last iteration).

Usage:
  record_ddp_traces.py --out DIR [--model mlp|transformer] [--ranks N]
                       [--iterations N] [--bucket-cap-mb MB] [--gzip]
                       [--accumulate K] [--checkpoint S]
                       [--device cpu|cuda] [--backend gloo|nccl] [--batch N]
                       [--no-shapes] [--no-memory] [--destroy-before-stop]
                       [--warmup N]
                       [--legacy-export] [--no-trace]

Used for distir-replay's fixtures (test/Replay/Inputs) and bench/replay.
"""

import argparse
import datetime
import gzip
import json
import os
import socket
import sys
import time


def build_model(name, torch, nn, size=None):
    """The model and a batch of `size` samples (64 for the MLP, 8 sequences
    of 32 tokens for the transformer unless given)."""
    torch.manual_seed(0)
    if name == "mlp":
        layers = []
        for _ in range(6):
            layers += [nn.Linear(512, 512), nn.ReLU()]
        model = nn.Sequential(*layers, nn.Linear(512, 10))

        def batch():
            n = size or 64
            return torch.randn(n, 512), torch.randint(0, 10, (n,))

        return model, batch
    if name == "transformer":

        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(1000, 128)
                layer = nn.TransformerEncoderLayer(128, 4, 256, dropout=0.0,
                                                   batch_first=True)
                self.encoder = nn.TransformerEncoder(layer, 2)
                self.head = nn.Linear(128, 1000)

            def forward(self, tokens):
                return self.head(self.encoder(self.embed(tokens)))

        def batch():
            n = size or 8
            tokens = torch.randint(0, 1000, (n, 32))
            return tokens, torch.randint(0, 1000, (n * 32,))

        return Encoder(), batch
    raise SystemExit(f"unknown model '{name}' (expected mlp or transformer)")


def checkpointed(model, segments, torch, nn):
    """The MLP's layers run under activation checkpointing in `segments`
    pieces (torch.utils.checkpoint.checkpoint_sequential)."""
    from torch.utils.checkpoint import checkpoint_sequential
    class Wrapper(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = model

        def forward(self, x):
            # The input needs a gradient for the (reentrant: torch 1.13's
            # only kind here) checkpoint to run its segments' backward.
            return checkpoint_sequential(self.layers, segments,
                                         x.requires_grad_())

    return Wrapper()


def trace_events(events, pid):
    """Kineto-layout events from the profiler's FunctionEvents.

    Without Kineto the profiler attributes each allocation and release to
    the op that made it (self_cpu_memory_usage) and keeps only the others as
    "[memory]" events; the net change of each op becomes one "[memory]"
    instant at the op's end, so the running total is exact at op
    boundaries."""
    out = []
    changes = []
    step = 0
    for e in sorted(events, key=lambda e: (e.time_range.start, e.id)):
        if e.name == "[memory]":
            changes.append((e.time_range.start, e.thread, e.cpu_memory_usage))
            continue
        if e.self_cpu_memory_usage:
            changes.append((e.time_range.end, e.thread,
                            e.self_cpu_memory_usage))
        name = e.name
        if name == "ProfilerStep*":
            # Kineto names the iteration markers ProfilerStep#N.
            name = f"ProfilerStep#{step}"
            step += 1
        args = {"Input Dims": e.input_shapes}
        if e.sequence_nr >= 0:
            args["Sequence number"] = e.sequence_nr
            args["Fwd thread id"] = e.fwd_thread
        out.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": pid,
                    "tid": e.thread, "ts": e.time_range.start,
                    "dur": e.time_range.end - e.time_range.start,
                    "args": args})
    allocated = 0
    for time, thread, size in sorted(changes, key=lambda c: c[0]):
        allocated += size
        out.append({"ph": "i", "s": "t", "cat": "cpu_instant_event",
                    "name": "[memory]", "pid": pid, "tid": thread,
                    "ts": time,
                    "args": {"Device Type": 0, "Device Id": -1,
                             "Bytes": size, "Total Allocated": allocated}})
    return out


def finish(dist):
    """Ends the rank. gloo's destroy_process_group sometimes hangs when the
    other ranks have already left, which leaves mp.spawn waiting forever:
    meet once more, then exit."""
    dist.barrier()
    leave()


def leave():
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def run_rank(rank, opts):
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(opts.port)
    cuda = opts.device == "cuda"
    if cuda:
        torch.cuda.set_device(rank % torch.cuda.device_count())
    dist.init_process_group(opts.backend, rank=rank, world_size=opts.ranks,
                            timeout=datetime.timedelta(seconds=120))
    model, batch = build_model(opts.model, torch, nn, opts.batch)
    if opts.checkpoint:
        model = checkpointed(model, opts.checkpoint, torch, nn)
    if cuda:
        model = model.cuda()
        ddp = DDP(model, device_ids=[torch.cuda.current_device()],
                  bucket_cap_mb=opts.bucket_cap_mb)
    else:
        ddp = DDP(model, bucket_cap_mb=opts.bucket_cap_mb)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    inputs, target = batch()
    if cuda:
        inputs, target = inputs.cuda(), target.cuda()

    def sync():
        if cuda:
            torch.cuda.synchronize()
    k = opts.accumulate
    if inputs.shape[0] % k:
        raise SystemExit(f"--accumulate {k} does not divide the batch "
                         f"({inputs.shape[0]})")
    micro = [(x, t) for x, t in zip(inputs.chunk(k), target.chunk(k))]

    def step():
        optimizer.zero_grad()
        # Gradient accumulation: the first k - 1 microbatches without
        # DDP's all-reduces (no_sync), the last one reduces the sum; each
        # loss scaled by 1/k, so that the gradients are the whole batch's.
        for index, (x, t) in enumerate(micro):
            if index < k - 1:
                with ddp.no_sync():
                    out = ddp(x)
                    (loss_fn(out.reshape(-1, out.shape[-1]), t) / k).backward()
            else:
                out = ddp(x)
                (loss_fn(out.reshape(-1, out.shape[-1]), t) / k).backward()
        optimizer.step()

    for _ in range(opts.warmup):
        step()
    # Wall-clock step time without the profiler.
    sync()
    dist.barrier()
    begin = time.perf_counter()
    for _ in range(opts.iterations):
        step()
        sync()
    dist.barrier()
    unprofiled = (time.perf_counter() - begin) / opts.iterations

    times = [None] * opts.ranks
    dist.all_gather_object(times, unprofiled)
    if rank == 0:
        with open(os.path.join(opts.out, "run.json"), "w") as f:
            json.dump({"model": opts.model, "ranks": opts.ranks,
                       "batch": inputs.shape[0],
                       "iterations": opts.iterations,
                       "bucket_cap_mb": opts.bucket_cap_mb,
                       "accumulate": opts.accumulate,
                       "checkpoint_segments": opts.checkpoint,
                       "threads_per_rank": 1, "backend": opts.backend,
                       "device": opts.device,
                       "unprofiled_step_s": max(times)}, f, indent=1)
    if opts.no_trace:
        finish(dist)

    captured = []
    name = os.path.join(opts.out, f"rank{rank}.json")
    kineto = cuda and torch.autograd.kineto_available()

    def ready(prof):
        if kineto:
            # Kineto's own export: GPU activity, correlation ids and the
            # distributedInfo block as users' traces have them.
            prof.export_chrome_trace(name)
            return
        captured.append(prof.events())
        if opts.legacy_export:
            # The profiler's own export (the legacy layout without Kineto).
            legacy = os.path.join(opts.out, f"rank{rank}.legacy.json")
            prof.export_chrome_trace(legacy)
            with open(legacy, "rb") as f, gzip.open(legacy + ".gz", "wb") as g:
                g.write(f.read())
            os.remove(legacy)

    schedule = torch.profiler.schedule(wait=0, warmup=1,
                                       active=opts.iterations)
    activities = [torch.profiler.ProfilerActivity.CPU]
    if cuda:
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(
            activities=activities,
            schedule=schedule, record_shapes=opts.shapes,
            profile_memory=opts.memory, on_trace_ready=ready) as prof:
        for index in range(opts.iterations + 1):
            step()
            sync()
            # With --destroy-before-stop the last iteration is closed by
            # the profiler's exit, after the process group is gone.
            if not opts.destroy_before_stop or index < opts.iterations:
                prof.step()
        if opts.destroy_before_stop:
            # The last iteration's marker stays open until the profiler
            # stops: close it, so that the barrier is not part of it.
            marker = getattr(prof, "step_rec_fn", None)
            if marker is not None:
                marker.__exit__(None, None, None)
                prof.step_rec_fn = None
            dist.barrier()
            dist.destroy_process_group()
    if kineto:
        with open(name) as f:
            text = f.read()
        os.remove(name)
    else:
        trace = {"schemaVersion": 1,
                 "distributedInfo": {"backend": opts.backend, "rank": rank,
                                     "world_size": opts.ranks},
                 "traceEvents": trace_events(captured[0], os.getpid())}
        text = json.dumps(trace, separators=(",", ":"))
    if opts.gzip:
        with gzip.open(name + ".gz", "wt") as f:
            f.write(text)
    else:
        with open(name, "w") as f:
            f.write(text)
    if opts.destroy_before_stop:
        leave()
    finish(dist)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--model", default="mlp",
                        choices=["mlp", "transformer"])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--bucket-cap-mb", type=float, default=1.0)
    parser.add_argument("--accumulate", type=int, default=1,
                        help="microbatches per iteration (gradient "
                        "accumulation, DDP no_sync for all but the last)")
    parser.add_argument("--checkpoint", type=int, default=0,
                        help="activation checkpointing of the MLP in this "
                        "many segments")
    parser.add_argument("--batch", type=int, default=None,
                        help="samples per rank and iteration (default: 64 "
                        "for the MLP, 8 sequences for the transformer)")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--backend", default="gloo", choices=["gloo", "nccl"])
    parser.add_argument("--shapes", default=True,
                        action=argparse.BooleanOptionalAction,
                        help="record input shapes (gradient sizes)")
    parser.add_argument("--memory", default=True,
                        action=argparse.BooleanOptionalAction,
                        help="record allocations (peak memory)")
    parser.add_argument("--destroy-before-stop", action="store_true",
                        help="destroy the process group before the "
                        "profiler stops (its threads raced CUPTI's "
                        "teardown: SIGSEGV in stop_trace, torch 2.11 + "
                        "CUDA 13)")
    parser.add_argument("--gzip", action="store_true")
    parser.add_argument("--no-trace", action="store_true",
                        help="only time the iterations (run.json)")
    parser.add_argument("--legacy-export", action="store_true",
                        help="also write the profiler's own export "
                        "(rankN.legacy.json.gz)")
    opts = parser.parse_args()
    if opts.accumulate < 1:
        parser.error("--accumulate must be at least 1")
    if opts.checkpoint < 0:
        parser.error("--checkpoint must not be negative")
    if opts.batch is not None and opts.batch < 1:
        parser.error("--batch must be at least 1")
    if opts.backend == "nccl" and opts.device != "cuda":
        parser.error("--backend nccl needs --device cuda")
    if opts.device == "cuda":
        import torch
        if not torch.cuda.is_available():
            parser.error("--device cuda: PyTorch sees no CUDA device")
        if not torch.autograd.kineto_available():
            parser.error("--device cuda needs a PyTorch with Kineto (without "
                         "it the trace has no CUDA activity)")
    if opts.checkpoint and opts.model != "mlp":
        parser.error("--checkpoint needs --model mlp")
    opts.port = free_port()
    os.makedirs(opts.out, exist_ok=True)
    import torch.multiprocessing as mp
    mp.spawn(run_rank, args=(opts,), nprocs=opts.ranks)


if __name__ == "__main__":
    sys.exit(main())
