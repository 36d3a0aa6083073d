"""Compares the latency of two distir-sim JSON reports: prints the ratio of
the first to the second and whether the first is faster; exits 1 if not."""

import json
import sys

first = json.load(open(sys.argv[1]))["latency"]
second = json.load(open(sys.argv[2]))["latency"]
ratio = first / second
print(f"latency ratio {ratio:.2f}: " + ("faster" if ratio < 1 else "NOT faster"))
sys.exit(0 if ratio < 1 else 1)
