#!/usr/bin/python3
"""Imports every ONNX model of Debian's libonnx-testdata and byte-flip
mutants of them; each must import or fail cleanly (issue: hardening).

Clean: exit 0, or exit 1 with one `error:` line on stderr, within the time
limit. A signal, another exit code, LLVM's crash banner, several lines or a
timeout is a finding, listed with the command that reproduces it.

usage: onnx-mutant-sweep.py --bin DIR [--mutants N] [--sample N] [--seed S]
                            [--jobs J] [--timeout T] [--keep DIR]

--mutants N: N mutants in all (default 3000), each a random model with 1 to
8 random bytes replaced or flipped; --sample N: only N of the models
themselves (default all 1072); deterministic for a given --seed. --keep
DIR writes each finding's input there. Prints one summary line:
'M models, N mutants: A imported, R rejected cleanly, F findings'.
"""
import argparse
import concurrent.futures
import glob
import os
import random
import subprocess
import sys
import tempfile

ROOT = "/usr/share/libonnx-testdata/data"


def run_one(tool, data, timeout, tmpdir, index):
    path = os.path.join(tmpdir, f"m{index}.onnx")
    with open(path, "wb") as f:
        f.write(data)
    try:
        p = subprocess.run([tool, "--import-onnx", path, "-o", os.devnull],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", ""
    finally:
        os.unlink(path)
    err = p.stderr.decode("utf-8", "replace")
    lines = [line for line in err.splitlines() if line.strip()]
    if p.returncode == 0:
        return "imported", ""
    if p.returncode == 1 and len(lines) == 1 and "error:" in lines[0] \
            and "PLEASE submit" not in err:
        return "rejected", ""
    return "finding", f"exit {p.returncode}: {err.strip()[:300]}"


def mutate(data, rng):
    b = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        i = rng.randrange(len(b))
        if rng.random() < 0.5:
            b[i] ^= 1 << rng.randrange(8)
        else:
            b[i] = rng.choice([0, 1, 0x7f, 0x80, 0xff, rng.randrange(256)])
    return bytes(b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--mutants", type=int, default=3000)
    ap.add_argument("--sample", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=20)
    ap.add_argument("--keep")
    a = ap.parse_args()
    tool = os.path.join(a.bin, "distir-translate")
    models = sorted(glob.glob(f"{ROOT}/**/*.onnx", recursive=True))
    if not models:
        print(f"no models under {ROOT} (Debian package libonnx-testdata)")
        return 1
    rng = random.Random(a.seed)
    originals = models if not a.sample else rng.sample(models,
                                                       min(a.sample,
                                                           len(models)))
    inputs = []
    for m in originals:
        with open(m, "rb") as f:
            inputs.append((m, f.read()))
    for k in range(a.mutants):
        m = rng.choice(models)
        with open(m, "rb") as f:
            data = f.read()
        inputs.append((f"{m} mutant {k}", mutate(data, rng)))
    counts = {"imported": 0, "rejected": 0, "finding": 0, "timeout": 0}
    findings = []
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        futures = [pool.submit(run_one, tool, data, a.timeout, tmp, i)
                   for i, (_, data) in enumerate(inputs)]
        for (name, data), fut in zip(inputs, futures):
            kind, detail = fut.result()
            counts[kind] += 1
            if kind in ("finding", "timeout"):
                findings.append((name, kind, detail, data))
    for i, (name, kind, detail, data) in enumerate(findings):
        print(f"FINDING {name}: {kind} {detail}")
        if a.keep:
            os.makedirs(a.keep, exist_ok=True)
            with open(os.path.join(a.keep, f"finding-{i}.onnx"), "wb") as f:
                f.write(data)
    print(f"{len(originals)} models, {a.mutants} mutants: "
          f"{counts['imported']} imported, {counts['rejected']} rejected "
          f"cleanly, {counts['finding'] + counts['timeout']} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
