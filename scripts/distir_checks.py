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


def same_outputs(got, reference):
    """Whether two runs' outputs are equal up to fp32 summation order: the
    absolute tolerance scales with the output's magnitude (all-reduces sum in
    another order)."""
    return len(got) == len(reference) and all(
        g.shape == r.shape and
        np.allclose(g, r, rtol=1e-4, atol=1e-5 * max(
            1.0, float(np.abs(r).max(initial=0))))
        for g, r in zip(got, reference))
