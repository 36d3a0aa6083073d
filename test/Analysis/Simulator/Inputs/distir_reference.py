#!/usr/bin/env python3
"""Independent reference ("oracle") for DistIR's MLP training prediction.

This is an independent re-implementation of the published microsoft/dist-ir
Python simulator's prediction of latency and per-device peak memory for MLP
training with data (D), horizontal (H) and pipeline (P) parallelism and K
microbatches. It was written from scratch from dist-ir's cost functions,
D/H/P transform and PipeDream scheduler as described in
docs/design/distir-reference.md (no dist-ir code was copied). Section numbers
(§n) in the comments refer to that description. Standard library only.

Usage:
  distir_reference.py --dp D --hp H --pp P --k K --layers L --batch B --dim N
      [--dtype f32|f16] [--bandwidth-gbps 25.0] [--fix loss,sgd] [--trace]
      [--throughput 1.4e13] [--dram-bandwidth 9e11] [--skip-allgathers]

input_dim = hidden_dim = output_dim = N. The kernel launch overhead is the
fixed constant 1e-5 s. Prints one JSON object:
  {"latency": seconds, "peak": {"<device id>": bytes}, "devices": W}
with dist-ir's device ids (1..W for W = D*H*P > 1, 0 when W == 1); --trace adds
"ops": [[device, op name, start, duration], ...] in emission order.
Configurations dist-ir cannot run are rejected with exit code 2.

--fix selects documented deviations of our C++ simulator (comma separated):
  loss  Loss/LossGrad cost KLO + (bytes(a) + bytes(z) + 4)/dram + N_out/thr
        (every input is read) instead of dist-ir's E1(labels).
  sgd   SGDOptimizer costs the sum of E2(w_i) over all its (w_i, dw_i) pairs,
        added to the timestamp one pair after another, instead of the last
        pair only.
"""
import argparse
import json
import math
import sys
from collections import defaultdict

KLO = 1e-5                   # §5: module constant; the device value is unused
BYTES_IN_GB = 1.25e8         # §5: bytes per gigabit
THR0, DRAM0 = 1.4e13, 9.0e11 # §2: d0 always gets the constants' defaults
# §5: registered input counts of SGDOptimizer and of the MPI collectives.
SGD_COUNTS = {2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256} | {512 << k for k in range(7)}
MPI_COUNTS = {2 << k for k in range(13)}  # 2, 4, ..., 8192


class Val:
    """A value of the simulated function (identity-compared, §1)."""
    __slots__ = ("name", "shape", "esize", "dev")

    def __init__(self, name, shape, esize, dev):
        self.name, self.shape, self.esize, self.dev = name, tuple(shape), esize, dev

    @property
    def n(self):
        return math.prod(self.shape)

    @property
    def size(self):  # §5: bytes; the Int32 scalar n has shape () and 4 bytes
        return self.n * self.esize


