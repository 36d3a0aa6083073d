#!/usr/bin/env python3
"""Checks every ```mlir example in Markdown files with distir-opt.

Each fenced block tagged `mlir` must parse, verify and round-trip
(`distir-opt --verify-roundtrip`). A block whose first line is a comment
`// distir-opt ARGS` is run with ARGS instead. A block containing
`expected-error` is run with `--verify-diagnostics`, so examples of rejected
programs show, and check, the exact diagnostic.

usage: check-doc-examples.py --opt PATH (FILE|DIR)...
"""

import argparse
import pathlib
import re
import shlex
import subprocess
import sys

FENCE = re.compile(r"^(\s*)```(\S*)\s*$")


def examples(path):
    """Yields (line number, text) of each ```mlir block of a Markdown file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2)
        start = i + 1
        i += 1
        body = []
        while i < len(lines) and not FENCE.match(lines[i]):
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent) else line)
            i += 1
        i += 1  # closing fence
        if lang == "mlir":
            yield start, "\n".join(body) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--opt", required=True, help="distir-opt binary")
    parser.add_argument("paths", nargs="+", type=pathlib.Path)
    args = parser.parse_args()

    files = []
    for p in args.paths:
        if p.is_dir():
            files.extend(sorted(p.rglob("*.md")))
        elif p.exists():
            files.append(p)
        else:
            print(f"error: no such file or directory: {p}", file=sys.stderr)
            return 2

    checked = failed = 0
    for f in files:
        for line, text in examples(f):
            first = text.splitlines()[0] if text.strip() else ""
            m = re.match(r"^//\s*distir-opt\s*(.*)$", first)
            cmd = [args.opt] + (shlex.split(m.group(1)) if m else
                                ["--verify-roundtrip"])
            if "expected-error" in text:
                cmd.append("--verify-diagnostics")
            cmd.append("-")
            proc = subprocess.run(cmd, input=text, capture_output=True,
                                  text=True)
            checked += 1
            if proc.returncode != 0:
                failed += 1
                print(f"{f}:{line}: example failed: {' '.join(cmd)}")
                print(proc.stderr.rstrip())
    print(f"checked {checked} examples in {len(files)} files, {failed} failed")
    if checked == 0:
        print("error: no ```mlir examples found", file=sys.stderr)
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
