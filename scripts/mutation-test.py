#!/usr/bin/env python3
"""Mutation testing: how many planted one-line bugs does the suite catch?

For each mutant of scripts/mutation/mutants.json (a file, an exact text that
occurs once in it, its replacement, and the lit tests that should notice),
this script applies the mutant to a separate git worktree, rebuilds it,
runs the mutant's tests, and restores the file. A mutant is *killed* when a
test fails, *survives* when all pass, and is *not viable* when it does not
compile. The tests are first run on the unmutated build: all must pass, or
the job stops (a failing baseline would count every mutant as killed).

usage: scripts/mutation-test.py [--worktree DIR] [--only M01,M02]
                                [--report FILE.md]
Run on demand (about a minute per mutant on two cores after a first full
build of the worktree); not part of CI. See scripts/mutation/README.md.
"""

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIT = "/usr/lib/llvm-22/bin/lit"


def run(cmd, cwd=None, timeout=None):
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True,
                           timeout=timeout)
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        return 124, (e.stdout or "") if isinstance(e.stdout, str) else ""


def build(tree):
    return run(["ninja", "-C", os.path.join(tree, "build"), "-j",
                os.environ.get("DISTIR_JOBS", "2"), "all"], timeout=1800)


def lit(tree, tests):
    # The suite's lit tests and, under test/Unit, the GoogleTest binaries.
    return run([LIT, "-q", "--filter", tests,
                os.path.join(tree, "build", "test"),
                os.path.join(tree, "build", "test", "Unit")], timeout=900)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--worktree", default="/tmp/distir-mutation")
    parser.add_argument("--mutants",
                        default=os.path.join(ROOT, "scripts", "mutation",
                                             "mutants.json"))
    parser.add_argument("--only", default="")
    parser.add_argument("--report", default="")
    args = parser.parse_args()
    mutants = json.load(open(args.mutants))
    if args.only:
        keep = set(args.only.split(","))
        mutants = [m for m in mutants if m["id"] in keep]
    tree = args.worktree

    # Mutants must name text that occurs exactly once.
    for m in mutants:
        text = open(os.path.join(ROOT, m["file"])).read()
        if text.count(m["find"]) != 1:
            sys.exit("error: %s: %r occurs %d times in %s" %
                     (m["id"], m["find"], text.count(m["find"]), m["file"]))

    if not os.path.isdir(tree):
        code, out = run(["git", "worktree", "add", "--detach", tree, "HEAD"],
                        cwd=ROOT)
        if code:
            sys.exit("error: git worktree add failed:\n" + out)
    code, out = run(["git", "status", "--porcelain", "--untracked-files=no"],
                    cwd=tree)
    if out.strip():
        sys.exit("error: the worktree %s has changes (a mutant left from an "
                 "interrupted run?): git -C %s checkout -- . first" %
                 (tree, tree))
    if not os.path.isdir(os.path.join(tree, "build")):
        code, out = run([os.path.join(tree, "scripts", "build.sh")],
                        timeout=3600)
        if code:
            sys.exit("error: building the worktree failed:\n" + out[-3000:])
    code, out = build(tree)
    if code:
        sys.exit("error: building the worktree failed:\n" + out[-3000:])
    union = "|".join("(%s)" % m["tests"] for m in mutants)
    code, out = lit(tree, union)
    if code:
        sys.exit("error: the selected tests fail without mutants:\n" +
                 out[-3000:])
    print("baseline: the selected tests pass", flush=True)

    results = []
    for m in mutants:
        path = os.path.join(tree, m["file"])
        original = open(path).read()
        if original.count(m["find"]) != 1:
            sys.exit("error: %s: the worktree's %s differs from this "
                     "checkout's (update the worktree to HEAD)" %
                     (m["id"], m["file"]))
        start = time.time()
        try:
            open(path, "w").write(original.replace(m["find"], m["replace"]))
            code, out = build(tree)
            if code:
                status = "not viable"
            else:
                code, out = lit(tree, m["tests"])
                status = "killed" if code else "SURVIVED"
                failed = [l.split(" :: ", 1)[1].split(" (")[0]
                          for l in out.splitlines()
                          if l.startswith(("FAIL: ", "UNRESOLVED: ")) and
                          " :: " in l]
                if failed:
                    status += " by " + ", ".join(failed[:2]) + \
                        (" (+%d)" % (len(failed) - 2) if len(failed) > 2 else "")
        finally:
            open(path, "w").write(original)
        if "equivalent" in m:
            status += " (equivalent)"
        results.append((m, status, time.time() - start))
        print("%s %5.0f s  %s  %s: %s" % (m["id"], time.time() - start, status,
                                         m["file"], m["bug"]), flush=True)
    build(tree)  # leave the worktree's build unmutated

    # Equivalent mutants (no behaviour change, reason in the list) run too,
    # but the kill rate counts the others.
    viable = [r for r in results if r[1] != "not viable"]
    scored = [r for r in viable if "equivalent" not in r[0]]
    killed = [r for r in scored if r[1].startswith("killed")]
    rate = 100.0 * len(killed) / len(scored) if scored else 0.0
    summary = ("%d mutants, %d viable, %d known equivalent; of the other %d, "
               "%d killed, %d survived: kill rate %.1f%%" % (
                   len(results), len(viable), len(viable) - len(scored),
                   len(scored), len(killed), len(scored) - len(killed), rate))
    print(summary)
    if args.report:
        with open(args.report, "w") as f:
            f.write("| id | area | file | bug | tests | result |\n")
            f.write("|---|---|---|---|---|---|\n")
            for m, status, _ in results:
                f.write("| %s | %s | `%s` | %s | `%s` | %s |\n" % (
                    m["id"], m["area"], m["file"], m["bug"], m["tests"],
                    status))
            f.write("\n%s\n" % summary)
    return 0


sys.exit(main())
