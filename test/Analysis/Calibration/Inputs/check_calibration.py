"""Checks a calibration JSON written by distir-calibrate.

usage: check_calibration.py FILE [PATH=VALUE[~RELTOL]]... [--nonneg] [--r2-above X]
PATH is e.g. compute.matmul.constant or collectives.all_reduce.8.per_byte
(a group size selects the entry of that size).
"""
import json
import sys


def lookup(doc, path):
    node = doc
    for part in path.split("."):
        if isinstance(node, list):
            matches = [e for e in node if e["group_size"] == int(part)]
            if not matches:
                raise KeyError(path)
            node = matches[0]
        else:
            node = node[part]
    return node


def entries(doc):
    for name, entry in doc.get("compute", {}).items():
        yield "compute." + name, entry
    for kind, sizes in doc.get("collectives", {}).items():
        for entry in sizes:
            yield "collectives.%s.%d" % (kind, entry["group_size"]), entry


def main():
    args = sys.argv[1:]
    with open(args.pop(0)) as f:
        doc = json.load(f)
    assert doc["format"] == "distir-calibration", doc
    failures = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--nonneg":
            for name, entry in entries(doc):
                for key in ("constant", "per_byte", "per_flop"):
                    if entry.get(key, 0) < 0:
                        failures.append("%s.%s < 0" % (name, key))
            continue
        if arg == "--r2-above":
            bound = float(args[i])
            i += 1
            for name, entry in entries(doc):
                r2 = entry["fit"]["r2"]
                if not r2 > bound:
                    failures.append("%s R^2 = %g <= %g" % (name, r2, bound))
            continue
        path, expected = arg.split("=")
        tol = 1e-9
        if "~" in expected:
            expected, tol = expected.split("~")
            tol = float(tol)
        expected = float(expected)
        actual = lookup(doc, path)
        if abs(actual - expected) > tol * max(abs(expected), 1e-300):
            failures.append("%s = %r, expected %r (rel tol %g)" %
                            (path, actual, expected, tol))
    for failure in failures:
        print("FAIL: " + failure)
    if failures:
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
