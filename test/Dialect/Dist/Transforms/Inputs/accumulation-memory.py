"""Simulated memory of dist-dtp's pipelines as the microbatch count varies.

Usage: accumulation-memory.py BIN_DIR WORK_DIR

Two properties of real pipeline engines (Megatron, DeepSpeed), each printed
as one line for FileCheck:

1. At a fixed batch, more microbatches never raise the peak: gradients are
   accumulated in place, so each stage holds one gradient buffer per weight
   whatever K, and each microbatch's activations are smaller.
2. At a fixed microbatch size, 1F1B holds at most P microbatches of
   activations on a stage, so its transient memory (peak minus the resident
   arguments, which include the whole batch) stops growing once K >= P;
   GPipe holds all K, so its transient memory grows with K.
"""

import json
import os
import subprocess
import sys

BIN, WORK = sys.argv[1], sys.argv[2]
LAYERS, DIM, PP = 4, 64, 2


def tool(name, *args):
    return subprocess.run([os.path.join(BIN, name), *args], check=True,
                          capture_output=True, text=True).stdout


def simulate(batch, options):
    """Per device: (peak bytes, resident bytes) of the dist-dtp step."""
    model = os.path.join(WORK, f"mlp-{batch}.mlir")
    if not os.path.exists(model):
        tool("distir-translate", "--build-mlp", "--layers", str(LAYERS),
             "--dim", str(DIM), "--batch", str(batch), "--training", "-o",
             model)
    step = os.path.join(WORK, "step.mlir")
    tool("distir-opt", model, f"--dist-dtp={options}", "-o", step)
    report = json.loads(tool("distir-sim", step, "--entry", "mlp_dtp",
                             "--cluster", "distir-uniform:devices=2",
                             "--format", "json"))
    return [(d["peak_bytes"], d["resident_bytes"]) for d in report["devices"]]


# 1. Fixed batch 128: peak per device for K = 1, 2, 4, 8.
for schedule in ("gpipe", "1f1b", "eager-1f1b", "pipedream"):
    peaks = [[p for p, _ in simulate(128, f"pp={PP} microbatches={k} "
                                         f"schedule={schedule}")]
             for k in (1, 2, 4, 8)]
    ok = all(all(b <= a for a, b in zip(prev, cur))
             for prev, cur in zip(peaks, peaks[1:]))
    print(f"fixed batch, {schedule}: peak non-increasing in K: {ok}")

# 2. Fixed microbatch size 32: transient bytes of stage 0 (device 0), which
# holds the most microbatches in flight, for K = 2, 4, 8.
for schedule in ("1f1b", "gpipe"):
    transient = []
    for k in (2, 4, 8):
        peak, resident = simulate(32 * k, f"pp={PP} microbatches={k} "
                                         f"schedule={schedule}")[0]
        transient.append(peak - resident)
    constant = transient[0] == transient[1] == transient[2]
    growing = transient[0] < transient[1] < transient[2]
    print(f"fixed microbatch, {schedule}: transient constant in K: "
          f"{constant}, growing: {growing}")

# 3. One stage (gradient accumulation as in PyTorch DDP): each microbatch's
# forward is followed by its backward, so at a fixed batch the transient
# memory falls as K grows (one microbatch's activations at a time), and at
# a fixed microbatch size it is constant.
fixed_batch = []
for k in (1, 2, 4, 8):
    peak, resident = simulate(128, f"dp=2 microbatches={k}")[0]
    fixed_batch.append(peak - resident)
falling = all(b < a for a, b in zip(fixed_batch, fixed_batch[1:]))
fixed_micro = []
for k in (2, 4, 8):
    peak, resident = simulate(32 * k, f"dp=2 microbatches={k}")[0]
    fixed_micro.append(peak - resident)
print(f"one stage, fixed batch: transient falling in K: {falling}; "
      f"fixed microbatch: transient constant in K: "
      f"{fixed_micro[0] == fixed_micro[1] == fixed_micro[2]}")
