"""Run dist-dtp configurations of a model under mpirun and check every rank.

usage: dtp-exec.py WORKDIR MODEL ENTRY [options] RANKS:DTP-OPTIONS...

For each configuration (e.g. "8:dp=2 tp=2 pp=2 microbatches=2"):
  distir-opt MODEL --dist-dtp=OPTIONS          -> the distributed program
    (--pipeline "--dist-pase={} --dist-lower-reshard" runs other passes: {}
    is replaced by OPTIONS)
  distir-run PROGRAM --entry ENTRY             -> reference outputs
  mpirun -np RANKS distir-exec PROGRAM --entry ENTRY
and checks that every reference output was written, by exactly one rank (the
device of its type), with the reference's shape and values (fp32 tolerance).
With --sequential NAME the distributed program's public wrapper NAME (which
takes the model's own arguments) also runs under mpirun and must reproduce
the outputs of the original, sequential MODEL.
Prints one line per configuration; exits 1 at the first failure.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np

RTOL = 1e-5
ATOL = 1e-5


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        fail("%s exited with %d:\n%s" % (" ".join(cmd), proc.returncode,
                                         (proc.stdout + proc.stderr)[-3000:]))
    return proc.stdout


def mpi_exec(args, ranks, program, entry, out_dir):
    """Runs distir-exec under mpirun; returns {output index: rank}."""
    run(["mpirun", "--allow-run-as-root", "--oversubscribe", "-np",
         str(ranks), "distir-exec", program, "--entry", entry,
         "--output-dir", out_dir, "--timeout", str(args.timeout)] +
        args.opt + args.inputs)
    # Each rank lists what it wrote in a file of its own (mpirun may forward
    # the ranks' stdout in chunks that split lines).
    listing = ""
    for rank in range(ranks):
        path = os.path.join(out_dir, "outputs_rank%d.txt" % rank)
        if not os.path.exists(path):
            fail("rank %d wrote no %s" % (rank, path))
        with open(path) as f:
            listing += "".join("rank %d: %s" % (rank, line) for line in f)
    owners = {}
    for m in re.finditer(r"^rank (\d+): output #(\d+): (\S+)", listing, re.M):
        rank, index, type_ = int(m.group(1)), int(m.group(2)), m.group(3)
        if index in owners:
            fail("output #%d written by ranks %d and %d" %
                 (index, owners[index], rank))
        device = re.search(r"#dist\.device<(\d+)>", type_)
        if device and int(device.group(1)) != rank:
            fail("output #%d of type %s written by rank %d" %
                 (index, type_, rank))
        owners[index] = rank
    return owners


def compare(ref_dir, run_dir, owners):
    names = sorted((n for n in os.listdir(ref_dir) if n.startswith("output_")),
                   key=lambda n: int(n[7:-4]))
    if not names:
        fail("no reference outputs in " + ref_dir)
    for name in names:
        index = int(name[7:-4])
        if index not in owners:
            fail("no rank reported output #%d" % index)
        path = os.path.join(run_dir, name)
        if not os.path.exists(path):
            fail("rank %d did not write %s" % (owners[index], path))
        ref, got = np.load(os.path.join(ref_dir, name)), np.load(path)
        if ref.shape != got.shape:
            fail("%s: shape %s, expected %s" % (path, got.shape, ref.shape))
        if not np.allclose(ref, got, rtol=RTOL, atol=compare.atol):
            fail("%s differs: max abs error %g" %
                 (path, np.abs(ref.astype(np.float64) - got).max()))
    if len(owners) != len(names):
        fail("ranks wrote %d outputs, the reference has %d" %
             (len(owners), len(names)))
    return len(names)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("work")
    parser.add_argument("model")
    parser.add_argument("entry")
    parser.add_argument("configs", nargs="+", help="RANKS:DTP-OPTIONS")
    parser.add_argument("--sequential", metavar="NAME",
                        help="also run the wrapper NAME against MODEL")
    parser.add_argument("--input", action="append", default=[],
                        help="NAME=file.npy, passed to both executors")
    parser.add_argument("--weights-from", metavar="MODEL",
                        help="ONNX model whose initializers both executors "
                        "bind by name")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--timeout", type=int, default=120)
    parser.add_argument("--pipeline", default="--dist-dtp={}",
                        help="distir-opt arguments; {} is a configuration's "
                        "options")
    parser.add_argument("--opt-level", type=int,
                        help="distir-exec's -O (default: its own)")
    parser.add_argument("--exec-arg", action="append", default=[],
                        help="extra distir-exec argument (repeatable)")
    parser.add_argument("--atol", type=float, default=ATOL,
                        help="absolute tolerance (sums over other orders "
                        "differ by more on long reductions)")
    args = parser.parse_args()
    compare.atol = args.atol
    args.opt = [] if args.opt_level is None else ["-O%d" % args.opt_level]
    args.opt += args.exec_arg
    args.inputs = ["--random-inputs", str(args.seed)]
    for spec in args.input:
        args.inputs += ["--input", spec]
    if args.weights_from:
        args.inputs += ["--weights-from", args.weights_from]

    if args.sequential:
        seq_dir = os.path.join(args.work, "sequential")
        run(["distir-run", args.model, "--output-dir", seq_dir] + args.inputs)
    for i, config in enumerate(args.configs):
        ranks, options = config.split(":", 1)
        ranks = int(ranks)
        work = os.path.join(args.work, "config%d" % i)
        os.makedirs(work, exist_ok=True)
        program = os.path.join(work, "program.mlir")
        passes = [a.replace("{}", options) for a in args.pipeline.split()]
        run(["distir-opt", args.model] + passes + ["-o", program])
        ref_dir, mpi_dir = (os.path.join(work, d) for d in ("ref", "mpi"))
        run(["distir-run", program, "--entry", args.entry, "--output-dir",
             ref_dir] + args.inputs)
        owners = mpi_exec(args, ranks, program, args.entry, mpi_dir)
        n = compare(ref_dir, mpi_dir, owners)
        line = "%s on %d ranks: %d outputs equal, from ranks %s" % (
            options, ranks, n, ",".join(map(str, sorted(set(owners.values())))))
        if args.sequential:
            wrapped = os.path.join(work, "wrapper")
            owners = mpi_exec(args, ranks, program, args.sequential, wrapped)
            line += "; @%s equals the sequential model (%d outputs)" % (
                args.sequential, compare(seq_dir, wrapped, owners))
        print(line, flush=True)


if __name__ == "__main__":
    main()
