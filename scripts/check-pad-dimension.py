#!/usr/bin/env python3
"""Checks dist-pad-dimension's soundness on the ONNX backend node tests: each
model is imported, and for each of its first floating-point inputs and each
of their first two dimensions, the dimension is padded by 3 with
dist-pad-dimension. A padding either is refused with one error line, or the
padded program's outputs under distir-run equal the original's on the same
pseudo-random inputs. Prints one line per model with something other than
equal or refused, and a summary; exits non-zero on any difference, crash or
run failure.

usage: check-pad-dimension.py --bin build/bin --work DIR
       [--root /usr/share/libonnx-testdata/data/node] [--filter REGEX]
       [--inputs 3] [--dims 2]
"""

import argparse
import glob
import os
import re
import subprocess
import sys

import numpy as np


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def same(a, b):
    x, y = np.load(a), np.load(b)
    if x.shape != y.shape or x.dtype != y.dtype:
        return False
    if x.dtype.kind == "f":
        return np.allclose(x, y, rtol=1e-5, atol=1e-6, equal_nan=True)
    return np.array_equal(x, y)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--root", default="/usr/share/libonnx-testdata/data/node")
    p.add_argument("--filter", default="")
    p.add_argument("--inputs", type=int, default=3)
    p.add_argument("--dims", type=int, default=2)
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    counts = dict(models=0, padded=0, equal=0, refused=0, bad=0)
    pattern = re.compile(a.filter)
    for d in sorted(glob.glob(os.path.join(a.root, "*"))):
        name = os.path.basename(d)
        model = os.path.join(d, "model.onnx")
        if not pattern.search(name) or not os.path.exists(model):
            continue
        src = os.path.join(a.work, name + ".mlir")
        if run([a.bin + "/distir-translate", "--import-onnx", model, "-o",
                src]).returncode != 0:
            continue
        signature = re.search(r"func\.func @\w+\((.*?)\)\s*->",
                              open(src).read(), re.S)
        args = re.findall(r"%arg(\d+): tensor<([0-9x]+)x(?:f16|f32|f64)",
                          signature.group(1)) if signature else []
        ref = os.path.join(a.work, name + "-ref")
        if not args or run([a.bin + "/distir-run", src, "--random-inputs",
                            "1", "--output-dir", ref]).returncode != 0:
            continue
        counts["models"] += 1
        for arg, shape in args[:a.inputs]:
            sizes = [int(s) for s in shape.split("x")]
            for dim in range(min(a.dims, len(sizes))):
                label = f"{name} arg {arg} dim {dim}"
                out = os.path.join(a.work, f"{name}-{arg}-{dim}.mlir")
                r = run([a.bin + "/distir-opt", src,
                         f"--dist-pad-dimension=arg={arg} dim={dim} "
                         f"size={sizes[dim] + 3}", "-o", out])
                if r.returncode != 0:
                    errors = [l for l in r.stderr.splitlines()
                              if "error:" in l]
                    if len(errors) == 1 and "Stack dump" not in r.stderr:
                        counts["refused"] += 1
                    else:
                        counts["bad"] += 1
                        print(f"{label}: CRASH or not one error line\n"
                              f"{r.stderr[-400:]}")
                    continue
                counts["padded"] += 1
                got = os.path.join(a.work, f"{name}-{arg}-{dim}-out")
                r = run([a.bin + "/distir-run", out, "--random-inputs", "1",
                         "--output-dir", got])
                if r.returncode != 0:
                    counts["bad"] += 1
                    print(f"{label}: the padded program fails\n"
                          f"{r.stderr[-400:]}")
                    continue
                expected = sorted(glob.glob(ref + "/output_*.npy"))
                actual = sorted(glob.glob(got + "/output_*.npy"))
                if len(expected) == len(actual) and all(
                        same(x, y) for x, y in zip(expected, actual)):
                    counts["equal"] += 1
                else:
                    counts["bad"] += 1
                    print(f"{label}: DIFFERENT")
    print(f"{counts['models']} models: {counts['padded']} paddings, "
          f"{counts['equal']} equal, {counts['refused']} refused with one "
          f"error, {counts['bad']} different or failed")
    return 0 if counts["bad"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
