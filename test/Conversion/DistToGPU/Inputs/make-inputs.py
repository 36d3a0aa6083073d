#!/usr/bin/env python3
"""Writes random arguments of a program's entry function for the GPU step
driver (DIR/in_K.bin, raw) and for distir-run (DIR/in_K.npy).

make-inputs.py PROGRAM.mlir FUNC DIR SEED

Floats are uniform in [-1, 1), integers (token ids, class indices) in
[0, 8); optimizer state named like dist-autodiff's is valid: Adam's second
moments (`<weight>.v`) non-negative, its step count (`step`) 3. Prints the --input options that bind the .npy files in distir-run.
"""
import re
import sys

import numpy as np

DTYPES = {"f32": np.float32, "f64": np.float64, "i64": np.int64,
          "i32": np.int32}


def main():
    program, func, outdir, seed = sys.argv[1:5]
    text = open(program).read()
    m = re.search(r"func\.func @%s\((.*?)\)\s*->" % re.escape(func), text,
                  re.S)
    if not m:
        sys.exit("error: no function @%s in %s" % (func, program))
    rng = np.random.default_rng(int(seed))
    options = []
    # One argument per "%argN: type {attributes}" (the name, if any, says
    # what an optimizer state is).
    for k, arg in enumerate(re.split(r"%arg\d+:", m.group(1))[1:]):
        t = re.search(r"tensor<((?:\d+x)*)([a-z0-9]+)", arg)
        name = re.search(r'dist\.name = "([^"]*)"', arg)
        name = name.group(1) if name else ""
        shape = [int(d) for d in t.group(1).split("x") if d]
        dtype = DTYPES[t.group(2)]
        if name == "step" and t.group(2).startswith("f"):
            a = np.full(shape, 3, dtype)  # Adam's step count so far
        elif t.group(2).startswith("f"):
            a = rng.uniform(-1, 1, size=shape).astype(dtype)
            if name.endswith(".v"):  # Adam's second moment: non-negative
                a = np.abs(a)
        else:
            a = rng.integers(0, 8, size=shape).astype(dtype)
        a.tofile("%s/in_%d.bin" % (outdir, k))
        np.save("%s/in_%d.npy" % (outdir, k), a)
        options.append("--input=arg%d=%s/in_%d.npy" % (k, outdir, k))
    print(" ".join(options))


main()
