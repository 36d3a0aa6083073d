#!/usr/bin/env python3
"""Checks that resharding plans preserve values: runs `distir-reshard` with the
given options (plus --emit and --format json), fills a random tensor, hands
each source device its tile, runs the chosen plan (@reshard), the naive plan
(@reshard_naive), the dist.reshard op (@reshard_op, the reference executor's
own semantics) and that op lowered by dist-lower-reshard with distir-run, and
compares every destination device's result with its tile of the tensor (bit
for bit: a resharding only copies).

    check-reshard.py --work DIR -- --src-mesh 2x4 --dst-mesh 3x4 \\
        --src-sharding S0RR --dst-sharding S0RR --shape 12x4x2 [...]

Prints one line per plan and exits non-zero if any differs.
"""

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from distir_checks import run  # noqa: E402


def box_slice(box):
    return tuple(slice(lo, hi) for lo, hi in box)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", required=True, help="scratch directory")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("reshard_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    extra = [a for a in args.reshard_args if a != "--"]
    os.makedirs(args.work, exist_ok=True)
    program = os.path.join(args.work, "plan.mlir")
    report = json.loads(run(["distir-reshard", *extra, "--emit", program,
                             "--format", "json"]))
    shape = report["shape"]
    rng = np.random.default_rng(args.seed)
    dtype = {"f32": np.float32, "f64": np.float64}[report["dtype"]]
    full = rng.standard_normal(shape).astype(dtype)
    inputs = []
    for p, tile in enumerate(report["source_tiles"]):
        path = os.path.join(args.work, f"src{p}.npy")
        np.save(path, np.ascontiguousarray(full[box_slice(tile["box"])]))
        inputs += ["--input", f"src{p}={path}"]
    # The dist.reshard op itself, and as dist-lower-reshard plans it.
    lowered = os.path.join(args.work, "lowered.mlir")
    run(["distir-opt", program, "--dist-lower-reshard", "-o", lowered])
    ok = True
    for name, path, entry in (("reshard", program, "reshard"),
                              ("reshard_naive", program, "reshard_naive"),
                              ("reshard_op", program, "reshard_op"),
                              ("reshard_op lowered", lowered, "reshard_op")):
        out = os.path.join(args.work, name.replace(" ", "_"))
        run(["distir-run", path, "--entry", entry, "--output-dir", out,
             *inputs])
        listing = json.load(open(os.path.join(out, "outputs.json")))
        files = {o["name"]: o["file"] for o in listing}
        wrong = []
        for q, tile in enumerate(report["destination_tiles"]):
            got = np.load(os.path.join(out, files[f"dst{q}"]))
            want = full[box_slice(tile["box"])]
            if got.shape != want.shape or not np.array_equal(got, want):
                wrong.append(f"dst{q} (device {tile['device']})")
        label = {"reshard": report["chosen"]["strategy"],
                 "reshard_naive": "naive", "reshard_op": "dist.reshard",
                 "reshard_op lowered": "dist-lower-reshard"}[name]
        if wrong:
            ok = False
            print(f"{name} ({label}): DIFFERENT at " + ", ".join(wrong))
        else:
            print(f"{name} ({label}): equal on "
                  f"{len(report['destination_tiles'])} destination tiles")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
