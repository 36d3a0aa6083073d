#!/usr/bin/env python3
"""Runs one function of a program with distir-run on NumPy inputs and
compares every output with a NumPy reference.

usage: npcheck.py CASE PROGRAM.mlir WORKDIR

Each case names the entry function, builds its inputs, and computes the
expected outputs. Prints "CASE: ok" or the first mismatch (and exits 1).
"""

import os
import subprocess
import sys

import numpy as np

rng = np.random.default_rng(42)


def f32(*shape):
    return rng.uniform(-1, 1, size=shape).astype(np.float32)


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def case_linalg():
    a, b, c = f32(4, 8), f32(8, 5), f32(4, 5)
    v = f32(5)
    x = f32(2, 3, 4)
    return "linalg", [a, b, c, v, x], [
        np.maximum(a @ b, 0) + c,               # matmul, relu via max, add
        (a @ b).T,                              # transpose
        (a @ b) + v[None, :],                   # broadcast
        x.sum(axis=1),                          # linalg.reduce
        softmax(x, 2),                          # linalg.softmax
        np.arange(12, dtype=np.float32).reshape(3, 4) * 2,  # generic+index
    ]


def case_tensor():
    x = f32(4, 6)
    y = f32(2, 6)
    padded = np.full((6, 8), 7.0, dtype=np.float32)
    padded[1:5, 2:8] = x
    inserted = x.copy()
    inserted[1:3, :] = y
    return "tensor_ops", [x, y], [
        x[1:3, 2:5],                           # extract_slice
        inserted,                              # insert_slice
        np.concatenate([x, y], axis=0),        # concat
        padded,                                # pad
        x.reshape(2, 2, 6),                    # expand_shape
        x.reshape(24),                         # collapse_shape
        np.array([x[3, 5], x[0, 0]], dtype=np.float32),  # extract+from_elements
    ]


def case_collectives():
    a, b, c, d = f32(4, 6), f32(4, 6), f32(4, 6), f32(4, 6)
    s = a + b + c + d
    ag = np.concatenate([a, b, c, d], axis=1)
    rs = np.split(s, 4, axis=0)
    # all_to_all: result j = concat over i of chunk j of operand i (split
    # along dim 1 into 2, concat along dim 0)
    ops2 = [a, b]
    a2a = [np.concatenate([np.split(o, 2, axis=1)[j] for o in ops2], axis=0)
           for j in range(2)]
    return "collectives", [a, b, c, d], [
        s, s, s, s,                            # all_reduce sum
        np.maximum(np.maximum(a, b), np.maximum(c, d)),  # all_reduce max
        (a + b + c + d) / 4,                   # all_reduce avg (device 0)
        ag, ag,                                # all_gather (2 of 4)
        rs[0], rs[3],                          # reduce_scatter
        a2a[0], a2a[1],                        # all_to_all
        a, a,                                  # broadcast
        np.split(a, 2, axis=0)[1],             # scatter chunk 1
        a * b,                                 # reduce prod on one device
        np.concatenate([a, b], axis=0),        # gather
        b,                                     # send
    ]


def case_scalar():
    x = f32(16) * 4
    i = np.array([-3, -1, 0, 1, 2, 5, 127, -128], dtype=np.int32)
    return "scalar_ops", [x, i], [
        np.exp(x) * np.tanh(x) - np.sqrt(np.abs(x)),
        np.where(x > 0, x, 0.01 * x).astype(np.float32),   # cmpf + select
        np.array([1 / (1 + np.exp(-v)) for v in x], dtype=np.float32),
        (i * 3 + 7).astype(np.int32),
        (i.astype(np.int8) * np.int8(3)).astype(np.int8),   # i8 wraps
        i.astype(np.float32) / 2,
        np.trunc(x).astype(np.int32),
    ]


CASES = {
    "linalg": case_linalg,
    "tensor": case_tensor,
    "collectives": case_collectives,
    "scalar": case_scalar,
}


def main():
    case, program, work = sys.argv[1], sys.argv[2], sys.argv[3]
    entry, inputs, expected = CASES[case]()
    os.makedirs(work, exist_ok=True)
    cmd = ["distir-run", program, "--entry", entry,
           "--output-dir", os.path.join(work, "out")]
    for k, value in enumerate(inputs):
        path = os.path.join(work, f"in{k}.npy")
        np.save(path, value)
        cmd += ["--input", f"{k}={path}"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    for k, want in enumerate(expected):
        got = np.load(os.path.join(work, "out", f"output_{k}.npy"))
        want = np.asarray(want)
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-5,
                                                      atol=1e-6):
            print(f"{case}: output {k} differs\nwant {want.dtype}{want.shape}"
                  f"\n{want}\ngot {got.dtype}{got.shape}\n{got}")
            return 1
    print(f"{case}: ok ({len(expected)} outputs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
