"""Helpers shared by the equivalence checkers (check-dtp-equivalence.py,
check-pase-equivalence.py, check-zero.py): run a tool, load a run's outputs,
compare two runs."""

import glob
import os
import subprocess

import numpy as np


def run(cmd):
    """Runs `cmd`; its stdout, or RuntimeError with the command and stderr."""
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(" ".join(cmd) + "\n" + proc.stderr)
    return proc.stdout


def outputs(directory):
    """The output_K.npy arrays distir-run wrote to `directory`, in order."""
    return [np.load(f) for f in sorted(glob.glob(os.path.join(directory, "*.npy")))]


# fp32 summation order; bf16 programs pass a coarser rtol (--rtol).
DEFAULT_RTOL = 1e-4


def _atol(reference, rtol):
    """The absolute tolerance: scales with the output's magnitude
    (all-reduces sum in another order)."""
    return rtol / 10 * max(1.0, float(np.abs(reference).max(initial=0)))


def same_outputs(got, reference, rtol=DEFAULT_RTOL):
    """Whether two runs' outputs are equal up to summation order."""
    return len(got) == len(reference) and all(
        g.shape == r.shape and
        np.allclose(g, r, rtol=rtol, atol=_atol(r, rtol))
        for g, r in zip(got, reference))


def describe_difference(got, reference, rtol=DEFAULT_RTOL):
    """Why `got` is not `reference`: a count or shape mismatch, else the
    output furthest off and by how many times the tolerance."""
    if len(got) != len(reference):
        return f"{len(got)} outputs, expected {len(reference)}"
    for k, (g, r) in enumerate(zip(got, reference)):
        if g.shape != r.shape:
            return f"output {k}: shape {g.shape}, expected {r.shape}"
    worst, where = 0.0, 0
    for k, (g, r) in enumerate(zip(got, reference)):
        g64, r64 = g.astype(np.float64), r.astype(np.float64)
        ratio = float((np.abs(g64 - r64) /
                       (_atol(r64, rtol) + rtol * np.abs(r64))).max(initial=0))
        if ratio > worst:
            worst, where = ratio, k
    return f"output {where} off by {worst:.3g}x the tolerance (rtol {rtol:g})"


def check_transformed(program, pass_option, entry, seed, prog, out_dir,
                      reference, label, run_args=(), rtol=DEFAULT_RTOL):
    """Transforms `program` with `pass_option` (verified, canonicalized),
    runs it with distir-run on the seed's inputs (and `run_args`, e.g.
    --weights-from) and compares with `reference`; prints why when it is
    not equal."""
    try:
        run(["distir-opt", program, pass_option, "--dist-verify-placement",
             "--canonicalize", "--cse", "--dist-verify-placement", "-o",
             prog])
        run(["distir-run", prog, "--entry", entry, "--random-inputs", seed,
             "--output-dir", out_dir, *run_args])
    except RuntimeError as e:
        print(f"{label}: FAILED\n{e}")
        return False
    got = outputs(out_dir)
    ok = same_outputs(got, reference, rtol)
    if not ok:
        print(f"{label}: DIFFERENT ({describe_difference(got, reference, rtol)})")
    return ok
