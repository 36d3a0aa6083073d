#!/usr/bin/env python3
"""Checks dist-zero: for every dist-dtp configuration given and every ZeRO
stage, distir-run's outputs of the wrapper (`--entry`, same signature as the
plain dist-dtp program; in stage 3 it gathers the updated weight chunks)
equal those of the plain dist-dtp program on the same pseudo-random inputs,
and the simulated peak memory of the step function (`<entry>_dtp`, whose
arguments are chunks in stage 3; largest peak over devices) does not grow
from stage to stage and is lower in stage 3 than without ZeRO.

usage: check-zero.py --program P.mlir --entry NAME --work DIR
       --config "dp=2" [--config "dp=4 microbatches=2" ...] [--seed 3]
       [--memory]   (also print peak bytes per stage, device 0)
"""

import argparse
import json
import os

import numpy as np

from distir_checks import outputs, run


def close(a, b):
    # Summation order differs (reduce-scatter per microbatch), so compare
    # relative to each output's scale.
    scale = max(np.max(np.abs(a)), 1e-30)
    return a.shape == b.shape and np.max(np.abs(a - b)) <= 1e-5 * scale


def peak(prog, entry, devices):
    report = json.loads(run(["distir-sim", prog, "--entry", entry,
                             "--cluster", f"distir-uniform:devices={devices}",
                             "--format", "json"]))
    return max(d["peak_bytes"] for d in report["devices"])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--program", required=True)
    p.add_argument("--entry", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--config", action="append", required=True)
    p.add_argument("--seed", type=int, default=3)
    p.add_argument("--memory", action="store_true")
    a = p.parse_args()
    seed = str(a.seed)
    total = equal = monotone = 0
    for options in a.config:
        name = options.replace(" ", "_").replace("=", "")
        degrees = dict(o.split("=") for o in options.split())
        devices = 1
        for axis in ("dp", "tp", "pp"):
            devices *= int(degrees.get(axis, "1"))
        if "stage-tp" in degrees:  # one mesh of dp x tp_s per stage
            devices = int(degrees.get("dp", "1")) * sum(
                int(t) for t in degrees["stage-tp"].split(","))
        base = os.path.join(a.work, name + ".mlir")
        run(["distir-opt", a.program, f"--dist-dtp={options}", "-o", base])
        run(["distir-run", base, "--entry", a.entry, "--random-inputs", seed,
             "--output-dir", os.path.join(a.work, name)])
        reference = outputs(os.path.join(a.work, name))
        peaks = [peak(base, a.entry + "_dtp", devices)]
        for stage in (1, 2, 3):
            prog = os.path.join(a.work, f"{name}_zero{stage}.mlir")
            out_dir = os.path.join(a.work, f"{name}_zero{stage}")
            total += 1
            try:
                run(["distir-opt", base, f"--dist-zero=stage={stage}",
                     "--dist-verify-placement", "-o", prog])
                run(["distir-run", prog, "--entry", a.entry, "--random-inputs",
                     seed, "--output-dir", out_dir])
            except RuntimeError as e:
                print(f"{options} stage {stage}: FAILED\n{e}")
                continue
            got = outputs(out_dir)
            ok = len(got) == len(reference) and all(
                close(r, g) for r, g in zip(reference, got))
            equal += ok
            if not ok:
                print(f"{options} stage {stage}: outputs differ")
            peaks.append(peak(prog, a.entry + "_dtp", devices))
        if len(peaks) == 4:
            down = (peaks[0] >= peaks[1] >= peaks[2] >= peaks[3]
                    and peaks[3] < peaks[0])
            monotone += down
            if a.memory or not down:
                print(f"{options}: peak bytes dtp {peaks[0]} zero1 {peaks[1]} "
                      f"zero2 {peaks[2]} zero3 {peaks[3]}")
    print(f"{total} programs, {equal} equal, {total - equal} different; "
          f"{monotone} of {len(a.config)} configurations with peak memory "
          f"dtp >= zero1 >= zero2 >= zero3, zero3 < dtp")


if __name__ == "__main__":
    main()
