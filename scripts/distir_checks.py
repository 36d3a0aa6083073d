"""Helpers shared by the equivalence checkers (check-dtp-equivalence.py,
check-zero.py): run a tool, load a run's outputs."""

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