def check(a):
    """§7.8 and the registered input counts of §5; returns an error or None."""
    D, H, P, K, L, B, N = a.dp, a.hp, a.pp, a.k, a.layers, a.batch, a.dim
    if min(D, H, P, K, L, B, N) < 1:
        return "all sizes must be positive"
    for ok, msg in ((L >= 3, "mlp needs at least 3 layers"),
                    (L % P == 0, "layers must be divisible by pp"),
                    (P > 1 or K == 1, "pp == 1 requires k == 1"),
                    (H == 1 or L % 2 == 0, "hp > 1 requires an even number of layers"),
                    (D == 1 or D in MPI_COUNTS, "dp must be a power of two (MPI collectives)"),
                    (H == 1 or H in MPI_COUNTS, "hp must be a power of two (MPI collectives)"),
                    (B % (D * K) == 0, "batch must be divisible by dp * k"),
                    (N % H == 0, "dim must be divisible by hp"),
                    (2 * (L // P) in SGD_COUNTS,
                     f"SGDOptimizer has no signature for {2 * (L // P)} inputs")):
        if not ok:
            return msg
    return None


def mlp_ops(L):
    """§1: the 4L+2 ops of the single-device training function, by value name."""
    inp = lambda i: "x" if i == 0 else f"a{i - 1}"
    ops = []
    for i in range(L):
        ops += [("MatMul", [inp(i), "w" + chr(65 + i)], [f"y{i}"]),
                ("Relu", [f"y{i}"], [f"a{i}"])]
    ops += [("Loss", [f"a{L - 1}", "z", "n"], ["l"]),
            ("LossGrad", [f"a{L - 1}", "z", "n"], ["dl"])]
    dy = "dl"
    for i in reversed(range(L)):
        ops += [("ReluGrad", [f"y{i}", dy], [f"da{i}"]),
                ("MatMulGrad", [inp(i), "w" + chr(65 + i), f"da{i}"],
                 [f"dy{i}", "dw" + chr(65 + i)])]
        dy = f"dy{i}"
    return ops


def pipedream(stages, stage_in, stage_out, cons_stages, fn_inputs, K):
    """§4: 1F1B schedule; returns one {pipeline device: (stage, mb)} per timestep."""
    remaining = {(st, mb): sum(v not in fn_inputs for v in stage_in[st])
                 for st in range(len(stages)) for mb in range(K)}
    ready, prev, steps, done = {0: [(0, mb) for mb in range(K)]}, {}, [], 0
    while done < len(stages) * K:
        step, newly = {}, []
        for d in list(ready):
            if not ready[d]:
                continue
            bw = [c for c in ready[d] if "Grad" in stages[c[0]][1][0][0]]
            fw = [c for c in ready[d] if c not in bw]
            if prev.get(d, "bw") == "fw":
                kind, cand = ("bw", bw) if bw else ("fw", fw)
            else:
                kind, cand = ("fw", fw) if fw else ("bw", bw)
            prev[d] = kind
            st, mb = min(cand, key=lambda c: c[1])
            ready[d].remove((st, mb))
            step[d], done = (st, mb), done + 1
            for v in stage_out[st]:
                for cs in cons_stages[v]:
                    if cs != st:
                        remaining[(cs, mb)] -= 1
                        if remaining[(cs, mb)] == 0:
                            newly.append((stages[cs][0], (cs, mb)))
        for d, c in newly:  # newer scheduler: ready only after the timestep
            ready.setdefault(d, []).append(c)
        steps.append(step)
    return steps


def run(a):
    D, H, P, K, L, B, N = a.dp, a.hp, a.pp, a.k, a.layers, a.batch, a.dim
    es, W, nb, fix = (2 if a.dtype == "f16" else 4), a.dp * a.hp * a.pp, L // P, a.fix
    bw = a.bandwidth_gbps
    thr = lambda d: THR0 if d == 0 else a.throughput
    dram = lambda d: DRAM0 if d == 0 else a.dram_bandwidth
    dev = lambda i, j, s: 0 if W == 1 else 1 + i * H * P + j * P + s  # §3.1

    # §5 cost helpers (seconds), on device d.
    e1 = lambda v, d: KLO + v.esize * v.n / dram(d) + v.n / thr(d)
    e2 = lambda v, d: KLO + 2 * v.esize * v.n / dram(d) + v.n / thr(d)
    mm = lambda m, k, n, s, d: KLO + s * (m * k + k * n) / dram(d) + 2 * m * k * n / thr(d)

    ops = mlp_ops(L)
    consumed = {v for op in ops for v in op[1]}
    fn_inputs = {"x", "z", "n"} | {"w" + chr(65 + i) for i in range(L)}
    fn_outputs = [o for op in ops for o in op[2] if o not in consumed]  # §1 sinks

    # §3.2: stages fwd_0, bwd_0, fwd_1, ... as (pipeline device, ops).
    stages = []
    for s in range(P):
        stages.append((s, ops[2 * nb * s:2 * nb * (s + 1) + (2 if s == P - 1 else 0)]))
        stages.append((s, ops[len(ops) - 2 * nb * (s + 1):len(ops) - 2 * nb * s]))
    cons_stages = defaultdict(list)
    for st, (_, sops) in enumerate(stages):
        for op in sops:
            for v in op[1]:
                if st not in cons_stages[v]:
                    cons_stages[v].append(st)
    stage_in, stage_out = [], []
    for st, (_, sops) in enumerate(stages):
        made, used = {o for op in sops for o in op[2]}, []
        for op in sops:
            used += [v for v in op[1] if v not in made and v not in used]
        stage_in.append(used)
        stage_out.append([o for op in sops for o in op[2]
                          if o in fn_outputs or any(c != st for c in cons_stages[o])])
    steps = pipedream(stages, stage_in, stage_out, cons_stages, fn_inputs, K)

    prog, vals, fin, inputs = [], {}, {}, []

    def emit(kind, label, ins, outs, costs):
        prog.append((kind, label, ins, outs, costs))
        return outs

    # §3.3: the init function's outputs are the inputs of the simulated function.
    b = B // D // K
    for i in range(D):
        for j in range(H):
            d0, dl = dev(i, j, 0), dev(i, j, P - 1)
            n = Val("n", (), 4, dl)
            inputs.append(n)
            for mb in range(K):
                x, z = Val("x", (b, N), es, d0), Val("z", (b, N), es, dl)
                inputs += [x, z]
                vals[(d0, mb, "x")], vals[(dl, mb, "z")], vals[(dl, mb, "n")] = x, z, n
            for l in range(L):  # Megatron shards: dim (3 + l) % 2 (§3.3)
                shape = (N, N // H) if l % 2 == 0 else (N // H, N)
                w = Val("w" + chr(65 + l), shape, es, dev(i, j, l // nb))
                inputs.append(w)
                for mb in range(K):
                    vals[(w.dev, mb, w.name)] = w

    def compute(op, d, mb, label):
        """Emit one original op on device d for microbatch mb (§5 costs)."""
        kind, ins, outs = op
        iv = [vals[(d, mb, v)] for v in ins]
        x = iv[0]
        if kind == "MatMul":
            (m, k), n = x.shape, iv[1].shape[1]
            ov, c = [Val(outs[0], (m, n), es, d)], mm(m, k, n, es, d)
        elif kind == "MatMulGrad":  # MM(dz, w^T) + MM(x^T, dz)
            (m, k), n = x.shape, iv[1].shape[1]
            ov = [Val(outs[0], x.shape, es, d), Val(outs[1], iv[1].shape, es, d)]
            c = mm(m, n, k, es, d) + mm(k, m, n, es, d)
        elif kind == "Relu":
            ov, c = [Val(outs[0], x.shape, es, d)], e1(x, d)
        elif kind == "ReluGrad":
            ov, c = [Val(outs[0], x.shape, es, d)], e2(x, d)
        else:  # Loss / LossGrad: E1 of the labels only (§7.1), or the fix
            ov = [Val(outs[0], x.shape, es, d)]
            if "loss" in fix:
                c = KLO + (x.size + iv[1].size + iv[2].size) / dram(d) + ov[0].n / thr(d)
            else:
                c = e1(iv[1], d)
        for v in ov:
            vals[(d, mb, v.name)] = v
        return emit(kind, label, iv, ov, {d: [c]})

    def collective(kind, xs, label):
        """§5: MPIAllreduce / MPIAllgather(axis 0) with allreduce_parameters None."""
        cnt = len(xs)
        if kind == "MPIAllreduce":
            c = (2 * xs[0].size / BYTES_IN_GB / cnt) * (cnt - 1) / bw
            shape = xs[0].shape
        else:
            c = 2 * (sum(x.size for x in xs) / cnt) * (cnt - 1) / cnt / BYTES_IN_GB / bw
            shape = (sum(x.shape[0] for x in xs),) + xs[0].shape[1:]
        ys = [Val(x.name, shape, x.esize, x.dev) for x in xs]
        return emit(kind, label, xs, ys, {x.dev: [c] for x in xs})

    # §3.4: emission order of the simulated function.
    for i in range(D):
        counter = defaultdict(int)
        for step in steps:
            for s in sorted(step):  # device groups, ascending device id
                st, mb = step[s]
                for op in stages[st][1]:
                    tag = f"{op[2][0]}_dp_{i}_mb_{mb}"
                    outs = [compute(op, dev(i, j, s), mb, f"{op[0]}[{tag}_hp_{j}]")
                            for j in range(H)]
                    if H > 1 and op[0] in ("MatMul", "MatMulGrad"):  # §3.4.1b
                        counter[mb] += 1
                        if counter[mb] % 2 == 0:
                            for k, name in enumerate(op[2]):
                                if "dw" not in name:
                                    ys = collective("MPIAllreduce", [o[k] for o in outs],
                                                    f"MPIAllreduce[{name}_dp_{i}_mb_{mb}_hp_all]")
                                    for y in ys:
                                        vals[(y.dev, mb, name)] = y
                    for name in op[2]:  # §3.4.1c microbatch aggregation
                        if name not in fn_outputs:
                            continue
                        for j in range(H):
                            d, key = dev(i, j, s), (i, j, name)
                            v, lab = vals[(d, mb, name)], f"[{name}_dp_{i}_hp_{j}_all]"
                            if K == 1:
                                fin[key] = v
                                continue
                            acc, shape = fin.get(key), v.shape
                            if mb == 0:  # Identity: costs 0 but allocates a copy (§7.4)
                                kind, ins, c = "Identity", [v], 0.0
                            elif "dw" in name:
                                kind, ins, c = "Add", [acc, v], e2(acc, d)
                            else:  # Concat on axis 0 costs KLO only
                                kind, ins, c = "Concat", [acc, v], KLO
                                shape = (acc.shape[0] + v.shape[0],) + v.shape[1:]
                            fin[key] = emit(kind, kind + lab, ins, [Val(name, shape, es, d)], {d: [c]})[0]
            if P > 1:  # §3.4.2: sends at the end of the timestep
                for s in sorted(step):
                    st, mb = step[s]
                    for j in range(H):
                        src = dev(i, j, s)
                        for name in stage_out[st]:
                            for cd in sorted({stages[cs][0] for cs in cons_stages[name]} - {s}):
                                x, dst = vals[(src, mb, name)], dev(i, j, cd)
                                c = x.size / BYTES_IN_GB / bw
                                y = emit("Send", f"Send[{name}_dp_{i}_hp_{j}_mb_{mb}_{src}->{dst}]",
                                         [x], [Val(name, x.shape, es, dst)], {src: [c], dst: [c]})[0]
                                vals[(dst, mb, name)] = y
    if D > 1:  # §3.4: DP aggregation, in function-output order, then hp index
        for name in fn_outputs:
            for j in range(H):
                if "dw" not in name and a.skip_allgathers:
                    continue
                kind = "MPIAllreduce" if "dw" in name else "MPIAllgather"
                ys = collective(kind, [fin[(i, j, name)] for i in range(D)],
                                f"{kind}[{name}_dp_all_hp_{j}]")
                for i, y in enumerate(ys):
                    fin[(i, j, name)] = y
    # §3.5: one SGDOptimizer per device holding weights, weights sorted by name.
    for i in range(D):
        for j in range(H):
            for s in range(P):
                d, layers = dev(i, j, s), range(s * nb, (s + 1) * nb)
                ws = sorted((vals[(d, 0, "w" + chr(65 + l))] for l in layers), key=lambda w: w.name)
                gs = [fin[(i, j, "d" + w.name)] for w in ws]
                costs = [e2(w, d) for w in ws] if "sgd" in fix else [e2(ws[-1], d)]
                emit("SGDOptimizer", f"SGDOptimizer[device_{d}]", ws + gs,
                     [Val(w.name + "'", w.shape, es, d) for w in ws], {d: costs})
    return simulate(prog, inputs, W, a.trace)


def simulate(prog, inputs, W, trace):
    """§6: sync, advance, allocate, free; peak and latency per device."""
    ts, live, events = defaultdict(float), defaultdict(int), []
    is_input = {id(v) for v in inputs}
    for v in inputs:
        live[v.dev] += v.size
    peak = dict(live)
    uses = defaultdict(int)
    for _, _, ins, _, _ in prog:
        for v in ins:
            uses[id(v)] += 1
    left = {}
    for kind, label, ins, outs, costs in prog:
        devs = {v.dev for v in ins + outs}
        if len(devs) > 1:  # 1. sync every device touched by the op
            m = max(ts[d] for d in devs)
            for d in devs:
                ts[d] = m
        for d, cs in costs.items():  # 2. advance (one addition per cost term)
            start = ts[d]
            for c in cs:
                ts[d] += c
            events.append([d, label, start, ts[d] - start])
        if kind != "SGDOptimizer":  # 3. allocate outputs (SGD updates in place)
            for v in outs:
                left[id(v)] = uses[id(v)]
                live[v.dev] += v.size
            for d in {v.dev for v in outs}:
                peak[d] = max(peak.get(d, 0), live[d])
        for v in ins:  # 4. free non-input values at their last use
            if id(v) in is_input:
                continue
            left[id(v)] -= 1
            if left[id(v)] == 0:
                live[v.dev] -= v.size
    out = {"latency": max(ts.values()),
           "peak": {str(d): peak[d] for d in sorted(peak)}, "devices": W}
    if trace:
        out["ops"] = events
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name in ("dp", "hp", "pp", "k", "layers", "batch", "dim"):
        p.add_argument("--" + name, type=int, required=True)
    p.add_argument("--dtype", choices=("f32", "f16"), default="f32")
    p.add_argument("--bandwidth-gbps", type=float, default=25.0)
    p.add_argument("--throughput", type=float, default=1.4e13)
    p.add_argument("--dram-bandwidth", type=float, default=9.0e11)
    p.add_argument("--skip-allgathers", action="store_true")
    p.add_argument("--fix", default="")
    p.add_argument("--trace", action="store_true")
    a = p.parse_args()
    a.fix = {f for f in a.fix.split(",") if f}
    bad = a.fix - {"loss", "sgd"}
    err = f"unknown --fix value(s): {','.join(sorted(bad))}" if bad else check(a)
    if err:
        print(f"distir_reference.py: {err}", file=sys.stderr)
        sys.exit(2)
    print(json.dumps(run(a)))


if __name__ == "__main__":
    main()
