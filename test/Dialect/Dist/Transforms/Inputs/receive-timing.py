#!/usr/bin/env python3
"""Reads a Chrome trace of a two-stage, one-layer-per-stage pipeline and
prints whether stage 1 (device 1) started its first computation before
stage 0 (device 0) finished the matmul of its second microbatch, i.e.
whether the receiving stage computed microbatch 0 while the sending stage
computed microbatch 1 instead of waiting for microbatch 1's send."""
import json
import sys

trace = json.load(open(sys.argv[1]))
events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
first_on_1 = min(e["ts"] for e in events
                 if e["pid"] == 1 and e["cat"] == "compute")
matmuls_on_0 = sorted(e["ts"] + e["dur"] for e in events
                      if e["pid"] == 0 and e["name"] == "linalg.matmul")
sends = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
               if e["name"] == "dist.send" and e["pid"] == 0)
print("stage 1 starts before stage 0 finishes microbatch 1:",
      first_on_1 < matmuls_on_0[1])
print("stage 1 starts when the first send ends:",
      abs(first_on_1 - sends[0][1]) < 1e-9 * max(1.0, sends[0][1]))
