"""Checks distir-search's per-stage meshes (--stage-meshes) against the
tools: for the first LIMIT configurations with per-stage degrees in a
--json report, dist-dtp with the row's pass_options on PROGRAM and
distir-sim of the step on CLUSTER give the row's latency (to 1e-9,
relative) and peak memory (the largest device's, to the byte).

Usage: check_stage_meshes.py REPORT.json PROGRAM.mlir ENTRY CLUSTER LIMIT
"""
import json
import subprocess
import sys


def main():
    report_path, program, entry, cluster, limit = sys.argv[1:6]
    with open(report_path) as f:
        report = json.load(f)
    rows = [c for c in report["configurations"] if c["stage_tp"]]
    checked = 0
    for c in rows[:int(limit)]:
        if c["status"] not in ("ok", "oom"):
            continue
        dtp = subprocess.run(
            ["distir-opt", program, "--dist-dtp=" + c["pass_options"]],
            capture_output=True, text=True, check=True).stdout
        sim = json.loads(subprocess.run(
            ["distir-sim", "-", "--entry", entry + "_dtp", "--cluster",
             cluster, "--format", "json"],
            input=dtp, capture_output=True, text=True, check=True).stdout)
        peak = max(d["peak_bytes"] for d in sim["devices"])
        latency = sim["latency"]
        if abs(latency - c["latency_s"]) > 1e-9 * latency or \
                peak != c["peak_bytes"]:
            print(f"FAIL: {c['pass_options']}: search {c['latency_s']} s "
                  f"{c['peak_bytes']} B, distir-sim {latency} s {peak} B")
            return 1
        checked += 1
    print(f"{checked} of {len(rows)} per-stage configurations equal to "
          "distir-sim")
    return 0 if checked else 1


if __name__ == "__main__":
    sys.exit(main())
