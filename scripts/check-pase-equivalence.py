#!/usr/bin/env python3
"""Checks that dist-pase{emit=true} preserves semantics: the optimal strategy
and N random strategies (one random configuration per op) for each device
count, each run by distir-run on the same pseudo-random inputs as the
sequential program, must give the same outputs. The sequential outputs are
those of --reference when given (the program before a rewrite that produced
P: the partitioned programs of P are compared with it), else of P.

usage: check-pase-equivalence.py --program P.mlir --entry NAME --work DIR
       --cluster C [--devices 2,4,8] [--random 4] [--seed 3]
       [--reference R.mlir]
"""

import argparse
import os
import sys

from distir_checks import check_transformed, outputs, run


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--program", required=True)
    p.add_argument("--entry", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--cluster", required=True)
    p.add_argument("--devices", default="2,4,8")
    p.add_argument("--random", type=int, default=4)
    p.add_argument("--seed", type=int, default=3)
    p.add_argument("--reference", default=None)
    a = p.parse_args()
    seed = str(a.seed)
    ref_dir = os.path.join(a.work, "sequential")
    run(["distir-run", a.reference or a.program, "--entry", a.entry, "--random-inputs", seed,
         "--output-dir", ref_dir])
    reference = outputs(ref_dir)
    total = equal = 0
    for devices in [int(d) for d in a.devices.split(",")]:
        for pick in ["optimal"] + [f"random:{i}" for i in range(a.random)]:
            options = f"devices={devices} cluster={a.cluster} emit=true pick={pick}"
            total += 1
            name = f"d{devices}_{pick.replace(':', '')}"
            prog = os.path.join(a.work, name + ".mlir")
            out_dir = os.path.join(a.work, name)
            equal += check_transformed(a.program, f"--dist-pase={options}",
                                       a.entry, seed, prog, out_dir,
                                       reference, options)
    print(f"{total} strategies, {equal} equal, {total - equal} different")
    return 0 if equal == total else 1


if __name__ == "__main__":
    sys.exit(main())
