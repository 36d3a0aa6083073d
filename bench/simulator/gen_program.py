#!/usr/bin/env python3
"""Writes a synthetic dist program with about N ops for simulator benchmarks.

Four devices each run a chain of elementwise adds and matmuls; every 8 steps
the devices all-reduce their current value and device 0 sends to device 1,
so the simulator exercises compute, collectives, point-to-point transfers,
liveness and the static memory plan.

usage: gen_program.py N > prog.mlir
"""

import sys


def main():
    n = int(sys.argv[1])
    devices = 4
    t = lambda d: f"tensor<64x64xf32, #dist.device<{d}>>"
    lines = []
    args = ", ".join(f"%x{d}: {t(d)}" for d in range(devices))
    rets = ", ".join(t(d) for d in range(devices))
    lines.append(f"func.func @bench({args}) -> ({rets}) {{")
    cur = [f"%x{d}" for d in range(devices)]
    count = 0
    step = 0
    while count < n:
        for d in range(devices):
            a = f"%a{step}_{d}"
            lines.append(f"  {a} = arith.addf {cur[d]}, {cur[d]} : {t(d)}")
            e = f"%e{step}_{d}"
            lines.append(f"  {e} = tensor.empty() : {t(d)}")
            m = f"%m{step}_{d}"
            lines.append(f"  {m} = linalg.matmul ins({a}, {cur[d]} : {t(d)}, {t(d)}) "
                         f"outs({e} : {t(d)}) -> {t(d)}")
            cur[d] = m
            count += 3
        if step % 8 == 7:
            r = f"%r{step}"
            lines.append(f"  {r}:{devices} = dist.all_reduce sum {', '.join(cur)} : "
                         f"{', '.join(t(d) for d in range(devices))}")
            cur = [f"{r}#{d}" for d in range(devices)]
            s = f"%s{step}"
            lines.append(f"  {s} = dist.send {cur[0]} : {t(0)} -> {t(1)}")
            lines.append(f"  %q{step} = arith.addf {s}, {cur[1]} : {t(1)}")
            cur[1] = f"%q{step}"
            count += 3
        step += 1
    lines.append(f"  return {', '.join(cur)} : {rets}")
    lines.append("}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
