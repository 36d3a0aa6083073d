#!/usr/bin/env python3
"""Feeds mutated inputs to a tool and fails if the tool ever crashes.

Each mutant is a seed file with a few random edits (delete, duplicate or
swap a token, replace a number, truncate). The tool must exit with 0 (the
mutant happened to be valid) or 1 (a diagnostic): a signal, an abort or
a hang is a bug. Deterministic for a given --seed.

usage: mutation-check.py --tool CMD --seed N --count M FILE...
"""

import argparse
import random
import re
import shlex
import subprocess
import sys

TOKEN = re.compile(r"\s+|[%#!@\w.]+|.", re.S)
NUMBERS = ["0", "-1", "1", "2", "3", "7", "-9223372036854775808",
           "9223372036854775807", "1e400", "nan", "0x7fc00000", "4294967296"]


def mutate(text, rng):
    tokens = TOKEN.findall(text)
    for _ in range(rng.randint(1, 3)):
        if not tokens:
            break
        i = rng.randrange(len(tokens))
        kind = rng.randrange(5)
        if kind == 0:
            del tokens[i]
        elif kind == 1:
            tokens.insert(i, tokens[rng.randrange(len(tokens))])
        elif kind == 2:
            j = rng.randrange(len(tokens))
            tokens[i], tokens[j] = tokens[j], tokens[i]
        elif kind == 3:
            nums = [k for k, t in enumerate(tokens) if t.lstrip("-").isdigit()]
            if nums:
                tokens[rng.choice(nums)] = rng.choice(NUMBERS)
        else:
            tokens = tokens[: rng.randrange(len(tokens) + 1)]
    return "".join(tokens)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--timeout", type=float, default=20)
    parser.add_argument("--save", help="directory to write crashing mutants to")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    seeds = [open(f, encoding="utf-8").read() for f in args.files]
    outcomes = {0: 0, 1: 0}
    bad = 0
    for n in range(args.count):
        k = rng.randrange(len(seeds))
        text = mutate(seeds[k], rng)
        try:
            proc = subprocess.run(shlex.split(args.tool) + ["-"], input=text,
                                  capture_output=True, text=True,
                                  errors="replace", timeout=args.timeout)
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        if rc in outcomes:
            outcomes[rc] += 1
            continue
        bad += 1
        print(f"mutant {n} of {args.files[k]}: exit {rc}")
        if args.save:
            with open(f"{args.save}/mutant-{n}.mlir", "w") as out:
                out.write(text)
        print("---- input ----\n" + text + "\n---- stderr (tail) ----")
        print("\n".join(proc.stderr.splitlines()[-15:]) if rc != "timeout"
              else "(timed out)")
    print(f"{args.count} mutants: {outcomes[0]} accepted, {outcomes[1]} "
          f"rejected with a diagnostic, {bad} crashed or hung")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
