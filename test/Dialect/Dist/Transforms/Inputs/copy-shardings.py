"""Copies the dist.sharding of each argument of @FUNC in PLANNED (a program
written by dist-dtp{annotate-shardings=true}) onto the same argument of @FUNC
in PROGRAM, and writes the result to OUT:

    copy-shardings.py PLANNED PROGRAM OUT [--func main]
"""
import argparse
import re


def signature(text, func):
    """(start, end) of @func's argument list in `text`."""
    start = text.index(f"func.func @{func}(") + len(f"func.func @{func}(")
    depth, i = 1, start
    while depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    return start, i - 1


def attribute(text, at):
    """The #dist.sharding<...> starting at `at` (balanced angle brackets)."""
    depth, i = 0, text.index("<", at)
    while True:
        depth += {"<": 1, ">": -1}.get(text[i], 0)
        i += 1
        if depth == 0:
            return text[at:i]


def shardings(text, func):
    """Argument number -> its sharding attribute text."""
    start, end = signature(text, func)
    args = text[start:end]
    found = {}
    marks = [(m.start(), int(m.group(1)))
             for m in re.finditer(r"%arg(\d+):", args)]
    for k, (pos, number) in enumerate(marks):
        stop = marks[k + 1][0] if k + 1 < len(marks) else len(args)
        at = args.find("dist.sharding = ", pos, stop)
        if at >= 0:
            found[number] = attribute(args, at + len("dist.sharding = "))
    return found


def main():
    p = argparse.ArgumentParser()
    p.add_argument("planned")
    p.add_argument("program")
    p.add_argument("out")
    p.add_argument("--func", default="main")
    a = p.parse_args()
    wanted = shardings(open(a.planned).read(), a.func)
    text = open(a.program).read()
    start, end = signature(text, a.func)
    args = text[start:end]
    # Each argument's attribute dictionary ends before ", %argN+1:" or the end.
    pieces = re.split(r"(?=%arg\d+:)", args)
    out = []
    for piece in pieces:
        m = re.match(r"%arg(\d+):", piece)
        if m and int(m.group(1)) in wanted:
            attr = wanted[int(m.group(1))]
            body = piece.rstrip(", ")
            tail = piece[len(body):]
            if body.endswith("}"):
                body = body[:-1] + ", dist.sharding = " + attr + "}"
            else:
                body += " {dist.sharding = " + attr + "}"
            piece = body + tail
        out.append(piece)
    with open(a.out, "w") as f:
        f.write(text[:start] + "".join(out) + text[end:])


if __name__ == "__main__":
    main()
