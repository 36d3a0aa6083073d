#!/usr/bin/env python3
"""Checks a `distir-search --distir-programs --json` report against the
independent reference of DistIR's simulator
(test/Analysis/Simulator/Inputs/distir_reference.py, with our two documented
differences applied): every configuration's latency to 1e-9 and its peak
memory (the largest device's) to the byte.

Usage: check_distir_search.py REPORT.json LAYERS DIM [DTYPE]
"""
import importlib.util
import json
import os
import sys
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "distir_reference",
    os.path.join(HERE, "..", "..", "Analysis", "Simulator", "Inputs",
                 "distir_reference.py"))
ref = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ref)

with open(sys.argv[1]) as f:
    report = json.load(f)
layers, dim = int(sys.argv[2]), int(sys.argv[3])
dtype = sys.argv[4] if len(sys.argv) > 4 else "f32"
checked = mismatches = unrunnable = 0
for c in report["configurations"]:
    if not c["pass_options"].startswith("distir-dhp="):
        print("not DistIR's program:", c["pass_options"])
        mismatches += 1
    if c["status"] != "ok":
        print("not ok:", c["pass_options"], c.get("reason", ""))
        mismatches += 1
        continue
    a = SimpleNamespace(dp=c["dp"], hp=c["tp"], pp=c["pp"], k=c["microbatches"],
                        layers=layers, batch=c["batch"], dim=dim, dtype=dtype,
                        bandwidth_gbps=25.0, throughput=1.4e13,
                        dram_bandwidth=9.0e11, skip_allgathers=False,
                        fix={"loss", "sgd"}, trace=False)
    if ref.check(a) is not None:
        unrunnable += 1  # DistIR cannot run it (e.g. pp == 1 with k > 1)
        continue
    out = ref.run(a)
    checked += 1
    peak = max(out["peak"].values())
    if (abs(c["latency_s"] - out["latency"]) > 1e-9 * out["latency"] or
            c["peak_bytes"] != peak):
        mismatches += 1
        print("MISMATCH", c["pass_options"], c["latency_s"], c["peak_bytes"],
              "reference", out["latency"], peak)
print(f"{checked} configurations checked, {mismatches} mismatches, "
      f"{unrunnable} that DistIR cannot run")
sys.exit(1 if mismatches else 0)
