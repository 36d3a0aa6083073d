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


def check_transformed(program, pass_option, entry, seed, prog, out_dir,
                      reference, label, run_args=()):
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
    ok = same_outputs(outputs(out_dir), reference)
    if not ok:
        print(f"{label}: DIFFERENT")
    return ok
