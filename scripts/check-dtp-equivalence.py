#!/usr/bin/env python3
"""Checks that dist-dtp preserves semantics: for every (dp, tp) grid and both
device mappings, distir-run's outputs of the distributed program equal those
of the sequential one on the same pseudo-random inputs.

usage: check-dtp-equivalence.py --program P.mlir --entry NAME --work DIR
       [--degrees 1,2,4] [--max-devices 8] [--seed 3]
"""

import argparse
import glob
import os
import subprocess
import sys

import numpy as np


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(" ".join(cmd) + "\n" + proc.stderr)
    return proc.stdout


def outputs(directory):
    return [np.load(f) for f in sorted(glob.glob(os.path.join(directory, "*.npy")))]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--program", required=True)
    p.add_argument("--entry", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--degrees", default="1,2,4,8")
    p.add_argument("--max-devices", type=int, default=8)
    p.add_argument("--seed", type=int, default=3)
    a = p.parse_args()
    seed = str(a.seed)
    ref_dir = os.path.join(a.work, "sequential")
    run(["distir-run", a.program, "--entry", a.entry, "--random-inputs", seed,
         "--output-dir", ref_dir])
    reference = outputs(ref_dir)
    degrees = [int(d) for d in a.degrees.split(",")]
    total = equal = 0
    for dp in degrees:
        for tp in degrees:
            if dp * tp > a.max_devices:
                continue
            for mapping in ("tp-inner", "dp-inner"):
                if dp == 1 or tp == 1:
                    if mapping == "dp-inner":
                        continue  # same device ids as tp-inner
                total += 1
                name = f"dp{dp}-tp{tp}-{mapping}"
                prog = os.path.join(a.work, name + ".mlir")
                run(["distir-opt", a.program,
                     f"--dist-dtp=dp={dp} tp={tp} mapping={mapping}",
                     "--dist-verify-placement", "--canonicalize", "--cse",
                     "--dist-verify-placement", "-o", prog])
                out_dir = os.path.join(a.work, name)
                run(["distir-run", prog, "--entry", a.entry, "--random-inputs",
                     seed, "--output-dir", out_dir])
                got = outputs(out_dir)
                ok = len(got) == len(reference) and all(
                    g.shape == r.shape and np.allclose(g, r, rtol=1e-4, atol=1e-5)
                    for g, r in zip(got, reference))
                equal += ok
                if not ok:
                    print(f"{name}: DIFFERENT")
    print(f"{total} configurations, {equal} equal, {total - equal} different")
    return 0 if equal == total else 1


if __name__ == "__main__":
    sys.exit(main())
