"""Counts the communication ops of an emitted dist-pase program (function
`main_pase`) that read the result of a linalg.fill: a zero fill can take any
layout for free, so moving one means its layout did not follow its reader.
usage: check_fill_moves.py PROGRAM.mlir"""
import re
import sys

COMMUNICATION = ("dist.reshard", "dist.all_gather", "dist.all_to_all",
                 "dist.send", "dist.broadcast", "dist.gather", "dist.scatter")


def main():
    text = open(sys.argv[1]).read()
    start = text.find("func.func @main_pase(")
    if start < 0:
        sys.exit("no main_pase in " + sys.argv[1])
    fills, moved, moves = set(), 0, 0
    for line in text[start:].splitlines():
        m = re.match(r"\s*(%[\w.]+)(?::\d+)? = (\S+)", line)
        if not m:
            continue
        result, op = m.groups()
        if op == "linalg.fill":
            fills.add(result)
        elif op in COMMUNICATION:
            moves += 1
            operands = re.findall(r"%[\w.]+", line[m.end():])
            if operands and operands[0] in fills:
                moved += 1
        elif line.rstrip() == "  }":  # the function's end
            break
    print(f"{moved} of {moves} communication ops move a zero fill")


if __name__ == "__main__":
    main()
