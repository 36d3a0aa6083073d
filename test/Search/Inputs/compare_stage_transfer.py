"""Compares two distir-search CSVs of the same grid, one with copies between
stages (--stage-transfer send) and one with planned transfers: for every
configuration with tensor and pipeline parallelism that both simulated, counts
where the planned step is faster, slower or equal (0.1%), and checks that
configurations without both degrees are unchanged."""

import csv
import sys


def rows(path):
    return {(r["dp"], r["tp"], r["pp"], r["microbatches"], r["schedule"],
             r["mapping"]): r for r in csv.DictReader(open(path))}


send, planned = rows(sys.argv[1]), rows(sys.argv[2])
faster = slower = equal = changed = 0
for key, a in send.items():
    b = planned[key]
    if a["status"] != "ok" or b["status"] != "ok":
        continue
    la, lb = float(a["latency_s"]), float(b["latency_s"])
    if int(key[1]) > 1 and int(key[2]) > 1:
        if lb < la * 0.999:
            faster += 1
        elif lb > la * 1.001:
            slower += 1
        else:
            equal += 1
    elif la != lb:
        changed += 1
print(f"tp and pp > 1: {faster} faster, {slower} slower, {equal} equal; "
      f"{changed} other configurations changed")
