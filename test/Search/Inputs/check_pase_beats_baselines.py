"""Reads distir-search --strategy per-op --json output and checks the PaSE
acceptance point: the found strategy's *simulated* step (the emitted program
under the simulator) is below both hand-written baselines' simulated steps,
and the cost graph predicts it within 10%. Prints one line; exits 1 if not.

usage: check_pase_beats_baselines.py RESULT.json
"""
import json
import sys

with open(sys.argv[1]) as f:
    result = json.load(f)
pase = result["simulated_step_s"]
predicted = result["predicted_step_s"]
baselines = {b["name"]: b["simulated_step_s"] for b in result["baselines"]}
error = abs(predicted - pase) / pase
ok = all(pase < t for t in baselines.values()) and error < 0.10
print("%s: PaSE simulated below %s; predicted within %.0f%%" % (
    "OK" if ok else "FAIL",
    " and ".join(sorted(baselines)) if ok else
    ", ".join("%s %.3g s vs PaSE %.3g s" % (n, t, pase)
              for n, t in sorted(baselines.items())),
    100 * error))
sys.exit(0 if ok else 1)
